/*
 * ledger_fixture.c - writes ledger rows for test cases through the ledger module's own API, so a
 * case's rows always match the schema and the module's invariants (an apply_volumes row comes
 * with its apply_events row, times are RFC 3339, money is integer micro-dollars) instead of
 * being INSERTed by hand with sqlite3.
 *
 * Usage: ledger_fixture DB < SPEC. SPEC has one row per line, "KIND key=value ...", values
 * without spaces; blank lines and lines starting with '#' are skipped. Kinds and keys:
 *   apply_run     plan= started_at= [outcome= finished_at=]     ledger_apply_run_begin / _end
 *   apply_volume  plan= volume= region= method= state= type= iops= throughput=
 *                 current_micro= target_micro= updated_at= [run= completed_at= submitted_at=
 *                 eligible_at= namespace= pvc= cluster=]             ledger_apply_save
 *   apply_change  plan= volume= state= updated_at= [eligible_at= error_code=]
 *                 the row of (plan, volume) moved to state, as a run that recorded it and had not
 *                 observed more would leave it: eligible_at as given (absent: none), error_code
 *                 replaced when given, the rest kept           ledger_apply_get + ledger_apply_save
 *   inventory_run started_at= finished_at= source= regions= [clusters= volumes= kube_volumes=
 *                 aws_calls= inventory_json=]                         ledger_inventory_record
 * Each row's time (updated_at, started_at, finished_at) is the clock (em_set_now) while the
 * ledger writes it. Exit 0, or 2 naming the line of a bad spec, or 1 when the ledger refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/apply_state.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/ledger_apply.h"

#define MAX_FIELDS 24

struct spec_line {
	int line;
	const char *kind;
	size_t n;
	const char *key[MAX_FIELDS], *value[MAX_FIELDS];
	int used[MAX_FIELDS];
};

static const char *field(struct spec_line *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->key[i], key) == 0) {
			s->used[i] = 1;
			return s->value[i];
		}
	}
	return NULL;
}

/* key's value in *out; NULL when absent, which is an error when need. */
static int value_of(struct spec_line *s, const char *key, int need, const char **out, struct buf *err)
{
	*out = field(s, key);
	if (!*out && need)
		return em_err(err, EM_EINPUT, "line %d: %s needs %s=", s->line, s->kind, key);
	return 0;
}

static int required(struct spec_line *s, const char *key, const char **out, struct buf *err)
{
	return value_of(s, key, 1, out, err);
}

static int number(struct spec_line *s, const char *key, int need, int64_t *out, struct buf *err)
{
	const char *v;
	*out = 0;
	int rc = value_of(s, key, need, &v, err);
	if (!rc && v && em_parse_i64(v, out) != 0)
		rc = em_err(err, EM_EINPUT, "line %d: %s: '%s' is not a number", s->line, key, v);
	return rc;
}

static int timestamp(struct spec_line *s, const char *key, int need, time_t *out, struct buf *err)
{
	const char *v;
	*out = 0;
	int rc = value_of(s, key, need, &v, err);
	if (!rc && v && em_parse_time(v, out) != 0)
		rc = em_err(err, EM_EINPUT, "line %d: %s: '%s' is not an RFC 3339 time", s->line, key, v);
	return rc;
}

static char *dup_field(struct spec_line *s, const char *key)
{
	const char *v = field(s, key);
	return v ? xstrdup(v) : NULL;
}

/* Every key was read: a misspelt one must not silently leave a column empty. */
static int all_used(struct spec_line *s, struct buf *err)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->used[i])
			return em_err(err, EM_EINPUT, "line %d: %s has no key '%s'", s->line, s->kind, s->key[i]);
	return 0;
}

static int apply_run(struct ledger *l, struct spec_line *s, struct buf *err)
{
	int64_t plan, run_id;
	time_t started, finished;
	const char *outcome = field(s, "outcome");
	int rc = number(s, "plan", 1, &plan, err);
	if (!rc)
		rc = timestamp(s, "started_at", 1, &started, err);
	if (!rc)
		rc = timestamp(s, "finished_at", 0, &finished, err);
	if (!rc)
		rc = all_used(s, err);
	if (rc)
		return rc;
	em_set_now(started);
	rc = ledger_apply_run_begin(l, plan, NULL, &run_id, err);
	if (!rc && outcome) {
		em_set_now(finished ? finished : started);
		rc = ledger_apply_run_end(l, run_id, outcome, err);
	}
	return rc;
}

static int apply_volume(struct ledger *l, struct spec_line *s, struct buf *err)
{
	struct apply_row r;
	memset(&r, 0, sizeof r);
	const char *v;
	time_t updated;
	int rc = number(s, "plan", 1, &r.plan_id, err);
	if (!rc)
		rc = number(s, "run", 0, &r.run_id, err);
	const char *const texts[] = {"volume", "region", "type"};
	char **const slots[] = {&r.volume_id, &r.region, &r.target_type};
	for (size_t i = 0; !rc && i < sizeof texts / sizeof *texts; i++) {
		rc = required(s, texts[i], &v, err);
		if (!rc)
			*slots[i] = xstrdup(v);
	}
	if (!rc && !(rc = required(s, "method", &v, err)) && modify_method_parse(v, &r.method) != 0)
		rc = em_err(err, EM_EINPUT, "line %d: method: '%s' is not one of vac, annotation, ec2", s->line, v);
	if (!rc && !(rc = required(s, "state", &v, err)) && apply_state_parse(v, &r.state) != 0)
		rc = em_err(err, EM_EINPUT, "line %d: state: '%s' is not an apply state", s->line, v);
	if (!rc)
		rc = number(s, "iops", 1, &r.target_iops, err);
	if (!rc)
		rc = number(s, "throughput", 1, &r.target_throughput, err);
	if (!rc)
		rc = number(s, "current_micro", 1, &r.current_monthly, err);
	if (!rc)
		rc = number(s, "target_micro", 1, &r.target_monthly, err);
	if (!rc)
		rc = timestamp(s, "updated_at", 1, &updated, err);
	if (!rc)
		rc = timestamp(s, "completed_at", 0, &r.completed_at, err);
	if (!rc)
		rc = timestamp(s, "submitted_at", 0, &r.submitted_at, err);
	if (!rc)
		rc = timestamp(s, "eligible_at", 0, &r.eligible_at, err);
	r.namespace_ = dup_field(s, "namespace");
	r.pvc = dup_field(s, "pvc");
	r.cluster = dup_field(s, "cluster");
	if (!rc)
		rc = all_used(s, err);
	if (!rc) {
		em_set_now(updated); /* the ledger stamps updated_at with the clock */
		rc = ledger_apply_save(l, &r, NULL, err);
	}
	apply_row_release(&r);
	return rc;
}

static int apply_change(struct ledger *l, struct spec_line *s, struct buf *err)
{
	struct apply_row r;
	memset(&r, 0, sizeof r);
	int64_t plan;
	const char *volume, *state, *code;
	time_t updated, eligible;
	int rc = number(s, "plan", 1, &plan, err);
	if (!rc)
		rc = required(s, "volume", &volume, err);
	if (!rc)
		rc = required(s, "state", &state, err);
	if (!rc)
		rc = timestamp(s, "updated_at", 1, &updated, err);
	if (!rc)
		rc = timestamp(s, "eligible_at", 0, &eligible, err);
	code = field(s, "error_code");
	if (!rc)
		rc = all_used(s, err);
	if (!rc && (rc = ledger_apply_get(l, plan, volume, &r, err)) == EM_ENOTFOUND)
		rc = em_err(err, EM_EINPUT, "line %d: apply_change: plan %lld has no row for %s", s->line, (long long)plan,
			    volume);
	if (!rc && apply_state_parse(state, &r.state) != 0)
		rc = em_err(err, EM_EINPUT, "line %d: state: '%s' is not an apply state", s->line, state);
	if (!rc) {
		r.eligible_at = eligible;
		if (code) {
			free(r.error_code);
			r.error_code = xstrdup(code);
		}
		em_set_now(updated);
		rc = ledger_apply_save(l, &r, NULL, err);
	}
	apply_row_release(&r);
	return rc;
}

static int inventory_run(struct ledger *l, struct spec_line *s, struct buf *err)
{
	struct ledger_inventory_run run;
	memset(&run, 0, sizeof run);
	time_t t;
	int rc = required(s, "started_at", &run.started_at, err);
	if (!rc)
		rc = timestamp(s, "started_at", 1, &t, err);
	if (!rc)
		rc = required(s, "finished_at", &run.finished_at, err);
	if (!rc)
		rc = required(s, "source", &run.source, err);
	if (!rc)
		rc = required(s, "regions", &run.regions, err);
	run.clusters = field(s, "clusters");
	run.inventory_json = field(s, "inventory_json");
	if (!rc)
		rc = number(s, "volumes", 0, &run.volumes, err);
	if (!rc)
		rc = number(s, "kube_volumes", 0, &run.kube_volumes, err);
	if (!rc)
		rc = number(s, "aws_calls", 0, &run.aws_calls, err);
	if (!rc)
		rc = all_used(s, err);
	if (!rc) {
		em_set_now(t);
		rc = ledger_inventory_record(l, &run, NULL, err);
	}
	return rc;
}

/* Splits text (modified in place) into kind and key=value fields. */
static int parse_line(char *text, int line, struct spec_line *s, struct buf *err)
{
	memset(s, 0, sizeof *s);
	s->line = line;
	char *save = NULL;
	s->kind = strtok_r(text, " \t", &save);
	for (char *tok; (tok = strtok_r(NULL, " \t", &save));) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok)
			return em_err(err, EM_EINPUT, "line %d: '%s' is not key=value", line, tok);
		if (s->n == MAX_FIELDS)
			return em_err(err, EM_EINPUT, "line %d: more than %d fields", line, MAX_FIELDS);
		*eq = '\0';
		s->key[s->n] = tok;
		s->value[s->n++] = eq + 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ledger_fixture DB < SPEC\n");
		return 2;
	}
	struct buf err = BUF_INIT;
	struct ledger *l = NULL;
	int rc = ledger_open(&l, argv[1], &err);
	char text[65536];
	int line = 0;
	while (!rc && fgets(text, sizeof text, stdin)) {
		line++;
		size_t len = strlen(text);
		if (len && text[len - 1] == '\n')
			text[--len] = '\0';
		else if (!feof(stdin))
			rc = em_err(&err, EM_EINPUT, "line %d: longer than %zu bytes", line, sizeof text - 2);
		if (rc || text[strspn(text, " \t")] == '\0' || text[strspn(text, " \t")] == '#')
			continue;
		struct spec_line s;
		rc = parse_line(text, line, &s, &err);
		if (rc)
			break;
		if (strcmp(s.kind, "apply_run") == 0)
			rc = apply_run(l, &s, &err);
		else if (strcmp(s.kind, "apply_volume") == 0)
			rc = apply_volume(l, &s, &err);
		else if (strcmp(s.kind, "apply_change") == 0)
			rc = apply_change(l, &s, &err);
		else if (strcmp(s.kind, "inventory_run") == 0)
			rc = inventory_run(l, &s, &err);
		else
			rc = em_err(&err, EM_EINPUT,
				    "line %d: unknown kind '%s' (apply_run, apply_volume, apply_change, inventory_run)", line,
				    s.kind);
	}
	ledger_close(l);
	if (rc)
		fprintf(stderr, "error: ledger_fixture: %s\n", err.s);
	buf_release(&err);
	return rc == EM_EINPUT ? 2 : rc ? 1 : 0;
}
