/*
 * aws_ec2_export.c - the AWS CLI's EC2 JSON exports: read into the fleet (DescribeVolumes,
 * DescribeVolumesModifications, DescribeInstances, DescribeInstanceTypes output, PascalCase, as
 * `aws ec2 ... --output json` writes it), and written back in the same shape for --save.
 *
 * Entry points: aws_ec2_load_export / aws_ec2_load_file / aws_ec2_load_stream,
 * aws_ec2_attach_mods, aws_ec2_apply_instances; the writers aws_ec2_write_volumes_export,
 * aws_ec2_write_modifications_export, aws_ec2_write_instances_export,
 * aws_ec2_write_instance_types_export.
 *
 * Invariants: every record goes through aws_ec2_add_volume / aws_ec2_mod_list_push (aws_ec2.c),
 * so an export and a live read accept the same volumes; a malformed one is bad input naming the
 * file and JSON path, and a field of the wrong type says so instead of passing for absent.
 * Every document of an export is read (`aws ... >> all.json`). What the writers write, the
 * readers read back into the same fleet (inventory --save, then plan from the saved files).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/saved_accounts.h"
#include "aws_ec2_internal.h"

static int parse_time_field(const cJSON *o, const char *key, time_t *out, const char *origin,
			    const char *path, struct buf *err)
{
	const char *s;
	*out = 0;
	int rc = jsonx_want_str(o, key, &s, origin, path, err);
	if (rc || !s)
		return rc;
	if (em_parse_time(s, out))
		return em_err(err, EM_EINPUT, "%s: %s.%s: '%s' is not an RFC 3339 time", origin, path, key, s);
	return 0;
}

static int load_volume(struct fleet *f, const cJSON *o, const char *origin, const char *path,
		       const char *account, struct buf *err)
{
	if (!cJSON_IsObject(o))
		return em_err(err, EM_EINPUT, "%s: %s: expected an object", origin, path);
	struct ec2_vol_rec rec;
	memset(&rec, 0, sizeof rec);
	int rc = jsonx_want_str(o, "VolumeId", &rec.id, origin, path, err);
	if (rc)
		return rc;
	if (!rec.id || !*rec.id)
		return em_err(err, EM_EINPUT, "%s: %s: volume without VolumeId", origin, path);
	struct buf sub = BUF_INIT;
	buf_addf(&sub, "%s (volume '%s')", path, rec.id);
	const cJSON *atts = NULL, *tags = NULL;
	rc = jsonx_want_str(o, "AvailabilityZone", &rec.az, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "Size", 1, 65536, &rec.size, &rec.has_size, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "Iops", 0, 1000000, &rec.iops, NULL, origin, sub.s, err);
	if (!rc)
		rc = jsonx_int(o, "Throughput", 0, 100000, &rec.throughput, NULL, origin, sub.s, err);
	if (!rc && rec.az)
		rc = parse_time_field(o, "CreateTime", &rec.create_time, origin, sub.s, err);
	if (!rc)
		rc = jsonx_want_str(o, "VolumeType", &rec.type, origin, sub.s, err);
	if (!rc)
		rc = jsonx_want_str(o, "State", &rec.state, origin, sub.s, err);
	if (!rc)
		rc = jsonx_want_str(o, "KmsKeyId", &rec.kms_key_id, origin, sub.s, err);
	if (!rc)
		rc = jsonx_want_array(o, "Attachments", &atts, origin, sub.s, err);
	if (!rc)
		rc = jsonx_want_array(o, "Tags", &tags, origin, sub.s, err);
	if (rc) {
		buf_release(&sub);
		return rc;
	}
	rec.encrypted = jsonx_bool(o, "Encrypted", 0);
	rec.multi_attach = jsonx_bool(o, "MultiAttachEnabled", 0);
	size_t na = atts ? (size_t)cJSON_GetArraySize(atts) : 0;
	rec.atts = na ? xcalloc(na, sizeof *rec.atts) : NULL;
	struct buf item = BUF_INIT;
	const cJSON *a;
	cJSON_ArrayForEach(a, atts)
	{
		buf_reset(&item);
		buf_addf(&item, "%s.Attachments[%zu]", sub.s, rec.n_atts);
		struct attachment *at = &rec.atts[rec.n_atts++];
		const char *id = NULL, *dev = NULL, *st = NULL;
		if (!rc)
			rc = jsonx_want_str(a, "InstanceId", &id, origin, item.s, err);
		if (!rc)
			rc = jsonx_want_str(a, "Device", &dev, origin, item.s, err);
		if (!rc)
			rc = jsonx_want_str(a, "State", &st, origin, item.s, err);
		at->instance_id = (char *)id;
		at->device = (char *)dev;
		at->state = (char *)st;
	}
	size_t nt = tags ? (size_t)cJSON_GetArraySize(tags) : 0;
	rec.tags = nt ? xcalloc(nt, sizeof *rec.tags) : NULL;
	size_t ti = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, tags)
	{
		buf_reset(&item);
		buf_addf(&item, "%s.Tags[%zu]", sub.s, ti++);
		const char *k = NULL, *val = NULL;
		if (!rc)
			rc = jsonx_want_str(t, "Key", &k, origin, item.s, err);
		if (!rc)
			rc = jsonx_want_str(t, "Value", &val, origin, item.s, err);
		if (!k)
			continue;
		rec.tags[rec.n_tags].key = (char *)k;
		rec.tags[rec.n_tags].value = (char *)val;
		rec.n_tags++;
	}
	buf_release(&item);
	buf_release(&sub);
	if (!rc)
		rc = aws_ec2_add_volume(f, &rec, origin, path, account, err);
	free(rec.atts);
	free(rec.tags);
	return rc;
}

/* ---- the common case of load_volume, read in one pass ----
 * A well-formed Volumes element (every field of the documented type, integers in range, a
 * parseable CreateTime, attachments and tags objects of strings) is read by walking its members
 * once, with no path formatted per field. Anything else declines (FAST_DECLINE, nothing changed)
 * and load_volume reads the element again, so every message is load_volume's. As with
 * jsonx_get, the first of duplicate keys counts. */

enum { FAST_DECLINE = 1 };

/* Member c, the first named like it when !(*seen & bit): into *out when is(c) holds, left
 * alone when it is null; any other type declines. Inlined, so each caller's is() is a direct
 * call (a million members on a large export). */
static inline __attribute__((always_inline)) int fast_node(const cJSON *c, unsigned bit, unsigned *seen, cJSON_bool (*is)(const cJSON *),
		     const cJSON **out)
{
	if (*seen & bit)
		return 0;
	*seen |= bit;
	if (is(c))
		*out = c;
	else if (!cJSON_IsNull(c))
		return FAST_DECLINE;
	return 0;
}

/* As fast_node for a string, its text into *out (NULL for null). */
static inline int fast_str(const cJSON *c, unsigned bit, unsigned *seen, const char **out)
{
	const cJSON *n = NULL;
	if (fast_node(c, bit, seen, cJSON_IsString, &n))
		return FAST_DECLINE;
	if (n)
		*out = n->valuestring;
	return 0;
}

/* As fast_str for an integer within min..max, as jsonx_int accepts it. */
static int fast_int(const cJSON *c, unsigned bit, unsigned *seen, int64_t min, int64_t max, int64_t *out,
		    int *present)
{
	const cJSON *n = NULL;
	if (fast_node(c, bit, seen, cJSON_IsNumber, &n))
		return FAST_DECLINE;
	if (!n)
		return 0;
	double d = n->valuedouble;
	if (d != floor(d) || !isfinite(d) || d < (double)min || d > (double)max)
		return FAST_DECLINE;
	*out = (int64_t)d;
	if (present)
		*present = 1;
	return 0;
}

/* The string members keys[0..n) of object o into vals (NULL when absent or null). */
static int fast_members(const cJSON *o, const char *const *keys, const char **vals, size_t n)
{
	if (!cJSON_IsObject(o))
		return FAST_DECLINE;
	unsigned seen = 0;
	for (size_t k = 0; k < n; k++)
		vals[k] = NULL;
	for (const cJSON *c = o->child; c; c = c->next) {
		if (!c->string)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (strcmp(c->string, keys[k]) == 0) {
				if (fast_str(c, 1u << k, &seen, &vals[k]))
					return FAST_DECLINE;
				break;
			}
		}
	}
	return 0;
}

enum {
	F_ID = 1u << 0, F_AZ = 1u << 1, F_SIZE = 1u << 2, F_IOPS = 1u << 3, F_TP = 1u << 4, F_CTIME = 1u << 5,
	F_TYPE = 1u << 6, F_STATE = 1u << 7, F_KMS = 1u << 8, F_ATTS = 1u << 9, F_TAGS = 1u << 10,
	F_ENC = 1u << 11, F_MULTI = 1u << 12,
};

/* A volume's own members, one pass. */
static int fast_volume_members(const cJSON *o, struct ec2_vol_rec *rec, const char **ctime, const cJSON **atts,
			       const cJSON **tags)
{
	unsigned seen = 0;
	for (const cJSON *c = o->child; c; c = c->next) {
		const char *k = c->string;
		int r = 0;
		if (!k)
			continue;
		switch (k[0]) {
		case 'V':
			if (strcmp(k, "VolumeId") == 0)
				r = fast_str(c, F_ID, &seen, &rec->id);
			else if (strcmp(k, "VolumeType") == 0)
				r = fast_str(c, F_TYPE, &seen, &rec->type);
			break;
		case 'A':
			if (strcmp(k, "AvailabilityZone") == 0)
				r = fast_str(c, F_AZ, &seen, &rec->az);
			else if (strcmp(k, "Attachments") == 0)
				r = fast_node(c, F_ATTS, &seen, cJSON_IsArray, atts);
			break;
		case 'S':
			if (strcmp(k, "Size") == 0)
				r = fast_int(c, F_SIZE, &seen, 1, 65536, &rec->size, &rec->has_size);
			else if (strcmp(k, "State") == 0)
				r = fast_str(c, F_STATE, &seen, &rec->state);
			break;
		case 'I':
			if (strcmp(k, "Iops") == 0)
				r = fast_int(c, F_IOPS, &seen, 0, 1000000, &rec->iops, NULL);
			break;
		case 'T':
			if (strcmp(k, "Throughput") == 0)
				r = fast_int(c, F_TP, &seen, 0, 100000, &rec->throughput, NULL);
			else if (strcmp(k, "Tags") == 0)
				r = fast_node(c, F_TAGS, &seen, cJSON_IsArray, tags);
			break;
		case 'C':
			if (strcmp(k, "CreateTime") == 0)
				r = fast_str(c, F_CTIME, &seen, ctime);
			break;
		case 'K':
			if (strcmp(k, "KmsKeyId") == 0)
				r = fast_str(c, F_KMS, &seen, &rec->kms_key_id);
			break;
		case 'E':
			if (strcmp(k, "Encrypted") == 0 && !(seen & F_ENC)) {
				seen |= F_ENC;
				rec->encrypted = cJSON_IsTrue(c);
			}
			break;
		case 'M':
			if (strcmp(k, "MultiAttachEnabled") == 0 && !(seen & F_MULTI)) {
				seen |= F_MULTI;
				rec->multi_attach = cJSON_IsTrue(c);
			}
			break;
		default:
			break;
		}
		if (r)
			return FAST_DECLINE;
	}
	return 0;
}

enum { FAST_MAX_ITEMS = 16 };

/* 0 or aws_ec2_add_volume's error: the element was read; FAST_DECLINE: it was not. */
static int load_volume_fast(struct fleet *f, const cJSON *o, const char *origin, const char *path,
			    const char *account, struct buf *err)
{
	static const char *const att_keys[] = {"InstanceId", "Device", "State"};
	static const char *const tag_keys[] = {"Key", "Value"};
	if (!cJSON_IsObject(o))
		return FAST_DECLINE;
	struct ec2_vol_rec rec;
	memset(&rec, 0, sizeof rec);
	const char *ctime = NULL;
	const cJSON *atts = NULL, *tags = NULL;
	if (fast_volume_members(o, &rec, &ctime, &atts, &tags) || !rec.id || !*rec.id)
		return FAST_DECLINE;
	if (rec.az && ctime && em_parse_time(ctime, &rec.create_time))
		return FAST_DECLINE;
	struct attachment att_store[FAST_MAX_ITEMS];
	struct kv tag_store[FAST_MAX_ITEMS];
	rec.atts = att_store;
	rec.tags = tag_store;
	const cJSON *c;
	cJSON_ArrayForEach(c, atts)
	{
		const char *v[3];
		if (rec.n_atts == FAST_MAX_ITEMS || fast_members(c, att_keys, v, 3))
			return FAST_DECLINE;
		struct attachment *at = &rec.atts[rec.n_atts++];
		at->instance_id = (char *)v[0];
		at->device = (char *)v[1];
		at->state = (char *)v[2];
	}
	size_t n_tags = 0;
	cJSON_ArrayForEach(c, tags)
	{
		const char *v[2];
		if (n_tags++ == FAST_MAX_ITEMS || fast_members(c, tag_keys, v, 2))
			return FAST_DECLINE;
		if (!v[0])
			continue;
		rec.tags[rec.n_tags].key = (char *)v[0];
		rec.tags[rec.n_tags].value = (char *)v[1];
		rec.n_tags++;
	}
	return aws_ec2_add_volume(f, &rec, origin, path, account, err);
}


static int load_mod(struct ec2_mod_list *l, const cJSON *o, const char *origin, const char *path,
		    struct buf *err)
{
	if (!cJSON_IsObject(o))
		return em_err(err, EM_EINPUT, "%s: %s: expected an object", origin, path);
	const char *id;
	int rc = jsonx_want_str(o, "VolumeId", &id, origin, path, err);
	if (rc)
		return rc;
	if (!id || !*id)
		return em_err(err, EM_EINPUT, "%s: %s: modification without VolumeId", origin, path);
	struct volume_mod m;
	memset(&m, 0, sizeof m);
	struct buf sub = BUF_INIT;
	buf_addf(&sub, "%s (volume '%s')", path, id);
	const char *state = NULL, *message = NULL, *target_type = NULL, *original_type = NULL;
	/* read in this order: the first bad field is the one named */
	const struct {
		const char *key;
		int64_t max;
		int64_t *out;
	} ints[] = {
		{"TargetSize", 65536, &m.target_size},
		{"TargetIops", 1000000, &m.target_iops},
		{"TargetThroughput", 100000, &m.target_throughput},
		{"OriginalSize", 65536, &m.original_size},
		{"OriginalIops", 1000000, &m.original_iops},
		{"OriginalThroughput", 100000, &m.original_throughput},
		{"Progress", 100, &m.progress},
	};
	const struct {
		const char *key;
		const char **out;
	} strs[] = {
		{"ModificationState", &state},
		{"StatusMessage", &message},
		{"TargetVolumeType", &target_type},
		{"OriginalVolumeType", &original_type},
	};
	rc = parse_time_field(o, "StartTime", &m.start_time, origin, sub.s, err);
	if (!rc)
		rc = parse_time_field(o, "EndTime", &m.end_time, origin, sub.s, err);
	for (size_t i = 0; !rc && i < sizeof ints / sizeof ints[0]; i++)
		rc = jsonx_int(o, ints[i].key, 0, ints[i].max, ints[i].out, NULL, origin, sub.s, err);
	for (size_t i = 0; !rc && i < sizeof strs / sizeof strs[0]; i++)
		rc = jsonx_want_str(o, strs[i].key, strs[i].out, origin, sub.s, err);
	if (!rc && !state)
		rc = em_err(err, EM_EINPUT, "%s: %s: modification has no ModificationState", origin, sub.s);
	if (!rc && !m.start_time)
		rc = em_err(err, EM_EINPUT, "%s: %s: modification has no StartTime", origin, sub.s);
	buf_release(&sub);
	if (rc)
		return rc;
	volume_mod_set_state(&m, state);
	m.status_message = xstrdup(message);
	m.target_type = ebs_type_parse(target_type);
	m.original_type = ebs_type_parse(original_type);
	aws_ec2_mod_list_push(l, xstrdup(id), &m, origin);
	return 0;
}

/* Volumes listed under two account labels (the same export given twice, or one account's
 * volumes saved under two names): the first label is kept, one notice per file names the first
 * such volume and counts the others. */
struct account_clash {
	size_t n;
	char *volume_id, *kept_account, *kept_source;
};

static const char *account_name(const char *a)
{
	return a ? a : "(none)";
}

/* "<doc><array>[i]" into path, as snprintf would write it, without printf in the per-element loop. */
static void element_path(char *path, size_t size, const char *doc, const char *array, size_t i)
{
	size_t ld = strlen(doc), la = strlen(array);
	if (ld + la + 24 > size) {
		snprintf(path, size, "%s%s[%zu]", doc, array, i);
		return;
	}
	char digits[24];
	size_t nd = 0;
	do
		digits[nd++] = (char)('0' + i % 10);
	while ((i /= 10) != 0);
	char *p = path;
	memcpy(p, doc, ld);
	p += ld;
	memcpy(p, array, la);
	p += la;
	*p++ = '[';
	while (nd)
		*p++ = digits[--nd];
	*p++ = ']';
	*p = '\0';
}

/* Volumes[i] of a document: loaded, or merged into a volume read before. */
static int load_volume_element(struct fleet *f, const cJSON *it, size_t i, const char *origin, const char *doc,
			       const char *account, struct account_clash *clash, struct buf *err)
{
	char path[80];
	element_path(path, sizeof path, doc, "Volumes", i);
	size_t before = f->n;
	int r = load_volume_fast(f, it, origin, path, account, err);
	if (r == FAST_DECLINE)
		r = load_volume(f, it, origin, path, account, err);
	if (r)
		return r;
	if (f->n != before)
		return 0;
	/* merged into a volume read before: same configuration, maybe another account */
	const struct volume *v = fleet_find(f, jsonx_str(it, "VolumeId"));
	const char *had = v ? v->account : NULL;
	if (!v || (had == account) || (had && account && strcmp(had, account) == 0))
		return 0;
	if (!clash->n++) {
		clash->volume_id = xstrdup(v->volume_id);
		clash->kept_account = xstrdup(account_name(had));
		clash->kept_source = xstrdup(v->source);
	}
	return 0;
}

static int load_volumes_doc(struct fleet *f, const cJSON *vols, const char *origin, const char *doc,
			    const char *account, struct account_clash *clash, struct buf *err)
{
	size_t i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, vols)
	{
		int r = load_volume_element(f, it, i++, origin, doc, account, clash, err);
		if (r)
			return r;
	}
	return 0;
}

static int load_mod_element(struct ec2_mod_list *mods, const cJSON *it, size_t i, const char *origin,
			    const char *doc, struct buf *err)
{
	char path[80];
	snprintf(path, sizeof path, "%sVolumesModifications[%zu]", doc, i);
	return load_mod(mods, it, origin, path, err);
}

static int load_mods_doc(struct ec2_mod_list *mods, const cJSON *ms, const char *origin, const char *doc,
			 struct buf *err)
{
	size_t i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, ms)
	{
		int r = load_mod_element(mods, it, i++, origin, doc, err);
		if (r)
			return r;
	}
	return 0;
}

/* Reservations[i]: its instances' types. */
static void load_reservation(struct fleet *f, const cJSON *r)
{
	const cJSON *in;
	cJSON_ArrayForEach(in, jsonx_get(r, "Instances"))
	{
		const char *id = jsonx_str(in, "InstanceId"), *t = jsonx_str(in, "InstanceType");
		if (!id || !t)
			continue;
		XGROW(f->instances, f->n_instances, f->alloc_instances);
		f->instances[f->n_instances].key = xstrdup(id);
		f->instances[f->n_instances].value = xstrdup(t);
		f->n_instances++;
	}
}

static void load_instances_doc(struct fleet *f, const cJSON *res)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, res)
		load_reservation(f, r);
}

static int load_instance_type(struct fleet *f, const cJSON *it, size_t i, const char *origin, const char *doc,
			      struct buf *err)
{
	const char *t = jsonx_str(it, "InstanceType");
	const cJSON *info = jsonx_path(it, "EbsInfo.EbsOptimizedInfo");
	const cJSON *iops = jsonx_get(info, "BaselineIops"), *mbps = jsonx_get(info, "BaselineThroughputInMBps");
	if (t && cJSON_IsNumber(iops) && cJSON_IsNumber(mbps)) {
		/* no instance comes near these bounds; beyond them the int64 conversion is undefined */
		if (!(iops->valuedouble > 0 && iops->valuedouble < 1e9 && mbps->valuedouble > 0 &&
		      mbps->valuedouble < 1e9))
			return em_err(err, EM_EINPUT,
				      "%s: %sInstanceTypes[%zu] (instance type '%s').EbsInfo.EbsOptimizedInfo: "
				      "BaselineIops or BaselineThroughputInMBps is not a positive number below 1e9",
				      origin, doc, i, t);
		fleet_set_instance_limit(f, t, (int64_t)iops->valuedouble, mbps->valuedouble);
	}
	return 0;
}

static int load_instance_types_doc(struct fleet *f, const cJSON *its, const char *origin, const char *doc,
				   struct buf *err)
{
	const cJSON *it;
	size_t i = 0;
	cJSON_ArrayForEach(it, its)
	{
		int r = load_instance_type(f, it, i++, origin, doc, err);
		if (r)
			return r;
	}
	return 0;
}

/* Every shape of document --from-aws-json accepts, by its top-level array, with the command that
 * prints it: load_doc detects by it and its refusal lists every row, so the two cannot drift
 * apart. The saved accounts' document (no array) is the message's last item. */
static const struct {
	const char *key;
	int kind;
	const char *producer;
} export_shapes[] = {
	{"Volumes", EC2_EXPORT_VOLUMES, "aws ec2 describe-volumes"},
	{"VolumesModifications", EC2_EXPORT_MODIFICATIONS, "aws ec2 describe-volumes-modifications"},
	{"InstanceTypes", EC2_EXPORT_INSTANCE_TYPES, "aws ec2 describe-instance-types"},
	{"Reservations", EC2_EXPORT_INSTANCES, "aws ec2 describe-instances"},
	{"MetricDataResults", EC2_EXPORT_METRICS, "aws cloudwatch get-metric-data"},
	{"Events", EC2_EXPORT_CLOUDTRAIL, "aws cloudtrail lookup-events"},
};
#define N_EXPORT_SHAPES (sizeof export_shapes / sizeof export_shapes[0])

/* "expected {"Volumes": [...]} (aws ec2 describe-volumes), ... or {"schema": ...} (...)" */
static void expected_shapes(struct buf *b)
{
	buf_adds(b, "expected ");
	for (size_t i = 0; i < N_EXPORT_SHAPES; i++)
		buf_addf(b, "{\"%s\": [...]} (%s), ", export_shapes[i].key, export_shapes[i].producer);
	buf_adds(b, "or {\"schema\": \"" SAVED_ACCOUNTS_SCHEMA "\", ...} (inventory --save's accounts.json)");
}

/* One document of an export; returns its kind bit or a negative EM_E* code. doc prefixes JSON
 * paths in messages ("document 2: " in a stream of several, else ""). */
static int load_doc(struct fleet *f, struct ec2_mod_list *mods, const cJSON *root, const char *origin,
		    const char *doc, const char *account, struct account_clash *clash, struct buf *err)
{
	size_t shape = N_EXPORT_SHAPES;
	const cJSON *array = NULL;
	for (size_t i = 0; i < N_EXPORT_SHAPES && shape == N_EXPORT_SHAPES; i++)
		if (cJSON_IsArray(array = jsonx_get(root, export_shapes[i].key)))
			shape = i;
	int rc = 0, kind = shape < N_EXPORT_SHAPES ? export_shapes[shape].kind : 0;
	switch (kind) {
	case EC2_EXPORT_INSTANCES: load_instances_doc(f, array); break;
	case EC2_EXPORT_INSTANCE_TYPES: rc = load_instance_types_doc(f, array, origin, doc, err); break;
	case EC2_EXPORT_VOLUMES: rc = load_volumes_doc(f, array, origin, doc, account, clash, err); break;
	case EC2_EXPORT_MODIFICATIONS: rc = load_mods_doc(mods, array, origin, doc, err); break;
	default: break; /* metrics and CloudTrail: read once every volume is known (load_deferred) */
	}
	if (kind)
		return rc ? rc : kind;
	if (saved_accounts_is(root))
		return EC2_EXPORT_ACCOUNTS; /* a multi-account save's coverage: read by saved_accounts_load */
	for (size_t i = 0; i < N_EXPORT_SHAPES; i++) {
		const cJSON *v = jsonx_get(root, export_shapes[i].key);
		if (v && export_shapes[i].kind <= EC2_EXPORT_INSTANCES) /* the four read here: a wrong type */
			return em_err(err, EM_EINPUT, "%s: %s%s: must be an array, got %s", origin, doc,
				      export_shapes[i].key, jsonx_type_name(v));
	}
	/* A kubectl export given to --from-aws-json: say which option takes it. */
	const char *kind_name = jsonx_str(root, "kind");
	struct buf seen = BUF_INIT;
	if (cJSON_IsArray(jsonx_get(root, "items"))) {
		buf_adds(&seen, "a List with \"items\"");
	} else if (kind_name && *kind_name) {
		buf_adds(&seen, "an object with \"kind\" ");
		buf_add_visible(&seen, kind_name);
	} else if (jsonx_get(root, "node") && cJSON_IsArray(jsonx_get(root, "pods"))) {
		buf_adds(&seen, "a kubelet stats/summary");
	} else if (cJSON_IsObject(jsonx_get(root, "serverVersion"))) {
		buf_adds(&seen, "`kubectl version -o json` output");
	}
	if (seen.len) {
		rc = em_err(err, EM_EINPUT,
			    "%s: %snot an AWS CLI export: it looks like a kubectl export (%s): use --from-kube-json", origin,
			    doc, seen.s);
		buf_release(&seen);
		return rc;
	}
	expected_shapes(&seen);
	rc = em_err(err, EM_EINPUT, "%s: %snot an AWS CLI export: %s", origin, doc, seen.s);
	buf_release(&seen);
	return rc;
}

/* The arrays read element by element (the keys load_doc looks for). */
static const char *const stream_keys[] = {"Volumes", "VolumesModifications", "InstanceTypes", "Reservations",
					  "MetricDataResults", NULL};

/* One streamed element, by the array it is in. */
static int load_element(struct fleet *f, struct ec2_mod_list *mods, const struct jsonx_event *ev, const char *origin,
			const char *doc, const char *account, struct account_clash *clash, struct buf *err)
{
	if (strcmp(ev->key, "Volumes") == 0)
		return load_volume_element(f, ev->value, ev->index, origin, doc, account, clash, err);
	if (strcmp(ev->key, "VolumesModifications") == 0)
		return load_mod_element(mods, ev->value, ev->index, origin, doc, err);
	if (strcmp(ev->key, "InstanceTypes") == 0)
		return load_instance_type(f, ev->value, ev->index, origin, doc, err);
	if (strcmp(ev->key, "Reservations") == 0)
		load_reservation(f, ev->value);
	return 0; /* MetricDataResults: read by aws_cloudwatch_load_export */
}

int aws_ec2_load_stream(struct fleet *f, struct ec2_mod_list *mods, struct jsonx_stream *s, const char *origin,
			const char *account, struct buf *err)
{
	struct account_clash clash = {0, NULL, NULL, NULL};
	struct jsonx_event ev;
	int rc, kinds = 0;
	while ((rc = jsonx_stream_next(s, &ev, err)) > 0) {
		char doc[40] = "";
		if (ev.doc > 1) /* the first document's paths read as in a file of one */
			snprintf(doc, sizeof doc, "document %zu: ", ev.doc);
		/* A document's streamed arrays are empty in its root: load_doc checks its shape and
		 * says what it was. */
		int r = rc == JSONX_ELEMENT ? load_element(f, mods, &ev, origin, doc, account, &clash, err)
					    : load_doc(f, mods, ev.value, origin, doc, account, &clash, err);
		if (r < 0) {
			rc = r;
			break;
		}
		if (rc == JSONX_DOCUMENT)
			kinds |= r;
	}
	struct buf more = BUF_INIT;
	if (clash.n > 1)
		buf_addf(&more, " (and %zu more volumes of this file)", clash.n - 1);
	if (!rc && clash.n)
		fleet_add_notice(f, "%s: volume '%s' is under account '%s' here but '%s' in %s; kept under '%s'%s", origin,
				 clash.volume_id, account_name(account), clash.kept_account, clash.kept_source,
				 clash.kept_account, clash.n > 1 ? more.s : "");
	buf_release(&more);
	free(clash.volume_id);
	free(clash.kept_account);
	free(clash.kept_source);
	return rc < 0 ? rc : kinds;
}

int aws_ec2_load_file(struct fleet *f, struct ec2_mod_list *mods, const char *path, const char *account,
		      struct buf *err)
{
	struct jsonx_arena arena = JSONX_ARENA_INIT;
	struct jsonx_stream s;
	int rc = jsonx_stream_open(&s, path, &arena, stream_keys, err);
	if (!rc)
		rc = aws_ec2_load_stream(f, mods, &s, path, account, err);
	jsonx_stream_close(&s);
	jsonx_arena_release(&arena);
	return rc;
}

int aws_ec2_load_export(struct fleet *f, struct ec2_mod_list *mods, const char *text, size_t len,
			const char *origin, const char *account, struct buf *err)
{
	struct jsonx_arena arena = JSONX_ARENA_INIT;
	struct jsonx_stream s;
	jsonx_stream_init_text(&s, text, len, origin, &arena, stream_keys);
	int rc = aws_ec2_load_stream(f, mods, &s, origin, account, err);
	jsonx_stream_close(&s);
	jsonx_arena_release(&arena);
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

/* An export document as the AWS CLI's answer shape, {"KEY":[ one element a line ]}: opened
 * here, each element preceded by jsonw_lead(w, "\n"), closed by export_close. */
static void export_open(struct jsonw *w, struct buf *out, const char *key)
{
	jsonw_init(w, out, JSONW_COMPACT);
	jsonw_object(w);
	jsonw_key_any(w, key);
	jsonw_array(w);
}

/* The next element of an export's list, opened on a line of its own. */
static void export_element(struct jsonw *w)
{
	jsonw_lead(w, "\n");
	jsonw_object(w);
}

static void export_close(struct jsonw *w)
{
	jsonw_layout(w, "\n");
	jsonw_end_n(w, 2);
	jsonw_layout(w, "\n");
}

void aws_ec2_write_instances_export(struct buf *out, const struct fleet *f, const char *region)
{
	struct strmap seen = STRMAP_INIT;
	struct jsonw w;
	export_open(&w, out, "Reservations");
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct volume *v = &f->vols[i];
		if (!v->region || strcmp(v->region, region) != 0)
			continue;
		for (size_t a = 0; a < v->n_attachments; a++) {
			const struct attachment *at = &v->attachments[a];
			size_t dummy;
			if (!at->instance_id || !at->instance_type || strmap_get(&seen, at->instance_id, &dummy))
				continue;
			strmap_put(&seen, at->instance_id, n);
			n++;
			export_element(&w);
			jsonw_key_array(&w, "Instances");
			jsonw_object(&w);
			jsonw_key_str(&w, "InstanceId", at->instance_id);
			jsonw_key_str(&w, "InstanceType", at->instance_type);
			jsonw_end_n(&w, 3);
		}
	}
	export_close(&w);
	strmap_release(&seen);
}

void aws_ec2_apply_instances(struct fleet *f)
{
	if (!f->n_instances)
		return;
	struct strmap ids = STRMAP_INIT;
	for (size_t i = 0; i < f->n_instances; i++)
		strmap_put(&ids, f->instances[i].key, i);
	for (size_t i = 0; i < f->n; i++) {
		for (size_t a = 0; a < f->vols[i].n_attachments; a++) {
			struct attachment *at = &f->vols[i].attachments[a];
			size_t pos;
			if (at->instance_id && !at->instance_type && strmap_get(&ids, at->instance_id, &pos))
				at->instance_type = xstrdup(f->instances[pos].value);
		}
	}
	strmap_release(&ids);
}

void aws_ec2_write_instance_types_export(struct buf *out, const struct fleet *f)
{
	struct jsonw w;
	export_open(&w, out, "InstanceTypes");
	for (size_t i = 0; i < f->n_limits; i++) {
		export_element(&w);
		jsonw_key_str(&w, "InstanceType", f->limits[i].type);
		jsonw_key_object(&w, "EbsInfo");
		jsonw_key_object(&w, "EbsOptimizedInfo");
		jsonw_key_int(&w, "BaselineIops", (long long)f->limits[i].baseline_iops);
		jsonw_key(&w, "BaselineThroughputInMBps");
		jsonw_number_g(&w, f->limits[i].baseline_mbps, 10);
		jsonw_end_n(&w, 3);
	}
	export_close(&w);
}

/* A string member as the AWS CLI prints it: "" for a field the volume does not have. */
static void json_kv(struct jsonw *w, const char *key, const char *val)
{
	jsonw_key_any(w, key);
	jsonw_str(w, val ? val : "");
}

static void json_bool(struct jsonw *w, const char *key, int v)
{
	jsonw_key_any(w, key);
	jsonw_bool(w, v);
}

/* A volume the region's export files hold: seen in that region. */
static int exported_in(const struct volume *v, const char *region)
{
	return !v->missing && v->region && strcmp(v->region, region) == 0;
}

/* The export document `key` of the volumes region's files hold: write adds a volume's elements;
 * out is spilled after each volume. */
static void export_region(struct buf *out, const struct fleet *f, const char *region, const struct buf_spill *spill,
			  const char *key, void (*write)(struct jsonw *w, const struct volume *v))
{
	struct jsonw w;
	export_open(&w, out, key);
	for (size_t i = 0; i < f->n; i++) {
		const struct volume *v = &f->vols[i];
		if (!exported_in(v, region))
			continue;
		write(&w, v);
		buf_spill(out, spill, BUF_SPILL_AT);
	}
	export_close(&w);
	buf_spill(out, spill, 0);
}

/* A volume as an element of DescribeVolumes' Volumes. */
static void export_volume(struct jsonw *w, const struct volume *v)
{
	export_element(w);
	jsonw_key_array(w, "Attachments");
	for (size_t a = 0; a < v->n_attachments; a++) {
		jsonw_object(w);
		json_kv(w, "Device", v->attachments[a].device);
		json_kv(w, "InstanceId", v->attachments[a].instance_id);
		json_kv(w, "State", v->attachments[a].state);
		json_kv(w, "VolumeId", v->volume_id);
		jsonw_end(w);
	}
	jsonw_end(w);
	json_kv(w, "AvailabilityZone", v->availability_zone);
	if (v->create_time) {
		char ts[21];
		em_format_time(v->create_time, ts);
		json_kv(w, "CreateTime", ts);
	}
	json_bool(w, "Encrypted", v->encrypted);
	if (v->kms_key_id)
		json_kv(w, "KmsKeyId", v->kms_key_id);
	jsonw_key_int(w, "Size", (long long)v->size_gib);
	json_kv(w, "State", v->state);
	json_kv(w, "VolumeId", v->volume_id);
	if (v->iops)
		jsonw_key_int(w, "Iops", (long long)v->iops);
	if (v->n_tags) {
		jsonw_key_array(w, "Tags");
		for (size_t t = 0; t < v->n_tags; t++) {
			jsonw_object(w);
			json_kv(w, "Key", v->tags[t].key);
			json_kv(w, "Value", v->tags[t].value);
			jsonw_end(w);
		}
		jsonw_end(w);
	}
	json_kv(w, "VolumeType", ebs_type_name(v->type));
	json_bool(w, "MultiAttachEnabled", v->multi_attach);
	if (v->throughput)
		jsonw_key_int(w, "Throughput", (long long)v->throughput);
	jsonw_end(w);
}

void aws_ec2_write_volumes_export(struct buf *out, const struct fleet *f, const char *region,
				  const struct buf_spill *spill)
{
	export_region(out, f, region, spill, "Volumes", export_volume);
}

/* A modification's TargetSize, TargetIops, TargetVolumeType, TargetThroughput (or Original...),
 * each only when known, in the order the AWS CLI prints them. */
static void mod_side(struct jsonw *w, const char *side, int64_t size, int64_t iops, enum ebs_type type,
		     int64_t throughput)
{
	static const char *const names[] = {"Size", "Iops", "VolumeType", "Throughput"};
	const int64_t v[] = {size, iops, (int64_t)type, throughput};
	for (size_t i = 0; i < 4; i++) {
		if (!v[i])
			continue;
		char key[32];
		snprintf(key, sizeof key, "%s%s", side, names[i]);
		if (i == 2) {
			json_kv(w, key, ebs_type_name(type));
		} else {
			jsonw_key_any(w, key);
			jsonw_int(w, (long long)v[i]);
		}
	}
}

/* A volume's modifications as elements of DescribeVolumesModifications' VolumesModifications. */
static void export_volume_mods(struct jsonw *w, const struct volume *v)
{
	for (size_t k = 0; k < v->n_mods; k++) {
		const struct volume_mod *m = &v->mods[k];
		char ts[21];
		export_element(w);
		json_kv(w, "VolumeId", v->volume_id);
		json_kv(w, "ModificationState", volume_mod_state_name(m));
		if (m->status_message)
			json_kv(w, "StatusMessage", m->status_message);
		mod_side(w, "Target", m->target_size, m->target_iops, m->target_type, m->target_throughput);
		mod_side(w, "Original", m->original_size, m->original_iops, m->original_type, m->original_throughput);
		jsonw_key_int(w, "Progress", (long long)m->progress);
		em_format_time(m->start_time, ts);
		json_kv(w, "StartTime", ts);
		if (m->end_time) {
			em_format_time(m->end_time, ts);
			json_kv(w, "EndTime", ts);
		}
		jsonw_end(w);
	}
}

void aws_ec2_write_modifications_export(struct buf *out, const struct fleet *f, const char *region,
					const struct buf_spill *spill)
{
	export_region(out, f, region, spill, "VolumesModifications", export_volume_mods);
}
