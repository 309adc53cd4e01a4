/*
 * plan_manifests.c - `plan --manifests DIR`: the plan as files an operator reviews and applies.
 *
 * Entry points: manifest_build (render in memory), manifest_route_name/_parse, manifest_set_*;
 * manifest_vac_api (exposed for tests). The batch scripts are plan_manifests_scripts.c's,
 * putting the set on disk (manifest_check_dir, manifest_stage, manifest_write_dir,
 * manifest_write) plan_manifests_write.c's; what they share, plan_manifests_internal.h.
 * Rendering and quoting: template.c; the class name rule: apply_vac_name (apply_state.c).
 *
 * Layout (docs/manifests.md):
 *   DIR/README.md                    the order to apply, rollback, what is left out, warnings
 *   DIR/CLUSTER/kustomization.yaml   00 + 01 (what `kubectl apply -k` creates)
 *   DIR/CLUSTER/00-volumeattributesclasses.yaml   one class per distinct target (route vac)
 *   DIR/CLUSTER/01-storageclass-gp3.yaml          the new default gp3 StorageClass
 *   DIR/CLUSTER/02-storageclass-gp2-undefault.json  merge patch for the gp2 default class(es)
 *   DIR/CLUSTER/batches/batch-NNN-pvc-patches.sh, batch-NNN-rollback.sh
 *   DIR/CLUSTER/batches/batch-NNN-blocked-pvc-patches.sh (+ rollback)  after the others
 *   DIR/ec2[/ACCOUNT]/batch-NNN-modify-volume.sh, batch-NNN-rollback.sh, ...-blocked-...
 *
 * Invariants:
 *   - Only `migrate` and `blocked` items appear; batches follow the plan's order; blocked items
 *     come in later files, sorted by eligible_at, each guarded by its time.
 *   - Every target is explicit: VACs always carry type, iops and throughput (strings); every
 *     modify-volume gives --iops and --throughput; annotations give all three.
 *   - Route per volume: in-tree PVs, PVs without a claim, volumes outside Kubernetes and
 *     clusters older than 1.29 go to EC2; other CSI claims take --route (vac by default).
 *   - Nothing is ever overwritten in a cluster: a same-named VAC with other parameters is an
 *     error (EM_ECONFLICT); the gp3 StorageClass takes a free name (or one that is identical).
 *   - Every value that reaches YAML, JSON or sh goes through its quoting helper.
 *   - DIR is written whole or not at all (plan_manifests_write.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/plan_manifests.h"
#include "ebsmigrate/template.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/strlist.h"

#include "plan_manifests_internal.h"

#define EBS_CSI "ebs.csi.aws.com"
#define EBS_INTREE "kubernetes.io/aws-ebs"
#define DEFAULT_ANN "storageclass.kubernetes.io/is-default-class"

/* ------------------------------------------------------------------ small helpers */

int manifest_route_parse(const char *s, enum manifest_route *out)
{
	enum modify_method m;
	if (modify_method_parse(s, &m) || m == METHOD_AUTO) /* --route has no auto */
		return EM_EINPUT;
	*out = m;
	return 0;
}

void manifest_set_init(struct manifest_set *s)
{
	memset(s, 0, sizeof *s);
}

void manifest_set_release(struct manifest_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].path);
		free(s->files[i].data);
	}
	free(s->files);
	strv_free(s->warnings, s->n_warnings);
	memset(s, 0, sizeof *s);
}

const struct manifest_file *manifest_set_find(const struct manifest_set *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->files[i].path, path) == 0)
			return &s->files[i];
	return NULL;
}

/* A formatted warning kept in the manifest set's warnings (printf-checked through strv_addf). */
#define add_warning(owner, ...) strv_addf(&(owner)->warnings, &(owner)->n_warnings, &(owner)->alloc_warnings, __VA_ARGS__)

/* A Markdown inline code span that never breaks out of itself. */
static void add_md_code(struct buf *b, const char *s)
{
	buf_addc(b, '`');
	for (; s && *s; s++)
		buf_addc(b, *s == '`' || (unsigned char)*s < 0x20 ? '?' : *s);
	buf_addc(b, '`');
}

static int ieq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* ------------------------------------------------------------------ naming and versions */

enum manifest_vac_api manifest_vac_api(const char *v, const char **api_version_out)
{
	static const char *const apis[] = {"storage.k8s.io/v1beta1", NULL, "storage.k8s.io/v1alpha1",
					   "storage.k8s.io/v1beta1", "storage.k8s.io/v1"};
	enum manifest_vac_api r = VAC_API_UNKNOWN;
	long major = -1, minor = -1;
	if (v) {
		if (*v == 'v')
			v++;
		char *end;
		if (isdigit((unsigned char)*v)) {
			major = strtol(v, &end, 10);
			if (*end == '.' && isdigit((unsigned char)end[1]))
				minor = strtol(end + 1, &end, 10);
		}
	}
	if (major > 1 || (major == 1 && minor >= 34))
		r = VAC_API_V1;
	else if (major == 1 && minor >= 31)
		r = VAC_API_V1BETA1;
	else if (major == 1 && minor >= 29)
		r = VAC_API_V1ALPHA1;
	else if (major == 1 && minor >= 0)
		r = VAC_API_NONE;
	if (api_version_out)
		*api_version_out = apis[r];
	return r;
}

/* ------------------------------------------------------------------ templates */

static const char *const tpl_files[TPL_COUNT] = {
	"vac.yaml", "storageclass-gp3.yaml", "storageclass-gp2-undefault.json",
	"pvc-patch.json", "kustomization.yaml", "manifests-README.md",
};

static void templates_release(struct templates *t)
{
	for (int i = 0; i < TPL_COUNT; i++) {
		buf_release(&t->text[i]);
		free(t->name[i]);
	}
}

static int templates_load(struct templates *t, const char *dir, struct buf *err)
{
	memset(t, 0, sizeof *t);
	for (int i = 0; i < TPL_COUNT; i++)
		buf_init(&t->text[i]);
	if (dir) {
		struct stat st;
		if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
			return em_err(err, EM_EINPUT, "--templates-dir: '%s' is not a directory", dir);
	}
	for (int i = 0; i < TPL_COUNT; i++) {
		int rc = template_load(&t->text[i], &t->name[i], dir, tpl_files[i], err);
		if (rc)
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------------ the model */

static void group_add(struct group *g, const struct plan_item *it, const char *why)
{
	struct entry e = {it, why};
	if (it->action == ACTION_MIGRATE) {
		XGROW(g->go, g->n_go, g->alloc_go);
		g->go[g->n_go++] = e;
		return;
	}
	/* blocked: stable insertion by eligible_at; unknown (in flight) last */
	XGROW(g->later, g->n_later, g->alloc_later);
	size_t i = g->n_later;
	time_t at = it->eligible_at ? it->eligible_at : (time_t)INT64_MAX;
	while (i > 0) {
		time_t prev = g->later[i - 1].it->eligible_at ? g->later[i - 1].it->eligible_at : (time_t)INT64_MAX;
		if (prev <= at)
			break;
		g->later[i] = g->later[i - 1];
		i--;
	}
	g->later[i] = e;
	g->n_later++;
}

static void group_release(struct group *g)
{
	free(g->go);
	free(g->later);
}

/* A directory name for a cluster or account: [A-Za-z0-9._-], unique, not reserved. */
static char *dir_name(struct gen *g, const char *name, const char *fallback)
{
	struct buf b = BUF_INIT;
	for (const char *p = name ? name : ""; *p; p++) {
		unsigned char c = (unsigned char)*p;
		buf_addc(&b, isalnum(c) || c == '.' || c == '_' || c == '-' ? (char)c : '_');
	}
	if (!b.len || strcmp(b.s, ".") == 0 || strcmp(b.s, "..") == 0) {
		buf_reset(&b);
		buf_adds(&b, fallback);
	}
	struct buf cand = BUF_INIT;
	for (int n = 1;; n++) {
		buf_reset(&cand);
		buf_adds(&cand, b.s);
		if (n > 1)
			buf_addf(&cand, "-%d", n);
		int taken = strcmp(cand.s, "ec2") == 0 || strcasecmp(cand.s, "README.md") == 0;
		for (size_t i = 0; i < g->n_cl && !taken; i++)
			taken = g->cl[i].dir && strcmp(g->cl[i].dir, cand.s) == 0;
		if (!taken)
			break;
	}
	buf_release(&b);
	return buf_detach(&cand);
}

static struct cluster *find_cluster(struct gen *g, const char *name)
{
	for (size_t i = 0; i < g->n_cl; i++)
		if (strcmp(g->cl[i].name, name) == 0)
			return &g->cl[i];
	return NULL;
}

static struct ec2_account *find_account(struct gen *g, const char *account)
{
	for (size_t i = 0; i < g->n_acc; i++)
		if ((!account && !g->acc[i].account) || (account && ieq(g->acc[i].account, account)))
			return &g->acc[i];
	XGROW(g->acc, g->n_acc, g->alloc_acc);
	struct ec2_account *a = &g->acc[g->n_acc++];
	memset(a, 0, sizeof *a);
	a->account = account;
	return a;
}

static void setup_clusters(struct gen *g)
{
	const struct fleet *f = g->f;
	g->cl = f->n_clusters ? xcalloc(f->n_clusters, sizeof *g->cl) : NULL;
	for (size_t i = 0; i < f->n_clusters; i++) {
		struct cluster *c = &g->cl[i];
		c->name = f->clusters[i];
		c->dir = dir_name(g, c->name, "cluster");
		g->n_cl = i + 1;
		c->version = f->cluster_versions ? f->cluster_versions[i] : NULL;
		c->api = manifest_vac_api(c->version, &c->api_version);
		if (c->api != VAC_API_UNKNOWN) {
			c->api_from = API_FROM_VERSION;
		} else {
			/* No version: a VolumeAttributesClass read from the cluster names a served version. */
			for (size_t k = 0; k < f->n_vacs; k++) {
				const char *av = f->vacs[k].api_version;
				if (ieq(f->vacs[k].cluster, c->name) && av && strncmp(av, "storage.k8s.io/v", 16) == 0) {
					c->api_version = av;
					c->api_from = API_FROM_EXISTING;
					c->api = strcmp(av, "storage.k8s.io/v1") == 0        ? VAC_API_V1
						 : strcmp(av, "storage.k8s.io/v1alpha1") == 0 ? VAC_API_V1ALPHA1
											       : VAC_API_V1BETA1;
					break;
				}
			}
		}
		c->route = g->o->route;
		if (c->route == MANIFEST_ROUTE_VAC && c->api == VAC_API_NONE)
			c->route = MANIFEST_ROUTE_EC2;
	}
}

/* Sorts every migrate/blocked item into its cluster's group or an EC2 account group. */
static void route_items(struct gen *g)
{
	for (size_t i = 0; i < g->p->n; i++) {
		const struct plan_item *it = &g->p->items[i];
		if (it->action == ACTION_REVIEW)
			g->n_review++;
		if (it->action == ACTION_SKIP)
			g->n_skip++;
		if ((it->action != ACTION_MIGRATE && it->action != ACTION_BLOCKED) || !it->has_target)
			continue;
		if (it->current_priced && it->target_priced)
			g->savings += it->savings_monthly;
		const struct kube_binding *k = it->v->kube;
		const char *why = NULL;
		struct cluster *c = k && k->cluster ? find_cluster(g, k->cluster) : NULL;
		if (!k)
			why = "not in Kubernetes";
		else if (k->in_tree || !ieq(k->driver, EBS_CSI))
			why = "in-tree PersistentVolume";
		else if (!k->pvc || !k->namespace_)
			why = "PersistentVolume without a claim";
		else if (!c)
			why = "cluster unknown";
		else if (c->route == MANIFEST_ROUTE_EC2)
			why = g->o->route == MANIFEST_ROUTE_EC2 ? "--route ec2" : "Kubernetes before 1.29";
		if (!why) {
			group_add(&c->g, it, NULL);
			continue;
		}
		group_add(&find_account(g, it->v->account)->g, it, why);
	}
	for (size_t i = 0; i < g->n_acc; i++) {
		struct ec2_account *a = &g->acc[i];
		if (g->n_acc == 1)
			a->dir = xstrdup("ec2");
		else {
			char *sub = dir_name(g, a->account, "unknown-account");
			struct buf b = BUF_INIT;
			buf_addf(&b, "ec2/%s", sub);
			free(sub);
			a->dir = buf_detach(&b);
		}
	}
}

/* ------------------------------------------------------------------ storage classes */

static const char *sc_volume_type(const struct storage_class *sc)
{
	if (sc->type)
		return sc->type;
	if (ieq(sc->provisioner, EBS_INTREE))
		return "gp2";
	if (ieq(sc->provisioner, EBS_CSI))
		return "gp3";
	return NULL;
}

static int sc_is_ebs(const struct storage_class *sc)
{
	return ieq(sc->provisioner, EBS_CSI) || ieq(sc->provisioner, EBS_INTREE);
}

static int sc_makes(const struct storage_class *sc, const char *type)
{
	return sc && sc_is_ebs(sc) && ieq(sc_volume_type(sc), type);
}

static const struct storage_class *find_sc(const struct fleet *f, const char *cluster, const char *name)
{
	for (size_t i = 0; i < f->n_scs; i++)
		if (ieq(f->scs[i].cluster, cluster) && ieq(f->scs[i].name, name))
			return &f->scs[i];
	return NULL;
}

static const char *sc_param(const struct storage_class *sc, const char *key)
{
	for (size_t i = 0; sc && i < sc->n_parameters; i++)
		if (strcmp(sc->parameters[i].key, key) == 0)
			return sc->parameters[i].value;
	return NULL;
}

/* The parameters the new class copies from the gp2 class (sorted by key, as emitted). */
struct sc_params {
	const char *keys[3], *values[3];
	size_t n;
};

static void copied_params(const struct storage_class *src, struct sc_params *out)
{
	memset(out, 0, sizeof *out);
	if (!src)
		return;
	const char *fstype = sc_param(src, "csi.storage.k8s.io/fstype");
	if (!fstype)
		fstype = sc_param(src, "fsType"); /* in-tree spelling */
	if (fstype) {
		out->keys[out->n] = "csi.storage.k8s.io/fstype";
		out->values[out->n++] = fstype;
	}
	if (src->encrypted) {
		out->keys[out->n] = "encrypted";
		out->values[out->n++] = src->encrypted;
	}
	if (src->kms_key_id) {
		out->keys[out->n] = "kmsKeyId";
		out->values[out->n++] = src->kms_key_id;
	}
}

/* 1 when an existing class has exactly the provisioner and parameters the new one would. */
static int sc_identical(const struct storage_class *sc, const struct sc_params *cp)
{
	if (!ieq(sc->provisioner, EBS_CSI) || sc->n_parameters != 3 + cp->n)
		return 0;
	if (!ieq(sc_param(sc, "type"), "gp3") || !ieq(sc_param(sc, "iops"), "3000") ||
	    !ieq(sc_param(sc, "throughput"), "125"))
		return 0;
	for (size_t i = 0; i < cp->n; i++)
		if (!ieq(sc_param(sc, cp->keys[i]), cp->values[i]))
			return 0;
	return 1;
}

/* The gp2 class whose encryption the new class copies: a gp2 default, else the gp2 class
 * most of the cluster's planned claims use, else the first gp2 class. */
static const struct storage_class *gp2_source(struct gen *g, const struct cluster *c)
{
	const struct fleet *f = g->f;
	const struct storage_class *first = NULL, *best = NULL;
	size_t best_n = 0;
	for (size_t i = 0; i < f->n_scs; i++) {
		const struct storage_class *sc = &f->scs[i];
		if (!ieq(sc->cluster, c->name) || !sc_makes(sc, "gp2"))
			continue;
		if (sc->is_default)
			return sc;
		if (!first)
			first = sc;
		size_t n = 0;
		for (size_t k = 0; k < g->p->n; k++) {
			const struct kube_binding *kb = g->p->items[k].v->kube;
			n += kb && ieq(kb->cluster, c->name) && ieq(kb->storage_class, sc->name);
		}
		if (n > best_n)
			best = sc, best_n = n;
	}
	return best ? best : first;
}

/* Why the gp3 class is not written, or not as the default. */
enum sc_note {
	SC_NOTE_NONE = 0,
	SC_ALREADY_GP3,  /* the default already creates gp3: nothing to do */
	SC_NAMES_TAKEN,  /* gp3 and gp3-ebsmigrate exist with other parameters */
	SC_NO_CLASSES,   /* no StorageClass in the input: written as the default, with a warning */
	SC_OTHER_DEFAULT, /* the default is not a gp2 class: written, not the default */
	SC_NO_DEFAULT,   /* the cluster has no default: written, not the default */
};

struct sc_plan {
	int emit;                    /* write 01-storageclass-gp3.yaml */
	const char *name;
	int make_default;
	const struct storage_class *src;
	struct sc_params cp;
	const struct storage_class **undefault; /* gp2 defaults to patch (02) */
	size_t n_undefault;
	enum sc_note note;
	const char *existing_default;
};

static void plan_storage_class(struct gen *g, const struct cluster *c, struct sc_plan *sp)
{
	const struct fleet *f = g->f;
	memset(sp, 0, sizeof *sp);
	size_t n_known = 0, n_gp2_def = 0, n_other_def = 0;
	for (size_t i = 0; i < f->n_scs; i++) {
		const struct storage_class *sc = &f->scs[i];
		if (!ieq(sc->cluster, c->name))
			continue;
		n_known++;
		if (!sc->is_default)
			continue;
		if (sc_makes(sc, "gp3")) {
			sp->note = SC_ALREADY_GP3;
			sp->existing_default = sc->name;
			return;
		}
		if (sc_makes(sc, "gp2"))
			n_gp2_def++;
		else {
			n_other_def++;
			sp->existing_default = sc->name;
		}
	}
	sp->src = gp2_source(g, c);
	copied_params(sp->src, &sp->cp);
	static const char *const names[] = {"gp3", "gp3-ebsmigrate"};
	for (size_t i = 0; i < 2 && !sp->name; i++) {
		const struct storage_class *ex = find_sc(f, c->name, names[i]);
		if (!ex || sc_identical(ex, &sp->cp))
			sp->name = names[i];
	}
	if (!sp->name) {
		sp->note = SC_NAMES_TAKEN;
		return;
	}
	sp->emit = 1;
	if (n_known == 0) {
		sp->make_default = 1;
		sp->note = SC_NO_CLASSES;
	} else if (n_gp2_def && !n_other_def) {
		sp->make_default = 1;
	} else {
		sp->note = n_other_def ? SC_OTHER_DEFAULT : SC_NO_DEFAULT;
	}
	if (sp->make_default && n_gp2_def) {
		sp->undefault = xcalloc(n_gp2_def, sizeof *sp->undefault);
		for (size_t i = 0; i < f->n_scs; i++)
			if (ieq(f->scs[i].cluster, c->name) && f->scs[i].is_default && sc_makes(&f->scs[i], "gp2"))
				sp->undefault[sp->n_undefault++] = &f->scs[i];
	}
}

static int has_csi_evidence(struct gen *g, const struct cluster *c)
{
	for (size_t i = 0; i < g->f->n_scs; i++)
		if (ieq(g->f->scs[i].cluster, c->name) && ieq(g->f->scs[i].provisioner, EBS_CSI))
			return 1;
	for (size_t i = 0; i < g->f->n; i++) {
		const struct kube_binding *k = g->f->vols[i].kube;
		if (k && ieq(k->cluster, c->name) && ieq(k->driver, EBS_CSI))
			return 1;
	}
	for (size_t i = 0; i < g->f->n_vacs; i++)
		if (ieq(g->f->vacs[i].cluster, c->name) && ieq(g->f->vacs[i].driver, EBS_CSI))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ per cluster */

static void add_path(struct buf *b, const char *dir, const char *file)
{
	buf_addf(b, "%s/%s", dir, file);
}

struct target {
	int64_t iops, throughput;
};

static int target_cmp(const void *a, const void *b)
{
	const struct target *x = a, *y = b;
	if (x->iops != y->iops)
		return x->iops < y->iops ? -1 : 1;
	return x->throughput < y->throughput ? -1 : x->throughput > y->throughput;
}

static int vac_param_is(const struct vac_ref *v, const char *key, const char *want)
{
	for (size_t i = 0; i < v->n_parameters; i++)
		if (strcmp(v->parameters[i].key, key) == 0)
			return strcmp(v->parameters[i].value, want) == 0;
	return 0;
}

/* 00-volumeattributesclasses.yaml; fills names (README). */
static int cluster_vacs(struct gen *g, const struct cluster *c, struct buf *names, struct buf *err)
{
	const struct group *grp = &c->g;
	size_t n_all = grp->n_go + grp->n_later, n = 0;
	struct target *t = n_all ? xcalloc(n_all, sizeof *t) : NULL;
	for (size_t i = 0; i < n_all; i++) {
		const struct plan_item *it = i < grp->n_go ? grp->go[i].it : grp->later[i - grp->n_go].it;
		struct target x = {it->target.iops, it->target.throughput};
		size_t k = 0;
		while (k < n && target_cmp(&t[k], &x) != 0)
			k++;
		if (k == n)
			t[n++] = x;
	}
	if (n > 1)
		qsort(t, n, sizeof *t, target_cmp);
	struct buf doc = BUF_INIT, name = BUF_INIT, qname = BUF_INIT, iops = BUF_INIT, tput = BUF_INIT, num = BUF_INIT;
	buf_adds(&doc, "# VolumeAttributesClasses for cluster ");
	add_comment_text(&doc, c->name);
	buf_addf(&doc, ": one per distinct gp3 target, written by ebsmigrate from the plan of %s.\n", g->generated);
	buf_adds(&doc, "# apiVersion ");
	buf_adds(&doc, c->api_version);
	if (c->api_from == API_FROM_VERSION) {
		buf_adds(&doc, " for Kubernetes ");
		add_comment_text(&doc, c->version);
	} else if (c->api_from == API_FROM_EXISTING) {
		buf_adds(&doc, " as the cluster's existing VolumeAttributesClasses use");
	} else {
		buf_adds(&doc, " (Kubernetes version unknown)");
	}
	buf_adds(&doc, ". Parameters are immutable: another target is another class.\n");
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		buf_reset(&name);
		manifest_vac_name(&name, t[i].iops, t[i].throughput);
		for (size_t k = 0; k < g->f->n_vacs && !rc; k++) {
			const struct vac_ref *v = &g->f->vacs[k];
			if (!ieq(v->cluster, c->name) || !ieq(v->name, name.s))
				continue;
			buf_reset(&num);
			buf_addf(&num, "%lld", (long long)t[i].iops);
			int same = ieq(v->driver, EBS_CSI) && v->n_parameters == 3 && vac_param_is(v, "type", "gp3") &&
				   vac_param_is(v, "iops", num.s);
			buf_reset(&num);
			buf_addf(&num, "%lld", (long long)t[i].throughput);
			same = same && vac_param_is(v, "throughput", num.s);
			if (!same)
				rc = em_err(err, EM_ECONFLICT,
					    "cluster '%s': VolumeAttributesClass '%s' already exists with other parameters "
					    "or driver; its parameters cannot change: delete or rename it, then plan again",
					    c->name, name.s);
		}
		buf_reset(&qname);
		buf_reset(&iops);
		buf_reset(&tput);
		template_yaml_quote(&qname, name.s);
		buf_reset(&num);
		buf_addf(&num, "%lld", (long long)t[i].iops);
		template_yaml_quote(&iops, num.s);
		buf_reset(&num);
		buf_addf(&num, "%lld", (long long)t[i].throughput);
		template_yaml_quote(&tput, num.s);
		const char *vars[] = {"api_version", c->api_version, "name", qname.s, "iops", iops.s,
				      "throughput", tput.s, NULL};
		buf_adds(&doc, "---\n");
		if (!rc)
			rc = template_render(&doc, g->tpl.text[TPL_VAC].s, g->tpl.name[TPL_VAC], vars, err);
		if (names->len)
			buf_adds(names, ", ");
		add_md_code(names, name.s);
		g->out->n_vacs++;
	}
	if (!rc && n) {
		struct buf path = BUF_INIT;
		add_path(&path, c->dir, "00-volumeattributesclasses.yaml");
		add_file(g->out, path.s, &doc, 0644);
		buf_release(&path);
	}
	free(t);
	buf_release(&doc);
	buf_release(&name);
	buf_release(&qname);
	buf_release(&iops);
	buf_release(&tput);
	buf_release(&num);
	return rc;
}

static int cluster_storage_class(struct gen *g, const struct cluster *c, const struct sc_plan *sp, struct buf *err)
{
	struct buf doc = BUF_INIT, qname = BUF_INIT, params = BUF_INIT, path = BUF_INIT;
	buf_adds(&doc, "# The gp3 StorageClass for cluster ");
	add_comment_text(&doc, c->name);
	buf_addf(&doc, ", written by ebsmigrate from the plan of %s.\n", g->generated);
	if (sp->src) {
		buf_adds(&doc, "# Copied from StorageClass ");
		add_comment_text(&doc, sp->src->name);
		buf_adds(&doc, ": ");
		for (size_t i = 0; i < sp->cp.n; i++)
			buf_addf(&doc, "%s%s", i ? ", " : "", sp->cp.keys[i]);
		if (!sp->src->encrypted && !sp->src->kms_key_id)
			buf_adds(&doc, sp->cp.n ? " (it sets no encryption parameter)" : "nothing (it sets no encryption parameter)");
		buf_adds(&doc, ".\n");
	} else {
		buf_adds(&doc, "# No gp2 StorageClass known: no encryption parameter copied.\n");
	}
	if (!sp->make_default)
		buf_adds(&doc, "# Not the default: see README.md.\n");
	template_yaml_quote(&qname, sp->name);
	for (size_t i = 0; i < sp->cp.n; i++) {
		template_yaml_quote(&params, sp->cp.keys[i]);
		buf_adds(&params, ": ");
		template_yaml_quote(&params, sp->cp.values[i]);
		buf_addc(&params, '\n');
	}
	const char *vars[] = {"name", qname.s, "is_default", sp->make_default ? "\"true\"" : "\"false\"",
			      "copied_parameters", params.s, NULL};
	int rc = template_render(&doc, g->tpl.text[TPL_SC].s, g->tpl.name[TPL_SC], vars, err);
	if (!rc) {
		add_path(&path, c->dir, "01-storageclass-gp3.yaml");
		add_file(g->out, path.s, &doc, 0644);
	}
	if (!rc && sp->n_undefault) {
		struct buf patch = BUF_INIT;
		buf_reset(&path);
		add_path(&path, c->dir, "02-storageclass-gp2-undefault.json");
		rc = template_render(&patch, g->tpl.text[TPL_UNDEFAULT].s, g->tpl.name[TPL_UNDEFAULT], NULL, err);
		if (!rc)
			add_file(g->out, path.s, &patch, 0644);
		buf_release(&patch);
	}
	buf_release(&doc);
	buf_release(&qname);
	buf_release(&params);
	buf_release(&path);
	return rc;
}

static int cluster_kustomization(struct gen *g, const struct cluster *c, int have_vacs, int have_sc,
				 struct buf *err)
{
	if (!have_vacs && !have_sc)
		return 0;
	struct buf doc = BUF_INIT, res = BUF_INIT, path = BUF_INIT, ctx = BUF_INIT, dir = BUF_INIT;
	if (have_vacs)
		buf_adds(&res, "- 00-volumeattributesclasses.yaml\n");
	if (have_sc)
		buf_adds(&res, "- 01-storageclass-gp3.yaml\n");
	add_comment_text(&ctx, c->name);
	buf_addf(&dir, "%s/", c->dir);
	const char *vars[] = {"cluster", ctx.s, "context", ctx.s, "dir", dir.s, "resources", res.s, NULL};
	int rc = template_render(&doc, g->tpl.text[TPL_KUSTOMIZATION].s, g->tpl.name[TPL_KUSTOMIZATION], vars, err);
	if (!rc) {
		add_path(&path, c->dir, "kustomization.yaml");
		add_file(g->out, path.s, &doc, 0644);
	}
	buf_release(&doc);
	buf_release(&res);
	buf_release(&path);
	buf_release(&ctx);
	buf_release(&dir);
	return rc;
}

/* README lines for StatefulSets: templates naming a gp2 class (they keep making gp2), then the
 * ones naming no class (they follow the default, gp3 once it changes). */
static void cluster_statefulsets(struct gen *g, const struct cluster *c, int default_to_gp3, struct buf *md)
{
	for (int pass = 0; pass < 2; pass++) {
		size_t n = 0;
		for (size_t i = 0; i < g->f->n_sts; i++) {
			const struct statefulset_ref *s = &g->f->sts[i];
			if (!ieq(s->cluster, c->name))
				continue;
			for (size_t t = 0; t < s->n_templates; t++) {
				const char *cls = s->claim_storage_classes[t];
				if (pass == 0 && !sc_makes(cls ? find_sc(g->f, c->name, cls) : NULL, "gp2"))
					continue;
				if (pass == 1 && (cls || !default_to_gp3))
					continue;
				if (!n++)
					buf_adds(md, pass == 0 ? "\nStatefulSets whose volumeClaimTemplates name a gp2 StorageClass: "
								 "their new replicas keep getting gp2 volumes whatever the default "
								 "is, and volumeClaimTemplates cannot be edited in place (recreate "
								 "the StatefulSet with `kubectl delete statefulset NAME "
								 "--cascade=orphan` and the new class, or migrate the new claims "
								 "later):\n"
							       : "\nStatefulSets whose volumeClaimTemplates name no StorageClass follow "
								 "the default, which creates gp3 volumes once the steps above are "
								 "done:\n");
				struct buf who = BUF_INIT;
				buf_addf(&who, "%s/%s", s->namespace_, s->name);
				buf_adds(md, "- ");
				add_md_code(md, who.s);
				buf_release(&who);
				buf_adds(md, " template ");
				add_md_code(md, s->claim_templates[t]);
				if (cls) {
					buf_adds(md, " → ");
					add_md_code(md, cls);
				}
				buf_addc(md, '\n');
			}
		}
	}
}

static void add_kubectl_cmd(struct buf *md, const struct cluster *c, const char *rest)
{
	struct buf cmd = BUF_INIT;
	buf_adds(&cmd, "kubectl --context ");
	template_sh_quote(&cmd, c->name);
	buf_addf(&cmd, " %s", rest);
	add_md_code(md, cmd.s);
	buf_release(&cmd);
}

static int cluster_files(struct gen *g, struct cluster *c, struct buf *err)
{
	struct buf md = BUF_INIT, names = BUF_INIT, tmp = BUF_INIT;
	size_t step = 0;
	size_t n_claims = c->g.n_go + c->g.n_later;
	int vac = c->route == MANIFEST_ROUTE_VAC && n_claims;
	int rc = 0;

	if (vac && c->api == VAC_API_UNKNOWN)
		add_warning(g->out,
			    "cluster '%s': Kubernetes version unknown: VolumeAttributesClasses written as "
			    "storage.k8s.io/v1beta1 (1.31-1.33); give the version with `kubectl version -o json > "
			    "%s-version.json` and `--from-kube-json %s=%s-version.json`",
			    c->name, c->dir, c->name, c->dir);
	if (vac && c->api == VAC_API_V1ALPHA1)
		add_warning(g->out,
			    "cluster '%s': Kubernetes %s serves VolumeAttributesClass only as storage.k8s.io/v1alpha1, "
			    "which needs the VolumeAttributesClass feature gate (kube-apiserver, kube-controller-manager, "
			    "external-provisioner, external-resizer) and runtime-config storage.k8s.io/v1alpha1=true; "
			    "without them use --route annotation (volume-modifier sidecar) or --route ec2",
			    c->name, c->version ? c->version : "before 1.31");
	if (c->api == VAC_API_NONE && g->o->route == MANIFEST_ROUTE_VAC)
		add_warning(g->out,
			    "cluster '%s': Kubernetes %s has no VolumeAttributesClass (1.29+): its claims take the EC2 route",
			    c->name, c->version);

	buf_adds(&md, "\n### Cluster ");
	add_md_code(&md, c->name);
	buf_adds(&md, " → ");
	buf_addf(&tmp, "%s/", c->dir);
	add_md_code(&md, tmp.s);
	buf_adds(&md, "\n\n");
	if (c->version) {
		buf_adds(&md, "Kubernetes ");
		add_comment_text(&md, c->version);
	} else {
		buf_adds(&md, "Kubernetes version unknown");
	}
	if (vac) {
		buf_adds(&md, "; VolumeAttributesClass ");
		add_md_code(&md, c->api_version);
	}
	if (n_claims)
		buf_addf(&md, "; %zu claim%s through Kubernetes (route %s)", n_claims, n_claims == 1 ? "" : "s",
			 manifest_route_name(c->route));
	else
		buf_adds(&md, "; no claims to modify through Kubernetes");
	if (c->g.n_later)
		buf_addf(&md, ", %zu of them blocked", c->g.n_later);
	buf_adds(&md, ". Contexts: the scripts use ");
	add_md_code(&md, c->name);
	buf_adds(&md, " unless `KUBE_CONTEXT` is set.\n\n");

	if (vac)
		rc = cluster_vacs(g, c, &names, err);
	struct sc_plan sp;
	plan_storage_class(g, c, &sp);
	if (!rc && sp.emit)
		rc = cluster_storage_class(g, c, &sp, err);
	if (rc)
		goto out;
	int csi = has_csi_evidence(g, c);
	if (sp.emit && !csi)
		add_warning(g->out,
			    "cluster '%s': no sign of the EBS CSI driver (no CSI PersistentVolume, StorageClass or "
			    "VolumeAttributesClass): install it before applying %s/01-storageclass-gp3.yaml",
			    c->name, c->dir);
	if (sp.emit && sp.note == SC_NO_CLASSES)
		add_warning(g->out,
			    "cluster '%s': no StorageClasses in the input: %s/01-storageclass-gp3.yaml makes gp3 the "
			    "default and copies no encryption setting; check `kubectl get storageclass` first",
			    c->name, c->dir);
	if (sp.note == SC_NAMES_TAKEN)
		add_warning(g->out,
			    "cluster '%s': StorageClasses 'gp3' and 'gp3-ebsmigrate' exist with other parameters: no gp3 "
			    "StorageClass written",
			    c->name);
	rc = cluster_kustomization(g, c, vac, sp.emit, err);
	if (rc)
		goto out;

	if (vac || sp.emit) {
		buf_addf(&md, "%zu. ", ++step);
		if (sp.emit && !csi)
			buf_adds(&md, "Once the EBS CSI driver is installed: ");
		buf_reset(&tmp);
		buf_addf(&tmp, "apply -k %s/", c->dir);
		add_kubectl_cmd(&md, c, tmp.s);
		buf_adds(&md, " (review with `--dry-run=server` first) creates\n");
		if (vac) {
			buf_adds(&md, "   - VolumeAttributesClasses ");
			buf_adds(&md, names.s);
			buf_adds(&md, " (`00-volumeattributesclasses.yaml`)\n");
		}
		if (sp.emit) {
			buf_adds(&md, "   - StorageClass ");
			add_md_code(&md, sp.name);
			buf_adds(&md, sp.make_default ? ", the new default" : ", not the default");
			if (sp.src && (sp.src->encrypted || sp.src->kms_key_id)) {
				buf_adds(&md, ", encrypted like ");
				add_md_code(&md, sp.src->name);
			}
			buf_adds(&md, " (`01-storageclass-gp3.yaml`)");
			if (sp.note == SC_OTHER_DEFAULT) {
				buf_adds(&md, "; the default stays ");
				add_md_code(&md, sp.existing_default);
				buf_adds(&md, ", which is not a gp2 class");
			} else if (sp.note == SC_NO_DEFAULT) {
				buf_adds(&md, "; the cluster has no default StorageClass and this does not add one");
			}
			buf_addc(&md, '\n');
		}
	}
	if (sp.note == SC_ALREADY_GP3) {
		buf_adds(&md, "- The default StorageClass ");
		add_md_code(&md, sp.existing_default);
		buf_adds(&md, " already creates gp3 volumes: no StorageClass change.\n");
	}
	for (size_t i = 0; i < sp.n_undefault; i++) {
		buf_addf(&md, "%zu. ", ++step);
		buf_reset(&tmp);
		buf_adds(&tmp, "patch storageclass ");
		template_sh_quote(&tmp, sp.undefault[i]->name);
		buf_addf(&tmp, " --type=merge --patch-file %s/02-storageclass-gp2-undefault.json", c->dir);
		add_kubectl_cmd(&md, c, tmp.s);
		buf_adds(&md, " — ");
		add_md_code(&md, sp.undefault[i]->name);
		buf_adds(&md, " stops being the default (until then both are; Kubernetes 1.26+ gives new claims "
			      "the newer one, the gp3 class)\n");
	}

	struct buf dir = BUF_INIT;
	buf_addf(&dir, "%s/batches", c->dir);
	if (n_claims) {
		buf_adds(&g->steps, md.s);
		buf_reset(&md);
		rc = manifest_cluster_batches(g, c, dir.s, &step, err);
		g->out->n_pvcs += n_claims;
	}
	buf_release(&dir);
	if (rc)
		goto out;
	cluster_statefulsets(g, c, (sp.emit && sp.make_default) || sp.note == SC_ALREADY_GP3, &md);
	if (!n_claims && !sp.emit) {
		buf_adds(&md, "Nothing to apply in this cluster.\n");
	}
	buf_adds(&g->steps, md.s);
	if (step || sp.emit)
		g->out->n_clusters++;
out:
	free(sp.undefault);
	buf_release(&md);
	buf_release(&names);
	buf_release(&tmp);
	return rc;
}

static void ec2_files(struct gen *g)
{
	size_t total = 0;
	for (size_t i = 0; i < g->n_acc; i++)
		total += g->acc[i].g.n_go + g->acc[i].g.n_later;
	if (!total)
		return;
	buf_adds(&g->steps, "\n### EC2 route → `ec2/`\n\n");
	buf_addf(&g->steps,
		 "%zu volume%s modified with `aws ec2 modify-volume` (credentials of the owning account; "
		 "`AWS_PROFILE` as usual): in-tree PersistentVolumes (VolumeAttributesClasses need CSI), volumes "
		 "outside Kubernetes, and claims that cannot take a Kubernetes route. Independent of the "
		 "cluster steps.\n\n",
		 total, total == 1 ? "" : "s");
	for (size_t i = 0; i < g->n_acc; i++) {
		struct ec2_account *a = &g->acc[i];
		size_t step = 0;
		if (g->n_acc > 1) {
			buf_adds(&g->steps, "Account ");
			add_md_code(&g->steps, a->account ? a->account : "unknown");
			buf_adds(&g->steps, ":\n\n");
		}
		manifest_ec2_batches(g, a, &step);
		g->out->n_ec2 += a->g.n_go + a->g.n_later;
		buf_addc(&g->steps, '\n');
	}
}

static void not_included(struct gen *g)
{
	if (!g->n_review && !g->n_skip)
		return;
	buf_adds(&g->skipped, "\n## Not included\n\n");
	buf_addf(&g->skipped, "%zu volume%s planned `skip` (not gp2, or nothing to gain) and %zu planned `review` "
			      "are in no file:\n",
		 g->n_skip, g->n_skip == 1 ? "" : "s", g->n_review);
	for (size_t i = 0; i < g->p->n; i++) {
		const struct plan_item *it = &g->p->items[i];
		if (it->action != ACTION_REVIEW)
			continue;
		buf_adds(&g->skipped, "- ");
		add_md_code(&g->skipped, it->v->volume_id);
		buf_adds(&g->skipped, " (review): ");
		add_comment_text(&g->skipped, it->note ? it->note : "see the plan");
		buf_addc(&g->skipped, '\n');
	}
}

static int readme(struct gen *g, struct buf *err)
{
	struct buf doc = BUF_INIT, summary = BUF_INIT, warn = BUF_INIT, bs = BUF_INIT;
	const struct manifest_set *s = g->out;
	buf_addf(&summary, "\n%zu claim%s through Kubernetes and %zu volume%s through EC2, in %zu batch%s (%zu volume%s "
			   "blocked for now); ",
		 s->n_pvcs, s->n_pvcs == 1 ? "" : "s", s->n_ec2, s->n_ec2 == 1 ? "" : "s", s->n_batches,
		 s->n_batches == 1 ? "" : "es", s->n_blocked, s->n_blocked == 1 ? "" : "s");
	money_add_usd_pretty(&summary, g->savings);
	buf_adds(&summary, "/month saved once all are done.\n");
	if (s->n_warnings) {
		buf_adds(&warn, "\n## Warnings\n\n");
		for (size_t i = 0; i < s->n_warnings; i++) {
			buf_adds(&warn, "- ");
			add_comment_text(&warn, s->warnings[i]);
			buf_addc(&warn, '\n');
		}
	}
	if (!g->steps.len)
		buf_adds(&g->steps, "\nNothing to apply: no volume is planned `migrate` or `blocked`.\n");
	buf_addf(&bs, "%zu", g->batch);
	const char *vars[] = {"generated_at", g->generated, "mode", plan_mode_name(g->p->mode),
			      "route", manifest_route_name(g->o->route), "batch_size", bs.s,
			      "summary", summary.s, "steps", g->steps.s, "not_included", g->skipped.s,
			      "warnings", warn.s, NULL};
	int rc = template_render(&doc, g->tpl.text[TPL_README].s, g->tpl.name[TPL_README], vars, err);
	if (!rc)
		add_file(g->out, "README.md", &doc, 0644);
	buf_release(&doc);
	buf_release(&summary);
	buf_release(&warn);
	buf_release(&bs);
	return rc;
}

int manifest_build(struct manifest_set *out, const struct plan *p, const struct fleet *f,
		   const struct manifest_options *o, struct buf *err)
{
	manifest_set_init(out);
	if (o->batch_size > MANIFEST_MAX_BATCH)
		return em_err(err, EM_EINPUT, "--batch-size %zu is above the maximum of %d", o->batch_size,
			      MANIFEST_MAX_BATCH);
	struct manifest_options opts = *o;
	if (opts.route == METHOD_AUTO) /* a zeroed option: the default route */
		opts.route = METHOD_VAC;
	struct gen g;
	memset(&g, 0, sizeof g);
	g.p = p;
	g.f = f;
	g.o = &opts;
	g.out = out;
	g.batch = o->batch_size ? o->batch_size : MANIFEST_DEFAULT_BATCH;
	buf_init(&g.steps);
	buf_init(&g.skipped);
	em_format_time(p->generated_at, g.generated);
	int rc = templates_load(&g.tpl, o->templates_dir, err);
	if (!rc) {
		setup_clusters(&g);
		route_items(&g);
		for (size_t i = 0; i < g.n_cl && !rc; i++)
			rc = cluster_files(&g, &g.cl[i], err);
	}
	if (!rc) {
		ec2_files(&g);
		not_included(&g);
		rc = readme(&g, err);
	}
	if (!rc) {
		/* the index: --force removes these files, and only these, when it replaces DIR */
		struct buf marker = BUF_INIT;
		buf_addf(&marker, "# ebsmigrate plan --manifests, plan of %s\n", g.generated);
		buf_adds(&marker, "# the files below were written by ebsmigrate; --force removes only them\n");
		for (size_t i = 0; i < out->n; i++)
			buf_addf(&marker, "%s\n", out->files[i].path);
		add_file(out, MANIFEST_MARKER, &marker, 0644);
	}
	for (size_t i = 0; i < g.n_cl; i++) {
		free(g.cl[i].dir);
		group_release(&g.cl[i].g);
	}
	free(g.cl);
	for (size_t i = 0; i < g.n_acc; i++) {
		free(g.acc[i].dir);
		group_release(&g.acc[i].g);
	}
	free(g.acc);
	templates_release(&g.tpl);
	buf_release(&g.steps);
	buf_release(&g.skipped);
	return rc;
}

