/*
 * kube_manifest_read.c - Kubernetes manifests (YAML streams, JSON values, files, directories,
 * standard input) read with libyaml into the small structs of kube_manifest.h.
 *
 * Entry points: kube_manifest_read_text, kube_manifest_read_path, kube_manifest_add_source,
 * kube_manifest_truncate, km_object_display_name; kube_manifest_read_cluster is in
 * kube_manifest_live.c and feeds its list pages to kube_manifest_read_text.
 *
 * Invariants: libyaml values never leave this file; documents are loaded through yamlx_load (at
 * most YAMLX_MAX_DEPTH deep) and their !!binary scalars decoded before anything is read; every
 * walk follows fixed paths (no recursion over arbitrary structure but Lists, merge keys at most
 * MERGE_DEPTH deep) and each object node is read at most once (reader.read), so an alias cycle
 * (`&a [*a]`) cannot loop and an aliased object costs nothing more, and the entries merge keys
 * bring in are bounded per document (merge_budget_left); a text either adds all its objects or
 * none (an error truncates back); a directory walk reads regular files only and never through a
 * symlink that leads out of the directory named (what it skips becomes a note); positions are
 * 1-based (libyaml's are 0-based) and shifted by where a JSON value starts when several values
 * are read one by one.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_config.h"
#include "ebsmigrate/kube_manifest.h"
#include "ebsmigrate/strlist.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/yamlx.h"

#define MERGE_DEPTH 8
#define ANN_DEFAULT "storageclass.kubernetes.io/is-default-class"
#define ANN_DEFAULT_BETA "storageclass.beta.kubernetes.io/is-default-class"
#define ANN_BETA_CLASS "volume.beta.kubernetes.io/storage-class"
#define ANN_VOLUME_TYPE "ebs.csi.aws.com/volumeType"
#define ANN_SKIP_PREFIX "skip-check.ebsmigrate.io/"
#define TEMPLATE_HINT                                                                                             \
	"; it holds '{{': an unrendered Helm template? Check what `helm template CHART` prints: helm template "  \
	"CHART | ebsmigrate check -f -"

void kube_manifest_init(struct kube_manifest *m)
{
	memset(m, 0, sizeof *m);
}

static void str_release(struct km_str *s)
{
	free(s->value);
	s->value = NULL;
}

static void params_free(struct km_param *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i].key), free(p[i].value);
	free(p);
}

static void object_release(struct km_object *o)
{
	EM_FREE_ALL(o->kind, o->api_version, o->name, o->namespace_, o->generate_name, o->item_path, o->helm_source);
	str_release(&o->provisioner);
	str_release(&o->is_default);
	params_free(o->params, o->n_params);
	params_free(o->skips, o->n_skips);
	for (size_t i = 0; i < o->n_claims; i++) {
		struct km_claim *c = &o->claims[i];
		free(c->path), free(c->name);
		str_release(&c->storage_class), str_release(&c->beta_class), str_release(&c->vac);
		str_release(&c->volume_type);
	}
	free(o->claims);
	memset(o, 0, sizeof *o);
}

void kube_manifest_truncate(struct kube_manifest *m, size_t n)
{
	while (m->n > n)
		object_release(&m->objs[--m->n]);
}

void kube_manifest_release(struct kube_manifest *m)
{
	kube_manifest_truncate(m, 0);
	free(m->objs);
	for (size_t i = 0; i < m->n_sources; i++)
		free(m->sources[i].name), free(m->sources[i].label);
	free(m->sources);
	strv_free(m->notes, m->n_notes);
	memset(m, 0, sizeof *m);
}

size_t kube_manifest_add_source(struct kube_manifest *m, const char *name, enum km_source_kind kind)
{
	XGROW(m->sources, m->n_sources, m->alloc_sources);
	struct km_source *s = &m->sources[m->n_sources];
	s->name = xstrdup(name);
	s->kind = kind;
	if (kind == KM_SOURCE_CLUSTER) {
		struct buf b = BUF_INIT;
		buf_addf(&b, "context '%s'", name);
		s->label = buf_detach(&b);
	} else {
		s->label = xstrdup(name);
	}
	s->documents = 0;
	return m->n_sources++;
}

char *km_object_display_name(const struct km_object *o)
{
	struct buf b = BUF_INIT;
	if (o->namespace_ && *o->namespace_)
		buf_addf(&b, "%s/", o->namespace_);
	if (o->name)
		buf_adds(&b, o->name);
	else if (o->generate_name)
		buf_addf(&b, "%s*", o->generate_name);
	buf_addc(&b, 0); /* never NULL */
	return buf_detach(&b);
}

/* ------------------------------------------------------------------ the reader */

struct helm_comment {
	size_t line; /* 0-based */
	const char *text;
	size_t len;
};

struct reader {
	struct kube_manifest *m;
	size_t src;
	int live;
	yaml_document_t *doc;
	size_t document;        /* the current document's number in its source */
	size_t line0, col0;     /* where the parsed text starts in the source (0-based) */
	struct helm_comment *helm;
	size_t n_helm, helm_next;
	size_t prev_end_line;   /* where the previous document ended (0-based, in the parsed text) */
	const char *helm_source;
	size_t helm_line;       /* its 1-based line */
	int templated;          /* the text holds "{{": an error says it may be an unrendered template */
	unsigned char *read;    /* per node of the document: read as an object already */
	size_t merged;          /* entries of merged mappings (<<: *anchor) looked at in this document */
	size_t merge_budget;    /* how many it may be: a few times its nodes (merge_budget_left) */
	struct buf *err;
};

/* The object being read, for its messages. */
struct ctx {
	struct reader *r;
	const char *kind;
	char *display;          /* "ns/name" once known */
	const char *item_path;  /* "" or "items[3]" */
};

static struct kube_mark mark_of(const struct reader *r, const yaml_node_t *n)
{
	struct kube_mark k = {0, 0};
	if (r->live || !n)
		return k;
	size_t line = n->start_mark.line, col = n->start_mark.column;
	if (line == 0)
		col += r->col0;
	k.line = line + r->line0 + 1;
	k.column = col + 1;
	return k;
}

static const char *type_name(const yaml_node_t *n);

static int is_identifier(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

char *km_path_key(const char *base, const char *key)
{
	struct buf b = BUF_INIT;
	buf_adds(&b, base);
	if (is_identifier(key)) {
		if (b.len)
			buf_addc(&b, '.');
		buf_adds(&b, key);
	} else {
		buf_adds(&b, "['");
		buf_add_escaping(&b, key, '\'', '\\');
		buf_adds(&b, "']");
	}
	return buf_detach(&b);
}

static char *path_index(const char *base, size_t i)
{
	struct buf b = BUF_INIT;
	buf_addf(&b, "%s[%zu]", base, i);
	return buf_detach(&b);
}

static int fail(struct ctx *c, const yaml_node_t *at, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "SOURCE: document D, line L: KIND 'NAME': ITEM.FIELD: MESSAGE" */
static int fail(struct ctx *c, const yaml_node_t *at, const char *field, const char *fmt, ...)
{
	struct reader *r = c->r;
	struct buf b = BUF_INIT;
	buf_adds(&b, r->m->sources[r->src].label);
	if (!r->live) {
		buf_addf(&b, ": document %zu", r->document);
		struct kube_mark k = mark_of(r, at);
		if (k.line)
			buf_addf(&b, ", line %zu", k.line);
	}
	buf_adds(&b, ": ");
	if (c->kind)
		buf_addf(&b, c->display && *c->display ? "%s '%s': " : "%s: ", c->kind, c->display);
	if (c->item_path[0] || (field && *field)) {
		buf_adds(&b, c->item_path);
		if (c->item_path[0] && field && *field && field[0] != '[')
			buf_addc(&b, '.');
		if (field)
			buf_adds(&b, field);
		buf_adds(&b, ": ");
	}
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (r->templated)
		buf_adds(&b, TEMPLATE_HINT);
	em_err(r->err, EM_EINPUT, "%s", b.s);
	buf_release(&b);
	return EM_EINPUT;
}

static yaml_node_t *node_at(const struct reader *r, int idx)
{
	return idx > 0 ? yaml_document_get_node(r->doc, idx) : NULL;
}

/* A null: a plain empty scalar, ~, null (YAML 1.1/1.2 core), or an explicit !!null tag. */
static int is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE)
		return 0;
	if (n->tag && strcmp((const char *)n->tag, YAML_NULL_TAG) == 0)
		return 1;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *v = (const char *)n->data.scalar.value;
	return !*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
	       strcmp(v, "NULL") == 0;
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int one_of(const char *v, const char *const *words)
{
	for (; *words; words++)
		if (strcmp(v, *words) == 0)
			return 1;
	return 0;
}

/* A plain scalar that YAML resolves to a number: decimal, 0x/0o/0b integers, decimal fractions
 * with an exponent, infinities and NaN (go-yaml's forms; '_' separators allowed). */
static int plain_is_number(const char *v)
{
	static const char *const special[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
					      "-.INF", ".nan", ".NaN", ".NAN", NULL};
	if (one_of(v, special))
		return 1;
	const char *p = v + (*v == '-' || *v == '+');
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o' || p[1] == 'b') && p[2]) {
		const char *digits = p[1] == 'x' ? "0123456789abcdefABCDEF_" : p[1] == 'o' ? "01234567_" : "01_";
		return strspn(p + 2, digits) == strlen(p + 2);
	}
	size_t whole = strspn(p, "0123456789_"), frac = 0;
	p += whole;
	if (*p == '.')
		frac = strspn(++p, "0123456789_"), p += frac;
	if (whole + frac == 0)
		return 0;
	if (*p == 'e' || *p == 'E') {
		p += 1 + (p[1] == '-' || p[1] == '+');
		size_t exp = strspn(p, "0123456789");
		if (!exp)
			return 0;
		p += exp;
	}
	return *p == '\0';
}

/* What a value is, in the words of a JSON document (a Kubernetes object is one): a scalar
 * reads as YAML resolves it, so `5` is a number and `"5"` a string. */
static const char *type_name(const yaml_node_t *n)
{
	static const char *const bools[] = {"true", "True", "TRUE", "false", "False", "FALSE", "yes", "Yes", "YES",
					    "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N", NULL};
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	const char *tag = (const char *)n->tag;
	if (is_null(n))
		return "null";
	if (tag && (strcmp(tag, YAML_INT_TAG) == 0 || strcmp(tag, YAML_FLOAT_TAG) == 0))
		return "a number";
	if (tag && strcmp(tag, YAML_BOOL_TAG) == 0)
		return "a boolean";
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || (tag && strcmp(tag, YAML_STR_TAG) != 0))
		return "a string";
	return one_of(scalar(n), bools) ? "a boolean" : plain_is_number(scalar(n)) ? "a number" : "a string";
}

static int is_merge_key(const yaml_node_t *k)
{
	return k && k->type == YAML_SCALAR_NODE && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       strcmp(scalar(k), "<<") == 0;
}

/* A key that appears twice in map is bad input, as kubectl says ("key already set in map"). */
static int check_duplicates(struct ctx *c, const yaml_node_t *map, const char *field)
{
	struct reader *r = c->r;
	size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	struct strmap seen = STRMAP_INIT;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		yaml_node_t *k = node_at(r, map->data.mapping.pairs.start[i].key);
		if (!k || k->type != YAML_SCALAR_NODE || is_merge_key(k))
			continue;
		size_t first;
		if (n <= 16) {
			for (size_t j = 0; j < i && !rc; j++) {
				yaml_node_t *kj = node_at(r, map->data.mapping.pairs.start[j].key);
				if (kj && kj->type == YAML_SCALAR_NODE && !is_merge_key(kj) && strcmp(scalar(kj), scalar(k)) == 0)
					rc = fail(c, k, field, "key '%s' appears twice (also at line %zu)", scalar(k),
						  mark_of(r, kj).line);
			}
		} else if (strmap_get(&seen, scalar(k), &first)) {
			yaml_node_t *kj = node_at(r, map->data.mapping.pairs.start[first].key);
			rc = fail(c, k, field, "key '%s' appears twice (also at line %zu)", scalar(k), mark_of(r, kj).line);
		} else {
			strmap_put(&seen, scalar(k), i);
		}
	}
	strmap_release(&seen);
	return rc;
}

/* Is k the key key? Its whole text: a key decoded from !!binary may hold a NUL byte. */
static int key_is(const yaml_node_t *k, const char *key)
{
	size_t n = strlen(key);
	return k->data.scalar.length == n && memcmp(scalar(k), key, n) == 0;
}

/* The value of key in map (a null too), NULL when absent. Keys written in map win over the
 * ones a merge key (`<<: *base`, or a list of them) brings in. */
static yaml_node_t *map_value_depth(struct reader *r, const yaml_node_t *map, const char *key, int depth)
{
	if (!map || map->type != YAML_MAPPING_NODE || depth > MERGE_DEPTH)
		return NULL;
	if (depth)
		r->merged += (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	yaml_node_t *merged = NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(r, p->key);
		if (!k || k->type != YAML_SCALAR_NODE)
			continue;
		if (is_merge_key(k)) {
			merged = node_at(r, p->value);
			continue;
		}
		if (key_is(k, key))
			return node_at(r, p->value);
	}
	if (!merged)
		return NULL;
	if (merged->type == YAML_MAPPING_NODE)
		return map_value_depth(r, merged, key, depth + 1);
	if (merged->type == YAML_SEQUENCE_NODE)
		for (yaml_node_item_t *it = merged->data.sequence.items.start; it < merged->data.sequence.items.top; it++) {
			yaml_node_t *v = map_value_depth(r, node_at(r, *it), key, depth + 1);
			if (v)
				return v;
		}
	return NULL;
}

/* The value of key in map, NULL when absent or null. */
static yaml_node_t *map_get(struct reader *r, const yaml_node_t *map, const char *key)
{
	yaml_node_t *v = map_value_depth(r, map, key, 0);
	return v && !is_null(v) ? v : NULL;
}

/* "!!int" for YAML's own tags, the tag itself for any other. */
static void add_tag(struct buf *b, const char *tag)
{
	static const char yaml_prefix[] = "tag:yaml.org,2002:";
	if (strncmp(tag, yaml_prefix, sizeof yaml_prefix - 1) == 0)
		buf_addf(b, "!!%s", tag + sizeof yaml_prefix - 1);
	else
		buf_adds(b, tag);
}

/* A value the gate reads must read as Kubernetes reads it: the loader gives an untagged value
 * its kind's own tag (!!str, !!map, !!seq) and !!binary was decoded into !!str when the
 * document was loaded; any other tag (!!int, !!null, !custom, ...) Kubernetes resolves its own
 * way (a number where a string belongs, or the text the gate would not have seen), so it is
 * refused rather than guessed. A scalar holding a NUL byte (decoded, or JSON's \u0000) is
 * refused too: the gate's strings end at the first. */
static int check_readable(struct ctx *c, const yaml_node_t *n, const char *path)
{
	const char *own = n->type == YAML_SCALAR_NODE ? YAML_STR_TAG : n->type == YAML_SEQUENCE_NODE ? YAML_SEQ_TAG : YAML_MAP_TAG;
	const char *tag = (const char *)n->tag;
	if (tag && strcmp(tag, own) != 0) {
		struct buf t = BUF_INIT;
		add_tag(&t, tag);
		int rc = fail(c, n, path,
			      "YAML tag '%s' refused: the gate reads untagged values and !!binary (decoded, as Kubernetes "
			      "does) only",
			      t.s);
		buf_release(&t);
		return rc;
	}
	if (n->type == YAML_SCALAR_NODE && memchr(scalar(n), '\0', n->data.scalar.length))
		return fail(c, n, path, "a value that holds a NUL byte");
	return 0;
}

/* The value of key in parent that the gate reads: NULL when absent or null; EM_EINPUT when its
 * tag is not one Kubernetes reads as the gate does. */
static int get_field(struct ctx *c, const yaml_node_t *parent, const char *key, const char *path, yaml_node_t **out)
{
	yaml_node_t *v = map_value_depth(c->r, parent, key, 0);
	*out = NULL;
	if (!v)
		return 0;
	int rc = check_readable(c, v, path);
	if (!rc && !is_null(v))
		*out = v;
	return rc;
}

/* A mapping field: *out NULL when absent or null; EM_EINPUT when something else. Checked for
 * duplicate keys. path is the field's JSON path (for messages). */
static int get_map(struct ctx *c, const yaml_node_t *parent, const char *key, const char *path, yaml_node_t **out)
{
	int rc = get_field(c, parent, key, path, out);
	if (rc || !*out)
		return rc;
	if ((*out)->type != YAML_MAPPING_NODE)
		return fail(c, *out, path, "expected a mapping, got %s", type_name(*out));
	return check_duplicates(c, *out, path);
}

static int get_seq(struct ctx *c, const yaml_node_t *parent, const char *key, const char *path, yaml_node_t **out)
{
	int rc = get_field(c, parent, key, path, out);
	if (!rc && *out && (*out)->type != YAML_SEQUENCE_NODE)
		return fail(c, *out, path, "expected a list, got %s", type_name(*out));
	return rc;
}

/* A string field into out (value NULL when absent; position of the value, or of parent). */
static int get_str(struct ctx *c, const yaml_node_t *parent, const char *key, const char *path, struct km_str *out)
{
	yaml_node_t *v;
	int rc = get_field(c, parent, key, path, &v);
	out->value = NULL;
	out->at = mark_of(c->r, v ? v : parent);
	if (rc || !v)
		return rc;
	if (v->type != YAML_SCALAR_NODE)
		return fail(c, v, path, "expected a string, got %s", type_name(v));
	out->value = xstrndup(scalar(v), v->data.scalar.length);
	return 0;
}

typedef int (*entry_fn)(struct ctx *c, void *st, const char *key, const yaml_node_t *value_node, const char *value,
			const char *path);

static int entries_in(struct ctx *c, const yaml_node_t *map, const char *path, entry_fn fn, void *st,
		      struct strmap *seen, int depth)
{
	struct reader *r = c->r;
	if (depth)
		r->merged += (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	/* the keys written here first, then those merge keys bring in that are not written here */
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(r, p->key), *v = node_at(r, p->value);
		if (!k || !v || is_merge_key(k))
			continue;
		if (k->type != YAML_SCALAR_NODE)
			return fail(c, k, path, "a key that is %s, not a string", type_name(k));
		int rc = check_readable(c, k, path);
		if (rc)
			return rc;
		size_t dummy;
		if (strmap_get(seen, scalar(k), &dummy))
			continue;
		strmap_put(seen, scalar(k), 0);
		char *kp = km_path_key(path, scalar(k));
		rc = check_readable(c, v, kp);
		if (!rc)
			rc = v->type != YAML_SCALAR_NODE ? fail(c, v, kp, "expected a string, got %s", type_name(v))
							 : fn(c, st, scalar(k), v, is_null(v) ? "" : scalar(v), kp);
		free(kp);
		if (rc)
			return rc;
	}
	if (depth >= MERGE_DEPTH)
		return 0;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(r, p->key), *v = node_at(r, p->value);
		if (!v || !is_merge_key(k))
			continue;
		if (v->type == YAML_MAPPING_NODE) {
			int rc = entries_in(c, v, path, fn, st, seen, depth + 1);
			if (rc)
				return rc;
		} else if (v->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
				yaml_node_t *mm = node_at(r, *it);
				int rc = mm && mm->type == YAML_MAPPING_NODE ? entries_in(c, mm, path, fn, st, seen, depth + 1) : 0;
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

/* Calls fn for each entry of a string-to-string mapping (labels, annotations, parameters),
 * merge keys followed; value "" for a null. Keys must be strings, values scalars. */
static int each_entry(struct ctx *c, const yaml_node_t *map, const char *path, entry_fn fn, void *st)
{
	int rc = check_duplicates(c, map, path);
	if (rc)
		return rc;
	struct strmap seen = STRMAP_INIT;
	rc = entries_in(c, map, path, fn, st, &seen, 0);
	strmap_release(&seen);
	return rc;
}

static void set_str(struct reader *r, struct km_str *s, const yaml_node_t *n, const char *value)
{
	free(s->value);
	s->value = xstrdup(value);
	s->at = mark_of(r, n);
}

static void add_param(struct reader *r, struct km_param **v, size_t *n, const char *key, const char *value,
		      const yaml_node_t *at)
{
	/* the capacity is the next power of two (at least 4): growing one by one copied a large
	 * parameters mapping over and over */
	if (*n == 0 || (*n >= 4 && (*n & (*n - 1)) == 0))
		*v = xrealloc(*v, (*n ? 2 * *n : 4) * sizeof **v);
	(*v)[*n].key = xstrdup(key);
	(*v)[*n].value = xstrdup(value);
	(*v)[*n].at = mark_of(r, at);
	(*n)++;
}

/* An object's own annotations: the default-class keys and the skip-check ones. */
static void object_annotation(struct reader *r, struct km_object *o, const char *key, const yaml_node_t *vn,
			      const char *value)
{
	if (strcmp(key, ANN_DEFAULT) == 0) {
		/* either key "true" makes a default (the GA one is reported when both are set) */
		if (!o->is_default.value || strcmp(value, "true") == 0 || strcmp(o->is_default.value, "true") != 0) {
			set_str(r, &o->is_default, vn, value);
			o->default_key = ANN_DEFAULT;
		}
	} else if (strcmp(key, ANN_DEFAULT_BETA) == 0) {
		if (!o->is_default.value || (strcmp(value, "true") == 0 && strcmp(o->is_default.value, "true") != 0)) {
			set_str(r, &o->is_default, vn, value);
			o->default_key = ANN_DEFAULT_BETA;
		}
	} else if (strncmp(key, ANN_SKIP_PREFIX, strlen(ANN_SKIP_PREFIX)) == 0) {
		add_param(r, &o->skips, &o->n_skips, key + strlen(ANN_SKIP_PREFIX), value, vn);
	}
}

/* The annotations of an object's metadata or of a volumeClaimTemplate's: one reader for both,
 * as a claim's keys mean the same in a PVC and in a template. */
struct annotations {
	struct km_object *o;                     /* the object's own keys; NULL for a template */
	struct km_str *beta_class, *volume_type; /* a claim's (a PVC's own, a template's), else NULL */
};

static int read_annotation(struct ctx *c, void *st, const char *key, const yaml_node_t *vn, const char *value,
			   const char *path)
{
	(void)path;
	struct annotations *a = st;
	if (a->beta_class && strcmp(key, ANN_BETA_CLASS) == 0)
		set_str(c->r, a->beta_class, vn, value);
	else if (a->volume_type && strcmp(key, ANN_VOLUME_TYPE) == 0)
		set_str(c->r, a->volume_type, vn, value);
	else if (a->o)
		object_annotation(c->r, a->o, key, vn, value);
	return 0;
}

/* A StorageClass's or VAC's parameters: st is the object. */
static int param_entry(struct ctx *c, void *st, const char *key, const yaml_node_t *vn, const char *value,
		       const char *path)
{
	(void)path;
	struct km_object *o = st;
	add_param(c->r, &o->params, &o->n_params, key, value, vn);
	return 0;
}

static struct km_claim *add_claim(struct km_object *o, const char *path, const struct kube_mark at)
{
	o->claims = xrealloc(o->claims, (o->n_claims + 1) * sizeof *o->claims);
	struct km_claim *cl = &o->claims[o->n_claims++];
	memset(cl, 0, sizeof *cl);
	cl->path = xstrdup(path);
	cl->at = cl->spec_at = at;
	cl->storage_class.at = cl->beta_class.at = cl->vac.at = cl->volume_type.at = at;
	return cl;
}

/* The claim spec of node (a PVC or a volumeClaimTemplate) at path: its spec's class and VAC, and
 * (templates only: a PVC's are read with its object) its metadata's name and annotations. */
static int read_claim(struct ctx *c, struct km_object *o, const yaml_node_t *node, const char *path, int is_template)
{
	struct reader *r = c->r;
	int rc = check_duplicates(c, node, path);
	if (rc)
		return rc;
	struct km_claim *cl = add_claim(o, path, mark_of(r, node));
	char *p_meta = km_path_key(path, "metadata"), *p_spec = km_path_key(path, "spec");
	yaml_node_t *meta = NULL, *spec = NULL;
	if (is_template && !(rc = get_map(c, node, "metadata", p_meta, &meta)) && meta) {
		char *p_name = km_path_key(p_meta, "name"), *p_ann = km_path_key(p_meta, "annotations");
		struct km_str name = {NULL, {0, 0}};
		yaml_node_t *ann = NULL;
		rc = get_str(c, meta, "name", p_name, &name);
		cl->name = name.value;
		if (!rc)
			rc = get_map(c, meta, "annotations", p_ann, &ann);
		if (!rc && ann) {
			struct annotations st = {NULL, &cl->beta_class, &cl->volume_type};
			rc = each_entry(c, ann, p_ann, read_annotation, &st);
		}
		free(p_name), free(p_ann);
	}
	if (!rc)
		rc = get_map(c, node, "spec", p_spec, &spec);
	if (!rc && spec) {
		cl->spec_at = mark_of(r, spec);
		char *p_class = km_path_key(p_spec, "storageClassName"), *p_vac = km_path_key(p_spec, "volumeAttributesClassName");
		rc = get_str(c, spec, "storageClassName", p_class, &cl->storage_class);
		if (!rc)
			rc = get_str(c, spec, "volumeAttributesClassName", p_vac, &cl->vac);
		free(p_class), free(p_vac);
	}
	if (!spec)
		cl->storage_class.at = cl->vac.at = cl->spec_at;
	free(p_meta), free(p_spec);
	return rc;
}

/* The generic ephemeral volumes of a pod spec at path (spec.volumes[i].ephemeral.volumeClaimTemplate). */
static int read_pod_volumes(struct ctx *c, struct km_object *o, const yaml_node_t *pod_spec, const char *path)
{
	struct reader *r = c->r;
	char *p_vols = km_path_key(path, "volumes");
	yaml_node_t *vols = NULL;
	int rc = get_seq(c, pod_spec, "volumes", p_vols, &vols);
	size_t i = 0;
	for (yaml_node_item_t *it = vols ? vols->data.sequence.items.start : NULL; !rc && vols && it < vols->data.sequence.items.top;
	     it++, i++) {
		yaml_node_t *v = node_at(r, *it);
		char *p_v = path_index(p_vols, i);
		if (v && v->type != YAML_MAPPING_NODE && !is_null(v))
			rc = fail(c, v, p_v, "expected a mapping, got %s", type_name(v));
		yaml_node_t *eph = NULL, *tpl = NULL;
		char *p_eph = km_path_key(p_v, "ephemeral"), *p_tpl = km_path_key(p_eph, "volumeClaimTemplate");
		if (!rc && v && v->type == YAML_MAPPING_NODE && !(rc = check_duplicates(c, v, p_v)) &&
		    !(rc = get_map(c, v, "ephemeral", p_eph, &eph)) && eph)
			rc = get_map(c, eph, "volumeClaimTemplate", p_tpl, &tpl);
		if (!rc && tpl) {
			size_t before = o->n_claims;
			rc = read_claim(c, o, tpl, p_tpl, 1);
			if (!rc && o->n_claims > before) {
				struct km_str name = {NULL, {0, 0}};
				char *p_name = km_path_key(p_v, "name");
				rc = get_str(c, v, "name", p_name, &name);
				free(p_name);
				struct km_claim *cl = &o->claims[o->n_claims - 1];
				if (name.value) {
					free(cl->name);
					cl->name = name.value;
				}
			}
		}
		free(p_v), free(p_eph), free(p_tpl);
	}
	free(p_vols);
	return rc;
}

/* The mapping at a dotted path of mappings under node ("spec.template.spec"), NULL when a step is
 * absent; EM_EINPUT when a step is not a mapping. */
static int walk(struct ctx *c, const yaml_node_t *node, const char *dotted, yaml_node_t **out)
{
	*out = (yaml_node_t *)node;
	struct strlist steps = STRLIST_INIT_DUP;
	strlist_split(&steps, dotted, '.');
	struct buf path = BUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < steps.n && *out && !rc; i++) {
		if (path.len)
			buf_addc(&path, '.');
		buf_adds(&path, steps.items[i]);
		rc = get_map(c, *out, steps.items[i], path.s, out);
	}
	buf_release(&path);
	strlist_release(&steps);
	if (rc)
		*out = NULL;
	return rc;
}

enum shape { SHAPE_SC, SHAPE_VAC, SHAPE_PVC, SHAPE_STS, SHAPE_POD };

static const struct kind_entry {
	const char *kind;
	const char *groups; /* the API groups it lives in, ','-separated ("" = core) */
	enum shape shape;
	const char *pod_spec; /* where the pod spec is */
} kinds[] = {
	{"StorageClass", "storage.k8s.io", SHAPE_SC, NULL},
	{"VolumeAttributesClass", "storage.k8s.io", SHAPE_VAC, NULL},
	{"PersistentVolumeClaim", "", SHAPE_PVC, NULL},
	{"StatefulSet", "apps", SHAPE_STS, "spec.template.spec"},
	{"Pod", "", SHAPE_POD, "spec"},
	{"PodTemplate", "", SHAPE_POD, "template.spec"},
	{"ReplicationController", "", SHAPE_POD, "spec.template.spec"},
	{"Deployment", "apps,extensions", SHAPE_POD, "spec.template.spec"},
	{"ReplicaSet", "apps,extensions", SHAPE_POD, "spec.template.spec"},
	{"DaemonSet", "apps,extensions", SHAPE_POD, "spec.template.spec"},
	{"Job", "batch", SHAPE_POD, "spec.template.spec"},
	{"CronJob", "batch", SHAPE_POD, "spec.jobTemplate.spec.template.spec"},
};

/* Is the group of api_version ("apps/v1" -> "apps", "v1" -> "") one of groups? */
static int group_matches(const char *api_version, const char *groups)
{
	const char *slash = strchr(api_version, '/');
	size_t glen = slash ? (size_t)(slash - api_version) : 0;
	const char *p = groups;
	for (;;) {
		size_t n = strcspn(p, ",");
		if (n == glen && strncmp(p, api_version, n) == 0)
			return 1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static int read_object(struct reader *r, const yaml_node_t *node, const char *item_path, int depth, const char *def_kind,
		       const char *def_api);

/* Merge keys share a mapping among objects, and each object that merges it reads it again: fine
 * for a few defaults, an alias bomb when thousands of objects merge a large one (a 370 KB file
 * took 35 s and 2.8 GB). The entries looked at through merges may be a few times the
 * document's nodes; past that the document is refused. */
static int merge_budget_left(struct ctx *c, const yaml_node_t *at)
{
	if (c->r->merged <= c->r->merge_budget)
		return 0;
	return fail(c, at, NULL,
		    "merge keys (<<: *anchor) bring in more than %zu entries, several times what the document holds: "
		    "an alias bomb? Write the merged values out",
		    c->r->merge_budget);
}

/* A List's items: kubectl reads any object with `items` as a List and flattens Lists inside
 * Lists (cli-runtime's FlattenListVisitor), so items are objects at any depth. The API server's
 * lists (StorageClassList, ...) leave kind and apiVersion out of their items: an item without
 * both is of the list's kind without "List" (kubectl's rule; a plain `List` gives none). */
static int read_list_items(struct ctx *c, const yaml_node_t *node, const char *item_path, int depth, const char *list_kind,
			   const char *list_api)
{
	size_t kl = strlen(list_kind);
	char *item_kind = xstrndup(list_kind, kl >= 4 && strcmp(list_kind + kl - 4, "List") == 0 ? kl - 4 : kl);
	struct reader *r = c->r;
	char *p_items = km_path_key(item_path, "items");
	yaml_node_t *items = NULL;
	struct ctx list_ctx = {r, NULL, NULL, ""};
	int rc = get_seq(&list_ctx, node, "items", p_items, &items);
	size_t i = 0;
	for (yaml_node_item_t *it = items ? items->data.sequence.items.start : NULL;
	     !rc && items && it < items->data.sequence.items.top; it++, i++) {
		yaml_node_t *item = node_at(r, *it);
		char *p_item = path_index(p_items, i);
		if (!item || item->type != YAML_MAPPING_NODE)
			rc = fail(&list_ctx, item, p_item, "must be an object, got %s", item ? type_name(item) : "nothing");
		else if (!(rc = read_object(r, item, p_item, depth + 1, *item_kind ? item_kind : NULL, list_api)))
			rc = merge_budget_left(&list_ctx, item);
		free(p_item);
	}
	free(p_items);
	free(item_kind);
	return rc;
}

/* apiVersion as Kubernetes parses it: VERSION (the core group) or GROUP/VERSION, GROUP a DNS
 * subdomain and VERSION a DNS label (v1, v1beta1). */
static int api_version_ok(const char *av)
{
	static const char lower_alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	const char *slash = strchr(av, '/');
	const char *version = slash ? slash + 1 : av;
	size_t vn = strlen(version);
	if (!vn || vn > 63 || strspn(version, "abcdefghijklmnopqrstuvwxyz0123456789-") != vn || version[0] == '-' ||
	    version[vn - 1] == '-')
		return 0;
	if (!slash)
		return 1;
	size_t gn = (size_t)(slash - av);
	return gn && gn <= 253 && strspn(av, "abcdefghijklmnopqrstuvwxyz0123456789-.") == gn &&
	       strchr(lower_alnum, av[0]) && strchr(lower_alnum, av[gn - 1]);
}

/* A group of Kubernetes itself (core, apps, batch, storage.k8s.io, ...), where a kind the gate
 * reads can only be the one it knows; other groups are custom resources (batch.volcano.sh Job). */
static int builtin_group(const char *api_version)
{
	const char *slash = strchr(api_version, '/');
	if (!slash)
		return 1;
	size_t n = (size_t)(slash - api_version);
	static const char k8s[] = ".k8s.io";
	return !memchr(api_version, '.', n) || (n > sizeof k8s - 1 && memcmp(slash - (sizeof k8s - 1), k8s, sizeof k8s - 1) == 0);
}

static int read_metadata(struct ctx *c, struct km_object *o, const yaml_node_t *node, struct km_claim *own_claim)
{
	yaml_node_t *meta = NULL, *ann = NULL;
	int rc = get_map(c, node, "metadata", "metadata", &meta);
	struct km_str name = {NULL, {0, 0}}, gen = {NULL, {0, 0}}, ns = {NULL, {0, 0}};
	if (!rc && meta && !(rc = get_str(c, meta, "name", "metadata.name", &name)) &&
	    !(rc = get_str(c, meta, "generateName", "metadata.generateName", &gen)))
		rc = get_str(c, meta, "namespace", "metadata.namespace", &ns);
	o->name = name.value;
	o->generate_name = gen.value;
	o->namespace_ = ns.value;
	free(c->display);
	c->display = km_object_display_name(o);
	if (!rc && meta)
		rc = get_map(c, meta, "annotations", "metadata.annotations", &ann);
	if (!rc && ann) {
		struct annotations st = {o, own_claim ? &own_claim->beta_class : NULL,
					 own_claim ? &own_claim->volume_type : NULL};
		rc = each_entry(c, ann, "metadata.annotations", read_annotation, &st);
	}
	return rc;
}

/* "apiVersion: 'v1' is not an API version StorageClass is served in (storage.k8s.io/VERSION)" */
static int wrong_api_version(struct ctx *c, const yaml_node_t *node, const char *api_version, const struct kind_entry *ke)
{
	struct buf where = BUF_INIT;
	struct strlist groups = STRLIST_INIT_DUP;
	strlist_split(&groups, ke->groups, ',');
	for (size_t i = 0; i < groups.n; i++)
		buf_addf(&where, "%s%s%s", i ? " or " : "", groups.items[i], *groups.items[i] ? "/VERSION" : "v1");
	int rc = fail(c, node, "apiVersion", "'%s' is not an API version %s is served in (%s)", api_version, ke->kind,
		      where.s);
	strlist_release(&groups);
	buf_release(&where);
	return rc;
}

static int read_object(struct reader *r, const yaml_node_t *node, const char *item_path, int depth, const char *def_kind,
		       const char *def_api)
{
	struct ctx c = {r, NULL, NULL, item_path};
	size_t index = (size_t)(node - r->doc->nodes.start);
	if (r->read[index])
		return 0; /* an alias of an object already read (judged once: an alias bomb costs nothing) */
	r->read[index] = 1;
	int rc = check_duplicates(&c, node, "");
	struct km_str kind = {NULL, {0, 0}}, api = {NULL, {0, 0}};
	if (!rc)
		rc = get_str(&c, node, "kind", "kind", &kind);
	if (!rc)
		rc = get_str(&c, node, "apiVersion", "apiVersion", &api);
	if (!rc && (!kind.value || !*kind.value) && !api.value && def_kind) {
		free(kind.value);
		kind.value = xstrdup(def_kind);
		api.value = def_api ? xstrdup(def_api) : NULL;
	}
	c.kind = kind.value && *kind.value ? kind.value : NULL;
	if (!rc && depth > 0 && !c.kind) /* kubectl: "Object 'Kind' is missing" */
		rc = fail(&c, node, "", "an object without kind");
	else if (!rc && c.kind && !api.value && (depth > 0 || map_get(r, node, "metadata")))
		/* a document with kind and metadata is an object missing its apiVersion (kubectl refuses
		 * it), not a values file that happens to have a `kind:` key */
		rc = fail(&c, node, "apiVersion", "missing (a Kubernetes object needs both kind and apiVersion)");
	if (rc || !c.kind || !api.value) {
		if (!rc)
			r->m->not_objects++;
		free(kind.value), free(api.value);
		return rc;
	}
	if (map_get(r, node, "items")) {
		rc = read_list_items(&c, node, item_path, depth, kind.value, api.value);
		free(kind.value), free(api.value);
		return rc;
	}
	const struct kind_entry *ke = NULL;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && !ke; i++)
		if (strcmp(kind.value, kinds[i].kind) == 0 && group_matches(api.value, kinds[i].groups))
			ke = &kinds[i];
	if (!ke) {
		for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && !rc; i++)
			if (strcmp(kind.value, kinds[i].kind) == 0 && (!api_version_ok(api.value) || builtin_group(api.value)))
				/* a kind the gate reads, in no group kubectl could apply it to: refused rather than
				 * passed as some other object (a mangled apiVersion was how a gp2 class got by) */
				rc = wrong_api_version(&c, map_get(r, node, "apiVersion"), api.value, &kinds[i]);
		if (!rc)
			r->m->other_objects++;
		free(kind.value), free(api.value);
		return rc;
	}
	struct km_object o;
	memset(&o, 0, sizeof o);
	o.kind = kind.value;
	o.api_version = api.value;
	o.source = r->src;
	o.document = r->live ? 0 : r->document;
	o.item_path = xstrdup(r->live ? "" : item_path); /* a list page's index says nothing about the object */
	o.helm_source = xstrdup(r->helm_source);
	o.helm_line = r->helm_source ? r->helm_line : 0;
	o.at = mark_of(r, node);
	o.provisioner.at = o.is_default.at = o.at;
	o.what = ke->shape == SHAPE_SC ? KM_STORAGE_CLASS : ke->shape == SHAPE_VAC ? KM_VOLUME_ATTRIBUTES_CLASS : KM_CLAIMS;
	c.kind = o.kind;
	struct km_claim *own = ke->shape == SHAPE_PVC ? add_claim(&o, "", o.at) : NULL;
	rc = read_metadata(&c, &o, node, own);
	if (!rc && own) {
		own = &o.claims[0];
		own->name = xstrdup(o.name ? o.name : o.generate_name);
		/* the PVC's own annotations were read above; its spec now */
		yaml_node_t *spec = NULL;
		rc = get_map(&c, node, "spec", "spec", &spec);
		if (!rc && spec) {
			own->spec_at = own->storage_class.at = own->vac.at = mark_of(r, spec);
			rc = get_str(&c, spec, "storageClassName", "spec.storageClassName", &own->storage_class);
			if (!rc)
				rc = get_str(&c, spec, "volumeAttributesClassName", "spec.volumeAttributesClassName", &own->vac);
		}
	}
	if (!rc && (ke->shape == SHAPE_SC || ke->shape == SHAPE_VAC)) {
		const char *field = ke->shape == SHAPE_SC ? "provisioner" : "driverName";
		yaml_node_t *params = NULL;
		rc = get_str(&c, node, field, field, &o.provisioner);
		if (!rc)
			rc = get_map(&c, node, "parameters", "parameters", &params);
		if (!rc && params) {
			rc = each_entry(&c, params, "parameters", param_entry, &o);
		}
	}
	if (!rc && ke->shape == SHAPE_STS) {
		yaml_node_t *spec = NULL, *tpls = NULL;
		rc = get_map(&c, node, "spec", "spec", &spec);
		if (!rc && spec)
			rc = get_seq(&c, spec, "volumeClaimTemplates", "spec.volumeClaimTemplates", &tpls);
		size_t i = 0;
		for (yaml_node_item_t *it = tpls ? tpls->data.sequence.items.start : NULL;
		     !rc && tpls && it < tpls->data.sequence.items.top; it++, i++) {
			yaml_node_t *t = node_at(r, *it);
			char *p_t = path_index("spec.volumeClaimTemplates", i);
			if (!t || t->type != YAML_MAPPING_NODE)
				rc = fail(&c, t, p_t, "expected a mapping, got %s", t ? type_name(t) : "nothing");
			else
				rc = read_claim(&c, &o, t, p_t, 1);
			free(p_t);
		}
	}
	if (!rc && ke->pod_spec) {
		yaml_node_t *pod_spec = NULL;
		rc = walk(&c, node, ke->pod_spec, &pod_spec);
		if (!rc && pod_spec)
			rc = read_pod_volumes(&c, &o, pod_spec, ke->pod_spec);
	}
	free(c.display);
	if (rc) {
		object_release(&o);
		return rc;
	}
	if (o.what == KM_CLAIMS && o.n_claims == 0) {
		r->m->other_objects++;
		object_release(&o);
		return 0;
	}
	XGROW(r->m->objs, r->m->n, r->m->alloc);
	r->m->objs[r->m->n++] = o;
	return 0;
}

/* The last `# Source: ` comment between the previous document's end and this document's root.
 * Documents come in order, so a cursor walks the comments once for the whole stream. */
static const char *helm_source_of(struct reader *r, const yaml_node_t *root, char **owned)
{
	*owned = NULL;
	const struct helm_comment *pick = NULL;
	for (; r->helm_next < r->n_helm && r->helm[r->helm_next].line < root->start_mark.line; r->helm_next++)
		if (r->helm[r->helm_next].line >= r->prev_end_line)
			pick = &r->helm[r->helm_next];
	if (!pick)
		return NULL;
	*owned = xstrndup(pick->text, pick->len);
	r->helm_line = pick->line + r->line0 + 1;
	return *owned;
}

/* Helm's comments: lines that start with "# Source: " (0-based line numbers, in order). */
static void scan_helm_comments(struct reader *r, const char *text, size_t len)
{
	static const char tag[] = "# Source: ";
	size_t line = 0;
	for (size_t i = 0; i < len; line++) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		if (end - i > sizeof tag - 1 && memcmp(text + i, tag, sizeof tag - 1) == 0) {
			size_t s = i + sizeof tag - 1, e = end;
			while (e > s && (text[e - 1] == '\r' || text[e - 1] == ' ' || text[e - 1] == '\t'))
				e--;
			if (e > s) {
				r->helm = xrealloc(r->helm, (r->n_helm + 1) * sizeof *r->helm);
				r->helm[r->n_helm++] = (struct helm_comment){line, text + s, e - s};
			}
		}
		i = end + 1;
	}
}

static int looks_like_template(const char *text, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (text[i] == '{' && text[i + 1] == '{')
			return 1;
	return 0;
}

/* Kubernetes' YAML decoder reads a !!binary scalar as the string its base64 decodes to (FACTS
 * 10), wherever it is (a key too): so does the gate, before any field is read. Decoded in place
 * (the text is never shorter than what it decodes to) and tagged !!str; a value that is not
 * base64 fails the document, as it fails kubectl's. */
static int decode_binary(struct reader *r)
{
	static const char binary_tag[] = "tag:yaml.org,2002:binary", str_tag[] = YAML_STR_TAG;
	struct ctx c = {r, NULL, NULL, ""};
	struct buf out = BUF_INIT;
	int rc = 0;
	for (yaml_node_t *n = r->doc->nodes.start; n < r->doc->nodes.top && !rc; n++) {
		if (n->type != YAML_SCALAR_NODE || !n->tag || strcmp((const char *)n->tag, binary_tag) != 0)
			continue;
		buf_reset(&out);
		if (kube_base64_decode(&out, scalar(n), n->data.scalar.length) != 0) {
			rc = fail(&c, n, NULL, "a !!binary value that is not valid base64");
			break;
		}
		memcpy(n->data.scalar.value, out.s ? out.s : "", out.len);
		n->data.scalar.value[out.len] = '\0';
		n->data.scalar.length = out.len;
		_Static_assert(sizeof str_tag <= sizeof binary_tag, "the tag is rewritten in place");
		memcpy(n->tag, str_tag, sizeof str_tag);
		n->data.scalar.style = YAML_DOUBLE_QUOTED_SCALAR_STYLE; /* a string, even "" or "true" */
	}
	buf_release(&out);
	return rc;
}

/* Does line (0-based) of text start with whitespace that holds a tab? YAML forbids tabs in
 * indentation, and libyaml's words for it ("found character that cannot start any token")
 * do not say so. */
static int tab_indented(const char *text, size_t len, size_t line)
{
	size_t i = 0;
	for (size_t l = 0; l < line && i < len; i++)
		if (text[i] == '\n')
			l++;
	for (; i < len && (text[i] == ' ' || text[i] == '\t'); i++)
		if (text[i] == '\t')
			return 1;
	return 0;
}

/* The message for a document yamlx_load refused: "SOURCE: not valid YAML at line L, column C:
 * WHY (CONTEXT that starts at line N)", with the cause first where libyaml's words hide it (a
 * tab in the indentation), or "SOURCE: YAML nested more than 1000 levels deep at ...". */
static int load_error(struct reader *r, const yaml_parser_t *p, const char *text, size_t len, int json)
{
	struct kube_mark at = {p->problem_mark.line + r->line0 + 1,
			       p->problem_mark.column + (p->problem_mark.line == 0 ? r->col0 : 0) + 1};
	const char *lang = json ? "JSON" : "YAML";
	int deep = yamlx_too_deep(p), tab = !deep && !json && tab_indented(text, len, p->problem_mark.line);
	struct buf msg = BUF_INIT;
	if (deep)
		buf_addf(&msg, "%s: %s %s", r->m->sources[r->src].label, lang, p->problem);
	else
		buf_addf(&msg, "%s: not valid %s", r->m->sources[r->src].label, lang);
	if (!r->live)
		buf_addf(&msg, " at line %zu, column %zu", at.line, at.column);
	if (!deep) {
		const char *why = p->error == YAML_MEMORY_ERROR ? "out of memory" : p->problem ? p->problem : "parse error";
		if (tab)
			buf_addf(&msg, ": a tab indents the line, and YAML indents with spaces only (libyaml: %s", why);
		else
			buf_addf(&msg, ": %s", why);
		if (p->context && !r->live)
			buf_addf(&msg, "%s%s that starts at line %zu%s", tab ? ", " : " (", p->context,
				 p->context_mark.line + r->line0 + 1, tab ? "" : ")");
		if (tab)
			buf_addc(&msg, ')');
	}
	if (r->templated)
		buf_adds(&msg, TEMPLATE_HINT);
	int rc = em_err(r->err, EM_EINPUT, "%s", msg.s);
	buf_release(&msg);
	return rc;
}

/* Parses one YAML stream (or one JSON value) of text, starting at (line0, col0) of its source. */
static int parse_stream(struct reader *r, const char *text, size_t len, int json)
{
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return em_err(r->err, EM_EINPUT, "%s: cannot initialise the YAML parser", r->m->sources[r->src].label);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	r->prev_end_line = 0;
	int rc = 0;
	for (;;) {
		yaml_document_t doc;
		if (yamlx_load(&p, &doc)) {
			rc = load_error(r, &p, text, len, json);
			break;
		}
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		if (!root) {
			yaml_document_delete(&doc);
			break;
		}
		if (!r->live) {
			r->document++;
			r->m->sources[r->src].documents++;
			r->m->documents++;
		}
		char *owned = NULL;
		r->helm_source = json ? NULL : helm_source_of(r, root, &owned);
		r->doc = &doc;
		size_t nodes = (size_t)(doc.nodes.top - doc.nodes.start);
		r->read = xcalloc(nodes, 1);
		r->merged = 0;
		r->merge_budget = 4 * nodes + 16384;
		rc = decode_binary(r);
		if (!rc && root->type == YAML_MAPPING_NODE) {
			struct ctx c = {r, NULL, NULL, ""};
			if (!(rc = read_object(r, root, "", 0, NULL, NULL)))
				rc = merge_budget_left(&c, root);
		} else if (!rc && !is_null(root)) {
			r->m->not_objects++;
		}
		r->prev_end_line = doc.end_mark.line;
		free(r->read);
		r->read = NULL;
		r->doc = NULL;
		free(owned);
		r->helm_source = NULL;
		yaml_document_delete(&doc);
		if (rc)
			break;
	}
	yaml_parser_delete(&p);
	return rc;
}

/* The line (1-based) where the text's first content starts with "{{" (blank lines and YAML
 * comments before it skipped), or 0: a Go template file, which no YAML or JSON reading helps. */
static size_t starts_as_template(const char *t, size_t len)
{
	size_t i = len >= 3 && memcmp(t, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0, line = 1;
	while (i < len) {
		if (t[i] == '\n')
			line++;
		if (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
			i++;
		} else if (t[i] == '#') {
			const char *nl = memchr(t + i, '\n', len - i);
			i = nl ? (size_t)(nl - t) : len;
		} else {
			return i + 1 < len && t[i] == '{' && t[i + 1] == '{' ? line : 0;
		}
	}
	return 0;
}

static int first_byte_is_json(const char *t, size_t len)
{
	size_t i = len >= 3 && memcmp(t, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i < len && (t[i] == '{' || t[i] == '[');
}

int kube_manifest_read_text(struct kube_manifest *m, size_t src, const char *text, size_t len, struct buf *err)
{
	struct reader r;
	memset(&r, 0, sizeof r);
	r.m = m;
	r.src = src;
	r.live = m->sources[src].kind == KM_SOURCE_CLUSTER;
	r.err = err;
	r.templated = looks_like_template(text, len);
	size_t before = m->n, docs_before = m->documents, src_docs = m->sources[src].documents;
	size_t other = m->other_objects, not_obj = m->not_objects;
	size_t template_line = starts_as_template(text, len);
	if (template_line)
		return em_err(err, EM_EINPUT,
			      "%s: not YAML or JSON: it looks like an unrendered Go template ('{{' at line %zu); check what "
			      "the chart renders: helm template CHART | ebsmigrate check -f -",
			      m->sources[src].label, template_line);
	int rc = 0;
	int json = first_byte_is_json(text, len);
	if (json) {
		/* JSON: checked as JSON first (YAML would take some invalid JSON), then each value of the
		 * text (kubectl -o json run twice into one file) read as its own document, positions
		 * shifted to where it starts */
		size_t bom = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
		struct jsonx_docs d;
		jsonx_docs_init(&d, text + bom, len - bom, m->sources[src].label, NULL);
		size_t line = 0, col = 0, at = bom;
		for (;;) {
			size_t start = bom + jsonx_skip_ws(text + bom, len - bom, d.off);
			cJSON *doc = NULL;
			rc = jsonx_docs_next(&d, &doc, err);
			cJSON_Delete(doc);
			if (rc < 0 && r.templated)
				buf_adds(err, TEMPLATE_HINT);
			if (rc <= 0)
				break;
			for (; at < start; at++) {
				if (text[at] == '\n') {
					line++;
					col = 0;
				} else if (((unsigned char)text[at] & 0xC0) != 0x80) {
					col++;
				}
			}
			r.line0 = line;
			r.col0 = col;
			if ((rc = parse_stream(&r, text + start, bom + d.off - start, 1)))
				break;
		}
	} else {
		scan_helm_comments(&r, text, len);
		rc = parse_stream(&r, text, len, 0);
	}
	free(r.helm);
	if (rc) {
		kube_manifest_truncate(m, before);
		m->documents = docs_before;
		m->sources[src].documents = src_docs;
		m->other_objects = other;
		m->not_objects = not_obj;
		return rc;
	}
	return (int)(m->n - before);
}

/* ------------------------------------------------------------------ files and directories */

static int has_manifest_extension(const char *name)
{
	static const char *const exts[] = {".yaml", ".yml", ".json"};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
		size_t e = strlen(exts[i]);
		if (n > e && strcasecmp(name + n - e, exts[i]) == 0)
			return 1;
	}
	return 0;
}

/* text (read from a file or standard input) as the source name. */
static int read_source(struct kube_manifest *m, const struct buf *text, const char *name, enum km_source_kind kind,
		       size_t *files, struct buf *err)
{
	size_t src = kube_manifest_add_source(m, name, kind);
	int rc = kube_manifest_read_text(m, src, text->s, text->len, err);
	if (rc < 0)
		return rc;
	if (files)
		(*files)++;
	return 0;
}

static int read_file(struct kube_manifest *m, const char *path, const char *name, enum km_source_kind kind,
		     size_t *files, struct buf *err)
{
	struct buf text = BUF_INIT;
	int rc = em_read_input(path, &text, err);
	if (!rc)
		rc = read_source(m, &text, name, kind, files, err);
	buf_release(&text);
	return rc;
}

/* A -f DIR walk: only regular files are read, and symlinks do not lead out of top. */
struct dir_walk {
	struct kube_manifest *m;
	const char *top;      /* the directory as given */
	char *top_real;       /* and resolved */
	size_t found;         /* manifests read */
	size_t skipped;       /* manifests skipped with a note */
	size_t *files;
	struct buf *err;
	int rc;               /* the error that stopped the walk at an entry */
};

static void add_note(struct kube_manifest *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_note(struct kube_manifest *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	XGROW(m->notes, m->n_notes, m->alloc_notes);
	m->notes[m->n_notes++] = xstrvfmt(fmt, ap);
	va_end(ap);
}

static const char *file_type_name(mode_t mode)
{
	return S_ISFIFO(mode)	 ? "a FIFO"
	       : S_ISCHR(mode)	 ? "a character device"
	       : S_ISBLK(mode)	 ? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
				 : "not a file";
}

/* Is real (a resolved path) top_real itself or under it? */
static int path_within(const char *top_real, const char *real)
{
	size_t n = strlen(top_real);
	if (n == 1 && top_real[0] == '/')
		return 1;
	return strncmp(real, top_real, n) == 0 && (real[n] == '/' || real[n] == '\0');
}

static int read_dir(struct dir_walk *w, const char *rel, const char *dir, int depth);

/* One entry of the walk: rel under top, found at path (lst: its lstat). */
static int walk_entry(struct dir_walk *w, const char *rel, const char *path, const struct stat *lst)
{
	if (!lst)
		return 0; /* gone since the directory was listed */
	const char *name = strrchr(rel, '/');
	name = name ? name + 1 : rel;
	if (S_ISDIR(lst->st_mode)) {
		int depth = 1;
		for (const char *p = rel; *p; p++)
			depth += *p == '/';
		return read_dir(w, rel, path, depth);
	}
	int manifest = has_manifest_extension(name);
	const char *open_path = path;
	char *real = NULL;
	struct stat st;
	if (S_ISLNK(lst->st_mode)) {
		real = realpath(path, NULL);
		if (!real || stat(real, &st) != 0) {
			if (manifest) {
				add_note(w->m, "skipped '%s': a symlink that leads nowhere (%s)", path, strerror(errno));
				w->skipped++;
			}
			free(real);
			return 0;
		}
		if (!path_within(w->top_real, real)) {
			/* a link out of the tree: never read, whatever it is (a directory is not followed anyway) */
			if (manifest || S_ISDIR(st.st_mode)) {
				add_note(w->m, "skipped '%s': a symlink to '%s', outside '%s'", path, real, w->top);
				w->skipped += manifest;
			}
			free(real);
			return 0;
		}
		open_path = real; /* read what was checked, not the link again */
	} else {
		st = *lst;
	}
	int rc = 0;
	if (manifest && !S_ISDIR(st.st_mode)) {
		if (!S_ISREG(st.st_mode)) {
			add_note(w->m, "skipped '%s': not a regular file (%s)", path, file_type_name(st.st_mode));
			w->skipped++;
		} else {
			struct buf text = BUF_INIT;
			w->found++;
			rc = em_read_regular_input(open_path, &text, w->err);
			if (!rc)
				rc = read_source(w->m, &text, path, KM_SOURCE_FILE, w->files, w->err);
			buf_release(&text);
		}
	}
	free(real); /* a symlinked directory inside the tree is not followed: its files are read where they are */
	return rc;
}

static int walk_visit(void *ctx, const char *rel, const char *path, const struct stat *lst)
{
	struct dir_walk *w = ctx;
	int rc = walk_entry(w, rel, path, lst);
	if (rc)
		w->rc = rc;
	return rc != 0;
}

/* The directory top/rel (at dir): its manifests and subdirectories, in name order (fs_walk,
 * hidden names left out); depth bounds a deep tree. */
static int read_dir(struct dir_walk *w, const char *rel, const char *dir, int depth)
{
	if (depth > 64)
		return em_err(w->err, EM_EINPUT, "directory '%s': nested more than 64 levels deep", dir);
	int stopped = fs_walk(w->top, rel, FS_NO_HIDDEN, walk_visit, w);
	if (stopped < 0)
		return em_err(w->err, EM_EINPUT, "cannot read directory '%s': %s", dir, strerror(errno));
	return stopped ? w->rc : 0;
}

int kube_manifest_read_path(struct kube_manifest *m, const char *path, size_t *files, struct buf *err)
{
	if (strcmp(path, "-") == 0) {
		size_t docs = m->documents;
		int rc = read_file(m, "-", "stdin", KM_SOURCE_STDIN, files, err);
		/* an empty pipe is what a failed `helm template` leaves: never a pass */
		if (!rc && m->documents == docs)
			rc = em_err(err, EM_EINPUT, "stdin: no documents (an empty input: did the command before the pipe "
						    "fail? `set -o pipefail` makes the pipeline say so)");
		return rc;
	}
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct dir_walk w = {m, path, realpath(path, NULL), 0, 0, files, err, 0};
		if (!w.top_real)
			return em_err(err, EM_EINPUT, "cannot read directory '%s': %s", path, strerror(errno));
		int rc = read_dir(&w, "", path, 0);
		if (!rc && w.found == 0 && w.skipped)
			rc = em_err(err, EM_EINPUT, "directory '%s' holds no .yaml, .yml or .json file that can be read (%zu skipped)",
				    path, w.skipped);
		else if (!rc && w.found == 0)
			rc = em_err(err, EM_EINPUT, "directory '%s' holds no .yaml, .yml or .json file", path);
		free(w.top_real);
		return rc;
	}
	return read_file(m, path, path, KM_SOURCE_FILE, files, err);
}
