/*
 * bench_kube.h - fio benchmarks inside a Kubernetes cluster: one Job per profile, rendered from
 * templates/fio-job.yaml, whose pod mounts either a PVC the user names (when no running pod
 * uses it) or a scratch PVC of a StorageClass made for the run. The pod prints fio's JSON and
 * then its IOPS log to its log; ebsmigrate reads the log when the Job ends, records the result
 * (bench.h: results persist as each profile finishes) and deletes everything it created: Jobs
 * with their pods, and the scratch PVC, also after a failure, a timeout or Ctrl-C.
 *
 * The pod log is fio's JSON document followed by, for each IOPS log file,
 *   "### ebsmigrate iops-log NAME" and the file's lines,
 * and a last line "### ebsmigrate exit N" with fio's exit status.
 *
 * Ownership: options are borrowed; the run is filled as in bench_run_local.
 */
#ifndef EBSMIGRATE_BENCH_KUBE_H
#define EBSMIGRATE_BENCH_KUBE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/bench.h"
#include "ebsmigrate/buf.h"

struct kube_client;

#define BENCH_KUBE_DEFAULT_IMAGE "nixery.dev/shell/fio"
#define BENCH_KUBE_TEMPLATE "templates/fio-job.yaml"
#define BENCH_KUBE_MOUNT "/data"

struct bench_kube_options {
	struct kube_client *client;
	const char *namespace_;        /* of the PVC, or where the scratch PVC and the Jobs go */
	const char *pvc;               /* benchmark this claim, or NULL for a scratch one */
	const char *storage_class;     /* scratch claim's class (when pvc is NULL) */
	uint64_t volume_size;          /* scratch claim's size in bytes */
	const struct fio_profile *const *profiles;
	size_t n_profiles;
	const char *job_file_text;     /* instead of profiles: a fio job file (paths relative to the volume) */
	int runtime_s;                 /* per profile */
	uint64_t size;                 /* test file bytes; 0 = min(8 GiB, half the volume) */
	const char *image;             /* NULL = BENCH_KUBE_DEFAULT_IMAGE */
	int timeout_s;                 /* how long one Job may take beyond its runtime, and its pod may
	                                * stay unstarted (Pending); 0 = 600 */
	int bind_timeout_s;            /* how long a scratch claim may stay Pending; 0 = 300 */
	const char *template_text;     /* the Job template (templates/fio-job.yaml) */
	const char *keep_json_dir;
	volatile sig_atomic_t *stop;
	void (*progress)(void *ctx, const char *what, size_t i, size_t n);
	void *progress_ctx;
	int poll_ms;                   /* 0 = 1000 */
	/* While a Job's pod has not started: what it waits for, each time that changes ("pod 'P' is
	 * Pending: FailedScheduling: 0/3 nodes are available: ...; pvc 'NS/C' is Pending: ..."), from
	 * the pod's and the claim's status and Events; NULL = not reported. Called with progress_ctx.
	 * A pod that has not started within timeout_s ends the run with that text. */
	void (*waiting)(void *ctx, const char *job, const char *text);
};

/* Runs the benchmark (rules at the top). Errors name the object and what was seen:
 * EM_ENOTFOUND (claim, class), EM_ECONFLICT (claim in use by a running pod; stopped by the
 * caller), EM_EIO (a Job failed: the pod's log tail is quoted; a timeout says what the pod was
 * waiting for), plus the client's own codes. */
int bench_run_kube(const struct bench_store *store, struct bench_run *run, const struct bench_kube_options *o,
		   struct buf *err);

/* The variables of the Job template, all already valid YAML scalars except script (raw). */
struct bench_kube_job {
	const char *name, *namespace_, *profile, *claim, *image, *script, *run_label;
	int deadline_s;                /* activeDeadlineSeconds */
};
/* Renders the template into JSON (the API accepts JSON): manifest_render, then YAML -> JSON.
 * EM_EINPUT naming the template for a bad template. */
int bench_kube_render_job(struct buf *json_out, const char *tpl, const struct bench_kube_job *j, struct buf *err);
/* The pod's shell script for one fio job file (exposed for tests). */
void bench_kube_script(struct buf *out, const char *job_file, const char *workdir);
/* Splits a pod log into the fio JSON and its IOPS logs: calls fn for each log section. Returns
 * the exit status the script reported (or -1 when the log has no exit line). */
int bench_kube_split_log(const char *log, size_t len, const char **json, size_t *json_len,
			 void (*fn)(void *ctx, const char *name, const char *text, size_t len), void *ctx);

#endif
