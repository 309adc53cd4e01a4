/*
 * jsonx.c - read-only helpers over cJSON with errors that name the file and JSON path, a parse
 * arena for trees that are read once and dropped, and a tree-less scan for one member.
 *
 * Entry points: jsonx_parse / jsonx_parse_in (exactly one document), jsonx_docs_next (each
 * document of a concatenated stream in turn), the typed getters (jsonx_want_*, jsonx_int),
 * jsonx_parse_plain_in (a plain subset of JSON into the arena without cJSON, for the stream).
 * Invariant of parsing: no byte of the input is ignored. After a document comes whitespace
 * and then the end (jsonx_parse) or the next document (jsonx_docs_next); anything else is an
 * error with its line and column in the whole text. Documents are parsed one at a time in
 * place, so a stream costs no copy and at most one tree at a time.
 *
 * Invariant of the arena: cJSON's allocation hooks are process-wide, so they are installed once
 * (jsonx_threads_init, before any thread starts) and dispatch on a thread-local `parsing_arena`:
 * set by jsonx_parse_in only while cJSON_ParseWithLengthOpts runs on that thread, malloc/free
 * otherwise. That window is the only state: no arena pointer is ever handed to free(), and no
 * malloc'd pointer to the arena's no-op free, whatever other threads parse meanwhile.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"

/* The arena cJSON allocates in while jsonx_parse_in runs on this thread (see "the parse arena"). */
static _Thread_local struct jsonx_arena *parsing_arena;

void jsonx_line_col(const char *text, size_t off, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

size_t jsonx_skip_ws(const char *text, size_t len, size_t off)
{
	while (off < len && (text[off] == ' ' || text[off] == '\t' || text[off] == '\r' || text[off] == '\n'))
		off++;
	return off;
}

/* The opening quote of the first string holding a raw control byte, scanning from outside any
 * string: only quotes and, inside strings, backslashes and control bytes matter. */
static const unsigned char *find_raw_control(const unsigned char *p, const unsigned char *end, unsigned char *byte)
{
	while (p < end && (p = memchr(p, '"', (size_t)(end - p))) != NULL) {
		const unsigned char *open = p++;
		for (; p < end && *p != '"'; p++) {
			if (*p == '\\') {
				if (++p >= end)
					return NULL;
			} else if (*p < 0x20) {
				if (byte)
					*byte = *p;
				return open;
			}
		}
		p++; /* past the closing quote (or the end) */
	}
	return NULL;
}

size_t jsonx_find_raw_control(const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text;
	const unsigned char *open = find_raw_control(p, p + len, NULL);
	return open ? (size_t)(open - p) : len;
}

void jsonx_add_string_problem(struct buf *b, const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text;
	unsigned char c = 0;
	if (!len || *p != '"' || find_raw_control(p, p + len, &c) != p)
		return;
	if (c == '\n' || c == '\r')
		buf_adds(b, ": the string starting here holds a raw line break (is its closing quote missing?)");
	else if (c == '\t')
		buf_adds(b, ": the string starting here holds a raw tab, which JSON writes as \\t");
	else
		buf_addf(b, ": the string starting here holds the raw control byte 0x%02x, which JSON writes as \\u%04x", c, c);
}

/* cJSON_ParseWithLengthOpts, holding strings to RFC 8259: a raw control byte inside one (cJSON
 * takes it) fails at the string's opening quote, as the error cJSON would have given had it
 * come first. (Deleting a refused tree is a no-op while an arena's window is open: it goes at
 * the arena's next reset.) */
static cJSON *parse_checked(const char *text, size_t len, const char **end)
{
	cJSON *j = cJSON_ParseWithLengthOpts(text, len, end, 0);
	size_t stop = *end && *end >= text ? (size_t)(*end - text) : 0;
	size_t bad = jsonx_find_raw_control(text, stop < len ? stop : len);
	if (bad >= stop)
		return j;
	cJSON_Delete(j);
	*end = text + bad;
	return NULL;
}

int jsonx_syntax_error(const char *text, size_t len, size_t off, const char *origin, struct buf *err)
{
	size_t line, col;
	jsonx_line_col(text, off, &line, &col);
	struct buf why = BUF_INIT;
	jsonx_add_string_problem(&why, text + off, len - off);
	int rc = em_err(err, EM_EINPUT, "%s: not valid JSON at line %zu, column %zu%s", origin, line, col,
			why.len ? why.s : "");
	buf_release(&why);
	return rc;
}

/* Parses the one JSON value that starts at text[*off] and moves *off past it (and past the
 * whitespace after it). The message on failure counts lines from the start of text, so a
 * second document's errors point into the file, not into the document. */
static cJSON *parse_one(const char *text, size_t len, size_t *off, const char *origin, struct buf *err)
{
	const char *end = NULL;
	cJSON *j = parse_checked(text + *off, len - *off, &end);
	size_t stop = end && end >= text + *off ? (size_t)(end - text) : *off;
	if (stop > len)
		stop = len;
	if (j) {
		*off = jsonx_skip_ws(text, len, stop);
		return j;
	}
	jsonx_syntax_error(text, len, stop, origin, err);
	return NULL;
}

cJSON *jsonx_parse(const char *text, size_t len, const char *origin, struct buf *err)
{
	if (jsonx_skip_ws(text, len, 0) == len) {
		em_err(err, EM_EINPUT, "%s: empty file, expected JSON", origin);
		return NULL;
	}
	size_t off = 0;
	cJSON *j = parse_one(text, len, &off, origin, err);
	if (j && off < len) {
		/* Trailing data is never ignored: it is a second document or garbage, and either way
		 * the caller asked for one document. */
		size_t line, col;
		jsonx_line_col(text, off, &line, &col);
		em_err(err, EM_EINPUT, "%s: unexpected data after the JSON document at line %zu, column %zu", origin, line,
		       col);
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

void jsonx_docs_init(struct jsonx_docs *d, const char *text, size_t len, const char *origin, struct jsonx_arena *arena)
{
	d->text = text;
	d->len = len;
	d->off = 0;
	d->count = 0;
	d->origin = origin;
	d->arena = arena;
}

static cJSON *parse_one_in(struct jsonx_arena *a, const char *text, size_t len, size_t *off, const char *origin,
			   struct buf *err);

int jsonx_docs_next(struct jsonx_docs *d, cJSON **out, struct buf *err)
{
	*out = NULL;
	if (d->count == 0)
		d->off = jsonx_skip_ws(d->text, d->len, 0);
	if (d->off >= d->len) {
		if (d->count)
			return 0;
		return em_err(err, EM_EINPUT, "%s: empty file, expected JSON", d->origin);
	}
	cJSON *j = d->arena ? parse_one_in(d->arena, d->text, d->len, &d->off, d->origin, err)
			    : parse_one(d->text, d->len, &d->off, d->origin, err);
	if (!j)
		return EM_EINPUT;
	d->count++;
	*out = j;
	return 1;
}

/* ---- the parse arena ---- */

struct jsonx_arena_chunk {
	struct jsonx_arena_chunk *next;
	size_t cap, used;
	max_align_t data[];
};

/* A 500-object Kubernetes list page builds a tree of a few MiB. */
#define ARENA_CHUNK (1u << 20)

static void *arena_alloc(struct jsonx_arena *a, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	struct jsonx_arena_chunk *c = a->cur;
	while (c && c->cap - c->used < n) {
		c = c->next; /* kept from before the last reset: empty */
		if (c)
			a->cur = c;
	}
	if (!c) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		c = xmalloc(offsetof(struct jsonx_arena_chunk, data) + cap);
		c->cap = cap;
		c->used = 0;
		c->next = NULL;
		if (a->cur) {
			/* append after cur; chunks after it (too small for n) stay in the chain */
			c->next = a->cur->next;
			a->cur->next = c;
		} else {
			a->first = c;
		}
		a->cur = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static void *CJSON_CDECL arena_malloc(size_t n)
{
	return parsing_arena ? arena_alloc(parsing_arena, n) : malloc(n);
}

static void CJSON_CDECL arena_free(void *p)
{
	if (!parsing_arena) /* inside the window: freed with the arena */
		free(p);
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static void install_hooks(void)
{
	cJSON_Hooks hooks = {arena_malloc, arena_free};
	cJSON_InitHooks(&hooks);
}

void jsonx_threads_init(void)
{
	pthread_once(&hooks_once, install_hooks);
}

/* What a reset keeps for the next tree: a list page's worth, not a whole large export's. */
#define ARENA_KEEP (16u << 20)

void jsonx_arena_reset(struct jsonx_arena *a)
{
	size_t kept = 0;
	for (struct jsonx_arena_chunk *c = a->first; c; c = c->next) {
		c->used = 0;
		kept += c->cap;
		if (kept >= ARENA_KEEP) {
			struct jsonx_arena_chunk *rest = c->next;
			c->next = NULL;
			while (rest) {
				struct jsonx_arena_chunk *next = rest->next;
				free(rest);
				rest = next;
			}
		}
	}
	a->cur = a->first;
}

void jsonx_arena_release(struct jsonx_arena *a)
{
	struct jsonx_arena_chunk *c = a->first;
	while (c) {
		struct jsonx_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->first = a->cur = NULL;
}

cJSON *jsonx_parse_in(struct jsonx_arena *a, const char *text, size_t len, const char *origin, struct buf *err)
{
	jsonx_threads_init();
	parsing_arena = a;
	cJSON *j = jsonx_parse(text, len, origin, err);
	parsing_arena = NULL;
	return j;
}

static cJSON *parse_one_in(struct jsonx_arena *a, const char *text, size_t len, size_t *off, const char *origin,
			   struct buf *err)
{
	jsonx_threads_init();
	parsing_arena = a;
	cJSON *j = parse_one(text, len, off, origin, err);
	parsing_arena = NULL;
	return j;
}

cJSON *jsonx_parse_value_in(struct jsonx_arena *a, const char *text, size_t len, const char **end)
{
	*end = NULL;
	if (!a)
		return parse_checked(text, len, end);
	jsonx_threads_init();
	parsing_arena = a;
	cJSON *j = parse_checked(text, len, end);
	parsing_arena = NULL;
	return j;
}

/* ---- a plain subset without cJSON ----
 *
 * Exports are mostly objects of plain strings, small integers and literals; cJSON spends most of
 * its time on what they do not use (escapes, number syntax via strtod and the locale, three
 * strncmp calls per value). jsonx_parse_plain_in reads only that subset and builds the tree
 * cJSON_ParseWithLengthOpts would (same types, strings, numbers, links, head->prev = tail), in
 * the arena. It declines (NULL) on anything else: a string with a backslash or a byte below 0x20, a
 * number that is not 1-15 plain digits, nesting deeper than PLAIN_MAX_DEPTH, the end of the text
 * before the value ends, or any syntax error; the caller then lets cJSON parse it (and report
 * what is wrong). What it accepts, cJSON accepts the same way: fuzz_jsonx_plain compares them. */

#define PLAIN_MAX_DEPTH 16

struct plain {
	struct jsonx_arena *a;
	const unsigned char *p, *end;
	int depth;
};

/* cJSON skips every byte up to ' ' as whitespace */
static void plain_ws(struct plain *x)
{
	while (x->p < x->end && *x->p <= ' ')
		x->p++;
}

static cJSON *plain_item(struct plain *x)
{
	cJSON *c = arena_alloc(x->a, sizeof *c);
	memset(c, 0, sizeof *c);
	return c;
}

/* The string at x->p (its opening quote) into the arena. */
static int plain_string(struct plain *x, char **out)
{
	const unsigned char *start = x->p + 1, *p = start;
	while (p < x->end && *p != '"') {
		if (*p == '\\' || *p < 0x20)
			return -1;
		p++;
	}
	if (p >= x->end)
		return -1;
	size_t n = (size_t)(p - start);
	char *o = arena_alloc(x->a, n + 1);
	memcpy(o, start, n);
	o[n] = '\0';
	*out = o;
	x->p = p + 1;
	return 0;
}

/* 1-15 digits (exact in a double, as strtod reads them), not followed by more number syntax. */
static int plain_number(struct plain *x, cJSON *item)
{
	const unsigned char *p = x->p;
	uint64_t v = 0;
	int digits = 0;
	while (p < x->end && *p >= '0' && *p <= '9') {
		if (++digits > 15)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
		p++;
	}
	if (p >= x->end || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-')
		return -1;
	item->type = cJSON_Number;
	item->valuedouble = (double)v;
	item->valueint = v >= (uint64_t)INT_MAX ? INT_MAX : (int)v;
	x->p = p;
	return 0;
}

static int plain_value(struct plain *x, cJSON *item);

/* An object or array at x->p: members (with names) or elements, until close. */
static int plain_container(struct plain *x, cJSON *item, int object)
{
	if (++x->depth > PLAIN_MAX_DEPTH)
		return -1;
	const unsigned char close = object ? '}' : ']';
	cJSON *head = NULL, *tail = NULL;
	x->p++;
	plain_ws(x);
	if (x->p < x->end && *x->p == close) {
		x->p++;
	} else {
		for (;;) {
			cJSON *c = plain_item(x);
			if (!head) {
				head = c;
			} else {
				tail->next = c;
				c->prev = tail;
			}
			tail = c;
			if (object) {
				if (x->p >= x->end || *x->p != '"' || plain_string(x, &c->string))
					return -1;
				plain_ws(x);
				if (x->p >= x->end || *x->p != ':')
					return -1;
				x->p++;
				plain_ws(x);
			}
			if (plain_value(x, c))
				return -1;
			plain_ws(x);
			if (x->p >= x->end)
				return -1;
			if (*x->p == ',') {
				x->p++;
				plain_ws(x);
				continue;
			}
			if (*x->p != close)
				return -1;
			x->p++;
			break;
		}
	}
	x->depth--;
	if (head)
		head->prev = tail;
	item->type = object ? cJSON_Object : cJSON_Array;
	item->child = head;
	return 0;
}

static int plain_literal(struct plain *x, const char *word, size_t n)
{
	if ((size_t)(x->end - x->p) < n || memcmp(x->p, word, n) != 0)
		return -1;
	x->p += n;
	return 0;
}

static int plain_value(struct plain *x, cJSON *item)
{
	if (x->p >= x->end)
		return -1;
	switch (*x->p) {
	case 'n':
		item->type = cJSON_NULL;
		return plain_literal(x, "null", 4);
	case 'f':
		item->type = cJSON_False;
		return plain_literal(x, "false", 5);
	case 't':
		item->type = cJSON_True;
		item->valueint = 1;
		return plain_literal(x, "true", 4);
	case '"':
		item->type = cJSON_String;
		return plain_string(x, &item->valuestring);
	case '{':
		return plain_container(x, item, 1);
	case '[':
		return plain_container(x, item, 0);
	default:
		return *x->p >= '0' && *x->p <= '9' ? plain_number(x, item) : -1;
	}
}

cJSON *jsonx_parse_plain_in(struct jsonx_arena *a, const char *text, size_t len, const char **end)
{
	*end = NULL;
	if (!len || (text[0] != '{' && text[0] != '['))
		return NULL;
	struct plain x = {a, (const unsigned char *)text, (const unsigned char *)text + len, 0};
	cJSON *root = plain_item(&x);
	if (plain_value(&x, root))
		return NULL; /* what it took of the arena goes at the next reset */
	*end = (const char *)x.p;
	return root;
}

const cJSON *jsonx_get(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

const char *jsonx_str(const cJSON *obj, const char *key)
{
	const cJSON *v = jsonx_get(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *jsonx_path(const cJSON *obj, const char *dotted)
{
	char key[128];
	const char *p = dotted;
	while (obj && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof key)
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		obj = jsonx_get(obj, key);
		p += n + (dot ? 1 : 0);
	}
	return obj;
}

const char *jsonx_path_str(const cJSON *obj, const char *dotted)
{
	const cJSON *v = jsonx_path(obj, dotted);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int jsonx_int(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out, int *present,
	      const char *origin, const char *path, struct buf *err)
{
	const cJSON *v = jsonx_get(obj, key);
	*out = 0;
	if (present)
		*present = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v))
		return em_err(err, EM_EINPUT, "%s: %s.%s: expected an integer, got %s", origin, path, key,
			      cJSON_IsString(v) ? "a string" : "a non-number");
	double d = v->valuedouble;
	if (d != floor(d) || !isfinite(d))
		return em_err(err, EM_EINPUT, "%s: %s.%s: expected an integer, got %g", origin, path, key, d);
	if (d < (double)min || d > (double)max)
		return em_err(err, EM_EINPUT, fabs(d) < 1e18 ? "%s: %s.%s: %.0f is outside %lld..%lld" : "%s: %s.%s: %g is outside %lld..%lld",
			      origin, path, key, d, (long long)min, (long long)max);
	*out = (int64_t)d;
	if (present)
		*present = 1;
	return 0;
}

const char *jsonx_type_name(const cJSON *v)
{
	static const struct {
		int type;
		const char *name;
	} names[] = {
		{cJSON_String, "a string"}, {cJSON_Number, "a number"}, {cJSON_False, "a boolean"}, {cJSON_True, "a boolean"},
		{cJSON_NULL, "null"},       {cJSON_Array, "an array"},  {cJSON_Object, "an object"},
	};
	if (!v)
		return "nothing";
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if ((v->type & 0xFF) == names[i].type) /* the cJSON_Is* test: the low byte is the type */
			return names[i].name;
	return "an invalid value";
}

/* Joins the message path: "PATH.KEY", or KEY alone when path is empty. */
static int wrong_type(struct buf *err, const char *origin, const char *path, const char *key, size_t key_len,
		      const char *want, const cJSON *got)
{
	return em_err(err, EM_EINPUT, "%s: %s%s%.*s: must be %s, got %s", origin, path, *path ? "." : "", (int)key_len,
		      key, want, jsonx_type_name(got));
}

/* obj's member key when it has cJSON type `type` (cJSON_String...); NULL when absent or null;
 * any other type is an error naming what was wanted. */
static int want_type(const cJSON *obj, const char *key, int type, const char *want, const cJSON **out,
		     const char *origin, const char *path, struct buf *err)
{
	const cJSON *v = jsonx_get(obj, key);
	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if ((v->type & 0xFF) != type)
		return wrong_type(err, origin, path, key, strlen(key), want, v);
	*out = v;
	return 0;
}

int jsonx_want_str(const cJSON *obj, const char *key, const char **out, const char *origin, const char *path,
		   struct buf *err)
{
	const cJSON *v;
	int rc = want_type(obj, key, cJSON_String, "a string", &v, origin, path, err);
	*out = v ? v->valuestring : NULL;
	return rc;
}

int jsonx_want_path_str(const cJSON *obj, const char *dotted, const char **out, const char *origin,
			const char *path, struct buf *err)
{
	*out = NULL;
	const char *p = dotted;
	char key[128];
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof key)
			return 0;
		memcpy(key, p, n);
		key[n] = '\0';
		const cJSON *v = jsonx_get(obj, key);
		if (!v || cJSON_IsNull(v))
			return 0;
		size_t upto = (size_t)(p - dotted) + n;
		if (dot && !cJSON_IsObject(v))
			return wrong_type(err, origin, path, dotted, upto, "an object", v);
		if (!dot && !cJSON_IsString(v))
			return wrong_type(err, origin, path, dotted, upto, "a string", v);
		if (!dot)
			*out = v->valuestring;
		obj = v;
		p += n + (dot ? 1 : 0);
	}
	return 0;
}

int jsonx_want_array(const cJSON *obj, const char *key, const cJSON **out, const char *origin, const char *path,
		     struct buf *err)
{
	return want_type(obj, key, cJSON_Array, "an array", out, origin, path, err);
}

int jsonx_bool(const cJSON *obj, const char *key, int def)
{
	const cJSON *v = jsonx_get(obj, key);
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	return def;
}

/* ---- a tree-less scan for one member ---- */

struct scan {
	const char *p, *end;
};

static void ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
		s->p++;
}

/* At a '"': returns the raw string bounds (without quotes), advancing past it. */
static int scan_string(struct scan *s, const char **b, const char **e)
{
	if (s->p >= s->end || *s->p != '"')
		return -1;
	s->p++;
	*b = s->p;
	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\\')
			s->p++;
		s->p++;
	}
	if (s->p >= s->end)
		return -1;
	*e = s->p;
	s->p++;
	return 0;
}

/* Skips any value. */
static int skip_value(struct scan *s)
{
	ws(s);
	if (s->p >= s->end)
		return -1;
	if (*s->p == '"') {
		const char *b, *e;
		return scan_string(s, &b, &e);
	}
	if (*s->p == '{' || *s->p == '[') {
		int depth = 0;
		while (s->p < s->end) {
			char c = *s->p;
			if (c == '"') {
				const char *b, *e;
				if (scan_string(s, &b, &e))
					return -1;
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if (c == '}' || c == ']') {
				if (--depth == 0) {
					s->p++;
					return 0;
				}
			}
			s->p++;
		}
		return -1;
	}
	while (s->p < s->end && *s->p != ',' && *s->p != '}' && *s->p != ']')
		s->p++;
	return 0;
}

static int key_is(const char *b, const char *e, const char *want)
{
	size_t n = strlen(want);
	return (size_t)(e - b) == n && memcmp(b, want, n) == 0;
}

/* Walks the members of the object at s->p; returns 1 with s->p at the value of `key`. */
static int find_member(struct scan *s, const char *key)
{
	ws(s);
	if (s->p >= s->end || *s->p != '{')
		return -1;
	s->p++;
	for (;;) {
		ws(s);
		if (s->p < s->end && *s->p == '}')
			return 0;
		const char *b, *e;
		if (scan_string(s, &b, &e))
			return -1;
		ws(s);
		if (s->p >= s->end || *s->p != ':')
			return -1;
		s->p++;
		ws(s);
		if (key_is(b, e, key))
			return 1;
		if (skip_value(s))
			return -1;
		ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		return s->p < s->end && *s->p == '}' ? 0 : -1;
	}
}

int jsonx_scan_member_str(const char *text, size_t len, const char *obj, const char *key, char **out)
{
	struct scan s = {text, text + len};
	*out = NULL;
	int r = find_member(&s, obj);
	if (r <= 0)
		return r;
	r = find_member(&s, key);
	if (r <= 0)
		return r;
	const char *b, *e;
	if (scan_string(&s, &b, &e))
		return 0; /* not a string (null): absent */
	char *o = xmalloc((size_t)(e - b) + 1), *q = o;
	for (const char *p = b; p < e; p++) {
		if (*p == '\\' && p + 1 < e && (p[1] == '"' || p[1] == '\\' || p[1] == '/'))
			p++;
		*q++ = *p;
	}
	*q = '\0';
	*out = o;
	return 1;
}
