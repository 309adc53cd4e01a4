/*
 * inventory_output.h - writes the joined fleet (ebsmigrate.inventory/v1 JSON, or a table).
 * Appends to a caller-owned buf (or writes to a caller's FILE); never prints.
 */
#ifndef EBSMIGRATE_INVENTORY_OUTPUT_H
#define EBSMIGRATE_INVENTORY_OUTPUT_H

#include <stdio.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/volume.h"

struct inventory_meta {
	time_t generated_at;
	const char *account;
	const char *const *regions;
	size_t n_regions;
};

void inventory_write_json(struct buf *out, const struct fleet *f, const struct inventory_meta *m);
/* The same document written to fp as it is produced (a few hundred KiB held at a time);
 * 0, or EM_EIO when a write fails. */
int inventory_write_json_file(FILE *fp, const struct fleet *f, const struct inventory_meta *m);
/* The table (table.c); to: width, wide, titles (NULL: unlimited, titled). */
struct table_options;
void inventory_write_table(struct buf *out, const struct fleet *f, const struct inventory_meta *m,
			   const struct table_options *to);

#endif
