/*
 * pricebook.h - EBS prices per pricing location, parsed from AWS Pricing API GetProducts
 * responses (the bundled pricing/ cache, or a live refresh).
 *
 * A location is a regionCode as the Pricing API spells it: a Region ("ap-northeast-2") or a
 * Local Zone / Wavelength group ("us-west-2-lax-1"). Prices are exact (money.h price_t).
 * Ownership: struct pricebook owns every string and array; pricebook_release frees them.
 * A price that the source did not contain is "unknown" (its known bit/flag is 0) — callers
 * must flag the volume `unpriced`, never substitute another location's or a default price.
 */
#ifndef EBSMIGRATE_PRICEBOOK_H
#define EBSMIGRATE_PRICEBOOK_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/volume.h"

struct price_location {
	char *code;                               /* regionCode */
	char *name;                               /* attributes.location, e.g. "Asia Pacific (Seoul)" */
	price_t storage[EBS_TYPE_COUNT];          /* per GB-Mo, indexed by enum ebs_type */
	unsigned storage_known;                   /* bit (1u << type) set when known */
	price_t gp3_iops;                         /* per IOPS-Mo above 3,000 */
	int has_gp3_iops;
	price_t gp3_throughput_gibps;             /* per GiBps-mo as published; per MiB/s = /1024 */
	int has_gp3_throughput;
	price_t io1_iops;                         /* per IOPS-Mo (usagetype ...VolumeP-IOPS.piops) */
	int has_io1_iops;
	price_t io2_iops[3];                      /* tiers: <=32,000; 32,001-64,000; >64,000 */
	int has_io2_iops;                         /* bit i set when tier i known */
};

/* pricebook.source of the book built from the pricing/ cache embedded in the binary. */
#define PRICEBOOK_SOURCE_BUNDLED "bundled pricing/ (AWS Pricing API GetProducts)"

struct pricebook {
	char *source;         /* PRICEBOOK_SOURCE_BUNDLED, "pricing refresh", a directory, ... */
	char *effective_date; /* "YYYY-MM-DD": the newest OnDemand effectiveDate seen */
	char *fetched_at;     /* RFC 3339 when the data was retrieved, NULL unknown */
	int64_t version;      /* price book version in the database; 0 = not stored */
	struct price_location *locs;
	size_t n, alloc;
	struct price_origins *origins; /* private to pricebook.c: where each parsed price came from */
};

void pricebook_init(struct pricebook *pb);
void pricebook_release(struct pricebook *pb);

/* Adds every EBS price found in one GetProducts response body
 * ({"FormatVersion","PriceList":["<json>",...],"NextToken"}) to pb. Non-EBS products are
 * ignored. A price that contradicts one already in pb is an error naming both; on any error
 * pb may hold part of the response (release it). origin names the file/page in error messages. If next_token is non-NULL it receives
 * the response's NextToken (caller frees; NULL when absent). */
int pricebook_add_getproducts(struct pricebook *pb, const char *json, size_t len, const char *origin,
			      char **next_token, struct buf *err);
/* Loads every *.json under dir (GetProducts responses) in name order; sets source to dir
 * when it is still NULL. */
int pricebook_load_dir(struct pricebook *pb, const char *dir, struct buf *err);
/* Loads the copy of pricing/ embedded in the binary at build time. */
int pricebook_load_bundled(struct pricebook *pb, struct buf *err);
/* Every price a location can hold, by a stable name (the ledger stores prices under it):
 * items 0..PRICE_ITEMS-1 are "storage:gp2" .. "storage:standard", "gp3_iops",
 * "gp3_throughput_gibps", "io1_iops", "io2_iops:0", "io2_iops:1", "io2_iops:2". */
#define PRICE_ITEMS 13
const char *pricebook_item_name(int item);  /* NULL when item is out of range */
int pricebook_item_parse(const char *name); /* the item, or -1 for an unknown name */
/* Returns 1 and sets *out when loc knows the item's price, else 0. */
int pricebook_item_get(const struct price_location *loc, int item, price_t *out);
void pricebook_item_set(struct price_location *loc, int item, price_t price);

/* The location with that code, or NULL. */
const struct price_location *pricebook_find(const struct pricebook *pb, const char *code);
/* Finds or adds a location (used by parsers and the ledger loader). */
struct price_location *pricebook_location(struct pricebook *pb, const char *code);

#endif
