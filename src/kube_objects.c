/*
 * kube_objects.c - Kubernetes objects from `kubectl -o json` documents or API list pages.
 *
 * Entry points: kube_objects_load, kube_parse_quantity, kube_ebs_volume_id, and the --save writers
 * kube_objects_write_export, kube_objects_write_summary, kube_objects_write_version.
 *
 * Invariants: only EBS-backed PVs are kept (CSI driver ebs.csi.aws.com, or in-tree
 * awsElasticBlockStore, with a handle naming an EBS volume); other drivers' PVs are counted and
 * ignored, EBS drivers' PVs with another handle (node-local `local-ebs://dev/xvdbz`) listed in
 * skipped_pvs: one odd PV never stops the fleet. A PV/PVC seen twice for one cluster
 * keeps the first copy. The document shape is detected: a List ("items"), a single object with
 * "kind", a kubelet stats/summary ("node" + "pods"), or `kubectl version -o json`. A text may
 * hold several documents (kubectl prints one per `get`); each is read. A List's items is an
 * array (null, an object or no items at all is bad input); a field read as a string that holds
 * another type is an error, never taken for an absent one; summary usage bytes lie in
 * 0..64 TiB.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/strlist.h"

#define GROW(arr, n, alloc) XGROW(arr, n, alloc)

void kube_set_init(struct kube_set *ks)
{
	memset(ks, 0, sizeof *ks);
}

/* The set's one copy of s (NULL for NULL): for the fields marked (shared) in kube_objects.h. */
static char *shared_str(struct kube_set *ks, const char *s)
{
	if (!s)
		return NULL;
	size_t pos;
	if (strmap_get(&ks->shared_index, s, &pos))
		return ks->shared[pos];
	GROW(ks->shared, ks->n_shared, ks->alloc_shared);
	ks->shared[ks->n_shared] = xstrdup(s);
	strmap_put(&ks->shared_index, s, ks->n_shared);
	return ks->shared[ks->n_shared++];
}

void kube_set_move_shared(struct kube_set *dst, struct kube_set *src)
{
	if (!dst->n_shared) { /* the whole pool, index included, changes hands */
		char **v = dst->shared;
		size_t alloc = dst->alloc_shared;
		struct strmap index = dst->shared_index;
		dst->shared = src->shared, dst->n_shared = src->n_shared, dst->alloc_shared = src->alloc_shared;
		dst->shared_index = src->shared_index;
		src->shared = v, src->n_shared = 0, src->alloc_shared = alloc, src->shared_index = index;
		return;
	}
	for (size_t i = 0; i < src->n_shared; i++) {
		GROW(dst->shared, dst->n_shared, dst->alloc_shared);
		dst->shared[dst->n_shared++] = src->shared[i];
	}
	src->n_shared = 0;
}

void kube_set_release(struct kube_set *ks)
{
	for (size_t i = 0; i < ks->n_pvs; i++) {
		struct kube_pv *p = &ks->pvs[i];
		free(p->cluster), free(p->name), free(p->volume_id), free(p->driver);
		free(p->claim_namespace), free(p->claim_name), free(p->storage_class);
	}
	free(ks->pvs);
	for (size_t i = 0; i < ks->n_pvcs; i++) {
		struct kube_pvc *p = &ks->pvcs[i];
		free(p->name), free(p->volume_name), free(p->vac), free(p->current_vac);
		kv_free(p->labels, p->n_labels);
	}
	free(ks->pvcs);
	for (size_t i = 0; i < ks->n_uses; i++)
		free(ks->uses[i].claim);
	free(ks->uses);
	for (size_t i = 0; i < ks->n_nodes; i++)
		free(ks->nodes[i].cluster), free(ks->nodes[i].name), free(ks->nodes[i].instance_type),
			free(ks->nodes[i].region);
	free(ks->nodes);
	for (size_t i = 0; i < ks->n_usage; i++)
		free(ks->usage[i].pvc);
	free(ks->usage);
	strv_free(ks->skipped_pvs, ks->n_skipped_pvs);
	strmap_release(&ks->pv_by_name);
	strmap_release(&ks->pvc_by_key);
	strmap_release(&ks->sts_seen);
	for (size_t i = 0; i < ks->n_shared; i++)
		free(ks->shared[i]);
	free(ks->shared);
	strmap_release(&ks->shared_index);
	if (ks->parse_arena) {
		jsonx_arena_release(ks->parse_arena);
		free(ks->parse_arena);
	}
	memset(ks, 0, sizeof *ks);
}

int kube_parse_quantity(const char *s, int64_t *bytes_out)
{
	if (!s || !*s)
		return EM_EINPUT;
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		return EM_EINPUT;
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
		{"Pi", 1125899906842624.0}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
		{"", 1.0},
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			double b = v * units[i].mult;
			if (b > 9.2e18)
				return EM_EINPUT;
			*bytes_out = (int64_t)(b + 0.5);
			return 0;
		}
	}
	return EM_EINPUT;
}

static int is_volume_id(const char *s)
{
	if (strncmp(s, "vol-", 4) != 0 || !s[4])
		return 0;
	for (const char *p = s + 4; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return 0;
	return 1;
}

char *kube_ebs_volume_id(const char *field)
{
	if (!field)
		return NULL;
	const char *last = strrchr(field, '/');
	last = last ? last + 1 : field;
	return is_volume_id(last) ? xstrdup(last) : NULL;
}

static struct kv *copy_string_map(const cJSON *obj, size_t *n_out)
{
	*n_out = 0;
	if (!cJSON_IsObject(obj))
		return NULL;
	size_t n = (size_t)cJSON_GetArraySize(obj);
	struct kv *kv = n ? xcalloc(n, sizeof *kv) : NULL;
	const cJSON *it;
	cJSON_ArrayForEach(it, obj)
	{
		if (!cJSON_IsString(it))
			continue;
		kv[*n_out].key = xstrdup(it->string);
		kv[*n_out].value = xstrdup(it->valuestring);
		(*n_out)++;
	}
	return kv;
}

static char *key2(const char *a, const char *b)
{
	struct buf k = BUF_INIT;
	buf_addf(&k, "%s\t%s", a, b);
	return buf_detach(&k);
}

static char *key3(const char *a, const char *b, const char *c)
{
	struct buf k = BUF_INIT;
	buf_addf(&k, "%s\t%s\t%s", a, b, c);
	return buf_detach(&k);
}

/* Zone of a PV: topology label, or the CSI/in-tree node affinity term. */
static const char *pv_zone(const cJSON *pv)
{
	static const char *const labels[] = {"topology.kubernetes.io/zone",
					     "failure-domain.beta.kubernetes.io/zone", NULL};
	const cJSON *lab = jsonx_path(pv, "metadata.labels");
	for (int i = 0; labels[i]; i++) {
		const char *z = jsonx_str(lab, labels[i]);
		if (z)
			return z;
	}
	const cJSON *terms = jsonx_path(pv, "spec.nodeAffinity.required.nodeSelectorTerms");
	const cJSON *t;
	cJSON_ArrayForEach(t, terms)
	{
		const cJSON *e;
		cJSON_ArrayForEach(e, jsonx_get(t, "matchExpressions"))
		{
			const char *key = jsonx_str(e, "key");
			const cJSON *vals = jsonx_get(e, "values");
			if (key && (strcmp(key, "topology.ebs.csi.aws.com/zone") == 0 ||
				    strcmp(key, "topology.kubernetes.io/zone") == 0) &&
			    cJSON_IsArray(vals) && cJSON_IsString(cJSON_GetArrayItem(vals, 0)))
				return cJSON_GetArrayItem(vals, 0)->valuestring;
		}
	}
	return NULL;
}

/* The string fields at paths[i] into *outs[i] (NULL when absent); a wrong type is an error. */
static int want_strs(const cJSON *o, size_t n, const char *const paths[], const char **outs[], const char *origin,
		     const char *path, struct buf *err)
{
	for (size_t i = 0; i < n; i++) {
		int rc = jsonx_want_path_str(o, paths[i], outs[i], origin, path, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* A PV of an EBS driver whose handle names no EBS volume: described for the join's warning (the
 * names and the handle come from the file: made visible), never an error for the whole fleet. */
static int skip_pv(struct kube_set *ks, const char *cluster, const char *name, const char *field, const char *handle)
{
	struct buf d = BUF_INIT;
	buf_adds(&d, "'");
	buf_add_visible(&d, name);
	buf_adds(&d, "' in cluster '");
	buf_add_visible(&d, cluster);
	buf_addf(&d, "' (%s '", field);
	buf_add_visible(&d, handle);
	buf_adds(&d, "')");
	XGROW(ks->skipped_pvs, ks->n_skipped_pvs, ks->alloc_skipped_pvs);
	ks->skipped_pvs[ks->n_skipped_pvs++] = buf_detach(&d);
	return 0;
}

static int load_pv(struct kube_set *ks, const char *cluster, const cJSON *o, const char *origin,
		   const char *path, struct buf *err)
{
	const char *name, *driver, *handle, *intree, *claim_ns, *claim_name, *sc, *type, *cap;
	const char *const paths[] = {"metadata.name", "spec.csi.driver", "spec.csi.volumeHandle",
				     "spec.awsElasticBlockStore.volumeID", "spec.claimRef.namespace", "spec.claimRef.name",
				     "spec.storageClassName", "spec.csi.volumeAttributes.type", "spec.capacity.storage"};
	const char **outs[] = {&name, &driver, &handle, &intree, &claim_ns, &claim_name, &sc, &type, &cap};
	int rc = want_strs(o, sizeof paths / sizeof paths[0], paths, outs, origin, path, err);
	if (rc)
		return rc;
	if (!name)
		return em_err(err, EM_EINPUT, "%s: %s: PersistentVolume without metadata.name", origin, path);
	int in_tree = 0;
	const char *field;
	if (driver && strcmp(driver, EBS_CSI_DRIVER) == 0) {
		field = handle;
		if (!field)
			return em_err(err, EM_EINPUT, "%s: %s (PersistentVolume '%s'): spec.csi.volumeHandle is missing",
				      origin, path, name);
	} else if (intree) {
		field = intree;
		in_tree = 1;
	} else {
		ks->ignored_pvs++;
		return 0;
	}
	char *vid = kube_ebs_volume_id(field);
	if (!vid) /* not an EBS volume (the CSI driver's node-local local-ebs://dev/xvdbz): not one to migrate */
		return skip_pv(ks, cluster, name, in_tree ? "spec.awsElasticBlockStore.volumeID" : "spec.csi.volumeHandle",
			       field);
	char *k = key2(cluster, name);
	size_t dummy;
	if (strmap_get(&ks->pv_by_name, k, &dummy)) {
		free(k);
		free(vid);
		return 0;
	}
	GROW(ks->pvs, ks->n_pvs, ks->alloc_pvs);
	struct kube_pv *p = &ks->pvs[ks->n_pvs];
	memset(p, 0, sizeof *p);
	p->cluster = xstrdup(cluster);
	p->name = xstrdup(name);
	p->volume_id = vid;
	p->in_tree = in_tree;
	p->driver = xstrdup(in_tree ? EBS_INTREE_DRIVER : EBS_CSI_DRIVER);
	p->claim_namespace = xstrdup(claim_ns);
	p->claim_name = xstrdup(claim_name);
	p->storage_class = xstrdup(sc);
	p->zone = shared_str(ks, pv_zone(o));
	p->type_param = shared_str(ks, type);
	int64_t bytes;
	if (cap && kube_parse_quantity(cap, &bytes) == 0)
		p->capacity_gib = (bytes + (1LL << 30) - 1) >> 30;
	p->origin = shared_str(ks, origin);
	strmap_put(&ks->pv_by_name, k, ks->n_pvs);
	free(k);
	ks->n_pvs++;
	return 1;
}

static int load_pvc(struct kube_set *ks, const char *cluster, const cJSON *o, const char *origin,
		    const char *path, struct buf *err)
{
	const char *name, *ns, *volume_name, *sc, *vac, *current_vac;
	const char *const paths[] = {"metadata.name", "metadata.namespace", "spec.volumeName", "spec.storageClassName",
				     "spec.volumeAttributesClassName", "status.currentVolumeAttributesClassName"};
	const char **outs[] = {&name, &ns, &volume_name, &sc, &vac, &current_vac};
	int rc = want_strs(o, sizeof paths / sizeof paths[0], paths, outs, origin, path, err);
	if (rc)
		return rc;
	if (!name || !ns)
		return em_err(err, EM_EINPUT, "%s: %s: PersistentVolumeClaim without metadata.name/namespace",
			      origin, path);
	char *k = key3(cluster, ns, name);
	size_t dummy;
	if (strmap_get(&ks->pvc_by_key, k, &dummy)) {
		free(k);
		return 0;
	}
	GROW(ks->pvcs, ks->n_pvcs, ks->alloc_pvcs);
	struct kube_pvc *p = &ks->pvcs[ks->n_pvcs];
	memset(p, 0, sizeof *p);
	p->cluster = shared_str(ks, cluster);
	p->namespace_ = shared_str(ks, ns);
	p->name = xstrdup(name);
	p->volume_name = xstrdup(volume_name);
	p->storage_class = shared_str(ks, sc);
	p->vac = xstrdup(vac);
	p->current_vac = xstrdup(current_vac);
	p->labels = copy_string_map(jsonx_path(o, "metadata.labels"), &p->n_labels);
	strmap_put(&ks->pvc_by_key, k, ks->n_pvcs);
	free(k);
	ks->n_pvcs++;
	return 1;
}

static int load_storage_class(struct fleet *f, const char *cluster, const cJSON *o)
{
	const char *name = jsonx_path_str(o, "metadata.name");
	if (!name)
		return 0;
	for (size_t i = 0; i < f->n_scs; i++)
		if (strcmp(f->scs[i].cluster, cluster) == 0 && strcmp(f->scs[i].name, name) == 0)
			return 0;
	GROW(f->scs, f->n_scs, f->alloc_scs);
	struct storage_class *s = &f->scs[f->n_scs++];
	memset(s, 0, sizeof *s);
	s->cluster = xstrdup(cluster);
	s->name = xstrdup(name);
	s->provisioner = xstrdup(jsonx_str(o, "provisioner"));
	const cJSON *params = jsonx_get(o, "parameters");
	s->type = xstrdup(jsonx_str(params, "type"));
	s->encrypted = xstrdup(jsonx_str(params, "encrypted"));
	s->kms_key_id = xstrdup(jsonx_str(params, "kmsKeyId"));
	s->parameters = copy_string_map(params, &s->n_parameters);
	const cJSON *ann = jsonx_path(o, "metadata.annotations");
	const char *d = jsonx_str(ann, "storageclass.kubernetes.io/is-default-class");
	const char *d2 = jsonx_str(ann, "storageclass.beta.kubernetes.io/is-default-class");
	s->is_default = (d && strcmp(d, "true") == 0) || (d2 && strcmp(d2, "true") == 0);
	s->allow_expansion = jsonx_bool(o, "allowVolumeExpansion", 0);
	/* In-tree provisioner defaults to gp2 when no type parameter is given. */
	return 1;
}

static int load_statefulset(struct kube_set *ks, struct fleet *f, const char *cluster, const cJSON *o)
{
	const char *name = jsonx_path_str(o, "metadata.name");
	const char *ns = jsonx_path_str(o, "metadata.namespace");
	const cJSON *tpls = jsonx_path(o, "spec.volumeClaimTemplates");
	if (!name || !ns)
		return 0;
	char *k = key3(cluster, ns, name);
	size_t dummy;
	int seen = strmap_get(&ks->sts_seen, k, &dummy);
	if (!seen)
		strmap_put(&ks->sts_seen, k, f->n_sts);
	free(k);
	if (seen)
		return 0;
	GROW(f->sts, f->n_sts, f->alloc_sts);
	struct statefulset_ref *s = &f->sts[f->n_sts++];
	memset(s, 0, sizeof *s);
	s->cluster = xstrdup(cluster);
	s->namespace_ = xstrdup(ns);
	s->name = xstrdup(name);
	size_t n = cJSON_IsArray(tpls) ? (size_t)cJSON_GetArraySize(tpls) : 0;
	if (n) {
		s->claim_templates = xcalloc(n, sizeof(char *));
		s->claim_storage_classes = xcalloc(n, sizeof(char *));
	}
	const cJSON *t;
	cJSON_ArrayForEach(t, tpls)
	{
		const char *tn = jsonx_path_str(t, "metadata.name");
		if (!tn)
			continue;
		s->claim_templates[s->n_templates] = xstrdup(tn);
		s->claim_storage_classes[s->n_templates] = xstrdup(jsonx_path_str(t, "spec.storageClassName"));
		s->n_templates++;
	}
	return 1;
}

static int load_vac(struct fleet *f, const char *cluster, const cJSON *o)
{
	const char *name = jsonx_path_str(o, "metadata.name");
	if (!name)
		return 0;
	GROW(f->vacs, f->n_vacs, f->alloc_vacs);
	struct vac_ref *v = &f->vacs[f->n_vacs++];
	memset(v, 0, sizeof *v);
	v->cluster = xstrdup(cluster);
	v->name = xstrdup(name);
	v->driver = xstrdup(jsonx_str(o, "driverName"));
	v->api_version = xstrdup(jsonx_str(o, "apiVersion"));
	v->parameters = copy_string_map(jsonx_get(o, "parameters"), &v->n_parameters);
	return 1;
}

static int load_pod(struct kube_set *ks, const char *cluster, const cJSON *o)
{
	const char *ns = jsonx_path_str(o, "metadata.namespace");
	const char *node = jsonx_path_str(o, "spec.nodeName");
	int used = 0;
	if (!ns || !node)
		return 0;
	const cJSON *v;
	cJSON_ArrayForEach(v, jsonx_path(o, "spec.volumes"))
	{
		const char *claim = jsonx_path_str(v, "persistentVolumeClaim.claimName");
		if (!claim)
			continue;
		GROW(ks->uses, ks->n_uses, ks->alloc_uses);
		struct kube_claim_use *u = &ks->uses[ks->n_uses++];
		u->cluster = shared_str(ks, cluster);
		u->namespace_ = shared_str(ks, ns);
		u->claim = xstrdup(claim);
		u->node = shared_str(ks, node);
		used = 1;
	}
	return used;
}

static int load_node(struct kube_set *ks, const char *cluster, const cJSON *o)
{
	const char *name = jsonx_path_str(o, "metadata.name");
	const cJSON *lab = jsonx_path(o, "metadata.labels");
	const char *it = jsonx_str(lab, "node.kubernetes.io/instance-type");
	if (!it)
		it = jsonx_str(lab, "beta.kubernetes.io/instance-type");
	if (!name)
		return 0;
	GROW(ks->nodes, ks->n_nodes, ks->alloc_nodes);
	struct kube_node *n = &ks->nodes[ks->n_nodes++];
	n->cluster = xstrdup(cluster);
	n->name = xstrdup(name);
	n->instance_type = xstrdup(it);
	/* The node's region: where a PV without zone topology most likely lives (inventory.c). */
	const char *region = jsonx_str(lab, "topology.kubernetes.io/region");
	if (!region)
		region = jsonx_str(lab, "failure-domain.beta.kubernetes.io/region");
	const char *zone = jsonx_str(lab, "topology.kubernetes.io/zone");
	char *loc = NULL;
	n->region = NULL;
	if (region)
		n->region = xstrdup(region);
	else if (zone && volume_split_az(zone, &n->region, &loc) != 0)
		n->region = NULL;
	free(loc);
	return 1;
}

/* 64 TiB: the largest EBS volume; usage figures beyond it are not measurements. */
#define MAX_VOLUME_BYTES ((int64_t)64 << 40)

static int load_summary(struct kube_set *ks, const char *cluster, const cJSON *root, const char *origin,
			const char *doc, struct buf *err)
{
	int used = 0, pi = 0;
	const cJSON *pod;
	struct buf path = BUF_INIT;
	cJSON_ArrayForEach(pod, jsonx_get(root, "pods"))
	{
		const cJSON *vol;
		int vi = 0;
		cJSON_ArrayForEach(vol, jsonx_get(pod, "volume"))
		{
			buf_reset(&path);
			buf_addf(&path, "%spods[%d].volume[%d]", doc, pi, vi++);
			const char *pvc, *ns;
			int rc = jsonx_want_path_str(vol, "pvcRef.name", &pvc, origin, path.s, err);
			if (!rc)
				rc = jsonx_want_path_str(vol, "pvcRef.namespace", &ns, origin, path.s, err);
			if (!rc && pvc && ns) {
				buf_addf(&path, " (PVC '%s/%s')", ns, pvc);
				int64_t used_bytes = 0, cap = 0;
				int have_used = 0;
				rc = jsonx_int(vol, "usedBytes", 0, MAX_VOLUME_BYTES, &used_bytes, &have_used, origin, path.s, err);
				if (!rc)
					rc = jsonx_int(vol, "capacityBytes", 0, MAX_VOLUME_BYTES, &cap, NULL, origin, path.s, err);
				if (!rc && have_used) {
					GROW(ks->usage, ks->n_usage, ks->alloc_usage);
					struct kube_usage *u = &ks->usage[ks->n_usage++];
					u->cluster = shared_str(ks, cluster);
					u->namespace_ = shared_str(ks, ns);
					u->pvc = xstrdup(pvc);
					u->used_bytes = used_bytes;
					u->capacity_bytes = cap;
					used++;
				}
			}
			if (rc) {
				buf_release(&path);
				return rc;
			}
		}
		pi++;
	}
	buf_release(&path);
	return used;
}

/* implied: the kind of a typed list's items, which carry none (NULL for other documents). */
static int load_item(struct kube_set *ks, struct fleet *f, const char *cluster, const cJSON *o, const char *implied,
		     const char *origin, const char *path, struct buf *err)
{
	if (!cJSON_IsObject(o))
		return em_err(err, EM_EINPUT, "%s: %s: must be an object, got %s", origin, path, jsonx_type_name(o));
	const char *kind;
	int rc = jsonx_want_str(o, "kind", &kind, origin, path, err);
	if (rc)
		return rc;
	if (!kind && implied && cJSON_IsObject(o) && !jsonx_get(o, "kind"))
		kind = implied;
	if (!kind)
		return em_err(err, EM_EINPUT, "%s: %s: object without \"kind\"", origin, path);
	if (strcmp(kind, "PersistentVolume") == 0)
		return load_pv(ks, cluster, o, origin, path, err);
	if (strcmp(kind, "PersistentVolumeClaim") == 0)
		return load_pvc(ks, cluster, o, origin, path, err);
	/* The other kinds' loaders skip an object without the fields they need; a field of the
	 * wrong type is refused first, so it is never mistaken for an absent one. */
	static const char *const sc_fields[] = {"metadata.name", "provisioner", "parameters.type",
						"parameters.encrypted", "parameters.kmsKeyId"};
	static const char *const sts_fields[] = {"metadata.name", "metadata.namespace"};
	static const char *const vac_fields[] = {"metadata.name", "driverName"};
	static const char *const pod_fields[] = {"metadata.namespace", "spec.nodeName"};
	static const char *const node_fields[] = {"metadata.name"};
	static const struct {
		const char *kind;
		const char *const *fields;
		size_t n;
	} checked[] = {
		{"StorageClass", sc_fields, sizeof sc_fields / sizeof *sc_fields},
		{"StatefulSet", sts_fields, sizeof sts_fields / sizeof *sts_fields},
		{"VolumeAttributesClass", vac_fields, sizeof vac_fields / sizeof *vac_fields},
		{"Pod", pod_fields, sizeof pod_fields / sizeof *pod_fields},
		{"Node", node_fields, sizeof node_fields / sizeof *node_fields},
	};
	for (size_t i = 0; i < sizeof checked / sizeof *checked; i++) {
		if (strcmp(kind, checked[i].kind) != 0)
			continue;
		for (size_t k = 0; k < checked[i].n; k++) {
			const char *ignored;
			rc = jsonx_want_path_str(o, checked[i].fields[k], &ignored, origin, path, err);
			if (rc)
				return rc;
		}
	}
	if (strcmp(kind, "StorageClass") == 0)
		return load_storage_class(f, cluster, o);
	if (strcmp(kind, "StatefulSet") == 0)
		return load_statefulset(ks, f, cluster, o);
	if (strcmp(kind, "VolumeAttributesClass") == 0)
		return load_vac(f, cluster, o);
	if (strcmp(kind, "Pod") == 0)
		return load_pod(ks, cluster, o);
	if (strcmp(kind, "Node") == 0)
		return load_node(ks, cluster, o);
	return 0;
}

/* kubectl lists of typed objects ("PersistentVolumeList") carry no kind on items. */
static const char *item_kind_for_list(const char *list_kind)
{
	static const char *const map[][2] = {
		{"PersistentVolumeList", "PersistentVolume"},
		{"PersistentVolumeClaimList", "PersistentVolumeClaim"},
		{"StorageClassList", "StorageClass"},
		{"StatefulSetList", "StatefulSet"},
		{"VolumeAttributesClassList", "VolumeAttributesClass"},
		{"PodList", "Pod"},
		{"NodeList", "Node"},
	};
	for (size_t i = 0; list_kind && i < sizeof map / sizeof map[0]; i++)
		if (strcmp(list_kind, map[i][0]) == 0)
			return map[i][1];
	return NULL;
}

/* One document: returns the number of objects used or a negative EM_E* code. doc prefixes
 * JSON paths in messages ("document 2: " in a stream of several, else ""). */
static int load_document(struct kube_set *ks, struct fleet *f, size_t ci, const char *cluster, const cJSON *root,
			 const char *origin, const char *doc, struct buf *err)
{
	int used = 0, rc = 0;
	const cJSON *items = jsonx_get(root, "items");
	const char *kind;
	char self[64];
	snprintf(self, sizeof self, "%s(document)", doc);
	rc = jsonx_want_str(root, "kind", &kind, origin, self, err);
	if (rc)
		return rc;
	size_t kl = kind ? strlen(kind) : 0;
	if (items && !cJSON_IsArray(items))
		return em_err(err, EM_EINPUT, "%s: %sitems: must be an array, got %s", origin, doc, jsonx_type_name(items));
	if (!items && kl > 4 && strcmp(kind + kl - 4, "List") == 0)
		return em_err(err, EM_EINPUT, "%s: %s%s without \"items\"", origin, doc, kind);
	if (items) {
		const char *implied = item_kind_for_list(kind);
		int i = 0;
		cJSON *it;
		cJSON_ArrayForEach(it, items)
		{
			char path[64];
			snprintf(path, sizeof path, "%sitems[%d]", doc, i++);
			int r = load_item(ks, f, cluster, it, implied, origin, path, err);
			if (r < 0)
				return r;
			used += r;
		}
		/* VolumeAttributesClass lists name their served version. */
		if (kind && strcmp(kind, "VolumeAttributesClassList") == 0) {
			const char *av = jsonx_str(root, "apiVersion");
			for (size_t v = 0; av && v < f->n_vacs; v++)
				if (!f->vacs[v].api_version)
					f->vacs[v].api_version = xstrdup(av);
		}
	} else if (kind) {
		rc = load_item(ks, f, cluster, root, NULL, origin, self, err);
		if (rc < 0)
			return rc;
		used = rc;
	} else if (jsonx_get(root, "node") && cJSON_IsArray(jsonx_get(root, "pods"))) {
		rc = load_summary(ks, cluster, root, origin, doc, err);
		if (rc < 0)
			return rc;
		used = rc;
	} else if (cJSON_IsObject(jsonx_get(root, "serverVersion"))) {
		const cJSON *sv = jsonx_get(root, "serverVersion");
		const char *maj = jsonx_str(sv, "major"), *min = jsonx_str(sv, "minor");
		if (maj || min) {
			/* the version names manifest API levels and is written back by --save: digits only */
			if (!maj || !min || !*maj || strlen(maj) > 4 || strspn(maj, "0123456789") != strlen(maj) ||
			    strspn(min, "0123456789") == 0 || strspn(min, "0123456789") > 4)
				return em_err(err, EM_EINPUT,
					      "%s: %sserverVersion: major/minor are not version numbers (e.g. \"1\" and "
					      "\"33+\")",
					      origin, doc);
			struct buf v = BUF_INIT;
			/* EKS reports minor as "33+" */
			buf_addf(&v, "%s.%.*s", maj, (int)strspn(min, "0123456789"), min);
			free(f->cluster_versions[ci]);
			f->cluster_versions[ci] = buf_detach(&v);
			used = 1;
		}
	} else {
		/* An AWS CLI export given to --from-kube-json: say which option takes it. */
		static const char *const aws_keys[] = {"Volumes", "VolumesModifications", "InstanceTypes", "Reservations",
						       "MetricDataResults", "Events", NULL};
		for (int k = 0; aws_keys[k]; k++)
			if (cJSON_IsArray(jsonx_get(root, aws_keys[k])))
				return em_err(err, EM_EINPUT,
					      "%s: %snot a kubectl JSON export: it looks like an AWS CLI export "
					      "({\"%s\": [...]}): use --from-aws-json",
					      origin, doc, aws_keys[k]);
		return em_err(err, EM_EINPUT,
			      "%s: %snot a kubectl JSON export: expected a List with \"items\", an object with "
			      "\"kind\", a kubelet stats/summary or `kubectl version -o json` output",
			      origin, doc);
	}
	return used;
}

/* Items of a List whose kind, when it names the items' kind (a typed list), is not known yet
 * (kubectl prints "kind" after "items"; the API server before): copies of those that carry no
 * kind of their own wait for the end of the document. */
struct deferred_items {
	cJSON **items;
	size_t *index;
	size_t n, alloc;
};

static void deferred_release(struct deferred_items *d)
{
	for (size_t i = 0; i < d->n; i++)
		cJSON_Delete(d->items[i]);
	d->n = 0;
}

static int load_stream_element(struct kube_set *ks, struct fleet *f, const char *cluster, const struct jsonx_stream *s,
			       const struct jsonx_event *ev, struct deferred_items *later, const char *origin,
			       const char *doc, struct buf *err)
{
	const cJSON *root = jsonx_stream_root(s);
	const cJSON *kind = jsonx_get(root, "kind");
	if (!kind && cJSON_IsObject(ev->value) && !jsonx_get(ev->value, "kind")) {
		if (later->n == later->alloc) {
			later->alloc = later->alloc ? 2 * later->alloc : 16;
			later->items = xrealloc(later->items, later->alloc * sizeof *later->items);
			later->index = xrealloc(later->index, later->alloc * sizeof *later->index);
		}
		later->items[later->n] = cJSON_Duplicate(ev->value, 1); /* out of the arena, into malloc */
		later->index[later->n++] = ev->index;
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "%sitems[%zu]", doc, ev->index);
	return load_item(ks, f, cluster, ev->value, item_kind_for_list(cJSON_IsString(kind) ? kind->valuestring : NULL),
			 origin, path, err);
}

int kube_objects_load_stream(struct kube_set *ks, struct fleet *f, const char *cluster, struct jsonx_stream *s,
			     const char *origin, struct buf *err)
{
	size_t ci = fleet_add_cluster(f, cluster);
	struct deferred_items later = {NULL, NULL, 0, 0};
	struct jsonx_event ev;
	int rc, used = 0;
	/* Every document of the stream (kubectl prints one per `get` when given several); a List's
	 * items are read one at a time, each tree built in the arena and dropped before the next. */
	while ((rc = jsonx_stream_next(s, &ev, err)) > 0) {
		char doc[40] = "";
		if (ev.doc > 1)
			snprintf(doc, sizeof doc, "document %zu: ", ev.doc);
		int r = 0;
		if (rc == JSONX_ELEMENT) {
			r = load_stream_element(ks, f, cluster, s, &ev, &later, origin, doc, err);
		} else {
			const char *kind = jsonx_str(ev.value, "kind");
			for (size_t i = 0; i < later.n && r >= 0; i++) {
				char path[64];
				snprintf(path, sizeof path, "%sitems[%zu]", doc, later.index[i]);
				int u = load_item(ks, f, cluster, later.items[i], item_kind_for_list(kind), origin, path, err);
				r = u < 0 ? u : r + u;
			}
			deferred_release(&later);
			if (r >= 0) {
				int u = load_document(ks, f, ci, cluster, ev.value, origin, doc, err);
				r = u < 0 ? u : r + u;
			}
		}
		if (r < 0) {
			rc = r;
			break;
		}
		used += r;
	}
	deferred_release(&later);
	free(later.items);
	free(later.index);
	if (ks->parse_arena)
		jsonx_arena_reset(ks->parse_arena);
	return rc < 0 ? rc : used;
}

static const char *const stream_keys[] = {"items", NULL};

static struct jsonx_arena *set_arena(struct kube_set *ks)
{
	if (!ks->parse_arena) {
		ks->parse_arena = xmalloc(sizeof *ks->parse_arena);
		*ks->parse_arena = (struct jsonx_arena)JSONX_ARENA_INIT;
	}
	return ks->parse_arena;
}

int kube_objects_load(struct kube_set *ks, struct fleet *f, const char *cluster, const char *text,
		      size_t len, const char *origin, struct buf *err)
{
	struct jsonx_stream s;
	jsonx_stream_init_text(&s, text, len, origin, set_arena(ks), stream_keys);
	int rc = kube_objects_load_stream(ks, f, cluster, &s, origin, err);
	jsonx_stream_close(&s);
	return rc;
}

int kube_objects_load_file(struct kube_set *ks, struct fleet *f, const char *cluster, const char *path,
			   struct buf *err)
{
	struct jsonx_stream s;
	int rc = jsonx_stream_open(&s, path, set_arena(ks), stream_keys, err);
	if (!rc)
		rc = kube_objects_load_stream(ks, f, cluster, &s, path, err);
	jsonx_stream_close(&s);
	return rc;
}

/* ---- exports (inventory --save) ---- */

/* One element of the saved list: {"apiVersion":..,"kind":..,"metadata":{"name":.. with metadata
 * left open for the caller's further members. */
static void item_open(struct jsonw *w, const char *api_version, const char *kind, const char *name)
{
	jsonw_lead(w, "\n");
	jsonw_object(w);
	jsonw_key_str(w, "apiVersion", api_version);
	jsonw_key_str(w, "kind", kind);
	jsonw_key(w, "metadata");
	jsonw_object(w);
	jsonw_key_str(w, "name", name);
}

/* {"KEY":"VALUE"} as a member, for the single-label and single-parameter objects */
static void key_single(struct jsonw *w, const char *member, const char *key, const char *value)
{
	jsonw_key(w, member);
	jsonw_object(w);
	jsonw_key_str(w, key, value);
	jsonw_end(w);
}

/* The end of a saved document: its one-a-line array on a line of its own, then the object. */
static void list_close(struct jsonw *w)
{
	jsonw_layout(w, "\n");
	jsonw_end(w);
	jsonw_end(w);
	jsonw_layout(w, "\n");
}

static void write_storage_class(struct jsonw *w, const void *object, size_t index)
{
	const struct storage_class *s = object;
	(void)index;
	item_open(w, "storage.k8s.io/v1", "StorageClass", s->name);
	if (s->is_default)
		key_single(w, "annotations", "storageclass.kubernetes.io/is-default-class", "true");
	jsonw_end(w);
	jsonw_key_str(w, "provisioner", s->provisioner);
	jsonw_key(w, "parameters");
	jsonw_kv_object(w, s->parameters, s->n_parameters);
	jsonw_key_bool(w, "allowVolumeExpansion", s->allow_expansion);
	jsonw_end(w);
}

static void write_vac(struct jsonw *w, const void *object, size_t index)
{
	const struct vac_ref *v = object;
	(void)index;
	item_open(w, v->api_version ? v->api_version : "storage.k8s.io/v1", "VolumeAttributesClass", v->name);
	jsonw_end(w);
	jsonw_key_str(w, "driverName", v->driver);
	jsonw_key(w, "parameters");
	jsonw_kv_object(w, v->parameters, v->n_parameters);
	jsonw_end(w);
}

static void write_statefulset(struct jsonw *w, const void *object, size_t index)
{
	const struct statefulset_ref *s = object;
	(void)index;
	item_open(w, "apps/v1", "StatefulSet", s->name);
	jsonw_key_str(w, "namespace", s->namespace_);
	jsonw_end(w);
	jsonw_key_object(w, "spec");
	jsonw_key_array(w, "volumeClaimTemplates");
	for (size_t t = 0; t < s->n_templates; t++) {
		jsonw_object(w);
		key_single(w, "metadata", "name", s->claim_templates[t]);
		key_single(w, "spec", "storageClassName", s->claim_storage_classes[t]);
		jsonw_end(w);
	}
	jsonw_end_n(w, 3);
}

static void write_pv(struct jsonw *w, const void *object, size_t index)
{
	const struct kube_pv *p = object;
	(void)index;
	item_open(w, "v1", "PersistentVolume", p->name);
	if (p->zone)
		key_single(w, "labels", "topology.kubernetes.io/zone", p->zone);
	jsonw_end(w);
	jsonw_key_object(w, "spec");
	char storage[32];
	snprintf(storage, sizeof storage, "%lldGi", (long long)p->capacity_gib);
	key_single(w, "capacity", "storage", storage);
	if (p->in_tree) {
		key_single(w, "awsElasticBlockStore", "volumeID", p->volume_id);
	} else {
		jsonw_key_object(w, "csi");
		jsonw_key_str(w, "driver", EBS_CSI_DRIVER);
		jsonw_key_str(w, "volumeHandle", p->volume_id);
		if (p->type_param)
			key_single(w, "volumeAttributes", "type", p->type_param);
		jsonw_end(w);
	}
	if (p->claim_name) {
		jsonw_key_object(w, "claimRef");
		jsonw_key_str(w, "namespace", p->claim_namespace);
		jsonw_key_str(w, "name", p->claim_name);
		jsonw_end(w);
	}
	if (p->storage_class)
		jsonw_key_str(w, "storageClassName", p->storage_class);
	jsonw_end_n(w, 2);
}

static void write_pvc(struct jsonw *w, const void *object, size_t index)
{
	const struct kube_pvc *p = object;
	(void)index;
	item_open(w, "v1", "PersistentVolumeClaim", p->name);
	jsonw_key_str(w, "namespace", p->namespace_);
	jsonw_key(w, "labels");
	jsonw_kv_object(w, p->labels, p->n_labels);
	jsonw_end(w);
	jsonw_key_object(w, "spec");
	jsonw_key_str(w, "volumeName", p->volume_name);
	jsonw_key_str(w, "storageClassName", p->storage_class);
	if (p->vac)
		jsonw_key_str(w, "volumeAttributesClassName", p->vac);
	jsonw_end(w);
	jsonw_key_object(w, "status");
	if (p->current_vac)
		jsonw_key_str(w, "currentVolumeAttributesClassName", p->current_vac);
	jsonw_end_n(w, 2);
}

/* A pod that mounts the claim on its node; named by its place among the set's uses. */
static void write_use(struct jsonw *w, const void *object, size_t index)
{
	const struct kube_claim_use *u = object;
	char name[48];
	snprintf(name, sizeof name, "ebsmigrate-saved-use-%zu", index);
	item_open(w, "v1", "Pod", name);
	jsonw_key_str(w, "namespace", u->namespace_);
	jsonw_end(w);
	jsonw_key_object(w, "spec");
	jsonw_key_str(w, "nodeName", u->node);
	jsonw_key_array(w, "volumes");
	jsonw_object(w);
	jsonw_key_str(w, "name", "v");
	key_single(w, "persistentVolumeClaim", "claimName", u->claim);
	jsonw_end_n(w, 4);
}

static void write_node(struct jsonw *w, const void *object, size_t index)
{
	const struct kube_node *nd = object;
	(void)index;
	item_open(w, "v1", "Node", nd->name);
	jsonw_key_object(w, "labels");
	if (nd->instance_type)
		jsonw_key_str(w, "node.kubernetes.io/instance-type", nd->instance_type);
	if (nd->region)
		jsonw_key_str(w, "topology.kubernetes.io/region", nd->region);
	jsonw_end_n(w, 3);
}

/* A kubelet summary's pod with its one volume's usage; named by its place among the set's. */
static void write_usage(struct jsonw *w, const void *object, size_t index)
{
	const struct kube_usage *u = object;
	char name[32];
	snprintf(name, sizeof name, "saved-%zu", index);
	jsonw_lead(w, "\n");
	jsonw_object(w);
	jsonw_key_object(w, "podRef");
	jsonw_key_str(w, "name", name);
	jsonw_key_str(w, "namespace", u->namespace_);
	jsonw_end(w);
	jsonw_key_array(w, "volume");
	jsonw_object(w);
	jsonw_key_str(w, "name", "v");
	jsonw_key_object(w, "pvcRef");
	jsonw_key_str(w, "name", u->pvc);
	jsonw_key_str(w, "namespace", u->namespace_);
	jsonw_end(w);
	jsonw_key_int(w, "usedBytes", (long long)u->used_bytes);
	jsonw_key_int(w, "capacityBytes", (long long)u->capacity_bytes);
	jsonw_end_n(w, 3);
}

/* The objects of one kind held in an array: each carries its cluster's name as the char * at
 * cluster_at; write puts one object (given its index in the array) into the saved document. */
struct saved_kind {
	const void *v;
	size_t n, size, cluster_at;
	void (*write)(struct jsonw *w, const void *object, size_t index);
};
#define SAVED_KIND(v, n, type, write) {(v), (n), sizeof(type), offsetof(type, cluster), (write)}

/* Writes the objects of kind k that belong to cluster, in array order; after each the buffer is
 * offered to spill (NULL: kept whole). */
static void write_cluster_objects(struct jsonw *w, const struct saved_kind *k, const char *cluster,
				  const struct buf_spill *spill)
{
	for (size_t i = 0; i < k->n; i++) {
		const char *object = (const char *)k->v + i * k->size;
		if (strcmp(*(char *const *)(object + k->cluster_at), cluster) != 0)
			continue;
		k->write(w, object, i);
		buf_spill(w->b, spill, BUF_SPILL_AT);
	}
}

void kube_objects_write_export(struct buf *b, const struct kube_set *ks, const struct fleet *f, const char *cluster,
			       const struct buf_spill *spill)
{
	const struct saved_kind kinds[] = {
		SAVED_KIND(f->scs, f->n_scs, struct storage_class, write_storage_class),
		SAVED_KIND(f->vacs, f->n_vacs, struct vac_ref, write_vac),
		SAVED_KIND(f->sts, f->n_sts, struct statefulset_ref, write_statefulset),
		SAVED_KIND(ks->pvs, ks->n_pvs, struct kube_pv, write_pv),
		SAVED_KIND(ks->pvcs, ks->n_pvcs, struct kube_pvc, write_pvc),
		SAVED_KIND(ks->uses, ks->n_uses, struct kube_claim_use, write_use),
		SAVED_KIND(ks->nodes, ks->n_nodes, struct kube_node, write_node),
	};
	struct jsonw w;
	jsonw_init(&w, b, JSONW_COMPACT);
	jsonw_object(&w);
	jsonw_key_str(&w, "apiVersion", "v1");
	jsonw_key_str(&w, "kind", "List");
	key_single(&w, "metadata", "resourceVersion", "");
	jsonw_key_array(&w, "items");
	for (size_t k = 0; k < JSONW_COUNT(kinds); k++)
		write_cluster_objects(&w, &kinds[k], cluster, spill);
	list_close(&w);
	buf_spill(b, spill, 0);
}

void kube_objects_write_summary(struct buf *b, const struct kube_set *ks, const char *cluster)
{
	const struct saved_kind usage = SAVED_KIND(ks->usage, ks->n_usage, struct kube_usage, write_usage);
	struct jsonw w;
	jsonw_init(&w, b, JSONW_COMPACT);
	jsonw_object(&w);
	key_single(&w, "node", "nodeName", "(all nodes, saved by ebsmigrate inventory)");
	jsonw_key_array(&w, "pods");
	write_cluster_objects(&w, &usage, cluster, NULL);
	list_close(&w);
}

void kube_objects_write_version(struct buf *b, const struct fleet *f, const char *cluster)
{
	for (size_t i = 0; i < f->n_clusters; i++) {
		if (strcmp(f->clusters[i], cluster) != 0 || !f->cluster_versions[i])
			continue;
		const char *v = f->cluster_versions[i];
		const char *dot = strchr(v, '.');
		if (!dot)
			return;
		struct buf major = BUF_INIT;
		buf_add(&major, v, (size_t)(dot - v));
		struct jsonw w;
		jsonw_init(&w, b, JSONW_COMPACT);
		jsonw_object(&w);
		jsonw_key(&w, "serverVersion");
		jsonw_object(&w);
		jsonw_key_str(&w, "major", major.s);
		jsonw_key_str(&w, "minor", dot + 1);
		jsonw_end(&w);
		jsonw_end(&w);
		jsonw_layout(&w, "\n");
		buf_release(&major);
	}
}
