/*
 * table.h - the one writer of the terminal tables (plan, inventory, report, status, pricing,
 * bench): columns declared with alignment, priority and a minimum width; cells added row by
 * row; written to fit a width (a terminal's) or unlimited (a pipe, a file, -o wide).
 *
 * Layout: columns are separated by two spaces; left-aligned cells are padded, right-aligned
 * ones (numbers) are padded in front; trailing spaces are trimmed. Widths are display columns
 * (UTF-8 aware: combining marks take none, East Asian wide characters two). Cells are made
 * visible (control characters as \xHH, buf_add_visible) when added.
 *
 * Fitting a width (table_options.width > 0, and not wide): columns shrink, widest excess
 * first, down to their minimum width, their cells elided with "…" (never a right-aligned
 * column: a cut number would be a wrong one; it is dropped instead); when even the minimums do
 * not fit, the column with the highest priority number (the least important, 0 = never
 * dropped) is left out and the rest re-fitted. With width 0 nothing is elided or dropped.
 *
 * Ownership: a struct table owns copies of its cells; the column array is borrowed for the
 * table's life. table_release frees everything.
 */
#ifndef EBSMIGRATE_TABLE_H
#define EBSMIGRATE_TABLE_H

#include <stddef.h>

#include "ebsmigrate/buf.h"

enum table_column_flags {
	TABLE_RIGHT = 1 << 0,     /* right-aligned (numbers, money), never elided */
	TABLE_FIXED = 1 << 1,     /* unlimited width: padded to min_width, a longer cell shifts only its row */
	TABLE_WIDE_ONLY = 1 << 2, /* shown only with -o wide */
};

struct table_column {
	const char *title;
	unsigned flags;    /* enum table_column_flags */
	int priority;      /* 0: always shown; higher: dropped earlier when the width is short */
	size_t min_width;  /* not elided below this (0: the title's width); TABLE_FIXED: the width */
};

struct table_options {
	size_t width;   /* 0 = unlimited (not a terminal, a file) */
	int wide;       /* -o wide: every column, nothing elided, whatever the width */
	int no_headers; /* --no-headers: no title row */
	const char *header_sgr; /* SGR of the title row (e.g. "1" for bold), or NULL */
};

struct table_cell {
	char *text;
	const char *sgr; /* colour of the cell (e.g. "32"), or NULL; borrowed static text */
};

struct table_row {
	struct table_cell *cells;
	const char *sgr; /* colour of the whole line, or NULL */
	int rule;        /* a rule of '-' across the table instead of cells */
};

struct table {
	const struct table_column *cols;
	size_t n_cols;
	struct table_row *rows;
	size_t n_rows, alloc_rows;
	size_t filled; /* cells given in the last row */
};

void table_init(struct table *t, const struct table_column *cols, size_t n_cols);
/* Appends one cell to the current row (a new row after the last cell of one); NULL is "-". */
void table_add(struct table *t, const char *s);
void table_addf(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The colour of the cell just added / of the row being filled (or the last one). */
void table_set_cell_sgr(struct table *t, const char *sgr);
void table_set_row_sgr(struct table *t, const char *sgr);
/* A rule ('-' across every shown column) as the next row. */
void table_add_rule(struct table *t);
/* Writes the table to out (NULL options: unlimited width, titles shown). */
void table_write(struct buf *out, const struct table *t, const struct table_options *o);
void table_release(struct table *t);

/* Display columns of a UTF-8 string (invalid bytes count one each). */
size_t table_display_width(const char *s);
/* The width of the terminal on fd: 0 when fd is not a terminal; else COLUMNS when it is a
 * number from 20 to 10000, else the TIOCGWINSZ width, else 80. */
size_t table_terminal_width(int fd);

#endif
