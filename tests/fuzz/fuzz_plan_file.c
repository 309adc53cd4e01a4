/* fuzz_plan_file.c - plan files given to `apply --plan FILE` (plan_file_parse) and recorded plans
 * apply reads back (plan_doc_parse): any document is either a usable plan or refused with a
 * message, never undefined behaviour. Of a usable plan, every volume apply acts on must carry
 * names that pass their grammar (issue 28 items 1 and 2), and its PVC's API path, built by
 * kube_pathf, must keep the shape of its format whatever the names hold: a violation aborts. */
#include <stdio.h>

#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/plan_file.h"
#include "ebsmigrate/volume.h"
#include "fuzz.h"

static size_t count(const char *s, char c)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

static void check_entry(const struct plan_entry *e)
{
	if (!volume_id_ok(e->volume_id) || !volume_region_ok(e->region) || (e->cluster && !kube_cluster_name_ok(e->cluster)))
		abort();
	if (e->namespace_ && !kube_dns_name_ok(e->namespace_, strlen(e->namespace_), 0))
		abort();
	if (e->pvc && (!e->namespace_ || !kube_dns_name_ok(e->pvc, strlen(e->pvc), 1)))
		abort();
	struct buf path = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", e->namespace_ ? e->namespace_ : "x",
		   e->pvc ? e->pvc : "x");
	if (count(path.s, '/') != 6 || strpbrk(path.s, "?#") || strstr(path.s, "/../") || strstr(path.s, "//"))
		abort();
	buf_release(&path);
}

/* Any bytes as a name stay one segment: kube_pathf's promise, checked on the raw input too. */
static void check_segment(const uint8_t *data, size_t size)
{
	char *name = fuzz_text(data, size, 4096);
	if (!name)
		return;
	struct buf path = BUF_INIT;
	kube_pathf(&path, "/api/v1/namespaces/%s/pods", name);
	const char *seg = path.s + strlen("/api/v1/namespaces/");
	size_t len = strlen(seg) - strlen("/pods");
	if (count(path.s, '/') != 5 || strpbrk(path.s, "?#") || (len == 1 && seg[0] == '.') ||
	    (len == 2 && seg[0] == '.' && seg[1] == '.') || (len == 0 && name[0]))
		abort();
	buf_release(&path);
	free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	check_segment(data, size);
	struct plan_file pf;
	struct buf err = BUF_INIT;
	plan_file_parse(&pf, "fuzz-plan.json", (const char *)data, size, &err);
	plan_file_release(&pf);
	struct plan_doc d;
	buf_reset(&err);
	if (plan_doc_parse(&d, "recorded plan 1", (const char *)data, size, &err) == 0) {
		for (size_t i = 0; i < d.n; i++)
			check_entry(&d.v[i]);
		plan_doc_release(&d);
	}
	buf_release(&err);
	return 0;
}
