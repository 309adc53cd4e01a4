/*
 * kube_objects.h - the Kubernetes objects ebsmigrate reads (PV, PVC, StorageClass,
 * StatefulSet, VolumeAttributesClass, Pod, Node, kubelet stats/summary, `kubectl version`),
 * from `kubectl ... -o json` documents (a List or a single object) or from API list pages.
 * Both paths call kube_objects_load with the JSON text.
 *
 * PVs/PVCs/pods/nodes/usage collect in a struct kube_set until inventory.c joins them with
 * EBS volumes; StorageClasses, StatefulSets and VACs go straight into the fleet.
 * Ownership: the set owns its strings; kube_set_release frees them.
 */
#ifndef EBSMIGRATE_KUBE_OBJECTS_H
#define EBSMIGRATE_KUBE_OBJECTS_H

#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/volume.h"

struct jsonx_arena;

#define EBS_CSI_DRIVER "ebs.csi.aws.com"
#define EBS_INTREE_DRIVER "kubernetes.io/aws-ebs"

struct kube_pv {
	char *cluster, *name;
	char *volume_id;      /* "vol-..." */
	char *driver;         /* EBS_CSI_DRIVER or EBS_INTREE_DRIVER */
	int in_tree;
	char *claim_namespace, *claim_name;
	char *storage_class;
	char *zone;           /* from topology labels / node affinity, NULL unknown (shared) */
	char *type_param;     /* volume type when known from the PV (CSI volumeAttributes) (shared) */
	int64_t capacity_gib; /* spec.capacity.storage rounded up to GiB */
	char *origin;         /* (shared) */
};

struct kube_pvc {
	char *cluster, *namespace_; /* (shared) */
	char *name;
	char *volume_name;
	char *storage_class;        /* (shared) */
	char *vac, *current_vac;
	struct kv *labels;
	size_t n_labels;
};

struct kube_claim_use { /* a pod on a node mounting a PVC */
	char *cluster, *namespace_, *node; /* (shared) */
	char *claim;
};

struct kube_node {
	char *cluster, *name, *instance_type;
	char *region; /* topology.kubernetes.io/region (or from the zone label), NULL unknown */
};

struct kube_usage {
	char *cluster, *namespace_; /* (shared) */
	char *pvc;
	int64_t used_bytes, capacity_bytes;
};

struct kube_set {
	struct kube_pv *pvs;
	size_t n_pvs, alloc_pvs;
	struct kube_pvc *pvcs;
	size_t n_pvcs, alloc_pvcs;
	struct kube_claim_use *uses;
	size_t n_uses, alloc_uses;
	struct kube_node *nodes;
	size_t n_nodes, alloc_nodes;
	struct kube_usage *usage;
	size_t n_usage, alloc_usage;
	struct strmap pv_by_name;   /* "cluster\tname" -> pvs index (dedupe) */
	struct strmap pvc_by_key;   /* "cluster\tns\tname" -> pvcs index */
	struct strmap sts_seen;     /* "cluster\tns\tname" of StatefulSets already in the fleet */
	size_t ignored_pvs;         /* PVs of other drivers */
	/* PVs of the EBS drivers whose handle is no EBS volume id (the CSI driver's node-local
	 * `local-ebs://dev/xvdbz`): skipped, each described for the join's one warning as
	 * "'NAME' in cluster 'CLUSTER' (FIELD 'HANDLE')" (strv_free) */
	char **skipped_pvs;
	size_t n_skipped_pvs, alloc_skipped_pvs;
	struct jsonx_arena *parse_arena; /* each document's tree while it is read (jsonx.h); kept
					  * between the pages of a list, NULL until the first load */
	/* The fields marked (shared) above point into these strings, one copy of each value the
	 * set's objects repeat (clusters, namespaces, zones, nodes, classes, origins), freed by
	 * kube_set_release: 100,000 PVs, PVCs and pods held ~10 separate copies of them per
	 * volume (live inventory at 100,000 volumes: 245 -> 223 MiB RSS after the join).
	 * shared_index: string -> position in shared (the set's own loads; strings moved in from
	 * another set are owned, not indexed). */
	char **shared;
	size_t n_shared, alloc_shared;
	struct strmap shared_index;
};

void kube_set_init(struct kube_set *ks);
void kube_set_release(struct kube_set *ks);
/* Makes dst own src's shared strings (src's objects moving to dst keep pointing at them). */
void kube_set_move_shared(struct kube_set *dst, struct kube_set *src);

/* Loads one document into ks and f for the named cluster. Items of kinds ebsmigrate does not
 * use are skipped, and so are PVs that are no EBS volume ebsmigrate can migrate (listed in
 * ks->skipped_pvs). Returns the number of items used, or EM_EINPUT with a message naming
 * origin and the JSON path (e.g. "items[4] (PersistentVolume 'pvc-1a2b'): spec.csi.volumeHandle
 * is missing"). */
int kube_objects_load(struct kube_set *ks, struct fleet *f, const char *cluster, const char *text,
		      size_t len, const char *origin, struct buf *err);
/* The same from a file (path "-": standard input), a List's items read one at a time
 * (jsonx_stream): memory holds one object's tree, not the file's. */
int kube_objects_load_file(struct kube_set *ks, struct fleet *f, const char *cluster, const char *path,
			   struct buf *err);
struct jsonx_stream;
int kube_objects_load_stream(struct kube_set *ks, struct fleet *f, const char *cluster, struct jsonx_stream *s,
			     const char *origin, struct buf *err);

/* Parses a Kubernetes quantity ("100Gi", "1Ti", "500G", "107374182400") into bytes. */
int kube_parse_quantity(const char *s, int64_t *bytes_out);
/* "aws://us-east-1a/vol-0abc", "aws:///vol-0abc", "vol-0abc" -> "vol-0abc" (caller frees);
 * NULL when the last path segment is not a volume id. */
char *kube_ebs_volume_id(const char *volume_id_field);

#endif

/* Writes cluster's objects held in ks and f as `kubectl get pv,pvc,sc,sts,vac,pods,nodes -o json`
 * prints them (a List; only the fields ebsmigrate reads), followed in the same file by nothing
 * else: usage goes to a kubelet Summary document (kube_objects_write_summary) and the version
 * to a `kubectl version -o json` document, so `plan --from-kube-json CLUSTER=FILE` replays
 * all three into the same fleet. With a spill, out is handed on every megabyte and at the end
 * (a cluster of 20,000 claims writes ~14 MB); NULL keeps the document in out. */
void kube_objects_write_export(struct buf *out, const struct kube_set *ks, const struct fleet *f, const char *cluster,
			       const struct buf_spill *spill);
void kube_objects_write_summary(struct buf *out, const struct kube_set *ks, const char *cluster);
/* Empty (nothing written) when the cluster's version is unknown. */
void kube_objects_write_version(struct buf *out, const struct fleet *f, const char *cluster);
