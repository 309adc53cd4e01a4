/*
 * plan_output.h - writes a plan as a terminal table, JSON (schema ebsmigrate.plan/v1,
 * docs/plan-json.md), CSV (RFC 4180, one row per volume) or Markdown.
 * Appends to a caller-owned buf; never prints.
 */
#ifndef EBSMIGRATE_PLAN_OUTPUT_H
#define EBSMIGRATE_PLAN_OUTPUT_H

#include "ebsmigrate/buf.h"
#include "ebsmigrate/planner.h"

/* FORMAT_WIDE: the table with every column, unelided. FORMAT_YAML: the JSON document in YAML
 * (written by yamlout.c from the JSON; plan_write knows neither). */
enum out_format { FORMAT_TABLE = 0, FORMAT_JSON, FORMAT_CSV, FORMAT_MARKDOWN, FORMAT_WIDE, FORMAT_YAML };

int out_format_parse(const char *s, enum out_format *out);
void plan_write(struct buf *out, const struct plan *p, enum out_format fmt);
/* The JSON document of plan_write, handed to spill in pieces of about 1 MiB, in order. */
void plan_write_json_spilled(const struct plan *p, const struct buf_spill *spill);
/* The table (table.c): colour for actions; to: width, wide, titles (NULL: unlimited, titled). */
/* The "pricing" object of the plan and report documents: source, effective_date, fetched_at
 * (report only) and version (when stored). */
struct jsonw;
void plan_json_pricing(struct jsonw *w, const struct pricebook *book, int with_fetched_at);

struct table_options;
void plan_write_table(struct buf *out, const struct plan *p, int color, const struct table_options *to);

#endif
