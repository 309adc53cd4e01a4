/* test_selector.c - label selectors: what parses (and its canonical text, as the API server prints
 * it), what is refused (the message and column), the label key/value rules, and evaluation over
 * label sets, following the API server's labels parser case by case. */
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/selector.h"
#include "tap.h"

/* Parses sel and checks its canonical text. */
static void ok(const char *sel, const char *canonical)
{
	struct selector s;
	struct buf err = BUF_INIT, out = BUF_INIT;
	int rc = selector_parse(&s, sel, &err);
	tap_check(rc == 0, sel, __FILE__, __LINE__);
	if (rc)
		tap_check_str(err.s, "", sel, __FILE__, __LINE__);
	selector_format(&out, &s);
	tap_check_str(out.s ? out.s : "", canonical, sel, __FILE__, __LINE__);
	selector_release(&s);
	buf_release(&err);
	buf_release(&out);
}

/* sel is refused with exactly this message. */
static void bad(const char *sel, const char *message)
{
	struct selector s;
	struct buf err = BUF_INIT;
	int rc = selector_parse(&s, sel, &err);
	tap_check(rc == EM_EINPUT, sel, __FILE__, __LINE__);
	tap_check_str(err.s ? err.s : "", message, sel, __FILE__, __LINE__);
	tap_check(s.n == 0 && s.reqs == NULL, sel, __FILE__, __LINE__);
	selector_release(&s);
	buf_release(&err);
}

static void test_parse(void)
{
	ok("", "");
	ok("   ", "");
	ok("x=a,y=b,z=c", "x=a,y=b,z=c");
	ok("z=c,x=a", "x=a,z=c"); /* key order */
	ok("x!=a,y=b", "x!=a,y=b");
	ok("x==a", "x==a");
	ok("x=,z= ", "x=,z=");
	ok("x= ,z= ", "x=,z=");
	ok("x!=", "x!=");
	ok("!x", "!x");
	ok(" ! x ", "!x");
	ok("x", "x");
	ok("x>1", "x>1");
	ok("x>1,z<5", "x>1,z<5");
	ok("x in (a)", "x in (a)");
	ok("x in (b,a,b)", "x in (a,b)");
	ok("x in(a, b ,c)", "x in (a,b,c)");
	ok("x notin (a)", "x notin (a)");
	ok("x in ()", "x in ()");
	ok("x in (,a)", "x in (,a)");
	ok("x in (a,)", "x in (,a)");
	ok("x in (a,,b)", "x in (,a,b)");
	ok("x in (in,notin)", "x in (in,notin)"); /* keywords are values inside a set */
	ok("x=in", "x=in");
	ok("in", "in");                           /* and a key named in */
	ok("tier in (a),tier notin (b),!gone,app", "app,!gone,tier in (a),tier notin (b)");
	ok("app.kubernetes.io/name=db", "app.kubernetes.io/name=db");
	ok("example.com/a_b-c.d=A.b-C_1", "example.com/a_b-c.d=A.b-C_1");
	ok("\tx\n=\ra", "x=a");
}

static void test_errors(void)
{
	bad("tier in (a", "-l: 'tier in (a': missing ')' at 11");
	bad("tier in (a,", "-l: 'tier in (a,': missing ')' at 12");
	bad("tier in (", "-l: 'tier in (': missing ')' at 10");
	bad("tier in a", "-l: 'tier in a': expected '(' after 'in', found 'a' at 9");
	bad("tier notin", "-l: 'tier notin': expected '(' after 'notin', found the end at 11");
	bad("x in (a b)", "-l: 'x in (a b)': expected ',' or ')' in the set, found 'b' at 9");
	bad("x in (a=b)", "-l: 'x in (a=b)': expected ',' or ')' in the set, found '=' at 8");
	bad("x in ((a)", "-l: 'x in ((a)': expected a value, ',' or ')' in the set, found '(' at 7");
	bad("x=a||y=b", "-l: 'x=a||y=b': label value 'a||y' must consist of letters, digits, '-', '_' or '.' at 3");
	bad("x<-0", "-l: 'x<-0': label value '-0' must begin and end with a letter or digit at 3");
	bad("x==a==b", "-l: 'x==a==b': expected ',' or the end after a requirement, found '==' at 5");
	bad("!x=a", "-l: '!x=a': expected ',' or the end after a requirement, found '=' at 3");
	bad("x=a,", "-l: 'x=a,': expected a label key after ',', found the end at 5");
	bad(",x=a", "-l: ',x=a': expected a label key or '!', found ',' at 1");
	bad("=a", "-l: '=a': expected a label key or '!', found '=' at 1");
	bad("!", "-l: '!': expected a label key after '!', found the end at 2");
	bad("x=(a)", "-l: 'x=(a)': expected a value after '=', found '(' at 3");
	bad("x a", "-l: 'x a': expected an operator (=, ==, !=, in, notin, >, <) after 'x', found 'a' at 3");
	bad("x<a", "-l: 'x<a': '<' needs an integer value, found 'a' at 3");
	bad("x>1.1", "-l: 'x>1.1': '>' needs an integer value, found '1.1' at 3");
	bad("x>", "-l: 'x>': '>' needs an integer value, found '' at 3");
	bad("x>99999999999999999999", "-l: 'x>99999999999999999999': '>' needs an integer value, found "
				   "'99999999999999999999' at 3");
	bad("Tier_=a", "-l: 'Tier_=a': label key 'Tier_' must begin and end with a letter or digit at 1");
	bad("a b=c", "-l: 'a b=c': expected an operator (=, ==, !=, in, notin, >, <) after 'a', found 'b' at 3");
	bad("x=-a", "-l: 'x=-a': label value '-a' must begin and end with a letter or digit at 3");
	bad("x in (ok,b@d)", "-l: 'x in (ok,b@d)': label value 'b@d' must consist of letters, digits, '-', '_' or '.' at 10");
	bad("x=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    "-l: 'x=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': label value "
	    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' must be no more than 63 characters at 3");
	bad("/a=b", "-l: '/a=b': label key '/a' has an empty prefix before '/' at 1");
	bad("a/b/c", "-l: 'a/b/c': label key 'a/b/c' has more than one '/' (a key is [PREFIX/]NAME) at 1");
	bad("Example.com/a", "-l: 'Example.com/a': label key 'Example.com/a' has a prefix that is not a DNS subdomain "
			     "(lower-case letters, digits, '-' and '.', at most 253 characters) at 1");
	bad("a/", "-l: 'a/': label key 'a/' has an empty name at 1");
}

static void test_rules(void)
{
	const char *why;
	CHECK(selector_valid_key("a", &why));
	CHECK(selector_valid_key("A-b_c.9", &why));
	CHECK(selector_valid_key("k8s.io/x", &why));
	CHECK(!selector_valid_key("-a", &why));
	CHECK(!selector_valid_key("a.", &why));
	CHECK(!selector_valid_key("", &why));
	CHECK(!selector_valid_key("a..b/x", &why)); /* empty DNS label */
	CHECK(!selector_valid_key("-a.b/x", &why));
	CHECK(!selector_valid_key("a-.b/x", &why));
	char name63[64], name64[65], prefix254[256];
	memset(name63, 'a', 63);
	name63[63] = '\0';
	memset(name64, 'a', 64);
	name64[64] = '\0';
	CHECK(selector_valid_key(name63, &why));
	CHECK(!selector_valid_key(name64, &why));
	CHECK(selector_valid_value(name63, &why));
	CHECK(!selector_valid_value(name64, &why));
	CHECK(selector_valid_value("", &why));
	memset(prefix254, 'a', 253);
	strcpy(prefix254 + 253, "/x");
	CHECK(selector_valid_key(prefix254, &why));
	memset(prefix254, 'a', 254);
	strcpy(prefix254 + 254, "/");
	CHECK(!selector_valid_key(prefix254, &why));
}

static int matches(const char *sel, const struct kv *labels, size_t n)
{
	struct selector s;
	struct buf err = BUF_INIT;
	int m = -1;
	if (selector_parse(&s, sel, &err) == 0)
		m = selector_matches(&s, labels, n);
	selector_release(&s);
	buf_release(&err);
	return m;
}

static void test_matches(void)
{
	struct kv l[] = {{"team", "payments"}, {"tier", "db"}, {"size", "10"}, {"empty", ""}};
	size_t n = 4;
	CHECK_I64(matches("", l, n), 1);
	CHECK_I64(matches("", NULL, 0), 1);
	CHECK_I64(matches("team=payments", l, n), 1);
	CHECK_I64(matches("team==payments", l, n), 1);
	CHECK_I64(matches("team=search", l, n), 0);
	CHECK_I64(matches("team!=search", l, n), 1);
	CHECK_I64(matches("team!=payments", l, n), 0);
	CHECK_I64(matches("owner!=x", l, n), 1);   /* != matches an absent label */
	CHECK_I64(matches("owner=", l, n), 0);     /* = "" needs the label */
	CHECK_I64(matches("empty=", l, n), 1);
	CHECK_I64(matches("empty in ()", l, n), 1);
	CHECK_I64(matches("team in (search,payments)", l, n), 1);
	CHECK_I64(matches("team in (search)", l, n), 0);
	CHECK_I64(matches("team notin (search)", l, n), 1);
	CHECK_I64(matches("team notin (payments,x)", l, n), 0);
	CHECK_I64(matches("owner notin (x)", l, n), 1);
	CHECK_I64(matches("owner in (x)", l, n), 0);
	CHECK_I64(matches("team", l, n), 1);
	CHECK_I64(matches("owner", l, n), 0);
	CHECK_I64(matches("!owner", l, n), 1);
	CHECK_I64(matches("!team", l, n), 0);
	CHECK_I64(matches("size>9", l, n), 1);
	CHECK_I64(matches("size>10", l, n), 0);
	CHECK_I64(matches("size<11", l, n), 1);
	CHECK_I64(matches("team>1", l, n), 0);     /* not a number: no match */
	CHECK_I64(matches("owner<100", l, n), 0);  /* absent: no match */
	CHECK_I64(matches("team=payments,tier=db", l, n), 1);
	CHECK_I64(matches("team=payments,tier=cache", l, n), 0);
	CHECK_I64(matches("team=payments,tier!=cache,!owner,size<100", l, n), 1);
	CHECK_I64(matches("Team=payments", l, n), 0); /* keys are case-sensitive */
	CHECK_I64(matches("team=Payments", l, n), 0);
	CHECK_I64(matches("team=payments", NULL, 0), 0);
	CHECK_I64(matches("!team", NULL, 0), 1);
}

int main(void)
{
	test_parse();
	test_errors();
	test_rules();
	test_matches();
	return tap_done();
}
