/*
 * apply_state.c - apply's typed states: the name tables of enum apply_state and enum
 * modify_method (the strings the ledger stores and the outputs show), the VolumeAttributesClass
 * name rule, and the verification of a ledger row against EC2 and its PVC that status shows.
 *
 * Entry points: apply_state_name/parse/from_ec2/open/rank, modify_method_name/parse/kube, apply_vac_name,
 * apply_row_kube, apply_row_patched, apply_verify_row, apply_totals_add.
 *
 * Invariants: each name table has exactly one entry per enumerator (checked at compile time);
 * verification is pure (no I/O): status reads EC2 and the PVCs, this module judges.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ebs.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/volume.h"

static const char *const state_names[] = {"planned",    "deferred",  "submitted", "modifying",
					  "optimizing", "completed", "failed"};
_Static_assert(sizeof state_names / sizeof state_names[0] == APPLY_STATE_COUNT, "one name per apply_state");

static const char *const method_names[] = {"auto", "vac", "annotation", "ec2"};
_Static_assert(sizeof method_names / sizeof method_names[0] == MODIFY_METHOD_COUNT, "one name per modify_method");

static const char *const lookup_names[] = {"not-read", "read", "not-found", "unreachable"};

const char *apply_state_name(enum apply_state s)
{
	return (unsigned)s < APPLY_STATE_COUNT ? state_names[s] : "unknown";
}

/* The index of s in names (n entries), -1 when absent (or NULL). */
static int name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

int apply_state_parse(const char *s, enum apply_state *out)
{
	int i = name_index(state_names, APPLY_STATE_COUNT, s);
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

const char *modify_method_name(enum modify_method m)
{
	return (unsigned)m < MODIFY_METHOD_COUNT ? method_names[m] : "unknown";
}

int modify_method_parse(const char *s, enum modify_method *out)
{
	int i = name_index(method_names, MODIFY_METHOD_COUNT, s);
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

/* ---- verification ---- */

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
