/* test_yamlout.c - the -o yaml converter: scalars a YAML resolver would misread are quoted,
 * numbers keep a form YAML 1.1 reads as numbers, escapes decode, bad bytes become U+FFFD,
 * malformed JSON and excessive nesting are refused with the byte offset, and the streamed file
 * path writes what the memory path does. */
#include <stdio.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/yamlout.h"
#include "tap.h"

static char got[4096];

static const char *yaml_of(const char *json)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	int rc = yamlout_from_json(&out, json, strlen(json), &err);
	snprintf(got, sizeof got, "%s", rc ? err.s : out.s);
	buf_release(&out);
	buf_release(&err);
	return got;
}

int main(void)
{
	CHECK_STR(yaml_of("{\"schema\":\"x/v1\",\"n\":3,\"ok\":true,\"none\":null}"),
		  "schema: x/v1\n\"n\": 3\nok: true\nnone: null\n"); /* n: a YAML 1.1 bool */
	/* strings that resolvers read as bools, nulls, numbers or dates are quoted */
	CHECK_STR(yaml_of("[\"yes\",\"No\",\"on\",\"y\",\"NULL\",\"~\",\"\",\"012\",\"1e5\",\".inf\",\"2026-12-01\",\"-\"]"),
		  "- \"yes\"\n- \"No\"\n- \"on\"\n- \"y\"\n- \"NULL\"\n- \"~\"\n- \"\"\n- \"012\"\n- \"1e5\"\n- \".inf\"\n"
		  "- \"2026-12-01\"\n- \"-\"\n");
	/* plain words stay plain; indicators make the emitter quote */
	CHECK_STR(yaml_of("{\"action\":\"migrate\",\"k\":\"a: b\",\"c\":\"x #y\"}"),
		  "action: migrate\nk: 'a: b'\nc: 'x #y'\n");
	/* numbers: YAML 1.1 needs a '.' and a signed exponent to read a float */
	CHECK_STR(yaml_of("[1e5,-2.5E-3,0,-0.5,12.25,3E+2]"),
		  "- 1.0e+5\n- -2.5e-3\n- 0\n- -0.5\n- 12.25\n- 3.0e+2\n");
	CHECK_STR(yaml_of("{\"a\":{},\"b\":[],\"c\":[{\"d\":[1]}]}"), "a: {}\nb: []\nc:\n- d:\n  - 1\n");
	/* escapes: a surrogate pair, a lone surrogate, control characters */
	CHECK_STR(yaml_of("[\"\\ud83d\\ude00\",\"a\\ud800b\",\"tab\\there\",\"nul\\u0000\"]"),
		  "- \"\\U0001F600\"\n- a\xef\xbf\xbd" "b\n- \"tab\\there\"\n- \"nul\\0\"\n");
	/* bytes that are not UTF-8 cannot be YAML: U+FFFD */
	CHECK_STR(yaml_of("[\"caf\xc3\xa9\",\"bad\xff\"]"), "- café\n- bad\xef\xbf\xbd\n");
	/* malformed JSON: refused with the byte offset */
	CHECK_STR(yaml_of("{\"a\":[1,2}"), "yaml output: the JSON document is malformed at byte 10: expected ',' or ']'");
	CHECK_STR(yaml_of("[01]"), "yaml output: the JSON document is malformed at byte 3: a number is malformed");
	CHECK_STR(yaml_of("{\"a\":1} x"), "yaml output: the JSON document is malformed at byte 8: more after the document");
	CHECK_STR(yaml_of("[tru]"), "yaml output: the JSON document is malformed at byte 5: an unknown literal");
	char deep[2 * YAMLOUT_MAX_DEPTH + 8];
	memset(deep, '[', YAMLOUT_MAX_DEPTH + 1);
	memset(deep + YAMLOUT_MAX_DEPTH + 1, ']', YAMLOUT_MAX_DEPTH + 1);
	deep[2 * YAMLOUT_MAX_DEPTH + 2] = 0;
	CHECK(strstr(yaml_of(deep), "nested deeper than 256 levels") != NULL);
	deep[1] = 0;
	memset(deep, '[', YAMLOUT_MAX_DEPTH);
	memset(deep + YAMLOUT_MAX_DEPTH, ']', YAMLOUT_MAX_DEPTH);
	deep[2 * YAMLOUT_MAX_DEPTH] = 0;
	CHECK(strstr(yaml_of(deep), "[]") != NULL); /* the limit itself is fine */

	/* the streamed path (a document larger than its 64 KiB window) writes the same bytes */
	struct buf json = BUF_INIT, mem = BUF_INIT, err = BUF_INIT;
	buf_adds(&json, "{\"volumes\":[");
	for (int i = 0; i < 5000; i++)
		buf_addf(&json, "%s{\"volume_id\":\"vol-%05d\",\"size_gib\":%d,\"note\":\"caf\xc3\xa9 \\\"q\\\"\"}", i ? "," : "", i, i);
	buf_adds(&json, "]}");
	CHECK(json.len > 3 * 65536);
	CHECK_I64(yamlout_from_json(&mem, json.s, json.len, &err), 0);
	FILE *in = tmpfile(), *out = tmpfile();
	CHECK(in && out);
	fwrite(json.s, 1, json.len, in);
	rewind(in);
	CHECK_I64(yamlout_from_json_file(out, in, &err), 0);
	long n = ftell(out);
	CHECK_I64(n, (int64_t)mem.len);
	struct buf back = BUF_INIT;
	buf_grow(&back, mem.len + 1);
	rewind(out);
	back.len = fread(back.s, 1, mem.len, out);
	CHECK(back.len == mem.len && memcmp(back.s, mem.s, mem.len) == 0);
	CHECK(strstr(mem.s, "- volume_id: vol-04999\n  size_gib: 4999\n  note: café \"q\"\n") != NULL);
	fclose(in);
	fclose(out);
	buf_release(&back);
	buf_release(&json);
	buf_release(&mem);
	buf_release(&err);
	return tap_done();
}
