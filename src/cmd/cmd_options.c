/*
 * cmd_options.c - a command's options, parsed from its declared table: its own options, its
 * shared group (live_options) and the global options every command takes, with getopt_long;
 * the output options (-o/--output, --format, --output-file, --no-headers) parsed for every
 * command from the formats its cmd_help declares, the scoping options (-n, -A, -l, --account,
 * --volume, --region) into the command's struct scope (ctx->scope); "did you mean" hints for a mistyped name.
 *
 * Entry points: cmd_parse, and the openings commands use (cmd_start, cmd_start_options_only,
 * cmd_start_subcommand, cmd_extra_args, cmd_usage_if, cmd_choice, cmd_output_format),
 * and the hints of cmd_did_you_mean (cmd_registry.c). Every usage error is printed here, once, with the
 * command's name and EXIT_USAGE.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cmd_doc.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/log.h"


static size_t count_opts(const struct cmd_option *o)
{
	size_t n = 0;
	while (o && o[n].long_name)
		n++;
	return n;
}

static int handle_global(struct cmd_ctx *ctx, int id, const char *arg)
{
	switch (id) {
	case OPT_DB: ctx->db_path = arg; return 0;
	case OPT_PRICING_DIR: ctx->pricing_dir = arg; return 0;
	case OPT_NOW: {
		time_t t;
		if (em_parse_time(arg, &t)) {
			log_error("--now: '%s' is not an RFC 3339 time (e.g. 2026-12-01T00:00:00Z)", arg);
			return EXIT_USAGE;
		}
		ctx->now_arg = arg;
		ctx->now = t;
		em_set_now(t);
		return 0;
	}
	case OPT_VERBOSE:
		ctx->verbose++;
		log_set_level(ctx->verbose > 1 ? LOG_DEBUG : LOG_VERBOSE);
		return 0;
	case OPT_QUIET:
		ctx->quiet = 1;
		log_set_level(LOG_QUIET);
		return 0;
	case OPT_NO_COLOR: ctx->no_color = 1; ctx->color_stdout = 0; return 0;
	case OPT_ALLOW_INSECURE_HTTP: kube_client_allow_insecure_http(1); return 0;
	}
	return EXIT_USAGE;
}


/* "unknown option '--dyr-run'" plus a hint naming the closest long option of the table. */
static void unknown_long_option(const char *bad, const struct option *lo, size_t n, const char *cmd_name)
{
	const char *name = bad + strspn(bad, "-");
	size_t name_len = strcspn(name, "=");
	char *word = xstrndup(name, name_len);
	const char **cands = xcalloc(n + 1, sizeof *cands);
	for (size_t i = 0; i < n; i++)
		cands[i] = lo[i].name;
	const char *hint = bad[0] == '-' && bad[1] == '-' ? cmd_did_you_mean(word, cands, n) : NULL;
	if (hint)
		log_error("unknown option '%.*s'; did you mean '--%s'? (see 'ebsmigrate help %s')",
			  (int)(name - bad + name_len), bad, hint, cmd_name);
	else
		log_error("unknown option '%.*s'; see 'ebsmigrate help %s'", (int)(name - bad + name_len), bad, cmd_name);
	free(cands);
	free(word);
}

static int output_option(struct cmd_output_options *o, const struct cmd_output_formats *f, int id,
			 const char *arg);

int cmd_parse(struct cmd_ctx *ctx, const struct cmd *cmd, int argc, char **argv,
	      int (*on_option)(void *st, int id, const char *arg), void *st, struct cmd_output_options *result,
	      char ***rest, int *n_rest)
{
	const struct cmd_option *own = cmd->help ? cmd->help->options : NULL;
	const struct cmd_option *shared = cmd->help ? cmd->help->shared : NULL;
	size_t n_own = count_opts(own), n_glob = count_opts(cmd_global_options()), n_shared = count_opts(shared);
	struct option *lo = xcalloc(n_own + n_shared + n_glob + 1, sizeof *lo);
	const struct cmd_option **by_index = xcalloc(n_own + n_shared + n_glob + 1, sizeof *by_index);
	struct buf shorts = BUF_INIT;
	buf_addc(&shorts, ':'); /* report missing arguments as ':' */
	size_t k = 0;
	for (int pass = 0; pass < 3; pass++) {
		const struct cmd_option *tab = pass == 0 ? own : pass == 1 ? shared : cmd_global_options();
		for (size_t i = 0; tab && tab[i].long_name; i++) {
			lo[k].name = tab[i].long_name;
			lo[k].has_arg = tab[i].arg == ARG_REQUIRED ? required_argument : no_argument;
			lo[k].flag = NULL;
			lo[k].val = 0x10000 + (int)k;
			by_index[k] = &tab[i];
			if (tab[i].short_name) {
				buf_addc(&shorts, (char)tab[i].short_name);
				if (tab[i].arg == ARG_REQUIRED)
					buf_addc(&shorts, ':');
			}
			k++;
		}
	}
	int rc = 0, c, idx;
	optind = 1;
	opterr = 0;
	while (!rc && (c = getopt_long(argc, argv, shorts.s, lo, &idx)) != -1) {
		const struct cmd_option *o = NULL;
		if (c >= 0x10000) {
			o = by_index[c - 0x10000];
		} else if (c == '?' || c == ':') {
			const char *bad = argv[optind - 1];
			if (c == ':')
				log_error("option '%s' needs a value; see 'ebsmigrate help %s'", bad, cmd->name);
			else if (optopt >= 0x10000 && (size_t)(optopt - 0x10000) < k)
				/* getopt_long's report of "--flag=value" on a flag without a value: optopt
				 * is then the option's id, not a character */
				log_error("option '--%s' takes no value", lo[optopt - 0x10000].name);
			else if (optopt)
				log_error("unknown option '-%c'; see 'ebsmigrate help %s'", (char)optopt, cmd->name);
			else
				unknown_long_option(bad, lo, k, cmd->name);
			rc = EXIT_USAGE;
			break;
		} else {
			for (size_t i = 0; i < k; i++)
				if (by_index[i]->short_name == c)
					o = by_index[i];
		}
		if (!o) {
			rc = EXIT_USAGE;
			break;
		}
		if (o->id == OPT_HELP) {
			cmd_print_help(cmd);
			rc = -1;
		} else if (o->id > OPT_GLOBAL_BASE) {
			rc = handle_global(ctx, o->id, optarg);
		} else if (o->id > OPT_RESULT_BASE && o->id < OPT_RESULT_END) {
			rc = result && cmd->help->output ? output_option(result, cmd->help->output, o->id, optarg)
							 : EXIT_USAGE;
		} else if (o->id > OPT_SCOPE_BASE && o->id < OPT_SCOPE_END && ctx->scope) {
			rc = cmd_scope_option(ctx->scope, o->id, optarg);
		} else {
			rc = on_option ? on_option(st, o->id, optarg) : EXIT_USAGE;
		}
	}
	if (!rc) {
		*rest = argv + optind;
		*n_rest = argc - optind;
	}
	free(lo);
	free(by_index);
	buf_release(&shorts);
	return rc;
}

/* A FORMAT that names a file: what `-o FILE` meant before -o became the format. */
static int looks_like_file_name(const char *s)
{
	return strcmp(s, "-") == 0 || strchr(s, '.') || strchr(s, '/');
}

/* Looks arg up in choices; when it is none of them, says so, with hint after the list. */
static int choose(const char *opt, const char *arg, const struct cmd_format *choices, int *out, const char *hint)
{
	for (const struct cmd_format *f = choices; f->name; f++)
		if (strcmp(arg, f->name) == 0) {
			*out = f->value;
			return 0;
		}
	struct buf list = BUF_INIT;
	for (const struct cmd_format *f = choices; f->name; f++)
		if (!f->hidden)
			buf_addf(&list, "%s%s", list.len ? ", " : "", f->name);
	log_error("%s: '%s' is not one of %s%s", opt, arg, list.s, hint);
	buf_release(&list);
	return EXIT_USAGE;
}

int cmd_output_format(const char *opt, const char *arg, const struct cmd_format *formats, int *out)
{
	return choose(opt, arg, formats, out, looks_like_file_name(arg) ? "; to write a file use --output-file FILE" : "");
}

/* Applies one output option to o: -o/--output and --format (one of f; o->json set when it is
 * f->json or f->yaml), --output-file, --no-headers. Returns EXIT_*. */
static int output_option(struct cmd_output_options *o, const struct cmd_output_formats *f, int id,
			 const char *arg)
{
	switch (id) {
	case OPT_RESULT_FORMAT:
	case OPT_RESULT_OUTPUT:
		if (cmd_output_format(id == OPT_RESULT_FORMAT ? "--format" : "-o", arg, f->list, &o->format))
			return EXIT_USAGE;
		o->json = o->format == f->json || o->format == f->yaml;
		return EXIT_OK;
	case OPT_RESULT_FILE: o->file = arg; return EXIT_OK;
	case OPT_RESULT_NO_HEADERS: o->no_headers = 1; return EXIT_OK;
	}
	return EXIT_USAGE;
}

int cmd_choice(const char *opt, const char *arg, const struct cmd_format *choices, int *out)
{
	return choose(opt, arg, choices, out, "");
}

int cmd_start(struct cmd_ctx *ctx, const char *name, int argc, char **argv,
	      int (*on_option)(void *st, int id, const char *arg), void *st, struct cmd_output_options *result,
	      char ***rest, int *n_rest, int *exit_code)
{
	int rc = cmd_parse(ctx, cmd_find(name), argc, argv, on_option, st, result, rest, n_rest);
	*exit_code = rc < 0 ? EXIT_OK : rc; /* -1: --help was printed */
	return rc != 0;
}

int cmd_start_options_only(struct cmd_ctx *ctx, const char *name, int argc, char **argv,
			   int (*on_option)(void *st, int id, const char *arg), void *st,
			   struct cmd_output_options *result, const char *hint, int *exit_code)
{
	char **rest;
	int n_rest;
	return cmd_start(ctx, name, argc, argv, on_option, st, result, &rest, &n_rest, exit_code) ||
	       (*exit_code = cmd_extra_args(rest, n_rest, 0, "", hint));
}

int cmd_extra_args(char *const *rest, int n_rest, int max, const char *prefix, const char *hint)
{
	if (n_rest <= max)
		return 0;
	log_error("%sunexpected argument '%s'%s", prefix, rest[max], hint);
	return EXIT_USAGE;
}

int cmd_start_subcommand(struct cmd_ctx *ctx, const char *name, int argc, char **argv,
			 int (*on_option)(void *st, int id, const char *arg), void *st,
			 struct cmd_output_options *result, const char *missing, char ***rest, int *n_rest,
			 int *exit_code)
{
	if (cmd_start(ctx, name, argc, argv, on_option, st, result, rest, n_rest, exit_code))
		return 1;
	if (*n_rest)
		return 0;
	log_error("%s", missing);
	*exit_code = EXIT_USAGE;
	return 1;
}

int cmd_usage_if(int bad, const char *fmt, ...)
{
	if (!bad)
		return 0;
	struct buf msg = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	log_error("%s", msg.s);
	buf_release(&msg);
	return EXIT_USAGE;
}
