/* test_yamlx.c - the YAML loader with a nesting cap: the documents it builds are libyaml's own
 * (yaml_parser_load's: every node's type, tag, value, style, marks and children, document by
 * document), the cap admits 1,000 levels of flow and block nesting and refuses the 1,001st where
 * it opens, parse errors keep libyaml's fields, an anchor defined again applies from there on,
 * and an undefined alias is refused. */
#include <stdio.h>
#include <string.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/yamlx.h"
#include "tap.h"

static int same_mark(yaml_mark_t a, yaml_mark_t b)
{
	return a.index == b.index && a.line == b.line && a.column == b.column;
}

static int same_tag(const yaml_char_t *a, const yaml_char_t *b)
{
	return (!a && !b) || (a && b && strcmp((const char *)a, (const char *)b) == 0);
}

/* Node by node: the same nodes in the same order, so node ids (and so aliases) match too. */
static int same_document(yaml_document_t *a, yaml_document_t *b)
{
	if (a->nodes.top - a->nodes.start != b->nodes.top - b->nodes.start || !same_mark(a->start_mark, b->start_mark) ||
	    !same_mark(a->end_mark, b->end_mark) || a->start_implicit != b->start_implicit ||
	    a->end_implicit != b->end_implicit)
		return 0;
	for (yaml_node_t *x = a->nodes.start, *y = b->nodes.start; x < a->nodes.top; x++, y++) {
		if (x->type != y->type || !same_tag(x->tag, y->tag) || !same_mark(x->start_mark, y->start_mark) ||
		    !same_mark(x->end_mark, y->end_mark))
			return 0;
		if (x->type == YAML_SCALAR_NODE &&
		    (x->data.scalar.length != y->data.scalar.length || x->data.scalar.style != y->data.scalar.style ||
		     memcmp(x->data.scalar.value, y->data.scalar.value, x->data.scalar.length) != 0))
			return 0;
		if (x->type == YAML_SEQUENCE_NODE) {
			size_t n = (size_t)(x->data.sequence.items.top - x->data.sequence.items.start);
			if (n != (size_t)(y->data.sequence.items.top - y->data.sequence.items.start) ||
			    (n && memcmp(x->data.sequence.items.start, y->data.sequence.items.start, n * sizeof(int)) != 0))
				return 0;
		}
		if (x->type == YAML_MAPPING_NODE) {
			size_t n = (size_t)(x->data.mapping.pairs.top - x->data.mapping.pairs.start);
			if (n != (size_t)(y->data.mapping.pairs.top - y->data.mapping.pairs.start))
				return 0;
			for (size_t i = 0; i < n; i++)
				if (x->data.mapping.pairs.start[i].key != y->data.mapping.pairs.start[i].key ||
				    x->data.mapping.pairs.start[i].value != y->data.mapping.pairs.start[i].value)
					return 0;
		}
	}
	return 1;
}

/* Loads text with both loaders, document by document; 1 when every document is the same and
 * both end (or fail) at the same place with the same problem. */
static int same_as_libyaml(const char *text)
{
	yaml_parser_t p, q;
	yaml_parser_initialize(&p);
	yaml_parser_initialize(&q);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	yaml_parser_set_input_string(&q, (const unsigned char *)text, strlen(text));
	int same = 1;
	for (int docs = 0; same && docs < 16; docs++) {
		yaml_document_t a, b;
		int ra = yamlx_load(&p, &a), rb = yaml_parser_load(&q, &b) ? 0 : EM_EINPUT;
		if (ra || rb) {
			same = ra == rb && p.error == q.error && same_mark(p.problem_mark, q.problem_mark) &&
			       strcmp(p.problem, q.problem) == 0;
			if (!ra)
				yaml_document_delete(&a);
			if (!rb)
				yaml_document_delete(&b);
			break;
		}
		int end = !yaml_document_get_root_node(&a);
		same = same_document(&a, &b) && end == !yaml_document_get_root_node(&b);
		yaml_document_delete(&a);
		yaml_document_delete(&b);
		if (end)
			break;
	}
	yaml_parser_delete(&p);
	yaml_parser_delete(&q);
	return same;
}

/* yamlx_load of the first document: 0, or the error with its line and column (1-based) and whether
 * it was the cap. */
static int load(const char *text, size_t len, size_t *line, size_t *column, int *too_deep)
{
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	yaml_document_t d;
	int rc = yamlx_load(&p, &d);
	*line = p.problem_mark.line + 1;
	*column = p.problem_mark.column + 1;
	*too_deep = yamlx_too_deep(&p);
	if (!rc)
		yaml_document_delete(&d);
	yaml_parser_delete(&p);
	return rc;
}

/* "key: " + n flow sequences, or n block sequences ("- - - x"). */
static void nested(struct buf *b, size_t n, int block)
{
	buf_reset(b);
	if (block) {
		for (size_t i = 0; i < n; i++)
			buf_adds(b, "- ");
		buf_adds(b, "x\n");
		return;
	}
	buf_adds(b, "key: ");
	for (size_t i = 0; i < n; i++)
		buf_addc(b, '[');
	for (size_t i = 0; i < n; i++)
		buf_addc(b, ']');
	buf_addc(b, '\n');
}

int main(void)
{
	/* the documents libyaml's loader builds, node for node */
	CHECK(same_as_libyaml("apiVersion: v1\nkind: List\nitems:\n- {a: 1, b: [x, 'y', \"z\"]}\n- ~\n"));
	CHECK(same_as_libyaml("--- &a\nk: v\n--- !!map\nx: *a\n---\n...\n--- !custom\n- |\n  lit\n- >\n  fold\n"));
	CHECK(same_as_libyaml("base: &b {type: gp2}\nsc:\n  <<: *b\n  type: !!binary Z3Az\n? [complex, key]\n: v\n"));
	CHECK(same_as_libyaml("%YAML 1.1\n%TAG !e! tag:example.com,2000:\n--- !e!thing\na: !e!x 1\n"));
	CHECK(same_as_libyaml("cycle: &c [*c, 1]\n"));
	CHECK(same_as_libyaml(""));
	CHECK(same_as_libyaml("# only a comment\n"));
	CHECK(same_as_libyaml("{\"json\": [1, 2.5, true, null, \"s\\u00e9\"]}"));
	/* parse errors are libyaml's, with its problem and mark */
	CHECK(same_as_libyaml("a: b\n c: d\n"));
	CHECK(same_as_libyaml("a: [1, 2\n"));
	CHECK(same_as_libyaml("ok: 1\n---\nbad: \"\n"));
	CHECK(same_as_libyaml("\tkey: v\n"));

	/* an anchor defined again applies to the aliases after it (libyaml 0.2.5 refuses) */
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	static const char again[] = "- &a one\n- *a\n- &a two\n- *a\n";
	yaml_parser_set_input_string(&p, (const unsigned char *)again, sizeof again - 1);
	yaml_document_t d;
	CHECK_I64(yamlx_load(&p, &d), 0);
	yaml_node_t *root = yaml_document_get_root_node(&d);
	CHECK(root && root->type == YAML_SEQUENCE_NODE && root->data.sequence.items.top - root->data.sequence.items.start == 4);
	if (root && root->data.sequence.items.top - root->data.sequence.items.start == 4) {
		int *it = root->data.sequence.items.start;
		CHECK_STR((const char *)yaml_document_get_node(&d, it[1])->data.scalar.value, "one");
		CHECK_STR((const char *)yaml_document_get_node(&d, it[3])->data.scalar.value, "two");
	}
	yaml_document_delete(&d);
	yaml_parser_delete(&p);

	/* an alias of no anchor */
	size_t line, col;
	int deep;
	static const char undefined[] = "a: 1\nb: *nope\n";
	CHECK_I64(load(undefined, sizeof undefined - 1, &line, &col, &deep), EM_EINPUT);
	CHECK(line == 2 && col == 4 && !deep);

	/* the cap: the root mapping is level 1, so 999 flow sequences fit under it and 1,000 do not;
	 * the level that does not fit is named where it opens ("key: " is 5 columns) */
	struct buf b = BUF_INIT;
	nested(&b, YAMLX_MAX_DEPTH - 1, 0);
	CHECK_I64(load(b.s, b.len, &line, &col, &deep), 0);
	nested(&b, YAMLX_MAX_DEPTH, 0);
	CHECK_I64(load(b.s, b.len, &line, &col, &deep), EM_EINPUT);
	CHECK(deep && line == 1 && col == 5 + YAMLX_MAX_DEPTH);
	/* block sequences count the same: 1,000 fit, 1,001 do not (the last "- " opens at column 2001) */
	nested(&b, YAMLX_MAX_DEPTH, 1);
	CHECK_I64(load(b.s, b.len, &line, &col, &deep), 0);
	nested(&b, YAMLX_MAX_DEPTH + 1, 1);
	CHECK_I64(load(b.s, b.len, &line, &col, &deep), EM_EINPUT);
	CHECK(deep && line == 1 && col == 2 * YAMLX_MAX_DEPTH + 1);
	/* the input: 64k levels in 128 KB, refused at the first level too many */
	nested(&b, 65536, 0);
	CHECK_I64(load(b.s, b.len, &line, &col, &deep), EM_EINPUT);
	CHECK(deep && col == 5 + YAMLX_MAX_DEPTH);
	/* a parse error is not the cap */
	CHECK_I64(load("a: [\n", 5, &line, &col, &deep), EM_EINPUT);
	CHECK(!deep);
	buf_release(&b);
	return tap_done();
}
