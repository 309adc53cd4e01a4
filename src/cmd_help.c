/*
 * cmd_help.c - `ebsmigrate help [COMMAND]` and `ebsmigrate version`.
 */
#include <stdio.h>

#include "ebsmigrate/cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/log.h"

static const char *const help_usage[] = {"[COMMAND]", NULL};
const struct cmd_help help_help = {
	.usage = help_usage,
	.description = "Without a command, lists the commands. With one, prints its usage, options, global "
		       "options and exit codes.",
};

static const char *const version_usage[] = {"", NULL};
const struct cmd_help version_help = {.usage = version_usage, .description = "Prints the version (same as --version)."};

int cmd_help(struct cmd_ctx *ctx, int argc, char **argv)
{
	char **rest;
	int n_rest;
	int rc = cmd_parse(ctx, cmd_find("help"), argc, argv, NULL, NULL, &rest, &n_rest);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (n_rest == 0) {
		printf("usage: ebsmigrate [GLOBAL OPTIONS] COMMAND [OPTIONS]\n\nCommands:\n");
		for (const struct cmd *c = commands; c->name; c++)
			printf("  %-10s %s\n", c->name, c->summary);
		printf("\nRun 'ebsmigrate help COMMAND' for a command's options. Documentation: docs/README.md\n");
		return EXIT_OK;
	}
	const struct cmd *c = cmd_find(rest[0]);
	if (!c) {
		log_error("unknown command '%s'; run 'ebsmigrate help' for the list", rest[0]);
		return EXIT_USAGE;
	}
	cmd_print_help(c);
	return EXIT_OK;
}

int cmd_version(struct cmd_ctx *ctx, int argc, char **argv)
{
	char **rest;
	int n_rest;
	int rc = cmd_parse(ctx, cmd_find("version"), argc, argv, NULL, NULL, &rest, &n_rest);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	printf("ebsmigrate %s\n", EM_VERSION);
	return EXIT_OK;
}
