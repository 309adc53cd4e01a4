/* fuzz_plan_file.c - plan files given to `apply --plan FILE` (plan_file_parse): any document is
 * either a usable plan or refused with a message, never undefined behaviour. */
#include "ebsmigrate/plan_file.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct plan_file pf;
	struct buf err = BUF_INIT;
	plan_file_parse(&pf, "fuzz-plan.json", (const char *)data, size, &err);
	plan_file_release(&pf);
	buf_release(&err);
	return 0;
}
