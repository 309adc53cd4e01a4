/* test_table.c - the table writer: plain layout (two-space gaps, right-aligned numbers, no
 * trailing spaces, fixed columns), UTF-8 widths, eliding with "…" to fit a width, dropping the
 * least important columns, -o wide, --no-headers, colours, rules and the terminal width rule. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/table.h"
#include "tap.h"

static const struct table_column cols[] = {
	{"VOLUME", 0, 0, 8},
	{"GiB", TABLE_RIGHT, 0, 0},
	{"KUBERNETES", 0, 1, 10},
	{"FLAGS", 0, 2, 5},
	{"NOTE", TABLE_WIDE_ONLY, 3, 0},
};

static void fill(struct table *t)
{
	table_init(t, cols, 5);
	table_add(t, "vol-0a1b2c3d4e5f60001");
	table_addf(t, "%d", 2000);
	table_add(t, "prod/payments/data-postgres-0");
	table_add(t, "not-kubernetes,needs-provisioned-iops");
	table_add(t, "wide only");
	table_add(t, "vol-2");
	table_add(t, "8");
	table_add(t, NULL);
	table_add(t, "caf\xc3\xa9\x01");
	table_add(t, "");
}

static char *render(const struct table_options *o)
{
	struct table t;
	fill(&t);
	struct buf out = BUF_INIT;
	table_write(&out, &t, o);
	table_release(&t);
	return buf_detach(&out);
}

static size_t widest_line(const char *s)
{
	size_t best = 0;
	while (*s) {
		const char *nl = strchr(s, '\n');
		char *line = strndup(s, (size_t)(nl - s));
		size_t w = table_display_width(line);
		free(line);
		if (w > best)
			best = w;
		s = nl + 1;
	}
	return best;
}

int main(void)
{
	CHECK_I64(table_display_width("caf\xc3\xa9"), 4);
	CHECK_I64(table_display_width("e\xcc\x81"), 1);         /* e + combining acute */
	CHECK_I64(table_display_width("\xe6\x97\xa5\xe6\x9c\xac"), 4); /* two wide characters */
	CHECK_I64(table_display_width("\xff" "a"), 2);             /* an invalid byte counts one */

	/* unlimited: every column but the wide-only one, nothing elided, no trailing spaces */
	char *s = render(NULL);
	CHECK_STR(s, "VOLUME                  GiB  KUBERNETES                     FLAGS\n"
		     "vol-0a1b2c3d4e5f60001  2000  prod/payments/data-postgres-0  not-kubernetes,needs-provisioned-iops\n"
		     "vol-2                     8  -                              caf\xc3\xa9\\x01\n");
	free(s);
	/* -o wide: the wide-only column too, even with a width */
	struct table_options o = {40, 1, 0, NULL};
	s = render(&o);
	CHECK(strstr(s, "NOTE") && strstr(s, "wide only") && strstr(s, "needs-provisioned-iops  wide only\n"));
	free(s);
	/* --no-headers */
	struct table_options nh = {0, 0, 1, NULL};
	s = render(&nh);
	CHECK_STR(s, "vol-0a1b2c3d4e5f60001  2000  prod/payments/data-postgres-0  not-kubernetes,needs-provisioned-iops\n"
		     "vol-2                     8  -                              caf\xc3\xa9\\x01\n");
	free(s);
	/* a width: widest excess shrinks first, cells elided with one "…" column */
	struct table_options w70 = {70, 0, 0, NULL};
	s = render(&w70);
	CHECK_I64(widest_line(s), 70);
	CHECK(strstr(s, "\xe2\x80\xa6") != NULL);
	/* the widest excess goes first: FLAGS and KUBERNETES shrink to VOLUME's excess, then all */
	CHECK(strstr(s, "vol-0a1b2c3d4e5f600\xe2\x80\xa6  2000  prod/payments/data-po\xe2\x80\xa6  not-kubernetes,ne\xe2\x80\xa6\n") != NULL);
	free(s);
	/* narrower than the minimums: FLAGS (priority 2) goes, then KUBERNETES (1); never VOLUME, GiB */
	struct table_options w30 = {30, 0, 0, NULL};
	s = render(&w30);
	CHECK(strstr(s, "FLAGS") == NULL && strstr(s, "KUBERNETES") != NULL);
	CHECK(widest_line(s) <= 30);
	free(s);
	struct table_options w16 = {16, 0, 0, NULL};
	s = render(&w16);
	CHECK_STR(s, "VOLUME       GiB\n"
		     "vol-0a1b2\xe2\x80\xa6  2000\n"
		     "vol-2          8\n");
	free(s);
	/* always-shown columns overflow rather than vanish */
	struct table_options w5 = {5, 0, 0, NULL};
	s = render(&w5);
	CHECK(strstr(s, "GiB") != NULL && strstr(s, "VOLUME") != NULL);
	free(s);

	/* fixed columns (unlimited): padded to the width; a longer cell shifts only its row */
	static const struct table_column fixed[] = {{"ID", TABLE_FIXED, 0, 6}, {"N", TABLE_RIGHT | TABLE_FIXED, 0, 4}, {"X", 0, 0, 0}};
	struct table t;
	table_init(&t, fixed, 3);
	table_add(&t, "a");
	table_add(&t, "1");
	table_add(&t, "x");
	table_add(&t, "longer-id");
	table_add(&t, "22");
	table_add(&t, "y");
	struct buf out = BUF_INIT;
	table_write(&out, &t, NULL);
	CHECK_STR(out.s, "ID         N  X\na          1  x\nlonger-id    22  y\n");
	table_release(&t);
	buf_release(&out);

	/* colours: a cell's and a row's SGR; a rule across the shown columns */
	static const struct table_column two[] = {{"A", 0, 0, 0}, {"B", TABLE_RIGHT, 0, 0}};
	table_init(&t, two, 2);
	table_add(&t, "migrate");
	table_set_cell_sgr(&t, "32");
	table_add(&t, "1");
	table_add_rule(&t);
	table_add(&t, "TOTAL");
	table_add(&t, "10");
	table_set_row_sgr(&t, "1");
	struct table_options bold = {0, 0, 0, "1"};
	table_write(&out, &t, &bold);
	CHECK_STR(out.s, "\033[1mA         B\033[0m\n\033[32mmigrate\033[0m   1\n-----------\n\033[1mTOTAL    10\033[0m\n");
	table_release(&t);
	buf_release(&out);

	/* the terminal width: 0 when not a terminal, whatever COLUMNS says */
	setenv("COLUMNS", "100", 1);
	int fds[2];
	CHECK(pipe(fds) == 0);
	CHECK_I64(table_terminal_width(fds[1]), 0);
	close(fds[0]);
	close(fds[1]);
	return tap_done();
}
