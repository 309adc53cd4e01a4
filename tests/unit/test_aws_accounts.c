/*
 * test_aws_accounts.c - the pure parts of the multi-account run (aws_accounts.h): account ids,
 * --accounts lists and @FILE parsing (comments, duplicates, errors naming file and line), role
 * ARN templates (checks and expansion), STS session names sanitised to [\w+=,.@-]{2,64}, and
 * Organizations ListAccounts answers (pages, NextToken, bad accounts refused whole), and the
 * per-account client set keeping labels that are not account ids on the base client.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/aws_accounts.h"
#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "tap.h"

static void test_account_id(void)
{
	CHECK(aws_account_id_valid("111122223333"));
	CHECK(aws_account_id_valid("000000000000"));
	CHECK(!aws_account_id_valid("11112222333"));   /* 11 digits */
	CHECK(!aws_account_id_valid("1111222233334")); /* 13 */
	CHECK(!aws_account_id_valid("11112222333a"));
	CHECK(!aws_account_id_valid(" 111122223333"));
	CHECK(!aws_account_id_valid(""));
	CHECK(!aws_account_id_valid(NULL));
}

static void test_list(void)
{
	struct strlist l = STRLIST_INIT_DUP;
	struct buf err = BUF_INIT;
	CHECK_I64(aws_accounts_parse(&l, "--accounts", "222233334444,111122223333, 222233334444", &err), 0);
	CHECK_I64(l.n, 2); /* the duplicate once, order kept */
	CHECK_STR(l.items[0], "222233334444");
	CHECK_STR(l.items[1], "111122223333");
	CHECK_I64(aws_accounts_parse(&l, "--accounts", "333344445555", &err), 0); /* appended */
	CHECK_I64(l.n, 3);
	CHECK_I64(aws_accounts_parse(&l, "--accounts", "33334444555", &err), EM_EINPUT);
	CHECK_STR(err.s, "--accounts: '33334444555' is not an AWS account id (12 digits)");
	buf_reset(&err);
	CHECK_I64(aws_accounts_parse(&l, "--exclude-accounts", ",,", &err), EM_EINPUT);
	CHECK_STR(err.s, "--exclude-accounts: no account id given (ID[,ID...] or @FILE)");
	buf_reset(&err);
	CHECK_I64(aws_accounts_parse(&l, "--accounts", "@", &err), EM_EINPUT);
	CHECK_STR(err.s, "--accounts: '@' names no file (use @FILE)");
	buf_reset(&err);
	/* a control character is shown, not sent to the terminal */
	CHECK_I64(aws_accounts_parse(&l, "--accounts", "1111\x1b[2J", &err), EM_EINPUT);
	CHECK(strchr(err.s, '\x1b') == NULL);
	CHECK_I64(l.n, 3);
	strlist_release(&l);
	buf_release(&err);
}

static void test_file(void)
{
	char path[] = "/tmp/em-accounts-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	const char *text = "# prod accounts\r\n222233334444 333344445555  # two on a line\n\n111122223333,\n";
	CHECK_I64(write(fd, text, strlen(text)), (int64_t)strlen(text));
	close(fd);
	struct strlist l = STRLIST_INIT_DUP;
	struct buf err = BUF_INIT, arg = BUF_INIT;
	buf_addf(&arg, "@%s", path);
	CHECK_I64(aws_accounts_parse(&l, "--accounts", arg.s, &err), 0);
	CHECK_I64(l.n, 3);
	CHECK_STR(l.items[2], "111122223333");
	/* an error names the file and the line */
	FILE *fp = fopen(path, "w");
	fputs("# header\n111122223333\n2222x3334444\n", fp);
	fclose(fp);
	CHECK_I64(aws_accounts_parse(&l, "--accounts", arg.s, &err), EM_EINPUT);
	struct buf want = BUF_INIT;
	buf_addf(&want, "--accounts: '2222x3334444' in %s line 3 is not an AWS account id (12 digits)", path);
	CHECK_STR(err.s, want.s);
	/* a file of comments only is empty */
	fp = fopen(path, "w");
	fputs("# nobody\n\n", fp);
	fclose(fp);
	buf_reset(&err);
	CHECK_I64(aws_accounts_parse(&l, "--accounts", arg.s, &err), EM_EINPUT);
	buf_reset(&want);
	buf_addf(&want, "--accounts: file '%s' holds no account id", path);
	CHECK_STR(err.s, want.s);
	unlink(path);
	buf_reset(&err);
	CHECK_I64(aws_accounts_parse(&l, "--accounts", arg.s, &err), EM_EINPUT); /* gone */
	CHECK(strstr(err.s, "--accounts: ") == err.s);
	strlist_release(&l);
	buf_release(&err);
	buf_release(&arg);
	buf_release(&want);
}

static void test_template(void)
{
	struct buf err = BUF_INIT, out = BUF_INIT;
	CHECK_I64(aws_role_arn_template_check("arn:${partition}:iam::${account}:role/ebsmigrate", &err), 0);
	CHECK_I64(aws_role_arn_template_check("arn:aws:iam::${account}:role/path/to/r", &err), 0);
	CHECK_I64(aws_role_arn_template_check("arn:aws:iam::111122223333:role/r", &err), EM_EINPUT);
	CHECK(strstr(err.s, "has no ${account}") != NULL);
	buf_reset(&err);
	CHECK_I64(aws_role_arn_template_check("arn:aws:iam::${Account}:role/r", &err), EM_EINPUT);
	CHECK(strstr(err.s, "only ${partition} and ${account}") != NULL);
	buf_reset(&err);
	CHECK_I64(aws_role_arn_template_check("arn:aws:iam::${account}:user/u", &err), EM_EINPUT);
	CHECK(strstr(err.s, "is not an IAM role ARN") != NULL);
	buf_reset(&err);
	CHECK_I64(aws_role_arn_template_check("${account}", &err), EM_EINPUT);
	buf_reset(&err);
	/* issue 28 item 15: nothing but one role of one account reaches STS */
	CHECK_I64(aws_role_arn_template_check("arn:aws-us-gov:iam::${account}:role/team/ebsmigrate", &err), 0);
	static const struct {
		const char *tmpl, *msg;
	} bad[] = {
		{"arn:aws:iam::${account}${account}:role/r",
		 "--role-arn-template: 'arn:aws:iam::${account}${account}:role/r': ${account} must be the ARN's account field, "
		 "once (arn:${partition}:iam::${account}:role/NAME)"},
		{"arn:aws:iam::${account}:role/${account}-reader",
		 "--role-arn-template: 'arn:aws:iam::${account}:role/${account}-reader': ${account} must be the ARN's account "
		 "field, once (arn:${partition}:iam::${account}:role/NAME)"},
		{"arn:aws:iam::111122223333:role/${account}",
		 "--role-arn-template: 'arn:aws:iam::111122223333:role/${account}': ${account} must be the ARN's account "
		 "field, once (arn:${partition}:iam::${account}:role/NAME)"},
		{"arn:aws:iam::${account}:role/r\n",
		 "--role-arn-template: 'arn:aws:iam::${account}:role/r\\x0a': role 'r\\x0a' is not an IAM role name "
		 "([A-Za-z0-9_+=,.@-], a path with '/')"},
		{"arn:aws:iam::${account}:role/r&Action=CreateUser",
		 "--role-arn-template: 'arn:aws:iam::${account}:role/r&Action=CreateUser': role 'r&Action=CreateUser' is not "
		 "an IAM role name ([A-Za-z0-9_+=,.@-], a path with '/')"},
		{"arn:aws:iam::${account}:role/../../x",
		 "--role-arn-template: 'arn:aws:iam::${account}:role/../../x': role '../../x' is not an IAM role name "
		 "([A-Za-z0-9_+=,.@-], a path with '/'): a path segment is '.' or '..'"},
		{"arn:aws:iam::${account}:role/a//b",
		 "--role-arn-template: 'arn:aws:iam::${account}:role/a//b': role 'a//b' is not an IAM role name "
		 "([A-Za-z0-9_+=,.@-], a path with '/'): a path segment is empty (a leading, trailing or doubled '/')"},
		{"arn:aws:iam::${account}:role/",
		 "--role-arn-template: 'arn:aws:iam::${account}:role/': role '' is not an IAM role name ([A-Za-z0-9_+=,.@-], a "
		 "path with '/'): it is empty"},
		{"arn:AWS?x=1:iam::${account}:role/r",
		 "--role-arn-template: 'arn:AWS?x=1:iam::${account}:role/r': the partition must be ${partition} or a "
		 "partition's name (aws, aws-cn, aws-us-gov)"},
		{"arn:aws:iam:us-east-1:${account}:role/r",
		 "--role-arn-template: 'arn:aws:iam:us-east-1:${account}:role/r' is not an IAM role ARN "
		 "(arn:${partition}:iam::${account}:role/NAME)"},
		{"arn:aws:iam::${account}:role/r:x",
		 "--role-arn-template: 'arn:aws:iam::${account}:role/r:x' is not an IAM role ARN "
		 "(arn:${partition}:iam::${account}:role/NAME)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		buf_reset(&err);
		CHECK_I64(aws_role_arn_template_check(bad[i].tmpl, &err), EM_EINPUT);
		CHECK_STR(err.s, bad[i].msg); /* a newline is shown as \x0a */
	}
	/* --role-name's grammar is the role part's */
	buf_reset(&err);
	CHECK_I64(aws_role_name_check("--role-name", "team/ebsmigrate", &err), 0);
	CHECK_I64(aws_role_name_check("--role-name", "...", &err), 0); /* IAM's characters: a name of dots */
	CHECK_I64(aws_role_name_check("--role-name", "../../x", &err), EM_EINPUT);
	CHECK_STR(err.s, "--role-name: '../../x' is not an IAM role name ([A-Za-z0-9_+=,.@-], a path with '/'): a path "
			 "segment is '.' or '..'");
	buf_reset(&err);
	CHECK_I64(aws_role_name_check("--role-name", "/x", &err), EM_EINPUT);
	buf_reset(&err);
	CHECK_I64(aws_role_name_check("--role-name", "a b", &err), EM_EINPUT);
	CHECK_STR(err.s, "--role-name: 'a b' is not an IAM role name ([A-Za-z0-9_+=,.@-], a path with '/')");
	buf_reset(&err);
	char long_name[70];
	memset(long_name, 'r', 65);
	long_name[65] = '\0';
	CHECK_I64(aws_role_name_check("--role-name", long_name, &err), EM_EINPUT);
	CHECK(strstr(err.s, "the name after the last '/' is longer than 64 characters") != NULL);
	aws_role_arn_expand(&out, "arn:${partition}:iam::${account}:role/ebsmigrate", "aws-cn", "222233334444");
	CHECK_STR(out.s, "arn:aws-cn:iam::222233334444:role/ebsmigrate");
	buf_reset(&out);
	aws_role_arn_expand(&out, "arn:aws:iam::${account}:role/${account}-reader", "aws", "111122223333");
	CHECK_STR(out.s, "arn:aws:iam::111122223333:role/111122223333-reader");
	buf_release(&err);
	buf_release(&out);
}

static void test_session_name(void)
{
	struct buf b = BUF_INIT;
	aws_session_name_sanitize(&b, "ebsmigrate-alice");
	CHECK_STR(b.s, "ebsmigrate-alice");
	buf_reset(&b);
	aws_session_name_sanitize(&b, "ebsmigrate-j\xc3\xb6rg smith/ci");
	CHECK_STR(b.s, "ebsmigrate-j--rg-smith-ci"); /* each byte of ö is one '-' */
	buf_reset(&b);
	aws_session_name_sanitize(&b, "a");
	CHECK_STR(b.s, "a-"); /* at least 2 */
	buf_reset(&b);
	aws_session_name_sanitize(&b, "");
	CHECK_STR(b.s, "--");
	buf_reset(&b);
	aws_session_name_sanitize(&b, "x+=,.@_-Y");
	CHECK_STR(b.s, "x+=,.@_-Y");
	buf_reset(&b);
	char longname[100];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	aws_session_name_sanitize(&b, longname);
	CHECK_I64(b.len, 64);
	buf_release(&b);
}

static void test_org_parse(void)
{
	struct org_account_list l;
	memset(&l, 0, sizeof l);
	struct buf err = BUF_INIT;
	char *next = NULL;
	const char *page1 = "{\"Accounts\":[{\"Id\":\"111122223333\",\"Arn\":\"arn:aws:organizations::111122223333:account/"
			    "o-x/111122223333\",\"Email\":\"m@example.com\",\"Name\":\"management\",\"Status\":\"ACTIVE\","
			    "\"JoinedTimestamp\":1.7e9},{\"Id\":\"444455556666\",\"Name\":\"sandbox\",\"Status\":\"SUSPENDED\"}],"
			    "\"NextToken\":\"tok-2\"}";
	CHECK_I64(aws_org_parse_list_accounts(page1, strlen(page1), &l, &next, &err), 0);
	CHECK_I64(l.n, 2);
	CHECK_STR(l.v[0].name, "management");
	CHECK_STR(l.v[1].status, "SUSPENDED");
	CHECK(l.v[1].email == NULL);
	CHECK_STR(next, "tok-2");
	free(next);
	const char *last = "{\"Accounts\":[]}";
	CHECK_I64(aws_org_parse_list_accounts(last, strlen(last), &l, &next, &err), 0);
	CHECK(next == NULL);
	/* one bad account refuses the page whole */
	const char *bad = "{\"Accounts\":[{\"Id\":\"222233334444\",\"Status\":\"ACTIVE\"},{\"Id\":\"2222\",\"Status\":\"ACTIVE\"}]}";
	CHECK_I64(aws_org_parse_list_accounts(bad, strlen(bad), &l, &next, &err), EM_ESERVER);
	CHECK_STR(err.s, "organizations ListAccounts: account 1 (Id '2222') has no valid Id and Status");
	CHECK_I64(l.n, 2);
	const char *bad2[] = {"[]", "{\"Accounts\":{}}", "{\"Accounts\":[],\"NextToken\":5}", "not json",
			      "{\"Accounts\":[{\"Id\":\"222233334444\"}]}"};
	for (size_t i = 0; i < sizeof bad2 / sizeof *bad2; i++) {
		buf_reset(&err);
		CHECK_I64(aws_org_parse_list_accounts(bad2[i], strlen(bad2[i]), &l, &next, &err), EM_ESERVER);
		CHECK(next == NULL);
	}
	CHECK_I64(l.n, 2);
	org_account_list_release(&l);
	buf_release(&err);
}

/* Labels that are not account ids never leave the base client (no network needed to tell). */
static void test_clients_labels(void)
{
	struct aws_client base;
	memset(&base, 0, sizeof base);
	struct aws_account_clients set;
	aws_account_clients_init(&set, &base, "arn:${partition}:iam::${account}:role/r", "s", NULL, 0);
	struct buf err = BUF_INIT;
	CHECK(aws_account_clients_get(&set, NULL, &err) == &base);
	CHECK(aws_account_clients_get(&set, "prod", &err) == &base);
	CHECK(aws_account_clients_get(&set, "12345678901", &err) == &base);
	CHECK_I64(set.n, 0);
	CHECK_I64(err.len, 0);
	aws_account_clients_release(&set);
	buf_release(&err);
}

/* DescribeAccount answers: the account asked for, or a refusal naming why; nothing appended then */
static void test_describe_parse(void)
{
	struct org_account_list l;
	memset(&l, 0, sizeof l);
	struct buf err = BUF_INIT;
	const char *ok = "{\"Account\":{\"Id\":\"222233334444\",\"Name\":\"payments-prod\",\"Status\":\"ACTIVE\"}}";
	CHECK_I64(aws_org_parse_describe_account(ok, strlen(ok), "222233334444", &l, &err), 0);
	CHECK_I64(l.n, 1);
	CHECK_STR(l.v[0].name, "payments-prod");
	CHECK_I64(aws_org_parse_describe_account(ok, strlen(ok), "111122223333", &l, &err), EM_ESERVER);
	CHECK(strstr(err.s, "not the account asked for") != NULL);
	buf_reset(&err);
	const char *noacct = "{\"Accounts\":[]}";
	CHECK_I64(aws_org_parse_describe_account(noacct, strlen(noacct), NULL, &l, &err), EM_ESERVER);
	buf_reset(&err);
	const char *bad = "{\"Account\":{\"Id\":\"2222\",\"Status\":\"ACTIVE\"}}";
	CHECK_I64(aws_org_parse_describe_account(bad, strlen(bad), NULL, &l, &err), EM_ESERVER);
	CHECK_I64(l.n, 1);
	org_account_list_release(&l);
	buf_release(&err);
}

int main(void)
{
	test_account_id();
	test_list();
	test_file();
	test_template();
	test_session_name();
	test_org_parse();
	test_describe_parse();
	test_clients_labels();
	return tap_done();
}
