/*
 * ledger_apply.h - the apply ledger (migration 0003): runs, one row per (plan, volume), and
 * every state transition. Part of the ledger module (SQL lives in ledger_apply.c).
 *
 * States: planned -> submitted -> modifying -> optimizing -> completed | failed; deferred.
 * Rule: apply writes a row's new state (and commits) BEFORE the API call that the state
 * announces (submitted before ModifyVolume / the PVC patch), and the call's outcome after.
 *
 * Ownership: rows returned are owned by the caller (apply_row_release / apply_rows_free).
 */
#ifndef EBSMIGRATE_LEDGER_APPLY_H
#define EBSMIGRATE_LEDGER_APPLY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/ledger.h" /* the apply lock: ledger_apply_lock */
#include "ebsmigrate/money.h"

struct apply_row {
	int64_t id, plan_id, run_id;
	char *volume_id, *account, *region, *cluster, *namespace_, *pvc;
	enum modify_method method; /* vac | annotation | ec2 (never auto) */
	enum apply_state state;
	char *target_type;
	int64_t target_iops, target_throughput;
	char *target_class;
	micro_t current_monthly, target_monthly;
	time_t eligible_at, submitted_at, started_at, completed_at, updated_at; /* 0 = unset */
	char *error_code, *error_message;
};

void apply_row_release(struct apply_row *r);
void apply_rows_free(struct apply_row *rows, size_t n);

/* The plan document recorded with that id (0 = the latest). EM_ENOTFOUND when none. */
int ledger_plan_load(struct ledger *l, int64_t id, int64_t *id_out, char **json_out, struct buf *err);

/* What apply says about the plan it is about to use (ledger_plan_summary). */
struct plan_summary {
	int64_t id;
	time_t created_at;            /* recorded (the --now of the recording run) */
	time_t generated_at;          /* the document's generated_at */
	char sha256[65];              /* of the recorded document (plans.plan_sha256, or computed) */
	int64_t last_applied_plan_id; /* the plan of the latest apply run, any plan; 0 = none */
};

/* The plan with that id (0 = the latest recorded). EM_ENOTFOUND (with ledger_plan_load's
 * message) when there is none. */
int ledger_plan_summary(struct ledger *l, int64_t id, struct plan_summary *out, struct buf *err);

int ledger_apply_run_begin(struct ledger *l, int64_t plan_id, const char *options_json, int64_t *run_id,
			   struct buf *err);
int ledger_apply_run_end(struct ledger *l, int64_t run_id, const char *outcome, struct buf *err);

/* One apply run (apply_runs). */
struct apply_run {
	int64_t id, plan_id;
	time_t started_at, finished_at; /* finished_at 0 when none was recorded */
	char *outcome;                  /* ok | partial | failed | interrupted; NULL when none was recorded */
};
void apply_run_release(struct apply_run *r);
/* The latest apply run; EM_ENOTFOUND when none was recorded. */
int ledger_apply_run_latest(struct ledger *l, struct apply_run *out, struct buf *err);
/* What a run's outcome is called (status, metrics, apply's start-up note): the recorded one;
 * for a run that recorded none, "running" while another process holds the database's apply
 * lock (an apply at work), else "interrupted": it ended without recording one (killed, crashed,
 * the machine went down). A static string. */
const char *ledger_apply_outcome_shown(struct ledger *l, const char *recorded);
/* Records 'interrupted' as the outcome of every run that has none: called by apply holding the
 * lock, before its own run begins, when no earlier run can still be at work. *n: how many. */
int ledger_apply_runs_interrupted(struct ledger *l, size_t *n, struct buf *err);

/* Inserts the row (id 0) or updates it (by id), plus an apply_events row from its previous
 * state, in one committed transaction. Sets r->id on insert and r->updated_at. */
int ledger_apply_save(struct ledger *l, struct apply_row *r, const char *detail, struct buf *err);
/* The same, only if the stored row (r->id) still has expect_state and expect_submitted as
 * submitted_at (checked in the write transaction); EM_ECONFLICT, nothing written, otherwise. */
int ledger_apply_save_if(struct ledger *l, struct apply_row *r, enum apply_state expect_state, time_t expect_submitted,
			 const char *detail, struct buf *err);
/* The row of (plan_id, volume_id); EM_ENOTFOUND when absent. */
int ledger_apply_get(struct ledger *l, int64_t plan_id, const char *volume_id, struct apply_row *out,
		     struct buf *err);
/* Rows of a plan (plan_id > 0) or, with 0, the latest row of every volume, ordered by id. */
int ledger_apply_list(struct ledger *l, int64_t plan_id, struct apply_row **rows, size_t *n, struct buf *err);
/* Start times (submitted_at) of every modification ebsmigrate sent for the volume (any plan),
 * oldest first: rows that reached submitted or later. Caller frees *times. */
int ledger_apply_starts(struct ledger *l, const char *volume_id, time_t **times, size_t *n, struct buf *err);

#endif
