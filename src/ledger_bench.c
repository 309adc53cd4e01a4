/*
 * ledger_bench.c - the bench results' SQL (migration 0004; see ledger_bench.h for the write
 * order). Entry points: ledger_bench_run_begin / _output_add / _job_add / _run_finish,
 * ledger_bench_run_ids / _run_load / _run_resolve / _volume_pair / _outputs, and
 * ledger_bench_migration (the apply ledger's view of a volume, for before/after links).
 *
 * Invariants: a job and its series are written in one transaction; a NAN (not reported) is
 * stored as NULL and read back as NAN; a direction without I/O has NULL iops.
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

static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

static void bind_pos_int(sqlite3_stmt *st, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* The run's volume as 8 parameters from first: volume_id, volume_type, volume_size_gib, volume_iops,
 * volume_throughput, instance_type, node, pvc (all NULL without a volume). */
static void bind_volume(sqlite3_stmt *st, int first, const struct bench_run *run)
{
	const struct bench_volume *v = run->has_volume ? &run->volume : NULL;
	ledger_bind_text(st, first, v ? v->volume_id : NULL);
	ledger_bind_text(st, first + 1, v ? v->type : NULL);
	bind_pos_int(st, first + 2, v ? v->size_gib : 0);
	bind_pos_int(st, first + 3, v ? v->iops : 0);
	bind_pos_int(st, first + 4, v ? v->throughput : 0);
	ledger_bind_text(st, first + 5, v ? v->instance_type : NULL);
	ledger_bind_text(st, first + 6, v ? v->node : NULL);
	ledger_bind_text(st, first + 7, v ? v->pvc : NULL);
}

static double column_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

int ledger_bench_run_begin(struct ledger *l, struct bench_run *run, struct buf *err)
{
	char now[21];
	now_text(now);
	if (!run->created_at)
		run->created_at = xstrdup(now);
	if (!run->status)
		run->status = xstrdup("running");
	sqlite3_stmt *st;
	int rc = ledger_prepare(l,
				"INSERT INTO bench_runs (label, source, target, status, created_at, fio_version, options_json, "
				"phase, error, volume_id, volume_type, volume_size_gib, volume_iops, volume_throughput, "
				"instance_type, node, pvc, burst_balance, apply_volume_id) "
				"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
				&st, err);
	if (rc)
		return rc;
	ledger_bind_text(st, 1, run->label);
	ledger_bind_text(st, 2, run->source);
	ledger_bind_text(st, 3, run->target);
	ledger_bind_text(st, 4, run->status);
	ledger_bind_text(st, 5, run->created_at);
	ledger_bind_text(st, 6, run->fio_version);
	ledger_bind_text(st, 7, run->options_json ? run->options_json : "{}");
	ledger_bind_text(st, 8, run->phase);
	ledger_bind_text(st, 9, run->error);
	bind_volume(st, 10, run);
	bind_real(st, 18, run->has_volume ? run->volume.burst_balance : NAN);
	bind_pos_int(st, 19, run->apply_volume_id);
	rc = ledger_step_done(l, st, "cannot record the bench run", err);
	if (!rc)
		run->id = sqlite3_last_insert_rowid(l->db);
	return rc;
}

int ledger_bench_output_add(struct ledger *l, int64_t run_id, const char *fio_json, int64_t *id_out, struct buf *err)
{
	char now[21];
	now_text(now);
	sqlite3_stmt *st;
	int rc = ledger_prepare(l, "INSERT INTO bench_outputs (run_id, fio_json, created_at) VALUES (?, ?, ?)", &st, err);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run_id);
	ledger_bind_text(st, 2, fio_json);
	ledger_bind_text(st, 3, now);
	rc = ledger_step_done(l, st, "cannot record the fio output", err);
	if (!rc && id_out)
		*id_out = sqlite3_last_insert_rowid(l->db);
	return rc;
}

static void bind_dir(sqlite3_stmt *st, int first, const struct fio_dir *d)
{
	if (!d->present) {
		for (int i = 0; i < 9; i++)
			sqlite3_bind_null(st, first + i);
		return;
	}
	sqlite3_bind_double(st, first, d->iops);
	sqlite3_bind_double(st, first + 1, d->mibps);
	sqlite3_bind_int64(st, first + 2, d->ios);
	sqlite3_bind_int64(st, first + 3, d->bytes);
	bind_real(st, first + 4, d->lat.mean);
	bind_real(st, first + 5, d->lat.p50);
	bind_real(st, first + 6, d->lat.p95);
	bind_real(st, first + 7, d->lat.p99);
	bind_real(st, first + 8, d->lat.p99_9);
}

static int insert_job(struct ledger *l, int64_t run_id, int64_t output_id, int seq, struct bench_job *j,
		      struct buf *err)
{
	char now[21];
	now_text(now);
	sqlite3_stmt *st;
	int rc = ledger_prepare(
		l,
		"INSERT INTO bench_jobs (run_id, output_id, seq, name, profile, kind, bs, iodepth, hostname, options_json, "
		"lat_source, error, runtime_ms, "
		"read_iops, read_mibps, read_ios, read_bytes, read_lat_mean_ms, read_lat_p50_ms, read_lat_p95_ms, "
		"read_lat_p99_ms, read_lat_p99_9_ms, "
		"write_iops, write_mibps, write_ios, write_bytes, write_lat_mean_ms, write_lat_p50_ms, write_lat_p95_ms, "
		"write_lat_p99_ms, write_lat_p99_9_ms, "
		"cliff_at_s, cliff_before_iops, cliff_after_iops, created_at) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		&st, err);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run_id);
	bind_pos_int(st, 2, output_id);
	sqlite3_bind_int(st, 3, seq);
	ledger_bind_text(st, 4, j->name);
	ledger_bind_text(st, 5, j->profile);
	ledger_bind_text(st, 6, fio_kind_name(j->kind));
	bind_pos_int(st, 7, j->bs);
	bind_pos_int(st, 8, j->iodepth);
	ledger_bind_text(st, 9, j->hostname);
	ledger_bind_text(st, 10, j->options_json ? j->options_json : "{}");
	ledger_bind_text(st, 11, j->lat_source);
	sqlite3_bind_int(st, 12, j->error);
	sqlite3_bind_int64(st, 13, j->runtime_ms);
	bind_dir(st, 14, &j->read);
	bind_dir(st, 23, &j->write);
	if (j->has_cliff) {
		sqlite3_bind_double(st, 32, j->cliff.at_s);
		sqlite3_bind_double(st, 33, j->cliff.before_iops);
		sqlite3_bind_double(st, 34, j->cliff.after_iops);
	} else {
		sqlite3_bind_null(st, 32);
		sqlite3_bind_null(st, 33);
		sqlite3_bind_null(st, 34);
	}
	ledger_bind_text(st, 35, now);
	rc = ledger_step_done(l, st, "cannot record the bench job", err);
	if (!rc)
		j->id = sqlite3_last_insert_rowid(l->db);
	if (rc || j->series.n == 0)
		return rc;
	rc = ledger_prepare(l, "INSERT INTO bench_series (job_id, t_ms, iops) VALUES (?, ?, ?)", &st, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < j->series.n && !rc; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, j->id);
		sqlite3_bind_int64(st, 2, j->series.t_ms[i]);
		sqlite3_bind_double(st, 3, j->series.iops[i]);
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
	rc = insert_job(l, run_id, output_id, seq, job, err);
	if (!rc)
		rc = ledger_exec(l, "COMMIT", "cannot commit the bench job", err);
	if (rc) {
		ledger_rollback(l);
		job->id = 0;
	}
	return rc;
}

int ledger_bench_run_finish(struct ledger *l, const struct bench_run *run, struct buf *err)
{
	char now[21];
	now_text(now);
	sqlite3_stmt *st;
	/* What was learnt during the run (the node, a scratch volume's id) fills what was unknown. */
	int rc = ledger_prepare(l,
				"UPDATE bench_runs SET status = ?, finished_at = ?, error = ?, "
				"fio_version = COALESCE(?, fio_version), volume_id = COALESCE(volume_id, ?), "
				"volume_type = COALESCE(volume_type, ?), volume_size_gib = COALESCE(volume_size_gib, ?), "
				"volume_iops = COALESCE(volume_iops, ?), volume_throughput = COALESCE(volume_throughput, ?), "
				"instance_type = COALESCE(instance_type, ?), node = COALESCE(node, ?), pvc = COALESCE(pvc, ?) "
				"WHERE id = ?",
				&st, err);
	if (rc)
		return rc;
	ledger_bind_text(st, 1, run->status ? run->status : "ok");
	ledger_bind_text(st, 2, run->finished_at ? run->finished_at : now);
	ledger_bind_text(st, 3, run->error);
	ledger_bind_text(st, 4, run->fio_version);
	bind_volume(st, 5, run);
	sqlite3_bind_int64(st, 13, run->id);
	return ledger_step_done(l, st, "cannot finish the bench run", err);
}

int ledger_bench_run_ids(struct ledger *l, int64_t **ids, size_t *n, struct buf *err)
{
	struct ledger_list list = LEDGER_LIST_INIT(int64_t, NULL);
	int rc = ledger_query_list(l, "SELECT id FROM bench_runs ORDER BY id", ledger_read_int64_into_list, &list,
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
	d->ios = sqlite3_column_int64(st, first + 2);
	d->bytes = sqlite3_column_int64(st, first + 3);
	d->lat.mean = column_real(st, first + 4);
	d->lat.p50 = column_real(st, first + 5);
	d->lat.p95 = column_real(st, first + 6);
	d->lat.p99 = column_real(st, first + 7);
	d->lat.p99_9 = column_real(st, first + 8);
}

static enum fio_kind kind_parse(const char *s)
{
	if (s && strcmp(s, "throughput") == 0)
		return FIO_KIND_THROUGHPUT;
	if (s && strcmp(s, "latency") == 0)
		return FIO_KIND_LATENCY;
	return FIO_KIND_IOPS;
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
	sqlite3_stmt *st;
	int rc = ledger_prepare(l, "SELECT t_ms, iops FROM bench_series WHERE job_id = ? ORDER BY t_ms", &st, err);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, j->id);
	return ledger_rows(l, st, read_sample, &j->series, "cannot read the IOPS series", err);
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
	j->kind = kind_parse((const char *)sqlite3_column_text(st, 3));
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
	return 0;
}

static int load_jobs(struct ledger *l, struct bench_run *r, int with_series, struct buf *err)
{
	sqlite3_stmt *st;
	int rc = ledger_prepare(
		l,
		"SELECT id, name, profile, kind, bs, iodepth, hostname, options_json, lat_source, error, runtime_ms, "
		"read_iops, read_mibps, read_ios, read_bytes, read_lat_mean_ms, read_lat_p50_ms, read_lat_p95_ms, "
		"read_lat_p99_ms, read_lat_p99_9_ms, "
		"write_iops, write_mibps, write_ios, write_bytes, write_lat_mean_ms, write_lat_p50_ms, write_lat_p95_ms, "
		"write_lat_p99_ms, write_lat_p99_9_ms, cliff_at_s, cliff_before_iops, cliff_after_iops "
		"FROM bench_jobs WHERE run_id = ? ORDER BY seq",
		&st, err);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, r->id);
	rc = ledger_rows(l, st, read_job, r, "cannot read the bench jobs", err);
	for (size_t i = 0; !rc && with_series && i < r->n_jobs; i++)
		rc = load_series(l, &r->jobs[i], err);
	return rc;
}

static int read_run(sqlite3_stmt *st, void *run, struct buf *err)
{
	(void)err;
	struct bench_run *out = run;
	out->id = sqlite3_column_int64(st, 0);
	out->label = ledger_column_dup(st, 1);
	out->source = ledger_column_dup(st, 2);
	out->target = ledger_column_dup(st, 3);
	out->status = ledger_column_dup(st, 4);
	out->created_at = ledger_column_dup(st, 5);
	out->finished_at = ledger_column_dup(st, 6);
	out->fio_version = ledger_column_dup(st, 7);
	out->options_json = ledger_column_dup(st, 8);
	out->phase = ledger_column_dup(st, 9);
	out->error = ledger_column_dup(st, 10);
	struct bench_volume *v = &out->volume;
	v->volume_id = ledger_column_dup(st, 11);
	v->type = ledger_column_dup(st, 12);
	v->size_gib = sqlite3_column_int64(st, 13);
	v->iops = sqlite3_column_int64(st, 14);
	v->throughput = sqlite3_column_int64(st, 15);
	v->burst_balance = column_real(st, 16);
	v->instance_type = ledger_column_dup(st, 17);
	v->node = ledger_column_dup(st, 18);
	v->pvc = ledger_column_dup(st, 19);
	out->has_volume = v->volume_id || v->type || v->size_gib || v->iops || v->throughput ||
			  !isnan(v->burst_balance) || v->instance_type || v->node || v->pvc;
	out->apply_volume_id = sqlite3_column_int64(st, 20);
	return 0;
}

int ledger_bench_run_load(struct ledger *l, int64_t id, int with_series, struct bench_run *out, struct buf *err)
{
	bench_run_init(out);
	sqlite3_stmt *st;
	int rc = ledger_prepare(l,
				"SELECT id, label, source, target, status, created_at, finished_at, fio_version, options_json, "
				"phase, error, volume_id, volume_type, volume_size_gib, volume_iops, volume_throughput, "
				"burst_balance, instance_type, node, pvc, apply_volume_id FROM bench_runs WHERE id = ?",
				&st, err);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	rc = ledger_row(l, st, read_run, out, "cannot read the bench run", err);
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
	int64_t id;
	sqlite3_stmt *st;
	int by_id = em_parse_i64(ref, &id) == 0;
	int rc = ledger_prepare(l,
				by_id ? "SELECT id FROM bench_runs WHERE id = ?"
				      : "SELECT id FROM bench_runs WHERE label = ? ORDER BY created_at DESC, id DESC LIMIT 1",
				&st, err);
	if (rc)
		return rc;
	if (by_id)
		sqlite3_bind_int64(st, 1, id);
	else
		ledger_bind_text(st, 1, ref);
	rc = ledger_row(l, st, ledger_read_int64, id_out, "cannot look up the bench run", err);
	if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "no bench run with %s '%s'", by_id ? "id" : "label", ref);
	return rc;
}

static int latest_of_phase(struct ledger *l, const char *volume_id, const char *phase, int64_t *out, struct buf *err)
{
	sqlite3_stmt *st;
	*out = 0;
	int rc = ledger_prepare(l,
				"SELECT id FROM bench_runs WHERE volume_id = ? AND phase = ? AND status IN ('ok', 'interrupted') "
				"ORDER BY created_at DESC, id DESC LIMIT 1",
				&st, err);
	if (rc)
		return rc;
	ledger_bind_text(st, 1, volume_id);
	ledger_bind_text(st, 2, phase);
	rc = ledger_row(l, st, ledger_read_int64, out, "cannot look up the volume's bench runs", err);
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
	sqlite3_stmt *st;
	*n = 0;
	int rc = ledger_prepare(l, "SELECT fio_json FROM bench_outputs WHERE run_id = ? ORDER BY id", &st, err);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run_id);
	struct output_lines lines = {out, n};
	return ledger_rows(l, st, read_output, &lines, "cannot read the fio outputs", err);
}

void ledger_bench_migration_release(struct ledger_bench_migration *m)
{
	free(m->state);
	free(m->target_type);
	free(m->namespace_);
	free(m->pvc);
	memset(m, 0, sizeof *m);
}

static const struct ledger_column MIGRATION_COLUMNS[] = {
	LEDGER_COLUMN(INT64, struct ledger_bench_migration, apply_volume_id),
	LEDGER_COLUMN(TEXT, struct ledger_bench_migration, state),
	LEDGER_COLUMN(TEXT, struct ledger_bench_migration, target_type),
	LEDGER_COLUMN(INT64, struct ledger_bench_migration, target_iops),
	LEDGER_COLUMN(INT64, struct ledger_bench_migration, target_throughput),
	LEDGER_COLUMN(TEXT, struct ledger_bench_migration, namespace_),
	LEDGER_COLUMN(TEXT, struct ledger_bench_migration, pvc),
};

static int read_migration(sqlite3_stmt *st, void *out, struct buf *err)
{
	(void)err;
	ledger_read_columns(st, out, MIGRATION_COLUMNS, sizeof MIGRATION_COLUMNS / sizeof *MIGRATION_COLUMNS);
	return 0;
}

int ledger_bench_migration(struct ledger *l, const char *volume_id, struct ledger_bench_migration *out,
			   struct buf *err)
{
	memset(out, 0, sizeof *out);
	sqlite3_stmt *st;
	int rc = ledger_prepare(l,
				"SELECT id, state, target_type, target_iops, target_throughput, namespace, pvc "
				"FROM apply_volumes WHERE volume_id = ? ORDER BY updated_at DESC, id DESC LIMIT 1",
				&st, err);
	if (rc)
		return rc;
	ledger_bind_text(st, 1, volume_id);
	rc = ledger_row(l, st, read_migration, out, "cannot read the apply ledger", err);
	if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "the apply ledger has no migration of volume '%s'", volume_id);
	return rc;
}
