/*
 * cmd_common.c - what every command shares: option parsing from a declared table (with the
 * global options), help rendering from the same table, setup by `needs`, atomic output
 * (cmd_outputs: a command's files staged, then committed together; spool files for documents
 * written in pieces), visible result lines.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/cmd.h"
#include "ebsmigrate/cmd_doc.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/notify.h"
#include "ebsmigrate/stop.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/table.h"
#include "ebsmigrate/yamlout.h"

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
	size_t n_own = count_opts(own), n_glob = count_opts(global_options), n_shared = count_opts(shared);
	struct option *lo = xcalloc(n_own + n_shared + n_glob + 1, sizeof *lo);
	const struct cmd_option **by_index = xcalloc(n_own + n_shared + n_glob + 1, sizeof *by_index);
	struct buf shorts = BUF_INIT;
	buf_addc(&shorts, ':'); /* report missing arguments as ':' */
	size_t k = 0;
	for (int pass = 0; pass < 3; pass++) {
		const struct cmd_option *tab = pass == 0 ? own : pass == 1 ? shared : global_options;
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

int cmd_prepare(struct cmd_ctx *ctx, unsigned needs)
{
	struct buf err = BUF_INIT;
	int rc = 0;
	if ((needs & NEEDS_PRICES) && ctx->pricing_dir) {
		pricebook_init(&ctx->book);
		rc = pricebook_load_dir(&ctx->book, ctx->pricing_dir, &err);
		if (!rc && ctx->book.n == 0)
			rc = em_err(&err, EM_EINPUT, "--pricing-dir '%s': no EBS prices found", ctx->pricing_dir);
		if (rc) {
			pricebook_release(&ctx->book);
			goto fail;
		}
		ctx->have_book = 1;
		needs &= ~(unsigned)NEEDS_PRICES;
	}
	if (needs & (NEEDS_DB | NEEDS_PRICES)) {
		struct buf path = BUF_INIT;
		if (!ctx->db_path) {
			ledger_default_path(&path);
			ctx->db_path = ctx->db_path_owned = buf_detach(&path); /* freed by main */
		}
		rc = ledger_open_ex(&ctx->db, ctx->db_path, needs & NEEDS_APPLY_LOCK ? LEDGER_OPEN_APPLY_LOCK : 0, &err);
		if (rc)
			goto fail;
	}
	if (needs & NEEDS_PRICES) {
		rc = ledger_pricebook_for_planning(ctx->db, &ctx->book, &err);
		if (rc)
			goto fail;
		ctx->have_book = 1;
	}
	buf_release(&err);
	return 0;
fail:
	log_error("%s", err.s);
	buf_release(&err);
	return em_exit_code_for(rc);
}

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

void cmd_print_commands(FILE *f)
{
	for (const struct cmd *c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
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
	print_options(global_options);
	printf("\nExit codes:\n  0 ok, 1 runtime error, 2 usage or bad input, 3 partial, 4 verification failed,\n"
	       "  5 not verified (nothing proved either way); 130, 143 stopped by SIGINT, SIGTERM (nothing\n"
	       "  half-written; docs/exit-codes.md#signals)\n");
	if (h && h->exit_codes)
		print_wrapped(stdout, h->exit_codes, 2, 78);
	printf("\nSee %s for the full reference.\n", cmd_doc_page(cmd->name));
}

FILE *cmd_spool_open(const char *prefix)
{
	struct buf path = BUF_INIT;
	buf_addf(&path, "%s-XXXXXX", prefix);
	int fd = mkstemp(path.s);
	FILE *fp = NULL;
	if (fd >= 0) {
		unlink(path.s);
		if (!(fp = fdopen(fd, "w+")))
			close(fd);
	}
	buf_release(&path);
	return fp;
}

void cmd_spool_sink_flush(void *sink, const char *s, size_t n)
{
	struct cmd_spool_sink *k = sink;
	fwrite(s, 1, n, k->spool); /* errors: ferror, checked once at the end */
	if (k->doc)
		ledger_doc_add(k->doc, s, n);
}

/* Adds a staged file (tmp, taken over) to be committed to path. */
static void outputs_remember(struct cmd_outputs *o, const char *path, struct buf *tmp)
{
	XGROW(o->files, o->n, o->alloc);
	o->files[o->n].path = xstrdup(path);
	o->files[o->n].tmp = buf_detach(tmp);
	o->files[o->n].committed = 0;
	o->n++;
}

/* Stages path with data, or (spool not NULL) empty and then filled from the spool and synced,
 * and remembers it for the commit. Logs the error; returns EXIT_*. */
static int stage_output(struct cmd_outputs *o, const char *path, const char *data, size_t len, FILE *spool)
{
	struct buf err = BUF_INIT, tmp = BUF_INIT;
	int rc = em_stage_file(path, data, len, 0666, &tmp, &err) ? EXIT_RUNTIME : EXIT_OK;
	if (!rc && spool) {
		int fd = open(tmp.s, O_WRONLY | O_APPEND | O_CLOEXEC);
		int bad = fd < 0 || fseek(spool, 0, SEEK_SET) != 0 || em_copy_stream(spool, fd) != 0 || fsync(fd) != 0;
		int e = errno;
		if (fd >= 0 && close(fd) != 0 && !bad) {
			bad = 1;
			e = errno;
		}
		if (bad) {
			em_err(&err, EM_EIO, "cannot write '%s': %s", path, strerror(e));
			unlink(tmp.s);
			rc = EXIT_RUNTIME;
		}
	}
	if (rc)
		log_error("%s", err.s);
	else
		outputs_remember(o, path, &tmp);
	buf_release(&err);
	buf_release(&tmp);
	return rc;
}

int cmd_outputs_add(struct cmd_outputs *o, const char *path, const struct buf *data)
{
	if (!path || strcmp(path, "-") == 0) {
		o->to_stdout = data;
		return EXIT_OK;
	}
	return stage_output(o, path, data->s, data->len, NULL);
}

int cmd_outputs_add_spool(struct cmd_outputs *o, const char *path, FILE *spool)
{
	if (!path || strcmp(path, "-") == 0) {
		o->stdout_spool = spool;
		return EXIT_OK;
	}
	return stage_output(o, path, "", 0, spool);
}

const char *cmd_outputs_add_dir(struct cmd_outputs *o, const char *dir)
{
	struct stat st;
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) { /* found now, not after the whole run */
		log_error("'%s' exists and is not a directory", dir);
		return NULL;
	}
	struct buf tmp = BUF_INIT, err = BUF_INIT;
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	buf_add(&tmp, dir, n);
	char *slash = strrchr(tmp.s, '/');
	if (slash && slash != tmp.s) {
		*slash = '\0';
		int rc = em_mkdirs(tmp.s, 0777, &err);
		*slash = '/';
		if (rc) {
			log_error("%s", err.s);
			buf_release(&tmp);
			buf_release(&err);
			return NULL;
		}
	}
	buf_adds(&tmp, ".tmp-XXXXXX");
	if (!mkdtemp(tmp.s) || chmod(tmp.s, (mode_t)(0777 & ~em_umask())) != 0) {
		log_error("cannot create a directory next to '%s': %s", dir, strerror(errno));
		buf_release(&tmp);
		buf_release(&err);
		return NULL;
	}
	buf_release(&err);
	XGROW(o->dirs, o->n_dirs, o->alloc_dirs);
	o->dirs[o->n_dirs].path = xstrndup(dir, n);
	o->dirs[o->n_dirs].tmp = buf_detach(&tmp);
	o->dirs[o->n_dirs].committed = 0;
	return o->dirs[o->n_dirs++].tmp;
}

char *cmd_outputs_final_path(const struct cmd_outputs *o, const char *staged)
{
	for (size_t i = 0; i < o->n_dirs; i++) {
		size_t l = strlen(o->dirs[i].tmp);
		if (strncmp(staged, o->dirs[i].tmp, l) == 0 && staged[l] == '/') {
			struct buf b = BUF_INIT;
			buf_addf(&b, "%s%s", o->dirs[i].path, staged + l);
			return buf_detach(&b);
		}
	}
	return xstrdup(staged);
}

/* Moves every file of the directory from into the directory to (created if needed; same-named
 * files replaced, others left alone), and the files of its subdirectories (inventory --save's
 * per-account ones, depth one level) into to's subdirectories of the same names; then removes
 * from. 0, or EM_EIO said in err. */
static int move_dir_files(const char *from, const char *to, int depth, struct buf *err)
{
	int rc = em_mkdirs(to, 0777, err);
	DIR *dh = rc ? NULL : opendir(from);
	if (!rc && !dh)
		rc = em_err(err, EM_EIO, "cannot read '%s': %s", from, strerror(errno));
	struct buf f = BUF_INIT, t = BUF_INIT;
	struct dirent *e;
	while (!rc && (e = readdir(dh)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		buf_reset(&f);
		buf_reset(&t);
		buf_addf(&f, "%s/%s", from, e->d_name);
		buf_addf(&t, "%s/%s", to, e->d_name);
		struct stat st;
		if (depth > 0 && lstat(f.s, &st) == 0 && S_ISDIR(st.st_mode))
			rc = move_dir_files(f.s, t.s, depth - 1, err);
		else if (rename(f.s, t.s) != 0)
			rc = em_err(err, EM_EIO, "cannot write '%s': %s", t.s, strerror(errno));
	}
	if (dh)
		closedir(dh);
	if (!rc)
		rmdir(from);
	buf_release(&f);
	buf_release(&t);
	return rc;
}

/* Moves every file of a staging directory into dir, then removes the (empty) staging directory. */
static int commit_dir(struct cmd_output_file *d)
{
	struct buf err = BUF_INIT;
	int rc = move_dir_files(d->tmp, d->path, 1, &err);
	if (!rc)
		d->committed = 1; /* tmp stays known, for cmd_outputs_final_path */
	else
		log_error("%s", err.s);
	buf_release(&err);
	return rc ? EXIT_RUNTIME : EXIT_OK;
}

/* Removes a staging directory that was not committed (its files, and those of its
 * subdirectories, one level). */
static void discard_dir(const char *tmp, int depth)
{
	DIR *dh = opendir(tmp);
	struct dirent *e;
	while (dh && (e = readdir(dh)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct buf p = BUF_INIT;
		buf_addf(&p, "%s/%s", tmp, e->d_name);
		struct stat st;
		if (depth > 0 && lstat(p.s, &st) == 0 && S_ISDIR(st.st_mode))
			discard_dir(p.s, depth - 1);
		else
			unlink(p.s);
		buf_release(&p);
	}
	if (dh)
		closedir(dh);
	rmdir(tmp);
}

int cmd_outputs_commit(struct cmd_outputs *o)
{
	int rc = EXIT_OK;
	if (stop_requested()) { /* stopping: release removes what was staged */
		log_error("stopped by %s: no output written", stop_signal_name(stop_requested()));
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < o->n_dirs && !rc; i++)
		rc = commit_dir(&o->dirs[i]);
	struct buf err = BUF_INIT;
	for (size_t i = 0; i < o->n; i++) {
		/* a rename in the file's own directory: after staging succeeded, this does not fail in
		 * practice; if it does, the outputs not yet renamed are removed by release */
		if (!rc && em_commit_file(o->files[i].tmp, o->files[i].path, &err)) {
			log_error("%s", err.s);
			rc = EXIT_RUNTIME;
		}
		if (!rc) {
			free(o->files[i].tmp);
			o->files[i].tmp = NULL;
		}
	}
	buf_release(&err);
	/* stdout's own buffer first, then the spool below it on the descriptor */
	if (!rc && o->stdout_spool && (fflush(stdout) != 0 || fseek(o->stdout_spool, 0, SEEK_SET) != 0 ||
				       em_copy_stream(o->stdout_spool, fileno(stdout)) != 0)) {
		log_error("cannot write to standard output: %s", strerror(errno)); /* EFBIG past ulimit -f */
		rc = EXIT_RUNTIME;
	}
	const struct buf *so = o->to_stdout;
	if (!rc && so && so->len && (fwrite(so->s, 1, so->len, stdout) != so->len || fflush(stdout) != 0)) {
		log_error("cannot write to standard output: %s", strerror(errno));
		rc = EXIT_RUNTIME;
	}
	o->committed = !rc;
	return rc;
}

void cmd_outputs_release(struct cmd_outputs *o)
{
	for (size_t i = 0; i < o->n; i++) {
		if (o->files[i].tmp)
			unlink(o->files[i].tmp);
		free(o->files[i].tmp);
		free(o->files[i].path);
	}
	free(o->files);
	for (size_t i = 0; i < o->n_dirs; i++) {
		if (!o->dirs[i].committed)
			discard_dir(o->dirs[i].tmp, 1);
		free(o->dirs[i].tmp);
		free(o->dirs[i].path);
	}
	free(o->dirs);
	memset(o, 0, sizeof *o);
}

void cmd_print_visible(FILE *f, const char *fmt, ...)
{
	struct buf line = BUF_INIT, vis = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&line, fmt, ap);
	va_end(ap);
	buf_add_visible(&vis, line.s);
	buf_addc(&vis, '\n');
	if (f == stderr)
		log_before_write(); /* a progress line is cleared first */
	fwrite(vis.s, 1, vis.len, f);
	fflush(f);
	buf_release(&line);
	buf_release(&vis);
}

/* The warning with its quoted values blanked: the key that groups repeated warnings. */
static char *warning_shape(const char *w)
{
	struct buf b = BUF_INIT;
	int quoted = 0;
	for (const char *p = w; *p; p++) {
		if (*p == '\'') {
			quoted = !quoted;
			buf_addc(&b, '\'');
		} else if (!quoted) {
			buf_addc(&b, *p);
		}
	}
	buf_addc(&b, 0); /* a buf may be empty: always return a string */
	return buf_detach(&b);
}

#define WARNING_GROUP_SHOWN 3

void cmd_print_warnings(const struct cmd_ctx *ctx, char *const *warnings, size_t n, const char *where_all)
{
	if (ctx->verbose || n <= WARNING_GROUP_SHOWN) {
		for (size_t i = 0; i < n; i++)
			log_warning("%s", warnings[i]);
		return;
	}
	char **shape = xcalloc(n, sizeof *shape);
	size_t *count = xcalloc(n, sizeof *count); /* at a group's first warning: its size */
	struct strmap first = STRMAP_INIT;       /* shape -> index of its first warning */
	for (size_t i = 0; i < n; i++) {
		shape[i] = warning_shape(warnings[i]);
		size_t at;
		if (!strmap_get(&first, shape[i], &at))
			strmap_put(&first, shape[i], at = i);
		count[at]++;
	}
	for (size_t i = 0; i < n; i++) {
		size_t at;
		if (!strmap_get(&first, shape[i], &at) || at != i)
			continue;
		if (count[i] > WARNING_GROUP_SHOWN)
			log_warning("%s (and %zu more like it; all of them: %s, or -v)", warnings[i], count[i] - 1,
				    where_all);
		else
			for (size_t j = i; j < n; j++)
				if (strcmp(shape[j], shape[i]) == 0)
					log_warning("%s", warnings[j]);
	}
	strmap_release(&first);
	for (size_t i = 0; i < n; i++)
		free(shape[i]);
	free(shape);
	free(count);
}

int cmd_write_output(const char *path, const struct buf *data)
{
	struct cmd_outputs o = CMD_OUTPUTS_INIT;
	int rc = cmd_outputs_add(&o, path, data);
	if (!rc)
		rc = cmd_outputs_commit(&o);
	cmd_outputs_release(&o);
	return rc;
}

const struct cmd_option *cmd_global_options(void)
{
	return global_options;
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

int cmd_json_to_yaml(struct buf *doc)
{
	struct buf yaml = BUF_INIT, err = BUF_INIT;
	int rc = yamlout_from_json(&yaml, doc->s, doc->len, &err);
	if (rc) {
		log_error("%s", err.s);
	} else {
		struct buf json = *doc; /* a struct buf owns its memory: swap, then free the JSON */
		*doc = yaml;
		yaml = json;
	}
	buf_release(&yaml);
	buf_release(&err);
	return rc ? EXIT_RUNTIME : EXIT_OK;
}

void cmd_table_options(struct table_options *out, const char *output_file, int wide, int no_headers)
{
	int to_stdout = !output_file || strcmp(output_file, "-") == 0;
	out->width = to_stdout ? table_terminal_width(STDOUT_FILENO) : 0;
	out->wide = wide;
	out->no_headers = no_headers;
	out->header_sgr = NULL;
}

void cmd_notify_send(const struct notify_target *t, const struct buf *payload)
{
	struct buf err = BUF_INIT;
	if (notify_post(t, payload, &err))
		log_warning("notification not sent: %s", err.s);
	else
		log_info("notification sent to the webhook at host '%s'", t->host);
	buf_release(&err);
}
