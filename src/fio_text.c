/*
 * fio_text.c - fio's normal output (fio 3.x's default --output-format=normal, and fio 2.x's),
 * read into the struct fio_report the JSON parser fills: what fio users have on disk.
 *
 * Entry points: fio_parse_text, fio_output_is_text, and fio_parse_output, which picks the form
 * (fio.h): the text here, the JSON report through fio.c, which calls nothing of this file.
 *
 * A job report, as fio 3.24 prints it (seeds/003):
 *   NAME: (groupid=0, jobs=7): err= 0: pid=2450: Wed Dec  2 06:59:19 2020
 *     read: IOPS=3016, BW=11.8MiB/s (12.4MB/s)(2121MiB/180004msec)
 *       clat (usec): min=188, max=296635, avg=2319.05, stdev=1213.65
 *        lat (usec): min=188, max=296635, avg=2319.21, stdev=1213.65
 *       clat percentiles (usec):
 *        |  1.00th=[  408],  5.00th=[  922], 10.00th=[ 1287], 20.00th=[ 1598],
 *     bw (  KiB/s): min= 9848, ...     iops        : min= 2462, ...   (samples: skipped)
 *     lat (usec)   : 250=0.05%, 500=2.12%, ...                       (distribution: skipped)
 *     IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
 *        issued rwts: total=542985,0,0,0 short=0,0,0,0 dropped=0,0,0,0
 * fio 2.x writes "read : io=2121.0MB, bw=12066KB/s, iops=3016, runt=180004msec" (its KB and MB
 * are KiB and MiB) and "issued    : total=r=542985/w=0/d=0, ...". A report runs to the first
 * blank line or line that does not start with a blank. The lines ebsmigrate needs (the header,
 * read/write, latency averages and percentiles, IO depths, issued) are read strictly: one that
 * does not read is refused, naming its line. Other lines of a report are skipped when they look
 * like fio's ("label: ...", so a later fio's additions do no harm), refused otherwise.
 *
 * Outside reports, "NAME: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) ..., ioengine=psync,
 * iodepth=1" (fio 2.x: "bs=4K-4K/4K-4K/4K-4K"), which fio prints as jobs start, gives a job's rw,
 * block size, engine and iodepth; "fio-3.24" the version. Everything else there ("Starting 7
 * processes", "Jobs: ..." status lines, run status groups, disk stats, the shell around it) is
 * skipped.
 *
 * The numbers are the JSON's of the same run within fio's printed rounding:
 * - IOPS = 1000 x issued I/Os / runtime ms, fio's own formula for the JSON's "iops" (IOPS= as
 *   printed, 3,016 for 3,016.53, only when there is no issued count);
 * - bytes = issued x block size when the printed size (io=, "2121MiB") agrees with that within
 *   its printed precision, the block size being the description's or the one size / issued
 *   implies (a multiple of 512); else the printed size. MiB/s = whole bytes per second as fio
 *   computes bw_bytes (1000 x bytes / runtime) / 2^20;
 * - latencies: avg= and the percentiles in the unit their line names (fio rounds percentiles up
 *   to that unit), completion latency first, as the JSON parser prefers clat_ns;
 * - in flight: "jobs=N" (group_reporting's clones in one report) x the description's iodepth
 *   bounded by the IO depths line (fio_effective_depth).
 *
 * Invariants: nothing is read beyond len (the text need not end in NUL and may hold NULs); each
 * line is copied into a bounded buffer first; quoted input goes through buf_add_visible.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/fio.h"
#include "ebsmigrate/jsonw.h"

#define TEXT_LINE_CAP 4096 /* fio's longest lines are percentile rows of ~90 bytes */
#define MAX_JOBS_FIELD 1000000u

enum { DIR_READ, DIR_WRITE, DIR_TRIM, N_DIRS };
enum { LAT_CLAT, LAT_LAT, N_LATS };
enum { PCT_50, PCT_95, PCT_99, PCT_99_9, N_PCTS };

/* A job's description, printed when it starts: what the report itself does not say. */
struct text_desc {
	char *name, *rw, *ioengine;
	unsigned bs[2];           /* read, write: fixed block size, 0 when a range or unknown */
	unsigned iodepth;         /* 0 when not printed */
};

struct text_dir {
	int seen;                 /* its read:/write: line was there */
	double iops_printed;
	double bytes_printed, bytes_slack; /* io= and half its last printed digit */
	double bw_printed;        /* bytes/s */
	int64_t issued, runtime_ms; /* -1 when not printed */
	double mean_ms[N_LATS];
	double pct_ms[N_LATS][N_PCTS];
	int have_pct[N_LATS];
};

struct text_job {
	char *name, *error_text;
	unsigned jobs;
	int error;
	size_t line;              /* of its header, for messages */
	struct text_dir dir[N_DIRS];
	double depth[FIO_DEPTH_BUCKETS];
	int have_depth;
};

struct text_parser {
	const char *origin;
	struct buf *err;
	size_t line;              /* the physical line being read, from 1 */
	char *version;
	struct text_desc *descs;
	size_t n_descs, alloc_descs;
	struct text_job *jobs;
	size_t n_jobs, alloc_jobs;
	struct text_job *cur;     /* the report being read, or NULL */
	int dir;                  /* the direction its latency lines belong to, -1 before one */
	int pct_into;             /* -1: not in a percentile block; LAT_*: reading one; N_LATS: skipping one */
	double pct_unit_ms;
};

/* ---- small scanners: each reads from s, sets *end past what it took, 0 or EM_EINPUT ---- */

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The end of the run of 1 to max digits at s; NULL when there is none or it is longer. */
static const char *digit_run(const char *s, long max)
{
	const char *p = s;
	while (*p >= '0' && *p <= '9')
		p++;
	return p == s || p - s > max ? NULL : p;
}

/* digits[.digits], no sign, no exponent: what fio prints. *decimals: digits after the point. */
static int scan_decimal(const char *s, const char **end, double *out, int *decimals)
{
	const char *p = digit_run(s, 30);
	if (!p)
		return EM_EINPUT;
	int frac = 0;
	if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
		p++;
		while (*p >= '0' && *p <= '9' && frac < 30)
			p++, frac++;
		if (*p >= '0' && *p <= '9')
			return EM_EINPUT;
	}
	char tmp[64];
	memcpy(tmp, s, (size_t)(p - s));
	tmp[p - s] = '\0';
	*out = strtod(tmp, NULL);
	if (decimals)
		*decimals = frac;
	*end = p;
	return 0;
}

/* A whole number that fits int64. */
static int scan_int(const char *s, const char **end, int64_t *out)
{
	const char *p = digit_run(s, 18);
	if (!p)
		return EM_EINPUT;
	int64_t v = 0;
	for (const char *q = s; q < p; q++)
		v = v * 10 + (*q - '0');
	*out = v;
	*end = p;
	return 0;
}

/* A count with fio's decimal suffixes: "3016", "10.5k", "1.2M". */
static int scan_count(const char *s, const char **end, double *out)
{
	static const struct {
		char c;
		double mult;
	} suffix[] = {{'k', 1e3}, {'K', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}, {'P', 1e15}};
	if (scan_decimal(s, end, out, NULL))
		return EM_EINPUT;
	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++)
		if (**end == suffix[i].c) {
			*out *= suffix[i].mult;
			(*end)++;
			break;
		}
	return 0;
}

/* A size as fio prints it: "2121MiB", "12.4MB", "800B"; fio 2.x's "2121.0MB", "12066KB" are
 * binary (legacy). *slack: half the last printed digit, in bytes. */
static int scan_size(const char *s, const char **end, int legacy, double *bytes, double *slack)
{
	static const struct {
		const char *unit;
		double mult, legacy_mult;
	} units[] = {
		{"KiB", 1024.0, 1024.0}, {"MiB", 1048576.0, 1048576.0}, {"GiB", 1073741824.0, 1073741824.0},
		{"TiB", 1099511627776.0, 1099511627776.0}, {"PiB", 1125899906842624.0, 1125899906842624.0},
		{"kB", 1e3, 1e3}, {"KB", 1e3, 1024.0}, {"MB", 1e6, 1048576.0}, {"GB", 1e9, 1073741824.0},
		{"TB", 1e12, 1099511627776.0}, {"PB", 1e15, 1125899906842624.0}, {"B", 1, 1},
	};
	double v;
	int decimals;
	if (scan_decimal(s, end, &v, &decimals))
		return EM_EINPUT;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (starts(*end, units[i].unit)) {
			double mult = legacy ? units[i].legacy_mult : units[i].mult;
			*bytes = v * mult;
			if (slack)
				*slack = 0.5 * mult * pow(10, -decimals);
			*end += strlen(units[i].unit);
			return 0;
		}
	return EM_EINPUT;
}

/* "11.8MiB/s" -> bytes per second. */
static int scan_rate(const char *s, const char **end, int legacy, double *out)
{
	if (scan_size(s, end, legacy, out, NULL) || !starts(*end, "/s"))
		return EM_EINPUT;
	*end += 2;
	return 0;
}

/* "180004msec" */
static int scan_msec(const char *s, const char **end, int64_t *out)
{
	if (scan_int(s, end, out) || !starts(*end, "msec"))
		return EM_EINPUT;
	*end += 4;
	return 0;
}

/* The value after key in a "key=value, key=value" list (key with its '='), or NULL. */
static const char *value_of(const char *list, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = list; (p = strstr(p, key)) != NULL; p++)
		if (p == list || p[-1] == ' ' || p[-1] == ',' || p[-1] == ':' || p[-1] == '(')
			return p + n;
	return NULL;
}

/* "(usec)" after a latency label: its unit in ms. */
static int scan_unit(const char *s, const char **end, double *unit_ms)
{
	static const struct {
		const char *text;
		double ms;
	} units[] = {{"(nsec)", 1e-6}, {"(usec)", 1e-3}, {"(msec)", 1}, {"(sec)", 1e3}};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (starts(s, units[i].text)) {
			*unit_ms = units[i].ms;
			*end = s + strlen(units[i].text);
			return 0;
		}
	return EM_EINPUT;
}

/* ---- messages ---- */

/* "ORIGIN: line N: WHAT: 'LINE'" with the line shown safely and shortened. */
static int line_error(struct text_parser *tp, const char *line, const char *what)
{
	struct buf shown = BUF_INIT, cut = BUF_INIT;
	size_t n = strlen(line);
	buf_add(&cut, line, n > 100 ? 97 : n);
	if (n > 100)
		buf_adds(&cut, "...");
	buf_add_visible(&shown, cut.s);
	int rc = em_err(tp->err, EM_EINPUT, "%s: line %zu: %s: '%s'", tp->origin, tp->line, what, shown.s);
	buf_release(&shown);
	buf_release(&cut);
	return rc;
}

/* ---- lines outside a report ---- */

/* "NAME: (groupid=G, jobs=N): err= E[ (WHY)]: pid=..." -> a new job; 1 when line is one. */
static int read_header(const char *line, struct text_job *out)
{
	const char *mark = strstr(line, ": (groupid=");
	if (!mark || mark == line)
		return 0;
	const char *p = mark + strlen(": (groupid="), *end;
	int64_t group, jobs, error;
	if (scan_int(p, &end, &group) || !starts(end, ", jobs=") || scan_int(end + 7, &end, &jobs) ||
	    !starts(end, "): err=") || jobs < 1 || jobs > MAX_JOBS_FIELD)
		return 0;
	p = skip_blanks(end + 7);
	int negative = *p == '-';
	if (scan_int(p + negative, &end, &error) || error > INT32_MAX)
		return 0;
	memset(out, 0, sizeof *out);
	out->name = xstrndup(line, (size_t)(mark - line));
	out->jobs = (unsigned)jobs;
	out->error = (int)(negative ? -error : error);
	if (starts(end, " (")) { /* fio's words: "file:filesetup.c:805, func=open(...), error=Invalid argument" */
		const char *close = strstr(end, "): pid=");
		const char *why = end + 2, *stop = close ? close : end + strlen(end);
		const char *said = value_of(why, "error=");
		if (said && said < stop)
			why = said;
		out->error_text = xstrndup(why, (size_t)(stop - why));
	}
	for (int d = 0; d < N_DIRS; d++) {
		struct text_dir *t = &out->dir[d];
		t->issued = t->runtime_ms = -1;
		t->iops_printed = t->bw_printed = NAN;
		for (int l = 0; l < N_LATS; l++) {
			t->mean_ms[l] = NAN;
			for (int k = 0; k < N_PCTS; k++)
				t->pct_ms[l][k] = NAN;
		}
	}
	return 1;
}

/* "A-B": a fixed size when A == B, else 0. */
static unsigned fixed_range(const char *s)
{
	char a[32], b[32];
	size_t n = strcspn(s, "-");
	if (!n || n >= sizeof a || s[n] != '-')
		return 0;
	memcpy(a, s, n);
	a[n] = '\0';
	s += n + 1;
	size_t m = strcspn(s, ",/ ");
	if (!m || m >= sizeof b)
		return 0;
	memcpy(b, s, m);
	b[m] = '\0';
	uint64_t x, y;
	if (fio_parse_size(a, &x) || fio_parse_size(b, &y) || x != y || x == 0 || x > UINT32_MAX)
		return 0;
	return (unsigned)x;
}

static char *value_until_comma(const char *v)
{
	return v ? xstrndup(v, strcspn(v, ", ")) : NULL;
}

/* "NAME: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) ..., ioengine=psync,
 * iodepth=1" (fio 2.x: "bs=4K-4K/4K-4K/4K-4K"); 1 when line is one. */
static int read_description(struct text_parser *tp, const char *line)
{
	const char *mark = strstr(line, ": (g=");
	if (!mark || mark == line)
		return 0;
	const char *list = strstr(mark, "): ");
	if (!list || !value_of(list, "rw="))
		return 0;
	list += 3;
	for (size_t i = 0; i < tp->n_descs; i++)
		if (strlen(tp->descs[i].name) == (size_t)(mark - line) && memcmp(tp->descs[i].name, line, (size_t)(mark - line)) == 0)
			return 1; /* a clone's ("...") or a later group's: the first one stands */
	XGROW(tp->descs, tp->n_descs, tp->alloc_descs);
	struct text_desc *d = &tp->descs[tp->n_descs++];
	memset(d, 0, sizeof *d);
	d->name = xstrndup(line, (size_t)(mark - line));
	d->rw = value_until_comma(value_of(list, "rw="));
	d->ioengine = value_until_comma(value_of(list, "ioengine="));
	const char *bs = value_of(list, "bs=");
	if (bs && starts(bs, "(R) ")) {
		d->bs[0] = fixed_range(bs + 4);
		const char *w = strstr(bs, "(W) ");
		d->bs[1] = w ? fixed_range(w + 4) : d->bs[0];
	} else if (bs) {
		d->bs[0] = fixed_range(bs);
		const char *w = strchr(bs, '/');
		d->bs[1] = w && w < bs + strcspn(bs, ", ") ? fixed_range(w + 1) : d->bs[0];
	}
	const char *qd = value_of(list, "iodepth="), *end;
	int64_t v;
	if (qd && scan_int(qd, &end, &v) == 0 && v >= 1 && v <= MAX_JOBS_FIELD)
		d->iodepth = (unsigned)v;
	return 1;
}

/* ---- lines of a report ---- */

/* "read: IOPS=3016, BW=11.8MiB/s (12.4MB/s)(2121MiB/180004msec)" (fio 3.x) or "read : io=2121.0MB,
 * bw=12066KB/s, iops=3016, runt=180004msec" (fio 2.x); rest is what follows "read:"/"read :". */
static int read_direction(struct text_parser *tp, const char *line, const char *rest, int legacy,
			  struct text_dir *t)
{
	const char *end, *p = skip_blanks(rest);
	if (t->seen)
		return line_error(tp, line, "a second line for the same direction in one job's report");
	t->seen = 1;
	if (!legacy) {
		/* BW is the binary rate unless kb_base=1000 put the decimal one first */
		if (!starts(p, "IOPS=") || scan_count(p + 5, &end, &t->iops_printed) || !starts(end, ", BW=") ||
		    scan_rate(end + 5, &end, 0, &t->bw_printed))
			goto bad;
		p = skip_blanks(end);
		if (*p == '(') { /* the same rate in the other base */
			const char *close = strchr(p, ')');
			if (!close)
				goto bad;
			p = close + 1;
		}
		if (*p != '(' || scan_size(p + 1, &end, 0, &t->bytes_printed, &t->bytes_slack) || *end != '/' ||
		    scan_msec(end + 1, &end, &t->runtime_ms) || *end != ')')
			goto bad;
		return 0;
	}
	const char *io = value_of(p, "io="), *bw = value_of(p, "bw="), *iops = value_of(p, "iops="),
		   *runt = value_of(p, "runt=");
	if (!io || !bw || !iops || !runt || scan_size(io, &end, 1, &t->bytes_printed, &t->bytes_slack) ||
	    scan_rate(bw, &end, 1, &t->bw_printed) || scan_count(iops, &end, &t->iops_printed) ||
	    scan_msec(runt, &end, &t->runtime_ms))
		goto bad;
	return 0;
bad:
	return line_error(tp, line,
			  legacy ? "cannot read fio's direction line (expected 'read : io=SIZE, bw=RATE, iops=N, runt=Nmsec')"
				 : "cannot read fio's direction line (expected 'read: IOPS=N, BW=RATE (RATE)(SIZE/Nmsec)')");
}

/* "clat (usec): min=188, max=296635, avg=2319.05, stdev=1213.65" -> the average; a latency
 * distribution under the same label ("lat (usec)   : 250=0.05%, ...") is skipped. */
static int read_latency(struct text_parser *tp, const char *line, const char *label_end, int which)
{
	double unit;
	const char *end;
	if (scan_unit(skip_blanks(label_end), &end, &unit))
		return line_error(tp, line, "cannot read the latency unit (expected (nsec), (usec) or (msec))");
	const char *p = skip_blanks(end);
	if (*p != ':')
		return line_error(tp, line, "cannot read fio's latency line (expected 'LABEL (UNIT): min=..., avg=...')");
	p = skip_blanks(p + 1);
	if (!starts(p, "min="))
		return 0; /* the distribution of latencies, not needed */
	if (tp->dir < 0)
		return line_error(tp, line, "a latency line before the job's read or write line");
	const char *avg = value_of(p, "avg=");
	double v;
	if (!avg || scan_decimal(avg, &end, &v, NULL))
		return line_error(tp, line, "cannot read the average of fio's latency line (expected 'avg=N')");
	tp->cur->dir[tp->dir].mean_ms[which] = v * unit;
	return 0;
}

/* "|  1.00th=[  408],  5.00th=[  922], 10.00th=[ 1287], 20.00th=[ 1598]," */
static int read_percentiles(struct text_parser *tp, const char *line, const char *row)
{
	struct text_dir *t = &tp->cur->dir[tp->dir];
	const char *p = row + 1, *end;
	for (;;) {
		p = skip_blanks(p);
		if (!*p)
			return 0;
		double pct, v;
		if (scan_decimal(p, &end, &pct, NULL) || !starts(end, "th=[") || scan_decimal(skip_blanks(end + 4), &end, &v, NULL) ||
		    *end != ']')
			return line_error(tp, line, "cannot read fio's percentile row (expected '|  P.PPth=[ N], ...')");
		static const double want[N_PCTS] = {50, 95, 99, 99.9};
		for (int k = 0; k < N_PCTS; k++)
			if (fabs(pct - want[k]) < 1e-6)
				t->pct_ms[tp->pct_into][k] = v * tp->pct_unit_ms;
		t->have_pct[tp->pct_into] = 1;
		p = end + 1;
		if (*p == ',')
			p++;
	}
}

/* "IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%" */
static int read_depths(struct text_parser *tp, const char *line, const char *list)
{
	static const char *const keys[FIO_DEPTH_BUCKETS] = {"1", "2", "4", "8", "16", "32", ">=64"};
	const char *p = list, *end;
	struct text_job *j = tp->cur;
	for (;;) {
		p = skip_blanks(p);
		if (!*p)
			return 0;
		size_t klen = (starts(p, ">=") ? 2 : 0) + strcspn(p + (starts(p, ">=") ? 2 : 0), "="); /* ">=64=0.0%" */
		double v;
		if (!p[klen] || scan_decimal(p + klen + 1, &end, &v, NULL) || *end != '%' || v > 100.0001)
			return line_error(tp, line, "cannot read fio's IO depths (expected 'IO depths    : 1=N%, 2=N%, ...')");
		for (int b = 0; b < FIO_DEPTH_BUCKETS; b++)
			if (strlen(keys[b]) == klen && memcmp(keys[b], p, klen) == 0) {
				j->depth[b] = v;
				j->have_depth |= v > 0;
			}
		p = end + 1;
		if (*p == ',')
			p++;
	}
}

/* "issued rwts: total=542985,0,0,0 short=..." (fio 3.x), "issued    : total=r=542985/w=0/d=0, ..." (2.x) */
static int read_issued(struct text_parser *tp, const char *line, const char *rest)
{
	const char *p = value_of(rest, "total="), *end;
	struct text_job *j = tp->cur;
	if (!p)
		return line_error(tp, line, "cannot read fio's issued I/Os (expected 'issued rwts: total=R,W,T,S ...')");
	int legacy = starts(p, "r=");
	for (int d = 0; d < N_DIRS; d++) {
		if (legacy && p[1] != '=')
			break;
		int64_t v;
		if (scan_int(legacy ? p + 2 : p, &end, &v))
			return line_error(tp, line, "cannot read fio's issued I/Os (expected 'issued rwts: total=R,W,T,S ...')");
		j->dir[d].issued = v;
		if (*end != (legacy ? '/' : ','))
			break;
		p = end + 1;
	}
	return 0;
}

/* One line inside a job's report. */
static int read_report_line(struct text_parser *tp, const char *line)
{
	const char *t = skip_blanks(line);
	if (*t == '|') {
		if (tp->pct_into < 0 || tp->pct_into == N_LATS)
			return 0; /* a block ebsmigrate does not read (a priority's percentiles) */
		return read_percentiles(tp, line, t);
	}
	tp->pct_into = -1;
	static const char *const dirs[N_DIRS] = {"read", "write", "trim"};
	for (int d = 0; d < N_DIRS; d++) {
		size_t n = strlen(dirs[d]);
		if (strncmp(t, dirs[d], n) == 0 && (t[n] == ':' || (t[n] == ' ' && t[n + 1] == ':'))) {
			tp->dir = d;
			return read_direction(tp, line, t + n + (t[n] == ':' ? 1 : 2), t[n] == ' ', &tp->cur->dir[d]);
		}
	}
	if (strstr(t, "percentiles (") && (starts(t, "clat percentiles (") || starts(t, "lat percentiles ("))) {
		if (tp->dir < 0)
			return line_error(tp, line, "a percentile block before the job's read or write line");
		const char *end;
		if (scan_unit(strchr(t, '('), &end, &tp->pct_unit_ms) || *end != ':')
			return line_error(tp, line, "cannot read the percentiles' unit (expected (nsec), (usec) or (msec))");
		tp->pct_into = t[0] == 'c' ? LAT_CLAT : LAT_LAT;
		return 0;
	}
	if (strstr(t, "percentiles")) {
		tp->pct_into = N_LATS; /* e.g. "clat prio 0/1 percentiles (usec):" */
		return 0;
	}
	if (starts(t, "clat (") || starts(t, "clat  ("))
		return read_latency(tp, line, t + 4, LAT_CLAT);
	if (starts(t, "lat (") || starts(t, "lat  ("))
		return read_latency(tp, line, t + 3, LAT_LAT);
	if (starts(t, "IO depths")) {
		const char *colon = strchr(t, ':');
		return colon ? read_depths(tp, line, colon + 1)
			     : line_error(tp, line, "cannot read fio's IO depths (expected 'IO depths    : 1=N%, ...')");
	}
	if (starts(t, "issued"))
		return read_issued(tp, line, t);
	if (strchr(t, ':'))
		return 0; /* slat, bw and iops samples, cpu, submit/complete, latency target, later additions */
	struct buf what = BUF_INIT;
	buf_adds(&what, "not a line of fio's report of job '");
	buf_add_visible(&what, tp->cur->name);
	buf_adds(&what, "'");
	int rc = line_error(tp, line, what.s);
	buf_release(&what);
	return rc;
}

/* ---- from what was read to fio_job ---- */

static const struct text_desc *find_desc(const struct text_parser *tp, const char *name)
{
	for (size_t i = 0; i < tp->n_descs; i++)
		if (strcmp(tp->descs[i].name, name) == 0)
			return &tp->descs[i];
	return NULL;
}

/* One direction; *bs is the block size known for it (0 when not), set to the one inferred. */
static void finish_dir(struct fio_dir *d, const struct text_dir *t, unsigned *bs, int *lat)
{
	memset(d, 0, sizeof *d);
	d->lat.mean = d->lat.p50 = d->lat.p95 = d->lat.p99 = d->lat.p99_9 = NAN;
	d->ios = -1;
	if (!t->seen)
		return;
	int64_t runt = t->runtime_ms;
	d->iops = t->issued >= 0 && runt > 0 ? 1000.0 * (double)t->issued / (double)runt : t->iops_printed;
	double bytes = t->bytes_printed;
	if (t->issued > 0) {
		unsigned size = *bs;
		if (!size) {
			double per = bytes / (double)t->issued;
			double units = floor(per / 512 + 0.5);
			size = units >= 1 && units * 512 <= UINT32_MAX ? (unsigned)units * 512 : 0;
		}
		if (size && fabs((double)size * (double)t->issued - bytes) <= t->bytes_slack) {
			bytes = (double)size * (double)t->issued;
			*bs = size;
		}
	}
	if (!(bytes >= 0 && bytes < 9e15)) /* beyond any run; keeps the products below exact */
		bytes = 0;
	d->bytes = (int64_t)bytes;
	if (runt > 0)
		d->mibps = (double)((uint64_t)d->bytes * 1000 / (uint64_t)runt) / 1048576.0; /* fio's bw_bytes */
	else
		d->mibps = isnan(t->bw_printed) ? 0 : t->bw_printed / 1048576.0;
	d->ios = t->issued;
	d->present = d->ios > 0 || d->bytes > 0 || d->iops > 0;
	/* completion latency with percentiles first, as the JSON parser prefers clat_ns */
	int src = t->have_pct[LAT_CLAT] ? LAT_CLAT : t->have_pct[LAT_LAT] ? LAT_LAT : !isnan(t->mean_ms[LAT_CLAT]) ? LAT_CLAT : LAT_LAT;
	if (!d->present || (isnan(t->mean_ms[src]) && !t->have_pct[src]))
		return;
	d->lat.mean = t->mean_ms[src];
	d->lat.p50 = t->pct_ms[src][PCT_50];
	d->lat.p95 = t->pct_ms[src][PCT_95];
	d->lat.p99 = t->pct_ms[src][PCT_99];
	d->lat.p99_9 = t->pct_ms[src][PCT_99_9];
	if (*lat < 0)
		*lat = src;
}

/* The job's options as the JSON has them, from what the text says: the description and jobs=N. */
static char *options_of(const struct text_desc *desc, unsigned bs, unsigned jobs)
{
	struct buf b = BUF_INIT, num = BUF_INIT;
	struct jsonw w;
	jsonw_init(&w, &b, JSONW_COMPACT);
	jsonw_object(&w);
	if (desc && desc->rw)
		jsonw_key_str(&w, "rw", desc->rw);
	if (bs) {
		fio_format_size(&num, bs);
		jsonw_key_str(&w, "bs", num.s);
	}
	if (desc && desc->ioengine)
		jsonw_key_str(&w, "ioengine", desc->ioengine);
	if (desc && desc->iodepth) {
		buf_reset(&num);
		buf_addf(&num, "%u", desc->iodepth);
		jsonw_key_str(&w, "iodepth", num.s);
	}
	if (jobs > 1) {
		buf_reset(&num);
		buf_addf(&num, "%u", jobs);
		jsonw_key_str(&w, "numjobs", num.s);
		jsonw_key_str(&w, "group_reporting", "");
	}
	jsonw_end(&w);
	buf_release(&num);
	return buf_detach(&b);
}

static void finish_job(const struct text_parser *tp, const struct text_job *t, struct fio_job *j)
{
	memset(j, 0, sizeof *j);
	const struct text_desc *desc = find_desc(tp, t->name);
	j->name = xstrdup(t->name);
	j->error = t->error;
	j->error_text = xstrdup(t->error_text);
	j->jobs = t->jobs;
	unsigned bs[2] = {desc ? desc->bs[0] : 0, desc ? desc->bs[1] : 0};
	int lat = -1;
	finish_dir(&j->read, &t->dir[DIR_READ], &bs[0], &lat);
	finish_dir(&j->write, &t->dir[DIR_WRITE], &bs[1], &lat);
	j->lat_source = lat < 0 ? NULL : xstrdup(lat == LAT_CLAT ? "clat" : "lat");
	j->bs = j->read.present || !j->write.present ? bs[0] : bs[1];
	j->iodepth = fio_effective_depth(desc ? desc->iodepth : 0, t->have_depth ? t->depth : NULL);
	j->runtime_ms = t->dir[DIR_READ].runtime_ms > t->dir[DIR_WRITE].runtime_ms ? t->dir[DIR_READ].runtime_ms
										   : t->dir[DIR_WRITE].runtime_ms;
	if (j->runtime_ms < 0)
		j->runtime_ms = 0;
	j->options_json = options_of(desc, j->bs, j->jobs);
	char size[16], depth[16], jobs[16];
	snprintf(size, sizeof size, "%u", j->bs);
	snprintf(depth, sizeof depth, "%u", j->iodepth);
	snprintf(jobs, sizeof jobs, "%u", j->jobs);
	const struct fio_profile *p = desc && desc->rw && j->bs ? fio_profile_infer(desc->rw, size, depth, jobs) : NULL;
	j->profile = p ? xstrdup(p->name) : NULL;
	j->kind = p ? p->kind : fio_kind_of(j->bs, j->jobs * j->iodepth);
}

/* ---- the parser ---- */

static void end_report(struct text_parser *tp)
{
	tp->cur = NULL;
	tp->dir = tp->pct_into = -1;
}

/* The report just ended must have said what the job did (or that it failed). */
static int check_report(struct text_parser *tp)
{
	const struct text_job *j = tp->cur;
	if (!j || j->error || j->dir[DIR_READ].seen || j->dir[DIR_WRITE].seen)
		return 0;
	struct buf name = BUF_INIT;
	buf_add_visible(&name, j->name);
	int rc = em_err(tp->err, EM_EINPUT, "%s: line %zu: the report of job '%s' has no read or write line", tp->origin,
			j->line, name.s);
	buf_release(&name);
	return rc;
}

static int is_version(const char *s)
{
	return starts(s, "fio-") && s[4] >= '0' && s[4] <= '9' && !strpbrk(s, " \t");
}

/* One line (a piece between '\r's of one). */
static int read_line(struct text_parser *tp, const char *line)
{
	if (tp->cur) {
		if (line[0] == ' ' || line[0] == '\t')
			return read_report_line(tp, line);
		int rc = check_report(tp);
		end_report(tp);
		if (rc)
			return rc;
	}
	struct text_job job;
	if (read_header(line, &job)) {
		job.line = tp->line;
		XGROW(tp->jobs, tp->n_jobs, tp->alloc_jobs);
		tp->jobs[tp->n_jobs] = job;
		tp->cur = &tp->jobs[tp->n_jobs++];
		tp->dir = tp->pct_into = -1;
		return 0;
	}
	if (read_description(tp, line))
		return 0;
	if (!tp->version && is_version(line))
		tp->version = xstrdup(line);
	return 0;
}

/* Calls fn with each line of text (split at '\n' and at '\r': fio's status lines end in '\r'),
 * NUL-terminated and at most TEXT_LINE_CAP long, with tp->line its number; a blank line ends the
 * report being read. A line too long or holding a NUL is refused inside a report, skipped outside. */
static int each_line(struct text_parser *tp, const char *text, size_t len)
{
	char line[TEXT_LINE_CAP + 1];
	size_t pos = 0;
	int rc = 0;
	while (!rc && pos < len) {
		const char *start = text + pos, *nl = memchr(start, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - start) : len - pos;
		pos += n + (nl ? 1 : 0);
		tp->line++;
		size_t blank = 0;
		while (blank < n && (start[blank] == ' ' || start[blank] == '\t' || start[blank] == '\r'))
			blank++;
		if (blank == n) {
			if (tp->cur) {
				rc = check_report(tp);
				end_report(tp);
			}
			continue;
		}
		for (size_t off = 0; !rc && off < n;) {
			const char *piece = start + off, *cr = memchr(piece, '\r', n - off);
			size_t m = cr ? (size_t)(cr - piece) : n - off;
			off += m + (cr ? 1 : 0);
			if (!m)
				continue;
			if (m > TEXT_LINE_CAP || memchr(piece, '\0', m)) {
				if (tp->cur && (piece[0] == ' ' || piece[0] == '\t'))
					rc = em_err(tp->err, EM_EINPUT, "%s: line %zu: %s in the report of a job", tp->origin, tp->line,
						    m > TEXT_LINE_CAP ? "a line longer than 4096 bytes" : "a NUL byte");
				continue;
			}
			memcpy(line, piece, m);
			line[m] = '\0';
			rc = read_line(tp, line);
		}
	}
	if (!rc && tp->cur)
		rc = check_report(tp);
	return rc;
}

static void parser_release(struct text_parser *tp)
{
	for (size_t i = 0; i < tp->n_descs; i++)
		EM_FREE_ALL(tp->descs[i].name, tp->descs[i].rw, tp->descs[i].ioengine);
	free(tp->descs);
	for (size_t i = 0; i < tp->n_jobs; i++)
		EM_FREE_ALL(tp->jobs[i].name, tp->jobs[i].error_text);
	free(tp->jobs);
	free(tp->version);
}

int fio_parse_text(struct fio_report *out, const char *text, size_t len, const char *origin, struct buf *err)
{
	fio_report_init(out);
	struct text_parser tp;
	memset(&tp, 0, sizeof tp);
	tp.origin = origin;
	tp.err = err;
	end_report(&tp);
	int rc = each_line(&tp, text, len);
	if (!rc && tp.n_jobs == 0)
		rc = em_err(err, EM_EINPUT,
			    "%s: line 1: no job report in fio's normal output (a line 'NAME: (groupid=N, jobs=N): err= N: "
			    "...')",
			    origin);
	if (!rc) {
		out->format = FIO_OUTPUT_TEXT;
		out->fio_version = tp.version;
		tp.version = NULL;
		out->jobs = xcalloc(tp.n_jobs, sizeof *out->jobs);
		for (size_t i = 0; i < tp.n_jobs; i++)
			finish_job(&tp, &tp.jobs[i], &out->jobs[i]);
		out->n_jobs = tp.n_jobs;
	}
	parser_release(&tp);
	return rc;
}

int fio_output_is_text(const char *text, size_t len)
{
	char line[TEXT_LINE_CAP + 1];
	struct text_job job;
	for (size_t pos = 0; pos < len;) {
		const char *start = text + pos, *end = start;
		while (end < text + len && *end != '\n' && *end != '\r')
			end++;
		size_t n = (size_t)(end - start);
		pos += n + 1;
		if (memchr(start, '{', n))
			return 0; /* JSON (behind fio's notices) comes first */
		if (!n || n > TEXT_LINE_CAP || memchr(start, '\0', n))
			continue;
		memcpy(line, start, n);
		line[n] = '\0';
		if (read_header(line, &job)) {
			EM_FREE_ALL(job.name, job.error_text);
			return 1;
		}
	}
	return 0;
}

/* Either form, told apart by its first bytes: fio's normal output here, the JSON report by
 * fio_parse_report (fio.c). */
int fio_parse_output(struct fio_report *out, const char *text, size_t len, const char *origin, struct buf *err)
{
	if (fio_output_is_text(text, len))
		return fio_parse_text(out, text, len, origin, err);
	size_t blank = 0;
	while (blank < len && (text[blank] == ' ' || text[blank] == '\t' || text[blank] == '\r' || text[blank] == '\n'))
		blank++;
	if (blank == len) {
		fio_report_init(out);
		return em_err(err, EM_EINPUT, "%s: empty, expected fio output (--output-format=json, or fio's normal output)",
			      origin);
	}
	if (!memchr(text, '{', len)) {
		fio_report_init(out);
		size_t line = 1; /* the first line that is not blank */
		for (size_t i = 0; i < blank; i++)
			line += text[i] == '\n';
		struct buf fl = BUF_INIT, vis = BUF_INIT;
		fio_first_line(&fl, text, len);
		buf_add_visible(&vis, fl.s);
		int rc = em_err(err, EM_EINPUT,
				"%s: line %zu: neither fio JSON (--output-format=json) nor fio's normal output (no job "
				"report line 'NAME: (groupid=N, jobs=N): err= N: ...'); it starts with '%s'",
				origin, line, vis.s);
		buf_release(&fl);
		buf_release(&vis);
		return rc;
	}
	return fio_parse_report(out, text, len, origin, err);
}
