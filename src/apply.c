/*
 * apply.c - applies a recorded plan in batches without ever breaking EBS's rules or losing a
 * record.
 *
 * Entry points: apply_run (the caller holds the database's apply lock, ledger_apply_lock);
 * apply_plan_in_progress and apply_plan_unsent, the plan being applied and its volumes without a
 * ledger row yet, which status and metrics count as planned. The reconciliation of unfinished
 * rows (invariant 2, and apply_reconcile, which `status` also runs) is apply_reconcile.c's; what
 * the two files share (outcomes, progress lines, the fresh EC2 read) is apply_internal.h.
 *
 * State diagram of one volume (ledger row, ledger_apply.h):
 *
 *      (none) ──select──▶ planned ──ledger commit──▶ submitted ──ModifyVolume ok──▶ modifying
 *                            ▲                          │  │                          │
 *                            │ not received, or refused │  │ no answer: stays          ▼
 *                            └──────────────────────────┘  │ submitted, reconciled   optimizing
 *                              for the principal (stop)    │ on the next run            │
 *            deferred ◀── rule says later (in flight,      │                            ▼
 *              (eligible_at)  4 per 24 h, RateExceeded) ◀──┘                        completed
 *                 │  ▲ the CSI driver's refusal (RateExceeded on the PVC), observed
 *                 │  └──────────────── submitted (Kubernetes routes)
 *                 └── the driver's retry accepted ──▶ modifying
 *                                                          └── refused ──▶ failed
 *
 * One volume goes decide (the volume re-read: skip, defer, fail or go) -> record (the ledger row
 * committed) -> send (ModifyVolume or the PVC patch, its answer recorded): decide, record_intent,
 * send_modify / submit_kube. Invariants 1 and 4's "one in flight" are assert()ed at the send.
 *
 * Invariants:
 *   1. A row reaches `submitted` (committed) before ModifyVolume is sent; ModifyVolume is sent
 *      exactly once per submitted row (one HTTP attempt: a lost answer is never resent).
 *   2. Every run first reconciles rows left in submitted/modifying/optimizing with
 *      DescribeVolumesModifications: a submitted row whose modification EC2 knows moves on; one
 *      EC2 never received goes back to planned. So a kill -9 at any point and a rerun send no
 *      duplicate and lose no record; the rerun also records 'interrupted' as the outcome of a run
 *      that ended without one (under the lock, no earlier run can still be at work).
 *   3. Before every call the volume is re-read: deleted, resized, retyped or modified elsewhere
 *      -> skipped (never forced); a modification in flight or 4 in the rolling 24 h (ledger
 *      starts + EC2's latest + CloudTrail's ModifyVolume events from any principal, each
 *      modification once: planner rule R6; CloudTrail read once per region and run) -> deferred
 *      with eligible_at; the target is gp3 within the gp3
 *      limits for the size EC2 reports (plan_doc_parse already refused any plan, file or
 *      recorded, that holds another; this is the last check before sending).
 *   4. At most max_in_flight modifications in flight per region (and per cluster); at most
 *      --batch modifications attempted per run, whatever their answers.
 *   5. A refusal about the principal rather than the volume (authorization, credentials, KMS,
 *      throttling; Kubernetes 401/403) stops the run at the first one: the row stays planned
 *      (retryable), the untried rows are not touched, and the error names what to grant.
 *   7. Several accounts (o->aws_for): a volume is read, checked and modified only with the client
 *      of its own account (the plan's/ledger's account); CloudTrail history is cached per
 *      account-region; a volume whose account has no client stops the run like a refusal.
 *   6. VolumeModificationRateExceeded defers the row until the time modify_refusal.h gives (AWS's,
 *      else from the history known), on every route: on the Kubernetes routes the driver's
 *      refusal (PVC condition, sidecar event) moves a submitted row to deferred (never reported
 *      submitted), and such a row (awaits_driver) is reconciled like one in flight while the
 *      driver retries by itself, moving on when EC2 accepts; nothing is sent for it meanwhile.
 *   7. SIGTERM/SIGINT (stop.h; cmd_apply turns HTTP aborts off): the volume in hand goes through
 *      decide -> record -> send -> answer recorded as usual; the loop stops before the next one,
 *      the settle and --wait loops stop, and the run ends 'interrupted'. A signal can therefore
 *      never leave a row submitted without its ModifyVolume attempt, beyond what invariant 2
 *      already covers for kill -9.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/apply.h"
#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_cloudtrail.h"
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ebs.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_pvc.h"
#include "ebsmigrate/ledger_apply.h"
#include "ebsmigrate/modify_refusal.h"
#include "ebsmigrate/plan_file.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/scope.h"
#include "ebsmigrate/stop.h"
#include "ebsmigrate/strmap.h"
#include "apply_internal.h"

const char *apply_outcome_name(enum apply_outcome_kind k)
{
	static const char *const names[] = {"submitted", "would-submit", "deferred", "skipped",
					    "failed", "unknown", "completed", "reconciled"};
	return names[k];
}

static void outcome_release(void *p)
{
	struct apply_outcome *o = p;
	EM_FREE_ALL(o->volume_id, o->detail);
}

void apply_result_release(struct apply_result *r)
{
	EM_RELEASE_ARRAY(r->v, r->n, outcome_release);
	EM_FREE_ALL(r->history_warning, r->accounts_warning);
	memset(r, 0, sizeof *r);
}

/* ---- the vac route (clients and PVC reads: kube_pvc.h) ---- */

/* Whether the volume-modifier-for-k8s sidecar runs beside the EBS CSI controller: a Deployment
 * labelled app.kubernetes.io/name=aws-ebs-csi-driver (Helm chart and EKS add-on) with the
 * "volumemodifier" container or its image. Read once per cluster; -1 (sidecar_note says why) when
 * the Deployments cannot be read. */
static int kube_conn_sidecar(struct kube_conn *c)
{
	if (c->sidecar_read)
		return c->sidecar;
	c->sidecar_read = 1;
	c->sidecar = -1;
	if (!c->ok) {
		c->sidecar_note = xstrdup(c->error ? c->error : "no Kubernetes client");
		return c->sidecar;
	}
	struct buf body = BUF_INIT, err = BUF_INIT;
	if (kube_get(&c->kc, "/apis/apps/v1/deployments", "labelSelector=app.kubernetes.io%2Fname%3Daws-ebs-csi-driver",
		     &body, NULL, &err)) {
		c->sidecar_note = xstrdup(err.s);
	} else {
		cJSON *j = cJSON_ParseWithLength(body.s, body.len);
		const cJSON *d, *ctr;
		c->sidecar = j ? 0 : -1;
		cJSON_ArrayForEach(d, jsonx_get(j, "items"))
		{
			cJSON_ArrayForEach(ctr, jsonx_path(d, "spec.template.spec.containers"))
			{
				const char *name = jsonx_str(ctr, "name"), *image = jsonx_str(ctr, "image");
				if ((name && strcmp(name, "volumemodifier") == 0) ||
				    (image && strstr(image, "volume-modifier-for-k8s")))
					c->sidecar = 1;
			}
		}
		if (!j)
			c->sidecar_note = xstrdup("the Deployments list is not JSON");
		cJSON_Delete(j);
	}
	buf_release(&body);
	buf_release(&err);
	return c->sidecar;
}

/* The VolumeAttributesClass apply creates: labelled as ebsmigrate's, parameters as strings. */
static void vac_object(struct buf *b, const char *version, const char *name, enum ebs_type t, const char *iops,
		       const char *tput)
{
	char api[64];
	snprintf(api, sizeof api, "storage.k8s.io/%s", version);
	struct jsonw w;
	jsonw_init(&w, b, JSONW_COMPACT);
	jsonw_object(&w);
	const struct jsonw_str_member head[] = {{"apiVersion", api}, {"kind", "VolumeAttributesClass"}};
	jsonw_members_str(&w, head, JSONW_COUNT(head));
	jsonw_key_object(&w, "metadata");
	jsonw_key_str(&w, "name", name);
	jsonw_key_object(&w, "labels");
	jsonw_key_str(&w, "app.kubernetes.io/managed-by", "ebsmigrate");
	jsonw_end_n(&w, 2);
	jsonw_key_str(&w, "driverName", "ebs.csi.aws.com");
	jsonw_key_object(&w, "parameters");
	const struct jsonw_str_member params[] = {{"type", ebs_type_name(t)}, {"iops", iops}, {"throughput", tput}};
	jsonw_members_str(&w, params, JSONW_COUNT(params));
	jsonw_end_n(&w, 2);
}

/* Creates the class unless it exists; an existing class with other parameters is an error
 * (VAC parameters are immutable: never overwritten). */
static int ensure_vac(struct kube_conn *c, const char *name, enum ebs_type t, int64_t iops, int64_t tput, int dry_run,
		      struct buf *err)
{
	struct buf path = BUF_INIT, body = BUF_INIT;
	kube_pathf(&path, "/apis/storage.k8s.io/%s/volumeattributesclasses/%s", c->vac_version, name);
	long status = 0;
	struct buf gerr = BUF_INIT;
	int rc = kube_get(&c->kc, path.s, NULL, &body, &status, &gerr);
	char want_iops[32], want_tput[32];
	snprintf(want_iops, sizeof want_iops, "%lld", (long long)iops);
	snprintf(want_tput, sizeof want_tput, "%lld", (long long)tput);
	if (rc == 0) {
		cJSON *j = cJSON_ParseWithLength(body.s, body.len);
		const cJSON *p = jsonx_get(j, "parameters");
		const char *d = jsonx_str(j, "driverName"), *pt = jsonx_str(p, "type"), *pi = jsonx_str(p, "iops"),
			   *pp = jsonx_str(p, "throughput");
		int same = d && strcmp(d, "ebs.csi.aws.com") == 0 && pt && strcmp(pt, ebs_type_name(t)) == 0 && pi &&
			   strcmp(pi, want_iops) == 0 && pp && strcmp(pp, want_tput) == 0;
		cJSON_Delete(j);
		if (!same)
			rc = em_err(err, EM_ECONFLICT,
				    "cluster '%s': VolumeAttributesClass '%s' exists with other parameters; it is never "
				    "overwritten (parameters are immutable): delete or rename it",
				    c->cluster, name);
	} else if (rc == EM_ENOTFOUND && !dry_run) {
		struct buf obj = BUF_INIT, out = BUF_INIT, coll = BUF_INIT;
		vac_object(&obj, c->vac_version, name, t, want_iops, want_tput);
		kube_pathf(&coll, "/apis/storage.k8s.io/%s/volumeattributesclasses", c->vac_version);
		rc = kube_create(&c->kc, coll.s, obj.s, &out, err);
		if (rc == EM_ECONFLICT) /* created meanwhile: check it once more */
			rc = ensure_vac(c, name, t, iops, tput, dry_run, err);
		buf_release(&obj);
		buf_release(&out);
		buf_release(&coll);
	} else if (rc == EM_ENOTFOUND) {
		rc = 0; /* dry run: it would be created */
	} else {
		em_err(err, rc, "%s", gerr.s);
	}
	buf_release(&gerr);
	buf_release(&path);
	buf_release(&body);
	return rc;
}

/* ---- the plan's items ---- */

struct item {
	char *volume_id, *region, *account, *cluster, *namespace_, *pvc, *driver;
	int64_t size, iops, throughput;
	enum ebs_type type, target_type;
	int64_t target_iops, target_throughput;
	micro_t current, target, savings;
	time_t create_order; /* position in the plan, for --order oldest fallback */
	int in_tree, risk;
};

static void items_free_one(struct item *it)
{
	free(it->volume_id), free(it->region), free(it->account), free(it->cluster);
	free(it->namespace_), free(it->pvc), free(it->driver);
}

static void items_free(struct item *it, size_t n)
{
	for (size_t i = 0; i < n; i++)
		items_free_one(&it[i]);
	free(it);
}

static int in_list(const char *s, const char *const *list, size_t n)
{
	if (!n)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (s && strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

static char *take(char **s)
{
	char *v = *s;
	*s = NULL;
	return v;
}

/* The plan's migrate/blocked volumes that pass the filters. The document is read by
 * plan_doc_parse, the same reader `apply --plan FILE` uses: every target is a valid gp3
 * configuration for its volume's size, or the whole plan is refused (EM_EINPUT). */
static int load_items(int64_t plan_id, const char *json, const struct apply_options *o, struct item **out,
		      size_t *n_out, struct buf *err)
{
	char origin[48];
	snprintf(origin, sizeof origin, "recorded plan %lld", (long long)plan_id);
	struct plan_doc doc;
	int rc = plan_doc_parse(&doc, origin, json, strlen(json), err);
	if (rc)
		return rc;
	struct item *items = NULL;
	size_t n = 0, alloc = 0;
	for (size_t i = 0; i < doc.n; i++) {
		struct plan_entry *e = &doc.v[i];
		if (!in_list(e->volume_id, o->volumes, o->n_volumes) || !in_list(e->namespace_, o->namespaces, o->n_namespaces) ||
		    !in_list(e->cluster, o->clusters, o->n_clusters))
			continue;
		XGROW(items, n, alloc);
		struct item *it = &items[n++];
		memset(it, 0, sizeof *it);
		it->volume_id = take(&e->volume_id);
		it->region = take(&e->region);
		it->account = take(&e->account);
		it->cluster = take(&e->cluster);
		it->namespace_ = take(&e->namespace_);
		it->pvc = take(&e->pvc);
		it->driver = take(&e->driver);
		it->in_tree = it->driver && strcmp(it->driver, "kubernetes.io/aws-ebs") == 0;
		it->type = e->type;
		it->size = e->size_gib;
		it->iops = e->iops;
		it->throughput = e->throughput;
		it->target_type = EBS_GP3; /* plan_doc_parse admits no other */
		it->target_iops = e->target_iops;
		it->target_throughput = e->target_throughput;
		it->current = e->current_monthly;
		it->target = e->target_monthly;
		it->savings = e->savings_monthly;
		it->create_order = (time_t)e->index + 1;
		/* risk: bigger and busier volumes last (provisioned IOPS, StatefulSet data) */
		it->risk = (int)(it->size / 100) + (it->target_iops > GP3_BASE_IOPS ? 100 : 0);
	}
	plan_doc_release(&doc);
	*out = items;
	*n_out = n;
	return 0;
}

int apply_plan_in_progress(struct ledger *l, int64_t plan_id, int64_t *out, struct buf *err)
{
	*out = plan_id;
	if (plan_id > 0)
		return 0;
	struct apply_run run;
	int rc = ledger_apply_run_latest(l, &run, err);
	if (rc == EM_ENOTFOUND) {
		buf_reset(err);
		return 0;
	}
	if (!rc)
		*out = run.plan_id;
	apply_run_release(&run);
	return rc;
}

/* A new ledger row for it, planned, with the plan's names, target and figures and method m. */
static void row_planned(struct apply_row *row, int64_t plan_id, const struct item *it, enum modify_method m)
{
	memset(row, 0, sizeof *row);
	row->plan_id = plan_id;
	row->volume_id = xstrdup(it->volume_id);
	row->account = xstrdup(it->account);
	row->region = xstrdup(it->region);
	row->cluster = xstrdup(it->cluster);
	row->namespace_ = xstrdup(it->namespace_);
	row->pvc = xstrdup(it->pvc);
	row->method = m;
	row->state = APPLY_PLANNED;
	row->target_type = xstrdup(ebs_type_name(it->target_type));
	row->target_iops = it->target_iops;
	row->target_throughput = it->target_throughput;
	row->current_monthly = it->current;
	row->target_monthly = it->target;
}

int apply_plan_unsent(struct ledger *l, int64_t plan_id, const struct apply_row *rows, size_t n,
		      struct apply_row **out, size_t *n_out, size_t *alloc, struct buf *err)
{
	char *json = NULL;
	int64_t id = 0;
	struct item *items = NULL;
	size_t n_items = 0;
	struct apply_options every; /* no filter: the whole plan */
	memset(&every, 0, sizeof every);
	int rc = ledger_plan_load(l, plan_id, &id, &json, err);
	if (!rc)
		rc = load_items(plan_id, json, &every, &items, &n_items, err);
	free(json);
	struct strmap seen = STRMAP_INIT; /* volumes with a row, and entries taken (a plan lists each once) */
	for (size_t i = 0; i < n && !rc; i++)
		strmap_put(&seen, rows[i].volume_id, 1);
	for (size_t i = 0; i < n_items && !rc; i++) {
		size_t dummy;
		if (strmap_get(&seen, items[i].volume_id, &dummy))
			continue;
		strmap_put(&seen, items[i].volume_id, 1);
		XGROW(*out, *n_out, *alloc);
		row_planned(&(*out)[(*n_out)++], plan_id, &items[i], METHOD_AUTO);
	}
	strmap_release(&seen);
	items_free(items, n_items);
	return rc;
}

static enum apply_order sort_order;

static int item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	switch (sort_order) {
	case ORDER_SAVINGS:
		if (x->savings != y->savings)
			return x->savings > y->savings ? -1 : 1;
		break;
	case ORDER_OLDEST:
		break;
	case ORDER_RISK:
		if (x->risk != y->risk)
			return x->risk < y->risk ? -1 : 1;
		break;
	}
	if (x->create_order != y->create_order)
		return x->create_order < y->create_order ? -1 : 1;
	return strcmp(x->volume_id, y->volume_id);
}

/* CloudTrail's ModifyVolume events of the last 24 h, read once per region and run (its rate
 * limit is 2 calls/s: one query per region, not one per volume). */
struct history_region {
	char *region;
	int ok;
	struct trail_events events;
};
struct history_cache {
	struct history_region *v;
	size_t n;
};

static void history_region_release(void *p)
{
	struct history_region *h = p;
	free(h->region);
	trail_events_release(&h->events);
}

static void history_cache_release(struct history_cache *hc)
{
	EM_RELEASE_ARRAY(hc->v, hc->n, history_region_release);
	memset(hc, 0, sizeof *hc);
}

/* Gives v its region's CloudTrail starts (history HISTORY_CLOUDTRAIL), or marks it
 * HISTORY_UNAVAILABLE; the first failure becomes the run's one warning. */
static void add_history(struct history_cache *hc, struct aws_client *aws, struct fleet *f, struct volume *v,
			time_t now, struct apply_result *res)
{
	struct history_region *h = NULL;
	struct buf key = BUF_INIT; /* "REGION", or "ACCOUNT/REGION" for a client of one account of several */
	if (aws->account)
		buf_addf(&key, "%s/", aws->account);
	buf_adds(&key, v->region);
	for (size_t i = 0; i < hc->n && !h; i++)
		if (strcmp(hc->v[i].region, key.s) == 0)
			h = &hc->v[i];
	if (!h) {
		hc->v = xrealloc(hc->v, (hc->n + 1) * sizeof *hc->v);
		h = &hc->v[hc->n++];
		memset(h, 0, sizeof *h);
		h->region = buf_detach(&key);
		struct buf terr = BUF_INIT;
		h->ok = aws_cloudtrail_lookup_modify_volume(aws, v->region, now - 25 * 3600, now, &h->events, NULL,
							    &terr) == 0;
		if (!h->ok && !res->history_warning) {
			struct buf w = BUF_INIT;
			buf_addf(&w,
				 "CloudTrail history unavailable (%s): modifications made outside ebsmigrate in the "
				 "last 24 h are not counted; eligibility rests on EC2's latest modification and the "
				 "ledger (history-unverified, see docs/plan.md)",
				 terr.s);
			res->history_warning = buf_detach(&w);
		}
		buf_release(&terr);
	}
	buf_release(&key);
	if (h->ok)
		aws_cloudtrail_attach(f, &h->events, v->region);
	v->history = h->ok ? HISTORY_CLOUDTRAIL : HISTORY_UNAVAILABLE;
}

/* ---- refusals about the principal (invariant 5; EC2's: apply_support.c) ---- */

/* Kubernetes: 401 or 403 (EM_EAUTH) for VERB on RESOURCE. */
static int stop_for_kube(struct buf *err, const char *vid, const char *cluster, const char *verb, const char *resource,
			 const char *why)
{
	em_err(err, EM_EAUTH, "apply stopped at volume '%s': %s; ", vid, why);
	if (strstr(why, "forbidden") || strstr(why, "Forbidden") || strstr(why, "403"))
		buf_addf(err, "the Kubernetes user may not %s %s in cluster '%s': grant it (the rule for \"%s\" with verb "
			      "\"%s\" of 'ebsmigrate rbac --for apply') and run apply again",
			 verb, resource, cluster, resource, verb);
	else
		buf_addf(err, "the Kubernetes credentials of cluster '%s' were refused: check them and run apply again", cluster);
	buf_adds(err, "; " LEFT_PLANNED);
	return EM_EAUTH;
}

static int submit_kube(struct ledger *l, struct kube_conn *kc, int ann, const struct item *it, struct apply_row *row,
		       const struct apply_options *o, struct apply_result *res, int *sent, struct buf *err);

/* ---- one volume: decide -> record (the ledger, before anything is sent) -> send ---- */

/* What the volume as read now allows for one item (invariant 3). */
struct decision {
	enum apply_outcome_kind kind; /* OUT_SUBMITTED: go ahead; otherwise what is recorded instead */
	enum apply_state state;       /* not OUT_SUBMITTED: the row's new state */
	const char *code;             /* its error_code (NULL when completed) */
	struct buf why;
	time_t eligible;
	time_t latest_start;          /* EC2's (or the ledger's) latest start: for a VolumeModificationRateExceeded answer */
	int latest_in_flight;         /* the latest modification is still modifying/optimizing */
};

/* The volume could not be read (not about the principal): the failure is this volume's outcome;
 * the row keeps its state (a new one is planned). */
static int record_read_failure(struct ledger *l, const struct item *it, struct apply_row *row,
			       const struct apply_options *o, struct apply_result *res, int rc, const char *why,
			       struct buf *err)
{
	apply_outcome(res, it->volume_id, OUT_FAILED, 0, "cannot read the volume: %s", why);
	if (row->id || !o->dry_run) {
		if (!row->id)
			row->state = APPLY_PLANNED;
		apply_set_str(&row->error_code, "ReadFailed");
		apply_set_str(&row->error_message, why);
		rc = o->dry_run ? 0 : ledger_apply_save(l, row, "fresh state unavailable", err);
	}
	return rc == EM_EIO ? rc : 0;
}

/* Decides from fr (the volume as read now, its EC2 modifications) whether the item may be sent:
 * deleted, already at the target, drifted, a modification in flight, 4 in 24 h (the ledger's and
 * CloudTrail's starts added to v) or a target invalid for its size are decided instead. Reads
 * history only; sends nothing, writes nothing. d->why is d's to release. */
static int decide(struct ledger *l, struct aws_client *aws, struct history_cache *hc, struct fresh *fr,
		  const struct item *it, time_t now, struct apply_result *res, struct decision *d, struct buf *err)
{
	memset(d, 0, sizeof *d);
	buf_init(&d->why);
	d->kind = OUT_SUBMITTED;
	struct volume *v = fleet_find(&fr->f, it->volume_id);
	if (!v) {
		d->kind = OUT_SKIPPED;
		buf_adds(&d->why, "the volume no longer exists (deleted since the plan)");
		d->state = APPLY_FAILED;
		d->code = "InvalidVolume.NotFound";
		return 0;
	}
	if (v->type == it->target_type && v->iops == it->target_iops && v->throughput == it->target_throughput) {
		d->kind = OUT_COMPLETED;
		buf_adds(&d->why, "already at the target configuration: nothing to do (a no-op would use one of the 4 daily modifications)");
		d->state = APPLY_COMPLETED;
		return 0;
	}
	if (v->type != it->type || v->size_gib != it->size ||
	    (it->type != EBS_GP2 && (v->iops != it->iops || v->throughput != it->throughput))) {
		d->kind = OUT_SKIPPED;
		buf_addf(&d->why, "drifted since the plan: now %s %lld GiB %lld IOPS %lld MiB/s, planned from %s %lld GiB; re-plan",
			 ebs_type_name(v->type), (long long)v->size_gib, (long long)v->iops, (long long)v->throughput,
			 ebs_type_name(it->type), (long long)it->size);
		d->state = APPLY_FAILED;
		d->code = "Drifted";
		return 0;
	}
	/* Rules R1/R2: EC2's latest + every modification ebsmigrate made (ledger). */
	time_t *starts = NULL;
	size_t n_starts = 0;
	int rc = ledger_apply_starts(l, it->volume_id, &starts, &n_starts, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n_starts; i++) {
		struct volume_mod m;
		memset(&m, 0, sizeof m);
		m.state = MOD_COMPLETED;
		m.start_time = starts[i];
		int dup = 0;
		for (size_t k = 0; k < v->n_mods; k++)
			if (llabs((long long)(v->mods[k].start_time - starts[i])) <= CLOCK_SKEW_S)
				dup = 1;
		if (!dup)
			volume_add_mod(v, &m);
	}
	free(starts);
	add_history(hc, aws, &fr->f, v, now, res);
	time_t at = 0;
	enum eligibility r = planner_eligible_at(v, now, &at);
	struct buf verr = BUF_INIT;
	const char *field = NULL;
	if (r == ELIGIBLE_AFTER_FLIGHT) {
		d->kind = OUT_DEFERRED;
		buf_addf(&d->why, "a modification is %s; the next may start after it completes",
			 volume_mod_state_name(volume_latest_mod(v)));
		d->state = APPLY_DEFERRED;
		d->code = "ModificationInFlight";
	} else if (r == ELIGIBLE_AFTER_LIMIT) {
		d->kind = OUT_DEFERRED;
		d->eligible = at;
		char ts[21];
		em_format_time(at, ts);
		buf_addf(&d->why, "4 modifications in the last 24 hours; next allowed at %s", ts);
		d->state = APPLY_DEFERRED;
		d->code = "ModificationLimit";
	} else if (plan_target_check(it->target_type, v->size_gib, it->target_iops, it->target_throughput, &field,
				     &verr)) {
		/* Never reached through plan_doc_parse; checked again against the volume as read now,
		 * right before anything is sent. */
		d->kind = OUT_FAILED;
		buf_addf(&d->why, "target refused: %s: %s", field, verr.s);
		d->state = APPLY_FAILED;
		d->code = "InvalidTarget";
	}
	buf_release(&verr);
	const struct volume_mod *latest = volume_latest_mod(v);
	d->latest_start = latest ? latest->start_time : 0;
	d->latest_in_flight = latest && volume_mod_in_flight(latest->state);
	return 0;
}

/* Records a decision other than "send" (skipped, completed, deferred, failed) and reports it. */
static int record_decision(struct ledger *l, const struct item *it, struct apply_row *row,
			   const struct apply_options *o, struct apply_result *res, const struct decision *d, time_t now,
			   struct buf *err)
{
	int rc = 0;
	if (!o->dry_run) {
		row->state = d->state;
		apply_set_str(&row->error_code, d->code);
		apply_set_str(&row->error_message, d->code ? d->why.s : NULL);
		row->eligible_at = d->eligible;
		if (d->kind == OUT_COMPLETED)
			row->completed_at = now;
		rc = ledger_apply_save(l, row, d->why.s, err);
	}
	apply_say(o, "%s: %s: %s", it->volume_id, apply_outcome_name(d->kind), d->why.s);
	apply_outcome(res, it->volume_id, d->kind, d->eligible, "%s", d->why.s);
	return rc;
}

/* Invariant 1: the intent (submitted, with its time) is committed before the call it announces. */
static int record_intent(struct ledger *l, struct apply_row *row, time_t now, const char *detail, struct buf *err)
{
	row->state = APPLY_SUBMITTED;
	row->submitted_at = now;
	apply_set_str(&row->error_code, NULL);
	apply_set_str(&row->error_message, NULL);
	return ledger_apply_save(l, row, detail, err);
}

#ifndef NDEBUG
/* For assert(): the ledger holds row's intent, committed (state submitted, same submitted_at). */
static int intent_recorded(struct ledger *l, const struct apply_row *row)
{
	struct apply_row stored;
	struct buf err = BUF_INIT;
	int ok = row->id && ledger_apply_get(l, row->plan_id, row->volume_id, &stored, &err) == 0;
	if (ok) {
		ok = stored.id == row->id && stored.state == APPLY_SUBMITTED && stored.submitted_at == row->submitted_at;
		apply_row_release(&stored);
	}
	buf_release(&err);
	return ok;
}
#endif

/* Sends ModifyVolume once (the intent is recorded) and records its answer. */
static int send_modify(struct ledger *l, struct aws_client *aws, const struct item *it, struct apply_row *row,
		       const struct apply_options *o, struct apply_result *res, time_t now, time_t latest_start,
		       struct buf *err)
{
	assert(intent_recorded(l, row)); /* invariant 1: ledger before send */
	struct volume_mod m;
	char *aws_code = NULL;
	struct buf merr = BUF_INIT;
	int stop = 0;
	int mrc = aws_ec2_modify_volume(aws, it->region, it->volume_id, it->target_type, it->target_iops,
					it->target_throughput, &m, &aws_code, &merr);
	const char *detail;
	if (!mrc) {
		row->state = APPLY_MODIFYING;
		apply_state_from_ec2(m.state, &row->state);
		row->started_at = m.start_time ? m.start_time : now;
		detail = "ModifyVolume accepted";
		apply_say(o, "%s: modification started (%s)", it->volume_id, apply_state_name(row->state));
		apply_outcome(res, it->volume_id, OUT_SUBMITTED, 0, "%s %lld IOPS %lld MiB/s: %s",
			      ebs_type_name(it->target_type), (long long)it->target_iops,
			      (long long)it->target_throughput, apply_state_name(row->state));
	} else if (mrc == EM_ENET ||
		   (aws_code && (strcmp(aws_code, "InternalError") == 0 || strcmp(aws_code, "InternalFailure") == 0 ||
				 strcmp(aws_code, "ServiceUnavailable") == 0 || strcmp(aws_code, "Unavailable") == 0))) {
		/* No answer, or a server error: it may have been applied. Stay submitted; the next
		 * run reconciles from DescribeVolumesModifications instead of resending blindly. */
		apply_set_str(&row->error_code, "NoAnswer");
		apply_set_str(&row->error_message, merr.s);
		detail = "no answer to ModifyVolume: left submitted for reconciliation";
		apply_say(o, "%s: no answer (%s); will reconcile on the next run", it->volume_id, merr.s);
		apply_outcome(res, it->volume_id, OUT_UNKNOWN, 0, "%s", merr.s);
	} else if (apply_principal_refusal(mrc, aws_code, merr.s)) {
		/* Not applied (a refusal, or throttling), and not this volume's fault: it stays planned
		 * for the next run, and this run stops (every other volume would meet it too). */
		row->state = APPLY_PLANNED;
		row->submitted_at = 0;
		apply_set_str(&row->error_code, aws_code ? aws_code : em_strerror(mrc));
		apply_set_str(&row->error_message, merr.s);
		detail = mrc == EM_ETHROTTLED ? "throttled: not applied, left planned; apply stopped"
					      : "refused for the principal: left planned; apply stopped";
		stop = apply_stop_for_ec2(err, mrc, it->volume_id, "ModifyVolume", aws_code, merr.s, LEFT_PLANNED);
	} else if (aws_code && (strcmp(aws_code, "VolumeModificationRateExceeded") == 0 ||
				strcmp(aws_code, "IncorrectModificationState") == 0)) {
		int rate = strcmp(aws_code, "VolumeModificationRateExceeded") == 0;
		row->state = APPLY_DEFERRED;
		row->eligible_at = 0;
		if (rate) { /* AWS's time when its message has one, else from the history known */
			struct rate_refusal rr;
			rate_refusal_parse(merr.s, &rr);
			row->eligible_at = apply_refused_until(l, row, latest_start, &rr, now, NULL);
			if (!row->eligible_at) /* a time already past: count from the history instead */
				row->eligible_at = rate_refusal_until(NULL, now, &latest_start, latest_start ? 1 : 0, NULL);
		}
		row->submitted_at = 0;
		apply_set_str(&row->error_code, aws_code);
		apply_set_str(&row->error_message, merr.s);
		detail = "EC2 refused for now: deferred";
		apply_say(o, "%s: deferred: %s", it->volume_id, merr.s);
		apply_outcome(res, it->volume_id, OUT_DEFERRED, row->eligible_at, "%s", merr.s);
	} else {
		row->state = APPLY_FAILED;
		row->submitted_at = 0;
		apply_set_str(&row->error_code, aws_code ? aws_code : em_strerror(mrc));
		apply_set_str(&row->error_message, merr.s);
		detail = "ModifyVolume refused";
		apply_say(o, "%s: failed: %s", it->volume_id, merr.s);
		apply_outcome(res, it->volume_id, OUT_FAILED, 0, "%s", merr.s);
	}
	int rc = ledger_apply_save(l, row, detail, err);
	free(aws_code);
	buf_release(&merr);
	volume_mod_release(&m);
	return rc ? rc : stop;
}

/* *sent is set when a modification was requested (ModifyVolume, the PVC patch) or, in a dry
 * run, would be: what --batch counts, whatever the answer. A refusal about the principal
 * (apply_principal_refusal) returns its error: the run stops there. */
static int submit_one(struct ledger *l, struct aws_client *aws, struct kube_conns *kcs, struct history_cache *hc,
		      const struct item *it, struct apply_row *row, const struct apply_options *o, struct apply_result *res,
		      int *sent, struct buf *err)
{
	time_t now = em_now();
	int rc = apply_client_of(&aws, aws, o, it->volume_id, it->account, err);
	if (rc)
		return rc;
	struct fresh fr;
	struct buf rerr = BUF_INIT;
	int stopped;
	rc = apply_read_fresh_or_stop(aws, it->region, it->volume_id, LEFT_PLANNED, &fr, &stopped, &rerr, err);
	if (rc) { /* fr is released: the volume ends here, whatever record_read_failure returns */
		if (!stopped)
			rc = record_read_failure(l, it, row, o, res, rc, rerr.s, err);
		buf_release(&rerr);
		return rc;
	}
	buf_release(&rerr);
	struct decision d;
	rc = decide(l, aws, hc, &fr, it, now, res, &d, err);
	apply_fresh_release(&fr);
	if (!rc && d.kind != OUT_SUBMITTED)
		rc = record_decision(l, it, row, o, res, &d, now, err);
	int go = !rc && d.kind == OUT_SUBMITTED;
	buf_release(&d.why);
	if (!go)
		return rc;
	/* invariant: one modification in flight per volume, at the point of sending */
	assert(!d.latest_in_flight);
	if (modify_method_kube(row->method))
		return submit_kube(l, kube_conn_for(kcs, it->cluster), row->method == METHOD_ANNOTATION, it, row, o, res,
				   sent, err);
	*sent = 1;
	if (o->dry_run) {
		apply_say(o, "would call ec2 ModifyVolume in %s: VolumeId=%s VolumeType=%s Iops=%lld Throughput=%lld",
			  it->region, it->volume_id, ebs_type_name(it->target_type), (long long)it->target_iops,
			  (long long)it->target_throughput);
		apply_outcome(res, it->volume_id, OUT_WOULD_SUBMIT, 0, "ModifyVolume %s %lld/%lld",
			      ebs_type_name(it->target_type), (long long)it->target_iops,
			      (long long)it->target_throughput);
		return 0;
	}
	if ((rc = record_intent(l, row, now, "ModifyVolume about to be sent", err)))
		return rc;
	return send_modify(l, aws, it, row, o, res, now, d.latest_start, err);
}

/* A failure about this volume (not the principal): reported, and recorded failed unless a dry run. */
static int record_failure(struct ledger *l, const struct item *it, struct apply_row *row,
			  const struct apply_options *o, struct apply_result *res, const char *code, const char *why,
			  const char *detail, struct buf *err)
{
	apply_say(o, "%s: failed: %s", it->volume_id, why);
	apply_outcome(res, it->volume_id, OUT_FAILED, 0, "%s", why);
	if (o->dry_run)
		return 0;
	row->state = APPLY_FAILED;
	apply_set_str(&row->error_code, code);
	apply_set_str(&row->error_message, why);
	return ledger_apply_save(l, row, detail, err);
}

/* The PVC patch of a Kubernetes route: the class name (cls set), else the EBS CSI driver's
 * volume-modifier annotations with the target (numbers as strings, as annotations are). */
static void pvc_patch(struct buf *b, const char *cls, const struct item *it)
{
	struct jsonw w;
	jsonw_init(&w, b, JSONW_COMPACT);
	jsonw_object(&w);
	if (cls) {
		jsonw_key_object(&w, "spec");
		jsonw_key_str(&w, "volumeAttributesClassName", cls);
		jsonw_end_n(&w, 2);
		return;
	}
	char iops[24], tput[24];
	snprintf(iops, sizeof iops, "%lld", (long long)it->target_iops);
	snprintf(tput, sizeof tput, "%lld", (long long)it->target_throughput);
	jsonw_key_object(&w, "metadata");
	jsonw_key_object(&w, "annotations");
	const struct jsonw_str_member ann[] = {
		{ANN_TYPE, ebs_type_name(it->target_type)}, {ANN_IOPS, iops}, {ANN_TPUT, tput}};
	jsonw_members_str(&w, ann, JSONW_COUNT(ann));
	jsonw_end_n(&w, 3);
}

/* The Kubernetes routes. VolumeAttributesClass (ann = 0): the class exists (created once, never
 * overwritten), the intent is committed, the PVC is merge-patched once with the class; the CSI
 * driver calls ModifyVolume. Annotations (ann = 1): the PVC is merge-patched once with the
 * volume-modifier annotations; the sidecar calls ModifyVolume. */
static int submit_kube(struct ledger *l, struct kube_conn *kc, int ann, const struct item *it, struct apply_row *row,
		       const struct apply_options *o, struct apply_result *res, int *sent, struct buf *err)
{
	char *cls = NULL;
	if (!ann) {
		struct buf name = BUF_INIT;
		apply_vac_name(&name, it->target_iops, it->target_throughput);
		cls = buf_detach(&name);
	}
	struct buf patch = BUF_INIT;
	int stop = 0;
	pvc_patch(&patch, ann ? NULL : cls, it);
	const char *what = ann ? "volume-modifier annotations" : cls;
	struct pvc_state ps;
	struct buf kerr = BUF_INIT;
	int rc = 0, krc = kube_pvc_read(kc, it->namespace_, it->pvc, &ps, &kerr);
	if (krc == EM_ENOTFOUND) {
		apply_say(o, "%s: skipped: PVC %s/%s no longer exists", it->volume_id, it->namespace_, it->pvc);
		apply_outcome(res, it->volume_id, OUT_SKIPPED, 0, "PVC %s/%s was deleted since the plan",
			      it->namespace_, it->pvc);
		if (!o->dry_run) {
			row->state = APPLY_FAILED;
			apply_set_str(&row->error_code, "PVCNotFound");
			apply_set_str(&row->error_message, "the PersistentVolumeClaim was deleted");
			rc = ledger_apply_save(l, row, "PVC deleted", err);
		}
		goto done;
	}
	if (krc == EM_EAUTH) { /* about the user, not the PVC: stop, the row stays as it was (planned) */
		rc = stop_for_kube(err, it->volume_id, it->cluster, "get", "persistentvolumeclaims", kerr.s);
		goto done;
	}
	if (krc) {
		rc = record_failure(l, it, row, o, res, "KubernetesError", kerr.s, "cannot read the PVC", err);
		goto done;
	}
	buf_reset(&kerr);
	if (!ann &&
	    (krc = ensure_vac(kc, cls, it->target_type, it->target_iops, it->target_throughput, o->dry_run, &kerr))) {
		if (krc == EM_EAUTH) {
			rc = stop_for_kube(err, it->volume_id, it->cluster, strstr(kerr.s, ": POST ") ? "create" : "get",
					   "volumeattributesclasses", kerr.s);
			goto done;
		}
		rc = record_failure(l, it, row, o, res, "VolumeAttributesClass", kerr.s, "VolumeAttributesClass unusable",
				    err);
		goto done;
	}
	*sent = 1;
	if (o->dry_run) {
		if (!ann)
			apply_say(
				o,
				"would ensure VolumeAttributesClass %s (storage.k8s.io/%s: type=%s iops=%lld throughput=%lld) "
				"in cluster %s",
				cls, kc->vac_version, ebs_type_name(it->target_type), (long long)it->target_iops,
				(long long)it->target_throughput, it->cluster);
		apply_say(o, "would PATCH /api/v1/namespaces/%s/persistentvolumeclaims/%s (merge) %s in cluster %s",
			  it->namespace_, it->pvc, patch.s, it->cluster);
		apply_outcome(res, it->volume_id, OUT_WOULD_SUBMIT, 0, "PVC %s/%s -> %s", it->namespace_, it->pvc,
			      what);
		goto done;
	}
	apply_set_str(&row->target_class, cls);
	if ((rc = record_intent(l, row, em_now(), "PVC patch about to be sent", err)))
		goto done;
	assert(intent_recorded(l, row)); /* invariant 1: ledger before send */
	struct buf path = BUF_INIT, out = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", it->namespace_, it->pvc);
	buf_reset(&kerr);
	krc = kube_patch_merge(&kc->kc, path.s, patch.s, &out, &kerr);
	const char *detail;
	if (!krc) {
		cJSON *j = cJSON_ParseWithLength(out.s, out.len);
		const char *st = jsonx_path_str(j, "status.modifyVolumeStatus.status");
		const char *cur = jsonx_path_str(j, "status.currentVolumeAttributesClassName");
		if (ann) {
			/* The sidecar acts on the change asynchronously: reconciled by the next run or --wait. */
			apply_outcome(
				res, it->volume_id, OUT_SUBMITTED, 0,
				"PVC %s/%s annotated %s %lld IOPS %lld MiB/s: waiting for the volume-modifier sidecar",
				it->namespace_, it->pvc, ebs_type_name(it->target_type), (long long)it->target_iops,
				(long long)it->target_throughput);
		} else if (st && strcmp(st, "Infeasible") == 0) {
			row->state = APPLY_FAILED;
			apply_set_str(&row->error_code, "Infeasible");
			apply_set_str(&row->error_message, "the CSI driver marked the modification Infeasible");
			apply_outcome(res, it->volume_id, OUT_FAILED, 0, "Infeasible: the CSI driver refused class %s",
				      cls);
		} else if ((st && strcmp(st, "InProgress") == 0) || (cur && strcmp(cur, cls) == 0)) {
			row->state = cur && strcmp(cur, cls) == 0 ? APPLY_OPTIMIZING : APPLY_MODIFYING;
			row->started_at = em_now();
			apply_outcome(res, it->volume_id, OUT_SUBMITTED, 0, "PVC %s/%s -> %s: %s", it->namespace_,
				      it->pvc, cls, apply_state_name(row->state));
		} else {
			/* Patched; the driver has not reported yet: reconciled by the next run or --wait. */
			apply_outcome(res, it->volume_id, OUT_SUBMITTED, 0,
				      "PVC %s/%s -> %s: patched, waiting for the CSI driver", it->namespace_, it->pvc,
				      cls);
		}
		cJSON_Delete(j);
		detail = "PVC patched";
		apply_say(o, "%s: PVC %s/%s now %s %s (%s)", it->volume_id, it->namespace_, it->pvc,
			  ann ? "carries" : "names", what, apply_state_name(row->state));
	} else if (krc == EM_ENET || krc == EM_ESERVER) {
		/* No answer or a server error: the patch may have been applied; the next run reads the
		 * PVC and either moves on or sends it again. */
		apply_set_str(&row->error_code, "NoAnswer");
		apply_set_str(&row->error_message, kerr.s);
		detail = "no answer to the PVC patch: left submitted for reconciliation";
		apply_outcome(res, it->volume_id, OUT_UNKNOWN, 0, "%s", kerr.s);
	} else if (krc == EM_EAUTH) {
		/* Refused for the user, not the PVC: not applied, left planned; the run stops. */
		row->state = APPLY_PLANNED;
		row->submitted_at = 0;
		apply_set_str(&row->error_code, "Forbidden");
		apply_set_str(&row->error_message, kerr.s);
		detail = "PVC patch refused for the Kubernetes user: left planned; apply stopped";
		stop = stop_for_kube(err, it->volume_id, it->cluster, "patch", "persistentvolumeclaims", kerr.s);
	} else {
		row->state = APPLY_FAILED;
		row->submitted_at = 0;
		apply_set_str(&row->error_code, krc == EM_ENOTFOUND ? "PVCNotFound" : "KubernetesError");
		apply_set_str(&row->error_message, kerr.s);
		detail = "PVC patch refused";
		apply_outcome(res, it->volume_id, OUT_FAILED, 0, "%s", kerr.s);
	}
	rc = ledger_apply_save(l, row, detail, err);
	if (!rc)
		rc = stop;
	buf_release(&path);
	buf_release(&out);
done:
	buf_release(&patch);
	pvc_state_release(&ps);
	buf_release(&kerr);
	free(cls);
	return rc;
}

/* Modifications in flight per account-region and per cluster: invariant 4's counters. Keys are
 * "r ACCOUNT/REGION" and "c CLUSTER", so a cluster named like a region is its own key. */
struct flight {
	struct strmap keys; /* key -> count */
};

static void flight_key(struct buf *k, int cluster, const char *account, const char *name)
{
	buf_reset(k);
	if (cluster)
		buf_addf(k, "c %s", name);
	else
		buf_addf(k, "r %s/%s", account ? account : "", name);
}

/* The larger of the two counts that bind this volume. */
static size_t flight_count(const struct flight *fl, const char *account, const char *region, const char *cluster)
{
	size_t most = 0, n;
	struct buf k = BUF_INIT;
	for (int c = 0; c < 2; c++) {
		const char *name = c ? cluster : region;
		if (!name)
			continue;
		flight_key(&k, c, account, name);
		if (strmap_get(&fl->keys, k.s, &n) && n > most)
			most = n;
	}
	buf_release(&k);
	return most;
}

static void flight_add(struct flight *fl, const char *account, const char *region, const char *cluster)
{
	struct buf k = BUF_INIT;
	for (int c = 0; c < 2; c++) {
		const char *name = c ? cluster : region;
		size_t n = 0;
		if (!name)
			continue;
		flight_key(&k, c, account, name);
		strmap_get(&fl->keys, k.s, &n);
		strmap_put(&fl->keys, k.s, n + 1);
	}
	buf_release(&k);
}

static void flight_release(struct flight *fl)
{
	strmap_release(&fl->keys);
}

/* Method per volume. auto: the VAC route where the cluster serves VolumeAttributesClass, the
 * annotation route where the volume-modifier sidecar runs, EC2 for in-tree PVs, volumes outside
 * Kubernetes and clusters with neither. vac/annotation: that route, or EC2 with a notice when the
 * volume or cluster cannot take it. */
static enum modify_method choose_method(struct kube_conns *kcs, const struct item *it, const struct apply_options *o)
{
	if (o->method == METHOD_EC2)
		return METHOD_EC2;
	if (!it->cluster || !it->pvc || it->in_tree) {
		if (o->method != METHOD_AUTO)
			apply_say(o, "%s: no Kubernetes route (%s); using EC2", it->volume_id,
				  it->in_tree ? "in-tree PV" : "not a Kubernetes volume");
		return METHOD_EC2;
	}
	struct kube_conn *kc = kube_conn_for(kcs, it->cluster);
	/* v1alpha1 also needs feature gates in the controller manager and the external-resizer, which
	 * discovery cannot show: auto prefers the sidecar there when it runs. */
	int alpha = kc->vac_version && strcmp(kc->vac_version, "v1alpha1") == 0;
	if (o->method == METHOD_VAC && !kc->error)
		return METHOD_VAC;
	if (o->method == METHOD_AUTO && !kc->error && !alpha)
		return METHOD_VAC;
	if (o->method == METHOD_VAC) {
		apply_say(o, "%s: no VAC route in cluster %s (%s); using EC2", it->volume_id, it->cluster, kc->error);
		return METHOD_EC2;
	}
	if (!kc->ok) {
		apply_say(o, "%s: cluster %s unreachable (%s); using EC2", it->volume_id, it->cluster, kc->error);
		return METHOD_EC2;
	}
	int sc = kube_conn_sidecar(kc);
	if (sc == 1)
		return METHOD_ANNOTATION;
	if (o->method == METHOD_AUTO && !kc->error)
		return METHOD_VAC; /* v1alpha1 without the sidecar: the only Kubernetes route */
	if (o->method == METHOD_ANNOTATION && sc < 0) {
		/* Asked for explicitly and the controller cannot be inspected: trust the operator. */
		apply_say(
			o,
			"%s: cannot tell whether the volume-modifier sidecar runs in cluster %s (%s); annotating as asked",
			it->volume_id, it->cluster, kc->sidecar_note);
		return METHOD_ANNOTATION;
	}
	if (o->method == METHOD_ANNOTATION)
		apply_say(o,
			  "%s: no volume-modifier sidecar in cluster %s (no such container in the aws-ebs-csi-driver "
			  "Deployments); using EC2",
			  it->volume_id, it->cluster);
	return METHOD_EC2;
}

/* -l/--selector: keeps the items whose PVC matches the label selector, as the API server
 * evaluates it (one filtered PVC list per cluster, scope_live_selected_pvcs); volumes outside
 * Kubernetes never match. */
static int select_by_labels(struct kube_conns *kcs, const char *selector, struct item *items, size_t *n_items,
			    struct buf *err)
{
	struct strmap keys = STRMAP_INIT, listed = STRMAP_INIT;
	int rc = 0;
	for (size_t i = 0; i < *n_items && !rc; i++) {
		const char *cl = items[i].cluster;
		size_t dummy;
		if (!cl || !items[i].pvc || strmap_get(&listed, cl, &dummy))
			continue;
		strmap_put(&listed, cl, 1);
		rc = scope_live_selected_pvcs(kcs, selector, cl, &keys, err);
	}
	size_t kept = 0;
	for (size_t i = 0; i < *n_items; i++) {
		struct buf k = BUF_INIT;
		size_t dummy;
		if (items[i].cluster && items[i].pvc)
			buf_addf(&k, "%s/%s/%s", items[i].cluster, items[i].namespace_ ? items[i].namespace_ : "", items[i].pvc);
		if (!rc && k.len && strmap_get(&keys, k.s, &dummy)) {
			items[kept++] = items[i];
		} else {
			items_free_one(&items[i]);
		}
		buf_release(&k);
	}
	*n_items = kept;
	strmap_release(&keys);
	strmap_release(&listed);
	return rc;
}

int apply_run(struct ledger *l, struct aws_client *aws, const struct apply_options *o, struct apply_result *res,
	      struct buf *err)
{
	memset(res, 0, sizeof *res);
	char *json = NULL;
	int rc = ledger_plan_load(l, o->plan_id, &res->plan_id, &json, err);
	if (rc)
		return rc;
	struct item *items = NULL;
	size_t n_items = 0;
	rc = load_items(res->plan_id, json, o, &items, &n_items, err);
	free(json);
	if (rc)
		return rc;
	struct kube_conns kcs = {NULL, 0, o->kubeconfig};
	if (o->selector && (rc = select_by_labels(&kcs, o->selector, items, &n_items, err))) {
		items_free(items, n_items);
		kube_conns_release(&kcs);
		return rc;
	}
	sort_order = o->order;
	if (n_items > 1)
		qsort(items, n_items, sizeof *items, item_cmp);
	size_t interrupted = 0;
	if (!o->dry_run) /* under the lock no earlier run is at work: one without an outcome was cut short */
		rc = ledger_apply_runs_interrupted(l, &interrupted, err);
	if (!rc && !o->dry_run)
		rc = ledger_apply_run_begin(l, res->plan_id, "{}", &res->run_id, err);

	/* Invariant 2: reconcile every unfinished row of this plan first. */
	struct apply_row *rows = NULL;
	size_t n_rows = 0;
	if (!rc)
		rc = ledger_apply_list(l, res->plan_id, &rows, &n_rows, err);
	if (!rc)
		rc = apply_reconcile_rows(l, aws, &kcs, rows, n_rows, res, o, err);

	/* In flight per region and per cluster after reconciliation (invariant 4). */
	struct flight flight = {STRMAP_INIT};
	struct history_cache hc = {NULL, 0};
	for (size_t i = 0; i < n_rows; i++)
		if (apply_state_open(rows[i].state))
			flight_add(&flight, rows[i].account, rows[i].region, rows[i].cluster);
	size_t max_in_flight = o->max_in_flight ? o->max_in_flight : 10;
	size_t batch = o->batch ? o->batch : 10;
	size_t taken = 0;
	time_t now = em_now();
	size_t next = 0;
	if (o->reconcile_only)
		next = n_items; /* --batch 0: nothing is selected, nothing is sent */
	for (; next < n_items && !rc; next++) {
		if (stop_requested()) { /* invariant 7: between volumes, never between record and send */
			apply_say(o, "stopped by %s: the volumes not yet tried stay as they are for the next run",
				  stop_signal_name(stop_requested()));
			break;
		}
		struct item *it = &items[next];
		struct apply_row row;
		memset(&row, 0, sizeof row);
		int g = ledger_apply_get(l, res->plan_id, it->volume_id, &row, err);
		if (g && g != EM_ENOTFOUND) {
			rc = g;
			break;
		}
		if (g == 0) {
			/* done, in flight, failed (needs a human), or deferred until later */
			int open = row.state == APPLY_PLANNED ||
				   (row.state == APPLY_DEFERRED && (!row.eligible_at || row.eligible_at <= now));
			if (!open) {
				apply_row_release(&row);
				continue;
			}
		} else {
			row_planned(&row, res->plan_id, it, choose_method(&kcs, it, o));
		}
		if (taken >= batch) {
			res->left++;
			apply_row_release(&row);
			continue;
		}
		if (flight_count(&flight, it->account, it->region, it->cluster) >= max_in_flight) {
			res->left++;
			apply_say(o, "%s: left for a later run (%zu modifications already in flight in %s%s%s)",
				  it->volume_id, max_in_flight, it->region, it->cluster ? " or cluster " : "",
				  it->cluster ? it->cluster : "");
			apply_row_release(&row);
			continue;
		}
		row.run_id = res->run_id;
		size_t before = res->submitted + res->would_submit;
		int sent = 0;
		rc = submit_one(l, aws, &kcs, &hc, it, &row, o, res, &sent, err);
		taken += sent != 0; /* --batch bounds attempts, accepted or not */
		if (res->submitted + res->would_submit > before)
			flight_add(&flight, it->account, it->region, it->cluster);
		apply_row_release(&row);
	}
	if (rc && next > 0 && !o->reconcile_only)
		res->left += n_items - (next - 1); /* stopped: the volume at fault and the untried ones stay */
	flight_release(&flight);
	history_cache_release(&hc);
	apply_rows_free(rows, n_rows);
	items_free(items, n_items);
	/* The Kubernetes routes return once the CSI driver or the sidecar has started each
	 * modification (EC2 modifying), waiting up to 30 s; what is still pending then is reconciled
	 * by the next run. */
	for (int settle = 0; !rc && !o->dry_run && !o->wait && settle < 30 && !stop_requested(); settle++) {
		struct apply_row *pend = NULL;
		size_t n_pend = 0, waiting = 0;
		rc = ledger_apply_list(l, res->plan_id, &pend, &n_pend, err);
		for (size_t i = 0; i < n_pend && !rc; i++) {
			if (pend[i].state != APPLY_SUBMITTED || pend[i].method == METHOD_EC2 ||
			    pend[i].run_id != res->run_id)
				continue;
			rc = apply_reconcile_row(l, aws, &kcs, &pend[i], res, o, NULL, err);
			waiting += pend[i].state == APPLY_SUBMITTED;
		}
		apply_rows_free(pend, n_pend);
		if (!waiting)
			break;
		if (settle == 0)
			apply_say(o, "waiting for Kubernetes to start %zu modification(s)", waiting);
		sleep(1);
	}
	if (!rc && o->wait && !o->dry_run && (res->submitted || res->unknown || o->reconcile_only))
		rc = apply_wait_for(l, aws, &kcs, o, res, err);
	kube_conns_release(&kcs);
	if (!o->dry_run && res->run_id) {
		struct buf e2 = BUF_INIT;
		const char *outcome_s = rc                                              ? "failed"
					: stop_requested()                              ? "interrupted"
					: (res->failed || res->deferred || res->unknown) ? "partial"
											 : "ok";
		ledger_apply_run_end(l, res->run_id, outcome_s, &e2);
		buf_release(&e2);
	}
	return rc;
}
