/*
 * strlist.h - a growable list of strings (as git's string-list): the char ** + n + alloc with
 * xrealloc growth, the split on a separator and the free loop that were written by hand in
 * each module.
 *
 * A list either owns its strings (STRLIST_INIT_DUP: strlist_append copies, strlist_release frees
 * them) or borrows them (STRLIST_INIT_NODUP: e.g. argv values, which outlive the list).
 * items can be passed where a `const char *const *` and a count are wanted.
 */
#ifndef EBSMIGRATE_STRLIST_H
#define EBSMIGRATE_STRLIST_H

#include <stddef.h>

struct strlist {
	const char **items;
	size_t n, alloc;
	int owns; /* 1: the strings are heap copies freed by strlist_release */
};
#define STRLIST_INIT_DUP {NULL, 0, 0, 1}
#define STRLIST_INIT_NODUP {NULL, 0, 0, 0}

/* Appends s: a copy when the list owns its strings, else s itself. Returns the stored string. */
const char *strlist_append(struct strlist *l, const char *s);
/* Appends s as it is: in an owning list, s must be heap-allocated and is taken over. */
const char *strlist_append_nodup(struct strlist *l, char *s);
/* Appends each field of text between separators (empty fields included: "a,,b" gives "a", "",
 * "b"; "" gives one empty field), copied: the list must own its strings. Returns the count added. */
size_t strlist_split(struct strlist *l, const char *text, char sep);
/* Is s one of the strings (strcmp)? */
int strlist_contains(const struct strlist *l, const char *s);
/* Sorts the strings in strcmp order (stable for equal strings is not promised: they are equal). */
void strlist_sort(struct strlist *l);
/* Frees the array (and the strings when the list owns them); the list is empty again and keeps
 * its ownership, ready for reuse. */
void strlist_release(struct strlist *l);

/* Frees the n heap strings of v and v itself: for the plain `char **` + count arrays that
 * structs expose (warnings, notes). NULL with n == 0 is fine. */
void strv_free(char **v, size_t n);
/* Appends the formatted message to such an array (*v grown as XGROW does): the planner's and the
 * manifest writer's add_warning. */
void strv_addf(char ***v, size_t *n, size_t *alloc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
