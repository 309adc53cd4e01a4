/* fuzz_notify_webhook.c - the webhook URL file of --notify-webhook-file (notify_target_parse, which
 * also runs http_url_host): any bytes. A URL taken must start with https://, hold no byte <= 0x20
 * and have a non-empty host that appears in it; a refusal is one of the fixed messages, which
 * quote nothing of the input (the URL is a secret). */
#include <stdio.h>
#include <stdlib.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/notify.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	struct notify_target t;
	struct buf err = BUF_INIT;
	int rc = notify_target_parse(&t, (const char *)data, size, "fuzz", &err);
	if (rc == 0) {
		if (!t.url || strncmp(t.url, "https://", 8) != 0 || !t.host || !*t.host || !strstr(t.url, t.host))
			abort();
		for (const char *p = t.url; *p; p++)
			if ((unsigned char)*p <= 0x20 || *p == 0x7f)
				abort();
	} else {
		/* a fixed message: nothing of the input (the secret) is quoted */
		static const char *const allowed[] = {
			"fuzz: the webhook URL holds whitespace or a control character",
			"fuzz: the webhook URL must start with https:// (its token must not travel in clear)",
			"fuzz: the webhook URL has no host",
			"fuzz: the file holds no URL",
		};
		int known = 0;
		for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++)
			known |= err.s && strcmp(err.s, allowed[i]) == 0;
		if (t.url || t.host || !known)
			abort();
	}
	notify_target_release(&t);
	buf_release(&err);
	return 0;
}
