/*
 * ledger_apply.c - the apply ledger's SQL (see ledger_apply.h for states and the write-first
 * rule). Every save is one IMMEDIATE transaction holding the row and its event, committed
 * before the function returns, so a kill -9 right after it returns loses nothing.
 *
 * A run records its outcome when it ends; one that recorded none is "running" only while some
 * process holds the apply lock, else "interrupted" (ledger_apply_outcome_shown, the one rule for
 * status, metrics and apply's note), and the next apply records it so.
 *
 * The apply lock itself (ledger_apply_lock) is ledger.c's, taken on the file ledger_open opens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger_apply.h"
#include "ledger_internal.h"

void apply_row_release(struct apply_row *r)
{
	free(r->volume_id), free(r->account), free(r->region), free(r->cluster), free(r->namespace_), free(r->pvc);
	free(r->target_type), free(r->target_class);
	free(r->error_code), free(r->error_message);
	memset(r, 0, sizeof *r);
}

static void release_row(void *row)
{
	apply_row_release(row);
}

void apply_rows_free(struct apply_row *rows, size_t n)
{
	EM_RELEASE_ARRAY(rows, n, release_row);
}

/* The parameters of a query whose only one, present when id > 0, is that id: the plan's rows, or
 * else the latest ones (a statement without parameters ignores the binding). */
#define ID_PARAMS(id) LEDGER_PARAMS(LP_INT64(id))

/* Reads the plans row with that id (the latest when id <= 0) through on_row; the query selects
 * COLUMNS. A missing row is EM_ENOTFOUND naming the plan. */
static int read_plan_row(struct ledger *l, int64_t id, const char *columns, ledger_row_fn on_row, void *ctx,
			 struct buf *err)
{
	struct buf sql = BUF_INIT;
	buf_addf(&sql, id > 0 ? "SELECT %s FROM plans WHERE id = ?" : "SELECT %s FROM plans ORDER BY id DESC LIMIT 1",
		 columns);
	int rc = ledger_query_row(l, sql.s, ID_PARAMS(id), on_row, ctx, "cannot read plans", err);
	buf_release(&sql);
	if (rc == EM_ENOTFOUND && id > 0)
		rc = em_err(err, EM_ENOTFOUND, "plan %lld is not in database '%s'", (long long)id, l->path);
	else if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "no plan recorded in database '%s': run 'ebsmigrate plan' first",
			    l->path);
	return rc;
}

struct plan_doc {
	int64_t id;
	char *json;
};

static int read_plan_doc(sqlite3_stmt *st, void *ctx, struct buf *err)
{
	struct plan_doc *d = ctx;
	d->id = sqlite3_column_int64(st, 0);
	return ledger_plan_document(st, 1, d->id, &d->json, err);
}

int ledger_plan_load(struct ledger *l, int64_t id, int64_t *id_out, char **json_out, struct buf *err)
{
	struct plan_doc d = {0, NULL};
	int rc = read_plan_row(l, id, "id, plan_json, plan_zlib, plan_size", read_plan_doc, &d, err);
	if (d.id) { /* a row was read, even if its document was damaged */
		*id_out = d.id;
		*json_out = d.json;
	}
	return rc;
}

static int read_summary(sqlite3_stmt *st, void *ctx, struct buf *err)
{
	struct plan_summary *out = ctx;
	int rc = 0;
	out->id = sqlite3_column_int64(st, 0);
	out->created_at = ledger_column_time(st, 1);
	out->generated_at = ledger_column_time(st, 2);
	const unsigned char *sha = sqlite3_column_text(st, 3);
	if (sha && strlen((const char *)sha) == 64) {
		memcpy(out->sha256, sha, 65);
	} else { /* recorded before migration 0005: hash the document as ledger_plan_record does */
		char *doc = NULL;
		rc = ledger_plan_document(st, 4, out->id, &doc, err);
		if (!rc)
			em_sha256_hex(doc, strlen(doc), out->sha256);
		free(doc);
	}
	return rc;
}

int ledger_plan_summary(struct ledger *l, int64_t id, struct plan_summary *out, struct buf *err)
{
	memset(out, 0, sizeof *out);
	int rc = read_plan_row(l, id, "id, created_at, generated_at, plan_sha256, plan_json, plan_zlib, plan_size",
			       read_summary, out, err);
	if (rc)
		return rc;
	rc = ledger_query_row(l, "SELECT plan_id FROM apply_runs ORDER BY id DESC LIMIT 1", NULL, ledger_read_int64,
			      &out->last_applied_plan_id, "cannot read apply runs", err);
	return rc == EM_ENOTFOUND ? 0 : rc;
}

int ledger_apply_run_begin(struct ledger *l, int64_t plan_id, const char *options_json, int64_t *run_id,
			   struct buf *err)
{
	return ledger_insert(l, "INSERT INTO apply_runs (plan_id, started_at, options_json, pid) VALUES (?, ?, ?, ?)",
			     LEDGER_PARAMS(LP_INT64(plan_id), LP_TIME(em_now()), LP_TEXT(options_json ? options_json : "{}"),
					   LP_INT64(getpid())),
			     run_id, "cannot record the apply run", err);
}

int ledger_apply_run_end(struct ledger *l, int64_t run_id, const char *outcome, struct buf *err)
{
	return ledger_run(l, "UPDATE apply_runs SET finished_at = ?, outcome = ? WHERE id = ?",
			  LEDGER_PARAMS(LP_TIME(em_now()), LP_TEXT(outcome), LP_INT64(run_id)), "cannot finish the apply run",
			  err);
}

void apply_run_release(struct apply_run *r)
{
	free(r->outcome);
	memset(r, 0, sizeof *r);
}

static const struct ledger_column RUN_COLUMNS[] = {
	LEDGER_COLUMN(INT64, struct apply_run, id),
	LEDGER_COLUMN(INT64, struct apply_run, plan_id),
	LEDGER_COLUMN(TIME, struct apply_run, started_at),
	LEDGER_COLUMN(TIME, struct apply_run, finished_at),
	LEDGER_COLUMN(TEXT, struct apply_run, outcome),
};

int ledger_apply_run_latest(struct ledger *l, struct apply_run *out, struct buf *err)
{
	memset(out, 0, sizeof *out);
	int rc = ledger_query_columns(l, "SELECT id, plan_id, started_at, finished_at, outcome FROM apply_runs ORDER BY id "
					 "DESC LIMIT 1",
				      NULL, out, RUN_COLUMNS, LEDGER_N_COLUMNS(RUN_COLUMNS), "cannot read apply runs", err);
	if (rc)
		apply_run_release(out);
	return rc;
}

const char *ledger_apply_outcome_shown(struct ledger *l, const char *recorded)
{
	if (recorded)
		return recorded;
	if (l->apply_locked) /* this process is the apply at work: the run without one is an earlier one */
		return "interrupted";
	/* /proc/locks, not a try-lock: taking the lock even for an instant could refuse an apply
	 * starting at that moment */
	return ledger_apply_lock_holder(l) > 0 ? "running" : "interrupted";
}

int ledger_apply_runs_interrupted(struct ledger *l, size_t *n, struct buf *err)
{
	*n = 0;
	int rc = ledger_run(l, "UPDATE apply_runs SET outcome = 'interrupted' WHERE outcome IS NULL", NULL,
			    "cannot record an interrupted apply run", err);
	if (!rc)
		*n = (size_t)sqlite3_changes(l->db);
	return rc;
}

static const char *const COLS =
	"id, plan_id, run_id, volume_id, account, region, cluster, namespace, pvc, method, state, target_type, "
	"target_iops, target_throughput, target_class, current_monthly_micro, target_monthly_micro, eligible_at, "
	"submitted_at, started_at, completed_at, error_code, error_message, updated_at";

static const struct ledger_column ROW_COLUMNS[] = { /* in COLS order */
	LEDGER_COLUMN(INT64, struct apply_row, id),
	LEDGER_COLUMN(INT64, struct apply_row, plan_id),
	LEDGER_COLUMN(INT64, struct apply_row, run_id),
	LEDGER_COLUMN(TEXT, struct apply_row, volume_id),
	LEDGER_COLUMN(TEXT, struct apply_row, account),
	LEDGER_COLUMN(TEXT, struct apply_row, region),
	LEDGER_COLUMN(TEXT, struct apply_row, cluster),
	LEDGER_COLUMN(TEXT, struct apply_row, namespace_),
	LEDGER_COLUMN(TEXT, struct apply_row, pvc),
	LEDGER_COLUMN(MODIFY_METHOD, struct apply_row, method),
	LEDGER_COLUMN(APPLY_STATE, struct apply_row, state),
	LEDGER_COLUMN(TEXT, struct apply_row, target_type),
	LEDGER_COLUMN(INT64, struct apply_row, target_iops),
	LEDGER_COLUMN(INT64, struct apply_row, target_throughput),
	LEDGER_COLUMN(TEXT, struct apply_row, target_class),
	LEDGER_COLUMN(INT64, struct apply_row, current_monthly),
	LEDGER_COLUMN(INT64, struct apply_row, target_monthly),
	LEDGER_COLUMN(TIME, struct apply_row, eligible_at),
	LEDGER_COLUMN(TIME, struct apply_row, submitted_at),
	LEDGER_COLUMN(TIME, struct apply_row, started_at),
	LEDGER_COLUMN(TIME, struct apply_row, completed_at),
	LEDGER_COLUMN(TEXT, struct apply_row, error_code),
	LEDGER_COLUMN(TEXT, struct apply_row, error_message),
	LEDGER_COLUMN(TIME, struct apply_row, updated_at),
};

static int read_row(sqlite3_stmt *st, void *row, struct buf *err)
{
	(void)err;
	memset(row, 0, sizeof(struct apply_row));
	ledger_read_columns(st, row, ROW_COLUMNS, sizeof ROW_COLUMNS / sizeof *ROW_COLUMNS);
	return 0;
}

static int read_row_into_list(sqlite3_stmt *st, void *list, struct buf *err)
{
	return read_row(st, ledger_list_add(list), err);
}

int ledger_apply_get(struct ledger *l, int64_t plan_id, const char *volume_id, struct apply_row *out,
		     struct buf *err)
{
	struct buf sql = BUF_INIT;
	buf_addf(&sql, "SELECT %s FROM apply_volumes WHERE plan_id = ? AND volume_id = ?", COLS);
	int rc = ledger_query_row(l, sql.s, LEDGER_PARAMS(LP_INT64(plan_id), LP_TEXT(volume_id)), read_row, out,
				  "cannot read the apply ledger", err);
	buf_release(&sql);
	return rc;
}

int ledger_apply_list(struct ledger *l, int64_t plan_id, struct apply_row **rows, size_t *n, struct buf *err)
{
	struct buf sql = BUF_INIT;
	if (plan_id > 0)
		buf_addf(&sql, "SELECT %s FROM apply_volumes WHERE plan_id = ? ORDER BY id", COLS);
	else
		buf_addf(&sql,
			 "SELECT %s FROM apply_volumes a WHERE id = (SELECT MAX(id) FROM apply_volumes b "
			 "WHERE b.volume_id = a.volume_id) ORDER BY id",
			 COLS);
	struct ledger_list list = LEDGER_LIST_INIT(struct apply_row, release_row);
	int rc = ledger_query_list(l, sql.s, ID_PARAMS(plan_id), read_row_into_list, &list, "cannot read the apply ledger",
				   err);
	buf_release(&sql);
	*rows = list.items; /* empty on an error */
	*n = list.n;
	return rc;
}

static int read_start(sqlite3_stmt *st, void *list, struct buf *err)
{
	(void)err;
	*(time_t *)ledger_list_add(list) = ledger_column_time(st, 0);
	return 0;
}

int ledger_apply_starts(struct ledger *l, const char *volume_id, time_t **times, size_t *n, struct buf *err)
{
	struct ledger_list list = LEDGER_LIST_INIT(time_t, NULL);
	int rc = ledger_query_list(l,
				   "SELECT submitted_at FROM apply_volumes WHERE volume_id = ? AND submitted_at IS NOT NULL "
				   "AND state IN ('submitted', 'modifying', 'optimizing', 'completed', 'failed') "
				   "ORDER BY submitted_at",
				   LEDGER_PARAMS(LP_TEXT(volume_id)), read_start, &list, "cannot read the apply ledger", err);
	*times = list.items; /* empty on an error */
	*n = list.n;
	return rc;
}

struct stored_state {
	char *state;
	time_t submitted_at;
};

static int read_stored_state(sqlite3_stmt *st, void *ctx, struct buf *err)
{
	(void)err;
	struct stored_state *s = ctx;
	s->state = ledger_column_dup(st, 0);
	s->submitted_at = ledger_column_time(st, 1);
	return 0;
}

/* expect_state (NULL: unconditional): the row is written only if it still has that state and
 * expect_submitted as submitted_at, checked inside the write transaction. */
static int save_row(struct ledger *l, struct apply_row *r, const char *expect_state, time_t expect_submitted,
		    const char *detail, struct buf *err)
{
	int rc = ledger_exec(l, "BEGIN IMMEDIATE", "cannot start a ledger write", err);
	if (rc)
		return rc;
	struct stored_state stored = {NULL, 0};
	r->updated_at = em_now();
	if (r->id) {
		rc = ledger_query_row(l, "SELECT state, submitted_at FROM apply_volumes WHERE id = ?",
				      LEDGER_PARAMS(LP_INT64(r->id)), read_stored_state, &stored, "cannot read the apply ledger",
				      err);
		if (rc == EM_ENOTFOUND) /* the row is gone: prev stays NULL */
			rc = 0;
		if (!rc && expect_state &&
		    (!stored.state || strcmp(stored.state, expect_state) != 0 || stored.submitted_at != expect_submitted))
			rc = em_err(err, EM_ECONFLICT, "volume '%s': the ledger row changed meanwhile (now %s)", r->volume_id,
				    stored.state ? stored.state : "gone");
	}
	char *prev = stored.state;
	/* The parameters by number: the UPDATE uses some of them, the INSERT all but ?25. */
	if (!rc)
		rc = ledger_insert(
			l,
			r->id ? "UPDATE apply_volumes SET run_id = ?4, state = ?11, eligible_at = ?18, "
				"submitted_at = ?19, started_at = ?20, completed_at = ?21, error_code = ?22, "
				"error_message = ?23, updated_at = ?24, target_class = ?15 WHERE id = ?25"
			      : "INSERT INTO apply_volumes (plan_id, run_id, volume_id, account, region, cluster, "
				"namespace, pvc, method, state, target_type, target_iops, target_throughput, "
				"target_class, current_monthly_micro, target_monthly_micro, eligible_at, submitted_at, "
				"started_at, completed_at, error_code, error_message, updated_at) VALUES "
				"(?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?26, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
				"?21, ?22, ?23, ?24)",
			LEDGER_PARAMS(LP_SKIP, LP_SKIP, LP_INT64(r->plan_id), LP_ID(r->run_id), LP_TEXT(r->volume_id),
				      LP_TEXT(r->account), LP_TEXT(r->region), LP_TEXT(r->cluster), LP_TEXT(r->namespace_),
				      LP_TEXT(r->pvc), LP_TEXT(apply_state_name(r->state)), LP_TEXT(r->target_type),
				      LP_INT64(r->target_iops), LP_INT64(r->target_throughput), LP_TEXT(r->target_class),
				      LP_INT64(r->current_monthly), LP_INT64(r->target_monthly), LP_TIME(r->eligible_at),
				      LP_TIME(r->submitted_at), LP_TIME(r->started_at), LP_TIME(r->completed_at),
				      LP_TEXT(r->error_code), LP_TEXT(r->error_message), LP_TIME(r->updated_at),
				      LP_INT64(r->id), LP_TEXT(modify_method_name(r->method))),
			r->id ? NULL : &r->id, "cannot write the apply ledger", err);
	if (!rc && (!prev || strcmp(prev, apply_state_name(r->state)) != 0 || detail)) {
		rc = ledger_run(l, "INSERT INTO apply_events (apply_volume_id, at, from_state, to_state, detail) "
				   "VALUES (?, ?, ?, ?, ?)",
				LEDGER_PARAMS(LP_INT64(r->id), LP_TIME(r->updated_at), LP_TEXT(prev),
					      LP_TEXT(apply_state_name(r->state)), LP_TEXT(detail)),
				"cannot write the apply ledger", err);
	}
	free(prev);
	return ledger_end_tx(l, rc, "cannot commit the apply ledger", err);
}

int ledger_apply_save(struct ledger *l, struct apply_row *r, const char *detail, struct buf *err)
{
	return save_row(l, r, NULL, 0, detail, err);
}

int ledger_apply_save_if(struct ledger *l, struct apply_row *r, enum apply_state expect_state, time_t expect_submitted,
			 const char *detail, struct buf *err)
{
	return save_row(l, r, apply_state_name(expect_state), expect_submitted, detail, err);
}
