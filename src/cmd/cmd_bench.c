/*
 * cmd_bench.c - `ebsmigrate bench run|import|list|show|compare`: options, help and glue
 * (bench.c runs and judges, bench_kube.c runs in a cluster, bench_output.c writes, the ledger
 * stores). Ctrl-C/SIGTERM: the runners poll stop.h's flag and stop fio or delete their Jobs (HTTP
 * stays on for that cleanup), and bench reports the interruption itself (exit 1, the finished
 * profiles recorded), so it acknowledges the stop instead of main's 128 + signal.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/bench.h"
#include "ebsmigrate/bench_kube.h"
#include "ebsmigrate/bench_output.h"
#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/embedded.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_config.h"
#include "ebsmigrate/ledger_bench.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/progress.h"
#include "ebsmigrate/stop.h"
#include "ebsmigrate/table.h"

enum {
	OPT_LOCAL = 1, OPT_PVC, OPT_STORAGE_CLASS, OPT_NAMESPACE, OPT_SIZE, OPT_FILE_SIZE, OPT_BPROFILE, OPT_RUNTIME,
	OPT_JOB_FILE, OPT_LABEL, OPT_VOLUME, OPT_VOLUME_TYPE, OPT_IOPS, OPT_THROUGHPUT, OPT_VOLUME_SIZE,
	OPT_INSTANCE_TYPE, OPT_PHASE, OPT_KEEP_JSON, OPT_FIO, OPT_IMAGE, OPT_TIMEOUT, OPT_KCONFIG, OPT_KCONTEXT,
	OPT_IOPS_LOG, OPT_NO_RECORD, OPT_FIO_JSON, OPT_BURST_BALANCE,
	OPT_TOLERANCE, OPT_LATENCY_FLOOR, OPT_WAIVE,
};

static const struct cmd_format bench_formats[] = {
	{"table", FORMAT_TABLE, 0}, {"wide", FORMAT_WIDE, 0}, {"json", FORMAT_JSON, 0},
	{"yaml", FORMAT_YAML, 0}, {"markdown", FORMAT_MARKDOWN, 0}, {"md", FORMAT_MARKDOWN, 1}, {NULL, 0, 0},
};

static const struct cmd_option bench_options[] = {
	{"local", 0, ARG_REQUIRED, "DIR", "run: benchmark this directory with the local fio", OPT_LOCAL},
	{"pvc", 0, ARG_REQUIRED, "NS/NAME", "run: benchmark this PVC in the cluster (it must not be in use)", OPT_PVC},
	{"storage-class", 0, ARG_REQUIRED, "SC", "run: benchmark a scratch PVC of this StorageClass (with --size)",
	 OPT_STORAGE_CLASS},
	{"namespace", 'n', ARG_REQUIRED, "NS", "run: namespace of the scratch PVC and the Jobs (default 'default')",
	 OPT_NAMESPACE},
	{"size", 0, ARG_REQUIRED, "SIZE",
	 "run: test file size (--local, --pvc; default 8G), or the scratch PVC's size (--storage-class, e.g. 100Gi)",
	 OPT_SIZE},
	{"file-size", 0, ARG_REQUIRED, "SIZE", "run: test file size in the cluster (default: 8G, at most half the volume)",
	 OPT_FILE_SIZE},
	{"profile", 'p', ARG_REQUIRED, "NAME",
	 "run: randread-qd32, randwrite-qd32, latency-qd1, seq-read-1m, seq-write-1m or all (repeatable; default all)",
	 OPT_BPROFILE},
	{"runtime", 0, ARG_REQUIRED, "DURATION", "run: time per profile, e.g. 60, 90s, 45m (default 60s)", OPT_RUNTIME},
	{"job-file", 0, ARG_REQUIRED, "FILE", "run: any fio job file instead of the profiles", OPT_JOB_FILE},
	{"label", 0, ARG_REQUIRED, "LABEL", "run, import: a name for the run (compare accepts it)", OPT_LABEL},
	{"volume", 0, ARG_REQUIRED, "VOL-ID",
	 "run, import: the EBS volume under test (links the run to its migration); compare: its latest before/after pair",
	 OPT_VOLUME},
	{"volume-type", 0, ARG_REQUIRED, "TYPE", "run, import: the volume's type (gp2, gp3, ...)", OPT_VOLUME_TYPE},
	{"iops", 0, ARG_REQUIRED, "N", "run, import: the volume's provisioned (gp2: baseline) IOPS", OPT_IOPS},
	{"throughput", 0, ARG_REQUIRED, "MIBPS", "run, import: the volume's provisioned throughput in MiB/s",
	 OPT_THROUGHPUT},
	{"volume-size", 0, ARG_REQUIRED, "GIB", "run, import: the volume's size in GiB", OPT_VOLUME_SIZE},
	{"instance-type", 0, ARG_REQUIRED, "TYPE", "run, import: the node's instance type (e.g. m5.xlarge)",
	 OPT_INSTANCE_TYPE},
	{"burst-balance", 0, ARG_REQUIRED, "PCT", "run, import: the volume's BurstBalance (%) when the run started",
	 OPT_BURST_BALANCE},
	{"phase", 0, ARG_REQUIRED, "PHASE", "run, import: before or after (default: from the apply ledger or the type)",
	 OPT_PHASE},
	{"keep-json", 0, ARG_REQUIRED, "DIR", "run: also write each fio JSON document to DIR/PROFILE.json",
	 OPT_KEEP_JSON},
	{"fio", 0, ARG_REQUIRED, "PATH", "run --local: the fio binary (default: fio from PATH)", OPT_FIO},
	{"image", 0, ARG_REQUIRED, "IMAGE", "run in a cluster: container image with fio (default " BENCH_KUBE_DEFAULT_IMAGE ")",
	 OPT_IMAGE},
	{"timeout", 0, ARG_REQUIRED, "DURATION", "run in a cluster: how long a Job may take beyond its runtime (default 10m)",
	 OPT_TIMEOUT},
	{"kubeconfig", 0, ARG_REQUIRED, "FILE", "run in a cluster: kubeconfig file (default: KUBECONFIG, ~/.kube/config)",
	 OPT_KCONFIG},
	{"context", 0, ARG_REQUIRED, "NAME", "run in a cluster: kubeconfig context (default: the current one)",
	 OPT_KCONTEXT},
	{"iops-log", 0, ARG_REQUIRED, "FILE", "import: a write_iops_log file of the same fio run (repeatable)",
	 OPT_IOPS_LOG},
	{"waive", 0, ARG_REQUIRED, "FIGURE",
	 "compare: iops or throughput: a provisioned figure the verdict does not require (repeatable)", OPT_WAIVE},
	{"output", 'o', ARG_REQUIRED, "FORMAT", "table (default), wide, json or yaml; compare also markdown",
	 OPT_RESULT_OUTPUT},
	{"format", 0, ARG_REQUIRED, "FORMAT",
	 "table (default), wide, json or yaml (an alias of -o/--output); compare also markdown", OPT_RESULT_FORMAT},
	CMD_OUTPUT_FILE_OPTION(OPT_RESULT_FILE),
	CMD_NO_HEADERS_OPTION("run, import, list, show tables: no title row", OPT_RESULT_NO_HEADERS),
	{"no-record", 0, ARG_NONE, NULL, "run, import: do not store the result in the database", OPT_NO_RECORD},
	{"fio-json", 0, ARG_NONE, NULL, "show: print the run's raw fio JSON documents", OPT_FIO_JSON},
	{"tolerance", 0, ARG_REQUIRED, "PCT",
	 "compare: how many percent above the before p99 the after p99 may be (default 10; 0 = strict)", OPT_TOLERANCE},
	{"latency-floor-ms", 0, ARG_REQUIRED, "MS",
	 "compare: a p99 increase of at most this many ms is never a regression (default 0.2; 0 = none)",
	 OPT_LATENCY_FLOOR},
	CMD_OPTIONS_END,
};

const struct cmd_help bench_help = {
	.usage = CMD_USAGE(
		"run --local DIR [--profile P]... [--runtime D] [--size SIZE] [--job-file F] [--label L] [--volume VOL-ID]",
		"run --pvc NS/NAME | --storage-class SC --size 100Gi [-n NS] [--profile P]... [--runtime D] [--image IMG]",
		"import FILE [--iops-log LOG]... [--label L] [--volume VOL-ID] [--volume-type T --iops N --throughput M]",
		"list [-o table|wide|json|yaml] [--output-file FILE]",
		"show RUN [-o table|wide|json|yaml] [--fio-json] [--output-file FILE]",
		"compare BEFORE AFTER | --volume VOL-ID [--tolerance PCT] [--latency-floor-ms MS] [--waive iops|throughput] [-o table|wide|json|yaml|markdown] [--output-file FILE]"),
	.description =
		"Proves with fio what a volume delivers, before and after the migration.\n"
		"\n"
		"run --local DIR runs the real fio binary on a directory (a node's mount of the volume, a test "
		"directory), one profile after the other, each for --runtime: randread-qd32 and randwrite-qd32 (4 KiB "
		"at queue depth 32: the IOPS limit), latency-qd1 (4 KiB reads at queue depth 1: latency), seq-read-1m and "
		"seq-write-1m (1 MiB at queue depth 8: the throughput limit); libaio, direct=1, time based, an IOPS log at "
		"1 s. The test file and logs live in DIR/.ebsmigrate-bench-XXXXXX, removed at the end. run --pvc or "
		"--storage-class runs the same profiles as Kubernetes Jobs (templates/fio-job.yaml) and deletes what it "
		"created, also on Ctrl-C. While a Job's pod is not running, a note says what it waits for (the pod's and "
		"the claim's status and Events: FailedScheduling, ProvisioningFailed, WaitForFirstConsumer, image pulls); "
		"a pod that has not started within --timeout ends the run with that reason (exit 1).\n"
		"\n"
		"Each profile's result is stored as soon as fio returns it (an interrupted run keeps the finished ones): "
		"IOPS, MiB/s, completion latency mean/p50/p95/p99/p99.9, the IOPS series and its cliff (a sustained step "
		"down, as when a gp2 volume's burst credits run out). import stores fio output made elsewhere: "
		"--output-format=json or json+ (fio 2.x and 3.x, also client/server output), fio's normal text output "
		"(its default), or the JSON of `kubestr fio -o json`. A job fio reports as failed is stored with fio's "
		"error, the run as failed (exit 1), and never judged.\n"
		"\n"
		"compare judges each profile: the after volume delivers at least 95 % of the provisioned IOPS (small "
		"blocks) or throughput (large blocks) that bound the job, and its p99 latency is not above the before "
		"run's by more than the larger of --tolerance (default 10 %) and --latency-floor-ms (default 0.2 ms: "
		"0.112 -> 0.134 ms is noise, not a regression); --tolerance 0 --latency-floor-ms 0 fails any increase. "
		"A job that delivered less and could not have reached the figure by Little's law (I/Os in flight, "
		"numjobs x iodepth, over its mean latency) leaves it not verified, with what would verify it: 7 jobs at "
		"queue depth 1 and 2.32 ms reach at most 3,017 IOPS, never 6,000. The verdict is pass only when every "
		"figure a job was bound by is verified or waived (--waive), fail when a figure the run could reach was "
		"missed or p99 regressed, not-verified otherwise.\n"
		"\n"
		"Examples:\n"
		"  ebsmigrate bench run --local /mnt/data --label db-gp2 --volume vol-0abc --runtime 2700 -p randread-qd32\n"
		"  ebsmigrate bench run --storage-class gp3 --size 100Gi --label gp3-check\n"
		"  ebsmigrate bench import fio.json --iops-log gp2_rr_iops.1.log --volume-type gp2 --volume-size 100\n"
		"  ebsmigrate bench compare db-gp2 db-gp3 -o markdown",
	.options = bench_options,
	.output = CMD_OUTPUT_FORMATS(bench_formats, FORMAT_JSON, FORMAT_YAML),
	.exit_codes = "compare exits 4 when the verdict is fail, 5 when it is not-verified (the runs could not prove "
		      "a provisioned figure, or nothing could be judged). run exits 1 when fio fails or the run is "
		      "interrupted (finished profiles are kept); import exits 1 when fio reported a job failed (the run is "
		      "recorded as failed), 2 for bad options, a missing or unwritable directory, or fio output it cannot "
		      "read (the message names the line of a text report).",
};


struct bench_args {
	const char *local, *pvc, *storage_class, *namespace_, *job_file, *label, *keep_json, *fio, *image;
	const char *kubeconfig, *context, *output, *phase;
	const char *size_arg, *file_size_arg;
	const struct fio_profile **profiles;
	size_t n_profiles;
	int runtime_s, timeout_s;
	const char **iops_logs;
	size_t n_iops_logs;
	struct bench_volume vol;
	int have_vol;
	struct cmd_output_options result;
	enum out_format format; /* set after parsing: result's, FORMAT_JSON for yaml (converted by write_result) */
	int no_record, fio_json;
	struct bench_rules rules;
	struct table_options table; /* set after parsing */
};

static int parse_duration_s(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || errno || v <= 0)
		return EM_EINPUT;
	long mult = 0;
	if (!*end || strcmp(end, "s") == 0)
		mult = 1;
	else if (strcmp(end, "m") == 0)
		mult = 60;
	else if (strcmp(end, "h") == 0)
		mult = 3600;
	if (!mult || v > 7 * 86400 / mult)
		return EM_EINPUT;
	*out = (int)(v * mult);
	return 0;
}

/* A duration option: EXIT_USAGE, said with the examples, when arg is not one. */
static int duration_option(const char *opt, const char *arg, const char *examples, int *out)
{
	return cmd_usage_if(parse_duration_s(arg, out) != 0, "%s: '%s' is not a duration (e.g. %s)", opt, arg,
			    examples);
}

static int positive(const char *opt, const char *arg, int64_t *out)
{
	return cmd_usage_if(em_parse_i64(arg, out) || *out <= 0, "%s: '%s' is not a positive whole number", opt, arg);
}

static void push_profile(struct bench_args *a, const struct fio_profile *p)
{
	for (size_t i = 0; i < a->n_profiles; i++)
		if (a->profiles[i] == p)
			return;
	a->profiles = xrealloc(a->profiles, (a->n_profiles + 1) * sizeof *a->profiles);
	a->profiles[a->n_profiles++] = p;
}

static int on_option(void *st, int id, const char *arg)
{
	struct bench_args *a = st;
	int64_t v;
	switch (id) {
	case OPT_LOCAL: a->local = arg; return 0;
	case OPT_PVC: a->pvc = arg; return 0;
	case OPT_STORAGE_CLASS: a->storage_class = arg; return 0;
	case OPT_NAMESPACE: a->namespace_ = arg; return 0;
	case OPT_SIZE: a->size_arg = arg; return 0;
	case OPT_FILE_SIZE: a->file_size_arg = arg; return 0;
	case OPT_BPROFILE:
		if (strcmp(arg, "all") == 0) {
			for (const struct fio_profile *p = fio_profiles; p->name; p++)
				push_profile(a, p);
			return 0;
		}
		if (!fio_profile_find(arg)) {
			log_error("--profile: '%s' is not a profile (randread-qd32, randwrite-qd32, latency-qd1, seq-read-1m, "
				  "seq-write-1m, all)",
				  arg);
			return EXIT_USAGE;
		}
		push_profile(a, fio_profile_find(arg));
		return 0;
	case OPT_RUNTIME: return duration_option("--runtime", arg, "60, 90s, 45m", &a->runtime_s);
	case OPT_TIMEOUT: return duration_option("--timeout", arg, "600, 10m", &a->timeout_s);
	case OPT_JOB_FILE: a->job_file = arg; return 0;
	case OPT_LABEL: a->label = arg; return 0;
	case OPT_VOLUME:
		free(a->vol.volume_id);
		a->vol.volume_id = xstrdup(arg);
		a->have_vol = 1;
		return 0;
	case OPT_VOLUME_TYPE:
		free(a->vol.type);
		a->vol.type = xstrdup(arg);
		a->have_vol = 1;
		return 0;
	case OPT_INSTANCE_TYPE:
		free(a->vol.instance_type);
		a->vol.instance_type = xstrdup(arg);
		a->have_vol = 1;
		return 0;
	case OPT_IOPS:
		a->have_vol = 1;
		return positive("--iops", arg, &a->vol.iops);
	case OPT_THROUGHPUT:
		a->have_vol = 1;
		return positive("--throughput", arg, &a->vol.throughput);
	case OPT_VOLUME_SIZE:
		a->have_vol = 1;
		return positive("--volume-size", arg, &a->vol.size_gib);
	case OPT_BURST_BALANCE: {
		char *end;
		double d = strtod(arg, &end);
		if (end == arg || *end || !(d >= 0 && d <= 100)) {
			log_error("--burst-balance: '%s' is not a percentage from 0 to 100", arg);
			return EXIT_USAGE;
		}
		a->vol.burst_balance = d;
		a->have_vol = 1;
		return 0;
	}
	case OPT_PHASE:
		a->phase = arg;
		return cmd_usage_if(strcmp(arg, "before") != 0 && strcmp(arg, "after") != 0,
				    "--phase: '%s' is not before or after", arg);
	case OPT_KEEP_JSON: a->keep_json = arg; return 0;
	case OPT_FIO: a->fio = arg; return 0;
	case OPT_IMAGE: a->image = arg; return 0;
	case OPT_KCONFIG: a->kubeconfig = arg; return 0;
	case OPT_KCONTEXT: a->context = arg; return 0;
	case OPT_IOPS_LOG:
		a->iops_logs = xrealloc(a->iops_logs, (a->n_iops_logs + 1) * sizeof *a->iops_logs);
		a->iops_logs[a->n_iops_logs++] = arg;
		return 0;
	case OPT_NO_RECORD: a->no_record = 1; return 0;
	case OPT_FIO_JSON: a->fio_json = 1; return 0;
	case OPT_TOLERANCE:
	case OPT_LATENCY_FLOOR: {
		char *end;
		errno = 0;
		double d = strtod(arg, &end);
		int tol = id == OPT_TOLERANCE;
		if (end == arg || *end || errno || !(d >= 0 && d <= (tol ? 1000 : 60000))) {
			log_error(tol ? "--tolerance: '%s' is not a percentage from 0 to 1000"
				      : "--latency-floor-ms: '%s' is not a number of milliseconds from 0 to 60000",
				  arg);
			return EXIT_USAGE;
		}
		if (tol)
			a->rules.tolerance_pct = d;
		else
			a->rules.latency_floor_ms = d;
		return 0;
	}
	case OPT_WAIVE:
		if (strcmp(arg, "iops") == 0)
			a->rules.waive |= BENCH_WAIVE_IOPS;
		else if (strcmp(arg, "throughput") == 0)
			a->rules.waive |= BENCH_WAIVE_THROUGHPUT;
		else
			return cmd_usage_if(1, "--waive: '%s' is not iops or throughput", arg);
		return 0;
	}
	(void)v;
	return EXIT_USAGE;
}

/* The jobs started and in all, for the progress line's end (bench_run_* report starts only). */
static size_t bench_started, bench_jobs;

static const char *bench_scope(const struct bench_args *a)
{
	return a->local ? a->local : a->pvc ? a->pvc : a->storage_class ? a->storage_class : "";
}

static void progress(void *ctx, const char *what, size_t i, size_t n)
{
	const struct bench_args *a = ctx;
	if (a->job_file)
		log_notice("running fio on the job file");
	else
		log_notice("running %s (%zu/%zu, %d s)", what, i + 1, n, a->runtime_s);
	/* the line stays up while fio runs: jobs finished of all, with the rate and ETA */
	bench_started = i + 1;
	bench_jobs = n;
	cmd_progress_detail(NULL); /* the last job's fio status is not this one's */
	cmd_progress(NULL, PROGRESS_STEP, "bench", bench_scope(a), i, n);
}

/* fio's own status (bench_local_options.status), folded into the progress line: the job, fio's
 * job state, seconds run of the runtime, done %, and the IOPS and MiB/s of the last second. */
static void fio_status(void *ctx, const char *what, const struct fio_eta *e, double elapsed_s)
{
	const struct bench_args *a = ctx;
	struct buf t = BUF_INIT;
	buf_adds(&t, what);
	if (e->run[0])
		buf_addf(&t, " [%s]", e->run);
	if (a->job_file)
		buf_addf(&t, " %.0fs", elapsed_s);
	else
		/* fio's done share says how far the time-based job is; the wall clock also counts
		 * laying out the test file */
		buf_addf(&t, " %.0f/%ds", isnan(e->percent) ? fmin(elapsed_s, a->runtime_s) : e->percent / 100 * a->runtime_s,
			 a->runtime_s);
	if (!isnan(e->percent))
		buf_addf(&t, " %.0f%%", e->percent);
	double iops = 0, bw = 0;
	int have_iops = 0, have_bw = 0;
	for (int d = 0; d < 2; d++) {
		if (!isnan(e->iops[d]))
			iops += e->iops[d], have_iops = 1;
		if (!isnan(e->bw_bytes[d]))
			bw += e->bw_bytes[d], have_bw = 1;
	}
	if (have_iops)
		buf_addf(&t, "  %.0f IOPS", iops);
	if (have_bw)
		buf_addf(&t, "  %.1f MiB/s", bw / 1048576.0);
	cmd_progress_detail(t.s);
	buf_release(&t);
}

/* What an in-cluster Job waits for (bench_kube_options.waiting): a notice each time it changes. */
static void kube_waiting(void *ctx, const char *job, const char *text)
{
	(void)ctx;
	log_notice("job '%s' is waiting: %s", job, text);
}

/* The run's description from the options: label, phase, volume. */
static void run_from_args(struct bench_run *run, struct bench_args *a)
{
	bench_run_init(run);
	run->label = xstrdup(a->label);
	run->phase = xstrdup(a->phase);
	if (a->have_vol) {
		run->has_volume = 1;
		run->volume = a->vol;
		memset(&a->vol, 0, sizeof a->vol); /* moved */
		a->vol.burst_balance = NAN;
		a->have_vol = 0;
	}
}

/* The result to stdout or --output-file; -o yaml converts the JSON (not --fio-json's raw fio). */
static int write_result(const struct bench_args *a, struct buf *out)
{
	int rc = a->result.format == FORMAT_YAML && !a->fio_json ? cmd_json_to_yaml(out) : 0;
	return rc ? rc : cmd_write_output(a->result.file, out);
}

static int finish_output(struct cmd_ctx *ctx, struct bench_args *a, const struct bench_run *run)
{
	struct buf out = BUF_INIT;
	if (a->format == FORMAT_JSON)
		bench_write_runs_json(&out, run, 1);
	else
		bench_write_run_table(&out, run, &a->table);
	int rc = write_result(a, &out);
	buf_release(&out);
	if (!rc && run->id && ctx->db)
		log_notice("bench run %lld recorded in %s", (long long)run->id, ctx->db_path);
	return rc;
}

static int size_option(const char *opt, const char *arg, uint64_t *out)
{
	if (fio_parse_size(arg, out) || *out == 0) {
		log_error("%s: '%s' is not a size (e.g. 16M, 8G, 100Gi)", opt, arg);
		return EXIT_USAGE;
	}
	return 0;
}

/* A kube client for --kubeconfig/--context. */
static int make_kube_client(struct kube_client *c, const struct bench_args *a, struct buf *err)
{
	struct kube_selection sel = {a->kubeconfig, a->context, 0, NULL};
	struct kube_target *targets = NULL;
	size_t n = 0;
	int rc = kube_targets_load(&targets, &n, &sel, err);
	if (rc)
		return rc;
	if (n == 0) {
		kube_targets_free(targets, n);
		return em_err(err, EM_ENOTFOUND, "no Kubernetes context to use");
	}
	struct kube_client_options opt;
	memset(&opt, 0, sizeof opt);
	rc = kube_client_init(c, &targets[0], &opt, err);
	kube_targets_free(targets, n);
	return rc;
}

static int bench_run_cmd(struct cmd_ctx *ctx, struct bench_args *a, int n_rest, char **rest)
{
	int modes = !!a->local + !!a->pvc + !!a->storage_class;
	if (n_rest) {
		log_error("bench run: unexpected argument '%s'", rest[0]);
		return EXIT_USAGE;
	}
	if (modes != 1) {
		log_error("bench run needs exactly one of --local DIR, --pvc NS/NAME or --storage-class SC");
		return EXIT_USAGE;
	}
	if (a->job_file && a->n_profiles) {
		log_error("--job-file and --profile do not go together: the job file says what to run");
		return EXIT_USAGE;
	}
	if (a->storage_class && !a->size_arg) {
		log_error("--storage-class needs --size (the scratch PVC's size, e.g. 100Gi)");
		return EXIT_USAGE;
	}
	if (a->local && a->file_size_arg) {
		log_error("--file-size is for runs in a cluster; --local takes --size");
		return EXIT_USAGE;
	}
	if (!a->n_profiles && !a->job_file)
		for (const struct fio_profile *p = fio_profiles; p->name; p++)
			push_profile(a, p);
	if (!a->runtime_s)
		a->runtime_s = 60;
	uint64_t size = 0, file_size = 0;
	if (a->size_arg && size_option("--size", a->size_arg, &size))
		return EXIT_USAGE;
	if (a->file_size_arg && size_option("--file-size", a->file_size_arg, &file_size))
		return EXIT_USAGE;
	int rc = cmd_prepare(ctx, a->no_record ? NEEDS_NOTHING : NEEDS_DB);
	if (rc)
		return rc;

	stop_set_abort_io(0); /* a stop must still let the runners delete their Jobs */

	struct bench_run run;
	run_from_args(&run, a);
	struct buf err = BUF_INIT;
	struct bench_store store; /* the runners hand results over; the ledger keeps them */
	bench_ledger_store(&store, ctx->db);
	int brc = bench_link_migration(&store, &run, &err);
	if (!brc && a->local) {
		struct bench_local_options o = {
			.path = a->local, .profiles = a->profiles, .n_profiles = a->n_profiles, .job_file = a->job_file,
			.runtime_s = a->runtime_s, .size = size ? size : (uint64_t)8 << 30, .fio = a->fio,
			.keep_json_dir = a->keep_json, .stop = stop_flag(), .progress = progress, .progress_ctx = a,
			/* fio's own figures only where the progress line is drawn */
			.status = isatty(2) && log_get_level() >= LOG_NORMAL ? fio_status : NULL,
		};
		brc = bench_run_local(&store, &run, &o, &err);
	} else if (!brc) {
		struct kube_client kc;
		memset(&kc, 0, sizeof kc);
		struct buf job_text = BUF_INIT;
		brc = make_kube_client(&kc, a, &err);
		if (!brc && a->job_file)
			brc = em_read_file_max(a->job_file, EM_MAX_LIST_FILE, &job_text, &err);
		const struct embedded_file *tpl = embedded_find(BENCH_KUBE_TEMPLATE);
		if (!brc && !tpl)
			brc = em_err(&err, EM_EIO, "the Job template '%s' is not built in", BENCH_KUBE_TEMPLATE);
		if (!brc) {
			const char *slash = a->pvc ? strchr(a->pvc, '/') : NULL;
			char *ns = slash ? xstrndup(a->pvc, (size_t)(slash - a->pvc)) : NULL;
			if (a->pvc && (!slash || slash == a->pvc || !slash[1])) {
				brc = em_err(&err, EM_EINPUT, "--pvc: '%s' is not NAMESPACE/NAME", a->pvc);
			} else {
				struct bench_kube_options o = {
					.client = &kc, .namespace_ = ns ? ns : (a->namespace_ ? a->namespace_ : "default"),
					.pvc = slash ? slash + 1 : NULL, .storage_class = a->storage_class,
					.volume_size = a->storage_class ? size : 0, .profiles = a->profiles,
					.n_profiles = a->n_profiles, .job_file_text = a->job_file ? job_text.s : NULL,
					.runtime_s = a->runtime_s, .size = a->storage_class ? file_size : (file_size ? file_size : size),
					.image = a->image, .timeout_s = a->timeout_s, .template_text = tpl->data,
					.keep_json_dir = a->keep_json, .stop = stop_flag(), .progress = progress, .progress_ctx = a,
					.waiting = kube_waiting,
				};
				brc = bench_run_kube(&store, &run, &o, &err);
			}
			free(ns);
		}
		buf_release(&job_text);
		kube_client_release(&kc);
	}
	cmd_progress_detail(NULL);
	if (bench_jobs)
		cmd_progress(NULL, PROGRESS_DONE, "bench", bench_scope(a), brc ? bench_started - 1 : bench_jobs,
			     bench_jobs);
	cmd_progress_end();
	stop_set_abort_io(1);
	if (stop_requested())
		stop_acknowledge(); /* said below as "interrupted ...", exit 1 (documented) */

	if (brc) {
		log_error("%s", err.s);
		if (run.id && ctx->db)
			log_notice("bench run %lld recorded in %s with status %s", (long long)run.id, ctx->db_path,
				   run.status ? run.status : "failed");
		rc = brc == EM_ECONFLICT ? EXIT_RUNTIME : em_exit_code_for(brc);
		if (run.n_jobs && a->format == FORMAT_JSON) {
			struct buf out = BUF_INIT;
			bench_write_runs_json(&out, &run, 1);
			write_result(a, &out);
			buf_release(&out);
		}
	} else {
		rc = finish_output(ctx, a, &run);
	}
	buf_release(&err);
	bench_run_release(&run);
	return rc;
}

static int bench_import_cmd(struct cmd_ctx *ctx, struct bench_args *a, int n_rest, char **rest)
{
	if (n_rest != 1) {
		log_error(n_rest ? "bench import takes one file" : "bench import needs the fio output file (or - for stdin)");
		return EXIT_USAGE;
	}
	struct buf err = BUF_INIT, text = BUF_INIT;
	struct buf *logs_text = xcalloc(a->n_iops_logs + 1, sizeof *logs_text);
	struct bench_log_file *logs = xcalloc(a->n_iops_logs + 1, sizeof *logs);
	int rc = em_read_input(rest[0], &text, &err);
	for (size_t i = 0; !rc && i < a->n_iops_logs; i++) {
		buf_init(&logs_text[i]);
		rc = em_read_input(a->iops_logs[i], &logs_text[i], &err);
		logs[i].path = a->iops_logs[i];
		logs[i].text = logs_text[i].s;
		logs[i].len = logs_text[i].len;
	}
	if (!rc)
		rc = cmd_prepare(ctx, a->no_record ? NEEDS_NOTHING : NEEDS_DB);
	else {
		log_error("%s", err.s);
		rc = em_exit_code_for(rc);
	}
	struct bench_run run;
	run_from_args(&run, a);
	if (!rc) {
		struct bench_store store;
		bench_ledger_store(&store, ctx->db);
		int brc = bench_link_migration(&store, &run, &err);
		if (!brc)
			brc = bench_import(&store, &run, text.s, text.len, strcmp(rest[0], "-") ? rest[0] : "standard input",
					   logs, a->n_iops_logs, &err);
		if (brc) {
			log_error("%s", err.s);
			if (run.id && ctx->db)
				log_notice("bench run %lld recorded in %s with status %s", (long long)run.id, ctx->db_path,
					   run.status ? run.status : "failed");
			rc = em_exit_code_for(brc);
		} else {
			rc = finish_output(ctx, a, &run);
		}
	}
	bench_run_release(&run);
	for (size_t i = 0; i < a->n_iops_logs; i++)
		buf_release(&logs_text[i]);
	free(logs_text);
	free(logs);
	buf_release(&text);
	buf_release(&err);
	return rc;
}

static int bench_list_cmd(struct cmd_ctx *ctx, struct bench_args *a, int n_rest, char **rest)
{
	if (n_rest) {
		log_error("bench list: unexpected argument '%s'", rest[0]);
		return EXIT_USAGE;
	}
	int rc = cmd_prepare(ctx, NEEDS_DB);
	if (rc)
		return rc;
	struct buf err = BUF_INIT;
	int64_t *ids = NULL;
	size_t n = 0;
	struct bench_run *runs = NULL;
	int brc = ledger_bench_run_ids(ctx->db, &ids, &n, &err);
	if (!brc && n)
		runs = xcalloc(n, sizeof *runs);
	size_t loaded = 0;
	for (; !brc && loaded < n; loaded++)
		brc = ledger_bench_run_load(ctx->db, ids[loaded], a->format == FORMAT_JSON, &runs[loaded], &err);
	if (brc) {
		log_error("%s", err.s);
		rc = em_exit_code_for(brc);
	} else {
		struct buf out = BUF_INIT;
		if (a->format == FORMAT_JSON)
			bench_write_runs_json(&out, runs, n);
		else
			bench_write_list_table(&out, runs, n, &a->table);
		rc = write_result(a, &out);
		buf_release(&out);
	}
	for (size_t i = 0; i < loaded && i < n; i++)
		bench_run_release(&runs[i]);
	free(runs);
	free(ids);
	buf_release(&err);
	return rc;
}

static int bench_show_cmd(struct cmd_ctx *ctx, struct bench_args *a, int n_rest, char **rest)
{
	if (n_rest != 1) {
		log_error("bench show takes one run (an id or a label)");
		return EXIT_USAGE;
	}
	int rc = cmd_prepare(ctx, NEEDS_DB);
	if (rc)
		return rc;
	struct buf err = BUF_INIT, out = BUF_INIT;
	int64_t id = 0;
	struct bench_run run;
	bench_run_init(&run);
	int brc = ledger_bench_run_resolve(ctx->db, rest[0], &id, &err);
	if (!brc && a->fio_json) {
		size_t n = 0;
		brc = ledger_bench_outputs(ctx->db, id, &out, &n, &err);
		if (!brc && n == 0)
			brc = em_err(&err, EM_ENOTFOUND, "bench run %lld has no fio output", (long long)id);
	} else if (!brc) {
		brc = ledger_bench_run_load(ctx->db, id, 1, &run, &err);
		if (!brc && a->format == FORMAT_JSON)
			bench_write_runs_json(&out, &run, 1);
		else if (!brc)
			bench_write_run_table(&out, &run, &a->table);
	}
	if (brc) {
		log_error("%s", err.s);
		rc = em_exit_code_for(brc);
	} else {
		rc = write_result(a, &out);
	}
	bench_run_release(&run);
	buf_release(&out);
	buf_release(&err);
	return rc;
}

static int bench_compare_cmd(struct cmd_ctx *ctx, struct bench_args *a, int n_rest, char **rest)
{
	if (!(n_rest == 2 && !a->have_vol) && !(n_rest == 0 && a->vol.volume_id)) {
		log_error("bench compare takes BEFORE AFTER (run ids or labels) or --volume VOL-ID");
		return EXIT_USAGE;
	}
	int rc = cmd_prepare(ctx, NEEDS_DB);
	if (rc)
		return rc;
	struct buf err = BUF_INIT;
	int64_t ids[2] = {0, 0};
	struct bench_run runs[2];
	bench_run_init(&runs[0]);
	bench_run_init(&runs[1]);
	int brc = 0;
	if (n_rest == 2) {
		brc = ledger_bench_run_resolve(ctx->db, rest[0], &ids[0], &err);
		if (!brc)
			brc = ledger_bench_run_resolve(ctx->db, rest[1], &ids[1], &err);
	} else {
		brc = ledger_bench_volume_pair(ctx->db, a->vol.volume_id, &ids[0], &ids[1], &err);
		if (!brc && (!ids[0] || !ids[1]))
			brc = em_err(&err, EM_ENOTFOUND, "volume '%s' has no %s run yet (bench run ... --volume %s --phase %s)",
				     a->vol.volume_id, ids[0] ? "after" : "before", a->vol.volume_id,
				     ids[0] ? "after" : "before");
	}
	for (int i = 0; !brc && i < 2; i++)
		brc = ledger_bench_run_load(ctx->db, ids[i], 1, &runs[i], &err);
	struct bench_comparison cmp;
	memset(&cmp, 0, sizeof cmp);
	if (!brc)
		brc = bench_compare_with(&cmp, &runs[0], &runs[1], &a->rules, &err);
	if (brc) {
		log_error("%s", err.s);
		rc = em_exit_code_for(brc);
	} else {
		struct buf out = BUF_INIT;
		bench_write_compare(&out, &cmp, a->format);
		rc = write_result(a, &out);
		buf_release(&out);
		if (!rc && cmp.verdict == BENCH_FAIL) {
			log_error("verification failed: see the verdicts above");
			rc = EXIT_VERIFY;
		} else if (!rc && cmp.verdict == BENCH_NOT_VERIFIED) {
			struct buf why = BUF_INIT;
			bench_comparison_why_not_verified(&why, &cmp);
			log_warning("not verified: %s", why.s);
			buf_release(&why);
			rc = EXIT_NOT_VERIFIED;
		}
		bench_comparison_release(&cmp);
	}
	bench_run_release(&runs[0]);
	bench_run_release(&runs[1]);
	buf_release(&err);
	return rc;
}

int cmd_bench(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct bench_args a = {.vol.burst_balance = NAN, .rules = BENCH_RULES_DEFAULT};
	char **rest;
	int n_rest;
	int rc;
	if (cmd_start_subcommand(ctx, "bench", argc, argv, on_option, &a, &a.result,
				 "bench needs a subcommand: run, import, list, show or compare; see 'ebsmigrate help bench'",
				 &rest, &n_rest, &rc))
		goto out;
	const char *sub = rest[0];
	a.format = a.result.json ? FORMAT_JSON : (enum out_format)a.result.format;
	cmd_table_options(&a.table, a.result.file, a.format == FORMAT_WIDE, a.result.no_headers);
	if (a.format == FORMAT_MARKDOWN && strcmp(sub, "compare") != 0) {
		log_error("-o markdown is for bench compare");
		rc = EXIT_USAGE;
		goto out;
	}
	if (strcmp(sub, "run") == 0)
		rc = bench_run_cmd(ctx, &a, n_rest - 1, rest + 1);
	else if (strcmp(sub, "import") == 0)
		rc = bench_import_cmd(ctx, &a, n_rest - 1, rest + 1);
	else if (strcmp(sub, "list") == 0)
		rc = bench_list_cmd(ctx, &a, n_rest - 1, rest + 1);
	else if (strcmp(sub, "show") == 0)
		rc = bench_show_cmd(ctx, &a, n_rest - 1, rest + 1);
	else if (strcmp(sub, "compare") == 0)
		rc = bench_compare_cmd(ctx, &a, n_rest - 1, rest + 1);
	else {
		log_error("unknown bench subcommand '%s': use run, import, list, show or compare", sub);
		rc = EXIT_USAGE;
	}
out:
	free(a.profiles);
	free(a.iops_logs);
	bench_volume_release(&a.vol);
	return rc;
}
