/*
 * test_check.c - the gp2 gate: the manifest reader (kube_manifest_read.c: documents, Helm's
 * `# Source:` comments, JSON values and Lists, positions, nulls, merge keys, duplicate keys,
 * the kinds it keeps, the messages for bad input) and the rules (check.c: every rule firing and
 * not firing, class resolution through the input, extra classes and defaults, VAC and
 * annotation overrides, --strict, --skip, skip annotations), and the XML escaping the JUnit
 * report relies on (buf_add_xml_escaped).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/check.h"
#include "ebsmigrate/check_output.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/kube_manifest.h"
#include "tap.h"

/* Reads text as a file named "t.yaml" into m (initialised here); returns the reader's code. */
static int read_as(struct kube_manifest *m, const char *text, struct buf *err)
{
	kube_manifest_init(m);
	size_t src = kube_manifest_add_source(m, "t.yaml", KM_SOURCE_FILE);
	return kube_manifest_read_text(m, src, text, strlen(text), err);
}

/* text must be refused with exactly this message. */
static void bad(const char *text, const char *message)
{
	struct kube_manifest m;
	struct buf err = BUF_INIT;
	int rc = read_as(&m, text, &err);
	tap_check(rc == EM_EINPUT, message, __FILE__, __LINE__);
	tap_check_str(err.s, message, text, __FILE__, __LINE__);
	tap_check(m.n == 0 && m.documents == 0, "nothing kept", __FILE__, __LINE__);
	kube_manifest_release(&m);
	buf_release(&err);
}

static const char helm_chart[] =
	"---\n"
	"# Source: shop/templates/sa.yaml\n"
	"apiVersion: v1\n"
	"kind: ServiceAccount\n"
	"metadata:\n"
	"  name: shop\n"
	"---\n"
	"---\n"
	"# Source: shop/templates/sc.yaml\n"
	"apiVersion: storage.k8s.io/v1\n"
	"kind: StorageClass\n"
	"metadata:\n"
	"  name: std\n"
	"  annotations:\n"
	"    storageclass.kubernetes.io/is-default-class: \"true\"\n"
	"provisioner: ebs.csi.aws.com\n"
	"parameters:\n"
	"  type: gp2\n"
	"---\n"
	"# Source: shop/templates/sts.yaml\n"
	"apiVersion: apps/v1\n"
	"kind: StatefulSet\n"
	"metadata:\n"
	"  name: db\n"
	"  namespace: shop\n"
	"spec:\n"
	"  template:\n"
	"    spec:\n"
	"      volumes:\n"
	"        - name: scratch\n"
	"          ephemeral:\n"
	"            volumeClaimTemplate:\n"
	"              spec:\n"
	"                storageClassName: \"\"\n"
	"  volumeClaimTemplates:\n"
	"    - metadata:\n"
	"        name: data\n"
	"      spec:\n"
	"        storageClassName: std\n"
	"    - metadata:\n"
	"        name: wal\n"
	"      spec:\n"
	"        storageClassName:\n";

static void test_reader_documents(void)
{
	struct kube_manifest m;
	struct buf err = BUF_INIT;
	CHECK_I64(read_as(&m, helm_chart, &err), 2);
	CHECK_STR(err.s, "");
	CHECK_I64(m.documents, 4); /* the empty one counts: people count the --- */
	CHECK_I64(m.sources[0].documents, 4);
	CHECK_I64(m.other_objects, 1); /* the ServiceAccount */
	const struct km_object *sc = &m.objs[0], *sts = &m.objs[1];
	CHECK(sc->what == KM_STORAGE_CLASS);
	CHECK_STR(sc->name, "std");
	CHECK_I64(sc->document, 3);
	CHECK_STR(sc->helm_source, "shop/templates/sc.yaml");
	CHECK_I64(sc->helm_line, 9);
	CHECK_STR(sc->provisioner.value, "ebs.csi.aws.com");
	CHECK_I64(sc->provisioner.at.line, 16);
	CHECK_I64(sc->provisioner.at.column, 14);
	CHECK_I64(sc->n_params, 1);
	CHECK_STR(sc->params[0].value, "gp2");
	CHECK_I64(sc->params[0].at.line, 18);
	CHECK_STR(sc->is_default.value, "true");
	CHECK_I64(sc->is_default.at.line, 15);
	CHECK(sts->what == KM_CLAIMS);
	CHECK_STR(sts->helm_source, "shop/templates/sts.yaml");
	CHECK_STR(sts->namespace_, "shop");
	CHECK_I64(sts->n_claims, 3); /* the two templates, then the ephemeral volume */
	CHECK_STR(sts->claims[0].path, "spec.volumeClaimTemplates[0]");
	CHECK_STR(sts->claims[0].name, "data");
	CHECK_STR(sts->claims[0].storage_class.value, "std");
	CHECK_I64(sts->claims[0].storage_class.at.line, 39);
	CHECK_STR(sts->claims[1].name, "wal");
	CHECK(sts->claims[1].storage_class.value == NULL); /* `storageClassName:` is null: the default */
	CHECK_STR(sts->claims[2].path, "spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate");
	CHECK_STR(sts->claims[2].name, "scratch");
	CHECK_STR(sts->claims[2].storage_class.value, ""); /* "" is "no class", not absent */
	char *name = km_object_display_name(sts);
	CHECK_STR(name, "shop/db");
	free(name);
	kube_manifest_release(&m);
	buf_release(&err);
}

static void test_reader_json(void)
{
	/* two values one after another (kubectl -o json twice), the second a List whose items carry
	 * no kind (as API list pages do) */
	const char *text = "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"a\"},"
			   "\"provisioner\":\"kubernetes.io/aws-ebs\"}\n"
			   "{\"apiVersion\": \"v1\", \"kind\": \"PersistentVolumeClaimList\", \"items\": [\n"
			   "  {\"metadata\": {\"name\": \"c\", \"namespace\": \"n\"}, \"spec\": {\"storageClassName\": \"a\"}}]}\n";
	struct kube_manifest m;
	struct buf err = BUF_INIT;
	CHECK_I64(read_as(&m, text, &err), 2);
	CHECK_STR(err.s, "");
	CHECK_I64(m.documents, 2);
	CHECK_STR(m.objs[1].kind, "PersistentVolumeClaim");
	CHECK_STR(m.objs[1].item_path, "items[0]");
	CHECK_I64(m.objs[1].document, 2);
	CHECK_I64(m.objs[1].claims[0].storage_class.at.line, 3); /* counted in the whole file */
	CHECK(m.objs[1].helm_source == NULL);
	kube_manifest_release(&m);

	/* a live page: no positions, no documents, no item paths */
	kube_manifest_init(&m);
	size_t src = kube_manifest_add_source(&m, "prod", KM_SOURCE_CLUSTER);
	CHECK_STR(m.sources[src].label, "context 'prod'");
	const char *page = "{\"kind\":\"StorageClassList\",\"apiVersion\":\"storage.k8s.io/v1\",\"items\":["
			   "{\"metadata\":{\"name\":\"gp2\"},\"provisioner\":\"ebs.csi.aws.com\",\"parameters\":{\"type\":\"gp2\"}}]}";
	CHECK_I64(kube_manifest_read_text(&m, src, page, strlen(page), &err), 1);
	CHECK_I64(m.objs[0].at.line, 0);
	CHECK_I64(m.objs[0].document, 0);
	CHECK_STR(m.objs[0].item_path, "");
	CHECK_I64(m.documents, 0);
	kube_manifest_release(&m);
	buf_release(&err);
}

static void test_reader_yaml_features(void)
{
	struct kube_manifest m;
	struct buf err = BUF_INIT;
	/* merge keys (anchors live in their document; written keys win), a CRD named StorageClass in another group, a top-level
	 * list and a values file (not objects), an alias cycle that must not loop: a List whose item is a List whose items
	 * are that first list again (Lists are flattened at any depth, each object read once) */
	const char *text = "x: 1\n"
			   "---\n"
			   "apiVersion: v1\n"
			   "kind: PersistentVolumeClaim\n"
			   "metadata: {name: m, labels: &base {storageClassName: fast}}\n"
			   "spec:\n"
			   "  <<: *base\n"
			   "  volumeAttributesClassName: v\n"
			   "---\n"
			   "apiVersion: example.com/v1\n"
			   "kind: StorageClass\n"
			   "metadata: {name: crd}\n"
			   "---\n"
			   "- a\n"
			   "---\n"
			   "&a [*a]\n"
			   "---\n"
			   "apiVersion: v1\n"
			   "kind: List\n"
			   "items: &i [{apiVersion: v1, kind: List, items: *i}]\n";
	CHECK_I64(read_as(&m, text, &err), 1);
	CHECK_STR(err.s, "");
	CHECK_STR(m.objs[0].claims[0].storage_class.value, "fast");
	CHECK_STR(m.objs[0].claims[0].vac.value, "v");
	CHECK_I64(m.other_objects, 1); /* the CRD */
	CHECK_I64(m.not_objects, 3);   /* x:, the list, the cycle */
	kube_manifest_release(&m);

	/* a Deployment's and a CronJob's ephemeral volumes; a Deployment without any is not kept */
	text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
	       "      volumes:\n      - name: e\n        ephemeral:\n          volumeClaimTemplate:\n"
	       "            metadata: {annotations: {ebs.csi.aws.com/volumeType: gp2}}\n            spec: {}\n"
	       "---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  jobTemplate:\n    spec:\n"
	       "      template:\n        spec:\n          volumes: [{name: s, ephemeral: {volumeClaimTemplate: {spec: "
	       "{storageClassName: gp2}}}}]\n"
	       "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: plain}\nspec: {template: {spec: {volumes: "
	       "[{name: x, emptyDir: {}}]}}}\n";
	CHECK_I64(read_as(&m, text, &err), 2);
	CHECK_STR(m.objs[0].claims[0].volume_type.value, "gp2");
	CHECK_STR(m.objs[1].claims[0].path, "spec.jobTemplate.spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate");
	CHECK_I64(m.other_objects, 1);
	kube_manifest_release(&m);
	buf_release(&err);
}

static void test_reader_bad_input(void)
{
	bad("a: 1\n  b: 2\n", "t.yaml: not valid YAML at line 2, column 4: mapping values are not allowed in this context");
	bad("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: x}\nspec:\n  storageClassName: a\n"
	    "  storageClassName: b\n",
	    "t.yaml: document 1, line 6: PersistentVolumeClaim 'x': spec: key 'storageClassName' appears twice (also at line 5)");
	bad("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, namespace: n}\nspec:\n  volumeClaimTemplates:\n"
	    "  - metadata: {name: d}\n    spec: [1]\n",
	    "t.yaml: document 1, line 7: StatefulSet 'n/s': spec.volumeClaimTemplates[0].spec: expected a mapping, got a list");
	bad("apiVersion: v1\nkind: List\nitems:\n- 5\n", "t.yaml: document 1, line 4: items[0]: must be an object, got a number");
	bad("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nparameters: {type: [gp2]}\n",
	    "t.yaml: document 1, line 4: StorageClass 's': parameters.type: expected a string, got a list");
	bad("---\nkind: ok\n---\nkind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata:\n  name: {{ .Values.name }}\n",
	    "t.yaml: document 2, line 7: StorageClass: metadata.name: expected a string, got a mapping; it holds '{{': an "
	    "unrendered Helm template? Check what `helm template CHART` prints: helm template CHART | ebsmigrate check -f -");
	bad("kind: StorageClass\nmetadata:\n  name: {{ .Values.name }} x\n",
	    "t.yaml: not valid YAML at line 3, column 28: did not find expected key (while parsing a block mapping that "
	    "starts at line 3); it holds '{{': an unrendered Helm template? Check what `helm template CHART` prints: "
	    "helm template CHART | ebsmigrate check -f -");
	bad("{\"kind\": \"StorageClass\",\n \"x\": }\n", "t.yaml: not valid JSON at line 2, column 7");
}

/* ------------------------------------------------------------------ rules */

struct rules_run {
	struct kube_manifest checked, extra;
	struct check_result r;
};

static void run_rules(struct rules_run *rr, const char *checked, const char *extra, const struct check_options *o)
{
	struct buf err = BUF_INIT;
	CHECK(read_as(&rr->checked, checked, &err) >= 0);
	kube_manifest_init(&rr->extra);
	if (extra) {
		size_t src = kube_manifest_add_source(&rr->extra, "classes.yaml", KM_SOURCE_FILE);
		CHECK(kube_manifest_read_text(&rr->extra, src, extra, strlen(extra), &err) >= 0);
	}
	CHECK_STR(err.s, "");
	buf_release(&err);
	check_run(&rr->r, &rr->checked, &rr->extra, o);
}

static void release_run(struct rules_run *rr)
{
	check_result_release(&rr->r);
	kube_manifest_release(&rr->checked);
	kube_manifest_release(&rr->extra);
}

/* The findings as "RULE level path" lines (suppressed ones marked). */
static char *summary(const struct check_result *r)
{
	struct buf b = BUF_INIT;
	for (size_t i = 0; i < r->n; i++)
		buf_addf(&b, "%s %s %s%s\n", r->findings[i].rule->id, r->findings[i].level == CHECK_ERROR ? "error" : "warning",
			 r->findings[i].path, r->findings[i].suppressed ? " skipped" : "");
	buf_addc(&b, 0);
	return buf_detach(&b);
}

static void expect(const char *checked, const char *extra, const struct check_options *o, const char *want, int line)
{
	struct rules_run rr;
	run_rules(&rr, checked, extra, o);
	char *got = summary(&rr.r);
	tap_check_str(got, want, checked, __FILE__, line);
	free(got);
	release_run(&rr);
}
#define EXPECT(checked, extra, o, want) expect((checked), (extra), (o), (want), __LINE__)

#define SC(name, prov, params, ann)                                                                             \
	"---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: " name "\n  annotations: {" ann \
	"}\nprovisioner: " prov "\nparameters: {" params "}\n"
#define PVC(name, spec, ann) "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: " name "\n  namespace: ns\n  annotations: {" ann "}\nspec: {" spec "}\n"
#define DEF "storageclass.kubernetes.io/is-default-class: \"true\""

static void test_rules_storage_classes(void)
{
	EXPECT(SC("a", "ebs.csi.aws.com", "type: gp2", ""), NULL, NULL, "EM-GP2-001 error parameters.type\n");
	EXPECT(SC("a", "ebs.csi.aws.com", "Type: GP2", ""), NULL, NULL, "EM-GP2-001 error parameters.Type\n");
	EXPECT(SC("a", "ebs.csi.eks.amazonaws.com", "type: gp2", DEF), NULL, NULL,
	       "EM-GP2-001 error parameters.type\nEM-GP2-003 error metadata.annotations['storageclass.kubernetes.io/is-default-class']\n");
	EXPECT(SC("a", "kubernetes.io/aws-ebs", "fsType: ext4", ""), NULL, NULL, "EM-GP2-002 error provisioner\n");
	EXPECT(SC("a", "kubernetes.io/aws-ebs", "type: gp3", DEF), NULL, NULL, "");
	EXPECT(SC("a", "ebs.csi.aws.com", "fsType: ext4", DEF), NULL, NULL, ""); /* the CSI default is gp3 */
	EXPECT(SC("a", "efs.csi.aws.com", "type: gp2", DEF), NULL, NULL, "");   /* not EBS */
	/* the beta default key counts too; "false" does not */
	EXPECT(SC("a", "ebs.csi.aws.com", "type: gp2", "storageclass.beta.kubernetes.io/is-default-class: \"true\""), NULL,
	       NULL,
	       "EM-GP2-001 error parameters.type\nEM-GP2-003 error metadata.annotations['storageclass.beta.kubernetes.io/is-default-class']\n");
	EXPECT(SC("a", "ebs.csi.aws.com", "type: gp2", "storageclass.kubernetes.io/is-default-class: \"false\""), NULL, NULL,
	       "EM-GP2-001 error parameters.type\n");
	/* two defaults; and a default in the input beside the cluster's */
	EXPECT(SC("a", "ebs.csi.aws.com", "type: gp3", DEF) SC("b", "ebs.csi.aws.com", "type: gp3", DEF), NULL, NULL,
	       "EM-CLS-003 warning metadata.annotations['storageclass.kubernetes.io/is-default-class']\n");
	EXPECT(SC("a", "ebs.csi.aws.com", "type: gp3", DEF), SC("gp2", "kubernetes.io/aws-ebs", "type: gp2", DEF), NULL,
	       "EM-CLS-003 warning metadata.annotations['storageclass.kubernetes.io/is-default-class']\n");
	EXPECT(SC("gp2", "ebs.csi.aws.com", "type: gp3", DEF), SC("gp2", "kubernetes.io/aws-ebs", "type: gp2", DEF), NULL, "");
}

static void test_rules_claims(void)
{
	const char *gp2 = SC("slow", "ebs.csi.aws.com", "type: gp2", "");
	const char *gp3 = SC("fast", "ebs.csi.aws.com", "type: gp3, iops: \"4000\", throughput: \"250\"", DEF);
	char both[2048];
	snprintf(both, sizeof both, "%s%s", gp2, gp3);
	struct buf in = BUF_INIT;
	/* a claim naming a gp2 class in the input, through the field or the beta annotation (which wins) */
	buf_addf(&in, "%s%s", both, PVC("p", "storageClassName: slow", ""));
	EXPECT(in.s, NULL, NULL, "EM-GP2-001 error parameters.type\nEM-GP2-004 error spec.storageClassName\n");
	buf_reset(&in);
	buf_addf(&in, "%s%s", gp3, PVC("p", "storageClassName: fast", "volume.beta.kubernetes.io/storage-class: slow"));
	EXPECT(in.s, gp2, NULL, "EM-GP2-004 error metadata.annotations['volume.beta.kubernetes.io/storage-class']\n");
	/* "" is no class; no class is the default (gp3 here, so fine) */
	buf_reset(&in);
	buf_addf(&in, "%s%s%s", both, PVC("p", "storageClassName: \"\"", ""), PVC("q", "", ""));
	EXPECT(in.s, NULL, NULL, "EM-GP2-001 error parameters.type\n");
	/* the default is gp2: from the extra classes when the input marks none */
	EXPECT(PVC("q", "", ""), SC("std", "kubernetes.io/aws-ebs", "", DEF), NULL, "EM-GP2-005 error spec\n");
	EXPECT(PVC("q", "", ""), NULL, NULL, "EM-CLS-002 warning spec\n");
	struct check_options strict = {1, NULL, 0};
	EXPECT(PVC("q", "", ""), NULL, &strict, "EM-CLS-002 error spec\n");
	EXPECT(PVC("q", "storageClassName: nope", ""), NULL, NULL, "EM-CLS-001 warning spec.storageClassName\n");
	EXPECT(PVC("q", "storageClassName: nope", ""), NULL, &strict, "EM-CLS-001 error spec.storageClassName\n");
	/* the class found among the extra classes, the input's definition winning over them */
	EXPECT(PVC("q", "storageClassName: slow", ""), gp2, NULL, "EM-GP2-004 error spec.storageClassName\n");
	buf_reset(&in);
	buf_addf(&in, "%s%s", SC("slow", "ebs.csi.aws.com", "type: gp3", ""), PVC("q", "storageClassName: slow", ""));
	EXPECT(in.s, gp2, NULL, "");
	/* a VAC or the annotation decides over the class */
	const char *vac3 = "---\napiVersion: storage.k8s.io/v1beta1\nkind: VolumeAttributesClass\nmetadata: {name: v3}\n"
			   "driverName: ebs.csi.aws.com\nparameters: {type: gp3, iops: \"3000\", throughput: \"125\"}\n";
	const char *vac2 = "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttributesClass\nmetadata: {name: v2}\n"
			   "driverName: ebs.csi.aws.com\nparameters: {type: gp2}\n";
	buf_reset(&in);
	buf_addf(&in, "%s%s", vac3, PVC("q", "storageClassName: slow, volumeAttributesClassName: v3", ""));
	EXPECT(in.s, gp2, NULL, "");
	buf_reset(&in);
	buf_addf(&in, "%s%s", vac2, PVC("q", "storageClassName: fast, volumeAttributesClassName: v2", ""));
	EXPECT(in.s, gp3, NULL, "EM-GP2-006 error parameters.type\nEM-GP2-007 error spec.volumeAttributesClassName\n");
	EXPECT(PVC("q", "storageClassName: slow", "ebs.csi.aws.com/volumeType: gp3"), gp2, NULL, "");
	EXPECT(PVC("q", "storageClassName: fast", "ebs.csi.aws.com/volumeType: gp2"), gp3, NULL,
	       "EM-GP2-007 error metadata.annotations['ebs.csi.aws.com/volumeType']\n");
	EXPECT(PVC("q", "storageClassName: fast, volumeAttributesClassName: gone", ""), gp3, NULL,
	       "EM-CLS-001 warning spec.volumeAttributesClassName\n");
	/* VACs: type only, partial, complete; another driver */
	EXPECT("apiVersion: storage.k8s.io/v1\nkind: VolumeAttributesClass\nmetadata: {name: t}\ndriverName: "
	       "ebs.csi.aws.com\nparameters: {type: gp3}\n",
	       NULL, NULL, "EM-VAC-001 warning parameters.type\n");
	EXPECT("apiVersion: storage.k8s.io/v1\nkind: VolumeAttributesClass\nmetadata: {name: t}\ndriverName: "
	       "ebs.csi.aws.com\nparameters: {type: gp3, iops: \"3000\"}\n",
	       NULL, NULL, "EM-VAC-001 warning parameters.type\n");
	EXPECT(vac3, NULL, NULL, "");
	EXPECT("apiVersion: storage.k8s.io/v1\nkind: VolumeAttributesClass\nmetadata: {name: t}\ndriverName: other\n"
	       "parameters: {type: gp2}\n",
	       NULL, NULL, "");
	buf_release(&in);
}

static void test_rules_statefulset_and_skips(void)
{
	/* the Helm chart above: the class, its default annotation, the template naming it, the
	 * template naming none (so the default, gp2), and the ephemeral volume with "" */
	struct rules_run rr;
	run_rules(&rr, helm_chart, NULL, NULL);
	char *got = summary(&rr.r);
	CHECK_STR(got, "EM-GP2-001 error parameters.type\n"
		       "EM-GP2-003 error metadata.annotations['storageclass.kubernetes.io/is-default-class']\n"
		       "EM-GP2-004 error spec.volumeClaimTemplates[0].spec.storageClassName\n"
		       "EM-GP2-005 error spec.volumeClaimTemplates[1].spec\n");
	free(got);
	CHECK_I64(rr.r.errors, 4);
	CHECK_I64(rr.r.objects, 2);
	CHECK_I64(rr.r.claims, 3);
	CHECK_STR(rr.r.findings[2].message,
		  "StatefulSet 'shop/db' volumeClaimTemplate 'data' names StorageClass 'std', which provisions gp2");
	CHECK_I64(rr.r.findings[2].at.line, 39);
	CHECK(check_object_failed(&rr.r, 1));
	/* the JUnit report parses as XML with a failing test per object; where it says the template */
	struct check_report rep = {&rr.checked, &rr.r, NULL, "charts/", 0, 0};
	struct buf out = BUF_INIT;
	check_write_junit(&out, &rep);
	CHECK(strstr(out.s, "<testsuites name=\"ebsmigrate check\" tests=\"2\" failures=\"2\" errors=\"0\">") != NULL);
	CHECK(strstr(out.s, "at t.yaml:39 (shop/templates/sts.yaml)") != NULL);
	buf_reset(&out);
	check_write_sarif(&out, &rep);
	CHECK(strstr(out.s, "\"uri\": \"t.yaml\"") != NULL); /* a file is its own artifact */
	buf_release(&out);
	release_run(&rr);

	/* --skip: the rule does not run; an annotation: the finding is kept, suppressed, not counted */
	const struct check_rule *skip[] = {check_rule_find("claim-default-gp2")};
	CHECK(skip[0] && strcmp(skip[0]->id, "EM-GP2-005") == 0);
	CHECK(check_rule_find("em-gp2-001") == &check_rules[0]);
	CHECK(check_rule_find("EM-GP2-999") == NULL);
	struct check_options o = {0, skip, 1};
	EXPECT(PVC("q", "", ""), SC("std", "kubernetes.io/aws-ebs", "", DEF), &o, "");
	run_rules(&rr,
		  PVC("q", "storageClassName: slow", "skip-check.ebsmigrate.io/EM-GP2-004: \"legacy, moves in Q3\", "
						       "skip-check.ebsmigrate.io/nope: x"),
		  SC("slow", "ebs.csi.aws.com", "type: gp2", ""), NULL);
	got = summary(&rr.r);
	CHECK_STR(got, "EM-GP2-004 error spec.storageClassName skipped\n");
	free(got);
	CHECK_I64(rr.r.errors, 0);
	CHECK_I64(rr.r.suppressed, 1);
	CHECK_STR(rr.r.findings[0].suppressed, "legacy, moves in Q3");
	CHECK(!check_object_failed(&rr.r, 0));
	CHECK_I64(rr.r.n_notes, 1);
	CHECK_STR(rr.r.n_notes ? rr.r.notes[0] : "",
		  "t.yaml: document 1, line 7: PersistentVolumeClaim 'ns/q': annotation skip-check.ebsmigrate.io/nope "
		  "names no rule (see 'ebsmigrate check --list-rules')");
	release_run(&rr);
}

static void test_rules_table(void)
{
	/* ids and names are unique (each finds its own rule); every rule has a summary and help */
	for (size_t i = 0; i < check_n_rules; i++) {
		CHECK(check_rules[i].name && check_rules[i].summary && check_rules[i].help);
		CHECK(check_rule_find(check_rules[i].id) == &check_rules[i]);
		CHECK(check_rule_find(check_rules[i].name) == &check_rules[i]);
	}
}

static void check_xml(const char *in, const char *want)
{
	struct buf b = BUF_INIT;
	buf_add_xml_escaped(&b, in);
	CHECK_STR(b.s, want);
	buf_release(&b);
}

static void test_xml_escape(void)
{
	check_xml("a<b>&\"c'", "a&lt;b&gt;&amp;&quot;c&apos;");
	check_xml("tab\tnl\ncr\r", "tab\tnl\ncr\r");
	check_xml("bell\x07" "esc\x1b", "bell\xEF\xBF\xBD" "esc\xEF\xBF\xBD");
	check_xml("caf\xc3\xa9 \xf0\x9f\x92\xbe", "caf\xc3\xa9 \xf0\x9f\x92\xbe");
	check_xml("bad\xff\xc3", "bad\xEF\xBF\xBD\xEF\xBF\xBD");
	check_xml("sur\xed\xa0\x80", "sur\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* U+D800: not a character */
	check_xml("nc\xef\xbf\xbf", "nc\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  /* U+FFFF */
	check_xml("", "");
	check_xml(NULL, "");
}

int main(void)
{
	test_reader_documents();
	test_reader_json();
	test_reader_yaml_features();
	test_reader_bad_input();
	test_rules_storage_classes();
	test_rules_claims();
	test_rules_statefulset_and_skips();
	test_rules_table();
	test_xml_escape();
	return tap_done();
}
