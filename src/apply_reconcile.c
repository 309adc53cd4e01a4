/*
 * apply_reconcile.c - brings apply's unfinished ledger rows up to date (invariant 2 of apply.c):
 * a row in submitted, modifying or optimizing (or deferred while the CSI driver or the sidecar
 * retries by itself) is moved on from EC2's DescribeVolumesModifications and, on the Kubernetes
 * routes, the PVC and its events. apply runs it first on every run, while it settles the
 * Kubernetes routes and for --wait; status runs it too (apply_reconcile), in the observe-only mode.
 *
 * Entry points: apply_reconcile (apply.h: status's call); apply_reconcile_row,
 * apply_reconcile_rows, apply_wait_for, apply_refused_until (apply_internal.h: apply.c's).
 *
 * Invariants: reconciling only moves a row forward (apply_state_may_follow, assert()ed): a
 * settled row is never reconciled, only a submitted row EC2 never received goes back to planned
 * (and never for status). In the observe-only mode (status, without the apply lock) a row never
 * moves back in rank and each write is made only over the row as it was read
 * (ledger_apply_save_if), so a running apply's own write wins.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/apply.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ebs.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_pvc.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/modify_refusal.h"
#include "ebsmigrate/stop.h"
#include "apply_internal.h"

#define LEFT_AS_WAS "nothing was changed: the ledger is brought up to date on the next run"

/* The sidecar reports failures only as Warning events on the PVC (reason
 * VolumeModificationFailed). The latest one at or after since, or NULL; *at: its time. */
static char *annotation_failure(struct kube_conn *c, const char *ns, const char *name, time_t since, time_t *at)
{
	struct buf path = BUF_INIT, q = BUF_INIT, body = BUF_INIT, err = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/events", ns);
	buf_adds(&q, "fieldSelector=");
	struct buf sel = BUF_INIT;
	buf_addf(&sel, "involvedObject.kind=PersistentVolumeClaim,involvedObject.name=%s,reason=VolumeModificationFailed",
		 name);
	buf_add_urlencoded(&q, sel.s, 1);
	char *msg = NULL;
	time_t best = 0;
	if (kube_get(&c->kc, path.s, q.s, &body, NULL, &err) == 0) {
		cJSON *j = cJSON_ParseWithLength(body.s, body.len);
		const cJSON *ev;
		cJSON_ArrayForEach(ev, jsonx_get(j, "items"))
		{
			const char *ts = jsonx_str(ev, "lastTimestamp"), *m = jsonx_str(ev, "message");
			time_t t = 0;
			if (!ts || !m || em_parse_time(ts, &t) || t + CLOCK_SKEW_S < since || (msg && t < best))
				continue;
			free(msg);
			msg = xstrdup(m);
			best = t;
		}
		cJSON_Delete(j);
	}
	buf_release(&path), buf_release(&q), buf_release(&sel), buf_release(&body), buf_release(&err);
	*at = best;
	return msg;
}

/* apply (holding the lock) saves unconditionally; status saves only over the row it read. */
static int save_observed(struct ledger *l, struct apply_row *row, enum apply_state was, time_t was_submitted,
			 const struct apply_options *o, const char *detail, struct buf *err)
{
	if (!o->observe_only)
		return ledger_apply_save(l, row, detail, err);
	return ledger_apply_save_if(l, row, was, was_submitted, detail, err);
}

/* A Kubernetes-route row deferred because EC2 refused the driver's (or sidecar's) ModifyVolume
 * for now: the PVC still asks for the target and the driver retries on its own, so every run (and
 * status) follows it like a row in flight, and it moves on when a retry is accepted. */
static int awaits_driver(const struct apply_row *r)
{
	return r->state == APPLY_DEFERRED && r->submitted_at && r->method != METHOD_EC2;
}

/* When a volume whose ModifyVolume met VolumeModificationRateExceeded at refused_at may go again
 * (0 when that time has already passed: the driver's next retry may be accepted). History: the
 * ledger's starts of this volume (not the refused submission itself) and EC2's latest
 * modification's start (latest_start, 0 = none). */
time_t apply_refused_until(struct ledger *l, const struct apply_row *row, time_t latest_start,
			   const struct rate_refusal *rr, time_t refused_at, enum rate_refusal_basis *basis)
{
	time_t *starts = NULL, now = em_now();
	size_t n = 0, kept = 0;
	struct buf lerr = BUF_INIT;
	if (ledger_apply_starts(l, row->volume_id, &starts, &n, &lerr))
		n = 0; /* history unreadable: the message, or the refusal + 24 h */
	buf_release(&lerr);
	for (size_t i = 0; i < n; i++)
		if (starts[i] != row->submitted_at)
			starts[kept++] = starts[i];
	if (latest_start) {
		starts = xrealloc(starts, (kept + 1) * sizeof *starts);
		starts[kept++] = latest_start;
	}
	time_t until = rate_refusal_until(rr, refused_at ? refused_at : now, starts, kept, basis);
	free(starts);
	return until > now ? until : 0;
}

/* Invariant 2: bring one unfinished row up to date from EC2. *progress (may be NULL): EC2's
 * percentage of the row's modification, -1 when none is known to be running. */
int apply_reconcile_row(struct ledger *l, struct aws_client *aws, struct kube_conns *kcs, struct apply_row *row,
			struct apply_result *res, const struct apply_options *o, int64_t *progress, struct buf *err)
{
	if (progress)
		*progress = -1;
	struct fresh fr;
	struct buf rerr = BUF_INIT;
	int rc = apply_client_of(&aws, aws, o, row->volume_id, row->account, o->observe_only ? &rerr : err);
	if (rc && o->observe_only) { /* status: the row stays as recorded, never judged with another account's view */
		if (!res->accounts_warning)
			res->accounts_warning = buf_detach(&rerr);
		buf_release(&rerr);
		return 0;
	}
	if (rc) {
		buf_release(&rerr);
		return rc;
	}
	int stopped;
	rc = apply_read_fresh_or_stop(aws, row->region, row->volume_id, LEFT_AS_WAS, &fr, &stopped, &rerr, err);
	if (rc && !stopped)
		em_err(err, rc, "%s", rerr.s);
	buf_release(&rerr);
	if (rc)
		return rc;
	struct volume *v = fleet_find(&fr.f, row->volume_id);
	const struct volume_mod *m = v ? volume_latest_mod(v) : NULL;
	enum apply_state was = row->state;
	time_t was_submitted = row->submitted_at;
	int matches_target = m && m->target_type == ebs_type_parse(row->target_type) && m->target_iops == row->target_iops &&
			     (!row->target_throughput || m->target_throughput == row->target_throughput);
	int sent = matches_target && row->submitted_at && m->start_time >= row->submitted_at - CLOCK_SKEW_S;
	if (row->state != APPLY_SUBMITTED && row->state != APPLY_DEFERRED)
		sent = matches_target; /* already known to have started */
	int pvc_gone = 0, infeasible = 0, patched = 0;
	char *driver_error = NULL;
	time_t driver_error_at = 0;
	int ann = row->method == METHOD_ANNOTATION;
	if (!o->no_kube && modify_method_kube(row->method) && row->cluster && row->namespace_ &&
	    row->pvc) {
		/* The patch was received when the PVC names the class (or carries the annotations);
		 * EC2 tells how far it got. */
		struct kube_conn *kc = kube_conn_for(kcs, row->cluster);
		struct pvc_state ps;
		struct buf kerr = BUF_INIT;
		int krc = kc->ok ? kube_pvc_read(kc, row->namespace_, row->pvc, &ps, &kerr) : EM_ENET;
		if (krc == EM_ENOTFOUND) {
			pvc_gone = 1;
		} else if (krc == 0) {
			patched = ann ? kube_pvc_annotations_match(&ps, row->target_type, row->target_iops, row->target_throughput)
				      : ps.spec_class && row->target_class && strcmp(ps.spec_class, row->target_class) == 0;
			if (!patched && row->state == APPLY_SUBMITTED)
				sent = 0;
			else if (patched && !ann && ps.modify_status && strcmp(ps.modify_status, "Infeasible") == 0)
				infeasible = 1;
			else if (patched && !ann && ps.error)
				driver_error = xstrdup(ps.error), driver_error_at = ps.error_time;
			else if (patched && ann && !sent &&
				 (driver_error = annotation_failure(kc, row->namespace_, row->pvc, row->submitted_at,
								    &driver_error_at)) &&
				 strstr(driver_error, "InvalidArgument"))
				infeasible = 1; /* the sidecar refuses these parameters: retrying cannot help */
			pvc_state_release(&ps);
		}
		buf_release(&kerr);
	}
	/* EC2 refused the driver's ModifyVolume for now (4 per 24 h): deferred until it may go, not
	 * in flight. The driver keeps retrying by itself; nothing is sent from here. */
	struct rate_refusal rr;
	enum rate_refusal_basis basis = RATE_UNTIL_DEFAULT;
	time_t refused_until = 0, was_eligible = row->eligible_at;
	if (driver_error && !sent && !infeasible && v && rate_refusal_parse(driver_error, &rr))
		refused_until = apply_refused_until(l, row, m ? m->start_time : 0, &rr, driver_error_at, &basis);
	struct buf refusal = BUF_INIT;
	if (refused_until) {
		char ts[21];
		em_format_time(refused_until, ts);
		buf_addf(&refusal, "until %s (%s): EC2 refused the %s's ModifyVolume: %s", ts, rate_refusal_basis_name(basis),
			 ann ? "volume-modifier sidecar" : "CSI driver", driver_error);
	}
	if (pvc_gone && !sent) {
		row->state = APPLY_FAILED;
		apply_set_str(&row->error_code, "PVCNotFound");
		apply_set_str(&row->error_message, "the PersistentVolumeClaim was deleted");
	} else if (infeasible) {
		row->state = APPLY_FAILED;
		apply_set_str(&row->error_code, "Infeasible");
		apply_set_str(&row->error_message,
			      driver_error
				      ? driver_error
				      : "the CSI driver marked the modification Infeasible (see the PVC's events)");
	} else if (!v) {
		row->state = APPLY_FAILED;
		apply_set_str(&row->error_code, "InvalidVolume.NotFound");
		apply_set_str(&row->error_message, "the volume no longer exists");
	} else if (sent) {
		if (progress)
			*progress = m->progress;
		apply_state_from_ec2(m->state, &row->state);
		if (!row->started_at)
			row->started_at = m->start_time;
		if (m->state == MOD_COMPLETED)
			row->completed_at = m->end_time ? m->end_time : em_now();
		if (m->state == MOD_FAILED) {
			apply_set_str(&row->error_code, "ModificationFailed");
			apply_set_str(&row->error_message,
				      m->status_message ? m->status_message : "the modification failed");
		}
	} else if (v->type == ebs_type_parse(row->target_type) && v->iops == row->target_iops &&
		   v->throughput == row->target_throughput) {
		row->state = APPLY_COMPLETED;
		row->completed_at = em_now();
	} else if (row->state == APPLY_SUBMITTED && !patched && !o->observe_only) {
		/* EC2 never received it (a crash between the ledger write and the call): resend is safe.
		 * Not for status (observe_only): without the apply lock, the call may be on its way. */
		row->state = APPLY_PLANNED;
		row->submitted_at = 0;
	} else if (refused_until) {
		row->state = APPLY_DEFERRED;
		row->eligible_at = refused_until;
		apply_set_str(&row->error_code, "VolumeModificationRateExceeded");
		apply_set_str(&row->error_message, driver_error);
		if (was == APPLY_DEFERRED && was_eligible != refused_until && !o->dry_run)
			rc = save_observed(l, row, was, was_submitted, o, refusal.s, err);
		if (rc == EM_ECONFLICT && o->observe_only) { /* a concurrent apply moved the row: its write stands */
			rc = 0;
			buf_reset(err);
		}
	} else if (driver_error) {
		/* The PVC names the class but the driver's ModifyVolume keeps failing: surface it. */
		int changed = !row->error_message || strcmp(row->error_message, driver_error) != 0;
		apply_set_str(&row->error_code, "ModifyVolumeError");
		apply_set_str(&row->error_message, driver_error);
		if (changed && !o->dry_run)
			rc = save_observed(l, row, was, was_submitted, o, "CSI driver reports an error", err);
		if (rc == EM_ECONFLICT && o->observe_only) { /* a concurrent apply moved the row: its write stands */
			rc = 0;
			buf_reset(err);
		}
	}
	free(driver_error);
	if (was == APPLY_DEFERRED && row->state != APPLY_DEFERRED && row->state != APPLY_FAILED) {
		/* the driver's retry was accepted (or the volume reached the target): the refusal is over */
		row->eligible_at = 0;
		apply_set_str(&row->error_code, NULL);
		apply_set_str(&row->error_message, NULL);
	}
	if (o->observe_only && apply_state_rank(row->state) < apply_state_rank(was) && !refused_until) {
		/* e.g. a newer modification to the same target, made elsewhere, still modifying: status
		 * never moves a row back */
		row->state = was;
	}
	/* ARCHITECTURE.md invariant 3: reconciling moves a row forward only (a settled row is never
	 * reconciled; only a submitted one EC2 never received goes back to planned) */
	assert(apply_state_may_follow(was, row->state));
	if (was != row->state) {
		if (!o->dry_run)
			rc = save_observed(l, row, was, was_submitted, o,
					   refused_until    ? refusal.s
					   : o->observe_only ? "observed by status (DescribeVolumesModifications, PVC)"
							     : "reconciled from DescribeVolumesModifications",
					   err);
		if (rc == EM_ECONFLICT && o->observe_only) { /* a concurrent apply moved the row: its write stands */
			rc = 0;
			buf_reset(err);
			buf_release(&refusal);
			apply_fresh_release(&fr);
			return 0;
		}
		apply_say(o, "%s: %s -> %s (reconciled)", row->volume_id, apply_state_name(was),
			  apply_state_name(row->state));
		/* A failure found here is this run's finding: counted, so the exit code says so. */
		if (refused_until)
			apply_outcome_deferred(res, row->volume_id, refused_until, refusal.s);
		else if (row->state == APPLY_FAILED)
			apply_outcome(res, row->volume_id, OUT_FAILED, 0, "%s -> failed: %s: %s", apply_state_name(was),
				      row->error_code ? row->error_code : "failed",
				      row->error_message ? row->error_message : "");
		else
			apply_outcome(res, row->volume_id,
				      row->state == APPLY_COMPLETED ? OUT_COMPLETED : OUT_RECONCILED, 0, "%s -> %s",
				      apply_state_name(was), apply_state_name(row->state));
	}
	buf_release(&refusal);
	apply_fresh_release(&fr);
	return rc;
}

int apply_wait_for(struct ledger *l, struct aws_client *aws, struct kube_conns *kcs, const struct apply_options *o,
		   struct apply_result *res, struct buf *err)
{
	/* Wall-clock time, not em_now(): a fixed --now must not make the timeout unreachable. */
	time_t deadline = time(NULL) + (o->wait_timeout_s > 0 ? o->wait_timeout_s : 6 * 3600);
	int64_t poll = o->poll_s > 0 ? o->poll_s : 15;
	for (;;) {
		struct apply_row *rows = NULL;
		size_t n = 0, open_rows = 0;
		struct buf line = BUF_INIT;
		int rc = ledger_apply_list(l, res->plan_id, &rows, &n, err);
		for (size_t i = 0; i < n && !rc; i++) {
			if (!apply_state_open(rows[i].state))
				continue;
			int64_t pct = -1;
			rc = apply_reconcile_row(l, aws, kcs, &rows[i], res, o, &pct, err);
			if (!apply_state_open(rows[i].state))
				continue;
			/* progress: "vol-… modifying 45 %" for the first few, then a count */
			if (++open_rows <= 5)
				buf_addf(&line, "%s%s %s", open_rows > 1 ? ", " : ": ", rows[i].volume_id,
					 apply_state_name(rows[i].state));
			if (open_rows <= 5 && pct >= 0)
				buf_addf(&line, " %lld %%", (long long)pct);
		}
		apply_rows_free(rows, n);
		if (open_rows > 5)
			buf_addf(&line, ", and %zu more", open_rows - 5);
		if (rc || !open_rows || em_now() >= deadline)
			progress_report(o->progress, o->progress_ctx, PROGRESS_DONE, "apply --wait", "modifications",
					n - open_rows, n);
		if (rc || !open_rows || stop_requested()) { /* a stop: what is in flight is reconciled next run */
			buf_release(&line);
			return rc;
		}
		if (time(NULL) >= deadline) {
			buf_release(&line);
			res->wait_timed_out = 1;
			return em_err(err, EM_ELIMIT, "--wait: %zu modification(s) still in flight after the timeout", open_rows);
		}
		apply_say(o, "waiting: %zu modification(s) in flight%s", open_rows, line.s);
		progress_report(o->progress, o->progress_ctx, PROGRESS_STEP, "apply --wait", "modifications",
				n - open_rows, n);
		buf_release(&line);
		sleep((unsigned)poll);
	}
}

int apply_reconcile_rows(struct ledger *l, struct aws_client *aws, struct kube_conns *kcs, struct apply_row *rows,
			 size_t n, struct apply_result *res, const struct apply_options *o, struct buf *err)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (apply_state_open(rows[i].state) || awaits_driver(&rows[i]))
			rc = apply_reconcile_row(l, aws, kcs, &rows[i], res, o, NULL, err);
	return rc;
}

int apply_reconcile(struct ledger *l, struct aws_client *aws, struct apply_row *rows, size_t n,
		    const struct apply_options *o, struct apply_result *res, struct buf *err)
{
	struct kube_conns kcs = {NULL, 0, o->kubeconfig};
	int rc = apply_reconcile_rows(l, aws, &kcs, rows, n, res, o, err);
	kube_conns_release(&kcs);
	return rc;
}
