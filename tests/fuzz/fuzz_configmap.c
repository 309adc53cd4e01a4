/* fuzz_configmap.c - an API server's answer to GET .../configmaps/NAME as `apply
 * --require-configmap` reads its switch (kube_configmap_value_parse); the first byte picks the
 * key looked up (a usual one, one with dots, or none). */
#include <stdlib.h>

#include "ebsmigrate/kube_configmap.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	static const char *const keys[] = {"enabled", "apply.enabled_2", NULL};
	char *value = NULL;
	struct buf err = BUF_INIT;
	kube_configmap_value_parse((const char *)data + 1, size - 1, keys[data[0] % 3], &value, &err);
	free(value);
	buf_release(&err);
	return 0;
}
