/* fuzz_kube_objects.c - Kubernetes documents as kube list pages (the API server's List answers,
 * page by page) and `kubectl get ... -o json` exports: PV, PVC, StorageClass,
 * VolumeAttributesClass, StatefulSet, Pod and Node lists, a kubelet stats/summary and `kubectl
 * version -o json` (kube_objects_load, which detects the shape). The input is loaded into a
 * fleet, then written back as the export inventory --save produces.
 */
#include <cjson/cJSON.h>

#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/volume.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct kube_set ks;
	kube_set_init(&ks);
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT, out = BUF_INIT;
	if (kube_objects_load(&ks, &f, "fuzz", (const char *)data, size, "fuzz.json", &err) >= 0) {
		kube_objects_write_export(&out, &ks, &f, "fuzz", NULL);
		kube_objects_write_summary(&out, &ks, "fuzz");
		kube_objects_write_version(&out, &f, "fuzz");
	}
	buf_release(&out);
	buf_release(&err);
	kube_set_release(&ks);
	fleet_release(&f);
	return 0;
}
