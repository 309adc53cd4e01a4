/* fuzz_jsonx_plain.c - the plain-subset parser the stream tries before cJSON on every object or
 * array element (jsonx_parse_plain_in). Differential: whenever it accepts a value, cJSON must
 * accept the same bytes, stop at the same place and build the same tree (types, names, strings,
 * numbers, valueint, links, head->prev = tail); a difference traps. When it declines, cJSON
 * decides, so nothing is checked. The input is copied to a buffer of its exact size, so a read
 * past the end is an ASan finding. */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/jsonx.h"
#include "fuzz.h"

static int strs_equal(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_tree(const cJSON *a, const cJSON *b)
{
	if (a->type != b->type || !strs_equal(a->string, b->string) || !strs_equal(a->valuestring, b->valuestring) ||
	    a->valueint != b->valueint || memcmp(&a->valuedouble, &b->valuedouble, sizeof a->valuedouble) != 0)
		return 0;
	const cJSON *x = a->child, *y = b->child, *xl = NULL, *yl = NULL;
	for (; x && y; x = x->next, y = y->next) {
		if (!same_tree(x, y) || (x != a->child && x->prev != xl) || (y != b->child && y->prev != yl))
			return 0;
		xl = x;
		yl = y;
	}
	if (x || y)
		return 0;
	return !a->child || (a->child->prev == xl && b->child->prev == yl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT || size == 0)
		return 0;
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data, size);
	struct jsonx_arena arena = JSONX_ARENA_INIT;
	const char *plain_end = NULL, *cjson_end = NULL;
	cJSON *plain = jsonx_parse_plain_in(&arena, text, size, &plain_end);
	if (plain) {
		cJSON *ref = jsonx_parse_value_in(NULL, text, size, &cjson_end);
		if (!ref || cjson_end != plain_end || !same_tree(plain, ref))
			__builtin_trap();
		cJSON_Delete(ref);
	} else if (plain_end) {
		__builtin_trap(); /* a decline leaves *end NULL */
	}
	jsonx_arena_release(&arena);
	free(text);
	return 0;
}
