/*
 * test_paging.c - the page guard every paged read goes through (paging.h): a read ends on a page
 * without a token, a token received before (repeated at once, or a cycle) and the page cap are
 * errors naming the call; and the guard in the live loops, against a loopback server answering
 * EC2 DescribeVolumes and Organizations ListAccounts with tokens that come back.
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_accounts.h"
#include "ebsmigrate/aws_client.h"
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/paging.h"
#include "loopback_http.h"
#include "tap.h"

static void test_guard(void)
{
	struct buf err = BUF_INIT;
	struct page_guard g;
	page_guard_init(&g, "NextToken", 0, "ec2 %s in %s", "DescribeVolumes", "us-east-1");
	CHECK_I64(g.max_pages, PAGE_GUARD_MAX_PAGES);
	CHECK_I64(page_guard_next(&g, "a", &err), 1);
	CHECK_I64(page_guard_next(&g, "b", &err), 1);
	CHECK_I64(page_guard_next(&g, NULL, &err), 0); /* the last page */
	CHECK_STR(err.s, "");
	page_guard_release(&g);

	/* "" is no token (EC2's empty <nextToken/>) */
	page_guard_init(&g, "NextToken", 0, "x");
	CHECK_I64(page_guard_next(&g, "", &err), 0);
	page_guard_release(&g);

	/* the same token again at once: botocore's PaginationError */
	page_guard_init(&g, "NextToken", 0, "ec2 DescribeVolumes in us-east-1");
	CHECK_I64(page_guard_next(&g, "tok", &err), 1);
	CHECK_I64(page_guard_next(&g, "tok", &err), EM_ESERVER);
	CHECK_STR(err.s, "ec2 DescribeVolumes in us-east-1: page 2 repeats a NextToken received before (the server "
			 "is paging in a loop); stopped");
	page_guard_release(&g);

	/* a cycle of two: caught at its first repeat, not at the cap */
	buf_reset(&err);
	page_guard_init(&g, "continue token", 0, "context 'prod': list /api/v1/persistentvolumes");
	CHECK_I64(page_guard_next(&g, "A", &err), 1);
	CHECK_I64(page_guard_next(&g, "B", &err), 1);
	CHECK_I64(page_guard_next(&g, "A", &err), EM_ESERVER);
	CHECK_STR(err.s, "context 'prod': list /api/v1/persistentvolumes: page 3 repeats a continue token received "
			 "before (the server is paging in a loop); stopped");
	/* a restarted list may see the same tokens again */
	page_guard_restart(&g);
	CHECK_I64(page_guard_next(&g, "A", &err), 1);
	CHECK_I64(g.pages, 1);
	page_guard_release(&g);

	/* the cap: 3 answers taken, a 4th page offered */
	buf_reset(&err);
	page_guard_init(&g, "NextToken", 3, "cloudwatch GetMetricData in eu-west-1");
	CHECK_I64(page_guard_next(&g, "p1", &err), 1);
	CHECK_I64(page_guard_next(&g, "p2", &err), 1);
	CHECK_I64(page_guard_next(&g, "p3", &err), EM_ESERVER);
	CHECK_STR(err.s, "cloudwatch GetMetricData in eu-west-1: more than 3 pages (the server does not stop "
			 "paging); stopped");
	page_guard_release(&g);
	/* ... but the cap's last page may end the read */
	page_guard_init(&g, "NextToken", 3, "x");
	CHECK_I64(page_guard_next(&g, "p1", &err), 1);
	CHECK_I64(page_guard_next(&g, "p2", &err), 1);
	CHECK_I64(page_guard_next(&g, NULL, &err), 0);
	page_guard_release(&g);
	buf_release(&err);
}

#define VOLUMES_PAGE(token)                                                                                  \
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"                                                        \
	"<DescribeVolumesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\n"                      \
	"<requestId>r</requestId><volumeSet/><nextToken>" token "</nextToken></DescribeVolumesResponse>"

static void client(struct aws_client *c)
{
	struct buf err = BUF_INIT;
	struct aws_client_options o;
	memset(&o, 0, sizeof o);
	o.max_attempts = 1;
	o.rate = 1000;
	CHECK_I64(aws_client_init(c, &o, &err), 0);
	buf_release(&err);
}

/* The live loops stop at the first token that comes back, after as many requests as pages. */
static void test_live_loops(void)
{
	static const struct lb_response volumes[] = {
		{200, "Content-Type: text/xml\r\n", VOLUMES_PAGE("t1"), 0, 0},
		{200, "Content-Type: text/xml\r\n", VOLUMES_PAGE("t2"), 0, 0},
		{200, "Content-Type: text/xml\r\n", VOLUMES_PAGE("t1"), 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, volumes, 3) == 0);
	setenv("AWS_ENDPOINT_URL_EC2", s.url, 1);
	struct aws_client c;
	client(&c);
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	CHECK_I64(aws_ec2_describe_volumes(&c, "us-east-1", &f, NULL, NULL, NULL, &err), EM_ESERVER);
	CHECK_STR(err.s, "ec2 DescribeVolumes in us-east-1: page 3 repeats a NextToken received before (the server is "
			 "paging in a loop); stopped");
	CHECK_I64(lb_count(&s), 3);
	CHECK(strstr(lb_req(&s, 1)->body, "NextToken=t1") != NULL);
	CHECK(strstr(lb_req(&s, 2)->body, "NextToken=t2") != NULL);
	fleet_release(&f);
	aws_client_release(&c);
	lb_stop(&s);
	unsetenv("AWS_ENDPOINT_URL_EC2");

	static const struct lb_response accounts[] = {
		{200, "Content-Type: application/x-amz-json-1.1\r\n",
		 "{\"Accounts\":[{\"Id\":\"111122223333\",\"Status\":\"ACTIVE\"}],\"NextToken\":\"n1\"}", 0, 0},
		{200, "Content-Type: application/x-amz-json-1.1\r\n", "{\"Accounts\":[],\"NextToken\":\"n1\"}", 0, 0},
	};
	CHECK(lb_start(&s, accounts, 2) == 0);
	setenv("AWS_ENDPOINT_URL_ORGANIZATIONS", s.url, 1);
	client(&c);
	struct org_account_list l;
	memset(&l, 0, sizeof l);
	buf_reset(&err);
	CHECK_I64(aws_org_list_accounts(&c, &l, &err), EM_ESERVER);
	CHECK_STR(err.s, "organizations ListAccounts: page 2 repeats a NextToken received before (the server is paging "
			 "in a loop); stopped");
	CHECK_I64(lb_count(&s), 2);
	org_account_list_release(&l);
	aws_client_release(&c);
	lb_stop(&s);
	unsetenv("AWS_ENDPOINT_URL_ORGANIZATIONS");
	buf_release(&err);
}

int main(void)
{
	setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials", 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_ENDPOINT_URL");
	setenv("AWS_ACCESS_KEY_ID", "AKIDPAGING", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "PAGINGSECRET", 1);
	unsetenv("AWS_SESSION_TOKEN");
	test_guard();
	test_live_loops();
	return tap_done();
}
