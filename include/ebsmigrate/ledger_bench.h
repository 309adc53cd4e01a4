/*
 * ledger_bench.h - bench results in the database (migration 0004): runs, the raw fio JSON, jobs
 * and their per-second IOPS series. Part of the ledger module (SQL lives in ledger_bench.c).
 *
 * Write order (bench.c keeps it): ledger_bench_run_begin when a run starts (status 'running'),
 * ledger_bench_output_add + ledger_bench_job_add as each fio result arrives (each call commits),
 * ledger_bench_run_finish at the end. A run killed in between keeps what was committed and shows
 * status 'running' until something finishes it.
 *
 * Ownership: runs loaded are owned by the caller (bench_run_release); the bench structs passed
 * in are borrowed, and only their id fields are written.
 */
#ifndef EBSMIGRATE_LEDGER_BENCH_H
#define EBSMIGRATE_LEDGER_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/buf.h"

struct ledger;
struct bench_run;
struct bench_job;

/* Inserts run (status, created_at default to 'running' and now) and sets run->id. */
int ledger_bench_run_begin(struct ledger *l, struct bench_run *run, struct buf *err);
/* Stores one fio JSON document of run_id; *id_out = its id. */
int ledger_bench_output_add(struct ledger *l, int64_t run_id, const char *fio_json, int64_t *id_out, struct buf *err);
/* Stores job (and its series) as job number seq of run_id, in one transaction; sets job->id.
 * output_id 0 = none. */
int ledger_bench_job_add(struct ledger *l, int64_t run_id, int64_t output_id, int seq, struct bench_job *job,
			 struct buf *err);
/* Updates the run's status, finished_at (now), error and fio_version from run, and fills the
 * volume fields the row does not have yet (node, instance type, a scratch volume's id). */
int ledger_bench_run_finish(struct ledger *l, const struct bench_run *run, struct buf *err);

/* Every run id, oldest first. Caller frees *ids. */
int ledger_bench_run_ids(struct ledger *l, int64_t **ids, size_t *n, struct buf *err);
/* Loads run id with its jobs (and their series when with_series). out is initialised here.
 * EM_ENOTFOUND naming the id when there is none. */
int ledger_bench_run_load(struct ledger *l, int64_t id, int with_series, struct bench_run *out, struct buf *err);
/* A run reference: a number is an id; anything else is a label (its latest run). EM_ENOTFOUND
 * "no bench run with id or label 'REF'". */
int ledger_bench_run_resolve(struct ledger *l, const char *ref, int64_t *id_out, struct buf *err);
/* The latest run of phase 'before' and the latest of phase 'after' of a volume; 0 when there is
 * none. EM_ENOTFOUND when the volume has no run at all. */
int ledger_bench_volume_pair(struct ledger *l, const char *volume_id, int64_t *before_id, int64_t *after_id,
			     struct buf *err);
/* The raw fio JSON documents of a run, oldest first, each appended to out followed by "\n". */
int ledger_bench_outputs(struct ledger *l, int64_t run_id, struct buf *out, size_t *n, struct buf *err);

/* What the apply ledger knows about a volume's migration: its latest apply_volumes row. */
struct ledger_bench_migration {
	int64_t apply_volume_id;
	enum apply_state state;
	char *target_type;
	int64_t target_iops, target_throughput;
	char *namespace_, *pvc;
};
void ledger_bench_migration_release(struct ledger_bench_migration *m);
/* EM_ENOTFOUND when the apply ledger has no row for the volume. */
int ledger_bench_migration(struct ledger *l, const char *volume_id, struct ledger_bench_migration *out,
			   struct buf *err);

#endif
