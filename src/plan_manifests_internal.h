/*
 * plan_manifests_internal.h - shared by the files of `plan --manifests` (plan_manifests.c: the
 * model, the storage classes, the per-cluster files and the README; plan_manifests_scripts.c:
 * the batch scripts). Not a public header: nothing outside plan_manifests*.c includes it.
 *
 * Ownership: a struct gen lives for one manifest_build; it borrows the plan, the fleet and the
 * options, and owns its clusters' and accounts' groups, directory names and templates.
 */
#ifndef EBSMIGRATE_PLAN_MANIFESTS_INTERNAL_H
#define EBSMIGRATE_PLAN_MANIFESTS_INTERNAL_H

#include <stddef.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/plan_manifests.h"

enum tpl_id { TPL_VAC, TPL_SC, TPL_UNDEFAULT, TPL_PATCH, TPL_KUSTOMIZATION, TPL_README, TPL_COUNT };

struct templates {
	struct buf text[TPL_COUNT];
	char *name[TPL_COUNT]; /* for messages: the override path or "templates/NAME" */
};

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

/* Appends a finished file to the set; data's text moves into it (data is left empty). */
static inline void add_file(struct manifest_set *s, const char *path, struct buf *data, int mode)
{
	XGROW(s->files, s->n, s->alloc);
	struct manifest_file *f = &s->files[s->n++];
	f->path = xstrdup(path);
	f->len = data->len;
	f->data = buf_detach(data);
	f->mode = mode;
}

/* Text for a comment line (YAML, sh, Markdown code): control characters become '?'. */
static inline void add_comment_text(struct buf *b, const char *s)
{
	for (; s && *s; s++)
		buf_addc(b, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* A cluster's batch scripts (CLUSTER/batches/batch-NNN-pvc-patches.sh and rollbacks, dir is
 * "CLUSTER/batches") and an EC2 account's (DIR/batch-NNN-modify-volume.sh); each appends its
 * README steps to g->steps, numbered from *step. (plan_manifests_scripts.c) */
int manifest_cluster_batches(struct gen *g, const struct cluster *c, const char *dir, size_t *step, struct buf *err);
void manifest_ec2_batches(struct gen *g, const struct ec2_account *a, size_t *step);

#endif
