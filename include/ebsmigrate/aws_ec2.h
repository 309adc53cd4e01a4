/*
 * aws_ec2.h - EBS volumes and their modifications from EC2: the AWS CLI's JSON exports
 * (`aws ec2 describe-volumes --output json`, `aws ec2 describe-volumes-modifications`), and,
 * later, the live Query API. Both paths produce struct volume records in a fleet.
 *
 * Ownership: records are added to the caller's fleet (which owns them) or mod list.
 */
#ifndef EBSMIGRATE_AWS_EC2_H
#define EBSMIGRATE_AWS_EC2_H

#include "ebsmigrate/buf.h"
#include "ebsmigrate/volume.h"

/* Modifications read before their volumes are known; attached by aws_ec2_attach_mods. */
struct ec2_mod_list {
	char **volume_ids;
	struct volume_mod *mods;
	char **origins;
	size_t n, alloc;
};

void ec2_mod_list_release(struct ec2_mod_list *l);

/* Bits: which kinds of document an export held. */
enum ec2_export_kind { EC2_EXPORT_VOLUMES = 1, EC2_EXPORT_MODIFICATIONS = 2, EC2_EXPORT_INSTANCE_TYPES = 4,
		       EC2_EXPORT_INSTANCES = 8, EC2_EXPORT_METRICS = 16, EC2_EXPORT_CLOUDTRAIL = 32,
		       EC2_EXPORT_ACCOUNTS = 64 /* inventory --save's accounts.json: saved_accounts_load */ };

/* Reads every document of an export (a file may hold several: `aws ... >> all.json`), each
 * detected by shape ({"Volumes": [...]}, {"VolumesModifications": [...]}, {"InstanceTypes":
 * [...]}, {"Reservations": [...]}). Volumes go into f (a volume already present with the same
 * data is merged, a notice naming it when the account label differs; with different data it
 * is an error naming both sources); modifications go into mods. account labels the volumes
 * (may be NULL). CloudWatch documents ({"MetricDataResults": [...]}) are left for
 * aws_cloudwatch_load_export and reported by the EC2_EXPORT_METRICS bit; CloudTrail documents
 * ({"Events": [...]}, aws cloudtrail lookup-events) likewise for aws_cloudtrail_parse
 * (EC2_EXPORT_CLOUDTRAIL). Returns the kinds
 * read (bits, > 0) or a negative EM_E* code with a message naming origin and the JSON path. */
int aws_ec2_load_export(struct fleet *f, struct ec2_mod_list *mods, const char *text, size_t len,
			const char *origin, const char *account, struct buf *err);
/* The same, read from a file (path "-": standard input) element by element: memory holds one
 * volume's tree and a window of the file, not the file (jsonx_stream). */
int aws_ec2_load_file(struct fleet *f, struct ec2_mod_list *mods, const char *path, const char *account,
		      struct buf *err);
struct jsonx_stream;
int aws_ec2_load_stream(struct fleet *f, struct ec2_mod_list *mods, struct jsonx_stream *s, const char *origin,
			const char *account, struct buf *err);
/* Attaches every modification to its volume. Modifications of volumes absent from the fleet
 * are reported as notices (they are ignored: they cannot be planned). */
void aws_ec2_attach_mods(struct fleet *f, const struct ec2_mod_list *mods);

/* ---- live EC2 Query API (2016-11-15) ---- */
struct aws_client;

/* Reads every volume of region (DescribeVolumes, MaxResults 1000, all pages) into f, parsing
 * each page with expat as it streams (no document tree). progress (may be NULL) is called
 * after each page with the number of volumes read so far. */
int aws_ec2_describe_volumes(struct aws_client *c, const char *region, struct fleet *f, const char *account,
			     void (*progress)(void *ctx, const char *region, size_t n), void *pctx,
			     struct buf *err);
/* Reads the latest modification of every modified volume of region (DescribeVolumesModifications
 * without ids, all pages: asking by id fails with InvalidVolumeModification.NotFound for volumes
 * never modified). */
int aws_ec2_describe_modifications(struct aws_client *c, const char *region, struct ec2_mod_list *mods,
				   struct buf *err);
/* The same two reads restricted to the given volumes (Filter volume-id, 200 ids a call; a
 * deleted volume is simply absent, never an error). */
int aws_ec2_describe_volumes_by_id(struct aws_client *c, const char *region, const char *const *ids, size_t n,
				   struct fleet *f, struct buf *err);
int aws_ec2_describe_modifications_by_id(struct aws_client *c, const char *region, const char *const *ids,
					 size_t n, struct ec2_mod_list *mods, struct buf *err);
/* ModifyVolume with VolumeType, Iops and Throughput always explicit. On success *out holds the
 * returned volumeModification (caller releases with volume_mod_release). On an AWS error
 * code_out (may be NULL) receives the code (caller frees) and err the message. */
int aws_ec2_modify_volume(struct aws_client *c, const char *region, const char *volume_id, enum ebs_type type,
			  int64_t iops, int64_t throughput, struct volume_mod *out, char **code_out, struct buf *err);
/* Fills attachments[].instance_type of region's volumes (DescribeInstances by id, 100 a call, up to
 * `concurrency` calls at once, each by its own worker client; answers parsed in call order). */
int aws_ec2_instance_types(struct aws_client *c, const char *region, struct fleet *f, int concurrency,
			   struct buf *err);
/* Reads the EBS-optimized baseline of every instance type f's volumes are attached to (EC2
 * attachments or Kubernetes nodes) with DescribeInstanceTypes into f's limits table. */
int aws_ec2_instance_type_limits(struct aws_client *c, const char *region, struct fleet *f, struct buf *err);
/* The answer bodies the live reads above parse, one kind per Query API action. */
enum ec2_page_kind { EC2_PAGE_VOLUMES, EC2_PAGE_MODIFICATIONS, EC2_PAGE_MODIFY_VOLUME, EC2_PAGE_INSTANCES,
		     EC2_PAGE_INSTANCE_TYPES };
/* Parses one answer body exactly as the live read of that kind does, without a client (for unit
 * tests and the fuzz harness): volumes go into f, modifications into mods (a ModifyVolume answer
 * is decoded and dropped), instance types onto f's attachments, instance-type baselines into
 * f's limits. *next_token_out (may be NULL; caller frees) receives the page's nextToken.
 * Returns 0, or a negative EM_E* code with a message naming origin. Any XML shape is either
 * decoded, ignored or refused: never undefined behaviour. */
int aws_ec2_parse_page(enum ec2_page_kind kind, const char *body, size_t len, const char *origin, struct fleet *f,
		       struct ec2_mod_list *mods, char **next_token_out, struct buf *err);
/* `aws ec2 describe-instances --output json` (id and type) of the instances f's volumes in
 * region are attached to; read back by aws_ec2_load_export into f->instances, which
 * aws_ec2_apply_instances copies onto the attachments. */
void aws_ec2_write_instances_export(struct buf *out, const struct fleet *f, const char *region);
void aws_ec2_apply_instances(struct fleet *f);
/* `aws ec2 describe-instance-types --output json` of f's limits table. */
void aws_ec2_write_instance_types_export(struct buf *out, const struct fleet *f);
/* Writes the region's volumes of f as `aws ec2 describe-volumes --output json` would, and
 * their modifications as `describe-volumes-modifications` would (so plan --from-aws-json
 * replays them). With a spill, out is handed on every megabyte and at the end (a region's
 * volumes export is ~22 MB at 33,000 volumes); NULL keeps the document in out. */
void aws_ec2_write_volumes_export(struct buf *out, const struct fleet *f, const char *region,
				  const struct buf_spill *spill);
void aws_ec2_write_modifications_export(struct buf *out, const struct fleet *f, const char *region,
					const struct buf_spill *spill);

#endif
