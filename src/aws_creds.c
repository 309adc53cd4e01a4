/*
 * aws_creds.c - the AWS credentials value (contract in aws_creds.h): release, copy, set.
 *
 * Entry points: aws_credentials_release, aws_credentials_copy, aws_credentials_set.
 *
 * Invariant: the secret key and the session token are wiped (secbuf_free_str) before their
 * memory is freed; a released value is all zeroes and may be reused.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_creds.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/secbuf.h"

void aws_credentials_release(struct aws_credentials *c)
{
	EM_FREE_ALL(c->access_key_id, c->account_id, c->source);
	secbuf_free_str(c->secret_access_key);
	secbuf_free_str(c->session_token);
	memset(c, 0, sizeof *c);
}

void aws_credentials_copy(struct aws_credentials *dst, const struct aws_credentials *src)
{
	if (dst == src)
		return;
	aws_credentials_release(dst);
	dst->access_key_id = xstrdup(src->access_key_id);
	dst->secret_access_key = xstrdup(src->secret_access_key);
	dst->session_token = xstrdup(src->session_token);
	dst->expiration = src->expiration;
	dst->account_id = xstrdup(src->account_id);
	dst->source = xstrdup(src->source);
}

void aws_credentials_set(struct aws_credentials *c, const char *akid, const char *secret, const char *token,
			 time_t expiration, const char *account, const char *source)
{
	aws_credentials_release(c);
	c->access_key_id = xstrdup(akid);
	c->secret_access_key = xstrdup(secret);
	c->session_token = token && *token ? xstrdup(token) : NULL;
	c->expiration = expiration;
	c->account_id = account && *account ? xstrdup(account) : NULL;
	c->source = xstrdup(source);
}
