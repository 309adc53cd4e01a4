/*
 * yamlout.h - `-o yaml`: one JSON text rewritten as the same document in YAML (block style,
 * libyaml's emitter), streamed token by token, so a plan document of hundreds of megabytes is
 * converted from its spool file without a tree: memory is one string token, the nesting stack
 * (at most YAMLOUT_MAX_DEPTH levels) and libyaml's few events of look-ahead.
 *
 * The YAML loads (YAML 1.1 or 1.2 resolvers) to the value the JSON parses to: strings that a
 * resolver would read as something else (true, no, null, ~, 012, 1e3, .inf, "" ...) are quoted,
 * numbers are written so that YAML 1.1 reads them as numbers (1e5 becomes 1.0e+5). Bytes that
 * are not UTF-8 inside JSON strings become U+FFFD (YAML cannot hold them).
 *
 * Errors (malformed JSON: these are the program's own documents, so a bug; or a write error)
 * return EM_EINPUT / EM_EIO with one message in err naming the byte offset.
 */
#ifndef EBSMIGRATE_YAMLOUT_H
#define EBSMIGRATE_YAMLOUT_H

#include <stddef.h>
#include <stdio.h>

#include "ebsmigrate/buf.h"

#define YAMLOUT_MAX_DEPTH 256 /* deeper JSON is refused (the program writes at most ~6) */

/* Appends the YAML of the JSON text json[0..len) to out. */
int yamlout_from_json(struct buf *out, const char *json, size_t len, struct buf *err);
/* Reads a JSON text from in (from its current position to EOF) and writes its YAML to out. */
int yamlout_from_json_file(FILE *out, FILE *in, struct buf *err);

#endif
