/*
 * yamlin.c - YAML exports (`kubectl get -o yaml`, `aws ... --output yaml` / `yaml-stream`) read
 * as the JSON they stand for, so they take the one JSON path into the fleet (yamlin.h).
 *
 * Entry points: yamlin_is_json (which reader a text's first byte picks), yamlin_guess_format
 * (what a text that is neither seems to be), yamlin_to_json (a text in memory), yamlin_open /
 * yamlin_read / yamlin_free (a file, converted a window at a time by jsonx_stream).
 *
 * How: libyaml's parser events are written out as JSON as they come (no document tree), through
 * jsonw (levels, commas, keys, escaping). Invariants: the JSON written is always valid (numbers
 * normalised to JSON's grammar), whatever the YAML held; the nesting is checked as each level opens, so a file of
 * 64k nested flow sequences stops at level YAMLIN_MAX_DEPTH + 1 before libyaml scans further;
 * every byte read counts against the input size limit; each refusal names the line and column
 * (libyaml's marks are 0-based, messages 1-based). Plain scalars resolve by YAML 1.2's core
 * schema (the AWS CLI's ruamel.yaml writes `Value: yes` plain, meaning the string); a YAML 1.1
 * reading would turn such tags into booleans.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/yamlin.h"

_Static_assert(YAMLIN_MAX_DEPTH <= JSONW_MAX_DEPTH, "jsonw must nest as deep as an export may");

#define CORE_TAG "tag:yaml.org,2002:"
/* What yamlin_guess_format looks at: enough for a table's or a CSV's first lines. */
#define SNIFF_BYTES 4096

/* ---- which format ---- */

static size_t skip_ws_bom(const char *text, size_t len)
{
	size_t i = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
		i++;
	return i;
}

int yamlin_is_json(const char *text, size_t len)
{
	size_t i = skip_ws_bom(text, len);
	if (i == len)
		return 1;
	if (text[i] == '[')
		return 1;
	return text[i] == '{' && !(i + 1 < len && text[i + 1] == '{');
}

/* The first line of text (at most n bytes), without its end. */
static size_t first_line(const char *text, size_t n)
{
	const char *nl = memchr(text, '\n', n);
	size_t l = nl ? (size_t)(nl - text) : n;
	return l && text[l - 1] == '\r' ? l - 1 : l;
}

static int starts_with_ci(const char *text, size_t len, const char *word)
{
	size_t n = strlen(word);
	if (len < n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = text[i];
		if ((c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c) != word[i])
			return 0;
	}
	return 1;
}

/* A line of column titles as tables print them: upper-case words, two spaces or more apart. */
static int is_table_header(const char *line, size_t n)
{
	size_t words = 0, i = 0;
	while (i < n) {
		size_t start = i;
		while (i < n && ((line[i] >= 'A' && line[i] <= 'Z') || line[i] == '-' || line[i] == '_' ||
				 (line[i] == ' ' && i + 1 < n && line[i + 1] >= 'A' && line[i + 1] <= 'Z')))
			i++;
		if (i == start)
			return 0;
		words++;
		size_t gap = 0;
		while (i < n && line[i] == ' ')
			i++, gap++;
		if (i < n && gap < 2)
			return 0;
	}
	return words >= 2;
}

static int has_byte(const char *text, size_t n, char c)
{
	return memchr(text, c, n) != NULL;
}

const char *yamlin_guess_format(const char *text, size_t len)
{
	size_t n = len < SNIFF_BYTES ? len : SNIFF_BYTES;
	const unsigned char *u = (const unsigned char *)text;
	if (n >= 2 && u[0] == 0x1f && u[1] == 0x8b)
		return "gzip-compressed data; decompress it first (gunzip)";
	if (n >= 4 && memcmp(text, "PK\x03\x04", 4) == 0)
		return "a zip archive; extract the export from it first";
	if (has_byte(text, n, '\0'))
		return "binary data, not a text export";
	size_t i = skip_ws_bom(text, n);
	const char *p = text + i;
	size_t rest = n - i, line = first_line(p, rest);
	for (size_t k = 0; k + 1 < n; k++)
		if (text[k] == '{' && text[k + 1] == '{')
			return "an unrendered template ('{{ ... }}'); render it first (helm template, envsubst, ...)";
	if (starts_with_ci(p, rest, "<!doctype html") || starts_with_ci(p, rest, "<html"))
		return "an HTML page (an error or login page saved instead of the export?)";
	if (rest && *p == '<')
		return "XML (the EC2 Query API's own answer?); export with aws ... --output json or --output yaml";
	if (line >= 3 && strspn(p, "-") == line && rest > line + 1 && memchr(p + line, '|', rest - line))
		return "the AWS CLI's table output (--output table); export with --output json or --output yaml";
	if (line && has_byte(p, line, '\t') && p[0] >= 'A' && p[0] <= 'Z')
		return "the AWS CLI's text output (--output text); export with --output json or --output yaml";
	if (is_table_header(p, line))
		return "a table (kubectl get without -o?); export with -o json or -o yaml";
	size_t commas = 0;
	for (size_t k = 0; k < line; k++)
		commas += p[k] == ',';
	if (commas >= 2)
		return "CSV; export with --output json or -o json";
	return NULL;
}

/* ---- the converter ---- */

struct yamlin {
	yaml_parser_t parser;
	const char *origin;
	/* input: head, then fd */
	const char *head;
	char *head_own;
	size_t head_len, head_pos;
	int fd;
	int64_t total, max_size;
	int over_limit, read_errno;
	/* where the events are */
	struct jsonw w;       /* the JSON document being written (its levels, commas, keys) */
	size_t yaml_depth;    /* open YAML collections (the split sequence counts) */
	int split;            /* the document is a sequence: each item is a JSON document */
	size_t docs;          /* JSON documents begun */
	int64_t written;      /* bytes of JSON written */
	struct strmap top_keys; /* the keys of the current JSON document's top level */
	int parser_ok, finished, rc;
};

static int read_handler(void *data, unsigned char *buffer, size_t size, size_t *size_read)
{
	struct yamlin *y = data;
	*size_read = 0;
	if (y->head_pos < y->head_len) {
		size_t n = y->head_len - y->head_pos < size ? y->head_len - y->head_pos : size;
		memcpy(buffer, y->head + y->head_pos, n);
		y->head_pos += n;
		*size_read = n;
		return 1;
	}
	if (y->fd < 0)
		return 1;
	ssize_t n;
	do
		n = read(y->fd, buffer, size);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		y->read_errno = errno;
		return 0;
	}
	y->total += n;
	if (y->total > y->max_size) {
		y->over_limit = 1;
		return 0;
	}
	*size_read = (size_t)n;
	return 1;
}

static struct yamlin *yamlin_new(const char *head, size_t head_len, int fd, int64_t read_before, int64_t max_size,
				 const char *origin, int copy)
{
	struct yamlin *y = xcalloc(1, sizeof *y);
	y->parser_ok = yaml_parser_initialize(&y->parser); /* fails only when memory is short */
	y->origin = origin;
	if (copy && head_len) {
		y->head_own = xmalloc(head_len);
		memcpy(y->head_own, head, head_len);
		y->head = y->head_own;
	} else {
		y->head = head;
	}
	y->head_len = head_len;
	y->fd = fd;
	y->total = read_before;
	y->max_size = max_size;
	if (y->parser_ok)
		yaml_parser_set_input(&y->parser, read_handler, y);
	return y;
}

struct yamlin *yamlin_open(const char *head, size_t head_len, int fd, int64_t read_before, int64_t max_size,
			   const char *origin)
{
	return yamlin_new(head, head_len, fd, read_before, max_size, origin, 1);
}

void yamlin_free(struct yamlin *y)
{
	if (!y)
		return;
	if (y->parser_ok)
		yaml_parser_delete(&y->parser);
	free(y->head_own);
	strmap_release(&y->top_keys);
	free(y);
}

/* Said after a refusal when the text holds "{{": YAML cannot read a template's directives. */
static const char *template_hint(const struct yamlin *y)
{
	size_t n = y->head_len < SNIFF_BYTES ? y->head_len : SNIFF_BYTES;
	for (size_t i = 0; i + 1 < n; i++)
		if (y->head[i] == '{' && y->head[i + 1] == '{')
			return "; it holds '{{': an unrendered template? Render it first (helm template, envsubst, ...)";
	return "";
}

/* Text from the file as a message quotes it: at most max bytes, made visible (buf_add_visible),
 * in b (reset); returns b's text. */
static const char *shown(struct buf *b, const char *s, size_t max)
{
	buf_reset(b);
	char *cut = xstrndup(s, strnlen(s, max)); /* xstrndup copies n bytes: never past the end */
	buf_add_visible(b, cut);
	free(cut);
	return b->s ? b->s : "";
}

/* A refusal at mark: "ORIGIN: line L, column C: WHAT". Sticky: later calls return the code. */
static int fail_at(struct yamlin *y, yaml_mark_t mark, struct buf *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail_at(struct yamlin *y, yaml_mark_t mark, struct buf *err, const char *fmt, ...)
{
	struct buf what = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&what, fmt, ap);
	va_end(ap);
	y->rc = em_err(err, EM_EINPUT, "%s: line %zu, column %zu: %s%s", y->origin, mark.line + 1, mark.column + 1, what.s,
		       template_hint(y));
	buf_release(&what);
	return y->rc;
}

/* "ORIGIN: neither JSON nor YAML: it looks like ...", when the first bytes say what the text is. */
static int refuse_guessed(struct yamlin *y, struct buf *err)
{
	const char *guess = y->written ? NULL : yamlin_guess_format(y->head, y->head_len);
	if (!guess)
		return 0;
	return y->rc = em_err(err, EM_EINPUT, "%s: neither JSON nor YAML: it looks like %s", y->origin, guess);
}

/* libyaml could not read or parse the input. */
static int parser_failed(struct yamlin *y, struct buf *err)
{
	yaml_parser_t *p = &y->parser;
	if (y->over_limit)
		return y->rc = em_err(err, EM_ETOOBIG,
				      "'%s' holds more than the input size limit of %lld bytes (set "
				      "EBSMIGRATE_MAX_INPUT_SIZE to raise it)",
				      y->origin, (long long)y->max_size);
	if (y->read_errno)
		return y->rc = em_err(err, EM_EINPUT, "cannot read '%s': %s", y->origin, strerror(y->read_errno));
	if (refuse_guessed(y, err))
		return y->rc;
	const char *problem = p->problem ? p->problem : "cannot be parsed";
	const char *hint = y->written ? "" : " (nor is it JSON: it does not start with '{' or '[')";
	if (p->error == YAML_READER_ERROR)
		return y->rc = em_err(err, EM_EINPUT, "%s: not valid YAML at byte %zu: %s%s", y->origin,
				      p->problem_offset + 1, problem, hint);
	struct buf context = BUF_INIT;
	if (p->context)
		buf_addf(&context, " %s", p->context);
	y->rc = em_err(err, EM_EINPUT, "%s: not valid YAML at line %zu, column %zu: %s%s%s%s", y->origin,
		       p->problem_mark.line + 1, p->problem_mark.column + 1, problem, context.len ? context.s : "",
		       hint, template_hint(y));
	buf_release(&context);
	return y->rc;
}

enum scalar_kind { SK_STRING, SK_NULL, SK_BOOL, SK_INT, SK_OCT, SK_HEX, SK_FLOAT, SK_INF_NAN };

static int one_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (strcmp(s, *words) == 0)
			return 1;
	return 0;
}

static size_t digits(const char *s, const char *set)
{
	return strspn(s, set);
}

/* YAML 1.2's core schema for a plain scalar (s is NUL-terminated at n). */
static enum scalar_kind resolve_plain(const char *s, size_t n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const bools[] = {"true", "True", "TRUE", "false", "False", "FALSE", NULL};
	static const char *const inf_nan[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
					      "-.INF", ".nan", ".NaN", ".NAN", NULL};
	if (one_of(s, nulls))
		return SK_NULL;
	if (one_of(s, bools))
		return SK_BOOL;
	if (one_of(s, inf_nan))
		return SK_INF_NAN;
	if (n > 2 && s[0] == '0' && s[1] == 'o' && digits(s + 2, "01234567") == n - 2)
		return SK_OCT;
	if (n > 2 && s[0] == '0' && s[1] == 'x' && digits(s + 2, "0123456789abcdefABCDEF") == n - 2)
		return SK_HEX;
	/* [-+]? ( \.[0-9]+ | [0-9]+ ( \.[0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
	const char *p = s + (*s == '-' || *s == '+');
	size_t whole = digits(p, "0123456789"), frac = 0;
	int dot = p[whole] == '.';
	if (dot)
		frac = digits(p + whole + 1, "0123456789");
	if (!whole && !frac)
		return SK_STRING;
	const char *q = p + whole + dot + frac;
	int expo = 0;
	if (*q == 'e' || *q == 'E') {
		const char *e = q + 1 + (q[1] == '-' || q[1] == '+');
		size_t ed = digits(e, "0123456789");
		if (!ed)
			return SK_STRING;
		q = e + ed;
		expo = 1;
	}
	if (*q)
		return SK_STRING;
	return dot || expo ? SK_FLOAT : SK_INT;
}

/* A core-schema number in JSON's grammar: no '+', no leading zeros, digits on both sides of a
 * '.'; the exponent as written. */
static void json_number(struct buf *out, const char *s)
{
	if (*s == '-' || *s == '+') {
		if (*s == '-')
			buf_addc(out, '-');
		s++;
	}
	while (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		s++;
	size_t whole = digits(s, "0123456789");
	if (!whole)
		buf_addc(out, '0');
	buf_add(out, s, whole);
	s += whole;
	if (*s == '.') {
		s++;
		size_t frac = digits(s, "0123456789");
		buf_addc(out, '.');
		if (!frac)
			buf_addc(out, '0');
		buf_add(out, s, frac);
		s += frac;
	}
	buf_adds(out, s); /* the exponent, or nothing */
}

static int refuse_tag(struct yamlin *y, yaml_mark_t mark, const char *tag, struct buf *err)
{
	struct buf b = BUF_INIT;
	fail_at(y, mark, err, "the tag '%s' is not supported in an export", shown(&b, tag, 64));
	buf_release(&b);
	return y->rc;
}

/* A refusal quoting the scalar: "BEFORE'VALUE'AFTER". */
static int refuse_value(struct yamlin *y, const yaml_event_t *ev, const char *before, const char *after,
			struct buf *err)
{
	struct buf b = BUF_INIT;
	fail_at(y, ev->start_mark, err, "%s'%s'%s", before, shown(&b, (const char *)ev->data.scalar.value, 64), after);
	buf_release(&b);
	return y->rc;
}

/* A scalar as a JSON value: its tag, or for a plain one without a tag its core-schema type. */
static int add_scalar(struct yamlin *y, const yaml_event_t *ev, struct buf *err)
{
	const char *s = (const char *)ev->data.scalar.value, *tag = (const char *)ev->data.scalar.tag;
	size_t n = ev->data.scalar.length;
	enum scalar_kind kind = SK_STRING;
	if (!tag) {
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			kind = resolve_plain(s, n);
	} else if (strcmp(tag, "!") != 0 && strcmp(tag, CORE_TAG "str") != 0) {
		static const struct {
			const char *name;
			enum scalar_kind kind;
		} core[] = {{"null", SK_NULL}, {"bool", SK_BOOL}, {"int", SK_INT}, {"float", SK_FLOAT}};
		size_t c = 0, pre = strlen(CORE_TAG);
		while (c < sizeof core / sizeof core[0] &&
		       (strncmp(tag, CORE_TAG, pre) != 0 || strcmp(tag + pre, core[c].name) != 0))
			c++;
		if (c == sizeof core / sizeof core[0])
			return refuse_tag(y, ev->start_mark, tag, err);
		kind = resolve_plain(s, n);
		int fits = kind == core[c].kind || (core[c].kind == SK_INT && (kind == SK_OCT || kind == SK_HEX)) ||
			   (core[c].kind == SK_FLOAT && (kind == SK_INT || kind == SK_INF_NAN));
		if (!fits) {
			char after[40];
			snprintf(after, sizeof after, " is not a valid !!%s", core[c].name);
			return refuse_value(y, ev, "", after, err);
		}
	}
	struct buf num = BUF_INIT;
	switch (kind) {
	case SK_NULL: jsonw_null(&y->w); break;
	case SK_BOOL: jsonw_bool(&y->w, s[0] == 't' || s[0] == 'T'); break;
	case SK_INT:
	case SK_FLOAT: json_number(&num, s); break;
	case SK_OCT:
	case SK_HEX: {
		errno = 0;
		unsigned long long v = strtoull(s + 2, NULL, kind == SK_OCT ? 8 : 16);
		if (errno == ERANGE)
			return refuse_value(y, ev, "the integer ", " is out of range", err);
		buf_addf(&num, "%llu", v);
		break;
	}
	case SK_INF_NAN:
		return refuse_value(y, ev, "", " (a YAML float) has no JSON equivalent", err);
	default:
		/* a YAML "\0" escape ends the string here, as cJSON ends it at a JSON "\u0000" */
		jsonw_str(&y->w, s);
		break;
	}
	if (num.len)
		jsonw_raw(&y->w, num.s, num.len);
	buf_release(&num);
	return 0;
}

/* The next scalar of the innermost JSON level is a member's key. */
static int wants_key(const struct yamlin *y)
{
	return y->w.depth && y->w.open[y->w.depth - 1] == '{' && !y->w.after_key;
}

/* Before a value at depth 0: a JSON document begins (one a line). */
static void document_begins(struct yamlin *y, struct buf *out)
{
	if (y->w.depth)
		return;
	jsonw_init(&y->w, out, JSONW_COMPACT);
	y->docs++;
	strmap_release(&y->top_keys);
}

/* After a value closes at depth 0: the document is complete. */
static void document_ends(struct yamlin *y)
{
	if (!y->w.depth)
		jsonw_layout(&y->w, "\n");
}

static int add_key(struct yamlin *y, const yaml_event_t *ev, struct buf *err)
{
	const char *s = (const char *)ev->data.scalar.value;
	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag && strcmp(s, "<<") == 0)
		return fail_at(y, ev->start_mark, err, "merge keys (<<) are not supported in an export");
	if (y->w.depth == 1) {
		size_t ignored;
		if (strmap_get(&y->top_keys, s, &ignored))
			return refuse_value(y, ev, "the key ",
					    " appears twice in one YAML document (two exports concatenated? separate them "
					    "with a '---' line)",
					    err);
		strmap_put(&y->top_keys, s, 0);
	}
	jsonw_key_any(&y->w, s);
	return 0;
}

static int open_level(struct yamlin *y, const yaml_event_t *ev, int object, struct buf *out, struct buf *err)
{
	if (++y->yaml_depth > YAMLIN_MAX_DEPTH)
		return fail_at(y, ev->start_mark, err, "nesting deeper than %d levels", YAMLIN_MAX_DEPTH);
	const char *tag = (const char *)(object ? ev->data.mapping_start.tag : ev->data.sequence_start.tag);
	if (tag && strcmp(tag, "!") != 0 && strcmp(tag, object ? CORE_TAG "map" : CORE_TAG "seq") != 0)
		return refuse_tag(y, ev->start_mark, tag, err);
	if (wants_key(y))
		return fail_at(y, ev->start_mark, err, "a %s as a mapping key cannot be read as JSON",
			       object ? "mapping" : "sequence");
	if (!y->w.depth && !y->split && !object && y->yaml_depth == 1) {
		y->split = 1; /* yaml-stream: the pages are the documents */
		return 0;
	}
	document_begins(y, out);
	if (object)
		jsonw_object(&y->w);
	else
		jsonw_array(&y->w);
	return 0;
}

static void close_level(struct yamlin *y)
{
	y->yaml_depth--;
	if (!y->w.depth) { /* the split sequence */
		y->split = 0;
		return;
	}
	jsonw_end(&y->w);
	document_ends(y);
}

/* A document that is one plain value: text, not an export. */
static int refuse_scalar_document(struct yamlin *y, const yaml_event_t *ev, struct buf *err)
{
	if (refuse_guessed(y, err))
		return y->rc;
	size_t n = ev->data.scalar.length;
	const char *s = (const char *)ev->data.scalar.value, *nl = memchr(s, '\n', n);
	if (nl)
		n = (size_t)(nl - s);
	struct buf b = BUF_INIT; /* its first line, enough to recognise it */
	fail_at(y, ev->start_mark, err, "neither JSON nor YAML: plain text ('%s'), not an export", shown(&b, s, n < 60 ? n : 60));
	buf_release(&b);
	return y->rc;
}

static int on_event(struct yamlin *y, const yaml_event_t *ev, struct buf *out, struct buf *err)
{
	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		y->finished = 1;
		if (!y->docs)
			return y->rc = em_err(err, EM_EINPUT, "%s: holds no document (only comments or '---'), expected JSON or YAML",
					      y->origin);
		return 0;
	case YAML_ALIAS_EVENT: {
		struct buf b = BUF_INIT;
		fail_at(y, ev->start_mark, err, "aliases (*%s) are not supported in an export",
			shown(&b, (const char *)ev->data.alias.anchor, 64));
		buf_release(&b);
		return y->rc;
	}
	case YAML_MAPPING_START_EVENT: return open_level(y, ev, 1, out, err);
	case YAML_SEQUENCE_START_EVENT: return open_level(y, ev, 0, out, err);
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT: close_level(y); return 0;
	case YAML_SCALAR_EVENT:
		if (wants_key(y))
			return add_key(y, ev, err);
		if (!y->w.depth && !y->split) {
			if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag &&
			    !ev->data.scalar.length)
				return 0; /* an empty document */
			return refuse_scalar_document(y, ev, err);
		}
		document_begins(y, out);
		if (add_scalar(y, ev, err))
			return y->rc;
		document_ends(y);
		return 0;
	default: return 0; /* stream and document starts, document ends */
	}
}

int yamlin_read(struct yamlin *y, struct buf *out, size_t want, struct buf *err)
{
	if (y->rc)
		return y->rc;
	if (!y->parser_ok)
		return y->rc = em_err(err, EM_EIO, "%s: cannot initialise the YAML parser", y->origin);
	size_t start = out->len;
	y->w.b = out; /* the caller's buffer for this call (the document may span calls) */
	while (!y->finished && out->len - start < want) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&y->parser, &ev))
			return parser_failed(y, err);
		size_t before = out->len;
		int rc = on_event(y, &ev, out, err);
		yaml_event_delete(&ev);
		if (rc)
			return rc;
		y->written += (int64_t)(out->len - before);
	}
	return out->len > start ? 1 : 0;
}

int yamlin_to_json(const char *text, size_t len, const char *origin, struct buf *out, struct buf *err)
{
	struct yamlin *y = yamlin_new(text, len, -1, 0, INT64_MAX, origin, 0);
	int rc;
	while ((rc = yamlin_read(y, out, SIZE_MAX, err)) > 0)
		;
	yamlin_free(y);
	return rc;
}
