/*
 * table.c - the terminal table writer every table renderer uses (table.h has the layout rules).
 *
 * Entry points: table_init, table_add/_addf, table_set_cell_sgr/_row_sgr, table_add_rule,
 * table_write, table_release; table_display_width, table_terminal_width.
 * Invariants: with an unlimited width (not a terminal, -o wide) the output is the plain
 * layout, nothing elided or dropped, so pipes and files get every byte of every cell; with a
 * width, no line is wider than it unless the always-shown columns at their minimum widths are.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/table.h"

#define SEP 2 /* spaces between columns */
static const char ELLIPSIS[] = "\xe2\x80\xa6"; /* U+2026, one column */

void table_init(struct table *t, const struct table_column *cols, size_t n_cols)
{
	memset(t, 0, sizeof *t);
	t->cols = cols;
	t->n_cols = n_cols;
	t->filled = n_cols; /* the next cell starts a row */
}

static struct table_row *current_row(struct table *t)
{
	return t->n_rows ? &t->rows[t->n_rows - 1] : NULL;
}

void table_add(struct table *t, const char *s)
{
	if (t->filled == t->n_cols) {
		XGROW(t->rows, t->n_rows, t->alloc_rows);
		struct table_row *r = &t->rows[t->n_rows++];
		memset(r, 0, sizeof *r);
		r->cells = xcalloc(t->n_cols, sizeof *r->cells);
		t->filled = 0;
	}
	struct buf vis = BUF_INIT; /* ids and names come from servers and files: shown, not sent */
	buf_add_visible(&vis, s ? s : "-");
	current_row(t)->cells[t->filled++].text = buf_detach(&vis);
}

void table_addf(struct table *t, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	table_add(t, b.s);
	buf_release(&b);
}

void table_set_cell_sgr(struct table *t, const char *sgr)
{
	struct table_row *r = current_row(t);
	if (r && !r->rule && t->filled)
		r->cells[t->filled - 1].sgr = sgr;
}

void table_set_row_sgr(struct table *t, const char *sgr)
{
	struct table_row *r = current_row(t);
	if (r)
		r->sgr = sgr;
}

void table_add_rule(struct table *t)
{
	XGROW(t->rows, t->n_rows, t->alloc_rows);
	struct table_row *r = &t->rows[t->n_rows++];
	memset(r, 0, sizeof *r);
	r->rule = 1;
	t->filled = t->n_cols;
}

void table_release(struct table *t)
{
	for (size_t i = 0; i < t->n_rows; i++) {
		if (t->rows[i].cells)
			for (size_t c = 0; c < t->n_cols; c++)
				free(t->rows[i].cells[c].text);
		free(t->rows[i].cells);
	}
	free(t->rows);
	memset(t, 0, sizeof *t);
}

/* Decodes one UTF-8 sequence at s; returns its length (1 for an invalid byte, cp = 0xFFFD). */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	unsigned c = s[0];
	size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (n == 1) {
		*cp = c;
		return 1;
	}
	uint32_t v = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			n = 0;
			break;
		}
		v = v << 6 | (s[i] & 0x3f);
	}
	if (n == 0) {
		*cp = 0xfffd;
		return 1;
	}
	*cp = v;
	return n;
}

static size_t cp_width(uint32_t cp)
{
	if ((cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) || cp == 0xfe0f)
		return 0; /* combining marks, zero-width spaces, the emoji variation selector */
	if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) ||
	    (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
	    (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) || (cp >= 0x1f900 && cp <= 0x1f9ff) ||
	    (cp >= 0x20000 && cp <= 0x3fffd))
		return 2; /* East Asian wide and fullwidth, emoji */
	return 1;
}

size_t table_display_width(const char *s)
{
	size_t w = 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		uint32_t cp;
		p += utf8_next(p, &cp);
		w += cp_width(cp);
	}
	return w;
}

size_t table_terminal_width(int fd)
{
	if (!isatty(fd))
		return 0;
	const char *env = getenv("COLUMNS");
	int64_t n;
	if (env && !em_parse_i64(env, &n) && n >= 20 && n <= 10000)
		return (size_t)n;
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* A row written before all its cells were added shows the missing ones empty. */
static const char *cell_text(const struct table_cell *c)
{
	return c->text ? c->text : "";
}

static void pad(struct buf *b, size_t n)
{
	while (n--)
		buf_addc(b, ' ');
}

/* s in at most width columns: cut and ended with "…" when it is wider. Returns its width. */
static size_t add_fitted(struct buf *b, const char *s, size_t width, int elide)
{
	size_t w = table_display_width(s);
	if (!elide || w <= width) {
		buf_adds(b, s);
		return w;
	}
	if (width == 0)
		return 0;
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0;
	while (*p) {
		uint32_t cp;
		size_t n = utf8_next(p, &cp);
		size_t cw = cp_width(cp);
		if (used + cw > width - 1)
			break;
		buf_add(b, (const char *)p, n);
		used += cw;
		p += n;
	}
	buf_adds(b, ELLIPSIS);
	return used + 1;
}

struct layout {
	int *shown;
	size_t *w;      /* the width each shown column gets */
	int elide;
};

static size_t total_width(const struct table *t, const struct layout *l)
{
	size_t total = 0, n = 0;
	for (size_t c = 0; c < t->n_cols; c++)
		if (l->shown[c]) {
			total += l->w[c];
			n++;
		}
	return total + (n ? (n - 1) * SEP : 0);
}

static void plan_layout(struct layout *l, const struct table *t, const struct table_options *o)
{
	size_t *natural = xcalloc(t->n_cols ? t->n_cols : 1, sizeof *natural);
	size_t *floor = xcalloc(t->n_cols ? t->n_cols : 1, sizeof *floor);
	int limited = o->width > 0 && !o->wide;
	l->elide = limited;
	for (size_t c = 0; c < t->n_cols; c++) {
		const struct table_column *col = &t->cols[c];
		l->shown[c] = o->wide || !(col->flags & TABLE_WIDE_ONLY);
		size_t title = table_display_width(col->title); /* counted without titles too: the same columns */
		natural[c] = title;
		if ((col->flags & TABLE_FIXED) && !limited) {
			natural[c] = col->min_width > title ? col->min_width : title;
		} else {
			for (size_t r = 0; r < t->n_rows; r++)
				if (!t->rows[r].rule) {
					size_t w = table_display_width(cell_text(&t->rows[r].cells[c]));
					if (w > natural[c])
						natural[c] = w;
				}
		}
		size_t min = col->min_width ? col->min_width : table_display_width(col->title);
		floor[c] = natural[c] < min || (col->flags & TABLE_RIGHT) ? natural[c] : min; /* a cut number lies */
		l->w[c] = natural[c];
	}
	if (limited) {
		for (;;) { /* leave out the least important columns until the minimums fit */
			size_t min_total = 0, n = 0;
			for (size_t c = 0; c < t->n_cols; c++)
				if (l->shown[c]) {
					min_total += floor[c];
					n++;
				}
			min_total += n ? (n - 1) * SEP : 0;
			if (min_total <= o->width)
				break;
			size_t drop = t->n_cols;
			for (size_t c = 0; c < t->n_cols; c++)
				if (l->shown[c] && t->cols[c].priority > 0 &&
				    (drop == t->n_cols || t->cols[c].priority >= t->cols[drop].priority))
					drop = c;
			if (drop == t->n_cols)
				break; /* only always-shown columns left: they overflow */
			l->shown[drop] = 0;
		}
		size_t total = total_width(t, l);
		while (total > o->width) { /* shrink the column with the most to give, one column at a time */
			size_t best = t->n_cols, give = 0;
			for (size_t c = 0; c < t->n_cols; c++)
				if (l->shown[c] && l->w[c] > floor[c] && l->w[c] - floor[c] > give) {
					give = l->w[c] - floor[c];
					best = c;
				}
			if (best == t->n_cols)
				break;
			size_t over = total - o->width;
			/* down to the next widest column's excess at once, but not past what is needed */
			size_t next = 0;
			for (size_t c = 0; c < t->n_cols; c++)
				if (c != best && l->shown[c] && l->w[c] > floor[c] && l->w[c] - floor[c] > next)
					next = l->w[c] - floor[c];
			size_t step = give - next ? give - next : 1;
			if (step > over)
				step = over;
			l->w[best] -= step;
			total -= step;
		}
	}
	free(natural);
	free(floor);
}

static void write_line(struct buf *out, const struct table *t, const struct layout *l,
		       const struct table_cell *cells, const char *row_sgr, int titles)
{
	struct buf line = BUF_INIT;
	size_t last = 0;
	for (size_t c = 0; c < t->n_cols; c++)
		if (l->shown[c])
			last = c;
	int first = 1;
	for (size_t c = 0; c < t->n_cols; c++) {
		if (!l->shown[c])
			continue;
		const struct table_column *col = &t->cols[c];
		const char *s = titles ? col->title : cell_text(&cells[c]);
		const char *sgr = titles ? NULL : cells[c].sgr;
		if (!first)
			pad(&line, SEP);
		first = 0;
		int elide = l->elide || (titles && table_display_width(s) > l->w[c] && !(col->flags & TABLE_FIXED));
		size_t sw = table_display_width(s);
		size_t shown_w = elide && sw > l->w[c] ? l->w[c] : sw;
		if ((col->flags & TABLE_RIGHT) && shown_w < l->w[c])
			pad(&line, l->w[c] - shown_w);
		if (sgr)
			buf_addf(&line, "\033[%sm", sgr);
		add_fitted(&line, s, l->w[c], elide);
		if (sgr)
			buf_adds(&line, "\033[0m");
		if (!(col->flags & TABLE_RIGHT) && c != last && shown_w < l->w[c])
			pad(&line, l->w[c] - shown_w);
	}
	buf_trim_trailing(&line, ' ');
	if (row_sgr)
		buf_addf(out, "\033[%sm", row_sgr);
	buf_add(out, line.s, line.len);
	if (row_sgr)
		buf_adds(out, "\033[0m");
	buf_addc(out, '\n');
	buf_release(&line);
}

void table_write(struct buf *out, const struct table *t, const struct table_options *opts)
{
	static const struct table_options plain = {0, 0, 0, NULL};
	const struct table_options *o = opts ? opts : &plain;
	struct layout l;
	l.shown = xcalloc(t->n_cols ? t->n_cols : 1, sizeof *l.shown);
	l.w = xcalloc(t->n_cols ? t->n_cols : 1, sizeof *l.w);
	plan_layout(&l, t, o);
	if (!o->no_headers)
		write_line(out, t, &l, NULL, o->header_sgr, 1);
	for (size_t r = 0; r < t->n_rows; r++) {
		if (t->rows[r].rule) {
			for (size_t i = total_width(t, &l); i > 0; i--)
				buf_addc(out, '-');
			buf_addc(out, '\n');
			continue;
		}
		write_line(out, t, &l, t->rows[r].cells, t->rows[r].sgr, 0);
	}
	free(l.shown);
	free(l.w);
}
