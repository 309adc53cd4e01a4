/*
 * report.h - the finance report: a plan's volumes aggregated by one or more keys (namespace,
 * cluster, account, region, storage class, PVC label, EBS tag), with realized savings from the
 * apply ledger, and its writers (table, csv, json ebsmigrate.report/v1, markdown, html).
 *
 * Ownership: struct report borrows the plan (which borrows the fleet and the price book: all
 * must outlive the report) and the keys; it owns its groups, their key values, its notes and
 * warnings. report_release frees what it owns. report_parse_group_by allocates the key array;
 * free it with report_keys_free. Writers append to a caller-owned buf and never print.
 */
#ifndef EBSMIGRATE_REPORT_H
#define EBSMIGRATE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

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

enum report_format { REPORT_TABLE = 0, REPORT_CSV, REPORT_JSON, REPORT_MARKDOWN, REPORT_HTML };
enum report_period { REPORT_MONTH = 0, REPORT_YEAR };

int report_format_parse(const char *s, enum report_format *out);
int report_period_parse(const char *s, enum report_period *out);

struct report_options {
	const struct report_key *keys;
	size_t n_keys;
	enum report_period period;
	time_t since;                          /* realized: completions at or after; 0 = all */
	const struct ledger_completed *completed; /* the ledger's completed volumes (may be NULL) */
	size_t n_completed;
};

/* One row of figures. Money covers priced volumes only (as plan totals do); every figure is a
 * sum of per-volume cents, so groups add up to the totals exactly. */
struct report_figures {
	int64_t volumes, unpriced, size_gib;
	int64_t migrated;        /* volumes whose completion counts in realized */
	micro_t current, target, savings, savings_annual;
	micro_t realized;        /* completed in the ledger (within --since): before - after as planned */
	micro_t remaining;       /* savings of volumes the ledger has not completed */
	micro_t rightsize;       /* further monthly savings from right-sizing flagged volumes */
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
	char **warnings;             /* e.g. the price-age warning; shown in every format */
	size_t n_warnings, alloc_warnings;
};

void report_build(struct report *out, const struct plan *p, const struct report_options *o);
void report_add_warning(struct report *r, const char *msg);
void report_release(struct report *r);
/* color: ANSI colours in the table (TTY only). */
void report_write(struct buf *out, const struct report *r, enum report_format fmt, int color);

#endif
