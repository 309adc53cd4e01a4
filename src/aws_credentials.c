/* aws_credentials.c - work in progress */
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_credentials.h"
#include "ebsmigrate/common.h"

static void wipe_free(char *s)
{
	if (s) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

void aws_credentials_release(struct aws_credentials *c)
{
	free(c->access_key_id);
	wipe_free(c->secret_access_key);
	wipe_free(c->session_token);
	free(c->account_id);
	free(c->source);
	memset(c, 0, sizeof *c);
}
