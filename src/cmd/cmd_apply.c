/*
 * cmd_apply.c - `ebsmigrate apply`: options, confirmation, the per-database lock, and printing
 * what apply.c did. No domain logic here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/apply.h"
#include "ebsmigrate/aws_accounts.h"
#include "ebsmigrate/aws_client.h"
#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_config.h"
#include "ebsmigrate/kube_configmap.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/strlist.h"
#include "ebsmigrate/plan_file.h"
#include "ebsmigrate/stop.h"

enum { OPT_BATCH = 1, OPT_PLAN, OPT_MAX_IN_FLIGHT, OPT_ORDER, OPT_METHOD, OPT_VOLUME, OPT_NAMESPACE,
       OPT_CTX, OPT_SELECTOR, OPT_DRY_RUN, OPT_YES, OPT_WAIT, OPT_WAIT_TIMEOUT, OPT_APROFILE, OPT_POLL, OPT_AKUBECONFIG,
       OPT_RECONCILE_ONLY, OPT_MAX_PLAN_AGE, OPT_REQUIRE_CONFIGMAP };

static const struct cmd_option apply_options[] = {
	{"batch", 0, ARG_REQUIRED, "N",
	 "modifications to attempt in this run, accepted or not (default 10); 0 reconciles only, like --reconcile-only",
	 OPT_BATCH},
	{"reconcile-only", 0, ARG_NONE, NULL,
	 "bring the ledger up to date from EC2 and the PVCs; submit nothing (needs no --yes)", OPT_RECONCILE_ONLY},
	{"plan", 0, ARG_REQUIRED, "ID|FILE",
	 "recorded plan to apply (default: the latest), or a plan file from 'plan --out FILE', recorded first "
	 "unless already there", OPT_PLAN},
	{"max-plan-age", 0, ARG_REQUIRED, "DURATION",
	 "refuse the latest plan when recorded longer ago than this, unless --plan names it (default 7d; e.g. 36h, "
	 "30d; 0 or none: no limit)",
	 OPT_MAX_PLAN_AGE},
	{"max-in-flight", 0, ARG_REQUIRED, "N", "modifications in flight at once per account-region and cluster (default 10)",
	 OPT_MAX_IN_FLIGHT},
	{"order", 0, ARG_REQUIRED, "ORDER", "savings (default), oldest (plan order) or risk (small, simple first)", OPT_ORDER},
	{"method", 0, ARG_REQUIRED, "METHOD", "auto (default), ec2, vac or annotation", OPT_METHOD},
	{"volume", 0, ARG_REQUIRED, "VOL-ID", "only this volume (repeatable)", OPT_VOLUME},
	{"namespace", 'n', ARG_REQUIRED, "NS", "only PVCs in this namespace (repeatable)", OPT_NAMESPACE},
	{"context", 0, ARG_REQUIRED, "CLUSTER", "only volumes of this cluster (repeatable)", OPT_CTX},
	{"selector", 'l', ARG_REQUIRED, "SELECTOR",
	 "only PVCs matching this label selector (kubectl syntax, e.g. team=payments,tier!=cache), evaluated live",
	 OPT_SELECTOR},
	{"dry-run", 0, ARG_NONE, NULL, "show exactly the calls that would be made; change nothing (exit 0 when the preview is complete)", OPT_DRY_RUN},
	{"yes", 'y', ARG_NONE, NULL, "do not ask for confirmation", OPT_YES},
	{"wait", 0, ARG_NONE, NULL, "follow the submitted modifications until completed", OPT_WAIT},
	{"wait-timeout", 0, ARG_REQUIRED, "SECONDS", "give up waiting after this long (default 21600); still in flight then: exit 3", OPT_WAIT_TIMEOUT},
	{"poll", 0, ARG_REQUIRED, "SECONDS", "polling interval for --wait (default 15)", OPT_POLL},
	{"require-configmap", 0, ARG_REQUIRED, "NS/NAME=KEY",
	 "run only when that ConfigMap's KEY is \"true\" (read in the current context or the pod's cluster); "
	 "otherwise say so and exit 0 having done nothing (the switch of the apply CronJob, docs/deploy.md)",
	 OPT_REQUIRE_CONFIGMAP},
	CMD_AWS_PROFILE_OPTION(OPT_APROFILE),
	CMD_KUBECONFIG_OPTION(OPT_AKUBECONFIG),
	CMD_ROLE_OPTIONS,
	CMD_OPTIONS_END,
};

const struct cmd_help apply_help = {
	.usage = CMD_USAGE(
		"[--batch N] [--plan ID|FILE | --max-plan-age DURATION] [--dry-run] [--yes] [--wait] [--require-configmap NS/NAME=KEY] [filters]",
		"--reconcile-only [--plan ID|FILE] [--wait]"),
	.description =
		"Applies the latest recorded plan (or --plan ID|FILE) in batches. Each run first reconciles the "
		"ledger with AWS (modifications left in flight, or interrupted by a crash), then takes the next N "
		"eligible volumes, re-reads each one (a volume that was deleted, resized or modified elsewhere is "
		"skipped, never forced), enforces EBS's rules (one modification in flight; at most 4 per volume in "
		"any rolling 24 hours, counting the ledger and EC2's latest), records the intent in the ledger, "
		"and modifies it by its method. A volume that cannot go now is deferred with the time it may, not "
		"failed; so is one whose ModifyVolume EC2 refuses with VolumeModificationRateExceeded, on the "
		"Kubernetes routes too (the CSI driver's ModifyVolumeError condition or the sidecar's event on the "
		"PVC): deferred until the time in AWS's message, else one computed from the modification history "
		"known, never reported submitted. Returns once each submitted modification has started; --wait follows them to completed.\n"
		"\n"
		"--reconcile-only (or --batch 0) does the first step alone: rows left submitted, modifying or "
		"optimizing move on to what EC2 and the PVCs show (a submission EC2 never received goes back to "
		"planned), and nothing is submitted: no ModifyVolume, no PVC patch, no new volume. It needs no "
		"--yes; with --wait it follows every modification in flight to completed. `ebsmigrate status` "
		"makes the same observations on every run, forward transitions only.\n"
		"\n"
		"Methods (--method auto, the default, picks per volume): vac creates the VolumeAttributesClass the "
		"target needs (reused when one with the same parameters exists, never overwritten) and "
		"merge-patches the PVC's spec.volumeAttributesClassName once; annotation merge-patches the PVC "
		"with the volume-modifier-for-k8s annotations ebs.csi.aws.com/volumeType, iops and throughput; "
		"ec2 calls ModifyVolume with VolumeType, Iops and Throughput explicit. auto uses vac where the "
		"cluster serves VolumeAttributesClass, annotation where the sidecar runs beside the EBS CSI "
		"controller, and ec2 for in-tree PVs, volumes outside Kubernetes and other clusters.\n"
		"\n"
		"Without --yes, apply shows the batch and asks for confirmation on a terminal, and refuses without "
		"one. Only one apply may run per database at a time, whatever path names the file (the lock is on the "
		"file itself).\n"
		"\n"
		"A refusal about the principal rather than the volume (missing IAM permission or RBAC rule, refused "
		"credentials, a KMS key it cannot use, throttling) stops the run at the first one, names what to "
		"grant ('ebsmigrate iam-policy --for apply' / 'rbac --for apply') and leaves that volume and the "
		"untried ones planned.\n"
		"\n"
		"Every run names the plan it uses on stderr: `note: using plan 42 (recorded 2h 5m ago, sha256 "
		"3f2a1b9c0d4e)` (the first 12 hex digits of the recorded document's SHA-256), and says when the "
		"previous apply run used another plan. Without --plan, apply takes the latest recorded plan, which "
		"any `ebsmigrate plan` run replaces: one recorded longer ago than --max-plan-age (default 7d, "
		"measured at --now) is refused (exit 2) unless --plan names it; re-run plan, name the plan, or "
		"raise the limit. --reconcile-only is never refused (it sends nothing). A recorded plan goes through the "
		"plan file's checks again before use (exit 2 naming the field). A previous run that ended without "
		"recording an outcome (killed, crashed) is named in a note as interrupted, recorded so, and its "
		"volumes reconciled first.\n"
		"\n"
		"A plan of several accounts (plan --accounts/--organization): with --role-name (or "
		"--role-arn-template, --external-id, --role-session-name, --role-duration) each volume is re-read and "
		"modified with its own account's credentials, from STS AssumeRole of that account's role signed with "
		"the base credentials (the base credentials' own account with them), never another account's; the "
		"in-flight cap (--max-in-flight) is per account-region and the ledger records each volume's account "
		"(docs/accounts.md). Without a role option every volume is sent with the base credentials, as for one "
		"account.\n"
		"\n"
		"--plan FILE: an argument of digits only is a plan id (write ./123 for a file named 123). The "
		"file is checked first (a bad one is refused with exit 2 and nothing recorded; every target must be "
		"gp3 within the gp3 limits for the volume's size, and every volume id, region, availability zone, "
		"account, cluster, namespace and PVC name what its field holds in AWS or Kubernetes), then found in the "
		"database by its exact content or recorded as a new plan (also with --dry-run), and that plan id "
		"is applied.",
	.options = apply_options,
	.exit_codes = "Exit 3 when some volumes were deferred, failed or got no answer (see `ebsmigrate status`); "
		      "2 for bad options, a missing plan, a bad plan file or a latest plan older than --max-plan-age; 1 "
		      "when another apply holds the database or a "
		      "refusal about the principal stopped the run, or --require-configmap could not read its "
		      "switch; 0 with nothing done when that switch is off.",
};

struct apply_args {
	struct apply_options o;
	struct strlist vols, nss, ctxs; /* --volume, -n, --context: borrowed from argv */
	int yes;
	const char *profile;
	struct inventory_live_options roles; /* --role-name ...: parsed by cmd_live_option */
	struct plan_file plan_file; /* --plan FILE, checked while parsing; .json NULL when none */
	int64_t max_plan_age_s;     /* 0 = no limit */
	const char *max_plan_age;   /* as given, for messages */
	struct kube_configmap_ref require; /* --require-configmap; name NULL = none */
};

static int parse_count_from(const char *arg, const char *opt, int64_t min, size_t *out)
{
	int64_t v;
	if (em_parse_i64(arg, &v) || v < min || v > 100000) {
		log_error("%s: '%s' is not a number from %lld to 100000", opt, arg, (long long)min);
		return EXIT_USAGE;
	}
	*out = (size_t)v;
	return 0;
}

static int parse_count(const char *arg, const char *opt, size_t *out)
{
	return parse_count_from(arg, opt, 1, out);
}

/* --order and --method, in the order their messages list them */
static const struct cmd_format orders[] = {
	{"savings", ORDER_SAVINGS, 0}, {"oldest", ORDER_OLDEST, 0}, {"risk", ORDER_RISK, 0}, {NULL, 0, 0},
};
static const struct cmd_format methods[] = {
	{"auto", METHOD_AUTO, 0}, {"ec2", METHOD_EC2, 0}, {"vac", METHOD_VAC, 0}, {"annotation", METHOD_ANNOTATION, 0},
	{NULL, 0, 0},
};

static int on_option(void *st, int id, const char *arg)
{
	struct apply_args *a = st;
	size_t tmp;
	switch (id) {
	case OPT_BATCH:
		if (parse_count_from(arg, "--batch", 0, &a->o.batch))
			return EXIT_USAGE;
		a->o.reconcile_only = a->o.batch == 0;
		return 0;
	case OPT_RECONCILE_ONLY: a->o.reconcile_only = 1; return 0;
	case OPT_MAX_IN_FLIGHT: return parse_count(arg, "--max-in-flight", &a->o.max_in_flight);
	case OPT_MAX_PLAN_AGE:
		if (strcmp(arg, "none") == 0) {
			a->max_plan_age_s = 0;
		} else if (em_parse_duration(arg, &a->max_plan_age_s)) {
			log_error("--max-plan-age: '%s' is not a duration (e.g. 7d, 36h, 90m; 0 or none: no limit)", arg);
			return EXIT_USAGE;
		}
		a->max_plan_age = arg;
		return 0;
	case OPT_PLAN: {
		int64_t v;
		plan_file_release(&a->plan_file);
		a->o.plan_id = 0;
		if (arg[0] && strspn(arg, "0123456789") == strlen(arg)) {
			if (em_parse_i64(arg, &v) || v < 1) {
				log_error("--plan: '%s' is not a plan id (see the id printed by 'ebsmigrate plan')", arg);
				return EXIT_USAGE;
			}
			a->o.plan_id = v;
			return 0;
		}
		/* A plan file: checked now, so a bad one stops apply before the database is opened. */
		struct buf perr = BUF_INIT;
		if (plan_file_load(&a->plan_file, arg, &perr)) {
			log_error("--plan: %s", perr.s);
			buf_release(&perr);
			return EXIT_USAGE;
		}
		buf_release(&perr);
		return 0;
	}
	case OPT_ORDER:
	case OPT_METHOD: {
		int v, order = id == OPT_ORDER;
		if (cmd_choice(order ? "--order" : "--method", arg, order ? orders : methods, &v))
			return EXIT_USAGE;
		if (order)
			a->o.order = (enum apply_order)v;
		else
			a->o.method = (enum modify_method)v;
		return 0;
	}
	case OPT_VOLUME: strlist_append(&a->vols, arg); return 0;
	case OPT_NAMESPACE: strlist_append(&a->nss, arg); return 0;
	case OPT_CTX: strlist_append(&a->ctxs, arg); return 0;
	case OPT_SELECTOR:
		if (a->o.selector) {
			log_error("-l/--selector: give one selector (join requirements with commas)");
			return EXIT_USAGE;
		}
		a->o.selector = arg;
		return 0;
	case OPT_DRY_RUN: a->o.dry_run = 1; return 0;
	case OPT_YES: a->yes = 1; return 0;
	case OPT_WAIT: a->o.wait = 1; return 0;
	case OPT_WAIT_TIMEOUT:
		if (parse_count(arg, "--wait-timeout", &tmp))
			return EXIT_USAGE;
		a->o.wait_timeout_s = (int64_t)tmp;
		return 0;
	case OPT_POLL:
		if (parse_count(arg, "--poll", &tmp))
			return EXIT_USAGE;
		a->o.poll_s = (int64_t)tmp;
		return 0;
	case OPT_APROFILE: a->profile = arg; return 0;
	case OPT_LIVE_ROLE_NAME:
	case OPT_LIVE_ROLE_ARN_TEMPLATE:
	case OPT_LIVE_EXTERNAL_ID:
	case OPT_LIVE_ROLE_SESSION_NAME:
	case OPT_LIVE_ROLE_DURATION: return cmd_live_option(&a->roles, id, arg);
	case OPT_AKUBECONFIG: a->o.kubeconfig = arg; return 0;
	case OPT_REQUIRE_CONFIGMAP: {
		struct buf err = BUF_INIT;
		kube_configmap_ref_release(&a->require);
		int bad = kube_configmap_ref_parse(&a->require, arg, 1, &err) != 0;
		int rc = cmd_usage_if(bad, "--require-configmap: %s", err.s);
		buf_release(&err);
		return rc;
	}
	}
	return EXIT_USAGE;
}

/* apply_options.aws_for over a set of per-account clients. */
static struct aws_client *client_for_account(void *ctx, const char *account, struct buf *err)
{
	return aws_account_clients_get(ctx, account, err);
}

/* o routes every volume to its account's client (set, made on base; other accounts only with
 * role options). */
static void route_accounts(struct apply_options *o, struct aws_account_clients *set, struct aws_client *base,
			   const struct inventory_accounts *roles)
{
	/* without role options too: a volume of another account is then refused, not read (and
	 * judged deleted) with these credentials */
	aws_account_clients_init(set, base, roles ? roles->role_arn_template : NULL, roles ? roles->session_name : NULL,
				 roles ? roles->external_id : NULL, roles ? roles->duration_s : 0);
	o->aws_for = client_for_account;
	o->aws_for_ctx = set;
}

/* --require-configmap: 1 when the switch is on, 0 (said) when it is off or absent, or an error
 * (said) as -EXIT_*. Read before the database is touched, so an off switch changes nothing. */
static int switch_on(const struct apply_args *a)
{
	const struct kube_configmap_ref *r = &a->require;
	struct kube_selection sel = {a->o.kubeconfig, NULL, 0, NULL};
	struct kube_target *t = NULL;
	size_t n = 0;
	struct buf err = BUF_INIT;
	char *value = NULL;
	int exists = 0, on = 0;
	int rc = kube_targets_load(&t, &n, &sel, &err);
	if (!rc && n == 0)
		rc = em_err(&err, EM_ENOTFOUND, "no Kubernetes context to read the switch from");
	struct kube_client kc;
	if (!rc && !(rc = kube_client_init(&kc, &t[0], NULL, &err))) {
		rc = kube_configmap_get(&kc, r, &value, &exists, &err);
		kube_client_release(&kc);
	}
	if (rc) {
		log_error("--require-configmap %s/%s=%s: %s", r->ns, r->name, r->key, err.s);
		on = rc == EM_EINPUT ? -EXIT_USAGE : -EXIT_RUNTIME;
	} else if (!exists) {
		log_notice("apply switch off: ConfigMap %s/%s does not exist in context '%s'; nothing applied", r->ns,
			   r->name, t[0].context);
	} else if (!value || strcmp(value, "true") != 0) {
		cmd_print_visible(stderr, "note: apply switch off: ConfigMap %s/%s key %s is %s%s%s, not \"true\"; "
					  "nothing applied",
				  r->ns, r->name, r->key, value ? "'" : "", value ? value : "missing", value ? "'" : "");
	} else {
		log_notice("apply switch on: ConfigMap %s/%s key %s is \"true\"", r->ns, r->name, r->key);
		on = 1;
	}
	free(value);
	kube_targets_free(t, n);
	buf_release(&err);
	return on;
}

static void say_line(void *ctx, const char *line)
{
	cmd_print_visible(ctx, "%s", line);
}

/* Names the plan this run uses (id, age at --now, digest) and, when no --plan named it, refuses a
 * latest plan recorded longer ago than --max-plan-age: any `plan` run (one made only to render a
 * report included) replaces the latest, so apply says which one it takes and will not silently
 * take an old one. Sets a->o.plan_id to it, so the whole run uses that plan. EXIT_* code. */
static int use_plan(struct cmd_ctx *ctx, struct apply_args *a, int named)
{
	struct plan_summary ps;
	struct buf err = BUF_INIT, age = BUF_INIT;
	int rc = ledger_plan_summary(ctx->db, a->o.plan_id, &ps, &err);
	if (rc) {
		log_error("%s", err.s);
		buf_release(&err);
		return em_exit_code_for(rc);
	}
	int64_t age_s = (int64_t)(em_now() - ps.created_at);
	em_format_duration(age_s, &age);
	if (age_s >= 0) {
		log_notice("using plan %lld (recorded %s ago, sha256 %.12s)", (long long)ps.id, age.s, ps.sha256);
	} else {
		char ts[21];
		em_format_time(ps.created_at, ts);
		log_notice("using plan %lld (recorded %s, after --now; sha256 %.12s)", (long long)ps.id, ts, ps.sha256);
	}
	struct apply_run last;
	if (ledger_apply_run_latest(ctx->db, &last, &err) == 0 && !last.outcome) {
		char ts[21];
		em_format_time(last.started_at, ts);
		const char *now_is = ledger_apply_outcome_shown(ctx->db, NULL);
		if (strcmp(now_is, "running") == 0)
			log_notice("apply run %lld (plan %lld, started %s) is still running", (long long)last.id,
				   (long long)last.plan_id, ts);
		else
			log_notice("the previous apply run %lld (plan %lld, started %s) ended without recording an outcome: "
				   "interrupted (killed or crashed); %s",
				   (long long)last.id, (long long)last.plan_id, ts,
				   a->o.dry_run ? "a run that is not --dry-run records it so and reconciles its volumes first"
						: "recorded as interrupted; its volumes are reconciled first");
	}
	apply_run_release(&last);
	buf_reset(&err);
	if (!named && ps.last_applied_plan_id && ps.last_applied_plan_id != ps.id)
		log_notice("the previous apply run used plan %lld; this run uses the latest, plan %lld (pass --plan %lld "
			   "to go on with the earlier one)",
			   (long long)ps.last_applied_plan_id, (long long)ps.id, (long long)ps.last_applied_plan_id);
	if (!named && !a->o.reconcile_only && a->max_plan_age_s > 0 && age_s > a->max_plan_age_s) {
		log_error("the latest recorded plan, plan %lld, was recorded %s ago, more than --max-plan-age %s: run "
			  "'ebsmigrate plan' again to plan from the fleet as it is now, or name this plan to apply it "
			  "anyway (--plan %lld), or raise the limit (--max-plan-age 30d; 0 or none: no limit)",
			  (long long)ps.id, age.s, a->max_plan_age, (long long)ps.id);
		rc = EXIT_USAGE;
	}
	a->o.plan_id = ps.id;
	buf_release(&err);
	buf_release(&age);
	return rc;
}

int cmd_apply(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct apply_args a = {.max_plan_age_s = 7 * 86400, .max_plan_age = "7d"};
	int rc;
	if (cmd_start_options_only(ctx, "apply", argc, argv, on_option, &a, NULL, "", &rc))
		goto out;
	const struct inventory_accounts *roles = cmd_role_options_check(&a.roles, &rc);
	if (rc)
		goto out;
	int named = a.o.plan_id > 0 || a.plan_file.json; /* --plan ID|FILE: any age */
	a.o.volumes = a.vols.items;
	a.o.n_volumes = a.vols.n;
	a.o.namespaces = a.nss.items;
	a.o.n_namespaces = a.nss.n;
	a.o.clusters = a.ctxs.items;
	a.o.n_clusters = a.ctxs.n;
	if (a.o.reconcile_only) {
		a.yes = 1; /* nothing is submitted: nothing to confirm */
		log_notice("reconcile only: the ledger is brought up to date from EC2 and the PVCs; nothing is submitted");
	}
	if (!a.o.dry_run && !a.yes) {
		if (!isatty(0) || !isatty(2)) {
			log_error("apply changes volumes: pass --yes to confirm (or --dry-run to see the calls); "
				  "refusing without a terminal to ask on");
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (a.require.name) {
		int on = switch_on(&a);
		if (on <= 0) {
			rc = -on;
			goto out;
		}
	}
	/* SIGTERM/SIGINT: finish the volume in hand (its calls complete), stop before the next */
	stop_set_abort_io(0);
	/* One apply per database: the lock is taken on the file before SQLite opens it. */
	if ((rc = cmd_prepare(ctx, a.o.dry_run ? NEEDS_DB : NEEDS_DB | NEEDS_APPLY_LOCK)))
		goto out;
	if (a.plan_file.json) {
		struct buf perr = BUF_INIT;
		int recorded = 0;
		if (plan_file_record(ctx->db, &a.plan_file, &a.o.plan_id, &recorded, &perr)) {
			log_error("--plan: %s", perr.s);
			buf_release(&perr);
			rc = EXIT_RUNTIME;
			goto out;
		}
		buf_release(&perr);
		if (recorded)
			log_notice("plan file '%s' recorded as plan %lld in %s", a.plan_file.path,
				   (long long)a.o.plan_id, ctx->db_path);
		else
			log_notice("plan file '%s' is plan %lld", a.plan_file.path, (long long)a.o.plan_id);
	}
	if ((rc = use_plan(ctx, &a, named))) {
		ledger_apply_unlock(ctx->db);
		goto out;
	}
	struct buf err = BUF_INIT;
	if (!a.o.dry_run && !a.yes) {
		/* Show the batch first: a dry run of the same selection, then ask. */
		struct aws_client aws;
		struct aws_client_options co = {a.profile, 0, 0, 0};
		if (aws_client_init(&aws, &co, &err) == 0) {
			struct apply_options dry = a.o;
			dry.dry_run = 1;
			dry.wait = 0;
			dry.say = say_line;
			dry.say_ctx = stderr;
			struct aws_account_clients set;
			route_accounts(&dry, &set, &aws, roles);
			struct apply_result r;
			if (apply_run(ctx->db, &aws, &dry, &r, &err) == 0)
				fprintf(stderr, "%zu modification(s) would be sent. Proceed? [y/N] ", r.would_submit);
			apply_result_release(&r);
			aws_account_clients_release(&set);
			aws_client_release(&aws);
		}
		char answer[16] = "";
		if (!fgets(answer, sizeof answer, stdin) || (answer[0] != 'y' && answer[0] != 'Y')) {
			log_error("not confirmed; nothing was changed");
			ledger_apply_unlock(ctx->db);
			buf_release(&err);
			rc = EXIT_USAGE;
			goto out;
		}
		buf_reset(&err);
	}
	struct aws_client aws;
	struct aws_client_options co = {a.profile, 0, 0, 0};
	int irc = aws_client_init(&aws, &co, &err);
	if (irc) {
		log_error("%s", err.s);
		ledger_apply_unlock(ctx->db);
		buf_release(&err);
		rc = irc == EM_EINPUT ? EXIT_USAGE : EXIT_RUNTIME; /* EM_EINPUT: a bad retry setting */
		goto out;
	}
	a.o.say = say_line;
	a.o.say_ctx = a.o.dry_run ? stdout : stderr;
	a.o.progress = cmd_progress;
	struct aws_account_clients set;
	route_accounts(&a.o, &set, &aws, roles);
	struct apply_result res;
	int arc = apply_run(ctx->db, &aws, &a.o, &res, &err);
	if (arc) {
		log_error("%s", err.s);
		rc = em_exit_code_for(arc);
		if (arc == EM_ECONFLICT || arc == EM_EIO)
			rc = EXIT_RUNTIME;
		if (res.wait_timed_out)
			rc = EXIT_PARTIAL; /* the run did its part; EC2 has not finished yet */
	}
	if (res.history_warning)
		log_warning("%s", res.history_warning);
	if (!res.plan_id)
		goto finish;
	printf("plan %lld: %zu submitted, %zu would be submitted, %zu completed, %zu deferred, %zu skipped, %zu failed, "
	       "%zu without answer, %zu left for later runs\n",
	       (long long)res.plan_id, res.submitted, res.would_submit, res.completed, res.deferred, res.skipped,
	       res.failed, res.unknown, res.left);
	for (size_t i = 0; i < res.n; i++) {
		const struct apply_outcome *oc = &res.v[i];
		char ts[21] = "";
		if (oc->eligible_at)
			em_format_time(oc->eligible_at, ts);
		cmd_print_visible(stdout, "  %-22s %-12s %s%s%s", oc->volume_id, apply_outcome_name(oc->kind), oc->detail,
				  ts[0] ? "; eligible at " : "", ts);
	}
	/* A preview is complete when every volume got an answer: deferred and skipped volumes are
	 * what it shows, not failures of it. A real run that leaves any behind is partial. */
	if (!rc && (res.failed || res.unknown || (!a.o.dry_run && (res.deferred || res.skipped))))
		rc = EXIT_PARTIAL;
finish:
	apply_result_release(&res);
	aws_account_clients_release(&set);
	aws_client_release(&aws);
	ledger_apply_unlock(ctx->db);
	buf_release(&err);
out:
	cmd_live_options_release(&a.roles);
	kube_configmap_ref_release(&a.require);
	plan_file_release(&a.plan_file);
	strlist_release(&a.vols);
	strlist_release(&a.nss);
	strlist_release(&a.ctxs);
	return rc;
}
