/*
 * kube_configmap.c - ConfigMap references from the command line and reading one key
 * (kube_configmap.h).
 *
 * Entry points: kube_configmap_ref_parse, kube_configmap_ref_release, kube_configmap_get,
 * kube_configmap_value_parse (the answer's reader; fuzzed: tests/fuzz/fuzz_configmap.c).
 *
 * Invariants: a parsed namespace is a DNS-1123 label and a name a DNS-1123 subdomain, so both go
 * into an API path unescaped; the answer is parsed with cJSON and no cJSON value leaves here.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_configmap.h"

static int key_ok(const char *s)
{
	if (!*s || strlen(s) > 253)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("-._", *s)))
			return 0;
	return 1;
}

int kube_configmap_ref_parse(struct kube_configmap_ref *out, const char *arg, int with_key, struct buf *err)
{
	memset(out, 0, sizeof *out);
	const char *slash = strchr(arg, '/');
	const char *eq = with_key ? strchr(arg, '=') : NULL;
	const char *name = slash ? slash + 1 : NULL;
	size_t name_len = name ? (eq && eq > name ? (size_t)(eq - name) : strlen(name)) : 0;
	if (!slash || !kube_dns_name_ok(arg, (size_t)(slash - arg), 0) || !kube_dns_name_ok(name, name_len, 1) ||
	    (with_key && (!eq || eq < name || !key_ok(eq + 1))))
		return em_err(err, EM_EINPUT,
			      "'%s' is not NAMESPACE/NAME%s (lower-case letters, digits and '-'; the name may have '.'%s)",
			      arg, with_key ? "=KEY" : "", with_key ? "; the key letters, digits, '-', '.', '_'" : "");
	out->ns = xstrndup(arg, (size_t)(slash - arg));
	out->name = xstrndup(name, name_len);
	out->key = with_key ? xstrdup(eq + 1) : NULL;
	return 0;
}

void kube_configmap_ref_release(struct kube_configmap_ref *r)
{
	free(r->ns);
	free(r->name);
	free(r->key);
	memset(r, 0, sizeof *r);
}

int kube_configmap_value_parse(const char *json, size_t len, const char *key, char **value_out, struct buf *err)
{
	*value_out = NULL;
	cJSON *j = cJSON_ParseWithLength(json, len);
	const char *kind = j ? jsonx_str(j, "kind") : NULL;
	int rc = 0;
	if (!kind || strcmp(kind, "ConfigMap") != 0) {
		rc = em_err(err, EM_ESERVER, "the answer is not a ConfigMap");
	} else {
		const cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
		const cJSON *v = cJSON_IsObject(data) && key ? cJSON_GetObjectItemCaseSensitive(data, key) : NULL;
		if (cJSON_IsString(v))
			*value_out = xstrdup(v->valuestring);
	}
	cJSON_Delete(j);
	return rc;
}

int kube_configmap_get(struct kube_client *c, const struct kube_configmap_ref *ref, char **value_out, int *exists_out,
		       struct buf *err)
{
	*value_out = NULL;
	*exists_out = 0;
	struct buf path = BUF_INIT, body = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/configmaps/%s", ref->ns, ref->name);
	long status = 0;
	struct buf e = BUF_INIT;
	int rc = kube_get(c, path.s, NULL, &body, &status, &e);
	if (rc == EM_ENOTFOUND) {
		rc = 0;
	} else if (rc) {
		em_err(err, rc, "%s", e.s);
	} else {
		buf_reset(&e);
		rc = kube_configmap_value_parse(body.s, body.len, ref->key, value_out, &e);
		if (rc)
			em_err(err, rc, "GET %s: %s", path.s, e.s);
		else
			*exists_out = 1;
	}
	buf_release(&e);
	buf_release(&path);
	buf_release(&body);
	return rc;
}
