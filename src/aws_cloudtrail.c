/*
 * aws_cloudtrail.c - ModifyVolume history from CloudTrail's event history (LookupEvents).
 *
 * Entry points: aws_cloudtrail_parse (an API answer or an `aws cloudtrail lookup-events`
 * export), aws_cloudtrail_load_export (the CloudTrail documents of an --from-aws-json file onto
 * the fleet), aws_cloudtrail_lookup_modify_volume (live, all pages), aws_cloudtrail_attach
 * (start times onto the fleet's volumes), trail_events_release.
 *
 * Invariants:
 *   - Both the answer and the CloudTrailEvent document embedded in it as a string are untrusted:
 *     every field read is type-checked (a wrong type is an error naming Events[I].FIELD, never a
 *     silent skip), times lie within 1970..9999, volume ids look like EC2's (vol-HEX).
 *   - Only successful calls count as modifications (an event with errorCode is EC2's refusal).
 *   - The live read never exceeds CLOUDTRAIL_RATE_PER_S calls per second per region: the AWS
 *     client's rate limiter for "cloudtrail:REGION" is set to it with a burst of one, and its
 *     retry policy absorbs ThrottlingException (the user sees one only if every retry failed).
 *   - Pagination ends on an answer without NextToken; its pages go through the page guard
 *     (paging.h): a token received before, or more than MAX_PAGES pages, is an error, not a loop.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_cloudtrail.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/paging.h"

#define TARGET "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.LookupEvents"
#define MAX_TIME 253402300799.0 /* 9999-12-31T23:59:59Z */
#define MAX_PAGES 100000        /* 5 million events: far beyond any day of ModifyVolume calls */

void trail_events_release(struct trail_events *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].volume_id);
		free(e->v[i].event_id);
		free(e->v[i].region);
		free(e->v[i].principal);
	}
	free(e->v);
	memset(e, 0, sizeof *e);
}

/* EventTime: epoch seconds (JSON 1.1 timestamps) or RFC 3339 (the CLI's output). */
static int event_time(const cJSON *ev, const char *key, time_t *out, int *present, const char *origin,
		      const char *path, struct buf *err)
{
	const cJSON *t = jsonx_get(ev, key);
	*present = 0;
	if (!t || cJSON_IsNull(t))
		return 0;
	if (cJSON_IsNumber(t)) {
		double d = t->valuedouble;
		if (!isfinite(d) || d < 0 || d > MAX_TIME)
			return em_err(err, EM_EINPUT, "%s: %s.%s: %g is not a time between 1970 and 9999", origin, path,
				      key, d);
		*out = (time_t)d;
	} else if (cJSON_IsString(t)) {
		if (em_parse_time(t->valuestring, out) || *out < 0 || (double)*out > MAX_TIME)
			return em_err(err, EM_EINPUT, "%s: %s.%s: '%.64s' is not an RFC 3339 time", origin, path, key,
				      t->valuestring);
	} else {
		return em_err(err, EM_EINPUT, "%s: %s.%s: must be a number or a string, got %s", origin, path, key,
			      jsonx_type_name(t));
	}
	*present = 1;
	return 0;
}

/* The embedded CloudTrailEvent document: volume id, region, principal, errorCode, eventTime. */
struct detail {
	const char *volume_id, *region, *principal, *error_code, *event_name, *source;
	time_t time;
	int has_time;
};

static int read_detail(const cJSON *d, struct detail *out, const char *origin, const char *path, struct buf *err)
{
	if (!cJSON_IsObject(d))
		return em_err(err, EM_EINPUT, "%s: %s: must be a JSON object, got %s", origin, path, jsonx_type_name(d));
	const cJSON *rp = jsonx_get(d, "requestParameters");
	if (rp && !cJSON_IsNull(rp) && !cJSON_IsObject(rp))
		return em_err(err, EM_EINPUT, "%s: %s.requestParameters: must be an object, got %s", origin, path,
			      jsonx_type_name(rp));
	const cJSON *mvr = jsonx_get(rp, "ModifyVolumeRequest");
	if (mvr && !cJSON_IsNull(mvr) && !cJSON_IsObject(mvr))
		return em_err(err, EM_EINPUT, "%s: %s.requestParameters.ModifyVolumeRequest: must be an object, got %s",
			      origin, path, jsonx_type_name(mvr));
	struct buf sub = BUF_INIT;
	buf_addf(&sub, "%s.requestParameters.ModifyVolumeRequest", path);
	int rc = jsonx_want_str(mvr, "VolumeId", &out->volume_id, origin, sub.s, err);
	buf_release(&sub);
	const cJSON *who = jsonx_get(d, "userIdentity");
	if (!rc && who && !cJSON_IsNull(who) && !cJSON_IsObject(who))
		rc = em_err(err, EM_EINPUT, "%s: %s.userIdentity: must be an object, got %s", origin, path,
			    jsonx_type_name(who));
	if (!rc) {
		struct buf wp = BUF_INIT;
		buf_addf(&wp, "%s.userIdentity", path);
		rc = jsonx_want_str(who, "arn", &out->principal, origin, wp.s, err);
		buf_release(&wp);
	}
	if (!rc)
		rc = jsonx_want_str(d, "awsRegion", &out->region, origin, path, err);
	if (!rc)
		rc = jsonx_want_str(d, "errorCode", &out->error_code, origin, path, err);
	if (!rc)
		rc = jsonx_want_str(d, "eventName", &out->event_name, origin, path, err);
	if (!rc)
		rc = jsonx_want_str(d, "eventSource", &out->source, origin, path, err);
	if (!rc)
		rc = event_time(d, "eventTime", &out->time, &out->has_time, origin, path, err);
	return rc;
}

/* The volume named in Resources[] (ResourceType AWS::EC2::Volume), when the request parameters
 * do not say. */
static int resource_volume(const cJSON *ev, const char **out, const char *origin, const char *path, struct buf *err)
{
	const cJSON *res;
	*out = NULL;
	if (jsonx_want_array(ev, "Resources", &res, origin, path, err))
		return EM_EINPUT;
	const cJSON *r;
	int k = 0;
	struct buf rp = BUF_INIT;
	int rc = 0;
	cJSON_ArrayForEach(r, res)
	{
		buf_reset(&rp);
		buf_addf(&rp, "%s.Resources[%d]", path, k++);
		if (!cJSON_IsObject(r)) {
			rc = em_err(err, EM_EINPUT, "%s: %s: must be an object, got %s", origin, rp.s, jsonx_type_name(r));
			break;
		}
		const char *type, *name;
		if ((rc = jsonx_want_str(r, "ResourceType", &type, origin, rp.s, err)) ||
		    (rc = jsonx_want_str(r, "ResourceName", &name, origin, rp.s, err)))
			break;
		if (type && name && strcmp(type, "AWS::EC2::Volume") == 0 && !*out)
			*out = name;
	}
	buf_release(&rp);
	return rc;
}

static int read_event(struct trail_events *out, const cJSON *ev, const char *origin, const char *path,
		      struct buf *err)
{
	if (!cJSON_IsObject(ev))
		return em_err(err, EM_EINPUT, "%s: %s: must be an object, got %s", origin, path, jsonx_type_name(ev));
	const char *name, *id, *user, *text, *source;
	int rc;
	if ((rc = jsonx_want_str(ev, "EventName", &name, origin, path, err)) ||
	    (rc = jsonx_want_str(ev, "EventId", &id, origin, path, err)) ||
	    (rc = jsonx_want_str(ev, "Username", &user, origin, path, err)) ||
	    (rc = jsonx_want_str(ev, "EventSource", &source, origin, path, err)) ||
	    (rc = jsonx_want_str(ev, "CloudTrailEvent", &text, origin, path, err)))
		return rc;
	time_t when = 0;
	int has_time;
	if ((rc = event_time(ev, "EventTime", &when, &has_time, origin, path, err)))
		return rc;
	struct detail d;
	memset(&d, 0, sizeof d);
	cJSON *doc = NULL;
	if (text) {
		struct buf dp = BUF_INIT;
		buf_addf(&dp, "%s: %s.CloudTrailEvent", origin, path);
		doc = jsonx_parse(text, strlen(text), dp.s, err);
		if (!doc)
			rc = EM_EINPUT;
		buf_reset(&dp);
		buf_addf(&dp, "%s.CloudTrailEvent", path);
		if (!rc)
			rc = read_detail(doc, &d, origin, dp.s, err);
		buf_release(&dp);
	}
	if (!name)
		name = d.event_name;
	if (!source)
		source = d.source;
	/* Only EC2's ModifyVolume (an export may hold any event; another service could have an
	 * action of the same name). */
	if (rc || !name || strcmp(name, "ModifyVolume") != 0 || (source && strcmp(source, "ec2.amazonaws.com") != 0)) {
		cJSON_Delete(doc);
		return rc;
	}
	if (!has_time && d.has_time) {
		when = d.time;
		has_time = 1;
	}
	const char *vid = d.volume_id;
	if (!vid)
		rc = resource_volume(ev, &vid, origin, path, err);
	if (!rc && !has_time)
		rc = em_err(err, EM_EINPUT, "%s: %s: a ModifyVolume event without EventTime", origin, path);
	if (!rc && vid && !volume_id_ok(vid))
		rc = em_err(err, EM_EINPUT, "%s: %s: '%.64s' is not an EBS volume id", origin, path, vid);
	if (!rc && !vid && !d.error_code)
		rc = em_err(err, EM_EINPUT, "%s: %s: a successful ModifyVolume event names no volume", origin, path);
	if (!rc && vid) {
		if (out->n == out->alloc) {
			out->alloc = out->alloc ? 2 * out->alloc : 16;
			out->v = xrealloc(out->v, out->alloc * sizeof *out->v);
		}
		struct trail_event *e = &out->v[out->n++];
		e->volume_id = xstrdup(vid);
		e->event_id = xstrdup(id);
		e->region = xstrdup(d.region);
		e->principal = xstrdup(d.principal ? d.principal : user);
		e->time = when;
		e->failed = d.error_code != NULL;
	}
	cJSON_Delete(doc);
	return rc;
}

static int parse_doc(struct trail_events *out, const cJSON *root, const char *origin, const char *doc,
		     char **next_token, struct buf *err)
{
	if (!cJSON_IsObject(root))
		return em_err(err, EM_EINPUT, "%s: %snot a LookupEvents answer: expected {\"Events\": [...]}", origin, doc);
	const cJSON *events;
	const char *token;
	struct buf path = BUF_INIT;
	buf_addf(&path, "%sEvents", doc);
	int rc = jsonx_want_array(root, "Events", &events, origin, doc, err);
	if (!rc && !events)
		rc = em_err(err, EM_EINPUT, "%s: %snot a LookupEvents answer: expected {\"Events\": [...]}", origin, doc);
	if (!rc)
		rc = jsonx_want_str(root, "NextToken", &token, origin, doc, err);
	if (!rc && next_token) {
		free(*next_token);
		*next_token = xstrdup(token);
	}
	const cJSON *ev;
	int i = 0;
	if (!rc) {
		cJSON_ArrayForEach(ev, events)
		{
			buf_reset(&path);
			buf_addf(&path, "%sEvents[%d]", doc, i++);
			if ((rc = read_event(out, ev, origin, path.s, err)))
				break;
		}
	}
	buf_release(&path);
	return rc;
}

int aws_cloudtrail_parse(struct trail_events *out, const char *text, size_t len, const char *origin,
			 char **next_token, struct buf *err)
{
	struct jsonx_docs d;
	jsonx_docs_init(&d, text, len, origin, NULL);
	cJSON *root;
	int rc;
	if (next_token)
		*next_token = NULL;
	while ((rc = jsonx_docs_next(&d, &root, err)) > 0) {
		char doc[40] = "";
		if (d.count > 1)
			snprintf(doc, sizeof doc, "document %zu: ", d.count);
		int r = parse_doc(out, root, origin, doc, next_token, err);
		cJSON_Delete(root);
		if (r) {
			rc = r;
			break;
		}
	}
	if (rc && next_token) {
		free(*next_token);
		*next_token = NULL;
	}
	return rc;
}

int aws_cloudtrail_load_export(struct fleet *f, const char *text, size_t len, const char *origin, struct buf *err)
{
	struct trail_events ev;
	memset(&ev, 0, sizeof ev);
	struct jsonx_docs d;
	jsonx_docs_init(&d, text, len, origin, NULL);
	cJSON *root;
	int rc;
	while ((rc = jsonx_docs_next(&d, &root, err)) > 0) {
		char doc[40] = "";
		if (d.count > 1)
			snprintf(doc, sizeof doc, "document %zu: ", d.count);
		int r = jsonx_get(root, "Events") ? parse_doc(&ev, root, origin, doc, NULL, err) : 0;
		cJSON_Delete(root);
		if (r) {
			rc = r;
			break;
		}
	}
	if (!rc) {
		aws_cloudtrail_attach(f, &ev, NULL);
		/* the regions the export speaks for: those its events name (awsRegion) */
		for (size_t i = 0; i < f->n; i++)
			for (size_t k = 0; k < ev.n && f->vols[i].history != HISTORY_CLOUDTRAIL; k++)
				if (ev.v[k].region && f->vols[i].region && strcmp(ev.v[k].region, f->vols[i].region) == 0)
					f->vols[i].history = HISTORY_CLOUDTRAIL;
	}
	trail_events_release(&ev);
	return rc;
}

/* Appends a page's Events[] items (as received) to an export being built. */
/* Each event of an answer page as an element of the saved document's "Events", one a line. */
static void save_events(struct jsonw *save, const char *body, size_t len)
{
	cJSON *j = cJSON_ParseWithLength(body, len);
	const cJSON *ev;
	cJSON_ArrayForEach(ev, jsonx_get(j, "Events"))
	{
		char *s = cJSON_PrintUnformatted(ev);
		if (!s)
			continue;
		jsonw_lead(save, "\n");
		jsonw_raw(save, s, strlen(s)); /* cJSON's own compact encoding of the event as received */
		free(s);
	}
	cJSON_Delete(j);
}

/* The LookupEvents request: ModifyVolume events between start and end, 50 a page. */
static void lookup_body(struct buf *b, time_t start, time_t end, const char *next)
{
	struct jsonw w;
	jsonw_init(&w, b, JSONW_COMPACT);
	jsonw_object(&w);
	jsonw_key_array(&w, "LookupAttributes");
	jsonw_object(&w);
	jsonw_key_str(&w, "AttributeKey", "EventName");
	jsonw_key_str(&w, "AttributeValue", "ModifyVolume");
	jsonw_end_n(&w, 2);
	jsonw_key_int(&w, "StartTime", (long long)start);
	jsonw_key_int(&w, "EndTime", (long long)end);
	jsonw_key_int(&w, "MaxResults", 50);
	if (next)
		jsonw_key_str(&w, "NextToken", next);
	jsonw_end(&w);
}

int aws_cloudtrail_lookup_modify_volume(struct aws_client *c, const char *region, time_t start, time_t end,
					struct trail_events *out, struct buf *save, struct buf *err)
{
	char key[96];
	aws_client_rate_key(c, key, sizeof key, "cloudtrail", region);
	http_client_set_rate(&c->http, key, CLOUDTRAIL_RATE_PER_S, 1);
	struct http_response resp;
	http_response_init(&resp);
	struct buf body = BUF_INIT, origin = BUF_INIT;
	char *next = NULL;
	int rc = 0;
	struct jsonw sw;
	if (save) {
		jsonw_init(&sw, save, JSONW_COMPACT);
		jsonw_object(&sw);
		jsonw_key(&sw, "Events");
		jsonw_array(&sw);
	}
	struct page_guard guard;
	page_guard_init(&guard, "NextToken", MAX_PAGES, "cloudtrail LookupEvents in %s", region);
	for (int page = 1;; page++) {
		buf_reset(&body);
		lookup_body(&body, start, end, next);
		rc = aws_json(c, AWS_SERVICE_CLOUDTRAIL, region, TARGET, "application/x-amz-json-1.1", body.s, &resp, NULL,
			      err);
		if (rc)
			break;
		buf_reset(&origin);
		buf_addf(&origin, "cloudtrail LookupEvents in %s (page %d)", region, page);
		char *following = NULL;
		rc = aws_cloudtrail_parse(out, resp.body.s, resp.body.len, origin.s, &following, err);
		if (rc) {
			rc = EM_ESERVER;
			break;
		}
		if (save)
			save_events(&sw, resp.body.s, resp.body.len);
		free(next);
		next = following;
		if ((rc = page_guard_next(&guard, next, err)) <= 0)
			break;
	}
	rc = rc < 0 ? rc : 0;
	page_guard_release(&guard);
	if (save) {
		jsonw_layout(&sw, "\n");
		jsonw_end(&sw);
		jsonw_end(&sw);
		jsonw_layout(&sw, "\n");
	}
	free(next);
	buf_release(&body);
	buf_release(&origin);
	http_response_release(&resp);
	return rc;
}

size_t aws_cloudtrail_attach(struct fleet *f, const struct trail_events *e, const char *region)
{
	size_t named = 0;
	for (size_t i = 0; i < e->n; i++) {
		const struct trail_event *t = &e->v[i];
		struct volume *v = fleet_find(f, t->volume_id);
		if (!v || (region && (!v->region || strcmp(v->region, region) != 0)))
			continue;
		named++;
		if (!t->failed)
			volume_add_trail_start(v, t->time);
	}
	return named;
}
