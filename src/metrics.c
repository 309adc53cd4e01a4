/*
 * metrics.c - the figures of `ebsmigrate metrics` (see metrics.h, docs/metrics.md): collected from
 * the database and written as OpenMetrics 1.0 or Prometheus text 0.0.4.
 *
 * Entry points: metrics_collect, metrics_write, metrics_negotiate, metrics_content_type, and the
 * model's metrics_doc_init / metrics_family_add / metrics_sample_add / metrics_doc_release.
 *
 * Where each figure comes from (nothing is computed here that another module already computes):
 *   fleet families   the latest recorded plan's volumes[] (ledger_plan_volumes) made into a fleet
 *                    and a plan, scoped (scope_filter_fleet) and given to report_build with the keys
 *                    cluster,namespace,account,region, the ledger's volume states and the recorded
 *                    baselines, exactly as `report` does: so every money figure is the report's, to
 *                    the cent, and the savings states add up to baseline - target;
 *   modifications    the latest ledger row of every volume (ledger_apply_list), and the volumes of
 *                    the plan being applied without a row yet (apply_plan_unsent: planned), scoped
 *                    like status scopes rows, counted by apply_totals_add as `status --no-verify`
 *                    counts them;
 *   runs, prices     ledger_last_runs (an apply run without an outcome is running or interrupted
 *                    as ledger_apply_outcome_shown says), and the current price book's date as
 *                    pricing_as_of reads it.
 *
 * Invariants: money leaves as exact decimals of whole cents (money_add_usd), never through a
 * double; samples are ordered by their label values, so the same database and --now give the same
 * bytes; every label value goes through buf_add_label_escaped.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/apply.h"
#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/aws_pricing.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/ledger_report.h"
#include "ebsmigrate/metrics.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/report.h"
#include "ebsmigrate/scope.h"
#include "ebsmigrate/status_verify.h"
#include "ebsmigrate/strlist.h"
#include "ebsmigrate/strmap.h"

/* ---------------------------------------------------------------- the model */

void metrics_doc_init(struct metrics_doc *d)
{
	memset(d, 0, sizeof *d);
}

void metrics_doc_release(struct metrics_doc *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct metrics_family *f = &d->f[i];
		for (size_t k = 0; k < f->n; k++) {
			strv_free(f->samples[k].values, f->n_labels);
			free(f->samples[k].value);
		}
		free(f->samples);
	}
	free(d->f);
	memset(d, 0, sizeof *d);
}

size_t metrics_family_add(struct metrics_doc *d, const char *name, const char *unit, const char *help,
			  const char *const *labels, size_t n_labels)
{
	XGROW(d->f, d->n, d->alloc);
	struct metrics_family *f = &d->f[d->n];
	memset(f, 0, sizeof *f);
	f->name = name;
	f->unit = unit;
	f->help = help;
	f->labels = labels;
	f->n_labels = n_labels;
	return d->n++;
}

void metrics_sample_add(struct metrics_doc *d, size_t fam, const char *const *values, const char *value)
{
	struct metrics_family *f = &d->f[fam];
	XGROW(f->samples, f->n, f->alloc);
	struct metrics_sample *s = &f->samples[f->n++];
	s->values = xcalloc(f->n_labels ? f->n_labels : 1, sizeof *s->values);
	for (size_t j = 0; j < f->n_labels; j++)
		s->values[j] = xstrdup(values[j] ? values[j] : "");
	s->value = xstrdup(value);
}

/* ---------------------------------------------------------------- the exposition */

void metrics_write(struct buf *out, const struct metrics_doc *d, enum metrics_format fmt)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct metrics_family *f = &d->f[i];
		buf_addf(out, "# HELP %s ", f->name);
		buf_add_label_escaped(out, f->help); /* help texts are ours; escaped all the same */
		buf_addf(out, "\n# TYPE %s gauge\n", f->name);
		if (fmt == METRICS_OPENMETRICS && f->unit)
			buf_addf(out, "# UNIT %s %s\n", f->name, f->unit);
		for (size_t k = 0; k < f->n; k++) {
			const struct metrics_sample *s = &f->samples[k];
			buf_adds(out, f->name);
			for (size_t j = 0; j < f->n_labels; j++) {
				buf_addf(out, "%s%s=\"", j ? "," : "{", f->labels[j]);
				buf_add_label_escaped(out, s->values[j]);
				buf_addc(out, '"');
			}
			buf_addf(out, "%s %s\n", f->n_labels ? "}" : "", s->value);
		}
	}
	if (fmt == METRICS_OPENMETRICS)
		buf_adds(out, "# EOF\n");
}

enum metrics_format metrics_negotiate(const char *accept)
{
	if (!accept || strstr(accept, "application/openmetrics-text"))
		return METRICS_OPENMETRICS;
	return strstr(accept, "text/plain") ? METRICS_PROMETHEUS : METRICS_OPENMETRICS;
}

const char *metrics_content_type(enum metrics_format fmt)
{
	return fmt == METRICS_PROMETHEUS ? METRICS_CONTENT_TYPE_PROMETHEUS : METRICS_CONTENT_TYPE_OPENMETRICS;
}

/* ---------------------------------------------------------------- collection */

static const char *const group_labels[] = {"cluster", "namespace", "account", "region"};
static const char *const group_state_labels[] = {"cluster", "namespace", "account", "region", "state"};
static const char *const command_labels[] = {"command"};
static const char *const command_status_labels[] = {"command", "status"};
#define N_GROUP 4

static void add_int(struct metrics_doc *d, size_t fam, const char *const *values, long long v)
{
	char s[32];
	snprintf(s, sizeof s, "%lld", v);
	metrics_sample_add(d, fam, values, s);
}

static void add_money(struct metrics_doc *d, size_t fam, const char *const *values, micro_t m)
{
	struct buf s = BUF_INIT;
	money_add_usd(&s, m);
	metrics_sample_add(d, fam, values, s.s);
	buf_release(&s);
}

/* The fleet as the plan document recorded it, one volume per id (the first entry counts). */
static void fleet_of_plan(struct fleet *f, const struct ledger_plan_volume *pv, size_t n)
{
	fleet_init(f);
	for (size_t i = 0; i < n; i++) {
		if (fleet_find(f, pv[i].volume_id))
			continue;
		struct volume *v = fleet_add_volume(f, pv[i].volume_id);
		v->account = pv[i].account ? xstrdup(pv[i].account) : NULL;
		v->region = pv[i].region ? xstrdup(pv[i].region) : NULL;
		v->type = pv[i].type ? ebs_type_parse(pv[i].type) : EBS_UNKNOWN;
		v->size_gib = pv[i].size_gib;
		if (pv[i].kube) {
			v->kube = xcalloc(1, sizeof *v->kube);
			v->kube->cluster = pv[i].cluster ? xstrdup(pv[i].cluster) : NULL;
			v->kube->namespace_ = pv[i].namespace_ ? xstrdup(pv[i].namespace_) : NULL;
			v->kube->pvc = pv[i].pvc ? xstrdup(pv[i].pvc) : NULL;
			v->kube->storage_class = pv[i].storage_class ? xstrdup(pv[i].storage_class) : NULL;
		}
	}
}

/* A recorded volume's action; a missing or unknown one counts as skip. */
static enum plan_action action_of(const char *s)
{
	enum plan_action a = ACTION_SKIP;
	if (s)
		plan_action_parse(s, &a);
	return a;
}

static int group_order(const void *a, const void *b)
{
	const struct report_group *const *x = a, *const *y = b;
	return strcmp((*x)->joined, (*y)->joined);
}

/* The families of the fleet, from the latest plan and the ledger's states, by report_build. */
static int collect_fleet(struct metrics_doc *d, struct ledger *l, const struct scope *scope, time_t now,
			 int *no_plan, struct buf *err)
{
	size_t f_vol = metrics_family_add(d, "ebsmigrate_volumes", NULL,
					  "EBS volumes in the latest recorded plan, any type", group_labels, N_GROUP);
	size_t f_gp2 = metrics_family_add(d, "ebsmigrate_gp2_volumes", NULL,
					  "gp2 volumes in the latest recorded plan that the apply ledger has not "
					  "migrated since",
					  group_labels, N_GROUP);
	size_t f_gp2b = metrics_family_add(d, "ebsmigrate_gp2_capacity_bytes", "bytes",
					   "Provisioned size of those gp2 volumes (GiB x 2^30)", group_labels, N_GROUP);
	size_t f_unpriced = metrics_family_add(d, "ebsmigrate_unpriced_volumes", NULL,
					       "Volumes the plan could not price (left out of every cost figure)",
					       group_labels, N_GROUP);
	size_t f_base = metrics_family_add(d, "ebsmigrate_baseline_monthly_cost_dollars", "dollars",
					   "Monthly cost before the migration (each volume as the first recorded plan "
					   "priced it)",
					   group_labels, N_GROUP);
	size_t f_cur = metrics_family_add(d, "ebsmigrate_current_monthly_cost_dollars", "dollars",
					  "Monthly cost now, as the latest recorded plan priced it", group_labels, N_GROUP);
	size_t f_tgt = metrics_family_add(d, "ebsmigrate_target_monthly_cost_dollars", "dollars",
					  "Monthly cost once the latest recorded plan is applied", group_labels, N_GROUP);
	size_t f_sav = metrics_family_add(d, "ebsmigrate_monthly_savings_dollars", "dollars",
					  "Planned monthly savings (baseline - target) by where they stand: realized, "
					  "in_flight, remaining, blocked; the states add up to the planned savings",
					  group_state_labels, N_GROUP + 1);
	size_t f_rs = metrics_family_add(d, "ebsmigrate_rightsize_monthly_savings_dollars", "dollars",
					 "Further monthly savings if every oversized-for-iops volume were right-sized",
					 group_labels, N_GROUP);
	size_t f_gen = metrics_family_add(d, "ebsmigrate_plan_generated_timestamp_seconds", "seconds",
					  "When the latest recorded plan was generated (its --now): the fleet figures "
					  "are as of then",
					  NULL, 0);

	int64_t plan_id = 0;
	char *doc = NULL;
	int rc = ledger_plan_load(l, 0, &plan_id, &doc, err);
	if (rc == EM_ENOTFOUND) {
		buf_reset(err);
		*no_plan = 1;
		return 0;
	}
	struct plan_summary sum;
	struct ledger_plan_volume *pv = NULL;
	size_t n_pv = 0;
	if (!rc)
		rc = ledger_plan_summary(l, plan_id, &sum, err);
	if (!rc)
		rc = ledger_plan_volumes(l, plan_id, doc, &pv, &n_pv, err);
	free(doc);
	if (rc)
		return rc;

	struct fleet fleet;
	fleet_of_plan(&fleet, pv, n_pv);
	struct strmap row_of = STRMAP_INIT;
	for (size_t i = n_pv; i-- > 0;) /* the first entry of an id wins */
		strmap_put(&row_of, pv[i].volume_id, i);
	if (scope && scope_active(scope)) {
		struct scope_stats st;
		scope_filter_fleet(scope, &fleet, &st);
		scope_stats_release(&st);
	}
	struct plan plan;
	memset(&plan, 0, sizeof plan);
	plan.generated_at = sum.generated_at;
	plan.items = xcalloc(fleet.n ? fleet.n : 1, sizeof *plan.items);
	plan.n = fleet.n;
	const char **ids = xcalloc(fleet.n ? fleet.n : 1, sizeof *ids);
	for (size_t i = 0; i < fleet.n; i++) {
		size_t r = 0;
		strmap_get(&row_of, fleet.vols[i].volume_id, &r);
		struct plan_item *it = &plan.items[i];
		it->v = &fleet.vols[i];
		it->action = action_of(pv[r].action);
		it->current_priced = pv[r].current_priced;
		it->current_monthly = pv[r].current_monthly;
		it->target_priced = pv[r].target_priced;
		it->target_monthly = pv[r].target_monthly;
		it->has_rightsize = pv[r].has_rightsize;
		it->rightsize_monthly = pv[r].rightsize_monthly;
		ids[i] = fleet.vols[i].volume_id;
	}

	struct ledger_volume_state *states = NULL;
	struct ledger_baseline *bases = NULL;
	size_t n_states = 0, n_bases = 0;
	struct report_key *keys = NULL;
	size_t n_keys = 0;
	rc = ledger_volume_states(l, &states, &n_states, err);
	if (!rc)
		rc = ledger_plan_baselines(l, ids, fleet.n, &bases, &n_bases, err);
	if (!rc)
		rc = report_parse_group_by("cluster,namespace,account,region", &keys, &n_keys, err);
	if (!rc) {
		/* as `report` does: under a scope only the scoped volumes' ledger rows count */
		int scoped = scope && scope_active(scope);
		struct report_volume_state *rs = xcalloc(n_states ? n_states : 1, sizeof *rs);
		size_t n_rs = 0;
		for (size_t i = 0; i < n_states; i++)
			if (!scoped || fleet_find(&fleet, states[i].volume_id))
				rs[n_rs++] = (struct report_volume_state){states[i].volume_id, states[i].state,
									  states[i].eligible_at, states[i].completed_at,
									  1, states[i].current_monthly};
		struct report_baseline *rb = xcalloc(n_bases ? n_bases : 1, sizeof *rb);
		for (size_t i = 0; i < n_bases; i++)
			rb[i] = (struct report_baseline){bases[i].volume_id, bases[i].monthly};
		struct report_options ro = {keys, n_keys, REPORT_MONTH, 0, now, 0, rs, n_rs, rb, n_bases, NULL, 0};
		struct report report;
		report_build(&report, &plan, &ro);
		const struct report_group **g = xcalloc(report.n_groups ? report.n_groups : 1, sizeof *g);
		for (size_t i = 0; i < report.n_groups; i++)
			g[i] = &report.groups[i];
		qsort(g, report.n_groups, sizeof *g, group_order);
		for (size_t i = 0; i < report.n_groups; i++) {
			const char *const *lv = (const char *const *)g[i]->values;
			const struct report_figures *x = &g[i]->f;
			add_int(d, f_vol, lv, (long long)x->volumes);
			add_int(d, f_gp2, lv, (long long)x->gp2_volumes);
			add_int(d, f_gp2b, lv, (long long)x->gp2_size_gib * 1073741824LL);
			add_int(d, f_unpriced, lv, (long long)x->unpriced);
			add_money(d, f_base, lv, x->baseline);
			add_money(d, f_cur, lv, x->current);
			add_money(d, f_tgt, lv, x->target);
			static const char *const parts[] = {"realized", "in_flight", "remaining", "blocked"};
			const micro_t amounts[] = {x->realized, x->in_flight, x->remaining, x->blocked};
			for (size_t k = 0; k < 4; k++) {
				const char *v5[] = {lv[0], lv[1], lv[2], lv[3], parts[k]};
				add_money(d, f_sav, v5, amounts[k]);
			}
			add_money(d, f_rs, lv, x->rightsize);
		}
		if (sum.generated_at)
			add_int(d, f_gen, NULL, (long long)sum.generated_at);
		free(g);
		report_release(&report);
		free(rs);
		free(rb);
	}
	report_keys_free(keys, n_keys);
	ledger_volume_states_free(states, n_states);
	ledger_baselines_free(bases, n_bases);
	free(ids);
	plan_release(&plan);
	strmap_release(&row_of);
	fleet_release(&fleet);
	ledger_plan_volumes_free(pv, n_pv);
	return rc;
}

/* A ledger row's value for a group label, as report names volumes without one. */
static const char *row_label(const struct apply_row *r, size_t k)
{
	const char *s = NULL;
	switch (k) {
	case 0: return r->cluster && *r->cluster ? r->cluster : REPORT_NOT_KUBERNETES;
	case 1:
		if (!r->cluster || !*r->cluster)
			return REPORT_NOT_KUBERNETES;
		s = r->namespace_;
		break;
	case 2: s = r->account; break;
	case 3: s = r->region; break;
	}
	return s && *s ? s : REPORT_NONE;
}

struct row_group {
	const char *values[N_GROUP];
	char *joined;
	struct apply_totals t;
};

static int row_group_order(const void *a, const void *b)
{
	return strcmp(((const struct row_group *)a)->joined, ((const struct row_group *)b)->joined);
}

/* The apply ledger's modifications by state, as status counts them without reading AWS. */
static int collect_ledger(struct metrics_doc *d, struct ledger *l, const struct scope *scope, struct buf *err)
{
	size_t f_mod = metrics_family_add(d, "ebsmigrate_modifications", NULL,
					  "Volumes by the state of their latest apply ledger row: planned, in_flight "
					  "(submitted, modifying, optimizing), completed, deferred, failed; planned also "
					  "counts the volumes of the plan being applied that have no ledger row yet",
					  group_state_labels, N_GROUP + 1);
	size_t f_old = metrics_family_add(d, "ebsmigrate_oldest_deferral_timestamp_seconds", "seconds",
					  "When the longest-waiting deferred volume was deferred (its ledger row's last "
					  "update); absent when none is deferred",
					  NULL, 0);
	size_t f_next = metrics_family_add(d, "ebsmigrate_next_eligible_timestamp_seconds", "seconds",
					   "The earliest time a deferred volume may be modified again; absent when none "
					   "is deferred",
					   NULL, 0);
	struct apply_row *rows = NULL;
	size_t n = 0, alloc = 0;
	int64_t applying = 0;
	int rc = ledger_apply_list(l, 0, &rows, &n, err);
	alloc = n;
	/* the plan being applied: its volumes to migrate without a ledger row yet are planned too */
	if (!rc)
		rc = apply_plan_in_progress(l, 0, &applying, err);
	if (!rc && applying)
		rc = apply_plan_unsent(l, applying, rows, n, &rows, &n, &alloc, err);
	if (rc) {
		apply_rows_free(rows, n);
		return rc;
	}
	struct strmap at = STRMAP_INIT;
	struct row_group *g = NULL;
	size_t n_g = 0, alloc_g = 0;
	time_t oldest = 0, next = 0;
	struct buf key = BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		const struct apply_row *r = &rows[i];
		struct scope_subject x = {r->volume_id, r->region, r->account, r->cluster, r->namespace_, r->pvc, NULL, 0, 0};
		if (scope && !scope_matches(scope, &x))
			continue;
		buf_reset(&key);
		for (size_t k = 0; k < N_GROUP; k++) {
			if (k)
				buf_addc(&key, '\x1f');
			buf_adds(&key, row_label(r, k));
		}
		size_t gi;
		if (!strmap_get(&at, key.s, &gi)) {
			XGROW(g, n_g, alloc_g);
			gi = n_g++;
			memset(&g[gi], 0, sizeof g[gi]);
			for (size_t k = 0; k < N_GROUP; k++)
				g[gi].values[k] = row_label(r, k);
			g[gi].joined = xstrdup(key.s);
			strmap_put(&at, key.s, gi);
		}
		struct pvc_live p;
		memset(&p, 0, sizeof p); /* PVC_NOT_READ: ledger only, as status --no-verify */
		struct apply_verdict vd;
		apply_verify_row(r, NULL, 0, &p, &vd);
		apply_totals_add(&g[gi].t, r, &vd);
		apply_verdict_release(&vd);
		if (r->state == APPLY_DEFERRED) {
			if (r->updated_at && (!oldest || r->updated_at < oldest))
				oldest = r->updated_at;
			if (r->eligible_at && (!next || r->eligible_at < next))
				next = r->eligible_at;
		}
	}
	if (n_g > 1)
		qsort(g, n_g, sizeof *g, row_group_order);
	for (size_t i = 0; i < n_g; i++) {
		static const char *const states[] = {"planned", "in_flight", "completed", "deferred", "failed"};
		const size_t counts[] = {g[i].t.planned, g[i].t.in_flight, g[i].t.completed, g[i].t.deferred,
					 g[i].t.failed};
		for (size_t k = 0; k < 5; k++) {
			const char *v5[] = {g[i].values[0], g[i].values[1], g[i].values[2], g[i].values[3], states[k]};
			add_int(d, f_mod, v5, (long long)counts[k]);
		}
		free(g[i].joined);
	}
	if (oldest)
		add_int(d, f_old, NULL, (long long)oldest);
	if (next)
		add_int(d, f_next, NULL, (long long)next);
	free(g);
	buf_release(&key);
	strmap_release(&at);
	apply_rows_free(rows, n);
	return 0;
}

/* The latest inventory, plan and apply runs, and the price book's date. */
static int collect_runs(struct metrics_doc *d, struct ledger *l, time_t now, struct buf *err)
{
	size_t f_at = metrics_family_add(d, "ebsmigrate_last_run_timestamp_seconds", "seconds",
					 "When the latest recorded run of a command ended (inventory: finished; plan: "
					 "recorded; apply: finished, or started while it runs)",
					 command_labels, 1);
	size_t f_st = metrics_family_add(d, "ebsmigrate_last_run_status", NULL,
					 "1 for the outcome of the latest recorded run of a command, 0 for the others "
					 "(inventory and plan record only runs that succeeded)",
					 command_status_labels, 2);
	size_t f_pt = metrics_family_add(d, "ebsmigrate_price_book_timestamp_seconds", "seconds",
					 "When the current price book was fetched (else its effective date)", NULL, 0);
	size_t f_pa = metrics_family_add(d, "ebsmigrate_price_book_age_seconds", "seconds",
					 "Age of the current price book at the time of collection (report warns past "
					 "--max-price-age)",
					 NULL, 0);
	struct ledger_last_runs runs;
	int rc = ledger_last_runs(l, &runs, err);
	if (rc)
		return rc;
	const char *cmd;
	if (runs.inventory_finished) {
		cmd = "inventory";
		add_int(d, f_at, &cmd, (long long)runs.inventory_finished);
	}
	if (runs.plan_recorded) {
		cmd = "plan";
		add_int(d, f_at, &cmd, (long long)runs.plan_recorded);
	}
	if (runs.apply_started) {
		cmd = "apply";
		add_int(d, f_at, &cmd, (long long)(runs.apply_finished ? runs.apply_finished : runs.apply_started));
	}
	if (runs.inventory_finished) {
		const char *v[] = {"inventory", "ok"};
		metrics_sample_add(d, f_st, v, "1");
	}
	if (runs.plan_recorded) {
		const char *v[] = {"plan", "ok"};
		metrics_sample_add(d, f_st, v, "1");
	}
	if (runs.apply_started) {
		static const char *const outcomes[] = {"ok", "partial", "failed", "interrupted", "running"};
		const char *now_is = ledger_apply_outcome_shown(l, runs.apply_outcome);
		for (size_t k = 0; k < 5; k++) {
			const char *v[] = {"apply", outcomes[k]};
			metrics_sample_add(d, f_st, v, strcmp(now_is, outcomes[k]) == 0 ? "1" : "0");
		}
	}
	ledger_last_runs_release(&runs);

	struct ledger_price_version *pvs = NULL;
	size_t n_pvs = 0;
	rc = ledger_price_versions(l, &pvs, &n_pvs, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n_pvs; i++) {
		if (!pvs[i].is_current)
			continue;
		struct pricebook b; /* only the dates: pricing_as_of's one rule */
		memset(&b, 0, sizeof b);
		b.fetched_at = pvs[i].fetched_at;
		b.effective_date = pvs[i].effective_date;
		time_t as_of = pricing_as_of(&b);
		if (as_of) {
			add_int(d, f_pt, NULL, (long long)as_of);
			add_int(d, f_pa, NULL, (long long)(now - as_of));
		}
	}
	ledger_price_versions_free(pvs, n_pvs);
	return 0;
}

int metrics_collect(struct metrics_doc *out, struct ledger *l, const struct scope *scope, time_t now, int *no_plan,
		    struct buf *err)
{
	metrics_doc_init(out);
	*no_plan = 0;
	int rc = collect_fleet(out, l, scope, now, no_plan, err);
	if (!rc)
		rc = collect_ledger(out, l, scope, err);
	if (!rc)
		rc = collect_runs(out, l, now, err);
	if (rc)
		metrics_doc_release(out);
	return rc;
}
