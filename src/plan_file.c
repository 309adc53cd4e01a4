/*
 * plan_file.c - saved plan documents for `apply --plan FILE` (see plan_file.h).
 *
 * Entry points: plan_file_load / plan_file_parse (read and check), plan_file_record (find or
 * record the document in the database), plan_file_release.
 *
 * Invariants: a document that fails any check is refused whole, before anything touches the
 * database; the bytes recorded are the bytes read (no re-serialisation), so `plan --out` then
 * `apply --plan` on the same database finds the plan it came from.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/plan_file.h"
#include "ebsmigrate/planner.h"

void plan_file_release(struct plan_file *pf)
{
	free(pf->path);
	free(pf->json);
	free(pf->mode);
	memset(pf, 0, sizeof *pf);
}

static int bad(struct buf *err, const char *path, const char *field, const char *what)
{
	return em_err(err, EM_EINPUT, "plan file '%s': %s: %s", path, field, what);
}

static int is_integer(const cJSON *v, int64_t min)
{
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble) &&
	       v->valuedouble >= (double)min && v->valuedouble <= 9.0e15;
}

/* The members apply reads from one volume (apply.c load_items). */
static int check_volume(const cJSON *v, size_t i, const char *path, struct buf *err)
{
	char field[64];
	snprintf(field, sizeof field, "volumes[%zu]", i);
	if (!cJSON_IsObject(v))
		return bad(err, path, field, "not an object");
	char sub[96];
	if (!jsonx_str(v, "volume_id")) {
		snprintf(sub, sizeof sub, "%s.volume_id", field);
		return bad(err, path, sub, "missing or not a string");
	}
	const char *action = jsonx_str(v, "action");
	snprintf(sub, sizeof sub, "%s.action", field);
	if (!action)
		return bad(err, path, sub, "missing or not a string");
	int acts = strcmp(action, "migrate") == 0 || strcmp(action, "blocked") == 0;
	if (!acts && strcmp(action, "review") != 0 && strcmp(action, "skip") != 0)
		return em_err(err, EM_EINPUT, "plan file '%s': %s: '%s' is not one of migrate, blocked, review, skip",
			      path, sub, action);
	if (!acts)
		return 0;
	if (!jsonx_str(v, "region")) {
		snprintf(sub, sizeof sub, "%s.region", field);
		return bad(err, path, sub, "missing or not a string (a volume to migrate needs its region)");
	}
	const cJSON *t = jsonx_get(v, "target");
	snprintf(sub, sizeof sub, "%s.target", field);
	if (!cJSON_IsObject(t))
		return bad(err, path, sub, "missing or not an object (a volume to migrate needs its target)");
	if (!jsonx_str(t, "type")) {
		snprintf(sub, sizeof sub, "%s.target.type", field);
		return bad(err, path, sub, "missing or not a string");
	}
	static const char *const nums[] = {"iops", "throughput_mibps"};
	for (size_t k = 0; k < 2; k++)
		if (!is_integer(jsonx_get(t, nums[k]), 0)) {
			snprintf(sub, sizeof sub, "%s.target.%s", field, nums[k]);
			return bad(err, path, sub, "missing or not a whole number");
		}
	return 0;
}

static int check_document(struct plan_file *out, const cJSON *root, const char *path, struct buf *err)
{
	if (!cJSON_IsObject(root))
		return bad(err, path, "(top level)", "not an object: not a plan document");
	const char *schema = jsonx_str(root, "schema");
	if (!schema)
		return bad(err, path, "schema", "missing: not a plan document (write one with 'ebsmigrate plan --out FILE')");
	if (strcmp(schema, PLAN_FILE_SCHEMA) != 0)
		return em_err(err, EM_EINPUT, "plan file '%s': schema: '%s', expected '%s'", path, schema,
			      PLAN_FILE_SCHEMA);
	const char *gen = jsonx_str(root, "generated_at");
	time_t t;
	if (!gen || em_parse_time(gen, &t))
		return bad(err, path, "generated_at", "missing or not an RFC 3339 time");
	em_format_time(t, out->generated_at);
	const char *mode = jsonx_str(root, "mode");
	enum plan_mode m;
	if (!mode || plan_mode_parse(mode, &m))
		return bad(err, path, "mode", "missing or not one of match, baseline, observed");
	const cJSON *vols = jsonx_get(root, "volumes");
	if (!cJSON_IsArray(vols))
		return bad(err, path, "volumes", "missing or not an array");
	size_t i = 0;
	const cJSON *v;
	cJSON_ArrayForEach(v, vols)
	{
		int rc = check_volume(v, i++, path, err);
		if (rc)
			return rc;
	}
	const cJSON *totals = jsonx_get(root, "totals");
	if (!cJSON_IsObject(totals))
		return bad(err, path, "totals", "missing or not an object");
	const cJSON *n = jsonx_get(totals, "volumes");
	if (!is_integer(n, 0))
		return bad(err, path, "totals.volumes", "missing or not a whole number");
	const cJSON *s = jsonx_get(totals, "savings_monthly_usd");
	if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble) || fabs(s->valuedouble) > 9.0e9)
		return bad(err, path, "totals.savings_monthly_usd", "missing or not an amount in USD");
	out->mode = xstrdup(mode);
	out->volumes = (int64_t)n->valuedouble;
	/* The document rounds money to cents: exact enough to recover the micro-dollar value. */
	out->savings_monthly = money_from_json_usd(s->valuedouble);
	return 0;
}

int plan_file_parse(struct plan_file *out, const char *path, const char *text, size_t len, struct buf *err)
{
	memset(out, 0, sizeof *out);
	if (memchr(text, '\0', len))
		return em_err(err, EM_EINPUT, "plan file '%s': not a plan document (it contains NUL bytes)", path);
	struct buf origin = BUF_INIT;
	buf_addf(&origin, "plan file '%s'", path);
	cJSON *root = jsonx_parse(text, len, origin.s, err);
	buf_release(&origin);
	if (!root)
		return EM_EINPUT;
	int rc = check_document(out, root, path, err);
	cJSON_Delete(root);
	if (rc) {
		plan_file_release(out);
		return rc;
	}
	out->path = xstrdup(path);
	out->json = xmalloc(len + 1);
	memcpy(out->json, text, len);
	out->json[len] = '\0';
	out->len = len;
	return 0;
}

int plan_file_load(struct plan_file *out, const char *path, struct buf *err)
{
	memset(out, 0, sizeof *out);
	struct buf text = BUF_INIT;
	int rc = em_read_file(path, &text, err);
	if (!rc)
		rc = plan_file_parse(out, path, text.s ? text.s : "", text.len, err);
	buf_release(&text);
	return rc;
}

int plan_file_record(struct ledger *l, const struct plan_file *pf, int64_t *id_out, int *recorded, struct buf *err)
{
	return ledger_plan_find_or_record(l, pf->generated_at, pf->mode, 0, pf->volumes, pf->savings_monthly, pf->json,
					  id_out, recorded, err);
}
