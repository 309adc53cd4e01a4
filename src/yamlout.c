/*
 * yamlout.c - `-o yaml`: a JSON text rewritten as the same document in YAML.
 *
 * Entry points: yamlout_from_json (memory to buf), yamlout_from_json_file (spool file to file).
 * How: a recursive-descent reader walks the JSON tokens from a 64 KiB window and hands each one
 * to libyaml's emitter as an event (mapping/sequence start and end, scalars); nothing is held
 * but the current string token and the nesting (YAMLOUT_MAX_DEPTH levels at most), so a plan
 * document of 500 MB converts in a few hundred KiB.
 * Invariants: the YAML loads to the value the JSON parses to. So scalars are written plain only
 * when no YAML 1.1 or 1.2 resolver reads them as anything but what they are: a string is plain
 * only when it starts with a letter and is none of the words resolvers give meaning to (true,
 * no, null, on, y, ...); every other string is quoted (the emitter picks the quoting). Numbers
 * stay plain, in the form YAML 1.1 reads as a number (a float needs a '.', its exponent a sign:
 * 1e5 becomes 1.0e+5). Bytes that are not UTF-8 inside strings become U+FFFD.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/yamlout.h"

struct reader {
	const char *mem; /* memory input, or NULL */
	size_t len, pos;
	FILE *in;        /* file input */
	char window[1 << 16];
	size_t offset;   /* of the window's first byte in the input, for messages */
	int eof;
	yaml_emitter_t em;
	struct buf token;
	struct buf *err;
	int failed;
};

static int fill(struct reader *r)
{
	if (r->mem || r->eof)
		return r->pos < r->len;
	if (r->pos < r->len)
		return 1;
	r->offset += r->len;
	r->len = fread(r->window, 1, sizeof r->window, r->in);
	r->pos = 0;
	if (r->len == 0)
		r->eof = 1;
	return r->len > 0;
}

static int peek(struct reader *r)
{
	if (!fill(r))
		return -1;
	return (unsigned char)(r->mem ? r->mem : r->window)[r->pos];
}

static int next(struct reader *r)
{
	int c = peek(r);
	if (c >= 0)
		r->pos++;
	return c;
}

static size_t at(const struct reader *r)
{
	return r->offset + r->pos;
}

static int fail(struct reader *r, const char *what)
{
	if (!r->failed)
		em_err(r->err, EM_EINPUT, "yaml output: the JSON document is malformed at byte %zu: %s", at(r), what);
	r->failed = 1;
	return EM_EINPUT;
}

static int emit(struct reader *r, yaml_event_t *ev)
{
	if (!yaml_emitter_emit(&r->em, ev)) {
		if (!r->failed)
			em_err(r->err, EM_EIO, "yaml output: %s", r->em.problem ? r->em.problem : "cannot be written");
		r->failed = 1;
		return EM_EIO;
	}
	return 0;
}

static void skip_ws(struct reader *r)
{
	for (int c = peek(r); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek(r))
		r->pos++;
}

/* Appends code point cp as UTF-8. */
static void add_utf8(struct buf *b, uint32_t cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	buf_add(b, u, n);
}

static int hex4(struct reader *r, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int c = next(r);
		if (!isxdigit(c))
			return fail(r, "a \\u escape needs four hex digits");
		v = v << 4 | (uint32_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
	}
	*out = v;
	return 0;
}

/* Rewrites r->token's raw bytes so that every sequence that is not UTF-8 becomes U+FFFD. */
static void make_utf8(struct buf *b)
{
	const unsigned char *s = (const unsigned char *)b->s;
	size_t i = 0;
	while (i < b->len && s[i] < 0x80)
		i++;
	if (i == b->len)
		return;
	struct buf fixed = BUF_INIT;
	buf_add(&fixed, b->s, i);
	while (i < b->len) {
		unsigned char c = s[i];
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		int ok = n > 0 && i + n <= b->len;
		for (size_t k = 1; ok && k < n; k++)
			ok = (s[i + k] & 0xc0) == 0x80;
		if (ok && n == 3) { /* no overlong forms, no surrogates */
			ok = !(c == 0xe0 && s[i + 1] < 0xa0) && !(c == 0xed && s[i + 1] >= 0xa0);
		} else if (ok && n == 4) {
			ok = !(c == 0xf0 && s[i + 1] < 0x90) && !(c == 0xf4 && s[i + 1] >= 0x90);
		}
		if (ok) {
			buf_add(&fixed, b->s + i, n);
			i += n;
		} else {
			add_utf8(&fixed, 0xfffd);
			i++;
		}
	}
	buf_reset(b);
	buf_add(b, fixed.s, fixed.len);
	buf_release(&fixed);
}

/* Reads a JSON string (after its opening quote) into r->token, decoded, as UTF-8. */
static int read_string(struct reader *r)
{
	buf_reset(&r->token);
	for (;;) {
		int c = next(r);
		if (c < 0)
			return fail(r, "a string is not closed");
		if (c == '"')
			break;
		if (c < 0x20)
			return fail(r, "a control character inside a string");
		if (c != '\\') {
			buf_addc(&r->token, (char)c);
			continue;
		}
		c = next(r);
		switch (c) {
		case '"': case '\\': case '/': buf_addc(&r->token, (char)c); break;
		case 'b': buf_addc(&r->token, '\b'); break;
		case 'f': buf_addc(&r->token, '\f'); break;
		case 'n': buf_addc(&r->token, '\n'); break;
		case 'r': buf_addc(&r->token, '\r'); break;
		case 't': buf_addc(&r->token, '\t'); break;
		case 'u': {
			uint32_t cp, lo;
			if (hex4(r, &cp))
				return EM_EINPUT;
			if (cp >= 0xd800 && cp <= 0xdbff && peek(r) == '\\') {
				r->pos++;
				if (next(r) != 'u')
					return fail(r, "a high surrogate is followed by another escape");
				if (hex4(r, &lo))
					return EM_EINPUT;
				if (lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				} else {
					add_utf8(&r->token, 0xfffd); /* a lone surrogate has no UTF-8 form */
					cp = lo >= 0xd800 && lo <= 0xdfff ? 0xfffd : lo;
				}
			} else if (cp >= 0xd800 && cp <= 0xdfff) {
				cp = 0xfffd;
			}
			add_utf8(&r->token, cp);
			break;
		}
		default: return fail(r, "an unknown escape in a string");
		}
	}
	make_utf8(&r->token);
	return 0;
}

/* Would a YAML 1.1 or 1.2 resolver read this plain scalar as a string? Conservative: it must
 * start with a letter and be none of the words that mean a bool or null somewhere. */
static int plain_is_string(const char *s, size_t n)
{
	static const char *const words[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", NULL};
	if (n == 0 || !isalpha((unsigned char)s[0]))
		return 0;
	for (const char *const *w = words; *w; w++)
		if (strlen(*w) == n && strncasecmp(s, *w, n) == 0)
			return 0;
	return 1;
}

static int emit_scalar(struct reader *r, const char *s, size_t n, int plain_ok)
{
	yaml_event_t ev;
	if (n > INT_MAX)
		return fail(r, "a string longer than 2 GiB");
	/* plain_implicit 0 with no tag makes the emitter quote the scalar */
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)n, plain_ok, 1,
					  plain_ok ? YAML_ANY_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE))
		return fail(r, "a scalar libyaml refuses");
	return emit(r, &ev);
}

/* Appends the run of digits at the reader to t; how many. */
static size_t read_digits(struct reader *r, struct buf *t)
{
	size_t n = 0;
	for (; isdigit(peek(r)); n++)
		buf_addc(t, (char)next(r));
	return n;
}

/* A JSON number, in the form YAML 1.1 resolves as one: [-]int, or [-]int.frac[e(+|-)exp]. */
static int read_number(struct reader *r)
{
	struct buf *t = &r->token;
	buf_reset(t);
	int c = peek(r);
	if (c == '-')
		buf_addc(t, (char)next(r));
	size_t int_digits = read_digits(r, t);
	if (!int_digits || (int_digits > 1 && t->s[t->len - int_digits] == '0'))
		return fail(r, "a number is malformed");
	int has_frac = 0;
	if (peek(r) == '.') {
		buf_addc(t, (char)next(r));
		if (!read_digits(r, t))
			return fail(r, "a number's fraction has no digits");
		has_frac = 1;
	}
	if (peek(r) == 'e' || peek(r) == 'E') {
		next(r);
		if (!has_frac)
			buf_adds(t, ".0");
		buf_addc(t, 'e');
		c = peek(r);
		buf_addc(t, c == '-' ? '-' : '+');
		if (c == '-' || c == '+')
			next(r);
		if (!read_digits(r, t))
			return fail(r, "a number's exponent has no digits");
	}
	return emit_scalar(r, t->s, t->len, 1);
}

static int literal(struct reader *r, const char *word)
{
	for (const char *w = word; *w; w++)
		if (next(r) != *w)
			return fail(r, "an unknown literal");
	return emit_scalar(r, word, strlen(word), 1);
}

static int value(struct reader *r, int depth);

static int container(struct reader *r, int depth, int object)
{
	if (depth >= YAMLOUT_MAX_DEPTH)
		return fail(r, "nested deeper than 256 levels");
	yaml_event_t ev;
	if (object)
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	else
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
	if (emit(r, &ev))
		return EM_EIO;
	int close = object ? '}' : ']';
	skip_ws(r);
	if (peek(r) == close) {
		r->pos++;
	} else {
		for (;;) {
			skip_ws(r);
			if (object) {
				if (next(r) != '"')
					return fail(r, "an object key is not a string");
				if (read_string(r) ||
				    emit_scalar(r, r->token.s, r->token.len, plain_is_string(r->token.s, r->token.len)))
					return EM_EINPUT;
				skip_ws(r);
				if (next(r) != ':')
					return fail(r, "a key is not followed by ':'");
			}
			int rc = value(r, depth + 1);
			if (rc)
				return rc;
			skip_ws(r);
			int c = next(r);
			if (c == close)
				break;
			if (c != ',')
				return fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
		}
	}
	if (object)
		yaml_mapping_end_event_initialize(&ev);
	else
		yaml_sequence_end_event_initialize(&ev);
	return emit(r, &ev);
}

static int value(struct reader *r, int depth)
{
	skip_ws(r);
	int c = peek(r);
	switch (c) {
	case '{': r->pos++; return container(r, depth, 1);
	case '[': r->pos++; return container(r, depth, 0);
	case '"':
		r->pos++;
		if (read_string(r))
			return EM_EINPUT;
		return emit_scalar(r, r->token.s, r->token.len, plain_is_string(r->token.s, r->token.len));
	case 't': return literal(r, "true");
	case 'f': return literal(r, "false");
	case 'n': return literal(r, "null");
	default:
		if (c == '-' || isdigit(c))
			return read_number(r);
		return fail(r, c < 0 ? "the document ends early" : "a value was expected");
	}
}

static int to_buf(void *data, unsigned char *s, size_t n)
{
	buf_add(data, (const char *)s, n);
	return 1;
}

static int to_file(void *data, unsigned char *s, size_t n)
{
	return fwrite(s, 1, n, data) == n;
}

static int convert(struct reader *r)
{
	yaml_event_t ev;
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if (emit(r, &ev))
		return EM_EIO;
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	if (emit(r, &ev))
		return EM_EIO;
	int rc = value(r, 0);
	if (rc)
		return rc;
	skip_ws(r);
	if (peek(r) >= 0)
		return fail(r, "more after the document");
	yaml_document_end_event_initialize(&ev, 1);
	if (emit(r, &ev))
		return EM_EIO;
	yaml_stream_end_event_initialize(&ev);
	if (emit(r, &ev) || !yaml_emitter_flush(&r->em))
		return EM_EIO;
	return 0;
}

static struct reader *reader_new(struct buf *err)
{
	struct reader *r = xcalloc(1, sizeof *r);
	r->err = err;
	buf_init(&r->token);
	yaml_emitter_initialize(&r->em);
	yaml_emitter_set_unicode(&r->em, 1);
	yaml_emitter_set_width(&r->em, -1); /* never fold long strings */
	yaml_emitter_set_indent(&r->em, 2);
	return r;
}

static void reader_free(struct reader *r)
{
	yaml_emitter_delete(&r->em);
	buf_release(&r->token);
	free(r);
}

int yamlout_from_json(struct buf *out, const char *json, size_t len, struct buf *err)
{
	struct reader *r = reader_new(err);
	r->mem = json;
	r->len = len;
	yaml_emitter_set_output(&r->em, to_buf, out);
	int rc = convert(r);
	reader_free(r);
	return rc;
}

int yamlout_from_json_file(FILE *out, FILE *in, struct buf *err)
{
	struct reader *r = reader_new(err);
	r->in = in;
	yaml_emitter_set_output(&r->em, to_file, out);
	int rc = convert(r);
	if (!rc && ferror(in))
		rc = em_err(err, EM_EIO, "yaml output: cannot read the JSON document back");
	reader_free(r);
	return rc;
}
