/* test_workpool.c - the bounded pool: every task runs once, never more than `workers` at a time;
 * workpool_run_ordered merges in index order, each merge after its task and all earlier ones,
 * one merge at a time, even when the tasks finish in reverse order; a merge asking to stop ends
 * the run (sequentially: exactly the tasks up to it ran); a gate bounds its holders across pools. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "ebsmigrate/workpool.h"
#include "tap.h"

#define N 24

struct state {
	pthread_mutex_t lock;
	int ran[N], merged_at[N]; /* merged_at: position in the merge sequence, -1 = never */
	int n_merged, running, max_running, merging, overlapped_merges, early_merges;
	int finished[N];
	size_t stop_at; /* merge returns 1 at this index (N = never) */
};

static void nap_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

static void task(void *ctx, size_t i)
{
	struct state *s = ctx;
	pthread_mutex_lock(&s->lock);
	s->ran[i]++;
	if (++s->running > s->max_running)
		s->max_running = s->running;
	pthread_mutex_unlock(&s->lock);
	nap_ms((long)(N - i) % 7); /* early tasks take longer: they finish out of order */
	pthread_mutex_lock(&s->lock);
	s->running--;
	s->finished[i] = 1;
	pthread_mutex_unlock(&s->lock);
}

static int merge(void *ctx, size_t i)
{
	struct state *s = ctx;
	pthread_mutex_lock(&s->lock);
	if (s->merging)
		s->overlapped_merges++;
	s->merging = 1;
	for (size_t k = 0; k <= i; k++)
		if (!s->finished[k])
			s->early_merges++;
	s->merged_at[i] = s->n_merged++;
	pthread_mutex_unlock(&s->lock);
	nap_ms(1);
	pthread_mutex_lock(&s->lock);
	s->merging = 0;
	pthread_mutex_unlock(&s->lock);
	return i == s->stop_at;
}

static void reset(struct state *s, size_t stop_at)
{
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->lock, NULL);
	for (size_t i = 0; i < N; i++)
		s->merged_at[i] = -1;
	s->stop_at = stop_at;
}

/* Two pools of 4 workers each, run at once, whose tasks hold a place in one gate of 3: never
 * more than 3 inside in all (the bound is the run's, not each pool's), and every task ran. */
struct gated {
	struct workpool_gate *gate;
	pthread_mutex_t *lock;
	int *inside, *max_inside, *ran;
};

static void gated_task(void *ctx, size_t i)
{
	struct gated *g = ctx;
	(void)i;
	workpool_gate_enter(g->gate);
	pthread_mutex_lock(g->lock);
	if (++*g->inside > *g->max_inside)
		*g->max_inside = *g->inside;
	(*g->ran)++;
	pthread_mutex_unlock(g->lock);
	nap_ms(5);
	pthread_mutex_lock(g->lock);
	--*g->inside;
	pthread_mutex_unlock(g->lock);
	workpool_gate_leave(g->gate);
}

static void *gated_pool(void *arg)
{
	workpool_run(12, 4, gated_task, arg);
	return NULL;
}

static void test_gate(void)
{
	struct workpool_gate gate;
	workpool_gate_init(&gate, 3);
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int inside = 0, max_inside = 0, ran = 0;
	struct gated g = {&gate, &lock, &inside, &max_inside, &ran};
	pthread_t other;
	CHECK(pthread_create(&other, NULL, gated_pool, &g) == 0);
	gated_pool(&g);
	pthread_join(other, NULL);
	CHECK_I64(ran, 24);
	CHECK(max_inside <= 3);
	CHECK(max_inside >= 2);
	CHECK_I64(inside, 0);
	workpool_gate_release(&gate);
}

int main(void)
{
	struct state s;

	/* ordered, 4 workers: all ran once, at most 4 at once, merged 0..N-1 in order, one at a time */
	reset(&s, N);
	workpool_run_ordered(N, 4, task, merge, &s);
	int once = 1, in_order = 1;
	for (size_t i = 0; i < N; i++) {
		once &= s.ran[i] == 1;
		in_order &= s.merged_at[i] == (int)i;
	}
	CHECK(once);
	CHECK(in_order);
	CHECK(s.max_running <= 4);
	CHECK(s.max_running >= 2);
	CHECK_I64(s.overlapped_merges, 0);
	CHECK_I64(s.early_merges, 0);
	CHECK_I64(s.n_merged, N);

	/* sequential with a stop at 5: tasks 0..5 ran, merges 0..5, nothing after */
	reset(&s, 5);
	workpool_run_ordered(N, 1, task, merge, &s);
	int ran_upto = 1;
	for (size_t i = 0; i < N; i++)
		ran_upto &= s.ran[i] == (i <= 5);
	CHECK(ran_upto);
	CHECK_I64(s.n_merged, 6);
	CHECK_I64(s.merged_at[6], -1);
	CHECK_I64(s.max_running, 1);

	/* parallel with a stop at 3: merges exactly 0..3; each task ran at most once */
	reset(&s, 3);
	workpool_run_ordered(N, 6, task, merge, &s);
	int at_most_once = 1;
	for (size_t i = 0; i < N; i++)
		at_most_once &= s.ran[i] <= 1;
	CHECK(at_most_once);
	CHECK_I64(s.n_merged, 4);
	CHECK_I64(s.merged_at[3], 3);
	CHECK_I64(s.merged_at[4], -1);
	CHECK_I64(s.early_merges, 0);

	/* plain workpool_run: every task once */
	reset(&s, N);
	workpool_run(N, 3, task, &s);
	once = 1;
	for (size_t i = 0; i < N; i++)
		once &= s.ran[i] == 1;
	CHECK(once);
	CHECK(s.max_running <= 3);
	CHECK_I64(s.n_merged, 0);
	test_gate();
	return tap_done();
}
