/*
 * ledger.c - the SQLite database: the only file that speaks SQL.
 *
 * Entry points: ledger_default_path, ledger_open / ledger_open_ex / ledger_close,
 * ledger_reopen_if_replaced, ledger_schema_version, the apply lock (ledger_apply_lock /
 * ledger_apply_unlock), ledger_pricebook_store / ledger_pricebook_current /
 * ledger_pricebook_for_planning; price book history: ledger_price_versions /
 * ledger_pricebook_load; realized savings: ledger_completed_volumes. Recorded plans and
 * inventory runs are ledger_store.c's, the apply ledger ledger_apply.c's: they call this file,
 * never the other way.
 * For the module's files (ledger_internal.h): the statement helpers. A statement's parameters are
 * one typed list (LEDGER_PARAMS), bound by ledger_bind_params; ledger_run / ledger_insert /
 * ledger_query_row / _rows / _list / _columns prepare, bind and run a statement in one call.
 *
 * Opening: a path that looks like a URL (s3://..., file:...) is refused before anything is made:
 * no backend exists for a scheme, and the path would otherwise become local folders ("s3:").
 * Then the parent directories are created 0700 and the file itself with open(O_CREAT|O_EXCL,
 * 0600) plus fchmod before SQLite sees it, so the mode does not depend on the umask (SQLite gives
 * its -wal and -shm files the database file's mode). The path must then name a regular file
 * (not /dev/null, a FIFO or a directory), checked on a descriptor the ledger keeps until after
 * SQLite closes (it also carries the apply lock, below). Then: busy timeout 5 s, the
 * schema version read and a newer one refused before anything is written (the WAL switch
 * rewrites the header), foreign keys on, WAL journal, and the schema migrations.
 *
 * Migrations: the embedded files "migrations/NNNN_name.sql", numbered 1..N without gaps, run in
 * order; each one runs in its own BEGIN IMMEDIATE transaction that also sets
 * PRAGMA user_version = NNNN, so a crash leaves the schema at a whole version and two processes
 * opening a new database at once migrate it once. A database whose user_version is above N was
 * written by a newer ebsmigrate and is refused.
 *
 * Invariants: every multi-statement write is one transaction (a failure rolls all of it back);
 * exactly one price_versions row is current once any book is stored; money goes in and out as
 * INTEGER price units, never REAL.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/embedded.h"
#include "ebsmigrate/ledger.h"

#ifndef EM_VERSION
#define EM_VERSION "unknown"
#endif

#include "ledger_internal.h"

struct migration {
	int number;
	const struct embedded_file *file;
};

void ledger_default_path(struct buf *out)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	if (state && state[0] == '/') /* the XDG spec says to ignore relative values */
		buf_addf(out, "%s/ebsmigrate/ebsmigrate.db", state);
	else if (home && *home)
		buf_addf(out, "%s/.local/state/ebsmigrate/ebsmigrate.db", home);
	else
		buf_adds(out, "ebsmigrate.db");
}

/* Appends "database 'PATH': WHAT: sqlite's message" and returns the matching EM_E* code. */
int ledger_db_err(struct ledger *l, struct buf *err, const char *what)
{
	int code = sqlite3_errcode(l->db);
	int rc = (code == SQLITE_BUSY || code == SQLITE_LOCKED) ? EM_ECONFLICT : EM_EIO;
	return em_err(err, rc, "database '%s': %s: %s", l->path, what, sqlite3_errmsg(l->db));
}

int ledger_exec(struct ledger *l, const char *sql, const char *what, struct buf *err)
{
	char *msg = NULL;
	if (sqlite3_exec(l->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	int code = sqlite3_errcode(l->db);
	int rc = (code == SQLITE_BUSY || code == SQLITE_LOCKED) ? EM_ECONFLICT : EM_EIO;
	em_err(err, rc, "database '%s': %s: %s", l->path, what, msg ? msg : sqlite3_errmsg(l->db));
	sqlite3_free(msg);
	return rc;
}

void ledger_rollback(struct ledger *l)
{
	if (!sqlite3_get_autocommit(l->db))
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
}

int ledger_end_tx(struct ledger *l, int rc, const char *what, struct buf *err)
{
	if (!rc)
		rc = ledger_exec(l, "COMMIT", what, err);
	if (rc)
		ledger_rollback(l);
	return rc;
}

int ledger_prepare(struct ledger *l, const char *sql, sqlite3_stmt **st, struct buf *err)
{
	if (sqlite3_prepare_v2(l->db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	*st = NULL;
	return ledger_db_err(l, err, "cannot prepare a statement");
}

int ledger_rows_kept(struct ledger *l, sqlite3_stmt *st, ledger_row_fn on_row, void *ctx, const char *what,
		     struct buf *err)
{
	int rc = 0, step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		rc = on_row ? on_row(st, ctx, err) : 0;
		if (rc)
			break;
	}
	if (!rc && step != SQLITE_DONE)
		rc = ledger_db_err(l, err, what); /* before reset or finalize: they reset the message */
	sqlite3_reset(st);
	return rc;
}

int ledger_rows(struct ledger *l, sqlite3_stmt *st, ledger_row_fn on_row, void *ctx, const char *what,
		struct buf *err)
{
	int rc = ledger_rows_kept(l, st, on_row, ctx, what, err);
	sqlite3_finalize(st);
	return rc;
}

int ledger_row(struct ledger *l, sqlite3_stmt *st, ledger_row_fn on_row, void *ctx, const char *what,
	       struct buf *err)
{
	int rc, step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		rc = on_row ? on_row(st, ctx, err) : 0;
	else if (step == SQLITE_DONE)
		rc = EM_ENOTFOUND;
	else
		rc = ledger_db_err(l, err, what);
	sqlite3_finalize(st);
	return rc;
}

void *ledger_list_add(struct ledger_list *list)
{
	if (list->n == list->alloc) {
		list->alloc = list->alloc ? list->alloc * 2 : 16;
		list->items = xrealloc(list->items, list->alloc * list->size);
	}
	void *item = (char *)list->items + list->n++ * list->size;
	memset(item, 0, list->size);
	return item;
}

time_t ledger_column_time(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	time_t t = 0;
	if (s && em_parse_time((const char *)s, &t))
		t = 0;
	return t;
}

double ledger_column_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

void ledger_read_columns(sqlite3_stmt *st, void *item, const struct ledger_column *cols, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		void *field = (char *)item + cols[i].offset;
		int col = (int)i;
		switch (cols[i].kind) {
		case LEDGER_INT64: *(int64_t *)field = sqlite3_column_int64(st, col); break;
		case LEDGER_INT: *(int *)field = sqlite3_column_int(st, col); break;
		case LEDGER_TEXT: *(char **)field = ledger_column_dup(st, col); break;
		case LEDGER_TIME: *(time_t *)field = ledger_column_time(st, col); break;
		case LEDGER_REAL: *(double *)field = ledger_column_real(st, col); break;
		case LEDGER_APPLY_STATE:
			apply_state_parse((const char *)sqlite3_column_text(st, col), (enum apply_state *)field);
			break;
		case LEDGER_MODIFY_METHOD:
			modify_method_parse((const char *)sqlite3_column_text(st, col), (enum modify_method *)field);
			break;
		}
	}
}

int ledger_read_listed(sqlite3_stmt *st, void *list, struct buf *err)
{
	(void)err;
	struct ledger_list *l = list;
	ledger_read_columns(st, ledger_list_add(l), l->cols, l->n_cols);
	return 0;
}

void ledger_list_release(struct ledger_list *list)
{
	for (size_t i = 0; i < list->n; i++) {
		char *item = (char *)list->items + i * list->size;
		if (list->release)
			list->release(item);
		for (size_t c = 0; !list->release && c < list->n_cols; c++)
			if (list->cols[c].kind == LEDGER_TEXT)
				free(*(char **)(item + list->cols[c].offset));
	}
	free(list->items);
	list->items = NULL;
	list->n = list->alloc = 0;
}

void ledger_items_free(void *items, size_t n, struct ledger_list shape)
{
	shape.items = items;
	shape.n = shape.alloc = n;
	ledger_list_release(&shape);
}

int ledger_query_list(struct ledger *l, const char *sql, const struct ledger_param *params, ledger_row_fn on_row,
		      struct ledger_list *list, const char *what, struct buf *err)
{
	int rc = ledger_query_rows(l, sql, params, on_row ? on_row : ledger_read_listed, list, what, err);
	if (rc)
		ledger_list_release(list);
	return rc;
}

int ledger_query_row(struct ledger *l, const char *sql, const struct ledger_param *params, ledger_row_fn on_row,
		     void *ctx, const char *what, struct buf *err)
{
	sqlite3_stmt *st;
	int rc = ledger_prepare_bound(l, sql, params, &st, err);
	return rc ? rc : ledger_row(l, st, on_row, ctx, what, err);
}

int ledger_query_rows(struct ledger *l, const char *sql, const struct ledger_param *params, ledger_row_fn on_row,
		      void *ctx, const char *what, struct buf *err)
{
	sqlite3_stmt *st;
	int rc = ledger_prepare_bound(l, sql, params, &st, err);
	return rc ? rc : ledger_rows(l, st, on_row, ctx, what, err);
}

struct columns_into {
	void *item;
	const struct ledger_column *cols;
	size_t n;
};

static int read_columns_into(sqlite3_stmt *st, void *ctx, struct buf *err)
{
	(void)err;
	struct columns_into *into = ctx;
	ledger_read_columns(st, into->item, into->cols, into->n);
	return 0;
}

int ledger_query_columns(struct ledger *l, const char *sql, const struct ledger_param *params, void *item,
			 const struct ledger_column *cols, size_t n, const char *what, struct buf *err)
{
	struct columns_into into = {item, cols, n};
	return ledger_query_row(l, sql, params, read_columns_into, &into, what, err);
}

int ledger_step_done(struct ledger *l, sqlite3_stmt *st, const char *what, struct buf *err)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : ledger_db_err(l, err, what);
	sqlite3_finalize(st);
	return rc;
}

/* Binds a string or NULL. SQLITE_TRANSIENT: the caller's strings may not outlive the step. */
void ledger_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_param(sqlite3_stmt *st, int i, const struct ledger_param *p)
{
	char ts[21];
	switch (p->kind) {
	case LEDGER_PARAM_END:
	case LEDGER_PARAM_LIST: /* ledger_bind_params */
	case LEDGER_PARAM_SKIP: break;
	case LEDGER_PARAM_NULL: sqlite3_bind_null(st, i); break;
	case LEDGER_PARAM_INT64: sqlite3_bind_int64(st, i, p->i); break;
	case LEDGER_PARAM_ID:
		if (p->i > 0)
			sqlite3_bind_int64(st, i, p->i);
		else
			sqlite3_bind_null(st, i);
		break;
	case LEDGER_PARAM_REAL:
		if (isnan(p->r))
			sqlite3_bind_null(st, i);
		else
			sqlite3_bind_double(st, i, p->r);
		break;
	case LEDGER_PARAM_TEXT: ledger_bind_text(st, i, p->p); break;
	case LEDGER_PARAM_TIME:
		if (p->i) {
			em_format_time((time_t)p->i, ts);
			ledger_bind_text(st, i, ts);
		} else {
			sqlite3_bind_null(st, i);
		}
		break;
	case LEDGER_PARAM_DOC:
		/* A whole document without the private copy SQLITE_TRANSIENT makes: the caller's string
		 * must outlive the statement, which every caller steps and finalizes before returning. */
		if (p->p)
			sqlite3_bind_text64(st, i, p->p, strlen(p->p), SQLITE_STATIC, SQLITE_UTF8);
		else
			sqlite3_bind_null(st, i);
		break;
	case LEDGER_PARAM_BLOB: sqlite3_bind_blob64(st, i, p->p, (sqlite3_uint64)p->i, SQLITE_STATIC); break;
	}
}

int ledger_bind_params(sqlite3_stmt *st, int first, const struct ledger_param *params)
{
	for (; params && params->kind != LEDGER_PARAM_END; params++) {
		if (params->kind == LEDGER_PARAM_LIST)
			first = ledger_bind_params(st, first, params->p);
		else
			bind_param(st, first++, params);
	}
	return first;
}

int ledger_prepare_bound(struct ledger *l, const char *sql, const struct ledger_param *params, sqlite3_stmt **st,
			 struct buf *err)
{
	int rc = ledger_prepare(l, sql, st, err);
	if (!rc)
		ledger_bind_params(*st, 1, params);
	return rc;
}

int ledger_run(struct ledger *l, const char *sql, const struct ledger_param *params, const char *what,
	       struct buf *err)
{
	sqlite3_stmt *st;
	int rc = ledger_prepare_bound(l, sql, params, &st, err);
	return rc ? rc : ledger_step_done(l, st, what, err);
}

int ledger_insert(struct ledger *l, const char *sql, const struct ledger_param *params, int64_t *id_out,
		  const char *what, struct buf *err)
{
	int rc = ledger_run(l, sql, params, what, err);
	if (!rc && id_out)
		*id_out = sqlite3_last_insert_rowid(l->db);
	return rc;
}

char *ledger_column_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? xstrdup((const char *)s) : NULL;
}

int ledger_read_int64(sqlite3_stmt *st, void *out, struct buf *err)
{
	(void)err;
	*(int64_t *)out = sqlite3_column_int64(st, 0);
	return 0;
}

int ledger_read_int64_into_list(sqlite3_stmt *st, void *list, struct buf *err)
{
	return ledger_read_int64(st, ledger_list_add(list), err);
}

static int read_user_version(struct ledger *l, int *out, struct buf *err)
{
	int64_t version = 0;
	int rc = ledger_query_row(l, "PRAGMA user_version", NULL, ledger_read_int64, &version,
				  "cannot read the schema version", err);
	if (rc == EM_ENOTFOUND) /* the pragma always answers one row */
		rc = ledger_db_err(l, err, "cannot read the schema version");
	*out = (int)version;
	return rc;
}

static int cmp_migration(const void *a, const void *b)
{
	const struct migration *x = a, *y = b;
	return (x->number > y->number) - (x->number < y->number);
}

/* The embedded migrations, sorted; *n_out = how many. Fails unless numbered 1..N. */
static int list_migrations(struct migration **out, size_t *n_out, struct buf *err)
{
	struct migration *m = NULL;
	size_t n = 0, alloc = 0;
	for (const struct embedded_file *f = embedded_files; f->path; f++) {
		const char *name = f->path + strlen("migrations/");
		size_t len = strlen(f->path);
		if (strncmp(f->path, "migrations/", 11) != 0 || len < 4 || strcmp(f->path + len - 4, ".sql") != 0)
			continue;
		int number = 0, digits = 0;
		for (; name[digits] >= '0' && name[digits] <= '9' && digits < 9; digits++)
			number = number * 10 + (name[digits] - '0');
		if (digits != 4 || name[digits] != '_') {
			free(m);
			return em_err(err, EM_EIO, "embedded migration '%s' is not named NNNN_name.sql", f->path);
		}
		XGROW(m, n, alloc);
		m[n].number = number;
		m[n].file = f;
		n++;
	}
	if (n)
		qsort(m, n, sizeof *m, cmp_migration);
	for (size_t i = 0; i < n; i++) {
		if (m[i].number != (int)i + 1) {
			int rc = em_err(err, EM_EIO, "embedded migration '%s' breaks the numbering 1..%zu",
					m[i].file->path, n);
			free(m);
			return rc;
		}
	}
	*out = m;
	*n_out = n;
	return 0;
}

static int newer_schema(struct ledger *l, int version, size_t known, struct buf *err)
{
	return em_err(err, EM_EUNSUPPORTED,
		      "database '%s' has schema version %d, newer than this ebsmigrate knows (%zu): upgrade ebsmigrate "
		      "to use it",
		      l->path, version, known);
}

/* Refuses a database written by a newer ebsmigrate before anything writes to it. */
static int refuse_newer(struct ledger *l, struct buf *err)
{
	struct migration *m = NULL;
	size_t n = 0;
	int version = 0, rc = list_migrations(&m, &n, err);
	free(m);
	if (!rc)
		rc = read_user_version(l, &version, err);
	if (!rc && version > (int)n)
		rc = newer_schema(l, version, n, err);
	return rc;
}

static int migrate(struct ledger *l, struct buf *err)
{
	struct migration *m = NULL;
	size_t n = 0;
	int rc = list_migrations(&m, &n, err);
	if (rc)
		return rc;
	int version;
	rc = read_user_version(l, &version, err);
	if (!rc && version > (int)n)
		rc = newer_schema(l, version, n, err);
	int from = version;
	for (size_t i = 0; !rc && i < n; i++) {
		if (m[i].number <= version)
			continue;
		rc = ledger_exec(l, "BEGIN IMMEDIATE", "cannot start a migration", err);
		if (rc)
			break;
		/* Another process may have migrated between our read and the lock. */
		rc = read_user_version(l, &version, err);
		if (!rc && m[i].number <= version) {
			rc = ledger_exec(l, "COMMIT", "cannot finish a migration", err);
			continue;
		}
		char *msg = NULL;
		if (!rc && sqlite3_exec(l->db, m[i].file->data, NULL, NULL, &msg) != SQLITE_OK) {
			rc = em_err(err, EM_EIO, "database '%s': migration '%s' failed: %s", l->path, m[i].file->path,
				    msg ? msg : sqlite3_errmsg(l->db));
		}
		sqlite3_free(msg);
		if (!rc) {
			char pragma[64];
			snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", m[i].number);
			rc = ledger_exec(l, pragma, "cannot set the schema version", err);
		}
		if (!rc && from == 0 && m[i].number == 1)
			rc = ledger_exec(l, "INSERT OR IGNORE INTO meta (key, value) VALUES ('created_by', 'ebsmigrate " EM_VERSION "')",
				  "cannot record the creator", err);
		rc = ledger_end_tx(l, rc, "cannot finish a migration", err);
		if (!rc)
			version = m[i].number;
	}
	if (!rc)
		l->schema_version = version;
	free(m);
	return rc;
}

/* Creates the parent directories (0700) and the file (0600) when missing. */
static int create_file(const char *path, struct buf *err)
{
	const char *slash = strrchr(path, '/');
	if (slash && slash != path) {
		char *dir = xstrndup(path, (size_t)(slash - path));
		int rc = em_mkdirs(dir, 0700, err);
		free(dir);
		if (rc)
			return rc;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0;
		return em_err(err, EM_EIO, "cannot create database '%s': %s", path, strerror(errno));
	}
	int rc = 0;
	if (fchmod(fd, 0600) != 0) /* open's mode went through the umask; make it exact */
		rc = em_err(err, EM_EIO, "cannot set the mode of '%s': %s", path, strerror(errno));
	close(fd);
	return rc;
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Opens the database file for the ledger's descriptor (l->fd) and refuses anything but a
 * regular file. O_NONBLOCK: opening a FIFO must not wait for a writer. */
static int open_regular(struct ledger *l, struct buf *err)
{
	l->fd = open(l->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (l->fd < 0)
		return em_err(err, errno == ENOENT ? EM_ENOTFOUND : EM_EIO, "cannot open database '%s': %s", l->path,
			      strerror(errno));
	struct stat st;
	if (fstat(l->fd, &st) != 0)
		return em_err(err, EM_EIO, "cannot open database '%s': %s", l->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return em_err(err, EM_EINPUT, "database '%s' is %s, not a regular file: --db must name a database file",
			      l->path, file_kind(st.st_mode));
	return 0;
}

int ledger_open(struct ledger **out, const char *path, struct buf *err)
{
	return ledger_open_ex(out, path, 0, err);
}

/* The length of the scheme of a path that looks like a URL (2 for s3://bucket/key; 4 for SQLite's
 * own URI filenames, file:x.db?mode=ro, which this SQLite build would read as a URI while the
 * checks here see a plain name); 0 for a plain file name. */
static size_t url_scheme_len(const char *path)
{
	size_t n = 0;
	if ((path[0] >= 'a' && path[0] <= 'z') || (path[0] >= 'A' && path[0] <= 'Z'))
		n = 1 + strspn(path + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
	if (n && strncmp(path + n, "://", 3) == 0)
		return n;
	return n == 4 && strncasecmp(path, "file:", 5) == 0 ? n : 0;
}

int ledger_open_ex(struct ledger **out, const char *path, unsigned flags, struct buf *err)
{
	*out = NULL;
	size_t scheme = url_scheme_len(path);
	if (scheme) /* only the scheme is quoted: the rest of a URL may hold a password or a signed token */
		return em_err(err, EM_EINPUT,
			      "database '%.*s%s...' is a URL: there is no database backend for '%.*s' URLs; --db takes a "
			      "local file path (./NAME for a file whose name only looks like a URL)",
			      (int)scheme, path, strncmp(path + scheme, "://", 3) == 0 ? "://" : ":", (int)scheme, path);
	int rc = create_file(path, err);
	if (rc)
		return rc;
	struct ledger *l = xcalloc(1, sizeof *l);
	l->fd = -1;
	l->path = xstrdup(path);
	/* The apply lock before SQLite reads anything: a second name of the file (a hard link has
	 * its own -wal and -shm) must not even open it while an apply runs. */
	if ((rc = open_regular(l, err)) || ((flags & LEDGER_OPEN_APPLY_LOCK) && (rc = ledger_apply_lock(l, err)))) {
		ledger_close(l);
		return rc;
	}
	if (sqlite3_open_v2(path, &l->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		rc = em_err(err, EM_EIO, "cannot open database '%s': %s", path,
			    l->db ? sqlite3_errmsg(l->db) : "out of memory");
		ledger_close(l);
		return rc;
	}
	sqlite3_extended_result_codes(l->db, 1);
	sqlite3_busy_timeout(l->db, 5000);
	rc = refuse_newer(l, err);
	if (!rc)
		rc = ledger_exec(l, "PRAGMA foreign_keys = ON", "cannot enable foreign keys", err);
	if (!rc) {
		sqlite3_stmt *st;
		rc = ledger_prepare(l, "PRAGMA journal_mode = WAL", &st, err);
		if (!rc) {
			const unsigned char *mode = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
			if (!mode || strcmp((const char *)mode, "wal") != 0)
				rc = ledger_db_err(l, err, "cannot switch to WAL journal mode");
			sqlite3_finalize(st);
		}
	}
	if (!rc)
		rc = migrate(l, err);
	if (rc) {
		ledger_close(l);
		return rc;
	}
	*out = l;
	return 0;
}

int ledger_reopen_if_replaced(struct ledger **l, int *reopened, struct buf *err)
{
	*reopened = 0;
	struct stat at_path, open_file;
	if (stat((*l)->path, &at_path) != 0)
		return em_err(err, errno == ENOENT ? EM_ENOTFOUND : EM_EIO, "database '%s': %s (removed after it was opened)",
			      (*l)->path, strerror(errno));
	if (fstat((*l)->fd, &open_file) != 0)
		return em_err(err, EM_EIO, "database '%s': %s", (*l)->path, strerror(errno));
	if (at_path.st_dev == open_file.st_dev && at_path.st_ino == open_file.st_ino)
		return 0;
	struct ledger *fresh;
	int rc = ledger_open_ex(&fresh, (*l)->path, 0, err);
	if (rc)
		return rc; /* the open one stays: a later call may find a good file there */
	/* The -wal name beside the path may now be the new file's: closing the old connection must
	 * not delete it (SQLite deletes its WAL by name when the last connection closes). */
	int persist = 1;
	sqlite3_file_control((*l)->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
	ledger_close(*l);
	*l = fresh;
	*reopened = 1;
	return 0;
}

void ledger_close(struct ledger *l)
{
	if (!l)
		return;
	sqlite3_close(l->db);
	if (l->fd >= 0) /* after SQLite: see struct ledger */
		close(l->fd);
	free(l->path);
	free(l);
}

int ledger_schema_version(struct ledger *l)
{
	return l->schema_version;
}

/* ---- the apply lock ----
 *
 * One apply per database: an flock on the database file itself, through the descriptor
 * ledger_open keeps: every name of the file (a symlink, a hard link, a bind mount, another
 * relative path) reaches the same inode and so the same lock, and the kernel drops it when the
 * holder dies, kill -9 included. SQLite's own locks are POSIX record locks, which are independent
 * of flock on local file systems (WAL mode, which ebsmigrate uses, does not work on network file
 * systems anyway). */

/* The pid holding an flock on the file (dev, ino) according to /proc/locks (Linux), or 0. */
static long flock_holder(dev_t dev, ino_t ino)
{
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	char line[256];
	long holder = 0;
	while (!holder && fgets(line, sizeof line, f)) {
		/* "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"; "1: -> FLOCK ..." lines are waiters */
		char kind[16], mode[16], rw[16];
		long pid;
		unsigned maj, min;
		unsigned long long inode;
		if (sscanf(line, "%*[^:]: %15s %15s %15s %ld %x:%x:%llu", kind, mode, rw, &pid, &maj, &min, &inode) == 7 &&
		    strcmp(kind, "FLOCK") == 0 && maj == major(dev) && min == minor(dev) && inode == (unsigned long long)ino)
			holder = pid;
	}
	fclose(f);
	return holder;
}

long ledger_apply_lock_holder(struct ledger *l)
{
	struct stat st;
	return fstat(l->fd, &st) == 0 ? flock_holder(st.st_dev, st.st_ino) : 0;
}

int ledger_apply_lock(struct ledger *l, struct buf *err)
{
	if (l->apply_locked)
		return 0;
	if (flock(l->fd, LOCK_EX | LOCK_NB) == 0) {
		l->apply_locked = 1;
		return 0;
	}
	if (errno != EWOULDBLOCK)
		return em_err(err, EM_EIO, "database '%s': cannot take the apply lock: %s", l->path, strerror(errno));
	long pid = ledger_apply_lock_holder(l);
	int rc = em_err(err, EM_ECONFLICT, "another 'ebsmigrate apply' is running on database '%s'", l->path);
	if (pid > 0)
		buf_addf(err, " (pid %ld)", pid);
	buf_adds(err, ", possibly through another name of the same file (a symlink or hard link); wait for it to finish");
	return rc;
}

void ledger_apply_unlock(struct ledger *l)
{
	if (l && l->apply_locked) {
		flock(l->fd, LOCK_UN); /* the descriptor stays open until ledger_close (struct ledger) */
		l->apply_locked = 0;
	}
}

static void now_rfc3339(char out[static 21])
{
	em_format_time(em_now(), out);
}

/* Inserts pb as a new version and makes it current. The caller holds a write transaction. */
static int store_in_tx(struct ledger *l, struct pricebook *pb, struct buf *err)
{
	char now[21];
	now_rfc3339(now);
	int64_t id;
	int rc = ledger_insert(l,
			       "INSERT INTO price_versions (source, effective_date, fetched_at, created_at, is_current) "
			       "VALUES (?, ?, ?, ?, 0)",
			       LEDGER_PARAMS(LP_TEXT(pb->source), LP_TEXT(pb->effective_date), LP_TEXT(pb->fetched_at),
					     LP_TEXT(now)),
			       &id, "cannot store the price book version", err);
	if (rc)
		return rc;

	sqlite3_stmt *st;
	rc = ledger_prepare(l, "INSERT INTO prices (version_id, location, location_name, item, price_units) "
			"VALUES (?, ?, ?, ?, ?)",
		     &st, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < pb->n && !rc; i++) {
		const struct price_location *loc = &pb->locs[i];
		for (int item = 0; item < PRICE_ITEMS && !rc; item++) {
			price_t price;
			if (!pricebook_item_get(loc, item, &price))
				continue;
			sqlite3_reset(st);
			ledger_bind_params(st, 1, LEDGER_PARAMS(LP_INT64(id), LP_TEXT(loc->code), LP_TEXT(loc->name),
								LP_TEXT(pricebook_item_name(item)), LP_INT64(price)));
			if (sqlite3_step(st) != SQLITE_DONE) {
				struct buf what = BUF_INIT;
				buf_addf(&what, "cannot store the %s price for '%s'", pricebook_item_name(item),
					 loc->code ? loc->code : "(null)");
				rc = ledger_db_err(l, err, what.s);
				buf_release(&what);
			}
		}
	}
	sqlite3_finalize(st);
	if (rc)
		return rc;

	rc = ledger_exec(l, "UPDATE price_versions SET is_current = 0 WHERE is_current = 1",
		  "cannot retire the current price book", err);
	if (rc)
		return rc;
	rc = ledger_run(l, "UPDATE price_versions SET is_current = 1 WHERE id = ?", LEDGER_PARAMS(LP_INT64(id)),
			"cannot make the new price book current", err);
	if (!rc)
		pb->version = id;
	return rc;
}

int ledger_pricebook_store(struct ledger *l, struct pricebook *pb, struct buf *err)
{
	if (!pb->source || !pb->effective_date)
		return em_err(err, EM_EINPUT, "price book has no %s: not stored in '%s'",
			      pb->source ? "effective date" : "source", l->path);
	int rc = ledger_exec(l, "BEGIN IMMEDIATE", "cannot start storing the price book", err);
	if (rc)
		return rc;
	rc = ledger_end_tx(l, store_in_tx(l, pb, err), "cannot commit the price book", err);
	if (rc)
		pb->version = 0;
	return rc;
}

static int read_price(sqlite3_stmt *st, void *ctx, struct buf *err)
{
	(void)err;
	const char *code = (const char *)sqlite3_column_text(st, 0);
	const char *name = (const char *)sqlite3_column_text(st, 1);
	int item = pricebook_item_parse((const char *)sqlite3_column_text(st, 2));
	if (!code || item < 0)
		return 0; /* an item a newer ebsmigrate wrote stays unknown here */
	struct price_location *loc = pricebook_location(ctx, code);
	if (!loc->name && name)
		loc->name = xstrdup(name);
	pricebook_item_set(loc, item, sqlite3_column_int64(st, 3));
	return 0;
}

/* Reads version id's prices into out (which already holds its header fields). */
static int load_prices(struct ledger *l, int64_t id, struct pricebook *out, struct buf *err)
{
	return ledger_query_rows(l,
				 "SELECT location, location_name, item, price_units FROM prices WHERE version_id = ? "
				 "ORDER BY location, item",
				 LEDGER_PARAMS(LP_INT64(id)), read_price, out, "cannot read the prices", err);
}

/* A price_versions row's header fields into a pricebook (the queries select them in this order). */
static const struct ledger_column VERSION_HEADER_COLUMNS[] = {
	LEDGER_COLUMN(TEXT, struct pricebook, source),
	LEDGER_COLUMN(TEXT, struct pricebook, effective_date),
	LEDGER_COLUMN(TEXT, struct pricebook, fetched_at),
	LEDGER_COLUMN(INT64, struct pricebook, version),
};

/* The current version's header into out; EM_ENOTFOUND when there is none. */
static int current_version(struct ledger *l, struct pricebook *out, struct buf *err)
{
	int rc = ledger_query_columns(l,
				      "SELECT source, effective_date, fetched_at, id FROM price_versions "
				      "WHERE is_current = 1",
				      NULL, out, VERSION_HEADER_COLUMNS, LEDGER_N_COLUMNS(VERSION_HEADER_COLUMNS),
				      "cannot read the current price book", err);
	if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "database '%s' holds no price book", l->path);
	return rc;
}

static int load_current(struct ledger *l, struct pricebook *out, struct buf *err)
{
	int rc = current_version(l, out, err);
	return rc ? rc : load_prices(l, out->version, out, err);
}

/* Version id's header and prices into out; a missing version is EM_ENOTFOUND naming it. */
static int load_version(struct ledger *l, int64_t id, struct pricebook *out, struct buf *err)
{
	int rc = ledger_query_columns(l, "SELECT source, effective_date, fetched_at, id FROM price_versions WHERE id = ?",
				      LEDGER_PARAMS(LP_INT64(id)), out, VERSION_HEADER_COLUMNS,
				      LEDGER_N_COLUMNS(VERSION_HEADER_COLUMNS), "cannot read the price book version", err);
	if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "database '%s' has no price book version %lld", l->path, (long long)id);
	return rc ? rc : load_prices(l, id, out, err);
}

/* One price book read in one transaction: version *id, or the current one when id is NULL. On
 * an error out is released. */
static int read_pricebook(struct ledger *l, const int64_t *id, struct pricebook *out, struct buf *err)
{
	pricebook_init(out);
	int rc = ledger_exec(l, "BEGIN", "cannot start reading the price book", err);
	if (rc)
		return rc;
	rc = id ? load_version(l, *id, out, err) : load_current(l, out, err);
	rc = ledger_end_tx(l, rc, "cannot finish reading the price book", err);
	if (rc)
		pricebook_release(out);
	return rc;
}

int ledger_pricebook_current(struct ledger *l, struct pricebook *out, struct buf *err)
{
	return read_pricebook(l, NULL, out, err);
}

int ledger_pricebook_for_planning(struct ledger *l, struct pricebook *out, struct buf *err)
{
	pricebook_init(out);
	struct pricebook bundled;
	pricebook_init(&bundled);
	struct buf bundle_err = BUF_INIT;
	int have_bundle = pricebook_load_bundled(&bundled, &bundle_err) == 0 && bundled.effective_date;

	int rc = ledger_exec(l, "BEGIN IMMEDIATE", "cannot start choosing the price book", err);
	struct pricebook current; /* only its header */
	pricebook_init(&current);
	const char *source = NULL, *date = NULL;
	int stored = 0;
	if (!rc) {
		struct buf none = BUF_INIT;
		int cur = current_version(l, &current, &none);
		source = current.source;
		date = current.effective_date;
		if (cur != 0 && cur != EM_ENOTFOUND) {
			rc = em_err(err, cur, "%s", none.s);
		} else if (cur == EM_ENOTFOUND && !have_bundle) {
			rc = em_err(err, EM_ENOTFOUND, "database '%s' holds no price book and the bundled one "
						       "cannot be used: %s",
				    l->path, bundle_err.s);
		} else if (have_bundle && (cur == EM_ENOTFOUND ||
					   (strcmp(source, PRICEBOOK_SOURCE_BUNDLED) == 0 && date &&
					    strcmp(date, bundled.effective_date) < 0))) {
			rc = store_in_tx(l, &bundled, err);
			stored = !rc;
		}
		buf_release(&none);
		if (!rc && !stored)
			rc = load_current(l, out, err);
		rc = ledger_end_tx(l, rc, "cannot commit the price book", err);
	}
	if (!rc && stored) {
		*out = bundled; /* the stored copy is exactly this book; hand it over */
		pricebook_init(&bundled);
	}
	if (rc)
		pricebook_release(out);
	pricebook_release(&current);
	pricebook_release(&bundled);
	buf_release(&bundle_err);
	return rc;
}

/* ---- price book history ---- */

int ledger_pricebook_load(struct ledger *l, int64_t id, struct pricebook *out, struct buf *err)
{
	return read_pricebook(l, &id, out, err);
}

static const struct ledger_column PRICE_VERSION_COLUMNS[] = {
	LEDGER_COLUMN(INT64, struct ledger_price_version, id),
	LEDGER_COLUMN(TEXT, struct ledger_price_version, source),
	LEDGER_COLUMN(TEXT, struct ledger_price_version, effective_date),
	LEDGER_COLUMN(TEXT, struct ledger_price_version, fetched_at),
	LEDGER_COLUMN(TEXT, struct ledger_price_version, created_at),
	LEDGER_COLUMN(INT, struct ledger_price_version, is_current),
	LEDGER_COLUMN(INT64, struct ledger_price_version, n_prices),
};

LEDGER_DEFINE_LIST(ledger_price_versions, ledger_price_versions_free, struct ledger_price_version,
		   PRICE_VERSION_COLUMNS,
		   "SELECT v.id, v.source, v.effective_date, v.fetched_at, v.created_at, v.is_current, "
		   "(SELECT count(*) FROM prices p WHERE p.version_id = v.id) FROM price_versions v ORDER BY v.id",
		   "cannot list the price book versions")

/* ---- realized savings ---- */

static const struct ledger_column COMPLETED_COLUMNS[] = {
	LEDGER_COLUMN(TEXT, struct ledger_completed, volume_id),
	LEDGER_COLUMN(TEXT, struct ledger_completed, completed_at),
	LEDGER_COLUMN(INT64, struct ledger_completed, current_monthly_micro),
	LEDGER_COLUMN(INT64, struct ledger_completed, target_monthly_micro),
};

/* The latest completed row per volume: a later plan's completion supersedes an earlier one. */
LEDGER_DEFINE_LIST(ledger_completed_volumes, ledger_completed_free, struct ledger_completed, COMPLETED_COLUMNS,
		   "SELECT volume_id, completed_at, current_monthly_micro, target_monthly_micro FROM ("
		   " SELECT volume_id, completed_at, current_monthly_micro, target_monthly_micro,"
		   " row_number() OVER (PARTITION BY volume_id ORDER BY completed_at DESC, id DESC) AS rn"
		   " FROM apply_volumes WHERE state = 'completed') WHERE rn = 1 ORDER BY volume_id",
		   "cannot read the completed migrations")
