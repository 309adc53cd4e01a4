/*
 * ledger_internal.h - shared by the ledger module's files (ledger.c: open, migrations, price
 * book, plans, inventory runs; ledger_apply.c: the apply ledger; ledger_report.c: the finance
 * report's reads). Not a public header: nothing outside ledger*.c includes it, so SQL stays
 * inside the ledger module.
 */
#ifndef EBSMIGRATE_LEDGER_INTERNAL_H
#define EBSMIGRATE_LEDGER_INTERNAL_H

#include <sqlite3.h>

#include "ebsmigrate/buf.h"

struct ledger {
	sqlite3 *db;
	char *path;
	int schema_version;
	/* The database file, opened before SQLite opens it and closed only after sqlite3_close:
	 * it proves the path names a regular file and carries the apply lock (flock). Closing it
	 * earlier would drop SQLite's own POSIX locks on the file (they belong to the process and
	 * inode, and any close() of that inode releases them). */
	int fd;
	int apply_locked;
};

/* Appends "database 'PATH': WHAT: sqlite's message" and returns the matching EM_E* code. */
int ledger_db_err(struct ledger *l, struct buf *err, const char *what);
int ledger_exec(struct ledger *l, const char *sql, const char *what, struct buf *err);
void ledger_rollback(struct ledger *l);
int ledger_prepare(struct ledger *l, const char *sql, sqlite3_stmt **st, struct buf *err);
/* Binds a string or NULL (copied: the caller's string may not outlive the step). */
void ledger_bind_text(sqlite3_stmt *st, int i, const char *s);
char *ledger_column_dup(sqlite3_stmt *st, int i);
/* ledger_store.c: out = doc compressed as one zlib stream (plans.plan_zlib). */
int ledger_deflate(const char *doc, size_t len, struct buf *out, struct buf *err);
/* The document of a plans row read by st: columns col, col + 1, col + 2 are plan_json,
 * plan_zlib, plan_size. *out is the caller's. An error (a damaged compressed copy) names plan id. */
/* A finished ledger_doc's zlib stream, document size and SHA-256 (hex). */
struct ledger_doc;
void ledger_doc_stored(const struct ledger_doc *d, const char **zdata, size_t *zlen, size_t *size, const char **sha);
int ledger_plan_document(sqlite3_stmt *st, int col, int64_t id, char **out, struct buf *err);

#endif
