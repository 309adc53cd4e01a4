/*
 * plan_manifests.h - `plan --manifests DIR`: renders a plan as files an operator reviews and applies
 * (VolumeAttributesClasses, PVC merge patches per batch with rollbacks, a gp3 StorageClass, the
 * patch that removes gp2's default flag, EC2 modify-volume scripts, kustomization.yaml, README).
 * Layout and rules: docs/manifests.md. Templates: templates/ (compiled in; --templates-dir).
 *
 * Two steps: manifest_build renders every file in memory (pure: no file system unless
 * templates_dir is set; plan_manifests.c, plan_manifests_scripts.c), manifest_write_dir puts
 * them on disk atomically (DIR.tmp-XXXXXX, then one rename; plan_manifests_write.c).
 * manifest_write does both.
 *
 * Ownership: struct manifest_set owns its files, paths, data and warnings (heap copies);
 * manifest_set_release frees them. manifest_build borrows the plan, the fleet and the options.
 */
#ifndef EBSMIGRATE_PLAN_MANIFESTS_H
#define EBSMIGRATE_PLAN_MANIFESTS_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/template.h"
#include "ebsmigrate/volume.h"

struct fs_staging;

#define MANIFEST_DEFAULT_BATCH 10
#define MANIFEST_MAX_BATCH 1000
#define MANIFEST_MARKER ".ebsmigrate-manifests" /* marks a DIR that --force may replace */

/* How CSI volumes in Kubernetes are modified (one choice per run): apply's method, one enum for
 * both (enum modify_method, apply_state.h); METHOD_AUTO, a zeroed option, reads as vac. In-tree
 * PVs, unbound PVs and volumes outside Kubernetes always take the EC2 route. */
#define manifest_route modify_method
#define MANIFEST_ROUTE_VAC METHOD_VAC
#define MANIFEST_ROUTE_ANNOTATION METHOD_ANNOTATION
#define MANIFEST_ROUTE_EC2 METHOD_EC2

/* "vac" for METHOD_AUTO. Inline so that the scripts (plan_manifests_scripts.c) name a route
 * without calling back into plan_manifests.c. */
static inline const char *manifest_route_name(enum manifest_route r)
{
	return modify_method_name(r == METHOD_AUTO ? METHOD_VAC : r);
}
int manifest_route_parse(const char *s, enum manifest_route *out); /* vac, annotation, ec2: 0 or EM_EINPUT */

struct manifest_options {
	const char *dir;           /* output directory, created fresh */
	int force;                 /* replace a DIR holding only files its MANIFEST_MARKER index lists */
	size_t batch_size;         /* volumes per batch; 0 = MANIFEST_DEFAULT_BATCH */
	enum manifest_route route;
	const char *templates_dir; /* NULL: the compiled-in templates; else files there override them */
};

struct manifest_file {
	char *path; /* relative to DIR: "prod/00-volumeattributesclasses.yaml" */
	char *data;
	size_t len;
	int mode;   /* 0644, 0755 for scripts; on disk 0666 or 0777 & ~umask */
};

struct manifest_set {
	struct manifest_file *files;
	size_t n, alloc;
	char **warnings; /* complete lower-case messages, for stderr (also in the README) */
	size_t n_warnings, alloc_warnings;
	size_t n_clusters, n_vacs, n_pvcs, n_ec2, n_batches, n_blocked;
};

void manifest_set_init(struct manifest_set *s);
void manifest_set_release(struct manifest_set *s);
/* The file with that relative path, or NULL. */
const struct manifest_file *manifest_set_find(const struct manifest_set *s, const char *path);

/* Renders every file for the plan's migrate and blocked items. Returns 0, EM_EINPUT (bad
 * template, bad options), EM_ENOTFOUND (unreadable template) or EM_ECONFLICT (a same-named
 * VolumeAttributesClass with other parameters exists) with one message in err. */
int manifest_build(struct manifest_set *out, const struct plan *p, const struct fleet *f,
		   const struct manifest_options *o, struct buf *err);
/* Checks that dir may be written: absent, an empty directory, or (force) a directory whose every
 * file is listed in its MANIFEST_MARKER index (the files an earlier --manifests wrote); anything
 * else in it (a file, a symlink, a directory holding none of ours) is refused, naming it.
 * 0 or EM_EINPUT. Cheap: call it before a long inventory. */
int manifest_check_dir(const char *dir, int force, struct buf *err);

/* Writing in two steps, so that a command can commit the directory together with its other
 * outputs: manifest_stage (after manifest_check_dir) writes s into a staging directory of st
 * (fs.h: DIR.tmp-XXXXXX, FS_DIR_REPLACE); st's commit swaps it into place and removes, from the
 * previous DIR, only the files its index listed (the directory itself goes only when nothing
 * else is left in it); st's release removes it when not committed. */
int manifest_stage(struct fs_staging *st, const struct manifest_set *s, const char *dir, int force,
		   struct buf *err);
/* Stage and commit at once; on failure nothing is left behind and an existing dir is untouched.
 * 0, EM_EINPUT or EM_EIO. */
int manifest_write_dir(const struct manifest_set *s, const char *dir, int force, struct buf *err);
/* manifest_build then manifest_write_dir. out is filled even when writing fails. */
int manifest_write(struct manifest_set *out, const struct plan *p, const struct fleet *f,
		   const struct manifest_options *o, struct buf *err);

/* Pieces exposed for tests. */

/* "gp3-IOPS-THROUGHPUT", e.g. "gp3-3000-125": apply_vac_name, the one rule. */
#define manifest_vac_name apply_vac_name

enum manifest_vac_api {
	VAC_API_UNKNOWN = 0, /* version not known: v1beta1, with a warning */
	VAC_API_NONE,        /* < 1.29: no VolumeAttributesClass at all */
	VAC_API_V1ALPHA1,    /* 1.29-1.30: needs the feature gate and runtime-config */
	VAC_API_V1BETA1,     /* 1.31-1.33 */
	VAC_API_V1,          /* >= 1.34 */
};
/* Picks the VolumeAttributesClass API for a Kubernetes version ("1.33", "v1.33.4", "1.33+";
 * NULL or unparsable = unknown). *api_version_out: "storage.k8s.io/v1beta1" etc., NULL for NONE. */
enum manifest_vac_api manifest_vac_api(const char *k8s_version, const char **api_version_out);

/* Quoting and rendering live in template.h; these names stay for plan --manifests' tests. */
#define manifest_yaml_quote template_yaml_quote
#define manifest_sh_quote template_sh_quote
#define manifest_render template_render

#endif
