/*
 * aws_ec2.c - EC2 volume data into struct volume: the volume record both readers fill, and the
 * live Query API with its XML answers. The AWS CLI's JSON exports (read and written) are
 * aws_ec2_export.c.
 *
 * Entry points: the live Query API reads (aws_ec2_describe_*, aws_ec2_modify_volume,
 * aws_ec2_instance_types, aws_ec2_instance_type_limits) and aws_ec2_parse_page, which parses
 * one of their answer bodies without a client; ec2_mod_list_release; for aws_ec2_export.c
 * (aws_ec2_internal.h): aws_ec2_add_volume and aws_ec2_mod_list_push, the one way a record from either
 * source enters the fleet or the modification list.
 *
 * Invariants: a volume enters the fleet only with a VolumeId, a valid AZ, a positive integer
 * Size and a known VolumeType (aws_ec2_add_volume, whichever reader filled the record); anything
 * else is bad input naming the origin and the record. The same volume read twice must agree on
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
#include "aws_ec2_internal.h"

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

/* Fields that identify the volume's configuration; two sources must agree on them. */
static int same_config(const struct volume *a, const struct volume *b)
{
	return a->size_gib == b->size_gib && a->type == b->type && a->iops == b->iops &&
	       a->throughput == b->throughput && strcmp(a->availability_zone, b->availability_zone) == 0;
}

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
int aws_ec2_add_volume(struct fleet *f, const struct ec2_vol_rec *rec, const char *origin, const char *path,
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

/* Appends a modification of volume_id to l, which takes volume_id and m's strings. */
void aws_ec2_mod_list_push(struct ec2_mod_list *l, char *volume_id, const struct volume_mod *m, const char *origin)
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
			x->rc = aws_ec2_add_volume(x->fleet, &x->rec, x->origin, path, x->account, x->err);
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
			aws_ec2_mod_list_push(x->mods, x->mod_volume, &x->mod, x->origin);
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
