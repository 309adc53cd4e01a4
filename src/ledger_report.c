/*
 * ledger_report.c - the finance report's reads (see ledger_report.h): volume states from
 * apply_volumes, baselines from the recorded plans' documents (SQLite's JSON functions, so no
 * plan document is parsed in C here), the first apply run.
 *
 * Entry points: ledger_volume_states, ledger_plan_baselines, ledger_first_apply.
 * A volume id appears once in a plan document (plan_file.c refuses duplicates on read; plans
 * are written by ebsmigrate); should one appear twice, its first entry counts.
 * Invariants: read-only; one row per volume_id; money stays integer micro-dollars (plan
 * documents hold cents, converted exactly by money_from_json_usd).
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger_report.h"
#include "ebsmigrate/strmap.h"
#include "ledger_internal.h"

static time_t column_time(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	time_t t = 0;
	if (s && em_parse_time((const char *)s, &t))
		t = 0;
	return t;
}

void ledger_volume_states_free(struct ledger_volume_state *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].volume_id);
		free(s[i].state);
	}
	free(s);
}

int ledger_volume_states(struct ledger *l, struct ledger_volume_state **out, size_t *n, struct buf *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st;
	/* 'planned' rows only announce an intention (a dry run, an unfinished run): a later one must
	 * not hide a completion or a modification in flight. */
	int rc = ledger_prepare(
		l,
		"SELECT volume_id, state, eligible_at, coalesce(completed_at, updated_at), first_current FROM ("
		" SELECT volume_id, state, eligible_at, completed_at, updated_at,"
		" first_value(current_monthly_micro) OVER (PARTITION BY volume_id ORDER BY id) AS first_current,"
		" row_number() OVER (PARTITION BY volume_id"
		"  ORDER BY state = 'planned', updated_at DESC, id DESC) AS rn"
		" FROM apply_volumes) WHERE rn = 1 ORDER BY volume_id",
		&st, err);
	if (rc)
		return rc;
	struct ledger_volume_state *v = NULL;
	size_t alloc = 0;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		XGROW(v, *n, alloc);
		struct ledger_volume_state *r = &v[(*n)++];
		r->volume_id = ledger_column_dup(st, 0);
		r->state = ledger_column_dup(st, 1);
		r->eligible_at = column_time(st, 2);
		r->completed_at = strcmp(r->state ? r->state : "", "completed") == 0 ? column_time(st, 3) : 0;
		r->current_monthly = sqlite3_column_int64(st, 4);
	}
	if (step != SQLITE_DONE) {
		rc = ledger_db_err(l, err, "cannot read the apply ledger's volume states");
		ledger_volume_states_free(v, *n);
		v = NULL;
		*n = 0;
	}
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

static int baseline_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ledger_baseline *)a)->volume_id, ((const struct ledger_baseline *)b)->volume_id);
}

void ledger_baselines_free(struct ledger_baseline *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(b[i].volume_id);
	free(b);
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
int ledger_plan_baselines(struct ledger *l, const char *const *wanted, size_t n_wanted,
			  struct ledger_baseline **out, size_t *n, struct buf *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *plans = NULL, *vols = NULL;
	int rc = ledger_prepare(l, "SELECT id, plan_json, plan_zlib, plan_size FROM plans ORDER BY generated_at, id",
				&plans, err);
	if (!rc)
		rc = ledger_prepare(l, PLAN_VOLUMES_SQL, &vols, err);
	struct strmap want = STRMAP_INIT, seen = STRMAP_INIT;
	for (size_t i = 0; wanted && i < n_wanted; i++)
		strmap_put(&want, wanted[i], i);
	size_t missing = wanted ? want.used : 0; /* distinct ids */
	struct ledger_baseline *b = NULL;
	size_t alloc = 0;
	int step = SQLITE_DONE;
	while (!rc && (!wanted || missing) && (step = sqlite3_step(plans)) == SQLITE_ROW) {
		int64_t plan_id = sqlite3_column_int64(plans, 0);
		char *doc = NULL;
		rc = ledger_plan_document(plans, 1, plan_id, &doc, err);
		if (rc)
			break;
		sqlite3_reset(vols);
		sqlite3_bind_text(vols, 1, doc, -1, SQLITE_STATIC);
		while ((step = sqlite3_step(vols)) == SQLITE_ROW) {
			const char *id = (const char *)sqlite3_column_text(vols, 0);
			size_t at;
			if (!id || strmap_get(&seen, id, &at) || (wanted && !strmap_get(&want, id, &at)))
				continue;
			strmap_put(&seen, id, *n);
			XGROW(b, *n, alloc);
			struct ledger_baseline *r = &b[(*n)++];
			r->volume_id = xstrdup(id);
			r->plan_id = plan_id;
			r->monthly = money_from_json_usd(sqlite3_column_double(vols, 1));
			missing -= wanted != NULL;
		}
		sqlite3_reset(vols); /* releases the bound document before it is freed */
		sqlite3_clear_bindings(vols);
		free(doc);
		if (step != SQLITE_DONE)
			break;
		step = SQLITE_DONE;
	}
	if (!rc && step != SQLITE_DONE)
		rc = ledger_db_err(l, err, "cannot read the baselines of the recorded plans");
	if (rc) {
		ledger_baselines_free(b, *n);
		b = NULL;
		*n = 0;
	} else if (*n > 1) {
		qsort(b, *n, sizeof *b, baseline_cmp);
	}
	sqlite3_finalize(plans);
	sqlite3_finalize(vols);
	strmap_release(&want);
	strmap_release(&seen);
	*out = b;
	return rc;
}

int ledger_first_apply(struct ledger *l, time_t *out, struct buf *err)
{
	*out = 0;
	sqlite3_stmt *st;
	int rc = ledger_prepare(l, "SELECT min(started_at) FROM apply_runs", &st, err);
	if (rc)
		return rc;
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		*out = column_time(st, 0);
	else
		rc = ledger_db_err(l, err, "cannot read the first apply run");
	sqlite3_finalize(st);
	return rc;
}
