/*
 * metrics.h - `ebsmigrate metrics`: the migration's figures as metric families for dashboards
 * (docs/metrics.md), collected from the database, and their text exposition in the OpenMetrics
 * 1.0 format or the Prometheus text format 0.0.4 (node-exporter's textfile collector).
 *
 * The model: a document of families (name, unit, help, label names: static strings), each with
 * samples (label values and the value as text, owned). metrics_collect fills one from the latest
 * recorded plan (priced and split by report_build, as `report` does), the apply ledger (counted
 * by apply_totals_add, as `status --no-verify` does), the latest runs and the price book.
 * metrics_write never fails and never prints: every label value is escaped (buf_add_label_escaped),
 * so hostile cluster or namespace names cannot break the document.
 *
 * Ownership: struct metrics_doc owns its families' samples; metrics_doc_release frees them. The
 * ledger and the scope are borrowed during metrics_collect.
 */
#ifndef EBSMIGRATE_METRICS_H
#define EBSMIGRATE_METRICS_H

#include <stddef.h>
#include <time.h>

#include "ebsmigrate/buf.h"

struct ledger;
struct scope;

enum metrics_format { METRICS_OPENMETRICS = 0, METRICS_PROMETHEUS };
#define METRICS_CONTENT_TYPE_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define METRICS_CONTENT_TYPE_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"

struct metrics_sample {
	char **values; /* one per label of the family */
	char *value;   /* "12", "885.80", "1764590400" */
};

struct metrics_family {
	const char *name;  /* ebsmigrate_..., ending in _UNIT when unit is set */
	const char *unit;  /* OpenMetrics UNIT, or NULL */
	const char *help;
	const char *const *labels;
	size_t n_labels;
	struct metrics_sample *samples;
	size_t n, alloc;
};

struct metrics_doc {
	struct metrics_family *f;
	size_t n, alloc;
};

void metrics_doc_init(struct metrics_doc *d);
void metrics_doc_release(struct metrics_doc *d);
/* A new family (gauge) at the end of d; returns its index. labels: n_labels names. */
size_t metrics_family_add(struct metrics_doc *d, const char *name, const char *unit, const char *help,
			  const char *const *labels, size_t n_labels);
/* A sample of family fam: values (n_labels of them, copied), value text (copied). */
void metrics_sample_add(struct metrics_doc *d, size_t fam, const char *const *values, const char *value);

/* The exposition: per family # HELP, # TYPE gauge (and # UNIT in OpenMetrics), then its samples;
 * OpenMetrics ends with "# EOF". Label values escaped; deterministic for the same document. */
void metrics_write(struct buf *out, const struct metrics_doc *d, enum metrics_format fmt);
/* The format a scraper asks for with its Accept header: OpenMetrics when it names
 * application/openmetrics-text (or no header / any other), Prometheus text 0.0.4 when it names only
 * text/plain. */
enum metrics_format metrics_negotiate(const char *accept);
const char *metrics_content_type(enum metrics_format fmt);

/* Collects every family from the database l: now is the clock (em_now) for ages and deferrals;
 * scope (may be NULL or empty) limits the volumes as `report` and `status` scope them (-l is the
 * caller's to refuse: plan documents carry no labels). *no_plan is set when no plan is recorded
 * (the fleet families are then empty). EM_* with the message in err. */
int metrics_collect(struct metrics_doc *out, struct ledger *l, const struct scope *scope, time_t now, int *no_plan,
		    struct buf *err);

#endif
