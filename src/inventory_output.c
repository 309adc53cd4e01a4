/*
 * inventory_output.c - the fleet as JSON (schema ebsmigrate.inventory/v1, docs/inventory.md)
 * or as a table: volume, where it lives in Kubernetes, workload, node type, metrics, usage.
 * Streams into a buf (or, for the JSON document, through one into a FILE); volumes in fleet order
 * (region, then the order the API returned them).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory_output.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/table.h"

void inventory_json_volume_head(struct jsonw *w, const struct volume *v)
{
	jsonw_key_str(w, "volume_id", v->volume_id);
	jsonw_key_str(w, "account", v->account);
	jsonw_key_str(w, "region", v->region);
	jsonw_key_str(w, "availability_zone", v->availability_zone);
	jsonw_key_int(w, "size_gib", (long long)v->size_gib);
	jsonw_key_str(w, "type", v->type == EBS_UNKNOWN ? NULL : ebs_type_name(v->type));
	jsonw_key(w, "iops");
	jsonw_int_or_null(w, (long long)v->iops, v->iops != 0);
	jsonw_key(w, "throughput_mibps");
	jsonw_int_or_null(w, (long long)v->throughput, v->throughput != 0);
	jsonw_key_str(w, "state", v->state);
}

void inventory_json_accounts(struct jsonw *w, const struct fleet *f)
{
	if (!f->n_accounts)
		return;
	size_t covered, partial, in_scope;
	fleet_account_coverage(f, &covered, &partial, &in_scope);
	jsonw_key_str(w, "current_account", f->current_account);
	jsonw_key(w, "account_coverage");
	jsonw_object(w);
	jsonw_key_int(w, "read", (long long)covered);
	jsonw_key_int(w, "partial", (long long)partial);
	jsonw_key_int(w, "in_scope", (long long)in_scope);
	jsonw_end(w);
	jsonw_key(w, "accounts");
	jsonw_array(w);
	for (size_t i = 0; i < f->n_accounts; i++) {
		const struct fleet_account *a = &f->accounts[i];
		jsonw_lead(w, "\n");
		const struct jsonw_str_member account[] = {
			{"id", a->id}, {"name", a->name}, {"profile", a->profile},
			{"role_arn", a->role_arn}, {"status", a->status}, {"error", a->error},
		};
		jsonw_object(w);
		jsonw_members_str(w, account, JSONW_COUNT(account));
		jsonw_key_array(w, "regions");
		for (size_t k = 0; k < a->n_regions; k++) {
			const struct fleet_account_region *r = &a->regions[k];
			const struct jsonw_str_member region[] = {
				{"region", r->region}, {"status", r->status}, {"error", r->error}};
			jsonw_object(w);
			jsonw_members_str(w, region, JSONW_COUNT(region));
			jsonw_key_int(w, "volumes", (long long)r->volumes);
			jsonw_end(w);
		}
		jsonw_end_n(w, 2);
	}
	jsonw_layout(w, "\n");
	jsonw_end(w);
}

void inventory_accounts_summary(struct buf *out, const struct fleet *f)
{
	if (!f->n_accounts)
		return;
	size_t covered, partial, in_scope;
	fleet_account_coverage(f, &covered, &partial, &in_scope);
	buf_addf(out, "%zu of %zu accounts read", covered, in_scope);
	if (partial)
		buf_addf(out, " (%zu more in part)", partial);
}

void inventory_json_kube_binding(struct jsonw *w, const struct kube_binding *k, enum kube_json_form form)
{
	if (!k) {
		jsonw_null(w);
		return;
	}
	int inventory = form == KUBE_JSON_INVENTORY;
	const struct jsonw_str_member where[] = {
		{"cluster", k->cluster}, {"pv", k->pv}, {"namespace", k->namespace_}, {"pvc", k->pvc},
		{"storage_class", k->storage_class}, {"driver", k->driver},
	};
	const struct jsonw_str_member workload[] = {
		{"statefulset", k->statefulset}, {"node", k->node}, {"node_instance_type", k->node_instance_type}};
	jsonw_object(w);
	jsonw_members_str(w, where, JSONW_COUNT(where));
	if (inventory)
		jsonw_key_str(w, "volume_attributes_class", k->current_vac);
	jsonw_members_str(w, workload, JSONW_COUNT(workload));
	if (inventory) {
		jsonw_key(w, "labels");
		jsonw_kv_object(w, k->labels, k->n_labels);
		jsonw_key(w, "usage");
		if (k->has_usage)
			jsonw_object(w);
		else
			jsonw_null(w);
	}
	if (k->has_usage || !inventory) {
		jsonw_key(w, "used_bytes");
		jsonw_int_or_null(w, (long long)k->used_bytes, k->has_usage);
		jsonw_key(w, "capacity_bytes");
		jsonw_int_or_null(w, (long long)k->capacity_bytes, k->has_usage);
		if (inventory)
			jsonw_end(w);
	}
	jsonw_end(w);
}

/* A time that is always written as one, the epoch included (jsonw_time writes 0 as null). */
static void json_time_always(struct jsonw *w, time_t t)
{
	char ts[21];
	em_format_time(t, ts);
	jsonw_str(w, ts);
}

/* One element of "volumes" (jsonw_key_records). */
static void write_volume(struct jsonw *w, const void *element)
{
	const struct volume *v = element;
	jsonw_object(w);
	inventory_json_volume_head(w, v);
	jsonw_key(w, "found_in_ec2");
	jsonw_bool(w, !v->missing);
	jsonw_key(w, "attachments");
	jsonw_array(w);
	for (size_t i = 0; i < v->n_attachments; i++) {
		jsonw_object(w);
		jsonw_key_str(w, "instance_id", v->attachments[i].instance_id);
		jsonw_key_str(w, "instance_type", v->attachments[i].instance_type);
		jsonw_key_str(w, "device", v->attachments[i].device);
		jsonw_end(w);
	}
	jsonw_end(w);
	jsonw_key(w, "tags");
	jsonw_kv_object(w, v->tags, v->n_tags);
	jsonw_key(w, "kubernetes");
	inventory_json_kube_binding(w, v->kube, KUBE_JSON_INVENTORY);
	jsonw_key(w, "metrics");
	if (v->metrics.has) {
		const struct volume_metrics *m = &v->metrics;
		const struct {
			const char *key;
			double v;
		} figures[] = {
			{"p99_iops", m->p99_iops},
			{"max_iops", m->max_iops},
			{"p99_mibps", m->p99_mibps},
			{"max_mibps", m->max_mibps},
			{"min_burst_balance", m->min_burst_balance < 0 ? NAN : m->min_burst_balance},
			{"share_at_iops_ceiling", m->share_at_iops_ceiling},
			{"share_at_throughput_ceiling", m->share_at_tput_ceiling},
		};
		jsonw_object(w);
		for (size_t i = 0; i < JSONW_COUNT(figures); i++) {
			jsonw_key(w, figures[i].key);
			jsonw_number_2dp(w, figures[i].v);
		}
		jsonw_key_int(w, "lookback_s", (long long)m->lookback_s);
		jsonw_end(w);
	} else {
		jsonw_null(w);
	}
	jsonw_key(w, "latest_modification");
	const struct volume_mod *lm = volume_latest_mod(v);
	if (lm) {
		jsonw_object(w);
		jsonw_key_str(w, "state", volume_mod_state_name(lm));
		jsonw_key(w, "start_time");
		json_time_always(w, lm->start_time);
		jsonw_key(w, "end_time");
		jsonw_time(w, lm->end_time);
		jsonw_key_int(w, "progress", (long long)lm->progress);
		jsonw_end(w);
	} else {
		jsonw_null(w);
	}
	jsonw_end(w);
}

/* Where the document goes: all of it into b, or (spill set) b is handed to spill and emptied at
 * volume boundaries once it holds a megabyte (jsonw_key_records), and at the end. */
static void write_json(struct buf *b, const struct buf_spill *spill, const struct fleet *f,
		       const struct inventory_meta *m)
{
	struct jsonw w;
	jsonw_document(&w, b, JSONW_COMPACT, "ebsmigrate.inventory/v1");
	jsonw_key(&w, "generated_at");
	json_time_always(&w, m->generated_at);
	jsonw_key_str(&w, "account", m->account);
	jsonw_key(&w, "regions");
	jsonw_str_array(&w, m->regions, m->n_regions);
	inventory_json_accounts(&w, f);
	jsonw_key(&w, "clusters");
	jsonw_array(&w);
	for (size_t i = 0; i < f->n_clusters; i++) {
		jsonw_object(&w);
		jsonw_key_str(&w, "name", f->clusters[i]);
		jsonw_key_str(&w, "version", f->cluster_versions[i]);
		jsonw_end(&w);
	}
	jsonw_end(&w);
	jsonw_key_strv(&w, "notices", f->notices, f->n_notices);
	jsonw_key_records(&w, "volumes", f->vols, f->n, sizeof *f->vols, write_volume, spill);
	size_t kube = 0, missing = 0, gp2 = 0;
	for (size_t i = 0; i < f->n; i++) {
		kube += f->vols[i].kube != NULL;
		missing += f->vols[i].missing;
		gp2 += f->vols[i].type == EBS_GP2;
	}
	jsonw_key(&w, "totals");
	jsonw_object(&w);
	jsonw_key_int(&w, "volumes", (long long)f->n);
	jsonw_key_int(&w, "gp2_volumes", (long long)gp2);
	jsonw_key_int(&w, "kubernetes_volumes", (long long)kube);
	jsonw_key_int(&w, "not_found_in_ec2", (long long)missing);
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
	buf_spill(b, spill, 0);
}

void inventory_write_json(struct buf *out, const struct fleet *f, const struct inventory_meta *m)
{
	write_json(out, NULL, f, m);
}

void inventory_write_json_spilled(const struct fleet *f, const struct inventory_meta *m, const struct buf_spill *spill)
{
	struct buf b = BUF_INIT;
	write_json(&b, spill, f, m);
	buf_release(&b);
}

/* Fixed widths without a terminal (a long cell shifts only its row, as the table always did);
 * on a terminal the priorities decide what goes first (table.h). */
static const struct table_column inventory_columns[] = {
	{"VOLUME", TABLE_FIXED, 0, 22},
	{"ZONE", TABLE_FIXED, 5, 16},
	{"TYPE", TABLE_FIXED, 0, 5},
	{"GiB", TABLE_RIGHT | TABLE_FIXED, 0, 6},
	{"IOPS", TABLE_RIGHT | TABLE_FIXED, 3, 6},
	{"MiB/s", TABLE_RIGHT | TABLE_FIXED, 4, 5},
	{"STATE", TABLE_FIXED, 6, 9},
	{"KUBERNETES", TABLE_FIXED, 1, 40},
	{"WORKLOAD", TABLE_FIXED, 7, 14},
	{"NODE TYPE", TABLE_FIXED, 8, 12},
	{"P99 IOPS", TABLE_RIGHT | TABLE_FIXED, 2, 8},
	{"P99 MiB", TABLE_RIGHT | TABLE_FIXED, 9, 7},
	{"BURST%", TABLE_RIGHT | TABLE_FIXED, 10, 6},
	{"USED%", TABLE_RIGHT | TABLE_FIXED, 11, 5},
};

void inventory_write_table(struct buf *out, const struct fleet *f, const struct inventory_meta *m,
			   const struct table_options *to)
{
	struct table t;
	table_init(&t, inventory_columns, sizeof inventory_columns / sizeof inventory_columns[0]);
	for (size_t i = 0; i < f->n; i++) {
		const struct volume *v = &f->vols[i];
		const struct kube_binding *k = v->kube;
		struct buf where = BUF_INIT;
		if (k && k->pvc)
			buf_addf(&where, "%s/%s/%s", k->cluster, k->namespace_, k->pvc);
		else if (k)
			buf_addf(&where, "%s/pv:%s", k->cluster, k->pv);
		table_add(&t, v->volume_id);
		table_add(&t, v->availability_zone);
		table_add(&t, v->type ? ebs_type_name(v->type) : NULL);
		table_addf(&t, "%lld", (long long)v->size_gib);
		if (v->iops)
			table_addf(&t, "%lld", (long long)v->iops);
		else
			table_add(&t, NULL);
		if (v->throughput)
			table_addf(&t, "%lld", (long long)v->throughput);
		else
			table_add(&t, NULL);
		table_add(&t, v->missing ? "not-found" : v->state);
		table_add(&t, where.len ? where.s : NULL);
		table_add(&t, k ? k->statefulset : NULL);
		const char *itype = k && k->node_instance_type ? k->node_instance_type
				    : v->n_attachments            ? v->attachments[0].instance_type
								  : NULL;
		table_add(&t, itype);
		if (v->metrics.has) {
			table_addf(&t, "%.0f", v->metrics.p99_iops);
			table_addf(&t, "%.1f", v->metrics.p99_mibps);
			if (v->metrics.min_burst_balance >= 0)
				table_addf(&t, "%.0f", v->metrics.min_burst_balance);
			else
				table_add(&t, NULL);
		} else {
			table_add(&t, NULL);
			table_add(&t, NULL);
			table_add(&t, NULL);
		}
		if (k && k->has_usage && k->capacity_bytes > 0)
			table_addf(&t, "%.0f", 100.0 * (double)k->used_bytes / (double)k->capacity_bytes);
		else
			table_add(&t, NULL);
		buf_release(&where);
	}
	table_write(out, &t, to);
	table_release(&t);
	size_t kube = 0;
	for (size_t i = 0; i < f->n; i++)
		kube += f->vols[i].kube != NULL;
	buf_addf(out, "\n%zu volumes in %zu region(s), %zu bound to Kubernetes in %zu cluster(s)", f->n, m->n_regions, kube,
		 f->n_clusters);
	if (m->account) {
		buf_adds(out, f->n_accounts ? "; current account " : "; account ");
		buf_add_visible(out, m->account);
	}
	if (f->n_accounts) {
		buf_adds(out, "; ");
		inventory_accounts_summary(out, f);
	}
	buf_addc(out, '\n');
}
