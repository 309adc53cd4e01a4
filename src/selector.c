/*
 * selector.c - kubectl's label selectors (-l): a lexer and a recursive-descent parser that take
 * exactly what the API server's labels parser takes, and an evaluator over a label set, so a
 * selector means offline (exports' PVC labels) what it means live.
 *
 * Entry points: selector_parse, selector_matches, selector_format, selector_release, and the
 * label rules selector_valid_key / selector_valid_value.
 *
 * Invariants: the lexer splits on whitespace and the special symbols = ! ( ) , > < only (any
 * other byte belongs to an identifier, then checked by the label rules); "==" and "!=" are the
 * only two-symbol tokens. Inside values "in" and "notin" are plain identifiers. A parse either
 * yields every requirement or none, with one message that names the 1-based column.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/selector.h"

/* ---- the label rules (Kubernetes: IsQualifiedName, IsValidLabelValue) ---- */

enum { LABEL_NAME_MAX = 63, LABEL_PREFIX_MAX = 253 };

static int is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A name part or a non-empty value: [A-Za-z0-9] at both ends, [-_.A-Za-z0-9] inside. */
static int valid_name(const char *s, size_t n, const char **why)
{
	if (n > LABEL_NAME_MAX) {
		*why = "must be no more than 63 characters";
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && !((s[i] == '-' || s[i] == '_' || s[i] == '.') && i && i + 1 < n)) {
			*why = is_alnum(s[0]) && is_alnum(s[n - 1])
				       ? "must consist of letters, digits, '-', '_' or '.'"
				       : "must begin and end with a letter or digit";
			return 0;
		}
	return 1;
}

/* A DNS-1123 subdomain: lower-case labels [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by '.'. */
static int valid_subdomain(const char *s, size_t n)
{
	if (n == 0 || n > LABEL_PREFIX_MAX)
		return 0;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (i == start)
			return 0; /* empty label */
		for (size_t k = start; k < i; k++) {
			char c = s[k];
			int lower = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
			if (!lower && !(c == '-' && k > start && k + 1 < i))
				return 0;
		}
		start = i + 1;
	}
	return 1;
}

int selector_valid_key(const char *key, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	const char *slash = strchr(key, '/');
	const char *name = key;
	if (slash) {
		if (strchr(slash + 1, '/')) {
			*why = "has more than one '/' (a key is [PREFIX/]NAME)";
			return 0;
		}
		if (slash == key) {
			*why = "has an empty prefix before '/'";
			return 0;
		}
		if (!valid_subdomain(key, (size_t)(slash - key))) {
			*why = "has a prefix that is not a DNS subdomain (lower-case letters, digits, '-' and '.', "
			       "at most 253 characters)";
			return 0;
		}
		name = slash + 1;
	}
	if (!*name) {
		*why = "has an empty name";
		return 0;
	}
	return valid_name(name, strlen(name), why);
}

int selector_valid_value(const char *value, const char **why)
{
	const char *dummy;
	return valid_name(value, strlen(value), why ? why : &dummy);
}

/* ---- lexer ---- */

enum tok { T_END, T_IDENT, T_OPEN, T_CLOSE, T_COMMA, T_NOT, T_EQ, T_DEQ, T_NEQ, T_GT, T_LT, T_IN, T_NOTIN };

struct token {
	enum tok kind;
	size_t at;  /* byte offset of the token in the text */
	size_t len;
};

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int is_special(char c)
{
	return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

struct parser {
	const char *text;
	size_t len, pos;
	struct token look; /* the next token, already read */
	int failed;
	char fail_msg[512]; /* the first error */
	size_t fail_at;     /* its 1-based column */
};

static struct token lex(const char *s, size_t len, size_t *pos)
{
	size_t i = *pos;
	while (i < len && is_space(s[i]))
		i++;
	struct token t = {T_END, i, 0};
	if (i >= len) {
		*pos = i;
		return t;
	}
	if (is_special(s[i])) {
		t.len = 1;
		if (i + 1 < len && s[i + 1] == '=' && (s[i] == '=' || s[i] == '!'))
			t.len = 2;
		switch (s[i]) {
		case '=': t.kind = t.len == 2 ? T_DEQ : T_EQ; break;
		case '!': t.kind = t.len == 2 ? T_NEQ : T_NOT; break;
		case '(': t.kind = T_OPEN; break;
		case ')': t.kind = T_CLOSE; break;
		case ',': t.kind = T_COMMA; break;
		case '>': t.kind = T_GT; break;
		default: t.kind = T_LT; break;
		}
	} else {
		while (i + t.len < len && !is_space(s[i + t.len]) && !is_special(s[i + t.len]))
			t.len++;
		t.kind = T_IDENT;
		if (t.len == 2 && memcmp(s + i, "in", 2) == 0)
			t.kind = T_IN;
		else if (t.len == 5 && memcmp(s + i, "notin", 5) == 0)
			t.kind = T_NOTIN;
	}
	*pos = i + t.len;
	return t;
}

static struct token next(struct parser *p)
{
	struct token t = p->look;
	p->look = lex(p->text, p->len, &p->pos);
	return t;
}

/* In a value position the keywords are identifiers. */
static enum tok as_value(enum tok k)
{
	return k == T_IN || k == T_NOTIN ? T_IDENT : k;
}

/* Records the first error: message (printf-style) at the token's column. Returns EM_EINPUT. */
static int fail(struct parser *p, const struct token *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct parser *p, const struct token *t, const char *fmt, ...)
{
	if (p->failed)
		return EM_EINPUT;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->fail_msg, sizeof p->fail_msg, fmt, ap);
	va_end(ap);
	p->failed = 1;
	p->fail_at = t->at + 1;
	return EM_EINPUT;
}

/* "'lit'" or "the end", for messages (a long literal is cut). */
static void describe(const struct parser *p, const struct token *t, char *out, size_t cap)
{
	if (t->kind == T_END)
		snprintf(out, cap, "the end");
	else
		snprintf(out, cap, "'%.*s'", (int)(t->len > 40 ? 40 : t->len), p->text + t->at);
}

static char *token_text(const struct parser *p, const struct token *t)
{
	return xstrndup(p->text + t->at, t->len);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void req_release(struct selector_req *r)
{
	free(r->key);
	for (size_t i = 0; i < r->n_values; i++)
		free(r->values[i]);
	free(r->values);
	memset(r, 0, sizeof *r);
}

static void add_value(struct selector_req *r, char *v, size_t *alloc)
{
	for (size_t i = 0; i < r->n_values; i++)
		if (strcmp(r->values[i], v) == 0) {
			free(v);
			return;
		}
	XGROW(r->values, r->n_values, *alloc);
	r->values[r->n_values++] = v;
}

/* "(" values ")": as the API server reads it, an empty slot ("()", "(,a)", "(a,)", "(a,,b)")
 * is the empty value. */
static int parse_set(struct parser *p, struct selector_req *r, const char *op)
{
	char found[64];
	size_t alloc = 0;
	struct token t = next(p);
	if (t.kind != T_OPEN) {
		describe(p, &t, found, sizeof found);
		return fail(p, &t, "expected '(' after '%s', found %s", op, found);
	}
	int want_value = 1; /* at the start or after a ',' */
	for (;;) {
		t = next(p);
		enum tok k = as_value(t.kind);
		if (k == T_IDENT && want_value) {
			add_value(r, token_text(p, &t), &alloc);
			want_value = 0;
		} else if (k == T_COMMA) {
			if (want_value)
				add_value(r, xstrdup(""), &alloc);
			want_value = 1;
		} else if (k == T_CLOSE) {
			if (want_value)
				add_value(r, xstrdup(""), &alloc);
			return 0;
		} else if (k == T_END) {
			return fail(p, &t, "missing ')'");
		} else {
			describe(p, &t, found, sizeof found);
			return fail(p, &t, want_value ? "expected a value, ',' or ')' in the set, found %s"
						      : "expected ',' or ')' in the set, found %s",
				    found);
		}
	}
}

static int parse_number(const char *s, int64_t *out)
{
	size_t i = (*s == '+' || *s == '-') ? 1 : 0;
	if (!s[i])
		return -1;
	uint64_t v = 0, limit = *s == '-' ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (limit - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = *s == '-' ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
	return 0;
}

static const char *op_text(enum selector_op op)
{
	static const char *const names[] = {"", "!", "=", "==", "!=", "in", "notin", ">", "<"};
	return names[op];
}

static int parse_requirement(struct parser *p, struct selector_req *r)
{
	char found[64];
	struct token t = next(p);
	int negated = 0;
	if (t.kind == T_NOT) {
		negated = 1;
		t = next(p);
	}
	if (as_value(t.kind) != T_IDENT) {
		describe(p, &t, found, sizeof found);
		return fail(p, &t, negated ? "expected a label key after '!', found %s" : "expected a label key or '!', found %s",
			    found);
	}
	r->key = token_text(p, &t);
	const char *why;
	if (!selector_valid_key(r->key, &why))
		return fail(p, &t, "label key '%.*s' %s", (int)(t.len > 80 ? 80 : t.len), r->key, why);
	enum tok after = p->look.kind;
	if (negated || after == T_END || after == T_COMMA) {
		r->op = negated ? SEL_NOT_EXISTS : SEL_EXISTS;
		return 0;
	}
	struct token op = next(p);
	switch (op.kind) {
	case T_IN: r->op = SEL_IN; return parse_set(p, r, "in");
	case T_NOTIN: r->op = SEL_NOT_IN; return parse_set(p, r, "notin");
	case T_EQ: r->op = SEL_EQUALS; break;
	case T_DEQ: r->op = SEL_DOUBLE_EQUALS; break;
	case T_NEQ: r->op = SEL_NOT_EQUALS; break;
	case T_GT: r->op = SEL_GT; break;
	case T_LT: r->op = SEL_LT; break;
	default:
		describe(p, &op, found, sizeof found);
		return fail(p, &op, "expected an operator (=, ==, !=, in, notin, >, <) after '%.*s', found %s",
			    (int)(t.len > 40 ? 40 : t.len), p->text + t.at, found);
	}
	/* one value; nothing before the next ',' or the end is the empty value */
	size_t alloc = 0;
	struct token v = p->look;
	if (v.kind == T_END || v.kind == T_COMMA) {
		add_value(r, xstrdup(""), &alloc);
	} else {
		v = next(p);
		if (as_value(v.kind) != T_IDENT) {
			describe(p, &v, found, sizeof found);
			return fail(p, &v, "expected a value after '%s', found %s", op_text(r->op), found);
		}
		add_value(r, token_text(p, &v), &alloc);
	}
	if ((r->op == SEL_GT || r->op == SEL_LT) && parse_number(r->values[0], &r->number))
		return fail(p, &v, "'%s' needs an integer value, found '%.*s'", op_text(r->op),
			    (int)(strlen(r->values[0]) > 40 ? 40 : strlen(r->values[0])), r->values[0]);
	return 0;
}

/* Every value must be a valid label value (checked after the set is read, as the API server
 * does once the requirement is complete). */
static int check_values(struct parser *p, const struct selector_req *r, size_t key_at)
{
	for (size_t i = 0; i < r->n_values; i++) {
		const char *why;
		if (selector_valid_value(r->values[i], &why))
			continue;
		/* point at the value's first appearance after the key */
		const char *at = strstr(p->text + key_at, r->values[i]);
		struct token t = {T_IDENT, at ? (size_t)(at - p->text) : key_at, 0};
		return fail(p, &t, "label value '%.*s' %s", (int)(strlen(r->values[i]) > 80 ? 80 : strlen(r->values[i])),
			    r->values[i], why);
	}
	return 0;
}

static int cmp_req(const void *a, const void *b)
{
	const struct selector_req *x = a, *y = b;
	return strcmp(x->key, y->key);
}

int selector_parse(struct selector *out, const char *text, struct buf *err)
{
	memset(out, 0, sizeof *out);
	struct parser p;
	memset(&p, 0, sizeof p);
	p.text = text;
	p.len = strlen(text);
	p.look = lex(p.text, p.len, &p.pos);
	int rc = 0;
	while (!rc && p.look.kind != T_END) {
		XGROW(out->reqs, out->n, out->alloc);
		struct selector_req *r = &out->reqs[out->n++];
		memset(r, 0, sizeof *r);
		size_t key_at = p.look.at;
		rc = parse_requirement(&p, r);
		if (!rc)
			rc = check_values(&p, r, key_at);
		if (rc)
			break;
		struct token t = next(&p);
		if (t.kind == T_END)
			break;
		char found[64];
		describe(&p, &t, found, sizeof found);
		if (t.kind != T_COMMA) {
			rc = fail(&p, &t, "expected ',' or the end after a requirement, found %s", found);
		} else if (p.look.kind == T_END) {
			rc = fail(&p, &p.look, "expected a label key after ',', found the end");
		}
	}
	if (rc) {
		em_err(err, EM_EINPUT, "-l: '%s': %s at %zu", text, p.fail_msg, p.fail_at);
		selector_release(out);
		return EM_EINPUT;
	}
	for (size_t i = 0; i < out->n; i++)
		if (out->reqs[i].n_values > 1)
			qsort(out->reqs[i].values, out->reqs[i].n_values, sizeof *out->reqs[i].values, cmp_str);
	/* key order, as the API server keeps them; equal keys keep their order (insertion sort) */
	for (size_t i = 1; i < out->n; i++)
		for (size_t k = i; k > 0 && cmp_req(&out->reqs[k - 1], &out->reqs[k]) > 0; k--) {
			struct selector_req tmp = out->reqs[k];
			out->reqs[k] = out->reqs[k - 1];
			out->reqs[k - 1] = tmp;
		}
	return 0;
}

static const char *label_of(const struct kv *labels, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (labels[i].key && strcmp(labels[i].key, key) == 0)
			return labels[i].value ? labels[i].value : "";
	return NULL;
}

static int in_set(const struct selector_req *r, const char *v)
{
	return bsearch(&v, r->values, r->n_values, sizeof *r->values, cmp_str) != NULL;
}

static int req_matches(const struct selector_req *r, const struct kv *labels, size_t n)
{
	const char *v = label_of(labels, n, r->key);
	int64_t num;
	switch (r->op) {
	case SEL_EXISTS: return v != NULL;
	case SEL_NOT_EXISTS: return v == NULL;
	case SEL_EQUALS:
	case SEL_DOUBLE_EQUALS:
	case SEL_IN: return v && in_set(r, v);
	case SEL_NOT_EQUALS:
	case SEL_NOT_IN: return !v || !in_set(r, v);
	case SEL_GT: return v && !parse_number(v, &num) && num > r->number;
	case SEL_LT: return v && !parse_number(v, &num) && num < r->number;
	}
	return 0;
}

int selector_matches(const struct selector *s, const struct kv *labels, size_t n_labels)
{
	for (size_t i = 0; i < s->n; i++)
		if (!req_matches(&s->reqs[i], labels, n_labels))
			return 0;
	return 1;
}

void selector_format(struct buf *out, const struct selector *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct selector_req *r = &s->reqs[i];
		if (i)
			buf_addc(out, ',');
		if (r->op == SEL_NOT_EXISTS)
			buf_addc(out, '!');
		buf_adds(out, r->key);
		switch (r->op) {
		case SEL_EXISTS:
		case SEL_NOT_EXISTS: break;
		case SEL_IN:
		case SEL_NOT_IN:
			buf_addf(out, " %s (", op_text(r->op));
			for (size_t k = 0; k < r->n_values; k++)
				buf_addf(out, "%s%s", k ? "," : "", r->values[k]);
			buf_addc(out, ')');
			break;
		default: buf_addf(out, "%s%s", op_text(r->op), r->values[0]); break;
		}
	}
}

void selector_release(struct selector *s)
{
	for (size_t i = 0; i < s->n; i++)
		req_release(&s->reqs[i]);
	free(s->reqs);
	memset(s, 0, sizeof *s);
}
