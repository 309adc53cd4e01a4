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
/* ledger_open with flags. LEDGER_OPEN_APPLY_LOCK: take the apply lock (ledger_apply_lock) on
 * the file before SQLite opens it; EM_ECONFLICT when another apply holds it. A path that does
 * not name a regular file (/dev/null, a FIFO, a directory) is EM_EINPUT, before SQLite sees it;
 * so is one that looks like a URL (SCHEME://..., or SQLite's file:...), before anything is created. */
enum { LEDGER_OPEN_APPLY_LOCK = 1 };
int ledger_open_ex(struct ledger **out, const char *path, unsigned flags, struct buf *err);
void ledger_close(struct ledger *l);
/* One apply per database: takes the apply lock on the database file itself (flock on the
 * inode), so no other name of the file (symlink, hard link, bind mount) escapes it and a killed
 * holder releases it. EM_ECONFLICT with "another 'ebsmigrate apply' is running on database
 * 'PATH' (pid N)..." when another process holds it. Released by ledger_apply_unlock or
 * ledger_close. */
int ledger_apply_lock(struct ledger *l, struct buf *err);
void ledger_apply_unlock(struct ledger *l);
/* For a long-running reader (metrics --listen): when the path now names another file than the
 * one open (replaced by a rename, a restore from backup), opens the path anew and closes the old
 * file, *l then being the new ledger and *reopened 1. EM_ENOTFOUND when nothing is at the path
 * now, or ledger_open_ex's error for the new file: *l is then unchanged. */
int ledger_reopen_if_replaced(struct ledger **l, int *reopened, struct buf *err);
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

/* Records a plan: its JSON document (schema ebsmigrate.plan/v1), the document's SHA-256 and
 * its summary. price_version <= 0 stores NULL. Sets *id_out. */
int ledger_plan_record(struct ledger *l, const char *generated_at, const char *mode,
		       int64_t price_version, int64_t volumes, int64_t savings_monthly_micro,
		       const char *plan_json, int64_t *id_out, struct buf *err);
/* The latest recorded plan whose document is exactly plan_json (byte for byte). EM_ENOTFOUND
 * when there is none. */
int ledger_plan_find(struct ledger *l, const char *plan_json, int64_t *id_out, struct buf *err);
/* ledger_plan_find, else ledger_plan_record, in one write transaction. *recorded = 1 when a new
 * row was added, 0 when an identical document was already there. */
int ledger_plan_find_or_record(struct ledger *l, const char *generated_at, const char *mode,
			       int64_t price_version, int64_t volumes, int64_t savings_monthly_micro,
			       const char *plan_json, int64_t *id_out, int *recorded, struct buf *err);

/* Records an inventory run (migration 0002): the document as a finished ledger_doc (stored
 * compressed, migration 0007), else as its text. */
struct ledger_doc;
struct ledger_inventory_run {
	const char *started_at, *finished_at, *source, *regions, *clusters;
	int64_t volumes, kube_volumes, aws_calls;
	const char *notices_json;   /* JSON array of strings */
	const char *inventory_json; /* ebsmigrate.inventory/v1, when doc is NULL */
	const struct ledger_doc *doc;
};
int ledger_inventory_record(struct ledger *l, const struct ledger_inventory_run *run, int64_t *id_out,
			    struct buf *err);

/* ---- price book history (pricing show/diff/export) ---- */
struct ledger_price_version {
	int64_t id;
	char *source, *effective_date, *fetched_at, *created_at; /* fetched_at may be NULL */
	int is_current;
	int64_t n_prices;
};
/* Every stored version, oldest (lowest id) first. *out is caller-owned: free with
 * ledger_price_versions_free. An empty book gives n = 0. */
int ledger_price_versions(struct ledger *l, struct ledger_price_version **out, size_t *n, struct buf *err);
void ledger_price_versions_free(struct ledger_price_version *v, size_t n);
/* Loads version id (current or not) into out (initialised here; release with pricebook_release).
 * EM_ENOTFOUND (message names the id) when there is no such version. */
int ledger_pricebook_load(struct ledger *l, int64_t id, struct pricebook *out, struct buf *err);

/* ---- realized savings (report) ---- */
/* One volume the apply ledger shows migrated: its latest apply_volumes row in state
 * 'completed' (by completed_at, then id). Money in micro-dollars as the plan priced it. */
struct ledger_completed {
	char *volume_id;
	char *completed_at;   /* RFC 3339, NULL when the row has none */
	int64_t current_monthly_micro, target_monthly_micro;
};
/* Every completed volume, one row per volume_id, ordered by volume_id. Caller frees with
 * ledger_completed_free. */
int ledger_completed_volumes(struct ledger *l, struct ledger_completed **out, size_t *n, struct buf *err);
void ledger_completed_free(struct ledger_completed *c, size_t n);

/* `db prune`: deletes the inventory runs older than the newest keep, and the plans older than
 * the newest keep that no apply row (apply_runs, apply_volumes) refers to, in one transaction
 * (dry_run: nothing deleted, the same result); then VACUUM when asked. r lists what was (or
 * would be) deleted, with the bytes their documents took, and the old plans kept because apply
 * rows refer to them. Release r with ledger_prune_result_release. */
struct ledger_prune_result {
	int64_t *plans, *runs, *kept_referenced;
	size_t n_plans, n_runs, n_kept_referenced;
	int64_t plan_bytes, run_bytes;
};
int ledger_prune(struct ledger *l, int64_t keep, int dry_run, int vacuum, struct ledger_prune_result *r,
		 struct buf *err);
void ledger_prune_result_release(struct ledger_prune_result *r);

/* A plan or inventory document recorded as it is written, never whole in memory: begin, add its
 * bytes in order, finish (compresses and hashes it), then ledger_plan_record_doc (or a
 * ledger_inventory_run's doc); free in any case. */
struct ledger_doc *ledger_doc_begin(void);
void ledger_doc_add(struct ledger_doc *d, const char *data, size_t len);
int ledger_doc_finish(struct ledger_doc *d, struct buf *err);
void ledger_doc_free(struct ledger_doc *d);
/* ledger_plan_record with a finished ledger_doc in place of the document's text. */
int ledger_plan_record_doc(struct ledger *l, const char *generated_at, const char *mode, int64_t price_version,
			   int64_t volumes, int64_t savings_monthly_micro, const struct ledger_doc *doc, int64_t *id_out,
			   struct buf *err);

#endif
