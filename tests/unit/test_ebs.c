/* test_ebs.c - gp2/gp3 physics against FACTS.md §1 (burst table, baselines, limits, cliff). */
#include "ebsmigrate/common.h"
#include "ebsmigrate/ebs.h"
#include "tap.h"

static int validate(int64_t size, int64_t iops, int64_t tput)
{
	struct ebs_config c = {EBS_GP3, size, iops, tput};
	return ebs_gp3_validate(&c, NULL);
}

int main(void)
{
	/* baseline: 3 x GiB, floor 100, ceiling 16,000 */
	CHECK_I64(ebs_gp2_baseline_iops(1), 100);
	CHECK_I64(ebs_gp2_baseline_iops(33), 100);
	CHECK_I64(ebs_gp2_baseline_iops(34), 102);
	CHECK_I64(ebs_gp2_baseline_iops(100), 300);
	CHECK_I64(ebs_gp2_baseline_iops(1000), 3000);
	CHECK_I64(ebs_gp2_baseline_iops(5333), 15999);
	CHECK_I64(ebs_gp2_baseline_iops(5334), 16000);
	CHECK_I64(ebs_gp2_baseline_iops(16384), 16000);

	/* burst durations from a full bucket (FACTS table) */
	CHECK_I64(ebs_gp2_burst_duration_s(1), 1862);
	CHECK_I64(ebs_gp2_burst_duration_s(33), 1862);
	CHECK_I64(ebs_gp2_burst_duration_s(100), 2000);
	CHECK_I64(ebs_gp2_burst_duration_s(334), 2703);
	CHECK_I64(ebs_gp2_burst_duration_s(750), 7200);
	CHECK_I64(ebs_gp2_burst_duration_s(999), 1800000);
	CHECK_I64(ebs_gp2_burst_duration_s(1000), 0);
	CHECK(!ebs_gp2_bursts(1000));
	CHECK(ebs_gp2_bursts(999));
	CHECK_I64(ebs_gp2_refill_s(100), 18000);

	/* throughput by size */
	CHECK_I64(ebs_gp2_sustained_mibps(170), 128);
	CHECK_I64(ebs_gp2_peak_mibps(170), 128);
	CHECK_I64(ebs_gp2_peak_mibps(171), 250);
	CHECK_I64(ebs_gp2_sustained_mibps(333), 128);
	CHECK_I64(ebs_gp2_sustained_mibps(334), 250);

	/* gp3 limits and ratios (Sept 2025) */
	CHECK_I64(validate(100, 3000, 125), 0);
	CHECK_I64(validate(1, 3000, 125), 0);  /* 3,000 included at any size */
	CHECK_I64(validate(6, 3000, 750), 0);
	CHECK_I64(validate(7, 3500, 125), 0);
	CHECK_I64(validate(6, 3500, 125), EM_EINPUT); /* 500 x 6 = 3000 < 3500 */
	CHECK_I64(validate(100, 2999, 125), EM_EINPUT);
	CHECK_I64(validate(200, 80000, 2000), 0);
	CHECK_I64(validate(200, 80001, 2000), EM_EINPUT);
	CHECK_I64(validate(100, 3000, 751), EM_EINPUT); /* 0.25 MiB/s per IOPS */
	CHECK_I64(validate(100, 3000, 124), EM_EINPUT);
	CHECK_I64(validate(65536, 3000, 125), 0);
	CHECK_I64(validate(65537, 3000, 125), EM_EINPUT);
	CHECK_I64(validate(0, 3000, 125), EM_EINPUT);
	struct buf err = BUF_INIT;
	struct ebs_config c = {EBS_GP3, 100, 90000, 125};
	CHECK(ebs_gp3_validate(&c, &err) == EM_EINPUT);
	CHECK_STR(err.s, "iops 90000 outside the gp3 range of 3,000 to 80,000");
	buf_release(&err);
	CHECK_I64(ebs_gp3_max_iops_for_size(1), 3000);
	CHECK_I64(ebs_gp3_max_iops_for_size(10), 5000);
	CHECK_I64(ebs_gp3_max_iops_for_size(1000), 80000);
	CHECK_I64(ebs_gp3_max_mibps_for_iops(3000), 750);
	CHECK_I64(ebs_gp3_max_mibps_for_iops(16000), 2000);

	/* The field benchmark's cliff: 100 GiB gp2 at qd32 demand (3,000+) from a full bucket
	 * delivers 3,000 IOPS until ~2,000 s, then 300. */
	double credits = GP2_BURST_CREDITS;
	int cliff_at = -1;
	for (int t = 0; t < 2700; t++) {
		double got = ebs_gp2_step(100, 3200, 1.0, &credits);
		if (cliff_at < 0 && got < 2999) {
			cliff_at = t;
			CHECK(got < 3000 && got >= 300);
		}
		if (t == 2100)
			CHECK(got > 299.9 && got < 300.1);
	}
	CHECK_I64(cliff_at, 2000);
	/* 120 s idle refills 36,000 credits: the next 120 s deliver 300 + 300 = 600 on average. */
	credits = 0;
	for (int t = 0; t < 120; t++)
		ebs_gp2_step(100, 0, 1.0, &credits);
	CHECK(credits > 35999 && credits < 36001);
	double sum = 0;
	for (int t = 0; t < 120; t++)
		sum += ebs_gp2_step(100, 3200, 1.0, &credits);
	CHECK(sum / 120 > 599 && sum / 120 < 601);
	/* >= 1,000 GiB never spends credits */
	credits = GP2_BURST_CREDITS;
	CHECK(ebs_gp2_step(2000, 9000, 1.0, &credits) == 6000);
	return tap_done();
}
