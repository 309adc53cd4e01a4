/* test_cost.c - monthly costs to the cent against FACTS.md §4 (Seoul checks, every region's
 * row, io1/io2 rules, unknown prices never defaulted). */
#include <stdio.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/cost.h"
#include "tap.h"

static struct pricebook book;

static micro_t cost(const char *loc, enum ebs_type t, int64_t size, int64_t iops, int64_t tput)
{
	struct ebs_config c = {t, size, iops, tput};
	micro_t m = -1;
	if (cost_monthly(&book, loc, &c, &m, NULL))
		return -1;
	return m;
}

#define USD(d, c) ((micro_t)(d) * MICRO_PER_USD + (micro_t)(c) * MICRO_PER_CENT)

int main(void)
{
	struct buf err = BUF_INIT;
	pricebook_init(&book);
	if (pricebook_load_bundled(&book, &err)) {
		printf("# %s\n", err.s);
		CHECK(0);
		return tap_done();
	}
	/* FACTS §4 checks (ap-northeast-2) */
	CHECK_I64(cost("ap-northeast-2", EBS_GP2, 100, 300, 0), USD(11, 40));
	CHECK_I64(cost("ap-northeast-2", EBS_GP3, 100, 3000, 125), USD(9, 12));
	CHECK_I64(cost("ap-northeast-2", EBS_GP3, 100, 6000, 125), USD(26, 22));
	CHECK_I64(cost("ap-northeast-2", EBS_GP3, 100, 3000, 250), USD(14, 82));
	CHECK_I64(cost("ap-northeast-2", EBS_GP2, 1000, 3000, 0), USD(114, 0));
	/* 12.5x the gp3 100 GiB that gives the same 3,000 IOPS */
	CHECK_I64(cost("ap-northeast-2", EBS_GP2, 1000, 3000, 0) * 10, cost("ap-northeast-2", EBS_GP3, 100, 3000, 125) * 125);
	/* FACTS §1: us-east-1 200 GiB gp2 $20.00 vs gp3 + 125 MiB/s $21.00 */
	CHECK_I64(cost("us-east-1", EBS_GP2, 200, 600, 0), USD(20, 0));
	CHECK_I64(cost("us-east-1", EBS_GP3, 200, 3000, 250), USD(21, 0));

	/* Every row of the FACTS table: 100 GiB gp2 = 100 x gp2, gp3 = 100 x gp3,
	 * +1000 IOPS = 1000 x iops, +100 MiB/s = 100 x MiB/s price. Values in 1/10000 cents. */
	static const struct {
		const char *region;
		int64_t gp2, gp3, iops, mibps, st1, sc1; /* price x 1e6 */
	} rows[] = {
		{"us-east-1", 100000, 80000, 5000, 40000, 45000, 15000},
		{"us-east-2", 100000, 80000, 5000, 40000, 45000, 15000},
		{"us-west-2", 100000, 80000, 5000, 40000, 45000, 15000},
		{"us-west-1", 120000, 96000, 6000, 48000, 54000, 18000},
		{"ca-central-1", 110000, 88000, 5500, 44000, 50000, 16800},
		{"eu-west-1", 110000, 88000, 5500, 44000, 50000, 16800},
		{"eu-west-2", 116000, 92800, 5800, 46400, 53000, 17400},
		{"eu-west-3", 116000, 92800, 5800, 46400, 53000, 17400},
		{"eu-central-1", 119000, 95200, 6000, 47600, 54000, 18000},
		{"eu-north-1", 104500, 83600, 5200, 41800, 47500, 15960},
		{"eu-south-1", 115500, 92400, 5800, 46200, 52500, 17640},
		{"ap-northeast-1", 120000, 96000, 6000, 48000, 54000, 18000},
		{"ap-northeast-3", 120000, 96000, 6000, 48000, 54000, 18000},
		{"ap-northeast-2", 114000, 91200, 5700, 45600, 51000, 17400},
		{"ap-south-1", 114000, 91200, 5700, 45600, 51000, 17400},
		{"ap-southeast-1", 120000, 96000, 6000, 48000, 54000, 18000},
		{"ap-southeast-2", 120000, 96000, 6000, 48000, 54000, 18000},
		{"ap-east-1", 132000, 105600, 6600, 52800, 59400, 19800},
		{"me-south-1", 121000, 96800, 6100, 48400, 55000, 18480},
		{"af-south-1", 130900, 104700, 6500, 52350, 59500, 19992},
		{"sa-east-1", 190000, 152000, 9500, 76000, 86000, 28800},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const char *r = rows[i].region;
		/* 1000 GiB x price rounds to the cent exactly for every listed price */
		CHECK_I64(cost(r, EBS_GP2, 1000, 3000, 0), money_round_cents(rows[i].gp2 * 1000));
		CHECK_I64(cost(r, EBS_GP3, 1000, 3000, 125), money_round_cents(rows[i].gp3 * 1000));
		CHECK_I64(cost(r, EBS_GP3, 1000, 4000, 125) - cost(r, EBS_GP3, 1000, 3000, 125),
			  money_round_cents(rows[i].iops * 1000));
		CHECK_I64(cost(r, EBS_GP3, 1000, 3000, 225) - cost(r, EBS_GP3, 1000, 3000, 125),
			  money_round_cents(rows[i].mibps * 100));
		CHECK_I64(cost(r, EBS_ST1, 1000, 0, 0), money_round_cents(rows[i].st1 * 1000));
		CHECK_I64(cost(r, EBS_SC1, 1000, 0, 0), money_round_cents(rows[i].sc1 * 1000));
	}
	/* Rounding: half a cent rounds up once, at the end (af-south-1 sc1 0.019992 x 1 GiB = 0.02) */
	CHECK_I64(cost("af-south-1", EBS_SC1, 1, 0, 0), USD(0, 2));
	CHECK_I64(cost("eu-north-1", EBS_GP2, 1, 100, 0), USD(0, 10)); /* 0.1045 -> 0.10 */
	CHECK_I64(cost("eu-north-1", EBS_GP2, 3, 100, 0), USD(0, 31)); /* 0.3135 -> 0.31 */
	CHECK_I64(cost("af-south-1", EBS_GP3, 1, 3000, 126), USD(0, 16)); /* 0.1047 + 0.05235 = 0.15705 */

	/* io1: storage + IOPS where FACTS gives the IOPS price; unknown elsewhere */
	CHECK_I64(cost("us-east-1", EBS_IO1, 100, 1000, 0), USD(12, 50) + USD(65, 0));
	CHECK_I64(cost("ap-northeast-2", EBS_IO1, 200, 5000, 0), USD(358, 56));
	buf_reset(&err);
	struct ebs_config io1 = {EBS_IO1, 100, 1000, 0};
	micro_t m;
	CHECK_I64(cost_monthly(&book, "eu-west-1", &io1, &m, &err), EM_ENOTFOUND);
	CHECK_STR(err.s, "no io1 IOPS price for 'eu-west-1' in the price book");
	/* io2 tiers (us-east-1): 32,000 x 0.065 + 32,000 x 0.0455 + 16,000 x 0.032 */
	CHECK_I64(cost("us-east-1", EBS_IO2, 1000, 80000, 0),
		  USD(125, 0) + USD(2080, 0) + USD(1456, 0) + USD(512, 0));
	CHECK_I64(cost("us-east-1", EBS_IO2, 100, 32001, 0), USD(12, 50) + USD(2080, 0) + money_round_cents(45500));
	/* unknown location and unknown type are errors, never defaults */
	buf_reset(&err);
	struct ebs_config gp2 = {EBS_GP2, 100, 300, 0};
	CHECK_I64(cost_monthly(&book, "us-west-2-lax-1", &gp2, &m, &err), EM_ENOTFOUND);
	CHECK_STR(err.s, "location 'us-west-2-lax-1' is not in the price book");
	buf_reset(&err);
	struct ebs_config mag = {EBS_STANDARD, 100, 0, 0};
	CHECK_I64(cost_monthly(&book, "us-east-1", &mag, &m, &err), EM_ENOTFOUND);
	CHECK_STR(err.s, "no standard storage price for 'us-east-1' in the price book");
	buf_release(&err);
	pricebook_release(&book);
	return tap_done();
}
