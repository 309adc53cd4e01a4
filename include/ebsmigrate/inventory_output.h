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
/* The same document handed to spill as it is produced (about a megabyte held at a time). */
void inventory_write_json_spilled(const struct fleet *f, const struct inventory_meta *m, const struct buf_spill *spill);
/* The table (table.c); to: width, wide, titles (NULL: unlimited, titled). */
/* Pieces the plan document shares with the inventory document. */
struct jsonw;
/* volume_id, account, region, availability_zone, size_gib, type, iops, throughput_mibps and
 * state, as members of the object the caller opened. */
void inventory_json_volume_head(struct jsonw *w, const struct volume *v);
enum kube_json_form {
	KUBE_JSON_PLAN,      /* usage as used_bytes/capacity_bytes members */
	KUBE_JSON_INVENTORY, /* adds volume_attributes_class and labels; usage as an object */
};
/* A volume's Kubernetes binding as an object, null when unbound. */
void inventory_json_kube_binding(struct jsonw *w, const struct kube_binding *k, enum kube_json_form form);

/* Multi-account runs (f->n_accounts > 0): the members "current_account", "account_coverage"
 * {"read", "in_scope"} and "accounts" [{id, name, profile, role_arn, status, error, regions:
 * [{region, status, error, volumes}]}] of the object the caller opened; nothing otherwise.
 * Shared by the inventory and plan documents (docs/accounts.md). */
void inventory_json_accounts(struct jsonw *w, const struct fleet *f);
/* "5 of 6 accounts read" (appended), or nothing for a one-account fleet. */
void inventory_accounts_summary(struct buf *out, const struct fleet *f);

struct table_options;
void inventory_write_table(struct buf *out, const struct fleet *f, const struct inventory_meta *m,
			   const struct table_options *to);

#endif
