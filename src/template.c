/*
 * template.c - {{name}} templates and value quoting (template.h): rendering for plan --manifests
 * and bench --kube's Job, and the loader that lets --templates-dir override a built-in template.
 *
 * Entry points: template_render, template_yaml_quote, template_sh_quote, template_load.
 *
 * Invariants: a value is inserted verbatim (its caller quoted it); an unknown or unclosed
 * placeholder is an error naming the template, never left in the output.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/embedded.h"
#include "ebsmigrate/template.h"

/* ---- quoting ---- */

static int yaml_plain_ok(const char *s)
{
	static const char *const keywords[] = {"y", "yes", "n", "no", "true", "false", "on", "off", "null", NULL};
	unsigned char c0 = (unsigned char)s[0];
	if (!c0 || !(isalpha(c0) || c0 == '/' || c0 == '_'))
		return 0;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (!(isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/'))
			return 0;
	}
	for (size_t i = 0; keywords[i]; i++)
		if (strcasecmp(s, keywords[i]) == 0)
			return 0;
	return 1;
}

void template_yaml_quote(struct buf *out, const char *s)
{
	if (!s)
		s = "";
	if (yaml_plain_ok(s)) {
		buf_adds(out, s);
		return;
	}
	static const char hex[] = "0123456789ABCDEF";
	buf_addc(out, '"');
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		const char *esc = buf_backslash_escape(c);
		if (esc) {
			buf_adds(out, esc);
		} else if (c < 0x20 || c == 0x7f) {
			char x[5] = {'\\', 'x', hex[c >> 4], hex[c & 15], 0};
			buf_adds(out, x);
		} else {
			buf_addc(out, (char)c);
		}
	}
	buf_addc(out, '"');
}

void template_sh_quote(struct buf *out, const char *s)
{
	if (!s)
		s = "";
	int plain = *s != '\0';
	for (const char *p = s; *p && plain; p++) {
		unsigned char c = (unsigned char)*p;
		plain = isalnum(c) || strchr("_./:=@%+,-", c) != NULL;
	}
	if (plain) {
		buf_adds(out, s);
		return;
	}
	buf_addc(out, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			buf_adds(out, "'\\''");
		else
			buf_addc(out, *p);
	}
	buf_addc(out, '\'');
}

/* ---- rendering ---- */

static const char *var_lookup(const char *const *vars, const char *name, size_t len)
{
	for (size_t i = 0; vars && vars[i]; i += 2)
		if (strlen(vars[i]) == len && memcmp(vars[i], name, len) == 0)
			return vars[i + 1] ? vars[i + 1] : "";
	return NULL;
}

/* Finds "{{ name }}" at p; sets the trimmed name and returns the position after "}}", or NULL
 * when it is not closed on that line. */
static const char *placeholder_at(const char *p, const char *line_end, const char **name, size_t *len)
{
	const char *q = p + 2;
	const char *close = NULL;
	for (const char *r = q; r + 1 < line_end; r++) {
		if (r[0] == '}' && r[1] == '}') {
			close = r;
			break;
		}
	}
	if (!close)
		return NULL;
	while (q < close && *q == ' ')
		q++;
	const char *e = close;
	while (e > q && e[-1] == ' ')
		e--;
	*name = q;
	*len = (size_t)(e - q);
	return close + 2;
}

int template_render(struct buf *out, const char *tpl, const char *tpl_name, const char *const *vars,
		    struct buf *err)
{
	const char *p = tpl;
	while (*p) {
		const char *line_end = strchr(p, '\n');
		if (!line_end)
			line_end = p + strlen(p);
		const char *next = *line_end ? line_end + 1 : line_end;
		const char *q = p;
		while (q < line_end && (*q == ' ' || *q == '\t'))
			q++;
		const char *name;
		size_t len;
		if (q[0] == '{' && q[1] == '{') {
			const char *after = placeholder_at(q, line_end, &name, &len);
			const char *t = after;
			while (t && t < line_end && (*t == ' ' || *t == '\t' || *t == '\r'))
				t++;
			if (after && t == line_end) {
				/* A placeholder alone on its line: a block. */
				const char *val = var_lookup(vars, name, len);
				if (!val)
					return em_err(err, EM_EINPUT, "template '%s': unknown placeholder '{{%.*s}}'",
						      tpl_name, (int)len, name);
				size_t vlen = strlen(val);
				while (vlen && val[vlen - 1] == '\n')
					vlen--;
				if (vlen) {
					buf_add(out, p, (size_t)(q - p));
					for (size_t i = 0; i < vlen; i++) {
						buf_addc(out, val[i]);
						if (val[i] == '\n' && i + 1 < vlen && val[i + 1] != '\n')
							buf_add(out, p, (size_t)(q - p));
					}
					if (*line_end)
						buf_addc(out, '\n');
				}
				p = next;
				continue;
			}
		}
		for (const char *r = p; r < line_end;) {
			if (r[0] == '{' && r[1] == '{') {
				const char *after = placeholder_at(r, line_end, &name, &len);
				if (!after)
					return em_err(err, EM_EINPUT, "template '%s': '{{' without '}}' on the same line",
						      tpl_name);
				const char *val = var_lookup(vars, name, len);
				if (!val)
					return em_err(err, EM_EINPUT, "template '%s': unknown placeholder '{{%.*s}}'",
						      tpl_name, (int)len, name);
				buf_adds(out, val);
				r = after;
			} else {
				buf_addc(out, *r++);
			}
		}
		if (*line_end)
			buf_addc(out, '\n');
		p = next;
	}
	return 0;
}

/* ---- loading ---- */

int template_load(struct buf *text, char **name_out, const char *dir, const char *file, struct buf *err)
{
	struct buf path = BUF_INIT;
	*name_out = NULL;
	if (dir)
		buf_addf(&path, "%s/%s", dir, file);
	if (dir && access(path.s, F_OK) == 0) {
		*name_out = buf_detach(&path);
		return em_read_file_max(*name_out, EM_MAX_LIST_FILE, text, err);
	}
	buf_reset(&path);
	buf_addf(&path, "templates/%s", file);
	const struct embedded_file *e = embedded_find(path.s);
	*name_out = buf_detach(&path);
	if (!e)
		return em_err(err, EM_ENOTFOUND, "template '%s' is not built in", *name_out);
	buf_add(text, e->data, e->len);
	return 0;
}
