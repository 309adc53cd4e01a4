/*
 * kube_config.h - where a Kubernetes cluster is and how to authenticate to it: kubeconfig files
 * (merged like client-go) and the in-cluster service account. docs/kubernetes.md is the
 * user-facing description.
 *
 * Files: `--kubeconfig FILE` alone (it must exist), else every file listed in KUBECONFIG
 * (':'-separated; empty entries, repeats and missing files are skipped), else ~/.kube/config.
 * Merge rule (client-go's): the first file to define a cluster, user or context name wins and
 * its entry is used whole (later entries of that name are ignored even for fields the first one
 * lacks); current-context comes from the first file that sets a non-empty one. Relative paths
 * (certificate-authority, client-certificate, client-key, tokenFile, and an exec command that
 * contains a '/') resolve against the directory of the file that holds the entry.
 *
 * Precedence inside one entry: *-data fields win over their file forms; tokenFile wins over
 * token; a token (either form) wins over an exec plugin. Not supported (EM_EUNSUPPORTED with a
 * hint): username/password, auth-provider, proxy-url, tls-server-name, exec apiVersion
 * client.authentication.k8s.io/v1alpha1.
 *
 * Ownership: struct kube_target owns every string; kube_target_release wipes the secrets
 * (token, client key, exec env values) before freeing. struct kube_config owns its parsed files
 * and is private to kube_config.c except for the read-only accessors below; targets resolved
 * from it are independent copies. Nothing here holds a secret in an error message: messages
 * name the file, the context, the cluster or user and the field, never a value that may be one.
 */
#ifndef EBSMIGRATE_KUBE_CONFIG_H
#define EBSMIGRATE_KUBE_CONFIG_H

#include <stddef.h>

#include "ebsmigrate/buf.h"

#define KUBE_EXEC_V1 "client.authentication.k8s.io/v1"
#define KUBE_EXEC_V1BETA1 "client.authentication.k8s.io/v1beta1"
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* Names another directory for the in-cluster files (tests, a projected token mounted elsewhere). */
#define KUBE_SA_DIR_ENV "EBSMIGRATE_SERVICEACCOUNT_DIR"

enum kube_interactive {
	KUBE_INTERACTIVE_IF_AVAILABLE = 0, /* v1beta1's default */
	KUBE_INTERACTIVE_NEVER,
	KUBE_INTERACTIVE_ALWAYS,           /* cannot run: ebsmigrate never gives plugins a terminal */
};

struct kube_env_var {
	char *name;
	char *value; /* may be a secret (AWS keys): never printed */
};

/* users[].user.exec */
struct kube_exec {
	char *api_version;       /* KUBE_EXEC_V1 or KUBE_EXEC_V1BETA1 */
	char *command;           /* as written, or made absolute when it held a '/' */
	char **args;
	size_t n_args;
	struct kube_env_var *env;
	size_t n_env;
	enum kube_interactive interactive_mode;
	int provide_cluster_info;
	char *install_hint;      /* NULL = none */
};

/* Everything needed to talk to one cluster as one user. */
struct kube_target {
	char *context;           /* context name ("in-cluster" for the service account) */
	char *cluster_name;      /* the kubeconfig cluster entry's name */
	char *user_name;         /* NULL = anonymous */
	char *origin;            /* for messages: "kubeconfig '/home/me/.kube/config'" */
	char *server;            /* "https://host:port[/prefix]", no trailing '/' */
	char *namespace_;        /* context namespace; "default" when unset */
	char *ca_file;           /* absolute or as given; NULL when ca_pem or the system store */
	char *ca_pem;            /* decoded certificate-authority-data */
	int insecure;            /* insecure-skip-tls-verify */
	char *client_cert_file, *client_key_file;
	char *client_cert_pem, *client_key_pem; /* decoded *-data; the key is secret */
	char *token;             /* secret; NULL when token_file or none */
	char *token_file;        /* re-read at every use (rotated service-account tokens) */
	int has_exec;
	struct kube_exec exec;
	int in_cluster;
};

void kube_target_release(struct kube_target *t);
/* dst receives deep copies of src's fields (dst is overwritten, not released first). */
void kube_target_copy(struct kube_target *dst, const struct kube_target *src);

/* ---- kubeconfig ---- */

struct kube_config_file;  /* private: one parsed file */
struct kube_config_entry; /* private: a named cluster, user or context */

struct kube_config {
	char *label;             /* "kubeconfig '/a/config'" or "kubeconfig '/a/config:/b/config'" */
	struct kube_config_file *files;
	size_t n_files;
	char *current_context;   /* NULL = none set */
	struct kube_config_entry *clusters, *users, *contexts;
	size_t n_clusters, n_users, n_contexts;
	size_t alloc_clusters, alloc_users, alloc_contexts;
};

/* Loads and merges the kubeconfig files (rules at the top). explicit_path is --kubeconfig (NULL =
 * KUBECONFIG, then ~/.kube/config). EM_ENOTFOUND when no file exists (the message says where it
 * looked), EM_EINPUT for a file that is not a kubeconfig (message: file, line, column), EM_EIO. */
int kube_config_load(struct kube_config *out, const char *explicit_path, struct buf *err);
void kube_config_release(struct kube_config *c);

/* Context names in merged order (first file first, then file order); borrowed. */
size_t kube_config_n_contexts(const struct kube_config *c);
const char *kube_config_context_name(const struct kube_config *c, size_t i);

/* Resolves one context (NULL = current-context) into out, reading and decoding everything it
 * references except tokenFile (read at use). Errors (EM_ENOTFOUND, EM_EINPUT, EM_EUNSUPPORTED)
 * name the file and the entry, e.g.
 *   "kubeconfig '/x/config': context 'prod' names user 'admin' which is not defined" */
int kube_config_resolve(struct kube_target *out, const struct kube_config *c, const char *context,
			struct buf *err);

/* The in-cluster target: sa_dir (NULL = $EBSMIGRATE_SERVICEACCOUNT_DIR, else KUBE_SA_DIR) holds token, ca.crt and namespace; the
 * server is https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT. EM_ENOTFOUND when those
 * variables are unset or the token file is missing. */
int kube_in_cluster_target(struct kube_target *out, const char *sa_dir, struct buf *err);

/* ---- what a command asks for ---- */

struct kube_selection {
	const char *kubeconfig;  /* --kubeconfig; NULL = KUBECONFIG / ~/.kube/config */
	const char *context;     /* --context; NULL = current-context */
	int all_contexts;        /* --all-contexts: every context, one per API server URL */
	const char *sa_dir;      /* in-cluster directory; NULL = KUBE_SA_DIR */
};

/* Resolves the selection into targets (caller frees with kube_targets_free). Without any
 * kubeconfig file and without --kubeconfig/--context, falls back to the in-cluster service
 * account when KUBERNETES_SERVICE_HOST is set. With all_contexts, a context whose server URL an
 * earlier context already selected is skipped (the same cluster is not read twice); any
 * context that does not resolve fails the whole selection. */
int kube_targets_load(struct kube_target **out, size_t *n_out, const struct kube_selection *sel, struct buf *err);
void kube_targets_free(struct kube_target *t, size_t n);

/* Strict base64 (standard alphabet, padding optional, whitespace ignored) appended to out.
 * Returns 0 or EM_EINPUT. Shared with the client for exec credentials and the manifest reader
 * (kube_manifest_read.c: YAML !!binary values). */
int kube_base64_decode(struct buf *out, const char *in, size_t len);

#endif
