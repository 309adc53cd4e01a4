/* fuzz_kube_manifest.c - manifests as `ebsmigrate check -f` reads them (YAML streams, helm
 * template output, JSON values and Lists; kube_manifest_read_text), then judged by the gate's
 * rules (check_run, once with the text as the checked objects and once as the extra classes of
 * a claim that names no class) and written in every report format. The reports are checked, not
 * just produced: the JSON and SARIF documents must parse as JSON (cJSON) and the JUnit report as
 * XML (expat), whatever names, control characters or bytes the input held; a finding must point
 * at an object that exists.
 */
#include <cjson/cJSON.h>
#include <expat.h>
#include <stdlib.h>

#include "ebsmigrate/check.h"
#include "ebsmigrate/check_output.h"
#include "ebsmigrate/kube_manifest.h"
#include "ebsmigrate/table.h"
#include "fuzz.h"

static void must_parse_json(const struct buf *b)
{
	cJSON *j = cJSON_ParseWithLength(b->s, b->len);
	if (!j)
		abort();
	cJSON_Delete(j);
}

static void must_parse_xml(const struct buf *b)
{
	XML_Parser p = XML_ParserCreate("UTF-8");
	if (!p)
		abort();
	if (XML_Parse(p, b->s, (int)b->len, 1) != XML_STATUS_OK)
		abort();
	XML_ParserFree(p);
}

static void judge(const struct kube_manifest *checked, const struct kube_manifest *extra, int strict)
{
	struct check_options o = {strict, NULL, 0};
	struct check_result r;
	check_run(&r, checked, extra, &o);
	for (size_t i = 0; i < r.n; i++)
		if (r.findings[i].object >= checked->n || !r.findings[i].message || !r.findings[i].path)
			abort();
	struct check_report rep = {checked, &r, &o, "charts/", 0, 0};
	struct buf out = BUF_INIT;
	check_write_json(&out, &rep);
	must_parse_json(&out);
	buf_reset(&out);
	check_write_sarif(&out, &rep);
	must_parse_json(&out);
	buf_reset(&out);
	check_write_junit(&out, &rep);
	must_parse_xml(&out);
	buf_reset(&out);
	check_write_table(&out, &rep, &(struct table_options){0, 1, 0, NULL}, 1);
	buf_release(&out);
	check_result_release(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct kube_manifest m, claim;
	kube_manifest_init(&m);
	kube_manifest_init(&claim);
	struct buf err = BUF_INIT;
	/* the input read as a file, and as standard input (Helm's template paths in the reports) */
	size_t src = kube_manifest_add_source(&m, "fuzz.yaml", size % 2 ? KM_SOURCE_STDIN : KM_SOURCE_FILE);
	if (kube_manifest_read_text(&m, src, (const char *)data, size, &err) >= 0) {
		judge(&m, NULL, size % 3 == 0);
		static const char pvc[] = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {}\n";
		size_t cs = kube_manifest_add_source(&claim, "claim.yaml", KM_SOURCE_FILE);
		if (kube_manifest_read_text(&claim, cs, pvc, sizeof pvc - 1, &err) != 1)
			abort();
		judge(&claim, &m, 0);
	}
	kube_manifest_release(&m);
	kube_manifest_release(&claim);
	buf_release(&err);
	return 0;
}
