/*
 * ledger_report.c - the finance report's reads (see ledger_report.h): volume states from
 * apply_volumes, baselines from the recorded plans' documents (SQLite's JSON functions, so no
 * plan document is parsed in C here), the first apply run.
 *
 * Entry points: ledger_volume_states, ledger_plan_baselines, ledger_first_apply; for metrics,
 * ledger_plan_volumes (a recorded plan's volumes[], by SQLite's JSON functions too) and
 * ledger_last_runs (the latest inventory run, plan and apply run).
 * A volume id appears once in a plan document (plan_file.c refuses duplicates on read; plans
 * are written by ebsmigrate); should one appear twice, its first entry counts.
 * Invariants: read-only; one row per volume_id; money stays integer micro-dollars (plan
 * documents hold cents, converted exactly by money_from_json_usd).
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger_report.h"
#include "ebsmigrate/strmap.h"
#include "ledger_internal.h"


static void release_volume_state(void *item)
{
	struct ledger_volume_state *s = item;
	free(s->volume_id);
}

void ledger_volume_states_free(struct ledger_volume_state *s, size_t n)
{
	ledger_items_free(s, n, (struct ledger_list)LEDGER_LIST_INIT(*s, release_volume_state));
}

static int read_volume_state(sqlite3_stmt *st, void *list, struct buf *err)
{
	(void)err;
	struct ledger_volume_state *r = ledger_list_add(list);
	r->volume_id = ledger_column_dup(st, 0);
	/* the table's CHECK constraint admits only apply_state's names */
	apply_state_parse((const char *)sqlite3_column_text(st, 1), &r->state);
	r->eligible_at = ledger_column_time(st, 2);
	r->completed_at = r->state == APPLY_COMPLETED ? ledger_column_time(st, 3) : 0;
	r->current_monthly = sqlite3_column_int64(st, 4);
	return 0;
}

int ledger_volume_states(struct ledger *l, struct ledger_volume_state **out, size_t *n, struct buf *err)
{
	struct ledger_list list = LEDGER_LIST_INIT(struct ledger_volume_state, release_volume_state);
	/* 'planned' rows only announce an intention (a dry run, an unfinished run): a later one must
	 * not hide a completion or a modification in flight. */
	int rc = ledger_query_list(
		l,
		"SELECT volume_id, state, eligible_at, coalesce(completed_at, updated_at), first_current FROM ("
		" SELECT volume_id, state, eligible_at, completed_at, updated_at,"
		" first_value(current_monthly_micro) OVER (PARTITION BY volume_id ORDER BY id) AS first_current,"
		" row_number() OVER (PARTITION BY volume_id"
		"  ORDER BY state = 'planned', updated_at DESC, id DESC) AS rn"
		" FROM apply_volumes) WHERE rn = 1 ORDER BY volume_id",
		NULL, read_volume_state, &list, "cannot read the apply ledger's volume states", err);
	*out = list.items;
	*n = list.n;
	return rc;
}

static int baseline_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ledger_baseline *)a)->volume_id, ((const struct ledger_baseline *)b)->volume_id);
}

static void release_baseline(void *item)
{
	free(((struct ledger_baseline *)item)->volume_id);
}

void ledger_baselines_free(struct ledger_baseline *b, size_t n)
{
	ledger_items_free(b, n, (struct ledger_list)LEDGER_LIST_INIT(*b, release_baseline));
}

/* The priced volumes of one plan document (bound as ?1: stored compressed, so inflated first by
 * ledger_plan_document), (volume_id, usd) in document order. */
static const char PLAN_VOLUMES_SQL[] =
	"SELECT json_extract(j.value, '$.volume_id'), json_extract(j.value, '$.current_monthly_usd')"
	" FROM json_each(CASE WHEN json_valid(?1) THEN ?1 ELSE '{}' END, '$.volumes') j"
	" WHERE json_type(j.value, '$.volume_id') = 'text'"
	" AND json_type(j.value, '$.current_monthly_usd') IN ('integer', 'real')"
	" AND abs(json_extract(j.value, '$.current_monthly_usd')) < 1e12";

/* Plans are read oldest first, one at a time, and reading stops once every wanted volume has its
 * baseline: usually the first plan holds them all, so a database with many large plans costs one
 * plan's parse, not all of them. */
struct baselines {
	struct ledger *l;
	sqlite3_stmt *vols; /* PLAN_VOLUMES_SQL, run once per plan */
	struct strmap want, seen;
	const char *const *wanted;
	size_t missing; /* wanted volumes without a baseline yet */
	struct ledger_list list;
	int64_t plan_id; /* the plan whose volumes are being read */
};

/* One volume row of the plan being read (bl->plan_id): its first baseline, when the volume is
 * wanted and has none yet. */
static int read_baseline(sqlite3_stmt *vols, void *ctx, struct buf *err)
{
	(void)err;
	struct baselines *bl = ctx;
	const char *id = (const char *)sqlite3_column_text(vols, 0);
	size_t at;
	if (!id || strmap_get(&bl->seen, id, &at) || (bl->wanted && !strmap_get(&bl->want, id, &at)))
		return 0;
	strmap_put(&bl->seen, id, bl->list.n);
	struct ledger_baseline *r = ledger_list_add(&bl->list);
	r->volume_id = xstrdup(id);
	r->plan_id = bl->plan_id;
	r->monthly = money_from_json_usd(sqlite3_column_double(vols, 1));
	bl->missing -= bl->wanted != NULL;
	return 0;
}

/* One plan's volumes: the first baseline of each (wanted) volume. 1 (stop) once none is missing. */
static int read_plan_baselines(sqlite3_stmt *plans, void *ctx, struct buf *err)
{
	struct baselines *bl = ctx;
	bl->plan_id = sqlite3_column_int64(plans, 0);
	char *doc = NULL;
	int rc = ledger_plan_document(plans, 1, bl->plan_id, &doc, err);
	if (rc)
		return rc;
	sqlite3_reset(bl->vols);
	sqlite3_bind_text(bl->vols, 1, doc, -1, SQLITE_STATIC);
	rc = ledger_rows_kept(bl->l, bl->vols, read_baseline, bl, "cannot read the baselines of the recorded plans", err);
	sqlite3_clear_bindings(bl->vols); /* reset already: the bound document can go */
	free(doc);
	return rc ? rc : bl->wanted && !bl->missing;
}

/* Plans are read oldest first, one at a time, and reading stops once every wanted volume has its
 * baseline: usually the first plan holds them all, so a database with many large plans costs one
 * plan's parse, not all of them. */
int ledger_plan_baselines(struct ledger *l, const char *const *wanted, size_t n_wanted,
			  struct ledger_baseline **out, size_t *n, struct buf *err)
{
	*out = NULL;
	*n = 0;
	struct baselines bl = {l, NULL, STRMAP_INIT, STRMAP_INIT, wanted, 0,
			       LEDGER_LIST_INIT(struct ledger_baseline, release_baseline), 0};
	for (size_t i = 0; wanted && i < n_wanted; i++)
		strmap_put(&bl.want, wanted[i], i);
	bl.missing = wanted ? bl.want.used : 0; /* distinct ids */
	sqlite3_stmt *plans = NULL;
	int rc = ledger_prepare(l, PLAN_VOLUMES_SQL, &bl.vols, err);
	if (!rc && (!wanted || bl.missing))
		rc = ledger_prepare(l, "SELECT id, plan_json, plan_zlib, plan_size FROM plans ORDER BY generated_at, id",
				    &plans, err);
	if (!rc && plans)
		rc = ledger_rows(l, plans, read_plan_baselines, &bl, "cannot read the baselines of the recorded plans",
				 err);
	if (rc > 0) /* stopped early: every wanted volume has its baseline */
		rc = 0;
	struct ledger_baseline *b = bl.list.items;
	if (rc) {
		ledger_baselines_free(b, bl.list.n);
		b = NULL;
	} else {
		*n = bl.list.n;
		if (*n > 1)
			qsort(b, *n, sizeof *b, baseline_cmp);
	}
	sqlite3_finalize(bl.vols);
	strmap_release(&bl.want);
	strmap_release(&bl.seen);
	*out = b;
	return rc;
}

static int read_time(sqlite3_stmt *st, void *out, struct buf *err)
{
	(void)err;
	*(time_t *)out = ledger_column_time(st, 0);
	return 0;
}

int ledger_first_apply(struct ledger *l, time_t *out, struct buf *err)
{
	*out = 0;
	int rc = ledger_query_row(l, "SELECT min(started_at) FROM apply_runs", NULL, read_time, out,
				  "cannot read the first apply run", err);
	if (rc == EM_ENOTFOUND) /* an aggregate always answers one row */
		rc = ledger_db_err(l, err, "cannot read the first apply run");
	return rc;
}

/* ---------------------------------------------------------------- the metrics' reads */

static void release_plan_volume(void *item)
{
	struct ledger_plan_volume *v = item;
	free(v->volume_id), free(v->account), free(v->region), free(v->type), free(v->action);
	free(v->cluster), free(v->namespace_), free(v->pvc), free(v->storage_class);
}

void ledger_plan_volumes_free(struct ledger_plan_volume *v, size_t n)
{
	ledger_items_free(v, n, (struct ledger_list)LEDGER_LIST_INIT(*v, release_plan_volume));
}

/* A member as text only when it is a JSON string; an amount only when it is a number of sane
 * size (plan documents hold cents; anything else is treated as unpriced, as the baselines are). */
#define PV_STR(path) "CASE WHEN json_type(j.value, '" path "') = 'text' THEN json_extract(j.value, '" path "') END"
#define PV_USD(path)                                                                                               \
	"json_type(j.value, '" path "') IN ('integer', 'real') AND abs(json_extract(j.value, '" path "')) < 1e12, "  \
	"json_extract(j.value, '" path "')"
static const char PLAN_DOC_VOLUMES_SQL[] =
	"SELECT " PV_STR("$.volume_id") ", " PV_STR("$.account") ", " PV_STR("$.region") ", " PV_STR("$.type") ", "
	PV_STR("$.action") ", json_type(j.value, '$.kubernetes') = 'object', " PV_STR("$.kubernetes.cluster") ", "
	PV_STR("$.kubernetes.namespace") ", " PV_STR("$.kubernetes.pvc") ", " PV_STR("$.kubernetes.storage_class") ", "
	"CASE WHEN json_type(j.value, '$.size_gib') = 'integer' AND json_extract(j.value, '$.size_gib') BETWEEN 0 AND "
	"1000000000 THEN json_extract(j.value, '$.size_gib') ELSE 0 END, "
	PV_USD("$.current_monthly_usd") ", " PV_USD("$.target_monthly_usd") ", " PV_USD("$.rightsize_monthly_usd")
	" FROM json_each(?1, '$.volumes') j WHERE json_type(j.value, '$.volume_id') = 'text'";

static int read_plan_volume(sqlite3_stmt *st, void *list, struct buf *err)
{
	(void)err;
	struct ledger_plan_volume *v = ledger_list_add(list);
	char **strs[] = {&v->volume_id, &v->account, &v->region, &v->type, &v->action};
	for (int i = 0; i < 5; i++)
		*strs[i] = ledger_column_dup(st, i);
	v->kube = sqlite3_column_int(st, 5);
	char **kube[] = {&v->cluster, &v->namespace_, &v->pvc, &v->storage_class};
	for (int i = 0; i < 4; i++)
		*kube[i] = ledger_column_dup(st, 6 + i);
	v->size_gib = sqlite3_column_int64(st, 10);
	int *priced[] = {&v->current_priced, &v->target_priced, &v->has_rightsize};
	micro_t *money[] = {&v->current_monthly, &v->target_monthly, &v->rightsize_monthly};
	for (int i = 0; i < 3; i++) {
		*priced[i] = sqlite3_column_int(st, 11 + 2 * i);
		*money[i] = *priced[i] ? money_from_json_usd(sqlite3_column_double(st, 12 + 2 * i)) : 0;
	}
	return 0;
}

static int read_int_flag(sqlite3_stmt *st, void *out, struct buf *err)
{
	(void)err;
	*(int *)out = sqlite3_column_int(st, 0);
	return 0;
}

int ledger_plan_volumes(struct ledger *l, int64_t plan_id, const char *doc, struct ledger_plan_volume **out,
			size_t *n, struct buf *err)
{
	*out = NULL;
	*n = 0;
	int valid = 0;
	int rc = ledger_query_row(l, "SELECT json_valid(?1)", LEDGER_PARAMS(LP_DOC(doc)), read_int_flag, &valid,
				  "cannot read a recorded plan", err);
	if (rc)
		return rc == EM_ENOTFOUND ? ledger_db_err(l, err, "cannot read a recorded plan") : rc;
	if (!valid)
		return em_err(err, EM_EINPUT, "database '%s': recorded plan %lld is not valid JSON", l->path,
			      (long long)plan_id);
	struct ledger_list list = LEDGER_LIST_INIT(struct ledger_plan_volume, release_plan_volume);
	rc = ledger_query_list(l, PLAN_DOC_VOLUMES_SQL, LEDGER_PARAMS(LP_DOC(doc)), read_plan_volume, &list,
			       "cannot read the volumes of a recorded plan", err);
	*out = list.items; /* empty on an error */
	*n = list.n;
	return rc;
}

static const struct ledger_column INVENTORY_RUN_COLUMNS[] = {
	LEDGER_COLUMN(TIME, struct ledger_last_runs, inventory_finished),
};
static const struct ledger_column PLAN_RECORDED_COLUMNS[] = {
	LEDGER_COLUMN(TIME, struct ledger_last_runs, plan_recorded),
};
static const struct ledger_column APPLY_RUN_COLUMNS[] = {
	LEDGER_COLUMN(TIME, struct ledger_last_runs, apply_started),
	LEDGER_COLUMN(TIME, struct ledger_last_runs, apply_finished),
	LEDGER_COLUMN(TEXT, struct ledger_last_runs, apply_outcome),
};

int ledger_last_runs(struct ledger *l, struct ledger_last_runs *out, struct buf *err)
{
	memset(out, 0, sizeof *out);
	static const struct {
		const char *sql;
		const struct ledger_column *cols;
		size_t n_cols;
	} q[] = {
		{"SELECT finished_at FROM inventory_runs ORDER BY id DESC LIMIT 1", INVENTORY_RUN_COLUMNS,
		 LEDGER_N_COLUMNS(INVENTORY_RUN_COLUMNS)},
		{"SELECT created_at FROM plans ORDER BY id DESC LIMIT 1", PLAN_RECORDED_COLUMNS,
		 LEDGER_N_COLUMNS(PLAN_RECORDED_COLUMNS)},
		{"SELECT started_at, finished_at, outcome FROM apply_runs ORDER BY id DESC LIMIT 1", APPLY_RUN_COLUMNS,
		 LEDGER_N_COLUMNS(APPLY_RUN_COLUMNS)},
	};
	int rc = 0;
	for (size_t i = 0; !rc && i < sizeof q / sizeof q[0]; i++) {
		rc = ledger_query_columns(l, q[i].sql, NULL, out, q[i].cols, q[i].n_cols, "cannot read the latest runs", err);
		if (rc == EM_ENOTFOUND) /* none recorded */
			rc = 0;
	}
	if (rc)
		ledger_last_runs_release(out);
	return rc;
}

void ledger_last_runs_release(struct ledger_last_runs *r)
{
	free(r->apply_outcome);
	memset(r, 0, sizeof *r);
}
