/*
 * test_metrics.c - the metrics exposition (metrics_write) byte for byte in both formats, the
 * label escaping (buf_add_label_escaped), content negotiation, and the helpers of notifications:
 * http_url_host and the webhook URL checks of notify_target_load (which never quote the URL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/metrics.h"
#include "ebsmigrate/notify.h"
#include "tap.h"

static void check_label(const char *in, const char *want)
{
	struct buf b = BUF_INIT;
	buf_add_label_escaped(&b, in);
	CHECK_STR(b.s ? b.s : "", want);
	buf_release(&b);
}

static void check_host(const char *url, const char *want)
{
	struct buf b = BUF_INIT;
	int rc = http_url_host(&b, url);
	CHECK_STR(rc ? "(none)" : b.s, want);
	buf_release(&b);
}

static const char *const labels[] = {"cluster", "namespace"};

static void check_write(void)
{
	struct metrics_doc d;
	metrics_doc_init(&d);
	size_t f = metrics_family_add(&d, "ebsmigrate_x_dollars", "dollars", "Money", labels, 2);
	const char *v1[] = {"prod", "pay\"ments"};
	metrics_sample_add(&d, f, v1, "12.30");
	size_t g = metrics_family_add(&d, "ebsmigrate_y", NULL, "A count", NULL, 0);
	metrics_sample_add(&d, g, NULL, "3");
	metrics_family_add(&d, "ebsmigrate_empty_seconds", "seconds", "None yet", NULL, 0);
	struct buf om = BUF_INIT, prom = BUF_INIT;
	metrics_write(&om, &d, METRICS_OPENMETRICS);
	metrics_write(&prom, &d, METRICS_PROMETHEUS);
	CHECK_STR(om.s, "# HELP ebsmigrate_x_dollars Money\n"
			"# TYPE ebsmigrate_x_dollars gauge\n"
			"# UNIT ebsmigrate_x_dollars dollars\n"
			"ebsmigrate_x_dollars{cluster=\"prod\",namespace=\"pay\\\"ments\"} 12.30\n"
			"# HELP ebsmigrate_y A count\n"
			"# TYPE ebsmigrate_y gauge\n"
			"ebsmigrate_y 3\n"
			"# HELP ebsmigrate_empty_seconds None yet\n"
			"# TYPE ebsmigrate_empty_seconds gauge\n"
			"# UNIT ebsmigrate_empty_seconds seconds\n"
			"# EOF\n");
	CHECK_STR(prom.s, "# HELP ebsmigrate_x_dollars Money\n"
			  "# TYPE ebsmigrate_x_dollars gauge\n"
			  "ebsmigrate_x_dollars{cluster=\"prod\",namespace=\"pay\\\"ments\"} 12.30\n"
			  "# HELP ebsmigrate_y A count\n"
			  "# TYPE ebsmigrate_y gauge\n"
			  "ebsmigrate_y 3\n"
			  "# HELP ebsmigrate_empty_seconds None yet\n"
			  "# TYPE ebsmigrate_empty_seconds gauge\n");
	buf_release(&om);
	buf_release(&prom);
	metrics_doc_release(&d);
}

static void check_webhook(const char *content, int want_rc, const char *want_host)
{
	char path[] = "/tmp/em-test-hook-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs(content, f);
	fclose(f);
	struct notify_target t;
	struct buf err = BUF_INIT;
	int rc = notify_target_load(&t, path, &err);
	CHECK_I64(rc, want_rc);
	CHECK_STR(t.host ? t.host : "(none)", want_host);
	CHECK(!err.s || !strstr(err.s, "TOKEN")); /* the URL is never quoted */
	notify_target_release(&t);
	buf_release(&err);
	unlink(path);
}

int main(void)
{
	check_label("prod", "prod");
	check_label("a\\b\"c\nd", "a\\\\b\\\"c\\nd");
	check_label("tab\there\rcr\x1b[0m\x7f", "tab\xef\xbf\xbdhere\xef\xbf\xbd" "cr\xef\xbf\xbd[0m\xef\xbf\xbd");
	check_label("caf\xc3\xa9 \xf0\x9f\x92\xb8", "caf\xc3\xa9 \xf0\x9f\x92\xb8");
	check_label("bad\xff\xc3", "bad\xef\xbf\xbd\xef\xbf\xbd");
	check_label("sur\xed\xa0\x80", "sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	check_label("over\xe0\x80\xaf", "over\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");

	check_write();

	CHECK_I64(metrics_negotiate(NULL), METRICS_OPENMETRICS);
	CHECK_I64(metrics_negotiate("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"),
		  METRICS_OPENMETRICS);
	CHECK_I64(metrics_negotiate("text/plain;version=0.0.4"), METRICS_PROMETHEUS);
	CHECK_I64(metrics_negotiate("*/*"), METRICS_OPENMETRICS);
	CHECK_STR(metrics_content_type(METRICS_PROMETHEUS), "text/plain; version=0.0.4; charset=utf-8");

	check_host("https://hooks.slack.com/services/T/B/X", "hooks.slack.com");
	check_host("https://user:pw@example.com:8443/x?y", "example.com");
	check_host("https://a@b@example.org/p", "example.org");
	check_host("https://[::1]:9/x", "::1");
	check_host("https:///nohost", "(none)");
	check_host("no-scheme", "(none)");

	check_webhook("https://hooks.slack.com/services/TOKEN\n", 0, "hooks.slack.com");
	check_webhook("\n  \t https://127.0.0.1:8443/TOKEN \r\nsecond line\n", 0, "127.0.0.1");
	check_webhook("http://hooks.slack.com/TOKEN\n", EM_EINPUT, "(none)");
	check_webhook("https://hooks.slack.com/TO KEN\n", EM_EINPUT, "(none)");
	check_webhook("https:///TOKEN", EM_EINPUT, "(none)");
	check_webhook("\n\n", EM_EINPUT, "(none)");
	return tap_done();
}
