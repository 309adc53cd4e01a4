/*
 * apply_support.c - what apply.c (select, decide, record, send) and apply_reconcile.c (the
 * reconciliation of unfinished rows) both use, below them both so calls go one way (apply.c ->
 * apply_reconcile.c -> apply_support.c): the run's outcomes and progress lines, the client per
 * account (apply.c invariant 7), the fresh EC2 read of one volume, and the refusals about the
 * principal that stop a run (invariant 5: apply_principal_refusal, apply_stop_for_ec2).
 *
 * Entry points: apply_internal.h.
 *
 * Invariants: an outcome is counted once in the result's totals (a deferral found for a volume
 * this run reported submitted replaces that outcome); nothing here writes the ledger.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/apply.h"
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/common.h"
#include "apply_internal.h"

static void count_outcome(struct apply_result *r, enum apply_outcome_kind k, int delta)
{
	size_t *c = NULL;
	switch (k) {
	case OUT_SUBMITTED: c = &r->submitted; break;
	case OUT_WOULD_SUBMIT: c = &r->would_submit; break;
	case OUT_DEFERRED: c = &r->deferred; break;
	case OUT_SKIPPED: c = &r->skipped; break;
	case OUT_FAILED: c = &r->failed; break;
	case OUT_UNKNOWN: c = &r->unknown; break;
	case OUT_COMPLETED: c = &r->completed; break;
	case OUT_RECONCILED: break;
	}
	if (c)
		*c = (size_t)((ptrdiff_t)*c + delta);
}

void apply_outcome(struct apply_result *r, const char *vid, enum apply_outcome_kind k, time_t eligible, const char *fmt,
		   ...)
{
	XGROW(r->v, r->n, r->alloc);
	struct apply_outcome *o = &r->v[r->n++];
	o->volume_id = xstrdup(vid);
	o->kind = k;
	o->eligible_at = eligible;
	va_list ap;
	va_start(ap, fmt);
	o->detail = xstrvfmt(fmt, ap);
	va_end(ap);
	count_outcome(r, k, 1);
}

/* A volume this run reported submitted turned out refused for now (the CSI driver's ModifyVolume
 * met VolumeModificationRateExceeded while apply waited for it): that outcome becomes the
 * deferral, so the volume is reported once, as deferred, never as submitted. Otherwise (found by
 * a later run or by status) the deferral is a new outcome. */
void apply_outcome_deferred(struct apply_result *r, const char *vid, time_t eligible, const char *detail)
{
	for (size_t i = 0; i < r->n; i++) {
		struct apply_outcome *o = &r->v[i];
		if (o->kind == OUT_SUBMITTED && strcmp(o->volume_id, vid) == 0) {
			count_outcome(r, o->kind, -1);
			o->kind = OUT_DEFERRED;
			o->eligible_at = eligible;
			free(o->detail);
			o->detail = xstrdup(detail);
			count_outcome(r, o->kind, 1);
			return;
		}
	}
	apply_outcome(r, vid, OUT_DEFERRED, eligible, "%s", detail);
}

void apply_say(const struct apply_options *o, const char *fmt, ...)
{
	if (!o->say)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *line = xstrvfmt(fmt, ap);
	va_end(ap);
	o->say(o->say_ctx, line);
	free(line);
}

/* *action (may be NULL) names the EC2 call that failed. */
static int read_fresh(struct aws_client *aws, const char *region, const char *vid, struct fresh *fr,
		      const char **action, struct buf *err)
{
	fleet_init(&fr->f);
	memset(&fr->mods, 0, sizeof fr->mods);
	const char *ids[1] = {vid};
	const char *unused;
	if (!action)
		action = &unused;
	*action = "DescribeVolumes";
	int rc = aws_ec2_describe_volumes_by_id(aws, region, ids, 1, &fr->f, err);
	if (!rc) {
		*action = "DescribeVolumesModifications";
		rc = aws_ec2_describe_modifications_by_id(aws, region, ids, 1, &fr->mods, err);
	}
	if (!rc)
		aws_ec2_attach_mods(&fr->f, &fr->mods);
	return rc;
}

void apply_fresh_release(struct fresh *fr)
{
	fleet_release(&fr->f);
	ec2_mod_list_release(&fr->mods);
}

/* The client acting in account (invariant 7): o->aws_for's, else the one client. */
int apply_client_of(struct aws_client **out, struct aws_client *aws, const struct apply_options *o,
		    const char *volume_id, const char *account, struct buf *err)
{
	*out = aws;
	if (!o->aws_for)
		return 0;
	struct buf e = BUF_INIT;
	*out = o->aws_for(o->aws_for_ctx, account, &e);
	int rc = *out ? 0 : em_err(err, EM_EAUTH, "volume %s (account %s): %s; stopped here, the volume stays planned",
				   volume_id, account ? account : "unknown", e.s ? e.s : "no credentials");
	buf_release(&e);
	return rc;
}

void apply_set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = xstrdup(s);
}

/* ---- refusals about the principal (invariant 5) ---- */

static int has_kms(const char *code)
{
	for (const char *p = code; p && p[0] && p[1] && p[2]; p++)
		if ((p[0] == 'K' || p[0] == 'k') && (p[1] == 'M' || p[1] == 'm') && (p[2] == 'S' || p[2] == 's'))
			return 1;
	return 0;
}

/* Whether an error is about the principal or the account rather than the volume: credentials
 * or authorization refused (IAM, a service control policy), a KMS key the principal cannot
 * use, throttling that outlasted the retries (or hit a call that is never retried). Every other
 * volume would meet it too, so the run stops at the first one. */
int apply_principal_refusal(int rc, const char *code, const char *msg)
{
	return rc == EM_EAUTH || rc == EM_ETHROTTLED || has_kms(code) || (!code && msg && strstr(msg, ": KMS"));
}

/* The EC2 actions apply calls and the `ebsmigrate iam-policy --for apply` statement that grants
 * each (cmd_policy.c; case 0843 checks they agree). */
static const char *iam_statement(const char *action)
{
	return strcmp(action, "ModifyVolume") == 0 ? "EbsmigrateModifyVolumes" : "EbsmigrateReadVolumes";
}

/* Appends to err: "apply stopped at volume 'V': WHY; what to do; LEFT" (why: the service's
 * message, code: AWS's error code when known, left: what became of the rows) and returns rc. */
int apply_stop_for_ec2(struct buf *err, int rc, const char *vid, const char *action, const char *code, const char *why,
		       const char *left)
{
	em_err(err, rc, "apply stopped at volume '%s': %s; ", vid, why);
	if (has_kms(code) || (!code && strstr(why, ": KMS")))
		buf_adds(err, "the volume's KMS key cannot be used by this principal (see the key's policy and the principal's "
			      "kms: permissions); fix that and run apply again");
	else if (rc == EM_ETHROTTLED)
		buf_adds(err, "EC2 is throttling this account's requests (other tools may share its request rate): run apply "
			      "again later");
	else if (strstr(why, "UnauthorizedOperation") || strstr(why, "AccessDenied"))
		buf_addf(err, "the principal lacks ec2:%s%s: grant it (statement '%s' of 'ebsmigrate iam-policy --for apply') "
			      "and run apply again",
			 action, strstr(why, "explicit deny") ? " (an explicit deny, such as a service control policy, wins over any grant)" : "",
			 iam_statement(action));
	else
		buf_adds(err, "the AWS credentials were refused: check them (profile, keys, session) and run apply again");
	buf_addf(err, "; %s", left);
	return rc;
}

/* read_fresh for the volume a row is about, fr released on failure. A refusal about the
 * principal (apply_principal_refusal) becomes the run's stop (apply_stop_for_ec2 into err, left
 * saying where the rows stay) and sets *stopped; any other failure leaves its message in rerr
 * for the caller to record as its step requires. */
int apply_read_fresh_or_stop(struct aws_client *aws, const char *region, const char *vid, const char *left,
			     struct fresh *fr, int *stopped, struct buf *rerr, struct buf *err)
{
	const char *action = NULL;
	int rc = read_fresh(aws, region, vid, fr, &action, rerr);
	*stopped = rc && apply_principal_refusal(rc, NULL, rerr->s);
	if (*stopped)
		rc = apply_stop_for_ec2(err, rc, vid, action, NULL, rerr->s, left);
	if (rc)
		apply_fresh_release(fr);
	return rc;
}
