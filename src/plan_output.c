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
#include "ebsmigrate/inventory_output.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/plan_output.h"
#include "ebsmigrate/table.h"

int out_format_parse(const char *s, enum out_format *out)
{
	static const char *const names[] = {"table", "json", "csv", "markdown", "md"}; /* md: markdown's alias */
	int i = em_name_index(names, 5, s);
	return i < 0 ? EM_EINPUT : (*out = i == 4 ? FORMAT_MARKDOWN : (enum out_format)i, 0);
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

void plan_json_pricing(struct jsonw *w, const struct pricebook *book, int with_fetched_at)
{
	jsonw_object(w);
	jsonw_key_str(w, "source", book->source);
	jsonw_key_str(w, "effective_date", book->effective_date);
	if (with_fetched_at)
		jsonw_key_str(w, "fetched_at", book->fetched_at);
	if (book->version)
		jsonw_key_int(w, "version", (long long)book->version);
	jsonw_end(w);
}

/* One element of "volumes" (jsonw_key_records). */
static void write_json_item(struct jsonw *w, const void *element)
{
	const struct plan_item *it = element;
	jsonw_object(w);
	inventory_json_volume_head(w, it->v);
	jsonw_key(w, "kubernetes");
	inventory_json_kube_binding(w, it->v->kube, KUBE_JSON_PLAN);
	jsonw_key(w, "current_monthly_usd");
	jsonw_money_or_null(w, it->current_monthly, it->current_priced);
	jsonw_key(w, "target");
	if (it->has_target) {
		jsonw_object(w);
		jsonw_key_str(w, "type", ebs_type_name(it->target.type));
		jsonw_key_int(w, "iops", (long long)it->target.iops);
		jsonw_key_int(w, "throughput_mibps", (long long)it->target.throughput);
		jsonw_end(w);
	} else {
		jsonw_null(w);
	}
	jsonw_key(w, "target_monthly_usd");
	jsonw_money_or_null(w, it->target_monthly, it->target_priced);
	jsonw_key(w, "savings_monthly_usd");
	jsonw_money_or_null(w, it->savings_monthly, it->current_priced && it->target_priced);
	jsonw_key(w, "burst_duration_s");
	jsonw_int_or_null(w, (long long)it->burst_duration_s, it->burst_duration_s != 0);
	if (it->burst_empty_s)
		jsonw_key_int(w, "burst_time_to_empty_s", (long long)it->burst_empty_s);
	jsonw_key(w, "eligible_at");
	jsonw_time(w, it->eligible_at);
	if (it->eligible_margin_s)
		jsonw_key_int(w, "eligible_at_margin_s", (long long)it->eligible_margin_s);
	jsonw_key_str(w, "action", plan_action_name(it->action));
	jsonw_key(w, "flags");
	jsonw_array(w);
	for (unsigned i = 0; i < FLAG_COUNT; i++)
		if (it->flags & (1u << i))
			jsonw_str(w, plan_flag_name(i));
	jsonw_end(w);
	if (it->has_rightsize) {
		jsonw_key_int(w, "rightsize_size_gib", (long long)it->rightsize_size_gib);
		jsonw_key_money(w, "rightsize_monthly_usd", it->rightsize_monthly);
	}
	jsonw_key_str(w, "note", it->note);
	jsonw_end(w);
}

static void write_totals_json(struct jsonw *w, const struct plan_totals *t)
{
	const struct jsonw_int_member counts[] = {
		{"volumes", t->volumes}, {"gp2_volumes", t->gp2_volumes}, {"migrate", t->migrate},
		{"blocked", t->blocked}, {"review", t->review},           {"skip", t->skip},
		{"unpriced", t->unpriced},
	};
	const struct jsonw_int_member usd[] = {
		{"current_monthly_usd", t->current_monthly}, {"target_monthly_usd", t->target_monthly},
		{"savings_monthly_usd", t->savings_monthly}, {"savings_annual_usd", t->savings_annual},
		{"rightsize_monthly_usd", t->rightsize_monthly},
	};
	jsonw_object(w);
	jsonw_members_int(w, counts, JSONW_COUNT(counts));
	jsonw_members_money(w, usd, JSONW_COUNT(usd));
	jsonw_end(w);
}

/* spill, when given, takes b's contents every megabyte or so (and at the end), so a large plan
 * never sits in memory whole. */
static void write_json(struct buf *b, const struct plan *p, const struct buf_spill *spill)
{
	struct jsonw w;
	jsonw_document(&w, b, JSONW_COMPACT, "ebsmigrate.plan/v1");
	jsonw_key(&w, "generated_at");
	jsonw_time(&w, p->generated_at);
	jsonw_key_str(&w, "mode", plan_mode_name(p->mode));
	jsonw_key(&w, "pricing");
	plan_json_pricing(&w, p->book, 0);
	jsonw_key_strv(&w, "warnings", p->warnings, p->n_warnings);
	if (p->fleet)
		inventory_json_accounts(&w, p->fleet);
	jsonw_key_records(&w, "volumes", p->items, p->n, sizeof *p->items, write_json_item, spill);
	jsonw_key(&w, "totals");
	write_totals_json(&w, &p->totals);
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
	buf_spill(b, spill, 0);
}

void plan_write_json_spilled(const struct plan *p, const struct buf_spill *spill)
{
	struct buf b = BUF_INIT;
	write_json(&b, p, spill);
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
	r->c[COL_NOWUSD] = money_cell(it->current_priced, it->current_monthly, money_add_usd_pretty);
	r->c[COL_TARGET] = it->has_target ? fmt_cfg(it->target.type, it->target.iops, it->target.throughput)
					  : xstrdup("-");
	r->c[COL_TGTUSD] = money_cell(it->target_priced && it->has_target, it->target_monthly, money_add_usd_pretty);
	r->c[COL_SAVE] = money_cell(it->current_priced && it->target_priced && it->has_target, it->savings_monthly,
				    money_add_usd_pretty);
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
	MONEY_ADD_SENTENCE(out, "\nmonthly now %m, after %m, savings %m/month (%m/year)", t->current_monthly,
			   t->target_monthly, t->savings_monthly, t->savings_annual);
	if (t->rightsize_monthly) {
		/* on a terminal, a line of its own when the sentence would not fit */
		size_t line_start = out->len;
		while (line_start > 0 && out->s[line_start - 1] != '\n')
			line_start--;
		int own_line = to && to->width && !to->wide && out->len - line_start + 60 > to->width;
		buf_adds(out, own_line ? "\n" : "; ");
		MONEY_ADD_SENTENCE(out, "right-sizing flagged volumes would save %m/month more", t->rightsize_monthly);
	}
	buf_addf(out, "\nprices: %s, effective %s\n", p->book->source ? p->book->source : "unknown",
		 p->book->effective_date ? p->book->effective_date : "unknown");
	if (p->fleet && p->fleet->n_accounts) {
		buf_adds(out, "accounts: ");
		inventory_accounts_summary(out, p->fleet);
		buf_adds(out, " (current account ");
		buf_add_visible(out, p->fleet->current_account ? p->fleet->current_account : "unknown");
		buf_adds(out, ")\n");
	}
}

static void write_markdown(struct buf *b, const struct plan *p)
{
	char ts[21];
	em_format_time(p->generated_at, ts);
	const struct plan_totals *t = &p->totals;
	buf_addf(b, "# ebsmigrate plan\n\nGenerated %s, mode `%s`. Prices: %s, effective %s.\n\n", ts,
		 plan_mode_name(p->mode), p->book->source ? p->book->source : "unknown",
		 p->book->effective_date ? p->book->effective_date : "unknown");
	MONEY_ADD_SENTENCE(b,
			   "| | Monthly | Annual |\n|---|---:|---:|\n"
			   "| Current | %m | %m |\n"
			   "| After migration | %m | %m |\n"
			   "| **Savings** | **%m** | **%m** |\n\n",
			   t->current_monthly, t->current_monthly * 12, t->target_monthly, t->target_monthly * 12,
			   t->savings_monthly, t->savings_annual);
	buf_addf(b, "%lld volumes (%lld gp2): %lld to migrate, %lld blocked, %lld to review, %lld skipped, "
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
			buf_add_markdown_cell(b, r.c[c]);
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
	case FORMAT_JSON: write_json(out, p, NULL); break;
	case FORMAT_CSV: write_csv(out, p); break;
	case FORMAT_MARKDOWN: write_markdown(out, p); break;
	}
}
