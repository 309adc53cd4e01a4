/*
 * aws_creds.h - the AWS credentials value: one key pair with its session token, expiry, account
 * and where it came from. The value type both the chain (aws_credential_chain.h) and STS
 * (aws_sts.h) use, kept apart from either so neither depends on the other through it: the
 * chain calls STS, STS only produces and consumes these values.
 *
 * Ownership: struct aws_credentials owns its strings; aws_credentials_release wipes the secret
 * and the token (secbuf.h) before freeing.
 */
#ifndef EBSMIGRATE_AWS_CREDS_H
#define EBSMIGRATE_AWS_CREDS_H

#include <time.h>

struct aws_credentials {
	char *access_key_id;
	char *secret_access_key; /* secret */
	char *session_token;     /* secret; NULL for long-term keys */
	time_t expiration;       /* 0 = does not expire */
	char *account_id;        /* NULL when the source does not say */
	char *source;            /* where they came from, for messages ("environment", ...) */
};

/* Wipes secret and token, frees everything, leaves c zeroed. */
void aws_credentials_release(struct aws_credentials *c);
/* dst is released first, then receives copies of src's fields. */
void aws_credentials_copy(struct aws_credentials *dst, const struct aws_credentials *src);
/* c is released first, then holds copies; an empty token or account is stored as NULL. */
void aws_credentials_set(struct aws_credentials *c, const char *akid, const char *secret, const char *token,
			 time_t expiration, const char *account, const char *source);

#endif
