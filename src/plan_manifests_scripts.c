/*
 * plan_manifests_scripts.c - `plan --manifests DIR`: the batch scripts, one forward script and
 * its rollback.sh per batch (CLUSTER/batches/batch-NNN-pvc-patches.sh, ec2[/ACCOUNT]/
 * batch-NNN-modify-volume.sh, and the -blocked- ones after them), and each batch's step in the
 * README.
 *
 * Entry points (plan_manifests_internal.h, called by plan_manifests.c's per-cluster pass):
 * manifest_cluster_batches (PVC patches: VAC or annotation route), manifest_ec2_batches
 * (modify-volume).
 *
 * Invariants:
 *   - Batches follow the group's order: migrate batches first (plan order), then blocked ones
 *     numbered after them (sorted by eligible_at), each blocked volume guarded by its time.
 *   - Every target is explicit: every modify-volume gives --iops and --throughput; annotations
 *     give all three.
 *   - Every value that reaches JSON or sh goes through its quoting helper, every comment
 *     through add_comment_text.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/plan_manifests.h"
#include "ebsmigrate/template.h"

#include "plan_manifests_internal.h"

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

/* 1 when some claim of the batch named no class before (its rollback goes through EC2). */
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

static size_t n_batches(size_t n, size_t size)
{
	return (n + size - 1) / size;
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

int manifest_cluster_batches(struct gen *g, const struct cluster *c, const char *dir, size_t *step, struct buf *err)
{
	return each_batch(g, &c->g, dir, "pvc-patches.sh", "claim", dir, cluster_batch_cb, c, step, err);
}

void manifest_ec2_batches(struct gen *g, const struct ec2_account *a, size_t *step)
{
	each_batch(g, &a->g, a->dir, "modify-volume.sh", "volume", a->dir, ec2_batch_cb, a, step, NULL);
}
