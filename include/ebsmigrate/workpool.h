/*
 * workpool.h - run N independent tasks on a bounded number of threads (workpool.c).
 *
 * workpool_run(n, workers, task, ctx) calls task(ctx, i) once for every i in 0..n-1 and returns
 * when all calls have returned. At most `workers` calls run at a time (the calling thread is one
 * of them; workers <= 1 runs the tasks in order on the calling thread, creating no thread).
 * Tasks are started in index order; they may finish in any order, so a task writes only its own
 * slot of the caller's results and the caller merges the slots in index order afterwards: the
 * outcome does not depend on the scheduling.
 *
 * Ownership: ctx is borrowed for the duration of the call. A task must not exit the thread.
 */
#ifndef EBSMIGRATE_WORKPOOL_H
#define EBSMIGRATE_WORKPOOL_H

#include <pthread.h>
#include <stddef.h>

typedef void (*workpool_task_fn)(void *ctx, size_t i);

/* The most threads any pool of the program may use (a bound for --concurrency). */
#define WORKPOOL_MAX_WORKERS 64

void workpool_run(size_t n, int workers, workpool_task_fn task, void *ctx);

/* Returns non-zero to stop: no task starts after that, and no later index is merged. */
typedef int (*workpool_merge_fn)(void *ctx, size_t i);

/* workpool_run, plus merge(ctx, i) for every i in increasing order, one call at a time, as soon
 * as tasks 0..i have all returned (on whichever pool thread finished last of them), so the
 * caller can fold each result into its own in the sequential order while later tasks still
 * run, and release the slot at once. With workers <= 1: task 0, merge 0, task 1, merge 1, ...
 * A merge that returns non-zero ends the run: tasks already running finish (unmerged: the
 * caller releases their slots), others never start. */
void workpool_run_ordered(size_t n, int workers, workpool_task_fn task, workpool_merge_fn merge, void *ctx);

/* A gate: at most `n` holders at a time across every pool and thread that share it (a counting
 * semaphore). For the calls that hold much memory while in flight (a GetMetricData answer page
 * and its batch's series), so that their number is bounded for the whole run, not per region:
 * regions read at once would otherwise multiply it. enter blocks until a place is free. */
struct workpool_gate {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	int free;
};
void workpool_gate_init(struct workpool_gate *g, int n);
void workpool_gate_enter(struct workpool_gate *g);
void workpool_gate_leave(struct workpool_gate *g);
void workpool_gate_release(struct workpool_gate *g);

#endif
