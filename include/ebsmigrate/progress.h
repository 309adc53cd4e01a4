#ifndef EBSMIGRATE_PROGRESS_H
#define EBSMIGRATE_PROGRESS_H
/*
 * progress.h - how modules below cmd_* report a long phase's progress. They never print: they
 * call a progress_fn their caller handed them (cmd_progress renders it, see cmd.h).
 *
 * A phase is (phase, scope), e.g. ("metrics", "us-east-1"): PROGRESS_STEP reports done of total
 * items so far (total 0 = not known yet), PROGRESS_DONE ends it with the final count.
 */
#include <stddef.h>

enum progress_event { PROGRESS_STEP = 0, PROGRESS_DONE = 1 };

typedef void (*progress_fn)(void *ctx, enum progress_event ev, const char *phase, const char *scope, size_t done,
			    size_t total);

static inline void progress_report(progress_fn fn, void *ctx, enum progress_event ev, const char *phase,
				   const char *scope, size_t done, size_t total)
{
	if (fn)
		fn(ctx, ev, phase, scope, done, total);
}

#endif
