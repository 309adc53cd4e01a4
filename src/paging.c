/*
 * paging.c - the guard every paged read goes through (paging.h): repeated tokens and a page cap.
 *
 * Entry points: page_guard_init, page_guard_next, page_guard_restart, page_guard_release.
 * Invariants: a read asks for at most max_pages pages; it never asks twice with one token (a
 * token is remembered when it is received, before it is sent); the guard keeps 64 bytes per
 * page whatever the server's tokens weigh.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/paging.h"

void page_guard_init(struct page_guard *g, const char *token_name, int max_pages, const char *fmt, ...)
{
	memset(g, 0, sizeof *g);
	va_list ap;
	va_start(ap, fmt);
	g->call = xstrvfmt(fmt, ap);
	va_end(ap);
	g->token_name = token_name;
	g->max_pages = max_pages > 0 ? max_pages : PAGE_GUARD_MAX_PAGES;
}

int page_guard_next(struct page_guard *g, const char *next_token, struct buf *err)
{
	g->pages++;
	if (!next_token || !*next_token)
		return 0;
	char digest[65];
	size_t dummy;
	em_sha256_hex(next_token, strlen(next_token), digest);
	if (strmap_get(&g->seen, digest, &dummy))
		return em_err(err, EM_ESERVER,
			      "%s: page %d repeats a %s received before (the server is paging in a loop); stopped",
			      g->call, g->pages, g->token_name);
	if (g->pages >= g->max_pages)
		return em_err(err, EM_ESERVER, "%s: more than %d pages (the server does not stop paging); stopped",
			      g->call, g->max_pages);
	strmap_put(&g->seen, digest, (size_t)g->pages);
	return 1;
}

void page_guard_restart(struct page_guard *g)
{
	strmap_release(&g->seen);
	g->pages = 0;
}

void page_guard_release(struct page_guard *g)
{
	strmap_release(&g->seen);
	free(g->call);
	memset(g, 0, sizeof *g);
}
