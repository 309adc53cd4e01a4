/*
 * aws_ec2_internal.h - shared by the EC2 reader's two files: aws_ec2.c (the volume record, the
 * live Query API and its XML) and aws_ec2_export.c (the AWS CLI's JSON exports). Not a public
 * header: nothing outside aws_ec2*.c includes it.
 */
#ifndef EBSMIGRATE_AWS_EC2_INTERNAL_H
#define EBSMIGRATE_AWS_EC2_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/volume.h"

/* One volume as read from either source (JSON export or Query API XML), before validation.
 * Strings are borrowed from the parser for the duration of aws_ec2_add_volume. */
struct ec2_vol_rec {
	const char *id, *az, *type, *state, *kms_key_id;
	int64_t size, iops, throughput;
	int has_size;
	time_t create_time;
	int encrypted, multi_attach;
	struct attachment *atts; /* borrowed strings */
	size_t n_atts;
	struct kv *tags;         /* borrowed strings */
	size_t n_tags;
};

/* Validates rec and adds it to f (or merges it with an identical record). path names the
 * record for messages ("Volumes[3]" or "DescribeVolumes page 2 item 7"). */
int aws_ec2_add_volume(struct fleet *f, const struct ec2_vol_rec *rec, const char *origin, const char *path,
		       const char *account, struct buf *err);

/* Appends a modification of volume_id to l, which takes volume_id and m's strings. */
void aws_ec2_mod_list_push(struct ec2_mod_list *l, char *volume_id, const struct volume_mod *m, const char *origin);

#endif
