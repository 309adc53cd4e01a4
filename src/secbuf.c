/*
 * secbuf.c - wiping secrets before their memory is freed (contract in secbuf.h).
 *
 * Entry points: secbuf_wipe, secbuf_release, secbuf_reset, secbuf_wipe_str, secbuf_free_str,
 * secbuf_wipe_json.
 *
 * Invariant: a buf is wiped over its whole capacity, so bytes of a secret that a later,
 * shorter write left beyond len are gone too; the static empty string (cap 0) is never written.
 */
#include <cjson/cJSON.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/secbuf.h"

void secbuf_wipe(void *p, size_t n)
{
	if (p && n)
		OPENSSL_cleanse(p, n);
}

void secbuf_release(struct buf *b)
{
	if (b->cap)
		OPENSSL_cleanse(b->s, b->cap);
	buf_release(b);
}

void secbuf_reset(struct buf *b)
{
	if (b->cap)
		OPENSSL_cleanse(b->s, b->cap);
	buf_reset(b);
}

void secbuf_wipe_str(char *s)
{
	if (s)
		OPENSSL_cleanse(s, strlen(s));
}

void secbuf_free_str(char *s)
{
	if (s) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

void secbuf_wipe_json(struct cJSON *j)
{
	for (; j; j = j->next) {
		if (j->valuestring)
			OPENSSL_cleanse(j->valuestring, strlen(j->valuestring));
		secbuf_wipe_json(j->child);
	}
}
