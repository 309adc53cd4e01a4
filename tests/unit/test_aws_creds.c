/* test_aws_creds.c - the credentials value type, and the layering it exists for: STS uses the
 * value type only, never the chain (aws_credential_chain.h), while the chain calls STS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_creds.h"
#include "ebsmigrate/common.h"
#include "tap.h"

static int file_has(const char *rel, const char *needle)
{
	struct buf text = BUF_INIT, err = BUF_INIT;
	int rc = em_read_file(tap_src_path(rel), &text, &err);
	int has = rc == 0 && strstr(text.s, needle) != NULL;
	if (rc)
		printf("# cannot read %s: %s\n", rel, err.s);
	CHECK_I64(rc, 0);
	buf_release(&text);
	buf_release(&err);
	return has;
}

static void test_value(void)
{
	struct aws_credentials a = {0}, b = {0};
	aws_credentials_set(&a, "AKID", "secret", "", 1700000000, "", "environment");
	CHECK_STR(a.access_key_id, "AKID");
	CHECK_STR(a.secret_access_key, "secret");
	CHECK(a.session_token == NULL); /* empty token: none */
	CHECK(a.account_id == NULL);
	CHECK_I64(a.expiration, 1700000000);
	CHECK_STR(a.source, "environment");

	aws_credentials_set(&b, "OLD", "old", "tok", 0, "123456789012", "x");
	aws_credentials_copy(&b, &a); /* releases b's old fields first */
	CHECK_STR(b.access_key_id, "AKID");
	CHECK(b.secret_access_key != a.secret_access_key);
	CHECK_STR(b.secret_access_key, "secret");
	CHECK(b.session_token == NULL && b.account_id == NULL);
	aws_credentials_copy(&b, &b); /* self-copy keeps it */
	CHECK_STR(b.access_key_id, "AKID");

	aws_credentials_release(&a);
	CHECK(a.access_key_id == NULL && a.secret_access_key == NULL && a.source == NULL && a.expiration == 0);
	aws_credentials_release(&a); /* released twice: harmless */
	aws_credentials_release(&b);
}

static void test_layering(void)
{
	/* The chain includes STS; STS must not include the chain, only the value type. */
	CHECK(file_has("src/aws_credential_chain.c", "\"ebsmigrate/aws_sts.h\""));
	CHECK(!file_has("src/aws_sts.c", "\"ebsmigrate/aws_credential_chain.h\""));
	CHECK(!file_has("include/ebsmigrate/aws_sts.h", "\"ebsmigrate/aws_credential_chain.h\""));
	CHECK(file_has("src/aws_sts.c", "\"ebsmigrate/aws_creds.h\""));
	CHECK(!file_has("include/ebsmigrate/aws_creds.h", "\"ebsmigrate/aws_sts.h\""));
	CHECK(!file_has("src/aws_creds.c", "\"ebsmigrate/aws_sts.h\""));
	CHECK(!file_has("src/aws_sts.c", "aws_credentials_provider"));
}

int main(void)
{
	test_value();
	test_layering();
	return tap_done();
}
