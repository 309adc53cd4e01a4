/*
 * stop.c - SIGTERM/SIGINT as a stop request (contract in stop.h).
 *
 * Entry points: stop_install, stop_requested, stop_flag, stop_acknowledge, stop_set_abort_io,
 * stop_abort_io, stop_signal_name.
 *
 * Invariants: the handler only stores into sig_atomic_t objects, and on a second signal calls
 * _exit (both async-signal-safe); it is installed without SA_RESTART so that a blocking call
 * returns EINTR and its caller gets to look at the request.
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/stop.h"

static volatile sig_atomic_t stop_sig;      /* the first signal, 0 before */
static volatile sig_atomic_t stop_set;      /* 1 once stop_sig is set: proc_run's flag */
static volatile sig_atomic_t abort_io = 1;

static void on_signal(int sig)
{
	if (stop_set)
		_exit(128 + sig); /* asked twice: now */
	stop_sig = sig;
	stop_set = 1;
}

void stop_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

int stop_requested(void)
{
	return stop_sig;
}

volatile sig_atomic_t *stop_flag(void)
{
	return &stop_set;
}

void stop_acknowledge(void)
{
	stop_sig = 0; /* stop_set stays: a later signal still ends the process at once */
}

void stop_set_abort_io(int on)
{
	abort_io = on != 0;
}

int stop_abort_io(void)
{
	return abort_io;
}

const char *stop_signal_name(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "a signal";
}
