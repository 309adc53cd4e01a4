/*
 * ledger_internal.h - shared by the ledger module's files (ledger.c: open, migrations, the apply
 * lock, price book, the statement helpers; ledger_store.c: recorded plans and inventory runs, their
 * compressed documents, prune; ledger_apply.c: the apply ledger; ledger_report.c: the finance
 * report's reads; ledger_bench.c: bench results). Not a public header: nothing outside ledger*.c
 * includes it (but the unit test of the query loop), so SQL stays inside the ledger module.
 *
 * Calls go one way: every other ledger file calls ledger.c (ledger_apply.c and ledger_report.c
 * also ledger_store.c, for plans rows); ledger.c calls none of them.
 */
#ifndef EBSMIGRATE_LEDGER_INTERNAL_H
#define EBSMIGRATE_LEDGER_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
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
/* Ends the transaction the caller began: COMMIT when rc is 0 (a failing COMMIT appends WHAT's
 * error and returns its code), else ROLLBACK; returns rc or that code. */
int ledger_end_tx(struct ledger *l, int rc, const char *what, struct buf *err);
int ledger_prepare(struct ledger *l, const char *sql, sqlite3_stmt **st, struct buf *err);
/* Statement parameters as data: a list of typed values ended by a zeroed entry, bound in order
 * (entry i to parameter i + 1) by ledger_bind_params. Build one with LEDGER_PARAMS(LP_TEXT(s),
 * LP_INT64(n), ...); NULL is the empty list. The values are borrowed: TEXT and TIME are copied
 * by SQLite when bound, DOC and BLOB are not (they must outlive the statement's last step). */
enum ledger_param_kind {
	LEDGER_PARAM_END,   /* ends the list */
	LEDGER_PARAM_SKIP,  /* a number the statement does not use: left unbound */
	LEDGER_PARAM_NULL,
	LEDGER_PARAM_INT64,
	LEDGER_PARAM_ID,    /* an int64, NULL when not positive (an optional reference or size) */
	LEDGER_PARAM_REAL,  /* a double, NULL when NAN (not reported) */
	LEDGER_PARAM_TEXT,  /* a string or NULL */
	LEDGER_PARAM_TIME,  /* a time_t as RFC 3339 text, NULL when 0 */
	LEDGER_PARAM_DOC,   /* a whole document (plans, inventories: 100+ MB) or NULL, not copied */
	LEDGER_PARAM_BLOB,  /* i bytes at p, not copied */
	LEDGER_PARAM_LIST,  /* the parameters of another list (p), in its place: a part several statements share */
};
struct ledger_param {
	enum ledger_param_kind kind;
	int64_t i; /* INT64, ID, TIME; BLOB: the length */
	double r;  /* REAL */
	const void *p; /* TEXT, DOC, BLOB */
};
#define LP_SKIP {LEDGER_PARAM_SKIP, 0, 0, NULL}
#define LP_NULL {LEDGER_PARAM_NULL, 0, 0, NULL}
#define LP_INT64(v) {LEDGER_PARAM_INT64, (int64_t)(v), 0, NULL}
#define LP_ID(v) {LEDGER_PARAM_ID, (int64_t)(v), 0, NULL}
#define LP_REAL(v) {LEDGER_PARAM_REAL, 0, (v), NULL}
#define LP_TEXT(s) {LEDGER_PARAM_TEXT, 0, 0, (s)}
#define LP_TIME(t) {LEDGER_PARAM_TIME, (int64_t)(t), 0, NULL}
#define LP_DOC(s) {LEDGER_PARAM_DOC, 0, 0, (s)}
#define LP_BLOB(p, n) {LEDGER_PARAM_BLOB, (int64_t)(n), 0, (p)}
#define LP_LIST(params) {LEDGER_PARAM_LIST, 0, 0, (params)}
#define LEDGER_PARAMS(...) ((const struct ledger_param[]){__VA_ARGS__, {LEDGER_PARAM_END, 0, 0, NULL}})
/* Binds params to st from parameter first on (an index past the statement's last is ignored);
 * returns the number after the last one bound. */
int ledger_bind_params(sqlite3_stmt *st, int first, const struct ledger_param *params);
/* ledger_prepare, then ledger_bind_params from parameter 1. */
int ledger_prepare_bound(struct ledger *l, const char *sql, const struct ledger_param *params, sqlite3_stmt **st,
			 struct buf *err);
/* A statement that returns no rows, prepared, bound and run (ledger_step_done). */
int ledger_run(struct ledger *l, const char *sql, const struct ledger_param *params, const char *what,
	       struct buf *err);
/* ledger_run for an INSERT: *id_out (when not NULL) = the new row's id. */
int ledger_insert(struct ledger *l, const char *sql, const struct ledger_param *params, int64_t *id_out,
		  const char *what, struct buf *err);

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
/* ledger_row and ledger_rows for a query prepared and bound here (sql, params). */
int ledger_query_row(struct ledger *l, const char *sql, const struct ledger_param *params, ledger_row_fn on_row,
		     void *ctx, const char *what, struct buf *err);
int ledger_query_rows(struct ledger *l, const char *sql, const struct ledger_param *params, ledger_row_fn on_row,
		      void *ctx, const char *what, struct buf *err);
/* An array the row readers of a list query append to: items of size bytes, each released by
 * release when the list is, or else by freeing its TEXT columns (cols), or not at all. */
/* The typed column reader: column i of a row goes to the field at cols[i].offset of a struct, as
 * its kind says (TEXT: a copy or NULL; TIME: an RFC 3339 text parsed, 0 when NULL or bad). */
/* LEDGER_REAL: a double, NAN when the column is NULL. */
/* LEDGER_APPLY_STATE, LEDGER_MODIFY_METHOD: a name read into enum apply_state / enum modify_method
 * (apply_state.h): the tables' CHECK constraints admit only those names, so states and methods
 * leave the ledger typed, never as strings. */
enum ledger_column_kind {
	LEDGER_INT64,
	LEDGER_INT,
	LEDGER_TEXT,
	LEDGER_TIME,
	LEDGER_REAL,
	LEDGER_APPLY_STATE,
	LEDGER_MODIFY_METHOD,
};
struct ledger_column {
	enum ledger_column_kind kind;
	size_t offset;
};
#define LEDGER_COLUMN(kind, type, field) {LEDGER_##kind, offsetof(type, field)}
void ledger_read_columns(sqlite3_stmt *st, void *item, const struct ledger_column *cols, size_t n);
/* How many rows a column table (an array) has. */
#define LEDGER_N_COLUMNS(cols) (sizeof(cols) / sizeof *(cols))
time_t ledger_column_time(sqlite3_stmt *st, int i);
/* A REAL column, NAN when NULL. */
double ledger_column_real(sqlite3_stmt *st, int i);
/* ledger_query_row into item, read by the column table cols (n rows): EM_ENOTFOUND without a row. */
int ledger_query_columns(struct ledger *l, const char *sql, const struct ledger_param *params, void *item,
			 const struct ledger_column *cols, size_t n, const char *what, struct buf *err);

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
/* A query into list (on_row appends, ctx = list; NULL: ledger_read_listed); on an error the list
 * is released, so it is empty. */
int ledger_query_list(struct ledger *l, const char *sql, const struct ledger_param *params, ledger_row_fn on_row,
		      struct ledger_list *list, const char *what, struct buf *err);
/* Defines the two public functions of a list read whole by its column table (a query without
 * parameters): int NAME(struct ledger *, TYPE **out, size_t *n, struct buf *err) and
 * void FREE(TYPE *, size_t n). On an error NAME's list is empty. */
#define LEDGER_DEFINE_LIST(NAME, FREE, TYPE, COLS, SQL, WHAT)                                                     \
	void FREE(TYPE *items, size_t n)                                                                           \
	{                                                                                                          \
		ledger_items_free(items, n, (struct ledger_list)LEDGER_LIST_COLUMNS(TYPE, COLS));                  \
	}                                                                                                          \
	int NAME(struct ledger *l, TYPE **out, size_t *n, struct buf *err)                                         \
	{                                                                                                          \
		struct ledger_list list = LEDGER_LIST_COLUMNS(TYPE, COLS);                                         \
		int rc = ledger_query_list(l, SQL, NULL, NULL, &list, WHAT, err);                                  \
		*out = list.items;                                                                                 \
		*n = list.n;                                                                                       \
		return rc;                                                                                         \
	}
/* Row reader: column 0 as an int64_t into *(int64_t *)out. */
int ledger_read_int64(sqlite3_stmt *st, void *out, struct buf *err);
/* Row reader: column 0 as one more int64_t of a ledger_list. */
int ledger_read_int64_into_list(sqlite3_stmt *st, void *list, struct buf *err);
/* A statement that returns no rows (INSERT, UPDATE, DELETE): one step that must finish. */
int ledger_step_done(struct ledger *l, sqlite3_stmt *st, const char *what, struct buf *err);
/* Binds a string or NULL (copied: the caller's string may not outlive the step). */
void ledger_bind_text(sqlite3_stmt *st, int i, const char *s);
char *ledger_column_dup(sqlite3_stmt *st, int i);
/* ledger_store.c: the document of a plans row read by st: columns col, col + 1, col + 2 are
 * plan_json, plan_zlib, plan_size. *out is the caller's. An error (a damaged compressed copy)
 * names plan id. */
int ledger_plan_document(sqlite3_stmt *st, int col, int64_t id, char **out, struct buf *err);
/* ledger.c: the pid holding the apply lock (an flock on the database file) according to
 * /proc/locks, or 0 when none does (or it cannot be told). */
long ledger_apply_lock_holder(struct ledger *l);

#endif
