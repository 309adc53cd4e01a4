/*
 * aws_ec2.c - EC2 volume data into struct volume.
 *
 * Entry points: aws_ec2_load_export (AWS CLI JSON: DescribeVolumes / DescribeVolumesModifications
 * output, PascalCase), aws_ec2_attach_mods.
 *
 * Invariants: a volume enters the fleet only with a VolumeId, a valid AZ, a positive integer
 * Size and a known VolumeType; anything else is bad input naming the file and JSON path.
 * The same volume in two exports must agree on type/size/iops/throughput/AZ (exports of one
 * account taken at different times may legitimately differ in state and attachments: the
 * first record is kept).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"

void ec2_mod_list_release(struct ec2_mod_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->volume_ids[i]);
		volume_mod_release(&l->mods[i]);
		free(l->origins[i]);
	}
	free(l->volume_ids);
	free(l->mods);
	free(l->origins);
	memset(l, 0, sizeof *l);
}

static int parse_time_field(const cJSON *o, const char *key, time_t *out, const char *origin,
			    const char *path, struct buf *err)
{
	const char *s = jsonx_str(o, key);
	*out = 0;
	if (!s)
		return 0;
	if (em_parse_time(s, out))
		return em_err(err, EM_EINPUT, "%s: %s.%s: '%s' is not an RFC 3339 time", origin, path, key, s);
	return 0;
}

/* Fields that identify the volume's configuration; two sources must agree on them. */
static int same_config(const struct volume *a, const struct volume *b)
{
	return a->size_gib == b->size_gib && a->type == b->type && a->iops == b->iops &&
	       a->throughput == b->throughput && strcmp(a->availability_zone, b->availability_zone) == 0;
}

/* One volume as read from either source (JSON export or Query API XML), before validation.
 * Strings are borrowed from the parser for the duration of ec2_add_volume. */
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
static int ec2_add_volume(struct fleet *f, const struct ec2_vol_rec *rec, const char *origin, const char *path,
			  const char *account, struct buf *err)
{
	if (!rec->id || !*rec->id)
		return em_err(err, EM_EINPUT, "%s: %s: volume without VolumeId", origin, path);
	const char *id = rec->id;
	struct volume tmp;
	memset(&tmp, 0, sizeof tmp);
	if (!rec->az)
		return em_err(err, EM_EINPUT, "%s: %s: volume '%s' has no AvailabilityZone", origin, path, id);
	if (volume_split_az(rec->az, &tmp.region, &tmp.location))
		return em_err(err, EM_EINPUT, "%s: %s.AvailabilityZone: '%s' of volume '%s' is not an availability zone name",
			      origin, path, rec->az, id);
	int rc = 0;
	if (!rec->has_size)
		rc = em_err(err, EM_EINPUT, "%s: %s (volume '%s'): volume has no Size", origin, path, id);
	tmp.type = ebs_type_parse(rec->type);
	if (!rc && tmp.type == EBS_UNKNOWN)
		rc = em_err(err, EM_EINPUT, "%s: %s (volume '%s').VolumeType: unknown volume type '%s'", origin, path, id,
			    rec->type ? rec->type : "(missing)");
	if (rc) {
		free(tmp.region);
		free(tmp.location);
		return rc;
	}
	tmp.size_gib = rec->size;
	tmp.iops = rec->iops;
	tmp.throughput = rec->throughput;
	tmp.availability_zone = (char *)rec->az;
	struct volume *v = fleet_find(f, id);
	if (v) {
		int same = same_config(v, &tmp);
		free(tmp.region);
		free(tmp.location);
		if (!same)
			return em_err(err, EM_EINPUT,
				      "%s: %s: volume '%s' conflicts with '%s' (size/type/iops/throughput/zone differ)",
				      origin, path, id, v->source);
		return 0; /* the same volume again (overlapping exports): keep the first record */
	}
	v = fleet_add_volume(f, id);
	v->region = tmp.region;
	v->location = tmp.location;
	v->availability_zone = xstrdup(rec->az);
	v->size_gib = rec->size;
	v->type = tmp.type;
	v->iops = rec->iops;
	v->throughput = rec->throughput;
	v->create_time = rec->create_time;
	v->account = xstrdup(account);
	v->state = xstrdup(rec->state ? rec->state : "unknown");
	v->encrypted = rec->encrypted;
	v->kms_key_id = xstrdup(rec->kms_key_id);
	v->multi_attach = rec->multi_attach;
	v->source = xstrdup(origin);
	if (rec->n_atts) {
		v->attachments = xcalloc(rec->n_atts, sizeof *v->attachments);
		for (size_t i = 0; i < rec->n_atts; i++) {
			v->attachments[i].instance_id = xstrdup(rec->atts[i].instance_id);
			v->attachments[i].device = xstrdup(rec->atts[i].device);
			v->attachments[i].state = xstrdup(rec->atts[i].state);
		}
		v->n_attachments = rec->n_atts;
	}
	if (rec->n_tags) {
		v->tags = xcalloc(rec->n_tags, sizeof *v->tags);
		for (size_t i = 0; i < rec->n_tags; i++) {
			v->tags[i].key = xstrdup(rec->tags[i].key);
			v->tags[i].value = xstrdup(rec->tags[i].value ? rec->tags[i].value : "");
		}
		v->n_tags = rec->n_tags;
	}
	return 0;
}

static int load_volume(struct fleet *f, const cJSON *o, const char *origin, const char *path,
		       const char *account, struct buf *err)
{
	if (!cJSON_IsObject(o))
		return em_err(err, EM_EINPUT, "%s: %s: expected an object", origin, path);
	struct ec2_vol_rec rec;
	memset(&rec, 0, sizeof rec);
	rec.id = jsonx_str(o, "VolumeId");
	if (!rec.id || !*rec.id)
		return em_err(err, EM_EINPUT, "%s: %s: volume without VolumeId", origin, path);
	rec.az = jsonx_str(o, "AvailabilityZone");
	struct buf sub = BUF_INIT;
	buf_addf(&sub, "%s (volume '%s')", path, rec.id);
	int rc = jsonx_int(o, "Size", 1, 65536, &rec.size, &rec.has_size, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "Iops", 0, 1000000, &rec.iops, NULL, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "Throughput", 0, 100000, &rec.throughput, NULL, origin, sub.s, err);
	if (!rc && rec.az)
		rc = parse_time_field(o, "CreateTime", &rec.create_time, origin, sub.s, err);
	buf_release(&sub);
	if (rc)
		return rc;
	rec.type = jsonx_str(o, "VolumeType");
	rec.state = jsonx_str(o, "State");
	rec.encrypted = jsonx_bool(o, "Encrypted", 0);
	rec.kms_key_id = jsonx_str(o, "KmsKeyId");
	rec.multi_attach = jsonx_bool(o, "MultiAttachEnabled", 0);
	const cJSON *atts = jsonx_get(o, "Attachments");
	size_t na = cJSON_IsArray(atts) ? (size_t)cJSON_GetArraySize(atts) : 0;
	rec.atts = na ? xcalloc(na, sizeof *rec.atts) : NULL;
	const cJSON *a;
	cJSON_ArrayForEach(a, atts)
	{
		struct attachment *at = &rec.atts[rec.n_atts++];
		at->instance_id = (char *)jsonx_str(a, "InstanceId");
		at->device = (char *)jsonx_str(a, "Device");
		at->state = (char *)jsonx_str(a, "State");
	}
	const cJSON *tags = jsonx_get(o, "Tags");
	size_t nt = cJSON_IsArray(tags) ? (size_t)cJSON_GetArraySize(tags) : 0;
	rec.tags = nt ? xcalloc(nt, sizeof *rec.tags) : NULL;
	const cJSON *t;
	cJSON_ArrayForEach(t, tags)
	{
		const char *k = jsonx_str(t, "Key");
		if (!k)
			continue;
		rec.tags[rec.n_tags].key = (char *)k;
		rec.tags[rec.n_tags].value = (char *)jsonx_str(t, "Value");
		rec.n_tags++;
	}
	rc = ec2_add_volume(f, &rec, origin, path, account, err);
	free(rec.atts);
	free(rec.tags);
	return rc;
}

static int load_mod(struct ec2_mod_list *l, const cJSON *o, const char *origin, const char *path,
		    struct buf *err)
{
	const char *id = jsonx_str(o, "VolumeId");
	if (!id || !*id)
		return em_err(err, EM_EINPUT, "%s: %s: modification without VolumeId", origin, path);
	struct volume_mod m;
	memset(&m, 0, sizeof m);
	struct buf sub = BUF_INIT;
	buf_addf(&sub, "%s (volume '%s')", path, id);
	int rc = parse_time_field(o, "StartTime", &m.start_time, origin, sub.s, err);
	if (!rc)
		rc = parse_time_field(o, "EndTime", &m.end_time, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "TargetSize", 0, 65536, &m.target_size, NULL, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "TargetIops", 0, 1000000, &m.target_iops, NULL, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "TargetThroughput", 0, 100000, &m.target_throughput, NULL, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "OriginalSize", 0, 65536, &m.original_size, NULL, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "OriginalIops", 0, 1000000, &m.original_iops, NULL, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "OriginalThroughput", 0, 100000, &m.original_throughput, NULL, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "Progress", 0, 100, &m.progress, NULL, origin, sub.s, err);
	const char *state = jsonx_str(o, "ModificationState");
	if (!rc && !state)
		rc = em_err(err, EM_EINPUT, "%s: %s: modification has no ModificationState", origin, sub.s);
	if (!rc && !m.start_time)
		rc = em_err(err, EM_EINPUT, "%s: %s: modification has no StartTime", origin, sub.s);
	buf_release(&sub);
	if (rc)
		return rc;
	m.state = xstrdup(state);
	m.status_message = xstrdup(jsonx_str(o, "StatusMessage"));
	m.target_type = ebs_type_parse(jsonx_str(o, "TargetVolumeType"));
	m.original_type = ebs_type_parse(jsonx_str(o, "OriginalVolumeType"));
	if (l->n >= l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 64;
		l->volume_ids = xrealloc(l->volume_ids, l->alloc * sizeof *l->volume_ids);
		l->mods = xrealloc(l->mods, l->alloc * sizeof *l->mods);
		l->origins = xrealloc(l->origins, l->alloc * sizeof *l->origins);
	}
	l->volume_ids[l->n] = xstrdup(id);
	l->mods[l->n] = m;
	l->origins[l->n] = xstrdup(origin);
	l->n++;
	return 0;
}

int aws_ec2_load_export(struct fleet *f, struct ec2_mod_list *mods, const char *text, size_t len,
			const char *origin, const char *account, struct buf *err)
{
	cJSON *root = jsonx_parse(text, len, origin, err);
	if (!root)
		return EM_EINPUT;
	const cJSON *vols = jsonx_get(root, "Volumes");
	const cJSON *ms = jsonx_get(root, "VolumesModifications");
	int rc;
	if (cJSON_IsArray(vols)) {
		rc = EC2_EXPORT_VOLUMES;
		int i = 0;
		const cJSON *it;
		cJSON_ArrayForEach(it, vols)
		{
			char path[48];
			snprintf(path, sizeof path, "Volumes[%d]", i++);
			int r = load_volume(f, it, origin, path, account, err);
			if (r) {
				rc = r;
				break;
			}
		}
	} else if (cJSON_IsArray(ms)) {
		rc = EC2_EXPORT_MODIFICATIONS;
		int i = 0;
		const cJSON *it;
		cJSON_ArrayForEach(it, ms)
		{
			char path[48];
			snprintf(path, sizeof path, "VolumesModifications[%d]", i++);
			int r = load_mod(mods, it, origin, path, err);
			if (r) {
				rc = r;
				break;
			}
		}
	} else {
		rc = em_err(err, EM_EINPUT,
			    "%s: not an AWS CLI export: expected {\"Volumes\": [...]} (aws ec2 describe-volumes) "
			    "or {\"VolumesModifications\": [...]} (aws ec2 describe-volumes-modifications)",
			    origin);
	}
	cJSON_Delete(root);
	return rc;
}

void aws_ec2_attach_mods(struct fleet *f, const struct ec2_mod_list *mods)
{
	size_t orphans = 0;
	const char *first = NULL, *first_origin = NULL;
	for (size_t i = 0; i < mods->n; i++) {
		struct volume *v = fleet_find(f, mods->volume_ids[i]);
		if (!v) {
			if (!orphans++) {
				first = mods->volume_ids[i];
				first_origin = mods->origins[i];
			}
			continue;
		}
		volume_add_mod(v, &mods->mods[i]);
	}
	if (orphans)
		fleet_add_notice(f, "%s: %zu modification record(s) name volumes absent from the volume exports "
				    "(first: '%s'); they were ignored",
				 first_origin, orphans, first);
}
