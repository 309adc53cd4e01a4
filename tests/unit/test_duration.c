/* test_duration.c - the duration syntax options take (em_parse_duration: --max-plan-age,
 * --lookback) and the age apply prints (em_format_duration). */
#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "tap.h"

static int64_t parsed(const char *s)
{
	int64_t v = -1;
	return em_parse_duration(s, &v) ? -1 : v;
}

static void check_format(int64_t s, const char *want)
{
	struct buf b = BUF_INIT;
	em_format_duration(s, &b);
	CHECK_STR(b.s, want);
	buf_release(&b);
}

int main(void)
{
	CHECK_I64(parsed("7d"), 7 * 86400);
	CHECK_I64(parsed("36h"), 36 * 3600);
	CHECK_I64(parsed("90m"), 5400);
	CHECK_I64(parsed("45s"), 45);
	CHECK_I64(parsed("3600"), 3600);
	CHECK_I64(parsed("0"), 0);
	CHECK_I64(parsed("0d"), 0);
	/* refused: no number, units we do not take, signs, spaces, trailing text, overflow */
	CHECK_I64(parsed(""), -1);
	CHECK_I64(parsed("d"), -1);
	CHECK_I64(parsed("7x"), -1);
	CHECK_I64(parsed("7w"), -1);
	CHECK_I64(parsed("-1d"), -1);
	CHECK_I64(parsed("+1d"), -1);
	CHECK_I64(parsed(" 1d"), -1);
	CHECK_I64(parsed("1d "), -1);
	CHECK_I64(parsed("1h30m"), -1);
	CHECK_I64(parsed("none"), -1); /* the caller's word, not a duration */
	CHECK_I64(parsed("999999999999999999d"), -1);
	CHECK_I64(parsed("99999999999999999999"), -1);
	CHECK(em_parse_duration(NULL, &(int64_t){0}) != 0);
	check_format(0, "0s");
	check_format(-5, "0s");
	check_format(59, "59s");
	check_format(60, "1m");
	check_format(3599, "59m");
	check_format(2 * 3600 + 5 * 60 + 9, "2h 5m");
	check_format(86399, "23h 59m");
	check_format(7 * 86400, "7d 0h");
	check_format(8 * 86400 + 2 * 3600 + 59, "8d 2h");
	return tap_done();
}
