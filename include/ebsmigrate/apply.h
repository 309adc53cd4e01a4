/*
 * apply.h - applying a recorded plan in batches, safely (issue: migrate safely).
 *
 * Ownership: struct apply_result owns its outcome list (apply_result_release). The ledger, the
 * AWS client and the options are borrowed.
 */
#ifndef EBSMIGRATE_APPLY_H
#define EBSMIGRATE_APPLY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/progress.h"

struct ledger;
struct aws_client;
struct apply_row;

enum apply_order { ORDER_SAVINGS = 0, ORDER_OLDEST, ORDER_RISK };

struct apply_options {
	int64_t plan_id;               /* 0 = the latest recorded plan */
	size_t batch;                  /* volumes to submit in this run (0 = the default, 10) */
	int reconcile_only;            /* apply --batch 0 / --reconcile-only: reconcile, submit nothing */
	int observe_only;              /* status: forward transitions only, saved only if the row is
					* unchanged since it was read (see apply_reconcile) */
	int no_kube;                   /* reconcile from EC2 alone: PVCs are not read */
	size_t max_in_flight;          /* modifications in flight per account-region (and cluster) */
	enum apply_order order;
	enum modify_method method;     /* METHOD_AUTO: chosen per volume */
	const char *const *volumes;    /* --volume filters (empty = all) */
	size_t n_volumes;
	const char *const *namespaces; /* -n filters */
	size_t n_namespaces;
	const char *const *clusters;   /* --context filters */
	size_t n_clusters;
	const char *selector;          /* -l/--selector: PVC label selector (NULL = all) */
	int dry_run;
	int wait;                      /* follow submitted modifications to completed */
	int64_t wait_timeout_s;
	int64_t poll_s;                /* --wait polling interval */
	const char *kubeconfig;        /* for the vac route; NULL = KUBECONFIG / ~/.kube/config */
	void (*say)(void *ctx, const char *line); /* progress and dry-run lines (stderr/stdout) */
	void *say_ctx;
	progress_fn progress; /* may be NULL: --wait's "apply --wait" phase, finished of all rows */
	void *progress_ctx;
	/* Several accounts (docs/accounts.md): the client acting in a volume's account (its
	 * ledger/plan `account`), or NULL with the reason in err; every EC2 and CloudTrail call for
	 * a volume goes through its account's client, never another's. NULL: the one client. */
	struct aws_client *(*aws_for)(void *ctx, const char *account, struct buf *err);
	void *aws_for_ctx;
};

enum apply_outcome_kind {
	OUT_SUBMITTED = 0, /* modification started (modifying) */
	OUT_WOULD_SUBMIT,  /* --dry-run */
	OUT_DEFERRED,      /* an EBS rule says later: eligible_at */
	OUT_SKIPPED,       /* drift: deleted, resized, modified elsewhere, already done */
	OUT_FAILED,        /* the service refused (recorded error) */
	OUT_UNKNOWN,       /* no answer to ModifyVolume: reconciled on the next run */
	OUT_COMPLETED,     /* reached completed (with --wait, or found done while reconciling) */
	OUT_RECONCILED,    /* a ledger row brought up to date from AWS */
};

struct apply_outcome {
	char *volume_id;
	enum apply_outcome_kind kind;
	char *detail;
	time_t eligible_at;
};

struct apply_result {
	int64_t plan_id, run_id;
	struct apply_outcome *v;
	size_t n, alloc;
	size_t submitted, would_submit, deferred, skipped, failed, unknown, completed, left;
	char *history_warning; /* CloudTrail could not be read (one message for the run), or NULL */
	int wait_timed_out;    /* --wait gave up at --wait-timeout with modifications in flight */
	char *accounts_warning; /* observe_only: rows of an account without a client, left as recorded */
};

const char *apply_outcome_name(enum apply_outcome_kind k);
void apply_result_release(struct apply_result *r);

/* Runs one batch: reconcile the ledger with AWS, pick the next eligible volumes of the plan,
 * record each intent, modify, record the result. */
int apply_run(struct ledger *l, struct aws_client *aws, const struct apply_options *o, struct apply_result *res,
	      struct buf *err);

/* Reconciliation alone (invariant 2 of apply.c): brings every unfinished row among rows
 * (submitted, modifying, optimizing) up to date from EC2 (DescribeVolumes,
 * DescribeVolumesModifications) and, for the Kubernetes routes, the PVC (spec and current class,
 * modifyVolumeStatus, the sidecar's events); rows are updated in place. Never sends a
 * modification. With o->dry_run nothing is saved. With o->observe_only (status, which does not
 * hold the apply lock) only forward transitions are made (a submitted row EC2 has not seen stays
 * submitted: apply decides whether to resend) and each is saved only when the ledger row still
 * has the state and submitted_at it was read with, in the same transaction: a concurrent apply's
 * write wins and the row is skipped. Outcomes go to res (counted), which the caller zeroes. */
int apply_reconcile(struct ledger *l, struct aws_client *aws, struct apply_row *rows, size_t n,
		    const struct apply_options *o, struct apply_result *res, struct buf *err);

/* The plan being applied (issue 28 item 3): plan_id, else the plan of the latest apply run; 0
 * when none (no apply run yet). */
int apply_plan_in_progress(struct ledger *l, int64_t plan_id, int64_t *out, struct buf *err);

/* The volumes of recorded plan plan_id that apply acts on (migrate and blocked: the plan's volumes
 * to migrate) about which none of rows is: planned, not yet sent, as status and metrics count
 * them. Each is appended to *out (n_out counts, alloc its capacity; the caller frees with
 * apply_rows_free) as a row in state planned with id 0 (no ledger row) and method auto (none
 * chosen yet), carrying the plan's names, target and monthly figures. The plan is read by
 * plan_doc_parse: a plan that fails its checks is EM_EINPUT, nothing appended. */
int apply_plan_unsent(struct ledger *l, int64_t plan_id, const struct apply_row *rows, size_t n,
		      struct apply_row **out, size_t *n_out, size_t *alloc, struct buf *err);

#endif
