/*
 * bench_store_ledger.c - the bench store that records runs in the ledger (bench_ledger_store, the
 * command's choice: cmd_bench.c): struct bench_store's hooks over ledger_bench.h. The runners
 * (bench.c, bench_kube.c) call the hooks as results arrive and know no database; this file is
 * where a run becomes bench_runs / bench_outputs / bench_jobs rows, in the order bench.h states.
 *
 * Entry point: bench_ledger_store. The ledger stays the caller's (borrowed, may be NULL).
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/bench.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger_bench.h"

static int begin(void *db, struct bench_run *run, struct buf *err)
{
	return ledger_bench_run_begin(db, run, err);
}

static int output(void *db, const struct bench_run *run, const char *json, int64_t *output_id, struct buf *err)
{
	return ledger_bench_output_add(db, run->id, json, output_id, err);
}

static int job(void *db, const struct bench_run *run, int64_t output_id, int seq, struct bench_job *j,
	       struct buf *err)
{
	return ledger_bench_job_add(db, run->id, output_id, seq, j, err);
}

static int finish(void *db, const struct bench_run *run, struct buf *err)
{
	return ledger_bench_run_finish(db, run, err);
}

/* Fills run from its volume's latest apply ledger row (bench.h: bench_ledger_store). */
static int link(void *db, struct bench_run *run, int *linked, struct buf *err)
{
	struct bench_volume *v = &run->volume;
	struct ledger_bench_migration m;
	struct buf none = BUF_INIT;
	int rc = ledger_bench_migration(db, v->volume_id, &m, &none);
	if (rc == EM_ENOTFOUND)
		rc = 0;
	else if (rc)
		em_err(err, rc, "%s", none.s);
	else
		*linked = 1;
	buf_release(&none);
	if (!*linked)
		return rc;
	run->apply_volume_id = m.apply_volume_id;
	/* optimizing: the volume already has its target configuration (FACTS.md §3) */
	int done = m.state == APPLY_COMPLETED || m.state == APPLY_OPTIMIZING;
	if (!run->phase)
		run->phase = xstrdup(done ? "after" : "before");
	if (strcmp(run->phase, "after") == 0) {
		if (!v->type)
			v->type = xstrdup(m.target_type);
		if (!v->iops)
			v->iops = m.target_iops;
		if (!v->throughput)
			v->throughput = m.target_throughput;
	}
	if (!v->pvc && m.namespace_ && m.pvc) {
		struct buf p = BUF_INIT;
		buf_addf(&p, "%s/%s", m.namespace_, m.pvc);
		v->pvc = buf_detach(&p);
	}
	run->has_volume = 1;
	ledger_bench_migration_release(&m);
	return 0;
}

void bench_ledger_store(struct bench_store *store, struct ledger *db)
{
	memset(store, 0, sizeof *store);
	if (!db)
		return;
	store->ctx = db;
	store->begin = begin;
	store->output = output;
	store->job = job;
	store->finish = finish;
	store->link = link;
}
