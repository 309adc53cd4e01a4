/*
 * cmd_db.c - `ebsmigrate db prune`: the database's own upkeep. Plans and inventory runs are
 * recorded by every run; prune deletes all but the newest --keep N of each (never a plan an
 * apply row refers to), optionally VACUUMs, and prints what it removed. Glue only: the SQL is in
 * ledger_store.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/log.h"

enum { OPT_KEEP = 1, OPT_DRY_RUN, OPT_VACUUM };

static const struct cmd_option db_options[] = {
	{"keep", 0, ARG_REQUIRED, "N", "prune: keep the newest N plans and the newest N inventory runs (required)",
	 OPT_KEEP},
	{"dry-run", 0, ARG_NONE, NULL, "prune: print what would be removed, remove nothing", OPT_DRY_RUN},
	{"vacuum", 0, ARG_NONE, NULL, "prune: then VACUUM, giving the freed pages back to the file system", OPT_VACUUM},
	CMD_OPTIONS_END,
};

const struct cmd_help db_help = {
	.usage = CMD_USAGE("prune --keep N [--dry-run] [--vacuum]"),
	.description =
		"Upkeep of the database (--db). Every `plan` records its plan and every `inventory` its run, so "
		"the file grows with each run; plans are stored compressed (zlib), inventory documents as "
		"written.\n"
		"\n"
		"prune --keep N deletes the plans older than the newest N and the inventory runs older than the "
		"newest N, in one transaction. A plan that apply rows refer to (an apply run or a volume in the "
		"ledger) is never deleted, however old: it is listed as kept. Price book versions, the apply "
		"ledger and bench results are not touched. It prints one line per kind: how many rows and ids "
		"were removed and the bytes their documents took. --dry-run prints the same with 'would remove' "
		"and changes nothing. SQLite reuses the freed pages; --vacuum also shrinks the file (it rewrites "
		"the whole database: needs as much free space again and an exclusive lock for a while).",
	.options = db_options,
	.exit_codes = "Exit 2 for a missing subcommand or --keep, or a --keep that is not a number >= 0. Exit 1 when "
		      "the database cannot be changed (locked by another process past the 5 s busy timeout).",
};

struct db_args {
	int64_t keep;
	int have_keep, dry_run, vacuum;
};

static int on_option(void *st, int id, const char *arg)
{
	struct db_args *a = st;
	switch (id) {
	case OPT_KEEP:
		if (em_parse_i64(arg, &a->keep) || a->keep < 0) {
			log_error("--keep: '%s' is not a number of records (0 or more)", arg);
			return EXIT_USAGE;
		}
		a->have_keep = 1;
		return 0;
	case OPT_DRY_RUN: a->dry_run = 1; return 0;
	case OPT_VACUUM: a->vacuum = 1; return 0;
	}
	return EXIT_USAGE;
}

/* "ids 1, 2, 5" (the first ten, then how many more). */
static void add_ids(struct buf *b, const int64_t *ids, size_t n)
{
	buf_adds(b, n == 1 ? "id " : "ids ");
	for (size_t i = 0; i < n && i < 10; i++)
		buf_addf(b, "%s%lld", i ? ", " : "", (long long)ids[i]);
	if (n > 10)
		buf_addf(b, " and %zu more", n - 10);
}

static void print_kind(const char *verb, const char *what, const int64_t *ids, size_t n, int64_t bytes)
{
	struct buf b = BUF_INIT;
	buf_addf(&b, "%s %zu %s%s", verb, n, what, n == 1 ? "" : "s");
	if (n) {
		buf_adds(&b, " (");
		add_ids(&b, ids, n);
		buf_addf(&b, "; %.1f MB of documents)", (double)bytes / 1e6);
	}
	printf("%s\n", b.s);
	buf_release(&b);
}

int cmd_db(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct db_args a = {0};
	char **rest;
	int n_rest;
	int rc;
	if (cmd_start_subcommand(ctx, "db", argc, argv, on_option, &a, NULL, "'db' needs a subcommand: prune", &rest,
				 &n_rest, &rc))
		return rc;
	if (strcmp(rest[0], "prune") != 0) {
		log_error("unknown db subcommand '%s'; use prune", rest[0]);
		return EXIT_USAGE;
	}
	if ((rc = cmd_extra_args(rest, n_rest, 1, "", "")))
		return rc;
	if (!a.have_keep) {
		log_error("'db prune' needs --keep N: how many of the newest plans and inventory runs to keep");
		return EXIT_USAGE;
	}
	if ((rc = cmd_prepare(ctx, NEEDS_DB)))
		return rc;
	struct ledger_prune_result r;
	struct buf err = BUF_INIT;
	if (ledger_prune(ctx->db, a.keep, a.dry_run, a.vacuum, &r, &err)) {
		log_error("%s", err.s);
		buf_release(&err);
		return EXIT_RUNTIME;
	}
	const char *verb = a.dry_run ? "would remove" : "removed";
	print_kind(verb, "plan", r.plans, r.n_plans, r.plan_bytes);
	print_kind(verb, "inventory run", r.runs, r.n_runs, r.run_bytes);
	if (r.n_kept_referenced) {
		struct buf b = BUF_INIT;
		buf_addf(&b, "kept %zu older plan%s that apply rows refer to (", r.n_kept_referenced,
			 r.n_kept_referenced == 1 ? "" : "s");
		add_ids(&b, r.kept_referenced, r.n_kept_referenced);
		buf_adds(&b, ")");
		printf("%s\n", b.s);
		buf_release(&b);
	}
	if (a.vacuum && !a.dry_run)
		printf("vacuumed the database\n");
	ledger_prune_result_release(&r);
	buf_release(&err);
	return EXIT_OK;
}
