/*
 * notify.h - notifications after a run: a short Slack-compatible summary ({"text": ..., "blocks":
 * [...]}, which Slack, Mattermost and Rocket.Chat incoming webhooks take) posted to a webhook URL
 * read from a file (a mounted Secret) or EBSMIGRATE_NOTIFY_WEBHOOK, never from argv.
 *
 * The URL is a secret (the token is in its path): it lives in a struct notify_target, is wiped on
 * release, and no message, log line or debug dump shows more than its host (http.c's secret_url).
 *
 * Ownership: struct notify_target owns its url (wiped) and host; the report and plan are borrowed;
 * payloads are appended to the caller's buf.
 */
#ifndef EBSMIGRATE_NOTIFY_H
#define EBSMIGRATE_NOTIFY_H

#include <time.h>

#include "ebsmigrate/buf.h"

struct report;
struct plan;

#define NOTIFY_WEBHOOK_ENV "EBSMIGRATE_NOTIFY_WEBHOOK"
#define NOTIFY_CA_BUNDLE_ENV "EBSMIGRATE_NOTIFY_CA_BUNDLE"

struct notify_target {
	char *url;  /* NULL: no notification */
	char *host; /* for messages */
};

/* The webhook URL from file (its first non-blank line, surrounding whitespace trimmed), or, with
 * file NULL, from the environment variable NOTIFY_WEBHOOK_ENV (unset or empty: no notification,
 * t->url NULL, 0). It must be an https:// URL with a host and no whitespace or control characters;
 * the file is read with a cap of EM_MAX_TOKEN_FILE (64 KiB), checked while reading.
 * EM_EINPUT / EM_ENOTFOUND with a message naming the file or the variable, never the URL. */
int notify_target_load(struct notify_target *t, const char *file, struct buf *err);
/* The file's part of notify_target_load: the URL from text (len bytes, any content), origin naming
 * it in messages. */
int notify_target_parse(struct notify_target *t, const char *text, size_t len, const char *origin, struct buf *err);
void notify_target_release(struct notify_target *t);

/* The summary of a finance report: totals (volumes, gp2 left, cost now and at the target, the
 * planned savings and their split), the largest groups by planned savings (at most 5), the report's
 * warnings. Names from the inputs are escaped for Slack's mrkdwn (& < >), so a namespace cannot
 * mention a channel or forge a link. */
void notify_report_payload(struct buf *out, const struct report *r, time_t now);
/* The summary of a plan: volumes, gp2, migrate/blocked/review, cost now and at the target. */
void notify_plan_payload(struct buf *out, const struct plan *p, time_t now);

#define NOTIFY_DEADLINE_MS 30000

/* POSTs payload (application/json) to the target through http.c (10 s to connect; up to 3
 * attempts on connection errors, 429 and 5xx; NOTIFY_DEADLINE_MS, 30 s, in all: attempts and the
 * waits between them). A 2xx answer is success; anything else is EM_* with a message that names
 * the host only, and quotes of the answer only what notify_error_said takes. The CA bundle is the
 * system's, or the PEM file NOTIFY_CA_BUNDLE_ENV names. */
int notify_post(const struct notify_target *t, const struct buf *payload, struct buf *err);
/* What of a webhook's error answer (len bytes, any content) a message may quote, appended to out:
 * a known error field only, never the body as such: Slack's plain-text code (the first word when it
 * is one of [a-z0-9_], "invalid_token"), or a JSON body's "error" string (or error.message), else its
 * "message"; only when it is printable ASCII of at most 200 characters, and with every part of
 * url's path and query it repeats replaced by "..." (http_add_scrubbed). Nothing for anything else. */
void notify_error_said(struct buf *out, const char *body, size_t len, const char *url);

#endif
