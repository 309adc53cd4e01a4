/*
 * log.c - stderr diagnostics with levels, colour only on a TTY without NO_COLOR, and a
 * redaction helper so request dumps never carry secrets.
 *
 * Invariants: every message is one line with its control characters made visible
 * (buf_add_visible): a volume id or a tag cannot inject terminal escapes (debug dumps keep
 * their line breaks, every line escaped); security warnings
 * (log_security_warning) print at every level. Messages from several threads (the inventory's
 * fan-out) never interleave: a message is formatted first and written, together with the
 * before-write hook (the progress line's clearing), under one mutex.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/log.h"

static enum log_level level = LOG_NORMAL; /* set once by main.c from -q/-v */

void log_set_level(enum log_level l)
{
	level = l;
}

enum log_level log_get_level(void)
{
	return level;
}

int log_color_enabled(void)
{
	const char *nc = getenv("NO_COLOR");
	return isatty(2) && !(nc && *nc);
}

static void (*before_write)(void);
/* Recursive: the progress renderer holds it while drawing and logs a finished phase. */
static pthread_mutex_t write_lock;
static pthread_once_t write_lock_once = PTHREAD_ONCE_INIT;

static void write_lock_init(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&write_lock, &a);
	pthread_mutexattr_destroy(&a);
}

void log_set_before_write(void (*fn)(void))
{
	before_write = fn;
}

void log_before_write(void)
{
	if (before_write)
		before_write();
}

void log_lock(void)
{
	pthread_once(&write_lock_once, write_lock_init);
	pthread_mutex_lock(&write_lock);
}

void log_unlock(void)
{
	pthread_mutex_unlock(&write_lock);
}

static void emit(const char *prefix, const char *color, const char *fmt, va_list ap)
{
	struct buf b = BUF_INIT;
	if (prefix) {
		if (log_color_enabled())
			buf_addf(&b, "\033[%sm%s\033[0m ", color, prefix);
		else
			buf_addf(&b, "%s ", prefix);
	}
	/* A message quotes names from servers and files: control characters in them are shown, never
	 * sent to the terminal, and a message stays one line. Only debug dumps (HTTP requests) keep
	 * their line breaks, each line escaped on its own. */
	struct buf msg = BUF_INIT;
	buf_vaddf(&msg, fmt, ap);
	int multiline = prefix && strcmp(prefix, "debug:") == 0;
	for (char *line = msg.s; line;) {
		char *nl = multiline ? strchr(line, '\n') : NULL;
		if (nl)
			*nl = '\0';
		buf_add_visible(&b, line);
		if (nl)
			buf_addc(&b, '\n');
		line = nl ? nl + 1 : NULL;
	}
	buf_release(&msg);
	buf_addc(&b, '\n');
	log_lock();
	log_before_write();
	fwrite(b.s, 1, b.len, stderr);
	log_unlock();
	buf_release(&b);
}

#define LOG_FN(name, min, prefix, color)                \
	void name(const char *fmt, ...)                 \
	{                                               \
		if (level < (min))                      \
			return;                         \
		va_list ap;                             \
		va_start(ap, fmt);                      \
		emit(prefix, color, fmt, ap);           \
		va_end(ap);                             \
	}

LOG_FN(log_error, LOG_QUIET, "error:", "1;31")
LOG_FN(log_warning, LOG_NORMAL, "warning:", "1;33")
LOG_FN(log_security_warning, LOG_QUIET, "warning:", "1;33") /* never silenced by -q */
LOG_FN(log_notice, LOG_NORMAL, "note:", "1;36")
LOG_FN(log_info, LOG_VERBOSE, NULL, "0")
LOG_FN(log_debug, LOG_DEBUG, "debug:", "2")

static const char *const secret_keys[] = {
	"authorization", "x-amz-security-token", "x-amz-signature", "x-aws-ec2-metadata-token",
	"token", "secretaccesskey", "aws_secret_access_key", "sessiontoken", NULL,
};

char *log_redact(const char *text)
{
	struct buf out = BUF_INIT;
	const char *p = text;
	while (*p) {
		int hit = 0;
		for (const char *const *k = secret_keys; *k; k++) {
			size_t kl = strlen(*k);
			if (strncasecmp(p, *k, kl) == 0 && (p[kl] == ':' || p[kl] == '=' || p[kl] == '"')) {
				const char *v = p + kl;
				buf_add(&out, p, kl);
				/* copy separators, then replace the value up to a delimiter */
				while (*v == ':' || *v == '=' || *v == '"' || *v == ' ')
					buf_addc(&out, *v++);
				buf_adds(&out, "REDACTED");
				while (*v && *v != '&' && *v != '\n' && *v != '"' && *v != ',' && *v != '\r')
					v++;
				p = v;
				hit = 1;
				break;
			}
		}
		if (!hit)
			buf_addc(&out, *p++);
	}
	return buf_detach(&out);
}
