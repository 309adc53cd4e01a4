/*
 * secbuf.h - secrets in memory: wipe before free.
 *
 * A secret (an AWS secret key or session token, a bearer token, a private key, an exec
 * plugin's output or env value, a file that may hold any of those) lives in an ordinary
 * struct buf or a heap string; these helpers overwrite the whole allocation with
 * OPENSSL_cleanse (which the compiler may not optimise away) before it is freed. They are
 * the one copy of the wiping code; modules do not call OPENSSL_cleanse on their own.
 *
 * Ownership: as buf.h. secbuf_release leaves the buf empty and reusable, like buf_release.
 * Every function accepts NULL / an empty buf and then does nothing.
 */
#ifndef EBSMIGRATE_SECBUF_H
#define EBSMIGRATE_SECBUF_H

#include <stddef.h>

#include "ebsmigrate/buf.h"

struct cJSON;

/* Overwrites n bytes at p. */
void secbuf_wipe(void *p, size_t n);
/* Wipes every allocated byte of b (not only len), then buf_release. */
void secbuf_release(struct buf *b);
/* Wipes every allocated byte of b, then buf_reset: the memory stays for the next secret. */
void secbuf_reset(struct buf *b);
/* Wipes the NUL-terminated string s in place (it stays allocated, now empty). */
void secbuf_wipe_str(char *s);
/* Wipes the NUL-terminated heap string s, then frees it. */
void secbuf_free_str(char *s);
/* Wipes every string value in a cJSON tree and its siblings (before cJSON_Delete). */
void secbuf_wipe_json(struct cJSON *j);

#endif
