/*
 * cmd_report.c - `ebsmigrate report`: options, help and glue (inventory -> planner -> ledger's
 * completed migrations -> report -> writer). The same inputs as `plan`; no domain logic here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_credential_chain.h"
#include "ebsmigrate/aws_pricing.h"
#include "cmd.h"
#include "cmd_fleet.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_config.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/ledger_report.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/notify.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/report.h"
#include "ebsmigrate/report_publish.h"
#include "ebsmigrate/scope.h"
#include "ebsmigrate/table.h"

enum { OPT_GROUP_BY = 1, OPT_PERIOD, OPT_SINCE, OPT_TOTALS, OPT_SERIES, OPT_NOTIFY_FILE, OPT_PUBLISH_CONFIGMAP,
       OPT_REPORT_S3 };

static const struct cmd_format report_formats[] = {
	{"table", REPORT_TABLE, 0}, {"wide", REPORT_WIDE, 0}, {"json", REPORT_JSON, 0}, {"yaml", REPORT_YAML, 0},
	{"csv", REPORT_CSV, 0},
	{"markdown", REPORT_MARKDOWN, 0}, {"md", REPORT_MARKDOWN, 1}, {"html", REPORT_HTML, 0}, {NULL, 0, 0},
};

static const struct cmd_option report_options[] = {
	CMD_FLEET_FROM_AWS_OPTION,
	{"from-kube-json", 0, ARG_REQUIRED, "[CLUSTER=]FILE|DIR",
	 "output of 'kubectl get pv,pvc,storageclass,statefulset -A -o json' or -o yaml (as for plan); a DIR as for "
	 "--from-aws-json; repeatable", OPT_FLEET_FROM_KUBE},
	{"from-saved", 0, ARG_REQUIRED, "DIR", "replay what 'inventory --save DIR' wrote (as for plan); repeatable",
	 OPT_FLEET_FROM_SAVED},
	{"group-by", 0, ARG_REQUIRED, "KEYS",
	 "comma-separated: namespace, cluster, account, region, storage-class, label:KEY (PVC label), tag:KEY "
	 "(EBS tag); default cluster,namespace",
	 OPT_GROUP_BY},
	{"period", 0, ARG_REQUIRED, "PERIOD", "month (default) or year: the period of the money columns", OPT_PERIOD},
	{"since", 0, ARG_REQUIRED, "DATE", "count realized savings of migrations completed at or after DATE (RFC 3339 "
					   "or YYYY-MM-DD)",
	 OPT_SINCE},
	{"mode", 0, ARG_REQUIRED, "MODE", "plan mode for the targets: match (default), baseline or observed", OPT_FLEET_MODE},
	CMD_FORMAT_OPTIONS("table (default), wide, json, yaml, csv, markdown or html", OPT_RESULT_OUTPUT, OPT_RESULT_FORMAT),
	CMD_OUTPUT_FILE_OPTION(OPT_RESULT_FILE),
	CMD_NO_HEADERS_OPTION("table, wide: no title row", OPT_RESULT_NO_HEADERS),
	{"max-price-age", 0, ARG_REQUIRED, "AGE",
	 "warn when the prices are older than AGE (default 90d; e.g. 30d, 0 = never)", OPT_FLEET_MAX_PRICE_AGE},
	{"totals", 0, ARG_REQUIRED, "FILE",
	 "also write the totals as CSV to FILE (header and one row); CSV output itself holds the groups only",
	 OPT_TOTALS},
	{"series", 0, ARG_REQUIRED, "FILE",
	 "also write the realized savings per day since the first apply as CSV to FILE", OPT_SERIES},
	CMD_NOTIFY_OPTION("report", OPT_NOTIFY_FILE),
	{"publish-configmap", 0, ARG_REQUIRED, "NS/NAME",
	 "also store the report in ConfigMap NAME of namespace NS (key report.EXT; created or updated in the "
	 "current context or the pod's cluster); over 1 MB it is cut with a marker (table, markdown, html) or "
	 "refused (json, yaml, csv)",
	 OPT_PUBLISH_CONFIGMAP},
	{"report-s3", 0, ARG_REQUIRED, "s3://BUCKET[/PREFIX]",
	 "also upload the report to PREFIX/report-TIME.EXT and PREFIX/latest.EXT (SigV4 PutObject; "
	 "AWS_ENDPOINT_URL_S3 honoured)",
	 OPT_REPORT_S3},
	CMD_SCOPE_OPTIONS,
	CMD_OPTIONS_END,
};

const struct cmd_help report_help = {
	.usage = CMD_USAGE(
		"--from-aws-json FILE|DIR... [--from-kube-json [CLUSTER=]FILE|DIR...] | --from-saved DIR [--group-by KEYS] "
		"[--period month|year] "
		"[--since DATE] [-o table|wide|json|yaml|csv|markdown|html] [--output-file FILE] [--totals FILE] [--series FILE] "
		"[--notify-webhook-file FILE]",
		"[--region REGION...] [--context NAME...|--all-contexts] [--group-by KEYS] [-o FORMAT] [--output-file FILE]",
		CMD_SCOPE_USAGE("[--context NAME...] [--region REGION...] "),
		"... [--publish-configmap NS/NAME] [--report-s3 s3://BUCKET[/PREFIX]]"),
	.description =
		"Prices the fleet as `ebsmigrate plan` does (the same inputs: AWS CLI and kubectl exports, or the "
		"live APIs without --from-* options) and adds it up by group: volumes, GiB, the monthly cost before "
		"migration (baseline: each volume's cost in the first recorded plan that priced it), now and at the "
		"target, and the planned savings (baseline - target) split into realized (completed in the apply "
		"ledger, optionally since --since), in flight (sent, not completed), remaining (not sent) and blocked "
		"(blocked, review, deferred or failed), which add up to the planned savings to the cent; then the "
		"further savings from right-sizing and a total row. Groups add up to the totals to the cent. The "
		"realized savings per day since the first apply follow (a section of the table, series[] in JSON, "
		"--series FILE for CSV, a chart in HTML). CSV output holds the groups only; --totals FILE writes "
		"the total row to a file of its own.\n"
		"\n"
		"Volumes outside Kubernetes are grouped under (not-kubernetes) for Kubernetes keys; a volume without "
		"a value is grouped under (none). Nothing is dropped. label:KEY reads PVC labels (namespace labels "
		"are not collected yet).\n"
		"\n"
		"Scoping (docs/scope.md): -n NS (repeatable) keeps the volumes whose PVC is in NS, -A every "
		"namespace (the default; it overrides -n), -l SELECTOR those whose PVC's labels match the kubectl "
		"selector, --account and --volume those of that account or id; values of one flag OR, flags AND. "
		"Volumes without a PVC are left out by -n and -l. A namespace no PVC is in, or a scope that "
		"matches nothing, is a notice and exit 0 with an empty result. Every figure is the "
		"scoped set's and still adds up; ledger rows outside the scope are not counted. With exports "
		"--context and --region filter too.\n"
		"\n"
		"Publishing (docs/deploy.md#publishing-the-report), after the report is written: "
		"--publish-configmap NS/NAME stores it in a ConfigMap (created, or patched when it exists) of the "
		"first --context, the current context, or the pod's own cluster; --report-s3 uploads it to S3 with "
		"the AWS credentials chain, signed for the first --region or AWS_REGION. A failed publication is "
		"exit 1 after the report itself was written.\n"
		"\n"
		"Examples:\n"
		"  ebsmigrate report --from-aws-json vols.json --from-kube-json prod=prod.json\n"
		"  ebsmigrate report --from-aws-json vols.json --group-by tag:team --period year -o csv\n"
		"  ebsmigrate report --group-by cluster,namespace --since 2026-11-01 -o html --output-file report.html\n"
		"\n"
		"Notification: with --notify-webhook-file FILE (or EBSMIGRATE_NOTIFY_WEBHOOK set to the URL), once the "
		"report is written a short summary is posted as Slack-compatible JSON ({\"text\", \"blocks\"}: totals, "
		"the savings split, the largest groups, warnings) to that https:// incoming-webhook URL. The URL is read "
		"from the file (a mounted Secret) so it never appears in argv, logs or messages, which name its host "
		"only. A post that fails (after 3 attempts) is a warning and does not change the exit code; "
		"EBSMIGRATE_NOTIFY_CA_BUNDLE names a PEM file of CAs to trust instead of the system's (docs/report.md).",
	.options = report_options,
	.shared = live_options,
	.exit_codes = "Exit 2 for unreadable or malformed exports or a bad --group-by/--since/--publish-configmap/"
		      "--report-s3 value, or a --notify-webhook-file (or EBSMIGRATE_NOTIFY_WEBHOOK) that holds no "
		      "https:// URL (checked before anything is read). Exit 1 when publishing fails (the report was "
		      "still written). A failed notification is a warning: the exit code is the report's. Exit 3 when "
		      "several accounts are read live and one of them (or one of its regions) could not be "
		      "(docs/accounts.md).",
	.output = CMD_OUTPUT_FORMATS(report_formats, -1, -1),
};

struct report_args {
	struct cmd_fleet in; /* the exports or live reading, the scope, --mode, --max-price-age */
	const char *group_by;
	enum report_period period;
	time_t since;
	struct cmd_output_options result; /* format: enum report_format */
	const char *totals, *series;
	const char *notify_file;
	struct kube_configmap_ref configmap; /* --publish-configmap; name NULL = none */
	struct report_s3_url s3;               /* --report-s3; bucket NULL = none */
};



static int on_option(void *st, int id, const char *arg)
{
	struct report_args *a = st;
	switch (id) {
	case OPT_GROUP_BY: a->group_by = arg; return 0;
	case OPT_PERIOD:
		return cmd_usage_if(report_period_parse(arg, &a->period) != 0, "--period: '%s' is not one of month, year",
				    arg);
	case OPT_SINCE:
		return cmd_usage_if(em_parse_time(arg, &a->since) != 0,
				    "--since: '%s' is not a date (YYYY-MM-DD) or RFC 3339 time", arg);
	case OPT_NOTIFY_FILE: a->notify_file = arg; return 0;
	case OPT_PUBLISH_CONFIGMAP:
	case OPT_REPORT_S3: {
		struct buf err = BUF_INIT;
		if (id == OPT_REPORT_S3)
			report_s3_url_release(&a->s3);
		else
			kube_configmap_ref_release(&a->configmap);
		int bad = id == OPT_REPORT_S3 ? report_s3_url_parse(&a->s3, arg, &err)
					      : kube_configmap_ref_parse(&a->configmap, arg, 0, &err);
		int rc = cmd_usage_if(bad != 0, "--%s: %s", id == OPT_REPORT_S3 ? "report-s3" : "publish-configmap",
				      err.s);
		buf_release(&err);
		return rc;
	}
	case OPT_TOTALS:
	case OPT_SERIES:
		/* the report itself may go to stdout: these always name a file */
		*(id == OPT_TOTALS ? &a->totals : &a->series) = arg;
		return cmd_usage_if(!*arg || strcmp(arg, "-") == 0,
				    "--%s: '%s' is not a file name (the report itself goes to stdout)",
				    id == OPT_TOTALS ? "totals" : "series", arg);
	}
	return EXIT_USAGE;
}

/* The file extension and content type a published report carries. */
static void format_ext(enum report_format f, const char **ext, const char **ctype)
{
	switch (f) {
	case REPORT_JSON: *ext = "json", *ctype = "application/json"; return;
	case REPORT_YAML: *ext = "yaml", *ctype = "application/yaml"; return;
	case REPORT_CSV: *ext = "csv", *ctype = "text/csv; charset=utf-8"; return;
	case REPORT_MARKDOWN: *ext = "md", *ctype = "text/markdown; charset=utf-8"; return;
	case REPORT_HTML: *ext = "html", *ctype = "text/html; charset=utf-8"; return;
	case REPORT_TABLE:
	case REPORT_WIDE: break;
	}
	*ext = "txt", *ctype = "text/plain; charset=utf-8";
}

/* --publish-configmap and --report-s3, after the report was written. Says what it did. */
static int publish(const struct report_args *a, const struct buf *doc)
{
	const char *ext, *ctype;
	format_ext((enum report_format)a->result.format, &ext, &ctype);
	int text = a->result.format == REPORT_TABLE || a->result.format == REPORT_WIDE ||
		   a->result.format == REPORT_MARKDOWN || a->result.format == REPORT_HTML;
	struct buf err = BUF_INIT;
	int rc = 0;
	if (a->configmap.name) {
		const struct inventory_live_options *lo = &a->in.live;
		struct kube_selection sel = {lo->kubeconfig, lo->n_contexts ? lo->contexts[0] : NULL, 0, NULL};
		struct kube_target *targets = NULL;
		size_t n = 0;
		struct kube_client kc;
		int truncated = 0;
		rc = kube_targets_load(&targets, &n, &sel, &err);
		if (!rc && n == 0)
			rc = em_err(&err, EM_ENOTFOUND, "no Kubernetes context to publish to");
		if (!rc && !(rc = kube_client_init(&kc, &targets[0], NULL, &err))) {
			rc = report_publish_configmap(&kc, &a->configmap, ext, text, doc, em_now(), &truncated, &err);
			kube_client_release(&kc);
		}
		if (rc)
			log_error("--publish-configmap %s/%s: %s", a->configmap.ns, a->configmap.name, err.s);
		else
			log_notice("report published to ConfigMap %s/%s (context '%s', key report.%s%s)", a->configmap.ns,
				   a->configmap.name, targets[0].context, ext, truncated ? ", truncated" : "");
		if (truncated)
			log_warning("the report is %zu bytes: the ConfigMap holds its first %d bytes and a marker",
				    doc->len, REPORT_CONFIGMAP_MAX);
		kube_targets_free(targets, n);
	}
	if (!rc && a->s3.bucket) {
		const struct inventory_live_options *lo = &a->in.live;
		char *region = NULL, *key = NULL;
		struct aws_client aws;
		struct aws_client_options co = {lo->profile, 0, 0, 0};
		buf_reset(&err);
		rc = aws_region_resolve(&region, lo->n_regions ? lo->regions[0] : NULL, lo->profile, &err);
		if (!rc && !(rc = aws_client_init(&aws, &co, &err))) {
			rc = report_publish_s3(&aws, region, &a->s3, ext, ctype, doc, em_now(), &key, &err);
			aws_client_release(&aws);
		}
		if (rc)
			log_error("--report-s3: %s", err.s);
		else
			log_notice("report uploaded to s3://%s/%s (and latest.%s beside it)", a->s3.bucket, key, ext);
		free(region);
		free(key);
	}
	buf_release(&err);
	return rc ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_report(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct report_args a = {0};
	struct report_key *keys = NULL;
	size_t n_keys = 0;
	struct notify_target notify = {NULL, NULL};
	int rc;
	if (cmd_fleet_start(ctx, "report", argc, argv, &a.in, on_option, &a, &a.result,
			    "; exports are given with --from-aws-json/--from-kube-json", &rc))
		goto out;
	struct buf err = BUF_INIT;
	if (report_parse_group_by(a.group_by ? a.group_by : "cluster,namespace", &keys, &n_keys, &err)) {
		log_error("%s", err.s);
		buf_release(&err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (notify_target_load(&notify, a.notify_file, &err)) {
		log_error("%s", err.s);
		buf_release(&err);
		rc = EXIT_USAGE;
		goto out;
	}
	rc = cmd_prepare(ctx, NEEDS_PRICES | NEEDS_DB);
	if (rc)
		goto out;

	struct fleet fleet;
	rc = cmd_fleet_load(&a.in, &fleet, NULL);
	if (rc)
		goto out;
	struct ledger_volume_state *states = NULL;
	struct ledger_baseline *bases = NULL;
	size_t n_states = 0, n_bases = 0;
	time_t first_apply = 0;
	const char **ids = fleet.n ? xcalloc(fleet.n, sizeof *ids) : NULL;
	for (size_t i = 0; i < fleet.n; i++)
		ids[i] = fleet.vols[i].volume_id;
	int lrc = ledger_volume_states(ctx->db, &states, &n_states, &err);
	if (!lrc)
		lrc = ledger_plan_baselines(ctx->db, ids, fleet.n, &bases, &n_bases, &err);
	if (!lrc)
		lrc = ledger_first_apply(ctx->db, &first_apply, &err);
	free(ids);
	if (lrc) {
		log_error("%s", err.s);
		buf_release(&err);
		ledger_volume_states_free(states, n_states);
		ledger_baselines_free(bases, n_bases);
		fleet_release(&fleet);
		rc = EXIT_RUNTIME;
		goto out;
	}
	/* borrowed views for the report */
	struct report_volume_state *rs = n_states ? xcalloc(n_states, sizeof *rs) : NULL;
	size_t n_rs = 0;
	/* Under a scope the ledger's volumes outside it are not "elsewhere": only the scoped
	 * volumes' rows count, so the totals are the scoped set's. */
	int scoped = scope_active(&a.in.scope);
	for (size_t i = 0; i < n_states; i++)
		if (!scoped || fleet_find(&fleet, states[i].volume_id))
			rs[n_rs++] = (struct report_volume_state){states[i].volume_id, states[i].state,
								  states[i].eligible_at, states[i].completed_at, 1,
								  states[i].current_monthly};
	struct report_baseline *rb = n_bases ? xcalloc(n_bases, sizeof *rb) : NULL;
	for (size_t i = 0; i < n_bases; i++)
		rb[i] = (struct report_baseline){bases[i].volume_id, bases[i].monthly};
	struct plan_options po = {a.in.mode, em_now()};
	struct plan plan;
	planner_build(&plan, &fleet, &ctx->book, &po);
	/* observed completions (e.g. from CloudTrail) would be passed here; none are read yet */
	struct report_options ro = {keys, n_keys, a.period, a.since, em_now(), first_apply, rs, n_rs, rb, n_bases,
				    NULL, 0};
	struct report report;
	report_build(&report, &plan, &ro);
	struct buf msg = BUF_INIT;
	if (pricing_check_age(&ctx->book, em_now(), a.in.max_age, &msg)) {
		log_warning("%s", msg.s);
		report_add_warning(&report, msg.s);
	}
	buf_release(&msg);

	struct buf out = BUF_INIT, totals = BUF_INIT, series = BUF_INIT;
	if (a.result.format == REPORT_TABLE || a.result.format == REPORT_WIDE) {
		struct table_options to;
		cmd_table_options(&to, a.result.file, a.result.format == REPORT_WIDE, a.result.no_headers);
		int publishing = a.configmap.name || a.s3.bucket; /* the published copy has no colour codes */
		report_write_table(&out, &report, ctx->color_stdout && !a.result.file && !publishing, &to);
	} else {
		report_write(&out, &report, a.result.format, 0);
	}
	struct cmd_outputs outs = CMD_OUTPUTS_INIT;
	struct buf yaml = BUF_INIT;
	const struct buf *result = a.result.format == REPORT_YAML ? &yaml : &out; /* -o yaml: out is the JSON */
	rc = cmd_outputs_add_document(&outs, a.result.file, a.result.format == REPORT_YAML, NULL, &out, &yaml);
	if (!rc && a.totals) {
		report_write_csv_totals(&totals, &report);
		rc = cmd_outputs_add(&outs, a.totals, &totals);
	}
	if (!rc && a.series) {
		report_write_csv_series(&series, &report);
		rc = cmd_outputs_add(&outs, a.series, &series);
	}
	if (!rc)
		rc = cmd_outputs_commit(&outs);
	cmd_outputs_release(&outs);
	if (!rc && (a.configmap.name || a.s3.bucket))
		rc = publish(&a, result);
	/* A partial report (exit 3) was still written, so it is still announced. */
	if (!rc && notify.url) {
		struct buf payload = BUF_INIT;
		notify_report_payload(&payload, &report, em_now());
		cmd_notify_send(&notify, &payload);
		buf_release(&payload);
	}
	size_t covered = 0, partial = 0, in_scope = 0; /* several accounts: one not read makes the report partial */
	fleet_account_coverage(&fleet, &covered, &partial, &in_scope);
	if (!rc && covered < in_scope) {
		log_warning("%zu of %zu accounts read%s: the report covers what was read (exit 3)", covered, in_scope,
			    partial ? " in every region" : "");
		rc = EXIT_PARTIAL;
	}
	buf_release(&out);
	buf_release(&yaml);
	buf_release(&totals);
	buf_release(&series);
	buf_release(&err);
	report_release(&report);
	plan_release(&plan);
	free(rs);
	free(rb);
	ledger_volume_states_free(states, n_states);
	ledger_baselines_free(bases, n_bases);
	fleet_release(&fleet);
out:
	notify_target_release(&notify);
	report_keys_free(keys, n_keys);
	kube_configmap_ref_release(&a.configmap);
	report_s3_url_release(&a.s3);
	cmd_fleet_release(&a.in);
	return rc;
}
