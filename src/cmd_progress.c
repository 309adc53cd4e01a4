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
 * One phase is open at a time: a step of another phase ends the open one first.
 */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/cmd.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/progress.h"

#define REDRAW_INTERVAL_S 0.1

static struct {
	int open;        /* a phase is running */
	int shown;       /* the line is on the terminal */
	char phase[64], scope[192];
	char last[256];  /* the text last drawn: the same text is not drawn twice */
	char detail[160]; /* cmd_progress_detail's text, drawn after the figures */
	size_t done, total;
	double started, drawn_at;
} cur;

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

static void clear_line(void)
{
	if (cur.shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		cur.shown = 0;
		cur.drawn_at = -1.0; /* the next step redraws at once */
	}
}

static void draw(double now)
{
	double elapsed = now - cur.started;
	struct buf line = BUF_INIT;
	buf_add_visible(&line, cur.phase);
	if (cur.scope[0]) {
		buf_addc(&line, ' ');
		buf_add_visible(&line, cur.scope);
	}
	if (cur.done || cur.total) /* a phase of one call has no count: its name is the news */
		buf_addf(&line, ": %zu", cur.done);
	if (cur.total)
		buf_addf(&line, "/%zu", cur.total);
	if (elapsed >= 0.2 && cur.done) {
		double rate = (double)cur.done / elapsed;
		buf_addf(&line, "  %.0f/s", rate);
		if (cur.total > cur.done)
			buf_addf(&line, "  ETA %.0fs", (double)(cur.total - cur.done) / rate + 0.5);
	}
	if (cur.detail[0]) {
		buf_adds(&line, "  ");
		buf_add_visible(&line, cur.detail);
	}
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

static void finish(void)
{
	if (!cur.open)
		return;
	clear_line();
	double elapsed = mono_now() - cur.started;
	struct buf what = BUF_INIT;
	buf_add_visible(&what, cur.phase);
	if (cur.scope[0]) {
		buf_addc(&what, ' ');
		buf_add_visible(&what, cur.scope);
	}
	if (cur.total)
		log_info("%s: %zu/%zu in %.2fs", what.s, cur.done, cur.total, elapsed);
	else if (cur.done)
		log_info("%s: %zu in %.2fs", what.s, cur.done, elapsed);
	else
		log_info("%s: done in %.2fs", what.s, elapsed);
	buf_release(&what);
	cur.open = 0;
}

void cmd_progress(void *ctx, enum progress_event ev, const char *phase, const char *scope, size_t done, size_t total)
{
	(void)ctx;
	if (!phase)
		phase = "";
	if (!scope)
		scope = "";
	int same = cur.open && strncmp(cur.phase, phase, sizeof cur.phase - 1) == 0 &&
		   strncmp(cur.scope, scope, sizeof cur.scope - 1) == 0;
	double now = mono_now();
	if (!same) {
		finish();
		snprintf(cur.phase, sizeof cur.phase, "%s", phase);
		snprintf(cur.scope, sizeof cur.scope, "%s", scope);
		cur.open = 1;
		cur.started = now;
		cur.drawn_at = -1.0;
		cur.total = 0;
		cur.last[0] = '\0';
		cur.detail[0] = '\0';
	}
	cur.done = done;
	if (total)
		cur.total = total;
	if (line_wanted()) {
		int last = ev == PROGRESS_DONE || (cur.total && cur.done >= cur.total);
		if (cur.drawn_at < 0 || last || now - cur.drawn_at >= REDRAW_INTERVAL_S)
			draw(now);
	}
	if (ev == PROGRESS_DONE)
		finish();
}

void cmd_progress_detail(const char *text)
{
	snprintf(cur.detail, sizeof cur.detail, "%s", text ? text : "");
	if (cur.open && cur.detail[0] && line_wanted()) /* a removal shows with the next step */
		draw(mono_now());
}

void cmd_progress_end(void)
{
	finish();
	clear_line();
}
