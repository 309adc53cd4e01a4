/*
 * strmap.c - string -> size_t hash map (FNV-1a, linear probing, load factor <= 1/2).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/strmap.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

void strmap_release(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

static size_t slot_for(const struct strmap *m, const char *key)
{
	size_t h = (size_t)hash_str(key) & (m->cap - 1);
	while (m->keys[h] && strcmp(m->keys[h], key) != 0)
		h = (h + 1) & (m->cap - 1);
	return h;
}

void strmap_put(struct strmap *m, const char *key, size_t val)
{
	if ((m->used + 1) * 2 > m->cap) {
		struct strmap n = {xcalloc(m->cap ? m->cap * 2 : 64, sizeof(char *)),
				   xcalloc(m->cap ? m->cap * 2 : 64, sizeof(size_t)),
				   m->cap ? m->cap * 2 : 64, m->used};
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->keys[i])
				continue;
			size_t s = slot_for(&n, m->keys[i]);
			n.keys[s] = m->keys[i];
			n.vals[s] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		*m = n;
	}
	size_t s = slot_for(m, key);
	if (!m->keys[s]) {
		m->keys[s] = xstrdup(key);
		m->used++;
	}
	m->vals[s] = val;
}

int strmap_get(const struct strmap *m, const char *key, size_t *val)
{
	if (!m->cap)
		return 0;
	size_t s = slot_for(m, key);
	if (!m->keys[s])
		return 0;
	*val = m->vals[s];
	return 1;
}
