/*
 * bench.c - benchmark runs: the run/job records, cliff detection on IOPS series, running fio
 * locally, importing fio output (JSON, the normal text output, kubestr's JSON), and judging a
 * before/after pair.
 *
 * Entry points: bench_run_init / bench_run_release / bench_run_add_job, bench_detect_steps /
 * bench_detect_cliff, bench_run_local, bench_find_program, bench_import / bench_log_prefix,
 * bench_compare / bench_comparison_release / bench_comparison_why_not_verified.
 *
 * Cliff detection (a gp2 volume's burst bucket running dry: 3,000 IOPS, then the baseline
 * within one second): for every split point k the median of the m samples before k is compared
 * with the median of the m samples from k (m = clamp(n / 10, 3, 30)); a run of split points
 * where one is at most 70 % of the other is one level change. Inside it the change is placed
 * where it misclassifies the fewest samples against the midpoint of the two levels, so one
 * transitional sample (the second the bucket ran dry in) or fio's odd first sample do not move
 * it. Levels are medians of whole segments between changes. The cliff is the first change down;
 * at_s is the end of the last window at the higher level.
 *
 * Local runs: fio runs as a child in its own process group (so a Ctrl-C reaches us, and we stop
 * fio with SIGINT, then SIGKILL after 10 s), working directory PATH/.ebsmigrate-bench-XXXXXX
 * (test file and logs live there; removed at the end whatever happens). fio writes its report
 * to a file there (--output), read once fio exits; its stdout carries only the status lines of
 * --eta=always, asked for when the caller shows them (bench_local_options.status).
 *
 * Verdicts (docs/bench.md): each job of the after run is bound by its volume's provisioned IOPS
 * (small blocks) or throughput (blocks of 128 KiB or more), unless the volume is gp2. Delivering
 * >= 95 % of it verifies the figure. Delivering less fails the verdict when the volume held the
 * job back: by Little's law (I/Os in flight = jobs x iodepth, over the mean latency) the job could
 * have reached it at the after run's latency with nothing queued (its qd1 job's). Otherwise the
 * figure is left not verified, saying how deep a run would verify it: 7 jobs at queue depth 1 and
 * 2.32 ms reach at most 3,017 IOPS, so they never verify 6,000. The p99 latency may not be above
 * the before run's by more than the larger of --tolerance (default 10 %) and --latency-floor-ms (default 0.2 ms). The
 * comparison passes only when every figure a job was bound by is verified (or waived) and nothing
 * failed; a job fio reported as failed is never judged.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/bench.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/proc.h"
#include "ebsmigrate/strlist.h"

#define DROP_RATIO 0.7
#define FIO_OUTPUT_CAP (256u << 20) /* json+ of a long run is large, not this large */
#define FIO_STDERR_CAP (64u << 10)
#define FIO_REPORT_FILE ".ebsmigrate-fio-report.json" /* fio --output, in the work directory */

/* ---- records ---- */

void bench_run_init(struct bench_run *r)
{
	memset(r, 0, sizeof *r);
	r->volume.burst_balance = NAN;
}

void bench_volume_release(struct bench_volume *v)
{
	EM_FREE_ALL(v->volume_id, v->type, v->instance_type, v->node, v->pvc);
	memset(v, 0, sizeof *v);
	v->burst_balance = NAN;
}

static void job_release(void *p)
{
	struct bench_job *j = p;
	EM_FREE_ALL(j->name, j->profile, j->options_json, j->lat_source, j->hostname);
	fio_series_release(&j->series);
}

void bench_run_release(struct bench_run *r)
{
	EM_FREE_ALL(r->label, r->source, r->target, r->status, r->created_at, r->finished_at, r->fio_version,
		    r->options_json, r->phase, r->error);
	bench_volume_release(&r->volume);
	EM_RELEASE_ARRAY(r->jobs, r->n_jobs, job_release);
	bench_run_init(r);
}

struct bench_job *bench_run_add_job(struct bench_run *r, const struct fio_job *j, struct fio_series *series)
{
	XGROW(r->jobs, r->n_jobs, r->alloc_jobs);
	struct bench_job *b = &r->jobs[r->n_jobs++];
	memset(b, 0, sizeof *b);
	b->name = xstrdup(j->name);
	b->profile = xstrdup(j->profile);
	b->options_json = xstrdup(j->options_json);
	b->lat_source = xstrdup(j->lat_source);
	b->hostname = xstrdup(j->hostname);
	b->kind = j->kind;
	b->bs = j->bs;
	b->iodepth = j->iodepth;
	b->jobs = j->jobs ? j->jobs : 1;
	b->error = j->error;
	b->runtime_ms = j->runtime_ms;
	b->read = j->read;
	b->write = j->write;
	if (series) {
		b->series = *series;
		memset(series, 0, sizeof *series);
	}
	b->has_cliff = bench_detect_cliff(&b->series, &b->cliff);
	return b;
}

/* ---- cliff detection ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(const double *v, size_t n, double *tmp)
{
	if (n == 0)
		return NAN;
	memcpy(tmp, v, n * sizeof *v);
	qsort(tmp, n, sizeof *tmp, cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* -1 when a is a step down from b, +1 a step up, 0 neither. */
static int step_dir(double b, double a)
{
	if (b > 0 && a <= DROP_RATIO * b)
		return -1;
	if (a > 0 && b <= DROP_RATIO * a)
		return 1;
	return 0;
}

size_t bench_detect_steps(const struct fio_series *s, struct bench_step *out, size_t max)
{
	size_t n = s->n;
	if (n < 6)
		return 0;
	size_t m = n / 10;
	m = m < 3 ? 3 : m > 30 ? 30 : m;
	if (n < 2 * m)
		return 0;
	const double *v = s->iops;
	double *tmp = xmalloc(n * sizeof *tmp);
	double *lb = xcalloc(n + 1, sizeof *lb), *la = xcalloc(n + 1, sizeof *la);
	int *dir = xcalloc(n + 1, sizeof *dir);
	for (size_t k = m; k + m <= n; k++) {
		lb[k] = median_of(v + k - m, m, tmp);
		la[k] = median_of(v + k, m, tmp);
		dir[k] = step_dir(lb[k], la[k]);
	}
	size_t *idx = NULL, n_idx = 0, alloc = 0;
	size_t prev = 0;
	for (size_t k = m; k + m <= n;) {
		if (!dir[k]) {
			k++;
			continue;
		}
		int d = dir[k];
		size_t start = k, end = k;
		while (end + 1 + m <= n && dir[end + 1] == d)
			end++;
		/* The two levels: where they differ most. */
		size_t kb = start;
		for (size_t i = start; i <= end; i++) {
			double r = fabs(log((la[i] + 1e-9) / (lb[i] + 1e-9)));
			if (r > fabs(log((la[kb] + 1e-9) / (lb[kb] + 1e-9))))
				kb = i;
		}
		double mid = (lb[kb] + la[kb]) / 2;
		size_t lo = start >= m ? start - m : 0, hi = end + m < n ? end + m : n;
		if (lo < prev)
			lo = prev;
		size_t best = start, best_cost = SIZE_MAX;
		for (size_t j = start; j <= end; j++) {
			size_t cost = 0;
			for (size_t i = lo; i < j; i++)
				cost += d < 0 ? v[i] < mid : v[i] > mid;
			for (size_t i = j; i < hi; i++)
				cost += d < 0 ? v[i] >= mid : v[i] <= mid;
			if (cost < best_cost) {
				best_cost = cost;
				best = j;
			}
		}
		XGROW(idx, n_idx, alloc);
		idx[n_idx++] = best;
		prev = best;
		k = end + 1;
	}
	size_t found = 0;
	for (size_t i = 0; i < n_idx; i++) {
		size_t from = i ? idx[i - 1] : 0, to = i + 1 < n_idx ? idx[i + 1] : n;
		double before = median_of(v + from, idx[i] - from, tmp);
		double after = median_of(v + idx[i], to - idx[i], tmp);
		if (!step_dir(before, after))
			continue; /* the segments do not bear the change out */
		if (found < max) {
			out[found].index = idx[i];
			out[found].at_s = (double)(idx[i] ? s->t_ms[idx[i] - 1] : 0) / 1000.0;
			out[found].before = before;
			out[found].after = after;
		}
		found++;
	}
	free(idx);
	free(tmp);
	free(lb);
	free(la);
	free(dir);
	return found;
}

int bench_detect_cliff(const struct fio_series *s, struct bench_cliff *out)
{
	struct bench_step steps[64];
	size_t n = bench_detect_steps(s, steps, 64);
	for (size_t i = 0; i < n && i < 64; i++) {
		if (steps[i].after < steps[i].before) {
			out->at_s = steps[i].at_s;
			out->before_iops = steps[i].before;
			out->after_iops = steps[i].after;
			return 1;
		}
	}
	return 0;
}

/* ---- before/after links ---- */

int bench_link_migration(const struct bench_store *store, struct bench_run *run, struct buf *err)
{
	struct bench_volume *v = &run->volume;
	int linked = 0;
	if (store && store->link && v->volume_id) {
		int rc = store->link(store->ctx, run, &linked, err);
		if (rc)
			return rc;
	}
	if (!linked && !run->phase && v->type)
		run->phase = xstrdup(strcmp(v->type, "gp2") == 0 ? "before" : "after");
	return 0;
}

int bench_store_begin(const struct bench_store *store, struct bench_run *run, struct buf *err)
{
	return store && store->begin ? store->begin(store->ctx, run, err) : 0;
}

int bench_store_finish(const struct bench_store *store, const struct bench_run *run, int rc, struct buf *err)
{
	if (!store || !store->finish || !run->id)
		return rc;
	struct buf ferr = BUF_INIT;
	int frc = store->finish(store->ctx, run, &ferr);
	if (frc && !rc)
		rc = em_err(err, frc, "%s", ferr.s);
	buf_release(&ferr);
	return rc;
}

/* ---- processes and files ---- */

char *bench_find_program(const char *name)
{
	return proc_find_program(name);
}

/* Runs argv (argv[0] is the program's path) in cwd with stdout and stderr captured (stdout to
 * sink when there is one), in its own process group, stopped through *stop. A program that cannot
 * start in cwd is reported as it always was: as having exited 126 (cwd) or 127 (exec) with the
 * reason on its stderr, which the callers' messages quote. */
static int run_child(struct proc_result *r, char *const argv[], const char *cwd, volatile sig_atomic_t *stop,
		     void (*sink)(void *ctx, const char *data, size_t n), void *sink_ctx, struct buf *err)
{
	struct proc_options o = {
		.path = argv[0], .argv = argv, .cwd = cwd, .stop = stop, .own_group = 1, .default_signals = 1,
		.stdout_cap = FIO_OUTPUT_CAP, .stderr_cap = FIO_STDERR_CAP, .on_stdout = sink, .stdout_ctx = sink_ctx,
	};
	if (proc_run(r, &o) == 0)
		return 0;
	const char *why = strerror(r->start_errno);
	switch (r->start_error) {
	case PROC_START_CWD:
		buf_addf(&r->err, "cannot enter '%s': %s\n", cwd, why);
		r->status = W_EXITCODE(126, 0);
		return 0;
	case PROC_START_EXEC:
		buf_addf(&r->err, "cannot run '%s': %s\n", argv[0], why);
		r->status = W_EXITCODE(127, 0);
		return 0;
	case PROC_START_PIPE:
		proc_result_release(r);
		return em_err(err, EM_EIO, "cannot create a pipe: %s", why);
	default:
		proc_result_release(r);
		return em_err(err, EM_EIO, "cannot start '%s': %s", argv[0], why);
	}
}

/* fio's complaint for messages: its stderr's meaningful lines, joined, bounded. */
static void fio_complaint(struct buf *out, const struct buf *stderr_text, const struct buf *stdout_text)
{
	const struct buf *src = stderr_text->len ? stderr_text : stdout_text;
	size_t added = 0;
	const char *p = src->s;
	while (*p && added < 3) {
		size_t n = strcspn(p, "\n");
		size_t lead = strspn(p, " \t");
		if (n > lead) {
			if (added)
				buf_adds(out, "; ");
			buf_add(out, p + lead, n - lead > 200 ? 200 : n - lead);
			added++;
		}
		p += n + (p[n] == '\n');
	}
	if (!added)
		buf_adds(out, "no message");
}

int bench_log_prefix(struct buf *out, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *hit = NULL;
	for (const char *p = strstr(base, "_iops."); p; p = strstr(p + 1, "_iops."))
		hit = p;
	if (!hit || hit == base)
		return EM_EINPUT;
	const char *rest = hit + 6; /* "log", "N.log", "log.HOST", "N.log.HOST" */
	while (*rest >= '0' && *rest <= '9')
		rest++;
	if (*rest == '.')
		rest++;
	if (strncmp(rest, "log", 3) != 0 || (rest[3] != '\0' && rest[3] != '.'))
		return EM_EINPUT;
	buf_add(out, base, (size_t)(hit - base));
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

/* Reads every IOPS log in dir whose prefix is prefix (a basename) into series, then removes
 * the files (a later fio run in the same directory must not find them). */
static int collect_logs(struct fio_series *series, const char *dir, const char *prefix, struct buf *err)
{
	struct strlist names = STRLIST_INIT_DUP;
	if (fs_list_dir(dir, 0, &names) != 0)
		return 0;
	struct buf name = BUF_INIT, path = BUF_INIT, text = BUF_INIT;
	int rc = 0;
	for (size_t i = 0; !rc && i < names.n; i++) {
		buf_reset(&name);
		if (bench_log_prefix(&name, names.items[i]) || strcmp(name.s, prefix) != 0)
			continue;
		buf_reset(&path);
		buf_addf(&path, "%s/%s", dir, names.items[i]);
		buf_reset(&text);
		rc = em_read_file(path.s, &text, err);
		if (!rc)
			rc = fio_parse_iops_log(series, text.s, text.len, 1000, path.s, err);
		remove(path.s);
	}
	strlist_release(&names);
	buf_release(&name);
	buf_release(&path);
	buf_release(&text);
	return rc;
}

/* Parses the logs given into one series per job of rep, by write_iops_log prefix (a single log
 * and a single job always match). EM_EINPUT for a malformed log or one no job claims. */
static int match_logs(struct fio_series *series, const struct fio_report *rep, const struct bench_log_file *logs,
		      size_t n_logs, struct buf *err)
{
	struct buf prefix = BUF_INIT;
	int rc = 0;
	for (size_t i = 0; !rc && i < n_logs; i++) {
		buf_reset(&prefix);
		int named = bench_log_prefix(&prefix, logs[i].path) == 0;
		size_t hits = 0;
		for (size_t j = 0; j < rep->n_jobs && !rc; j++) {
			const char *want = base_name(rep->jobs[j].iops_log);
			if (!((named && want && strcmp(prefix.s, want) == 0) || (rep->n_jobs == 1 && n_logs == 1 && (!named || !want))))
				continue;
			hits++;
			rc = fio_parse_iops_log(&series[j], logs[i].text, logs[i].len, 1000, logs[i].path, err);
		}
		if (!rc && !hits) {
			struct buf names = BUF_INIT;
			for (size_t j = 0; j < rep->n_jobs; j++)
				buf_addf(&names, "%s%s (%s)", j ? ", " : "", rep->jobs[j].name,
					 rep->jobs[j].iops_log ? rep->jobs[j].iops_log : "no write_iops_log");
			rc = em_err(err, EM_EINPUT, "IOPS log '%s' matches no job's write_iops_log prefix; jobs: %s",
				    logs[i].path, names.s);
			buf_release(&names);
		}
	}
	buf_release(&prefix);
	return rc;
}

int bench_record_report(const struct bench_store *store, struct bench_run *run, const struct fio_report *rep,
			const char *json, size_t json_len, const char *log_dir, const struct bench_log_file *logs, size_t n_logs,
			struct buf *err)
{
	struct fio_series *series = xcalloc(rep->n_jobs + 1, sizeof *series);
	int rc = match_logs(series, rep, logs, n_logs, err);
	for (size_t i = 0; !rc && log_dir && i < rep->n_jobs; i++) {
		const char *log = rep->jobs[i].iops_log;
		if (!log)
			continue;
		struct buf dir = BUF_INIT;
		const char *slash = strrchr(log, '/');
		if (!slash)
			buf_adds(&dir, log_dir);
		else if (log[0] == '/')
			buf_add(&dir, log, (size_t)(slash - log));
		else
			buf_addf(&dir, "%s/%.*s", log_dir, (int)(slash - log), log);
		rc = collect_logs(&series[i], dir.s, base_name(log), err);
		buf_release(&dir);
	}
	int64_t output_id = 0;
	if (!rc && store && store->output) {
		char *doc = xstrndup(json, json_len);
		rc = store->output(store->ctx, run, doc, &output_id, err);
		free(doc);
	}
	for (size_t i = 0; !rc && i < rep->n_jobs; i++) {
		struct bench_job *job = bench_run_add_job(run, &rep->jobs[i], &series[i]);
		if (store && store->job)
			rc = store->job(store->ctx, run, output_id, (int)run->n_jobs, job, err);
	}
	if (!rc && rep->fio_version && !run->fio_version)
		run->fio_version = xstrdup(rep->fio_version);
	for (size_t i = 0; i < rep->n_jobs; i++)
		fio_series_release(&series[i]);
	free(series);
	return rc;
}

int bench_options_begin(struct jsonw *w, struct buf *b, const struct bench_run *run, const struct bench_workload *wl)
{
	if (run->options_json)
		return 0;
	buf_init(b);
	jsonw_init(w, b, JSONW_COMPACT);
	jsonw_object(w);
	if (!wl)
		return 1;
	if (wl->job_file)
		jsonw_key_str(w, "job_file", wl->job_file);
	else if (wl->job_file_text)
		jsonw_key_bool(w, "job_file", 1);
	if (wl->job_file || wl->job_file_text)
		return 1;
	jsonw_key_array(w, "profiles");
	for (size_t i = 0; i < wl->n_profiles; i++)
		jsonw_str(w, wl->profiles[i]->name);
	jsonw_end(w);
	jsonw_key_int(w, "runtime_s", wl->runtime_s);
	struct buf sz = BUF_INIT;
	fio_format_size(&sz, wl->size);
	jsonw_key_str(w, "size", sz.s);
	buf_release(&sz);
	jsonw_key_str(w, "ioengine", "libaio");
	return 1;
}

void bench_options_end(struct jsonw *w, struct buf *b, struct bench_run *run)
{
	jsonw_end(w);
	run->options_json = buf_detach(b);
}

/* Where run's results come from (source), and what the caller has not set: its target (when
 * target is not NULL) and fio's version. */
static void run_from(struct bench_run *run, const char *source, const char *target, const char *fio_version)
{
	free(run->source);
	run->source = xstrdup(source);
	if (target && !run->target)
		run->target = xstrdup(target);
	if (!run->fio_version)
		run->fio_version = xstrdup(fio_version);
}

static void options_json_local(struct bench_run *run, const struct bench_local_options *o, const char *fio)
{
	struct bench_workload wl = {o->job_file, 0, o->profiles, o->n_profiles, o->runtime_s, o->size};
	struct buf b;
	struct jsonw w;
	if (bench_options_begin(&w, &b, run, &wl)) {
		jsonw_key_str(&w, "fio", fio);
		bench_options_end(&w, &b, run);
	}
}

static int check_directory(const char *path, uint64_t need, struct buf *err)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		if (errno == ENOENT)
			return em_err(err, EM_ENOTFOUND, "directory '%s' does not exist", path);
		return em_err(err, EM_EINPUT, "cannot use directory '%s': %s", path, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return em_err(err, EM_EINPUT, "'%s' is not a directory: --local takes the directory to benchmark", path);
	if (access(path, W_OK | X_OK) != 0)
		return em_err(err, EM_EINPUT, "directory '%s' is not writable: %s", path, strerror(errno));
	struct statvfs fs;
	if (need && statvfs(path, &fs) == 0) {
		uint64_t avail = (uint64_t)fs.f_bavail * fs.f_frsize;
		if (avail < need) {
			struct buf a = BUF_INIT, b = BUF_INIT;
			fio_format_size(&a, avail / 1048576 * 1048576);
			fio_format_size(&b, need);
			int rc = em_err(err, EM_EINPUT,
					"directory '%s' has %s free, less than the %s test file: pass a smaller --size", path,
					avail < 1048576 ? "less than 1M" : a.s, b.s);
			buf_release(&a);
			buf_release(&b);
			return rc;
		}
	}
	return 0;
}

int bench_write_keep_json(const char *dir, const char *name, const char *json, size_t len, struct buf *err)
{
	int rc = em_mkdirs(dir, 0755, err);
	if (rc)
		return rc;
	struct buf path = BUF_INIT;
	buf_addf(&path, "%s/%s.json", dir, name);
	rc = em_write_file_atomic(path.s, json, len, 0644, err);
	buf_release(&path);
	return rc;
}

/* fio's stdout while it runs with --eta=always: status lines ended by \r (or \n); each one
 * that parses goes to the caller's status callback. */
struct eta_stream {
	const struct bench_local_options *o;
	const char *what;
	double started;          /* when fio was started */
	struct buf pending;
};

static double mono_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_fio_stdout(void *ctx, const char *data, size_t n)
{
	struct eta_stream *es = ctx;
	for (size_t i = 0; i < n; i++) {
		if (data[i] != '\r' && data[i] != '\n') {
			if (es->pending.len < 4096) /* no status line is this long: the rest is not one */
				buf_addc(&es->pending, data[i]);
			continue;
		}
		struct fio_eta eta;
		if (es->pending.len && fio_parse_eta_line(&eta, es->pending.s, es->pending.len) == 0) {
			es->o->status(es->o->progress_ctx, es->what, &eta, mono_seconds() - es->started);
		}
		buf_reset(&es->pending);
	}
}

/* One fio invocation: job_path in workdir; records what it reports. fio writes its report to
 * a file in workdir (--output), so its stdout carries only the status lines of --eta=always
 * (asked for when the caller shows them) and the report parser gets exactly the report. */
static int run_one(const struct bench_store *store, struct bench_run *run, const char *fio, const char *job_path,
		   const char *what, const char *workdir, const struct bench_local_options *o, struct buf *err)
{
	struct buf output_path = BUF_INIT, output_opt = BUF_INIT;
	buf_addf(&output_path, "%s/" FIO_REPORT_FILE, workdir);
	buf_addf(&output_opt, "--output=%s", output_path.s);
	char *argv[] = {(char *)fio, "--output-format=json", output_opt.s, (char *)job_path, NULL, NULL};
	if (o->status) { /* before the job file: fio reads options first */
		argv[3] = "--eta=always";
		argv[4] = (char *)job_path;
	}
	struct eta_stream es = {o, what, mono_seconds(), BUF_INIT};
	struct proc_result cr;
	unlink(output_path.s);
	int rc = run_child(&cr, argv, workdir, o->stop, o->status ? on_fio_stdout : NULL, &es, err);
	buf_release(&es.pending);
	buf_release(&output_opt);
	if (rc) {
		buf_release(&output_path);
		return rc;
	}
	/* The report replaces what stdout used to carry; fio may not have made it (a bad job). */
	struct buf report = BUF_INIT, rerr = BUF_INIT;
	if (em_read_file(output_path.s, &report, &rerr) == 0 && report.len) {
		buf_reset(&cr.out);
		buf_add(&cr.out, report.s, report.len > FIO_OUTPUT_CAP ? FIO_OUTPUT_CAP : report.len);
	}
	unlink(output_path.s);
	buf_release(&report);
	buf_release(&rerr);
	buf_release(&output_path);
	if (cr.stopped) {
		proc_result_release(&cr);
		return EM_ECONFLICT; /* the caller words it */
	}
	if (cr.status != 0) {
		struct buf why = BUF_INIT, st = BUF_INIT;
		fio_complaint(&why, &cr.err, &cr.out);
		proc_describe_status(&st, cr.status);
		rc = em_err(err, EM_EIO, "fio failed on %s (%s): %s", what, st.s, why.s);
		buf_release(&why);
		buf_release(&st);
		proc_result_release(&cr);
		return rc;
	}
	struct buf origin = BUF_INIT;
	buf_addf(&origin, "fio output of %s", what);
	struct fio_report rep;
	rc = fio_parse_report(&rep, cr.out.s, cr.out.len, origin.s, err);
	buf_release(&origin);
	if (!rc) {
		const char *open = strchr(cr.out.s, '{');
		size_t len = open ? fio_report_extent(cr.out.s, cr.out.len) : 0;
		if (o->keep_json_dir)
			rc = bench_write_keep_json(o->keep_json_dir, what, open, len, err);
		if (!rc)
			rc = bench_record_report(store, run, &rep, open, len, workdir, NULL, 0, err);
		fio_report_release(&rep);
	}
	proc_result_release(&cr);
	return rc;
}

static char *fio_version_of(const char *fio, struct buf *err, int *rc)
{
	char *argv[] = {(char *)fio, "--version", NULL};
	struct proc_result cr;
	*rc = run_child(&cr, argv, NULL, NULL, NULL, NULL, err);
	if (*rc)
		return NULL;
	char *v = NULL;
	if (cr.status == 0 && strncmp(cr.out.s, "fio-", 4) == 0) {
		v = xstrndup(cr.out.s, strcspn(cr.out.s, "\r\n"));
	} else {
		struct buf why = BUF_INIT, st = BUF_INIT;
		fio_complaint(&why, &cr.err, &cr.out);
		proc_describe_status(&st, cr.status);
		*rc = em_err(err, EM_EUNSUPPORTED, "'%s --version' did not print a fio version (%s): %s", fio, st.s, why.s);
		buf_release(&why);
		buf_release(&st);
	}
	proc_result_release(&cr);
	return v;
}

int bench_run_local(const struct bench_store *store, struct bench_run *run, const struct bench_local_options *o,
		    struct buf *err)
{
	if (!o->job_file && (o->n_profiles == 0 || o->runtime_s <= 0 || o->size == 0))
		return em_err(err, EM_EINPUT, "bench run needs at least one profile, a runtime and a size");
	char *fio = bench_find_program(o->fio ? o->fio : "fio");
	if (!fio)
		return em_err(err, EM_EUNSUPPORTED,
			      "fio not found%s: install fio 3.x (e.g. 'apt-get install fio') or pass --fio PATH",
			      o->fio && strchr(o->fio, '/') ? " at that path" : " in PATH");
	int rc = 0;
	char *version = fio_version_of(fio, err, &rc);
	if (rc) {
		free(fio);
		return rc;
	}
	rc = check_directory(o->path, o->job_file ? 0 : o->size, err);
	char *job_abs = NULL;
	if (!rc && o->job_file) {
		job_abs = realpath(o->job_file, NULL);
		if (!job_abs)
			rc = em_err(err, errno == ENOENT ? EM_ENOTFOUND : EM_EINPUT, "cannot read job file '%s': %s",
				    o->job_file, strerror(errno));
	}
	struct buf workdir = BUF_INIT;
	if (!rc) {
		char *abs = realpath(o->path, NULL);
		buf_addf(&workdir, "%s/.ebsmigrate-bench-XXXXXX", abs ? abs : o->path);
		if (!run->target)
			run->target = xstrdup(abs ? abs : o->path);
		free(abs);
		if (!mkdtemp(workdir.s))
			rc = em_err(err, EM_EINPUT, "directory '%s' is not writable: %s", o->path, strerror(errno));
	}
	if (rc) {
		free(fio);
		free(version);
		free(job_abs);
		buf_release(&workdir);
		return rc;
	}
	run_from(run, "local", NULL, version);
	options_json_local(run, o, fio);
	rc = bench_store_begin(store, run, err);

	size_t steps = o->job_file ? 1 : o->n_profiles, done = 0;
	struct buf job = BUF_INIT, job_path = BUF_INIT;
	for (size_t i = 0; !rc && i < steps; i++) {
		const char *what = o->job_file ? "the job file" : o->profiles[i]->name;
		if (o->progress)
			o->progress(o->progress_ctx, what, i, steps);
		if (o->job_file) {
			rc = run_one(store, run, fio, job_abs, "jobs", workdir.s, o, err);
		} else {
			buf_reset(&job);
			struct fio_job_spec spec = {o->profiles[i], o->runtime_s, o->size, NULL, NULL,
						    o->profiles[i]->name, NULL};
			fio_job_file(&job, &spec);
			buf_reset(&job_path);
			buf_addf(&job_path, "%s/%s.fio", workdir.s, o->profiles[i]->name);
			rc = em_write_file_atomic(job_path.s, job.s, job.len, 0644, err);
			if (!rc)
				rc = run_one(store, run, fio, job_path.s, o->profiles[i]->name, workdir.s, o, err);
		}
		if (!rc)
			done++;
		if (!rc && o->stop && *o->stop)
			rc = EM_ECONFLICT;
	}
	fs_remove_tree(workdir.s); /* only what fio made lives there */

	free(run->status);
	if (rc == EM_ECONFLICT) {
		run->status = xstrdup("interrupted");
		buf_reset(&job);
		buf_addf(&job, "interrupted after %zu of %zu %s", done, steps, o->job_file ? "job files" : "profiles");
		free(run->error);
		run->error = xstrdup(job.s);
		em_err(err, EM_ECONFLICT, "%s%s", job.s, done ? "; the finished ones are recorded" : "");
	} else {
		run->status = xstrdup(rc ? "failed" : "ok");
		if (rc) {
			free(run->error);
			run->error = xstrdup(err->s);
		}
	}
	rc = bench_store_finish(store, run, rc, err);
	buf_release(&job);
	buf_release(&job_path);
	buf_release(&workdir);
	free(fio);
	free(version);
	free(job_abs);
	return rc;
}

/* ---- import ---- */

/* fio's words for a failed job: the normal output's, else the errno's. */
static void failed_job_text(struct buf *out, const struct fio_job *j)
{
	buf_adds(out, "fio job '");
	buf_add_visible(out, j->name);
	buf_addf(out, "' failed: error %d (", j->error);
	buf_add_visible(out, j->error_text ? j->error_text : strerror(j->error));
	buf_adds(out, ")");
}

int bench_import(const struct bench_store *store, struct bench_run *run, const char *text, size_t len,
		 const char *origin, const struct bench_log_file *logs, size_t n_logs, struct buf *err)
{
	struct fio_report rep;
	int rc = fio_parse_output(&rep, text, len, origin, err);
	if (rc)
		return rc;
	/* Logs are checked before anything is stored: a bad one stores nothing. */
	struct fio_series *series = xcalloc(rep.n_jobs + 1, sizeof *series);
	rc = match_logs(series, &rep, logs, n_logs, err);
	for (size_t j = 0; j < rep.n_jobs; j++)
		fio_series_release(&series[j]);
	free(series);
	if (rc) {
		fio_report_release(&rep);
		return rc;
	}
	run_from(run, "import", origin, rep.fio_version);
	struct buf b;
	struct jsonw w;
	if (bench_options_begin(&w, &b, run, NULL)) {
		jsonw_key_str(&w, "file", origin);
		if (rep.format != FIO_OUTPUT_JSON)
			jsonw_key_str(&w, "format", fio_output_format_name(rep.format));
		if (rep.storage_class)
			jsonw_key_str(&w, "storage_class", rep.storage_class);
		if (rep.size)
			jsonw_key_str(&w, "size", rep.size);
		if (rep.client_server)
			jsonw_key_bool(&w, "client_server", 1);
		bench_options_end(&w, &b, run);
	}
	/* fio's own report of a failed job is the run's error: stored, never judged */
	struct buf failed = BUF_INIT;
	for (size_t i = 0; i < rep.n_jobs && !failed.len; i++)
		if (rep.jobs[i].error)
			failed_job_text(&failed, &rep.jobs[i]);
	rc = bench_store_begin(store, run, err);
	/* the document as fio printed it: the JSON from its first '{', the normal output whole */
	const char *doc = text;
	size_t ext = len;
	if (rep.format != FIO_OUTPUT_TEXT) {
		doc = memchr(text, '{', len);
		ext = fio_report_extent(doc, len - (size_t)(doc - text));
	}
	if (!rc)
		rc = bench_record_report(store, run, &rep, doc, ext, NULL, logs, n_logs, err);
	if (!rc && failed.len) {
		free(run->error);
		run->error = xstrdup(failed.s);
		rc = em_err(err, EM_EIO, "%s; the run is recorded as failed", failed.s);
	}
	free(run->status);
	run->status = xstrdup(rc ? "failed" : "ok");
	rc = bench_store_finish(store, run, rc, err);
	buf_release(&failed);
	fio_report_release(&rep);
	return rc;
}

/* ---- compare ---- */

const char *bench_verdict_name(enum bench_verdict v)
{
	switch (v) {
	case BENCH_PASS: return "pass";
	case BENCH_FAIL: return "fail";
	case BENCH_NOT_VERIFIED: return "not-verified";
	case BENCH_NOT_JUDGED: break;
	}
	return "not-judged";
}

const char *bench_figure_state_name(enum bench_figure_state s)
{
	switch (s) {
	case BENCH_FIGURE_NOT_VERIFIED: return "not-verified";
	case BENCH_FIGURE_VERIFIED: return "verified";
	case BENCH_FIGURE_MISSED: return "missed";
	case BENCH_FIGURE_WAIVED: return "waived";
	case BENCH_FIGURE_NOT_EXERCISED: break;
	}
	return "not-exercised";
}

double bench_job_iops(const struct bench_job *j)
{
	return (j->read.present ? j->read.iops : 0) + (j->write.present ? j->write.iops : 0);
}

double bench_job_mibps(const struct bench_job *j)
{
	return (j->read.present ? j->read.mibps : 0) + (j->write.present ? j->write.mibps : 0);
}

const struct fio_dir *bench_job_main_dir(const struct bench_job *j)
{
	return j->read.present || !j->write.present ? &j->read : &j->write;
}

unsigned bench_job_in_flight(const struct bench_job *j)
{
	return (j->jobs ? j->jobs : 1) * (j->iodepth ? j->iodepth : 1);
}

static const char *job_key(const struct bench_job *j)
{
	return j->profile ? j->profile : j->name;
}

static const struct bench_job *find_job(const struct bench_run *r, const char *key)
{
	for (size_t i = 0; i < r->n_jobs; i++)
		if (strcmp(job_key(&r->jobs[i]), key) == 0)
			return &r->jobs[i];
	return NULL;
}

static void add_note(struct bench_profile_cmp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(struct bench_profile_cmp *p, const char *fmt, ...)
{
	p->notes = xrealloc(p->notes, (p->n_notes + 1) * sizeof *p->notes);
	va_list ap;
	va_start(ap, fmt);
	p->notes[p->n_notes++] = xstrvfmt(fmt, ap);
	va_end(ap);
}

static void add_check(struct bench_profile_cmp *p, const char *rule, double expected, double actual, int ok,
		      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_check(struct bench_profile_cmp *p, const char *rule, double expected, double actual, int ok,
		      const char *fmt, ...)
{
	p->checks = xrealloc(p->checks, (p->n_checks + 1) * sizeof *p->checks);
	struct bench_check *c = &p->checks[p->n_checks++];
	c->rule = xstrdup(rule);
	c->expected = expected;
	c->actual = actual;
	c->ok = ok;
	va_list ap;
	va_start(ap, fmt);
	c->text = xstrvfmt(fmt, ap);
	va_end(ap);
}

/* Latency for messages: "0.564", "3.39", "12.9", "109.6". */
static const char *ms(char out[static 32], double v)
{
	snprintf(out, 32, v < 1 ? "%.3f" : v < 10 ? "%.2f" : "%.1f", v);
	return out;
}

/* The latency Little's law takes for a job: the mean latency of what it measured, read and write
 * weighted by their IOPS (the median where fio reported no mean; *median says so), rounded as
 * ms() shows it, so the arithmetic a reader does with the message gives the message's numbers
 * (7 / 2.32 ms = 3,017 IOPS). NAN when a direction has no latency at all. */
static double job_latency_ms(const struct bench_job *j, int *median)
{
	const struct fio_dir *dirs[2] = {&j->read, &j->write};
	double sum = 0, weight = 0;
	*median = 0;
	for (int d = 0; d < 2; d++) {
		if (!dirs[d]->present)
			continue;
		double lat = dirs[d]->lat.mean;
		if (isnan(lat)) {
			lat = dirs[d]->lat.p50;
			*median = 1;
		}
		if (isnan(lat) || lat <= 0)
			return NAN;
		sum += dirs[d]->iops * lat;
		weight += dirs[d]->iops;
	}
	if (!(weight > 0))
		return NAN;
	char shown[32];
	return strtod(ms(shown, sum / weight), NULL);
}

/* The after run's latency with nothing queued, for blocks of bs: the lowest of its jobs that kept
 * one I/O in flight (latency-qd1). A deep job's own latency grows with the queue in front of any
 * limit, so by its own latency a volume throttled below its figure would look merely unreached;
 * with nothing queued it shows what the volume does per I/O. NAN when the run has no such job. */
static double unqueued_latency_ms(const struct bench_run *r, unsigned bs)
{
	double best = NAN;
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct bench_job *j = &r->jobs[i];
		int median;
		double lat = j->error || bench_job_in_flight(j) != 1 || (j->bs ? j->bs : 4096) != bs ? NAN
											    : job_latency_ms(j, &median);
		if (!isnan(lat) && (isnan(best) || lat < best))
			best = lat;
	}
	return best;
}

/* A count for a sentence, rounded, with thousands separators ("3,017"). */
static void add_count(struct buf *b, double v)
{
	buf_add_grouped(b, !(v > 0) ? 0 : v > 1e15 ? 1000000000000000ull : (unsigned long long)llround(v));
}

/* The smallest power of two >= n (fio users pick queue depths so). */
static unsigned power_of_two_at_least(double n)
{
	unsigned d = 1;
	while (d < n && d < (1u << 30))
		d <<= 1;
	return d;
}

static void figure_record(struct bench_figure *f, enum bench_figure_state s, const char *by, const char *reason)
{
	if (f->state == BENCH_FIGURE_WAIVED || s < f->state)
		return;
	if (s > f->state) {
		f->state = s;
		free(f->by);
		f->by = s == BENCH_FIGURE_NOT_VERIFIED ? NULL : xstrdup(by);
	}
	if (s == BENCH_FIGURE_NOT_VERIFIED && !f->reason && reason)
		f->reason = xstrdup(reason);
}

/* Rule 1: the after volume delivers what it is provisioned for, where the run could show it. */
static void judge_provisioned(struct bench_comparison *c, struct bench_profile_cmp *p, const struct bench_job *a)
{
	const struct bench_run *after = c->after;
	const struct bench_volume *v = after->has_volume ? &after->volume : NULL;
	if (!v || (!v->iops && !v->throughput)) {
		add_note(p, "the after run's provisioned IOPS and throughput are unknown (--iops/--throughput, or "
			    "--volume with the apply ledger)");
		return;
	}
	if (v->type && strcmp(v->type, "gp2") == 0) {
		add_note(p, "the after volume is gp2: it has a baseline, not provisioned IOPS");
		return;
	}
	int tput = a->kind == FIO_KIND_THROUGHPUT;
	struct bench_figure *f = &c->figures[tput ? BENCH_FIGURE_THROUGHPUT : BENCH_FIGURE_IOPS];
	if (!(tput ? v->throughput : v->iops)) {
		add_note(p, tput ? "the after volume's provisioned throughput is unknown"
				 : "the after volume's provisioned IOPS are unknown");
		return;
	}
	p->figure = tput ? BENCH_FIGURE_THROUGHPUT : BENCH_FIGURE_IOPS;
	if (f->state == BENCH_FIGURE_WAIVED) {
		add_note(p, "the provisioned %s waived (--waive %s)", tput ? "throughput is" : "IOPS are", f->name);
		p->outcome = BENCH_FIGURE_WAIVED;
		return;
	}
	unsigned bs = a->bs ? a->bs : 4096;
	double target, actual;
	if (!tput) {
		target = (double)v->iops;
		if (v->throughput)
			target = fmin(target, (double)v->throughput * 1048576.0 / bs);
		actual = bench_job_iops(a);
	} else {
		target = (double)v->throughput;
		if (v->iops) /* EBS counts I/O in units of at most 256 KiB */
			target = fmin(target, (double)v->iops * fmin(bs, 262144) / 1048576.0);
		actual = bench_job_mibps(a);
	}
	double need = BENCH_PROVISIONED_SHARE * target;
	int ok = actual >= need;
	/* Short of it: could the run have shown it? Little's law on the I/Os it kept in flight. */
	unsigned in_flight = bench_job_in_flight(a);
	int median = 0;
	double own = job_latency_ms(a, &median), unqueued = unqueued_latency_ms(after, bs);
	int queued = !isnan(unqueued) && (isnan(own) || unqueued < own);
	double lat = queued ? unqueued : own;
	double per_io = tput ? bs / 1048576.0 : 1.0; /* MiB or I/Os per completion */
	double reach = isnan(lat) ? NAN : in_flight * per_io * 1000.0 / lat;
	/* Missed only where the volume is shown to be the limit: reachable at the latency with nothing
	 * queued. By its own latency a job's reach is what it did (Little's law holds for the job
	 * itself), so short of the figure it never proves the volume held it back. */
	if (ok || (queued && reach >= need)) {
		if (tput)
			add_check(p, "throughput", need, actual, ok, "%.1f MiB/s %s %.0f %% of %.0f provisioned (%.1f)", actual,
				  ok ? ">=" : "<", BENCH_PROVISIONED_SHARE * 100, target, need);
		else
			add_check(p, "iops", need, actual, ok, "%.0f IOPS %s %.0f %% of %.0f provisioned (%.0f)", actual,
				  ok ? ">=" : "<", BENCH_PROVISIONED_SHARE * 100, target, need);
		p->outcome = ok ? BENCH_FIGURE_VERIFIED : BENCH_FIGURE_MISSED;
		figure_record(f, p->outcome, p->key, NULL);
		if (!ok) {
			char m[32];
			struct buf why = BUF_INIT;
			buf_addf(&why, "%u I/O%s in flight at %s ms%s reach%s ", in_flight, in_flight == 1 ? "" : "s",
				 ms(m, lat), queued ? " (the after run's latency with nothing queued)" : "",
				 in_flight == 1 ? "es" : "");
			add_count(&why, reach);
			buf_addf(&why, "%s: the volume held the job to ", tput ? " MiB/s" : " IOPS");
			add_count(&why, actual);
			buf_adds(&why, tput ? " MiB/s" : " IOPS");
			add_note(p, "%s", why.s);
			buf_release(&why);
		}
		return;
	}
	/* Not reachable: what would verify it is enough I/Os in flight at this latency. */
	struct buf why = BUF_INIT;
	char m[32];
	if (isnan(lat)) {
		buf_addf(&why, "fio reported no latency, so Little's law cannot say whether %u I/O%s in flight reach%s ",
			 in_flight, in_flight == 1 ? "" : "s", in_flight == 1 ? "es" : "");
		add_count(&why, target);
		buf_adds(&why, tput ? " MiB/s" : " IOPS");
	} else {
		buf_addf(&why, "%u I/O%s in flight", in_flight, in_flight == 1 ? "" : "s");
		if (tput) {
			buf_adds(&why, " of ");
			fio_format_size(&why, bs);
		}
		buf_addf(&why, " at %s ms%s reach%s at most ", ms(m, lat),
			 queued   ? " (the after run's latency with nothing queued)"
			 : median ? " (median: fio reported no mean)"
				  : "",
			 in_flight == 1 ? "es" : "");
		add_count(&why, reach);
		if (reach >= need) { /* the job itself kept fewer in flight than it asked for */
			buf_adds(&why, tput ? " MiB/s" : " IOPS");
			buf_adds(&why, " but did ");
			add_count(&why, actual);
			buf_addf(&why, ": fio, not the volume, set its pace (thinktime, rate, CPU); run with a job at "
				       "iodepth 1 beside it, or deeper, to verify ");
		} else {
			buf_addf(&why, "%s; run with iodepth ≥ %u to verify ", tput ? " MiB/s" : " IOPS",
				 power_of_two_at_least(target / per_io * lat / 1000.0));
		}
		add_count(&why, target);
		if (tput)
			buf_adds(&why, " MiB/s");
	}
	p->outcome = BENCH_FIGURE_NOT_VERIFIED;
	p->unreached = buf_detach(&why);
	figure_record(f, BENCH_FIGURE_NOT_VERIFIED, p->key, p->unreached);
}

/* Rule 2: p99 latency not worse than before beyond the rules (the larger of the relative
 * tolerance and the absolute floor), per direction measured on both sides. */
static void judge_p99(struct bench_profile_cmp *p, const struct bench_job *b, const struct bench_job *a,
		      const struct bench_rules *rules)
{
	const char *names[2] = {"read", "write"};
	const struct fio_dir *bd[2] = {&b->read, &b->write}, *ad[2] = {&a->read, &a->write};
	int judged = 0;
	for (int i = 0; i < 2; i++) {
		if (!bd[i]->present || !ad[i]->present)
			continue;
		if (isnan(bd[i]->lat.p99) || isnan(ad[i]->lat.p99)) {
			add_note(p, "%s p99 latency not reported on both sides", names[i]);
			continue;
		}
		double before = bd[i]->lat.p99, actual = ad[i]->lat.p99;
		double relative = before * (1.0 + rules->tolerance_pct / 100.0), floor = before + rules->latency_floor_ms;
		double bound = fmax(relative, floor);
		int ok = actual <= bound;
		char rule[32];
		snprintf(rule, sizeof rule, "%s-p99", names[i]);
		char m1[32], m2[32], m3[32], m4[32];
		if (relative >= floor)
			add_check(p, rule, bound, actual, ok, "%s p99 %s ms %s %.4g %% of %s ms before (%s)", names[i],
				  ms(m1, actual), ok ? "<=" : ">", 100.0 + rules->tolerance_pct, ms(m2, before), ms(m3, bound));
		else
			add_check(p, rule, bound, actual, ok, "%s p99 %s ms %s %s ms before + %s ms floor (%s)", names[i],
				  ms(m1, actual), ok ? "<=" : ">", ms(m2, before), ms(m4, rules->latency_floor_ms),
				  ms(m3, bound));
		judged++;
	}
	if (!judged && !p->n_notes)
		add_note(p, "no direction measured in both runs");
}

/* A job fio reported as failed is never judged: its numbers are not a measurement. */
static int failed_job_note(struct bench_profile_cmp *p, const struct bench_job *j, const char *side)
{
	if (!j || !j->error)
		return 0;
	add_note(p, "fio reported the %s job failed (error %d: %s): not judged", side, j->error, strerror(j->error));
	return 1;
}

int bench_compare(struct bench_comparison *out, const struct bench_run *before, const struct bench_run *after,
		  struct buf *err)
{
	return bench_compare_with(out, before, after, NULL, err);
}

/* The after volume's figures, before any job is judged. */
static void figures_init(struct bench_comparison *c)
{
	const struct bench_volume *v = c->after->has_volume ? &c->after->volume : NULL;
	int gp2 = v && v->type && strcmp(v->type, "gp2") == 0;
	c->figures[BENCH_FIGURE_IOPS].name = "iops";
	c->figures[BENCH_FIGURE_THROUGHPUT].name = "throughput";
	c->figures[BENCH_FIGURE_IOPS].provisioned = v && !gp2 ? v->iops : 0;
	c->figures[BENCH_FIGURE_THROUGHPUT].provisioned = v && !gp2 ? v->throughput : 0;
	if (c->rules.waive & BENCH_WAIVE_IOPS)
		c->figures[BENCH_FIGURE_IOPS].state = BENCH_FIGURE_WAIVED;
	if (c->rules.waive & BENCH_WAIVE_THROUGHPUT)
		c->figures[BENCH_FIGURE_THROUGHPUT].state = BENCH_FIGURE_WAIVED;
}

/* Once every job is judged: a job that could not reach its figure leaves the profile not
 * verified unless another job verified that figure. */
static void settle_profile(struct bench_comparison *c, struct bench_profile_cmp *p)
{
	int failed = 0;
	for (size_t i = 0; i < p->n_checks; i++)
		failed |= !p->checks[i].ok;
	const struct bench_figure *f = p->figure >= 0 ? &c->figures[p->figure] : NULL;
	int unreached = p->outcome == BENCH_FIGURE_NOT_VERIFIED && f;
	if (unreached && f->state == BENCH_FIGURE_VERIFIED) /* the advice is moot: say who verified it */
		add_note(p, "%.*s; the provisioned %s verified by %s", (int)strcspn(p->unreached, ";"), p->unreached,
			 p->figure ? "throughput is" : "IOPS are", f->by);
	else if (unreached)
		add_note(p, "%s", p->unreached);
	p->verdict = failed			       ? BENCH_FAIL
		     : unreached && f->state != BENCH_FIGURE_VERIFIED ? BENCH_NOT_VERIFIED
		     : p->n_checks			       ? BENCH_PASS
							       : BENCH_NOT_JUDGED;
}

int bench_compare_with(struct bench_comparison *out, const struct bench_run *before, const struct bench_run *after,
		       const struct bench_rules *rules, struct buf *err)
{
	static const struct bench_rules defaults = BENCH_RULES_DEFAULT;
	memset(out, 0, sizeof *out);
	out->rules = rules ? *rules : defaults;
	out->before = before;
	out->after = after;
	figures_init(out);
	size_t alloc = 0, common = 0;
	/* The after run's order, then what only the before run has. */
	for (int pass = 0; pass < 2; pass++) {
		const struct bench_run *r = pass == 0 ? after : before;
		for (size_t i = 0; i < r->n_jobs; i++) {
			const char *key = job_key(&r->jobs[i]);
			int seen = 0;
			for (size_t k = 0; k < out->n; k++)
				seen |= strcmp(out->profiles[k].key, key) == 0;
			if (seen)
				continue;
			XGROW(out->profiles, out->n, alloc);
			struct bench_profile_cmp *p = &out->profiles[out->n++];
			memset(p, 0, sizeof *p);
			p->key = xstrdup(key);
			p->after = find_job(after, key);
			p->before = find_job(before, key);
			p->figure = -1;
		}
	}
	for (size_t k = 0; k < out->n; k++) {
		struct bench_profile_cmp *p = &out->profiles[k];
		if (!p->after) {
			add_note(p, "not in the after run (%lld)", (long long)after->id);
			continue;
		}
		if (!p->before)
			add_note(p, "not in the before run (%lld)", (long long)before->id);
		else
			common++;
		if (failed_job_note(p, p->after, "after"))
			continue;
		judge_provisioned(out, p, p->after);
		if (p->before && !failed_job_note(p, p->before, "before"))
			judge_p99(p, p->before, p->after, &out->rules);
	}
	if (!common) {
		struct buf a = BUF_INIT, b = BUF_INIT;
		for (size_t i = 0; i < before->n_jobs; i++)
			buf_addf(&b, "%s%s", i ? ", " : "", job_key(&before->jobs[i]));
		for (size_t i = 0; i < after->n_jobs; i++)
			buf_addf(&a, "%s%s", i ? ", " : "", job_key(&after->jobs[i]));
		int rc = em_err(err, EM_EINPUT, "bench runs %lld and %lld have no profile in common (before: %s; after: %s)",
				(long long)before->id, (long long)after->id, b.len ? b.s : "no jobs", a.len ? a.s : "no jobs");
		buf_release(&a);
		buf_release(&b);
		bench_comparison_release(out);
		return rc;
	}
	int any_pass = 0, any_fail = 0;
	for (size_t k = 0; k < out->n; k++) {
		settle_profile(out, &out->profiles[k]);
		any_pass |= out->profiles[k].verdict == BENCH_PASS;
		any_fail |= out->profiles[k].verdict == BENCH_FAIL;
	}
	int unverified = 0;
	for (int i = 0; i < BENCH_N_FIGURES; i++)
		unverified |= out->figures[i].state == BENCH_FIGURE_NOT_VERIFIED;
	out->verdict = any_fail ? BENCH_FAIL : !unverified && any_pass ? BENCH_PASS : BENCH_NOT_VERIFIED;
	return 0;
}

void bench_comparison_why_not_verified(struct buf *out, const struct bench_comparison *c)
{
	for (int i = 0; i < BENCH_N_FIGURES; i++) {
		const struct bench_figure *f = &c->figures[i];
		if (f->state != BENCH_FIGURE_NOT_VERIFIED)
			continue;
		buf_add_grouped(out, (unsigned long long)(f->provisioned > 0 ? f->provisioned : 0));
		buf_addf(out, " provisioned %s: %s", i == BENCH_FIGURE_IOPS ? "IOPS" : "MiB/s", f->reason ? f->reason : "not reached");
		return;
	}
	buf_adds(out, "nothing could be judged: give the after run's provisioned IOPS and throughput (--iops, --throughput) "
		      "or run both phases with the same profiles");
}

static void check_release(void *p)
{
	struct bench_check *c = p;
	EM_FREE_ALL(c->rule, c->text);
}

static void profile_cmp_release(void *v)
{
	struct bench_profile_cmp *p = v;
	EM_RELEASE_ARRAY(p->checks, p->n_checks, check_release);
	strv_free(p->notes, p->n_notes);
	EM_FREE_ALL(p->key, p->unreached);
}

void bench_comparison_release(struct bench_comparison *c)
{
	EM_RELEASE_ARRAY(c->profiles, c->n, profile_cmp_release);
	for (int i = 0; i < BENCH_N_FIGURES; i++)
		EM_FREE_ALL(c->figures[i].by, c->figures[i].reason);
	memset(c, 0, sizeof *c);
}
