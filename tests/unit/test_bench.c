/* test_bench.c - bench.c and friends: cliff detection on synthetic IOPS series (the field notes'
 * 45-minute gp2 run among them), verdicts, the ledger round trip, import with IOPS logs, writers,
 * the Job template and pod log format, and real local fio runs on a temp directory (skipped
 * piecewise when fio is not installed). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/bench.h"
#include "ebsmigrate/bench_kube.h"
#include "ebsmigrate/bench_output.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/embedded.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/ledger_bench.h"
#include "tap.h"

static char tmpdir[] = "/tmp/em-bench-XXXXXX";

static uint64_t rng = 88172645463325252ull;
/* Uniform in [-1, 1), deterministic. */
static double noise(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng % 2000000) / 1000000.0 - 1.0;
}

/* A number at a dotted path, NAN when absent. */
static double num_at(const cJSON *j, const char *path)
{
	const cJSON *v = jsonx_path(j, path);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void push(struct fio_series *s, int64_t t_ms, double v)
{
	if (s->n >= s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 64;
		s->t_ms = xrealloc(s->t_ms, s->alloc * sizeof *s->t_ms);
		s->iops = xrealloc(s->iops, s->alloc * sizeof *s->iops);
	}
	s->t_ms[s->n] = t_ms;
	s->iops[s->n] = v;
	s->n++;
}

/* A 100 GiB gp2 volume under a 3,000-IOPS qd32 load for 45 minutes, second by second, from the
 * credit model: 5.4M credits, spent at 3,000 - 300 per second, then the 300 baseline. Integer
 * IOPS with fio's +-4 jitter around 3,001. */
static void gp2_45min(struct fio_series *s, int field_like)
{
	double credits = 5400000;
	for (int t = 1; t <= 2700; t++) {
		double v;
		if (credits >= 2700) {
			v = 3001 + round(noise() * 4);
			credits -= 2700;
		} else {
			v = 300 + credits + round(noise() * 3);
			credits = 0;
		}
		if (field_like && t == 1)
			v = 5997; /* the notes' odd first sample */
		if (field_like && t == 1999)
			v = 2659; /* the second the bucket ran dry in */
		if (field_like && t >= 2000 && v > 1000)
			v = 300;
		push(s, (int64_t)t * 1000, v);
	}
}

static void test_cliff(void)
{
	struct fio_series s = {0};
	struct bench_cliff c;
	gp2_45min(&s, 0);
	CHECK(bench_detect_cliff(&s, &c) == 1);
	printf("# gp2 45 min (credit model): cliff at %.0f s, %.1f -> %.1f\n", c.at_s, c.before_iops, c.after_iops);
	CHECK(fabs(c.at_s - 2000) <= 1);
	CHECK(fabs(c.before_iops - 3001) <= 1);
	CHECK(fabs(c.after_iops - 300) <= 1);
	fio_series_release(&s);

	gp2_45min(&s, 1);
	CHECK(bench_detect_cliff(&s, &c) == 1);
	printf("# gp2 45 min (field-like samples): cliff at %.0f s, %.1f -> %.1f\n", c.at_s, c.before_iops,
	       c.after_iops);
	CHECK(fabs(c.at_s - 2000) <= 1);
	CHECK(fabs(c.before_iops - 3001) <= 1 && fabs(c.after_iops - 300) <= 1);
	fio_series_release(&s);

	/* clean step */
	for (int t = 1; t <= 120; t++)
		push(&s, t * 1000, t <= 60 ? 1000 : 100);
	CHECK(bench_detect_cliff(&s, &c) == 1);
	CHECK(c.at_s == 60 && c.before_iops == 1000 && c.after_iops == 100);
	fio_series_release(&s);

	/* noisy step: +-15 % on both levels */
	for (int t = 1; t <= 600; t++)
		push(&s, t * 1000, t <= 300 ? 3000 * (1 + 0.15 * noise()) : 600 * (1 + 0.15 * noise()));
	CHECK(bench_detect_cliff(&s, &c) == 1);
	printf("# noisy step: at %.0f s, %.0f -> %.0f\n", c.at_s, c.before_iops, c.after_iops);
	CHECK(fabs(c.at_s - 300) <= 3);
	CHECK(fabs(c.before_iops - 3000) < 150 && fabs(c.after_iops - 600) < 30);
	fio_series_release(&s);

	/* no step: +-15 % noise, and gp3's flat 3,001 +- 10 with an odd first sample */
	for (int t = 1; t <= 600; t++)
		push(&s, t * 1000, 3000 * (1 + 0.15 * noise()));
	CHECK(bench_detect_cliff(&s, &c) == 0);
	struct bench_step steps[8];
	CHECK_I64(bench_detect_steps(&s, steps, 8), 0);
	fio_series_release(&s);
	for (int t = 1; t <= 600; t++)
		push(&s, t * 1000, t == 1 ? 5997 : 3001 + round(noise() * 10));
	CHECK(bench_detect_cliff(&s, &c) == 0);
	fio_series_release(&s);

	/* two steps down: the cliff is the first; both are found */
	for (int t = 1; t <= 1800; t++)
		push(&s, t * 1000, (t <= 600 ? 3000 : t <= 1200 ? 1500 : 300) + noise() * 20);
	CHECK_I64(bench_detect_steps(&s, steps, 8), 2);
	CHECK(fabs(steps[0].at_s - 600) <= 1 && fabs(steps[1].at_s - 1200) <= 1);
	CHECK(bench_detect_cliff(&s, &c) == 1);
	CHECK(fabs(c.at_s - 600) <= 1);
	CHECK(fabs(c.before_iops - 3000) < 20 && fabs(c.after_iops - 1500) < 20);
	fio_series_release(&s);

	/* up, then down (a refilled bucket): the cliff is the step down, its before level the high one */
	for (int t = 1; t <= 700; t++)
		push(&s, t * 1000, t <= 100 ? 300 : t <= 400 ? 3000 : 300);
	CHECK_I64(bench_detect_steps(&s, steps, 8), 2);
	CHECK(steps[0].after > steps[0].before);
	CHECK(bench_detect_cliff(&s, &c) == 1);
	CHECK(c.at_s == 400 && c.before_iops == 3000 && c.after_iops == 300);
	fio_series_release(&s);

	/* one outlier second is not a cliff; too short a series is not judged */
	for (int t = 1; t <= 200; t++)
		push(&s, t * 1000, t == 100 ? 10 : 3000);
	CHECK(bench_detect_cliff(&s, &c) == 0);
	fio_series_release(&s);
	for (int t = 1; t <= 5; t++)
		push(&s, t * 1000, t <= 2 ? 3000 : 300);
	CHECK(bench_detect_cliff(&s, &c) == 0);
	fio_series_release(&s);
	CHECK(bench_detect_cliff(&s, &c) == 0); /* empty */
}

/* A job as runners make them. */
static struct bench_job *add_job(struct bench_run *r, const char *profile, double riops, double rmibps, double p99,
				 double wiops, double wp99)
{
	struct fio_job j;
	memset(&j, 0, sizeof j);
	const struct fio_profile *p = fio_profile_find(profile);
	j.name = (char *)profile;
	j.profile = p ? (char *)p->name : NULL;
	j.kind = p ? p->kind : FIO_KIND_IOPS;
	j.bs = p ? p->bs : 4096;
	j.iodepth = p ? p->iodepth : 32;
	j.options_json = (char *)"{}";
	j.read.lat.mean = j.read.lat.p50 = j.read.lat.p95 = j.read.lat.p99 = j.read.lat.p99_9 = NAN;
	j.write.lat = j.read.lat;
	if (riops > 0) {
		j.read.present = 1;
		j.read.iops = riops;
		j.read.mibps = rmibps;
		j.read.lat.p99 = p99;
		j.read.lat.p50 = p99 / 2;
	}
	if (wiops > 0) {
		j.write.present = 1;
		j.write.iops = wiops;
		j.write.mibps = wiops * (j.bs / 1048576.0);
		j.write.lat.p99 = wp99;
	}
	return bench_run_add_job(r, &j, NULL);
}

static void set_volume(struct bench_run *r, const char *type, int64_t iops, int64_t tput)
{
	r->has_volume = 1;
	r->volume.type = xstrdup(type);
	r->volume.size_gib = 100;
	r->volume.iops = iops;
	r->volume.throughput = tput;
}

static const struct bench_profile_cmp *find_cmp(const struct bench_comparison *c, const char *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->profiles[i].key, key) == 0)
			return &c->profiles[i];
	return NULL;
}

/* p99 rules: the larger of --tolerance and --latency-floor-ms allows; both 0 is strict. */
static void test_compare_rules(void)
{
	struct bench_run b, a;
	bench_run_init(&b);
	bench_run_init(&a);
	b.id = 1, a.id = 2;
	add_job(&b, "latency-qd1", 8900, 34.8, 0.112, 0, 0);
	add_job(&a, "latency-qd1", 8800, 34.4, 0.134, 0, 0);
	add_job(&b, "randwrite-qd32", 0, 0, 0, 3000, 3.0);
	add_job(&a, "randwrite-qd32", 0, 0, 0, 3000, 3.25);
	struct bench_comparison c;
	struct buf err = BUF_INIT;
	/* defaults: 0.022 ms is within the 0.2 ms floor; +0.25 ms = +8.3 % is within 10 % */
	CHECK(bench_compare(&c, &b, &a, &err) == 0 && c.verdict == BENCH_PASS);
	CHECK(c.rules.tolerance_pct == 10 && c.rules.latency_floor_ms == 0.2);
	const struct bench_profile_cmp *p = find_cmp(&c, "latency-qd1");
	CHECK(p && p->n_checks == 1 && p->checks[0].ok && fabs(p->checks[0].expected - 0.312) < 1e-12);
	CHECK(p && strcmp(p->checks[0].text, "read p99 0.134 ms <= 0.112 ms before + 0.200 ms floor (0.312)") == 0);
	p = find_cmp(&c, "randwrite-qd32");
	CHECK(p && p->n_checks == 1 && strcmp(p->checks[0].rule, "write-p99") == 0 && p->checks[0].ok);
	CHECK(p && fabs(p->checks[0].expected - 3.3) < 1e-12);
	bench_comparison_release(&c);
	/* strict: both fail */
	struct bench_rules strict = {0, 0, 0};
	CHECK(bench_compare_with(&c, &b, &a, &strict, &err) == 0 && c.verdict == BENCH_FAIL);
	p = find_cmp(&c, "latency-qd1");
	CHECK(p && p->verdict == BENCH_FAIL && p->checks[0].expected == 0.112);
	p = find_cmp(&c, "randwrite-qd32");
	CHECK(p && p->verdict == BENCH_FAIL);
	bench_comparison_release(&c);
	/* tolerance 0, default floor: the floor still covers 0.022 ms, not 0.25 ms */
	struct bench_rules floor_only = {0, BENCH_DEFAULT_LATENCY_FLOOR_MS, 0};
	CHECK(bench_compare_with(&c, &b, &a, &floor_only, &err) == 0 && c.verdict == BENCH_FAIL);
	CHECK(find_cmp(&c, "latency-qd1")->verdict == BENCH_PASS);
	CHECK(find_cmp(&c, "randwrite-qd32")->verdict == BENCH_FAIL);
	bench_comparison_release(&c);
	/* equal p99 passes even when strict */
	a.jobs[0].read.lat.p99 = 0.112;
	a.jobs[1].write.lat.p99 = 3.0;
	CHECK(bench_compare_with(&c, &b, &a, &strict, &err) == 0 && c.verdict == BENCH_PASS);
	bench_comparison_release(&c);
	bench_run_release(&a);
	bench_run_release(&b);
	buf_release(&err);
}

static void test_compare(void)
{
	struct bench_run b, a;
	bench_run_init(&b);
	bench_run_init(&a);
	b.id = 1, a.id = 2;
	set_volume(&b, "gp2", 300, 0);
	set_volume(&a, "gp3", 3000, 125);
	/* The field notes' numbers: gp2 after its cliff vs gp3. */
	add_job(&b, "randread-qd32", 1523, 5.9, 109.6, 0, 0);
	add_job(&b, "randwrite-qd32", 0, 0, 0, 601, 133.7);
	add_job(&b, "latency-qd1", 603, 2.4, 3.555, 0, 0);
	add_job(&b, "seq-read-1m", 130.3, 130.3, 80, 0, 0);
	add_job(&a, "randread-qd32", 3001, 11.7, 12.9, 0, 0);
	add_job(&a, "randwrite-qd32", 0, 0, 0, 3025, 12.0);
	add_job(&a, "latency-qd1", 1759, 6.9, 0.872, 0, 0);
	add_job(&a, "seq-read-1m", 127.3, 127.3, 85, 0, 0);  /* p99 +6 %: within 10 % */
	add_job(&a, "seq-write-1m", 126, 0, 0, 0, 0);        /* only in the after run */
	a.jobs[a.n_jobs - 1].read.present = 0;
	a.jobs[a.n_jobs - 1].write.present = 1;
	a.jobs[a.n_jobs - 1].write.mibps = 126.0;
	a.jobs[a.n_jobs - 1].write.iops = 126.0;
	struct bench_comparison c;
	struct buf err = BUF_INIT;
	CHECK(bench_compare(&c, &b, &a, &err) == 0);
	CHECK(c.verdict == BENCH_PASS);
	const struct bench_profile_cmp *p = find_cmp(&c, "randread-qd32");
	CHECK(p && p->verdict == BENCH_PASS && p->n_checks == 2);
	CHECK(p && strcmp(p->checks[0].rule, "iops") == 0 && p->checks[0].expected == 2850);
	CHECK(p && strcmp(p->checks[1].rule, "read-p99") == 0);
	p = find_cmp(&c, "latency-qd1");
	CHECK(p && p->verdict == BENCH_PASS && p->n_checks == 1 && strcmp(p->checks[0].rule, "read-p99") == 0);
	/* one I/O in flight cannot show 3,000 IOPS; randread-qd32 did */
	CHECK(p && p->n_notes == 1 &&
	      strcmp(p->notes[0], "1 I/O in flight at 0.436 ms (median: fio reported no mean) reaches at most 2,294 IOPS; "
				  "the provisioned IOPS are verified by randread-qd32") == 0);
	CHECK(c.figures[BENCH_FIGURE_IOPS].state == BENCH_FIGURE_VERIFIED &&
	      strcmp(c.figures[BENCH_FIGURE_IOPS].by, "randread-qd32") == 0);
	CHECK(c.figures[BENCH_FIGURE_THROUGHPUT].state == BENCH_FIGURE_VERIFIED);
	p = find_cmp(&c, "seq-read-1m");
	CHECK(p && p->verdict == BENCH_PASS && strcmp(p->checks[0].rule, "throughput") == 0);
	CHECK(p && p->checks[0].expected == 0.95 * 125);
	p = find_cmp(&c, "seq-write-1m");
	CHECK(p && p->verdict == BENCH_PASS && p->n_checks == 1); /* provisioned only: no before */

	struct buf out = BUF_INIT;
	bench_write_compare(&out, &c, FORMAT_TABLE);
	CHECK(strstr(out.s, "verdict: pass (5 pass, 0 fail, 0 not judged)") != NULL);
	CHECK(strstr(out.s, "3001 IOPS >= 95 % of 3000 provisioned (2850)") != NULL);
	printf("%s", out.s);
	buf_reset(&out);
	bench_write_compare(&out, &c, FORMAT_JSON);
	cJSON *j = cJSON_Parse(out.s);
	CHECK(j != NULL);
	CHECK_STR(jsonx_str(j, "schema"), "ebsmigrate.bench/v1");
	CHECK_STR(jsonx_path_str(j, "compare.verdict"), "pass");
	CHECK(cJSON_GetArraySize(jsonx_get(j, "runs")) == 2);
	const cJSON *p0 = cJSON_GetArrayItem(jsonx_path(j, "compare.profiles"), 0);
	CHECK_STR(jsonx_str(p0, "profile"), "randread-qd32");
	CHECK(fabs(num_at(p0, "deltas.iops_pct") - (3001.0 - 1523) / 1523 * 100) < 1e-9);
	cJSON_Delete(j);
	buf_reset(&out);
	bench_write_compare(&out, &c, FORMAT_MARKDOWN);
	CHECK(strstr(out.s, "| profile | metric | before | after | change |") != NULL);
	CHECK(strstr(out.s, "**Overall: pass**") != NULL);
	bench_comparison_release(&c);

	/* gp3 short of its IOPS, and p99 worse by 20 %: both fail */
	a.jobs[0].read.iops = 2500;
	a.jobs[2].read.lat.p99 = 3.555 * 1.2;
	a.jobs[1].read = a.jobs[1].read; /* unchanged */
	b.jobs[2].read.lat.p99 = 3.555;
	CHECK(bench_compare(&c, &b, &a, &err) == 0);
	CHECK(c.verdict == BENCH_FAIL);
	p = find_cmp(&c, "randread-qd32");
	CHECK(p && p->verdict == BENCH_FAIL && !p->checks[0].ok && p->checks[1].ok);
	p = find_cmp(&c, "latency-qd1");
	CHECK(p && p->verdict == BENCH_FAIL && !p->checks[0].ok);
	buf_reset(&out);
	bench_write_compare(&out, &c, FORMAT_TABLE);
	CHECK(strstr(out.s, "2500 IOPS < 95 % of 3000 provisioned (2850)") != NULL);
	bench_comparison_release(&c);

	/* unknown provisioned values: only p99 is judged; a gp2 after run is not held to "provisioned" */
	free(a.volume.type);
	a.volume.type = xstrdup("gp2");
	a.jobs[0].read.iops = 3001;
	a.jobs[2].read.lat.p99 = 0.872;
	CHECK(bench_compare(&c, &b, &a, &err) == 0);
	p = find_cmp(&c, "randread-qd32");
	CHECK(p && p->n_checks == 1 && strcmp(p->checks[0].rule, "read-p99") == 0);
	CHECK(p && p->n_notes && strstr(p->notes[0], "gp2"));
	p = find_cmp(&c, "seq-write-1m");
	CHECK(p && p->verdict == BENCH_NOT_JUDGED);
	bench_comparison_release(&c);

	/* a limit the run cannot reach is not verified: 32 in flight at the qd1 job's 0.436 ms reach
	 * 73,394 IOPS, short of 95 % of 80,000 */
	free(a.volume.type);
	a.volume.type = xstrdup("gp3");
	a.volume.iops = 80000;
	a.volume.throughput = 2000;
	CHECK(bench_compare(&c, &b, &a, &err) == 0);
	CHECK(c.verdict == BENCH_NOT_VERIFIED);
	p = find_cmp(&c, "randread-qd32");
	CHECK(p && p->verdict == BENCH_NOT_VERIFIED && p->n_checks == 1 && p->n_notes == 1);
	CHECK(p && strcmp(p->notes[0], "32 I/Os in flight at 0.436 ms (the after run's latency with nothing queued) reach "
				       "at most 73,394 IOPS; run with iodepth ≥ 64 to verify 80,000") == 0);
	CHECK(c.figures[BENCH_FIGURE_IOPS].state == BENCH_FIGURE_NOT_VERIFIED);
	bench_comparison_release(&c);

	/* nothing in common */
	struct bench_run x;
	bench_run_init(&x);
	x.id = 9;
	add_job(&x, "custom", 10, 1, 1, 0, 0);
	buf_reset(&err);
	CHECK(bench_compare(&c, &b, &x, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "bench runs 1 and 9 have no profile in common") != NULL);
	bench_run_release(&x);
	bench_run_release(&a);
	bench_run_release(&b);
	buf_release(&out);
	buf_release(&err);
}

static void test_writers(void)
{
	struct buf b = BUF_INIT;
	bench_json_number(&b, 38287.356322);
	CHECK_STR(b.s, "38287.356322");
	buf_reset(&b);
	bench_json_number(&b, 9240576 / 1e6);
	CHECK(strtod(b.s, NULL) == 9240576 / 1e6);
	buf_reset(&b);
	bench_json_number(&b, NAN);
	CHECK_STR(b.s, "null");
	buf_reset(&b);
	bench_json_number(&b, 3001);
	CHECK_STR(b.s, "3001");
	buf_reset(&b);

	struct fio_series s = {0};
	for (int t = 1; t <= 8; t++)
		push(&s, t * 1000, t <= 4 ? 3000 : 300);
	bench_sparkline(&b, &s, 40);
	CHECK_STR(b.s, "\u2588\u2588\u2588\u2588\u2582\u2582\u2582\u2582");
	buf_reset(&b);
	bench_sparkline(&b, &s, 2);
	CHECK_STR(b.s, "\u2588\u2582");
	buf_reset(&b);
	struct bench_cliff c = {4, 3000, 300};
	bench_write_svg(&b, &s, &c, 480, 160);
	CHECK(strncmp(b.s, "<svg ", 5) == 0 && strstr(b.s, "<polyline") && strstr(b.s, "cliff at 4 s"));
	buf_reset(&b);
	fio_series_release(&s);
	bench_sparkline(&b, &s, 40);
	CHECK_STR(b.s, "-");
	buf_release(&b);

	CHECK(bench_log_prefix(&b, "/x/randread-qd32_iops.1.log") == 0);
	CHECK_STR(b.s, "randread-qd32");
	buf_reset(&b);
	CHECK(bench_log_prefix(&b, "gp2_rr_iops.log") == 0);
	CHECK_STR(b.s, "gp2_rr");
	buf_reset(&b);
	CHECK(bench_log_prefix(&b, "a_iops.2.log.10.0.0.1") == 0);
	CHECK_STR(b.s, "a");
	buf_reset(&b);
	CHECK(bench_log_prefix(&b, "a_bw.1.log") == EM_EINPUT);
	CHECK(bench_log_prefix(&b, "_iops.1.log") == EM_EINPUT);
	CHECK(bench_log_prefix(&b, "a_iops.1.txt") == EM_EINPUT);
	buf_release(&b);
}

static const char *tmp_path(const char *rel)
{
	static char paths[8][4096];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, sizeof paths[0], "%s/%s", tmpdir, rel);
	return p;
}

static int read_fixture(const char *name, struct buf *out)
{
	char rel[256];
	snprintf(rel, sizeof rel, "tests/unit/data/fio/%s", name);
	struct buf err = BUF_INIT;
	int rc = em_read_file(tap_src_path(rel), out, &err);
	buf_release(&err);
	return rc;
}

static void test_ledger_and_import(void)
{
	struct ledger *db = NULL;
	struct buf err = BUF_INIT;
	CHECK(ledger_open(&db, tmp_path("bench.db"), &err) == 0);
	struct bench_store store; /* the runners store through the ledger store, as cmd_bench.c does */
	bench_ledger_store(&store, db);
	if (!db) {
		printf("# %s\n", err.s);
		return;
	}
	CHECK(ledger_schema_version(db) >= 4);

	/* import the field notes' gp3 JSON with a 600 s IOPS log, as "after" */
	struct buf json = BUF_INIT, log = BUF_INIT;
	CHECK(read_fixture("fio-3.36-gp3-randread.json", &json) == 0);
	for (int t = 1; t <= 600; t++)
		buf_addf(&log, "%d, %d, 0, 0, 0\n", t * 1000 + 3, t == 1 ? 5997 : 3001 + (t % 7) - 3);
	struct bench_log_file lf = {"gp3_rr_iops.1.log", log.s, log.len};
	struct bench_run run;
	bench_run_init(&run);
	run.label = xstrdup("gp3-field");
	run.has_volume = 1;
	run.volume.volume_id = xstrdup("vol-0gp3");
	run.volume.type = xstrdup("gp3");
	CHECK(bench_link_migration(&store, &run, &err) == 0);
	CHECK_STR(run.phase, "after"); /* no ledger row: from the type */
	CHECK(bench_import(&store, &run, json.s, json.len, "gp3.json", &lf, 1, &err) == 0);
	CHECK(run.id > 0 && run.n_jobs == 1);
	CHECK_STR(run.options_json, "{\"file\":\"gp3.json\"}"); /* the bytes stored before jsonw wrote them */
	CHECK_I64(run.jobs[0].series.n, 600);
	CHECK(!run.jobs[0].has_cliff);
	int64_t gp3_id = run.id;
	bench_run_release(&run);

	/* and a gp2 run with the 45-minute series: its cliff is stored */
	struct buf log2 = BUF_INIT;
	struct fio_series s = {0};
	gp2_45min(&s, 1);
	for (size_t i = 0; i < s.n; i++)
		buf_addf(&log2, "%lld, %.0f, 0, 0, 0\n", (long long)s.t_ms[i] + 2, s.iops[i]);
	fio_series_release(&s);
	/* The gp3 document stands in for the gp2 one (same job, another log prefix). */
	struct bench_log_file lf2 = {"gp2_rr_iops.1.log", log2.s, log2.len};
	bench_run_init(&run);
	run.label = xstrdup("gp2-field");
	run.has_volume = 1;
	run.volume.volume_id = xstrdup("vol-0gp3");
	run.volume.type = xstrdup("gp2");
	run.phase = xstrdup("before");
	buf_reset(&err);
	CHECK(bench_import(&store, &run, json.s, json.len, "gp2.json", &lf2, 1, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "IOPS log 'gp2_rr_iops.1.log' matches no job's write_iops_log prefix; jobs: gp3-randread "
			    "(gp3_rr)") != NULL);
	CHECK(run.id == 0); /* nothing stored */
	struct bench_log_file lf3 = {"anything.log", log2.s, log2.len}; /* one job, one log: they match */
	buf_reset(&err);
	CHECK(bench_import(&store, &run, json.s, json.len, "gp2.json", &lf3, 1, &err) == 0);
	CHECK(run.jobs[0].has_cliff && fabs(run.jobs[0].cliff.at_s - 2000) <= 1);
	int64_t gp2_id = run.id;
	bench_run_release(&run);

	/* load back */
	CHECK(ledger_bench_run_load(db, gp2_id, 1, &run, &err) == 0);
	CHECK_STR(run.label, "gp2-field");
	CHECK_STR(run.source, "import");
	CHECK_STR(run.status, "ok");
	CHECK_STR(run.fio_version, "fio-3.36");
	CHECK_STR(run.phase, "before");
	CHECK_STR(run.volume.type, "gp2");
	CHECK(run.n_jobs == 1 && run.jobs[0].series.n == 2700);
	CHECK(run.jobs[0].read.iops == 3000.918457);
	CHECK(run.jobs[0].read.lat.p99 == 12910592 / 1e6);
	CHECK(isnan(run.jobs[0].write.lat.p99) && !run.jobs[0].write.present);
	CHECK(run.jobs[0].has_cliff && fabs(run.jobs[0].cliff.before_iops - 3001) <= 1);
	struct buf out = BUF_INIT;
	bench_write_runs_json(&out, &run, 1);
	cJSON *j = cJSON_Parse(out.s);
	CHECK(j != NULL);
	const cJSON *job = cJSON_GetArrayItem(jsonx_get(cJSON_GetArrayItem(jsonx_get(j, "runs"), 0), "jobs"), 0);
	CHECK(fabs(num_at(job, "cliff.at_s") - 2000) <= 1);
	CHECK(num_at(job, "read.lat_ms.p99") == 12910592 / 1e6);
	CHECK(cJSON_IsNull(jsonx_get(job, "write")));
	CHECK(num_at(job, "series.samples") == 2700);
	cJSON_Delete(j);
	bench_run_release(&run);
	buf_reset(&out);

	int64_t id = 0;
	CHECK(ledger_bench_run_resolve(db, "gp3-field", &id, &err) == 0 && id == gp3_id);
	CHECK(ledger_bench_run_resolve(db, "1", &id, &err) == 0 && id == 1);
	buf_reset(&err);
	CHECK(ledger_bench_run_resolve(db, "nope", &id, &err) == EM_ENOTFOUND);
	CHECK(strstr(err.s, "no bench run with label 'nope'") != NULL);
	int64_t before = 0, after = 0;
	CHECK(ledger_bench_volume_pair(db, "vol-0gp3", &before, &after, &err) == 0);
	CHECK(before == gp2_id && after == gp3_id);
	buf_reset(&err);
	CHECK(ledger_bench_volume_pair(db, "vol-none", &before, &after, &err) == EM_ENOTFOUND);
	size_t n = 0;
	CHECK(ledger_bench_outputs(db, gp3_id, &out, &n, &err) == 0 && n == 1);
	CHECK(strncmp(out.s, "{\n  \"fio version\" : \"fio-3.36\"", 30) == 0);
	int64_t *ids = NULL;
	CHECK(ledger_bench_run_ids(db, &ids, &n, &err) == 0 && n == 2);
	free(ids);

	/* the field pair compares: gp3 delivers 3001 of 3000 with p99 equal */
	struct bench_run r0, r1;
	CHECK(ledger_bench_run_load(db, gp2_id, 1, &r0, &err) == 0);
	CHECK(ledger_bench_run_load(db, gp3_id, 1, &r1, &err) == 0);
	r1.volume.iops = 3000, r1.volume.throughput = 125;
	struct bench_comparison c;
	CHECK(bench_compare(&c, &r0, &r1, &err) == 0 && c.verdict == BENCH_PASS);
	buf_reset(&out);
	bench_write_compare(&out, &c, FORMAT_TABLE);
	CHECK(strstr(out.s, "at 2000 s: 3001 -> 300") || strstr(out.s, "at 1999 s: 3001 -> 300"));
	printf("%s", out.s);
	bench_comparison_release(&c);
	bench_run_release(&r0);
	bench_run_release(&r1);

	buf_release(&out);
	buf_release(&json);
	buf_release(&log);
	buf_release(&log2);
	buf_release(&err);
	ledger_close(db);
}

/* The profile options stored with a run (bench_runs.options_json), now written through jsonw by
 * bench.c and bench_kube.c: the same bytes cJSON printed when both built them as a tree (rows
 * already stored stay comparable). */
static void test_options_json(void)
{
	const struct fio_profile *profiles[] = {fio_profile_find("randread-qd32"), fio_profile_find("seq-read-1m")};
	const char *want = "{\"profiles\":[\"randread-qd32\",\"seq-read-1m\"],\"runtime_s\":60,\"size\":\"4G\","
			   "\"ioengine\":\"libaio\",\"image\":\"x\"}";
	struct bench_workload wl = {NULL, 0, profiles, 2, 60, (uint64_t)4 << 30};
	struct bench_run run = {0};
	struct buf b;
	struct jsonw w;
	CHECK(bench_options_begin(&w, &b, &run, &wl));
	jsonw_key_str(&w, "image", "x");
	bench_options_end(&w, &b, &run);
	CHECK_STR(run.options_json, want);
	CHECK(!bench_options_begin(&w, &b, &run, &wl)); /* options already set: nothing written */
	struct bench_run job = {0};
	wl.job_file_text = 1;
	CHECK(bench_options_begin(&w, &b, &job, &wl));
	bench_options_end(&w, &b, &job);
	CHECK_STR(job.options_json, "{\"job_file\":true}");
	struct bench_run imported = {0};
	CHECK(bench_options_begin(&w, &b, &imported, NULL));
	jsonw_key_str(&w, "file", "gp3.json");
	bench_options_end(&w, &b, &imported);
	CHECK_STR(imported.options_json, "{\"file\":\"gp3.json\"}");
	cJSON *j = cJSON_CreateObject(); /* the tree the writers used to build */
	cJSON *names = cJSON_AddArrayToObject(j, "profiles");
	for (size_t i = 0; i < 2; i++)
		cJSON_AddItemToArray(names, cJSON_CreateString(profiles[i]->name));
	cJSON_AddNumberToObject(j, "runtime_s", 60);
	cJSON_AddStringToObject(j, "size", "4G");
	cJSON_AddStringToObject(j, "ioengine", "libaio");
	cJSON_AddStringToObject(j, "image", "x");
	char *s = cJSON_PrintUnformatted(j);
	CHECK_STR(s, want);
	cJSON_free(s);
	cJSON_Delete(j);
	free(run.options_json);
	free(job.options_json);
	free(imported.options_json);
}

static int dir_entries(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void test_local(void)
{
	char *fio = bench_find_program("fio");
	struct buf err = BUF_INIT;
	struct bench_run run;
	const struct fio_profile *profiles[] = {fio_profile_find("randread-qd32")};
	struct bench_local_options o = {.path = tmp_path("data"), .profiles = profiles, .n_profiles = 1, .runtime_s = 1,
					.size = 4u << 20};
	mkdir(tmp_path("data"), 0755);

	/* errors that come before fio runs */
	bench_run_init(&run);
	o.fio = "/nonexistent/fio";
	CHECK(bench_run_local(NULL, &run, &o, &err) == EM_EUNSUPPORTED);
	CHECK(strstr(err.s, "fio not found at that path: install fio 3.x") != NULL);
	bench_run_release(&run);
	o.fio = NULL;
	if (!fio) {
		printf("# fio not installed: the local runs are skipped\n");
		buf_release(&err);
		return;
	}
	free(fio);
	bench_run_init(&run);
	buf_reset(&err);
	o.path = tmp_path("missing");
	CHECK(bench_run_local(NULL, &run, &o, &err) == EM_ENOTFOUND);
	CHECK(strstr(err.s, "directory '") && strstr(err.s, "/missing' does not exist"));
	buf_reset(&err);
	o.path = tmp_path("bench.db");
	CHECK(bench_run_local(NULL, &run, &o, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "is not a directory") != NULL);
	buf_reset(&err);
	o.path = tmp_path("data");
	o.size = (uint64_t)1 << 50;
	CHECK(bench_run_local(NULL, &run, &o, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "free, less than the 1P test file: pass a smaller --size") != NULL);
	printf("# %s\n", err.s);
	o.size = 4u << 20;
	bench_run_release(&run);

	/* a real run, recorded */
	struct ledger *db = NULL;
	CHECK(ledger_open(&db, tmp_path("local.db"), &err) == 0);
	struct bench_store store; /* the runners store through the ledger store, as cmd_bench.c does */
	bench_ledger_store(&store, db);
	bench_run_init(&run);
	buf_reset(&err);
	int rc = bench_run_local(&store, &run, &o, &err);
	CHECK(rc == 0);
	if (rc)
		printf("# %s\n", err.s);
	CHECK(run.id > 0 && run.n_jobs == 1);
	CHECK_STR(run.status, "ok");
	CHECK(run.n_jobs == 1 && run.jobs[0].read.present && run.jobs[0].read.iops > 0 &&
	      !isnan(run.jobs[0].read.lat.p99));
	CHECK(run.fio_version && strncmp(run.fio_version, "fio-", 4) == 0);
	static const char opts[] = "{\"profiles\":[\"randread-qd32\"],\"runtime_s\":1,\"size\":\"4M\",\"ioengine\":\"libaio\","
				   "\"fio\":\"/";
	CHECK(run.options_json && strncmp(run.options_json, opts, sizeof opts - 1) == 0);
	CHECK_I64(dir_entries(tmp_path("data")), 0); /* its directory is gone */
	bench_run_release(&run);

	/* a job file fio rejects: the message quotes fio; the run is recorded as failed */
	FILE *f = fopen(tmp_path("bad.fio"), "w");
	fputs("[x]\nrw=nonsense\nsize=1M\n", f);
	fclose(f);
	struct bench_local_options ob = o;
	ob.job_file = tmp_path("bad.fio");
	ob.n_profiles = 0;
	bench_run_init(&run);
	buf_reset(&err);
	CHECK(bench_run_local(&store, &run, &ob, &err) == EM_EIO);
	CHECK(strstr(err.s, "fio failed on jobs (exit 1): ") != NULL);
	printf("# %s\n", err.s);
	CHECK_STR(run.status, "failed");
	CHECK_I64(dir_entries(tmp_path("data")), 0);
	int64_t failed_id = run.id;
	bench_run_release(&run);
	CHECK(ledger_bench_run_load(db, failed_id, 0, &run, &err) == 0);
	CHECK_STR(run.status, "failed");
	CHECK(run.error && strstr(run.error, "fio failed"));
	bench_run_release(&run);

	/* stopped before it starts: interrupted, nothing kept, directory clean */
	volatile sig_atomic_t stop = 1;
	struct bench_local_options os = o;
	os.stop = &stop;
	bench_run_init(&run);
	buf_reset(&err);
	CHECK(bench_run_local(&store, &run, &os, &err) == EM_ECONFLICT);
	CHECK(strstr(err.s, "interrupted after 0 of 1 profiles") != NULL);
	CHECK_STR(run.status, "interrupted");
	CHECK_I64(dir_entries(tmp_path("data")), 0);
	bench_run_release(&run);
	ledger_close(db);
	buf_release(&err);
}

struct sections {
	int logs, errs;
	size_t log_len, err_len;
};

static void on_section(void *ctx, const char *name, const char *text, size_t len)
{
	struct sections *s = ctx;
	(void)text;
	if (name && strcmp(name, "randread-qd32_iops.log") == 0) {
		s->logs++;
		s->log_len = len;
	} else if (!name) {
		s->errs++;
		s->err_len = len;
	}
}

static void test_kube_template(void)
{
	const struct embedded_file *tpl = embedded_find(BENCH_KUBE_TEMPLATE);
	CHECK(tpl != NULL);
	if (!tpl)
		return;
	struct buf script = BUF_INIT, json = BUF_INIT, err = BUF_INIT;
	bench_kube_script(&script, "[global]\nruntime=5\n\n[randread-qd32]\nrw=randread\n", "/data/.ebsmigrate-bench-x");
	struct bench_kube_job jb = {"ebsmigrate-bench-abcde-randread-qd32", "db", "randread-qd32", "data-postgres-0",
				    "nixery.dev/shell/fio", script.s, "abcde", 660};
	CHECK(bench_kube_render_job(&json, tpl->data, &jb, &err) == 0);
	cJSON *j = cJSON_Parse(json.s);
	CHECK(j != NULL);
	CHECK_STR(jsonx_str(j, "kind"), "Job");
	CHECK_STR(jsonx_path_str(j, "metadata.name"), "ebsmigrate-bench-abcde-randread-qd32");
	CHECK_STR(jsonx_path_str(j, "metadata.namespace"), "db");
	CHECK(num_at(j, "spec.backoffLimit") == 0);
	CHECK(num_at(j, "spec.activeDeadlineSeconds") == 660);
	const cJSON *ann = jsonx_path(j, "spec.template.metadata.annotations");
	CHECK_STR(jsonx_str(ann, "karpenter.sh/do-not-disrupt"), "true");
	const cJSON *c0 = cJSON_GetArrayItem(jsonx_path(j, "spec.template.spec.containers"), 0);
	const cJSON *cmd = jsonx_get(c0, "command");
	CHECK(cJSON_GetArraySize(cmd) == 3);
	const cJSON *shj = cJSON_GetArrayItem(cmd, 2);
	const char *sh = cJSON_IsString(shj) ? shj->valuestring : "";
	CHECK(strstr(sh, "fio --output-format=json job.fio 2>fio.err\n") != NULL);
	CHECK(strstr(sh, "[global]\nruntime=5\n\n[randread-qd32]\n") != NULL); /* verbatim, blank line kept */
	CHECK_STR(jsonx_path_str(c0, "resources.requests.cpu"), "1");
	const cJSON *vol = cJSON_GetArrayItem(jsonx_path(j, "spec.template.spec.volumes"), 0);
	CHECK_STR(jsonx_path_str(vol, "persistentVolumeClaim.claimName"), "data-postgres-0");
	CHECK_STR(jsonx_str(jsonx_path(j, "spec.template.metadata.labels"), "ebsmigrate.io/bench-run"), "abcde");
	cJSON_Delete(j);

	/* the pod log: fio's stdout, then the sections */
	const char *log = "{\"fio version\": \"fio-3.33\", \"jobs\": []}\n"
			  "### ebsmigrate iops-log randread-qd32_iops.log\n1000, 5, 0, 0, 0\n2000, 6, 0, 0, 0\n"
			  "### ebsmigrate stderr\nfio: warning\n"
			  "### ebsmigrate exit 0\n";
	const char *fj;
	size_t fl;
	struct sections seen = {0, 0, 0, 0};
	int st = bench_kube_split_log(log, strlen(log), &fj, &fl, on_section, &seen);
	CHECK(st == 0);
	CHECK(fl == strlen("{\"fio version\": \"fio-3.33\", \"jobs\": []}\n"));
	CHECK(seen.logs == 1 && seen.errs == 1);
	CHECK(seen.log_len == strlen("1000, 5, 0, 0, 0\n2000, 6, 0, 0, 0\n"));
	CHECK(seen.err_len == strlen("fio: warning\n"));
	CHECK(bench_kube_split_log("crash\n", 6, &fj, &fl, NULL, NULL) == -1 && fl == 6);
	CHECK(bench_kube_split_log("### ebsmigrate exit 1\n", 22, &fj, &fl, NULL, NULL) == 1 && fl == 0);
	buf_release(&script);
	buf_release(&json);
	buf_release(&err);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_cliff();
	test_compare();
	test_compare_rules();
	test_writers();
	test_ledger_and_import();
	test_options_json();
	test_local();
	test_kube_template();
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return tap_done();
}
