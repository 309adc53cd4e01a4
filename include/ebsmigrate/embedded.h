/*
 * embedded.h - files compiled into the binary by cmake/embed.cmake: the .sql files of
 * migrations/, every file of templates/ and the .json files of pricing/, keyed by their path
 * relative to the source tree ("migrations/0001_init.sql"). The table ends with a
 * {NULL, NULL, 0} entry. Read-only.
 */
#ifndef EBSMIGRATE_EMBEDDED_H
#define EBSMIGRATE_EMBEDDED_H

#include <stddef.h>

struct embedded_file {
	const char *path;
	const char *data; /* NUL-terminated */
	size_t len;
};

extern const struct embedded_file embedded_files[];

/* Returns the file with that relative path, or NULL. */
const struct embedded_file *embedded_find(const char *path);

#endif
