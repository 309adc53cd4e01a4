/*
 * report.h - the finance report: a plan's volumes aggregated by one or more keys (namespace,
 * cluster, account, region, storage class, PVC label, EBS tag): baseline, now, target, and the
 * planned savings split into realized + in flight + remaining + blocked from the apply ledger's
 * states, the realized savings per day, and its writers (table, csv, json
 * ebsmigrate.report/v1, markdown, html).
 *
 * Ownership: struct report borrows the plan (which borrows the fleet and the price book: all
 * must outlive the report) and the keys (the options' arrays only during report_build); it owns
 * its groups, their key values, its series, notes and warnings. report_release frees what it owns. report_parse_group_by allocates the key array;
 * free it with report_keys_free. Writers append to a caller-owned buf and never print.
 */
#ifndef EBSMIGRATE_REPORT_H
#define EBSMIGRATE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/planner.h"

/* Values given to volumes a key does not apply to or that lack the value. */
#define REPORT_NOT_KUBERNETES "(not-kubernetes)"
#define REPORT_NONE "(none)"

enum report_key_kind { RKEY_NAMESPACE = 0, RKEY_CLUSTER, RKEY_ACCOUNT, RKEY_REGION, RKEY_STORAGE_CLASS, RKEY_LABEL,
		       RKEY_TAG };

struct report_key {
	enum report_key_kind kind;
	char *name; /* as printed and in JSON: "namespace", "label:team", "tag:owner" */
	char *arg;  /* the label or tag key; NULL for the others */
};

/* Parses "cluster,namespace,label:team". Empty parts, unknown names, repeated keys and
 * label:/tag: without a key are EM_EINPUT. */
int report_parse_group_by(const char *spec, struct report_key **out, size_t *n, struct buf *err);
void report_keys_free(struct report_key *k, size_t n);

/* REPORT_WIDE: the table with every column, unelided; REPORT_YAML: the JSON document in YAML
 * (yamlout.c converts report_write's JSON). */
enum report_format { REPORT_TABLE = 0, REPORT_CSV, REPORT_JSON, REPORT_MARKDOWN, REPORT_HTML, REPORT_WIDE, REPORT_YAML };
enum report_period { REPORT_MONTH = 0, REPORT_YEAR };

int report_format_parse(const char *s, enum report_format *out);
int report_period_parse(const char *s, enum report_period *out);

/* Where a volume stands in the migration, from the apply ledger (latest row that is not merely
 * 'planned'; see ledger_report.h). */
struct report_volume_state {
	const char *volume_id;
	enum apply_state state;    /* apply_volumes.state */
	time_t eligible_at;        /* deferred: when apply may send it; 0 = unset */
	time_t completed_at;       /* completed: when; 0 = unknown */
	int has_ledger_cost;
	micro_t ledger_current;    /* cost before as the first ledger row planned it (baseline fallback) */
};

/* A volume's baseline: its monthly cost when it entered the first recorded plan. */
struct report_baseline {
	const char *volume_id;
	micro_t monthly;
};

/* A completion observed outside the ledger (hook for an observer such as CloudTrail's
 * ModifyVolume history; nothing fills it yet). Counted like a ledger completion for volumes the
 * ledger has not completed. */
struct report_observed_completion {
	const char *volume_id;
	time_t completed_at;
};

struct report_options {
	const struct report_key *keys;
	size_t n_keys;
	enum report_period period;
	time_t since;                          /* realized: completions at or after; 0 = all */
	time_t now;                            /* deferrals still pending; the series' last day */
	time_t first_apply;                    /* the series' first day; 0 = no apply ran */
	const struct report_volume_state *states; /* the ledger's volumes (may be NULL) */
	size_t n_states;
	const struct report_baseline *baselines;  /* from the recorded plans (may be NULL) */
	size_t n_baselines;
	const struct report_observed_completion *observed; /* hook; may be NULL */
	size_t n_observed;
};

/* One row of figures. Money covers priced volumes only (as plan totals do). Each volume's
 * baseline, current and target are rounded to whole cents once (half away from zero); every other
 * money figure is a difference or a sum of those cents, so nothing is rounded again and the
 * identity realized + in_flight + remaining + blocked == planned holds exactly per volume, per
 * group and in the totals, and groups add up to the totals. */
struct report_figures {
	int64_t volumes, unpriced, size_gib;
	int64_t migrated;        /* volumes whose completion counts in realized */
	int64_t in_flight_volumes, blocked_volumes;
	int64_t gp2_volumes, gp2_size_gib; /* gp2 in the plan and not completed since (ledger or observed) */
	micro_t baseline;        /* cost when each volume entered the first recorded plan */
	micro_t current, target, savings, savings_annual; /* savings = current - target (the plan's) */
	micro_t planned;         /* baseline - target */
	micro_t realized;        /* planned savings of volumes completed (within --since) */
	micro_t in_flight;       /* planned savings of volumes with a modification sent, not settled */
	micro_t remaining;       /* planned savings still to be sent */
	micro_t blocked;         /* planned savings that cannot be sent now (blocked, review, deferred, failed) */
	micro_t rightsize;       /* further monthly savings from right-sizing flagged volumes */
};

/* One day of realized savings (UTC). */
struct report_day {
	time_t day;              /* 00:00:00Z */
	int64_t completed;       /* completions counted that day */
	micro_t realized;        /* monthly savings those completions realized */
	micro_t cumulative;      /* monthly savings realized by the end of the day */
};

struct report_group {
	char **values;           /* one per key, owned */
	char *joined;            /* the values joined by '\x1f' (ordering), owned */
	struct report_figures f;
};

struct report {
	const struct plan *plan;
	const struct report_key *keys;
	size_t n_keys;
	enum report_period period;
	time_t since;
	struct report_group *groups; /* ordered by savings (largest first), then key values */
	size_t n_groups, alloc_groups;
	struct report_figures totals;
	int64_t ledger_elsewhere;    /* completed ledger volumes absent from the inputs */
	struct report_day *series;   /* one per day from the first apply to now; NULL when none ran */
	size_t n_series;
	char **warnings;             /* e.g. the price-age warning; shown in every format */
	size_t n_warnings, alloc_warnings;
};

void report_build(struct report *out, const struct plan *p, const struct report_options *o);
void report_add_warning(struct report *r, const char *msg);
void report_release(struct report *r);
/* color: ANSI colours in the table (TTY only). CSV holds the groups only (no total row). */
void report_write(struct buf *out, const struct report *r, enum report_format fmt, int color);
/* The table of report_write (table.c) fitted by to: width, wide, titles (NULL: unlimited). */
struct table_options;
void report_write_table(struct buf *out, const struct report *r, int color, const struct table_options *to);
/* CSV of the totals: the groups' header and one row, key columns "(total)". */
void report_write_csv_totals(struct buf *out, const struct report *r);
/* CSV of the realized-savings series: date,volumes_completed,realized_monthly_usd,
 * cumulative_realized_monthly_usd. */
void report_write_csv_series(struct buf *out, const struct report *r);

#endif
