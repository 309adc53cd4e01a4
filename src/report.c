/*
 * report.c - the finance report: aggregation of a plan by keys, realized savings from the apply
 * ledger, and the writers (table, csv, json, markdown, html with an inline SVG chart).
 *
 * Entry points: report_parse_group_by, report_build, report_write, report_release (and the
 * small parsers report_format_parse, report_period_parse).
 *
 * What each figure means (per group; totals are the same sums over every volume):
 *   volumes, size_gib     every volume of the plan, priced or not (none is ever dropped: a
 *                         volume without a key's value is grouped under "(none)", and a volume
 *                         outside Kubernetes under "(not-kubernetes)" for Kubernetes keys);
 *   current, target       the plan's per-volume cents, priced volumes only (unpriced counted);
 *   savings               current - target; annual = monthly x 12;
 *   realized              for volumes the apply ledger shows completed (latest completed row,
 *                         completed_at >= --since): current_monthly_micro - target_monthly_micro
 *                         as planned when applied;
 *   remaining             the savings of volumes the ledger has not completed (a completed
 *                         volume has nothing left to save, whatever the inputs still say);
 *   rightsize             target - right-sized cost of oversized-for-iops volumes.
 *
 * Invariants: money is integer micro-dollars made of per-volume cents, so the groups add up to
 * the totals to the cent, and the totals' volumes/current/target/savings/annual/rightsize equal
 * the plan's totals exactly (same items, same sums). Ledger rows for volumes that are not in
 * the inputs are counted in ledger_elsewhere, never attributed to a group. Groups are ordered by
 * savings (largest first), then by key values, so output is deterministic.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/report.h"
#include "ebsmigrate/strmap.h"

/* ---------------------------------------------------------------- keys */

static const char *const key_names[] = {"namespace", "cluster", "account", "region", "storage-class"};

int report_parse_group_by(const char *spec, struct report_key **out, size_t *n, struct buf *err)
{
	*out = NULL;
	*n = 0;
	struct report_key *k = NULL;
	size_t alloc = 0;
	int rc = 0;
	const char *p = spec;
	while (!rc) {
		size_t len = strcspn(p, ",");
		char *part = xstrndup(p, len);
		struct report_key key = {RKEY_NAMESPACE, NULL, NULL};
		int found = 0;
		for (int i = 0; i < 5 && !found; i++)
			if (strcmp(part, key_names[i]) == 0) {
				key.kind = (enum report_key_kind)i;
				found = 1;
			}
		if (!found && (strncmp(part, "label:", 6) == 0 || strncmp(part, "tag:", 4) == 0)) {
			int label = part[0] == 'l';
			const char *arg = part + (label ? 6 : 4);
			if (!*arg) {
				rc = em_err(err, EM_EINPUT, "--group-by: '%s' needs a key (e.g. %s:team)", part,
					    label ? "label" : "tag");
			} else {
				key.kind = label ? RKEY_LABEL : RKEY_TAG;
				key.arg = xstrdup(arg);
				found = 1;
			}
		}
		if (!rc && !found)
			rc = em_err(err, EM_EINPUT,
				    "--group-by: '%s' is not one of namespace, cluster, account, region, storage-class, "
				    "label:KEY, tag:KEY",
				    part);
		for (size_t i = 0; !rc && i < *n; i++)
			if (strcmp(k[i].name, part) == 0)
				rc = em_err(err, EM_EINPUT, "--group-by: '%s' is given twice", part);
		if (rc) {
			free(key.arg);
			free(part);
			break;
		}
		key.name = part;
		XGROW(k, *n, alloc);
		k[(*n)++] = key;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	if (rc) {
		report_keys_free(k, *n);
		*n = 0;
		return rc;
	}
	*out = k;
	return 0;
}

void report_keys_free(struct report_key *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(k[i].name);
		free(k[i].arg);
	}
	free(k);
}

int report_format_parse(const char *s, enum report_format *out)
{
	static const char *const names[] = {"table", "csv", "json", "markdown", "html"};
	for (int i = 0; i < 5; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum report_format)i;
			return 0;
		}
	if (strcmp(s, "md") == 0) {
		*out = REPORT_MARKDOWN;
		return 0;
	}
	return EM_EINPUT;
}

int report_period_parse(const char *s, enum report_period *out)
{
	if (strcmp(s, "month") == 0)
		*out = REPORT_MONTH;
	else if (strcmp(s, "year") == 0)
		*out = REPORT_YEAR;
	else
		return EM_EINPUT;
	return 0;
}

static const char *kube_or(const struct volume *v, const char *value)
{
	if (!v->kube)
		return REPORT_NOT_KUBERNETES;
	return value && *value ? value : REPORT_NONE;
}

static const char *kv_get(const struct kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].value;
	return NULL;
}

/* The volume's value for one key (borrowed; never NULL). */
static const char *key_value(const struct report_key *k, const struct volume *v)
{
	const char *s;
	switch (k->kind) {
	case RKEY_NAMESPACE: return kube_or(v, v->kube ? v->kube->namespace_ : NULL);
	case RKEY_CLUSTER: return kube_or(v, v->kube ? v->kube->cluster : NULL);
	case RKEY_STORAGE_CLASS: return kube_or(v, v->kube ? v->kube->storage_class : NULL);
	case RKEY_LABEL:
		/* PVC labels only: namespace labels are not collected (docs/report.md). */
		return kube_or(v, v->kube ? kv_get(v->kube->labels, v->kube->n_labels, k->arg) : NULL);
	case RKEY_ACCOUNT: s = v->account; break;
	case RKEY_REGION: s = v->region; break;
	case RKEY_TAG: s = volume_tag(v, k->arg); break;
	default: s = NULL;
	}
	return s && *s ? s : REPORT_NONE;
}

/* ---------------------------------------------------------------- build */

static void add_item(struct report_figures *f, const struct plan_item *it, const struct ledger_completed *done,
		     int counts_realized)
{
	f->volumes++;
	f->size_gib += it->v->size_gib;
	int priced = it->current_priced && it->target_priced;
	if (priced) {
		f->current += it->current_monthly;
		f->target += it->target_monthly;
	} else {
		f->unpriced++;
	}
	if (it->has_rightsize)
		f->rightsize += it->target_monthly - it->rightsize_monthly;
	if (done) {
		if (counts_realized) {
			f->migrated++;
			f->realized += done->current_monthly_micro - done->target_monthly_micro;
		}
	} else if (priced) {
		f->remaining += it->current_monthly - it->target_monthly;
	}
	f->savings = f->current - f->target;
	f->savings_annual = f->savings * 12;
}

/* Groups compare by savings (largest first), then by their joined key values: '\x1f' sorts
 * below every printable character, so this is the key-by-key order. */
static int group_cmp(const void *a, const void *b)
{
	const struct report_group *x = a, *y = b;
	if (x->f.savings != y->f.savings)
		return x->f.savings > y->f.savings ? -1 : 1;
	return strcmp(x->joined, y->joined);
}

void report_build(struct report *out, const struct plan *p, const struct report_options *o)
{
	memset(out, 0, sizeof *out);
	out->plan = p;
	out->keys = o->keys;
	out->n_keys = o->n_keys;
	out->period = o->period;
	out->since = o->since;

	struct strmap done = STRMAP_INIT, groups = STRMAP_INIT;
	for (size_t i = 0; i < o->n_completed; i++)
		strmap_put(&done, o->completed[i].volume_id, i);
	char *matched = o->n_completed ? xcalloc(o->n_completed, 1) : NULL;

	struct buf key = BUF_INIT;
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_item *it = &p->items[i];
		buf_reset(&key);
		for (size_t k = 0; k < o->n_keys; k++) {
			if (k)
				buf_addc(&key, '\x1f');
			buf_adds(&key, key_value(&o->keys[k], it->v));
		}
		size_t g;
		if (!strmap_get(&groups, key.s, &g)) {
			XGROW(out->groups, out->n_groups, out->alloc_groups);
			g = out->n_groups++;
			struct report_group *ng = &out->groups[g];
			memset(ng, 0, sizeof *ng);
			ng->values = xcalloc(o->n_keys ? o->n_keys : 1, sizeof *ng->values);
			ng->joined = xstrdup(key.s);
			for (size_t k = 0; k < o->n_keys; k++)
				ng->values[k] = xstrdup(key_value(&o->keys[k], it->v));
			strmap_put(&groups, key.s, g);
		}
		const struct ledger_completed *c = NULL;
		size_t at;
		int in_window = 0;
		if (strmap_get(&done, it->v->volume_id, &at)) {
			c = &o->completed[at];
			matched[at] = 1;
			time_t t = 0;
			in_window = !o->since || (c->completed_at && em_parse_time(c->completed_at, &t) == 0 && t >= o->since);
		}
		add_item(&out->groups[g].f, it, c, in_window);
		add_item(&out->totals, it, c, in_window);
	}
	for (size_t i = 0; i < o->n_completed; i++)
		out->ledger_elsewhere += !matched[i];
	if (out->n_groups > 1)
		qsort(out->groups, out->n_groups, sizeof *out->groups, group_cmp);
	free(matched);
	buf_release(&key);
	strmap_release(&done);
	strmap_release(&groups);
}

void report_add_warning(struct report *r, const char *msg)
{
	XGROW(r->warnings, r->n_warnings, r->alloc_warnings);
	r->warnings[r->n_warnings++] = xstrdup(msg);
}

void report_release(struct report *r)
{
	for (size_t i = 0; i < r->n_groups; i++) {
		for (size_t k = 0; k < r->n_keys; k++)
			free(r->groups[i].values[k]);
		free(r->groups[i].values);
		free(r->groups[i].joined);
	}
	free(r->groups);
	for (size_t i = 0; i < r->n_warnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- columns */

/* The figure columns, in output order. Money columns follow --period; SAVINGS_OTHER is the
 * savings in the other period (annual for month, monthly for year), so both always appear. */
enum fig { F_VOLUMES, F_SIZE, F_UNPRICED, F_MIGRATED, F_CURRENT, F_TARGET, F_SAVINGS, F_SAVINGS_OTHER, F_PCT,
	   F_REALIZED, F_REMAINING, F_RIGHTSIZE, F_COUNT };

struct col {
	const char *month_field, *year_field; /* csv header, html data-field */
	const char *month_title, *year_title; /* table, markdown, html */
	int in_table;                         /* also in the table and markdown */
	int money;
};

static const struct col cols[F_COUNT] = {
	{"volumes", "volumes", "VOLUMES", "VOLUMES", 1, 0},
	{"size_gib", "size_gib", "GiB", "GiB", 1, 0},
	{"unpriced", "unpriced", "UNPRICED", "UNPRICED", 0, 0},
	{"migrated", "migrated", "MIGRATED", "MIGRATED", 0, 0},
	{"current_monthly_usd", "current_annual_usd", "NOW $/MO", "NOW $/YR", 1, 1},
	{"target_monthly_usd", "target_annual_usd", "AFTER $/MO", "AFTER $/YR", 1, 1},
	{"savings_monthly_usd", "savings_annual_usd", "SAVES $/MO", "SAVES $/YR", 1, 1},
	{"savings_annual_usd", "savings_monthly_usd", "SAVES $/YR", "SAVES $/MO", 1, 1},
	{"savings_percent", "savings_percent", "SAVES %", "SAVES %", 1, 0},
	{"realized_monthly_usd", "realized_annual_usd", "REALIZED $/MO", "REALIZED $/YR", 1, 1},
	{"remaining_monthly_usd", "remaining_annual_usd", "REMAINING $/MO", "REMAINING $/YR", 1, 1},
	{"rightsize_monthly_usd", "rightsize_annual_usd", "RIGHT-SIZE $/MO", "RIGHT-SIZE $/YR", 1, 1},
};

static const char *col_field(enum fig c, enum report_period p)
{
	return p == REPORT_YEAR ? cols[c].year_field : cols[c].month_field;
}

static const char *col_title(enum fig c, enum report_period p)
{
	return p == REPORT_YEAR ? cols[c].year_title : cols[c].month_title;
}

/* A money figure in the report's period (micro-dollars). */
static micro_t money_of(const struct report_figures *f, enum fig c, enum report_period p)
{
	int y = p == REPORT_YEAR;
	switch (c) {
	case F_CURRENT: return y ? f->current * 12 : f->current;
	case F_TARGET: return y ? f->target * 12 : f->target;
	case F_SAVINGS: return y ? f->savings_annual : f->savings;
	case F_SAVINGS_OTHER: return y ? f->savings : f->savings_annual;
	case F_REALIZED: return y ? f->realized * 12 : f->realized;
	case F_REMAINING: return y ? f->remaining * 12 : f->remaining;
	case F_RIGHTSIZE: return y ? f->rightsize * 12 : f->rightsize;
	default: return 0;
	}
}

static int64_t count_of(const struct report_figures *f, enum fig c)
{
	switch (c) {
	case F_VOLUMES: return f->volumes;
	case F_SIZE: return f->size_gib;
	case F_UNPRICED: return f->unpriced;
	case F_MIGRATED: return f->migrated;
	default: return 0;
	}
}

/* Savings as a share of the current cost in tenths of a percent (rounded half away from zero);
 * 0 with *known = 0 when the current cost is 0. */
static int64_t percent_tenths(const struct report_figures *f, int *known)
{
	*known = f->current != 0;
	if (!*known)
		return 0;
	__int128 num = (__int128)f->savings * 2000;
	__int128 q = num / f->current;
	return (int64_t)(q >= 0 ? (q + 1) / 2 : (q - 1) / 2);
}

static void add_percent(struct buf *b, const struct report_figures *f, const char *unknown, int sign)
{
	int known;
	int64_t t = percent_tenths(f, &known);
	if (!known) {
		buf_adds(b, unknown);
		return;
	}
	int64_t a = t < 0 ? -t : t;
	buf_addf(b, "%s%lld.%lld%s", t < 0 ? "-" : "", (long long)(a / 10), (long long)(a % 10), sign ? "%" : "");
}

/* A figure as plain text: "11.40", "12", "20.0", or "" for an unknown percentage. */
static void add_plain(struct buf *b, const struct report_figures *f, enum fig c, enum report_period p)
{
	if (c == F_PCT)
		add_percent(b, f, "", 0);
	else if (cols[c].money)
		money_add_usd(b, money_of(f, c, p));
	else
		buf_addf(b, "%lld", (long long)count_of(f, c));
}

/* A figure for people: "$1,234.56", "1,234", "20.0%". */
static void add_pretty(struct buf *b, const struct report_figures *f, enum fig c, enum report_period p)
{
	if (c == F_PCT) {
		add_percent(b, f, "-", 1);
	} else if (cols[c].money) {
		money_add_usd_pretty(b, money_of(f, c, p));
	} else {
		struct buf t = BUF_INIT;
		buf_addf(&t, "%lld", (long long)count_of(f, c));
		size_t lead = t.len % 3 ? t.len % 3 : 3;
		for (size_t i = 0; i < t.len; i++) {
			if (i >= lead && (i - lead) % 3 == 0 && t.s[0] != '-')
				buf_addc(b, ',');
			buf_addc(b, t.s[i]);
		}
		buf_release(&t);
	}
}

static const char *period_name(enum report_period p)
{
	return p == REPORT_YEAR ? "year" : "month";
}

/* ---------------------------------------------------------------- json */

static void json_figures(struct buf *b, const struct report_figures *f)
{
	buf_addf(b, "\"volumes\":%lld,\"size_gib\":%lld,\"unpriced\":%lld,\"migrated\":%lld,\"current_monthly_usd\":",
		 (long long)f->volumes, (long long)f->size_gib, (long long)f->unpriced, (long long)f->migrated);
	money_add_json(b, f->current);
	buf_adds(b, ",\"target_monthly_usd\":");
	money_add_json(b, f->target);
	buf_adds(b, ",\"savings_monthly_usd\":");
	money_add_json(b, f->savings);
	buf_adds(b, ",\"savings_annual_usd\":");
	money_add_json(b, f->savings_annual);
	buf_adds(b, ",\"savings_percent\":");
	add_percent(b, f, "null", 0);
	buf_adds(b, ",\"realized_monthly_usd\":");
	money_add_json(b, f->realized);
	buf_adds(b, ",\"remaining_monthly_usd\":");
	money_add_json(b, f->remaining);
	buf_adds(b, ",\"rightsize_monthly_usd\":");
	money_add_json(b, f->rightsize);
}

static void json_time(struct buf *b, time_t t)
{
	if (!t) {
		buf_adds(b, "null");
		return;
	}
	char ts[21];
	em_format_time(t, ts);
	buf_add_json_str(b, ts);
}

static void write_json(struct buf *b, const struct report *r)
{
	const struct pricebook *book = r->plan->book;
	buf_adds(b, "{\"schema\":\"ebsmigrate.report/v1\",\"generated_at\":");
	json_time(b, r->plan->generated_at);
	buf_addf(b, ",\"mode\":\"%s\",\"period\":\"%s\",\"since\":", plan_mode_name(r->plan->mode),
		 period_name(r->period));
	json_time(b, r->since);
	buf_adds(b, ",\"pricing\":{\"source\":");
	buf_add_json_str(b, book->source);
	buf_adds(b, ",\"effective_date\":");
	buf_add_json_str(b, book->effective_date);
	buf_adds(b, ",\"fetched_at\":");
	buf_add_json_str(b, book->fetched_at);
	if (book->version)
		buf_addf(b, ",\"version\":%lld", (long long)book->version);
	buf_adds(b, "},\"group_by\":[");
	for (size_t k = 0; k < r->n_keys; k++) {
		if (k)
			buf_addc(b, ',');
		buf_add_json_str(b, r->keys[k].name);
	}
	buf_adds(b, "],\"warnings\":[");
	for (size_t i = 0; i < r->n_warnings; i++) {
		if (i)
			buf_addc(b, ',');
		buf_add_json_str(b, r->warnings[i]);
	}
	buf_addf(b, "],\"ledger_elsewhere\":%lld,\"groups\":[", (long long)r->ledger_elsewhere);
	for (size_t g = 0; g < r->n_groups; g++) {
		const struct report_group *gr = &r->groups[g];
		buf_adds(b, g ? ",\n{\"key\":{" : "\n{\"key\":{");
		for (size_t k = 0; k < r->n_keys; k++) {
			if (k)
				buf_addc(b, ',');
			buf_add_json_str(b, r->keys[k].name);
			buf_addc(b, ':');
			buf_add_json_str(b, gr->values[k]);
		}
		buf_adds(b, "},");
		json_figures(b, &gr->f);
		buf_addc(b, '}');
	}
	buf_adds(b, r->n_groups ? "\n],\"totals\":{" : "],\"totals\":{");
	json_figures(b, &r->totals);
	buf_adds(b, "}}\n");
}

/* ---------------------------------------------------------------- csv */

static void write_csv(struct buf *b, const struct report *r)
{
	for (size_t k = 0; k < r->n_keys; k++) {
		buf_add_csv_field(b, r->keys[k].name);
		buf_addc(b, ',');
	}
	for (int c = 0; c < F_COUNT; c++) {
		buf_adds(b, col_field((enum fig)c, r->period));
		buf_adds(b, c + 1 < F_COUNT ? "," : "\r\n");
	}
	for (size_t g = 0; g <= r->n_groups; g++) {
		const struct report_figures *f = g < r->n_groups ? &r->groups[g].f : &r->totals;
		for (size_t k = 0; k < r->n_keys; k++) {
			if (g < r->n_groups)
				buf_add_csv_field(b, r->groups[g].values[k]);
			else if (k == 0)
				buf_adds(b, "(total)");
			buf_addc(b, ',');
		}
		for (int c = 0; c < F_COUNT; c++) {
			add_plain(b, f, (enum fig)c, r->period);
			buf_adds(b, c + 1 < F_COUNT ? "," : "\r\n");
		}
	}
}

/* ---------------------------------------------------------------- table and markdown */

static void header_lines(struct buf *b, const struct report *r, const char *bullet)
{
	const struct pricebook *book = r->plan->book;
	char ts[21];
	em_format_time(r->plan->generated_at, ts);
	buf_addf(b, "%sgenerated %s, mode %s, per %s, grouped by ", bullet, ts, plan_mode_name(r->plan->mode),
		 period_name(r->period));
	for (size_t k = 0; k < r->n_keys; k++)
		buf_addf(b, "%s%s", k ? ", " : "", r->keys[k].name);
	buf_addf(b, "\n%sprices: %s", bullet, book->source ? book->source : "unknown source");
	if (book->version)
		buf_addf(b, ", version %lld", (long long)book->version);
	buf_addf(b, ", effective %s", book->effective_date ? book->effective_date : "unknown");
	if (book->fetched_at)
		buf_addf(b, ", fetched %s", book->fetched_at);
	buf_addf(b, "\n%srealized: migrations completed in the ledger", bullet);
	if (r->since) {
		em_format_time(r->since, ts);
		buf_addf(b, " since %s", ts);
	}
	buf_addc(b, '\n');
}

/* with_warnings = 0 for the table: its warnings go to stderr. */
static void footer_notes(struct buf *b, const struct report *r, const char *bullet, int with_warnings)
{
	if (r->totals.unpriced)
		buf_addf(b, "%s%lld unpriced volume%s counted in VOLUMES and GiB, left out of the money columns "
			    "(see 'ebsmigrate plan')\n",
			 bullet, (long long)r->totals.unpriced, r->totals.unpriced == 1 ? "" : "s");
	if (r->ledger_elsewhere)
		buf_addf(b, "%s%lld volume%s completed in the ledger %s not in these inputs; not counted\n", bullet,
			 (long long)r->ledger_elsewhere, r->ledger_elsewhere == 1 ? "" : "s",
			 r->ledger_elsewhere == 1 ? "is" : "are");
	for (size_t i = 0; with_warnings && i < r->n_warnings; i++) {
		buf_addf(b, "%swarning: ", bullet);
		buf_add_visible(b, r->warnings[i]);
		buf_addc(b, '\n');
	}
}

struct text_table {
	size_t n_cols;
	char ***rows; /* [row][col], row 0 = titles */
	size_t n_rows;
	int *right;
};

static void text_table_build(struct text_table *t, const struct report *r)
{
	size_t n_figs = 0;
	enum fig figs[F_COUNT];
	for (int c = 0; c < F_COUNT; c++)
		if (cols[c].in_table)
			figs[n_figs++] = (enum fig)c;
	t->n_cols = r->n_keys + n_figs;
	t->n_rows = r->n_groups + 2;
	t->rows = xcalloc(t->n_rows, sizeof *t->rows);
	t->right = xcalloc(t->n_cols, sizeof *t->right);
	for (size_t row = 0; row < t->n_rows; row++) {
		char **cells = t->rows[row] = xcalloc(t->n_cols, sizeof **t->rows);
		const struct report_figures *f = row == 0 ? NULL : row <= r->n_groups ? &r->groups[row - 1].f : &r->totals;
		for (size_t k = 0; k < r->n_keys; k++) {
			if (row == 0) {
				struct buf u = BUF_INIT;
				for (const char *s = r->keys[k].name; *s; s++)
					buf_addc(&u, *s >= 'a' && *s <= 'z' && !r->keys[k].arg ? (char)(*s - 32) : *s);
				cells[k] = buf_detach(&u);
			} else if (row <= r->n_groups) {
				/* group values are names and tags from the inputs: control characters shown */
				struct buf vis = BUF_INIT;
				buf_add_visible(&vis, r->groups[row - 1].values[k]);
				cells[k] = buf_detach(&vis);
			} else {
				cells[k] = xstrdup(k == 0 ? "TOTAL" : "");
			}
		}
		for (size_t i = 0; i < n_figs; i++) {
			t->right[r->n_keys + i] = 1;
			if (row == 0) {
				cells[r->n_keys + i] = xstrdup(col_title(figs[i], r->period));
			} else {
				struct buf v = BUF_INIT;
				add_pretty(&v, f, figs[i], r->period);
				cells[r->n_keys + i] = buf_detach(&v);
			}
		}
	}
}

static void text_table_free(struct text_table *t)
{
	for (size_t row = 0; row < t->n_rows; row++) {
		for (size_t c = 0; c < t->n_cols; c++)
			free(t->rows[row][c]);
		free(t->rows[row]);
	}
	free(t->rows);
	free(t->right);
}

static void pad(struct buf *b, size_t n)
{
	while (n--)
		buf_addc(b, ' ');
}

static void write_table(struct buf *b, const struct report *r, int color)
{
	buf_adds(b, "ebsmigrate report\n");
	header_lines(b, r, "");
	buf_addc(b, '\n');
	struct text_table t;
	text_table_build(&t, r);
	size_t *w = xcalloc(t.n_cols, sizeof *w);
	for (size_t row = 0; row < t.n_rows; row++)
		for (size_t c = 0; c < t.n_cols; c++)
			if (strlen(t.rows[row][c]) > w[c])
				w[c] = strlen(t.rows[row][c]);
	for (size_t row = 0; row < t.n_rows; row++) {
		if (row == t.n_rows - 1) { /* a rule above the totals */
			size_t total = 0;
			for (size_t c = 0; c < t.n_cols; c++)
				total += w[c] + (c ? 2 : 0);
			for (size_t i = 0; i < total; i++)
				buf_addc(b, '-');
			buf_addc(b, '\n');
		}
		int bold = color && (row == 0 || row == t.n_rows - 1);
		if (bold)
			buf_adds(b, "\033[1m");
		struct buf line = BUF_INIT;
		for (size_t c = 0; c < t.n_cols; c++) {
			const char *s = t.rows[row][c];
			size_t l = strlen(s);
			if (c)
				buf_adds(&line, "  ");
			if (t.right[c])
				pad(&line, w[c] - l);
			buf_adds(&line, s);
			if (!t.right[c])
				pad(&line, w[c] - l);
		}
		buf_trim_trailing(&line, ' ');
		buf_add(b, line.s, line.len);
		buf_release(&line);
		if (bold)
			buf_adds(b, "\033[0m");
		buf_addc(b, '\n');
	}
	free(w);
	text_table_free(&t);
	if (r->totals.unpriced || r->ledger_elsewhere)
		buf_addc(b, '\n');
	footer_notes(b, r, "", 0);
}

static void md_cell(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '\\' || *s == '*' || *s == '_' || *s == '`')
			buf_addc(b, '\\');
		buf_addc(b, *s == '\n' ? ' ' : *s);
	}
}

static void write_markdown(struct buf *b, const struct report *r)
{
	buf_adds(b, "# ebsmigrate report\n\n");
	header_lines(b, r, "- ");
	const struct report_figures *t = &r->totals;
	buf_addf(b, "\n**Savings: ");
	money_add_usd_pretty(b, t->savings);
	buf_adds(b, " per month (");
	money_add_usd_pretty(b, t->savings_annual);
	buf_adds(b, " per year)**, of which realized ");
	money_add_usd_pretty(b, t->realized);
	buf_adds(b, " and remaining ");
	money_add_usd_pretty(b, t->remaining);
	buf_adds(b, " per month.\n\n");
	struct text_table tt;
	text_table_build(&tt, r);
	for (size_t row = 0; row < tt.n_rows; row++) {
		int total = row == tt.n_rows - 1;
		buf_addc(b, '|');
		for (size_t c = 0; c < tt.n_cols; c++) {
			buf_addc(b, ' ');
			const char *s = tt.rows[row][c];
			if (total && *s)
				buf_adds(b, "**");
			md_cell(b, s);
			if (total && *s)
				buf_adds(b, "**");
			buf_adds(b, " |");
		}
		buf_addc(b, '\n');
		if (row == 0) {
			buf_addc(b, '|');
			for (size_t c = 0; c < tt.n_cols; c++)
				buf_adds(b, tt.right[c] ? "---:|" : "---|");
			buf_addc(b, '\n');
		}
	}
	text_table_free(&tt);
	if (r->totals.unpriced || r->ledger_elsewhere || r->n_warnings)
		buf_addc(b, '\n');
	footer_notes(b, r, "- ", 1);
}

/* ---------------------------------------------------------------- html */

static void html_esc(struct buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': buf_adds(b, "&amp;"); break;
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		case '"': buf_adds(b, "&quot;"); break;
		case '\'': buf_adds(b, "&#39;"); break;
		default: buf_addc(b, *s);
		}
	}
}

static const char html_style[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px;color:#1b1f24;"
	"background:#fff}\n"
	"h1{font-size:22px;margin:0 0 6px}p.meta{color:#57606a;margin:2px 0;font-size:13px}\n"
	".cards{display:flex;gap:12px;margin:16px 0;flex-wrap:wrap}\n"
	".card{border:1px solid #d0d7de;border-radius:6px;padding:10px 14px;min-width:150px}\n"
	".card .label{font-size:12px;color:#57606a}.card .value{font-size:20px;font-weight:600}\n"
	"table{border-collapse:collapse;font-size:13px;margin-top:12px}\n"
	"th,td{border-bottom:1px solid #d0d7de;padding:4px 8px;white-space:nowrap}\n"
	"th{background:#f6f8fa;text-align:left}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	"tfoot td{font-weight:700;border-top:2px solid #1b1f24}\n"
	".warn{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;border-radius:6px;margin:8px 0}\n"
	".notes{color:#57606a;font-size:12px}.scroll{overflow-x:auto;max-width:100%}\n";

#define CHART_MAX_GROUPS 20

static void group_label(struct buf *b, const struct report *r, const struct report_group *g)
{
	for (size_t k = 0; k < r->n_keys; k++)
		buf_addf(b, "%s%s", k ? " / " : "", g->values[k]);
}

/* Horizontal stacked bars: realized (green) then remaining (blue), per group, largest first. */
static void write_svg(struct buf *b, const struct report *r)
{
	size_t n = r->n_groups < CHART_MAX_GROUPS ? r->n_groups : CHART_MAX_GROUPS;
	const int label_w = 280, bar_w = 520, row_h = 24, top = 34, value_w = 170;
	int height = top + (int)(n ? n : 1) * row_h + 30;
	micro_t max = 0;
	for (size_t i = 0; i < n; i++) {
		const struct report_figures *f = &r->groups[i].f;
		micro_t rz = f->realized > 0 ? f->realized : 0, rm = f->remaining > 0 ? f->remaining : 0;
		if (rz + rm > max)
			max = rz + rm;
	}
	buf_addf(b,
		 "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		 "role=\"img\" aria-label=\"monthly savings by group, realized and remaining\">\n",
		 label_w + bar_w + value_w, height, label_w + bar_w + value_w, height);
	buf_adds(b, "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
	buf_adds(b, "<text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"600\" fill=\"#1b1f24\">Monthly savings by "
		    "group</text>\n");
	buf_addf(b, "<rect x=\"%d\" y=\"6\" width=\"12\" height=\"12\" fill=\"#2da44e\"/><text x=\"%d\" y=\"16\" "
		    "font-size=\"12\" fill=\"#1b1f24\">realized</text>\n",
		 label_w, label_w + 16);
	buf_addf(b, "<rect x=\"%d\" y=\"6\" width=\"12\" height=\"12\" fill=\"#0969da\"/><text x=\"%d\" y=\"16\" "
		    "font-size=\"12\" fill=\"#1b1f24\">remaining</text>\n",
		 label_w + 90, label_w + 106);
	if (!n || max == 0)
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#57606a\">no savings to show</text>\n", label_w,
			 top + 16);
	for (size_t i = 0; i < n && max > 0; i++) {
		const struct report_group *g = &r->groups[i];
		micro_t rz = g->f.realized > 0 ? g->f.realized : 0, rm = g->f.remaining > 0 ? g->f.remaining : 0;
		int y = top + (int)i * row_h;
		int w1 = (int)((__int128)rz * bar_w / max), w2 = (int)((__int128)rm * bar_w / max);
		struct buf label = BUF_INIT, val = BUF_INIT;
		group_label(&label, r, g);
		buf_addf(b, "<g class=\"bar\" data-index=\"%zu\"><title>", i);
		html_esc(b, label.s);
		buf_adds(b, ": realized ");
		money_add_usd_pretty(b, g->f.realized);
		buf_adds(b, ", remaining ");
		money_add_usd_pretty(b, g->f.remaining);
		buf_adds(b, " per month</title>");
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\" fill=\"#1b1f24\">", label_w - 8,
			 y + 16);
		if (label.len > 40) {
			size_t cut = 38;
			while (cut > 0 && ((unsigned char)label.s[cut] & 0xc0) == 0x80)
				cut--; /* never split a UTF-8 sequence */
			buf_reset(&val);
			buf_add(&val, label.s, cut);
			buf_adds(&val, "...");
			html_esc(b, val.s);
			buf_reset(&val);
		} else {
			html_esc(b, label.s);
		}
		buf_adds(b, "</text>");
		buf_addf(b, "<rect class=\"realized\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#2da44e\"/>", label_w,
			 y + 4, w1, row_h - 8);
		buf_addf(b, "<rect class=\"remaining\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#0969da\"/>",
			 label_w + w1, y + 4, w2, row_h - 8);
		money_add_usd_pretty(&val, rz + rm);
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#1b1f24\">%s</text></g>\n", label_w + w1 + w2 + 6,
			 y + 16, val.s);
		buf_release(&label);
		buf_release(&val);
	}
	if (r->n_groups > n)
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#57606a\">and %zu more groups (see the "
			    "table)</text>\n",
			 label_w, top + (int)n * row_h + 18, r->n_groups - n);
	buf_adds(b, "</svg>\n");
}

static void html_card(struct buf *b, const char *id, const char *label, micro_t m)
{
	struct buf plain = BUF_INIT;
	money_add_usd(&plain, m);
	buf_addf(b, "<div class=\"card\"><div class=\"label\">%s</div><div class=\"value\" id=\"%s\" data-value=\"%s\">", label,
		 id, plain.s);
	money_add_usd_pretty(b, m);
	buf_adds(b, "</div></div>\n");
	buf_release(&plain);
}

static void html_row(struct buf *b, const struct report *r, const struct report_figures *f, const char *const *values,
		     size_t index)
{
	if (values)
		buf_addf(b, "<tr class=\"group\" data-index=\"%zu\">", index);
	else
		buf_adds(b, "<tr id=\"totals\" class=\"totals\">");
	for (size_t k = 0; k < r->n_keys; k++) {
		buf_adds(b, "<td class=\"key\" data-key=\"");
		html_esc(b, r->keys[k].name);
		buf_adds(b, "\">");
		html_esc(b, values ? values[k] : k == 0 ? "Total" : "");
		buf_adds(b, "</td>");
	}
	for (int c = 0; c < F_COUNT; c++) {
		struct buf plain = BUF_INIT, pretty = BUF_INIT;
		add_plain(&plain, f, (enum fig)c, r->period);
		add_pretty(&pretty, f, (enum fig)c, r->period);
		buf_addf(b, "<td class=\"num\" data-field=\"%s\" data-value=\"%s\">", col_field((enum fig)c, r->period),
			 plain.s);
		html_esc(b, pretty.s);
		buf_adds(b, "</td>");
		buf_release(&plain);
		buf_release(&pretty);
	}
	buf_adds(b, "</tr>\n");
}

static void write_html(struct buf *b, const struct report *r)
{
	buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta name=\"generator\" content=\"ebsmigrate report\">\n<title>ebsmigrate report</title>\n<style>\n");
	buf_adds(b, html_style);
	buf_adds(b, "</style>\n</head>\n<body>\n<h1>EBS gp2 &rarr; gp3 savings</h1>\n");
	struct buf meta = BUF_INIT;
	header_lines(&meta, r, "");
	const char *p = meta.s;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *line = xstrndup(p, n);
		buf_adds(b, "<p class=\"meta\">");
		html_esc(b, line);
		buf_adds(b, "</p>\n");
		free(line);
		p += n + (e ? 1 : 0);
	}
	buf_release(&meta);
	for (size_t i = 0; i < r->n_warnings; i++) {
		buf_adds(b, "<p class=\"warn\">warning: ");
		html_esc(b, r->warnings[i]);
		buf_adds(b, "</p>\n");
	}
	const struct report_figures *t = &r->totals;
	buf_adds(b, "<div class=\"cards\">\n");
	html_card(b, "card-savings-monthly", "savings per month", t->savings);
	html_card(b, "card-savings-annual", "savings per year", t->savings_annual);
	html_card(b, "card-realized-monthly", "realized per month", t->realized);
	html_card(b, "card-remaining-monthly", "remaining per month", t->remaining);
	buf_adds(b, "</div>\n");
	write_svg(b, r);
	buf_adds(b, "<div class=\"scroll\">\n<table id=\"groups\">\n<thead><tr>");
	for (size_t k = 0; k < r->n_keys; k++) {
		buf_adds(b, "<th>");
		html_esc(b, r->keys[k].name);
		buf_adds(b, "</th>");
	}
	for (int c = 0; c < F_COUNT; c++) {
		buf_adds(b, "<th class=\"num\">");
		html_esc(b, col_title((enum fig)c, r->period));
		buf_adds(b, "</th>");
	}
	buf_adds(b, "</tr></thead>\n<tbody>\n");
	for (size_t g = 0; g < r->n_groups; g++)
		html_row(b, r, &r->groups[g].f, (const char *const *)r->groups[g].values, g);
	buf_adds(b, "</tbody>\n<tfoot>\n");
	html_row(b, r, t, NULL, 0);
	buf_adds(b, "</tfoot>\n</table>\n</div>\n");
	struct buf notes = BUF_INIT;
	footer_notes(&notes, r, "", 0); /* warnings are shown at the top */
	if (notes.len) {
		buf_adds(b, "<p class=\"notes\">");
		html_esc(b, notes.s);
		buf_adds(b, "</p>\n");
	}
	buf_release(&notes);
	buf_adds(b, "</body>\n</html>\n");
}

void report_write(struct buf *out, const struct report *r, enum report_format fmt, int color)
{
	switch (fmt) {
	case REPORT_TABLE: write_table(out, r, color); break;
	case REPORT_CSV: write_csv(out, r); break;
	case REPORT_JSON: write_json(out, r); break;
	case REPORT_MARKDOWN: write_markdown(out, r); break;
	case REPORT_HTML: write_html(out, r); break;
	}
}
