/* fuzz_exec_credential.c - an exec credential plugin's stdout (an ExecCredential JSON object) as
 * kube_exec_run parses it (kube_exec_credential_parse). The first byte picks the apiVersion the
 * kubeconfig configured (v1 or v1beta1). */
#include "ebsmigrate/kube_client.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	struct kube_target t;
	memset(&t, 0, sizeof t);
	t.context = "fuzz";
	t.user_name = "fuzz";
	t.has_exec = 1;
	t.exec.command = "fuzz-plugin";
	t.exec.api_version = data[0] & 1 ? KUBE_EXEC_V1 : KUBE_EXEC_V1BETA1;
	struct kube_credential cred;
	struct buf err = BUF_INIT;
	kube_exec_credential_parse(&cred, (const char *)data + 1, size - 1, &t, &err);
	kube_credential_release(&cred);
	buf_release(&err);
	return 0;
}
