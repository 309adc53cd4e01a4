/* fuzz_saved_accounts.c - the accounts.json of a multi-account `inventory --save` as
 * saved_accounts_load reads it back (plan --from-saved / --from-aws-json: outside input). */
#include <stdlib.h>

#include "ebsmigrate/saved_accounts.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	saved_accounts_load(&f, (const char *)data, size, "fuzz", &err);
	fleet_release(&f);
	buf_release(&err);
	return 0;
}
