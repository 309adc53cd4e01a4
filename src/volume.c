/*
 * volume.c - the fleet container: volumes, cluster objects, notices, and an id index.
 *
 * Entry points: fleet_init/fleet_release, fleet_add_volume, fleet_find, volume_split_az.
 * Invariants: every volume_id in the fleet is unique (fleet_add_volume is only called after
 * fleet_find missed); the index maps ids to positions, so it survives the vols array moving.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/volume.h"

struct vol_index {
	struct strmap ids; /* volume_id -> position in vols */
};

static const char *const type_names[EBS_TYPE_COUNT] = {
	"unknown", "gp2", "gp3", "io1", "io2", "st1", "sc1", "standard",
};

const char *ebs_type_name(enum ebs_type t)
{
	return (t > EBS_UNKNOWN && t < EBS_TYPE_COUNT) ? type_names[t] : "unknown";
}

enum ebs_type ebs_type_parse(const char *s)
{
	if (!s)
		return EBS_UNKNOWN;
	for (int t = EBS_GP2; t < EBS_TYPE_COUNT; t++)
		if (strcmp(s, type_names[t]) == 0)
			return (enum ebs_type)t;
	return EBS_UNKNOWN;
}

void fleet_init(struct fleet *f)
{
	memset(f, 0, sizeof *f);
	f->index = xcalloc(1, sizeof *f->index);
}

struct volume *fleet_find(struct fleet *f, const char *volume_id)
{
	size_t pos;
	return strmap_get(&f->index->ids, volume_id, &pos) ? &f->vols[pos] : NULL;
}

struct volume *fleet_add_volume(struct fleet *f, const char *volume_id)
{
	XGROW(f->vols, f->n, f->alloc);
	struct volume *v = &f->vols[f->n];
	memset(v, 0, sizeof *v);
	v->volume_id = xstrdup(volume_id);
	v->metrics.min_burst_balance = -1;
	f->n++;
	strmap_put(&f->index->ids, volume_id, f->n - 1);
	return v;
}

void fleet_retain(struct fleet *f, const unsigned char *keep)
{
	size_t k = 0;
	strmap_release(&f->index->ids);
	for (size_t i = 0; i < f->n; i++) {
		if (!keep[i]) {
			volume_release(&f->vols[i]);
			continue;
		}
		if (k != i)
			f->vols[k] = f->vols[i];
		strmap_put(&f->index->ids, f->vols[k].volume_id, k);
		k++;
	}
	f->n = k;
}

void fleet_add_notice(struct fleet *f, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	XGROW(f->notices, f->n_notices, f->alloc_notices);
	f->notices[f->n_notices++] = buf_detach(&b);
}

size_t fleet_add_cluster(struct fleet *f, const char *name)
{
	for (size_t i = 0; i < f->n_clusters; i++)
		if (strcmp(f->clusters[i], name) == 0)
			return i;
	if (f->n_clusters >= f->alloc_clusters) {
		f->alloc_clusters = f->alloc_clusters ? f->alloc_clusters * 2 : 4;
		f->clusters = xrealloc(f->clusters, f->alloc_clusters * sizeof *f->clusters);
		f->cluster_versions =
			xrealloc(f->cluster_versions, f->alloc_clusters * sizeof *f->cluster_versions);
	}
	f->clusters[f->n_clusters] = xstrdup(name);
	f->cluster_versions[f->n_clusters] = NULL;
	return f->n_clusters++;
}

static void kv_free(struct kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void kube_binding_free(struct kube_binding *k)
{
	if (!k)
		return;
	free(k->cluster);
	free(k->pv);
	free(k->namespace_);
	free(k->pvc);
	free(k->storage_class);
	free(k->driver);
	free(k->vac);
	free(k->current_vac);
	free(k->statefulset);
	free(k->node);
	free(k->node_instance_type);
	kv_free(k->labels, k->n_labels);
	free(k);
}

void volume_release(struct volume *v)
{
	free(v->volume_id);
	free(v->account);
	free(v->region);
	free(v->availability_zone);
	free(v->location);
	free(v->state);
	free(v->kms_key_id);
	for (size_t i = 0; i < v->n_attachments; i++) {
		free(v->attachments[i].instance_id);
		free(v->attachments[i].device);
		free(v->attachments[i].state);
		free(v->attachments[i].instance_type);
	}
	free(v->attachments);
	kv_free(v->tags, v->n_tags);
	for (size_t i = 0; i < v->n_mods; i++)
		volume_mod_release(&v->mods[i]);
	free(v->mods);
	free(v->trail_starts);
	kube_binding_free(v->kube);
	free(v->source);
	memset(v, 0, sizeof *v);
}

void fleet_set_instance_limit(struct fleet *f, const char *type, int64_t iops, double mbps)
{
	for (size_t i = 0; i < f->n_limits; i++) {
		if (strcmp(f->limits[i].type, type) == 0) {
			f->limits[i].baseline_iops = iops;
			f->limits[i].baseline_mbps = mbps;
			return;
		}
	}
	XGROW(f->limits, f->n_limits, f->alloc_limits);
	f->limits[f->n_limits].type = xstrdup(type);
	f->limits[f->n_limits].baseline_iops = iops;
	f->limits[f->n_limits].baseline_mbps = mbps;
	f->n_limits++;
}

const struct instance_limit *fleet_instance_limit(const struct fleet *f, const char *type)
{
	for (size_t i = 0; type && i < f->n_limits; i++)
		if (strcmp(f->limits[i].type, type) == 0)
			return &f->limits[i];
	return NULL;
}

void fleet_release(struct fleet *f)
{
	for (size_t i = 0; i < f->n_instances; i++) {
		free(f->instances[i].key);
		free(f->instances[i].value);
	}
	free(f->instances);
	for (size_t i = 0; i < f->n_limits; i++)
		free(f->limits[i].type);
	free(f->limits);
	for (size_t i = 0; i < f->n; i++)
		volume_release(&f->vols[i]);
	free(f->vols);
	for (size_t i = 0; i < f->n_scs; i++) {
		struct storage_class *s = &f->scs[i];
		free(s->cluster);
		free(s->name);
		free(s->provisioner);
		free(s->type);
		free(s->encrypted);
		free(s->kms_key_id);
		kv_free(s->parameters, s->n_parameters);
	}
	free(f->scs);
	for (size_t i = 0; i < f->n_sts; i++) {
		struct statefulset_ref *s = &f->sts[i];
		free(s->cluster);
		free(s->namespace_);
		free(s->name);
		strv_free(s->claim_templates, s->n_templates);
		strv_free(s->claim_storage_classes, s->n_templates);
	}
	free(f->sts);
	for (size_t i = 0; i < f->n_vacs; i++) {
		struct vac_ref *s = &f->vacs[i];
		free(s->cluster);
		free(s->name);
		free(s->driver);
		free(s->api_version);
		kv_free(s->parameters, s->n_parameters);
	}
	free(f->vacs);
	strv_free(f->clusters, f->n_clusters);
	strv_free(f->cluster_versions, f->n_clusters);
	strv_free(f->notices, f->n_notices);
	if (f->index) {
		strmap_release(&f->index->ids);
		free(f->index);
	}
	memset(f, 0, sizeof *f);
}

const char *volume_tag(const struct volume *v, const char *key)
{
	for (size_t i = 0; i < v->n_tags; i++)
		if (strcmp(v->tags[i].key, key) == 0)
			return v->tags[i].value;
	return NULL;
}

const struct volume_mod *volume_latest_mod(const struct volume *v)
{
	return v->n_mods ? &v->mods[v->n_mods - 1] : NULL;
}

void volume_mod_release(struct volume_mod *m)
{
	free(m->state);
	free(m->status_message);
	memset(m, 0, sizeof *m);
}

static int mod_rank(const char *state)
{
	static const char *const order[] = {"modifying", "optimizing", "completed", "failed", NULL};
	for (int i = 0; state && order[i]; i++)
		if (strcmp(state, order[i]) == 0)
			return i;
	return -1;
}

void volume_add_mod(struct volume *v, const struct volume_mod *m)
{
	for (size_t i = 0; i < v->n_mods; i++) {
		if (v->mods[i].start_time != m->start_time)
			continue;
		if (mod_rank(m->state) > mod_rank(v->mods[i].state)) {
			volume_mod_release(&v->mods[i]);
			v->mods[i] = *m;
			v->mods[i].state = xstrdup(m->state);
			v->mods[i].status_message = xstrdup(m->status_message);
		}
		return;
	}
	v->mods = xrealloc(v->mods, (v->n_mods + 1) * sizeof *v->mods);
	size_t at = v->n_mods;
	while (at > 0 && v->mods[at - 1].start_time > m->start_time) {
		v->mods[at] = v->mods[at - 1];
		at--;
	}
	v->mods[at] = *m;
	v->mods[at].state = xstrdup(m->state);
	v->mods[at].status_message = xstrdup(m->status_message);
	v->n_mods++;
}

void volume_add_trail_start(struct volume *v, time_t t)
{
	size_t at = v->n_trail_starts;
	while (at > 0 && v->trail_starts[at - 1] > t)
		at--;
	if (at > 0 && v->trail_starts[at - 1] == t)
		return;
	v->trail_starts = xrealloc(v->trail_starts, (v->n_trail_starts + 1) * sizeof *v->trail_starts);
	memmove(v->trail_starts + at + 1, v->trail_starts + at, (v->n_trail_starts - at) * sizeof *v->trail_starts);
	v->trail_starts[at] = t;
	v->n_trail_starts++;
}

int volume_split_az(const char *az, char **region_out, char **location_out)
{
	/* A region is LETTERS-LETTERS-DIGITS (us-east-1, ap-northeast-2, us-gov-west-1 has an
	 * extra word). An AZ is the region plus one letter; anything after the region's digits
	 * and a '-' is a Local Zone / Wavelength group, priced as its own location. */
	size_t n = az ? strlen(az) : 0;
	if (n < 4)
		return EM_EINPUT;
	size_t i = 0, dashes = 0;
	/* walk words: letters '-' ... until a word of digits */
	for (;;) {
		size_t start = i;
		while (i < n && islower((unsigned char)az[i]))
			i++;
		if (i == start)
			return EM_EINPUT;
		if (i >= n || az[i] != '-')
			return EM_EINPUT;
		i++;
		dashes++;
		if (i < n && isdigit((unsigned char)az[i]))
			break;
		if (dashes > 3)
			return EM_EINPUT;
	}
	if (dashes < 2)
		return EM_EINPUT;
	while (i < n && isdigit((unsigned char)az[i]))
		i++;
	size_t region_len = i;
	if (i == n)
		return EM_EINPUT; /* a region, not an AZ */
	if (islower((unsigned char)az[i]) && i + 1 == n) {
		*region_out = xstrndup(az, region_len);
		*location_out = xstrndup(az, region_len);
		return 0;
	}
	if (az[i] != '-')
		return EM_EINPUT;
	/* Local Zone "us-west-2-lax-1a" -> group "us-west-2-lax-1"; Wavelength
	 * "us-east-1-wl1-bos-wlz-1" has no trailing letter and is its own group. */
	size_t loc_len = n;
	if (islower((unsigned char)az[n - 1]) && isdigit((unsigned char)az[n - 2]))
		loc_len = n - 1;
	*region_out = xstrndup(az, region_len);
	*location_out = xstrndup(az, loc_len);
	return 0;
}
