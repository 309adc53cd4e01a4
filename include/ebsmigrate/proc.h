/*
 * proc.h - running a program: the one process runner (fio for bench, Kubernetes exec
 * credential plugins).
 *
 * proc_find_program looks a name up on PATH (as a shell does; a name with a '/' is taken as
 * given). proc_run starts it with fork + execve, never through a shell and never with a
 * terminal: stdin is the given bytes or /dev/null; stdout and stderr are captured into
 * bounded bufs (bytes beyond a cap are read and dropped, so the child never blocks on a full
 * pipe), or stdout goes to a callback; it waits for the exit and reports the wait status.
 *
 * Stopping: at opt->timeout_ms the child (its process group with own_group) gets SIGKILL and
 * proc_run returns without reading further (r->timed_out). When *opt->stop becomes non-zero
 * the child gets SIGINT, SIGKILL stop_grace_ms later, and proc_run reads until it exits
 * (r->stopped).
 *
 * Secrets: with opt->secret every chunk read is wiped after it is copied, and
 * proc_result_release wipes the captured text; the caller wipes its envp.
 *
 * Errors: proc_run returns 0 when the program ran (whatever its exit status) and -1 when it
 * did not: r->start_error says which step failed and r->start_errno why, for the caller to
 * word (callers' messages differ). It never prints and never writes to err itself.
 */
#ifndef EBSMIGRATE_PROC_H
#define EBSMIGRATE_PROC_H

#include <signal.h>
#include <stddef.h>

#include "ebsmigrate/buf.h"

/* The first executable regular file called name on PATH (unset or empty PATH:
 * /usr/local/bin:/usr/bin:/bin; an empty element is the current directory), or name itself
 * when it has a '/' and is executable. Heap string, caller frees; NULL when none. */
char *proc_find_program(const char *name);

/* One variable for a child's environment. */
struct proc_env_var {
	const char *name, *value;
};

/* Our environment with every variable named in vars left out, then vars appended in their
 * order as "NAME=value": inherit, override and add in one envp for proc_options.envp.
 * NULL-terminated, heap; free with proc_env_free, which wipes (values may be secrets). */
char **proc_env_build(const struct proc_env_var *vars, size_t n);
void proc_env_free(char **envp);

struct proc_options {
	const char *path;            /* program to execute (not looked up: see proc_find_program) */
	char *const *argv;           /* argv[0] included, NULL-terminated */
	char *const *envp;           /* NULL = inherit our environment */
	const char *cwd;             /* NULL = ours */
	const char *stdin_data;      /* NULL = /dev/null */
	size_t stdin_len;
	size_t stdout_cap, stderr_cap; /* bytes kept; 0 = unlimited */
	/* When set, stdout goes here chunk by chunk instead of into r->out. */
	void (*on_stdout)(void *ctx, const char *data, size_t n);
	void *stdout_ctx;
	long timeout_ms;             /* 0 = none */
	volatile sig_atomic_t *stop; /* NULL = none */
	long stop_grace_ms;          /* SIGINT to SIGKILL after a stop; 0 = 10 s */
	int own_group;               /* child leads its own process group: signals reach its children */
	int default_signals;         /* SIGINT, SIGTERM, SIGPIPE back to their defaults in the child */
	int secret;                  /* output holds secrets: wipe what is read */
};

enum proc_start_error {
	PROC_STARTED = 0,
	PROC_START_PIPE,  /* pipe() failed */
	PROC_START_FORK,  /* fork() failed */
	PROC_START_CWD,   /* chdir(opt->cwd) failed in the child */
	PROC_START_EXEC,  /* execve failed in the child */
};

struct proc_result {
	struct buf out, err;         /* captured stdout (unless on_stdout) and stderr */
	int status;                  /* waitpid status; -1 when the wait failed */
	int timed_out;               /* killed at timeout_ms */
	int stopped;                 /* stopped through opt->stop */
	enum proc_start_error start_error;
	int start_errno;
	int secret;                  /* release wipes */
};

/* r is initialised here. 0: it ran (see r->status); -1: it did not start (r->start_*). */
int proc_run(struct proc_result *r, const struct proc_options *opt);
void proc_result_release(struct proc_result *r);

/* "exit 3", "killed by signal 9", "lost" (status -1), "unknown status". */
void proc_describe_status(struct buf *out, int status);

#endif
