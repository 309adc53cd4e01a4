/*
 * cmd_registry.c - the command table as the command layer reads it: main.c registers commands[]
 * (cmd_table.c) once, and every look-up goes through here, so the files that derive help,
 * completions and man pages from the table, and the option parser that finds a command's help,
 * call down into this file instead of up into the table that names them (no circle).
 *
 * Entry points: cmd_register, cmd_list, cmd_find, cmd_closest_command, cmd_print_commands; the
 * global options' table (cmd_global_options) and the "did you mean" rule (cmd_did_you_mean),
 * which the parser, the help page, the man pages and main.c all read: the bottom of the layer.
 * Invariant: cmd_register runs before any look-up (main.c's first step); with nothing
 * registered the table is empty (a zero row), never NULL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "cmd.h"
#include "ebsmigrate/common.h"

static const struct cmd_option global_options[] = {
	{"db", 0, ARG_REQUIRED, "FILE", "database file (default $XDG_STATE_HOME/ebsmigrate/ebsmigrate.db)", OPT_DB},
	{"now", 0, ARG_REQUIRED, "TIME", "use TIME (RFC 3339) as the current time, for reproducible runs", OPT_NOW},
	{"pricing-dir", 0, ARG_REQUIRED, "DIR",
	 "read prices from GetProducts JSON files in DIR instead of the database", OPT_PRICING_DIR},
	{"verbose", 'v', ARG_NONE, NULL, "more diagnostics on stderr, and each long phase's totals and time (twice: debug)", OPT_VERBOSE},
	{"quiet", 'q', ARG_NONE, NULL, "only errors on stderr (no progress line)", OPT_QUIET},
	{"no-color", 0, ARG_NONE, NULL, "never colour output (NO_COLOR is honoured too)", OPT_NO_COLOR},
	{"allow-insecure-http", 0, ARG_NONE, NULL,
	 "send Kubernetes credentials to an http:// server (refused otherwise; always warns)", OPT_ALLOW_INSECURE_HTTP},
	{"help", 'h', ARG_NONE, NULL, "show this help", OPT_HELP},
	CMD_OPTIONS_END,
};


const struct cmd_option *cmd_global_options(void)
{
	return global_options;
}

/* Optimal-string-alignment distance of two short lower-cased words; words longer than 64
 * characters are never close to anything we suggest. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return SIZE_MAX;
	size_t d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t best = d[i - 1][j - 1] + (ca != cb);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

const char *cmd_did_you_mean(const char *word, const char *const *candidates, size_t n)
{
	size_t len = strlen(word), limit = len <= 4 ? 1 : len <= 8 ? 2 : 3, best = SIZE_MAX;
	const char *pick = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t dist = edit_distance(word, candidates[i]);
		if (dist <= limit && dist < best) {
			best = dist;
			pick = candidates[i];
		}
	}
	return pick;
}

static const struct cmd no_commands[] = {{NULL, NULL, 0, NULL, NULL}};
static const struct cmd *registered = no_commands;

void cmd_register(const struct cmd *table)
{
	registered = table ? table : no_commands;
}

const struct cmd *cmd_list(void)
{
	return registered;
}

const struct cmd *cmd_find(const char *name)
{
	for (const struct cmd *c = registered; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

const char *cmd_closest_command(const char *word)
{
	size_t n = 0;
	for (const struct cmd *c = registered; c->name; c++)
		n++;
	const char **names = n ? xcalloc(n, sizeof *names) : NULL;
	n = 0;
	for (const struct cmd *c = registered; c->name; c++)
		names[n++] = c->name;
	const char *best = cmd_did_you_mean(word, names, n);
	free(names);
	return best;
}

void cmd_print_commands(FILE *f)
{
	for (const struct cmd *c = registered; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
}
