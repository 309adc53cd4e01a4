/*
 * planner.h - one recommendation per volume: the gp3 target, its cost and savings, flags,
 * the action and when the volume may be modified under EBS's modification rules.
 *
 * Ownership: struct plan owns its items array, notes and warnings; items borrow their volume
 * from the fleet (which must outlive the plan) and the plan borrows the price book.
 * plan_release frees what the plan owns.
 */
#ifndef EBSMIGRATE_PLANNER_H
#define EBSMIGRATE_PLANNER_H

#include <stdint.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/ebs.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/pricebook.h"
#include "ebsmigrate/volume.h"

enum plan_mode { PLAN_MODE_MATCH = 0, PLAN_MODE_BASELINE, PLAN_MODE_OBSERVED };
enum plan_action { ACTION_MIGRATE = 0, ACTION_SKIP, ACTION_BLOCKED, ACTION_REVIEW };

/* Flags: stable names, documented in docs/plan.md. Bit order = output order. */
enum plan_flag {
	FLAG_UNATTACHED = 1u << 0,
	FLAG_NOT_KUBERNETES = 1u << 1,
	FLAG_IN_TREE_PV = 1u << 2,
	FLAG_NEEDS_PROVISIONED_IOPS = 1u << 3,
	FLAG_THROUGHPUT_BURST_ONLY = 1u << 4,
	FLAG_OVERSIZED_FOR_IOPS = 1u << 5,
	FLAG_POSSIBLY_OVERSIZED = 1u << 6,
	FLAG_MODIFICATION_IN_FLIGHT = 1u << 7,
	FLAG_MODIFICATION_LIMIT = 1u << 8,
	FLAG_VOLUME_NOT_FOUND = 1u << 9,
	FLAG_UNPRICED = 1u << 10,
	FLAG_PERFORMANCE_REDUCED = 1u << 11,
	FLAG_BURST_DEPENDENT = 1u << 12,
	FLAG_EXCEEDS_INSTANCE_LIMIT = 1u << 13,
	FLAG_HISTORY_UNVERIFIED = 1u << 14,
	FLAG_COUNT = 15
};

const char *plan_flag_name(unsigned bit_index);
const char *plan_action_name(enum plan_action a);
/* The action named s (plan_action_name's names) into *out; EM_EINPUT for any other text. */
int plan_action_parse(const char *s, enum plan_action *out);
const char *plan_mode_name(enum plan_mode m);
int plan_mode_parse(const char *s, enum plan_mode *out);

struct plan_options {
	enum plan_mode mode;
	time_t now;
};

struct plan_item {
	const struct volume *v;
	enum plan_action action;
	unsigned flags;
	int current_priced;
	micro_t current_monthly;
	int has_target;
	struct ebs_config target;
	int target_priced;
	micro_t target_monthly;   /* cost after the plan (= current when not migrating) */
	micro_t savings_monthly;
	int64_t burst_duration_s; /* gp2 that bursts; 0 otherwise */
	int64_t burst_empty_s;    /* burst-dependent: seconds a full bucket lasts at the observed p99
				   * demand; 0 when not burst-dependent or demand <= baseline */
	time_t eligible_at;       /* 0 = not applicable / unknown */
	int64_t eligible_margin_s; /* > 0: the volume was modified less than CloudTrail's delivery
				    * delay ago, so a modification made elsewhere in that time may not
				    * be counted yet (docs/plan.md) */
	int has_rightsize;
	int64_t rightsize_size_gib;
	micro_t rightsize_monthly;
	char *note;               /* why skipped/blocked/review, NULL otherwise */
};

struct plan_totals {
	int64_t volumes, gp2_volumes, migrate, blocked, review, skip, unpriced;
	micro_t current_monthly, target_monthly, savings_monthly, savings_annual;
	micro_t rightsize_monthly; /* further savings if flagged volumes were right-sized */
};

struct plan {
	time_t generated_at;
	enum plan_mode mode;
	const struct pricebook *book;
	struct plan_item *items;
	size_t n;
	char **warnings;
	size_t n_warnings, alloc_warnings;
	struct plan_totals totals;
	const struct fleet *fleet; /* borrowed: the fleet planned (its accounts go into the document) */
};

/* Builds the plan for every volume of the fleet. Items are ordered by savings (largest first),
 * then volume id. Never fails on a single volume's data: such volumes are flagged. */
void planner_build(struct plan *out, const struct fleet *f, const struct pricebook *book,
		   const struct plan_options *opt);
/* The EBS baseline of the instance the volume is used from (its Kubernetes node, else its first
 * EC2 attachment), or NULL when unknown. */
const struct instance_limit *planner_instance_limit(const struct fleet *f, const struct volume *v);
void plan_release(struct plan *p);

/* When a new modification of a volume may start (planner_eligible_at). */
enum eligibility {
	ELIGIBLE_NOW = 0,       /* it may start now */
	ELIGIBLE_AFTER_LIMIT,   /* R2/R3: the modification budget is spent until *at */
	ELIGIBLE_AFTER_FLIGHT,  /* R1: the latest modification is in flight and must complete first;
				 * no time is known (*at untouched) */
};

/* Modification rules (exposed for apply and tests): whether, and from when, a new modification
 * may start at now given the volume's known modifications. */
enum eligibility planner_eligible_at(const struct volume *v, time_t now, time_t *at);
/* Every modification known for v, counted once: the starts of mods[] (EC2's latest and the
 * ledger's) and of trail_starts[] (CloudTrail), a CloudTrail start within HISTORY_MATCH_S of a
 * known one being that same modification. Sorted ascending; *out is the caller's (free it);
 * returns the count. */
#define HISTORY_MATCH_S 60
size_t planner_modification_starts(const struct volume *v, time_t **out);

#endif
