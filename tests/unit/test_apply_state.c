/* test_apply_state.c - the typed states of a migration: the name tables (the strings the ledger
 * stores) and the VolumeAttributesClass name rule. Status's verification of a row is
 * test_status_verify.c's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/plan_manifests.h"
#include "tap.h"

static void test_state_names(void)
{
	/* exactly the names migration 0003's CHECK constraint admits, in this order */
	static const char *const want[] = {"planned",    "deferred",  "submitted", "modifying",
					   "optimizing", "completed", "failed"};
	for (int i = 0; i < APPLY_STATE_COUNT; i++) {
		enum apply_state s = APPLY_FAILED;
		CHECK_STR(apply_state_name((enum apply_state)i), want[i]);
		CHECK(apply_state_parse(want[i], &s) == 0);
		CHECK_I64(s, i);
	}
	enum apply_state s = APPLY_DEFERRED;
	CHECK_I64(apply_state_parse("Completed", &s), EM_EINPUT);
	CHECK_I64(apply_state_parse("", &s), EM_EINPUT);
	CHECK_I64(apply_state_parse(NULL, &s), EM_EINPUT);
	CHECK_I64(s, APPLY_DEFERRED); /* untouched on failure */
	CHECK(!apply_state_open(APPLY_PLANNED) && !apply_state_open(APPLY_DEFERRED));
	CHECK(apply_state_open(APPLY_SUBMITTED) && apply_state_open(APPLY_MODIFYING) && apply_state_open(APPLY_OPTIMIZING));
	CHECK(!apply_state_open(APPLY_COMPLETED) && !apply_state_open(APPLY_FAILED));
	/* status moves rows forward only: planned < deferred < submitted < modifying < optimizing < final */
	CHECK(apply_state_rank(APPLY_PLANNED) < apply_state_rank(APPLY_DEFERRED));
	CHECK(apply_state_rank(APPLY_DEFERRED) < apply_state_rank(APPLY_SUBMITTED));
	CHECK(apply_state_rank(APPLY_MODIFYING) < apply_state_rank(APPLY_OPTIMIZING));
	CHECK(apply_state_rank(APPLY_OPTIMIZING) < apply_state_rank(APPLY_COMPLETED));
	CHECK_I64(apply_state_rank(APPLY_COMPLETED), apply_state_rank(APPLY_FAILED));
	/* the ledger's write path asserts these: settled rows stay, only unsent ones go back to planned */
	CHECK(apply_state_may_follow(APPLY_PLANNED, APPLY_SUBMITTED));
	CHECK(apply_state_may_follow(APPLY_SUBMITTED, APPLY_PLANNED));
	CHECK(apply_state_may_follow(APPLY_SUBMITTED, APPLY_DEFERRED));
	CHECK(apply_state_may_follow(APPLY_DEFERRED, APPLY_MODIFYING));
	CHECK(apply_state_may_follow(APPLY_MODIFYING, APPLY_COMPLETED));
	CHECK(apply_state_may_follow(APPLY_COMPLETED, APPLY_COMPLETED));
	CHECK(!apply_state_may_follow(APPLY_COMPLETED, APPLY_MODIFYING));
	CHECK(!apply_state_may_follow(APPLY_FAILED, APPLY_PLANNED));
	CHECK(!apply_state_may_follow(APPLY_FAILED, APPLY_COMPLETED));
	CHECK(!apply_state_may_follow(APPLY_MODIFYING, APPLY_PLANNED));
	CHECK(!apply_state_may_follow(APPLY_DEFERRED, APPLY_PLANNED));
}

static void test_method_names(void)
{
	/* the ledger's names (migration 0003's CHECK), and auto, apply's default choice */
	enum modify_method m = METHOD_EC2;
	CHECK(modify_method_parse("auto", &m) == 0 && m == METHOD_AUTO && m == 0);
	CHECK(modify_method_parse("vac", &m) == 0 && m == METHOD_VAC);
	CHECK(modify_method_parse("annotation", &m) == 0 && m == METHOD_ANNOTATION);
	CHECK(modify_method_parse("ec2", &m) == 0 && m == METHOD_EC2);
	CHECK_STR(modify_method_name(METHOD_AUTO), "auto");
	CHECK_STR(modify_method_name(METHOD_VAC), "vac");
	CHECK_STR(modify_method_name(METHOD_ANNOTATION), "annotation");
	CHECK_STR(modify_method_name(METHOD_EC2), "ec2");
	CHECK_I64(modify_method_parse("EC2", &m), EM_EINPUT);
	CHECK_I64(m, METHOD_EC2);
	CHECK(modify_method_kube(METHOD_VAC) && modify_method_kube(METHOD_ANNOTATION));
	CHECK(!modify_method_kube(METHOD_EC2) && !modify_method_kube(METHOD_AUTO));
	/* plan --manifests --route is the same enum: no auto there, and a zeroed option reads as vac */
	CHECK_I64(manifest_route_parse("auto", &m), EM_EINPUT);
	CHECK(manifest_route_parse("annotation", &m) == 0 && m == METHOD_ANNOTATION);
	CHECK_STR(manifest_route_name(METHOD_AUTO), "vac");
	CHECK_STR(manifest_route_name(METHOD_EC2), "ec2");
}

static void test_vac_name(void)
{
	struct buf b = BUF_INIT;
	apply_vac_name(&b, 3000, 125);
	CHECK_STR(b.s, "gp3-3000-125");
	buf_reset(&b);
	manifest_vac_name(&b, 16000, 1000); /* plan --manifests: the same rule */
	CHECK_STR(b.s, "gp3-16000-1000");
	buf_release(&b);
}

int main(void)
{
	test_state_names();
	test_method_names();
	test_vac_name();
	return tap_done();
}
