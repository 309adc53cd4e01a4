/*
 * http.h - the HTTP client every network module goes through (http.c is the only libcurl user).
 *
 * One struct http_client per endpoint family (AWS, each Kubernetes cluster): it owns one reused
 * curl handle (connections are kept alive between requests), the TLS settings, a token-bucket
 * rate limit per key ("ec2:us-east-1") and the retry policy: bounded attempts with exponential
 * backoff and full jitter on connection errors, 429 and 5xx, and on whatever the caller's
 * classify callback calls throttling (EC2's RequestLimitExceeded); Retry-After is honoured.
 * Clock, sleep and randomness are injectable so tests never sleep for real.
 *
 * Ownership:
 * - struct http_headers owns its names and values (copies); http_headers_release wipes the
 *   values (they may carry tokens) and frees them.
 * - struct http_request owns url, headers and body; method and rate_key are borrowed (usually
 *   string literals) and must outlive http_send. http_request_release frees (and wipes) them.
 * - struct http_response owns status headers and body; http_send resets it on every attempt,
 *   so one response may be reused across calls. http_response_release wipes and frees.
 * - struct http_client copies every option string; the caller's options may go away after
 *   http_client_init. http_client_release frees everything and wipes the client key.
 *
 * Errors: http_send returns 0 when a final HTTP answer arrived (any status: the caller decides
 * what a 403 means and parses the service's error body), and a negative EM_E* code, with one
 * message appended to err, when it has no usable answer: EM_ENET (connection, DNS, TLS, timeout
 * after all attempts), EM_ETHROTTLED (still throttled after all attempts; the last answer is
 * left in the response for the caller to quote), EM_ETOOBIG (body over the cap), EM_EINPUT.
 * Messages name the method and the URL without its query (presigned URLs carry signatures).
 */
#ifndef EBSMIGRATE_HTTP_H
#define EBSMIGRATE_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"

struct http_header {
	char *name;
	char *value;
};

struct http_headers {
	struct http_header *v;
	size_t n, alloc;
};

#define HTTP_HEADERS_INIT { NULL, 0, 0 }

void http_headers_add(struct http_headers *h, const char *name, const char *value);
/* Removes every header called name (case-insensitive), then adds name: value. */
void http_headers_set(struct http_headers *h, const char *name, const char *value);
void http_headers_remove(struct http_headers *h, const char *name);
/* First value of name (case-insensitive), or NULL. Borrowed: valid until the next change. */
const char *http_headers_get(const struct http_headers *h, const char *name);
void http_headers_release(struct http_headers *h);

/* What the caller's classifier says about an answer. */
enum http_verdict {
	HTTP_DEFAULT = 0, /* built-in rule: 429 is throttling, 5xx is transient, the rest final */
	HTTP_THROTTLED,   /* retry; EM_ETHROTTLED if attempts run out */
	HTTP_TRANSIENT,   /* retry; if attempts run out, return 0 with this last answer */
	HTTP_FINAL,       /* do not retry, even a 5xx */
};

/* Inspects one answer (status, headers and the body received so far) and classifies it. */
typedef enum http_verdict (*http_classify_fn)(void *ctx, long status, const struct http_headers *headers,
					      const struct buf *body);

struct http_request;

/* Called before every attempt, after the rate-limit wait: the headers it adds to `extra` go
 * with that attempt only (http_send frees them). SigV4 uses it to sign each attempt with the
 * time it is sent (aws_sigv4_presend). A nonzero return stops http_send with that code. */
typedef int (*http_presend_fn)(void *ctx, const struct http_request *req, struct http_headers *extra,
			       struct buf *err);

struct http_request {
	const char *method;         /* "GET", "POST", "PUT", ...; borrowed */
	char *url;                  /* owned */
	struct http_headers headers;
	struct buf body;
	const char *rate_key;       /* borrowed; NULL = not rate limited */
	int max_attempts;           /* 0 = the client's default; 1 = no retries */
	long timeout_ms;            /* 0 = the client's default (total, per attempt) */
	long connect_timeout_ms;    /* 0 = the client's default */
	long deadline_ms;           /* 0 = none; else the whole http_send (every attempt and every wait
				     * between them) ends within it: attempts are cut to what is left,
				     * and a retry that could not start before it is not made */
	int secret_body;            /* never show the body (or the answer's) in debug dumps */
	int secret_url;             /* the URL's path and query are a secret (a webhook's token):
				     * messages and debug dumps show scheme://host/... only */
	http_classify_fn classify;  /* NULL = built-in rule only */
	void *classify_ctx;
	http_presend_fn presend;    /* NULL = send the headers as they are */
	void *presend_ctx;
};

void http_request_init(struct http_request *r, const char *method, const char *url);
void http_request_release(struct http_request *r);

struct http_response {
	long status;                /* 0 when no answer arrived */
	struct http_headers headers; /* of the last answer */
	struct buf body;            /* of the last answer, capped at the client's max_body */
	int attempts;               /* attempts made by the last http_send */
	int throttled;              /* answers classified as throttling during the last http_send */
	int unreachable;            /* EM_ENET because nothing answered: DNS, connection refused, or
				     * a timeout before any byte of an answer (not: a cut or garbled one) */
};

void http_response_init(struct http_response *r);
void http_response_release(struct http_response *r);

struct http_options {
	long connect_timeout_ms;    /* 0 = 10000 */
	long timeout_ms;            /* 0 = 60000: whole attempt, connect included */
	const char *ca_file;        /* PEM bundle; NULL = ca_pem, else AWS_CA_BUNDLE (unless
				     * no_env_ca), else the system store */
	const char *ca_pem;         /* PEM text in memory (kubeconfig certificate-authority-data) */
	int no_env_ca;              /* ignore AWS_CA_BUNDLE (Kubernetes clients) */
	const char *client_cert_file, *client_key_file;
	const char *client_cert_pem, *client_key_pem; /* in memory; the key is wiped on release */
	int insecure;               /* skip TLS verification (kubeconfig insecure-skip-tls-verify) */
	int max_attempts;           /* 0 = 5 */
	long backoff_base_ms;       /* 0 = 500: attempt n waits uniform(0, min(max, base * 2^(n-1))) */
	long backoff_max_ms;        /* 0 = 20000 */
	long retry_after_max_ms;    /* 0 = 60000: longest Retry-After honoured */
	int retry_quota;            /* 0 = none; else a client-wide retry budget in tokens (AWS
				     * standard mode: 500): a retry costs 5 (10 after a connection
				     * failure or timeout), a success gives back what its retries
				     * took, or 1; without enough tokens, no retry */
	int adaptive_rate;          /* 1: a throttled answer cuts its rate key's rate to 0.7x (not
				     * below 0.5/s) and each other answer adds back 0.5/s, up to the
				     * rate set for the key (AWS adaptive mode's client-side limiting) */
	size_t max_body;            /* 0 = 64 MiB */
	double default_rate;        /* requests/s for a rate key not set with http_client_set_rate;
				     * 0 = 10; negative = unlimited */
	double default_burst;       /* 0 = same as the rate */
	const char *user_agent;     /* NULL = "ebsmigrate/VERSION" */
	/* Injection points for tests; NULL = the real thing. */
	int64_t (*clock_ms)(void *ctx);           /* monotonic milliseconds */
	void (*sleep_ms)(void *ctx, int64_t ms);  /* backoff and rate-limit waits */
	uint64_t (*random)(void *ctx);            /* jitter source */
	void *inject_ctx;
};

struct http_rates;

/* Fields are private to http.c. */
struct http_client {
	void *curl;
	struct http_options opt;    /* with owned copies of the strings */
	struct http_rates *rates;   /* the token buckets; shared between clients by
				     * http_client_share_rates (mutex-protected, reference-counted) */
	uint64_t rng;
	int quota;                  /* retry tokens left (opt.retry_quota > 0) */
	char errbuf[256];           /* CURL_ERROR_SIZE */
};

int http_client_init(struct http_client *c, const struct http_options *opt, struct buf *err);
void http_client_release(struct http_client *c);
/* Sets the rate limit for one key: per_second refill, burst = bucket size (0 = per_second). */
void http_client_set_rate(struct http_client *c, const char *key, double per_second, double burst);

/* Makes c use from's token buckets (from's rates, burst and adaptive state, by key) instead of
 * its own: clients used by several threads for one account then draw from one bucket per
 * service and region, and a throttled answer on any of them slows all of them (adaptive rate).
 * The buckets live until the last client using them is released. Call before c sends. */
void http_client_share_rates(struct http_client *c, struct http_client *from);
/* Turns the adaptive rate (http_options.adaptive_rate) on or off after init. */
void http_client_set_adaptive(struct http_client *c, int on);

/* Sends req, retrying as described at the top; the final answer lands in out. */
int http_send(struct http_client *c, const struct http_request *req, struct http_response *out,
	      struct buf *err);

/* The delay before retry number `retry` (1 = first retry): full jitter over an exponential cap. */
int64_t http_backoff_ms(struct http_client *c, int retry);

/* A request as text for debug logs: secret headers and query values replaced by REDACTED,
 * the body shown (redacted, at most 2 KiB) unless secret_body. extra (may be NULL): the
 * attempt's presend headers. Caller frees. */
char *http_request_dump(const struct http_request *r, const struct http_headers *extra);

/* Appends text (a server's words about a request to secret_url, e.g. a webhook's error field)
 * with every part of secret_url's user information, path and query it repeats replaced by "...":
 * a part (between / ? & = # ; : @) of 4 bytes or more where text holds it whole, and any run of 8
 * bytes of one (an echo cut short). The host is not a secret and stays. */
void http_add_scrubbed(struct buf *out, const char *text, const char *secret_url);
/* Appends url without its query and fragment (for messages). */
void http_url_for_message(struct buf *out, const char *url);
/* Appends the host of an absolute URL (scheme://[user@]host[:port]/...): no user, no port, an
 * IPv6 literal without its brackets. Returns -1 (nothing appended) when url has no host. */
int http_url_host(struct buf *out, const char *url);

#endif
