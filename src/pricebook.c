/*
 * pricebook.c - EBS prices per pricing location, from AWS Pricing API GetProducts responses.
 *
 * Entry points: pricebook_add_getproducts (one response body), pricebook_load_dir (a directory
 * of responses, e.g. a refresh), pricebook_load_bundled (the pricing/ cache embedded in the
 * binary), pricebook_find / pricebook_location, and the named-item accessors the ledger uses.
 *
 * What counts as an EBS price (everything else in the response is ignored):
 *   - productFamily "Storage" with a volumeApiName that is an EBS type   -> storage, GB-Mo
 *   - usagetype ending in EBS:VolumeP-IOPS.gp3                           -> gp3 IOPS, IOPS-Mo
 *   - usagetype ending in EBS:VolumeP-Throughput.gp3                     -> gp3 throughput, GiBps-mo
 *   - usagetype ending in EBS:VolumeP-IOPS.piops                         -> io1 IOPS, IOPS-Mo
 *   - usagetype ending in EBS:VolumeP-IOPS.io2[.tier2|.tier3]            -> io2 IOPS tiers, IOPS-Mo
 * Usagetypes carry a region prefix outside us-east-1 ("APN2-EBS:VolumeP-IOPS.gp3"), so they are
 * matched by suffix (at a '-' boundary) and keyed by attributes.regionCode; a Local Zone group
 * ("us-west-2-lax-1") is a location of its own. An io2 tier is taken from the dimension's
 * beginRange (32000 -> tier 2, 64000 -> tier 3) when it is not 0, else from the usagetype.
 *
 * Invariants: a price is only ever set from the OnDemand term and only with the expected unit
 * (compared case-insensitively); a second, different price for the same location and item is
 * an error naming both sources, never a silent overwrite; effective_date is the newest
 * OnDemand effectiveDate among the EBS prices read. cJSON values never leave this file.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/embedded.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/pricebook.h"
#include "ebsmigrate/strlist.h"
#include "ebsmigrate/strmap.h"

_Static_assert(EBS_GP2 == 1 && EBS_STANDARD == 7 && EBS_TYPE_COUNT == 8,
	       "storage items 0..6 map to enum ebs_type 1..7");

enum {
	ITEM_STORAGE_FIRST = 0, /* + (type - EBS_GP2) */
	ITEM_GP3_IOPS = 7,
	ITEM_GP3_THROUGHPUT = 8,
	ITEM_IO1_IOPS = 9,
	ITEM_IO2_IOPS = 10, /* + tier */
};
_Static_assert(ITEM_IO2_IOPS + 3 == PRICE_ITEMS, "PRICE_ITEMS counts every item");

static const char *const item_names[PRICE_ITEMS] = {
	"storage:gp2", "storage:gp3", "storage:io1", "storage:io2", "storage:st1", "storage:sc1",
	"storage:standard", "gp3_iops", "gp3_throughput_gibps", "io1_iops",
	"io2_iops:0", "io2_iops:1", "io2_iops:2",
};

/* Where each parsed price came from: "location\x1fitem" -> position in the arrays. */
struct price_origins {
	struct strmap index;
	char **origin, **sku;
	size_t n, alloc;
};

const char *pricebook_item_name(int item)
{
	return item >= 0 && item < PRICE_ITEMS ? item_names[item] : NULL;
}

int pricebook_item_parse(const char *name)
{
	for (int i = 0; name && i < PRICE_ITEMS; i++)
		if (strcmp(name, item_names[i]) == 0)
			return i;
	return -1;
}

int pricebook_item_get(const struct price_location *loc, int item, price_t *out)
{
	if (item >= ITEM_STORAGE_FIRST && item < ITEM_GP3_IOPS) {
		int type = EBS_GP2 + item;
		if (!(loc->storage_known & (1u << type)))
			return 0;
		*out = loc->storage[type];
		return 1;
	}
	switch (item) {
	case ITEM_GP3_IOPS:
		*out = loc->gp3_iops;
		return loc->has_gp3_iops != 0;
	case ITEM_GP3_THROUGHPUT:
		*out = loc->gp3_throughput_gibps;
		return loc->has_gp3_throughput != 0;
	case ITEM_IO1_IOPS:
		*out = loc->io1_iops;
		return loc->has_io1_iops != 0;
	case ITEM_IO2_IOPS:
	case ITEM_IO2_IOPS + 1:
	case ITEM_IO2_IOPS + 2:
		*out = loc->io2_iops[item - ITEM_IO2_IOPS];
		return (loc->has_io2_iops & (1 << (item - ITEM_IO2_IOPS))) != 0;
	}
	return 0;
}

void pricebook_item_set(struct price_location *loc, int item, price_t price)
{
	if (item >= ITEM_STORAGE_FIRST && item < ITEM_GP3_IOPS) {
		int type = EBS_GP2 + item;
		loc->storage[type] = price;
		loc->storage_known |= 1u << type;
		return;
	}
	switch (item) {
	case ITEM_GP3_IOPS:
		loc->gp3_iops = price;
		loc->has_gp3_iops = 1;
		break;
	case ITEM_GP3_THROUGHPUT:
		loc->gp3_throughput_gibps = price;
		loc->has_gp3_throughput = 1;
		break;
	case ITEM_IO1_IOPS:
		loc->io1_iops = price;
		loc->has_io1_iops = 1;
		break;
	case ITEM_IO2_IOPS:
	case ITEM_IO2_IOPS + 1:
	case ITEM_IO2_IOPS + 2:
		loc->io2_iops[item - ITEM_IO2_IOPS] = price;
		loc->has_io2_iops |= 1 << (item - ITEM_IO2_IOPS);
		break;
	}
}

void pricebook_init(struct pricebook *pb)
{
	memset(pb, 0, sizeof *pb);
}

static void origins_free(struct price_origins *o)
{
	if (!o)
		return;
	strv_free(o->origin, o->n);
	strv_free(o->sku, o->n);
	strmap_release(&o->index);
	free(o);
}

static void location_release(void *p)
{
	struct price_location *loc = p;
	EM_FREE_ALL(loc->code, loc->name);
}

void pricebook_release(struct pricebook *pb)
{
	EM_RELEASE_ARRAY(pb->locs, pb->n, location_release);
	EM_FREE_ALL(pb->source, pb->effective_date, pb->fetched_at);
	origins_free(pb->origins);
	pricebook_init(pb);
}

const struct price_location *pricebook_find(const struct pricebook *pb, const char *code)
{
	for (size_t i = 0; code && i < pb->n; i++)
		if (strcmp(pb->locs[i].code, code) == 0)
			return &pb->locs[i];
	return NULL;
}

struct price_location *pricebook_location(struct pricebook *pb, const char *code)
{
	struct price_location *loc = (struct price_location *)pricebook_find(pb, code);
	if (loc)
		return loc;
	XGROW(pb->locs, pb->n, pb->alloc);
	loc = &pb->locs[pb->n++];
	memset(loc, 0, sizeof *loc);
	loc->code = xstrdup(code);
	return loc;
}

/* One product being read: enough context for every message about it. */
struct product_ctx {
	const char *origin;
	int index;           /* position in PriceList */
	const char *sku;
	const char *usagetype;
};

static int product_err(struct buf *err, const struct product_ctx *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int product_err(struct buf *err, const struct product_ctx *p, const char *fmt, ...)
{
	struct buf msg = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	em_err(err, EM_EINPUT, "%s: PriceList[%d] (sku '%s', usagetype '%s'): %s", p->origin, p->index,
	       p->sku ? p->sku : "?", p->usagetype ? p->usagetype : "?", msg.s);
	buf_release(&msg);
	return EM_EINPUT;
}

/* Sets one price, refusing a different price already read for the same location and item. */
static int set_price(struct pricebook *pb, const char *code, const char *name, int item, price_t price,
		     const struct product_ctx *p, struct buf *err)
{
	struct price_location *loc = pricebook_location(pb, code);
	if (!loc->name && name)
		loc->name = xstrdup(name);
	if (!pb->origins)
		pb->origins = xcalloc(1, sizeof *pb->origins);
	struct price_origins *o = pb->origins;
	struct buf key = BUF_INIT;
	buf_addf(&key, "%s\x1f%s", code, item_names[item]);
	price_t old;
	size_t at;
	int rc = 0;
	if (pricebook_item_get(loc, item, &old)) {
		if (old != price) {
			struct buf a = BUF_INIT, b = BUF_INIT;
			money_add_price(&a, old);
			money_add_price(&b, price);
			if (strmap_get(&o->index, key.s, &at))
				rc = em_err(err, EM_EINPUT,
					    "conflicting %s prices for '%s': %s (sku '%s' in %s) and %s (sku '%s' in %s)",
					    item_names[item], code, a.s, o->sku[at], o->origin[at], b.s,
					    p->sku ? p->sku : "?", p->origin);
			else
				rc = em_err(err, EM_EINPUT,
					    "conflicting %s prices for '%s': %s (already in the book) and %s (sku '%s' in %s)",
					    item_names[item], code, a.s, b.s, p->sku ? p->sku : "?", p->origin);
			buf_release(&a);
			buf_release(&b);
		}
	} else {
		pricebook_item_set(loc, item, price);
		XGROW(o->origin, o->n, o->alloc);
		o->sku = xrealloc(o->sku, o->alloc * sizeof *o->sku);
		o->origin[o->n] = xstrdup(p->origin);
		o->sku[o->n] = xstrdup(p->sku ? p->sku : "?");
		strmap_put(&o->index, key.s, o->n);
		o->n++;
	}
	buf_release(&key);
	return rc;
}

/* True when usagetype is suffix, or ends with "-" suffix (a region or zone prefix). */
static int usagetype_is(const char *usagetype, const char *suffix)
{
	size_t n = strlen(usagetype), m = strlen(suffix);
	if (n < m || strcmp(usagetype + n - m, suffix) != 0)
		return 0;
	return n == m || usagetype[n - m - 1] == '-';
}

/* Which item a product prices, and the unit it must be quoted in; -1 when not an EBS price.
 * For io2 IOPS, *io2_tier receives the tier the usagetype names. */
static int classify(const char *family, const char *api_name, const char *usagetype, const char **unit,
		    int *io2_tier)
{
	*io2_tier = -1;
	if (family && strcmp(family, "Storage") == 0 && api_name) {
		enum ebs_type t = ebs_type_parse(api_name);
		if (t == EBS_UNKNOWN)
			return -1;
		*unit = "GB-Mo";
		return ITEM_STORAGE_FIRST + (t - EBS_GP2);
	}
	if (!usagetype)
		return -1;
	static const struct {
		const char *suffix, *unit;
		int item, tier;
	} by_usage[] = {
		{"EBS:VolumeP-IOPS.gp3", "IOPS-Mo", ITEM_GP3_IOPS, -1},
		{"EBS:VolumeP-Throughput.gp3", "GiBps-mo", ITEM_GP3_THROUGHPUT, -1},
		{"EBS:VolumeP-IOPS.piops", "IOPS-Mo", ITEM_IO1_IOPS, -1},
		{"EBS:VolumeP-IOPS.io2", "IOPS-Mo", ITEM_IO2_IOPS, 0},
		{"EBS:VolumeP-IOPS.io2.tier2", "IOPS-Mo", ITEM_IO2_IOPS, 1},
		{"EBS:VolumeP-IOPS.io2.tier3", "IOPS-Mo", ITEM_IO2_IOPS, 2},
	};
	for (size_t i = 0; i < sizeof by_usage / sizeof by_usage[0]; i++) {
		if (usagetype_is(usagetype, by_usage[i].suffix)) {
			*unit = by_usage[i].unit;
			*io2_tier = by_usage[i].tier;
			return by_usage[i].item;
		}
	}
	return -1;
}

/* The io2 tier of one price dimension: from beginRange when it is not 0, else from the usagetype. */
static int io2_tier_of(const char *begin, int usage_tier, const struct product_ctx *p, struct buf *err)
{
	int tier;
	if (!begin || strcmp(begin, "0") == 0)
		return usage_tier;
	if (strcmp(begin, "32000") == 0)
		tier = 1;
	else if (strcmp(begin, "64000") == 0)
		tier = 2;
	else
		return product_err(err, p, "io2 IOPS beginRange '%s' is not a known tier (0, 32000, 64000)", begin);
	if (usage_tier > 0 && usage_tier != tier)
		return product_err(err, p, "beginRange '%s' contradicts the usagetype's tier %d", begin, usage_tier + 1);
	return tier;
}

/* Keeps the newest "YYYY-MM-DD" of an OnDemand term's effectiveDate in pb->effective_date. */
static int note_effective_date(struct pricebook *pb, const char *date, const struct product_ctx *p,
			       struct buf *err)
{
	time_t t;
	if (!date)
		return 0;
	if (strlen(date) < 10 || em_parse_time(date, &t) != 0)
		return product_err(err, p, "effectiveDate '%s' is not an RFC 3339 date", date);
	if (!pb->effective_date || strncmp(date, pb->effective_date, 10) > 0) {
		free(pb->effective_date);
		pb->effective_date = xstrndup(date, 10);
	}
	return 0;
}

/* Reads one PriceList element (already parsed) into pb, if it is an EBS price. */
static int add_product(struct pricebook *pb, const cJSON *doc, struct product_ctx *p, struct buf *err)
{
	const cJSON *product = jsonx_get(doc, "product");
	const cJSON *attrs = jsonx_get(product, "attributes");
	if (!cJSON_IsObject(product))
		return em_err(err, EM_EINPUT, "%s: PriceList[%d].product is missing or not an object", p->origin,
			      p->index);
	if (!cJSON_IsObject(attrs))
		return em_err(err, EM_EINPUT, "%s: PriceList[%d].product.attributes is missing or not an object",
			      p->origin, p->index);
	p->sku = jsonx_str(product, "sku");
	p->usagetype = jsonx_str(attrs, "usagetype");
	const char *unit_want;
	int usage_tier;
	int item = classify(jsonx_str(product, "productFamily"), jsonx_str(attrs, "volumeApiName"), p->usagetype,
			    &unit_want, &usage_tier);
	if (item < 0)
		return 0;
	const char *code = jsonx_str(attrs, "regionCode");
	if (!code || !*code)
		return product_err(err, p, "product.attributes.regionCode is missing");
	/* the code names files (pricing export writes ec2-ebs-CODE.json) and keys the book */
	if (strlen(code) > 64 || strspn(code, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(code))
		return product_err(err, p, "product.attributes.regionCode '%s' is not a region or zone code", code);
	const cJSON *ondemand = jsonx_path(doc, "terms.OnDemand");
	if (!cJSON_IsObject(ondemand) || !ondemand->child)
		return product_err(err, p, "terms.OnDemand has no price");
	const cJSON *term;
	cJSON_ArrayForEach(term, ondemand)
	{
		int rc = note_effective_date(pb, jsonx_str(term, "effectiveDate"), p, err);
		if (rc)
			return rc;
		const cJSON *dims = jsonx_get(term, "priceDimensions");
		if (!cJSON_IsObject(dims) || !dims->child)
			return product_err(err, p, "terms.OnDemand.%s.priceDimensions is missing or empty",
					   term->string);
		const cJSON *dim;
		cJSON_ArrayForEach(dim, dims)
		{
			const char *unit = jsonx_str(dim, "unit");
			if (!unit || strcasecmp(unit, unit_want) != 0)
				return product_err(err, p, "unit '%s' is not the expected '%s'", unit ? unit : "(none)",
						   unit_want);
			const char *usd = jsonx_path_str(dim, "pricePerUnit.USD");
			price_t price;
			if (!usd || money_parse_price(usd, &price) != 0)
				return product_err(err, p, "pricePerUnit.USD '%s' is not a price", usd ? usd : "(none)");
			int at = item;
			if (item == ITEM_IO2_IOPS) {
				int tier = io2_tier_of(jsonx_str(dim, "beginRange"), usage_tier, p, err);
				if (tier < 0)
					return tier;
				at = ITEM_IO2_IOPS + tier;
			}
			rc = set_price(pb, code, jsonx_str(attrs, "location"), at, price, p, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int pricebook_add_getproducts(struct pricebook *pb, const char *json, size_t len, const char *origin,
			      char **next_token, struct buf *err)
{
	if (next_token)
		*next_token = NULL;
	cJSON *root = jsonx_parse(json, len, origin, err);
	if (!root)
		return EM_EINPUT;
	int rc = 0;
	const cJSON *list = jsonx_get(root, "PriceList");
	const char *format = jsonx_str(root, "FormatVersion");
	if (!cJSON_IsObject(root)) {
		rc = em_err(err, EM_EINPUT, "%s: not a GetProducts response (expected a JSON object)", origin);
	} else if (format && strcmp(format, "aws_v1") != 0) {
		rc = em_err(err, EM_EINPUT, "%s: FormatVersion '%s' is not supported (expected 'aws_v1')", origin,
			    format);
	} else if (!list) {
		rc = em_err(err, EM_EINPUT, "%s: PriceList is missing", origin);
	} else if (!cJSON_IsArray(list)) {
		rc = em_err(err, EM_EINPUT, "%s: PriceList is not an array", origin);
	}
	int i = 0;
	const cJSON *elem, *elems = rc ? NULL : list;
	cJSON_ArrayForEach(elem, elems)
	{
		struct product_ctx p = {origin, i, NULL, NULL};
		if (!cJSON_IsString(elem)) {
			rc = em_err(err, EM_EINPUT, "%s: PriceList[%d] is not a string", origin, i);
			break;
		}
		cJSON *doc = cJSON_Parse(elem->valuestring);
		if (!doc || !cJSON_IsObject(doc)) {
			cJSON_Delete(doc);
			rc = em_err(err, EM_EINPUT, "%s: PriceList[%d] is not a JSON object", origin, i);
			break;
		}
		rc = add_product(pb, doc, &p, err);
		cJSON_Delete(doc);
		if (rc)
			break;
		i++;
	}
	if (!rc && next_token) {
		const char *tok = jsonx_str(root, "NextToken");
		*next_token = tok && *tok ? xstrdup(tok) : NULL;
	}
	cJSON_Delete(root);
	return rc;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int pricebook_load_dir(struct pricebook *pb, const char *dir, struct buf *err)
{
	struct strlist names = STRLIST_INIT_DUP;
	if (fs_list_dir(dir, FS_NO_HIDDEN, &names) != 0)
		return em_err(err, EM_ENOTFOUND, "cannot open price directory '%s'", dir);
	struct buf path = BUF_INIT, body = BUF_INIT;
	size_t found = 0;
	int rc = 0;
	for (size_t i = 0; i < names.n && !rc; i++) {
		if (!has_suffix(names.items[i], ".json"))
			continue;
		found++;
		buf_reset(&path);
		buf_reset(&body);
		buf_addf(&path, "%s/%s", dir, names.items[i]);
		rc = em_read_file(path.s, &body, err);
		if (!rc)
			rc = pricebook_add_getproducts(pb, body.s, body.len, path.s, NULL, err);
	}
	if (!rc && !found)
		rc = em_err(err, EM_ENOTFOUND, "no *.json price files in '%s'", dir);
	strlist_release(&names);
	buf_release(&path);
	buf_release(&body);
	if (!rc && !pb->source)
		pb->source = xstrdup(dir);
	return rc;
}

int pricebook_load_bundled(struct pricebook *pb, struct buf *err)
{
	int found = 0;
	for (const struct embedded_file *f = embedded_files; f->path; f++) {
		if (strncmp(f->path, "pricing/", 8) != 0 || !has_suffix(f->path, ".json"))
			continue;
		int rc = pricebook_add_getproducts(pb, f->data, f->len, f->path, NULL, err);
		if (rc)
			return rc;
		found++;
	}
	if (!found)
		return em_err(err, EM_ENOTFOUND, "this build has no bundled pricing/*.json");
	free(pb->source);
	pb->source = xstrdup(PRICEBOOK_SOURCE_BUNDLED);
	return 0;
}
