/* test_money.c - exact money: parsing, rounding, formatting (sentences and table cells too), and
 * the FACTS.md section 4 checks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/money.h"
#include "tap.h"

static price_t P(const char *s)
{
	price_t p = -1;
	if (money_parse_price(s, &p) != 0)
		return -1;
	return p;
}

static void check_format(void (*fn)(struct buf *, int64_t), int64_t v, const char *want)
{
	struct buf b = BUF_INIT;
	fn(&b, v);
	CHECK_STR(b.s, want);
	buf_release(&b);
}

static void test_parse_price(void)
{
	price_t p;
	CHECK(money_parse_price("0.0000000001", &p) == 0);
	CHECK_I64(p, 1);
	CHECK(money_parse_price("12", &p) == 0);
	CHECK_I64(p, 12 * PRICE_UNITS_PER_USD);
	CHECK(money_parse_price("0.1140000000", &p) == 0);
	CHECK_I64(p, 1140000000);
	CHECK(money_parse_price("46.6944", &p) == 0);
	CHECK_I64(p, 466944000000);
	CHECK(money_parse_price("0", &p) == 0);
	CHECK_I64(p, 0);
	CHECK(money_parse_price("922337203.6854775807", &p) == 0);
	CHECK_I64(p, INT64_MAX);

	static const char *const bad[] = {
		"-1", "1e3", "0.00000000001", "", "abc", "1.2.3", "+1", " 1", "1 ", "1.", ".5",
		"0x10", "922337203.6854775808", "99999999999999999999", "1,5", "NaN", "inf",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		p = 777;
		int rc = money_parse_price(bad[i], &p);
		CHECK_I64(rc, EM_EINPUT);
		CHECK_I64(p, 777); /* untouched on failure */
	}
	CHECK(money_parse_price(NULL, &p) == EM_EINPUT);
}

static void test_parse_micro(void)
{
	micro_t m;
	CHECK(money_parse_micro("11.40", &m) == 0);
	CHECK_I64(m, 11400000);
	CHECK(money_parse_micro("-0.05", &m) == 0);
	CHECK_I64(m, -50000);
	CHECK(money_parse_micro("+3", &m) == 0);
	CHECK_I64(m, 3000000);
	CHECK(money_parse_micro("0.000001", &m) == 0);
	CHECK_I64(m, 1);
	CHECK(money_parse_micro("0.0000001", &m) == EM_EINPUT);
	CHECK(money_parse_micro("-", &m) == EM_EINPUT);
	CHECK(money_parse_micro("1e2", &m) == EM_EINPUT);
	CHECK(money_parse_micro("", &m) == EM_EINPUT);
}

static void test_rounding(void)
{
	CHECK_I64(money_round_cents(5000), 10000);    /* $0.005 -> $0.01 */
	CHECK_I64(money_round_cents(4999), 0);
	CHECK_I64(money_round_cents(-5000), -10000);  /* half away from zero */
	CHECK_I64(money_round_cents(-4999), 0);
	CHECK_I64(money_round_cents(11404999), 11400000);
	CHECK_I64(money_round_cents(11405000), 11410000);
	CHECK_I64(money_round_cents(0), 0);

	/* 1e4 price units = 1 micro-dollar: 0.5 micro rounds away from zero. */
	CHECK_I64(money_price_times(5000, 1, 1), 1);
	CHECK_I64(money_price_times(4999, 1, 1), 0);
	CHECK_I64(money_price_times(5000, -1, 1), -1);
	CHECK_I64(money_price_times(1, 15000, 1), 2);
	CHECK_I64(money_price_times(P("40.96"), 125, 1024), 5000000); /* $5.00 */
	CHECK_I64(money_price_times(P("0.08"), 100, 0), 0);            /* no division by zero */
	/* 128-bit intermediate: $100/GB-Mo x 2^40 GiB does not overflow before the division. */
	CHECK_I64(money_price_times(P("100"), (int64_t)1 << 40, 1024), (int64_t)100 * MICRO_PER_USD << 30);
	CHECK_I64(money_price_times(INT64_MAX, INT64_MAX, 1), INT64_MAX); /* saturates */
}

static void test_format(void)
{
	check_format(money_add_usd, 11400000, "11.40");
	check_format(money_add_usd, -50000, "-0.05");
	check_format(money_add_usd, 0, "0.00");
	check_format(money_add_usd, 4999, "0.00");
	check_format(money_add_usd, -4999, "0.00"); /* never "-0.00" */
	check_format(money_add_usd, 5000, "0.01");
	check_format(money_add_usd, 123456789012, "123456.79");

	check_format(money_add_price, 912000000, "0.0912");
	check_format(money_add_price, 466944000000, "46.6944");
	check_format(money_add_price, 0, "0");
	check_format(money_add_price, 12 * PRICE_UNITS_PER_USD, "12");
	check_format(money_add_price, 1, "0.0000000001");

	check_format(money_add_json, 11400000, "11.4");
	check_format(money_add_json, 26220000, "26.22");
	check_format(money_add_json, 0, "0");
	check_format(money_add_json, 100000000, "100");
	check_format(money_add_json, -50000, "-0.05");
	check_format(money_add_json, 1234, "0");

	check_format(money_add_usd_pretty, 123456000, "$123.46");
	check_format(money_add_usd_pretty, 1234560000, "$1,234.56");
	check_format(money_add_usd_pretty, 1234567890000, "$1,234,567.89");
	check_format(money_add_usd_pretty, 0, "$0.00");
	check_format(money_add_usd_pretty, -1234560000, "-$1,234.56");
	check_format(money_add_usd_pretty, 999995000, "$1,000.00");
}

/* Sentences and table cells built on money_add_usd_pretty. */
static void test_sentence_and_cell(void)
{
	struct buf b = BUF_INIT;
	MONEY_ADD_SENTENCE(&b, "now %m, after %m (%m/year)", 1234560000, -50000, 0);
	CHECK_STR(b.s, "now $1,234.56, after -$0.05 ($0.00/year)");
	buf_reset(&b);
	MONEY_ADD_SENTENCE(&b, "%m", 11400000); /* a template that is one amount */
	CHECK_STR(b.s, "$11.40");
	buf_reset(&b);
	MONEY_ADD_SENTENCE(&b, "%m%m and 100% %n", 10000, 20000); /* adjacent; another '%' is text */
	CHECK_STR(b.s, "$0.01$0.02 and 100% %n");
	buf_reset(&b);
	money_add_sentence(&b, "no amount at all", NULL, 0);
	CHECK_STR(b.s, "no amount at all");
	buf_release(&b);

	char *c = money_cell(1, 1234560000, money_add_usd_pretty);
	CHECK_STR(c, "$1,234.56");
	free(c);
	c = money_cell(0, 1234560000, money_add_usd_pretty);
	CHECK_STR(c, "-");
	free(c);
	c = money_cell(1, 912000000, money_add_price);
	CHECK_STR(c, "0.0912");
	free(c);
}

/* The monthly formulas of FACTS.md section 4, in cents, from published prices. */
static int64_t gp3_cents(const char *gb, const char *iops, const char *gibps, int64_t gib, int64_t iops_n,
			 int64_t mibps)
{
	micro_t m = money_price_times(P(gb), gib, 1);
	if (iops_n > 3000)
		m += money_price_times(P(iops), iops_n - 3000, 1);
	if (mibps > 125)
		m += money_price_times(P(gibps), mibps - 125, 1024);
	return money_round_cents(m) / MICRO_PER_CENT;
}

static int64_t gb_cents(const char *gb, int64_t gib)
{
	return money_round_cents(money_price_times(P(gb), gib, 1)) / MICRO_PER_CENT;
}

static void test_facts_seoul(void)
{
	/* ap-northeast-2, FACTS.md section 4 "Checks". */
	CHECK_I64(gb_cents("0.1140000000", 100), 1140);
	CHECK_I64(gp3_cents("0.0912000000", "0.0057000000", "46.6944000000", 100, 3000, 125), 912);
	CHECK_I64(gp3_cents("0.0912000000", "0.0057000000", "46.6944000000", 100, 6000, 125), 2622);
	CHECK_I64(gp3_cents("0.0912000000", "0.0057000000", "46.6944000000", 100, 3000, 250), 1482);
	CHECK_I64(gb_cents("0.1140000000", 1000), 11400);
	/* "12.5x the gp3 100 GiB that gives the same 3,000 IOPS" */
	CHECK_I64(gb_cents("0.114", 1000) * 10, gp3_cents("0.0912", "0.0057", "46.6944", 100, 3000, 125) * 125);
	/* us-east-1: 200 GiB gp2 $20.00 vs gp3 + 125 MiB/s $21.00 */
	CHECK_I64(gb_cents("0.10", 200), 2000);
	CHECK_I64(gp3_cents("0.08", "0.005", "40.96", 200, 3000, 250), 2100);
	/* per MiB/s price = GiBps / 1024: us-east-1 40.96 -> 0.04 */
	CHECK_I64(P("40.96") / 1024, P("0.04"));
}

/* Every row of the FACTS.md table: gp2 100 GiB, gp3 100 GiB, gp3 + 3,000 IOPS above the free
 * 3,000, gp3 + 125 MiB/s above the free 125, gp2 1,000 GiB (expected cents worked out by hand
 * from the table, not by this code). */
static const struct {
	const char *region, *gp2, *gp3, *iops, *gibps;
	int64_t gp2_100, gp3_100, gp3_6000, gp3_250, gp2_1000;
} rows[] = {
	{"us-east-1", "0.10", "0.08", "0.005", "40.96", 1000, 800, 2300, 1300, 10000},
	{"us-east-2", "0.10", "0.08", "0.005", "40.96", 1000, 800, 2300, 1300, 10000},
	{"us-west-2", "0.10", "0.08", "0.005", "40.96", 1000, 800, 2300, 1300, 10000},
	{"us-west-1", "0.12", "0.096", "0.006", "49.152", 1200, 960, 2760, 1560, 12000},
	{"ca-central-1", "0.11", "0.088", "0.0055", "45.056", 1100, 880, 2530, 1430, 11000},
	{"eu-west-1", "0.11", "0.088", "0.0055", "45.056", 1100, 880, 2530, 1430, 11000},
	{"eu-west-2", "0.116", "0.0928", "0.0058", "47.5136", 1160, 928, 2668, 1508, 11600},
	{"eu-west-3", "0.116", "0.0928", "0.0058", "47.5136", 1160, 928, 2668, 1508, 11600},
	{"eu-central-1", "0.119", "0.0952", "0.006", "48.7424", 1190, 952, 2752, 1547, 11900},
	{"eu-north-1", "0.1045", "0.0836", "0.0052", "42.8032", 1045, 836, 2396, 1359, 10450},
	{"eu-south-1", "0.1155", "0.0924", "0.0058", "47.3088", 1155, 924, 2664, 1502, 11550},
	{"ap-northeast-1", "0.12", "0.096", "0.006", "49.152", 1200, 960, 2760, 1560, 12000},
	{"ap-northeast-3", "0.12", "0.096", "0.006", "49.152", 1200, 960, 2760, 1560, 12000},
	{"ap-northeast-2", "0.114", "0.0912", "0.0057", "46.6944", 1140, 912, 2622, 1482, 11400},
	{"ap-south-1", "0.114", "0.0912", "0.0057", "46.6944", 1140, 912, 2622, 1482, 11400},
	{"ap-southeast-1", "0.12", "0.096", "0.006", "49.152", 1200, 960, 2760, 1560, 12000},
	{"ap-southeast-2", "0.12", "0.096", "0.006", "49.152", 1200, 960, 2760, 1560, 12000},
	{"ap-east-1", "0.132", "0.1056", "0.0066", "54.0672", 1320, 1056, 3036, 1716, 13200},
	{"me-south-1", "0.121", "0.0968", "0.0061", "49.5616", 1210, 968, 2798, 1573, 12100},
	{"af-south-1", "0.1309", "0.1047", "0.0065", "53.6064", 1309, 1047, 2997, 1701, 13090},
	{"sa-east-1", "0.19", "0.152", "0.0095", "77.824", 1900, 1520, 4370, 2470, 19000},
};

static void test_facts_every_region(void)
{
	CHECK_I64(sizeof rows / sizeof rows[0], 21);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		CHECK_I64(gb_cents(rows[i].gp2, 100), rows[i].gp2_100);
		CHECK_I64(gp3_cents(rows[i].gp3, rows[i].iops, rows[i].gibps, 100, 3000, 125), rows[i].gp3_100);
		CHECK_I64(gp3_cents(rows[i].gp3, rows[i].iops, rows[i].gibps, 100, 6000, 125), rows[i].gp3_6000);
		CHECK_I64(gp3_cents(rows[i].gp3, rows[i].iops, rows[i].gibps, 100, 3000, 250), rows[i].gp3_250);
		CHECK_I64(gb_cents(rows[i].gp2, 1000), rows[i].gp2_1000);
	}
}

int main(void)
{
	test_parse_price();
	test_parse_micro();
	test_rounding();
	test_format();
	test_sentence_and_cell();
	test_facts_seoul();
	test_facts_every_region();
	return tap_done();
}
