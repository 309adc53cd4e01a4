/*
 * cmd_doc.h - what is derived from the command tables (cmd_table.c's commands[], each command's
 * struct cmd_help, the global options): shell completions, manual pages, `version`. One source
 * for `help`, the man pages and the completions, so they cannot drift apart.
 */
#ifndef EBSMIGRATE_CMD_DOC_H
#define EBSMIGRATE_CMD_DOC_H

#include <stddef.h>

#include "ebsmigrate/buf.h"
#include "cmd.h"


/* A word the tables name: an option value or a positional argument. */
#define CMD_WORD_MAX 40
typedef char cmd_word[CMD_WORD_MAX];

/* The values an option's help text enumerates, e.g. "table (default), json, csv or markdown"
 * (after an optional "show, list: " scope prefix): lower-case words joined by ", ", " or ",
 * ", or ", one of them marked "(default". 0 when the text enumerates nothing. */
size_t cmd_option_values(const struct cmd_option *o, cmd_word *out, size_t max);
/* The first positional words of a command's usage lines: subcommands ("refresh", "show", ...)
 * or choices ("bash|zsh|fish"). *takes_command is set when a line starts with [COMMAND]
 * (help: the argument is a command name). */
size_t cmd_positional_words(const struct cmd *c, cmd_word *out, size_t max, int *takes_command);

/* A manual page in roff (man(7) macros): ebsmigrate(1) when c is NULL, else ebsmigrate-NAME(1).
 * date is the page's date (YYYY-MM-DD). */
void cmd_man_page(struct buf *out, const struct cmd *c, const char *date);

/* The document that is a command's full reference ("docs/plan.md", "docs/policy.md" for rbac),
 * as `help COMMAND` and the man pages name it. */
const char *cmd_doc_page(const char *name);

/* Build facts captured by CMake (build_info.c, generated into the executable only): the git
 * commit ("0123456789ab", "...-dirty", "unknown"), the build time (RFC 3339) and its date. */
const char *cmd_build_commit(void);
const char *cmd_build_time(void);
const char *cmd_build_date(void);

int cmd_completion(struct cmd_ctx *ctx, int argc, char **argv);
extern const struct cmd_help completion_help;

#endif
