/* test_cmd_doc.c - what completions and man pages read from the command tables: the values an
 * option's help text enumerates (cmd_option_values), the positional words of usage lines
 * (cmd_positional_words), and the roff of a man page (escapes, examples, every option). The
 * command table here is the test's own, with texts shaped like the real ones. */
#include <string.h>

#include "ebsmigrate/buf.h"
#include "cmd.h"
#include "cmd_doc.h"
#include "tap.h"

static int fake_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	return 0;
}

static const struct cmd_option fake_options[] = {
	{"format", 0, ARG_REQUIRED, "FORMAT", "table (default), json, csv or markdown", 1},
	{"output", 'o', ARG_REQUIRED, "FILE", "write the result to FILE (atomically) instead of stdout", 2},
	{"dry-run", 0, ARG_NONE, NULL, "only show what would be done; a \\ backslash", 3},
	{NULL, 0, 0, NULL, NULL, 0},
};
static const char *const fake_usage[] = {"refresh [--region CODE...]", "show|list [--format table|json]",
					 "--from-saved DIR", NULL};
static const struct cmd_help fake_help = {
	.usage = fake_usage,
	.description = "First paragraph.\n\n.dot at a line start, and -dashes-.\n\nExamples:\n  fake show --format json\n",
	.options = fake_options,
};
static const char *const help_usage[] = {"[COMMAND]", NULL};
static const struct cmd_help fake_help_help = {.usage = help_usage};

static const struct cmd fake_commands[] = {
	{"fake", fake_cmd, 0, "a fake command", &fake_help},
	{"help", fake_cmd, 0, "help", &fake_help_help},
	{NULL, NULL, 0, NULL, NULL},
};

static size_t values(const char *help, cmd_word *out)
{
	struct cmd_option o = {"x", 0, ARG_REQUIRED, "X", help, 1};
	return cmd_option_values(&o, out, 16);
}

int main(void)
{
	cmd_register(fake_commands);
	cmd_word w[16];
	CHECK_I64(values("table (default), json, csv or markdown", w), 4);
	CHECK_STR(w[0], "table");
	CHECK_STR(w[3], "markdown");
	/* remarks in parentheses, ", or", a scope prefix, a default mentioned inside a remark */
	CHECK_I64(values("savings (default), oldest (plan order) or risk (small, simple first)", w), 3);
	CHECK_STR(w[1], "oldest");
	CHECK_STR(w[2], "risk");
	CHECK_I64(values("plan (default; also inventory and report), apply, bench, or all", w), 4);
	CHECK_STR(w[3], "all");
	CHECK_I64(values("show, list, diff: table (default) or json", w), 2);
	CHECK_STR(w[0], "table");
	CHECK_I64(values("run: randread-qd32, latency-qd1 or all (repeatable; default all)", w), 3);
	CHECK_STR(w[1], "latency-qd1");
	CHECK_I64(values("month (default) or year: the period of the money columns", w), 2);
	/* prose, and lists without a default, are not value lists */
	CHECK_I64(values("write the result to FILE (atomically) instead of stdout", w), 0);
	CHECK_I64(values("run: benchmark this directory with the local fio", w), 0);
	CHECK_I64(values("gp2 or gp3", w), 0);
	CHECK_I64(values("AWS profile", w), 0);
	struct cmd_option flag = {"all", 0, ARG_NONE, NULL, "table (default) or json", 1};
	CHECK_I64(cmd_option_values(&flag, w, 16), 0);
	/* at most max values are written */
	CHECK_I64(cmd_option_values(&fake_options[0], w, 2), 2);

	int takes_command;
	CHECK_I64(cmd_positional_words(&fake_commands[0], w, 16, &takes_command), 3);
	CHECK_STR(w[0], "refresh");
	CHECK_STR(w[1], "show");
	CHECK_STR(w[2], "list");
	CHECK_I64(takes_command, 0);
	CHECK_I64(cmd_positional_words(&fake_commands[1], w, 16, &takes_command), 0);
	CHECK_I64(takes_command, 1);

	struct buf b = BUF_INIT;
	cmd_man_page(&b, &fake_commands[0], "2026-01-02");
	CHECK(strstr(b.s, ".TH EBSMIGRATE\\-FAKE 1 \"2026-01-02\"") == b.s);
	CHECK(strstr(b.s, ".SH NAME\nebsmigrate\\-fake \\- a fake command\n") != NULL);
	CHECK(strstr(b.s, ".B ebsmigrate fake\nshow|list [\\-\\-format table|json]\n") != NULL);
	CHECK(strstr(b.s, "\\&.dot at a line start, and \\-dashes\\-.\n") != NULL);
	CHECK(strstr(b.s, ".RS 4\n.nf\nfake show \\-\\-format json\n.fi\n.RE\n") != NULL);
	CHECK(strstr(b.s, ".TP\n\\fB\\-o\\fR, \\fB\\-\\-output\\fR \\fIFILE\\fR\n") != NULL);
	CHECK(strstr(b.s, "a \\e backslash") != NULL);
	CHECK(strstr(b.s, ".SH GLOBAL OPTIONS\n") != NULL);
	CHECK(strstr(b.s, "docs/fake.md") != NULL);
	buf_release(&b);
	cmd_man_page(&b, NULL, "2026-01-02");
	CHECK(strstr(b.s, ".BR ebsmigrate\\-fake (1)\na fake command\n") != NULL);
	CHECK(strstr(b.s, ".BR ebsmigrate\\-help (1)\n") != NULL);
	buf_release(&b);
	CHECK_STR(cmd_doc_page("rbac"), "docs/policy.md");
	CHECK_STR(cmd_doc_page("plan"), "docs/plan.md");
	return tap_done();
}
