/*
 * aws_credential_chain.c - the AWS credentials chain, the shared config files, region resolution.
 *
 * Entry points: aws_credentials_provider_init / _get / _expire / _release, aws_region_resolve,
 * (the credentials value is in aws_creds.c). The chain's order and error vocabulary are in
 * aws_credential_chain.h; docs/aws.md tells users.
 *
 * Links (each returns 1 = found, 0 = does not apply here, < 0 = applies but failed; a failure
 * stops the chain, as in the AWS CLI, so a broken profile is reported instead of silently
 * falling through to instance metadata). Only a chain where every link returned 0 is "no
 * source" (aws_credentials_provider_found_no_source): callers may then do without AWS, never
 * after a failure. For instance metadata, "does not apply" means nothing answers at the
 * address (connection refused, DNS, timeout: not on EC2, or the hop limit keeps us out) or it
 * says this instance has no role (404); anything that answers with an error or garbage failed.
 *   LINK_ENV, LINK_ROLE, LINK_WEB_IDENTITY, LINK_CREDENTIALS_FILE, LINK_CONFIG_FILE,
 *   LINK_CONTAINER, LINK_IMDS.
 *
 * Invariants:
 * - Secrets live only in struct aws_credentials (and transiently in HTTP bodies and file
 *   buffers, which are wiped); no message quotes a secret, a session token or a web identity
 *   or container authorization token.
 * - Files and environment are read again on every resolution (token files rotate).
 * - Profile settings are looked up in the credentials file first, then the config file
 *   (botocore merges them that way); static keys are taken from each file in turn.
 * - source_profile chains are followed at most MAX_ROLE_DEPTH deep, loops are errors, and a
 *   profile may name itself as source_profile only to use its own static keys.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ebsmigrate/aws_credential_chain.h"
#include "ebsmigrate/aws_creds.h"
#include "ebsmigrate/aws_sts.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/secbuf.h"

#define MAX_ROLE_DEPTH 8
#define IMDS_TOKEN_TTL "21600"

enum link {
	LINK_ENV,
	LINK_ROLE,
	LINK_WEB_IDENTITY,
	LINK_CREDENTIALS_FILE,
	LINK_CONFIG_FILE,
	LINK_CONTAINER,
	LINK_IMDS,
	LINK_COUNT
};

static const char *const link_names[LINK_COUNT] = {
	"environment", "profile role", "web identity", "credentials file", "config file", "container",
	"instance metadata",
};

/* ---- environment helpers ---- */

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static int env_true(const char *name)
{
	const char *v = env(name);
	return v && strcasecmp(v, "true") == 0;
}

/* "~/x" -> "$HOME/x"; other paths unchanged. Caller frees. */
static char *expand_home(const char *path)
{
	struct buf b = BUF_INIT;
	const char *home = env("HOME");
	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && home)
		buf_addf(&b, "%s%s", home, path + 1);
	else
		buf_adds(&b, path);
	return buf_detach(&b);
}

/* Reads a token file, trimming surrounding whitespace. Errors name the file, never the token. */
static int read_token_file(const char *path, struct buf *out, const char *what, struct buf *err)
{
	char *full = expand_home(path);
	struct buf raw = BUF_INIT, e = BUF_INIT;
	int rc = em_read_file_max(full, EM_MAX_TOKEN_FILE, &raw, &e);
	free(full);
	if (rc) {
		em_err(err, rc == EM_ENOTFOUND ? EM_EAUTH : rc, "%s: %s", what, e.s);
		buf_release(&e);
		secbuf_release(&raw);
		return rc == EM_ENOTFOUND ? EM_EAUTH : rc;
	}
	buf_release(&e);
	size_t a = 0, b = raw.len;
	while (a < b && (raw.s[a] == ' ' || raw.s[a] == '\t' || raw.s[a] == '\r' || raw.s[a] == '\n'))
		a++;
	while (b > a && (raw.s[b - 1] == ' ' || raw.s[b - 1] == '\t' || raw.s[b - 1] == '\r' || raw.s[b - 1] == '\n'))
		b--;
	buf_add(out, raw.s + a, b - a);
	secbuf_release(&raw);
	if (out->len == 0)
		return em_err(err, EM_EAUTH, "%s: the token file '%s' is empty", what, path);
	return 0;
}

/* ---- shared config files (INI) ---- */

struct ini_kv {
	char *section; /* profile name (config file: without "profile "); NULL = not a profile */
	char *key;     /* lower case */
	char *value;
};

struct ini {
	struct ini_kv *v;
	size_t n, alloc;
	char **profiles;
	size_t n_profiles, alloc_profiles;
	char *display; /* how messages name the file: "~/.aws/config" or the path given */
};

struct shared_config {
	struct ini credentials, config;
};

static void ini_release(struct ini *ini)
{
	for (size_t i = 0; i < ini->n; i++) {
		free(ini->v[i].section);
		free(ini->v[i].key);
		secbuf_free_str(ini->v[i].value);
	}
	for (size_t i = 0; i < ini->n_profiles; i++)
		free(ini->profiles[i]);
	EM_FREE_ALL(ini->v, ini->profiles, ini->display);
	memset(ini, 0, sizeof *ini);
}

static int ini_has_profile(const struct ini *ini, const char *profile)
{
	for (size_t i = 0; i < ini->n_profiles; i++)
		if (strcmp(ini->profiles[i], profile) == 0)
			return 1;
	return 0;
}

static const char *ini_get(const struct ini *ini, const char *profile, const char *key)
{
	const char *found = NULL;
	for (size_t i = 0; i < ini->n; i++) /* the last assignment wins */
		if (ini->v[i].section && strcmp(ini->v[i].section, profile) == 0 && strcmp(ini->v[i].key, key) == 0)
			found = ini->v[i].value;
	return found && *found ? found : NULL;
}

static char *trimmed(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return xstrndup(s, n);
}

/* Section name -> profile name: the credentials file uses names as they are; the config file
 * uses [default] and [profile NAME] (other sections, like [sso-session x], are not profiles). */
static char *profile_of_section(const char *section, int is_config)
{
	if (!is_config || strcmp(section, "default") == 0)
		return xstrdup(section);
	if (strncmp(section, "profile", 7) == 0 && (section[7] == ' ' || section[7] == '\t')) {
		const char *p = section + 8;
		while (*p == ' ' || *p == '\t')
			p++;
		return *p ? xstrdup(p) : NULL;
	}
	return NULL;
}

static int ini_parse(struct ini *ini, const char *text, int is_config, struct buf *err)
{
	char *section = NULL;
	int lineno = 0, rc = 0;
	for (const char *p = text; *p && rc == 0;) {
		size_t n = strcspn(p, "\n");
		lineno++;
		const char *line = p;
		p += n + (p[n] == '\n');
		size_t i = 0;
		while (i < n && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == n || line[i] == '#' || line[i] == ';' || line[i] == '\r')
			continue;
		if (i > 0)
			continue; /* indented: a nested setting (s3 = ...) or a continuation; not ours */
		if (line[0] == '[') {
			const char *close = memchr(line, ']', n);
			if (!close) {
				rc = em_err(err, EM_EINPUT, "'%s' line %d: section header without ']'", ini->display, lineno);
				break;
			}
			char *raw = trimmed(line + 1, (size_t)(close - line - 1));
			free(section);
			section = profile_of_section(raw, is_config);
			if (section && !ini_has_profile(ini, section)) {
				XGROW(ini->profiles, ini->n_profiles, ini->alloc_profiles);
				ini->profiles[ini->n_profiles++] = xstrdup(section);
			}
			free(raw);
			continue;
		}
		size_t eq = strcspn(line, "=:");
		if (eq >= n) {
			rc = em_err(err, EM_EINPUT, "'%s' line %d: expected 'key = value'", ini->display, lineno);
			break;
		}
		char *key = trimmed(line, eq);
		for (char *k = key; *k; k++)
			if (*k >= 'A' && *k <= 'Z')
				*k = (char)(*k - 'A' + 'a');
		XGROW(ini->v, ini->n, ini->alloc);
		ini->v[ini->n].section = section ? xstrdup(section) : NULL;
		ini->v[ini->n].key = key;
		ini->v[ini->n].value = trimmed(line + eq + 1, n - eq - 1);
		ini->n++;
	}
	free(section);
	return rc;
}

/* Loads one file; a missing file is an empty one. */
static int ini_load(struct ini *ini, const char *env_name, const char *default_rel, int is_config, struct buf *err)
{
	memset(ini, 0, sizeof *ini);
	const char *given = env(env_name);
	char *path;
	if (given) {
		path = expand_home(given);
		ini->display = xstrdup(given);
	} else {
		const char *home = env("HOME");
		if (!home) {
			ini->display = xstrdup(default_rel);
			return 0;
		}
		struct buf b = BUF_INIT;
		buf_addf(&b, "%s/%s", home, default_rel + 2);
		path = buf_detach(&b);
		ini->display = xstrdup(default_rel);
	}
	struct buf text = BUF_INIT, e = BUF_INIT;
	int rc = em_read_file_max(path, EM_MAX_CONFIG_FILE, &text, &e);
	if (rc == EM_ENOTFOUND) {
		rc = 0;
	} else if (rc) {
		em_err(err, rc, "%s", e.s);
	} else {
		rc = ini_parse(ini, text.s, is_config, err);
	}
	free(path);
	buf_release(&e);
	secbuf_release(&text);
	return rc;
}

static int shared_config_load(struct shared_config *sc, struct buf *err)
{
	memset(sc, 0, sizeof *sc);
	int rc = ini_load(&sc->credentials, "AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials", 0, err);
	if (rc == 0)
		rc = ini_load(&sc->config, "AWS_CONFIG_FILE", "~/.aws/config", 1, err);
	return rc;
}

static void shared_config_release(struct shared_config *sc)
{
	ini_release(&sc->credentials);
	ini_release(&sc->config);
}

static int profile_exists(const struct shared_config *sc, const char *profile)
{
	return ini_has_profile(&sc->credentials, profile) || ini_has_profile(&sc->config, profile);
}

/* A profile setting, credentials file first; *from (may be NULL) names the file it came from. */
static const char *profile_get(const struct shared_config *sc, const char *profile, const char *key,
			       const struct ini **from)
{
	const char *v = ini_get(&sc->credentials, profile, key);
	const struct ini *f = &sc->credentials;
	if (!v) {
		v = ini_get(&sc->config, profile, key);
		f = &sc->config;
	}
	if (from)
		*from = v ? f : NULL;
	return v;
}

/* "profile 'x' in FILE" for the file that holds key (or the config file). */
static void profile_where(struct buf *out, const struct shared_config *sc, const char *profile, const char *key)
{
	const struct ini *from = NULL;
	profile_get(sc, profile, key, &from);
	if (!from)
		from = ini_has_profile(&sc->config, profile) || !ini_has_profile(&sc->credentials, profile)
			       ? &sc->config
			       : &sc->credentials;
	buf_addf(out, "profile '%s' in %s", profile, from->display);
}

static int has_static_keys(const struct shared_config *sc, const char *profile)
{
	return profile_get(sc, profile, "aws_access_key_id", NULL) ||
	       profile_get(sc, profile, "aws_secret_access_key", NULL);
}

/* ---- links ---- */

static int link_env(struct aws_credentials *out, struct buf *err)
{
	const char *akid = env("AWS_ACCESS_KEY_ID");
	if (!akid)
		return 0;
	const char *secret = env("AWS_SECRET_ACCESS_KEY");
	if (!secret)
		return em_err(err, EM_EAUTH, "environment: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
	const char *token = env("AWS_SESSION_TOKEN");
	if (!token)
		token = env("AWS_SECURITY_TOKEN");
	time_t exp = 0;
	const char *exp_s = env("AWS_CREDENTIAL_EXPIRATION");
	if (exp_s && em_parse_time(exp_s, &exp) != 0)
		return em_err(err, EM_EINPUT, "environment: AWS_CREDENTIAL_EXPIRATION '%s' is not an RFC 3339 time", exp_s);
	aws_credentials_set(out, akid, secret, token, exp, env("AWS_ACCOUNT_ID"), "environment");
	return 1;
}

/* Static keys of a profile in one file. */
static int link_file_keys(const struct ini *ini, const char *profile, struct aws_credentials *out, struct buf *err)
{
	const char *akid = ini_get(ini, profile, "aws_access_key_id");
	if (!akid)
		return 0;
	const char *secret = ini_get(ini, profile, "aws_secret_access_key");
	if (!secret)
		return em_err(err, EM_EAUTH, "profile '%s' in %s: aws_access_key_id set but no aws_secret_access_key",
			      profile, ini->display);
	const char *token = ini_get(ini, profile, "aws_session_token");
	if (!token)
		token = ini_get(ini, profile, "aws_security_token");
	struct buf src = BUF_INIT;
	buf_addf(&src, "profile '%s' in %s", profile, ini->display);
	aws_credentials_set(out, akid, secret, token, 0, ini_get(ini, profile, "aws_account_id"), src.s);
	buf_release(&src);
	return 1;
}

/* EM_EUNSUPPORTED naming where key is set: "WHERE: <why>`eval ...export-credentials...`<tail>". */
static int refuse_profile(const struct shared_config *sc, const char *profile, const char *key, const char *why,
			  const char *tail, struct buf *err)
{
	struct buf w = BUF_INIT;
	profile_where(&w, sc, profile, key);
	int rc = em_err(err, EM_EUNSUPPORTED,
			"%s: %s`eval \"$(aws configure export-credentials --profile %s --format env)\"`%s", w.s, why,
			profile, tail);
	buf_release(&w);
	return rc;
}

/* Settings the chain cannot use: SSO (before the credentials file, like the CLI) and
 * credential_process (after it). */
static int unsupported_sso(const struct shared_config *sc, const char *profile, struct buf *err)
{
	if (!profile_get(sc, profile, "sso_start_url", NULL) && !profile_get(sc, profile, "sso_session", NULL))
		return 0;
	return refuse_profile(sc, profile,
			      profile_get(sc, profile, "sso_session", NULL) ? "sso_session" : "sso_start_url",
			      "IAM Identity Center (SSO) profiles are not supported; run `aws sso login` and ", " first",
			      err);
}

static int unsupported_process(const struct shared_config *sc, const char *profile, struct buf *err)
{
	if (!profile_get(sc, profile, "credential_process", NULL))
		return 0;
	return refuse_profile(sc, profile, "credential_process",
			      "credential_process is not supported; export the credentials first with ", "", err);
}

static const char *host_of_url(const char *url, struct buf *out)
{
	const char *h = strstr(url, "://");
	h = h ? h + 3 : url;
	size_t n = strcspn(h, "/?#");
	const char *at = NULL;
	for (size_t i = 0; i < n; i++)
		if (h[i] == '@')
			at = h + i;
	if (at) {
		n -= (size_t)(at + 1 - h);
		h = at + 1;
	}
	if (*h == '[') {
		const char *close = memchr(h, ']', n);
		buf_add(out, h + 1, close ? (size_t)(close - h - 1) : n - 1);
	} else {
		buf_add(out, h, strcspn(h, ":/?#"));
	}
	return out->s;
}

/* Plain-HTTP container endpoints must be local: loopback, the ECS agent or EKS Pod Identity. */
static int container_host_allowed(const char *url)
{
	if (strncasecmp(url, "https://", 8) == 0)
		return 1;
	if (strncasecmp(url, "http://", 7) != 0)
		return 0;
	struct buf host = BUF_INIT;
	host_of_url(url, &host);
	int ok = strncmp(host.s, "127.", 4) == 0 || strcasecmp(host.s, "localhost") == 0 || strcmp(host.s, "::1") == 0 ||
		 strcmp(host.s, "169.254.170.2") == 0 || strcmp(host.s, "169.254.170.23") == 0 ||
		 strcasecmp(host.s, "fd00:ec2::23") == 0;
	buf_release(&host);
	return ok;
}

/* The JSON both the container endpoint and instance metadata answer with. */
static int creds_from_json(struct aws_credentials *out, const struct buf *body, const char *what, const char *source,
			   int need_expiration, struct buf *err)
{
	cJSON *j = cJSON_ParseWithLength(body->s, body->len);
	if (!j || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return em_err(err, EM_ESERVER, "%s: the answer is not a JSON object", what);
	}
	int rc = 0;
	const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "Code"));
	const char *akid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "AccessKeyId"));
	const char *secret = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "SecretAccessKey"));
	const char *token = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "Token"));
	const char *exp_s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "Expiration"));
	const char *account = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "AccountId"));
	time_t exp = 0;
	if (code && strcmp(code, "Success") != 0) {
		const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "Message"));
		rc = em_err(err, EM_EAUTH, "%s: %s%s%s", what, code, msg ? ": " : "", msg ? msg : "");
	} else if (!akid || !*akid || !secret || !*secret) {
		rc = em_err(err, EM_ESERVER, "%s: the answer lacks AccessKeyId or SecretAccessKey", what);
	} else if (exp_s && em_parse_time(exp_s, &exp) != 0) {
		rc = em_err(err, EM_ESERVER, "%s: cannot read Expiration '%s'", what, exp_s);
	} else if (need_expiration && !exp_s) {
		rc = em_err(err, EM_ESERVER, "%s: the answer lacks Expiration", what);
	} else {
		aws_credentials_set(out, akid, secret, token, exp, account, source);
	}
	secbuf_wipe_json(j); /* the secrets cJSON copied */
	cJSON_Delete(j);
	return rc;
}

static int link_container(struct aws_credentials_provider *p, struct aws_credentials *out, struct buf *err)
{
	const char *rel = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	if (!rel && !full)
		return 0;
	if (!p->http)
		return em_err(err, EM_EINPUT, "container credentials: no http client to fetch them with");
	struct buf url = BUF_INIT, what = BUF_INIT, auth = BUF_INIT, e = BUF_INIT;
	int rc = 0;
	if (rel) {
		buf_addf(&url, "http://169.254.170.2%s%s", rel[0] == '/' ? "" : "/", rel);
	} else {
		buf_adds(&url, full);
	}
	buf_addf(&what, "container credentials (%s '",
		 rel ? "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI" : "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	http_url_for_message(&what, url.s);
	buf_adds(&what, "')");
	if (!rel && !container_host_allowed(full)) {
		rc = em_err(err, EM_EINPUT,
			    "%s: AWS_CONTAINER_CREDENTIALS_FULL_URI must be https, or http to a loopback address, "
			    "169.254.170.2 or the EKS Pod Identity agent (169.254.170.23)",
			    what.s);
		goto out;
	}
	if (!rel) {
		const char *token_file = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
		if (token_file) {
			struct buf w = BUF_INIT;
			buf_addf(&w, "%s: AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", what.s);
			rc = read_token_file(token_file, &auth, w.s, err);
			buf_release(&w);
			if (rc)
				goto out;
		} else if (env("AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
			buf_adds(&auth, env("AWS_CONTAINER_AUTHORIZATION_TOKEN"));
		}
		if (strpbrk(auth.s, "\r\n")) {
			rc = em_err(err, EM_EINPUT, "%s: the authorization token contains a line break", what.s);
			goto out;
		}
	}
	struct http_request rq;
	http_request_init(&rq, "GET", url.s);
	http_headers_add(&rq.headers, "Accept", "application/json");
	if (auth.len)
		http_headers_add(&rq.headers, "Authorization", auth.s);
	rq.timeout_ms = 2000;
	rq.connect_timeout_ms = 1000;
	rq.max_attempts = 3;
	rq.secret_body = 1;
	struct http_response resp;
	http_response_init(&resp);
	rc = http_send(p->http, &rq, &resp, &e);
	if (rc) {
		em_err(err, rc, "%s: %s", what.s, e.s);
	} else if (resp.status != 200) {
		/* The agents answer {"Code","Message"} (ECS) or {"code","message"} (EKS Pod Identity). */
		cJSON *j = cJSON_ParseWithLength(resp.body.s, resp.body.len);
		const char *code = cJSON_GetStringValue(cJSON_GetObjectItem(j, "code"));
		const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(j, "message"));
		rc = em_err(err, resp.status == 401 || resp.status == 403 ? EM_EAUTH : EM_ESERVER, "%s: HTTP %ld%s%s%s%s",
			    what.s, resp.status, code ? " " : "", code ? code : "", msg ? ": " : "", msg ? msg : "");
		cJSON_Delete(j);
	} else {
		rc = creds_from_json(out, &resp.body, what.s, "container credentials", 0, err);
	}
	http_response_release(&resp);
	http_request_release(&rq);
out:
	buf_release(&url);
	buf_release(&what);
	secbuf_release(&auth);
	buf_release(&e);
	return rc < 0 ? rc : 1;
}

static long env_long(const char *name, long def)
{
	int64_t v;
	const char *s = env(name);
	return s && em_parse_i64(s, &v) == 0 && v > 0 && v < 3600 ? (long)v : def;
}

/* One instance-metadata request; rc of http_send, answer in resp. */
static int imds_request(struct aws_credentials_provider *p, const char *method, const char *base, const char *path,
			const char *token, struct http_response *resp, struct buf *err)
{
	struct buf url = BUF_INIT;
	buf_addf(&url, "%s%s", base, path);
	struct http_request rq;
	http_request_init(&rq, method, url.s);
	if (strcmp(method, "PUT") == 0)
		http_headers_add(&rq.headers, "X-aws-ec2-metadata-token-ttl-seconds", IMDS_TOKEN_TTL);
	if (token)
		http_headers_add(&rq.headers, "X-aws-ec2-metadata-token", token);
	rq.timeout_ms = env_long("AWS_METADATA_SERVICE_TIMEOUT", 1) * 1000;
	rq.connect_timeout_ms = rq.timeout_ms;
	rq.max_attempts = (int)env_long("AWS_METADATA_SERVICE_NUM_ATTEMPTS", 1);
	rq.secret_body = 1;
	int rc = http_send(p->http, &rq, resp, err);
	http_request_release(&rq);
	buf_release(&url);
	return rc;
}

static int link_imds(struct aws_credentials_provider *p, struct aws_credentials *out, struct buf *err)
{
	if (env_true("AWS_EC2_METADATA_DISABLED") || !p->http)
		return 0;
	struct buf base = BUF_INIT, e = BUF_INIT, token = BUF_INIT, role = BUF_INIT, path = BUF_INIT, src = BUF_INIT;
	const char *ep = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	const char *mode = env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
	if (ep)
		buf_adds(&base, ep);
	else if (mode && strcasecmp(mode, "IPv6") == 0)
		buf_adds(&base, "http://[fd00:ec2::254]");
	else
		buf_adds(&base, "http://169.254.169.254");
	buf_trim_trailing(&base, '/');
	struct http_response resp;
	http_response_init(&resp);
	int rc = imds_request(p, "PUT", base.s, "/latest/api/token", NULL, &resp, &e);
	if (rc && rc == EM_ENET && resp.unreachable) {
		/* Nothing answers: not on EC2 (or the hop limit keeps us out). The chain ends here. */
		log_debug("instance metadata at %s: %s", base.s, e.s);
		rc = 0;
		goto out;
	}
	if (rc) {
		/* Something listens there but its answer is unusable: a failed source, not "not on EC2". */
		em_err(err, rc, "instance metadata (IMDS) at %s: the token request got no usable answer: %s", base.s, e.s);
		goto out;
	}
	if (resp.status == 200) {
		buf_add(&token, resp.body.s, resp.body.len);
		buf_trim_trailing(&token, '\n');
	} else if (resp.status == 403 || resp.status == 404 || resp.status == 405) {
		if (env_true("AWS_EC2_METADATA_V1_DISABLED")) {
			rc = em_err(err, EM_EAUTH,
				    "instance metadata (IMDS) at %s: the IMDSv2 token request was refused (HTTP %ld) and "
				    "AWS_EC2_METADATA_V1_DISABLED forbids IMDSv1",
				    base.s, resp.status);
			goto out;
		}
		log_debug("instance metadata at %s: token request answered HTTP %ld; trying IMDSv1", base.s, resp.status);
	} else {
		rc = em_err(err, EM_ESERVER, "instance metadata (IMDS) at %s: the token request answered HTTP %ld", base.s,
			    resp.status);
		goto out;
	}
	const char *tok = token.len ? token.s : NULL;
	rc = imds_request(p, "GET", base.s, "/latest/meta-data/iam/security-credentials/", tok, &resp, &e);
	if (rc) {
		em_err(err, rc, "instance metadata (IMDS) at %s: %s", base.s, e.s);
		goto out;
	}
	if (resp.status == 404) {
		log_debug("instance metadata at %s: no instance profile", base.s);
		goto out; /* rc 0: no role attached to this instance */
	}
	if (resp.status != 200) {
		rc = em_err(err, resp.status == 401 || resp.status == 403 ? EM_EAUTH : EM_ESERVER,
			    "instance metadata (IMDS) at %s: listing the instance profile role answered HTTP %ld", base.s,
			    resp.status);
		goto out;
	}
	buf_add(&role, resp.body.s, strcspn(resp.body.s, "\r\n"));
	if (role.len == 0)
		goto out;
	buf_adds(&path, "/latest/meta-data/iam/security-credentials/");
	buf_add_urlencoded(&path, role.s, 1);
	rc = imds_request(p, "GET", base.s, path.s, tok, &resp, &e);
	if (rc) {
		em_err(err, rc, "instance metadata (IMDS) at %s: %s", base.s, e.s);
		goto out;
	}
	struct buf what = BUF_INIT;
	buf_addf(&what, "instance metadata (IMDS) at %s: credentials for role '%s'", base.s, role.s);
	if (resp.status != 200) {
		rc = em_err(err, resp.status == 401 || resp.status == 403 ? EM_EAUTH : EM_ESERVER, "%s: HTTP %ld", what.s,
			    resp.status);
	} else {
		buf_addf(&src, "instance metadata (role '%s')", role.s);
		rc = creds_from_json(out, &resp.body, what.s, src.s, 0, err);
		if (rc == 0)
			rc = 1;
	}
	buf_release(&what);
out:
	http_response_release(&resp);
	buf_release(&base);
	buf_release(&e);
	secbuf_release(&token);
	buf_release(&role);
	buf_release(&path);
	buf_release(&src);
	return rc;
}

/* Web identity: each setting from the environment (unless env_allowed is 0), else the profile. */
static int link_web_identity(struct aws_credentials_provider *p, const struct shared_config *sc, const char *profile,
			     int env_allowed, struct aws_credentials *out, struct buf *err)
{
	const char *token_file = env_allowed ? env("AWS_WEB_IDENTITY_TOKEN_FILE") : NULL;
	int from_env = token_file != NULL;
	if (!token_file)
		token_file = profile_get(sc, profile, "web_identity_token_file", NULL);
	if (!token_file)
		return 0;
	struct buf where = BUF_INIT, token = BUF_INIT;
	if (from_env)
		buf_adds(&where, "web identity (AWS_WEB_IDENTITY_TOKEN_FILE)");
	else
		profile_where(&where, sc, profile, "web_identity_token_file");
	const char *role = env_allowed ? env("AWS_ROLE_ARN") : NULL;
	if (!role)
		role = profile_get(sc, profile, "role_arn", NULL);
	const char *session = env_allowed ? env("AWS_ROLE_SESSION_NAME") : NULL;
	if (!session)
		session = profile_get(sc, profile, "role_session_name", NULL);
	if (!session)
		session = p->session_name;
	int rc;
	if (!role) {
		rc = em_err(err, EM_EINPUT, "%s: a web identity token file is set but no role (set AWS_ROLE_ARN or role_arn)",
			    where.s);
	} else if (!p->http) {
		rc = em_err(err, EM_EINPUT, "%s: no http client to call sts with", where.s);
	} else {
		rc = read_token_file(token_file, &token, where.s, err);
		if (rc == 0) {
			struct buf e = BUF_INIT;
			rc = aws_sts_assume_role_with_web_identity(out, p->http, p->region, role, session, token.s, &e);
			if (rc)
				em_err(err, rc, "%s: %s", where.s, e.s);
			buf_release(&e);
		}
	}
	buf_release(&where);
	secbuf_release(&token);
	return rc < 0 ? rc : 1;
}

static int role_for_profile(struct aws_credentials_provider *p, const struct shared_config *sc, const char *profile,
			    char **visited, int n_visited, struct aws_credentials *out, struct buf *err);

/* Credentials of a source_profile that has no role of its own: web identity from the profile,
 * then its keys in the credentials file, then in the config file. */
static int source_profile_creds(struct aws_credentials_provider *p, const struct shared_config *sc,
				const char *profile, const char *where, struct aws_credentials *out, struct buf *err)
{
	int rc = link_web_identity(p, sc, profile, 0, out, err);
	if (rc == 0)
		rc = unsupported_sso(sc, profile, err);
	if (rc == 0)
		rc = link_file_keys(&sc->credentials, profile, out, err);
	if (rc == 0)
		rc = unsupported_process(sc, profile, err);
	if (rc == 0)
		rc = link_file_keys(&sc->config, profile, out, err);
	if (rc == 0)
		rc = em_err(err, EM_EAUTH, "%s: source profile '%s' has no credentials", where, profile);
	return rc < 0 ? rc : 0;
}

static int credential_source_creds(struct aws_credentials_provider *p, const char *source, const char *where,
				   struct aws_credentials *out, struct buf *err)
{
	int rc;
	if (strcmp(source, "Environment") == 0)
		rc = link_env(out, err);
	else if (strcmp(source, "Ec2InstanceMetadata") == 0)
		rc = link_imds(p, out, err);
	else if (strcmp(source, "EcsContainer") == 0)
		rc = link_container(p, out, err);
	else
		return em_err(err, EM_EINPUT,
			      "%s: credential_source '%s' is not Environment, Ec2InstanceMetadata or EcsContainer", where,
			      source);
	if (rc == 0)
		rc = em_err(err, EM_EAUTH, "%s: credential_source %s found no credentials", where, source);
	return rc < 0 ? rc : 0;
}

/* AssumeRole for a profile with role_arn, its source resolved recursively. */
static int role_for_profile(struct aws_credentials_provider *p, const struct shared_config *sc, const char *profile,
			    char **visited, int n_visited, struct aws_credentials *out, struct buf *err)
{
	struct buf where = BUF_INIT;
	profile_where(&where, sc, profile, "role_arn");
	const char *role = profile_get(sc, profile, "role_arn", NULL);
	const char *src_profile = profile_get(sc, profile, "source_profile", NULL);
	const char *cred_source = profile_get(sc, profile, "credential_source", NULL);
	const char *duration = profile_get(sc, profile, "duration_seconds", NULL);
	struct aws_credentials source = {0};
	int64_t dur = 0;
	int rc = 0;
	if (src_profile && cred_source) {
		rc = em_err(err, EM_EINPUT, "%s: both source_profile and credential_source are set", where.s);
	} else if (!src_profile && !cred_source) {
		rc = em_err(err, EM_EINPUT, "%s: role_arn set but no source_profile or credential_source", where.s);
	} else if (profile_get(sc, profile, "mfa_serial", NULL)) {
		rc = em_err(err, EM_EUNSUPPORTED,
			    "%s: mfa_serial is set, and ebsmigrate cannot prompt for an MFA code; get session "
			    "credentials first (aws sts get-session-token) and pass them in the environment",
			    where.s);
	} else if (duration && (em_parse_i64(duration, &dur) != 0 || dur < 900 || dur > 43200)) {
		rc = em_err(err, EM_EINPUT, "%s: duration_seconds '%s' is not a number of seconds in 900..43200", where.s,
			    duration);
	} else if (cred_source) {
		rc = credential_source_creds(p, cred_source, where.s, &source, err);
	} else if (!profile_exists(sc, src_profile)) {
		rc = em_err(err, EM_EINPUT, "%s: source_profile '%s' does not exist", where.s, src_profile);
	} else {
		int seen = 0;
		for (int i = 0; i < n_visited; i++)
			seen |= strcmp(visited[i], src_profile) == 0;
		if (strcmp(src_profile, profile) == 0) {
			/* A profile may source itself, to pair its own keys with its role. */
			rc = link_file_keys(&sc->credentials, profile, &source, err);
			if (rc == 0)
				rc = link_file_keys(&sc->config, profile, &source, err);
			if (rc == 0)
				rc = em_err(err, EM_EINPUT, "%s: source_profile names the profile itself, which has no keys",
					    where.s);
			rc = rc < 0 ? rc : 0;
		} else if (seen) {
			struct buf chain = BUF_INIT;
			for (int i = 0; i < n_visited; i++)
				buf_addf(&chain, "%s -> ", visited[i]);
			buf_adds(&chain, src_profile);
			rc = em_err(err, EM_EINPUT, "%s: source_profile loop (%s)", where.s, chain.s);
			buf_release(&chain);
		} else if (n_visited >= MAX_ROLE_DEPTH) {
			rc = em_err(err, EM_EINPUT, "%s: source_profile chain deeper than %d profiles", where.s,
				    MAX_ROLE_DEPTH);
		} else if (!has_static_keys(sc, src_profile) && profile_get(sc, src_profile, "role_arn", NULL) &&
			   !profile_get(sc, src_profile, "web_identity_token_file", NULL)) {
			visited[n_visited] = (char *)src_profile;
			rc = role_for_profile(p, sc, src_profile, visited, n_visited + 1, &source, err);
		} else {
			rc = source_profile_creds(p, sc, src_profile, where.s, &source, err);
		}
	}
	if (rc == 0 && !p->http)
		rc = em_err(err, EM_EINPUT, "%s: no http client to call sts with", where.s);
	if (rc == 0) {
		struct aws_assume_role_params ap = {0};
		ap.role_arn = role;
		ap.session_name = profile_get(sc, profile, "role_session_name", NULL);
		if (!ap.session_name)
			ap.session_name = p->session_name;
		ap.external_id = profile_get(sc, profile, "external_id", NULL);
		ap.duration_s = (int)dur;
		struct buf e = BUF_INIT;
		rc = aws_sts_assume_role(out, p->http, p->region, &source, &ap, &e);
		if (rc) {
			em_err(err, rc, "%s: %s", where.s, e.s);
		} else {
			free(out->source);
			struct buf s = BUF_INIT;
			buf_addf(&s, "profile '%s' (role '%s')", profile, role);
			out->source = buf_detach(&s);
		}
		buf_release(&e);
	}
	aws_credentials_release(&source);
	buf_release(&where);
	return rc;
}

static int link_role(struct aws_credentials_provider *p, const struct shared_config *sc, struct aws_credentials *out,
		     struct buf *err)
{
	if (!profile_get(sc, p->profile, "role_arn", NULL) ||
	    profile_get(sc, p->profile, "web_identity_token_file", NULL))
		return 0;
	char *visited[MAX_ROLE_DEPTH + 1];
	visited[0] = p->profile;
	int rc = role_for_profile(p, sc, p->profile, visited, 1, out, err);
	return rc < 0 ? rc : 1;
}

static int run_link(struct aws_credentials_provider *p, int link, const struct shared_config *sc,
		    struct aws_credentials *out, struct buf *err)
{
	int rc;
	switch (link) {
	case LINK_ENV:
		return p->profile_explicit ? 0 : link_env(out, err);
	case LINK_ROLE:
		return link_role(p, sc, out, err);
	case LINK_WEB_IDENTITY:
		rc = link_web_identity(p, sc, p->profile, !p->profile_explicit, out, err);
		return rc ? rc : unsupported_sso(sc, p->profile, err);
	case LINK_CREDENTIALS_FILE:
		rc = link_file_keys(&sc->credentials, p->profile, out, err);
		return rc ? rc : unsupported_process(sc, p->profile, err);
	case LINK_CONFIG_FILE:
		return link_file_keys(&sc->config, p->profile, out, err);
	case LINK_CONTAINER:
		return link_container(p, out, err);
	case LINK_IMDS:
		return link_imds(p, out, err);
	}
	return 0;
}

/* The account the assumed credentials act in, asked of STS with them (GetCallerIdentity): the
 * ARN AssumeRole answers is the role asked for, said by the same server that handed out the
 * keys, so it proves nothing. Once per AssumeRole: the result stays with the cached credentials
 * until they are refreshed. A mismatch, or no account in the answer, releases them. */
static int confirm_account(struct aws_credentials_provider *p, struct aws_credentials *out, struct buf *err)
{
	struct aws_caller_identity id;
	memset(&id, 0, sizeof id);
	struct buf e = BUF_INIT;
	int rc = aws_sts_get_caller_identity(&id, p->http, p->region, out, &e);
	if (rc)
		em_err(err, rc, "role '%s': confirming its account: %s", p->role_arn, e.s);
	else if (!id.account || strcmp(id.account, p->expect_account) != 0)
		rc = em_err(err, EM_EAUTH,
			    "role '%s' gave credentials of account %s (sts GetCallerIdentity), not %s: not used",
			    p->role_arn, id.account && *id.account ? id.account : "(unknown)", p->expect_account);
	if (rc)
		aws_credentials_release(out);
	aws_caller_identity_release(&id);
	buf_release(&e);
	return rc;
}

/* Assumed-role mode: AssumeRole signed with the source's credentials (a copy, wiped here), then
 * the account they act in confirmed with STS (confirm_account). The external id is never quoted
 * in a message. */
static int resolve_assumed(struct aws_credentials_provider *p, struct aws_credentials *out, struct buf *err)
{
	struct aws_credentials base = {0};
	struct buf e = BUF_INIT;
	int rc = p->source(p->source_ctx, &base, &e);
	if (rc) {
		em_err(err, rc, "base credentials for role '%s': %s", p->role_arn, e.s);
	} else if (!p->http) {
		rc = em_err(err, EM_EINPUT, "role '%s': no http client to call sts with", p->role_arn);
	} else {
		struct aws_assume_role_params ap = {p->role_arn, p->session_name, p->external_id, p->duration_s};
		rc = aws_sts_assume_role(out, p->http, p->region, &base, &ap, &e);
		if (rc)
			em_err(err, rc, "%s", e.s);
		/* never one account's credentials for another's volumes */
		if (!rc && p->expect_account && (!out->account_id || strcmp(out->account_id, p->expect_account) != 0)) {
			rc = em_err(err, EM_EAUTH, "role '%s' gave credentials of account %s, not %s: not used", p->role_arn,
				    out->account_id ? out->account_id : "(unknown)", p->expect_account);
			aws_credentials_release(out);
		} else if (!rc && p->expect_account) {
			rc = confirm_account(p, out, err);
		}
	}
	if (!rc) {
		free(out->source);
		struct buf s = BUF_INIT;
		buf_addf(&s, "role '%s'", p->role_arn);
		out->source = buf_detach(&s);
	}
	aws_credentials_release(&base);
	buf_release(&e);
	return rc;
}

/* Walks the chain (or re-runs the link that answered before). */
static int resolve(struct aws_credentials_provider *p, struct aws_credentials *out, struct buf *err)
{
	if (p->role_arn)
		return resolve_assumed(p, out, err);
	struct shared_config sc;
	int rc = shared_config_load(&sc, err);
	if (rc) {
		shared_config_release(&sc);
		return rc;
	}
	if (p->profile_named && strcmp(p->profile, "default") != 0 && !profile_exists(&sc, p->profile)) {
		rc = em_err(err, EM_ENOTFOUND, "profile '%s' not found in %s or %s", p->profile, sc.config.display,
			    sc.credentials.display);
		shared_config_release(&sc);
		return rc;
	}
	int first = p->link >= 0 ? p->link : 0, last = p->link >= 0 ? p->link : LINK_COUNT - 1;
	for (int link = first; link <= last; link++) {
		rc = run_link(p, link, &sc, out, err);
		if (rc < 0)
			break;
		if (rc > 0) {
			log_debug("aws credentials: %s (%s)", out->source, link_names[link]);
			p->link = link;
			rc = 0;
			break;
		}
	}
	if (rc == 0 && !out->access_key_id) {
		p->no_source = p->link < 0;
		if (p->link >= 0)
			rc = em_err(err, EM_EAUTH, "aws credentials from %s are no longer available", link_names[p->link]);
		else
			rc = em_err(err, EM_EAUTH,
				    "no aws credentials found (tried %sprofile '%s' in %s and %s, web identity, "
				    "container credentials and instance metadata)",
				    p->profile_explicit ? "" : "the environment, ", p->profile, sc.credentials.display,
				    sc.config.display);
	}
	shared_config_release(&sc);
	return rc;
}

/* ---- provider ---- */

static time_t real_time(void)
{
	return time(NULL);
}

static const char *profile_from_env(void)
{
	const char *v = env("AWS_PROFILE");
	return v ? v : env("AWS_DEFAULT_PROFILE");
}

void aws_credentials_provider_init(struct aws_credentials_provider *p, const struct aws_credentials_options *opt)
{
	memset(p, 0, sizeof *p);
	struct aws_credentials_options o = {0};
	if (opt)
		o = *opt;
	const char *profile = o.profile && *o.profile ? o.profile : NULL;
	p->profile_explicit = profile != NULL;
	if (!profile)
		profile = profile_from_env();
	p->profile_named = profile != NULL;
	p->profile = xstrdup(profile ? profile : "default");
	p->region = o.region && *o.region ? xstrdup(o.region) : NULL;
	if (o.session_name && *o.session_name) {
		p->session_name = xstrdup(o.session_name);
	} else {
		struct buf b = BUF_INIT;
		buf_addf(&b, "ebsmigrate-%lld", (long long)(o.clock ? o.clock() : time(NULL)));
		p->session_name = buf_detach(&b);
	}
	p->http = o.http;
	p->clock = o.clock ? o.clock : real_time;
	p->refresh_window_s = o.refresh_window_s > 0 ? o.refresh_window_s : 300;
	p->link = -1;
	if (o.role_arn && o.source) {
		p->role_arn = xstrdup(o.role_arn);
		p->external_id = o.external_id ? xstrdup(o.external_id) : NULL;
		p->duration_s = o.duration_s;
		p->expect_account = o.expect_account ? xstrdup(o.expect_account) : NULL;
		p->source = o.source;
		p->source_ctx = o.source_ctx;
	}
}

void aws_credentials_provider_release(struct aws_credentials_provider *p)
{
	free(p->profile);
	free(p->region);
	free(p->session_name);
	free(p->role_arn);
	free(p->external_id);
	free(p->expect_account);
	aws_credentials_release(&p->creds);
	memset(p, 0, sizeof *p);
}

int aws_credentials_provider_found_no_source(const struct aws_credentials_provider *p)
{
	return p->no_source;
}

void aws_credentials_provider_expire(struct aws_credentials_provider *p)
{
	aws_credentials_release(&p->creds);
	p->have = 0;
}

int aws_credentials_provider_get(struct aws_credentials_provider *p, const struct aws_credentials **out,
				 struct buf *err)
{
	time_t now = p->clock();
	if (p->have && (p->creds.expiration == 0 || now < p->creds.expiration - p->refresh_window_s)) {
		*out = &p->creds;
		return 0;
	}
	if (!p->http)
		log_debug("aws credentials: no http client; only the environment and the shared files can answer");
	struct aws_credentials fresh = {0};
	struct buf e = BUF_INIT;
	p->no_source = 0;
	int rc = resolve(p, &fresh, &e);
	if (rc == 0) {
		aws_credentials_release(&p->creds);
		p->creds = fresh;
		p->have = 1;
		*out = &p->creds;
	} else if (p->have && now < p->creds.expiration) {
		log_debug("aws credentials: refresh failed, using the current ones until they expire: %s", e.s);
		aws_credentials_release(&fresh);
		*out = &p->creds;
		rc = 0;
	} else {
		aws_credentials_release(&fresh);
		em_err(err, rc, "%s", e.s);
		*out = NULL;
	}
	buf_release(&e);
	return rc;
}

/* ---- region ---- */

int aws_region_resolve(char **out, const char *explicit_region, const char *profile, struct buf *err)
{
	*out = NULL;
	const char *r = explicit_region && *explicit_region ? explicit_region : NULL;
	if (!r)
		r = env("AWS_REGION");
	if (!r)
		r = env("AWS_DEFAULT_REGION");
	if (r) {
		*out = xstrdup(r);
		return 0;
	}
	const char *name = profile && *profile ? profile : profile_from_env();
	if (!name)
		name = "default";
	struct shared_config sc;
	int rc = shared_config_load(&sc, err);
	if (rc == 0) {
		r = profile_get(&sc, name, "region", NULL);
		if (r)
			*out = xstrdup(r);
		else
			rc = em_err(err, EM_ENOTFOUND,
				    "no aws region: pass --region, set AWS_REGION, or set region in profile '%s' (%s)", name,
				    sc.config.display);
	}
	shared_config_release(&sc);
	return rc;
}

int aws_profile_setting(char **out, const char *profile, const char *key, struct buf *err)
{
	*out = NULL;
	const char *name = profile && *profile ? profile : profile_from_env();
	struct shared_config sc;
	int rc = shared_config_load(&sc, err);
	if (rc == 0) {
		const char *v = profile_get(&sc, name ? name : "default", key, NULL);
		if (v)
			*out = xstrdup(v);
	}
	shared_config_release(&sc);
	return rc;
}
