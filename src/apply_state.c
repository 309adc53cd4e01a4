/*
 * apply_state.c - the typed states of a migration: the name tables of enum apply_state and enum
 * modify_method (the strings the ledger stores and the outputs show) and the VolumeAttributesClass
 * name rule. It sits beside the ledger (L1), which includes it to store and read these names:
 * it calls only the foundation and volume.c's EBS type names.
 *
 * Entry points: apply_state_name/parse/from_ec2/open/rank/may_follow, modify_method_name/parse/kube, apply_vac_name.
 *
 * Invariants: each name table has exactly one entry per enumerator (checked at compile time).
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/volume.h"

static const char *const state_names[] = {"planned",    "deferred",  "submitted", "modifying",
					  "optimizing", "completed", "failed"};
_Static_assert(sizeof state_names / sizeof state_names[0] == APPLY_STATE_COUNT, "one name per apply_state");

static const char *const method_names[] = {"auto", "vac", "annotation", "ec2"};
_Static_assert(sizeof method_names / sizeof method_names[0] == MODIFY_METHOD_COUNT, "one name per modify_method");

const char *apply_state_name(enum apply_state s)
{
	return (unsigned)s < APPLY_STATE_COUNT ? state_names[s] : "unknown";
}

int apply_state_parse(const char *s, enum apply_state *out)
{
	int i = em_name_index(state_names, APPLY_STATE_COUNT, s);
	return i < 0 ? EM_EINPUT : (*out = (enum apply_state)i, 0);
}

int apply_state_from_ec2(enum volume_mod_state s, enum apply_state *out)
{
	switch (s) {
	case MOD_MODIFYING: *out = APPLY_MODIFYING; return 0;
	case MOD_OPTIMIZING: *out = APPLY_OPTIMIZING; return 0;
	case MOD_COMPLETED: *out = APPLY_COMPLETED; return 0;
	case MOD_FAILED: *out = APPLY_FAILED; return 0;
	case MOD_STATE_NONE:
	case MOD_STATE_OTHER:
		break;
	}
	return EM_EINPUT;
}

int apply_state_open(enum apply_state s)
{
	return s == APPLY_SUBMITTED || s == APPLY_MODIFYING || s == APPLY_OPTIMIZING;
}

int apply_state_rank(enum apply_state s)
{
	return s == APPLY_COMPLETED || s == APPLY_FAILED ? 10 : (int)s;
}

int apply_state_may_follow(enum apply_state from, enum apply_state to)
{
	if (from == to)
		return 1;
	if (from == APPLY_COMPLETED || from == APPLY_FAILED)
		return 0;
	if (to == APPLY_PLANNED)
		return from == APPLY_SUBMITTED;
	return 1;
}

const char *modify_method_name(enum modify_method m)
{
	return (unsigned)m < MODIFY_METHOD_COUNT ? method_names[m] : "unknown";
}

int modify_method_parse(const char *s, enum modify_method *out)
{
	int i = em_name_index(method_names, MODIFY_METHOD_COUNT, s);
	return i < 0 ? EM_EINPUT : (*out = (enum modify_method)i, 0);
}

int modify_method_kube(enum modify_method m)
{
	return m == METHOD_VAC || m == METHOD_ANNOTATION;
}

void apply_vac_name(struct buf *out, int64_t iops, int64_t throughput)
{
	buf_addf(out, "%s-%lld-%lld", ebs_type_name(EBS_GP3), (long long)iops, (long long)throughput);
}
