/* test_apply_state.c - apply's typed states: the name tables (the strings the ledger stores), the
 * VolumeAttributesClass name rule, and the verification status shows for a ledger row. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/plan_manifests.h"
#include "ebsmigrate/volume.h"
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

static void row_init(struct apply_row *r, enum modify_method m, enum apply_state s)
{
	memset(r, 0, sizeof *r);
	r->volume_id = "vol-1";
	r->cluster = "prod";
	r->namespace_ = "apps";
	r->pvc = "data";
	r->method = m;
	r->state = s;
	r->target_type = "gp3";
	r->target_iops = 3000;
	r->target_throughput = 125;
	r->target_class = m == METHOD_VAC ? "gp3-3000-125" : NULL;
	r->submitted_at = 1764590400;
	r->current_monthly = 10 * MICRO_PER_USD;
	r->target_monthly = 8 * MICRO_PER_USD;
}

static void test_verify(void)
{
	struct volume v;
	memset(&v, 0, sizeof v);
	v.type = EBS_GP3;
	v.iops = 3000;
	v.throughput = 125;
	struct pvc_live p;
	memset(&p, 0, sizeof p);
	p.lookup = PVC_READ;
	p.st.current_class = "gp3-3000-125";
	struct apply_row r;
	struct apply_verdict vd;
	struct apply_totals t;
	memset(&t, 0, sizeof t);

	/* completed, EC2 and PVC agree: verified, realized savings counted */
	row_init(&r, METHOD_VAC, APPLY_COMPLETED);
	apply_verify_row(&r, &v, 1, &p, &vd);
	CHECK_I64(vd.verified, 1);
	CHECK_I64(vd.progress, 100);
	CHECK_I64(vd.pvc_ok, 1);
	CHECK(!vd.bad && vd.ec2_mismatch == NULL);
	apply_totals_add(&t, &r, &vd);
	apply_verdict_release(&vd);

	/* EC2 not read: never a pass */
	apply_verify_row(&r, NULL, 0, &p, &vd);
	CHECK_I64(vd.verified, -1);
	CHECK(!vd.bad);
	apply_verdict_release(&vd);

	/* the PVC names another class: a mismatch, with the note naming both */
	p.st.current_class = "gp3-3000-250";
	apply_verify_row(&r, &v, 1, &p, &vd);
	CHECK_I64(vd.verified, 0);
	CHECK_I64(vd.pvc_ok, 0);
	CHECK_STR(vd.pvc_note.s, "PVC apps/data names class 'gp3-3000-250' as current, not 'gp3-3000-125'");
	apply_totals_add(&t, &r, &vd);
	apply_verdict_release(&vd);

	/* EC2 differs from the target */
	p.st.current_class = "gp3-3000-125";
	v.iops = 4000;
	apply_verify_row(&r, &v, 1, &p, &vd);
	CHECK_STR(vd.ec2_mismatch, "EC2 configuration differs from the target");
	CHECK_I64(vd.verified, 0);
	apply_verdict_release(&vd);
	v.iops = 3000;

	/* the cluster cannot be read: unverified, not a mismatch */
	p.lookup = PVC_UNREACHABLE;
	apply_verify_row(&r, &v, 1, &p, &vd);
	CHECK_I64(vd.verified, -1);
	CHECK_I64(vd.pvc_unverified, 1);
	CHECK_STR(vd.pvc_note.s, "PVC apps/data not verified: cluster 'prod' cannot be read");
	apply_totals_add(&t, &r, &vd);
	apply_verdict_release(&vd);

	/* in flight: EC2's progress, nothing verified */
	struct volume_mod m;
	memset(&m, 0, sizeof m);
	m.state = "modifying";
	m.progress = 45;
	m.start_time = 1764590400;
	volume_add_mod(&v, &m);
	p.lookup = PVC_READ;
	p.st.modify_status = "InProgress";
	row_init(&r, METHOD_VAC, APPLY_MODIFYING);
	apply_verify_row(&r, &v, 1, &p, &vd);
	CHECK_I64(vd.progress, 45);
	CHECK_I64(vd.verified, -1);
	CHECK_STR(vd.pvc_note.s, "PVC apps/data: InProgress");
	apply_totals_add(&t, &r, &vd);
	apply_verdict_release(&vd);

	/* annotation route: the annotations are checked */
	row_init(&r, METHOD_ANNOTATION, APPLY_COMPLETED);
	p.st.modify_status = NULL;
	p.st.ann_type = "gp3";
	p.st.ann_iops = "3000";
	p.st.ann_tput = "250";
	struct volume done;
	memset(&done, 0, sizeof done);
	done.type = EBS_GP3;
	done.iops = 3000;
	done.throughput = 125;
	apply_verify_row(&r, &done, 1, &p, &vd);
	CHECK_I64(vd.pvc_ok, 0);
	CHECK_STR(vd.pvc_note.s, "PVC apps/data annotations (gp3 3000/250) are not the target");
	apply_verdict_release(&vd);

	/* ec2 method: no PVC side at all */
	row_init(&r, METHOD_EC2, APPLY_PLANNED);
	CHECK(!apply_row_kube(&r));
	apply_verify_row(&r, &done, 1, &p, &vd);
	CHECK_I64(vd.pvc_ok, -1);
	CHECK_STR(vd.pvc_note.s, "");
	apply_totals_add(&t, &r, &vd);
	apply_verdict_release(&vd);

	CHECK_I64(t.completed, 3);
	CHECK_I64(t.in_flight, 1);
	CHECK_I64(t.planned, 1);
	CHECK_I64(t.mismatch, 1);
	CHECK_I64(t.pvc_unverified, 1);
	CHECK_I64(t.realized, 4 * MICRO_PER_USD); /* the two completed rows that do not mismatch */
	volume_release(&v);
}

int main(void)
{
	test_state_names();
	test_method_names();
	test_vac_name();
	test_verify();
	return tap_done();
}
