/* fuzz_yaml_export.c - YAML exports (`kubectl get -o yaml`, `aws --output yaml` / `yaml-stream`)
 * as --from-aws-json / --from-kube-json read them: converted to JSON by yamlin, whole
 * (yamlin_to_json, standard input's path) and streamed from a file a few bytes at a time
 * (jsonx_stream_open, every refill exercised), then loaded by both export readers
 * (aws_ec2_load_export, kube_objects_load: what aws_ec2_load_file and kube_objects_load_file
 * read from the stream). Checked: the JSON written is always valid (every
 * document parses, so never nested deeper than cJSON's limit); the streamed events equal those
 * of the whole conversion, and a refusal is the same refusal either way (the stream may hand
 * over elements before it). A difference traps. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/volume.h"
#include "ebsmigrate/yamlin.h"
#include "fuzz.h"

static const char *const keys[] = {"Volumes", "items", NULL};

/* The events of s, one a line, then "end RC MESSAGE". */
static void transcript(struct jsonx_stream *s, int rc, struct buf *log)
{
	struct jsonx_event ev;
	struct buf err = BUF_INIT;
	while (rc >= 0 && (rc = jsonx_stream_next(s, &ev, &err)) > 0) {
		char *text = cJSON_PrintUnformatted(ev.value);
		buf_addf(log, "%d %zu %s[%zu] %s\n", rc, ev.doc, ev.key ? ev.key : "-", ev.index, text ? text : "?");
		free(text);
	}
	buf_addf(log, "end %d %s\n", rc, err.s);
	buf_release(&err);
}

/* Every document of json parses: the converter never writes invalid JSON. */
static void check_valid(const struct buf *json)
{
	struct jsonx_docs d;
	struct buf err = BUF_INIT;
	cJSON *doc;
	int rc;
	jsonx_docs_init(&d, json->s, json->len, "converted", NULL);
	while ((rc = jsonx_docs_next(&d, &doc, &err)) > 0)
		cJSON_Delete(doc);
	if (rc < 0) {
		fprintf(stderr, "invalid JSON written: %s\n%s\n", err.s, json->s);
		__builtin_trap();
	}
	buf_release(&err);
}

/* Both export readers on the JSON the YAML stands for (what they read from the file, streamed). */
static void load_both(const struct buf *json)
{
	struct fleet f;
	fleet_init(&f);
	struct ec2_mod_list mods;
	memset(&mods, 0, sizeof mods);
	struct buf err = BUF_INIT;
	if (aws_ec2_load_export(&f, &mods, json->s, json->len, "fuzz.yaml", "acct", &err) > 0)
		aws_ec2_attach_mods(&f, &mods);
	ec2_mod_list_release(&mods);
	buf_reset(&err);
	struct kube_set ks;
	kube_set_init(&ks);
	kube_objects_load(&ks, &f, "fuzz", json->s, json->len, "fuzz.yaml", &err);
	kube_set_release(&ks);
	fleet_release(&f);
	buf_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT || yamlin_is_json((const char *)data, size))
		return 0; /* JSON: fuzz_jsonx_stream */
	int fd = memfd_create("fuzz", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

	struct buf json = BUF_INIT, err = BUF_INIT, whole = BUF_INIT, streamed = BUF_INIT;
	struct jsonx_arena arena = JSONX_ARENA_INIT;
	struct jsonx_stream s;
	int rc = yamlin_to_json((const char *)data, size, path, &json, &err);
	if (!rc) {
		check_valid(&json);
		jsonx_stream_init_text(&s, json.s, json.len, path, &arena, keys);
		transcript(&s, 0, &whole);
		jsonx_stream_close(&s);
	} else {
		buf_addf(&whole, "end %d %s\n", rc, err.s);
	}
	buf_reset(&err);
	int orc = jsonx_stream_open(&s, path, &arena, keys, &err);
	s.chunk = 1 + size % 13;
	transcript(&s, orc ? orc : 0, &streamed);
	jsonx_stream_close(&s);
	/* a refusal: the stream may have handed over elements read before it, then the same end
	 * (its last line: the events' values are printed escaped, one a line) */
	const char *end = streamed.s;
	for (const char *nl; rc && (nl = strstr(end, "\nend ")) != NULL;)
		end = nl + 1;
	if (strcmp(end, whole.s) != 0) {
		fprintf(stderr, "whole:\n%s\nstreamed:\n%s\n", whole.s, streamed.s);
		__builtin_trap();
	}
	if (!rc)
		load_both(&json);

	buf_release(&json);
	buf_release(&err);
	buf_release(&whole);
	buf_release(&streamed);
	jsonx_arena_release(&arena);
	close(fd);
	return 0;
}
