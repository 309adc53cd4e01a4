/*
 * kube_inventory.c - reads a cluster's inventory (StorageClasses, PVs, PVCs, StatefulSets, pods,
 * nodes, VolumeAttributesClasses, /version, kubelet stats) over kube_client.c's transport into a
 * kube_set and a fleet (contract in kube_client.h), and merges such sets read apart.
 *
 * Entry points: kube_inventory_load, kube_set_move, kube_fleet_move.
 *
 * Invariants:
 * - A list's objects move into the caller's set only once the whole list has been read, so a
 *   list restarted after 410 Expired leaves no duplicates.
 * - Merges keep the first of two entries with one identity (cluster, namespace, name), as
 *   kube_objects_load would, so merging parts read apart in the sequential order gives the
 *   sequential result.
 * - Usage (kubelet stats) that cannot be read is a notice, never a failure.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/volume.h"

/* Moves src's entries to the end of dst (PVs/PVCs already in dst are dropped, as
 * kube_objects_load would); src is left released. */
void kube_set_move(struct kube_set *dst, struct kube_set *src)
{
	struct kube_set discard;
	kube_set_init(&discard);
	struct buf k = BUF_INIT;
	size_t idx;
	for (size_t i = 0; i < src->n_pvs; i++) {
		struct kube_pv *p = &src->pvs[i];
		buf_reset(&k);
		buf_addf(&k, "%s\t%s", p->cluster, p->name);
		if (strmap_get(&dst->pv_by_name, k.s, &idx)) {
			XGROW(discard.pvs, discard.n_pvs, discard.alloc_pvs);
			discard.pvs[discard.n_pvs++] = *p;
			continue;
		}
		XGROW(dst->pvs, dst->n_pvs, dst->alloc_pvs);
		dst->pvs[dst->n_pvs] = *p;
		strmap_put(&dst->pv_by_name, k.s, dst->n_pvs);
		dst->n_pvs++;
	}
	for (size_t i = 0; i < src->n_pvcs; i++) {
		struct kube_pvc *p = &src->pvcs[i];
		buf_reset(&k);
		buf_addf(&k, "%s\t%s\t%s", p->cluster, p->namespace_, p->name);
		if (strmap_get(&dst->pvc_by_key, k.s, &idx)) {
			XGROW(discard.pvcs, discard.n_pvcs, discard.alloc_pvcs);
			discard.pvcs[discard.n_pvcs++] = *p;
			continue;
		}
		XGROW(dst->pvcs, dst->n_pvcs, dst->alloc_pvcs);
		dst->pvcs[dst->n_pvcs] = *p;
		strmap_put(&dst->pvc_by_key, k.s, dst->n_pvcs);
		dst->n_pvcs++;
	}
	for (size_t i = 0; i < src->n_uses; i++) {
		XGROW(dst->uses, dst->n_uses, dst->alloc_uses);
		dst->uses[dst->n_uses++] = src->uses[i];
	}
	for (size_t i = 0; i < src->n_nodes; i++) {
		XGROW(dst->nodes, dst->n_nodes, dst->alloc_nodes);
		dst->nodes[dst->n_nodes++] = src->nodes[i];
	}
	for (size_t i = 0; i < src->n_usage; i++) {
		XGROW(dst->usage, dst->n_usage, dst->alloc_usage);
		dst->usage[dst->n_usage++] = src->usage[i];
	}
	dst->ignored_pvs += src->ignored_pvs;
	src->n_pvs = src->n_pvcs = src->n_uses = src->n_nodes = src->n_usage = 0;
	kube_set_release(src);
	kube_set_release(&discard);
	buf_release(&k);
}

/* "cluster\tnamespace\tname" (namespace NULL for cluster-scoped kinds); 0 when a part that
 * must be there is missing (such an entry is never a duplicate, as before). */
static int object_key(struct buf *k, const char *cluster, const char *namespace_, const char *name)
{
	buf_reset(k);
	if (!cluster || !name)
		return 0;
	buf_adds(k, cluster);
	buf_addc(k, '\t');
	if (namespace_) {
		buf_adds(k, namespace_);
		buf_addc(k, '\t');
	}
	buf_adds(k, name);
	return 1;
}

static int sc_key(struct buf *k, const struct storage_class *s)
{
	return object_key(k, s->cluster, NULL, s->name);
}

static int sts_key(struct buf *k, const struct statefulset_ref *s)
{
	return object_key(k, s->cluster, s->namespace_, s->name);
}

static int vac_key(struct buf *k, const struct vac_ref *s)
{
	return object_key(k, s->cluster, NULL, s->name);
}

/* Appends src->ARR's entries to dst->ARR, an entry whose key (KEY_OF) dst already holds going to
 * discard->ARR instead (the first kept). Kinds run to tens of thousands (StatefulSets): each
 * entry is looked up by key, never by a scan of dst. One loop for the three kinds, whose
 * element types differ. */
#define MOVE_FIRST_KEPT(dst, src, discard, arr, n_arr, alloc_arr, key_of)                          \
	do {                                                                                       \
		struct strmap keys_ = STRMAP_INIT;                                                  \
		struct buf k_ = BUF_INIT;                                                           \
		size_t at_;                                                                         \
		for (size_t i_ = 0; (src)->n_arr && i_ < (dst)->n_arr; i_++)                        \
			if (key_of(&k_, &(dst)->arr[i_]))                                           \
				strmap_put(&keys_, k_.s, i_);                                       \
		for (size_t i_ = 0; i_ < (src)->n_arr; i_++) {                                      \
			int keyed_ = key_of(&k_, &(src)->arr[i_]);                                  \
			if (keyed_ && strmap_get(&keys_, k_.s, &at_)) {                             \
				XGROW((discard)->arr, (discard)->n_arr, (discard)->alloc_arr);       \
				(discard)->arr[(discard)->n_arr++] = (src)->arr[i_];                 \
				continue;                                                           \
			}                                                                           \
			XGROW((dst)->arr, (dst)->n_arr, (dst)->alloc_arr);                          \
			if (keyed_)                                                                 \
				strmap_put(&keys_, k_.s, (dst)->n_arr);                             \
			(dst)->arr[(dst)->n_arr++] = (src)->arr[i_];                                \
		}                                                                                   \
		(src)->n_arr = 0;                                                                   \
		strmap_release(&keys_);                                                             \
		buf_release(&k_);                                                                   \
	} while (0)

/* Moves src's StorageClasses, StatefulSets, VACs, notices and cluster versions into dst
 * (one entry per cluster and name, the first kept); src is left released. */
void kube_fleet_move(struct fleet *dst, struct fleet *src)
{
	struct fleet discard;
	fleet_init(&discard);
	MOVE_FIRST_KEPT(dst, src, &discard, scs, n_scs, alloc_scs, sc_key);
	MOVE_FIRST_KEPT(dst, src, &discard, sts, n_sts, alloc_sts, sts_key);
	MOVE_FIRST_KEPT(dst, src, &discard, vacs, n_vacs, alloc_vacs, vac_key);
	for (size_t i = 0; i < src->n_notices; i++) {
		XGROW(dst->notices, dst->n_notices, dst->alloc_notices);
		dst->notices[dst->n_notices++] = src->notices[i];
	}
	for (size_t i = 0; i < src->n_clusters; i++) {
		size_t di = fleet_add_cluster(dst, src->clusters[i]);
		if (src->cluster_versions[i] && !dst->cluster_versions[di]) {
			dst->cluster_versions[di] = src->cluster_versions[i];
			src->cluster_versions[i] = NULL;
		}
	}
	src->n_notices = 0;
	fleet_release(src);
	fleet_release(&discard);
}

struct inv_list {
	struct kube_client *c;
	const char *cluster;
	const char *origin;
	struct kube_set ks;
	struct fleet f;
};

static int inv_page(void *ctx, const char *json, size_t len, unsigned page, struct buf *err)
{
	struct inv_list *x = ctx;
	if (page == 0) { /* first page, or the list restarted: forget earlier pages */
		kube_set_release(&x->ks);
		fleet_release(&x->f);
		kube_set_init(&x->ks);
		fleet_init(&x->f);
	}
	int rc = kube_objects_load(&x->ks, &x->f, x->cluster, json, len, x->origin, err);
	return rc < 0 ? rc : 0;
}

/* Lists path into scratch sets, then moves them into ks/f. names_out (may be NULL) receives the
 * node names the list held, for the usage pass. */
static int inventory_list(struct kube_client *c, const char *cluster, const char *path, struct kube_set *ks,
			  struct fleet *f, char ***names_out, size_t *n_names, struct buf *err)
{
	struct buf origin = BUF_INIT;
	buf_addf(&origin, "context '%s' list %s", c->target.context, path);
	struct inv_list x = {c, cluster, origin.s, {0}, {0}};
	kube_set_init(&x.ks);
	fleet_init(&x.f);
	int rc = kube_list(c, path, inv_page, &x, err);
	if (!rc && names_out) {
		*n_names = x.ks.n_nodes;
		*names_out = x.ks.n_nodes ? xcalloc(x.ks.n_nodes, sizeof(char *)) : NULL;
		for (size_t i = 0; i < x.ks.n_nodes; i++)
			(*names_out)[i] = xstrdup(x.ks.nodes[i].name);
	}
	if (!rc) {
		kube_set_move(ks, &x.ks);
		kube_fleet_move(f, &x.f);
	} else {
		kube_set_release(&x.ks);
		fleet_release(&x.f);
	}
	buf_release(&origin);
	return rc;
}

static void inventory_usage(struct kube_client *c, const char *cluster, char **nodes, size_t n, struct kube_set *ks,
			    struct fleet *f)
{
	size_t i;
	for (i = 0; i < n; i++) {
		progress_report(c->opt.progress, c->opt.progress_ctx, PROGRESS_STEP, "kubelet stats", cluster, i, n);
		struct buf path = BUF_INIT, body = BUF_INIT, e = BUF_INIT;
		buf_adds(&path, "/api/v1/nodes/");
		buf_add_urlencoded(&path, nodes[i], 1);
		buf_adds(&path, "/proxy/stats/summary");
		long st = 0;
		int rc = kube_get(c, path.s, NULL, &body, &st, &e);
		int stop = 0;
		if (rc == EM_EAUTH && st == 403) {
			fleet_add_notice(f, "volume usage unavailable in cluster '%s': forbidden", cluster);
			stop = 1;
		} else if (rc) {
			fleet_add_notice(f, "volume usage unavailable for node '%s' in cluster '%s': %s", nodes[i], cluster,
					 e.s);
		} else {
			struct buf origin = BUF_INIT;
			buf_addf(&origin, "context '%s' node '%s' stats/summary", c->target.context, nodes[i]);
			rc = kube_objects_load(ks, f, cluster, body.s, body.len, origin.s, &e);
			if (rc < 0)
				fleet_add_notice(f, "volume usage unavailable for node '%s' in cluster '%s': %s", nodes[i],
						 cluster, e.s);
			buf_release(&origin);
		}
		buf_release(&path);
		buf_release(&body);
		buf_release(&e);
		if (stop)
			break;
	}
	progress_report(c->opt.progress, c->opt.progress_ctx, PROGRESS_DONE, "kubelet stats", cluster, i, n);
}

int kube_inventory_load(struct kube_client *c, const char *cluster_name, struct kube_set *ks, struct fleet *f,
			unsigned what, struct buf *err)
{
	static const struct {
		unsigned bit;
		const char *path;
	} lists[] = {
		{KUBE_INV_STORAGECLASSES, "/apis/storage.k8s.io/v1/storageclasses"},
		{KUBE_INV_PVS, "/api/v1/persistentvolumes"},
		{KUBE_INV_PVCS, "/api/v1/persistentvolumeclaims"},
		{KUBE_INV_STATEFULSETS, "/apis/apps/v1/statefulsets"},
		{KUBE_INV_PODS, "/api/v1/pods"},
		{KUBE_INV_NODES, "/api/v1/nodes"},
	};
	int rc = 0;
	fleet_add_cluster(f, cluster_name);
	if (what & KUBE_INV_USAGE)
		what |= KUBE_INV_NODES;
	if (what & KUBE_INV_VERSION) {
		struct buf raw = BUF_INIT, doc = BUF_INIT, origin = BUF_INIT;
		rc = kube_server_version(c, NULL, &raw, err);
		if (!rc) {
			buf_addf(&doc, "{\"serverVersion\":%s}", raw.s);
			buf_addf(&origin, "context '%s' /version", c->target.context);
			rc = kube_objects_load(ks, f, cluster_name, doc.s, doc.len, origin.s, err);
			rc = rc < 0 ? rc : 0;
		}
		buf_release(&raw);
		buf_release(&doc);
		buf_release(&origin);
		if (rc)
			return rc;
	}
	char **nodes = NULL;
	size_t n_nodes = 0, n_lists = 0, lists_done = 0;
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
		n_lists += (what & lists[i].bit) != 0;
	progress_report(c->opt.progress, c->opt.progress_ctx, PROGRESS_STEP, "kube lists", cluster_name, 0, n_lists);
	for (size_t i = 0; i < sizeof lists / sizeof lists[0] && !rc; i++) {
		if (!(what & lists[i].bit))
			continue;
		int is_nodes = lists[i].bit == KUBE_INV_NODES;
		rc = inventory_list(c, cluster_name, lists[i].path, ks, f, is_nodes ? &nodes : NULL,
				    is_nodes ? &n_nodes : NULL, err);
		progress_report(c->opt.progress, c->opt.progress_ctx, PROGRESS_STEP, "kube lists", cluster_name,
				++lists_done, n_lists);
	}
	progress_report(c->opt.progress, c->opt.progress_ctx, PROGRESS_DONE, "kube lists", cluster_name, lists_done,
			n_lists);
	if (!rc && (what & KUBE_INV_VACS)) {
		const char *ver = NULL;
		rc = kube_vac_api_version(c, &ver, err);
		if (!rc && ver) {
			struct buf path = BUF_INIT;
			buf_addf(&path, "/apis/storage.k8s.io/%s/volumeattributesclasses", ver);
			rc = inventory_list(c, cluster_name, path.s, ks, f, NULL, NULL, err);
			buf_release(&path);
		}
	}
	if (!rc && (what & KUBE_INV_USAGE))
		inventory_usage(c, cluster_name, nodes, n_nodes, ks, f);
	for (size_t i = 0; i < n_nodes; i++)
		free(nodes[i]);
	free(nodes);
	return rc;
}
