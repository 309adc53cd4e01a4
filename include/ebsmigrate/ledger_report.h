/*
 * ledger_report.h - what the finance report reads from the database (part of the ledger module;
 * the SQL lives in ledger_report.c): each volume's latest apply state, each volume's baseline
 * cost (from the first recorded plan that priced it) and the time of the first apply run.
 *
 * Ownership: arrays returned are owned by the caller; free them with the matching _free.
 */
#ifndef EBSMIGRATE_LEDGER_REPORT_H
#define EBSMIGRATE_LEDGER_REPORT_H

#include <stddef.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/money.h"

struct ledger;

/* A volume's state in the apply ledger: its latest row that is not merely 'planned' (by
 * updated_at, then id), or its latest 'planned' row when it has no other. */
struct ledger_volume_state {
	char *volume_id;
	char *state;           /* planned, submitted, modifying, optimizing, completed, failed, deferred */
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

#endif
