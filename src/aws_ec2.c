/*
 * aws_ec2.c - EC2 volume data into struct volume.
 *
 * Entry points: aws_ec2_load_export (AWS CLI JSON: DescribeVolumes / DescribeVolumesModifications
 * output, PascalCase), aws_ec2_attach_mods; the live Query API reads (aws_ec2_describe_*, ...)
 * and aws_ec2_parse_page, which parses one of their answer bodies without a client.
 *
 * Invariants: a volume enters the fleet only with a VolumeId, a valid AZ, a positive integer
 * Size and a known VolumeType; anything else is bad input naming the file and JSON path, and a
 * field of the wrong type says so instead of passing for absent. Every document of an export
 * is read (`aws ... >> all.json`). The same volume in two exports must agree on
 * type/size/iops/throughput/AZ (exports of one account taken at different times may
 * legitimately differ in state and attachments: the first record is kept; a different account
 * label is a notice).
 * The XML readers decode leaves only on the documented element paths and ignore every other
 * shape; nested records (attachments, tags) are written only under the <item> that created them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <expat.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/workpool.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/paging.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/saved_accounts.h"

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
	const char *s;
	*out = 0;
	int rc = jsonx_want_str(o, key, &s, origin, path, err);
	if (rc || !s)
		return rc;
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

/* A copy of s[0, n) at *at (then moved past it). */
static char *block_str(char **at, const char *s, size_t n)
{
	char *p = *at;
	memcpy(p, s, n);
	p[n] = '\0';
	*at = p + n + 1;
	return p;
}

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
	size_t region_len, location_len;
	if (volume_az_prefixes(rec->az, &region_len, &location_len))
		return em_err(err, EM_EINPUT, "%s: %s.AvailabilityZone: '%s' of volume '%s' is not an availability zone name",
			      origin, path, rec->az, id);
	int rc = 0;
	if (!rec->has_size)
		rc = em_err(err, EM_EINPUT, "%s: %s (volume '%s'): volume has no Size", origin, path, id);
	tmp.type = ebs_type_parse(rec->type);
	if (!rc && tmp.type == EBS_UNKNOWN)
		rc = em_err(err, EM_EINPUT, "%s: %s (volume '%s').VolumeType: unknown volume type '%s'", origin, path, id,
			    rec->type ? rec->type : "(missing)");
	if (rc)
		return rc;
	tmp.size_gib = rec->size;
	tmp.iops = rec->iops;
	tmp.throughput = rec->throughput;
	tmp.availability_zone = (char *)rec->az;
	struct fleet_slot slot;
	struct volume *v = fleet_find_slot(f, id, &slot);
	if (v) {
		if (!same_config(v, &tmp))
			return em_err(err, EM_EINPUT,
				      "%s: %s: volume '%s' conflicts with '%s' (size/type/iops/throughput/zone differ)",
				      origin, path, id, v->source);
		return 0; /* the same volume again (overlapping exports): keep the first record */
	}
	/* every string and both arrays in one allocation: the arrays first (malloc's alignment),
	 * then the strings */
	const char *state = rec->state ? rec->state : "unknown";
	size_t size = rec->n_atts * sizeof(struct attachment) + rec->n_tags * sizeof(struct kv);
	size += strlen(id) + 1 + region_len + 1 + location_len + 1 + strlen(rec->az) + 1 + strlen(state) + 1 +
		strlen(origin) + 1;
	size += account ? strlen(account) + 1 : 0;
	size += rec->kms_key_id ? strlen(rec->kms_key_id) + 1 : 0;
	for (size_t i = 0; i < rec->n_atts; i++) {
		const struct attachment *a = &rec->atts[i];
		size += a->instance_id ? strlen(a->instance_id) + 1 : 0;
		size += a->device ? strlen(a->device) + 1 : 0;
		size += a->state ? strlen(a->state) + 1 : 0;
	}
	for (size_t i = 0; i < rec->n_tags; i++)
		size += (rec->tags[i].key ? strlen(rec->tags[i].key) + 1 : 0) +
			(rec->tags[i].value ? strlen(rec->tags[i].value) : 0) + 1;
	char *block = xmalloc(size), *at = block;
	struct attachment *atts = rec->n_atts ? (struct attachment *)(void *)at : NULL;
	at += rec->n_atts * sizeof(struct attachment);
	struct kv *tags = rec->n_tags ? (struct kv *)(void *)at : NULL;
	at += rec->n_tags * sizeof(struct kv);
	char *vid = block_str(&at, id, strlen(id));
	v = fleet_add_found(f, &slot, vid);
	v->strings = block;
	v->strings_size = size;
	v->region = block_str(&at, rec->az, region_len);
	v->location = block_str(&at, rec->az, location_len);
	v->availability_zone = block_str(&at, rec->az, strlen(rec->az));
	v->size_gib = rec->size;
	v->type = tmp.type;
	v->iops = rec->iops;
	v->throughput = rec->throughput;
	v->create_time = rec->create_time;
	v->account = account ? block_str(&at, account, strlen(account)) : NULL;
	v->state = block_str(&at, state, strlen(state));
	v->encrypted = rec->encrypted;
	v->kms_key_id = rec->kms_key_id ? block_str(&at, rec->kms_key_id, strlen(rec->kms_key_id)) : NULL;
	v->multi_attach = rec->multi_attach;
	v->source = block_str(&at, origin, strlen(origin));
	if (rec->n_atts) {
		v->attachments = atts;
		for (size_t i = 0; i < rec->n_atts; i++) {
			const struct attachment *a = &rec->atts[i];
			atts[i].instance_id = a->instance_id ? block_str(&at, a->instance_id, strlen(a->instance_id)) : NULL;
			atts[i].device = a->device ? block_str(&at, a->device, strlen(a->device)) : NULL;
			atts[i].state = a->state ? block_str(&at, a->state, strlen(a->state)) : NULL;
			atts[i].instance_type = NULL;
		}
		v->n_attachments = rec->n_atts;
	}
	if (rec->n_tags) {
		v->tags = tags;
		for (size_t i = 0; i < rec->n_tags; i++) {
			const char *value = rec->tags[i].value ? rec->tags[i].value : "";
			const char *key = rec->tags[i].key; /* an XML <item> may lack its <key> */
			tags[i].key = key ? block_str(&at, key, strlen(key)) : NULL;
			tags[i].value = block_str(&at, value, strlen(value));
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
		rc = ec2_add_volume(f, &rec, origin, path, account, err);
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

/* 0 or ec2_add_volume's error: the element was read; FAST_DECLINE: it was not. */
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
	return ec2_add_volume(f, &rec, origin, path, account, err);
}

/* Appends a modification of volume_id to l, which takes volume_id and m's strings. */
static void mod_list_push(struct ec2_mod_list *l, char *volume_id, const struct volume_mod *m, const char *origin)
{
	if (l->n >= l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 64;
		l->volume_ids = xrealloc(l->volume_ids, l->alloc * sizeof *l->volume_ids);
		l->mods = xrealloc(l->mods, l->alloc * sizeof *l->mods);
		l->origins = xrealloc(l->origins, l->alloc * sizeof *l->origins);
	}
	l->volume_ids[l->n] = volume_id;
	l->mods[l->n] = *m;
	l->origins[l->n] = xstrdup(origin);
	l->n++;
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
	mod_list_push(l, xstrdup(id), &m, origin);
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

/* ---- live EC2 Query API ---- */

#define EC2_VERSION "2016-11-15"
#define MAX_DEPTH 12

/* Streaming parse state for DescribeVolumes / DescribeVolumesModifications / DescribeInstances
 * pages. Element names are tracked on a small stack; text is collected for leaves only. */
struct ec2_sax {
	const char *names[MAX_DEPTH];
	char name_store[MAX_DEPTH][40];
	int depth;
	struct buf text;
	/* DescribeVolumes */
	struct ec2_vol_rec rec;
	struct attachment *atts;
	size_t n_atts, alloc_atts;
	struct kv *tags;
	size_t n_tags, alloc_tags;
	char *next_token;
	int rc;
	struct fleet *fleet;
	const char *origin, *account;
	struct buf origin_store; /* origin when sax_init_region made it */
	struct buf *err;
	size_t n_items;
	/* DescribeVolumesModifications */
	struct ec2_mod_list *mods;
	struct volume_mod mod;
	char *mod_volume;
	/* DescribeInstances */
	char *inst_id, *inst_type;
	struct strmap *types;       /* instance id -> index into type_names */
	char ***type_names;
	size_t *n_type_names;
};

static char *dup_text(struct ec2_sax *x)
{
	return xstrdup(x->text.s);
}

/* The element's text replacing old (freed): a field sent twice keeps its last value. */
static char *replace_text(struct ec2_sax *x, const char *old)
{
	free((char *)old);
	return dup_text(x);
}

/* names[i] is "item" (the path is at least i+1 deep). */
static int is_item(const struct ec2_sax *x, int i)
{
	return x->depth > i && i < MAX_DEPTH && strcmp(x->names[i], "item") == 0;
}

static void XMLCALL sax_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
	struct ec2_sax *x = ud;
	if (x->depth < MAX_DEPTH) {
		/* once per element of every page: a bounded copy, not snprintf */
		size_t n = strnlen(name, sizeof x->name_store[0] - 1);
		memcpy(x->name_store[x->depth], name, n);
		x->name_store[x->depth][n] = '\0';
		x->names[x->depth] = x->name_store[x->depth];
	}
	x->depth++;
	buf_reset(&x->text);
}

static void XMLCALL sax_text(void *ud, const XML_Char *s, int len)
{
	struct ec2_sax *x = ud;
	buf_add(&x->text, s, (size_t)len);
}

/* A paged answer's nextToken (DescribeResponse/nextToken, depth 2) into x->next_token; NULL
 * when it is empty. Every other element is left to the caller's handler. */
static void take_next_token(struct ec2_sax *x, const XML_Char *name)
{
	if (x->depth == 2 && strcmp(name, "nextToken") == 0) {
		free(x->next_token);
		x->next_token = x->text.len ? dup_text(x) : NULL;
	}
}

static void vol_rec_reset(struct ec2_sax *x)
{
	for (size_t i = 0; i < x->n_atts; i++) {
		free(x->atts[i].instance_id);
		free(x->atts[i].device);
		free(x->atts[i].state);
	}
	for (size_t i = 0; i < x->n_tags; i++) {
		free(x->tags[i].key);
		free(x->tags[i].value);
	}
	free((char *)x->rec.id);
	free((char *)x->rec.az);
	free((char *)x->rec.type);
	free((char *)x->rec.state);
	free((char *)x->rec.kms_key_id);
	x->n_atts = x->n_tags = 0;
	memset(&x->rec, 0, sizeof x->rec);
}

static int64_t text_int(struct ec2_sax *x, const char *field)
{
	int64_t v = 0;
	if (em_parse_i64(x->text.s, &v) && !x->rc)
		x->rc = em_err(x->err, EM_EINPUT, "%s: %s of volume '%s': '%s' is not an integer", x->origin, field,
			       x->rec.id ? x->rec.id : "?", x->text.s);
	return v;
}

static void XMLCALL vol_end(void *ud, const XML_Char *name)
{
	struct ec2_sax *x = ud;
	/* depth counts the element being closed. Leaves are read only on the documented paths
	 * (volumeSet/item/F, volumeSet/item/{attachmentSet,tagSet}/item/F): any other shape is
	 * ignored, and an attachment or tag field is written only below the <item> whose start
	 * appended its slot (vol_start), so the array is never indexed empty or stale. */
	if (x->depth == 4 && strcmp(x->names[1], "volumeSet") == 0 && is_item(x, 2)) {
		const char *f = x->names[3];
		if (strcmp(f, "volumeId") == 0) x->rec.id = replace_text(x, x->rec.id);
		else if (strcmp(f, "availabilityZone") == 0) x->rec.az = replace_text(x, x->rec.az);
		else if (strcmp(f, "volumeType") == 0) x->rec.type = replace_text(x, x->rec.type);
		else if (strcmp(f, "status") == 0) x->rec.state = replace_text(x, x->rec.state);
		else if (strcmp(f, "kmsKeyId") == 0) x->rec.kms_key_id = replace_text(x, x->rec.kms_key_id);
		else if (strcmp(f, "size") == 0) { x->rec.size = text_int(x, "size"); x->rec.has_size = 1; }
		else if (strcmp(f, "iops") == 0) x->rec.iops = text_int(x, "iops");
		else if (strcmp(f, "throughput") == 0) x->rec.throughput = text_int(x, "throughput");
		else if (strcmp(f, "encrypted") == 0) x->rec.encrypted = strcmp(x->text.s, "true") == 0;
		else if (strcmp(f, "multiAttachEnabled") == 0) x->rec.multi_attach = strcmp(x->text.s, "true") == 0;
		else if (strcmp(f, "createTime") == 0) em_parse_time(x->text.s, &x->rec.create_time);
	} else if (x->depth == 6 && strcmp(x->names[1], "volumeSet") == 0 && is_item(x, 2) &&
		   strcmp(x->names[3], "attachmentSet") == 0 && is_item(x, 4) && x->n_atts > 0) {
		struct attachment *a = &x->atts[x->n_atts - 1];
		const char *f = x->names[5];
		if (strcmp(f, "instanceId") == 0) a->instance_id = replace_text(x, a->instance_id);
		else if (strcmp(f, "device") == 0) a->device = replace_text(x, a->device);
		else if (strcmp(f, "status") == 0) a->state = replace_text(x, a->state);
	} else if (x->depth == 6 && strcmp(x->names[1], "volumeSet") == 0 && is_item(x, 2) &&
		   strcmp(x->names[3], "tagSet") == 0 && is_item(x, 4) && x->n_tags > 0) {
		struct kv *t = &x->tags[x->n_tags - 1];
		if (strcmp(x->names[5], "key") == 0) t->key = replace_text(x, t->key);
		else if (strcmp(x->names[5], "value") == 0) t->value = replace_text(x, t->value);
	} else if (x->depth == 3 && strcmp(x->names[1], "volumeSet") == 0 && strcmp(name, "item") == 0) {
		if (!x->rc) {
			char path[64];
			snprintf(path, sizeof path, "volumeSet item %zu", x->n_items);
			x->rec.atts = x->atts;
			x->rec.n_atts = x->n_atts;
			x->rec.tags = x->tags;
			x->rec.n_tags = x->n_tags;
			x->rc = ec2_add_volume(x->fleet, &x->rec, x->origin, path, x->account, x->err);
		}
		x->n_items++;
		vol_rec_reset(x);
	} else {
		take_next_token(x, name);
	}
	x->depth--;
	buf_reset(&x->text);
}

static void XMLCALL vol_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
	struct ec2_sax *x = ud;
	sax_start(ud, name, atts);
	if (x->depth == 5 && strcmp(name, "item") == 0 && strcmp(x->names[1], "volumeSet") == 0 && is_item(x, 2)) {
		if (strcmp(x->names[3], "attachmentSet") == 0) {
			XGROW(x->atts, x->n_atts, x->alloc_atts);
			memset(&x->atts[x->n_atts++], 0, sizeof *x->atts);
		} else if (strcmp(x->names[3], "tagSet") == 0) {
			XGROW(x->tags, x->n_tags, x->alloc_tags);
			memset(&x->tags[x->n_tags++], 0, sizeof *x->tags);
		}
	}
}

static int parse_page(struct ec2_sax *x, const struct buf *body, XML_StartElementHandler s, XML_EndElementHandler e,
		      const char *what)
{
	XML_Parser p = XML_ParserCreate(NULL);
	XML_SetUserData(p, x);
	XML_SetElementHandler(p, s, e);
	XML_SetCharacterDataHandler(p, sax_text);
	x->depth = 0;
	int ok = XML_Parse(p, body->s, (int)body->len, 1) == XML_STATUS_OK;
	if (!ok && !x->rc)
		x->rc = em_err(x->err, EM_ESERVER, "%s: %s answer is not valid XML (%s at line %lu)", x->origin, what,
			       XML_ErrorString(XML_GetErrorCode(p)), (unsigned long)XML_GetCurrentLineNumber(p));
	XML_ParserFree(p);
	return x->rc;
}

static void sax_release(struct ec2_sax *x)
{
	vol_rec_reset(x);
	free(x->atts);
	free(x->tags);
	free(x->next_token);
	buf_release(&x->text);
	volume_mod_release(&x->mod);
	free(x->mod_volume);
	free(x->inst_id);
	free(x->inst_type);
	buf_release(&x->origin_store);
}

/* x with nothing read yet, its messages naming origin (borrowed) and going to err. */
static void sax_init(struct ec2_sax *x, const char *origin, struct buf *err)
{
	memset(x, 0, sizeof *x);
	buf_init(&x->text);
	buf_init(&x->origin_store);
	x->origin = origin;
	x->err = err;
}

/* sax_init for the answers of a region's live calls: origin "ec2:REGION". */
static void sax_init_region(struct ec2_sax *x, const char *region, struct buf *err)
{
	sax_init(x, NULL, err);
	buf_addf(&x->origin_store, "ec2:%s", region);
	x->origin = x->origin_store.s;
}

/* Asks action (filter, may be NULL, after MaxResults) page after page, each answer parsed into
 * x with s and e, until one has no nextToken (a token received before, or too many pages, is
 * the page guard's error); progress (may be NULL) hears after each page. */
static int query_pages(struct aws_client *c, const char *region, const char *action, const char *max_results,
		       const char *filter, struct ec2_sax *x, XML_StartElementHandler s, XML_EndElementHandler e,
		       void (*progress)(void *ctx, const char *region, size_t n), void *pctx)
{
	struct http_response resp;
	http_response_init(&resp);
	struct page_guard guard;
	page_guard_init(&guard, "NextToken", 0, "ec2 %s in %s", action, region);
	int rc = 0;
	for (;;) {
		struct buf form = BUF_INIT;
		aws_form_add(&form, "MaxResults", max_results);
		if (filter) {
			buf_addc(&form, '&');
			buf_adds(&form, filter);
		}
		if (x->next_token)
			aws_form_add(&form, "NextToken", x->next_token);
		rc = aws_query(c, AWS_SERVICE_EC2, region, action, EC2_VERSION, form.s, &resp, NULL, x->err);
		buf_release(&form);
		if (rc)
			break;
		free(x->next_token);
		x->next_token = NULL;
		rc = parse_page(x, &resp.body, s, e, action);
		if (rc)
			break;
		if (progress)
			progress(pctx, region, x->n_items);
		rc = page_guard_next(&guard, x->next_token, x->err);
		if (rc <= 0)
			break;
	}
	page_guard_release(&guard);
	http_response_release(&resp);
	return rc < 0 ? rc : 0;
}

static int describe_volumes(struct aws_client *c, const char *region, struct fleet *f, const char *account,
			    const char *filter, void (*progress)(void *ctx, const char *region, size_t n), void *pctx,
			    struct buf *err)
{
	struct ec2_sax x;
	sax_init_region(&x, region, err);
	x.fleet = f;
	x.account = account;
	int rc = query_pages(c, region, "DescribeVolumes", "1000", filter, &x, vol_start, vol_end, progress, pctx);
	sax_release(&x);
	return rc;
}

/* One leaf f of a volumeModification (an item of DescribeVolumesModifications or the body of
 * ModifyVolume's answer), its text in x->text. */
static void mod_field(struct ec2_sax *x, const char *f)
{
	struct volume_mod *m = &x->mod;
	int64_t v = 0;
	int is_int = em_parse_i64(x->text.s, &v) == 0;
	if (strcmp(f, "volumeId") == 0) x->mod_volume = replace_text(x, x->mod_volume);
	else if (strcmp(f, "modificationState") == 0) volume_mod_set_state(m, x->text.s);
	else if (strcmp(f, "statusMessage") == 0) m->status_message = replace_text(x, m->status_message);
	else if (strcmp(f, "startTime") == 0) em_parse_time(x->text.s, &m->start_time);
	else if (strcmp(f, "endTime") == 0) em_parse_time(x->text.s, &m->end_time);
	else if (strcmp(f, "targetVolumeType") == 0) m->target_type = ebs_type_parse(x->text.s);
	else if (strcmp(f, "originalVolumeType") == 0) m->original_type = ebs_type_parse(x->text.s);
	else if (is_int && strcmp(f, "targetSize") == 0) m->target_size = v;
	else if (is_int && strcmp(f, "targetIops") == 0) m->target_iops = v;
	else if (is_int && strcmp(f, "targetThroughput") == 0) m->target_throughput = v;
	else if (is_int && strcmp(f, "originalSize") == 0) m->original_size = v;
	else if (is_int && strcmp(f, "originalIops") == 0) m->original_iops = v;
	else if (is_int && strcmp(f, "originalThroughput") == 0) m->original_throughput = v;
	else if (is_int && strcmp(f, "progress") == 0) m->progress = v;
}

static void XMLCALL mod_end(void *ud, const XML_Char *name)
{
	struct ec2_sax *x = ud;
	if (x->depth == 4 && strcmp(x->names[1], "volumeModificationSet") == 0 && is_item(x, 2)) {
		mod_field(x, x->names[3]);
	} else if (x->depth == 3 && strcmp(x->names[1], "volumeModificationSet") == 0 && strcmp(name, "item") == 0) {
		if (x->mod_volume && x->mod.state != MOD_STATE_NONE && x->mod.start_time) {
			mod_list_push(x->mods, x->mod_volume, &x->mod, x->origin);
			x->mod_volume = NULL;
			memset(&x->mod, 0, sizeof x->mod);
		} else {
			free(x->mod_volume);
			x->mod_volume = NULL;
			volume_mod_release(&x->mod);
		}
	} else {
		take_next_token(x, name);
	}
	x->depth--;
	buf_reset(&x->text);
}

static int describe_modifications(struct aws_client *c, const char *region, const char *filter,
				  struct ec2_mod_list *mods, struct buf *err)
{
	struct ec2_sax x;
	sax_init_region(&x, region, err);
	x.mods = mods;
	int rc = query_pages(c, region, "DescribeVolumesModifications", "500", filter, &x, sax_start, mod_end, NULL,
			     NULL);
	sax_release(&x);
	return rc;
}

int aws_ec2_describe_volumes(struct aws_client *c, const char *region, struct fleet *f, const char *account,
			     void (*progress)(void *ctx, const char *region, size_t n), void *pctx,
			     struct buf *err)
{
	return describe_volumes(c, region, f, account, NULL, progress, pctx, err);
}

int aws_ec2_describe_modifications(struct aws_client *c, const char *region, struct ec2_mod_list *mods,
				   struct buf *err)
{
	return describe_modifications(c, region, NULL, mods, err);
}

/* "Filter.1.Name=volume-id&Filter.1.Value.1=..&..." for ids[start..start+n) */
static void id_filter(struct buf *b, const char *const *ids, size_t start, size_t n)
{
	aws_form_add(b, "Filter.1.Name", "volume-id");
	for (size_t i = 0; i < n; i++) {
		char key[40];
		snprintf(key, sizeof key, "Filter.1.Value.%zu", i + 1);
		aws_form_add(b, key, ids[start + i]);
	}
}

int aws_ec2_describe_volumes_by_id(struct aws_client *c, const char *region, const char *const *ids, size_t n,
				   struct fleet *f, struct buf *err)
{
	int rc = 0;
	for (size_t start = 0; start < n && !rc; start += 200) {
		struct buf filter = BUF_INIT;
		id_filter(&filter, ids, start, n - start < 200 ? n - start : 200);
		rc = describe_volumes(c, region, f, NULL, filter.s, NULL, NULL, err);
		buf_release(&filter);
	}
	return rc;
}

int aws_ec2_describe_modifications_by_id(struct aws_client *c, const char *region, const char *const *ids,
					 size_t n, struct ec2_mod_list *mods, struct buf *err)
{
	int rc = 0;
	for (size_t start = 0; start < n && !rc; start += 200) {
		struct buf filter = BUF_INIT;
		id_filter(&filter, ids, start, n - start < 200 ? n - start : 200);
		rc = describe_modifications(c, region, filter.s, mods, err);
		buf_release(&filter);
	}
	return rc;
}

/* ModifyVolumeResponse/volumeModification/{...}: the same fields as a modification item. */
static void XMLCALL modify_end(void *ud, const XML_Char *name)
{
	struct ec2_sax *x = ud;
	if (x->depth == 3 && strcmp(x->names[1], "volumeModification") == 0)
		mod_field(x, x->names[2]);
	x->depth--;
	buf_reset(&x->text);
}

int aws_ec2_modify_volume(struct aws_client *c, const char *region, const char *volume_id, enum ebs_type type,
			  int64_t iops, int64_t throughput, struct volume_mod *out, char **code_out, struct buf *err)
{
	struct buf form = BUF_INIT;
	char num[32];
	aws_form_add(&form, "VolumeId", volume_id);
	aws_form_add(&form, "VolumeType", ebs_type_name(type));
	snprintf(num, sizeof num, "%lld", (long long)iops);
	aws_form_add(&form, "Iops", num);
	snprintf(num, sizeof num, "%lld", (long long)throughput);
	aws_form_add(&form, "Throughput", num);
	struct http_response resp;
	http_response_init(&resp);
	/* Exactly one attempt: a ModifyVolume whose answer was lost may have been applied, so the
	 * caller (apply) records the intent first and reconciles from DescribeVolumesModifications
	 * instead of resending. Throttling (EM_ETHROTTLED) means it was not applied. */
	int rc = aws_query_ex(c, AWS_SERVICE_EC2, region, "ModifyVolume", EC2_VERSION, form.s, 1, &resp, code_out, err);
	buf_release(&form);
	memset(out, 0, sizeof *out);
	if (!rc) {
		struct ec2_sax x;
		sax_init(&x, "ModifyVolume", err);
		rc = parse_page(&x, &resp.body, sax_start, modify_end, "ModifyVolume");
		*out = x.mod;
		memset(&x.mod, 0, sizeof x.mod);
		sax_release(&x);
	}
	http_response_release(&resp);
	return rc;
}

static void XMLCALL inst_end(void *ud, const XML_Char *name)
{
	struct ec2_sax *x = ud;
	/* DescribeInstancesResponse/reservationSet/item/instancesSet/item/{instanceId,instanceType} */
	if (x->depth == 6 && strcmp(x->names[1], "reservationSet") == 0 && strcmp(x->names[3], "instancesSet") == 0) {
		if (strcmp(name, "instanceId") == 0) {
			free(x->inst_id);
			x->inst_id = dup_text(x);
		} else if (strcmp(name, "instanceType") == 0) {
			free(x->inst_type);
			x->inst_type = dup_text(x);
		}
	} else if (x->depth == 5 && strcmp(name, "item") == 0 && strcmp(x->names[3], "instancesSet") == 0) {
		if (x->inst_id && x->inst_type) {
			size_t n = *x->n_type_names;
			*x->type_names = xrealloc(*x->type_names, (n + 1) * sizeof(char *));
			(*x->type_names)[n] = x->inst_type;
			x->inst_type = NULL;
			strmap_put(x->types, x->inst_id, n);
			(*x->n_type_names)++;
		}
		free(x->inst_id);
		free(x->inst_type);
		x->inst_id = x->inst_type = NULL;
	} else {
		take_next_token(x, name);
	}
	x->depth--;
	buf_reset(&x->text);
}

/* Only the nextToken of a paged answer: for a fetch on a pool thread, which must know whether to
 * ask again before the answer's records are parsed (in batch order, on the calling thread). */
static void XMLCALL token_end(void *ud, const XML_Char *name)
{
	struct ec2_sax *x = ud;
	take_next_token(x, name);
	x->depth--;
	buf_reset(&x->text);
}

/* Sets attachments[].instance_type of f's volumes in region (every region when NULL) from
 * types (instance id -> index into names). */
static void apply_instance_types(struct fleet *f, const char *region, const struct strmap *types, char **names)
{
	for (size_t i = 0; i < f->n; i++) {
		struct volume *v = &f->vols[i];
		if (region && (!v->region || strcmp(v->region, region) != 0))
			continue;
		for (size_t a = 0; a < v->n_attachments; a++) {
			size_t pos;
			if (v->attachments[a].instance_id && strmap_get(types, v->attachments[a].instance_id, &pos)) {
				free(v->attachments[a].instance_type);
				v->attachments[a].instance_type = xstrdup(names[pos]);
			}
		}
	}
}

/* One DescribeInstances batch of a wave (aws_ec2_instance_types): slot k's answer pages to batch
 * first_batch + k, parsed by collect_instances in batch order. */
struct instances_slot {
	struct http_response resp;
	struct buf *pages;       /* the batch's answer bodies, in order (a server may page even by id) */
	size_t n_pages, alloc_pages;
	char *code;
	int gone; /* an instance of the batch no longer exists: no types from it */
};

struct instances_job {
	const char *region;
	const char *const *ids;
	size_t n_ids;
	struct instances_slot *slots;
	struct ec2_sax *x;
};

static void instances_slot_reset(struct instances_slot *sl)
{
	for (size_t i = 0; i < sl->n_pages; i++)
		buf_release(&sl->pages[i]);
	sl->n_pages = 0;
	free(sl->code);
	sl->code = NULL;
	sl->gone = 0;
}

static int describe_instances_batch(void *ctx, size_t k, size_t batch, struct aws_client *c, struct buf *err)
{
	struct instances_job *j = ctx;
	struct instances_slot *sl = &j->slots[k];
	instances_slot_reset(sl);
	size_t start = batch * 100;
	struct buf ids = BUF_INIT;
	for (size_t i = start; i < j->n_ids && i < start + 100; i++) {
		char key[32];
		snprintf(key, sizeof key, "InstanceId.%zu", i - start + 1);
		aws_form_add(&ids, key, j->ids[i]);
	}
	/* AWS answers a call by id in one page, but a nextToken is followed as on every paged read:
	 * through the page guard, never in a loop */
	struct page_guard guard;
	page_guard_init(&guard, "NextToken", 0, "ec2 DescribeInstances in %s", j->region);
	char *token = NULL;
	int rc;
	for (;;) {
		struct buf form = BUF_INIT;
		buf_add(&form, ids.s, ids.len);
		if (token)
			aws_form_add(&form, "NextToken", token);
		rc = aws_query(c, AWS_SERVICE_EC2, j->region, "DescribeInstances", EC2_VERSION, form.s, &sl->resp,
			       &sl->code, err);
		buf_release(&form);
		if (rc)
			break;
		XGROW(sl->pages, sl->n_pages, sl->alloc_pages);
		struct buf *page = &sl->pages[sl->n_pages++];
		*page = sl->resp.body; /* the body changes hands: the next answer gets a buffer of its own */
		buf_init(&sl->resp.body);
		struct ec2_sax x;
		sax_init(&x, j->x->origin, err);
		rc = parse_page(&x, page, sax_start, token_end, "DescribeInstances");
		free(token);
		token = x.next_token;
		x.next_token = NULL;
		sax_release(&x);
		if (rc || (rc = page_guard_next(&guard, token, err)) <= 0)
			break;
	}
	free(token);
	page_guard_release(&guard);
	buf_release(&ids);
	/* A terminated instance makes the whole call fail: not fatal for an inventory. */
	sl->gone = rc == EM_ENOTFOUND || (sl->code && strcmp(sl->code, "InvalidInstanceID.NotFound") == 0);
	return sl->gone ? 0 : rc < 0 ? rc : 0;
}

static int collect_instances(void *ctx, size_t k, size_t batch)
{
	struct instances_job *j = ctx;
	(void)batch;
	if (j->slots[k].gone)
		return 0;
	int rc = 0;
	for (size_t i = 0; i < j->slots[k].n_pages && !rc; i++)
		rc = parse_page(j->x, &j->slots[k].pages[i], sax_start, inst_end, "DescribeInstances");
	return rc;
}

int aws_ec2_instance_types(struct aws_client *c, const char *region, struct fleet *f, int concurrency,
			   struct buf *err)
{
	struct strmap wanted = STRMAP_INIT, types = STRMAP_INIT;
	char **ids = NULL, **names = NULL;
	size_t n_ids = 0, alloc_ids = 0, n_names = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct volume *v = &f->vols[i];
		if (!v->region || strcmp(v->region, region) != 0)
			continue;
		for (size_t a = 0; a < v->n_attachments; a++) {
			const char *id = v->attachments[a].instance_id;
			size_t dummy;
			if (!id || strmap_get(&wanted, id, &dummy))
				continue;
			strmap_put(&wanted, id, n_ids);
			XGROW(ids, n_ids, alloc_ids);
			ids[n_ids++] = xstrdup(id);
		}
	}
	struct ec2_sax x;
	sax_init_region(&x, region, err);
	x.types = &types;
	x.type_names = &names;
	x.n_type_names = &n_names;
	/* Batches of 100 ids are asked up to `concurrency` at a time (each by its own worker client
	 * sharing c's bucket) and their answers parsed in batch order, as one after another would. */
	size_t n_batches = (n_ids + 99) / 100, width = aws_wave_width(concurrency, n_batches);
	struct instances_job j = {region, (const char *const *)ids, n_ids, xcalloc(width, sizeof *j.slots), &x};
	for (size_t k = 0; k < width; k++)
		http_response_init(&j.slots[k].resp);
	int rc = aws_client_waves(c, n_batches, width, describe_instances_batch, collect_instances, &j, err);
	for (size_t k = 0; k < width; k++) {
		http_response_release(&j.slots[k].resp);
		instances_slot_reset(&j.slots[k]);
		free(j.slots[k].pages);
	}
	free(j.slots);
	if (!rc)
		apply_instance_types(f, region, &types, names);
	sax_release(&x);
	for (size_t i = 0; i < n_ids; i++)
		free(ids[i]);
	free(ids);
	for (size_t i = 0; i < n_names; i++)
		free(names[i]);
	free(names);
	strmap_release(&wanted);
	strmap_release(&types);
	return rc;
}

/* DescribeInstanceTypesResponse/instanceTypeSet/item/{instanceType, ebsInfo/ebsOptimizedInfo/...} */
static void XMLCALL itype_end(void *ud, const XML_Char *name)
{
	struct ec2_sax *x = ud;
	if (x->depth == 4 && strcmp(x->names[1], "instanceTypeSet") == 0 && strcmp(name, "instanceType") == 0) {
		free(x->inst_type);
		x->inst_type = dup_text(x);
	} else if (x->depth == 6 && strcmp(x->names[1], "instanceTypeSet") == 0 && strcmp(x->names[4], "ebsOptimizedInfo") == 0) {
		if (strcmp(name, "baselineIops") == 0)
			x->mod.target_iops = strtoll(x->text.s, NULL, 10);
		else if (strcmp(name, "baselineThroughputInMBps") == 0) {
			/* milli-MB/s; a value no instance has (or NaN) is ignored rather than converted */
			double mbps = strtod(x->text.s, NULL);
			x->mod.progress = mbps > 0 && mbps < 1e9 ? (int64_t)(mbps * 1000.0 + 0.5) : 0;
		}
	} else if (x->depth == 3 && strcmp(x->names[1], "instanceTypeSet") == 0 && strcmp(name, "item") == 0) {
		if (x->inst_type && x->mod.target_iops > 0)
			fleet_set_instance_limit(x->fleet, x->inst_type, x->mod.target_iops, (double)x->mod.progress / 1000.0);
		free(x->inst_type);
		x->inst_type = NULL;
		x->mod.target_iops = x->mod.progress = 0;
	}
	x->depth--;
	buf_reset(&x->text);
}

int aws_ec2_instance_type_limits(struct aws_client *c, const char *region, struct fleet *f, struct buf *err)
{
	struct strmap seen = STRMAP_INIT;
	const char **types = NULL;
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct volume *v = &f->vols[i];
		if (!v->region || strcmp(v->region, region) != 0)
			continue;
		const char *cand[2] = {v->kube ? v->kube->node_instance_type : NULL,
				       v->n_attachments ? v->attachments[0].instance_type : NULL};
		for (int k = 0; k < 2; k++) {
			size_t dummy;
			if (!cand[k] || strmap_get(&seen, cand[k], &dummy) || fleet_instance_limit(f, cand[k]))
				continue;
			strmap_put(&seen, cand[k], n);
			types = xrealloc(types, (n + 1) * sizeof *types);
			types[n++] = cand[k];
		}
	}
	struct ec2_sax x;
	sax_init(&x, "DescribeInstanceTypes", err);
	x.fleet = f;
	struct http_response resp;
	http_response_init(&resp);
	int rc = 0;
	for (size_t start = 0; start < n && !rc; start += 100) {
		struct buf form = BUF_INIT;
		for (size_t i = start; i < n && i < start + 100; i++) {
			char key[32];
			snprintf(key, sizeof key, "InstanceType.%zu", i - start + 1);
			aws_form_add(&form, key, types[i]);
		}
		rc = aws_query(c, AWS_SERVICE_EC2, region, "DescribeInstanceTypes", EC2_VERSION, form.s, &resp, NULL, err);
		buf_release(&form);
		if (!rc)
			rc = parse_page(&x, &resp.body, sax_start, itype_end, "DescribeInstanceTypes");
	}
	http_response_release(&resp);
	sax_release(&x);
	free(types);
	strmap_release(&seen);
	return rc;
}

int aws_ec2_parse_page(enum ec2_page_kind kind, const char *body, size_t len, const char *origin, struct fleet *f,
		       struct ec2_mod_list *mods, char **next_token_out, struct buf *err)
{
	static const struct {
		XML_StartElementHandler start;
		XML_EndElementHandler end;
		const char *what;
	} kinds[] = {
		[EC2_PAGE_VOLUMES] = {vol_start, vol_end, "DescribeVolumes"},
		[EC2_PAGE_MODIFICATIONS] = {sax_start, mod_end, "DescribeVolumesModifications"},
		[EC2_PAGE_MODIFY_VOLUME] = {sax_start, modify_end, "ModifyVolume"},
		[EC2_PAGE_INSTANCES] = {sax_start, inst_end, "DescribeInstances"},
		[EC2_PAGE_INSTANCE_TYPES] = {sax_start, itype_end, "DescribeInstanceTypes"},
	};
	if ((size_t)kind >= sizeof kinds / sizeof kinds[0])
		return em_err(err, EM_EINPUT, "%s: unknown EC2 answer kind %d", origin, (int)kind);
	struct strmap types = STRMAP_INIT;
	char **names = NULL;
	size_t n_names = 0;
	struct ec2_sax x;
	sax_init(&x, origin, err);
	x.fleet = f;
	x.mods = mods;
	x.types = &types;
	x.type_names = &names;
	x.n_type_names = &n_names;
	struct buf page = BUF_INIT;
	buf_add(&page, body, len);
	int rc = parse_page(&x, &page, kinds[kind].start, kinds[kind].end, kinds[kind].what);
	if (!rc && kind == EC2_PAGE_INSTANCES)
		apply_instance_types(f, NULL, &types, names);
	if (next_token_out) {
		*next_token_out = x.next_token;
		x.next_token = NULL;
	}
	buf_release(&page);
	sax_release(&x);
	for (size_t i = 0; i < n_names; i++)
		free(names[i]);
	free(names);
	strmap_release(&types);
	return rc;
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
