/*
 * proc.c - the process runner (contract in proc.h): PATH lookup, fork + execve with stdin,
 * stdout and stderr on pipes, a poll loop that feeds stdin, drains both outputs within their
 * caps and enforces the timeout and the stop flag, then the wait.
 *
 * Entry points: proc_find_program, proc_env_build / proc_env_free, proc_run, proc_result_release,
 * proc_describe_status.
 *
 * Invariants:
 * - Between fork and execve the child only calls async-signal-safe functions (the caller may
 *   have threads): everything it needs (argv, envp, path) is built before the fork.
 * - Every pipe is close-on-exec, so no other program we start inherits one; a failed chdir or
 *   execve is reported to the parent through its own close-on-exec pipe (errno and step), so a
 *   program that did not start is never confused with one that exited 127.
 * - Each output is always read to its end (or the timeout), bytes beyond the cap dropped, so
 *   the child never blocks on a full pipe; a timed-out child is killed and reaped.
 * - As PID 1 (the container image has no init) or a child subreaper, the orphans our children
 *   leave (a plugin's or fio's background process) become our children: each proc_run ends by
 *   reaping those that exited, never one of proc_run's own (registered from fork to wait, under
 *   a lock held across the fork), whose status belongs to the thread waiting for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/proc.h"
#include "ebsmigrate/secbuf.h"

extern char **environ;

/* proc_run's children between fork and their wait: process-wide, because orphans are (reap_orphans). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *live_pids;
static size_t n_live, alloc_live;

static void live_remove(pid_t pid)
{
	pthread_mutex_lock(&live_lock);
	for (size_t i = 0; i < n_live; i++)
		if (live_pids[i] == pid) {
			live_pids[i] = live_pids[--n_live];
			break;
		}
	pthread_mutex_unlock(&live_lock);
}

static int is_reaper(void)
{
	int sub = 0;
	return getpid() == 1 || (prctl(PR_GET_CHILD_SUBREAPER, &sub) == 0 && sub);
}

/* Reaps exited children that are not proc_run's own (see the invariants). */
static void reap_orphans(void)
{
	if (!is_reaper())
		return;
	for (int i = 0; i < 1000; i++) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
			return;
		int ours = 0;
		pthread_mutex_lock(&live_lock);
		for (size_t k = 0; k < n_live && !ours; k++)
			ours = live_pids[k] == si.si_pid;
		pthread_mutex_unlock(&live_lock);
		if (ours || waitpid(si.si_pid, NULL, WNOHANG) <= 0)
			return; /* its proc_run reaps it; the next call reaps what remains */
	}
}

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define DEFAULT_STOP_GRACE_MS 10000
#define READ_CHUNK 32768

char *proc_find_program(const char *name)
{
	if (!name || !*name)
		return NULL;
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = DEFAULT_PATH;
	struct buf cand = BUF_INIT;
	char *found = NULL;
	while (!found && *path) {
		size_t n = strcspn(path, ":");
		buf_reset(&cand);
		if (n)
			buf_add(&cand, path, n);
		else
			buf_addc(&cand, '.');
		buf_addf(&cand, "/%s", name);
		struct stat st;
		if (stat(cand.s, &st) == 0 && S_ISREG(st.st_mode) && access(cand.s, X_OK) == 0)
			found = buf_detach(&cand);
		path += n + (path[n] == ':');
	}
	buf_release(&cand);
	return found;
}

char **proc_env_build(const struct proc_env_var *vars, size_t n)
{
	size_t have = 0;
	for (char **e = environ; e && *e; e++)
		have++;
	char **v = xcalloc(have + n + 1, sizeof(char *));
	size_t k = 0;
	for (char **e = environ; e && *e; e++) {
		size_t name_len = strcspn(*e, "=");
		int replaced = 0;
		for (size_t i = 0; i < n && !replaced; i++)
			replaced = strlen(vars[i].name) == name_len && strncmp(*e, vars[i].name, name_len) == 0;
		if (!replaced)
			v[k++] = xstrdup(*e);
	}
	for (size_t i = 0; i < n; i++) {
		struct buf b = BUF_INIT;
		buf_addf(&b, "%s=%s", vars[i].name, vars[i].value);
		v[k++] = buf_detach(&b);
	}
	v[k] = NULL;
	return v;
}

void proc_env_free(char **envp)
{
	if (!envp)
		return;
	for (char **e = envp; *e; e++)
		secbuf_free_str(*e);
	free(envp);
}

void proc_describe_status(struct buf *out, int status)
{
	if (status == -1)
		buf_adds(out, "lost");
	else if (WIFEXITED(status))
		buf_addf(out, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		buf_addf(out, "killed by signal %d", WTERMSIG(status));
	else
		buf_adds(out, "unknown status");
}

void proc_result_release(struct proc_result *r)
{
	if (r->secret) {
		secbuf_release(&r->out);
		secbuf_release(&r->err);
	} else {
		buf_release(&r->out);
		buf_release(&r->err);
	}
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* What the child sends back when it cannot become the program. */
struct start_report {
	int step;  /* enum proc_start_error */
	int errnum;
};

/* In the child, after fork: async-signal-safe calls only. Never returns. */
static void child_exec(const struct proc_options *o, int in_fd, int out_fd, int err_fd, int report_fd,
		       const sigset_t *mask)
{
	if (mask) /* the caller's mask, without the SIGPIPE block proc_run added for itself */
		sigprocmask(SIG_SETMASK, mask, NULL);
	if (o->own_group)
		setpgid(0, 0);
	if (in_fd < 0)
		in_fd = open("/dev/null", O_RDONLY);
	if (in_fd >= 0)
		dup2(in_fd, 0);
	dup2(out_fd, 1);
	dup2(err_fd, 2);
	signal(SIGXFSZ, SIG_DFL); /* main.c ignores it for ebsmigrate's own writes only */
	if (o->default_signals) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
	}
	struct start_report rep = {PROC_START_CWD, 0};
	if (!o->cwd || chdir(o->cwd) == 0) {
		execve(o->path, o->argv, o->envp ? o->envp : environ);
		rep.step = PROC_START_EXEC;
	}
	rep.errnum = errno;
	ssize_t w = write(report_fd, &rep, sizeof rep);
	(void)w;
	_exit(rep.step == PROC_START_CWD ? 126 : 127);
}

static void take(struct buf *dst, const char *chunk, size_t n, size_t cap)
{
	if (cap) {
		size_t room = dst->len < cap ? cap - dst->len : 0;
		if (n > room)
			n = room; /* beyond the cap: drained, dropped */
	}
	if (n)
		buf_add(dst, chunk, n);
}

/* One read from *fd into dst (or the stdout callback); closes *fd at its end. */
static void drain(int *fd, struct buf *dst, size_t cap, const struct proc_options *o, int is_stdout, char *chunk)
{
	ssize_t got = read(*fd, chunk, READ_CHUNK);
	if (got < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (got <= 0) {
		close_fd(fd);
		return;
	}
	if (is_stdout && o->on_stdout)
		o->on_stdout(o->stdout_ctx, chunk, (size_t)got);
	else
		take(dst, chunk, (size_t)got, cap);
	if (o->secret)
		secbuf_wipe(chunk, (size_t)got);
}

/* A close-on-exec pipe (pipe2 is not POSIX; the window before fcntl only matters to a fork
 * in another thread, whose child closes them at its execve anyway). */
static int make_pipe(int fds[2])
{
	if (pipe(fds) != 0)
		return -1;
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

int proc_run(struct proc_result *r, const struct proc_options *o)
{
	memset(r, 0, sizeof *r);
	buf_init(&r->out);
	buf_init(&r->err);
	r->secret = o->secret;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, rep[2] = {-1, -1};
	if ((o->stdin_data && make_pipe(in) != 0) || make_pipe(out) != 0 || make_pipe(errp) != 0 ||
	    make_pipe(rep) != 0) {
		r->start_error = PROC_START_PIPE;
		r->start_errno = errno;
		int *all[] = {&in[0], &in[1], &out[0], &out[1], &errp[0], &errp[1], &rep[0], &rep[1]};
		for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
			close_fd(all[i]);
		return -1;
	}
	/* A child that stops reading stdin early must not kill us with SIGPIPE. */
	sigset_t pipe_set, old_mask;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	int pipe_was_pending = 0;
	if (o->stdin_data) {
		sigset_t pending;
		pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
		sigpending(&pending);
		pipe_was_pending = sigismember(&pending, SIGPIPE);
	}
	pthread_mutex_lock(&live_lock); /* the child execs or _exits: it never needs the lock */
	XGROW(live_pids, n_live, alloc_live);
	pid_t pid = fork();
	if (pid == 0)
		child_exec(o, in[0], out[1], errp[1], rep[1], o->stdin_data ? &old_mask : NULL);
	int fork_errno = errno;
	if (pid > 0)
		live_pids[n_live++] = pid;
	pthread_mutex_unlock(&live_lock);
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&errp[1]);
	close_fd(&rep[1]);
	if (pid < 0) {
		close_fd(&in[1]);
		close_fd(&out[0]);
		close_fd(&errp[0]);
		close_fd(&rep[0]);
		if (o->stdin_data)
			pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
		r->start_error = PROC_START_FORK;
		r->start_errno = fork_errno;
		return -1;
	}
	if (o->own_group)
		setpgid(pid, pid); /* also here: no race with a signal sent below */
	pid_t target = o->own_group ? -pid : pid;

	/* The report pipe closes at a successful execve, or carries why it failed. */
	struct start_report sr;
	ssize_t got;
	while ((got = read(rep[0], &sr, sizeof sr)) < 0 && errno == EINTR)
		;
	close_fd(&rep[0]);
	if (got == (ssize_t)sizeof sr) {
		close_fd(&in[1]);
		close_fd(&out[0]);
		close_fd(&errp[0]);
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		live_remove(pid);
		reap_orphans();
		if (o->stdin_data)
			pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
		r->start_error = sr.step;
		r->start_errno = sr.errnum;
		return -1;
	}

	if (in[1] >= 0)
		fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
	size_t fed = 0;
	if (in[1] >= 0 && o->stdin_len == 0)
		close_fd(&in[1]);
	char *chunk = xmalloc(READ_CHUNK);
	int64_t deadline = o->timeout_ms > 0 ? mono_ms() + o->timeout_ms : 0;
	int64_t kill_at = 0;
	long grace = o->stop_grace_ms > 0 ? o->stop_grace_ms : DEFAULT_STOP_GRACE_MS;
	while (out[0] >= 0 || errp[0] >= 0) {
		if (o->stop && *o->stop && !r->stopped) {
			r->stopped = 1;
			kill(target, SIGINT);
			kill_at = mono_ms() + grace;
		}
		if (kill_at && mono_ms() >= kill_at) {
			kill(target, SIGKILL);
			kill_at = 0;
		}
		int wait_ms = -1;
		if (deadline) {
			int64_t left = deadline - mono_ms();
			if (left <= 0) {
				r->timed_out = 1;
				kill(target, SIGKILL);
				break;
			}
			wait_ms = left > 1000 ? 1000 : (int)left;
		}
		if (o->stop && (wait_ms < 0 || wait_ms > 200))
			wait_ms = 200; /* notice the stop flag soon */
		struct pollfd p[3] = {{out[0], POLLIN, 0}, {errp[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
		int pr = poll(p, 3, wait_ms);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (out[0] >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			drain(&out[0], &r->out, o->stdout_cap, o, 1, chunk);
		if (errp[0] >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			drain(&errp[0], &r->err, o->stderr_cap, o, 0, chunk);
		if (in[1] >= 0 && (p[2].revents & (POLLOUT | POLLHUP | POLLERR))) {
			ssize_t w = write(in[1], o->stdin_data + fed, o->stdin_len - fed);
			if (w > 0)
				fed += (size_t)w;
			if ((w < 0 && errno != EINTR && errno != EAGAIN) || fed == o->stdin_len)
				close_fd(&in[1]); /* all fed, or the child closed its end */
		}
	}
	free(chunk);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&errp[0]);
	while (waitpid(pid, &r->status, 0) < 0) {
		if (errno != EINTR) {
			r->status = -1;
			break;
		}
		if (o->stop && *o->stop && !r->stopped) {
			r->stopped = 1;
			kill(target, SIGINT);
		}
	}
	live_remove(pid);
	reap_orphans();
	if (o->stdin_data) {
		if (!pipe_was_pending) { /* consume a SIGPIPE our writes raised */
			sigset_t pending;
			struct timespec zero = {0, 0};
			sigpending(&pending);
			if (sigismember(&pending, SIGPIPE))
				sigtimedwait(&pipe_set, NULL, &zero);
		}
		pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	}
	return 0;
}
