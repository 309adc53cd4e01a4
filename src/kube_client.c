/*
 * kube_client.c - the Kubernetes API client for one context (contract in kube_client.h).
 *
 * Entry points: kube_client_init / kube_client_release, kube_get, kube_list, kube_patch_merge,
 * kube_create, kube_delete, kube_server_version, kube_vac_api_version;
 * kube_exec_run, kube_eks_args_parse, kube_credential_release; kube_pathf / kube_path_segment
 * (every API path built from a name), kube_dns_name_ok, kube_cluster_name_ok.
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
 * - Exec plugins never get a shell or a terminal; they are killed at the timeout.
 * - No name changes the shape of a path: callers build paths with kube_pathf (each name one
 *   percent-encoded segment), and a path with an empty, "." or ".." segment, or a fragment, is
 *   refused before it is sent (curl would drop or climb such segments).
 *
 * The cluster inventory read over this transport (lists of kinds, kubelet stats, merging) is
 * kube_inventory.c.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_credential_chain.h"
#include "ebsmigrate/aws_sts.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/proc.h"
#include "ebsmigrate/secbuf.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/paging.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/volume.h"

#define EXEC_STDOUT_MAX (1u << 20)
#define EXEC_STDERR_MAX (64u << 10)
#define CRED_REFRESH_MARGIN_S 10
#define EKS_SESSION_NAME "EKSGetTokenAuth"

/* ---- small helpers ---- */

static time_t now_s(const struct kube_client *c)
{
	return c->opt.clock ? c->opt.clock() : time(NULL);
}

/* "context 'prod': user 'eks-admin': exec plugin 'aws'" */
static void plugin_who(struct buf *b, const struct kube_target *t)
{
	buf_addf(b, "context '%s': user '%s': exec plugin '%s'", t->context ? t->context : "?",
		 t->user_name ? t->user_name : "?", t->exec.command ? t->exec.command : "?");
}

void kube_credential_release(struct kube_credential *c)
{
	secbuf_free_str(c->token);
	free(c->client_cert_pem);
	secbuf_free_str(c->client_key_pem);
	memset(c, 0, sizeof *c);
}

/* ---- exec plugins ---- */

static const char *exec_env(const struct kube_target *t, const char *name)
{
	for (size_t i = 0; i < t->exec.n_env; i++)
		if (strcmp(t->exec.env[i].name, name) == 0)
			return t->exec.env[i].value;
	return NULL;
}

/* KUBERNETES_EXEC_INFO: the ExecCredential the plugin reads, one line of compact JSON. */
static void exec_info_json(struct buf *out, const struct kube_target *t)
{
	struct jsonw w;
	jsonw_init(&w, out, JSONW_COMPACT);
	jsonw_object(&w);
	jsonw_key_str(&w, "apiVersion", t->exec.api_version);
	jsonw_key_str(&w, "kind", "ExecCredential");
	jsonw_key_object(&w, "spec");
	jsonw_key_bool(&w, "interactive", 0);
	if (t->exec.provide_cluster_info) {
		jsonw_key_object(&w, "cluster");
		jsonw_key_str(&w, "server", t->server);
		if (t->insecure)
			jsonw_key_bool(&w, "insecure-skip-tls-verify", 1);
		struct buf ca = BUF_INIT, ignore = BUF_INIT;
		if (t->ca_pem)
			buf_adds(&ca, t->ca_pem);
		else if (t->ca_file)
			em_read_file_max(t->ca_file, EM_MAX_LIST_FILE, &ca, &ignore);
		if (ca.len) {
			/* []byte fields travel as standard base64 in JSON */
			char *b64 = xmalloc(4 * ((ca.len + 2) / 3) + 1);
			EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)ca.s, (int)ca.len);
			jsonw_key_str(&w, "certificate-authority-data", b64);
			free(b64);
		}
		buf_release(&ca);
		buf_release(&ignore);
		jsonw_end(&w);
	}
	jsonw_end_n(&w, 2);
}

/* environ + exec.env (overriding) + KUBERNETES_EXEC_INFO; caller frees with proc_env_free. */
static char **plugin_envp(const struct kube_target *t, const char *exec_info)
{
	struct proc_env_var *vars = xcalloc(t->exec.n_env + 1, sizeof *vars);
	for (size_t i = 0; i < t->exec.n_env; i++)
		vars[i] = (struct proc_env_var){t->exec.env[i].name, t->exec.env[i].value};
	vars[t->exec.n_env] = (struct proc_env_var){"KUBERNETES_EXEC_INFO", exec_info};
	char **envp = proc_env_build(vars, t->exec.n_env + 1);
	free(vars);
	return envp;
}

/* The first non-empty line of a plugin's stderr, trimmed, printable, at most 300 bytes. */
static void first_line(struct buf *out, const struct buf *text)
{
	const char *p = text->s;
	while (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t')
		p++;
	size_t n = strcspn(p, "\r\n");
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n > 300)
		n = 300;
	for (size_t i = 0; i < n; i++)
		buf_addc(out, (unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i]);
}

static int parse_exec_credential(struct kube_credential *out, struct buf *text, const struct kube_target *t,
				 const char *who, struct buf *err)
{
	cJSON *root = cJSON_ParseWithLength(text->s, text->len);
	int rc = 0;
	if (!cJSON_IsObject(root)) {
		rc = em_err(err, EM_EAUTH, "%s: output is not an ExecCredential (not a JSON object)", who);
		goto out;
	}
	const char *kind = jsonx_str(root, "kind"), *av = jsonx_str(root, "apiVersion");
	if (!kind || strcmp(kind, "ExecCredential") != 0) {
		rc = em_err(err, EM_EAUTH, "%s: output is not an ExecCredential (kind)", who);
		goto out;
	}
	if (!av || strcmp(av, t->exec.api_version) != 0) {
		rc = em_err(err, EM_EAUTH, "%s: answered with another apiVersion than the configured %s", who,
			    t->exec.api_version);
		goto out;
	}
	const cJSON *st = jsonx_get(root, "status");
	if (!cJSON_IsObject(st)) {
		rc = em_err(err, EM_EAUTH, "%s: ExecCredential has no status", who);
		goto out;
	}
	const char *token = jsonx_str(st, "token");
	const char *cert = jsonx_str(st, "clientCertificateData"), *key = jsonx_str(st, "clientKeyData");
	if ((cert && *cert) != (key && *key)) {
		rc = em_err(err, EM_EAUTH, "%s: ExecCredential status has %s without %s", who,
			    cert && *cert ? "clientCertificateData" : "clientKeyData",
			    cert && *cert ? "clientKeyData" : "clientCertificateData");
		goto out;
	}
	if (!(token && *token) && !(cert && *cert)) {
		rc = em_err(err, EM_EAUTH,
			    "%s: ExecCredential status has neither a token nor clientCertificateData and clientKeyData", who);
		goto out;
	}
	if (token && strpbrk(token, "\r\n")) {
		rc = em_err(err, EM_EAUTH, "%s: ExecCredential token contains a line break", who);
		goto out;
	}
	const cJSON *exp = jsonx_get(st, "expirationTimestamp");
	if (exp && !cJSON_IsNull(exp)) {
		if (!cJSON_IsString(exp) || em_parse_time(exp->valuestring, &out->expires) != 0) {
			rc = em_err(err, EM_EAUTH, "%s: status.expirationTimestamp is not an RFC 3339 time", who);
			goto out;
		}
	}
	out->token = token && *token ? xstrdup(token) : NULL;
	out->client_cert_pem = cert && *cert ? xstrdup(cert) : NULL;
	out->client_key_pem = key && *key ? xstrdup(key) : NULL;
out:
	if (root) {
		secbuf_wipe_json(root);
		cJSON_Delete(root);
	}
	if (rc)
		kube_credential_release(out);
	return rc;
}

int kube_exec_credential_parse(struct kube_credential *out, const char *text, size_t len, const struct kube_target *t,
			       struct buf *err)
{
	memset(out, 0, sizeof *out);
	struct buf who = BUF_INIT, copy = BUF_INIT;
	plugin_who(&who, t);
	buf_add(&copy, text, len);
	int rc = parse_exec_credential(out, &copy, t, who.s, err);
	secbuf_release(&copy);
	buf_release(&who);
	return rc;
}

int kube_exec_run(struct kube_credential *out, const struct kube_target *t, long timeout_ms, struct buf *err)
{
	memset(out, 0, sizeof *out);
	struct buf who = BUF_INIT, info = BUF_INIT;
	char *path = NULL;
	int rc = 0;
	plugin_who(&who, t);
	if (!t->has_exec) {
		rc = em_err(err, EM_EINPUT, "%s: no exec plugin configured", who.s);
		goto out;
	}
	if (t->exec.interactive_mode == KUBE_INTERACTIVE_ALWAYS) {
		rc = em_err(err, EM_EUNSUPPORTED,
			    "%s: needs an interactive terminal (interactiveMode: Always), which ebsmigrate never provides",
			    who.s);
		goto out;
	}
	/* As client-go: looked up on our PATH, the plugin's env does not change where. */
	path = proc_find_program(t->exec.command);
	if (!path) {
		rc = em_err(err, EM_EAUTH, "%s: command not found%s%s", who.s, t->exec.install_hint ? "; " : "",
			    t->exec.install_hint ? t->exec.install_hint : "");
		goto out;
	}
	if (timeout_ms <= 0)
		timeout_ms = 60000;
	char **argv = xcalloc(t->exec.n_args + 2, sizeof(char *));
	argv[0] = t->exec.command;
	for (size_t i = 0; i < t->exec.n_args; i++)
		argv[i + 1] = t->exec.args[i];
	exec_info_json(&info, t);
	char **envp = plugin_envp(t, info.s);
	/* stdin /dev/null, no shell, no terminal; killed at the timeout; output holds secrets. */
	struct proc_options po = {
		.path = path, .argv = argv, .envp = envp, .stdout_cap = EXEC_STDOUT_MAX,
		.stderr_cap = EXEC_STDERR_MAX, .timeout_ms = timeout_ms, .secret = 1,
	};
	struct proc_result r;
	int ran = proc_run(&r, &po);
	proc_env_free(envp);
	free(argv);
	if (ran != 0) {
		rc = em_err(err, EM_EAUTH, "%s: cannot run '%s': %s", who.s, path, strerror(r.start_errno));
	} else if (r.timed_out) {
		rc = em_err(err, EM_EAUTH, "%s: timed out after %ld ms", who.s, timeout_ms);
	} else if (WIFSIGNALED(r.status) || (WIFEXITED(r.status) && WEXITSTATUS(r.status) != 0)) {
		struct buf line = BUF_INIT;
		first_line(&line, &r.err);
		if (WIFSIGNALED(r.status))
			rc = em_err(err, EM_EAUTH, "%s: killed by signal %d%s%s", who.s, WTERMSIG(r.status),
				    line.len ? ": " : "", line.s);
		else
			rc = em_err(err, EM_EAUTH, "%s: exited with status %d: %s", who.s, WEXITSTATUS(r.status),
				    line.len ? line.s : "(nothing on stderr)");
		buf_release(&line);
	} else {
		rc = parse_exec_credential(out, &r.out, t, who.s, err);
	}
	proc_result_release(&r);
out:
	buf_release(&who);
	free(path);
	secbuf_release(&info);
	return rc;
}

/* ---- EKS token plugins ---- */

void kube_eks_args_release(struct kube_eks_args *a)
{
	EM_FREE_ALL(a->cluster, a->region, a->role_arn, a->profile, a->session_name);
	memset(a, 0, sizeof *a);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* "--name value" or "--name=value": 1 and *val set; 0 when args[*i] is not this option;
 * -1 when the value is missing. */
static int opt_value(const struct kube_exec *e, size_t *i, const char *name, const char **val)
{
	const char *a = e->args[*i];
	size_t nl = strlen(name);
	if (strncmp(a, name, nl) != 0)
		return 0;
	if (a[nl] == '=') {
		*val = a + nl + 1;
		return 1;
	}
	if (a[nl] != '\0')
		return 0;
	if (*i + 1 >= e->n_args)
		return -1;
	*val = e->args[++*i];
	return 1;
}

struct eks_opt {
	const char *name;
	size_t field; /* offsetof in kube_eks_args, or (size_t)-1 = accepted and ignored */
};

#define EKS_IGNORE ((size_t)-1)

static int eks_parse(struct kube_eks_args *out, const struct kube_exec *e, const struct eks_opt *opts,
		     const char *const *positional, const char *const *flags)
{
	size_t pos = 0;
	for (size_t i = 0; i < e->n_args; i++) {
		const char *a = e->args[i], *val = NULL;
		int matched = 0;
		for (const struct eks_opt *o = opts; o->name && !matched; o++) {
			int r = opt_value(e, &i, o->name, &val);
			if (r < 0)
				return 0;
			if (r == 0)
				continue;
			matched = 1;
			if (o->field != EKS_IGNORE) {
				char **slot = (char **)((char *)out + o->field);
				free(*slot);
				*slot = xstrdup(val);
			}
		}
		for (const char *const *f = flags; *f && !matched; f++)
			matched = strcmp(a, *f) == 0;
		if (matched)
			continue;
		if (a[0] == '-' || !positional[pos] || strcmp(a, positional[pos]) != 0)
			return 0; /* an option or a word we do not understand: leave it to the binary */
		pos++;
	}
	return !positional[pos] && out->cluster && *out->cluster;
}

int kube_eks_args_parse(struct kube_eks_args *out, const struct kube_exec *e)
{
	memset(out, 0, sizeof *out);
	if (!e || !e->command)
		return 0;
	const char *cmd = base_name(e->command);
	int ok = 0;
	if (strcmp(cmd, "aws") == 0) {
		static const struct eks_opt opts[] = {
			{"--region", offsetof(struct kube_eks_args, region)},
			{"--profile", offsetof(struct kube_eks_args, profile)},
			{"--cluster-name", offsetof(struct kube_eks_args, cluster)},
			{"--cluster-id", offsetof(struct kube_eks_args, cluster)},
			{"--role-arn", offsetof(struct kube_eks_args, role_arn)},
			{"--output", EKS_IGNORE},
			{"--color", EKS_IGNORE},
			{NULL, 0},
		};
		static const char *const positional[] = {"eks", "get-token", NULL};
		static const char *const flags[] = {"--debug", "--no-cli-pager", "--no-paginate", NULL};
		ok = eks_parse(out, e, opts, positional, flags);
	} else if (strcmp(cmd, "aws-iam-authenticator") == 0) {
		static const struct eks_opt opts[] = {
			{"--cluster-id", offsetof(struct kube_eks_args, cluster)},
			{"-i", offsetof(struct kube_eks_args, cluster)},
			{"--role", offsetof(struct kube_eks_args, role_arn)},
			{"-r", offsetof(struct kube_eks_args, role_arn)},
			{"--region", offsetof(struct kube_eks_args, region)},
			{"--session-name", offsetof(struct kube_eks_args, session_name)},
			{"-s", offsetof(struct kube_eks_args, session_name)},
			{NULL, 0},
		};
		static const char *const positional[] = {"token", NULL};
		static const char *const flags[] = {"--token-only", NULL};
		ok = eks_parse(out, e, opts, positional, flags);
		out->authenticator = 1;
	}
	if (!ok)
		kube_eks_args_release(out);
	return ok;
}

static int aws_http_ready(struct kube_client *c, struct buf *err)
{
	if (c->aws_http)
		return 0;
	struct http_options o = {0};
	o.ca_file = exec_env(&c->target, "AWS_CA_BUNDLE"); /* NULL: http.c reads ours */
	o.timeout_ms = 30000;
	o.connect_timeout_ms = 5000;
	/* STS calls for EKS tokens retry like every other AWS call (AWS_MAX_ATTEMPTS, AWS_RETRY_MODE) */
	struct aws_retry_config retry;
	int rc = aws_retry_config_resolve(&retry, c->eks.profile, err);
	if (rc)
		return rc;
	aws_retry_config_apply(&retry, &o);
	c->aws_http = xcalloc(1, sizeof *c->aws_http);
	rc = http_client_init(c->aws_http, &o, err);
	if (rc) {
		free(c->aws_http);
		c->aws_http = NULL;
	}
	return rc;
}

/* A native EKS token into out. Returns 0, 1 when the AWS credentials chain has nothing (why says
 * so; the caller runs the binary instead), or a negative code with the message in err. */
static int eks_native_token(struct kube_client *c, struct kube_credential *out, struct buf *why, struct buf *err)
{
	const struct kube_target *t = &c->target;
	const struct kube_eks_args *a = &c->eks;
	struct aws_credentials statc = {0}, assumed = {0};
	const struct aws_credentials *creds = NULL;
	struct buf e = BUF_INIT, tok = BUF_INIT, who = BUF_INIT;
	char *region = NULL;
	int rc = 0;
	buf_addf(&who, "context '%s': user '%s': eks token for cluster '%s'", t->context, t->user_name ? t->user_name : "?",
		 a->cluster);

	const char *profile = a->profile;
	if (!profile) {
		const char *p = exec_env(t, "AWS_PROFILE");
		if (!p)
			p = exec_env(t, "AWS_DEFAULT_PROFILE");
		/* as in the plugin's process: environment keys outrank AWS_PROFILE */
		if (p && !(getenv("AWS_ACCESS_KEY_ID") && getenv("AWS_SECRET_ACCESS_KEY")))
			profile = p;
	}
	const char *r = a->region;
	if (!r)
		r = exec_env(t, "AWS_REGION");
	if (!r)
		r = exec_env(t, "AWS_DEFAULT_REGION");
	if (aws_region_resolve(&region, r, profile, &e) != 0) {
		region = NULL; /* no region anywhere: the global STS endpoint, as EKS accepts */
		buf_reset(&e);
	}

	const char *akid = exec_env(t, "AWS_ACCESS_KEY_ID"), *secret = exec_env(t, "AWS_SECRET_ACCESS_KEY");
	if (akid && *akid && secret && *secret) {
		statc.access_key_id = xstrdup(akid);
		statc.secret_access_key = xstrdup(secret);
		const char *st = exec_env(t, "AWS_SESSION_TOKEN");
		statc.session_token = st && *st ? xstrdup(st) : NULL;
		statc.source = xstrdup("exec plugin environment");
		creds = &statc;
	} else {
		if ((rc = aws_http_ready(c, &e)) != 0) {
			rc = em_err(err, rc, "%s: %s", who.s, e.s);
			goto out;
		}
		if (!c->aws) {
			struct aws_credentials_options ao = {0};
			ao.profile = profile;
			ao.region = region;
			ao.http = c->aws_http;
			ao.clock = c->opt.clock;
			c->aws = xcalloc(1, sizeof *c->aws);
			aws_credentials_provider_init(c->aws, &ao);
		}
		rc = aws_credentials_provider_get(c->aws, &creds, &e);
		if (rc == EM_EAUTH || rc == EM_EUNSUPPORTED) {
			buf_addf(why, "%s: no usable AWS credentials (%s)", who.s, e.s);
			rc = 1;
			goto out;
		}
		if (rc) {
			rc = em_err(err, rc, "%s: %s", who.s, e.s);
			goto out;
		}
	}
	if (a->role_arn) {
		if ((rc = aws_http_ready(c, &e)) != 0) {
			rc = em_err(err, rc, "%s: %s", who.s, e.s);
			goto out;
		}
		struct aws_assume_role_params p = {0};
		p.role_arn = a->role_arn;
		p.session_name = a->session_name ? a->session_name : EKS_SESSION_NAME;
		rc = aws_sts_assume_role(&assumed, c->aws_http, region, creds, &p, &e);
		if (rc) {
			rc = em_err(err, rc, "%s: %s", who.s, e.s);
			goto out;
		}
		creds = &assumed;
	}
	time_t exp = 0;
	rc = aws_eks_token(&tok, &exp, a->cluster, region, creds, now_s(c), &e);
	if (rc) {
		rc = em_err(err, rc, "%s: %s", who.s, e.s);
		goto out;
	}
	if (creds->expiration && creds->expiration < exp)
		exp = creds->expiration;
	out->token = buf_detach(&tok);
	out->expires = exp;
	c->eks_tokens++;
out:
	aws_credentials_release(&statc);
	aws_credentials_release(&assumed);
	free(region);
	secbuf_release(&tok);
	buf_release(&e);
	buf_release(&who);
	return rc;
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
		rc = eks_native_token(c, &nc, &why, err);
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
