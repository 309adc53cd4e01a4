/*
 * buf.h - one growable, NUL-terminated byte string.
 *
 * Ownership: a struct buf owns its memory. Initialise with BUF_INIT (or buf_init),
 * free with buf_release (the struct is left empty and reusable). buf_detach hands the
 * bytes to the caller, who frees them with free(). b->s is never NULL after any
 * buf_* call and is always NUL-terminated, so it may be printed directly.
 * Allocation failure aborts (see xalloc in common.h). A buf may have a size cap
 * (buf_set_cap): appends beyond it fail with EM_ETOOBIG, used for HTTP bodies.
 */
#ifndef EBSMIGRATE_BUF_H
#define EBSMIGRATE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *s;     /* contents, NUL-terminated; points at a static "" while empty */
	size_t len;  /* bytes used, excluding the NUL */
	size_t cap;  /* bytes allocated; 0 while s is the static "" */
	size_t max;  /* 0 = unlimited, else the largest len allowed */
};

extern char buf_empty_[];
#define BUF_INIT { buf_empty_, 0, 0, 0 }

void buf_init(struct buf *b);
void buf_release(struct buf *b);
char *buf_detach(struct buf *b);          /* caller frees; b is left empty */
void buf_reset(struct buf *b);            /* len = 0, keeps memory */
void buf_set_cap(struct buf *b, size_t max);
int buf_grow(struct buf *b, size_t extra); /* 0 or EM_ETOOBIG */
int buf_add(struct buf *b, const void *data, size_t n);
int buf_adds(struct buf *b, const char *s);
int buf_addc(struct buf *b, char c);
int buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vaddf(struct buf *b, const char *fmt, va_list ap);
/* Returns the formatted string as a new heap string (as git's xstrfmt); the caller frees it. For
 * the "format a message, keep it in an array" helpers (warnings, notes, outcome details). */
char *xstrvfmt(const char *fmt, va_list ap);

/* A writer's way out for a document too large to hold whole (an --save export, the inventory and
 * plan documents): at element boundaries the writer calls buf_spill, which hands the buffer's
 * contents to flush and empties it (keeping its memory) once it holds at least `at` bytes (0:
 * whatever it holds). A NULL spill keeps the whole document in the buffer. */
struct buf_spill {
	void (*flush)(void *ctx, const char *s, size_t n);
	void *ctx;
};
#define BUF_SPILL_AT ((size_t)1 << 20)
void buf_spill(struct buf *b, const struct buf_spill *sp, size_t at);
/* Appends s with JSON string escaping, without the surrounding quotes. */
void buf_add_json_escaped(struct buf *b, const char *s);
/* The two-character escape that JSON and YAML double-quoted strings share for '"', '\\', newline,
 * carriage return and tab, or NULL for any other byte (each format escapes the rest its own way). */
const char *buf_backslash_escape(unsigned char c);
/* Appends s as a quoted, escaped JSON string, or `null` when s is NULL. */
void buf_add_json_str(struct buf *b, const char *s);
/* Appends s for a terminal: control characters (C0 incl. newline and tab, DEL, the C1 range
 * U+0080..U+009F) and bytes that are not valid UTF-8 become a visible "\xHH" per byte, so text
 * from a server or a file (volume ids, names, tags) cannot move the cursor, recolour or retitle
 * the terminal. The one escaping for tables and diagnostics; NULL appends nothing. */
void buf_add_visible(struct buf *b, const char *s);
/* Appends s as the text of one GitHub-flavoured Markdown table cell (plan's and report's -o
 * markdown): '|', '\\', '*', '_' and '`' backslash-escaped, so a value can neither end its cell
 * nor turn into emphasis or code; what buf_add_visible makes visible (control characters,
 * newlines included, so a row never breaks; invalid UTF-8) as \\xHH, reading \xHH. NULL appends
 * nothing. */
void buf_add_markdown_cell(struct buf *b, const char *s);
/* Appends s for XML text or a quoted attribute value: & < > " ' as entities, and what XML 1.0
 * cannot hold at all (control characters other than tab, newline and carriage return; bytes
 * that are not UTF-8; surrogates, U+FFFE, U+FFFF) as U+FFFD, so the document always parses. */
void buf_add_xml_escaped(struct buf *b, const char *s);
/* Appends s as an OpenMetrics / Prometheus text label value, without the quotes: '\\', '"' and
 * newline as \\ \" \n (the only escapes both formats know), and what must not stand raw in
 * a line-based document (other control characters, DEL, bytes that are not UTF-8, surrogates)
 * as U+FFFD, so any input gives a value every parser reads. NULL appends nothing. */
void buf_add_label_escaped(struct buf *b, const char *s);
/* Appends v in decimal with a ',' between groups of three digits ("3,017", "1,234,567"): counts
 * in sentences for people (money's pretty amounts, bench's verdicts). */
void buf_add_grouped(struct buf *b, unsigned long long v);
/* Appends s as one CSV field (RFC 4180: quoted only when needed). */
void buf_add_csv_field(struct buf *b, const char *s);
/* Appends s with escape written before each byte equal to special. */
void buf_add_escaping(struct buf *b, const char *s, char special, char escape);
/* Appends s percent-encoded (RFC 3986 unreserved kept); encode_slash=0 keeps '/'. */
void buf_add_urlencoded(struct buf *b, const char *s, int encode_slash);
void buf_trim_trailing(struct buf *b, char c);

#endif
