/*
 * bench_output.h - writes bench runs and comparisons: terminal tables, JSON (schema
 * ebsmigrate.bench/v1, docs/bench.md), Markdown, a terminal sparkline of an IOPS series and an
 * SVG chart of it (for the HTML report). Appends to a caller-owned buf; never prints.
 *
 * JSON numbers are written as the shortest decimal that reads back as the same double, so a
 * value equals fio's own (IOPS) or fio's own / 1e6 (latency in ms) exactly.
 */
#ifndef EBSMIGRATE_BENCH_OUTPUT_H
#define EBSMIGRATE_BENCH_OUTPUT_H

#include <stddef.h>

#include "ebsmigrate/bench.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/plan_output.h" /* enum out_format */

#define BENCH_SCHEMA "ebsmigrate.bench/v1"

/* {"schema": "ebsmigrate.bench/v1", "runs": [...]} followed by a newline. */
void bench_write_runs_json(struct buf *out, const struct bench_run *runs, size_t n);
/* One run's jobs as a table (one row per job and direction), with cliff and sparkline. */
struct table_options; /* to: how tables fit (table.h; NULL: unlimited) */
void bench_write_run_table(struct buf *out, const struct bench_run *r, const struct table_options *to);
/* The runs, one line each. */
void bench_write_list_table(struct buf *out, const struct bench_run *runs, size_t n, const struct table_options *to);
/* A comparison as FORMAT_TABLE, FORMAT_JSON (the runs plus "compare") or FORMAT_MARKDOWN. */
void bench_write_compare(struct buf *out, const struct bench_comparison *c, enum out_format fmt);

/* The series in at most width block characters (U+2581..U+2588), scaled from 0 to its maximum;
 * "-" when empty. */
void bench_sparkline(struct buf *out, const struct fio_series *s, size_t width);
/* A standalone <svg> line chart of the series (IOPS over seconds), with the cliff marked when
 * cliff is not NULL. */
void bench_write_svg(struct buf *out, const struct fio_series *s, const struct bench_cliff *cliff, int width,
		     int height);
/* The shortest decimal that reads back as v; "null" for NAN and infinities. */
void bench_json_number(struct buf *out, double v);

#endif
