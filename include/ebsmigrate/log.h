/*
 * log.h - diagnostics on stderr. Only main.c and cmd_*.c call these directly for user
 * messages; lower modules may call log_debug (off unless -v/--verbose or EBSMIGRATE_DEBUG) and
 * log_security_warning.
 * Messages never contain secrets: callers pass already-redacted text (see log_redact).
 */
#ifndef EBSMIGRATE_LOG_H
#define EBSMIGRATE_LOG_H

#include "ebsmigrate/buf.h"

enum log_level { LOG_QUIET = 0, LOG_NORMAL = 1, LOG_VERBOSE = 2, LOG_DEBUG = 3 };

void log_set_level(enum log_level l);
/* fn runs before each message is written to stderr (cmd_progress clears its line there);
 * log_before_write runs it for other stderr writers. */
void log_set_before_write(void (*fn)(void));
void log_before_write(void);
/* The lock every stderr message is written under (recursive): other stderr writers (the
 * progress line) take it around their writes so threads never interleave. */
void log_lock(void);
void log_unlock(void);
enum log_level log_get_level(void);
int log_color_enabled(void);            /* stderr is a TTY and NO_COLOR is unset */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));   /* "error: ..." */
void log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* "warning: ..." */
/* A warning that security is weakened (TLS not verified, credentials over plain HTTP): printed
 * at every level, -q included, so it cannot be silenced. The one message lower modules may print
 * themselves, because the user must see it whatever the command does with its other output. */
void log_security_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* "note: ..." */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));    /* verbose only */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));   /* debug only */
/* Replaces values of secret-bearing headers/params (Authorization, X-Amz-Security-Token,
 * X-Amz-Signature, X-Amz-Credential's key id is kept) in a copy of text. Caller frees. */
char *log_redact(const char *text);

#endif
