/*
 * aws_cloudwatch.c - EBS metrics per volume from GetMetricData (JSON 1.0), reduced to the
 * planner's figures.
 *
 * Entry points: aws_cloudwatch_volume_metrics (live), aws_cloudwatch_read_answer (one live
 * answer page, read in place without a JSON tree), aws_cloudwatch_load_export (AWS CLI
 * get-metric-data output, or the reduced figures inventory --save writes; several documents
 * allowed), aws_cloudwatch_export_* (those saved figures), cw_reduce.
 * Live memory is one answer page plus one batch's series per batch in flight (at most
 * cw_options.concurrency of them in a region, and with cw_options.gate at most the gate's size
 * in all regions together): each batch is reduced to the planner's figures as soon as its
 * last page is in, and only the figures are kept (and saved, in batch order). Batches in flight
 * touch disjoint volumes, each through its own client (aws_client_init_worker).
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
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/paging.h"
#include "ebsmigrate/workpool.h"

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

enum { M_READ_OPS, M_WRITE_OPS, M_READ_BYTES, M_WRITE_BYTES, M_BURST, M_COUNT = CW_METRICS };
static const char *const metric_names[M_COUNT] = {"VolumeReadOps", "VolumeWriteOps", "VolumeReadBytes",
						  "VolumeWriteBytes", "BurstBalance"};
static const char metric_tags[M_COUNT + 1] = "rwRWb";

static int burst_type(enum ebs_type t)
{
	return t == EBS_GP2 || t == EBS_ST1 || t == EBS_SC1;
}

/* One MetricDataQueries element: {"Id":"v<idx>_<tag>","MetricStat":{...},"ReturnData":true}. */
static void add_query(struct jsonw *w, size_t idx, int m, const char *vol, int64_t period)
{
	char id[32];
	snprintf(id, sizeof id, "v%zu_%c", idx, metric_tags[m]);
	jsonw_object(w);
	jsonw_key_str(w, "Id", id);
	jsonw_key_object(w, "MetricStat");
	jsonw_key_object(w, "Metric");
	jsonw_key_str(w, "Namespace", "AWS/EBS");
	jsonw_key_str(w, "MetricName", metric_names[m]);
	jsonw_key_array(w, "Dimensions");
	jsonw_object(w);
	jsonw_key_str(w, "Name", "VolumeId");
	jsonw_key_str(w, "Value", vol);
	jsonw_end_n(w, 3);
	jsonw_key_int(w, "Period", (long long)period);
	jsonw_key_str(w, "Stat", m == M_BURST ? "Minimum" : "Sum");
	jsonw_end(w); /* MetricStat */
	jsonw_key_bool(w, "ReturnData", 1);
	jsonw_end(w);
}

/* The saved document's head: empty answer arrays (so any reader of GetMetricData answers
 * accepts it), then the reduced figures' list, left open for aws_cloudwatch_export_volume. */
void aws_cloudwatch_export_begin(struct jsonw *w, struct buf *out)
{
	jsonw_init(w, out, JSONW_COMPACT);
	jsonw_object(w);
	jsonw_key_array(w, "MetricDataResults");
	jsonw_end(w);
	jsonw_key_array(w, "Messages");
	jsonw_end(w);
	jsonw_key_object(w, "EbsmigrateVolumeMetrics");
	jsonw_key_int(w, "Schema", 1);
	jsonw_key_array(w, "Volumes");
}

void aws_cloudwatch_export_end(struct jsonw *w)
{
	/* an empty list keeps the blank line it always had */
	jsonw_layout(w, w->has_items[w->depth - 1] ? "\n" : "\n\n");
	jsonw_end_n(w, 3);
	jsonw_layout(w, "\n");
}

/* Ten times the fastest EBS volume (io2 Block Express: 256,000 IOPS, 4,000 MiB/s): anything
 * above is not a measurement, and would overflow the planner's integer arithmetic. */
#define MAX_OPS_PER_S 1e7
#define MAX_BYTES_PER_S 1e11
/* CloudWatch keeps EBS data for 15 months: no series can reach further back. */
#define MAX_LOOKBACK_S ((int64_t)455 * 86400)
/* Clock skew tolerated between the machine that exported the metrics and this one. */
#define CLOCK_SKEW_S 3600

/* The value of metric m over one period is out of range: the message, or 0 when it is fine. */
static double value_max(int m, int64_t period)
{
	return m == M_BURST ? 100.0
	       : (double)period * (m == M_READ_OPS || m == M_WRITE_OPS ? MAX_OPS_PER_S : MAX_BYTES_PER_S);
}

static int value_in_range(int m, int64_t period, double x)
{
	return isfinite(x) && x >= 0 && x <= value_max(m, period);
}

static int value_error(int m, int64_t period, double x, int code, const char *origin, const char *path, struct buf *err)
{
	double max = value_max(m, period);
	if (!value_in_range(m, period, x))
		return em_err(err, code, "%s: %s: %g is outside 0..%g (%s %s over %lld s)", origin, path, x, max,
			      metric_names[m], m == M_BURST ? "Minimum" : "Sum", (long long)period);
	return 0;
}

/* A value of metric m over one period: a sum of operations or bytes (0..rate limit x period)
 * or a BurstBalance percentage. code is EM_EINPUT for a file, EM_ESERVER for an API answer. */
static int check_value(int m, int64_t period, const cJSON *v, int code, const char *origin, const char *path,
		       struct buf *err)
{
	if (!cJSON_IsNumber(v))
		return em_err(err, code, "%s: %s: must be a number, got %s", origin, path, jsonx_type_name(v));
	return value_error(m, period, v->valuedouble, code, origin, path, err);
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
		/* Paths are formatted only for a message: a series has thousands of points. */
#define AT(array) (buf_reset(&at), buf_addf(&at, "%s." array "[%d]", path, k), at.s)
		if (!cJSON_IsString(t)) {
			rc = em_err(err, EM_EINPUT, "%s: %s: must be a string (an RFC 3339 time), got %s", origin, AT("Timestamps"),
				    jsonx_type_name(t));
			break;
		}
		if (em_parse_time(t->valuestring, &when)) {
			rc = em_err(err, EM_EINPUT, "%s: %s: '%s' is not an RFC 3339 time", origin, AT("Timestamps"), t->valuestring);
			break;
		}
		if (when < im->lo || when > im->hi) {
			char lo[21], hi[21];
			em_format_time(im->lo, lo);
			em_format_time(im->hi - CLOCK_SKEW_S, hi);
			rc = em_err(err, EM_EINPUT,
				    "%s: %s: '%s' is outside the look-back %s..%s (CloudWatch keeps 455 days before now)",
				    origin, AT("Timestamps"), t->valuestring, lo, hi);
			break;
		}
		if (m < 0) { /* a metric not used here: only its type is checked */
			if (!cJSON_IsNumber(val) || !isfinite(val->valuedouble))
				rc = em_err(err, EM_EINPUT, "%s: %s: must be a finite number, got %s", origin, AT("Values"),
					    cJSON_IsNumber(val) ? "an infinity" : jsonx_type_name(val));
			continue;
		}
		if (!cJSON_IsNumber(val) || !value_in_range(m, period, val->valuedouble))
			rc = check_value(m, period, val, EM_EINPUT, origin, AT("Values"), err);
#undef AT
		if (rc || !v)
			continue;
		XGROW(im->pts, im->n, im->alloc);
		im->pts[im->n] = (struct cw_point){(int64_t)when, val->valuedouble, (uint32_t)vi, (uint32_t)m, im->n};
		im->n++;
	}
	buf_release(&at);
	return rc;
}

/* One figure of a saved volume: a finite number in lo..hi. */
static int reduced_figure(const cJSON *v, const char *key, double lo, double hi, double *out, const char *origin,
			  const char *path, struct buf *err)
{
	const cJSON *x = jsonx_get(v, key);
	if (!cJSON_IsNumber(x))
		return em_err(err, EM_EINPUT, "%s: %s.%s: must be a number, got %s", origin, path, key, jsonx_type_name(x));
	if (!isfinite(x->valuedouble) || x->valuedouble < lo || x->valuedouble > hi)
		return em_err(err, EM_EINPUT, "%s: %s.%s: %g is outside %g..%g", origin, path, key, x->valuedouble, lo, hi);
	*out = x->valuedouble;
	return 0;
}

/* The reduced figures inventory --save writes (EbsmigrateVolumeMetrics): given as they were
 * computed live, so a replay plans exactly as the live run did. */
static int import_reduced(struct fleet *f, const cJSON *doc, const char *origin, const char *docname, int *given,
			  struct buf *err)
{
	const cJSON *vols;
	struct buf path = BUF_INIT;
	buf_addf(&path, "%sEbsmigrateVolumeMetrics", docname);
	int64_t schema;
	int present, rc = jsonx_int(doc, "Schema", 1, 1, &schema, &present, origin, path.s, err);
	if (!rc && !present)
		rc = em_err(err, EM_EINPUT, "%s: %s.Schema: missing (expected 1)", origin, path.s);
	if (!rc)
		rc = jsonx_want_array(doc, "Volumes", &vols, origin, path.s, err);
	int idx = 0;
	const cJSON *v, *list = rc ? NULL : vols;
	cJSON_ArrayForEach(v, list)
	{
		buf_reset(&path);
		buf_addf(&path, "%sEbsmigrateVolumeMetrics.Volumes[%d]", docname, idx++);
		const char *id;
		int64_t lookback;
		struct volume_metrics m;
		memset(&m, 0, sizeof m);
		m.has = 1;
		m.min_burst_balance = -1;
		rc = jsonx_want_str(v, "VolumeId", &id, origin, path.s, err);
		if (!rc && !id)
			rc = em_err(err, EM_EINPUT, "%s: %s.VolumeId: missing", origin, path.s);
		if (!rc)
			rc = jsonx_int(v, "LookbackSeconds", 60, MAX_LOOKBACK_S, &lookback, &present, origin, path.s, err);
		if (!rc && !present)
			rc = em_err(err, EM_EINPUT, "%s: %s.LookbackSeconds: missing", origin, path.s);
		if (!rc)
			rc = reduced_figure(v, "P99Iops", 0, MAX_OPS_PER_S, &m.p99_iops, origin, path.s, err);
		if (!rc)
			rc = reduced_figure(v, "MaxIops", m.p99_iops, MAX_OPS_PER_S, &m.max_iops, origin, path.s, err);
		if (!rc)
			rc = reduced_figure(v, "P99MiBps", 0, MAX_BYTES_PER_S / MIB, &m.p99_mibps, origin, path.s, err);
		if (!rc)
			rc = reduced_figure(v, "MaxMiBps", m.p99_mibps, MAX_BYTES_PER_S / MIB, &m.max_mibps, origin, path.s,
					    err);
		if (!rc)
			rc = reduced_figure(v, "ShareAtIopsCeiling", 0, 1, &m.share_at_iops_ceiling, origin, path.s, err);
		if (!rc)
			rc = reduced_figure(v, "ShareAtThroughputCeiling", 0, 1, &m.share_at_tput_ceiling, origin, path.s,
					    err);
		if (!rc && jsonx_get(v, "MinBurstBalance"))
			rc = reduced_figure(v, "MinBurstBalance", 0, 100, &m.min_burst_balance, origin, path.s, err);
		if (rc)
			break;
		m.lookback_s = lookback;
		struct volume *vol = fleet_find(f, id);
		if (vol) {
			*given += !vol->metrics.has;
			vol->metrics = m;
		}
	}
	buf_release(&path);
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
	int rc, n_metric_docs = 0, given = 0;
	while ((rc = jsonx_docs_next(&d, &root, err)) > 0) {
		char doc[40] = "";
		if (d.count > 1)
			snprintf(doc, sizeof doc, "document %zu: ", d.count);
		/* Documents without MetricDataResults were read by aws_ec2_load_export. */
		const cJSON *res = jsonx_get(root, "MetricDataResults");
		const cJSON *reduced = jsonx_get(root, "EbsmigrateVolumeMetrics");
		int bad = 0;
		if (reduced && !cJSON_IsObject(reduced))
			bad = em_err(err, EM_EINPUT, "%s: %sEbsmigrateVolumeMetrics: must be an object, got %s", origin, doc,
				     jsonx_type_name(reduced));
		else if (reduced)
			bad = import_reduced(f, reduced, origin, doc, &given, err);
		if (!bad && res && !cJSON_IsArray(res))
			bad = em_err(err, EM_EINPUT, "%s: %sMetricDataResults: must be an array, got %s", origin, doc,
				     jsonx_type_name(res));
		n_metric_docs += res != NULL || reduced != NULL;
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

/* ---- a GetMetricData answer, read without a tree ----
 * A page holds up to 100,800 points; as a cJSON tree that is ~200,000 nodes (tens of MB of
 * small allocations) built and freed per call. The reader below walks the text once per
 * result instead and writes each point straight into the batch's series. It accepts exactly
 * JSON (RFC 8259) and, for each object, takes the first of duplicate keys (as cJSON does). */

#define SCAN_MAX_DEPTH 64

struct scan {
	const char *s;
	size_t len, off;
	const char *origin;
	struct buf *err;
};

static int sc_fail(struct scan *sc, const char *what)
{
	size_t line, col;
	jsonx_line_col(sc->s, sc->off < sc->len ? sc->off : sc->len, &line, &col);
	return em_err(sc->err, EM_ESERVER, "%s: not valid JSON at line %zu, column %zu: %s", sc->origin, line, col,
		      what);
}

static void sc_ws(struct scan *sc)
{
	sc->off = jsonx_skip_ws(sc->s, sc->len, sc->off);
}

static int sc_at(const struct scan *sc, char c)
{
	return sc->off < sc->len && sc->s[sc->off] == c;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static void add_utf8(struct buf *b, unsigned cp)
{
	if (cp < 0x80) {
		buf_addc(b, (char)cp);
	} else if (cp < 0x800) {
		buf_addc(b, (char)(0xC0 | (cp >> 6)));
		buf_addc(b, (char)(0x80 | (cp & 0x3F)));
	} else if (cp < 0x10000) {
		buf_addc(b, (char)(0xE0 | (cp >> 12)));
		buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
		buf_addc(b, (char)(0x80 | (cp & 0x3F)));
	} else {
		buf_addc(b, (char)(0xF0 | (cp >> 18)));
		buf_addc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
		buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
		buf_addc(b, (char)(0x80 | (cp & 0x3F)));
	}
}

/* The string at sc->off (its opening quote), decoded into out (reset first) unless out is NULL. */
static int sc_string(struct scan *sc, struct buf *out)
{
	if (!sc_at(sc, '"'))
		return sc_fail(sc, "expected a string");
	if (out) {
		buf_reset(out);
		buf_grow(out, 0); /* "" is a string too: never a NULL .s */
	}
	size_t i = sc->off + 1;
	for (;;) {
		size_t run = i;
		while (i < sc->len && sc->s[i] != '"' && sc->s[i] != '\\' && (unsigned char)sc->s[i] >= 0x20)
			i++;
		if (out && i > run)
			buf_add(out, sc->s + run, i - run);
		sc->off = i;
		if (i >= sc->len)
			return sc_fail(sc, "unterminated string");
		if (sc->s[i] == '"') {
			sc->off = i + 1;
			return 0;
		}
		if (sc->s[i] != '\\')
			return sc_fail(sc, "control character in a string");
		if (i + 1 >= sc->len)
			return sc_fail(sc, "unterminated string");
		char e = sc->s[i + 1];
		const char *simple = strchr("\"\\/bfnrt", e);
		if (e && simple) {
			if (out)
				buf_addc(out, "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"]);
			i += 2;
			continue;
		}
		unsigned cp, lo;
		if (e != 'u' || i + 6 > sc->len || hex4(sc->s + i + 2, &cp))
			return sc_fail(sc, "invalid escape in a string");
		i += 6;
		if (cp >= 0xDC00 && cp <= 0xDFFF)
			return sc_fail(sc, "unpaired UTF-16 surrogate in a string");
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (i + 6 > sc->len || sc->s[i] != '\\' || sc->s[i + 1] != 'u' || hex4(sc->s + i + 2, &lo) ||
			    lo < 0xDC00 || lo > 0xDFFF) {
				sc->off = i;
				return sc_fail(sc, "unpaired UTF-16 surrogate in a string");
			}
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			i += 6;
		}
		if (out)
			add_utf8(out, cp);
	}
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A number of at most 15 significant digits and a decimal exponent within +-22 (timestamps,
 * operation counts, most byte sums): both the digits and the power of ten are exact doubles,
 * so one multiplication or division rounds exactly as strtod would (Clinger's fast path).
 * text[0..len) is a valid JSON number. 0: not such a number, use strtod. */
static int fast_decimal(const char *text, size_t len, double *out)
{
	static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
				       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	size_t i = 0;
	int neg = text[0] == '-', digits = 0, exp10 = 0;
	uint64_t mant = 0;
	i += (size_t)neg;
	for (; i < len && is_digit(text[i]); i++) {
		if (mant || text[i] != '0') {
			if (++digits > 15)
				return 0;
			mant = mant * 10 + (uint64_t)(text[i] - '0');
		}
	}
	if (i < len && text[i] == '.') {
		for (i++; i < len && is_digit(text[i]); i++) {
			if (mant || text[i] != '0') {
				if (++digits > 15)
					return 0;
				mant = mant * 10 + (uint64_t)(text[i] - '0');
			}
			exp10--;
		}
	}
	if (i < len) { /* an exponent */
		i++;
		int eneg = text[i] == '-', e = 0;
		if (text[i] == '-' || text[i] == '+')
			i++;
		for (; i < len; i++) {
			if (e > 1000)
				return 0;
			e = e * 10 + (text[i] - '0');
		}
		exp10 += eneg ? -e : e;
	}
	if (exp10 < -22 || exp10 > 22)
		return 0;
	double x = (double)mant;
	x = exp10 < 0 ? x / pow10[-exp10] : x * pow10[exp10];
	*out = neg ? -x : x;
	return 1;
}

/* The number at sc->off; its value as strtod reads it (as cJSON does) into *out, unless out is
 * NULL (skipping: only checked). */
static int sc_number(struct scan *sc, double *out)
{
	const char *s = sc->s;
	size_t i = sc->off, n = sc->len;
	if (i < n && s[i] == '-')
		i++;
	if (i >= n || !is_digit(s[i]))
		return sc_fail(sc, "expected a value");
	if (s[i] == '0')
		i++;
	else
		while (i < n && is_digit(s[i]))
			i++;
	if (i < n && s[i] == '.') {
		if (++i >= n || !is_digit(s[i]))
			return sc_fail(sc, "expected a digit after the decimal point");
		while (i < n && is_digit(s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !is_digit(s[i]))
			return sc_fail(sc, "expected a digit in the exponent");
		while (i < n && is_digit(s[i]))
			i++;
	}
	size_t len = i - sc->off;
	if (!out || fast_decimal(s + sc->off, len, out)) {
		sc->off = i;
		return 0;
	}
	char small[64];
	char *copy = len < sizeof small ? small : xmalloc(len + 1);
	memcpy(copy, s + sc->off, len);
	copy[len] = '\0';
	*out = strtod(copy, NULL);
	if (copy != small)
		free(copy);
	sc->off = i;
	return 0;
}

static int sc_literal(struct scan *sc, const char *word)
{
	size_t n = strlen(word);
	if (sc->len - sc->off < n || memcmp(sc->s + sc->off, word, n) != 0)
		return sc_fail(sc, "expected a value");
	sc->off += n;
	return 0;
}

/* What the value at sc->off is, for messages ("a string", ...), as jsonx_type_name says it. */
static const char *sc_type_name(const struct scan *sc)
{
	switch (sc->off < sc->len ? sc->s[sc->off] : 0) {
	case '"': return "a string";
	case '{': return "an object";
	case '[': return "an array";
	case 't': case 'f': return "a boolean";
	case 'n': return "null";
	default: return "a number";
	}
}

static int sc_skip(struct scan *sc, int depth);

/* Containers: sc_open consumes '{' or '['; sc_next then returns 1 at each member (positioned
 * at its value; for an object, *key holds its name), 0 after the closing bracket. */
static int sc_open(struct scan *sc, char open, int *first)
{
	if (!sc_at(sc, open))
		return sc_fail(sc, open == '{' ? "expected an object" : "expected an array");
	sc->off++;
	*first = 1;
	return 0;
}

static int sc_next(struct scan *sc, char close, struct buf *key, int *first)
{
	sc_ws(sc);
	if (sc_at(sc, close)) {
		sc->off++;
		return 0;
	}
	if (!*first) {
		if (!sc_at(sc, ','))
			return sc_fail(sc, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
		sc->off++;
		sc_ws(sc);
	}
	*first = 0;
	if (close == '}') {
		int rc = sc_string(sc, key);
		if (rc)
			return rc;
		sc_ws(sc);
		if (!sc_at(sc, ':'))
			return sc_fail(sc, "expected ':'");
		sc->off++;
		sc_ws(sc);
	}
	return 1;
}

static int sc_skip(struct scan *sc, int depth)
{
	sc_ws(sc);
	if (depth > SCAN_MAX_DEPTH)
		return sc_fail(sc, "nested too deeply");
	char c = sc->off < sc->len ? sc->s[sc->off] : 0;
	if (c == '"')
		return sc_string(sc, NULL);
	if (c == 't')
		return sc_literal(sc, "true");
	if (c == 'f')
		return sc_literal(sc, "false");
	if (c == 'n')
		return sc_literal(sc, "null");
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		int first, rc = sc_open(sc, c, &first);
		while (!rc && (rc = sc_next(sc, close, NULL, &first)) > 0)
			rc = sc_skip(sc, depth + 1);
		return rc;
	}
	return sc_number(sc, NULL);
}

/* Validates the value at sc->off and reports that it is of the wrong type (want). */
static int sc_wrong_type(struct scan *sc, const char *path, const char *want)
{
	size_t at = sc->off;
	const char *got = sc_type_name(sc);
	int rc = sc_skip(sc, 1);
	if (rc)
		return rc; /* not even JSON: that is the error to report */
	sc->off = at;
	return em_err(sc->err, EM_ESERVER, "%s: %s: must be %s, got %s", sc->origin, path, want, got);
}

/* Counts an array's elements (0 for null); the cursor is left where it was. */
static int sc_count(struct scan *sc, size_t at, const char *path, size_t *n)
{
	size_t save = sc->off;
	int first, rc = 0;
	*n = 0;
	sc->off = at;
	if (sc_at(sc, 'n')) {
		sc->off = save;
		return 0;
	}
	if (!sc_at(sc, '['))
		rc = sc_wrong_type(sc, path, "an array");
	if (!rc)
		rc = sc_open(sc, '[', &first);
	while (!rc && (rc = sc_next(sc, ']', NULL, &first)) > 0) {
		(*n)++;
		rc = sc_skip(sc, 2);
	}
	sc->off = save;
	return rc < 0 ? rc : 0;
}

static double *series_of(struct cw_batch *b, size_t vol, int m)
{
	return b->values + (vol * CW_METRICS + (size_t)m) * b->n_points;
}

/* One MetricDataResults element: its Id names the batch position and metric ("v3_r"); points
 * outside [start, start + n_points periods) are dropped (CloudWatch rounds StartTime down). */
static int read_result(struct scan *sc, struct cw_batch *b, int idx, struct buf *key, struct buf *id)
{
	size_t ts_at = 0, vals_at = 0, nt = 0, nv = 0;
	int seen_id = 0, id_ok = 0, first, rc = sc_open(sc, '{', &first);
	while (!rc && (rc = sc_next(sc, '}', key, &first)) > 0) {
		rc = 0;
		size_t *count = NULL;
		if (!seen_id && strcmp(key->s, "Id") == 0) {
			seen_id = 1;
			if (sc_at(sc, '"')) {
				rc = sc_string(sc, id);
				id_ok = !rc;
				continue;
			}
		} else if (!ts_at && strcmp(key->s, "Timestamps") == 0) {
			ts_at = sc->off;
			count = &nt;
		} else if (!vals_at && strcmp(key->s, "Values") == 0) {
			vals_at = sc->off;
			count = &nv;
		}
		if (count && sc_at(sc, '[')) { /* counted while checked: one pass fewer */
			int afirst;
			rc = sc_open(sc, '[', &afirst);
			while (!rc && (rc = sc_next(sc, ']', NULL, &afirst)) > 0) {
				(*count)++;
				rc = sc_skip(sc, 3);
			}
			continue;
		}
		rc = sc_skip(sc, 2);
	}
	if (rc < 0)
		return rc;
	size_t vi;
	char tag;
	if (!id_ok || strlen(id->s) != id->len || sscanf(id->s, "v%zu_%c", &vi, &tag) != 2 || vi >= b->n_vols)
		return 0;
	const char *mt = strchr(metric_tags, tag);
	int m = mt ? (int)(mt - metric_tags) : -1;
	if (m < 0 || m >= M_COUNT)
		return 0;
	char path[64], at[96];
	snprintf(path, sizeof path, "MetricDataResults[%d].Timestamps", idx);
	/* null or absent: no points; another type: an error (arrays were counted above) */
	if (ts_at && sc->s[ts_at] != '[' && (rc = sc_count(sc, ts_at, path, &nt)))
		return rc;
	snprintf(path, sizeof path, "MetricDataResults[%d].Values", idx);
	if (vals_at && sc->s[vals_at] != '[' && (rc = sc_count(sc, vals_at, path, &nv)))
		return rc;
	if (nt != nv)
		return em_err(sc->err, EM_ESERVER, "%s: MetricDataResults[%d]: %zu Timestamps but %zu Values", sc->origin, idx,
			      nt, nv);
	if (!nt)
		return 0;
	double *dst = series_of(b, vi, m);
	struct scan ts = *sc, vals = *sc;
	int ft, fv;
	ts.off = ts_at;
	vals.off = vals_at;
	sc_open(&ts, '[', &ft);
	sc_open(&vals, '[', &fv);
	for (size_t k = 0; k < nt; k++) {
		double t, x;
		sc_next(&ts, ']', NULL, &ft);
		sc_next(&vals, ']', NULL, &fv);
		if (!sc_at(&ts, '-') && !(ts.off < ts.len && is_digit(ts.s[ts.off]))) {
			snprintf(at, sizeof at, "MetricDataResults[%d].Timestamps[%zu]", idx, k);
			return em_err(sc->err, EM_ESERVER, "%s: %s: must be a number (seconds since 1970), got %s", sc->origin,
				      at, sc_type_name(&ts));
		}
		sc_number(&ts, &t);
		if (!isfinite(t)) {
			snprintf(at, sizeof at, "MetricDataResults[%d].Timestamps[%zu]", idx, k);
			return em_err(sc->err, EM_ESERVER, "%s: %s: must be a number (seconds since 1970), got a number",
				      sc->origin, at);
		}
		if (!sc_at(&vals, '-') && !(vals.off < vals.len && is_digit(vals.s[vals.off]))) {
			snprintf(at, sizeof at, "MetricDataResults[%d].Values[%zu]", idx, k);
			return em_err(sc->err, EM_ESERVER, "%s: %s: must be a number, got %s", sc->origin, at,
				      sc_type_name(&vals));
		}
		sc_number(&vals, &x);
		if (!value_in_range(m, b->period_s, x)) {
			snprintf(at, sizeof at, "MetricDataResults[%d].Values[%zu]", idx, k);
			return value_error(m, b->period_s, x, EM_ESERVER, sc->origin, at, sc->err);
		}
		double off = (t - (double)b->start) / (double)b->period_s;
		if (off < 0 || off >= (double)b->n_points)
			continue;
		dst[(size_t)off] = x;
	}
	return 0;
}

void cw_batch_init(struct cw_batch *b, size_t n_vols, size_t n_points, time_t start, int64_t period_s)
{
	b->n_vols = n_vols;
	b->n_points = n_points;
	b->start = start;
	b->period_s = period_s;
	size_t n = n_vols * CW_METRICS * n_points;
	b->values = xmalloc((n ? n : 1) * sizeof *b->values);
	for (size_t i = 0; i < n; i++)
		b->values[i] = NAN;
}

void cw_batch_release(struct cw_batch *b)
{
	free(b->values);
	b->values = NULL;
}

int aws_cloudwatch_read_answer(struct cw_batch *b, const char *text, size_t len, const char *origin, char **next_token,
			       struct buf *err)
{
	struct scan sc = {text, len, 0, origin, err};
	struct buf key = BUF_INIT, id = BUF_INIT, token = BUF_INIT;
	int first, rc, idx = 0, seen_results = 0, have_token = 0, seen_token = 0;
	*next_token = NULL;
	sc_ws(&sc);
	if (sc.off == len)
		rc = em_err(err, EM_ESERVER, "%s: empty answer, expected JSON", origin);
	else
		rc = sc_open(&sc, '{', &first);
	while (!rc && (rc = sc_next(&sc, '}', &key, &first)) > 0) {
		rc = 0;
		if (!seen_results && strcmp(key.s, "MetricDataResults") == 0) {
			seen_results = 1;
			if (sc_at(&sc, 'n')) {
				rc = sc_literal(&sc, "null");
				continue;
			}
			if (!sc_at(&sc, '[')) {
				rc = sc_wrong_type(&sc, "MetricDataResults", "an array");
				continue;
			}
			int afirst;
			rc = sc_open(&sc, '[', &afirst);
			while (!rc && (rc = sc_next(&sc, ']', NULL, &afirst)) > 0)
				rc = sc_at(&sc, '{') ? read_result(&sc, b, idx++, &key, &id) : (idx++, sc_skip(&sc, 2));
			continue;
		}
		if (!seen_token && strcmp(key.s, "NextToken") == 0) {
			seen_token = 1;
			if (sc_at(&sc, '"')) {
				rc = sc_string(&sc, &token);
				have_token = !rc;
				continue;
			}
		}
		rc = sc_skip(&sc, 1);
	}
	if (!rc) {
		sc_ws(&sc);
		if (sc.off < len)
			rc = sc_fail(&sc, "unexpected data after the JSON document");
	}
	if (!rc && have_token)
		*next_token = xstrndup(token.s, token.len);
	buf_release(&key);
	buf_release(&id);
	buf_release(&token);
	return rc < 0 ? rc : 0;
}

/* The reduced figures of one volume as an element of a saved document's volume list (none
 * when it has no data: a replay then leaves it without metrics, as the live run did). */
void aws_cloudwatch_export_volume(struct jsonw *w, const struct volume *v)
{
	const struct volume_metrics *m = &v->metrics;
	if (!m->has)
		return;
	jsonw_lead(w, "\n");
	jsonw_object(w);
	jsonw_key_str(w, "VolumeId", v->volume_id);
	jsonw_key_int(w, "LookbackSeconds", (long long)m->lookback_s);
	static const char *const keys[] = {"P99Iops", "MaxIops", "P99MiBps", "MaxMiBps", "ShareAtIopsCeiling",
					   "ShareAtThroughputCeiling", "MinBurstBalance"};
	const double figures[] = {m->p99_iops,  m->max_iops, m->p99_mibps, m->max_mibps, m->share_at_iops_ceiling,
				  m->share_at_tput_ceiling, m->min_burst_balance};
	for (size_t k = 0; k < JSONW_COUNT(keys); k++) {
		if (k == JSONW_COUNT(keys) - 1 && m->min_burst_balance < 0)
			break; /* no BurstBalance series (not a burst type) */
		jsonw_key(w, keys[k]);
		jsonw_number_g(w, figures[k], 17);
	}
	jsonw_end(w);
}

static int fetch_batch(struct aws_client *c, const char *region, struct fleet *f, const size_t *vols, size_t nv,
		       const struct cw_options *o, struct cw_batch *b, struct buf *err)
{
	b->n_vols = nv; /* the series were set to NAN by cw_batch_init */
	char *next = NULL;
	int rc = 0;
	struct http_response resp;
	http_response_init(&resp);
	struct buf origin = BUF_INIT, body = BUF_INIT;
	buf_addf(&origin, "cloudwatch GetMetricData answer (region %s)", region);
	struct page_guard guard;
	page_guard_init(&guard, "NextToken", 0, "cloudwatch GetMetricData in %s", region);
	for (;;) {
		buf_reset(&body);
		struct jsonw w;
		jsonw_init(&w, &body, JSONW_COMPACT);
		jsonw_object(&w);
		jsonw_key_array(&w, "MetricDataQueries");
		for (size_t i = 0; i < nv; i++) {
			const struct volume *v = &f->vols[vols[i]];
			for (int m = 0; m < M_COUNT; m++) {
				if (m == M_BURST && !burst_type(v->type))
					continue;
				add_query(&w, i, m, v->volume_id, o->period_s);
			}
		}
		jsonw_end(&w);
		jsonw_key_int(&w, "StartTime", (long long)b->start);
		jsonw_key_int(&w, "EndTime", (long long)o->end);
		jsonw_key_str(&w, "ScanBy", "TimestampAscending");
		if (next)
			jsonw_key_str(&w, "NextToken", next);
		jsonw_end(&w);
		free(next);
		next = NULL;
		rc = aws_json(c, AWS_SERVICE_CLOUDWATCH, region, "GraniteServiceVersion20100801.GetMetricData",
			      "application/x-amz-json-1.0", body.s, &resp, NULL, err);
		if (rc)
			break;
		/* The server is untrusted input too: the same value checks as an export. */
		rc = aws_cloudwatch_read_answer(b, resp.body.s, resp.body.len, origin.s, &next, err);
		if (rc || (rc = page_guard_next(&guard, next, err)) <= 0)
			break;
	}
	rc = rc < 0 ? rc : 0;
	page_guard_release(&guard);
	http_response_release(&resp);
	buf_release(&origin);
	buf_release(&body);
	free(next);
	if (rc)
		return rc;
	/* Each volume is reduced as soon as its batch is complete; only the figures outlive it. */
	double *ops = xmalloc(b->n_points * sizeof *ops), *bytes = xmalloc(b->n_points * sizeof *bytes);
	for (size_t i = 0; i < nv; i++) {
		struct volume *v = &f->vols[vols[i]];
		const double *r = series_of(b, i, M_READ_OPS), *w = series_of(b, i, M_WRITE_OPS);
		const double *rb = series_of(b, i, M_READ_BYTES), *wb = series_of(b, i, M_WRITE_BYTES);
		for (size_t k = 0; k < b->n_points; k++) {
			ops[k] = sum_or_nan(r[k], w[k]);
			bytes[k] = sum_or_nan(rb[k], wb[k]);
		}
		cw_reduce(&v->metrics, v, o->period_s, ops, bytes, b->n_points, series_of(b, i, M_BURST), b->n_points);
		v->metrics.lookback_s = o->lookback_s;
	}
	free(ops);
	free(bytes);
	return 0;
}

/* A region's batches, fetched a wave at a time (aws_client_waves): slot k's series in slots[k]. */
struct metric_wave {
	const char *region;
	struct fleet *f;      /* each batch reduces only its own volumes' figures */
	const struct cw_options *o;
	const size_t *vols, *first;
	struct cw_batch *slots; /* a wave slot's batch series */
	size_t max_vols, n_points; /* a batch's series: allocated while it is in flight */
	time_t start;
	size_t n_batches, done, total; /* saved so far, of the region's volumes */
};

/* A batch holds its series (~1 MB) and its answer page (~3-4 MB at 100,800 points) only while
 * it is fetched, and, with a gate, only while it holds a place in it: the bound on those is the
 * run's, whatever the number of regions read at once. */
static int fetch_slot(void *ctx, size_t k, size_t batch, struct aws_client *c, struct buf *err)
{
	struct metric_wave *w = ctx;
	struct cw_batch *b = &w->slots[k];
	if (w->o->gate)
		workpool_gate_enter(w->o->gate);
	cw_batch_init(b, w->max_vols, w->n_points, w->start, w->o->period_s);
	int rc = fetch_batch(c, w->region, w->f, w->vols + w->first[batch], w->first[batch + 1] - w->first[batch], w->o,
			     b, err);
	cw_batch_release(b);
	if (w->o->gate)
		workpool_gate_leave(w->o->gate);
	return rc;
}

/* A fetched batch, in batch order: its volumes saved, the progress told. */
static int save_batch(void *ctx, size_t k, size_t batch)
{
	struct metric_wave *w = ctx;
	const struct cw_options *o = w->o;
	(void)k;
	for (size_t i = w->first[batch]; i < w->first[batch + 1] && o->save; i++)
		aws_cloudwatch_export_volume(o->save, &w->f->vols[w->vols[i]]);
	w->done += w->first[batch + 1] - w->first[batch];
	if (batch + 1 < w->n_batches)
		progress_report(o->progress, o->progress_ctx, PROGRESS_STEP, "metrics", w->region, w->done, w->total);
	return 0;
}

/* The volumes one region's metrics are fetched for. */
static int wants_metrics(const struct volume *v, const char *region, const struct cw_options *o)
{
	return !v->missing && v->region && strcmp(v->region, region) == 0 && (!o->only_gp2 || v->type == EBS_GP2);
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
	/* The batches, in fleet order: vols[first[k] .. first[k + 1]) is batch k. */
	size_t *vols = NULL, *first = NULL, n_vols = 0, n_batches = 0, alloc_vols = 0, alloc_first = 0, queries = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct volume *v = &f->vols[i];
		if (!wants_metrics(v, region, &o))
			continue;
		size_t q = burst_type(v->type) ? 5 : 4;
		if (!n_batches || queries + q > max_queries) {
			XGROW(first, n_batches, alloc_first);
			first[n_batches++] = n_vols;
			queries = 0;
		}
		XGROW(vols, n_vols, alloc_vols);
		vols[n_vols++] = i;
		queries += q;
	}
	XGROW(first, n_batches, alloc_first);
	first[n_batches] = n_vols;
	progress_report(o.progress, o.progress_ctx, PROGRESS_STEP, "metrics", region, 0, n_vols);
	/* Up to `workers` batches are fetched at a time, each by its own client (own connection,
	 * the region's shared token bucket), then saved in batch order: memory holds that many
	 * batches' series, never the fleet's. */
	size_t workers = aws_wave_width(o.concurrency, n_batches);
	struct metric_wave w = {region, f, &o, vols, first, NULL, max_queries / 4, n_points, start, n_batches, 0, n_vols};
	w.slots = xcalloc(workers, sizeof *w.slots);
	int rc = aws_client_waves(c, n_batches, workers, fetch_slot, save_batch, &w, err);
	free(w.slots);
	free(vols);
	free(first);
	progress_report(o.progress, o.progress_ctx, PROGRESS_DONE, "metrics", region, w.done, w.total);
	return rc;
}
