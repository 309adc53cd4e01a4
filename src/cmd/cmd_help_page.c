/*
 * cmd_help_page.c - a command's help page, as `help COMMAND` and `COMMAND --help` print it:
 * usage lines, the description wrapped to 78 columns, the option tables (its own, its shared
 * group, the global options), exit codes and the reference document, all from the command's
 * struct cmd_help, so help cannot drift from what the parser accepts.
 *
 * Entry point: cmd_print_help.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "cmd_doc.h"

static void print_wrapped(FILE *f, const char *text, int indent, int width)
{
	/* Paragraphs separated by blank lines; lines starting with two spaces are kept verbatim. */
	const char *p = text;
	int col = 0;
	while (*p) {
		if (*p == '\n') {
			fputc('\n', f);
			col = 0;
			p++;
			if (*p == ' ' && p[1] == ' ') {
				const char *e = strchr(p, '\n');
				size_t n = e ? (size_t)(e - p) : strlen(p);
				fprintf(f, "%*s%.*s", indent, "", (int)n, p);
				p += n;
				col = 1;
			}
			continue;
		}
		size_t wl = strcspn(p, " \n");
		if (col == 0) {
			fprintf(f, "%*s", indent, "");
			col = indent;
		} else if (col + 1 + (int)wl > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, wl, f);
		col += (int)wl;
		p += wl;
		while (*p == ' ')
			p++;
	}
	if (col)
		fputc('\n', f);
}

static void print_options(const struct cmd_option *o)
{
	for (size_t i = 0; o && o[i].long_name; i++) {
		struct buf b = BUF_INIT;
		if (o[i].short_name)
			buf_addf(&b, "-%c, ", o[i].short_name);
		else
			buf_adds(&b, "    ");
		buf_addf(&b, "--%s", o[i].long_name);
		if (o[i].arg == ARG_REQUIRED)
			buf_addf(&b, " %s", o[i].arg_name ? o[i].arg_name : "VALUE");
		if (b.len < 28)
			printf("  %-28s %s\n", b.s, o[i].help);
		else
			printf("  %s\n  %-28s %s\n", b.s, "", o[i].help);
		buf_release(&b);
	}
}

void cmd_print_help(const struct cmd *cmd)
{
	const struct cmd_help *h = cmd->help;
	printf("ebsmigrate %s - %s\n\n", cmd->name, cmd->summary);
	if (h && h->usage) {
		printf("Usage:\n");
		for (size_t i = 0; h->usage[i]; i++)
			printf("  ebsmigrate %s%s%s\n", cmd->name, h->usage[i][0] ? " " : "", h->usage[i]);
		printf("\n");
	}
	if (h && h->description) {
		print_wrapped(stdout, h->description, 0, 78);
		printf("\n");
	}
	if (h && h->options && h->options[0].long_name) {
		printf("Options:\n");
		print_options(h->options);
		printf("\n");
	}
	if (h && h->shared) {
		printf("Live inventory options:\n");
		print_options(h->shared);
		printf("\n");
	}
	printf("Global options:\n");
	print_options(cmd_global_options());
	printf("\nExit codes:\n  0 ok, 1 runtime error, 2 usage or bad input, 3 partial, 4 verification failed,\n"
	       "  5 not verified (nothing proved either way); 130, 143 stopped by SIGINT, SIGTERM (nothing\n"
	       "  half-written; docs/exit-codes.md#signals)\n");
	if (h && h->exit_codes)
		print_wrapped(stdout, h->exit_codes, 2, 78);
	printf("\nSee %s for the full reference.\n", cmd_doc_page(cmd->name));
}
