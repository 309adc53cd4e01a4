/*
 * kube_client.h - a Kubernetes API client for one context: credentials (static token, token
 * file, client certificate, exec plugins, native EKS tokens), GET/list/patch/create/delete with
 * Status errors, server version, VolumeAttributesClass discovery (kube_client.c; exec plugins and
 * EKS tokens in kube_exec.c), and the inventory read that feeds kube_objects_load
 * (kube_inventory.c). docs/kubernetes.md is the user-facing description.
 *
 * Credentials, in order: tokenFile (re-read for every request), token, exec plugin, client
 * certificate (TLS, alongside any of the others). Exec credentials are cached in the client until
 * their expirationTimestamp (or, without one, until the server answers 401, which refreshes them
 * once and retries the request). An exec plugin that is `aws [..] eks get-token --cluster-name N`
 * or `aws-iam-authenticator token -i N` is not run: the token is made here from the AWS
 * credentials chain (aws_credential_chain.h; the plugin's env keys/profile/region are honoured) and
 * cached 14 minutes; the binary runs only when the chain has no credentials.
 *
 * Plugins run without a shell (posix_spawn), stdin /dev/null, env = ours + exec.env +
 * KUBERNETES_EXEC_INFO, with a timeout. A failing plugin's message carries its exit status and the
 * first line of its stderr, never its stdout.
 *
 * Errors: functions return 0 or a negative EM_E* code and append one message that starts with
 * "context 'NAME': " and names the method and path (never the query, a token or a key):
 *   401/403 -> EM_EAUTH, 404 -> EM_ENOTFOUND, 409 -> EM_ECONFLICT, other 4xx/5xx -> EM_ESERVER
 *   (each quoting the Status message), EM_ETHROTTLED when 429s outlast the retries (http.c retries
 *   429 and 5xx honouring Retry-After), EM_ENET, EM_EAUTH for credentials that cannot be had.
 *
 * Ownership: the client owns a copy of its target and everything it caches; the secrets are
 * wiped on release. Bodies are appended to the caller's bufs. One client is used by one thread.
 */
#ifndef EBSMIGRATE_KUBE_CLIENT_H
#define EBSMIGRATE_KUBE_CLIENT_H

#include <stdint.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/progress.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/kube_config.h"

struct kube_set;
struct fleet;
struct aws_credentials_provider;

/* What an exec plugin (or the native EKS path) produced. */
struct kube_credential {
	char *token;            /* secret */
	char *client_cert_pem;
	char *client_key_pem;   /* secret */
	time_t expires;         /* 0 = the plugin gave no expirationTimestamp */
};

void kube_credential_release(struct kube_credential *c);

/* Runs t's exec plugin once (protocol at the top) and parses its ExecCredential.
 * EM_EAUTH on any failure (not found, timeout, exit status, unusable output), EM_EUNSUPPORTED for
 * interactiveMode Always. timeout_ms 0 = 60000. */
int kube_exec_run(struct kube_credential *out, const struct kube_target *t, long timeout_ms, struct buf *err);

/* Parses an exec plugin's stdout as kube_exec_run does (t names the plugin and its apiVersion);
 * exposed for the unit tests and the fuzz harness. */
int kube_exec_credential_parse(struct kube_credential *out, const char *text, size_t len, const struct kube_target *t,
			       struct buf *err);

/* An exec plugin that is an EKS token generator, as parsed from its command and args. */
struct kube_eks_args {
	char *cluster;          /* --cluster-name / --cluster-id / -i: the x-k8s-aws-id value */
	char *region;           /* --region; NULL = env, profile, then the global STS endpoint */
	char *role_arn;         /* --role-arn / -r / --role; NULL = none */
	char *profile;          /* --profile; NULL = env / default */
	char *session_name;     /* -s / --session-name; NULL = "EKSGetTokenAuth" */
	int authenticator;      /* 1 = aws-iam-authenticator, 0 = aws cli */
};

/* 1 and out filled when e is `aws ... eks get-token ...` or `aws-iam-authenticator token ...`
 * with only options this module understands; 0 (out empty) otherwise. */
int kube_eks_args_parse(struct kube_eks_args *out, const struct kube_exec *e);
void kube_eks_args_release(struct kube_eks_args *a);

struct kube_client_options {
	long timeout_ms;         /* per attempt; 0 = 60000 */
	long connect_timeout_ms; /* 0 = 10000 */
	int max_attempts;        /* 0 = http.c's default (5) */
	long backoff_base_ms, backoff_max_ms; /* 0 = http.c's defaults */
	double rate, burst;      /* requests/s to this cluster; 0 = 20 (burst 40); negative = unlimited */
	int list_limit;          /* 0 = 500 */
	int max_list_restarts;   /* 0 = 3: a list that expires more often fails with EM_ESERVER */
	long exec_timeout_ms;    /* 0 = 60000 */
	int no_native_eks;       /* run EKS token plugins instead of signing natively */
	int concurrency;         /* kube_inventory_load: lists and kubelet stats read at once
				  * (workers sharing the bucket); 0 or 1 = one after another */
	progress_fn progress;    /* may be NULL: kube_inventory_load's lists and kubelet stats */
	void *progress_ctx;
	time_t (*clock)(void);   /* credential expiry, EKS signing: real time; NULL = time(NULL) */
	/* Passed through to http.c (tests). */
	int64_t (*clock_ms)(void *ctx);
	void (*sleep_ms)(void *ctx, int64_t ms);
	uint64_t (*random)(void *ctx);
	void *inject_ctx;
};

/* Fields are private to kube_client.c and kube_exec.c except the counters. */
struct kube_client {
	struct kube_target target;
	struct kube_client_options opt;
	struct http_client http;
	int http_ready;
	unsigned http_cert_gen;  /* cred_gen the http client's TLS identity was built with */
	char *rate_key;
	struct kube_credential cred; /* exec / EKS credential cache */
	int have_cred;
	unsigned cred_gen;
	int eks_native;          /* 1 while the native EKS path is in use */
	struct kube_eks_args eks;
	struct http_client *aws_http;            /* lazily, for the credentials chain */
	struct aws_credentials_provider *aws;    /* lazily */
	char *server_version;    /* "1.33" after kube_server_version */
	struct http_client *rates_from; /* a worker's parent's HTTP client: its token buckets */
	/* Counters, for callers and tests. */
	unsigned list_restarts;  /* lists restarted from the start after 410 Expired */
	unsigned exec_runs;      /* exec plugin runs */
	unsigned eks_tokens;     /* native EKS tokens made */
};

/* Copies t; no network until the first request. Transport security is checked here, for every
 * command: a target that carries credentials (token, tokenFile, exec plugin, client certificate)
 * and an http:// server is refused with EM_EINPUT naming the context, the user and the server,
 * unless kube_client_allow_insecure_http(1) was called (--allow-insecure-http); that, and
 * insecure-skip-tls-verify, print a log_security_warning (even under -q) each time. */
int kube_client_init(struct kube_client *c, const struct kube_target *t, const struct kube_client_options *opt,
		     struct buf *err);
/* --allow-insecure-http: set once during option parsing (like --now); default 0. */
void kube_client_allow_insecure_http(int allow);
void kube_client_release(struct kube_client *c);
/* A client for another thread reading the same cluster (kube_inventory_load's lists): a copy
 * of parent's target and options, sharing parent's token bucket (the cluster's rate limit holds
 * across threads) and starting with parent's credential (obtained first, on this thread, when
 * parent has none yet), so no exec plugin runs per thread. Call it on the thread that owns
 * parent; parent must outlive w. kube_client_release_worker adds w's counters to parent's and
 * releases w (on parent's thread, after w's thread is done). */
int kube_client_init_worker(struct kube_client *w, struct kube_client *parent, struct buf *err);
void kube_client_release_worker(struct kube_client *parent, struct kube_client *w);

/* Paths below are API paths as they go on the wire ("/api/v1/nodes/NAME/proxy/stats/summary"),
 * already percent-encoded, and may carry their own "?query". Build every path that holds a name
 * with kube_pathf. A path with an empty, "." or ".." segment, or a '#', is refused (EM_EINPUT)
 * before anything is sent: no name can make a request reach another resource.
 *
 * GET path (query, when not NULL/empty, is appended). The
 * answer's body is appended to body (also on error) and its status stored in *status (0 when
 * none arrived); either may be NULL. 0 for 2xx, else the codes at the top. */
int kube_get(struct kube_client *c, const char *path, const char *query, struct buf *body, long *status,
	     struct buf *err);

/* Called with each list page's JSON text; page is 0 for the first page and again 0 when the list
 * restarted after 410 Expired (discard what earlier pages gave). Return 0 or a negative code to
 * stop the list (its message in err). */
typedef int (*kube_page_fn)(void *ctx, const char *json, size_t len, unsigned page, struct buf *err);

/* Lists path with limit + continue, page by page. A 410 Expired on a continued page restarts
 * the list from the start (c->list_restarts counts it) up to max_list_restarts times. */
int kube_list(struct kube_client *c, const char *path, kube_page_fn fn, void *ctx, struct buf *err);

/* PATCH with Content-Type application/merge-patch+json; the answer (the object) goes to out. */
int kube_patch_merge(struct kube_client *c, const char *path, const char *json, struct buf *out, struct buf *err);
/* POST json to a collection path; the created object goes to out. 409 AlreadyExists -> EM_ECONFLICT. */
int kube_create(struct kube_client *c, const char *collection_path, const char *json, struct buf *out,
		struct buf *err);
/* DELETE path (e.g. ".../jobs/x?propagationPolicy=Background"); the answer goes to out. */
int kube_delete(struct kube_client *c, const char *path, struct buf *out, struct buf *err);

/* Appends to out the API path fmt describes, each %s being one path segment made from a name
 * (namespace, object name, node, version): percent-encoded (RFC 3986 unreserved characters
 * kept; '/', '?', '#', '%' and every other byte encoded) and a whole "." or ".." segment written
 * %2E, so no name can add, drop or climb a segment or start a query. fmt holds only %s and %%
 * conversions: kube_pathf(&p, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", ns, name). */
void kube_pathf(struct buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One segment as kube_pathf writes each %s (NULL as an empty segment, which requests refuse). */
void kube_path_segment(struct buf *out, const char *name);

/* 1 when s[0..n) is a Kubernetes object name as the API server checks it: a DNS-1123 label
 * (dots 0: namespaces, at most 63) or subdomain (dots 1: most object names, at most 253) of
 * lower-case letters, digits, '-' and '.', starting and ending with a letter or digit. */
int kube_dns_name_ok(const char *s, size_t n, int dots);
/* 1 when s may name the cluster (kubeconfig context) of a plan's or ledger's volume: a DNS-1123
 * subdomain (kube_dns_name_ok), or the context names EKS tools give by default: the cluster ARN
 * of `aws eks update-kubeconfig` (arn:aws:eks:REGION:ACCOUNT:cluster/NAME) and eksctl's
 * IDENTITY@CLUSTER.REGION.eksctl.io. */
int kube_cluster_name_ok(const char *s);

/* GET /version: *version_out (caller frees; may be NULL) = "MAJOR.MINOR" with the minor's digits
 * only (EKS says "33+"); raw_out (may be NULL) receives the JSON. Also kept in c->server_version. */
int kube_server_version(struct kube_client *c, char **version_out, struct buf *raw_out, struct buf *err);

/* Which storage.k8s.io version serves volumeattributesclasses: "v1", "v1beta1", "v1alpha1" or
 * NULL (none), preferring the newest. *out is a static string. */
int kube_vac_api_version(struct kube_client *c, const char **out, struct buf *err);

/* What kube_inventory_load reads. */
enum {
	KUBE_INV_VERSION = 1u << 0,
	KUBE_INV_PVS = 1u << 1,
	KUBE_INV_PVCS = 1u << 2,
	KUBE_INV_STORAGECLASSES = 1u << 3,
	KUBE_INV_VACS = 1u << 4,          /* when served */
	KUBE_INV_STATEFULSETS = 1u << 5,
	KUBE_INV_PODS = 1u << 6,
	KUBE_INV_NODES = 1u << 7,
	KUBE_INV_USAGE = 1u << 8,         /* kubelet stats/summary per node (implies nodes) */
	KUBE_INV_ALL = 0xffu,             /* everything but usage */
};

/* Reads the cluster into ks and f under cluster_name (the fleet's cluster label): each list is
 * read page by page into scratch sets and moved into ks/f once complete, so a restarted list
 * never leaves duplicates. Usage that cannot be read is not fatal: 403 adds the notice
 * "volume usage unavailable in cluster 'NAME': forbidden" and stops asking; other per-node
 * failures add a notice naming the node. Returns 0 or the first list's error. With
 * c->opt.concurrency > 1 the lists, then the nodes' stats, are read at once on worker clients
 * (kube_client_init_worker) and joined in the sequential order: ks and f come out the same. */
int kube_inventory_load(struct kube_client *c, const char *cluster_name, struct kube_set *ks, struct fleet *f,
			unsigned what, struct buf *err);
/* Moves src's PVs, PVCs, uses, nodes and usage to the end of dst (a PV or PVC dst already
 * holds is dropped, as kube_objects_load would); src is left released. */
void kube_set_move(struct kube_set *dst, struct kube_set *src);
/* Moves src's StorageClasses, StatefulSets, VACs, notices, clusters and cluster versions to
 * the end of dst (one entry per cluster and name, the first kept); src is left released. Used
 * to merge what a cluster (or a node) read on its own thread, in the sequential order. */
void kube_fleet_move(struct fleet *dst, struct fleet *src);

#endif
