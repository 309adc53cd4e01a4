/*
 * aws_cloudwatch.c - EBS metrics per volume from GetMetricData (JSON 1.0), reduced to the
 * planner's figures.
 *
 * Entry points: aws_cloudwatch_volume_metrics, cw_reduce.
 * Invariants: query ids encode the volume's position and the metric ("v12_r"), so answers are
 * matched without trusting their order; series are aligned by timestamp; a volume with no data
 * keeps metrics.has = 0 (planning falls back to size-based rules); percentiles use the
 * nearest-rank method over the periods that have data.
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

int aws_cloudwatch_is_export(const char *text, size_t len)
{
	size_t i = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
		i++;
	if (i >= len || text[i] != '{')
		return 0;
	i++;
	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
		i++;
	return len - i >= 19 && memcmp(text + i, "\"MetricDataResults\"", 19) == 0;
}

/* Series of one volume collected from an export document. */
struct imported {
	double *v[M_COUNT];
	time_t start;
	int64_t period;
	size_t n;
};

int aws_cloudwatch_load_export(struct fleet *f, const char *text, size_t len, const char *origin, struct buf *err)
{
	cJSON *root = jsonx_parse(text, len, origin, err);
	if (!root)
		return EM_EINPUT;
	const cJSON *res = jsonx_get(root, "MetricDataResults");
	if (!cJSON_IsArray(res)) {
		cJSON_Delete(root);
		return em_err(err, EM_EINPUT, "%s: expected {\"MetricDataResults\": [...]}", origin);
	}
	/* Pass 1: per volume, the time range and period. */
	struct imported *imp = xcalloc(f->n ? f->n : 1, sizeof *imp);
	int rc = 0, idx = 0;
	const cJSON *r;
	for (int pass = 0; pass < 2 && !rc; pass++) {
		idx = 0;
		cJSON_ArrayForEach(r, res)
		{
			const char *label = jsonx_str(r, "Label");
			char vol[64], metric[40], stat[16];
			long long period;
			if (!label || sscanf(label, "%63s %39s %15s %lld", vol, metric, stat, &period) != 4 || period < 60) {
				rc = em_err(err, EM_EINPUT,
					    "%s: MetricDataResults[%d].Label: expected \"VOLUME-ID METRIC STAT PERIOD\", got '%s'",
					    origin, idx, label ? label : "(missing)");
				break;
			}
			idx++;
			int m = -1;
			for (int k = 0; k < M_COUNT; k++)
				if (strcmp(metric, metric_names[k]) == 0)
					m = k;
			struct volume *v = fleet_find(f, vol);
			if (m < 0 || !v)
				continue;
			struct imported *im = &imp[v - f->vols];
			const cJSON *ts = jsonx_get(r, "Timestamps"), *vals = jsonx_get(r, "Values");
			const cJSON *t, *val;
			int k = 0;
			cJSON_ArrayForEach(t, ts)
			{
				time_t when;
				val = cJSON_GetArrayItem(vals, k++);
				if (!cJSON_IsString(t) || em_parse_time(t->valuestring, &when) || !cJSON_IsNumber(val))
					continue;
				if (pass == 0) {
					if (!im->period || when < im->start)
						im->start = when;
					if (!im->period) {
						im->period = period;
						im->n = 1;
					}
					size_t need = (size_t)((when - im->start) / im->period) + 1;
					if (need > im->n)
						im->n = need;
				} else {
					size_t off = (size_t)((when - im->start) / im->period);
					if (!im->v[m]) {
						im->v[m] = xmalloc(im->n * sizeof(double));
						for (size_t z = 0; z < im->n; z++)
							im->v[m][z] = NAN;
					}
					if (off < im->n)
						im->v[m][off] = val->valuedouble;
				}
			}
		}
		/* After pass 0 the start may have moved back: recompute n from the full range. */
		if (pass == 0) {
			for (size_t i = 0; i < f->n; i++)
				imp[i].n = 0, imp[i].period = 0;
			cJSON_ArrayForEach(r, res)
			{
				const char *label = jsonx_str(r, "Label");
				char vol[64], metric[40], stat[16];
				long long period;
				if (!label || sscanf(label, "%63s %39s %15s %lld", vol, metric, stat, &period) != 4)
					continue;
				struct volume *v = fleet_find(f, vol);
				if (!v)
					continue;
				struct imported *im = &imp[v - f->vols];
				const cJSON *t;
				cJSON_ArrayForEach(t, jsonx_get(r, "Timestamps"))
				{
					time_t when;
					if (!cJSON_IsString(t) || em_parse_time(t->valuestring, &when) || when < im->start)
						continue;
					im->period = period;
					size_t need = (size_t)((when - im->start) / period) + 1;
					if (need > im->n)
						im->n = need;
				}
			}
		}
	}
	int given = 0;
	for (size_t i = 0; i < f->n && !rc; i++) {
		struct imported *im = &imp[i];
		if (!im->n || (!im->v[M_READ_OPS] && !im->v[M_WRITE_OPS] && !im->v[M_READ_BYTES] && !im->v[M_WRITE_BYTES]))
			continue;
		double *ops = xmalloc(im->n * sizeof *ops), *bytes = xmalloc(im->n * sizeof *bytes);
		for (size_t k = 0; k < im->n; k++) {
			double a = im->v[M_READ_OPS] ? im->v[M_READ_OPS][k] : NAN, b = im->v[M_WRITE_OPS] ? im->v[M_WRITE_OPS][k] : NAN;
			ops[k] = isnan(a) && isnan(b) ? NAN : (isnan(a) ? 0 : a) + (isnan(b) ? 0 : b);
			a = im->v[M_READ_BYTES] ? im->v[M_READ_BYTES][k] : NAN;
			b = im->v[M_WRITE_BYTES] ? im->v[M_WRITE_BYTES][k] : NAN;
			bytes[k] = isnan(a) && isnan(b) ? NAN : (isnan(a) ? 0 : a) + (isnan(b) ? 0 : b);
		}
		cw_reduce(&f->vols[i].metrics, &f->vols[i], im->period, ops, bytes, im->n, im->v[M_BURST],
			  im->v[M_BURST] ? im->n : 0);
		f->vols[i].metrics.lookback_s = (int64_t)im->n * im->period;
		given++;
		free(ops);
		free(bytes);
	}
	for (size_t i = 0; i < f->n; i++)
		for (int m = 0; m < M_COUNT; m++)
			free(imp[i].v[m]);
	free(imp);
	cJSON_Delete(root);
	return rc ? rc : given;
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
		cJSON *j = jsonx_parse(resp.body.s, resp.body.len, "cloudwatch GetMetricData answer", err);
		if (!j) {
			rc = EM_ESERVER;
			break;
		}
		const cJSON *r;
		cJSON_ArrayForEach(r, jsonx_get(j, "MetricDataResults"))
		{
			const char *id = jsonx_str(r, "Id");
			size_t idx;
			char tag;
			if (!id || sscanf(id, "v%zu_%c", &idx, &tag) != 2 || idx >= nv)
				continue;
			int m = (int)(strchr(metric_tags, tag) ? strchr(metric_tags, tag) - metric_tags : -1);
			if (m < 0 || m >= M_COUNT)
				continue;
			const cJSON *ts = jsonx_get(r, "Timestamps"), *vals = jsonx_get(r, "Values");
			int n = cJSON_GetArraySize(ts);
			for (int k = 0; k < n && k < cJSON_GetArraySize(vals); k++) {
				const cJSON *t = cJSON_GetArrayItem(ts, k), *val = cJSON_GetArrayItem(vals, k);
				if (!cJSON_IsNumber(t) || !cJSON_IsNumber(val))
					continue;
				double off = (t->valuedouble - (double)start) / (double)o->period_s;
				if (off < 0 || off >= (double)n_points)
					continue;
				s[idx].v[m][(size_t)off] = val->valuedouble;
			}
		}
		next = xstrdup(jsonx_str(j, "NextToken"));
		cJSON_Delete(j);
	} while (next);
	http_response_release(&resp);
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
