/*
 * test_notify.c - what a failed webhook post may quote of the answer (issue 28 item 13):
 * notify_error_said takes a known error field only (Slack's plain-text code, a JSON "error",
 * error.message or "message"), short printable ASCII, and http_add_scrubbed hides every part of
 * the secret URL it repeats, whole or cut short; the body as such is never quoted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/notify.h"
#include "tap.h"

#define SLACK "https://hooks.slack.com/services/T0001/B0002/SECRETTOKENxyz"

static void check_said(const char *body, const char *url, const char *want)
{
	struct buf b = BUF_INIT;
	notify_error_said(&b, body, strlen(body), url);
	CHECK_STR(b.s ? b.s : "", want);
	if (strcmp(b.s ? b.s : "", want) != 0)
		fprintf(stderr, "# body: %s\n", body);
	buf_release(&b);
}

static void test_known_fields(void)
{
	check_said("invalid_token", SLACK, "invalid_token");
	check_said("no_service\n", SLACK, "no_service");
	/* the audit's repro: a 403 whose body repeats the path */
	check_said("invalid_token for /services/T0001/B0002/SECRETTOKENxyz", SLACK, "invalid_token");
	check_said("{\"ok\":false,\"error\":\"channel_not_found\"}", SLACK, "channel_not_found");
	check_said("{\"error\":{\"code\":400,\"message\":\"Invalid JSON payload\",\"status\":\"INVALID_ARGUMENT\"}}", SLACK,
		   "Invalid JSON payload");
	check_said("{\"id\":\"web.incoming_webhook.invalid.app_error\",\"message\":\"Invalid webhook.\","
		   "\"status_code\":400}",
		   SLACK, "Invalid webhook.");
	check_said("{\"message\": \"Unknown Webhook\", \"code\": 10015}", SLACK, "Unknown Webhook");
}

static void test_nothing_quoted(void)
{
	check_said("<html><body>403 Forbidden /services/T0001/B0002/SECRETTOKENxyz</body></html>", SLACK, "");
	check_said("Forbidden: /services/T0001/B0002/SECRETTOKENxyz", SLACK, "");
	check_said("/services/T0001/B0002/SECRETTOKENxyz", SLACK, "");
	check_said("", SLACK, "");
	check_said("{\"message\": 42}", SLACK, "");
	check_said("{\"message\": \"bad\\u0007SECRETTOKENxyz\"}", SLACK, ""); /* a control character */
	check_said("{\"message\": \"caf\\u00e9\"}", SLACK, "");                /* not ASCII */
	char long_msg[400];
	snprintf(long_msg, sizeof long_msg, "{\"message\": \"%0250d\"}", 7);
	check_said(long_msg, SLACK, "");
	check_said("{\"message\": \"x\"", SLACK, ""); /* not JSON */
}

static void test_scrubbed(void)
{
	/* the token whole, cut short, the path; the host stays */
	check_said("{\"message\": \"token SECRETTOKENxyz is revoked\"}", SLACK, "token ... is revoked");
	check_said("{\"message\": \"token SECRETTOK is revoked\"}", SLACK, "token ... is revoked");
	check_said("{\"message\": \"no team T0001 at hooks.slack.com\"}", SLACK, "no team ... at hooks.slack.com");
	check_said("{\"message\": \"bad path /services/T0001/B0002/SECRETTOKENxyz\"}", SLACK, "bad path /.../.../.../...");
	check_said("{\"error\": \"bad key k3yV4lue\"}", "https://chat.example/hook?key=k3yV4lue&x=1", "bad key ...");
	check_said("{\"error\": \"user ops:pa55word refused\"}", "https://ops:pa55word@chat.example/h", "user ops:... refused");
	struct buf b = BUF_INIT;
	http_add_scrubbed(&b, "nothing secret here", SLACK);
	CHECK_STR(b.s, "nothing secret here");
	buf_release(&b);
}

int main(void)
{
	test_known_fields();
	test_nothing_quoted();
	test_scrubbed();
	return tap_done();
}
