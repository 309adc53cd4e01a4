/* fuzz_price_cache.c - the price cache files (pricing/ in the source tree, embedded in the binary,
 * and what `pricing export` writes for --prices DIR): one GetProducts document per region. The
 * input is read as a cache file, written back with pricing_export_location as `pricing export`
 * does, and the written file must read back to the same prices: a cache ebsmigrate writes is
 * always one it can read. */
#include <stdio.h>
#include <stdlib.h>

#include "ebsmigrate/aws_pricing.h"
#include "ebsmigrate/pricebook.h"
#include "fuzz.h"

/* The first item whose price differs between a and b (known in one only, or another value), or -1. */
static int first_difference(const struct price_location *a, const struct price_location *b)
{
	for (int item = 0; pricebook_item_name(item); item++) {
		price_t pa = 0, pb = 0;
		int ka = pricebook_item_get(a, item, &pa), kb = pricebook_item_get(b, item, &pb);
		if (ka != kb || (ka && pa != pb))
			return item;
	}
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct pricebook pb;
	pricebook_init(&pb);
	struct buf err = BUF_INIT, out = BUF_INIT;
	if (pricebook_add_getproducts(&pb, (const char *)data, size, "ec2-ebs-fuzz.json", NULL, &err) == 0) {
		for (size_t i = 0; i < pb.n; i++) {
			buf_reset(&out);
			pricing_export_location(&out, &pb, &pb.locs[i]);
			struct pricebook back;
			pricebook_init(&back);
			buf_reset(&err);
			int rc = pricebook_add_getproducts(&back, out.s, out.len, "exported.json", NULL, &err);
			const struct price_location *again = rc ? NULL : pricebook_find(&back, pb.locs[i].code);
			int item = again ? first_difference(&pb.locs[i], again) : -1;
			if (!again || item >= 0) { /* an exported cache file that does not read back the same */
				fprintf(stderr, "price cache round trip of '%s' failed: %s\n%s\n", pb.locs[i].code,
					again ? pricebook_item_name(item) : err.s, out.s);
				abort();
			}
			pricebook_release(&back);
		}
	}
	buf_release(&out);
	buf_release(&err);
	pricebook_release(&pb);
	return 0;
}
