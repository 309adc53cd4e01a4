/* fuzz_pricing_getproducts.c - AWS Pricing API GetProducts pages ({"FormatVersion", "PriceList":
 * [JSON strings], "NextToken"}) as `pricing refresh` reads them page by page and as --prices DIR
 * reads saved pages (pricebook_add_getproducts), then the book written out as a table and JSON. */
#include <stdlib.h>

#include "ebsmigrate/aws_pricing.h"
#include "ebsmigrate/pricebook.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct pricebook pb;
	pricebook_init(&pb);
	struct buf err = BUF_INIT, out = BUF_INIT;
	char *next = NULL;
	if (pricebook_add_getproducts(&pb, (const char *)data, size, "fuzz.json", &next, &err) == 0) {
		for (size_t i = 0; i < pb.n; i++) {
			pricing_write_book(&out, &pb, pb.locs[i].code, 1, (int)(i & 1), NULL);
			buf_reset(&out);
		}
	}
	free(next);
	buf_release(&out);
	buf_release(&err);
	pricebook_release(&pb);
	return 0;
}
