/*
 * aws_sts.c - AWS STS calls and the EKS token (contract in aws_sts.h).
 *
 * Entry points: aws_sts_get_caller_identity, aws_sts_assume_role,
 * aws_sts_assume_role_with_web_identity, aws_eks_token, aws_caller_identity_release.
 *
 * Wire format: POST / with a form body "Action=X&Version=2011-06-15&...", answers
 *   <XResponse><XResult>...</XResult><ResponseMetadata><RequestId/></ResponseMetadata></XResponse>
 * and errors
 *   <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>.
 *
 * Invariants: expat sees no DTD (a doctype or entity declaration stops the parse); collected
 * XML text that may hold secrets is wiped before it is freed; request bodies and answers are
 * marked secret so debug dumps never show tokens; the web identity call is never signed.
 */
#include <expat.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ebsmigrate/aws_creds.h"
#include "ebsmigrate/aws_endpoint.h"
#include "ebsmigrate/aws_sigv4.h"
#include "ebsmigrate/aws_sts.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/secbuf.h"

#define STS_VERSION "2011-06-15"
#define XML_MAX_DEPTH 32
#define XML_MAX_TEXT (1 << 20)

void aws_caller_identity_release(struct aws_caller_identity *id)
{
	EM_FREE_ALL(id->account, id->arn, id->user_id);
	memset(id, 0, sizeof *id);
}

/* ---- a tiny expat collector: the text of the first element with each wanted name ---- */

struct xml_field {
	const char *name;
	const char *parent; /* NULL = any parent */
	struct buf text;
	int seen;
};

struct xml_collect {
	XML_Parser parser;
	struct xml_field *fields;
	size_t n_fields;
	char *stack[XML_MAX_DEPTH];
	int depth;
	struct buf cur;
	int bad;
};

static void xml_on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	struct xml_collect *x = ud;
	if (x->depth >= XML_MAX_DEPTH) {
		x->bad = 1;
		XML_StopParser(x->parser, XML_FALSE);
		return;
	}
	x->stack[x->depth++] = xstrdup(name);
	buf_reset(&x->cur);
}

static void xml_on_end(void *ud, const XML_Char *name)
{
	struct xml_collect *x = ud;
	if (x->depth == 0)
		return;
	const char *parent = x->depth >= 2 ? x->stack[x->depth - 2] : "";
	for (size_t i = 0; i < x->n_fields; i++) {
		struct xml_field *f = &x->fields[i];
		if (f->seen || strcmp(f->name, name) != 0 || (f->parent && strcmp(f->parent, parent) != 0))
			continue;
		buf_add(&f->text, x->cur.s, x->cur.len);
		f->seen = 1;
	}
	secbuf_reset(&x->cur);
	free(x->stack[--x->depth]);
}

static void xml_on_text(void *ud, const XML_Char *s, int len)
{
	struct xml_collect *x = ud;
	if (x->cur.len + (size_t)len > XML_MAX_TEXT) {
		x->bad = 1;
		XML_StopParser(x->parser, XML_FALSE);
		return;
	}
	buf_add(&x->cur, s, (size_t)len);
}

static void xml_on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid, const XML_Char *pubid,
			   int has_internal_subset)
{
	struct xml_collect *x = ud;
	x->bad = 1;
	XML_StopParser(x->parser, XML_FALSE);
}

/* 0, or -1 when the body is not well-formed XML (or has a DTD). */
static int xml_collect(const char *body, size_t len, struct xml_field *fields, size_t n)
{
	struct xml_collect x = {0};
	x.fields = fields;
	x.n_fields = n;
	buf_init(&x.cur);
	x.parser = XML_ParserCreate("UTF-8");
	if (!x.parser)
		return -1;
	XML_SetUserData(x.parser, &x);
	XML_SetElementHandler(x.parser, xml_on_start, xml_on_end);
	XML_SetCharacterDataHandler(x.parser, xml_on_text);
	XML_SetStartDoctypeDeclHandler(x.parser, xml_on_doctype);
	int ok = XML_Parse(x.parser, body, (int)len, XML_TRUE) == XML_STATUS_OK && !x.bad;
	XML_ParserFree(x.parser);
	while (x.depth > 0)
		free(x.stack[--x.depth]);
	secbuf_release(&x.cur);
	return ok ? 0 : -1;
}

static void xml_fields_release(struct xml_field *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		secbuf_release(&fields[i].text);
	}
}

static const char *field(struct xml_field *fields, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (fields[i].seen && strcmp(fields[i].name, name) == 0)
			return fields[i].text.s;
	return NULL;
}

/* ---- calls ---- */

static int sts_error_rc(const char *code)
{
	static const char *const auth[] = {
		"AccessDenied", "InvalidClientTokenId", "SignatureDoesNotMatch", "ExpiredToken", "ExpiredTokenException",
		"InvalidIdentityToken", "IncompleteSignature", "MissingAuthenticationToken", "InvalidAccessKeyId",
		"AuthFailure", "RegionDisabledException", "UnrecognizedClientException", NULL,
	};
	if (!code)
		return EM_ESERVER;
	for (const char *const *a = auth; *a; a++)
		if (strcmp(code, *a) == 0)
			return EM_EAUTH;
	if (strcmp(code, "Throttling") == 0 || strcmp(code, "ThrottlingException") == 0 ||
	    strcmp(code, "RequestLimitExceeded") == 0)
		return EM_ETHROTTLED;
	return EM_ESERVER;
}

static enum http_verdict sts_classify(void *ctx, long status, const struct http_headers *h, const struct buf *body)
{
	if (status == 200)
		return HTTP_FINAL;
	if (strstr(body->s, "<Code>Throttling</Code>") || strstr(body->s, "<Code>ThrottlingException</Code>") ||
	    strstr(body->s, "<Code>RequestLimitExceeded</Code>"))
		return HTTP_THROTTLED;
	/* The identity provider (e.g. the EKS OIDC issuer) could not be reached: STS says retry. */
	if (strstr(body->s, "<Code>IDPCommunicationError</Code>"))
		return HTTP_TRANSIENT;
	return HTTP_DEFAULT;
}

/* STS's endpoint in region (NULL = global); on failure err gets "what: why". */
static int sts_endpoint(struct aws_endpoint *ep, const char *region, const char *what, struct buf *err)
{
	struct buf e = BUF_INIT;
	int rc = aws_endpoint_resolve(ep, AWS_SERVICE_STS, region, &e);
	if (rc)
		em_err(err, rc, "%s: %s", what, e.s);
	buf_release(&e);
	return rc;
}

/* One STS call. form holds the parameters after Action and Version ("&K=V..."), already
 * encoded. On 200 the answer is in resp; otherwise the error is reported as "what: ...". */
static int sts_call(struct http_client *http, const char *region, const struct aws_credentials *creds,
		    const char *action, const char *form, struct http_response *resp, const char *what,
		    struct buf *err)
{
	struct aws_endpoint ep;
	int rc = sts_endpoint(&ep, region, what, err);
	if (rc)
		return rc;
	struct buf e = BUF_INIT;
	struct buf url = BUF_INIT, rate_key = BUF_INIT;
	buf_addf(&url, "%s/", ep.url);
	buf_addf(&rate_key, "sts:%s", ep.signing_region);
	struct http_request rq;
	http_request_init(&rq, "POST", url.s);
	http_headers_add(&rq.headers, "Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
	buf_addf(&rq.body, "Action=%s&Version=" STS_VERSION "%s", action, form ? form : "");
	rq.rate_key = rate_key.s;
	rq.classify = sts_classify;
	rq.secret_body = 1;
	if (creds) {
		struct aws_sigv4_params sp = {0};
		sp.creds = creds;
		sp.region = ep.signing_region;
		sp.service = ep.signing_name;
		sp.now = time(NULL);
		sp.normalize_path = 1;
		rc = aws_sigv4_sign_http(&rq, &sp, &e);
	}
	if (rc == 0)
		rc = http_send(http, &rq, resp, &e);
	if (rc) {
		em_err(err, rc, "%s: %s", what, e.s);
	} else if (resp->status != 200) {
		struct xml_field f[] = {
			{"Code", "Error", BUF_INIT, 0},
			{"Message", "Error", BUF_INIT, 0},
			{"RequestId", NULL, BUF_INIT, 0},
		};
		size_t nf = sizeof f / sizeof f[0];
		if (xml_collect(resp->body.s, resp->body.len, f, nf) == 0 && field(f, nf, "Code")) {
			const char *code = field(f, nf, "Code"), *msg = field(f, nf, "Message");
			const char *rid = field(f, nf, "RequestId");
			rc = em_err(err, sts_error_rc(code), "%s: %s: %s (HTTP %ld%s%s)", what, code, msg ? msg : "",
				    resp->status, rid ? ", request id " : "", rid ? rid : "");
		} else {
			rc = em_err(err, resp->status == 401 || resp->status == 403 ? EM_EAUTH : EM_ESERVER,
				    "%s: HTTP %ld with an unreadable answer", what, resp->status);
		}
		xml_fields_release(f, nf);
	}
	http_request_release(&rq);
	buf_release(&url);
	buf_release(&rate_key);
	buf_release(&e);
	aws_endpoint_release(&ep);
	return rc;
}

/* "arn:aws:sts::123456789012:assumed-role/x/y" -> "123456789012" */
static char *account_of_arn(const char *arn)
{
	if (!arn || strncmp(arn, "arn:", 4) != 0)
		return NULL;
	const char *p = arn;
	for (int i = 0; i < 4; i++) {
		p = strchr(p, ':');
		if (!p)
			return NULL;
		p++;
	}
	size_t n = strcspn(p, ":");
	return n ? xstrndup(p, n) : NULL;
}

static int credentials_from_answer(struct aws_credentials *out, const struct http_response *resp, const char *what,
				   const char *source, struct buf *err)
{
	struct xml_field f[] = {
		{"AccessKeyId", "Credentials", BUF_INIT, 0},
		{"SecretAccessKey", "Credentials", BUF_INIT, 0},
		{"SessionToken", "Credentials", BUF_INIT, 0},
		{"Expiration", "Credentials", BUF_INIT, 0},
		{"Arn", "AssumedRoleUser", BUF_INIT, 0},
	};
	size_t nf = sizeof f / sizeof f[0];
	int rc = 0;
	time_t exp = 0;
	if (xml_collect(resp->body.s, resp->body.len, f, nf) != 0) {
		rc = em_err(err, EM_ESERVER, "%s: the answer is not well-formed xml", what);
	} else if (!field(f, nf, "AccessKeyId") || !field(f, nf, "SecretAccessKey") || !field(f, nf, "SessionToken") ||
		   !field(f, nf, "Expiration")) {
		rc = em_err(err, EM_ESERVER, "%s: the answer lacks AccessKeyId, SecretAccessKey, SessionToken or Expiration",
			    what);
	} else if (em_parse_time(field(f, nf, "Expiration"), &exp) != 0) {
		rc = em_err(err, EM_ESERVER, "%s: cannot read Expiration '%s'", what, field(f, nf, "Expiration"));
	} else {
		aws_credentials_release(out);
		out->access_key_id = xstrdup(field(f, nf, "AccessKeyId"));
		out->secret_access_key = xstrdup(field(f, nf, "SecretAccessKey"));
		out->session_token = xstrdup(field(f, nf, "SessionToken"));
		out->expiration = exp;
		out->account_id = account_of_arn(field(f, nf, "Arn"));
		out->source = xstrdup(source);
	}
	xml_fields_release(f, nf);
	return rc;
}

int aws_sts_get_caller_identity(struct aws_caller_identity *out, struct http_client *http, const char *region,
				const struct aws_credentials *creds, struct buf *err)
{
	const char *what = "sts GetCallerIdentity";
	if (!creds)
		return em_err(err, EM_EAUTH, "%s: no credentials", what);
	struct http_response resp;
	http_response_init(&resp);
	int rc = sts_call(http, region, creds, "GetCallerIdentity", NULL, &resp, what, err);
	if (rc == 0) {
		struct xml_field f[] = {
			{"Account", "GetCallerIdentityResult", BUF_INIT, 0},
			{"Arn", "GetCallerIdentityResult", BUF_INIT, 0},
			{"UserId", "GetCallerIdentityResult", BUF_INIT, 0},
		};
		size_t nf = sizeof f / sizeof f[0];
		if (xml_collect(resp.body.s, resp.body.len, f, nf) != 0 || !field(f, nf, "Account") || !field(f, nf, "Arn")) {
			rc = em_err(err, EM_ESERVER, "%s: the answer lacks Account or Arn", what);
		} else {
			aws_caller_identity_release(out);
			out->account = xstrdup(field(f, nf, "Account"));
			out->arn = xstrdup(field(f, nf, "Arn"));
			out->user_id = xstrdup(field(f, nf, "UserId"));
		}
		xml_fields_release(f, nf);
	}
	http_response_release(&resp);
	return rc;
}

static void form_add(struct buf *form, const char *key, const char *value)
{
	buf_addf(form, "&%s=", key);
	buf_add_urlencoded(form, value, 1);
}

/* An AssumeRole* call: its answer's credentials into out, with source for messages. */
static int assume_call(struct aws_credentials *out, struct http_client *http, const char *region,
		       const struct aws_credentials *creds, const char *action, const char *form, const char *what,
		       const char *source, struct buf *err)
{
	struct http_response resp;
	http_response_init(&resp);
	int rc = sts_call(http, region, creds, action, form, &resp, what, err);
	if (rc == 0)
		rc = credentials_from_answer(out, &resp, what, source, err);
	http_response_release(&resp);
	return rc;
}

int aws_sts_assume_role(struct aws_credentials *out, struct http_client *http, const char *region,
			const struct aws_credentials *source, const struct aws_assume_role_params *p, struct buf *err)
{
	if (!p || !p->role_arn || !*p->role_arn)
		return em_err(err, EM_EINPUT, "sts AssumeRole: no role arn");
	struct buf what = BUF_INIT, form = BUF_INIT, src = BUF_INIT;
	buf_addf(&what, "sts AssumeRole for '%s'", p->role_arn);
	if (!source) {
		int rc = em_err(err, EM_EAUTH, "%s: no source credentials", what.s);
		buf_release(&what);
		return rc;
	}
	form_add(&form, "RoleArn", p->role_arn);
	form_add(&form, "RoleSessionName", p->session_name && *p->session_name ? p->session_name : "ebsmigrate");
	if (p->external_id && *p->external_id)
		form_add(&form, "ExternalId", p->external_id);
	if (p->duration_s > 0)
		buf_addf(&form, "&DurationSeconds=%d", p->duration_s);
	buf_addf(&src, "role '%s'", p->role_arn);
	int rc = assume_call(out, http, region, source, "AssumeRole", form.s, what.s, src.s, err);
	buf_release(&what);
	buf_release(&form);
	buf_release(&src);
	return rc;
}

int aws_sts_assume_role_with_web_identity(struct aws_credentials *out, struct http_client *http, const char *region,
					  const char *role_arn, const char *session_name, const char *web_identity_token,
					  struct buf *err)
{
	if (!role_arn || !*role_arn)
		return em_err(err, EM_EINPUT, "sts AssumeRoleWithWebIdentity: no role arn");
	struct buf what = BUF_INIT, form = BUF_INIT, src = BUF_INIT;
	buf_addf(&what, "sts AssumeRoleWithWebIdentity for '%s'", role_arn);
	if (!web_identity_token || !*web_identity_token) {
		int rc = em_err(err, EM_EAUTH, "%s: the web identity token is empty", what.s);
		buf_release(&what);
		return rc;
	}
	form_add(&form, "RoleArn", role_arn);
	form_add(&form, "RoleSessionName", session_name && *session_name ? session_name : "ebsmigrate");
	form_add(&form, "WebIdentityToken", web_identity_token);
	buf_addf(&src, "web identity role '%s'", role_arn);
	int rc = assume_call(out, http, region, NULL, "AssumeRoleWithWebIdentity", form.s, what.s, src.s, err);
	buf_release(&what);
	secbuf_release(&form);
	buf_release(&src);
	return rc;
}

/* ---- EKS token ---- */

static void base64url_nopad(struct buf *out, const char *data, size_t n)
{
	size_t cap = 4 * ((n + 2) / 3) + 1;
	unsigned char *b64 = xmalloc(cap);
	int len = EVP_EncodeBlock(b64, (const unsigned char *)data, (int)n);
	for (int i = 0; i < len; i++) {
		char c = (char)b64[i];
		if (c == '=')
			break;
		buf_addc(out, c == '+' ? '-' : c == '/' ? '_' : c);
	}
	free(b64);
}

int aws_eks_token(struct buf *out, time_t *expires_out, const char *cluster, const char *region,
		  const struct aws_credentials *creds, time_t now, struct buf *err)
{
	if (!cluster || !*cluster)
		return em_err(err, EM_EINPUT, "eks token: no cluster name");
	struct aws_endpoint ep;
	struct buf what = BUF_INIT;
	buf_addf(&what, "eks token for cluster '%s'", cluster);
	int rc = sts_endpoint(&ep, region, what.s, err);
	buf_release(&what);
	if (rc)
		return rc;
	struct buf e = BUF_INIT;
	struct buf url = BUF_INIT, presigned = BUF_INIT;
	buf_addf(&url, "%s/?Action=GetCallerIdentity&Version=" STS_VERSION, ep.url);
	struct http_headers h = HTTP_HEADERS_INIT;
	http_headers_add(&h, "x-k8s-aws-id", cluster);
	struct aws_sigv4_request rq = {"GET", url.s, &h, NULL, 0};
	struct aws_sigv4_params p = {0};
	p.creds = creds;
	p.region = ep.signing_region;
	p.service = ep.signing_name;
	p.now = now;
	p.normalize_path = 1;
	p.expires = 60;
	rc = aws_sigv4_presign_url(&presigned, &rq, &p, &e);
	if (rc) {
		em_err(err, rc, "eks token for cluster '%s': %s", cluster, e.s);
	} else {
		buf_adds(out, "k8s-aws-v1.");
		base64url_nopad(out, presigned.s, presigned.len);
		if (expires_out)
			*expires_out = now + 14 * 60;
	}
	secbuf_release(&presigned);
	buf_release(&url);
	buf_release(&e);
	http_headers_release(&h);
	aws_endpoint_release(&ep);
	return rc;
}
