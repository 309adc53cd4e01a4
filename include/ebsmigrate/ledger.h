/*
 * ledger.h - the SQLite database: the only module that speaks SQL.
 *
 * Holds the price book (every version, with history), recorded plans, and (later) inventory
 * runs, the apply ledger and bench results. Schema = migrations/NNNN_name.sql (embedded in the
 * binary), applied in order inside one transaction each, tracked by PRAGMA user_version,
 * forward-only. The file is created with mode 0600 (its directory 0700), WAL journal mode,
 * foreign keys on, busy timeout 5 s.
 *
 * Ownership: struct ledger is opaque; ledger_close frees it. Data returned through out-params
 * is owned by the caller (release with the struct's own release function).
 */
#ifndef EBSMIGRATE_LEDGER_H
#define EBSMIGRATE_LEDGER_H

#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/pricebook.h"

struct ledger;

/* Default database path: $XDG_STATE_HOME/ebsmigrate/ebsmigrate.db, falling back to
 * $HOME/.local/state/ebsmigrate/ebsmigrate.db. Appends to out. */
void ledger_default_path(struct buf *out);
/* Opens (creating file and directories as needed) and migrates. A database whose
 * user_version is newer than this binary knows is refused with EM_EUNSUPPORTED. */
int ledger_open(struct ledger **out, const char *path, struct buf *err);
void ledger_close(struct ledger *l);
int ledger_schema_version(struct ledger *l);

/* Loads the current price book version. EM_ENOTFOUND when the book is empty. */
int ledger_pricebook_current(struct ledger *l, struct pricebook *out, struct buf *err);
/* Stores pb as a new version (all rows in one transaction) and makes it current; sets
 * pb->version. A failure leaves the previous current version in place. */
int ledger_pricebook_store(struct ledger *l, struct pricebook *pb, struct buf *err);
/* The price book to plan with: the current stored version, or, when the database has none
 * (or only an older bundled version than the one in this binary), the bundled cache, stored
 * first. */
int ledger_pricebook_for_planning(struct ledger *l, struct pricebook *out, struct buf *err);

/* Records a plan: its JSON document (schema ebsmigrate.plan/v1) and summary. Sets *id_out. */
int ledger_plan_record(struct ledger *l, const char *generated_at, const char *mode,
		       int64_t price_version, int64_t volumes, int64_t savings_monthly_micro,
		       const char *plan_json, int64_t *id_out, struct buf *err);

/* Records an inventory run (migration 0002). */
struct ledger_inventory_run {
	const char *started_at, *finished_at, *source, *regions, *clusters;
	int64_t volumes, kube_volumes, aws_calls;
	const char *notices_json;   /* JSON array of strings */
	const char *inventory_json; /* ebsmigrate.inventory/v1 */
};
int ledger_inventory_record(struct ledger *l, const struct ledger_inventory_run *run, int64_t *id_out,
			    struct buf *err);

#endif
