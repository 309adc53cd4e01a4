/*
 * scope.c - the scoping flags' one meaning (see scope.h): a volume, plan row or ledger row is
 * judged by scope_matches; scope_filter_fleet narrows a fleet before planning, reporting or
 * printing; scope_live_selected_pvcs evaluates -l through the API server where only the PVC's
 * name is known (apply, status).
 *
 * Invariants: filters of one kind OR, kinds AND; a namespace or selector filter never keeps a
 * volume without a PVC; -A disables -n and nothing else.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_pvc.h"
#include "ebsmigrate/scope.h"

void scope_add(const char ***arr, size_t *n, const char *value)
{
	const char **a = xrealloc((void *)*arr, (*n + 1) * sizeof *a);
	a[(*n)++] = value;
	*arr = a;
}

int scope_set_selector(struct scope *s, const char *text, struct buf *err)
{
	selector_release(&s->selector);
	s->selector_text = NULL;
	int rc = selector_parse(&s->selector, text, err);
	if (!rc)
		s->selector_text = text;
	return rc;
}

void scope_release(struct scope *s)
{
	free((void *)s->namespaces);
	free((void *)s->contexts);
	free((void *)s->regions);
	free((void *)s->accounts);
	free((void *)s->volumes);
	selector_release(&s->selector);
	memset(s, 0, sizeof *s);
}

int scope_by_namespace(const struct scope *s)
{
	return s->n_namespaces && !s->all_namespaces;
}

int scope_active(const struct scope *s)
{
	return scope_by_namespace(s) || s->selector_text || s->n_contexts || s->n_regions || s->n_accounts ||
	       s->n_volumes;
}

static int one_of(const char *v, const char *const *list, size_t n)
{
	if (!n)
		return 1;
	for (size_t i = 0; v && i < n; i++)
		if (strcmp(v, list[i]) == 0)
			return 1;
	return 0;
}

int scope_matches(const struct scope *s, const struct scope_subject *x)
{
	if (!one_of(x->volume_id, s->volumes, s->n_volumes) || !one_of(x->region, s->regions, s->n_regions) ||
	    !one_of(x->account, s->accounts, s->n_accounts) || !one_of(x->cluster, s->contexts, s->n_contexts))
		return 0;
	int has_pvc = x->pvc && x->namespace_;
	if ((scope_by_namespace(s) || s->selector_text) && !has_pvc)
		return 0;
	if (scope_by_namespace(s) && !one_of(x->namespace_, s->namespaces, s->n_namespaces))
		return 0;
	if (s->selector_text && x->labels_known && !selector_matches(&s->selector, x->labels, x->n_labels))
		return 0;
	return 1;
}

struct scope_subject scope_subject_of(const struct volume *v)
{
	const struct kube_binding *k = v->kube;
	struct scope_subject x = {v->volume_id, v->region, v->account, NULL, NULL, NULL, NULL, 0, 1};
	if (k) {
		x.cluster = k->cluster;
		x.namespace_ = k->namespace_;
		x.pvc = k->pvc;
		x.labels = k->labels;
		x.n_labels = k->n_labels;
	}
	return x;
}

void scope_stats_release(struct scope_stats *st)
{
	free(st->unknown_namespaces);
	memset(st, 0, sizeof *st);
}

void scope_filter_fleet(const struct scope *s, struct fleet *f, struct scope_stats *st)
{
	memset(st, 0, sizeof *st);
	st->before = st->kept = f->n;
	if (!scope_active(s))
		return;
	unsigned char *keep = xcalloc(f->n ? f->n : 1, 1);
	struct strmap seen_ns = STRMAP_INIT;
	for (size_t i = 0; i < f->n; i++) {
		struct scope_subject x = scope_subject_of(&f->vols[i]);
		keep[i] = (unsigned char)scope_matches(s, &x);
		if (x.namespace_ && x.pvc)
			strmap_put(&seen_ns, x.namespace_, 1);
	}
	if (scope_by_namespace(s))
		for (size_t i = 0; i < s->n_namespaces; i++) {
			size_t dummy;
			if (!strmap_get(&seen_ns, s->namespaces[i], &dummy))
				scope_add(&st->unknown_namespaces, &st->n_unknown_namespaces, s->namespaces[i]);
		}
	strmap_release(&seen_ns);
	fleet_retain(f, keep);
	free(keep);
	st->kept = f->n;
}

static void describe_list(struct buf *out, const char *flag, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_addf(out, "%s%s %s", out->len ? " " : "", flag, v[i]);
}

void scope_describe(const struct scope *s, struct buf *out)
{
	if (scope_by_namespace(s))
		describe_list(out, "-n", s->namespaces, s->n_namespaces);
	if (s->selector_text)
		buf_addf(out, "%s-l '%s'", out->len ? " " : "", s->selector_text);
	describe_list(out, "--context", s->contexts, s->n_contexts);
	describe_list(out, "--region", s->regions, s->n_regions);
	describe_list(out, "--account", s->accounts, s->n_accounts);
	describe_list(out, "--volume", s->volumes, s->n_volumes);
}

/* ---- -l through the API server ---- */

struct selected {
	struct strmap *keys; /* "CLUSTER/NS/NAME" of every matching PVC */
	const char *cluster; /* the cluster being listed */
};

static int collect_keys(void *ctx, const char *json, size_t len, unsigned page, struct buf *err)
{
	struct selected *sel = ctx;
	(void)page; /* a restarted list only adds the same keys again */
	cJSON *j = cJSON_ParseWithLength(json, len);
	if (!j)
		return em_err(err, EM_ESERVER, "cluster '%s': the PersistentVolumeClaim list is not JSON", sel->cluster);
	const cJSON *pvc;
	cJSON_ArrayForEach(pvc, jsonx_get(j, "items"))
	{
		const char *ns = jsonx_path_str(pvc, "metadata.namespace"), *name = jsonx_path_str(pvc, "metadata.name");
		if (!ns || !name)
			continue;
		struct buf k = BUF_INIT;
		buf_addf(&k, "%s/%s/%s", sel->cluster, ns, name);
		strmap_put(sel->keys, k.s, 1);
		buf_release(&k);
	}
	cJSON_Delete(j);
	return 0;
}

int scope_live_selected_pvcs(struct kube_conns *kcs, const char *selector, const char *cluster, struct strmap *keys,
			     struct buf *err)
{
	struct kube_conn *kc = kube_conn_for(kcs, cluster);
	if (!kc->ok)
		return em_err(err, EM_ENET, "--selector: cannot reach cluster '%s': %s", cluster, kc->error);
	struct buf path = BUF_INIT, kerr = BUF_INIT;
	buf_adds(&path, "/api/v1/persistentvolumeclaims?labelSelector=");
	buf_add_urlencoded(&path, selector, 1);
	struct selected sel = {keys, cluster};
	int rc = kube_list(&kc->kc, path.s, collect_keys, &sel, &kerr);
	if (rc)
		rc = em_err(err, rc, "--selector '%s': cluster '%s': %s", selector, cluster, kerr.s);
	buf_release(&path);
	buf_release(&kerr);
	return rc;
}
