/* test_plan_manifests.c - VAC naming and API versions, YAML/sh quoting (read back by libyaml and sh),
 * the template renderer, routing/batching/StorageClass rules on a small fleet, and the atomic
 * directory writer. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/plan_manifests.h"
#include "ebsmigrate/planner.h"
#include "tap.h"

static struct pricebook book;
static time_t NOW;

/* ---------------------------------------------------------------- quoting */

/* Parses "k: <scalar>" with libyaml; returns the scalar's value (caller frees) and its style. */
static char *yaml_read_back(const char *scalar, int *plain)
{
	struct buf doc = BUF_INIT;
	buf_addf(&doc, "k: %s\n", scalar);
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)doc.s, doc.len);
	char *value = NULL;
	int scalars = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev))
			break;
		int done = ev.type == YAML_STREAM_END_EVENT;
		if (ev.type == YAML_SCALAR_EVENT && ++scalars == 2) {
			value = xstrndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
			*plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		}
		yaml_event_delete(&ev);
		if (done)
			break;
	}
	yaml_parser_delete(&p);
	buf_release(&doc);
	return value;
}

static void check_yaml(const char *s, const char *want_text, int want_plain)
{
	struct buf q = BUF_INIT;
	manifest_yaml_quote(&q, s);
	if (want_text)
		CHECK_STR(q.s, want_text);
	int plain = -1;
	char *back = yaml_read_back(q.s, &plain);
	CHECK(back != NULL);
	CHECK_STR(back ? back : "(parse error)", s);
	CHECK_I64(plain, want_plain);
	free(back);
	buf_release(&q);
}

static void check_sh(const char *s, const char *want)
{
	struct buf q = BUF_INIT, cmd = BUF_INIT;
	manifest_sh_quote(&q, s);
	CHECK_STR(q.s, want);
	/* the shell reads it back as one word, unchanged */
	buf_adds(&cmd, "printf '%s|' ");
	buf_adds(&cmd, q.s);
	FILE *p = popen(cmd.s, "r");
	char got[256] = {0};
	size_t n = p ? fread(got, 1, sizeof got - 1, p) : 0;
	got[n] = '\0';
	if (p)
		pclose(p);
	struct buf want_out = BUF_INIT;
	buf_addf(&want_out, "%s|", s);
	CHECK_STR(got, want_out.s);
	buf_release(&want_out);
	buf_release(&q);
	buf_release(&cmd);
}

static void test_quoting(void)
{
	check_yaml("gp3-3000-125", "gp3-3000-125", 1);
	check_yaml("ebs.csi.aws.com", "ebs.csi.aws.com", 1);
	check_yaml("storage.k8s.io/v1beta1", "storage.k8s.io/v1beta1", 1);
	check_yaml("3000", "\"3000\"", 0);
	check_yaml("125", "\"125\"", 0);
	check_yaml("true", "\"true\"", 0);
	check_yaml("Yes", "\"Yes\"", 0);
	check_yaml("off", "\"off\"", 0);
	check_yaml("y", "\"y\"", 0);
	check_yaml("null", "\"null\"", 0);
	check_yaml("~", "\"~\"", 0);
	check_yaml("", "\"\"", 0);
	check_yaml("1.33", "\"1.33\"", 0);
	check_yaml("0x1F", "\"0x1F\"", 0);
	check_yaml("-leading-dash", "\"-leading-dash\"", 0);
	check_yaml("a: b", "\"a: b\"", 0);
	check_yaml("x #comment", "\"x #comment\"", 0);
	check_yaml("arn:aws:kms:us-east-1:111122223333:key/abcd", "\"arn:aws:kms:us-east-1:111122223333:key/abcd\"", 0);
	check_yaml("say \"hi\" \\ bye", "\"say \\\"hi\\\" \\\\ bye\"", 0);
	check_yaml("two\nlines\ttab", "\"two\\nlines\\ttab\"", 0);
	check_yaml("bell\x01", "\"bell\\x01\"", 0);
	check_yaml("caf\xc3\xa9", "\"caf\xc3\xa9\"", 0);
	check_yaml("{flow}", NULL, 0);
	check_yaml("*alias", NULL, 0);
	check_yaml("&anchor", NULL, 0);
	check_yaml("!tag", NULL, 0);
	check_yaml("%directive", NULL, 0);
	check_yaml("@at", NULL, 0);

	check_sh("prod", "prod");
	check_sh("vol-0a1b2c3d4e5f60003", "vol-0a1b2c3d4e5f60003");
	check_sh("arn:aws:eks:us-east-1:111122223333:cluster/prod", "arn:aws:eks:us-east-1:111122223333:cluster/prod");
	check_sh("my context", "'my context'");
	check_sh("it's", "'it'\\''s'");
	check_sh("$HOME `id` *", "'$HOME `id` *'");
	check_sh("{\"spec\":{\"volumeAttributesClassName\":\"gp3-3000-125\"}}",
		 "'{\"spec\":{\"volumeAttributesClassName\":\"gp3-3000-125\"}}'");
	check_sh("", "''");
}

/* ---------------------------------------------------------------- naming, versions, templates */

static void test_naming_and_versions(void)
{
	struct buf b = BUF_INIT;
	manifest_vac_name(&b, 3000, 125);
	CHECK_STR(b.s, "gp3-3000-125");
	buf_reset(&b);
	manifest_vac_name(&b, 16000, 1000);
	CHECK_STR(b.s, "gp3-16000-1000");
	buf_release(&b);

	const char *api = "x";
	CHECK(manifest_vac_api("1.34", &api) == VAC_API_V1);
	CHECK_STR(api, "storage.k8s.io/v1");
	CHECK(manifest_vac_api("1.35", &api) == VAC_API_V1);
	CHECK(manifest_vac_api("2.0", &api) == VAC_API_V1);
	CHECK(manifest_vac_api("1.33", &api) == VAC_API_V1BETA1);
	CHECK_STR(api, "storage.k8s.io/v1beta1");
	CHECK(manifest_vac_api("v1.33.4-eks-1a2b3c4", &api) == VAC_API_V1BETA1);
	CHECK(manifest_vac_api("1.33+", &api) == VAC_API_V1BETA1);
	CHECK(manifest_vac_api("1.31", &api) == VAC_API_V1BETA1);
	CHECK(manifest_vac_api("1.30", &api) == VAC_API_V1ALPHA1);
	CHECK_STR(api, "storage.k8s.io/v1alpha1");
	CHECK(manifest_vac_api("1.29", &api) == VAC_API_V1ALPHA1);
	CHECK(manifest_vac_api("1.28", &api) == VAC_API_NONE);
	CHECK(api == NULL);
	CHECK(manifest_vac_api(NULL, &api) == VAC_API_UNKNOWN);
	CHECK_STR(api, "storage.k8s.io/v1beta1");
	CHECK(manifest_vac_api("latest", &api) == VAC_API_UNKNOWN);
	CHECK(manifest_vac_api("1", &api) == VAC_API_UNKNOWN);

	enum manifest_route r;
	CHECK(manifest_route_parse("annotation", &r) == 0 && r == MANIFEST_ROUTE_ANNOTATION);
	CHECK(manifest_route_parse("vac", &r) == 0 && r == MANIFEST_ROUTE_VAC);
	CHECK(manifest_route_parse("ec2", &r) == 0 && r == MANIFEST_ROUTE_EC2);
	CHECK(manifest_route_parse("VAC", &r) == EM_EINPUT);
}

static void test_render(void)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	const char *vars[] = {"name", "gp3", "block", "a: 1\nb: 2\n", "empty", "", NULL};
	CHECK(manifest_render(&out, "x: {{name}}\nlist:\n  {{block}}\n  {{empty}}\nend: {{ name }}{{empty}}\n", "t",
			      vars, &err) == 0);
	CHECK_STR(out.s, "x: gp3\nlist:\n  a: 1\n  b: 2\nend: gp3\n");
	buf_reset(&out);
	CHECK(manifest_render(&out, "no newline {{name}}", "t", vars, &err) == 0);
	CHECK_STR(out.s, "no newline gp3");
	buf_reset(&out);
	CHECK(manifest_render(&out, "a: {{nope}}\n", "templates/x.yaml", vars, &err) == EM_EINPUT);
	CHECK_STR(err.s, "template 'templates/x.yaml': unknown placeholder '{{nope}}'");
	buf_reset(&err);
	CHECK(manifest_render(&out, "a: {{name\n}}\n", "t", vars, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "without '}}'") != NULL);
	buf_reset(&err);
	buf_reset(&out);
	CHECK(manifest_render(&out, "{\"a\":1}\n", "t", NULL, &err) == 0);
	CHECK_STR(out.s, "{\"a\":1}\n");
	buf_release(&out);
	buf_release(&err);
}

/* ---------------------------------------------------------------- a small fleet */

static struct volume *add(struct fleet *f, const char *id, int64_t size)
{
	struct volume *v = fleet_add_volume(f, id);
	v->availability_zone = xstrdup("us-east-1a");
	volume_split_az(v->availability_zone, &v->region, &v->location);
	v->type = EBS_GP2;
	v->size_gib = size;
	v->state = xstrdup("in-use");
	v->attachments = xcalloc(1, sizeof *v->attachments);
	v->attachments[0].instance_id = xstrdup("i-0abc");
	v->n_attachments = 1;
	return v;
}

static void bind(struct volume *v, const char *cluster, const char *pvc, int in_tree, const char *vac)
{
	v->kube = xcalloc(1, sizeof *v->kube);
	v->kube->cluster = xstrdup(cluster);
	v->kube->pv = xstrdup(pvc);
	v->kube->namespace_ = xstrdup("db");
	v->kube->pvc = xstrdup(pvc);
	v->kube->storage_class = xstrdup("gp2");
	v->kube->driver = xstrdup(in_tree ? "kubernetes.io/aws-ebs" : "ebs.csi.aws.com");
	v->kube->in_tree = in_tree;
	v->kube->vac = xstrdup(vac);
}

static void mod(struct volume *v, enum volume_mod_state state, const char *start)
{
	struct volume_mod m;
	memset(&m, 0, sizeof m);
	m.state = state;
	em_parse_time(start, &m.start_time);
	volume_add_mod(v, &m);
}

static struct storage_class *add_sc(struct fleet *f, const char *cluster, const char *name, const char *prov,
				    const char *type, int is_default)
{
	XGROW(f->scs, f->n_scs, f->alloc_scs);
	struct storage_class *sc = &f->scs[f->n_scs++];
	memset(sc, 0, sizeof *sc);
	sc->cluster = xstrdup(cluster);
	sc->name = xstrdup(name);
	sc->provisioner = xstrdup(prov);
	sc->type = xstrdup(type);
	sc->is_default = is_default;
	sc->n_parameters = type ? 1 : 0;
	sc->parameters = xcalloc(4, sizeof *sc->parameters);
	if (type) {
		sc->parameters[0].key = xstrdup("type");
		sc->parameters[0].value = xstrdup(type);
	}
	return sc;
}

static void sc_set(struct storage_class *sc, const char *key, const char *value)
{
	sc->parameters[sc->n_parameters].key = xstrdup(key);
	sc->parameters[sc->n_parameters++].value = xstrdup(value);
	if (strcmp(key, "encrypted") == 0)
		sc->encrypted = xstrdup(value);
	if (strcmp(key, "kmsKeyId") == 0)
		sc->kms_key_id = xstrdup(value);
}

static void add_vac(struct fleet *f, const char *cluster, const char *name, const char *iops)
{
	XGROW(f->vacs, f->n_vacs, f->alloc_vacs);
	struct vac_ref *v = &f->vacs[f->n_vacs++];
	memset(v, 0, sizeof *v);
	v->cluster = xstrdup(cluster);
	v->name = xstrdup(name);
	v->driver = xstrdup("ebs.csi.aws.com");
	v->api_version = xstrdup("storage.k8s.io/v1beta1");
	v->n_parameters = 3;
	v->parameters = xcalloc(3, sizeof *v->parameters);
	const char *kv[] = {"type", "gp3", "iops", iops, "throughput", "125"};
	for (int i = 0; i < 3; i++) {
		v->parameters[i].key = xstrdup(kv[2 * i]);
		v->parameters[i].value = xstrdup(kv[2 * i + 1]);
	}
}

static void add_sts(struct fleet *f, const char *cluster, const char *name, const char *cls)
{
	XGROW(f->sts, f->n_sts, f->alloc_sts);
	struct statefulset_ref *s = &f->sts[f->n_sts++];
	memset(s, 0, sizeof *s);
	s->cluster = xstrdup(cluster);
	s->namespace_ = xstrdup("db");
	s->name = xstrdup(name);
	s->n_templates = 1;
	s->claim_templates = xcalloc(1, sizeof(char *));
	s->claim_storage_classes = xcalloc(1, sizeof(char *));
	s->claim_templates[0] = xstrdup("data");
	s->claim_storage_classes[0] = xstrdup(cls);
}

static void make_fleet(struct fleet *f)
{
	fleet_init(f);
	size_t ci = fleet_add_cluster(f, "prod");
	f->cluster_versions[ci] = xstrdup("1.33");
	ci = fleet_add_cluster(f, "old");
	f->cluster_versions[ci] = xstrdup("1.30");
	fleet_add_cluster(f, "dunno");
	struct storage_class *gp2 = add_sc(f, "prod", "gp2", "ebs.csi.aws.com", "gp2", 1);
	sc_set(gp2, "encrypted", "true");
	sc_set(gp2, "kmsKeyId", "arn:aws:kms:us-east-1:111122223333:key/k1");
	add_sc(f, "prod", "gp3", "ebs.csi.aws.com", "gp3", 0); /* other parameters: ours is gp3-ebsmigrate */
	add_sc(f, "old", "gp3", "ebs.csi.aws.com", "gp3", 1);  /* default already gp3 */
	add_sts(f, "prod", "pg", "gp2");
	add_sts(f, "prod", "web", "gp3");
	add_vac(f, "prod", "gp3-3000-125", "3000"); /* identical: reused */

	/* prod: 5 migrate claims (two targets), one claim that had a class, one blocked by time,
	 * one in flight, one in-tree, one without a claim */
	bind(add(f, "vol-p1", 100), "prod", "c1", 0, NULL);
	bind(add(f, "vol-p2", 2000), "prod", "c2", 0, NULL);
	bind(add(f, "vol-p3", 100), "prod", "c3", 0, "old-class");
	bind(add(f, "vol-p4", 100), "prod", "c4", 0, NULL);
	bind(add(f, "vol-p5", 100), "prod", "c5", 0, NULL);
	struct volume *b1 = add(f, "vol-p6", 100);
	bind(b1, "prod", "c6", 0, NULL);
	mod(b1, MOD_COMPLETED, "2026-11-30T14:00:00Z");
	mod(b1, MOD_COMPLETED, "2026-11-30T18:00:00Z");
	mod(b1, MOD_COMPLETED, "2026-11-30T22:00:00Z");
	mod(b1, MOD_COMPLETED, "2026-12-01T02:00:00Z");
	struct volume *b2 = add(f, "vol-p7", 100);
	bind(b2, "prod", "c7", 0, NULL);
	mod(b2, MOD_OPTIMIZING, "2026-12-01T10:00:00Z");
	bind(add(f, "vol-p8", 100), "prod", "c8", 1, NULL);
	struct volume *unbound = add(f, "vol-p9", 100);
	bind(unbound, "prod", "c9", 0, NULL);
	free(unbound->kube->pvc);
	unbound->kube->pvc = NULL;
	/* old (1.30): one claim; dunno (version unknown): one claim */
	bind(add(f, "vol-o1", 100), "old", "o1", 0, NULL);
	bind(add(f, "vol-d1", 100), "dunno", "d1", 0, NULL);
	/* outside Kubernetes */
	add(f, "vol-x1", 100);
	struct volume *io1 = add(f, "vol-x2", 100);
	io1->type = EBS_IO1;
	io1->iops = 3000;
}

static const char *file(const struct manifest_set *s, const char *path)
{
	const struct manifest_file *f = manifest_set_find(s, path);
	return f ? f->data : "";
}

static int contains(const char *hay, const char *needle)
{
	int ok = strstr(hay, needle) != NULL;
	if (!ok)
		printf("# missing: %s\n", needle);
	return ok;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

static int has_warning(const struct manifest_set *s, const char *needle)
{
	for (size_t i = 0; i < s->n_warnings; i++)
		if (strstr(s->warnings[i], needle))
			return 1;
	printf("# no warning with: %s\n", needle);
	return 0;
}

static void test_build(void)
{
	struct fleet f;
	make_fleet(&f);
	struct plan_options po = {PLAN_MODE_MATCH, NOW};
	struct plan p;
	planner_build(&p, &f, &book, &po);
	struct manifest_options o = {.dir = "unused", .batch_size = 2};
	struct manifest_set s;
	struct buf err = BUF_INIT;
	CHECK(manifest_build(&s, &p, &f, &o, &err) == 0);
	if (err.len)
		printf("# %s\n", err.s);

	/* VACs: prod has targets 3000/125 and 6000/250 (the 2000 GiB volume); old is 1.30 (alpha) */
	const char *vacs = file(&s, "prod/00-volumeattributesclasses.yaml");
	CHECK_I64(count(vacs, "kind: VolumeAttributesClass"), 2);
	CHECK(contains(vacs, "apiVersion: storage.k8s.io/v1beta1\nkind: VolumeAttributesClass\nmetadata:\n  name: gp3-3000-125\n"));
	CHECK(contains(vacs, "driverName: ebs.csi.aws.com\nparameters:\n  type: gp3\n  iops: \"6000\"\n  throughput: \"250\"\n"));
	CHECK(contains(file(&s, "old/00-volumeattributesclasses.yaml"), "apiVersion: storage.k8s.io/v1alpha1"));
	CHECK(has_warning(&s, "cluster 'old': Kubernetes 1.30 serves VolumeAttributesClass only as storage.k8s.io/v1alpha1"));
	CHECK(contains(file(&s, "dunno/00-volumeattributesclasses.yaml"), "apiVersion: storage.k8s.io/v1beta1"));
	CHECK(has_warning(&s, "cluster 'dunno': Kubernetes version unknown"));
	CHECK(has_warning(&s, "kubectl version -o json"));

	/* batches: 5 migrate claims in batches of 2 -> 3 batches, then 2 blocked in a 4th */
	CHECK(manifest_set_find(&s, "prod/batches/batch-001-pvc-patches.sh") != NULL);
	CHECK(manifest_set_find(&s, "prod/batches/batch-003-pvc-patches.sh") != NULL);
	CHECK(manifest_set_find(&s, "prod/batches/batch-004-pvc-patches.sh") == NULL);
	const char *b1 = file(&s, "prod/batches/batch-001-pvc-patches.sh");
	CHECK(contains(b1, "#!/bin/sh\n"));
	CHECK(contains(b1, "set -eu\nctx=prod\n[ -z \"${KUBE_CONTEXT:-}\" ] || ctx=$KUBE_CONTEXT\n"));
	/* the plan's order: the 2000 GiB volume saves most */
	CHECK(contains(b1, "# vol-p2 (prod db/c2): 2000 GiB gp2 -> gp3 6000 IOPS, 250 MiB/s; saves $"));
	CHECK(contains(b1, "kubectl --context \"$ctx\" --namespace db patch pvc c2 --type=merge --patch "
			   "'{\"spec\":{\"volumeAttributesClassName\":\"gp3-6000-250\"}}'\n"));
	CHECK_I64(count(b1, "kubectl "), 2);
	const char *blocked = file(&s, "prod/batches/batch-004-blocked-pvc-patches.sh");
	CHECK(contains(blocked, "# eligible at 2026-12-01T14:00:00Z"));
	CHECK(contains(blocked, "if not_before 1796133600 2026-12-01T14:00:00Z vol-p6; then\n\tkubectl"));
	CHECK(contains(blocked, "# eligible after the modification in flight completes (optimizing since 2026-12-01T10:00:00Z)"));
	CHECK(contains(blocked, "if idle us-east-1 vol-p7; then\n"));
	/* the timed one first */
	CHECK(strstr(blocked, "vol-p6") < strstr(blocked, "vol-p7"));
	CHECK(manifest_set_find(&s, "prod/batches/batch-004-blocked-rollback.sh") != NULL);

	/* rollbacks: back to the previous class, else EC2 back to gp2 */
	size_t n_back = 0;
	for (size_t i = 0; i < s.n; i++) {
		if (strncmp(s.files[i].path, "prod/batches/", 13) || !strstr(s.files[i].path, "rollback"))
			continue;
		n_back++;
		const char *d = s.files[i].data;
		if (strstr(d, "c3 "))
			CHECK(contains(d, "patch pvc c3 --type=merge --patch '{\"spec\":{\"volumeAttributesClassName\":\"old-class\"}}'"));
		if (strstr(d, "vol-p1"))
			CHECK(contains(d, "if still_gp3 us-east-1 vol-p1 100 3000 125; then\n\taws ec2 modify-volume "
					  "--region us-east-1 --volume-id vol-p1 --volume-type gp2\nfi\n"));
	}
	CHECK_I64(n_back, 4);

	/* EC2 route: in-tree, unbound, outside Kubernetes; explicit IOPS and throughput */
	const char *ec2 = file(&s, "ec2/batch-001-modify-volume.sh");
	CHECK(contains(ec2, "aws ec2 modify-volume --region us-east-1 --volume-id"));
	CHECK(contains(file(&s, "ec2/batch-002-modify-volume.sh"), "--volume-type gp3 --iops 3000 --throughput 125\n"));
	size_t n_ec2 = 0;
	for (size_t i = 0; i < s.n; i++)
		if (strncmp(s.files[i].path, "ec2/", 4) == 0 && strstr(s.files[i].path, "modify-volume"))
			n_ec2 += count(s.files[i].data, "\taws ec2 modify-volume");
	CHECK_I64(n_ec2, 3);
	CHECK_I64(s.n_ec2, 3);
	CHECK(contains(ec2 , "still_gp2 us-east-1 vol-"));
	CHECK(strstr(file(&s, "ec2/batch-001-rollback.sh"), "--volume-type gp2") != NULL);

	/* StorageClasses: prod gets gp3-ebsmigrate (gp3 exists with other parameters), default,
	 * encrypted with the gp2 class's key; gp2 loses the default; old already defaults to gp3 */
	const char *sc = file(&s, "prod/01-storageclass-gp3.yaml");
	CHECK(contains(sc, "  name: gp3-ebsmigrate\n"));
	CHECK(contains(sc, "storageclass.kubernetes.io/is-default-class: \"true\"\n"));
	CHECK(contains(sc, "  type: gp3\n  iops: \"3000\"\n  throughput: \"125\"\n  encrypted: \"true\"\n"
			   "  kmsKeyId: \"arn:aws:kms:us-east-1:111122223333:key/k1\"\nvolumeBindingMode: WaitForFirstConsumer\n"
			   "allowVolumeExpansion: true\n"));
	CHECK(contains(file(&s, "prod/02-storageclass-gp2-undefault.json"),
		       "\"storageclass.kubernetes.io/is-default-class\":\"false\""));
	CHECK(manifest_set_find(&s, "old/01-storageclass-gp3.yaml") == NULL);
	CHECK(manifest_set_find(&s, "old/02-storageclass-gp2-undefault.json") == NULL);
	/* dunno: no StorageClass known -> default with a warning, and no CSI evidence beyond its PV */
	CHECK(contains(file(&s, "dunno/01-storageclass-gp3.yaml"), "is-default-class: \"true\""));
	CHECK(has_warning(&s, "cluster 'dunno': no StorageClasses in the input"));
	CHECK(contains(file(&s, "prod/kustomization.yaml"),
		       "resources:\n  - 00-volumeattributesclasses.yaml\n  - 01-storageclass-gp3.yaml\n"));
	CHECK(contains(file(&s, "old/kustomization.yaml"), "resources:\n  - 00-volumeattributesclasses.yaml\n"));

	/* StatefulSets naming gp2 */
	const char *readme = file(&s, "README.md");
	CHECK(contains(readme, "- `db/pg` template `data` → `gp2`"));
	CHECK(!strstr(readme, "db/web"));
	CHECK(contains(readme, "`kubectl --context prod apply -k prod/`"));
	CHECK(contains(readme, "`kubectl --context prod patch storageclass gp2 --type=merge --patch-file "
			       "prod/02-storageclass-gp2-undefault.json`"));
	CHECK(contains(readme, "`sh prod/batches/batch-001-pvc-patches.sh` — 2 claims; rollback `sh "
			       "prod/batches/batch-001-rollback.sh`"));
	CHECK(contains(readme, "Blocked volumes, later (not before 2026-12-01T14:00:00Z; once the modifications in flight have "
			       "completed; each volume is checked): `sh prod/batches/batch-004-blocked-pvc-patches.sh`"));
	CHECK(contains(readme, "`sh ec2/batch-001-modify-volume.sh`"));
	CHECK(!strstr(readme, "{{"));
	CHECK(manifest_set_find(&s, MANIFEST_MARKER) != NULL);
	CHECK_I64(s.n_pvcs, 9);
	CHECK_I64(s.n_blocked, 2);
	manifest_set_release(&s);

	/* --route annotation: no VACs; annotations with all three keys */
	o.route = MANIFEST_ROUTE_ANNOTATION;
	o.batch_size = 0;
	CHECK(manifest_build(&s, &p, &f, &o, &err) == 0);
	CHECK(manifest_set_find(&s, "prod/00-volumeattributesclasses.yaml") == NULL);
	b1 = file(&s, "prod/batches/batch-001-pvc-patches.sh");
	CHECK(contains(b1, "kubectl --context \"$ctx\" --namespace db annotate --overwrite pvc c2 \\\n"
			   "\tebs.csi.aws.com/volumeType=gp3 ebs.csi.aws.com/iops=6000 ebs.csi.aws.com/throughput=250\n"));
	CHECK_I64(count(b1, "annotate --overwrite"), 5); /* default batch size 10; blocked separately */
	CHECK(contains(file(&s, "prod/batches/batch-001-rollback.sh"),
		       "annotate --overwrite pvc c2 \\\n\tebs.csi.aws.com/volumeType=gp2 ebs.csi.aws.com/iops- ebs.csi.aws.com/throughput-\n"));
	CHECK(contains(file(&s, "prod/kustomization.yaml"), "resources:\n  - 01-storageclass-gp3.yaml\n"));
	CHECK(!strstr(file(&s, "prod/kustomization.yaml"), "00-volumeattributesclasses.yaml"));
	manifest_set_release(&s);

	/* --route ec2: every volume through EC2 */
	o.route = MANIFEST_ROUTE_EC2;
	CHECK(manifest_build(&s, &p, &f, &o, &err) == 0);
	CHECK_I64(s.n_pvcs, 0);
	CHECK_I64(s.n_ec2, 12);
	CHECK(contains(file(&s, "ec2/batch-001-modify-volume.sh"), "# EC2 route: --route ec2\n"));
	manifest_set_release(&s);

	/* a same-named VAC with other parameters is never overwritten */
	o.route = MANIFEST_ROUTE_VAC;
	free(f.vacs[0].parameters[1].value);
	f.vacs[0].parameters[1].value = xstrdup("4000");
	buf_reset(&err);
	CHECK(manifest_build(&s, &p, &f, &o, &err) == EM_ECONFLICT);
	CHECK_STR(err.s, "cluster 'prod': VolumeAttributesClass 'gp3-3000-125' already exists with other parameters or "
			 "driver; its parameters cannot change: delete or rename it, then plan again");
	manifest_set_release(&s);

	/* a missing template directory is an input error */
	buf_reset(&err);
	o.templates_dir = "/nonexistent/templates";
	CHECK(manifest_build(&s, &p, &f, &o, &err) == EM_EINPUT);
	manifest_set_release(&s);

	buf_release(&err);
	plan_release(&p);
	fleet_release(&f);
}

/* StorageClass rules beyond the main fleet: no default, a non-gp2 default, an identical existing
 * gp3 class, accounts split under ec2/. */
static void test_storage_class_rules(void)
{
	struct fleet f;
	fleet_init(&f);
	fleet_add_cluster(&f, "a"); /* no default at all */
	fleet_add_cluster(&f, "b"); /* default is EFS */
	fleet_add_cluster(&f, "c"); /* gp2 default, and a gp3 class identical to what we would write */
	add_sc(&f, "a", "gp2", "ebs.csi.aws.com", "gp2", 0);
	add_sc(&f, "b", "efs", "efs.csi.aws.com", NULL, 1);
	add_sc(&f, "b", "gp2", "kubernetes.io/aws-ebs", NULL, 0);
	add_sc(&f, "c", "gp2", "ebs.csi.aws.com", "gp2", 1);
	struct storage_class *same = add_sc(&f, "c", "gp3", "ebs.csi.aws.com", "gp3", 0);
	sc_set(same, "iops", "3000");
	sc_set(same, "throughput", "125");
	bind(add(&f, "vol-a", 100), "a", "a1", 0, NULL);
	bind(add(&f, "vol-b", 100), "b", "b1", 0, NULL);
	bind(add(&f, "vol-c", 100), "c", "c1", 0, NULL);
	add(&f, "vol-x", 100)->account = xstrdup("111122223333");
	add(&f, "vol-y", 100)->account = xstrdup("444455556666");
	struct plan_options po = {PLAN_MODE_MATCH, NOW};
	struct plan p;
	planner_build(&p, &f, &book, &po);
	struct manifest_options o = {.dir = "unused"};
	struct manifest_set s;
	struct buf err = BUF_INIT;
	CHECK(manifest_build(&s, &p, &f, &o, &err) == 0);
	CHECK(contains(file(&s, "a/01-storageclass-gp3.yaml"), "is-default-class: \"false\""));
	CHECK(manifest_set_find(&s, "a/02-storageclass-gp2-undefault.json") == NULL);
	CHECK(contains(file(&s, "b/01-storageclass-gp3.yaml"), "is-default-class: \"false\""));
	CHECK(contains(file(&s, "README.md"), "the default stays `efs`"));
	CHECK(contains(file(&s, "README.md"), "the cluster has no default StorageClass and this does not add one"));
	CHECK(contains(file(&s, "c/01-storageclass-gp3.yaml"), "  name: gp3\n"));
	CHECK(contains(file(&s, "c/01-storageclass-gp3.yaml"), "is-default-class: \"true\""));
	CHECK(manifest_set_find(&s, "c/02-storageclass-gp2-undefault.json") != NULL);
	CHECK(contains(file(&s, "ec2/111122223333/batch-001-modify-volume.sh"), "vol-x"));
	CHECK(contains(file(&s, "ec2/444455556666/batch-001-modify-volume.sh"), "vol-y"));
	CHECK(contains(file(&s, "ec2/444455556666/batch-001-modify-volume.sh"), "# EC2 route, account 444455556666, batch 1 of 1"));
	manifest_set_release(&s);
	buf_release(&err);
	plan_release(&p);
	fleet_release(&f);
}

/* ---------------------------------------------------------------- writing */

static int exists(const char *dir, const char *rel)
{
	struct buf b = BUF_INIT;
	buf_addf(&b, "%s/%s", dir, rel);
	int ok = access(b.s, F_OK) == 0;
	buf_release(&b);
	return ok;
}

static size_t entries_with_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	if (d)
		closedir(d);
	return n;
}

static void test_write(void)
{
	char base[] = "/tmp/test_plan_manifests.XXXXXX";
	if (!mkdtemp(base)) {
		CHECK(!"mkdtemp");
		return;
	}
	struct buf dir = BUF_INIT, err = BUF_INIT, other = BUF_INIT;
	buf_addf(&dir, "%s/out", base);
	struct manifest_set s;
	manifest_set_init(&s);
	struct buf data = BUF_INIT;
	buf_adds(&data, "hello\n");
	XGROW(s.files, s.n, s.alloc);
	s.files[s.n++] = (struct manifest_file){xstrdup("prod/batches/x.sh"), buf_detach(&data), 6, 0755};
	buf_adds(&data, "# index\nprod/batches/x.sh\n");
	size_t marker_len = data.len;
	XGROW(s.files, s.n, s.alloc);
	s.files[s.n++] = (struct manifest_file){xstrdup(MANIFEST_MARKER), buf_detach(&data), marker_len, 0644};

	CHECK(manifest_write_dir(&s, dir.s, 0, &err) == 0);
	CHECK(exists(dir.s, "prod/batches/x.sh"));
	struct stat st;
	buf_addf(&other, "%s/prod/batches/x.sh", dir.s);
	CHECK(stat(other.s, &st) == 0 && (st.st_mode & 0777) == 0755);
	/* not empty: refused without --force */
	CHECK(manifest_write_dir(&s, dir.s, 0, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "is not empty; use --force") != NULL);
	/* --force replaces a directory of ours */
	buf_reset(&err);
	CHECK(manifest_write_dir(&s, dir.s, 1, &err) == 0);
	CHECK(exists(dir.s, MANIFEST_MARKER));
	CHECK_I64(entries_with_prefix(base, "out."), 0); /* no .tmp- or .old- left */
	/* --force refuses a directory of ours holding a file its index does not list, naming it,
	 * and an empty directory it did not write (issue 12 item 10) */
	buf_reset(&other);
	buf_addf(&other, "%s/prod/notes.txt", dir.s);
	FILE *nf = fopen(other.s, "w");
	if (nf)
		fclose(nf);
	buf_reset(&err);
	CHECK(manifest_write_dir(&s, dir.s, 1, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "'prod/notes.txt' in it was not written by ebsmigrate") != NULL);
	CHECK(exists(dir.s, "prod/notes.txt"));
	CHECK(exists(dir.s, "prod/batches/x.sh"));
	unlink(other.s);
	buf_reset(&other);
	buf_addf(&other, "%s/extra", dir.s);
	mkdir(other.s, 0755);
	buf_reset(&err);
	CHECK(manifest_write_dir(&s, dir.s, 1, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "'extra/' in it was not written") != NULL);
	rmdir(other.s);
	buf_reset(&err);
	CHECK(manifest_write_dir(&s, dir.s, 1, &err) == 0);
	/* --force never replaces someone else's directory */
	buf_reset(&other);
	buf_addf(&other, "%s/mine", base);
	mkdir(other.s, 0755);
	buf_adds(&other, "/keep.txt");
	FILE *fp = fopen(other.s, "w");
	if (fp)
		fclose(fp);
	buf_reset(&other);
	buf_addf(&other, "%s/mine", base);
	buf_reset(&err);
	CHECK(manifest_write_dir(&s, other.s, 1, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "refusing to replace") != NULL);
	CHECK(exists(other.s, "keep.txt"));
	/* an empty directory is fine; a file is not */
	buf_reset(&other);
	buf_addf(&other, "%s/empty", base);
	mkdir(other.s, 0755);
	CHECK(manifest_write_dir(&s, other.s, 0, &err) == 0);
	CHECK(exists(other.s, "prod/batches/x.sh"));
	buf_reset(&other);
	buf_addf(&other, "%s/mine/keep.txt", base);
	buf_reset(&err);
	CHECK(manifest_check_dir(other.s, 1, &err) == EM_EINPUT);
	CHECK(strstr(err.s, "is not a directory") != NULL);
	/* a parent that does not exist yet is created */
	buf_reset(&other);
	buf_addf(&other, "%s/a/b/out/", base);
	CHECK(manifest_write_dir(&s, other.s, 0, &err) == 0);
	CHECK(exists(other.s, MANIFEST_MARKER));

	manifest_set_release(&s);
	buf_reset(&other);
	buf_addf(&other, "rm -rf '%s'", base);
	CHECK(system(other.s) == 0);
	buf_release(&dir);
	buf_release(&err);
	buf_release(&other);
}

int main(void)
{
	struct buf err = BUF_INIT;
	pricebook_init(&book);
	if (pricebook_load_bundled(&book, &err)) {
		printf("# %s\n", err.s);
		return 1;
	}
	em_parse_time("2026-12-01T12:00:00Z", &NOW);
	test_quoting();
	test_naming_and_versions();
	test_render();
	test_build();
	test_storage_class_rules();
	test_write();
	pricebook_release(&book);
	buf_release(&err);
	return tap_done();
}
