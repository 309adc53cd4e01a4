/* fuzz_notify_webhook.c - the webhook URL file of --notify-webhook-file (notify_target_parse, which
 * also runs http_url_host): any bytes. A URL taken must start with https://, hold no byte <= 0x20
 * and have a non-empty host that appears in it; a refusal is one of the fixed messages, which
 * quote nothing of the input (the URL is a secret).
 * The same bytes are also a webhook's error answer (notify_error_said, http_add_scrubbed) for a
 * fixed secret URL: what is quoted is printable ASCII, at most 200 characters, and holds no 8
 * bytes in a row of the URL's token or query value. */
#include <stdio.h>
#include <stdlib.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/notify.h"
#include "fuzz.h"

#define SECRET_URL "https://hooks.example.com/services/T0001/B0002/SECRETTOKENxyz?key=QUERYSECRET42"

/* Aborts when said holds 8 bytes in a row of secret. */
static void check_no_run_of(const struct buf *said, const char *secret)
{
	char run[9];
	for (size_t i = 0; i + 8 <= strlen(secret); i++) {
		memcpy(run, secret + i, 8);
		run[8] = '\0';
		if (said->len && fuzz_contains((const uint8_t *)said->s, said->len, run))
			abort();
	}
}

static void check_error_said(const uint8_t *data, size_t size)
{
	struct buf said = BUF_INIT;
	notify_error_said(&said, (const char *)data, size, SECRET_URL);
	if (said.len > 200)
		abort();
	for (size_t i = 0; i < said.len; i++)
		if ((unsigned char)said.s[i] < 0x20 || (unsigned char)said.s[i] > 0x7e)
			abort();
	check_no_run_of(&said, "SECRETTOKENxyz");
	check_no_run_of(&said, "QUERYSECRET42");
	buf_release(&said);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	check_error_said(data, size);
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
