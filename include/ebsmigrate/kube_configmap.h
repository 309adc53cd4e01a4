/*
 * kube_configmap.h - naming a ConfigMap on the command line (NS/NAME, NS/NAME=KEY) and reading
 * one of its keys through kube_client: what `report --publish-configmap` writes to and what
 * `apply --require-configmap` reads its switch from (kube_configmap.c).
 *
 * Errors: 0 or a negative EM_E* code with one message in err; EM_EINPUT for a malformed
 * argument (names must be DNS labels/subdomains, keys ConfigMap keys: [-._a-zA-Z0-9]+).
 * Ownership: a parsed reference owns its strings (kube_configmap_ref_release frees them);
 * kube_configmap_get's *value_out is the caller's.
 */
#ifndef EBSMIGRATE_KUBE_CONFIGMAP_H
#define EBSMIGRATE_KUBE_CONFIGMAP_H

#include "ebsmigrate/buf.h"

struct kube_client;

struct kube_configmap_ref {
	char *ns, *name;
	char *key; /* NS/NAME=KEY; NULL for NS/NAME */
};
/* with_key: the argument must be NS/NAME=KEY; else NS/NAME. */
int kube_configmap_ref_parse(struct kube_configmap_ref *out, const char *arg, int with_key, struct buf *err);
void kube_configmap_ref_release(struct kube_configmap_ref *r);

/* GETs the ConfigMap and its data[ref->key]: *value_out is that value (heap), or NULL when the
 * ConfigMap or the key does not exist (*exists_out says which: 0 no ConfigMap, 1 it exists).
 * Other failures (forbidden, unreachable, not a ConfigMap answer) are errors. */
int kube_configmap_get(struct kube_client *c, const struct kube_configmap_ref *ref, char **value_out, int *exists_out,
		       struct buf *err);

/* The reader of the GET answer: data[key] of a ConfigMap JSON object (*value_out NULL when the key
 * is missing or not a string); EM_ESERVER when the text is not a ConfigMap. Exposed for the fuzz
 * harness. */
int kube_configmap_value_parse(const char *json, size_t len, const char *key, char **value_out, struct buf *err);

#endif
