/*
 * kube_pvc.h - what apply and status need from the clusters the ledger names: one client per
 * cluster (the ledger's cluster name is the kubeconfig context), built on first use, and a
 * PersistentVolumeClaim's VolumeAttributesClass state read live.
 *
 * Ownership: struct kube_conns owns every connection (kube_conns_release); the pointer
 * kube_conn_for returns stays valid until the next kube_conn_for or the release. kubeconfig is
 * borrowed. struct pvc_state owns its strings (pvc_state_release).
 */
#ifndef EBSMIGRATE_KUBE_PVC_H
#define EBSMIGRATE_KUBE_PVC_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/kube_client.h"

struct kube_conn {
	char *cluster;
	struct kube_client kc;
	int ok;                  /* client built: requests may be sent */
	const char *vac_version; /* "v1" | "v1beta1" | "v1alpha1" | NULL (not served) */
	char *error;             /* why this cluster cannot use the vac route (NULL = it can) */
	int sidecar;             /* volume-modifier-for-k8s: 1 runs, 0 not found, -1 unknown (apply.c) */
	int sidecar_read;
	char *sidecar_note;      /* why it is unknown */
};

struct kube_conns {
	struct kube_conn *v;
	size_t n;
	const char *kubeconfig;  /* --kubeconfig; NULL = KUBECONFIG / ~/.kube/config */
};

void kube_conns_release(struct kube_conns *k);

/* The connection to cluster (its kubeconfig context), built on first use: the client, then the
 * served VolumeAttributesClass version. Never NULL: ->ok is 0 when no client could be built
 * (->error says why); ->ok with ->error set when the cluster answered no usable VAC API or
 * could not be reached for that question. */
struct kube_conn *kube_conn_for(struct kube_conns *k, const char *cluster);

/* PVC annotations read by the volume-modifier-for-k8s sidecar (FACTS.md §6). */
#define ANN_TYPE "ebs.csi.aws.com/volumeType"
#define ANN_IOPS "ebs.csi.aws.com/iops"
#define ANN_TPUT "ebs.csi.aws.com/throughput"

/* The PVC as the API server has it: its class (spec) and modify status. */
struct pvc_state {
	char *spec_class;     /* spec.volumeAttributesClassName */
	char *current_class;  /* status.currentVolumeAttributesClassName */
	char *modify_status;  /* status.modifyVolumeStatus.status: Pending | InProgress | Infeasible */
	char *modify_target;  /* status.modifyVolumeStatus.targetVolumeAttributesClassName */
	char *error;          /* message of a ModifyVolumeError condition (the driver is retrying) */
	time_t error_time;    /* its lastTransitionTime (0 = not given) */
	char *ann_type, *ann_iops, *ann_tput; /* the volume-modifier annotations (ANN_*) */
};

void pvc_state_release(struct pvc_state *p);

/* GET the PVC ns/name through c (which must be ->ok). 0, EM_ENOTFOUND when the PVC is gone, or
 * kube_get's other codes; out is zeroed first and always safe to release. */
int kube_pvc_read(struct kube_conn *c, const char *ns, const char *name, struct pvc_state *out, struct buf *err);

/* 1 when the PVC carries the target as volume-modifier annotations (what the sidecar acts on). */
int kube_pvc_annotations_match(const struct pvc_state *ps, const char *type, int64_t iops, int64_t tput);

#endif
