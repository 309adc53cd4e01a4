/*
 * status_verify.c - status's verification of an apply ledger row: whether a completed row's volume
 * is at its target in EC2 and its PVC names the class (or carries the annotations) apply patched
 * it with; what to say about a PVC that is gone or a cluster that cannot be read; the totals of a
 * status view, which `metrics` counts the same way.
 *
 * Entry points: apply_row_kube, apply_row_patched, pvc_lookup_name, pvc_live_release,
 * apply_verify_row, apply_verdict_release, apply_totals_add.
 *
 * Invariants: pure (no I/O): status reads EC2 and the PVCs, this module judges. A check that could
 * not be made is unverified, never a pass.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/status_verify.h"
#include "ebsmigrate/volume.h"

static const char *const lookup_names[] = {"not-read", "read", "not-found", "unreachable"};

const char *pvc_lookup_name(enum pvc_lookup l)
{
	return lookup_names[l];
}

void pvc_live_release(struct pvc_live *p)
{
	pvc_state_release(&p->st);
	free(p->why);
	p->why = NULL;
}

int apply_row_kube(const struct apply_row *r)
{
	return modify_method_kube(r->method) && r->cluster && r->namespace_ && r->pvc;
}

int apply_row_patched(const struct apply_row *r)
{
	return r->method == METHOD_ANNOTATION ? r->submitted_at != 0 : r->target_class != NULL;
}

/* The PVC side of a verdict: sets pvc_ok, pvc_unverified and the note. */
static void verify_pvc(const struct apply_row *r, const struct pvc_live *p, struct apply_verdict *vd)
{
	struct buf *note = &vd->pvc_note;
	int completed = vd->completed;
	if (!apply_row_kube(r))
		return;
	if (p->lookup == PVC_NOT_FOUND) {
		buf_addf(note, "PVC %s/%s was deleted", r->namespace_, r->pvc);
		if (completed && apply_row_patched(r))
			vd->pvc_ok = 0;
	} else if (p->lookup == PVC_UNREACHABLE) {
		buf_addf(note, "PVC %s/%s not verified: cluster '%s' cannot be read", r->namespace_, r->pvc, r->cluster);
		vd->pvc_unverified = completed && apply_row_patched(r);
	} else if (p->lookup == PVC_READ && completed && r->method == METHOD_ANNOTATION && apply_row_patched(r)) {
		vd->pvc_ok = kube_pvc_annotations_match(&p->st, r->target_type, r->target_iops, r->target_throughput);
		if (!vd->pvc_ok)
			buf_addf(note, "PVC %s/%s annotations (%s %s/%s) are not the target", r->namespace_, r->pvc,
				 p->st.ann_type ? p->st.ann_type : "-", p->st.ann_iops ? p->st.ann_iops : "-",
				 p->st.ann_tput ? p->st.ann_tput : "-");
	} else if (p->lookup == PVC_READ && completed && r->target_class) {
		const char *cur = p->st.current_class;
		vd->pvc_ok = cur && strcmp(cur, r->target_class) == 0;
		if (!vd->pvc_ok && cur)
			buf_addf(note, "PVC %s/%s names class '%s' as current, not '%s'", r->namespace_, r->pvc, cur,
				 r->target_class);
		else if (!vd->pvc_ok)
			buf_addf(note, "PVC %s/%s names no current class, not '%s'", r->namespace_, r->pvc, r->target_class);
	} else if (p->lookup == PVC_READ && p->st.modify_status) {
		buf_addf(note, "PVC %s/%s: %s", r->namespace_, r->pvc, p->st.modify_status);
	}
}

void apply_verify_row(const struct apply_row *r, const struct volume *v, int ec2_read, const struct pvc_live *p,
		      struct apply_verdict *vd)
{
	memset(vd, 0, sizeof *vd);
	buf_init(&vd->pvc_note);
	vd->progress = -1;
	vd->pvc_ok = -1;
	vd->completed = r->state == APPLY_COMPLETED;
	const struct volume_mod *m = v ? volume_latest_mod(v) : NULL;
	if (m && apply_state_open(r->state))
		vd->progress = m->progress;
	else if (vd->completed)
		vd->progress = 100;
	if (vd->completed && ec2_read) {
		if (!v)
			vd->ec2_mismatch = "volume not found in EC2";
		else if (v->type != ebs_type_parse(r->target_type) || v->iops != r->target_iops ||
			 v->throughput != r->target_throughput)
			vd->ec2_mismatch = "EC2 configuration differs from the target";
	}
	verify_pvc(r, p, vd);
	vd->bad = vd->ec2_mismatch || vd->pvc_ok == 0;
	if (!vd->completed)
		vd->verified = -1;
	else if (vd->bad)
		vd->verified = 0;
	else
		vd->verified = !ec2_read || vd->pvc_unverified ? -1 : 1;
}

void apply_verdict_release(struct apply_verdict *vd)
{
	buf_release(&vd->pvc_note);
}

void apply_totals_add(struct apply_totals *t, const struct apply_row *r, const struct apply_verdict *vd)
{
	if (vd->bad)
		t->mismatch++;
	t->pvc_unverified += vd->pvc_unverified;
	if (r->state == APPLY_PLANNED) {
		t->planned++;
	} else if (apply_state_open(r->state)) {
		t->in_flight++;
	} else if (r->state == APPLY_COMPLETED) {
		t->completed++;
		if (!vd->bad)
			t->realized += r->current_monthly - r->target_monthly;
	} else if (r->state == APPLY_DEFERRED) {
		t->deferred++;
	} else if (r->state == APPLY_FAILED) {
		t->failed++;
	}
}
