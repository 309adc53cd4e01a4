/*
 * aws_pricing.h - the AWS Price List side of the price book: fetching EBS prices with the
 * Pricing API (GetProducts, `pricing refresh`), writing a book back in the GetProducts form of
 * the bundled pricing/ files (`pricing export`), comparing two books (`pricing diff`),
 * rendering a book and the version history (`pricing show`, `pricing list`), and the price-age
 * check that plans and reports make (`--max-price-age`).
 *
 * Ownership: pricing_fetch fills a caller-owned struct pricebook (release it with
 * pricebook_release); struct pricing_diff owns its entry array, whose location strings are
 * borrowed from the two books compared (they must outlive the diff). Writers append to a
 * caller-owned buf and never print.
 */
#ifndef EBSMIGRATE_AWS_PRICING_H
#define EBSMIGRATE_AWS_PRICING_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/pricebook.h"

/* ---- pricing refresh ---- */

/* pricebook.source of a book fetched from the Pricing API (a --region refresh adds detail). */
#define PRICING_SOURCE_REFRESH "pricing refresh (AWS Pricing API GetProducts)"

struct pricing_fetch_options {
	const char *profile;            /* --profile; NULL = the credentials chain's default */
	const char *const *regions;     /* regionCode values to fetch; none = every location */
	size_t n_regions;
	int max_attempts;               /* per request; 0 = the AWS client's default */
	void (*progress)(void *ctx, const char *what, size_t pages);
	void *progress_ctx;
};

struct pricing_fetch_result {
	int pages;      /* GetProducts pages read */
	int calls;      /* HTTP answers (retries included) */
	int throttled;  /* throttling answers retried */
};

/* Calls GetProducts (ServiceCode AmazonEC2, FormatVersion aws_v1, MaxResults 100, TERM_MATCH
 * on productFamily Storage / System Operation / Provisioned Throughput, and on regionCode for
 * each requested region), follows every NextToken, and feeds each page to
 * pricebook_add_getproducts. Builds the whole book in memory: on success out holds every EBS
 * price fetched, with source and fetched_at set (it is not stored); on any failure (network,
 * service error, malformed page, a requested region without EBS prices) out is released and
 * the error names the call, filters and page. */
int pricing_fetch(struct pricebook *out, const struct pricing_fetch_options *o, struct pricing_fetch_result *r,
		  struct buf *err);

/* For a --region refresh: copies into book every location of base that the refresh did not
 * fetch (their regionCode is not one of regions), so the new version still prices them, and
 * notes it in book->source ("...; other locations from version N"). */
void pricing_merge_untouched(struct pricebook *book, const struct pricebook *base, const char *const *regions,
			     size_t n_regions);

/* ---- pricing export ---- */

/* Appends one location of book as a GetProducts response in the bundled pricing/ format
 * ({"FormatVersion":"aws_v1","PriceList":["<product>",...]}, Python json.dumps(indent=1)
 * layout), one product per known price, in make_bundle.py's order and spelling. */
void pricing_export_location(struct buf *out, const struct pricebook *book, const struct price_location *loc);
/* Writes ec2-ebs-LOCATION.json for every location of book into dir (created if needed), each
 * file atomically. *n_files receives how many were written. */
int pricing_export_dir(const struct pricebook *book, const char *dir, size_t *n_files, struct buf *err);

/* ---- pricing diff ---- */

enum pricing_change { PRICE_CHANGED = 0, PRICE_ADDED, PRICE_REMOVED };

struct pricing_diff_entry {
	const char *location;   /* borrowed from the book that has it */
	int item;               /* pricebook item (pricebook_item_name) */
	enum pricing_change change;
	price_t old_price, new_price; /* old unset for added, new unset for removed */
};

struct pricing_diff {
	struct pricing_diff_entry *e;
	size_t n, alloc;
	size_t changed, added, removed;
};

/* Every price that differs between from and to, ordered by location then item. */
void pricing_diff_build(struct pricing_diff *out, const struct pricebook *from, const struct pricebook *to);
void pricing_diff_release(struct pricing_diff *d);
/* Table (json = 0) or JSON (schema ebsmigrate.pricing-diff/v1). from == NULL (with an empty d):
 * nothing to compare, "from": null. tt: how tables fit (table.h; NULL: unlimited). */
struct table_options;
void pricing_diff_write(struct buf *out, const struct pricing_diff *d, const struct pricebook *from,
			const struct pricebook *to, int json, const struct table_options *tt);

/* ---- pricing show / list ---- */

/* The book as a table (json = 0) or JSON (schema ebsmigrate.pricebook/v1). region, when not
 * NULL, keeps that location and its Local/Wavelength Zones ("us-west-2" keeps "us-west-2-lax-1").
 * is_current: 1/0 when known, -1 unknown (a --pricing-dir book). */
void pricing_write_book(struct buf *out, const struct pricebook *b, const char *region, int is_current, int json,
			const struct table_options *tt);
void pricing_write_versions(struct buf *out, const struct ledger_price_version *v, size_t n, int json,
			    const struct table_options *tt);

/* ---- price age ---- */

#define PRICING_DEFAULT_MAX_AGE_S (90 * 86400LL)
/* Parses "90d", "36h", "45m", "600s" or a bare number of seconds; "0" disables the check. */
int pricing_parse_age(const char *s, int64_t *out);
/* The book's as-of time: fetched_at when known, else its effective date (midnight UTC).
 * 0 when neither parses. */
time_t pricing_as_of(const struct pricebook *b);
/* Returns 1 and appends a warning (without "warning: ") to msg when the book's as-of time is
 * more than max_age_s before now; 0 otherwise, and always when max_age_s <= 0. */
int pricing_check_age(const struct pricebook *b, time_t now, int64_t max_age_s, struct buf *msg);

#endif
