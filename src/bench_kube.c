/*
 * bench_kube.c - fio benchmarks as Kubernetes Jobs (bench_kube.h has the contract).
 *
 * Entry points: bench_run_kube, bench_kube_render_job, bench_kube_script, bench_kube_split_log.
 *
 * Flow: check the target (a Bound PVC no running pod uses: its PV's EBS volume, size, class and
 * VolumeAttributesClass give the volume's type, IOPS and throughput; or a StorageClass, for which
 * a scratch PVC is created), then per profile: render templates/fio-job.yaml, create the Job,
 * poll it until Complete or Failed (or the deadline, or Ctrl-C), read the pod's log, record the
 * result, delete the Job and its pod. Whatever happens after the first create, everything
 * created is deleted before returning (cleanup errors are added to the message, never hidden).
 *
 * The template is YAML; the API gets JSON: yaml_to_json converts libyaml's document (plain
 * scalars resolve to null/bool/int/float as YAML 1.1 core does; quoted and block scalars stay
 * strings).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/bench_kube.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ebs.h"
#include "ebsmigrate/jsonw.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/template.h"
#include "ebsmigrate/yamlx.h"

#define WORKDIR_PREFIX BENCH_KUBE_MOUNT "/.ebsmigrate-bench-"
#define HEREDOC "EBSMIGRATE_FIO_JOB"
#define MARK "### ebsmigrate "
#define WAIT_NOTE_AFTER_S 2 /* say what a pod waits for once it has not started for this long */

/* ---- YAML -> JSON ---- */

static int is_int(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static cJSON *scalar_json(const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return cJSON_CreateString(v);
	if (!*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0)
		return cJSON_CreateNull();
	if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "TRUE") == 0)
		return cJSON_CreateBool(1);
	if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0 || strcmp(v, "FALSE") == 0)
		return cJSON_CreateBool(0);
	if (is_int(v))
		return cJSON_CreateNumber(strtod(v, NULL));
	char *end;
	double d = strtod(v, &end);
	if (*end == '\0' && end != v && strchr("0123456789+-.", v[0]) && isfinite(d))
		return cJSON_CreateNumber(d);
	return cJSON_CreateString(v);
}

static cJSON *node_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
	if (!n || depth > 64)
		return cJSON_CreateNull();
	if (n->type == YAML_SCALAR_NODE)
		return scalar_json(n);
	if (n->type == YAML_SEQUENCE_NODE) {
		cJSON *a = cJSON_CreateArray();
		for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
			cJSON_AddItemToArray(a, node_json(doc, yaml_document_get_node(doc, *it), depth + 1));
		return a;
	}
	cJSON *o = cJSON_CreateObject();
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (!k || k->type != YAML_SCALAR_NODE)
			continue;
		cJSON_AddItemToObject(o, (const char *)k->data.scalar.value,
				      node_json(doc, yaml_document_get_node(doc, p->value), depth + 1));
	}
	return o;
}

static int yaml_to_json(struct buf *out, const char *yaml, size_t len, const char *origin, struct buf *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return em_err(err, EM_EIO, "cannot initialise the YAML parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	if (yamlx_load(&parser, &doc)) {
		int rc = em_err(err, EM_EINPUT, "%s: not valid YAML at line %zu: %s", origin, parser.problem_mark.line + 1,
				parser.problem ? parser.problem : "parse error");
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_parser_delete(&parser);
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	int rc = 0;
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = em_err(err, EM_EINPUT, "%s: expected one YAML mapping (a Kubernetes object)", origin);
	} else {
		cJSON *j = node_json(&doc, root, 0);
		char *s = cJSON_PrintUnformatted(j);
		buf_adds(out, s);
		cJSON_free(s);
		cJSON_Delete(j);
	}
	yaml_document_delete(&doc);
	return rc;
}

/* ---- rendering ---- */

void bench_kube_script(struct buf *out, const char *job_file, const char *workdir)
{
	buf_addf(out, "d=%s\n", workdir);
	buf_adds(out, "mkdir -p \"$d\" && cd \"$d\" || exit 1\n");
	buf_adds(out, "cat > job.fio <<'" HEREDOC "'\n");
	buf_adds(out, job_file);
	if (job_file[0] && job_file[strlen(job_file) - 1] != '\n')
		buf_addc(out, '\n');
	buf_adds(out, HEREDOC "\n");
	buf_adds(out, "fio --output-format=json job.fio 2>fio.err\n");
	buf_adds(out, "rc=$?\n");
	buf_adds(out, "for f in *_iops*.log; do\n");
	buf_adds(out, "  [ -f \"$f\" ] || continue\n");
	buf_adds(out, "  echo \"" MARK "iops-log $f\"\n");
	buf_adds(out, "  cat \"$f\"\n");
	buf_adds(out, "done\n");
	buf_adds(out, "echo \"" MARK "stderr\"\n");
	buf_adds(out, "cat fio.err\n");
	buf_adds(out, "cd / && rm -rf \"$d\"\n");
	buf_adds(out, "echo \"" MARK "exit $rc\"\n");
	buf_adds(out, "exit $rc\n");
}

int bench_kube_render_job(struct buf *json_out, const char *tpl, const struct bench_kube_job *j, struct buf *err)
{
	struct buf name = BUF_INIT, ns = BUF_INIT, prof = BUF_INIT, claim = BUF_INIT, image = BUF_INIT,
		   label = BUF_INIT, mount = BUF_INIT, yaml = BUF_INIT;
	char deadline[32];
	snprintf(deadline, sizeof deadline, "%d", j->deadline_s);
	template_yaml_quote(&name, j->name);
	template_yaml_quote(&ns, j->namespace_);
	template_yaml_quote(&prof, j->profile);
	template_yaml_quote(&claim, j->claim);
	template_yaml_quote(&image, j->image);
	template_yaml_quote(&label, j->run_label);
	template_yaml_quote(&mount, BENCH_KUBE_MOUNT);
	const char *vars[] = {"name", name.s, "namespace", ns.s, "profile", prof.s, "claim", claim.s,
			      "image", image.s, "run_label", label.s, "mount", mount.s, "deadline", deadline,
			      "script", j->script, NULL};
	int rc = template_render(&yaml, tpl, BENCH_KUBE_TEMPLATE, vars, err);
	if (!rc)
		rc = yaml_to_json(json_out, yaml.s, yaml.len, "template '" BENCH_KUBE_TEMPLATE "'", err);
	buf_release(&name), buf_release(&ns), buf_release(&prof), buf_release(&claim);
	buf_release(&image), buf_release(&label), buf_release(&mount), buf_release(&yaml);
	return rc;
}

int bench_kube_split_log(const char *log, size_t len, const char **json, size_t *json_len,
			 void (*fn)(void *ctx, const char *name, const char *text, size_t len), void *ctx)
{
	/* fio's stdout runs up to the first marker line. */
	const char *first = NULL;
	for (const char *p = log; p < log + len;) {
		const char *nl = memchr(p, '\n', (size_t)(log + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(log + len - p);
		if (n >= strlen(MARK) && memcmp(p, MARK, strlen(MARK)) == 0) {
			first = p;
			break;
		}
		p += n + (nl ? 1 : 0);
	}
	*json = log;
	*json_len = first ? (size_t)(first - log) : len;
	int status = -1;
	const char *p = first;
	while (p && p < log + len) {
		const char *nl = memchr(p, '\n', (size_t)(log + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(log + len - p);
		const char *head = p + strlen(MARK);
		size_t hn = n - strlen(MARK);
		/* The section's body runs to the next marker. */
		const char *body = nl ? nl + 1 : log + len, *q = body;
		while (q < log + len) {
			if ((size_t)(log + len - q) >= strlen(MARK) && memcmp(q, MARK, strlen(MARK)) == 0)
				break;
			const char *e = memchr(q, '\n', (size_t)(log + len - q));
			q = e ? e + 1 : log + len;
		}
		if (hn > 9 && memcmp(head, "iops-log ", 9) == 0 && fn) {
			char *name = xstrndup(head + 9, hn - 9);
			fn(ctx, name, body, (size_t)(q - body));
			free(name);
		} else if (hn > 5 && memcmp(head, "exit ", 5) == 0) {
			char num[16];
			size_t nl_len = hn - 5 < sizeof num - 1 ? hn - 5 : sizeof num - 1;
			memcpy(num, head + 5, nl_len);
			num[nl_len] = '\0';
			int64_t v;
			status = em_parse_i64(num, &v) == 0 && v >= 0 && v < 256 ? (int)v : 255;
		} else if (hn == 6 && memcmp(head, "stderr", 6) == 0 && fn) {
			fn(ctx, NULL, body, (size_t)(q - body));
		}
		p = q;
	}
	return status;
}

/* ---- the cluster side ---- */

struct kube_state {
	struct kube_client *c;
	const struct bench_kube_options *o;
	const char *ns;
	char suffix[8];
	char *scratch_pvc;          /* created by us: delete at the end */
	char *claim;                /* the claim the Jobs mount */
	char *live_job;             /* created and not yet deleted */
	struct buf cleanup_err;
};

static int get_json(struct kube_state *k, const char *path, cJSON **out, struct buf *err)
{
	struct buf body = BUF_INIT;
	long status = 0;
	int rc = kube_get(k->c, path, NULL, &body, &status, err);
	*out = NULL;
	if (!rc) {
		*out = jsonx_parse(body.s, body.len, path, err);
		if (!*out)
			rc = EM_ESERVER;
	}
	buf_release(&body);
	return rc;
}

/* Kubernetes quantity -> bytes ("100Gi", "8G", "500M", "1Ti"); 0 when unreadable. */
static uint64_t quantity_bytes(const char *q)
{
	if (!q)
		return 0;
	char *end;
	double v = strtod(q, &end);
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
		     {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"", 1}};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcmp(end, units[i].suffix) == 0)
			return v > 0 ? (uint64_t)(v * units[i].mult) : 0;
	return 0;
}

static void quantity_text(struct buf *out, uint64_t bytes)
{
	if (bytes % (1ull << 30) == 0)
		buf_addf(out, "%lluGi", (unsigned long long)(bytes >> 30));
	else if (bytes % (1ull << 20) == 0)
		buf_addf(out, "%lluMi", (unsigned long long)(bytes >> 20));
	else
		buf_addf(out, "%llu", (unsigned long long)bytes);
}

static int64_t param_int(const cJSON *params, const char *key)
{
	const char *s = jsonx_str(params, key);
	int64_t v;
	return s && em_parse_i64(s, &v) == 0 && v > 0 ? v : 0;
}

/* Fills what the run's volume does not know yet from EBS CSI parameters (class or VAC). */
static void volume_from_params(struct bench_volume *v, const cJSON *params, int64_t size_gib)
{
	const char *type = jsonx_str(params, "type");
	if (type && !v->type)
		v->type = xstrdup(type);
	if (!v->iops) {
		v->iops = param_int(params, "iops");
		int64_t per_gb = param_int(params, "iopsPerGB");
		if (!v->iops && per_gb && size_gib)
			v->iops = per_gb * size_gib;
	}
	if (!v->throughput)
		v->throughput = param_int(params, "throughput");
}

/* Defaults of the EBS CSI driver: gp3 without parameters is 3,000 IOPS / 125 MiB/s. */
static void volume_defaults(struct bench_volume *v)
{
	if (!v->type)
		return;
	if (strcmp(v->type, "gp3") == 0) {
		if (!v->iops)
			v->iops = 3000;
		if (!v->throughput)
			v->throughput = 125;
	} else if (strcmp(v->type, "gp2") == 0 && !v->iops && v->size_gib) {
		v->iops = ebs_gp2_baseline_iops(v->size_gib);
	}
}

static int read_class(struct kube_state *k, const char *sc, struct bench_volume *v, int64_t size_gib, struct buf *err)
{
	struct buf path = BUF_INIT;
	kube_pathf(&path, "/apis/storage.k8s.io/v1/storageclasses/%s", sc);
	cJSON *j = NULL;
	struct buf e = BUF_INIT;
	int rc = get_json(k, path.s, &j, &e);
	if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "storage class '%s' not found", sc);
	else if (rc)
		em_err(err, rc, "%s", e.s);
	else
		volume_from_params(v, jsonx_get(j, "parameters"), size_gib);
	cJSON_Delete(j);
	buf_release(&e);
	buf_release(&path);
	return rc;
}

/* The claim's VolumeAttributesClass, when it has one in effect, overrides its class's
 * parameters (that is how a migrated claim says gp3). Unreadable VACs are skipped. */
static void read_vac(struct kube_state *k, const char *vac, struct bench_volume *v, int64_t size_gib)
{
	const char *ver = NULL;
	struct buf e = BUF_INIT;
	if (kube_vac_api_version(k->c, &ver, &e) || !ver) {
		buf_release(&e);
		return;
	}
	struct buf path = BUF_INIT;
	kube_pathf(&path, "/apis/storage.k8s.io/%s/volumeattributesclasses/%s", ver, vac);
	cJSON *j = NULL;
	if (get_json(k, path.s, &j, &e) == 0) {
		struct bench_volume tmp;
		memset(&tmp, 0, sizeof tmp);
		volume_from_params(&tmp, jsonx_get(j, "parameters"), size_gib);
		if (tmp.type && !v->type) {
			v->type = tmp.type;
			tmp.type = NULL;
		}
		if (!v->iops)
			v->iops = tmp.iops;
		if (!v->throughput)
			v->throughput = tmp.throughput;
		free(tmp.type);
	}
	cJSON_Delete(j);
	buf_release(&path);
	buf_release(&e);
}

/* PV -> EBS volume id ("vol-..."), from the CSI handle or the in-tree volumeID. */
static char *pv_volume_id(const cJSON *pv)
{
	const char *h = jsonx_path_str(pv, "spec.csi.volumeHandle");
	if (!h)
		h = jsonx_path_str(pv, "spec.awsElasticBlockStore.volumeID");
	if (!h)
		return NULL;
	const char *slash = strrchr(h, '/');
	return xstrdup(slash ? slash + 1 : h);
}

/* Reads the bound claim's PV into the run's volume (id, size). 0 also when not yet bound. */
static int read_bound_volume(struct kube_state *k, const char *claim, struct bench_run *run, cJSON **pvc_out,
			     struct buf *err)
{
	struct buf path = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", k->ns, claim);
	cJSON *pvc = NULL;
	struct buf e = BUF_INIT;
	int rc = get_json(k, path.s, &pvc, &e);
	buf_release(&path);
	if (rc == EM_ENOTFOUND)
		rc = em_err(err, EM_ENOTFOUND, "pvc '%s/%s' not found", k->ns, claim);
	else if (rc)
		em_err(err, rc, "%s", e.s);
	buf_release(&e);
	if (rc)
		return rc;
	struct bench_volume *v = &run->volume;
	run->has_volume = 1;
	if (!v->pvc) {
		struct buf p = BUF_INIT;
		buf_addf(&p, "%s/%s", k->ns, claim);
		v->pvc = buf_detach(&p);
	}
	uint64_t cap = quantity_bytes(jsonx_path_str(pvc, "status.capacity.storage"));
	if (!cap)
		cap = quantity_bytes(jsonx_path_str(pvc, "spec.resources.requests.storage"));
	if (cap && !v->size_gib)
		v->size_gib = (int64_t)((cap + (1ull << 30) - 1) >> 30);
	const char *pv_name = jsonx_path_str(pvc, "spec.volumeName");
	if (pv_name && !v->volume_id) {
		struct buf pp = BUF_INIT;
		kube_pathf(&pp, "/api/v1/persistentvolumes/%s", pv_name);
		cJSON *pv = NULL;
		struct buf e2 = BUF_INIT;
		if (get_json(k, pp.s, &pv, &e2) == 0)
			v->volume_id = pv_volume_id(pv);
		cJSON_Delete(pv);
		buf_release(&pp);
		buf_release(&e2);
	}
	if (pvc_out)
		*pvc_out = pvc;
	else
		cJSON_Delete(pvc);
	return 0;
}

struct in_use {
	const char *claim;
	char *pod;
	char *phase;
};

static int pods_page(void *ctx, const char *json, size_t len, unsigned page, struct buf *err)
{
	struct in_use *u = ctx;
	(void)page;
	cJSON *j = jsonx_parse(json, len, "pod list", err);
	if (!j)
		return EM_ESERVER;
	const cJSON *items = jsonx_get(j, "items");
	for (const cJSON *p = cJSON_IsArray(items) ? items->child : NULL; p && !u->pod; p = p->next) {
		const char *phase = jsonx_path_str(p, "status.phase");
		if (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0))
			continue;
		const cJSON *vols = jsonx_path(p, "spec.volumes");
		for (const cJSON *v = cJSON_IsArray(vols) ? vols->child : NULL; v; v = v->next) {
			const char *cn = jsonx_path_str(v, "persistentVolumeClaim.claimName");
			if (cn && strcmp(cn, u->claim) == 0) {
				u->pod = xstrdup(jsonx_path_str(p, "metadata.name"));
				u->phase = xstrdup(phase ? phase : "Pending");
				break;
			}
		}
	}
	cJSON_Delete(j);
	return 0;
}

static int check_pvc(struct kube_state *k, struct bench_run *run, struct buf *err)
{
	cJSON *pvc = NULL;
	int rc = read_bound_volume(k, k->o->pvc, run, &pvc, err);
	if (rc)
		return rc;
	const char *phase = jsonx_path_str(pvc, "status.phase");
	if (!phase || strcmp(phase, "Bound") != 0) {
		rc = em_err(err, EM_EINPUT, "pvc '%s/%s' is %s, not Bound: nothing to benchmark yet", k->ns, k->o->pvc,
			    phase ? phase : "without a phase");
		cJSON_Delete(pvc);
		return rc;
	}
	const char *vac = jsonx_path_str(pvc, "status.currentVolumeAttributesClassName");
	if (vac)
		read_vac(k, vac, &run->volume, run->volume.size_gib);
	const char *sc = jsonx_path_str(pvc, "spec.storageClassName");
	if (sc) {
		struct buf e = BUF_INIT;
		read_class(k, sc, &run->volume, run->volume.size_gib, &e); /* a deleted class is not fatal */
		buf_release(&e);
	}
	volume_defaults(&run->volume);
	cJSON_Delete(pvc);

	struct in_use u = {k->o->pvc, NULL, NULL};
	struct buf path = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/pods", k->ns);
	rc = kube_list(k->c, path.s, pods_page, &u, err);
	buf_release(&path);
	if (!rc && u.pod)
		rc = em_err(err, EM_ECONFLICT,
			    "pvc '%s/%s' is in use by pod '%s' (%s): benchmark it while no pod uses it, or measure a "
			    "scratch volume with --storage-class",
			    k->ns, k->o->pvc, u.pod, u.phase);
	free(u.pod);
	free(u.phase);
	return rc;
}

/* The bench's scratch PVC: labelled as ebsmigrate's, with the run's suffix, ReadWriteOnce. */
static void scratch_pvc(struct buf *b, const char *name, const char *run, const char *storage_class,
			const char *size)
{
	struct jsonw w;
	jsonw_init(&w, b, JSONW_COMPACT);
	jsonw_object(&w);
	const struct jsonw_str_member head[] = {{"apiVersion", "v1"}, {"kind", "PersistentVolumeClaim"}};
	jsonw_members_str(&w, head, JSONW_COUNT(head));
	jsonw_key_object(&w, "metadata");
	jsonw_key_str(&w, "name", name);
	jsonw_key_object(&w, "labels");
	const struct jsonw_str_member labels[] = {{"app.kubernetes.io/name", "ebsmigrate-bench"},
						  {"app.kubernetes.io/managed-by", "ebsmigrate"},
						  {"ebsmigrate.io/bench-run", run}};
	jsonw_members_str(&w, labels, JSONW_COUNT(labels));
	jsonw_end_n(&w, 2);
	jsonw_key_object(&w, "spec");
	jsonw_key_array(&w, "accessModes");
	jsonw_str(&w, "ReadWriteOnce");
	jsonw_end(&w);
	jsonw_key_str(&w, "storageClassName", storage_class);
	jsonw_key_object(&w, "resources");
	jsonw_key_object(&w, "requests");
	jsonw_key_str(&w, "storage", size);
	jsonw_end_n(&w, 4);
}

static int create_scratch(struct kube_state *k, struct bench_run *run, struct buf *err)
{
	struct bench_volume *v = &run->volume;
	run->has_volume = 1;
	if (!v->size_gib)
		v->size_gib = (int64_t)((k->o->volume_size + (1ull << 30) - 1) >> 30);
	int rc = read_class(k, k->o->storage_class, v, v->size_gib, err);
	if (rc)
		return rc;
	if (!v->type)
		v->type = xstrdup("gp3"); /* the EBS CSI driver's default type */
	volume_defaults(v);
	struct buf name = BUF_INIT, size = BUF_INIT, body = BUF_INIT, out = BUF_INIT, path = BUF_INIT;
	buf_addf(&name, "ebsmigrate-bench-%s", k->suffix);
	quantity_text(&size, k->o->volume_size);
	scratch_pvc(&body, name.s, k->suffix, k->o->storage_class, size.s);
	kube_pathf(&path, "/api/v1/namespaces/%s/persistentvolumeclaims", k->ns);
	rc = kube_create(k->c, path.s, body.s, &out, err);
	if (!rc) {
		k->scratch_pvc = xstrdup(name.s);
		k->claim = xstrdup(name.s);
		struct buf p = BUF_INIT;
		buf_addf(&p, "%s/%s", k->ns, name.s);
		free(v->pvc);
		v->pvc = buf_detach(&p);
	}
	buf_release(&name), buf_release(&size), buf_release(&body), buf_release(&out), buf_release(&path);
	return rc;
}

/* Deletes a Job and its pods; problems go to k->cleanup_err. */
static void delete_job(struct kube_state *k, const char *job)
{
	struct buf path = BUF_INIT, out = BUF_INIT, e = BUF_INIT;
	kube_pathf(&path, "/apis/batch/v1/namespaces/%s/jobs/%s?propagationPolicy=Background", k->ns, job);
	int rc = kube_delete(k->c, path.s, &out, &e);
	if (rc && rc != EM_ENOTFOUND)
		em_err(&k->cleanup_err, rc, "could not delete job '%s/%s': %s", k->ns, job, e.s);
	/* The pods too, in case the garbage collector is slow or absent. */
	buf_reset(&path);
	buf_reset(&out);
	buf_reset(&e);
	kube_pathf(&path, "/api/v1/namespaces/%s/pods", k->ns);
	struct buf q = BUF_INIT;
	buf_adds(&q, "labelSelector=");
	struct buf sel = BUF_INIT;
	buf_addf(&sel, "job-name=%s", job);
	buf_add_urlencoded(&q, sel.s, 1);
	if (kube_get(k->c, path.s, q.s, &out, NULL, &e) == 0) {
		cJSON *j = cJSON_ParseWithLength(out.s, out.len);
		const cJSON *items = jsonx_get(j, "items");
		for (const cJSON *p = cJSON_IsArray(items) ? items->child : NULL; p; p = p->next) {
			const char *name = jsonx_path_str(p, "metadata.name");
			if (!name)
				continue;
			struct buf pp = BUF_INIT, po = BUF_INIT, pe = BUF_INIT;
			kube_pathf(&pp, "/api/v1/namespaces/%s/pods/%s", k->ns, name);
			int prc = kube_delete(k->c, pp.s, &po, &pe);
			if (prc && prc != EM_ENOTFOUND)
				em_err(&k->cleanup_err, prc, "could not delete pod '%s/%s': %s", k->ns, name, pe.s);
			buf_release(&pp), buf_release(&po), buf_release(&pe);
		}
		cJSON_Delete(j);
	}
	buf_release(&q), buf_release(&sel), buf_release(&path), buf_release(&out), buf_release(&e);
}

static void delete_scratch(struct kube_state *k)
{
	if (!k->scratch_pvc)
		return;
	struct buf path = BUF_INIT, out = BUF_INIT, e = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", k->ns, k->scratch_pvc);
	int rc = kube_delete(k->c, path.s, &out, &e);
	if (rc && rc != EM_ENOTFOUND)
		em_err(&k->cleanup_err, rc, "could not delete pvc '%s/%s': %s", k->ns, k->scratch_pvc, e.s);
	buf_release(&path), buf_release(&out), buf_release(&e);
}

/* The newest pod of a job: name, phase, node and a short state description. */
struct pod_view {
	char *name, *phase, *node, *why;
};

static void pod_view_release(struct pod_view *p)
{
	free(p->name), free(p->phase), free(p->node), free(p->why);
	memset(p, 0, sizeof *p);
}

static int job_pod(struct kube_state *k, const char *job, struct pod_view *pv, struct buf *err)
{
	memset(pv, 0, sizeof *pv);
	struct buf path = BUF_INIT, q = BUF_INIT, sel = BUF_INIT, out = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/pods", k->ns);
	buf_addf(&sel, "job-name=%s", job);
	buf_adds(&q, "labelSelector=");
	buf_add_urlencoded(&q, sel.s, 1);
	int rc = kube_get(k->c, path.s, q.s, &out, NULL, err);
	if (!rc) {
		cJSON *j = jsonx_parse(out.s, out.len, "pod list", err);
		const cJSON *items = jsonx_get(j, "items");
		const cJSON *p = cJSON_IsArray(items) ? cJSON_GetArrayItem(items, cJSON_GetArraySize(items) - 1) : NULL;
		if (p) {
			pv->name = xstrdup(jsonx_path_str(p, "metadata.name"));
			pv->phase = xstrdup(jsonx_path_str(p, "status.phase"));
			pv->node = xstrdup(jsonx_path_str(p, "spec.nodeName"));
			struct buf why = BUF_INIT;
			const cJSON *conds = jsonx_path(p, "status.conditions");
			for (const cJSON *c = cJSON_IsArray(conds) ? conds->child : NULL; c; c = c->next) {
				const char *st = jsonx_str(c, "status");
				if (st && strcmp(st, "False") == 0 && jsonx_str(c, "reason"))
					buf_addf(&why, "%s%s: %s", why.len ? "; " : "", jsonx_str(c, "reason"),
						 jsonx_str(c, "message") ? jsonx_str(c, "message") : "");
			}
			const cJSON *cs = jsonx_path(p, "status.containerStatuses");
			for (const cJSON *c = cJSON_IsArray(cs) ? cs->child : NULL; c; c = c->next) {
				const char *reason = jsonx_path_str(c, "state.waiting.reason");
				if (reason)
					buf_addf(&why, "%swaiting: %s", why.len ? "; " : "", reason);
			}
			pv->why = buf_detach(&why);
		}
		cJSON_Delete(j);
		if (!j)
			rc = EM_ESERVER;
	}
	buf_release(&path), buf_release(&q), buf_release(&sel), buf_release(&out);
	return rc;
}

static void node_instance_type(struct kube_state *k, const char *node, struct bench_volume *v)
{
	if (!node || v->instance_type)
		return;
	if (!v->node)
		v->node = xstrdup(node);
	struct buf path = BUF_INIT, e = BUF_INIT;
	kube_pathf(&path, "/api/v1/nodes/%s", node);
	cJSON *j = NULL;
	if (get_json(k, path.s, &j, &e) == 0) { /* RBAC may forbid nodes: not fatal */
		const cJSON *labels = jsonx_path(j, "metadata.labels");
		const char *it = jsonx_str(labels, "node.kubernetes.io/instance-type");
		if (!it)
			it = jsonx_str(labels, "beta.kubernetes.io/instance-type");
		v->instance_type = xstrdup(it);
	}
	cJSON_Delete(j);
	buf_release(&path);
	buf_release(&e);
}

struct log_sink {
	struct bench_log_file *logs;
	size_t n;
	char **names;
	const char *stderr_text;
	size_t stderr_len;
};

static void on_section(void *ctx, const char *name, const char *text, size_t len)
{
	struct log_sink *s = ctx;
	if (!name) {
		s->stderr_text = text;
		s->stderr_len = len;
		return;
	}
	s->logs = xrealloc(s->logs, (s->n + 1) * sizeof *s->logs);
	s->names = xrealloc(s->names, (s->n + 1) * sizeof *s->names);
	s->names[s->n] = xstrdup(name);
	s->logs[s->n].path = s->names[s->n];
	s->logs[s->n].text = text;
	s->logs[s->n].len = len;
	s->n++;
}

static void tail_text(struct buf *out, const char *text, size_t len, size_t max)
{
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	size_t from = len > max ? len - max : 0;
	for (size_t i = from; i < len; i++)
		buf_addc(out, text[i] == '\n' ? ' ' : text[i]);
	if (!len)
		buf_adds(out, "empty log");
}

static void describe_pod(struct buf *out, const struct pod_view *pv)
{
	if (!pv->name) {
		buf_adds(out, "no pod was created");
		return;
	}
	buf_addf(out, "pod '%s' was %s", pv->name, pv->phase ? pv->phase : "in no phase");
	if (pv->why && *pv->why)
		buf_addf(out, " (%s)", pv->why);
}

/* ---- what a Job that has not started waits for ---- */

/* When an event last happened, for ordering: the old recorder's lastTimestamp, the new API's
 * series.lastObservedTime or eventTime (kube-scheduler's events have no lastTimestamp), or
 * firstTimestamp. RFC 3339 strings in UTC compare as text (to the second). */
static const char *event_time(const cJSON *e)
{
	const char *t = jsonx_str(e, "lastTimestamp");
	if (!t)
		t = jsonx_path_str(e, "series.lastObservedTime");
	if (!t)
		t = jsonx_str(e, "eventTime");
	if (!t)
		t = jsonx_str(e, "firstTimestamp");
	return t ? t : "";
}

/* Appends "REASON: MESSAGE" of the most telling event about kind/name in the namespace: the
 * latest Warning, else the latest other event; nothing when there is none or events cannot be
 * read (RBAC may not allow them: the pod's status still speaks). */
static void latest_event(struct kube_state *k, const char *kind, const char *name, struct buf *out)
{
	struct buf path = BUF_INIT, q = BUF_INIT, sel = BUF_INIT, body = BUF_INIT, e = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/events", k->ns);
	buf_addf(&sel, "involvedObject.kind=%s,involvedObject.name=%s", kind, name);
	buf_adds(&q, "fieldSelector=");
	buf_add_urlencoded(&q, sel.s, 1);
	if (kube_get(k->c, path.s, q.s, &body, NULL, &e) == 0) {
		cJSON *j = cJSON_ParseWithLength(body.s, body.len);
		const cJSON *items = jsonx_get(j, "items"), *best = NULL;
		int best_warning = 0;
		for (const cJSON *ev = cJSON_IsArray(items) ? items->child : NULL; ev; ev = ev->next) {
			const char *type = jsonx_str(ev, "type"), *reason = jsonx_str(ev, "reason");
			if (!reason)
				continue;
			int warning = type && strcmp(type, "Warning") == 0;
			if (!best || warning > best_warning ||
			    (warning == best_warning && strcmp(event_time(ev), event_time(best)) >= 0)) {
				best = ev;
				best_warning = warning;
			}
		}
		if (best) {
			const char *msg = jsonx_str(best, "message");
			buf_adds(out, jsonx_str(best, "reason"));
			if (msg && *msg) {
				buf_adds(out, ": ");
				size_t n = strlen(msg);
				while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ' || msg[n - 1] == '.'))
					n--;
				for (size_t i = 0; i < n && i < 400; i++)
					buf_addc(out, msg[i] == '\n' ? ' ' : msg[i]);
				if (n > 400)
					buf_adds(out, "...");
			}
		}
		cJSON_Delete(j);
	}
	buf_release(&path), buf_release(&q), buf_release(&sel), buf_release(&body), buf_release(&e);
}

/* What a Job whose pod is not running waits for: the pod (its latest event, else its
 * conditions), and the claim while it is not Bound (its phase and latest event). */
static void waiting_for(struct kube_state *k, const struct pod_view *pv, struct buf *out)
{
	if (!pv->name) {
		buf_adds(out, "no pod yet");
	} else {
		buf_addf(out, "pod '%s' is %s", pv->name, pv->phase ? pv->phase : "in no phase");
		struct buf ev = BUF_INIT;
		latest_event(k, "Pod", pv->name, &ev);
		if (ev.len)
			buf_addf(out, ": %s", ev.s);
		else if (pv->why && *pv->why)
			buf_addf(out, " (%s)", pv->why);
		buf_release(&ev);
	}
	if (!k->claim)
		return;
	struct buf path = BUF_INIT, e = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", k->ns, k->claim);
	cJSON *pvc = NULL;
	if (get_json(k, path.s, &pvc, &e) == 0) {
		const char *phase = jsonx_path_str(pvc, "status.phase");
		if (!phase || strcmp(phase, "Bound") != 0) {
			buf_addf(out, "; pvc '%s/%s' is %s", k->ns, k->claim, phase ? phase : "in no phase");
			struct buf ev = BUF_INIT;
			latest_event(k, "PersistentVolumeClaim", k->claim, &ev);
			if (ev.len)
				buf_addf(out, ": %s", ev.s);
			buf_release(&ev);
		}
	}
	cJSON_Delete(pvc);
	buf_release(&path);
	buf_release(&e);
}

/* Waits for the Job: 1 = Complete, 0 = Failed (*failed_why = its condition), negative = an
 * error, the deadline or a stop. *last is the last view of its pod (kept: a failed Job's pod may
 * be gone by the time it is read). While the pod has not started, what it waits for goes to
 * the options' waiting callback (from WAIT_NOTE_AFTER_S on, when it changes), and after
 * start_limit_s of it the wait ends with that reason. */
static int wait_job(struct kube_state *k, const char *job, int deadline_s, int start_limit_s, struct pod_view *last,
		    struct buf *failed_why, struct buf *err)
{
	time_t begun = time(NULL), end = begun + deadline_s;
	int started = 0;
	struct buf waiting = BUF_INIT, shown = BUF_INIT;
	int poll_ms = k->o->poll_ms > 0 ? k->o->poll_ms : 1000;
	struct buf path = BUF_INIT;
	kube_pathf(&path, "/apis/batch/v1/namespaces/%s/jobs/%s", k->ns, job);
	int result = EM_EIO;
	for (;;) {
		if (k->o->stop && *k->o->stop) {
			result = EM_ECONFLICT;
			break;
		}
		cJSON *j = NULL;
		struct buf e = BUF_INIT;
		int rc = get_json(k, path.s, &j, &e);
		if (rc && rc != EM_ENET && rc != EM_ETHROTTLED && rc != EM_ESERVER) {
			result = em_err(err, rc, "%s", e.s);
			buf_release(&e);
			break;
		}
		buf_release(&e);
		const cJSON *conds = jsonx_path(j, "status.conditions");
		int done = -1;
		for (const cJSON *c = cJSON_IsArray(conds) ? conds->child : NULL; c; c = c->next) {
			const char *t = jsonx_str(c, "type"), *st = jsonx_str(c, "status");
			if (!t || !st || strcmp(st, "True") != 0)
				continue;
			if (strcmp(t, "Complete") == 0) {
				done = 1;
			} else if (strcmp(t, "Failed") == 0) {
				done = 0;
				buf_reset(failed_why);
				buf_addf(failed_why, "%s: %s", jsonx_str(c, "reason") ? jsonx_str(c, "reason") : "Failed",
					 jsonx_str(c, "message") ? jsonx_str(c, "message") : "no message");
			}
		}
		cJSON_Delete(j);
		struct pod_view pv;
		struct buf e2 = BUF_INIT;
		if (job_pod(k, job, &pv, &e2) == 0 && pv.name) {
			pod_view_release(last);
			*last = pv;
		} else {
			pod_view_release(&pv);
		}
		buf_release(&e2);
		if (last->phase && strcmp(last->phase, "Pending") != 0)
			started = 1;
		if (done == 0 && !started && waiting.len) { /* its deadline (or anything) ended it first */
			if (strncmp(failed_why->s, "DeadlineExceeded", 16) == 0)
				result = em_err(err, EM_EIO, "job '%s/%s' did not start within %d s (--timeout): %s", k->ns,
						job, start_limit_s, waiting.s);
			else
				result = em_err(err, EM_EIO, "job '%s/%s' failed before its pod started (%s): %s", k->ns, job,
						failed_why->s, waiting.s);
			break;
		}
		if (done >= 0) {
			result = done;
			break;
		}
		if (!started) {
			buf_reset(&waiting);
			waiting_for(k, last, &waiting);
			/* a pod that starts at once (the usual case) is not news */
			if (time(NULL) - begun >= WAIT_NOTE_AFTER_S && strcmp(waiting.s, shown.len ? shown.s : "") != 0) {
				if (k->o->waiting)
					k->o->waiting(k->o->progress_ctx, job, waiting.s);
				buf_reset(&shown);
				buf_adds(&shown, waiting.s);
			}
			if (time(NULL) - begun >= start_limit_s) {
				result = em_err(err, EM_EIO, "job '%s/%s' did not start within %d s (--timeout): %s", k->ns, job,
						start_limit_s, waiting.s);
				break;
			}
		}
		if (time(NULL) >= end) {
			struct buf seen = BUF_INIT;
			describe_pod(&seen, last);
			result = em_err(err, EM_EIO, "job '%s/%s' did not finish within %d s: %s", k->ns, job, deadline_s,
					seen.s);
			buf_release(&seen);
			break;
		}
		struct timespec ts = {poll_ms / 1000, (long)(poll_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
	buf_release(&path);
	buf_release(&waiting);
	buf_release(&shown);
	return result;
}

/* One Job: create, wait, read, record, delete. */
static int run_job(const struct bench_store *store, struct bench_run *run, struct kube_state *k, const char *what,
		   const char *job_file, struct buf *err)
{
	const struct bench_kube_options *o = k->o;
	struct buf name = BUF_INIT, script = BUF_INIT, workdir = BUF_INIT, json = BUF_INIT, path = BUF_INIT,
		   out = BUF_INIT, log = BUF_INIT;
	buf_addf(&name, "ebsmigrate-bench-%s-%s", k->suffix, what);
	buf_addf(&workdir, WORKDIR_PREFIX "%s", name.s);
	bench_kube_script(&script, job_file, workdir.s);
	int timeout = o->timeout_s > 0 ? o->timeout_s : 600;
	int deadline = o->runtime_s + timeout;
	struct bench_kube_job j = {name.s, k->ns, what, k->claim, o->image ? o->image : BENCH_KUBE_DEFAULT_IMAGE,
				   script.s, k->suffix, deadline};
	int rc = bench_kube_render_job(&json, o->template_text, &j, err);
	if (!rc) {
		kube_pathf(&path, "/apis/batch/v1/namespaces/%s/jobs", k->ns);
		rc = kube_create(k->c, path.s, json.s, &out, err);
	}
	if (!rc) {
		k->live_job = xstrdup(name.s);
		struct pod_view pv;
		memset(&pv, 0, sizeof pv);
		struct buf failed_why = BUF_INIT;
		int w = wait_job(k, name.s, deadline + 10, timeout, &pv, &failed_why, err);
		if (w >= 0) {
			if (pv.name) {
				struct buf lp = BUF_INIT;
				kube_pathf(&lp, "/api/v1/namespaces/%s/pods/%s/log", k->ns, pv.name);
				struct buf e = BUF_INIT;
				rc = kube_get(k->c, lp.s, "container=fio", &log, NULL, &e);
				if (rc && w == 1) {
					em_err(err, rc, "%s", e.s);
				} else if (rc) {
					rc = 0; /* a failed Job's pod may be gone: its state says why */
					buf_reset(&log);
				}
				buf_release(&lp);
				buf_release(&e);
			}
			if (!rc && w == 0 && !log.len) {
				struct buf seen = BUF_INIT;
				describe_pod(&seen, &pv);
				rc = em_err(err, EM_EIO, "job '%s/%s' failed (%s); %s", k->ns, name.s, failed_why.s, seen.s);
				buf_release(&seen);
			} else if (!rc && !pv.name) {
				rc = em_err(err, EM_EIO, "job '%s/%s' finished without a pod to read", k->ns, name.s);
			}
			node_instance_type(k, pv.node, &run->volume);
		} else {
			rc = w;
		}
		buf_release(&failed_why);
		if (!rc) {
			const char *fio_out;
			size_t fio_len;
			struct log_sink sink;
			memset(&sink, 0, sizeof sink);
			int status = bench_kube_split_log(log.s, log.len, &fio_out, &fio_len, on_section, &sink);
			if (w == 0 || status != 0) {
				struct buf tail = BUF_INIT;
				if (sink.stderr_len)
					tail_text(&tail, sink.stderr_text, sink.stderr_len, 300);
				else
					tail_text(&tail, log.s, log.len, 300);
				rc = em_err(err, EM_EIO, "fio failed on %s in pod '%s/%s' (%s%d): %s", what, k->ns, pv.name,
					    status >= 0 ? "exit " : "job failed, exit ", status, tail.s);
				buf_release(&tail);
			} else {
				struct buf origin = BUF_INIT;
				buf_addf(&origin, "log of pod '%s/%s'", k->ns, pv.name);
				struct fio_report rep;
				rc = fio_parse_report(&rep, fio_out, fio_len, origin.s, err);
				if (!rc) {
					const char *open = memchr(fio_out, '{', fio_len);
					size_t ext = fio_report_extent(open, fio_len - (size_t)(open - fio_out));
					if (o->keep_json_dir)
						rc = bench_write_keep_json(o->keep_json_dir, what, open, ext, err);
					if (!rc)
						rc = bench_record_report(store, run, &rep, open, ext, NULL, sink.logs, sink.n, err);
					fio_report_release(&rep);
				}
				buf_release(&origin);
			}
			for (size_t i = 0; i < sink.n; i++)
				free(sink.names[i]);
			free(sink.names);
			free(sink.logs);
		}
		pod_view_release(&pv);
		delete_job(k, name.s);
		free(k->live_job);
		k->live_job = NULL;
	}
	buf_release(&name), buf_release(&script), buf_release(&workdir), buf_release(&json);
	buf_release(&path), buf_release(&out), buf_release(&log);
	return rc;
}

static void random_suffix(char out[static 8])
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40);
	for (int i = 0; i < 5; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		out[i] = alphabet[x % (sizeof alphabet - 1)];
	}
	out[5] = '\0';
}

static void options_json_kube(struct bench_run *run, const struct bench_kube_options *o, uint64_t size)
{
	struct bench_workload wl = {NULL, o->job_file_text != NULL, o->profiles, o->n_profiles, o->runtime_s, size};
	struct buf b;
	struct jsonw w;
	if (bench_options_begin(&w, &b, run, &wl)) {
		jsonw_key_str(&w, "image", o->image ? o->image : BENCH_KUBE_DEFAULT_IMAGE);
		if (o->namespace_) /* no namespace: no member (as stored before) */
			jsonw_key_str(&w, "namespace", o->namespace_);
		bench_options_end(&w, &b, run);
	}
}

int bench_run_kube(const struct bench_store *store, struct bench_run *run, const struct bench_kube_options *o,
		   struct buf *err)
{
	if (!o->template_text)
		return em_err(err, EM_EINPUT, "no Job template");
	if (!o->job_file_text && (!o->n_profiles || o->runtime_s <= 0))
		return em_err(err, EM_EINPUT, "bench run needs at least one profile and a runtime");
	if (!o->pvc && (!o->storage_class || !o->volume_size))
		return em_err(err, EM_EINPUT, "bench run in a cluster needs a pvc, or a storage class and a size");
	struct kube_state k;
	memset(&k, 0, sizeof k);
	k.c = o->client;
	k.o = o;
	k.ns = o->namespace_ ? o->namespace_ : "default";
	buf_init(&k.cleanup_err);
	random_suffix(k.suffix);

	free(run->source);
	run->source = xstrdup("kube");
	if (!run->target) {
		struct buf t = BUF_INIT;
		if (o->pvc)
			buf_addf(&t, "pvc %s/%s", k.ns, o->pvc);
		else
			buf_addf(&t, "storage-class %s", o->storage_class);
		run->target = buf_detach(&t);
	}
	int rc;
	if (o->pvc) {
		rc = check_pvc(&k, run, err);
		if (!rc)
			k.claim = xstrdup(o->pvc);
	} else {
		rc = create_scratch(&k, run, err);
	}
	uint64_t size = o->size;
	if (!size) {
		size = (uint64_t)8 << 30;
		uint64_t half = (uint64_t)run->volume.size_gib << 29;
		if (half && half < size)
			size = half;
	}
	if (!rc) /* the volume is known now: link it to its migration, default the phase */
		rc = bench_link_migration(store, run, err);
	if (!rc) {
		options_json_kube(run, o, size);
		rc = bench_store_begin(store, run, err);
	}
	size_t steps = o->job_file_text ? 1 : o->n_profiles, done = 0;
	for (size_t i = 0; !rc && i < steps; i++) {
		const char *what = o->job_file_text ? "jobs" : o->profiles[i]->name;
		if (o->progress)
			o->progress(o->progress_ctx, what, i, steps);
		struct buf job = BUF_INIT;
		if (o->job_file_text) {
			buf_adds(&job, o->job_file_text);
		} else {
			struct fio_job_spec spec = {o->profiles[i], o->runtime_s, size, NULL, NULL, o->profiles[i]->name, NULL};
			fio_job_file(&job, &spec);
		}
		rc = run_job(store, run, &k, what, job.s, err);
		buf_release(&job);
		if (!rc)
			done++;
		if (!rc && k.scratch_pvc && !run->volume.volume_id) {
			struct buf e = BUF_INIT;
			read_bound_volume(&k, k.scratch_pvc, run, NULL, &e);
			buf_release(&e);
		}
		if (!rc && o->stop && *o->stop)
			rc = EM_ECONFLICT;
	}
	if (k.live_job) {
		delete_job(&k, k.live_job);
		free(k.live_job);
	}
	delete_scratch(&k);

	free(run->status);
	if (rc == EM_ECONFLICT && o->stop && *o->stop) {
		run->status = xstrdup("interrupted");
		struct buf m = BUF_INIT;
		buf_addf(&m, "interrupted after %zu of %zu %s", done, steps, o->job_file_text ? "job files" : "profiles");
		free(run->error);
		run->error = xstrdup(m.s);
		em_err(err, EM_ECONFLICT, "%s%s", m.s, done ? "; the finished ones are recorded" : "");
		buf_release(&m);
	} else {
		run->status = xstrdup(rc ? "failed" : "ok");
		if (rc) {
			free(run->error);
			run->error = xstrdup(err->s);
		}
	}
	if (k.cleanup_err.len) {
		em_err(err, rc ? rc : EM_ESERVER, "%s", k.cleanup_err.s);
		if (!rc)
			rc = EM_ESERVER;
	}
	rc = bench_store_finish(store, run, rc, err);
	buf_release(&k.cleanup_err);
	free(k.scratch_pvc);
	free(k.claim);
	return rc;
}
