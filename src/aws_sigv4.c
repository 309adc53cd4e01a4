/*
 * aws_sigv4.c - AWS Signature Version 4 (see aws_sigv4.h for the conventions).
 *
 * Entry points: aws_sigv4_sign (Authorization header), aws_sigv4_presign (query parameters),
 * aws_sigv4_sign_http / aws_sigv4_presend / aws_sigv4_presign_url (conveniences over them),
 * aws_sha256_hex.
 *
 * The steps, as AWS documents them:
 *   canonical request = METHOD \n canonical URI \n canonical query \n canonical headers \n
 *                       signed headers \n hex(SHA-256(body))
 *   string to sign    = "AWS4-HMAC-SHA256" \n amz-date \n scope \n hex(SHA-256(canonical request))
 *   signing key       = HMAC(HMAC(HMAC(HMAC("AWS4" secret, date), region), service), "aws4_request")
 *   signature         = hex(HMAC(signing key, string to sign))
 *
 * Invariants: canonical query pairs are decoded, re-encoded with the RFC 3986 unreserved set
 * and sorted by key, then value; header names are lower-cased, values trimmed with inner
 * whitespace runs collapsed, repeated headers joined with ',' in order; the signing key and
 * the "AWS4"+secret buffer are wiped before returning. Nothing here does I/O or reads a clock.
 */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ebsmigrate/aws_creds.h"
#include "ebsmigrate/aws_sigv4.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/secbuf.h"

#define ALGORITHM "AWS4-HMAC-SHA256"

void aws_sigv4_signature_init(struct aws_sigv4_signature *s)
{
	memset(s, 0, sizeof *s);
	buf_init(&s->canonical_request);
	buf_init(&s->string_to_sign);
	buf_init(&s->signed_headers);
	buf_init(&s->query);
}

void aws_sigv4_signature_release(struct aws_sigv4_signature *s)
{
	buf_release(&s->canonical_request);
	buf_release(&s->string_to_sign);
	buf_release(&s->signed_headers);
	buf_release(&s->query);
	http_headers_release(&s->headers);
	memset(s->signature, 0, sizeof s->signature);
	memset(s->amz_date, 0, sizeof s->amz_date);
}

/* ---- hashing ---- */


void aws_sha256_hex(const void *data, size_t len, char out[65])
{
	em_sha256_hex(data, len, out);
}

static int hmac_sha256(const void *key, size_t keylen, const void *data, size_t len, unsigned char out[32])
{
	size_t outlen = 0;
	if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, keylen, data, len, out, 32, &outlen) ||
	    outlen != 32)
		return -1;
	return 0;
}

/* ---- URL pieces ---- */

struct url_parts {
	const char *scheme, *authority, *path, *query;
	size_t scheme_len, authority_len, path_len, query_len;
};

static int split_url(const char *url, struct url_parts *u)
{
	memset(u, 0, sizeof *u);
	const char *sep = strstr(url, "://");
	if (!sep || sep == url)
		return -1;
	u->scheme = url;
	u->scheme_len = (size_t)(sep - url);
	const char *a = sep + 3;
	size_t full = strcspn(a, "/?#");
	const char *p = a + full;
	/* drop any userinfo */
	const char *host = a;
	for (const char *q = a; q < p; q++)
		if (*q == '@')
			host = q + 1;
	if (host == p)
		return -1;
	u->authority = host;
	u->authority_len = (size_t)(p - host);
	u->path = p;
	u->path_len = strcspn(p, "?#");
	if (p[u->path_len] == '?') {
		u->query = p + u->path_len + 1;
		u->query_len = strcspn(u->query, "#");
	}
	return 0;
}

/* The Host header curl sends for this URL: the authority, without a default port. */
static void host_from_url(struct buf *out, const struct url_parts *u)
{
	const char *a = u->authority;
	size_t n = u->authority_len;
	const char *colon = NULL;
	const char *bracket = memchr(a, ']', n);
	const char *search = bracket ? bracket : a;
	colon = memchr(search, ':', n - (size_t)(search - a));
	if (colon) {
		const char *port = colon + 1;
		size_t plen = n - (size_t)(port - a);
		int is_https = u->scheme_len == 5 && strncasecmp(u->scheme, "https", 5) == 0;
		int is_http = u->scheme_len == 4 && strncasecmp(u->scheme, "http", 4) == 0;
		if (plen == 0 || (is_https && plen == 3 && memcmp(port, "443", 3) == 0) ||
		    (is_http && plen == 2 && memcmp(port, "80", 2) == 0))
			n = (size_t)(colon - a);
	}
	buf_add(out, a, n);
}

static int is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
	       c == '.' || c == '~';
}

static void uri_encode(struct buf *out, const char *s, size_t n, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (is_unreserved(c) || (keep_slash && c == '/')) {
			buf_addc(out, (char)c);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};
			buf_add(out, e, 3);
		}
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void uri_decode(struct buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n) {
			int hi = hexval(s[i + 1]);
			int lo = hexval(s[i + 2]);
			if (hi >= 0 && lo >= 0) {
				buf_addc(out, (char)(hi * 16 + lo));
				i += 2;
				continue;
			}
		}
		buf_addc(out, s[i]);
	}
}

static void canonical_uri(struct buf *out, const char *path, size_t n, int normalize)
{
	if (n == 0) {
		buf_addc(out, '/');
		return;
	}
	if (!normalize) {
		uri_encode(out, path, n, 1);
		return;
	}
	/* Remove empty, "." and ".." segments; keep a trailing slash. */
	struct seg {
		const char *p;
		size_t n;
	} *segs = NULL;
	size_t nsegs = 0, alloc = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && path[j] != '/')
			j++;
		size_t len = j - i;
		if (len == 0 || (len == 1 && path[i] == '.')) {
			/* skip */
		} else if (len == 2 && path[i] == '.' && path[i + 1] == '.') {
			if (nsegs)
				nsegs--;
		} else {
			XGROW(segs, nsegs, alloc);
			segs[nsegs].p = path + i;
			segs[nsegs].n = len;
			nsegs++;
		}
		i = j + 1;
	}
	buf_addc(out, '/');
	for (size_t k = 0; k < nsegs; k++) {
		if (k)
			buf_addc(out, '/');
		uri_encode(out, segs[k].p, segs[k].n, 0);
	}
	if (nsegs && path[n - 1] == '/')
		buf_addc(out, '/');
	free(segs);
}

/* ---- canonical query ---- */

struct qpair {
	char *key, *value; /* encoded */
};

struct qlist {
	struct qpair *v;
	size_t n, alloc;
};

static void qlist_add_encoded(struct qlist *q, const char *k, size_t kn, const char *v, size_t vn)
{
	XGROW(q->v, q->n, q->alloc);
	q->v[q->n].key = xstrndup(k, kn);
	q->v[q->n].value = xstrndup(v, vn);
	q->n++;
}

/* Adds a raw (unencoded) name and value. */
static void qlist_add_raw(struct qlist *q, const char *k, const char *v)
{
	struct buf ek = BUF_INIT, ev = BUF_INIT;
	uri_encode(&ek, k, strlen(k), 0);
	uri_encode(&ev, v, strlen(v), 0);
	qlist_add_encoded(q, ek.s, ek.len, ev.s, ev.len);
	buf_release(&ek);
	buf_release(&ev);
}

/* Adds the pairs of a query string as found in a URL. */
static void qlist_add_query(struct qlist *q, const char *s, size_t n)
{
	struct buf dk = BUF_INIT, dv = BUF_INIT, ek = BUF_INIT, ev = BUF_INIT;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && s[j] != '&')
			j++;
		if (j > i) {
			const char *eq = memchr(s + i, '=', j - i);
			size_t kn = eq ? (size_t)(eq - (s + i)) : j - i;
			buf_reset(&dk);
			buf_reset(&dv);
			buf_reset(&ek);
			buf_reset(&ev);
			uri_decode(&dk, s + i, kn);
			if (eq)
				uri_decode(&dv, eq + 1, (size_t)(s + j - eq - 1));
			uri_encode(&ek, dk.s, dk.len, 0);
			uri_encode(&ev, dv.s, dv.len, 0);
			qlist_add_encoded(q, ek.s, ek.len, ev.s, ev.len);
		}
		i = j + 1;
	}
	buf_release(&dk);
	buf_release(&dv);
	buf_release(&ek);
	buf_release(&ev);
}

static int qpair_cmp(const void *a, const void *b)
{
	const struct qpair *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : strcmp(x->value, y->value);
}

static void qlist_canonical(struct qlist *q, struct buf *out)
{
	if (q->n)
		qsort(q->v, q->n, sizeof *q->v, qpair_cmp);
	for (size_t i = 0; i < q->n; i++) {
		if (i)
			buf_addc(out, '&');
		buf_addf(out, "%s=%s", q->v[i].key, q->v[i].value);
	}
}

static void qlist_release(struct qlist *q)
{
	for (size_t i = 0; i < q->n; i++) {
		free(q->v[i].key);
		secbuf_wipe(q->v[i].value, strlen(q->v[i].value));
		free(q->v[i].value);
	}
	free(q->v);
	memset(q, 0, sizeof *q);
}

/* ---- canonical headers ---- */

struct chdr {
	char *name;       /* lower case */
	struct buf value; /* trimmed, joined with ',' */
	size_t order;
};

struct hlist {
	struct chdr *v;
	size_t n, alloc;
};

static void trim_collapse(struct buf *out, const char *s)
{
	int pending_space = 0, any = 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			pending_space = any;
			continue;
		}
		if (pending_space)
			buf_addc(out, ' ');
		pending_space = 0;
		any = 1;
		buf_addc(out, (char)c);
	}
}

static void hlist_add(struct hlist *h, const char *name, const char *value)
{
	struct buf lname = BUF_INIT;
	for (const char *p = name; *p; p++)
		buf_addc(&lname, (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p));
	for (size_t i = 0; i < h->n; i++) {
		if (strcmp(h->v[i].name, lname.s) == 0) {
			buf_addc(&h->v[i].value, ',');
			trim_collapse(&h->v[i].value, value);
			buf_release(&lname);
			return;
		}
	}
	XGROW(h->v, h->n, h->alloc);
	struct chdr *c = &h->v[h->n];
	c->name = buf_detach(&lname);
	buf_init(&c->value);
	trim_collapse(&c->value, value);
	c->order = h->n;
	h->n++;
}

static int hlist_has(const struct hlist *h, const char *lname)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->v[i].name, lname) == 0)
			return 1;
	return 0;
}

static int chdr_cmp(const void *a, const void *b)
{
	const struct chdr *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->order < y->order ? -1 : x->order > y->order);
}

/* One canonical header; its value may hold a credential (secbuf_release wipes it). */
static void chdr_release(void *p)
{
	struct chdr *c = p;
	free(c->name);
	secbuf_release(&c->value);
}

static void hlist_release(struct hlist *h)
{
	EM_RELEASE_ARRAY(h->v, h->n, chdr_release);
	memset(h, 0, sizeof *h);
}

static int never_signed(const char *name, int header_mode)
{
	static const char *const skip[] = {"authorization", "user-agent", "expect", "x-amzn-trace-id", NULL};
	for (const char *const *s = skip; *s; s++)
		if (strcasecmp(name, *s) == 0)
			return 1;
	/* Header signing adds its own; earlier copies would be signed twice. */
	if (header_mode && (strcasecmp(name, "x-amz-date") == 0 || strcasecmp(name, "x-amz-security-token") == 0 ||
			    strcasecmp(name, "x-amz-content-sha256") == 0))
		return 1;
	return 0;
}

/* ---- the common core ---- */

static void amz_dates(time_t now, char amz_date[17], char date[9])
{
	char iso[21];
	em_format_time(now, iso); /* YYYY-MM-DDTHH:MM:SSZ */
	size_t j = 0;
	for (size_t i = 0; iso[i] && j < 16; i++)
		if (iso[i] != '-' && iso[i] != ':')
			amz_date[j++] = iso[i];
	amz_date[j] = '\0';
	memcpy(date, amz_date, 8);
	date[8] = '\0';
}

static int check_params(const struct aws_sigv4_request *req, const struct aws_sigv4_params *p, struct url_parts *u,
			struct buf *err)
{
	if (!p->creds || !p->creds->access_key_id || !*p->creds->access_key_id || !p->creds->secret_access_key ||
	    !*p->creds->secret_access_key)
		return em_err(err, EM_EAUTH, "cannot sign a request without an access key and a secret key");
	if (!p->region || !*p->region || !p->service || !*p->service)
		return em_err(err, EM_EINPUT, "cannot sign a request without a region and a service");
	if (!req->method || !*req->method || !req->url)
		return em_err(err, EM_EINPUT, "cannot sign a request without a method and a url");
	if (split_url(req->url, u) != 0) {
		struct buf m = BUF_INIT;
		http_url_for_message(&m, req->url);
		int rc = em_err(err, EM_EINPUT, "cannot sign '%s': not an absolute url", m.s);
		buf_release(&m);
		return rc;
	}
	return 0;
}

/* HMAC chain from the secret to the signature over string_to_sign. */
static int compute_signature(const struct aws_sigv4_params *p, const char *date, const char *sts, char out[65],
			     struct buf *err)
{
	const char *secret = p->creds->secret_access_key;
	size_t slen = strlen(secret);
	unsigned char *k0 = xmalloc(slen + 4);
	memcpy(k0, "AWS4", 4);
	memcpy(k0 + 4, secret, slen);
	unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
	int bad = hmac_sha256(k0, slen + 4, date, strlen(date), k1) ||
		  hmac_sha256(k1, 32, p->region, strlen(p->region), k2) ||
		  hmac_sha256(k2, 32, p->service, strlen(p->service), k3) ||
		  hmac_sha256(k3, 32, "aws4_request", 12, k4) || hmac_sha256(k4, 32, sts, strlen(sts), sig);
	secbuf_wipe(k0, slen + 4);
	free(k0);
	secbuf_wipe(k1, sizeof k1);
	secbuf_wipe(k2, sizeof k2);
	secbuf_wipe(k3, sizeof k3);
	secbuf_wipe(k4, sizeof k4);
	if (bad)
		return em_err(err, EM_EIO, "openssl could not compute an hmac-sha256");
	em_hex(sig, 32, out);
	return 0;
}

/* What signing and presigning share: the checked request, the two date forms, the payload
 * hash and the session token to send (NULL when there is none). */
struct sign_prep {
	struct url_parts u;
	char date[9], payload_hash[65];
	const char *token;
};

static int sign_prepare(struct sign_prep *sp, struct aws_sigv4_signature *out, const struct aws_sigv4_request *req,
			const struct aws_sigv4_params *p, struct buf *err)
{
	int rc = check_params(req, p, &sp->u, err);
	if (rc)
		return rc;
	amz_dates(p->now, out->amz_date, sp->date);
	aws_sha256_hex(req->body, req->body_len, sp->payload_hash);
	sp->token = p->creds->session_token && *p->creds->session_token ? p->creds->session_token : NULL;
	return 0;
}

/* Builds canonical request and string to sign from prepared headers and query, then signs. */
static int sign_core(struct aws_sigv4_signature *out, const struct aws_sigv4_request *req,
		     const struct aws_sigv4_params *p, const struct url_parts *u, struct hlist *h, struct qlist *q,
		     const char *date, const char *payload_hash, struct buf *err)
{
	if (h->n)
		qsort(h->v, h->n, sizeof *h->v, chdr_cmp);
	buf_reset(&out->canonical_request);
	buf_reset(&out->signed_headers);
	struct buf *cr = &out->canonical_request;
	buf_addf(cr, "%s\n", req->method);
	canonical_uri(cr, u->path, u->path_len, p->normalize_path);
	buf_addc(cr, '\n');
	qlist_canonical(q, cr);
	buf_addc(cr, '\n');
	for (size_t i = 0; i < h->n; i++) {
		buf_addf(cr, "%s:%s\n", h->v[i].name, h->v[i].value.s);
		if (i)
			buf_addc(&out->signed_headers, ';');
		buf_adds(&out->signed_headers, h->v[i].name);
	}
	buf_addf(cr, "\n%s\n%s", out->signed_headers.s, payload_hash);

	char cr_hash[65];
	aws_sha256_hex(cr->s, cr->len, cr_hash);
	buf_reset(&out->string_to_sign);
	buf_addf(&out->string_to_sign, ALGORITHM "\n%s\n%s/%s/%s/aws4_request\n%s", out->amz_date, date, p->region,
		 p->service, cr_hash);
	return compute_signature(p, date, out->string_to_sign.s, out->signature, err);
}

static void collect_headers(struct hlist *h, const struct aws_sigv4_request *req, const struct url_parts *u,
			    int header_mode)
{
	if (req->headers)
		for (size_t i = 0; i < req->headers->n; i++)
			if (!never_signed(req->headers->v[i].name, header_mode))
				hlist_add(h, req->headers->v[i].name, req->headers->v[i].value);
	if (!hlist_has(h, "host")) {
		struct buf host = BUF_INIT;
		host_from_url(&host, u);
		hlist_add(h, "host", host.s);
		buf_release(&host);
	}
}

int aws_sigv4_sign(struct aws_sigv4_signature *out, const struct aws_sigv4_request *req,
		   const struct aws_sigv4_params *p, struct buf *err)
{
	struct hlist h = {0};
	struct qlist q = {0};
	struct sign_prep sp;
	int rc = sign_prepare(&sp, out, req, p, err);
	if (rc)
		return rc;
	collect_headers(&h, req, &sp.u, 1);
	hlist_add(&h, "x-amz-date", out->amz_date);
	if (sp.token && !p->omit_session_token)
		hlist_add(&h, "x-amz-security-token", sp.token);
	if (p->content_sha256_header)
		hlist_add(&h, "x-amz-content-sha256", sp.payload_hash);
	if (sp.u.query)
		qlist_add_query(&q, sp.u.query, sp.u.query_len);
	rc = sign_core(out, req, p, &sp.u, &h, &q, sp.date, sp.payload_hash, err);
	hlist_release(&h);
	qlist_release(&q);
	if (rc)
		return rc;

	http_headers_release(&out->headers);
	if (sp.token)
		http_headers_add(&out->headers, "X-Amz-Security-Token", sp.token);
	http_headers_add(&out->headers, "X-Amz-Date", out->amz_date);
	if (p->content_sha256_header)
		http_headers_add(&out->headers, "x-amz-content-sha256", sp.payload_hash);
	struct buf auth = BUF_INIT;
	buf_addf(&auth, ALGORITHM " Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s",
		 p->creds->access_key_id, sp.date, p->region, p->service, out->signed_headers.s, out->signature);
	http_headers_add(&out->headers, "Authorization", auth.s);
	buf_release(&auth);
	return 0;
}

int aws_sigv4_presign(struct aws_sigv4_signature *out, const struct aws_sigv4_request *req,
		      const struct aws_sigv4_params *p, struct buf *err)
{
	struct sign_prep sp;
	int rc = sign_prepare(&sp, out, req, p, err);
	if (rc)
		return rc;
	if (p->expires < 1 || p->expires > 604800)
		return em_err(err, EM_EINPUT, "presigned url expiry %ld s is outside 1..604800", p->expires);

	struct hlist h = {0};
	collect_headers(&h, req, &sp.u, 0);
	/* The signed-headers list goes into the query, so it is computed before signing. */
	if (h.n)
		qsort(h.v, h.n, sizeof *h.v, chdr_cmp);
	struct buf signed_names = BUF_INIT, credential = BUF_INIT, expires = BUF_INIT;
	for (size_t i = 0; i < h.n; i++) {
		if (i)
			buf_addc(&signed_names, ';');
		buf_adds(&signed_names, h.v[i].name);
	}
	buf_addf(&credential, "%s/%s/%s/%s/aws4_request", p->creds->access_key_id, sp.date, p->region, p->service);
	buf_addf(&expires, "%ld", p->expires);

	struct qlist q = {0};
	if (sp.u.query)
		qlist_add_query(&q, sp.u.query, sp.u.query_len);
	qlist_add_raw(&q, "X-Amz-Algorithm", ALGORITHM);
	qlist_add_raw(&q, "X-Amz-Credential", credential.s);
	qlist_add_raw(&q, "X-Amz-Date", out->amz_date);
	qlist_add_raw(&q, "X-Amz-Expires", expires.s);
	if (sp.token && !p->omit_session_token)
		qlist_add_raw(&q, "X-Amz-Security-Token", sp.token);
	qlist_add_raw(&q, "X-Amz-SignedHeaders", signed_names.s);
	rc = sign_core(out, req, p, &sp.u, &h, &q, sp.date, sp.payload_hash, err);
	hlist_release(&h);
	qlist_release(&q);
	if (rc == 0) {
		struct buf *o = &out->query;
		buf_reset(o);
		buf_adds(o, "X-Amz-Algorithm=" ALGORITHM "&X-Amz-Credential=");
		uri_encode(o, credential.s, credential.len, 0);
		buf_addf(o, "&X-Amz-Date=%s&X-Amz-SignedHeaders=", out->amz_date);
		uri_encode(o, signed_names.s, signed_names.len, 0);
		buf_addf(o, "&X-Amz-Expires=%s", expires.s);
		if (sp.token) {
			buf_adds(o, "&X-Amz-Security-Token=");
			uri_encode(o, sp.token, strlen(sp.token), 0);
		}
		buf_addf(o, "&X-Amz-Signature=%s", out->signature);
	}
	buf_release(&signed_names);
	buf_release(&credential);
	buf_release(&expires);
	return rc;
}

int aws_sigv4_sign_http(struct http_request *req, const struct aws_sigv4_params *p, struct buf *err)
{
	http_headers_remove(&req->headers, "Authorization");
	http_headers_remove(&req->headers, "X-Amz-Date");
	http_headers_remove(&req->headers, "X-Amz-Security-Token");
	http_headers_remove(&req->headers, "x-amz-content-sha256");
	struct aws_sigv4_request r = {req->method, req->url, &req->headers, req->body.s, req->body.len};
	struct aws_sigv4_signature s;
	aws_sigv4_signature_init(&s);
	int rc = aws_sigv4_sign(&s, &r, p, err);
	if (rc == 0)
		for (size_t i = 0; i < s.headers.n; i++)
			http_headers_add(&req->headers, s.headers.v[i].name, s.headers.v[i].value);
	aws_sigv4_signature_release(&s);
	return rc;
}

int aws_sigv4_presend(void *ctx, const struct http_request *req, struct http_headers *extra, struct buf *err)
{
	struct aws_sigv4_params p = *(const struct aws_sigv4_params *)ctx;
	p.now = time(NULL);
	struct aws_sigv4_request r = {req->method, req->url, &req->headers, req->body.s, req->body.len};
	struct aws_sigv4_signature s;
	aws_sigv4_signature_init(&s);
	int rc = aws_sigv4_sign(&s, &r, &p, err);
	if (rc == 0)
		for (size_t i = 0; i < s.headers.n; i++)
			http_headers_add(extra, s.headers.v[i].name, s.headers.v[i].value);
	aws_sigv4_signature_release(&s);
	return rc;
}

int aws_sigv4_presign_url(struct buf *out, const struct aws_sigv4_request *req, const struct aws_sigv4_params *p,
			  struct buf *err)
{
	struct aws_sigv4_signature s;
	aws_sigv4_signature_init(&s);
	int rc = aws_sigv4_presign(&s, req, p, err);
	if (rc == 0) {
		size_t base = strcspn(req->url, "#");
		buf_add(out, req->url, base);
		const char *qm = memchr(req->url, '?', base);
		if (!qm)
			buf_addc(out, '?');
		else if (base > 0 && req->url[base - 1] != '?' && req->url[base - 1] != '&')
			buf_addc(out, '&');
		buf_add(out, s.query.s, s.query.len);
	}
	aws_sigv4_signature_release(&s);
	return rc;
}
