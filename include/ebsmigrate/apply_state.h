/*
 * apply_state.h - the typed states of a migration: a ledger row's state, the route a volume is
 * modified by (apply's --method, plan --manifests' --route), their one name table each, and the
 * VolumeAttributesClass name rule. Low in the layers (beside the ledger, L1): the ledger stores
 * these names and reads them back into these enums, apply, status, report, metrics and bench
 * use them; nothing here calls anything above (status's verification of a row is
 * status_verify.h's).
 *
 * Strings exist only at the boundaries: the ledger (apply_volumes.state/method, whose CHECK
 * constraints hold exactly these names) and the JSON/table output.
 *
 * Ownership: nothing is allocated; names are static strings.
 */
#ifndef EBSMIGRATE_APPLY_STATE_H
#define EBSMIGRATE_APPLY_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/volume.h"

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
/* Whether a row in state from may move to state to (apply's reconciliation asserts it for every
 * row it reconciles): completed and failed are final, and only a submitted row (one EC2 never
 * received) goes back to planned. Every other move the diagram in apply.c draws is allowed,
 * including staying in the same state. */
int apply_state_may_follow(enum apply_state from, enum apply_state to);

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

#endif
