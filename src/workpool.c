/*
 * workpool.c - a bounded pool of threads for independent tasks (see workpool.h).
 *
 * Entry point: workpool_run.
 * Invariants:
 * - At most min(workers, n, WORKPOOL_MAX_WORKERS) tasks run at once: the calling thread plus
 *   that many minus one helper threads, all joined before workpool_run returns. Nothing is
 *   left running, and no parallelism is unbounded.
 * - Each index is handed out exactly once, in increasing order, under the pool's mutex.
 * - A thread that cannot be created only lowers the parallelism: the calling thread always
 *   works too, so every task still runs.
 * - workers <= 1 creates no thread and runs the tasks in index order (the sequential reading).
 */
#include <pthread.h>
#include <stdlib.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/workpool.h"

struct pool {
	pthread_mutex_t lock;
	size_t next, n;
	workpool_task_fn task;
	void *ctx;
};

static void *work(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		size_t i = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			return NULL;
		p->task(p->ctx, i);
	}
}

void workpool_run(size_t n, int workers, workpool_task_fn task, void *ctx)
{
	if (workers > WORKPOOL_MAX_WORKERS)
		workers = WORKPOOL_MAX_WORKERS;
	if (workers <= 1 || n <= 1) {
		for (size_t i = 0; i < n; i++)
			task(ctx, i);
		return;
	}
	size_t helpers = (size_t)workers - 1 < n - 1 ? (size_t)workers - 1 : n - 1;
	struct pool p = {.next = 0, .n = n, .task = task, .ctx = ctx};
	pthread_mutex_init(&p.lock, NULL);
	pthread_t *tid = xcalloc(helpers, sizeof *tid);
	size_t started = 0;
	for (size_t k = 0; k < helpers; k++)
		if (pthread_create(&tid[started], NULL, work, &p) == 0)
			started++;
	work(&p);
	for (size_t k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
	free(tid);
	pthread_mutex_destroy(&p.lock);
}
