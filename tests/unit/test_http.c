/* test_http.c - http.c over real HTTP on loopback: retries, backoff, Retry-After, throttling,
 * dropped connections, timeouts, rate limits, connection reuse, body caps and redaction.
 * Sleeps and the clock are injected, so the test never waits for a backoff for real. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/http.h"
#include "loopback_http.h"
#include "tap.h"

struct fake {
	int64_t now;
	int64_t sleeps[64];
	int n_sleeps;
	uint64_t rnd;
};

static int64_t fake_clock(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static void fake_sleep(void *ctx, int64_t ms)
{
	struct fake *f = ctx;
	if (f->n_sleeps < 64)
		f->sleeps[f->n_sleeps++] = ms;
	f->now += ms;
}

static uint64_t fake_random(void *ctx)
{
	return ((struct fake *)ctx)->rnd;
}

static void client(struct http_client *c, struct fake *f, int max_attempts)
{
	memset(f, 0, sizeof *f);
	f->now = 1000000;
	f->rnd = 1000;
	struct http_options o = {0};
	o.max_attempts = max_attempts;
	o.backoff_base_ms = 100;
	o.backoff_max_ms = 1000;
	o.timeout_ms = 5000;
	o.connect_timeout_ms = 2000;
	o.default_rate = -1;
	o.clock_ms = fake_clock;
	o.sleep_ms = fake_sleep;
	o.random = fake_random;
	o.inject_ctx = f;
	struct buf err = BUF_INIT;
	int rc = http_client_init(c, &o, &err);
	CHECK(rc == 0);
	buf_release(&err);
}

static int send_get(struct http_client *c, const char *url, struct http_response *resp, struct buf *err)
{
	struct http_request rq;
	http_request_init(&rq, "GET", url);
	int rc = http_send(c, &rq, resp, err);
	http_request_release(&rq);
	return rc;
}

static void test_headers(void)
{
	struct http_headers h = HTTP_HEADERS_INIT;
	http_headers_add(&h, "X-One", "1");
	http_headers_add(&h, "x-one", "2");
	http_headers_add(&h, "Two", "");
	CHECK_STR(http_headers_get(&h, "X-ONE"), "1");
	CHECK_STR(http_headers_get(&h, "two"), "");
	CHECK(http_headers_get(&h, "three") == NULL);
	http_headers_set(&h, "X-One", "3");
	CHECK_I64(h.n, 2);
	CHECK_STR(http_headers_get(&h, "x-one"), "3");
	http_headers_remove(&h, "TWO");
	CHECK_I64(h.n, 1);
	http_headers_release(&h);
	CHECK(h.n == 0 && h.v == NULL);
}

/* 503 twice then 200: three attempts, two jittered backoffs, one connection reused. */
static void test_retry_5xx(void)
{
	static const struct lb_response script[] = {
		{503, NULL, "busy", 0, 0},
		{503, NULL, "busy", 0, 0},
		{200, "X-Answer: yes\r\n", "hello", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 3) == 0);
	struct http_client c;
	struct fake f;
	client(&c, &f, 5);
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	char url[128];
	snprintf(url, sizeof url, "%s/path?a=1", s.url);
	int rc = send_get(&c, url, &resp, &err);
	CHECK_I64(rc, 0);
	CHECK_I64(resp.status, 200);
	CHECK_STR(resp.body.s, "hello");
	CHECK_STR(http_headers_get(&resp.headers, "x-answer"), "yes");
	CHECK_I64(resp.attempts, 3);
	CHECK_I64(resp.throttled, 0);
	CHECK_I64(lb_count(&s), 3);
	CHECK_STR(lb_req(&s, 2)->target, "/path?a=1");
	CHECK_STR(lb_req(&s, 0)->method, "GET");
	/* full jitter: random % (cap + 1) with caps 100 and 200 */
	CHECK_I64(f.n_sleeps, 2);
	CHECK_I64(f.sleeps[0], 1000 % 101);
	CHECK_I64(f.sleeps[1], 1000 % 201);
	CHECK_I64(lb_conns(&s), 1);
	CHECK_STR(err.s, "");
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

static void test_backoff_bounds(void)
{
	struct http_client c;
	struct fake f;
	client(&c, &f, 5);
	f.rnd = UINT64_MAX;
	/* caps: 100, 200, 400, 800, 1000 (max), 1000 */
	int64_t caps[] = {100, 200, 400, 800, 1000, 1000};
	for (int i = 0; i < 6; i++) {
		int64_t d = http_backoff_ms(&c, i + 1);
		CHECK(d >= 0 && d <= caps[i]);
		CHECK_I64(d, (int64_t)(UINT64_MAX % (uint64_t)(caps[i] + 1)));
	}
	http_client_release(&c);
	/* the real generator stays within the cap */
	struct http_options o = {0};
	o.backoff_base_ms = 50;
	o.backoff_max_ms = 300;
	struct buf err = BUF_INIT;
	CHECK(http_client_init(&c, &o, &err) == 0);
	int ok = 1, spread = 0;
	int64_t first = http_backoff_ms(&c, 3);
	for (int i = 0; i < 200; i++) {
		int64_t d = http_backoff_ms(&c, 3);
		if (d < 0 || d > 200)
			ok = 0;
		if (d != first)
			spread = 1;
	}
	CHECK(ok);
	CHECK(spread);
	http_client_release(&c);
	buf_release(&err);
}

/* 429 with Retry-After: 3 then 200, with the wait between attempts capped at `cap` ms by
 * EM_TEST_RETRY_WAIT_MAX_MS (tests only; NULL: unset), which caps backoff too, never the attempts. */
static void retry_after_3s(const char *cap, int64_t want_wait)
{
	static const struct lb_response script[] = {
		{429, "Retry-After: 3\r\n", "slow down", 0, 0},
		{200, NULL, "ok", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 2) == 0);
	if (cap)
		setenv("EM_TEST_RETRY_WAIT_MAX_MS", cap, 1);
	struct http_client c;
	struct fake f;
	client(&c, &f, 5);
	unsetenv("EM_TEST_RETRY_WAIT_MAX_MS");
	if (cap) {
		f.rnd = UINT64_MAX;
		for (int i = 1; i <= 6; i++)
			CHECK(http_backoff_ms(&c, i) <= want_wait);
	}
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	int rc = send_get(&c, s.url, &resp, &err);
	CHECK_I64(rc, 0);
	CHECK_I64(resp.status, 200);
	CHECK_I64(resp.attempts, 2);
	CHECK_I64(resp.throttled, 1);
	CHECK_I64(f.n_sleeps, 1);
	CHECK_I64(f.sleeps[0], want_wait);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* Unset, the wait is exactly the server's. */
static void test_retry_after(void)
{
	retry_after_3s(NULL, 3000);
}

static void test_retry_wait_cap_for_tests(void)
{
	retry_after_3s("10", 10);
}

/* Throttled on every attempt: EM_ETHROTTLED, the last answer kept for the caller. */
static void test_throttled_exhausted(void)
{
	static const struct lb_response script[] = {
		{429, "Retry-After: 120\r\n", "no", 0, 0},
		{429, NULL, "no", 0, 0},
		{429, NULL, "still no", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 3) == 0);
	struct http_client c;
	struct fake f;
	client(&c, &f, 3);
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	char url[128];
	snprintf(url, sizeof url, "%s/x?X-Amz-Signature=deadbeef", s.url);
	int rc = send_get(&c, url, &resp, &err);
	CHECK_I64(rc, EM_ETHROTTLED);
	CHECK_I64(resp.status, 429);
	CHECK_STR(resp.body.s, "still no");
	CHECK_I64(resp.attempts, 3);
	CHECK_I64(resp.throttled, 3);
	CHECK_I64(lb_count(&s), 3);
	CHECK_I64(f.n_sleeps, 2);
	CHECK_I64(f.sleeps[0], 60000); /* Retry-After 120 s capped at retry_after_max_ms */
	CHECK(strstr(err.s, "still throttled (HTTP 429) after 3 attempts") != NULL);
	CHECK(strstr(err.s, "deadbeef") == NULL);
	CHECK(strstr(err.s, "/x") != NULL);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* AWS standard mode's retry quota (issue 12 item 10): with 10 tokens, a failing request retries
 * twice (5 each) and the next one not at all; a success gives a token back. */
static void test_retry_quota(void)
{
	static const struct lb_response script[] = {
		{503, NULL, "1", 0, 0}, {503, NULL, "2", 0, 0}, {503, NULL, "3", 0, 0},
		{503, NULL, "4", 0, 0}, {200, NULL, "ok", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 5) == 0);
	struct http_client c;
	struct fake f;
	memset(&f, 0, sizeof f);
	f.now = 1000000;
	struct http_options o = {0};
	o.max_attempts = 5;
	o.retry_quota = 10;
	o.default_rate = -1;
	o.clock_ms = fake_clock;
	o.sleep_ms = fake_sleep;
	o.random = fake_random;
	o.inject_ctx = &f;
	struct buf err = BUF_INIT;
	CHECK(http_client_init(&c, &o, &err) == 0);
	struct http_response resp;
	http_response_init(&resp);
	CHECK_I64(send_get(&c, s.url, &resp, &err), 0);
	CHECK_I64(resp.attempts, 3); /* not 5: the quota ran out */
	CHECK_I64(c.quota, 0);
	CHECK_I64(send_get(&c, s.url, &resp, &err), 0);
	CHECK_I64(resp.attempts, 1);
	CHECK_I64(send_get(&c, s.url, &resp, &err), 0);
	CHECK_I64(resp.status, 200);
	CHECK_I64(c.quota, 1);
	CHECK_I64(lb_count(&s), 5);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* AWS adaptive mode: a throttled answer cuts the key's rate to 0.7x, a success adds 0.5/s back. */
static void test_adaptive_rate(void)
{
	static const struct lb_response script[] = {
		{429, NULL, "slow down", 0, 0}, {200, NULL, "a", 0, 0}, {200, NULL, "b", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 3) == 0);
	struct http_client c;
	struct fake f;
	memset(&f, 0, sizeof f);
	f.now = 1000000;
	struct http_options o = {0};
	o.max_attempts = 1;
	o.adaptive_rate = 1;
	o.clock_ms = fake_clock;
	o.sleep_ms = fake_sleep;
	o.random = fake_random;
	o.inject_ctx = &f;
	struct buf err = BUF_INIT;
	CHECK(http_client_init(&c, &o, &err) == 0);
	http_client_set_rate(&c, "ec2:us-east-1", 10, 1);
	struct http_response resp;
	http_response_init(&resp);
	for (int i = 0; i < 3; i++) {
		struct http_request rq;
		http_request_init(&rq, "GET", s.url);
		rq.rate_key = "ec2:us-east-1";
		http_send(&c, &rq, &resp, &err);
		http_request_release(&rq);
	}
	CHECK_I64(f.n_sleeps, 2);
	CHECK_I64(f.sleeps[0], 143); /* 7 requests/s after the 429 (1000/7 rounded up) */
	CHECK_I64(f.sleeps[1], 134);                    /* 7.5 requests/s after a success */
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* Clients sharing token buckets (http_client_share_rates, the inventory's threads): EC2's 100
 * burst is spent by both together, the next request waits for the 20/s refill whichever client
 * sends it, and a throttled answer to one slows the other (the bucket is emptied and refills at
 * 0.7x). Without sharing, the second client would have its own (here unlimited) bucket. */
static void test_shared_rates(void)
{
	static struct lb_response script[104];
	for (int i = 0; i < 104; i++)
		script[i] = (struct lb_response){200, NULL, "ok", 0, 1}; /* one connection at a time */
	script[101].status = 429;
	struct lb_server s;
	CHECK(lb_start(&s, script, 104) == 0);
	struct http_client a, b;
	struct fake f;
	client(&a, &f, 1);
	struct http_options o = a.opt;
	o.ca_file = o.ca_pem = o.client_cert_file = o.client_key_file = NULL;
	o.client_cert_pem = o.client_key_pem = NULL;
	o.user_agent = NULL;
	struct buf err = BUF_INIT;
	CHECK(http_client_init(&b, &o, &err) == 0);
	http_client_set_adaptive(&a, 1);
	http_client_set_adaptive(&b, 1);
	http_client_share_rates(&b, &a);
	http_client_set_rate(&a, "ec2:us-east-1", 20, 100);
	struct http_response resp;
	http_response_init(&resp);
	int statuses[104] = {0};
	for (int i = 0; i < 103; i++) {
		struct http_request rq;
		http_request_init(&rq, "GET", s.url);
		rq.rate_key = "ec2:us-east-1";
		http_send(i % 2 ? &b : &a, &rq, &resp, &err);
		statuses[i] = (int)resp.status;
		http_request_release(&rq);
		if (i == 99)
			CHECK_I64(f.n_sleeps, 0); /* the burst of 100, taken by both clients */
	}
	CHECK_I64(statuses[100], 200);
	CHECK_I64(statuses[101], 429); /* b (odd) is throttled */
	CHECK_I64(f.n_sleeps, 3);
	CHECK_I64(f.sleeps[0], 51); /* a's request 101: one token at 20/s */
	CHECK_I64(f.sleeps[1], 50); /* b's request 102 (0.02 of a token was left) */
	CHECK_I64(f.sleeps[2], 72); /* a after b's 429: an empty bucket refilled at 14/s */
	http_response_release(&resp);
	http_client_release(&b);
	http_client_release(&a); /* the buckets go with the last client using them */
	lb_stop(&s);
	buf_release(&err);
}

/* 5xx on every attempt: 0 with the last answer (the caller reports the service's error). */
static void test_5xx_exhausted(void)
{
	static const struct lb_response script[] = {
		{500, NULL, "a", 0, 0},
		{502, NULL, "b", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 2) == 0);
	struct http_client c;
	struct fake f;
	client(&c, &f, 2);
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	int rc = send_get(&c, s.url, &resp, &err);
	CHECK_I64(rc, 0);
	CHECK_I64(resp.status, 502);
	CHECK_STR(resp.body.s, "b");
	CHECK_I64(resp.attempts, 2);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* A connection dropped without an answer is retried on a new connection. */
static void test_dropped_connection(void)
{
	static const struct lb_response script[] = {
		{0, NULL, NULL, 0, 0},
		{200, NULL, "second", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 2) == 0);
	struct http_client c;
	struct fake f;
	client(&c, &f, 3);
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	int rc = send_get(&c, s.url, &resp, &err);
	CHECK_I64(rc, 0);
	CHECK_I64(resp.status, 200);
	CHECK_STR(resp.body.s, "second");
	CHECK_I64(resp.attempts, 2);
	CHECK_I64(lb_count(&s), 2);
	CHECK_I64(lb_conns(&s), 2);
	CHECK_I64(f.n_sleeps, 1);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

struct classify_seen {
	int calls;
	long last_status;
	int saw_code;
};

static enum http_verdict ec2_like(void *ctx, long status, const struct http_headers *h, const struct buf *body)
{
	struct classify_seen *cs = ctx;
	cs->calls++;
	cs->last_status = status;
	if (strstr(body->s, "<Code>RequestLimitExceeded</Code>")) {
		cs->saw_code = 1;
		return HTTP_THROTTLED;
	}
	if (strstr(body->s, "<Code>Permanent</Code>"))
		return HTTP_FINAL;
	return HTTP_DEFAULT;
}

/* The caller's classifier turns a 400 into throttling and a 503 into a final answer. */
static void test_classifier(void)
{
	static const struct lb_response script[] = {
		{400, NULL, "<Response><Errors><Error><Code>RequestLimitExceeded</Code></Error></Errors></Response>", 0, 0},
		{200, NULL, "fine", 0, 0},
		{503, NULL, "<Code>Permanent</Code>", 0, 0},
		{404, NULL, "nope", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 4) == 0);
	struct http_client c;
	struct fake f;
	client(&c, &f, 5);
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	struct classify_seen cs = {0};
	struct http_request rq;
	http_request_init(&rq, "POST", s.url);
	buf_adds(&rq.body, "Action=DescribeVolumes");
	rq.classify = ec2_like;
	rq.classify_ctx = &cs;
	int rc = http_send(&c, &rq, &resp, &err);
	CHECK_I64(rc, 0);
	CHECK_I64(resp.status, 200);
	CHECK_I64(resp.attempts, 2);
	CHECK_I64(resp.throttled, 1);
	CHECK(cs.saw_code);
	CHECK_I64(cs.calls, 2);
	/* a 503 the classifier calls final is not retried */
	rc = http_send(&c, &rq, &resp, &err);
	CHECK_I64(rc, 0);
	CHECK_I64(resp.status, 503);
	CHECK_I64(resp.attempts, 1);
	/* a 404 is final under the built-in rule */
	rc = http_send(&c, &rq, &resp, &err);
	CHECK_I64(rc, 0);
	CHECK_I64(resp.status, 404);
	CHECK_I64(resp.attempts, 1);
	CHECK_I64(lb_count(&s), 4);
	CHECK_I64(lb_conns(&s), 1);
	http_request_release(&rq);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* What goes on the wire: method, target, the caller's headers, the body; no Expect and no
 * Content-Type the caller did not set. */
static void test_wire(void)
{
	static const struct lb_response script[] = {
		{200, NULL, "posted", 0, 0},
		{200, NULL, "token", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 2) == 0);
	struct http_client c;
	struct fake f;
	client(&c, &f, 1);
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	char url[128], v[256];
	snprintf(url, sizeof url, "%s/api/v1?limit=5", s.url);
	struct http_request rq;
	http_request_init(&rq, "POST", url);
	http_headers_add(&rq.headers, "X-Test", "a b");
	http_headers_add(&rq.headers, "X-Empty", "");
	/* a body over 1 KiB would make curl 7.x ask for 100-continue */
	for (int i = 0; i < 300; i++)
		buf_adds(&rq.body, "abcd");
	CHECK_I64(http_send(&c, &rq, &resp, &err), 0);
	const struct lb_request *r = lb_req(&s, 0);
	CHECK(r != NULL);
	CHECK_STR(r->method, "POST");
	CHECK_STR(r->target, "/api/v1?limit=5");
	CHECK_STR(lb_header(r, "X-Test", v, sizeof v), "a b");
	CHECK_STR(lb_header(r, "X-Empty", v, sizeof v), "");
	CHECK_STR(lb_header(r, "Content-Length", v, sizeof v), "1200");
	CHECK(lb_header(r, "Expect", v, sizeof v) == NULL);
	CHECK(lb_header(r, "Content-Type", v, sizeof v) == NULL);
	CHECK(lb_header(r, "User-Agent", v, sizeof v) && strncmp(v, "ebsmigrate/", 11) == 0);
	CHECK_I64(r->body_len, 1200);
	CHECK(r->body && memcmp(r->body, rq.body.s, 1200) == 0);
	http_request_release(&rq);

	/* PUT without a body (the IMDS token request) */
	http_request_init(&rq, "PUT", s.url);
	http_headers_add(&rq.headers, "X-aws-ec2-metadata-token-ttl-seconds", "21600");
	CHECK_I64(http_send(&c, &rq, &resp, &err), 0);
	CHECK_STR(resp.body.s, "token");
	r = lb_req(&s, 1);
	CHECK(r != NULL);
	CHECK_STR(r->method, "PUT");
	CHECK_STR(r->target, "/");
	CHECK_STR(lb_header(r, "X-aws-ec2-metadata-token-ttl-seconds", v, sizeof v), "21600");
	CHECK_STR(lb_header(r, "Content-Length", v, sizeof v), "0");
	http_request_release(&rq);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* One request to a loopback server playing a script, from a client with the fake clock: set
 * up the request (rq, its url set by scripted_send), send it, check resp, err, f and served. */
struct scripted {
	struct http_request rq;
	struct http_response resp;
	struct buf err;
	struct fake f;
	size_t served; /* requests the server answered */
};

static void scripted_init(struct scripted *t, const char *method)
{
	memset(t, 0, sizeof *t);
	http_request_init(&t->rq, method, "");
	http_response_init(&t->resp);
}

static int scripted_send(struct scripted *t, const struct lb_response *script, size_t n, int max_attempts)
{
	struct lb_server s;
	CHECK(lb_start(&s, script, n) == 0);
	struct http_client c;
	client(&c, &t->f, max_attempts);
	free(t->rq.url);
	t->rq.url = xstrdup(s.url);
	int rc = http_send(&c, &t->rq, &t->resp, &t->err);
	t->served = lb_count(&s);
	http_client_release(&c);
	lb_stop(&s);
	return rc;
}

static void scripted_release(struct scripted *t)
{
	http_request_release(&t->rq);
	http_response_release(&t->resp);
	buf_release(&t->err);
}

/* An answer 700 ms away, with timeout_ms (per attempt) or deadline_ms (in all) of 300: not waited
 * for. The deadline cuts the attempt to what is left of it, whatever the per-attempt timeout (the
 * client's 5 s here). */
static void check_late_answer_cut(long timeout_ms, long deadline_ms)
{
	static const struct lb_response script[] = {
		{200, NULL, "late", 700, 0},
	};
	struct scripted t;
	scripted_init(&t, "GET");
	t.rq.timeout_ms = timeout_ms;
	t.rq.deadline_ms = deadline_ms;
	CHECK_I64(scripted_send(&t, script, 1, 1), EM_ENET);
	CHECK_I64(t.resp.status, 0);
	CHECK(strstr(t.err.s, "GET http://127.0.0.1:") == t.err.s);
	CHECK(strstr(t.err.s, "timed out") != NULL);
	scripted_release(&t);
}

static void test_timeout(void)
{
	check_late_answer_cut(300, 0);
	check_late_answer_cut(0, 300);
}

static void test_refused(void)
{
	struct http_client c;
	struct fake f;
	client(&c, &f, 3);
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/creds?X-Amz-Security-Token=SECRETTOKEN", lb_dead_port());
	int rc = send_get(&c, url, &resp, &err);
	CHECK_I64(rc, EM_ENET);
	CHECK_I64(resp.attempts, 3);
	CHECK_I64(f.n_sleeps, 2);
	CHECK(strstr(err.s, "(after 3 attempts)") != NULL);
	CHECK(strstr(err.s, "/creds") != NULL);
	CHECK(strstr(err.s, "SECRETTOKEN") == NULL);
	/* a malformed URL is not retried */
	buf_reset(&err);
	rc = send_get(&c, "nope://x", &resp, &err);
	CHECK_I64(rc, EM_ENET);
	CHECK_I64(resp.attempts, 1);
	/* with a deadline (issue 28 item 10): backoffs of 91 then 196 ms (the fake jitter) against
	 * 150 ms in all: two attempts, then "out of time" instead of the three allowed */
	buf_reset(&err);
	struct http_request rq;
	http_request_init(&rq, "POST", url);
	rq.deadline_ms = 150;
	rq.secret_url = 1;
	int sleeps = f.n_sleeps;
	CHECK_I64(http_send(&c, &rq, &resp, &err), EM_ENET);
	CHECK_I64(resp.attempts, 2);
	CHECK_I64(f.n_sleeps - sleeps, 1);
	CHECK(strstr(err.s, "(out of time: 1 s in all, 2 attempts)") != NULL);
	CHECK(strstr(err.s, "SECRETTOKEN") == NULL);
	CHECK(resp.unreachable);
	http_request_release(&rq);
	http_response_release(&resp);
	http_client_release(&c);
	buf_release(&err);
}

/* One deadline for the whole request (issue 28 item 10): the waits between attempts count, so a
 * 503 with Retry-After: 20 gets one retry in 30 s, not four; the last answer is returned as when
 * the attempts run out. */
static void test_deadline_waits(void)
{
	static const struct lb_response script[] = {
		{503, "Retry-After: 20\r\n", "busy", 0, 0},
		{503, "Retry-After: 20\r\n", "still busy", 0, 0},
		{503, "Retry-After: 20\r\n", "busy 3", 0, 0},
		{503, "Retry-After: 20\r\n", "busy 4", 0, 0},
		{503, "Retry-After: 20\r\n", "busy 5", 0, 0},
	};
	struct scripted t;
	scripted_init(&t, "POST");
	t.rq.deadline_ms = 30000;
	CHECK_I64(scripted_send(&t, script, 5, 5), 0);
	CHECK_I64(t.resp.status, 503);
	CHECK_STR(t.resp.body.s, "still busy");
	CHECK_I64(t.resp.attempts, 2);
	CHECK_I64(t.f.n_sleeps, 1);
	CHECK_I64(t.f.sleeps[0], 20000);
	CHECK_I64(t.served, 2);
	scripted_release(&t);
}

static void test_body_cap(void)
{
	static const struct lb_response script[] = {
		{200, NULL, "0123456789abcdefghij", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 1) == 0);
	struct http_client c;
	struct fake f;
	memset(&f, 0, sizeof f);
	struct http_options o = {0};
	o.max_body = 10;
	o.sleep_ms = fake_sleep;
	o.clock_ms = fake_clock;
	o.inject_ctx = &f;
	struct buf err = BUF_INIT;
	CHECK(http_client_init(&c, &o, &err) == 0);
	struct http_response resp;
	http_response_init(&resp);
	int rc = send_get(&c, s.url, &resp, &err);
	CHECK_I64(rc, EM_ETOOBIG);
	CHECK(strstr(err.s, "exceeds 10 bytes") != NULL);
	CHECK_I64(resp.attempts, 1);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* 2 requests/s with a burst of 1: three requests need two waits of about half a second. */
static void test_rate_limit(void)
{
	static const struct lb_response script[] = {
		{200, NULL, "1", 0, 0}, {200, NULL, "2", 0, 0}, {200, NULL, "3", 0, 0}, {200, NULL, "4", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 4) == 0);
	struct http_client c;
	struct fake f;
	client(&c, &f, 1);
	http_client_set_rate(&c, "ec2:us-east-1", 2, 1);
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	struct http_request rq;
	http_request_init(&rq, "GET", s.url);
	rq.rate_key = "ec2:us-east-1";
	for (int i = 0; i < 3; i++)
		CHECK_I64(http_send(&c, &rq, &resp, &err), 0);
	CHECK_I64(f.n_sleeps, 2);
	CHECK(f.sleeps[0] >= 499 && f.sleeps[0] <= 502);
	CHECK(f.sleeps[1] >= 499 && f.sleeps[1] <= 502);
	CHECK(f.sleeps[0] + f.sleeps[1] >= 1000);
	/* another key is not held back by this one (default rate unlimited here) */
	rq.rate_key = "sts:us-east-1";
	CHECK_I64(http_send(&c, &rq, &resp, &err), 0);
	CHECK_I64(f.n_sleeps, 2);
	CHECK_I64(lb_conns(&s), 1);
	http_request_release(&rq);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

struct presend_seen {
	int calls;
	int fail_on;
};

static int stamp(void *ctx, const struct http_request *req, struct http_headers *extra, struct buf *err)
{
	struct presend_seen *ps = ctx;
	ps->calls++;
	if (ps->calls == ps->fail_on)
		return em_err(err, EM_EAUTH, "no credentials for attempt %d", ps->calls);
	char v[32];
	snprintf(v, sizeof v, "attempt-%d", ps->calls);
	http_headers_add(extra, "X-Stamp", v);
	http_headers_add(extra, "Authorization", "SECRETAUTH");
	return 0;
}

/* The presend hook runs before every attempt; its headers go with that attempt only. */
static void test_presend(void)
{
	static const struct lb_response script[] = {
		{503, NULL, "", 0, 0},
		{200, NULL, "ok", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 2) == 0);
	struct http_client c;
	struct fake f;
	client(&c, &f, 3);
	struct http_response resp;
	http_response_init(&resp);
	struct buf err = BUF_INIT;
	struct presend_seen ps = {0, 0};
	struct http_request rq;
	http_request_init(&rq, "GET", s.url);
	http_headers_add(&rq.headers, "X-Fixed", "1");
	rq.presend = stamp;
	rq.presend_ctx = &ps;
	CHECK_I64(http_send(&c, &rq, &resp, &err), 0);
	CHECK_I64(resp.attempts, 2);
	CHECK_I64(ps.calls, 2);
	char v[64];
	CHECK_STR(lb_header(lb_req(&s, 0), "X-Stamp", v, sizeof v), "attempt-1");
	CHECK_STR(lb_header(lb_req(&s, 1), "X-Stamp", v, sizeof v), "attempt-2");
	CHECK_STR(lb_header(lb_req(&s, 1), "X-Fixed", v, sizeof v), "1");
	CHECK_I64(rq.headers.n, 1); /* the request itself is untouched */
	/* a failing hook stops the send before anything goes out */
	ps.calls = 0;
	ps.fail_on = 1;
	CHECK_I64(http_send(&c, &rq, &resp, &err), EM_EAUTH);
	CHECK(strstr(err.s, "no credentials for attempt 1") != NULL);
	CHECK_I64(lb_count(&s), 2);
	/* the dump shows presend headers, redacted */
	struct http_headers extra = HTTP_HEADERS_INIT;
	http_headers_add(&extra, "Authorization", "SECRETAUTH");
	http_headers_add(&extra, "X-Stamp", "attempt-9");
	char *d = http_request_dump(&rq, &extra);
	CHECK(strstr(d, "X-Stamp: attempt-9") != NULL);
	CHECK(strstr(d, "SECRETAUTH") == NULL);
	free(d);
	http_headers_release(&extra);
	http_request_release(&rq);
	http_response_release(&resp);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

static void test_dump(void)
{
	struct http_request rq;
	http_request_init(&rq, "POST",
			  "https://sts.amazonaws.com/?Action=GetCallerIdentity&X-Amz-Credential=AKIDEXAMPLE%2F20150830&"
			  "X-Amz-Signature=abcdef0123&X-Amz-Security-Token=SESSIONTOK");
	http_headers_add(&rq.headers, "Authorization", "AWS4-HMAC-SHA256 Credential=AKID/x, Signature=SIGVALUE");
	http_headers_add(&rq.headers, "X-Amz-Security-Token", "SESSIONTOK");
	http_headers_add(&rq.headers, "X-aws-ec2-metadata-token", "IMDSTOK");
	http_headers_add(&rq.headers, "X-aws-ec2-metadata-token-ttl-seconds", "21600");
	http_headers_add(&rq.headers, "Content-Type", "application/x-www-form-urlencoded");
	buf_adds(&rq.body, "Action=AssumeRoleWithWebIdentity&WebIdentityToken=JWTVALUE");
	char *d = http_request_dump(&rq, NULL);
	CHECK(strstr(d, "SIGVALUE") == NULL);
	CHECK(strstr(d, "SESSIONTOK") == NULL);
	CHECK(strstr(d, "IMDSTOK") == NULL);
	CHECK(strstr(d, "abcdef0123") == NULL);
	CHECK(strstr(d, "JWTVALUE") == NULL);
	CHECK(strstr(d, "X-aws-ec2-metadata-token-ttl-seconds: 21600") != NULL);
	CHECK(strstr(d, "Content-Type: application/x-www-form-urlencoded") != NULL);
	CHECK(strstr(d, "Action=GetCallerIdentity") != NULL);
	free(d);
	rq.secret_body = 1;
	d = http_request_dump(&rq, NULL);
	CHECK(strstr(d, "AssumeRoleWithWebIdentity") == NULL);
	CHECK(strstr(d, "bytes, not shown]") != NULL);
	free(d);
	http_request_release(&rq);

	struct buf m = BUF_INIT;
	http_url_for_message(&m, "https://h/p?X-Amz-Signature=1#frag");
	CHECK_STR(m.s, "https://h/p");
	buf_release(&m);
}

int main(void)
{
	test_headers();
	test_backoff_bounds();
	test_retry_wait_cap_for_tests();
	test_retry_5xx();
	test_retry_after();
	test_throttled_exhausted();
	test_5xx_exhausted();
	test_retry_quota();
	test_adaptive_rate();
	test_shared_rates();
	test_dropped_connection();
	test_classifier();
	test_wire();
	test_timeout();
	test_refused();
	test_deadline_waits();
	test_body_cap();
	test_rate_limit();
	test_presend();
	test_dump();
	return tap_done();
}
