/*
 * cost.c - monthly cost of an EBS configuration (see cost.h for the formulas).
 *
 * Entry point: cost_monthly. Exact integer arithmetic on price units (1e-10 USD) with 128-bit
 * intermediates; one rounding, to the cent, at the end.
 */
#include "ebsmigrate/common.h"
#include "ebsmigrate/cost.h"

static int missing(struct buf *err, const char *what, const char *location)
{
	return em_err(err, EM_ENOTFOUND, "no %s price for '%s' in the price book", what, location);
}

int cost_monthly(const struct pricebook *book, const char *location, const struct ebs_config *cfg,
		 micro_t *out, struct buf *err)
{
	const struct price_location *loc = location ? pricebook_find(book, location) : NULL;
	if (!loc)
		return em_err(err, EM_ENOTFOUND, "location '%s' is not in the price book",
			      location ? location : "(unknown)");
	if (cfg->type <= EBS_UNKNOWN || cfg->type >= EBS_TYPE_COUNT)
		return em_err(err, EM_EINPUT, "unknown volume type");
	if (!(loc->storage_known & (1u << cfg->type))) {
		struct buf what = BUF_INIT;
		buf_addf(&what, "%s storage", ebs_type_name(cfg->type));
		int rc = missing(err, what.s, location);
		buf_release(&what);
		return rc;
	}
	/* Sum in price units x 1024 so the GiBps/1024 throughput term stays exact. */
	__int128 acc = (__int128)loc->storage[cfg->type] * cfg->size_gib * 1024;
	switch (cfg->type) {
	case EBS_GP3:
		if (cfg->iops > GP3_BASE_IOPS) {
			if (!loc->has_gp3_iops)
				return missing(err, "gp3 IOPS", location);
			acc += (__int128)loc->gp3_iops * (cfg->iops - GP3_BASE_IOPS) * 1024;
		}
		if (cfg->throughput > GP3_BASE_MIBPS) {
			if (!loc->has_gp3_throughput)
				return missing(err, "gp3 throughput", location);
			acc += (__int128)loc->gp3_throughput_gibps * (cfg->throughput - GP3_BASE_MIBPS);
		}
		break;
	case EBS_IO1:
		if (cfg->iops > 0) {
			if (!loc->has_io1_iops)
				return missing(err, "io1 IOPS", location);
			acc += (__int128)loc->io1_iops * cfg->iops * 1024;
		}
		break;
	case EBS_IO2: {
		static const int64_t bounds[3] = {32000, 64000, INT64_MAX};
		int64_t left = cfg->iops, lo = 0;
		for (int t = 0; t < 3 && left > 0; t++) {
			int64_t n = bounds[t] - lo;
			if (n > left)
				n = left;
			if (!(loc->has_io2_iops & (1 << t)))
				return missing(err, "io2 IOPS", location);
			acc += (__int128)loc->io2_iops[t] * n * 1024;
			left -= n;
			lo = bounds[t];
		}
		break;
	}
	default:
		break;
	}
	/* price units x 1024 -> whole cents in one rounding (half up; acc is never negative). */
	const __int128 per_cent = (__int128)1024 * (PRICE_UNITS_PER_USD / 100);
	*out = (micro_t)((acc + per_cent / 2) / per_cent) * MICRO_PER_CENT;
	return 0;
}
