/*
 * cmd_pricing.c - `ebsmigrate pricing refresh|show|list|diff|export`: options, help and glue
 * (aws_pricing.c fetches, compares and renders; ledger.c stores). No domain logic here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/aws_endpoint.h"
#include "ebsmigrate/aws_pricing.h"
#include "ebsmigrate/aws_client.h"
#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/progress.h"
#include "ebsmigrate/strlist.h"
#include "ebsmigrate/table.h"

enum { OPT_REGION = 1, OPT_PROFILE, OPT_VERSION };

enum pricing_format { PRICING_TABLE = 0, PRICING_WIDE, PRICING_JSON, PRICING_YAML };
static const struct cmd_format pricing_formats[] = {
	{"table", PRICING_TABLE, 0}, {"wide", PRICING_WIDE, 0}, {"json", PRICING_JSON, 0}, {"yaml", PRICING_YAML, 0}, {NULL, 0, 0},
};

static const struct cmd_option pricing_options[] = {
	{"region", 0, ARG_REQUIRED, "CODE",
	 "refresh: fetch only this regionCode (repeatable; a Local Zone such as us-west-2-lax-1 is its own code); "
	 "show: only this location and its zones",
	 OPT_REGION},
	{"profile", 0, ARG_REQUIRED, "NAME", "refresh: AWS profile from ~/.aws/config and ~/.aws/credentials",
	 OPT_PROFILE},
	CMD_FORMAT_OPTIONS("show, list, diff: table (default), wide, json or yaml", OPT_RESULT_OUTPUT, OPT_RESULT_FORMAT),
	CMD_OUTPUT_FILE_OPTION(OPT_RESULT_FILE),
	CMD_NO_HEADERS_OPTION("show, list, diff tables: no title row", OPT_RESULT_NO_HEADERS),
	{"version", 0, ARG_REQUIRED, "N", "show, export: this stored price book version instead of the current one",
	 OPT_VERSION},
	CMD_OPTIONS_END,
};

const struct cmd_help pricing_help = {
	.usage = CMD_USAGE(
		"refresh [--region CODE...] [--profile NAME]",
		"show [--region CODE] [--version N] [-o table|wide|json|yaml] [--output-file FILE]",
		"list [-o table|wide|json|yaml] [--output-file FILE]",
		"diff [V1 [V2]] [-o table|wide|json|yaml] [--output-file FILE]",
		"export DIR [--version N]"),
	.description =
		"The price book: every EBS price plans and reports use, kept in the database with its history.\n"
		"\n"
		"refresh calls the AWS Pricing API (GetProducts, SigV4, every NextToken page) for the EBS storage, "
		"IOPS and gp3 throughput prices of every Region, Local Zone and Wavelength Zone (or only the "
		"--region codes given; other locations are carried over from the current version) and stores them as a "
		"new dated version, which becomes current. The whole price list is fetched before anything is stored: "
		"a refresh that fails part-way leaves the current version unchanged. AWS_MAX_ATTEMPTS and "
		"AWS_RETRY_MODE set the retries (default: legacy, 8 attempts per request; docs/aws.md).\n"
		"\n"
		"show prints a version (default: the one plans use) with its source and dates; list prints every "
		"version; diff compares two versions (default: the previous and the current one; one argument: that "
		"version and the current one) and lists changed, added and removed prices; export writes a version as "
		"GetProducts files in the bundled pricing/ format (ec2-ebs-LOCATION.json), so the bundle can be "
		"regenerated from a refresh.\n"
		"\n"
		"Examples:\n"
		"  ebsmigrate pricing refresh\n"
		"  ebsmigrate pricing refresh --region us-west-2 --region us-west-2-lax-1\n"
		"  ebsmigrate pricing diff\n"
		"  ebsmigrate pricing show --region ap-northeast-2\n"
		"  ebsmigrate pricing export pricing/",
	.options = pricing_options,
	.shared = NULL,
	.exit_codes = "refresh exits 1 when the Pricing API fails (network, credentials, throttling after all "
		      "retries, a malformed page): nothing is stored. Exit 2 for an unknown subcommand, version or "
		      "region code.",
	.output = CMD_OUTPUT_FORMATS(pricing_formats, PRICING_JSON, PRICING_YAML),
};

struct pricing_args {
	struct strlist regions; /* --region: borrowed from argv */
	const char *profile;
	struct cmd_output_options result; /* format: enum pricing_format */
	struct table_options table; /* set after parsing */
	int64_t version;
};

static int on_option(void *st, int id, const char *arg)
{
	struct pricing_args *a = st;
	switch (id) {
	case OPT_REGION:
		if (!aws_region_valid(arg)) {
			log_error("--region: '%s' is not a region or zone code", arg);
			return EXIT_USAGE;
		}
		strlist_append(&a->regions, arg);
		return 0;
	case OPT_PROFILE: a->profile = arg; return 0;
	case OPT_VERSION:
		return cmd_usage_if(em_parse_i64(arg, &a->version) || a->version <= 0,
				    "--version: '%s' is not a price book version number", arg);
	}
	return EXIT_USAGE;
}

/* The result to stdout or --output-file, in YAML for -o yaml (the writers produce JSON); out is
 * released. */
static int write_result(const struct pricing_args *a, struct buf *out)
{
	int rc = a->result.format == PRICING_YAML ? cmd_json_to_yaml(out) : 0;
	rc = rc ? rc : cmd_write_output(a->result.file, out);
	buf_release(out);
	return rc;
}

/* Refuses options the subcommand does not take. */
static int only(const char *sub, const struct pricing_args *a, int regions, int profile, int format, int version)
{
	const char *bad = !regions && a->regions.n ? "--region"
			  : !profile && a->profile  ? "--profile"
			  : !format && a->result.json      ? "-o json/yaml"
			  : !version && a->version  ? "--version"
						    : NULL;
	if (!bad)
		return 0;
	log_error("'pricing %s' does not take %s; see 'ebsmigrate help pricing'", sub, bad);
	return EXIT_USAGE;
}

/* pricing_fetch's page callback as the "pricing refresh" phase of the progress line. */
static void progress(void *ctx, const char *what, size_t n)
{
	cmd_progress(ctx, PROGRESS_STEP, "pricing refresh", what, n, 0);
}

static size_t count_prices(const struct pricebook *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++)
		for (int item = 0; item < PRICE_ITEMS; item++) {
			price_t p;
			n += (size_t)pricebook_item_get(&b->locs[i], item, &p);
		}
	return n;
}

static int do_refresh(struct cmd_ctx *ctx, struct pricing_args *a)
{
	if (ctx->pricing_dir) {
		log_error("'pricing refresh' stores into the database; it does not take --pricing-dir");
		return EXIT_USAGE;
	}
	int rc = cmd_prepare(ctx, NEEDS_PRICES); /* the current book: the base of a --region refresh */
	if (rc)
		return rc;
	struct pricing_fetch_options o;
	memset(&o, 0, sizeof o);
	o.profile = a->profile;
	o.regions = a->regions.items;
	o.n_regions = a->regions.n;
	o.progress = progress;
	/* AWS_MAX_ATTEMPTS / AWS_RETRY_MODE are read by the AWS client, as for every AWS call;
	 * checked here first so that a bad value is a usage error, not a failed refresh */
	struct aws_retry_config retry;
	struct buf rerr = BUF_INIT;
	if (aws_retry_config_resolve(&retry, a->profile, &rerr)) {
		log_error("%s", rerr.s);
		buf_release(&rerr);
		return EXIT_USAGE;
	}
	buf_release(&rerr);
	struct pricebook book;
	struct pricing_fetch_result r;
	struct buf err = BUF_INIT;
	rc = pricing_fetch(&book, &o, &r, &err);
	cmd_progress_end();
	if (rc) {
		log_error("pricing refresh: %s", err.s);
		log_notice("nothing stored: the current price book (version %lld, %s) is unchanged",
			   (long long)ctx->book.version, ctx->book.source ? ctx->book.source : "unknown source");
		buf_release(&err);
		return rc == EM_ENOTFOUND ? EXIT_USAGE : EXIT_RUNTIME;
	}
	if (a->regions.n)
		pricing_merge_untouched(&book, &ctx->book, a->regions.items, a->regions.n);
	rc = ledger_pricebook_store(ctx->db, &book, &err);
	if (rc) {
		log_error("%s", err.s);
		log_notice("nothing stored: the current price book (version %lld) is unchanged",
			   (long long)ctx->book.version);
		buf_release(&err);
		pricebook_release(&book);
		return EXIT_RUNTIME;
	}
	struct pricing_diff d;
	pricing_diff_build(&d, &ctx->book, &book);
	struct buf out = BUF_INIT;
	buf_addf(&out, "price book version %lld stored and current: %zu locations, %zu prices, effective %s\n",
		 (long long)book.version, book.n, count_prices(&book), book.effective_date);
	buf_addf(&out, "source: %s\n", book.source);
	buf_addf(&out, "compared with version %lld: %zu changed, %zu added, %zu removed ('ebsmigrate pricing diff' lists them)\n",
		 (long long)ctx->book.version, d.changed, d.added, d.removed);
	log_info("%d GetProducts pages, %d requests, %d throttled", r.pages, r.calls, r.throttled);
	rc = write_result(a, &out);
	buf_release(&err);
	pricing_diff_release(&d);
	pricebook_release(&book);
	return rc;
}

/* The database's price book versions (ledger_price_versions); the error said. EXIT_*. */
static int stored_versions(struct cmd_ctx *ctx, struct ledger_price_version **v, size_t *n)
{
	struct buf err = BUF_INIT;
	int rc = ledger_price_versions(ctx->db, v, n, &err) ? EXIT_RUNTIME : EXIT_OK;
	if (rc)
		log_error("%s", err.s);
	buf_release(&err);
	return rc;
}

/* One stored price book version; the error said. EXIT_*. */
static int stored_book(struct cmd_ctx *ctx, int64_t version, struct pricebook *b)
{
	struct buf err = BUF_INIT;
	int rc = ledger_pricebook_load(ctx->db, version, b, &err);
	if (rc)
		log_error("%s", err.s);
	buf_release(&err);
	return rc ? em_exit_code_for(rc) : EXIT_OK;
}

/* The book a show/export works on: --version N from the database (loaded, released by the
 * caller with pricebook_release(&c->loaded)), else the one plans use. */
struct chosen_book {
	struct pricebook loaded;
	const struct pricebook *book;
	int is_current; /* -1: --pricing-dir */
};

static int choose_book(struct cmd_ctx *ctx, const struct pricing_args *a, struct chosen_book *c)
{
	pricebook_init(&c->loaded);
	const struct pricebook **out = &c->book;
	int *is_current = &c->is_current;
	if (a->version && ctx->pricing_dir) {
		log_error("--version and --pricing-dir name two different price books; give one");
		return EXIT_USAGE;
	}
	int rc = cmd_prepare(ctx, NEEDS_PRICES);
	if (rc)
		return rc;
	*is_current = ctx->pricing_dir ? -1 : 1;
	*out = &ctx->book;
	if (!a->version)
		return 0;
	rc = stored_book(ctx, a->version, &c->loaded);
	if (rc)
		return rc;
	*is_current = a->version == ctx->book.version;
	*out = &c->loaded;
	return 0;
}

static int do_show(struct cmd_ctx *ctx, struct pricing_args *a)
{
	if (a->regions.n > 1) {
		log_error("'pricing show' takes one --region");
		return EXIT_USAGE;
	}
	struct chosen_book c;
	int rc = choose_book(ctx, a, &c);
	if (rc)
		return rc;
	struct buf out = BUF_INIT;
	pricing_write_book(&out, c.book, a->regions.n ? a->regions.items[0] : NULL, c.is_current, a->result.json, &a->table);
	rc = write_result(a, &out);
	pricebook_release(&c.loaded);
	return rc;
}

static int do_export(struct cmd_ctx *ctx, struct pricing_args *a, const char *dir)
{
	struct chosen_book c;
	int rc = choose_book(ctx, a, &c);
	if (rc)
		return rc;
	const struct pricebook *b = c.book;
	struct buf err = BUF_INIT;
	size_t n = 0;
	if (pricing_export_dir(b, dir, &n, &err)) {
		log_error("%s", err.s);
		rc = EXIT_RUNTIME;
	} else {
		log_notice("wrote %zu files to %s (price book version %lld, effective %s)", n, dir, (long long)b->version,
			   b->effective_date ? b->effective_date : "unknown");
	}
	buf_release(&err);
	pricebook_release(&c.loaded);
	return rc;
}

static int do_list(struct cmd_ctx *ctx, struct pricing_args *a)
{
	if (ctx->pricing_dir) {
		log_error("'pricing list' lists the database's versions; it does not take --pricing-dir");
		return EXIT_USAGE;
	}
	int rc = cmd_prepare(ctx, NEEDS_PRICES);
	if (rc)
		return rc;
	struct ledger_price_version *v;
	size_t n;
	if ((rc = stored_versions(ctx, &v, &n)))
		return rc;
	struct buf out = BUF_INIT;
	pricing_write_versions(&out, v, n, a->result.json, &a->table);
	rc = write_result(a, &out);
	ledger_price_versions_free(v, n);
	return rc;
}

static int parse_version_arg(const char *s, int64_t *out)
{
	if (em_parse_i64(s, out) || *out <= 0) {
		log_error("'%s' is not a price book version number (see 'ebsmigrate pricing list')", s);
		return EXIT_USAGE;
	}
	return 0;
}

/* `pricing diff` with no version before `to`: not a failure, an answer ("nothing to compare"). */
static int diff_nothing(struct cmd_ctx *ctx, struct pricing_args *a, int64_t to)
{
	struct pricebook bt;
	int rc = stored_book(ctx, to, &bt);
	if (rc)
		return rc;
	struct pricing_diff d;
	memset(&d, 0, sizeof d);
	struct buf out = BUF_INIT;
	pricing_diff_write(&out, &d, NULL, &bt, a->result.json, &a->table);
	rc = write_result(a, &out);
	pricebook_release(&bt);
	return rc;
}

static int do_diff(struct cmd_ctx *ctx, struct pricing_args *a, char **args, int n_args)
{
	if (ctx->pricing_dir) {
		log_error("'pricing diff' compares stored versions; it does not take --pricing-dir");
		return EXIT_USAGE;
	}
	if (n_args > 2) {
		log_error("'pricing diff' takes at most two versions");
		return EXIT_USAGE;
	}
	int64_t from = 0, to = 0;
	if ((n_args > 0 && parse_version_arg(args[0], &from)) || (n_args > 1 && parse_version_arg(args[1], &to)))
		return EXIT_USAGE;
	int rc = cmd_prepare(ctx, NEEDS_PRICES);
	if (rc)
		return rc;
	if (!to)
		to = ctx->book.version;
	if (!from) {
		struct ledger_price_version *v;
		size_t n;
		if ((rc = stored_versions(ctx, &v, &n)))
			return rc;
		for (size_t i = 0; i < n; i++)
			if (v[i].id < to)
				from = v[i].id;
		ledger_price_versions_free(v, n);
		if (!from)
			return diff_nothing(ctx, a, to);
	}
	struct pricebook bf, bt;
	rc = stored_book(ctx, from, &bf);
	if (!rc && (rc = stored_book(ctx, to, &bt)))
		pricebook_release(&bf);
	if (rc)
		return rc;
	struct pricing_diff d;
	pricing_diff_build(&d, &bf, &bt);
	struct buf out = BUF_INIT;
	pricing_diff_write(&out, &d, &bf, &bt, a->result.json, &a->table);
	rc = write_result(a, &out);
	pricing_diff_release(&d);
	pricebook_release(&bf);
	pricebook_release(&bt);
	return rc;
}

int cmd_pricing(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct pricing_args a = {.regions = STRLIST_INIT_NODUP};
	char **rest;
	int n_rest;
	int rc;
	if (cmd_start_subcommand(ctx, "pricing", argc, argv, on_option, &a, &a.result,
				 "'pricing' needs a subcommand: refresh, show, list, diff or export", &rest, &n_rest, &rc))
		goto out;
	const char *sub = rest[0];
	cmd_table_options(&a.table, a.result.file, a.result.format == PRICING_WIDE, a.result.no_headers);
	if (strcmp(sub, "refresh") == 0) {
		rc = n_rest > 1 ? (log_error("unexpected argument '%s'", rest[1]), EXIT_USAGE)
				: only(sub, &a, 1, 1, 0, 0);
		if (!rc)
			rc = do_refresh(ctx, &a);
	} else if (strcmp(sub, "show") == 0) {
		rc = n_rest > 1 ? (log_error("unexpected argument '%s'", rest[1]), EXIT_USAGE) : only(sub, &a, 1, 0, 1, 1);
		if (!rc)
			rc = do_show(ctx, &a);
	} else if (strcmp(sub, "list") == 0) {
		rc = n_rest > 1 ? (log_error("unexpected argument '%s'", rest[1]), EXIT_USAGE) : only(sub, &a, 0, 0, 1, 0);
		if (!rc)
			rc = do_list(ctx, &a);
	} else if (strcmp(sub, "diff") == 0) {
		rc = only(sub, &a, 0, 0, 1, 0);
		if (!rc)
			rc = do_diff(ctx, &a, rest + 1, n_rest - 1);
	} else if (strcmp(sub, "export") == 0) {
		if (n_rest != 2) {
			log_error("'pricing export' needs one directory: ebsmigrate pricing export DIR");
			rc = EXIT_USAGE;
		} else {
			rc = only(sub, &a, 0, 0, 0, 1);
			if (!rc)
				rc = do_export(ctx, &a, rest[1]);
		}
	} else {
		log_error("unknown pricing subcommand '%s'; use refresh, show, list, diff or export", sub);
		rc = EXIT_USAGE;
	}
out:
	strlist_release(&a.regions);
	return rc;
}
