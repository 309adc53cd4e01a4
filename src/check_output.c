/*
 * check_output.c - the gp2 gate's reports (check_output.h): table, JSON (ebsmigrate.check/v1),
 * SARIF 2.1.0, JUnit XML, and the rule list.
 *
 * Entry points: check_write_table, check_write_json, check_write_sarif, check_write_junit,
 * check_write_rules, check_verdict.
 *
 * Invariants: JSON and SARIF through jsonw, tables through table.c, XML text through
 * buf_add_xml_escaped (so a name with '<' or a control character cannot break the document);
 * one function (where_of) decides where a finding is, for every format; SARIF results carry a
 * partialFingerprint of rule, object and field (not the line), so an alert survives edits that
 * move it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/check_output.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/table.h"

#define CHECK_SCHEMA "ebsmigrate.check/v1"
#define SARIF_SCHEMA "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

const char *check_verdict(const struct check_report *rep)
{
	return rep->r->errors ? "fail" : "pass";
}

static const char *level_name(const struct check_finding *f)
{
	return f->level == CHECK_ERROR ? "error" : "warning";
}

/* Where a finding (or an object) is. */
struct where {
	const struct km_source *src;
	size_t line, column;       /* in the source (0: unknown) */
	const char *template_path; /* a Helm document's `# Source:` */
	size_t template_line;      /* the line counted from that comment */
};

static void where_of(struct where *w, const struct check_report *rep, const struct km_object *o, struct kube_mark at)
{
	memset(w, 0, sizeof *w);
	w->src = &rep->m->sources[o->source];
	w->line = at.line;
	w->column = at.column;
	if (o->helm_source) {
		w->template_path = o->helm_source;
		w->template_line = at.line > o->helm_line ? at.line - o->helm_line : 1;
	}
}

/* "chart.yaml:14", "stdin:14 (app/templates/sts.yaml)", "context 'prod'" */
static void where_text(struct buf *b, const struct where *w)
{
	buf_adds(b, w->src->label);
	if (w->line)
		buf_addf(b, ":%zu", w->line);
	if (w->template_path)
		buf_addf(b, " (%s)", w->template_path);
}

/* A path as a URI reference: relative paths stay relative (GitHub resolves them against the
 * repository), "./" dropped; absolute ones become file:// URIs. */
static void add_path_uri(struct buf *b, const char *prefix, const char *path)
{
	struct buf p = BUF_INIT;
	if (prefix)
		buf_adds(&p, prefix);
	buf_adds(&p, path);
	const char *s = p.s;
	while (s[0] == '.' && s[1] == '/')
		s += 2;
	if (s[0] == '/')
		buf_adds(b, "file://");
	buf_add_urlencoded(b, s, 0);
	buf_release(&p);
}

/* The SARIF artifact of a finding: the file, the Helm template of a stdin document, or the
 * object in its cluster; *line and *column 0 when there is no region. */
static void artifact_uri(struct buf *b, const struct check_report *rep, const struct km_object *o,
			 const struct where *w, size_t *line, size_t *column)
{
	*line = w->line;
	*column = w->column;
	switch (w->src->kind) {
	case KM_SOURCE_FILE:
		add_path_uri(b, NULL, w->src->name);
		break;
	case KM_SOURCE_STDIN:
		if (w->template_path) {
			add_path_uri(b, rep->source_prefix, w->template_path);
			*line = w->template_line;
		} else {
			buf_adds(b, "stdin");
		}
		break;
	case KM_SOURCE_CLUSTER:
		buf_adds(b, "kubernetes://");
		buf_add_urlencoded(b, w->src->name, 1);
		buf_addc(b, '/');
		buf_add_urlencoded(b, o->kind, 1);
		if (o->namespace_) {
			buf_addc(b, '/');
			buf_add_urlencoded(b, o->namespace_, 1);
		}
		buf_addc(b, '/');
		buf_add_urlencoded(b, o->name ? o->name : "", 1);
		*line = *column = 0;
		break;
	}
}

/* "StatefulSet/db/pg" */
static char *object_id(const struct km_object *o)
{
	char *name = km_object_display_name(o);
	struct buf b = BUF_INIT;
	buf_addf(&b, "%s/%s", o->kind, name);
	free(name);
	return buf_detach(&b);
}

/* ------------------------------------------------------------------ table */

enum { TC_LEVEL, TC_RULE, TC_WHERE, TC_OBJECT, TC_FIELD, TC_MESSAGE, TC_N };

static const struct table_column finding_columns[TC_N] = {
	{"LEVEL", 0, 0, 0},
	{"RULE", 0, 0, 0},
	{"WHERE", 0, 1, 12},
	{"OBJECT", TABLE_WIDE_ONLY, 2, 0},
	{"FIELD", TABLE_WIDE_ONLY, 3, 0},
	{"MESSAGE", 0, 0, 20},
};

void check_write_table(struct buf *out, const struct check_report *rep, const struct table_options *to, int wide)
{
	const struct check_result *r = rep->r;
	if (r->n == 0)
		return;
	struct table_options o = *to;
	o.wide = o.wide || wide;
	struct table t;
	table_init(&t, finding_columns, TC_N);
	for (size_t i = 0; i < r->n; i++) {
		const struct check_finding *f = &r->findings[i];
		const struct km_object *obj = &rep->m->objs[f->object];
		struct where w;
		where_of(&w, rep, obj, f->at);
		struct buf cell = BUF_INIT;
		table_add(&t, f->suppressed ? "skipped" : level_name(f));
		if (rep->color && !f->suppressed)
			table_set_cell_sgr(&t, f->level == CHECK_ERROR ? "31" : "33");
		table_add(&t, f->rule->id);
		where_text(&cell, &w);
		table_add(&t, cell.s);
		char *id = object_id(obj);
		table_add(&t, id);
		free(id);
		table_add(&t, f->path);
		buf_reset(&cell);
		buf_adds(&cell, f->message);
		if (f->suppressed)
			buf_addf(&cell, " [skipped: %s]", *f->suppressed ? f->suppressed : "no reason given");
		table_add(&t, cell.s);
		buf_release(&cell);
	}
	table_write(out, &t, &o);
	table_release(&t);
}

static const struct table_column rule_columns[] = {
	{"ID", 0, 0, 0},
	{"NAME", 0, 0, 0},
	{"LEVEL", 0, 0, 0},
	{"SUMMARY", 0, 0, 20},
	{"HELP", TABLE_WIDE_ONLY, 1, 0},
};

void check_write_rules(struct buf *out, const struct table_options *to, int wide)
{
	struct table_options o = *to;
	o.wide = o.wide || wide;
	struct table t;
	table_init(&t, rule_columns, sizeof rule_columns / sizeof rule_columns[0]);
	for (size_t i = 0; i < check_n_rules; i++) {
		const struct check_rule *r = &check_rules[i];
		table_add(&t, r->id);
		table_add(&t, r->name);
		table_add(&t, r->level == CHECK_ERROR ? "error" : r->strict_error ? "warning (--strict: error)" : "warning");
		table_add(&t, r->summary);
		table_add(&t, r->help);
	}
	table_write(out, &t, &o);
	table_release(&t);
}

/* ------------------------------------------------------------------ JSON */

static const char *source_kind_name(enum km_source_kind k)
{
	return k == KM_SOURCE_FILE ? "file" : k == KM_SOURCE_STDIN ? "stdin" : "cluster";
}

/* One finding: the rule and its message, then where it is (the source, its document, line and
 * column, the object, the Helm template that made it) and its waiver. */
static void json_finding(struct jsonw *w, const struct check_report *rep, const struct check_finding *f)
{
	const struct km_object *o = &rep->m->objs[f->object];
	struct where wh;
	where_of(&wh, rep, o, f->at);
	const struct jsonw_str_member what[] = {
		{"rule", f->rule->id}, {"rule_name", f->rule->name}, {"level", level_name(f)},
		{"message", f->message}, {"source", wh.src->name},
	};
	const struct jsonw_str_member object[] = {
		{"kind", o->kind},
		{"api_version", o->api_version},
		{"namespace", o->namespace_},
		{"name", o->name ? o->name : o->generate_name},
		{"path", f->path},
		{"helm_template", wh.template_path},
	};
	jsonw_object(w);
	jsonw_members_str(w, what, JSONW_COUNT(what));
	jsonw_key(w, "document");
	jsonw_int_or_null(w, (long long)o->document, o->document > 0);
	jsonw_key(w, "line");
	jsonw_int_or_null(w, (long long)wh.line, wh.line > 0);
	jsonw_key(w, "column");
	jsonw_int_or_null(w, (long long)wh.column, wh.column > 0);
	jsonw_members_str(w, object, JSONW_COUNT(object));
	jsonw_key(w, "template_line");
	jsonw_int_or_null(w, (long long)wh.template_line, wh.template_path && wh.line);
	jsonw_key_str(w, "suppressed", f->suppressed);
	jsonw_end(w);
}

void check_write_json(struct buf *out, const struct check_report *rep)
{
	const struct check_result *r = rep->r;
	const struct kube_manifest *m = rep->m;
	struct jsonw w;
	jsonw_document(&w, out, JSONW_PRETTY, CHECK_SCHEMA);
	jsonw_key_str(&w, "verdict", check_verdict(rep));
	jsonw_key(&w, "strict");
	jsonw_bool(&w, rep->o && rep->o->strict);
	jsonw_key(&w, "warn_only");
	jsonw_bool(&w, rep->warn_only);
	jsonw_key(&w, "skipped_rules");
	jsonw_array(&w);
	for (size_t i = 0; rep->o && i < rep->o->n_skip; i++)
		jsonw_str(&w, rep->o->skip[i]->id);
	jsonw_end(&w);
	jsonw_key(&w, "summary");
	jsonw_object(&w);
	const struct jsonw_int_member counts[] = {
		{"sources", (long long)m->n_sources},
		{"documents", (long long)m->documents},
		{"objects_checked", (long long)r->objects},
		{"storage_classes", (long long)r->storage_classes},
		{"volume_attributes_classes", (long long)r->vacs},
		{"claims", (long long)r->claims},
		{"other_objects", (long long)m->other_objects},
		{"not_objects", (long long)m->not_objects},
		{"errors", (long long)r->errors},
		{"warnings", (long long)r->warnings},
		{"suppressed", (long long)r->suppressed},
	};
	jsonw_members_int(&w, counts, JSONW_COUNT(counts));
	jsonw_end(&w);
	jsonw_key(&w, "sources");
	jsonw_array(&w);
	for (size_t i = 0; i < m->n_sources; i++) {
		jsonw_object(&w);
		jsonw_key_str(&w, "name", m->sources[i].name);
		jsonw_key_str(&w, "kind", source_kind_name(m->sources[i].kind));
		jsonw_key(&w, "documents");
		jsonw_int_or_null(&w, (long long)m->sources[i].documents, m->sources[i].kind != KM_SOURCE_CLUSTER);
		jsonw_end(&w);
	}
	jsonw_end(&w);
	jsonw_key_array(&w, "findings");
	for (size_t i = 0; i < r->n; i++)
		json_finding(&w, rep, &r->findings[i]);
	jsonw_end(&w);
	jsonw_key_strv(&w, "notes", r->notes, r->n_notes);
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
}

/* ------------------------------------------------------------------ SARIF */

static int rule_skipped(const struct check_report *rep, const struct check_rule *rule)
{
	for (size_t i = 0; rep->o && i < rep->o->n_skip; i++)
		if (rep->o->skip[i] == rule)
			return 1;
	return 0;
}

static void sarif_text(struct jsonw *w, const char *key, const char *text, const char *markdown)
{
	jsonw_key_any(w, key);
	jsonw_object(w);
	jsonw_key_str(w, "text", text);
	if (markdown)
		jsonw_key_str(w, "markdown", markdown);
	jsonw_end(w);
}

static void sarif_rules(struct jsonw *w, const struct check_report *rep)
{
	jsonw_key(w, "rules");
	jsonw_array(w);
	for (size_t i = 0; i < check_n_rules; i++) {
		const struct check_rule *r = &check_rules[i];
		int strict = r->strict_error && rep->o && rep->o->strict;
		struct buf full = BUF_INIT, md = BUF_INIT;
		buf_addf(&full, "%s %s", r->summary, r->help);
		buf_addf(&md, "**%s**\n\n%s\n\nRule `%s` (`%s`) of `ebsmigrate check`: see docs/check.md.", r->summary,
			 r->help, r->id, r->name);
		jsonw_object(w);
		jsonw_key_str(w, "id", r->id);
		jsonw_key_str(w, "name", r->name);
		sarif_text(w, "shortDescription", r->summary, NULL);
		sarif_text(w, "fullDescription", full.s, NULL);
		sarif_text(w, "help", full.s, md.s);
		jsonw_key(w, "defaultConfiguration");
		jsonw_object(w);
		jsonw_key(w, "enabled");
		jsonw_bool(w, !rule_skipped(rep, r));
		jsonw_key_str(w, "level", r->level == CHECK_ERROR || strict ? "error" : "warning");
		jsonw_end(w);
		jsonw_key(w, "properties");
		jsonw_object(w);
		static const char *const tags[] = {"kubernetes", "ebs", "gp2", "cost"};
		jsonw_key(w, "tags");
		jsonw_str_array(w, tags, 4);
		jsonw_key_str(w, "precision", "very-high");
		jsonw_end(w);
		jsonw_end(w);
		buf_release(&full);
		buf_release(&md);
	}
	jsonw_end(w);
}

static void sarif_result(struct jsonw *w, const struct check_report *rep, const struct check_finding *f)
{
	const struct km_object *o = &rep->m->objs[f->object];
	struct where wh;
	where_of(&wh, rep, o, f->at);
	struct buf uri = BUF_INIT, fp = BUF_INIT;
	size_t line, column;
	artifact_uri(&uri, rep, o, &wh, &line, &column);
	char *id = object_id(o);
	jsonw_object(w);
	jsonw_key_str(w, "ruleId", f->rule->id);
	jsonw_key_int(w, "ruleIndex", (long long)(f->rule - check_rules));
	jsonw_key_str(w, "level", level_name(f));
	jsonw_key_str(w, "kind", "fail");
	sarif_text(w, "message", f->message, NULL);
	jsonw_key(w, "locations");
	jsonw_array(w);
	jsonw_object(w);
	jsonw_key(w, "physicalLocation");
	jsonw_object(w);
	jsonw_key(w, "artifactLocation");
	jsonw_object(w);
	jsonw_key_str(w, "uri", uri.s);
	jsonw_end(w);
	if (line) {
		jsonw_key(w, "region");
		jsonw_object(w);
		jsonw_key_int(w, "startLine", (long long)line);
		if (column)
			jsonw_key_int(w, "startColumn", (long long)column);
		jsonw_end(w);
	}
	jsonw_end(w);
	jsonw_key(w, "logicalLocations");
	jsonw_array(w);
	jsonw_object(w);
	jsonw_key_str(w, "name", o->name ? o->name : o->generate_name ? o->generate_name : "");
	jsonw_key_str(w, "fullyQualifiedName", id);
	jsonw_key_str(w, "kind", "resource");
	jsonw_end(w);
	jsonw_end(w);
	jsonw_end(w);
	jsonw_end(w);
	/* the identity of the finding, not of its line: rule, object, field */
	buf_addf(&fp, "%s%c%s%c%s%c%s", f->rule->id, 0, id, 0, f->path, 0, wh.src->name);
	char hex[65];
	em_sha256_hex(fp.s, fp.len, hex);
	hex[32] = '\0';
	jsonw_key(w, "partialFingerprints");
	jsonw_object(w);
	jsonw_key_str(w, "ebsmigrateFinding/v1", hex);
	jsonw_end(w);
	jsonw_key(w, "properties");
	jsonw_object(w);
	jsonw_key_str(w, "path", f->path);
	if (wh.template_path) {
		jsonw_key_str(w, "helmTemplate", wh.template_path);
		if (wh.src->kind == KM_SOURCE_STDIN && wh.line)
			jsonw_key_int(w, "streamLine", (long long)wh.line);
	}
	jsonw_end(w);
	if (f->suppressed) {
		jsonw_key(w, "suppressions");
		jsonw_array(w);
		jsonw_object(w);
		jsonw_key_str(w, "kind", "inSource");
		jsonw_key_str(w, "justification", f->suppressed);
		jsonw_end(w);
		jsonw_end(w);
	}
	jsonw_end(w);
	free(id);
	buf_release(&uri);
	buf_release(&fp);
}

void check_write_sarif(struct buf *out, const struct check_report *rep)
{
	struct jsonw w;
	jsonw_init(&w, out, JSONW_PRETTY);
	jsonw_object(&w);
	jsonw_key_str(&w, "$schema", SARIF_SCHEMA);
	jsonw_key_str(&w, "version", "2.1.0");
	jsonw_key(&w, "runs");
	jsonw_array(&w);
	jsonw_object(&w);
	jsonw_key(&w, "tool");
	jsonw_object(&w);
	jsonw_key(&w, "driver");
	jsonw_object(&w);
	jsonw_key_str(&w, "name", "ebsmigrate");
	jsonw_key_str(&w, "version", EM_VERSION);
	jsonw_key_str(&w, "semanticVersion", EM_VERSION);
	sarif_rules(&w, rep);
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_key_str(&w, "columnKind", "unicodeCodePoints");
	jsonw_key(&w, "results");
	jsonw_array(&w);
	for (size_t i = 0; i < rep->r->n; i++)
		sarif_result(&w, rep, &rep->r->findings[i]);
	jsonw_end(&w);
	jsonw_key(&w, "properties");
	jsonw_object(&w);
	jsonw_key_str(&w, "verdict", check_verdict(rep));
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_layout(&w, "\n");
}

/* ------------------------------------------------------------------ JUnit */

static void xml_attr(struct buf *b, const char *name, const char *value)
{
	buf_addf(b, " %s=\"", name);
	buf_add_xml_escaped(b, value);
	buf_addc(b, '"');
}

static void xml_attr_count(struct buf *b, const char *name, size_t n)
{
	buf_addf(b, " %s=\"%zu\"", name, n);
}

/* A test case per checked object: failed when it has an error finding (one <failure> listing
 * them all, as a test case holds at most one), warnings and suppressed findings in system-out. */
static void junit_case(struct buf *b, const struct check_report *rep, size_t obj)
{
	const struct check_result *r = rep->r;
	const struct km_object *o = &rep->m->objs[obj];
	struct where wh;
	where_of(&wh, rep, o, o->at);
	struct buf name = BUF_INIT, failure = BUF_INIT, out = BUF_INIT;
	char *disp = km_object_display_name(o);
	buf_addf(&name, "%s %s", o->kind, disp);
	free(disp);
	const struct check_finding *first = NULL;
	size_t n_fail = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct check_finding *f = &r->findings[i];
		if (f->object != obj)
			continue;
		struct where fw;
		where_of(&fw, rep, o, f->at);
		struct buf *to = f->level == CHECK_ERROR && !f->suppressed ? &failure : &out;
		buf_addf(to, "%s %s (%s) %s: %s\n  at ", f->suppressed ? "skipped" : level_name(f), f->rule->id,
			 f->rule->name, f->path, f->message);
		where_text(to, &fw);
		if (f->suppressed)
			buf_addf(to, "\n  skipped by annotation: %s", *f->suppressed ? f->suppressed : "no reason given");
		else if (to == &failure)
			buf_addf(to, "\n  fix: %s", f->rule->help);
		buf_addc(to, '\n');
		if (to == &failure && !n_fail++)
			first = f;
	}
	buf_adds(b, "    <testcase");
	buf_addf(b, " classname=\"ebsmigrate.check.%s\"", o->kind); /* kinds are names, nothing to escape */
	xml_attr(b, "name", name.s);
	xml_attr(b, "file", wh.src->kind == KM_SOURCE_CLUSTER ? wh.src->label : wh.src->name);
	if (wh.line)
		xml_attr_count(b, "line", wh.line);
	if (!failure.len && !out.len) {
		buf_adds(b, "/>\n");
	} else {
		buf_adds(b, ">\n");
		if (failure.len) {
			struct buf msg = BUF_INIT;
			buf_adds(&msg, first->message);
			if (n_fail > 1)
				buf_addf(&msg, " (and %zu more)", n_fail - 1);
			buf_adds(b, "      <failure");
			xml_attr(b, "type", first->rule->id);
			xml_attr(b, "message", msg.s);
			buf_adds(b, ">");
			buf_add_xml_escaped(b, failure.s);
			buf_adds(b, "</failure>\n");
			buf_release(&msg);
		}
		if (out.len) {
			buf_adds(b, "      <system-out>");
			buf_add_xml_escaped(b, out.s);
			buf_adds(b, "</system-out>\n");
		}
		buf_adds(b, "    </testcase>\n");
	}
	buf_release(&name);
	buf_release(&failure);
	buf_release(&out);
}

void check_write_junit(struct buf *out, const struct check_report *rep)
{
	const struct kube_manifest *m = rep->m;
	size_t tests = m->n, failures = 0;
	for (size_t i = 0; i < m->n; i++)
		failures += check_object_failed(rep->r, i);
	buf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ebsmigrate check\"");
	xml_attr_count(out, "tests", tests);
	xml_attr_count(out, "failures", failures);
	xml_attr_count(out, "errors", 0);
	buf_adds(out, ">\n");
	for (size_t s = 0; s < m->n_sources; s++) {
		size_t st = 0, sf = 0;
		for (size_t i = 0; i < m->n; i++)
			if (m->objs[i].source == s) {
				st++;
				sf += check_object_failed(rep->r, i);
			}
		buf_adds(out, "  <testsuite");
		xml_attr(out, "name", m->sources[s].label);
		xml_attr_count(out, "tests", st);
		xml_attr_count(out, "failures", sf);
		xml_attr_count(out, "errors", 0);
		xml_attr_count(out, "skipped", 0);
		if (!st) {
			buf_adds(out, "/>\n");
			continue;
		}
		buf_adds(out, ">\n");
		for (size_t i = 0; i < m->n; i++)
			if (m->objs[i].source == s)
				junit_case(out, rep, i);
		buf_adds(out, "  </testsuite>\n");
	}
	buf_adds(out, "</testsuites>\n");
}
