/* test_ledger_query.c - the ledger module's one query loop (ledger_internal.h): every row read,
 * an early stop, no row, a callback's own error, a failing step's message naming the database,
 * and the statement finalized on every path (sqlite3_close refuses a database with live ones). */
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
