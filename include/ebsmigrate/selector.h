/*
 * selector.h - Kubernetes label selectors (kubectl's -l syntax), parsed and evaluated offline.
 *
 * Syntax, as the API server's labels parser takes it: requirements joined by ',' (AND), each
 *   KEY            the label exists          !KEY            it does not
 *   KEY=V  KEY==V  the label equals V        KEY!=V          it does not (or is absent)
 *   KEY in (A,B)   equals one of them        KEY notin (A,B) equals none (or is absent)
 *   KEY>N  KEY<N   exists and is an integer greater (less) than N
 * Whitespace between tokens is ignored. Keys and values are checked as Kubernetes checks them
 * (a key: optional DNS-subdomain prefix of at most 253 characters and '/', then a name of 1 to
 * 63 characters [A-Za-z0-9] at both ends, '-', '_', '.' inside; a value: the same as a name or
 * empty). The empty selector matches everything.
 *
 * Ownership: struct selector owns its requirements and their strings; selector_release frees
 * them. selector_matches borrows the label array.
 */
#ifndef EBSMIGRATE_SELECTOR_H
#define EBSMIGRATE_SELECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/volume.h"

/* = and == select like in with one value, != like notin; they are kept apart for the text. */
enum selector_op { SEL_EXISTS = 0, SEL_NOT_EXISTS, SEL_EQUALS, SEL_DOUBLE_EQUALS, SEL_NOT_EQUALS, SEL_IN, SEL_NOT_IN,
		   SEL_GT, SEL_LT };

struct selector_req {
	char *key;
	enum selector_op op;
	char **values;  /* the set (one value for =, ==, !=, >, <); sorted, no repeats */
	size_t n_values;
	int64_t number; /* SEL_GT / SEL_LT */
};

struct selector {
	struct selector_req *reqs;
	size_t n, alloc;
};

#define SELECTOR_INIT {NULL, 0, 0}

/* Parses text into out (initialised here). On bad syntax or an invalid key or value returns
 * EM_EINPUT with one message in err naming the selector, what is wrong and the 1-based column:
 * "-l: 'tier in (a': missing ')' at 11". out is then empty. */
int selector_parse(struct selector *out, const char *text, struct buf *err);
/* 1 when the labels satisfy every requirement (the empty selector matches everything). */
int selector_matches(const struct selector *s, const struct kv *labels, size_t n_labels);
/* The canonical text (requirements in key order, as the API server prints them): for tests and
 * messages. */
void selector_format(struct buf *out, const struct selector *s);
void selector_release(struct selector *s);

/* Kubernetes' label rules, exposed for other checks: 1 when valid. */
int selector_valid_key(const char *key, const char **why);
int selector_valid_value(const char *value, const char **why);

#endif
