/*
 * cmd_policy.c - `ebsmigrate iam-policy` and `ebsmigrate rbac`: the least privileges each
 * capability needs, as an IAM policy document (JSON) and a Kubernetes ClusterRole (YAML) with
 * the ServiceAccount (and its Namespace) and the ClusterRoleBinding that grant it, so
 * `ebsmigrate rbac | kubectl apply -f -` leaves a working account.
 * The lists are data here and are checked by scenario tests: the simulator grants exactly
 * these permissions and the commands must work (and anything else gets 403).
 */
#include <stdio.h>
#include <string.h>

#include "ebsmigrate/aws_accounts.h"
#include "ebsmigrate/cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/log.h"

enum { OPT_FOR = 1, OPT_SERVICE_ACCOUNT, OPT_ROLE_NAME, OPT_EXTERNAL_ID, OPT_TRUSTED, OPT_MEMBER_FOR };
enum capability { CAP_PLAN = 1, CAP_APPLY = 2, CAP_BENCH = 4, CAP_ORG = 8 };

static const struct cmd_option policy_options[] = {
	{"for", 0, ARG_REQUIRED, "WHAT",
	 "plan (default; also inventory and report), apply, bench, all, or org (several accounts: the management "
	 "account's policy, the member role's policy and its trust policy; docs/accounts.md)",
	 OPT_FOR},
	{"role-name", 0, ARG_REQUIRED, "NAME", "--for org: the member role's name (default ebsmigrate)", OPT_ROLE_NAME},
	{"external-id", 0, ARG_REQUIRED, "ID",
	 "--for org: require this sts:ExternalId in the member role's trust policy (as --external-id sends it)",
	 OPT_EXTERNAL_ID},
	{"trusted-principal", 0, ARG_REQUIRED, "ARN|ACCOUNT",
	 "--for org: who may assume the member role: the IAM role or user ARN ebsmigrate runs as, or an account id "
	 "(its root; default a MANAGEMENT_ACCOUNT_ID placeholder)",
	 OPT_TRUSTED},
	{"member-for", 0, ARG_REQUIRED, "WHAT",
	 "--for org: what the member role may do: plan (default), apply or all", OPT_MEMBER_FOR},
	CMD_OPTIONS_END,
};
static const struct cmd_option rbac_options[] = {
	{"for", 0, ARG_REQUIRED, "WHAT", "plan (default; also inventory and report), apply, bench, or all", OPT_FOR},
	{"service-account", 0, ARG_REQUIRED, "NS/NAME",
	 "the ServiceAccount to create and bind (default ebsmigrate/ebsmigrate)", OPT_SERVICE_ACCOUNT},
	CMD_OPTIONS_END,
};

struct policy_args {
	unsigned caps;
	char sa_namespace[64], sa_name[254];
	/* --for org */
	const char *role_name, *external_id, *trusted;
	unsigned member_caps;
	int org_options; /* an option that only goes with --for org */
};

struct iam_stmt {
	unsigned caps;
	const char *sid;
	const char *actions[6];
};

/* Read-only EC2/CloudWatch/CloudTrail/Pricing for plan; ModifyVolume and CreateTags for apply.
 * cloudtrail:LookupEvents counts modifications made by others (the 4-per-24-h budget). */
static const struct iam_stmt iam[] = {
	{CAP_PLAN | CAP_APPLY | CAP_BENCH, "EbsmigrateReadVolumes",
	 {"ec2:DescribeVolumes", "ec2:DescribeVolumesModifications", "ec2:DescribeInstances",
	  "ec2:DescribeInstanceTypes", NULL}},
	{CAP_PLAN | CAP_APPLY, "EbsmigrateReadMetrics", {"cloudwatch:GetMetricData", NULL}},
	{CAP_PLAN | CAP_APPLY, "EbsmigrateReadModificationHistory", {"cloudtrail:LookupEvents", NULL}},
	{CAP_PLAN, "EbsmigrateReadPrices", {"pricing:GetProducts", NULL}},
	{CAP_APPLY, "EbsmigrateModifyVolumes", {"ec2:ModifyVolume", "ec2:CreateTags", NULL}},
};

struct rbac_rule {
	unsigned caps;
	const char *group;
	const char *resources[7];
	const char *verbs[5];
};

static const struct rbac_rule rbac[] = {
	{CAP_PLAN | CAP_APPLY | CAP_BENCH, "",
	 {"persistentvolumes", "persistentvolumeclaims", "pods", "nodes", NULL},
	 {"get", "list", NULL}},
	{CAP_PLAN | CAP_APPLY, "", {"nodes/proxy", NULL}, {"get", NULL}},
	{CAP_PLAN | CAP_APPLY | CAP_BENCH, "storage.k8s.io", {"storageclasses", "volumeattributesclasses", NULL},
	 {"get", "list", NULL}},
	{CAP_PLAN | CAP_APPLY, "apps", {"statefulsets", NULL}, {"get", "list", NULL}},
	{CAP_APPLY, "", {"persistentvolumeclaims", NULL}, {"patch", NULL}},
	{CAP_APPLY, "storage.k8s.io", {"volumeattributesclasses", NULL}, {"create", NULL}},
	{CAP_APPLY, "apps", {"deployments", NULL}, {"list", NULL}},
	{CAP_APPLY | CAP_BENCH, "", {"events", NULL}, {"list", NULL}},
	{CAP_BENCH, "", {"persistentvolumeclaims", "pods", NULL}, {"create", "delete", NULL}},
	{CAP_BENCH, "", {"pods/log", NULL}, {"get", NULL}},
	{CAP_BENCH, "batch", {"jobs", NULL}, {"get", "list", "create", "delete", NULL}},
};

const struct cmd_help iam_policy_help = {
	.usage = CMD_USAGE(
		"[--for plan|apply|bench|all]",
		"--for org [--role-name NAME] [--external-id ID] [--trusted-principal ARN|ACCOUNT] [--member-for plan|apply|all]"),
	.description = "Prints the minimal AWS IAM policy (JSON) for a capability: plan/inventory/report read "
		       "EC2 volumes, modifications, instances, CloudWatch metrics, CloudTrail's ModifyVolume "
		       "history (cloudtrail:LookupEvents) and prices; apply adds "
		       "ec2:ModifyVolume and ec2:CreateTags; bench reads volumes only. Attach it to the role "
		       "ebsmigrate runs as (IRSA, Pod Identity, or a user).\n"
		       "\n"
		       "--for org prints, for runs over several accounts (--accounts, --organization), one JSON "
		       "document with three policies: ManagementPolicy for the principal ebsmigrate runs as in the "
		       "management (or delegated administrator) account (organizations:ListAccounts and "
		       "DescribeAccount, sts:AssumeRole on arn:aws:iam::*:role/NAME), MemberRolePolicy, the "
		       "permission policy of the role NAME in every member account (--member-for), and "
		       "MemberRoleTrustPolicy, its trust policy (--trusted-principal; with --external-id an "
		       "sts:ExternalId condition). docs/accounts.md describes the set-up.",
	.options = policy_options,
};

const struct cmd_help rbac_help = {
	.usage = CMD_USAGE("[--for plan|apply|bench|all] [--service-account NS/NAME]"),
	.description = "Prints the minimal Kubernetes ClusterRole (YAML) for a capability: plan/inventory read "
		       "PVs, PVCs, pods, nodes, StorageClasses, VolumeAttributesClasses, StatefulSets and the "
		       "kubelet stats summary (nodes/proxy); apply adds patching PVCs and creating "
		       "VolumeAttributesClasses; bench creates and deletes Jobs, pods and scratch PVCs. With it, "
		       "a ServiceAccount (--service-account, default ebsmigrate/ebsmigrate; its Namespace too "
		       "unless it is default or kube-system) and a ClusterRoleBinding named ROLE-NS-NAME binding "
		       "the role to it, so `ebsmigrate rbac | kubectl apply -f -` grants it. Every permission is "
		       "cluster-wide (the readers list across namespaces, bench --pvc works in the PVC's "
		       "namespace), so there is no Role. To bind a user instead, apply only the ClusterRole "
		       "and write your own binding.",
	.options = rbac_options,
};

static int parse_for(const char *arg, unsigned *caps)
{
	if (strcmp(arg, "org") == 0)
		*caps = CAP_ORG;
	else if (strcmp(arg, "plan") == 0 || strcmp(arg, "inventory") == 0 || strcmp(arg, "report") == 0)
		*caps = CAP_PLAN;
	else if (strcmp(arg, "apply") == 0)
		*caps = CAP_APPLY;
	else if (strcmp(arg, "bench") == 0)
		*caps = CAP_BENCH;
	else if (strcmp(arg, "all") == 0)
		*caps = CAP_PLAN | CAP_APPLY | CAP_BENCH;
	else
		return EM_EINPUT;
	return 0;
}

static int on_option(void *st, int id, const char *arg)
{
	struct policy_args *a = st;
	if (id == OPT_FOR) {
		if (parse_for(arg, &a->caps) == 0)
			return 0;
		log_error("--for: '%s' is not one of plan, apply, bench, all, org", arg);
		return EXIT_USAGE;
	}
	switch (id) {
	case OPT_ROLE_NAME: a->role_name = arg; a->org_options = 1; return 0;
	case OPT_EXTERNAL_ID: a->external_id = arg; a->org_options = 1; return 0;
	case OPT_TRUSTED: a->trusted = arg; a->org_options = 1; return 0;
	case OPT_MEMBER_FOR:
		a->org_options = 1;
		if (parse_for(arg, &a->member_caps) == 0 && (a->member_caps & (CAP_BENCH | CAP_ORG)) == 0)
			return 0;
		if (strcmp(arg, "all") == 0) {
			a->member_caps = CAP_PLAN | CAP_APPLY;
			return 0;
		}
		log_error("--member-for: '%s' is not one of plan, apply, all", arg);
		return EXIT_USAGE;
	}
	const char *slash = strchr(arg, '/');
	size_t ns_len = slash ? (size_t)(slash - arg) : 0;
	if (!slash || ns_len >= sizeof a->sa_namespace || strlen(slash + 1) >= sizeof a->sa_name) {
		cmd_print_visible(stderr, "error: --service-account: '%s' is not NAMESPACE/NAME", arg);
		return EXIT_USAGE;
	}
	memcpy(a->sa_namespace, arg, ns_len);
	a->sa_namespace[ns_len] = '\0';
	strcpy(a->sa_name, slash + 1);
	if (!kube_dns_name_ok(a->sa_namespace, ns_len, 0) || !kube_dns_name_ok(a->sa_name, strlen(a->sa_name), 1)) {
		cmd_print_visible(stderr,
				  "error: --service-account: '%s' is not NAMESPACE/NAME of lower-case letters, digits "
				  "and '-' (a name may also have '.')",
				  arg);
		return EXIT_USAGE;
	}
	return 0;
}

/* The statements of a capability's policy, into the open "Statement" array; without_prices:
 * pricing:GetProducts left out (a member role: prices are read with the base credentials). */
static void iam_statements(struct jsonw *w, unsigned caps, int without_prices)
{
	for (size_t i = 0; i < sizeof iam / sizeof iam[0]; i++) {
		if (!(iam[i].caps & caps) || (without_prices && strcmp(iam[i].actions[0], "pricing:GetProducts") == 0))
			continue;
		size_t n = 0;
		while (iam[i].actions[n])
			n++;
		jsonw_object(w);
		jsonw_key_str(w, "Sid", iam[i].sid);
		jsonw_key_str(w, "Effect", "Allow");
		jsonw_key(w, "Action");
		jsonw_str_array(w, iam[i].actions, n);
		jsonw_key_str(w, "Resource", "*");
		jsonw_end(w);
	}
}

/* One Allow statement with one resource. */
static void allow(struct jsonw *w, const char *sid, const char *const *actions, size_t n, const char *resource)
{
	jsonw_object(w);
	jsonw_key_str(w, "Sid", sid);
	jsonw_key_str(w, "Effect", "Allow");
	jsonw_key(w, "Action");
	jsonw_str_array(w, actions, n);
	jsonw_key_str(w, "Resource", resource);
	jsonw_end(w);
}

/* Opens a policy document (under key, when not NULL) and its Statement array; policy_end closes both. */
static void policy_begin(struct jsonw *w, const char *key)
{
	if (key)
		jsonw_key(w, key);
	jsonw_object(w);
	jsonw_key_str(w, "Version", "2012-10-17");
	jsonw_key(w, "Statement");
	jsonw_array(w);
}

static void policy_end(struct jsonw *w)
{
	jsonw_end(w);
	jsonw_end(w);
}

/* --for org: the management account's policy, the member role's permission and trust policies. */
static void render_org_policies(struct jsonw *w, const struct policy_args *args)
{
	const char *role = args->role_name ? args->role_name : "ebsmigrate";
	struct buf arn = BUF_INIT, trusted = BUF_INIT;
	buf_addf(&arn, "arn:aws:iam::*:role/%s", role);
	if (!args->trusted)
		buf_adds(&trusted, "arn:aws:iam::MANAGEMENT_ACCOUNT_ID:root");
	else if (strchr(args->trusted, ':'))
		buf_adds(&trusted, args->trusted);
	else
		buf_addf(&trusted, "arn:aws:iam::%s:root", args->trusted);
	jsonw_object(w);
	policy_begin(w, "ManagementPolicy");
	static const char *const org_actions[] = {"organizations:ListAccounts", "organizations:DescribeAccount"};
	static const char *const assume[] = {"sts:AssumeRole"};
	allow(w, "EbsmigrateListAccounts", org_actions, 2, "*");
	allow(w, "EbsmigrateAssumeMemberRole", assume, 1, arn.s);
	/* the base credentials read their own account (listed by --organization) and the prices */
	iam_statements(w, (args->member_caps ? args->member_caps : CAP_PLAN) | CAP_PLAN, 0);
	policy_end(w);
	policy_begin(w, "MemberRolePolicy");
	/* pricing:GetProducts is called with the base credentials only: not in the member role */
	iam_statements(w, args->member_caps ? args->member_caps : CAP_PLAN, 1);
	policy_end(w);
	policy_begin(w, "MemberRoleTrustPolicy");
	jsonw_object(w);
	jsonw_key_str(w, "Sid", "EbsmigrateTrust");
	jsonw_key_str(w, "Effect", "Allow");
	jsonw_key(w, "Principal");
	jsonw_object(w);
	jsonw_key_str(w, "AWS", trusted.s);
	jsonw_end(w);
	jsonw_key_str(w, "Action", "sts:AssumeRole");
	if (args->external_id) {
		jsonw_key(w, "Condition");
		jsonw_object(w);
		jsonw_key(w, "StringEquals");
		jsonw_object(w);
		jsonw_key_str(w, "sts:ExternalId", args->external_id);
		jsonw_end(w);
		jsonw_end(w);
	}
	jsonw_end(w); /* the statement */
	policy_end(w);
	jsonw_end(w); /* the three policies */
	buf_release(&arn);
	buf_release(&trusted);
}

/* The policy as AWS's own examples lay it out: pretty, with each statement's actions on one line. */
static void render_iam_policy(struct buf *b, const struct policy_args *args)
{
	struct jsonw w;
	jsonw_init(&w, b, JSONW_PRETTY_INLINE);
	if (args->caps & CAP_ORG) {
		render_org_policies(&w, args);
		jsonw_layout(&w, "\n");
		return;
	}
	policy_begin(&w, NULL);
	iam_statements(&w, args->caps, 0);
	policy_end(&w);
	jsonw_layout(&w, "\n");
}

/* --for org's options: a role name and external id as IAM and STS take them, a principal ARN or
 * account id; never with another --for. */
static int check_org_options(const struct policy_args *a)
{
	if (a->org_options && !(a->caps & CAP_ORG))
		return cmd_usage_if(1, "--role-name, --external-id, --trusted-principal and --member-for go with --for org");
	struct buf err = BUF_INIT;
	int bad_role = a->role_name && aws_role_name_check("--role-name", a->role_name, &err);
	if (bad_role)
		log_error("%s", err.s);
	buf_release(&err);
	if (bad_role)
		return EXIT_USAGE;
	if (a->external_id && (strlen(a->external_id) < 2 || strlen(a->external_id) > 1224 ||
			       strspn(a->external_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=,.@:/-") !=
				       strlen(a->external_id)))
		return cmd_usage_if(1, "--external-id: not 2 to 1224 characters of [A-Za-z0-9_+=,.@:/-]");
	if (a->trusted && !(strncmp(a->trusted, "arn:", 4) == 0 && strstr(a->trusted, ":iam::") &&
			    strcspn(a->trusted, "\"\\ \t\n*") == strlen(a->trusted)) &&
	    !(strlen(a->trusted) == 12 && strspn(a->trusted, "0123456789") == 12))
		return cmd_usage_if(1, "--trusted-principal: not an IAM ARN (arn:aws:iam::ACCOUNT:role/NAME) or a 12-digit "
				       "account id");
	return 0;
}

static void render_rbac(struct buf *b, const struct policy_args *args)
{
	unsigned caps = args->caps;
	const char *name = caps == CAP_PLAN ? "ebsmigrate-plan" : caps == CAP_APPLY ? "ebsmigrate-apply"
							    : caps == CAP_BENCH ? "ebsmigrate-bench" : "ebsmigrate";
	buf_addf(b, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\n"
		     "  labels:\n    app.kubernetes.io/name: ebsmigrate\nrules:\n",
		 name);
	for (size_t i = 0; i < sizeof rbac / sizeof rbac[0]; i++) {
		if (!(rbac[i].caps & caps))
			continue;
		buf_addf(b, "  - apiGroups: [\"%s\"]\n    resources: [", rbac[i].group);
		for (int k = 0; rbac[i].resources[k]; k++)
			buf_addf(b, "%s\"%s\"", k ? ", " : "", rbac[i].resources[k]);
		buf_adds(b, "]\n    verbs: [");
		for (int k = 0; rbac[i].verbs[k]; k++)
			buf_addf(b, "%s\"%s\"", k ? ", " : "", rbac[i].verbs[k]);
		buf_adds(b, "]\n");
	}
	const char *ns = args->sa_namespace, *sa = args->sa_name;
	if (strcmp(ns, "default") != 0 && strcmp(ns, "kube-system") != 0)
		buf_addf(b, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns);
	buf_addf(b, "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %s\n  namespace: %s\n"
		     "  labels:\n    app.kubernetes.io/name: ebsmigrate\n",
		 sa, ns);
	buf_addf(b, "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n"
		     "  name: %s-%s-%s\n  labels:\n    app.kubernetes.io/name: ebsmigrate\n"
		     "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: %s\n"
		     "subjects:\n  - kind: ServiceAccount\n    name: %s\n    namespace: %s\n",
		 name, ns, sa, name, sa, ns);
}

/* Both commands: parse (default --for plan, service account ebsmigrate/ebsmigrate), render, print. */
static int run(struct cmd_ctx *ctx, const char *name, int argc, char **argv,
	       void (*render)(struct buf *out, const struct policy_args *args))
{
	struct policy_args args;
	args.caps = CAP_PLAN;
	strcpy(args.sa_namespace, "ebsmigrate");
	strcpy(args.sa_name, "ebsmigrate");
	int rc;
	args.role_name = args.external_id = args.trusted = NULL;
	args.member_caps = 0;
	args.org_options = 0;
	if (cmd_start_options_only(ctx, name, argc, argv, on_option, &args, NULL, "", &rc))
		return rc;
	if ((rc = check_org_options(&args)) != 0)
		return rc;
	struct buf b = BUF_INIT;
	render(&b, &args);
	rc = cmd_write_output(NULL, &b);
	buf_release(&b);
	return rc;
}

int cmd_iam_policy(struct cmd_ctx *ctx, int argc, char **argv)
{
	return run(ctx, "iam-policy", argc, argv, render_iam_policy);
}

int cmd_rbac(struct cmd_ctx *ctx, int argc, char **argv)
{
	return run(ctx, "rbac", argc, argv, render_rbac);
}
