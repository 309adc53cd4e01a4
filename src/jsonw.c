/*
 * jsonw.c - the streaming JSON writer (jsonw.h): containers, automatic commas, keys and values
 * appended to a struct buf with no tree in between.
 *
 * Entry points: jsonw_init, jsonw_object/jsonw_array/jsonw_end, jsonw_key, the value writers,
 * the member tables (jsonw_members_*), jsonw_key_records, jsonw_add_number and jsonw_add_str.
 * Invariants: the bytes are exactly what the hand-built writers produced before (golden files):
 * strings through buf_add_json_escaped's rules, money through money_add_json, integers as
 * decimal. The plan document calls these a few million times at 100,000 volumes, so literals
 * go in without printf and strings that need no escape with one copy.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/volume.h"

/* 1 for the bytes a JSON string cannot hold as they are (and for the terminating NUL, so one
 * table lookup per byte finds the end and the first byte to escape). */
static const unsigned char stops[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['"'] = 1, ['\\'] = 1,
};

/* The length of s when it needs no escape, else (size_t)-1. */
static size_t plain_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (!stops[*p])
		p++;
	return *p ? (size_t)-1 : (size_t)(p - (const unsigned char *)s);
}

void jsonw_init(struct jsonw *w, struct buf *b, enum jsonw_style style)
{
	memset(w, 0, sizeof *w);
	w->b = b;
	w->style = style;
}

void jsonw_document(struct jsonw *w, struct buf *b, enum jsonw_style style, const char *schema)
{
	jsonw_init(w, b, style);
	jsonw_object(w);
	jsonw_key_str(w, "schema", schema);
}

static void indent(struct jsonw *w, unsigned levels)
{
	buf_addc(w->b, '\n');
	for (unsigned i = 0; i < levels; i++)
		buf_add(w->b, "  ", 2);
}

/* The layout of the innermost open level: JSONW_PRETTY_INLINE is pretty until an array of
 * scalars puts itself, and everything inside it, on one line (then it is spaced). */
static int pretty_here(const struct jsonw *w)
{
	return w->style == JSONW_PRETTY || (w->style == JSONW_PRETTY_INLINE && !w->inline_depth);
}

static int spaced_here(const struct jsonw *w)
{
	return w->style == JSONW_SPACED || (w->style == JSONW_PRETTY_INLINE && w->inline_depth);
}

/* Before any element (a value, a container, or a key): the comma, then the lead or the style's
 * spacing. In JSONW_PRETTY_INLINE an array's first element decides its layout: a scalar keeps
 * the array on one line. */
static void element_start(struct jsonw *w, int container)
{
	if (w->depth == 0) {
		if (w->lead)
			buf_adds(w->b, w->lead);
		w->lead = NULL;
		return;
	}
	unsigned top = w->depth - 1;
	int more = w->has_items[top];
	if (!more && !container && w->style == JSONW_PRETTY_INLINE && !w->inline_depth && w->open[top] == '[')
		w->inline_depth = w->depth;
	if (more)
		buf_addc(w->b, ',');
	w->has_items[top] = 1;
	if (w->lead) {
		buf_adds(w->b, w->lead);
		w->lead = NULL;
	} else if (pretty_here(w)) {
		indent(w, w->depth);
	} else if (more && spaced_here(w)) {
		buf_addc(w->b, ' ');
	}
}

/* Before a value: right after its key, or as an element of an array (or the document). */
static void value_start_of(struct jsonw *w, int container)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	assert(w->depth == 0 || w->open[w->depth - 1] == '['); /* an object member needs a key */
	element_start(w, container);
}

static void value_start(struct jsonw *w)
{
	value_start_of(w, 0);
}

static void open_level(struct jsonw *w, char c)
{
	value_start_of(w, 1);
	assert(w->depth < JSONW_MAX_DEPTH);
	if (w->depth >= JSONW_MAX_DEPTH)
		abort();
	w->open[w->depth] = c;
	w->has_items[w->depth] = 0;
	w->depth++;
	buf_addc(w->b, c);
}

void jsonw_object(struct jsonw *w)
{
	open_level(w, '{');
}

void jsonw_array(struct jsonw *w)
{
	open_level(w, '[');
}

void jsonw_end(struct jsonw *w)
{
	assert(w->depth > 0 && !w->after_key);
	if (w->depth == 0)
		return;
	w->depth--;
	if (pretty_here(w) && w->has_items[w->depth])
		indent(w, w->depth);
	buf_addc(w->b, w->open[w->depth] == '{' ? '}' : ']');
	if (w->inline_depth > w->depth)
		w->inline_depth = 0; /* the one-line array is closed */
	w->lead = NULL;
}

void jsonw_end_n(struct jsonw *w, unsigned n)
{
	while (n--)
		jsonw_end(w);
}

void jsonw_lead(struct jsonw *w, const char *s)
{
	w->lead = s;
}

void jsonw_layout(struct jsonw *w, const char *s)
{
	buf_adds(w->b, s);
}

void jsonw_add_str(struct buf *b, const char *s)
{
	if (!s) {
		buf_add(b, "null", 4);
		return;
	}
	size_t n = plain_len(s);
	if (n == (size_t)-1) {
		buf_add_json_str(b, s);
		return;
	}
	if (buf_grow(b, n + 2)) {
		buf_add_json_str(b, s); /* a capped buffer: let buf record the overflow its own way */
		return;
	}
	char *p = b->s + b->len;
	p[0] = '"';
	memcpy(p + 1, s, n);
	p[n + 1] = '"';
	b->len += n + 2;
	b->s[b->len] = '\0';
}

/* Python's json.dumps(ensure_ascii=True) string escaping (jsonw.ascii): \" \\ \n \r \t \b \f, other
 * bytes below 0x20 as \u00XX, non-ASCII characters as \uXXXX (surrogate pairs above U+FFFF), an
 * invalid UTF-8 byte as U+FFFD. */
void jsonw_add_str_ascii(struct buf *b, const char *s)
{
	if (!s) {
		buf_add(b, "null", 4);
		return;
	}
	buf_addc(b, '"');
	static const char hex[] = "0123456789abcdef";
	static const char escaped[] = "\"\\\n\r\t\b\f", letters[] = "\"\\nrtbf"; /* \" \\ \n ... */
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p;
		const char *esc = strchr(escaped, (int)c); /* c is not 0 here; bytes >= 0x80 are not found */
		if (esc) {
			buf_addc(b, '\\');
			buf_addc(b, letters[esc - escaped]);
		} else if (c < 0x20) {
			buf_addf(b, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
		} else if (c < 0x80) {
			buf_addc(b, (char)c);
		} else {
			/* Decode one UTF-8 sequence; an invalid byte is written as U+FFFD. */
			unsigned cp = 0xfffd;
			int len = 1;
			if ((c & 0xe0) == 0xc0 && (p[1] & 0xc0) == 0x80) {
				cp = ((c & 0x1f) << 6) | (p[1] & 0x3f);
				len = 2;
			} else if ((c & 0xf0) == 0xe0 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80) {
				cp = ((c & 0x0f) << 12) | ((p[1] & 0x3f) << 6) | (p[2] & 0x3f);
				len = 3;
			} else if ((c & 0xf8) == 0xf0 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80 &&
				   (p[3] & 0xc0) == 0x80) {
				cp = ((c & 0x07) << 18) | ((p[1] & 0x3f) << 12) | ((p[2] & 0x3f) << 6) | (p[3] & 0x3f);
				len = 4;
			}
			if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
				cp = 0xfffd; /* no such character (or a lone surrogate): not writable as JSON */
			if (cp >= 0x10000) {
				cp -= 0x10000;
				buf_addf(b, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
			} else {
				buf_addf(b, "\\u%04x", cp);
			}
			p += len;
			continue;
		}
		p++;
	}
	buf_addc(b, '"');
}

/* A key that needs no escape, with its comma and colon in one write: the plan document writes
 * some thirty keys per volume. 0 when that does not apply (a lead, pretty, a capped buffer). */
static int key_fast(struct jsonw *w, const char *key, size_t n)
{
	if (w->lead || (w->style != JSONW_COMPACT && w->style != JSONW_SPACED))
		return 0;
	unsigned top = w->depth - 1;
	size_t comma = w->has_items[top] ? 1 : 0, spaced = w->style == JSONW_SPACED;
	if (buf_grow(w->b, n + 3 + comma * (1 + spaced) + spaced))
		return 0;
	char *p = w->b->s + w->b->len;
	if (comma) {
		*p++ = ',';
		if (spaced)
			*p++ = ' ';
	}
	*p++ = '"';
	memcpy(p, key, n);
	p += n;
	*p++ = '"';
	*p++ = ':';
	if (spaced)
		*p++ = ' ';
	*p = '\0';
	w->b->len = (size_t)(p - w->b->s);
	w->has_items[top] = 1;
	return 1;
}

static void key_slow(struct jsonw *w, const char *key)
{
	element_start(w, 0);
	if (w->ascii)
		jsonw_add_str_ascii(w->b, key);
	else
		jsonw_add_str(w->b, key);
	if (w->style == JSONW_COMPACT)
		buf_addc(w->b, ':');
	else
		buf_add(w->b, ": ", 2);
}

void jsonw_keyn_general(struct jsonw *w, const char *key, size_t n)
{
	assert(w->depth > 0 && w->open[w->depth - 1] == '{' && !w->after_key);
	assert(plain_len(key) == n); /* a literal with a quote, backslash or control byte: use jsonw_key_any */
	if (!key_fast(w, key, n))
		key_slow(w, key);
	w->after_key = 1;
}

void jsonw_key_any(struct jsonw *w, const char *key)
{
	assert(w->depth > 0 && w->open[w->depth - 1] == '{' && !w->after_key);
	size_t n = key && !w->ascii ? plain_len(key) : (size_t)-1;
	if (n == (size_t)-1 || !key_fast(w, key, n))
		key_slow(w, key);
	w->after_key = 1;
}

void jsonw_str(struct jsonw *w, const char *s)
{
	value_start(w);
	if (w->ascii)
		jsonw_add_str_ascii(w->b, s);
	else
		jsonw_add_str(w->b, s);
}

void jsonw_int(struct jsonw *w, long long v)
{
	value_start(w);
	char tmp[24], *p = tmp + sizeof tmp;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	buf_add(w->b, p, (size_t)(tmp + sizeof tmp - p));
}

void jsonw_int_or_null(struct jsonw *w, long long v, int known)
{
	if (known)
		jsonw_int(w, v);
	else
		jsonw_null(w);
}

void jsonw_add_number(struct buf *b, double v)
{
	if (!isfinite(v)) {
		buf_add(b, "null", 4);
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		buf_addf(b, "%.0f", v);
		return;
	}
	char tmp[40];
	for (int p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof tmp, "%.*g", p, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	buf_adds(b, tmp);
}

void jsonw_number(struct jsonw *w, double v)
{
	value_start(w);
	jsonw_add_number(w->b, v);
}

void jsonw_number_2dp(struct jsonw *w, double v)
{
	value_start(w);
	if (isnan(v) || isinf(v))
		buf_add(w->b, "null", 4);
	else
		buf_addf(w->b, "%.10g", round(v * 100) / 100);
}

void jsonw_number_g(struct jsonw *w, double v, int digits)
{
	value_start(w);
	if (isfinite(v))
		buf_addf(w->b, "%.*g", digits, v);
	else
		buf_add(w->b, "null", 4);
}

void jsonw_money(struct jsonw *w, micro_t m)
{
	value_start(w);
	money_add_json(w->b, m);
}

void jsonw_money_or_null(struct jsonw *w, micro_t m, int known)
{
	if (known)
		jsonw_money(w, m);
	else
		jsonw_null(w);
}

void jsonw_time(struct jsonw *w, time_t t)
{
	value_start(w);
	if (!t) {
		buf_add(w->b, "null", 4);
		return;
	}
	char ts[23];
	ts[0] = '"';
	em_format_time(t, ts + 1);
	size_t n = strlen(ts);
	ts[n] = '"';
	buf_add(w->b, ts, n + 1);
}

void jsonw_bool(struct jsonw *w, int v)
{
	value_start(w);
	if (v)
		buf_add(w->b, "true", 4);
	else
		buf_add(w->b, "false", 5);
}

void jsonw_null(struct jsonw *w)
{
	value_start(w);
	buf_add(w->b, "null", 4);
}

void jsonw_raw(struct jsonw *w, const char *json, size_t n)
{
	value_start(w);
	buf_add(w->b, json, n);
}

void jsonw_str_array(struct jsonw *w, const char *const *s, size_t n)
{
	jsonw_array(w);
	for (size_t i = 0; i < n; i++)
		jsonw_str(w, s[i]);
	jsonw_end(w);
}

void jsonw_key_strv(struct jsonw *w, const char *key, char *const *s, size_t n)
{
	jsonw_key_any(w, key);
	jsonw_str_array(w, (const char *const *)s, n);
}

void jsonw_kv_object(struct jsonw *w, const struct kv *kv, size_t n)
{
	jsonw_object(w);
	for (size_t i = 0; i < n; i++)
		{
		jsonw_key_any(w, kv[i].key);
		jsonw_str(w, kv[i].value);
	}
	jsonw_end(w);
}

/* A member table's key: a literal the caller knows needs no escape (checked by jsonw_keyn's
 * assert in the sanitizer build), so it takes the per-volume fast path as a literal key does. */
static inline void key_lit(struct jsonw *w, const char *key)
{
	jsonw_keyn(w, key, strlen(key));
}

void jsonw_members_str(struct jsonw *w, const struct jsonw_str_member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		key_lit(w, m[i].key);
		jsonw_str(w, m[i].value);
	}
}

void jsonw_members_int(struct jsonw *w, const struct jsonw_int_member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		key_lit(w, m[i].key);
		jsonw_int(w, m[i].value);
	}
}

void jsonw_members_money(struct jsonw *w, const struct jsonw_int_member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		key_lit(w, m[i].key);
		jsonw_money(w, (micro_t)m[i].value);
	}
}

void jsonw_key_records(struct jsonw *w, const char *key, const void *v, size_t n, size_t size,
		       void (*element)(struct jsonw *w, const void *e), const struct buf_spill *spill)
{
	jsonw_key_any(w, key);
	jsonw_array(w);
	for (size_t i = 0; i < n; i++) {
		jsonw_lead(w, "\n");
		element(w, (const char *)v + i * size);
		buf_spill(w->b, spill, BUF_SPILL_AT);
	}
	jsonw_layout(w, "\n");
	jsonw_end(w);
}
