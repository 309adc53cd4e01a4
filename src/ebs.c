/*
 * ebs.c - EBS volume physics (FACTS.md §1), the single source of the numbers the planner,
 * the cost model and the benchmarks reason with.
 *
 * Entry points: ebs_gp2_baseline_iops, ebs_gp2_burst_duration_s, ebs_gp2_sustained_mibps,
 * ebs_gp3_validate, ebs_gp2_step. All pure; sizes in GiB, throughput in MiB/s.
 *
 * Invariants: gp2 baseline is in [100, 16000]; burst figures are 0 for volumes >= 1,000 GiB
 * (they never spend credits); gp3 validation checks absolute limits before ratios so the
 * message names the most fundamental problem.
 */
#include "ebsmigrate/common.h"
#include "ebsmigrate/ebs.h"

int64_t ebs_gp2_baseline_iops(int64_t size_gib)
{
	int64_t b = 3 * size_gib;
	if (b < GP2_MIN_IOPS)
		b = GP2_MIN_IOPS;
	if (b > GP2_MAX_IOPS)
		b = GP2_MAX_IOPS;
	return b;
}

int ebs_gp2_bursts(int64_t size_gib)
{
	return ebs_gp2_baseline_iops(size_gib) < GP2_BURST_IOPS;
}

int64_t ebs_gp2_burst_duration_s(int64_t size_gib)
{
	if (!ebs_gp2_bursts(size_gib))
		return 0;
	int64_t rate = GP2_BURST_IOPS - ebs_gp2_baseline_iops(size_gib);
	return (GP2_BURST_CREDITS + rate / 2) / rate; /* nearest second: 334 GiB -> 2,703 s */
}

int64_t ebs_gp2_refill_s(int64_t size_gib)
{
	if (!ebs_gp2_bursts(size_gib))
		return 0;
	int64_t base = ebs_gp2_baseline_iops(size_gib);
	return (GP2_BURST_CREDITS + base / 2) / base;
}

int64_t ebs_gp2_sustained_mibps(int64_t size_gib)
{
	return size_gib >= 334 ? 250 : 128;
}

int64_t ebs_gp2_peak_mibps(int64_t size_gib)
{
	return size_gib > 170 ? 250 : 128;
}

int64_t ebs_gp3_max_iops_for_size(int64_t size_gib)
{
	/* The 500:1 ratio limits provisioned IOPS above the included 3,000 (a 1 GiB gp3 still
	 * delivers 3,000 IOPS). */
	int64_t m = size_gib * GP3_MAX_IOPS_PER_GIB;
	if (m < GP3_BASE_IOPS)
		m = GP3_BASE_IOPS;
	return m > GP3_MAX_IOPS ? GP3_MAX_IOPS : m;
}

int64_t ebs_gp3_max_mibps_for_iops(int64_t iops)
{
	int64_t m = iops / 4;
	return m > GP3_MAX_MIBPS ? GP3_MAX_MIBPS : m;
}

int ebs_gp3_validate(const struct ebs_config *c, struct buf *err)
{
	if (c->size_gib < GP3_MIN_GIB || c->size_gib > GP3_MAX_GIB)
		return em_err(err, EM_EINPUT, "size %lld GiB outside the gp3 range of 1 to 65,536 GiB",
			      (long long)c->size_gib);
	if (c->iops < GP3_BASE_IOPS || c->iops > GP3_MAX_IOPS)
		return em_err(err, EM_EINPUT, "iops %lld outside the gp3 range of 3,000 to 80,000",
			      (long long)c->iops);
	if (c->throughput < GP3_BASE_MIBPS || c->throughput > GP3_MAX_MIBPS)
		return em_err(err, EM_EINPUT,
			      "throughput %lld MiB/s outside the gp3 range of 125 to 2,000 MiB/s",
			      (long long)c->throughput);
	if (c->iops > GP3_BASE_IOPS && c->iops > c->size_gib * GP3_MAX_IOPS_PER_GIB)
		return em_err(err, EM_EINPUT, "iops %lld above 500 per GiB for %lld GiB (at most %lld)",
			      (long long)c->iops, (long long)c->size_gib,
			      (long long)(c->size_gib * GP3_MAX_IOPS_PER_GIB));
	if (c->throughput * 4 > c->iops)
		return em_err(err, EM_EINPUT,
			      "throughput %lld MiB/s above 0.25 MiB/s per provisioned IOPS (%lld IOPS allow %lld)",
			      (long long)c->throughput, (long long)c->iops, (long long)(c->iops / 4));
	return 0;
}

double ebs_gp2_step(int64_t size_gib, double demand_iops, double dt_s, double *credits)
{
	double base = (double)ebs_gp2_baseline_iops(size_gib);
	if (demand_iops < 0)
		demand_iops = 0;
	if (!ebs_gp2_bursts(size_gib)) {
		*credits = (double)GP2_BURST_CREDITS;
		return demand_iops < base ? demand_iops : base;
	}
	double cap = demand_iops < GP2_BURST_IOPS ? demand_iops : GP2_BURST_IOPS;
	if (cap <= base) {
		*credits += (base - cap) * dt_s;
		if (*credits > GP2_BURST_CREDITS)
			*credits = GP2_BURST_CREDITS;
		return cap;
	}
	/* Above baseline: spend (cap - base) per second while credits last. */
	double spend = (cap - base) * dt_s;
	if (spend <= *credits) {
		*credits -= spend;
		return cap;
	}
	double t_burst = *credits / (cap - base);
	*credits = 0;
	return (cap * t_burst + base * (dt_s - t_burst)) / dt_s;
}
