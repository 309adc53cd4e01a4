/*
 * cmd_plan.c - `ebsmigrate plan`: options, help and glue (inventory -> planner -> writer ->
 * ledger). No domain logic here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/aws_pricing.h"
#include "cmd.h"
#include "cmd_fleet.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/notify.h"
#include "ebsmigrate/plan_manifests.h"
#include "ebsmigrate/plan_output.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/scope.h"
#include "ebsmigrate/table.h"

enum { OPT_NO_RECORD = 1, OPT_MANIFESTS, OPT_BATCH_SIZE, OPT_ROUTE, OPT_FORCE, OPT_TEMPLATES_DIR, OPT_OUT, OPT_NOTIFY_FILE };

static const struct cmd_format plan_formats[] = {
	{"table", FORMAT_TABLE, 0}, {"wide", FORMAT_WIDE, 0}, {"json", FORMAT_JSON, 0}, {"yaml", FORMAT_YAML, 0},
	{"csv", FORMAT_CSV, 0}, {"markdown", FORMAT_MARKDOWN, 0}, {"md", FORMAT_MARKDOWN, 1}, {NULL, 0, 0},
};

static const struct cmd_option plan_options[] = {
	CMD_FLEET_FROM_AWS_OPTION,
	{"from-kube-json", 0, ARG_REQUIRED, "[CLUSTER=]FILE|DIR",
	 "output of 'kubectl get pv,pvc,storageclass,statefulset -A -o json' or -o yaml (also VACs, pods, nodes, "
	 "stats/summary, 'kubectl version -o json'); a DIR: every *.json, *.yaml, *.yml in it, in name order; "
	 "repeatable",
	 OPT_FLEET_FROM_KUBE},
	{"from-saved", 0, ARG_REQUIRED, "DIR",
	 "replay what 'inventory --save DIR' wrote: its AWS files as --from-aws-json, CLUSTER*.json as "
	 "--from-kube-json CLUSTER=..., an account's subdirectory DIR/ACCOUNT-ID/ (several accounts) as "
	 "--from-aws-json ACCOUNT-ID=... and accounts.json (their coverage) as --from-aws-json; repeatable",
	 OPT_FLEET_FROM_SAVED},
	{"mode", 0, ARG_REQUIRED, "MODE", "match (default: keep gp2's performance), baseline (3000/125) or observed",
	 OPT_FLEET_MODE},
	CMD_FORMAT_OPTIONS("table (default), wide, json, yaml, csv or markdown", OPT_RESULT_OUTPUT, OPT_RESULT_FORMAT),
	{"output-file", 0, ARG_REQUIRED, "FILE",
	 "write the rendered result (-o) to FILE (atomically) instead of stdout", OPT_RESULT_FILE},
	CMD_NO_HEADERS_OPTION("table, wide: no title row", OPT_RESULT_NO_HEADERS),
	{"out", 0, ARG_REQUIRED, "PLANFILE",
	 "also save the plan document itself to FILE (atomically) for 'apply --plan FILE'; unlike "
	 "--output-file, whatever -o says", OPT_OUT},
	{"no-record", 0, ARG_NONE, NULL, "do not record the plan in the database", OPT_NO_RECORD},
	CMD_NOTIFY_OPTION("plan", OPT_NOTIFY_FILE),
	{"max-price-age", 0, ARG_REQUIRED, "AGE",
	 "warn when the prices are older than AGE (default 90d; e.g. 30d, 0 = never)", OPT_FLEET_MAX_PRICE_AGE},
	{"manifests", 0, ARG_REQUIRED, "DIR",
	 "also write VolumeAttributesClasses, PVC patch batches, rollbacks, StorageClasses and EC2 scripts into "
	 "DIR, created fresh (docs/manifests.md)", OPT_MANIFESTS},
	{"batch-size", 0, ARG_REQUIRED, "N", "--manifests: volumes per batch (default 10)", OPT_BATCH_SIZE},
	{"route", 0, ARG_REQUIRED, "ROUTE",
	 "--manifests: vac (default), annotation (volume-modifier sidecar) or ec2, for CSI claims", OPT_ROUTE},
	{"force", 0, ARG_NONE, NULL, "--manifests: replace a DIR that an earlier --manifests wrote", OPT_FORCE},
	{"templates-dir", 0, ARG_REQUIRED, "DIR", "--manifests: templates here override the built-in ones",
	 OPT_TEMPLATES_DIR},
	CMD_SCOPE_OPTIONS,
	CMD_OPTIONS_END,
};

const struct cmd_help plan_help = {
	.usage = CMD_USAGE(
		"--from-aws-json FILE|DIR... [--from-kube-json [CLUSTER=]FILE|DIR...] [--mode MODE] [-o FORMAT] [--output-file FILE]",
		"--from-saved DIR [--mode MODE] [-o FORMAT] [--output-file FILE]",
		"[--region REGION...] [--context NAME...|--all-contexts] [--mode MODE] [-o FORMAT] [--output-file FILE]",
		"... [--out PLANFILE] [--no-record] [--notify-webhook-file FILE]",
		CMD_SCOPE_USAGE("[--context NAME...] [--region REGION...] ")),
	.description = "Reads EBS volumes (AWS CLI JSON exports) and Kubernetes objects (kubectl JSON exports), "
	"prices every volume from the price book and recommends, for each gp2 volume, the gp3 "
	"IOPS and throughput that keep its performance, with the monthly cost before and after, "
	"the savings, flags (unattached, in-tree-pv, throughput-burst-only, oversized-for-iops, "
	"modification-limit, unpriced, ...), the action (migrate, skip, blocked, review) and when "
	"the volume may be modified under EBS's rules (one modification in flight, at most 4 per "
	"rolling 24 hours).\n"
	"\n"
	"Without --from-* options the fleet is read live from the AWS and Kubernetes APIs, as "
	"`ebsmigrate inventory` does (see its options below), and CloudWatch metrics sharpen the plan: "
	"burst-dependent volumes, the throughput of 170-334 GiB volumes, and --mode observed.\n"
	"\n"
	"The plan is recorded in the database (its id is printed on stderr) unless --no-record; "
	"`ebsmigrate apply` works from the latest recorded plan. --out FILE saves the same plan "
	"document to a file (as terraform plan -out does), with or without --no-record, for "
	"`ebsmigrate apply --plan FILE`, possibly on another machine or database. --output-file is "
	"different: it redirects what is printed (the table, csv, ... as -o says), which apply does not read.\n"
	"\n"
	"Scoping (docs/scope.md): -n NS (repeatable) keeps the volumes whose PVC is in NS, -A every "
	"namespace (the default; it overrides -n), -l SELECTOR those whose PVC's labels match the kubectl "
	"selector, --account and --volume those of that account or id; values of one flag OR, flags AND. "
	"Volumes without a PVC are left out by -n and -l. A namespace no PVC is in, or a scope that "
	"matches nothing, is a notice and exit 0 with an empty result. -l is evaluated against the "
	"exports' PVC labels (or those read live); with exports --context and --region keep the volumes of that "
	"cluster and region (live they choose what is read). The plan, its totals and the recorded plan hold the "
	"scoped volumes only.\n"
	"\n"
	"Examples:\n"
	"  aws ec2 describe-volumes --output json > vols.json\n"
	"  kubectl get pv,pvc,storageclass,statefulset -A -o json > prod.json\n"
	"  ebsmigrate plan --from-aws-json vols.json --from-kube-json prod=prod.json\n"
	"  ebsmigrate plan --from-aws-json 111122223333=vols.json -o json --output-file plan.json\n"
	"  ebsmigrate inventory --save saved && ebsmigrate plan --from-saved saved\n"
	"  ebsmigrate plan --out saved-plan.json && ebsmigrate apply --plan saved-plan.json --dry-run\n"
	"\n"
	"--notify-webhook-file FILE (or EBSMIGRATE_NOTIFY_WEBHOOK) posts a short summary of the plan to a "
	"Slack-compatible incoming webhook once it is written, as report does (docs/report.md#notifications).",
	.options = plan_options,
	.shared = live_options,
	.exit_codes = "Exit 2 for unreadable or malformed exports (the message names the file and JSON path). "
	"Volumes with problems of their own (volume-not-found, unpriced) are flagged, not fatal. Exit 2 for a "
	"--notify-webhook-file (or EBSMIGRATE_NOTIFY_WEBHOOK) without an https:// URL; a failed notification is a "
	"warning. Exit 3 when several accounts are read (--accounts, --organization, repeated --profile) and one of "
	"them, or one of its regions, could not be: the plan covers the rest and its .accounts says what was read "
	"(docs/accounts.md).",
	.output = CMD_OUTPUT_FORMATS(plan_formats, -1, -1),
};

struct plan_args {
	struct cmd_fleet in; /* the exports or live reading, the scope, --mode, --max-price-age */
	struct cmd_output_options result; /* format: enum out_format */
	const char *out; /* --out: the plan document */
	const char *notify_file;
	int no_record;
	struct manifest_options man;
	int man_opts;
};


static int on_option(void *st, int id, const char *arg)
{
	struct plan_args *a = st;
	switch (id) {
	case OPT_OUT:
		if (strcmp(arg, "-") == 0) {
			log_error("--out: give a file name; to print the plan document use -o json");
			return EXIT_USAGE;
		}
		a->out = arg;
		return 0;
	case OPT_NO_RECORD: a->no_record = 1; return 0;
	case OPT_NOTIFY_FILE: a->notify_file = arg; return 0;
	case OPT_MANIFESTS: a->man.dir = arg; return 0;
	case OPT_BATCH_SIZE: {
		int64_t n;
		if (em_parse_i64(arg, &n) || n < 1 || n > MANIFEST_MAX_BATCH) {
			log_error("--batch-size: '%s' is not a number from 1 to %d", arg, MANIFEST_MAX_BATCH);
			return EXIT_USAGE;
		}
		a->man.batch_size = (size_t)n;
		a->man_opts = 1;
		return 0;
	}
	case OPT_ROUTE:
		a->man_opts = 1;
		return cmd_usage_if(manifest_route_parse(arg, &a->man.route) != 0,
				    "--route: '%s' is not one of vac, annotation, ec2", arg);
	case OPT_FORCE: a->man.force = 1; a->man_opts = 1; return 0;
	case OPT_TEMPLATES_DIR: a->man.templates_dir = arg; a->man_opts = 1; return 0;
	}
	return EXIT_USAGE;
}


static void write_plan_json(const void *plan, const struct buf_spill *spill)
{
	plan_write_json_spilled(plan, spill);
}

int cmd_plan(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct plan_args a = {0};
	struct notify_target notify = {NULL, NULL};
	int rc;
	if (cmd_fleet_start(ctx, "plan", argc, argv, &a.in, on_option, &a, &a.result,
			    "; exports are given with --from-aws-json/--from-kube-json/--from-saved", &rc))
		goto out;
	if (a.out && a.result.file && strcmp(a.out, a.result.file) == 0) {
		log_error("--out and --output-file both name '%s': --out saves the plan document, --output-file "
			  "the printed result; give two files (or, with -o json, only --out)", a.out);
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.man_opts && !a.man.dir) {
		log_error("--batch-size, --route, --force and --templates-dir go with --manifests DIR");
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.man.dir) {
		struct buf merr = BUF_INIT;
		if (manifest_check_dir(a.man.dir, a.man.force, &merr)) {
			log_error("%s", merr.s);
			rc = EXIT_USAGE;
		}
		buf_release(&merr);
		if (rc)
			goto out;
	}
	struct buf nerr = BUF_INIT;
	if (notify_target_load(&notify, a.notify_file, &nerr)) {
		log_error("%s", nerr.s);
		rc = EXIT_USAGE;
	}
	buf_release(&nerr);
	if (rc)
		goto out;
	rc = cmd_prepare(ctx, NEEDS_PRICES | (a.no_record ? 0 : NEEDS_DB));
	if (rc)
		goto out;
	struct buf age = BUF_INIT;
	if (pricing_check_age(&ctx->book, em_now(), a.in.max_age, &age))
		log_warning("%s", age.s);
	buf_release(&age);

	/* Missing data is said on stderr in every format (table and csv print all warnings below). */
	int said_below = a.result.format == FORMAT_TABLE || a.result.format == FORMAT_WIDE || a.result.format == FORMAT_CSV;
	struct fleet fleet;
	rc = cmd_fleet_load(&a.in, &fleet, said_below ? NULL : ctx);
	if (rc)
		goto out;
	size_t covered = 0, partial = 0, in_scope = 0; /* several accounts: one not read makes the plan partial */
	fleet_account_coverage(&fleet, &covered, &partial, &in_scope);
	struct buf err = BUF_INIT;
	struct plan_options po = {a.in.mode, em_now()};
	struct plan plan;
	planner_build(&plan, &fleet, &ctx->book, &po);
	/* Every output (manifests, --output-file, --out) is staged first and committed only after the last one
	 * and the database record succeeded: a failure leaves none of them behind. */
	struct cmd_outputs outputs = CMD_OUTPUTS_INIT;
	struct buf man_note = BUF_INIT;
	if (a.man.dir) {
		struct manifest_set ms;
		int mrc = manifest_build(&ms, &plan, &fleet, &a.man, &err);
		cmd_print_warnings(ctx, ms.warnings, ms.n_warnings, "the manifests' README.md");
		if (!mrc)
			mrc = manifest_stage(&outputs.staging, &ms, a.man.dir, a.man.force, &err);
		if (mrc) {
			log_error("%s", err.s);
			rc = em_exit_code_for(mrc);
		} else {
			buf_addf(&man_note,
				 "manifests for %zu cluster(s), %zu claim(s) and %zu EC2 volume(s) in %zu batch(es) "
				 "written to %s (see its README.md)",
				 ms.n_clusters, ms.n_pvcs, ms.n_ec2, ms.n_batches, a.man.dir);
		}
		manifest_set_release(&ms);
		if (mrc) {
			cmd_outputs_release(&outputs);
			buf_release(&err);
			buf_release(&man_note);
			plan_release(&plan);
			fleet_release(&fleet);
			goto out;
		}
	}

	/* -o json: the document goes out in pieces, to a spool file (what stdout, --output-file and --out
	 * get at commit) and to the database's compressed copy, never whole in memory (1,000,000
	 * volumes make ~500 MB of JSON). -o yaml: the same, then the spool is converted into a
	 * second one (yamlout.c streams it) for stdout or --output-file. Other formats, or no
	 * spool: built in memory. */
	int recording = !a.no_record && ctx->db;
	int yaml = a.result.format == FORMAT_YAML;
	struct cmd_spool_sink sink = {a.result.format == FORMAT_JSON || yaml ? cmd_spool_open_tmp("plan") : NULL, NULL};
	struct buf out = BUF_INIT;
	if (sink.spool) {
		buf_reset(&err);
		if (cmd_spool_document(sink.spool, recording, write_plan_json, &plan, &sink.doc)) {
			log_error("cannot write the plan document to a temporary file: %s", strerror(errno));
			rc = EXIT_RUNTIME;
		} else if (sink.doc && ledger_doc_finish(sink.doc, &err)) {
			log_error("%s", err.s);
			rc = EXIT_RUNTIME;
		}
		if (!rc)
			rc = cmd_outputs_add_document(&outputs, a.result.file, yaml, sink.spool, NULL, NULL);
		if (!rc && a.out)
			rc = cmd_outputs_add_spool(&outputs, a.out, sink.spool);
	} else {
		if (a.result.format == FORMAT_TABLE || a.result.format == FORMAT_WIDE) {
			struct table_options to;
			cmd_table_options(&to, a.result.file, a.result.format == FORMAT_WIDE, a.result.no_headers);
			plan_write_table(&out, &plan, ctx->color_stdout && !a.result.file, &to);
		}
		else if (!yaml)
			plan_write(&out, &plan, a.result.format);
		if (a.result.format == FORMAT_TABLE || a.result.format == FORMAT_WIDE || a.result.format == FORMAT_CSV)
			cmd_print_warnings(ctx, plan.warnings, plan.n_warnings, "-o json's .warnings");
		if (yaml) { /* no spool: the YAML of the document built in memory */
			struct buf doc_json = BUF_INIT;
			plan_write(&doc_json, &plan, FORMAT_JSON);
			rc = cmd_outputs_add_document(&outputs, a.result.file, 1, NULL, &doc_json, &out);
			buf_release(&doc_json);
		} else {
			rc = cmd_outputs_add(&outputs, a.result.file, &out);
		}
	}

	/* The plan document: what the database records, --out saves and apply reads. */
	struct buf json = BUF_INIT;
	const struct buf *doc = a.result.format == FORMAT_JSON ? &out : &json; /* -o json: out is it, no copy */
	if (!rc && !sink.spool && (a.out || recording) && doc == &json)
		plan_write(&json, &plan, FORMAT_JSON);
	if (!rc && !sink.spool && a.out)
		rc = cmd_outputs_add(&outputs, a.out, doc);
	int64_t recorded = 0;
	if (!rc && recording) {
		char ts[21];
		em_format_time(plan.generated_at, ts);
		int64_t id = 0;
		buf_reset(&err);
		int lr = sink.doc ? ledger_plan_record_doc(ctx->db, ts, plan_mode_name(plan.mode), ctx->book.version,
							   plan.totals.volumes, plan.totals.savings_monthly, sink.doc, &id,
							   &err)
				  : ledger_plan_record(ctx->db, ts, plan_mode_name(plan.mode), ctx->book.version,
						       plan.totals.volumes, plan.totals.savings_monthly, doc->s, &id, &err);
		if (lr) {
			log_error("%s", err.s);
			rc = EXIT_RUNTIME;
		} else {
			recorded = id;
		}
	}
	if (!rc)
		rc = cmd_outputs_commit(&outputs);
	if (!rc && man_note.len)
		log_notice("%s", man_note.s);
	if (!rc && recorded)
		log_notice("plan %lld recorded in %s", (long long)recorded, ctx->db_path);
	if (!rc && notify.url) {
		struct buf payload = BUF_INIT;
		notify_plan_payload(&payload, &plan, em_now());
		cmd_notify_send(&notify, &payload);
		buf_release(&payload);
	}
	if (!rc && covered < in_scope) {
		log_warning("%zu of %zu accounts read%s: the plan covers what was read; the rest is in its .accounts "
			    "(exit 3)", covered, in_scope, partial ? " in every region" : "");
		rc = EXIT_PARTIAL;
	}
	cmd_outputs_release(&outputs);
	if (sink.spool)
		fclose(sink.spool);
	ledger_doc_free(sink.doc);
	buf_release(&man_note);
	buf_release(&json);
	buf_release(&out);
	buf_release(&err);
	plan_release(&plan);
	fleet_release(&fleet);
out:
	notify_target_release(&notify);
	cmd_fleet_release(&a.in);
	return rc;
}
