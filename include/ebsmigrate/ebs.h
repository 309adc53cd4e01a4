/*
 * ebs.h - EBS volume physics: gp2 baseline, burst and throughput by size; gp3 limits,
 * ratios and the gp3 configuration that keeps a gp2 volume's performance; a gp2 credit-bucket
 * simulation. Pure functions of their arguments (FACTS.md §1); no allocation.
 */
#ifndef EBSMIGRATE_EBS_H
#define EBSMIGRATE_EBS_H

#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/volume.h"

#define GP2_MIN_GIB 1
#define GP2_MAX_GIB 16384
#define GP2_MIN_IOPS 100
#define GP2_MAX_IOPS 16000
#define GP2_BURST_IOPS 3000
#define GP2_BURST_CREDITS 5400000LL
#define GP2_NO_BURST_FROM_GIB 1000   /* baseline >= 3,000: no credits spent */

#define GP3_MIN_GIB 1
#define GP3_MAX_GIB 65536
#define GP3_BASE_IOPS 3000
#define GP3_MAX_IOPS 80000
#define GP3_BASE_MIBPS 125
#define GP3_MAX_MIBPS 2000
#define GP3_MAX_IOPS_PER_GIB 500
/* throughput <= IOPS / 4 (0.25 MiB/s per IOPS) */

/* gp2 baseline IOPS: 3 x GiB, clamped to [100, 16000]. */
int64_t ebs_gp2_baseline_iops(int64_t size_gib);
/* 1 when a gp2 volume of that size spends burst credits (< 1,000 GiB). */
int ebs_gp2_bursts(int64_t size_gib);
/* Seconds a full bucket sustains 3,000 IOPS: 5.4M / (3000 - baseline); 0 when no burst. */
int64_t ebs_gp2_burst_duration_s(int64_t size_gib);
/* Seconds to refill an empty bucket at the baseline rate: 5.4M / baseline; 0 when no burst. */
int64_t ebs_gp2_refill_s(int64_t size_gib);
/* Sustained (credit-free) gp2 throughput in MiB/s: 128 up to 170 GiB, 250 from 334 GiB;
 * between them 128 sustained (250 only while credits last). */
int64_t ebs_gp2_sustained_mibps(int64_t size_gib);
/* Peak gp2 throughput in MiB/s (250 above 170 GiB while credits last, else 128). */
int64_t ebs_gp2_peak_mibps(int64_t size_gib);

/* gp3 configuration. */
struct ebs_config {
	enum ebs_type type;
	int64_t size_gib;
	int64_t iops;       /* provisioned or, for gp2, baseline */
	int64_t throughput; /* MiB/s; 0 when not applicable */
};

/* Validates a gp3 configuration against FACTS §1 limits and ratios; appends the first violation
 * ("iops 90000 above the gp3 maximum of 80,000") to err. 0 or EM_EINPUT. */
int ebs_gp3_validate(const struct ebs_config *c, struct buf *err);
/* Largest gp3 IOPS / throughput allowed for a size (ratio limits and absolute maxima; the
 * included 3,000 IOPS are available at every size). */
int64_t ebs_gp3_max_iops_for_size(int64_t size_gib);
int64_t ebs_gp3_max_mibps_for_iops(int64_t iops);

/* gp2 credit bucket simulation, one step: with `demand_iops` asked for `dt_s` seconds, returns
 * the IOPS delivered and updates *credits (I/O credits, 0..5.4M). Deterministic. */
double ebs_gp2_step(int64_t size_gib, double demand_iops, double dt_s, double *credits);

#endif
