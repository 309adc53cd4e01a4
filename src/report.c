/*
 * report.c - the finance report: aggregation of a plan by keys, the split of each volume's planned
 * savings by where it stands in the migration, the realized savings per day, and the writers
 * (table, csv, json, markdown, html with inline SVG charts).
 *
 * Entry points: report_parse_group_by, report_build, report_write, report_write_csv_totals,
 * report_write_csv_series, report_release (and the small parsers report_format_parse,
 * report_period_parse).
 *
 * What each figure means (per group; totals are the same sums over every volume):
 *   volumes, size_gib     every volume of the plan, priced or not (none is ever dropped: a
 *                         volume without a key's value is grouped under "(none)", and a volume
 *                         outside Kubernetes under "(not-kubernetes)" for Kubernetes keys);
 *   gp2_volumes, gp2_size_gib  the plan's gp2 volumes that no completion (ledger or observed,
 *                         any time) has migrated since: what is left on gp2 (metrics);
 *   baseline              the volume's cost in the first recorded plan that priced it (else the
 *                         ledger's cost before, else its cost now; see baseline_of);
 *   current, target       the plan's per-volume cents, priced volumes only (unpriced counted);
 *   planned               baseline - target, all of it in exactly one part (bucket_of):
 *                         realized (completed within --since), in flight (submitted, modifying,
 *                         optimizing), blocked (failed, deferred still ahead, plan blocked or
 *                         review) or remaining (the rest);
 *   savings               current - target (the plan's); annual = monthly x 12;
 *   rightsize             target - right-sized cost of oversized-for-iops volumes.
 *
 * Invariants: money is integer micro-dollars; each volume's baseline, current and target are
 * rounded to whole cents once and every other figure is their difference or sum, so
 * realized + in_flight + remaining + blocked == planned exactly per volume, group and totals, the
 * groups add up to the totals, and the totals' volumes/current/target/savings/annual/rightsize
 * equal the plan's totals (same items, same sums). The series' days add up to the totals'
 * realized. Completed ledger volumes that are not in the inputs are counted in ledger_elsewhere,
 * never attributed to a group. Groups are ordered by planned savings (largest first), then by key
 * values, so output is deterministic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory_output.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/plan_output.h"
#include "ebsmigrate/report.h"
#include "ebsmigrate/strlist.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/table.h"

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
	static const char *const names[] = {"table", "csv", "json", "markdown", "html", "md"}; /* md: markdown's alias */
	int i = em_name_index(names, 6, s);
	return i < 0 ? EM_EINPUT : (*out = i == 5 ? REPORT_MARKDOWN : (enum report_format)i, 0);
}

int report_period_parse(const char *s, enum report_period *out)
{
	static const char *const names[] = {"month", "year"};
	int i = em_name_index(names, 2, s);
	return i < 0 ? EM_EINPUT : (*out = (enum report_period)i, 0);
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

/* The volume's value for one key (borrowed, possibly from scratch; never NULL). An account the
 * organization names is "NAME (ID)" (multi-account runs, docs/accounts.md). */
static const char *key_value(const struct report_key *k, const struct volume *v, const struct fleet *f,
			     struct buf *scratch)
{
	const char *s;
	const char *name = k->kind == RKEY_ACCOUNT && f ? fleet_account_name(f, v->account) : NULL;
	if (name && *name) {
		buf_reset(scratch);
		buf_addf(scratch, "%s (%s)", name, v->account);
		return scratch->s;
	}
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

enum bucket { B_REALIZED, B_IN_FLIGHT, B_REMAINING, B_BLOCKED };

/* What the report knows about one volume beyond the plan. */
struct volume_facts {
	const struct report_volume_state *state; /* NULL: the ledger never acted on it */
	const struct report_baseline *baseline;  /* NULL: no recorded plan priced it */
	time_t completed_at;                     /* a counted completion (ledger or observed) */
	int completed;                           /* completed, counted in realized */
	int completed_before;                    /* completed before --since */
};

/* Whether the volume has a ledger row (s) in state want. */
static int state_is(const struct report_volume_state *s, enum apply_state want)
{
	return s && s->state == want;
}

/* Whether the volume has a ledger row with a modification sent and not settled. */
static int state_in_flight(const struct report_volume_state *s)
{
	return s && apply_state_open(s->state);
}

/* Where one volume's planned savings go. */
static enum bucket bucket_of(const struct plan_item *it, const struct volume_facts *x, time_t now)
{
	const struct report_volume_state *s = x->state;
	if (x->completed)
		return B_REALIZED;
	if (state_in_flight(s))
		return B_IN_FLIGHT;
	if (state_is(s, APPLY_FAILED) || (state_is(s, APPLY_DEFERRED) && s->eligible_at > now))
		return B_BLOCKED;
	if (it->action == ACTION_BLOCKED || it->action == ACTION_REVIEW)
		return B_BLOCKED;
	return B_REMAINING;
}

/* The volume's baseline in whole cents: the first recorded plan's cost, else the ledger's cost
 * before, else its cost now. A volume completed before --since starts the period migrated (its
 * target), and a volume ebsmigrate never acted on that needs nothing (skip) keeps its current
 * cost: changes made to it outside ebsmigrate are not ebsmigrate's savings. */
static micro_t baseline_of(const struct plan_item *it, const struct volume_facts *x, micro_t current, micro_t target)
{
	if (x->completed_before)
		return target;
	if (!x->state && !x->completed && it->action == ACTION_SKIP)
		return current;
	if (x->baseline)
		return money_round_cents(x->baseline->monthly);
	if (x->state && x->state->has_ledger_cost)
		return money_round_cents(x->state->ledger_current);
	return current;
}

static void add_item(struct report_figures *f, const struct plan_item *it, const struct volume_facts *x, time_t now)
{
	f->volumes++;
	f->size_gib += it->v->size_gib;
	int priced = it->current_priced && it->target_priced;
	if (x->completed)
		f->migrated++;
	if (it->v->type == EBS_GP2 && !x->completed && !x->completed_before) {
		f->gp2_volumes++;
		f->gp2_size_gib += it->v->size_gib;
	}
	if (it->has_rightsize)
		f->rightsize += it->target_monthly - it->rightsize_monthly;
	if (!priced) {
		f->unpriced++;
		return;
	}
	micro_t current = money_round_cents(it->current_monthly), target = money_round_cents(it->target_monthly);
	micro_t baseline = baseline_of(it, x, current, target);
	micro_t planned = baseline - target;
	f->current += current;
	f->target += target;
	f->baseline += baseline;
	f->planned += planned;
	switch (bucket_of(it, x, now)) {
	case B_REALIZED: f->realized += planned; break;
	case B_IN_FLIGHT:
		f->in_flight += planned;
		f->in_flight_volumes++;
		break;
	case B_BLOCKED:
		f->blocked += planned;
		f->blocked_volumes++;
		break;
	case B_REMAINING: f->remaining += planned; break;
	}
	f->savings = f->current - f->target;
	f->savings_annual = f->savings * 12;
}

/* Groups compare by planned savings (largest first), then by their joined key values: '\x1f'
 * sorts below every printable character, so this is the key-by-key order. */
static int group_cmp(const void *a, const void *b)
{
	const struct report_group *x = a, *y = b;
	if (x->f.planned != y->f.planned)
		return x->f.planned > y->f.planned ? -1 : 1;
	return strcmp(x->joined, y->joined);
}

#define DAY_S 86400
#define SERIES_MAX_DAYS 3660

static time_t day_of(time_t t)
{
	return t - ((t % DAY_S) + DAY_S) % DAY_S;
}

/* One row per UTC day from the first apply (or --since, if later) to now; completions before
 * the first day shown (a series longer than SERIES_MAX_DAYS) count on that first day, so the
 * days always add up to the totals' realized figure. */
static void build_series(struct report *out, const struct plan *p, const struct volume_facts *facts,
			 const struct report_options *o)
{
	if (!o->first_apply)
		return;
	time_t first = day_of(o->first_apply), last = day_of(o->now ? o->now : p->generated_at);
	if (o->since && day_of(o->since) > first)
		first = day_of(o->since);
	for (size_t i = 0; i < p->n; i++)
		if (facts[i].completed && facts[i].completed_at && day_of(facts[i].completed_at) < first)
			first = day_of(facts[i].completed_at);
	for (size_t i = 0; i < p->n; i++)
		if (facts[i].completed && day_of(facts[i].completed_at) > last)
			last = day_of(facts[i].completed_at);
	if (last < first)
		last = first;
	if ((last - first) / DAY_S >= SERIES_MAX_DAYS)
		first = last - (time_t)(SERIES_MAX_DAYS - 1) * DAY_S;
	out->n_series = (size_t)((last - first) / DAY_S) + 1;
	out->series = xcalloc(out->n_series, sizeof *out->series);
	for (size_t d = 0; d < out->n_series; d++)
		out->series[d].day = first + (time_t)d * DAY_S;
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_item *it = &p->items[i];
		if (!facts[i].completed || !it->current_priced || !it->target_priced)
			continue;
		time_t t = facts[i].completed_at ? day_of(facts[i].completed_at) : last;
		size_t d = t < first ? 0 : (size_t)((t - first) / DAY_S);
		micro_t target = money_round_cents(it->target_monthly);
		micro_t current = money_round_cents(it->current_monthly);
		out->series[d].completed++;
		out->series[d].realized += baseline_of(it, &facts[i], current, target) - target;
	}
	micro_t sum = 0;
	for (size_t d = 0; d < out->n_series; d++) {
		sum += out->series[d].realized;
		out->series[d].cumulative = sum;
	}
}

void report_build(struct report *out, const struct plan *p, const struct report_options *o)
{
	memset(out, 0, sizeof *out);
	out->plan = p;
	out->keys = o->keys;
	out->n_keys = o->n_keys;
	out->period = o->period;
	out->since = o->since;
	time_t now = o->now ? o->now : p->generated_at;

	struct strmap states = STRMAP_INIT, bases = STRMAP_INIT, observed = STRMAP_INIT, groups = STRMAP_INIT;
	for (size_t i = 0; i < o->n_states; i++)
		strmap_put(&states, o->states[i].volume_id, i);
	for (size_t i = 0; i < o->n_baselines; i++)
		strmap_put(&bases, o->baselines[i].volume_id, i);
	for (size_t i = 0; i < o->n_observed; i++)
		strmap_put(&observed, o->observed[i].volume_id, i);
	char *matched = o->n_states ? xcalloc(o->n_states, 1) : NULL;
	struct volume_facts *facts = p->n ? xcalloc(p->n, sizeof *facts) : NULL;

	struct buf key = BUF_INIT, scratch = BUF_INIT;
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_item *it = &p->items[i];
		buf_reset(&key);
		for (size_t k = 0; k < o->n_keys; k++) {
			if (k)
				buf_addc(&key, '\x1f');
			buf_adds(&key, key_value(&o->keys[k], it->v, p->fleet, &scratch));
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
				ng->values[k] = xstrdup(key_value(&o->keys[k], it->v, p->fleet, &scratch));
			strmap_put(&groups, key.s, g);
		}
		struct volume_facts *x = &facts[i];
		size_t at;
		if (strmap_get(&states, it->v->volume_id, &at)) {
			x->state = &o->states[at];
			matched[at] = 1;
		}
		if (strmap_get(&bases, it->v->volume_id, &at))
			x->baseline = &o->baselines[at];
		int done = state_is(x->state, APPLY_COMPLETED);
		time_t done_at = done ? x->state->completed_at : 0;
		if (!done && !state_in_flight(x->state) && strmap_get(&observed, it->v->volume_id, &at)) {
			done = 1;
			done_at = o->observed[at].completed_at;
		}
		if (done) {
			/* a completion of unknown time counts, as before --since existed */
			if (!o->since || !done_at || done_at >= o->since) {
				x->completed = 1;
				x->completed_at = done_at;
			} else {
				x->completed_before = 1;
			}
		}
		add_item(&out->groups[g].f, it, x, now);
		add_item(&out->totals, it, x, now);
	}
	for (size_t i = 0; i < o->n_states; i++)
		out->ledger_elsewhere += !matched[i] && state_is(&o->states[i], APPLY_COMPLETED);
	build_series(out, p, facts, o);
	if (out->n_groups > 1)
		qsort(out->groups, out->n_groups, sizeof *out->groups, group_cmp);
	free(facts);
	free(matched);
	buf_release(&key);
	buf_release(&scratch);
	strmap_release(&states);
	strmap_release(&bases);
	strmap_release(&observed);
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
		strv_free(r->groups[i].values, r->n_keys);
		free(r->groups[i].joined);
	}
	strv_free(r->warnings, r->n_warnings);
	EM_FREE_ALL(r->groups, r->series);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- columns */

/* The figure columns, in output order. Money columns follow --period; SAVINGS_OTHER is the
 * savings in the other period (annual for month, monthly for year), so both always appear. */
enum fig { F_VOLUMES, F_SIZE, F_UNPRICED, F_MIGRATED, F_BASELINE, F_CURRENT, F_TARGET, F_PLANNED, F_REALIZED,
	   F_IN_FLIGHT, F_REMAINING, F_BLOCKED, F_SAVINGS, F_SAVINGS_OTHER, F_PCT, F_RIGHTSIZE, F_COUNT };

struct col {
	const char *month_field, *year_field; /* csv header, html data-field */
	const char *month_title, *year_title; /* table, markdown */
	const char *html_title;               /* html header, plain language (the period follows) */
	int in_table;                         /* also in the table and markdown */
	int in_html;
	int money;
};

static const struct col cols[F_COUNT] = {
	{"volumes", "volumes", "VOLUMES", "VOLUMES", "Volumes", 1, 1, 0},
	{"size_gib", "size_gib", "GiB", "GiB", "Size (GiB)", 1, 1, 0},
	{"unpriced", "unpriced", "UNPRICED", "UNPRICED", "Unpriced", 0, 0, 0},
	{"migrated", "migrated", "MIGRATED", "MIGRATED", "Migrated", 0, 1, 0},
	{"baseline_monthly_usd", "baseline_annual_usd", "BASELINE $/MO", "BASELINE $/YR", "Cost before migration", 1,
	 1, 1},
	{"current_monthly_usd", "current_annual_usd", "NOW $/MO", "NOW $/YR", "Cost now", 1, 1, 1},
	{"target_monthly_usd", "target_annual_usd", "TARGET $/MO", "TARGET $/YR", "Cost after migration", 1, 1, 1},
	{"planned_savings_monthly_usd", "planned_savings_annual_usd", "PLANNED $/MO", "PLANNED $/YR",
	 "Planned savings", 1, 1, 1},
	{"realized_monthly_usd", "realized_annual_usd", "REALIZED $/MO", "REALIZED $/YR", "Realized", 1, 1, 1},
	{"in_flight_monthly_usd", "in_flight_annual_usd", "IN FLIGHT $/MO", "IN FLIGHT $/YR", "In progress", 1, 1, 1},
	{"remaining_monthly_usd", "remaining_annual_usd", "REMAINING $/MO", "REMAINING $/YR", "Not started", 1, 1, 1},
	{"blocked_monthly_usd", "blocked_annual_usd", "BLOCKED $/MO", "BLOCKED $/YR", "Blocked or needs review", 1, 1,
	 1},
	{"savings_monthly_usd", "savings_annual_usd", "SAVES $/MO", "SAVES $/YR", "Still to save from now", 0, 0, 1},
	{"savings_annual_usd", "savings_monthly_usd", "SAVES $/YR", "SAVES $/MO", "Still to save (other period)", 0, 0,
	 1},
	{"savings_percent", "savings_percent", "SAVES %", "SAVES %", "Still to save (%)", 0, 0, 0},
	{"rightsize_monthly_usd", "rightsize_annual_usd", "RIGHT-SIZE $/MO", "RIGHT-SIZE $/YR",
	 "Right-sizing could save more", 1, 1, 1},
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
	int64_t k = p == REPORT_YEAR ? 12 : 1;
	switch (c) {
	case F_BASELINE: return f->baseline * k;
	case F_CURRENT: return f->current * k;
	case F_TARGET: return f->target * k;
	case F_PLANNED: return f->planned * k;
	case F_REALIZED: return f->realized * k;
	case F_IN_FLIGHT: return f->in_flight * k;
	case F_REMAINING: return f->remaining * k;
	case F_BLOCKED: return f->blocked * k;
	case F_SAVINGS: return k == 12 ? f->savings_annual : f->savings;
	case F_SAVINGS_OTHER: return k == 12 ? f->savings : f->savings_annual;
	case F_RIGHTSIZE: return f->rightsize * k;
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

static void json_figures(struct jsonw *w, const struct report_figures *f)
{
	const struct jsonw_int_member counts[] = {
		{"volumes", f->volumes},   {"size_gib", f->size_gib},
		{"unpriced", f->unpriced}, {"migrated", f->migrated},
		{"in_flight_volumes", f->in_flight_volumes}, {"blocked_volumes", f->blocked_volumes},
	};
	const struct jsonw_int_member usd[] = {
		{"baseline_monthly_usd", f->baseline},
		{"current_monthly_usd", f->current},
		{"target_monthly_usd", f->target},
		{"planned_savings_monthly_usd", f->planned},
		{"realized_monthly_usd", f->realized},
		{"in_flight_monthly_usd", f->in_flight},
		{"remaining_monthly_usd", f->remaining},
		{"blocked_monthly_usd", f->blocked},
		{"savings_monthly_usd", f->savings},
		{"savings_annual_usd", f->savings_annual},
	};
	jsonw_members_int(w, counts, JSONW_COUNT(counts));
	jsonw_members_money(w, usd, JSONW_COUNT(usd));
	jsonw_key(w, "savings_percent");
	struct buf pct = BUF_INIT;
	add_percent(&pct, f, "null", 0);
	jsonw_raw(w, pct.s, pct.len);
	buf_release(&pct);
	jsonw_key_money(w, "rightsize_monthly_usd", f->rightsize);
}

static void day_text(char out[11], time_t day)
{
	char ts[21];
	em_format_time(day, ts);
	memcpy(out, ts, 10);
	out[10] = '\0';
}

/* Groups and series put one element a line, with the closing bracket on a line of its own when
 * there is any. */
static void end_lines(struct jsonw *w, size_t n)
{
	if (n)
		jsonw_layout(w, "\n");
	jsonw_end(w);
}

static void write_json(struct buf *b, const struct report *r)
{
	struct jsonw w;
	jsonw_document(&w, b, JSONW_COMPACT, "ebsmigrate.report/v1");
	jsonw_key(&w, "generated_at");
	jsonw_time(&w, r->plan->generated_at);
	jsonw_key_str(&w, "mode", plan_mode_name(r->plan->mode));
	jsonw_key_str(&w, "period", period_name(r->period));
	jsonw_key(&w, "since");
	jsonw_time(&w, r->since);
	jsonw_key(&w, "pricing");
	plan_json_pricing(&w, r->plan->book, 1);
	jsonw_key(&w, "group_by");
	jsonw_array(&w);
	for (size_t k = 0; k < r->n_keys; k++)
		jsonw_str(&w, r->keys[k].name);
	jsonw_end(&w);
	jsonw_key_strv(&w, "warnings", r->warnings, r->n_warnings);
	jsonw_key_int(&w, "ledger_elsewhere", (long long)r->ledger_elsewhere);
	if (r->plan->fleet)
		inventory_json_accounts(&w, r->plan->fleet);
	jsonw_key(&w, "groups");
	jsonw_array(&w);
	for (size_t g = 0; g < r->n_groups; g++) {
		const struct report_group *gr = &r->groups[g];
		jsonw_lead(&w, "\n");
		jsonw_object(&w);
		jsonw_key(&w, "key");
		jsonw_object(&w);
		for (size_t k = 0; k < r->n_keys; k++)
			jsonw_key_str(&w, r->keys[k].name, gr->values[k]);
		jsonw_end(&w);
		json_figures(&w, &gr->f);
		jsonw_end(&w);
	}
	end_lines(&w, r->n_groups);
	jsonw_key(&w, "totals");
	jsonw_object(&w);
	json_figures(&w, &r->totals);
	jsonw_end(&w);
	jsonw_key(&w, "series");
	jsonw_array(&w);
	for (size_t d = 0; d < r->n_series; d++) {
		const struct report_day *day = &r->series[d];
		char date[11];
		day_text(date, day->day);
		jsonw_lead(&w, "\n");
		jsonw_object(&w);
		jsonw_key_str(&w, "date", date);
		jsonw_key_int(&w, "volumes_completed", (long long)day->completed);
		jsonw_key_money(&w, "realized_monthly_usd", day->realized);
		jsonw_key_money(&w, "cumulative_realized_monthly_usd", day->cumulative);
		jsonw_end(&w);
	}
	end_lines(&w, r->n_series);
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
}

/* ---------------------------------------------------------------- csv */

static void csv_header(struct buf *b, const struct report *r)
{
	for (size_t k = 0; k < r->n_keys; k++) {
		buf_add_csv_field(b, r->keys[k].name);
		buf_addc(b, ',');
	}
	for (int c = 0; c < F_COUNT; c++) {
		buf_adds(b, col_field((enum fig)c, r->period));
		buf_adds(b, c + 1 < F_COUNT ? "," : "\r\n");
	}
}

static void csv_figures(struct buf *b, const struct report *r, const struct report_figures *f)
{
	for (int c = 0; c < F_COUNT; c++) {
		add_plain(b, f, (enum fig)c, r->period);
		buf_adds(b, c + 1 < F_COUNT ? "," : "\r\n");
	}
}

/* Data rows only: a total row among them would be summed again by any pivot table. */
static void write_csv(struct buf *b, const struct report *r)
{
	csv_header(b, r);
	for (size_t g = 0; g < r->n_groups; g++) {
		for (size_t k = 0; k < r->n_keys; k++) {
			buf_add_csv_field(b, r->groups[g].values[k]);
			buf_addc(b, ',');
		}
		csv_figures(b, r, &r->groups[g].f);
	}
}

void report_write_csv_totals(struct buf *b, const struct report *r)
{
	csv_header(b, r);
	for (size_t k = 0; k < r->n_keys; k++)
		buf_adds(b, "(total),");
	csv_figures(b, r, &r->totals);
}

void report_write_csv_series(struct buf *b, const struct report *r)
{
	int y = r->period == REPORT_YEAR;
	buf_addf(b, "date,volumes_completed,realized_%s_usd,cumulative_realized_%s_usd\r\n", y ? "annual" : "monthly",
		 y ? "annual" : "monthly");
	for (size_t d = 0; d < r->n_series; d++) {
		char date[11];
		day_text(date, r->series[d].day);
		buf_addf(b, "%s,%lld,", date, (long long)r->series[d].completed);
		money_add_usd(b, r->series[d].realized * (y ? 12 : 1));
		buf_addc(b, ',');
		money_add_usd(b, r->series[d].cumulative * (y ? 12 : 1));
		buf_adds(b, "\r\n");
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
	buf_addf(b, "\n%splanned = baseline (cost when first planned) - target = realized + in flight + remaining + "
		    "blocked",
		 bullet);
	const struct fleet *f = r->plan->fleet;
	if (f && f->n_accounts) {
		buf_addf(b, "\n%saccounts: ", bullet);
		inventory_accounts_summary(b, f);
		buf_adds(b, " (current account ");
		buf_add_visible(b, f->current_account ? f->current_account : "unknown");
		buf_addc(b, ')');
	}
	buf_addf(b, "\n%srealized: migrations completed in the ledger", bullet);
	if (r->since) {
		em_format_time(r->since, ts);
		buf_addf(b, " since %s", ts);
	}
	buf_addc(b, '\n');
}

/* The realized-savings series for people: the days with completions and the last day. */
static void write_series_text(struct buf *b, const struct report *r, int markdown)
{
	if (!r->n_series)
		return;
	int y = r->period == REPORT_YEAR;
	const char *unit = y ? "$/YR" : "$/MO";
	const struct table_column series_columns[] = {
		{"DATE", TABLE_FIXED, 0, 10},
		{"COMPLETED", TABLE_RIGHT | TABLE_FIXED, 0, 9},
		{y ? "REALIZED $/YR" : "REALIZED $/MO", TABLE_RIGHT | TABLE_FIXED, 0, 15},
		{y ? "CUMULATIVE $/YR" : "CUMULATIVE $/MO", TABLE_RIGHT | TABLE_FIXED, 0, 17},
	};
	struct table t;
	table_init(&t, series_columns, 4);
	if (markdown)
		buf_addf(b, "\n## Realized savings by day\n\n| DATE | COMPLETED | REALIZED %s | CUMULATIVE %s |\n"
			    "|---|---:|---:|---:|\n",
			 unit, unit);
	else
		buf_adds(b, "\nrealized savings by day (days with completions, and today)\n");
	for (size_t d = 0; d < r->n_series; d++) {
		const struct report_day *day = &r->series[d];
		if (!day->completed && d + 1 < r->n_series)
			continue;
		char date[11];
		day_text(date, day->day);
		struct buf a = BUF_INIT, c = BUF_INIT;
		money_add_usd_pretty(&a, day->realized * (y ? 12 : 1));
		money_add_usd_pretty(&c, day->cumulative * (y ? 12 : 1));
		if (markdown) {
			buf_addf(b, "| %s | %lld | %s | %s |\n", date, (long long)day->completed, a.s, c.s);
		} else {
			table_add(&t, date);
			table_addf(&t, "%lld", (long long)day->completed);
			table_add(&t, a.s);
			table_add(&t, c.s);
		}
		buf_release(&a);
		buf_release(&c);
	}
	if (!markdown)
		table_write(b, &t, NULL); /* a few short columns: never wider than 60 */
	table_release(&t);
}

/* with_warnings = 0 for the table: its warnings go to stderr. plain: for readers who do not run
 * ebsmigrate (html): no command names. */
static void footer_notes(struct buf *b, const struct report *r, const char *bullet, int with_warnings, int plain)
{
	if (plain) {
		if (r->totals.unpriced)
			buf_addf(b, "%s%lld volume%s could not be priced (no price is known for %s location); %s counted "
				    "in the volumes and sizes but in none of the costs.\n",
				 bullet, (long long)r->totals.unpriced, r->totals.unpriced == 1 ? "" : "s",
				 r->totals.unpriced == 1 ? "its" : "their", r->totals.unpriced == 1 ? "it is" : "they are");
		if (r->ledger_elsewhere)
			buf_addf(b, "%s%lld volume%s recorded as migrated %s not among the volumes of this report "
				    "(deleted since, or in another account); %s not counted.\n",
				 bullet, (long long)r->ledger_elsewhere, r->ledger_elsewhere == 1 ? "" : "s",
				 r->ledger_elsewhere == 1 ? "is" : "are", r->ledger_elsewhere == 1 ? "it is" : "they are");
		return;
	}
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

/* On a narrow terminal the highest numbers go first (table.h); 0: always shown. */
static const int fig_priority[F_COUNT] = {
	[F_VOLUMES] = 3, [F_SIZE] = 6, [F_BASELINE] = 8, [F_CURRENT] = 5, [F_TARGET] = 7, [F_PLANNED] = 0,
	[F_REALIZED] = 0, [F_IN_FLIGHT] = 4, [F_REMAINING] = 1, [F_BLOCKED] = 2, [F_RIGHTSIZE] = 9,
};

static void write_table(struct buf *b, const struct report *r, int color, const struct table_options *to)
{
	buf_adds(b, "ebsmigrate report\n");
	header_lines(b, r, "");
	buf_addc(b, '\n');
	struct text_table tt;
	text_table_build(&tt, r);
	/* the group keys, then the figures in the order text_table_build puts them */
	struct table_column *tc = xcalloc(tt.n_cols, sizeof *tc);
	size_t fc = r->n_keys;
	for (size_t c = 0; c < r->n_keys; c++)
		tc[c] = (struct table_column){tt.rows[0][c], 0, 0, 12};
	for (int f = 0; f < F_COUNT && fc < tt.n_cols; f++)
		if (cols[f].in_table) {
			tc[fc] = (struct table_column){tt.rows[0][fc], TABLE_RIGHT, fig_priority[f], 0};
			fc++;
		}
	struct table t;
	table_init(&t, tc, tt.n_cols);
	for (size_t row = 1; row < tt.n_rows; row++) {
		if (row == tt.n_rows - 1)
			table_add_rule(&t); /* a rule above the totals */
		for (size_t c = 0; c < tt.n_cols; c++)
			table_add(&t, tt.rows[row][c]);
		if (color && row == tt.n_rows - 1)
			table_set_row_sgr(&t, "1");
	}
	struct table_options o = to ? *to : (struct table_options){0, 0, 0, NULL};
	if (color)
		o.header_sgr = "1";
	table_write(b, &t, &o);
	table_release(&t);
	free(tc);
	text_table_free(&tt);
	if (r->totals.unpriced || r->ledger_elsewhere)
		buf_addc(b, '\n');
	footer_notes(b, r, "", 0, 0);
	write_series_text(b, r, 0);
}

void report_write_table(struct buf *out, const struct report *r, int color, const struct table_options *to)
{
	write_table(out, r, color, to);
}

/* "planned $X per month ($Y per year) = realized $a + in flight $b + remaining $c + blocked $d" */
static void savings_sentence(struct buf *b, const struct report_figures *t)
{
	MONEY_ADD_SENTENCE(b, "%m per month (%m per year) = realized %m + in flight %m + remaining %m + blocked %m",
			   t->planned, t->planned * 12, t->realized, t->in_flight, t->remaining, t->blocked);
}

static void write_markdown(struct buf *b, const struct report *r)
{
	buf_adds(b, "# ebsmigrate report\n\n");
	header_lines(b, r, "- ");
	const struct report_figures *t = &r->totals;
	buf_addf(b, "\n**Planned savings: ");
	savings_sentence(b, t);
	buf_adds(b, " per month.**\n\n");
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
			buf_add_markdown_cell(b, s);
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
	footer_notes(b, r, "- ", 1, 0);
	write_series_text(b, r, 1);
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

/* Fits a 1,280-px window: headers wrap, key cells break long names, numbers never wrap; the
 * charts scale down. Below 900 px each row stacks into a card whose cells carry their column's
 * title (data-label), so no column is ever hidden. No script, no external resource. */
static const char html_style[] =
	"*{box-sizing:border-box}\n"
	"body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:16px 24px;color:#1b1f24;"
	"background:#fff;max-width:100%}\n"
	"h1{font-size:22px;margin:0 0 6px}h2{font-size:16px;margin:20px 0 6px}\n"
	"p.meta{color:#57606a;margin:2px 0;font-size:13px}\n"
	".cards{display:flex;gap:10px;margin:14px 0;flex-wrap:wrap}\n"
	".card{border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;min-width:140px}\n"
	".card .label{font-size:12px;color:#57606a}.card .value{font-size:19px;font-weight:600}\n"
	"svg{max-width:100%;height:auto;display:block}\n"
	"table{border-collapse:collapse;font-size:12.5px;margin-top:12px;width:100%}\n"
	"th,td{border-bottom:1px solid #d0d7de;padding:4px 5px}\n"
	"th{background:#f6f8fa;text-align:left;vertical-align:bottom;font-weight:600}\n"
	"td.key{overflow-wrap:anywhere;min-width:5em}\n"
	"td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.num{white-space:nowrap}\n"
	"tfoot td{font-weight:700;border-top:2px solid #1b1f24}\n"
	".warn{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;border-radius:6px;margin:8px 0}\n"
	".notes{color:#57606a;font-size:12.5px;max-width:70em}.notes li{margin:2px 0}\n"
	"@media (max-width:900px){table,thead,tbody,tfoot,tr,th,td{display:block}thead tr{display:none}"
	"tr{border:1px solid #d0d7de;border-radius:6px;margin:8px 0;padding:4px}"
	"td{display:flex;justify-content:space-between;gap:12px;text-align:right}"
	"td::before{content:attr(data-label);color:#57606a;text-align:left}}\n";

#define CHART_MAX_GROUPS 20

static void group_label(struct buf *b, const struct report *r, const struct report_group *g)
{
	for (size_t k = 0; k < r->n_keys; k++)
		buf_addf(b, "%s%s", k ? " / " : "", g->values[k]);
}

static void svg_legend(struct buf *b, int x, const char *colour, const char *label)
{
	buf_addf(b,
		 "<rect x=\"%d\" y=\"6\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"16\" font-size=\"12\" "
		 "fill=\"#1b1f24\">%s</text>\n",
		 x, colour, x + 16, label);
}

static micro_t nonneg(micro_t m)
{
	return m > 0 ? m : 0;
}

/* Horizontal stacked bars per group, largest first: realized, in progress, not started, blocked. */
static void write_svg(struct buf *b, const struct report *r)
{
	static const char *const colour[4] = {"#2da44e", "#bf8700", "#0969da", "#cf222e"};
	static const char *const name[4] = {"realized", "in progress", "not started", "blocked"};
	size_t n = r->n_groups < CHART_MAX_GROUPS ? r->n_groups : CHART_MAX_GROUPS;
	const int label_w = 260, bar_w = 560, row_h = 24, top = 34, value_w = 140;
	int height = top + (int)(n ? n : 1) * row_h + 30;
	micro_t max = 0;
	for (size_t i = 0; i < n; i++) {
		const struct report_figures *f = &r->groups[i].f;
		micro_t sum = nonneg(f->realized) + nonneg(f->in_flight) + nonneg(f->remaining) + nonneg(f->blocked);
		if (sum > max)
			max = sum;
	}
	buf_addf(b,
		 "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		 "role=\"img\" aria-label=\"planned monthly savings by group: realized, in progress, not started, "
		 "blocked\">\n",
		 label_w + bar_w + value_w, height, label_w + bar_w + value_w, height);
	buf_adds(b, "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
	buf_adds(b, "<text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"600\" fill=\"#1b1f24\">Planned savings per "
		    "month, by group</text>\n");
	for (int k = 0; k < 4; k++) /* right of the title (about 270 px) */
		svg_legend(b, label_w + 60 + k * 110, colour[k], name[k]);
	if (!n || max == 0)
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#57606a\">no savings to show</text>\n", label_w,
			 top + 16);
	for (size_t i = 0; i < n && max > 0; i++) {
		const struct report_group *g = &r->groups[i];
		micro_t part[4] = {nonneg(g->f.realized), nonneg(g->f.in_flight), nonneg(g->f.remaining),
				   nonneg(g->f.blocked)};
		int y = top + (int)i * row_h;
		struct buf label = BUF_INIT, val = BUF_INIT;
		group_label(&label, r, g);
		buf_addf(b, "<g class=\"bar\" data-index=\"%zu\"><title>", i);
		html_esc(b, label.s);
		MONEY_ADD_SENTENCE(b,
				   ": planned %m per month = realized %m + in progress %m + not started %m + blocked %m"
				   "</title>",
				   g->f.planned, g->f.realized, g->f.in_flight, g->f.remaining, g->f.blocked);
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\" fill=\"#1b1f24\">", label_w - 8,
			 y + 16);
		if (label.len > 36) {
			size_t cut = 34;
			while (cut > 0 && ((unsigned char)label.s[cut] & 0xc0) == 0x80)
				cut--; /* never split a UTF-8 sequence */
			buf_add(&val, label.s, cut);
			buf_adds(&val, "...");
			html_esc(b, val.s);
			buf_reset(&val);
		} else {
			html_esc(b, label.s);
		}
		buf_adds(b, "</text>");
		int x = label_w;
		static const char *const cls[4] = {"realized", "in-flight", "remaining", "blocked"};
		for (int k = 0; k < 4; k++) {
			int w = (int)((__int128)part[k] * bar_w / max);
			buf_addf(b, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", cls[k], x,
				 y + 4, w, row_h - 8, colour[k]);
			x += w;
		}
		money_add_usd_pretty(&val, g->f.planned);
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#1b1f24\">%s</text></g>\n", x + 6, y + 16,
			 val.s);
		buf_release(&label);
		buf_release(&val);
	}
	if (r->n_groups > n)
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#57606a\">and %zu more groups (see the "
			    "table)</text>\n",
			 label_w, top + (int)n * row_h + 18, r->n_groups - n);
	buf_adds(b, "</svg>\n");
}

/* Realized savings over time: a bar per day (savings realized that day) and a step line of the
 * cumulative monthly savings realized. */
static void write_series_svg(struct buf *b, const struct report *r)
{
	const int left = 90, plot_w = 820, plot_h = 180, top = 30, width = left + plot_w + 30, height = top + plot_h + 40;
	micro_t max = 0;
	for (size_t d = 0; d < r->n_series; d++) {
		if (r->series[d].cumulative > max)
			max = r->series[d].cumulative;
		if (r->series[d].realized > max)
			max = r->series[d].realized;
	}
	buf_addf(b,
		 "<svg id=\"series-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
		 "%d\" role=\"img\" aria-label=\"realized monthly savings per day since the first migration\">\n",
		 width, height, width, height);
	buf_adds(b, "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
	buf_adds(b, "<text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"600\" fill=\"#1b1f24\">Realized savings per "
		    "month, day by day</text>\n");
	svg_legend(b, left + 300, "#2da44e", "realized that day");
	svg_legend(b, left + 450, "#0969da", "total realized so far");
	int base_y = top + plot_h;
	buf_addf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#57606a\"/>\n", left, base_y, left + plot_w,
		 base_y);
	struct buf v = BUF_INIT;
	money_add_usd_pretty(&v, max);
	buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\" fill=\"#57606a\">%s</text>\n", left - 6,
		 top + 8, v.s);
	buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\" fill=\"#57606a\">$0.00</text>\n",
		 left - 6, base_y);
	buf_release(&v);
	size_t n = r->n_series;
	double step = n ? (double)plot_w / (double)n : plot_w;
	struct buf line = BUF_INIT;
	for (size_t d = 0; d < n && max > 0; d++) {
		const struct report_day *day = &r->series[d];
		int x0 = left + (int)(step * (double)d), x1 = left + (int)(step * (double)(d + 1));
		int h = (int)((__int128)nonneg(day->realized) * plot_h / max);
		int cy = base_y - (int)((__int128)nonneg(day->cumulative) * plot_h / max);
		char date[11];
		day_text(date, day->day);
		struct buf a = BUF_INIT, c = BUF_INIT;
		money_add_usd_pretty(&a, day->realized);
		money_add_usd_pretty(&c, day->cumulative);
		int bw = x1 - x0 > 2 ? x1 - x0 - 1 : 1;
		buf_addf(b, "<rect class=\"day\" data-date=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#2da44e\">"
			    "<title>%s: %lld completed, %s realized, %s so far</title></rect>\n",
			 date, x0, base_y - h, bw, h, date, (long long)day->completed, a.s, c.s);
		buf_addf(&line, "%s%d,%d %d,%d", d ? " " : "", x0, cy, x1, cy);
		buf_release(&a);
		buf_release(&c);
	}
	if (line.len)
		buf_addf(b, "<polyline class=\"cumulative\" points=\"%s\" fill=\"none\" stroke=\"#0969da\" "
			    "stroke-width=\"2\"/>\n",
			 line.s);
	buf_release(&line);
	if (n) {
		char first[11], last[11];
		day_text(first, r->series[0].day);
		day_text(last, r->series[n - 1].day);
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#57606a\">%s</text>\n", left, base_y + 16, first);
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\" fill=\"#57606a\">%s</text>\n",
			 left + plot_w, base_y + 16, last);
	}
	if (max == 0)
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#57606a\">no migration completed yet</text>\n",
			 left + 10, top + 40);
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

static void html_col_title(struct buf *b, enum fig c, enum report_period p)
{
	html_esc(b, cols[c].html_title);
	if (cols[c].money)
		buf_adds(b, p == REPORT_YEAR ? " per year" : " per month");
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
		buf_adds(b, "\" data-label=\"");
		html_esc(b, r->keys[k].name);
		buf_adds(b, "\">");
		html_esc(b, values ? values[k] : k == 0 ? "Total" : "");
		buf_adds(b, "</td>");
	}
	for (int c = 0; c < F_COUNT; c++) {
		if (!cols[c].in_html)
			continue;
		struct buf plain = BUF_INIT, pretty = BUF_INIT;
		add_plain(&plain, f, (enum fig)c, r->period);
		add_pretty(&pretty, f, (enum fig)c, r->period);
		buf_addf(b, "<td class=\"num\" data-field=\"%s\" data-value=\"%s\" data-label=\"", col_field((enum fig)c, r->period),
			 plain.s);
		html_col_title(b, (enum fig)c, r->period);
		buf_adds(b, "\">");
		html_esc(b, pretty.s);
		buf_adds(b, "</td>");
		buf_release(&plain);
		buf_release(&pretty);
	}
	buf_adds(b, "</tr>\n");
}

/* What each column means, for readers who never ran ebsmigrate. */
static void html_explanations(struct buf *b, const struct report *r)
{
	char ts[21];
	buf_adds(b, "<h2>How to read this report</h2>\n<ul class=\"notes\">\n"
		    "<li><b>Cost before migration</b> is what each volume cost when it was first planned for migration; "
		    "<b>cost after migration</b> is what it will cost once it has moved to gp3.</li>\n"
		    "<li><b>Planned savings</b> = cost before &minus; cost after. They are split, with nothing left over, into "
		    "<b>realized</b> (the change has completed), <b>in progress</b> (the change has been sent and AWS is "
		    "still applying it), <b>not started</b> (nothing has been sent yet) and <b>blocked or needs review</b> "
		    "(the volume cannot be changed now: AWS's limit of changes per day, a change that failed, or a volume "
		    "someone must look at first).</li>\n"
		    "<li>Every amount is rounded to the cent once per volume, so the four parts add up exactly to the "
		    "planned savings, and the groups add up exactly to the total.</li>\n");
	if (r->since) {
		em_format_time(r->since, ts);
		buf_addf(b, "<li>This report covers the period from %s: volumes migrated before then count as already "
			    "migrated (no savings in this period).</li>\n",
			 ts);
	}
	buf_adds(b, "<li><b>Right-sizing could save more</b>: further savings if volumes larger than their workload "
		    "needs were made smaller (not part of the planned savings).</li>\n");
	struct buf notes = BUF_INIT;
	footer_notes(&notes, r, "", 0, 1);
	const char *p = notes.s;
	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *line = xstrndup(p, n);
		buf_adds(b, "<li>");
		html_esc(b, line);
		buf_adds(b, "</li>\n");
		free(line);
		p += n + (e ? 1 : 0);
	}
	buf_release(&notes);
	buf_adds(b, "</ul>\n");
}

static void write_html(struct buf *b, const struct report *r)
{
	const struct pricebook *book = r->plan->book;
	char ts[21];
	buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		    "<meta name=\"generator\" content=\"ebsmigrate report\">\n<title>ebsmigrate report</title>\n<style>\n");
	buf_adds(b, html_style);
	buf_adds(b, "</style>\n</head>\n<body>\n<h1>EBS gp2 &rarr; gp3 savings</h1>\n");
	em_format_time(r->plan->generated_at, ts);
	buf_addf(b, "<p class=\"meta\">Generated %s. Amounts per %s, grouped by ", ts, period_name(r->period));
	for (size_t k = 0; k < r->n_keys; k++) {
		if (k)
			buf_adds(b, ", ");
		html_esc(b, r->keys[k].name);
	}
	buf_adds(b, ".</p>\n<p class=\"meta\">Prices: ");
	html_esc(b, book->source ? book->source : "unknown source");
	buf_adds(b, ", effective ");
	html_esc(b, book->effective_date ? book->effective_date : "unknown");
	buf_adds(b, ".</p>\n");
	for (size_t i = 0; i < r->n_warnings; i++) {
		buf_adds(b, "<p class=\"warn\">Warning: ");
		html_esc(b, r->warnings[i]);
		buf_adds(b, "</p>\n");
	}
	const struct report_figures *t = &r->totals;
	int y = r->period == REPORT_YEAR;
	buf_adds(b, "<div class=\"cards\">\n");
	static const char *const card_id[5] = {"card-planned", "card-realized", "card-in-flight", "card-remaining",
						"card-blocked"};
	static const char *const card_label[5] = {"Planned savings", "Realized", "In progress", "Not started",
						   "Blocked or needs review"};
	const micro_t card_value[5] = {t->planned, t->realized, t->in_flight, t->remaining, t->blocked};
	for (int i = 0; i < 5; i++) {
		char label[64];
		snprintf(label, sizeof label, "%s per %s", card_label[i], y ? "year" : "month");
		html_card(b, card_id[i], label, card_value[i] * (y ? 12 : 1));
	}
	buf_adds(b, "</div>\n");
	write_svg(b, r);
	buf_adds(b, "<table id=\"groups\">\n<thead><tr>");
	for (size_t k = 0; k < r->n_keys; k++) {
		buf_adds(b, "<th>");
		html_esc(b, r->keys[k].name);
		buf_adds(b, "</th>");
	}
	for (int c = 0; c < F_COUNT; c++) {
		if (!cols[c].in_html)
			continue;
		buf_addf(b, "<th class=\"num\" data-field=\"%s\">", col_field((enum fig)c, r->period));
		html_col_title(b, (enum fig)c, r->period);
		buf_adds(b, "</th>");
	}
	buf_adds(b, "</tr></thead>\n<tbody>\n");
	for (size_t g = 0; g < r->n_groups; g++)
		html_row(b, r, &r->groups[g].f, (const char *const *)r->groups[g].values, g);
	buf_adds(b, "</tbody>\n<tfoot>\n");
	html_row(b, r, t, NULL, 0);
	buf_adds(b, "</tfoot>\n</table>\n");
	if (r->n_series) {
		buf_adds(b, "<h2>Realized savings over time</h2>\n");
		write_series_svg(b, r);
	}
	html_explanations(b, r);
	buf_adds(b, "</body>\n</html>\n");
}

void report_write(struct buf *out, const struct report *r, enum report_format fmt, int color)
{
	switch (fmt) {
	case REPORT_TABLE:
	case REPORT_WIDE: write_table(out, r, color, NULL); break;
	case REPORT_CSV: write_csv(out, r); break;
	case REPORT_YAML: /* the JSON document, which the caller converts (yamlout.c) */
	case REPORT_JSON: write_json(out, r); break;
	case REPORT_MARKDOWN: write_markdown(out, r); break;
	case REPORT_HTML: write_html(out, r); break;
	}
}
