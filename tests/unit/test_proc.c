/* test_proc.c - the process runner against real processes (/bin/sh), and the secret buffer. */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/proc.h"
#include "ebsmigrate/secbuf.h"
#include "tap.h"

static int sh(struct proc_result *r, const char *script, struct proc_options *o)
{
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	o->path = "/bin/sh";
	o->argv = argv;
	return proc_run(r, o);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_capture_and_status(void)
{
	struct proc_options o = {0};
	struct proc_result r;
	CHECK_I64(sh(&r, "echo out; echo err >&2; exit 3", &o), 0);
	CHECK_STR(r.out.s, "out\n");
	CHECK_STR(r.err.s, "err\n");
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3);
	CHECK(!r.timed_out && !r.stopped);
	struct buf d = BUF_INIT;
	proc_describe_status(&d, r.status);
	CHECK_STR(d.s, "exit 3");
	proc_result_release(&r);

	CHECK_I64(sh(&r, "kill -9 $$", &o), 0);
	buf_reset(&d);
	proc_describe_status(&d, r.status);
	CHECK_STR(d.s, "killed by signal 9");
	buf_reset(&d);
	proc_describe_status(&d, -1);
	CHECK_STR(d.s, "lost");
	buf_release(&d);
	proc_result_release(&r);
}

static void test_big_output_capped(void)
{
	/* 2 MiB on stdout and 1 MiB on stderr, more than a pipe holds: both drained, caps kept. */
	struct proc_options o = {0};
	o.stdout_cap = 100000;
	o.stderr_cap = 1000;
	struct proc_result r;
	CHECK_I64(sh(&r, "head -c 2097152 /dev/zero | tr '\\0' a; head -c 1048576 /dev/zero | tr '\\0' b >&2; exit 0",
		     &o), 0);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	CHECK_I64(r.out.len, 100000);
	CHECK_I64(r.err.len, 1000);
	CHECK(r.out.s[0] == 'a' && r.out.s[99999] == 'a' && r.err.s[999] == 'b');
	proc_result_release(&r);

	o.stdout_cap = 0; /* unlimited */
	CHECK_I64(sh(&r, "head -c 3000000 /dev/zero", &o), 0);
	CHECK_I64(r.out.len, 3000000);
	proc_result_release(&r);
}

static void test_timeout(void)
{
	struct proc_options o = {0};
	o.timeout_ms = 300;
	struct proc_result r;
	double t0 = now_s();
	CHECK_I64(sh(&r, "echo started; exec sleep 30", &o), 0);
	double took = now_s() - t0;
	CHECK(r.timed_out);
	CHECK(took < 5.0);
	CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
	proc_result_release(&r);
}

static volatile sig_atomic_t stop_flag;

static void test_stop_flag(void)
{
	/* The stop flag: SIGINT to the group; a child that ignores it is killed after the grace. */
	struct proc_options o = {0};
	o.stop = &stop_flag;
	o.own_group = 1;
	o.default_signals = 1;
	o.stop_grace_ms = 300;
	stop_flag = 1;
	struct proc_result r;
	CHECK_I64(sh(&r, "trap '' INT; sleep 30 & wait", &o), 0);
	CHECK(r.stopped);
	CHECK(!r.timed_out);
	CHECK(WIFSIGNALED(r.status));
	proc_result_release(&r);
	stop_flag = 0;
}

static void test_missing_binary_and_cwd(void)
{
	struct proc_options o = {0};
	char *argv[] = {"nope", NULL};
	o.path = "/nonexistent/ebsmigrate-no-such-program";
	o.argv = argv;
	struct proc_result r;
	CHECK_I64(proc_run(&r, &o), -1);
	CHECK_I64(r.start_error, PROC_START_EXEC);
	CHECK_I64(r.start_errno, 2 /* ENOENT */);
	proc_result_release(&r);

	struct proc_options c = {0};
	c.cwd = "/nonexistent/dir";
	CHECK_I64(sh(&r, "pwd", &c), -1);
	CHECK_I64(r.start_error, PROC_START_CWD);
	proc_result_release(&r);

	c.cwd = "/";
	CHECK_I64(sh(&r, "pwd", &c), 0);
	CHECK_STR(r.out.s, "/\n");
	proc_result_release(&r);
}

static void test_find_program(void)
{
	char *save = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;
	setenv("PATH", "/nonexistent:/bin:/usr/bin", 1);
	char *p = proc_find_program("sh");
	CHECK(p && strcmp(p, "/bin/sh") == 0);
	free(p);
	CHECK(proc_find_program("ebsmigrate-no-such-program") == NULL);
	CHECK(proc_find_program("") == NULL);
	p = proc_find_program("/bin/sh");
	CHECK_STR(p, "/bin/sh");
	free(p);
	CHECK(proc_find_program("/nonexistent/sh") == NULL);
	if (save)
		setenv("PATH", save, 1);
	free(save);
}

static void test_env(void)
{
	/* envp replaces the environment entirely; NULL inherits ours. */
	setenv("EBSMIGRATE_PROC_TEST", "inherited", 1);
	struct proc_options o = {0};
	struct proc_result r;
	CHECK_I64(sh(&r, "printf %s \"$EBSMIGRATE_PROC_TEST\"", &o), 0);
	CHECK_STR(r.out.s, "inherited");
	proc_result_release(&r);
	char *envp[] = {"EBSMIGRATE_PROC_TEST=override", "OTHER=1", NULL};
	o.envp = envp;
	CHECK_I64(sh(&r, "printf '%s,%s,%s' \"$EBSMIGRATE_PROC_TEST\" \"$OTHER\" \"${HOME-unset}\"", &o), 0);
	CHECK_STR(r.out.s, "override,1,unset");
	proc_result_release(&r);

	/* inherit, override and add: our variables minus the overridden, then the list in order */
	struct proc_env_var vars[] = {{"EBSMIGRATE_PROC_TEST", "over=ridden"}, {"EBSMIGRATE_PROC_NEW", "added"}};
	char **built = proc_env_build(vars, 2);
	size_t n = 0, test_at = 0, new_at = 0, home_seen = 0;
	for (char **e = built; *e; e++, n++) {
		if (strncmp(*e, "EBSMIGRATE_PROC_TEST=", 21) == 0)
			test_at = n + 1;
		if (strncmp(*e, "EBSMIGRATE_PROC_NEW=", 20) == 0)
			new_at = n + 1;
		if (strncmp(*e, "PATH=", 5) == 0)
			home_seen = 1;
	}
	CHECK(home_seen); /* inherited */
	CHECK(test_at && new_at == test_at + 1 && new_at == n); /* overridden once, appended last */
	o.envp = built;
	CHECK_I64(sh(&r, "printf '%s|%s' \"$EBSMIGRATE_PROC_TEST\" \"$EBSMIGRATE_PROC_NEW\"", &o), 0);
	CHECK_STR(r.out.s, "over=ridden|added");
	proc_result_release(&r);
	proc_env_free(built);
	proc_env_free(NULL);
	unsetenv("EBSMIGRATE_PROC_TEST");
}

static void test_stdin(void)
{
	struct proc_options o = {0};
	struct proc_result r;
	CHECK_I64(sh(&r, "wc -c", &o), 0); /* no data: /dev/null */
	CHECK(atoi(r.out.s) == 0);
	proc_result_release(&r);

	size_t n = 1 << 20; /* more than a pipe holds: fed while output is read */
	char *data = xmalloc(n);
	memset(data, 'x', n);
	o.stdin_data = data;
	o.stdin_len = n;
	CHECK_I64(sh(&r, "cat", &o), 0);
	CHECK_I64(r.out.len, n);
	CHECK(r.out.len == n && memcmp(r.out.s, data, n) == 0);
	proc_result_release(&r);

	/* The child does not inherit the SIGPIPE block the runner uses while feeding stdin. */
	{
		char *argv[] = {"grep", "^SigBlk", "/proc/self/status", NULL}; /* no shell: it may reset masks */
		struct proc_options g = o;
		g.path = "/bin/grep";
		g.argv = argv;
		struct buf ours = BUF_INIT, e = BUF_INIT; /* the child's mask is ours, as it was */
		em_read_file("/proc/self/status", &ours, &e);
		const char *line = strstr(ours.s, "SigBlk:");
		char want[64] = "";
		if (line)
			snprintf(want, sizeof want, "%.*s\n", (int)strcspn(line, "\n"), line);
		CHECK_I64(proc_run(&r, &g), 0);
		CHECK_STR(r.out.s, want);
		buf_release(&ours);
		buf_release(&e);
		proc_result_release(&r);
	}

	/* main.c ignores SIGXFSZ for ebsmigrate's own writes; a child gets the default back (an
	 * ignored signal would survive execve). SigIgn bit 24 is SIGXFSZ (25). */
	{
		char *argv[] = {"grep", "^SigIgn", "/proc/self/status", NULL};
		struct proc_options g = o;
		g.path = "/bin/grep";
		g.argv = argv;
		void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
		CHECK_I64(proc_run(&r, &g), 0);
		signal(SIGXFSZ, was);
		unsigned long long ignored = r.out.s ? strtoull(r.out.s + strlen("SigIgn:"), NULL, 16) : ~0ULL;
		CHECK((ignored & (1ULL << (SIGXFSZ - 1))) == 0);
		proc_result_release(&r);
	}

	/* A child that reads nothing: no SIGPIPE kills us, it just exits. */
	CHECK_I64(sh(&r, "exit 0", &o), 0);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	proc_result_release(&r);
	free(data);
}

static int chunks;
static void count_chunk(void *ctx, const char *data, size_t n)
{
	(void)data;
	*(size_t *)ctx += n;
	chunks++;
}

static void test_stdout_callback(void)
{
	size_t total = 0;
	struct proc_options o = {0};
	o.on_stdout = count_chunk;
	o.stdout_ctx = &total;
	o.secret = 1;
	struct proc_result r;
	CHECK_I64(sh(&r, "echo one; echo two", &o), 0);
	CHECK_I64(total, 8);
	CHECK(chunks >= 1);
	CHECK_I64(r.out.len, 0);
	proc_result_release(&r);
}

static void test_secbuf(void)
{
	struct buf b = BUF_INIT;
	buf_adds(&b, "s3cr3t-token");
	char *mem = b.s;
	size_t len = b.len;
	secbuf_reset(&b);
	CHECK(b.s == mem && b.len == 0);
	int zero = 1;
	for (size_t i = 0; i < len; i++)
		zero &= mem[i] == 0;
	CHECK(zero);
	buf_adds(&b, "again");
	secbuf_release(&b);
	CHECK(b.cap == 0 && b.len == 0 && b.s[0] == '\0');
	secbuf_release(&b); /* empty: nothing to wipe */

	char s[] = "abc";
	secbuf_wipe(s, 3);
	CHECK(s[0] == 0 && s[1] == 0 && s[2] == 0);
	char t[] = "tok";
	secbuf_wipe_str(t);
	CHECK(t[0] == 0 && t[1] == 0 && t[2] == 0);
	secbuf_wipe_str(NULL);
	secbuf_free_str(NULL);
	secbuf_free_str(xstrdup("key"));

	cJSON *j = cJSON_Parse("{\"status\":{\"token\":\"tok\",\"n\":[\"k1\"]}}");
	cJSON *tok = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "token");
	cJSON *k1 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "n"), 0);
	secbuf_wipe_json(j);
	CHECK(tok->valuestring[0] == 0 && k1->valuestring[0] == 0);
	cJSON_Delete(j);
}

/* As a child subreaper (as PID 1 in a container), proc_run reaps the orphans a child leaves:
 * the shell's background sleep is reparented to us, exits, and is gone after the next run. */
static void test_reaps_orphans(void)
{
	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
	struct proc_options o = {0};
	struct proc_result r;
	CHECK_I64(sh(&r, "sleep 0.2 </dev/null >/dev/null 2>&1 & exit 0", &o), 0);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	proc_result_release(&r);
	struct timespec ts = {0, 600 * 1000 * 1000};
	nanosleep(&ts, NULL); /* the orphan has exited: a zombie of ours until reaped */
	siginfo_t si;
	memset(&si, 0, sizeof si);
	CHECK(waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid > 0);
	CHECK_I64(sh(&r, "exit 0", &o), 0);
	proc_result_release(&r);
	errno = 0;
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD); /* no child left, zombie or not */
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

int main(void)
{
	test_capture_and_status();
	test_big_output_capped();
	test_timeout();
	test_stop_flag();
	test_missing_binary_and_cwd();
	test_find_program();
	test_env();
	test_stdin();
	test_stdout_callback();
	test_secbuf();
	test_reaps_orphans();
	return tap_done();
}
