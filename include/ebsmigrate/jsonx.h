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

/* Parses text; on failure returns NULL and appends "FILE: not valid JSON at line L, column C". */
cJSON *jsonx_parse(const char *text, size_t len, const char *origin, struct buf *err);

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
/* Boolean member: true/false; absent -> def. */
int jsonx_bool(const cJSON *obj, const char *key, int def);

/* Finds the string at OBJ.KEY in a JSON document without building a tree (a byte scan that
 * skips other values): used on large list pages to read metadata.continue cheaply. Returns 1
 * with a heap copy (unescaped for the simple escapes \" \\ \/) in *out, 0 when absent, -1 when
 * the text is not a JSON object. */
int jsonx_scan_member_str(const char *text, size_t len, const char *obj, const char *key, char **out);

#endif
