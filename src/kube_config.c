/*
 * kube_config.c - kubeconfig loading and merging (libyaml document API), context resolution
 * into struct kube_target, and the in-cluster service account (contract in kube_config.h).
 *
 * Entry points: kube_config_load / kube_config_release, kube_config_resolve,
 * kube_config_n_contexts / kube_config_context_name, kube_in_cluster_target,
 * kube_targets_load / kube_targets_free, kube_target_copy / kube_target_release,
 * kube_base64_decode.
 *
 * Invariants:
 * - Each file is loaded through yamlx_load: nesting deeper than YAMLX_MAX_DEPTH is refused
 *   while the file is read.
 * - A loaded config keeps each file's YAML document; entries point at nodes inside them, so a
 *   context resolves from exactly the entries the merge rule chose. Nothing is copied out of
 *   the YAML until kube_config_resolve.
 * - Scalars "", "~" and "null" (plain) count as unset, like an absent key.
 * - Secrets (tokens, client keys, exec env values) are wiped from the file text, the YAML
 *   document and released targets; error messages never quote a field's value except names,
 *   paths, URLs and enumerations.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/kube_config.h"
#include "ebsmigrate/secbuf.h"
#include "ebsmigrate/yamlx.h"

struct kube_config_file {
	char *path;        /* as listed (made absolute) */
	char *dir;         /* directory for relative references */
	yaml_document_t doc;
	int has_doc;
};

struct kube_config_entry {
	char *name;
	size_t file;       /* index into files */
	int node;          /* the inner mapping (cluster/user/context); 0 = empty */
};

/* ---- small helpers ---- */

int kube_base64_decode(struct buf *out, const char *in, size_t len)
{
	unsigned acc = 0;
	int bits = 0, pad = 0;
	size_t start = out->len;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)in[i];
		int v;
		if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')
			continue;
		if (ch == '=') {
			pad++;
			continue;
		}
		if (pad)
			goto bad; /* data after padding */
		if (ch >= 'A' && ch <= 'Z')
			v = ch - 'A';
		else if (ch >= 'a' && ch <= 'z')
			v = ch - 'a' + 26;
		else if (ch >= '0' && ch <= '9')
			v = ch - '0' + 52;
		else if (ch == '+')
			v = 62;
		else if (ch == '/')
			v = 63;
		else
			goto bad;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf_addc(out, (char)((acc >> bits) & 0xff));
		}
	}
	/* 6 leftover bits cannot come from whole bytes; leftover bits must be zero */
	if (bits >= 6 || pad > 2 || (acc & ((1u << bits) - 1)) != 0)
		goto bad;
	return 0;
bad:
	if (out->len > start)
		secbuf_wipe(out->s + start, out->len - start);
	out->len = start;
	out->s[start] = '\0';
	return EM_EINPUT;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

static char *absolute_path(const char *path)
{
	if (path[0] == '/')
		return xstrdup(path);
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return xstrdup(path);
	struct buf b = BUF_INIT;
	buf_addf(&b, "%s/%s", cwd, path);
	return buf_detach(&b);
}

/* A reference from the file in dir: absolute stays, relative joins dir. */
static char *resolve_ref(const char *dir, const char *ref)
{
	if (ref[0] == '/')
		return xstrdup(ref);
	struct buf b = BUF_INIT;
	buf_addf(&b, "%s/%s", dir, ref);
	return buf_detach(&b);
}

/* ---- YAML access ---- */

static yaml_node_t *node_at(const struct kube_config_file *f, int idx)
{
	return idx > 0 ? yaml_document_get_node((yaml_document_t *)&f->doc, idx) : NULL;
}

static int scalar_unset(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE)
		return 0;
	const char *v = (const char *)n->data.scalar.value;
	if (!*v)
		return 1;
	return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}

/* The value node of key in a mapping, or NULL (also for unset scalars). */
static yaml_node_t *map_get(const struct kube_config_file *f, const yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(f, p->key);
		if (k && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0) {
			yaml_node_t *v = node_at(f, p->value);
			return v && !scalar_unset(v) ? v : NULL;
		}
	}
	return NULL;
}

/* What an error is about: "kubeconfig '/x': user 'admin'". */
struct where {
	const struct kube_config_file *f;
	const char *kind; /* "cluster", "user", "context" */
	const char *name;
};

static int field_err(const struct where *w, int code, struct buf *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int field_err(const struct where *w, int code, struct buf *err, const char *fmt, ...)
{
	struct buf m = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&m, fmt, ap);
	va_end(ap);
	em_err(err, code, "kubeconfig '%s': %s '%s': %s", w->f->path, w->kind, w->name, m.s);
	buf_release(&m);
	return code;
}

/* String field: *out = value or NULL when unset. EM_EINPUT when it is not a scalar. */
static int get_str(const struct where *w, const yaml_node_t *map, const char *key, const char **out,
		   struct buf *err)
{
	*out = NULL;
	yaml_node_t *v = map_get(w->f, map, key);
	if (!v)
		return 0;
	if (v->type != YAML_SCALAR_NODE)
		return field_err(w, EM_EINPUT, err, "%s: expected a string", key);
	*out = (const char *)v->data.scalar.value;
	return 0;
}

static int get_bool(const struct where *w, const yaml_node_t *map, const char *key, int *out, struct buf *err)
{
	*out = 0;
	yaml_node_t *v = map_get(w->f, map, key);
	if (!v)
		return 0;
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", NULL};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", NULL};
	if (v->type == YAML_SCALAR_NODE) {
		const char *s = (const char *)v->data.scalar.value;
		for (int i = 0; yes[i]; i++)
			if (strcmp(s, yes[i]) == 0) {
				*out = 1;
				return 0;
			}
		for (int i = 0; no[i]; i++)
			if (strcmp(s, no[i]) == 0)
				return 0;
	}
	return field_err(w, EM_EINPUT, err, "%s: expected true or false", key);
}

/* ---- loading ---- */

static void wipe_document(yaml_document_t *d)
{
	for (yaml_node_t *n = d->nodes.start; n < d->nodes.top; n++)
		if (n->type == YAML_SCALAR_NODE && n->data.scalar.value)
			secbuf_wipe(n->data.scalar.value, n->data.scalar.length);
}

static struct kube_config_entry *find_entry(struct kube_config_entry *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

/* Adds the named entries of one list (clusters/users/contexts) unless the name is known. */
static int merge_list(struct kube_config *c, size_t fi, const yaml_node_t *root, const char *list,
		      const char *inner, struct kube_config_entry **v, size_t *n, size_t *alloc, struct buf *err)
{
	const struct kube_config_file *f = &c->files[fi];
	yaml_node_t *seq = map_get(f, root, list);
	if (!seq)
		return 0;
	if (seq->type != YAML_SEQUENCE_NODE)
		return em_err(err, EM_EINPUT, "kubeconfig '%s': %s: expected a list", f->path, list);
	size_t i = 0;
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++, i++) {
		yaml_node_t *item = node_at(f, *it);
		if (!item || item->type != YAML_MAPPING_NODE)
			return em_err(err, EM_EINPUT, "kubeconfig '%s': %s[%zu]: expected a mapping", f->path, list, i);
		yaml_node_t *name = map_get(f, item, "name");
		if (!name)
			continue; /* client-go ignores nameless entries too: nothing can refer to them */
		if (name->type != YAML_SCALAR_NODE)
			return em_err(err, EM_EINPUT, "kubeconfig '%s': %s[%zu]: name: expected a string", f->path, list, i);
		const char *nm = (const char *)name->data.scalar.value;
		yaml_node_t *body = map_get(f, item, inner);
		if (body && body->type != YAML_MAPPING_NODE)
			return em_err(err, EM_EINPUT, "kubeconfig '%s': %s[%zu] ('%s'): %s: expected a mapping", f->path,
				      list, i, nm, inner);
		if (find_entry(*v, *n, nm))
			continue; /* the first file to define a name wins */
		XGROW(*v, *n, *alloc);
		struct kube_config_entry *e = &(*v)[(*n)++];
		e->name = xstrdup(nm);
		e->file = fi;
		e->node = 0;
		if (body)
			e->node = (int)(body - f->doc.nodes.start) + 1;
	}
	return 0;
}

static int load_one(struct kube_config *c, const char *path, struct buf *err)
{
	struct buf text = BUF_INIT;
	int rc = em_read_file_max(path, EM_MAX_CONFIG_FILE, &text, err);
	if (rc) {
		secbuf_release(&text);
		return rc;
	}
	c->files = xrealloc(c->files, (c->n_files + 1) * sizeof *c->files);
	size_t fi = c->n_files;
	struct kube_config_file *f = &c->files[fi];
	memset(f, 0, sizeof *f);
	f->path = absolute_path(path);
	f->dir = dir_of(f->path);
	c->n_files++;

	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		secbuf_release(&text);
		return em_err(err, EM_EINPUT, "kubeconfig '%s': cannot initialise the YAML parser", f->path);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text.s, text.len);
	if (yamlx_load(&parser, &f->doc)) {
		if (yamlx_too_deep(&parser))
			rc = em_err(err, EM_EINPUT, "kubeconfig '%s': YAML %s at line %zu, column %zu", f->path,
				    parser.problem, parser.problem_mark.line + 1, parser.problem_mark.column + 1);
		else
			rc = em_err(err, EM_EINPUT, "kubeconfig '%s': not valid YAML at line %zu, column %zu: %s", f->path,
				    parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				    parser.problem ? parser.problem : "parse error");
		yaml_parser_delete(&parser);
		secbuf_release(&text);
		return rc;
	}
	f->has_doc = 1;
	yaml_parser_delete(&parser);
	secbuf_release(&text);

	yaml_node_t *root = yaml_document_get_root_node(&f->doc);
	if (!root || scalar_unset(root))
		return 0; /* an empty file is an empty config */
	if (root->type != YAML_MAPPING_NODE)
		return em_err(err, EM_EINPUT, "kubeconfig '%s': expected a mapping at the top level", f->path);
	rc = merge_list(c, fi, root, "clusters", "cluster", &c->clusters, &c->n_clusters, &c->alloc_clusters, err);
	if (!rc)
		rc = merge_list(c, fi, root, "users", "user", &c->users, &c->n_users, &c->alloc_users, err);
	if (!rc)
		rc = merge_list(c, fi, root, "contexts", "context", &c->contexts, &c->n_contexts, &c->alloc_contexts, err);
	if (rc)
		return rc;
	yaml_node_t *cur = map_get(f, root, "current-context");
	if (cur && !c->current_context) {
		if (cur->type != YAML_SCALAR_NODE)
			return em_err(err, EM_EINPUT, "kubeconfig '%s': current-context: expected a string", f->path);
		c->current_context = xstrdup((const char *)cur->data.scalar.value);
	}
	return 0;
}

static int path_listed(const struct buf *seen, const char *p)
{
	/* seen holds "\n"-separated paths with a leading "\n" */
	size_t pl = strlen(p);
	for (const char *s = seen->s; (s = strstr(s, p)) != NULL; s++)
		if (s > seen->s && s[-1] == '\n' && (s[pl] == '\n' || s[pl] == '\0'))
			return 1;
	return 0;
}

int kube_config_load(struct kube_config *out, const char *explicit_path, struct buf *err)
{
	memset(out, 0, sizeof *out);
	struct buf label = BUF_INIT;
	int rc = 0;
	if (explicit_path && *explicit_path) {
		rc = load_one(out, explicit_path, err);
		if (rc == EM_ENOTFOUND)
			em_errprefix(err, "kubeconfig");
		buf_addf(&label, "kubeconfig '%s'", out->n_files ? out->files[0].path : explicit_path);
		goto done;
	}
	const char *env = getenv("KUBECONFIG");
	if (env && *env) {
		struct buf seen = BUF_INIT;
		buf_addc(&seen, '\n');
		const char *p = env;
		while (*p) {
			size_t n = strcspn(p, ":");
			if (n) {
				char *one = xstrndup(p, n);
				if (!path_listed(&seen, one) && access(one, F_OK) == 0) {
					buf_addf(&seen, "%s\n", one);
					rc = load_one(out, one, err);
				}
				free(one);
				if (rc)
					break;
			}
			p += n;
			if (*p == ':')
				p++;
		}
		buf_release(&seen);
		if (!rc && out->n_files == 0)
			rc = em_err(err, EM_ENOTFOUND, "no kubeconfig found: none of the files in KUBECONFIG ('%s') exists",
				    env);
		buf_adds(&label, "kubeconfig '");
		for (size_t i = 0; i < out->n_files; i++)
			buf_addf(&label, "%s%s", i ? ":" : "", out->files[i].path);
		if (!out->n_files)
			buf_adds(&label, env);
		buf_addc(&label, '\'');
		goto done;
	}
	const char *home = getenv("HOME");
	if (!home || !*home) {
		rc = em_err(err, EM_ENOTFOUND, "no kubeconfig found: KUBECONFIG and HOME are not set");
		buf_adds(&label, "kubeconfig");
		goto done;
	}
	struct buf def = BUF_INIT;
	buf_addf(&def, "%s/.kube/config", home);
	if (access(def.s, F_OK) != 0)
		rc = em_err(err, EM_ENOTFOUND, "no kubeconfig found: '%s' does not exist and KUBECONFIG is not set", def.s);
	else
		rc = load_one(out, def.s, err);
	buf_addf(&label, "kubeconfig '%s'", def.s);
	buf_release(&def);
done:
	out->label = buf_detach(&label);
	if (rc) {
		kube_config_release(out);
		return rc;
	}
	return 0;
}

void kube_config_release(struct kube_config *c)
{
	for (size_t i = 0; i < c->n_files; i++) {
		struct kube_config_file *f = &c->files[i];
		if (f->has_doc) {
			wipe_document(&f->doc);
			yaml_document_delete(&f->doc);
		}
		free(f->path);
		free(f->dir);
	}
	free(c->files);
	for (size_t i = 0; i < c->n_clusters; i++)
		free(c->clusters[i].name);
	for (size_t i = 0; i < c->n_users; i++)
		free(c->users[i].name);
	for (size_t i = 0; i < c->n_contexts; i++)
		free(c->contexts[i].name);
	EM_FREE_ALL(c->clusters, c->users, c->contexts, c->current_context, c->label);
	memset(c, 0, sizeof *c);
}

size_t kube_config_n_contexts(const struct kube_config *c)
{
	return c->n_contexts;
}

const char *kube_config_context_name(const struct kube_config *c, size_t i)
{
	return i < c->n_contexts ? c->contexts[i].name : NULL;
}

/* ---- targets ---- */

static void exec_release(struct kube_exec *e)
{
	EM_FREE_ALL(e->api_version, e->command);
	for (size_t i = 0; i < e->n_args; i++)
		free(e->args[i]);
	free(e->args);
	for (size_t i = 0; i < e->n_env; i++) {
		free(e->env[i].name);
		secbuf_free_str(e->env[i].value);
	}
	EM_FREE_ALL(e->env, e->install_hint);
	memset(e, 0, sizeof *e);
}

void kube_target_release(struct kube_target *t)
{
	EM_FREE_ALL(t->context, t->cluster_name, t->user_name, t->origin, t->server, t->namespace_, t->ca_file,
		    t->ca_pem, t->client_cert_file, t->client_key_file, t->client_cert_pem, t->token_file);
	secbuf_free_str(t->client_key_pem);
	secbuf_free_str(t->token);
	exec_release(&t->exec);
	memset(t, 0, sizeof *t);
}

void kube_target_copy(struct kube_target *dst, const struct kube_target *src)
{
	*dst = *src;
	dst->context = xstrdup(src->context);
	dst->cluster_name = xstrdup(src->cluster_name);
	dst->user_name = xstrdup(src->user_name);
	dst->origin = xstrdup(src->origin);
	dst->server = xstrdup(src->server);
	dst->namespace_ = xstrdup(src->namespace_);
	dst->ca_file = xstrdup(src->ca_file);
	dst->ca_pem = xstrdup(src->ca_pem);
	dst->client_cert_file = xstrdup(src->client_cert_file);
	dst->client_key_file = xstrdup(src->client_key_file);
	dst->client_cert_pem = xstrdup(src->client_cert_pem);
	dst->client_key_pem = xstrdup(src->client_key_pem);
	dst->token = xstrdup(src->token);
	dst->token_file = xstrdup(src->token_file);
	const struct kube_exec *se = &src->exec;
	struct kube_exec *de = &dst->exec;
	de->api_version = xstrdup(se->api_version);
	de->command = xstrdup(se->command);
	de->install_hint = xstrdup(se->install_hint);
	de->args = se->n_args ? xcalloc(se->n_args, sizeof(char *)) : NULL;
	for (size_t i = 0; i < se->n_args; i++)
		de->args[i] = xstrdup(se->args[i]);
	de->env = se->n_env ? xcalloc(se->n_env, sizeof *de->env) : NULL;
	for (size_t i = 0; i < se->n_env; i++) {
		de->env[i].name = xstrdup(se->env[i].name);
		de->env[i].value = xstrdup(se->env[i].value);
	}
}

/* A file the target needs now: must be readable. */
static int check_readable(const struct where *w, const char *field, const char *path, struct buf *err)
{
	if (access(path, R_OK) == 0)
		return 0;
	return field_err(w, errno == ENOENT ? EM_ENOTFOUND : EM_EIO, err, "cannot read %s '%s': %s", field, path,
			 strerror(errno));
}

/* "-data" (base64) or file form of one PEM item. */
static int pem_field(const struct where *w, const yaml_node_t *map, const char *field, char **file_out,
		     char **pem_out, const char *pem_marker, struct buf *err)
{
	const char *data, *file;
	char data_key[64];
	snprintf(data_key, sizeof data_key, "%s-data", field);
	int rc = get_str(w, map, data_key, &data, err);
	if (!rc)
		rc = get_str(w, map, field, &file, err);
	if (rc)
		return rc;
	if (data) {
		struct buf pem = BUF_INIT;
		if (kube_base64_decode(&pem, data, strlen(data)) != 0 || pem.len == 0) {
			secbuf_release(&pem);
			return field_err(w, EM_EINPUT, err, "%s is not valid base64", data_key);
		}
		if (!strstr(pem.s, pem_marker) || strlen(pem.s) != pem.len) {
			secbuf_release(&pem);
			return field_err(w, EM_EINPUT, err, "%s does not hold a PEM %s", data_key,
					 strstr(pem_marker, "KEY") ? "private key" : "certificate");
		}
		*pem_out = buf_detach(&pem);
		return 0;
	}
	if (file) {
		*file_out = resolve_ref(w->f->dir, file);
		return check_readable(w, field, *file_out, err);
	}
	return 0;
}

/* Entry e's mapping, with w set to name it in messages ("cluster 'x' in FILE"). */
static const yaml_node_t *entry_at(struct where *w, const struct kube_config *c, const struct kube_config_entry *e,
				   const char *kind)
{
	w->f = &c->files[e->file];
	w->kind = kind;
	w->name = e->name;
	return node_at(w->f, e->node);
}

static int resolve_cluster(struct kube_target *t, const struct kube_config *c, const struct kube_config_entry *e,
			   struct buf *err)
{
	struct where w;
	const yaml_node_t *m = entry_at(&w, c, e, "cluster");
	const char *server, *s;
	int rc = get_str(&w, m, "server", &server, err);
	if (rc)
		return rc;
	if (!server)
		return field_err(&w, EM_EINPUT, err, "no server");
	if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
		return field_err(&w, EM_EINPUT, err, "server '%s' is not an http(s) URL", server);
	t->server = xstrdup(server);
	size_t sl = strlen(t->server);
	while (sl > 8 && t->server[sl - 1] == '/')
		t->server[--sl] = '\0';
	if ((rc = get_bool(&w, m, "insecure-skip-tls-verify", &t->insecure, err)))
		return rc;
	if ((rc = pem_field(&w, m, "certificate-authority", &t->ca_file, &t->ca_pem, "-----BEGIN", err)))
		return rc;
	if (t->insecure && (t->ca_file || t->ca_pem))
		return field_err(&w, EM_EINPUT, err,
				 "certificate-authority and insecure-skip-tls-verify cannot both be set");
	if ((rc = get_str(&w, m, "tls-server-name", &s, err)))
		return rc;
	if (s)
		return field_err(&w, EM_EUNSUPPORTED, err, "tls-server-name is not supported");
	if ((rc = get_str(&w, m, "proxy-url", &s, err)))
		return rc;
	if (s)
		return field_err(&w, EM_EUNSUPPORTED, err,
				 "proxy-url is not supported; set HTTPS_PROXY in the environment instead");
	return 0;
}

static int resolve_exec(struct kube_target *t, const struct where *w, const yaml_node_t *m, struct buf *err)
{
	const struct kube_config_file *f = w->f;
	struct kube_exec *e = &t->exec;
	const char *s;
	int rc = get_str(w, m, "apiVersion", &s, err);
	if (rc)
		return rc;
	if (!s)
		return field_err(w, EM_EINPUT, err, "exec: apiVersion is not set");
	if (strcmp(s, "client.authentication.k8s.io/v1alpha1") == 0)
		return field_err(w, EM_EUNSUPPORTED, err,
				 "exec: apiVersion %s is no longer supported; use %s (for EKS, run `aws eks "
				 "update-kubeconfig` again)",
				 s, KUBE_EXEC_V1BETA1);
	if (strcmp(s, KUBE_EXEC_V1) != 0 && strcmp(s, KUBE_EXEC_V1BETA1) != 0)
		return field_err(w, EM_EINPUT, err, "exec: apiVersion '%s' is not %s or %s", s, KUBE_EXEC_V1,
				 KUBE_EXEC_V1BETA1);
	e->api_version = xstrdup(s);
	if ((rc = get_str(w, m, "command", &s, err)))
		return rc;
	if (!s)
		return field_err(w, EM_EINPUT, err, "exec: command is not set");
	e->command = strchr(s, '/') ? resolve_ref(f->dir, s) : xstrdup(s);

	yaml_node_t *args = map_get(f, m, "args");
	if (args) {
		if (args->type != YAML_SEQUENCE_NODE)
			return field_err(w, EM_EINPUT, err, "exec: args: expected a list");
		size_t n = (size_t)(args->data.sequence.items.top - args->data.sequence.items.start);
		e->args = n ? xcalloc(n, sizeof(char *)) : NULL;
		for (size_t i = 0; i < n; i++) {
			yaml_node_t *a = node_at(f, args->data.sequence.items.start[i]);
			if (!a || a->type != YAML_SCALAR_NODE)
				return field_err(w, EM_EINPUT, err, "exec: args[%zu]: expected a string", i);
			e->args[e->n_args++] = xstrdup((const char *)a->data.scalar.value);
		}
	}
	yaml_node_t *env = map_get(f, m, "env");
	if (env) {
		if (env->type != YAML_SEQUENCE_NODE)
			return field_err(w, EM_EINPUT, err, "exec: env: expected a list");
		size_t n = (size_t)(env->data.sequence.items.top - env->data.sequence.items.start);
		e->env = n ? xcalloc(n, sizeof *e->env) : NULL;
		for (size_t i = 0; i < n; i++) {
			yaml_node_t *ev = node_at(f, env->data.sequence.items.start[i]);
			yaml_node_t *nm = map_get(f, ev, "name"), *val = ev ? map_get(f, ev, "value") : NULL;
			if (!ev || ev->type != YAML_MAPPING_NODE || !nm || nm->type != YAML_SCALAR_NODE)
				return field_err(w, EM_EINPUT, err, "exec: env[%zu]: expected a mapping with a name", i);
			if (val && val->type != YAML_SCALAR_NODE)
				return field_err(w, EM_EINPUT, err, "exec: env[%zu] ('%s'): value: expected a string", i,
						 (const char *)nm->data.scalar.value);
			e->env[e->n_env].name = xstrdup((const char *)nm->data.scalar.value);
			e->env[e->n_env].value = xstrdup(val ? (const char *)val->data.scalar.value : "");
			e->n_env++;
		}
	}
	if ((rc = get_str(w, m, "interactiveMode", &s, err)))
		return rc;
	if (!s && strcmp(e->api_version, KUBE_EXEC_V1) == 0)
		return field_err(w, EM_EINPUT, err, "exec: interactiveMode must be set with apiVersion %s", KUBE_EXEC_V1);
	static const struct {
		const char *name;
		enum kube_interactive mode;
	} modes[] = {{"IfAvailable", KUBE_INTERACTIVE_IF_AVAILABLE},
		     {"Never", KUBE_INTERACTIVE_NEVER},
		     {"Always", KUBE_INTERACTIVE_ALWAYS}};
	size_t k = 0; /* unset: IfAvailable */
	while (s && k < sizeof modes / sizeof *modes && strcmp(s, modes[k].name) != 0)
		k++;
	if (k == sizeof modes / sizeof *modes)
		return field_err(w, EM_EINPUT, err, "exec: interactiveMode '%s' is not Never, IfAvailable or Always", s);
	e->interactive_mode = modes[k].mode;
	if ((rc = get_bool(w, m, "provideClusterInfo", &e->provide_cluster_info, err)))
		return rc;
	if ((rc = get_str(w, m, "installHint", &s, err)))
		return rc;
	e->install_hint = xstrdup(s);
	t->has_exec = 1;
	return 0;
}

static int resolve_user(struct kube_target *t, const struct kube_config *c, const struct kube_config_entry *e,
			struct buf *err)
{
	struct where w;
	const yaml_node_t *m = entry_at(&w, c, e, "user");
	const struct kube_config_file *f = w.f;
	const char *s, *s2;
	int rc;
	if ((rc = get_str(&w, m, "username", &s, err)) || (rc = get_str(&w, m, "password", &s2, err)))
		return rc;
	if (s || s2)
		return field_err(&w, EM_EUNSUPPORTED, err, "basic authentication (username/password) is not supported");
	yaml_node_t *ap = map_get(f, m, "auth-provider");
	if (ap) {
		const char *name = NULL;
		yaml_node_t *nm = map_get(f, ap, "name");
		if (nm && nm->type == YAML_SCALAR_NODE)
			name = (const char *)nm->data.scalar.value;
		return field_err(&w, EM_EUNSUPPORTED, err,
				 "auth-provider '%s' is not supported; use its exec credential plugin instead",
				 name ? name : "?");
	}
	if ((rc = pem_field(&w, m, "client-certificate", &t->client_cert_file, &t->client_cert_pem, "-----BEGIN",
			    err)))
		return rc;
	if ((rc = pem_field(&w, m, "client-key", &t->client_key_file, &t->client_key_pem, "PRIVATE KEY-----", err)))
		return rc;
	int has_cert = t->client_cert_file || t->client_cert_pem, has_key = t->client_key_file || t->client_key_pem;
	if (has_cert != has_key)
		return field_err(&w, EM_EINPUT, err, "%s is set but %s is not",
				 has_cert ? "client-certificate" : "client-key",
				 has_cert ? "client-key" : "client-certificate");
	if ((rc = get_str(&w, m, "tokenFile", &s, err)))
		return rc;
	if (s) {
		t->token_file = resolve_ref(f->dir, s);
	} else {
		if ((rc = get_str(&w, m, "token", &s, err)))
			return rc;
		t->token = xstrdup(s);
	}
	yaml_node_t *ex = map_get(f, m, "exec");
	if (ex) {
		if (ex->type != YAML_MAPPING_NODE)
			return field_err(&w, EM_EINPUT, err, "exec: expected a mapping");
		if ((rc = resolve_exec(t, &w, ex, err)))
			return rc;
	}
	return 0;
}

static void list_names(struct buf *b, const struct kube_config *c)
{
	if (!c->n_contexts) {
		buf_adds(b, "it defines no contexts");
		return;
	}
	buf_adds(b, "contexts: ");
	for (size_t i = 0; i < c->n_contexts; i++)
		buf_addf(b, "%s%s", i ? ", " : "", c->contexts[i].name);
}

int kube_config_resolve(struct kube_target *out, const struct kube_config *c, const char *context, struct buf *err)
{
	memset(out, 0, sizeof *out);
	struct buf names = BUF_INIT;
	list_names(&names, c);
	int rc = 0;
	if (!context || !*context) {
		context = c->current_context;
		if (!context) {
			rc = em_err(err, EM_EINPUT, "%s: no current-context is set (use --context or --all-contexts; %s)",
				    c->label, names.s);
			goto out;
		}
	}
	const struct kube_config_entry *ce = find_entry(c->contexts, c->n_contexts, context);
	if (!ce) {
		rc = em_err(err, EM_ENOTFOUND, "%s: context '%s' not found (%s)", c->label, context, names.s);
		goto out;
	}
	const struct kube_config_file *f = &c->files[ce->file];
	const yaml_node_t *m = node_at(f, ce->node);
	struct where w = {f, "context", ce->name};
	const char *cluster, *user, *ns;
	if ((rc = get_str(&w, m, "cluster", &cluster, err)) || (rc = get_str(&w, m, "user", &user, err)) ||
	    (rc = get_str(&w, m, "namespace", &ns, err)))
		goto out;
	out->context = xstrdup(ce->name);
	out->origin = xstrdup(c->label);
	out->namespace_ = xstrdup(ns ? ns : "default");
	if (!cluster) {
		rc = em_err(err, EM_EINPUT, "kubeconfig '%s': context '%s' names no cluster", f->path, ce->name);
		goto out;
	}
	const struct kube_config_entry *cl = find_entry(c->clusters, c->n_clusters, cluster);
	if (!cl) {
		rc = em_err(err, EM_EINPUT, "kubeconfig '%s': context '%s' names cluster '%s' which is not defined",
			    f->path, ce->name, cluster);
		goto out;
	}
	const struct kube_config_entry *us = NULL;
	if (user) {
		us = find_entry(c->users, c->n_users, user);
		if (!us) {
			rc = em_err(err, EM_EINPUT, "kubeconfig '%s': context '%s' names user '%s' which is not defined",
				    f->path, ce->name, user);
			goto out;
		}
	}
	out->cluster_name = xstrdup(cl->name);
	out->user_name = xstrdup(user);
	if ((rc = resolve_cluster(out, c, cl, err)))
		goto out;
	if (us && (rc = resolve_user(out, c, us, err)))
		goto out;
out:
	buf_release(&names);
	if (rc)
		kube_target_release(out);
	return rc;
}

/* ---- in-cluster ---- */

int kube_in_cluster_target(struct kube_target *out, const char *sa_dir, struct buf *err)
{
	memset(out, 0, sizeof *out);
	const char *env_dir = getenv(KUBE_SA_DIR_ENV);
	if (!sa_dir)
		sa_dir = env_dir && *env_dir ? env_dir : KUBE_SA_DIR;
	const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !*host || !port || !*port)
		return em_err(err, EM_ENOTFOUND,
			      "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
	struct buf p = BUF_INIT;
	buf_addf(&p, "%s/token", sa_dir);
	if (access(p.s, R_OK) != 0) {
		int e = errno;
		int rc = em_err(err, e == ENOENT ? EM_ENOTFOUND : EM_EIO,
				"in-cluster service account: cannot read token '%s': %s", p.s, strerror(e));
		buf_release(&p);
		return rc;
	}
	out->token_file = buf_detach(&p);
	buf_addf(&p, "%s/ca.crt", sa_dir);
	if (access(p.s, R_OK) == 0)
		out->ca_file = buf_detach(&p);
	buf_reset(&p);
	buf_addf(&p, "%s/namespace", sa_dir);
	struct buf ns = BUF_INIT, ignore = BUF_INIT;
	if (em_read_file_max(p.s, EM_MAX_TOKEN_FILE, &ns, &ignore) == 0) {
		while (ns.len && strchr(" \t\r\n", ns.s[ns.len - 1]))
			ns.s[--ns.len] = '\0';
	}
	out->namespace_ = xstrdup(ns.len ? ns.s : "default");
	buf_release(&ns);
	buf_release(&ignore);
	buf_reset(&p);
	if (strchr(host, ':'))
		buf_addf(&p, "https://[%s]:%s", host, port);
	else
		buf_addf(&p, "https://%s:%s", host, port);
	out->server = buf_detach(&p);
	out->context = xstrdup("in-cluster");
	out->cluster_name = xstrdup("in-cluster");
	out->user_name = xstrdup("serviceaccount");
	buf_addf(&p, "in-cluster service account '%s'", sa_dir);
	out->origin = buf_detach(&p);
	out->in_cluster = 1;
	return 0;
}

/* ---- selection ---- */

void kube_targets_free(struct kube_target *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kube_target_release(&t[i]);
	free(t);
}

int kube_targets_load(struct kube_target **out, size_t *n_out, const struct kube_selection *sel, struct buf *err)
{
	*out = NULL;
	*n_out = 0;
	struct kube_config c;
	struct buf e = BUF_INIT;
	int rc = kube_config_load(&c, sel->kubeconfig, &e);
	if (rc == EM_ENOTFOUND && !sel->kubeconfig && !sel->context && getenv("KUBERNETES_SERVICE_HOST")) {
		struct kube_target *t = xcalloc(1, sizeof *t);
		struct buf e2 = BUF_INIT;
		rc = kube_in_cluster_target(t, sel->sa_dir, &e2);
		if (rc) {
			free(t);
			em_err(err, rc, "%s; %s", e.s, e2.s);
		} else {
			*out = t;
			*n_out = 1;
		}
		buf_release(&e);
		buf_release(&e2);
		return rc;
	}
	if (rc) {
		em_err(err, rc, "%s", e.s);
		buf_release(&e);
		return rc;
	}
	buf_release(&e);
	struct kube_target *v = NULL;
	size_t n = 0, alloc = 0;
	if (!sel->all_contexts) {
		v = xcalloc(1, sizeof *v);
		rc = kube_config_resolve(v, &c, sel->context, err);
		if (rc) {
			free(v);
			v = NULL;
		} else {
			n = 1;
		}
	} else if (c.n_contexts == 0) {
		rc = em_err(err, EM_ENOTFOUND, "%s defines no contexts", c.label);
	} else {
		for (size_t i = 0; i < c.n_contexts && !rc; i++) {
			struct kube_target t;
			rc = kube_config_resolve(&t, &c, c.contexts[i].name, err);
			if (rc)
				break;
			int dup = 0;
			for (size_t j = 0; j < n && !dup; j++)
				dup = strcmp(v[j].server, t.server) == 0;
			if (dup) {
				kube_target_release(&t);
				continue;
			}
			XGROW(v, n, alloc);
			v[n++] = t;
		}
		if (rc) {
			kube_targets_free(v, n);
			v = NULL;
			n = 0;
		}
	}
	kube_config_release(&c);
	*out = v;
	*n_out = n;
	return rc;
}
