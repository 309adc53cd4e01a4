/*
 * notify.c - the notification after a run (see notify.h): the webhook URL read from a file or
 * the environment, the Slack-compatible summary of a report or a plan, the POST through http.c.
 *
 * Entry points: notify_target_load, notify_target_release, notify_report_payload,
 * notify_plan_payload, notify_post, notify_error_said.
 *
 * Invariants: the URL never reaches a message, a log or a debug dump (requests carry
 * secret_url; errors name the host); its copies are wiped (secbuf). Of a failed post's answer
 * only a known error field is quoted (Slack's code, a JSON "error"/"message"), short printable
 * ASCII, with every part of the URL's path and query it repeats scrubbed: a server that echoes
 * the path cannot leak the token. The post ends within NOTIFY_DEADLINE_MS, retries included. Every payload is written with
 * jsonw; text taken from the inputs (group names, warnings) is escaped for mrkdwn (& < > as
 * entities, which Slack requires and which stops <!channel> mentions and <url|text> links).
 * Figures are the report's or the plan's own totals, formatted, never recomputed.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/http.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/notify.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/report.h"
#include "ebsmigrate/secbuf.h"

#define NOTIFY_MAX_GROUPS 5

void notify_target_release(struct notify_target *t)
{
	secbuf_free_str(t->url);
	free(t->host);
	t->url = NULL;
	t->host = NULL;
}

/* Checks a candidate URL (without naming it) and fills t. */
static int take_url(struct notify_target *t, const char *url, size_t len, const char *origin, struct buf *err)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f)
			return em_err(err, EM_EINPUT, "%s: the webhook URL holds whitespace or a control character", origin);
	if (len < 9 || strncmp(url, "https://", 8) != 0)
		return em_err(err, EM_EINPUT,
			      "%s: the webhook URL must start with https:// (its token must not travel in clear)", origin);
	char *copy = xstrndup(url, len);
	struct buf host = BUF_INIT;
	if (http_url_host(&host, copy)) {
		secbuf_free_str(copy);
		return em_err(err, EM_EINPUT, "%s: the webhook URL has no host", origin);
	}
	t->url = copy;
	t->host = buf_detach(&host);
	return 0;
}

int notify_target_load(struct notify_target *t, const char *file, struct buf *err)
{
	memset(t, 0, sizeof *t);
	if (!file) {
		const char *env = getenv(NOTIFY_WEBHOOK_ENV);
		if (!env || !*env)
			return 0;
		return take_url(t, env, strlen(env), NOTIFY_WEBHOOK_ENV, err);
	}
	struct buf text = BUF_INIT, e = BUF_INIT;
	int rc = em_read_file_max(file, EM_MAX_TOKEN_FILE, &text, &e);
	if (rc) {
		rc = em_err(err, rc == EM_ENOTFOUND ? EM_ENOTFOUND : EM_EINPUT, "--notify-webhook-file: %s", e.s);
		buf_release(&e);
		secbuf_release(&text);
		return rc;
	}
	buf_release(&e);
	struct buf origin = BUF_INIT;
	buf_adds(&origin, "--notify-webhook-file '");
	buf_add_visible(&origin, file);
	buf_addc(&origin, '\'');
	rc = notify_target_parse(t, text.s ? text.s : "", text.len, origin.s, err);
	buf_release(&origin);
	secbuf_release(&text);
	return rc;
}

int notify_target_parse(struct notify_target *t, const char *text, size_t len, const char *origin, struct buf *err)
{
	memset(t, 0, sizeof *t);
	/* the first line that holds anything but whitespace */
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *a = p, *b = le;
		while (a < b && (*a == ' ' || *a == '\t' || *a == '\r'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
			b--;
		if (a < b)
			return take_url(t, a, (size_t)(b - a), origin, err);
		p = le + 1;
	}
	return em_err(err, EM_EINPUT, "%s: the file holds no URL", origin);
}

/* ---------------------------------------------------------------- payloads */

/* s escaped for Slack's mrkdwn: & < > as entities (its only escapes). */
static void add_mrkdwn(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '&')
			buf_adds(b, "&amp;");
		else if (*s == '<')
			buf_adds(b, "&lt;");
		else if (*s == '>')
			buf_adds(b, "&gt;");
		else
			buf_addc(b, *s);
	}
}

/* {"type": type, "text": text}: Slack's text object. */
static void text_object(struct jsonw *w, const char *type, const char *text)
{
	jsonw_object(w);
	jsonw_key_str(w, "type", type);
	jsonw_key_str(w, "text", text);
	jsonw_end(w);
}

/* A block that holds one text object: the header and the sections. */
static void text_block(struct jsonw *w, const char *block, const char *text_type, const char *text)
{
	jsonw_object(w);
	jsonw_key_str(w, "type", block);
	jsonw_key(w, "text");
	text_object(w, text_type, text);
	jsonw_end(w);
}

/* A field of the fields section: the title in bold over the value. */
static void field(struct jsonw *w, const char *title, const char *value)
{
	struct buf t = BUF_INIT;
	buf_addf(&t, "*%s*\n%s", title, value);
	text_object(w, "mrkdwn", t.s);
	buf_release(&t);
}

/* A field whose value is one amount per month. */
static void money_field(struct jsonw *w, const char *title, micro_t m)
{
	struct buf v = BUF_INIT;
	MONEY_ADD_SENTENCE(&v, "%m/month", m);
	field(w, title, v.s);
	buf_release(&v);
}

/* The document up to the open fields section: the fallback text, the header block, then the
 * section whose fields the caller writes (close it with jsonw_end_n(w, 2)). The first field
 * counts the volumes. */
static void begin(struct jsonw *w, struct buf *out, const char *text, const char *title, const char *volumes)
{
	jsonw_init(w, out, JSONW_COMPACT);
	jsonw_object(w);
	jsonw_key_str(w, "text", text);
	jsonw_key_array(w, "blocks");
	text_block(w, "header", "plain_text", title);
	jsonw_object(w);
	jsonw_key_str(w, "type", "section");
	jsonw_key_array(w, "fields");
	field(w, "Volumes", volumes);
}

/* The closing context block: when, and the warnings; then the document ends. */
static void finish(struct jsonw *w, time_t now, char *const *warnings, size_t n_warnings)
{
	char at[21];
	em_format_time(now, at);
	struct buf c = BUF_INIT;
	buf_addf(&c, "ebsmigrate · %s", at);
	for (size_t i = 0; i < n_warnings; i++) {
		buf_adds(&c, "\n:warning: ");
		add_mrkdwn(&c, warnings[i]);
	}
	jsonw_object(w);
	jsonw_key_str(w, "type", "context");
	jsonw_key_array(w, "elements");
	text_object(w, "mrkdwn", c.s);
	jsonw_end_n(w, 2); /* the context block */
	jsonw_end_n(w, 2); /* the blocks, the document */
	buf_release(&c);
}

void notify_report_payload(struct buf *out, const struct report *r, time_t now)
{
	const struct report_figures *t = &r->totals;
	struct buf text = BUF_INIT, v = BUF_INIT;
	buf_addf(&text, "ebsmigrate report: %lld volumes (%lld still gp2), ", (long long)t->volumes,
		 (long long)t->gp2_volumes);
	MONEY_ADD_SENTENCE(&text,
			   "%m/month now, %m/month at the target. Planned savings %m/month: %m realized, %m in flight, "
			   "%m remaining, %m blocked.",
			   t->current, t->target, t->planned, t->realized, t->in_flight, t->remaining, t->blocked);
	buf_addf(&v, "%lld (%lld still gp2)", (long long)t->volumes, (long long)t->gp2_volumes);

	struct jsonw w;
	begin(&w, out, text.s, "ebsmigrate report", v.s);
	buf_reset(&v);
	MONEY_ADD_SENTENCE(&v, "%m now → %m target", t->current, t->target);
	field(&w, "Monthly cost", v.s);
	const struct {
		const char *title;
		micro_t m;
	} monthly[] = {
		{"Planned savings", t->planned}, {"Realized", t->realized},   {"In flight", t->in_flight},
		{"Remaining", t->remaining},     {"Blocked", t->blocked},
	};
	for (size_t i = 0; i < JSONW_COUNT(monthly); i++)
		money_field(&w, monthly[i].title, monthly[i].m);
	jsonw_end_n(&w, 2);
	if (r->n_groups) {
		buf_reset(&v);
		buf_adds(&v, "*Largest planned savings*");
		for (size_t i = 0; i < r->n_groups && i < NOTIFY_MAX_GROUPS; i++) {
			const struct report_group *g = &r->groups[i];
			buf_adds(&v, "\n• ");
			for (size_t k = 0; k < r->n_keys; k++) {
				if (k)
					buf_adds(&v, " / ");
				add_mrkdwn(&v, g->values[k]);
			}
			MONEY_ADD_SENTENCE(&v, ": %m/month planned, %m realized", g->f.planned, g->f.realized);
		}
		if (r->n_groups > NOTIFY_MAX_GROUPS)
			buf_addf(&v, "\n…and %zu more group%s", r->n_groups - NOTIFY_MAX_GROUPS,
				 r->n_groups - NOTIFY_MAX_GROUPS == 1 ? "" : "s");
		text_block(&w, "section", "mrkdwn", v.s);
	}
	finish(&w, now, r->warnings, r->n_warnings);
	buf_release(&v);
	buf_release(&text);
}

void notify_plan_payload(struct buf *out, const struct plan *p, time_t now)
{
	const struct plan_totals *t = &p->totals;
	struct buf text = BUF_INIT, v = BUF_INIT;
	buf_addf(&text, "ebsmigrate plan: %lld volumes, %lld gp2 (%lld to migrate, %lld blocked, %lld to review); ",
		 (long long)t->volumes, (long long)t->gp2_volumes, (long long)t->migrate, (long long)t->blocked,
		 (long long)t->review);
	MONEY_ADD_SENTENCE(&text, "%m/month now, %m/month after: savings %m/month.", t->current_monthly,
			   t->target_monthly, t->savings_monthly);
	buf_addf(&v, "%lld (%lld gp2)", (long long)t->volumes, (long long)t->gp2_volumes);

	struct jsonw w;
	begin(&w, out, text.s, "ebsmigrate plan", v.s);
	buf_reset(&v);
	buf_addf(&v, "%lld migrate · %lld blocked · %lld review", (long long)t->migrate, (long long)t->blocked,
		 (long long)t->review);
	field(&w, "Actions", v.s);
	buf_reset(&v);
	MONEY_ADD_SENTENCE(&v, "%m now → %m after", t->current_monthly, t->target_monthly);
	field(&w, "Monthly cost", v.s);
	money_field(&w, "Savings", t->savings_monthly);
	jsonw_end_n(&w, 2);
	finish(&w, now, p->warnings, p->n_warnings);
	buf_release(&v);
	buf_release(&text);
}

/* ---------------------------------------------------------------- posting */

/* A known error field's text is quoted when it is this short and printable ASCII only; anything
 * else is not quoted at all (a control character could hide an echo of the token from the scrub). */
#define NOTIFY_SAID_MAX 200

static int quotable(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e)
			return 0;
	return n > 0 && n <= NOTIFY_SAID_MAX;
}

static int error_code_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

void notify_error_said(struct buf *out, const char *body, size_t len, const char *url)
{
	char *said = NULL;
	size_t start = 0;
	while (start < len && body[start] && strchr(" \t\r\n", body[start]))
		start++;
	if (start < len && body[start] == '{') {
		/* JSON: Rocket.Chat's and Slack API's "error", Google Chat's error.message,
		 * Mattermost's and Discord's "message" */
		cJSON *j = cJSON_ParseWithLength(body, len);
		const cJSON *e = jsonx_get(j, "error");
		const char *field = cJSON_IsString(e) ? e->valuestring : jsonx_str(e, "message");
		if (!field)
			field = jsonx_str(j, "message");
		if (field)
			said = xstrdup(field);
		cJSON_Delete(j);
	} else {
		/* Slack's plain-text code (invalid_token, no_service, channel_not_found): the first word,
		 * when it is one */
		size_t n = 0;
		while (start + n < len && n <= 64 && error_code_char(body[start + n]))
			n++;
		if (n >= 2 && n <= 64 && (start + n == len || strchr(" \t\r\n.:,", body[start + n])))
			said = xstrndup(body + start, n);
	}
	if (said && quotable(said))
		http_add_scrubbed(out, said, url);
	free(said);
}

int notify_post(const struct notify_target *t, const struct buf *payload, struct buf *err)
{
	struct http_options o;
	memset(&o, 0, sizeof o);
	o.connect_timeout_ms = 10000;
	o.timeout_ms = NOTIFY_DEADLINE_MS;
	o.max_attempts = 3;
	o.no_env_ca = 1; /* AWS_CA_BUNDLE is for AWS endpoints */
	o.ca_file = getenv(NOTIFY_CA_BUNDLE_ENV);
	if (o.ca_file && !*o.ca_file)
		o.ca_file = NULL;
	o.default_rate = -1;
	o.max_body = 64 * 1024;
	struct http_client c;
	struct buf e = BUF_INIT;
	int rc = http_client_init(&c, &o, &e);
	if (rc) {
		rc = em_err(err, rc, "webhook at host '%s': %s", t->host, e.s);
		buf_release(&e);
		return rc;
	}
	struct http_request req;
	http_request_init(&req, "POST", t->url);
	req.secret_url = 1;
	req.deadline_ms = NOTIFY_DEADLINE_MS; /* 30 s in all, retries and their waits included */
	http_headers_add(&req.headers, "Content-Type", "application/json; charset=utf-8");
	buf_add(&req.body, payload->s ? payload->s : "", payload->len);
	struct http_response resp;
	http_response_init(&resp);
	rc = http_send(&c, &req, &resp, &e);
	if (rc) {
		rc = em_err(err, rc, "webhook at host '%s': %s", t->host, e.s);
	} else if (resp.status < 200 || resp.status > 299) {
		struct buf said = BUF_INIT;
		notify_error_said(&said, resp.body.s ? resp.body.s : "", resp.body.len, t->url);
		rc = em_err(err, EM_ENET, "webhook at host '%s' answered HTTP %ld%s%s", t->host, resp.status,
			    said.len ? ": " : "", said.len ? said.s : "");
		buf_release(&said);
	}
	buf_release(&e);
	http_response_release(&resp);
	http_request_release(&req);
	http_client_release(&c);
	return rc;
}
