/*
 * common.c - error vocabulary, allocation helpers, the reproducible clock, strict number and
 * time parsing, whole-file reads under the input size limit, and SHA-256 in hex. Writing files
 * (atomic replacement, staged outputs, directories) is fs.c's.
 *
 * Invariants: xmalloc & co never return NULL (they abort with a message); a read never holds
 * more than its cap plus one chunk.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#ifdef __GLIBC__ /* defined once a libc header is in */
#include <malloc.h>
#endif

#include "ebsmigrate/common.h"

static time_t fixed_now = -1; /* set once from --now by main.c; the only clock override */

const char *em_strerror(int code)
{
	switch (code) {
	case EM_OK: return "ok";
	case EM_EINPUT: return "bad input";
	case EM_ENOTFOUND: return "not found";
	case EM_EIO: return "i/o error";
	case EM_ENET: return "network error";
	case EM_ETHROTTLED: return "throttled";
	case EM_EAUTH: return "not authorized";
	case EM_ELIMIT: return "modification rule";
	case EM_ETOOBIG: return "too large";
	case EM_ESERVER: return "service error";
	case EM_ECONFLICT: return "conflict";
	case EM_EUNSUPPORTED: return "unsupported";
	}
	return "error";
}

int em_exit_code_for(int code)
{
	switch (code) {
	case EM_OK: return EXIT_OK;
	case EM_EINPUT:
	case EM_ENOTFOUND:
	case EM_ETOOBIG: return EXIT_USAGE;
	default: return EXIT_RUNTIME;
	}
}

int em_err(struct buf *err, int code, const char *fmt, ...)
{
	if (!err)
		return code;
	if (err->len)
		buf_adds(err, "; ");
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(err, fmt, ap);
	va_end(ap);
	return code;
}

void em_errprefix(struct buf *err, const char *fmt, ...)
{
	if (!err)
		return;
	struct buf pre = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&pre, fmt, ap);
	va_end(ap);
	buf_adds(&pre, ": ");
	buf_add(&pre, err->s, err->len);
	buf_release(err);
	*err = pre;
}

static void oom(size_t n)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	if (!s)
		return NULL;
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void em_free_each(void *const *ptrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ptrs[i]);
}

void em_release_array(void *v, size_t n, size_t size, void (*release)(void *))
{
	if (release)
		for (size_t i = 0; i < n; i++)
			release((char *)v + i * size);
	free(v);
}

time_t em_now(void)
{
	return fixed_now >= 0 ? fixed_now : time(NULL);
}

void em_set_now(time_t t)
{
	fixed_now = t;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int read_digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

static int days_in_month(int y, int mo)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return days[mo - 1] + (mo == 2 && leap);
}

int em_parse_time(const char *s, time_t *out)
{
	const char *p = s;
	int y, mo, d, h = 0, mi = 0, se = 0;
	if (!s || read_digits(&p, 4, &y) || *p++ != '-' || read_digits(&p, 2, &mo) || *p++ != '-' ||
	    read_digits(&p, 2, &d))
		return EM_EINPUT;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		return EM_EINPUT; /* 2026-02-30 is refused, not read as 2026-03-02 */
	int64_t offset = 0;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (read_digits(&p, 2, &h) || *p++ != ':' || read_digits(&p, 2, &mi))
			return EM_EINPUT;
		if (*p == ':') {
			p++;
			if (read_digits(&p, 2, &se))
				return EM_EINPUT;
			if (*p == '.') {
				p++;
				if (*p < '0' || *p > '9')
					return EM_EINPUT;
				while (*p >= '0' && *p <= '9')
					p++;
			}
		}
		if (h > 23 || mi > 59 || se > 60)
			return EM_EINPUT;
		if (*p == 'Z' || *p == 'z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			int sign = *p == '-' ? -1 : 1, oh, om;
			p++;
			if (read_digits(&p, 2, &oh))
				return EM_EINPUT;
			if (*p == ':')
				p++;
			if (read_digits(&p, 2, &om) || oh > 23 || om > 59)
				return EM_EINPUT; /* RFC 3339 offsets are 00:00..23:59 */
			offset = sign * (oh * 3600 + om * 60);
		} else {
			return EM_EINPUT;
		}
	}
	if (*p)
		return EM_EINPUT;
	int64_t t = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se - offset;
	*out = (time_t)t;
	return 0;
}

void em_format_time(time_t t, char out[static 21])
{
	int64_t z = (int64_t)t;
	int64_t days = z >= 0 ? z / 86400 : (z - 86399) / 86400;
	int64_t secs = z - days * 86400;
	/* civil_from_days */
	days += 719468;
	int64_t era = (days >= 0 ? days : days - 146096) / 146097;
	unsigned doe = (unsigned)(days - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	unsigned hh = (unsigned)(secs / 3600) % 24u, mi = (unsigned)(secs / 60 % 60), ss = (unsigned)(secs % 60);
	if (y < 0 || y > 9999) { /* not four digits: as printf writes it, cut to 20 bytes */
		char tmp[80];
		snprintf(tmp, sizeof tmp, "%04d-%02u-%02uT%02u:%02u:%02uZ", (int)y, m, d, hh, mi, ss);
		memcpy(out, tmp, 20);
		out[20] = '\0';
		return;
	}
	/* digits by hand: the JSON writers format one or two times per volume */
	unsigned yy = (unsigned)y;
	const unsigned parts[] = {m, d, hh, mi, ss};
	out[0] = (char)('0' + yy / 1000);
	out[1] = (char)('0' + yy / 100 % 10);
	out[2] = (char)('0' + yy / 10 % 10);
	out[3] = (char)('0' + yy % 10);
	static const char seps[] = "--T::";
	for (int i = 0; i < 5; i++) {
		out[4 + 3 * i] = seps[i];
		out[5 + 3 * i] = (char)('0' + parts[i] / 10);
		out[6 + 3 * i] = (char)('0' + parts[i] % 10);
	}
	out[19] = 'Z';
	out[20] = '\0';
}

int em_name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

int em_parse_i64(const char *s, int64_t *out)
{
	if (!s || !*s)
		return EM_EINPUT;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || end == s || (s[0] != '-' && (s[0] < '0' || s[0] > '9')))
		return EM_EINPUT;
	*out = v;
	return 0;
}

int64_t em_duration_unit(const char *suffix)
{
	if (strcmp(suffix, "d") == 0)
		return 86400;
	if (strcmp(suffix, "h") == 0)
		return 3600;
	if (strcmp(suffix, "m") == 0)
		return 60;
	return strcmp(suffix, "s") == 0 || *suffix == '\0' ? 1 : 0;
}

int em_parse_duration(const char *s, int64_t *out)
{
	if (!s || !(*s >= '0' && *s <= '9'))
		return EM_EINPUT;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (errno || v < 0)
		return EM_EINPUT;
	int64_t mult = em_duration_unit(end);
	if (!mult || v > INT64_MAX / 86400)
		return EM_EINPUT;
	*out = (int64_t)v * mult;
	return 0;
}

void em_format_duration(int64_t s, struct buf *out)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		buf_addf(out, "%llds", (long long)s);
	else if (s < 3600)
		buf_addf(out, "%lldm", (long long)(s / 60));
	else if (s < 86400)
		buf_addf(out, "%lldh %lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else
		buf_addf(out, "%lldd %lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
}

/* 4 GiB: far above any real export (a 100,000-volume describe-volumes is ~150 MiB), far below
 * what a parse tree of it could cost in memory. */
#define DEFAULT_MAX_INPUT ((int64_t)4 << 30)

int em_max_input_size(int64_t *out, struct buf *err)
{
	const char *s = getenv("EBSMIGRATE_MAX_INPUT_SIZE");
	*out = DEFAULT_MAX_INPUT;
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	int shift = 0;
	if (*end && !end[1])
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : *end == 'T' ? 40 : -1;
	else if (*end)
		shift = -1;
	if (errno || end == s || s[0] < '0' || s[0] > '9' || shift < 0 || v < 1 || v > (INT64_MAX >> shift))
		return em_err(err, EM_EINPUT,
			      "EBSMIGRATE_MAX_INPUT_SIZE: '%s' is not a size (a positive number of bytes, or of K, M, G or T)",
			      s);
	*out = (int64_t)v << shift;
	return 0;
}

/* "64 KiB", "4 MiB" for a cap that is a whole number of them, else bytes: for messages. */
static void add_size(struct buf *b, int64_t n)
{
	if (n >= (1 << 20) && n % (1 << 20) == 0)
		buf_addf(b, "%lld MiB", (long long)(n >> 20));
	else if (n >= 1024 && n % 1024 == 0)
		buf_addf(b, "%lld KiB", (long long)(n >> 10));
	else
		buf_addf(b, "%lld bytes", (long long)n);
}

/* EM_ETOOBIG for path: size bytes (-1: a stream that went past cap), over the caller's own cap
 * (own_cap) or the input size limit. */
static int too_big(struct buf *err, const char *path, int64_t size, int64_t cap, int own_cap)
{
	if (!own_cap && size >= 0)
		return em_err(err, EM_ETOOBIG,
			      "'%s' is %lld bytes, over the input size limit of %lld (set EBSMIGRATE_MAX_INPUT_SIZE to raise it)",
			      path, (long long)size, (long long)cap);
	if (!own_cap)
		return em_err(err, EM_ETOOBIG,
			      "'%s' holds more than the input size limit of %lld bytes (set EBSMIGRATE_MAX_INPUT_SIZE "
			      "to raise it)",
			      path, (long long)cap);
	struct buf limit = BUF_INIT;
	add_size(&limit, cap);
	if (size >= 0)
		em_err(err, EM_ETOOBIG, "'%s' is %lld bytes, over the limit of %s for this input", path, (long long)size,
		       limit.s);
	else
		em_err(err, EM_ETOOBIG, "'%s' holds more than %s, the limit for this input", path, limit.s);
	buf_release(&limit);
	return EM_ETOOBIG;
}

/* Reads the open descriptor fd (named path in messages) into out, refusing directories and
 * anything over the cap: a regular file is measured before the first byte is read, a pipe or a
 * device (/dev/zero) is stopped as soon as it passes the cap, so memory stays within the cap
 * plus one chunk. input_max is the caller's own cap for a small input (0: none); the input size
 * limit (EBSMIGRATE_MAX_INPUT_SIZE) applies too when it is lower. fail is the code for
 * open/read failures. */
static int read_fd(int fd, const char *path, int64_t input_max, struct buf *out, int fail, struct buf *err)
{
	int64_t cap;
	int rc = em_max_input_size(&cap, err);
	if (rc)
		return rc;
	int own_cap = input_max > 0 && input_max < cap;
	if (own_cap)
		cap = input_max;
	struct stat st;
	if (fstat(fd, &st) != 0)
		return em_err(err, fail, "cannot read '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return em_err(err, fail, "cannot read '%s': %s", path, strerror(EISDIR));
	if (S_ISREG(st.st_mode) && (int64_t)st.st_size > cap)
		return too_big(err, path, st.st_size, cap, own_cap);
	char chunk[65536];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return em_err(err, fail, "cannot read '%s': %s", path, strerror(errno));
		if (n == 0)
			return 0;
		if ((int64_t)(out->len + (size_t)n) > cap)
			return too_big(err, path, -1, cap, own_cap);
		buf_add(out, chunk, (size_t)n);
	}
}

static int read_file(const char *path, int64_t input_max, struct buf *out, int fail, struct buf *err)
{
	if (strcmp(path, "-") == 0)
		return read_fd(0, path, input_max, out, fail, err);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return em_err(err, errno == ENOENT ? EM_ENOTFOUND : fail, "cannot read '%s': %s", path, strerror(errno));
	int rc = read_fd(fd, path, input_max, out, fail, err);
	close(fd);
	return rc;
}

int em_read_file(const char *path, struct buf *out, struct buf *err)
{
	return read_file(path, 0, out, EM_EIO, err);
}

int em_read_input(const char *path, struct buf *out, struct buf *err)
{
	return read_file(path, 0, out, EM_EINPUT, err);
}

int em_read_file_max(const char *path, size_t max, struct buf *out, struct buf *err)
{
	return read_file(path, max > (size_t)INT64_MAX ? 0 : (int64_t)max, out, EM_EIO, err);
}

int em_read_regular_input(const char *path, struct buf *out, struct buf *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return em_err(err, EM_EINPUT, "cannot read '%s': %s", path, strerror(errno));
	struct stat st;
	int rc = fstat(fd, &st) != 0   ? em_err(err, EM_EINPUT, "cannot read '%s': %s", path, strerror(errno))
		 : !S_ISREG(st.st_mode) ? em_err(err, EM_EINPUT, "cannot read '%s': not a regular file", path)
					: read_fd(fd, path, 0, out, EM_EINPUT, err);
	close(fd);
	return rc;
}

void em_hex(const unsigned char *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * n] = '\0';
}

void em_sha256_hex(const void *data, size_t len, char out[static 65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (!EVP_Digest(data ? data : "", len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) {
		/* Only a broken OpenSSL gets here; an impossible hash makes the caller fail loudly. */
		memset(out, '0', 64);
		out[64] = '\0';
		return;
	}
	em_hex(md, 32, out);
}

void em_release_freed_memory(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}
