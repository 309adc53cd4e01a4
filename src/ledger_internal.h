/*
 * ledger_internal.h - shared by the ledger module's files (ledger.c: open, migrations, price
 * book, plans, inventory runs; ledger_apply.c: the apply ledger; ledger_report.c: the finance
 * report's reads). Not a public header: nothing outside ledger*.c includes it, so SQL stays
 * inside the ledger module.
 */
#ifndef EBSMIGRATE_LEDGER_INTERNAL_H
#define EBSMIGRATE_LEDGER_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <time.h>

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
/* The query loop, once for the module. st (prepared and bound) is always finalized here.
 * on_row reads one row's columns; a nonzero return stops the loop and is returned: negative, an
 * EM_E* error with its message in err; positive, "found what I looked for". A failing step
 * appends "database 'PATH': WHAT: sqlite's message" (the EM_E* code of ledger_db_err). NULL
 * on_row: rows are only counted as success. */
typedef int (*ledger_row_fn)(sqlite3_stmt *st, void *ctx, struct buf *err);
/* Every row, then 0. */
int ledger_rows(struct ledger *l, sqlite3_stmt *st, ledger_row_fn on_row, void *ctx, const char *what,
		struct buf *err);
/* ledger_rows for a statement the caller keeps (prepared once, bound again for each use): the
 * same loop, then st is reset (its bindings kept), not finalized. */
int ledger_rows_kept(struct ledger *l, sqlite3_stmt *st, ledger_row_fn on_row, void *ctx, const char *what,
		     struct buf *err);
/* At most one row: on_row's result when there is one, EM_ENOTFOUND (no message: the caller
 * names what is missing) when there is none. */
int ledger_row(struct ledger *l, sqlite3_stmt *st, ledger_row_fn on_row, void *ctx, const char *what,
	       struct buf *err);
/* An array the row readers of a list query append to: items of size bytes, each released by
 * release when the list is, or else by freeing its TEXT columns (cols), or not at all. */
/* The typed column reader: column i of a row goes to the field at cols[i].offset of a struct, as
 * its kind says (TEXT: a copy or NULL; TIME: an RFC 3339 text parsed, 0 when NULL or bad). */
/* LEDGER_SKIP: a column the caller reads itself after ledger_read_columns (e.g. a name kept as an enum) */
enum ledger_column_kind { LEDGER_INT64, LEDGER_INT, LEDGER_TEXT, LEDGER_TIME, LEDGER_SKIP };
struct ledger_column {
	enum ledger_column_kind kind;
	size_t offset;
};
#define LEDGER_COLUMN(kind, type, field) {LEDGER_##kind, offsetof(type, field)}
#define LEDGER_COLUMN_SKIP {LEDGER_SKIP, 0}
void ledger_read_columns(sqlite3_stmt *st, void *item, const struct ledger_column *cols, size_t n);
time_t ledger_column_time(sqlite3_stmt *st, int i);

struct ledger_list {
	void *items;
	size_t n, alloc, size;
	void (*release)(void *item);
	const struct ledger_column *cols; /* for ledger_read_listed */
	size_t n_cols;
};
#define LEDGER_LIST_INIT(type, release) {NULL, 0, 0, sizeof(type), (release), NULL, 0}
/* A list whose rows ledger_read_listed reads with the column table cols (an array). */
#define LEDGER_LIST_COLUMNS(type, cols) {NULL, 0, 0, sizeof(type), NULL, (cols), sizeof(cols) / sizeof *(cols)}
/* Row reader: one more item of list (a ledger_list with columns), read by its column table. */
int ledger_read_listed(sqlite3_stmt *st, void *list, struct buf *err);
/* A new zeroed item at the end of list. */
void *ledger_list_add(struct ledger_list *list);
/* Releases every item, frees the array and leaves list empty. */
void ledger_list_release(struct ledger_list *list);
/* Releases n items as a list shaped like shape (size, release or cols) would (the public *_free). */
void ledger_items_free(void *items, size_t n, struct ledger_list shape);
/* A query without parameters into list (on_row appends, ctx = list); on an error the list is
 * released, so it is empty. */
int ledger_query_list(struct ledger *l, const char *sql, ledger_row_fn on_row, struct ledger_list *list,
		      const char *what, struct buf *err);
/* Row reader: column 0 as an int64_t into *(int64_t *)out. */
int ledger_read_int64(sqlite3_stmt *st, void *out, struct buf *err);
/* Row reader: column 0 as one more int64_t of a ledger_list. */
int ledger_read_int64_into_list(sqlite3_stmt *st, void *list, struct buf *err);
/* A statement that returns no rows (INSERT, UPDATE, DELETE): one step that must finish. */
int ledger_step_done(struct ledger *l, sqlite3_stmt *st, const char *what, struct buf *err);
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
