/*
 * cmd_report.c - `ebsmigrate report`: options, help and glue (inventory -> planner -> ledger's
 * completed migrations -> report -> writer). The same inputs as `plan`; no domain logic here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/aws_pricing.h"
#include "ebsmigrate/cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/ledger_report.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/report.h"
#include "ebsmigrate/scope.h"
#include "ebsmigrate/table.h"

enum { OPT_FROM_AWS = 1, OPT_FROM_KUBE, OPT_FROM_SAVED, OPT_MODE, OPT_GROUP_BY, OPT_PERIOD, OPT_SINCE, OPT_FORMAT, OPT_OUTPUT,
       OPT_MAX_PRICE_AGE, OPT_TOTALS, OPT_SERIES, OPT_OUTPUT_FILE, OPT_NO_HEADERS };

static const struct cmd_format report_formats[] = {
	{"table", REPORT_TABLE, 0}, {"wide", REPORT_WIDE, 0}, {"json", REPORT_JSON, 0}, {"yaml", REPORT_YAML, 0},
	{"csv", REPORT_CSV, 0},
	{"markdown", REPORT_MARKDOWN, 0}, {"md", REPORT_MARKDOWN, 1}, {"html", REPORT_HTML, 0}, {NULL, 0, 0},
};

static const struct cmd_option report_options[] = {
	{"from-aws-json", 0, ARG_REQUIRED, "[ACCOUNT=]FILE|DIR",
	 "output of 'aws ec2 describe-volumes' or 'describe-volumes-modifications' (--output json); a DIR: "
	 "every *.json in it, in name order; repeatable",
	 OPT_FROM_AWS},
	{"from-kube-json", 0, ARG_REQUIRED, "[CLUSTER=]FILE|DIR",
	 "output of 'kubectl get pv,pvc,storageclass,statefulset -A -o json' (as for plan); a DIR as for "
	 "--from-aws-json; repeatable", OPT_FROM_KUBE},
	{"from-saved", 0, ARG_REQUIRED, "DIR", "replay what 'inventory --save DIR' wrote (as for plan); repeatable",
	 OPT_FROM_SAVED},
	{"group-by", 0, ARG_REQUIRED, "KEYS",
	 "comma-separated: namespace, cluster, account, region, storage-class, label:KEY (PVC label), tag:KEY "
	 "(EBS tag); default cluster,namespace",
	 OPT_GROUP_BY},
	{"period", 0, ARG_REQUIRED, "PERIOD", "month (default) or year: the period of the money columns", OPT_PERIOD},
	{"since", 0, ARG_REQUIRED, "DATE", "count realized savings of migrations completed at or after DATE (RFC 3339 "
					   "or YYYY-MM-DD)",
	 OPT_SINCE},
	{"mode", 0, ARG_REQUIRED, "MODE", "plan mode for the targets: match (default), baseline or observed", OPT_MODE},
	{"output", 'o', ARG_REQUIRED, "FORMAT", "table (default), wide, json, yaml, csv, markdown or html", OPT_OUTPUT},
	{"format", 0, ARG_REQUIRED, "FORMAT", "table (default), wide, json, yaml, csv, markdown or html (an alias of -o/--output)", OPT_FORMAT},
	{"output-file", 0, ARG_REQUIRED, "FILE", "write the result to FILE (atomically) instead of stdout",
	 OPT_OUTPUT_FILE},
	{"no-headers", 0, ARG_NONE, NULL, "table, wide: no title row", OPT_NO_HEADERS},
	{"max-price-age", 0, ARG_REQUIRED, "AGE",
	 "warn when the prices are older than AGE (default 90d; e.g. 30d, 0 = never)", OPT_MAX_PRICE_AGE},
	{"totals", 0, ARG_REQUIRED, "FILE",
	 "also write the totals as CSV to FILE (header and one row); CSV output itself holds the groups only",
	 OPT_TOTALS},
	{"series", 0, ARG_REQUIRED, "FILE",
	 "also write the realized savings per day since the first apply as CSV to FILE", OPT_SERIES},
	CMD_SCOPE_OPTIONS,
	{NULL, 0, 0, NULL, NULL, 0},
};

static const char *const report_usage[] = {
	"--from-aws-json FILE|DIR... [--from-kube-json [CLUSTER=]FILE|DIR...] | --from-saved DIR [--group-by KEYS] "
	"[--period month|year] "
	"[--since DATE] [-o table|wide|json|yaml|csv|markdown|html] [--output-file FILE] [--totals FILE] [--series FILE]",
	"[--region REGION...] [--context NAME...|--all-contexts] [--group-by KEYS] [-o FORMAT] [--output-file FILE]",
	"... [-n NS...|-A] [-l SELECTOR] [--context NAME...] [--region REGION...] [--account ID...] [--volume VOL-ID...]",
	NULL,
};

const struct cmd_help report_help = {
	.usage = report_usage,
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
		"Examples:\n"
		"  ebsmigrate report --from-aws-json vols.json --from-kube-json prod=prod.json\n"
		"  ebsmigrate report --from-aws-json vols.json --group-by tag:team --period year -o csv\n"
		"  ebsmigrate report --group-by cluster,namespace --since 2026-11-01 -o html --output-file report.html",
	.options = report_options,
	.shared = live_options,
	.exit_codes = "Exit 2 for unreadable or malformed exports or a bad --group-by/--since value.",
};

struct report_args {
	struct inventory_live_options live;
	int live_given;
	struct inventory_source *aws, *kube;
	size_t n_aws, n_kube, alloc_aws, alloc_kube;
	enum plan_mode mode;
	const char *group_by;
	enum report_period period;
	time_t since;
	enum report_format format;
	const char *output, *totals, *series;
	int no_headers;
	int64_t max_age;
	struct scope scope; /* -n, -A, -l, --account, --volume; with exports also --region, --context */
};



static int on_option(void *st, int id, const char *arg)
{
	struct report_args *a = st;
	if (id > OPT_SCOPE_BASE && id < OPT_SCOPE_END)
		return cmd_scope_option(&a->scope, id, arg);
	if (id > OPT_LIVE_BASE)
		return cmd_live_or_scope_option(&a->live, &a->scope, &a->live_given, id, arg);
	switch (id) {
	case OPT_FROM_AWS: return cmd_add_source(&a->aws, &a->n_aws, &a->alloc_aws, arg, 0);
	case OPT_FROM_KUBE: return cmd_add_source(&a->kube, &a->n_kube, &a->alloc_kube, arg, 1);
	case OPT_FROM_SAVED:
		return cmd_add_saved(&a->aws, &a->n_aws, &a->alloc_aws, &a->kube, &a->n_kube, &a->alloc_kube, arg);
	case OPT_MODE:
		if (plan_mode_parse(arg, &a->mode)) {
			log_error("--mode: '%s' is not one of match, baseline, observed", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_GROUP_BY: a->group_by = arg; return 0;
	case OPT_PERIOD:
		if (report_period_parse(arg, &a->period)) {
			log_error("--period: '%s' is not one of month, year", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_SINCE:
		if (em_parse_time(arg, &a->since)) {
			log_error("--since: '%s' is not a date (YYYY-MM-DD) or RFC 3339 time", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_FORMAT:
	case OPT_OUTPUT: {
		int f;
		if (cmd_output_format(id == OPT_FORMAT ? "--format" : "-o", arg, report_formats, &f))
			return EXIT_USAGE;
		a->format = (enum report_format)f;
		return 0;
	}
	case OPT_OUTPUT_FILE: a->output = arg; return 0;
	case OPT_NO_HEADERS: a->no_headers = 1; return 0;
	case OPT_TOTALS:
	case OPT_SERIES:
		/* the report itself may go to stdout: these always name a file */
		if (!*arg || strcmp(arg, "-") == 0) {
			log_error("--%s: '%s' is not a file name (the report itself goes to stdout)",
				  id == OPT_TOTALS ? "totals" : "series", arg);
			return EXIT_USAGE;
		}
		*(id == OPT_TOTALS ? &a->totals : &a->series) = arg;
		return 0;
	case OPT_MAX_PRICE_AGE:
		if (pricing_parse_age(arg, &a->max_age)) {
			log_error("--max-price-age: '%s' is not an age such as 90d, 36h or 0", arg);
			return EXIT_USAGE;
		}
		return 0;
	}
	return EXIT_USAGE;
}

static int load_fleet(struct report_args *a, struct fleet *fleet)
{
	struct buf err = BUF_INIT;
	int live = !a->n_aws && !a->n_kube, lrc;
	if (live) {
		struct inventory_live_result res;
		a->live.progress = cmd_progress;
		lrc = inventory_load_live(fleet, &a->live, &res, &err);
		cmd_progress_end();
		inventory_live_result_release(&res);
	} else {
		struct inventory_exports src = {a->aws, a->n_aws, a->kube, a->n_kube};
		lrc = inventory_load_exports(fleet, &src, &err);
	}
	int rc = 0;
	if (lrc) {
		log_error("%s", err.s);
		rc = live ? (lrc == EM_EINPUT ? EXIT_USAGE : EXIT_RUNTIME) : em_exit_code_for(lrc);
	}
	buf_release(&err);
	return rc;
}

int cmd_report(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct report_args a;
	memset(&a, 0, sizeof a);
	a.max_age = PRICING_DEFAULT_MAX_AGE_S;
	struct report_key *keys = NULL;
	size_t n_keys = 0;
	char **rest;
	int n_rest;
	int rc = cmd_parse(ctx, cmd_find("report"), argc, argv, on_option, &a, &rest, &n_rest);
	if (rc) {
		rc = rc < 0 ? EXIT_OK : rc;
		goto out;
	}
	if (n_rest) {
		log_error("unexpected argument '%s'; exports are given with --from-aws-json/--from-kube-json", rest[0]);
		rc = EXIT_USAGE;
		goto out;
	}
	int live = !a.n_aws && !a.n_kube;
	if (!live && a.live_given) {
		log_error("live options (--profile, --all-contexts, --no-metrics, ...) do not apply to "
			  "--from-aws-json/--from-kube-json inputs");
		rc = EXIT_USAGE;
		goto out;
	}
	if (live)
		cmd_scope_read_live(&a.scope);
	if (live && a.live.no_aws && a.live.no_kube) {
		log_error("--no-aws and --no-kube together leave nothing to read");
		rc = EXIT_USAGE;
		goto out;
	}
	struct buf err = BUF_INIT;
	if (report_parse_group_by(a.group_by ? a.group_by : "cluster,namespace", &keys, &n_keys, &err)) {
		log_error("%s", err.s);
		buf_release(&err);
		rc = EXIT_USAGE;
		goto out;
	}
	rc = cmd_prepare(ctx, NEEDS_PRICES | NEEDS_DB);
	if (rc)
		goto out;

	struct fleet fleet;
	fleet_init(&fleet);
	rc = load_fleet(&a, &fleet);
	if (rc) {
		fleet_release(&fleet);
		goto out;
	}
	struct scope_stats sst;
	scope_filter_fleet(&a.scope, &fleet, &sst);
	cmd_scope_notices(&a.scope, &sst, "volumes");
	scope_stats_release(&sst);
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
	int scoped = scope_active(&a.scope);
	for (size_t i = 0; i < n_states; i++)
		if (!scoped || fleet_find(&fleet, states[i].volume_id))
			rs[n_rs++] = (struct report_volume_state){states[i].volume_id, states[i].state,
								  states[i].eligible_at, states[i].completed_at, 1,
								  states[i].current_monthly};
	struct report_baseline *rb = n_bases ? xcalloc(n_bases, sizeof *rb) : NULL;
	for (size_t i = 0; i < n_bases; i++)
		rb[i] = (struct report_baseline){bases[i].volume_id, bases[i].monthly};
	struct plan_options po = {a.mode, em_now()};
	struct plan plan;
	planner_build(&plan, &fleet, &ctx->book, &po);
	/* observed completions (e.g. from CloudTrail) would be passed here; none are read yet */
	struct report_options ro = {keys, n_keys, a.period, a.since, em_now(), first_apply, rs, n_rs, rb, n_bases,
				    NULL, 0};
	struct report report;
	report_build(&report, &plan, &ro);
	struct buf msg = BUF_INIT;
	if (pricing_check_age(&ctx->book, em_now(), a.max_age, &msg)) {
		log_warning("%s", msg.s);
		report_add_warning(&report, msg.s);
	}
	buf_release(&msg);

	struct buf out = BUF_INIT, totals = BUF_INIT, series = BUF_INIT;
	if (a.format == REPORT_TABLE || a.format == REPORT_WIDE) {
		struct table_options to;
		cmd_table_options(&to, a.output, a.format == REPORT_WIDE, a.no_headers);
		report_write_table(&out, &report, ctx->color_stdout && !a.output, &to);
	} else {
		report_write(&out, &report, a.format, 0);
	}
	struct cmd_outputs outs = CMD_OUTPUTS_INIT;
	rc = a.format == REPORT_YAML ? cmd_json_to_yaml(&out) : 0;
	if (!rc)
		rc = cmd_outputs_add(&outs, a.output, &out);
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
	buf_release(&out);
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
	scope_release(&a.scope);
	report_keys_free(keys, n_keys);
	cmd_live_options_release(&a.live);
	cmd_free_sources(a.aws, a.n_aws);
	cmd_free_sources(a.kube, a.n_kube);
	return rc;
}
