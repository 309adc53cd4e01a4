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

#include <stddef.h>

typedef void (*workpool_task_fn)(void *ctx, size_t i);

/* The most threads any pool of the program may use (a bound for --concurrency). */
#define WORKPOOL_MAX_WORKERS 64

void workpool_run(size_t n, int workers, workpool_task_fn task, void *ctx);

#endif
