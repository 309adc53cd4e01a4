/*
 * bench_output.c - bench writers: run and list tables, ebsmigrate.bench/v1 JSON, comparison
 * tables/JSON/Markdown, the sparkline and the SVG chart.
 *
 * Entry points: bench_write_runs_json, bench_write_run_table, bench_write_list_table,
 * bench_write_compare, bench_sparkline, bench_write_svg, bench_json_number.
 *
 * Invariants: JSON numbers round-trip (bench_json_number), unknown values are null in JSON and
 * "-" in tables; tables align on display width (UTF-8 code points), so sparklines line up.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/bench_output.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/table.h"
#include "ebsmigrate/common.h"

void bench_json_number(struct buf *out, double v)
{
	jsonw_add_number(out, v);
}

static void json_int_or_null(struct jsonw *w, int64_t v)
{
	jsonw_int_or_null(w, (long long)v, v > 0);
}

/* A stored JSON object (options) re-emitted compactly; {} when missing or unreadable. */
static void json_raw_object(struct jsonw *w, const char *text)
{
	cJSON *j = text ? cJSON_Parse(text) : NULL;
	char *s = cJSON_IsObject(j) ? cJSON_PrintUnformatted(j) : NULL;
	jsonw_raw(w, s ? s : "{}", s ? strlen(s) : 2);
	cJSON_free(s);
	cJSON_Delete(j);
}

static void json_dir(struct jsonw *w, const struct fio_dir *d)
{
	if (!d->present) {
		jsonw_null(w);
		return;
	}
	jsonw_object(w);
	jsonw_key_number(w, "iops", d->iops);
	jsonw_key_number(w, "mibps", d->mibps);
	jsonw_key(w, "ios");
	jsonw_int_or_null(w, (long long)d->ios, d->ios >= 0); /* null: fio did not count them (fio 2.x) */
	jsonw_key(w, "lat_ms");
	jsonw_object(w);
	jsonw_key_number(w, "mean", d->lat.mean);
	jsonw_key_number(w, "p50", d->lat.p50);
	jsonw_key_number(w, "p95", d->lat.p95);
	jsonw_key_number(w, "p99", d->lat.p99);
	jsonw_key_number(w, "p99_9", d->lat.p99_9);
	jsonw_end(w);
	jsonw_end(w);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void json_series(struct jsonw *w, const struct fio_series *s)
{
	if (s->n == 0) {
		jsonw_null(w);
		return;
	}
	double *t = xmalloc(s->n * sizeof *t);
	memcpy(t, s->iops, s->n * sizeof *t);
	qsort(t, s->n, sizeof *t, cmp_double);
	double med = s->n % 2 ? t[s->n / 2] : (t[s->n / 2 - 1] + t[s->n / 2]) / 2;
	jsonw_object(w);
	jsonw_key_int(w, "samples", (long long)s->n);
	jsonw_key_int(w, "first_ms", (long long)s->t_ms[0]);
	jsonw_key_int(w, "last_ms", (long long)s->t_ms[s->n - 1]);
	jsonw_key_number(w, "min", t[0]);
	jsonw_key_number(w, "median", med);
	jsonw_key_number(w, "max", t[s->n - 1]);
	jsonw_end(w);
	free(t);
}

static void json_job(struct jsonw *w, const struct bench_job *j)
{
	jsonw_object(w);
	jsonw_key_str(w, "name", j->name);
	jsonw_key_str(w, "profile", j->profile);
	jsonw_key_str(w, "kind", fio_kind_name(j->kind));
	jsonw_key_int(w, "jobs", (long long)(j->jobs ? j->jobs : 1));
	jsonw_key(w, "iodepth");
	jsonw_int_or_null(w, (long long)j->iodepth, j->iodepth > 0);
	jsonw_key_int(w, "in_flight", (long long)bench_job_in_flight(j));
	jsonw_key(w, "error");
	jsonw_int_or_null(w, (long long)j->error, j->error != 0);
	jsonw_key_number(w, "runtime_s", (double)j->runtime_ms / 1000.0);
	if (j->hostname)
		jsonw_key_str(w, "hostname", j->hostname);
	jsonw_key_str(w, "latency_source", j->lat_source);
	jsonw_key(w, "read");
	json_dir(w, &j->read);
	jsonw_key(w, "write");
	json_dir(w, &j->write);
	jsonw_key(w, "cliff");
	if (j->has_cliff) {
		jsonw_object(w);
		jsonw_key_number(w, "at_s", j->cliff.at_s);
		jsonw_key_number(w, "before_iops", j->cliff.before_iops);
		jsonw_key_number(w, "after_iops", j->cliff.after_iops);
		jsonw_end(w);
	} else {
		jsonw_null(w);
	}
	jsonw_key(w, "series");
	json_series(w, &j->series);
	jsonw_end(w);
}

static void json_volume(struct jsonw *w, const struct bench_run *r)
{
	if (!r->has_volume) {
		jsonw_null(w);
		return;
	}
	const struct bench_volume *v = &r->volume;
	jsonw_object(w);
	jsonw_key_str(w, "volume_id", v->volume_id);
	jsonw_key_str(w, "type", v->type);
	const struct jsonw_int_member sizes[] = {{"size_gib", v->size_gib}, {"iops", v->iops}, {"throughput", v->throughput}};
	for (size_t i = 0; i < JSONW_COUNT(sizes); i++) {
		jsonw_key(w, sizes[i].key);
		json_int_or_null(w, sizes[i].value);
	}
	jsonw_key_number(w, "burst_balance", v->burst_balance);
	jsonw_key_str(w, "instance_type", v->instance_type);
	jsonw_key_str(w, "node", v->node);
	jsonw_key_str(w, "pvc", v->pvc);
	jsonw_end(w);
}

/* One run, an element of the "runs" array: on a line of its own, indented two spaces, with its
 * jobs one a line below it. */
static void json_run(struct jsonw *w, const struct bench_run *r)
{
	jsonw_lead(w, "\n  ");
	jsonw_object(w);
	const struct jsonw_str_member texts[] = {
		{"label", r->label},   {"created_at", r->created_at}, {"finished_at", r->finished_at},
		{"status", r->status}, {"source", r->source},         {"target", r->target},
		{"phase", r->phase},   {"fio_version", r->fio_version}, {"error", r->error},
	};
	jsonw_key_int(w, "id", (long long)r->id);
	jsonw_members_str(w, texts, JSONW_COUNT(texts));
	jsonw_key(w, "options");
	json_raw_object(w, r->options_json);
	jsonw_key(w, "apply_volume_id");
	json_int_or_null(w, r->apply_volume_id);
	jsonw_key(w, "volume");
	json_volume(w, r);
	jsonw_lead(w, "\n   ");
	jsonw_key(w, "jobs");
	jsonw_array(w);
	for (size_t i = 0; i < r->n_jobs; i++) {
		jsonw_lead(w, "\n    ");
		json_job(w, &r->jobs[i]);
	}
	if (r->n_jobs)
		jsonw_layout(w, "\n  ");
	jsonw_end(w);
	jsonw_end(w);
}

/* The document's opening: {"schema": ..., "runs": [ */
static void json_open_runs(struct jsonw *w, struct buf *out)
{
	jsonw_document(w, out, JSONW_SPACED, BENCH_SCHEMA);
	jsonw_key(w, "runs");
	jsonw_array(w);
}

void bench_write_runs_json(struct buf *out, const struct bench_run *runs, size_t n)
{
	struct jsonw w;
	json_open_runs(&w, out);
	for (size_t i = 0; i < n; i++)
		json_run(&w, &runs[i]);
	if (n)
		jsonw_layout(&w, "\n");
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
}

/* ---- tables ---- */

/* A grid of cells, row 0 the titles, built row by row; written through the table writer
 * (table.c), or as Markdown by bench_write_compare. */
struct grid {
	char **cells;
	size_t n, alloc, cols;
};

static void cell(struct grid *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cell(struct grid *t, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	struct buf vis = BUF_INIT; /* names, PVCs and labels: control characters shown, not sent */
	buf_add_visible(&vis, b.s);
	buf_release(&b);
	XGROW(t->cells, t->n, t->alloc);
	t->cells[t->n++] = buf_detach(&vis);
}

static void grid_free(struct grid *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof *t);
}

/* priority: per column, 0 always shown, higher dropped earlier on a narrow terminal (NULL: all 0). */
static void grid_write(struct buf *out, struct grid *t, const int *priority, const struct table_options *to)
{
	struct table_column *cols = xcalloc(t->cols, sizeof *cols);
	for (size_t c = 0; c < t->cols; c++)
		cols[c] = (struct table_column){t->cells[c], 0, priority ? priority[c] : 0, 0};
	struct table tab;
	table_init(&tab, cols, t->cols);
	for (size_t i = t->cols; i < t->n; i++)
		table_add(&tab, t->cells[i]);
	table_write(out, &tab, to);
	table_release(&tab);
	free(cols);
	grid_free(t);
}

/* Latency in ms as the field notes write it ("0.564", "3.39", "10.4", "109.6"); "-" when unknown. */
static void fmt_ms(struct buf *b, double v)
{
	if (isnan(v))
		buf_adds(b, "-");
	else if (v < 1)
		buf_addf(b, "%.3f", v);
	else if (v < 10)
		buf_addf(b, "%.2f", v);
	else if (v < 1000)
		buf_addf(b, "%.1f", v);
	else
		buf_addf(b, "%.0f", v);
}

static char *ms_text(double v)
{
	struct buf b = BUF_INIT;
	fmt_ms(&b, v);
	return buf_detach(&b);
}

static void fmt_iops(struct buf *b, double v)
{
	if (isnan(v))
		buf_adds(b, "-");
	else
		buf_addf(b, v >= 100 ? "%.0f" : "%.1f", v);
}

static char *iops_text(double v)
{
	struct buf b = BUF_INIT;
	fmt_iops(&b, v);
	return buf_detach(&b);
}

static char *cliff_text(const struct bench_job *j)
{
	struct buf b = BUF_INIT;
	if (!j->has_cliff) {
		buf_adds(&b, j->series.n >= 6 ? "none" : "-"); /* fewer samples are not judged */
	} else {
		buf_addf(&b, "at %.0f s: ", j->cliff.at_s);
		fmt_iops(&b, j->cliff.before_iops);
		buf_adds(&b, " -> ");
		fmt_iops(&b, j->cliff.after_iops);
	}
	return buf_detach(&b);
}

void bench_sparkline(struct buf *out, const struct fio_series *s, size_t width)
{
	static const char *const blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588"};
	if (!s->n || !width) {
		buf_adds(out, "-");
		return;
	}
	size_t cols = s->n < width ? s->n : width;
	double *v = xcalloc(cols, sizeof *v), max = 0;
	for (size_t c = 0; c < cols; c++) {
		size_t from = c * s->n / cols, to = (c + 1) * s->n / cols;
		double sum = 0;
		for (size_t i = from; i < to; i++)
			sum += s->iops[i];
		v[c] = to > from ? sum / (double)(to - from) : 0;
		if (v[c] > max)
			max = v[c];
	}
	for (size_t c = 0; c < cols; c++) {
		int level = max > 0 ? (int)lround(v[c] / max * 7) : 0;
		buf_adds(out, blocks[level < 0 ? 0 : level > 7 ? 7 : level]);
	}
	free(v);
}

static void volume_text(struct buf *b, const struct bench_run *r)
{
	if (!r->has_volume) {
		buf_adds(b, "volume unknown");
		return;
	}
	const struct bench_volume *v = &r->volume;
	const char *sep = "";
	if (v->volume_id) {
		buf_addf(b, "%s", v->volume_id);
		sep = " ";
	}
	if (v->type) {
		buf_addf(b, "%s%s", sep, v->type);
		sep = " ";
	}
	if (v->size_gib) {
		buf_addf(b, "%s%lld GiB", sep, (long long)v->size_gib);
		sep = " ";
	}
	if (v->iops) {
		buf_addf(b, "%s%lld IOPS", sep, (long long)v->iops);
		sep = " ";
	}
	if (v->throughput) {
		buf_addf(b, "%s%lld MiB/s", sep, (long long)v->throughput);
		sep = " ";
	}
	if (v->instance_type)
		buf_addf(b, "%son %s", sep, v->instance_type);
}

void bench_write_run_table(struct buf *out, const struct bench_run *r, const struct table_options *to)
{
	struct buf head = BUF_INIT, line = BUF_INIT;
	volume_text(&head, r);
	buf_addf(&line, "bench run %lld%s%s%s: %s %s, %s, %s", (long long)r->id, r->label ? " (" : "",
		 r->label ? r->label : "", r->label ? ")" : "", r->source ? r->source : "?", r->target ? r->target : "?",
		 r->fio_version ? r->fio_version : "fio version unknown", head.s);
	buf_add_visible(out, line.s);
	buf_addc(out, '\n');
	buf_release(&head);
	buf_release(&line);
	struct grid t = {.cols = 11};
	const char *hdr[] = {"job", "dir", "IOPS", "MiB/s", "mean ms", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "cliff",
			     "IOPS over time"};
	for (size_t i = 0; i < 11; i++)
		cell(&t, "%s", hdr[i]);
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct bench_job *j = &r->jobs[i];
		const struct fio_dir *dirs[2] = {&j->read, &j->write};
		int rows = 0;
		if (j->error && !j->read.present && !j->write.present) { /* fio's failure, not a 0 MiB/s read */
			cell(&t, "%s", j->name);
			cell(&t, "failed: fio error %d (%s)", j->error, strerror(j->error));
			for (size_t c = 2; c < 11; c++)
				cell(&t, "%s", c == 9 ? "-" : "");
			continue;
		}
		for (int d = 0; d < 2; d++) {
			if (!dirs[d]->present && (d == 1 || j->write.present))
				continue;
			const struct fio_dir *x = dirs[d];
			char *iops = iops_text(x->iops), *mean = ms_text(x->lat.mean), *p50 = ms_text(x->lat.p50),
			     *p95 = ms_text(x->lat.p95), *p99 = ms_text(x->lat.p99), *p999 = ms_text(x->lat.p99_9);
			cell(&t, "%s", rows ? "" : j->name);
			cell(&t, "%s", d ? "write" : "read");
			cell(&t, "%s", x->present ? iops : "-");
			if (x->present)
				cell(&t, "%.1f", x->mibps);
			else
				cell(&t, "%s", "-");
			cell(&t, "%s", mean);
			cell(&t, "%s", p50);
			cell(&t, "%s", p95);
			cell(&t, "%s", p99);
			cell(&t, "%s", p999);
			free(iops), free(mean), free(p50), free(p95), free(p99), free(p999);
			if (rows) {
				cell(&t, "%s", "");
				cell(&t, "%s", "");
			} else {
				char *cl = cliff_text(j);
				struct buf sp = BUF_INIT;
				bench_sparkline(&sp, &j->series, 40);
				cell(&t, "%s", cl);
				cell(&t, "%s", sp.s);
				free(cl);
				buf_release(&sp);
			}
			rows++;
		}
	}
	static const int run_priority[11] = {0, 0, 0, 1, 4, 5, 3, 0, 6, 2, 7};
	grid_write(out, &t, run_priority, to);
	if (r->error) {
		buf_addf(out, "%s: ", r->status ? r->status : "error");
		buf_add_visible(out, r->error);
		buf_addc(out, '\n');
	}
}

void bench_write_list_table(struct buf *out, const struct bench_run *runs, size_t n, const struct table_options *to)
{
	if (!n) {
		buf_adds(out, "no bench runs recorded\n");
		return;
	}
	struct grid t = {.cols = 10};
	const char *hdr[] = {"id", "created", "label", "source", "target", "phase", "status", "jobs", "fio", "volume"};
	for (size_t i = 0; i < 10; i++)
		cell(&t, "%s", hdr[i]);
	for (size_t i = 0; i < n; i++) {
		const struct bench_run *r = &runs[i];
		struct buf v = BUF_INIT;
		if (r->has_volume)
			volume_text(&v, r);
		else
			buf_adds(&v, "-");
		cell(&t, "%lld", (long long)r->id);
		cell(&t, "%s", r->created_at ? r->created_at : "-");
		cell(&t, "%s", r->label ? r->label : "-");
		cell(&t, "%s", r->source ? r->source : "-");
		cell(&t, "%s", r->target ? r->target : "-");
		cell(&t, "%s", r->phase ? r->phase : "-");
		cell(&t, "%s", r->status ? r->status : "-");
		cell(&t, "%zu", r->n_jobs);
		cell(&t, "%s", r->fio_version ? r->fio_version : "-");
		cell(&t, "%s", v.s);
		buf_release(&v);
	}
	static const int list_priority[10] = {0, 2, 0, 3, 4, 1, 0, 5, 6, 7};
	grid_write(out, &t, list_priority, to);
}

/* ---- comparison ---- */

static double pct(double before, double after)
{
	if (!isfinite(before) || !isfinite(after) || before == 0)
		return NAN;
	return (after - before) / before * 100.0;
}

static char *pct_text(double p)
{
	struct buf b = BUF_INIT;
	if (isnan(p))
		buf_adds(&b, "-");
	else
		buf_addf(&b, "%+.1f %%", p);
	return buf_detach(&b);
}

static const struct fio_dir *dir_or_empty(const struct bench_job *j)
{
	static const struct fio_dir none = {0, 0, 0, 0, 0, {NAN, NAN, NAN, NAN, NAN}};
	return j ? bench_job_main_dir(j) : &none;
}

static void run_title(struct buf *b, const struct bench_run *r)
{
	buf_addf(b, "run %lld", (long long)r->id);
	if (r->label)
		buf_addf(b, " '%s'", r->label);
	buf_adds(b, " (");
	volume_text(b, r);
	buf_addc(b, ')');
}

static void json_compare(struct buf *out, const struct bench_comparison *c)
{
	struct jsonw w;
	json_open_runs(&w, out);
	json_run(&w, c->before);
	json_run(&w, c->after);
	jsonw_layout(&w, "\n");
	jsonw_end(&w);
	jsonw_key(&w, "compare");
	jsonw_object(&w);
	jsonw_key_int(&w, "before", (long long)c->before->id);
	jsonw_key_int(&w, "after", (long long)c->after->id);
	jsonw_key_str(&w, "verdict", bench_verdict_name(c->verdict));
	jsonw_key(&w, "rules");
	jsonw_object(&w);
	jsonw_key_number(&w, "tolerance_pct", c->rules.tolerance_pct);
	jsonw_key_number(&w, "latency_floor_ms", c->rules.latency_floor_ms);
	jsonw_end(&w);
	jsonw_key_array(&w, "figures");
	for (int i = 0; i < BENCH_N_FIGURES; i++) {
		const struct bench_figure *f = &c->figures[i];
		if (f->provisioned <= 0)
			continue;
		jsonw_object(&w);
		jsonw_key_str(&w, "figure", f->name);
		jsonw_key_int(&w, "provisioned", (long long)f->provisioned);
		jsonw_key_str(&w, "status", bench_figure_state_name(f->state));
		jsonw_key_str(&w, "by", f->by);
		jsonw_key_str(&w, "reason", f->reason);
		jsonw_end(&w);
	}
	jsonw_end(&w);
	jsonw_key(&w, "profiles");
	jsonw_array(&w);
	for (size_t k = 0; k < c->n; k++) {
		const struct bench_profile_cmp *p = &c->profiles[k];
		const struct bench_job *b = p->before, *a = p->after;
		const struct fio_dir *bd = dir_or_empty(b), *ad = dir_or_empty(a);
		jsonw_lead(&w, "\n  ");
		jsonw_object(&w);
		jsonw_key_str(&w, "profile", p->key);
		jsonw_key_str(&w, "before_job", b ? b->name : NULL);
		jsonw_key_str(&w, "after_job", a ? a->name : NULL);
		jsonw_key_str(&w, "verdict", bench_verdict_name(p->verdict));
		jsonw_key(&w, "deltas");
		jsonw_object(&w);
		jsonw_key_number(&w, "iops_pct", b && a ? pct(bench_job_iops(b), bench_job_iops(a)) : NAN);
		jsonw_key_number(&w, "mibps_pct", b && a ? pct(bench_job_mibps(b), bench_job_mibps(a)) : NAN);
		jsonw_key_number(&w, "lat_mean_pct", pct(bd->lat.mean, ad->lat.mean));
		jsonw_key_number(&w, "p50_pct", pct(bd->lat.p50, ad->lat.p50));
		jsonw_key_number(&w, "p95_pct", pct(bd->lat.p95, ad->lat.p95));
		jsonw_key_number(&w, "p99_pct", pct(bd->lat.p99, ad->lat.p99));
		jsonw_key_number(&w, "p99_9_pct", pct(bd->lat.p99_9, ad->lat.p99_9));
		jsonw_end(&w);
		jsonw_key_array(&w, "checks");
		for (size_t i = 0; i < p->n_checks; i++) {
			const struct bench_check *ch = &p->checks[i];
			jsonw_object(&w);
			jsonw_key_str(&w, "rule", ch->rule);
			jsonw_key_number(&w, "expected", ch->expected);
			jsonw_key_number(&w, "actual", ch->actual);
			jsonw_key_bool(&w, "ok", ch->ok);
			jsonw_key_str(&w, "text", ch->text);
			jsonw_end(&w);
		}
		jsonw_end(&w);
		jsonw_key_strv(&w, "notes", p->notes, p->n_notes);
		jsonw_end(&w);
	}
	if (c->n)
		jsonw_layout(&w, "\n");
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
}

/* The rows of one profile: metric, before, after, change. */
static void compare_rows(struct grid *t, const struct bench_profile_cmp *p, int markdown)
{
	const struct bench_job *b = p->before, *a = p->after;
	const struct fio_dir *bd = dir_or_empty(b), *ad = dir_or_empty(a);
	struct {
		const char *metric;
		double before, after;
		int is_ms;
	} rows[] = {
		{"IOPS", b ? bench_job_iops(b) : NAN, a ? bench_job_iops(a) : NAN, 0},
		{"MiB/s", b ? bench_job_mibps(b) : NAN, a ? bench_job_mibps(a) : NAN, 0},
		{"mean ms", bd->lat.mean, ad->lat.mean, 1},
		{"p50 ms", bd->lat.p50, ad->lat.p50, 1},
		{"p95 ms", bd->lat.p95, ad->lat.p95, 1},
		{"p99 ms", bd->lat.p99, ad->lat.p99, 1},
		{"p99.9 ms", bd->lat.p99_9, ad->lat.p99_9, 1},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char *x = rows[i].is_ms ? ms_text(rows[i].before) : iops_text(rows[i].before);
		char *y = rows[i].is_ms ? ms_text(rows[i].after) : iops_text(rows[i].after);
		char *d = pct_text(pct(rows[i].before, rows[i].after));
		if (!rows[i].is_ms && i == 1) { /* MiB/s with one decimal */
			free(x), free(y);
			struct buf bx = BUF_INIT, by = BUF_INIT;
			if (isnan(rows[i].before))
				buf_adds(&bx, "-");
			else
				buf_addf(&bx, "%.1f", rows[i].before);
			if (isnan(rows[i].after))
				buf_adds(&by, "-");
			else
				buf_addf(&by, "%.1f", rows[i].after);
			x = buf_detach(&bx);
			y = buf_detach(&by);
		}
		cell(t, "%s", i == 0 ? p->key : "");
		cell(t, "%s", rows[i].metric);
		cell(t, "%s", x);
		cell(t, "%s", y);
		cell(t, "%s", d);
		free(x), free(y), free(d);
	}
	char *cb = b ? cliff_text(b) : xstrdup("-"), *ca = a ? cliff_text(a) : xstrdup("-");
	cell(t, "%s", "");
	cell(t, "%s", "cliff");
	cell(t, "%s", cb);
	cell(t, "%s", ca);
	cell(t, "%s", "");
	free(cb), free(ca);
	struct buf sb = BUF_INIT, sa = BUF_INIT;
	if (b)
		bench_sparkline(&sb, &b->series, 24);
	else
		buf_adds(&sb, "-");
	if (a)
		bench_sparkline(&sa, &a->series, 24);
	else
		buf_adds(&sa, "-");
	cell(t, "%s", "");
	cell(t, "%s", "IOPS over time");
	cell(t, "%s", sb.s);
	cell(t, "%s", sa.s);
	cell(t, "%s", "");
	buf_release(&sb);
	buf_release(&sa);
	(void)markdown;
}

/* What the after run proved of each provisioned figure: "6000 IOPS: not verified (...)". */
static void figure_lines(struct buf *out, const struct bench_comparison *c, const char *bullet)
{
	for (int i = 0; i < BENCH_N_FIGURES; i++) {
		const struct bench_figure *f = &c->figures[i];
		if (f->provisioned <= 0)
			continue;
		buf_addf(out, "%s%lld %s: ", bullet, (long long)f->provisioned, i == BENCH_FIGURE_IOPS ? "IOPS" : "MiB/s");
		struct buf line = BUF_INIT;
		switch (f->state) {
		case BENCH_FIGURE_VERIFIED: buf_addf(&line, "verified by %s", f->by); break;
		case BENCH_FIGURE_MISSED: buf_addf(&line, "missed by %s", f->by); break;
		case BENCH_FIGURE_NOT_VERIFIED: buf_addf(&line, "not verified (%s)", f->reason ? f->reason : "not reached"); break;
		case BENCH_FIGURE_WAIVED: buf_addf(&line, "waived (--waive %s)", f->name); break;
		case BENCH_FIGURE_NOT_EXERCISED:
			buf_addf(&line, "not exercised (no job of the after run is limited by %s)", f->name);
			break;
		}
		buf_add_visible(out, line.s); /* profile names come from job files */
		buf_release(&line);
		buf_addc(out, '\n');
	}
}

/* The figures are worth their own lines where they explain the verdict: one left unverified, or
 * waived (a pass or fail already shows its checks). */
static int has_figures(const struct bench_comparison *c)
{
	for (int i = 0; i < BENCH_N_FIGURES; i++)
		if (c->figures[i].provisioned > 0 &&
		    (c->figures[i].state == BENCH_FIGURE_NOT_VERIFIED || c->figures[i].state == BENCH_FIGURE_WAIVED))
			return 1;
	return 0;
}

static void verdict_lines(struct buf *out, const struct bench_profile_cmp *p, const char *bullet)
{
	buf_addf(out, "%s%s: %s", bullet, p->key, bench_verdict_name(p->verdict));
	for (size_t i = 0; i < p->n_checks; i++)
		buf_addf(out, "%s%s%s", i ? "; " : " (", p->checks[i].text, i + 1 == p->n_checks ? ")" : "");
	buf_addc(out, '\n');
	for (size_t i = 0; i < p->n_notes; i++)
		buf_addf(out, "%s  note: %s\n", bullet[0] == '-' ? "  " : "", p->notes[i]);
}

/* The verdict of each profile, then the provisioned figures when any was judged: the same lists
 * in markdown and in text, under each format's headings and bullets. */
static void verdict_sections(struct buf *out, const struct bench_comparison *c, const char *verdicts_heading,
			     const char *figures_heading, const char *bullet)
{
	buf_adds(out, verdicts_heading);
	for (size_t k = 0; k < c->n; k++)
		verdict_lines(out, &c->profiles[k], bullet);
	if (has_figures(c)) {
		buf_adds(out, figures_heading);
		figure_lines(out, c, bullet);
	}
}

void bench_write_compare(struct buf *out, const struct bench_comparison *c, enum out_format fmt)
{
	if (fmt == FORMAT_JSON) {
		json_compare(out, c);
		return;
	}
	int md = fmt == FORMAT_MARKDOWN;
	struct buf tb = BUF_INIT, ta = BUF_INIT;
	run_title(&tb, c->before);
	run_title(&ta, c->after);
	struct buf vb = BUF_INIT, va = BUF_INIT; /* run titles carry labels and PVC names */
	buf_add_visible(&vb, tb.s);
	buf_add_visible(&va, ta.s);
	if (md)
		buf_addf(out, "## Benchmark: before %s, after %s\n\n", vb.s, va.s);
	else
		buf_addf(out, "before: %s\nafter:  %s\n\n", vb.s, va.s);
	buf_release(&vb);
	buf_release(&va);
	buf_release(&tb);
	buf_release(&ta);
	struct grid t = {.cols = 5};
	const char *hdr[] = {"profile", "metric", "before", "after", "change"};
	for (size_t i = 0; i < 5; i++)
		cell(&t, "%s", hdr[i]);
	for (size_t k = 0; k < c->n; k++)
		compare_rows(&t, &c->profiles[k], md);
	if (md) {
		size_t rows = t.n / t.cols;
		for (size_t r = 0; r < rows; r++) {
			buf_adds(out, "|");
			for (size_t col = 0; col < t.cols; col++) {
				const char *s = t.cells[r * t.cols + col];
				buf_adds(out, " ");
				buf_add_markdown_cell(out, s);
				buf_adds(out, " |");
			}
			buf_addc(out, '\n');
			if (r == 0)
				buf_adds(out, "|---|---|---:|---:|---:|\n");
		}
		grid_free(&t);
		verdict_sections(out, c, "\n### Verdict\n\n", "\n### Provisioned\n\n", "- ");
		buf_addf(out, "\n**Overall: %s**\n", bench_verdict_name(c->verdict));
		return;
	}
	grid_write(out, &t, NULL, NULL);
	verdict_sections(out, c, "\nverdicts:\n", "\nprovisioned:\n", "  ");
	size_t np = 0, nf = 0, nv = 0, nn = 0;
	for (size_t k = 0; k < c->n; k++) {
		np += c->profiles[k].verdict == BENCH_PASS;
		nf += c->profiles[k].verdict == BENCH_FAIL;
		nv += c->profiles[k].verdict == BENCH_NOT_VERIFIED;
		nn += c->profiles[k].verdict == BENCH_NOT_JUDGED;
	}
	buf_addf(out, "\nverdict: %s (%zu pass, %zu fail, ", bench_verdict_name(c->verdict), np, nf);
	if (nv)
		buf_addf(out, "%zu not verified, ", nv);
	buf_addf(out, "%zu not judged)\n", nn);
}

/* ---- SVG ---- */

void bench_write_svg(struct buf *out, const struct fio_series *s, const struct bench_cliff *cliff, int width,
		     int height)
{
	const int ml = 56, mr = 12, mt = 12, mb = 28;
	int pw = width - ml - mr, ph = height - mt - mb;
	buf_addf(out,
		 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		 "font-family=\"sans-serif\" font-size=\"11\" role=\"img\" aria-label=\"IOPS over time\">\n",
		 width, height, width, height);
	buf_addf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#ccc\"/>\n", ml, mt, pw,
		 ph);
	if (!s->n || pw <= 0 || ph <= 0) {
		buf_addf(out, "<text x=\"%d\" y=\"%d\">no IOPS log</text>\n</svg>\n", ml + 8, mt + 16);
		return;
	}
	double tmax = (double)s->t_ms[s->n - 1] / 1000.0, vmax = 0;
	for (size_t i = 0; i < s->n; i++)
		vmax = fmax(vmax, s->iops[i]);
	if (vmax <= 0)
		vmax = 1;
	if (tmax <= 0)
		tmax = 1;
	vmax *= 1.1;
	buf_adds(out, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"");
	for (size_t i = 0; i < s->n; i++)
		buf_addf(out, "%s%.1f,%.1f", i ? " " : "", ml + (double)s->t_ms[i] / 1000.0 / tmax * pw,
			 mt + ph - s->iops[i] / vmax * ph);
	buf_adds(out, "\"/>\n");
	if (cliff) {
		double x = ml + cliff->at_s / tmax * pw;
		buf_addf(out,
			 "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/>\n"
			 "<text x=\"%.1f\" y=\"%d\" fill=\"#d62728\">cliff at %.0f s: %.0f &#8594; %.0f IOPS</text>\n",
			 x, mt, x, mt + ph, x + 4, mt + 14, cliff->at_s, cliff->before_iops, cliff->after_iops);
	}
	buf_addf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.0f</text>\n", ml - 4, mt + 10, vmax);
	buf_addf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", ml - 4, mt + ph);
	buf_addf(out, "<text x=\"%d\" y=\"%d\">0 s</text>\n", ml, height - 8);
	buf_addf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.0f s</text>\n", ml + pw, height - 8, tmax);
	buf_addf(out, "<text x=\"%d\" y=\"%d\" transform=\"rotate(-90 %d %d)\" text-anchor=\"middle\">IOPS</text>\n", 14,
		 mt + ph / 2, 14, mt + ph / 2);
	buf_adds(out, "</svg>\n");
}
