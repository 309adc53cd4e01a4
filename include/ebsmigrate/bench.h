/*
 * bench.h - benchmark runs: what one run measured (jobs, latency percentiles, the IOPS series
 * and its cliff), running fio locally on a directory, importing fio output made elsewhere (JSON,
 * the normal text output, kubestr's JSON), and comparing a before run with an after run into a
 * verdict that says pass only for what the runs could prove (Little's law, docs/bench.md). In-cluster runs: bench_kube.h;
 * writers (table, JSON, markdown, sparkline, SVG): bench_output.h; docs/bench.md for users.
 *
 * Persisting: runners hand the run to a struct bench_store as it progresses (the command's
 * choice: bench_ledger_store records it in the ledger): the run first (status "running"), each
 * fio result as soon as fio returns it, then the final status, so an interrupted or evicted run
 * keeps every profile that finished. The runners themselves know no database.
 *
 * Ownership: struct bench_run owns its strings and jobs; struct bench_job owns its strings and
 * series. Release with bench_run_release. A struct bench_comparison borrows the two runs it was
 * built from (they must outlive it) and owns the rest; release with bench_comparison_release.
 * Functions return 0 or a negative EM_E* code with one message appended to err.
 */
#ifndef EBSMIGRATE_BENCH_H
#define EBSMIGRATE_BENCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/fio.h"

struct ledger;

/* A sustained step down in an IOPS series (gp2's burst-credit cliff). */
struct bench_cliff {
	double at_s;         /* when the lower level began: end of the last window at the higher level */
	double before_iops;  /* median level before the step */
	double after_iops;   /* median level after it (until the next level change) */
};

/* Level changes of a series, up or down (internal detail of the cliff, exposed for tests). */
struct bench_step {
	size_t index;        /* first sample at the new level */
	double at_s, before, after;
};

/* Finds the level changes of s: a change is a point where the median of the following window
 * differs from the median of the preceding window by 30 % or more (after <= 0.7 x before, or
 * the reverse), windows of clamp(n / 10, 3, 30) samples, placed where it best separates the
 * two levels. Returns how many were found (at most max are written). */
size_t bench_detect_steps(const struct fio_series *s, struct bench_step *out, size_t max);
/* The first step down (see bench_detect_steps). Returns 1 with *out filled, or 0 when the
 * series has no sustained step down (also when it is too short: fewer than 6 samples). */
int bench_detect_cliff(const struct fio_series *s, struct bench_cliff *out);

/* What is known about the volume under test; numbers 0 and burst_balance NAN when unknown. */
struct bench_volume {
	char *volume_id, *type, *instance_type, *node, *pvc; /* pvc: "NS/NAME" */
	int64_t size_gib, iops, throughput;
	double burst_balance;
};

struct bench_job {
	int64_t id;              /* ledger id, 0 until recorded */
	char *name, *profile, *options_json, *lat_source, *hostname;
	enum fio_kind kind;
	unsigned bs, iodepth;    /* iodepth: the I/Os each job kept in flight (fio.h) */
	unsigned jobs;           /* the fio jobs this result stands for (group_reporting); 1 otherwise */
	int error;               /* fio's error for the job: it failed, and is never judged */
	int64_t runtime_ms;
	struct fio_dir read, write;
	struct fio_series series; /* IOPS at 1 s; n == 0 when fio logged none */
	int has_cliff;
	struct bench_cliff cliff;
};

struct bench_run {
	int64_t id;              /* ledger id, 0 until recorded */
	char *label;
	char *source;            /* "local", "kube" or "import" */
	char *target;            /* directory, "pvc NS/NAME", "storage-class SC", or the imported file */
	char *status;            /* "running", "ok", "failed", "interrupted" */
	char *created_at, *finished_at;
	char *fio_version;
	char *options_json;      /* how it was run: profiles, runtime, size, job file */
	char *phase;             /* "before", "after" or NULL */
	char *error;             /* why it failed, or NULL */
	int has_volume;
	struct bench_volume volume;
	int64_t apply_volume_id; /* apply_volumes(id) of the migration this run is before/after; 0 = none */
	struct bench_job *jobs;
	size_t n_jobs, alloc_jobs;
};

void bench_run_init(struct bench_run *r);
void bench_run_release(struct bench_run *r);
void bench_volume_release(struct bench_volume *v);
/* Appends a job made from fio's result (copied) and series (moved: *series is left empty), and
 * detects its cliff. Returns the new job. */
struct bench_job *bench_run_add_job(struct bench_run *r, const struct fio_job *j, struct fio_series *series);

/* Where a run's results go as they arrive. The command provides it (bench_ledger_store: the
 * ledger); NULL, or a NULL hook, stores nothing. Runners call begin when the run starts (sets
 * run->id), output then job (numbered seq from 1) for each fio document as fio returns it, and
 * finish once at the end (status, error set), so an interrupted run keeps every profile that
 * finished. link looks up the volume's migration (see bench_link_migration) and sets *linked
 * when there is one. Each hook returns 0 or an EM_E* code with its message in err. */
struct bench_store {
	void *ctx;
	int (*begin)(void *ctx, struct bench_run *run, struct buf *err);
	int (*output)(void *ctx, const struct bench_run *run, const char *json, int64_t *output_id, struct buf *err);
	int (*job)(void *ctx, const struct bench_run *run, int64_t output_id, int seq, struct bench_job *job,
		   struct buf *err);
	int (*finish)(void *ctx, const struct bench_run *run, struct buf *err);
	int (*link)(void *ctx, struct bench_run *run, int *linked, struct buf *err);
};

/* The store that records into the ledger's bench tables (bench_store_ledger.c); db may be NULL
 * (nothing stored, no link). The link fills, from the volume's latest apply ledger row,
 * apply_volume_id, the phase when unset ("after" once the modification is optimizing or
 * completed, else "before") and, for "after", the target type, IOPS and throughput when unset. */
void bench_ledger_store(struct bench_store *store, struct ledger *db);

/* Links run to its volume's migration through store->link and fills what is unknown (above);
 * without one the phase defaults from the type (gp2 before, anything else after). Never fails
 * for a volume the store does not know. */
int bench_link_migration(const struct bench_store *store, struct bench_run *run, struct buf *err);
/* The runners' first and last store calls: begin when store has it; finish when the run was
 * begun, its error (if any) becoming the result when rc is still 0. Returns the new rc. */
int bench_store_begin(const struct bench_store *store, struct bench_run *run, struct buf *err);
int bench_store_finish(const struct bench_store *store, const struct bench_run *run, int rc, struct buf *err);

/* ---- local runs ---- */

struct bench_local_options {
	const char *path;                         /* directory to benchmark */
	const struct fio_profile *const *profiles; /* run in this order */
	size_t n_profiles;
	const char *job_file;                     /* instead of profiles: any fio job file */
	int runtime_s;                            /* per profile */
	uint64_t size;                            /* test file bytes */
	const char *fio;                          /* fio binary; NULL = "fio" from PATH */
	const char *keep_json_dir;                /* copy each fio JSON document here; NULL = no */
	volatile sig_atomic_t *stop;              /* set (by a signal handler) to stop early; may be NULL */
	void (*progress)(void *ctx, const char *what, size_t i, size_t n);
	void *progress_ctx;
	/* fio's own status while a job runs, about once a second (fio --eta=always), with the
	 * seconds since that fio started; NULL = fio is not asked for it. Called with progress_ctx. */
	void (*status)(void *ctx, const char *what, const struct fio_eta *eta, double elapsed_s);
};

/* Checks that fio runs and that path is a writable directory with room for the test file,
 * then runs fio once per profile (or once on the job file) with its working directory in a
 * fresh PATH/.ebsmigrate-bench-XXXXXX, handing results to store (may be NULL) as results arrive, and
 * removes that directory (test file, logs) at the end, also on failure or interruption.
 * run must be initialised with label/phase/volume/options set; this sets source, target,
 * fio_version, status, jobs and (with a store that sets it) id. EM_ENOTFOUND (fio missing, path missing),
 * EM_EINPUT (path not a directory, not writable, too small), EM_EIO (fio failed: its stderr is
 * quoted), EM_ECONFLICT when stopped (the message says how many profiles were kept). */
int bench_run_local(const struct bench_store *store, struct bench_run *run, const struct bench_local_options *o,
		    struct buf *err);

/* Path of an executable named name (or name itself when it holds a '/'), NULL when not found.
 * Caller frees. */
char *bench_find_program(const char *name);

/* ---- import ---- */

struct bench_log_file {
	const char *path;        /* for messages and for matching: PREFIX_iops[.N].log[.HOST] */
	const char *text;
	size_t len;
};

/* Parses fio output (fio_parse_output: JSON, json+, the normal text output, kubestr's JSON) and
 * attaches IOPS logs to the jobs whose write_iops_log prefix they carry (a single log and a single
 * job always match), then hands it to store (may be NULL) with the document itself (the JSON from
 * its first '{'; text as given). EM_EINPUT for malformed output/logs or a log that matches no job.
 * A job fio reports as failed (its "error", err=) is stored with it and the run as "failed" with
 * fio's error as the run's: EM_EIO "fio job 'NAME' failed: error 22 (Invalid argument); the run
 * is recorded as failed". */
int bench_import(const struct bench_store *store, struct bench_run *run, const char *text, size_t len,
		 const char *origin, const struct bench_log_file *logs, size_t n_logs, struct buf *err);

/* Records one fio document of run (the runners' common step): the raw JSON (to store), then
 * each job with the series of its IOPS logs, taken from logs (matched by write_iops_log prefix,
 * as bench_import does) and from log_dir (files PREFIX_iops*.log there, removed once read; NULL
 * = none). Sets run->fio_version when unset. */
int bench_record_report(const struct bench_store *store, struct bench_run *run, const struct fio_report *rep,
			const char *json, size_t json_len, const char *log_dir, const struct bench_log_file *logs, size_t n_logs,
			struct buf *err);

/* Writes a fio document (json, len bytes) to DIR/NAME.json, creating dir (--keep-json). */
int bench_write_keep_json(const char *dir, const char *name, const char *json, size_t len, struct buf *err);

/* What a run executes, as its stored options (bench_runs.options_json) name it: a job file (its
 * path, or job_file_text set for one given as text) or profiles with their runtime and file size. */
struct bench_workload {
	const char *job_file;
	int job_file_text;
	const struct fio_profile *const *profiles;
	size_t n_profiles;
	int runtime_s;
	uint64_t size;
};
/* Every writer of a run's stored options starts and ends here. Unless run has its options already
 * (returns 0: nothing to write), opens the compact object in b (initialised here) with wl's
 * members: "job_file" (the path, or true), or "profiles" (their names), "runtime_s", "size" (in
 * fio's notation) and "ioengine"; none when wl is NULL (an imported run). Returns 1: the caller
 * adds its own members, then bench_options_end sets run->options_json. */
struct jsonw;
int bench_options_begin(struct jsonw *w, struct buf *b, const struct bench_run *run, const struct bench_workload *wl);
void bench_options_end(struct jsonw *w, struct buf *b, struct bench_run *run);

/* Splits a log prefix out of a log file name: "/x/randread-qd32_iops.1.log" -> "randread-qd32".
 * Appends to out; 0, or EM_EINPUT when the name is not an IOPS log's. */
int bench_log_prefix(struct buf *out, const char *path);

/* ---- compare ---- */

/* A profile's verdict, and the comparison's (never BENCH_NOT_JUDGED: what could not be judged
 * is not verified). */
enum bench_verdict { BENCH_NOT_JUDGED = 0, BENCH_PASS, BENCH_FAIL, BENCH_NOT_VERIFIED };
const char *bench_verdict_name(enum bench_verdict v); /* "not-judged", "pass", "fail", "not-verified" */

/* The rules (docs/bench.md): */
#define BENCH_PROVISIONED_SHARE 0.95 /* deliver >= 95 % of provisioned IOPS / throughput */
#define BENCH_DEFAULT_TOLERANCE_PCT 10.0  /* --tolerance: relative p99 change that is no regression */
#define BENCH_DEFAULT_LATENCY_FLOOR_MS 0.2 /* --latency-floor-ms: absolute p99 change that is none */

struct bench_check {
	char *rule;              /* "iops", "throughput", "read-p99", "write-p99" */
	double expected;         /* the bound: minimum for iops/throughput, maximum for p99 */
	double actual;
	int ok;
	char *text;              /* "3001 IOPS >= 95 % of 3000 provisioned (2850)" */
};

/* The after volume's provisioned figures, and what the after run proved of each. A job is bound
 * by the figure that limits it at its block size (IOPS for small blocks, throughput for large);
 * it verifies that figure by delivering >= 95 % of it. One that delivered less could have reached
 * it or not, by Little's law: IOPS <= I/Os in flight / mean latency, the latency being the job's
 * own or, when lower, the after run's with nothing queued (a job with one I/O in flight and the
 * same block size). Reachable at that unqueued latency and missed fails the verdict (the volume
 * held the job back); otherwise the figure is left not verified (by its own latency a job reaches
 * just what it did, so it cannot show who held it back). */
enum bench_figure_state {
	BENCH_FIGURE_NOT_EXERCISED = 0, /* no judged job of the after run is bound by it */
	BENCH_FIGURE_NOT_VERIFIED,      /* the jobs bound by it could not reach it */
	BENCH_FIGURE_VERIFIED,          /* a job delivered >= 95 % of it */
	BENCH_FIGURE_MISSED,            /* a job could reach it and did not */
	BENCH_FIGURE_WAIVED,            /* --waive: not required */
};
/* "not-exercised", "not-verified", "verified", "missed", "waived" */
const char *bench_figure_state_name(enum bench_figure_state s);

enum { BENCH_FIGURE_IOPS = 0, BENCH_FIGURE_THROUGHPUT, BENCH_N_FIGURES };
struct bench_figure {
	const char *name;        /* "iops", "throughput" (static) */
	int64_t provisioned;     /* IOPS or MiB/s; 0 when unknown or not provisioned (a gp2 after volume) */
	enum bench_figure_state state;
	char *by;                /* the profile that verified or missed it, else NULL */
	char *reason;            /* not verified: why, and what would verify it (from the first job bound by it) */
};

struct bench_profile_cmp {
	char *key;               /* the profile, or the job name for custom jobs */
	const struct bench_job *before, *after; /* borrowed; either may be NULL (not in both runs) */
	struct bench_check *checks;
	size_t n_checks;
	enum bench_verdict verdict;
	char **notes;            /* why something was not judged or verified */
	size_t n_notes;
	int figure;              /* the BENCH_FIGURE_* its after job is bound by, -1 for none */
	enum bench_figure_state outcome; /* what that job did for it */
	char *unreached;         /* outcome not verified: the Little's-law sentence */
};

/* How much worse an after p99 may be than the before p99 and still pass: the larger of
 * tolerance_pct percent of it and latency_floor_ms milliseconds (so 0.112 -> 0.134 ms, noise on
 * a fast volume, is no regression). Both 0: any increase is one. waive: provisioned figures that
 * need not be verified (--waive iops|throughput), a BENCH_WAIVE_* set. */
#define BENCH_WAIVE_IOPS 1u
#define BENCH_WAIVE_THROUGHPUT 2u
struct bench_rules {
	double tolerance_pct;
	double latency_floor_ms;
	unsigned waive;
};
#define BENCH_RULES_DEFAULT {BENCH_DEFAULT_TOLERANCE_PCT, BENCH_DEFAULT_LATENCY_FLOOR_MS, 0}

struct bench_comparison {
	const struct bench_run *before, *after; /* borrowed */
	struct bench_rules rules;   /* the rules it was judged by */
	struct bench_profile_cmp *profiles;
	size_t n;
	struct bench_figure figures[BENCH_N_FIGURES];
	/* fail when a check failed (a reachable figure missed, a p99 regression); else not-verified
	 * when a figure a job was bound by stayed unverified, or nothing was judged; else pass */
	enum bench_verdict verdict;
};

/* Matches jobs by profile (else by job name) and judges each pair. EM_EINPUT when the runs
 * have no profile or job in common. */
int bench_compare(struct bench_comparison *out, const struct bench_run *before, const struct bench_run *after,
		  struct buf *err);
/* The same with explicit rules (bench_compare uses BENCH_RULES_DEFAULT); rules may be NULL. */
int bench_compare_with(struct bench_comparison *out, const struct bench_run *before, const struct bench_run *after,
		       const struct bench_rules *rules, struct buf *err);
void bench_comparison_release(struct bench_comparison *c);
/* Why a comparison is not verified, in one sentence for the command's warning: the first figure
 * left unverified ("6,000 provisioned IOPS: 7 I/Os in flight at 2.32 ms reach at most 3,017 IOPS;
 * run with iodepth ≥ 16 to verify 6,000"), or that nothing could be judged. Appends to out. */
void bench_comparison_why_not_verified(struct buf *out, const struct bench_comparison *c);

/* I/Os the job kept in flight, all its jobs together: jobs x iodepth (1 when unknown). */
unsigned bench_job_in_flight(const struct bench_job *j);

/* Total IOPS / MiB/s of a job (read + write). */
double bench_job_iops(const struct bench_job *j);
double bench_job_mibps(const struct bench_job *j);
/* The direction a job is judged on: read when it read, else write. */
const struct fio_dir *bench_job_main_dir(const struct bench_job *j);

#endif
