/*
 * strlist.c - the growable list of strings (strlist.h): append (copied or taken), split on a
 * separator, membership, sort, release; strv_free for the plain `char **` arrays structs expose.
 * Invariant: items[0..n) are valid strings; alloc >= n; an owning list's strings are its own.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/strlist.h"

static const char *add(struct strlist *l, const char *s)
{
	XGROW(l->items, l->n, l->alloc);
	l->items[l->n++] = s;
	return s;
}

const char *strlist_append(struct strlist *l, const char *s)
{
	return add(l, l->owns ? xstrdup(s) : s);
}

const char *strlist_append_nodup(struct strlist *l, char *s)
{
	return add(l, s);
}

size_t strlist_split(struct strlist *l, const char *text, char sep)
{
	size_t added = 0;
	for (const char *p = text;; p++) {
		size_t len = strcspn(p, (char[]){sep, '\0'});
		add(l, xstrndup(p, len));
		added++;
		p += len;
		if (!*p)
			return added;
	}
}

int strlist_contains(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i], s) == 0)
			return 1;
	return 0;
}

static int cmp_items(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void strlist_sort(struct strlist *l)
{
	if (l->n > 1)
		qsort(l->items, l->n, sizeof *l->items, cmp_items);
}

void strlist_release(struct strlist *l)
{
	if (l->owns)
		for (size_t i = 0; i < l->n; i++)
			free((void *)l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = l->alloc = 0;
}

void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void strv_addf(char ***v, size_t *n, size_t *alloc, const char *fmt, ...)
{
	XGROW(*v, *n, *alloc);
	va_list ap;
	va_start(ap, fmt);
	(*v)[(*n)++] = xstrvfmt(fmt, ap);
	va_end(ap);
}
