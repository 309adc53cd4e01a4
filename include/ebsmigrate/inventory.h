/*
 * inventory.h - builds the fleet: reads EC2 and Kubernetes data (exports now, live APIs
 * later) and joins PV <-> volume handle <-> EBS volume <-> PVC <-> pods/nodes/StatefulSets/usage.
 *
 * Ownership: the caller owns the fleet; sources are borrowed.
 */
#ifndef EBSMIGRATE_INVENTORY_H
#define EBSMIGRATE_INVENTORY_H

#include "ebsmigrate/buf.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/progress.h"
#include "ebsmigrate/volume.h"

struct inventory_source {
	const char *path;  /* file, or "-" for stdin */
	const char *label; /* account (AWS) or cluster (Kubernetes); NULL = default */
};

struct inventory_exports {
	const struct inventory_source *aws;
	size_t n_aws;
	const struct inventory_source *kube;
	size_t n_kube;
};

/* Reads every export and joins them into f. Stops at the first bad file with EM_EINPUT (or the
 * read error) and a message naming it. The default cluster name of an unlabelled kube file is
 * its base name without ".json". */
int inventory_load_exports(struct fleet *f, const struct inventory_exports *src, struct buf *err);
/* Joins Kubernetes objects onto the fleet's volumes. PVs naming volumes absent from the fleet
 * become volumes with missing = 1 (size/type/zone from the PV and its StorageClass). The
 * bindings take the bound PVs' and PVCs' strings out of ks instead of copying them: afterwards
 * ks is only fit for kube_set_release. */
void inventory_join(struct fleet *f, struct kube_set *ks, int have_ec2_data);

/* ---- live inventory ---- */

/* Several accounts in one run (docs/accounts.md). Each account is read with credentials from
 * STS AssumeRole of its role ARN, signed with the base credentials (the chain, --profile
 * once), except the base credentials' own account, read with them; or, with profiles, each
 * profile is one account. */
struct inventory_accounts {
	const char *const *ids;             /* --accounts (checked ids) */
	size_t n_ids;
	int organization;                   /* --organization: Organizations ListAccounts */
	const char *const *exclude;         /* --exclude-accounts */
	size_t n_exclude;
	const char *role_arn_template;      /* --role-arn-template, or built from --role-name */
	const char *external_id;            /* --external-id, NULL none */
	const char *session_name;           /* RoleSessionName (already sanitised) */
	int duration_s;                     /* --role-duration; 0 = STS's default */
	const char *const *profiles;        /* --profile given more than once: one account each */
	size_t n_profiles;
};

struct cmd_live_accounts;
struct inventory_live_options {
	const char *profile;                 /* --profile */
	const char *const *regions;          /* --region (repeatable); none = the default region plus
					      * every region the clusters' PVs live in */
	size_t n_regions;
	int no_aws, no_kube, no_metrics, no_usage;
	int no_cloudtrail;                   /* --no-cloudtrail: count EC2's latest modification only
					      * (volumes flagged history-unverified) */
	int64_t lookback_s, period_s;        /* CloudWatch look-back (default 14 d) and period (300 s) */
	const char *kubeconfig;              /* --kubeconfig; NULL = KUBECONFIG or ~/.kube/config */
	const char *const *contexts;         /* --context (repeatable); none = the current context */
	size_t n_contexts;
	int all_contexts;
	const char *save_dir;                /* --save: write the exports replayable by plan */
	int kube_page_size;                  /* list limit; 0 = 500 */
	progress_fn progress;                /* may be NULL: each phase's progress (progress.h) */
	void *progress_ctx;
	const struct inventory_accounts *accounts; /* NULL: the one account of the credentials */
	struct cmd_live_accounts *account_args;    /* the account options as parsed: cmd_live.c's */
	int concurrency;                     /* --concurrency: regions, clusters and independent
					      * calls at a time; 0 = INVENTORY_DEFAULT_CONCURRENCY,
					      * 1 = one after another */
};

#define INVENTORY_DEFAULT_CONCURRENCY 8

struct inventory_live_result {
	char **regions;                      /* regions read */
	size_t n_regions;
	char *account;                       /* from STS GetCallerIdentity, NULL unknown */
	int aws_calls, aws_throttled;
	int aws_read, kube_read;             /* 1 when that side was read */
	char **saved;                        /* files written by save_dir */
	size_t n_saved;
	char *history_error;                 /* the first CloudTrail failure (NULL: none) */
	size_t history_failed_regions;       /* regions whose CloudTrail read failed */
	size_t *warning_notices;             /* indices of the fleet's notices that are warnings: data
					      * the run was asked for and did not get */
	size_t n_warning_notices;
	char *outside_regions_note;          /* --region given: the PVs left out because their volumes
					      * are in other regions, counted per region with the fix
					      * ("4 PVs are in ap-northeast-2, outside --region; add
					      * --region ap-northeast-2 to plan them"); NULL: none */
};

/* Reads the fleet from the live APIs. With o->accounts, every account x region is read at once
 * (--concurrency), f->accounts says what was read; an account whose role cannot be assumed or
 * a region an account cannot read is a warning notice and a "failed" entry there, not an
 * error (fleet_account_coverage tells the caller to exit 3); listing the organization failing
 * is an error. A side that is not configured is skipped: no kubeconfig
 * with a notice, no AWS credential source at all with a warning notice (warning_notices). A
 * configured side that fails is an error naming the context/profile/region and call, or the
 * credential source and its code; so is a run that would read nothing (no credentials and no
 * Kubernetes: "nothing to inventory"). PVs without zone topology that no region read holds
 * are looked up by id in their clusters' node regions; those still missing, PVs in regions not
 * read, and a region answering with no volumes while PVs point into it are warning notices.
 * With o->regions (--region) the regions are the scope: nothing outside them is read (no
 * look-up either), and the PVs whose volumes lie outside them (by their zone, or for a PV
 * without one, by its cluster's nodes when none is in the scope) are left out of the fleet and
 * counted in r->outside_regions_note. */
int inventory_load_live(struct fleet *f, const struct inventory_live_options *o, struct inventory_live_result *r,
			struct buf *err);
/* 1 when the fleet's notice number `notice` is one of r's warnings. */
int inventory_live_notice_is_warning(const struct inventory_live_result *r, size_t notice);
void inventory_live_result_release(struct inventory_live_result *r);

#endif
