/*
 * inventory_live.c - the live inventory: reads EC2 (with CloudWatch usage and CloudTrail
 * history) and Kubernetes through their APIs, regions and clusters fanned out on a bounded
 * pool, several accounts through their own credentials, and --save's exports written as they
 * stream; then hands the result to the join (inventory.c).
 *
 * Entry points: inventory_load_live, inventory_live_notice_is_warning,
 * inventory_live_result_release. Shared with inventory.c through inventory_internal.h.
 *
 * Live reads never go quiet about missing data (issue 12):
 *   - AWS is left out only when the credentials chain finds no source at all, and then as a
 *     warning; a configured source that fails is an error; a run reading nothing is an error.
 *   - A PV without zone topology is looked up by volume id in its cluster's node regions
 *     before it is called volume-not-found; PVs still unfound for want of a region, and a
 *     region answering with no volumes while PVs point into it are warnings
 *     (inventory_live_result.warning_notices), with the fix.
 *   - --region is the scope, as for `aws --region`: only those regions are read (no look-up
 *     elsewhere), and PVs whose volumes lie in other regions are left out of the fleet, counted
 *     in one note per run (inventory_leave_out_of_scope, in inventory.c), never shown as
 *     volume-not-found.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "ebsmigrate/aws_accounts.h"
#include "ebsmigrate/saved_accounts.h"
#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_cloudtrail.h"
#include "ebsmigrate/aws_cloudwatch.h"
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/aws_sts.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_config.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/workpool.h"
#include "ebsmigrate/yamlin.h"
#include "inventory_internal.h"

/* ---- live inventory ---- */

/* The Kubernetes side: every requested context through the API client (kube_client.c). */
static int kube_side(struct fleet *f, struct kube_set *ks, const struct inventory_live_options *o,
		     struct inventory_live_result *r, struct buf *err);

static void add_region(struct inventory_live_result *r, const char *region)
{
	names_add(&r->regions, &r->n_regions, region);
}

static void add_saved(struct inventory_live_result *r, const char *path)
{
	r->saved = xrealloc(r->saved, (r->n_saved + 1) * sizeof *r->saved);
	r->saved[r->n_saved++] = xstrdup(path);
}

int inventory_live_notice_is_warning(const struct inventory_live_result *r, size_t notice)
{
	for (size_t i = 0; i < r->n_warning_notices; i++)
		if (r->warning_notices[i] == notice)
			return 1;
	return 0;
}

void inventory_live_result_release(struct inventory_live_result *r)
{
	names_free(r->regions, r->n_regions);
	for (size_t i = 0; i < r->n_saved; i++)
		free(r->saved[i]);
	free(r->saved);
	free(r->account);
	free(r->warning_notices);
	free(r->history_error);
	free(r->outside_regions_note);
	memset(r, 0, sizeof *r);
}

static int save_file(struct inventory_live_result *r, const char *dir, const char *name, const struct buf *data,
		     struct buf *err)
{
	struct buf path = BUF_INIT;
	buf_addf(&path, "%s/%s", dir, name);
	int rc = em_write_file_atomic(path.s, data->s, data->len, 0644, err);
	if (!rc)
		add_saved(r, path.s);
	buf_release(&path);
	return rc;
}

/* Saves data as the file named by fmt in dir (an export of --save) and empties data for the
 * next one. */
static int save_export(struct inventory_live_result *r, const char *dir, struct buf *data, struct buf *err,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int save_export(struct inventory_live_result *r, const char *dir, struct buf *data, struct buf *err,
		       const char *fmt, ...)
{
	struct buf name = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&name, fmt, ap);
	va_end(ap);
	int rc = save_file(r, dir, name.s, data, err);
	buf_release(&name);
	buf_reset(data);
	return rc;
}

/* An --save export written as its writer streams it (a region's volumes, a cluster's objects:
 * tens of MB each, several at once under the fan-out), never whole in memory: the writer fills
 * b and spills it into the staged file every megabyte; commit renames it into place. */
struct saved_stream {
	struct em_staged st;
	struct buf path;
	struct buf b;
	struct buf_spill spill;
};

static int save_stream_open(struct saved_stream *x, const char *dir, struct buf *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int save_stream_open(struct saved_stream *x, const char *dir, struct buf *err, const char *fmt, ...)
{
	buf_init(&x->path);
	buf_init(&x->b);
	buf_addf(&x->path, "%s/", dir);
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&x->path, fmt, ap);
	va_end(ap);
	x->spill = (struct buf_spill){em_stage_flush, &x->st};
	int rc = em_stage_open(&x->st, x->path.s, 0644, err);
	if (rc) {
		buf_release(&x->path);
		buf_release(&x->b);
	}
	return rc;
}

/* Closes and renames the stream's file into place (recorded in r), or removes it. */
static int save_stream_commit(struct inventory_live_result *r, struct saved_stream *x, struct buf *err)
{
	struct buf tmp = BUF_INIT;
	buf_spill(&x->b, &x->spill, 0);
	int rc = em_stage_close(&x->st, &tmp, err);
	if (!rc)
		rc = em_commit_file(tmp.s, x->path.s, err); /* which removes the file when it fails */
	if (!rc)
		add_saved(r, x->path.s);
	buf_release(&tmp);
	buf_release(&x->path);
	buf_release(&x->b);
	return rc;
}

/* The region's modification history from CloudTrail (one LookupEvents query, EventName=
 * ModifyVolume, the last 24 h plus an hour for clock skew), when the region holds a volume the
 * plan could modify. A refusal or failure is not the run's: the region's volumes are marked
 * HISTORY_UNAVAILABLE (the planner flags them history-unverified) and r keeps the first
 * message, for one warning at the end (aws_side). */
static int read_history(struct aws_client *c, const struct inventory_live_options *o, struct inventory_live_result *r,
			struct fleet *f, const char *region, const char *save_dir, struct buf *err)
{
	size_t candidates = 0;
	for (size_t i = 0; i < f->n; i++)
		candidates += f->vols[i].region && strcmp(f->vols[i].region, region) == 0 && f->vols[i].type == EBS_GP2;
	if (!candidates)
		return 0;
	enum volume_history h = HISTORY_UNAVAILABLE;
	int rc = 0;
	if (!o->no_cloudtrail) {
		struct trail_events ev;
		memset(&ev, 0, sizeof ev);
		struct buf save = BUF_INIT, terr = BUF_INIT;
		time_t now = em_now();
		if (aws_cloudtrail_lookup_modify_volume(c, region, now - 25 * 3600, now, &ev, save_dir ? &save : NULL,
							&terr) == 0) {
			aws_cloudtrail_attach(f, &ev, region);
			h = HISTORY_CLOUDTRAIL;
			if (save_dir) {
				struct buf name = BUF_INIT;
				buf_addf(&name, "cloudtrail-%s.json", region);
				rc = save_file(r, save_dir, name.s, &save, err);
				buf_release(&name);
			}
		} else {
			if (!r->history_error)
				r->history_error = buf_detach(&terr);
			r->history_failed_regions++;
		}
		buf_release(&save);
		buf_release(&terr);
		trail_events_release(&ev);
	}
	for (size_t i = 0; i < f->n; i++)
		if (f->vols[i].region && strcmp(f->vols[i].region, region) == 0)
			f->vols[i].history = h;
	return rc;
}

/* aws_ec2_describe_volumes' page callback as a DescribeVolumes phase; n is the volumes read so
 * far, kept for the phase's end. */
struct volumes_progress_ctx {
	const struct inventory_live_options *o;
	size_t n;
};

static void volumes_progress(void *ctx, const char *region, size_t n)
{
	struct volumes_progress_ctx *x = ctx;
	x->n = n;
	progress_report(x->o->progress, x->o->progress_ctx, PROGRESS_STEP, "DescribeVolumes", region, n, 0);
}

static int live_concurrency(const struct inventory_live_options *o);

/* Reads one region into f: every volume (ids NULL), or only the volumes named in ids, with
 * their modifications, CloudTrail history, instance types, metrics, and the exports when
 * saving. */
static int read_region(struct aws_client *c, const struct inventory_live_options *o, struct inventory_live_result *r,
		       struct fleet *f, const char *region, const char *const *ids, size_t n_ids,
		       struct workpool_gate *metrics_gate, struct buf *err)
{
	struct ec2_mod_list mods;
	memset(&mods, 0, sizeof mods);
	int rc;
	/* --save with several accounts: each account's exports in a subdirectory named by its id
	 * (the same file names as one account's), which the offline readers label with that id */
	struct buf dir = BUF_INIT;
	const char *save_dir = o->save_dir;
	if (save_dir && o->accounts && aws_account_id_valid(r->account)) {
		buf_addf(&dir, "%s/%s", o->save_dir, r->account);
		if ((rc = em_mkdirs(dir.s, 0755, err))) {
			buf_release(&dir);
			return rc;
		}
		save_dir = dir.s;
	}
	if (ids) {
		rc = aws_ec2_describe_volumes_by_id(c, region, ids, n_ids, f, err);
		if (!rc)
			rc = aws_ec2_describe_modifications_by_id(c, region, ids, n_ids, &mods, err);
	} else {
		struct volumes_progress_ctx vp = {o, 0};
		rc = aws_ec2_describe_volumes(c, region, f, r->account, o->progress ? volumes_progress : NULL, &vp,
					      err);
		progress_report(o->progress, o->progress_ctx, PROGRESS_DONE, "DescribeVolumes", region, vp.n, 0);
		if (!rc)
			rc = aws_ec2_describe_modifications(c, region, &mods, err);
	}
	if (!rc)
		aws_ec2_attach_mods(f, &mods);
	ec2_mod_list_release(&mods);
	if (!rc && !o->no_cloudtrail) {
		progress_report(o->progress, o->progress_ctx, PROGRESS_STEP, "CloudTrail", region, 0, 0);
		rc = read_history(c, o, r, f, region, save_dir, err);
		progress_report(o->progress, o->progress_ctx, PROGRESS_DONE, "CloudTrail", region, 0, 0);
	} else if (!rc) {
		rc = read_history(c, o, r, f, region, save_dir, err);
	}
	if (!rc) {
		progress_report(o->progress, o->progress_ctx, PROGRESS_STEP, "DescribeInstances", region, 0, 0);
		rc = aws_ec2_instance_types(c, region, f, live_concurrency(o), err);
		progress_report(o->progress, o->progress_ctx, PROGRESS_DONE, "DescribeInstances", region, 0, 0);
	}
	if (!rc) {
		/* Instance EBS limits only sharpen the plan: a refusal is a notice, not a failure. */
		struct buf lerr = BUF_INIT;
		if (aws_ec2_instance_type_limits(c, region, f, &lerr))
			fleet_add_notice(f, "instance EBS limits unavailable in %s: %s", region, lerr.s);
		buf_release(&lerr);
	}
	struct buf metrics = BUF_INIT;
	struct jsonw mw;
	if (!rc && !o->no_metrics) {
		struct cw_options cw = {em_now(), o->lookback_s, o->period_s, 1, save_dir ? &mw : NULL,
					o->progress, o->progress_ctx, live_concurrency(o), metrics_gate};
		if (save_dir)
			aws_cloudwatch_export_begin(&mw, &metrics);
		rc = aws_cloudwatch_volume_metrics(c, region, f, &cw, err);
		if (!rc && save_dir) {
			aws_cloudwatch_export_end(&mw);
			rc = save_export(r, save_dir, &metrics, err, "metrics-%s.json", region);
		}
	}
	buf_release(&metrics);
	if (!rc && save_dir) {
		struct saved_stream x;
		if (!(rc = save_stream_open(&x, save_dir, err, "volumes-%s.json", region))) {
			aws_ec2_write_volumes_export(&x.b, f, region, &x.spill);
			rc = save_stream_commit(r, &x, err);
		}
		if (!rc && !(rc = save_stream_open(&x, save_dir, err, "modifications-%s.json", region))) {
			aws_ec2_write_modifications_export(&x.b, f, region, &x.spill);
			rc = save_stream_commit(r, &x, err);
		}
		struct buf data = BUF_INIT;
		if (!rc) {
			aws_ec2_write_instances_export(&data, f, region);
			rc = save_export(r, save_dir, &data, err, "instances-%s.json", region);
		}
		buf_release(&data);
	}
	buf_release(&dir);
	return rc;
}

/* A PV whose region cannot be told (no zone topology) and that no region read so far holds. */
static int pv_unplaced(struct fleet *f, const struct kube_pv *pv)
{
	char *region = inventory_pv_region(pv);
	int unplaced = !region && !fleet_find(f, pv->volume_id);
	free(region);
	return unplaced;
}

/* The volume ids of the unplaced PVs (borrowed from ks); *ids is the caller's to free. */
static size_t unplaced_ids(struct fleet *f, const struct kube_set *ks, const char ***ids)
{
	size_t n = 0;
	*ids = NULL;
	for (size_t i = 0; i < ks->n_pvs; i++) {
		if (pv_unplaced(f, &ks->pvs[i])) {
			*ids = xrealloc((void *)*ids, (n + 1) * sizeof **ids);
			(*ids)[n++] = ks->pvs[i].volume_id;
		}
	}
	return n;
}

/* PVs whose region cannot be told (no zone topology, a bare vol-... handle) and that no region
 * read holds are looked up by id in the regions of their clusters' nodes not read yet: a PV
 * is never called volume-not-found for want of looking where its cluster runs. */
static int look_up_unplaced(struct aws_client *c, const struct inventory_live_options *o,
			    struct inventory_live_result *r, struct fleet *f, const struct kube_set *ks, struct buf *err)
{
	const char **ids;
	size_t n = unplaced_ids(f, ks, &ids);
	/* The regions to look in: those of the nodes of clusters with unplaced PVs, not read yet
	 * (a list of clusters, then one pass over the nodes: no scan of the PVs per node). */
	char **clusters = NULL, **where = NULL;
	size_t n_clusters = 0, n_where = 0;
	for (size_t i = 0; i < ks->n_pvs && n; i++)
		if (pv_unplaced(f, &ks->pvs[i]))
			names_add(&clusters, &n_clusters, ks->pvs[i].cluster);
	for (size_t k = 0; k < ks->n_nodes && n; k++) {
		const struct kube_node *node = &ks->nodes[k];
		if (node->region && !has_region(r, node->region) && names_have(clusters, n_clusters, node->cluster))
			names_add(&where, &n_where, node->region);
	}
	int rc = 0;
	for (size_t w = 0; w < n_where && n && !rc; w++) {
		const char *region = where[w];
		size_t before = f->n;
		rc = read_region(c, o, r, f, region, ids, n, NULL, err);
		if (rc)
			break;
		for (size_t i = before; i < f->n && r->account; i++) /* as a full read labels them */
			if (!f->vols[i].account)
				f->vols[i].account = xstrdup(r->account);
		fleet_add_notice(f,
				 "%zu PersistentVolume(s) without zone topology looked up by volume id in %s (where "
				 "their clusters have nodes): %zu found",
				 n, region, f->n - before);
		add_region(r, region);
		free((void *)ids);
		n = unplaced_ids(f, ks, &ids);
	}
	free((void *)ids);
	names_free(clusters, n_clusters);
	names_free(where, n_where);
	return rc;
}

/* ---- fan-out: regions and clusters on a bounded pool (workpool.c) ----
 *
 * Each region (and each cluster) is read by one task into a private fleet and result with its
 * own client (its own curl handle); the caller merges the private results in region (cluster)
 * order, so every output is byte-identical to a read one after another. The AWS workers share
 * the caller's credentials (resolved once before the fan-out, refreshed under a lock) and its
 * token buckets: one bucket per service and region for all threads (rates set below). */

static int live_concurrency(const struct inventory_live_options *o)
{
	int n = o->concurrency > 0 ? o->concurrency : INVENTORY_DEFAULT_CONCURRENCY;
	return n > WORKPOOL_MAX_WORKERS ? WORKPOOL_MAX_WORKERS : n;
}

/* Client-side rate limits per account and region, shared by every thread (docs/aws.md):
 * EC2's non-mutating bucket (100 burst, 20/s refill) and CloudWatch GetMetricData's 50 TPS.
 * A throttling answer slows the key's bucket for all threads (adaptive rate). CloudTrail's
 * 2/s is set by aws_cloudtrail.c. */
#define EC2_RATE_PER_S 20.0
#define EC2_BURST 100.0
#define CLOUDWATCH_RATE_PER_S 50.0
#define CLOUDWATCH_BURST 50.0

static void set_region_rates(struct aws_client *c, char *const *regions, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char key[96];
		aws_client_rate_key(c, key, sizeof key, "ec2", regions[i]);
		http_client_set_rate(&c->http, key, EC2_RATE_PER_S, EC2_BURST);
		aws_client_rate_key(c, key, sizeof key, "monitoring", regions[i]);
		http_client_set_rate(&c->http, key, CLOUDWATCH_RATE_PER_S, CLOUDWATCH_BURST);
	}
	http_client_set_adaptive(&c->http, 1);
}

struct region_job {
	struct fleet f;
	struct inventory_live_result r; /* saved files and CloudTrail failures of this region */
	int rc, calls, throttled;
	struct buf err;
};

/* The regions' results joined so far, in region order (region_merge), while later regions and
 * the clusters are still read; aws_side folds them into the caller's fleet and result. */
/* What one region job reads: a region of an account, with that account's client. */
struct region_target {
	struct aws_client *client;      /* borrowed: the base client or the account's */
	const char *account;            /* the volumes' account label (borrowed; NULL unknown) */
	const char *region;             /* borrowed */
	size_t acct;                    /* index in aws_prep.accts, or SIZE_MAX with one account */
	char *error;                    /* several accounts: why this account-region was not read */
};

struct region_fanout {
	const struct inventory_live_options *o;
	struct region_target *targets;
	int partial_ok;                 /* several accounts: an account-region failing is recorded */
	struct region_job *jobs;
	/* GetMetricData batches in flight in all regions together: --concurrency of them (each holds
	 * its answer page and series, ~5 MB), not --concurrency per region read at once */
	struct workpool_gate metrics_gate;
	struct fleet acc;               /* volumes, instances, limits and notices of regions 0..merged-1 */
	struct inventory_live_result acc_r; /* their saved files and CloudTrail failures */
	size_t merged;                  /* regions joined before the first failure */
	size_t *added;                  /* [i]: volumes region i added */
	size_t *notices_end;            /* [i]: acc.n_notices once region i was joined */
	int calls, throttled;
	int rc;                         /* the first failing region's, in region order */
	struct buf err;
	/* several accounts: volume ids read under two accounts (the first kept), for one warning */
	size_t clashes;
	char *clash_volume, *clash_kept, *clash_other;
};

static void region_job_release(struct region_job *j)
{
	fleet_release(&j->f);
	j->r.account = NULL; /* borrowed */
	inventory_live_result_release(&j->r);
	buf_release(&j->err);
}

static void read_region_job(void *ctx, size_t i)
{
	struct region_fanout *fan = ctx;
	struct region_job *j = &fan->jobs[i];
	fleet_init(&j->f);
	buf_init(&j->err);
	const struct region_target *t = &fan->targets[i];
	j->r.account = (char *)t->account; /* read only; never freed through j */
	struct aws_client w;
	j->rc = aws_client_init_worker(&w, t->client, &j->err);
	if (j->rc)
		return;
	j->rc = read_region(&w, fan->o, &j->r, &j->f, t->region, NULL, 0, &fan->metrics_gate, &j->err);
	/* A read region may wait for the ones before it, and is then moved into their array: its
	 * own array need not keep the slack of doubling meanwhile (100,000 volumes in 3 regions:
	 * 65,536 slots of 288 bytes for each region's ~33,000 volumes, 19 MB each). */
	fleet_trim_volumes(&j->f);
	j->calls = w.calls;
	j->throttled = w.throttled;
	aws_client_release(&w);
}

/* Moves src's volumes (one id in two regions: the first kept), instances and instance limits to
 * the end of f's. */
static void move_volumes(struct fleet *f, struct fleet *src)
{
	fleet_move_volumes(f, src); /* one volume id in two regions: the first kept */
	for (size_t i = 0; i < src->n_instances; i++) {
		XGROW(f->instances, f->n_instances, f->alloc_instances);
		f->instances[f->n_instances++] = src->instances[i];
	}
	src->n_instances = 0;
	for (size_t i = 0; i < src->n_limits; i++)
		if (!fleet_instance_limit(f, src->limits[i].type))
			fleet_set_instance_limit(f, src->limits[i].type, src->limits[i].baseline_iops,
						 src->limits[i].baseline_mbps);
}

/* Moves src's notices to the end of f's. */
static void move_notices(struct fleet *f, struct fleet *src)
{
	for (size_t i = 0; i < src->n_notices; i++) {
		XGROW(f->notices, f->n_notices, f->alloc_notices);
		f->notices[f->n_notices++] = src->notices[i];
	}
	src->n_notices = 0;
}

/* Adds src's saved files and CloudTrail failures to r's (the first failure's message kept). */
static void move_result(struct inventory_live_result *r, struct inventory_live_result *src)
{
	for (size_t i = 0; i < src->n_saved; i++)
		add_saved(r, src->saved[i]);
	if (src->history_error && !r->history_error) {
		r->history_error = src->history_error;
		src->history_error = NULL;
	}
	r->history_failed_regions += src->history_failed_regions;
}

/* Several accounts: j's volumes already read under another account (the same id in two
 * accounts' answers: credentials of one account handed out for another, whatever STS said), for
 * the one warning aws_side gives; the merge keeps the first, as the exports' reader does. */
static void note_account_clashes(struct region_fanout *fan, const struct fleet *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct volume *v = &src->vols[i], *had = fleet_find(&fan->acc, v->volume_id);
		if (!had || !had->account || !v->account || strcmp(had->account, v->account) == 0)
			continue;
		if (!fan->clashes++) {
			fan->clash_volume = xstrdup(v->volume_id);
			fan->clash_kept = xstrdup(had->account);
			fan->clash_other = xstrdup(v->account);
		}
	}
}

/* Moves a region's private result to the end of the caller's (j is left released). */
static void merge_region(struct fleet *f, struct inventory_live_result *r, struct region_job *j)
{
	move_volumes(f, &j->f);
	move_notices(f, &j->f);
	move_result(r, &j->r);
	region_job_release(j);
}

/* Before the fan-out's threads start: glibc gives each thread an arena of its own (up to 8 per
 * core), and memory freed in one is not reused by the others, so ~40 reading threads kept
 * several copies' worth of freed pages (30,000 volumes: 139 MiB peak with trimming alone,
 * 130-133 MiB with this call, 118 MiB with MALLOC_ARENA_MAX=2 set in the environment before
 * start; the threads mostly wait on the network, so sharing costs no time).
 * Process-wide, and set once: every later multi-threaded phase gains the same way. */
static void limit_malloc_arenas(void)
{
#ifdef __GLIBC__
	mallopt(M_ARENA_MAX, 2);
#endif
}

/* A failure on AWS's side (refused, not found, unreachable, throttled, an error answer), not
 * ours (a file that cannot be saved). */
static int remote_failure(int rc)
{
	return rc == EM_EAUTH || rc == EM_ENOTFOUND || rc == EM_ENET || rc == EM_ETHROTTLED || rc == EM_ESERVER;
}

/* workpool_run_ordered's merge: region i joins the others as soon as 0..i are read, and its
 * private result is released; after a failure the later regions are only released (they are
 * still read, as ever, so their --save files are written as before). */
static int region_merge(void *ctx, size_t i)
{
	struct region_fanout *fan = ctx;
	struct region_job *j = &fan->jobs[i];
	fan->calls += j->calls;
	fan->throttled += j->throttled;
	if (!fan->rc && j->rc && fan->partial_ok && remote_failure(j->rc)) {
		/* one account-region the others do not depend on: recorded, the run goes on */
		fan->targets[i].error = xstrdup(j->err.s ? j->err.s : "failed");
		region_job_release(j);
		fan->added[i] = 0;
		fan->notices_end[i] = fan->acc.n_notices;
		fan->merged = i + 1;
		return 0;
	}
	if (fan->rc || j->rc) {
		if (!fan->rc) {
			fan->rc = j->rc;
			buf_adds(&fan->err, j->err.s ? j->err.s : "");
		}
		region_job_release(j);
		return 0;
	}
	size_t before = fan->acc.n;
	if (fan->partial_ok)
		note_account_clashes(fan, &j->f);
	merge_region(&fan->acc, &fan->acc_r, j);
	fan->added[i] = fan->acc.n - before;
	fan->notices_end[i] = fan->acc.n_notices;
	fan->merged = i + 1;
	/* the private copy was freed in its threads' arenas, which keep the pages unless asked */
	em_release_freed_memory();
	return 0;
}

static void region_fanout_release(struct region_fanout *fan)
{
	workpool_gate_release(&fan->metrics_gate);
	fleet_release(&fan->acc);
	inventory_live_result_release(&fan->acc_r);
	free(fan->added);
	free(fan->notices_end);
	buf_release(&fan->err);
	EM_FREE_ALL(fan->clash_volume, fan->clash_kept, fan->clash_other);
}

/* The AWS side up to the region reads: the client, the credentials (resolved once, here, on
 * the calling thread), the rates and the region jobs. With regions given (--region), the region
 * reads start on their own thread (aws_start) while the clusters are read; the merge waits for
 * both, so the order of everything is unchanged. */
/* One account of a multi-account run (o->accounts): its client, and whether credentials came. */
struct live_account {
	char *id, *name, *profile, *role_arn;
	char *skipped;                  /* the organization's status when not ACTIVE: not read */
	struct aws_client own;          /* an assumed-role or profile client (has_own) */
	int has_own;
	struct aws_client *client;      /* own, or the base client (the current account) */
	int rc;                         /* credentials: 0 or the failure, said in err */
	struct buf err;
};

struct aws_prep {
	struct aws_client c;
	int init_rc, get_rc;
	struct buf cerr;
	size_t n_jobs;
	struct region_job *jobs;
	struct region_target *targets;
	struct region_fanout fan;
	int started;   /* the region reads run on `thread` */
	pthread_t thread;
	struct live_account **accts;    /* several accounts: in id order (pointers: the clients never move) */
	size_t n_accts;
	size_t excluded;                /* accounts --exclude-accounts left out */
	char *partition;                /* of the base credentials (their ARN) */
	const struct inventory_live_options *o;
};

static int by_account_id(const void *a, const void *b)
{
	const struct live_account *x = *(struct live_account *const *)a, *y = *(struct live_account *const *)b;
	if (!x->id || !y->id)
		return !x->id - !y->id;
	return strcmp(x->id, y->id);
}

static void live_account_release(struct live_account *a)
{
	free(a->id);
	free(a->name);
	free(a->profile);
	free(a->role_arn);
	free(a->skipped);
	if (a->has_own)
		aws_client_release(&a->own);
	buf_release(&a->err);
	free(a);
}

static struct live_account *add_account(struct aws_prep *p, const char *id)
{
	p->accts = xrealloc(p->accts, (p->n_accts + 1) * sizeof *p->accts);
	struct live_account *a = xcalloc(1, sizeof *a);
	p->accts[p->n_accts++] = a;
	buf_init(&a->err);
	a->id = xstrdup(id);
	return a;
}

static int excluded(const struct inventory_accounts *ac, const char *id)
{
	for (size_t i = 0; id && i < ac->n_exclude; i++)
		if (strcmp(ac->exclude[i], id) == 0)
			return 1;
	return 0;
}

/* Credentials for one account, on a pool thread: the role assumed (and checked to be in the
 * account it was assumed for), or the profile's resolved and its account asked of STS. */
static void account_credentials_job(void *ctx, size_t i)
{
	struct aws_prep *p = ctx;
	struct live_account *a = p->accts[i];
	if (a->skipped || !a->has_own)
		return;
	const struct aws_credentials *cr = NULL;
	a->rc = aws_credentials_provider_get(&a->own.creds, &cr, &a->err);
	if (a->rc)
		return;
	if (a->profile) {
		struct aws_caller_identity id;
		memset(&id, 0, sizeof id);
		struct buf e = BUF_INIT;
		a->rc = aws_sts_get_caller_identity(&id, &a->own.http, NULL, cr, &e);
		if (a->rc)
			em_err(&a->err, a->rc, "%s", e.s);
		else if (!aws_account_id_valid(id.account))
			a->rc = em_err(&a->err, EM_ESERVER, "sts GetCallerIdentity: no account id in the answer");
		else
			a->id = xstrdup(id.account);
		buf_release(&e);
		aws_caller_identity_release(&id);
		if (!a->rc)
			aws_client_set_account(&a->own, a->id);
	} /* an assumed role's account is checked by the provider (expect_account) */
}

/* --accounts and --profile runs: each account's name from Organizations DescribeAccount, asked
 * with the base credentials (--organization has them from ListAccounts). Only the management
 * account or a delegated administrator may ask, so a refusal is not the run's: the accounts keep
 * their ids alone (said with -v), and after a refusal (AccessDenied, no organization) the others
 * are not asked. */
static void name_accounts(struct aws_prep *p)
{
	for (size_t i = 0; i < p->n_accts; i++) {
		struct live_account *a = p->accts[i];
		if (!a->id || a->name)
			continue;
		struct org_account_list l;
		memset(&l, 0, sizeof l);
		struct buf e = BUF_INIT;
		int rc = aws_org_describe_account(&p->c, a->id, &l, &e);
		if (!rc && l.n && l.v[0].name && l.v[0].name[0])
			a->name = xstrdup(l.v[0].name);
		else if (rc)
			log_info("account %s: no name (%s); shown by its id", a->id, e.s);
		int stop = rc && !strstr(e.s ? e.s : "", "AccountNotFoundException");
		org_account_list_release(&l);
		buf_release(&e);
		if (stop) {
			log_info("accounts: names not asked for the other accounts: shown by their ids");
			break;
		}
	}
}

/* The accounts of a multi-account run: who the base credentials are, the list (given, the
 * organization's, or the profiles), minus the excluded ones, each with its client, and
 * credentials for each (on the pool). Errors here are the run's: the base credentials refused,
 * ListAccounts refused. */
static int accounts_prepare(struct aws_prep *p, const struct inventory_live_options *o,
			    struct inventory_live_result *r, const struct aws_credentials *base, struct buf *err)
{
	const struct inventory_accounts *ac = o->accounts;
	int rc = 0;
	if (!ac->n_profiles) {
		struct aws_caller_identity id;
		memset(&id, 0, sizeof id);
		struct buf e = BUF_INIT;
		rc = aws_sts_get_caller_identity(&id, &p->c.http, NULL, base, &e);
		if (rc)
			rc = em_err(err, rc, "base credentials (%s): %s", base->source ? base->source : "aws", e.s);
		buf_release(&e);
		if (!rc && !aws_account_id_valid(id.account))
			rc = em_err(err, EM_ESERVER, "sts GetCallerIdentity: no account id in the answer");
		if (!rc) {
			free(r->account);
			r->account = xstrdup(id.account);
			/* arn:PARTITION:... */
			const char *a = id.arn && strncmp(id.arn, "arn:", 4) == 0 ? id.arn + 4 : NULL;
			const char *colon = a ? strchr(a, ':') : NULL;
			p->partition = colon ? xstrndup(a, (size_t)(colon - a)) : xstrdup("aws");
			aws_client_set_account(&p->c, r->account);
		}
		aws_caller_identity_release(&id);
		if (rc)
			return rc;
	}
	if (ac->organization) {
		struct org_account_list l;
		memset(&l, 0, sizeof l);
		rc = aws_org_list_accounts(&p->c, &l, err);
		for (size_t i = 0; !rc && i < l.n; i++) {
			if (excluded(ac, l.v[i].id)) {
				p->excluded++;
				continue;
			}
			struct live_account *a = add_account(p, l.v[i].id);
			a->name = xstrdup(l.v[i].name);
			if (strcmp(l.v[i].status, "ACTIVE") != 0)
				a->skipped = xstrdup(l.v[i].status);
		}
		org_account_list_release(&l);
		if (rc)
			return rc;
	} else if (ac->n_profiles) {
		for (size_t i = 0; i < ac->n_profiles; i++) {
			struct live_account *a = add_account(p, NULL);
			a->profile = xstrdup(ac->profiles[i]);
			struct aws_client_options co;
			memset(&co, 0, sizeof co);
			co.profile = a->profile;
			a->rc = aws_client_init(&a->own, &co, &a->err);
			if (a->rc)
				continue;
			a->has_own = 1;
			http_client_share_rates(&a->own.http, &p->c.http);
			a->client = &a->own;
		}
	} else {
		for (size_t i = 0; i < ac->n_ids; i++) {
			if (excluded(ac, ac->ids[i]))
				p->excluded++;
			else
				add_account(p, ac->ids[i]);
		}
	}
	for (size_t i = 0; i < p->n_accts && !ac->n_profiles; i++) {
		struct live_account *a = p->accts[i];
		if (a->skipped)
			continue;
		if (strcmp(a->id, r->account) == 0) { /* the base credentials' own account */
			a->client = &p->c;
			continue;
		}
		struct buf arn = BUF_INIT;
		aws_role_arn_expand(&arn, ac->role_arn_template, p->partition, a->id);
		a->role_arn = buf_detach(&arn);
		struct aws_assume_role_params ap = {a->role_arn, ac->session_name, ac->external_id, ac->duration_s};
		a->rc = aws_client_init_assumed(&a->own, &p->c, a->id, &ap, &a->err);
		if (!a->rc) {
			a->has_own = 1;
			a->client = &a->own;
		}
	}
	workpool_run(p->n_accts, live_concurrency(o), account_credentials_job, p);
	/* a profile naming an account another one already reads is left out */
	for (size_t i = 0; i < p->n_accts; i++)
		for (size_t k = 0; k < i && p->accts[i]->id && !p->accts[i]->rc; k++)
			if (p->accts[k]->id && !p->accts[k]->rc && strcmp(p->accts[k]->id, p->accts[i]->id) == 0)
				p->accts[i]->rc = em_err(&p->accts[i]->err, EM_EINPUT, "account %s is already read with profile '%s'",
							p->accts[i]->id, p->accts[k]->profile);
	qsort(p->accts, p->n_accts, sizeof *p->accts, by_account_id);
	if (!ac->organization)
		name_accounts(p);
	if (ac->n_profiles) {
		/* the first profile that answered is "the current account" */
		for (size_t i = 0; i < p->n_accts && !r->account; i++)
			if (!p->accts[i]->rc && p->accts[i]->id)
				r->account = xstrdup(p->accts[i]->id);
	}
	return 0;
}

static void accounts_release(struct aws_prep *p);

static int aws_prepare(struct aws_prep *p, const struct inventory_live_options *o, struct inventory_live_result *r,
		       struct buf *err)
{
	memset(p, 0, sizeof *p);
	buf_init(&p->cerr);
	p->o = o;
	struct aws_client_options co;
	memset(&co, 0, sizeof co);
	co.profile = o->accounts && o->accounts->n_profiles ? o->accounts->profiles[0] : o->profile;
	p->init_rc = aws_client_init(&p->c, &co, err);
	if (p->init_rc)
		return p->init_rc;
	const struct aws_credentials *cr = NULL;
	if (o->accounts && o->accounts->n_profiles) {
		/* every profile is an account of its own: the base client only lends its buckets */
	} else {
		p->get_rc = aws_credentials_provider_get(&p->c.creds, &cr, &p->cerr);
		if (p->get_rc)
			return 0;
		if (cr->account_id)
			r->account = xstrdup(cr->account_id);
	}
	size_t n_targets = r->n_regions;
	if (o->accounts) {
		int rc = accounts_prepare(p, o, r, cr, err);
		if (rc) {
			accounts_release(p); /* no targets yet: only the accounts and the partition */
			buf_release(&p->cerr);
			aws_client_release(&p->c);
			p->init_rc = rc;
			return rc;
		}
		n_targets = 0;
		for (size_t i = 0; i < p->n_accts; i++)
			if (!p->accts[i]->skipped && !p->accts[i]->rc) {
				set_region_rates(p->accts[i]->client, r->regions, r->n_regions);
				n_targets += r->n_regions;
			}
	} else {
		set_region_rates(&p->c, r->regions, r->n_regions);
	}
	http_client_set_adaptive(&p->c.http, 1);
	p->n_jobs = n_targets;
	p->jobs = xcalloc(p->n_jobs ? p->n_jobs : 1, sizeof *p->jobs);
	p->targets = xcalloc(p->n_jobs ? p->n_jobs : 1, sizeof *p->targets);
	if (o->accounts) {
		size_t k = 0;
		for (size_t i = 0; i < p->n_accts; i++) {
			if (p->accts[i]->skipped || p->accts[i]->rc)
				continue;
			for (size_t g = 0; g < r->n_regions; g++)
				p->targets[k++] = (struct region_target){p->accts[i]->client, p->accts[i]->id, r->regions[g], i, NULL};
		}
	} else {
		for (size_t g = 0; g < r->n_regions; g++)
			p->targets[g] = (struct region_target){&p->c, r->account, r->regions[g], SIZE_MAX, NULL};
	}
	p->fan = (struct region_fanout){.o = o, .targets = p->targets, .partial_ok = o->accounts != NULL, .jobs = p->jobs};
	fleet_init(&p->fan.acc);
	workpool_gate_init(&p->fan.metrics_gate, live_concurrency(o));
	buf_init(&p->fan.err);
	p->fan.added = xcalloc(p->n_jobs ? p->n_jobs : 1, sizeof *p->fan.added);
	p->fan.notices_end = xcalloc(p->n_jobs ? p->n_jobs : 1, sizeof *p->fan.notices_end);
	em_umask(); /* cached before any thread saves a file */
	return 0;
}

/* Releases what aws_prepare made for several accounts (after every reader is done). */
static void accounts_release(struct aws_prep *p)
{
	for (size_t i = 0; i < p->n_jobs && p->targets; i++)
		free(p->targets[i].error);
	free(p->targets);
	p->targets = NULL;
	for (size_t i = 0; i < p->n_accts; i++)
		live_account_release(p->accts[i]);
	free(p->accts);
	p->accts = NULL;
	p->n_accts = 0;
	free(p->partition);
	p->partition = NULL;
}

/* The accounts' outcome into f->accounts, and a warning for each account or account-region not
 * read. */
static void accounts_record(struct fleet *f, struct inventory_live_result *r, struct aws_prep *p)
{
	f->current_account = xstrdup(r->account);
	f->accounts = xcalloc(p->n_accts ? p->n_accts : 1, sizeof *f->accounts);
	f->n_accounts = p->n_accts;
	size_t job = 0;
	for (size_t i = 0; i < p->n_accts; i++) {
		struct live_account *a = p->accts[i];
		struct fleet_account *fa = &f->accounts[i];
		fa->id = xstrdup(a->id);
		fa->name = xstrdup(a->name);
		fa->profile = xstrdup(a->profile);
		fa->role_arn = xstrdup(a->role_arn);
		struct buf label = BUF_INIT;
		buf_adds(&label, "account ");
		inventory_account_label(&label, a->id, a->name, a->profile);
		if (a->skipped) {
			fa->status = xstrdup("skipped");
			fa->error = xstrdup(a->skipped);
			fleet_add_notice(f, "%s is %s in the organization: not read", label.s, a->skipped);
		} else if (a->rc) {
			fa->status = xstrdup("failed");
			fa->error = xstrdup(a->err.s ? a->err.s : "no credentials");
			inventory_add_warning(f, r, "%s not read: %s", label.s, fa->error);
		} else {
			size_t failed = 0;
			fa->regions = xcalloc(r->n_regions ? r->n_regions : 1, sizeof *fa->regions);
			fa->n_regions = r->n_regions;
			for (size_t g = 0; g < r->n_regions; g++, job++) {
				struct fleet_account_region *ar = &fa->regions[g];
				const struct region_target *t = &p->targets[job];
				ar->region = xstrdup(t->region);
				/* a region after a run-stopping failure was never merged */
				int merged = job < p->fan.merged;
				if (t->error || !merged) {
					failed++;
					ar->status = xstrdup("failed");
					ar->error = xstrdup(t->error ? t->error : "not read");
					if (t->error)
						inventory_add_warning(f, r, "%s, region %s not read: %s", label.s, t->region, t->error);
				} else {
					ar->status = xstrdup("read");
					ar->volumes = p->fan.added[job];
				}
			}
			fa->status = xstrdup(!failed ? "read" : failed == r->n_regions ? "failed" : "partial");
			if (failed == r->n_regions && r->n_regions)
				fa->error = xstrdup(fa->regions[0].error);
		}
		buf_release(&label);
	}
	if (p->excluded)
		fleet_add_notice(f, "%zu account(s) left out by --exclude-accounts", p->excluded);
	size_t covered, partial, in_scope;
	fleet_account_coverage(f, &covered, &partial, &in_scope);
	log_info("accounts: %zu of %zu read, %zu in part (current account %s)", covered, in_scope, partial,
		 r->account ? r->account : "unknown");
}

static void *aws_reads(void *arg)
{
	struct aws_prep *p = arg;
	workpool_run_ordered(p->n_jobs, live_concurrency(p->fan.o), read_region_job, region_merge, &p->fan);
	return NULL;
}

static void aws_start(struct aws_prep *p)
{
	if (!p->init_rc && !p->get_rc && pthread_create(&p->thread, NULL, aws_reads, p) == 0)
		p->started = 1;
}

/* Waits for the region reads started by aws_start (or runs them now). */
static void aws_finish_reads(struct aws_prep *p)
{
	if (p->started)
		pthread_join(p->thread, NULL);
	else
		aws_reads(p);
	p->started = 0;
}

static void aws_prep_abandon(struct aws_prep *p)
{
	if (p->init_rc)
		return;
	if (!p->get_rc) {
		aws_finish_reads(p);
		for (size_t i = 0; i < p->n_jobs; i++)
			region_job_release(&p->jobs[i]);
		free(p->jobs);
		region_fanout_release(&p->fan);
		accounts_release(p);
	}
	buf_release(&p->cerr);
	aws_client_release(&p->c);
}

static int aws_side(struct fleet *f, const struct inventory_live_options *o, const struct kube_set *ks,
		    struct inventory_live_result *r, struct aws_prep *prep, struct buf *err)
{
	struct aws_prep local;
	int rc = 0;
	if (!prep) {
		prep = &local;
		if ((rc = aws_prepare(prep, o, r, err)) != 0)
			return rc;
	}
	if (prep->get_rc) {
		struct aws_client c = prep->c; /* no thread uses it: nothing was started */
		struct buf cerr = prep->cerr;
		/* Only a chain with no source at all may leave AWS out; a source that is configured
		 * and fails (a refused token, a 401, a malformed answer) stops the run. */
		if (o->profile)
			rc = em_err(err, EM_EAUTH, "aws credentials: profile '%s': %s", o->profile, cerr.s);
		else if (!aws_credentials_provider_found_no_source(&c.creds))
			rc = em_err(err, EM_EAUTH, "aws credentials: %s", cerr.s);
		else if (!r->kube_read)
			rc = em_err(err, EM_EAUTH, "nothing to inventory: %s, and Kubernetes was not read (%s)", cerr.s,
				    o->no_kube ? "--no-kube" : "no kubeconfig");
		else
			inventory_add_warning(f, r,
					      "%s: EBS volumes were not read; the clusters' volumes are listed from Kubernetes "
					      "only and cannot be priced or checked",
					      cerr.s);
		buf_release(&cerr);
		aws_client_release(&c);
		return rc;
	}
	buf_release(&prep->cerr);
	aws_finish_reads(prep);
	/* The workers held pointers to prep->c; they are done, so c may take its place now. */
	struct aws_client c = prep->c;
	struct region_fanout *fan = &prep->fan;
	c.calls += fan->calls;
	c.throttled += fan->throttled;
	if (fan->rc) {
		rc = fan->rc;
		buf_adds(err, fan->err.s ? fan->err.s : "");
	}
	/* The regions were joined in region order as they came in; what remains is to put them
	 * after the clusters' part, as a sequential read would: the volumes (the fleet holds none
	 * yet, so the arrays change hands instead of being copied), then each region's notices,
	 * each followed by its warning. */
	if (!f->n && !f->n_instances && !f->n_limits) {
		struct fleet t = *f;
		f->vols = fan->acc.vols, f->n = fan->acc.n, f->alloc = fan->acc.alloc, f->index = fan->acc.index;
		f->instances = fan->acc.instances, f->n_instances = fan->acc.n_instances;
		f->alloc_instances = fan->acc.alloc_instances;
		f->limits = fan->acc.limits, f->n_limits = fan->acc.n_limits, f->alloc_limits = fan->acc.alloc_limits;
		fan->acc.vols = t.vols, fan->acc.n = t.n, fan->acc.alloc = t.alloc, fan->acc.index = t.index;
		fan->acc.instances = t.instances, fan->acc.n_instances = t.n_instances;
		fan->acc.alloc_instances = t.alloc_instances;
		fan->acc.limits = t.limits, fan->acc.n_limits = t.n_limits, fan->acc.alloc_limits = t.alloc_limits;
	} else {
		move_volumes(f, &fan->acc);
	}
	size_t from = 0;
	for (size_t i = 0; i < fan->merged; i++) {
		for (; from < fan->notices_end[i]; from++) {
			XGROW(f->notices, f->n_notices, f->alloc_notices);
			f->notices[f->n_notices++] = fan->acc.notices[from];
			fan->acc.notices[from] = NULL;
		}
		const char *region = fan->targets[i].region;
		size_t pvs_here = 0; /* an empty answer is suspicious only when PVs point into the region */
		int empty = !fan->added[i];
		/* several accounts: said once per region (at its first read), when no account had a
		 * volume there */
		for (size_t k = 0; o->accounts && k < fan->merged && empty; k++)
			if (strcmp(fan->targets[k].region, region) == 0)
				empty = k < i ? 0 : !fan->added[k];
		if (empty && !fan->targets[i].error) {
			for (size_t k = 0; k < ks->n_pvs; k++) {
				char *pr = inventory_pv_region(&ks->pvs[k]);
				pvs_here += pr && strcmp(pr, region) == 0;
				free(pr);
			}
		}
		if (pvs_here)
			inventory_add_warning(f, r,
					      "region %s answered with no EBS volumes while %zu PersistentVolume(s) point into it: "
					      "check that the AWS credentials are the clusters' account's and that no "
					      "AWS_ENDPOINT_URL sends EC2 elsewhere",
					      region, pvs_here);
	}
	move_result(r, &fan->acc_r);
	if (fan->clashes) {
		struct buf more = BUF_INIT;
		if (fan->clashes > 1)
			buf_addf(&more, " (and %zu more volumes)", fan->clashes - 1);
		inventory_add_warning(f, r,
				      "volume '%s' was read in account %s and again in account %s%s: kept under %s, the first; "
				      "one account's credentials reach the other's volumes (check the roles' trust policies "
				      "and the STS endpoint)",
				      fan->clash_volume, fan->clash_kept, fan->clash_other, more.s, fan->clash_kept);
		buf_release(&more);
	}
	if (o->accounts) {
		size_t first_notice = f->n_notices;
		accounts_record(f, r, prep);
		if (o->save_dir) { /* the coverage, for the offline readers (saved_accounts.h) */
			struct buf doc = BUF_INIT;
			saved_accounts_write(&doc, f, first_notice);
			if (!rc)
				rc = save_file(r, o->save_dir, "accounts.json", &doc, err);
			buf_release(&doc);
		}
	}
	region_fanout_release(fan);
	accounts_release(prep);
	free(prep->jobs);
	if (!rc && !o->n_regions) /* with --region, nothing outside it is read (leave_out_of_scope) */
		rc = look_up_unplaced(&c, o, r, f, ks, err);
	if (!rc && r->history_error) /* one warning for the run, not one per volume or region */
		inventory_add_warning(f, r,
				      "CloudTrail history unavailable in %zu region(s) (%s): modifications made outside "
				      "ebsmigrate in the last 24 h cannot be counted, so volumes that may be modified are "
				      "flagged history-unverified (their eligibility rests on EC2's latest modification alone; "
				      "see docs/plan.md); grant cloudtrail:LookupEvents (ebsmigrate iam-policy) or pass "
				      "--no-cloudtrail to accept this",
				      r->history_failed_regions, r->history_error);
	else if (!rc && o->no_cloudtrail)
		fleet_add_notice(f, "--no-cloudtrail: modifications made outside ebsmigrate are not counted; volumes "
				    "that may be modified are flagged history-unverified");
	if (!rc && o->save_dir && f->n_limits) {
		struct buf data = BUF_INIT;
		aws_ec2_write_instance_types_export(&data, f);
		rc = save_file(r, o->save_dir, "instance-types.json", &data, err);
		buf_release(&data);
	}
	r->aws_calls = c.calls;
	r->aws_throttled = c.throttled;
	/* -v: the totals; throttling answers were retried (and slowed the shared buckets), never shown */
	log_info("aws: %d calls answered, %d throttling answers retried", c.calls, c.throttled);
	r->aws_read = !rc;
	aws_client_release(&c);
	return rc;
}

int inventory_load_live(struct fleet *f, const struct inventory_live_options *o, struct inventory_live_result *r,
			struct buf *err)
{
	memset(r, 0, sizeof *r);
	int rc = 0;
	jsonx_threads_init(); /* before the fan-out's threads use cJSON */
	if (live_concurrency(o) > 1)
		limit_malloc_arenas();
	if (o->save_dir && (rc = em_mkdirs(o->save_dir, 0755, err)))
		return rc;
	struct kube_set ks;
	kube_set_init(&ks);
	/* With the regions given, they are read while the clusters are (nothing about them waits
	 * for Kubernetes); their results are merged after it, in the same order as ever. */
	struct aws_prep prep;
	int prefetch = o->n_regions && !o->no_aws && !o->no_kube && live_concurrency(o) > 1;
	if (prefetch) {
		for (size_t i = 0; i < o->n_regions; i++)
			add_region(r, o->regions[i]);
		if ((rc = aws_prepare(&prep, o, r, err)) != 0)
			return rc;
		aws_start(&prep);
	}
	if (!o->no_kube)
		rc = kube_side(f, &ks, o, r, err);
	if (rc) {
		if (prefetch)
			aws_prep_abandon(&prep);
		kube_set_release(&ks);
		return rc;
	}
	if (o->no_aws && !r->kube_read) {
		kube_set_release(&ks);
		return em_err(err, EM_ENOTFOUND, "nothing to inventory: no kubeconfig found, and AWS was not read (--no-aws)");
	}
	for (size_t i = 0; i < o->n_regions; i++)
		add_region(r, o->regions[i]);
	if (!o->n_regions && !o->no_aws) {
		char *def = NULL;
		struct buf rerr = BUF_INIT;
		if (aws_region_resolve(&def, NULL, o->profile, &rerr) == 0) {
			add_region(r, def);
			free(def);
		}
		buf_release(&rerr);
		/* ... and every region the clusters' EBS PVs live in. */
		for (size_t i = 0; i < ks.n_pvs; i++) {
			char *region = inventory_pv_region(&ks.pvs[i]);
			if (region)
				add_region(r, region);
			free(region);
		}
		if (!r->n_regions) {
			kube_set_release(&ks);
			return em_err(err, EM_EINPUT, "no AWS region: give --region, or set AWS_REGION or a profile region");
		}
	}
	if (!o->no_aws)
		rc = aws_side(f, o, &ks, r, prefetch ? &prep : NULL, err);
	unsigned char *outside = !rc && o->n_regions ? inventory_leave_out_of_scope(o, r, f, &ks) : NULL;
	if (!rc && r->aws_read)
		inventory_report_missing(f, r, &ks, outside);
	if (!rc && (ks.n_pvs || ks.n_pvcs))
		inventory_join_live(f, &ks, r->aws_read, !r->aws_read, r, outside);
	free(outside);
	kube_set_release(&ks);
	/* What the join left of the Kubernetes objects (~85 MB of small blocks at 100,000
	 * volumes) was freed just now: its pages go back before the caller builds the document
	 * and its record, which otherwise came on top of them (the run's peak RSS). */
	em_release_freed_memory();
	return rc;
}

/* One cluster read on its own thread into a private set and fleet (merged in cluster order). */
struct cluster_job {
	struct kube_set ks;
	struct fleet f;
	struct inventory_live_result r; /* saved files */
	int rc;
	struct buf err;
};

struct cluster_fanout {
	const struct inventory_live_options *o;
	struct kube_target *targets;
	struct cluster_job *jobs;
	/* where cluster_merge joins them, in cluster order */
	struct kube_set *ks;
	struct fleet *f;
	struct inventory_live_result *r;
	int rc; /* the first failing cluster's, in cluster order */
	struct buf *err;
};

static void cluster_job_release(struct cluster_job *j)
{
	kube_set_release(&j->ks);
	fleet_release(&j->f);
	inventory_live_result_release(&j->r);
	buf_release(&j->err);
}

static int read_cluster(const struct inventory_live_options *o, struct kube_target *t, struct kube_set *ks,
			struct fleet *f, struct inventory_live_result *r, struct buf *err)
{
	/* insecure-skip-tls-verify and http:// are warned about (or refused) by kube_client_init */
	struct kube_client kc;
	struct kube_client_options ko;
	memset(&ko, 0, sizeof ko);
	ko.list_limit = o->kube_page_size;
	const char *cluster = t->context ? t->context : t->cluster_name;
	unsigned what = KUBE_INV_ALL | (o->no_usage ? 0 : KUBE_INV_USAGE);
	ko.progress = o->progress;
	ko.progress_ctx = o->progress_ctx;
	ko.concurrency = live_concurrency(o); /* the kinds, and the nodes' stats, at once */
	int rc = kube_client_init(&kc, t, &ko, err);
	if (rc)
		return rc;
	rc = kube_inventory_load(&kc, cluster, ks, f, what, err);
	kube_client_release(&kc);
	if (!rc && o->save_dir) {
		struct saved_stream x;
		if (!(rc = save_stream_open(&x, o->save_dir, err, "%s.json", cluster))) {
			kube_objects_write_export(&x.b, ks, f, cluster, &x.spill);
			rc = save_stream_commit(r, &x, err);
		}
		struct buf data = BUF_INIT;
		if (!rc && ks->n_usage) {
			kube_objects_write_summary(&data, ks, cluster);
			rc = save_export(r, o->save_dir, &data, err, "%s.stats-summary.json", cluster);
		}
		if (!rc) {
			kube_objects_write_version(&data, f, cluster);
			if (data.len)
				rc = save_export(r, o->save_dir, &data, err, "%s.version.json", cluster);
		}
		buf_release(&data);
	}
	return rc;
}

static void read_cluster_job(void *ctx, size_t i)
{
	struct cluster_fanout *fan = ctx;
	struct cluster_job *j = &fan->jobs[i];
	kube_set_init(&j->ks);
	fleet_init(&j->f);
	buf_init(&j->err);
	j->rc = read_cluster(fan->o, &fan->targets[i], &j->ks, &j->f, &j->r, &j->err);
}

/* workpool_run_ordered's merge: cluster i joins the caller's set and fleet as soon as 0..i are
 * read, and its private copy is released; after a failure the later clusters are only
 * released (still read, as ever). */
static int cluster_merge(void *ctx, size_t i)
{
	struct cluster_fanout *fan = ctx;
	struct cluster_job *j = &fan->jobs[i];
	if (!fan->rc && j->rc) {
		fan->rc = j->rc;
		buf_adds(fan->err, j->err.s ? j->err.s : "");
	}
	if (!fan->rc) {
		kube_set_move(fan->ks, &j->ks);
		kube_fleet_move(fan->f, &j->f);
		for (size_t k = 0; k < j->r.n_saved; k++)
			add_saved(fan->r, j->r.saved[k]);
	}
	cluster_job_release(j);
	em_release_freed_memory(); /* as for a region: freed in a worker's arena */
	return 0;
}

static int kube_side(struct fleet *f, struct kube_set *ks, const struct inventory_live_options *o,
		     struct inventory_live_result *r, struct buf *err)
{
	struct kube_target *targets = NULL;
	size_t n_targets = 0;
	int rc = 0;
	size_t n_ctx = o->n_contexts ? o->n_contexts : 1;
	for (size_t c = 0; c < n_ctx && !rc; c++) {
		struct kube_selection sel;
		memset(&sel, 0, sizeof sel);
		sel.kubeconfig = o->kubeconfig;
		sel.context = o->n_contexts ? o->contexts[c] : NULL;
		sel.all_contexts = o->all_contexts;
		struct kube_target *t = NULL;
		size_t n = 0;
		struct buf kerr = BUF_INIT;
		rc = kube_targets_load(&t, &n, &sel, &kerr);
		if (rc == EM_ENOTFOUND && !o->kubeconfig && !o->n_contexts && !o->all_contexts) {
			/* No kubeconfig at all: AWS only, one notice (either side may be absent). */
			fleet_add_notice(f, "no kubeconfig found (%s): Kubernetes was not read; every volume is not-kubernetes",
					 kerr.s);
			buf_release(&kerr);
			return 0;
		}
		if (rc) {
			em_err(err, rc, "%s", kerr.s);
			buf_release(&kerr);
			break;
		}
		buf_release(&kerr);
		targets = xrealloc(targets, (n_targets + n) * sizeof *targets);
		memcpy(targets + n_targets, t, n * sizeof *t);
		n_targets += n;
		free(t); /* the targets' contents moved into `targets` */
	}
	size_t n_jobs = rc ? 0 : n_targets;
	struct cluster_job *jobs = xcalloc(n_jobs ? n_jobs : 1, sizeof *jobs);
	struct cluster_fanout fan = {o, targets, jobs, ks, f, r, 0, err};
	em_umask(); /* cached before any thread saves a file */
	workpool_run_ordered(n_jobs, live_concurrency(o), read_cluster_job, cluster_merge, &fan);
	if (!rc)
		rc = fan.rc;
	free(jobs);
	if (!rc)
		r->kube_read = 1;
	kube_targets_free(targets, n_targets);
	return rc;
}
