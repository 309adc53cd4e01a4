/*
 * aws_sigv4.h - AWS Signature Version 4: signed headers (Authorization) and presigned URLs.
 *
 * Checked against every case of AWS's published signing test suite (tests/unit/test_aws_sigv4.c).
 * The canonical request, string to sign and signature are returned for tests and debugging.
 *
 * Conventions:
 * - req->url is the URL as it goes on the wire: its path and query are already percent-encoded
 *   (raw bytes that still need encoding, like a space or UTF-8, are encoded here too). The
 *   canonical URI encodes the path once more ("double encoding", as every service but S3
 *   expects); params->normalize_path removes "." and ".." segments and empty segments first.
 * - Every header in req->headers is signed, except Authorization, User-Agent, Expect and
 *   X-Amzn-Trace-Id. When there is no Host header, the host is taken from the URL with a
 *   non-default port, exactly as libcurl will send it.
 * - The payload hash is always the SHA-256 of the body; content_sha256_header additionally
 *   sends it as x-amz-content-sha256 (signed).
 * - Time: pass the real time (time(NULL)), never em_now(): AWS rejects requests more than 5
 *   minutes off.
 *
 * Ownership: struct aws_sigv4_signature owns its buffers; aws_sigv4_signature_release frees
 * them. The derived signing key never leaves aws_sigv4.c and is wiped after use.
 */
#ifndef EBSMIGRATE_AWS_SIGV4_H
#define EBSMIGRATE_AWS_SIGV4_H

#include <stddef.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/http.h"

struct aws_credentials;

struct aws_sigv4_params {
	const struct aws_credentials *creds; /* access key, secret, optional session token */
	const char *region;                  /* "us-east-1" */
	const char *service;                 /* signing name: "ec2", "monitoring", "pricing", "sts" */
	time_t now;                          /* signing time (real clock) */
	int normalize_path;                  /* 1 for every service but S3 */
	int content_sha256_header;           /* add and sign x-amz-content-sha256 (header signing) */
	int omit_session_token;              /* add the token after signing, outside the signature */
	long expires;                        /* presign: X-Amz-Expires seconds, 1..604800 */
};

struct aws_sigv4_request {
	const char *method;
	const char *url;
	const struct http_headers *headers;  /* may be NULL */
	const void *body;
	size_t body_len;
};

struct aws_sigv4_signature {
	struct buf canonical_request;
	struct buf string_to_sign;
	struct buf signed_headers;           /* "host;x-amz-date" */
	char signature[65];                  /* lower-case hex */
	char amz_date[17];                   /* "20150830T123600Z" */
	struct http_headers headers;         /* aws_sigv4_sign: headers to append, in order */
	struct buf query;                    /* aws_sigv4_presign: parameters to append (no '?'/'&') */
};

void aws_sigv4_signature_init(struct aws_sigv4_signature *s);
void aws_sigv4_signature_release(struct aws_sigv4_signature *s);

/* Header signing: fills out->headers with X-Amz-Security-Token (when there is a token),
 * X-Amz-Date, x-amz-content-sha256 (when asked) and Authorization, in that order. */
int aws_sigv4_sign(struct aws_sigv4_signature *out, const struct aws_sigv4_request *req,
		   const struct aws_sigv4_params *p, struct buf *err);

/* Query signing: fills out->query with X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date,
 * X-Amz-SignedHeaders, X-Amz-Expires, X-Amz-Security-Token (when there is a token) and
 * X-Amz-Signature, to append to the URL's query. The token is part of the canonical query
 * unless omit_session_token. */
int aws_sigv4_presign(struct aws_sigv4_signature *out, const struct aws_sigv4_request *req,
		      const struct aws_sigv4_params *p, struct buf *err);

/* Signs an http_request in place: drops any earlier Authorization, X-Amz-Date,
 * X-Amz-Security-Token and x-amz-content-sha256, then appends the new ones. */
int aws_sigv4_sign_http(struct http_request *req, const struct aws_sigv4_params *p, struct buf *err);

/* An http_presend_fn: signs every attempt of an http_send afresh, so a retry after a long
 * backoff never carries a stale X-Amz-Date. ctx is a const struct aws_sigv4_params * whose
 * `now` is replaced by time(NULL) at each attempt; the request itself stays unsigned. */
int aws_sigv4_presend(void *ctx, const struct http_request *req, struct http_headers *extra, struct buf *err);

/* The presigned URL: req->url with the signature parameters appended. */
int aws_sigv4_presign_url(struct buf *out, const struct aws_sigv4_request *req, const struct aws_sigv4_params *p,
			  struct buf *err);

/* Lower-case hex SHA-256 of data. */
void aws_sha256_hex(const void *data, size_t len, char out[65]);

#endif
