/*
 * http.c - the HTTP client: retries, backoff, rate limits and TLS over one reused curl handle.
 * The only file that includes curl.h (see http.h for the contract and ownership).
 *
 * Entry points: http_client_init / http_client_release, http_client_set_rate, http_send,
 * http_backoff_ms, http_request_dump, and the header-list helpers.
 *
 * Invariants:
 * - Every attempt has a connect timeout and a total timeout; attempts are bounded by
 *   max_attempts; nothing retries forever and nothing waits longer than retry_after_max_ms
 *   (Retry-After) or backoff_max_ms (backoff) between attempts. A request with a deadline ends
 *   by it, whatever the attempts: each attempt's timeouts are cut to what is left, and a retry
 *   whose wait would reach it is not made (the attempts end there, as if they had run out).
 * - The retry decision per answer: the caller's classifier first, then the built-in rule
 *   (429 throttling, 5xx transient, everything else final). Connection-level failures
 *   (refused, reset, timeout, DNS, empty reply) are retried; configuration failures (bad URL,
 *   bad CA file, certificate rejected) are not.
 * - Each attempt takes one token from the request's rate bucket first, waiting for it through
 *   the injected sleep, so retries are rate limited too. The buckets (struct http_rates) may be
 *   shared by clients on several threads (http_client_share_rates): every read or change of a
 *   bucket holds the rates' mutex, and nobody sleeps while holding it. Everything else in a
 *   client (its curl handle, retry quota, jitter state) belongs to one thread at a time.
 * - All waiting goes through opt.sleep_ms and all time through opt.clock_ms.
 * - With a retry quota (AWS standard/adaptive modes) retries draw from one budget per client, so
 *   an outage does not multiply the load by max_attempts; adaptive mode also slows a rate key
 *   down while it is throttled.
 * - No secret reaches a message or a log: messages carry the URL without its query, and debug
 *   dumps redact secret headers, query signatures and secret bodies.
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/secbuf.h"
#include "ebsmigrate/stop.h"

#ifndef EM_VERSION
#define EM_VERSION "dev"
#endif

struct http_bucket {
	char *key;
	double tokens;
	double rate;  /* tokens per second; <= 0 = unlimited */
	double set_rate; /* the rate configured for the key; adaptive mode moves rate below it */
	double burst; /* capacity */
	int64_t last_ms;
	int fresh;    /* no token taken yet: a rate set now starts with a full bucket */
};

/* The token buckets of one client, or of several sharing them (http_client_share_rates). */
struct http_rates {
	pthread_mutex_t lock;       /* held for every access to the buckets and refs */
	int refs;                   /* clients using these buckets */
	struct http_bucket *buckets;
	size_t n_buckets, alloc_buckets;
};

static struct http_rates *rates_new(void)
{
	struct http_rates *r = xcalloc(1, sizeof *r);
	pthread_mutex_init(&r->lock, NULL);
	r->refs = 1;
	return r;
}

static void rates_unref(struct http_rates *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	int left = --r->refs;
	pthread_mutex_unlock(&r->lock);
	if (left)
		return;
	for (size_t i = 0; i < r->n_buckets; i++)
		free(r->buckets[i].key);
	free(r->buckets);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* ---- header lists ---- */

/* One header's strings; the value may be a credential, so it is wiped before it is freed. */
static void header_release(void *p)
{
	struct http_header *e = p;
	free(e->name);
	secbuf_wipe_str(e->value);
	free(e->value);
}

void http_headers_add(struct http_headers *h, const char *name, const char *value)
{
	XGROW(h->v, h->n, h->alloc);
	h->v[h->n].name = xstrdup(name);
	h->v[h->n].value = xstrdup(value ? value : "");
	h->n++;
}

void http_headers_remove(struct http_headers *h, const char *name)
{
	size_t j = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (strcasecmp(h->v[i].name, name) == 0) {
			header_release(&h->v[i]);
			continue;
		}
		h->v[j++] = h->v[i];
	}
	h->n = j;
}

void http_headers_set(struct http_headers *h, const char *name, const char *value)
{
	http_headers_remove(h, name);
	http_headers_add(h, name, value);
}

const char *http_headers_get(const struct http_headers *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcasecmp(h->v[i].name, name) == 0)
			return h->v[i].value;
	return NULL;
}

void http_headers_release(struct http_headers *h)
{
	EM_RELEASE_ARRAY(h->v, h->n, header_release);
	h->v = NULL;
	h->n = h->alloc = 0;
}

/* ---- requests and responses ---- */

void http_request_init(struct http_request *r, const char *method, const char *url)
{
	memset(r, 0, sizeof *r);
	r->method = method;
	r->url = xstrdup(url);
	buf_init(&r->body);
}

void http_request_release(struct http_request *r)
{
	if (r->url)
		secbuf_wipe_str(r->url);
	free(r->url);
	r->url = NULL;
	http_headers_release(&r->headers);
	secbuf_release(&r->body);
}

void http_response_init(struct http_response *r)
{
	memset(r, 0, sizeof *r);
	buf_init(&r->body);
}

void http_response_release(struct http_response *r)
{
	http_headers_release(&r->headers);
	secbuf_release(&r->body);
	r->status = 0;
}

/* ---- injectable clock, sleep and randomness ---- */

static int64_t real_clock_ms(void *ctx)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void real_sleep_ms(void *ctx, int64_t ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static uint64_t xorshift_next(struct http_client *c)
{
	/* xorshift64*: jitter only needs to be spread out, not unpredictable. */
	uint64_t x = c->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	c->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static int64_t now_ms(struct http_client *c)
{
	return c->opt.clock_ms(c->opt.inject_ctx);
}

static void sleep_for(struct http_client *c, int64_t ms)
{
	if (ms > 0)
		c->opt.sleep_ms(c->opt.inject_ctx, ms);
}

static uint64_t next_random(struct http_client *c)
{
	return c->opt.random ? c->opt.random(c->opt.inject_ctx) : xorshift_next(c);
}

/* ---- client ---- */

/* libcurl's global state is set up exactly once, whichever thread makes the first client
 * (curl_global_init is not thread-safe; curl_easy_init would call it implicitly). */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_global_setup(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

/* An option's documented default (http.h) when it is unset (0) or negative. */
static void default_ms(long *ms, long dflt)
{
	if (*ms <= 0)
		*ms = dflt;
}

int http_client_init(struct http_client *c, const struct http_options *opt, struct buf *err)
{
	memset(c, 0, sizeof *c);
	struct http_options o = {0};
	if (opt)
		o = *opt;
	default_ms(&o.connect_timeout_ms, 10000);
	default_ms(&o.timeout_ms, 60000);
	if (o.max_attempts <= 0)
		o.max_attempts = 5;
	default_ms(&o.backoff_base_ms, 500);
	default_ms(&o.backoff_max_ms, 20000);
	default_ms(&o.retry_after_max_ms, 60000);
	/* Tests only (docs/TESTING.md, "Test-only settings"): fault cases cap the wait between
	 * attempts so they do not sleep through real backoffs; the attempts and their order stay. */
	const char *test_wait = getenv("EM_TEST_RETRY_WAIT_MAX_MS");
	if (test_wait && *test_wait) {
		int64_t most = strtoll(test_wait, NULL, 10);
		if (most >= 0 && most < o.backoff_max_ms)
			o.backoff_max_ms = most;
		if (most >= 0 && most < o.retry_after_max_ms)
			o.retry_after_max_ms = most;
	}
	c->quota = o.retry_quota;
	if (o.max_body == 0)
		o.max_body = (size_t)64 << 20;
	if (o.default_rate == 0)
		o.default_rate = 10;
	if (o.default_burst <= 0)
		o.default_burst = o.default_rate > 0 ? o.default_rate : 1;
	if (!o.clock_ms)
		o.clock_ms = real_clock_ms;
	if (!o.sleep_ms)
		o.sleep_ms = real_sleep_ms;

	const char *env_ca = getenv("AWS_CA_BUNDLE");
	if (!o.ca_file && !o.ca_pem && !o.no_env_ca && env_ca && *env_ca)
		o.ca_file = env_ca;
	o.ca_file = dup_or_null(o.ca_file);
	o.ca_pem = dup_or_null(o.ca_pem);
	o.client_cert_file = dup_or_null(o.client_cert_file);
	o.client_key_file = dup_or_null(o.client_key_file);
	o.client_cert_pem = dup_or_null(o.client_cert_pem);
	o.client_key_pem = dup_or_null(o.client_key_pem);
	o.user_agent = xstrdup(o.user_agent ? o.user_agent : "ebsmigrate/" EM_VERSION);
	c->opt = o;

	if (getrandom(&c->rng, sizeof c->rng, 0) != (ssize_t)sizeof c->rng)
		c->rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (c->rng == 0)
		c->rng = 0x9E3779B97F4A7C15ULL;

	c->rates = rates_new();
	pthread_once(&curl_once, curl_global_setup);
	c->curl = curl_easy_init();
	if (!c->curl) {
		http_client_release(c);
		return em_err(err, EM_ENET, "cannot initialise libcurl");
	}
	return 0;
}

void http_client_release(struct http_client *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
	free((char *)c->opt.ca_file);
	free((char *)c->opt.ca_pem);
	free((char *)c->opt.client_cert_file);
	free((char *)c->opt.client_key_file);
	free((char *)c->opt.client_cert_pem);
	secbuf_wipe_str((char *)c->opt.client_key_pem);
	free((char *)c->opt.client_key_pem);
	free((char *)c->opt.user_agent);
	rates_unref(c->rates);
	memset(c, 0, sizeof *c);
}

/* ---- rate limiting: one token bucket per key ---- */

void http_client_share_rates(struct http_client *c, struct http_client *from)
{
	if (c->rates == from->rates)
		return;
	pthread_mutex_lock(&from->rates->lock);
	from->rates->refs++;
	pthread_mutex_unlock(&from->rates->lock);
	rates_unref(c->rates);
	c->rates = from->rates;
}

void http_client_set_adaptive(struct http_client *c, int on)
{
	c->opt.adaptive_rate = on;
}

/* The bucket of key, created with the client's defaults; the caller holds c->rates->lock. */
static struct http_bucket *bucket_for(struct http_client *c, const char *key)
{
	struct http_rates *r = c->rates;
	for (size_t i = 0; i < r->n_buckets; i++)
		if (strcmp(r->buckets[i].key, key) == 0)
			return &r->buckets[i];
	XGROW(r->buckets, r->n_buckets, r->alloc_buckets);
	struct http_bucket *b = &r->buckets[r->n_buckets++];
	b->key = xstrdup(key);
	b->rate = b->set_rate = c->opt.default_rate;
	b->burst = c->opt.default_burst;
	b->tokens = b->burst;
	b->last_ms = now_ms(c);
	b->fresh = 1;
	return b;
}

void http_client_set_rate(struct http_client *c, const char *key, double per_second, double burst)
{
	pthread_mutex_lock(&c->rates->lock);
	struct http_bucket *b = bucket_for(c, key);
	b->rate = b->set_rate = per_second;
	b->burst = burst > 0 ? burst : (per_second > 0 ? per_second : 1);
	if (b->tokens > b->burst || b->fresh)
		b->tokens = b->burst;
	pthread_mutex_unlock(&c->rates->lock);
}

static void bucket_refill(struct http_client *c, struct http_bucket *b)
{
	int64_t now = now_ms(c);
	if (now > b->last_ms) {
		b->tokens += (double)(now - b->last_ms) * b->rate / 1000.0;
		if (b->tokens > b->burst)
			b->tokens = b->burst;
		b->last_ms = now;
	}
}

/* Takes one token of key's bucket, sleeping (without the lock) until one is there. */
static void rate_acquire(struct http_client *c, const char *key)
{
	if (!key)
		return;
	for (;;) {
		pthread_mutex_lock(&c->rates->lock);
		struct http_bucket *b = bucket_for(c, key);
		if (b->rate <= 0) {
			pthread_mutex_unlock(&c->rates->lock);
			return;
		}
		bucket_refill(c, b);
		b->fresh = 0;
		if (b->tokens >= 1.0) {
			b->tokens -= 1.0;
			pthread_mutex_unlock(&c->rates->lock);
			return;
		}
		/* Round up so one wait yields the token, unless another thread takes it first. */
		int64_t wait = (int64_t)((1.0 - b->tokens) * 1000.0 / b->rate) + 1;
		pthread_mutex_unlock(&c->rates->lock);
		sleep_for(c, wait);
	}
}

/* Adaptive mode: multiplicative decrease on throttling, additive increase otherwise. */
static void adapt_rate(struct http_client *c, const char *key, int throttled)
{
	if (!c->opt.adaptive_rate || !key)
		return;
	pthread_mutex_lock(&c->rates->lock);
	struct http_bucket *b = bucket_for(c, key);
	double ceiling = b->set_rate > 0 ? b->set_rate : 1e9;
	double cur = b->rate > 0 ? b->rate : ceiling;
	if (throttled) {
		cur *= 0.7;
		if (cur < 0.5)
			cur = 0.5;
	} else {
		cur += 0.5;
		if (cur > ceiling)
			cur = ceiling;
	}
	b->rate = cur >= 1e9 ? b->set_rate : cur;
	if (throttled && b->tokens > 0)
		b->tokens = 0; /* every thread of the key waits for the slower refill */
	pthread_mutex_unlock(&c->rates->lock);
}

/* ---- retry policy ---- */

int64_t http_backoff_ms(struct http_client *c, int retry)
{
	int64_t cap = c->opt.backoff_base_ms;
	for (int i = 1; i < retry && cap < c->opt.backoff_max_ms; i++)
		cap *= 2;
	if (cap > c->opt.backoff_max_ms)
		cap = c->opt.backoff_max_ms;
	return (int64_t)(next_random(c) % (uint64_t)(cap + 1));
}

/* The retry quota (AWS standard mode). 1 when the retry may go ahead. */
static int take_retry_tokens(struct http_client *c, int cost, int *spent)
{
	if (c->opt.retry_quota <= 0)
		return 1;
	if (c->quota < cost)
		return 0;
	c->quota -= cost;
	*spent += cost;
	return 1;
}

static void give_back_retry_tokens(struct http_client *c, int spent)
{
	if (c->opt.retry_quota <= 0)
		return;
	c->quota += spent ? spent : 1;
	if (c->quota > c->opt.retry_quota)
		c->quota = c->opt.retry_quota;
}

static int curl_code_retryable(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

/* Retry-After as milliseconds (delta seconds or an HTTP date); -1 when absent or unusable. */
static int64_t retry_after_ms(const struct http_headers *h)
{
	const char *v = http_headers_get(h, "Retry-After");
	if (!v || !*v)
		return -1;
	int64_t secs;
	if (em_parse_i64(v, &secs) == 0)
		return secs >= 0 ? secs * 1000 : -1;
	time_t when = curl_getdate(v, NULL);
	if (when < 0)
		return -1;
	/* An HTTP date is wall-clock time on the server: compare with the real clock, not em_now(),
	 * which --now may pin for reproducible plans. */
	time_t wall = time(NULL);
	return when > wall ? (int64_t)(when - wall) * 1000 : 0;
}

static enum http_verdict classify(const struct http_request *req, const struct http_response *resp)
{
	if (req->classify) {
		enum http_verdict v = req->classify(req->classify_ctx, resp->status, &resp->headers, &resp->body);
		if (v != HTTP_DEFAULT)
			return v;
	}
	if (resp->status == 429)
		return HTTP_THROTTLED;
	if (resp->status >= 500 && resp->status <= 599)
		return HTTP_TRANSIENT;
	return HTTP_FINAL;
}

/* ---- one attempt ---- */

struct transfer {
	struct http_response *resp;
	int too_big;
};

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct transfer *t = ctx;
	if (buf_add(&t->resp->body, data, size * n) != 0) {
		t->too_big = 1;
		return 0;
	}
	return size * n;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct transfer *t = ctx;
	size_t len = size * n;
	while (len && (data[len - 1] == '\n' || data[len - 1] == '\r'))
		len--;
	if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* A new header block (after 100 Continue, or a new attempt inside curl). */
		http_headers_release(&t->resp->headers);
		return size * n;
	}
	if (len == 0)
		return size * n;
	struct http_headers *h = &t->resp->headers;
	if ((data[0] == ' ' || data[0] == '\t') && h->n) {
		/* obs-fold continuation: append to the previous value */
		struct buf v = BUF_INIT;
		buf_adds(&v, h->v[h->n - 1].value);
		buf_addc(&v, ' ');
		size_t i = 0;
		while (i < len && (data[i] == ' ' || data[i] == '\t'))
			i++;
		buf_add(&v, data + i, len - i);
		secbuf_wipe_str(h->v[h->n - 1].value);
		free(h->v[h->n - 1].value);
		h->v[h->n - 1].value = buf_detach(&v);
		return size * n;
	}
	const char *colon = memchr(data, ':', len);
	if (!colon)
		return size * n;
	size_t name_len = (size_t)(colon - data);
	const char *v = colon + 1, *end = data + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	char *name = xstrndup(data, name_len);
	char *value = xstrndup(v, (size_t)(end - v));
	http_headers_add(h, name, value);
	free(name);
	free(value);
	return size * n;
}

/* A client certificate or key in PEM: in memory (pem, copied by curl) or else from a file. */
static void set_client_pem(CURL *h, const char *pem, CURLoption blob_opt, const char *file, CURLoption file_opt,
			   CURLoption type_opt)
{
	if (pem) {
		struct curl_blob blob = {(void *)pem, strlen(pem), CURL_BLOB_COPY};
		curl_easy_setopt(h, blob_opt, &blob);
	} else if (file) {
		curl_easy_setopt(h, file_opt, file);
	} else {
		return;
	}
	curl_easy_setopt(h, type_opt, "PEM");
}

static void set_tls(struct http_client *c, CURL *h)
{
	const struct http_options *o = &c->opt;
	if (o->ca_pem) {
		struct curl_blob blob = {(void *)o->ca_pem, strlen(o->ca_pem), CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	} else if (o->ca_file) {
		curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
	}
	set_client_pem(h, o->client_cert_pem, CURLOPT_SSLCERT_BLOB, o->client_cert_file, CURLOPT_SSLCERT,
		       CURLOPT_SSLCERTTYPE);
	set_client_pem(h, o->client_key_pem, CURLOPT_SSLKEY_BLOB, o->client_key_file, CURLOPT_SSLKEY,
		       CURLOPT_SSLKEYTYPE);
	if (o->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
}

static struct curl_slist *build_headers(const struct http_request *req, const struct http_headers *extra,
					 struct buf *scratch)
{
	struct curl_slist *list = NULL;
	int has_ctype = 0;
	for (size_t i = 0; i < req->headers.n + extra->n; i++) {
		const struct http_header *hd = i < req->headers.n ? &req->headers.v[i] : &extra->v[i - req->headers.n];
		if (strcasecmp(hd->name, "Content-Type") == 0)
			has_ctype = 1;
		buf_reset(scratch);
		/* "Name;" is curl's way to send a header with an empty value. */
		if (*hd->value)
			buf_addf(scratch, "%s: %s", hd->name, hd->value);
		else
			buf_addf(scratch, "%s;", hd->name);
		list = curl_slist_append(list, scratch->s);
		secbuf_wipe(scratch->s, scratch->len);
		if (!list) {
			fprintf(stderr, "fatal: out of memory building request headers\n");
			abort();
		}
	}
	/* No "Expect: 100-continue" round trip, and no Content-Type the caller did not ask for
	 * (the signature covers exactly the caller's headers). */
	list = curl_slist_append(list, "Expect:");
	if (!has_ctype)
		list = curl_slist_append(list, "Content-Type:");
	if (!list) {
		fprintf(stderr, "fatal: out of memory building request headers\n");
		abort();
	}
	return list;
}

/* Aborts the transfer in flight once a stop was requested (stop.h). */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	(void)ud, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return stop_abort_io() && stop_requested();
}

static int stopped(void)
{
	return stop_abort_io() && stop_requested();
}

static CURLcode perform(struct http_client *c, const struct http_request *req, const struct http_headers *extra,
			struct http_response *resp, struct transfer *t, long connect_timeout_ms, long timeout_ms)
{
	CURL *h = c->curl;
	curl_easy_reset(h); /* keeps the connection cache, so connections are reused */
	c->errbuf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, req->url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_USERAGENT, c->opt.user_agent);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, t);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	set_tls(c, h);

	struct buf scratch = BUF_INIT;
	struct curl_slist *list = build_headers(req, extra, &scratch);
	buf_release(&scratch);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);

	const char *m = req->method;
	if (strcmp(m, "GET") == 0 && req->body.len == 0) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	} else if (strcmp(m, "HEAD") == 0) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else {
		if (strcmp(m, "POST") != 0)
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m);
		if (req->body.len || strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0) {
			curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body.s);
			curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body.len);
		}
	}

	CURLcode cc = curl_easy_perform(h);
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	resp->status = status;
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(list);
	return cc;
}

static void response_reset(struct http_response *r, size_t cap)
{
	http_headers_release(&r->headers);
	secbuf_reset(&r->body);
	buf_set_cap(&r->body, cap);
	r->status = 0;
	r->unreachable = 0;
}

void http_url_for_message(struct buf *out, const char *url)
{
	buf_add(out, url, strcspn(url, "?#"));
}

int http_url_host(struct buf *out, const char *url)
{
	const char *p = strstr(url, "://");
	if (!p)
		return -1;
	p += 3;
	size_t auth = strcspn(p, "/?#");
	const char *at = memchr(p, '@', auth);
	while (at) { /* the last '@' ends the user part */
		const char *next = memchr(at + 1, '@', auth - (size_t)(at + 1 - p));
		if (!next)
			break;
		at = next;
	}
	if (at) {
		auth -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	size_t len;
	if (auth && p[0] == '[') {
		const char *end = memchr(p, ']', auth);
		if (!end)
			return -1;
		p++;
		len = (size_t)(end - p);
	} else {
		const char *colon = memchr(p, ':', auth);
		len = colon ? (size_t)(colon - p) : auth;
	}
	if (!len)
		return -1;
	buf_add(out, p, len);
	return 0;
}

/* Marks in hide[] the bytes of text that repeat a secret part of the URL: a part (split at / ? & =
 * # ; : @) of 4 bytes or more where text holds it whole, and any 8 bytes of one in a row (a
 * server's echo may be cut short). */
static void mark_secret_parts(const char *text, size_t n, const char *secret, unsigned char *hide)
{
	const char *delims = "/?&=#;:@";
	for (const char *p = secret; *p;) {
		size_t len = strcspn(p, delims);
		if (len >= 4) {
			size_t whole = len < 8 ? len : 8; /* a run this long is hidden */
			for (size_t i = 0; i < n; i++) {
				size_t best = 0;
				for (size_t j = 0; j < len && best < n - i; j++) {
					size_t m = 0;
					while (i + m < n && j + m < len && text[i + m] == p[j + m])
						m++;
					if (m > best)
						best = m;
				}
				if (best >= whole)
					memset(hide + i, 1, best);
			}
		}
		p += len;
		p += strspn(p, delims);
	}
}

void http_add_scrubbed(struct buf *out, const char *text, const char *secret_url)
{
	size_t n = strlen(text);
	const char *p = secret_url ? strstr(secret_url, "://") : NULL;
	if (!p || !n) {
		buf_add(out, text, n);
		return;
	}
	p += 3;
	/* userinfo (user:password@) and everything after the host: the secret parts */
	size_t auth = strcspn(p, "/?#");
	const char *at = NULL;
	for (const char *q = p; q < p + auth; q++)
		if (*q == '@')
			at = q;
	unsigned char *hide = xcalloc(n, 1);
	if (at) {
		char *user = xstrndup(p, (size_t)(at - p));
		mark_secret_parts(text, n, user, hide);
		secbuf_free_str(user);
	}
	mark_secret_parts(text, n, p + auth, hide);
	for (size_t i = 0; i < n;) {
		if (!hide[i]) {
			buf_addc(out, text[i++]);
			continue;
		}
		buf_adds(out, "...");
		while (i < n && hide[i])
			i++;
	}
	free(hide);
}

/* The request's URL as messages and dumps show it: without query and fragment, and only
 * scheme://host/... when the URL is a secret. */
static void url_shown(struct buf *out, const struct http_request *req)
{
	if (!req->secret_url) {
		http_url_for_message(out, req->url);
		return;
	}
	const char *p = strstr(req->url, "://");
	if (p)
		buf_add(out, req->url, (size_t)(p + 3 - req->url));
	if (http_url_host(out, req->url))
		buf_adds(out, "(no host)");
	buf_adds(out, "/...");
}

static void debug_dump(const struct http_request *req, const struct http_headers *extra, int attempt)
{
	if (log_get_level() < LOG_DEBUG)
		return;
	char *d = http_request_dump(req, extra);
	log_debug("http attempt %d:\n%s", attempt, d);
	free(d);
}

int http_send(struct http_client *c, const struct http_request *req, struct http_response *out, struct buf *err)
{
	if (!c->curl)
		return em_err(err, EM_EINPUT, "http client used before http_client_init");
	if (!req->method || !*req->method || !req->url || !*req->url)
		return em_err(err, EM_EINPUT, "http request without a method or a url");
	int max = req->max_attempts > 0 ? req->max_attempts : c->opt.max_attempts;
	struct buf where = BUF_INIT;
	buf_addf(&where, "%s ", req->method);
	url_shown(&where, req);

	out->attempts = 0;
	out->throttled = 0;
	int rc = 0, spent = 0; /* retry tokens this request took from the quota */
	/* the whole request's end (0: none): each attempt is cut to what is left of it, and no retry
	 * waits past it */
	int64_t deadline = req->deadline_ms > 0 ? now_ms(c) + req->deadline_ms : 0;
	struct http_headers extra = HTTP_HEADERS_INIT;
	for (int attempt = 1;; attempt++) {
		if (stopped()) {
			rc = em_err(err, EM_ESTOPPED, "%s: not sent: stopped by %s", where.s, stop_signal_name(stop_requested()));
			break;
		}
		rate_acquire(c, req->rate_key);
		long connect_timeout = req->connect_timeout_ms > 0 ? req->connect_timeout_ms : c->opt.connect_timeout_ms;
		long timeout = req->timeout_ms > 0 ? req->timeout_ms : c->opt.timeout_ms;
		if (deadline) {
			int64_t left = deadline - now_ms(c);
			if (left <= 0) {
				rc = em_err(err, EM_ENET, "%s: no answer within %lld s in all (%d attempt%s)", where.s,
					    (long long)(req->deadline_ms + 999) / 1000, attempt - 1, attempt > 2 ? "s" : "");
				break;
			}
			if (left < timeout)
				timeout = (long)left;
			if (left < connect_timeout)
				connect_timeout = (long)left;
		}
		response_reset(out, c->opt.max_body);
		out->attempts = attempt;
		http_headers_release(&extra);
		if (req->presend) {
			struct buf e = BUF_INIT;
			rc = req->presend(req->presend_ctx, req, &extra, &e);
			if (rc) {
				em_err(err, rc, "%s: %s", where.s, e.s);
				buf_release(&e);
				break;
			}
			buf_release(&e);
		}
		debug_dump(req, &extra, attempt);
		struct transfer t = {out, 0};
		CURLcode cc = perform(c, req, &extra, out, &t, connect_timeout, timeout);
		int64_t delay = 0;
		/* out of time when the retry would start at or after the deadline: the attempts end here,
		 * as if they had run out */
		int out_of_time = 0;
		if (cc != CURLE_OK && stopped()) {
			rc = em_err(err, EM_ESTOPPED, "%s: interrupted: stopped by %s", where.s,
				    stop_signal_name(stop_requested()));
			break;
		}
		if (cc != CURLE_OK) {
			if (t.too_big) {
				rc = em_err(err, EM_ETOOBIG, "%s: response body exceeds %zu bytes", where.s,
					    c->opt.max_body);
				break;
			}
			const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc);
			if (curl_code_retryable(cc) && attempt < max) {
				delay = http_backoff_ms(c, attempt);
				out_of_time = deadline && now_ms(c) + delay >= deadline;
			}
			int no_quota = curl_code_retryable(cc) && attempt < max && !out_of_time &&
				       !take_retry_tokens(c, 10, &spent);
			if (!curl_code_retryable(cc) || attempt >= max || no_quota || out_of_time) {
				out->unreachable = cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_RESOLVE_PROXY ||
						   cc == CURLE_COULDNT_CONNECT ||
						   (cc == CURLE_OPERATION_TIMEDOUT && !out->headers.n && !out->body.len);
				out->status = 0;
				if (out_of_time)
					rc = em_err(err, EM_ENET, "%s: %s (out of time: %lld s in all, %d attempt%s)", where.s,
						    why, (long long)(req->deadline_ms + 999) / 1000, attempt, attempt > 1 ? "s" : "");
				else if (attempt > 1 || no_quota)
					rc = em_err(err, EM_ENET, "%s: %s (after %d attempts%s)", where.s, why, attempt,
						    no_quota ? "; retry quota exhausted" : "");
				else
					rc = em_err(err, EM_ENET, "%s: %s", where.s, why);
				break;
			}
			log_debug("%s: %s; retrying in %lld ms", where.s, why, (long long)delay);
		} else {
			enum http_verdict v = classify(req, out);
			if (v == HTTP_THROTTLED)
				out->throttled++;
			adapt_rate(c, req->rate_key, v == HTTP_THROTTLED);
			log_debug("%s: HTTP %ld (attempt %d of %d)", where.s, out->status, attempt, max);
			if (v == HTTP_FINAL) {
				if (out->status < 400)
					give_back_retry_tokens(c, spent);
				break;
			}
			if (attempt < max) {
				int64_t ra = retry_after_ms(&out->headers);
				if (ra > c->opt.retry_after_max_ms)
					ra = c->opt.retry_after_max_ms;
				delay = ra >= 0 ? ra : http_backoff_ms(c, attempt);
				out_of_time = deadline && now_ms(c) + delay >= deadline;
			}
			int no_quota = attempt < max && !out_of_time && !take_retry_tokens(c, 5, &spent);
			if (attempt >= max || no_quota || out_of_time) {
				if (v == HTTP_THROTTLED)
					rc = em_err(err, EM_ETHROTTLED, "%s: still throttled (HTTP %ld) after %d attempts%s",
						    where.s, out->status, attempt,
						    no_quota ? " (retry quota exhausted)" : out_of_time ? " (out of time)" : "");
				break;
			}
			log_debug("%s: retrying in %lld ms", where.s, (long long)delay);
		}
		sleep_for(c, delay);
	}
	http_headers_release(&extra);
	buf_release(&where);
	return rc;
}

/* ---- debug dumps ---- */

static int secret_header(const char *name)
{
	static const char *const names[] = {
		"authorization", "proxy-authorization", "x-amz-security-token", "x-aws-ec2-metadata-token",
		"cookie", "set-cookie", NULL,
	};
	for (const char *const *n = names; *n; n++)
		if (strcasecmp(name, *n) == 0)
			return 1;
	size_t len = strlen(name);
	const char *ttl = "-ttl-seconds";
	if (len > strlen(ttl) && strcasecmp(name + len - strlen(ttl), ttl) == 0)
		return 0;
	for (const char *p = name; *p; p++)
		if (strncasecmp(p, "token", 5) == 0 || strncasecmp(p, "secret", 6) == 0)
			return 1;
	return 0;
}

char *http_request_dump(const struct http_request *r, const struct http_headers *extra)
{
	struct buf b = BUF_INIT;
	buf_addf(&b, "%s ", r->method ? r->method : "?");
	if (r->url && r->secret_url)
		url_shown(&b, r);
	else
		buf_adds(&b, r->url ? r->url : "?");
	buf_addc(&b, '\n');
	size_t n_extra = extra ? extra->n : 0;
	for (size_t i = 0; i < r->headers.n + n_extra; i++) {
		const struct http_header *h = i < r->headers.n ? &r->headers.v[i] : &extra->v[i - r->headers.n];
		buf_addf(&b, "%s: %s\n", h->name, secret_header(h->name) ? "REDACTED" : h->value);
	}
	if (r->body.len) {
		buf_addc(&b, '\n');
		if (r->secret_body) {
			buf_addf(&b, "[%zu bytes, not shown]\n", r->body.len);
		} else {
			size_t n = r->body.len < 2048 ? r->body.len : 2048;
			buf_add(&b, r->body.s, n);
			if (n < r->body.len)
				buf_addf(&b, "... [%zu bytes]", r->body.len);
			buf_addc(&b, '\n');
		}
	}
	char *out = log_redact(b.s);
	secbuf_release(&b);
	return out;
}
