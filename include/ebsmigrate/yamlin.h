/*
 * yamlin.h - YAML exports read as the JSON they stand for: `kubectl get ... -o yaml` and
 * `aws ... --output yaml` (or `yaml-stream`) become the text `-o json` / `--output json` would
 * have printed, so they take the one JSON path into the fleet (jsonx_stream: the same records,
 * checks and messages). yamlout.h is the other direction.
 *
 * Which reader: a text whose first byte (after white space and a UTF-8 byte order mark) is '{'
 * or '[' is JSON (yamlin_is_json); any other is YAML. A text that is neither (YAML's parser
 * fails, or the document is one plain value) is refused with what it seems to be
 * (yamlin_guess_format: the AWS CLI's table or text output, kubectl's table, XML, CSV, an
 * unrendered template, compressed or binary data).
 *
 * The JSON: each YAML document is one JSON document; a document that is a sequence (yaml-stream:
 * one mapping per page) gives one document per item; an empty document gives none. Plain
 * scalars resolve by YAML 1.2's core schema, as the AWS CLI writes them (null ~ "", true/false,
 * integers in decimal, 0o and 0x, floats); every other scalar is a string, and kubectl quotes
 * every string another reading could take for something else. Keys are strings. Refused, with
 * line and column (1-based): nesting deeper than YAMLIN_MAX_DEPTH (cJSON's limit, checked as
 * each level opens, before anything is built), aliases (*name), merge keys (<<), a mapping or
 * sequence as a key, tags other than !, !!str and the core schema's own, .inf/.nan (no JSON
 * equivalent), a key given twice at a document's top level (two exports concatenated without
 * `---` between them), and bytes over the input size limit (em_max_input_size).
 *
 * Memory: libyaml's look-ahead, one scalar and the nesting; no tree. Errors return a negative
 * EM_E* code with one message in err naming origin.
 */
#ifndef EBSMIGRATE_YAMLIN_H
#define EBSMIGRATE_YAMLIN_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"

#define YAMLIN_MAX_DEPTH 1000

/* 1 when text[0, len) is to be read as JSON: its first byte after white space and a byte order
 * mark is '{' (not "{{", a template) or '['; also when it holds nothing but white space (the
 * JSON reader's "empty file"). */
int yamlin_is_json(const char *text, size_t len);

/* What a text that is neither JSON nor YAML seems to be, for the refusal ("the AWS CLI's table
 * output (--output table); export with --output json or --output yaml"), or NULL. Looks at the
 * first few KiB. */
const char *yamlin_guess_format(const char *text, size_t len);

/* Converts a whole YAML text to JSON (one document a line) appended to out. */
int yamlin_to_json(const char *text, size_t len, const char *origin, struct buf *out, struct buf *err);

/* The streamed form, for a file: the YAML is head[0, head_len) (bytes already read; copied),
 * then what read(fd) gives until its end (fd -1: nothing more). read_before counts bytes already
 * taken against max_size, the input size limit. origin must outlive the reader.
 * yamlin_read appends JSON to out until it has grown by at least want bytes or the input ends:
 * 1 when it added text, 0 at the end, or a negative EM_E* code. */
struct yamlin;
struct yamlin *yamlin_open(const char *head, size_t head_len, int fd, int64_t read_before, int64_t max_size,
			   const char *origin);
int yamlin_read(struct yamlin *y, struct buf *out, size_t want, struct buf *err);
void yamlin_free(struct yamlin *y);

#endif
