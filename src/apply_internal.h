/*
 * apply_internal.h - what apply.c (select, decide, record, send) and apply_reconcile.c (bring
 * unfinished ledger rows up to date, which status also runs) share: apply_support.c's helpers
 * (outcomes, progress lines, the client per account, the fresh EC2 read, refusals about the
 * principal) and apply_reconcile.c's entry points for apply.c. Calls go one way: apply.c ->
 * apply_reconcile.c -> apply_support.c. Private to the three files; apply.h is the module's
 * interface.
 *
 * Ownership: as each declaration says; nothing here keeps state between calls.
 */
#ifndef EBSMIGRATE_APPLY_INTERNAL_H
#define EBSMIGRATE_APPLY_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include "ebsmigrate/apply.h"
#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/kube_pvc.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/modify_refusal.h"

/* How far EC2's clock (a modification's start, an event's time) may be behind ours. */
#define CLOCK_SKEW_S 300

/* Appends one outcome (its detail formatted) to r and counts it. */
void apply_outcome(struct apply_result *r, const char *vid, enum apply_outcome_kind k, time_t eligible,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The volume's deferral: replaces this run's "submitted" outcome for it, else a new outcome. */
void apply_outcome_deferred(struct apply_result *r, const char *vid, time_t eligible, const char *detail);
/* One progress line to o->say (nothing when it is NULL). */
void apply_say(const struct apply_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* free(*dst), then a copy of s (NULL stays NULL). */
void apply_set_str(char **dst, const char *s);

/* What a stop leaves behind, for the end of its message: the rows stay planned. */
#define LEFT_PLANNED "this volume and the ones not tried stay planned"

/* Whether a failure is about the principal rather than the volume (authorization, credentials,
 * KMS, throttling): the run stops at the first one (invariant 5 of apply.c). code: AWS's error
 * code when known. */
int apply_principal_refusal(int rc, const char *code, const char *msg);
/* Appends to err: "apply stopped at volume 'V': WHY; what to do; LEFT" (action: the EC2 call,
 * code: AWS's error code when known, left: what became of the rows) and returns rc. */
int apply_stop_for_ec2(struct buf *err, int rc, const char *vid, const char *action, const char *code, const char *why,
		       const char *left);

/* The client acting in account (invariant 7 of apply.c): o->aws_for's, else aws. */
int apply_client_of(struct aws_client **out, struct aws_client *aws, const struct apply_options *o,
		    const char *volume_id, const char *account, struct buf *err);

/* Fresh EC2 state of one volume: its record (NULL when deleted) and latest modification. */
struct fresh {
	struct fleet f;
	struct ec2_mod_list mods;
};
/* Reads it (fr released on failure). A refusal about the principal becomes the run's stop (the
 * message into err, left saying where the rows stay) and sets *stopped; any other failure leaves
 * its message in rerr. */
int apply_read_fresh_or_stop(struct aws_client *aws, const char *region, const char *vid, const char *left,
			     struct fresh *fr, int *stopped, struct buf *rerr, struct buf *err);
void apply_fresh_release(struct fresh *fr);

/* When a volume whose ModifyVolume met VolumeModificationRateExceeded at refused_at may go again
 * (0 when that time has passed), from the ledger's starts and EC2's latest (apply_reconcile.c). */
time_t apply_refused_until(struct ledger *l, const struct apply_row *row, time_t latest_start,
			   const struct rate_refusal *rr, time_t refused_at, enum rate_refusal_basis *basis);

/* apply_reconcile.c: brings one unfinished row up to date (invariant 2 of apply.c); *progress
 * (may be NULL): EC2's percentage, -1 when none is known. */
int apply_reconcile_row(struct ledger *l, struct aws_client *aws, struct kube_conns *kcs, struct apply_row *row,
			struct apply_result *res, const struct apply_options *o, int64_t *progress, struct buf *err);
/* Every row of rows in flight (or deferred awaiting the driver) through apply_reconcile_row. */
int apply_reconcile_rows(struct ledger *l, struct aws_client *aws, struct kube_conns *kcs, struct apply_row *rows,
			 size_t n, struct apply_result *res, const struct apply_options *o, struct buf *err);
/* apply --wait: reconciles the plan's open rows every poll until none is left or the timeout. */
int apply_wait_for(struct ledger *l, struct aws_client *aws, struct kube_conns *kcs, const struct apply_options *o,
		   struct apply_result *res, struct buf *err);

#endif
