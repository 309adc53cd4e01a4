/*
 * kube_pvc.c - the clusters the apply ledger names, and their PVCs' VolumeAttributesClass state,
 * shared by apply (submitting and reconciling the vac route) and status (verifying it).
 *
 * Entry points: kube_conn_for, kube_conns_release, kube_pvc_read, pvc_state_release.
 *
 * Invariants: a cluster's connection is built once per struct kube_conns, whatever the
 * outcome: a cluster that cannot be reached is asked once, not once per volume. The ledger's
 * cluster name is the kubeconfig context that reaches it (plan records contexts as clusters).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_config.h"
#include "ebsmigrate/kube_pvc.h"

void kube_conns_release(struct kube_conns *k)
{
	for (size_t i = 0; i < k->n; i++) {
		if (k->v[i].ok)
			kube_client_release(&k->v[i].kc);
		free(k->v[i].cluster);
		free(k->v[i].error);
		free(k->v[i].sidecar_note);
	}
	free(k->v);
	memset(k, 0, sizeof *k);
}

struct kube_conn *kube_conn_for(struct kube_conns *k, const char *cluster)
{
	for (size_t i = 0; i < k->n; i++)
		if (strcmp(k->v[i].cluster, cluster) == 0)
			return &k->v[i];
	k->v = xrealloc(k->v, (k->n + 1) * sizeof *k->v);
	struct kube_conn *c = &k->v[k->n++];
	memset(c, 0, sizeof *c);
	c->cluster = xstrdup(cluster);
	struct kube_selection sel = {k->kubeconfig, cluster, 0, NULL};
	struct kube_target *t = NULL;
	size_t n = 0;
	struct buf err = BUF_INIT;
	if (kube_targets_load(&t, &n, &sel, &err) || n == 0) {
		c->error = xstrdup(err.len ? err.s : "no kubeconfig context");
	} else if (kube_client_init(&c->kc, &t[0], NULL, &err)) {
		c->error = xstrdup(err.s);
	} else {
		c->ok = 1;
		if (kube_vac_api_version(&c->kc, &c->vac_version, &err))
			c->error = xstrdup(err.s);
		else if (!c->vac_version)
			c->error = xstrdup("the cluster does not serve VolumeAttributesClass (storage.k8s.io)");
	}
	kube_targets_free(t, n);
	buf_release(&err);
	return c;
}

void pvc_state_release(struct pvc_state *p)
{
	free(p->spec_class), free(p->current_class), free(p->modify_status), free(p->modify_target), free(p->error);
	free(p->ann_type), free(p->ann_iops), free(p->ann_tput);
	memset(p, 0, sizeof *p);
}

int kube_pvc_read(struct kube_conn *c, const char *ns, const char *name, struct pvc_state *out, struct buf *err)
{
	memset(out, 0, sizeof *out);
	struct buf path = BUF_INIT, body = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", ns, name);
	long status = 0;
	int rc = kube_get(&c->kc, path.s, NULL, &body, &status, err);
	if (!rc) {
		cJSON *j = cJSON_ParseWithLength(body.s, body.len);
		out->spec_class = xstrdup(jsonx_path_str(j, "spec.volumeAttributesClassName"));
		out->current_class = xstrdup(jsonx_path_str(j, "status.currentVolumeAttributesClassName"));
		out->modify_status = xstrdup(jsonx_path_str(j, "status.modifyVolumeStatus.status"));
		out->modify_target = xstrdup(jsonx_path_str(j, "status.modifyVolumeStatus.targetVolumeAttributesClassName"));
		const cJSON *ann = jsonx_path(j, "metadata.annotations");
		out->ann_type = xstrdup(jsonx_str(ann, ANN_TYPE));
		out->ann_iops = xstrdup(jsonx_str(ann, ANN_IOPS));
		out->ann_tput = xstrdup(jsonx_str(ann, ANN_TPUT));
		const cJSON *cond;
		cJSON_ArrayForEach(cond, jsonx_path(j, "status.conditions"))
		{
			const char *type = jsonx_str(cond, "type");
			if (!out->error && type && strstr(type, "ModifyVolumeError")) {
				out->error = xstrdup(jsonx_str(cond, "message"));
				const char *at = jsonx_str(cond, "lastTransitionTime");
				if (!at || em_parse_time(at, &out->error_time))
					out->error_time = 0;
			}
		}
		cJSON_Delete(j);
	}
	buf_release(&path);
	buf_release(&body);
	return rc;
}

int kube_pvc_annotations_match(const struct pvc_state *ps, const char *type, int64_t iops, int64_t tput)
{
	char i[32], t[32];
	snprintf(i, sizeof i, "%lld", (long long)iops);
	snprintf(t, sizeof t, "%lld", (long long)tput);
	return ps->ann_type && type && strcmp(ps->ann_type, type) == 0 && ps->ann_iops && strcmp(ps->ann_iops, i) == 0 &&
	       ps->ann_tput && strcmp(ps->ann_tput, t) == 0;
}
