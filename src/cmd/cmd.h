/*
 * cmd.h - the command table's contract.
 *
 * Adding a command (checklist):
 *   1. src/cmd/cmd_NAME.c with `int cmd_NAME(struct cmd_ctx *ctx, int argc, char **argv)`, its
 *      options table (struct cmd_option[], ending in CMD_OPTIONS_END) and its struct cmd_help
 *      (usage lines in CMD_USAGE, description; with -o, its formats in CMD_OUTPUT_FORMATS, the
 *      settings then parsed by cmd_start) — glue only: parse options (cmd_start*), call
 *      cmd_prepare(ctx, needs), call modules, print results. No domain logic.
 *   2. Declare it below and add a row {name, fn, needs, summary, help} to commands[] in
 *      cmd_table.c.
 *   3. docs/NAME.md (every flag, output field and exit code) and a line in docs/README.md.
 *   4. Tests: tests/cases/NNNN-name.case files for each behaviour, bad input included.
 *
 * The command layer lives in src/cmd/ (main.c, cmd_table.c, cmd_*.c) and its headers (this one,
 * cmd_doc.h, cmd_fleet.h) are private to it: modules in src/ never include them, and CMake
 * builds it as its own library (ebsmigrate_cli) on top of ebsmigrate_core.
 * Commands print (stdout: the result; stderr: diagnostics); modules below never do.
 * Exit codes: common.h EXIT_*; a command returns one.
 */
#ifndef EBSMIGRATE_CMD_H
#define EBSMIGRATE_CMD_H

#include <stdio.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/pricebook.h"

struct ledger;

enum cmd_needs {
	NEEDS_NOTHING = 0,
	NEEDS_DB = 1 << 0,     /* open (create, migrate) the database */
	NEEDS_PRICES = 1 << 1, /* load the price book (implies NEEDS_DB unless --pricing-dir) */
	NEEDS_APPLY_LOCK = 1 << 2, /* with NEEDS_DB: hold the database's apply lock from before it is opened */
};

struct scope;

/* The command context: the only mutable state shared across the program, built by main.c. */
struct cmd_ctx {
	const char *argv0;
	const char *db_path;      /* --db, else the default path (then owned via db_path_owned) */
	char *db_path_owned;
	const char *pricing_dir;  /* --pricing-dir: prices from GetProducts files, not the database */
	const char *now_arg;      /* --now as given */
	time_t now;
	int verbose, quiet;
	int color_stdout;         /* stdout is a TTY and NO_COLOR unset and no --no-color */
	int no_color;
	struct ledger *db;
	struct pricebook book;
	int have_book;
	/* Where cmd_parse puts the scoping options (CMD_SCOPE_OPTIONS, ids OPT_SCOPE_*), as it puts
	 * the output options in its result: set by a command that takes them, before cmd_start.
	 * NULL: they go to the command's on_option (metrics, whose -l means something else). */
	struct scope *scope;
};

/* One option of a command, declared as data: parsed with getopt_long, printed by help. */
enum cmd_arg { ARG_NONE = 0, ARG_REQUIRED };
struct cmd_option {
	const char *long_name;
	int short_name;      /* 0 when none */
	enum cmd_arg arg;
	const char *arg_name;  /* "FILE" */
	const char *help;
	int id;              /* passed to the on_option callback */
};

struct cmd_help {
	const char *const *usage;   /* NULL-terminated usage lines without the program name (CMD_USAGE) */
	const char *description;    /* paragraphs */
	const struct cmd_option *options; /* terminated by a zero row */
	const struct cmd_option *shared;  /* a shared group (e.g. live_options), or NULL */
	const char *exit_codes;     /* command-specific notes on exit codes, or NULL */
	const struct cmd_output_formats *output; /* CMD_OUTPUT_FORMATS where it has CMD_FORMAT_OPTIONS */
};
/* What -o/--output and --format accept: the formats, and those two of them whose result is the
 * JSON document (struct cmd_output_options.json), -1 where the command has no such format. */
struct cmd_format;
struct cmd_output_formats {
	const struct cmd_format *list;
	int json, yaml;
};
#define CMD_OUTPUT_FORMATS(LIST, JSON, YAML) (&(const struct cmd_output_formats){LIST, JSON, YAML})

/* The zero row that ends an options table. */
#define CMD_OPTIONS_END {NULL, 0, 0, NULL, NULL, 0}
/* A command's usage lines, written where its cmd_help is: `.usage = CMD_USAGE("A", "B")` is the
 * NULL-terminated array {"A", "B", NULL} (a file-scope compound literal: static storage). */
#define CMD_USAGE(...) ((const char *const[]){__VA_ARGS__, NULL})

struct cmd {
	const char *name;
	int (*fn)(struct cmd_ctx *ctx, int argc, char **argv);
	unsigned needs;
	const char *summary;
	const struct cmd_help *help;
};

/* Global option ids (shared by every command's parser). */
enum { OPT_GLOBAL_BASE = 1000, OPT_DB, OPT_NOW, OPT_VERBOSE, OPT_QUIET, OPT_NO_COLOR, OPT_HELP, OPT_PRICING_DIR,
       OPT_ALLOW_INSECURE_HTTP };

struct cmd_output_options;
/* Options: cmd_options.c (with cmd_start* and the other openings below). */
/* Parses argv (argv[0] = command name) with the command's options plus the global ones.
 * The rows of the output options (ids OPT_RESULT_BASE..OPT_RESULT_END) set result (which must
 * then not be NULL); for each other command option it calls back: return 0 to continue or an
 * EXIT_* code to stop. Leaves non-option arguments in rest and n_rest. Returns 0, EXIT_USAGE
 * (message printed), or -1 when --help was asked and printed. */
int cmd_parse(struct cmd_ctx *ctx, const struct cmd *cmd, int argc, char **argv,
	      int (*on_option)(void *st, int id, const char *arg), void *st, struct cmd_output_options *result,
	      char ***rest, int *n_rest);
/* The candidate closest to a mistyped word (edit distance with transpositions, case-insensitive),
 * or NULL when none is close enough to be what was meant (distance at most 1 for words of up
 * to 4 characters, 2 up to 8, else 3). For "did you mean" hints. */
const char *cmd_did_you_mean(const char *word, const char *const *candidates, size_t n);
/* The global options every command's parser knows (cmd_registry.c), zero-row terminated. */
const struct cmd_option *cmd_global_options(void);
/* Does the setup the command needs (database, prices; cmd_common.c, as cmd_print_visible and
 * cmd_print_warnings). Prints the error and returns an EXIT_*
 * code on failure, 0 on success. */
int cmd_prepare(struct cmd_ctx *ctx, unsigned needs);
/* Prints help for one command to stdout (cmd_help_page.c). */
void cmd_print_help(const struct cmd *cmd);
/* One line to f (with its newline, flushed), control characters made visible (buf_add_visible):
 * for result lines that quote ids, names or server messages outside a table writer. */
void cmd_print_visible(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints warnings on stderr, grouped: warnings that differ only in their quoted values ('...')
 * form one group, and a group of more than 3 prints its first one and a count ("and 767 more
 * like it; all: WHERE_ALL or -v") unless ctx->verbose. Order: first appearance. */
void cmd_print_warnings(const struct cmd_ctx *ctx, char *const *warnings, size_t n, const char *where_all);
/* Writes data to --output-file FILE atomically, or to stdout when path is NULL. Returns EXIT_*.
 * (Outputs: cmd_outputs.c, with cmd_outputs_*, cmd_spool_*, cmd_json_to_yaml, cmd_table_options.) */
int cmd_write_output(const char *path, const struct buf *data);
/* -o/--output FORMAT (--format is its alias): the formats a command offers, in the order its
 * help lists them, terminated by a NULL name; hidden ones (aliases such as md) are accepted but
 * not listed. */
struct cmd_format {
	const char *name;
	int value;
	int hidden;
};
/* The option-table rows of -o/--output and --format (LIST: the formats, the help of both; --format's
 * adds that it is the alias), of --output-file (the usual help) and of --no-headers. */
#define CMD_FORMAT_OPTIONS(LIST, OUTPUT_ID, FORMAT_ID)                                                             \
	{"output", 'o', ARG_REQUIRED, "FORMAT", LIST, OUTPUT_ID},                                                  \
	{"format", 0, ARG_REQUIRED, "FORMAT", LIST " (an alias of -o/--output)", FORMAT_ID}
#define CMD_OUTPUT_FILE_OPTION(ID)                                                                                 \
	{"output-file", 0, ARG_REQUIRED, "FILE", "write the result to FILE (atomically) instead of stdout", ID}
#define CMD_NO_HEADERS_OPTION(HELP, ID) {"no-headers", 0, ARG_NONE, NULL, HELP, ID}
/* The rows of --kubeconfig and --profile where a command reads the cluster and AWS with the usual
 * meaning (bench's and pricing's rows say which subcommand they are for, so they stay their own). */
#define CMD_KUBECONFIG_OPTION(ID)                                                                                  \
	{"kubeconfig", 0, ARG_REQUIRED, "FILE", "kubeconfig file (default: KUBECONFIG, then ~/.kube/config)", ID}
#define CMD_AWS_PROFILE_OPTION(ID) {"profile", 0, ARG_REQUIRED, "NAME", "AWS profile", ID}
/* Looks arg up in formats and stores its value in *out. When it is none of them, prints
 * `error: OPT: 'ARG' is not one of table, json, ...` (with a hint to --output-file FILE when ARG
 * looks like a file name, which -o meant before) and returns EXIT_USAGE. */
int cmd_output_format(const char *opt, const char *arg, const struct cmd_format *formats, int *out);
/* The -o/--output, --format, --output-file and --no-headers settings of a command, set while
 * cmd_start parses from the rows of those options (ids OPT_RESULT_BASE..OPT_RESULT_END, given to
 * CMD_FORMAT_OPTIONS, CMD_OUTPUT_FILE_OPTION and CMD_NO_HEADERS_OPTION), -o and --format
 * checked against the command's cmd_help.output (cmd_output_format's message and EXIT_USAGE for
 * another word). Zeroed = the first format, stdout, headers. */
enum { OPT_RESULT_BASE = 800, OPT_RESULT_OUTPUT, OPT_RESULT_FORMAT, OPT_RESULT_FILE, OPT_RESULT_NO_HEADERS,
       OPT_RESULT_END };
struct cmd_output_options {
	int format;       /* a value of the command's formats */
	int json;         /* format is the json or the yaml one (the JSON document is built) */
	const char *file; /* --output-file, or NULL for stdout */
	int no_headers;
};
/* -o yaml: replaces the JSON document in doc by its YAML (yamlout.c). Logs the error; EXIT_*. */
int cmd_json_to_yaml(struct buf *doc);
/* How a table is written (table.h): to stdout on a terminal, fitted to its width (table_terminal_width);
 * to --output-file FILE (output_file not NULL) or a pipe, unlimited; -o wide: every column
 * unelided; --no-headers: no title row. */
struct table_options;
void cmd_table_options(struct table_options *out, const char *output_file, int wide, int no_headers);

/* A command's outputs, committed together: each file is staged (a temporary next to it, mode
 * 0666 & ~umask) by cmd_outputs_add, directories by cmd_outputs_add_dir or a module writing into
 * `staging` (plan --manifests: manifest_stage); cmd_outputs_commit moves them all into place
 * (fs_staging_commit) and then writes what goes to stdout; cmd_outputs_release removes whatever
 * was not committed. So a command that fails after staging (a second output, the database
 * record) leaves nothing behind. */
struct cmd_outputs {
	struct fs_staging staging;
	const struct buf *to_stdout; /* borrowed until commit */
	FILE *stdout_spool; /* cmd_outputs_add_spool: borrowed until commit */
	FILE *yaml_spool;   /* cmd_outputs_add_document's conversion: owned, closed by release */
};
#define CMD_OUTPUTS_INIT {FS_STAGING_INIT, NULL, NULL, NULL}
/* path NULL or "-" = stdout: data is then borrowed, not copied, and written at commit (one
 * stdout output per command). Logs the error; returns EXIT_*. */
int cmd_outputs_add(struct cmd_outputs *o, const char *path, const struct buf *data);
/* cmd_outputs_add with the data in a file (a spool of a document too large to hold in memory),
 * read from its start; for stdout the FILE is borrowed until commit. */
int cmd_outputs_add_spool(struct cmd_outputs *o, const char *path, FILE *spool);
/* A directory the command fills with files of its own (inventory --save): returns a fresh
 * staging directory next to dir (owned by o) for the writer to use instead; at commit its files
 * move into dir (created if needed; same-named files replaced, others left alone). NULL after
 * logging the error. */
const char *cmd_outputs_add_dir(struct cmd_outputs *o, const char *dir);
/* The final path of a file written under a staging directory (for messages); caller frees. */
char *cmd_outputs_final_path(const struct cmd_outputs *o, const char *staged_path);
int cmd_outputs_commit(struct cmd_outputs *o);
void cmd_outputs_release(struct cmd_outputs *o);
/* A document too large to hold in memory (plan's, inventory's JSON), written in pieces: an
 * unlinked temporary file PREFIX-XXXXXX opened "w+" (NULL when it cannot be made), and the sink
 * whose cmd_spool_sink_flush (a buf_spill flush) writes each piece to spool and, when doc is not
 * NULL, to the database's copy (ledger_doc_add). Write errors show in ferror(spool), checked
 * once at the end. */
FILE *cmd_spool_open(const char *prefix);
struct ledger_doc;
struct cmd_spool_sink {
	FILE *spool;
	struct ledger_doc *doc;
};
void cmd_spool_sink_flush(void *sink, const char *s, size_t n);
/* cmd_spool_open in $TMPDIR (else /tmp): $TMPDIR/ebsmigrate-NAME-XXXXXX. */
FILE *cmd_spool_open_tmp(const char *name);

/* The one way a command's JSON document (plan's, inventory's, report's) goes out. */
/* Writes the document in pieces into spool (write(arg, spill), e.g. plan_write_json_spilled)
 * and, when record, into the database's compressed copy: *doc (ledger_doc_begin; the caller
 * finishes and frees it), else *doc NULL. Returns 0, or -1 with errno set when the spool could
 * not be written (then *doc NULL). */
int cmd_spool_document(FILE *spool, int record, void (*write)(const void *arg, const struct buf_spill *spill),
		       const void *arg, struct ledger_doc **doc);
/* The document to stdout or --output-file path (NULL or "-": stdout) as -o json or, when yaml,
 * -o yaml asks: from spool when not NULL (written by cmd_spool_document, read from its start;
 * YAML converted by streaming into a second spool that o owns), else from json in memory (YAML
 * converted into yaml_out, the caller's, kept until commit). Logs the error; returns EXIT_*. */
int cmd_outputs_add_document(struct cmd_outputs *o, const char *path, int yaml, FILE *spool, const struct buf *json,
			     struct buf *yaml_out);
/* The command table (cmd_table.c), ended by a zero row: main.c registers it (cmd_register) and
 * everything else reads it through cmd_list (cmd_registry.c), never by name, so no command file
 * calls up into the table. cmd_find: the command named name (NULL when none is). */
extern const struct cmd commands[];
void cmd_register(const struct cmd *table);
const struct cmd *cmd_list(void);
const struct cmd *cmd_find(const char *name);
/* The command whose name is closest to word (cmd_did_you_mean), or NULL: the "did you mean"
 * hint for an unknown command. */
const char *cmd_closest_command(const char *word);
/* The command list of the usage and of `help`: "  NAME       SUMMARY" a line, to f. */
void cmd_print_commands(FILE *f);

/* The live-inventory options shared by plan and inventory (ids >= OPT_LIVE_BASE). */
enum { OPT_LIVE_BASE = 500, OPT_LIVE_REGION, OPT_LIVE_PROFILE, OPT_LIVE_KUBECONFIG, OPT_LIVE_CONTEXT, OPT_LIVE_ALL_CONTEXTS, OPT_LIVE_NO_KUBE,
       OPT_LIVE_NO_AWS, OPT_LIVE_NO_METRICS, OPT_LIVE_LOOKBACK, OPT_LIVE_NO_USAGE, OPT_LIVE_KUBE_PAGE,
       OPT_LIVE_NO_CLOUDTRAIL, OPT_LIVE_CONCURRENCY, OPT_LIVE_ACCOUNTS, OPT_LIVE_ORGANIZATION, OPT_LIVE_EXCLUDE_ACCOUNTS,
       OPT_LIVE_ROLE_NAME, OPT_LIVE_ROLE_ARN_TEMPLATE, OPT_LIVE_EXTERNAL_ID, OPT_LIVE_ROLE_SESSION_NAME,
       OPT_LIVE_ROLE_DURATION };
extern const struct cmd_option live_options[];
/* The role options (ids OPT_LIVE_ROLE_*, parsed by cmd_live_option): rows shared by
 * live_options, apply and status, so every command reaching other accounts takes the same flags. */
#define CMD_ROLE_OPTIONS                                                                                           \
	{"role-name", 0, ARG_REQUIRED, "NAME",                                                                     \
	 "the IAM role assumed in each account other than the base credentials': "                                  \
	 "arn:PARTITION:iam::ACCOUNT:role/NAME (docs/accounts.md)",                                                 \
	 OPT_LIVE_ROLE_NAME},                                                                                      \
	{"role-arn-template", 0, ARG_REQUIRED, "TEMPLATE",                                                         \
	 "the role ARN assumed in each account, with ${partition} and ${account}, e.g. "                            \
	 "'arn:${partition}:iam::${account}:role/path/NAME' (instead of --role-name)",                              \
	 OPT_LIVE_ROLE_ARN_TEMPLATE},                                                                              \
	{"external-id", 0, ARG_REQUIRED, "ID",                                                                     \
	 "the ExternalId sent with every AssumeRole (when the roles' trust requires one)", OPT_LIVE_EXTERNAL_ID},   \
	{"role-session-name", 0, ARG_REQUIRED, "NAME",                                                             \
	 "the AssumeRole session name, seen in the accounts' CloudTrail (default ebsmigrate-USER; other "           \
	 "characters than [A-Za-z0-9_+=,.@-] become '-', cut at 64)",                                               \
	 OPT_LIVE_ROLE_SESSION_NAME},                                                                              \
	{"role-duration", 0, ARG_REQUIRED, "DURATION",                                                             \
	 "how long each assumed role's credentials last, 15m to 12h (default STS's 1h; refreshed before they "      \
	 "expire)",                                                                                                 \
	 OPT_LIVE_ROLE_DURATION}
struct inventory_live_options;
/* Applies one live option to o (arrays grow as needed); EXIT_USAGE with a message on bad values. */
int cmd_live_option(struct inventory_live_options *o, int id, const char *arg);
void cmd_live_options_release(struct inventory_live_options *o);
/* After parsing, reading live: checks the account options together (docs/accounts.md) and
 * points o->accounts at them when several accounts are read (--accounts, --organization, or
 * --profile given more than once). EXIT_USAGE, said, for a combination that does not go. */
int cmd_live_check(struct inventory_live_options *o);
/* apply's role options (parsed by cmd_live_option into o, with the OPT_LIVE_ROLE_* ids, no
 * accounts): checked; the role template, session name, external id and duration, or NULL when
 * none was given (*rc: 0, or EXIT_USAGE said). */
struct inventory_accounts;
const struct inventory_accounts *cmd_role_options_check(struct inventory_live_options *o, int *rc);
/* --from-aws-json / --from-kube-json arguments ([LABEL=]FILE or [LABEL=]DIR) shared by plan and
 * report: a label has no '/', and an existing file named "a=b.json" is taken as a file. A DIR
 * adds its *.json files in name order (said with -v); kubectl exports in a DIR without a label
 * are named after their files as `inventory --save` writes them. Paths and labels are heap
 * copies freed by cmd_free_sources. EXIT_USAGE, said, for a DIR with no export or unreadable. */
struct inventory_source;
int cmd_add_source(struct inventory_source **arr, size_t *n, size_t *alloc, const char *arg, int kube);
/* --from-saved DIR: what `inventory --save DIR` wrote, AWS files (volumes-, modifications-,
 * metrics-, cloudtrail-, instances-REGION.json, instance-types.json) to aws, every other *.json
 * to kube under the cluster its name gives (CLUSTER[.stats-summary|.version].json). */
int cmd_add_saved(struct inventory_source **aws, size_t *n_aws, size_t *alloc_aws, struct inventory_source **kube,
		  size_t *n_kube, size_t *alloc_kube, const char *dir);
void cmd_free_sources(struct inventory_source *s, size_t n);
/* The progress line (cmd_progress.c): a progress_fn rendering one redrawn stderr line, only on
 * a TTY and not with --quiet; -v logs each finished phase's totals and time. cmd_progress_end
 * ends the open phase and clears the line. */
enum progress_event;
void cmd_progress(void *ctx, enum progress_event ev, const char *phase, const char *scope, size_t done, size_t total);
void cmd_progress_end(void);
/* A text drawn after the open phase's figures (e.g. bench's "randread-qd32 12/60s 3001 IOPS"),
 * redrawn now; NULL or "" removes it; a new phase starts without one. */
void cmd_progress_detail(const char *text);

int cmd_plan(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_inventory(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_iam_policy(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_apply(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_status(struct cmd_ctx *ctx, int argc, char **argv);
extern const struct cmd_help apply_help, status_help;
int cmd_rbac(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_report(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_pricing(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_bench(struct cmd_ctx *ctx, int argc, char **argv);
extern const struct cmd_help bench_help;
int cmd_help(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_version(struct cmd_ctx *ctx, int argc, char **argv);

extern const struct cmd_help report_help, pricing_help;
extern const struct cmd_help plan_help, help_help, version_help, inventory_help, iam_policy_help, rbac_help;
int cmd_db(struct cmd_ctx *ctx, int argc, char **argv);
extern const struct cmd_help db_help;
int cmd_check(struct cmd_ctx *ctx, int argc, char **argv);
extern const struct cmd_help check_help;
int cmd_metrics(struct cmd_ctx *ctx, int argc, char **argv);
extern const struct cmd_help metrics_help;
/* --notify-webhook-file of plan and report: posts payload to t (notify.h); a failure is a warning
 * naming the host, never the command's result. */
struct notify_target;
void cmd_notify_send(const struct notify_target *t, const struct buf *payload);
/* The row of --notify-webhook-file; WHAT: "report", "plan". */
#define CMD_NOTIFY_OPTION(WHAT, ID)                                                                                \
	{"notify-webhook-file", 0, ARG_REQUIRED, "FILE",                                                           \
	 "after the " WHAT ", post a short summary (Slack-compatible JSON) to the https:// webhook URL in FILE "     \
	 "(default: the URL in EBSMIGRATE_NOTIFY_WEBHOOK, if set); a failed post is a warning naming the host",      \
	 ID}

/* The scoping options of the reading commands (cmd_scope.c; ids in OPT_SCOPE_BASE..OPT_SCOPE_END,
 * checked before OPT_LIVE_BASE): rows to put at the end of a command's table; cmd_parse applies
 * them to ctx->scope, so a command declares them and parses none. --region and
 * --context come from live_options where a command has them; status lists its own. Meaning:
 * scope.h. */
enum { OPT_SCOPE_BASE = 600, OPT_SCOPE_NAMESPACE, OPT_SCOPE_ALL_NAMESPACES, OPT_SCOPE_SELECTOR, OPT_SCOPE_ACCOUNT,
       OPT_SCOPE_VOLUME, OPT_SCOPE_REGION, OPT_SCOPE_END };
#define CMD_SCOPE_OPTIONS                                                                                          \
	CMD_SCOPE_NAMESPACE_OPTIONS,                                                                               \
	{"selector", 'l', ARG_REQUIRED, "SELECTOR",                                                                \
	 "only volumes whose PVC's labels match this selector (kubectl syntax: k=v, k!=v, 'k in (a,b)', "           \
	 "'k notin (a)', k, !k; commas AND)",                                                                        \
	 OPT_SCOPE_SELECTOR},                                                                                      \
	CMD_SCOPE_ID_OPTIONS
/* The parts of CMD_SCOPE_OPTIONS, for a command whose -l row says something else (metrics). */
#define CMD_SCOPE_NAMESPACE_OPTIONS                                                                                \
	{"namespace", 'n', ARG_REQUIRED, "NS", "only volumes whose PVC is in this namespace (repeatable)",            \
	 OPT_SCOPE_NAMESPACE},                                                                                     \
	{"all-namespaces", 'A', ARG_NONE, NULL, "every namespace (the default); overrides -n, as in kubectl",        \
	 OPT_SCOPE_ALL_NAMESPACES}
#define CMD_SCOPE_ID_OPTIONS                                                                                       \
	{"account", 0, ARG_REQUIRED, "ID", "only volumes of this AWS account (repeatable)", OPT_SCOPE_ACCOUNT},      \
	{"volume", 0, ARG_REQUIRED, "VOL-ID", "only this volume (repeatable)", OPT_SCOPE_VOLUME}
/* The usage line of those rows, one for the commands' usage lists: "... [-n NS...|-A] [-l SELECTOR]
 * MID[--account ID...] [--volume VOL-ID...]", MID the command's --context/--region part ("" or
 * ending in a space); the parts for a command without the -l row. */
#define CMD_SCOPE_NAMESPACE_USAGE "[-n NS...|-A]"
#define CMD_SCOPE_ID_USAGE "[--account ID...] [--volume VOL-ID...]"
#define CMD_SCOPE_USAGE(MID) "... " CMD_SCOPE_NAMESPACE_USAGE " [-l SELECTOR] " MID CMD_SCOPE_ID_USAGE
#define CMD_SCOPE_REGION_OPTION                                                                                    \
	{"region", 0, ARG_REQUIRED, "REGION", "only volumes in this AWS region (repeatable)", OPT_SCOPE_REGION}
struct scope;
struct scope_stats;
/* Applies one scoping option (OPT_SCOPE_*) to s; -l is parsed here. EXIT_USAGE, said, on a bad
 * selector or a second -l. */
int cmd_scope_option(struct scope *s, int id, const char *arg);
/* After filtering: a notice per -n namespace no PVC is in, and kubectl's "No resources found"
 * when nothing is left ("no volumes match -n x -l 'y' (of N read)"). what: "volumes", "rows". */
void cmd_scope_notices(const struct scope *s, const struct scope_stats *st, const char *what);

/* The start of a command's run: cmd_parse with the table of the command NAME (result: its
 * output options, or NULL where it has none). Returns 1 when the command ends here with
 * *exit_code (EXIT_OK after --help, EXIT_USAGE said), else 0 (and *exit_code 0) with the other
 * arguments in rest and n_rest. */
int cmd_start(struct cmd_ctx *ctx, const char *name, int argc, char **argv,
	      int (*on_option)(void *st, int id, const char *arg), void *st, struct cmd_output_options *result,
	      char ***rest, int *n_rest, int *exit_code);
/* The start of a command that takes options only (apply, status, plan, ...): cmd_start, then
 * `error: unexpected argument 'X'HINT` (hint may be "") and EXIT_USAGE for any other argument.
 * Returns 1 when the command ends here with *exit_code, else 0. */
int cmd_start_options_only(struct cmd_ctx *ctx, const char *name, int argc, char **argv,
			   int (*on_option)(void *st, int id, const char *arg), void *st,
			   struct cmd_output_options *result, const char *hint, int *exit_code);
/* More than max other arguments: `error: PREFIXunexpected argument 'X'HINT` for the first extra
 * one and EXIT_USAGE; else 0. prefix and hint may be "". */
int cmd_extra_args(char *const *rest, int n_rest, int max, const char *prefix, const char *hint);
/* The start of a command whose first other argument is a subcommand or a choice (pricing, db,
 * bench, completion): cmd_start, then, when there is none, says missing and ends with EXIT_USAGE.
 * Returns 1 when the command ends here with *exit_code, else 0 with rest[0] the subcommand. */
int cmd_start_subcommand(struct cmd_ctx *ctx, const char *name, int argc, char **argv,
			 int (*on_option)(void *st, int id, const char *arg), void *st,
			 struct cmd_output_options *result, const char *missing, char ***rest, int *n_rest,
			 int *exit_code);
/* An option value that did not parse: when bad, says the message (printf-style) and returns
 * EXIT_USAGE; else 0. For `case OPT_X: return cmd_usage_if(parse_x(arg, &a->x), "--x: ...", arg);` */
int cmd_usage_if(int bad, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One of a fixed list of words (struct cmd_format: name, value, hidden): stores its value in *out,
 * or says `OPT: 'ARG' is not one of a, b, c` (the hidden ones not listed) and returns EXIT_USAGE. */
int cmd_choice(const char *opt, const char *arg, const struct cmd_format *choices, int *out);

#endif
