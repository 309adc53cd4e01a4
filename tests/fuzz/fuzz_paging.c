/* fuzz_paging.c - the paged loop's token check (paging.h) fed by the parsers that read the tokens:
 * the input is a server's sequence of answer pages, separated by NUL bytes; the first byte picks
 * the read (EC2 DescribeVolumes, DescribeVolumesModifications or DescribeInstances through
 * aws_ec2_parse_page, CloudWatch GetMetricData through aws_cloudwatch_read_answer). Each page's
 * token goes to page_guard_next, as the live loops hand it over, until the guard ends the read.
 * Besides the sanitizers' findings the harness checks the guard's promises and aborts when one
 * breaks: a read never asks with a token it received before, never takes more than the cap's
 * pages, ends exactly when a page has no token, and says why it stopped early. */
#include <stdio.h>
#include <stdlib.h>

#include "ebsmigrate/aws_cloudwatch.h"
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/paging.h"
#include "fuzz.h"

#define FUZZ_MAX_PAGES 16

/* The page's next token as the live read gets it (NULL: none, or an unreadable page). */
static char *page_token(int kind, const char *page, size_t len)
{
	static const enum ec2_page_kind ec2_kinds[] = {EC2_PAGE_VOLUMES, EC2_PAGE_MODIFICATIONS, EC2_PAGE_INSTANCES};
	struct buf err = BUF_INIT;
	char *next = NULL;
	if (kind < 3) {
		struct fleet f;
		fleet_init(&f);
		struct ec2_mod_list mods;
		memset(&mods, 0, sizeof mods);
		if (aws_ec2_parse_page(ec2_kinds[kind], page, len, "fuzz", &f, &mods, &next, &err)) {
			free(next);
			next = NULL;
		}
		ec2_mod_list_release(&mods);
		fleet_release(&f);
	} else {
		struct cw_batch b; /* 2 volumes of 4 periods from 2026-10-31T23:30:00Z */
		cw_batch_init(&b, 2, 4, 1793489400, 300);
		if (aws_cloudwatch_read_answer(&b, page, len, "answer", &next, &err)) {
			free(next);
			next = NULL;
		}
		cw_batch_release(&b);
	}
	buf_release(&err);
	return next;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	int kind = data[0] % 4;
	const char *at = (const char *)data + 1, *end = (const char *)data + size;
	struct page_guard g;
	page_guard_init(&g, "NextToken", FUZZ_MAX_PAGES, "fuzz paging %d", kind);
	char *asked[FUZZ_MAX_PAGES]; /* the tokens the read asked with, to check the guard against */
	size_t n_asked = 0;
	struct buf err = BUF_INIT;
	for (int pages = 1;; pages++) {
		const char *nul = memchr(at, '\0', (size_t)(end - at));
		size_t len = nul ? (size_t)(nul - at) : (size_t)(end - at);
		char *token = page_token(kind, at, len);
		int seen = 0;
		for (size_t i = 0; token && i < n_asked; i++)
			seen |= strcmp(asked[i], token) == 0;
		int rc = page_guard_next(&g, token, &err);
		if (rc < 0 && !(err.s && strstr(err.s, "fuzz paging")))
			abort(); /* an early end that names nothing */
		if (rc == 1 && (seen || !*token || pages >= FUZZ_MAX_PAGES || n_asked >= FUZZ_MAX_PAGES))
			abort(); /* asked again with a token it had, past the cap, or with nothing */
		if (rc == 0 && token && *token)
			abort(); /* stopped although a new page was offered and no limit was reached */
		if (seen && rc != EM_ESERVER)
			abort(); /* a repeated token let through */
		if (rc != 1) {
			free(token);
			break;
		}
		asked[n_asked++] = token;
		if (!nul) /* the server has no more answers: it would be asked again with the token */
			at = end;
		else
			at = nul + 1;
	}
	for (size_t i = 0; i < n_asked; i++)
		free(asked[i]);
	buf_release(&err);
	page_guard_release(&g);
	return 0;
}
