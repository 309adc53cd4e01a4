/*
 * cmd_help.c - `ebsmigrate help [COMMAND]` and `ebsmigrate help --man [COMMAND]` (the manual
 * page in roff, from the same tables; the build writes every page with it).
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "cmd_doc.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/log.h"

enum { OPT_MAN = 1 };

static const struct cmd_option help_options[] = {
	{"man", 0, ARG_NONE, NULL, "print the manual page (roff): ebsmigrate(1), or ebsmigrate-COMMAND(1)", OPT_MAN},
	CMD_OPTIONS_END,
};

const struct cmd_help help_help = {
	.usage = CMD_USAGE(
		"[COMMAND]",
		"--man [COMMAND]"),
	.description = "Without a command, lists the commands. With one, prints its usage, options, global "
		       "options and exit codes. With --man, the same as a manual page (what `cmake --install` "
		       "installs as ebsmigrate(1) and ebsmigrate-COMMAND(1)); view one with "
		       "`ebsmigrate help --man plan | man -l -`.",
	.options = help_options,
};

static int on_option(void *st, int id, const char *arg)
{
	if (id == OPT_MAN)
		*(int *)st = 1;
	return 0;
}

int cmd_help(struct cmd_ctx *ctx, int argc, char **argv)
{
	char **rest;
	int n_rest, man = 0;
	int rc;
	if (cmd_start(ctx, "help", argc, argv, on_option, &man, NULL, &rest, &n_rest, &rc))
		return rc;
	const struct cmd *c = NULL;
	if (n_rest > 1) {
		log_error("help: one command at a time ('%s' is extra)", rest[1]);
		return EXIT_USAGE;
	}
	if (n_rest == 1 && !(c = cmd_find(rest[0]))) {
		log_error("unknown command '%s'; run 'ebsmigrate help' for the list", rest[0]);
		return EXIT_USAGE;
	}
	if (man) {
		struct buf b = BUF_INIT;
		cmd_man_page(&b, c, cmd_build_date());
		rc = cmd_write_output(NULL, &b);
		buf_release(&b);
		return rc;
	}
	if (!c) {
		printf("usage: ebsmigrate [GLOBAL OPTIONS] COMMAND [OPTIONS]\n\nCommands:\n");
		cmd_print_commands(stdout);
		printf("\nRun 'ebsmigrate help COMMAND' for a command's options. Documentation: docs/README.md\n");
		return EXIT_OK;
	}
	cmd_print_help(c);
	return EXIT_OK;
}
