/*
 * test_jsonx.c - the parse arena (jsonx_parse_in), Kubernetes list pages loaded through it, the
 * join taking the kube_set's strings, and the streamed inventory document.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/inventory_output.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_objects.h"
#include "tap.h"

static void test_arena(void)
{
	struct jsonx_arena a = JSONX_ARENA_INIT;
	struct buf err = BUF_INIT;
	for (int round = 0; round < 3; round++) {
		cJSON *j = jsonx_parse_in(&a, "{\"a\":{\"b\":\"x\"},\"n\":[1,2,3]}", 27, "doc", &err);
		CHECK(j != NULL);
		CHECK_STR(jsonx_path_str(j, "a.b"), "x");
		CHECK_I64(cJSON_GetArraySize(jsonx_get(j, "n")), 3);
		jsonx_arena_reset(&a);
	}
	/* a tree larger than one chunk, with one string larger than a chunk */
	struct buf big = BUF_INIT;
	buf_adds(&big, "{\"long\":\"");
	for (int i = 0; i < (3 << 20); i++)
		buf_addc(&big, 'z');
	buf_adds(&big, "\",\"items\":[");
	for (int i = 0; i < 40000; i++)
		buf_addf(&big, "%s{\"k\":\"v%d\"}", i ? "," : "", i);
	buf_adds(&big, "]}");
	cJSON *j = jsonx_parse_in(&a, big.s, big.len, "big", &err);
	CHECK(j != NULL);
	CHECK_I64(strlen(jsonx_str(j, "long")), 3 << 20);
	CHECK_I64(cJSON_GetArraySize(jsonx_get(j, "items")), 40000);
	CHECK_STR(jsonx_str(cJSON_GetArrayItem(jsonx_get(j, "items"), 39999), "k"), "v39999");
	jsonx_arena_reset(&a);
	/* a failed parse reports where, and leaves the arena usable */
	CHECK(jsonx_parse_in(&a, "{\n\"a\": tru }", 12, "bad.json", &err) == NULL);
	CHECK(strstr(err.s, "bad.json: not valid JSON at line 2") != NULL);
	CHECK(jsonx_parse_in(&a, "[1]", 3, "ok", &err) != NULL);
	/* cJSON's own allocator is back outside jsonx_parse_in: an ordinary tree lives and dies
	 * in malloc (the sanitizer build would report a leak or a bad free otherwise) */
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "k", "v");
	char *printed = cJSON_PrintUnformatted(o);
	CHECK_STR(printed, "{\"k\":\"v\"}");
	free(printed);
	cJSON_Delete(o);
	jsonx_arena_release(&a);
	buf_release(&big);
	buf_release(&err);
}

/* Two PVs claim one PVC: both bindings carry the PVC's labels and attributes class. */
static const char pvs_json[] =
	"{\"kind\":\"PersistentVolumeList\",\"items\":["
	"{\"metadata\":{\"name\":\"pv-a\"},\"spec\":{\"csi\":{\"driver\":\"ebs.csi.aws.com\",\"volumeHandle\":\"vol-0a\"},"
	"\"claimRef\":{\"namespace\":\"db\",\"name\":\"data\"},\"storageClassName\":\"gp2\"}},"
	"{\"metadata\":{\"name\":\"pv-b\"},\"spec\":{\"csi\":{\"driver\":\"ebs.csi.aws.com\",\"volumeHandle\":\"vol-0b\"},"
	"\"claimRef\":{\"namespace\":\"db\",\"name\":\"data\"}}},"
	"{\"metadata\":{\"name\":\"pv-nfs\"},\"spec\":{\"nfs\":{\"server\":\"x\"}}}]}";
static const char pvcs_json[] =
	"{\"kind\":\"PersistentVolumeClaimList\",\"items\":["
	"{\"metadata\":{\"name\":\"data\",\"namespace\":\"db\",\"labels\":{\"app\":\"pg\",\"tier\":\"1\"}},"
	"\"spec\":{\"volumeName\":\"pv-a\",\"storageClassName\":\"fast\",\"volumeAttributesClassName\":\"gold\"}}]}";

static void test_list_and_join(void)
{
	struct kube_set ks;
	struct fleet f;
	struct buf err = BUF_INIT;
	kube_set_init(&ks);
	fleet_init(&f);
	fleet_add_volume(&f, "vol-0a");
	fleet_add_volume(&f, "vol-0b");
	CHECK_I64(kube_objects_load(&ks, &f, "c1", pvs_json, strlen(pvs_json), "pvs", &err), 2);
	CHECK_I64(ks.ignored_pvs, 1);
	CHECK_I64(kube_objects_load(&ks, &f, "c1", pvcs_json, strlen(pvcs_json), "pvcs", &err), 1);
	/* an item of a typed list that carries a kind of another type is not taken for the list's */
	CHECK(kube_objects_load(&ks, &f, "c1", "{\"kind\":\"PersistentVolumeList\",\"items\":[{\"kind\":3}]}", 53,
				"odd", &err) < 0);
	CHECK(strstr(err.s, "odd: items[0].kind: must be a string, got a number") != NULL);
	inventory_join(&f, &ks, 1);
	kube_set_release(&ks);
	for (size_t i = 0; i < 2; i++) {
		const struct kube_binding *b = f.vols[i].kube;
		CHECK(b != NULL);
		if (!b)
			continue;
		CHECK_STR(b->cluster, "c1");
		CHECK_STR(b->pv, i ? "pv-b" : "pv-a");
		CHECK_STR(b->namespace_, "db");
		CHECK_STR(b->pvc, "data");
		CHECK_STR(b->vac, "gold");
		CHECK_STR(b->storage_class, i ? "fast" : "gp2");
		CHECK_I64(b->n_labels, 2);
		if (b->n_labels == 2) {
			CHECK_STR(b->labels[0].key, "app");
			CHECK_STR(b->labels[1].value, "1");
		}
	}
	/* the streamed document is the in-memory one, byte for byte */
	const char *regions[] = {"us-east-1"};
	struct inventory_meta meta = {1767225600, "111122223333", regions, 1};
	struct buf mem = BUF_INIT;
	inventory_write_json(&mem, &f, &meta);
	FILE *fp = tmpfile();
	CHECK(fp != NULL);
	if (fp) {
		CHECK_I64(inventory_write_json_file(fp, &f, &meta), 0);
		rewind(fp);
		struct buf back = BUF_INIT;
		char chunk[4096];
		size_t n;
		while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
			buf_add(&back, chunk, n);
		CHECK(back.len == mem.len && memcmp(back.s, mem.s, mem.len) == 0);
		buf_release(&back);
		fclose(fp);
	}
	buf_release(&mem);
	fleet_release(&f);
	buf_release(&err);
}

int main(void)
{
	test_arena();
	test_list_and_join();
	return tap_done();
}
