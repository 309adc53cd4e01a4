/*
 * inventory.c - builds the fleet from its sources and joins the Kubernetes view onto EBS.
 *
 * Entry points: inventory_load_exports (offline: AWS CLI and kubectl exports, JSON or YAML),
 * inventory_join (shared with the live read); for inventory_live.c (inventory_internal.h):
 * inventory_join_live, and what the join could not place in a live run (inventory_report_missing,
 * inventory_leave_out_of_scope, inventory_add_warning). The live reads themselves
 * (inventory_load_live: the AWS and Kubernetes APIs, and their fan-out) are inventory_live.c.
 *
 * Join rules:
 *   1. PV -> volume by the volume id in spec.csi.volumeHandle / awsElasticBlockStore.volumeID.
 *   2. PV.spec.claimRef -> PVC (namespace/name) in the same cluster.
 *   3. PVC -> usage (kubelet stats/summary), pod -> node -> instance type.
 *   4. PVC named TEMPLATE-STS-ORDINAL in the StatefulSet's namespace -> that StatefulSet.
 *   5. A volume bound in two clusters keeps the first binding; a notice names both.
 *   6. A PV whose volume is absent from the EC2 data becomes a `missing` volume, so the plan
 *      shows it (flagged volume-not-found) instead of silently dropping it.
 *   7. A PV of an EBS driver whose handle is no EBS volume id (node-local `local-ebs://...`) is
 *      not in the join: one warning counts and names such PVs (warn_skipped_pvs).
 *
 * The live read's rules about missing data (what a live run reports, and which PVs --region
 * leaves out) are at the top of inventory_live.c; the functions that apply them to the join's
 * input are at the end of this file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_cloudtrail.h"
#include "ebsmigrate/aws_cloudwatch.h"
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/saved_accounts.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/yamlin.h"
#include "inventory_internal.h"

static const struct storage_class *find_sc(const struct fleet *f, const char *cluster, const char *name)
{
	for (size_t i = 0; name && i < f->n_scs; i++)
		if (strcmp(f->scs[i].cluster, cluster) == 0 && strcmp(f->scs[i].name, name) == 0)
			return &f->scs[i];
	return NULL;
}

/* The StatefulSet owning a claim named TEMPLATE-STATEFULSET-ORDINAL (Kubernetes' naming), found
 * through an index of "cluster\tnamespace\tname" -> statefulset instead of a scan per claim. */
static char *owner_statefulset(const struct fleet *f, const struct strmap *sts_index, const char *cluster,
			       const char *ns, const char *pvc)
{
	size_t n = strlen(pvc);
	size_t end = n;
	while (end > 0 && pvc[end - 1] >= '0' && pvc[end - 1] <= '9')
		end--;
	if (end == n || end < 3 || pvc[end - 1] != '-')
		return NULL;
	end--; /* pvc[0..end) = "TEMPLATE-STATEFULSET" */
	struct buf key = BUF_INIT;
	char *found = NULL;
	for (size_t dash = 1; dash + 1 < end && !found; dash++) {
		if (pvc[dash] != '-')
			continue;
		buf_reset(&key);
		buf_addf(&key, "%s\t%s\t%.*s", cluster, ns, (int)(end - dash - 1), pvc + dash + 1);
		size_t pos;
		if (!strmap_get(sts_index, key.s, &pos))
			continue;
		const struct statefulset_ref *s = &f->sts[pos];
		for (size_t t = 0; t < s->n_templates; t++)
			if (strlen(s->claim_templates[t]) == dash && strncmp(pvc, s->claim_templates[t], dash) == 0)
				found = xstrdup(s->name);
	}
	buf_release(&key);
	return found;
}

static struct volume *missing_volume(struct fleet *f, const struct kube_pv *pv)
{
	struct volume *v = fleet_add_volume(f, pv->volume_id);
	v->missing = 1;
	v->size_gib = pv->capacity_gib;
	const struct storage_class *sc = find_sc(f, pv->cluster, pv->storage_class);
	const char *type = pv->type_param ? pv->type_param : (sc ? sc->type : NULL);
	/* The in-tree provisioner's default type is gp2 (the CSI driver's is gp3). */
	if (!type && sc && sc->provisioner)
		type = strcmp(sc->provisioner, EBS_INTREE_DRIVER) == 0 ? "gp2"
		       : strcmp(sc->provisioner, EBS_CSI_DRIVER) == 0 ? "gp3" : NULL;
	v->type = ebs_type_parse(type);
	if (pv->zone) {
		v->availability_zone = xstrdup(pv->zone);
		if (volume_split_az(pv->zone, &v->region, &v->location)) {
			v->region = NULL;
			v->location = NULL;
		}
	}
	v->state = xstrdup("unknown");
	v->source = xstrdup(pv->origin);
	return v;
}

/* Moves a string out of the kube_set into the fleet: no second copy of 100,000 PVs' names. */
static char *take(char **s)
{
	char *v = *s;
	*s = NULL;
	return v;
}

/* report_missing 0: the caller (the live path) has told the missing volumes apart by region
 * and said so itself. */
/* m[key formatted into k] = i (k is scratch). */
static void put_key(struct strmap *m, struct buf *k, size_t i, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put_key(struct strmap *m, struct buf *k, size_t i, const char *fmt, ...)
{
	va_list ap;
	buf_reset(k);
	va_start(ap, fmt);
	buf_vaddf(k, fmt, ap);
	va_end(ap);
	strmap_put(m, k->s, i);
}

/* The pods' claim uses, or the kubelet's usage figures, by claim ("cluster\tns\tname"): for a
 * claim among the PVCs, by the PVC's position (the set's pvc_by_key already holds the key);
 * for any other claim a PV may name, in a map of their own. A map of every entry's formatted
 * key (100,000 of them for uses, as many again for usage) was built next to the whole fleet
 * and every Kubernetes object at the join, the live run's peak. The last entry of a claim
 * wins, as strmap_put's replacing did. */
struct claim_index {
	size_t *at_pvc; /* [PVC position]: entry + 1, 0 = none */
	struct strmap other;
};

static void claim_index_build(struct claim_index *x, const struct kube_set *ks, struct buf *k, size_t n,
			      const char *(*claim_of)(const struct kube_set *, size_t, const char **, const char **))
{
	x->at_pvc = n && ks->n_pvcs ? xcalloc(ks->n_pvcs, sizeof *x->at_pvc) : NULL;
	x->other = (struct strmap)STRMAP_INIT;
	for (size_t i = 0; i < n; i++) {
		const char *cluster, *ns;
		const char *name = claim_of(ks, i, &cluster, &ns);
		size_t pos;
		buf_reset(k);
		buf_addf(k, "%s\t%s\t%s", cluster, ns, name);
		if (x->at_pvc && strmap_get(&ks->pvc_by_key, k->s, &pos))
			x->at_pvc[pos] = i + 1;
		else
			strmap_put(&x->other, k->s, i);
	}
}

/* The entry of the claim keyed `key`, whose position among the PVCs is pvc_pos (have_pvc 0:
 * not a listed PVC). */
static int claim_index_get(const struct claim_index *x, int have_pvc, size_t pvc_pos, const char *key, size_t *i)
{
	if (have_pvc) {
		if (!x->at_pvc || !x->at_pvc[pvc_pos])
			return 0;
		*i = x->at_pvc[pvc_pos] - 1;
		return 1;
	}
	return strmap_get(&x->other, key, i);
}

static void claim_index_release(struct claim_index *x)
{
	free(x->at_pvc);
	strmap_release(&x->other);
}

static const char *use_claim(const struct kube_set *ks, size_t i, const char **cluster, const char **ns)
{
	*cluster = ks->uses[i].cluster, *ns = ks->uses[i].namespace_;
	return ks->uses[i].claim;
}

static const char *usage_claim(const struct kube_set *ks, size_t i, const char **cluster, const char **ns)
{
	*cluster = ks->usage[i].cluster, *ns = ks->usage[i].namespace_;
	return ks->usage[i].pvc;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* How many skipped PVs the warning names; the rest are counted. */
#define SKIPPED_PVS_NAMED 10

/* The one warning for the PVs kube_objects skipped as no EBS volume ebsmigrate can migrate: how
 * many, and which (sorted, each once: a PV exported twice is one PV). A warning of the live
 * result when r is given; a notice (which plan shows as a warning) for exports. */
static void warn_skipped_pvs(struct fleet *f, struct inventory_live_result *r, struct kube_set *ks)
{
	size_t n = 0;
	if (!ks->n_skipped_pvs)
		return; /* (qsort must not be given the NULL of an empty list) */
	qsort(ks->skipped_pvs, ks->n_skipped_pvs, sizeof *ks->skipped_pvs, by_text);
	for (size_t i = 0; i < ks->n_skipped_pvs; i++)
		if (!n || strcmp(ks->skipped_pvs[i], ks->skipped_pvs[n - 1]) != 0)
			ks->skipped_pvs[n++] = ks->skipped_pvs[i];
		else
			free(ks->skipped_pvs[i]);
	ks->n_skipped_pvs = n;
	struct buf b = BUF_INIT;
	buf_addf(&b, "skipped %zu PersistentVolume(s) that are not EBS volumes ebsmigrate can migrate: ", n);
	for (size_t i = 0; i < n && i < SKIPPED_PVS_NAMED; i++)
		buf_addf(&b, "%s%s", i ? ", " : "", ks->skipped_pvs[i]);
	if (n > SKIPPED_PVS_NAMED)
		buf_addf(&b, " and %zu more", n - SKIPPED_PVS_NAMED);
	if (r)
		inventory_add_warning(f, r, "%s", b.s);
	else
		fleet_add_notice(f, "%s", b.s);
	buf_release(&b);
}

/* r: the live result whose warnings get the skipped-PV warning (NULL: a notice, for exports);
 * skip (may be NULL): PVs left out (outside --region), by index. */
void inventory_join_live(struct fleet *f, struct kube_set *ks, int have_ec2_data, int report_missing,
			 struct inventory_live_result *r, const unsigned char *skip)
{
	struct strmap nodes = STRMAP_INIT, sts = STRMAP_INIT;
	struct claim_index usage, uses;
	struct buf k = BUF_INIT;
	for (size_t i = 0; i < f->n_sts; i++)
		put_key(&sts, &k, i, "%s\t%s\t%s", f->sts[i].cluster, f->sts[i].namespace_, f->sts[i].name);
	claim_index_build(&usage, ks, &k, ks->n_usage, usage_claim);
	claim_index_build(&uses, ks, &k, ks->n_uses, use_claim);
	for (size_t i = 0; i < ks->n_nodes; i++)
		put_key(&nodes, &k, i, "%s\t%s", ks->nodes[i].cluster, ks->nodes[i].name);
	size_t n_missing = 0, n_double = 0;
	/* The binding that took a PVC's strings; a later PV claiming the same PVC copies them. */
	struct kube_binding **pvc_taker = ks->n_pvcs ? xcalloc(ks->n_pvcs, sizeof *pvc_taker) : NULL;
	for (size_t i = 0; i < ks->n_pvs; i++) {
		struct kube_pv *pv = &ks->pvs[i];
		if (skip && skip[i])
			continue;
		struct volume *v = fleet_find(f, pv->volume_id);
		if (!v) {
			v = missing_volume(f, pv);
			n_missing++;
		} else if (v->kube) {
			if (!n_double++)
				fleet_add_notice(f, "volume '%s' is bound to PV '%s' in cluster '%s' and PV '%s' in cluster '%s'; "
						    "using the first",
						 v->volume_id, v->kube->pv, v->kube->cluster, pv->name, pv->cluster);
			continue;
		}
		struct kube_binding *b = xcalloc(1, sizeof *b);
		b->cluster = take(&pv->cluster);
		b->pv = take(&pv->name);
		b->driver = take(&pv->driver);
		b->in_tree = pv->in_tree;
		b->storage_class = take(&pv->storage_class);
		if (pv->claim_namespace && pv->claim_name) {
			b->namespace_ = take(&pv->claim_namespace);
			b->pvc = take(&pv->claim_name);
			size_t pos = 0, at;
			buf_reset(&k);
			buf_addf(&k, "%s\t%s\t%s", b->cluster, b->namespace_, b->pvc);
			int have_pvc = strmap_get(&ks->pvc_by_key, k.s, &pos);
			if (have_pvc) {
				struct kube_pvc *c = &ks->pvcs[pos];
				const struct kube_binding *first = pvc_taker[pos];
				if (!first) {
					pvc_taker[pos] = b;
					b->vac = take(&c->vac);
					b->current_vac = take(&c->current_vac);
					b->labels = c->labels;
					b->n_labels = c->n_labels;
					c->labels = NULL;
					c->n_labels = 0;
				} else {
					b->vac = xstrdup(first->vac);
					b->current_vac = xstrdup(first->current_vac);
					if (first->n_labels) {
						b->labels = xcalloc(first->n_labels, sizeof *b->labels);
						for (size_t l = 0; l < first->n_labels; l++) {
							b->labels[l].key = xstrdup(first->labels[l].key);
							b->labels[l].value = xstrdup(first->labels[l].value);
						}
						b->n_labels = first->n_labels;
					}
				}
				if (!b->storage_class)
					b->storage_class = xstrdup(c->storage_class);
			}
			if (claim_index_get(&usage, have_pvc, pos, k.s, &at)) {
				b->has_usage = 1;
				b->used_bytes = ks->usage[at].used_bytes;
				b->capacity_bytes = ks->usage[at].capacity_bytes;
			}
			if (claim_index_get(&uses, have_pvc, pos, k.s, &at)) {
				b->node = xstrdup(ks->uses[at].node);
				buf_reset(&k);
				buf_addf(&k, "%s\t%s", b->cluster, b->node);
				size_t npos;
				if (strmap_get(&nodes, k.s, &npos))
					b->node_instance_type = xstrdup(ks->nodes[npos].instance_type);
			}
			b->statefulset = owner_statefulset(f, &sts, b->cluster, b->namespace_, b->pvc);
		}
		v->kube = b;
	}
	if (n_double > 1)
		fleet_add_notice(f, "%zu more volumes are bound in more than one cluster", n_double - 1);
	if (n_missing && report_missing && have_ec2_data)
		fleet_add_notice(f, "%zu PersistentVolume(s) name EBS volumes absent from the EC2 data (flagged volume-not-found)",
				 n_missing);
	else if (n_missing && report_missing)
		fleet_add_notice(f, "no EC2 data given: %zu EBS PersistentVolume(s) listed from Kubernetes only; "
				    "their configuration, prices and modification history are unknown",
				 n_missing);
	if (ks->ignored_pvs)
		fleet_add_notice(f, "%zu PersistentVolume(s) of other drivers ignored", ks->ignored_pvs);
	warn_skipped_pvs(f, r, ks);
	free(pvc_taker);
	buf_release(&k);
	claim_index_release(&usage);
	claim_index_release(&uses);
	strmap_release(&nodes);
	strmap_release(&sts);
}

void inventory_join(struct fleet *f, struct kube_set *ks, int have_ec2_data)
{
	inventory_join_live(f, ks, have_ec2_data, 1, NULL, NULL);
}

static char *default_cluster_name(const char *path)
{
	static const char *const exts[] = {".json", ".yaml", ".yml", NULL};
	if (strcmp(path, "-") == 0)
		return xstrdup("default");
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	for (int i = 0; exts[i]; i++) {
		size_t k = strlen(exts[i]);
		if (n > k && strcmp(base + n - k, exts[i]) == 0) {
			n -= k;
			break;
		}
	}
	return xstrndup(base, n);
}

/* An export's whole text, as JSON: a YAML export (kubectl -o yaml, aws --output yaml) converted
 * by yamlin, which the file path does while streaming (jsonx_stream_open). */
static int read_export_text(const char *path, struct buf *text, struct buf *err)
{
	int rc = em_read_input(path, text, err);
	if (rc || yamlin_is_json(text->s, text->len))
		return rc;
	struct buf json = BUF_INIT;
	rc = yamlin_to_json(text->s, text->len, path, &json, err);
	buf_release(text);
	*text = json;
	return rc;
}

/* The CloudWatch and CloudTrail documents of one export (each reader skips the other kinds). */
static int load_deferred(struct fleet *f, int kinds, const char *text, size_t len, const char *path, struct buf *err)
{
	int r = (kinds & EC2_EXPORT_METRICS) ? aws_cloudwatch_load_export(f, text, len, path, err) : 0;
	if (r < 0)
		return r;
	if ((kinds & EC2_EXPORT_ACCOUNTS) && (r = saved_accounts_load(f, text, len, path, err)) < 0)
		return r;
	return (kinds & EC2_EXPORT_CLOUDTRAIL) ? aws_cloudtrail_load_export(f, text, len, path, err) : 0;
}

int inventory_load_exports(struct fleet *f, const struct inventory_exports *src, struct buf *err)
{
	struct ec2_mod_list mods;
	memset(&mods, 0, sizeof mods);
	struct kube_set ks;
	kube_set_init(&ks);
	struct buf text = BUF_INIT;
	int rc = 0;
	/* CloudWatch and CloudTrail documents are read once every volume is known: their files are
	 * read again then (one file's text in memory at a time), except standard input, which is
	 * kept. A file may hold both kinds (and EC2's): each reader takes its own documents. */
	struct buf *metric_text = xcalloc(src->n_aws + 1, sizeof *metric_text);
	size_t *metric_files = xcalloc(src->n_aws + 1, sizeof *metric_files), n_metric = 0;
	int *metric_kinds = xcalloc(src->n_aws + 1, sizeof *metric_kinds);
	for (size_t i = 0; i < src->n_aws && !rc; i++) {
		/* A file is read element by element (a 1.3 GB export needs no 1.3 GB); standard input
		 * whole, as its CloudWatch documents cannot be read a second time. */
		int is_stdin = strcmp(src->aws[i].path, "-") == 0, r;
		if (is_stdin) {
			buf_reset(&text);
			rc = read_export_text(src->aws[i].path, &text, err);
			if (rc)
				break;
			r = aws_ec2_load_export(f, &mods, text.s, text.len, src->aws[i].path, src->aws[i].label, err);
		} else {
			r = aws_ec2_load_file(f, &mods, src->aws[i].path, src->aws[i].label, err);
		}
		if (r > 0 && (r & (EC2_EXPORT_METRICS | EC2_EXPORT_CLOUDTRAIL | EC2_EXPORT_ACCOUNTS))) {
			if (is_stdin) {
				metric_text[n_metric] = text;
				buf_init(&text);
			}
			metric_kinds[n_metric] = r;
			metric_files[n_metric++] = i;
		}
		rc = r < 0 ? r : 0;
	}
	if (!rc) {
		aws_ec2_attach_mods(f, &mods);
		aws_ec2_apply_instances(f);
	}
	for (size_t k = 0; k < n_metric && !rc; k++) {
		const char *path = src->aws[metric_files[k]].path;
		if (!metric_text[k].len) {
			buf_reset(&text);
			rc = read_export_text(path, &text, err);
			if (rc)
				break;
			metric_text[k] = text;
			buf_init(&text);
		}
		rc = load_deferred(f, metric_kinds[k], metric_text[k].s, metric_text[k].len, path, err);
		buf_release(&metric_text[k]);
	}
	for (size_t k = 0; k < n_metric; k++)
		buf_release(&metric_text[k]);
	free(metric_text);
	free(metric_files);
	free(metric_kinds);
	buf_release(&text); /* the kubectl exports are read element by element */
	for (size_t i = 0; i < src->n_kube && !rc; i++) {
		char *cluster = src->kube[i].label ? xstrdup(src->kube[i].label) : default_cluster_name(src->kube[i].path);
		int r = kube_objects_load_file(&ks, f, cluster, src->kube[i].path, err);
		free(cluster);
		rc = r < 0 ? r : 0;
	}
	if (!rc && src->n_kube)
		inventory_join(f, &ks, src->n_aws > 0);
	buf_release(&text);
	kube_set_release(&ks);
	ec2_mod_list_release(&mods);
	return rc;
}

/* ---- what the join could not place (live runs: inventory_live.c calls these) ---- */

/* A fleet notice that is a warning: data the run was asked for and did not get. */
void inventory_add_warning(struct fleet *f, struct inventory_live_result *r, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	fleet_add_notice(f, "%s", b.s);
	buf_release(&b);
	r->warning_notices = xrealloc(r->warning_notices, (r->n_warning_notices + 1) * sizeof *r->warning_notices);
	r->warning_notices[r->n_warning_notices++] = f->n_notices - 1;
}

/* The region a PV's zone topology names; NULL (and nothing to free) when it has none. */
char *inventory_pv_region(const struct kube_pv *pv)
{
	char *region = NULL, *loc = NULL;
	if (pv->zone && volume_split_az(pv->zone, &region, &loc) != 0)
		region = NULL;
	free(loc);
	return region;
}

/* An account as messages name it: "ID (NAME)", "ID (profile 'P')" when its name is unknown, or
 * "(unknown) ..." for a profile whose credentials failed before STS said its id. */
void inventory_account_label(struct buf *b, const char *id, const char *name, const char *profile)
{
	buf_adds(b, id ? id : "(unknown)");
	if (name)
		buf_addf(b, " (%s)", name);
	else if (profile)
		buf_addf(b, " (profile '%s')", profile);
}

/* Several accounts: the accounts in scope that were not read in `region` (failed, or that
 * region failed for them), added to *names as "ID (NAME)". A volume id says nothing of its
 * account, so a volume missing from the accounts read may be in one of these. */
static size_t accounts_unread_in(const struct fleet *f, const char *region, char ***names, size_t *n_names)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n_accounts; i++) {
		const struct fleet_account *a = &f->accounts[i];
		if (!a->status || strcmp(a->status, "skipped") == 0 || strcmp(a->status, "read") == 0)
			continue;
		int unread = !a->n_regions; /* no credentials: no region was read */
		for (size_t g = 0; g < a->n_regions && !unread; g++)
			unread = strcmp(a->regions[g].region, region) == 0 && strcmp(a->regions[g].status, "read") != 0;
		if (!unread)
			continue;
		n++;
		struct buf label = BUF_INIT;
		inventory_account_label(&label, a->id, a->name, a->profile);
		names_add(names, n_names, label.s);
		buf_release(&label);
	}
	return n;
}

/* The region a PV's volume lies in, as far as Kubernetes tells: its zone's, or for a PV without
 * zone topology, the region of its cluster's first node when none of the cluster's nodes is in
 * one of regions (the PV cannot be in the scope then); NULL when neither tells. Caller frees. */
static char *pv_region_by_cluster(const struct kube_pv *pv, const struct kube_set *ks, const char *const *regions,
				  size_t n_regions)
{
	char *region = inventory_pv_region(pv);
	if (region)
		return region;
	const char *first = NULL;
	for (size_t k = 0; k < ks->n_nodes; k++) {
		const struct kube_node *node = &ks->nodes[k];
		if (!node->region || strcmp(node->cluster, pv->cluster) != 0)
			continue;
		for (size_t g = 0; g < n_regions; g++)
			if (strcmp(node->region, regions[g]) == 0)
				return NULL;
		first = first ? first : node->region;
	}
	return xstrdup(first);
}

/* --region given: marks the PVs whose volumes lie outside those regions (no region read holds
 * them and Kubernetes places them elsewhere, pv_region_by_cluster) so that the join leaves them
 * out, as `aws --region` shows nothing of another region, and counts them per region in one
 * note with the fix: "141 PVs are in ap-northeast-2, outside --region; add --region
 * ap-northeast-2 to plan them". Returns the marks (pvs index; NULL when none), caller frees. */
unsigned char *inventory_leave_out_of_scope(const struct inventory_live_options *o, struct inventory_live_result *r,
					    struct fleet *f, const struct kube_set *ks)
{
	unsigned char *out = NULL;
	char **regions = NULL;
	size_t n_regions = 0, *counts = NULL;
	for (size_t i = 0; i < ks->n_pvs; i++) {
		const struct kube_pv *pv = &ks->pvs[i];
		if (fleet_find(f, pv->volume_id))
			continue;
		char *region = pv_region_by_cluster(pv, ks, o->regions, o->n_regions);
		if (region && !names_have((char *const *)o->regions, o->n_regions, region)) {
			if (!out)
				out = xcalloc(ks->n_pvs, 1);
			out[i] = 1;
			size_t g = 0;
			while (g < n_regions && strcmp(regions[g], region) != 0)
				g++;
			if (g == n_regions) {
				names_add(&regions, &n_regions, region);
				counts = xrealloc(counts, n_regions * sizeof *counts);
				counts[g] = 0;
			}
			counts[g]++;
		}
		free(region);
	}
	if (n_regions) {
		struct buf note = BUF_INIT, fix = BUF_INIT;
		size_t total = 0;
		for (size_t g = 0; g < n_regions; g++) {
			total += counts[g];
			if (!g)
				buf_addf(&note, "%zu %s in %s", counts[g], counts[g] == 1 ? "PV is" : "PVs are", regions[g]);
			else
				buf_addf(&note, "%s%zu in %s", g + 1 == n_regions ? " and " : ", ", counts[g], regions[g]);
			buf_addf(&fix, "%s--region %s", g ? " " : "", regions[g]);
		}
		buf_addf(&note, ", outside --region; add %s to plan %s", fix.s, total == 1 ? "it" : "them");
		free(r->outside_regions_note);
		r->outside_regions_note = buf_detach(&note);
		buf_release(&fix);
	}
	names_free(regions, n_regions);
	free(counts);
	return out;
}

/* Says which PVs name volumes no region read holds, by why: a region read that lacks them (a
 * deleted volume: a result), a region read but not in every account (the volume may be in an
 * account not read), a region not read, or no region at all (nothing tells where to look).
 * Only the first is a plain notice. PVs outside --region (skip) are leave_out_of_scope's. */
void inventory_report_missing(struct fleet *f, struct inventory_live_result *r, const struct kube_set *ks,
			      const unsigned char *skip)
{
	size_t absent = 0, unread = 0, unplaced = 0, unread_acct = 0;
	const struct kube_pv *example = NULL, *acct_example = NULL;
	char **unread_regions = NULL, **unread_accts = NULL;
	size_t n_unread_regions = 0, n_unread_accts = 0;
	for (size_t i = 0; i < ks->n_pvs; i++) {
		const struct kube_pv *pv = &ks->pvs[i];
		if ((skip && skip[i]) || fleet_find(f, pv->volume_id))
			continue;
		char *region = inventory_pv_region(pv);
		if (region && has_region(r, region) && accounts_unread_in(f, region, &unread_accts, &n_unread_accts)) {
			unread_acct++;
			acct_example = acct_example ? acct_example : pv;
		} else if (region && has_region(r, region)) {
			absent++;
		} else if (region) {
			unread++;
			names_add(&unread_regions, &n_unread_regions, region);
		} else {
			unplaced++;
			example = example ? example : pv;
		}
		free(region);
	}
	if (absent)
		fleet_add_notice(f, "%zu PersistentVolume(s) name EBS volumes absent from the EC2 data of their region "
				    "(flagged volume-not-found)",
				 absent);
	if (unread_acct) {
		struct buf list = BUF_INIT;
		for (size_t i = 0; i < n_unread_accts; i++)
			buf_addf(&list, "%s%s", i ? ", " : "", unread_accts[i]);
		inventory_add_warning(f, r,
				      "%zu PersistentVolume(s) (e.g. PV '%s' in cluster '%s', volume '%s') name EBS volumes no "
				      "account read holds; account(s) %s were not read in their region and may hold them: flagged "
				      "volume-not-found, not known to be deleted",
				      unread_acct, acct_example->name, acct_example->cluster, acct_example->volume_id, list.s);
		buf_release(&list);
	}
	if (unread) {
		struct buf list = BUF_INIT, fix = BUF_INIT;
		for (size_t i = 0; i < n_unread_regions; i++) {
			buf_addf(&list, "%s%s", i ? ", " : "", unread_regions[i]);
			buf_addf(&fix, "%s--region %s", i ? " " : "", unread_regions[i]);
		}
		inventory_add_warning(f, r,
				      "%zu PersistentVolume(s) are in region(s) not read (%s): flagged volume-not-found; add %s to "
				      "read them",
				      unread, list.s, fix.s);
		buf_release(&list);
		buf_release(&fix);
	}
	if (unplaced) {
		struct buf list = BUF_INIT;
		for (size_t i = 0; i < r->n_regions; i++)
			buf_addf(&list, "%s%s", i ? ", " : "", r->regions[i]);
		inventory_add_warning(f, r,
				      "%zu PersistentVolume(s) without zone topology (e.g. PV '%s' in cluster '%s', volume '%s') "
				      "are in none of the regions read (%s): flagged volume-not-found; if they live in another "
				      "region, add --region REGION",
				      unplaced, example->name, example->cluster, example->volume_id, list.s);
		buf_release(&list);
	}
	names_free(unread_regions, n_unread_regions);
	names_free(unread_accts, n_unread_accts);
}
