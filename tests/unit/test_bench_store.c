/* test_bench_store.c - the bench runners hand results to a struct bench_store and know no
 * database: an import through a store that only records the calls sees begin, the raw fio
 * document, each job numbered from 1 and finish, in that order and with the run's id; a store
 * without hooks (or none) stores nothing; the link hook decides the phase before the type does;
 * a finish error becomes the result; the ledger store (bench_ledger_store) with no database is
 * empty. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/bench.h"
#include "ebsmigrate/common.h"
#include "tap.h"

struct recorder {
	struct buf calls; /* "begin;output;job 1;finish ok;" */
	size_t doc_len;
	int fail_finish;
};

static int rec_begin(void *ctx, struct bench_run *run, struct buf *err)
{
	(void)err;
	struct recorder *r = ctx;
	run->id = 42;
	buf_addf(&r->calls, "begin %s;", run->status ? run->status : "-");
	return 0;
}

static int rec_output(void *ctx, const struct bench_run *run, const char *json, int64_t *output_id, struct buf *err)
{
	(void)err;
	struct recorder *r = ctx;
	r->doc_len = strlen(json);
	*output_id = 7;
	buf_addf(&r->calls, "output run %lld;", (long long)run->id);
	return 0;
}

static int rec_job(void *ctx, const struct bench_run *run, int64_t output_id, int seq, struct bench_job *job,
		   struct buf *err)
{
	(void)err;
	struct recorder *r = ctx;
	buf_addf(&r->calls, "job %d of output %lld run %lld %s series %zu;", seq, (long long)output_id,
		 (long long)run->id, job->name, job->series.n);
	return 0;
}

static int rec_finish(void *ctx, const struct bench_run *run, struct buf *err)
{
	struct recorder *r = ctx;
	buf_addf(&r->calls, "finish %s;", run->status);
	return r->fail_finish ? em_err(err, EM_EIO, "cannot finish") : 0;
}

static int rec_link(void *ctx, struct bench_run *run, int *linked, struct buf *err)
{
	(void)err;
	struct recorder *r = ctx;
	buf_addf(&r->calls, "link %s;", run->volume.volume_id);
	*linked = 1;
	run->phase = xstrdup("before"); /* the store's answer wins over the type (gp3: after) */
	return 0;
}

int main(void)
{
	struct buf json = BUF_INIT, err = BUF_INIT, log = BUF_INIT;
	if (em_read_file(tap_src_path("tests/unit/data/fio/fio-3.36-gp3-randread.json"), &json, &err) != 0)
		return tap_skip_all("no fio fixture");
	for (int t = 1; t <= 30; t++)
		buf_addf(&log, "%d, 3000, 0, 0, 0\n", t * 1000);
	struct bench_log_file lf = {"gp3_rr_iops.1.log", log.s, log.len};

	struct recorder rec = {BUF_INIT, 0, 0};
	struct bench_store store = {&rec, rec_begin, rec_output, rec_job, rec_finish, rec_link};
	struct bench_run run;
	bench_run_init(&run);
	run.has_volume = 1;
	run.volume.volume_id = xstrdup("vol-1");
	run.volume.type = xstrdup("gp3");
	CHECK_I64(bench_link_migration(&store, &run, &err), 0);
	CHECK_STR(run.phase, "before");
	CHECK_I64(bench_import(&store, &run, json.s, json.len, "gp3.json", &lf, 1, &err), 0);
	CHECK_STR(rec.calls.s, "link vol-1;begin -;output run 42;job 1 of output 7 run 42 gp3-randread series 30;"
			       "finish ok;");
	CHECK_I64(rec.doc_len, json.len - (size_t)(strchr(json.s, '{') - json.s) - 1); /* the document, no final newline */
	CHECK_I64(run.id, 42);
	CHECK_I64(run.n_jobs, 1);
	bench_run_release(&run);

	/* a finish error becomes the result; the runner's own figures are kept */
	buf_reset(&rec.calls);
	rec.fail_finish = 1;
	bench_run_init(&run);
	CHECK_I64(bench_import(&store, &run, json.s, json.len, "gp3.json", NULL, 0, &err), EM_EIO);
	CHECK_STR(err.s, "cannot finish");
	CHECK_I64(run.n_jobs, 1);
	bench_run_release(&run);
	buf_reset(&err);

	/* no store, and a store without hooks: nothing stored, no id, the phase from the type */
	struct bench_store empty;
	bench_ledger_store(&empty, NULL);
	const struct bench_store *none[] = {NULL, &empty};
	for (size_t i = 0; i < 2; i++) {
		bench_run_init(&run);
		run.volume.volume_id = xstrdup("vol-2");
		run.volume.type = xstrdup("gp2");
		CHECK_I64(bench_link_migration(none[i], &run, &err), 0);
		CHECK_STR(run.phase, "before");
		CHECK_I64(bench_import(none[i], &run, json.s, json.len, "gp3.json", NULL, 0, &err), 0);
		CHECK_I64(run.id, 0);
		CHECK_STR(run.status, "ok");
		bench_run_release(&run);
	}
	CHECK_STR(err.s, "");

	buf_release(&rec.calls);
	buf_release(&json);
	buf_release(&log);
	buf_release(&err);
	return tap_done();
}
