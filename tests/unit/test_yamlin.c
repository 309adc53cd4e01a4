/*
 * test_yamlin.c - YAML exports read as JSON (yamlin): which reader a text picks, the JSON each
 * YAML construct becomes (the core schema's scalars, numbers in JSON's grammar, documents and
 * yaml-stream pages), the refusals with their positions (nesting cap at its boundary, aliases,
 * merge keys, tags, duplicate top-level keys, .inf), what a text that is neither seems to be,
 * and the streamed reader (jsonx_stream_open on a file read a few bytes at a time) agreeing with
 * the whole-text conversion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/yamlin.h"
#include "tap.h"

/* The JSON of text, or "error: MESSAGE". */
static char *convert(const char *text)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	int rc = yamlin_to_json(text, strlen(text), "y.yaml", &out, &err);
	char *r;
	if (rc) {
		buf_reset(&out);
		buf_addf(&out, "error: %s", err.s);
	}
	r = buf_detach(&out);
	buf_release(&err);
	return r ? r : xstrdup("");
}

static void check_convert(const char *yaml, const char *want, int line)
{
	char *got = convert(yaml);
	tap_check_str(got, want, yaml, __FILE__, line);
	free(got);
}
#define CONVERTS(yaml, want) check_convert((yaml), (want), __LINE__)

static void test_which_reader(void)
{
	CHECK(yamlin_is_json("{\"a\": 1}", 8));
	CHECK(yamlin_is_json("\xef\xbb\xbf \n [1]", 9));
	CHECK(yamlin_is_json(" \n\t", 3)); /* nothing: the JSON reader's "empty file" */
	CHECK(!yamlin_is_json("a: 1", 4));
	CHECK(!yamlin_is_json("- 1", 3));
	CHECK(!yamlin_is_json("{{ if .x }}", 11));
	CHECK(!yamlin_is_json("\"a\": 1", 6));
}

static void test_scalars(void)
{
	/* YAML 1.2's core schema, as the AWS CLI (ruamel.yaml) writes: yes/on/y stay strings */
	CONVERTS("a: ~\nb: null\nc:\nd: true\ne: False\nf: yes\ng: on\nh: y\ni: NULL\n",
		 "{\"a\":null,\"b\":null,\"c\":null,\"d\":true,\"e\":false,\"f\":\"yes\",\"g\":\"on\",\"h\":\"y\",\"i\":null}\n");
	/* numbers in JSON's grammar: no '+', no leading zeros, digits around the '.' */
	CONVERTS("n: [12, -7, +3, 012, 0, -0, 1.5, .5, 5., +1e3, 2E-2, 0o17, 0x1F, 00.25]\n",
		 "{\"n\":[12,-7,3,12,0,-0,1.5,0.5,5.0,1e3,2E-2,15,31,0.25]}\n");
	/* quoted, block and tagged scalars are strings; so is what is no number */
	CONVERTS("a: '123'\nb: \"true\"\nc: !!str 5\nd: ! 7\ne: |\n  x\n  y\nf: 1_000\ng: 1:20\nh: 0x\ni: 1e\nj: '~'\n",
		 "{\"a\":\"123\",\"b\":\"true\",\"c\":\"5\",\"d\":\"7\",\"e\":\"x\\ny\\n\",\"f\":\"1_000\",\"g\":\"1:20\","
		 "\"h\":\"0x\",\"i\":\"1e\",\"j\":\"~\"}\n");
	/* escapes: control characters as JSON escapes, a NUL ends the string (as cJSON ends one at a
	 * JSON "\u0000"); keys are strings */
	CONVERTS("\"k\\ty\": \"a\\u0001b\\0c\\\"\"\n1: 2\ntrue: x\nq: \"\\\"\\\\\"\n",
		 "{\"k\\ty\":\"a\\u0001b\",\"1\":2,\"true\":\"x\",\"q\":\"\\\"\\\\\"}\n");
	CONVERTS("a: !!int 0x10\nb: !!float 3\nc: !!bool true\nd: !!null ''\n", "{\"a\":16,\"b\":3,\"c\":true,\"d\":null}\n");
}

static void test_documents(void)
{
	/* each document is one JSON document; empty ones give none */
	CONVERTS("---\na: 1\n---\n---\nb: [x, {c: d}]\n...\n", "{\"a\":1}\n{\"b\":[\"x\",{\"c\":\"d\"}]}\n");
	/* aws --output yaml-stream: a sequence of pages, each a document */
	CONVERTS("- NextToken: t\n  Volumes: []\n- Volumes:\n  - VolumeId: vol-0a\n",
		 "{\"NextToken\":\"t\",\"Volumes\":[]}\n{\"Volumes\":[{\"VolumeId\":\"vol-0a\"}]}\n");
	CONVERTS("[]\n", "error: y.yaml: holds no document (only comments or '---'), expected JSON or YAML");
	CONVERTS("# nothing\n", "error: y.yaml: holds no document (only comments or '---'), expected JSON or YAML");
	/* flow style and anchors without aliases are fine */
	CONVERTS("{a: &x 1, b: [2, 3], c: {}}\n", "{\"a\":1,\"b\":[2,3],\"c\":{}}\n");
}

static void test_refusals(void)
{
	CONVERTS("a: &x 1\nb: *x\n", "error: y.yaml: line 2, column 4: aliases (*x) are not supported in an export");
	CONVERTS("a: 1\n<<: {b: 2}\n", "error: y.yaml: line 2, column 1: merge keys (<<) are not supported in an export");
	CONVERTS("a: !!binary aGk=\n",
		 "error: y.yaml: line 1, column 4: the tag 'tag:yaml.org,2002:binary' is not supported in an export");
	CONVERTS("a: !custom x\n", "error: y.yaml: line 1, column 4: the tag '!custom' is not supported in an export");
	CONVERTS("a: !!int x\n", "error: y.yaml: line 1, column 4: 'x' is not a valid !!int");
	CONVERTS("a: .inf\n", "error: y.yaml: line 1, column 4: '.inf' (a YAML float) has no JSON equivalent");
	CONVERTS("a: 0x10000000000000000\n", "error: y.yaml: line 1, column 4: the integer '0x10000000000000000' is out of range");
	CONVERTS("? [a]\n: 1\n", "error: y.yaml: line 1, column 3: a sequence as a mapping key cannot be read as JSON");
	/* kubectl -o yaml run twice into one file: the second List's keys repeat the first's */
	CONVERTS("apiVersion: v1\nitems: []\nkind: List\napiVersion: v1\n",
		 "error: y.yaml: line 4, column 1: the key 'apiVersion' appears twice in one YAML document (two exports "
		 "concatenated? separate them with a '---' line)");
	/* a key repeated below the top level passes, as in JSON (the loaders take the first) */
	CONVERTS("a: {b: 1, b: 2}\n", "{\"a\":{\"b\":1,\"b\":2}}\n");
	CONVERTS("Volumes:\n- VolumeId: vol-0a\n\tSize: 8\n",
		 "error: y.yaml: not valid YAML at line 3, column 1: found a tab character that violates indentation "
		 "while scanning a plain scalar");
	CONVERTS("kind: List\nitems:\n{{- range .Values.pvs }}\n- kind: PersistentVolume\n",
		 "error: y.yaml: not valid YAML at line 4, column 1: could not find expected ':' while scanning a simple "
		 "key; it holds '{{': an unrendered template? Render it first (helm template, envsubst, ...)");
	CONVERTS("just words\n", "error: y.yaml: line 1, column 1: neither JSON nor YAML: plain text ('just words'), not an export");
	CONVERTS("a: \"x\n", "error: y.yaml: not valid YAML at line 2, column 1: found unexpected end of stream while "
			     "scanning a quoted scalar");
	/* refused before anything was read as YAML: it is not JSON either, and says so */
	CONVERTS("@x\n", "error: y.yaml: not valid YAML at line 1, column 1: found character that cannot start any token "
			  "while scanning for the next token (nor is it JSON: it does not start with '{' or '[')");
	/* nesting: 1,000 levels are read (cJSON's limit), the 1,001st is refused where it opens */
	for (int levels = 999; levels <= 1001; levels++) {
		struct buf y = BUF_INIT, want = BUF_INIT;
		buf_adds(&y, "a: ");
		for (int i = 1; i < levels; i++)
			buf_addc(&y, '[');
		for (int i = 1; i < levels; i++)
			buf_addc(&y, ']');
		buf_addc(&y, '\n');
		if (levels <= 1000) {
			buf_adds(&want, "{\"a\":");
			buf_add(&want, y.s + 3, y.len - 4);
			buf_adds(&want, "}\n");
		} else {
			buf_addf(&want, "error: y.yaml: line 1, column %d: nesting deeper than 1000 levels", 3 + 999 + 1);
		}
		char *got = convert(y.s);
		CHECK_STR(got, want.s);
		free(got);
		buf_release(&y);
		buf_release(&want);
	}
}

static void test_guesses(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"--------------------\n|  DescribeVolumes |\n+------------------+\n", "the AWS CLI's table output"},
		{"VOLUMES\tus-east-1a\t2026-04-15T00:00:00+00:00\tTrue\n", "the AWS CLI's text output"},
		{"NAME     CAPACITY   ACCESS MODES   STATUS\npv-1     8Gi        RWO            Bound\n", "a table (kubectl get"},
		{"NAMESPACE   NAME   STATUS\n", "a table (kubectl get"},
		{"<?xml version=\"1.0\"?>\n<DescribeVolumesResponse/>\n", "XML"},
		{"<!DOCTYPE html>\n<html>", "an HTML page"},
		{"VolumeId,Size,Type\nvol-0a,8,gp2\n", "CSV"},
		{"{{ if .Values.x }}\n", "an unrendered template"},
		{"\x1f\x8b\x08\x00", "gzip-compressed data"},
		{"PK\x03\x04", "a zip archive"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *g = yamlin_guess_format(cases[i].text, strlen(cases[i].text));
		CHECK(g && strncmp(g, cases[i].want, strlen(cases[i].want)) == 0);
	}
	CHECK(yamlin_guess_format("apiVersion: v1\nkind: List\n", 26) == NULL);
	CHECK(yamlin_guess_format("a\0b", 3) != NULL); /* NUL bytes: binary */
	/* the refusal says it: neither JSON nor YAML */
	char *got = convert("VOLUMES\tus-east-1a\t8\n");
	CHECK_STR(got, "error: y.yaml: neither JSON nor YAML: it looks like the AWS CLI's text output (--output text); "
		       "export with --output json or --output yaml");
	free(got);
}

/* The events of a jsonx_stream, one line each, then its result. */
static void transcript(struct jsonx_stream *s, int rc, struct buf *log, struct buf *err)
{
	struct jsonx_event ev;
	while (rc >= 0 && (rc = jsonx_stream_next(s, &ev, err)) > 0) {
		char *t = cJSON_PrintUnformatted(ev.value);
		buf_addf(log, "%d %zu %s %zu %s\n", rc, ev.doc, ev.key ? ev.key : "-", ev.index, t);
		free(t);
	}
	buf_addf(log, "end %d %s\n", rc, err->s);
}

/* A YAML file streamed a few bytes at a time gives the events of its whole conversion (a
 * refused one: the same refusal, after the elements read before it). */
static void test_streamed(void)
{
	char dir[] = "/tmp/test_yamlinXXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	CHECK(chdir(dir) == 0);
	static const char *const keys[] = {"Volumes", "items", NULL};
	const char *inputs[] = {
		"apiVersion: v1\nitems:\n- kind: PersistentVolume\n  metadata: {name: a}\n- kind: Node\n  metadata:\n"
		"    name: n1\nkind: List\n---\nVolumes:\n- {VolumeId: vol-0a, Size: 8}\n- VolumeId: vol-0b\n",
		"- Volumes: [1, 2, 3]\n- Volumes: []\n  NextToken: x\n",
		"items:\n- a: 1\n- b: *nope\n",
		"# leading comment\n\n  a: 1\n  b: 2\n",
		"x", /* the peek meets the file's end at its first byte (fuzz_yaml_export) */
		"\x0b",
	};
	for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
		struct buf json = BUF_INIT, err = BUF_INIT, whole = BUF_INIT;
		int rc = yamlin_to_json(inputs[i], strlen(inputs[i]), "s.yaml", &json, &err);
		struct jsonx_stream s;
		struct jsonx_arena a = JSONX_ARENA_INIT;
		if (!rc) {
			jsonx_stream_init_text(&s, json.s, json.len, "s.yaml", &a, keys);
			transcript(&s, 0, &whole, &err);
			jsonx_stream_close(&s);
		} else {
			buf_addf(&whole, "end %d %s\n", rc, err.s);
		}
		FILE *f = fopen("s.yaml", "w");
		CHECK(f && fputs(inputs[i], f) >= 0 && fclose(f) == 0);
		for (size_t chunk = 1; chunk < 64; chunk = chunk * 2 + 1) {
			struct buf log = BUF_INIT, serr = BUF_INIT;
			int orc = jsonx_stream_open(&s, "s.yaml", &a, keys, &serr);
			s.chunk = chunk;
			transcript(&s, orc, &log, &serr);
			if (rc) { /* the same refusal, last */
				const char *end = strstr(log.s, "end ");
				CHECK_STR(end, whole.s);
			} else {
				CHECK_STR(log.s, whole.s);
			}
			jsonx_stream_close(&s);
			buf_release(&log);
			buf_release(&serr);
		}
		unlink("s.yaml");
		jsonx_arena_release(&a);
		buf_release(&json);
		buf_release(&err);
		buf_release(&whole);
	}
	CHECK(chdir("/") == 0 && rmdir(dir) == 0);
}

int main(void)
{
	test_which_reader();
	test_scalars();
	test_documents();
	test_refusals();
	test_guesses();
	test_streamed();
	return tap_done();
}
