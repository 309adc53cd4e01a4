/*
 * aws_client.h - one signed call to an AWS service, shared by the EC2, CloudWatch and Pricing
 * clients: endpoint resolution, credentials (from the chain), SigV4, retries on throttling,
 * and the service's error envelope turned into one message and an EM_E* code.
 *
 *   Query protocol (EC2, CloudWatch query, STS): POST form body "Action=...&Version=..."
 *   JSON protocols (CloudWatch JSON 1.0, Pricing JSON 1.1): POST with X-Amz-Target
 *
 * Errors name the service call, the region and AWS's code, never a secret:
 *   "ec2 DescribeVolumes in us-east-1: UnauthorizedOperation: You are not authorized ..."
 * Codes: AuthFailure/UnauthorizedOperation/AccessDenied(Exception)/InvalidClientTokenId/ExpiredToken/
 * SignatureDoesNotMatch/RequestExpired -> EM_EAUTH; throttling after all retries ->
 * EM_ETHROTTLED; *NotFound -> EM_ENOTFOUND; other 4xx -> EM_ESERVER (caller may inspect
 * code_out); no answer -> EM_ENET.
 *
 * Ownership: struct aws_client owns its HTTP client and credentials provider.
 */
#ifndef EBSMIGRATE_AWS_CLIENT_H
#define EBSMIGRATE_AWS_CLIENT_H

#include <pthread.h>

#include "ebsmigrate/aws_credential_chain.h"
#include "ebsmigrate/aws_endpoint.h"
#include "ebsmigrate/aws_sts.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/http.h"

struct aws_client {
	struct http_client http;
	struct aws_credentials_provider creds;
	char *profile;
	int calls;       /* requests answered (for progress and tests) */
	int throttled;   /* throttling answers seen (retried) */
	/* Threads: a worker (aws_client_init_worker) has its own HTTP client but signs with a copy
	 * of creds_from's credentials, fetched and refreshed under creds_lock (creds_from's). */
	struct aws_client *creds_from;
	pthread_mutex_t creds_lock;
	struct aws_credentials worker_creds;
	/* The account the client acts in when it is one of several (aws_client_init_assumed, or one
	 * of repeated --profile): its rate keys are "SERVICE:ACCOUNT:REGION", so every account-region
	 * has its own token buckets. NULL: "SERVICE:REGION", as with one account. */
	char *account;
};

/* Retries, as the AWS SDKs and CLI configure them (docs/aws.md):
 *   mode         AWS_RETRY_MODE, else the profile's retry_mode, else legacy
 *   max_attempts AWS_MAX_ATTEMPTS, else the profile's max_attempts, else 8 (legacy) or 3
 *   legacy:   ebsmigrate's rules: full-jitter backoff 0.5 s x 2^(n-1) capped at 20 s, no quota
 *   standard: backoff random(0,1) x 2^(n-1) s capped at 20 s; a retry quota of 500 tokens
 *   adaptive: standard plus client-side rate limiting that backs off while throttled
 * Retry-After is honoured in every mode. Values: attempts 1..20; a bad value is EM_EINPUT
 * naming the variable (or the profile and key). */
enum aws_retry_mode { AWS_RETRY_LEGACY, AWS_RETRY_STANDARD, AWS_RETRY_ADAPTIVE };
struct aws_retry_config {
	enum aws_retry_mode mode;
	int max_attempts;
};
int aws_retry_config_resolve(struct aws_retry_config *out, const char *profile, struct buf *err);
/* Sets max_attempts, backoff and quota/adaptive fields of an AWS HTTP client's options. */
void aws_retry_config_apply(const struct aws_retry_config *rc, struct http_options *ho);

struct aws_client_options {
	const char *profile;  /* --profile; NULL = the chain's default */
	int max_attempts;     /* 0 = aws_retry_config_resolve's (AWS_MAX_ATTEMPTS, profile, mode) */
	double rate;          /* requests/s per service+region; 0 = 20 */
	long timeout_ms;      /* 0 = 60000 */
};

int aws_client_init(struct aws_client *c, const struct aws_client_options *opt, struct buf *err);
void aws_client_release(struct aws_client *c);
/* A client acting in another account: its credentials come from STS AssumeRole (p) signed with
 * base's credentials (copied under base's lock; base may be any link of the chain, and must
 * outlive c), cached and refreshed before they expire; its token buckets are base's, keyed by
 * account (account: the 12-digit id). Nothing is called yet: the first call, or
 * aws_credentials_provider_get on c->creds, assumes the role. */
int aws_client_init_assumed(struct aws_client *c, struct aws_client *base, const char *account,
			    const struct aws_assume_role_params *p, struct buf *err);
/* The token bucket key of service (signing name: "ec2", "monitoring", "cloudtrail") in region
 * for c: "SERVICE:REGION", or "SERVICE:ACCOUNT:REGION" for a client of one account of several. */
void aws_client_rate_key(const struct aws_client *c, char *out, size_t n, const char *service, const char *region);
/* Labels c (a root client) as acting in account: rate keys as above. */
void aws_client_set_account(struct aws_client *c, const char *account);
/* A client for another thread: its own curl handle and retry state, from's options, from's
 * token buckets (http_client_share_rates) and from's credentials (resolved and refreshed under
 * from's lock, never concurrently). from must outlive w and must not send while workers run. */
int aws_client_init_worker(struct aws_client *w, struct aws_client *from, struct buf *err);
/* Releases worker w after adding its request and throttling counts to into (the client it
 * worked for), so -v totals and tests see every call. */
void aws_client_release_worker(struct aws_client *w, struct aws_client *into);

/* A job of batches sent a wave at a time (aws_client_waves): fetch sends batch `batch` from
 * slot `slot` of its wave with client c, on a pool thread, writing only that slot's state;
 * collect then takes batch `batch` in batch order on the calling thread. */
typedef int (*aws_wave_fetch_fn)(void *ctx, size_t slot, size_t batch, struct aws_client *c, struct buf *err);
typedef int (*aws_wave_collect_fn)(void *ctx, size_t slot, size_t batch);
/* How many batches a wave sends at once for --concurrency `concurrency`: 1..n_batches (1 when
 * there are none); the slots a caller gives its fetches state for. */
size_t aws_wave_width(int concurrency, size_t n_batches);
/* Sends batches 0..n_batches `width` (aws_wave_width) at a time, slot k of each wave with its own
 * client (its own worker of c, or c itself for one worker), then, in batch order, stops at the first batch whose fetch
 * failed (its rc returned, its message appended to err) or else calls collect, whose first
 * non-zero return ends the run and is returned. The workers' counts are added to c. */
int aws_client_waves(struct aws_client *c, size_t n_batches, size_t width, aws_wave_fetch_fn fetch,
		     aws_wave_collect_fn collect, void *ctx, struct buf *err);

/* Query protocol. params is the form body after "Action=A&Version=V" (already encoded, may
 * be empty, without a leading '&'). On success resp holds the 2xx answer. code_out (may be
 * NULL) receives AWS's error code on failure (caller frees). */
int aws_query(struct aws_client *c, enum aws_service svc, const char *region, const char *action,
	      const char *version, const char *params, struct http_response *resp, char **code_out,
	      struct buf *err);
/* The same with an attempt limit (1 = never retried: for calls that are not idempotent). */
int aws_query_ex(struct aws_client *c, enum aws_service svc, const char *region, const char *action,
		 const char *version, const char *params, int max_attempts, struct http_response *resp,
		 char **code_out, struct buf *err);
/* JSON protocol: target "GraniteServiceVersion20100801.GetMetricData", content type
 * "application/x-amz-json-1.0" or "-1.1". */
int aws_json(struct aws_client *c, enum aws_service svc, const char *region, const char *target,
	     const char *content_type, const char *body, struct http_response *resp, char **code_out,
	     struct buf *err);

/* REST protocol (S3): METHOD url (built by the caller from aws_endpoint_resolve's url for svc and
 * region, path already percent-encoded) with body; signed for svc's name and the endpoint's
 * region, with x-amz-content-sha256 for S3; what names the call in messages ("PutObject").
 * Errors as above (S3's XML <Error><Code>). */
int aws_rest(struct aws_client *c, enum aws_service svc, const char *region, const char *method, const char *url,
	     const char *what, const char *content_type, const void *body, size_t len, struct http_response *resp,
	     char **code_out, struct buf *err);

/* Code and message of an AWS error answer as the calls above decode it (XML <Error><Code> of
 * the Query protocol, or the JSON protocols' __type/message); NULL when absent; caller frees.
 * Exposed for the unit tests and the fuzz harness. */
void aws_error_parse(const struct http_response *r, int json_protocol, char **code, char **message);

/* Appends "&NAME=VALUE" with VALUE percent-encoded (form encoding for Query APIs). */
void aws_form_add(struct buf *form, const char *name, const char *value);

#endif
