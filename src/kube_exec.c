/*
 * kube_exec.c - the credentials a kubeconfig user gets from a program: exec credential plugins
 * (client.authentication.k8s.io ExecCredential) and the EKS token plugins made natively
 * (contract in kube_client.h).
 *
 * Entry points: kube_exec_run, kube_exec_credential_parse, kube_credential_release,
 * kube_eks_args_parse / kube_eks_args_release; kube_eks_native_token (kube_client_internal.h),
 * which the transport (kube_client.c) calls when its cached credential has expired.
 *
 * Invariants:
 * - Exec plugins run through proc.c, never with a shell or a terminal (stdin /dev/null,
 *   interactiveMode Always refused); they are killed at the timeout.
 * - Secrets (tokens, keys, exec env values, plugin stdout) are wiped before their memory is
 *   freed; messages name the context, the user and the plugin, never a credential.
 * - An EKS token plugin (`aws eks get-token`, `aws-iam-authenticator token`) is not run when the
 *   AWS credentials chain (aws_credential_chain.c) has credentials: the token is signed here with
 *   the plugin's env keys, profile and region honoured; the binary runs only when the chain has
 *   nothing (kube_eks_native_token returns 1).
 * - No global state: the AWS provider, its HTTP client and the counters live in struct kube_client.
 */
#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_credential_chain.h"
#include "ebsmigrate/aws_sts.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/proc.h"
#include "ebsmigrate/secbuf.h"
#include "kube_client_internal.h"

#define EXEC_STDOUT_MAX (1u << 20)
#define EXEC_STDERR_MAX (64u << 10)
#define EKS_SESSION_NAME "EKSGetTokenAuth"

/* ---- the credential value ---- */

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

/* A native EKS token into out (declared in kube_client_internal.h). Returns 0, 1 when the AWS credentials chain has nothing (why says
 * so; the caller runs the binary instead), or a negative code with the message in err. */
int kube_eks_native_token(struct kube_client *c, struct kube_credential *out, struct buf *why, struct buf *err)
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
	rc = aws_eks_token(&tok, &exp, a->cluster, region, creds, c->opt.clock ? c->opt.clock() : time(NULL), &e);
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
