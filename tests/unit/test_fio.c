/* test_fio.c - fio.c: profiles and job files, sizes, the JSON report parser on outputs of several
 * fio versions (tests/unit/data/fio/README.md says where each comes from) and on malformed input,
 * and the IOPS log parser. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/fio.h"
#include "tap.h"

static struct buf text;

static const char *load(const char *name)
{
	char rel[256];
	snprintf(rel, sizeof rel, "tests/unit/data/fio/%s", name);
	struct buf err = BUF_INIT;
	buf_reset(&text);
	if (em_read_file(tap_src_path(rel), &text, &err)) {
		printf("# cannot read %s: %s\n", rel, err.s);
		buf_reset(&text);
	}
	buf_release(&err);
	return text.s;
}

static int parse(struct fio_report *r, const char *name, struct buf *err)
{
	load(name);
	buf_reset(err);
	return fio_parse_report(r, text.s, text.len, name, err);
}

/* a == b exactly: the parser divides fio's own number once. */
#define CHECK_EQ_D(a, b) CHECK((a) == (b))

static void test_profiles(void)
{
	CHECK(fio_profile_find("randread-qd32") != NULL);
	CHECK(fio_profile_find("seq-write-1m")->bs == 1048576);
	CHECK(fio_profile_find("latency-qd1")->iodepth == 1);
	CHECK(fio_profile_find("latency-qd1")->kind == FIO_KIND_LATENCY);
	CHECK(fio_profile_find("nope") == NULL);
	size_t n = 0;
	for (const struct fio_profile *p = fio_profiles; p->name; p++)
		n++;
	CHECK_I64(n, 5);
	CHECK_STR(fio_profile_infer("randread", "4k", "32", NULL)->name, "randread-qd32");
	CHECK_STR(fio_profile_infer("randread", "4K", NULL, "1")->name, "latency-qd1");
	CHECK_STR(fio_profile_infer("write", "1M", "8", NULL)->name, "seq-write-1m");
	CHECK_STR(fio_profile_infer("randwrite", "4096", "32", NULL)->name, "randwrite-qd32");
	CHECK(fio_profile_infer("randread", "4K", "1", "7") == NULL); /* seeds/003's 7 jobs */
	CHECK(fio_profile_infer("randread", "8k", "32", NULL) == NULL);
	CHECK(fio_kind_of(4096, 16) == FIO_KIND_IOPS);
	CHECK(fio_kind_of(262144, 4) == FIO_KIND_THROUGHPUT);
	CHECK(fio_kind_of(65536, 1) == FIO_KIND_LATENCY);
	CHECK(fio_kind_of(4096, 7) == FIO_KIND_IOPS); /* seeds/003: 7 jobs x qd1 are 7 in flight */
	/* the I/Os a job keeps in flight: iodepth, no deeper than fio's IO-depth distribution shows */
	const double qd1[FIO_DEPTH_BUCKETS] = {100, 0, 0, 0, 0, 0, 0};
	const double qd32[FIO_DEPTH_BUCKETS] = {0.1, 0.1, 0.1, 0.1, 0.1, 99.5, 0};
	const double deep[FIO_DEPTH_BUCKETS] = {0, 0, 0, 0, 0, 0, 100};
	CHECK_I64(fio_effective_depth(32, qd1), 1); /* psync ignores iodepth=32 */
	CHECK_I64(fio_effective_depth(32, qd32), 32);
	CHECK_I64(fio_effective_depth(128, qd32), 63); /* the 32 bucket is 32-63 */
	CHECK_I64(fio_effective_depth(0, qd32), 32);  /* no option (normal output): the bucket's low end */
	CHECK_I64(fio_effective_depth(256, deep), 256);
	CHECK_I64(fio_effective_depth(24, NULL), 24);
	CHECK_I64(fio_effective_depth(0, NULL), 1);
}

static void test_sizes(void)
{
	uint64_t v = 0;
	CHECK(fio_parse_size("16M", &v) == 0 && v == 16u << 20);
	CHECK(fio_parse_size("8G", &v) == 0 && v == (uint64_t)8 << 30);
	CHECK(fio_parse_size("100Gi", &v) == 0 && v == (uint64_t)100 << 30);
	CHECK(fio_parse_size("512MiB", &v) == 0 && v == (uint64_t)512 << 20);
	CHECK(fio_parse_size("4k", &v) == 0 && v == 4096);
	CHECK(fio_parse_size("4096", &v) == 0 && v == 4096);
	CHECK(fio_parse_size("1x", &v) == EM_EINPUT);
	CHECK(fio_parse_size("", &v) == EM_EINPUT);
	CHECK(fio_parse_size("-1G", &v) == EM_EINPUT);
	CHECK(fio_parse_size("99999999999999999999", &v) == EM_EINPUT);
	CHECK(fio_parse_size("99999999999P", &v) == EM_EINPUT);
	struct buf b = BUF_INIT;
	fio_format_size(&b, (uint64_t)8 << 30);
	CHECK_STR(b.s, "8G");
	buf_reset(&b);
	fio_format_size(&b, 1536u << 10);
	CHECK_STR(b.s, "1536K");
	buf_reset(&b);
	fio_format_size(&b, 100);
	CHECK_STR(b.s, "100");
	buf_release(&b);
}

static void test_job_file(void)
{
	struct buf b = BUF_INIT;
	struct fio_job_spec s = {fio_profile_find("randread-qd32"), 60, (uint64_t)8 << 30, "/mnt/gp2", NULL,
				 "randread-qd32", NULL};
	fio_job_file(&b, &s);
	const char *want[] = {"[global]\n", "ioengine=libaio\n", "direct=1\n", "time_based=1\n", "runtime=60\n",
			      "size=8G\n", "directory=/mnt/gp2\n", "filename=ebsmigrate-bench.dat\n",
			      "write_iops_log=randread-qd32\n", "log_avg_msec=1000\n", "per_job_logs=0\n",
			      "[randread-qd32]\nrw=randread\nbs=4K\niodepth=32\n"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		int found = strstr(b.s, want[i]) != NULL;
		CHECK(found);
		if (!found)
			printf("# missing %s in:\n%s", want[i], b.s);
	}
	buf_reset(&b);
	struct fio_job_spec s2 = {fio_profile_find("seq-write-1m"), 5, 16u << 20, NULL, "x.dat", NULL, "psync"};
	fio_job_file(&b, &s2);
	CHECK(strstr(b.s, "ioengine=psync\n") != NULL);
	CHECK(strstr(b.s, "bs=1M\n") != NULL);
	CHECK(strstr(b.s, "iodepth=8\n") != NULL);
	CHECK(strstr(b.s, "directory=") == NULL);
	CHECK(strstr(b.s, "write_iops_log") == NULL);
	buf_release(&b);
}

static void test_fio_333(void)
{
	struct fio_report r;
	struct buf err = BUF_INIT;
	CHECK(parse(&r, "fio-3.33-randread.json", &err) == 0);
	CHECK_STR(r.fio_version, "fio-3.33");
	CHECK_I64(r.n_jobs, 1);
	CHECK(!r.client_server);
	const struct fio_job *j = &r.jobs[0];
	CHECK_STR(j->name, "randread-qd32");
	CHECK_STR(j->profile, "randread-qd32");
	CHECK_STR(j->lat_source, "clat_ns");
	CHECK_STR(j->iops_log, "randread-qd32");
	CHECK(j->kind == FIO_KIND_IOPS);
	CHECK(j->bs == 4096 && j->iodepth == 32);
	CHECK_I64(j->runtime_ms, 2000);
	CHECK(j->read.present && !j->write.present);
	CHECK_EQ_D(j->read.iops, 38287.356322);
	CHECK_EQ_D(j->read.mibps, 156825011 / 1048576.0);
	CHECK_I64(j->read.ios, 76613);
	CHECK_I64(j->read.bytes, 313806848);
	CHECK_EQ_D(j->read.lat.mean, 815174.064506 / 1e6);
	CHECK_EQ_D(j->read.lat.p50, 366592 / 1e6);
	CHECK_EQ_D(j->read.lat.p95, 4227072 / 1e6);
	CHECK_EQ_D(j->read.lat.p99, 9240576 / 1e6);
	CHECK_EQ_D(j->read.lat.p99_9, 20578304 / 1e6);
	CHECK(strstr(j->options_json, "\"rw\":\"randread\"") != NULL);
	CHECK(strstr(j->options_json, "\"ioengine\":\"libaio\"") != NULL); /* from the global options */
	fio_report_release(&r);

	/* json+ adds latency bins; the numbers come from the same places. */
	CHECK(parse(&r, "fio-3.33-randread.jsonplus", &err) == 0);
	CHECK(r.n_jobs == 1 && r.jobs[0].read.present && !isnan(r.jobs[0].read.lat.p99));
	CHECK_STR(r.jobs[0].lat_source, "clat_ns");
	fio_report_release(&r);

	/* notices before the document */
	CHECK(parse(&r, "fio-3.33-notices.json", &err) == 0);
	CHECK(r.n_jobs == 1 && r.jobs[0].read.iops == 38287.356322);
	fio_report_release(&r);

	/* randrw with lat_percentiles=1: both directions, completion latency preferred */
	CHECK(parse(&r, "fio-3.33-randrw-lat-percentiles.json", &err) == 0);
	j = &r.jobs[0];
	CHECK(j->read.present && j->write.present);
	CHECK_EQ_D(j->read.iops, 16838.58071);
	CHECK_EQ_D(j->write.iops, 16872.063968);
	CHECK_EQ_D(j->read.lat.p99, 5144576 / 1e6);
	CHECK_STR(j->lat_source, "clat_ns");
	CHECK(j->profile == NULL);
	CHECK(j->kind == FIO_KIND_IOPS);
	fio_report_release(&r);
	buf_release(&err);
}

static void test_client_server(void)
{
	struct fio_report r;
	struct buf err = BUF_INIT;
	CHECK(parse(&r, "fio-3.33-client.json", &err) == 0);
	CHECK(r.client_server);
	CHECK_I64(r.n_jobs, 1);
	CHECK_STR(r.jobs[0].hostname, "127.0.0.1");
	CHECK(r.jobs[0].read.present && r.jobs[0].read.iops > 0);
	fio_report_release(&r);

	CHECK(parse(&r, "fio-3.33-client-2servers.json", &err) == 0);
	CHECK_I64(r.n_jobs, 2); /* "All clients" is a sum, not a job */
	CHECK_STR(r.jobs[0].hostname, "10.0.1.10");
	CHECK_STR(r.jobs[1].hostname, "10.0.1.11");
	fio_report_release(&r);
	buf_release(&err);
}

static void test_other_versions(void)
{
	struct fio_report r;
	struct buf err = BUF_INIT;
	CHECK(parse(&r, "fio-3.36-gp3-randread.json", &err) == 0);
	CHECK_STR(r.fio_version, "fio-3.36");
	CHECK_STR(r.jobs[0].name, "gp3-randread");
	CHECK_STR(r.jobs[0].profile, "randread-qd32"); /* from rw/bs/iodepth, not the name */
	CHECK_STR(r.jobs[0].iops_log, "gp3_rr");
	CHECK_EQ_D(r.jobs[0].read.iops, 3000.918457);
	CHECK_EQ_D(r.jobs[0].read.lat.p99, 12910592 / 1e6);
	CHECK(fabs(r.jobs[0].read.lat.mean - 10.39) < 0.01);
	fio_report_release(&r);

	CHECK(parse(&r, "fio-3.24-seed-run1-gp3.json", &err) == 0);
	CHECK_STR(r.fio_version, "fio-3.24");
	CHECK(r.jobs[0].profile == NULL); /* 7 jobs: no profile */
	CHECK(r.jobs[0].kind == FIO_KIND_IOPS); /* 7 in flight: not latency-bound */
	CHECK(r.jobs[0].jobs == 7 && r.jobs[0].iodepth == 1);
	CHECK_I64(r.jobs[0].runtime_ms, 180004); /* not job_runtime's 7 x 180004 */
	CHECK_EQ_D(r.jobs[0].read.iops, 3016.5163);
	CHECK_EQ_D(r.jobs[0].read.lat.p99, 6194000 / 1e6);
	CHECK_EQ_D(r.jobs[0].read.lat.p50, 2057000 / 1e6);
	fio_report_release(&r);

	CHECK(parse(&r, "fio-2.2.10-legacy.json", &err) == 0);
	CHECK_STR(r.jobs[0].lat_source, "clat");
	CHECK_EQ_D(r.jobs[0].read.lat.p99, 2480 / 1e3); /* microseconds */
	CHECK_EQ_D(r.jobs[0].read.lat.mean, 1884.5 / 1e3);
	CHECK_EQ_D(r.jobs[0].read.mibps, 2116 / 1024.0);
	CHECK_I64(r.jobs[0].read.bytes, 126976 * 1024);
	CHECK(!r.jobs[0].write.present);
	CHECK_STR(r.jobs[0].profile, "latency-qd1");
	CHECK_I64(r.jobs[0].read.ios, -1); /* fio 2.x counted no I/Os: unknown, not 0 */
	fio_report_release(&r);
	buf_release(&err);
}

static void test_malformed(void)
{
	struct fio_report r;
	struct buf err = BUF_INIT;
	CHECK(parse(&r, "bad-truncated.json", &err) == EM_EINPUT);
	CHECK(strstr(err.s, "bad-truncated.json: fio JSON is truncated") != NULL);
	printf("# %s\n", err.s);
	CHECK(r.n_jobs == 0 && r.jobs == NULL);

	CHECK(parse(&r, "fio-3.24-seed-run1-gp3.txt", &err) == EM_EINPUT); /* JSON only here: fio_parse_output reads it */
	CHECK(strstr(err.s, "no JSON object in fio output (run fio with --output-format=json); it starts with "
			    "'Jobs: 7 (f=7)") != NULL);
	printf("# %s\n", err.s);

	CHECK(parse(&r, "bad-not-fio.json", &err) == EM_EINPUT);
	CHECK(strstr(err.s, "not a fio report: no \"jobs\" or \"client_stats\" array") != NULL);

	CHECK(parse(&r, "bad-iops-string.json", &err) == EM_EINPUT);
	CHECK(strstr(err.s, "bad-iops-string.json: jobs[0].read.iops: expected a number") != NULL);
	printf("# %s\n", err.s);

	const char *cases[][2] = {
		{"", "empty, expected fio JSON output"},
		{"   \n", "empty, expected fio JSON output"},
		{"{\"jobs\": [{\"jobname\": \"x\", \"read\": {\"iops\": 1}}", "truncated"},
		{"{\"jobs\": [{\"jobname\": \"x\" \"read\": {}}]}", "not valid JSON at line 1, column"},
		{"{\"jobs\": []}", "fio report has no jobs"},
		{"{\"jobs\": [{\"read\": {\"iops\": 1}}]}", "jobs[0]: no \"jobname\""},
		{"{\"jobs\": [{\"jobname\": \"x\"}]}", "jobs[0]: no \"read\" or \"write\" statistics"},
		{"{\"jobs\": [{\"jobname\": \"x\", \"read\": {\"io_bytes\": 1}}]}", "jobs[0].read: no \"iops\""},
		{"{\"jobs\": [{\"jobname\": \"x\", \"read\": 3}]}", "jobs[0].read: expected an object"},
		{"{\"jobs\": [{\"jobname\": \"x\", \"error\": 1.5, \"read\": {\"iops\": 1}}]}", "jobs[0].error: expected an integer"},
		{"fio: pid=1, err=2/file:filesetup.c:1, func=open, error=No such file", "it starts with 'fio: pid=1"},
		/* found by fuzz.fio_json: an array where fio writes {"99.000000": n} handed strtod a NULL name */
		{"{\"jobs\": [{\"jobname\": \"x\", \"read\": {\"iops\": 1, \"io_bytes\": 4096, \"clat_ns\": "
		 "{\"N\": 1, \"mean\": 2, \"percentile\": [1, 2]}}}]}",
		 "jobs[0].read.clat_ns.percentile: must be an object"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		buf_reset(&err);
		int rc = fio_parse_report(&r, cases[i][0], strlen(cases[i][0]), "t", &err);
		CHECK(rc == EM_EINPUT);
		int ok = strstr(err.s, cases[i][1]) != NULL;
		CHECK(ok);
		if (!ok)
			printf("# case %zu: %s\n", i, err.s);
	}
	buf_release(&err);
}

static void test_extent(void)
{
	const char *t = "note: x\n{\"a\": {\"b\": \"}\"}}\n### trailer\n";
	size_t e = fio_report_extent(t, strlen(t));
	CHECK_I64(e, strlen("{\"a\": {\"b\": \"}\"}}"));
	CHECK_I64(fio_report_extent("no json", 7), 0);
	CHECK_I64(fio_report_extent("{\"a\": ", 6), 0);
}

static void test_iops_log(void)
{
	struct fio_series s = {0};
	struct buf err = BUF_INIT;
	/* fio 3.33 with log_avg_msec=1000: time, value, ddir, bs, offset (and prio in newer fio) */
	const char *log = "1004, 41561, 0, 0, 0\n"
			  "2001, 40000, 0, 0, 0\n"
			  "2003, 100, 1, 0, 0, 0\n" /* a write in the same window: summed */
			  "3000, 7, 2, 0, 0\n"      /* trim: ignored */
			  "\n"
			  "2999, 39000, 0, 0, 0\n";
	CHECK(fio_parse_iops_log(&s, log, strlen(log), 1000, "a.log", &err) == 0);
	CHECK_I64(s.n, 3);
	CHECK(s.t_ms[0] == 1000 && s.iops[0] == 41561);
	CHECK(s.t_ms[1] == 2000 && s.iops[1] == 40100);
	CHECK(s.t_ms[2] == 3000 && s.iops[2] == 39000);
	/* A second log (another job of the same prefix) adds to the same windows. */
	const char *log2 = "1000, 9, 0, 4096, 0\n4000, 5, 0, 4096, 0\n";
	CHECK(fio_parse_iops_log(&s, log2, strlen(log2), 1000, "b.log", &err) == 0);
	CHECK_I64(s.n, 4);
	CHECK(s.iops[0] == 41570 && s.t_ms[3] == 4000);
	fio_series_release(&s);

	const char *bad[][2] = {
		{"1000, 5\n", "a.log: line 1: expected 'time, value, direction, ...'"},
		{"1000, 5, 0, 0\nx, 1, 0, 0\n", "a.log: line 2: expected"},
		{"1000; 5; 0\n", "line 1: expected"},
		{"1000, 5, 7, 0\n", "line 1: out-of-range value"},
		{"-5, 5, 0, 0\n", "line 1: out-of-range value"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		buf_reset(&err);
		CHECK(fio_parse_iops_log(&s, bad[i][0], strlen(bad[i][0]), 1000, "a.log", &err) == EM_EINPUT);
		int ok = strstr(err.s, bad[i][1]) != NULL;
		CHECK(ok);
		if (!ok)
			printf("# %s\n", err.s);
		fio_series_release(&s);
	}
	/* interval 0 keeps fio's own times */
	CHECK(fio_parse_iops_log(&s, "1004, 3, 0, 0\n", 14, 0, "c.log", &err) == 0);
	CHECK(s.n == 1 && s.t_ms[0] == 1004);
	fio_series_release(&s);
	buf_release(&err);
}

/* The status lines fio 3.33 printed with --eta=always (copied from real runs), and what is not one. */
static int eta(struct fio_eta *e, const char *line)
{
	return fio_parse_eta_line(e, line, strlen(line));
}

static void test_eta_line(void)
{
	struct fio_eta e;
	CHECK(eta(&e, "Jobs: 1 (f=1): [r(1)][75.0%][r=41.0MiB/s][r=10.5k IOPS][eta 00m:01s]") == 0);
	CHECK(e.jobs == 1 && e.percent == 75.0 && strcmp(e.run, "r(1)") == 0);
	CHECK(e.iops[0] == 10500 && isnan(e.iops[1]));
	CHECK(e.bw_bytes[0] == 41.0 * 1048576 && isnan(e.bw_bytes[1]));
	CHECK(e.eta_s == 1);
	CHECK(eta(&e, "Jobs: 1 (f=1): [m(1)][-.-%][r=34.8MiB/s,w=34.7MiB/s][r=8910,w=8881 IOPS][eta 00m:00s]") == 0);
	CHECK(isnan(e.percent) && e.iops[0] == 8910 && e.iops[1] == 8881 && e.bw_bytes[1] == 34.7 * 1048576);
	CHECK(e.eta_s == 0);
	CHECK(eta(&e, "Jobs: 1 (f=1): [W(1)][-.-%][w=1683MiB/s][w=1682 IOPS][eta 00m:00s]") == 0);
	CHECK(isnan(e.iops[0]) && e.iops[1] == 1682 && e.bw_bytes[1] == 1683.0 * 1048576);
	CHECK(eta(&e, "Jobs: 1 (f=1)") == 0);
	CHECK(e.jobs == 1 && isnan(e.percent) && isnan(e.iops[0]) && e.eta_s == -1 && e.run[0] == '\0');
	CHECK(eta(&e, "  Jobs: 4 (f=4): [r(4)][12.3%][r=1234KiB/s][r=308 IOPS][eta 01h:02m:03s]   ") == 0);
	CHECK(e.jobs == 4 && e.eta_s == 3723 && e.bw_bytes[0] == 1234.0 * 1024 && e.iops[0] == 308);
	CHECK(eta(&e, "Jobs: 1 (f=1): [r(1)][1.0%][r=0KiB/s][r=0 IOPS][eta 2d:01h:00m:00s]") == 0);
	CHECK(e.eta_s == 2 * 86400 + 3600 && e.iops[0] == 0 && e.bw_bytes[0] == 0);
	CHECK(eta(&e, "Jobs: 1 (f=1): [r(1)][50.0%][r=1.5MB/s][r=1.2M IOPS][eta 00m:30s]") == 0);
	CHECK(e.bw_bytes[0] == 1.5e6 && e.iops[0] == 1.2e6);
	/* not status lines */
	CHECK(eta(&e, "t: Laying out IO file (1 file / 16MiB)") == EM_EINPUT);
	CHECK(eta(&e, "") == EM_EINPUT);
	CHECK(eta(&e, "{") == EM_EINPUT);
	CHECK(eta(&e, "Jobs: x") == EM_EINPUT);
	CHECK(eta(&e, "Jobs: 1 (f=1): [r(1)][75.0%][r=41.0MiB/s") == EM_EINPUT);
	CHECK(eta(&e, "Jobs: 1 (f=1): [r(1)][175.0%]") == EM_EINPUT);
	CHECK(eta(&e, "Jobs: 1 (f=1): [r(1)][50%][r=12 furlongs/s]") == EM_EINPUT);
	CHECK(eta(&e, "Jobs: 1 (f=1): [r(1)][50%][x=1 IOPS]") == EM_EINPUT);
	CHECK(eta(&e, "Jobs: -1") == EM_EINPUT);
	/* only len bytes are read: the rest of a buffer is not the line */
	CHECK(fio_parse_eta_line(&e, "Jobs: 2 (f=2)GARBAGE", 13) == 0 && e.jobs == 2);
	char big[600];
	memset(big, '[', sizeof big);
	memcpy(big, "Jobs: 1 ", 8);
	CHECK(fio_parse_eta_line(&e, big, sizeof big) == EM_EINPUT);
}

int main(void)
{
	test_profiles();
	test_sizes();
	test_job_file();
	test_fio_333();
	test_client_server();
	test_other_versions();
	test_malformed();
	test_extent();
	test_iops_log();
	test_eta_line();
	buf_release(&text);
	return tap_done();
}
