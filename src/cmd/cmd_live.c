/*
 * cmd_live.c - the options every command that reads the live APIs shares (plan, inventory),
 * their parsing into struct inventory_live_options (the account options checked together by
 * cmd_live_check) (the progress line is cmd_progress.c); the
 * export arguments of plan and report (--from-aws-json/--from-kube-json FILE or DIR, --from-saved DIR).
 * Invariant: a directory's exports are taken in file-name order, whatever readdir's order.
 */
#include <dirent.h>
#include <pwd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/aws_accounts.h"
#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/strlist.h"
#include "ebsmigrate/workpool.h"

const struct cmd_option live_options[] = {
	{"region", 0, ARG_REQUIRED, "REGION",
	 "AWS region to read and show (repeatable; default: the configured region plus the clusters' PV regions; "
	 "PVs in other regions are counted in a note); with plan/report exports: only volumes in this region",
	 OPT_LIVE_REGION},
	{"profile", 0, ARG_REQUIRED, "NAME",
	 "AWS profile from ~/.aws/config and ~/.aws/credentials; repeatable: each profile is one account, all read "
	 "in one run (docs/accounts.md)",
	 OPT_LIVE_PROFILE},
	CMD_KUBECONFIG_OPTION(OPT_LIVE_KUBECONFIG),
	{"context", 0, ARG_REQUIRED, "NAME",
	 "kubeconfig context to read (repeatable; default: the current one); with plan/report exports: only "
	 "volumes of this cluster", OPT_LIVE_CONTEXT},
	{"all-contexts", 0, ARG_NONE, NULL, "read every context of the kubeconfig", OPT_LIVE_ALL_CONTEXTS},
	{"no-kube", 0, ARG_NONE, NULL, "do not read Kubernetes: AWS only (every volume not-kubernetes)", OPT_LIVE_NO_KUBE},
	{"no-aws", 0, ARG_NONE, NULL, "do not read AWS: list the clusters' EBS PVs only", OPT_LIVE_NO_AWS},
	{"no-metrics", 0, ARG_NONE, NULL, "skip CloudWatch metrics", OPT_LIVE_NO_METRICS},
	{"no-cloudtrail", 0, ARG_NONE, NULL,
	 "do not read CloudTrail's ModifyVolume history: count EC2's latest modification only (flag history-unverified)",
	 OPT_LIVE_NO_CLOUDTRAIL},
	{"no-usage", 0, ARG_NONE, NULL, "skip kubelet volume usage (nodes/NAME/proxy/stats/summary)", OPT_LIVE_NO_USAGE},
	{"lookback", 0, ARG_REQUIRED, "DURATION", "CloudWatch look-back, e.g. 14d, 36h (default 14d)", OPT_LIVE_LOOKBACK},
	{"kube-page-size", 0, ARG_REQUIRED, "N", "Kubernetes list page size (limit=N; default 500)", OPT_LIVE_KUBE_PAGE},
	{"concurrency", 0, ARG_REQUIRED, "N",
	 "regions, clusters and independent API calls read at a time (1-64; default 8; 1 = one after another)",
	 OPT_LIVE_CONCURRENCY},
	{"accounts", 0, ARG_REQUIRED, "ID[,ID...]|@FILE",
	 "read these AWS accounts (12-digit ids; @FILE: ids one a line, # comments), each through the role "
	 "--role-name/--role-arn-template assumed from the base credentials, named by Organizations DescribeAccount "
	 "where the base credentials may ask (else by id; docs/accounts.md); repeatable",
	 OPT_LIVE_ACCOUNTS},
	{"organization", 0, ARG_NONE, NULL,
	 "read every ACTIVE account of the AWS organization (Organizations ListAccounts; others listed as "
	 "skipped), each through the role --role-name/--role-arn-template",
	 OPT_LIVE_ORGANIZATION},
	{"exclude-accounts", 0, ARG_REQUIRED, "ID[,ID...]|@FILE",
	 "leave these accounts out of --accounts/--organization (repeatable)", OPT_LIVE_EXCLUDE_ACCOUNTS},
	CMD_ROLE_OPTIONS,
	CMD_OPTIONS_END,
};

/* The account options as given (o->account_args), checked together by cmd_live_check. */
struct cmd_live_accounts {
	struct inventory_accounts a;     /* what inventory reads, once checked */
	struct strlist ids, exclude;     /* owned */
	struct strlist profiles;         /* borrowed argv values */
	const char *role_name, *role_arn_template, *session_name, *duration;
	char *arn_built, *session_built;
	int account_options;             /* any option that only goes with several accounts */
};

static struct cmd_live_accounts *account_args(struct inventory_live_options *o)
{
	if (!o->account_args) {
		struct cmd_live_accounts *x = xcalloc(1, sizeof *x);
		x->ids = (struct strlist)STRLIST_INIT_DUP;
		x->exclude = (struct strlist)STRLIST_INIT_DUP;
		x->profiles = (struct strlist)STRLIST_INIT_NODUP;
		o->account_args = x;
	}
	return o->account_args;
}

static int account_list_option(struct strlist *l, const char *opt, const char *arg)
{
	struct buf err = BUF_INIT;
	int rc = aws_accounts_parse(l, opt, arg, &err);
	if (rc)
		log_error("%s", err.s);
	buf_release(&err);
	return rc ? EXIT_USAGE : 0;
}

static int account_option(struct inventory_live_options *o, int id, const char *arg)
{
	struct cmd_live_accounts *x = account_args(o);
	switch (id) {
	case OPT_LIVE_ACCOUNTS: return account_list_option(&x->ids, "--accounts", arg);
	case OPT_LIVE_ORGANIZATION: x->a.organization = 1; return 0;
	case OPT_LIVE_EXCLUDE_ACCOUNTS:
		x->account_options = 1;
		return account_list_option(&x->exclude, "--exclude-accounts", arg);
	case OPT_LIVE_ROLE_NAME: x->role_name = arg; break;
	case OPT_LIVE_ROLE_ARN_TEMPLATE: x->role_arn_template = arg; break;
	case OPT_LIVE_EXTERNAL_ID: x->a.external_id = arg; break;
	case OPT_LIVE_ROLE_SESSION_NAME: x->session_name = arg; break;
	case OPT_LIVE_ROLE_DURATION: x->duration = arg; break;
	}
	x->account_options = 1;
	return 0;
}

/* STS's ExternalId: 2-1224 characters of [A-Za-z0-9_+=,.@:/-]. */
static int external_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n < 2 || n > 1224)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("_+=,.@:/-", *p)))
			return 0;
	return 1;
}

static const char *user_name(void)
{
	const char *u = getenv("USER");
	if (u && *u)
		return u;
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_name ? pw->pw_name : "user";
}

/* The role options (--role-name or --role-arn-template, --external-id, --role-session-name,
 * --role-duration) checked and put into x->a. */
static int check_roles(struct cmd_live_accounts *x)
{
	struct inventory_accounts *a = &x->a;
	if (x->role_name && x->role_arn_template)
		return cmd_usage_if(1, "--role-name and --role-arn-template both say which role to assume: give one");
	struct buf err = BUF_INIT;
	if ((x->role_name && aws_role_name_check("--role-name", x->role_name, &err)) ||
	    (x->role_arn_template && aws_role_arn_template_check(x->role_arn_template, &err))) {
		log_error("%s", err.s);
		buf_release(&err);
		return EXIT_USAGE;
	}
	buf_release(&err);
	if (x->role_name && !x->arn_built) {
		struct buf arn = BUF_INIT;
		buf_addf(&arn, "arn:${partition}:iam::${account}:role/%s", x->role_name);
		x->arn_built = buf_detach(&arn);
	}
	a->role_arn_template = x->role_arn_template ? x->role_arn_template : x->arn_built;
	if (a->external_id && !external_id_valid(a->external_id))
		return cmd_usage_if(1, "--external-id: not 2 to 1224 characters of [A-Za-z0-9_+=,.@:/-]");
	struct buf session = BUF_INIT, want = BUF_INIT;
	if (x->session_name)
		buf_adds(&want, x->session_name);
	else
		buf_addf(&want, "ebsmigrate-%s", user_name());
	aws_session_name_sanitize(&session, want.s);
	if (x->session_name && strcmp(session.s, x->session_name) != 0)
		log_info("--role-session-name: '%s' sent as '%s' (STS's characters, 2-64)", x->session_name, session.s);
	buf_release(&want);
	free(x->session_built);
	x->session_built = buf_detach(&session);
	a->session_name = x->session_built;
	if (x->duration) {
		int64_t d;
		if (em_parse_duration(x->duration, &d) || d < 900 || d > 43200)
			return cmd_usage_if(1, "--role-duration: '%s' is not a duration from 15m to 12h (e.g. 1h)", x->duration);
		a->duration_s = (int)d;
	}
	return 0;
}

int cmd_live_check(struct inventory_live_options *o)
{
	struct cmd_live_accounts *x = o->account_args;
	if (!x)
		return 0;
	struct inventory_accounts *a = &x->a;
	int several = x->ids.n || a->organization;
	if (x->ids.n && a->organization)
		return cmd_usage_if(1, "--accounts and --organization do not go together: --organization reads every "
				       "account of the organization (leave some out with --exclude-accounts)");
	if (x->profiles.n > 1 && (several || x->account_options))
		return cmd_usage_if(1, "--profile given more than once reads one account per profile; it does not go with "
				       "--accounts, --organization or the --role-* options (give one --profile for the "
				       "base credentials)");
	if (x->profiles.n > 1) {
		a->profiles = x->profiles.items;
		a->n_profiles = x->profiles.n;
		o->profile = NULL;
		o->accounts = a;
		return cmd_usage_if(o->no_aws, "--no-aws reads no account");
	}
	if (!several)
		return cmd_usage_if(x->account_options,
				    "--exclude-accounts, --role-name, --role-arn-template, --external-id, --role-session-name "
				    "and --role-duration go with --accounts or --organization");
	if (o->no_aws)
		return cmd_usage_if(1, "--no-aws reads no account: it does not go with --accounts or --organization");
	if (x->role_name && x->role_arn_template)
		return cmd_usage_if(1, "--role-name and --role-arn-template both say which role to assume: give one");
	if (!x->role_name && !x->role_arn_template)
		return cmd_usage_if(1, "--accounts and --organization need the role to assume in each account: "
				       "--role-name NAME or --role-arn-template 'arn:${partition}:iam::${account}:role/NAME'");
	int rc = check_roles(x);
	if (rc)
		return rc;
	a->ids = x->ids.items;
	a->n_ids = x->ids.n;
	a->exclude = x->exclude.items;
	a->n_exclude = x->exclude.n;
	o->accounts = a;
	return 0;
}

const struct inventory_accounts *cmd_role_options_check(struct inventory_live_options *o, int *rc)
{
	struct cmd_live_accounts *x = o->account_args;
	*rc = 0;
	if (!x || (!x->role_name && !x->role_arn_template && !x->account_options))
		return NULL;
	if (!x->role_name && !x->role_arn_template) {
		*rc = cmd_usage_if(1, "--external-id, --role-session-name and --role-duration go with --role-name or "
				      "--role-arn-template");
		return NULL;
	}
	*rc = check_roles(x);
	return *rc ? NULL : &x->a;
}

static void push(const char *const **arr, size_t *n, const char *v)
{
	const char **a = xrealloc((void *)*arr, (*n + 1) * sizeof *a);
	a[(*n)++] = v;
	*arr = a;
}

int cmd_live_option(struct inventory_live_options *o, int id, const char *arg)
{
	switch (id) {
	case OPT_LIVE_REGION: push(&o->regions, &o->n_regions, arg); return 0;
	case OPT_LIVE_PROFILE:
		o->profile = arg;
		strlist_append(&account_args(o)->profiles, arg);
		return 0;
	case OPT_LIVE_ACCOUNTS:
	case OPT_LIVE_ORGANIZATION:
	case OPT_LIVE_EXCLUDE_ACCOUNTS:
	case OPT_LIVE_ROLE_NAME:
	case OPT_LIVE_ROLE_ARN_TEMPLATE:
	case OPT_LIVE_EXTERNAL_ID:
	case OPT_LIVE_ROLE_SESSION_NAME:
	case OPT_LIVE_ROLE_DURATION: return account_option(o, id, arg);
	case OPT_LIVE_KUBECONFIG: o->kubeconfig = arg; return 0;
	case OPT_LIVE_CONTEXT: push(&o->contexts, &o->n_contexts, arg); return 0;
	case OPT_LIVE_ALL_CONTEXTS: o->all_contexts = 1; return 0;
	case OPT_LIVE_NO_KUBE: o->no_kube = 1; return 0;
	case OPT_LIVE_NO_AWS: o->no_aws = 1; return 0;
	case OPT_LIVE_NO_METRICS: o->no_metrics = 1; return 0;
	case OPT_LIVE_NO_CLOUDTRAIL: o->no_cloudtrail = 1; return 0;
	case OPT_LIVE_NO_USAGE: o->no_usage = 1; return 0;
	case OPT_LIVE_KUBE_PAGE: {
		int64_t v;
		if (em_parse_i64(arg, &v) || v < 1 || v > 5000) {
			log_error("--kube-page-size: '%s' is not a number from 1 to 5000", arg);
			return EXIT_USAGE;
		}
		o->kube_page_size = (int)v;
		return 0;
	}
	case OPT_LIVE_CONCURRENCY: {
		int64_t v;
		if (em_parse_i64(arg, &v) || v < 1 || v > WORKPOOL_MAX_WORKERS) {
			log_error("--concurrency: '%s' is not a number from 1 to %d", arg, WORKPOOL_MAX_WORKERS);
			return EXIT_USAGE;
		}
		o->concurrency = (int)v;
		return 0;
	}
	case OPT_LIVE_LOOKBACK:
		if (em_parse_duration(arg, &o->lookback_s) || o->lookback_s < 3600 || o->lookback_s > 455 * 86400) {
			log_error("--lookback: '%s' is not a duration between 1h and 455d (e.g. 14d, 36h)", arg);
			return EXIT_USAGE;
		}
		return 0;
	}
	return EXIT_USAGE;
}

void cmd_live_options_release(struct inventory_live_options *o)
{
	free((void *)o->regions);
	free((void *)o->contexts);
	struct cmd_live_accounts *x = o->account_args;
	if (x) {
		strlist_release(&x->ids);
		strlist_release(&x->exclude);
		strlist_release(&x->profiles);
		free(x->arn_built);
		free(x->session_built);
		free(x);
	}
	o->account_args = NULL;
	o->accounts = NULL;
}

/* The export file names a directory's listing takes (the exports are JSON or YAML). */
static const char *const export_exts[] = {".json", ".yaml", ".yml", NULL};

/* The length of name without its export extension, or 0 when it has none. */
static size_t export_stem(const char *name)
{
	size_t n = strlen(name);
	for (int i = 0; export_exts[i]; i++) {
		size_t k = strlen(export_exts[i]);
		if (n > k && strcmp(name + n - k, export_exts[i]) == 0)
			return n - k;
	}
	return 0;
}

/* The *.json, *.yaml and *.yml files of dir (regular files, symlinks followed; no hidden ones),
 * sorted by name so that the order, and so the plan, does not depend on the file system. 0, or
 * -1 with errno. */
/* The entries of dir (sorted, hidden ones left out) that keep accepts and whose type (links
 * followed) is type: S_IFREG or S_IFDIR. -1 when dir cannot be listed. */
static int list_entries(const char *dir, int (*keep)(const char *name), mode_t type, struct strlist *out)
{
	struct strlist all = STRLIST_INIT_DUP;
	if (fs_list_dir(dir, FS_NO_HIDDEN, &all) != 0)
		return -1;
	struct buf path = BUF_INIT;
	for (size_t i = 0; i < all.n; i++) {
		if (!keep(all.items[i]))
			continue;
		buf_reset(&path);
		buf_addf(&path, "%s/%s", dir, all.items[i]);
		struct stat st;
		if (stat(path.s, &st) == 0 && (st.st_mode & S_IFMT) == type)
			strlist_append(out, all.items[i]);
	}
	buf_release(&path);
	strlist_release(&all);
	return 0;
}

static int is_export(const char *name)
{
	return export_stem(name) != 0;
}

static int list_exports(const char *dir, struct strlist *names)
{
	return list_entries(dir, is_export, S_IFREG, names);
}

/* The subdirectories of dir named by an AWS account id (inventory --save with several accounts
 * writes each account's exports in one), sorted. */
static void list_account_dirs(const char *dir, struct strlist *ids)
{
	list_entries(dir, aws_account_id_valid, S_IFDIR, ids);
}

static void push_source(struct inventory_source **arr, size_t *n, size_t *alloc, char *path, const char *label)
{
	XGROW(*arr, *n, *alloc);
	struct inventory_source *s = &(*arr)[(*n)++];
	s->path = path;
	s->label = label ? xstrdup(label) : NULL;
}

/* The cluster of a file `inventory --save` wrote: CLUSTER.json, CLUSTER.stats-summary.json,
 * CLUSTER.version.json (or the same names in .yaml/.yml, the exports converted). */
static char *saved_cluster_name(const char *file)
{
	static const char *const suffixes[] = {".stats-summary", ".version", NULL};
	size_t n = export_stem(file);
	if (!n)
		return xstrdup(file);
	for (int i = 0; suffixes[i]; i++) {
		size_t k = strlen(suffixes[i]);
		if (n > k && strncmp(file + n - k, suffixes[i], k) == 0)
			return xstrndup(file, n - k);
	}
	return xstrndup(file, n);
}

static int is_dir(const char *path)
{
	struct stat st;
	return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dir's export files into names and, when accounts is not NULL, its account subdirectories
 * into accounts; EXIT_USAGE, said, when it cannot be read or holds neither. */
static int read_dir(const char *opt, const char *dir, struct strlist *names, struct strlist *accounts)
{
	if (list_exports(dir, names)) {
		log_error("%s: cannot read directory '%s': %s", opt, dir, strerror(errno));
		return EXIT_USAGE;
	}
	if (accounts)
		list_account_dirs(dir, accounts);
	if (!names->n && !(accounts && accounts->n)) {
		log_error("%s: directory '%s' holds no *.json exports (nor *.yaml, *.yml)", opt, dir);
		return EXIT_USAGE;
	}
	return 0;
}

static char *join_path(const char *dir, const char *name)
{
	struct buf p = BUF_INIT;
	size_t n = strlen(dir);
	buf_addf(&p, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
	return buf_detach(&p);
}

/* The exports of each account subdirectory of dir (inventory --save with several
 * accounts), labelled with the account id: every volume read from them is that account's. */
static int add_account_dirs(struct inventory_source **arr, size_t *n, size_t *alloc, const char *opt, const char *dir,
			    const struct strlist *accounts)
{
	int rc = 0;
	for (size_t a = 0; !rc && a < accounts->n; a++) {
		char *sub = join_path(dir, accounts->items[a]);
		struct strlist names = STRLIST_INIT_DUP;
		if (list_exports(sub, &names)) {
			log_error("%s: cannot read directory '%s': %s", opt, sub, strerror(errno));
			rc = EXIT_USAGE;
		}
		for (size_t i = 0; !rc && i < names.n; i++) {
			char *file = join_path(sub, names.items[i]);
			log_info("%s %s: reading '%s' (account '%s')", opt, dir, file, accounts->items[a]);
			push_source(arr, n, alloc, file, accounts->items[a]);
		}
		strlist_release(&names);
		free(sub);
	}
	return rc;
}

int cmd_add_source(struct inventory_source **arr, size_t *n, size_t *alloc, const char *arg, int kube)
{
	const char *opt = kube ? "--from-kube-json" : "--from-aws-json";
	const char *eq = strchr(arg, '=');
	char *label = NULL;
	const char *path = arg;
	if (eq && eq != arg && memchr(arg, '/', (size_t)(eq - arg)) == NULL && access(arg, F_OK) != 0) {
		label = xstrndup(arg, (size_t)(eq - arg));
		path = eq + 1;
	}
	if (!is_dir(path)) {
		push_source(arr, n, alloc, xstrdup(path), label);
		free(label);
		return 0;
	}
	/* A directory: every export in it (*.json, *.yaml, *.yml), in name order, under the same label. Kubernetes
	 * exports without a label are named after their file, as inventory --save names them. */
	struct strlist names = STRLIST_INIT_DUP, accounts = STRLIST_INIT_DUP;
	/* without a label, an AWS directory's account subdirectories are read too, each under its id */
	int rc = read_dir(opt, path, &names, kube || label ? NULL : &accounts);
	for (size_t i = 0; !rc && i < names.n; i++) {
		char *cluster = kube && !label ? saved_cluster_name(names.items[i]) : NULL;
		const char *l = label ? label : cluster;
		char *file = join_path(path, names.items[i]);
		if (l)
			log_info("%s %s: reading '%s' (%s '%s')", opt, path, file, kube ? "cluster" : "account", l);
		else
			log_info("%s %s: reading '%s'", opt, path, file);
		push_source(arr, n, alloc, file, l);
		free(cluster);
	}
	if (!rc)
		rc = add_account_dirs(arr, n, alloc, opt, path, &accounts);
	strlist_release(&names);
	strlist_release(&accounts);
	free(label);
	return rc;
}

int cmd_add_saved(struct inventory_source **aws, size_t *n_aws, size_t *alloc_aws, struct inventory_source **kube,
		  size_t *n_kube, size_t *alloc_kube, const char *dir)
{
	/* The AWS files inventory --save writes; every other export there is a cluster's. */
	static const char *const aws_prefixes[] = {"volumes-", "modifications-", "metrics-", "cloudtrail-",
						   "instances-", NULL};
	struct strlist names = STRLIST_INIT_DUP, accounts = STRLIST_INIT_DUP;
	int rc = read_dir("--from-saved", dir, &names, &accounts);
	for (size_t i = 0; !rc && i < names.n; i++) {
		const char *name = names.items[i];
		size_t stem = export_stem(name);
		int is_aws = (stem == strlen("instance-types") && strncmp(name, "instance-types", stem) == 0) ||
			     (stem == strlen("accounts") && strncmp(name, "accounts", stem) == 0);
		for (int k = 0; !is_aws && aws_prefixes[k]; k++)
			is_aws = strncmp(name, aws_prefixes[k], strlen(aws_prefixes[k])) == 0;
		char *file = join_path(dir, name);
		if (is_aws) {
			log_info("--from-saved %s: reading '%s' as an AWS CLI export", dir, file);
			push_source(aws, n_aws, alloc_aws, file, NULL);
		} else {
			char *cluster = saved_cluster_name(name);
			log_info("--from-saved %s: reading '%s' as a kubectl export of cluster '%s'", dir, file, cluster);
			push_source(kube, n_kube, alloc_kube, file, cluster);
			free(cluster);
		}
	}
	/* several accounts: each one's AWS exports in the subdirectory named by its id */
	if (!rc)
		rc = add_account_dirs(aws, n_aws, alloc_aws, "--from-saved", dir, &accounts);
	strlist_release(&names);
	strlist_release(&accounts);
	return rc;
}

void cmd_free_sources(struct inventory_source *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)s[i].label);
		free((char *)s[i].path);
	}
	free(s);
}
