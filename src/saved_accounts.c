/*
 * saved_accounts.c - DIR/accounts.json of `inventory --save` with several accounts: written from
 * the fleet's account records, read back into a fleet (saved_accounts.h).
 *
 * Entry points: saved_accounts_write, saved_accounts_is, saved_accounts_load.
 * Invariants: the whole document is checked before anything is added to the fleet; account ids
 * are 12 digits; statuses are the four the live read writes ("read", "partial", "failed",
 * "skipped"); strings from the file reach messages only through buf_add_visible.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_accounts.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory_output.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/saved_accounts.h"

void saved_accounts_write(struct buf *out, const struct fleet *f, size_t first_notice)
{
	struct jsonw w;
	jsonw_document(&w, out, JSONW_PRETTY, SAVED_ACCOUNTS_SCHEMA);
	inventory_json_accounts(&w, f);
	jsonw_key(&w, "notices");
	jsonw_array(&w);
	for (size_t i = first_notice; i < f->n_notices; i++)
		jsonw_str(&w, f->notices[i]);
	jsonw_end(&w);
	jsonw_end(&w);
	buf_addc(out, '\n');
}

int saved_accounts_is(const cJSON *root)
{
	const char *schema = jsonx_str(root, "schema");
	return schema && strcmp(schema, SAVED_ACCOUNTS_SCHEMA) == 0;
}

static int status_valid(const char *s, int region)
{
	static const char *const account_statuses[] = {"read", "partial", "failed", "skipped", NULL};
	static const char *const region_statuses[] = {"read", "failed", NULL};
	for (const char *const *v = region ? region_statuses : account_statuses; s && *v; v++)
		if (strcmp(s, *v) == 0)
			return 1;
	return 0;
}

/* One optional string member: 0 (out NULL when absent or null), or EM_EINPUT said. */
static int opt_str(const cJSON *o, const char *key, const char **out, const char *origin, const char *path,
		   struct buf *err)
{
	return jsonx_want_str(o, key, out, origin, path, err);
}

/* Checks every member load uses; the fleet is untouched. */
static int check(const cJSON *root, const char *origin, struct buf *err)
{
	const char *cur;
	const cJSON *accounts, *notices, *x;
	int rc = opt_str(root, "current_account", &cur, origin, "", err);
	if (!rc && cur && !aws_account_id_valid(cur))
		rc = em_err(err, EM_EINPUT, "%s: current_account: not an AWS account id (12 digits)", origin);
	if (!rc)
		rc = jsonx_want_array(root, "accounts", &accounts, origin, "", err);
	if (!rc && !accounts)
		rc = em_err(err, EM_EINPUT, "%s: accounts: missing (an array of the accounts read)", origin);
	if (!rc)
		rc = jsonx_want_array(root, "notices", &notices, origin, "", err);
	int i = 0;
	struct buf path = BUF_INIT;
	const cJSON *none = NULL;
	if (rc)
		accounts = notices = none;
	cJSON_ArrayForEach(x, accounts)
	{
		buf_reset(&path);
		buf_addf(&path, "accounts[%d]", i++);
		const char *id, *name, *profile, *role, *status, *error;
		const cJSON *regions, *g;
		if (!cJSON_IsObject(x)) {
			rc = em_err(err, EM_EINPUT, "%s: %s: must be an object, got %s", origin, path.s, jsonx_type_name(x));
			break;
		}
		if ((rc = opt_str(x, "id", &id, origin, path.s, err)) || (rc = opt_str(x, "name", &name, origin, path.s, err)) ||
		    (rc = opt_str(x, "profile", &profile, origin, path.s, err)) ||
		    (rc = opt_str(x, "role_arn", &role, origin, path.s, err)) ||
		    (rc = opt_str(x, "status", &status, origin, path.s, err)) ||
		    (rc = opt_str(x, "error", &error, origin, path.s, err)) ||
		    (rc = jsonx_want_array(x, "regions", &regions, origin, path.s, err)))
			break;
		if (id && !aws_account_id_valid(id)) {
			rc = em_err(err, EM_EINPUT, "%s: %s.id: not an AWS account id (12 digits)", origin, path.s);
			break;
		}
		if (!status_valid(status, 0)) {
			rc = em_err(err, EM_EINPUT, "%s: %s.status: must be read, partial, failed or skipped", origin, path.s);
			break;
		}
		int k = 0;
		cJSON_ArrayForEach(g, regions)
		{
			const char *region, *rstatus, *rerror;
			int64_t vols;
			int present;
			struct buf rp = BUF_INIT;
			buf_addf(&rp, "%s.regions[%d]", path.s, k++);
			if (!cJSON_IsObject(g))
				rc = em_err(err, EM_EINPUT, "%s: %s: must be an object, got %s", origin, rp.s, jsonx_type_name(g));
			if (!rc && !(rc = opt_str(g, "region", &region, origin, rp.s, err)) && (!region || !*region))
				rc = em_err(err, EM_EINPUT, "%s: %s.region: missing", origin, rp.s);
			if (!rc && !(rc = opt_str(g, "status", &rstatus, origin, rp.s, err)) && !status_valid(rstatus, 1))
				rc = em_err(err, EM_EINPUT, "%s: %s.status: must be read or failed", origin, rp.s);
			if (!rc)
				rc = opt_str(g, "error", &rerror, origin, rp.s, err);
			if (!rc)
				rc = jsonx_int(g, "volumes", 0, INT64_MAX, &vols, &present, origin, rp.s, err);
			buf_release(&rp);
			if (rc)
				break;
		}
		if (rc)
			break;
	}
	i = 0;
	if (rc)
		notices = none;
	cJSON_ArrayForEach(x, notices)
	{
		if (!cJSON_IsString(x)) {
			rc = em_err(err, EM_EINPUT, "%s: notices[%d]: must be a string, got %s", origin, i, jsonx_type_name(x));
			break;
		}
		i++;
	}
	buf_release(&path);
	return rc;
}

static int has_account(const struct fleet *f, const char *id)
{
	for (size_t i = 0; id && i < f->n_accounts; i++)
		if (f->accounts[i].id && strcmp(f->accounts[i].id, id) == 0)
			return 1;
	return 0;
}

int saved_accounts_load(struct fleet *f, const char *text, size_t len, const char *origin, struct buf *err)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	if (!root || !cJSON_IsObject(root) || !saved_accounts_is(root)) {
		cJSON_Delete(root);
		return em_err(err, EM_EINPUT, "%s: not a saved accounts document (schema %s)", origin,
			      SAVED_ACCOUNTS_SCHEMA);
	}
	int rc = check(root, origin, err);
	if (rc) {
		cJSON_Delete(root);
		return rc;
	}
	const char *cur = jsonx_str(root, "current_account");
	if (cur && !f->current_account)
		f->current_account = xstrdup(cur);
	const cJSON *x, *g;
	cJSON_ArrayForEach(x, jsonx_get(root, "accounts"))
	{
		const char *id = jsonx_str(x, "id");
		if (has_account(f, id))
			continue;
		f->accounts = xrealloc(f->accounts, (f->n_accounts + 1) * sizeof *f->accounts);
		struct fleet_account *a = &f->accounts[f->n_accounts++];
		memset(a, 0, sizeof *a);
		a->id = xstrdup(id);
		a->name = xstrdup(jsonx_str(x, "name"));
		a->profile = xstrdup(jsonx_str(x, "profile"));
		a->role_arn = xstrdup(jsonx_str(x, "role_arn"));
		a->status = xstrdup(jsonx_str(x, "status"));
		a->error = xstrdup(jsonx_str(x, "error"));
		const cJSON *regions = jsonx_get(x, "regions");
		int n = cJSON_GetArraySize(regions); /* 0 when absent (checked: an array or absent) */
		a->regions = xcalloc(n ? (size_t)n : 1, sizeof *a->regions);
		cJSON_ArrayForEach(g, regions)
		{
			struct fleet_account_region *r = &a->regions[a->n_regions++];
			r->region = xstrdup(jsonx_str(g, "region"));
			r->status = xstrdup(jsonx_str(g, "status"));
			r->error = xstrdup(jsonx_str(g, "error"));
			const cJSON *v = jsonx_get(g, "volumes");
			r->volumes = cJSON_IsNumber(v) ? (size_t)v->valuedouble : 0;
		}
	}
	cJSON_ArrayForEach(x, jsonx_get(root, "notices"))
		fleet_add_notice(f, "%s", x->valuestring);
	cJSON_Delete(root);
	return 0;
}
