/*
 * test_strlist.c - the string list: appending (owned and borrowed), splitting, membership,
 * sorting and release (and em_release_array of common.h) leave the values and counts asserted here.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/strlist.h"
#include "tap.h"

static void test_append_owned(void)
{
	struct strlist l = STRLIST_INIT_DUP;
	char word[8] = "alpha";
	const char *stored = strlist_append(&l, word);
	strcpy(word, "beta"); /* the list kept its own copy */
	CHECK(stored != word);
	CHECK_STR(l.items[0], "alpha");
	for (int i = 0; i < 100; i++) /* growth past the first allocation */
		strlist_append(&l, i % 2 ? "odd" : "even");
	CHECK_I64(l.n, 101);
	CHECK_STR(l.items[100], "odd"); /* items[k] is the (k-1)th appended */
	CHECK_STR(l.items[99], "even");
	strlist_append_nodup(&l, xstrdup("taken"));
	CHECK_STR(l.items[101], "taken");
	strlist_release(&l);
	CHECK_I64(l.n, 0);
	CHECK(l.items == NULL);
	CHECK_I64(l.owns, 1);
}

static void test_append_borrowed(void)
{
	struct strlist l = STRLIST_INIT_NODUP;
	const char *arg = "us-east-1";
	CHECK(strlist_append(&l, arg) == arg); /* borrowed: the same pointer */
	CHECK(l.items[0] == arg);
	CHECK_I64(l.n, 1);
	strlist_release(&l);
	CHECK_I64(l.n, 0);
}

static void test_split(void)
{
	struct strlist l = STRLIST_INIT_DUP;
	CHECK_I64(strlist_split(&l, "cluster,namespace,tag:team", ','), 3);
	CHECK_STR(l.items[0], "cluster");
	CHECK_STR(l.items[1], "namespace");
	CHECK_STR(l.items[2], "tag:team");
	CHECK_I64(strlist_split(&l, "a,,b,", ','), 4); /* appended after the first three */
	CHECK_I64(l.n, 7);
	CHECK_STR(l.items[3], "a");
	CHECK_STR(l.items[4], "");
	CHECK_STR(l.items[5], "b");
	CHECK_STR(l.items[6], "");
	CHECK_I64(strlist_split(&l, "", ','), 1);
	CHECK_STR(l.items[7], "");
	CHECK_I64(strlist_split(&l, "x:y", ':'), 2);
	CHECK_STR(l.items[9], "y");
	strlist_release(&l);
}

static void test_contains_and_sort(void)
{
	struct strlist l = STRLIST_INIT_DUP;
	strlist_split(&l, "volumes-b.json,instance-types.json,a.json,volumes-a.json", ',');
	CHECK(strlist_contains(&l, "a.json"));
	CHECK(!strlist_contains(&l, "a.jso"));
	CHECK(!strlist_contains(&l, "b.json"));
	strlist_sort(&l);
	CHECK_STR(l.items[0], "a.json");
	CHECK_STR(l.items[1], "instance-types.json");
	CHECK_STR(l.items[2], "volumes-a.json");
	CHECK_STR(l.items[3], "volumes-b.json");
	strlist_release(&l);
	struct strlist empty = STRLIST_INIT_NODUP;
	CHECK(!strlist_contains(&empty, ""));
	strlist_sort(&empty); /* nothing to sort, no array: fine */
	strlist_release(&empty);
	CHECK(empty.items == NULL);
}

/* The helpers for the plain `char **` arrays structs expose (warnings, notes). */
static char *fmt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xstrvfmt(fmt, ap);
	va_end(ap);
	return s;
}

static void test_strv_and_xstrvfmt(void)
{
	char **v = xmalloc(3 * sizeof *v);
	v[0] = fmt_note("volume '%s': %d GiB", "vol-0a1", 100);
	v[1] = fmt_note("%s", "");
	v[2] = fmt_note("%0300d", 7); /* longer than buf_vaddf's 256-byte stack buffer */
	CHECK_STR(v[0], "volume 'vol-0a1': 100 GiB");
	CHECK_STR(v[1], "");
	CHECK(strlen(v[2]) == 300 && v[2][299] == '7' && v[2][0] == '0');
	strv_free(v, 3); /* the sanitizer build checks that nothing leaks */
	strv_free(NULL, 0);
	CHECK_STR(buf_backslash_escape('"'), "\\\"");
	CHECK_STR(buf_backslash_escape('\\'), "\\\\");
	CHECK_STR(buf_backslash_escape('\n'), "\\n");
	CHECK_STR(buf_backslash_escape('\r'), "\\r");
	CHECK_STR(buf_backslash_escape('\t'), "\\t");
	CHECK(buf_backslash_escape('a') == NULL);
	CHECK(buf_backslash_escape(0x01) == NULL);
}

static void test_strv_addf(void)
{
	char **v = NULL;
	size_t n = 0, alloc = 0;
	for (int i = 0; i < 20; i++) /* past the first growth (16) */
		strv_addf(&v, &n, &alloc, "warning %d of '%s'", i, "plan");
	CHECK(n == 20 && alloc >= 20);
	CHECK_STR(v[0], "warning 0 of 'plan'");
	CHECK_STR(v[19], "warning 19 of 'plan'");
	strv_free(v, n);
}

struct pair_el {
	char *a, *b;
};

static int released;

static void pair_el_release(void *p)
{
	struct pair_el *e = p;
	EM_FREE_ALL(e->a, e->b);
	released++;
}

static void test_release_array(void)
{
	struct pair_el *v = xcalloc(3, sizeof *v);
	for (int i = 0; i < 3; i++) {
		v[i].a = xstrdup("left");
		v[i].b = i == 1 ? NULL : xstrdup("right"); /* a NULL field is fine */
	}
	EM_RELEASE_ARRAY(v, 3, pair_el_release);
	CHECK_I64(released, 3); /* each element once; ASan sees any leak or double free */
	EM_RELEASE_ARRAY((struct pair_el *)NULL, 0, pair_el_release);
	CHECK_I64(released, 3); /* an empty array calls nothing */
	char *flat = xcalloc(4, 1);
	em_release_array(flat, 4, 1, NULL); /* elements that own nothing */
}

int main(void)
{
	test_append_owned();
	test_append_borrowed();
	test_split();
	test_contains_and_sort();
	test_strv_and_xstrvfmt();
	test_strv_addf();
	test_release_array();
	return tap_done();
}
