/* test_ledger_query.c - the ledger module's one query loop (ledger_internal.h): every row read,
 * an early stop, no row, a callback's own error, a failing step's message naming the database,
 * and the statement finalized on every path (sqlite3_close refuses a database with live ones);
 * the typed parameter lists (each kind stored as SQLite sees it, a nested list, a skipped
 * number), a row read by a column table, and a transaction ended by ledger_end_tx. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "../../src/ledger_internal.h"
#include "tap.h"

static char tmpdir[] = "/tmp/em-ledger-query-XXXXXX";

static sqlite3_stmt *prepare(struct ledger *l, const char *sql)
{
	sqlite3_stmt *st = NULL;
	struct buf err = BUF_INIT;
	if (ledger_prepare(l, sql, &st, &err) != 0)
		fprintf(stderr, "# %s\n", err.s);
	buf_release(&err);
	return st;
}

/* Stops (1) at the value in *ctx, else appends it to the list after the limit. */
struct stop_at {
	struct ledger_list list;
	int64_t stop;
};

static int read_until(sqlite3_stmt *st, void *ctx, struct buf *err)
{
	(void)err;
	struct stop_at *s = ctx;
	int64_t v = sqlite3_column_int64(st, 0);
	if (v == s->stop)
		return 1;
	*(int64_t *)ledger_list_add(&s->list) = v;
	return 0;
}

/* One row of table p as the column table PARAM_COLUMNS reads it. */
struct param_row {
	int64_t i, id;
	double r;
	char *t, *tm, *d, *b, *types;
};

static const struct ledger_column PARAM_COLUMNS[] = {
	LEDGER_COLUMN(INT64, struct param_row, i),
	LEDGER_COLUMN(INT64, struct param_row, id),
	LEDGER_COLUMN(REAL, struct param_row, r),
	LEDGER_COLUMN(TEXT, struct param_row, t),
	LEDGER_COLUMN(TEXT, struct param_row, tm),
	LEDGER_COLUMN(TEXT, struct param_row, d),
	LEDGER_COLUMN(TEXT, struct param_row, b),
	LEDGER_COLUMN(TEXT, struct param_row, types),
};

static void read_param_row(struct ledger *l, int64_t rowid, struct param_row *row, struct buf *err)
{
	memset(row, 0, sizeof *row);
	CHECK_I64(ledger_query_columns(l,
				       "SELECT i, id, r, t, tm, d, hex(b), typeof(id) || ',' || typeof(r) || ',' || "
				       "typeof(t) || ',' || typeof(tm) || ',' || typeof(d) || ',' || typeof(b) FROM p WHERE rowid = ?",
				       LEDGER_PARAMS(LP_INT64(rowid)), row, PARAM_COLUMNS, LEDGER_N_COLUMNS(PARAM_COLUMNS),
				       "cannot read", err),
		  0);
}

static void param_row_release(struct param_row *row)
{
	EM_FREE_ALL(row->t, row->tm, row->d, row->b, row->types);
}

static int64_t count_rows(struct ledger *l, const char *table_sql, struct buf *err)
{
	int64_t n = -1;
	CHECK_I64(ledger_query_row(l, table_sql, NULL, ledger_read_int64, &n, "cannot count", err), 0);
	return n;
}

static void test_params(struct ledger *l, struct buf *err)
{
	CHECK_I64(ledger_run(l, "CREATE TABLE p (i INTEGER, id INTEGER, r REAL, t TEXT, tm TEXT, d TEXT, b BLOB)", NULL,
			     "cannot create", err),
		  0);
	/* the "empty" value of each kind: NULL where the kind says so */
	int64_t id = 0;
	CHECK_I64(ledger_insert(l, "INSERT INTO p VALUES (?, ?, ?, ?, ?, ?, ?)",
				LEDGER_PARAMS(LP_INT64(-5), LP_ID(0), LP_REAL(NAN), LP_TEXT(NULL), LP_TIME(0), LP_DOC(NULL),
					      LP_BLOB(NULL, 0)),
				&id, "cannot insert", err),
		  0);
	CHECK_I64(id, 1);
	/* values; the last three through a nested list */
	const struct ledger_param *tail = LEDGER_PARAMS(LP_DOC("{\"a\":1}"), LP_BLOB("\x01\xff", 2));
	CHECK_I64(ledger_insert(l, "INSERT INTO p VALUES (?, ?, ?, ?, ?, ?, ?)",
				LEDGER_PARAMS(LP_INT64(INT64_MAX), LP_ID(7), LP_REAL(1.5), LP_TEXT("t\x27x"),
					      LP_TIME(86400), LP_LIST(tail)),
				&id, "cannot insert", err),
		  0);
	CHECK_I64(id, 2);
	CHECK_STR(err->s, "");

	struct param_row row;
	read_param_row(l, 1, &row, err);
	CHECK_I64(row.i, -5);
	CHECK(isnan(row.r));
	CHECK(!row.t && !row.tm && !row.d);
	CHECK_STR(row.b, ""); /* hex(NULL); typeof says NULL */
	CHECK_STR(row.types, "null,null,null,null,null,null");
	param_row_release(&row);
	read_param_row(l, 2, &row, err);
	CHECK_I64(row.i, INT64_MAX);
	CHECK_I64(row.id, 7);
	CHECK(row.r == 1.5);
	CHECK_STR(row.t, "t'x");
	CHECK_STR(row.tm, "1970-01-02T00:00:00Z");
	CHECK_STR(row.d, "{\"a\":1}");
	CHECK_STR(row.b, "01FF");
	CHECK_STR(row.types, "integer,real,text,text,text,blob");
	param_row_release(&row);
	CHECK_I64(ledger_query_columns(l, "SELECT i FROM p WHERE rowid = 3", NULL, &row, PARAM_COLUMNS, 1, "cannot read",
				       err),
		  EM_ENOTFOUND);

	/* a skipped number stays unbound (NULL); a parameter past the statement's last is ignored */
	int64_t v = -1;
	CHECK_I64(ledger_query_row(l, "SELECT coalesce(?1, 100) + ?2", LEDGER_PARAMS(LP_SKIP, LP_INT64(9), LP_INT64(5)),
				   ledger_read_int64, &v, "cannot read", err),
		  0);
	CHECK_I64(v, 109);

	/* a list read by its column table (no row reader given) */
	struct ledger_list list = LEDGER_LIST_COLUMNS(struct param_row, PARAM_COLUMNS);
	CHECK_I64(ledger_query_list(l, "SELECT i, id FROM p WHERE i > ? ORDER BY i", LEDGER_PARAMS(LP_INT64(-10)), NULL,
				    &list, "cannot list", err),
		  0);
	CHECK_I64(list.n, 2);
	CHECK_I64(((struct param_row *)list.items)[1].id, 7);
	ledger_list_release(&list);

	/* ledger_end_tx: rc 0 commits, an error rolls back and is returned */
	CHECK_I64(ledger_exec(l, "BEGIN IMMEDIATE", "cannot begin", err), 0);
	int rc = ledger_run(l, "DELETE FROM p WHERE rowid = 1", NULL, "cannot delete", err);
	CHECK_I64(ledger_end_tx(l, rc ? rc : EM_EINPUT, "cannot commit", err), EM_EINPUT);
	CHECK_I64(count_rows(l, "SELECT count(*) FROM p", err), 2);
	CHECK_I64(ledger_exec(l, "BEGIN IMMEDIATE", "cannot begin", err), 0);
	rc = ledger_run(l, "DELETE FROM p WHERE rowid = 1", NULL, "cannot delete", err);
	CHECK_I64(ledger_end_tx(l, rc, "cannot commit", err), 0);
	CHECK_I64(count_rows(l, "SELECT count(*) FROM p", err), 1);
	CHECK_I64(sqlite3_get_autocommit(l->db), 1);
	CHECK_STR(err->s, "");
}

static int fail_on_row(sqlite3_stmt *st, void *ctx, struct buf *err)
{
	(void)ctx;
	return em_err(err, EM_EINPUT, "row %lld is bad", (long long)sqlite3_column_int64(st, 0));
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return tap_skip_all("no temp directory");
	char path[4096];
	snprintf(path, sizeof path, "%s/q.db", tmpdir);
	struct ledger *l = NULL;
	struct buf err = BUF_INIT;
	if (ledger_open(&l, path, &err) != 0) {
		fprintf(stderr, "# %s\n", err.s);
		CHECK(!"ledger_open");
		return tap_done();
	}

	/* writes: one step that must finish */
	CHECK_I64(ledger_step_done(l, prepare(l, "CREATE TABLE t (x INTEGER NOT NULL UNIQUE)"), "cannot create", &err),
		  0);
	for (int i = 1; i <= 40; i++) {
		sqlite3_stmt *st = prepare(l, "INSERT INTO t (x) VALUES (?)");
		sqlite3_bind_int64(st, 1, i * 10);
		CHECK_I64(ledger_step_done(l, st, "cannot insert", &err), 0);
	}
	CHECK_STR(err.s, "");

	/* every row, in order, into a list that grows past its first allocation */
	struct ledger_list list = LEDGER_LIST_INIT(int64_t, NULL);
	CHECK_I64(ledger_rows(l, prepare(l, "SELECT x FROM t ORDER BY x"), ledger_read_int64_into_list, &list,
			      "cannot list", &err),
		  0);
	CHECK_I64(list.n, 40);
	int64_t *xs = list.items;
	CHECK_I64(xs[0], 10);
	CHECK_I64(xs[39], 400);
	free(list.items);

	/* a positive return stops the loop and is the result */
	struct stop_at s = {LEDGER_LIST_INIT(int64_t, NULL), 40};
	CHECK_I64(ledger_rows(l, prepare(l, "SELECT x FROM t ORDER BY x"), read_until, &s, "cannot list", &err), 1);
	CHECK_I64(s.list.n, 3);
	free(s.list.items);

	/* one row; none is EM_ENOTFOUND without a message */
	int64_t one = 0;
	sqlite3_stmt *st = prepare(l, "SELECT x FROM t WHERE x = ?");
	sqlite3_bind_int64(st, 1, 250);
	CHECK_I64(ledger_row(l, st, ledger_read_int64, &one, "cannot read", &err), 0);
	CHECK_I64(one, 250);
	st = prepare(l, "SELECT x FROM t WHERE x = ?");
	sqlite3_bind_int64(st, 1, 7);
	CHECK_I64(ledger_row(l, st, ledger_read_int64, &one, "cannot read", &err), EM_ENOTFOUND);
	CHECK_STR(err.s, "");

	/* a callback's error stops the loop with its own message only */
	CHECK_I64(ledger_rows(l, prepare(l, "SELECT x FROM t ORDER BY x"), fail_on_row, NULL, "cannot list", &err),
		  EM_EINPUT);
	CHECK_STR(err.s, "row 10 is bad");
	buf_reset(&err);

	/* a failing step: "database 'PATH': WHAT: sqlite's message" */
	st = prepare(l, "INSERT INTO t (x) VALUES (10)");
	CHECK_I64(ledger_step_done(l, st, "cannot insert", &err), EM_EIO);
	struct buf want = BUF_INIT;
	buf_addf(&want, "database '%s': cannot insert: UNIQUE constraint failed: t.x", path);
	CHECK_STR(err.s, want.s);
	buf_reset(&err);
	CHECK_I64(ledger_rows(l, prepare(l, "SELECT x, abs(x - 9223372036854775807 - 11) FROM t"), NULL, NULL,
			      "cannot list", &err),
		  EM_EIO);
	buf_reset(&want);
	buf_addf(&want, "database '%s': cannot list: integer overflow", path);
	CHECK_STR(err.s, want.s);

	buf_reset(&err);
	test_params(l, &err);

	/* every statement was finalized: the connection closes cleanly */
	CHECK_I64(sqlite3_close(l->db), SQLITE_OK);
	l->db = NULL;
	ledger_close(l);
	buf_release(&want);
	buf_release(&err);
	unlink(path);
	char wal[4200];
	snprintf(wal, sizeof wal, "%s-wal", path);
	unlink(wal);
	snprintf(wal, sizeof wal, "%s-shm", path);
	unlink(wal);
	rmdir(tmpdir);
	return tap_done();
}
