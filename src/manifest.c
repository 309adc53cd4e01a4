/*
 * manifest.c - `plan --manifests DIR`: the plan as files an operator reviews and applies.
 *
 * Entry points: manifest_build (render in memory), manifest_check_dir, manifest_stage (into a
 * command's outputs, fs.h), manifest_write_dir (atomic), manifest_write (both); manifest_vac_api (exposed for tests). Rendering and quoting:
 * template.c; the class name rule: apply_vac_name (apply_state.c).
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
 *   - DIR is written whole or not at all: files go to DIR.tmp-XXXXXX, then one rename. The
 *     MANIFEST_MARKER file is an index of every file written; --force replaces only a directory
 *     whose every file that index lists, and removes only those files from the old one.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/embedded.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/manifest.h"
#include "ebsmigrate/template.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/strlist.h"

#define EBS_CSI "ebs.csi.aws.com"
#define EBS_INTREE "kubernetes.io/aws-ebs"
#define DEFAULT_ANN "storageclass.kubernetes.io/is-default-class"

/* ------------------------------------------------------------------ small helpers */

const char *manifest_route_name(enum manifest_route r)
{
	return modify_method_name(r == METHOD_AUTO ? METHOD_VAC : r);
}

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

static void add_file(struct manifest_set *s, const char *path, struct buf *data, int mode)
{
	XGROW(s->files, s->n, s->alloc);
	struct manifest_file *f = &s->files[s->n++];
	f->path = xstrdup(path);
	f->len = data->len;
	f->data = buf_detach(data);
	f->mode = mode;
}

/* A formatted warning kept in the manifest set's warnings (printf-checked through strv_addf). */
#define add_warning(owner, ...) strv_addf(&(owner)->warnings, &(owner)->n_warnings, &(owner)->alloc_warnings, __VA_ARGS__)

/* Text for a comment line (YAML, sh, Markdown code): control characters become '?'. */
static void add_comment_text(struct buf *b, const char *s)
{
	for (; s && *s; s++)
		buf_addc(b, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

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

enum tpl_id { TPL_VAC, TPL_SC, TPL_UNDEFAULT, TPL_PATCH, TPL_KUSTOMIZATION, TPL_README, TPL_COUNT };
static const char *const tpl_files[TPL_COUNT] = {
	"vac.yaml", "storageclass-gp3.yaml", "storageclass-gp2-undefault.json",
	"pvc-patch.json", "kustomization.yaml", "manifests-README.md",
};

struct templates {
	struct buf text[TPL_COUNT];
	char *name[TPL_COUNT]; /* for messages: the override path or "templates/NAME" */
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

struct entry {
	const struct plan_item *it;
	const char *why_ec2; /* why the EC2 route (NULL on a Kubernetes route) */
};

struct group {
	struct entry *go, *later; /* migrate items (plan order), blocked items (by eligible_at) */
	size_t n_go, n_later, alloc_go, alloc_later;
};

struct cluster {
	const char *name;
	char *dir;                /* directory name under DIR */
	const char *version;      /* NULL when unknown */
	enum manifest_vac_api api;
	const char *api_version;
	enum { API_GUESSED = 0, API_FROM_VERSION, API_FROM_EXISTING } api_from;
	enum manifest_route route;
	struct group g;
};

struct ec2_account {
	const char *account; /* NULL: unknown */
	char *dir;
	struct group g;
};

struct gen {
	const struct plan *p;
	const struct fleet *f;
	const struct manifest_options *o;
	struct manifest_set *out;
	struct templates tpl;
	struct cluster *cl;
	size_t n_cl;
	struct ec2_account *acc;
	size_t n_acc, alloc_acc;
	size_t batch;
	char generated[21];
	struct buf steps, skipped;
	size_t n_review, n_skip;
	micro_t savings;
};

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

static size_t n_batches(size_t n, size_t size)
{
	return (n + size - 1) / size;
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

/* ------------------------------------------------------------------ scripts */

static void add_path(struct buf *b, const char *dir, const char *file)
{
	buf_addf(b, "%s/%s", dir, file);
}

/* "vol-0a1: 300 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $6.84/month" */
static void describe_item(struct buf *b, const struct plan_item *it)
{
	const struct volume *v = it->v;
	buf_adds(b, "# ");
	add_comment_text(b, v->volume_id);
	if (v->kube && v->kube->pvc) {
		buf_adds(b, " (");
		add_comment_text(b, v->kube->cluster);
		buf_adds(b, " ");
		add_comment_text(b, v->kube->namespace_);
		buf_adds(b, "/");
		add_comment_text(b, v->kube->pvc);
		buf_adds(b, ")");
	}
	buf_addf(b, ": %lld GiB gp2 -> gp3 %lld IOPS, %lld MiB/s", (long long)v->size_gib,
		 (long long)it->target.iops, (long long)it->target.throughput);
	if (it->current_priced && it->target_priced) {
		buf_adds(b, "; saves ");
		money_add_usd_pretty(b, it->savings_monthly);
		buf_adds(b, "/month");
	}
	buf_addc(b, '\n');
}

static void describe_eligibility(struct buf *b, const struct plan_item *it)
{
	if (it->eligible_at) {
		char ts[21];
		em_format_time(it->eligible_at, ts);
		buf_addf(b, "# eligible at %s (EBS allows at most 4 modifications per volume in 24 h)\n", ts);
		return;
	}
	const struct volume_mod *m = volume_latest_mod(it->v);
	const char *state = m ? volume_mod_state_name(m) : NULL;
	buf_adds(b, "# eligible after the modification in flight completes");
	if (state) {
		buf_adds(b, " (");
		add_comment_text(b, state);
		if (m->start_time) {
			char ts[21];
			em_format_time(m->start_time, ts);
			buf_addf(b, " since %s", ts);
		}
		buf_adds(b, ")");
	}
	buf_addc(b, '\n');
}

static const char fn_idle[] =
	"# idle REGION VOLUME: false (the volume is skipped) while a modification is in flight.\n"
	"idle() {\n"
	"\tstate=$(aws ec2 describe-volumes-modifications --region \"$1\" --volume-ids \"$2\" \\\n"
	"\t\t--query 'VolumesModifications[0].ModificationState' --output text 2>/dev/null) || state=none\n"
	"\tcase $state in modifying | optimizing)\n"
	"\t\techo \"skipped $2: a modification is $state; run this again once it has completed\" >&2\n"
	"\t\treturn 1 ;;\n"
	"\tesac\n"
	"}\n";

static const char fn_still_gp2[] =
	"# still_gp2 REGION VOLUME GIB: false (the volume is skipped) unless it is still the planned gp2\n"
	"# volume of that size with no modification in flight.\n"
	"still_gp2() {\n"
	"\tnow=$(aws ec2 describe-volumes --region \"$1\" --volume-ids \"$2\" \\\n"
	"\t\t--query 'join(`:`, [Volumes[0].VolumeType, to_string(Volumes[0].Size)])' --output text) ||\n"
	"\t\tnow=unreadable\n"
	"\tif [ \"$now\" != \"gp2:$3\" ]; then\n"
	"\t\techo \"skipped $2: it is $now (type:GiB), the plan expected gp2:$3; run ebsmigrate plan again\" >&2\n"
	"\t\treturn 1\n"
	"\tfi\n"
	"\tidle \"$1\" \"$2\"\n"
	"}\n";

static const char fn_still_gp3[] =
	"# still_gp3 REGION VOLUME GIB IOPS MIBPS: false (the volume is skipped) unless it is the gp3\n"
	"# volume this batch made and its modification is no longer in flight.\n"
	"still_gp3() {\n"
	"\tnow=$(aws ec2 describe-volumes --region \"$1\" --volume-ids \"$2\" --query \\\n"
	"\t\t'join(`:`, [Volumes[0].VolumeType, to_string(Volumes[0].Size), to_string(Volumes[0].Iops), to_string(Volumes[0].Throughput)])' \\\n"
	"\t\t--output text) || now=unreadable\n"
	"\tif [ \"$now\" != \"gp3:$3:$4:$5\" ]; then\n"
	"\t\techo \"skipped $2: it is $now (type:GiB:IOPS:MiB/s), not gp3:$3:$4:$5\" >&2\n"
	"\t\treturn 1\n"
	"\tfi\n"
	"\tidle \"$1\" \"$2\"\n"
	"}\n";

static const char fn_not_before[] =
	"# not_before EPOCH TIME VOLUME: false (the volume is skipped) before EBS allows its next\n"
	"# modification.\n"
	"not_before() {\n"
	"\tif [ \"$(date -u +%s)\" -lt \"$1\" ]; then\n"
	"\t\techo \"skipped $3: EBS allows its next modification at $2\" >&2\n"
	"\t\treturn 1\n"
	"\tfi\n"
	"}\n";

static void script_begin(struct buf *b, const char *title, const char *body)
{
	buf_adds(b, "#!/bin/sh\n# ");
	add_comment_text(b, title);
	buf_addc(b, '\n');
	buf_adds(b, body);
	buf_adds(b, "set -eu\n");
}

static void add_context_var(struct buf *b, const char *cluster)
{
	buf_adds(b, "ctx=");
	template_sh_quote(b, cluster);
	buf_adds(b, "\n[ -z \"${KUBE_CONTEXT:-}\" ] || ctx=$KUBE_CONTEXT\n");
}

static void add_modify_volume(struct buf *b, const struct plan_item *it, const char *indent)
{
	const struct volume *v = it->v;
	buf_addf(b, "%saws ec2 modify-volume --region ", indent);
	template_sh_quote(b, v->region);
	buf_adds(b, " --volume-id ");
	template_sh_quote(b, v->volume_id);
	buf_addf(b, " --volume-type gp3 --iops %lld --throughput %lld\n", (long long)it->target.iops,
		 (long long)it->target.throughput);
}

static void add_ec2_rollback(struct buf *b, const struct plan_item *it)
{
	const struct volume *v = it->v;
	buf_adds(b, "if still_gp3 ");
	template_sh_quote(b, v->region);
	buf_addc(b, ' ');
	template_sh_quote(b, v->volume_id);
	buf_addf(b, " %lld %lld %lld; then\n", (long long)v->size_gib, (long long)it->target.iops,
		 (long long)it->target.throughput);
	buf_adds(b, "\taws ec2 modify-volume --region ");
	template_sh_quote(b, v->region);
	buf_adds(b, " --volume-id ");
	template_sh_quote(b, v->volume_id);
	buf_adds(b, " --volume-type gp2\nfi\n");
}

/* Opens `if <guards>; then` for a blocked item; returns the indentation for its commands. */
static const char *open_guard(struct buf *b, const struct plan_item *it, int blocked)
{
	if (!blocked)
		return "";
	if (it->eligible_at) {
		char ts[21];
		em_format_time(it->eligible_at, ts);
		buf_addf(b, "if not_before %lld %s ", (long long)it->eligible_at, ts);
		template_sh_quote(b, it->v->volume_id);
	} else {
		buf_adds(b, "if idle ");
		template_sh_quote(b, it->v->region);
		buf_addc(b, ' ');
		template_sh_quote(b, it->v->volume_id);
	}
	buf_adds(b, "; then\n");
	return "\t";
}

static void close_guard(struct buf *b, int blocked)
{
	if (blocked)
		buf_adds(b, "fi\n");
}

static void add_kubectl_pvc(struct buf *b, const struct kube_binding *k, const char *indent, const char *verb)
{
	buf_addf(b, "%skubectl --context \"$ctx\" --namespace ", indent);
	template_sh_quote(b, k->namespace_);
	buf_addf(b, " %s pvc ", verb);
	template_sh_quote(b, k->pvc);
}

static int add_vac_patch(struct gen *g, struct buf *b, const char *class_name, struct buf *err)
{
	struct buf cls = BUF_INIT, patch = BUF_INIT;
	jsonw_add_str(&cls, class_name); /* a JSON string for the patch template */
	const char *vars[] = {"class", cls.s, NULL};
	int rc = template_render(&patch, g->tpl.text[TPL_PATCH].s, g->tpl.name[TPL_PATCH], vars, err);
	while (patch.len && isspace((unsigned char)patch.s[patch.len - 1]))
		patch.s[--patch.len] = '\0';
	if (!rc)
		template_sh_quote(b, patch.s);
	buf_release(&cls);
	buf_release(&patch);
	return rc;
}

struct batch_ref {
	const char *dir;        /* "prod/batches" or "ec2" */
	size_t number, total;   /* 1-based batch number and the count of batches in the directory */
	int blocked;
	const struct entry *e;
	size_t n;
};

static void batch_file(struct buf *b, const struct batch_ref *r, const char *kind)
{
	buf_addf(b, "%s/batch-%03zu-%s%s", r->dir, r->number, r->blocked ? "blocked-" : "", kind);
}

/* 1 when some claim of the batch named no class before (its rollback goes through EC2). */
/* A batch's forward script (fwd_name) and its rollback.sh, both executable. */
static void add_batch_scripts(struct gen *g, const struct batch_ref *r, const char *fwd_name, struct buf *fwd,
			      struct buf *back)
{
	struct buf path = BUF_INIT;
	batch_file(&path, r, fwd_name);
	add_file(g->out, path.s, fwd, 0755);
	buf_reset(&path);
	batch_file(&path, r, "rollback.sh");
	add_file(g->out, path.s, back, 0755);
	buf_release(&path);
}

static int any_unclassed(const struct entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!e[i].it->v->kube->vac)
			return 1;
	return 0;
}

static int has_unknown_eligibility(const struct batch_ref *r)
{
	for (size_t i = 0; r->blocked && i < r->n; i++)
		if (!r->e[i].it->eligible_at)
			return 1;
	return 0;
}

/* Forward + rollback script of one batch of a cluster's claims. */
static int cluster_batch(struct gen *g, const struct cluster *c, const struct batch_ref *r, struct buf *err)
{
	struct buf fwd = BUF_INIT, back = BUF_INIT, title = BUF_INIT, body = BUF_INIT;
	int vac = c->route == MANIFEST_ROUTE_VAC;
	buf_addf(&title, "Cluster %s, %sbatch %zu of %zu: %zu claim(s), route %s.", c->name, r->blocked ? "blocked " : "",
		 r->number, r->total, r->n, manifest_route_name(c->route));
	buf_addf(&body, "# From the plan of %s. ", g->generated);
	if (vac)
		buf_adds(&body, "Needs 00-volumeattributesclasses.yaml applied first.\n"
				"# Each patch makes the EBS CSI driver modify the volume once. Run once; before the\n"
				"# next batch wait until every claim shows its class in\n"
				"# status.currentVolumeAttributesClassName. Running it again is harmless: an\n"
				"# unchanged class starts no modification.\n");
	else
		buf_adds(&body, "Needs the volume-modifier-for-k8s sidecar.\n"
				"# Each annotation change makes the sidecar modify the volume once. Run once; before\n"
				"# the next batch wait until the PersistentVolumes carry the same annotations.\n"
				"# Running it again is harmless: unchanged annotations start no modification.\n");
	if (r->blocked)
		buf_adds(&body, "# Blocked volumes: each is skipped until EBS allows its next modification.\n");
	if (has_unknown_eligibility(r))
		buf_adds(&body, "# Volumes with a modification in flight are checked with the AWS CLI (needs AWS\n"
				"# credentials) and skipped until it has completed.\n");
	buf_adds(&body, "# Rollback: ");
	buf_addf(&body, "batch-%03zu-%srollback.sh.\n# Context: KUBE_CONTEXT overrides the one below.\n", r->number,
		 r->blocked ? "blocked-" : "");
	script_begin(&fwd, title.s, body.s);
	if (r->blocked && !has_unknown_eligibility(r)) {
		buf_adds(&fwd, fn_not_before);
	} else if (r->blocked) {
		buf_adds(&fwd, fn_not_before);
		buf_adds(&fwd, fn_idle);
	}
	add_context_var(&fwd, c->name);

	buf_reset(&title);
	buf_addf(&title, "Cluster %s, rollback of %sbatch %zu: back to the previous configuration.", c->name,
		 r->blocked ? "blocked " : "", r->number);
	buf_reset(&body);
	buf_adds(&body, "# Run only after the batch's modifications have completed (a rollback is one more\n"
			"# modification: same EBS rules). ");
	if (vac)
		buf_adds(&body, "Claims that named a class before go back to it; the others\n"
				"# go back to gp2 with EC2 (needs AWS credentials): their claims keep naming the gp3\n"
				"# class, which then no longer describes the volume.\n");
	else
		buf_adds(&body, "The annotations go back to gp2; the sidecar modifies the volume.\n");
	script_begin(&back, title.s, body.s);
	int ec2_back = vac && any_unclassed(r->e, r->n);
	if (ec2_back) {
		buf_adds(&back, fn_idle);
		buf_adds(&back, fn_still_gp3);
	}
	add_context_var(&back, c->name);

	int rc = 0;
	for (size_t i = 0; i < r->n && !rc; i++) {
		const struct plan_item *it = r->e[i].it;
		const struct kube_binding *k = it->v->kube;
		buf_addc(&fwd, '\n');
		describe_item(&fwd, it);
		if (r->blocked)
			describe_eligibility(&fwd, it);
		const char *ind = open_guard(&fwd, it, r->blocked);
		if (vac) {
			struct buf name = BUF_INIT;
			manifest_vac_name(&name, it->target.iops, it->target.throughput);
			add_kubectl_pvc(&fwd, k, ind, "patch");
			buf_adds(&fwd, " --type=merge --patch ");
			rc = add_vac_patch(g, &fwd, name.s, err);
			buf_addc(&fwd, '\n');
			buf_release(&name);
		} else {
			add_kubectl_pvc(&fwd, k, ind, "annotate --overwrite");
			buf_addf(&fwd, " \\\n%s\tebs.csi.aws.com/volumeType=gp3 ebs.csi.aws.com/iops=%lld ebs.csi.aws.com/throughput=%lld\n",
				 ind, (long long)it->target.iops, (long long)it->target.throughput);
		}
		close_guard(&fwd, r->blocked);

		buf_addc(&back, '\n');
		describe_item(&back, it);
		if (vac && k->vac) {
			buf_adds(&back, "# the claim named VolumeAttributesClass ");
			add_comment_text(&back, k->vac);
			buf_adds(&back, " before\n");
			add_kubectl_pvc(&back, k, "", "patch");
			buf_adds(&back, " --type=merge --patch ");
			if (!rc)
				rc = add_vac_patch(g, &back, k->vac, err);
			buf_addc(&back, '\n');
		} else if (vac) {
			buf_adds(&back, "# the claim named no VolumeAttributesClass before: back to gp2 with EC2\n");
			add_ec2_rollback(&back, it);
		} else {
			add_kubectl_pvc(&back, k, "", "annotate --overwrite");
			buf_adds(&back, " \\\n\tebs.csi.aws.com/volumeType=gp2 ebs.csi.aws.com/iops- ebs.csi.aws.com/throughput-\n");
		}
	}
	if (!rc)
		add_batch_scripts(g, r, "pvc-patches.sh", &fwd, &back);
	buf_release(&fwd);
	buf_release(&back);
	buf_release(&title);
	buf_release(&body);
	return rc;
}

/* Forward + rollback script of one batch of EC2-route volumes. */
static void ec2_batch(struct gen *g, const struct ec2_account *a, const struct batch_ref *r)
{
	struct buf fwd = BUF_INIT, back = BUF_INIT, title = BUF_INIT, body = BUF_INIT;
	buf_addf(&title, "EC2 route%s%s, %sbatch %zu of %zu: %zu volume(s).", a->account ? ", account " : "",
		 a->account ? a->account : "", r->blocked ? "blocked " : "", r->number, r->total, r->n);
	buf_addf(&body, "# From the plan of %s. Needs AWS credentials of the account that owns the volumes.\n"
			"# Each volume is checked first (still the planned gp2 volume, nothing in flight) and then\n"
			"# modified once with IOPS and throughput stated. Run once; before the next batch wait until\n"
			"# each modification is optimizing or completed (aws ec2 describe-volumes-modifications).\n",
		 g->generated);
	if (r->blocked)
		buf_adds(&body, "# Blocked volumes: each is skipped until EBS allows its next modification.\n");
	buf_addf(&body, "# Rollback: batch-%03zu-%srollback.sh.\n", r->number, r->blocked ? "blocked-" : "");
	script_begin(&fwd, title.s, body.s);
	buf_adds(&fwd, fn_idle);
	buf_adds(&fwd, fn_still_gp2);
	if (r->blocked)
		buf_adds(&fwd, fn_not_before);

	buf_reset(&title);
	buf_addf(&title, "EC2 route%s%s, rollback of %sbatch %zu: back to gp2.", a->account ? ", account " : "",
		 a->account ? a->account : "", r->blocked ? "blocked " : "", r->number);
	buf_reset(&body);
	buf_adds(&body, "# Run only after the batch's modifications have completed (a rollback is one more\n"
			"# modification: same EBS rules). gp2 takes no IOPS or throughput.\n");
	script_begin(&back, title.s, body.s);
	buf_adds(&back, fn_idle);
	buf_adds(&back, fn_still_gp3);

	for (size_t i = 0; i < r->n; i++) {
		const struct plan_item *it = r->e[i].it;
		const struct volume *v = it->v;
		buf_addc(&fwd, '\n');
		describe_item(&fwd, it);
		buf_adds(&fwd, "# EC2 route: ");
		buf_adds(&fwd, r->e[i].why_ec2);
		buf_addc(&fwd, '\n');
		if (r->blocked) {
			describe_eligibility(&fwd, it);
			if (it->eligible_at) {
				char ts[21];
				em_format_time(it->eligible_at, ts);
				buf_addf(&fwd, "if not_before %lld %s ", (long long)it->eligible_at, ts);
				template_sh_quote(&fwd, v->volume_id);
				buf_adds(&fwd, " && ");
			} else {
				buf_adds(&fwd, "if ");
			}
		} else {
			buf_adds(&fwd, "if ");
		}
		buf_adds(&fwd, "still_gp2 ");
		template_sh_quote(&fwd, v->region);
		buf_addc(&fwd, ' ');
		template_sh_quote(&fwd, v->volume_id);
		buf_addf(&fwd, " %lld; then\n", (long long)v->size_gib);
		add_modify_volume(&fwd, it, "\t");
		buf_adds(&fwd, "fi\n");

		buf_addc(&back, '\n');
		describe_item(&back, it);
		add_ec2_rollback(&back, it);
	}
	add_batch_scripts(g, r, "modify-volume.sh", &fwd, &back);
	buf_release(&fwd);
	buf_release(&back);
	buf_release(&title);
	buf_release(&body);
}

/* Calls fn for every batch of a group: migrate batches, then blocked ones numbered after them.
 * Appends README lines for each. */
typedef int (*batch_fn)(struct gen *g, const void *owner, const struct batch_ref *r, struct buf *err);

static int each_batch(struct gen *g, const struct group *grp, const char *dir, const char *fwd_kind,
		      const char *what, const char *readme_dir, batch_fn fn, const void *owner, size_t *step,
		      struct buf *err)
{
	size_t size = g->batch;
	size_t n_go = n_batches(grp->n_go, size), n_later = n_batches(grp->n_later, size);
	size_t total = n_go + n_later;
	for (size_t b = 0; b < total; b++) {
		struct batch_ref r;
		r.dir = dir;
		r.number = b + 1;
		r.total = total;
		r.blocked = b >= n_go;
		size_t first = (r.blocked ? b - n_go : b) * size;
		size_t n = r.blocked ? grp->n_later : grp->n_go;
		r.e = (r.blocked ? grp->later : grp->go) + first;
		r.n = n - first < size ? n - first : size;
		int rc = fn(g, owner, &r, err);
		if (rc)
			return rc;
		g->out->n_batches++;
		if (r.blocked)
			g->out->n_blocked += r.n;
		struct buf f = BUF_INIT, rb = BUF_INIT;
		buf_addf(&f, "%s/batch-%03zu-%s%s", readme_dir, r.number, r.blocked ? "blocked-" : "", fwd_kind);
		buf_addf(&rb, "%s/batch-%03zu-%srollback.sh", readme_dir, r.number, r.blocked ? "blocked-" : "");
		buf_addf(&g->steps, "%zu. ", ++*step);
		if (r.blocked) {
			time_t last = 0;
			int unknown = 0;
			for (size_t i = 0; i < r.n; i++) {
				if (!r.e[i].it->eligible_at)
					unknown = 1;
				else if (r.e[i].it->eligible_at > last)
					last = r.e[i].it->eligible_at;
			}
			buf_adds(&g->steps, "Blocked volumes, later (");
			if (last) {
				char ts[21];
				em_format_time(last, ts);
				buf_addf(&g->steps, "not before %s%s", ts, unknown ? "; " : "");
			}
			if (unknown)
				buf_adds(&g->steps, "once the modifications in flight have completed");
			buf_adds(&g->steps, "; each volume is checked): ");
		}
		buf_adds(&g->steps, "`sh ");
		buf_adds(&g->steps, f.s);
		buf_addf(&g->steps, "` — %zu %s%s; rollback `sh %s`\n", r.n, what, r.n == 1 ? "" : "s", rb.s);
		buf_release(&f);
		buf_release(&rb);
	}
	return 0;
}

static int cluster_batch_cb(struct gen *g, const void *owner, const struct batch_ref *r, struct buf *err)
{
	return cluster_batch(g, owner, r, err);
}

static int ec2_batch_cb(struct gen *g, const void *owner, const struct batch_ref *r, struct buf *err)
{
	(void)err;
	ec2_batch(g, owner, r);
	return 0;
}

/* ------------------------------------------------------------------ per cluster */

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
		rc = each_batch(g, &c->g, dir.s, "pvc-patches.sh", "claim", dir.s, cluster_batch_cb, c, &step, err);
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
		each_batch(g, &a->g, a->dir, "modify-volume.sh", "volume", a->dir, ec2_batch_cb, a, &step, NULL);
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

/* ------------------------------------------------------------------ writing */

/* The paths DIR/MANIFEST_MARKER lists (comment lines skipped), as one '\n'-framed string
 * "\nA\nB\n" so that membership is a strstr of "\nPATH\n". EM_ENOTFOUND without the file. */
static int read_index(const char *dir, struct buf *index, struct buf *err)
{
	struct buf path = BUF_INIT, text = BUF_INIT, e = BUF_INIT;
	buf_addf(&path, "%s/%s", dir, MANIFEST_MARKER);
	struct stat st;
	int rc = 0;
	if (lstat(path.s, &st) != 0 || !S_ISREG(st.st_mode))
		rc = EM_ENOTFOUND;
	else if (em_read_file_max(path.s, EM_MAX_LIST_FILE, &text, &e))
		rc = em_err(err, EM_EINPUT, "--manifests: %s", e.s);
	buf_reset(index);
	buf_addc(index, '\n');
	for (const char *p = text.s; !rc && p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n && *p != '#') {
			buf_add(index, p, n);
			buf_addc(index, '\n');
		}
		p += n + (nl != NULL);
	}
	buf_release(&path);
	buf_release(&text);
	buf_release(&e);
	return rc;
}

static int index_lists(const struct buf *index, const char *rel)
{
	size_t n = strlen(rel);
	for (const char *p = index->s; (p = strstr(p, rel)) != NULL; p++)
		if (p > index->s && p[-1] == '\n' && p[n] == '\n')
			return 1;
	return 0;
}

/* A regular file the index lists (or the index itself). */
static int listed_file(const struct buf *index, const char *rel, const struct stat *st)
{
	return S_ISREG(st->st_mode) && (strcmp(rel, MANIFEST_MARKER) == 0 || index_lists(index, rel));
}

struct foreign_walk {
	const char *dir;
	const struct buf *index;
	struct buf *bad;
	int any_ours; /* this level holds something we wrote */
};

static int find_foreign(const char *dir, const char *rel, const struct buf *index, struct buf *bad);

static int foreign_entry(void *ctx, const char *rel, const char *full, const struct stat *st)
{
	struct foreign_walk *w = ctx;
	(void)full;
	if (!st)
		return -1;
	if (S_ISDIR(st->st_mode)) {
		w->any_ours = 1; /* a directory of ours holds at least one listed file (checked inside) */
		return find_foreign(w->dir, rel, w->index, w->bad);
	}
	if (listed_file(w->index, rel, st)) {
		w->any_ours = 1;
		return 0;
	}
	buf_reset(w->bad);
	buf_adds(w->bad, rel);
	return 1;
}

/* Finds the first entry (in name order) under dir (relative path rel) that the index does not
 * account for: a non-regular file, a file not listed, or a directory holding no listed file.
 * 1 = found (in *bad), 0 = everything is ours, <0 = cannot read. */
static int find_foreign(const char *dir, const char *rel, const struct buf *index, struct buf *bad)
{
	struct foreign_walk w = {dir, index, bad, 0};
	int found = fs_walk(dir, rel, 0, foreign_entry, &w);
	if (!found && *rel && !w.any_ours) {
		buf_reset(bad);
		buf_addf(bad, "%s/", rel); /* an empty directory we did not write */
		found = 1;
	}
	return found;
}

int manifest_check_dir(const char *dir, int force, struct buf *err)
{
	if (!dir || !*dir)
		return em_err(err, EM_EINPUT, "--manifests: no directory given");
	struct stat st;
	if (lstat(dir, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		return em_err(err, EM_EINPUT, "--manifests: cannot use '%s': %s", dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return em_err(err, EM_EINPUT, "--manifests: '%s' exists and is not a directory", dir);
	int empty = fs_dir_is_empty(dir);
	if (empty < 0)
		return em_err(err, EM_EINPUT, "--manifests: cannot read directory '%s': %s", dir, strerror(errno));
	if (empty)
		return 0;
	if (!force)
		return em_err(err, EM_EINPUT, "--manifests: directory '%s' is not empty; use --force to replace it", dir);
	struct buf index = BUF_INIT, bad = BUF_INIT;
	int rc = read_index(dir, &index, err);
	if (rc == EM_ENOTFOUND) {
		rc = em_err(err, EM_EINPUT,
			    "--manifests: refusing to replace '%s': it was not written by ebsmigrate (no %s file)", dir,
			    MANIFEST_MARKER);
	} else if (!rc) {
		int found = find_foreign(dir, "", &index, &bad);
		if (found < 0)
			rc = em_err(err, EM_EINPUT, "--manifests: cannot read directory '%s': %s", dir, strerror(errno));
		else if (found)
			rc = em_err(err, EM_EINPUT,
				    "--manifests: refusing to replace '%s': '%s' in it was not written by ebsmigrate "
				    "(not in its %s index); move it away first",
				    dir, bad.s, MANIFEST_MARKER);
	}
	buf_release(&index);
	buf_release(&bad);
	return rc;
}

struct remove_walk {
	const char *root;
	const struct buf *index;
};

static void remove_listed_in(const char *root, const char *rel, const struct buf *index);

static int remove_entry(void *ctx, const char *rel, const char *full, const struct stat *st)
{
	const struct remove_walk *w = ctx;
	if (st && S_ISDIR(st->st_mode))
		remove_listed_in(w->root, rel, w->index);
	else if (st && listed_file(w->index, rel, st))
		unlink(full);
	return 0;
}

/* Removes from root/rel the files the index lists, then the directories left empty (rmdir fails,
 * and keeps a directory, while anything unlisted is inside). */
static void remove_listed_in(const char *root, const char *rel, const struct buf *index)
{
	struct remove_walk w = {root, index};
	fs_walk(root, rel, 0, remove_entry, &w);
	struct buf path = BUF_INIT;
	buf_adds(&path, root);
	if (*rel)
		buf_addf(&path, "/%s", rel);
	rmdir(path.s);
	buf_release(&path);
}

/* Clears a previous DIR (moved aside) of the files its index lists; anything else stays. */
static void remove_listed(const char *old)
{
	struct buf index = BUF_INIT;
	if (read_index(old, &index, NULL) == 0)
		remove_listed_in(old, "", &index);
	buf_release(&index);
}

int manifest_stage(struct fs_staging *st, const struct manifest_set *s, const char *dir, int force,
		   struct buf *err)
{
	int rc = manifest_check_dir(dir, force, err);
	if (rc)
		return rc;
	const char *tmp = fs_staging_add_dir(st, dir, FS_DIR_REPLACE, remove_listed, err);
	if (!tmp)
		return EM_EIO;
	struct buf path = BUF_INIT;
	for (size_t i = 0; i < s->n && !rc; i++) {
		buf_reset(&path);
		buf_addf(&path, "%s/%s", tmp, s->files[i].path);
		char *last = strrchr(path.s, '/');
		*last = '\0';
		rc = em_mkdirs(path.s, 0777, err);
		*last = '/';
		if (!rc)
			rc = em_write_file_atomic(path.s, s->files[i].data, s->files[i].len,
						  (s->files[i].mode & 0111) ? 0777 : 0666, err);
	}
	buf_release(&path);
	return rc;
}

int manifest_write_dir(const struct manifest_set *s, const char *dir, int force, struct buf *err)
{
	struct fs_staging st = FS_STAGING_INIT;
	int rc = manifest_stage(&st, s, dir, force, err);
	if (!rc)
		rc = fs_staging_commit(&st, err);
	fs_staging_release(&st);
	return rc;
}

int manifest_write(struct manifest_set *out, const struct plan *p, const struct fleet *f,
		   const struct manifest_options *o, struct buf *err)
{
	int rc = manifest_build(out, p, f, o, err);
	if (!rc)
		rc = manifest_write_dir(out, o->dir, o->force, err);
	return rc;
}
