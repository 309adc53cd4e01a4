/*
 * status_verify.h - status's verification of an apply ledger row: a row checked against what EC2
 * and its PVC show now (the verdict status prints and exits 4 on), and the totals of a status view
 * (which metrics shares). Pure: status reads EC2 and the PVCs, this module judges.
 *
 * Ownership: struct apply_verdict owns its note (apply_verdict_release); struct pvc_live owns its
 * PVC state and message (pvc_live_release). Rows, volumes and PVC states are borrowed.
 */
#ifndef EBSMIGRATE_STATUS_VERIFY_H
#define EBSMIGRATE_STATUS_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/kube_pvc.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/money.h"

struct volume;

/* A row whose PVC apply patched or will patch: a Kubernetes method and the claim's names. */
int apply_row_kube(const struct apply_row *r);
/* Whether apply patched the row's PVC (a volume found already at its target never was). */
int apply_row_patched(const struct apply_row *r);

enum pvc_lookup { PVC_NOT_READ = 0, PVC_READ, PVC_NOT_FOUND, PVC_UNREACHABLE };
const char *pvc_lookup_name(enum pvc_lookup l); /* "not-read", "read", "not-found", "unreachable" */

/* What was learned about one row's PVC. */
struct pvc_live {
	enum pvc_lookup lookup;
	struct pvc_state st;
	char *why; /* PVC_UNREACHABLE: the error */
};
void pvc_live_release(struct pvc_live *p);

/* One row checked against EC2 (v: its volume, NULL when EC2 was not read or lacks it) and its
 * PVC. A completed row is verified: EC2's type, IOPS and throughput equal the target, and a
 * patched PVC names the class (or carries the annotations). A check that could not be made is
 * unverified, never a pass. */
struct apply_verdict {
	int64_t progress;         /* percent; -1 unknown */
	int completed;
	const char *ec2_mismatch; /* completed: why EC2 does not match the target, else NULL */
	int pvc_ok;               /* -1 not checked, 0 mismatch, 1 matches */
	int pvc_unverified;       /* completed, patched, but its cluster could not be read */
	int bad;                  /* a mismatch (EC2 or PVC): status exits 4 */
	int verified;             /* -1 unknown (not completed, or a check not made), 0 mismatch, 1 verified */
	struct buf pvc_note;      /* what the PVC shows, "" when nothing to say */
};
void apply_verify_row(const struct apply_row *r, const struct volume *v, int ec2_read, const struct pvc_live *p,
		      struct apply_verdict *out);
void apply_verdict_release(struct apply_verdict *vd);

/* The totals of a status view. */
struct apply_totals {
	size_t planned, in_flight, completed, deferred, failed;
	int mismatch, pvc_unverified;
	micro_t realized; /* monthly savings of the completed rows that verify */
};
void apply_totals_add(struct apply_totals *t, const struct apply_row *r, const struct apply_verdict *vd);

#endif
