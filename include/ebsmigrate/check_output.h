/*
 * check_output.h - the gp2 gate's reports (check_output.c): the table, the
 * `ebsmigrate.check/v1` JSON document (-o json; -o yaml converts it), SARIF 2.1.0 (GitHub code
 * scanning, --sarif) and JUnit XML (GitLab, Jenkins, --junit), and the list of rules.
 * docs/check.md describes every field. All of them are deterministic: the same input gives the
 * same bytes (no times, no absolute paths that were not given).
 *
 * Where a finding is: a file's path as given with its line; for standard input its line, and,
 * when the document came from `helm template` (a `# Source: CHART/templates/x.yaml` comment),
 * that template path (prefixed with --source-prefix) with the line counted from the comment;
 * for a cluster the context, with no line.
 */
#ifndef EBSMIGRATE_CHECK_OUTPUT_H
#define EBSMIGRATE_CHECK_OUTPUT_H

#include "ebsmigrate/buf.h"
#include "ebsmigrate/check.h"
#include "ebsmigrate/kube_manifest.h"

struct table_options;

struct check_report {
	const struct kube_manifest *m; /* the checked objects */
	const struct check_result *r;
	const struct check_options *o;
	const char *source_prefix;     /* --source-prefix for Helm templates, or NULL */
	int warn_only;
	int color;                     /* colour the table's levels */
};

/* The verdict: "fail" when an error finding is not suppressed, else "pass". */
const char *check_verdict(const struct check_report *rep);

/* LEVEL, RULE, WHERE, MESSAGE (wide: also OBJECT, FIELD, TEMPLATE). Nothing when there are no findings. */
void check_write_table(struct buf *out, const struct check_report *rep, const struct table_options *to, int wide);
void check_write_json(struct buf *out, const struct check_report *rep);
void check_write_sarif(struct buf *out, const struct check_report *rep);
void check_write_junit(struct buf *out, const struct check_report *rep);
/* --list-rules: ID, NAME, LEVEL, SUMMARY (wide: HELP too). */
void check_write_rules(struct buf *out, const struct table_options *to, int wide);

#endif
