/*
 * fio.h - fio, as ebsmigrate uses it: the named benchmark profiles and the job files that run
 * them, and parsers for what fio writes (its JSON/json+ report, fio 2.x-3.x, plain or
 * client/server, also as `kubestr fio -o json` wraps it; its normal text output, fio_text.c; and
 * its per-second IOPS logs). docs/bench.md describes the profiles.
 *
 * Units: IOPS as fio reports them; throughput in MiB/s (bytes / 1,048,576); latencies in
 * milliseconds, converted from fio's nanoseconds (or microseconds for fio 2.x) by one division,
 * so a value here equals fio's own number / 1e6 exactly. NAN marks a value fio did not report.
 *
 * Ownership: struct fio_report and struct fio_series own every string and array inside them;
 * release with fio_report_release / fio_series_release. Profiles are static, read-only.
 * Parsers never print; they return 0 or EM_EINPUT and append one message naming the origin.
 */
#ifndef EBSMIGRATE_FIO_H
#define EBSMIGRATE_FIO_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"

/* What limits a profile, and so what a verdict judges it on (bench.h). */
enum fio_kind {
	FIO_KIND_IOPS = 0,     /* small blocks, deep queue: reaches the IOPS limit */
	FIO_KIND_THROUGHPUT,   /* large blocks: reaches the throughput limit */
	FIO_KIND_LATENCY,      /* queue depth 1: latency-bound, never reaches a limit */
};

struct fio_profile {
	const char *name;        /* "randread-qd32" */
	const char *rw;          /* fio rw= */
	unsigned bs;             /* bytes */
	unsigned iodepth;
	enum fio_kind kind;
	const char *description;
};

/* The named profiles, terminated by a zero row. */
extern const struct fio_profile fio_profiles[];
/* NULL when name is not a profile. */
const struct fio_profile *fio_profile_find(const char *name);
/* The profile whose rw, bs and iodepth a job's options match (numjobs 1), or NULL. Used to
 * name the profile of imported jobs (e.g. the field notes' "gp2-randread" is randread-qd32). */
const struct fio_profile *fio_profile_infer(const char *rw, const char *bs, const char *iodepth,
					    const char *numjobs);
/* The kind of an arbitrary job (custom job files) from its block size and the I/Os it keeps in
 * flight, all its jobs together (numjobs x iodepth): one -> latency, blocks of 128 KiB or more ->
 * throughput, else IOPS. Seven jobs at queue depth 1 are 7 in flight: not latency-bound. */
enum fio_kind fio_kind_of(unsigned bs, unsigned in_flight);

/* fio's IO-depth distribution (JSON "iodepth_level", the normal output's "IO depths" line): the
 * percentage of I/Os submitted while 1, 2-3, 4-7, 8-15, 16-31, 32-63 and 64 or more were in
 * flight per job. */
#define FIO_DEPTH_BUCKETS 7
/* The I/Os each job kept in flight: option_depth (the job's iodepth; 0 when not known) no deeper
 * than the busiest bucket of dist allows (a synchronous engine keeps one in flight whatever
 * iodepth says), or that bucket's lower bound when the option is not known. dist NULL or all
 * zero: option_depth, or 1. */
unsigned fio_effective_depth(unsigned option_depth, const double dist[FIO_DEPTH_BUCKETS]);
const char *fio_kind_name(enum fio_kind k); /* "iops", "throughput", "latency" */
enum fio_kind fio_kind_parse(const char *s); /* its inverse: FIO_KIND_IOPS for NULL or another name */

/* "16M", "8G", "100Gi", "512MiB", "4096" (bytes) -> bytes; units are powers of 1,024.
 * 0 or EM_EINPUT. */
int fio_parse_size(const char *s, uint64_t *out);
/* Bytes as the shortest exact fio size ("8G", "16M", "1536K", "100"). Appends to out. */
void fio_format_size(struct buf *out, uint64_t bytes);

struct fio_job_spec {
	const struct fio_profile *profile;
	int runtime_s;            /* > 0 */
	uint64_t size;            /* bytes of the test file; > 0 */
	const char *directory;    /* directory= line, or NULL (then relative to fio's cwd) */
	const char *filename;     /* the test file's name (default "ebsmigrate-bench.dat") */
	const char *iops_log;     /* write_iops_log= prefix, or NULL for none */
	const char *ioengine;     /* default "libaio" */
};

/* Appends a complete fio job file for one profile: libaio, direct=1, time_based, the IOPS log
 * at 1 s (log_avg_msec=1000, per_job_logs=0 so the log is PREFIX_iops.log). */
void fio_job_file(struct buf *out, const struct fio_job_spec *spec);

/* ---- results ---- */

struct fio_lat {
	double mean, p50, p95, p99, p99_9; /* ms; NAN when not reported */
};

struct fio_dir {
	int present;              /* the job did I/O in this direction */
	double iops;
	double mibps;
	int64_t ios;              /* I/Os completed; -1 when fio did not say (fio 2.x JSON) */
	int64_t bytes;
	struct fio_lat lat;
};

struct fio_job {
	char *name;               /* jobname */
	char *profile;            /* the profile its options match, or NULL */
	char *hostname;           /* client/server output: the server that ran it; else NULL */
	char *options_json;       /* global options overlaid with the job's options, as a JSON object */
	char *lat_source;         /* "clat_ns", "lat_ns", "clat" (fio 2.x, us; the normal output), "lat" or NULL */
	char *iops_log;           /* the job's write_iops_log prefix, or NULL */
	enum fio_kind kind;
	unsigned bs;              /* from the options (the normal output: its printed sizes); 0 when unknown */
	unsigned iodepth;         /* I/Os each job kept in flight (fio_effective_depth); 0 when unknown */
	unsigned jobs;            /* the fio jobs this result stands for: numjobs under group_reporting
				     (the normal output's "jobs=N"), else 1; in flight = jobs x iodepth */
	int error;                /* fio's per-job error (errno); 0 = ok */
	char *error_text;         /* fio's words for it when it printed them (normal output), or NULL */
	int64_t runtime_ms;       /* how long the job (each of its group) ran */
	struct fio_dir read, write;
};

enum fio_output_format {
	FIO_OUTPUT_JSON = 0,      /* --output-format=json or json+ */
	FIO_OUTPUT_TEXT,          /* the normal output (fio_text.c) */
	FIO_OUTPUT_KUBESTR,       /* `kubestr fio -o json`: fio's JSON under "result", the job file as "fioConfig" */
};
const char *fio_output_format_name(enum fio_output_format f); /* "json", "text", "kubestr" */

struct fio_report {
	char *fio_version;        /* "fio-3.33" */
	int64_t timestamp;        /* epoch seconds, 0 when absent */
	int client_server;        /* parsed from client_stats */
	enum fio_output_format format;
	char *storage_class;      /* kubestr: the StorageClass its scratch PVC had; else NULL */
	char *size;               /* kubestr: that PVC's size ("100Gi"); else NULL */
	struct fio_job *jobs;
	size_t n_jobs;
};

void fio_report_init(struct fio_report *r);
void fio_report_release(struct fio_report *r);

/* Parses fio's --output-format=json or json+ output (fio 3.x; fio 2.x's usec latencies too;
 * client/server output with client_stats, whose "All clients" sum is skipped; kubestr's
 * {"storageClass", "fioConfig", "result": FIO-JSON}, whose job file gives the options kubestr's
 * re-encoding drops, numjobs and group_reporting among them). Text before the first '{' (fio's or
 * kubestr's notices) and after the document is ignored. Percentiles come from clat_ns, else lat_ns
 * (lat_percentiles), else fio 2.x's clat/lat in microseconds. A direction without "iops" and
 * without I/O counts is one the job did not do (kubestr omits zeros). Errors, all EM_EINPUT:
 * "ORIGIN: no JSON object in fio output" (with fio's first line when it printed text), "ORIGIN:
 * fio JSON is truncated" (the document ends early), "ORIGIN: not valid JSON at line L, column C",
 * "ORIGIN: not a fio report: no \"jobs\" or \"client_stats\" array", "ORIGIN: jobs[N].read.iops:
 * ...". The report is left empty on error. Returns 0 or EM_EINPUT. */
int fio_parse_report(struct fio_report *out, const char *text, size_t len, const char *origin, struct buf *err);
/* How many bytes of text the JSON document took, counted from its first '{' (0 when none):
 * lets a caller find what follows it (the pod log's IOPS logs). */
size_t fio_report_extent(const char *text, size_t len);

/* Whatever fio output a user hands to `bench import`: fio's normal output when a job report line
 * of it ("NAME: (groupid=0, jobs=1): err= 0: ...") comes before any '{' (fio_parse_text), else
 * the JSON forms (fio_parse_report, kubestr's included). Input that is neither is refused naming
 * its first line that is not blank: "ORIGIN: line N: neither fio JSON nor fio's normal output
 * ..."; empty or blank input: "ORIGIN: empty, expected fio output ...". 0 or EM_EINPUT. */
/* The first non-blank line of text, cut at 72 characters, for an error message. */
void fio_first_line(struct buf *out, const char *text, size_t len);
int fio_parse_output(struct fio_report *out, const char *text, size_t len, const char *origin, struct buf *err);
/* 1 when text is fio's normal output (as fio_parse_output decides), else 0. */
int fio_output_is_text(const char *text, size_t len);
/* Parses fio's normal output (fio 3.x; fio 2.x's "read : io=..." lines too): each job report
 * ("NAME: (groupid=G, jobs=N): err= E: ...", its read/write lines, latencies, percentiles, IO
 * depths, issued I/Os) into one job; what lies outside job reports (the job descriptions printed
 * at start, which give rw, bs, ioengine and iodepth; "Jobs:" status lines; run status groups;
 * disk stats; anything else) is read for the descriptions and otherwise skipped. Numbers equal the
 * JSON of the same run within fio's printed rounding (fio_text.c says how). A line of a job report
 * that cannot be read: EM_EINPUT "ORIGIN: line N: ..." quoting it; no job report at all: EM_EINPUT
 * naming line 1. The report is left empty on error. */
int fio_parse_text(struct fio_report *out, const char *text, size_t len, const char *origin, struct buf *err);

/* One IOPS time series at fio's log interval. */
struct fio_series {
	int64_t *t_ms;            /* end of each window, ms since the job started, ascending */
	double *iops;             /* read + write IOPS in that window */
	size_t n, alloc;
};

void fio_series_release(struct fio_series *s);
/* Parses a write_iops_log file ("time_ms, value, ddir, bs[, offset[, prio]]" per line): samples
 * of the same window (read and write lines, or several jobs) are summed; windows are rounded to
 * interval_ms (1000 with log_avg_msec=1000; 0 = keep fio's times). Appends to out (which may
 * hold an earlier series: samples are merged by window). EM_EINPUT with "ORIGIN: line N: ..." on
 * a malformed line. */
int fio_parse_iops_log(struct fio_series *out, const char *text, size_t len, int64_t interval_ms,
		       const char *origin, struct buf *err);

/* ---- live status ---- */

/* One status line fio writes while it runs with --eta=always (fio 3.x), e.g.
 *   "Jobs: 1 (f=1): [r(1)][75.0%][r=41.0MiB/s][r=10.5k IOPS][eta 00m:01s]"
 *   "Jobs: 1 (f=1): [m(1)][-.-%][r=34.8MiB/s,w=34.7MiB/s][r=8910,w=8881 IOPS][eta 00m:00s]"
 *   "Jobs: 1 (f=1)"   (laying out the file, before the first figures) */
struct fio_eta {
	unsigned jobs;            /* jobs running */
	double percent;           /* 0..100; NAN when fio shows "-.-%" or nothing */
	double iops[2];           /* read, write: current IOPS; NAN when not shown */
	double bw_bytes[2];       /* read, write: current bytes/s; NAN when not shown */
	long eta_s;               /* seconds left; -1 when not shown */
	char run[40];             /* fio's job state string ("r(1)", "W(1)"); "" when not shown */
};

/* Parses one line (no \r or \n in it; len bytes, not NUL-terminated). Returns 0 with *out
 * filled, or EM_EINPUT when the line is not a status line (fio's notices, anything else): the
 * caller skips it. Groups it does not know are ignored, so later fio versions' additions do no
 * harm. Never reads past len. */
int fio_parse_eta_line(struct fio_eta *out, const char *line, size_t len);

#endif
