/* fuzz_rate_refusal.c - a ModifyVolume refusal's text as apply reads it from EC2's answer, a PVC's
 * ModifyVolumeError condition or a CSI sidecar's event (rate_refusal_parse), then the time the
 * volume may go again (rate_refusal_until) from starts taken from the input's first bytes. */
#include <stdlib.h>

#include "ebsmigrate/modify_refusal.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4 || size > FUZZ_MAX_INPUT)
		return 0;
	time_t starts[4];
	for (int i = 0; i < 4; i++)
		starts[i] = (time_t)1793491200 - (time_t)data[i] * 900;
	char *msg = malloc(size - 4 + 1);
	if (!msg)
		return 0;
	memcpy(msg, data + 4, size - 4);
	msg[size - 4] = '\0';
	struct rate_refusal r;
	if (rate_refusal_parse(msg, &r))
		(void)rate_refusal_until(&r, (time_t)1793491200, starts, (size_t)(data[0] & 3) + 1, NULL);
	free(msg);
	return 0;
}
