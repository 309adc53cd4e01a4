/*
 * aws_client.c - signed AWS calls with the services' error envelopes decoded.
 *
 * Entry points: aws_client_init/release, aws_client_init_worker/
 * aws_client_release_worker, aws_client_waves, aws_query, aws_json, aws_form_add.
 * Invariants: a worker client (aws_client_init_worker) never resolves credentials on its own: it
 * copies its parent's under the parent's lock, so one chain is resolved and refreshed at a time;
 * every request is signed right before it is sent (a retry re-signs, so a long
 * backoff never sends a stale X-Amz-Date); a credentials error from the service (ExpiredToken)
 * expires the cached credentials once and retries; messages never include secrets.
 */
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_sigv4.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/workpool.h"

/* A setting from the environment, else from the profile; src names where it came from. */
static int retry_setting(char **out, const char *env_name, const char *key, const char *profile, struct buf *src,
			 struct buf *err)
{
	const char *v = getenv(env_name);
	buf_reset(src);
	if (v && *v) {
		*out = xstrdup(v);
		buf_adds(src, env_name);
		return 0;
	}
	int rc = aws_profile_setting(out, profile, key, err);
	const char *env_profile = getenv("AWS_PROFILE");
	const char *name = profile && *profile ? profile : env_profile && *env_profile ? env_profile : "default";
	if (!rc && *out)
		buf_addf(src, "profile '%s': %s", name, key);
	return rc;
}

int aws_retry_config_resolve(struct aws_retry_config *out, const char *profile, struct buf *err)
{
	out->mode = AWS_RETRY_LEGACY;
	out->max_attempts = 0;
	char *v = NULL;
	struct buf src = BUF_INIT;
	int rc = retry_setting(&v, "AWS_RETRY_MODE", "retry_mode", profile, &src, err);
	if (!rc && v) {
		if (strcmp(v, "legacy") == 0)
			out->mode = AWS_RETRY_LEGACY;
		else if (strcmp(v, "standard") == 0)
			out->mode = AWS_RETRY_STANDARD;
		else if (strcmp(v, "adaptive") == 0)
			out->mode = AWS_RETRY_ADAPTIVE;
		else
			rc = em_err(err, EM_EINPUT, "%s: '%s' is not one of standard, legacy, adaptive", src.s, v);
	}
	free(v);
	v = NULL;
	if (!rc)
		rc = retry_setting(&v, "AWS_MAX_ATTEMPTS", "max_attempts", profile, &src, err);
	if (!rc && v) {
		int64_t n;
		if (em_parse_i64(v, &n) || n < 1 || n > 20)
			rc = em_err(err, EM_EINPUT, "%s: '%s' is not a number of attempts from 1 to 20", src.s, v);
		else
			out->max_attempts = (int)n;
	}
	free(v);
	buf_release(&src);
	if (!out->max_attempts)
		out->max_attempts = out->mode == AWS_RETRY_LEGACY ? 8 : 3;
	return rc;
}

void aws_retry_config_apply(const struct aws_retry_config *rc, struct http_options *ho)
{
	ho->max_attempts = rc->max_attempts;
	if (rc->mode == AWS_RETRY_LEGACY) {
		ho->backoff_base_ms = 500;
		ho->retry_quota = 0;
		ho->adaptive_rate = 0;
	} else {
		ho->backoff_base_ms = 1000;
		ho->retry_quota = 500;
		ho->adaptive_rate = rc->mode == AWS_RETRY_ADAPTIVE;
	}
	ho->backoff_max_ms = 20000;
}

int aws_client_init(struct aws_client *c, const struct aws_client_options *opt, struct buf *err)
{
	memset(c, 0, sizeof *c);
	pthread_mutex_init(&c->creds_lock, NULL); /* a pthread mutex holds no resource on Linux */
	struct http_options ho;
	memset(&ho, 0, sizeof ho);
	struct aws_retry_config retry;
	int rrc = aws_retry_config_resolve(&retry, opt ? opt->profile : NULL, err);
	if (rrc)
		return rrc;
	if (opt && opt->max_attempts)
		retry.max_attempts = opt->max_attempts;
	aws_retry_config_apply(&retry, &ho);
	ho.timeout_ms = opt && opt->timeout_ms ? opt->timeout_ms : 60000;
	ho.default_rate = opt && opt->rate ? opt->rate : 20;
	int rc = http_client_init(&c->http, &ho, err);
	if (rc)
		return rc;
	c->profile = xstrdup(opt ? opt->profile : NULL);
	struct aws_credentials_options co;
	memset(&co, 0, sizeof co);
	co.profile = c->profile;
	co.http = &c->http;
	aws_credentials_provider_init(&c->creds, &co);
	return 0;
}

/* The assumed-role provider's source: the base client's credentials, copied under its lock. */
static int base_credentials(void *ctx, struct aws_credentials *out, struct buf *err)
{
	struct aws_client *base = ctx;
	if (base->creds_from)
		base = base->creds_from;
	pthread_mutex_lock(&base->creds_lock);
	const struct aws_credentials *cr = NULL;
	int rc = aws_credentials_provider_get(&base->creds, &cr, err);
	if (!rc)
		aws_credentials_copy(out, cr);
	pthread_mutex_unlock(&base->creds_lock);
	return rc;
}

void aws_client_rate_key(const struct aws_client *c, char *out, size_t n, const char *service, const char *region)
{
	if (c->account)
		snprintf(out, n, "%s:%s:%s", service, c->account, region);
	else
		snprintf(out, n, "%s:%s", service, region);
}

void aws_client_set_account(struct aws_client *c, const char *account)
{
	free(c->account);
	c->account = account ? xstrdup(account) : NULL;
}

int aws_client_init_assumed(struct aws_client *c, struct aws_client *base, const char *account,
			    const struct aws_assume_role_params *p, struct buf *err)
{
	if (base->creds_from)
		base = base->creds_from;
	memset(c, 0, sizeof *c);
	pthread_mutex_init(&c->creds_lock, NULL);
	int rc = http_client_init(&c->http, &base->http.opt, err);
	if (rc)
		return rc;
	http_client_share_rates(&c->http, &base->http);
	c->profile = xstrdup(base->profile);
	c->account = xstrdup(account);
	struct aws_credentials_options co;
	memset(&co, 0, sizeof co);
	co.http = &c->http;
	co.session_name = p->session_name;
	co.source = base_credentials;
	co.source_ctx = base;
	co.role_arn = p->role_arn;
	co.external_id = p->external_id;
	co.duration_s = p->duration_s;
	co.expect_account = account;
	aws_credentials_provider_init(&c->creds, &co);
	return 0;
}

int aws_client_init_worker(struct aws_client *w, struct aws_client *from, struct buf *err)
{
	if (from->creds_from) /* a worker's worker: the credentials are still the root's */
		from = from->creds_from;
	memset(w, 0, sizeof *w);
	pthread_mutex_init(&w->creds_lock, NULL);
	w->creds_from = from;
	int rc = http_client_init(&w->http, &from->http.opt, err);
	if (rc)
		return rc;
	http_client_share_rates(&w->http, &from->http);
	w->profile = xstrdup(from->profile);
	w->account = xstrdup(from->account);
	return 0;
}

/* The client one slot of a wave of `workers` threads sends with, in *out: from itself when
 * there is one worker, else own, made from's worker (aws_client_init_worker). */
static int client_for_slot(struct aws_client **out, struct aws_client *own, struct aws_client *from, size_t workers,
			   struct buf *err)
{
	if (workers == 1) {
		*out = from;
		return 0;
	}
	int rc = aws_client_init_worker(own, from, err);
	if (!rc)
		*out = own;
	return rc;
}

void aws_client_release_worker(struct aws_client *w, struct aws_client *into)
{
	into->calls += w->calls;
	into->throttled += w->throttled;
	aws_client_release(w);
}

size_t aws_wave_width(int concurrency, size_t n_batches)
{
	size_t width = concurrency > 1 ? (size_t)concurrency : 1;
	if (width > n_batches)
		width = n_batches ? n_batches : 1;
	return width;
}

struct wave_slot {
	struct aws_client *c, own; /* c: the client the slot sends with, own or the job's */
	int rc;
	struct buf err;
};

struct wave {
	struct wave_slot *slots;
	size_t first; /* the batch slot 0 sends in this wave */
	aws_wave_fetch_fn fetch;
	void *ctx;
};

static void wave_fetch(void *ctx, size_t k)
{
	struct wave *w = ctx;
	struct wave_slot *sl = &w->slots[k];
	buf_reset(&sl->err);
	sl->rc = w->fetch(w->ctx, k, w->first + k, sl->c, &sl->err);
}

int aws_client_waves(struct aws_client *c, size_t n_batches, size_t width, aws_wave_fetch_fn fetch,
		     aws_wave_collect_fn collect, void *ctx, struct buf *err)
{
	struct wave w = {xcalloc(width, sizeof *w.slots), 0, fetch, ctx};
	int rc = 0;
	for (size_t k = 0; k < width; k++)
		buf_init(&w.slots[k].err);
	for (size_t k = 0; k < width && !rc; k++)
		rc = client_for_slot(&w.slots[k].c, &w.slots[k].own, c, width, err);
	for (w.first = 0; w.first < n_batches && !rc; w.first += width) {
		size_t n = n_batches - w.first < width ? n_batches - w.first : width;
		workpool_run(n, (int)width, wave_fetch, &w);
		for (size_t k = 0; k < n && !rc; k++) { /* in batch order: the first failure is the run's */
			struct wave_slot *sl = &w.slots[k];
			if (sl->rc) {
				rc = sl->rc;
				buf_adds(err, sl->err.s ? sl->err.s : "");
				break;
			}
			rc = collect(ctx, k, w.first + k);
		}
	}
	for (size_t k = 0; k < width; k++) {
		buf_release(&w.slots[k].err);
		if (w.slots[k].c == &w.slots[k].own)
			aws_client_release_worker(&w.slots[k].own, c);
	}
	free(w.slots);
	return rc;
}

/* The credentials to sign with: the client's own, or a worker's copy of its parent's. */
static int client_credentials(struct aws_client *c, const struct aws_credentials **out, struct buf *err)
{
	if (!c->creds_from)
		return aws_credentials_provider_get(&c->creds, out, err);
	pthread_mutex_lock(&c->creds_from->creds_lock);
	const struct aws_credentials *cr = NULL;
	int rc = aws_credentials_provider_get(&c->creds_from->creds, &cr, err);
	if (!rc)
		aws_credentials_copy(&c->worker_creds, cr);
	pthread_mutex_unlock(&c->creds_from->creds_lock);
	*out = rc ? NULL : &c->worker_creds;
	return rc;
}

static void client_credentials_expire(struct aws_client *c)
{
	if (!c->creds_from) {
		aws_credentials_provider_expire(&c->creds);
		return;
	}
	pthread_mutex_lock(&c->creds_from->creds_lock);
	aws_credentials_provider_expire(&c->creds_from->creds);
	pthread_mutex_unlock(&c->creds_from->creds_lock);
}

void aws_client_release(struct aws_client *c)
{
	pthread_mutex_destroy(&c->creds_lock);
	aws_credentials_release(&c->worker_creds);
	if (!c->creds_from)
		aws_credentials_provider_release(&c->creds);
	http_client_release(&c->http);
	free(c->profile);
	free(c->account);
	memset(c, 0, sizeof *c);
}

void aws_form_add(struct buf *form, const char *name, const char *value)
{
	if (form->len)
		buf_addc(form, '&');
	buf_add_urlencoded(form, name, 1);
	buf_addc(form, '=');
	buf_add_urlencoded(form, value, 1);
}

/* ---- error envelopes ---- */

struct xml_err {
	char *code, *message;
	struct buf text;
	int in_code, in_message;
};

static void XMLCALL xe_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
	struct xml_err *x = ud;
	buf_reset(&x->text);
	x->in_code = !x->code && strcmp(name, "Code") == 0;
	x->in_message = !x->message && strcmp(name, "Message") == 0;
}

static void XMLCALL xe_end(void *ud, const XML_Char *name)
{
	struct xml_err *x = ud;
	if (x->in_code && strcmp(name, "Code") == 0)
		x->code = xstrdup(x->text.s);
	if (x->in_message && strcmp(name, "Message") == 0)
		x->message = xstrdup(x->text.s);
	x->in_code = x->in_message = 0;
}

static void XMLCALL xe_text(void *ud, const XML_Char *s, int len)
{
	struct xml_err *x = ud;
	if (x->in_code || x->in_message)
		buf_add(&x->text, s, (size_t)len);
}

/* Code and message from <Response><Errors><Error> (EC2) or <ErrorResponse><Error> (query). */
static void parse_xml_error(const struct buf *body, char **code, char **message)
{
	struct xml_err x;
	memset(&x, 0, sizeof x);
	buf_init(&x.text);
	XML_Parser p = XML_ParserCreate(NULL);
	XML_SetUserData(p, &x);
	XML_SetElementHandler(p, xe_start, xe_end);
	XML_SetCharacterDataHandler(p, xe_text);
	XML_Parse(p, body->s, (int)body->len, 1);
	XML_ParserFree(p);
	buf_release(&x.text);
	*code = x.code;
	*message = x.message;
}

/* JSON protocols: {"__type": "...#Code", "message"|"Message": "..."}; or x-amzn-ErrorType. */
static void parse_json_error(const struct http_response *r, char **code, char **message);

void aws_error_parse(const struct http_response *r, int json_protocol, char **code, char **message)
{
	if (json_protocol)
		parse_json_error(r, code, message);
	else
		parse_xml_error(&r->body, code, message);
}

static void parse_json_error(const struct http_response *r, char **code, char **message)
{
	*code = *message = NULL;
	cJSON *j = cJSON_ParseWithLength(r->body.s, r->body.len);
	const char *t = j ? jsonx_str(j, "__type") : NULL;
	if (!t)
		t = http_headers_get(&r->headers, "x-amzn-ErrorType");
	if (t) {
		const char *hash = strrchr(t, '#');
		const char *colon;
		*code = xstrdup(hash ? hash + 1 : t);
		if ((colon = strchr(*code, ':')) != NULL)
			(*code)[colon - *code] = '\0';
	}
	const char *m = j ? jsonx_str(j, "message") : NULL;
	if (!m && j)
		m = jsonx_str(j, "Message");
	*message = xstrdup(m);
	cJSON_Delete(j);
}

static int is_throttle_code(const char *code)
{
	static const char *const codes[] = {"RequestLimitExceeded", "Throttling", "ThrottlingException",
					    "ThrottledException", "RequestThrottled", "TooManyRequestsException",
					    "RequestThrottledException", "SlowDown", "PriorRequestNotComplete",
					    "EC2ThrottledException", NULL};
	for (int i = 0; code && codes[i]; i++)
		if (strcmp(code, codes[i]) == 0)
			return 1;
	return 0;
}

static int is_auth_code(const char *code)
{
	static const char *const codes[] = {"AuthFailure", "UnauthorizedOperation", "AccessDenied",
					    "AccessDeniedException", "InvalidClientTokenId", "ExpiredToken",
					    "ExpiredTokenException", "SignatureDoesNotMatch", "RequestExpired",
					    "InvalidSignatureException", "UnrecognizedClientException",
					    "MissingAuthenticationToken", "IncompleteSignature", "OptInRequired", NULL};
	for (int i = 0; code && codes[i]; i++)
		if (strcmp(code, codes[i]) == 0)
			return 1;
	return 0;
}

struct classify_ctx {
	int json;
};

static enum http_verdict classify(void *ctx, long status, const struct http_headers *headers,
				  const struct buf *body)
{
	struct classify_ctx *cc = ctx;
	if (status < 400)
		return HTTP_FINAL;
	char *code = NULL, *msg = NULL;
	if (cc->json) {
		struct http_response r;
		memset(&r, 0, sizeof r);
		r.headers = *headers;
		r.body = *body;
		parse_json_error(&r, &code, &msg);
	} else {
		parse_xml_error(body, &code, &msg);
	}
	enum http_verdict v = is_throttle_code(code) ? HTTP_THROTTLED : HTTP_DEFAULT;
	if (v == HTTP_DEFAULT && status >= 400 && status < 500 && status != 429)
		v = HTTP_FINAL;
	free(code);
	free(msg);
	return v;
}

static const char *service_label(enum aws_service svc)
{
	switch (svc) {
	case AWS_SERVICE_EC2: return "ec2";
	case AWS_SERVICE_CLOUDWATCH: return "cloudwatch";
	case AWS_SERVICE_PRICING: return "pricing";
	case AWS_SERVICE_STS: return "sts";
	case AWS_SERVICE_CLOUDTRAIL: return "cloudtrail";
	case AWS_SERVICE_ORGANIZATIONS: return "organizations";
	case AWS_SERVICE_S3: return "s3";
	}
	return "aws";
}

static int send_signed(struct aws_client *c, enum aws_service svc, const char *region, const char *what,
		       struct http_request *req, int json, struct http_response *resp, char **code_out,
		       struct buf *err)
{
	struct aws_endpoint ep;
	memset(&ep, 0, sizeof ep);
	int rc = aws_endpoint_resolve(&ep, svc, region, err);
	if (rc)
		return rc;
	if (!req->url || !*req->url) { /* else the caller built it from the same endpoint (aws_rest) */
		free(req->url);
		req->url = xstrdup(ep.url);
		if (!strchr(ep.url + 8, '/')) {
			free(req->url);
			struct buf u = BUF_INIT;
			buf_addf(&u, "%s/", ep.url);
			req->url = buf_detach(&u);
		}
	}
	char rate_key[96];
	aws_client_rate_key(c, rate_key, sizeof rate_key, ep.signing_name, ep.signing_region);
	req->rate_key = rate_key;
	struct classify_ctx cc = {json};
	req->classify = classify;
	req->classify_ctx = &cc;
	for (int attempt = 0; attempt < 2; attempt++) {
		const struct aws_credentials *cr = NULL;
		struct buf cerr = BUF_INIT;
		rc = client_credentials(c, &cr, &cerr);
		if (rc) {
			em_err(err, rc, "%s %s in %s: no AWS credentials: %s", service_label(svc), what,
			       region ? region : ep.signing_region, cerr.s);
			buf_release(&cerr);
			break;
		}
		buf_release(&cerr);
		struct aws_sigv4_params sp;
		memset(&sp, 0, sizeof sp);
		sp.creds = cr;
		sp.region = ep.signing_region;
		sp.service = ep.signing_name;
		sp.now = 0; /* presend signs each attempt with the real clock */
		sp.normalize_path = svc != AWS_SERVICE_S3;         /* S3 signs the path as sent */
		sp.content_sha256_header = svc == AWS_SERVICE_S3; /* and requires x-amz-content-sha256 */
		req->presend = aws_sigv4_presend;
		req->presend_ctx = &sp;
		struct buf herr = BUF_INIT;
		rc = http_send(&c->http, req, resp, &herr);
		c->throttled += resp->throttled;
		if (rc && rc != EM_ETHROTTLED) {
			em_err(err, rc, "%s %s in %s: %s", service_label(svc), what, ep.signing_region, herr.s);
			buf_release(&herr);
			break;
		}
		buf_release(&herr);
		c->calls++;
		if (resp->status >= 200 && resp->status < 300 && !rc)
			break;
		char *code = NULL, *msg = NULL;
		if (json)
			parse_json_error(resp, &code, &msg);
		else
			parse_xml_error(&resp->body, &code, &msg);
		if (attempt == 0 && code && (strcmp(code, "ExpiredToken") == 0 || strcmp(code, "ExpiredTokenException") == 0 ||
					     strcmp(code, "RequestExpired") == 0) &&
		    cr->session_token) {
			client_credentials_expire(c);
			free(code);
			free(msg);
			continue;
		}
		int ec = is_throttle_code(code) || rc == EM_ETHROTTLED ? EM_ETHROTTLED
			 : is_auth_code(code) || resp->status == 401 || resp->status == 403 ? EM_EAUTH
			 : code && strstr(code, "NotFound")                                ? EM_ENOTFOUND
														: EM_ESERVER;
		struct buf tries = BUF_INIT;
		if (resp->attempts > 1)
			buf_addf(&tries, ", after %d attempts", resp->attempts);
		em_err(err, ec, "%s %s in %s: %s%s%s (HTTP %ld%s)", service_label(svc), what, ep.signing_region,
		       code ? code : "error", msg ? ": " : "", msg ? msg : "", resp->status, tries.len ? tries.s : "");
		buf_release(&tries);
		if (code_out)
			*code_out = code;
		else
			free(code);
		free(msg);
		rc = ec;
		break;
	}
	req->rate_key = NULL;
	req->presend = NULL;
	req->presend_ctx = NULL;
	aws_endpoint_release(&ep);
	return rc;
}

int aws_query(struct aws_client *c, enum aws_service svc, const char *region, const char *action,
	      const char *version, const char *params, struct http_response *resp, char **code_out,
	      struct buf *err)
{
	return aws_query_ex(c, svc, region, action, version, params, 0, resp, code_out, err);
}

int aws_query_ex(struct aws_client *c, enum aws_service svc, const char *region, const char *action,
		 const char *version, const char *params, int max_attempts, struct http_response *resp,
		 char **code_out, struct buf *err)
{
	struct http_request req;
	http_request_init(&req, "POST", "");
	req.max_attempts = max_attempts;
	http_headers_add(&req.headers, "Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
	aws_form_add(&req.body, "Action", action);
	aws_form_add(&req.body, "Version", version);
	if (params && *params) {
		buf_addc(&req.body, '&');
		buf_adds(&req.body, params);
	}
	int rc = send_signed(c, svc, region, action, &req, 0, resp, code_out, err);
	http_request_release(&req);
	return rc;
}

int aws_json(struct aws_client *c, enum aws_service svc, const char *region, const char *target,
	     const char *content_type, const char *body, struct http_response *resp, char **code_out,
	     struct buf *err)
{
	struct http_request req;
	http_request_init(&req, "POST", "");
	http_headers_add(&req.headers, "Content-Type", content_type);
	http_headers_add(&req.headers, "X-Amz-Target", target);
	buf_adds(&req.body, body);
	const char *dot = strrchr(target, '.');
	int rc = send_signed(c, svc, region, dot ? dot + 1 : target, &req, 1, resp, code_out, err);
	http_request_release(&req);
	return rc;
}

int aws_rest(struct aws_client *c, enum aws_service svc, const char *region, const char *method, const char *url,
	     const char *what, const char *content_type, const void *body, size_t len, struct http_response *resp,
	     char **code_out, struct buf *err)
{
	struct http_request req;
	http_request_init(&req, method, url);
	if (content_type)
		http_headers_add(&req.headers, "Content-Type", content_type);
	buf_add(&req.body, body, len);
	int rc = send_signed(c, svc, region, what, &req, 0, resp, code_out, err);
	http_request_release(&req);
	return rc;
}
