/* test_aws_client.c - aws_client_waves: every batch fetched once, slot k of a wave sending batch
 * first + k, each slot with its own worker client (the job's client itself when one at a time),
 * collected in batch order; the first failed fetch (its message appended) or non-zero collect
 * ends the run, no later batch is collected; aws_wave_width bounds a wave by the batches.
 * No request is sent: the fetches only record what they were given. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/common.h"
#include "tap.h"

#define MAX_BATCHES 16

struct job {
	pthread_mutex_t lock;
	struct aws_client *base;
	size_t width;
	int fetched[MAX_BATCHES];
	size_t slot_of[MAX_BATCHES];
	struct aws_client *client_of[MAX_BATCHES];
	size_t collected[MAX_BATCHES], n_collected;
	size_t fail_fetch, stop_collect; /* the batch whose fetch fails / collect stops (MAX_BATCHES: none) */
};

static int fetch(void *ctx, size_t slot, size_t batch, struct aws_client *c, struct buf *err)
{
	struct job *j = ctx;
	pthread_mutex_lock(&j->lock);
	j->fetched[batch]++;
	j->slot_of[batch] = slot;
	j->client_of[batch] = c;
	pthread_mutex_unlock(&j->lock);
	if (batch == j->fail_fetch)
		return em_err(err, EM_ESERVER, "batch %zu failed", batch);
	return 0;
}

static int collect(void *ctx, size_t slot, size_t batch)
{
	struct job *j = ctx;
	CHECK_I64((long long)slot, (long long)(batch % j->width));
	j->collected[j->n_collected++] = batch;
	return batch == j->stop_collect ? EM_EINPUT : 0;
}

/* j set for a job of n_batches at --concurrency concurrency, nothing failing */
static void job_reset(struct job *j, struct aws_client *base, size_t n_batches, int concurrency, struct buf *err)
{
	memset(j, 0, sizeof *j);
	pthread_mutex_init(&j->lock, NULL);
	j->base = base;
	j->width = aws_wave_width(concurrency, n_batches);
	j->fail_fetch = j->stop_collect = MAX_BATCHES;
	buf_reset(err);
}

/* Every batch of n fetched once by slot batch % width and collected in order; one at a time with
 * the job's own client, else each slot with a worker client of its own. */
static void check_complete(const struct job *j, size_t n)
{
	CHECK_I64((long long)j->n_collected, (long long)n);
	for (size_t b = 0; b < n; b++) {
		CHECK_I64(j->fetched[b], 1);
		CHECK_I64((long long)j->collected[b], (long long)b);
		CHECK_I64((long long)j->slot_of[b], (long long)(b % j->width));
		CHECK((j->client_of[b] == j->base) == (j->width == 1));
		CHECK(j->client_of[b] == j->client_of[b % j->width]);
	}
}

static void test_width(void)
{
	CHECK_I64((long long)aws_wave_width(0, 10), 1);
	CHECK_I64((long long)aws_wave_width(1, 10), 1);
	CHECK_I64((long long)aws_wave_width(4, 10), 4);
	CHECK_I64((long long)aws_wave_width(16, 3), 3);
	CHECK_I64((long long)aws_wave_width(8, 0), 1);
}

static void test_waves(struct aws_client *base)
{
	struct job j;
	struct buf err = BUF_INIT;

	/* one at a time: the job's own client, every batch in order */
	job_reset(&j, base, 5, 1, &err);
	CHECK_I64(aws_client_waves(base, 5, j.width, fetch, collect, &j, &err), 0);
	check_complete(&j, 5);

	/* three at a time over 7 batches: waves 0-2, 3-5, 6; slot k keeps its own worker client */
	job_reset(&j, base, 7, 3, &err);
	CHECK_I64(aws_client_waves(base, 7, j.width, fetch, collect, &j, &err), 0);
	check_complete(&j, 7);
	CHECK(j.client_of[0] != j.client_of[1] && j.client_of[1] != j.client_of[2]);
	CHECK_STR(err.s, "");

	/* a failed fetch: earlier batches collected, its message is the run's, no later wave sent */
	job_reset(&j, base, 9, 3, &err);
	j.fail_fetch = 4;
	CHECK_I64(aws_client_waves(base, 9, j.width, fetch, collect, &j, &err), EM_ESERVER);
	CHECK_STR(err.s, "batch 4 failed");
	CHECK_I64((long long)j.n_collected, 4);
	CHECK_I64(j.fetched[5], 1); /* the same wave's later batch was sent, not collected */
	CHECK_I64(j.fetched[6], 0);

	/* a collect that stops the run */
	job_reset(&j, base, 6, 2, &err);
	j.stop_collect = 2;
	CHECK_I64(aws_client_waves(base, 6, j.width, fetch, collect, &j, &err), EM_EINPUT);
	CHECK_I64((long long)j.n_collected, 3);
	CHECK_I64(j.fetched[3], 1);
	CHECK_I64(j.fetched[4], 0);
	CHECK_STR(err.s, "");

	/* no batches: nothing fetched, nothing collected */
	job_reset(&j, base, 0, 4, &err);
	CHECK_I64(aws_client_waves(base, 0, j.width, fetch, collect, &j, &err), 0);
	CHECK_I64((long long)j.n_collected, 0);
	buf_release(&err);
}

int main(void)
{
	/* no profile files: the client's settings are the defaults */
	setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials", 1);
	unsetenv("AWS_PROFILE");
	test_width();
	struct aws_client base;
	struct buf err = BUF_INIT;
	CHECK_I64(aws_client_init(&base, NULL, &err), 0);
	test_waves(&base);
	aws_client_release(&base);
	buf_release(&err);
	return tap_done();
}
