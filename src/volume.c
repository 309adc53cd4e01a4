/*
 * volume.c - the fleet container: volumes, cluster objects, notices, and an id index.
 *
 * Entry points: fleet_init/fleet_release, fleet_add_volume, fleet_find (and the pair
 * fleet_find_slot/fleet_add_found: one hash per insert), volume_split_az, and the name rules of
 * what a volume record trusts (volume_id_ok, volume_region_ok, volume_az_in_region); a volume's
 * modifications (volume_add_mod) and EC2's modification state, read once into its enum
 * (volume_mod_set_state; volume_mod_state_name is the one name table, an unknown state kept as
 * EC2 wrote it).
 * Invariants: every volume_id in the fleet is unique (fleet_add_volume is only called after
 * fleet_find missed); the index maps ids to positions, so it survives the vols array moving.
 * A volume's strings are its own heap copies, or lie in its v->strings block (one allocation
 * for a volume read from EC2); volume_release tells them apart by address.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/strlist.h"
#include "ebsmigrate/volume.h"

/* Open addressing on the ids' hashes; a slot holds position + 1 (0: empty) and the full hash,
 * so probing compares strings only on a hash match and growing never hashes an id again. */
struct vol_slot {
	uint64_t hash;
	size_t pos1;
};

struct vol_index {
	struct vol_slot *slots;
	size_t cap, used; /* cap a power of two, used <= cap / 2 */
};

static uint64_t id_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static const char *const type_names[EBS_TYPE_COUNT] = {
	"unknown", "gp2", "gp3", "io1", "io2", "st1", "sc1", "standard",
};

const char *ebs_type_name(enum ebs_type t)
{
	return (t > EBS_UNKNOWN && t < EBS_TYPE_COUNT) ? type_names[t] : "unknown";
}

enum ebs_type ebs_type_parse(const char *s)
{
	int t = em_name_index(type_names, EBS_TYPE_COUNT, s); /* "unknown" is EBS_UNKNOWN's own name */
	return t < 0 ? EBS_UNKNOWN : (enum ebs_type)t;
}

void fleet_init(struct fleet *f)
{
	memset(f, 0, sizeof *f);
	f->index = xcalloc(1, sizeof *f->index);
}

/* The slot of the id (hash h) or the empty slot where it would go. */
static struct vol_slot *index_probe(const struct fleet *f, const char *volume_id, uint64_t h)
{
	const struct vol_index *x = f->index;
	size_t mask = x->cap - 1;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		struct vol_slot *s = &x->slots[i];
		if (!s->pos1 || (s->hash == h && strcmp(f->vols[s->pos1 - 1].volume_id, volume_id) == 0))
			return s;
	}
}

struct volume *fleet_find_slot(struct fleet *f, const char *volume_id, struct fleet_slot *slot)
{
	uint64_t h = id_hash(volume_id);
	if (slot)
		slot->hash = h;
	if (!f->index->cap)
		return NULL;
	struct vol_slot *s = index_probe(f, volume_id, h);
	return s->pos1 ? &f->vols[s->pos1 - 1] : NULL;
}

struct volume *fleet_find(struct fleet *f, const char *volume_id)
{
	return fleet_find_slot(f, volume_id, NULL);
}

static void index_grow(struct vol_index *x)
{
	size_t cap = x->cap ? x->cap * 2 : 64;
	struct vol_slot *slots = xcalloc(cap, sizeof *slots);
	for (size_t i = 0; i < x->cap; i++) {
		if (!x->slots[i].pos1)
			continue;
		size_t j = (size_t)x->slots[i].hash & (cap - 1);
		while (slots[j].pos1)
			j = (j + 1) & (cap - 1);
		slots[j] = x->slots[i];
	}
	free(x->slots);
	x->slots = slots;
	x->cap = cap;
}

struct volume *fleet_add_found(struct fleet *f, const struct fleet_slot *slot, char *volume_id)
{
	struct vol_index *x = f->index;
	if ((x->used + 1) * 2 > x->cap)
		index_grow(x);
	XGROW(f->vols, f->n, f->alloc);
	struct volume *v = &f->vols[f->n];
	memset(v, 0, sizeof *v);
	v->volume_id = volume_id;
	v->metrics.min_burst_balance = -1;
	f->n++;
	/* the id is not in the index (fleet_find_slot missed it), so the first empty slot */
	size_t mask = x->cap - 1, i = (size_t)slot->hash & mask;
	while (x->slots[i].pos1)
		i = (i + 1) & mask;
	x->slots[i].hash = slot->hash;
	x->slots[i].pos1 = f->n;
	x->used++;
	return v;
}

struct volume *fleet_add_volume(struct fleet *f, const char *volume_id)
{
	struct fleet_slot slot = {id_hash(volume_id)};
	return fleet_add_found(f, &slot, xstrdup(volume_id));
}

void fleet_trim_volumes(struct fleet *f)
{
	if (f->alloc <= f->n)
		return;
	if (!f->n) {
		free(f->vols);
		f->vols = NULL;
		f->alloc = 0;
		return;
	}
	f->vols = xrealloc(f->vols, f->n * sizeof *f->vols);
	f->alloc = f->n;
}

void fleet_move_volumes(struct fleet *dst, struct fleet *src)
{
	if (!dst->n) { /* nothing to merge with: the array and its index change hands, no copy */
		struct volume *vols = dst->vols;
		size_t alloc = dst->alloc;
		struct vol_index *index = dst->index;
		dst->vols = src->vols, dst->n = src->n, dst->alloc = src->alloc, dst->index = src->index;
		src->vols = vols, src->n = 0, src->alloc = alloc, src->index = index;
		return;
	}
	/* Room for all of src at once, exactly: growing by doubling while src is alive left a
	 * 100,000-volume live read with the merged array at 131,072 slots (37.75 MB of 288-byte
	 * volumes for 28.8 MB of them) next to the regions' private arrays, the heap's peak. */
	if (dst->alloc - dst->n < src->n) {
		dst->alloc = dst->n + src->n;
		dst->vols = xrealloc(dst->vols, dst->alloc * sizeof *dst->vols);
	}
	for (size_t i = 0; i < src->n; i++) {
		struct volume *s = &src->vols[i];
		struct fleet_slot slot;
		if (fleet_find_slot(dst, s->volume_id, &slot)) { /* one id twice: the first kept */
			volume_release(s);
			continue;
		}
		struct volume *d = fleet_add_found(dst, &slot, s->volume_id);
		*d = *s;
	}
	src->n = 0;
}

void fleet_retain(struct fleet *f, const unsigned char *keep)
{
	struct vol_index *x = f->index;
	size_t k = 0;
	if (x->cap)
		memset(x->slots, 0, x->cap * sizeof *x->slots);
	x->used = 0;
	for (size_t i = 0; i < f->n; i++) {
		if (!keep[i]) {
			volume_release(&f->vols[i]);
			continue;
		}
		if (k != i)
			f->vols[k] = f->vols[i];
		/* the kept ids are distinct and the index keeps its capacity: no probe compares */
		uint64_t h = id_hash(f->vols[k].volume_id);
		size_t mask = x->cap - 1, j = (size_t)h & mask;
		while (x->slots[j].pos1)
			j = (j + 1) & mask;
		x->slots[j].hash = h;
		x->slots[j].pos1 = ++k;
		x->used++;
	}
	f->n = k;
}

void fleet_add_notice(struct fleet *f, const char *fmt, ...)
{
	XGROW(f->notices, f->n_notices, f->alloc_notices);
	va_list ap;
	va_start(ap, fmt);
	f->notices[f->n_notices++] = xstrvfmt(fmt, ap);
	va_end(ap);
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

/* Element release functions for EM_RELEASE_ARRAY: each frees what one element owns. */
static void kv_release(void *p)
{
	struct kv *kv = p;
	EM_FREE_ALL(kv->key, kv->value);
}

void kv_free(struct kv *kv, size_t n)
{
	EM_RELEASE_ARRAY(kv, n, kv_release);
}

void kube_binding_free(struct kube_binding *k)
{
	if (!k)
		return;
	EM_FREE_ALL(k->cluster, k->pv, k->namespace_, k->pvc, k->storage_class, k->driver, k->vac, k->current_vac,
		    k->statefulset, k->node, k->node_instance_type);
	kv_free(k->labels, k->n_labels);
	free(k);
}

/* Whether p lies in v's strings block (then it is freed with the block, not on its own). */
static int in_block(const struct volume *v, const void *p)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)v->strings;
	return v->strings && a >= b && a < b + v->strings_size;
}

static void free_owned(const struct volume *v, void *p)
{
	if (!in_block(v, p))
		free(p);
}

void volume_mod_release(struct volume_mod *m)
{
	free(m->state_text);
	free(m->status_message);
	memset(m, 0, sizeof *m);
}

/* EC2's names, in the order of enum volume_mod_state from MOD_MODIFYING on. */
static const char *const mod_state_names[] = {"modifying", "optimizing", "completed", "failed"};
_Static_assert(sizeof mod_state_names / sizeof mod_state_names[0] == MOD_FAILED - MOD_MODIFYING + 1,
	       "one name per known volume_mod_state");

void volume_mod_set_state(struct volume_mod *m, const char *s)
{
	free(m->state_text);
	m->state_text = NULL;
	int i = em_name_index(mod_state_names, (int)(sizeof mod_state_names / sizeof mod_state_names[0]), s);
	m->state = !s ? MOD_STATE_NONE : i < 0 ? MOD_STATE_OTHER : (enum volume_mod_state)(MOD_MODIFYING + i);
	if (m->state == MOD_STATE_OTHER)
		m->state_text = xstrdup(s);
}

const char *volume_mod_state_name(const struct volume_mod *m)
{
	if (m->state >= MOD_MODIFYING && m->state <= MOD_FAILED)
		return mod_state_names[m->state - MOD_MODIFYING];
	return m->state == MOD_STATE_OTHER ? m->state_text : NULL;
}

int volume_mod_in_flight(enum volume_mod_state s)
{
	return s == MOD_MODIFYING || s == MOD_OPTIMIZING;
}

static void mod_release(void *p)
{
	volume_mod_release(p);
}

void volume_release(struct volume *v)
{
	free_owned(v, v->volume_id);
	free_owned(v, v->account);
	free_owned(v, v->region);
	free_owned(v, v->availability_zone);
	free_owned(v, v->location);
	free_owned(v, v->state);
	free_owned(v, v->kms_key_id);
	for (size_t i = 0; i < v->n_attachments; i++) {
		free_owned(v, v->attachments[i].instance_id);
		free_owned(v, v->attachments[i].device);
		free_owned(v, v->attachments[i].state);
		free_owned(v, v->attachments[i].instance_type);
	}
	free_owned(v, v->attachments);
	for (size_t i = 0; i < v->n_tags; i++) {
		free_owned(v, v->tags[i].key);
		free_owned(v, v->tags[i].value);
	}
	free_owned(v, v->tags);
	EM_RELEASE_ARRAY(v->mods, v->n_mods, mod_release);
	free(v->trail_starts);
	kube_binding_free(v->kube);
	free_owned(v, v->source);
	free(v->strings);
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

void fleet_account_coverage(const struct fleet *f, size_t *covered, size_t *partial, size_t *in_scope)
{
	*covered = *partial = *in_scope = 0;
	for (size_t i = 0; i < f->n_accounts; i++) {
		const char *s = f->accounts[i].status;
		*in_scope += strcmp(s, "skipped") != 0;
		*covered += strcmp(s, "read") == 0;
		*partial += strcmp(s, "partial") == 0;
	}
}

const char *fleet_account_name(const struct fleet *f, const char *id)
{
	for (size_t i = 0; id && i < f->n_accounts; i++)
		if (f->accounts[i].id && strcmp(f->accounts[i].id, id) == 0)
			return f->accounts[i].name;
	return NULL;
}

static void account_region_release(void *p)
{
	struct fleet_account_region *r = p;
	EM_FREE_ALL(r->region, r->status, r->error);
}

static void account_release(void *p)
{
	struct fleet_account *a = p;
	EM_FREE_ALL(a->id, a->name, a->profile, a->role_arn, a->status, a->error);
	EM_RELEASE_ARRAY(a->regions, a->n_regions, account_region_release);
}

static void fleet_accounts_release(struct fleet *f)
{
	EM_RELEASE_ARRAY(f->accounts, f->n_accounts, account_release);
	free(f->current_account);
	f->accounts = NULL;
	f->n_accounts = 0;
	f->current_account = NULL;
}

static void limit_release(void *p)
{
	free(((struct instance_limit *)p)->type);
}

static void volume_release_element(void *p)
{
	volume_release(p);
}

static void storage_class_release(void *p)
{
	struct storage_class *s = p;
	EM_FREE_ALL(s->cluster, s->name, s->provisioner, s->type, s->encrypted, s->kms_key_id);
	kv_free(s->parameters, s->n_parameters);
}

static void statefulset_release(void *p)
{
	struct statefulset_ref *s = p;
	EM_FREE_ALL(s->cluster, s->namespace_, s->name);
	strv_free(s->claim_templates, s->n_templates);
	strv_free(s->claim_storage_classes, s->n_templates);
}

static void vac_release(void *p)
{
	struct vac_ref *s = p;
	EM_FREE_ALL(s->cluster, s->name, s->driver, s->api_version);
	kv_free(s->parameters, s->n_parameters);
}

void fleet_release(struct fleet *f)
{
	fleet_accounts_release(f);
	kv_free(f->instances, f->n_instances);
	EM_RELEASE_ARRAY(f->limits, f->n_limits, limit_release);
	EM_RELEASE_ARRAY(f->vols, f->n, volume_release_element);
	EM_RELEASE_ARRAY(f->scs, f->n_scs, storage_class_release);
	EM_RELEASE_ARRAY(f->sts, f->n_sts, statefulset_release);
	EM_RELEASE_ARRAY(f->vacs, f->n_vacs, vac_release);
	strv_free(f->clusters, f->n_clusters);
	strv_free(f->cluster_versions, f->n_clusters);
	strv_free(f->notices, f->n_notices);
	if (f->index) {
		free(f->index->slots);
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

/* How far along a record is: the known states in EC2's order (failed last, as a record that
 * ended); a missing or unknown state is behind every known one. */
static int mod_rank(enum volume_mod_state state)
{
	return state >= MOD_MODIFYING && state <= MOD_FAILED ? (int)(state - MOD_MODIFYING) : -1;
}

void volume_add_mod(struct volume *v, const struct volume_mod *m)
{
	for (size_t i = 0; i < v->n_mods; i++) {
		if (v->mods[i].start_time != m->start_time)
			continue;
		if (mod_rank(m->state) > mod_rank(v->mods[i].state)) {
			volume_mod_release(&v->mods[i]);
			v->mods[i] = *m;
			v->mods[i].state_text = xstrdup(m->state_text);
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
	v->mods[at].state_text = xstrdup(m->state_text);
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

/* The length of the region name az starts with: words of lower-case letters joined by '-' (two
 * to four: us-east-1, us-gov-west-1, us-isob-east-1), a '-' and a number; 0 when there is none. */
static size_t region_prefix_len(const char *az, size_t n)
{
	size_t i = 0, dashes = 0;
	/* walk words: letters '-' ... until a word of digits */
	for (;;) {
		size_t start = i;
		while (i < n && islower((unsigned char)az[i]))
			i++;
		if (i == start)
			return 0;
		if (i >= n || az[i] != '-')
			return 0;
		i++;
		dashes++;
		if (i < n && isdigit((unsigned char)az[i]))
			break;
		if (dashes > 3)
			return 0;
	}
	if (dashes < 2)
		return 0;
	while (i < n && isdigit((unsigned char)az[i]))
		i++;
	return i;
}

int volume_az_prefixes(const char *az, size_t *region_len, size_t *location_len)
{
	/* A region is LETTERS-LETTERS-DIGITS (us-east-1, ap-northeast-2, us-gov-west-1 has an
	 * extra word). An AZ is the region plus one letter; anything after the region's digits
	 * and a '-' is a Local Zone / Wavelength group, priced as its own location. */
	size_t n = az ? strlen(az) : 0;
	if (n < 4)
		return EM_EINPUT;
	size_t i = region_prefix_len(az, n), region = i;
	if (i == 0 || i == n)
		return EM_EINPUT; /* no region, or a region and not an AZ */
	if (islower((unsigned char)az[i]) && i + 1 == n) {
		*region_len = region;
		*location_len = region;
		return 0;
	}
	if (az[i] != '-')
		return EM_EINPUT;
	/* the group's words: lower-case letters and digits between single dashes */
	for (size_t k = i + 1; k <= n; k++)
		if (k == n ? az[k - 1] == '-'
			   : !(islower((unsigned char)az[k]) || isdigit((unsigned char)az[k]) ||
			       (az[k] == '-' && az[k - 1] != '-')))
			return EM_EINPUT;
	/* Local Zone "us-west-2-lax-1a" -> group "us-west-2-lax-1"; Wavelength
	 * "us-east-1-wl1-bos-wlz-1" has no trailing letter and is its own group. */
	size_t loc_len = n;
	if (islower((unsigned char)az[n - 1]) && isdigit((unsigned char)az[n - 2]))
		loc_len = n - 1;
	*region_len = region;
	*location_len = loc_len;
	return 0;
}

int volume_region_ok(const char *region)
{
	size_t n = region ? strlen(region) : 0;
	return n > 0 && n <= VOLUME_NAME_MAX && region_prefix_len(region, n) == n;
}

int volume_az_in_region(const char *az, const char *region)
{
	size_t region_len, location_len;
	return az && strlen(az) <= VOLUME_NAME_MAX && volume_az_prefixes(az, &region_len, &location_len) == 0 &&
	       volume_region_ok(region) && strlen(region) == region_len && strncmp(az, region, region_len) == 0;
}

int volume_id_ok(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	if (n < 12 || n > 64 || strncmp(id, "vol-", 4) != 0)
		return 0;
	for (size_t i = 4; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return 1;
}

int volume_split_az(const char *az, char **region_out, char **location_out)
{
	size_t region_len, location_len;
	int rc = volume_az_prefixes(az, &region_len, &location_len);
	if (rc)
		return rc;
	*region_out = xstrndup(az, region_len);
	*location_out = xstrndup(az, location_len);
	return 0;
}
