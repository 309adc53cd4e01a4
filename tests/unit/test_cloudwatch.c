/* test_cloudwatch.c - GetMetricData answers read page by page without a tree
 * (aws_cloudwatch_read_answer) reduce to exactly the figures the tree-based reader of the
 * same series gives (aws_cloudwatch_load_export over the AWS CLI export of those series), and
 * the reduced figures inventory --save writes read back unchanged. Series are real-sized:
 * 14 days at 300 s (4,032 periods) per metric, with gaps, diurnal load and bursts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_cloudwatch.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ebs.h"
#include "tap.h"

#define PERIOD 300
#define POINTS 4032
#define NVOL 3
#define START ((time_t)1790553600) /* 2026-09-28T00:00:00Z */

static const char *const ids[NVOL] = {"vol-0a1b2c3d4e5f60001", "vol-0a1b2c3d4e5f60002", "vol-0a1b2c3d4e5f60003"};
static const char tags[CW_METRICS + 1] = "rwRWb";
static const char *const names[CW_METRICS] = {"VolumeReadOps", "VolumeWriteOps", "VolumeReadBytes", "VolumeWriteBytes",
					      "BurstBalance"};

static double series[NVOL][CW_METRICS][POINTS];
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double uniform(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* Diurnal load with noise, a burst hour now and then, a few periods missing (as CloudWatch
 * leaves out periods without data), and a volume (2) that is idle half the time. */
static void make_series(void)
{
	for (int v = 0; v < NVOL; v++)
		for (int k = 0; k < POINTS; k++) {
			double day = sin(2 * M_PI * (double)(k % 288) / 288.0);
			double iops = (v == 0 ? 280 : v == 1 ? 1400 : 2200) * (1 + 0.5 * day) * (0.8 + 0.4 * uniform());
			if (k % 500 < 12)
				iops *= 3.2;
			if (v == 2 && k > POINTS / 2)
				iops = 0;
			double rs = 0.6 + 0.1 * uniform();
			series[v][0][k] = round(iops * rs * PERIOD);
			series[v][1][k] = round(iops * (1 - rs) * PERIOD);
			series[v][2][k] = series[v][0][k] * 16384 * (1 + uniform());
			series[v][3][k] = series[v][1][k] * 32768 * (1 + uniform());
			series[v][4][k] = v == 2 ? NAN : fmax(0, 100 - (double)(k % 700) * 0.25 * uniform());
			for (int m = 0; m < CW_METRICS; m++)
				if ((k * 7 + m * 13 + v) % 97 == 0)
					series[v][m][k] = NAN;
		}
}

static int metric_count(int v)
{
	return v == 2 ? 4 : 5; /* volume 2 is gp3: no BurstBalance query */
}

/* A GetMetricData answer holding periods [from, to) of every series, members in a varying order. */
static void answer(struct buf *b, int from, int to, const char *next)
{
	buf_adds(b, "{\"Messages\":[],\n \"MetricDataResults\":[");
	int first = 1;
	for (int v = NVOL - 1; v >= 0; v--)
		for (int m = 0; m < metric_count(v); m++) {
			struct buf ts = BUF_INIT, vals = BUF_INIT;
			int n = 0;
			for (int k = from; k < to; k++) {
				if (isnan(series[v][m][k]))
					continue;
				buf_addf(&ts, "%s%lld", n ? "," : "", (long long)(START + (time_t)k * PERIOD));
				buf_addf(&vals, "%s%.17g", n ? "," : "", series[v][m][k]);
				n++;
			}
			if (!from && v == 1 && m == 0) { /* a point before the window: dropped */
				buf_addf(&ts, "%s%lld", n ? "," : "", (long long)(START - PERIOD));
				buf_addf(&vals, "%s5", n ? "," : "");
			}
			if ((v + m) % 2)
				buf_addf(b, "%s\n {\"Values\": [%s], \"Label\": \"%s\", \"Timestamps\": [%s], \"Id\": \"v%d_%c\", "
					    "\"StatusCode\": \"Complete\"}",
					 first ? "" : ",", vals.s ? vals.s : "", names[m], ts.s ? ts.s : "", v, tags[m]);
			else
				buf_addf(b, "%s\n {\"Id\": \"v%d_%c\", \"Label\": \"%s\", \"Timestamps\": [%s], \"Values\": [%s], "
					    "\"StatusCode\": \"PartialData\", \"Messages\": []}",
					 first ? "" : ",", v, tags[m], names[m], ts.s ? ts.s : "", vals.s ? vals.s : "");
			first = 0;
			buf_release(&ts);
			buf_release(&vals);
		}
	buf_adds(b, ",\n {\"Id\": \"q9\", \"Timestamps\": [\"not ours\"], \"Values\": [true]}]");
	if (next) {
		buf_adds(b, ", \"NextToken\": ");
		buf_add_json_str(b, next);
	}
	buf_adds(b, "}\n");
}

/* The same series as `aws cloudwatch get-metric-data --output json` prints them. */
static void cli_export(struct buf *b)
{
	buf_adds(b, "{\"MetricDataResults\": [");
	for (int v = 0; v < NVOL; v++)
		for (int m = 0; m < metric_count(v); m++) {
			buf_addf(b, "%s{\"Id\": \"m%d\", \"Label\": \"%s %s %s %d\", \"Timestamps\": [", v || m ? ",\n" : "", m,
				 ids[v], names[m], m == 4 ? "Minimum" : "Sum", PERIOD);
			int n = 0;
			for (int k = 0; k < POINTS; k++) {
				if (isnan(series[v][m][k]))
					continue;
				char ts[21];
				em_format_time(START + (time_t)k * PERIOD, ts);
				buf_addf(b, "%s\"%s\"", n++ ? "," : "", ts);
			}
			buf_adds(b, "], \"Values\": [");
			n = 0;
			for (int k = 0; k < POINTS; k++)
				if (!isnan(series[v][m][k]))
					buf_addf(b, "%s%.17g", n++ ? "," : "", series[v][m][k]);
			buf_adds(b, "], \"StatusCode\": \"Complete\"}");
		}
	buf_adds(b, "], \"Messages\": []}\n");
}

static void add_fleet(struct fleet *f)
{
	static const enum ebs_type types[NVOL] = {EBS_GP2, EBS_GP2, EBS_GP3};
	static const int64_t sizes[NVOL] = {100, 500, 800};
	fleet_init(f);
	for (int v = 0; v < NVOL; v++) {
		struct volume *vol = fleet_add_volume(f, ids[v]);
		vol->type = types[v];
		vol->size_gib = sizes[v];
		vol->iops = types[v] == EBS_GP2 ? ebs_gp2_baseline_iops(sizes[v]) : 3000;
		vol->throughput = types[v] == EBS_GP3 ? 125 : 0;
	}
}

static double nan_sum(double a, double b)
{
	return isnan(a) && isnan(b) ? NAN : (isnan(a) ? 0 : a) + (isnan(b) ? 0 : b);
}

static int same_figures(const struct volume_metrics *a, const struct volume_metrics *b)
{
	return a->has == b->has && a->p99_iops == b->p99_iops && a->max_iops == b->max_iops &&
	       a->p99_mibps == b->p99_mibps && a->max_mibps == b->max_mibps &&
	       a->min_burst_balance == b->min_burst_balance && a->share_at_iops_ceiling == b->share_at_iops_ceiling &&
	       a->share_at_tput_ceiling == b->share_at_tput_ceiling;
}

static void test_streamed_equals_tree(void)
{
	make_series();
	em_set_now(START + (time_t)POINTS * PERIOD);
	struct cw_batch b;
	cw_batch_init(&b, NVOL, POINTS, START, PERIOD);
	struct buf page = BUF_INIT, err = BUF_INIT;
	char *next = NULL;
	answer(&page, 0, 1500, "page/2 \xc3\xa9\\\"");
	CHECK_I64(aws_cloudwatch_read_answer(&b, page.s, page.len, "answer 1", &next, &err), 0);
	CHECK_STR(err.s ? err.s : "", "");
	CHECK_STR(next, "page/2 \xc3\xa9\\\"");
	free(next);
	buf_reset(&page);
	answer(&page, 1500, POINTS, NULL);
	CHECK_I64(aws_cloudwatch_read_answer(&b, page.s, page.len, "answer 2", &next, &err), 0);
	CHECK(next == NULL);

	struct fleet streamed, tree;
	add_fleet(&streamed);
	add_fleet(&tree);
	static double ops[POINTS], bytes[POINTS];
	for (int v = 0; v < NVOL; v++) {
		const double *s = b.values + (size_t)v * CW_METRICS * POINTS;
		for (int k = 0; k < POINTS; k++) {
			ops[k] = nan_sum(s[k], s[POINTS + k]);
			bytes[k] = nan_sum(s[2 * POINTS + k], s[3 * POINTS + k]);
		}
		cw_reduce(&streamed.vols[v].metrics, &streamed.vols[v], PERIOD, ops, bytes, POINTS, s + 4 * POINTS, POINTS);
	}
	struct buf cli = BUF_INIT;
	cli_export(&cli);
	CHECK_I64(aws_cloudwatch_load_export(&tree, cli.s, cli.len, "cli.json", &err), NVOL);
	for (int v = 0; v < NVOL; v++) {
		const struct volume_metrics *a = &streamed.vols[v].metrics, *t = &tree.vols[v].metrics;
		printf("# %s: p99 %.3f IOPS (max %.3f), p99 %.4f MiB/s (max %.4f), burst >= %.3f, at ceiling %.4f/%.4f\n",
		       ids[v], a->p99_iops, a->max_iops, a->p99_mibps, a->max_mibps, a->min_burst_balance,
		       a->share_at_iops_ceiling, a->share_at_tput_ceiling);
		CHECK(a->has);
		CHECK(same_figures(a, t));
	}
	/* real numbers, not zeros: the burst hours and the gp2 ceiling show */
	CHECK(streamed.vols[0].metrics.p99_iops > 300 && streamed.vols[0].metrics.max_iops > 900);
	CHECK(streamed.vols[1].metrics.share_at_iops_ceiling > 0);
	CHECK(streamed.vols[0].metrics.min_burst_balance >= 0 && streamed.vols[0].metrics.min_burst_balance < 100);
	CHECK(streamed.vols[2].metrics.min_burst_balance < 0);

	/* The reduced figures inventory --save writes come back unchanged, lookback included. */
	struct buf saved = BUF_INIT;
	struct jsonw sw;
	aws_cloudwatch_export_begin(&sw, &saved);
	for (int v = 0; v < NVOL; v++) {
		streamed.vols[v].metrics.lookback_s = 14 * 86400;
		aws_cloudwatch_export_volume(&sw, &streamed.vols[v]);
	}
	aws_cloudwatch_export_end(&sw);
	struct fleet replay;
	add_fleet(&replay);
	CHECK_I64(aws_cloudwatch_load_export(&replay, saved.s, saved.len, "metrics.json", &err), NVOL);
	for (int v = 0; v < NVOL; v++) {
		CHECK(same_figures(&replay.vols[v].metrics, &streamed.vols[v].metrics));
		CHECK_I64(replay.vols[v].metrics.lookback_s, 14 * 86400);
	}
	printf("# series as an AWS CLI export: %zu bytes; reduced figures: %zu bytes\n", cli.len, saved.len);
	CHECK(saved.len * 100 < cli.len);
	fleet_release(&streamed);
	fleet_release(&tree);
	fleet_release(&replay);
	buf_release(&cli);
	buf_release(&saved);
	buf_release(&page);
	buf_release(&err);
	cw_batch_release(&b);
}

static void expect_error(const char *text, const char *want)
{
	struct cw_batch b;
	cw_batch_init(&b, 2, 4, START, PERIOD);
	struct buf err = BUF_INIT;
	char *next = NULL;
	int rc = aws_cloudwatch_read_answer(&b, text, strlen(text), "answer", &next, &err);
	CHECK_I64(rc, EM_ESERVER);
	CHECK_STR(err.s ? err.s : "", want);
	CHECK(next == NULL);
	buf_release(&err);
	cw_batch_release(&b);
}

static void test_answer_errors(void)
{
	expect_error("{\"MetricDataResults\":[{\"Id\":\"v0_r\",\"Timestamps\":[1790553600,\"x\"],\"Values\":[1,2]}]}",
		     "answer: MetricDataResults[0].Timestamps[1]: must be a number (seconds since 1970), got a string");
	expect_error("{\"MetricDataResults\":[{\"Id\":\"v1_b\",\"Timestamps\":[1790553600],\"Values\":[100.5]}]}",
		     "answer: MetricDataResults[0].Values[0]: 100.5 is outside 0..100 (BurstBalance Minimum over 300 s)");
	expect_error("{\"MetricDataResults\":[{}, {\"Timestamps\":[1,2],\"Values\":[1],\"Id\":\"v0_w\"}]}",
		     "answer: MetricDataResults[1]: 2 Timestamps but 1 Values");
	expect_error("{\"MetricDataResults\":[{\"Id\":\"v0_W\",\"Timestamps\":{},\"Values\":[]}]}",
		     "answer: MetricDataResults[0].Timestamps: must be an array, got an object");
	expect_error("{\"MetricDataResults\":[{\"Id\":\"v0_R\",\"Timestamps\":[1],\"Values\":[-1]}]}",
		     "answer: MetricDataResults[0].Values[0]: -1 is outside 0..3e+13 (VolumeReadBytes Sum over 300 s)");
	expect_error("{\"MetricDataResults\":[{\"Id\":\"v0_r\",\"Timestamps\":[1],\"Values\":[1e999]}]}",
		     "answer: MetricDataResults[0].Values[0]: inf is outside 0..3e+09 (VolumeReadOps Sum over 300 s)");
	expect_error("{\"MetricDataResults\":[]} x", "answer: not valid JSON at line 1, column 26: unexpected data after "
						     "the JSON document");
	expect_error("{\"MetricDataResults\":[{\"Id\":\"v0_r\",\"Timestamps\":[1,],\"Values\":[1]}]}",
		     "answer: not valid JSON at line 1, column 52: expected a value");
	expect_error("{\"MetricDataResults\":\"no\"}", "answer: MetricDataResults: must be an array, got a string");
	expect_error("", "answer: empty answer, expected JSON");
	expect_error("{\"NextToken\":\"\\ud800\"}", "answer: not valid JSON at line 1, column 21: unpaired UTF-16 "
						  "surrogate in a string");

	/* Results that are not ours (other ids, positions past the batch) are skipped unchecked;
	 * a NextToken that is not a string ends the paging. */
	struct cw_batch b;
	cw_batch_init(&b, 2, 4, START, PERIOD);
	struct buf err = BUF_INIT;
	char *next = NULL;
	const char *ok = "{\"\":0,\"MetricDataResults\":[{\"\":\"\",\"Id\":\"\"},{\"Id\":\"v2_r\",\"Timestamps\":[\"x\"],\"Values\":[]},"
			 "{\"Id\":\"zz\",\"Values\":null},{\"Id\":\"v1_W\",\"Timestamps\":[1790553900, 1790555000],"
			 "\"Values\":[7.5, 1]}],\"NextToken\":5}";
	CHECK_I64(aws_cloudwatch_read_answer(&b, ok, strlen(ok), "answer", &next, &err), 0);
	CHECK(next == NULL);
	const double *w = b.values + (1 * CW_METRICS + 3) * 4;
	CHECK(isnan(w[0]) && w[1] == 7.5 && isnan(w[2]) && isnan(w[3]));
	buf_release(&err);
	cw_batch_release(&b);
}

/* Numbers in every form an answer may write them read exactly as strtod reads them (the
 * reader takes a shortcut for short decimals). */
static void test_numbers_as_strtod(void)
{
	enum { N = 3000 };
	struct buf page = BUF_INIT, ts = BUF_INIT, vals = BUF_INIT, err = BUF_INIT;
	static char text[N][40];
	for (int k = 0; k < N; k++) {
		double x = uniform() * pow(10, (double)(k % 10));
		switch (k % 6) {
		case 0: snprintf(text[k], sizeof text[k], "%.17g", x); break;
		case 1: snprintf(text[k], sizeof text[k], "%.0f", x); break;
		case 2: snprintf(text[k], sizeof text[k], "%.*f", k % 9, x); break;
		case 3: snprintf(text[k], sizeof text[k], "%.15e", x); break;
		case 4: snprintf(text[k], sizeof text[k], "%.3E", x * 1e-20); break;
		default: snprintf(text[k], sizeof text[k], "0.%0*d", k % 25 + 1, k); break;
		}
		buf_addf(&ts, "%s%lld", k ? "," : "", (long long)(START + (time_t)k * PERIOD));
		buf_addf(&vals, "%s%s", k ? "," : "", text[k]);
	}
	buf_addf(&page, "{\"MetricDataResults\":[{\"Id\":\"v0_r\",\"Timestamps\":[%s],\"Values\":[%s]}]}", ts.s, vals.s);
	struct cw_batch b;
	cw_batch_init(&b, 1, N, START, PERIOD);
	char *next = NULL;
	CHECK_I64(aws_cloudwatch_read_answer(&b, page.s, page.len, "answer", &next, &err), 0);
	int same = 0;
	for (int k = 0; k < N; k++) {
		double want = strtod(text[k], NULL);
		same += memcmp(&b.values[k], &want, sizeof want) == 0;
		if (memcmp(&b.values[k], &want, sizeof want) != 0)
			printf("# '%s' read as %.17g, strtod says %.17g\n", text[k], b.values[k], want);
	}
	CHECK_I64(same, N);
	cw_batch_release(&b);
	buf_release(&page);
	buf_release(&ts);
	buf_release(&vals);
	buf_release(&err);
}

int main(void)
{
	test_numbers_as_strtod();
	test_streamed_equals_tree();
	test_answer_errors();
	return tap_done();
}
