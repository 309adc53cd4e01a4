/*
 * apply_state.h - the typed states of apply: a ledger row's state, the route a volume is modified
 * by (apply's --method, plan --manifests' --route), their one name table each, and the
 * verification of a row against what EC2 and its PVC show (status).
 *
 * Strings exist only at the boundaries: the ledger (apply_volumes.state/method, whose CHECK
 * constraints hold exactly these names) and the JSON/table output.
 *
 * Ownership: struct apply_verdict owns its note (apply_verdict_release); struct pvc_live owns its
 * PVC state and message (pvc_live_release). Rows, volumes and PVC states are borrowed.
 */
#ifndef EBSMIGRATE_APPLY_STATE_H
#define EBSMIGRATE_APPLY_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/kube_pvc.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/volume.h"

struct apply_row;
struct volume;

/* A ledger row's state (ledger_apply.h draws the transitions). */
enum apply_state {
	APPLY_PLANNED = 0,
	APPLY_DEFERRED,
	APPLY_SUBMITTED,
	APPLY_MODIFYING,
	APPLY_OPTIMIZING,
	APPLY_COMPLETED,
	APPLY_FAILED,
};
#define APPLY_STATE_COUNT 7

const char *apply_state_name(enum apply_state s);
/* 0, or EM_EINPUT (out untouched) when s is no state name (NULL included). */
int apply_state_parse(const char *s, enum apply_state *out);
/* The row state EC2's modification state stands for (modifying, optimizing, completed, failed:
 * the same names); 0, or EM_EINPUT (out untouched) for a missing or unknown state. */
int apply_state_from_ec2(enum volume_mod_state s, enum apply_state *out);
/* submitted, modifying or optimizing: a modification sent (or about to be) and not settled yet. */
int apply_state_open(enum apply_state s);
/* How far along a state is: status (observe_only) only moves rows forward. completed and failed
 * are final (the same rank). */
int apply_state_rank(enum apply_state s);

/* How a volume is modified. METHOD_AUTO is a choice only (apply's --method auto, the default;
 * plan --manifests reads it as vac): a ledger row always holds one of the three others. */
enum modify_method {
	METHOD_AUTO = 0,
	METHOD_VAC,        /* VolumeAttributesClass + spec.volumeAttributesClassName */
	METHOD_ANNOTATION, /* PVC annotations ebs.csi.aws.com/volumeType etc. (volume-modifier sidecar) */
	METHOD_EC2,        /* ModifyVolume (aws ec2 modify-volume) */
};
#define MODIFY_METHOD_COUNT 4

const char *modify_method_name(enum modify_method m); /* "auto", "vac", "annotation", "ec2" */
/* 0, or EM_EINPUT (out untouched) when s is no method name. */
int modify_method_parse(const char *s, enum modify_method *out);
/* vac or annotation: the PVC is patched and Kubernetes calls ModifyVolume. */
int modify_method_kube(enum modify_method m);

/* The one rule for VolumeAttributesClass names: "gp3-IOPS-THROUGHPUT", one class per distinct
 * target (apply creates it, plan --manifests writes it, docs/manifests.md). */
void apply_vac_name(struct buf *out, int64_t iops, int64_t throughput);

/* ---- verification (status) ---- */

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
