/* fuzz_org_accounts.c - Organizations ListAccounts and DescribeAccount answers as
 * aws_org_parse_list_accounts and aws_org_parse_describe_account read them (the --organization
 * account list, the --accounts/--profile names: server input). */
#include <stdlib.h>

#include "ebsmigrate/aws_accounts.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct org_account_list l;
	memset(&l, 0, sizeof l);
	struct buf err = BUF_INIT;
	char *next = NULL;
	aws_org_parse_list_accounts((const char *)data, size, &l, &next, &err);
	buf_reset(&err);
	aws_org_parse_describe_account((const char *)data, size, size % 2 ? "111122223333" : NULL, &l, &err);
	free(next);
	org_account_list_release(&l);
	buf_release(&err);
	return 0;
}
