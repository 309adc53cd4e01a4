/*
 * jsonx.h - small helpers over cJSON for the modules that parse JSON documents
 * (exports, API pages). cJSON values never leave the module that parsed them; these helpers
 * only read. Errors name the file (origin) and the JSON path ("Volumes[3].Size").
 */
#ifndef EBSMIGRATE_JSONX_H
#define EBSMIGRATE_JSONX_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"

/* Parses text holding exactly one JSON document (RFC 8259's strings: see jsonx_find_raw_control);
 * on failure returns NULL and appends "FILE: not valid JSON at line L, column C" (or "empty
 * file", or "unexpected data after the JSON document at ..." when something other than
 * whitespace follows it). */
cJSON *jsonx_parse(const char *text, size_t len, const char *origin, struct buf *err);
/* RFC 8259 forbids raw control bytes (below 0x20) inside strings; cJSON takes them, so every
 * parse here checks: a string holding one fails at its opening quote (an unclosed quote shows up
 * so, on the line where it was left open). jsonx_find_raw_control gives the offset of that quote
 * in text[0, len) (len when no string holds one); text starts outside any string.
 * jsonx_add_string_problem appends ": the string starting here holds a raw line break ..." when
 * text starts with such a string, else nothing. jsonx_syntax_error is the one syntax message:
 * "ORIGIN: not valid JSON at line L, column C" for text[off], with that problem when it is one;
 * returns EM_EINPUT. */
size_t jsonx_find_raw_control(const char *text, size_t len);
void jsonx_add_string_problem(struct buf *b, const char *text, size_t len);
int jsonx_syntax_error(const char *text, size_t len, size_t off, const char *origin, struct buf *err);
/* Line and column (1-based) of offset off in text, for messages that point into a file. */
void jsonx_line_col(const char *text, size_t off, size_t *line, size_t *col);
/* The offset of the first byte at or after off that is not JSON whitespace (len if none); text
 * is len bytes, not necessarily NUL-terminated. */
size_t jsonx_skip_ws(const char *text, size_t len, size_t off);

/* The documents of a concatenated JSON stream, one at a time: `aws ... >> all.json` run twice,
 * or kubectl printing several objects, yields several documents in one file; each must be read,
 * none ignored. Whitespace may separate them (none is needed after an object or array).
 *   struct jsonx_docs d; jsonx_docs_init(&d, text, len, "vols.json", NULL);
 *   cJSON *doc; while ((rc = jsonx_docs_next(&d, &doc, err)) > 0) { ...; cJSON_Delete(doc); }
 * jsonx_docs_next returns 1 with the next tree in *out (the caller's: cJSON_Delete it, or, with
 * an arena, it lives until the arena's next reset), 0 after the last document, or EM_EINPUT
 * (an empty text, or invalid JSON: the message gives the line and column in the whole text).
 * d.count is the number of documents returned so far. text must outlive d. */
struct jsonx_arena;
struct jsonx_docs {
	const char *text, *origin;
	size_t len, off, count;
	struct jsonx_arena *arena; /* NULL: trees in malloc */
};
void jsonx_docs_init(struct jsonx_docs *d, const char *text, size_t len, const char *origin, struct jsonx_arena *arena);
int jsonx_docs_next(struct jsonx_docs *d, cJSON **out, struct buf *err);

/* Installs cJSON's allocation hooks for the parse arenas (once; thread-safe). Call before
 * starting threads that use cJSON: hooks changed while another thread allocates would race. */
void jsonx_threads_init(void);

/* A parse arena: memory for cJSON trees that are read and then dropped all at once (large API
 * list pages), so a page costs a few bump allocations instead of a malloc and a free per value.
 * A tree from jsonx_parse_in belongs to the arena: never cJSON_Delete it, never add to it; it
 * dies at the next jsonx_arena_reset or jsonx_arena_release. Reset keeps up to 16 MiB for the
 * next tree. */
struct jsonx_arena_chunk;
struct jsonx_arena {
	struct jsonx_arena_chunk *first, *cur;
};
#define JSONX_ARENA_INIT {NULL, NULL}
void jsonx_arena_reset(struct jsonx_arena *a);
void jsonx_arena_release(struct jsonx_arena *a);
/* jsonx_parse with every allocation of the tree in a (cJSON's allocation hooks point at the
 * arena only for the duration of this call). */
cJSON *jsonx_parse_in(struct jsonx_arena *a, const char *text, size_t len, const char *origin, struct buf *err);
/* One value at text (len bytes, cJSON's own rules but RFC 8259's strings, nothing skipped after
 * it), into the arena (NULL: malloc). *end is where it stopped: past the value, or at the error
 * (a string holding a raw control byte: its opening quote). */
cJSON *jsonx_parse_value_in(struct jsonx_arena *a, const char *text, size_t len, const char **end);
/* As jsonx_parse_value_in into the arena a (not NULL) for an object or array in a plain subset
 * of JSON (strings without escapes or control bytes, integers of 1-15 digits, literals), without
 * cJSON; NULL when the value is outside that subset or not valid, then cJSON decides. */
cJSON *jsonx_parse_plain_in(struct jsonx_arena *a, const char *text, size_t len, const char **end);

/* A streaming reader of a JSON export: the elements of the top-level arrays named in keys
 * (e.g. {"Volumes", NULL}) one at a time, then each document's root with its other members
 * (a streamed array appears there empty). A document that is not an object comes whole.
 *   struct jsonx_stream s; rc = jsonx_stream_open(&s, path, &arena, keys, err);
 *   struct jsonx_event ev; while (!rc && (rc = jsonx_stream_next(&s, &ev, err)) > 0) ...;
 *   jsonx_stream_close(&s);
 * jsonx_stream_next returns JSONX_ELEMENT (ev.key, ev.index, ev.value: valid until the next
 * call, in the arena when one is given), JSONX_DOCUMENT (ev.value: the root, valid until the
 * next call; jsonx_stream_root gives it while its elements stream), 0 after the last document,
 * or a negative EM_E* code with the message (syntax errors name the file, line and column as
 * jsonx_docs_next does; an empty input is "empty file"). ev.doc counts documents from 1.
 * Memory: a window of about 1 MiB plus the largest element. jsonx_stream_open applies the
 * input size limit and the messages of em_read_input; close it even when open failed.
 * jsonx_stream_open also reads YAML: a file that does not start with '{' or '[' (after white
 * space and a byte order mark) is converted by yamlin as it is read (`kubectl get -o yaml`,
 * `aws --output yaml`), so the events are those of the JSON it stands for; its refusals
 * (YAML syntax, nesting, neither JSON nor YAML) come from yamlin with their own positions. */
enum { JSONX_ELEMENT = 1, JSONX_DOCUMENT = 2 };
struct jsonx_event {
	const char *key;
	size_t index, doc;
	const cJSON *value;
};
struct yamlin;
struct jsonx_stream {
	int fd;                    /* -1: text is the whole input */
	char *own;                 /* the window, for a file */
	const char *text;
	size_t len, cap, pos;      /* text[pos, len) is not consumed yet */
	size_t line, col;          /* of text[0] */
	int eof, state, first;
	int64_t total, max_size;
	size_t docs, index;
	const char *origin, *key;
	const char *const *keys;
	struct jsonx_arena *arena;
	cJSON *root, *element;
	size_t chunk;              /* read size; 0: 1 MiB (tests set a few bytes) */
	struct yamlin *yaml;       /* a YAML file: the window fills with its JSON (yamlin.h) */
	struct buf yaml_json;
};
int jsonx_stream_open(struct jsonx_stream *s, const char *path, struct jsonx_arena *arena, const char *const *keys,
		      struct buf *err);
void jsonx_stream_init_text(struct jsonx_stream *s, const char *text, size_t len, const char *origin,
			    struct jsonx_arena *arena, const char *const *keys);
int jsonx_stream_next(struct jsonx_stream *s, struct jsonx_event *ev, struct buf *err);
const cJSON *jsonx_stream_root(const struct jsonx_stream *s);
void jsonx_stream_close(struct jsonx_stream *s);

/* Object member lookup (case-sensitive); NULL when absent or when obj is not an object. */
const cJSON *jsonx_get(const cJSON *obj, const char *key);
/* The member's string value, or NULL when absent/null/not a string. */
const char *jsonx_str(const cJSON *obj, const char *key);
/* Walks a dotted path of object keys ("spec.csi.volumeHandle"); NULL if any step is missing. */
const cJSON *jsonx_path(const cJSON *obj, const char *dotted);
const char *jsonx_path_str(const cJSON *obj, const char *dotted);
/* Reads an integer member strictly: absent/null -> 0 with *present = 0; a non-integer number,
 * a string or a value outside [min, max] -> EM_EINPUT with "ORIGIN: PATH.KEY: ..." in err. */
int jsonx_int(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out, int *present,
	      const char *origin, const char *path, struct buf *err);
/* Typed members for input that must not be misread: absent or null -> *out = NULL and 0; the
 * wanted type -> *out set and 0; any other type -> EM_EINPUT with
 * "ORIGIN: PATH.KEY: must be a string, got a number" (a wrong-typed field is not a missing one).
 * jsonx_want_path_str walks a dotted path ("spec.csi.volumeHandle"); a step that is present but
 * not an object is an error naming that step. path may be "" (the document itself). */
int jsonx_want_str(const cJSON *obj, const char *key, const char **out, const char *origin, const char *path,
		   struct buf *err);
int jsonx_want_path_str(const cJSON *obj, const char *dotted, const char **out, const char *origin,
			const char *path, struct buf *err);
int jsonx_want_array(const cJSON *obj, const char *key, const cJSON **out, const char *origin, const char *path,
		     struct buf *err);
/* "a string", "a number", "an array", ... for messages. */
const char *jsonx_type_name(const cJSON *v);
/* Boolean member: true/false; absent -> def. */
int jsonx_bool(const cJSON *obj, const char *key, int def);

/* Finds the string at OBJ.KEY in a JSON document without building a tree (a byte scan that
 * skips other values): used on large list pages to read metadata.continue cheaply. Returns 1
 * with a heap copy (unescaped for the simple escapes \" \\ \/) in *out, 0 when absent, -1 when
 * the text is not a JSON object. */
int jsonx_scan_member_str(const char *text, size_t len, const char *obj, const char *key, char **out);

#endif
