/*
 * aws_cloudwatch.c - EBS metrics per volume from GetMetricData (JSON 1.0), reduced to the
 * planner's figures.
 *
 * Entry points: aws_cloudwatch_volume_metrics (live), aws_cloudwatch_load_export (the same
 * answers saved as files, several documents allowed), cw_reduce.
 * Invariants: query ids encode the volume's position and the metric ("v12_r"), so answers are
 * matched without trusting their order; series are aligned by timestamp; a volume with no data
 * keeps metrics.has = 0 (planning falls back to size-based rules); percentiles use the
 * nearest-rank method over the periods that have data.
 * Untrusted numbers never size an allocation: an export is kept as its points (memory in
 * proportion to the file, never to the time span it claims), a live answer fills arrays sized
 * by our own request. Every value passes check_value (finite, 0..ten times the fastest volume,
 * BurstBalance 0..100), every period is a positive multiple of 60 s, every exported timestamp
 * lies within CloudWatch's 455-day retention before now.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_cloudwatch.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ebs.h"
#include "ebsmigrate/jsonx.h"

#define MAX_QUERIES 500
#define MAX_POINTS 100800
#define MIB (1024.0 * 1024.0)

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double p99(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, dbl_cmp);
	size_t rank = (size_t)ceil(0.99 * (double)n);
	return v[rank ? rank - 1 : 0];
}

void cw_reduce(struct volume_metrics *out, const struct volume *v, int64_t period_s, const double *ops,
	       const double *bytes, size_t n, const double *burst, size_t n_burst)
{
	double *iops = xcalloc(n ? n : 1, sizeof *iops), *mibps = xcalloc(n ? n : 1, sizeof *mibps);
	size_t ni = 0, nm = 0;
	double max_i = 0, max_m = 0;
	double ceil_iops = v->type == EBS_GP2 ? (ebs_gp2_bursts(v->size_gib) ? GP2_BURST_IOPS : (double)ebs_gp2_baseline_iops(v->size_gib))
					     : (double)(v->iops ? v->iops : GP3_BASE_IOPS);
	double ceil_mibps = v->type == EBS_GP2 ? (double)ebs_gp2_peak_mibps(v->size_gib)
					      : (double)(v->throughput ? v->throughput : GP3_BASE_MIBPS);
	size_t at_i = 0, at_m = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isnan(ops[i])) {
			double x = ops[i] / (double)period_s;
			iops[ni++] = x;
			if (x > max_i)
				max_i = x;
			if (x >= 0.95 * ceil_iops)
				at_i++;
		}
		if (!isnan(bytes[i])) {
			double x = bytes[i] / (double)period_s / MIB;
			mibps[nm++] = x;
			if (x > max_m)
				max_m = x;
			if (x >= 0.95 * ceil_mibps)
				at_m++;
		}
	}
	memset(out, 0, sizeof *out);
	out->min_burst_balance = -1;
	for (size_t i = 0; i < n_burst; i++)
		if (!isnan(burst[i]) && (out->min_burst_balance < 0 || burst[i] < out->min_burst_balance))
			out->min_burst_balance = burst[i];
	out->has = ni > 0 || nm > 0;
	out->max_iops = max_i;
	out->max_mibps = max_m;
	out->share_at_iops_ceiling = ni ? (double)at_i / (double)ni : 0;
	out->share_at_tput_ceiling = nm ? (double)at_m / (double)nm : 0;
	out->p99_iops = p99(iops, ni);
	out->p99_mibps = p99(mibps, nm);
	free(iops);
	free(mibps);
}

enum { M_READ_OPS, M_WRITE_OPS, M_READ_BYTES, M_WRITE_BYTES, M_BURST, M_COUNT };
static const char *const metric_names[M_COUNT] = {"VolumeReadOps", "VolumeWriteOps", "VolumeReadBytes",
						  "VolumeWriteBytes", "BurstBalance"};
static const char metric_tags[M_COUNT + 1] = "rwRWb";

/* Per volume of the batch: series keyed by timestamp index (t - start) / period. */
struct series {
	double *v[M_COUNT];
};

static int burst_type(enum ebs_type t)
{
	return t == EBS_GP2 || t == EBS_ST1 || t == EBS_SC1;
}

static void add_query(struct buf *b, int first, size_t idx, int m, const char *vol, int64_t period)
{
	buf_addf(b, "%s{\"Id\":\"v%zu_%c\",\"MetricStat\":{\"Metric\":{\"Namespace\":\"AWS/EBS\",\"MetricName\":\"%s\","
		    "\"Dimensions\":[{\"Name\":\"VolumeId\",\"Value\":\"",
		 first ? "" : ",", idx, metric_tags[m], metric_names[m]);
	buf_add_json_escaped(b, vol);
	buf_addf(b, "\"}]},\"Period\":%lld,\"Stat\":\"%s\"},\"ReturnData\":true}", (long long)period,
		 m == M_BURST ? "Minimum" : "Sum");
}

static void save_series(struct buf *b, const char *vol, int m, int64_t period, time_t start, const double *v,
			size_t n)
{
	if (b->len && b->s[b->len - 1] == '}')
		buf_adds(b, ",\n");
	buf_addf(b, "{\"Id\":\"m%c\",\"Label\":\"", metric_tags[m]);
	buf_add_json_escaped(b, vol);
	buf_addf(b, " %s %s %lld\",\"Timestamps\":[", metric_names[m], m == M_BURST ? "Minimum" : "Sum", (long long)period);
	int first = 1;
	for (size_t k = 0; k < n; k++) {
		if (isnan(v[k]))
			continue;
		char ts[21];
		em_format_time(start + (time_t)((int64_t)k * period), ts);
		buf_addf(b, "%s\"%s\"", first ? "" : ",", ts);
		first = 0;
	}
	buf_adds(b, "],\"Values\":[");
	first = 1;
	for (size_t k = 0; k < n; k++) {
		if (isnan(v[k]))
			continue;
		buf_addf(b, "%s%.17g", first ? "" : ",", v[k]);
		first = 0;
	}
	buf_adds(b, "],\"StatusCode\":\"Complete\"}");
}

void aws_cloudwatch_export_begin(struct buf *out)
{
	buf_adds(out, "{\"MetricDataResults\":[\n");
}

void aws_cloudwatch_export_end(struct buf *out)
{
	buf_adds(out, "\n],\"Messages\":[]}\n");
}

/* Ten times the fastest EBS volume (io2 Block Express: 256,000 IOPS, 4,000 MiB/s): anything
 * above is not a measurement, and would overflow the planner's integer arithmetic. */
#define MAX_OPS_PER_S 1e7
#define MAX_BYTES_PER_S 1e11
/* CloudWatch keeps EBS data for 15 months: no series can reach further back. */
#define MAX_LOOKBACK_S ((int64_t)455 * 86400)
/* Clock skew tolerated between the machine that exported the metrics and this one. */
#define CLOCK_SKEW_S 3600

/* A value of metric m over one period: a sum of operations or bytes (0..rate limit x period)
 * or a BurstBalance percentage. code is EM_EINPUT for a file, EM_ESERVER for an API answer. */
static int check_value(int m, int64_t period, const cJSON *v, int code, const char *origin, const char *path,
		       struct buf *err)
{
	if (!cJSON_IsNumber(v))
		return em_err(err, code, "%s: %s: must be a number, got %s", origin, path, jsonx_type_name(v));
	double x = v->valuedouble;
	double max = m == M_BURST ? 100.0
		     : (double)period * (m == M_READ_OPS || m == M_WRITE_OPS ? MAX_OPS_PER_S : MAX_BYTES_PER_S);
	if (!isfinite(x) || x < 0 || x > max)
		return em_err(err, code, "%s: %s: %g is outside 0..%g (%s %s over %lld s)", origin, path, x, max,
			      metric_names[m], m == M_BURST ? "Minimum" : "Sum", (long long)period);
	return 0;
}

/* One data point of an export: volume (position in the fleet), metric, time, value; seq keeps
 * the document order among points of the same volume and time (the later one wins). */
struct cw_point {
	int64_t t;
	double value;
	uint32_t vol, metric;
	uint64_t seq;
};

static int point_cmp(const void *a, const void *b)
{
	const struct cw_point *x = a, *y = b;
	if (x->vol != y->vol)
		return x->vol < y->vol ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct cw_import {
	struct fleet *f;
	const char *origin;
	time_t lo, hi;         /* the look-back: timestamps outside are refused */
	int64_t *period;       /* per volume: the one period of all its series (0: none yet) */
	struct cw_point *pts;
	size_t n, alloc;
};

/* "VOLUME-ID METRIC STAT PERIOD" (what inventory --save writes). */
static int parse_label(const char *label, char vol[64], char metric[40], int64_t *period)
{
	char stat[16], per[24];
	int used = 0;
	if (sscanf(label, "%63s %39s %15s %23s%n", vol, metric, stat, per, &used) != 4 ||
	    label[used + strspn(label + used, " ")] != '\0' || em_parse_i64(per, period))
		return -1;
	return 0;
}

static int import_result(struct cw_import *im, const cJSON *r, const char *path, struct buf *err)
{
	const char *origin = im->origin;
	const char *label;
	const cJSON *ts, *vals;
	int rc = jsonx_want_str(r, "Label", &label, origin, path, err);
	if (rc)
		return rc;
	char vol[64], metric[40];
	int64_t period;
	if (!label || parse_label(label, vol, metric, &period))
		return em_err(err, EM_EINPUT, "%s: %s.Label: expected \"VOLUME-ID METRIC STAT PERIOD\", got '%s'", origin,
			      path, label ? label : "(missing)");
	if (period <= 0 || period % 60)
		return em_err(err, EM_EINPUT, "%s: %s.Label: period %lld is not a positive multiple of 60 seconds", origin,
			      path, (long long)period);
	if (period > MAX_LOOKBACK_S)
		return em_err(err, EM_EINPUT, "%s: %s.Label: period %lld is longer than the 455-day look-back", origin,
			      path, (long long)period);
	rc = jsonx_want_array(r, "Timestamps", &ts, origin, path, err);
	if (!rc)
		rc = jsonx_want_array(r, "Values", &vals, origin, path, err);
	if (rc)
		return rc;
	int nt = cJSON_GetArraySize(ts), nv = cJSON_GetArraySize(vals);
	if (nt != nv)
		return em_err(err, EM_EINPUT, "%s: %s: %d Timestamps but %d Values", origin, path, nt, nv);
	int m = -1;
	for (int k = 0; k < M_COUNT; k++)
		if (strcmp(metric, metric_names[k]) == 0)
			m = k;
	struct volume *v = fleet_find(im->f, vol);
	size_t vi = v ? (size_t)(v - im->f->vols) : 0;
	if (v && m >= 0) {
		if (im->period[vi] && im->period[vi] != period)
			return em_err(err, EM_EINPUT,
				      "%s: %s.Label: period %lld differs from the period %lld of another series of volume '%s'",
				      origin, path, (long long)period, (long long)im->period[vi], vol);
		im->period[vi] = period;
	}
	struct buf at = BUF_INIT;
	const cJSON *t = ts ? ts->child : NULL, *val = vals ? vals->child : NULL;
	for (int k = 0; t && val && !rc; k++, t = t->next, val = val->next) {
		time_t when;
		buf_reset(&at);
		buf_addf(&at, "%s.Timestamps[%d]", path, k);
		if (!cJSON_IsString(t)) {
			rc = em_err(err, EM_EINPUT, "%s: %s: must be a string (an RFC 3339 time), got %s", origin, at.s,
				    jsonx_type_name(t));
			break;
		}
		if (em_parse_time(t->valuestring, &when)) {
			rc = em_err(err, EM_EINPUT, "%s: %s: '%s' is not an RFC 3339 time", origin, at.s, t->valuestring);
			break;
		}
		if (when < im->lo || when > im->hi) {
			char lo[21], hi[21];
			em_format_time(im->lo, lo);
			em_format_time(im->hi - CLOCK_SKEW_S, hi);
			rc = em_err(err, EM_EINPUT,
				    "%s: %s: '%s' is outside the look-back %s..%s (CloudWatch keeps 455 days before now)",
				    origin, at.s, t->valuestring, lo, hi);
			break;
		}
		buf_reset(&at);
		buf_addf(&at, "%s.Values[%d]", path, k);
		if (m < 0) { /* a metric not used here: only its type is checked */
			if (!cJSON_IsNumber(val) || !isfinite(val->valuedouble))
				rc = em_err(err, EM_EINPUT, "%s: %s: must be a finite number, got %s", origin, at.s,
					    cJSON_IsNumber(val) ? "an infinity" : jsonx_type_name(val));
			continue;
		}
		rc = check_value(m, period, val, EM_EINPUT, origin, at.s, err);
		if (rc || !v)
			continue;
		XGROW(im->pts, im->n, im->alloc);
		im->pts[im->n] = (struct cw_point){(int64_t)when, val->valuedouble, (uint32_t)vi, (uint32_t)m, im->n};
		im->n++;
	}
	buf_release(&at);
	return rc;
}

static double sum_or_nan(double a, double b)
{
	return isnan(a) && isnan(b) ? NAN : (isnan(a) ? 0 : a) + (isnan(b) ? 0 : b);
}

/* Reduces the sorted points of one volume, pts[0..n), aligned to its period from its first. */
static int reduce_volume(struct volume *v, int64_t period, const struct cw_point *pts, size_t n)
{
	double *ops = xmalloc(n * sizeof *ops), *bytes = xmalloc(n * sizeof *bytes), *burst = xmalloc(n * sizeof *burst);
	size_t slots = 0;
	int any = 0;
	int64_t t0 = pts[0].t;
	for (size_t i = 0; i < n;) {
		int64_t slot = (pts[i].t - t0) / period;
		double val[M_COUNT];
		for (int m = 0; m < M_COUNT; m++)
			val[m] = NAN;
		for (; i < n && (pts[i].t - t0) / period == slot; i++)
			val[pts[i].metric] = pts[i].value;
		ops[slots] = sum_or_nan(val[M_READ_OPS], val[M_WRITE_OPS]);
		bytes[slots] = sum_or_nan(val[M_READ_BYTES], val[M_WRITE_BYTES]);
		burst[slots] = val[M_BURST];
		any |= !isnan(ops[slots]) || !isnan(bytes[slots]);
		slots++;
	}
	if (any) {
		cw_reduce(&v->metrics, v, period, ops, bytes, slots, burst, slots);
		v->metrics.lookback_s = ((pts[n - 1].t - t0) / period + 1) * period;
	}
	free(ops);
	free(bytes);
	free(burst);
	return any;
}

int aws_cloudwatch_load_export(struct fleet *f, const char *text, size_t len, const char *origin, struct buf *err)
{
	struct cw_import im;
	memset(&im, 0, sizeof im);
	im.f = f;
	im.origin = origin;
	time_t now = em_now();
	im.lo = now - (time_t)MAX_LOOKBACK_S;
	im.hi = now + CLOCK_SKEW_S;
	im.period = xcalloc(f->n ? f->n : 1, sizeof *im.period);
	struct jsonx_docs d;
	jsonx_docs_init(&d, text, len, origin, NULL);
	cJSON *root;
	int rc, n_metric_docs = 0;
	while ((rc = jsonx_docs_next(&d, &root, err)) > 0) {
		char doc[40] = "";
		if (d.count > 1)
			snprintf(doc, sizeof doc, "document %zu: ", d.count);
		/* Documents without MetricDataResults were read by aws_ec2_load_export. */
		const cJSON *res = jsonx_get(root, "MetricDataResults");
		int bad = 0;
		if (res && !cJSON_IsArray(res))
			bad = em_err(err, EM_EINPUT, "%s: %sMetricDataResults: must be an array, got %s", origin, doc,
				     jsonx_type_name(res));
		n_metric_docs += res != NULL;
		int idx = 0;
		const cJSON *r, *list = bad ? NULL : res;
		struct buf path = BUF_INIT;
		cJSON_ArrayForEach(r, list)
		{
			buf_reset(&path);
			buf_addf(&path, "%sMetricDataResults[%d]", doc, idx++);
			bad = import_result(&im, r, path.s, err);
			if (bad)
				break;
		}
		buf_release(&path);
		cJSON_Delete(root);
		if (bad) {
			rc = bad;
			break;
		}
	}
	if (!rc && !n_metric_docs)
		rc = em_err(err, EM_EINPUT, "%s: expected {\"MetricDataResults\": [...]}", origin);
	int given = 0;
	if (!rc && im.n) {
		qsort(im.pts, im.n, sizeof *im.pts, point_cmp);
		for (size_t a = 0, b; a < im.n; a = b) {
			for (b = a + 1; b < im.n && im.pts[b].vol == im.pts[a].vol; b++)
				;
			size_t vi = im.pts[a].vol;
			given += reduce_volume(&f->vols[vi], im.period[vi], im.pts + a, b - a);
		}
	}
	free(im.pts);
	free(im.period);
	return rc < 0 ? rc : given;
}

static int fetch_batch(struct aws_client *c, const char *region, struct fleet *f, const size_t *vols, size_t nv,
		       const struct cw_options *o, time_t start, size_t n_points, struct buf *err)
{
	struct series *s = xcalloc(nv, sizeof *s);
	for (size_t i = 0; i < nv; i++)
		for (int m = 0; m < M_COUNT; m++) {
			s[i].v[m] = xmalloc(n_points * sizeof(double));
			for (size_t k = 0; k < n_points; k++)
				s[i].v[m][k] = NAN;
		}
	char *next = NULL;
	int rc = 0;
	struct http_response resp;
	http_response_init(&resp);
	struct buf origin = BUF_INIT, path = BUF_INIT, at = BUF_INIT;
	buf_addf(&origin, "cloudwatch GetMetricData answer (region %s)", region);
	do {
		struct buf body = BUF_INIT;
		buf_adds(&body, "{\"MetricDataQueries\":[");
		int first = 1;
		for (size_t i = 0; i < nv; i++) {
			const struct volume *v = &f->vols[vols[i]];
			for (int m = 0; m < M_COUNT; m++) {
				if (m == M_BURST && !burst_type(v->type))
					continue;
				add_query(&body, first, i, m, v->volume_id, o->period_s);
				first = 0;
			}
		}
		buf_addf(&body, "],\"StartTime\":%lld,\"EndTime\":%lld,\"ScanBy\":\"TimestampAscending\"", (long long)start,
			 (long long)o->end);
		if (next) {
			buf_adds(&body, ",\"NextToken\":\"");
			buf_add_json_escaped(&body, next);
			buf_addc(&body, '"');
		}
		buf_addc(&body, '}');
		free(next);
		next = NULL;
		rc = aws_json(c, AWS_SERVICE_CLOUDWATCH, region, "GraniteServiceVersion20100801.GetMetricData",
			      "application/x-amz-json-1.0", body.s, &resp, NULL, err);
		buf_release(&body);
		if (rc)
			break;
		cJSON *j = jsonx_parse(resp.body.s, resp.body.len, origin.s, err);
		if (!j) {
			rc = EM_ESERVER;
			break;
		}
		/* The server is untrusted input too: the same value checks as an export. Points
		 * outside the asked window are dropped (CloudWatch rounds StartTime down). */
		const cJSON *r;
		int idx = 0;
		cJSON_ArrayForEach(r, jsonx_get(j, "MetricDataResults"))
		{
			const char *id = jsonx_str(r, "Id");
			size_t vi;
			char tag;
			buf_reset(&path);
			buf_addf(&path, "MetricDataResults[%d]", idx++);
			if (!id || sscanf(id, "v%zu_%c", &vi, &tag) != 2 || vi >= nv)
				continue;
			int m = (int)(strchr(metric_tags, tag) ? strchr(metric_tags, tag) - metric_tags : -1);
			if (m < 0 || m >= M_COUNT)
				continue;
			const cJSON *ts, *vals;
			if (jsonx_want_array(r, "Timestamps", &ts, origin.s, path.s, err) ||
			    jsonx_want_array(r, "Values", &vals, origin.s, path.s, err)) {
				rc = EM_ESERVER;
				break;
			}
			if (cJSON_GetArraySize(ts) != cJSON_GetArraySize(vals)) {
				rc = em_err(err, EM_ESERVER, "%s: %s: %d Timestamps but %d Values", origin.s, path.s,
					    cJSON_GetArraySize(ts), cJSON_GetArraySize(vals));
				break;
			}
			const cJSON *t = ts ? ts->child : NULL, *val = vals ? vals->child : NULL;
			for (int k = 0; t && val && !rc; k++, t = t->next, val = val->next) {
				buf_reset(&at);
				buf_addf(&at, "%s.Timestamps[%d]", path.s, k);
				if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble)) {
					rc = em_err(err, EM_ESERVER, "%s: %s: must be a number (seconds since 1970), got %s",
						    origin.s, at.s, jsonx_type_name(t));
					break;
				}
				buf_reset(&at);
				buf_addf(&at, "%s.Values[%d]", path.s, k);
				rc = check_value(m, o->period_s, val, EM_ESERVER, origin.s, at.s, err);
				double off = (t->valuedouble - (double)start) / (double)o->period_s;
				if (rc || off < 0 || off >= (double)n_points)
					continue;
				s[vi].v[m][(size_t)off] = val->valuedouble;
			}
			if (rc)
				break;
		}
		if (rc) {
			cJSON_Delete(j);
			break;
		}
		next = xstrdup(jsonx_str(j, "NextToken"));
		cJSON_Delete(j);
	} while (next);
	http_response_release(&resp);
	buf_release(&origin);
	buf_release(&path);
	buf_release(&at);
	if (!rc && o->save) {
		for (size_t i = 0; i < nv; i++) {
			const struct volume *v = &f->vols[vols[i]];
			for (int m = 0; m < M_COUNT; m++) {
				if (m == M_BURST && !burst_type(v->type))
					continue;
				save_series(o->save, v->volume_id, m, o->period_s, start, s[i].v[m], n_points);
			}
		}
	}
	if (!rc) {
		double *ops = xmalloc(n_points * sizeof *ops), *bytes = xmalloc(n_points * sizeof *bytes);
		for (size_t i = 0; i < nv; i++) {
			struct volume *v = &f->vols[vols[i]];
			for (size_t k = 0; k < n_points; k++) {
				double r = s[i].v[M_READ_OPS][k], w = s[i].v[M_WRITE_OPS][k];
				ops[k] = isnan(r) && isnan(w) ? NAN : (isnan(r) ? 0 : r) + (isnan(w) ? 0 : w);
				r = s[i].v[M_READ_BYTES][k];
				w = s[i].v[M_WRITE_BYTES][k];
				bytes[k] = isnan(r) && isnan(w) ? NAN : (isnan(r) ? 0 : r) + (isnan(w) ? 0 : w);
			}
			cw_reduce(&v->metrics, v, o->period_s, ops, bytes, n_points, s[i].v[M_BURST], n_points);
			v->metrics.lookback_s = o->lookback_s;
		}
		free(ops);
		free(bytes);
	}
	for (size_t i = 0; i < nv; i++)
		for (int m = 0; m < M_COUNT; m++)
			free(s[i].v[m]);
	free(s);
	free(next);
	return rc;
}

int aws_cloudwatch_volume_metrics(struct aws_client *c, const char *region, struct fleet *f,
				  const struct cw_options *opt, struct buf *err)
{
	struct cw_options o = *opt;
	if (!o.end)
		o.end = time(NULL);
	if (o.lookback_s <= 0)
		o.lookback_s = 14 * 86400;
	if (o.period_s < 300)
		o.period_s = 300;
	if (o.period_s % 60 || o.lookback_s < o.period_s || o.lookback_s > MAX_LOOKBACK_S)
		return em_err(err, EM_EINPUT,
			      "cloudwatch: a look-back of %lld s at %lld s periods is not possible: periods are multiples "
			      "of 60 s, the look-back at least one period and at most 455 days",
			      (long long)o.lookback_s, (long long)o.period_s);
	o.end -= o.end % o.period_s;
	time_t start = o.end - (time_t)o.lookback_s;
	/* [start, end) holds exactly lookback/period periods. */
	size_t n_points = (size_t)(o.lookback_s / o.period_s);
	/* GetMetricData refuses a call that could return more than 100,800 points in all. */
	size_t max_queries = MAX_POINTS / n_points;
	if (max_queries > MAX_QUERIES)
		max_queries = MAX_QUERIES;
	if (max_queries < 5)
		return em_err(err, EM_EINPUT,
			      "cloudwatch: a look-back of %lld s at %lld s periods has too many points per volume; "
			      "use a longer period or a shorter look-back",
			      (long long)o.lookback_s, (long long)o.period_s);
	size_t *batch = xmalloc(MAX_QUERIES * sizeof *batch);
	size_t nb = 0, queries = 0;
	int rc = 0;
	for (size_t i = 0; i <= f->n && !rc; i++) {
		int flush = i == f->n;
		if (!flush) {
			const struct volume *v = &f->vols[i];
			if (v->missing || !v->region || strcmp(v->region, region) != 0 || (o.only_gp2 && v->type != EBS_GP2))
				continue;
			int q = burst_type(v->type) ? 5 : 4;
			if (queries + (size_t)q > max_queries) {
				rc = fetch_batch(c, region, f, batch, nb, &o, start, n_points, err);
				nb = queries = 0;
			}
			batch[nb++] = i;
			queries += (size_t)q;
		} else if (nb) {
			rc = fetch_batch(c, region, f, batch, nb, &o, start, n_points, err);
		}
	}
	free(batch);
	return rc;
}
