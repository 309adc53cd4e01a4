/*
 * check.c - the gp2 gate's rules over manifests or a live cluster (check.h; docs/check.md is
 * the user's description of each rule).
 *
 * Entry points: check_run, check_result_release, check_rule_find, check_object_failed.
 *
 * The rules, numbered as the documentation numbers them:
 *   EM-GP2-001  a StorageClass of an EBS provisioner sets type gp2
 *   EM-GP2-002  an in-tree kubernetes.io/aws-ebs StorageClass sets no type (its default is gp2)
 *   EM-GP2-003  a StorageClass that provisions gp2 is the default class
 *   EM-GP2-004  a claim names a StorageClass that provisions gp2
 *   EM-GP2-005  a claim without a class gets a default class that provisions gp2
 *   EM-GP2-006  a VolumeAttributesClass of the EBS CSI driver sets type gp2
 *   EM-GP2-007  a claim asks for gp2 through its VolumeAttributesClass or ebs.csi.aws.com/volumeType
 *   EM-CLS-001  a claim names a class nothing defines (warning; --strict: error)
 *   EM-CLS-002  a claim has no class and no default class is known (warning; --strict: error)
 *   EM-CLS-003  more than one StorageClass is marked default (warning)
 *   EM-VAC-001  a VolumeAttributesClass sets type gp3 without iops or throughput (warning)
 *
 * Invariants: findings are made for the checked objects only, in their order (an object's
 * findings in the order its fields are judged), so the same input gives the same report; the
 * extra classes only resolve names. A claim is judged once: a VolumeAttributesClass or
 * annotation type that decides its volume type takes the place of its class's type.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ebsmigrate/check.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/strlist.h"

#define EBS_CSI "ebs.csi.aws.com"
#define EBS_EKS_AUTO "ebs.csi.eks.amazonaws.com"
#define EBS_INTREE "kubernetes.io/aws-ebs"

const struct check_rule check_rules[] = {
	{"EM-GP2-001", "gp2-storage-class", CHECK_ERROR, 0,
	 "A StorageClass of an EBS provisioner sets parameters.type gp2.",
	 "Every volume the class provisions is gp2, which costs 25% more per GiB than gp3 and throttles to its "
	 "baseline once its burst credits run out. StorageClass parameters cannot be changed: create a class with "
	 "type gp3 (`ebsmigrate plan --manifests DIR` writes one), move the claims to it, and delete this one."},
	{"EM-GP2-002", "intree-default-gp2", CHECK_ERROR, 0,
	 "A StorageClass of the in-tree provisioner kubernetes.io/aws-ebs sets no type, so it provisions gp2.",
	 "gp2 is the in-tree provisioner's documented default. Where CSI migration hands the class to the EBS CSI "
	 "driver its default (gp3) may apply instead, but nothing in the class says so: use provisioner "
	 "ebs.csi.aws.com with type gp3."},
	{"EM-GP2-003", "gp2-default-class", CHECK_ERROR, 0,
	 "A StorageClass that provisions gp2 is marked as the default class.",
	 "Every claim without storageClassName gets gp2. Set the annotation "
	 "storageclass.kubernetes.io/is-default-class to \"false\" on it and to \"true\" on a gp3 class (EKS 1.30 "
	 "and later no longer make gp2 the default)."},
	{"EM-GP2-004", "claim-gp2-class", CHECK_ERROR, 0,
	 "A PersistentVolumeClaim, StatefulSet volumeClaimTemplate or ephemeral volume names a StorageClass that "
	 "provisions gp2.",
	 "Name a gp3 class in spec.storageClassName (for a Helm chart usually its storageClass value); the beta "
	 "annotation volume.beta.kubernetes.io/storage-class, when present, wins over the field. A StatefulSet's "
	 "volumeClaimTemplates cannot be changed in place: existing volumes move with `ebsmigrate apply`, new "
	 "replicas follow the template."},
	{"EM-GP2-005", "claim-default-gp2", CHECK_ERROR, 0,
	 "A claim without a storage class gets the default class, and the default class provisions gp2.",
	 "Name a gp3 class in spec.storageClassName, or make a gp3 class the default."},
	{"EM-GP2-006", "vac-gp2", CHECK_ERROR, 0, "A VolumeAttributesClass of the EBS CSI driver sets type gp2.",
	 "Claims that name it are modified to gp2. Use type gp3 with explicit iops and throughput."},
	{"EM-GP2-007", "claim-requests-gp2", CHECK_ERROR, 0,
	 "A claim asks for gp2 through its VolumeAttributesClass or the ebs.csi.aws.com/volumeType annotation.",
	 "Point spec.volumeAttributesClassName at a gp3 class, or set the annotation to gp3."},
	{"EM-CLS-001", "unresolved-class", CHECK_WARNING, 1,
	 "A claim names a StorageClass or VolumeAttributesClass that neither the input nor the extra classes define.",
	 "The gate cannot tell which volume type the claim gets. Give the cluster's classes with --storage-classes "
	 "FILE (kubectl get storageclass -o yaml) or --cluster-classes; --strict makes this an error."},
	{"EM-CLS-002", "unknown-default-class", CHECK_WARNING, 1,
	 "A claim has no storage class, and no default class is known.",
	 "The claim gets whatever class the cluster marks default. Give the cluster's classes with "
	 "--storage-classes FILE or --cluster-classes; --strict makes this an error."},
	{"EM-CLS-003", "several-default-classes", CHECK_WARNING, 0,
	 "More than one StorageClass is marked default.",
	 "Kubernetes gives a claim without a class the newest default class, so which one applies depends on "
	 "creation order. Keep one default (the EKS EBS CSI add-on's own gp3 default can leave two)."},
	{"EM-VAC-001", "vac-type-only", CHECK_WARNING, 0,
	 "A VolumeAttributesClass sets type gp3 without iops or throughput.",
	 "EC2 then chooses them, and AWS documents two different answers for a gp2 volume (the gp3 baseline, 3,000 "
	 "IOPS and 125 MiB/s, or the higher of that and the gp2 volume's own). Set iops and throughput explicitly."},
};
const size_t check_n_rules = sizeof check_rules / sizeof check_rules[0];

enum {
	R_GP2_SC,
	R_INTREE_DEFAULT,
	R_GP2_DEFAULT_CLASS,
	R_CLAIM_GP2_CLASS,
	R_CLAIM_DEFAULT_GP2,
	R_VAC_GP2,
	R_CLAIM_REQUESTS_GP2,
	R_UNRESOLVED,
	R_UNKNOWN_DEFAULT,
	R_SEVERAL_DEFAULTS,
	R_VAC_TYPE_ONLY,
};

const struct check_rule *check_rule_find(const char *s)
{
	for (size_t i = 0; i < check_n_rules; i++)
		if (strcasecmp(s, check_rules[i].id) == 0 || strcasecmp(s, check_rules[i].name) == 0)
			return &check_rules[i];
	return NULL;
}

/* ------------------------------------------------------------------ classes */

static int is_ebs_provisioner(const char *p)
{
	return p && (strcmp(p, EBS_CSI) == 0 || strcmp(p, EBS_EKS_AUTO) == 0 || strcmp(p, EBS_INTREE) == 0);
}

static const struct km_param *param(const struct km_object *o, const char *key)
{
	for (size_t i = 0; i < o->n_params; i++)
		if (strcasecmp(o->params[i].key, key) == 0)
			return &o->params[i];
	return NULL;
}

/* The volume type a StorageClass provisions, or NULL when it is not an EBS class; *explicit_out
 * is the type parameter when set. */
static const char *class_type(const struct km_object *o, const struct km_param **explicit_out)
{
	const struct km_param *t = param(o, "type");
	*explicit_out = t && *t->value ? t : NULL;
	if (!is_ebs_provisioner(o->provisioner.value))
		return NULL;
	if (*explicit_out)
		return (*explicit_out)->value;
	return strcmp(o->provisioner.value, EBS_INTREE) == 0 ? "gp2" : "gp3";
}

static int is_gp2(const char *type)
{
	return type && strcasecmp(type, "gp2") == 0;
}

static int is_default(const struct km_object *o)
{
	return o->what == KM_STORAGE_CLASS && o->is_default.value && strcmp(o->is_default.value, "true") == 0;
}

/* ------------------------------------------------------------------ findings */

/* The classes (StorageClasses and VACs) of a manifest, found once: a fleet's manifests hold
 * thousands of claims and a handful of classes, so a claim's lookup must not walk every object. */
struct classes {
	const struct km_object **v;
	size_t n;
};

static void classes_of(struct classes *c, const struct kube_manifest *m)
{
	c->v = NULL;
	c->n = 0;
	for (size_t i = 0; m && i < m->n; i++)
		if (m->objs[i].what != KM_CLAIMS) {
			c->v = xrealloc((void *)c->v, (c->n + 1) * sizeof *c->v);
			c->v[c->n++] = &m->objs[i];
		}
}

struct run {
	struct check_result *res;
	const struct kube_manifest *checked, *extra;
	const struct check_options *o;
	struct classes checked_classes, extra_classes;
};

static const struct km_object *find_in(const struct classes *c, enum km_what what, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->what == what && c->v[i]->name && strcmp(c->v[i]->name, name) == 0)
			return c->v[i];
	return NULL;
}

/* A class named name of kind what: among the checked objects, else the extra ones (then *from_extra). */
static const struct km_object *find_class(const struct run *r, enum km_what what, const char *name, int *from_extra)
{
	const struct km_object *o = find_in(&r->checked_classes, what, name);
	*from_extra = !o && (o = find_in(&r->extra_classes, what, name)) != NULL;
	return o;
}

static char *join_path(const char *a, const char *b)
{
	struct buf p = BUF_INIT;
	buf_adds(&p, a);
	if (*a && *b && *b != '[')
		buf_addc(&p, '.');
	buf_adds(&p, b);
	buf_addc(&p, 0);
	return buf_detach(&p);
}

static int skipped(const struct run *r, const struct check_rule *rule)
{
	for (size_t i = 0; i < r->o->n_skip; i++)
		if (r->o->skip[i] == rule)
			return 1;
	return 0;
}

static void add_finding(struct run *r, int rule_index, size_t obj, const char *path, struct kube_mark at,
			const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void add_finding(struct run *r, int rule_index, size_t obj, const char *path, struct kube_mark at,
			const char *fmt, ...)
{
	const struct check_rule *rule = &check_rules[rule_index];
	if (skipped(r, rule))
		return;
	struct check_result *res = r->res;
	const struct km_object *o = &r->checked->objs[obj];
	XGROW(res->findings, res->n, res->alloc);
	struct check_finding *f = &res->findings[res->n++];
	memset(f, 0, sizeof *f);
	f->rule = rule;
	f->level = rule->strict_error && r->o->strict ? CHECK_ERROR : rule->level;
	va_list ap;
	va_start(ap, fmt);
	f->message = xstrvfmt(fmt, ap);
	va_end(ap);
	f->object = obj;
	f->path = join_path(o->item_path, path);
	f->at = at;
	for (size_t i = 0; i < o->n_skips && !f->suppressed; i++)
		if (check_rule_find(o->skips[i].key) == rule)
			f->suppressed = xstrdup(o->skips[i].value);
	if (f->suppressed)
		res->suppressed++;
	else if (f->level == CHECK_ERROR)
		res->errors++;
	else
		res->warnings++;
}

/* "StorageClass 'gp2'", "StatefulSet 'db/pg' volumeClaimTemplate 'data'" */
static char *what_of(const struct km_object *o, const struct km_claim *c)
{
	struct buf b = BUF_INIT;
	char *name = km_object_display_name(o);
	buf_addf(&b, "%s '%s'", o->kind, name);
	free(name);
	if (c && *c->path) {
		int tpl = strstr(c->path, "volumeClaimTemplates[") != NULL && strstr(c->path, "ephemeral") == NULL;
		buf_addf(&b, tpl ? " volumeClaimTemplate '%s'" : " ephemeral volume '%s'", c->name ? c->name : "");
	}
	return buf_detach(&b);
}

/* " (from context 'prod')" for a class found among the extra ones, else "". */
static char *class_origin(const struct run *r, const struct km_object *cls, int from_extra)
{
	struct buf b = BUF_INIT;
	if (from_extra)
		buf_addf(&b, " (from %s)", r->extra->sources[cls->source].label);
	buf_addc(&b, 0);
	return buf_detach(&b);
}

static void judge_storage_class(struct run *r, size_t i)
{
	const struct km_object *o = &r->checked->objs[i];
	const struct km_param *tp;
	const char *type = class_type(o, &tp);
	if (!is_gp2(type))
		return;
	char *w = what_of(o, NULL);
	if (tp) {
		char *path = km_path_key("parameters", tp->key);
		add_finding(r, R_GP2_SC, i, path, tp->at, "%s provisions gp2 volumes (%s: %s)", w, path, tp->value);
		free(path);
	} else {
		add_finding(r, R_INTREE_DEFAULT, i, "provisioner", o->provisioner.at,
			    "%s uses the in-tree provisioner %s without parameters.type, whose default is gp2", w,
			    EBS_INTREE);
	}
	if (is_default(o)) {
		char *path = km_path_key("metadata.annotations", o->default_key);
		add_finding(r, R_GP2_DEFAULT_CLASS, i, path, o->is_default.at,
			    "%s provisions gp2 and is the default class (%s: \"true\"): claims without a class get gp2", w,
			    o->default_key);
		free(path);
	}
	free(w);
}

static void judge_vac(struct run *r, size_t i)
{
	const struct km_object *o = &r->checked->objs[i];
	const char *d = o->provisioner.value;
	if (!d || (strcmp(d, EBS_CSI) != 0 && strcmp(d, EBS_EKS_AUTO) != 0))
		return;
	const struct km_param *tp = param(o, "type");
	if (!tp)
		return;
	char *w = what_of(o, NULL), *path = km_path_key("parameters", tp->key);
	if (is_gp2(tp->value)) {
		add_finding(r, R_VAC_GP2, i, path, tp->at, "%s sets type gp2: claims that name it are modified to gp2", w);
	} else if (strcasecmp(tp->value, "gp3") == 0 && (!param(o, "iops") || !param(o, "throughput"))) {
		const char *missing = !param(o, "iops") && !param(o, "throughput") ? "iops and throughput"
				      : !param(o, "iops") ? "iops" : "throughput";
		add_finding(r, R_VAC_TYPE_ONLY, i, path, tp->at,
			    "%s sets type gp3 without %s: EC2 chooses, and AWS documents two different defaults", w,
			    missing);
	}
	free(w), free(path);
}

/* The default classes among c (those whose is-default-class annotation is "true"). */
static size_t defaults_of(const struct classes *c, const struct km_object **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (is_default(c->v[i])) {
			if (n < max)
				out[n] = c->v[i];
			n++;
		}
	return n;
}

#define MAX_DEFAULTS 16

static void judge_several_defaults(struct run *r)
{
	const struct km_object *first = NULL;
	for (size_t i = 0; i < r->checked->n; i++) {
		const struct km_object *o = &r->checked->objs[i];
		if (!is_default(o))
			continue;
		const struct km_object *other = first && !(first->name && o->name && strcmp(first->name, o->name) == 0)
							? first : NULL; /* the same class twice is one class */
		int from_extra = 0;
		if (first && !other)
			continue;
		if (!other) {
			first = o;
			/* a default of the extra classes (the cluster's) with another name: after applying,
			 * the cluster has two */
			const struct km_object *ex[MAX_DEFAULTS];
			size_t n = defaults_of(&r->extra_classes, ex, MAX_DEFAULTS);
			for (size_t k = 0; k < n && k < MAX_DEFAULTS && !other; k++)
				if (ex[k]->name && o->name && strcmp(ex[k]->name, o->name) != 0)
					other = ex[k], from_extra = 1;
			if (!other)
				continue;
		}
		char *w = what_of(o, NULL), *path = km_path_key("metadata.annotations", o->default_key);
		const struct kube_manifest *om = from_extra ? r->extra : r->checked;
		add_finding(r, R_SEVERAL_DEFAULTS, i, path, o->is_default.at,
			    "%s is marked default, and so is '%s' (%s): a claim without a class gets the newest of them", w,
			    other->name ? other->name : "", om->sources[other->source].label);
		free(w), free(path);
	}
}

/* The type a claim's VolumeAttributesClass or annotation asks for decides over its class. */
struct override {
	const char *type;
	const char *field; /* in the claim */
	struct kube_mark at;
	char *what;        /* "VolumeAttributesClass 'x'" or "the annotation ebs.csi.aws.com/volumeType" */
};

static void judge_claim(struct run *r, size_t i, const struct km_claim *c)
{
	const struct km_object *o = &r->checked->objs[i];
	char *w = what_of(o, c);
	struct override ov[2];
	size_t n_ov = 0;
	int from_extra;
	if (c->vac.value && *c->vac.value) {
		char *vpath = join_path(c->path, "spec.volumeAttributesClassName");
		const struct km_object *vac = find_class(r, KM_VOLUME_ATTRIBUTES_CLASS, c->vac.value, &from_extra);
		const struct km_param *tp = vac ? param(vac, "type") : NULL;
		if (!vac) {
			add_finding(r, R_UNRESOLVED, i, vpath, c->vac.at,
				    "%s names VolumeAttributesClass '%s', which none of the inputs define", w, c->vac.value);
		} else if (tp && *tp->value) {
			char *orig = class_origin(r, vac, from_extra);
			struct buf wb = BUF_INIT;
			buf_addf(&wb, "VolumeAttributesClass '%s'%s", c->vac.value, orig);
			free(orig);
			ov[n_ov++] = (struct override){tp->value, "spec.volumeAttributesClassName", c->vac.at, buf_detach(&wb)};
		}
		free(vpath);
	}
	if (c->volume_type.value && *c->volume_type.value)
		ov[n_ov++] = (struct override){c->volume_type.value, "metadata.annotations['ebs.csi.aws.com/volumeType']",
					       c->volume_type.at, xstrdup("the annotation ebs.csi.aws.com/volumeType")};
	int decided = 0;
	for (size_t k = 0; k < n_ov; k++) {
		if (is_gp2(ov[k].type)) {
			char *p = join_path(c->path, ov[k].field);
			add_finding(r, R_CLAIM_REQUESTS_GP2, i, p, ov[k].at, "%s asks for gp2 through %s", w, ov[k].what);
			free(p);
		}
		decided = 1;
	}
	for (size_t k = 0; k < n_ov; k++)
		free(ov[k].what);
	if (decided) {
		free(w);
		return;
	}

	const struct km_str *named = c->beta_class.value ? &c->beta_class : c->storage_class.value ? &c->storage_class : NULL;
	if (named && !*named->value) {
		free(w); /* "": no class, no dynamic provisioning */
		return;
	}
	if (named) {
		const char *field = named == &c->beta_class ? "metadata.annotations['volume.beta.kubernetes.io/storage-class']"
							    : "spec.storageClassName";
		char *path = join_path(c->path, field);
		const struct km_object *cls = find_class(r, KM_STORAGE_CLASS, named->value, &from_extra);
		const struct km_param *tp;
		if (!cls)
			add_finding(r, R_UNRESOLVED, i, path, named->at,
				    "%s names StorageClass '%s', which none of the inputs define", w, named->value);
		else if (is_gp2(class_type(cls, &tp))) {
			char *orig = class_origin(r, cls, from_extra);
			add_finding(r, R_CLAIM_GP2_CLASS, i, path, named->at, "%s names StorageClass '%s'%s, which provisions gp2",
				    w, named->value, orig);
			free(orig);
		}
		free(path);
		free(w);
		return;
	}
	/* no class: the default one, from the checked objects when they mark one */
	const struct km_object *defs[MAX_DEFAULTS];
	const struct kube_manifest *dm = r->checked;
	size_t n_def = defaults_of(&r->checked_classes, defs, MAX_DEFAULTS);
	if (n_def == 0) {
		dm = r->extra;
		n_def = defaults_of(&r->extra_classes, defs, MAX_DEFAULTS);
	}
	char *path = join_path(c->path, "spec");
	if (n_def == 0) {
		add_finding(r, R_UNKNOWN_DEFAULT, i, path, c->spec_at,
			    "%s names no class, and no default class is known: it gets the cluster's default", w);
	} else {
		for (size_t k = 0; k < n_def && k < MAX_DEFAULTS; k++) {
			const struct km_param *tp;
			if (!is_gp2(class_type(defs[k], &tp)))
				continue;
			char *orig = class_origin(r, defs[k], dm == r->extra);
			add_finding(r, R_CLAIM_DEFAULT_GP2, i, path, c->spec_at,
				    "%s names no class and gets the default class '%s'%s, which provisions gp2%s", w,
				    defs[k]->name ? defs[k]->name : "", orig, n_def > 1 ? " (one of several defaults)" : "");
			free(orig);
			break;
		}
	}
	free(path);
	free(w);
}

void check_run(struct check_result *out, const struct kube_manifest *checked, const struct kube_manifest *extra,
	       const struct check_options *o)
{
	memset(out, 0, sizeof *out);
	struct check_options none = {0, NULL, 0};
	struct run r = {out, checked, extra, o ? o : &none, {NULL, 0}, {NULL, 0}};
	classes_of(&r.checked_classes, checked);
	classes_of(&r.extra_classes, extra);
	for (size_t i = 0; i < checked->n; i++) {
		const struct km_object *obj = &checked->objs[i];
		out->objects++;
		for (size_t k = 0; k < obj->n_skips; k++)
			if (!check_rule_find(obj->skips[k].key)) {
				char *name = km_object_display_name(obj);
				struct buf where = BUF_INIT;
				buf_adds(&where, checked->sources[obj->source].label);
				if (obj->document)
					buf_addf(&where, ": document %zu", obj->document);
				if (obj->skips[k].at.line)
					buf_addf(&where, ", line %zu", obj->skips[k].at.line);
				strv_addf(&out->notes, &out->n_notes, &out->alloc_notes,
					  "%s: %s '%s': annotation skip-check.ebsmigrate.io/%s names no rule (see "
					  "'ebsmigrate check --list-rules')",
					  where.s, obj->kind, name, obj->skips[k].key);
				buf_release(&where);
				free(name);
			}
		switch (obj->what) {
		case KM_STORAGE_CLASS:
			out->storage_classes++;
			judge_storage_class(&r, i);
			break;
		case KM_VOLUME_ATTRIBUTES_CLASS:
			out->vacs++;
			judge_vac(&r, i);
			break;
		case KM_CLAIMS:
			for (size_t k = 0; k < obj->n_claims; k++) {
				out->claims++;
				judge_claim(&r, i, &obj->claims[k]);
			}
			break;
		}
	}
	judge_several_defaults(&r);
	free((void *)r.checked_classes.v);
	free((void *)r.extra_classes.v);
	/* several-defaults findings came last: put every finding back in object order */
	for (size_t a = 1; a < out->n; a++) {
		struct check_finding f = out->findings[a];
		size_t b = a;
		while (b > 0 && out->findings[b - 1].object > f.object) {
			out->findings[b] = out->findings[b - 1];
			b--;
		}
		out->findings[b] = f;
	}
}

void check_result_release(struct check_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->findings[i].message), free(r->findings[i].path), free(r->findings[i].suppressed);
	free(r->findings);
	strv_free(r->notes, r->n_notes);
	memset(r, 0, sizeof *r);
}

int check_object_failed(const struct check_result *r, size_t object)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->findings[i].object == object && r->findings[i].level == CHECK_ERROR && !r->findings[i].suppressed)
			return 1;
	return 0;
}
