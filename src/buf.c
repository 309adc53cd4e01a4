/*
 * buf.c - the growable string (see buf.h for the ownership rules).
 *
 * Invariant: b->s is NUL-terminated at b->len at all times; while b->cap == 0 it points at
 * the shared static empty string, which is never written to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"

char buf_empty_[1];

void buf_init(struct buf *b)
{
	b->s = buf_empty_;
	b->len = 0;
	b->cap = 0;
	b->max = 0;
}

void buf_release(struct buf *b)
{
	if (b->cap)
		free(b->s);
	size_t max = b->max;
	buf_init(b);
	b->max = max;
}

char *buf_detach(struct buf *b)
{
	char *s = b->cap ? b->s : xstrdup("");
	size_t max = b->max;
	buf_init(b);
	b->max = max;
	return s;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->cap)
		b->s[0] = '\0';
}

void buf_spill(struct buf *b, const struct buf_spill *sp, size_t at)
{
	if (!sp || b->len < at || !b->len)
		return;
	sp->flush(sp->ctx, b->s, b->len);
	buf_reset(b);
}

void buf_set_cap(struct buf *b, size_t max)
{
	b->max = max;
}

int buf_grow(struct buf *b, size_t extra)
{
	if (b->max && b->len + extra > b->max)
		return EM_ETOOBIG;
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	size_t ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap *= 2;
	if (b->cap) {
		b->s = xrealloc(b->s, ncap);
	} else {
		b->s = xmalloc(ncap);
		b->s[0] = '\0';
	}
	b->cap = ncap;
	return 0;
}

int buf_add(struct buf *b, const void *data, size_t n)
{
	if (n == 0)
		return 0;
	int rc = buf_grow(b, n);
	if (rc)
		return rc;
	memcpy(b->s + b->len, data, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_addc(struct buf *b, char c)
{
	return buf_add(b, &c, 1);
}

int buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	char small[256];
	int n = vsnprintf(small, sizeof small, fmt, cp);
	va_end(cp);
	if (n < 0)
		return EM_EINPUT;
	if ((size_t)n < sizeof small)
		return buf_add(b, small, (size_t)n);
	int rc = buf_grow(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

char *xstrvfmt(const char *fmt, va_list ap)
{
	struct buf b = BUF_INIT;
	buf_vaddf(&b, fmt, ap);
	return buf_detach(&b);
}

const char *buf_backslash_escape(unsigned char c)
{
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	default: return NULL;
	}
}

/* Length of the valid UTF-8 sequence at s (2..4), or 0. */
static size_t utf8_seq_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0; /* overlong, or beyond U+10FFFF */
	return n;
}

/* What one character at s becomes: its replacement (a constant, or written into spare), or NULL
 * to keep it as it is; *n is set to the bytes it spans (more than 1 for a valid UTF-8 sequence
 * kept whole). */
typedef const char *escape_rule(const unsigned char *s, size_t *n, char spare[static 8]);

/* Appends str with each character the rule replaces replaced, copying the runs between them whole.
 * Inlined into each escaper so the rule is a direct call: JSON output goes through here, and an
 * indirect call a byte made it nearly twice as slow. */
static inline __attribute__((always_inline)) void add_escaped(struct buf *b, const char *str, escape_rule *rule)
{
	const unsigned char *s = (const unsigned char *)str;
	if (!s)
		return;
	const unsigned char *run = s;
	while (*s) {
		size_t n = 1;
		char spare[8];
		const char *rep = rule(s, &n, spare);
		if (!rep) {
			s += n;
			continue;
		}
		buf_add(b, run, (size_t)(s - run));
		buf_adds(b, rep);
		s += n;
		run = s;
	}
	buf_add(b, run, (size_t)(s - run));
}

/* spare = prefix and the byte c in two lower-case hex digits ("\u00" 1f, "\x" 7f). */
static const char *hex_escape(char spare[static 8], const char *prefix, unsigned char c)
{
	snprintf(spare, 8, "%s%02x", prefix, c);
	return spare;
}

static const char *json_rule(const unsigned char *s, size_t *n, char spare[static 8])
{
	(void)n;
	if (*s >= 0x20 && *s != '"' && *s != '\\')
		return NULL;
	const char *esc = buf_backslash_escape(*s);
	return esc ? esc : hex_escape(spare, "\\u00", *s);
}

void buf_add_json_escaped(struct buf *b, const char *s)
{
	add_escaped(b, s, json_rule);
}

static const char *visible_rule(const unsigned char *s, size_t *n, char spare[static 8])
{
	if (*s >= 0x20 && *s < 0x7f)
		return NULL;
	if (*s >= 0x80) {
		*n = utf8_seq_len(s);
		if (*n != 0 && !(s[0] == 0xc2 && s[1] < 0xa0)) /* valid, and not a C1 control */
			return NULL;
		*n = 1;
	}
	return hex_escape(spare, "\\x", *s);
}

void buf_add_visible(struct buf *b, const char *str)
{
	add_escaped(b, str, visible_rule);
}

static const char *markdown_cell_rule(const unsigned char *s, size_t *n, char spare[static 8])
{
	switch (*s) {
	case '|': return "\\|"; /* the cell separator */
	case '\\': return "\\\\";
	case '*': return "\\*";
	case '_': return "\\_";
	case '`': return "\\`";
	}
	/* what buf_add_visible shows as \xHH, with its backslash escaped so it reads as written */
	return visible_rule(s, n, spare) ? hex_escape(spare, "\\\\x", *s) : NULL;
}

void buf_add_markdown_cell(struct buf *b, const char *str)
{
	add_escaped(b, str, markdown_cell_rule);
}

static const char *xml_rule(const unsigned char *s, size_t *n, char spare[static 8])
{
	(void)spare;
	switch (*s) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&apos;";
	case '\t': case '\n': case '\r': return NULL;
	default:
		if (*s < 0x20)
			return "\xEF\xBF\xBD"; /* not a character XML 1.0 can hold, even as a reference */
		if (*s >= 0x80) {
			*n = utf8_seq_len(s);
			/* invalid, a surrogate, or U+FFFE/U+FFFF: not XML characters */
			if (*n == 0 || (s[0] == 0xed && s[1] >= 0xa0) || (s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)) {
				*n = 1;
				return "\xEF\xBF\xBD";
			}
		}
		return NULL;
	}
}

void buf_add_xml_escaped(struct buf *b, const char *str)
{
	add_escaped(b, str, xml_rule);
}

static const char *label_rule(const unsigned char *s, size_t *n, char spare[static 8])
{
	(void)spare;
	if (*s == '\\')
		return "\\\\";
	if (*s == '"')
		return "\\\"";
	if (*s == '\n')
		return "\\n";
	if (*s < 0x20 || *s == 0x7f)
		return "\xEF\xBF\xBD";
	if (*s >= 0x80) {
		*n = utf8_seq_len(s);
		if (*n == 0 || (s[0] == 0xed && s[1] >= 0xa0)) { /* not UTF-8, or a surrogate */
			*n = 1;
			return "\xEF\xBF\xBD";
		}
	}
	return NULL;
}

void buf_add_label_escaped(struct buf *b, const char *str)
{
	add_escaped(b, str, label_rule);
}

void buf_add_json_str(struct buf *b, const char *s)
{
	if (!s) {
		buf_adds(b, "null");
		return;
	}
	buf_addc(b, '"');
	buf_add_json_escaped(b, s);
	buf_addc(b, '"');
}

void buf_add_escaping(struct buf *b, const char *s, char special, char escape)
{
	for (; *s; s++) {
		if (*s == special)
			buf_addc(b, escape);
		buf_addc(b, *s);
	}
}

void buf_add_grouped(struct buf *b, unsigned long long v)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%llu", v);
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf_addc(b, ',');
		buf_addc(b, digits[i]);
	}
}

void buf_add_csv_field(struct buf *b, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (s[0] == '\0' || s[strlen(s) - 1] != ' ')) {
		buf_adds(b, s);
		return;
	}
	buf_addc(b, '"');
	buf_add_escaping(b, s, '"', '"');
	buf_addc(b, '"');
}

void buf_add_urlencoded(struct buf *b, const char *s, int encode_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~' || (c == '/' && !encode_slash)) {
			buf_addc(b, (char)c);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};
			buf_add(b, e, 3);
		}
	}
}

void buf_trim_trailing(struct buf *b, char c)
{
	while (b->len && b->s[b->len - 1] == c)
		b->s[--b->len] = '\0';
}
