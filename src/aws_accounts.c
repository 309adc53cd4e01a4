/*
 * aws_accounts.c - account lists, role ARN templates, STS session names and Organizations
 * ListAccounts (aws_accounts.h).
 *
 * Entry points: aws_account_id_valid, aws_accounts_parse, aws_role_name_check, aws_role_arn_template_check,
 * aws_role_arn_expand, aws_session_name_sanitize, aws_org_parse_list_accounts,
 * aws_org_list_accounts, aws_org_parse_describe_account, aws_org_describe_account,
 * org_account_list_release, aws_account_clients_init/get/release.
 * Invariants: an id that reaches a list is 12 digits; a ListAccounts answer is parsed whole
 * before anything is appended (a bad page adds nothing); its pages go through the page guard
 * (paging.h: a NextToken received before, or more than 1,000 pages, stops the loop).
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_accounts.h"
#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_sts.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/paging.h"

#define ORG_TARGET "AWSOrganizationsV20161128.ListAccounts"
#define ORG_MAX_PAGES 1000

int aws_account_id_valid(const char *s)
{
	if (!s)
		return 0;
	size_t n = 0;
	for (; s[n]; n++)
		if (s[n] < '0' || s[n] > '9')
			return 0;
	return n == 12;
}

/* One id of a list: checked, then added unless present. where: "" or " in FILE line N". */
static int add_id(struct strlist *out, const char *opt, const char *id, size_t len, const char *where,
		  struct buf *err)
{
	char *s = xstrndup(id, len);
	int rc = 0;
	if (!aws_account_id_valid(s)) {
		struct buf v = BUF_INIT;
		buf_add_visible(&v, s);
		rc = em_err(err, EM_EINPUT, "%s: '%s'%s is not an AWS account id (12 digits)", opt, v.s, where);
		buf_release(&v);
	} else if (!strlist_contains(out, s)) {
		strlist_append(out, s);
	}
	free(s);
	return rc;
}

static int parse_text(struct strlist *out, const char *opt, const char *text, size_t len, const char *file,
		      size_t *added, struct buf *err)
{
	size_t line = 1, i = 0;
	struct buf where = BUF_INIT;
	int rc = 0;
	while (i < len && !rc) {
		char c = text[i];
		if (c == '#') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		if (c == '\n')
			line++;
		if (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			i++;
			continue;
		}
		size_t start = i;
		while (i < len && !strchr(", \t\r\n#", text[i]) && text[i] != '\0')
			i++;
		if (i == start) /* a NUL byte */
			i++;
		buf_reset(&where);
		if (file)
			buf_addf(&where, " in %s line %zu", file, line);
		rc = add_id(out, opt, text + start, i - start, where.s ? where.s : "", err);
		(*added)++;
	}
	buf_release(&where);
	return rc;
}

int aws_accounts_parse(struct strlist *out, const char *opt, const char *arg, struct buf *err)
{
	size_t added = 0;
	if (arg[0] == '@') {
		const char *path = arg + 1;
		if (!*path)
			return em_err(err, EM_EINPUT, "%s: '@' names no file (use @FILE)", opt);
		struct buf text = BUF_INIT, e = BUF_INIT;
		int rc = em_read_file_max(path, EM_MAX_LIST_FILE, &text, &e);
		if (rc)
			rc = em_err(err, EM_EINPUT, "%s: %s", opt, e.s);
		else
			rc = parse_text(out, opt, text.s ? text.s : "", text.len, path, &added, err);
		if (!rc && !added)
			rc = em_err(err, EM_EINPUT, "%s: file '%s' holds no account id", opt, path);
		buf_release(&text);
		buf_release(&e);
		return rc;
	}
	int rc = parse_text(out, opt, arg, strlen(arg), NULL, &added, err);
	if (!rc && !added)
		rc = em_err(err, EM_EINPUT, "%s: no account id given (ID[,ID...] or @FILE)", opt);
	return rc;
}

/* A byte IAM allows in a role name (and, here, in each segment of its path). */
static int role_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c && strchr("_+=,.@-", c));
}

/* Why name[0..n) is not an IAM role name with an optional path (PATH/.../NAME), "" when a byte
 * is outside the characters, NULL when it is one. IAM's paths allow more (any printable ASCII),
 * but a role ebsmigrate is told to assume has a name of IAM's characters in segments of them:
 * no '.' or '..' segment and no empty one, so no name can turn into another path. */
static const char *role_name_problem(const char *name, size_t n)
{
	if (!n)
		return "it is empty";
	if (n > 512)
		return "longer than 512 characters";
	const char *seg = name, *end = name + n;
	for (;;) {
		const char *slash = memchr(seg, '/', (size_t)(end - seg));
		size_t len = (size_t)((slash ? slash : end) - seg);
		for (size_t i = 0; i < len; i++)
			if (!role_char(seg[i]))
				return "";
		if (!len)
			return "a path segment is empty (a leading, trailing or doubled '/')";
		if (strspn(seg, ".") >= len && len <= 2)
			return "a path segment is '.' or '..'";
		if (!slash)
			return len > 64 ? "the name after the last '/' is longer than 64 characters" : NULL;
		seg = slash + 1;
	}
}

/* "OPT: 'VALUE' is not an IAM role name (...)[: why]", VALUE as visible text. */
static int role_name_error(struct buf *err, const char *opt, const char *value, const char *why)
{
	struct buf v = BUF_INIT;
	buf_add_visible(&v, value);
	int rc = em_err(err, EM_EINPUT, "%s: '%s' is not an IAM role name ([A-Za-z0-9_+=,.@-], a path with '/')%s%s",
			opt, v.s, *why ? ": " : "", why);
	buf_release(&v);
	return rc;
}

int aws_role_name_check(const char *opt, const char *name, struct buf *err)
{
	const char *why = role_name_problem(name, strlen(name));
	return why ? role_name_error(err, opt, name, why) : 0;
}

/* A partition as ARNs name it: lower-case words joined by '-' (aws, aws-cn, aws-us-gov). */
static int partition_ok(const char *p, size_t n)
{
	if (!n || p[0] == '-' || p[n - 1] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || p[i] == '-'))
			return 0;
	return 1;
}

int aws_role_arn_template_check(const char *tmpl, struct buf *err)
{
	struct buf v = BUF_INIT;
	buf_add_visible(&v, tmpl);
	int accounts = 0, rc = 0;
	for (const char *p = tmpl; *p && !rc; p++) {
		if (*p != '$')
			continue;
		if (strncmp(p, "${account}", 10) == 0) {
			accounts++;
			p += 9;
		} else if (strncmp(p, "${partition}", 12) == 0) {
			p += 11;
		} else {
			rc = em_err(err, EM_EINPUT, "--role-arn-template: '%s': only ${partition} and ${account} may follow '$'",
				    v.s);
		}
	}
	/* arn:PARTITION:iam::${account}:role/PATH/NAME, field by field */
	const char *f[6] = {tmpl};
	size_t n_fields = 1;
	for (const char *p = tmpl; *p && n_fields < 7; p++)
		if (*p == ':' && n_fields++ < 6)
			f[n_fields - 1] = p + 1;
	if (!rc && (n_fields != 6 || strncmp(tmpl, "arn:", 4) != 0 || strncmp(f[2], "iam::", 5) != 0 ||
		    strncmp(f[5], "role/", 5) != 0))
		rc = em_err(err, EM_EINPUT,
			    "--role-arn-template: '%s' is not an IAM role ARN (arn:${partition}:iam::${account}:role/NAME)", v.s);
	if (!rc && !accounts)
		rc = em_err(err, EM_EINPUT,
			    "--role-arn-template: '%s' has no ${account}: every account would assume the same role", v.s);
	if (!rc && (accounts > 1 || (size_t)(f[5] - f[4]) != 11 || strncmp(f[4], "${account}:", 11) != 0))
		rc = em_err(err, EM_EINPUT,
			    "--role-arn-template: '%s': ${account} must be the ARN's account field, once "
			    "(arn:${partition}:iam::${account}:role/NAME)",
			    v.s);
	size_t plen = f[1] && f[2] ? (size_t)(f[2] - f[1] - 1) : 0;
	if (!rc && !(plen == 12 && strncmp(f[1], "${partition}", 12) == 0) && !partition_ok(f[1], plen))
		rc = em_err(err, EM_EINPUT,
			    "--role-arn-template: '%s': the partition must be ${partition} or a partition's name (aws, "
			    "aws-cn, aws-us-gov)",
			    v.s);
	const char *why = rc ? NULL : role_name_problem(f[5] + 5, strlen(f[5] + 5));
	if (why) {
		struct buf role = BUF_INIT;
		buf_add_visible(&role, f[5] + 5);
		rc = em_err(err, EM_EINPUT,
			    "--role-arn-template: '%s': role '%s' is not an IAM role name ([A-Za-z0-9_+=,.@-], a path "
			    "with '/')%s%s",
			    v.s, role.s, *why ? ": " : "", why);
		buf_release(&role);
	}
	buf_release(&v);
	return rc;
}

void aws_role_arn_expand(struct buf *out, const char *tmpl, const char *partition, const char *account)
{
	for (const char *p = tmpl; *p; p++) {
		if (strncmp(p, "${account}", 10) == 0) {
			buf_adds(out, account);
			p += 9;
		} else if (strncmp(p, "${partition}", 12) == 0) {
			buf_adds(out, partition);
			p += 11;
		} else {
			buf_addc(out, *p);
		}
	}
}

void aws_session_name_sanitize(struct buf *out, const char *in)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)(in ? in : ""); *p && n < 64; p++, n++) {
		int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			 strchr("_+=,.@-", *p);
		buf_addc(out, ok ? (char)*p : '-');
	}
	for (; n < 2; n++)
		buf_addc(out, '-');
}

/* ---- Organizations ---- */

static void org_account_release(void *p)
{
	struct org_account *a = p;
	EM_FREE_ALL(a->id, a->arn, a->name, a->email, a->status);
}

void org_account_list_release(struct org_account_list *l)
{
	EM_RELEASE_ARRAY(l->v, l->n, org_account_release);
	memset(l, 0, sizeof *l);
}

int aws_org_parse_list_accounts(const char *body, size_t len, struct org_account_list *out, char **next_token,
				struct buf *err)
{
	*next_token = NULL;
	cJSON *j = cJSON_ParseWithLength(body, len);
	if (!j || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return em_err(err, EM_ESERVER, "organizations ListAccounts: the answer is not a JSON object");
	}
	const cJSON *accounts = cJSON_GetObjectItemCaseSensitive(j, "Accounts");
	if (!cJSON_IsArray(accounts)) {
		cJSON_Delete(j);
		return em_err(err, EM_ESERVER, "organizations ListAccounts: the answer has no Accounts array");
	}
	const cJSON *next = cJSON_GetObjectItemCaseSensitive(j, "NextToken");
	if (next && !cJSON_IsNull(next) && !(cJSON_IsString(next) && next->valuestring[0])) {
		cJSON_Delete(j);
		return em_err(err, EM_ESERVER, "organizations ListAccounts: NextToken is not a string");
	}
	/* checked whole first: a bad page adds nothing */
	int i = 0;
	const cJSON *a;
	cJSON_ArrayForEach(a, accounts)
	{
		const char *id = jsonx_str(a, "Id"), *status = jsonx_str(a, "Status");
		if (!aws_account_id_valid(id) || !status || !*status) {
			struct buf v = BUF_INIT;
			buf_add_visible(&v, id ? id : "(none)");
			int rc = em_err(err, EM_ESERVER, "organizations ListAccounts: account %d (Id '%s') has no valid Id and Status",
					i, v.s);
			buf_release(&v);
			cJSON_Delete(j);
			return rc;
		}
		i++;
	}
	cJSON_ArrayForEach(a, accounts)
	{
		XGROW(out->v, out->n, out->alloc);
		struct org_account *o = &out->v[out->n++];
		o->id = xstrdup(jsonx_str(a, "Id"));
		o->status = xstrdup(jsonx_str(a, "Status"));
		o->arn = xstrdup(jsonx_str(a, "Arn"));
		o->name = xstrdup(jsonx_str(a, "Name"));
		o->email = xstrdup(jsonx_str(a, "Email"));
	}
	if (cJSON_IsString(next))
		*next_token = xstrdup(next->valuestring);
	cJSON_Delete(j);
	return 0;
}

int aws_org_parse_describe_account(const char *body, size_t len, const char *id, struct org_account_list *out,
				   struct buf *err)
{
	cJSON *j = cJSON_ParseWithLength(body, len);
	const cJSON *a = j ? jsonx_get(j, "Account") : NULL;
	if (!cJSON_IsObject(a)) {
		cJSON_Delete(j);
		return em_err(err, EM_ESERVER, "organizations DescribeAccount: the answer has no Account object");
	}
	const char *got = jsonx_str(a, "Id"), *status = jsonx_str(a, "Status");
	if (!aws_account_id_valid(got) || !status || !*status || (id && strcmp(got, id) != 0)) {
		struct buf v = BUF_INIT;
		buf_add_visible(&v, got ? got : "(none)");
		int rc = em_err(err, EM_ESERVER, "organizations DescribeAccount: Account Id '%s' %s", v.s,
				aws_account_id_valid(got) && status && *status ? "is not the account asked for"
										 : "has no valid Id and Status");
		buf_release(&v);
		cJSON_Delete(j);
		return rc;
	}
	XGROW(out->v, out->n, out->alloc);
	struct org_account *o = &out->v[out->n++];
	o->id = xstrdup(got);
	o->status = xstrdup(status);
	o->arn = xstrdup(jsonx_str(a, "Arn"));
	o->name = xstrdup(jsonx_str(a, "Name"));
	o->email = xstrdup(jsonx_str(a, "Email"));
	cJSON_Delete(j);
	return 0;
}

int aws_org_describe_account(struct aws_client *c, const char *id, struct org_account_list *out, struct buf *err)
{
	struct buf body = BUF_INIT;
	struct jsonw w;
	jsonw_init(&w, &body, JSONW_COMPACT);
	jsonw_object(&w);
	jsonw_key_str(&w, "AccountId", id);
	jsonw_end(&w);
	struct http_response resp;
	http_response_init(&resp);
	int rc = aws_json(c, AWS_SERVICE_ORGANIZATIONS, NULL, "AWSOrganizationsV20161128.DescribeAccount",
			  "application/x-amz-json-1.1", body.s, &resp, NULL, err);
	if (!rc)
		rc = aws_org_parse_describe_account(resp.body.s, resp.body.len, id, out, err);
	http_response_release(&resp);
	buf_release(&body);
	return rc;
}

int aws_org_list_accounts(struct aws_client *c, struct org_account_list *out, struct buf *err)
{
	struct http_response resp;
	http_response_init(&resp);
	struct buf body = BUF_INIT;
	struct page_guard guard;
	page_guard_init(&guard, "NextToken", ORG_MAX_PAGES, "organizations ListAccounts");
	char *next = NULL;
	int rc = 0;
	for (int page = 1;; page++) {
		buf_reset(&body);
		struct jsonw w;
		jsonw_init(&w, &body, JSONW_COMPACT);
		jsonw_object(&w);
		jsonw_key_int(&w, "MaxResults", 20);
		if (next)
			jsonw_key_str(&w, "NextToken", next);
		jsonw_end(&w);
		http_response_release(&resp);
		http_response_init(&resp);
		rc = aws_json(c, AWS_SERVICE_ORGANIZATIONS, NULL, ORG_TARGET, "application/x-amz-json-1.1", body.s, &resp,
			      NULL, err);
		if (rc)
			break;
		free(next);
		next = NULL;
		struct buf e = BUF_INIT;
		rc = aws_org_parse_list_accounts(resp.body.s, resp.body.len, out, &next, &e);
		if (rc)
			em_err(err, rc, "%s (page %d)", e.s, page);
		buf_release(&e);
		if (rc || (rc = page_guard_next(&guard, next, err)) <= 0)
			break;
	}
	free(next);
	page_guard_release(&guard);
	buf_release(&body);
	http_response_release(&resp);
	return rc < 0 ? rc : 0;
}

/* ---- one client per account ---- */

void aws_account_clients_init(struct aws_account_clients *s, struct aws_client *base, const char *role_arn_template,
			      const char *session_name, const char *external_id, int duration_s)
{
	*s = (struct aws_account_clients){.base = base, .role_arn_template = role_arn_template,
					  .session_name = session_name, .external_id = external_id,
					  .duration_s = duration_s};
}

/* Who the base credentials are (once). */
static int base_identity(struct aws_account_clients *s)
{
	if (s->current || s->identity_rc)
		return s->identity_rc;
	const struct aws_credentials *cr = NULL;
	struct buf e = BUF_INIT;
	int rc = aws_credentials_provider_get(&s->base->creds, &cr, &e);
	struct aws_caller_identity id;
	memset(&id, 0, sizeof id);
	if (!rc)
		rc = aws_sts_get_caller_identity(&id, &s->base->http, NULL, cr, &e);
	if (!rc && !aws_account_id_valid(id.account))
		rc = em_err(&e, EM_ESERVER, "sts GetCallerIdentity: no account id in the answer");
	if (rc) {
		s->identity_rc = rc;
		s->identity_err = buf_detach(&e);
	} else {
		s->current = xstrdup(id.account);
		const char *a = id.arn && strncmp(id.arn, "arn:", 4) == 0 ? id.arn + 4 : NULL;
		const char *colon = a ? strchr(a, ':') : NULL;
		s->partition = colon ? xstrndup(a, (size_t)(colon - a)) : xstrdup("aws");
	}
	aws_caller_identity_release(&id);
	buf_release(&e);
	return rc;
}

struct aws_client *aws_account_clients_get(struct aws_account_clients *s, const char *account, struct buf *err)
{
	if (!aws_account_id_valid(account))
		return s->base;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].account, account) == 0)
			return s->v[i].client;
	if (base_identity(s)) {
		em_err(err, s->identity_rc, "the base credentials' account is unknown: %s",
		       s->identity_err ? s->identity_err : "GetCallerIdentity failed");
		return NULL;
	}
	if (strcmp(account, s->current) == 0)
		return s->base;
	if (!s->role_arn_template) {
		em_err(err, EM_EAUTH,
		       "it is in account %s and the credentials are account %s's: give --role-name NAME (or "
		       "--role-arn-template) to use that account's role (docs/accounts.md)",
		       account, s->current);
		return NULL;
	}
	struct buf arn = BUF_INIT;
	aws_role_arn_expand(&arn, s->role_arn_template, s->partition, account);
	struct aws_assume_role_params p = {arn.s, s->session_name, s->external_id, s->duration_s};
	struct aws_client *c = xcalloc(1, sizeof *c);
	int rc = aws_client_init_assumed(c, s->base, account, &p, err);
	buf_release(&arn);
	if (rc) {
		free(c);
		return NULL;
	}
	s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
	s->v[s->n].account = xstrdup(account);
	s->v[s->n++].client = c;
	return c;
}

/* One account's client (made by aws_account_clients_get) and its account id. */
static void account_client_release(void *p)
{
	struct aws_account_client *e = p;
	aws_client_release(e->client);
	EM_FREE_ALL(e->client, e->account);
}

void aws_account_clients_release(struct aws_account_clients *s)
{
	EM_RELEASE_ARRAY(s->v, s->n, account_client_release);
	EM_FREE_ALL(s->current, s->partition, s->identity_err);
	memset(s, 0, sizeof *s);
}
