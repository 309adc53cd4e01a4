/*
 * workpool.c - a bounded pool of threads for independent tasks (see workpool.h).
 *
 * Entry points: workpool_run, workpool_run_ordered; workpool_gate_* (a counting semaphore).
 * Invariants:
 * - At most min(workers, n, WORKPOOL_MAX_WORKERS) tasks run at once: the calling thread plus
 *   that many minus one helper threads, all joined before workpool_run returns. Nothing is
 *   left running, and no parallelism is unbounded.
 * - Each index is handed out exactly once, in increasing order, under the pool's mutex.
 * - A thread that cannot be created only lowers the parallelism: the calling thread always
 *   works too, so every task still runs.
 * - workers <= 1 creates no thread and runs the tasks in index order (the sequential reading).
 * - workpool_run_ordered: merge(i) runs once task i and every task before it have returned,
 *   in increasing i, one at a time (a single thread merges at any moment: the one that found
 *   the next index ready), never under the pool's mutex, so tasks keep starting meanwhile.
 *   Once a merge asks to stop, no further task starts and no further merge runs.
 */
#include <pthread.h>
#include <stdlib.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/workpool.h"

struct pool {
	pthread_mutex_t lock;
	size_t next, n;
	workpool_task_fn task;
	workpool_merge_fn merge; /* NULL: workpool_run */
	void *ctx;
	unsigned char *done;     /* done[i]: task i returned (ordered runs) */
	size_t merged;           /* merges made: 0..merged-1 */
	int merging, stopped;
};

/* Called under the lock after task i returned: merges every index that is ready, unless
 * another thread is merging already (it will see done[i] before it stops). */
static void merge_ready(struct pool *p, size_t i)
{
	p->done[i] = 1;
	if (p->merging)
		return;
	p->merging = 1;
	while (!p->stopped && p->merged < p->n && p->done[p->merged]) {
		size_t m = p->merged;
		pthread_mutex_unlock(&p->lock);
		int stop = p->merge(p->ctx, m);
		pthread_mutex_lock(&p->lock);
		p->merged++;
		if (stop)
			p->stopped = 1;
	}
	p->merging = 0;
}

static void *work(void *arg)
{
	struct pool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (p->stopped || p->next >= p->n)
			break;
		size_t i = p->next++;
		pthread_mutex_unlock(&p->lock);
		p->task(p->ctx, i);
		pthread_mutex_lock(&p->lock);
		if (p->merge)
			merge_ready(p, i);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void run(size_t n, int workers, workpool_task_fn task, workpool_merge_fn merge, void *ctx)
{
	if (workers > WORKPOOL_MAX_WORKERS)
		workers = WORKPOOL_MAX_WORKERS;
	if (workers <= 1 || n <= 1) {
		for (size_t i = 0; i < n; i++) {
			task(ctx, i);
			if (merge && merge(ctx, i))
				break;
		}
		return;
	}
	size_t helpers = (size_t)workers - 1 < n - 1 ? (size_t)workers - 1 : n - 1;
	struct pool p = {.next = 0, .n = n, .task = task, .merge = merge, .ctx = ctx};
	if (merge)
		p.done = xcalloc(n, 1);
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
	free(p.done);
	pthread_mutex_destroy(&p.lock);
}

void workpool_run(size_t n, int workers, workpool_task_fn task, void *ctx)
{
	run(n, workers, task, NULL, ctx);
}

void workpool_run_ordered(size_t n, int workers, workpool_task_fn task, workpool_merge_fn merge, void *ctx)
{
	run(n, workers, task, merge, ctx);
}

void workpool_gate_init(struct workpool_gate *g, int n)
{
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->freed, NULL);
	g->free = n > 0 ? n : 1;
}

void workpool_gate_enter(struct workpool_gate *g)
{
	pthread_mutex_lock(&g->lock);
	while (g->free <= 0)
		pthread_cond_wait(&g->freed, &g->lock);
	g->free--;
	pthread_mutex_unlock(&g->lock);
}

void workpool_gate_leave(struct workpool_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->free++;
	pthread_cond_signal(&g->freed);
	pthread_mutex_unlock(&g->lock);
}

void workpool_gate_release(struct workpool_gate *g)
{
	pthread_cond_destroy(&g->freed);
	pthread_mutex_destroy(&g->lock);
}
