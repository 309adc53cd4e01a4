/*
 * template.h - text templates with {{name}} placeholders and the quoting their values need:
 * what plan --manifests (plan_manifests.c) and bench --kube's Job (bench_kube.c) render.
 *
 * Templates are compiled in (templates/, embedded.h); a directory may override them by file name.
 * Values are inserted verbatim: quote them first (template_yaml_quote, template_sh_quote).
 *
 * Ownership: the caller owns every buffer; nothing is kept between calls.
 */
#ifndef EBSMIGRATE_TEMPLATE_H
#define EBSMIGRATE_TEMPLATE_H

#include "ebsmigrate/buf.h"

/* Appends s as one YAML scalar that every YAML 1.1/1.2 parser reads back as that exact string:
 * plain when unambiguous (letters first, no indicators, not true/no/null/...), else
 * double-quoted with escapes. NULL is "". */
void template_yaml_quote(struct buf *out, const char *s);
/* Appends s as one POSIX shell word: unchanged when only [A-Za-z0-9_./:=@%+,-], else in single
 * quotes with ' written as '\''. NULL is ''. */
void template_sh_quote(struct buf *out, const char *s);

/* Expands {{name}} placeholders of tpl with vars (name, value pairs ending with NULL). A
 * placeholder alone on its line (indentation only) is removed with its line when the value is
 * empty, and the value's further lines get the same indentation. Unknown or unclosed
 * placeholders: EM_EINPUT naming tpl_name. */
int template_render(struct buf *out, const char *tpl, const char *tpl_name, const char *const *vars,
		    struct buf *err);

/* Appends to text the template named file: DIR/file when dir is set and that file exists, else
 * the compiled-in templates/file. *name_out (the caller frees it) names it for messages.
 * EM_ENOTFOUND when it is not built in; em_read_file's codes for an override. */
int template_load(struct buf *text, char **name_out, const char *dir, const char *file, struct buf *err);

#endif
