/*
 * cmd_check.c - `ebsmigrate check`: the gp2 gate for CI and admission time. Reads manifests (-f
 * FILE|DIR|-, repeatable) and/or the live cluster (--live), runs the rules of check.c, prints
 * the findings and writes SARIF / JUnit reports; exit 4 when something would create gp2 volumes.
 * Glue only: reading is kube_manifest_read.c, judging check.c, writing check_output.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/check.h"
#include "ebsmigrate/check_output.h"
#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_config.h"
#include "ebsmigrate/kube_manifest.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/strlist.h"
#include "ebsmigrate/table.h"

enum {
	OPT_FILENAME = 1,
	OPT_LIVE,
	OPT_KUBECONFIG,
	OPT_CONTEXT,
	OPT_NAMESPACE,
	OPT_STORAGE_CLASSES,
	OPT_CLUSTER_CLASSES,
	OPT_STRICT,
	OPT_WARN_ONLY,
	OPT_SKIP,
	OPT_SARIF,
	OPT_JUNIT,
	OPT_SOURCE_PREFIX,
	OPT_LIST_RULES,
	OPT_KUBE_PAGE,
};

enum check_format { CF_TABLE = 0, CF_WIDE, CF_JSON, CF_YAML, CF_SARIF, CF_JUNIT };
static const struct cmd_format check_formats[] = {
	{"table", CF_TABLE, 0}, {"wide", CF_WIDE, 0},   {"json", CF_JSON, 0},   {"yaml", CF_YAML, 0},
	{"sarif", CF_SARIF, 0}, {"junit", CF_JUNIT, 0}, {NULL, 0, 0},
};

static const struct cmd_option check_options[] = {
	{"filename", 'f', ARG_REQUIRED, "FILE|DIR|-",
	 "manifests to check (repeatable): a file, a directory (its .yaml, .yml and .json files, recursively: "
	 "regular files only, symlinks that lead out of it skipped with a warning) or - for standard input "
	 "(helm template ... | ebsmigrate check -f -)",
	 OPT_FILENAME},
	{"live", 0, ARG_NONE, NULL,
	 "check the cluster's StorageClasses, VolumeAttributesClasses, StatefulSets and PersistentVolumeClaims",
	 OPT_LIVE},
	CMD_KUBECONFIG_OPTION(OPT_KUBECONFIG),
	{"context", 0, ARG_REQUIRED, "NAME",
	 "kubeconfig context for --live and --cluster-classes (default: the current one); without -f it means --live",
	 OPT_CONTEXT},
	{"namespace", 'n', ARG_REQUIRED, "NS",
	 "--live: read StatefulSets and claims of this namespace only (repeatable; classes are cluster-wide)",
	 OPT_NAMESPACE},
	{"kube-page-size", 0, ARG_REQUIRED, "N", "--live: Kubernetes list page size (limit=N; default 500)", OPT_KUBE_PAGE},
	{"storage-classes", 0, ARG_REQUIRED, "FILE|DIR|-",
	 "StorageClasses and VolumeAttributesClasses that claims may name, not checked themselves (repeatable; e.g. "
	 "kubectl get storageclass,volumeattributesclass -o yaml)",
	 OPT_STORAGE_CLASSES},
	{"cluster-classes", 0, ARG_NONE, NULL,
	 "resolve the classes claims name from the cluster's StorageClasses and VolumeAttributesClasses (read, not "
	 "checked)",
	 OPT_CLUSTER_CLASSES},
	{"strict", 0, ARG_NONE, NULL,
	 "a class that cannot be resolved (EM-CLS-001, EM-CLS-002) is an error, not a warning", OPT_STRICT},
	{"warn-only", 0, ARG_NONE, NULL, "report everything but exit 0 whatever is found (a soft rollout)",
	 OPT_WARN_ONLY},
	{"skip", 0, ARG_REQUIRED, "RULE[,RULE]", "do not run these rules (ids or names; repeatable)", OPT_SKIP},
	{"sarif", 0, ARG_REQUIRED, "FILE", "also write a SARIF 2.1.0 report to FILE (GitHub code scanning)", OPT_SARIF},
	{"junit", 0, ARG_REQUIRED, "FILE", "also write a JUnit XML report to FILE (GitLab, Jenkins)", OPT_JUNIT},
	{"source-prefix", 0, ARG_REQUIRED, "PREFIX",
	 "prefix of Helm template paths (# Source: comments on standard input) in reports, e.g. charts/ for helm "
	 "template charts/app",
	 OPT_SOURCE_PREFIX},
	{"list-rules", 0, ARG_NONE, NULL, "print the rules (id, name, level, summary; -o wide: with help) and exit",
	 OPT_LIST_RULES},
	CMD_FORMAT_OPTIONS("table (default), wide, json, yaml, sarif or junit", OPT_RESULT_OUTPUT, OPT_RESULT_FORMAT),
	CMD_OUTPUT_FILE_OPTION(OPT_RESULT_FILE),
	CMD_NO_HEADERS_OPTION("table, wide: no title row", OPT_RESULT_NO_HEADERS),
	CMD_OPTIONS_END,
};

const struct cmd_help check_help = {
	.usage = CMD_USAGE(
		"-f FILE|DIR|- [-f ...] [--storage-classes FILE|--cluster-classes] [--strict] [--warn-only] [--sarif FILE] [--junit FILE]",
		"--live [--context NAME] [-n NS...] [-o table|wide|json|yaml|sarif|junit] [--output-file FILE]",
		"--list-rules"),
	.description =
		"The gp2 gate: fails (exit 4) when manifests or a cluster would create gp2 EBS volumes. It reads "
		"StorageClasses (type gp2, or the in-tree kubernetes.io/aws-ebs provisioner without a type, whose "
		"default is gp2; the EBS CSI driver's default is gp3), VolumeAttributesClasses, and every claim: "
		"PersistentVolumeClaims, StatefulSet volumeClaimTemplates and the ephemeral volumes of pods and "
		"workloads. A claim's class is resolved in the input first, then in --storage-classes or the cluster "
		"(--cluster-classes); a claim without a class gets the default class. Each finding names the file, "
		"document, line, object and field; `check --list-rules` lists the rules (EM-GP2-001 ...).\n"
		"\n"
		"Input: -f FILE, DIR or - (standard input), repeatable: multi-document YAML (helm template output "
		"included: findings name the template of each `# Source:` comment), JSON objects and Lists (kubectl "
		"get -o json|yaml); --live reads the cluster (the current context, --context NAME, or the in-cluster "
		"service account). Without -f, --context alone means --live.\n"
		"\n"
		"Output: a table of findings on stdout (nothing when there are none; the summary goes to stderr), or "
		"-o json|yaml (ebsmigrate.check/v1), -o sarif, -o junit; --sarif FILE and --junit FILE write those "
		"reports besides, committed together with --output-file. A finding is waived by an annotation on its "
		"object, skip-check.ebsmigrate.io/RULE: \"reason\" (reported as skipped, not counted), or a rule "
		"turned off with --skip RULE. CI examples: docs/check.md and examples/ci/.",
	.options = check_options,
	.exit_codes = "Exit 4 when a finding is an error (gp2 would be created; with --strict also an unresolved "
		      "class), unless --warn-only; 0 when there are only warnings or nothing; 2 for bad input (YAML "
		      "that does not parse names the file and line, an unreadable file, a directory without "
		      "manifests) or usage; 1 when the cluster cannot be read (unreachable, forbidden) or a report "
		      "cannot be written. Nothing is written on exit 1 or 2.",
	.output = CMD_OUTPUT_FORMATS(check_formats, CF_JSON, CF_YAML),
};

struct check_args {
	struct strlist files;   /* -f, borrowed argv */
	struct strlist classes; /* --storage-classes */
	struct strlist namespaces;
	const char *kubeconfig, *context;
	int live, cluster_classes, list_rules;
	int page_size;
	struct check_options opt;
	int warn_only;
	const char *sarif, *junit, *source_prefix;
	struct cmd_output_options result;
};

static int add_skips(struct check_args *a, const char *arg)
{
	struct strlist parts = STRLIST_INIT_DUP;
	strlist_split(&parts, arg, ',');
	int rc = 0;
	for (size_t i = 0; i < parts.n && !rc; i++) {
		const struct check_rule *r = check_rule_find(parts.items[i]);
		if (!r) {
			cmd_print_visible(stderr, "error: --skip: '%s' is not a rule (see 'ebsmigrate check --list-rules')",
					  parts.items[i]);
			rc = EXIT_USAGE;
			break;
		}
		a->opt.skip = xrealloc((void *)a->opt.skip, (a->opt.n_skip + 1) * sizeof *a->opt.skip);
		a->opt.skip[a->opt.n_skip++] = r;
	}
	strlist_release(&parts);
	return rc;
}

static int on_option(void *st, int id, const char *arg)
{
	struct check_args *a = st;
	switch (id) {
	case OPT_FILENAME: strlist_append(&a->files, arg); return 0;
	case OPT_LIVE: a->live = 1; return 0;
	case OPT_KUBECONFIG: a->kubeconfig = arg; return 0;
	case OPT_CONTEXT: a->context = arg; return 0;
	case OPT_NAMESPACE: strlist_append(&a->namespaces, arg); return 0;
	case OPT_STORAGE_CLASSES: strlist_append(&a->classes, arg); return 0;
	case OPT_CLUSTER_CLASSES: a->cluster_classes = 1; return 0;
	case OPT_STRICT: a->opt.strict = 1; return 0;
	case OPT_WARN_ONLY: a->warn_only = 1; return 0;
	case OPT_SKIP: return add_skips(a, arg);
	case OPT_SARIF: a->sarif = arg; return 0;
	case OPT_JUNIT: a->junit = arg; return 0;
	case OPT_SOURCE_PREFIX: a->source_prefix = arg; return 0;
	case OPT_LIST_RULES: a->list_rules = 1; return 0;
	case OPT_KUBE_PAGE: {
		int64_t v;
		if (em_parse_i64(arg, &v) || v < 1 || v > 5000)
			return cmd_usage_if(1, "--kube-page-size: '%s' is not a number from 1 to 5000", arg);
		a->page_size = (int)v;
		return 0;
	}
	}
	return EXIT_USAGE;
}

static void args_release(struct check_args *a)
{
	strlist_release(&a->files);
	strlist_release(&a->classes);
	strlist_release(&a->namespaces);
	free((void *)a->opt.skip);
}

/* The combinations that make no sense, said before anything is read. */
static int check_usage_errors(struct check_args *a)
{
	int rc;
	if (a->list_rules) {
		if ((rc = cmd_usage_if(a->files.n || a->live || a->context || a->classes.n || a->cluster_classes,
				       "--list-rules prints the rules only: it takes no input")))
			return rc;
		return cmd_usage_if(a->result.format != CF_TABLE && a->result.format != CF_WIDE,
				    "--list-rules prints a table: -o table or wide");
	}
	if (!a->files.n && !a->live && a->context)
		a->live = 1; /* `check --context prod` reads that cluster */
	int stdin_uses = 0;
	for (size_t i = 0; i < a->files.n; i++)
		stdin_uses += strcmp(a->files.items[i], "-") == 0;
	for (size_t i = 0; i < a->classes.n; i++)
		stdin_uses += strcmp(a->classes.items[i], "-") == 0;
	if ((rc = cmd_usage_if(!a->files.n && !a->live,
			       "nothing to check: give -f FILE|DIR|- (repeatable) or --live (see 'ebsmigrate help check')")) ||
	    (rc = cmd_usage_if(stdin_uses > 1, "standard input (-) can be read only once")) ||
	    (rc = cmd_usage_if(a->namespaces.n && !a->live, "-n/--namespace limits what --live reads: give --live too")) ||
	    (rc = cmd_usage_if((a->context || a->kubeconfig) && !a->live && !a->cluster_classes,
			       "--context and --kubeconfig name the cluster of --live or --cluster-classes: give one of them")))
		return rc;
	return 0;
}

/* Reads each path into m; every unreadable or malformed input is said (one line each), after
 * what its directory walk skipped. */
static int read_inputs(struct kube_manifest *m, const struct strlist *paths, const char *what, size_t *files)
{
	int rc = 0;
	for (size_t i = 0; i < paths->n; i++) {
		struct buf err = BUF_INIT;
		size_t notes = m->n_notes;
		int r = kube_manifest_read_path(m, paths->items[i], files, &err);
		for (; notes < m->n_notes; notes++)
			log_warning("%s%s%s", what ? what : "", what ? ": " : "", m->notes[notes]);
		if (r < 0) {
			if (what)
				log_error("%s: %s", what, err.s);
			else
				log_error("%s", err.s);
			if (!rc || r != EM_EINPUT)
				rc = r;
		}
		buf_release(&err);
	}
	return rc;
}

/* The cluster of --live / --cluster-classes: its objects into checked (live), or its classes
 * into extra. */
static int read_cluster(struct check_args *a, struct kube_manifest *checked, struct kube_manifest *extra)
{
	struct kube_selection sel = {a->kubeconfig, a->context, 0, NULL};
	struct kube_target *targets = NULL;
	size_t n = 0;
	struct buf err = BUF_INIT;
	int rc = kube_targets_load(&targets, &n, &sel, &err);
	if (!rc && n == 0)
		rc = em_err(&err, EM_ENOTFOUND, "no Kubernetes context to read");
	struct kube_client c;
	int have_client = 0;
	if (!rc) {
		struct kube_client_options opt;
		memset(&opt, 0, sizeof opt);
		opt.list_limit = a->page_size;
		rc = kube_client_init(&c, &targets[0], &opt, &err);
		have_client = rc == 0;
	}
	if (!rc) {
		const char *ctxname = targets[0].context;
		log_info("reading context '%s' (%s)", ctxname, a->live ? "--live" : "--cluster-classes");
		rc = a->live ? kube_manifest_read_cluster(checked, &c, ctxname, a->namespaces.items, a->namespaces.n,
							 KM_READ_ALL, &err)
			     : kube_manifest_read_cluster(extra, &c, ctxname, NULL, 0, KM_READ_CLASSES, &err);
	}
	if (rc)
		log_error("%s", err.s);
	if (rc == EM_EAUTH && strstr(err.s, "forbidden"))
		log_notice("the gate lists storageclasses, volumeattributesclasses, statefulsets and "
			   "persistentvolumeclaims: 'ebsmigrate rbac' grants them (docs/check.md#permissions-for---live)");
	else if (!rc && c.list_restarts)
		log_info("context '%s': %u list%s restarted after 410 Expired", targets[0].context, c.list_restarts,
			 c.list_restarts == 1 ? "" : "s");
	if (have_client)
		kube_client_release(&c);
	kube_targets_free(targets, n);
	buf_release(&err);
	/* a kubeconfig that is not one, or that would send credentials in the clear, is bad input;
	 * a cluster that cannot be reached or refuses is a runtime failure */
	return rc == 0 ? EXIT_OK : rc == EM_EINPUT ? EXIT_USAGE : EXIT_RUNTIME;
}

static void say_summary(const struct kube_manifest *m, const struct check_result *r, size_t files)
{
	struct buf b = BUF_INIT;
	buf_addf(&b, "checked %zu object%s (%zu StorageClass%s, %zu VolumeAttributesClass%s, %zu claim%s)", r->objects,
		 r->objects == 1 ? "" : "s", r->storage_classes, r->storage_classes == 1 ? "" : "es", r->vacs,
		 r->vacs == 1 ? "" : "es", r->claims, r->claims == 1 ? "" : "s");
	size_t clusters = 0;
	for (size_t i = 0; i < m->n_sources; i++)
		clusters += m->sources[i].kind == KM_SOURCE_CLUSTER;
	if (files)
		buf_addf(&b, " in %zu document%s of %zu input%s", m->documents, m->documents == 1 ? "" : "s", files,
			 files == 1 ? "" : "s");
	if (clusters)
		buf_addf(&b, "%s %zu cluster%s", files ? " and" : " in", clusters, clusters == 1 ? "" : "s");
	buf_addf(&b, ": %zu error%s, %zu warning%s", r->errors, r->errors == 1 ? "" : "s", r->warnings,
		 r->warnings == 1 ? "" : "s");
	if (r->suppressed)
		buf_addf(&b, ", %zu skipped by annotation", r->suppressed);
	log_notice("%s", b.s);
	buf_release(&b);
}

int cmd_check(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct check_args a = {0};
	/* zeroed lists borrow their strings (argv) */
	int rc;
	if (cmd_start_options_only(ctx, "check", argc, argv, on_option, &a, &a.result,
				   "; name the manifests with -f FILE", &rc) ||
	    (rc = check_usage_errors(&a))) {
		args_release(&a);
		return rc;
	}
	struct table_options to;
	cmd_table_options(&to, a.result.file, a.result.format == CF_WIDE, a.result.no_headers);
	if (a.list_rules) {
		struct buf out = BUF_INIT;
		check_write_rules(&out, &to, a.result.format == CF_WIDE);
		rc = cmd_write_output(a.result.file, &out);
		buf_release(&out);
		args_release(&a);
		return rc;
	}

	struct kube_manifest checked, extra;
	kube_manifest_init(&checked);
	kube_manifest_init(&extra);
	size_t files = 0, class_files = 0;
	int r1 = read_inputs(&checked, &a.files, NULL, &files);
	int r2 = read_inputs(&extra, &a.classes, "--storage-classes", &class_files);
	if (r1 || r2) {
		rc = em_exit_code_for(r1 ? r1 : r2);
		goto done;
	}
	if ((a.live || a.cluster_classes) && (rc = read_cluster(&a, &checked, &extra)))
		goto done;

	struct check_result res;
	check_run(&res, &checked, &extra, &a.opt);
	for (size_t i = 0; i < res.n_notes; i++)
		log_warning("%s", res.notes[i]);
	struct check_report rep = {&checked, &res, &a.opt, a.source_prefix, a.warn_only, ctx->color_stdout};
	struct buf out = BUF_INIT, sarif = BUF_INIT, junit = BUF_INIT;
	switch (a.result.format) {
	case CF_TABLE:
	case CF_WIDE: check_write_table(&out, &rep, &to, a.result.format == CF_WIDE); break;
	case CF_JSON:
	case CF_YAML: check_write_json(&out, &rep); break;
	case CF_SARIF: check_write_sarif(&out, &rep); break;
	case CF_JUNIT: check_write_junit(&out, &rep); break;
	}
	rc = a.result.format == CF_YAML ? cmd_json_to_yaml(&out) : EXIT_OK;
	struct cmd_outputs outputs = CMD_OUTPUTS_INIT;
	if (!rc && a.sarif) {
		check_write_sarif(&sarif, &rep);
		rc = cmd_outputs_add(&outputs, a.sarif, &sarif);
	}
	if (!rc && a.junit) {
		check_write_junit(&junit, &rep);
		rc = cmd_outputs_add(&outputs, a.junit, &junit);
	}
	if (!rc && (out.len || a.result.file))
		rc = cmd_outputs_add(&outputs, a.result.file, &out);
	if (!rc)
		rc = cmd_outputs_commit(&outputs);
	cmd_outputs_release(&outputs);
	if (!rc) {
		say_summary(&checked, &res, files);
		if (res.errors && a.warn_only) {
			log_warning("%zu error%s would fail the check (--warn-only: exit 0)", res.errors,
				    res.errors == 1 ? "" : "s");
		} else if (res.errors) {
			log_error("check failed: %zu error%s (exit 4; 'ebsmigrate check --list-rules' explains each rule)",
				  res.errors, res.errors == 1 ? "" : "s");
			rc = EXIT_VERIFY;
		}
	}
	buf_release(&out);
	buf_release(&sarif);
	buf_release(&junit);
	check_result_release(&res);
done:
	kube_manifest_release(&checked);
	kube_manifest_release(&extra);
	args_release(&a);
	return rc;
}
