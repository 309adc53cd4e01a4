/* test_report_publish.c - the arguments of report's publishing flags and apply's switch
 * (kube_configmap_ref_parse, report_s3_url_parse) and the S3 object URL the SDKs' addressing
 * gives (report_s3_object_url): virtual-hosted against AWS, path-style for a custom endpoint or
 * a bucket name with a dot. The wire itself is case 1371/1373's (the simulator checks the
 * signature with botocore's S3SigV4Auth). */
#include <stdlib.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/kube_configmap.h"
#include "ebsmigrate/report_publish.h"
#include "tap.h"

static void check_cm(const char *arg, int with_key, const char *ns, const char *name, const char *key)
{
	struct kube_configmap_ref r;
	struct buf err = BUF_INIT;
	int rc = kube_configmap_ref_parse(&r, arg, with_key, &err);
	if (!ns) {
		CHECK_I64(rc, EM_EINPUT);
		CHECK(err.len > 0);
	} else {
		CHECK_I64(rc, 0);
		CHECK_STR(r.ns, ns);
		CHECK_STR(r.name, name);
		if (key)
			CHECK_STR(r.key, key);
		else
			CHECK(r.key == NULL);
	}
	kube_configmap_ref_release(&r);
	buf_release(&err);
}

static void check_s3(const char *arg, const char *bucket, const char *prefix)
{
	struct report_s3_url u;
	struct buf err = BUF_INIT;
	int rc = report_s3_url_parse(&u, arg, &err);
	if (!bucket) {
		CHECK_I64(rc, EM_EINPUT);
	} else {
		CHECK_I64(rc, 0);
		CHECK_STR(u.bucket, bucket);
		CHECK_STR(u.prefix, prefix);
	}
	report_s3_url_release(&u);
	buf_release(&err);
}

static void check_url(const char *region, const char *bucket, const char *key, const char *want)
{
	struct buf err = BUF_INIT;
	char *u = report_s3_object_url(region, bucket, key, &err);
	CHECK_STR(u, want);
	free(u);
	buf_release(&err);
}

int main(void)
{
	check_cm("ebsmigrate/ebsmigrate-report", 0, "ebsmigrate", "ebsmigrate-report", NULL);
	check_cm("ops/fleet.report", 0, "ops", "fleet.report", NULL);
	check_cm("ebsmigrate/switch=enabled", 1, "ebsmigrate", "switch", "enabled");
	check_cm("ebsmigrate/switch=apply.enabled_2", 1, "ebsmigrate", "switch", "apply.enabled_2");
	check_cm("ebsmigrate/switch", 1, NULL, NULL, NULL);        /* no key */
	check_cm("ebsmigrate/switch=", 1, NULL, NULL, NULL);       /* empty key */
	check_cm("ebsmigrate/switch=a b", 1, NULL, NULL, NULL);    /* key characters */
	check_cm("report", 0, NULL, NULL, NULL);                   /* no namespace */
	check_cm("/report", 0, NULL, NULL, NULL);
	check_cm("ebsmigrate/", 0, NULL, NULL, NULL);
	check_cm("Ebsmigrate/report", 0, NULL, NULL, NULL);        /* upper case */
	check_cm("ebs.migrate/report", 0, NULL, NULL, NULL);       /* a namespace is a label: no dots */
	check_cm("ebsmigrate/-report", 0, NULL, NULL, NULL);
	check_cm("ebsmigrate/a/b", 0, NULL, NULL, NULL);
	check_cm("ebsmigrate/x=y", 0, NULL, NULL, NULL);           /* '=' is not a name character */

	check_s3("s3://reports", "reports", "");
	check_s3("s3://reports/", "reports", "");
	check_s3("s3://reports/nightly", "reports", "nightly");
	check_s3("s3://reports/a/b/", "reports", "a/b");
	check_s3("s3://my.reports-1/x_y.z~", "my.reports-1", "x_y.z~");
	check_s3("s3://ab", NULL, NULL);             /* too short */
	check_s3("s3://Reports", NULL, NULL);
	check_s3("s3://-reports", NULL, NULL);
	check_s3("s3://re..ports", NULL, NULL);
	check_s3("S3://reports", NULL, NULL);
	check_s3("https://reports.s3.amazonaws.com/x", NULL, NULL);
	check_s3("s3://reports/a b", NULL, NULL);
	check_s3("s3://reports/a//b", NULL, NULL);
	check_s3("s3://reports/a/%2e", NULL, NULL);
	check_s3("s3://reports/../x", NULL, NULL);
	check_s3("s3://reports/./x", NULL, NULL);

	unsetenv("AWS_ENDPOINT_URL_S3");
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
	check_url("us-east-1", "reports", "nightly/latest.md", "https://reports.s3.us-east-1.amazonaws.com/nightly/latest.md");
	check_url("eu-central-1", "reports", "x.json", "https://reports.s3.eu-central-1.amazonaws.com/x.json");
	check_url("cn-north-1", "reports", "x.json", "https://reports.s3.cn-north-1.amazonaws.com.cn/x.json");
	/* a dot in the bucket would break the wildcard certificate: path-style */
	check_url("us-east-1", "my.reports", "x.md", "https://s3.us-east-1.amazonaws.com/my.reports/x.md");
	/* a custom endpoint (MinIO, the simulator): path-style, as boto3's "auto" does */
	setenv("AWS_ENDPOINT_URL_S3", "https://127.0.0.1:9000/", 1);
	check_url("us-east-1", "reports", "a/latest.md", "https://127.0.0.1:9000/reports/a/latest.md");
	unsetenv("AWS_ENDPOINT_URL_S3");
	setenv("AWS_ENDPOINT_URL", "http://minio.internal:9000", 1);
	check_url("us-east-1", "reports", "k", "http://minio.internal:9000/reports/k");
	setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
	check_url("us-east-1", "reports", "k", "https://reports.s3.us-east-1.amazonaws.com/k");
	unsetenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
	unsetenv("AWS_ENDPOINT_URL");
	{
		struct buf err = BUF_INIT;
		CHECK(report_s3_object_url(NULL, "reports", "k", &err) == NULL); /* no region */
		CHECK(err.len > 0);
		buf_release(&err);
	}
	return tap_done();
}
