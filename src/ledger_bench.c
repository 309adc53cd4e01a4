/*
 * ledger_bench.c - the bench results' SQL (migrations 0004, 0008; see ledger_bench.h for the write
 * order). Entry points: ledger_bench_run_begin / _output_add / _job_add / _run_finish,
 * ledger_bench_run_ids / _run_load / _run_resolve / _volume_pair / _outputs, and
 * ledger_bench_migration (the apply ledger's view of a volume, for before/after links).
 *
 * Invariants: a job and its series are written in one transaction; a NAN (not reported) is
 * stored as NULL and read back as NAN, an I/O count fio did not report (-1) as NULL and back as
 * -1; a direction without I/O has NULL iops.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/bench.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger_bench.h"
#include "ledger_internal.h"

static void now_text(char out[static 21])
{
	em_format_time(em_now(), out);
}

/* The run's volume as 8 parameters, in p (room for 9: the list's end too): volume_id,
 * volume_type, volume_size_gib, volume_iops, volume_throughput, instance_type, node, pvc (all NULL
 * without a volume; the numbers NULL when not positive). */
static const struct ledger_param *volume_params(struct ledger_param p[static 9], const struct bench_run *run)
{
	static const struct bench_volume none; /* every field NULL or 0 */
	const struct bench_volume *v = run->has_volume ? &run->volume : &none;
	const struct ledger_param params[] = {
		LP_TEXT(v->volume_id), LP_TEXT(v->type), LP_ID(v->size_gib), LP_ID(v->iops), LP_ID(v->throughput),
		LP_TEXT(v->instance_type), LP_TEXT(v->node), LP_TEXT(v->pvc), {LEDGER_PARAM_END, 0, 0, NULL},
	};
	memcpy(p, params, sizeof params);
	return p;
}

int ledger_bench_run_begin(struct ledger *l, struct bench_run *run, struct buf *err)
{
	char now[21];
	now_text(now);
	if (!run->created_at)
		run->created_at = xstrdup(now);
	if (!run->status)
		run->status = xstrdup("running");
	struct ledger_param volume[9];
	return ledger_insert(l,
			     "INSERT INTO bench_runs (label, source, target, status, created_at, fio_version, options_json, "
			     "phase, error, volume_id, volume_type, volume_size_gib, volume_iops, volume_throughput, "
			     "instance_type, node, pvc, burst_balance, apply_volume_id) "
			     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			     LEDGER_PARAMS(LP_TEXT(run->label), LP_TEXT(run->source), LP_TEXT(run->target),
					   LP_TEXT(run->status), LP_TEXT(run->created_at), LP_TEXT(run->fio_version),
					   LP_TEXT(run->options_json ? run->options_json : "{}"), LP_TEXT(run->phase),
					   LP_TEXT(run->error), LP_LIST(volume_params(volume, run)),
					   LP_REAL(run->has_volume ? run->volume.burst_balance : NAN),
					   LP_ID(run->apply_volume_id)),
			     &run->id, "cannot record the bench run", err);
}

int ledger_bench_output_add(struct ledger *l, int64_t run_id, const char *fio_json, int64_t *id_out, struct buf *err)
{
	char now[21];
	now_text(now);
	return ledger_insert(l, "INSERT INTO bench_outputs (run_id, fio_json, created_at) VALUES (?, ?, ?)",
			     LEDGER_PARAMS(LP_INT64(run_id), LP_TEXT(fio_json), LP_TEXT(now)), id_out,
			     "cannot record the fio output", err);
}

/* A direction's 9 parameters (iops, mibps, ios, bytes, the 5 latencies), in p (room for 10: the
 * list's end too); all NULL for a direction without I/O. */
static const struct ledger_param *dir_params(struct ledger_param p[static 10], const struct fio_dir *d)
{
	static const struct ledger_param unknown = LP_NULL;
	const struct ledger_param ios = LP_INT64(d->ios);
	const struct ledger_param present[] = {
		LP_REAL(d->iops), LP_REAL(d->mibps), d->ios >= 0 ? ios : unknown, LP_INT64(d->bytes), LP_REAL(d->lat.mean),
		LP_REAL(d->lat.p50), LP_REAL(d->lat.p95), LP_REAL(d->lat.p99), LP_REAL(d->lat.p99_9),
		{LEDGER_PARAM_END, 0, 0, NULL},
	};
	static const struct ledger_param absent[] = {
		LP_NULL, LP_NULL, LP_NULL, LP_NULL, LP_NULL, LP_NULL, LP_NULL, LP_NULL, LP_NULL, {LEDGER_PARAM_END, 0, 0, NULL},
	};
	memcpy(p, d->present ? present : absent, sizeof present);
	return p;
}

static int insert_job(struct ledger *l, int64_t run_id, int64_t output_id, int seq, struct bench_job *j,
		      struct buf *err)
{
	char now[21];
	now_text(now);
	struct ledger_param read[10], write[10];
	int rc = ledger_insert(
		l,
		"INSERT INTO bench_jobs (run_id, output_id, seq, name, profile, kind, bs, iodepth, jobs, hostname, options_json, "
		"lat_source, error, runtime_ms, "
		"read_iops, read_mibps, read_ios, read_bytes, read_lat_mean_ms, read_lat_p50_ms, read_lat_p95_ms, "
		"read_lat_p99_ms, read_lat_p99_9_ms, "
		"write_iops, write_mibps, write_ios, write_bytes, write_lat_mean_ms, write_lat_p50_ms, write_lat_p95_ms, "
		"write_lat_p99_ms, write_lat_p99_9_ms, "
		"cliff_at_s, cliff_before_iops, cliff_after_iops, created_at) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		LEDGER_PARAMS(LP_INT64(run_id), LP_ID(output_id), LP_INT64(seq), LP_TEXT(j->name), LP_TEXT(j->profile),
			      LP_TEXT(fio_kind_name(j->kind)), LP_ID(j->bs), LP_ID(j->iodepth), LP_INT64(j->jobs ? j->jobs : 1),
			      LP_TEXT(j->hostname),
			      LP_TEXT(j->options_json ? j->options_json : "{}"), LP_TEXT(j->lat_source), LP_INT64(j->error),
			      LP_INT64(j->runtime_ms), LP_LIST(dir_params(read, &j->read)),
			      LP_LIST(dir_params(write, &j->write)), LP_REAL(j->has_cliff ? j->cliff.at_s : NAN),
			      LP_REAL(j->has_cliff ? j->cliff.before_iops : NAN),
			      LP_REAL(j->has_cliff ? j->cliff.after_iops : NAN), LP_TEXT(now)),
		&j->id, "cannot record the bench job", err);
	if (rc || j->series.n == 0)
		return rc;
	sqlite3_stmt *st;
	rc = ledger_prepare(l, "INSERT INTO bench_series (job_id, t_ms, iops) VALUES (?, ?, ?)", &st, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < j->series.n && !rc; i++) {
		sqlite3_reset(st);
		ledger_bind_params(st, 1, LEDGER_PARAMS(LP_INT64(j->id), LP_INT64(j->series.t_ms[i]),
							LP_REAL(j->series.iops[i])));
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = ledger_db_err(l, err, "cannot record the IOPS series");
	}
	sqlite3_finalize(st);
	return rc;
}

int ledger_bench_job_add(struct ledger *l, int64_t run_id, int64_t output_id, int seq, struct bench_job *job,
			 struct buf *err)
{
	int rc = ledger_exec(l, "BEGIN IMMEDIATE", "cannot start recording a bench job", err);
	if (rc)
		return rc;
	rc = ledger_end_tx(l, insert_job(l, run_id, output_id, seq, job, err), "cannot commit the bench job", err);
	if (rc)
		job->id = 0;
	return rc;
}

int ledger_bench_run_finish(struct ledger *l, const struct bench_run *run, struct buf *err)
{
	char now[21];
	now_text(now);
	struct ledger_param volume[9];
	/* What was learnt during the run (the node, a scratch volume's id) fills what was unknown. */
	return ledger_run(l,
		  "UPDATE bench_runs SET status = ?, finished_at = ?, error = ?, "
		  "fio_version = COALESCE(?, fio_version), volume_id = COALESCE(volume_id, ?), "
		  "volume_type = COALESCE(volume_type, ?), volume_size_gib = COALESCE(volume_size_gib, ?), "
		  "volume_iops = COALESCE(volume_iops, ?), volume_throughput = COALESCE(volume_throughput, ?), "
		  "instance_type = COALESCE(instance_type, ?), node = COALESCE(node, ?), pvc = COALESCE(pvc, ?) "
		  "WHERE id = ?",
		  LEDGER_PARAMS(LP_TEXT(run->status ? run->status : "ok"),
				LP_TEXT(run->finished_at ? run->finished_at : now), LP_TEXT(run->error),
				LP_TEXT(run->fio_version), LP_LIST(volume_params(volume, run)), LP_INT64(run->id)),
		  "cannot finish the bench run", err);
}

int ledger_bench_run_ids(struct ledger *l, int64_t **ids, size_t *n, struct buf *err)
{
	struct ledger_list list = LEDGER_LIST_INIT(int64_t, NULL);
	int rc = ledger_query_list(l, "SELECT id FROM bench_runs ORDER BY id", NULL, ledger_read_int64_into_list, &list,
				   "cannot list the bench runs", err);
	*ids = list.items;
	*n = list.n;
	return rc;
}

static void read_dir(sqlite3_stmt *st, int first, struct fio_dir *d)
{
	memset(d, 0, sizeof *d);
	d->lat.mean = d->lat.p50 = d->lat.p95 = d->lat.p99 = d->lat.p99_9 = NAN;
	if (sqlite3_column_type(st, first) == SQLITE_NULL)
		return;
	d->present = 1;
	d->iops = sqlite3_column_double(st, first);
	d->mibps = sqlite3_column_double(st, first + 1);
	d->ios = sqlite3_column_type(st, first + 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, first + 2);
	d->bytes = sqlite3_column_int64(st, first + 3);
	d->lat.mean = ledger_column_real(st, first + 4);
	d->lat.p50 = ledger_column_real(st, first + 5);
	d->lat.p95 = ledger_column_real(st, first + 6);
	d->lat.p99 = ledger_column_real(st, first + 7);
	d->lat.p99_9 = ledger_column_real(st, first + 8);
}

static int read_sample(sqlite3_stmt *st, void *series, struct buf *err)
{
	(void)err;
	struct fio_series *s = series;
	if (s->n >= s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 256;
		s->t_ms = xrealloc(s->t_ms, s->alloc * sizeof *s->t_ms);
		s->iops = xrealloc(s->iops, s->alloc * sizeof *s->iops);
	}
	s->t_ms[s->n] = sqlite3_column_int64(st, 0);
	s->iops[s->n] = sqlite3_column_double(st, 1);
	s->n++;
	return 0;
}

static int load_series(struct ledger *l, struct bench_job *j, struct buf *err)
{
	return ledger_query_rows(l, "SELECT t_ms, iops FROM bench_series WHERE job_id = ? ORDER BY t_ms",
				 LEDGER_PARAMS(LP_INT64(j->id)), read_sample, &j->series, "cannot read the IOPS series", err);
}

static int read_job(sqlite3_stmt *st, void *run, struct buf *err)
{
	(void)err;
	struct bench_run *r = run;
	XGROW(r->jobs, r->n_jobs, r->alloc_jobs);
	struct bench_job *j = &r->jobs[r->n_jobs++];
	memset(j, 0, sizeof *j);
	j->id = sqlite3_column_int64(st, 0);
	j->name = ledger_column_dup(st, 1);
	j->profile = ledger_column_dup(st, 2);
	j->kind = fio_kind_parse((const char *)sqlite3_column_text(st, 3));
	j->bs = (unsigned)sqlite3_column_int64(st, 4);
	j->iodepth = (unsigned)sqlite3_column_int64(st, 5);
	j->hostname = ledger_column_dup(st, 6);
	j->options_json = ledger_column_dup(st, 7);
	j->lat_source = ledger_column_dup(st, 8);
	j->error = sqlite3_column_int(st, 9);
	j->runtime_ms = sqlite3_column_int64(st, 10);
	read_dir(st, 11, &j->read);
	read_dir(st, 20, &j->write);
	if (sqlite3_column_type(st, 29) != SQLITE_NULL) {
		j->has_cliff = 1;
		j->cliff.at_s = sqlite3_column_double(st, 29);
		j->cliff.before_iops = sqlite3_column_double(st, 30);
		j->cliff.after_iops = sqlite3_column_double(st, 31);
	}
	j->jobs = (unsigned)sqlite3_column_int64(st, 32);
	return 0;
}

static int load_jobs(struct ledger *l, struct bench_run *r, int with_series, struct buf *err)
{
	int rc = ledger_query_rows(
		l,
		"SELECT id, name, profile, kind, bs, iodepth, hostname, options_json, lat_source, error, runtime_ms, "
		"read_iops, read_mibps, read_ios, read_bytes, read_lat_mean_ms, read_lat_p50_ms, read_lat_p95_ms, "
		"read_lat_p99_ms, read_lat_p99_9_ms, "
		"write_iops, write_mibps, write_ios, write_bytes, write_lat_mean_ms, write_lat_p50_ms, write_lat_p95_ms, "
		"write_lat_p99_ms, write_lat_p99_9_ms, cliff_at_s, cliff_before_iops, cliff_after_iops, jobs "
		"FROM bench_jobs WHERE run_id = ? ORDER BY seq",
		LEDGER_PARAMS(LP_INT64(r->id)), read_job, r, "cannot read the bench jobs", err);
	for (size_t i = 0; !rc && with_series && i < r->n_jobs; i++)
		rc = load_series(l, &r->jobs[i], err);
	return rc;
}

static const struct ledger_column RUN_COLUMNS[] = {
	LEDGER_COLUMN(INT64, struct bench_run, id),
	LEDGER_COLUMN(TEXT, struct bench_run, label),
	LEDGER_COLUMN(TEXT, struct bench_run, source),
	LEDGER_COLUMN(TEXT, struct bench_run, target),
	LEDGER_COLUMN(TEXT, struct bench_run, status),
	LEDGER_COLUMN(TEXT, struct bench_run, created_at),
	LEDGER_COLUMN(TEXT, struct bench_run, finished_at),
	LEDGER_COLUMN(TEXT, struct bench_run, fio_version),
	LEDGER_COLUMN(TEXT, struct bench_run, options_json),
	LEDGER_COLUMN(TEXT, struct bench_run, phase),
	LEDGER_COLUMN(TEXT, struct bench_run, error),
	LEDGER_COLUMN(TEXT, struct bench_run, volume.volume_id),
	LEDGER_COLUMN(TEXT, struct bench_run, volume.type),
	LEDGER_COLUMN(INT64, struct bench_run, volume.size_gib),
	LEDGER_COLUMN(INT64, struct bench_run, volume.iops),
	LEDGER_COLUMN(INT64, struct bench_run, volume.throughput),
	LEDGER_COLUMN(REAL, struct bench_run, volume.burst_balance),
	LEDGER_COLUMN(TEXT, struct bench_run, volume.instance_type),
	LEDGER_COLUMN(TEXT, struct bench_run, volume.node),
	LEDGER_COLUMN(TEXT, struct bench_run, volume.pvc),
	LEDGER_COLUMN(INT64, struct bench_run, apply_volume_id),
};

int ledger_bench_run_load(struct ledger *l, int64_t id, int with_series, struct bench_run *out, struct buf *err)
{
	bench_run_init(out);
	int rc = ledger_query_columns(
		l,
		"SELECT id, label, source, target, status, created_at, finished_at, fio_version, options_json, "
		"phase, error, volume_id, volume_type, volume_size_gib, volume_iops, volume_throughput, "
		"burst_balance, instance_type, node, pvc, apply_volume_id FROM bench_runs WHERE id = ?",
		LEDGER_PARAMS(LP_INT64(id)), out, RUN_COLUMNS, LEDGER_N_COLUMNS(RUN_COLUMNS), "cannot read the bench run",
		err);
	const struct bench_volume *v = &out->volume;
	if (!rc)
		out->has_volume = v->volume_id || v->type || v->size_gib || v->iops || v->throughput ||
				  !isnan(v->burst_balance) || v->instance_type || v->node || v->pvc;
	if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "no bench run with id %lld", (long long)id);
	if (!rc)
		rc = load_jobs(l, out, with_series, err);
	if (rc)
		bench_run_release(out);
	return rc;
}

int ledger_bench_run_resolve(struct ledger *l, const char *ref, int64_t *id_out, struct buf *err)
{
	int64_t id = 0;
	int by_id = em_parse_i64(ref, &id) == 0;
	int rc = ledger_query_row(l,
				  by_id ? "SELECT id FROM bench_runs WHERE id = ?"
					: "SELECT id FROM bench_runs WHERE label = ? ORDER BY created_at DESC, id DESC LIMIT 1",
				  by_id ? LEDGER_PARAMS(LP_INT64(id)) : LEDGER_PARAMS(LP_TEXT(ref)), ledger_read_int64, id_out,
				  "cannot look up the bench run", err);
	if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "no bench run with %s '%s'", by_id ? "id" : "label", ref);
	return rc;
}

static int latest_of_phase(struct ledger *l, const char *volume_id, const char *phase, int64_t *out, struct buf *err)
{
	*out = 0;
	int rc = ledger_query_row(l,
				  "SELECT id FROM bench_runs WHERE volume_id = ? AND phase = ? AND status IN ('ok', 'interrupted') "
				  "ORDER BY created_at DESC, id DESC LIMIT 1",
				  LEDGER_PARAMS(LP_TEXT(volume_id), LP_TEXT(phase)), ledger_read_int64, out,
				  "cannot look up the volume's bench runs", err);
	return rc == EM_ENOTFOUND ? 0 : rc; /* none: *out stays 0 */
}

int ledger_bench_volume_pair(struct ledger *l, const char *volume_id, int64_t *before_id, int64_t *after_id,
			     struct buf *err)
{
	int rc = latest_of_phase(l, volume_id, "before", before_id, err);
	if (!rc)
		rc = latest_of_phase(l, volume_id, "after", after_id, err);
	if (!rc && !*before_id && !*after_id)
		rc = em_err(err, EM_ENOTFOUND, "volume '%s' has no finished bench run marked before or after", volume_id);
	return rc;
}

struct output_lines {
	struct buf *out;
	size_t *n;
};

static int read_output(sqlite3_stmt *st, void *ctx, struct buf *err)
{
	(void)err;
	struct output_lines *lines = ctx;
	const unsigned char *s = sqlite3_column_text(st, 0);
	buf_adds(lines->out, s ? (const char *)s : "");
	buf_addc(lines->out, '\n');
	(*lines->n)++;
	return 0;
}

int ledger_bench_outputs(struct ledger *l, int64_t run_id, struct buf *out, size_t *n, struct buf *err)
{
	*n = 0;
	struct output_lines lines = {out, n};
	return ledger_query_rows(l, "SELECT fio_json FROM bench_outputs WHERE run_id = ? ORDER BY id",
				 LEDGER_PARAMS(LP_INT64(run_id)), read_output, &lines, "cannot read the fio outputs", err);
}

void ledger_bench_migration_release(struct ledger_bench_migration *m)
{
	free(m->target_type);
	free(m->namespace_);
	free(m->pvc);
	memset(m, 0, sizeof *m);
}

static const struct ledger_column MIGRATION_COLUMNS[] = {
	LEDGER_COLUMN(INT64, struct ledger_bench_migration, apply_volume_id),
	LEDGER_COLUMN(APPLY_STATE, struct ledger_bench_migration, state),
	LEDGER_COLUMN(TEXT, struct ledger_bench_migration, target_type),
	LEDGER_COLUMN(INT64, struct ledger_bench_migration, target_iops),
	LEDGER_COLUMN(INT64, struct ledger_bench_migration, target_throughput),
	LEDGER_COLUMN(TEXT, struct ledger_bench_migration, namespace_),
	LEDGER_COLUMN(TEXT, struct ledger_bench_migration, pvc),
};

int ledger_bench_migration(struct ledger *l, const char *volume_id, struct ledger_bench_migration *out,
			   struct buf *err)
{
	memset(out, 0, sizeof *out);
	int rc = ledger_query_columns(l,
				      "SELECT id, state, target_type, target_iops, target_throughput, namespace, pvc "
				      "FROM apply_volumes WHERE volume_id = ? ORDER BY updated_at DESC, id DESC LIMIT 1",
				      LEDGER_PARAMS(LP_TEXT(volume_id)), out, MIGRATION_COLUMNS,
				      LEDGER_N_COLUMNS(MIGRATION_COLUMNS), "cannot read the apply ledger", err);
	if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "the apply ledger has no migration of volume '%s'", volume_id);
	return rc;
}
