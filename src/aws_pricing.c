/*
 * aws_pricing.c - the AWS Price List side of the price book: fetch (GetProducts), export (the
 * bundled pricing/ format), diff, show, and the price-age check.
 *
 * Entry points: pricing_fetch, pricing_merge_untouched, pricing_export_location /
 * pricing_export_dir, pricing_diff_build / _write / _release, pricing_write_book,
 * pricing_write_versions, pricing_parse_age, pricing_as_of, pricing_check_age.
 *
 * Fetch: one GetProducts query per product family that carries an EBS volume price (Storage,
 * System Operation, Provisioned Throughput), each also filtered on regionCode when regions are
 * given. Filters are TERM_MATCH and the API ANDs them. Every page goes through
 * pricebook_add_getproducts, the parser the bundled cache uses, so a live price list and the
 * bundle are read by the same code. Local Zones and Wavelength Zones have a regionCode of their
 * own ("us-west-2-lax-1"), so an unfiltered refresh brings them in as locations of their own.
 *
 * Invariants: the fetched book lives only in memory until it is complete; any failure releases
 * it, so a partial refresh can never be stored (the caller stores a book in one ledger
 * transaction). Pages go through the page guard (paging.h): a NextToken received before, or
 * more than MAX_PAGES pages, is an error rather than a loop. Export is the inverse of the parser: exporting a book and reading the files back
 * gives the same book; for the bundled book the files equal make_bundle.py's byte for byte
 * apart from its two non-EBS placeholder products (the price book does not hold them).
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_pricing.h"
#include "ebsmigrate/table.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/paging.h"

#define MAX_PAGES 10000

static const char *const families[] = {"Storage", "System Operation", "Provisioned Throughput"};

/* ---------------------------------------------------------------- fetch */

static void describe_query(struct buf *b, const char *region, const char *family)
{
	buf_addf(b, "productFamily '%s'", family);
	if (region)
		buf_addf(b, ", regionCode '%s'", region);
}

/* A GetProducts request: one TERM_MATCH filter per given field (region first, when set). */
static void term_match(struct jsonw *w, const char *field, const char *value)
{
	jsonw_object(w);
	jsonw_key_str(w, "Type", "TERM_MATCH");
	jsonw_key_str(w, "Field", field);
	jsonw_key_str(w, "Value", value);
	jsonw_end(w);
}

static void products_body(struct buf *b, const char *region, const char *family, const char *token)
{
	struct jsonw w;
	jsonw_init(&w, b, JSONW_COMPACT);
	jsonw_object(&w);
	jsonw_key_str(&w, "ServiceCode", "AmazonEC2");
	jsonw_key_array(&w, "Filters");
	if (region)
		term_match(&w, "regionCode", region);
	term_match(&w, "productFamily", family);
	jsonw_end(&w);
	jsonw_key_str(&w, "FormatVersion", "aws_v1");
	jsonw_key_int(&w, "MaxResults", 100);
	if (token)
		jsonw_key_str(&w, "NextToken", token);
	jsonw_end(&w);
}

/* Reads every page of one filtered query into book. */
static int fetch_query(struct aws_client *c, struct pricebook *book, const char *region, const char *family,
		       const struct pricing_fetch_options *o, struct pricing_fetch_result *r, struct buf *err)
{
	char *token = NULL;
	int rc = 0, page = 0;
	struct http_response resp;
	http_response_init(&resp);
	struct buf query = BUF_INIT; /* names the call in messages */
	describe_query(&query, region, family);
	struct page_guard guard;
	page_guard_init(&guard, "NextToken", MAX_PAGES, "pricing GetProducts (%s)", query.s);
	do {
		struct buf body = BUF_INIT, origin = BUF_INIT;
		products_body(&body, region, family, token);
		page++;
		buf_addf(&origin, "pricing GetProducts (%s) page %d", query.s, page);
		rc = aws_json(c, AWS_SERVICE_PRICING, NULL, "AWSPriceListService.GetProducts", "application/x-amz-json-1.1",
			      body.s, &resp, NULL, err);
		if (rc) {
			/* the call is already named: add the query and page */
			em_errprefix(err, "%s, page %d", query.s, page);
		} else {
			char *next = NULL;
			rc = pricebook_add_getproducts(book, resp.body.s, resp.body.len, origin.s, &next, err);
			if (!rc) {
				r->pages++;
				if (o->progress)
					o->progress(o->progress_ctx, "pricing GetProducts pages", (size_t)r->pages);
				rc = page_guard_next(&guard, next, err);
				rc = rc < 0 ? rc : 0;
			}
			free(token);
			token = next;
		}
		buf_release(&body);
		buf_release(&origin);
	} while (!rc && token);
	free(token);
	page_guard_release(&guard);
	buf_release(&query);
	http_response_release(&resp);
	return rc;
}

int pricing_fetch(struct pricebook *out, const struct pricing_fetch_options *o, struct pricing_fetch_result *r,
		  struct buf *err)
{
	pricebook_init(out);
	memset(r, 0, sizeof *r);
	struct aws_client c;
	struct aws_client_options co;
	memset(&co, 0, sizeof co);
	co.profile = o->profile;
	co.max_attempts = o->max_attempts;
	int rc = aws_client_init(&c, &co, err);
	if (rc)
		return rc;
	size_t n_queries = o->n_regions ? o->n_regions : 1;
	for (size_t i = 0; i < n_queries && !rc; i++) {
		const char *region = o->n_regions ? o->regions[i] : NULL;
		for (size_t f = 0; f < sizeof families / sizeof families[0] && !rc; f++)
			rc = fetch_query(&c, out, region, families[f], o, r, err);
		if (!rc && region && !pricebook_find(out, region))
			rc = em_err(err, EM_ENOTFOUND,
				    "the Pricing API has no EBS volume prices for regionCode '%s' (is it a Region, "
				    "Local Zone or Wavelength Zone code such as 'us-west-2-lax-1'?)",
				    region);
	}
	if (!rc && out->n == 0)
		rc = em_err(err, EM_ESERVER, "the Pricing API returned no EBS volume prices");
	if (!rc && !out->effective_date)
		rc = em_err(err, EM_ESERVER, "the Pricing API's EBS prices carry no effectiveDate");
	r->calls = c.calls;
	r->throttled = c.throttled;
	aws_client_release(&c);
	if (rc) {
		pricebook_release(out);
		return rc;
	}
	char now[21];
	em_format_time(em_now(), now);
	out->fetched_at = xstrdup(now);
	struct buf src = BUF_INIT;
	buf_adds(&src, PRICING_SOURCE_REFRESH);
	if (o->n_regions) {
		buf_adds(&src, " for ");
		for (size_t i = 0; i < o->n_regions; i++)
			buf_addf(&src, "%s%s", i ? ", " : "", o->regions[i]);
	}
	out->source = buf_detach(&src);
	return 0;
}

static int in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

void pricing_merge_untouched(struct pricebook *book, const struct pricebook *base, const char *const *regions,
			     size_t n_regions)
{
	size_t copied = 0;
	for (size_t i = 0; i < base->n; i++) {
		const struct price_location *from = &base->locs[i];
		if (in_list(from->code, regions, n_regions) || pricebook_find(book, from->code))
			continue;
		struct price_location *to = pricebook_location(book, from->code);
		if (from->name)
			to->name = xstrdup(from->name);
		for (int item = 0; item < PRICE_ITEMS; item++) {
			price_t p;
			if (pricebook_item_get(from, item, &p))
				pricebook_item_set(to, item, p);
		}
		copied++;
	}
	if (!copied)
		return;
	if (base->effective_date && (!book->effective_date || strcmp(base->effective_date, book->effective_date) > 0)) {
		free(book->effective_date);
		book->effective_date = xstrdup(base->effective_date);
	}
	struct buf src = BUF_INIT;
	buf_addf(&src, "%s; other locations from version %lld", book->source ? book->source : PRICING_SOURCE_REFRESH,
		 (long long)base->version);
	free(book->source);
	book->source = buf_detach(&src);
}

/* ---------------------------------------------------------------- export */

/* Usagetype prefixes of AWS Regions (none in us-east-1), as AWS's billing codes spell them. */
static const struct {
	const char *region, *prefix;
} region_prefixes[] = {
	{"us-east-1", ""},          {"us-east-2", "USE2-"},      {"us-west-1", "USW1-"},
	{"us-west-2", "USW2-"},     {"ca-central-1", "CAN1-"},   {"ca-west-1", "CAN2-"},
	{"eu-west-1", "EU-"},       {"eu-west-2", "EUW2-"},      {"eu-west-3", "EUW3-"},
	{"eu-central-1", "EUC1-"},  {"eu-central-2", "EUC2-"},   {"eu-north-1", "EUN1-"},
	{"eu-south-1", "EUS1-"},    {"eu-south-2", "EUS2-"},     {"ap-northeast-1", "APN1-"},
	{"ap-northeast-2", "APN2-"}, {"ap-northeast-3", "APN3-"}, {"ap-south-1", "APS3-"},
	{"ap-south-2", "APS5-"},    {"ap-southeast-1", "APS1-"}, {"ap-southeast-2", "APS2-"},
	{"ap-southeast-3", "APS4-"}, {"ap-southeast-4", "APS6-"}, {"ap-east-1", "APE1-"},
	{"me-south-1", "MES1-"},    {"me-central-1", "MEC1-"},   {"il-central-1", "ILC1-"},
	{"af-south-1", "AFS1-"},    {"sa-east-1", "SAE1-"},      {"us-gov-west-1", "UGW1-"},
	{"us-gov-east-1", "UGE1-"},
};

static const char *region_prefix(const char *region)
{
	for (size_t i = 0; i < sizeof region_prefixes / sizeof region_prefixes[0]; i++)
		if (strcmp(region_prefixes[i].region, region) == 0)
			return region_prefixes[i].prefix;
	return NULL;
}

/* The usagetype prefix and locationType of a location. A Region has its billing prefix; a
 * zone group "PARENT-city-N" gets "PARENTPREFIX-CITYN-" (us-west-2-lax-1 -> "USW2-LAX1-").
 * The price book does not keep usagetypes, so this reconstructs them; the parser matches by
 * suffix either way. */
static void location_prefix(const char *code, struct buf *prefix, const char **type)
{
	const char *p = region_prefix(code);
	if (p) {
		buf_adds(prefix, p);
		*type = "AWS Region";
		return;
	}
	*type = strstr(code, "-wlz-") ? "AWS Wavelength Zone" : "AWS Local Zone";
	/* parent = the first three dash-separated parts */
	const char *s = code;
	for (int dashes = 0; *s && dashes < 3; s++)
		if (*s == '-' && ++dashes == 3)
			break;
	if (*s != '-')
		return;
	char *parent = xstrndup(code, (size_t)(s - code));
	const char *pp = region_prefix(parent);
	if (pp && *pp)
		buf_adds(prefix, pp);
	else if (pp) /* us-east-1's Regions carry no prefix, its zones do */
		buf_adds(prefix, "USE1-");
	free(parent);
	if (!pp)
		return;
	for (const char *q = s + 1; *q; q++)
		if (*q != '-')
			buf_addc(prefix, (char)(*q >= 'a' && *q <= 'z' ? *q - 32 : *q));
	buf_addc(prefix, '-');
}

/* The SKU make_bundle.py gives a product: base32(SHA-256("region|usagetype"))[:16]. */
static void make_sku(const char *region, const char *usagetype, char out[17])
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	struct buf in = BUF_INIT;
	buf_addf(&in, "%s|%s", region, usagetype);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	if (!EVP_Digest(in.s, in.len, md, &mdlen, EVP_sha256(), NULL) || mdlen < 10) {
		fprintf(stderr, "fatal: openssl could not compute sha-256\n");
		abort();
	}
	buf_release(&in);
	/* 16 base32 characters = 80 bits = the first 10 bytes */
	uint64_t acc = 0;
	int bits = 0, k = 0;
	for (int i = 0; i < 10; i++) {
		acc = (acc << 8) | md[i];
		bits += 8;
		while (bits >= 5) {
			out[k++] = alphabet[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	out[16] = '\0';
}

/* A price with exactly ten decimals, as the API writes pricePerUnit.USD. */
static void add_price10(struct buf *b, price_t p)
{
	buf_addf(b, "%lld.%010lld", (long long)(p / PRICE_UNITS_PER_USD), (long long)(p % PRICE_UNITS_PER_USD));
}

/* The price as AWS writes it in descriptions: trailing zeros trimmed, at least two decimals. */
static void add_price_short(struct buf *b, price_t p)
{
	struct buf t = BUF_INIT;
	add_price10(&t, p);
	while (t.len > 0 && t.s[t.len - 1] == '0')
		t.s[--t.len] = '\0';
	const char *dot = strchr(t.s, '.');
	size_t decimals = t.len - (size_t)(dot - t.s) - 1;
	buf_adds(b, t.s);
	for (; decimals < 2; decimals++)
		buf_addc(b, '0');
	buf_release(&t);
}

struct attr {
	const char *key;
	const char *value;
};

static int attr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct attr *)a)->key, ((const struct attr *)b)->key);
}

/* What one exported product says, beyond the location. */
struct product_spec {
	const char *family;
	const char *usagetype_suffix;
	const char *api_name, *volume_type;
	const char *media, *max_size, *max_iops, *max_tput; /* storage only */
	const char *group, *group_description;             /* IOPS/throughput only */
	const char *unit;
	const char *description; /* printf: price, [begin, end,] location */
	const char *begin, *end;
};

/* Storage, in enum ebs_type order from gp2. Volume limits as AWS's price list states them. */
static const struct product_spec storage_specs[EBS_STANDARD - EBS_GP2 + 1] = {
	{"Storage", "EBS:VolumeUsage.gp2", "gp2", "General Purpose", "SSD-backed", "16 TiB", "16000", "250 MiB/s",
	 NULL, NULL, "GB-Mo", "$%s per GB-month of General Purpose SSD (gp2) provisioned storage - %s", "0", "Inf"},
	{"Storage", "EBS:VolumeUsage.gp3", "gp3", "General Purpose", "SSD-backed", "64 TiB", "80000", "2000 MiB/s",
	 NULL, NULL, "GB-Mo", "$%s per GB-month of General Purpose SSD (gp3) provisioned storage - %s", "0", "Inf"},
	{"Storage", "EBS:VolumeUsage.piops", "io1", "Provisioned IOPS", "SSD-backed", "16 TiB", "64000", "1000 MiB/s",
	 NULL, NULL, "GB-Mo", "$%s per GB-month of Provisioned IOPS SSD (io1) provisioned storage - %s", "0", "Inf"},
	{"Storage", "EBS:VolumeUsage.io2", "io2", "Provisioned IOPS", "SSD-backed", "64 TiB", "256000", "4000 MiB/s",
	 NULL, NULL, "GB-Mo", "$%s per GB-month of Provisioned IOPS SSD (io2) provisioned storage - %s", "0", "Inf"},
	{"Storage", "EBS:VolumeUsage.st1", "st1", "Throughput Optimized HDD", "HDD-backed", "16 TiB", "500", "500 MiB/s",
	 NULL, NULL, "GB-Mo", "$%s per GB-month of Throughput Optimized HDD (st1) provisioned storage - %s", "0", "Inf"},
	{"Storage", "EBS:VolumeUsage.sc1", "sc1", "Cold HDD", "HDD-backed", "16 TiB", "250", "250 MiB/s", NULL, NULL,
	 "GB-Mo", "$%s per GB-month of Cold HDD (sc1) provisioned storage - %s", "0", "Inf"},
	{"Storage", "EBS:VolumeUsage", "standard", "Magnetic", "HDD-backed", "1 TiB", "40 - 200", "40 - 90 MB/sec",
	 NULL, NULL, "GB-Mo", "$%s per GB-month of Magnetic provisioned storage - %s", "0", "Inf"},
};

static const struct product_spec gp3_iops_spec = {
	"System Operation", "EBS:VolumeP-IOPS.gp3", "gp3", "General Purpose", NULL, NULL, NULL, NULL, "EBS IOPS",
	"IOPS", "IOPS-Mo", "$%s per IOPS-month provisioned above 3000 for gp3 - %s", "0", "Inf"};
static const struct product_spec gp3_tput_spec = {
	"Provisioned Throughput", "EBS:VolumeP-Throughput.gp3", "gp3", "General Purpose", NULL, NULL, NULL, NULL,
	"EBS Throughput", "Throughput", "GiBps-mo",
	"$%s per GiBps-month of throughput provisioned above 125 MiBps for gp3 - %s", "0", "Inf"};
static const struct product_spec io1_iops_spec = {
	"System Operation", "EBS:VolumeP-IOPS.piops", "io1", "Provisioned IOPS", NULL, NULL, NULL, NULL, "EBS IOPS",
	"IOPS", "IOPS-Mo", "$%s per IOPS-month provisioned for io1 - %s", "0", "Inf"};
static const struct product_spec io2_iops_specs[3] = {
	{"System Operation", "EBS:VolumeP-IOPS.io2", "io2", "Provisioned IOPS", NULL, NULL, NULL, NULL, "EBS IOPS",
	 "IOPS", "IOPS-Mo", "$%s per IOPS-month provisioned for io2 from %s to %s IOPS - %s", "0", "32000"},
	{"System Operation", "EBS:VolumeP-IOPS.io2.tier2", "io2", "Provisioned IOPS", NULL, NULL, NULL, NULL,
	 "EBS IOPS", "IOPS", "IOPS-Mo", "$%s per IOPS-month provisioned for io2 from %s to %s IOPS - %s", "32000",
	 "64000"},
	{"System Operation", "EBS:VolumeP-IOPS.io2.tier3", "io2", "Provisioned IOPS", NULL, NULL, NULL, NULL,
	 "EBS IOPS", "IOPS", "IOPS-Mo", "$%s per IOPS-month provisioned for io2 from %s to %s IOPS - %s", "64000",
	 "Inf"},
};

#define ONDEMAND_TERM "JRTCKXETXF"
#define RATE_CODE "6YS6EN2CT7"

struct export_ctx {
	const char *code, *name, *location_type, *prefix;
	const char *effective;  /* "2026-09-01T00:00:00Z" */
	const char *version;    /* "20260901000000" */
};

/* Appends one product document (compact JSON, keys in make_bundle.py's order). */
static void export_product(struct buf *b, const struct export_ctx *x, const struct product_spec *s, price_t price)
{
	struct buf usagetype = BUF_INIT, desc = BUF_INIT, pshort = BUF_INIT, p10 = BUF_INIT;
	buf_addf(&usagetype, "%s%s", x->prefix, s->usagetype_suffix);
	add_price_short(&pshort, price);
	add_price10(&p10, price);
	if (strstr(s->description, "from %s to %s"))
		buf_addf(&desc, s->description, pshort.s, s->begin, s->end, x->name);
	else
		buf_addf(&desc, s->description, pshort.s, x->name);
	char sku[17];
	make_sku(x->code, usagetype.s, sku);

	struct attr attrs[16];
	size_t n = 0;
	attrs[n++] = (struct attr){"usagetype", usagetype.s};
	attrs[n++] = (struct attr){"volumeApiName", s->api_name};
	attrs[n++] = (struct attr){"volumeType", s->volume_type};
	if (s->media) {
		attrs[n++] = (struct attr){"storageMedia", s->media};
		attrs[n++] = (struct attr){"maxVolumeSize", s->max_size};
		attrs[n++] = (struct attr){"maxIopsvolume", s->max_iops};
		attrs[n++] = (struct attr){"maxThroughputvolume", s->max_tput};
	} else {
		attrs[n++] = (struct attr){"group", s->group};
		attrs[n++] = (struct attr){"groupDescription", s->group_description};
		attrs[n++] = (struct attr){"provisioned", "Yes"};
	}
	attrs[n++] = (struct attr){"locationType", x->location_type};
	attrs[n++] = (struct attr){"location", x->name};
	attrs[n++] = (struct attr){"regionCode", x->code};
	attrs[n++] = (struct attr){"servicecode", "AmazonEC2"};
	attrs[n++] = (struct attr){"servicename", "Amazon Elastic Compute Cloud"};
	attrs[n++] = (struct attr){"operation", ""};
	qsort(attrs, n, sizeof *attrs, attr_cmp);

	char term[40], rate[64];
	snprintf(term, sizeof term, "%s." ONDEMAND_TERM, sku);
	snprintf(rate, sizeof rate, "%s." ONDEMAND_TERM "." RATE_CODE, sku);
	struct jsonw w;
	jsonw_init(&w, b, JSONW_COMPACT);
	w.ascii = 1; /* the strings as make_bundle.py's json.dumps writes them */
	jsonw_object(&w);
	jsonw_key_object(&w, "product");
	jsonw_key_str(&w, "productFamily", s->family);
	jsonw_key_object(&w, "attributes");
	for (size_t i = 0; i < n; i++) {
		jsonw_key_any(&w, attrs[i].key);
		jsonw_str(&w, attrs[i].value);
	}
	jsonw_end(&w);
	jsonw_key_str(&w, "sku", sku);
	jsonw_end(&w); /* product */
	jsonw_key_str(&w, "serviceCode", "AmazonEC2");
	jsonw_key_object(&w, "terms");
	jsonw_key_object(&w, "OnDemand");
	jsonw_key_any(&w, term);
	jsonw_object(&w);
	jsonw_key_object(&w, "priceDimensions");
	jsonw_key_any(&w, rate);
	jsonw_object(&w);
	jsonw_key_str(&w, "unit", s->unit);
	jsonw_key_str(&w, "endRange", s->end);
	jsonw_key_str(&w, "description", desc.s);
	jsonw_key_array(&w, "appliesTo");
	jsonw_end(&w);
	jsonw_key_str(&w, "rateCode", rate);
	jsonw_key_str(&w, "beginRange", s->begin);
	jsonw_key_object(&w, "pricePerUnit");
	jsonw_key_str(&w, "USD", p10.s);
	jsonw_end_n(&w, 3);
	jsonw_key_str(&w, "sku", sku);
	jsonw_key_str(&w, "effectiveDate", x->effective);
	jsonw_key_str(&w, "offerTermCode", ONDEMAND_TERM);
	jsonw_key_object(&w, "termAttributes");
	jsonw_end_n(&w, 4);
	jsonw_key_str(&w, "version", x->version);
	jsonw_key_str(&w, "publicationDate", x->effective);
	jsonw_end(&w);
	buf_release(&usagetype);
	buf_release(&desc);
	buf_release(&pshort);
	buf_release(&p10);
}

/* Adds one PriceList element: the product document as a JSON string, on its own line. */
static void add_element(struct jsonw *w, const struct export_ctx *x, const struct product_spec *s, price_t price)
{
	struct buf doc = BUF_INIT;
	export_product(&doc, x, s, price);
	jsonw_lead(w, "\n  ");
	jsonw_str(w, doc.s);
	buf_release(&doc);
}

void pricing_export_location(struct buf *out, const struct pricebook *book, const struct price_location *loc)
{
	struct buf prefix = BUF_INIT, effective = BUF_INIT, version = BUF_INIT;
	const char *type;
	location_prefix(loc->code, &prefix, &type);
	const char *date = book->effective_date ? book->effective_date : "1970-01-01";
	buf_addf(&effective, "%sT00:00:00Z", date);
	for (const char *p = date; *p; p++)
		if (*p != '-')
			buf_addc(&version, *p);
	buf_adds(&version, "000000");
	struct export_ctx x = {loc->code, loc->name ? loc->name : loc->code, type, prefix.s, effective.s, version.s};

	/* the offer file's layout: one-space members, one element a line */
	struct jsonw w;
	jsonw_init(&w, out, JSONW_SPACED);
	w.ascii = 1;
	jsonw_object(&w);
	jsonw_lead(&w, "\n ");
	jsonw_key_str(&w, "FormatVersion", "aws_v1");
	jsonw_lead(&w, "\n ");
	jsonw_key_array(&w, "PriceList");
	for (int t = EBS_GP2; t <= EBS_STANDARD; t++)
		if (loc->storage_known & (1u << t))
			add_element(&w, &x, &storage_specs[t - EBS_GP2], loc->storage[t]);
	if (loc->has_gp3_iops)
		add_element(&w, &x, &gp3_iops_spec, loc->gp3_iops);
	if (loc->has_gp3_throughput)
		add_element(&w, &x, &gp3_tput_spec, loc->gp3_throughput_gibps);
	if (loc->has_io1_iops)
		add_element(&w, &x, &io1_iops_spec, loc->io1_iops);
	for (int tier = 0; tier < 3; tier++)
		if (loc->has_io2_iops & (1 << tier))
			add_element(&w, &x, &io2_iops_specs[tier], loc->io2_iops[tier]);
	if (w.has_items[w.depth - 1])
		jsonw_layout(&w, "\n ");
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
	buf_release(&prefix);
	buf_release(&effective);
	buf_release(&version);
}

int pricing_export_dir(const struct pricebook *book, const char *dir, size_t *n_files, struct buf *err)
{
	*n_files = 0;
	int rc = em_mkdirs(dir, 0755, err);
	if (rc)
		return rc;
	struct buf path = BUF_INIT, data = BUF_INIT;
	for (size_t i = 0; i < book->n && !rc; i++) {
		const struct price_location *loc = &book->locs[i];
		if (strchr(loc->code, '/') || loc->code[0] == '.' || !loc->code[0]) {
			rc = em_err(err, EM_EINPUT, "location code '%s' cannot be a file name", loc->code);
			break;
		}
		buf_reset(&path);
		buf_reset(&data);
		buf_addf(&path, "%s/ec2-ebs-%s.json", dir, loc->code);
		pricing_export_location(&data, book, loc);
		rc = em_write_file_atomic(path.s, data.s, data.len, 0644, err);
		if (!rc)
			(*n_files)++;
	}
	buf_release(&path);
	buf_release(&data);
	return rc;
}

/* ---------------------------------------------------------------- diff */

static int loc_ptr_cmp(const void *a, const void *b)
{
	const struct price_location *x = *(const struct price_location *const *)a;
	const struct price_location *y = *(const struct price_location *const *)b;
	return strcmp(x->code, y->code);
}

/* The book's locations sorted by code (caller frees the array, not the locations). */
static const struct price_location **sorted_locations(const struct pricebook *b)
{
	const struct price_location **v = xcalloc(b->n + 1, sizeof *v);
	for (size_t i = 0; i < b->n; i++)
		v[i] = &b->locs[i];
	if (b->n > 1)
		qsort(v, b->n, sizeof *v, loc_ptr_cmp);
	return v;
}

static void diff_add(struct pricing_diff *d, const char *code, int item, enum pricing_change ch, price_t o, price_t n)
{
	XGROW(d->e, d->n, d->alloc);
	d->e[d->n++] = (struct pricing_diff_entry){code, item, ch, o, n};
	if (ch == PRICE_CHANGED)
		d->changed++;
	else if (ch == PRICE_ADDED)
		d->added++;
	else
		d->removed++;
}

static void diff_location(struct pricing_diff *d, const struct price_location *a, const struct price_location *b)
{
	for (int item = 0; item < PRICE_ITEMS; item++) {
		price_t pa = 0, pb = 0;
		int ka = a && pricebook_item_get(a, item, &pa);
		int kb = b && pricebook_item_get(b, item, &pb);
		if (ka && kb && pa != pb)
			diff_add(d, a->code, item, PRICE_CHANGED, pa, pb);
		else if (!ka && kb)
			diff_add(d, b->code, item, PRICE_ADDED, 0, pb);
		else if (ka && !kb)
			diff_add(d, a->code, item, PRICE_REMOVED, pa, 0);
	}
}

void pricing_diff_build(struct pricing_diff *out, const struct pricebook *from, const struct pricebook *to)
{
	memset(out, 0, sizeof *out);
	const struct price_location **a = sorted_locations(from), **b = sorted_locations(to);
	size_t i = 0, j = 0;
	while (i < from->n || j < to->n) {
		int c = i >= from->n ? 1 : j >= to->n ? -1 : strcmp(a[i]->code, b[j]->code);
		if (c == 0)
			diff_location(out, a[i++], b[j++]);
		else if (c < 0)
			diff_location(out, a[i++], NULL);
		else
			diff_location(out, NULL, b[j++]);
	}
	free(a);
	free(b);
}

void pricing_diff_release(struct pricing_diff *d)
{
	free(d->e);
	memset(d, 0, sizeof *d);
}

static const char *change_name(enum pricing_change c)
{
	return c == PRICE_CHANGED ? "changed" : c == PRICE_ADDED ? "added" : "removed";
}

/* A unit price as a JSON string ("0.0001234"): exact, never a float. */
static void json_price(struct jsonw *w, price_t p)
{
	struct buf t = BUF_INIT;
	money_add_price(&t, p);
	jsonw_str(w, t.s);
	buf_release(&t);
}

/* The book's provenance members, `"source":…,"effective_date":…,"fetched_at":…`: the diff's book
 * references and `pricing show --json` name a book alike. */
static void json_book_provenance(struct jsonw *w, const struct pricebook *book)
{
	jsonw_key_str(w, "source", book->source);
	jsonw_key_str(w, "effective_date", book->effective_date);
	jsonw_key_str(w, "fetched_at", book->fetched_at);
}

static void json_book_ref(struct jsonw *w, const struct pricebook *book)
{
	if (!book) {
		jsonw_null(w);
		return;
	}
	jsonw_object(w);
	jsonw_key_int(w, "version", (long long)book->version);
	json_book_provenance(w, book);
	jsonw_end(w);
}

/* Relative change in hundredths of a percent, rounded half away from zero. */
static int64_t change_bp(price_t from, price_t to)
{
	__int128 num = (__int128)(to - from) * 10000 * 2;
	__int128 q = num / from;
	return (int64_t)(q >= 0 ? (q + 1) / 2 : (q - 1) / 2);
}

static void add_percent(struct buf *b, int64_t bp)
{
	int64_t a = bp < 0 ? -bp : bp;
	buf_addf(b, "%s%lld.%02lld%%", bp < 0 ? "-" : "+", (long long)(a / 100), (long long)(a % 100));
}

static void book_line(struct buf *b, const char *label, const struct pricebook *book)
{
	buf_addf(b, "%s version %lld: %s, effective %s", label, (long long)book->version,
		 book->source ? book->source : "unknown source", book->effective_date ? book->effective_date : "unknown");
	if (book->fetched_at)
		buf_addf(b, ", fetched %s", book->fetched_at);
	buf_addc(b, '\n');
}

/* rows of n_cols cells (strings owned by the caller) through the table writer (table.c);
 * priority[c]: 0 always shown, higher dropped earlier on a narrow terminal. */
static void write_table(struct buf *out, const char *const *titles, const int *right, const int *priority,
			size_t n_cols, char ***rows, size_t n_rows, const struct table_options *to)
{
	struct table_column cols[16];
	for (size_t c = 0; c < n_cols && c < 16; c++)
		cols[c] = (struct table_column){titles[c], right[c] ? TABLE_RIGHT : 0, priority[c], 0};
	struct table t;
	table_init(&t, cols, n_cols);
	for (size_t r = 0; r < n_rows; r++)
		for (size_t c = 0; c < n_cols; c++)
			table_add(&t, rows[r][c]);
	table_write(out, &t, to);
	table_release(&t);
}

static void free_rows(char ***rows, size_t n_rows, size_t n_cols)
{
	for (size_t r = 0; r < n_rows; r++) {
		for (size_t c = 0; c < n_cols; c++)
			free(rows[r][c]);
		free(rows[r]);
	}
	free(rows);
}

void pricing_diff_write(struct buf *out, const struct pricing_diff *d, const struct pricebook *from,
			const struct pricebook *to, int json, const struct table_options *tt)
{
	if (json) {
		struct jsonw w;
		jsonw_document(&w, out, JSONW_COMPACT, "ebsmigrate.pricing-diff/v1");
		jsonw_key(&w, "from");
		json_book_ref(&w, from);
		jsonw_key(&w, "to");
		json_book_ref(&w, to);
		jsonw_key_array(&w, "changes");
		for (size_t i = 0; i < d->n; i++) {
			const struct pricing_diff_entry *e = &d->e[i];
			jsonw_lead(&w, "\n");
			jsonw_object(&w);
			jsonw_key_str(&w, "location", e->location);
			jsonw_key_str(&w, "item", pricebook_item_name(e->item));
			jsonw_key_str(&w, "change", change_name(e->change));
			jsonw_key(&w, "old");
			if (e->change == PRICE_ADDED)
				jsonw_null(&w);
			else
				json_price(&w, e->old_price);
			jsonw_key(&w, "new");
			if (e->change == PRICE_REMOVED)
				jsonw_null(&w);
			else
				json_price(&w, e->new_price);
			jsonw_end(&w);
		}
		if (d->n)
			jsonw_layout(&w, "\n");
		jsonw_end(&w);
		jsonw_key_object(&w, "summary");
		jsonw_key_int(&w, "changed", (long long)d->changed);
		jsonw_key_int(&w, "added", (long long)d->added);
		jsonw_key_int(&w, "removed", (long long)d->removed);
		jsonw_end_n(&w, 2);
		jsonw_layout(&w, "\n");
		return;
	}
	if (!from) {
		book_line(out, "only", to);
		buf_adds(out, "\nnothing to compare: this is the only stored version ('ebsmigrate pricing refresh' stores "
			      "a newer one)\n");
		return;
	}
	book_line(out, "from", from);
	book_line(out, "to  ", to);
	buf_addc(out, '\n');
	if (d->n == 0) {
		buf_adds(out, "no price changes\n");
		return;
	}
	static const char *const titles[] = {"LOCATION", "ITEM", "OLD", "NEW", "CHANGE"};
	static const int right[] = {0, 0, 1, 1, 1};
	static const int priority[] = {0, 0, 1, 0, 2};
	char ***rows = xcalloc(d->n, sizeof *rows);
	for (size_t i = 0; i < d->n; i++) {
		const struct pricing_diff_entry *e = &d->e[i];
		rows[i] = xcalloc(5, sizeof **rows);
		rows[i][0] = xstrdup(e->location);
		rows[i][1] = xstrdup(pricebook_item_name(e->item));
		rows[i][2] = money_cell(e->change != PRICE_ADDED, e->old_price, money_add_price);
		rows[i][3] = money_cell(e->change != PRICE_REMOVED, e->new_price, money_add_price);
		struct buf c = BUF_INIT;
		if (e->change == PRICE_CHANGED && e->old_price > 0)
			add_percent(&c, change_bp(e->old_price, e->new_price));
		else
			buf_adds(&c, change_name(e->change));
		rows[i][4] = buf_detach(&c);
	}
	write_table(out, titles, right, priority, 5, rows, d->n, tt);
	free_rows(rows, d->n, 5);
	buf_addf(out, "\n%zu changed, %zu added, %zu removed\n", d->changed, d->added, d->removed);
}

/* ---------------------------------------------------------------- show */

static int region_keeps(const char *region, const char *code)
{
	if (!region)
		return 1;
	size_t n = strlen(region);
	return strncmp(code, region, n) == 0 && (code[n] == '\0' || code[n] == '-');
}

static const char *const item_units[PRICE_ITEMS] = {
	"GB-Mo", "GB-Mo", "GB-Mo", "GB-Mo", "GB-Mo", "GB-Mo", "GB-Mo", "IOPS-Mo", "GiBps-mo", "IOPS-Mo",
	"IOPS-Mo", "IOPS-Mo", "IOPS-Mo",
};

void pricing_write_book(struct buf *out, const struct pricebook *b, const char *region, int is_current, int json,
			const struct table_options *tt)
{
	const struct price_location **locs = sorted_locations(b);
	if (json) {
		struct jsonw w;
		jsonw_document(&w, out, JSONW_COMPACT, "ebsmigrate.pricebook/v1");
		jsonw_key(&w, "version");
		jsonw_int_or_null(&w, (long long)b->version, b->version != 0);
		jsonw_key(&w, "current");
		if (is_current < 0)
			jsonw_null(&w);
		else
			jsonw_bool(&w, is_current);
		json_book_provenance(&w, b);
		jsonw_key_object(&w, "units");
		for (int item = 0; item < PRICE_ITEMS; item++)
			jsonw_key_str(&w, pricebook_item_name(item), item_units[item]);
		jsonw_end(&w);
		jsonw_key_array(&w, "locations");
		int any = 0;
		for (size_t i = 0; i < b->n; i++) {
			const struct price_location *l = locs[i];
			if (!region_keeps(region, l->code))
				continue;
			any = 1;
			jsonw_lead(&w, "\n");
			jsonw_object(&w);
			jsonw_key_str(&w, "location", l->code);
			jsonw_key_str(&w, "name", l->name);
			jsonw_key_object(&w, "prices");
			for (int item = 0; item < PRICE_ITEMS; item++) {
				price_t p;
				if (!pricebook_item_get(l, item, &p))
					continue;
				jsonw_key(&w, pricebook_item_name(item));
				json_price(&w, p);
			}
			jsonw_end_n(&w, 2);
		}
		if (any)
			jsonw_layout(&w, "\n");
		jsonw_end_n(&w, 2);
		jsonw_layout(&w, "\n");
		free(locs);
		return;
	}
	buf_addf(out, "price book version %lld%s: %s\neffective %s", (long long)b->version,
		 is_current > 0 ? " (current)" : "", b->source ? b->source : "unknown source",
		 b->effective_date ? b->effective_date : "unknown");
	if (b->fetched_at)
		buf_addf(out, ", fetched %s", b->fetched_at);
	buf_adds(out, "\nUSD per GB-month (storage), per IOPS-month (IOPS), per GiBps-month (gp3 throughput; /1024 per "
		      "MiB/s); '-' = not in the book (volumes needing it are unpriced)\n\n");
	static const char *const titles[] = {"LOCATION", "GP2", "GP3", "IO1", "IO2", "ST1", "SC1", "STANDARD",
					     "GP3 IOPS", "GP3 GiBps", "IO1 IOPS", "IO2 IOPS (<=32k/64k/more)"};
	static const int right[] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	static const int priority[] = {0, 0, 0, 5, 4, 7, 8, 9, 1, 2, 6, 3};
	char ***rows = xcalloc(b->n + 1, sizeof *rows);
	size_t n_rows = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct price_location *l = locs[i];
		if (!region_keeps(region, l->code))
			continue;
		char **r = rows[n_rows++] = xcalloc(12, sizeof *r);
		r[0] = xstrdup(l->code);
		price_t p;
		for (int item = 0; item < 10; item++) {
			int known = pricebook_item_get(l, item, &p);
			r[1 + item] = money_cell(known, p, money_add_price);
		}
		struct buf io2 = BUF_INIT;
		for (int tier = 0; tier < 3; tier++) {
			if (tier)
				buf_addc(&io2, '/');
			if (pricebook_item_get(l, 10 + tier, &p))
				money_add_price(&io2, p);
			else
				buf_addc(&io2, '-');
		}
		r[11] = buf_detach(&io2);
	}
	write_table(out, titles, right, priority, 12, rows, n_rows, tt);
	free_rows(rows, n_rows, 12);
	buf_addf(out, "\n%zu location%s\n", n_rows, n_rows == 1 ? "" : "s");
	free(locs);
}

void pricing_write_versions(struct buf *out, const struct ledger_price_version *v, size_t n, int json,
			    const struct table_options *tt)
{
	if (json) {
		struct jsonw w;
		jsonw_document(&w, out, JSONW_COMPACT, "ebsmigrate.pricebook-versions/v1");
		jsonw_key_array(&w, "versions");
		for (size_t i = 0; i < n; i++) {
			jsonw_lead(&w, "\n");
			jsonw_object(&w);
			jsonw_key_int(&w, "version", (long long)v[i].id);
			jsonw_key_bool(&w, "current", v[i].is_current);
			jsonw_key_str(&w, "source", v[i].source);
			jsonw_key_str(&w, "effective_date", v[i].effective_date);
			jsonw_key_str(&w, "fetched_at", v[i].fetched_at);
			jsonw_key_str(&w, "stored_at", v[i].created_at);
			jsonw_key_int(&w, "prices", (long long)v[i].n_prices);
			jsonw_end(&w);
		}
		if (n)
			jsonw_layout(&w, "\n");
		jsonw_end_n(&w, 2);
		jsonw_layout(&w, "\n");
		return;
	}
	static const char *const titles[] = {"VERSION", "CURRENT", "EFFECTIVE", "FETCHED", "STORED", "PRICES", "SOURCE"};
	static const int right[] = {1, 0, 0, 0, 0, 1, 0};
	static const int priority[] = {0, 0, 0, 2, 3, 1, 0};
	char ***rows = xcalloc(n + 1, sizeof *rows);
	for (size_t i = 0; i < n; i++) {
		char **r = rows[i] = xcalloc(7, sizeof *r);
		struct buf b = BUF_INIT;
		buf_addf(&b, "%lld", (long long)v[i].id);
		r[0] = buf_detach(&b);
		r[1] = xstrdup(v[i].is_current ? "*" : "");
		r[2] = xstrdup(v[i].effective_date ? v[i].effective_date : "-");
		r[3] = xstrdup(v[i].fetched_at ? v[i].fetched_at : "-");
		r[4] = xstrdup(v[i].created_at ? v[i].created_at : "-");
		buf_addf(&b, "%lld", (long long)v[i].n_prices);
		r[5] = buf_detach(&b);
		r[6] = xstrdup(v[i].source ? v[i].source : "-");
	}
	write_table(out, titles, right, priority, 7, rows, n, tt);
	free_rows(rows, n, 7);
}

/* ---------------------------------------------------------------- age */

int pricing_parse_age(const char *s, int64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return EM_EINPUT;
	long long v = strtoll(s, &end, 10);
	if (end == s || v < 0)
		return EM_EINPUT;
	int64_t mult = em_duration_unit(end);
	if (!mult || v > INT64_MAX / mult)
		return EM_EINPUT;
	*out = v * mult;
	return 0;
}

time_t pricing_as_of(const struct pricebook *b)
{
	time_t t;
	if (b->fetched_at && em_parse_time(b->fetched_at, &t) == 0)
		return t;
	if (b->effective_date && em_parse_time(b->effective_date, &t) == 0)
		return t;
	return 0;
}

int pricing_check_age(const struct pricebook *b, time_t now, int64_t max_age_s, struct buf *msg)
{
	time_t as_of = pricing_as_of(b);
	if (max_age_s <= 0 || !as_of || (int64_t)(now - as_of) <= max_age_s)
		return 0;
	int64_t days = (int64_t)(now - as_of) / 86400;
	buf_addf(msg, "prices are %lld days old (price book version %lld: %s, %s %s), older than --max-price-age ",
		 (long long)days, (long long)b->version, b->source ? b->source : "unknown source",
		 b->fetched_at ? "fetched" : "effective", b->fetched_at ? b->fetched_at : b->effective_date);
	if (max_age_s % 86400 == 0)
		buf_addf(msg, "%lldd", (long long)(max_age_s / 86400));
	else
		buf_addf(msg, "%llds", (long long)max_age_s);
	buf_adds(msg, "; run 'ebsmigrate pricing refresh'");
	return 1;
}
