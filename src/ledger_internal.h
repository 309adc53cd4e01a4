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

#endif
