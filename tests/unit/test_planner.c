/* test_planner.c - targets, flags, actions and the modification rules, one volume at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/planner.h"
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

static void bind(struct volume *v, int in_tree, int64_t used_gib, int64_t cap_gib)
{
	v->kube = xcalloc(1, sizeof *v->kube);
	v->kube->cluster = xstrdup("prod");
	v->kube->pv = xstrdup("pv-1");
	v->kube->namespace_ = xstrdup("db");
	v->kube->pvc = xstrdup("data-0");
	v->kube->in_tree = in_tree;
	if (cap_gib) {
		v->kube->has_usage = 1;
		v->kube->used_bytes = used_gib << 30;
		v->kube->capacity_bytes = cap_gib << 30;
	}
}

static void mod(struct volume *v, enum volume_mod_state state, const char *start)
{
	struct volume_mod m;
	memset(&m, 0, sizeof m);
	m.state = state;
	em_parse_time(start, &m.start_time);
	volume_add_mod(v, &m);
}

static const struct plan_item *item(const struct plan *p, const char *id)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->items[i].v->volume_id, id) == 0)
			return &p->items[i];
	return NULL;
}

static int has(const struct plan_item *it, unsigned flag)
{
	return it && (it->flags & flag) != 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The plan's order (savings, then volume id in strcmp's order) with ids that share long prefixes,
 * differ past 16 bytes, or are prefixes of each other; the fleet's id index across its growth;
 * em_format_time against gmtime. */
static void test_order_index_time(void)
{
	static const char *ids[] = {
		"vol-00001000000000002", "vol-00001000000000001", "vol-0000100000000000", "vol-00001000000000010",
		"vol-000010000000000009", "vol-0000100000000000\xc3\xa9", "vol-00002", "vol-0000100000000000a", "v",
		"vol-00001000000000001x", "vol-1", "vol-00001000000000001-",
	};
	enum { N = sizeof ids / sizeof ids[0] };
	struct fleet f;
	fleet_init(&f);
	for (size_t i = 0; i < N; i++)
		add(&f, ids[i], "ap-northeast-2a", EBS_GP3, 100)->throughput = 125; /* all skip: savings 0 */
	char name[32];
	for (int i = 0; i < 5000; i++) { /* grows the index many times over */
		snprintf(name, sizeof name, "vol-x%d", i);
		add(&f, name, "ap-northeast-2a", EBS_GP3, 100)->throughput = 125;
	}
	int found = 1;
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof name, "vol-x%d", i);
		const struct volume *v = fleet_find(&f, name);
		found &= v != NULL && strcmp(v->volume_id, name) == 0;
	}
	CHECK(found);
	CHECK(fleet_find(&f, "vol-x5000") == NULL && fleet_find(&f, "vol-0000100000000000b") == NULL);
	CHECK_STR(fleet_find(&f, "vol-0000100000000000")->volume_id, "vol-0000100000000000");
	struct plan_options opt = {PLAN_MODE_MATCH, NOW};
	struct plan p;
	planner_build(&p, &f, &book, &opt);
	CHECK_I64(p.n, N + 5000);
	const char **want = xcalloc(p.n, sizeof *want);
	for (size_t i = 0; i < p.n; i++)
		want[i] = f.vols[i].volume_id;
	qsort(want, p.n, sizeof *want, cmp_str);
	int ordered = 1;
	for (size_t i = 0; i < p.n; i++)
		ordered &= p.items[i].savings_monthly == 0 && strcmp(p.items[i].v->volume_id, want[i]) == 0;
	CHECK(ordered);
	free(want);
	plan_release(&p);
	fleet_release(&f);

	/* digits by hand for years 0..9999; printf's output cut to 20 bytes outside them */
	int same = 1;
	for (int64_t t = -62167219200LL; t < 253402300800LL; t += 7919LL * 86400 + 3607) {
		struct tm tm;
		time_t tt = (time_t)t;
		gmtime_r(&tt, &tm);
		char want_s[32], got[21];
		strftime(want_s, sizeof want_s, "%Y-%m-%dT%H:%M:%SZ", &tm);
		char padded[40];
		snprintf(padded, sizeof padded, "%04d%s", tm.tm_year + 1900, want_s + strcspn(want_s, "-"));
		em_format_time(tt, got);
		same &= strcmp(got, padded) == 0;
	}
	CHECK(same);
	char out[21];
	em_format_time(0, out);
	CHECK_STR(out, "1970-01-01T00:00:00Z");
	em_format_time((time_t)253402300800LL, out); /* year 10000: five digits, cut */
	CHECK_STR(out, "10000-01-01T00:00:00");
	em_format_time((time_t)-62167219201LL, out); /* 1 s before year 0 */
	CHECK_STR(out, "-001-12-31T23:59:59Z");
}

/* The gp3 throughput rule's edges (match mode): up to 170 GiB gp2 peaks at 128 MiB/s, so 125 MiB/s
 * matches it whatever the metrics say; from 334 GiB it sustains 250, so 250 whatever they say; in
 * between 250 only while credits last: 125 and throughput-burst-only, or 250 when metrics show
 * more than 125. --mode observed never goes above match's 125 at 170 GiB. Both sides of both
 * edges, with and without metrics; and possibly-oversized from 334 GiB when usage is unknown. */
static void test_throughput_edges(void)
{
	static const struct {
		const char *id;
		int64_t size;
		int busy; /* metrics: p99 180 MiB/s */
		int64_t match_mibps, observed_mibps;
		int burst_only, possibly_oversized;
	} cases[] = {
		{"vol-t170", 170, 0, 125, 125, 0, 0},  {"vol-t171", 171, 0, 125, 125, 1, 0},
		{"vol-t333", 333, 0, 125, 125, 1, 0},  {"vol-t334", 334, 0, 250, 250, 0, 1},
		{"vol-t170b", 170, 1, 125, 125, 0, 0}, {"vol-t171b", 171, 1, 250, 216, 0, 0},
		{"vol-t333b", 333, 1, 250, 216, 0, 0}, {"vol-t334b", 334, 1, 250, 216, 0, 1},
	};
	enum { N = sizeof cases / sizeof cases[0] };
	struct fleet f;
	fleet_init(&f);
	for (size_t i = 0; i < N; i++) {
		struct volume *v = add(&f, cases[i].id, "ap-northeast-2a", EBS_GP2, cases[i].size);
		if (cases[i].busy)
			v->metrics = (struct volume_metrics){1, 1500, 1800, 180, 190, -1, 0, 0, 14 * 86400};
	}
	struct plan_options opt = {PLAN_MODE_MATCH, NOW};
	struct plan p;
	planner_build(&p, &f, &book, &opt);
	for (size_t i = 0; i < N; i++) {
		const struct plan_item *it = item(&p, cases[i].id);
		printf("# %s: %lld GiB%s\n", cases[i].id, (long long)cases[i].size, cases[i].busy ? ", 180 MiB/s observed" : "");
		CHECK(it && it->action == ACTION_MIGRATE);
		CHECK_I64(it->target.throughput, cases[i].match_mibps);
		CHECK_I64(has(it, FLAG_THROUGHPUT_BURST_ONLY), cases[i].burst_only);
		CHECK_I64(has(it, FLAG_POSSIBLY_OVERSIZED), cases[i].possibly_oversized);
	}
	plan_release(&p);
	opt.mode = PLAN_MODE_OBSERVED;
	planner_build(&p, &f, &book, &opt);
	for (size_t i = 0; i < N; i++) {
		const struct plan_item *it = item(&p, cases[i].id);
		printf("# observed %s\n", cases[i].id);
		CHECK_I64(it->target.throughput, cases[i].observed_mibps);
	}
	plan_release(&p);
	fleet_release(&f);
}

/* The modification budget's edges. R2: the 4th-latest start exactly 24 h before now no longer
 * counts (eligible now), one second later it does (eligible in one second); a start after now
 * (another clock ahead of ours) is not counted yet. R3 (before 2026-01-15): the latest start
 * exactly 6 h ago allows the next now. */
static void test_budget_edges(void)
{
	struct fleet f;
	fleet_init(&f);
	struct volume *edge = add(&f, "vol-b24h", "ap-northeast-2a", EBS_GP2, 100);
	mod(edge, MOD_COMPLETED, "2026-11-30T12:00:00Z"); /* NOW - 24 h */
	mod(edge, MOD_COMPLETED, "2026-11-30T20:00:00Z");
	mod(edge, MOD_FAILED, "2026-12-01T04:00:00Z");
	mod(edge, MOD_COMPLETED, "2026-12-01T11:00:00Z");
	struct volume *inside = add(&f, "vol-b24h-1s", "ap-northeast-2a", EBS_GP2, 100);
	mod(inside, MOD_COMPLETED, "2026-11-30T12:00:01Z"); /* NOW - 24 h + 1 s */
	mod(inside, MOD_COMPLETED, "2026-11-30T20:00:00Z");
	mod(inside, MOD_FAILED, "2026-12-01T04:00:00Z");
	mod(inside, MOD_COMPLETED, "2026-12-01T11:00:00Z");
	struct volume *ahead = add(&f, "vol-bahead", "ap-northeast-2a", EBS_GP2, 100);
	mod(ahead, MOD_COMPLETED, "2026-11-30T13:00:00Z");
	mod(ahead, MOD_COMPLETED, "2026-11-30T20:00:00Z");
	mod(ahead, MOD_COMPLETED, "2026-12-01T04:00:00Z");
	mod(ahead, MOD_COMPLETED, "2026-12-01T12:00:01Z"); /* after NOW */

	time_t at = 0, want;
	CHECK_I64(planner_eligible_at(edge, NOW, &at), ELIGIBLE_NOW);
	CHECK_I64(planner_eligible_at(inside, NOW, &at), ELIGIBLE_AFTER_LIMIT);
	CHECK_I64(at, NOW + 1);
	CHECK_I64(planner_eligible_at(ahead, NOW, &at), ELIGIBLE_NOW);
	em_parse_time("2026-12-01T13:00:00Z", &want);
	CHECK_I64(planner_eligible_at(ahead, NOW + 1, &at), ELIGIBLE_AFTER_LIMIT); /* now 4 in the window */
	CHECK_I64(at, want);

	struct plan_options opt = {PLAN_MODE_MATCH, NOW};
	struct plan p;
	planner_build(&p, &f, &book, &opt);
	const struct plan_item *it = item(&p, "vol-b24h");
	CHECK(it->action == ACTION_MIGRATE && !has(it, FLAG_MODIFICATION_LIMIT));
	CHECK_I64(it->eligible_at, NOW);
	it = item(&p, "vol-b24h-1s");
	CHECK(it->action == ACTION_BLOCKED && has(it, FLAG_MODIFICATION_LIMIT));
	CHECK_I64(it->eligible_at, NOW + 1);
	plan_release(&p);

	time_t old_now;
	em_parse_time("2025-12-01T12:00:00Z", &old_now);
	struct volume *six = add(&f, "vol-b6h", "ap-northeast-2a", EBS_GP2, 100);
	mod(six, MOD_COMPLETED, "2025-12-01T06:00:00Z"); /* old_now - 6 h */
	CHECK_I64(planner_eligible_at(six, old_now, &at), ELIGIBLE_NOW);
	CHECK_I64(planner_eligible_at(six, old_now - 1, &at), ELIGIBLE_AFTER_LIMIT);
	CHECK_I64(at, old_now);
	fleet_release(&f);
}

int main(void)
{
	struct buf err = BUF_INIT;
	pricebook_init(&book);
	if (pricebook_load_bundled(&book, &err)) {
		printf("# %s\n", err.s);
		return 1;
	}
	em_parse_time("2026-12-01T12:00:00Z", &NOW);
	test_order_index_time();
	test_throughput_edges();
	test_budget_edges();
	struct fleet f;
	fleet_init(&f);
	bind(add(&f, "vol-01", "ap-northeast-2a", EBS_GP2, 100), 0, 40, 98);      /* plain */
	bind(add(&f, "vol-02", "ap-northeast-2a", EBS_GP2, 1000), 0, 52, 984);    /* oversized */
	bind(add(&f, "vol-03", "ap-northeast-2a", EBS_GP2, 2000), 0, 0, 0);       /* prov IOPS, possibly */
	bind(add(&f, "vol-04", "ap-northeast-2a", EBS_GP2, 200), 0, 150, 196);    /* burst-only tput */
	struct volume *v05 = add(&f, "vol-05", "ap-northeast-2a", EBS_GP2, 50);   /* unattached */
	free(v05->attachments[0].instance_id);
	free(v05->attachments);
	v05->attachments = NULL;
	v05->n_attachments = 0;
	bind(add(&f, "vol-06", "ap-northeast-2a", EBS_GP2, 100), 1, 0, 0);       /* in-tree */
	add(&f, "vol-07", "ap-northeast-2a", EBS_GP3, 100)->throughput = 125;    /* skip */
	add(&f, "vol-08", "us-west-2-lax-1a", EBS_GP2, 100);                     /* unpriced */
	struct volume *v09 = add(&f, "vol-09", "ap-northeast-2a", EBS_GP2, 300);  /* 4 in 24h */
	mod(v09, MOD_COMPLETED, "2026-11-30T14:00:00Z");
	mod(v09, MOD_COMPLETED, "2026-11-30T18:00:00Z");
	mod(v09, MOD_FAILED, "2026-11-30T22:00:00Z");
	mod(v09, MOD_COMPLETED, "2026-12-01T02:00:00Z");
	struct volume *v10 = add(&f, "vol-10", "ap-northeast-2a", EBS_GP2, 80);   /* in flight */
	mod(v10, MOD_OPTIMIZING, "2026-12-01T10:00:00Z");
	struct volume *v11 = add(&f, "vol-11", "ap-northeast-2a", EBS_GP2, 80);   /* 3 in 24h: ok */
	mod(v11, MOD_COMPLETED, "2026-11-30T11:00:00Z"); /* outside the window */
	mod(v11, MOD_COMPLETED, "2026-11-30T18:00:00Z");
	mod(v11, MOD_COMPLETED, "2026-11-30T22:00:00Z");
	mod(v11, MOD_COMPLETED, "2026-12-01T02:00:00Z");
	struct volume *v12 = add(&f, "vol-12", "ap-northeast-2a", EBS_GP2, 100);
	v12->missing = 1;
	add(&f, "vol-13", "ap-northeast-2a", EBS_GP2, 250)->metrics = (struct volume_metrics){
		1, 2000, 2500, 180, 200, 40, 0, 0, 14 * 86400}; /* observed > 125 MiB/s, burst-dependent */
	add(&f, "vol-14", "ap-northeast-2a", EBS_GP2, 5);
	struct volume *v15 = add(&f, "vol-15", "ap-northeast-2a", EBS_GP2, 100);
	free(v15->state);
	v15->state = xstrdup("error");

	/* instance EBS limits: m5.xlarge baseline 6,000 IOPS / 143.75 MB/s (= 137.1 MiB/s) */
	fleet_set_instance_limit(&f, "m5.xlarge", 6000, 143.75);
	struct volume *v17 = add(&f, "vol-17", "ap-northeast-2a", EBS_GP2, 1000); /* 3000/250: throughput over */
	v17->attachments[0].instance_type = xstrdup("m5.xlarge");
	struct volume *v18 = add(&f, "vol-18", "ap-northeast-2a", EBS_GP2, 100);  /* 3000/125: fits */
	v18->attachments[0].instance_type = xstrdup("m5.xlarge");

	struct plan_options opt = {PLAN_MODE_MATCH, NOW};
	struct plan p;
	planner_build(&p, &f, &book, &opt);
	CHECK(has(item(&p, "vol-17"), FLAG_EXCEEDS_INSTANCE_LIMIT));
	CHECK(!has(item(&p, "vol-18"), FLAG_EXCEEDS_INSTANCE_LIMIT));
	CHECK(strstr(item(&p, "vol-17")->note, "m5.xlarge's EBS baseline of 6000 IOPS / 137.1 MiB/s") != NULL);
	const struct plan_item *it;

	it = item(&p, "vol-01");
	CHECK(it->action == ACTION_MIGRATE && it->flags == 0);
	CHECK_I64(it->target.iops, 3000);
	CHECK_I64(it->target.throughput, 125);
	CHECK_I64(it->current_monthly, 11400000);
	CHECK_I64(it->target_monthly, 9120000);
	CHECK_I64(it->savings_monthly, 2280000);
	CHECK_I64(it->burst_duration_s, 2000);
	CHECK_I64(it->eligible_at, NOW);

	it = item(&p, "vol-02");
	CHECK(has(it, FLAG_OVERSIZED_FOR_IOPS));
	CHECK_I64(it->target.throughput, 250);
	CHECK_I64(it->rightsize_size_gib, 65); /* 52 GiB at <= 80 % */
	CHECK_I64(it->rightsize_monthly, 11630000); /* 65 x 0.0912 + 125 x 0.0456 */
	CHECK_I64(it->burst_duration_s, 0);

	it = item(&p, "vol-03");
	CHECK(has(it, FLAG_NEEDS_PROVISIONED_IOPS) && has(it, FLAG_POSSIBLY_OVERSIZED));
	CHECK_I64(it->target.iops, 6000);
	CHECK_I64(it->target_monthly, 205200000);

	it = item(&p, "vol-04");
	CHECK(has(it, FLAG_THROUGHPUT_BURST_ONLY) && !has(it, FLAG_OVERSIZED_FOR_IOPS));
	CHECK_I64(it->target.throughput, 125);

	it = item(&p, "vol-05");
	CHECK(has(it, FLAG_UNATTACHED) && has(it, FLAG_NOT_KUBERNETES) && it->action == ACTION_MIGRATE);
	it = item(&p, "vol-06");
	CHECK(has(it, FLAG_IN_TREE_PV) && it->action == ACTION_MIGRATE);
	it = item(&p, "vol-07");
	CHECK(it->action == ACTION_SKIP && !it->has_target && it->target_monthly == it->current_monthly);
	CHECK_STR(it->note, "already gp3");
	it = item(&p, "vol-08");
	CHECK(has(it, FLAG_UNPRICED) && it->action == ACTION_REVIEW && !it->current_priced);

	it = item(&p, "vol-09");
	CHECK(has(it, FLAG_MODIFICATION_LIMIT) && it->action == ACTION_BLOCKED);
	time_t want;
	em_parse_time("2026-12-01T14:00:00Z", &want);
	CHECK_I64(it->eligible_at, want);
	it = item(&p, "vol-10");
	CHECK(has(it, FLAG_MODIFICATION_IN_FLIGHT) && it->action == ACTION_BLOCKED && it->eligible_at == 0);
	it = item(&p, "vol-11");
	CHECK(it->action == ACTION_MIGRATE && it->eligible_at == NOW);
	it = item(&p, "vol-12");
	CHECK(has(it, FLAG_VOLUME_NOT_FOUND) && it->action == ACTION_REVIEW);
	it = item(&p, "vol-13");
	CHECK(has(it, FLAG_BURST_DEPENDENT) && !has(it, FLAG_THROUGHPUT_BURST_ONLY));
	CHECK_I64(it->burst_empty_s, 4320); /* 5.4M credits / (2,000 observed - 750 baseline) */
	CHECK_I64(it->target.throughput, 250);
	it = item(&p, "vol-14");
	CHECK_I64(it->target.iops, 3000); /* 5 GiB gp3 still gets the included 3,000 */
	CHECK_I64(it->burst_duration_s, 1862);
	it = item(&p, "vol-15");
	CHECK(it->action == ACTION_REVIEW);

	/* Totals reconcile: current - target = savings; items sorted by savings. */
	CHECK_I64(p.totals.current_monthly - p.totals.target_monthly, p.totals.savings_monthly);
	CHECK_I64(p.totals.savings_annual, p.totals.savings_monthly * 12);
	micro_t sum_cur = 0, sum_tgt = 0;
	for (size_t i = 0; i < p.n; i++) {
		if (p.items[i].current_priced && p.items[i].target_priced) {
			sum_cur += p.items[i].current_monthly;
			sum_tgt += p.items[i].target_monthly;
		}
		if (i)
			CHECK(p.items[i - 1].savings_monthly >= p.items[i].savings_monthly);
	}
	CHECK_I64(sum_cur, p.totals.current_monthly);
	CHECK_I64(sum_tgt, p.totals.target_monthly);
	plan_release(&p);

	/* --mode baseline: 3000/125 everywhere, performance-reduced where gp2 gave more */
	opt.mode = PLAN_MODE_BASELINE;
	planner_build(&p, &f, &book, &opt);
	it = item(&p, "vol-03");
	CHECK(has(it, FLAG_PERFORMANCE_REDUCED) && it->target.iops == 3000 && it->target.throughput == 125);
	CHECK(!has(item(&p, "vol-01"), FLAG_PERFORMANCE_REDUCED));
	plan_release(&p);

	/* --mode observed: p99 x 1.2, never below baseline, never above match */
	opt.mode = PLAN_MODE_OBSERVED;
	planner_build(&p, &f, &book, &opt);
	it = item(&p, "vol-13");
	CHECK_I64(it->target.iops, 3000);   /* 2000 x 1.2 = 2400 -> 3000 */
	CHECK_I64(it->target.throughput, 216); /* 180 x 1.2 */
	CHECK(p.n_warnings >= 1);
	plan_release(&p);

	/* Before 2026-01-15 the rule was one modification per 6 h. */
	time_t old_now;
	em_parse_time("2025-12-01T12:00:00Z", &old_now);
	struct volume *v16 = add(&f, "vol-16", "ap-northeast-2a", EBS_GP2, 100);
	mod(v16, MOD_COMPLETED, "2025-12-01T08:00:00Z");
	time_t at;
	CHECK_I64(planner_eligible_at(v16, old_now, &at), ELIGIBLE_AFTER_LIMIT);
	em_parse_time("2025-12-01T14:00:00Z", &want);
	CHECK_I64(at, want);
	CHECK_I64(planner_eligible_at(v16, NOW, &at), ELIGIBLE_NOW);

	fleet_release(&f);
	pricebook_release(&book);
	buf_release(&err);
	return tap_done();
}
