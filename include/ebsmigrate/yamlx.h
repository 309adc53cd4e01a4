/*
 * yamlx.h - reading YAML with libyaml, for the modules that parse YAML input (kube_manifest_read.c:
 * `check -f` and the cluster's lists; kube_config.c: kubeconfig files; bench_kube.c: the fio Job
 * template). libyaml values never leave the module that parsed them; this only builds the
 * document they walk.
 *
 * yamlx_load is libyaml's yaml_parser_load with a nesting cap: it reads the parser's events and
 * adds each node as its event arrives, and refuses a mapping or sequence that would open a
 * level deeper than YAMLX_MAX_DEPTH before it is added. libyaml's own loader has no cap, and its
 * scanner spends time in proportion to the depth on every token, so 64k nested `[` in a 128 KB
 * file cost about 20 s; with the cap the same file is refused after its first thousand tokens.
 * Anchors may be defined again (the later one wins for the aliases after it, as YAML 1.2 and
 * kubectl's decoder have it; libyaml 0.2.5 refuses); an alias is the anchored node itself,
 * never a copy, so an alias bomb costs nothing here.
 *
 * Ownership: the caller owns the document and deletes it with yaml_document_delete after a
 * success; after a failure it is already deleted.
 */
#ifndef EBSMIGRATE_YAMLX_H
#define EBSMIGRATE_YAMLX_H

#include <yaml.h>

/* The deepest nesting of mappings and sequences a document may have: cJSON's limit for JSON. */
#define YAMLX_MAX_DEPTH 1000

/* The next document of the parser's stream into *document (a document without a root node
 * after the last one, as yaml_parser_load gives). Returns 0, or EM_EINPUT with the parser's
 * error fields set as libyaml sets them (error, problem, problem_mark, context, context_mark),
 * so one message builder serves both; yamlx_too_deep tells the cap apart. */
int yamlx_load(yaml_parser_t *parser, yaml_document_t *document);

/* Did the last yamlx_load fail on the nesting cap? (problem_mark is where the level opens.) */
int yamlx_too_deep(const yaml_parser_t *parser);

#endif
