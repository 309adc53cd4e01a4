/* test_status_verify.c - the verification status shows for a ledger row (status_verify.c): a
 * completed row against EC2 and its PVC, what cannot be checked, and the totals of a view. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/status_verify.h"
#include "ebsmigrate/volume.h"
#include "tap.h"

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
	m.state = MOD_MODIFYING;
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
	test_verify();
	return tap_done();
}
