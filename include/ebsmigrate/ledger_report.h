/*
 * ledger_report.h - what the finance report reads from the database (part of the ledger module;
 * the SQL lives in ledger_report.c): each volume's latest apply state, each volume's baseline
 * cost (from the first recorded plan that priced it) and the time of the first apply run; and
 * what `metrics` reads besides: a recorded plan's volumes and the latest runs.
 *
 * Ownership: arrays returned are owned by the caller; free them with the matching _free.
 */
#ifndef EBSMIGRATE_LEDGER_REPORT_H
#define EBSMIGRATE_LEDGER_REPORT_H

#include <stddef.h>
#include <time.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/money.h"

struct ledger;

/* A volume's state in the apply ledger: its latest row that is not merely 'planned' (by
 * updated_at, then id), or its latest 'planned' row when it has no other. */
struct ledger_volume_state {
	char *volume_id;
	enum apply_state state;
	time_t eligible_at;    /* deferred rows: when apply may send it; 0 = unset */
	time_t completed_at;   /* completed rows: completed_at, else updated_at; 0 = unset */
	micro_t current_monthly; /* the earliest row's cost before, as planned when applied */
};
/* Every volume of the ledger, ordered by volume_id. */
int ledger_volume_states(struct ledger *l, struct ledger_volume_state **out, size_t *n, struct buf *err);
void ledger_volume_states_free(struct ledger_volume_state *s, size_t n);

/* A volume's cost when it entered the first recorded plan (by generated_at, then id) that gave
 * it a current_monthly_usd. Plans whose document is not valid JSON are passed over. wanted
 * (n_wanted ids; NULL = every volume) limits the answer and lets the reading stop once each
 * wanted volume is found. Ordered by volume_id. */
struct ledger_baseline {
	char *volume_id;
	int64_t plan_id;
	micro_t monthly;
};
int ledger_plan_baselines(struct ledger *l, const char *const *wanted, size_t n_wanted,
			  struct ledger_baseline **out, size_t *n, struct buf *err);
void ledger_baselines_free(struct ledger_baseline *b, size_t n);

/* When the first apply run started; 0 when no apply ever ran. */
int ledger_first_apply(struct ledger *l, time_t *out, struct buf *err);

/* ---- the metrics' reads (metrics.c) ---- */

/* One volume of a recorded plan document as the metrics group and price it: the members of
 * volumes[] (docs/plan-json.md) that report_build reads. Strings NULL when absent or null. */
struct ledger_plan_volume {
	char *volume_id, *account, *region, *type, *action;
	char *cluster, *namespace_, *pvc, *storage_class; /* kubernetes.*; kube = 0: no kubernetes object */
	int kube;
	int64_t size_gib;
	int current_priced, target_priced, has_rightsize;
	micro_t current_monthly, target_monthly, rightsize_monthly;
};
/* The volumes[] of a plan document (the text of ledger_plan_load), in document order, read with
 * SQLite's JSON functions; entries without a string volume_id are passed over. A document that
 * is not valid JSON is EM_EINPUT naming plan_id. Free with ledger_plan_volumes_free. */
int ledger_plan_volumes(struct ledger *l, int64_t plan_id, const char *doc, struct ledger_plan_volume **out,
			size_t *n, struct buf *err);
void ledger_plan_volumes_free(struct ledger_plan_volume *v, size_t n);

/* The latest run of each recording command: 0 / NULL when none was recorded. */
struct ledger_last_runs {
	time_t inventory_finished;      /* inventory_runs.finished_at of the latest run */
	time_t plan_recorded;           /* plans.created_at of the latest plan */
	time_t apply_started, apply_finished; /* the latest apply run; finished 0 while running */
	char *apply_outcome;            /* ok | partial | failed | interrupted; NULL while running, or when
					 * the run ended without one (ledger_apply_outcome_shown tells) */
};
int ledger_last_runs(struct ledger *l, struct ledger_last_runs *out, struct buf *err);
void ledger_last_runs_release(struct ledger_last_runs *r);

#endif
