/*
 * jsonx_stream.c - reads a JSON export (AWS CLI, kubectl) element by element instead of as one
 * tree: the elements of chosen top-level arrays ("Volumes", "items") are handed over one at a
 * time, each parsed into the caller's arena (by jsonx_parse_plain_in when it is plain JSON, else
 * by cJSON; the trees are the same), so memory holds a window of the file and one element, not
 * the file and its whole tree.
 *
 * Entry points: jsonx_stream_open (a file, "-" for standard input; a YAML file is read through
 * yamlin as the JSON it stands for), jsonx_stream_init_text (a JSON text in memory),
 * jsonx_stream_next, jsonx_stream_root, jsonx_stream_close.
 *
 * Invariants: every byte is read and checked as jsonx_docs_next would (strings as RFC 8259 has
 * them: a raw control byte inside one is an error at its opening quote): a document that is not an
 * object is parsed whole; an object's members outside the streamed arrays are parsed whole and
 * collected in the document's root (a streamed array appears there empty); what follows a
 * document is whitespace and then the end or the next document. Syntax errors give the line and
 * column in the whole file, as a whole-document parse would (cJSON's own position inside an
 * element; at the end of a truncated file, its last byte). The window is refilled only at the
 * edge of what is scanned; positions while scanning are offsets from s->pos, so the move that
 * drops consumed bytes never invalidates them. The input size limit of em_read_input applies.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/yamlin.h"

/* Read size: large enough that read(2) calls are few, small against the RSS targets. */
#define STREAM_CHUNK (1u << 20)
/* What open reads to tell JSON from YAML (more only while it sees white space). */
#define FORMAT_PEEK (64u << 10)

enum { ST_BETWEEN, ST_MEMBER, ST_AFTER_MEMBER, ST_ELEMENT, ST_AFTER_ELEMENT, ST_DONE };

static void stream_reset_state(struct jsonx_stream *s)
{
	s->state = ST_BETWEEN;
	s->line = 1;
	s->col = 1;
}

void jsonx_stream_init_text(struct jsonx_stream *s, const char *text, size_t len, const char *origin,
			    struct jsonx_arena *arena, const char *const *keys)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	s->text = text;
	s->len = len;
	s->eof = 1;
	s->origin = origin;
	s->arena = arena;
	s->keys = keys;
	stream_reset_state(s);
}

static int fill(struct jsonx_stream *s, struct buf *err);
static int byte_at(struct jsonx_stream *s, size_t i, int *rc, struct buf *err);
static int is_json_ws(int c);

/* JSON or YAML, by the first byte after white space and a byte order mark (yamlin_is_json, which
 * also wants the byte after it: "{{" is a template). A YAML file's bytes read so far go to the
 * converter, and from then on the window fills with the JSON it writes. Nothing is consumed
 * while looking (YAML's first line keeps its indentation, messages their line numbers), so
 * after a window of white space the file is taken for JSON, whose reader skips the rest
 * without holding it. */
static int open_format(struct jsonx_stream *s, struct buf *err)
{
	int rc = 0, c;
	size_t i = 0, chunk = s->chunk;
	s->chunk = FORMAT_PEEK; /* the first bytes tell: no 1 MiB window before the reading starts */
	if (byte_at(s, 0, &rc, err) == 0xef && byte_at(s, 1, &rc, err) == 0xbb && byte_at(s, 2, &rc, err) == 0xbf)
		i = 3;
	while (is_json_ws(c = byte_at(s, i, &rc, err)) && ++i < STREAM_CHUNK)
		;
	if (c >= 0 && i < STREAM_CHUNK)
		c = byte_at(s, i + 1, &rc, err);
	s->chunk = chunk;
	if (c < -1)
		return rc;
	if (i >= STREAM_CHUNK || yamlin_is_json(s->text, s->len))
		return 0;
	s->yaml = yamlin_open(s->text, s->len, s->fd, s->total, s->max_size, s->origin);
	s->len = s->pos = 0;
	s->eof = 0; /* the peek may have met the file's end: the converter's end comes after its JSON */
	return 0;
}

int jsonx_stream_open(struct jsonx_stream *s, const char *path, struct jsonx_arena *arena, const char *const *keys,
		      struct buf *err)
{
	jsonx_stream_init_text(s, NULL, 0, path, arena, keys);
	s->eof = 0;
	int rc = em_max_input_size(&s->max_size, err);
	if (rc)
		return rc;
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return em_err(err, errno == ENOENT ? EM_ENOTFOUND : EM_EINPUT, "cannot read '%s': %s", path,
			      strerror(errno));
	s->fd = fd;
	struct stat st;
	if (fstat(fd, &st) != 0)
		return em_err(err, EM_EINPUT, "cannot read '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return em_err(err, EM_EINPUT, "cannot read '%s': %s", path, strerror(EISDIR));
	if (S_ISREG(st.st_mode) && (int64_t)st.st_size > s->max_size)
		return em_err(err, EM_ETOOBIG,
			      "'%s' is %lld bytes, over the input size limit of %lld (set EBSMIGRATE_MAX_INPUT_SIZE to raise it)",
			      path, (long long)st.st_size, (long long)s->max_size);
	return open_format(s, err);
}

void jsonx_stream_close(struct jsonx_stream *s)
{
	if (s->fd > 0)
		close(s->fd);
	s->fd = -1;
	free(s->own);
	s->own = NULL;
	cJSON_Delete(s->element);
	s->element = NULL;
	cJSON_Delete(s->root);
	s->root = NULL;
	yamlin_free(s->yaml);
	s->yaml = NULL;
	buf_release(&s->yaml_json);
}

const cJSON *jsonx_stream_root(const struct jsonx_stream *s)
{
	return s->root;
}

/* Moves the line and column of text[0] past n bytes. */
static void count_lines(struct jsonx_stream *s, size_t n)
{
	/* one counting pass instead of a memchr call per line (pretty-printed exports have a line
	 * every 25 bytes or so), eight bytes at a time: a byte of x is zero exactly where the
	 * text has a '\n', and each such byte adds 1 to its lane of acc (at most 255
	 * rounds before the lanes are added up) */
	const char *p = s->text;
	size_t lines = 0, i = 0;
	const uint64_t ones = 0x0101010101010101ULL, low7 = 0x7f7f7f7f7f7f7f7fULL;
	const uint64_t lanes16 = 0x00ff00ff00ff00ffULL;
	while (i + 8 <= n) {
		uint64_t acc = 0;
		for (int round = 0; round < 255 && i + 8 <= n; round++, i += 8) {
			uint64_t x;
			memcpy(&x, p + i, 8);
			x ^= ones * '\n';
			acc += (~(((x & low7) + low7) | x | low7)) >> 7;
		}
		uint64_t pairs = (acc & lanes16) + ((acc >> 8) & lanes16);
		lines += (size_t)((pairs * 0x0001000100010001ULL) >> 48);
	}
	for (; i < n; i++)
		lines += p[i] == '\n';
	if (!lines) {
		s->col += n;
		return;
	}
	size_t last = n - 1;
	while (p[last] != '\n')
		last--;
	s->line += lines;
	s->col = n - last;
}

/* fill for a YAML file: at least chunk bytes of the JSON yamlin writes (one event's text may be
 * more), after text[len]. */
static int fill_from_yaml(struct jsonx_stream *s, size_t chunk, struct buf *err)
{
	buf_reset(&s->yaml_json);
	int r = yamlin_read(s->yaml, &s->yaml_json, chunk, err);
	if (r <= 0) {
		s->eof = r == 0;
		return r;
	}
	if (s->cap - s->len < s->yaml_json.len) {
		s->cap = s->len + (s->yaml_json.len > chunk ? s->yaml_json.len : chunk);
		s->own = xrealloc(s->own, s->cap);
	}
	memcpy(s->own + s->len, s->yaml_json.s, s->yaml_json.len);
	s->len += s->yaml_json.len;
	s->text = s->own;
	return 1;
}

/* Reads more input after text[len]: 1 when bytes were added, 0 at the end, or an error. Bytes
 * before s->pos are dropped first (their lines counted). */
static int fill(struct jsonx_stream *s, struct buf *err)
{
	if (s->eof)
		return 0;
	if (s->pos > 1) { /* the last byte read stays: an error at the end of the input points at it */
		size_t drop = s->pos - 1;
		count_lines(s, drop);
		memmove(s->own, s->own + drop, s->len - drop);
		s->len -= drop;
		s->pos = 1;
	}
	size_t chunk = s->chunk ? s->chunk : STREAM_CHUNK;
	if (s->yaml)
		return fill_from_yaml(s, chunk, err);
	if (s->cap - s->len < chunk) {
		s->cap = s->len + chunk;
		s->own = xrealloc(s->own, s->cap);
	}
	s->text = s->own;
	ssize_t n;
	do
		n = read(s->fd, s->own + s->len, s->cap - s->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return em_err(err, EM_EINPUT, "cannot read '%s': %s", s->origin, strerror(errno));
	if (n == 0) {
		s->eof = 1;
		return 0;
	}
	s->len += (size_t)n;
	s->total += (int64_t)n;
	if (s->total > s->max_size)
		return em_err(err, EM_ETOOBIG,
			      "'%s' holds more than the input size limit of %lld bytes (set EBSMIGRATE_MAX_INPUT_SIZE "
			      "to raise it)",
			      s->origin, (long long)s->max_size);
	return 1;
}

/* The byte at s->pos + i, reading more if needed: 0..255, -1 at the end, or < -1 (error; code
 * in *rc). */
static int byte_at(struct jsonx_stream *s, size_t i, int *rc, struct buf *err)
{
	while (s->pos + i >= s->len) {
		int r = fill(s, err);
		if (r <= 0) {
			*rc = r;
			return r < 0 ? -2 : -1;
		}
	}
	return (unsigned char)s->text[s->pos + i];
}

/* cJSON skips every byte up to ' ' (control characters too) where whitespace may be; so does the
 * stream, or it would refuse what a whole-document parse accepts. */
static int is_ws(int c)
{
	return c >= 0 && c <= ' ';
}

static int is_json_ws(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Skips whitespace at s->pos; returns the next byte as byte_at does. */
static int skip_ws(struct jsonx_stream *s, int *rc, struct buf *err)
{
	for (;;) {
		int c = byte_at(s, 0, rc, err);
		if (!is_ws(c))
			return c;
		s->pos++;
	}
}

/* Skips white space before the first or next member of an object (close '}') or element of an
 * array (close ']'): *c is the byte there. 1 when it closes the object or array while empty
 * (then consumed), 0 when an item (or something else) follows, or a negative EM_E* code. */
static inline int skip_to_item(struct jsonx_stream *s, int close, int *c, struct buf *err)
{
	int rc = 0;
	*c = skip_ws(s, &rc, err);
	if (*c < -1)
		return rc;
	if (*c == close && s->first) {
		s->pos++;
		return 1;
	}
	return 0;
}

/* The top-level object has been read: the event for it, and the stream is between documents. */
static inline int document_read(struct jsonx_stream *s, struct jsonx_event *ev)
{
	s->state = ST_BETWEEN;
	ev->value = s->root;
	ev->doc = s->docs;
	return JSONX_DOCUMENT;
}

/* "not valid JSON" at s->pos + i, counted in the whole file (with what is wrong when a string
 * there holds a raw control byte, as jsonx_syntax_error says it). Past the end it is the last
 * byte, where cJSON puts an error at the end of its input. */
static int syntax_error(struct jsonx_stream *s, size_t i, struct buf *err)
{
	int ignored;
	struct buf read_err = BUF_INIT;
	byte_at(s, i, &ignored, &read_err); /* the byte pointed at read in, so "the end" is the file's */
	buf_release(&read_err);
	size_t off = s->pos + i;
	if (off >= s->len && off > 0)
		off = s->len - 1;
	size_t line = s->line, col = s->col;
	const char *p = s->text, *end = s->text + off, *nl;
	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		line++;
		col = 1;
		p = nl + 1;
	}
	col += (size_t)(end - p);
	struct buf why = BUF_INIT;
	jsonx_add_string_problem(&why, s->text + off, s->len - off);
	int rc = em_err(err, EM_EINPUT, "%s: not valid JSON at line %zu, column %zu%s", s->origin, line, col,
			why.len ? why.s : "");
	buf_release(&why);
	return rc;
}

/* The end (offset from s->pos) of the value that starts at s->pos: past its closing bracket or
 * quote, or at the byte that ends a number or literal. A value cut off by the end of the input
 * ends there; cJSON then finds what is wrong with it. */
static int scan_value(struct jsonx_stream *s, size_t *end, struct buf *err)
{
	size_t i = 0;
	int depth = 0;
	for (;;) {
		if (s->pos + i >= s->len) {
			int r = fill(s, err);
			if (r < 0)
				return r;
			if (r == 0)
				break;
		}
		const char *p = s->text + s->pos + i, *stop = s->text + s->len;
		char c = *p;
		if (c == '"') {
			/* to the closing quote, escapes skipped; refill and resume if the window ends */
			size_t j = i + 1;
			for (;;) {
				p = s->text + s->pos + j;
				stop = s->text + s->len;
				while (p < stop && *p != '"' && *p != '\\')
					p++;
				j = (size_t)(p - (s->text + s->pos));
				if (p + 1 < stop && *p == '\\') {
					j += 2;
					continue;
				}
				if (p < stop && *p == '"')
					break;
				int r = fill(s, err); /* at the end of the window, or at a '\\' before it */
				if (r < 0)
					return r;
				if (r == 0) {
					*end = s->len - s->pos;
					return 0;
				}
			}
			i = j + 1;
			if (depth == 0)
				break;
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				break;
			if (--depth == 0) {
				i++;
				break;
			}
		} else if (depth == 0 && (c == ',' || is_ws((unsigned char)c))) {
			break;
		}
		i++;
	}
	*end = i;
	return 0;
}

/* Parses the value scan_value found at text[pos, pos + n) (into the arena or malloc). cJSON is
 * given the rest of the window, not just n bytes: an invalid value then fails where a parse of
 * the whole document would, which may be past the bytes the scan took for it. */
static cJSON *parse_span(struct jsonx_stream *s, size_t n, struct jsonx_arena *arena, int doc_start, struct buf *err)
{
	/* cJSON skips a UTF-8 byte order mark at the start of what it is given: right before a
	 * document (as a whole-file parse does), an error anywhere else */
	if (!doc_start && n >= 3 && memcmp(s->text + s->pos, "\xef\xbb\xbf", 3) == 0) {
		syntax_error(s, 0, err);
		return NULL;
	}
	for (;;) {
		const char *start = s->text + s->pos, *stop = NULL;
		size_t avail = s->len - s->pos;
		cJSON *j = jsonx_parse_value_in(arena, start, avail, &stop);
		size_t at = stop && stop >= start ? (size_t)(stop - start) : 0;
		if (j && at == n)
			return j;
		if (j && !arena)
			cJSON_Delete(j);
		/* cJSON stopped at the end of the window (where it puts errors past its input): read
		 * on and parse again, so the error is where a whole-file parse puts it. What stops the
		 * reading (a read error, the size limit, a YAML file's refusal) is the error then. */
		int more = !j && at + 2 >= avail ? fill(s, err) : 0;
		if (more < 0)
			return NULL;
		if (!more) {
			syntax_error(s, at, err);
			return NULL;
		}
	}
}

/* The fast path for an object or array element: the plain parser (with an arena) or cJSON finds
 * its end itself (no scan first).
 * NULL when it fails, which is also what an element cut off by the end of the window does (an
 * object or array always fails when cut, unlike a number); the caller then scans and retries. */
static cJSON *parse_in_window(struct jsonx_stream *s, size_t *n)
{
	const char *start = s->text + s->pos, *stop = NULL;
	cJSON *j = s->arena ? jsonx_parse_plain_in(s->arena, start, s->len - s->pos, &stop) : NULL;
	if (!j)
		j = jsonx_parse_value_in(s->arena, start, s->len - s->pos, &stop);
	if (j && stop && stop > start) {
		*n = (size_t)(stop - start);
		return j;
	}
	if (j && !s->arena)
		cJSON_Delete(j);
	return NULL;
}

static int is_streamed(const struct jsonx_stream *s, const char *key)
{
	for (const char *const *k = s->keys; k && *k; k++)
		if (strcmp(*k, key) == 0)
			return 1;
	return 0;
}

/* A streamed key given twice in one document: a tree keeps the first and ignores the second, the
 * stream would deliver both arrays' elements. Two readings of one file must not differ, and no
 * tool writes an export so, so it is bad input. Found by fuzz_jsonx_stream. */
static int duplicate_streamed_key(struct jsonx_stream *s, const char *key, struct buf *err)
{
	if (!is_streamed(s, key) || !cJSON_GetObjectItemCaseSensitive(s->root, key))
		return 0;
	struct buf doc = BUF_INIT;
	if (s->docs > 1)
		buf_addf(&doc, " of document %zu", s->docs);
	int rc = em_err(err, EM_EINPUT, "%s: \"%s\" appears twice in the top-level object%s; an export has it once",
			s->origin, key, doc.s ? doc.s : "");
	buf_release(&doc);
	return rc;
}

/* After an object member or an array element: a ',' moves on to state next (0), close ends the
 * container (1, past it), anything else is a syntax error (negative, as skip_ws's). */
static int after_item(struct jsonx_stream *s, int close, int next, struct buf *err)
{
	int rc = 0;
	int c = skip_ws(s, &rc, err);
	if (c < -1)
		return rc;
	if (c == ',') {
		s->pos++;
		s->first = 0;
		s->state = next;
		return 0;
	}
	if (c != close)
		return syntax_error(s, 0, err);
	s->pos++;
	return 1;
}

int jsonx_stream_next(struct jsonx_stream *s, struct jsonx_event *ev, struct buf *err)
{
	int rc = 0;
	memset(ev, 0, sizeof *ev);
	for (;;) {
		int c;
		size_t n;
		switch (s->state) {
		case ST_BETWEEN:
			cJSON_Delete(s->root);
			s->root = NULL;
			/* JSON whitespace, then the end; other control bytes are skipped (by cJSON) only
			 * before a document, and are an error at the end of the file */
			while (is_json_ws(c = byte_at(s, 0, &rc, err)))
				s->pos++;
			if (c < -1)
				return rc;
			if (c == -1) {
				s->state = ST_DONE;
				if (!s->docs)
					return em_err(err, EM_EINPUT, "%s: empty file, expected JSON", s->origin);
				return 0;
			}
			c = skip_ws(s, &rc, err);
			if (c < -1)
				return rc;
			if (c == -1)
				return syntax_error(s, 0, err);
			s->docs++;
			if (c != '{') { /* not an object: read whole */
				if ((rc = scan_value(s, &n, err)) < 0)
					return rc;
				if (!(s->root = parse_span(s, n, NULL, 1, err)))
					return EM_EINPUT;
				s->pos += n;
				ev->value = s->root;
				ev->doc = s->docs;
				return JSONX_DOCUMENT;
			}
			s->pos++;
			s->root = cJSON_CreateObject();
			s->first = 1;
			s->state = ST_MEMBER;
			break;
		case ST_MEMBER:
			if ((rc = skip_to_item(s, '}', &c, err)) < 0)
				return rc;
			if (rc)
				return document_read(s, ev);
			if (c != '"') /* where cJSON puts it: after the byte that is not a key */
				return syntax_error(s, c == -1 ? 0 : 1, err);
			if ((rc = scan_value(s, &n, err)) < 0)
				return rc;
			cJSON *key = parse_span(s, n, NULL, 0, err);
			if (!key)
				return EM_EINPUT;
			s->pos += n;
			c = skip_ws(s, &rc, err);
			if (c != ':') {
				cJSON_Delete(key);
				return c < -1 ? rc : syntax_error(s, 0, err);
			}
			s->pos++;
			c = skip_ws(s, &rc, err);
			if (c < -1) {
				cJSON_Delete(key);
				return rc;
			}
			if ((rc = duplicate_streamed_key(s, key->valuestring, err)) < 0) {
				cJSON_Delete(key);
				return rc;
			}
			if (c == '[' && is_streamed(s, key->valuestring)) {
				cJSON *arr = cJSON_CreateArray();
				cJSON_AddItemToObject(s->root, key->valuestring, arr);
				cJSON_Delete(key);
				s->key = arr->string;
				s->index = 0;
				s->first = 1;
				s->pos++;
				s->state = ST_ELEMENT;
				break;
			}
			if (c == -1) {
				cJSON_Delete(key);
				return syntax_error(s, 0, err);
			}
			if ((rc = scan_value(s, &n, err)) < 0) {
				cJSON_Delete(key);
				return rc;
			}
			cJSON *value = parse_span(s, n, NULL, 0, err);
			if (!value) {
				cJSON_Delete(key);
				return EM_EINPUT;
			}
			cJSON_AddItemToObject(s->root, key->valuestring, value);
			cJSON_Delete(key);
			s->pos += n;
			s->state = ST_AFTER_MEMBER;
			break;
		case ST_AFTER_MEMBER:
			if ((rc = after_item(s, '}', ST_MEMBER, err)) <= 0) {
				if (rc < 0)
					return rc;
				break;
			}
			return document_read(s, ev);
		case ST_ELEMENT:
			if ((rc = skip_to_item(s, ']', &c, err)) < 0)
				return rc;
			if (rc) {
				s->state = ST_AFTER_MEMBER;
				break;
			}
			if (c == -1)
				return syntax_error(s, 0, err);
			if (s->arena)
				jsonx_arena_reset(s->arena);
			cJSON *el = (c == '{' || c == '[') ? parse_in_window(s, &n) : NULL;
			if (!el) { /* a scalar, an element cut by the window's end, or bad JSON */
				if ((rc = scan_value(s, &n, err)) < 0)
					return rc;
				if (s->arena)
					jsonx_arena_reset(s->arena);
				if (!(el = parse_span(s, n, s->arena, 0, err)))
					return EM_EINPUT;
			}
			s->pos += n;
			s->state = ST_AFTER_ELEMENT;
			ev->key = s->key;
			ev->index = s->index++;
			ev->value = el;
			ev->doc = s->docs;
			if (!s->arena)
				s->element = el; /* freed at the next call */
			return JSONX_ELEMENT;
		case ST_AFTER_ELEMENT:
			cJSON_Delete(s->element);
			s->element = NULL;
			if ((rc = after_item(s, ']', ST_ELEMENT, err)) < 0)
				return rc;
			if (rc > 0)
				s->state = ST_AFTER_MEMBER;
			break;
		default:
			return 0;
		}
	}
}
