/*
 * paging.h - the one guard of every paged read: EC2 DescribeVolumes, DescribeVolumesModifications
 * and DescribeInstances, CloudWatch GetMetricData, CloudTrail LookupEvents, Pricing GetProducts,
 * Organizations ListAccounts and the Kubernetes lists. A server that answers a page with a token
 * it has already sent (the same one again, or a cycle of a few) would be asked for the same
 * pages forever; one that never stops paging would be asked until memory ran out. After each
 * answer the loop hands the guard the answer's token, and the guard says whether to ask again:
 * a token already received in this read, or more than max_pages pages, is an error naming the
 * call, as botocore's PaginationError is:
 *   "ec2 DescribeVolumes in us-east-1: page 2 repeats a NextToken received before (the server
 *    is paging in a loop); stopped"
 *
 * Tokens are remembered by their SHA-256 (32 bytes each, whatever the server sends), so memory
 * stays bounded by max_pages.
 *
 * Ownership: the guard owns a copy of the call's name and its remembered digests; release with
 * page_guard_release. token_name is borrowed (a string literal).
 */
#ifndef EBSMIGRATE_PAGING_H
#define EBSMIGRATE_PAGING_H

#include "ebsmigrate/buf.h"
#include "ebsmigrate/strmap.h"

/* The page cap of a read that has no cap of its own: 10,000 pages (10 million volumes at
 * DescribeVolumes' 1,000 a page). */
#define PAGE_GUARD_MAX_PAGES 10000

struct page_guard {
	char *call;              /* "ec2 DescribeVolumes in us-east-1": service, operation, where */
	const char *token_name;  /* "NextToken", "continue token" */
	int max_pages;
	int pages;               /* answers taken so far */
	struct strmap seen;      /* SHA-256 (hex) of every token received */
};

/* A guard for one read of up to max_pages pages (PAGE_GUARD_MAX_PAGES when 0), named by the
 * format (service and operation first). */
void page_guard_init(struct page_guard *g, const char *token_name, int max_pages, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* After each answer, with its token (NULL or "" on the last page): 1 = ask for the next page
 * with that token; 0 = the read is complete; EM_ESERVER with one message in err when the token
 * was received before in this read, or when max_pages answers came and another page is still
 * offered. */
int page_guard_next(struct page_guard *g, const char *next_token, struct buf *err);
/* Forgets the tokens and pages (a Kubernetes list restarted after its token expired: the
 * server may hand out the same tokens again). */
void page_guard_restart(struct page_guard *g);
void page_guard_release(struct page_guard *g);

#endif
