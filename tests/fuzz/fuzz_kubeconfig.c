/* fuzz_kubeconfig.c - kubeconfig YAML (kube_config_load from --kubeconfig FILE), then every
 * context resolved as a command would (kube_config_resolve: base64 data fields, exec plugin
 * settings, namespaces). The input is written to a private temporary file.
 *
 * Skipped on purpose: inputs naming /dev, /proc or /sys (a certificate-authority of /dev/zero
 * reads without end: input size caps are issue 12 item 10, owned elsewhere). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ebsmigrate/kube_config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	if (size > FUZZ_MAX_INPUT || fuzz_contains(data, size, "/dev") || fuzz_contains(data, size, "/proc") ||
	    fuzz_contains(data, size, "/sys"))
		return 0;
	if (!path[0])
		snprintf(path, sizeof path, "/tmp/ebsmigrate-fuzz-kubeconfig-%ld", (long)getpid());
	FILE *fp = fopen(path, "wb");
	if (!fp)
		abort();
	if (size && fwrite(data, 1, size, fp) != size)
		abort();
	fclose(fp);
	struct kube_config c;
	struct buf err = BUF_INIT;
	if (kube_config_load(&c, path, &err) == 0) {
		size_t n = kube_config_n_contexts(&c);
		for (size_t i = 0; i <= n && i < 16; i++) {
			struct kube_target t;
			memset(&t, 0, sizeof t);
			buf_reset(&err);
			/* i == n: the current-context */
			kube_config_resolve(&t, &c, i < n ? kube_config_context_name(&c, i) : NULL, &err);
			kube_target_release(&t);
		}
	}
	kube_config_release(&c);
	buf_release(&err);
	unlink(path);
	return 0;
}
