/*
 * aws_cloudwatch.h - per-volume EBS metrics from CloudWatch GetMetricData (JSON 1.0 protocol),
 * reduced to the figures the planner uses (struct volume_metrics): p99 and max IOPS and MiB/s
 * over the look-back, minimum BurstBalance, and the share of periods at the volume's IOPS or
 * throughput ceiling.
 *
 * Per volume 4 queries (VolumeReadOps, VolumeWriteOps, VolumeReadBytes, VolumeWriteBytes: Sum)
 * plus BurstBalance (Minimum) for burst-credit types; batched up to 500 queries per call, pages
 * followed with NextToken (the service returns at most 100,800 points per page).
 */
#ifndef EBSMIGRATE_AWS_CLOUDWATCH_H
#define EBSMIGRATE_AWS_CLOUDWATCH_H

#include <stdint.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/volume.h"

struct aws_client;

struct cw_options {
	time_t end;          /* end of the look-back (real time; default now) */
	int64_t lookback_s;  /* default 14 days */
	int64_t period_s;    /* >= 300; default 300 */
	int only_gp2;        /* fetch for gp2 volumes only (what planning needs) */
	struct buf *save;    /* when set, every series is also appended here as a
			      * MetricDataResults[] element (see aws_cloudwatch_write_export) */
};

/* Export format: the JSON `aws cloudwatch get-metric-data --output json` prints,
 * {"MetricDataResults": [{"Id", "Label", "Timestamps", "Values", "StatusCode"}], "Messages": []},
 * with each Label "VOLUME-ID METRIC STAT PERIOD" (e.g. "vol-0abc VolumeReadOps Sum 300") so the
 * series can be matched to volumes and periods without the request. */
void aws_cloudwatch_export_begin(struct buf *out);
void aws_cloudwatch_export_end(struct buf *out);
/* Reads every MetricDataResults document of text (other documents, read by
 * aws_ec2_load_export, are skipped) and fills metrics of f's volumes (volumes must be loaded
 * first). Periods, timestamps (within 455 days before em_now()) and values are checked first.
 * Returns the number of volumes given metrics, or EM_EINPUT naming origin and the JSON path. */
int aws_cloudwatch_load_export(struct fleet *f, const char *text, size_t len, const char *origin,
			       struct buf *err);

/* Fills metrics of f's volumes in region. Volumes without data points keep metrics.has = 0. */
int aws_cloudwatch_volume_metrics(struct aws_client *c, const char *region, struct fleet *f,
				  const struct cw_options *opt, struct buf *err);

/* The reduction, exposed for tests: ops[i] and bytes[i] are per-period sums (NAN when absent),
 * burst[i] per-period minimum BurstBalance (NAN when absent). */
void cw_reduce(struct volume_metrics *out, const struct volume *v, int64_t period_s, const double *ops, const double *bytes,
	       size_t n, const double *burst, size_t n_burst);

#endif
