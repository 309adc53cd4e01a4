/*
 * plan_file.c - plan documents: read back for `apply --plan FILE` and for apply of a recorded
 * plan (see plan_file.h).
 *
 * Entry points: plan_doc_parse (the one reader of plan documents), plan_target_check,
 * plan_file_load / plan_file_parse (read and check a file), plan_file_record (find or record the
 * document in the database), plan_file_release, plan_doc_release.
 *
 * Invariants: a document that fails any check is refused whole, before anything touches the
 * database; every migrate/blocked volume has a gp3 target within the gp3 limits for its size
 * (so apply never sends another type, and never a ratio EC2 would refuse), and every name apply
 * puts into a request, a ledger row or a Kubernetes API path is checked against its grammar:
 * volume id, region, availability zone (inside the region), account, cluster (a DNS-1123 name
 * or an EKS cluster ARN), namespace and PVC (DNS-1123, kube_dns_name_ok); nothing but
 * whitespace may follow the document; the bytes recorded are the bytes read (no
 * re-serialisation), so `plan --out` then `apply --plan` on the same database finds the plan it
 * came from.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/ebs.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
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

static void entry_release(struct plan_entry *e)
{
	free(e->volume_id), free(e->region), free(e->account);
	free(e->cluster), free(e->namespace_), free(e->pvc), free(e->driver);
}

void plan_doc_release(struct plan_doc *d)
{
	for (size_t i = 0; i < d->n; i++)
		entry_release(&d->v[i]);
	free(d->v);
	free(d->mode);
	memset(d, 0, sizeof *d);
}

static int bad(struct buf *err, const char *origin, const char *field, const char *what)
{
	return em_err(err, EM_EINPUT, "%s: %s: %s", origin, field, what);
}

static int is_integer(const cJSON *v, int64_t min)
{
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble) &&
	       v->valuedouble >= (double)min && v->valuedouble <= 9.0e15;
}

/* An amount in USD or null (unpriced): 0 for null. */
static int usd_or_null(const cJSON *v, micro_t *out)
{
	*out = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > 9.0e9)
		return -1;
	*out = money_from_json_usd(v->valuedouble);
	return 0;
}

int plan_target_check(enum ebs_type type, int64_t size_gib, int64_t iops, int64_t throughput, const char **field,
		      struct buf *err)
{
	if (type != EBS_GP3) {
		*field = "target.type";
		return em_err(err, EM_EINPUT, "'%s' is not gp3 (apply migrates volumes to gp3 only)",
			      ebs_type_name(type));
	}
	/* One check (ebs_gp3_validate) applied to growing configurations, so the member at fault is
	 * the first one that makes it fail: the size, then IOPS (with the baseline throughput, which
	 * every IOPS of 3,000 or more allows), then throughput. */
	struct ebs_config cfg = {EBS_GP3, size_gib, GP3_BASE_IOPS, GP3_BASE_MIBPS};
	*field = "size_gib";
	if (ebs_gp3_validate(&cfg, err))
		return EM_EINPUT;
	cfg.iops = iops;
	*field = "target.iops";
	if (ebs_gp3_validate(&cfg, err))
		return EM_EINPUT;
	cfg.throughput = throughput;
	*field = "target.throughput_mibps";
	if (ebs_gp3_validate(&cfg, err))
		return EM_EINPUT;
	*field = NULL;
	return 0;
}

/* Copies a string member, or NULL when absent; EM_EINPUT when present but not a string. */
static int opt_str(const cJSON *o, const char *key, char **out)
{
	const cJSON *v = jsonx_get(o, key);
	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return EM_EINPUT;
	*out = xstrdup(v->valuestring);
	return 0;
}

/* An account apply may route a volume by: a 12-digit id, or the label an export was given
 * (`--from-aws-json LABEL=FILE`: letters, digits, '.', '_' and '-', starting with a letter or a
 * digit), which acts with the base credentials. */
static int account_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 12 && strspn(s, "0123456789") == 12)
		return 1;
	if (n == 0 || n > 64 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= '0' && s[0] <= '9')))
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* The names of a volume to migrate that apply puts into requests, ledger rows and Kubernetes API
 * paths (region, zone, account, cluster, namespace, PVC), each checked against its grammar. On
 * a violation: *member names the field and why says what is wrong. */
static int names_ok(const struct plan_entry *e, const char *az, const char **member, struct buf *why)
{
	if (!volume_region_ok(e->region)) {
		*member = "region";
		buf_addf(why, "'%.64s' is not an AWS region name (lower-case, like us-east-1)", e->region);
	} else if (az && !volume_az_in_region(az, e->region)) {
		*member = "availability_zone";
		buf_addf(why, "'%.64s' is not an availability zone of region '%s'", az, e->region);
	} else if (e->account && !account_ok(e->account)) {
		*member = "account";
		buf_addf(why, "'%.64s' is not an AWS account id (12 digits) or an export's account label", e->account);
	} else if (e->cluster && !kube_cluster_name_ok(e->cluster)) {
		*member = "kubernetes.cluster";
		buf_addf(why, "'%.64s' is not a kubeconfig context name ebsmigrate reads (a DNS-1123 name, an EKS "
			      "cluster ARN or an eksctl context)",
			 e->cluster);
	} else if (e->namespace_ && !kube_dns_name_ok(e->namespace_, strlen(e->namespace_), 0)) {
		*member = "kubernetes.namespace";
		buf_addf(why, "'%.64s' is not a Kubernetes namespace name (DNS-1123 label: lower-case letters, digits "
			      "and '-', at most 63)",
			 e->namespace_);
	} else if (e->pvc && !kube_dns_name_ok(e->pvc, strlen(e->pvc), 1)) {
		*member = "kubernetes.pvc";
		buf_addf(why, "'%.64s' is not a Kubernetes object name (DNS-1123 subdomain: lower-case letters, digits, "
			      "'-' and '.', at most 253)",
			 e->pvc);
	} else if (e->pvc && (!e->namespace_ || !e->cluster)) {
		*member = e->namespace_ ? "kubernetes.cluster" : "kubernetes.namespace";
		buf_adds(why, "missing (a PVC to patch needs its cluster and namespace)");
	}
	return why->len == 0;
}

/* Checks volumes[i]; a migrate or blocked volume is appended to d. */
static int check_volume(struct plan_doc *d, const cJSON *v, size_t i, const char *origin, struct buf *err)
{
	struct buf field = BUF_INIT;
	int rc = 0;
	buf_addf(&field, "volumes[%zu]", i);
#define FAIL(member, what)                                                                              \
	do {                                                                                            \
		rc = em_err(err, EM_EINPUT, "%s: %s.%s: %s", origin, field.s, (member), (what));         \
		goto out;                                                                               \
	} while (0)
	if (!cJSON_IsObject(v)) {
		rc = bad(err, origin, field.s, "not an object");
		goto out;
	}
	const char *vid = jsonx_str(v, "volume_id");
	if (!vid)
		FAIL("volume_id", "missing or not a string");
	const char *action = jsonx_str(v, "action");
	enum plan_action act = ACTION_SKIP;
	int acts = action && !plan_action_parse(action, &act) && (act == ACTION_MIGRATE || act == ACTION_BLOCKED);
	if (acts && !volume_id_ok(vid)) {
		rc = em_err(err, EM_EINPUT, "%s: %s.volume_id: '%.64s' is not an EBS volume id (vol- and hex digits)", origin,
			    field.s, vid);
		goto out;
	}
	buf_addf(&field, " (volume '%s')", vid);
	if (!action)
		FAIL("action", "missing or not a string");
	if (plan_action_parse(action, &act)) {
		rc = em_err(err, EM_EINPUT, "%s: %s.action: '%s' is not one of migrate, blocked, review, skip", origin,
			    field.s, action);
		goto out;
	}
	if (!acts)
		goto out;
	if (!jsonx_str(v, "region"))
		FAIL("region", "missing or not a string (a volume to migrate needs its region)");
	const cJSON *azj = jsonx_get(v, "availability_zone");
	if (azj && !cJSON_IsNull(azj) && !cJSON_IsString(azj))
		FAIL("availability_zone", "not a string");
	const cJSON *size = jsonx_get(v, "size_gib");
	if (!is_integer(size, -9000000000000000LL))
		FAIL("size_gib", "missing or not a whole number (a volume to migrate needs its size)");
	if (size->valuedouble < GP3_MIN_GIB || size->valuedouble > GP3_MAX_GIB) {
		rc = em_err(err, EM_EINPUT, "%s: %s.size_gib: %.0f is outside %d..%d", origin, field.s, size->valuedouble,
			    GP3_MIN_GIB, GP3_MAX_GIB);
		goto out;
	}
	static const char *const current[] = {"iops", "throughput_mibps"};
	for (size_t k = 0; k < 2; k++) {
		const cJSON *n = jsonx_get(v, current[k]);
		if (n && !cJSON_IsNull(n) && !is_integer(n, 0))
			FAIL(current[k], "not a whole number");
	}
	if (jsonx_get(v, "type") && !cJSON_IsNull(jsonx_get(v, "type")) && !jsonx_str(v, "type"))
		FAIL("type", "not a string");
	const cJSON *t = jsonx_get(v, "target");
	if (!cJSON_IsObject(t))
		FAIL("target", "missing or not an object (a volume to migrate needs its target)");
	const char *ttype = jsonx_str(t, "type");
	if (!ttype)
		FAIL("target.type", "missing or not a string");
	if (!is_integer(jsonx_get(t, "iops"), 0))
		FAIL("target.iops", "missing or not a whole number");
	if (!is_integer(jsonx_get(t, "throughput_mibps"), 0))
		FAIL("target.throughput_mibps", "missing or not a whole number");
	struct plan_entry e;
	memset(&e, 0, sizeof e);
	e.size_gib = (int64_t)size->valuedouble;
	e.target_iops = (int64_t)jsonx_get(t, "iops")->valuedouble;
	e.target_throughput = (int64_t)jsonx_get(t, "throughput_mibps")->valuedouble;
	struct buf why = BUF_INIT;
	const char *at = NULL;
	if (strcmp(ttype, "gp3") != 0) {
		buf_addf(&why, "'%s' is not gp3 (apply migrates volumes to gp3 only)", ttype);
		at = "target.type";
	} else {
		plan_target_check(EBS_GP3, e.size_gib, e.target_iops, e.target_throughput, &at, &why);
	}
	if (at) {
		rc = em_err(err, EM_EINPUT, "%s: %s.%s: %s", origin, field.s, at, why.s);
		buf_release(&why);
		goto out;
	}
	buf_release(&why);
	static const char *const money[] = {"current_monthly_usd", "target_monthly_usd", "savings_monthly_usd"};
	micro_t *dst[] = {&e.current_monthly, &e.target_monthly, &e.savings_monthly};
	for (size_t k = 0; k < 3; k++)
		if (usd_or_null(jsonx_get(v, money[k]), dst[k]))
			FAIL(money[k], "not an amount in USD");
	const cJSON *k8s = jsonx_get(v, "kubernetes");
	if (k8s && !cJSON_IsNull(k8s) && !cJSON_IsObject(k8s))
		FAIL("kubernetes", "not an object");
	static const char *const kkeys[] = {"cluster", "namespace", "pvc", "driver"};
	char **kdst[] = {&e.cluster, &e.namespace_, &e.pvc, &e.driver};
	for (size_t k = 0; k < 4; k++)
		if (cJSON_IsObject(k8s) && opt_str(k8s, kkeys[k], kdst[k])) {
			entry_release(&e);
			rc = em_err(err, EM_EINPUT, "%s: %s.kubernetes.%s: not a string", origin, field.s, kkeys[k]);
			goto out;
		}
	if (opt_str(v, "account", &e.account)) {
		entry_release(&e);
		FAIL("account", "not a string");
	}
	e.volume_id = xstrdup(vid);
	e.region = xstrdup(jsonx_str(v, "region"));
	const char *bad_member = NULL;
	struct buf bad_why = BUF_INIT;
	if (!names_ok(&e, cJSON_IsString(azj) ? azj->valuestring : NULL, &bad_member, &bad_why)) {
		rc = em_err(err, EM_EINPUT, "%s: %s.%s: %s", origin, field.s, bad_member, bad_why.s);
		buf_release(&bad_why);
		entry_release(&e);
		goto out;
	}
	buf_release(&bad_why);
	e.type = ebs_type_parse(jsonx_str(v, "type"));
	const cJSON *n = jsonx_get(v, "iops");
	e.iops = cJSON_IsNumber(n) ? (int64_t)n->valuedouble : 0;
	n = jsonx_get(v, "throughput_mibps");
	e.throughput = cJSON_IsNumber(n) ? (int64_t)n->valuedouble : 0;
	e.index = i;
	XGROW(d->v, d->n, d->alloc);
	d->v[d->n++] = e;
#undef FAIL
out:
	buf_release(&field);
	return rc;
}

static int check_document(struct plan_doc *d, const cJSON *root, const char *origin, struct buf *err)
{
	if (!cJSON_IsObject(root))
		return bad(err, origin, "(top level)", "not an object: not a plan document");
	const char *schema = jsonx_str(root, "schema");
	if (!schema)
		return bad(err, origin, "schema", "missing: not a plan document (write one with 'ebsmigrate plan --out FILE')");
	if (strcmp(schema, PLAN_FILE_SCHEMA) != 0)
		return em_err(err, EM_EINPUT, "%s: schema: '%s', expected '%s'", origin, schema, PLAN_FILE_SCHEMA);
	const char *gen = jsonx_str(root, "generated_at");
	time_t t;
	if (!gen || em_parse_time(gen, &t))
		return bad(err, origin, "generated_at", "missing or not an RFC 3339 time");
	em_format_time(t, d->generated_at);
	const char *mode = jsonx_str(root, "mode");
	enum plan_mode m;
	if (!mode || plan_mode_parse(mode, &m))
		return bad(err, origin, "mode", "missing or not one of match, baseline, observed");
	const cJSON *vols = jsonx_get(root, "volumes");
	if (!cJSON_IsArray(vols))
		return bad(err, origin, "volumes", "missing or not an array");
	size_t i = 0;
	const cJSON *v;
	cJSON_ArrayForEach(v, vols)
	{
		int rc = check_volume(d, v, i++, origin, err);
		if (rc)
			return rc;
	}
	const cJSON *totals = jsonx_get(root, "totals");
	if (!cJSON_IsObject(totals))
		return bad(err, origin, "totals", "missing or not an object");
	const cJSON *n = jsonx_get(totals, "volumes");
	if (!is_integer(n, 0))
		return bad(err, origin, "totals.volumes", "missing or not a whole number");
	const cJSON *s = jsonx_get(totals, "savings_monthly_usd");
	if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble) || fabs(s->valuedouble) > 9.0e9)
		return bad(err, origin, "totals.savings_monthly_usd", "missing or not an amount in USD");
	d->mode = xstrdup(mode);
	d->volumes = (int64_t)n->valuedouble;
	/* The document rounds money to cents: exact enough to recover the micro-dollar value. */
	d->savings_monthly = money_from_json_usd(s->valuedouble);
	return 0;
}

int plan_doc_parse(struct plan_doc *out, const char *origin, const char *text, size_t len, struct buf *err)
{
	memset(out, 0, sizeof *out);
	if (memchr(text, '\0', len))
		return em_err(err, EM_EINPUT, "%s: not a plan document (it contains NUL bytes)", origin);
	const char *end = NULL;
	/* RFC 8259's strings (no raw control byte: a tampered name must not pass as a string) */
	cJSON *root = jsonx_parse_value_in(NULL, text, len, &end);
	if (!root) { /* jsonx_parse words the error (where, or empty) */
		if (jsonx_skip_ws(text, len, 0) < len && end && end >= text && end <= text + len)
			return jsonx_syntax_error(text, len, (size_t)(end - text), origin, err);
		return (root = jsonx_parse(text, len, origin, err)) ? (cJSON_Delete(root), EM_EINPUT) : EM_EINPUT;
	}
	size_t off = jsonx_skip_ws(text, len, end && end >= text && end <= text + len ? (size_t)(end - text) : len);
	if (off < len) {
		size_t line, col;
		jsonx_line_col(text, off, &line, &col);
		cJSON_Delete(root);
		return em_err(err, EM_EINPUT,
			      "%s: trailing data after the plan document at line %zu, column %zu (one document per file: "
			      "concatenated documents are refused, not truncated)",
			      origin, line, col);
	}
	int rc = check_document(out, root, origin, err);
	cJSON_Delete(root);
	if (rc)
		plan_doc_release(out);
	return rc;
}

int plan_file_parse(struct plan_file *out, const char *path, const char *text, size_t len, struct buf *err)
{
	memset(out, 0, sizeof *out);
	struct buf origin = BUF_INIT;
	buf_addf(&origin, "plan file '%s'", path);
	struct plan_doc d;
	int rc = plan_doc_parse(&d, origin.s, text, len, err);
	buf_release(&origin);
	if (rc)
		return rc;
	memcpy(out->generated_at, d.generated_at, sizeof out->generated_at);
	out->mode = d.mode;
	d.mode = NULL;
	out->volumes = d.volumes;
	out->savings_monthly = d.savings_monthly;
	plan_doc_release(&d);
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
	int rc = em_read_input(path, &text, err);
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
