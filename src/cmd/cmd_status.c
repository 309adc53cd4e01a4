/*
 * cmd_status.c - `ebsmigrate status`: the apply ledger, first brought up to date with what EC2 and
 * the PVCs show (apply_reconcile, observe-only: forward transitions, no lock, never a
 * modification), joined with live EC2 state and, for the VolumeAttributesClass route, the live
 * PVCs. --watch ends when nothing is in flight or at --timeout (exit 3). Completed volumes are verified (EC2 type, IOPS and
 * throughput equal the target; the PVC's current class equals the class apply set); a mismatch
 * exits 4. A check that could not be made (EC2 or a cluster unreachable) is reported as
 * unverified, never as a pass. The judging is status_verify.c's (apply_verify_row, apply_totals_add):
 * this file reads, calls and prints. The totals also count the volumes of the plan being applied
 * that have no ledger row yet (apply_plan_unsent: planned, not listed, not read), and the latest
 * apply run is named as ledger_apply_outcome_shown calls it (running or interrupted when it
 * recorded no outcome).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ebsmigrate/apply.h"
#include "ebsmigrate/apply_state.h"

#include "ebsmigrate/aws_accounts.h"
#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_ec2.h"
#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/kube_pvc.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/scope.h"
#include "ebsmigrate/status_verify.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/table.h"

enum { OPT_SPLAN = 1, OPT_WATCH, OPT_SPROFILE, OPT_NO_VERIFY, OPT_INTERVAL, OPT_SNO_KUBE, OPT_SCONTEXT,
       OPT_SKUBECONFIG, OPT_STIMEOUT };

enum status_format { STATUS_TABLE = 0, STATUS_WIDE, STATUS_JSON, STATUS_YAML };
static const struct cmd_format status_formats[] = {
	{"table", STATUS_TABLE, 0}, {"wide", STATUS_WIDE, 0}, {"json", STATUS_JSON, 0}, {"yaml", STATUS_YAML, 0}, {NULL, 0, 0},
};

static const struct cmd_option status_options[] = {
	CMD_FORMAT_OPTIONS("table (default), wide, json (schema ebsmigrate.status/v1) or yaml", OPT_RESULT_OUTPUT,
			   OPT_RESULT_FORMAT),
	{"output-file", 0, ARG_REQUIRED, "FILE",
	 "write the result to FILE (atomically; with --watch, each refresh replaces it) instead of stdout",
	 OPT_RESULT_FILE},
	CMD_NO_HEADERS_OPTION("table, wide: no title row", OPT_RESULT_NO_HEADERS),
	{"plan", 0, ARG_REQUIRED, "ID", "only this plan's volumes (default: the latest row of every volume)", OPT_SPLAN},
	{"watch", 'w', ARG_NONE, NULL, "refresh until nothing is in flight, then exit 0", OPT_WATCH},
	{"timeout", 0, ARG_REQUIRED, "SECONDS", "with --watch: give up after this long, exit 3 (default: no limit)",
	 OPT_STIMEOUT},
	{"interval", 0, ARG_REQUIRED, "SECONDS", "refresh interval for --watch (default 15)", OPT_INTERVAL},
	{"no-verify", 0, ARG_NONE, NULL, "ledger only: read neither EC2 nor Kubernetes (no verification)", OPT_NO_VERIFY},
	{"no-kube", 0, ARG_NONE, NULL, "do not read Kubernetes: VolumeAttributesClass volumes are verified on EC2 only",
	 OPT_SNO_KUBE},
	{"context", 0, ARG_REQUIRED, "NAME",
	 "only volumes of this cluster; the ledger's cluster name is the kubeconfig context read (repeatable)",
	 OPT_SCONTEXT},
	CMD_KUBECONFIG_OPTION(OPT_SKUBECONFIG),
	CMD_AWS_PROFILE_OPTION(OPT_SPROFILE),
	CMD_ROLE_OPTIONS,
	CMD_SCOPE_OPTIONS,
	CMD_SCOPE_REGION_OPTION,
	CMD_OPTIONS_END,
};

const struct cmd_help status_help = {
	.usage = CMD_USAGE(
		"[--plan ID] [--watch [--timeout SECONDS]] [-o table|wide|json|yaml] [--output-file FILE] [--no-verify | --no-kube] [--context NAME]... [--kubeconfig FILE]",
		CMD_SCOPE_USAGE("[--region REGION...] "),
		"... [--role-name NAME | --role-arn-template TEMPLATE] [--external-id ID] [--role-session-name NAME] [--role-duration DURATION]"),
	.description = "Shows every volume the apply ledger knows: its state, method, target, progress and time in "
		       "state, next eligible time and last error, joined with live EC2 state. First it brings the "
		       "ledger up to date with what it observes, as `apply --reconcile-only` does: a modification "
		       "EC2 (DescribeVolumesModifications, DescribeVolumes) or the PVC (its classes, "
		       "modifyVolumeStatus, the sidecar's events) shows further along moves its row forward "
		       "(modifying, optimizing, completed, or failed with the reason; deferred until AWS's time when "
		       "EC2 refused the CSI driver's ModifyVolume with VolumeModificationRateExceeded, not in flight), "
		       "so realized savings count it "
		       "without another apply. status never sends a modification and never moves a row back; it "
		       "does not take the apply lock, and a row a running apply changed meanwhile is left to "
		       "apply. --no-verify reads and changes the ledger only. Completed volumes "
		       "are verified: EC2's type, IOPS and throughput must equal the target. Volumes migrated "
		       "through a VolumeAttributesClass (method vac) are also read in their cluster: a completed "
		       "one's PVC must name the class as current (status.currentVolumeAttributesClassName), and "
		       "an in-flight one shows the PVC's modify status (Pending, InProgress, Infeasible); a "
		       "completed volume of the annotation route must still carry the target annotations. A "
		       "cluster that cannot be read is a warning naming the context; its PVCs are reported "
		       "unverified and EC2 is still checked. --no-kube checks EC2 only (AWS-only fleets, "
		       "method ec2, need nothing else). Totals: planned, in flight, completed, deferred, failed, "
		       "\"M of N migrated\" and the monthly savings realized so far; they count every volume of the "
		       "plan being applied (the latest apply run's, or --plan ID): its volumes to migrate without a "
		       "ledger row yet are planned (counted, not listed). The latest apply run is named when it "
		       "recorded no outcome: running while an apply holds the lock, else interrupted (killed or "
		       "crashed).\n"
		       "\n"
		       "--watch refreshes every --interval seconds and ends once nothing is in flight (exit 0, or "
		       "4 on a mismatch), or after --timeout seconds with modifications still in flight (exit 3), "
		       "like `kubectl rollout status`. On a terminal it redraws one view in place; otherwise each "
		       "refresh appends its view.\n"
		       "\n"
		       "Scoping (docs/scope.md): --context, -n, --region, --account and --volume keep the ledger rows "
		       "of those clusters, namespaces, regions, accounts and volumes (values of one flag OR, flags AND; "
		       "-A overrides -n); -l keeps the rows whose PVC matches the selector, asked of each cluster as "
		       "apply does (the ledger keeps no labels; not with --no-kube or --no-verify). Rows outside the "
		       "scope are neither reconciled nor shown; the totals are the scoped rows'. An empty scope is a "
		       "notice and exit 0.\n"
		       "\n"
		       "A ledger of several accounts (apply of a plan made with --accounts/--organization): with "
		       "--role-name (or --role-arn-template, --external-id, --role-session-name, --role-duration, as for "
		       "apply) each row is reconciled and each volume re-read with its own account's credentials, from "
		       "STS AssumeRole of that account's role (one per account and run; the base credentials' own "
		       "account with them). Without a role option the rows of other accounts are neither reconciled nor "
		       "read with credentials that cannot see them: a warning says so and they show unverified "
		       "(docs/accounts.md).",
	.options = status_options,
	.exit_codes = "Exit 3 when --watch --timeout ran out with modifications still in flight. Exit 4 when a "
		      "completed volume does not match its target in EC2, or its PVC does not name "
		      "the class apply set as current (or was deleted). Checks that could not be made (EC2 or a "
		      "cluster unreachable) are warnings and show as unverified; they do not change the exit code.",
	.output = CMD_OUTPUT_FORMATS(status_formats, STATUS_JSON, STATUS_YAML),
};

struct status_args {
	struct cmd_output_options result; /* format: enum status_format */
	int watch, no_verify, no_kube;
	int64_t plan_id, interval, timeout;
	const char *profile, *kubeconfig;
	struct scope scope; /* --context and the scoping options */
	struct inventory_live_options roles; /* --role-name ...: parsed by cmd_live_option */
};

static int on_option(void *st, int id, const char *arg)
{
	struct status_args *a = st;
	switch (id) {
	case OPT_LIVE_ROLE_NAME:
	case OPT_LIVE_ROLE_ARN_TEMPLATE:
	case OPT_LIVE_EXTERNAL_ID:
	case OPT_LIVE_ROLE_SESSION_NAME:
	case OPT_LIVE_ROLE_DURATION: return cmd_live_option(&a->roles, id, arg);
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
	case OPT_STIMEOUT:
		if (em_parse_i64(arg, &a->timeout) || a->timeout < 1) {
			log_error("--timeout: '%s' is not a positive number of seconds", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_WATCH: a->watch = 1; return 0;
	case OPT_NO_VERIFY: a->no_verify = 1; return 0;
	case OPT_SNO_KUBE: a->no_kube = 1; return 0;
	case OPT_SCONTEXT: scope_add(&a->scope.contexts, &a->scope.n_contexts, arg); return 0;
	case OPT_SKUBECONFIG: a->kubeconfig = arg; return 0;
	case OPT_SPROFILE: a->profile = arg; return 0;
	}
	return EXIT_USAGE;
}

struct live {
	struct fleet f;
	int read;               /* EC2 answered for the rows it was asked about */
	unsigned char *row_ok;  /* per row: read with its own account's credentials */
};

static int same_account(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Each row's volume re-read in its region with its own account's client from set (the base
 * credentials for their account and for labels that are not account ids, an assumed role for
 * the others). A row whose account cannot be reached (another account and no role option, an
 * AssumeRole refused) is left unread, so it shows unverified, never judged by credentials that
 * cannot see it: a warning once per account (warned). */
static int read_live(struct aws_account_clients *set, struct apply_row *rows, size_t n, struct live *lv,
		     struct strmap *warned, struct buf *err)
{
	fleet_init(&lv->f);
	lv->row_ok = xcalloc(n ? n : 1, 1);
	struct aws_client **cl = xcalloc(n ? n : 1, sizeof *cl);
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < i && !same_account(rows[k].account, rows[i].account))
			k++;
		if (k < i) {
			cl[i] = cl[k];
		} else {
			struct buf e = BUF_INIT;
			cl[i] = aws_account_clients_get(set, rows[i].account, &e);
			size_t seen;
			const char *acct = rows[i].account ? rows[i].account : "";
			if (!cl[i] && !strmap_get(warned, acct, &seen)) {
				strmap_put(warned, acct, 1);
				log_warning("the volumes of account %s are shown unverified: %s", acct, e.s);
			}
			buf_release(&e);
		}
		lv->row_ok[i] = cl[i] != NULL;
	}
	struct ec2_mod_list mods;
	memset(&mods, 0, sizeof mods);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!cl[i])
			continue;
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = cl[k] == cl[i] && strcmp(rows[k].region, rows[i].region) == 0;
		if (seen)
			continue;
		const char **ids = NULL;
		size_t m = 0;
		for (size_t k = i; k < n; k++)
			if (cl[k] == cl[i] && strcmp(rows[k].region, rows[i].region) == 0) {
				ids = xrealloc(ids, (m + 1) * sizeof *ids);
				ids[m++] = rows[k].volume_id;
			}
		rc = aws_ec2_describe_volumes_by_id(cl[i], rows[i].region, ids, m, &lv->f, err);
		if (!rc)
			rc = aws_ec2_describe_modifications_by_id(cl[i], rows[i].region, ids, m, &mods, err);
		free(ids);
	}
	free(cl);
	if (!rc)
		aws_ec2_attach_mods(&lv->f, &mods);
	ec2_mod_list_release(&mods);
	lv->read = !rc;
	return rc;
}

/* ---- the PVCs of the VolumeAttributesClass route ---- */

/* What status learns about one row's PVC: struct pvc_live (status_verify.h), judged there. */

/* The Kubernetes side of one status run (kept across --watch refreshes). */
struct kube_side {
	struct kube_conns conns;
	struct strmap warned; /* clusters already warned about */
};

static void pvc_lives_free(struct pvc_live *pv, size_t n)
{
	for (size_t i = 0; pv && i < n; i++)
		pvc_live_release(&pv[i]);
	free(pv);
}

static void warn_cluster(struct kube_side *ks, const char *cluster, const char *why)
{
	size_t seen;
	if (strmap_get(&ks->warned, cluster, &seen))
		return;
	strmap_put(&ks->warned, cluster, 1);
	log_warning("cluster '%s' (kubeconfig context '%s') cannot be read: %s; its PVCs are reported unverified "
		    "(EC2 is still checked)",
		    cluster, cluster, why);
}

/* Reads the PVC of every in-flight Kubernetes-route row and of every completed one whose PVC
 * apply patched (was_patched). A cluster that cannot be reached is asked once per pass: its later
 * rows share the first failure. */
static struct pvc_live *read_pvcs(struct kube_side *ks, const struct apply_row *rows, size_t n)
{
	struct pvc_live *pv = xcalloc(n ? n : 1, sizeof *pv);
	struct strmap down = STRMAP_INIT; /* cluster -> index of the row holding its error */
	for (size_t i = 0; i < n; i++) {
		const struct apply_row *r = &rows[i];
		int check = r->state == APPLY_COMPLETED && apply_row_patched(r); /* never patched: nothing to check */
		if (!apply_row_kube(r) || (!check && !apply_state_open(r->state)))
			continue;
		size_t first;
		if (strmap_get(&down, r->cluster, &first)) {
			pv[i].lookup = PVC_UNREACHABLE;
			pv[i].why = xstrdup(pv[first].why);
			continue;
		}
		struct kube_conn *c = kube_conn_for(&ks->conns, r->cluster);
		struct buf err = BUF_INIT;
		int rc = c->ok ? kube_pvc_read(c, r->namespace_, r->pvc, &pv[i].st, &err) : EM_ENET;
		if (rc == 0) {
			pv[i].lookup = PVC_READ;
		} else if (rc == EM_ENOTFOUND) {
			pv[i].lookup = PVC_NOT_FOUND;
		} else {
			pv[i].lookup = PVC_UNREACHABLE;
			pv[i].why = xstrdup(c->ok ? err.s : c->error);
			if (rc == EM_ENET)
				strmap_put(&down, r->cluster, i);
			warn_cluster(ks, r->cluster, pv[i].why);
		}
		buf_release(&err);
	}
	strmap_release(&down);
	return pv;
}

/* The rows in scope (--context, -n, --region, ...; rows without a cluster are dropped by
 * --context, rows without a PVC by -n and -l). -l is asked of the rows' clusters, as apply does:
 * a cluster that cannot be listed is an error (EM_*, message in err), not a guess. */
static int keep_in_scope(const struct scope *sc, struct kube_conns *kcs, struct apply_row *rows, size_t *n,
			 struct scope_stats *st, struct buf *err)
{
	memset(st, 0, sizeof *st);
	st->before = st->kept = *n;
	if (!scope_active(sc))
		return 0;
	struct strmap selected = STRMAP_INIT, listed = STRMAP_INIT, seen_ns = STRMAP_INIT;
	int rc = 0;
	size_t dummy;
	for (size_t i = 0; i < *n; i++)
		if (rows[i].namespace_ && rows[i].pvc)
			strmap_put(&seen_ns, rows[i].namespace_, 1);
	if (scope_by_namespace(sc))
		for (size_t i = 0; i < sc->n_namespaces; i++)
			if (!strmap_get(&seen_ns, sc->namespaces[i], &dummy))
				scope_add(&st->unknown_namespaces, &st->n_unknown_namespaces, sc->namespaces[i]);
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		struct apply_row *r = &rows[i];
		struct scope_subject x = {r->volume_id, r->region, r->account, r->cluster, r->namespace_, r->pvc, NULL, 0, 0};
		int keep = !rc && scope_matches(sc, &x);
		if (keep && sc->selector_text) {
			if (!strmap_get(&listed, r->cluster, &dummy)) {
				strmap_put(&listed, r->cluster, 1);
				rc = scope_live_selected_pvcs(kcs, sc->selector_text, r->cluster, &selected, err);
			}
			struct buf key = BUF_INIT;
			buf_addf(&key, "%s/%s/%s", r->cluster, r->namespace_, r->pvc);
			keep = !rc && strmap_get(&selected, key.s, &dummy);
			buf_release(&key);
		}
		if (keep)
			rows[k++] = *r;
		else
			apply_row_release(r);
	}
	*n = k;
	st->kept = k;
	strmap_release(&selected);
	strmap_release(&listed);
	strmap_release(&seen_ns);
	return rc;
}

struct tally {
	int mismatch;       /* completed volumes that do not match (EC2 or PVC) */
	int pvc_unverified; /* completed vac volumes whose PVC could not be read */
};

static void add_pvc_json(struct jsonw *w, const struct apply_row *r, const struct pvc_live *p, int pvc_ok,
			 const char *note)
{
	jsonw_key(w, "pvc");
	if (!apply_row_kube(r)) {
		jsonw_null(w);
		return;
	}
	jsonw_object(w);
	jsonw_key_str(w, "cluster", r->cluster);
	jsonw_key_str(w, "namespace", r->namespace_);
	jsonw_key_str(w, "name", r->pvc);
	jsonw_key_str(w, "target_class", r->target_class);
	jsonw_key_str(w, "lookup", pvc_lookup_name(p->lookup));
	jsonw_key_str(w, "current_class", p->st.current_class);
	jsonw_key_str(w, "modify_status", p->st.modify_status);
	jsonw_key(w, "verified");
	if (pvc_ok < 0)
		jsonw_null(w);
	else
		jsonw_bool(w, pvc_ok);
	jsonw_key_str(w, "note", note && *note ? note : NULL);
	jsonw_end(w);
}

/* Fixed widths without a terminal, as the table always had; on one, priorities (table.h). */
static const struct table_column status_columns[] = {
	{"VOLUME", TABLE_FIXED, 0, 22},
	{"STATE", TABLE_FIXED, 0, 11},
	{"METHOD", TABLE_FIXED, 3, 6},
	{"TARGET", TABLE_FIXED, 2, 16},
	{"PROGRESS", TABLE_RIGHT | TABLE_FIXED, 1, 8},
	{"IN STATE", TABLE_RIGHT | TABLE_FIXED, 4, 9},
	{"ELIGIBLE", TABLE_FIXED, 5, 20},
	{"NOTE", 0, 0, 12},
};

/* What the view says beyond the ledger rows: the plan being applied and its volumes without a
 * row yet (counted as planned, not listed), and the latest apply run. */
struct view_extra {
	int64_t plan_id;            /* the plan being applied; 0 = none */
	const struct apply_row *unsent; /* its volumes to migrate that no ledger row is about (scoped) */
	size_t n_unsent;
	const struct apply_run *run; /* the latest apply run, or NULL */
	const char *run_outcome;    /* ledger_apply_outcome_shown of it */
};

static void add_run_json(struct jsonw *w, const struct view_extra *x)
{
	jsonw_key(w, "last_apply_run");
	if (!x->run) {
		jsonw_null(w);
		return;
	}
	char started[21], finished[21] = "";
	em_format_time(x->run->started_at, started);
	if (x->run->finished_at)
		em_format_time(x->run->finished_at, finished);
	jsonw_object(w);
	jsonw_key_int(w, "id", (long long)x->run->id);
	jsonw_key_int(w, "plan_id", (long long)x->run->plan_id);
	jsonw_key_str(w, "started_at", started);
	jsonw_key_str(w, "finished_at", finished[0] ? finished : NULL);
	jsonw_key_str(w, "outcome", x->run_outcome);
	jsonw_end(w);
}

/* A latest apply run without a recorded outcome, said in the table's footer: "latest apply run 4
 * (plan 2): interrupted, started ... (ended without recording an outcome ...)" or "running". A run
 * that recorded its outcome is in the JSON only (last_apply_run). */
static void add_run_line(struct buf *out, const struct view_extra *x)
{
	if (!x->run || x->run->outcome)
		return;
	char started[21];
	em_format_time(x->run->started_at, started);
	buf_addf(out, "latest apply run %lld (plan %lld): %s, started %s", (long long)x->run->id,
		 (long long)x->run->plan_id, x->run_outcome, started);
	if (strcmp(x->run_outcome, "interrupted") == 0)
		buf_adds(out, " (ended without recording an outcome: killed or crashed; the next apply reconciles it)");
	buf_addc(out, '\n');
}

static int render(struct buf *out, struct apply_row *rows, size_t n, const struct live *lv, const struct pvc_live *pv,
		  int json, const struct table_options *to, const struct view_extra *x, struct tally *t)
{
	time_t now = em_now();
	struct apply_totals tot;
	memset(&tot, 0, sizeof tot);
	for (size_t i = 0; i < x->n_unsent; i++) { /* planned, not yet sent: nothing to verify */
		struct apply_verdict vd;
		struct pvc_live none;
		memset(&none, 0, sizeof none);
		apply_verify_row(&x->unsent[i], NULL, 0, &none, &vd);
		apply_totals_add(&tot, &x->unsent[i], &vd);
		apply_verdict_release(&vd);
	}
	size_t volumes = n + x->n_unsent;
	struct jsonw w;
	jsonw_init(&w, out, JSONW_COMPACT);
	if (json) {
		jsonw_object(&w);
		jsonw_key_str(&w, "schema", "ebsmigrate.status/v1");
		jsonw_key(&w, "volumes");
		jsonw_array(&w);
	}
	struct table tab;
	table_init(&tab, status_columns, sizeof status_columns / sizeof status_columns[0]);
	for (size_t i = 0; i < n; i++) {
		struct apply_row *r = &rows[i];
		const struct pvc_live *p = &pv[i];
		int ec2_read = lv->read && lv->row_ok && lv->row_ok[i];
		const struct volume *v = ec2_read ? fleet_find((struct fleet *)&lv->f, r->volume_id) : NULL;
		struct apply_verdict vd;
		apply_verify_row(r, v, ec2_read, p, &vd);
		apply_totals_add(&tot, r, &vd);
		char elig[21] = "";
		if (r->eligible_at)
			em_format_time(r->eligible_at, elig);
		int64_t in_state = r->updated_at ? (int64_t)(now - r->updated_at) : 0;
		if (json) {
			jsonw_lead(&w, "\n");
			jsonw_object(&w);
			jsonw_key_str(&w, "volume_id", r->volume_id); /* from a plan file: escaped like every string */
			jsonw_key_int(&w, "plan_id", (long long)r->plan_id);
			jsonw_key_str(&w, "state", apply_state_name(r->state));
			jsonw_key_str(&w, "method", modify_method_name(r->method));
			jsonw_key(&w, "target");
			jsonw_object(&w);
			jsonw_key_str(&w, "type", r->target_type);
			jsonw_key_int(&w, "iops", (long long)r->target_iops);
			jsonw_key_int(&w, "throughput_mibps", (long long)r->target_throughput);
			jsonw_end(&w);
			jsonw_key(&w, "progress");
			jsonw_int_or_null(&w, (long long)vd.progress, vd.progress >= 0);
			jsonw_key_int(&w, "seconds_in_state", (long long)in_state);
			jsonw_key_str(&w, "eligible_at", elig[0] ? elig : NULL);
			jsonw_key(&w, "verified");
			if (vd.verified < 0)
				jsonw_null(&w);
			else
				jsonw_bool(&w, vd.verified);
			add_pvc_json(&w, r, p, vd.pvc_ok, vd.pvc_note.s);
			jsonw_key(&w, "error");
			if (r->error_code) {
				jsonw_object(&w);
				jsonw_key_str(&w, "code", r->error_code);
				jsonw_key_str(&w, "message", r->error_message ? r->error_message : "");
				jsonw_end(&w);
			} else {
				jsonw_null(&w);
			}
			jsonw_end(&w);
		} else {
			char tgt[80], prog[32], ins[32];
			snprintf(tgt, sizeof tgt, "%s %lld/%lld", r->target_type, (long long)r->target_iops,
				 (long long)r->target_throughput);
			if (vd.progress >= 0)
				snprintf(prog, sizeof prog, "%lld%%", (long long)vd.progress);
			else
				snprintf(prog, sizeof prog, "-");
			snprintf(ins, sizeof ins, "%lldm", (long long)(in_state / 60));
			struct buf note = BUF_INIT;
			if (vd.ec2_mismatch)
				buf_adds(&note, vd.ec2_mismatch);
			if (vd.pvc_note.len)
				buf_addf(&note, "%s%s", note.len ? "; " : "", vd.pvc_note.s);
			if (!vd.bad && r->error_code && r->error_message)
				buf_addf(&note, "%s%s", note.len ? "; " : "", r->error_message);
			/* the id and the notes (EC2 and Kubernetes messages) may hold control characters: the
			 * table shows them visible */
			table_add(&tab, r->volume_id);
			table_add(&tab, apply_state_name(r->state));
			table_add(&tab, modify_method_name(r->method));
			table_add(&tab, tgt);
			table_add(&tab, prog);
			table_add(&tab, ins);
			table_add(&tab, elig[0] ? elig : "-");
			table_add(&tab, note.len ? note.s : "");
			buf_release(&note);
		}
		apply_verdict_release(&vd);
	}
	t->mismatch = tot.mismatch;
	t->pvc_unverified = tot.pvc_unverified;
	if (!json)
		table_write(out, &tab, to);
	table_release(&tab);
	if (json) {
		jsonw_layout(&w, "\n");
		jsonw_end(&w);
		jsonw_key(&w, "totals");
		jsonw_object(&w);
		jsonw_key_int(&w, "volumes", (long long)volumes);
		jsonw_key_int(&w, "planned", (long long)tot.planned);
		jsonw_key_int(&w, "not_sent", (long long)x->n_unsent);
		jsonw_key_int(&w, "in_flight", (long long)tot.in_flight);
		jsonw_key_int(&w, "completed", (long long)tot.completed);
		jsonw_key_int(&w, "deferred", (long long)tot.deferred);
		jsonw_key_int(&w, "failed", (long long)tot.failed);
		jsonw_key_int(&w, "mismatched", t->mismatch);
		jsonw_key_int(&w, "pvc_unverified", t->pvc_unverified);
		jsonw_key_money(&w, "realized_monthly_usd", tot.realized);
		jsonw_end(&w);
		jsonw_key(&w, "plan_id");
		jsonw_int_or_null(&w, (long long)x->plan_id, x->plan_id > 0);
		add_run_json(&w, x);
		jsonw_end(&w);
		jsonw_layout(&w, "\n");
	} else {
		/* as `kubectl rollout status` says it: how many of how many are done */
		buf_addf(out, "\n%zu volumes: %zu completed, %zu in flight, %zu deferred, %zu failed, %zu planned; %zu of %zu "
			      "migrated; realized ",
			 volumes, tot.completed, tot.in_flight, tot.deferred, tot.failed, tot.planned, tot.completed, volumes);
		money_add_usd_pretty(out, tot.realized);
		buf_adds(out, "/month\n");
		add_run_line(out, x);
		if (t->mismatch)
			buf_addf(out, "%d completed volume(s) do not match their target in EC2 or in their PVC\n", t->mismatch);
		if (t->pvc_unverified)
			buf_addf(out, "%d completed volume(s) with a PVC not verified: its cluster cannot be read\n",
				 t->pvc_unverified);
	}
	return (int)tot.in_flight;
}

/* Wall seconds that --timeout counts (never moved by --now or the clock being set). */
static int64_t monotonic_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

static struct aws_client *status_client_for(void *ctx, const char *account, struct buf *err)
{
	return aws_account_clients_get(ctx, account, err);
}

/* Moves the unfinished rows forward to what EC2 and the PVCs show (apply_reconcile in its
 * observe-only mode: no lock, forward transitions only, each saved only over the row as read, so
 * a concurrent apply's write wins). rows are updated in place for the view. A failure is a
 * warning: the view then shows the ledger as it was. */
static void reconcile(struct cmd_ctx *ctx, struct aws_account_clients *set, const struct status_args *a,
		      struct apply_row *rows, size_t n)
{
	struct apply_options o;
	memset(&o, 0, sizeof o);
	o.observe_only = 1;
	o.no_kube = a->no_kube;
	o.kubeconfig = a->kubeconfig;
	struct apply_result res;
	memset(&res, 0, sizeof res);
	struct buf err = BUF_INIT;
	/* each row with its account's client; without role options, rows of another account than
	 * the credentials' are left as recorded (docs/accounts.md) */
	o.aws_for = status_client_for;
	o.aws_for_ctx = set;
	if (apply_reconcile(ctx->db, set->base, rows, n, &o, &res, &err))
		log_warning("the ledger could not be brought up to date, showing what it recorded: %s", err.s);
	if (res.accounts_warning)
		log_warning("not reconciled: %s", res.accounts_warning);
	if (res.n)
		log_notice("%zu ledger row(s) brought up to date from what EC2 and Kubernetes show (%zu completed, %zu "
			   "failed, %zu deferred)",
			   res.n, res.completed, res.failed, res.deferred);
	apply_result_release(&res);
	buf_release(&err);
}

int cmd_status(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct status_args a = {0};
	int rc;
	ctx->scope = &a.scope;
	if (cmd_start_options_only(ctx, "status", argc, argv, on_option, &a, &a.result, "", &rc) ||
	    (rc = cmd_usage_if(a.timeout && !a.watch, "--timeout: only with --watch")))
		goto out;
	const struct inventory_accounts *roles = cmd_role_options_check(&a.roles, &rc);
	if (rc)
		goto out;
	if (a.scope.selector_text && (a.no_kube || a.no_verify)) {
		log_error("-l/--selector asks the clusters which PVCs match (the ledger keeps no labels): it does not "
			  "go with %s", a.no_kube ? "--no-kube" : "--no-verify");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = cmd_prepare(ctx, NEEDS_DB)))
		goto out;
	struct buf err = BUF_INIT;
	struct aws_client aws;
	struct aws_client_options co = {a.profile, 0, 0, 0};
	int have_aws = 0;
	if (!a.no_verify) {
		int arc = aws_client_init(&aws, &co, &err);
		have_aws = arc == 0;
		if (arc == EM_EINPUT) { /* a bad AWS_MAX_ATTEMPTS / AWS_RETRY_MODE: fix the setting */
			log_error("%s", err.s);
			buf_release(&err);
			rc = EXIT_USAGE;
			goto out;
		}
		if (!have_aws)
			log_warning("EC2 cannot be read, showing the ledger without verification: %s", err.s);
	}
	/* one client per account for the whole run (--watch too): one AssumeRole per account */
	struct aws_account_clients set;
	memset(&set, 0, sizeof set);
	if (have_aws)
		aws_account_clients_init(&set, &aws, roles ? roles->role_arn_template : NULL,
					 roles ? roles->session_name : NULL, roles ? roles->external_id : NULL,
					 roles ? roles->duration_s : 0);
	struct strmap unread_accounts = STRMAP_INIT; /* accounts already warned about */
	int read_kube = !a.no_verify && !a.no_kube;
	struct kube_side ks = {{NULL, 0, a.kubeconfig}, STRMAP_INIT};
	int noticed = 0, noticed_scope = 0, warned_plan = 0;
	int redraw = a.watch && !a.result.json && !a.result.file && isatty(1); /* one view in place, not appended ones */
	int64_t interval = a.interval ? a.interval : 15;
	int64_t started = monotonic_s();
	for (;;) {
		struct apply_row *rows = NULL;
		size_t n = 0;
		buf_reset(&err);
		if (ledger_apply_list(ctx->db, a.plan_id, &rows, &n, &err)) {
			log_error("%s", err.s);
			rc = EXIT_RUNTIME;
			break;
		}
		/* The plan being applied: its volumes to migrate that no row is about yet are counted
		 * as planned (after the rows, id 0), scoped with them. */
		struct view_extra x = {0, NULL, 0, NULL, NULL};
		size_t n_all = n, alloc = n;
		buf_reset(&err);
		if (apply_plan_in_progress(ctx->db, a.plan_id, &x.plan_id, &err) ||
		    (x.plan_id && apply_plan_unsent(ctx->db, x.plan_id, rows, n, &rows, &n_all, &alloc, &err))) {
			if (!warned_plan++)
				log_warning("the volumes of the plan being applied that no ledger row is about yet are not "
					    "counted: %s",
					    err.s);
		}
		struct scope_stats sst;
		buf_reset(&err);
		if (keep_in_scope(&a.scope, &ks.conns, rows, &n_all, &sst, &err)) {
			log_error("%s", err.s);
			scope_stats_release(&sst);
			apply_rows_free(rows, n_all);
			rc = EXIT_RUNTIME;
			break;
		}
		for (n = 0; n < n_all && rows[n].id; n++) /* the ledger's rows stay first */
			;
		x.unsent = rows + n;
		x.n_unsent = n_all - n;
		struct apply_run run;
		buf_reset(&err);
		int have_run = ledger_apply_run_latest(ctx->db, &run, &err) == 0;
		if (have_run) {
			x.run = &run;
			x.run_outcome = ledger_apply_outcome_shown(ctx->db, run.outcome);
		}
		if (!noticed_scope++)
			cmd_scope_notices(&a.scope, &sst, "ledger volumes");
		scope_stats_release(&sst);
		if (have_aws && n)
			reconcile(ctx, &set, &a, rows, n);
		struct live lv;
		memset(&lv, 0, sizeof lv);
		fleet_init(&lv.f);
		if (have_aws && n) {
			fleet_release(&lv.f);
			buf_reset(&err);
			if (read_live(&set, rows, n, &lv, &unread_accounts, &err)) {
				log_warning("live state unavailable, showing the ledger only: %s", err.s);
				lv.read = 0;
			}
		}
		struct pvc_live *pv = NULL;
		if (read_kube) {
			pv = read_pvcs(&ks, rows, n);
		} else {
			pv = xcalloc(n ? n : 1, sizeof *pv);
			size_t n_vac = 0;
			for (size_t i = 0; i < n; i++)
				n_vac += apply_row_kube(&rows[i]);
			if (a.no_kube && !a.no_verify && n_vac && !noticed++)
				log_notice("--no-kube: %zu VolumeAttributesClass volume(s) are verified on EC2 only; their PVCs "
					   "are not read",
					   n_vac);
		}
		struct buf out = BUF_INIT;
		struct tally t = {0, 0};
		if (redraw) {
			char ts[21];
			em_format_time(time(NULL), ts);
			buf_addf(&out, "\033[H\033[2J%s  every %llds until nothing is in flight%s (Ctrl-C to stop)\n\n", ts,
				 (long long)interval, a.timeout ? " or --timeout" : "");
		}
		struct table_options to;
		cmd_table_options(&to, a.result.file, a.result.format == STATUS_WIDE, a.result.no_headers);
		int in_flight = render(&out, rows, n, &lv, pv, a.result.json, &to, &x, &t);
		rc = a.result.format == STATUS_YAML ? cmd_json_to_yaml(&out) : 0;
		if (!rc)
			rc = cmd_write_output(a.result.file, &out);
		buf_release(&out);
		pvc_lives_free(pv, n);
		fleet_release(&lv.f);
		free(lv.row_ok);
		apply_rows_free(rows, n_all);
		if (have_run)
			apply_run_release(&run);
		if (!rc && t.mismatch)
			rc = EXIT_VERIFY;
		if (!a.watch || !in_flight || rc)
			break;
		int64_t waited = monotonic_s() - started;
		if (a.timeout && waited >= a.timeout) {
			log_error("status --watch: %d modification(s) still in flight after %lld s (--timeout)", in_flight,
				  (long long)a.timeout);
			rc = EXIT_PARTIAL;
			break;
		}
		int64_t nap = interval;
		if (a.timeout && a.timeout - waited < nap)
			nap = a.timeout - waited;
		sleep((unsigned)nap);
	}
	kube_conns_release(&ks.conns);
	strmap_release(&ks.warned);
	strmap_release(&unread_accounts);
	if (have_aws) {
		aws_account_clients_release(&set);
		aws_client_release(&aws);
	}
	buf_release(&err);
out:
	cmd_live_options_release(&a.roles);
	scope_release(&a.scope);
	return rc;
}
