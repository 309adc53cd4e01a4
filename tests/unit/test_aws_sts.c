/* test_aws_sts.c - endpoint resolution, STS calls against a loopback server (exact requests,
 * signatures re-verified), STS errors and throttling, and the EKS token (structure and a
 * signature recomputed with the signer). */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_credential_chain.h"
#include "ebsmigrate/aws_endpoint.h"
#include "ebsmigrate/aws_sigv4.h"
#include "ebsmigrate/aws_sts.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/http.h"
#include "loopback_http.h"
#include "tap.h"

static const char *const endpoint_vars[] = {
	"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_CLOUDWATCH", "AWS_ENDPOINT_URL_MONITORING",
	"AWS_ENDPOINT_URL_PRICING", "AWS_ENDPOINT_URL_STS", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", NULL,
};

static void clear_env(void)
{
	for (const char *const *v = endpoint_vars; *v; v++)
		unsetenv(*v);
}

static void check_endpoint(enum aws_service svc, const char *region, const char *url, const char *signing_region,
			   const char *signing_name, const char *partition, int from_env)
{
	struct aws_endpoint ep;
	struct buf err = BUF_INIT;
	int rc = aws_endpoint_resolve(&ep, svc, region, &err);
	CHECK_I64(rc, 0);
	if (rc == 0) {
		CHECK_STR(ep.url, url);
		CHECK_STR(ep.signing_region, signing_region);
		CHECK_STR(ep.signing_name, signing_name);
		CHECK_STR(ep.partition, partition);
		CHECK_I64(ep.from_env, from_env);
	} else {
		printf("# %s\n", err.s);
	}
	aws_endpoint_release(&ep);
	buf_release(&err);
}

static void test_endpoints(void)
{
	clear_env();
	check_endpoint(AWS_SERVICE_EC2, "us-east-1", "https://ec2.us-east-1.amazonaws.com", "us-east-1", "ec2", "aws", 0);
	check_endpoint(AWS_SERVICE_CLOUDWATCH, "eu-west-1", "https://monitoring.eu-west-1.amazonaws.com", "eu-west-1",
		       "monitoring", "aws", 0);
	check_endpoint(AWS_SERVICE_EC2, "cn-north-1", "https://ec2.cn-north-1.amazonaws.com.cn", "cn-north-1", "ec2",
		       "aws-cn", 0);
	check_endpoint(AWS_SERVICE_CLOUDWATCH, "us-gov-west-1", "https://monitoring.us-gov-west-1.amazonaws.com",
		       "us-gov-west-1", "monitoring", "aws-us-gov", 0);
	check_endpoint(AWS_SERVICE_PRICING, "eu-west-1", "https://api.pricing.us-east-1.amazonaws.com", "us-east-1",
		       "pricing", "aws", 0);
	check_endpoint(AWS_SERVICE_PRICING, NULL, "https://api.pricing.us-east-1.amazonaws.com", "us-east-1", "pricing",
		       "aws", 0);
	check_endpoint(AWS_SERVICE_PRICING, "us-gov-east-1", "https://api.pricing.us-east-1.amazonaws.com", "us-east-1",
		       "pricing", "aws", 0);
	check_endpoint(AWS_SERVICE_PRICING, "cn-north-1", "https://api.pricing.cn-northwest-1.amazonaws.com.cn",
		       "cn-northwest-1", "pricing", "aws-cn", 0);
	check_endpoint(AWS_SERVICE_STS, NULL, "https://sts.amazonaws.com", "us-east-1", "sts", "aws", 0);
	check_endpoint(AWS_SERVICE_STS, "us-west-2", "https://sts.us-west-2.amazonaws.com", "us-west-2", "sts", "aws", 0);
	check_endpoint(AWS_SERVICE_STS, "cn-northwest-1", "https://sts.cn-northwest-1.amazonaws.com.cn", "cn-northwest-1",
		       "sts", "aws-cn", 0);

	struct aws_endpoint ep;
	struct buf err = BUF_INIT;
	CHECK_I64(aws_endpoint_resolve(&ep, AWS_SERVICE_EC2, NULL, &err), EM_EINPUT);
	CHECK(strstr(err.s, "no region for the ec2 endpoint") != NULL);
	buf_reset(&err);
	CHECK_I64(aws_endpoint_resolve(&ep, AWS_SERVICE_EC2, "US_EAST.evil.com/", &err), EM_EINPUT);
	CHECK(strstr(err.s, "is not an aws region name") != NULL);

	/* overrides */
	setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:9999/", 1);
	check_endpoint(AWS_SERVICE_EC2, "us-east-1", "http://127.0.0.1:9999", "us-east-1", "ec2", "aws", 1);
	check_endpoint(AWS_SERVICE_CLOUDWATCH, "us-east-1", "https://monitoring.us-east-1.amazonaws.com", "us-east-1",
		       "monitoring", "aws", 0);
	setenv("AWS_ENDPOINT_URL", "http://localhost:4566", 1);
	check_endpoint(AWS_SERVICE_CLOUDWATCH, "us-east-1", "http://localhost:4566", "us-east-1", "monitoring", "aws", 1);
	setenv("AWS_ENDPOINT_URL_MONITORING", "http://localhost:5000", 1);
	check_endpoint(AWS_SERVICE_CLOUDWATCH, "us-east-1", "http://localhost:5000", "us-east-1", "monitoring", "aws", 1);
	setenv("AWS_ENDPOINT_URL_CLOUDWATCH", "http://localhost:6000/base/", 1);
	check_endpoint(AWS_SERVICE_CLOUDWATCH, "us-east-1", "http://localhost:6000/base", "us-east-1", "monitoring", "aws",
		       1);
	check_endpoint(AWS_SERVICE_EC2, "us-east-1", "http://127.0.0.1:9999", "us-east-1", "ec2", "aws", 1);
	setenv("AWS_ENDPOINT_URL_PRICING", "https://api.pricing.ap-south-1.amazonaws.com", 1);
	check_endpoint(AWS_SERVICE_PRICING, "eu-west-1", "https://api.pricing.ap-south-1.amazonaws.com", "ap-south-1",
		       "pricing", "aws", 1);
	setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
	check_endpoint(AWS_SERVICE_EC2, "us-east-1", "https://ec2.us-east-1.amazonaws.com", "us-east-1", "ec2", "aws", 0);
	unsetenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
	setenv("AWS_ENDPOINT_URL_STS", "ftp://sts.example", 1);
	buf_reset(&err);
	CHECK_I64(aws_endpoint_resolve(&ep, AWS_SERVICE_STS, "us-east-1", &err), EM_EINPUT);
	CHECK_STR(err.s, "AWS_ENDPOINT_URL_STS 'ftp://sts.example' is not an http:// or https:// url");
	clear_env();
	buf_release(&err);

	CHECK_STR(aws_partition_of("cn-northwest-1"), "aws-cn");
	CHECK_STR(aws_partition_of("us-gov-east-1"), "aws-us-gov");
	CHECK_STR(aws_partition_of("eu-south-2"), "aws");
	CHECK_STR(aws_service_signing_name(AWS_SERVICE_CLOUDWATCH), "monitoring");
	CHECK(aws_region_valid("ap-southeast-4"));
	CHECK(!aws_region_valid("Us-East-1"));
	CHECK(!aws_region_valid(""));
}

/* ---- STS over loopback ---- */

struct fake {
	int64_t now;
	int n_sleeps;
};

static int64_t fake_clock(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static void fake_sleep(void *ctx, int64_t ms)
{
	((struct fake *)ctx)->n_sleeps++;
	((struct fake *)ctx)->now += ms;
}

/* A fixed jitter draw: the wait before a retry is random in [0, cap], and a draw of 0 would skip
 * the sleep the throttling check counts (1 run in 501 failed before this). */
static uint64_t fake_random(void *ctx)
{
	(void)ctx;
	return 12345;
}

static void client(struct http_client *c, struct fake *f)
{
	memset(f, 0, sizeof *f);
	struct http_options o = {0};
	o.clock_ms = fake_clock;
	o.sleep_ms = fake_sleep;
	o.random = fake_random;
	o.inject_ctx = f;
	o.timeout_ms = 5000;
	struct buf err = BUF_INIT;
	CHECK(http_client_init(c, &o, &err) == 0);
	buf_release(&err);
}

/* "20260115T100000Z" -> time_t */
static time_t amz_time(const char *d)
{
	char iso[32];
	snprintf(iso, sizeof iso, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", d, d + 4, d + 6, d + 9, d + 11, d + 13);
	time_t t = 0;
	em_parse_time(iso, &t);
	return t;
}

/* Re-signs what the server received and compares with the Authorization it carried. */
static int signature_verifies(struct lb_server *s, const struct lb_request *r, const struct aws_credentials *creds,
			      const char *region)
{
	char v[4096], auth[4096], date[64];
	if (!lb_header(r, "Authorization", auth, sizeof auth) || !lb_header(r, "X-Amz-Date", date, sizeof date))
		return 0;
	struct buf url = BUF_INIT, err = BUF_INIT;
	buf_addf(&url, "%s%s", s->url, r->target);
	struct http_request rq;
	http_request_init(&rq, r->method, url.s);
	http_headers_add(&rq.headers, "Host", lb_header(r, "Host", v, sizeof v));
	http_headers_add(&rq.headers, "Content-Type", lb_header(r, "Content-Type", v, sizeof v));
	buf_add(&rq.body, r->body, r->body_len);
	struct aws_sigv4_params p = {creds, region, "sts", amz_time(date), 1, 0, 0, 0};
	int ok = aws_sigv4_sign_http(&rq, &p, &err) == 0 &&
		 strcmp(http_headers_get(&rq.headers, "Authorization"), auth) == 0;
	http_request_release(&rq);
	buf_release(&url);
	buf_release(&err);
	return ok;
}

static const char identity_xml[] =
	"<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
	"  <GetCallerIdentityResult>\n"
	"    <Arn>arn:aws:iam::123456789012:user/Alice</Arn>\n"
	"    <UserId>AIDAEXAMPLE</UserId>\n"
	"    <Account>123456789012</Account>\n"
	"  </GetCallerIdentityResult>\n"
	"  <ResponseMetadata><RequestId>01234567-89ab-cdef-0123-456789abcdef</RequestId></ResponseMetadata>\n"
	"</GetCallerIdentityResponse>\n";

static const char assume_xml[] =
	"<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
	"  <AssumeRoleResult>\n"
	"    <AssumedRoleUser>\n"
	"      <Arn>arn:aws:sts::210987654321:assumed-role/migrator/ebs</Arn>\n"
	"      <AssumedRoleId>AROAEXAMPLE:ebs</AssumedRoleId>\n"
	"    </AssumedRoleUser>\n"
	"    <Credentials>\n"
	"      <AccessKeyId>ASIATEMP</AccessKeyId>\n"
	"      <SecretAccessKey>TEMPSECRET</SecretAccessKey>\n"
	"      <SessionToken>TEMPTOKEN</SessionToken>\n"
	"      <Expiration>2026-01-15T11:00:00.123Z</Expiration>\n"
	"    </Credentials>\n"
	"    <PackedPolicySize>6</PackedPolicySize>\n"
	"  </AssumeRoleResult>\n"
	"  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>\n"
	"</AssumeRoleResponse>\n";

static const char web_xml[] =
	"<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
	"  <AssumeRoleWithWebIdentityResult>\n"
	"    <SubjectFromWebIdentityToken>system:serviceaccount:kube-system:ebsmigrate</SubjectFromWebIdentityToken>\n"
	"    <Audience>sts.amazonaws.com</Audience>\n"
	"    <AssumedRoleUser><Arn>arn:aws:sts::111122223333:assumed-role/irsa/s</Arn>"
	"<AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>\n"
	"    <Credentials><SessionToken>WEBTOKEN</SessionToken><SecretAccessKey>WEBSECRET</SecretAccessKey>"
	"<Expiration>2026-01-15T11:00:00Z</Expiration><AccessKeyId>ASIAWEB</AccessKeyId></Credentials>\n"
	"    <Provider>arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/X</Provider>\n"
	"  </AssumeRoleWithWebIdentityResult>\n"
	"</AssumeRoleWithWebIdentityResponse>\n";

static const char denied_xml[] =
	"<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
	"  <Error><Type>Sender</Type><Code>AccessDenied</Code>"
	"<Message>User: arn:aws:iam::1:user/bob is not authorized to perform: sts:AssumeRole</Message></Error>\n"
	"  <RequestId>req-42</RequestId>\n"
	"</ErrorResponse>\n";

static const char throttle_xml[] = "<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code>"
				   "<Message>Rate exceeded</Message></Error><RequestId>r</RequestId></ErrorResponse>";

static const char bad_jwt_xml[] = "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
				  "<Message>Incorrect token audience</Message></Error><RequestId>r2</RequestId>"
				  "</ErrorResponse>";

static void test_caller_identity(void)
{
	static const struct lb_response script[] = {
		{400, NULL, throttle_xml, 0, 0},
		{200, "Content-Type: text/xml\r\n", identity_xml, 0, 0},
		{403, NULL, denied_xml, 0, 0},
		{200, NULL, "not xml at all", 0, 0},
		{200, NULL, "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 5) == 0);
	setenv("AWS_ENDPOINT_URL_STS", s.url, 1);
	struct http_client c;
	struct fake f;
	client(&c, &f);
	struct aws_credentials creds = {0};
	creds.access_key_id = xstrdup("AKIDCALLER");
	creds.secret_access_key = xstrdup("CALLERSECRET");
	creds.session_token = xstrdup("CALLERTOKEN");
	struct aws_caller_identity id = {0};
	struct buf err = BUF_INIT;
	int rc = aws_sts_get_caller_identity(&id, &c, "us-west-2", &creds, &err);
	CHECK_I64(rc, 0);
	CHECK_STR(id.account, "123456789012");
	CHECK_STR(id.arn, "arn:aws:iam::123456789012:user/Alice");
	CHECK_STR(id.user_id, "AIDAEXAMPLE");
	CHECK_I64(lb_count(&s), 2);
	CHECK_I64(f.n_sleeps, 1); /* Throttling was retried */
	const struct lb_request *r = lb_req(&s, 1);
	char v[4096];
	CHECK_STR(r->method, "POST");
	CHECK_STR(r->target, "/");
	CHECK_STR(r->body, "Action=GetCallerIdentity&Version=2011-06-15");
	CHECK_STR(lb_header(r, "Content-Type", v, sizeof v), "application/x-www-form-urlencoded; charset=utf-8");
	CHECK_STR(lb_header(r, "X-Amz-Security-Token", v, sizeof v), "CALLERTOKEN");
	CHECK(lb_header(r, "Authorization", v, sizeof v) &&
	      strstr(v, "Credential=AKIDCALLER/") && strstr(v, "/us-west-2/sts/aws4_request, SignedHeaders="
								 "content-type;host;x-amz-date;x-amz-security-token, "));
	CHECK(signature_verifies(&s, r, &creds, "us-west-2"));
	aws_caller_identity_release(&id);

	rc = aws_sts_get_caller_identity(&id, &c, "us-west-2", &creds, &err);
	CHECK_I64(rc, EM_EAUTH);
	CHECK_STR(err.s, "sts GetCallerIdentity: AccessDenied: User: arn:aws:iam::1:user/bob is not authorized to "
			 "perform: sts:AssumeRole (HTTP 403, request id req-42)");
	buf_reset(&err);
	rc = aws_sts_get_caller_identity(&id, &c, "us-west-2", &creds, &err);
	CHECK_I64(rc, EM_ESERVER);
	buf_reset(&err);
	rc = aws_sts_get_caller_identity(&id, &c, "us-west-2", &creds, &err);
	CHECK_I64(rc, EM_ESERVER); /* a DTD is refused */
	CHECK(strstr(err.s, "CALLERSECRET") == NULL && strstr(err.s, "CALLERTOKEN") == NULL);
	aws_caller_identity_release(&id);
	aws_credentials_release(&creds);
	http_client_release(&c);
	lb_stop(&s);
	unsetenv("AWS_ENDPOINT_URL_STS");
	buf_release(&err);
}

static void test_assume_role(void)
{
	static const struct lb_response script[] = {
		{200, NULL, assume_xml, 0, 0},
		{200, NULL, web_xml, 0, 0},
		{400, NULL, bad_jwt_xml, 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 3) == 0);
	setenv("AWS_ENDPOINT_URL_STS", s.url, 1);
	struct http_client c;
	struct fake f;
	client(&c, &f);
	struct aws_credentials src = {0}, out = {0};
	src.access_key_id = xstrdup("AKIDSOURCE");
	src.secret_access_key = xstrdup("SOURCESECRET");
	struct aws_assume_role_params ap = {"arn:aws:iam::210987654321:role/migrator", "ebs session", "ext-1", 1800};
	struct buf err = BUF_INIT;
	int rc = aws_sts_assume_role(&out, &c, "eu-central-1", &src, &ap, &err);
	CHECK_I64(rc, 0);
	CHECK_STR(out.access_key_id, "ASIATEMP");
	CHECK_STR(out.secret_access_key, "TEMPSECRET");
	CHECK_STR(out.session_token, "TEMPTOKEN");
	time_t want;
	em_parse_time("2026-01-15T11:00:00Z", &want);
	CHECK_I64(out.expiration, want);
	CHECK_STR(out.account_id, "210987654321");
	CHECK_STR(out.source, "role 'arn:aws:iam::210987654321:role/migrator'");
	const struct lb_request *r = lb_req(&s, 0);
	char v[4096];
	CHECK_STR(r->body, "Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A210987654321%3Arole%2Fmigrator"
			   "&RoleSessionName=ebs%20session&ExternalId=ext-1&DurationSeconds=1800");
	CHECK(lb_header(r, "X-Amz-Security-Token", v, sizeof v) == NULL);
	CHECK(lb_header(r, "Authorization", v, sizeof v) && strstr(v, "Credential=AKIDSOURCE/") &&
	      strstr(v, "/eu-central-1/sts/aws4_request"));
	CHECK(signature_verifies(&s, r, &src, "eu-central-1"));

	rc = aws_sts_assume_role_with_web_identity(&out, &c, NULL, "arn:aws:iam::111122223333:role/irsa", "s",
						   "eyJhbGciOi.JWTBODY.SIG", &err);
	CHECK_I64(rc, 0);
	CHECK_STR(out.access_key_id, "ASIAWEB");
	CHECK_STR(out.secret_access_key, "WEBSECRET");
	CHECK_STR(out.session_token, "WEBTOKEN");
	CHECK_STR(out.account_id, "111122223333");
	r = lb_req(&s, 1);
	CHECK(lb_header(r, "Authorization", v, sizeof v) == NULL); /* unsigned */
	CHECK(lb_header(r, "X-Amz-Date", v, sizeof v) == NULL);
	CHECK_STR(r->body, "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A111122223333"
			   "%3Arole%2Firsa&RoleSessionName=s&WebIdentityToken=eyJhbGciOi.JWTBODY.SIG");

	rc = aws_sts_assume_role_with_web_identity(&out, &c, NULL, "arn:aws:iam::111122223333:role/irsa", "s",
						   "eyJhbGciOi.JWTBODY.SIG", &err);
	CHECK_I64(rc, EM_EAUTH);
	CHECK(strstr(err.s, "InvalidIdentityToken: Incorrect token audience") != NULL);
	CHECK(strstr(err.s, "JWTBODY") == NULL);
	CHECK_STR(out.access_key_id, "ASIAWEB"); /* untouched on failure */
	aws_credentials_release(&out);
	aws_credentials_release(&src);
	http_client_release(&c);
	lb_stop(&s);
	unsetenv("AWS_ENDPOINT_URL_STS");
	buf_release(&err);
}

/* aws_sigv4_presend signs each attempt; the server can verify every one of them. */
static void test_presend_signing(void)
{
	static const struct lb_response script[] = {
		{503, NULL, "", 0, 0},
		{200, NULL, "ok", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 2) == 0);
	struct http_client c;
	struct fake f;
	client(&c, &f);
	struct aws_credentials creds = {0};
	creds.access_key_id = xstrdup("AKIDPRESEND");
	creds.secret_access_key = xstrdup("PRESENDSECRET");
	creds.session_token = xstrdup("PRESENDTOKEN");
	struct aws_sigv4_params sp = {&creds, "ca-central-1", "sts", 0, 1, 0, 0, 0};
	struct buf url = BUF_INIT, err = BUF_INIT;
	buf_addf(&url, "%s/", s.url);
	struct http_request rq;
	http_request_init(&rq, "POST", url.s);
	http_headers_add(&rq.headers, "Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
	buf_adds(&rq.body, "Action=GetCallerIdentity&Version=2011-06-15");
	rq.presend = aws_sigv4_presend;
	rq.presend_ctx = &sp;
	struct http_response resp;
	http_response_init(&resp);
	CHECK_I64(http_send(&c, &rq, &resp, &err), 0);
	CHECK_I64(resp.attempts, 2);
	CHECK(http_headers_get(&rq.headers, "Authorization") == NULL);
	char v[256];
	for (size_t i = 0; i < 2; i++) {
		const struct lb_request *r = lb_req(&s, i);
		CHECK(r && signature_verifies(&s, r, &creds, "ca-central-1"));
		CHECK_STR(lb_header(r, "X-Amz-Security-Token", v, sizeof v), "PRESENDTOKEN");
	}
	http_response_release(&resp);
	http_request_release(&rq);
	aws_credentials_release(&creds);
	http_client_release(&c);
	lb_stop(&s);
	buf_release(&url);
	buf_release(&err);
}

/* ---- EKS token ---- */

static int b64url_decode(const char *in, struct buf *out)
{
	struct buf std = BUF_INIT;
	for (const char *p = in; *p; p++) {
		if (*p == '+' || *p == '/' || *p == '=') {
			buf_release(&std);
			return -1; /* not base64url, or padded */
		}
		buf_addc(&std, *p == '-' ? '+' : *p == '_' ? '/' : *p);
	}
	size_t raw_len = std.len * 3 / 4;
	while (std.len % 4)
		buf_addc(&std, '=');
	unsigned char *dec = malloc(std.len + 1);
	int n = EVP_DecodeBlock(dec, (const unsigned char *)std.s, (int)std.len);
	if (n >= 0)
		buf_add(out, dec, raw_len);
	free(dec);
	buf_release(&std);
	return n < 0 ? -1 : 0;
}

/* The value of query parameter name in url (still encoded), copied to out. */
static const char *query_param(const char *url, const char *name, char *out, size_t n)
{
	size_t nl = strlen(name);
	for (const char *p = strchr(url, '?'); p; p = strchr(p + 1, '&')) {
		if (strncmp(p + 1, name, nl) == 0 && p[1 + nl] == '=') {
			const char *v = p + 2 + nl;
			size_t vl = strcspn(v, "&");
			if (vl >= n)
				vl = n - 1;
			memcpy(out, v, vl);
			out[vl] = '\0';
			return out;
		}
	}
	return NULL;
}

static void test_eks_token(void)
{
	clear_env();
	struct aws_credentials creds = {0};
	creds.access_key_id = xstrdup("AKIDEKS");
	creds.secret_access_key = xstrdup("EKSSECRET");
	creds.session_token = xstrdup("EKS/TOKEN+=");
	time_t now;
	em_parse_time("2026-01-15T10:00:00Z", &now);
	struct buf tok = BUF_INIT, err = BUF_INIT, url = BUF_INIT;
	time_t exp = 0;
	CHECK_I64(aws_eks_token(&tok, &exp, "prod-cluster", "us-west-2", &creds, now, &err), 0);
	CHECK_I64(exp, now + 14 * 60);
	CHECK(strncmp(tok.s, "k8s-aws-v1.", 11) == 0);
	CHECK(strpbrk(tok.s + 11, "+/=") == NULL);
	CHECK(b64url_decode(tok.s + 11, &url) == 0);
	const char *prefix = "https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&";
	CHECK(strncmp(url.s, prefix, strlen(prefix)) == 0);
	char v[2048];
	CHECK_STR(query_param(url.s, "X-Amz-Algorithm", v, sizeof v), "AWS4-HMAC-SHA256");
	CHECK_STR(query_param(url.s, "X-Amz-Credential", v, sizeof v), "AKIDEKS%2F20260115%2Fus-west-2%2Fsts%2Faws4_request");
	CHECK_STR(query_param(url.s, "X-Amz-Date", v, sizeof v), "20260115T100000Z");
	CHECK_STR(query_param(url.s, "X-Amz-Expires", v, sizeof v), "60");
	CHECK_STR(query_param(url.s, "X-Amz-SignedHeaders", v, sizeof v), "host%3Bx-k8s-aws-id");
	CHECK_STR(query_param(url.s, "X-Amz-Security-Token", v, sizeof v), "EKS%2FTOKEN%2B%3D");
	CHECK(query_param(url.s, "x-k8s-aws-id", v, sizeof v) == NULL);
	CHECK(strstr(url.s, "prod-cluster") == NULL);
	char sig[128];
	CHECK(query_param(url.s, "X-Amz-Signature", sig, sizeof sig) && strlen(sig) == 64);

	/* Recompute: presign the same GET with the signer and the x-k8s-aws-id header. */
	struct http_headers h = HTTP_HEADERS_INIT;
	http_headers_add(&h, "x-k8s-aws-id", "prod-cluster");
	struct aws_sigv4_request rq = {"GET", "https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15",
				       &h, NULL, 0};
	struct aws_sigv4_params p = {&creds, "us-west-2", "sts", now, 1, 0, 0, 60};
	struct aws_sigv4_signature s;
	aws_sigv4_signature_init(&s);
	CHECK_I64(aws_sigv4_presign(&s, &rq, &p, &err), 0);
	CHECK_STR(s.signature, sig);
	CHECK(strstr(s.canonical_request.s, "\nhost:sts.us-west-2.amazonaws.com\nx-k8s-aws-id:prod-cluster\n\n"
					    "host;x-k8s-aws-id\n") != NULL);
	/* a different cluster name gives a different signature: the header is really signed */
	aws_sigv4_signature_release(&s);
	http_headers_set(&h, "x-k8s-aws-id", "other");
	aws_sigv4_signature_init(&s);
	CHECK_I64(aws_sigv4_presign(&s, &rq, &p, &err), 0);
	CHECK(strcmp(s.signature, sig) != 0);
	aws_sigv4_signature_release(&s);
	http_headers_release(&h);

	/* global endpoint without a region; bad input */
	buf_reset(&tok);
	buf_reset(&url);
	CHECK_I64(aws_eks_token(&tok, NULL, "c", NULL, &creds, now, &err), 0);
	CHECK(b64url_decode(tok.s + 11, &url) == 0);
	CHECK(strncmp(url.s, "https://sts.amazonaws.com/?Action=GetCallerIdentity", 51) == 0);
	CHECK(strstr(url.s, "%2Fus-east-1%2Fsts%2F") != NULL);
	CHECK_I64(aws_eks_token(&tok, NULL, "", "us-west-2", &creds, now, &err), EM_EINPUT);
	buf_release(&tok);
	buf_release(&url);
	buf_release(&err);
	aws_credentials_release(&creds);
}

int main(void)
{
	test_endpoints();
	test_caller_identity();
	test_assume_role();
	test_presend_signing();
	test_eks_token();
	return tap_done();
}
