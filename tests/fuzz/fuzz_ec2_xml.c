/* fuzz_ec2_xml.c - EC2 Query API answers as the live reads parse them (aws_ec2_parse_page). The
 * first byte picks the action (DescribeVolumes, DescribeVolumesModifications, ModifyVolume,
 * DescribeInstances, DescribeInstanceTypes); the rest is the answer body. Volumes are read first
 * when the kind needs them (instances join onto attachments). */
#include <stdlib.h>

#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/buf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	enum ec2_page_kind kind = (enum ec2_page_kind)(data[0] % 5);
	const char *body = (const char *)data + 1;
	size--;
	struct fleet f;
	fleet_init(&f);
	struct ec2_mod_list mods;
	memset(&mods, 0, sizeof mods);
	struct buf err = BUF_INIT;
	char *next = NULL;
	if (kind == EC2_PAGE_INSTANCES) /* give the instance answer attachments to land on */
		aws_ec2_parse_page(EC2_PAGE_VOLUMES, body, size, "fuzz", &f, &mods, NULL, &err);
	aws_ec2_parse_page(kind, body, size, "fuzz", &f, &mods, &next, &err);
	if (kind == EC2_PAGE_MODIFICATIONS)
		aws_ec2_attach_mods(&f, &mods);
	free(next);
	buf_release(&err);
	ec2_mod_list_release(&mods);
	fleet_release(&f);
	return 0;
}
