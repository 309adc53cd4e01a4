/* test_jsonw.c - the streaming JSON writer: escaping of every control byte, quotes and
 * backslashes, invalid UTF-8 passed through as the writers always did, integers at their limits,
 * round-trip and hundredths doubles, money rounded to cents, times, automatic commas at every
 * nesting level, leads and layout, the compact, spaced, pretty and pretty-inline styles, and
 * record arrays one a line. */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/volume.h"
#include "tap.h"

static char got[4096];

static const char *str_of(const char *s)
{
	struct buf b = BUF_INIT;
	struct jsonw w;
	jsonw_init(&w, &b, JSONW_COMPACT);
	jsonw_str(&w, s);
	snprintf(got, sizeof got, "%s", b.s ? b.s : "");
	buf_release(&b);
	return got;
}

static const char *done(struct buf *b)
{
	snprintf(got, sizeof got, "%s", b->s ? b->s : "");
	buf_release(b); /* and ready for reuse */
	return got;
}

static void check_control_bytes(void)
{
	for (int c = 1; c < 0x20; c++) {
		char in[4] = {'a', (char)c, 'b', 0}, want[16];
		if (c == '\n')
			snprintf(want, sizeof want, "\"a\\nb\"");
		else if (c == '\r')
			snprintf(want, sizeof want, "\"a\\rb\"");
		else if (c == '\t')
			snprintf(want, sizeof want, "\"a\\tb\"");
		else
			snprintf(want, sizeof want, "\"a\\u%04xb\"", (unsigned)c);
		CHECK_STR(str_of(in), want);
	}
	CHECK_STR(str_of("\x01"), "\"\\u0001\"");
	CHECK_STR(str_of("\x1f"), "\"\\u001f\"");
	CHECK_STR(str_of("\x7f"), "\"\x7f\"");       /* DEL is not escaped */
	CHECK_STR(str_of("say \"hi\" \\ there"), "\"say \\\"hi\\\" \\\\ there\"");
	CHECK_STR(str_of("/"), "\"/\"");
	CHECK_STR(str_of(""), "\"\"");
	CHECK_STR(str_of(NULL), "null");
	CHECK_STR(str_of("gr\xc3\xbc\xc3\x9f \xe2\x82\xac"), "\"gr\xc3\xbc\xc3\x9f \xe2\x82\xac\""); /* UTF-8 as is */
	/* invalid UTF-8 (a lone continuation, a truncated sequence, 0xff) passes through, byte for byte */
	CHECK_STR(str_of("a\x80z\xc3\xff"), "\"a\x80z\xc3\xff\"");
	CHECK_STR(str_of("\xff\n"), "\"\xff\\n\"");
}

/* The elements fill writes, as one compact array. */
static const char *array_of(void (*fill)(struct jsonw *w))
{
	struct buf b = BUF_INIT;
	struct jsonw w;
	jsonw_init(&w, &b, JSONW_COMPACT);
	jsonw_array(&w);
	fill(&w);
	jsonw_end(&w);
	return done(&b);
}

static void fill_ints(struct jsonw *w)
{
	const long long v[] = {0, -42, LLONG_MAX, LLONG_MIN};
	for (size_t i = 0; i < 4; i++)
		jsonw_int(w, v[i]);
	jsonw_int_or_null(w, 7, 0);
	jsonw_int_or_null(w, 7, 1);
	jsonw_bool(w, 1);
	jsonw_bool(w, 0);
	jsonw_null(w);
}

static void fill_round_trip(struct jsonw *w)
{
	const double v[] = {3001, 38287.356322, 0.1, 9240576 / 1e6, -2.5, 1e20, NAN, INFINITY};
	for (size_t i = 0; i < 8; i++)
		jsonw_number(w, v[i]);
}

static void fill_hundredths(struct jsonw *w)
{
	const double v[] = {1.234, 2.5, 1200, 0.999, NAN, -INFINITY};
	for (size_t i = 0; i < 6; i++)
		jsonw_number_2dp(w, v[i]);
}

/* money: exact micro-dollars, rounded half away from zero to cents, trailing zeros trimmed; then
 * times (0 is null) and a raw value */
static void fill_money(struct jsonw *w)
{
	const micro_t v[] = {12500000, 0, 1000000, 5000, 4999, -1234567, 123456789012};
	for (size_t i = 0; i < 7; i++)
		jsonw_money(w, v[i]);
	jsonw_money_or_null(w, 10000, 0);
	jsonw_time(w, 0);
	jsonw_time(w, 86400 + 3661);
	jsonw_raw(w, "{\"x\":1}", 7);
}

static void check_values(void)
{
	CHECK_STR(array_of(fill_ints), "[0,-42,9223372036854775807,-9223372036854775808,null,7,true,false,null]");
	CHECK_STR(array_of(fill_round_trip), "[3001,38287.356322,0.1,9.240576,-2.5,1e+20,null,null]");
	CHECK_STR(array_of(fill_hundredths), "[1.23,2.5,1200,1,null,null]");
	CHECK_STR(array_of(fill_money), "[12.5,0,1,0.01,0,-1.23,123456.79,null,null,\"1970-01-02T01:01:01Z\",{\"x\":1}]");
}

static void build(struct jsonw *w)
{
	struct kv tags[] = {{(char *)"k", (char *)"v"}, {(char *)"e\"q", NULL}};
	const char *const names[] = {"a", "b"};
	jsonw_object(w);
	jsonw_key_str(w, "s", "x");
	jsonw_key(w, "list");
	jsonw_array(w);
	jsonw_int(w, 1);
	jsonw_object(w);
	jsonw_end(w);
	jsonw_array(w);
	jsonw_end(w);
	jsonw_str_array(w, names, 2);
	jsonw_end(w);
	jsonw_key(w, "tags");
	jsonw_kv_object(w, tags, 2);
	jsonw_key_money(w, "usd", 1230000);
	jsonw_end(w);
}

static void check_nesting_and_styles(void)
{
	struct buf b = BUF_INIT;
	struct jsonw w;
	jsonw_init(&w, &b, JSONW_COMPACT);
	build(&w);
	CHECK_I64(w.depth, 0);
	CHECK_STR(done(&b), "{\"s\":\"x\",\"list\":[1,{},[],[\"a\",\"b\"]],\"tags\":{\"k\":\"v\",\"e\\\"q\":null},\"usd\":1.23}");

	jsonw_init(&w, &b, JSONW_SPACED);
	build(&w);
	CHECK_STR(done(&b), "{\"s\": \"x\", \"list\": [1, {}, [], [\"a\", \"b\"]], \"tags\": {\"k\": \"v\", \"e\\\"q\": null}, \"usd\": 1.23}");

	jsonw_init(&w, &b, JSONW_PRETTY);
	build(&w);
	CHECK_STR(done(&b), "{\n"
			    "  \"s\": \"x\",\n"
			    "  \"list\": [\n"
			    "    1,\n"
			    "    {},\n"
			    "    [],\n"
			    "    [\n"
			    "      \"a\",\n"
			    "      \"b\"\n"
			    "    ]\n"
			    "  ],\n"
			    "  \"tags\": {\n"
			    "    \"k\": \"v\",\n"
			    "    \"e\\\"q\": null\n"
			    "  },\n"
			    "  \"usd\": 1.23\n"
			    "}");

	/* pretty with inline arrays: an array of scalars (and all inside it) on one line, spaced; an
	 * array that starts with a container stays pretty; an empty array is [] */
	jsonw_init(&w, &b, JSONW_PRETTY_INLINE);
	build(&w);
	CHECK_I64(w.inline_depth, 0);
	CHECK_STR(done(&b), "{\n"
			    "  \"s\": \"x\",\n"
			    "  \"list\": [1, {}, [], [\"a\", \"b\"]],\n"
			    "  \"tags\": {\n"
			    "    \"k\": \"v\",\n"
			    "    \"e\\\"q\": null\n"
			    "  },\n"
			    "  \"usd\": 1.23\n"
			    "}");
	jsonw_init(&w, &b, JSONW_PRETTY_INLINE);
	jsonw_object(&w);
	jsonw_key(&w, "Statement");
	jsonw_array(&w);
	for (int i = 0; i < 2; i++) {
		jsonw_object(&w);
		jsonw_key(&w, "Action");
		jsonw_array(&w);
		jsonw_str(&w, "ec2:A");
		jsonw_object(&w); /* inside a one-line array, an object is one line too */
		jsonw_key_int(&w, "n", i);
		jsonw_key(&w, "m");
		jsonw_array(&w);
		jsonw_end(&w);
		jsonw_end(&w);
		jsonw_end(&w);
		jsonw_key(&w, "Empty");
		jsonw_array(&w);
		jsonw_end(&w);
		jsonw_key(&w, "Nested");
		jsonw_array(&w);
		jsonw_array(&w);
		jsonw_int(&w, 1);
		jsonw_int(&w, 2);
		jsonw_end(&w);
		jsonw_end(&w);
		jsonw_key_str(&w, "Resource", "*");
		jsonw_end(&w);
	}
	jsonw_end(&w);
	jsonw_end(&w);
	CHECK_STR(done(&b), "{\n"
			    "  \"Statement\": [\n"
			    "    {\n"
			    "      \"Action\": [\"ec2:A\", {\"n\": 0, \"m\": []}],\n"
			    "      \"Empty\": [],\n"
			    "      \"Nested\": [\n"
			    "        [1, 2]\n"
			    "      ],\n"
			    "      \"Resource\": \"*\"\n"
			    "    },\n"
			    "    {\n"
			    "      \"Action\": [\"ec2:A\", {\"n\": 1, \"m\": []}],\n"
			    "      \"Empty\": [],\n"
			    "      \"Nested\": [\n"
			    "        [1, 2]\n"
			    "      ],\n"
			    "      \"Resource\": \"*\"\n"
			    "    }\n"
			    "  ]\n"
			    "}");

	/* one element a line, as the plan and inventory documents put their volumes */
	jsonw_init(&w, &b, JSONW_COMPACT);
	jsonw_object(&w);
	jsonw_key(&w, "volumes");
	jsonw_array(&w);
	for (int i = 0; i < 3; i++) {
		jsonw_lead(&w, "\n");
		jsonw_object(&w);
		jsonw_key_int(&w, "i", i);
		jsonw_end(&w);
	}
	jsonw_layout(&w, "\n");
	jsonw_end(&w);
	jsonw_key_int(&w, "n", 3);
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
	CHECK_STR(done(&b), "{\"volumes\":[\n{\"i\":0},\n{\"i\":1},\n{\"i\":2}\n],\"n\":3}\n");

	/* a lead replaces the spaced style's blank after the comma (the bench "jobs" member) */
	jsonw_init(&w, &b, JSONW_SPACED);
	jsonw_object(&w);
	jsonw_key_int(&w, "id", 1);
	jsonw_lead(&w, "\n   ");
	jsonw_key(&w, "jobs");
	jsonw_array(&w);
	jsonw_end(&w);
	jsonw_end(&w);
	CHECK_STR(done(&b), "{\"id\": 1,\n   \"jobs\": []}");

	/* a key that is not a literal is escaped like any string */
	const char *key = getenv("JSONW_TEST_NO_SUCH_VARIABLE") ? "" : "a\tb";
	jsonw_init(&w, &b, JSONW_COMPACT);
	jsonw_object(&w);
	jsonw_key_any(&w, key);
	jsonw_str(&w, "\x02");
	jsonw_end(&w);
	CHECK_STR(done(&b), "{\"a\\tb\":\"\\u0002\"}");
	buf_release(&b);
}

#ifndef NDEBUG
enum misuse { END_WITH_NOTHING_OPEN, VALUE_WITHOUT_KEY, KEY_IN_ARRAY, END_AFTER_KEY };

/* 1 when the misuse, run in a child, dies of an assert (SIGABRT). */
static int aborts(enum misuse what)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(2);
		struct buf b = BUF_INIT;
		struct jsonw w;
		jsonw_init(&w, &b, JSONW_COMPACT);
		if (what == KEY_IN_ARRAY)
			jsonw_array(&w);
		else if (what != END_WITH_NOTHING_OPEN)
			jsonw_object(&w);
		if (what == VALUE_WITHOUT_KEY)
			jsonw_int(&w, 1);
		else if (what == KEY_IN_ARRAY || what == END_AFTER_KEY)
			jsonw_key(&w, "k");
		if (what == END_AFTER_KEY || what == END_WITH_NOTHING_OPEN)
			jsonw_end(&w);
		_exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}
#endif

/* jsonw_document: the object opened with "schema" first, in the style asked for */
static void check_document(void)
{
	struct buf b = BUF_INIT;
	struct jsonw w;
	jsonw_document(&w, &b, JSONW_COMPACT, "ebsmigrate.test/v1");
	jsonw_key_int(&w, "n", 1);
	jsonw_end(&w);
	CHECK_STR(done(&b), "{\"schema\":\"ebsmigrate.test/v1\",\"n\":1}");
	jsonw_document(&w, &b, JSONW_SPACED, "x/v1");
	jsonw_key(&w, "a");
	jsonw_null(&w);
	jsonw_end(&w);
	CHECK_STR(done(&b), "{\"schema\": \"x/v1\", \"a\": null}");
}

/* %.*g figures (the saved exports' %.17g and %.10g, byte for byte as printf writes them), and the
 * shape every AWS JSON-protocol request body and saved export now takes through the writer:
 * compact, keys in call order, integers bare, NextToken escaped, one element a line by lead. */
static void check_g_and_request_shapes(void)
{
	struct buf b = BUF_INIT;
	struct jsonw w;
	jsonw_init(&w, &b, JSONW_COMPACT);
	jsonw_array(&w);
	jsonw_number_g(&w, 0.1, 17);
	jsonw_number_g(&w, 73.59, 17);
	jsonw_number_g(&w, 100, 17);
	jsonw_number_g(&w, 77.5, 10);
	jsonw_number_g(&w, 1.0 / 3, 10);
	jsonw_number_g(&w, NAN, 17);
	jsonw_number_g(&w, -INFINITY, 10);
	jsonw_end(&w);
	CHECK_STR(done(&b), "[0.10000000000000001,73.590000000000003,100,77.5,0.3333333333,null,null]");

	/* a LookupEvents page request as aws_cloudtrail.c wrote it by hand before */
	jsonw_init(&w, &b, JSONW_COMPACT);
	jsonw_object(&w);
	jsonw_key(&w, "LookupAttributes");
	jsonw_array(&w);
	jsonw_object(&w);
	jsonw_key_str(&w, "AttributeKey", "EventName");
	jsonw_key_str(&w, "AttributeValue", "ModifyVolume");
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_key_int(&w, "StartTime", 1793400000);
	jsonw_key_int(&w, "EndTime", 1793490000);
	jsonw_key_int(&w, "MaxResults", 50);
	jsonw_key_str(&w, "NextToken", "a\"b/c\n");
	jsonw_end(&w);
	CHECK_STR(done(&b), "{\"LookupAttributes\":[{\"AttributeKey\":\"EventName\",\"AttributeValue\":\"ModifyVolume\"}],"
			    "\"StartTime\":1793400000,\"EndTime\":1793490000,\"MaxResults\":50,"
			    "\"NextToken\":\"a\\\"b/c\\n\"}");

	/* an export: {"Volumes":[ one element a line ]} with the closing bracket on its own line;
	 * an empty list keeps its one blank line */
	for (int n = 0; n <= 2; n++) {
		jsonw_init(&w, &b, JSONW_COMPACT);
		jsonw_object(&w);
		jsonw_key(&w, "Volumes");
		jsonw_array(&w);
		for (int i = 0; i < n; i++) {
			jsonw_lead(&w, "\n");
			jsonw_object(&w);
			jsonw_key_int(&w, "Size", i + 1);
			jsonw_key(&w, "Encrypted");
			jsonw_bool(&w, i);
			jsonw_end(&w);
		}
		jsonw_layout(&w, "\n");
		jsonw_end(&w);
		jsonw_end(&w);
		jsonw_layout(&w, "\n");
		CHECK_STR(done(&b), n == 0   ? "{\"Volumes\":[\n]}\n"
				    : n == 1 ? "{\"Volumes\":[\n{\"Size\":1,\"Encrypted\":false}\n]}\n"
					     : "{\"Volumes\":[\n{\"Size\":1,\"Encrypted\":false},\n{\"Size\":2,\"Encrypted\":true}\n]}\n");
	}
}

/* .ascii: Python's json.dumps(ensure_ascii=True) strings (the price-list offer files), keys
 * included; the offer file's one-space layout by leads, with and without elements. */
static void check_ascii(void)
{
	struct buf b = BUF_INIT;
	jsonw_add_str_ascii(&b, "caf\xc3\xa9 \xf0\x9f\x98\x80 \x08\x0c\x01 \"q\" \\ \xff!");
	CHECK_STR(done(&b), "\"caf\\u00e9 \\ud83d\\ude00 \\b\\f\\u0001 \\\"q\\\" \\\\ \\ufffd!\"");
	jsonw_add_str_ascii(&b, NULL);
	CHECK_STR(done(&b), "null");
	for (int n = 0; n <= 2; n++) {
		struct jsonw w;
		jsonw_init(&w, &b, JSONW_SPACED);
		w.ascii = 1;
		jsonw_object(&w);
		static const char *const keys[] = {"FormatVersion", "Pr\xc3\xaf" "ceList"}; /* a key escaped too */
		for (int k = 0; k < 2; k++) {
			jsonw_lead(&w, "\n ");
			jsonw_key_any(&w, keys[k]);
			if (k == 0)
				jsonw_str(&w, "aws_v1");
		}
		jsonw_array(&w);
		for (int i = 0; i < n; i++) {
			jsonw_lead(&w, "\n  ");
			jsonw_str(&w, "{\"a\":\"\xc3\xa9\"}");
		}
		if (n)
			jsonw_layout(&w, "\n ");
		jsonw_end(&w);
		jsonw_layout(&w, "\n");
		jsonw_end(&w);
		jsonw_layout(&w, "\n");
		const char *el = "\"{\\\"a\\\":\\\"\\u00e9\\\"}\"";
		char want[256];
		snprintf(want, sizeof want, "{\n \"FormatVersion\": \"aws_v1\",\n \"Pr\\u00efceList\": [%s%s%s%s%s]\n}\n",
			 n ? "\n  " : "", n ? el : "", n > 1 ? ",\n  " : "", n > 1 ? el : "", n ? "\n " : "");
		CHECK_STR(done(&b), want);
	}
}

struct record {
	int id;
	const char *name;
};

static void write_record(struct jsonw *w, const void *e)
{
	const struct record *r = e;
	jsonw_object(w);
	jsonw_key_int(w, "id", r->id);
	jsonw_key_str(w, "name", r->name);
	jsonw_end(w);
}

/* jsonw_key_records: one record a line, the closing bracket on its own line (an empty array too,
 * as the documents always wrote it). Its spilling is test_spill's (the inventory document). */
static void check_records(void)
{
	static const struct record two[] = {{1, "a"}, {2, "b\"c"}};
	struct buf b = BUF_INIT;
	for (size_t n = 0; n <= 2; n++) {
		struct jsonw w;
		jsonw_document(&w, &b, JSONW_COMPACT, "t/v1");
		jsonw_key_records(&w, "rows", two, n, sizeof two[0], write_record, NULL);
		jsonw_key_int(&w, "after", 7);
		jsonw_end(&w);
		CHECK_STR(done(&b), n == 0   ? "{\"schema\":\"t/v1\",\"rows\":[\n],\"after\":7}"
				    : n == 1 ? "{\"schema\":\"t/v1\",\"rows\":[\n{\"id\":1,\"name\":\"a\"}\n],\"after\":7}"
					     : "{\"schema\":\"t/v1\",\"rows\":[\n{\"id\":1,\"name\":\"a\"},\n"
					       "{\"id\":2,\"name\":\"b\\\"c\"}\n],\"after\":7}");
	}
}

int main(void)
{
	check_control_bytes();
	check_document();
	check_g_and_request_shapes();
	check_ascii();
	check_records();
	check_values();
	check_nesting_and_styles();
#ifndef NDEBUG
	CHECK(aborts(END_WITH_NOTHING_OPEN));
	CHECK(aborts(VALUE_WITHOUT_KEY));
	CHECK(aborts(KEY_IN_ARRAY));
	CHECK(aborts(END_AFTER_KEY));
#endif
	return tap_done();
}
