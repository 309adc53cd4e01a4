/*
 * kube_manifest_live.c - the live cluster as manifests: kube_manifest_read_cluster lists the
 * StorageClasses, VolumeAttributesClasses, StatefulSets and PersistentVolumeClaims through
 * kube_client.c (pages of `limit`, continue tokens, retries) and hands every page to the manifest
 * reader, so `check --live` judges the objects the API server has exactly as it judges files.
 *
 * Invariants: a list that restarts after 410 Expired (page 0 again) first drops what its
 * earlier pages added, so no object is kept twice; VolumeAttributesClasses are read only where
 * discovery says they are served (the newest version); nothing here parses JSON itself.
 */
#include <stdio.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_manifest.h"

struct list_pages {
	struct kube_manifest *m;
	size_t src;
	size_t mark; /* objects before this list */
};

static int on_page(void *ctx, const char *json, size_t len, unsigned page, struct buf *err)
{
	struct list_pages *lp = ctx;
	if (page == 0) /* the first page, or the list restarted: forget what earlier pages gave */
		kube_manifest_truncate(lp->m, lp->mark);
	int rc = kube_manifest_read_text(lp->m, lp->src, json, len, err);
	return rc < 0 ? rc : 0;
}

static int list_into(struct kube_manifest *m, size_t src, struct kube_client *c, const char *path, struct buf *err)
{
	struct list_pages lp = {m, src, m->n};
	return kube_list(c, path, on_page, &lp, err);
}

/* A namespaced resource, from every namespace or from each of namespaces. */
static int list_namespaced(struct kube_manifest *m, size_t src, struct kube_client *c, const char *prefix,
			   const char *resource, const char *const *namespaces, size_t n_ns, struct buf *err)
{
	struct buf path = BUF_INIT;
	int rc = 0;
	if (n_ns == 0) {
		buf_addf(&path, "%s/%s", prefix, resource);
		rc = list_into(m, src, c, path.s, err);
	}
	for (size_t i = 0; i < n_ns && !rc; i++) {
		buf_reset(&path);
		buf_adds(&path, prefix); /* a literal of this file */
		kube_pathf(&path, "/namespaces/%s/", namespaces[i]);
		buf_adds(&path, resource);
		rc = list_into(m, src, c, path.s, err);
	}
	buf_release(&path);
	return rc;
}

int kube_manifest_read_cluster(struct kube_manifest *m, struct kube_client *c, const char *name,
			       const char *const *namespaces, size_t n_ns, unsigned what, struct buf *err)
{
	size_t src = kube_manifest_add_source(m, name, KM_SOURCE_CLUSTER);
	int rc = 0;
	if (what & KM_READ_STORAGE_CLASSES)
		rc = list_into(m, src, c, "/apis/storage.k8s.io/v1/storageclasses", err);
	if (!rc && (what & KM_READ_VACS)) {
		const char *ver = NULL;
		rc = kube_vac_api_version(c, &ver, err);
		if (!rc && ver) {
			struct buf path = BUF_INIT;
			kube_pathf(&path, "/apis/storage.k8s.io/%s/volumeattributesclasses", ver);
			rc = list_into(m, src, c, path.s, err);
			buf_release(&path);
		}
	}
	if (!rc && (what & KM_READ_STATEFULSETS))
		rc = list_namespaced(m, src, c, "/apis/apps/v1", "statefulsets", namespaces, n_ns, err);
	if (!rc && (what & KM_READ_CLAIMS))
		rc = list_namespaced(m, src, c, "/api/v1", "persistentvolumeclaims", namespaces, n_ns, err);
	return rc;
}
