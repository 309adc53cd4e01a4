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
#include "ebsmigrate/progress.h"
#include "ebsmigrate/volume.h"
#include "ebsmigrate/workpool.h"

struct aws_client;

struct jsonw; /* jsonw.h */

struct cw_options {
	time_t end;          /* end of the look-back (real time; default now) */
	int64_t lookback_s;  /* default 14 days */
	int64_t period_s;    /* >= 300; default 300 */
	int only_gp2;        /* fetch for gp2 volumes only (what planning needs) */
	struct jsonw *save;  /* when set, each volume's reduced figures are written here as an
			      * element of the saved document's volume list (see below) */
	progress_fn progress;  /* may be NULL: "metrics" REGION, volumes done/total per batch */
	void *progress_ctx;
	int concurrency;       /* GetMetricData batches in flight at once; 0 or 1 = one at a time */
	struct workpool_gate *gate; /* may be NULL: else every batch in flight holds a place in it,
				     * so regions read at once share one bound (borrowed) */
};

/* Export formats read back:
 * - the JSON `aws cloudwatch get-metric-data --output json` prints,
 *   {"MetricDataResults": [{"Id", "Label", "Timestamps", "Values", "StatusCode"}], "Messages": []},
 *   with each Label "VOLUME-ID METRIC STAT PERIOD" (e.g. "vol-0abc VolumeReadOps Sum 300") so the
 *   series can be matched to volumes and periods without the request;
 * - what inventory --save writes: the reduced figures, not the series,
 *   {"MetricDataResults": [], "Messages": [], "EbsmigrateVolumeMetrics": {"Schema": 1,
 *   "Volumes": [{"VolumeId", "LookbackSeconds", "P99Iops", "MaxIops", "P99MiBps", "MaxMiBps",
 *   "ShareAtIopsCeiling", "ShareAtThroughputCeiling", "MinBurstBalance" (absent: not reported)}]}}
 *   (the empty MetricDataResults marks it a CloudWatch document for every reader).
 * begin (which sets w up on out) and end wrap the volume list that cw_options.save collects,
 * one volume a line. */
void aws_cloudwatch_export_begin(struct jsonw *w, struct buf *out);
void aws_cloudwatch_export_volume(struct jsonw *w, const struct volume *v);
void aws_cloudwatch_export_end(struct jsonw *w);
/* Reads every CloudWatch document of text (other documents, read by aws_ec2_load_export, are
 * skipped) and fills metrics of f's volumes (volumes must be loaded first). Periods,
 * timestamps (within 455 days before em_now()) and values are checked first.
 * Returns the number of volumes given metrics, or EM_EINPUT naming origin and the JSON path. */
int aws_cloudwatch_load_export(struct fleet *f, const char *text, size_t len, const char *origin,
			       struct buf *err);

/* Fills metrics of f's volumes in region. Volumes without data points keep metrics.has = 0. */
int aws_cloudwatch_volume_metrics(struct aws_client *c, const char *region, struct fleet *f,
				  const struct cw_options *opt, struct buf *err);

/* One GetMetricData batch: per volume (its position in the request, "v3_r") and metric, the
 * value of each period [start + k*period, +period), NAN where absent. Memory is the batch's:
 * volumes x CW_METRICS x n_points doubles. */
#define CW_METRICS 5 /* VolumeReadOps, VolumeWriteOps, VolumeReadBytes, VolumeWriteBytes, BurstBalance */
struct cw_batch {
	size_t n_vols, n_points;
	time_t start;
	int64_t period_s;
	double *values; /* [vol][metric][point] */
};
void cw_batch_init(struct cw_batch *b, size_t n_vols, size_t n_points, time_t start, int64_t period_s);
void cw_batch_release(struct cw_batch *b);
/* Reads one GetMetricData answer page (JSON 1.0) into b without building a tree: each point is
 * checked (numbers, ranges) and stored as it is read. *next_token is the page's NextToken
 * (malloc'd) or NULL. Returns 0 or EM_ESERVER naming origin and the JSON path. */
int aws_cloudwatch_read_answer(struct cw_batch *b, const char *text, size_t len, const char *origin,
			       char **next_token, struct buf *err);

/* The reduction, exposed for tests: ops[i] and bytes[i] are per-period sums (NAN when absent),
 * burst[i] per-period minimum BurstBalance (NAN when absent). */
void cw_reduce(struct volume_metrics *out, const struct volume *v, int64_t period_s, const double *ops, const double *bytes,
	       size_t n, const double *burst, size_t n_burst);

#endif
