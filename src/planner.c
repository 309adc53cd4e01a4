/*
 * planner.c - the recommendation per volume (target, cost, savings, flags, action, eligibility).
 *
 * Entry points: planner_build, planner_eligible_at, plan_release.
 *
 * Modification rules (FACTS.md §2), applied by planner_eligible_at and, later, by apply:
 *   R1. One modification in flight per volume: while the latest is `modifying` or `optimizing`
 *       no new one may start (the volume is blocked until it completes).
 *   R2. Since 2026-01-15: at most 4 modifications per volume in any rolling 24 h. With starts
 *       s1 < ... < sk up to now and k >= 4, the next may start at s(k-3) + 24 h (a start
 *       exactly 24 h ago no longer counts: eligible now).
 *   R3. Before 2026-01-15 the rule was one per 6 h: next start >= last start + 6 h.
 *   R4. A no-op modification still counts: a volume whose target equals its configuration is
 *       never planned (action skip).
 *   R5. Size, type, IOPS and throughput go in one request; ebsmigrate always sends IOPS and
 *       throughput explicitly (AWS documents disagree on the defaults for type-only changes).
 *   R6. The modifications R2/R3 count come from every source, each counted once: EC2's latest,
 *       ebsmigrate's ledger (apply) and CloudTrail's successful ModifyVolume calls from any
 *       principal (planner_modification_starts). Where CloudTrail could not be read the volume
 *       is flagged history-unverified; where the latest modification is younger than
 *       CloudTrail's delivery delay (~15 min) the plan states that margin (eligible_margin_s).
 *
 * Target rules (--mode):
 *   match (default): IOPS = max(3000, gp2 baseline); throughput 125 MiB/s up to 170 GiB,
 *     250 from 334 GiB; 170-334 GiB: 125 and flag throughput-burst-only unless metrics show
 *     more than 125 MiB/s (then 250).
 *   baseline: 3000 / 125 for every size (flag performance-reduced where gp2 gave more).
 *   observed: p99 x 1.2 from metrics, never below 3000/125, never above match; volumes
 *     without metrics fall back to match.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_cloudtrail.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/cost.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/strlist.h"

#define DAY_S 86400
#define RULE_4_PER_DAY_SINCE 1768435200 /* 2026-01-15T00:00:00Z */

static const char *const flag_names[FLAG_COUNT] = {
	"unattached", "not-kubernetes", "in-tree-pv", "needs-provisioned-iops",
	"throughput-burst-only", "oversized-for-iops", "possibly-oversized",
	"modification-in-flight", "modification-limit", "volume-not-found", "unpriced",
	"performance-reduced", "burst-dependent", "exceeds-instance-limit", "history-unverified",
};

const char *plan_flag_name(unsigned bit_index)
{
	return bit_index < FLAG_COUNT ? flag_names[bit_index] : "unknown";
}

static const char *const action_names[] = {"migrate", "skip", "blocked", "review"};

const char *plan_action_name(enum plan_action a)
{
	return action_names[a];
}

int plan_action_parse(const char *s, enum plan_action *out)
{
	int i = em_name_index(action_names, 4, s);
	return i < 0 ? EM_EINPUT : (*out = (enum plan_action)i, 0);
}

static const char *const mode_names[] = {"match", "baseline", "observed"};

const char *plan_mode_name(enum plan_mode m)
{
	return mode_names[m];
}

int plan_mode_parse(const char *s, enum plan_mode *out)
{
	int i = em_name_index(mode_names, 3, s);
	return i < 0 ? EM_EINPUT : (*out = (enum plan_mode)i, 0);
}

static int time_cmp(const void *a, const void *b)
{
	time_t x = *(const time_t *)a, y = *(const time_t *)b;
	return x < y ? -1 : x > y;
}

/* Deduplication is by time, not by request id: EC2's DescribeVolumesModifications carries no
 * request id, and the ledger's record of an ebsmigrate call is the time it was submitted. EC2's
 * startTime and CloudTrail's eventTime are both AWS's time of the same ModifyVolume call (the
 * same second in practice; eventTime has whole seconds), while two modifications of one volume
 * are at least the first's modifying + optimizing time apart (R1: it must complete first), so
 * a window of HISTORY_MATCH_S (60 s) joins the records of one call and never two calls. A
 * ledger time off by more than that (a badly skewed local clock) counts one call twice: the
 * safe direction (a later eligible_at, never an early ModifyVolume). */
size_t planner_modification_starts(const struct volume *v, time_t **out)
{
	time_t *s = xmalloc((v->n_mods + v->n_trail_starts + 1) * sizeof *s);
	size_t n = 0;
	for (size_t i = 0; i < v->n_mods; i++)
		if (v->mods[i].start_time)
			s[n++] = v->mods[i].start_time;
	size_t known = n;
	for (size_t i = 0; i < v->n_trail_starts; i++) {
		time_t t = v->trail_starts[i];
		int dup = 0;
		for (size_t k = 0; k < known && !dup; k++)
			dup = llabs((long long)(s[k] - t)) <= HISTORY_MATCH_S;
		for (size_t k = known; k < n && !dup; k++)
			dup = s[k] == t; /* one CloudTrail event listed twice */
		if (!dup)
			s[n++] = t;
	}
	qsort(s, n, sizeof *s, time_cmp);
	*out = s;
	return n;
}

enum eligibility planner_eligible_at(const struct volume *v, time_t now, time_t *at)
{
	const struct volume_mod *latest = volume_latest_mod(v);
	if (latest && volume_mod_in_flight(latest->state))
		return ELIGIBLE_AFTER_FLIGHT; /* R1 */
	time_t next = 0, *starts = NULL;
	size_t n = planner_modification_starts(v, &starts); /* R6 */
	size_t past = 0; /* starts at or before now (ascending); a later one is not counted yet */
	while (past < n && starts[past] <= now)
		past++;
	/* next is when the rule allows the next start; the window's edge is this one comparison
	 * with now: a start exactly 24 h (R2) or 6 h (R3) before now no longer counts. */
	if (now < RULE_4_PER_DAY_SINCE) {
		if (past >= 1)
			next = starts[past - 1] + 6 * 3600; /* R3: the latest start + 6 h */
	} else if (past >= 4) {
		next = starts[past - 4] + DAY_S; /* R2: the 4th-latest start + 24 h */
	}
	free(starts);
	if (next > now) {
		*at = next;
		return ELIGIBLE_AFTER_LIMIT;
	}
	return ELIGIBLE_NOW;
}

static void add_note(struct plan_item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(struct plan_item *it, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	if (it->note) {
		buf_adds(&b, it->note);
		buf_adds(&b, "; ");
		free(it->note);
	}
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	it->note = buf_detach(&b);
}

static void match_target(const struct volume *v, struct plan_item *it)
{
	int64_t size = v->size_gib;
	it->target.iops = ebs_gp2_baseline_iops(size);
	if (it->target.iops < GP3_BASE_IOPS)
		it->target.iops = GP3_BASE_IOPS;
	if (size <= 170) {
		it->target.throughput = GP3_BASE_MIBPS;
	} else if (size >= 334) {
		it->target.throughput = 250;
	} else if (v->metrics.has && (v->metrics.p99_mibps > GP3_BASE_MIBPS || v->metrics.max_mibps > GP3_BASE_MIBPS)) {
		it->target.throughput = 250;
	} else {
		it->target.throughput = GP3_BASE_MIBPS;
		it->flags |= FLAG_THROUGHPUT_BURST_ONLY;
	}
}

static void observed_target(const struct volume *v, struct plan_item *it)
{
	match_target(v, it);
	if (!v->metrics.has)
		return;
	it->flags &= ~(unsigned)FLAG_THROUGHPUT_BURST_ONLY;
	int64_t iops = (int64_t)ceil(v->metrics.p99_iops * 1.2);
	int64_t mibps = (int64_t)ceil(v->metrics.p99_mibps * 1.2);
	if (iops < GP3_BASE_IOPS)
		iops = GP3_BASE_IOPS;
	if (mibps < GP3_BASE_MIBPS)
		mibps = GP3_BASE_MIBPS;
	int64_t match_mibps = v->size_gib > 170 ? 250 : GP3_BASE_MIBPS;
	if (iops < it->target.iops)
		it->target.iops = iops;
	it->target.throughput = mibps < match_mibps ? mibps : match_mibps;
}

static void compute_target(const struct volume *v, enum plan_mode mode, struct plan_item *it)
{
	it->has_target = 1;
	it->target.type = EBS_GP3;
	it->target.size_gib = v->size_gib;
	switch (mode) {
	case PLAN_MODE_MATCH:
		match_target(v, it);
		break;
	case PLAN_MODE_OBSERVED:
		observed_target(v, it);
		break;
	case PLAN_MODE_BASELINE:
		it->target.iops = GP3_BASE_IOPS;
		it->target.throughput = GP3_BASE_MIBPS;
		if (ebs_gp2_baseline_iops(v->size_gib) > GP3_BASE_IOPS || v->size_gib > 170)
			it->flags |= FLAG_PERFORMANCE_REDUCED;
		break;
	}
	/* Keep within the ratio limits (IOPS <= 500/GiB above 3,000; MiB/s <= IOPS/4). */
	int64_t max_iops = ebs_gp3_max_iops_for_size(v->size_gib);
	if (it->target.iops > max_iops)
		it->target.iops = max_iops;
	int64_t max_mibps = ebs_gp3_max_mibps_for_iops(it->target.iops);
	if (it->target.throughput > max_mibps)
		it->target.throughput = max_mibps;
	if (it->target.iops > GP3_BASE_IOPS)
		it->flags |= FLAG_NEEDS_PROVISIONED_IOPS;
}

/* oversized-for-iops: usage known, < 30 % used, and a smaller gp3 that keeps the data at
 * <= 80 % full with the target IOPS/throughput costs less. */
static void note_history(struct plan_item *it, const struct volume *v, time_t now);

static void check_rightsize(const struct volume *v, const struct pricebook *book, struct plan_item *it)
{
	const struct kube_binding *k = v->kube;
	if (!k || !k->has_usage || !it->has_target || !it->target_priced) {
		if (v->type == EBS_GP2 && v->size_gib >= 334 && !(k && k->has_usage))
			it->flags |= FLAG_POSSIBLY_OVERSIZED;
		return;
	}
	int64_t cap = k->capacity_bytes > 0 ? k->capacity_bytes : v->size_gib << 30;
	if (k->used_bytes * 10 >= cap * 3)
		return;
	const int64_t gib = 1LL << 30;
	int64_t need = (k->used_bytes * 5 + 4 * gib - 1) / (4 * gib); /* used / 0.8, rounded up */
	if (need < 1)
		need = 1;
	if (it->target.iops > GP3_BASE_IOPS) {
		int64_t by_ratio = (it->target.iops + GP3_MAX_IOPS_PER_GIB - 1) / GP3_MAX_IOPS_PER_GIB;
		if (need < by_ratio)
			need = by_ratio;
	}
	if (need >= v->size_gib)
		return;
	struct ebs_config rs = it->target;
	rs.size_gib = need;
	micro_t cost;
	if (cost_monthly(book, v->location, &rs, &cost, NULL))
		return;
	if (cost >= it->target_monthly)
		return;
	it->flags |= FLAG_OVERSIZED_FOR_IOPS;
	it->has_rightsize = 1;
	it->rightsize_size_gib = need;
	it->rightsize_monthly = cost;
}

const struct instance_limit *planner_instance_limit(const struct fleet *f, const struct volume *v)
{
	const struct instance_limit *l = v->kube ? fleet_instance_limit(f, v->kube->node_instance_type) : NULL;
	if (!l && v->n_attachments)
		l = fleet_instance_limit(f, v->attachments[0].instance_type);
	return l;
}

/* A target above what the instance can drive is paid for and never delivered. */
static void check_instance_limit(const struct fleet *f, const struct volume *v, struct plan_item *it)
{
	const struct instance_limit *l = planner_instance_limit(f, v);
	if (!l || !it->has_target)
		return;
	double limit_mibps = l->baseline_mbps * 1e6 / (1024.0 * 1024.0);
	if (it->target.iops > l->baseline_iops || (double)it->target.throughput > limit_mibps + 1e-9) {
		it->flags |= FLAG_EXCEEDS_INSTANCE_LIMIT;
		add_note(it, "target %lld IOPS / %lld MiB/s exceeds instance type %s's EBS baseline of %lld IOPS / %.1f MiB/s",
			 (long long)it->target.iops, (long long)it->target.throughput, l->type, (long long)l->baseline_iops,
			 limit_mibps);
	}
}

static void plan_volume(const struct volume *v, const struct pricebook *book, const struct plan_options *opt,
			struct plan_item *it)
{
	memset(it, 0, sizeof *it);
	it->v = v;
	it->action = ACTION_MIGRATE;
	if (v->missing) {
		it->flags |= FLAG_VOLUME_NOT_FOUND;
		it->action = ACTION_REVIEW;
		add_note(it, "PersistentVolume '%s' names a volume absent from the EC2 data",
			 v->kube ? v->kube->pv : "?");
	}
	if (!v->kube)
		it->flags |= FLAG_NOT_KUBERNETES;
	else if (v->kube->in_tree)
		it->flags |= FLAG_IN_TREE_PV;
	if (!v->missing && v->n_attachments == 0)
		it->flags |= FLAG_UNATTACHED;
	if (v->metrics.has && v->metrics.min_burst_balance >= 0 && v->metrics.min_burst_balance < 50) {
		it->flags |= FLAG_BURST_DEPENDENT;
		/* Time to empty a full bucket at the observed demand (capped at the burst rate). */
		double demand = v->metrics.p99_iops < GP2_BURST_IOPS ? v->metrics.p99_iops : GP2_BURST_IOPS;
		double base = (double)ebs_gp2_baseline_iops(v->size_gib);
		if (v->type == EBS_GP2 && ebs_gp2_bursts(v->size_gib) && demand > base)
			it->burst_empty_s = (int64_t)((double)GP2_BURST_CREDITS / (demand - base) + 0.5);
	}

	struct ebs_config cur = {v->type, v->size_gib, v->iops, v->throughput};
	if (v->type == EBS_GP3 && !cur.throughput)
		cur.throughput = GP3_BASE_MIBPS;
	if (v->type == EBS_GP2) {
		it->burst_duration_s = ebs_gp2_burst_duration_s(v->size_gib);
		cur.iops = ebs_gp2_baseline_iops(v->size_gib);
	}
	struct buf err = BUF_INIT;
	if (!v->missing && cost_monthly(book, v->location, &cur, &it->current_monthly, &err) == 0)
		it->current_priced = 1;
	else if (!v->missing) {
		it->flags |= FLAG_UNPRICED;
		add_note(it, "%s", err.s);
	}
	buf_release(&err);

	if (v->type != EBS_GP2) {
		if (!v->missing) {
			it->action = ACTION_SKIP;
			if (v->type == EBS_GP3)
				add_note(it, "already gp3");
			else
				add_note(it, "%s volumes are not migrated", ebs_type_name(v->type));
		} else if (v->type == EBS_UNKNOWN) {
			add_note(it, "volume type unknown");
		}
		it->target_monthly = it->current_monthly;
		it->target_priced = it->current_priced;
		return;
	}

	compute_target(v, opt->mode, it);
	struct buf verr = BUF_INIT;
	if (ebs_gp3_validate(&it->target, &verr)) {
		it->action = ACTION_REVIEW;
		add_note(it, "target outside gp3 limits: %s", verr.s);
	}
	buf_release(&verr);
	if (!v->missing) {
		struct buf terr = BUF_INIT;
		if (cost_monthly(book, v->location, &it->target, &it->target_monthly, &terr) == 0) {
			it->target_priced = 1;
		} else if (!(it->flags & FLAG_UNPRICED)) {
			it->flags |= FLAG_UNPRICED;
			add_note(it, "%s", terr.s);
		}
		buf_release(&terr);
	}
	if (it->current_priced && it->target_priced)
		it->savings_monthly = it->current_monthly - it->target_monthly;
	if ((it->flags & FLAG_UNPRICED) && it->action == ACTION_MIGRATE) {
		it->action = ACTION_REVIEW;
	}
	if (v->state && strcmp(v->state, "available") != 0 && strcmp(v->state, "in-use") != 0 && !v->missing &&
	    it->action == ACTION_MIGRATE) {
		it->action = ACTION_REVIEW;
		add_note(it, "volume state is '%s'", v->state);
	}
	check_rightsize(v, book, it);

	time_t at = 0;
	switch (planner_eligible_at(v, opt->now, &at)) {
	case ELIGIBLE_AFTER_FLIGHT:
		it->flags |= FLAG_MODIFICATION_IN_FLIGHT;
		if (it->action == ACTION_MIGRATE)
			it->action = ACTION_BLOCKED;
		add_note(it, "a modification is %s; the next may start after it completes",
			 volume_mod_state_name(volume_latest_mod(v)));
		break;
	case ELIGIBLE_AFTER_LIMIT:
		it->flags |= FLAG_MODIFICATION_LIMIT;
		if (it->action == ACTION_MIGRATE)
			it->action = ACTION_BLOCKED;
		it->eligible_at = at;
		break;
	case ELIGIBLE_NOW:
		if (it->action == ACTION_MIGRATE)
			it->eligible_at = opt->now;
		break;
	}
	note_history(it, v, opt->now);
}

/* R6: what the count of modifications could not see. Only volumes the plan would modify (now or
 * later) are concerned: the history of a volume that is skipped changes nothing. */
static void note_history(struct plan_item *it, const struct volume *v, time_t now)
{
	if (it->action != ACTION_MIGRATE && it->action != ACTION_BLOCKED)
		return;
	if (v->history == HISTORY_UNAVAILABLE) {
		it->flags |= FLAG_HISTORY_UNVERIFIED;
		return;
	}
	if (v->history != HISTORY_CLOUDTRAIL || (it->flags & FLAG_MODIFICATION_IN_FLIGHT))
		return; /* in flight: it must complete first, whatever else happened */
	time_t *starts = NULL;
	size_t n = planner_modification_starts(v, &starts);
	time_t last = n ? starts[n - 1] : 0;
	free(starts);
	if (!last || last > now || now - last >= CLOUDTRAIL_DELIVERY_DELAY_S)
		return;
	it->eligible_margin_s = CLOUDTRAIL_DELIVERY_DELAY_S;
	char ts[21];
	em_format_time(last + CLOUDTRAIL_DELIVERY_DELAY_S, ts);
	add_note(it,
		 "modified %lld min ago: CloudTrail delivers events up to 15 min late, so a modification made "
		 "elsewhere meanwhile may not be counted yet; re-plan after %s to be sure",
		 (long long)((now - last) / 60), ts);
}

/* The plan's order: larger savings first, then by volume id. Sorted as small keys (16 bytes of
 * the id after the prefix all ids share, as two big-endian numbers, so most ties never reach
 * strcmp) that the items then follow: qsort moving the large items themselves, and reaching each
 * id through two pointers, was most of the planner's time at 100,000 volumes. */
struct item_key {
	micro_t savings;
	uint64_t id_hi, id_lo;
	const struct plan_item *item;
};

/* Bytes s[0, 8) as a big-endian number, zero after the string's end (strcmp's order). */
static uint64_t id_prefix(const char *s, size_t len)
{
	uint64_t k = 0;
	for (size_t i = 0; i < 8; i++)
		k = k << 8 | (i < len ? (unsigned char)s[i] : 0);
	return k;
}

static int key_cmp(const struct item_key *x, const struct item_key *y)
{
	if (x->savings != y->savings)
		return x->savings > y->savings ? -1 : 1;
	if (x->id_hi != y->id_hi)
		return x->id_hi < y->id_hi ? -1 : 1;
	if (x->id_lo != y->id_lo)
		return x->id_lo < y->id_lo ? -1 : 1;
	return strcmp(x->item->v->volume_id, y->item->v->volume_id); /* 16 bytes alike: rare */
}

/* Merge sort of keys[0, n) (tmp: room for n keys), the comparison inlined: qsort's calls through
 * a function pointer were half its time. Ids are unique, so no two keys compare equal and the
 * order is the one qsort gives. */
static void sort_keys(struct item_key *keys, struct item_key *tmp, size_t n)
{
	if (n < 2)
		return;
	if (n <= 8) { /* insertion sort */
		for (size_t i = 1; i < n; i++) {
			struct item_key k = keys[i];
			size_t j = i;
			for (; j > 0 && key_cmp(&keys[j - 1], &k) > 0; j--)
				keys[j] = keys[j - 1];
			keys[j] = k;
		}
		return;
	}
	size_t half = n / 2;
	sort_keys(keys, tmp, half);
	sort_keys(keys + half, tmp, n - half);
	if (key_cmp(&keys[half - 1], &keys[half]) < 0)
		return; /* already in order */
	memcpy(tmp, keys, half * sizeof *keys);
	size_t i = 0, j = half, k = 0;
	while (i < half && j < n)
		keys[k++] = key_cmp(&keys[j], &tmp[i]) < 0 ? keys[j++] : tmp[i++];
	while (i < half)
		keys[k++] = tmp[i++];
}

static void sort_items(struct plan_item *items, size_t n)
{
	struct item_key *keys = xcalloc(n, sizeof *keys);
	const char *first = items[0].v->volume_id;
	size_t shared = strlen(first);
	for (size_t i = 1; i < n && shared; i++) {
		const char *id = items[i].v->volume_id;
		size_t j = 0;
		while (j < shared && id[j] == first[j])
			j++;
		shared = j;
	}
	for (size_t i = 0; i < n; i++) {
		const char *id = items[i].v->volume_id + shared;
		size_t len = strnlen(id, 16);
		keys[i].savings = items[i].savings_monthly;
		keys[i].id_hi = id_prefix(id, len);
		keys[i].id_lo = len > 8 ? id_prefix(id + 8, len - 8) : 0;
		keys[i].item = &items[i];
	}
	struct item_key *tmp = xcalloc(n / 2 + 1, sizeof *tmp);
	sort_keys(keys, tmp, n);
	free(tmp);
	/* from[k]: where the item that belongs at k is now; moved in place, cycle by cycle */
	size_t *from = xcalloc(n, sizeof *from);
	for (size_t k = 0; k < n; k++)
		from[k] = (size_t)(keys[k].item - items);
	free(keys);
	for (size_t start = 0; start < n; start++) {
		if (from[start] == start)
			continue;
		struct plan_item held = items[start];
		size_t k = start;
		while (from[k] != start) {
			size_t src = from[k];
			items[k] = items[src];
			from[k] = k;
			k = src;
		}
		items[k] = held;
		from[k] = k;
	}
	free(from);
}

/* A formatted warning kept in the plan's warnings (printf-checked through strv_addf). */
#define add_warning(owner, ...) strv_addf(&(owner)->warnings, &(owner)->n_warnings, &(owner)->alloc_warnings, __VA_ARGS__)

/* The volume type a StorageClass creates: its `type` parameter, else the provisioner's default
 * (in-tree kubernetes.io/aws-ebs: gp2; EBS CSI driver: gp3). */
static const char *sc_effective_type(const struct storage_class *sc)
{
	if (sc->type)
		return sc->type;
	if (sc->provisioner && strcmp(sc->provisioner, "kubernetes.io/aws-ebs") == 0)
		return "gp2";
	if (sc->provisioner && strcmp(sc->provisioner, "ebs.csi.aws.com") == 0)
		return "gp3";
	return NULL;
}

static const struct storage_class *find_sc(const struct fleet *f, const char *cluster, const char *name)
{
	for (size_t i = 0; i < f->n_scs; i++) {
		const struct storage_class *sc = &f->scs[i];
		if (strcmp(sc->cluster, cluster) != 0)
			continue;
		if (name ? strcmp(sc->name, name) == 0 : sc->is_default)
			return sc;
	}
	return NULL;
}

static int sc_makes_gp2(const struct storage_class *sc)
{
	const char *t = sc ? sc_effective_type(sc) : NULL;
	return t && strcmp(t, "gp2") == 0;
}

static void cluster_warnings(struct plan *p, const struct fleet *f)
{
	for (size_t i = 0; i < f->n_notices; i++)
		add_warning(p, "%s", f->notices[i]);
	for (size_t i = 0; i < f->n_scs; i++) {
		const struct storage_class *sc = &f->scs[i];
		if (!sc_makes_gp2(sc))
			continue;
		if (sc->is_default)
			add_warning(p, "cluster '%s': the default StorageClass '%s' still creates gp2 volumes", sc->cluster,
				    sc->name);
		else
			add_warning(p, "cluster '%s': StorageClass '%s' creates gp2 volumes", sc->cluster, sc->name);
	}
	for (size_t i = 0; i < f->n_sts; i++) {
		const struct statefulset_ref *s = &f->sts[i];
		for (size_t t = 0; t < s->n_templates; t++) {
			const struct storage_class *sc = find_sc(f, s->cluster, s->claim_storage_classes[t]);
			if (sc_makes_gp2(sc))
				add_warning(p,
					    "cluster '%s': StatefulSet '%s/%s' volumeClaimTemplate '%s' uses StorageClass "
					    "'%s' (gp2): new replicas will keep creating gp2 volumes",
					    s->cluster, s->namespace_, s->name, s->claim_templates[t], sc->name);
		}
	}
	for (size_t i = 0; i < f->n_vacs; i++) {
		const struct vac_ref *vac = &f->vacs[i];
		int has_type = 0, has_iops = 0, has_tput = 0;
		for (size_t k = 0; k < vac->n_parameters; k++) {
			has_type |= strcmp(vac->parameters[k].key, "type") == 0;
			has_iops |= strcmp(vac->parameters[k].key, "iops") == 0;
			has_tput |= strcmp(vac->parameters[k].key, "throughput") == 0;
		}
		if (has_type && (!has_iops || !has_tput))
			add_warning(p,
				    "cluster '%s': VolumeAttributesClass '%s' sets type without %s: AWS documents disagree "
				    "on the IOPS/throughput such a modification gets; set them explicitly",
				    vac->cluster, vac->name,
				    !has_iops && !has_tput ? "iops and throughput" : !has_iops ? "iops" : "throughput");
	}
}

void planner_build(struct plan *out, const struct fleet *f, const struct pricebook *book,
		   const struct plan_options *opt)
{
	memset(out, 0, sizeof *out);
	out->generated_at = opt->now;
	out->fleet = f;
	out->mode = opt->mode;
	out->book = book;
	out->n = f->n;
	out->items = f->n ? xcalloc(f->n, sizeof *out->items) : NULL;
	struct plan_totals *t = &out->totals;
	for (size_t i = 0; i < f->n; i++) {
		struct plan_item *it = &out->items[i];
		plan_volume(&f->vols[i], book, opt, it);
		check_instance_limit(f, &f->vols[i], it);
		t->volumes++;
		if (f->vols[i].type == EBS_GP2)
			t->gp2_volumes++;
		switch (it->action) {
		case ACTION_MIGRATE: t->migrate++; break;
		case ACTION_BLOCKED: t->blocked++; break;
		case ACTION_REVIEW: t->review++; break;
		case ACTION_SKIP: t->skip++; break;
		}
		if (it->current_priced && it->target_priced) {
			t->current_monthly += it->current_monthly;
			t->target_monthly += it->target_monthly;
		} else {
			t->unpriced++;
		}
		if (it->has_rightsize)
			t->rightsize_monthly += it->target_monthly - it->rightsize_monthly;
	}
	t->savings_monthly = t->current_monthly - t->target_monthly;
	t->savings_annual = t->savings_monthly * 12;
	if (out->n > 1)
		sort_items(out->items, out->n);
	cluster_warnings(out, f);
	if (opt->mode == PLAN_MODE_OBSERVED) {
		size_t without = 0;
		for (size_t i = 0; i < f->n; i++)
			without += f->vols[i].type == EBS_GP2 && !f->vols[i].metrics.has;
		if (without)
			add_warning(out, "--mode observed: %zu gp2 volume(s) have no CloudWatch metrics; planned as --mode match",
				    without);
	}
}

void plan_release(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->items[i].note);
	free(p->items);
	strv_free(p->warnings, p->n_warnings);
	memset(p, 0, sizeof *p);
}
