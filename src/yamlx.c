/*
 * yamlx.c - libyaml's document loader with a nesting cap (yamlx.h), shared by every YAML reader
 * (kube_manifest_read.c, kube_config.c, bench_kube.c).
 *
 * Entry points: yamlx_load, yamlx_too_deep.
 *
 * Invariants: the cap is checked on the event that opens a level, before its node is added, so
 * no document deeper than YAMLX_MAX_DEPTH is ever built and the scanner never runs deeper than
 * that (its per-token cost grows with the depth); every node keeps the marks of its events, as
 * yaml_parser_load's do (the readers report lines and columns from them); a scalar's event text
 * is wiped once its node holds the copy (kube_config.c wipes the document's secrets, and would
 * miss these); an error leaves the parser's error fields set the way libyaml sets them and the
 * document deleted.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/secbuf.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/yamlx.h"

#define TEXT_OF(x) #x
#define NUMBER_TEXT(x) TEXT_OF(x)
static const char too_deep_problem[] = "nested more than " NUMBER_TEXT(YAMLX_MAX_DEPTH) " levels deep";

/* An open mapping or sequence: its node, and for a mapping the key waiting for its value. */
struct level {
	int node, key;
};

struct composer {
	yaml_parser_t *p;
	yaml_document_t *doc;
	struct level *levels;
	size_t n, alloc;
	struct strmap anchors; /* anchor -> node id */
};

static int fail(yaml_parser_t *p, yaml_error_type_t type, const char *problem, yaml_mark_t mark)
{
	p->error = type;
	p->problem = problem;
	p->problem_mark = mark;
	p->context = NULL;
	return EM_EINPUT;
}

/* The event's tag as the add functions take it: NULL (the kind's default) for none or "!". */
static const yaml_char_t *tag_of(const yaml_char_t *tag)
{
	return tag && strcmp((const char *)tag, "!") != 0 ? tag : NULL;
}

/* Places node id in the open level (an item, a key, or a key's value); the root otherwise. */
static int attach(struct composer *c, int id, const yaml_event_t *ev)
{
	if (c->n == 0)
		return 0; /* the root: the first node added */
	struct level *top = &c->levels[c->n - 1];
	yaml_node_t *parent = yaml_document_get_node(c->doc, top->node);
	int ok = 1;
	if (parent->type == YAML_SEQUENCE_NODE) {
		ok = yaml_document_append_sequence_item(c->doc, top->node, id);
	} else if (!top->key) {
		top->key = id;
	} else {
		ok = yaml_document_append_mapping_pair(c->doc, top->node, top->key, id);
		top->key = 0;
	}
	return ok ? 0 : fail(c->p, YAML_MEMORY_ERROR, NULL, ev->start_mark);
}

/* A node just added: its marks, its anchor, its place. */
static int added(struct composer *c, int id, const yaml_char_t *anchor, const yaml_event_t *ev)
{
	if (!id)
		return fail(c->p, YAML_MEMORY_ERROR, NULL, ev->start_mark);
	yaml_node_t *node = yaml_document_get_node(c->doc, id);
	node->start_mark = ev->start_mark;
	node->end_mark = ev->end_mark;
	if (anchor)
		strmap_put(&c->anchors, (const char *)anchor, (size_t)id);
	return attach(c, id, ev);
}

static int open_level(struct composer *c, int id, const yaml_char_t *anchor, const yaml_event_t *ev)
{
	int rc = added(c, id, anchor, ev);
	if (rc)
		return rc;
	XGROW(c->levels, c->n, c->alloc);
	c->levels[c->n++] = (struct level){id, 0};
	return 0;
}

static int add_event(struct composer *c, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT: {
		if (ev->data.scalar.length > INT_MAX) /* the add function takes an int */
			return fail(c->p, YAML_COMPOSER_ERROR, "a scalar longer than 2 GiB", ev->start_mark);
		int id = yaml_document_add_scalar(c->doc, tag_of(ev->data.scalar.tag), ev->data.scalar.value,
						  (int)ev->data.scalar.length, ev->data.scalar.style);
		return added(c, id, ev->data.scalar.anchor, ev);
	}
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		if (c->n >= YAMLX_MAX_DEPTH)
			return fail(c->p, YAML_COMPOSER_ERROR, too_deep_problem, ev->start_mark);
		int seq = ev->type == YAML_SEQUENCE_START_EVENT;
		int id = seq ? yaml_document_add_sequence(c->doc, tag_of(ev->data.sequence_start.tag),
							  ev->data.sequence_start.style)
			     : yaml_document_add_mapping(c->doc, tag_of(ev->data.mapping_start.tag),
							 ev->data.mapping_start.style);
		return open_level(c, id, seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor, ev);
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (c->n) /* the parser pairs every end with its start */
			yaml_document_get_node(c->doc, c->levels[--c->n].node)->end_mark = ev->end_mark;
		return 0;
	case YAML_ALIAS_EVENT: {
		size_t id;
		if (!strmap_get(&c->anchors, (const char *)ev->data.alias.anchor, &id))
			return fail(c->p, YAML_COMPOSER_ERROR, "found undefined alias", ev->start_mark);
		return attach(c, (int)id, ev);
	}
	default:
		return 0;
	}
}

/* The document after the last one: no root node. */
static int no_document(yaml_parser_t *p, yaml_document_t *doc, yaml_mark_t mark)
{
	if (!yaml_document_initialize(doc, NULL, NULL, NULL, 0, 0))
		return fail(p, YAML_MEMORY_ERROR, NULL, mark);
	return 0;
}

int yamlx_load(yaml_parser_t *p, yaml_document_t *doc)
{
	memset(doc, 0, sizeof *doc);
	yaml_event_t ev;
	if (!p->stream_start_produced) {
		if (!yaml_parser_parse(p, &ev))
			return EM_EINPUT;
		yaml_event_delete(&ev); /* STREAM-START */
	}
	if (p->stream_end_produced)
		return no_document(p, doc, p->mark);
	if (!yaml_parser_parse(p, &ev))
		return EM_EINPUT;
	if (ev.type != YAML_DOCUMENT_START_EVENT) { /* STREAM-END */
		yaml_event_delete(&ev);
		return no_document(p, doc, p->mark);
	}
	int ok = yaml_document_initialize(doc, ev.data.document_start.version_directive,
					  ev.data.document_start.tag_directives.start,
					  ev.data.document_start.tag_directives.end, ev.data.document_start.implicit, 1);
	doc->start_mark = ev.start_mark;
	yaml_event_delete(&ev);
	if (!ok)
		return fail(p, YAML_MEMORY_ERROR, NULL, p->mark);
	struct composer c = {p, doc, NULL, 0, 0, STRMAP_INIT};
	int rc = 0;
	for (;;) {
		if (!yaml_parser_parse(p, &ev)) {
			rc = EM_EINPUT;
			break;
		}
		if (ev.type == YAML_DOCUMENT_END_EVENT) {
			doc->end_implicit = ev.data.document_end.implicit;
			doc->end_mark = ev.end_mark;
			yaml_event_delete(&ev);
			break;
		}
		rc = add_event(&c, &ev);
		if (ev.type == YAML_SCALAR_EVENT) /* the node has a copy; a kubeconfig's tokens leave no other */
			secbuf_wipe(ev.data.scalar.value, ev.data.scalar.length);
		yaml_event_delete(&ev);
		if (rc)
			break;
	}
	free(c.levels);
	strmap_release(&c.anchors);
	if (rc)
		yaml_document_delete(doc);
	return rc;
}

int yamlx_too_deep(const yaml_parser_t *p)
{
	return p->error == YAML_COMPOSER_ERROR && p->problem == too_deep_problem;
}
