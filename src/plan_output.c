/*
 * plan_output.c - plan writers: table, json, csv, markdown.
 *
 * Entry points: plan_write, plan_write_table, out_format_parse.
 * Invariants: every format lists every volume of the plan in the plan's order; money is
 * printed from exact micro-dollar values rounded to cents; JSON is produced by streaming into
 * a buf (no DOM), so 100,000 volumes cost one pass and one buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/plan_output.h"
#include "ebsmigrate/table.h"

int out_format_parse(const char *s, enum out_format *out)
{
	static const char *const names[] = {"table", "json", "csv", "markdown"};
	for (int i = 0; i < 4; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum out_format)i;
			return 0;
		}
	}
	if (strcmp(s, "md") == 0) {
		*out = FORMAT_MARKDOWN;
		return 0;
	}
	return EM_EINPUT;
}

/* The JSON writer's pieces (write_json and the functions it calls) add literals without strlen
 * and plain strings with one copy: at 100,000 volumes they run a few million times. */
#define ADD_LIT(b, lit) buf_add((b), "" lit, sizeof(lit) - 1) /* "" lit: literals only */

/* buf_add_json_str: a string that needs no escape goes in with one copy (anything else, and a
 * buffer that cannot grow, takes buf_add_json_str itself). */
static void json_str(struct buf *b, const char *s)
{
	if (!s) {
		ADD_LIT(b, "null");
		return;
	}
	size_t n = 0;
	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];
		if (c < 0x20 || c == '"' || c == '\\') {
			buf_add_json_str(b, s);
			return;
		}
	}
	if (buf_grow(b, n + 2)) {
		buf_add_json_str(b, s);
		return;
	}
	char *p = b->s + b->len;
	p[0] = '"';
	memcpy(p + 1, s, n);
	p[n + 1] = '"';
	b->len += n + 2;
	b->s[b->len] = '\0';
}

/* A decimal integer without printf: the JSON writer adds several per volume. */
static void add_int(struct buf *b, long long v)
{
	char tmp[24], *p = tmp + sizeof tmp;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	buf_add(b, p, (size_t)(tmp + sizeof tmp - p));
}

/* ",\"KEY\":N" (key_part a string literal) */
#define add_int_field(b, key_part, v) (ADD_LIT((b), key_part), add_int((b), (v)))

static void json_time(struct buf *b, time_t t)
{
	if (!t) {
		ADD_LIT(b, "null");
		return;
	}
	char ts[21];
	em_format_time(t, ts);
	buf_addc(b, '"');
	buf_adds(b, ts);
	buf_addc(b, '"');
}

static void json_money(struct buf *b, int known, micro_t m)
{
	if (known)
		money_add_json(b, m);
	else
		ADD_LIT(b, "null");
}

static void flags_join(struct buf *b, unsigned flags, const char *sep)
{
	int first = 1;
	for (unsigned i = 0; i < FLAG_COUNT; i++) {
		if (!(flags & (1u << i)))
			continue;
		if (!first)
			buf_adds(b, sep);
		buf_adds(b, plan_flag_name(i));
		first = 0;
	}
}

static void write_json_item(struct buf *b, const struct plan_item *it)
{
	const struct volume *v = it->v;
	ADD_LIT(b, "{\"volume_id\":");
	json_str(b, v->volume_id);
	ADD_LIT(b, ",\"account\":");
	json_str(b, v->account);
	ADD_LIT(b, ",\"region\":");
	json_str(b, v->region);
	ADD_LIT(b, ",\"availability_zone\":");
	json_str(b, v->availability_zone);
	add_int_field(b, ",\"size_gib\":", (long long)v->size_gib);
	ADD_LIT(b, ",\"type\":");
	json_str(b, v->type == EBS_UNKNOWN ? NULL : ebs_type_name(v->type));
	if (v->iops)
		add_int_field(b, ",\"iops\":", (long long)v->iops);
	else
		ADD_LIT(b, ",\"iops\":null");
	if (v->throughput)
		add_int_field(b, ",\"throughput_mibps\":", (long long)v->throughput);
	else
		ADD_LIT(b, ",\"throughput_mibps\":null");
	ADD_LIT(b, ",\"state\":");
	json_str(b, v->state);
	ADD_LIT(b, ",\"kubernetes\":");
	if (v->kube) {
		const struct kube_binding *k = v->kube;
		ADD_LIT(b, "{\"cluster\":");
		json_str(b, k->cluster);
		ADD_LIT(b, ",\"pv\":");
		json_str(b, k->pv);
		ADD_LIT(b, ",\"namespace\":");
		json_str(b, k->namespace_);
		ADD_LIT(b, ",\"pvc\":");
		json_str(b, k->pvc);
		ADD_LIT(b, ",\"storage_class\":");
		json_str(b, k->storage_class);
		ADD_LIT(b, ",\"driver\":");
		json_str(b, k->driver);
		ADD_LIT(b, ",\"statefulset\":");
		json_str(b, k->statefulset);
		ADD_LIT(b, ",\"node\":");
		json_str(b, k->node);
		ADD_LIT(b, ",\"node_instance_type\":");
		json_str(b, k->node_instance_type);
		if (k->has_usage)
			buf_addf(b, ",\"used_bytes\":%lld,\"capacity_bytes\":%lld", (long long)k->used_bytes,
				 (long long)k->capacity_bytes);
		else
			ADD_LIT(b, ",\"used_bytes\":null,\"capacity_bytes\":null");
		buf_addc(b, '}');
	} else {
		ADD_LIT(b, "null");
	}
	ADD_LIT(b, ",\"current_monthly_usd\":");
	json_money(b, it->current_priced, it->current_monthly);
	ADD_LIT(b, ",\"target\":");
	if (it->has_target)
	{
		ADD_LIT(b, "{\"type\":\"");
		buf_adds(b, ebs_type_name(it->target.type));
		add_int_field(b, "\",\"iops\":", (long long)it->target.iops);
		add_int_field(b, ",\"throughput_mibps\":", (long long)it->target.throughput);
		buf_addc(b, '}');
	}
	else
		ADD_LIT(b, "null");
	ADD_LIT(b, ",\"target_monthly_usd\":");
	json_money(b, it->target_priced, it->target_monthly);
	ADD_LIT(b, ",\"savings_monthly_usd\":");
	json_money(b, it->current_priced && it->target_priced, it->savings_monthly);
	if (it->burst_duration_s)
		add_int_field(b, ",\"burst_duration_s\":", (long long)it->burst_duration_s);
	else
		ADD_LIT(b, ",\"burst_duration_s\":null");
	if (it->burst_empty_s)
		add_int_field(b, ",\"burst_time_to_empty_s\":", (long long)it->burst_empty_s);
	ADD_LIT(b, ",\"eligible_at\":");
	json_time(b, it->eligible_at);
	if (it->eligible_margin_s)
		add_int_field(b, ",\"eligible_at_margin_s\":", (long long)it->eligible_margin_s);
	ADD_LIT(b, ",\"action\":\"");
	buf_adds(b, plan_action_name(it->action));
	ADD_LIT(b, "\",\"flags\":[");
	if (it->flags) {
		buf_addc(b, '"');
		flags_join(b, it->flags, "\",\"");
		buf_addc(b, '"');
	}
	buf_addc(b, ']');
	if (it->has_rightsize) {
		buf_addf(b, ",\"rightsize_size_gib\":%lld,\"rightsize_monthly_usd\":", (long long)it->rightsize_size_gib);
		money_add_json(b, it->rightsize_monthly);
	}
	ADD_LIT(b, ",\"note\":");
	json_str(b, it->note);
	buf_addc(b, '}');
}

static void write_totals_json(struct buf *b, const struct plan_totals *t)
{
	buf_addf(b,
		 "{\"volumes\":%lld,\"gp2_volumes\":%lld,\"migrate\":%lld,\"blocked\":%lld,\"review\":%lld,"
		 "\"skip\":%lld,\"unpriced\":%lld,\"current_monthly_usd\":",
		 (long long)t->volumes, (long long)t->gp2_volumes, (long long)t->migrate, (long long)t->blocked,
		 (long long)t->review, (long long)t->skip, (long long)t->unpriced);
	money_add_json(b, t->current_monthly);
	ADD_LIT(b, ",\"target_monthly_usd\":");
	money_add_json(b, t->target_monthly);
	ADD_LIT(b, ",\"savings_monthly_usd\":");
	money_add_json(b, t->savings_monthly);
	ADD_LIT(b, ",\"savings_annual_usd\":");
	money_add_json(b, t->savings_annual);
	ADD_LIT(b, ",\"rightsize_monthly_usd\":");
	money_add_json(b, t->rightsize_monthly);
	buf_addc(b, '}');
}

/* flush, when given, takes b's contents every megabyte or so (and at the end), so a large plan
 * never sits in memory whole. */
static void write_json(struct buf *b, const struct plan *p, void (*flush)(void *ctx, const char *s, size_t n),
		       void *ctx)
{
	ADD_LIT(b, "{\"schema\":\"ebsmigrate.plan/v1\",\"generated_at\":");
	json_time(b, p->generated_at);
	buf_addf(b, ",\"mode\":\"%s\",\"pricing\":{\"source\":", plan_mode_name(p->mode));
	json_str(b, p->book->source);
	ADD_LIT(b, ",\"effective_date\":");
	json_str(b, p->book->effective_date);
	if (p->book->version)
		buf_addf(b, ",\"version\":%lld", (long long)p->book->version);
	ADD_LIT(b, "},\"warnings\":[");
	for (size_t i = 0; i < p->n_warnings; i++) {
		if (i)
			buf_addc(b, ',');
		json_str(b, p->warnings[i]);
	}
	ADD_LIT(b, "],\"volumes\":[");
	for (size_t i = 0; i < p->n; i++) {
		buf_adds(b, i ? ",\n" : "\n");
		write_json_item(b, &p->items[i]);
		if (flush && b->len >= (1u << 20)) {
			flush(ctx, b->s, b->len);
			buf_reset(b);
		}
	}
	ADD_LIT(b, "\n],\"totals\":");
	write_totals_json(b, &p->totals);
	ADD_LIT(b, "}\n");
	if (flush) {
		flush(ctx, b->s, b->len);
		buf_reset(b);
	}
}

void plan_write_json_chunked(const struct plan *p, void (*flush)(void *ctx, const char *s, size_t n), void *ctx)
{
	struct buf b = BUF_INIT;
	write_json(&b, p, flush, ctx);
	buf_release(&b);
}

static const char *const csv_header =
	"volume_id,account,region,availability_zone,size_gib,type,iops,throughput_mibps,state,cluster,pv,"
	"namespace,pvc,storage_class,driver,current_monthly_usd,target_type,target_iops,"
	"target_throughput_mibps,target_monthly_usd,savings_monthly_usd,burst_duration_s,eligible_at,"
	"action,flags,rightsize_size_gib,rightsize_monthly_usd\r\n";

static void csv_money(struct buf *b, int known, micro_t m)
{
	if (known)
		money_add_usd(b, m);
	buf_addc(b, ',');
}

static void csv_int(struct buf *b, int64_t v)
{
	if (v)
		buf_addf(b, "%lld", (long long)v);
	buf_addc(b, ',');
}

static void csv_str(struct buf *b, const char *s)
{
	buf_add_csv_field(b, s);
	buf_addc(b, ',');
}

static void write_csv(struct buf *b, const struct plan *p)
{
	buf_adds(b, csv_header);
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_item *it = &p->items[i];
		const struct volume *v = it->v;
		const struct kube_binding *k = v->kube;
		csv_str(b, v->volume_id);
		csv_str(b, v->account);
		csv_str(b, v->region);
		csv_str(b, v->availability_zone);
		buf_addf(b, "%lld,", (long long)v->size_gib);
		csv_str(b, v->type == EBS_UNKNOWN ? "" : ebs_type_name(v->type));
		csv_int(b, v->iops);
		csv_int(b, v->throughput);
		csv_str(b, v->state);
		csv_str(b, k ? k->cluster : NULL);
		csv_str(b, k ? k->pv : NULL);
		csv_str(b, k ? k->namespace_ : NULL);
		csv_str(b, k ? k->pvc : NULL);
		csv_str(b, k ? k->storage_class : NULL);
		csv_str(b, k ? k->driver : NULL);
		csv_money(b, it->current_priced, it->current_monthly);
		csv_str(b, it->has_target ? ebs_type_name(it->target.type) : NULL);
		csv_int(b, it->has_target ? it->target.iops : 0);
		csv_int(b, it->has_target ? it->target.throughput : 0);
		csv_money(b, it->target_priced, it->target_monthly);
		csv_money(b, it->current_priced && it->target_priced, it->savings_monthly);
		csv_int(b, it->burst_duration_s);
		if (it->eligible_at) {
			char ts[21];
			em_format_time(it->eligible_at, ts);
			buf_adds(b, ts);
		}
		buf_addc(b, ',');
		csv_str(b, plan_action_name(it->action));
		struct buf fl = BUF_INIT;
		flags_join(&fl, it->flags, ";");
		csv_str(b, fl.s);
		buf_release(&fl);
		csv_int(b, it->has_rightsize ? it->rightsize_size_gib : 0);
		if (it->has_rightsize)
			money_add_usd(b, it->rightsize_monthly);
		buf_adds(b, "\r\n");
	}
}

/* ---- table and markdown ---- */

struct cell_row {
	char *c[12];
};

enum { COL_VOLUME, COL_WHERE, COL_GIB, COL_NOW, COL_NOWUSD, COL_TARGET, COL_TGTUSD, COL_SAVE, COL_ACTION,
       COL_ELIGIBLE, COL_FLAGS, NCOLS };

/* Priority: 0 always shown; on a narrow terminal the highest numbers go first (table.h). */
static const struct table_column plan_columns[NCOLS] = {
	{"VOLUME", 0, 0, 21},          /* ids are never elided */
	{"KUBERNETES", 0, 2, 16},
	{"GiB", TABLE_RIGHT, 4, 0},
	{"NOW", 0, 6, 0},
	{"NOW $/MO", TABLE_RIGHT, 8, 0},
	{"TARGET", 0, 1, 12},
	{"TARGET $/MO", TABLE_RIGHT, 7, 0},
	{"SAVES $/MO", TABLE_RIGHT, 0, 0},
	{"ACTION", 0, 0, 7},
	{"ELIGIBLE", 0, 5, 20},        /* a time is dropped, not cut */
	{"FLAGS", 0, 3, 12},
};

static char *fmt_cfg(enum ebs_type t, int64_t iops, int64_t tput)
{
	struct buf b = BUF_INIT;
	buf_adds(&b, t == EBS_UNKNOWN ? "?" : ebs_type_name(t));
	if (iops)
		buf_addf(&b, " %lld", (long long)iops);
	if (tput)
		buf_addf(&b, "/%lld", (long long)tput);
	return buf_detach(&b);
}

static char *fmt_money(int known, micro_t m)
{
	struct buf b = BUF_INIT;
	if (known)
		money_add_usd_pretty(&b, m);
	else
		buf_adds(&b, "-");
	return buf_detach(&b);
}

static void fill_row(struct cell_row *r, const struct plan_item *it, time_t generated_at)
{
	const struct volume *v = it->v;
	struct buf b = BUF_INIT;
	r->c[COL_VOLUME] = xstrdup(v->volume_id);
	if (v->kube && v->kube->pvc)
		buf_addf(&b, "%s/%s/%s", v->kube->cluster, v->kube->namespace_, v->kube->pvc);
	else if (v->kube)
		buf_addf(&b, "%s/pv:%s", v->kube->cluster, v->kube->pv);
	else
		buf_adds(&b, "-");
	r->c[COL_WHERE] = buf_detach(&b);
	buf_addf(&b, "%lld", (long long)v->size_gib);
	r->c[COL_GIB] = buf_detach(&b);
	r->c[COL_NOW] = fmt_cfg(v->type, v->type == EBS_GP2 ? 0 : v->iops, v->throughput);
	r->c[COL_NOWUSD] = fmt_money(it->current_priced, it->current_monthly);
	r->c[COL_TARGET] = it->has_target ? fmt_cfg(it->target.type, it->target.iops, it->target.throughput)
					  : xstrdup("-");
	r->c[COL_TGTUSD] = fmt_money(it->target_priced && it->has_target, it->target_monthly);
	r->c[COL_SAVE] = fmt_money(it->current_priced && it->target_priced && it->has_target, it->savings_monthly);
	r->c[COL_ACTION] = xstrdup(plan_action_name(it->action));
	if (!it->eligible_at) {
		buf_adds(&b, it->flags & FLAG_MODIFICATION_IN_FLIGHT ? "after current" : "-");
	} else if (it->eligible_at <= generated_at) {
		buf_adds(&b, "now");
	} else {
		char ts[21];
		em_format_time(it->eligible_at, ts);
		buf_adds(&b, ts);
	}
	r->c[COL_ELIGIBLE] = buf_detach(&b);
	flags_join(&b, it->flags, ",");
	r->c[COL_FLAGS] = b.len ? buf_detach(&b) : xstrdup("-");
	buf_release(&b);
}

static void free_row(struct cell_row *r)
{
	for (int i = 0; i < NCOLS; i++)
		free(r->c[i]);
}

void plan_write_table(struct buf *out, const struct plan *p, int color, const struct table_options *to)
{
	struct table tab;
	table_init(&tab, plan_columns, NCOLS);
	for (size_t i = 0; i < p->n; i++) {
		struct cell_row r;
		fill_row(&r, &p->items[i], p->generated_at);
		for (int c = 0; c < NCOLS; c++) {
			table_add(&tab, r.c[c]);
			if (color && c == COL_ACTION) {
				switch (p->items[i].action) {
				case ACTION_MIGRATE: table_set_cell_sgr(&tab, "32"); break;
				case ACTION_BLOCKED: table_set_cell_sgr(&tab, "33"); break;
				case ACTION_REVIEW: table_set_cell_sgr(&tab, "31"); break;
				default: table_set_cell_sgr(&tab, "2"); break;
				}
			}
		}
		free_row(&r);
	}
	table_write(out, &tab, to);
	table_release(&tab);
	const struct plan_totals *t = &p->totals;
	buf_addf(out, "\n%lld volumes (%lld gp2): %lld to migrate, %lld blocked, %lld to review, %lld skipped",
		 (long long)t->volumes, (long long)t->gp2_volumes, (long long)t->migrate, (long long)t->blocked,
		 (long long)t->review, (long long)t->skip);
	if (t->unpriced)
		buf_addf(out, ", %lld unpriced (excluded from totals)", (long long)t->unpriced);
	buf_adds(out, "\nmonthly now ");
	money_add_usd_pretty(out, t->current_monthly);
	buf_adds(out, ", after ");
	money_add_usd_pretty(out, t->target_monthly);
	buf_adds(out, ", savings ");
	money_add_usd_pretty(out, t->savings_monthly);
	buf_adds(out, "/month (");
	money_add_usd_pretty(out, t->savings_annual);
	buf_adds(out, "/year)");
	if (t->rightsize_monthly) {
		/* on a terminal, a line of its own when the sentence would not fit */
		size_t line_start = out->len;
		while (line_start > 0 && out->s[line_start - 1] != '\n')
			line_start--;
		int own_line = to && to->width && !to->wide && out->len - line_start + 60 > to->width;
		buf_adds(out, own_line ? "\nright-sizing flagged volumes would save " : "; right-sizing flagged volumes would save ");
		money_add_usd_pretty(out, t->rightsize_monthly);
		buf_adds(out, "/month more");
	}
	buf_addf(out, "\nprices: %s, effective %s\n", p->book->source ? p->book->source : "unknown",
		 p->book->effective_date ? p->book->effective_date : "unknown");
}

static void md_cell(struct buf *b, const char *s)
{
	struct buf vis = BUF_INIT;
	buf_add_visible(&vis, s);
	for (size_t i = 0; i < vis.len; i++) {
		if (vis.s[i] == '|')
			buf_addc(b, '\\');
		buf_addc(b, vis.s[i]);
	}
	buf_release(&vis);
}

static void write_markdown(struct buf *b, const struct plan *p)
{
	char ts[21];
	em_format_time(p->generated_at, ts);
	const struct plan_totals *t = &p->totals;
	buf_addf(b, "# ebsmigrate plan\n\nGenerated %s, mode `%s`. Prices: %s, effective %s.\n\n", ts,
		 plan_mode_name(p->mode), p->book->source ? p->book->source : "unknown",
		 p->book->effective_date ? p->book->effective_date : "unknown");
	buf_adds(b, "| | Monthly | Annual |\n|---|---:|---:|\n| Current | ");
	money_add_usd_pretty(b, t->current_monthly);
	buf_adds(b, " | ");
	money_add_usd_pretty(b, t->current_monthly * 12);
	buf_adds(b, " |\n| After migration | ");
	money_add_usd_pretty(b, t->target_monthly);
	buf_adds(b, " | ");
	money_add_usd_pretty(b, t->target_monthly * 12);
	buf_adds(b, " |\n| **Savings** | **");
	money_add_usd_pretty(b, t->savings_monthly);
	buf_adds(b, "** | **");
	money_add_usd_pretty(b, t->savings_annual);
	buf_addf(b, "** |\n\n%lld volumes (%lld gp2): %lld to migrate, %lld blocked, %lld to review, %lld skipped, "
		    "%lld unpriced.\n\n",
		 (long long)t->volumes, (long long)t->gp2_volumes, (long long)t->migrate, (long long)t->blocked,
		 (long long)t->review, (long long)t->skip, (long long)t->unpriced);
	if (p->n_warnings) {
		buf_adds(b, "## Warnings\n\n");
		for (size_t i = 0; i < p->n_warnings; i++) {
			buf_adds(b, "- ");
			buf_add_visible(b, p->warnings[i]);
			buf_addc(b, '\n');
		}
		buf_addc(b, '\n');
	}
	buf_adds(b, "## Volumes\n\n|");
	for (int c = 0; c < NCOLS; c++)
		buf_addf(b, " %s |", plan_columns[c].title);
	buf_adds(b, "\n|");
	for (int c = 0; c < NCOLS; c++)
		buf_adds(b, plan_columns[c].flags & TABLE_RIGHT ? "---:|" : "---|");
	buf_addc(b, '\n');
	for (size_t i = 0; i < p->n; i++) {
		struct cell_row r;
		fill_row(&r, &p->items[i], p->generated_at);
		buf_addc(b, '|');
		for (int c = 0; c < NCOLS; c++) {
			buf_addc(b, ' ');
			md_cell(b, r.c[c]);
			buf_adds(b, " |");
		}
		buf_addc(b, '\n');
		free_row(&r);
	}
}

void plan_write(struct buf *out, const struct plan *p, enum out_format fmt)
{
	switch (fmt) {
	case FORMAT_TABLE:
	case FORMAT_WIDE: plan_write_table(out, p, 0, NULL); break;
	case FORMAT_YAML: /* the JSON document, which the caller converts (yamlout.c) */
	case FORMAT_JSON: write_json(out, p, NULL, NULL); break;
	case FORMAT_CSV: write_csv(out, p); break;
	case FORMAT_MARKDOWN: write_markdown(out, p); break;
	}
}
