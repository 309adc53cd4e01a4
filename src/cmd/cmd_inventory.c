/*
 * cmd_inventory.c - `ebsmigrate inventory`: read the live fleet (AWS and Kubernetes APIs),
 * print it, record the run, optionally save it as exports that `plan --from-*-json` replays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __GLIBC__
#endif

#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/inventory_output.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/scope.h"
#include "ebsmigrate/table.h"

enum { OPT_SAVE = 1, OPT_NO_RECORD };

enum inv_format { INV_TABLE = 0, INV_WIDE, INV_JSON, INV_YAML };
static const struct cmd_format inventory_formats[] = {
	{"table", INV_TABLE, 0}, {"wide", INV_WIDE, 0}, {"json", INV_JSON, 0}, {"yaml", INV_YAML, 0}, {NULL, 0, 0},
};

static const struct cmd_option inventory_options[] = {
	CMD_FORMAT_OPTIONS("table (default), wide, json or yaml", OPT_RESULT_OUTPUT, OPT_RESULT_FORMAT),
	CMD_OUTPUT_FILE_OPTION(OPT_RESULT_FILE),
	CMD_NO_HEADERS_OPTION("table, wide: no title row", OPT_RESULT_NO_HEADERS),
	{"save", 0, ARG_REQUIRED, "DIR",
	 "also write the data as AWS CLI / kubectl JSON exports into DIR (replayable with plan --from-*-json); "
	 "with several accounts each account's AWS exports go to DIR/ACCOUNT-ID/",
	 OPT_SAVE},
	{"no-record", 0, ARG_NONE, NULL, "do not record the run in the database", OPT_NO_RECORD},
	CMD_SCOPE_OPTIONS,
	CMD_OPTIONS_END,
};

const struct cmd_help inventory_help = {
	.usage = CMD_USAGE(
		"[--region REGION...] [--context NAME...|--all-contexts] [--no-kube|--no-aws] [--save DIR] [-o table|wide|json|yaml] [--output-file FILE]",
		"... [--accounts ID,...|@FILE|--organization] [--role-name NAME|--role-arn-template TEMPLATE] [--external-id ID]",
		CMD_SCOPE_USAGE("")),
	.description =
		"Reads EBS volumes (EC2 DescribeVolumes, DescribeVolumesModifications, DescribeInstances), their "
		"CloudWatch metrics over --lookback, and the clusters' PersistentVolumes, claims, StorageClasses, "
		"VolumeAttributesClasses, StatefulSets, pods, nodes and kubelet volume usage, joins them and prints "
		"the fleet. The run is recorded in the database. With --save DIR the data is also written as "
		"exports (volumes-REGION.json, modifications-REGION.json, CLUSTER.json; metrics-REGION.json holds "
		"each volume's reduced CloudWatch figures, not the series) that `ebsmigrate plan "
		"--from-saved DIR` (or --from-aws-json/--from-kube-json naming each file) replays into the same plan. "
		"With several accounts (--accounts, --organization, repeated --profile) each account's AWS exports "
		"are written to the subdirectory DIR/ACCOUNT-ID/ under the same names (instance-types.json once, in "
		"DIR) and the coverage in DIR/accounts.json; the replay labels every volume with the account whose "
		"directory it came from and has the live run's accounts, coverage and exit 3.\n"
		"\n"
		"Either side may be absent: without a kubeconfig (or with --no-kube) every volume is not-kubernetes; "
		"when no AWS credential source is configured at all the clusters' EBS PVs are listed, cannot be "
		"priced, and a warning says so. PVs without zone topology are looked up by volume id in their "
		"clusters' node regions; what stays unfound is a warning naming the fix (--region). Credentials: "
		"docs/aws.md and docs/kubernetes.md; minimal permissions: `ebsmigrate iam-policy`, `ebsmigrate rbac`.\n"
		"\n"
		"Several AWS accounts in one run: --accounts ID,...|@FILE, --organization (every ACTIVE account of the "
		"organization; --exclude-accounts leaves some out) or --profile given more than once; each account is "
		"read with credentials from STS AssumeRole of --role-name NAME (or --role-arn-template) signed with the "
		"base credentials, the current account with the base credentials themselves. Accounts x regions are "
		"read at once (--concurrency); an account or region that cannot be read is a warning and an entry of "
		"-o json's .accounts, and the run exits 3 (docs/accounts.md).\n"
		"\n"
		"Scoping (docs/scope.md): -n NS (repeatable) keeps the volumes whose PVC is in NS, -A every "
		"namespace (the default; it overrides -n), -l SELECTOR those whose PVC's labels match the kubectl "
		"selector, --account and --volume those of that account or id; values of one flag OR, flags AND. "
		"Volumes without a PVC are left out by -n and -l. A namespace no PVC is in, or a scope that "
		"matches nothing, is a notice and exit 0 with an empty result. What is printed "
		"and recorded is the scoped fleet; --save writes everything read.",
	.options = inventory_options,
	.shared = live_options,
	.exit_codes = "Exit 1 when a configured side fails (a credential source that fails, credentials refused, "
		      "network, throttled after all retries: the message names the source, call, region or "
		      "context), or when there is nothing to inventory (no AWS credential source and no "
		      "Kubernetes); nothing is recorded then. Exit 3 when several accounts are read and one of them "
		      "(or one of its regions) could not be: the rest is printed and recorded.",
	.output = CMD_OUTPUT_FORMATS(inventory_formats, INV_JSON, INV_YAML),
};

struct inv_args {
	struct inventory_live_options live;
	struct cmd_output_options result; /* format: enum inv_format */
	int no_record;
	struct scope scope; /* -n, -A, -l, --account, --volume (--region, --context: what is read) */
};

static int on_option(void *st, int id, const char *arg)
{
	struct inv_args *a = st;
	if (id > OPT_LIVE_BASE)
		return cmd_live_option(&a->live, id, arg);
	switch (id) {
	case OPT_SAVE: a->live.save_dir = arg; return 0;
	case OPT_NO_RECORD: a->no_record = 1; return 0;
	}
	return EXIT_USAGE;
}

static void join_strings(struct buf *b, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_addc(b, ',');
		buf_adds(b, v[i]);
	}
}

/* An unlinked temporary file beside the database holding the inventory document, and the
 * document compressed for the record (*doc, the caller's to free); NULL when the file cannot be
 * made or written (the caller then builds the document in memory). */
struct inventory_doc_args {
	const struct fleet *f;
	const struct inventory_meta *m;
};

static void write_inventory_json(const void *arg, const struct buf_spill *spill)
{
	const struct inventory_doc_args *d = arg;
	inventory_write_json_spilled(d->f, d->m, spill);
}

static FILE *spool_document(const char *db_path, const struct fleet *f, const struct inventory_meta *m,
			    struct ledger_doc **doc)
{
	struct buf prefix = BUF_INIT;
	buf_addf(&prefix, "%s.inventory", db_path);
	FILE *fp = cmd_spool_open(prefix.s);
	buf_release(&prefix);
	*doc = NULL;
	const struct inventory_doc_args args = {f, m};
	if (fp && cmd_spool_document(fp, 1, write_inventory_json, &args, doc)) {
		fclose(fp);
		return NULL;
	}
	return fp;
}

int cmd_inventory(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct inv_args a = {0};
	int rc;
	ctx->scope = &a.scope;
	if (cmd_start_options_only(ctx, "inventory", argc, argv, on_option, &a, &a.result, "", &rc) ||
	    (rc = cmd_usage_if(a.live.no_aws && a.live.no_kube, "--no-aws and --no-kube together leave nothing to read")) ||
	    (rc = cmd_live_check(&a.live)) ||
	    (!a.no_record && (rc = cmd_prepare(ctx, NEEDS_DB)))) {
		scope_release(&a.scope);
		cmd_live_options_release(&a.live);
		return rc;
	}
	a.live.progress = cmd_progress;
	/* --save, --output-file and the record are committed together: the exports go to a staging directory */
	struct cmd_outputs outputs = CMD_OUTPUTS_INIT;
	if (a.live.save_dir && !(a.live.save_dir = cmd_outputs_add_dir(&outputs, a.live.save_dir))) {
		cmd_outputs_release(&outputs);
		scope_release(&a.scope);
		cmd_live_options_release(&a.live);
		return EXIT_RUNTIME;
	}
	char started[21], finished[21];
	em_format_time(time(NULL), started);
	struct fleet fleet;
	fleet_init(&fleet);
	struct inventory_live_result res;
	struct buf err = BUF_INIT, out = BUF_INIT;
	int lrc = inventory_load_live(&fleet, &a.live, &res, &err);
	cmd_progress_end();
	if (lrc) {
		log_error("%s", err.s);
		rc = lrc == EM_EINPUT ? EXIT_USAGE : EXIT_RUNTIME;
		goto done;
	}
	em_format_time(time(NULL), finished);
	size_t covered = 0, partial = 0, in_scope = 0; /* several accounts: one not read makes the run partial */
	fleet_account_coverage(&fleet, &covered, &partial, &in_scope);
	struct scope_stats sst;
	scope_filter_fleet(&a.scope, &fleet, &sst);
	char **warnings = xcalloc(fleet.n_notices + 1, sizeof *warnings);
	size_t n_warnings = 0;
	for (size_t i = 0; i < fleet.n_notices; i++) {
		if (inventory_live_notice_is_warning(&res, i))
			warnings[n_warnings++] = fleet.notices[i];
		else
			log_notice("%s", fleet.notices[i]);
	}
	cmd_print_warnings(ctx, warnings, n_warnings, "-o json's .notices");
	free(warnings);
	if (res.outside_regions_note)
		log_notice("%s", res.outside_regions_note);
	cmd_scope_notices(&a.scope, &sst, "volumes");
	scope_stats_release(&sst);
	struct inventory_meta meta = {em_now(), res.account, (const char *const *)res.regions, res.n_regions};
	/* The document (100+ MB for 100,000 volumes) is the JSON output and the database record.
	 * SQLite builds its own copy while inserting it, so it is produced while the fleet exists
	 * but held in memory only once the fleet is gone: spooled to an unlinked file beside the
	 * database, read back after fleet_release. Without a record it is built in memory. */
	struct buf json = BUF_INIT;
	struct ledger_doc *doc = NULL;
	FILE *spool = a.no_record ? NULL : spool_document(ctx->db_path, &fleet, &meta, &doc);
	if (!spool && (a.result.json || !a.no_record))
		inventory_write_json(&json, &fleet, &meta);
	if (!a.result.json) {
		struct table_options to;
		cmd_table_options(&to, a.result.file, a.result.format == INV_WIDE, a.result.no_headers);
		inventory_write_table(&out, &fleet, &meta, &to);
	}
	struct buf regions = BUF_INIT, clusters = BUF_INIT, notices = BUF_INIT;
	join_strings(&regions, res.regions, res.n_regions);
	join_strings(&clusters, fleet.clusters, fleet.n_clusters);
	struct jsonw nw; /* the notices as the ledger keeps them: a JSON array of strings */
	jsonw_init(&nw, &notices, JSONW_COMPACT);
	jsonw_str_array(&nw, (const char *const *)fleet.notices, fleet.n_notices);
	int64_t volumes = (int64_t)fleet.n, kube = 0, id = 0;
	for (size_t i = 0; i < fleet.n; i++)
		kube += fleet.vols[i].kube != NULL;
	fleet_release(&fleet);
	em_release_freed_memory(); /* the fleet's many small blocks: the document and SQLite's copy do not come on top */
	/* JSON output is the recorded document itself: written once, never copied. With a spool it
	 * is never whole in memory: the outputs copy the file and the record is the compressed
	 * stream made while it was written. */
	if (!rc && a.result.json)
		rc = cmd_outputs_add_document(&outputs, a.result.file, a.result.format == INV_YAML, spool, &json, &out);
	else if (!rc)
		rc = cmd_outputs_add(&outputs, a.result.file, &out);
	if (!rc && !a.no_record) {
		struct ledger_inventory_run run = {started, finished, "live", regions.s, clusters.s, volumes,
						   kube, res.aws_calls, notices.s, json.s, NULL};
		buf_reset(&err);
		if (doc && ledger_doc_finish(doc, &err) == 0)
			run.doc = doc;
		if (err.len || ledger_inventory_record(ctx->db, &run, &id, &err)) {
			log_error("%s", err.s);
			rc = EXIT_RUNTIME;
		}
	}
	if (!rc)
		rc = cmd_outputs_commit(&outputs);
	for (size_t i = 0; !rc && i < res.n_saved; i++) {
		char *path = cmd_outputs_final_path(&outputs, res.saved[i]);
		log_notice("saved %s", path);
		free(path);
	}
	if (!rc && id)
		log_notice("inventory run %lld recorded in %s", (long long)id, ctx->db_path);
	if (!rc && covered < in_scope) {
		log_warning("%zu of %zu accounts read%s: the others are listed in the warnings above and in -o json's "
			    ".accounts (exit 3)", covered, in_scope, partial ? " in every region" : "");
		rc = EXIT_PARTIAL;
	}
	if (spool)
		fclose(spool);
	ledger_doc_free(doc);
	buf_release(&regions);
	buf_release(&clusters);
	buf_release(&notices);
	buf_release(&json);
done:
	cmd_outputs_release(&outputs);
	inventory_live_result_release(&res);
	fleet_release(&fleet);
	buf_release(&err);
	buf_release(&out);
	scope_release(&a.scope);
	cmd_live_options_release(&a.live);
	return rc;
}
