/*
 * cmd_status.c - `ebsmigrate status`: the apply ledger joined with live EC2 state. Completed
 * volumes are verified (type, IOPS and throughput equal the target); a mismatch exits 4.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/log.h"

enum { OPT_SFORMAT = 1, OPT_SPLAN, OPT_WATCH, OPT_SPROFILE, OPT_NO_VERIFY, OPT_INTERVAL };

static const struct cmd_option status_options[] = {
	{"format", 0, ARG_REQUIRED, "FORMAT", "table (default) or json (schema ebsmigrate.status/v1)", OPT_SFORMAT},
	{"plan", 0, ARG_REQUIRED, "ID", "only this plan's volumes (default: the latest row of every volume)", OPT_SPLAN},
	{"watch", 'w', ARG_NONE, NULL, "refresh until nothing is in flight", OPT_WATCH},
	{"interval", 0, ARG_REQUIRED, "SECONDS", "refresh interval for --watch (default 15)", OPT_INTERVAL},
	{"no-verify", 0, ARG_NONE, NULL, "ledger only: do not read EC2 (no verification)", OPT_NO_VERIFY},
	{"profile", 0, ARG_REQUIRED, "NAME", "AWS profile", OPT_SPROFILE},
	{NULL, 0, 0, NULL, NULL, 0},
};

static const char *const status_usage[] = {"[--plan ID] [--watch] [--format json] [--no-verify]", NULL};

const struct cmd_help status_help = {
	.usage = status_usage,
	.description = "Shows every volume the apply ledger knows: its state, method, target, progress and time in "
		       "state, next eligible time and last error, joined with live EC2 state. Completed volumes "
		       "are verified: EC2's type, IOPS and throughput must equal the target. Totals: planned, in "
		       "flight, completed, deferred, failed and the monthly savings realized so far.",
	.options = status_options,
	.exit_codes = "Exit 4 when a completed volume does not match its target in EC2.",
};

struct status_args {
	int json, watch, no_verify;
	int64_t plan_id, interval;
	const char *profile;
};

static int on_option(void *st, int id, const char *arg)
{
	struct status_args *a = st;
	switch (id) {
	case OPT_SFORMAT:
		if (strcmp(arg, "json") == 0)
			a->json = 1;
		else if (strcmp(arg, "table") != 0) {
			log_error("--format: '%s' is not one of table, json", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_SPLAN:
		if (em_parse_i64(arg, &a->plan_id) || a->plan_id < 1) {
			log_error("--plan: '%s' is not a plan id", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_INTERVAL:
		if (em_parse_i64(arg, &a->interval) || a->interval < 1) {
			log_error("--interval: '%s' is not a positive number of seconds", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_WATCH: a->watch = 1; return 0;
	case OPT_NO_VERIFY: a->no_verify = 1; return 0;
	case OPT_SPROFILE: a->profile = arg; return 0;
	}
	return EXIT_USAGE;
}

struct live {
	struct fleet f;
	int read;
};

static int read_live(struct aws_client *aws, struct apply_row *rows, size_t n, struct live *lv, struct buf *err)
{
	fleet_init(&lv->f);
	struct ec2_mod_list mods;
	memset(&mods, 0, sizeof mods);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		int seen = 0;
		for (size_t k = 0; k < i; k++)
			seen |= strcmp(rows[k].region, rows[i].region) == 0;
		if (seen)
			continue;
		const char **ids = NULL;
		size_t m = 0;
		for (size_t k = i; k < n; k++)
			if (strcmp(rows[k].region, rows[i].region) == 0) {
				ids = xrealloc(ids, (m + 1) * sizeof *ids);
				ids[m++] = rows[k].volume_id;
			}
		rc = aws_ec2_describe_volumes_by_id(aws, rows[i].region, ids, m, &lv->f, err);
		if (!rc)
			rc = aws_ec2_describe_modifications_by_id(aws, rows[i].region, ids, m, &mods, err);
		free(ids);
	}
	if (!rc)
		aws_ec2_attach_mods(&lv->f, &mods);
	ec2_mod_list_release(&mods);
	lv->read = !rc;
	return rc;
}

static int render(struct buf *out, struct apply_row *rows, size_t n, const struct live *lv, int json, int *mismatch)
{
	time_t now = em_now();
	size_t planned = 0, in_flight = 0, completed = 0, deferred = 0, failed = 0;
	micro_t realized = 0;
	if (json)
		buf_adds(out, "{\"schema\":\"ebsmigrate.status/v1\",\"volumes\":[");
	else
		buf_addf(out, "%-22s  %-11s  %-6s  %-16s  %8s  %9s  %-20s  %s\n", "VOLUME", "STATE", "METHOD", "TARGET",
			 "PROGRESS", "IN STATE", "ELIGIBLE", "NOTE");
	for (size_t i = 0; i < n; i++) {
		struct apply_row *r = &rows[i];
		const struct volume *v = lv->read ? fleet_find((struct fleet *)&lv->f, r->volume_id) : NULL;
		const struct volume_mod *m = v ? volume_latest_mod(v) : NULL;
		int64_t progress = -1;
		if (m && (strcmp(r->state, "modifying") == 0 || strcmp(r->state, "optimizing") == 0 ||
			  strcmp(r->state, "submitted") == 0))
			progress = m->progress;
		else if (strcmp(r->state, "completed") == 0)
			progress = 100;
		const char *verified = NULL;
		if (strcmp(r->state, "completed") == 0 && lv->read) {
			if (!v)
				verified = "volume not found in EC2";
			else if (v->type != ebs_type_parse(r->target_type) || v->iops != r->target_iops ||
				 v->throughput != r->target_throughput)
				verified = "EC2 configuration differs from the target";
			if (verified)
				(*mismatch)++;
		}
		if (!strcmp(r->state, "planned"))
			planned++;
		else if (!strcmp(r->state, "submitted") || !strcmp(r->state, "modifying") || !strcmp(r->state, "optimizing"))
			in_flight++;
		else if (!strcmp(r->state, "completed")) {
			completed++;
			if (!verified)
				realized += r->current_monthly - r->target_monthly;
		} else if (!strcmp(r->state, "deferred"))
			deferred++;
		else if (!strcmp(r->state, "failed"))
			failed++;
		char elig[21] = "";
		if (r->eligible_at)
			em_format_time(r->eligible_at, elig);
		int64_t in_state = r->updated_at ? (int64_t)(now - r->updated_at) : 0;
		if (json) {
			buf_adds(out, i ? ",\n{" : "\n{");
			buf_addf(out, "\"volume_id\":\"%s\",\"plan_id\":%lld,\"state\":\"%s\",\"method\":\"%s\",", r->volume_id,
				 (long long)r->plan_id, r->state, r->method);
			buf_addf(out, "\"target\":{\"type\":\"%s\",\"iops\":%lld,\"throughput_mibps\":%lld},", r->target_type,
				 (long long)r->target_iops, (long long)r->target_throughput);
			if (progress >= 0)
				buf_addf(out, "\"progress\":%lld,", (long long)progress);
			else
				buf_adds(out, "\"progress\":null,");
			buf_addf(out, "\"seconds_in_state\":%lld,\"eligible_at\":", (long long)in_state);
			if (elig[0])
				buf_addf(out, "\"%s\"", elig);
			else
				buf_adds(out, "null");
			buf_adds(out, ",\"verified\":");
			if (strcmp(r->state, "completed") != 0 || !lv->read)
				buf_adds(out, "null");
			else
				buf_adds(out, verified ? "false" : "true");
			buf_adds(out, ",\"error\":");
			if (r->error_code) {
				buf_adds(out, "{\"code\":\"");
				buf_add_json_escaped(out, r->error_code);
				buf_adds(out, "\",\"message\":\"");
				buf_add_json_escaped(out, r->error_message ? r->error_message : "");
				buf_adds(out, "\"}");
			} else {
				buf_adds(out, "null");
			}
			buf_addc(out, '}');
		} else {
			char tgt[80], prog[32], ins[32];
			snprintf(tgt, sizeof tgt, "%s %lld/%lld", r->target_type, (long long)r->target_iops,
				 (long long)r->target_throughput);
			if (progress >= 0)
				snprintf(prog, sizeof prog, "%lld%%", (long long)progress);
			else
				snprintf(prog, sizeof prog, "-");
			snprintf(ins, sizeof ins, "%lldm", (long long)(in_state / 60));
			buf_addf(out, "%-22s  %-11s  %-6s  %-16s  %8s  %9s  %-20s  %s\n", r->volume_id, r->state, r->method, tgt,
				 prog, ins, elig[0] ? elig : "-",
				 verified ? verified : r->error_code ? r->error_message : "");
		}
	}
	if (json) {
		buf_addf(out, "\n],\"totals\":{\"planned\":%zu,\"in_flight\":%zu,\"completed\":%zu,\"deferred\":%zu,\"failed\":%zu,"
			      "\"mismatched\":%d,\"realized_monthly_usd\":",
			 planned, in_flight, completed, deferred, failed, *mismatch);
		money_add_json(out, realized);
		buf_adds(out, "}}\n");
	} else {
		buf_addf(out, "\n%zu volumes: %zu completed, %zu in flight, %zu deferred, %zu failed, %zu planned; realized ", n,
			 completed, in_flight, deferred, failed, planned);
		money_add_usd_pretty(out, realized);
		buf_adds(out, "/month\n");
		if (*mismatch)
			buf_addf(out, "%d completed volume(s) do not match their target in EC2\n", *mismatch);
	}
	return (int)in_flight;
}

int cmd_status(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct status_args a;
	memset(&a, 0, sizeof a);
	char **rest;
	int n_rest;
	int rc = cmd_parse(ctx, cmd_find("status"), argc, argv, on_option, &a, &rest, &n_rest);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (n_rest) {
		log_error("unexpected argument '%s'", rest[0]);
		return EXIT_USAGE;
	}
	if ((rc = cmd_prepare(ctx, NEEDS_DB)))
		return rc;
	struct buf err = BUF_INIT;
	struct aws_client aws;
	struct aws_client_options co = {a.profile, 0, 0, 0};
	int have_aws = !a.no_verify && aws_client_init(&aws, &co, &err) == 0;
	for (;;) {
		struct apply_row *rows = NULL;
		size_t n = 0;
		if (ledger_apply_list(ctx->db, a.plan_id, &rows, &n, &err)) {
			log_error("%s", err.s);
			rc = EXIT_RUNTIME;
			break;
		}
		struct live lv;
		memset(&lv, 0, sizeof lv);
		fleet_init(&lv.f);
		if (have_aws && n) {
			fleet_release(&lv.f);
			buf_reset(&err);
			if (read_live(&aws, rows, n, &lv, &err)) {
				log_warning("live state unavailable, showing the ledger only: %s", err.s);
				lv.read = 0;
			}
		}
		struct buf out = BUF_INIT;
		int mismatch = 0;
		int in_flight = render(&out, rows, n, &lv, a.json, &mismatch);
		rc = cmd_write_output(NULL, &out);
		buf_release(&out);
		fleet_release(&lv.f);
		apply_rows_free(rows, n);
		if (!rc && mismatch)
			rc = EXIT_VERIFY;
		if (!a.watch || !in_flight || rc)
			break;
		sleep((unsigned)(a.interval ? a.interval : 15));
	}
	if (have_aws)
		aws_client_release(&aws);
	buf_release(&err);
	return rc;
}
