/*
 * strmap.h - an open-addressing hash map from strings to size_t values (positions in some
 * caller-owned array). The map copies its keys and frees them in strmap_release.
 */
#ifndef EBSMIGRATE_STRMAP_H
#define EBSMIGRATE_STRMAP_H

#include <stddef.h>

struct strmap {
	char **keys;
	size_t *vals;
	size_t cap, used;
};

#define STRMAP_INIT {NULL, NULL, 0, 0}

void strmap_release(struct strmap *m);
/* Sets key -> val (replacing any previous value). */
void strmap_put(struct strmap *m, const char *key, size_t val);
/* Returns 1 and sets *val when key is present, else 0. */
int strmap_get(const struct strmap *m, const char *key, size_t *val);

#endif
