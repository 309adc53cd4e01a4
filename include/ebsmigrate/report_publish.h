/*
 * report_publish.h - where `report` publishes its document besides stdout/--output-file: a
 * ConfigMap (--publish-configmap NS/NAME, created or updated through kube_client) and an S3
 * object (--report-s3 s3://BUCKET[/PREFIX], one SigV4 PutObject through aws_client).
 * docs/deploy.md#publishing-the-report is the user-facing description.
 *
 * ConfigMap: data key "report.EXT" holds the report, "generated-at" the run time; labels
 * app.kubernetes.io/name=ebsmigrate; annotation ebsmigrate.io/report-bytes (the full size) and
 * ebsmigrate.io/truncated. The API server refuses a ConfigMap over 1 MiB, so a report larger than
 * REPORT_CONFIGMAP_MAX bytes is cut at a line boundary and REPORT_TRUNCATED_MARKER plus the full
 * size is appended — only for the text formats (table, wide, markdown, html); a cut JSON, YAML or
 * CSV document would be unreadable, so those fail with EM_ETOOBIG instead. First a merge patch of
 * data/labels/annotations (the ConfigMap's other keys stay), and a create only when that is 404
 * (RBAC: patch on the name, and create for the first run).
 *
 * S3: key PREFIX/report-YYYYMMDDTHHMMSSZ.EXT (the run's time, so --now reproduces it) and a copy
 * at PREFIX/latest.EXT. Addressing as the AWS SDKs do by default: virtual-hosted
 * (https://BUCKET.s3.REGION.amazonaws.com/KEY) against AWS, path-style (ENDPOINT/BUCKET/KEY) when
 * AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL names a custom endpoint or the bucket name has a dot.
 * Bucket names follow S3's rules; a prefix may hold letters, digits and "/._-~" only (what needs
 * no percent-encoding, so the signed path is the sent path).
 *
 * Errors: 0 or a negative EM_E* code with one message in err (the call and AWS's or the API
 * server's answer); EM_EINPUT for a malformed NS/NAME or s3:// argument.
 * Ownership: the parsed references own their strings (_release frees them).
 */
#ifndef EBSMIGRATE_REPORT_PUBLISH_H
#define EBSMIGRATE_REPORT_PUBLISH_H

#include <stddef.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/kube_configmap.h"

struct kube_client;
struct aws_client;

/* 1 MiB is the API server's limit on a ConfigMap's data; leave room for metadata. */
#define REPORT_CONFIGMAP_MAX (1000 * 1000)
#define REPORT_TRUNCATED_MARKER "[ebsmigrate: report truncated to fit a ConfigMap"

/* ext: "md", "json", ...; text_format: the report may be cut (see above). *truncated_out (may be
 * NULL) is set to 1 when it was. */
int report_publish_configmap(struct kube_client *c, const struct kube_configmap_ref *ref, const char *ext,
			     int text_format, const struct buf *data, time_t now, int *truncated_out, struct buf *err);

struct report_s3_url {
	char *bucket, *prefix; /* prefix without leading or trailing '/', may be "" */
};
int report_s3_url_parse(struct report_s3_url *out, const char *arg, struct buf *err);
void report_s3_url_release(struct report_s3_url *u);

/* The object's URL for bucket/key: virtual-hosted or path-style as above (caller frees), or
 * NULL with err set (no region, a bad endpoint override). */
char *report_s3_object_url(const char *region, const char *bucket, const char *key, struct buf *err);

/* PUTs data to PREFIX/report-TIME.EXT and PREFIX/latest.EXT; *key_out (may be NULL) gets the
 * first key (caller frees). */
int report_publish_s3(struct aws_client *c, const char *region, const struct report_s3_url *u, const char *ext,
		      const char *content_type, const struct buf *data, time_t now, char **key_out, struct buf *err);

#endif
