/*
 * cmd_policy.c - `ebsmigrate iam-policy` and `ebsmigrate rbac`: the least privileges each
 * capability needs, as an IAM policy document (JSON) and a Kubernetes ClusterRole (YAML) with
 * the ServiceAccount (and its Namespace) and the ClusterRoleBinding that grant it, so
 * `ebsmigrate rbac | kubectl apply -f -` leaves a working account.
 * The lists are data here and are checked by scenario tests: the simulator grants exactly
 * these permissions and the commands must work (and anything else gets 403).
 * Narrowing (issue 28 item 17): every regional statement takes aws:RequestedRegion for the
 * regions asked for (--region, or the volumes of --plan FILE), ec2:ModifyVolume an
 * ec2:ResourceTag condition per --require-tag; ebsmigrate writes no tags, so no ec2:CreateTags;
 * nodes/proxy only for the capabilities that read kubelet usage (plan), unless
 * --no-kubelet-stats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_accounts.h"
#include "ebsmigrate/aws_endpoint.h"
#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/plan_file.h"
#include "ebsmigrate/strlist.h"

enum {
	OPT_FOR = 1,
	OPT_SERVICE_ACCOUNT,
	OPT_ROLE_NAME,
	OPT_EXTERNAL_ID,
	OPT_TRUSTED,
	OPT_MEMBER_FOR,
	OPT_REGION,
	OPT_PLAN,
	OPT_REQUIRE_TAG,
	OPT_NO_KUBELET_STATS,
};
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
	{"region", 0, ARG_REQUIRED, "REGION",
	 "allow the EC2, CloudWatch and CloudTrail calls in this region only (aws:RequestedRegion; repeatable)",
	 OPT_REGION},
	{"plan", 0, ARG_REQUIRED, "FILE",
	 "allow them in the regions of this plan's volumes to migrate only (a plan/v1 file, as apply --plan "
	 "reads it)",
	 OPT_PLAN},
	{"require-tag", 0, ARG_REQUIRED, "KEY=VALUE",
	 "allow ec2:ModifyVolume only on volumes tagged KEY=VALUE (ec2:ResourceTag; repeatable: all of them)",
	 OPT_REQUIRE_TAG},
	CMD_OPTIONS_END,
};
static const struct cmd_option rbac_options[] = {
	{"for", 0, ARG_REQUIRED, "WHAT", "plan (default; also inventory and report), apply, bench, or all", OPT_FOR},
	{"service-account", 0, ARG_REQUIRED, "NS/NAME",
	 "the ServiceAccount to create and bind (default ebsmigrate/ebsmigrate)", OPT_SERVICE_ACCOUNT},
	{"no-kubelet-stats", 0, ARG_NONE, NULL,
	 "leave out nodes/proxy (the kubelet stats summary): runs then need --no-usage and lose PVC usage "
	 "(docs/policy.md)",
	 OPT_NO_KUBELET_STATS},
	CMD_OPTIONS_END,
};

/* --require-tag KEY=VALUE */
struct required_tag {
	char *key, *value;
};

struct policy_args {
	unsigned caps;
	char sa_namespace[64], sa_name[254];
	/* --for org */
	const char *role_name, *external_id, *trusted;
	unsigned member_caps;
	int org_options; /* an option that only goes with --for org */
	/* iam-policy's narrowing */
	struct strlist regions;       /* --region, or --plan's regions (sorted) */
	const char *plan_path;
	struct required_tag *tags;
	size_t n_tags;
	int no_kubelet_stats;         /* rbac */
};

struct iam_stmt {
	unsigned caps;
	const char *sid;
	int regional;  /* called in the volumes' regions: aws:RequestedRegion applies */
	int modifies;  /* acts on volumes: --require-tag applies */
	const char *actions[6];
};

/* Read-only EC2/CloudWatch/CloudTrail/Pricing for plan; ModifyVolume for apply (ebsmigrate
 * writes no tags: no ec2:CreateTags). cloudtrail:LookupEvents counts modifications made by
 * others (the 4-per-24-h budget). Pricing is asked in the Price List API's own region, so no
 * region condition. */
static const struct iam_stmt iam[] = {
	{CAP_PLAN | CAP_APPLY | CAP_BENCH, "EbsmigrateReadVolumes", 1, 0,
	 {"ec2:DescribeVolumes", "ec2:DescribeVolumesModifications", "ec2:DescribeInstances",
	  "ec2:DescribeInstanceTypes", NULL}},
	{CAP_PLAN | CAP_APPLY, "EbsmigrateReadMetrics", 1, 0, {"cloudwatch:GetMetricData", NULL}},
	{CAP_PLAN | CAP_APPLY, "EbsmigrateReadModificationHistory", 1, 0, {"cloudtrail:LookupEvents", NULL}},
	{CAP_PLAN, "EbsmigrateReadPrices", 0, 0, {"pricing:GetProducts", NULL}},
	{CAP_APPLY, "EbsmigrateModifyVolumes", 1, 1, {"ec2:ModifyVolume", NULL}},
};

struct rbac_rule {
	unsigned caps;
	const char *group;
	const char *resources[7];
	const char *verbs[5];
};

/* The rule of the kubelet stats summary (PVC usage), which only the readers of usage need:
 * plan, inventory and report (apply and status never read it). */
#define RBAC_NODES_PROXY 1

static const struct rbac_rule rbac[] = {
	{CAP_PLAN | CAP_APPLY | CAP_BENCH, "",
	 {"persistentvolumes", "persistentvolumeclaims", "pods", "nodes", NULL},
	 {"get", "list", NULL}},
	[RBAC_NODES_PROXY] = {CAP_PLAN, "", {"nodes/proxy", NULL}, {"get", NULL}},
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
		"[--for plan|apply|bench|all] [--region REGION...|--plan FILE] [--require-tag KEY=VALUE...]",
		"--for org [--role-name NAME] [--external-id ID] [--trusted-principal ARN|ACCOUNT] [--member-for plan|apply|all] "
		"[--region REGION...|--plan FILE] [--require-tag KEY=VALUE...]"),
	.description = "Prints the minimal AWS IAM policy (JSON) for a capability: plan/inventory/report read "
		       "EC2 volumes, modifications, instances, CloudWatch metrics, CloudTrail's ModifyVolume "
		       "history (cloudtrail:LookupEvents) and prices; apply adds "
		       "ec2:ModifyVolume (ebsmigrate writes no tags: no ec2:CreateTags); bench reads volumes only. "
		       "Attach it to the role ebsmigrate runs as (IRSA, Pod Identity, or a user).\n"
		       "\n"
		       "--region REGION (repeatable), or --plan FILE (the regions of the plan's volumes to migrate), "
		       "adds an aws:RequestedRegion condition to every statement but prices: the role can then read "
		       "and modify volumes in those regions only. --require-tag KEY=VALUE adds an "
		       "ec2:ResourceTag/KEY condition to ec2:ModifyVolume: tag the volumes you mean to migrate, and "
		       "the role can modify no other volume (docs/policy.md).\n"
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
	.usage = CMD_USAGE("[--for plan|apply|bench|all] [--service-account NS/NAME] [--no-kubelet-stats]"),
	.description = "Prints the minimal Kubernetes ClusterRole (YAML) for a capability: plan/inventory read "
		       "PVs, PVCs, pods, nodes, StorageClasses, VolumeAttributesClasses, StatefulSets and the "
		       "kubelet stats summary (nodes/proxy: PVC usage; --no-kubelet-stats leaves it out, and the "
		       "runs then need --no-usage); apply adds patching PVCs and creating "
		       "VolumeAttributesClasses and reads no usage; bench creates and deletes Jobs, pods and scratch PVCs. With it, "
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

/* A byte EC2 takes in a tag key or value (ASCII here: letters, digits, space and _ . : / = + - @). */
static int tag_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c && strchr(" _.:/=+-@", c));
}

/* --require-tag KEY=VALUE: EC2's tag grammar (a key of 1-128, a value of 0-256 of tag_char, the
 * key not starting "aws:"; the first '=' ends the key), each key once. */
static int require_tag_option(struct policy_args *a, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : 0, vlen = eq ? strlen(eq + 1) : 0;
	int ok = eq && klen >= 1 && klen <= 128 && vlen <= 256 && strncmp(arg, "aws:", 4) != 0;
	for (const char *p = arg; ok && *p; p++)
		ok = p == eq || tag_char(*p);
	if (!ok) {
		cmd_print_visible(stderr,
				  "error: --require-tag: '%s' is not KEY=VALUE of an EC2 tag (a key of 1-128 and a value "
				  "of 0-256 letters, digits, spaces and _.:/=+-@; the key not starting with aws:)",
				  arg);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < a->n_tags; i++)
		if (strlen(a->tags[i].key) == klen && strncmp(a->tags[i].key, arg, klen) == 0) {
			cmd_print_visible(stderr, "error: --require-tag: tag key '%s' given twice", a->tags[i].key);
			return EXIT_USAGE;
		}
	a->tags = xrealloc(a->tags, (a->n_tags + 1) * sizeof *a->tags);
	a->tags[a->n_tags++] = (struct required_tag){xstrndup(arg, klen), xstrdup(eq + 1)};
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
	case OPT_REGION:
		if (!aws_region_valid(arg)) {
			cmd_print_visible(stderr, "error: --region: '%s' is not an AWS region", arg);
			return EXIT_USAGE;
		}
		if (!strlist_contains(&a->regions, arg))
			strlist_append(&a->regions, arg);
		return 0;
	case OPT_PLAN: a->plan_path = arg; return 0;
	case OPT_REQUIRE_TAG: return require_tag_option(a, arg);
	case OPT_NO_KUBELET_STATS: a->no_kubelet_stats = 1; return 0;
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
	snprintf(a->sa_name, sizeof a->sa_name, "%s", slash + 1);
	if (!kube_dns_name_ok(a->sa_namespace, ns_len, 0) || !kube_dns_name_ok(a->sa_name, strlen(a->sa_name), 1)) {
		cmd_print_visible(stderr,
				  "error: --service-account: '%s' is not NAMESPACE/NAME of lower-case letters, digits "
				  "and '-' (a name may also have '.')",
				  arg);
		return EXIT_USAGE;
	}
	return 0;
}

/* The statement's Condition, when the narrowing options reach it: StringEquals on
 * aws:RequestedRegion (regional statements) and ec2:ResourceTag/KEY (the one that modifies). */
static void iam_condition(struct jsonw *w, const struct iam_stmt *st, const struct policy_args *args)
{
	int regions = st->regional && args->regions.n, tags = st->modifies && args->n_tags;
	if (!regions && !tags)
		return;
	jsonw_key(w, "Condition");
	jsonw_object(w);
	jsonw_key(w, "StringEquals");
	jsonw_object(w);
	if (regions) {
		jsonw_key(w, "aws:RequestedRegion");
		jsonw_str_array(w, (const char *const *)args->regions.items, args->regions.n);
	}
	for (size_t i = 0; tags && i < args->n_tags; i++) {
		struct buf key = BUF_INIT;
		buf_addf(&key, "ec2:ResourceTag/%s", args->tags[i].key);
		jsonw_key_str(w, key.s, args->tags[i].value);
		buf_release(&key);
	}
	jsonw_end(w);
	jsonw_end(w);
}

/* The statements of a capability's policy, into the open "Statement" array; without_prices:
 * pricing:GetProducts left out (a member role: prices are read with the base credentials). */
static void iam_statements(struct jsonw *w, unsigned caps, int without_prices, const struct policy_args *args)
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
		iam_condition(w, &iam[i], args);
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
	iam_statements(w, (args->member_caps ? args->member_caps : CAP_PLAN) | CAP_PLAN, 0, args);
	policy_end(w);
	policy_begin(w, "MemberRolePolicy");
	/* pricing:GetProducts is called with the base credentials only: not in the member role */
	iam_statements(w, args->member_caps ? args->member_caps : CAP_PLAN, 1, args);
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
	iam_statements(&w, args->caps, 0, args);
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

/* --plan FILE: the regions of the plan's volumes apply may act on (migrate and blocked), read by
 * the one plan reader, into args->regions (sorted). */
static int plan_regions(struct policy_args *args)
{
	struct buf text = BUF_INIT, err = BUF_INIT, origin = BUF_INIT;
	struct plan_doc doc;
	memset(&doc, 0, sizeof doc);
	buf_addf(&origin, "plan file '%s'", args->plan_path);
	int rc = em_read_input(args->plan_path, &text, &err);
	if (!rc)
		rc = plan_doc_parse(&doc, origin.s, text.s, text.len, &err);
	for (size_t i = 0; !rc && i < doc.n; i++)
		if (doc.v[i].region && !strlist_contains(&args->regions, doc.v[i].region))
			strlist_append(&args->regions, doc.v[i].region);
	strlist_sort(&args->regions);
	if (!rc && !args->regions.n)
		rc = em_err(&err, EM_EINPUT, "--plan: %s has no volume to migrate: no region to allow", origin.s);
	if (rc)
		log_error("%s", err.s);
	plan_doc_release(&doc);
	buf_release(&text);
	buf_release(&err);
	buf_release(&origin);
	return rc ? em_exit_code_for(rc) : 0;
}

/* iam-policy's narrowing options: one source of regions, tags only where volumes are modified;
 * a policy that lets ec2:ModifyVolume reach every region says so on stderr. */
static int check_narrowing(struct policy_args *args)
{
	int modifying = (args->caps & CAP_APPLY) || ((args->caps & CAP_ORG) && (args->member_caps & CAP_APPLY));
	if (args->regions.n && args->plan_path)
		return cmd_usage_if(1, "--region and --plan both say which regions to allow: give one");
	if (args->n_tags && !modifying)
		return cmd_usage_if(1, "--require-tag narrows ec2:ModifyVolume: it goes with --for apply or all (or --for org "
				       "--member-for apply|all)");
	int rc = args->plan_path ? plan_regions(args) : 0;
	if (!rc && modifying && !args->regions.n)
		log_notice("ec2:ModifyVolume is allowed in every region: --region REGION or --plan FILE limits it to "
			   "the regions you migrate");
	return rc;
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
		if (!(rbac[i].caps & caps) || (i == RBAC_NODES_PROXY && args->no_kubelet_stats))
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
	memset(&args, 0, sizeof args);
	args.caps = CAP_PLAN;
	snprintf(args.sa_namespace, sizeof args.sa_namespace, "ebsmigrate");
	snprintf(args.sa_name, sizeof args.sa_name, "ebsmigrate");
	args.regions = (struct strlist)STRLIST_INIT_DUP;
	int rc;
	if (!cmd_start_options_only(ctx, name, argc, argv, on_option, &args, NULL, "", &rc) &&
	    !(rc = check_org_options(&args)) && !(rc = render == render_iam_policy ? check_narrowing(&args) : 0)) {
		struct buf b = BUF_INIT;
		render(&b, &args);
		rc = cmd_write_output(NULL, &b);
		buf_release(&b);
	}
	for (size_t i = 0; i < args.n_tags; i++)
		EM_FREE_ALL(args.tags[i].key, args.tags[i].value);
	free(args.tags);
	strlist_release(&args.regions);
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
