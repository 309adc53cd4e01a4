/*
 * report_publish.c - publishing `report`'s document to a ConfigMap and to S3 (rules, key names
 * and addressing in report_publish.h).
 *
 * Entry points: report_publish_configmap, report_s3_url_parse,
 * report_s3_object_url, report_publish_s3.
 *
 * Invariants: the ConfigMap body is built with jsonw (the report is a JSON string value there,
 * escaped by the writer); what goes into the ConfigMap is never more than REPORT_CONFIGMAP_MAX
 * bytes of report plus the marker line; an S3 key only ever holds characters that need no
 * percent-encoding, so the URL's path is the canonical URI S3 signs.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_endpoint.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/report_publish.h"

/* ---- ConfigMap ---- */

/* The report as it goes into the ConfigMap: whole, or cut at the last line end that fits. */
static int configmap_text(struct buf *out, const struct buf *data, int text_format, int *truncated, struct buf *err)
{
	*truncated = 0;
	if (data->len <= REPORT_CONFIGMAP_MAX) {
		buf_add(out, data->s, data->len);
		return 0;
	}
	if (!text_format)
		return em_err(err, EM_ETOOBIG,
			      "the report is %zu bytes, more than a ConfigMap holds (%d); a cut JSON, YAML or CSV "
			      "document would not parse: publish -o markdown, html or table, or use --report-s3",
			      data->len, REPORT_CONFIGMAP_MAX);
	size_t cut = REPORT_CONFIGMAP_MAX;
	while (cut > 0 && data->s[cut - 1] != '\n')
		cut--;
	if (cut == 0) /* one huge line: cut at a UTF-8 character boundary */
		for (cut = REPORT_CONFIGMAP_MAX; cut > 0 && ((unsigned char)data->s[cut] & 0xC0) == 0x80; cut--)
			;
	buf_add(out, data->s, cut);
	buf_addf(out, "%s%s: %zu of %zu bytes shown; the whole report: --output-file or --report-s3]\n",
		 cut && data->s[cut - 1] != '\n' ? "\n" : "", REPORT_TRUNCATED_MARKER, cut, data->len);
	*truncated = 1;
	return 0;
}

static void configmap_fields(struct jsonw *w, const char *key, const struct buf *text, const char *when,
			     size_t full_len, int truncated)
{
	char n[32];
	snprintf(n, sizeof n, "%zu", full_len);
	jsonw_key(w, "labels");
	jsonw_object(w);
	jsonw_key_str(w, "app.kubernetes.io/name", "ebsmigrate");
	jsonw_end(w);
	jsonw_key(w, "annotations");
	jsonw_object(w);
	jsonw_key_str(w, "ebsmigrate.io/report-bytes", n);
	jsonw_key_str(w, "ebsmigrate.io/truncated", truncated ? "true" : "false");
	jsonw_end(w);
	jsonw_end(w); /* metadata */
	jsonw_key(w, "data");
	jsonw_object(w);
	jsonw_key_str(w, key, text->s);
	jsonw_key_str(w, "generated-at", when);
	jsonw_end(w);
}

int report_publish_configmap(struct kube_client *c, const struct kube_configmap_ref *ref, const char *ext,
			     int text_format, const struct buf *data, time_t now, int *truncated_out, struct buf *err)
{
	struct buf text = BUF_INIT, body = BUF_INIT, path = BUF_INIT, answer = BUF_INIT, key = BUF_INIT;
	int truncated = 0;
	int rc = configmap_text(&text, data, text_format, &truncated, err);
	if (rc)
		goto out;
	char when[21];
	em_format_time(now, when);
	buf_addf(&key, "report.%s", ext);

	/* The steady state is an update: merge-patch our keys, labels and annotations (the
	 * ConfigMap's other keys stay); create it only when the API server says it is not there. */
	struct jsonw w;
	jsonw_init(&w, &body, JSONW_COMPACT);
	jsonw_object(&w);
	jsonw_key(&w, "metadata");
	jsonw_object(&w);
	configmap_fields(&w, key.s, &text, when, data->len, truncated);
	jsonw_end(&w);
	kube_pathf(&path, "/api/v1/namespaces/%s/configmaps/%s", ref->ns, ref->name);
	struct buf perr = BUF_INIT;
	rc = kube_patch_merge(c, path.s, body.s, &answer, &perr);
	if (rc == EM_ENOTFOUND) {
		buf_reset(&body);
		buf_reset(&answer);
		jsonw_init(&w, &body, JSONW_COMPACT);
		jsonw_object(&w);
		jsonw_key_str(&w, "apiVersion", "v1");
		jsonw_key_str(&w, "kind", "ConfigMap");
		jsonw_key(&w, "metadata");
		jsonw_object(&w);
		jsonw_key_str(&w, "name", ref->name);
		jsonw_key_str(&w, "namespace", ref->ns);
		configmap_fields(&w, key.s, &text, when, data->len, truncated);
		jsonw_end(&w);
		buf_reset(&path);
		kube_pathf(&path, "/api/v1/namespaces/%s/configmaps", ref->ns);
		rc = kube_create(c, path.s, body.s, &answer, err);
	} else if (rc) {
		em_err(err, rc, "%s", perr.s);
	}
	buf_release(&perr);
	if (!rc && truncated_out)
		*truncated_out = truncated;
out:
	buf_release(&text);
	buf_release(&body);
	buf_release(&path);
	buf_release(&answer);
	buf_release(&key);
	return rc;
}

/* ---- S3 ---- */

static int bucket_ok(const char *s, size_t n)
{
	if (n < 3 || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && !((c == '-' || c == '.') && i && i + 1 < n))
			return 0;
		if (c == '.' && (s[i - 1] == '.' || s[i + 1] == '.'))
			return 0;
	}
	return 1;
}

static int key_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("/._-~", c);
}

int report_s3_url_parse(struct report_s3_url *out, const char *arg, struct buf *err)
{
	memset(out, 0, sizeof *out);
	if (strncmp(arg, "s3://", 5) != 0)
		return em_err(err, EM_EINPUT, "'%s' is not an s3://BUCKET[/PREFIX] url", arg);
	const char *b = arg + 5, *slash = strchr(b, '/');
	size_t bn = slash ? (size_t)(slash - b) : strlen(b);
	if (!bucket_ok(b, bn))
		return em_err(err, EM_EINPUT,
			      "'%s': '%.*s' is not an S3 bucket name (3-63 lower-case letters, digits, '-' and '.')", arg,
			      (int)bn, b);
	const char *p = slash ? slash + 1 : "";
	for (const char *q = p; *q; q++)
		if (!key_char_ok(*q) || (*q == '/' && q[1] == '/'))
			return em_err(err, EM_EINPUT,
				      "'%s': the prefix may hold letters, digits and '/', '.', '_', '-', '~' only "
				      "(single '/' between parts)",
				      arg);
	size_t pn = strlen(p);
	while (pn && p[pn - 1] == '/')
		pn--;
	for (const char *q = p, *end = p + pn; q < end;) { /* no "." or ".." segments */
		const char *e = memchr(q, '/', (size_t)(end - q));
		size_t sl = e ? (size_t)(e - q) : (size_t)(end - q);
		if ((sl == 1 && q[0] == '.') || (sl == 2 && q[0] == '.' && q[1] == '.'))
			return em_err(err, EM_EINPUT, "'%s': the prefix has a '.' or '..' part", arg);
		q += sl + 1;
	}
	out->bucket = xstrndup(b, bn);
	out->prefix = xstrndup(p, pn);
	return 0;
}

void report_s3_url_release(struct report_s3_url *u)
{
	free(u->bucket);
	free(u->prefix);
	memset(u, 0, sizeof *u);
}

char *report_s3_object_url(const char *region, const char *bucket, const char *key, struct buf *err)
{
	struct aws_endpoint ep;
	if (aws_endpoint_resolve(&ep, AWS_SERVICE_S3, region, err))
		return NULL;
	struct buf u = BUF_INIT;
	const char *host = strstr(ep.url, "://") + 3;
	if (ep.from_env || strchr(bucket, '.'))
		buf_addf(&u, "%s/%s/%s", ep.url, bucket, key);
	else
		buf_addf(&u, "%.*s%s.%s/%s", (int)(host - ep.url), ep.url, bucket, host, key);
	aws_endpoint_release(&ep);
	return buf_detach(&u);
}

static int put_object(struct aws_client *c, const char *region, const char *bucket, const char *key,
		      const char *content_type, const struct buf *data, struct buf *err)
{
	char *url = report_s3_object_url(region, bucket, key, err);
	if (!url)
		return EM_EINPUT;
	struct http_response resp;
	http_response_init(&resp);
	struct buf e = BUF_INIT;
	int rc = aws_rest(c, AWS_SERVICE_S3, region, "PUT", url, "PutObject", content_type, data->s, data->len, &resp,
			  NULL, &e);
	if (rc)
		em_err(err, rc, "s3://%s/%s: %s", bucket, key, e.s);
	buf_release(&e);
	http_response_release(&resp);
	free(url);
	return rc;
}

int report_publish_s3(struct aws_client *c, const char *region, const struct report_s3_url *u, const char *ext,
		      const char *content_type, const struct buf *data, time_t now, char **key_out, struct buf *err)
{
	char when[21]; /* 2026-11-01T00:00:00Z -> 20261101T000000Z */
	em_format_time(now, when);
	char stamp[21];
	size_t j = 0;
	for (size_t i = 0; when[i] && j + 1 < sizeof stamp; i++)
		if (when[i] != '-' && when[i] != ':')
			stamp[j++] = when[i];
	stamp[j] = '\0';
	const char *sep = *u->prefix ? "/" : "";
	struct buf key = BUF_INIT, latest = BUF_INIT;
	buf_addf(&key, "%s%sreport-%s.%s", u->prefix, sep, stamp, ext);
	buf_addf(&latest, "%s%slatest.%s", u->prefix, sep, ext);
	int rc = put_object(c, region, u->bucket, key.s, content_type, data, err);
	if (!rc)
		rc = put_object(c, region, u->bucket, latest.s, content_type, data, err);
	if (!rc && key_out)
		*key_out = buf_detach(&key);
	buf_release(&key);
	buf_release(&latest);
	return rc;
}
