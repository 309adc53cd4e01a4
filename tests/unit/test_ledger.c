/* test_ledger.c - the database on temp files: modes, WAL, migrations, price book versions, plans. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/embedded.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/ledger_apply.h"
#include "tap.h"

static char tmpdir[] = "/tmp/em-ledger-XXXXXX";

/* A path under the temp directory; the last 8 results stay valid. */
static const char *tmp_path(const char *rel)
{
	static char paths[8][4096];
	static int next;
	char *path = paths[next++ % 8];
	snprintf(path, sizeof paths[0], "%s/%s", tmpdir, rel);
	return path;
}

static int mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

static int embedded_migrations(void)
{
	int n = 0;
	for (const struct embedded_file *f = embedded_files; f->path; f++)
		if (strncmp(f->path, "migrations/", 11) == 0)
			n++;
	return n;
}

/* One value from a SQL query run on a separate raw connection; -1 on failure. */
static int64_t sql_int(const char *db_path, const char *sql)
{
	sqlite3 *db;
	int64_t v = -1;
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW)
				v = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
	}
	sqlite3_close(db);
	return v;
}

static char *sql_text(const char *db_path, const char *sql)
{
	sqlite3 *db;
	char *v = NULL;
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
				v = xstrdup((const char *)sqlite3_column_text(st, 0));
			sqlite3_finalize(st);
		}
	}
	sqlite3_close(db);
	return v;
}

/* Every location, name and price of a equals b's, to the last price unit. */
static void check_same_book(const struct pricebook *a, const struct pricebook *b)
{
	CHECK_STR(a->source, b->source);
	CHECK_STR(a->effective_date, b->effective_date);
	CHECK_I64(a->n, b->n);
	int mismatches = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct price_location *x = &a->locs[i], *y = pricebook_find(b, x->code);
		if (!y || !x->name || !y->name || strcmp(x->name, y->name) != 0) {
			mismatches++;
			continue;
		}
		for (int item = 0; item < PRICE_ITEMS; item++) {
			price_t px = -1, py = -1;
			int kx = pricebook_item_get(x, item, &px), ky = pricebook_item_get(y, item, &py);
			if (kx != ky || (kx && px != py))
				mismatches++;
		}
		if (x->storage_known != y->storage_known || x->has_io2_iops != y->has_io2_iops ||
		    x->has_gp3_iops != y->has_gp3_iops || x->has_gp3_throughput != y->has_gp3_throughput ||
		    x->has_io1_iops != y->has_io1_iops)
			mismatches++;
	}
	CHECK_I64(mismatches, 0);
}

static void test_open_modes_and_wal(void)
{
	const char *db = tmp_path("state/ebsmigrate/ebsmigrate.db");
	struct ledger *l = NULL;
	struct buf err = BUF_INIT;
	mode_t old = umask(0); /* a permissive umask must not widen the modes */
	int rc = ledger_open(&l, db, &err);
	umask(old);
	CHECK_I64(rc, 0);
	CHECK_STR(err.s, "");
	CHECK(l != NULL);
	if (!l)
		return;
	CHECK_I64(mode_of(db), 0600);
	CHECK_I64(mode_of(tmp_path("state/ebsmigrate")), 0700);
	CHECK_I64(mode_of(tmp_path("state")), 0700);
	CHECK_I64(ledger_schema_version(l), embedded_migrations());
	CHECK(embedded_migrations() >= 1);

	struct pricebook pb;
	CHECK_I64(ledger_pricebook_current(l, &pb, &err), EM_ENOTFOUND);
	CHECK(strstr(err.s, "holds no price book") != NULL);
	buf_reset(&err);
	CHECK_I64(ledger_pricebook_for_planning(l, &pb, &err), 0); /* writes: the -wal file exists now */
	pricebook_release(&pb);

	char *mode = sql_text(db, "PRAGMA journal_mode");
	CHECK_STR(mode, "wal");
	free(mode);
	struct buf wal = BUF_INIT;
	buf_addf(&wal, "%s-wal", db);
	CHECK_I64(mode_of(wal.s), 0600);
	buf_release(&wal);
	CHECK_I64(sql_int(db, "PRAGMA user_version"), embedded_migrations());
	CHECK_I64(sql_int(db, "SELECT count(*) FROM meta WHERE key = 'created_by'"), 1);
	ledger_close(l);

	/* opening again migrates nothing and changes nothing */
	int64_t objects = sql_int(db, "SELECT count(*) FROM sqlite_master");
	rc = ledger_open(&l, db, &err);
	CHECK_I64(rc, 0);
	CHECK_STR(err.s, "");
	if (!l)
		return;
	CHECK_I64(ledger_schema_version(l), embedded_migrations());
	CHECK_I64(sql_int(db, "SELECT count(*) FROM sqlite_master"), objects);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM price_versions"), 1);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM meta"), 1);
	ledger_close(l);
	buf_release(&err);
}

static void test_pricebook_versions(void)
{
	const char *db = tmp_path("books.db");
	struct ledger *l = NULL;
	struct buf err = BUF_INIT;
	if (ledger_open(&l, db, &err) != 0) {
		CHECK(!"ledger_open");
		return;
	}
	struct pricebook bundled, got;
	pricebook_init(&bundled);
	CHECK_I64(pricebook_load_bundled(&bundled, &err), 0);

	/* empty database: the bundled book is stored and returned */
	CHECK_I64(ledger_pricebook_for_planning(l, &got, &err), 0);
	CHECK_STR(err.s, "");
	CHECK_I64(got.version, 1);
	check_same_book(&got, &bundled);
	pricebook_release(&got);
	CHECK_I64(ledger_pricebook_current(l, &got, &err), 0);
	CHECK_I64(got.version, 1);
	check_same_book(&got, &bundled); /* the round trip through SQL, to the last price unit */
	CHECK(got.fetched_at == NULL);
	pricebook_release(&got);

	/* asking again stores nothing new */
	CHECK_I64(ledger_pricebook_for_planning(l, &got, &err), 0);
	CHECK_I64(got.version, 1);
	pricebook_release(&got);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM price_versions"), 1);
	/* per Region 6 storage + gp3 IOPS + gp3 throughput; io1 IOPS in 4 Regions; 3 io2 tiers */
	CHECK_I64(sql_int(db, "SELECT count(*) FROM prices WHERE version_id = 1"), 21 * 8 + 4 + 3);

	/* an explicit store makes a new current version */
	bundled.fetched_at = xstrdup("2026-09-02T10:00:00Z");
	CHECK_I64(ledger_pricebook_store(l, &bundled, &err), 0);
	CHECK_I64(bundled.version, 2);
	CHECK_I64(ledger_pricebook_current(l, &got, &err), 0);
	CHECK_I64(got.version, 2);
	CHECK_STR(got.fetched_at, "2026-09-02T10:00:00Z");
	check_same_book(&got, &bundled);
	pricebook_release(&got);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM price_versions WHERE is_current = 1"), 1);

	/* a failed store (a CHECK constraint on the last row) leaves version 2 current */
	struct pricebook broken;
	pricebook_init(&broken);
	broken.source = xstrdup("pricing refresh");
	broken.effective_date = xstrdup("2026-10-01");
	pricebook_item_set(pricebook_location(&broken, "us-east-1"), 0, 1000000000);
	pricebook_item_set(pricebook_location(&broken, "zz-test-1"), 1, -5);
	CHECK_I64(ledger_pricebook_store(l, &broken, &err), EM_EIO);
	CHECK(strstr(err.s, "CHECK constraint failed") != NULL);
	CHECK(strstr(err.s, "zz-test-1") != NULL);
	CHECK_I64(broken.version, 0);
	buf_reset(&err);
	CHECK_I64(ledger_pricebook_current(l, &got, &err), 0);
	CHECK_I64(got.version, 2);
	pricebook_release(&got);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM price_versions"), 2);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM prices WHERE location = 'us-east-1' AND version_id > 2"), 0);
	free(broken.effective_date);
	broken.effective_date = NULL;
	CHECK_I64(ledger_pricebook_store(l, &broken, &err), EM_EINPUT);
	CHECK(strstr(err.s, "no effective date") != NULL);
	buf_reset(&err);
	pricebook_release(&broken);

	/* an older bundled version is replaced by this binary's bundle */
	struct pricebook old;
	pricebook_init(&old);
	old.source = xstrdup(PRICEBOOK_SOURCE_BUNDLED);
	old.effective_date = xstrdup("2020-01-01");
	pricebook_item_set(pricebook_location(&old, "us-east-1"), 0, 1000000000);
	CHECK_I64(ledger_pricebook_store(l, &old, &err), 0);
	CHECK_I64(old.version, 3);
	CHECK_I64(ledger_pricebook_for_planning(l, &got, &err), 0);
	CHECK_I64(got.version, 4);
	CHECK_STR(got.effective_date, "2026-09-01");
	check_same_book(&got, &bundled);
	pricebook_release(&got);

	/* ... but a refreshed book is kept even when older than the bundle */
	free(old.source);
	old.source = xstrdup("pricing refresh");
	CHECK_I64(ledger_pricebook_store(l, &old, &err), 0);
	CHECK_I64(old.version, 5);
	CHECK_I64(ledger_pricebook_for_planning(l, &got, &err), 0);
	CHECK_I64(got.version, 5);
	CHECK_STR(got.source, "pricing refresh");
	CHECK_STR(got.effective_date, "2020-01-01");
	CHECK_I64(got.n, 1);
	pricebook_release(&got);
	pricebook_release(&old);

	/* plans */
	int64_t id = 0;
	CHECK_I64(ledger_plan_record(l, "2026-11-01T00:00:00Z", "keep-performance", 5, 12, 34560000, "{\"plan\":1}", &id,
				     &err),
		  0);
	CHECK_STR(err.s, "");
	CHECK_I64(id, 1);
	CHECK_I64(ledger_plan_record(l, "2026-11-01T00:00:00Z", "cheapest", 0, 0, 0, "{}", &id, &err), 0);
	CHECK_I64(id, 2);
	CHECK_I64(sql_int(db, "SELECT savings_monthly_micro FROM plans WHERE id = 1"), 34560000);
	CHECK_I64(sql_int(db, "SELECT price_version IS NULL FROM plans WHERE id = 2"), 1);
	/* foreign keys are enforced */
	CHECK_I64(ledger_plan_record(l, "2026-11-01T00:00:00Z", "cheapest", 999, 0, 0, "{}", &id, &err), EM_EIO);
	CHECK(strstr(err.s, "FOREIGN KEY") != NULL);
	buf_reset(&err);

	pricebook_release(&bundled);
	ledger_close(l);
	buf_release(&err);
}

static void test_refuse_newer_and_garbage(void)
{
	const char *db = tmp_path("future.db");
	sqlite3 *raw;
	CHECK(sqlite3_open(db, &raw) == SQLITE_OK);
	CHECK(sqlite3_exec(raw, "CREATE TABLE future (x); PRAGMA user_version = 999", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(raw);

	struct ledger *l = (struct ledger *)1;
	struct buf err = BUF_INIT;
	CHECK_I64(ledger_open(&l, db, &err), EM_EUNSUPPORTED);
	CHECK(l == NULL);
	struct buf want = BUF_INIT;
	buf_addf(&want, "database '%s' has schema version 999, newer than this ebsmigrate knows (%d): upgrade ebsmigrate to use it",
		 db, embedded_migrations());
	CHECK_STR(err.s, want.s);
	CHECK_I64(sql_int(db, "PRAGMA user_version"), 999); /* untouched */
	buf_release(&want);
	buf_reset(&err);

	const char *junk = tmp_path("junk.db");
	FILE *f = fopen(junk, "w");
	if (f) {
		fputs("this is not a database, just some text that is long enough to look like a header....", f);
		fclose(f);
	}
	CHECK_I64(ledger_open(&l, junk, &err), EM_EIO);
	CHECK(l == NULL);
	CHECK(strstr(err.s, junk) != NULL);
	buf_reset(&err);

	CHECK_I64(ledger_open(&l, tmp_path("junk.db/below.db"), &err), EM_EIO); /* parent is a file */
	CHECK(l == NULL);
	buf_release(&err);
}


/* The whole content of a file (NULL when unreadable); *len set. */
static char *slurp(const char *path, size_t *len)
{
	struct buf b = BUF_INIT;
	struct buf err = BUF_INIT;
	int rc = em_read_file(path, &b, &err);
	*len = b.len;
	char *s = rc == 0 ? buf_detach(&b) : NULL;
	buf_release(&b);
	buf_release(&err);
	return s;
}

/* Issue 12 item 10: a newer database is refused before anything writes to it (the WAL switch
 * used to rewrite the header and create -wal/-shm first). */
static void test_newer_left_untouched(void)
{
	const char *db = tmp_path("future2.db");
	sqlite3 *raw;
	CHECK(sqlite3_open(db, &raw) == SQLITE_OK);
	CHECK(sqlite3_exec(raw, "PRAGMA journal_mode = DELETE; CREATE TABLE future (x); INSERT INTO future VALUES (1); "
			   "PRAGMA user_version = 999", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(raw);
	size_t before_len = 0, after_len = 0;
	char *before = slurp(db, &before_len);
	struct ledger *l = NULL;
	struct buf err = BUF_INIT;
	CHECK_I64(ledger_open(&l, db, &err), EM_EUNSUPPORTED);
	CHECK(strstr(err.s, "schema version 999, newer than this ebsmigrate knows") != NULL);
	char *after = slurp(db, &after_len);
	CHECK(before && after && before_len == after_len && memcmp(before, after, before_len) == 0);
	CHECK(before && before_len > 19 && before[18] == 1 && before[19] == 1); /* still a rollback-journal file */
	char wal[4200];
	snprintf(wal, sizeof wal, "%s-wal", db);
	CHECK(access(wal, F_OK) != 0);
	free(before);
	free(after);
	buf_release(&err);
}

/* Issue 12 item 10: --db naming /dev/null, a FIFO or a directory is bad input (EM_EINPUT, exit
 * 2), refused before SQLite opens it (a FIFO must not hang the open). */
static void test_refuse_non_regular(void)
{
	struct ledger *l = NULL;
	struct buf err = BUF_INIT;
	alarm(20); /* a hang on the FIFO fails the test instead of blocking ctest */
	CHECK_I64(ledger_open(&l, "/dev/null", &err), EM_EINPUT);
	CHECK_STR(err.s, "database '/dev/null' is a character device, not a regular file: --db must name a database file");
	CHECK(l == NULL);
	buf_reset(&err);
	const char *fifo = tmp_path("fifo.db");
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK_I64(ledger_open(&l, fifo, &err), EM_EINPUT);
	CHECK(strstr(err.s, "is a FIFO, not a regular file") != NULL);
	buf_reset(&err);
	const char *dir = tmp_path("dir.db");
	CHECK(mkdir(dir, 0700) == 0);
	CHECK_I64(ledger_open(&l, dir, &err), EM_EINPUT);
	CHECK(strstr(err.s, "is a directory, not a regular file") != NULL);
	alarm(0);
	buf_release(&err);
}

/* Issue 12 item 4: one apply per database whatever name reaches it. The lock lived next to the
 * path given (PATH.apply.lock), so a symlink or a hard link took a second one. The lock is now
 * taken on the file itself, before SQLite opens it (a hard link has its own -wal). */
static void test_apply_lock_any_name(void)
{
	const char *db = tmp_path("locked.db");
	char sym[4200], hard[4200], rel[4200];
	snprintf(sym, sizeof sym, "%s", tmp_path("sym.db"));
	snprintf(hard, sizeof hard, "%s", tmp_path("hard.db"));
	snprintf(rel, sizeof rel, "%s", tmp_path("./locked.db"));
	struct ledger *a = NULL, *b = NULL, *c = (struct ledger *)1;
	struct buf err = BUF_INIT;
	CHECK(ledger_open(&a, db, &err) == 0);
	ledger_close(a);
	CHECK(symlink(db, sym) == 0);
	CHECK(link(db, hard) == 0);
	CHECK(ledger_open_ex(&a, db, LEDGER_OPEN_APPLY_LOCK, &err) == 0);
	CHECK_STR(err.s, "");
	if (!a) {
		buf_release(&err);
		return;
	}
	CHECK(ledger_apply_lock(a, &err) == 0); /* taking it again is a no-op */
	const char *names[] = {sym, hard, rel, db};
	for (size_t i = 0; i < 4; i++) {
		CHECK_I64(ledger_open_ex(&c, names[i], LEDGER_OPEN_APPLY_LOCK, &err), EM_ECONFLICT);
		CHECK(c == NULL);
		struct buf want = BUF_INIT;
		buf_addf(&want, "another 'ebsmigrate apply' is running on database '%s' (pid %ld)", names[i], (long)getpid());
		if (!strstr(err.s, want.s))
			printf("# got: %s\n", err.s);
		CHECK(strstr(err.s, want.s) != NULL);
		buf_release(&want);
		buf_reset(&err);
	}
	/* an open ledger can take it too, and is refused the same way */
	CHECK(ledger_open(&b, sym, &err) == 0);
	CHECK_I64(ledger_apply_lock(b, &err), EM_ECONFLICT);
	buf_reset(&err);
	/* released by unlock, and by closing the holder */
	ledger_apply_unlock(a);
	CHECK(ledger_apply_lock(b, &err) == 0);
	CHECK_I64(ledger_apply_lock(a, &err), EM_ECONFLICT);
	buf_reset(&err);
	ledger_close(b);
	CHECK(ledger_apply_lock(a, &err) == 0);
	/* the holder still works with its database: SQLite's own locks were not disturbed */
	int64_t id = 0;
	CHECK(ledger_plan_record(a, "2026-12-01T12:00:00Z", "match", 0, 0, 0, "{\"schema\":\"ebsmigrate.plan/v1\"}", &id,
				 &err) == 0);
	CHECK_STR(err.s, "");
	ledger_close(a);
	buf_release(&err);
}

static void test_default_path(void)
{
	struct buf p = BUF_INIT;
	setenv("XDG_STATE_HOME", "/x/state", 1);
	ledger_default_path(&p);
	CHECK_STR(p.s, "/x/state/ebsmigrate/ebsmigrate.db");
	buf_reset(&p);
	setenv("XDG_STATE_HOME", "relative", 1); /* ignored, as the XDG spec says */
	setenv("HOME", "/home/u", 1);
	ledger_default_path(&p);
	CHECK_STR(p.s, "/home/u/.local/state/ebsmigrate/ebsmigrate.db");
	buf_reset(&p);
	unsetenv("XDG_STATE_HOME");
	ledger_default_path(&p);
	CHECK_STR(p.s, "/home/u/.local/state/ebsmigrate/ebsmigrate.db");
	buf_release(&p);
}

/* Plans carry their document's SHA-256; find_or_record finds an identical document (even one
 * recorded before migration 0005, without a hash) instead of recording it again. */
static void test_plan_find_or_record(void)
{
	const char *db = tmp_path("plans.db");
	struct ledger *l = NULL;
	struct buf err = BUF_INIT;
	CHECK(ledger_open(&l, db, &err) == 0);
	const char *doc_a = "{\"schema\":\"ebsmigrate.plan/v1\",\"n\":1}\n";
	const char *doc_b = "{\"schema\":\"ebsmigrate.plan/v1\",\"n\":2}\n";
	int64_t id = 0, id2 = 0;
	int recorded = -1;
	CHECK(ledger_plan_record(l, "2026-12-01T12:00:00Z", "match", 0, 3, 2080000, doc_a, &id, &err) == 0);
	CHECK_I64(id, 1);
	char sha[65];
	em_sha256_hex(doc_a, strlen(doc_a), sha);
	char *stored = sql_text(db, "SELECT plan_sha256 FROM plans WHERE id = 1");
	CHECK_STR(stored, sha);
	free(stored);

	CHECK(ledger_plan_find(l, doc_a, &id2, &err) == 0);
	CHECK_I64(id2, 1);
	struct buf miss = BUF_INIT;
	CHECK(ledger_plan_find(l, doc_b, &id2, &miss) == EM_ENOTFOUND);
	buf_release(&miss);

	CHECK(ledger_plan_find_or_record(l, "2026-12-01T12:00:00Z", "match", 0, 3, 2080000, doc_a, &id2, &recorded,
					 &err) == 0);
	CHECK_I64(id2, 1);
	CHECK_I64(recorded, 0);
	CHECK(ledger_plan_find_or_record(l, "2026-12-01T12:00:00Z", "baseline", 0, 3, 0, doc_b, &id2, &recorded,
					 &err) == 0);
	CHECK_I64(id2, 2);
	CHECK_I64(recorded, 1);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM plans"), 2);
	CHECK_I64(sql_int(db, "SELECT price_version IS NULL FROM plans WHERE id = 2"), 1);

	/* The same document recorded twice (two identical plans): the latest is the one found. */
	CHECK(ledger_plan_record(l, "2026-12-01T12:00:00Z", "match", 0, 3, 2080000, doc_a, &id, &err) == 0);
	CHECK(ledger_plan_find(l, doc_a, &id2, &err) == 0);
	CHECK_I64(id2, id);

	/* A row from before migration 0005 has no hash: found by its document. */
	sqlite3 *raw;
	CHECK(sqlite3_open(db, &raw) == SQLITE_OK);
	CHECK(sqlite3_exec(raw, "UPDATE plans SET plan_sha256 = NULL WHERE id = 2", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(raw);
	CHECK(ledger_plan_find_or_record(l, "2026-12-01T12:00:00Z", "baseline", 0, 3, 0, doc_b, &id2, &recorded,
					 &err) == 0);
	CHECK_I64(id2, 2);
	CHECK_I64(recorded, 0);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM plans"), 3);
	CHECK_STR(err.s, "");
	ledger_close(l);
	buf_release(&err);
}

/* status saves its observations with ledger_apply_save_if: over the row as it read it only, so
 * a concurrent apply's write (another connection) wins and is never overwritten. */
static void test_apply_save_if(void)
{
	const char *db = tmp_path("cas.db");
	struct ledger *apply = NULL, *status = NULL;
	struct buf err = BUF_INIT;
	CHECK(ledger_open(&apply, db, &err) == 0);
	CHECK(ledger_open(&status, db, &err) == 0);
	int64_t plan = 0;
	CHECK(ledger_plan_record(apply, "2026-12-01T12:00:00Z", "match", 0, 1, 0, "{\"n\":1}\n", &plan, &err) == 0);
	struct apply_row r;
	memset(&r, 0, sizeof r);
	r.plan_id = plan;
	r.volume_id = xstrdup("vol-1");
	r.region = xstrdup("us-east-1");
	r.method = METHOD_EC2;
	r.state = APPLY_SUBMITTED;
	r.target_type = xstrdup("gp3");
	r.submitted_at = 1764590400;
	CHECK(ledger_apply_save(apply, &r, "ModifyVolume about to be sent", &err) == 0);

	struct apply_row seen;
	CHECK(ledger_apply_get(status, plan, "vol-1", &seen, &err) == 0);
	/* apply moves the row on after status read it */
	r.state = APPLY_MODIFYING;
	CHECK(ledger_apply_save(apply, &r, "ModifyVolume accepted", &err) == 0);
	/* status's observation of the row as it read it is refused, nothing written */
	seen.state = APPLY_OPTIMIZING;
	struct buf conflict = BUF_INIT;
	CHECK_I64(ledger_apply_save_if(status, &seen, APPLY_SUBMITTED, 1764590400, "observed by status", &conflict),
		  EM_ECONFLICT);
	CHECK(strstr(conflict.s, "volume 'vol-1'") != NULL);
	buf_release(&conflict);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM apply_volumes WHERE state = 'modifying'"), 1);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM apply_events WHERE detail = 'observed by status'"), 0);
	/* a resubmission (another submitted_at) is a different row state too */
	CHECK_I64(ledger_apply_save_if(status, &seen, APPLY_MODIFYING, 1764590401, "observed by status", &conflict),
		  EM_ECONFLICT);
	buf_release(&conflict);
	/* over the row as it is: written, with its event */
	CHECK(ledger_apply_save_if(status, &seen, APPLY_MODIFYING, 1764590400, "observed by status", &err) == 0);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM apply_volumes WHERE state = 'optimizing'"), 1);
	CHECK_I64(sql_int(db, "SELECT count(*) FROM apply_events WHERE detail = 'observed by status' AND "
			      "from_state = 'modifying' AND to_state = 'optimizing'"),
		  1);
	CHECK_STR(err.s, "");
	apply_row_release(&r);
	apply_row_release(&seen);
	ledger_close(apply);
	ledger_close(status);
	buf_release(&err);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return tap_skip_all("cannot create a temporary directory");
	test_open_modes_and_wal();
	test_pricebook_versions();
	test_refuse_newer_and_garbage();
	test_newer_left_untouched();
	test_refuse_non_regular();
	test_apply_lock_any_name();
	test_plan_find_or_record();
	test_apply_save_if();
	test_default_path();
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return tap_done();
}
