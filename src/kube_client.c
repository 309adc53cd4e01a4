/*
 * kube_client.c - the Kubernetes API client for one context (contract in kube_client.h).
 *
 * Entry points: kube_client_init / kube_client_release, kube_get, kube_list, kube_patch_merge,
 * kube_create, kube_delete, kube_server_version, kube_vac_api_version; kube_pathf /
 * kube_path_segment (every API path built from a name), kube_dns_name_ok, kube_cluster_name_ok.
 * The credentials a program makes (exec plugins, the native EKS token) are kube_exec.c's; this
 * file caches them and asks for fresh ones (refresh_credential).
 *
 * Request path: authorize (token file / token / cached exec or EKS credential, refreshed when
 * expired) -> make sure the HTTP client carries the current TLS identity -> http_send (retries
 * 429/5xx with Retry-After, rate limit per context) -> one retry with fresh credentials after a
 * 401 when the credential was dynamic -> Status error mapping.
 *
 * Invariants:
 * - No global state: credential caches, the AWS provider and counters live in struct kube_client;
 *   the one exception is --allow-insecure-http, set once during option parsing.
 * - Credentials never travel over plain HTTP without --allow-insecure-http; every weakening of
 *   transport security (that flag, insecure-skip-tls-verify) is a warning -q cannot silence.
 * - Secrets (tokens, keys, exec env values, plugin stdout) are wiped before their memory is
 *   freed; messages carry the context, user, method and path, never a query or a credential.
 * - No name changes the shape of a path: callers build paths with kube_pathf (each name one
 *   percent-encoded segment), and a path with an empty, "." or ".." segment, or a fragment, is
 *   refused before it is sent (curl would drop or climb such segments).
 *
 * The cluster inventory read over this transport (lists of kinds, kubelet stats, merging) is
 * kube_inventory.c.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ebsmigrate/aws_credential_chain.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/secbuf.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/paging.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/volume.h"
#include "kube_client_internal.h"

#define CRED_REFRESH_MARGIN_S 10

/* ---- small helpers ---- */

static time_t now_s(const struct kube_client *c)
{
	return c->opt.clock ? c->opt.clock() : time(NULL);
}

/* ---- credentials and the HTTP client ---- */

static int refresh_credential(struct kube_client *c, struct buf *err)
{
	kube_credential_release(&c->cred);
	c->have_cred = 0;
	struct kube_credential nc = {0};
	int rc;
	if (c->eks_native) {
		struct buf why = BUF_INIT, e = BUF_INIT;
		rc = kube_eks_native_token(c, &nc, &why, err);
		if (rc == 1) {
			/* The chain has nothing: the plugin may know more (SSO, credential_process). */
			c->eks_native = 0;
			c->exec_runs++;
			rc = kube_exec_run(&nc, &c->target, c->opt.exec_timeout_ms, &e);
			if (rc)
				em_err(err, rc, "%s; running the plugin instead: %s", why.s, e.s);
		}
		buf_release(&why);
		buf_release(&e);
	} else {
		c->exec_runs++;
		rc = kube_exec_run(&nc, &c->target, c->opt.exec_timeout_ms, err);
	}
	if (rc)
		return rc;
	c->cred = nc;
	c->have_cred = 1;
	c->cred_gen++;
	return 0;
}

static int http_setup(struct kube_client *c, struct buf *err)
{
	const struct kube_target *t = &c->target;
	int use_cred_cert = c->have_cred && c->cred.client_cert_pem;
	if (c->http_ready && (!use_cred_cert || c->http_cert_gen == c->cred_gen))
		return 0;
	if (c->http_ready)
		http_client_release(&c->http);
	c->http_ready = 0;
	struct http_options o = {0};
	o.connect_timeout_ms = c->opt.connect_timeout_ms;
	o.timeout_ms = c->opt.timeout_ms;
	o.max_attempts = c->opt.max_attempts;
	o.backoff_base_ms = c->opt.backoff_base_ms;
	o.backoff_max_ms = c->opt.backoff_max_ms;
	o.default_rate = c->opt.rate;
	o.default_burst = c->opt.burst;
	o.ca_file = t->ca_file;
	o.ca_pem = t->ca_pem;
	o.no_env_ca = 1;
	o.insecure = t->insecure;
	if (use_cred_cert) {
		o.client_cert_pem = c->cred.client_cert_pem;
		o.client_key_pem = c->cred.client_key_pem;
	} else {
		o.client_cert_file = t->client_cert_file;
		o.client_key_file = t->client_key_file;
		o.client_cert_pem = t->client_cert_pem;
		o.client_key_pem = t->client_key_pem;
	}
	o.clock_ms = c->opt.clock_ms;
	o.sleep_ms = c->opt.sleep_ms;
	o.random = c->opt.random;
	o.inject_ctx = c->opt.inject_ctx;
	struct buf e = BUF_INIT;
	int rc = http_client_init(&c->http, &o, &e);
	if (rc)
		em_err(err, rc, "context '%s': %s", t->context, e.s);
	else
		c->http_ready = 1;
	if (!rc && c->rates_from) /* a worker: the cluster's one bucket, whoever sends */
		http_client_share_rates(&c->http, c->rates_from);
	c->http_cert_gen = c->cred_gen;
	buf_release(&e);
	return rc;
}

static void add_bearer(struct http_headers *h, const char *token)
{
	struct buf v = BUF_INIT;
	buf_addf(&v, "Bearer %s", token);
	http_headers_set(h, "Authorization", v.s);
	secbuf_release(&v);
}

/* Adds Authorization (if any credential gives a token). *dynamic = 1 when the credential came
 * from a plugin (a 401 then deserves one refresh). */
static int authorize(struct kube_client *c, struct http_headers *h, int force_refresh, int *dynamic, struct buf *err)
{
	const struct kube_target *t = &c->target;
	*dynamic = 0;
	if (t->token_file) {
		struct buf tok = BUF_INIT, e = BUF_INIT;
		int rc = em_read_file_max(t->token_file, EM_MAX_TOKEN_FILE, &tok, &e);
		while (!rc && tok.len && strchr(" \t\r\n", tok.s[tok.len - 1]))
			tok.s[--tok.len] = '\0';
		if (!rc && (tok.len == 0 || strpbrk(tok.s, "\r\n")))
			rc = em_err(&e, EM_EAUTH, "token file '%s' is empty or holds several lines", t->token_file);
		if (rc)
			em_err(err, EM_EAUTH, "context '%s': user '%s': %s", t->context, t->user_name ? t->user_name : "?",
			       e.s);
		else
			add_bearer(h, tok.s);
		secbuf_release(&tok);
		buf_release(&e);
		return rc ? EM_EAUTH : 0;
	}
	if (t->token) {
		add_bearer(h, t->token);
		return 0;
	}
	if (!t->has_exec)
		return 0;
	*dynamic = 1;
	if (force_refresh || !c->have_cred ||
	    (c->cred.expires && now_s(c) + CRED_REFRESH_MARGIN_S >= c->cred.expires)) {
		int rc = refresh_credential(c, err);
		if (rc)
			return rc;
	}
	if (c->cred.token)
		add_bearer(h, c->cred.token);
	return 0;
}

static int insecure_http_allowed;

void kube_client_allow_insecure_http(int allow)
{
	insecure_http_allowed = allow;
}

static int target_has_credentials(const struct kube_target *t)
{
	return t->token || t->token_file || t->has_exec || t->client_cert_file || t->client_cert_pem ||
	       t->client_key_file || t->client_key_pem;
}

/* Refuses (or, when allowed, warns about) credentials over http://; warns about unverified TLS. */
static int check_transport(const struct kube_target *t, struct buf *err)
{
	const char *ctx = t->context ? t->context : t->cluster_name ? t->cluster_name : "?";
	const char *user = t->user_name ? t->user_name : "?";
	if (strncmp(t->server, "http://", 7) == 0 && target_has_credentials(t)) {
		if (!insecure_http_allowed)
			return em_err(err, EM_EINPUT,
				      "context '%s': refusing to send the credentials of user '%s' over plain HTTP to '%s'; "
				      "use an https:// server, or pass --allow-insecure-http",
				      ctx, user, t->server);
		log_security_warning("context '%s': sending the credentials of user '%s' over plain HTTP to '%s' "
				     "(--allow-insecure-http): anyone on the network path can read them",
				     ctx, user, t->server);
	}
	if (t->insecure)
		log_security_warning("context '%s': insecure-skip-tls-verify is set: the certificate of '%s' is NOT "
				     "verified, so anyone on the network path can read the credentials and answer as "
				     "the cluster",
				     ctx, t->server);
	return 0;
}

int kube_client_init(struct kube_client *c, const struct kube_target *t, const struct kube_client_options *opt,
		     struct buf *err)
{
	memset(c, 0, sizeof *c);
	if (!t || !t->server)
		return em_err(err, EM_EINPUT, "kube client: target without a server");
	int trc = check_transport(t, err);
	if (trc)
		return trc;
	kube_target_copy(&c->target, t);
	if (opt)
		c->opt = *opt;
	if (c->opt.rate == 0) {
		c->opt.rate = 20;
		if (c->opt.burst <= 0)
			c->opt.burst = 40;
	}
	if (c->opt.list_limit <= 0)
		c->opt.list_limit = 500;
	if (c->opt.max_list_restarts <= 0)
		c->opt.max_list_restarts = 3;
	if (c->opt.exec_timeout_ms <= 0)
		c->opt.exec_timeout_ms = 60000;
	struct buf k = BUF_INIT;
	buf_addf(&k, "kube:%s", t->context ? t->context : t->server);
	c->rate_key = buf_detach(&k);
	if (t->has_exec && !c->opt.no_native_eks)
		c->eks_native = kube_eks_args_parse(&c->eks, &t->exec);
	int rc = http_setup(c, err);
	if (rc)
		kube_client_release(c);
	return rc;
}

void kube_client_release(struct kube_client *c)
{
	if (c->http_ready)
		http_client_release(&c->http);
	if (c->aws) {
		aws_credentials_provider_release(c->aws);
		free(c->aws);
	}
	if (c->aws_http) {
		http_client_release(c->aws_http);
		free(c->aws_http);
	}
	kube_credential_release(&c->cred);
	kube_eks_args_release(&c->eks);
	kube_target_release(&c->target);
	free(c->rate_key);
	free(c->server_version);
	memset(c, 0, sizeof *c);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* The parent's credential is obtained (if it has none yet) on the calling thread, once, and
 * copied: the workers do not each run the exec plugin or sign an EKS token. */
int kube_client_init_worker(struct kube_client *w, struct kube_client *parent, struct buf *err)
{
	memset(w, 0, sizeof *w);
	const struct kube_target *t = &parent->target;
	if (t->has_exec && !t->token_file && !t->token) {
		struct http_headers h = HTTP_HEADERS_INIT;
		int dynamic = 0;
		int rc = authorize(parent, &h, 0, &dynamic, err);
		http_headers_release(&h);
		if (rc)
			return rc;
	}
	kube_target_copy(&w->target, t);
	w->opt = parent->opt; /* already completed by kube_client_init */
	w->rate_key = xstrdup(parent->rate_key);
	w->eks_native = parent->eks_native;
	if (w->eks_native)
		kube_eks_args_parse(&w->eks, &t->exec);
	if (parent->have_cred) {
		w->cred.token = dup_or_null(parent->cred.token);
		w->cred.client_cert_pem = dup_or_null(parent->cred.client_cert_pem);
		w->cred.client_key_pem = dup_or_null(parent->cred.client_key_pem);
		w->cred.expires = parent->cred.expires;
		w->have_cred = 1;
		w->cred_gen = 1;
	}
	w->rates_from = &parent->http;
	int rc = http_setup(w, err);
	if (rc)
		kube_client_release(w);
	return rc;
}

void kube_client_release_worker(struct kube_client *parent, struct kube_client *w)
{
	parent->list_restarts += w->list_restarts;
	parent->exec_runs += w->exec_runs;
	parent->eks_tokens += w->eks_tokens;
	kube_client_release(w);
}

/* ---- requests ---- */

static const char *status_phrase(long st)
{
	switch (st) {
	case 400: return "bad request";
	case 401: return "unauthorized";
	case 403: return "forbidden";
	case 404: return "not found";
	case 405: return "method not allowed";
	case 406: return "not acceptable";
	case 409: return "conflict";
	case 410: return "gone";
	case 413: return "request entity too large";
	case 415: return "unsupported media type";
	case 422: return "invalid";
	case 429: return "too many requests";
	case 500: return "internal error";
	case 502: return "bad gateway";
	case 503: return "service unavailable";
	case 504: return "gateway timeout";
	default: return st >= 500 ? "server error" : "error";
	}
}

/* The Status message of an error answer (sanitised, at most 500 bytes) into out. */
static void status_message(struct buf *out, const struct http_response *resp)
{
	cJSON *root = cJSON_ParseWithLength(resp->body.s, resp->body.len);
	const char *m = jsonx_str(root, "message");
	if (m) {
		size_t n = strlen(m);
		while (n && strchr(" \t\r\n", m[n - 1]))
			n--;
		if (n > 500)
			n = 500;
		for (size_t i = 0; i < n; i++)
			buf_addc(out, (unsigned char)m[i] < 0x20 ? ' ' : m[i]);
	}
	cJSON_Delete(root);
}

static int status_error(struct kube_client *c, const char *method, const char *path, const struct http_response *resp,
			struct buf *err)
{
	long st = resp->status;
	int code = (st == 401 || st == 403) ? EM_EAUTH : st == 404 ? EM_ENOTFOUND : st == 409 ? EM_ECONFLICT : EM_ESERVER;
	struct buf msg = BUF_INIT;
	status_message(&msg, resp);
	const struct kube_target *t = &c->target;
	em_err(err, code, "context '%s': %s %.*s: %s (HTTP %ld)%s%s", t->context, method, (int)strcspn(path, "?"), path,
	       status_phrase(st), st, msg.len ? ": " : "", msg.s);
	if (st == 401)
		buf_addf(err, "; the server rejected the credentials of %s%s%s", t->user_name ? "user '" : "",
			 t->user_name ? t->user_name : "an anonymous request", t->user_name ? "'" : "");
	buf_release(&msg);
	return code;
}

void kube_path_segment(struct buf *out, const char *name)
{
	if (name && (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)) {
		/* the unreserved '.' is otherwise kept; as a whole segment it would be a dot segment */
		for (; *name; name++)
			buf_adds(out, "%2E");
		return;
	}
	buf_add_urlencoded(out, name ? name : "", 1);
}

void kube_pathf(struct buf *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			buf_addc(out, *p);
			continue;
		}
		p++;
		if (*p == 's')
			kube_path_segment(out, va_arg(ap, const char *));
		else if (*p == '%')
			buf_addc(out, '%');
		else
			abort(); /* a programming error: only %s and %% (see kube_client.h) */
	}
	va_end(ap);
}

/* Whether path (up to its query) has a segment curl or the server would collapse or climb (empty,
 * "." or ".."), or a fragment: what only a name that bypassed kube_pathf can make. */
static int path_shape_ok(const char *path)
{
	size_t n = strcspn(path, "?");
	if (memchr(path, '#', n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (path[i] != '/')
			continue;
		size_t len = strcspn(path + i + 1, "/?");
		if (i + 1 + len > n)
			len = n - i - 1;
		const char *seg = path + i + 1;
		if ((len == 0 && i + 1 < n) || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return 0;
	}
	return 1;
}

static int send_req(struct kube_client *c, const char *method, const char *path, const char *query, const char *ctype,
		    const char *body, struct http_response *resp, struct buf *err)
{
	if (!path_shape_ok(path))
		return em_err(err, EM_EINPUT, "context '%s': %s %.*s: refused: the path has an empty, '.' or '..' segment "
					      "or a fragment (a name that is not a Kubernetes object name)",
			      c->target.context, method, (int)strcspn(path, "?"), path);
	for (int attempt = 0;; attempt++) {
		struct buf url = BUF_INIT;
		buf_adds(&url, c->target.server);
		if (path[0] != '/')
			buf_addc(&url, '/');
		buf_adds(&url, path);
		if (query && *query) {
			buf_addc(&url, strchr(path, '?') ? '&' : '?');
			buf_adds(&url, query);
		}
		struct http_request rq;
		http_request_init(&rq, method, url.s);
		buf_release(&url);
		http_headers_add(&rq.headers, "Accept", "application/json");
		if (ctype)
			http_headers_add(&rq.headers, "Content-Type", ctype);
		if (body)
			buf_adds(&rq.body, body);
		rq.rate_key = c->rate_key;
		int dynamic = 0;
		int rc = authorize(c, &rq.headers, attempt > 0, &dynamic, err);
		if (!rc)
			rc = http_setup(c, err);
		if (!rc) {
			struct buf e = BUF_INIT;
			rc = http_send(&c->http, &rq, resp, &e);
			if (rc)
				em_err(err, rc, "context '%s': %s", c->target.context, e.s);
			buf_release(&e);
		}
		http_request_release(&rq);
		if (rc)
			return rc;
		if (resp->status == 401 && dynamic && attempt == 0)
			continue; /* the plugin's credential may have been revoked early: once more, fresh */
		return 0;
	}
}

static int request(struct kube_client *c, const char *method, const char *path, const char *query, const char *ctype,
		   const char *body, struct buf *out, long *status, struct buf *err)
{
	struct http_response resp;
	http_response_init(&resp);
	int rc = send_req(c, method, path, query, ctype, body, &resp, err);
	if (status)
		*status = resp.status;
	if (out && resp.body.len)
		buf_add(out, resp.body.s, resp.body.len);
	if (!rc && (resp.status < 200 || resp.status > 299))
		rc = status_error(c, method, path, &resp, err);
	http_response_release(&resp);
	return rc;
}

int kube_get(struct kube_client *c, const char *path, const char *query, struct buf *body, long *status, struct buf *err)
{
	return request(c, "GET", path, query, NULL, NULL, body, status, err);
}

int kube_patch_merge(struct kube_client *c, const char *path, const char *json, struct buf *out, struct buf *err)
{
	return request(c, "PATCH", path, NULL, "application/merge-patch+json", json, out, NULL, err);
}

int kube_create(struct kube_client *c, const char *collection_path, const char *json, struct buf *out,
		struct buf *err)
{
	return request(c, "POST", collection_path, NULL, "application/json", json, out, NULL, err);
}

int kube_delete(struct kube_client *c, const char *path, struct buf *out, struct buf *err)
{
	return request(c, "DELETE", path, NULL, NULL, NULL, out, NULL, err);
}

/* ---- lists ---- */

int kube_list(struct kube_client *c, const char *path, kube_page_fn fn, void *ctx, struct buf *err)
{
	struct buf cont = BUF_INIT, query = BUF_INIT;
	unsigned page = 0;
	int restarts = 0, rc = 0;
	struct page_guard guard;
	page_guard_init(&guard, "continue token", 0, "context '%s': list %s", c->target.context, path);
	/* One response reused for every page: http_send resets it, and its buffer (megabytes for a
	 * page of 500 objects) is allocated once instead of per page. */
	struct http_response resp;
	http_response_init(&resp);
	for (;;) {
		buf_reset(&query);
		buf_addf(&query, "limit=%d", c->opt.list_limit);
		if (cont.len) {
			buf_adds(&query, "&continue=");
			buf_add_urlencoded(&query, cont.s, 1);
		}
		rc = send_req(c, "GET", path, query.s, NULL, NULL, &resp, err);
		if (rc) {
			break;
		}
		if (resp.status == 410 && cont.len) {
			if (++restarts > c->opt.max_list_restarts) {
				rc = em_err(err, EM_ESERVER,
					    "context '%s': list %s: the continue token expired %d times; giving up",
					    c->target.context, path, restarts);
				break;
			}
			c->list_restarts++;
			buf_reset(&cont);
			page = 0;
			page_guard_restart(&guard); /* the new list may hand out the same tokens */
			continue;
		}
		if (resp.status < 200 || resp.status > 299) {
			rc = status_error(c, "GET", path, &resp, err);
			break;
		}
		/* Only metadata.continue is needed here: a byte scan, not a second parse of the page. */
		char *next_copy = NULL;
		if (jsonx_scan_member_str(resp.body.s, resp.body.len, "metadata", "continue", &next_copy) < 0) {
			rc = em_err(err, EM_ESERVER, "context '%s': list %s: the answer is not a JSON object",
				    c->target.context, path);
			break;
		}
		if (next_copy && !*next_copy) {
			free(next_copy);
			next_copy = NULL;
		}
		rc = fn(ctx, resp.body.s, resp.body.len, page, err);
		if (rc < 0) {
			free(next_copy);
			break;
		}
		page++;
		if ((rc = page_guard_next(&guard, next_copy, err)) <= 0) {
			free(next_copy);
			break;
		}
		rc = 0;
		buf_reset(&cont);
		buf_adds(&cont, next_copy);
		free(next_copy);
	}
	page_guard_release(&guard);
	http_response_release(&resp);
	buf_release(&cont);
	buf_release(&query);
	return rc;
}

/* ---- version and discovery ---- */

int kube_server_version(struct kube_client *c, char **version_out, struct buf *raw_out, struct buf *err)
{
	if (version_out)
		*version_out = NULL;
	struct buf body = BUF_INIT;
	int rc = kube_get(c, "/version", NULL, &body, NULL, err);
	if (rc) {
		buf_release(&body);
		return rc;
	}
	cJSON *root = cJSON_ParseWithLength(body.s, body.len);
	const char *maj = jsonx_str(root, "major"), *min = jsonx_str(root, "minor");
	if (!maj || !min || !*maj || strlen(maj) > 4 || strspn(maj, "0123456789") != strlen(maj) ||
	    strspn(min, "0123456789") == 0 || strspn(min, "0123456789") > 4) {
		rc = em_err(err, EM_ESERVER, "context '%s': GET /version: no major/minor version in the answer",
			    c->target.context);
	} else {
		struct buf v = BUF_INIT;
		buf_addf(&v, "%s.%.*s", maj, (int)strspn(min, "0123456789"), min);
		free(c->server_version);
		c->server_version = xstrdup(v.s);
		if (version_out)
			*version_out = buf_detach(&v);
		buf_release(&v);
		if (raw_out)
			buf_add(raw_out, body.s, body.len);
	}
	cJSON_Delete(root);
	buf_release(&body);
	return rc;
}

static int serves_resource(const char *json, size_t len, const char *resource)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	int found = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, jsonx_get(root, "resources"))
	{
		const char *n = jsonx_str(r, "name");
		if (n && strcmp(n, resource) == 0)
			found = 1;
	}
	cJSON_Delete(root);
	return found;
}

int kube_dns_name_ok(const char *s, size_t n, int dots)
{
	if (n == 0 || n > (dots ? 253u : 63u))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && !(c == '-' && i && i + 1 < n) && !(dots && c == '.' && i && i + 1 < n))
			return 0;
	}
	return 1;
}

/* An EKS cluster's ARN, as `aws eks update-kubeconfig` names its context:
 * arn:PARTITION:eks:REGION:ACCOUNT:cluster/NAME (NAME: a letter or digit, then up to 99 letters,
 * digits, '-' or '_'). */
static int eks_cluster_arn_ok(const char *s)
{
	static const char *const prefixes[] = {"arn:aws:eks:", "arn:aws-cn:eks:", "arn:aws-us-gov:eks:"};
	const char *p = NULL;
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes && !p; i++)
		if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
			p = s + strlen(prefixes[i]);
	const char *colon = p ? strchr(p, ':') : NULL;
	if (!colon || colon - p > VOLUME_NAME_MAX)
		return 0;
	char region[VOLUME_NAME_MAX + 1];
	memcpy(region, p, (size_t)(colon - p));
	region[colon - p] = '\0';
	p = colon + 1;
	if (!volume_region_ok(region) || strspn(p, "0123456789") != 12 || strncmp(p + 12, ":cluster/", 9) != 0)
		return 0;
	const char *name = p + 21;
	size_t n = strlen(name);
	if (n < 1 || n > 100 || name[0] == '-' || name[0] == '_')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '-' || name[i] == '_'))
			return 0;
	return 1;
}

/* eksctl's context name, IDENTITY@CLUSTER.REGION.eksctl.io: an IAM user or session name (letters,
 * digits and +=,.@_-), then the cluster (EKS names: letters, digits, '-', '_') and region. */
static int eksctl_context_ok(const char *s)
{
	static const char suffix[] = ".eksctl.io";
	const char *at = strrchr(s, '@');
	size_t id_len = at ? (size_t)(at - s) : 0, n = at ? strlen(at + 1) : 0;
	if (id_len == 0 || id_len > 128 || n <= sizeof suffix - 1 || n > 253 ||
	    strcmp(at + 1 + n - (sizeof suffix - 1), suffix) != 0)
		return 0;
	if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+=,.@_-") < id_len)
		return 0;
	const char *host = at + 1;
	size_t words = strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
	return words == n && host[0] != '.' && host[0] != '-' && !strstr(host, "..");
}

int kube_cluster_name_ok(const char *s)
{
	return s && (kube_dns_name_ok(s, strlen(s), 1) || eks_cluster_arn_ok(s) || eksctl_context_ok(s));
}

int kube_vac_api_version(struct kube_client *c, const char **out, struct buf *err)
{
	static const char *const versions[] = {"v1", "v1beta1", "v1alpha1", NULL};
	*out = NULL;
	struct buf body = BUF_INIT, e = BUF_INIT;
	int rc = kube_get(c, "/apis/storage.k8s.io", NULL, &body, NULL, &e);
	if (rc == EM_ENOTFOUND) {
		rc = 0;
		goto out;
	}
	if (rc) {
		em_err(err, rc, "%s", e.s);
		goto out;
	}
	cJSON *group = cJSON_ParseWithLength(body.s, body.len);
	for (int i = 0; versions[i] && !*out && !rc; i++) {
		int listed = 0;
		const cJSON *v;
		cJSON_ArrayForEach(v, jsonx_get(group, "versions"))
		{
			const char *ver = jsonx_str(v, "version");
			if (ver && strcmp(ver, versions[i]) == 0)
				listed = 1;
		}
		if (!listed)
			continue;
		struct buf path = BUF_INIT, list = BUF_INIT;
		kube_pathf(&path, "/apis/storage.k8s.io/%s", versions[i]);
		buf_reset(&e);
		rc = kube_get(c, path.s, NULL, &list, NULL, &e);
		if (rc == EM_ENOTFOUND)
			rc = 0;
		else if (rc)
			em_err(err, rc, "%s", e.s);
		else if (serves_resource(list.s, list.len, "volumeattributesclasses"))
			*out = versions[i];
		buf_release(&path);
		buf_release(&list);
	}
	cJSON_Delete(group);
out:
	buf_release(&body);
	buf_release(&e);
	return rc;
}
