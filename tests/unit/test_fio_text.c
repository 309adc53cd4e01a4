/* test_fio_text.c - fio_text.c and fio_parse_output: fio's normal output read to the numbers of
 * the JSON of the same run (seeds/003's three runs, tests/unit/data/fio/README.md), its other
 * forms (several jobs, write and randrw, k suffixes, nsec/msec units, fio 2.x), failed jobs,
 * lines it cannot read (named by number), and kubestr's JSON (seeds/001). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/fio.h"
#include "tap.h"

static int parse_file(struct fio_report *r, const char *name, struct buf *err)
{
	char rel[256];
	snprintf(rel, sizeof rel, "tests/unit/data/fio/%s", name);
	struct buf text = BUF_INIT;
	buf_reset(err);
	int rc = em_read_file(tap_src_path(rel), &text, err);
	if (!rc)
		rc = fio_parse_output(r, text.s, text.len, name, err);
	buf_release(&text);
	return rc;
}

static int parse_str(struct fio_report *r, const char *s, struct buf *err)
{
	buf_reset(err);
	return fio_parse_output(r, s, strlen(s), "t.txt", err);
}

/* Within fio's printed rounding: relative 1e-6, or abs for latencies printed to 0.01 us. */
static int near(double a, double b, double abs)
{
	return fabs(a - b) <= abs || fabs(a - b) <= 1e-6 * fabs(b);
}

/* seeds/003: each run's normal output gives the numbers of its JSON. */
static void test_seed_runs(void)
{
	static const char *const runs[] = {"fio-3.24-seed-run1-gp3", "fio-3.24-seed-run2-gp2", "fio-3.24-seed-run3"};
	struct buf err = BUF_INIT;
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		char txt[80], json[80];
		snprintf(txt, sizeof txt, "%s.txt", runs[i]);
		snprintf(json, sizeof json, "%s.json", runs[i]);
		struct fio_report t, j;
		CHECK(parse_file(&t, txt, &err) == 0);
		if (err.len)
			printf("# %s\n", err.s);
		CHECK(parse_file(&j, json, &err) == 0);
		CHECK(t.format == FIO_OUTPUT_TEXT && j.format == FIO_OUTPUT_JSON);
		CHECK(t.n_jobs == 1 && j.n_jobs == 1);
		if (t.n_jobs != 1 || j.n_jobs != 1) {
			fio_report_release(&t);
			fio_report_release(&j);
			continue;
		}
		const struct fio_job *a = &t.jobs[0], *b = &j.jobs[0];
		CHECK_STR(a->name, "fio_test_file");
		CHECK_I64(a->jobs, 7);
		CHECK_I64(b->jobs, 7);
		CHECK_I64(a->iodepth, 1);
		CHECK_I64(a->bs, 4096);
		CHECK(a->kind == FIO_KIND_IOPS && b->kind == FIO_KIND_IOPS); /* 7 in flight, not latency-bound */
		CHECK_I64(a->runtime_ms, b->runtime_ms);
		CHECK_I64(a->read.ios, b->read.ios);
		CHECK_I64(a->read.bytes, b->read.bytes);
		CHECK(near(a->read.iops, b->read.iops, 0));
		CHECK(near(a->read.mibps, b->read.mibps, 0));
		CHECK(near(a->read.lat.mean, b->read.lat.mean, 1e-5));
		CHECK(near(a->read.lat.p50, b->read.lat.p50, 1e-9));
		CHECK(near(a->read.lat.p95, b->read.lat.p95, 1e-9));
		CHECK(near(a->read.lat.p99, b->read.lat.p99, 1e-9));
		CHECK(near(a->read.lat.p99_9, b->read.lat.p99_9, 1e-9));
		CHECK(!a->write.present && !b->write.present);
		CHECK(a->error == 0);
		printf("# %s: %.4f IOPS, %.4f MiB/s, mean %.5f ms, p99 %.3f ms, %u x %u in flight\n", runs[i], a->read.iops,
		       a->read.mibps, a->read.lat.mean, a->read.lat.p99, a->jobs, a->iodepth);
		fio_report_release(&t);
		fio_report_release(&j);
	}
	/* run 1 in numbers: 542,985 I/Os in 180,004 ms, 2.32 ms, p99 6.194 ms */
	struct fio_report r;
	CHECK(parse_file(&r, "fio-3.24-seed-run1-gp3.txt", &err) == 0);
	CHECK(r.n_jobs == 1 && r.jobs[0].read.ios == 542985 && r.jobs[0].runtime_ms == 180004);
	CHECK(r.n_jobs == 1 && r.jobs[0].read.bytes == 542985LL * 4096);
	CHECK(r.n_jobs == 1 && fabs(r.jobs[0].read.lat.mean - 2.31905) < 1e-9 && r.jobs[0].read.lat.p99 == 6.194);
	CHECK_STR(r.n_jobs ? r.jobs[0].lat_source : NULL, "clat");
	fio_report_release(&r);
	CHECK(parse_file(&r, "fio-3.24-seed-run3.txt", &err) == 0);
	CHECK_STR(r.fio_version, "fio-3.24");
	fio_report_release(&r);
	buf_release(&err);
}

/* Several jobs (no group_reporting), write with k suffixes and msec, randrw, nsec. */
static const char several[] =
	"seqw: (g=0): rw=write, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=libaio, "
	"iodepth=8\n"
	"mixed: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=16\n"
	"fast: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=io_uring, iodepth=64\n"
	"fio-3.33\n"
	"Starting 3 processes\n"
	"\n"
	"seqw: (groupid=0, jobs=1): err= 0: pid=10: Mon Dec  7 10:00:00 2026\n"
	"  write: IOPS=126, BW=126MiB/s (132MB/s)(7560MiB/60001msec); 0 zone resets\n"
	"    slat (usec): min=12, max=400, avg=30.11, stdev=4.00\n"
	"    clat (msec): min=2, max=120, avg=63.21, stdev=5.10\n"
	"     lat (msec): min=2, max=120, avg=63.24, stdev=5.10\n"
	"    clat percentiles (msec):\n"
	"     |  1.00th=[   55],  5.00th=[   58], 10.00th=[   59], 20.00th=[   61],\n"
	"     | 50.00th=[   63], 90.00th=[   68], 95.00th=[   70],\n"
	"     | 99.00th=[   79], 99.50th=[   84], 99.90th=[  101], 99.95th=[  110],\n"
	"     | 99.99th=[  121]\n"
	"   bw (  KiB/s): min=120832, max=135168, per=100.00%, avg=129055.12, stdev=2011.15, samples=120\n"
	"  IO depths    : 1=0.1%, 2=0.1%, 4=0.1%, 8=99.9%, 16=0.0%, 32=0.0%, >=64=0.0%\n"
	"     issued rwts: total=0,7560,0,0 short=0,0,0,0 dropped=0,0,0,0\n"
	"mixed: (groupid=0, jobs=1): err= 0: pid=11: Mon Dec  7 10:00:00 2026\n"
	"  read: IOPS=8418, BW=32.9MiB/s (34.5MB/s)(1973MiB/60001msec)\n"
	"    clat (usec): min=90, max=9000, avg=948.20, stdev=100.00\n"
	"    clat percentiles (usec):\n"
	"     | 50.00th=[  930], 95.00th=[ 1172], 99.00th=[ 1401], 99.90th=[ 2008],\n"
	"  write: IOPS=8420, BW=32.9MiB/s (34.5MB/s)(1974MiB/60001msec); 0 zone resets\n"
	"    clat (usec): min=95, max=9100, avg=950.10, stdev=101.00\n"
	"    clat percentiles (usec):\n"
	"     | 50.00th=[  938], 95.00th=[ 1188], 99.00th=[ 1418], 99.90th=[ 2024],\n"
	"  IO depths    : 1=0.1%, 2=0.1%, 4=0.1%, 8=0.1%, 16=99.9%, 32=0.0%, >=64=0.0%\n"
	"     issued rwts: total=505106,505212,0,0 short=0,0,0,0 dropped=0,0,0,0\n"
	"fast: (groupid=0, jobs=1): err= 0: pid=12: Mon Dec  7 10:00:00 2026\n"
	"  read: IOPS=101k, BW=395MiB/s (414MB/s)(23.1GiB/60001msec)\n"
	"    clat (nsec): min=300000, max=2000000, avg=633412.55, stdev=1000.00\n"
	"    clat percentiles (nsec):\n"
	"     | 50.00th=[630784], 95.00th=[700416], 99.00th=[774144], 99.90th=[880640],\n"
	"  IO depths    : 1=0.1%, 2=0.1%, 4=0.1%, 8=0.1%, 16=0.1%, 32=0.1%, >=64=99.9%\n"
	"     issued rwts: total=6061000,0,0,0 short=0,0,0,0 dropped=0,0,0,0\n"
	"\n"
	"Run status group 0 (all jobs):\n"
	"   READ: bw=428MiB/s (449MB/s), 32.9MiB/s-395MiB/s (34.5MB/s-414MB/s), io=25.1GiB, run=60001-60001msec\n";

static void test_forms(void)
{
	struct fio_report r;
	struct buf err = BUF_INIT;
	CHECK(parse_str(&r, several, &err) == 0);
	if (err.len)
		printf("# %s\n", err.s);
	CHECK(r.n_jobs == 3);
	if (r.n_jobs == 3) {
		const struct fio_job *w = &r.jobs[0], *m = &r.jobs[1], *f = &r.jobs[2];
		CHECK(!w->read.present && w->write.present);
		CHECK_I64(w->write.ios, 7560);
		CHECK_I64(w->write.bytes, 7560LL * 1048576);
		CHECK_I64(w->bs, 1048576);
		CHECK(w->kind == FIO_KIND_THROUGHPUT && w->iodepth == 8 && w->jobs == 1);
		CHECK(fabs(w->write.lat.mean - 63.21) < 1e-9 && w->write.lat.p99 == 79);
		CHECK(fabs(w->write.iops - 7560 * 1000.0 / 60001) < 1e-9);
		CHECK(m->read.present && m->write.present && m->read.ios == 505106 && m->write.ios == 505212);
		CHECK(fabs(m->read.lat.p99 - 1.401) < 1e-12 && fabs(m->write.lat.p99 - 1.418) < 1e-12);
		CHECK(m->kind == FIO_KIND_IOPS && m->iodepth == 16);
		CHECK(f->iodepth == 64 && f->read.ios == 6061000);
		CHECK(fabs(f->read.lat.mean - 0.63341255) < 1e-12 && fabs(f->read.lat.p99 - 0.774144) < 1e-12);
		CHECK(f->read.bytes == 6061000LL * 4096);
	}
	fio_report_release(&r);

	/* k suffix without an issued count: the printed IOPS stands */
	CHECK(parse_str(&r,
			"j: (groupid=0, jobs=2): err= 0: pid=1\n"
			"  read: IOPS=10.5k, BW=41.0MiB/s (43.0MB/s)(2460MiB/60000msec)\n"
			"    clat (usec): min=1, max=9, avg=190.50, stdev=1.00\n",
			&err) == 0);
	CHECK(r.n_jobs == 1 && r.jobs[0].read.iops == 10500 && r.jobs[0].read.ios == -1 && r.jobs[0].jobs == 2);
	fio_report_release(&r);

	/* fio 2.x: "read : io=..., bw=..., iops=..., runt=..." and "issued : total=r=.../w=.../d=..." */
	CHECK(parse_str(&r,
			"legacy: (g=0): rw=randread, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=32\n"
			"fio-2.2.10\n"
			"legacy: (groupid=0, jobs=1): err= 0: pid=7: Tue Oct  4 10:00:00 2016\n"
			"  read : io=2121.0MB, bw=12066KB/s, iops=3016, runt=180004msec\n"
			"    clat (usec): min=188, max=296635, avg=2319.05, stdev=1213.65\n"
			"    clat percentiles (usec):\n"
			"     |  1.00th=[  408], 50.00th=[ 2057], 95.00th=[ 4621], 99.00th=[ 6194],\n"
			"  IO depths    : 1=0.1%, 2=0.1%, 4=0.1%, 8=0.1%, 16=0.1%, 32=99.9%, >=64=0.0%\n"
			"     issued    : total=r=542985/w=0/d=0, short=r=0/w=0/d=0, drop=r=0/w=0/d=0\n",
			&err) == 0);
	if (err.len)
		printf("# %s\n", err.s);
	CHECK(r.n_jobs == 1 && r.jobs[0].read.ios == 542985 && r.jobs[0].read.bytes == 542985LL * 4096);
	CHECK(r.n_jobs == 1 && r.jobs[0].iodepth == 32 && r.jobs[0].bs == 4096);
	CHECK_STR(r.n_jobs ? r.jobs[0].profile : NULL, "randread-qd32");
	CHECK_STR(r.fio_version, "fio-2.2.10");
	fio_report_release(&r);
	buf_release(&err);
}

/* A job fio reports as failed: its error, never a 0 MiB/s read. */
static void test_failed(void)
{
	struct fio_report r;
	struct buf err = BUF_INIT;
	CHECK(parse_str(&r,
			"wr: (g=0): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, "
			"iodepth=1\n"
			"fio: pid=0, err=22/file:filesetup.c:805, func=open(/mnt/x/wr.0.0), error=Invalid argument\n"
			"wr: (groupid=0, jobs=1): err=22 (file:filesetup.c:805, func=open(/mnt/x/wr.0.0), error=Invalid "
			"argument): pid=0: Mon Dec  7 10:00:00 2026\n"
			"\n"
			"Run status group 0 (all jobs):\n",
			&err) == 0);
	CHECK(r.n_jobs == 1 && r.jobs[0].error == 22 && !r.jobs[0].read.present && !r.jobs[0].write.present);
	CHECK_STR(r.n_jobs ? r.jobs[0].error_text : NULL, "Invalid argument");
	fio_report_release(&r);
	/* JSON: "error": 22 */
	CHECK(parse_str(&r,
			"{\"fio version\": \"fio-3.33\", \"jobs\": [{\"jobname\": \"wr\", \"error\": 22, \"job options\": "
			"{\"rw\": \"write\", \"bs\": \"4k\"}, \"read\": {\"io_bytes\": 0, \"bw_bytes\": 0, \"iops\": 0.0, "
			"\"total_ios\": 0}, \"write\": {\"io_bytes\": 0, \"bw_bytes\": 0, \"iops\": 0.0, \"total_ios\": 0}, "
			"\"job_runtime\": 0}]}",
			&err) == 0);
	CHECK(r.n_jobs == 1 && r.jobs[0].error == 22 && !r.jobs[0].read.present && !r.jobs[0].write.present);
	fio_report_release(&r);
	buf_release(&err);
}

/* Lines it cannot read are refused by number, quoted; a report is left empty. */
static void test_refused(void)
{
	struct fio_report r;
	struct buf err = BUF_INIT;
	CHECK(parse_str(&r,
			"fio-3.24\n"
			"j: (groupid=0, jobs=1): err= 0: pid=1\n"
			"  read: IOPS=3016, BW=11.8MiB/s (12.4MB/s)(2121MiB/180004msec)\n"
			"    clat (usec): min=188, max=296635, avg=lots, stdev=1213.65\n",
			&err) == EM_EINPUT);
	CHECK(strstr(err.s, "t.txt: line 4: cannot read the average of fio's latency line") != NULL);
	CHECK(r.n_jobs == 0 && r.jobs == NULL);
	CHECK(parse_str(&r,
			"j: (groupid=0, jobs=1): err= 0: pid=1\n"
			"  read: IOPS=3016, BW=11.8MiB/s (12.4MB/s)(2121MiB/180004msec)\n"
			"    clat percentiles (usec):\n"
			"     |  1.00th=[  408],  5.00th=[ oops],\n",
			&err) == EM_EINPUT);
	CHECK(strstr(err.s, "t.txt: line 4: cannot read fio's percentile row") != NULL);
	CHECK(parse_str(&r, "j: (groupid=0, jobs=1): err= 0: pid=1\n  cpu          : usr=0.12%\n\n", &err) == EM_EINPUT);
	CHECK(strstr(err.s, "t.txt: line 1: the report of job 'j' has no read or write line") != NULL);
	CHECK(parse_str(&r, "j: (groupid=0, jobs=1): err= 0: pid=1\n  read: IOPS=1, BW=4KiB/s (4kB/s)(4KiB/1000msec)\n"
			    "  what is this\n", &err) == EM_EINPUT);
	CHECK(strstr(err.s, "t.txt: line 3: not a line of fio's report of job 'j': '  what is this'") != NULL);
	CHECK(parse_str(&r, " \n\t\n", &err) == EM_EINPUT);
	CHECK(strstr(err.s, "t.txt: empty, expected fio output") != NULL);
	CHECK(parse_str(&r, "\n\nhello\n", &err) == EM_EINPUT);
	CHECK(strstr(err.s, "t.txt: line 3: neither fio JSON") != NULL);
	printf("# %s\n", err.s);
	buf_release(&err);
}

/* kubestr fio -o json (seeds/001): the options kubestr drops come from its fioConfig. */
static void test_kubestr(void)
{
	struct fio_report r;
	struct buf err = BUF_INIT;
	CHECK(parse_file(&r, "kubestr-0.4.48-seed001-randread.json", &err) == 0);
	if (err.len)
		printf("# %s\n", err.s);
	CHECK(r.format == FIO_OUTPUT_KUBESTR);
	CHECK_STR(r.storage_class, "local-path");
	CHECK_STR(r.size, "10G");
	CHECK(r.n_jobs == 1);
	if (r.n_jobs == 1) {
		const struct fio_job *j = &r.jobs[0];
		CHECK(j->jobs == 4 && j->iodepth == 16 && j->bs == 4096 && j->kind == FIO_KIND_IOPS);
		CHECK(j->read.present && !j->write.present);
		CHECK(fabs(j->read.iops - 3023.7) < 1e-9 && j->read.mibps == 12094.0 * 1024 / 1048576);
		CHECK_I64(j->runtime_ms, 120000); /* not job_runtime's 4 x 120 s */
		CHECK(strstr(j->options_json, "\"numjobs\":\"4\"") && strstr(j->options_json, "\"group_reporting\":\"\""));
	}
	fio_report_release(&r);
	CHECK(parse_file(&r, "kubestr-0.4.48-seed001-randwrite.json", &err) == 0);
	CHECK(r.n_jobs == 1 && r.jobs[0].jobs == 16 && r.jobs[0].write.present && !r.jobs[0].read.present);
	CHECK(r.n_jobs == 1 && fabs(r.jobs[0].write.iops - 3024.6) < 1e-9);
	fio_report_release(&r);
	buf_release(&err);
}

int main(void)
{
	test_seed_runs();
	test_forms();
	test_failed();
	test_refused();
	test_kubestr();
	return tap_done();
}
