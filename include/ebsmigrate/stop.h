/*
 * stop.h - SIGTERM and SIGINT as a stop request (stop.c). In a container the binary is PID 1,
 * where the kernel ignores signals without a handler: without this, `kubectl delete pod` would
 * wait out the grace period and SIGKILL.
 *
 * main.c installs the handlers once (stop_install). A first signal only records itself; the
 * program winds down through its ordinary error paths, so staged outputs are removed and open
 * database transactions roll back, then main exits 128 + the signal (143 SIGTERM, 130 SIGINT;
 * docs/exit-codes.md#signals). A second signal ends the process at once with that code.
 *
 * Who looks at the request:
 *   - http.c (stop_abort_io on, the default): no new request starts and a transfer in flight is
 *     aborted, failing with EM_ESTOPPED;
 *   - apply (which turns stop_abort_io off): the call in hand completes and is recorded; apply.c
 *     stops before the next volume, never between recording an intent and sending it;
 *   - proc_run's `stop` (stop_flag()): the child is interrupted (bench's fio);
 *   - cmd_outputs_commit: nothing is renamed into place once a stop was requested.
 *
 * State: the only process-wide mutable state besides main's command context, because a signal
 * handler can reach nothing else. Lock-free: sig_atomic_t values written by the handler.
 */
#ifndef EBSMIGRATE_STOP_H
#define EBSMIGRATE_STOP_H

#include <signal.h>

void stop_install(void);
/* The signal that requested the stop (SIGTERM, SIGINT), or 0. */
int stop_requested(void);
/* The flag for proc_run's `stop` (non-zero once a stop was requested). */
volatile sig_atomic_t *stop_flag(void);
/* Whether HTTP transfers are aborted by a stop request (default 1). */
void stop_set_abort_io(int on);
int stop_abort_io(void);
/* A command that reported the stop itself and chose its exit code (bench: exit 1, "interrupted")
 * clears the request, so main does not turn that code into 128 + signal. */
void stop_acknowledge(void);
/* "SIGTERM", "SIGINT" (the two installed), else "a signal". */
const char *stop_signal_name(int sig);

#endif
