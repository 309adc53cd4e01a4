/*
 * cmd_progress.c - renders the progress modules report (progress.h) as one redrawn stderr line:
 * "PHASE SCOPE: DONE/TOTAL  RATE/s  ETA Ns".
 *
 * Entry points: cmd_progress (a progress_fn; ctx unused), cmd_progress_detail (a text drawn after
 * the figures until the phase ends, e.g. bench's fio status) and cmd_progress_end.
 * Invariants: the line is drawn only when stderr is a TTY and the level is not --quiet, at most
 * ten times a second (plus a phase's first and last step), never wider than the terminal (a
 * wrapped line cannot be redrawn with \r), and cleared when its phase ends, so later output
 * starts on a clean line. Under -v each finished phase logs its totals and time, TTY or not.
 * One phase is open at a time per thread: a step of another phase from the same thread ends
 * that thread's open phase first. Threads (the inventory's fan-out over regions and clusters)
 * each have their own open phase (up to MAX_OPEN at once); the line shows the phase stepped
 * last, with how many others run ("+2 more"). All state is changed, and every write made,
 * under the log's lock (log_lock), so the line and messages never interleave.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "ebsmigrate/buf.h"
#include "cmd.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/progress.h"

#define REDRAW_INTERVAL_S 0.1

#define MAX_OPEN 32

struct open_phase {
	int open;        /* a phase is running */
	pthread_t owner; /* the thread stepping it */
	char phase[64], scope[192];
	size_t done, total;
	double started;
};

static struct {
	struct open_phase p[MAX_OPEN];
	size_t current;  /* the phase the line shows: the one stepped last */
	int shown;       /* the line is on the terminal */
	char last[256];  /* the text last drawn: the same text is not drawn twice */
	char detail[160]; /* cmd_progress_detail's text, drawn after the figures */
	double drawn_at;
} cur = {.drawn_at = -1.0};

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int line_wanted(void)
{
	return log_get_level() >= LOG_NORMAL && isatty(2);
}

/* The log's before-write hook: runs under log_lock (log.c), as does everything below. */
static void clear_line(void)
{
	if (cur.shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		cur.shown = 0;
		cur.drawn_at = -1.0; /* the next step redraws at once */
	}
}

static void add_scope(struct buf *b, const struct open_phase *p)
{
	buf_add_visible(b, p->phase);
	if (p->scope[0]) {
		buf_addc(b, ' ');
		buf_add_visible(b, p->scope);
	}
}

static void draw(double now)
{
	const struct open_phase *p = &cur.p[cur.current];
	double elapsed = now - p->started;
	struct buf line = BUF_INIT;
	add_scope(&line, p);
	if (p->done || p->total) /* a phase of one call has no count: its name is the news */
		buf_addf(&line, ": %zu", p->done);
	if (p->total)
		buf_addf(&line, "/%zu", p->total);
	if (elapsed >= 0.2 && p->done) {
		double rate = (double)p->done / elapsed;
		buf_addf(&line, "  %.0f/s", rate);
		if (p->total > p->done)
			buf_addf(&line, "  ETA %.0fs", (double)(p->total - p->done) / rate + 0.5);
	}
	if (cur.detail[0]) {
		buf_adds(&line, "  ");
		buf_add_visible(&line, cur.detail);
	}
	size_t others = 0;
	for (size_t i = 0; i < MAX_OPEN; i++)
		others += cur.p[i].open && i != cur.current;
	if (others)
		buf_addf(&line, "  (+%zu more)", others);
	struct winsize ws;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && line.len >= ws.ws_col)
		line.s[ws.ws_col - 1] = '\0';
	const char *text = line.s ? line.s : "";
	if (!cur.shown || strcmp(text, cur.last) != 0) {
		log_set_before_write(clear_line); /* a message starts on a clean line */
		fprintf(stderr, "\r\033[K%s", text);
		fflush(stderr);
		snprintf(cur.last, sizeof cur.last, "%s", text);
	}
	buf_release(&line);
	cur.shown = 1;
	cur.drawn_at = now;
}

static void finish(struct open_phase *p)
{
	if (!p->open)
		return;
	clear_line();
	double elapsed = mono_now() - p->started;
	struct buf what = BUF_INIT;
	add_scope(&what, p);
	if (p->total)
		log_info("%s: %zu/%zu in %.2fs", what.s, p->done, p->total, elapsed);
	else if (p->done)
		log_info("%s: %zu in %.2fs", what.s, p->done, elapsed);
	else
		log_info("%s: done in %.2fs", what.s, elapsed);
	buf_release(&what);
	p->open = 0;
}

/* The calling thread's open phase, or a slot for a new one (the oldest phase is finished when
 * all MAX_OPEN are taken). */
static struct open_phase *slot_for(pthread_t self)
{
	struct open_phase *free_slot = NULL, *oldest = NULL;
	for (size_t i = 0; i < MAX_OPEN; i++) {
		struct open_phase *p = &cur.p[i];
		if (p->open && pthread_equal(p->owner, self))
			return p;
		if (!p->open && !free_slot)
			free_slot = p;
		if (p->open && (!oldest || p->started < oldest->started))
			oldest = p;
	}
	if (free_slot)
		return free_slot;
	finish(oldest);
	return oldest;
}

void cmd_progress(void *ctx, enum progress_event ev, const char *phase, const char *scope, size_t done, size_t total)
{
	(void)ctx;
	if (!phase)
		phase = "";
	if (!scope)
		scope = "";
	log_lock();
	pthread_t self = pthread_self();
	struct open_phase *p = slot_for(self);
	int same = p->open && strncmp(p->phase, phase, sizeof p->phase - 1) == 0 &&
		   strncmp(p->scope, scope, sizeof p->scope - 1) == 0;
	double now = mono_now();
	if (!same) {
		finish(p);
		snprintf(p->phase, sizeof p->phase, "%s", phase);
		snprintf(p->scope, sizeof p->scope, "%s", scope);
		p->open = 1;
		p->owner = self;
		p->started = now;
		p->total = 0;
		cur.drawn_at = -1.0;
		cur.last[0] = '\0';
		cur.detail[0] = '\0';
	}
	p->done = done;
	if (total)
		p->total = total;
	cur.current = (size_t)(p - cur.p);
	if (line_wanted()) {
		int last = ev == PROGRESS_DONE || (p->total && p->done >= p->total);
		if (cur.drawn_at < 0 || last || now - cur.drawn_at >= REDRAW_INTERVAL_S)
			draw(now);
	}
	if (ev == PROGRESS_DONE)
		finish(p);
	log_unlock();
}

void cmd_progress_detail(const char *text)
{
	log_lock();
	snprintf(cur.detail, sizeof cur.detail, "%s", text ? text : "");
	if (cur.p[cur.current].open && cur.detail[0] && line_wanted()) /* a removal shows with the next step */
		draw(mono_now());
	log_unlock();
}

void cmd_progress_end(void)
{
	log_lock();
	for (size_t i = 0; i < MAX_OPEN; i++)
		finish(&cur.p[i]);
	clear_line();
	log_unlock();
}
