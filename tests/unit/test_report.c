/* test_report.c - the finance report (grouping, fallback keys, realized/remaining, reconciliation,
 * writers) and the price book tools of aws_pricing.c (age, diff, export round trip). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <unistd.h>

#include "ebsmigrate/aws_pricing.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/ledger_report.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/report.h"
#include "tap.h"

static struct pricebook book;
static time_t NOW;

static struct volume *add(struct fleet *f, const char *id, const char *az, enum ebs_type t, int64_t size)
{
	struct volume *v = fleet_add_volume(f, id);
	v->availability_zone = xstrdup(az);
	volume_split_az(az, &v->region, &v->location);
	v->type = t;
	v->size_gib = size;
	v->state = xstrdup("in-use");
	v->attachments = xcalloc(1, sizeof *v->attachments);
	v->attachments[0].instance_id = xstrdup("i-0abc");
	v->n_attachments = 1;
	return v;
}

static void bind(struct volume *v, const char *cluster, const char *ns, const char *label_team)
{
	v->kube = xcalloc(1, sizeof *v->kube);
	v->kube->cluster = xstrdup(cluster);
	v->kube->pv = xstrdup("pv");
	v->kube->namespace_ = xstrdup(ns);
	v->kube->pvc = xstrdup("data-0");
	v->kube->storage_class = xstrdup("gp2");
	if (label_team) {
		v->kube->labels = xcalloc(1, sizeof *v->kube->labels);
		v->kube->labels[0].key = xstrdup("team");
		v->kube->labels[0].value = xstrdup(label_team);
		v->kube->n_labels = 1;
	}
}

static void tag(struct volume *v, const char *k, const char *val)
{
	v->tags = xrealloc(v->tags, (v->n_tags + 1) * sizeof *v->tags);
	v->tags[v->n_tags].key = xstrdup(k);
	v->tags[v->n_tags].value = xstrdup(val);
	v->n_tags++;
}

/* A fleet of every kind: two clusters, a volume outside Kubernetes, an unpriced one. */
static void make_fleet(struct fleet *f)
{
	fleet_init(f);
	struct volume *v = add(f, "vol-a", "ap-northeast-2a", EBS_GP2, 100); /* $11.40 -> $9.12 */
	bind(v, "prod", "db", "data");
	tag(v, "owner", "alice");
	v = add(f, "vol-b", "ap-northeast-2a", EBS_GP2, 1000); /* $114.00 -> gp3 */
	bind(v, "prod", "db", NULL);
	v = add(f, "vol-c", "us-east-1a", EBS_GP2, 200);
	bind(v, "staging", "web", "web");
	tag(v, "owner", "bob");
	v = add(f, "vol-d", "us-east-1b", EBS_GP2, 50); /* not in Kubernetes */
	tag(v, "owner", "alice");
	v = add(f, "vol-e", "us-west-2-lax-1a", EBS_GP2, 100); /* unpriced: Local Zone not bundled */
	v = add(f, "vol-f", "us-east-1a", EBS_GP3, 100); /* skipped, priced */
	bind(v, "prod", "db", NULL);
}

static const struct report_group *find_group(const struct report *r, const char *v0, const char *v1)
{
	for (size_t g = 0; g < r->n_groups; g++)
		if (strcmp(r->groups[g].values[0], v0) == 0 && (!v1 || strcmp(r->groups[g].values[1], v1) == 0))
			return &r->groups[g];
	return NULL;
}

static void check_sums(const struct report *r)
{
	struct report_figures s;
	memset(&s, 0, sizeof s);
	for (size_t g = 0; g < r->n_groups; g++) {
		const struct report_figures *f = &r->groups[g].f;
		s.volumes += f->volumes;
		s.size_gib += f->size_gib;
		s.unpriced += f->unpriced;
		s.current += f->current;
		s.target += f->target;
		s.savings += f->savings;
		s.savings_annual += f->savings_annual;
		s.realized += f->realized;
		s.remaining += f->remaining;
		s.rightsize += f->rightsize;
		s.migrated += f->migrated;
		s.baseline += f->baseline;
		s.planned += f->planned;
		s.in_flight += f->in_flight;
		s.blocked += f->blocked;
		/* the identity, per group, exactly */
		CHECK_I64(f->realized + f->in_flight + f->remaining + f->blocked, f->planned);
		CHECK_I64(f->baseline - f->target, f->planned);
	}
	CHECK_I64(s.baseline, r->totals.baseline);
	CHECK_I64(s.planned, r->totals.planned);
	CHECK_I64(s.in_flight, r->totals.in_flight);
	CHECK_I64(s.blocked, r->totals.blocked);
	CHECK_I64(r->totals.realized + r->totals.in_flight + r->totals.remaining + r->totals.blocked, r->totals.planned);
	CHECK_I64(s.volumes, r->totals.volumes);
	CHECK_I64(s.size_gib, r->totals.size_gib);
	CHECK_I64(s.unpriced, r->totals.unpriced);
	CHECK_I64(s.current, r->totals.current);
	CHECK_I64(s.target, r->totals.target);
	CHECK_I64(s.savings, r->totals.savings);
	CHECK_I64(s.savings_annual, r->totals.savings_annual);
	CHECK_I64(s.realized, r->totals.realized);
	CHECK_I64(s.remaining, r->totals.remaining);
	CHECK_I64(s.rightsize, r->totals.rightsize);
	CHECK_I64(s.migrated, r->totals.migrated);
	/* and the totals are the plan's */
	const struct plan_totals *pt = &r->plan->totals;
	CHECK_I64(r->totals.volumes, pt->volumes);
	CHECK_I64(r->totals.unpriced, pt->unpriced);
	CHECK_I64(r->totals.current, pt->current_monthly);
	CHECK_I64(r->totals.target, pt->target_monthly);
	CHECK_I64(r->totals.savings, pt->savings_monthly);
	CHECK_I64(r->totals.savings_annual, pt->savings_annual);
	CHECK_I64(r->totals.rightsize, pt->rightsize_monthly);
}

static void test_group_by_parse(void)
{
	struct report_key *k;
	size_t n;
	struct buf err = BUF_INIT;
	CHECK(report_parse_group_by("cluster,namespace,label:team,tag:owner", &k, &n, &err) == 0);
	CHECK_I64(n, 4);
	CHECK(k[0].kind == RKEY_CLUSTER && k[1].kind == RKEY_NAMESPACE);
	CHECK(k[2].kind == RKEY_LABEL);
	CHECK_STR(k[2].arg, "team");
	CHECK_STR(k[3].name, "tag:owner");
	report_keys_free(k, n);
	CHECK(report_parse_group_by("zone", &k, &n, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "'zone' is not one of") != NULL);
	buf_reset(&err);
	CHECK(report_parse_group_by("label:", &k, &n, &err) == EM_EINPUT);
	CHECK(report_parse_group_by("region,region", &k, &n, &err) == EM_EINPUT);
	CHECK(report_parse_group_by("region,", &k, &n, &err) == EM_EINPUT);
	CHECK(report_parse_group_by("", &k, &n, &err) == EM_EINPUT);
	buf_release(&err);
	enum report_format fmt;
	CHECK(report_format_parse("html", &fmt) == 0 && fmt == REPORT_HTML);
	CHECK(report_format_parse("yaml", &fmt) == EM_EINPUT);
}

static void test_grouping(void)
{
	struct fleet f;
	make_fleet(&f);
	struct plan_options po = {PLAN_MODE_MATCH, NOW};
	struct plan p;
	planner_build(&p, &f, &book, &po);
	struct report_key *k;
	size_t n;
	struct buf err = BUF_INIT;
	report_parse_group_by("cluster,namespace", &k, &n, &err);
	struct report_options o = {.keys = k, .n_keys = n, .period = REPORT_MONTH};
	struct report r;
	report_build(&r, &p, &o);
	CHECK_I64(r.totals.volumes, 6);
	CHECK_I64(r.totals.unpriced, 1);
	const struct report_group *g = find_group(&r, "prod", "db");
	CHECK(g != NULL);
	CHECK_I64(g ? g->f.volumes : 0, 3);
	CHECK_I64(g ? g->f.size_gib : 0, 1200);
	const struct report_group *nk = find_group(&r, REPORT_NOT_KUBERNETES, REPORT_NOT_KUBERNETES);
	CHECK(nk != NULL);
	CHECK_I64(nk ? nk->f.volumes : 0, 2); /* vol-d and the unpriced vol-e: never dropped */
	CHECK_I64(nk ? nk->f.unpriced : 0, 1);
	CHECK_I64(r.groups[0].f.savings >= r.groups[r.n_groups - 1].f.savings, 1);
	check_sums(&r);

	/* JSON parses and carries the documented fields */
	struct buf out = BUF_INIT;
	report_write(&out, &r, REPORT_JSON, 0);
	cJSON *j = cJSON_Parse(out.s);
	CHECK(j != NULL);
	CHECK_STR(cJSON_GetObjectItem(j, "schema")->valuestring, "ebsmigrate.report/v1");
	cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 0);
	static const char *const fields[] = {"volumes", "size_gib", "current_monthly_usd", "target_monthly_usd",
					     "savings_monthly_usd", "savings_annual_usd", "realized_monthly_usd",
					     "remaining_monthly_usd", "rightsize_monthly_usd"};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		CHECK(cJSON_IsNumber(cJSON_GetObjectItem(g0, fields[i])));
		CHECK(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "totals"), fields[i])));
	}
	CHECK(cJSON_IsObject(cJSON_GetObjectItem(g0, "key")));
	CHECK(cJSON_IsString(cJSON_GetObjectItem(cJSON_GetObjectItem(g0, "key"), "cluster")));
	cJSON_Delete(j);

	/* CSV: one header row, the groups only (no total row), RFC 4180 line ends; totals apart */
	buf_reset(&out);
	report_write(&out, &r, REPORT_CSV, 0);
	CHECK(strncmp(out.s, "cluster,namespace,volumes,size_gib,unpriced,migrated,baseline_monthly_usd,", 74) == 0);
	CHECK(strstr(out.s, "(total)") == NULL);
	size_t lines = 0;
	for (const char *s = out.s; (s = strstr(s, "\r\n")) != NULL; s += 2)
		lines++;
	CHECK_I64(lines, r.n_groups + 1);
	buf_reset(&out);
	report_write_csv_totals(&out, &r);
	CHECK(strstr(out.s, "\r\n(total),(total),6,") != NULL);

	/* HTML: self-contained, an SVG, a totals row with data-values */
	buf_reset(&out);
	report_write(&out, &r, REPORT_HTML, 0);
	CHECK(strstr(out.s, "<svg id=\"chart\"") != NULL);
	CHECK(strstr(out.s, "<tr id=\"totals\"") != NULL);
	CHECK(strstr(out.s, "http://") == NULL || strstr(out.s, "http://www.w3.org/2000/svg") != NULL);
	CHECK(strstr(out.s, "<script") == NULL && strstr(out.s, "<link") == NULL && strstr(out.s, "src=") == NULL);
	buf_release(&out);
	report_release(&r);
	report_keys_free(k, n);

	/* label and tag keys fall back to (none); Kubernetes keys to (not-kubernetes) */
	report_parse_group_by("label:team,tag:owner", &k, &n, &err);
	struct report_options o2 = {.keys = k, .n_keys = n, .period = REPORT_YEAR};
	report_build(&r, &p, &o2);
	CHECK(find_group(&r, "data", "alice") != NULL);
	CHECK(find_group(&r, REPORT_NONE, REPORT_NONE) != NULL);             /* vol-b, vol-f */
	CHECK(find_group(&r, REPORT_NOT_KUBERNETES, "alice") != NULL);       /* vol-d */
	CHECK(find_group(&r, REPORT_NOT_KUBERNETES, REPORT_NONE) != NULL);   /* vol-e */
	check_sums(&r);
	struct buf csv = BUF_INIT;
	report_write(&csv, &r, REPORT_CSV, 0);
	CHECK(strstr(csv.s, "current_annual_usd,target_annual_usd,planned_savings_annual_usd,") != NULL);
	CHECK(strstr(csv.s, ",savings_annual_usd,savings_monthly_usd,") != NULL);
	buf_release(&csv);
	report_release(&r);
	report_keys_free(k, n);
	buf_release(&err);
	plan_release(&p);
	fleet_release(&f);
}

static const struct plan_item *item_of(const struct plan *p, const char *id)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->items[i].v->volume_id, id) == 0)
			return &p->items[i];
	return NULL;
}

static void test_realized(void)
{
	struct fleet f;
	make_fleet(&f);
	struct plan_options po = {PLAN_MODE_MATCH, NOW};
	struct plan p;
	planner_build(&p, &f, &book, &po);
	struct report_key *k;
	size_t n;
	struct buf err = BUF_INIT;
	report_parse_group_by("namespace", &k, &n, &err);
	time_t t_a, t_c, t_zz;
	em_parse_time("2026-11-20T10:00:00Z", &t_a);
	em_parse_time("2026-10-01T00:00:00Z", &t_c);
	em_parse_time("2026-11-21T00:00:00Z", &t_zz);
	struct report_volume_state st[3] = {
		{"vol-a", APPLY_COMPLETED, 0, t_a, 1, 11400000},  /* db: realized 2.28 (the inputs still say gp2) */
		{"vol-c", APPLY_COMPLETED, 0, t_c, 1, 20000000},  /* web: before --since */
		{"vol-zz", APPLY_COMPLETED, 0, t_zz, 1, 1000000}, /* not in the inputs */
	};
	time_t since;
	em_parse_time("2026-11-01", &since);
	struct report_options o = {.keys = k, .n_keys = n, .period = REPORT_MONTH, .since = since, .now = NOW,
				   .states = st, .n_states = 3};
	struct report r;
	report_build(&r, &p, &o);
	const struct report_group *db = find_group(&r, "db", NULL), *web = find_group(&r, "web", NULL);
	CHECK(db && web);
	CHECK_I64(db ? db->f.realized : 0, 2280000);
	CHECK_I64(db ? db->f.migrated : 0, 1);
	/* vol-a is completed: its savings are realized, not remaining; vol-b's are remaining */
	const struct plan_item *b = item_of(&p, "vol-b"), *c = item_of(&p, "vol-c");
	CHECK_I64(db ? db->f.remaining : 0, b ? b->savings_monthly : -1);
	CHECK_I64(web ? web->f.realized : 0, 0);  /* completed before --since */
	CHECK_I64(web ? web->f.remaining : 0, 0); /* but done: nothing remains */
	CHECK_I64(web ? web->f.baseline : 0, c ? c->target_monthly : -1); /* starts the period migrated */
	CHECK_I64(r.ledger_elsewhere, 1);
	CHECK_I64(r.totals.realized, 2280000);
	CHECK_I64(r.n_series, 0); /* no apply run: no series */
	check_sums(&r);
	report_release(&r);
	/* without --since every completion counts */
	o.since = 0;
	report_build(&r, &p, &o);
	CHECK_I64(r.totals.realized, 2280000 + (c ? c->savings_monthly : 0));
	CHECK_I64(r.totals.migrated, 2);
	check_sums(&r);
	report_release(&r);
	report_keys_free(k, n);
	buf_release(&err);
	plan_release(&p);
	fleet_release(&f);
}

/* The split with awkward amounts: thirds of a cent, half cents (which round away from zero),
 * negative planned savings (a volume grown since its baseline), every state. Each part and each
 * total must be whole cents, and the parts must add up to the planned savings exactly, per group
 * and in the totals, in the figures and in the JSON and CSV text. */
static void test_split_identity(void)
{
	struct fleet f;
	fleet_init(&f);
	static const char *const ids[] = {"vol-1", "vol-2", "vol-3", "vol-4", "vol-5", "vol-6", "vol-7"};
	for (int i = 0; i < 7; i++) {
		struct volume *v = add(&f, ids[i], "us-east-1a", EBS_GP2, 100 + i);
		bind(v, "prod", i < 4 ? "db" : "web", NULL);
	}
	struct plan_options po = {PLAN_MODE_MATCH, NOW};
	struct plan p;
	planner_build(&p, &f, &book, &po);
	/* awkward current and target costs, as a price book with 1e-10 prices could give */
	static const micro_t cur[7] = {3333333, 6666667, 1005000, 995000, 12345678, 1, 4999};
	static const micro_t tgt[7] = {1666667, 3333333, 804999, 796000, 9876543, 0, 5001};
	for (size_t i = 0; i < p.n; i++) {
		int at = p.items[i].v->volume_id[4] - '1';
		p.items[i].current_monthly = cur[at];
		p.items[i].target_monthly = tgt[at];
		p.items[i].action = at == 6 ? ACTION_REVIEW : ACTION_MIGRATE;
	}
	/* a real plan's items are whole cents (cost.c), its totals their sums: keep that relation */
	p.totals.current_monthly = 3330000 + 6670000 + 1010000 + 1000000 + 12350000 + 0 + 0;
	p.totals.target_monthly = 1670000 + 3330000 + 800000 + 800000 + 9880000 + 0 + 10000;
	p.totals.savings_monthly = p.totals.current_monthly - p.totals.target_monthly;
	p.totals.savings_annual = p.totals.savings_monthly * 12;
	time_t done_at, later;
	em_parse_time("2026-11-20T10:00:00Z", &done_at);
	em_parse_time("2026-12-30T00:00:00Z", &later);
	struct report_volume_state st[5] = {
		{"vol-1", APPLY_COMPLETED, 0, done_at, 1, 3333333},
		{"vol-2", APPLY_OPTIMIZING, 0, 0, 1, 6666667},
		{"vol-3", APPLY_DEFERRED, later, 0, 1, 1005000}, /* deferred until later: blocked */
		{"vol-4", APPLY_FAILED, 0, 0, 1, 995000},
		{"vol-5", APPLY_COMPLETED, 0, done_at + 86400, 1, 12345678},
	};
	/* baselines from the first plan: half a cent, a third of a cent, a volume grown since (vol-6) */
	struct report_baseline bl[4] = {
		{"vol-1", 4005000}, {"vol-2", 7777777}, {"vol-5", 15000005}, {"vol-6", 0},
	};
	time_t first;
	em_parse_time("2026-11-18T08:00:00Z", &first);
	struct report_key *k;
	size_t n;
	struct buf err = BUF_INIT;
	report_parse_group_by("namespace", &k, &n, &err);
	struct report_options o = {.keys = k, .n_keys = n, .period = REPORT_MONTH, .now = NOW, .first_apply = first,
				   .states = st, .n_states = 5, .baselines = bl, .n_baselines = 4};
	struct report r;
	report_build(&r, &p, &o);
	check_sums(&r);
	const struct report_figures *t = &r.totals;
	CHECK_I64(t->baseline % MICRO_PER_CENT, 0);
	CHECK_I64(t->planned % MICRO_PER_CENT, 0);
	CHECK_I64(t->realized % MICRO_PER_CENT, 0);
	CHECK_I64(t->in_flight % MICRO_PER_CENT, 0);
	CHECK_I64(t->remaining % MICRO_PER_CENT, 0);
	CHECK_I64(t->blocked % MICRO_PER_CENT, 0);
	/* by hand: baselines $4.01 (4.005 rounds up), $7.78, $1.01 (ledger 1.005), $1.00 (ledger 0.995),
	 * $15.00 (15.000005), $0.00, $0.00 (no ledger row nor plan: its current 0.004999) */
	CHECK_I64(t->baseline, 4010000 + 7780000 + 1010000 + 1000000 + 15000000 + 0 + 0);
	/* targets rounded: 1.67, 3.33, 0.80, 0.80, 9.88, 0.00, 0.01 */
	CHECK_I64(t->target, 1670000 + 3330000 + 800000 + 800000 + 9880000 + 0 + 10000);
	CHECK_I64(t->realized, (4010000 - 1670000) + (15000000 - 9880000));
	CHECK_I64(t->in_flight, 7780000 - 3330000);
	CHECK_I64(t->blocked, (1010000 - 800000) + (1000000 - 800000) + (0 - 10000)); /* vol-7: review */
	CHECK_I64(t->remaining, 0 - 0);
	CHECK_I64(t->migrated, 2);
	CHECK_I64(t->in_flight_volumes, 1);
	CHECK_I64(t->blocked_volumes, 3);
	/* the series: 2026-11-18 .. NOW's day, completions on the 20th and 21st */
	CHECK(r.n_series >= 4);
	micro_t sum = 0;
	int64_t completed = 0;
	for (size_t d = 0; d < r.n_series; d++) {
		sum += r.series[d].realized;
		completed += r.series[d].completed;
		CHECK_I64(r.series[d].cumulative, sum);
	}
	CHECK_I64(sum, t->realized);
	CHECK_I64(completed, 2);
	CHECK_I64(r.n_series ? r.series[2].realized : 0, 4010000 - 1670000);
	CHECK_I64(r.n_series > 3 ? r.series[3].realized : 0, 15000000 - 9880000);
	/* the JSON text: parts add up to the planned savings to the cent, in every group and the totals */
	struct buf out = BUF_INIT;
	report_write(&out, &r, REPORT_JSON, 0);
	cJSON *j = cJSON_Parse(out.s);
	CHECK(j != NULL);
	cJSON *rows[3] = {cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 0),
			  cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 1), cJSON_GetObjectItem(j, "totals")};
	for (int i = 0; i < 3; i++) {
		long long parts = llround(cJSON_GetObjectItem(rows[i], "realized_monthly_usd")->valuedouble * 100) +
				  llround(cJSON_GetObjectItem(rows[i], "in_flight_monthly_usd")->valuedouble * 100) +
				  llround(cJSON_GetObjectItem(rows[i], "remaining_monthly_usd")->valuedouble * 100) +
				  llround(cJSON_GetObjectItem(rows[i], "blocked_monthly_usd")->valuedouble * 100);
		CHECK_I64(parts, llround(cJSON_GetObjectItem(rows[i], "planned_savings_monthly_usd")->valuedouble * 100));
	}
	CHECK_I64(cJSON_GetArraySize(cJSON_GetObjectItem(j, "series")), (int64_t)r.n_series);
	cJSON_Delete(j);
	/* year: every part x 12, the identity still exact */
	report_release(&r);
	o.period = REPORT_YEAR;
	report_build(&r, &p, &o);
	buf_reset(&out);
	report_write(&out, &r, REPORT_CSV, 0);
	CHECK(strstr(out.s, "planned_savings_annual_usd,realized_annual_usd,in_flight_annual_usd,remaining_annual_usd,"
			    "blocked_annual_usd") != NULL);
	buf_reset(&out);
	report_write_csv_series(&out, &r);
	CHECK(strncmp(out.s, "date,volumes_completed,realized_annual_usd,cumulative_realized_annual_usd\r\n", 75) == 0);
	CHECK(strstr(out.s, "2026-11-20,1,28.08,28.08\r\n") != NULL); /* (4.01 - 1.67) x 12 */
	CHECK(strstr(out.s, "2026-11-21,1,61.44,89.52\r\n") != NULL); /* (15.00 - 9.88) x 12 */
	/* the table's series section (table.c) keeps the layout it had as printf columns */
	buf_reset(&out);
	report_write(&out, &r, REPORT_TABLE, 0);
	char want[256];
	snprintf(want, sizeof want, "%-10s  %9s  %15s  %17s\n%-10s  %9d  %15s  %17s\n", "DATE", "COMPLETED",
		 "REALIZED $/YR", "CUMULATIVE $/YR", "2026-11-20", 1, "$28.08", "$28.08");
	CHECK(strstr(out.s, want) != NULL);
	buf_release(&out);
	report_release(&r);
	report_keys_free(k, n);
	buf_release(&err);
	plan_release(&p);
	fleet_release(&f);
}

static void test_age(void)
{
	int64_t s;
	CHECK(pricing_parse_age("90d", &s) == 0 && s == 90 * 86400);
	CHECK(pricing_parse_age("36h", &s) == 0 && s == 36 * 3600);
	CHECK(pricing_parse_age("0", &s) == 0 && s == 0);
	CHECK(pricing_parse_age("-1d", &s) == EM_EINPUT);
	CHECK(pricing_parse_age("3w", &s) == EM_EINPUT);
	CHECK(pricing_parse_age("", &s) == EM_EINPUT);
	struct buf msg = BUF_INIT;
	time_t t;
	em_parse_time("2026-11-30T00:00:00Z", &t); /* 90 days after 2026-09-01 */
	CHECK(pricing_check_age(&book, t, PRICING_DEFAULT_MAX_AGE_S, &msg) == 0);
	em_parse_time("2026-11-30T00:00:01Z", &t);
	CHECK(pricing_check_age(&book, t, PRICING_DEFAULT_MAX_AGE_S, &msg) == 1);
	CHECK(strstr(msg.s, "prices are 90 days old") != NULL);
	CHECK(pricing_check_age(&book, t, 0, &msg) == 0); /* disabled */
	struct pricebook fetched;
	pricebook_init(&fetched);
	fetched.effective_date = xstrdup("2024-01-01");
	fetched.fetched_at = xstrdup("2026-11-29T00:00:00Z"); /* fetched recently: not stale */
	CHECK(pricing_check_age(&fetched, t, PRICING_DEFAULT_MAX_AGE_S, &msg) == 1 - 1);
	pricebook_release(&fetched);
	buf_release(&msg);
}

static void test_diff_and_export(void)
{
	/* export every bundled location and read it back: the same book */
	struct pricebook back;
	pricebook_init(&back);
	struct buf page = BUF_INIT, err = BUF_INIT;
	for (size_t i = 0; i < book.n; i++) {
		buf_reset(&page);
		pricing_export_location(&page, &book, &book.locs[i]);
		CHECK(pricebook_add_getproducts(&back, page.s, page.len, "export", NULL, &err) == 0);
	}
	struct pricing_diff d;
	pricing_diff_build(&d, &book, &back);
	CHECK_I64(d.n, 0);
	CHECK_STR(back.effective_date, "2026-09-01");
	pricing_diff_release(&d);

	/* a changed, an added and a removed price */
	struct price_location *use1 = pricebook_location(&back, "us-east-1");
	pricebook_item_set(use1, pricebook_item_parse("storage:gp2"), 1100000000); /* 0.10 -> 0.11 */
	struct price_location *lax = pricebook_location(&back, "us-west-2-lax-1");
	pricebook_item_set(lax, pricebook_item_parse("storage:gp2"), 1200000000);
	struct price_location *euc1 = pricebook_location(&back, "eu-central-1");
	euc1->has_io1_iops = 0;
	pricing_diff_build(&d, &book, &back);
	CHECK_I64(d.changed, 1);
	CHECK_I64(d.added, 1);
	CHECK_I64(d.removed, 1);
	struct buf out = BUF_INIT;
	pricing_diff_write(&out, &d, &book, &back, 0, NULL);
	CHECK(strstr(out.s, "us-east-1") && strstr(out.s, "+10.00%"));
	CHECK(strstr(out.s, "1 changed, 1 added, 1 removed") != NULL);
	buf_reset(&out);
	pricing_diff_write(&out, &d, &book, &back, 1, NULL);
	cJSON *j = cJSON_Parse(out.s);
	CHECK(j && cJSON_GetArraySize(cJSON_GetObjectItem(j, "changes")) == 3);
	cJSON_Delete(j);
	pricing_diff_release(&d);

	/* a Local Zone exports with a reconstructed usagetype prefix and reads back */
	buf_reset(&page);
	pricing_export_location(&page, &back, pricebook_find(&back, "us-west-2-lax-1"));
	CHECK(strstr(page.s, "USW2-LAX1-EBS:VolumeUsage.gp2") != NULL);
	CHECK(strstr(page.s, "AWS Local Zone") != NULL);
	buf_release(&out);
	buf_release(&page);
	buf_release(&err);
	pricebook_release(&back);
}


/* The ledger side: version history and the latest completed row per volume. */
static void test_ledger(void)
{
	char dir[] = "/tmp/em-report-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	char path[64];
	snprintf(path, sizeof path, "%s/em.db", dir);
	struct ledger *l;
	struct buf err = BUF_INIT;
	CHECK(ledger_open(&l, path, &err) == 0);
	struct pricebook cur;
	CHECK(ledger_pricebook_for_planning(l, &cur, &err) == 0); /* stores the bundle as version 1 */
	struct pricebook second;
	pricebook_init(&second);
	second.source = xstrdup("test");
	second.effective_date = xstrdup("2026-10-01");
	pricebook_item_set(pricebook_location(&second, "us-east-1"), 0, 1100000000);
	CHECK(ledger_pricebook_store(l, &second, &err) == 0);
	struct ledger_price_version *v;
	size_t n;
	CHECK(ledger_price_versions(l, &v, &n, &err) == 0);
	CHECK_I64(n, 2);
	CHECK(n == 2 && !v[0].is_current && v[1].is_current && v[1].n_prices == 1 && v[0].n_prices == 175);
	ledger_price_versions_free(v, n);
	struct pricebook one;
	CHECK(ledger_pricebook_load(l, 1, &one, &err) == 0);
	CHECK_STR(one.source, PRICEBOOK_SOURCE_BUNDLED);
	CHECK_I64(one.n, book.n);
	pricebook_release(&one);
	CHECK(ledger_pricebook_load(l, 3, &one, &err) == EM_ENOTFOUND);

	sqlite3 *db;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	const char *sql =
		"INSERT INTO plans (id, generated_at, mode, volumes, savings_monthly_micro, plan_json, created_at) "
		"VALUES (1, 'x', 'match', 0, 0, '{}', 'x'), (2, 'x', 'match', 0, 0, '{}', 'x');"
		"INSERT INTO apply_volumes (plan_id, volume_id, region, method, state, target_type, target_iops, "
		"target_throughput, current_monthly_micro, target_monthly_micro, completed_at, updated_at) VALUES "
		"(1, 'vol-b', 'r', 'ec2', 'completed', 'gp3', 3000, 125, 10000000, 8000000, '2026-11-01T00:00:00Z', 'x'),"
		"(2, 'vol-b', 'r', 'ec2', 'completed', 'gp3', 3000, 125, 8000000, 7000000, '2026-11-05T00:00:00Z', 'x'),"
		"(1, 'vol-a', 'r', 'ec2', 'completed', 'gp3', 3000, 125, 5000000, 4000000, NULL, 'x'),"
		"(1, 'vol-c', 'r', 'ec2', 'failed', 'gp3', 3000, 125, 5000000, 4000000, NULL, 'x');";
	CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	struct ledger_completed *c;
	CHECK(ledger_completed_volumes(l, &c, &n, &err) == 0);
	CHECK_I64(n, 2);
	if (n == 2) {
		CHECK_STR(c[0].volume_id, "vol-a");
		CHECK(c[0].completed_at == NULL);
		CHECK_STR(c[1].volume_id, "vol-b");
		CHECK_STR(c[1].completed_at, "2026-11-05T00:00:00Z"); /* the latest completion wins */
		CHECK_I64(c[1].current_monthly_micro - c[1].target_monthly_micro, 1000000);
	}
	ledger_completed_free(c, n);

	/* the report's reads: states, baselines from the first recorded plan, the first apply */
	time_t first;
	CHECK(ledger_first_apply(l, &first, &err) == 0);
	CHECK_I64(first, 0); /* no apply ran */
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	sql = "INSERT INTO plans (id, generated_at, mode, volumes, savings_monthly_micro, plan_json, created_at) VALUES "
	      "(3, '2026-10-01T00:00:00Z', 'match', 2, 0, '{\"volumes\":[{\"volume_id\":\"vol-a\",\"current_monthly_usd\":11.4},"
	      "{\"volume_id\":\"vol-b\",\"current_monthly_usd\":null}]}', 'x'),"
	      "(4, '2026-09-01T00:00:00Z', 'match', 2, 0, '{\"volumes\":[{\"volume_id\":\"vol-a\",\"current_monthly_usd\":12},"
	      "{\"volume_id\":\"vol-d\",\"current_monthly_usd\":1e300}]}', 'x'),"
	      "(5, '2026-08-01T00:00:00Z', 'match', 1, 0, 'not json', 'x'),"
	      "(6, '2026-10-02T00:00:00Z', 'match', 1, 0, '{\"volumes\":[{\"volume_id\":\"vol-b\",\"current_monthly_usd\":9.5}]}', 'x');"
	      "INSERT INTO apply_volumes (plan_id, volume_id, region, method, state, target_type, target_iops, "
	      "target_throughput, current_monthly_micro, target_monthly_micro, updated_at) VALUES "
	      "(3, 'vol-b', 'r', 'ec2', 'planned', 'gp3', 3000, 125, 7000000, 7000000, 'z');"
	      "INSERT INTO apply_runs (plan_id, started_at) VALUES (1, '2026-11-02T00:00:00Z'), (1, '2026-10-30T05:00:00Z');";
	CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(ledger_first_apply(l, &first, &err) == 0);
	time_t want;
	em_parse_time("2026-10-30T05:00:00Z", &want);
	CHECK_I64(first, want);
	struct ledger_baseline *bl;
	CHECK(ledger_plan_baselines(l, NULL, 0, &bl, &n, &err) == 0);
	CHECK_I64(n, 2); /* vol-d's absurd amount and plan 5's broken document are passed over */
	if (n == 2) {
		CHECK_STR(bl[0].volume_id, "vol-a");
		CHECK_I64(bl[0].plan_id, 4); /* the first by generated_at, not by id */
		CHECK_I64(bl[0].monthly, 12000000);
		CHECK_STR(bl[1].volume_id, "vol-b");
		CHECK_I64(bl[1].plan_id, 6); /* plan 3 did not price it */
		CHECK_I64(bl[1].monthly, 9500000);
	}
	ledger_baselines_free(bl, n);
	/* only the wanted volumes; reading stops at plan 4, which has vol-a */
	const char *wanted[] = {"vol-a", "vol-x"};
	CHECK(ledger_plan_baselines(l, wanted, 1, &bl, &n, &err) == 0);
	CHECK(n == 1 && strcmp(bl[0].volume_id, "vol-a") == 0 && bl[0].plan_id == 4);
	ledger_baselines_free(bl, n);
	CHECK(ledger_plan_baselines(l, wanted, 2, &bl, &n, &err) == 0); /* vol-x is in no plan */
	CHECK(n == 1 && bl[0].monthly == 12000000);
	ledger_baselines_free(bl, n);
	struct ledger_volume_state *vs;
	CHECK(ledger_volume_states(l, &vs, &n, &err) == 0);
	CHECK_I64(n, 3);
	if (n == 3) {
		CHECK_STR(vs[0].volume_id, "vol-a");
		CHECK_I64(vs[0].state, APPLY_COMPLETED);
		CHECK_STR(vs[1].volume_id, "vol-b");
		CHECK_I64(vs[1].state, APPLY_COMPLETED); /* a later 'planned' row does not hide it */
		em_parse_time("2026-11-05T00:00:00Z", &want);
		CHECK_I64(vs[1].completed_at, want);
		CHECK_I64(vs[1].current_monthly, 10000000); /* the first row's cost before */
		CHECK_I64(vs[2].state, APPLY_FAILED);
		CHECK_I64(vs[2].completed_at, 0);
	}
	ledger_volume_states_free(vs, n);
	ledger_close(l);
	pricebook_release(&cur);
	pricebook_release(&second);
	buf_release(&err);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	struct buf err = BUF_INIT;
	pricebook_init(&book);
	if (pricebook_load_bundled(&book, &err)) {
		fprintf(stderr, "%s\n", err.s);
		return 1;
	}
	buf_release(&err);
	em_parse_time("2026-12-01T12:00:00Z", &NOW);
	test_group_by_parse();
	test_grouping();
	test_realized();
	test_split_identity();
	test_age();
	test_diff_and_export();
	test_ledger();
	pricebook_release(&book);
	return tap_done();
}
