/*
 * common.h - the error vocabulary, allocation helpers and the clock shared by every module.
 *
 * Error convention (DESIGN.md): functions below cmd_*.c never print or exit. They return 0
 * (or a count) on success and a negative EM_E* code on failure, and append ONE complete,
 * lower-case message naming the subject to the caller's `struct buf *err`
 * (e.g. "volume 'vol-0a1' not found in region 'us-east-1'"). Callers add context in front
 * with em_errprefix when they know more (the file name, the volume).
 *
 * Exit codes (documented in docs/exit-codes.md): see EXIT_* below.
 */
#ifndef EBSMIGRATE_COMMON_H
#define EBSMIGRATE_COMMON_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>

#include "ebsmigrate/buf.h"

enum em_error {
	EM_OK = 0,
	EM_EINPUT = -1,      /* bad input: file, field or value the user gave */
	EM_ENOTFOUND = -2,   /* a named thing does not exist */
	EM_EIO = -3,         /* file system or database failure */
	EM_ENET = -4,        /* connection, DNS, TLS, timeout */
	EM_ETHROTTLED = -5,  /* throttled after all retries */
	EM_EAUTH = -6,       /* credentials missing, invalid or forbidden */
	EM_ELIMIT = -7,      /* an EBS rule forbids it now (in flight, rate limit) */
	EM_ETOOBIG = -8,     /* a size cap was exceeded */
	EM_ESERVER = -9,     /* the remote service answered with an error */
	EM_ECONFLICT = -10,  /* concurrent modification, lock held */
	EM_EUNSUPPORTED = -11,
	EM_ESTOPPED = -12,   /* a stop was requested (SIGTERM/SIGINT, stop.h) */
};

enum em_exit {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,   /* usage error or bad input */
	EXIT_PARTIAL = 3, /* some volumes failed or were deferred */
	EXIT_VERIFY = 4,  /* verification found a mismatch */
	EXIT_NOT_VERIFIED = 5, /* verification could not prove it either way (bench compare) */
};

const char *em_strerror(int code);
int em_exit_code_for(int code); /* maps an EM_E* code to an EXIT_* code */
/* Hands the pages of freed small blocks back to the system (glibc's malloc_trim; nothing
 * elsewhere): after a large structure is released, so what comes next does not add on top. */
void em_release_freed_memory(void);

/* Appends a formatted message to err (err may be NULL) and returns code. */
int em_err(struct buf *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepends "prefix: " to the message already in err. */
void em_errprefix(struct buf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation: abort with a message on failure; never return NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);       /* xstrdup(NULL) == NULL */
char *xstrndup(const char *s, size_t n);
#define XGROW(ptr, n, alloc)                                                              \
	do {                                                                              \
		if ((n) >= (alloc)) {                                                     \
			(alloc) = (alloc) ? (alloc) * 2 : 16;                             \
			if ((alloc) <= (n)) (alloc) = (n) + 1;                            \
			(ptr) = xrealloc((ptr), (alloc) * sizeof(*(ptr)));                \
		}                                                                         \
	} while (0)
/* Frees each of n pointers; EM_FREE_ALL(a, b, c) frees its arguments (a release function's
 * fields in one statement). */
void em_free_each(void *const *ptrs, size_t n);
#define EM_FREE_ALL(...) em_free_each((void *[]){__VA_ARGS__}, sizeof((void *[]){__VA_ARGS__}) / sizeof(void *))
/* Releases an array of n elements of size bytes each: release(element) for each (release may be
 * NULL when the elements own nothing), then the array itself. v may be NULL when n is 0.
 * release takes the element as void * (a cast function pointer would be undefined behaviour);
 * EM_RELEASE_ARRAY(v, n, fn) passes the element size. */
void em_release_array(void *v, size_t n, size_t size, void (*release)(void *));
#define EM_RELEASE_ARRAY(v, n, fn) em_release_array((v), (n), sizeof *(v), (fn))

/* The clock. Every module asks em_now(); `--now RFC3339` fixes it for reproducible runs. */
time_t em_now(void);
void em_set_now(time_t t); /* t < 0 restores the real clock */
/* RFC 3339 / ISO 8601 parse ("2026-01-15T10:00:00Z", "+00:00", fractional seconds,
 * "2026-01-15" alone = midnight UTC). Returns 0 or EM_EINPUT. */
int em_parse_time(const char *s, time_t *out);
/* Formats t as "YYYY-MM-DDTHH:MM:SSZ" into out (at least 21 bytes). */
void em_format_time(time_t t, char out[static 21]);

/* The index of s in a name table of n entries (an enum's names in its order), -1 when absent
 * (or s is NULL): the one lookup behind every NAME_parse. */
int em_name_index(const char *const *names, int n, const char *s);
/* Strict decimal integer parse of the whole string; 0 or EM_EINPUT. */
int em_parse_i64(const char *s, int64_t *out);
/* A duration as the options take it: a whole number with an optional unit, s (the default), m,
 * h or d ("90", "45m", "36h", "7d"); 0 or EM_EINPUT. Zero is allowed (callers decide what it means). */
int em_parse_duration(const char *s, int64_t *out);
/* Seconds per unit of a duration's suffix: "d", "h", "m", "s" or "" (seconds); 0 for any other. */
int64_t em_duration_unit(const char *suffix);
/* Appends s seconds the way people read an age: "45s", "12m", "2h 5m", "9d 3h" (negative = 0s). */
void em_format_duration(int64_t s, struct buf *out);

/* Reads a whole file ("-" = standard input). Returns 0, EM_ENOTFOUND, EM_ETOOBIG (over the
 * input size limit: a regular file is refused before it is read) or EM_EIO (a directory, a
 * symlink loop, EACCES, EIO...); the message names the path and the reason. */
int em_read_file(const char *path, struct buf *out, struct buf *err);
/* em_read_file for a file the user named as input (an export): a file that cannot be opened or
 * read is bad input (EM_EINPUT, exit 2) like a missing one, not a runtime error. */
int em_read_input(const char *path, struct buf *out, struct buf *err);
/* em_read_file for a small input with a cap of its own, max bytes (a webhook URL file, an account
 * list, a token or config file): a regular file over max is refused before it is read, anything
 * else (/dev/zero, a pipe) as soon as it passes max, so it costs at most max bytes and a moment
 * instead of the 4 GiB input size limit. EM_ETOOBIG names the path and the cap; other codes as
 * em_read_file. The input size limit still applies where it is lower. */
int em_read_file_max(const char *path, size_t max, struct buf *out, struct buf *err);
/* The caps em_read_file_max's callers use, by kind of input. */
#define EM_MAX_TOKEN_FILE ((size_t)64 << 10)  /* one URL, token or name: a webhook URL file, token files */
#define EM_MAX_LIST_FILE ((size_t)4 << 20)    /* an account list, a CA bundle, a template, a job file */
#define EM_MAX_CONFIG_FILE ((size_t)16 << 20) /* a kubeconfig, the AWS shared config and credentials files */
/* em_read_input for a file a directory walk found (no one named it): opened without following a
 * final symlink and without blocking, and read only when the open file is a regular one, so a
 * FIFO or device swapped in after the walk looked cannot hang or flood the read: anything else
 * is EM_EINPUT "cannot read 'PATH': not a regular file". */
int em_read_regular_input(const char *path, struct buf *out, struct buf *err);
/* The input size limit: EBSMIGRATE_MAX_INPUT_SIZE (bytes, or with a K/M/G/T suffix: binary
 * units), default 4 GiB. EM_EINPUT for a malformed value. */
int em_max_input_size(int64_t *out, struct buf *err);
/* Lower-case hex of n bytes into out (2n characters and a NUL). */
void em_hex(const unsigned char *in, size_t n, char *out);
/* Lower-case hex SHA-256 of data (64 characters and a NUL). */
void em_sha256_hex(const void *data, size_t len, char out[static 65]);

#endif
