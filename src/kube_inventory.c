/*
 * kube_inventory.c - reads a cluster's inventory (StorageClasses, PVs, PVCs, StatefulSets, pods,
 * nodes, VolumeAttributesClasses, /version, kubelet stats) over kube_client.c's transport into a
 * kube_set and a fleet (contract in kube_client.h), and merges such sets read apart.
 *
 * Entry points: kube_inventory_load, kube_set_move, kube_fleet_move.
 *
 * Invariants:
 * - A list's objects move into the caller's set only once the whole list has been read, so a
 *   list restarted after 410 Expired leaves no duplicates.
 * - Merges keep the first of two entries with one identity (cluster, namespace, name), as
 *   kube_objects_load would, so merging parts read apart in the sequential order gives the
 *   sequential result.
 * - Usage (kubelet stats) that cannot be read is a notice, never a failure.
 * - Read concurrently (opt.concurrency > 1), the lists and then the nodes' stats are joined in
 *   the order a sequential read uses (kinds as listed below, nodes as the node list gave them),
 *   each as soon as it and all before it are in; at most opt.concurrency run at once, each on a
 *   client of its own that shares the cluster's credential and token bucket.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/volume.h"
#include "ebsmigrate/workpool.h"

/* "cluster\tnamespace\tname" (namespace NULL for cluster-scoped kinds); 0 when a part that
 * must be there is missing (such an entry is never a duplicate, as before). */
static int object_key(struct buf *k, const char *cluster, const char *namespace_, const char *name)
{
	buf_reset(k);
	if (!cluster || !name)
		return 0;
	buf_adds(k, cluster);
	buf_addc(k, '\t');
	if (namespace_) {
		buf_adds(k, namespace_);
		buf_addc(k, '\t');
	}
	buf_adds(k, name);
	return 1;
}

static int pv_key(struct buf *k, const struct kube_pv *p)
{
	return object_key(k, p->cluster, NULL, p->name);
}

static int pvc_key(struct buf *k, const struct kube_pvc *p)
{
	return object_key(k, p->cluster, p->namespace_, p->name);
}

static int sc_key(struct buf *k, const struct storage_class *s)
{
	return object_key(k, s->cluster, NULL, s->name);
}

static int sts_key(struct buf *k, const struct statefulset_ref *s)
{
	return object_key(k, s->cluster, s->namespace_, s->name);
}

static int vac_key(struct buf *k, const struct vac_ref *s)
{
	return object_key(k, s->cluster, NULL, s->name);
}

/* Appends src->ARR's entries to dst->ARR, an entry whose key (KEY_OF) is in KEYS (a strmap of
 * key -> position in dst->ARR, kept up to date) going to discard->ARR instead: the first kept.
 * Entries are looked up by key, never by a scan of dst (kinds run to tens of thousands). One
 * loop for the five kinds, whose element types differ. */
#define MOVE_KEYED(dst, src, discard, arr, n_arr, alloc_arr, key_of, keys)                          \
	do {                                                                                       \
		struct buf k_ = BUF_INIT;                                                           \
		size_t at_;                                                                         \
		for (size_t i_ = 0; i_ < (src)->n_arr; i_++) {                                      \
			int keyed_ = key_of(&k_, &(src)->arr[i_]);                                  \
			if (keyed_ && strmap_get((keys), k_.s, &at_)) {                             \
				XGROW((discard)->arr, (discard)->n_arr, (discard)->alloc_arr);       \
				(discard)->arr[(discard)->n_arr++] = (src)->arr[i_];                 \
				continue;                                                           \
			}                                                                           \
			XGROW((dst)->arr, (dst)->n_arr, (dst)->alloc_arr);                          \
			if (keyed_)                                                                 \
				strmap_put((keys), k_.s, (dst)->n_arr);                             \
			(dst)->arr[(dst)->n_arr++] = (src)->arr[i_];                                \
		}                                                                                   \
		(src)->n_arr = 0;                                                                   \
		buf_release(&k_);                                                                   \
	} while (0)

/* MOVE_KEYED for a kind dst keeps no index of: one is built for the move. */
#define MOVE_FIRST_KEPT(dst, src, discard, arr, n_arr, alloc_arr, key_of)                          \
	do {                                                                                       \
		struct strmap keys_ = STRMAP_INIT;                                                  \
		struct buf kk_ = BUF_INIT;                                                          \
		for (size_t j_ = 0; (src)->n_arr && j_ < (dst)->n_arr; j_++)                        \
			if (key_of(&kk_, &(dst)->arr[j_]))                                          \
				strmap_put(&keys_, kk_.s, j_);                                      \
		buf_release(&kk_);                                                                  \
		MOVE_KEYED(dst, src, discard, arr, n_arr, alloc_arr, key_of, &keys_);               \
		strmap_release(&keys_);                                                             \
	} while (0)

/* Into an empty dst->ARR, src's array (and its key index, whose keys are MOVE_KEYED's and whose
 * positions are the array's) changes hands instead of being copied entry by entry: the first
 * list page, list or cluster joined costs no second copy of its objects. */
#define SWAP_INTO_EMPTY(dst, src, arr, n_arr, alloc_arr)                                         \
	do {                                                                                       \
		if (!(dst)->n_arr) {                                                                \
			void *a_ = (dst)->arr;                                                       \
			size_t c_ = (dst)->alloc_arr;                                                \
			(dst)->arr = (src)->arr, (dst)->n_arr = (src)->n_arr;                        \
			(dst)->alloc_arr = (src)->alloc_arr;                                         \
			(src)->arr = a_, (src)->n_arr = 0, (src)->alloc_arr = c_;                    \
		}                                                                                   \
	} while (0)

static void swap_strmaps(struct strmap *a, struct strmap *b)
{
	struct strmap t = *a;
	*a = *b;
	*b = t;
}

/* Moves src's entries to the end of dst (PVs/PVCs already in dst are dropped, as
 * kube_objects_load would); src is left released. */
void kube_set_move(struct kube_set *dst, struct kube_set *src)
{
	struct kube_set discard;
	kube_set_init(&discard);
	if (!dst->n_pvs && !dst->pv_by_name.used) {
		SWAP_INTO_EMPTY(dst, src, pvs, n_pvs, alloc_pvs);
		swap_strmaps(&dst->pv_by_name, &src->pv_by_name);
	}
	if (!dst->n_pvcs && !dst->pvc_by_key.used) {
		SWAP_INTO_EMPTY(dst, src, pvcs, n_pvcs, alloc_pvcs);
		swap_strmaps(&dst->pvc_by_key, &src->pvc_by_key);
	}
	MOVE_KEYED(dst, src, &discard, pvs, n_pvs, alloc_pvs, pv_key, &dst->pv_by_name);
	MOVE_KEYED(dst, src, &discard, pvcs, n_pvcs, alloc_pvcs, pvc_key, &dst->pvc_by_key);
	SWAP_INTO_EMPTY(dst, src, uses, n_uses, alloc_uses);
	SWAP_INTO_EMPTY(dst, src, nodes, n_nodes, alloc_nodes);
	SWAP_INTO_EMPTY(dst, src, usage, n_usage, alloc_usage);
	for (size_t i = 0; i < src->n_uses; i++) {
		XGROW(dst->uses, dst->n_uses, dst->alloc_uses);
		dst->uses[dst->n_uses++] = src->uses[i];
	}
	for (size_t i = 0; i < src->n_nodes; i++) {
		XGROW(dst->nodes, dst->n_nodes, dst->alloc_nodes);
		dst->nodes[dst->n_nodes++] = src->nodes[i];
	}
	for (size_t i = 0; i < src->n_usage; i++) {
		XGROW(dst->usage, dst->n_usage, dst->alloc_usage);
		dst->usage[dst->n_usage++] = src->usage[i];
	}
	dst->ignored_pvs += src->ignored_pvs;
	for (size_t i = 0; i < src->n_skipped_pvs; i++) {
		XGROW(dst->skipped_pvs, dst->n_skipped_pvs, dst->alloc_skipped_pvs);
		dst->skipped_pvs[dst->n_skipped_pvs++] = src->skipped_pvs[i];
	}
	src->n_skipped_pvs = 0;
	kube_set_move_shared(dst, src); /* the moved objects' (shared) strings */
	src->n_pvs = src->n_pvcs = src->n_uses = src->n_nodes = src->n_usage = 0;
	kube_set_release(src);
	kube_set_release(&discard);
}

/* Moves src's StorageClasses, StatefulSets, VACs, notices and cluster versions into dst
 * (one entry per cluster and name, the first kept); src is left released. */
void kube_fleet_move(struct fleet *dst, struct fleet *src)
{
	struct fleet discard;
	fleet_init(&discard);
	MOVE_FIRST_KEPT(dst, src, &discard, scs, n_scs, alloc_scs, sc_key);
	MOVE_FIRST_KEPT(dst, src, &discard, sts, n_sts, alloc_sts, sts_key);
	MOVE_FIRST_KEPT(dst, src, &discard, vacs, n_vacs, alloc_vacs, vac_key);
	for (size_t i = 0; i < src->n_notices; i++) {
		XGROW(dst->notices, dst->n_notices, dst->alloc_notices);
		dst->notices[dst->n_notices++] = src->notices[i];
	}
	for (size_t i = 0; i < src->n_clusters; i++) {
		size_t di = fleet_add_cluster(dst, src->clusters[i]);
		if (src->cluster_versions[i] && !dst->cluster_versions[di]) {
			dst->cluster_versions[di] = src->cluster_versions[i];
			src->cluster_versions[i] = NULL;
		}
	}
	src->n_notices = 0;
	fleet_release(src);
	fleet_release(&discard);
}

/* ---- reading a cluster: its lists, then kubelet stats, each on a bounded pool ----
 *
 * With opt.concurrency > 1 the lists (and then the nodes' stats) are read by tasks of a
 * workpool, each on a client of its own (kube_client_init_worker: one token bucket and one
 * credential for the cluster); every task reads into a private set and fleet that
 * workpool_run_ordered's merge moves into the caller's in the sequential order as soon as its
 * predecessors are in. The first failing list in that order is the error, as when read one
 * after another (then also no later list is started). */

/* The clients the tasks of one pool borrow: the caller's, plus workers. At most `n` tasks run
 * at once, so a free client is always there. */
struct client_set {
	struct kube_client *parent;
	struct kube_client *workers;
	size_t n_workers;
	unsigned char *busy; /* [0] = parent, [1 + k] = workers[k] */
	pthread_mutex_t lock;
};

static void client_set_init(struct client_set *cs, struct kube_client *parent)
{
	memset(cs, 0, sizeof *cs);
	cs->parent = parent;
	cs->busy = xcalloc(1, 1);
	pthread_mutex_init(&cs->lock, NULL);
}

/* Makes `want` clients available (1 = the parent alone: no worker). Only while no task runs. */
static int client_set_grow(struct client_set *cs, size_t want, struct buf *err)
{
	if (want <= cs->n_workers + 1)
		return 0;
	cs->workers = xrealloc(cs->workers, (want - 1) * sizeof *cs->workers);
	cs->busy = xrealloc(cs->busy, want);
	memset(cs->busy, 0, want);
	for (; cs->n_workers < want - 1; cs->n_workers++) {
		int rc = kube_client_init_worker(&cs->workers[cs->n_workers], cs->parent, err);
		if (rc)
			return rc;
	}
	return 0;
}

static void client_set_release(struct client_set *cs)
{
	for (size_t k = 0; k < cs->n_workers; k++)
		kube_client_release_worker(cs->parent, &cs->workers[k]);
	free(cs->workers);
	free(cs->busy);
	pthread_mutex_destroy(&cs->lock);
}

static struct kube_client *client_take(struct client_set *cs)
{
	struct kube_client *c = cs->parent;
	pthread_mutex_lock(&cs->lock);
	for (size_t k = 0; k <= cs->n_workers; k++)
		if (!cs->busy[k]) {
			cs->busy[k] = 1;
			c = k ? &cs->workers[k - 1] : cs->parent;
			break;
		}
	pthread_mutex_unlock(&cs->lock);
	return c;
}

static void client_give_back(struct client_set *cs, struct kube_client *c)
{
	pthread_mutex_lock(&cs->lock);
	cs->busy[c == cs->parent ? 0 : 1 + (size_t)(c - cs->workers)] = 0;
	pthread_mutex_unlock(&cs->lock);
}

/* Tasks at once for n of them: the client option, never more than the pool allows. */
static size_t pool_width(const struct kube_client *c, size_t n)
{
	size_t w = c->opt.concurrency > 1 ? (size_t)c->opt.concurrency : 1;
	if (w > WORKPOOL_MAX_WORKERS)
		w = WORKPOOL_MAX_WORKERS;
	return w < n ? w : (n ? n : 1);
}

/* The cluster's part being read, and where it goes. */
struct cluster_read {
	struct client_set clients;
	const char *context; /* for origins */
	const char *cluster;
	struct kube_set *ks;
	struct fleet *f;
	struct buf *err;
	int rc;
	pthread_t caller;    /* progress is drawn per thread: steps only from the caller's */
	size_t done, total;  /* progress of the phase running */
};

static void step(struct cluster_read *cr, const char *phase)
{
	cr->done++;
	if (pthread_equal(pthread_self(), cr->caller))
		progress_report(cr->clients.parent->opt.progress, cr->clients.parent->opt.progress_ctx, PROGRESS_STEP,
				phase, cr->cluster, cr->done, cr->total);
}

/* One list (kind) of the cluster, read page by page into its own set and fleet. */
struct list_job {
	const char *path; /* NULL: the VolumeAttributesClasses, path found by discovery */
	const char *cluster;
	struct buf origin;
	struct kube_set ks;
	struct fleet f;
	int rc;
	struct buf err;
};

static int inv_page(void *ctx, const char *json, size_t len, unsigned page, struct buf *err)
{
	struct list_job *x = ctx;
	if (page == 0) { /* first page, or the list restarted: forget earlier pages */
		kube_set_release(&x->ks);
		fleet_release(&x->f);
		kube_set_init(&x->ks);
		fleet_init(&x->f);
	}
	int rc = kube_objects_load(&x->ks, &x->f, x->cluster, json, len, x->origin.s, err);
	return rc < 0 ? rc : 0;
}

static void list_job_release(struct list_job *j)
{
	buf_release(&j->origin);
	kube_set_release(&j->ks);
	fleet_release(&j->f);
	buf_release(&j->err);
}

struct list_fanout {
	struct cluster_read *cr;
	struct list_job *jobs;
	char **nodes; /* the node list's names, for the stats */
	size_t n_nodes;
};

static void read_list(struct kube_client *c, struct list_job *j)
{
	struct buf path = BUF_INIT;
	j->rc = 0;
	if (j->path) {
		buf_adds(&path, j->path);
	} else {
		const char *ver = NULL;
		j->rc = kube_vac_api_version(c, &ver, &j->err);
		if (!j->rc && ver)
			kube_pathf(&path, "/apis/storage.k8s.io/%s/volumeattributesclasses", ver);
	}
	if (!j->rc && path.len) {
		buf_addf(&j->origin, "context '%s' list %s", c->target.context, path.s);
		j->rc = kube_list(c, path.s, inv_page, j, &j->err);
	}
	buf_release(&path);
}

static void list_task(void *ctx, size_t i)
{
	struct list_fanout *fan = ctx;
	struct kube_client *c = client_take(&fan->cr->clients);
	read_list(c, &fan->jobs[i]);
	client_give_back(&fan->cr->clients, c);
}

static int list_merge(void *ctx, size_t i)
{
	struct list_fanout *fan = ctx;
	struct cluster_read *cr = fan->cr;
	struct list_job *j = &fan->jobs[i];
	if (j->path)
		step(cr, "kube lists");
	if (j->rc) {
		cr->rc = j->rc;
		buf_adds(cr->err, j->err.s ? j->err.s : "");
		return 1;
	}
	if (j->path && strcmp(j->path, "/api/v1/nodes") == 0) {
		fan->n_nodes = j->ks.n_nodes;
		fan->nodes = j->ks.n_nodes ? xcalloc(j->ks.n_nodes, sizeof(char *)) : NULL;
		for (size_t k = 0; k < j->ks.n_nodes; k++)
			fan->nodes[k] = xstrdup(j->ks.nodes[k].name);
	}
	kube_set_move(cr->ks, &j->ks);
	kube_fleet_move(cr->f, &j->f);
	list_job_release(j);
	return 0;
}

/* One node's kubelet stats/summary, into its own set and fleet (usage and notices). */
struct node_job {
	struct kube_set ks;
	struct fleet f;
	int forbidden; /* 403: no node's stats will be readable */
};

struct node_fanout {
	struct cluster_read *cr;
	char **nodes;
	struct node_job *jobs;
};

static void read_node(struct kube_client *c, const char *cluster, const char *node, struct node_job *j)
{
	struct buf path = BUF_INIT, body = BUF_INIT, e = BUF_INIT;
	kube_pathf(&path, "/api/v1/nodes/%s/proxy/stats/summary", node);
	long st = 0;
	int rc = kube_get(c, path.s, NULL, &body, &st, &e);
	if (rc == EM_EAUTH && st == 403) {
		j->forbidden = 1;
	} else if (rc) {
		fleet_add_notice(&j->f, "volume usage unavailable for node '%s' in cluster '%s': %s", node, cluster, e.s);
	} else {
		struct buf origin = BUF_INIT;
		buf_addf(&origin, "context '%s' node '%s' stats/summary", c->target.context, node);
		rc = kube_objects_load(&j->ks, &j->f, cluster, body.s, body.len, origin.s, &e);
		if (rc < 0)
			fleet_add_notice(&j->f, "volume usage unavailable for node '%s' in cluster '%s': %s", node, cluster,
					 e.s);
		buf_release(&origin);
	}
	buf_release(&path);
	buf_release(&body);
	buf_release(&e);
}

static void node_task(void *ctx, size_t i)
{
	struct node_fanout *fan = ctx;
	struct kube_client *c = client_take(&fan->cr->clients);
	read_node(c, fan->cr->cluster, fan->nodes[i], &fan->jobs[i]);
	client_give_back(&fan->cr->clients, c);
}

static int node_merge(void *ctx, size_t i)
{
	struct node_fanout *fan = ctx;
	struct cluster_read *cr = fan->cr;
	struct node_job *j = &fan->jobs[i];
	if (j->forbidden) {
		fleet_add_notice(cr->f, "volume usage unavailable in cluster '%s': forbidden", cr->cluster);
		return 1; /* stop asking */
	}
	step(cr, "kubelet stats");
	kube_set_move(cr->ks, &j->ks);
	kube_fleet_move(cr->f, &j->f);
	return 0;
}

/* The nodes' stats on the lists' clients, and more when there are more nodes. Never fails:
 * usage only sharpens the plan (a worker that cannot be had leaves fewer threads). */
static void read_usage(struct cluster_read *cr, char **nodes, size_t n)
{
	struct kube_client *c = cr->clients.parent;
	size_t width = pool_width(c, n);
	struct buf e = BUF_INIT;
	if (client_set_grow(&cr->clients, width, &e))
		width = cr->clients.n_workers + 1;
	buf_release(&e);
	cr->done = 0;
	cr->total = n;
	progress_report(c->opt.progress, c->opt.progress_ctx, PROGRESS_STEP, "kubelet stats", cr->cluster, 0, n);
	struct node_job *jobs = xcalloc(n ? n : 1, sizeof *jobs);
	for (size_t i = 0; i < n; i++) {
		kube_set_init(&jobs[i].ks);
		fleet_init(&jobs[i].f);
	}
	struct node_fanout fan = {cr, nodes, jobs};
	workpool_run_ordered(n, (int)width, node_task, node_merge, &fan);
	for (size_t i = 0; i < n; i++) {
		kube_set_release(&jobs[i].ks);
		fleet_release(&jobs[i].f);
	}
	free(jobs);
	progress_report(c->opt.progress, c->opt.progress_ctx, PROGRESS_DONE, "kubelet stats", cr->cluster, cr->done,
			n);
}

static int read_version(struct kube_client *c, const char *cluster_name, struct kube_set *ks, struct fleet *f,
			struct buf *err)
{
	struct buf raw = BUF_INIT, doc = BUF_INIT, origin = BUF_INIT;
	int rc = kube_server_version(c, NULL, &raw, err);
	if (!rc) {
		struct jsonw w; /* the /version answer as a member, for the one object reader */
		jsonw_init(&w, &doc, JSONW_COMPACT);
		jsonw_object(&w);
		jsonw_key(&w, "serverVersion");
		jsonw_raw(&w, raw.s, raw.len);
		jsonw_end(&w);
		buf_addf(&origin, "context '%s' /version", c->target.context);
		rc = kube_objects_load(ks, f, cluster_name, doc.s, doc.len, origin.s, err);
		rc = rc < 0 ? rc : 0;
	}
	buf_release(&raw);
	buf_release(&doc);
	buf_release(&origin);
	return rc;
}

int kube_inventory_load(struct kube_client *c, const char *cluster_name, struct kube_set *ks, struct fleet *f,
			unsigned what, struct buf *err)
{
	static const struct {
		unsigned bit;
		const char *path;
	} lists[] = {
		{KUBE_INV_STORAGECLASSES, "/apis/storage.k8s.io/v1/storageclasses"},
		{KUBE_INV_PVS, "/api/v1/persistentvolumes"},
		{KUBE_INV_PVCS, "/api/v1/persistentvolumeclaims"},
		{KUBE_INV_STATEFULSETS, "/apis/apps/v1/statefulsets"},
		{KUBE_INV_PODS, "/api/v1/pods"},
		{KUBE_INV_NODES, "/api/v1/nodes"},
	};
	fleet_add_cluster(f, cluster_name);
	if (what & KUBE_INV_USAGE)
		what |= KUBE_INV_NODES;
	if (what & KUBE_INV_VERSION) {
		int rc = read_version(c, cluster_name, ks, f, err);
		if (rc)
			return rc;
	}
	/* The lists, then the VACs (discovery + list) last, in the order they are merged. */
	struct list_job jobs[sizeof lists / sizeof lists[0] + 1];
	size_t n_jobs = 0, n_lists = 0;
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
		if (what & lists[i].bit)
			jobs[n_jobs++] = (struct list_job){.path = lists[i].path};
	n_lists = n_jobs;
	if (what & KUBE_INV_VACS)
		jobs[n_jobs++] = (struct list_job){.path = NULL};
	for (size_t i = 0; i < n_jobs; i++) {
		jobs[i].cluster = cluster_name;
		buf_init(&jobs[i].origin);
		buf_init(&jobs[i].err);
		kube_set_init(&jobs[i].ks);
		fleet_init(&jobs[i].f);
	}
	struct cluster_read cr = {.context = c->target.context, .cluster = cluster_name, .ks = ks, .f = f,
				  .err = err, .caller = pthread_self(), .total = n_lists};
	size_t width = pool_width(c, n_jobs);
	client_set_init(&cr.clients, c);
	int rc = client_set_grow(&cr.clients, width, err);
	struct list_fanout fan = {&cr, jobs, NULL, 0};
	if (!rc) {
		progress_report(c->opt.progress, c->opt.progress_ctx, PROGRESS_STEP, "kube lists", cluster_name, 0,
				n_lists);
		workpool_run_ordered(n_jobs, (int)width, list_task, list_merge, &fan);
		progress_report(c->opt.progress, c->opt.progress_ctx, PROGRESS_DONE, "kube lists", cluster_name, cr.done,
				n_lists);
		rc = cr.rc;
	}
	for (size_t i = 0; i < n_jobs; i++)
		list_job_release(&jobs[i]);
	if (!rc && (what & KUBE_INV_USAGE))
		read_usage(&cr, fan.nodes, fan.n_nodes);
	client_set_release(&cr.clients);
	for (size_t i = 0; i < fan.n_nodes; i++)
		free(fan.nodes[i]);
	free(fan.nodes);
	return rc;
}
