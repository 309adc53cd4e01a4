/*
 * jsonw.h - a streaming JSON writer: every JSON document ebsmigrate writes (plan, inventory,
 * report, bench, status, pricing, the IAM policy, saved Kubernetes objects, the AWS-shaped
 * --save and pricing export files) and every JSON request body it sends (GetMetricData,
 * GetProducts, LookupEvents, Kubernetes objects and patches) goes through it, into a struct buf.
 *
 * Containers open and close with jsonw_object/jsonw_array and jsonw_end; commas are automatic;
 * a member is jsonw_key then one value. Layout is a style (compact, spaced ", " and ": ", pretty
 * with two-space indentation, or pretty with arrays of scalars kept on one line) plus, where a
 * document puts one element per line, a lead (jsonw_lead) written after the comma and before
 * the next element.
 *
 * Nesting is checked: a mismatched jsonw_end, a key outside an object, or a value where a key
 * belongs is an assert() in debug builds.
 */
#ifndef EBSMIGRATE_JSONW_H
#define EBSMIGRATE_JSONW_H

#include <stddef.h>
#include <string.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/money.h"

struct kv; /* volume.h */

enum jsonw_style {
	JSONW_COMPACT, /* {"a":1,"b":[2,3]} */
	JSONW_SPACED,  /* {"a": 1, "b": [2, 3]} (the bench documents) */
	JSONW_PRETTY,  /* one member a line, two spaces per level */
	/* JSONW_PRETTY, but an array whose first element is a scalar is written on one line, spaced,
	 * with everything inside it: "Action": ["ec2:A", "ec2:B"] (the IAM policy document). An array
	 * that starts with an object or array is laid out like JSONW_PRETTY. */
	JSONW_PRETTY_INLINE,
};

/* As deep as the JSON readers go (cJSON's nesting limit): yamlin writes a YAML export's JSON,
 * nested as deep as the export. */
#define JSONW_MAX_DEPTH 1000

struct jsonw {
	struct buf *b;
	enum jsonw_style style;
	const char *lead;        /* layout before the next element, after its comma (jsonw_lead) */
	unsigned depth;
	unsigned inline_depth;   /* JSONW_PRETTY_INLINE: levels from this depth on are one line; 0: none */
	int after_key;           /* a key was written; its value comes next */
	int ascii;               /* set after jsonw_init: strings escaped as jsonw_add_str_ascii does */
	char open[JSONW_MAX_DEPTH];      /* '{' or '[' per open level */
	char has_items[JSONW_MAX_DEPTH]; /* the level holds an element: the next one needs a comma */
};

void jsonw_init(struct jsonw *w, struct buf *b, enum jsonw_style style);
/* jsonw_init, then the document's object opened with its "schema" member first: every document
 * ebsmigrate writes names its schema ("ebsmigrate.plan/v1", ...) as its first member. */
void jsonw_document(struct jsonw *w, struct buf *b, enum jsonw_style style, const char *schema);

void jsonw_object(struct jsonw *w);
void jsonw_array(struct jsonw *w);
void jsonw_end(struct jsonw *w); /* closes the innermost object or array */
/* The next element starts with this text (after its comma): "\n" puts it on a line of its own.
 * s must outlive the next element's first write (string literals). */
void jsonw_lead(struct jsonw *w, const char *s);
/* Layout text written now, outside the comma logic: a newline before a closing bracket, or
 * after the document. */
void jsonw_layout(struct jsonw *w, const char *s);

/* A member's key. A string literal goes in by its known length, unscanned (it must need no
 * escape: asserted); any other key is escaped like a string value. */
void jsonw_keyn_general(struct jsonw *w, const char *key, size_t n);
/* Inline so that a literal's length is a constant at the call site: the compact case is one
 * buffer check and a fixed-size copy (the plan document writes some thirty keys per volume). */
static inline void jsonw_keyn(struct jsonw *w, const char *key, size_t n)
{
	if (w->lead || w->style != JSONW_COMPACT || w->depth == 0 || w->after_key ||
	    w->open[w->depth - 1] != '{' || buf_grow(w->b, n + 4)) {
		jsonw_keyn_general(w, key, n);
		return;
	}
	char *p = w->b->s + w->b->len;
	unsigned top = w->depth - 1;
	if (w->has_items[top])
		*p++ = ',';
	*p++ = '"';
	memcpy(p, key, n);
	p += n;
	*p++ = '"';
	*p++ = ':';
	*p = '\0';
	w->b->len = (size_t)(p - w->b->s);
	w->has_items[top] = 1;
	w->after_key = 1;
}
void jsonw_key_any(struct jsonw *w, const char *key);
#define jsonw_key(w, key)                                                                                     \
	(__builtin_constant_p(key) ? jsonw_keyn((w), (key), __builtin_strlen(key)) : jsonw_key_any((w), (key)))
void jsonw_str(struct jsonw *w, const char *s); /* NULL: null */
void jsonw_int(struct jsonw *w, long long v);
void jsonw_int_or_null(struct jsonw *w, long long v, int known);
void jsonw_number(struct jsonw *w, double v);     /* shortest text that reads back as v; null if not finite */
void jsonw_number_2dp(struct jsonw *w, double v); /* rounded to hundredths, %.10g; null if not finite */
/* printf's %.*g with that many significant digits (17 reads back exactly, with one snprintf
 * where jsonw_number searches for the shortest text); null if not finite. */
void jsonw_number_g(struct jsonw *w, double v, int digits);
void jsonw_money(struct jsonw *w, micro_t m);     /* USD rounded to cents, trailing zeros trimmed: 12.5 */
void jsonw_money_or_null(struct jsonw *w, micro_t m, int known);
void jsonw_time(struct jsonw *w, time_t t); /* "2026-01-02T03:04:05Z"; 0: null */
void jsonw_bool(struct jsonw *w, int v);
void jsonw_null(struct jsonw *w);
void jsonw_raw(struct jsonw *w, const char *json, size_t n); /* an already encoded value */
void jsonw_str_array(struct jsonw *w, const char *const *s, size_t n);  /* ["a","b"] */
void jsonw_kv_object(struct jsonw *w, const struct kv *kv, size_t n); /* {"key":"value",...} */
/* A member whose value is the array of a document's owned strings (a char ** and its count: the
 * warnings, notes, notices and regions), ["a","b"]. */
void jsonw_key_strv(struct jsonw *w, const char *key, char *const *s, size_t n);

/* A member whose value is the array of a document's records, one a line: element(w, e) writes
 * each of the n records of v (size bytes each, in order); after each record the buffer is offered
 * to spill (buf_spill at BUF_SPILL_AT; NULL keeps it all), so a 100,000-volume inventory or plan
 * never sits in memory whole; then the closing bracket on a line of its own. */
void jsonw_key_records(struct jsonw *w, const char *key, const void *v, size_t n, size_t size,
		       void (*element)(struct jsonw *w, const void *e), const struct buf_spill *spill);

/* A member whose value is a container, opened (close it with jsonw_end). */
#define jsonw_key_object(w, key) (jsonw_key((w), (key)), jsonw_object(w))
#define jsonw_key_array(w, key) (jsonw_key((w), (key)), jsonw_array(w))
/* Closes the n innermost levels. */
void jsonw_end_n(struct jsonw *w, unsigned n);

/* key + value in one call */
#define jsonw_key_str(w, key, v) (jsonw_key((w), (key)), jsonw_str((w), (v)))
#define jsonw_key_int(w, key, v) (jsonw_key((w), (key)), jsonw_int((w), (v)))
#define jsonw_key_money(w, key, v) (jsonw_key((w), (key)), jsonw_money((w), (v)))
#define jsonw_key_number(w, key, v) (jsonw_key((w), (key)), jsonw_number((w), (v)))
#define jsonw_key_bool(w, key, v) (jsonw_key((w), (key)), jsonw_bool((w), (v)))

/* Runs of members from a table: {"key", value} pairs written in order; the keys are literals that
 * need no escape (as jsonw_keyn's). */
struct jsonw_str_member {
	const char *key;
	const char *value;
};
struct jsonw_int_member {
	const char *key;
	long long value;
};
void jsonw_members_str(struct jsonw *w, const struct jsonw_str_member *m, size_t n);
void jsonw_members_int(struct jsonw *w, const struct jsonw_int_member *m, size_t n);
void jsonw_members_money(struct jsonw *w, const struct jsonw_int_member *m, size_t n); /* values in micro_t */
#define JSONW_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The value formatters alone, for writers that emit a number outside a document (bench). */
void jsonw_add_number(struct buf *b, double v);
/* The escaped, quoted string (null for NULL): the one escaping routine, buf_add_json_escaped's
 * rules (\" \\ \n \r \t, other bytes below 0x20 as \u00XX, all else, invalid UTF-8 included,
 * passed through), with a one-copy path for a string that needs no escape. */
void jsonw_add_str(struct buf *b, const char *s);
/* The quoted string as Python's json.dumps(ensure_ascii=True) writes it (null for NULL): for
 * files that must match a Python-written format byte for byte (the AWS price-list offer files
 * pricing export writes, like make_bundle.py's). Every string a jsonw with .ascii set writes. */
void jsonw_add_str_ascii(struct buf *b, const char *s);

#endif
