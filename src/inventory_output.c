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
#include "ebsmigrate/table.h"

static void jnum(struct buf *b, double v)
{
	if (isnan(v) || isinf(v))
		buf_adds(b, "null");
	else
		buf_addf(b, "%.10g", round(v * 100) / 100);
}

static void write_volume(struct buf *b, const struct volume *v)
{
	buf_adds(b, "{\"volume_id\":");
	buf_add_json_str(b, v->volume_id);
	buf_adds(b, ",\"account\":");
	buf_add_json_str(b, v->account);
	buf_adds(b, ",\"region\":");
	buf_add_json_str(b, v->region);
	buf_adds(b, ",\"availability_zone\":");
	buf_add_json_str(b, v->availability_zone);
	buf_addf(b, ",\"size_gib\":%lld,\"type\":", (long long)v->size_gib);
	buf_add_json_str(b, v->type ? ebs_type_name(v->type) : NULL);
	buf_adds(b, v->iops ? "" : ",\"iops\":null");
	if (v->iops)
		buf_addf(b, ",\"iops\":%lld", (long long)v->iops);
	buf_adds(b, v->throughput ? "" : ",\"throughput_mibps\":null");
	if (v->throughput)
		buf_addf(b, ",\"throughput_mibps\":%lld", (long long)v->throughput);
	buf_adds(b, ",\"state\":");
	buf_add_json_str(b, v->state);
	buf_addf(b, ",\"found_in_ec2\":%s,\"attachments\":[", v->missing ? "false" : "true");
	for (size_t i = 0; i < v->n_attachments; i++) {
		buf_adds(b, i ? ",{\"instance_id\":" : "{\"instance_id\":");
		buf_add_json_str(b, v->attachments[i].instance_id);
		buf_adds(b, ",\"instance_type\":");
		buf_add_json_str(b, v->attachments[i].instance_type);
		buf_adds(b, ",\"device\":");
		buf_add_json_str(b, v->attachments[i].device);
		buf_addc(b, '}');
	}
	buf_adds(b, "],\"tags\":{");
	for (size_t i = 0; i < v->n_tags; i++) {
		if (i)
			buf_addc(b, ',');
		buf_add_json_str(b, v->tags[i].key);
		buf_addc(b, ':');
		buf_add_json_str(b, v->tags[i].value);
	}
	buf_adds(b, "},\"kubernetes\":");
	const struct kube_binding *k = v->kube;
	if (k) {
		buf_adds(b, "{\"cluster\":");
		buf_add_json_str(b, k->cluster);
		buf_adds(b, ",\"pv\":");
		buf_add_json_str(b, k->pv);
		buf_adds(b, ",\"namespace\":");
		buf_add_json_str(b, k->namespace_);
		buf_adds(b, ",\"pvc\":");
		buf_add_json_str(b, k->pvc);
		buf_adds(b, ",\"storage_class\":");
		buf_add_json_str(b, k->storage_class);
		buf_adds(b, ",\"driver\":");
		buf_add_json_str(b, k->driver);
		buf_adds(b, ",\"volume_attributes_class\":");
		buf_add_json_str(b, k->current_vac);
		buf_adds(b, ",\"statefulset\":");
		buf_add_json_str(b, k->statefulset);
		buf_adds(b, ",\"node\":");
		buf_add_json_str(b, k->node);
		buf_adds(b, ",\"node_instance_type\":");
		buf_add_json_str(b, k->node_instance_type);
		buf_adds(b, ",\"labels\":{");
		for (size_t i = 0; i < k->n_labels; i++) {
			if (i)
				buf_addc(b, ',');
			buf_add_json_str(b, k->labels[i].key);
			buf_addc(b, ':');
			buf_add_json_str(b, k->labels[i].value);
		}
		buf_addc(b, '}');
		if (k->has_usage)
			buf_addf(b, ",\"usage\":{\"used_bytes\":%lld,\"capacity_bytes\":%lld}", (long long)k->used_bytes,
				 (long long)k->capacity_bytes);
		else
			buf_adds(b, ",\"usage\":null");
		buf_addc(b, '}');
	} else {
		buf_adds(b, "null");
	}
	buf_adds(b, ",\"metrics\":");
	if (v->metrics.has) {
		const struct volume_metrics *m = &v->metrics;
		buf_adds(b, "{\"p99_iops\":");
		jnum(b, m->p99_iops);
		buf_adds(b, ",\"max_iops\":");
		jnum(b, m->max_iops);
		buf_adds(b, ",\"p99_mibps\":");
		jnum(b, m->p99_mibps);
		buf_adds(b, ",\"max_mibps\":");
		jnum(b, m->max_mibps);
		buf_adds(b, ",\"min_burst_balance\":");
		jnum(b, m->min_burst_balance < 0 ? NAN : m->min_burst_balance);
		buf_adds(b, ",\"share_at_iops_ceiling\":");
		jnum(b, m->share_at_iops_ceiling);
		buf_adds(b, ",\"share_at_throughput_ceiling\":");
		jnum(b, m->share_at_tput_ceiling);
		buf_addf(b, ",\"lookback_s\":%lld}", (long long)m->lookback_s);
	} else {
		buf_adds(b, "null");
	}
	buf_adds(b, ",\"latest_modification\":");
	const struct volume_mod *lm = volume_latest_mod(v);
	if (lm) {
		char ts[21];
		buf_adds(b, "{\"state\":");
		buf_add_json_str(b, lm->state);
		em_format_time(lm->start_time, ts);
		buf_addf(b, ",\"start_time\":\"%s\",\"end_time\":", ts);
		if (lm->end_time) {
			em_format_time(lm->end_time, ts);
			buf_addf(b, "\"%s\"", ts);
		} else {
			buf_adds(b, "null");
		}
		buf_addf(b, ",\"progress\":%lld}", (long long)lm->progress);
	} else {
		buf_adds(b, "null");
	}
	buf_addc(b, '}');
}

/* Where the document goes: all of it into out, or (fp set) out is written to fp and emptied
 * every SPILL_AT bytes, so a 100,000-volume document never sits in memory whole. */
struct json_sink {
	struct buf *out;
	FILE *fp;
	int failed;
};

#define SPILL_AT (256u << 10)

static void sink_spill(struct json_sink *s, size_t at_least)
{
	if (!s->fp || s->out->len < at_least)
		return;
	if (!s->failed && fwrite(s->out->s, 1, s->out->len, s->fp) != s->out->len)
		s->failed = 1;
	buf_reset(s->out);
}

static void write_json(struct json_sink *sink, const struct fleet *f, const struct inventory_meta *m)
{
	struct buf *out = sink->out;
	char ts[21];
	em_format_time(m->generated_at, ts);
	buf_addf(out, "{\"schema\":\"ebsmigrate.inventory/v1\",\"generated_at\":\"%s\",\"account\":", ts);
	buf_add_json_str(out, m->account);
	buf_adds(out, ",\"regions\":[");
	for (size_t i = 0; i < m->n_regions; i++) {
		if (i)
			buf_addc(out, ',');
		buf_add_json_str(out, m->regions[i]);
	}
	buf_adds(out, "],\"clusters\":[");
	for (size_t i = 0; i < f->n_clusters; i++) {
		buf_adds(out, i ? ",{\"name\":" : "{\"name\":");
		buf_add_json_str(out, f->clusters[i]);
		buf_adds(out, ",\"version\":");
		buf_add_json_str(out, f->cluster_versions[i]);
		buf_addc(out, '}');
	}
	buf_adds(out, "],\"notices\":[");
	for (size_t i = 0; i < f->n_notices; i++) {
		if (i)
			buf_addc(out, ',');
		buf_add_json_str(out, f->notices[i]);
	}
	buf_adds(out, "],\"volumes\":[");
	for (size_t i = 0; i < f->n; i++) {
		buf_adds(out, i ? ",\n" : "\n");
		write_volume(out, &f->vols[i]);
		sink_spill(sink, SPILL_AT);
	}
	buf_addf(out, "\n],\"totals\":{\"volumes\":%zu", f->n);
	size_t kube = 0, missing = 0, gp2 = 0;
	for (size_t i = 0; i < f->n; i++) {
		kube += f->vols[i].kube != NULL;
		missing += f->vols[i].missing;
		gp2 += f->vols[i].type == EBS_GP2;
	}
	buf_addf(out, ",\"gp2_volumes\":%zu,\"kubernetes_volumes\":%zu,\"not_found_in_ec2\":%zu}}\n", gp2, kube, missing);
	sink_spill(sink, 0);
}

void inventory_write_json(struct buf *out, const struct fleet *f, const struct inventory_meta *m)
{
	struct json_sink sink = {out, NULL, 0};
	write_json(&sink, f, m);
}

int inventory_write_json_file(FILE *fp, const struct fleet *f, const struct inventory_meta *m)
{
	struct buf out = BUF_INIT;
	struct json_sink sink = {&out, fp, 0};
	write_json(&sink, f, m);
	buf_release(&out);
	return sink.failed || fflush(fp) != 0 ? EM_EIO : 0;
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
		buf_adds(out, "; account ");
		buf_add_visible(out, m->account);
	}
	buf_addc(out, '\n');
}
