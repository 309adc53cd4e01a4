/* test_pricebook.c - GetProducts parsing: the bundled cache against FACTS.md section 4, filtering,
 * Local Zones, io2 tiers, conflicts, and the message of every malformed input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/pricebook.h"
#include "tap.h"

static price_t P(const char *s)
{
	price_t p = -1;
	if (money_parse_price(s, &p) != 0)
		return -1;
	return p;
}

/* FACTS.md section 4, one line per region (rows covering several regions expanded). */
static const struct {
	const char *code, *gp2, *gp3, *iops, *mibps, *io1, *st1, *sc1;
} facts[] = {
	{"us-east-1", "0.10", "0.08", "0.005", "0.04", "0.125", "0.045", "0.015"},
	{"us-east-2", "0.10", "0.08", "0.005", "0.04", "0.125", "0.045", "0.015"},
	{"us-west-2", "0.10", "0.08", "0.005", "0.04", "0.125", "0.045", "0.015"},
	{"us-west-1", "0.12", "0.096", "0.006", "0.048", "0.138", "0.054", "0.018"},
	{"ca-central-1", "0.11", "0.088", "0.0055", "0.044", "0.138", "0.05", "0.0168"},
	{"eu-west-1", "0.11", "0.088", "0.0055", "0.044", "0.138", "0.05", "0.0168"},
	{"eu-west-2", "0.116", "0.0928", "0.0058", "0.0464", "0.145", "0.053", "0.0174"},
	{"eu-west-3", "0.116", "0.0928", "0.0058", "0.0464", "0.145", "0.053", "0.0174"},
	{"eu-central-1", "0.119", "0.0952", "0.006", "0.0476", "0.149", "0.054", "0.018"},
	{"eu-north-1", "0.1045", "0.0836", "0.0052", "0.0418", "0.1311", "0.0475", "0.01596"},
	{"eu-south-1", "0.1155", "0.0924", "0.0058", "0.0462", "0.1449", "0.0525", "0.01764"},
	{"ap-northeast-1", "0.12", "0.096", "0.006", "0.048", "0.142", "0.054", "0.018"},
	{"ap-northeast-3", "0.12", "0.096", "0.006", "0.048", "0.142", "0.054", "0.018"},
	{"ap-northeast-2", "0.114", "0.0912", "0.0057", "0.0456", "0.1278", "0.051", "0.0174"},
	{"ap-south-1", "0.114", "0.0912", "0.0057", "0.0456", "0.131", "0.051", "0.0174"},
	{"ap-southeast-1", "0.12", "0.096", "0.006", "0.048", "0.138", "0.054", "0.018"},
	{"ap-southeast-2", "0.12", "0.096", "0.006", "0.048", "0.138", "0.054", "0.018"},
	{"ap-east-1", "0.132", "0.1056", "0.0066", "0.0528", "0.1518", "0.0594", "0.0198"},
	{"me-south-1", "0.121", "0.0968", "0.0061", "0.0484", "0.1518", "0.055", "0.01848"},
	{"af-south-1", "0.1309", "0.1047", "0.0065", "0.05235", "0.16422", "0.0595", "0.019992"},
	{"sa-east-1", "0.19", "0.152", "0.0095", "0.076", "0.238", "0.086", "0.0288"},
};
#define N_FACTS (sizeof facts / sizeof facts[0])

static const char *io1_iops_for(const char *code)
{
	if (strcmp(code, "us-east-1") == 0)
		return "0.065";
	if (strcmp(code, "ap-northeast-2") == 0)
		return "0.0666";
	if (strcmp(code, "eu-central-1") == 0)
		return "0.078";
	if (strcmp(code, "ap-northeast-1") == 0)
		return "0.074";
	return NULL;
}

static void test_bundled(void)
{
	struct pricebook pb;
	struct buf err = BUF_INIT;
	pricebook_init(&pb);
	int rc = pricebook_load_bundled(&pb, &err);
	CHECK_I64(rc, 0);
	CHECK_STR(err.s, "");
	CHECK_I64(pb.n, 21);
	CHECK_I64(N_FACTS, 21);
	CHECK_STR(pb.source, PRICEBOOK_SOURCE_BUNDLED);
	CHECK_STR(pb.effective_date, "2026-09-01");
	for (size_t i = 0; i < N_FACTS; i++) {
		const struct price_location *loc = pricebook_find(&pb, facts[i].code);
		CHECK(loc != NULL);
		if (!loc)
			continue;
		CHECK(loc->name != NULL);
		unsigned want_known = (1u << EBS_GP2) | (1u << EBS_GP3) | (1u << EBS_IO1) | (1u << EBS_IO2) |
				      (1u << EBS_ST1) | (1u << EBS_SC1);
		CHECK_I64(loc->storage_known, want_known); /* standard (magnetic) is unknown */
		CHECK_I64(loc->storage[EBS_GP2], P(facts[i].gp2));
		CHECK_I64(loc->storage[EBS_GP3], P(facts[i].gp3));
		CHECK_I64(loc->storage[EBS_IO1], P(facts[i].io1));
		CHECK_I64(loc->storage[EBS_IO2], P(facts[i].io1)); /* io2 storage is priced like io1 */
		CHECK_I64(loc->storage[EBS_ST1], P(facts[i].st1));
		CHECK_I64(loc->storage[EBS_SC1], P(facts[i].sc1));
		CHECK(loc->has_gp3_iops);
		CHECK_I64(loc->gp3_iops, P(facts[i].iops));
		CHECK(loc->has_gp3_throughput);
		CHECK_I64(loc->gp3_throughput_gibps, P(facts[i].mibps) * 1024); /* published per GiBps-mo */
		const char *io1 = io1_iops_for(facts[i].code);
		CHECK_I64(loc->has_io1_iops, io1 != NULL);
		if (io1)
			CHECK_I64(loc->io1_iops, P(io1));
		if (strcmp(facts[i].code, "us-east-1") == 0) {
			CHECK_I64(loc->has_io2_iops, 7);
			CHECK_I64(loc->io2_iops[0], P("0.065"));
			CHECK_I64(loc->io2_iops[1], P("0.0455"));
			CHECK_I64(loc->io2_iops[2], P("0.032"));
			CHECK_STR(loc->name, "US East (N. Virginia)");
		} else {
			CHECK_I64(loc->has_io2_iops, 0);
		}
	}
	CHECK_STR(pricebook_find(&pb, "ap-northeast-2")->name, "Asia Pacific (Seoul)");
	CHECK_I64(pricebook_find(&pb, "ap-northeast-2")->gp3_throughput_gibps, P("46.6944"));
	CHECK_I64(pricebook_find(&pb, "us-east-1")->gp3_throughput_gibps, P("40.96"));
	CHECK(pricebook_find(&pb, "eu-central-2") == NULL);
	CHECK(pricebook_find(&pb, NULL) == NULL);
	pricebook_release(&pb);
	CHECK_I64(pb.n, 0);
	buf_release(&err);
}

static void test_items(void)
{
	CHECK_STR(pricebook_item_name(0), "storage:gp2");
	CHECK_STR(pricebook_item_name(8), "gp3_throughput_gibps");
	CHECK_STR(pricebook_item_name(12), "io2_iops:2");
	CHECK(pricebook_item_name(PRICE_ITEMS) == NULL);
	CHECK(pricebook_item_name(-1) == NULL);
	for (int i = 0; i < PRICE_ITEMS; i++)
		CHECK_I64(pricebook_item_parse(pricebook_item_name(i)), i);
	CHECK_I64(pricebook_item_parse("storage:gp4"), -1);
	CHECK_I64(pricebook_item_parse(NULL), -1);

	struct price_location loc;
	memset(&loc, 0, sizeof loc);
	price_t p;
	for (int i = 0; i < PRICE_ITEMS; i++)
		CHECK(!pricebook_item_get(&loc, i, &p));
	pricebook_item_set(&loc, pricebook_item_parse("storage:gp3"), 5);
	pricebook_item_set(&loc, pricebook_item_parse("io2_iops:1"), 7);
	CHECK_I64(loc.storage_known, 1u << EBS_GP3);
	CHECK_I64(loc.storage[EBS_GP3], 5);
	CHECK_I64(loc.has_io2_iops, 2);
	CHECK_I64(loc.io2_iops[1], 7);
	CHECK(pricebook_item_get(&loc, pricebook_item_parse("io2_iops:1"), &p) && p == 7);
	CHECK(!pricebook_item_get(&loc, pricebook_item_parse("io2_iops:0"), &p));
}

/* --- building GetProducts responses -------------------------------------------------------- */

struct resp {
	struct buf b;
	int n;
};

static void resp_begin(struct resp *r)
{
	buf_init(&r->b);
	r->n = 0;
	buf_adds(&r->b, "{\"FormatVersion\":\"aws_v1\",\"PriceList\":[");
}

static void resp_end(struct resp *r, const char *next_token)
{
	buf_adds(&r->b, "]");
	if (next_token)
		buf_addf(&r->b, ",\"NextToken\":\"%s\"", next_token);
	buf_adds(&r->b, "}");
}

/* Appends one product as a JSON string. attrs: the inside of the attributes object.
 * dims: the inside of priceDimensions, or NULL for one dimension of (unit, usd, begin). */
static void resp_add(struct resp *r, const char *family, const char *sku, const char *attrs, const char *unit,
		     const char *usd, const char *begin, const char *date)
{
	struct buf p = BUF_INIT;
	buf_addf(&p,
		 "{\"product\":{\"productFamily\":\"%s\",\"attributes\":{%s},\"sku\":\"%s\"},"
		 "\"serviceCode\":\"AmazonEC2\",\"terms\":{\"OnDemand\":{\"%s.JRTCKXETXF\":{"
		 "\"priceDimensions\":{\"%s.JRTCKXETXF.6YS6EN2CT7\":{\"unit\":\"%s\",\"endRange\":\"Inf\","
		 "\"description\":\"test\",\"appliesTo\":[],\"rateCode\":\"%s.JRTCKXETXF.6YS6EN2CT7\","
		 "\"beginRange\":\"%s\",\"pricePerUnit\":{\"USD\":\"%s\"}}},\"sku\":\"%s\","
		 "\"effectiveDate\":\"%s\",\"offerTermCode\":\"JRTCKXETXF\",\"termAttributes\":{}}}},"
		 "\"version\":\"20260901000000\",\"publicationDate\":\"2026-09-01T00:00:00Z\"}",
		 family, attrs, sku, sku, sku, unit, sku, begin, usd, sku, date ? date : "2026-09-01T00:00:00Z");
	buf_adds(&r->b, r->n++ ? ",\"" : "\"");
	buf_add_json_escaped(&r->b, p.s);
	buf_adds(&r->b, "\"");
	buf_release(&p);
}

static void resp_add_raw(struct resp *r, const char *elem_json)
{
	if (r->n++)
		buf_adds(&r->b, ",");
	buf_adds(&r->b, elem_json);
}

#define REGION_ATTRS(code, loc) "\"regionCode\":\"" code "\",\"location\":\"" loc "\",\"locationType\":\"AWS Region\""

static void test_filter(void)
{
	struct resp r;
	resp_begin(&r);
	const char *ue1 = REGION_ATTRS("us-east-1", "US East (N. Virginia)");
	struct buf a = BUF_INIT;
#define ATTRS(extra) (buf_reset(&a), buf_addf(&a, "%s,%s", ue1, extra), a.s)
	resp_add(&r, "Storage", "GP3", ATTRS("\"volumeApiName\":\"gp3\",\"usagetype\":\"EBS:VolumeUsage.gp3\""),
		 "GB-Mo", "0.0800000000", "0", NULL);
	/* non-EBS: snapshot storage (GB-Mo too), an instance, a Storage product of no EBS type,
	 * an IOPS-looking usagetype without a boundary, magnetic I/O requests */
	resp_add(&r, "Storage Snapshot", "SNAP", ATTRS("\"usagetype\":\"EBS:SnapshotUsage\""), "GB-Mo", "0.05", "0",
		 NULL);
	resp_add(&r, "Compute Instance", "M5XL",
		 ATTRS("\"usagetype\":\"BoxUsage:m5.xlarge\",\"instanceType\":\"m5.xlarge\""), "Hrs", "0.192", "0",
		 NULL);
	resp_add(&r, "Storage", "OUTP", ATTRS("\"volumeApiName\":\"gp9\",\"usagetype\":\"EBS:VolumeUsage.gp9\""),
		 "GB-Mo", "9", "0", NULL);
	resp_add(&r, "System Operation", "XIOPS", ATTRS("\"usagetype\":\"XEBS:VolumeP-IOPS.gp3\""), "IOPS-Mo", "9",
		 "0", NULL);
	resp_add(&r, "System Operation", "MAGIO", ATTRS("\"usagetype\":\"EBS:VolumeIOUsage\""), "IOs",
		 "0.0000000500", "0", "2027-01-01T00:00:00Z");
	resp_add(&r, "System Operation", "IOPS", ATTRS("\"usagetype\":\"EBS:VolumeP-IOPS.gp3\""), "IOPS-Mo", "0.005",
		 "0", NULL);
	resp_add_raw(&r, "\"{\\\"product\\\":{\\\"productFamily\\\":\\\"Data Transfer\\\",\\\"attributes\\\":{}},"
			 "\\\"terms\\\":{}}\"");
	resp_end(&r, "page-2-token");

	struct pricebook pb;
	struct buf err = BUF_INIT;
	char *next = NULL;
	pricebook_init(&pb);
	int rc = pricebook_add_getproducts(&pb, r.b.s, r.b.len, "page1.json", &next, &err);
	CHECK_I64(rc, 0);
	CHECK_STR(err.s, "");
	CHECK_STR(next, "page-2-token");
	CHECK_I64(pb.n, 1);
	const struct price_location *loc = pricebook_find(&pb, "us-east-1");
	CHECK(loc != NULL);
	if (loc) {
		CHECK_I64(loc->storage_known, 1u << EBS_GP3);
		CHECK_I64(loc->storage[EBS_GP3], P("0.08"));
		CHECK_I64(loc->gp3_iops, P("0.005"));
		CHECK(!loc->has_gp3_throughput && !loc->has_io1_iops && !loc->has_io2_iops);
	}
	/* the 2027 date belongs to a non-EBS product, so it does not count */
	CHECK_STR(pb.effective_date, "2026-09-01");
	free(next);
	pricebook_release(&pb);
	buf_release(&r.b);
	buf_release(&err);
	buf_release(&a);
#undef ATTRS
}

static void test_local_zone_and_tiers(void)
{
	struct resp r;
	resp_begin(&r);
	const char *usw2 = REGION_ATTRS("us-west-2", "US West (Oregon)");
	const char *lax = "\"regionCode\":\"us-west-2-lax-1\",\"location\":\"US West (Los Angeles)\","
			  "\"locationType\":\"AWS Local Zone\"";
	struct buf a = BUF_INIT;
#define ATTRS(base, extra) (buf_reset(&a), buf_addf(&a, "%s,%s", base, extra), a.s)
	resp_add(&r, "Storage", "W2GP2", ATTRS(usw2, "\"volumeApiName\":\"gp2\",\"usagetype\":\"USW2-EBS:VolumeUsage.gp2\""),
		 "GB-Mo", "0.1000000000", "0", NULL);
	resp_add(&r, "Storage", "LAXGP2",
		 ATTRS(lax, "\"volumeApiName\":\"gp2\",\"usagetype\":\"USW2-LAX1-EBS:VolumeUsage.gp2\""), "GB-Mo",
		 "0.1200000000", "0", "2026-10-01T00:00:00Z");
	resp_add(&r, "Storage", "LAXGP3",
		 ATTRS(lax, "\"volumeApiName\":\"gp3\",\"usagetype\":\"USW2-LAX1-EBS:VolumeUsage.gp3\""), "gb-mo",
		 "0.0960000000", "0", NULL); /* units compare case-insensitively */
	resp_add(&r, "Provisioned Throughput", "LAXTP",
		 ATTRS(lax, "\"usagetype\":\"USW2-LAX1-EBS:VolumeP-Throughput.gp3\""), "GIBPS-MO", "49.152", "0", NULL);
	/* io2 tiers: one by usagetype with beginRange 0, two by beginRange */
	resp_add(&r, "System Operation", "IO2T1", ATTRS(usw2, "\"usagetype\":\"USW2-EBS:VolumeP-IOPS.io2\""),
		 "IOPS-Mo", "0.065", "0", NULL);
	resp_add(&r, "System Operation", "IO2T2", ATTRS(usw2, "\"usagetype\":\"USW2-EBS:VolumeP-IOPS.io2.tier2\""),
		 "IOPS-Mo", "0.0455", "0", NULL);
	resp_add(&r, "System Operation", "IO2T3", ATTRS(usw2, "\"usagetype\":\"USW2-EBS:VolumeP-IOPS.io2\""),
		 "IOPS-Mo", "0.032", "64000", NULL);
	/* an identical duplicate is fine */
	resp_add(&r, "Storage", "W2GP2B", ATTRS(usw2, "\"volumeApiName\":\"gp2\",\"usagetype\":\"USW2-EBS:VolumeUsage.gp2\""),
		 "GB-Mo", "0.10", "0", NULL);
	resp_end(&r, NULL);
#undef ATTRS

	struct pricebook pb;
	struct buf err = BUF_INIT;
	char *next = (char *)"unchanged";
	pricebook_init(&pb);
	CHECK_I64(pricebook_add_getproducts(&pb, r.b.s, r.b.len, "lz.json", &next, &err), 0);
	CHECK_STR(err.s, "");
	CHECK(next == NULL);
	CHECK_I64(pb.n, 2);
	const struct price_location *w2 = pricebook_find(&pb, "us-west-2");
	const struct price_location *lz = pricebook_find(&pb, "us-west-2-lax-1");
	CHECK(w2 && lz);
	if (w2 && lz) {
		CHECK_STR(lz->name, "US West (Los Angeles)");
		CHECK_I64(w2->storage[EBS_GP2], P("0.10"));
		CHECK_I64(lz->storage[EBS_GP2], P("0.12"));
		CHECK_I64(lz->storage[EBS_GP3], P("0.096"));
		CHECK_I64(lz->storage_known, (1u << EBS_GP2) | (1u << EBS_GP3));
		CHECK(!(w2->storage_known & (1u << EBS_GP3)));
		CHECK_I64(lz->gp3_throughput_gibps, P("49.152"));
		CHECK(!w2->has_gp3_throughput);
		CHECK_I64(w2->has_io2_iops, 7);
		CHECK_I64(w2->io2_iops[0], P("0.065"));
		CHECK_I64(w2->io2_iops[1], P("0.0455"));
		CHECK_I64(w2->io2_iops[2], P("0.032"));
		CHECK_I64(lz->has_io2_iops, 0);
	}
	CHECK_STR(pb.effective_date, "2026-10-01");
	pricebook_release(&pb);
	buf_release(&r.b);
	buf_release(&err);
	buf_release(&a);
}

/* Runs one body and returns the error message (caller frees); "" when it parsed. */
static char *parse_err(const char *body, int *rc_out)
{
	struct pricebook pb;
	struct buf err = BUF_INIT;
	pricebook_init(&pb);
	*rc_out = pricebook_add_getproducts(&pb, body, strlen(body), "bad.json", NULL, &err);
	pricebook_release(&pb);
	return buf_detach(&err);
}

static void check_error(const char *body, const char *want)
{
	int rc;
	char *msg = parse_err(body, &rc);
	CHECK_I64(rc, EM_EINPUT);
	CHECK_STR(msg, want);
	free(msg);
}

static void check_one_product_error(const char *family, const char *sku, const char *attrs, const char *unit,
				    const char *usd, const char *begin, const char *want)
{
	struct resp r;
	resp_begin(&r);
	resp_add(&r, family, sku, attrs, unit, usd, begin, NULL);
	resp_end(&r, NULL);
	check_error(r.b.s, want);
	buf_release(&r.b);
}

static void test_malformed(void)
{
	check_error("not json", "bad.json: not valid JSON at line 1, column 1");
	int rc;
	char *msg = parse_err("{\"PriceList\": [\n", &rc);
	CHECK_I64(rc, EM_EINPUT);
	CHECK(strncmp(msg, "bad.json: not valid JSON at line ", 33) == 0);
	free(msg);
	check_error("", "bad.json: empty file, expected JSON");
	check_error("[]", "bad.json: not a GetProducts response (expected a JSON object)");
	check_error("{}", "bad.json: PriceList is missing");
	check_error("{\"PriceList\":{}}", "bad.json: PriceList is not an array");
	check_error("{\"PriceList\":null}", "bad.json: PriceList is not an array");
	check_error("{\"FormatVersion\":\"aws_v2\",\"PriceList\":[]}",
		    "bad.json: FormatVersion 'aws_v2' is not supported (expected 'aws_v1')");
	check_error("{\"PriceList\":[\"{}\",42]}", "bad.json: PriceList[0].product is missing or not an object");
	check_error("{\"PriceList\":[42]}", "bad.json: PriceList[0] is not a string");
	check_error("{\"PriceList\":[{\"product\":{}}]}", "bad.json: PriceList[0] is not a string");
	check_error("{\"PriceList\":[\"{\\\"product\\\":{\\\"attributes\\\":{}},\\\"terms\\\":{}}\",\"{bad\"]}",
		    "bad.json: PriceList[1] is not a JSON object");
	check_error("{\"PriceList\":[\"[1]\"]}", "bad.json: PriceList[0] is not a JSON object");
	check_error("{\"PriceList\":[\"{\\\"product\\\":{\\\"sku\\\":\\\"X\\\"}}\"]}",
		    "bad.json: PriceList[0].product.attributes is missing or not an object");

	msg = parse_err("{\"FormatVersion\":\"aws_v1\",\"PriceList\":[]}", &rc);
	CHECK_I64(rc, 0);
	CHECK_STR(msg, "");
	free(msg);

	const char *ue1 = REGION_ATTRS("us-east-1", "US East (N. Virginia)");
	struct buf a = BUF_INIT;
#define ATTRS(extra) (buf_reset(&a), buf_addf(&a, "%s,%s", ue1, extra), a.s)
	check_one_product_error("Storage", "SKUGP3", ATTRS("\"volumeApiName\":\"gp3\",\"usagetype\":\"EBS:VolumeUsage.gp3\""),
				"Hrs", "0.08", "0",
				"bad.json: PriceList[0] (sku 'SKUGP3', usagetype 'EBS:VolumeUsage.gp3'): unit 'Hrs' is "
				"not the expected 'GB-Mo'");
	check_one_product_error("Provisioned Throughput", "SKUTP", ATTRS("\"usagetype\":\"EBS:VolumeP-Throughput.gp3\""),
				"MiBps-Mo", "0.04", "0",
				"bad.json: PriceList[0] (sku 'SKUTP', usagetype 'EBS:VolumeP-Throughput.gp3'): unit "
				"'MiBps-Mo' is not the expected 'GiBps-mo'");
	check_one_product_error("System Operation", "SKUIOPS", ATTRS("\"usagetype\":\"EBS:VolumeP-IOPS.gp3\""),
				"GB-Mo", "0.005", "0",
				"bad.json: PriceList[0] (sku 'SKUIOPS', usagetype 'EBS:VolumeP-IOPS.gp3'): unit 'GB-Mo' "
				"is not the expected 'IOPS-Mo'");
	check_one_product_error("Storage", "SKUP", ATTRS("\"volumeApiName\":\"gp2\",\"usagetype\":\"EBS:VolumeUsage.gp2\""),
				"GB-Mo", "1e-1", "0",
				"bad.json: PriceList[0] (sku 'SKUP', usagetype 'EBS:VolumeUsage.gp2'): pricePerUnit.USD "
				"'1e-1' is not a price");
	check_one_product_error("Storage", "SKUN", ATTRS("\"volumeApiName\":\"gp2\",\"usagetype\":\"EBS:VolumeUsage.gp2\""),
				"GB-Mo", "-0.10", "0",
				"bad.json: PriceList[0] (sku 'SKUN', usagetype 'EBS:VolumeUsage.gp2'): pricePerUnit.USD "
				"'-0.10' is not a price");
	check_one_product_error("Storage", "SKUR", "\"volumeApiName\":\"gp2\",\"usagetype\":\"EBS:VolumeUsage.gp2\"",
				"GB-Mo", "0.10", "0",
				"bad.json: PriceList[0] (sku 'SKUR', usagetype 'EBS:VolumeUsage.gp2'): "
				"product.attributes.regionCode is missing");
	/* the code names the file `pricing export` writes: nothing that could leave the directory */
	check_one_product_error("Storage", "SKUR", REGION_ATTRS("../../x", "Up") ",\"volumeApiName\":\"gp2\","
				"\"usagetype\":\"EBS:VolumeUsage.gp2\"", "GB-Mo", "0.10", "0",
				"bad.json: PriceList[0] (sku 'SKUR', usagetype 'EBS:VolumeUsage.gp2'): "
				"product.attributes.regionCode '../../x' is not a region or zone code");
	check_one_product_error("System Operation", "SKUT", ATTRS("\"usagetype\":\"EBS:VolumeP-IOPS.io2\""), "IOPS-Mo",
				"0.05", "16000",
				"bad.json: PriceList[0] (sku 'SKUT', usagetype 'EBS:VolumeP-IOPS.io2'): io2 IOPS "
				"beginRange '16000' is not a known tier (0, 32000, 64000)");
	check_one_product_error("System Operation", "SKUC", ATTRS("\"usagetype\":\"EBS:VolumeP-IOPS.io2.tier3\""),
				"IOPS-Mo", "0.05", "32000",
				"bad.json: PriceList[0] (sku 'SKUC', usagetype 'EBS:VolumeP-IOPS.io2.tier3'): beginRange "
				"'32000' contradicts the usagetype's tier 3");

	/* no OnDemand term */
	struct buf body = BUF_INIT, p = BUF_INIT;
	buf_addf(&p, "{\"product\":{\"productFamily\":\"Storage\",\"sku\":\"SKUO\",\"attributes\":{%s}},\"terms\":{\"Reserved\":{}}}",
		 ATTRS("\"volumeApiName\":\"gp2\",\"usagetype\":\"EBS:VolumeUsage.gp2\""));
	buf_adds(&body, "{\"PriceList\":[\"");
	buf_add_json_escaped(&body, p.s);
	buf_adds(&body, "\"]}");
	check_error(body.s, "bad.json: PriceList[0] (sku 'SKUO', usagetype 'EBS:VolumeUsage.gp2'): terms.OnDemand has no price");
	buf_release(&body);
	buf_release(&p);

	/* a bad effectiveDate */
	struct resp r;
	resp_begin(&r);
	resp_add(&r, "Storage", "SKUD", ATTRS("\"volumeApiName\":\"gp2\",\"usagetype\":\"EBS:VolumeUsage.gp2\""), "GB-Mo",
		 "0.10", "0", "September");
	resp_end(&r, NULL);
	check_error(r.b.s, "bad.json: PriceList[0] (sku 'SKUD', usagetype 'EBS:VolumeUsage.gp2'): effectiveDate "
			   "'September' is not an RFC 3339 date");
	buf_release(&r.b);

	/* conflicting duplicates name both sources, across responses too */
	resp_begin(&r);
	resp_add(&r, "Storage", "FIRST", ATTRS("\"volumeApiName\":\"gp3\",\"usagetype\":\"EBS:VolumeUsage.gp3\""), "GB-Mo",
		 "0.08", "0", NULL);
	resp_add(&r, "Storage", "SECOND", ATTRS("\"volumeApiName\":\"gp3\",\"usagetype\":\"EBS:VolumeUsage.gp3\""), "GB-Mo",
		 "0.09", "0", NULL);
	resp_end(&r, NULL);
	check_error(r.b.s, "conflicting storage:gp3 prices for 'us-east-1': 0.08 (sku 'FIRST' in bad.json) and 0.09 "
			   "(sku 'SECOND' in bad.json)");
	buf_release(&r.b);

	struct pricebook pb;
	struct buf err = BUF_INIT;
	pricebook_init(&pb);
	resp_begin(&r);
	resp_add(&r, "System Operation", "ONE", ATTRS("\"usagetype\":\"EBS:VolumeP-IOPS.piops\""), "IOPS-Mo", "0.065", "0",
		 NULL);
	resp_end(&r, NULL);
	CHECK_I64(pricebook_add_getproducts(&pb, r.b.s, r.b.len, "a.json", NULL, &err), 0);
	buf_release(&r.b);
	resp_begin(&r);
	resp_add(&r, "System Operation", "TWO", ATTRS("\"usagetype\":\"EBS:VolumeP-IOPS.piops\""), "IOPS-Mo", "0.07", "0",
		 NULL);
	resp_end(&r, NULL);
	CHECK_I64(pricebook_add_getproducts(&pb, r.b.s, r.b.len, "b.json", NULL, &err), EM_EINPUT);
	CHECK_STR(err.s, "conflicting io1_iops prices for 'us-east-1': 0.065 (sku 'ONE' in a.json) and 0.07 (sku "
			 "'TWO' in b.json)");
	buf_release(&r.b);
	pricebook_release(&pb);
	buf_release(&err);
	buf_release(&a);
#undef ATTRS
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_load_dir(void)
{
	char dir[] = "/tmp/em-pricebook-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	struct pricebook pb;
	struct buf err = BUF_INIT, path = BUF_INIT;
	pricebook_init(&pb);
	CHECK_I64(pricebook_load_dir(&pb, dir, &err), EM_ENOTFOUND);
	buf_reset(&err);

	struct resp r;
	resp_begin(&r);
	resp_add(&r, "Storage", "A", REGION_ATTRS("eu-west-1", "EU (Ireland)") ",\"volumeApiName\":\"gp2\"", "GB-Mo",
		 "0.11", "0", NULL);
	resp_end(&r, NULL);
	buf_addf(&path, "%s/b.json", dir);
	write_text(path.s, r.b.s);
	buf_release(&r.b);
	resp_begin(&r);
	resp_add(&r, "Storage", "B", REGION_ATTRS("eu-west-2", "EU (London)") ",\"volumeApiName\":\"gp2\"", "GB-Mo",
		 "0.116", "0", NULL);
	resp_end(&r, NULL);
	buf_reset(&path);
	buf_addf(&path, "%s/a.json", dir);
	write_text(path.s, r.b.s);
	buf_release(&r.b);
	buf_reset(&path);
	buf_addf(&path, "%s/notes.txt", dir);
	write_text(path.s, "not a price file");

	CHECK_I64(pricebook_load_dir(&pb, dir, &err), 0);
	CHECK_STR(err.s, "");
	CHECK_I64(pb.n, 2);
	CHECK_STR(pb.locs[0].code, "eu-west-2"); /* a.json first: name order */
	CHECK_STR(pb.source, dir);
	pricebook_release(&pb);

	buf_reset(&path);
	buf_addf(&path, "%s/c.json", dir);
	write_text(path.s, "{\"PriceList\": 3}");
	pricebook_init(&pb);
	CHECK_I64(pricebook_load_dir(&pb, dir, &err), EM_EINPUT);
	struct buf want = BUF_INIT;
	buf_addf(&want, "%s/c.json: PriceList is not an array", dir);
	CHECK_STR(err.s, want.s);
	pricebook_release(&pb);

	const char *names[] = {"a.json", "b.json", "c.json", "notes.txt"};
	for (size_t i = 0; i < 4; i++) {
		buf_reset(&path);
		buf_addf(&path, "%s/%s", dir, names[i]);
		unlink(path.s);
	}
	rmdir(dir);
	buf_release(&want);
	buf_release(&path);
	buf_release(&err);
}

int main(void)
{
	test_items();
	test_bundled();
	test_filter();
	test_local_zone_and_tiers();
	test_malformed();
	test_load_dir();
	return tap_done();
}
