/* fuzz_jsonx_stream.c - the streaming reader every --from-aws-json / --from-kube-json file goes
 * through (jsonx_stream). Differential: the input is read from memory and from a file with a
 * read size of a few bytes (every refill and window move exercised); both must give the same
 * events and the same error. When cJSON parses the input as one object (strings held to RFC 8259,
 * as every jsonx parse is), the stream must succeed and its elements put back into their arrays
 * must print the same. A difference traps. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/yamlin.h"
#include "fuzz.h"

static const char *const keys[] = {"Volumes", "items", "a", NULL};

/* Reads s to the end: a transcript of its events and result in log; with rebuild, the first
 * document's root with its streamed elements put back. */
static void transcript(struct jsonx_stream *s, struct buf *log, cJSON **rebuild)
{
	struct jsonx_event ev;
	struct buf err = BUF_INIT;
	cJSON *elements = cJSON_CreateObject(); /* key -> array of the elements seen */
	int rc;
	while ((rc = jsonx_stream_next(s, &ev, &err)) > 0) {
		char *text = cJSON_PrintUnformatted(ev.value);
		buf_addf(log, "%d doc %zu %s[%zu] %s\n", rc, ev.doc, ev.key ? ev.key : "-", ev.index, text ? text : "?");
		free(text);
		if (rc == JSONX_ELEMENT && ev.doc == 1) {
			cJSON *arr = cJSON_GetObjectItemCaseSensitive(elements, ev.key);
			if (!arr)
				arr = cJSON_AddArrayToObject(elements, ev.key);
			cJSON_AddItemToArray(arr, cJSON_Duplicate(ev.value, 1));
		}
		if (rc == JSONX_DOCUMENT && ev.doc == 1 && rebuild) {
			*rebuild = cJSON_Duplicate(ev.value, 1);
			cJSON *arr;
			cJSON_ArrayForEach(arr, elements)
			{
				cJSON *slot = cJSON_GetObjectItemCaseSensitive(*rebuild, arr->string);
				if (slot && cJSON_IsArray(slot) && !slot->child)
					cJSON_ReplaceItemViaPointer(*rebuild, slot, cJSON_Duplicate(arr, 1));
			}
		}
	}
	buf_addf(log, "end %d %s\n", rc, err.s);
	buf_release(&err);
	cJSON_Delete(elements);
}

/* Drops the message after "end RC " (keeps the code). */
/* Whether a streamed key is a member of obj more than once (the stream refuses such a document). */
static int has_duplicate_streamed_key(const cJSON *obj)
{
	for (const char *const *k = keys; *k; k++) {
		int n = 0;
		for (const cJSON *m = obj->child; m; m = m->next)
			n += m->string && strcmp(m->string, *k) == 0;
		if (n > 1)
			return 1;
	}
	return 0;
}

static void trim_error(struct buf *log)
{
	char *end = strstr(log->s, "end ");
	if (end) {
		char *sp = strchr(end + 4, ' ');
		if (sp) {
			sp[1] = '\0';
			log->len = (size_t)(sp + 1 - log->s);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct jsonx_arena arena = JSONX_ARENA_INIT;
	struct buf mem_log = BUF_INIT, file_log = BUF_INIT;
	cJSON *rebuilt = NULL;

	struct jsonx_stream s;
	jsonx_stream_init_text(&s, (const char *)data, size, "fuzz.json", &arena, keys);
	transcript(&s, &mem_log, &rebuilt);
	jsonx_stream_close(&s);

	/* a file that does not start like JSON is read as YAML (fuzz_yaml_export's business) */
	int fd = yamlin_is_json((const char *)data, size) ? memfd_create("fuzz", 0) : -1;
	if (fd >= 0 && write(fd, data, size) == (ssize_t)size) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		struct buf err = BUF_INIT;
		if (jsonx_stream_open(&s, path, NULL, keys, &err) == 0) {
			s.chunk = 1 + size % 13;
			s.origin = "fuzz.json";
			transcript(&s, &file_log, NULL);
			/* A UTF-8 byte order mark after the first document is skipped by cJSON only when it
			 * starts what cJSON is given, which depends on the window: with one, only the events
			 * and whether it failed are compared, not the error's column (a known limit). */
			if (fuzz_contains(data, size, "\xef\xbb\xbf")) {
				trim_error(&mem_log);
				trim_error(&file_log);
			}
			if (strcmp(mem_log.s, file_log.s) != 0) {
				fprintf(stderr, "memory:\n%s\nfile:\n%s\n", mem_log.s, file_log.s);
				__builtin_trap();
			}
		}
		jsonx_stream_close(&s);
		buf_release(&err);
	}
	if (fd >= 0)
		close(fd);

	/* one object, nothing but whitespace after it: the stream must agree with the whole-value
	 * parse (cJSON, with RFC 8259's strings) */
	const char *end = NULL;
	cJSON *whole = jsonx_parse_value_in(NULL, (const char *)data, size, &end);
	if (whole && cJSON_IsObject(whole) && jsonx_skip_ws((const char *)data, size, (size_t)(end - (const char *)data)) == size &&
	    !fuzz_contains(data, size, "\xef\xbb\xbf") && !has_duplicate_streamed_key(whole)) {
		/* compared as printed: keeps order and duplicate keys, which cJSON_Compare does not */
		char *a = cJSON_PrintUnformatted(whole), *b = rebuilt ? cJSON_PrintUnformatted(rebuilt) : NULL;
		int same = a && b && strcmp(a, b) == 0;
		free(a);
		free(b);
		if (!same || !strstr(mem_log.s, "end 0 \n")) {
			fprintf(stderr, "stream:\n%s\n", mem_log.s);
			__builtin_trap();
		}
	}
	cJSON_Delete(whole);
	cJSON_Delete(rebuilt);
	buf_release(&mem_log);
	buf_release(&file_log);
	jsonx_arena_release(&arena);
	return 0;
}
