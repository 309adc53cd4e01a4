/* test_aws_credential_chain.c - every link of the credentials chain with temp files, environment
 * variables and loopback servers standing in for STS, the container endpoint and IMDS; the
 * exact requests those servers received; caching, refresh and region resolution. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/aws_credential_chain.h"
#include "ebsmigrate/aws_sigv4.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/http.h"
#include "loopback_http.h"
#include "tap.h"

static char tmp[256];
static time_t fake_now;

static time_t clock_fn(void)
{
	return fake_now;
}

static const char *const vars[] = {
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
	"AWS_CREDENTIAL_EXPIRATION", "AWS_ACCOUNT_ID", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
	"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
	"AWS_ROLE_SESSION_NAME", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_EC2_METADATA_DISABLED",
	"AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "AWS_EC2_METADATA_V1_DISABLED",
	"AWS_METADATA_SERVICE_TIMEOUT", "AWS_METADATA_SERVICE_NUM_ATTEMPTS", "AWS_REGION", "AWS_DEFAULT_REGION",
	"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_CA_BUNDLE", NULL,
};

/* A clean slate: no AWS variables, an empty ~/.aws, and IMDS off unless a test turns it on. */
static void reset(void)
{
	for (const char *const *v = vars; *v; v++)
		unsetenv(*v);
	setenv("HOME", tmp, 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	char p[512];
	snprintf(p, sizeof p, "%s/.aws/credentials", tmp);
	unlink(p);
	snprintf(p, sizeof p, "%s/.aws/config", tmp);
	unlink(p);
	em_parse_time("2026-01-15T10:00:00Z", &fake_now);
}

static void write_file(const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", tmp, rel);
	FILE *f = fopen(p, "w");
	if (!f) {
		printf("# cannot write %s\n", p);
		return;
	}
	fputs(text, f);
	fclose(f);
}

static const char *tmp_path(const char *rel)
{
	static char p[512];
	snprintf(p, sizeof p, "%s/%s", tmp, rel);
	return p;
}

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

static struct http_client http;
static struct fake hf;

static void provider(struct aws_credentials_provider *p, const char *profile, const char *region)
{
	struct aws_credentials_options o = {0};
	o.profile = profile;
	o.region = region;
	o.http = &http;
	o.clock = clock_fn;
	o.session_name = "test-session";
	aws_credentials_provider_init(p, &o);
}

/* Resolves once; returns rc, copies credentials into out (released by the caller). */
static int get(const char *profile, const char *region, struct aws_credentials *out, struct buf *err)
{
	struct aws_credentials_provider p;
	provider(&p, profile, region);
	const struct aws_credentials *c = NULL;
	int rc = aws_credentials_provider_get(&p, &c, err);
	if (rc == 0)
		aws_credentials_copy(out, c);
	aws_credentials_provider_release(&p);
	return rc;
}

static void test_env(void)
{
	reset();
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
	setenv("AWS_SESSION_TOKEN", "ENVTOKEN", 1);
	setenv("AWS_CREDENTIAL_EXPIRATION", "2026-01-15T12:00:00Z", 1);
	struct aws_credentials c = {0};
	struct buf err = BUF_INIT;
	CHECK_I64(get(NULL, NULL, &c, &err), 0);
	CHECK_STR(c.access_key_id, "AKIDENV");
	CHECK_STR(c.secret_access_key, "ENVSECRET");
	CHECK_STR(c.session_token, "ENVTOKEN");
	CHECK_STR(c.source, "environment");
	time_t want;
	em_parse_time("2026-01-15T12:00:00Z", &want);
	CHECK_I64(c.expiration, want);
	aws_credentials_release(&c);
	CHECK(c.access_key_id == NULL && c.secret_access_key == NULL && c.session_token == NULL);

	/* AWS_PROFILE does not hide environment keys; --profile does (like the AWS CLI) */
	write_file(".aws/credentials", "[dev]\naws_access_key_id = AKIDDEV\naws_secret_access_key = DEVSECRET\n");
	setenv("AWS_PROFILE", "dev", 1);
	CHECK_I64(get(NULL, NULL, &c, &err), 0);
	CHECK_STR(c.access_key_id, "AKIDENV");
	CHECK_I64(get("dev", NULL, &c, &err), 0);
	CHECK_STR(c.access_key_id, "AKIDDEV");
	CHECK_STR(c.source, "profile 'dev' in ~/.aws/credentials");
	CHECK(c.session_token == NULL);
	CHECK_I64(c.expiration, 0);

	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_PROFILE");
	CHECK_I64(get(NULL, NULL, &c, &err), EM_EAUTH);
	CHECK_STR(err.s, "environment: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
	setenv("AWS_CREDENTIAL_EXPIRATION", "soon", 1);
	buf_reset(&err);
	CHECK_I64(get(NULL, NULL, &c, &err), EM_EINPUT);
	CHECK(strstr(err.s, "AWS_CREDENTIAL_EXPIRATION 'soon'") != NULL);
	CHECK(strstr(err.s, "ENVSECRET") == NULL);
	aws_credentials_release(&c);
	buf_release(&err);
}

static void test_shared_files(void)
{
	reset();
	struct aws_credentials c = {0};
	struct buf err = BUF_INIT;
	write_file(".aws/credentials", "# comment\n[default]\naws_access_key_id=AKIDDEF\n"
				       "aws_secret_access_key = DEFSECRET \n"
				       "[both]\nAWS_ACCESS_KEY_ID = AKIDBOTHCRED\naws_secret_access_key = S1\n"
				       "aws_session_token = T1\n");
	write_file(".aws/config", "[default]\nregion = eu-west-1\n"
				  "[profile both]\naws_access_key_id = AKIDBOTHCONF\naws_secret_access_key = S2\n"
				  "[profile   cfgonly]\naws_access_key_id = AKIDCFG\naws_secret_access_key = S3\n"
				  "s3 =\n  max_concurrent_requests = 20\n"
				  "[sso-session corp]\nsso_start_url = https://x\n"
				  "[profile half]\naws_access_key_id = AKIDHALF\n");
	CHECK_I64(get(NULL, NULL, &c, &err), 0);
	CHECK_STR(c.access_key_id, "AKIDDEF");
	CHECK_STR(c.secret_access_key, "DEFSECRET");
	CHECK_I64(get("both", NULL, &c, &err), 0);
	CHECK_STR(c.access_key_id, "AKIDBOTHCRED"); /* credentials file first; keys are case-insensitive */
	CHECK_STR(c.session_token, "T1");
	CHECK_I64(get("cfgonly", NULL, &c, &err), 0);
	CHECK_STR(c.access_key_id, "AKIDCFG");
	CHECK_STR(c.source, "profile 'cfgonly' in ~/.aws/config");
	CHECK_I64(get("half", NULL, &c, &err), EM_EAUTH);
	CHECK_STR(err.s, "profile 'half' in ~/.aws/config: aws_access_key_id set but no aws_secret_access_key");
	buf_reset(&err);
	CHECK_I64(get("corp", NULL, &c, &err), EM_ENOTFOUND); /* an sso-session is not a profile */
	CHECK_STR(err.s, "profile 'corp' not found in ~/.aws/config or ~/.aws/credentials");
	buf_reset(&err);
	setenv("AWS_PROFILE", "nope", 1);
	CHECK_I64(get(NULL, NULL, &c, &err), EM_ENOTFOUND);
	unsetenv("AWS_PROFILE");

	/* overrides of the file locations, named as given */
	write_file("alt-creds", "[alt]\naws_access_key_id = AKIDALT\naws_secret_access_key = ALTSECRET\n");
	write_file("alt-config", "[profile other]\nregion = ap-south-1\n[profile broken\n");
	setenv("AWS_SHARED_CREDENTIALS_FILE", tmp_path("alt-creds"), 1);
	CHECK_I64(get("alt", NULL, &c, &err), 0);
	CHECK_STR(c.access_key_id, "AKIDALT");
	setenv("AWS_CONFIG_FILE", tmp_path("alt-config"), 1);
	buf_reset(&err);
	CHECK_I64(get("alt", NULL, &c, &err), EM_EINPUT);
	CHECK(strstr(err.s, "alt-config' line 3: section header without ']'") != NULL);

	/* nothing anywhere */
	reset();
	buf_reset(&err);
	CHECK_I64(get(NULL, NULL, &c, &err), EM_EAUTH);
	CHECK_STR(err.s, "no aws credentials found (tried the environment, profile 'default' in ~/.aws/credentials and "
			 "~/.aws/config, web identity, container credentials and instance metadata)");
	aws_credentials_release(&c);
	buf_release(&err);
}

static void test_unsupported_profiles(void)
{
	reset();
	struct aws_credentials c = {0};
	struct buf err = BUF_INIT;
	write_file(".aws/config", "[profile prod]\nrole_arn = arn:aws:iam::1:role/r\n"
				  "[profile both]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = x\n"
				  "credential_source = Environment\n"
				  "[profile mfa]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = keys\n"
				  "mfa_serial = arn:aws:iam::1:mfa/me\n"
				  "[profile keys]\naws_access_key_id = A\naws_secret_access_key = B\n"
				  "[profile sso]\nsso_session = corp\nsso_account_id = 1\n"
				  "[profile proc]\ncredential_process = /bin/echo\n"
				  "[profile badsrc]\nrole_arn = arn:aws:iam::1:role/r\ncredential_source = Ec2\n"
				  "[profile missing]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = ghost\n"
				  "[profile loop-a]\nrole_arn = arn:aws:iam::1:role/a\nsource_profile = loop-b\n"
				  "[profile loop-b]\nrole_arn = arn:aws:iam::1:role/b\nsource_profile = loop-a\n"
				  "[profile dur]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = keys\n"
				  "duration_seconds = 1h\n"
				  "[profile nokeys]\nregion = us-east-1\n"
				  "[profile needkeys]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = nokeys\n");
	struct {
		const char *profile;
		int rc;
		const char *msg;
	} cases[] = {
		{"prod", EM_EINPUT, "profile 'prod' in ~/.aws/config: role_arn set but no source_profile or credential_source"},
		{"both", EM_EINPUT, "profile 'both' in ~/.aws/config: both source_profile and credential_source are set"},
		{"mfa", EM_EUNSUPPORTED, "profile 'mfa' in ~/.aws/config: mfa_serial is set, and ebsmigrate cannot prompt"},
		{"sso", EM_EUNSUPPORTED, "profile 'sso' in ~/.aws/config: IAM Identity Center (SSO) profiles are not supported"},
		{"proc", EM_EUNSUPPORTED, "profile 'proc' in ~/.aws/config: credential_process is not supported"},
		{"badsrc", EM_EINPUT,
		 "profile 'badsrc' in ~/.aws/config: credential_source 'Ec2' is not Environment, Ec2InstanceMetadata or "
		 "EcsContainer"},
		{"missing", EM_EINPUT, "profile 'missing' in ~/.aws/config: source_profile 'ghost' does not exist"},
		{"loop-a", EM_EINPUT, "profile 'loop-b' in ~/.aws/config: source_profile loop (loop-a -> loop-b -> loop-a)"},
		{"dur", EM_EINPUT, "profile 'dur' in ~/.aws/config: duration_seconds '1h' is not a number of seconds"},
		{"needkeys", EM_EAUTH, "profile 'needkeys' in ~/.aws/config: source profile 'nokeys' has no credentials"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		buf_reset(&err);
		int rc = get(cases[i].profile, NULL, &c, &err);
		CHECK_I64(rc, cases[i].rc);
		CHECK(strncmp(err.s, cases[i].msg, strlen(cases[i].msg)) == 0);
		if (strncmp(err.s, cases[i].msg, strlen(cases[i].msg)) != 0)
			printf("#   got:  %s\n#   want: %s...\n", err.s, cases[i].msg);
	}
	aws_credentials_release(&c);
	buf_release(&err);
}

/* ---- STS-backed links ---- */

static const char assume_a[] =
	"<AssumeRoleResponse><AssumeRoleResult><AssumedRoleUser><Arn>arn:aws:sts::222233334444:assumed-role/mid/s</Arn>"
	"</AssumedRoleUser><Credentials><AccessKeyId>ASIAMID</AccessKeyId><SecretAccessKey>MIDSECRET</SecretAccessKey>"
	"<SessionToken>MIDTOKEN</SessionToken><Expiration>2026-01-15T11:00:00Z</Expiration></Credentials>"
	"</AssumeRoleResult></AssumeRoleResponse>";

static const char assume_b[] =
	"<AssumeRoleResponse><AssumeRoleResult><AssumedRoleUser><Arn>arn:aws:sts::555566667777:assumed-role/prod/s</Arn>"
	"</AssumedRoleUser><Credentials><AccessKeyId>ASIAPROD</AccessKeyId><SecretAccessKey>PRODSECRET</SecretAccessKey>"
	"<SessionToken>PRODTOKEN</SessionToken><Expiration>2026-01-15T11:00:00Z</Expiration></Credentials>"
	"</AssumeRoleResult></AssumeRoleResponse>";

static const char web_1[] =
	"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
	"<AccessKeyId>ASIAWEB1</AccessKeyId><SecretAccessKey>WEB1SECRET</SecretAccessKey>"
	"<SessionToken>WEB1TOKEN</SessionToken><Expiration>2026-01-15T11:00:00Z</Expiration></Credentials>"
	"</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";

static const char web_2[] =
	"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
	"<AccessKeyId>ASIAWEB2</AccessKeyId><SecretAccessKey>WEB2SECRET</SecretAccessKey>"
	"<SessionToken>WEB2TOKEN</SessionToken><Expiration>2026-01-15T12:00:00Z</Expiration></Credentials>"
	"</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";

static const char bad_jwt[] = "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
			      "<Message>Token expired</Message></Error><RequestId>r</RequestId></ErrorResponse>";

/* The form field of a recorded STS body ("RoleArn=..."), still encoded. */
static const char *form_field(const struct lb_request *r, const char *name, char *out, size_t n)
{
	size_t nl = strlen(name);
	for (const char *p = r->body; p && *p;) {
		if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
			size_t vl = strcspn(p + nl + 1, "&");
			if (vl >= n)
				vl = n - 1;
			memcpy(out, p + nl + 1, vl);
			out[vl] = '\0';
			return out;
		}
		p = strchr(p, '&');
		if (p)
			p++;
	}
	return NULL;
}

static void test_assume_role_chain(void)
{
	static const struct lb_response script[] = {
		{200, NULL, assume_a, 0, 0}, /* base -> mid */
		{200, NULL, assume_b, 0, 0}, /* mid -> prod */
		{200, NULL, assume_b, 0, 0}, /* self-sourced */
		{200, NULL, assume_b, 0, 0}, /* credential_source Environment */
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 4) == 0);
	reset();
	setenv("AWS_ENDPOINT_URL_STS", s.url, 1);
	write_file(".aws/credentials", "[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = BASESECRET\n"
				       "[selfish]\naws_access_key_id = AKIDSELF\naws_secret_access_key = SELFSECRET\n");
	write_file(".aws/config", "[profile prod]\nrole_arn = arn:aws:iam::555566667777:role/prod\n"
				  "source_profile = mid\nrole_session_name = prod-session\nexternal_id = xyz\n"
				  "duration_seconds = 3600\n"
				  "[profile mid]\nrole_arn = arn:aws:iam::222233334444:role/mid\nsource_profile = base\n"
				  "[profile selfish]\nrole_arn = arn:aws:iam::555566667777:role/prod\nsource_profile = selfish\n"
				  "[profile envsrc]\nrole_arn = arn:aws:iam::555566667777:role/prod\n"
				  "credential_source = Environment\n");
	struct aws_credentials c = {0};
	struct buf err = BUF_INIT;
	char v[4096];
	CHECK_I64(get("prod", "us-west-2", &c, &err), 0);
	if (err.len)
		printf("# %s\n", err.s);
	CHECK_STR(c.access_key_id, "ASIAPROD");
	CHECK_STR(c.session_token, "PRODTOKEN");
	CHECK_STR(c.account_id, "555566667777");
	CHECK_STR(c.source, "profile 'prod' (role 'arn:aws:iam::555566667777:role/prod')");
	CHECK_I64(lb_count(&s), 2);
	const struct lb_request *r0 = lb_req(&s, 0), *r1 = lb_req(&s, 1);
	/* first: base's keys assume mid */
	CHECK_STR(form_field(r0, "Action", v, sizeof v), "AssumeRole");
	CHECK_STR(form_field(r0, "RoleArn", v, sizeof v), "arn%3Aaws%3Aiam%3A%3A222233334444%3Arole%2Fmid");
	CHECK_STR(form_field(r0, "RoleSessionName", v, sizeof v), "test-session");
	CHECK(lb_header(r0, "Authorization", v, sizeof v) && strstr(v, "Credential=AKIDBASE/") &&
	      strstr(v, "/us-west-2/sts/aws4_request"));
	CHECK(lb_header(r0, "X-Amz-Security-Token", v, sizeof v) == NULL);
	/* second: mid's temporary credentials assume prod */
	CHECK_STR(form_field(r1, "RoleArn", v, sizeof v), "arn%3Aaws%3Aiam%3A%3A555566667777%3Arole%2Fprod");
	CHECK_STR(form_field(r1, "RoleSessionName", v, sizeof v), "prod-session");
	CHECK_STR(form_field(r1, "ExternalId", v, sizeof v), "xyz");
	CHECK_STR(form_field(r1, "DurationSeconds", v, sizeof v), "3600");
	CHECK(lb_header(r1, "Authorization", v, sizeof v) && strstr(v, "Credential=ASIAMID/"));
	CHECK_STR(lb_header(r1, "X-Amz-Security-Token", v, sizeof v), "MIDTOKEN");

	CHECK_I64(get("selfish", "us-west-2", &c, &err), 0);
	CHECK(lb_header(lb_req(&s, 2), "Authorization", v, sizeof v) && strstr(v, "Credential=AKIDSELF/"));

	setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
	CHECK_I64(get("envsrc", "us-west-2", &c, &err), 0); /* explicit profile: env keys only as the source */
	CHECK_STR(c.access_key_id, "ASIAPROD");
	CHECK(lb_header(lb_req(&s, 3), "Authorization", v, sizeof v) && strstr(v, "Credential=AKIDFROMENV/"));
	aws_credentials_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* The source of an assumed-role provider: fixed base keys. */
static int base_source(void *ctx, struct aws_credentials *out, struct buf *err)
{
	(void)ctx;
	(void)err;
	out->access_key_id = xstrdup("AKIDBASE");
	out->secret_access_key = xstrdup("BASESECRET");
	return 0;
}

static const char identity_222[] =
	"<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:sts::222233334444:assumed-role/mid/s</Arn>"
	"<UserId>AROA:s</UserId><Account>222233334444</Account></GetCallerIdentityResult></GetCallerIdentityResponse>";
static const char identity_666[] =
	"<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:sts::666677778888:assumed-role/x/s</Arn>"
	"<UserId>AROA:s</UserId><Account>666677778888</Account></GetCallerIdentityResult></GetCallerIdentityResponse>";

/* Issue 28 item 14: one account of --accounts (expect_account) is confirmed with STS
 * GetCallerIdentity asked with the assumed keys, once: an STS that names the role asked for
 * but hands out another account's keys is refused, and nothing is cached. */
static void test_assumed_account_confirmed(void)
{
	static const struct lb_response script[] = {
		{200, NULL, assume_a, 0, 0}, {200, NULL, identity_666, 0, 0}, /* lying STS: refused */
		{200, NULL, assume_a, 0, 0}, {200, NULL, identity_222, 0, 0}, /* honest: used, cached */
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 4) == 0);
	reset();
	setenv("AWS_ENDPOINT_URL_STS", s.url, 1);
	struct aws_credentials_options o = {0};
	o.http = &http;
	o.clock = clock_fn;
	o.session_name = "ebsmigrate-test";
	o.source = base_source;
	o.role_arn = "arn:aws:iam::222233334444:role/mid";
	o.expect_account = "222233334444";
	struct aws_credentials_provider p;
	aws_credentials_provider_init(&p, &o);
	const struct aws_credentials *c = NULL;
	struct buf err = BUF_INIT;
	char v[4096];
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_EAUTH);
	CHECK_STR(err.s, "role 'arn:aws:iam::222233334444:role/mid' gave credentials of account 666677778888 (sts "
			 "GetCallerIdentity), not 222233334444: not used");
	CHECK_I64(lb_count(&s), 2);
	CHECK_STR(form_field(lb_req(&s, 1), "Action", v, sizeof v), "GetCallerIdentity");
	/* asked with the assumed keys, not the base ones */
	CHECK(lb_header(lb_req(&s, 1), "Authorization", v, sizeof v) && strstr(v, "Credential=ASIAMID/"));
	CHECK_STR(lb_header(lb_req(&s, 1), "X-Amz-Security-Token", v, sizeof v), "MIDTOKEN");
	CHECK(strstr(err.s, "MIDSECRET") == NULL && strstr(err.s, "MIDTOKEN") == NULL);
	buf_reset(&err);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0); /* nothing was kept: assumed again */
	CHECK_STR(c->access_key_id, "ASIAMID");
	CHECK_STR(c->account_id, "222233334444");
	CHECK_I64(lb_count(&s), 4);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0); /* cached with the check: no call */
	CHECK_I64(lb_count(&s), 4);
	aws_credentials_provider_release(&p);
	lb_stop(&s);
	buf_release(&err);
}

static void test_web_identity(void)
{
	static const struct lb_response script[] = {
		{200, NULL, web_1, 0, 0},
		{200, NULL, web_2, 0, 0},
		{400, NULL, bad_jwt, 0, 0},
		{200, NULL, web_1, 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 4) == 0);
	reset();
	setenv("AWS_ENDPOINT_URL_STS", s.url, 1);
	/* static keys in the credentials file lose to web identity from the environment (botocore order) */
	write_file(".aws/credentials", "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = FILESECRET\n");
	write_file("jwt", "JWT-ONE.PAYLOAD.SIG\n");
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tmp_path("jwt"), 1);
	setenv("AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/irsa", 1);
	setenv("AWS_ROLE_SESSION_NAME", "pod-session", 1);
	struct aws_credentials_provider p;
	provider(&p, NULL, "us-west-2");
	const struct aws_credentials *c = NULL;
	struct buf err = BUF_INIT;
	char v[4096];
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK(c && strcmp(c->access_key_id, "ASIAWEB1") == 0);
	CHECK(c && strcmp(c->source, "web identity role 'arn:aws:iam::111122223333:role/irsa'") == 0);
	const struct lb_request *r = lb_req(&s, 0);
	CHECK(lb_header(r, "Authorization", v, sizeof v) == NULL);
	CHECK_STR(form_field(r, "Action", v, sizeof v), "AssumeRoleWithWebIdentity");
	CHECK_STR(form_field(r, "WebIdentityToken", v, sizeof v), "JWT-ONE.PAYLOAD.SIG");
	CHECK_STR(form_field(r, "RoleSessionName", v, sizeof v), "pod-session");
	CHECK_STR(form_field(r, "RoleArn", v, sizeof v), "arn%3Aaws%3Aiam%3A%3A111122223333%3Arole%2Firsa");

	/* cached until five minutes before expiry (11:00) */
	fake_now += 3600 - 301;
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK_I64(lb_count(&s), 1);
	/* then refreshed from the same link, with the token file read again */
	write_file("jwt", "JWT-TWO.PAYLOAD.SIG");
	fake_now += 2;
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK(c && strcmp(c->access_key_id, "ASIAWEB2") == 0);
	CHECK_I64(lb_count(&s), 2);
	CHECK_STR(form_field(lb_req(&s, 1), "WebIdentityToken", v, sizeof v), "JWT-TWO.PAYLOAD.SIG");
	/* a refresh that fails while the credentials are still valid keeps them */
	fake_now += 3600; /* 11:55:01, expiry 12:00 */
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK(c && strcmp(c->access_key_id, "ASIAWEB2") == 0);
	CHECK_I64(lb_count(&s), 3);
	CHECK_STR(err.s, "");
	/* once expired, the failure is reported, naming the source and not the token */
	fake_now += 400;
	lb_stop(&s);
	CHECK(lb_start(&s, script + 2, 1) == 0);
	setenv("AWS_ENDPOINT_URL_STS", s.url, 1);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_EAUTH);
	CHECK(c == NULL);
	CHECK(strncmp(err.s, "web identity (AWS_WEB_IDENTITY_TOKEN_FILE): sts AssumeRoleWithWebIdentity for "
			     "'arn:aws:iam::111122223333:role/irsa': InvalidIdentityToken: Token expired",
		      100) == 0);
	CHECK(strstr(err.s, "JWT-TWO") == NULL && strstr(err.s, "WEB2SECRET") == NULL);
	aws_credentials_provider_release(&p);
	lb_stop(&s);

	/* from the profile (web_identity_token_file + role_arn), with --profile: env vars ignored */
	CHECK(lb_start(&s, script + 3, 1) == 0);
	setenv("AWS_ENDPOINT_URL_STS", s.url, 1);
	write_file("jwt2", "PROFILE-JWT");
	char cfg[1024];
	snprintf(cfg, sizeof cfg, "[profile irsa]\nweb_identity_token_file = %s\nrole_arn = arn:aws:iam::1:role/p\n",
		 tmp_path("jwt2"));
	write_file(".aws/config", cfg);
	struct aws_credentials out = {0};
	buf_reset(&err);
	CHECK_I64(get("irsa", NULL, &out, &err), 0);
	CHECK_STR(out.access_key_id, "ASIAWEB1");
	r = lb_req(&s, 0);
	CHECK_STR(form_field(r, "WebIdentityToken", v, sizeof v), "PROFILE-JWT");
	CHECK_STR(form_field(r, "RoleArn", v, sizeof v), "arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fp");
	CHECK_STR(form_field(r, "RoleSessionName", v, sizeof v), "test-session");
	lb_stop(&s);

	/* a token file without a role; a missing token file */
	reset();
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tmp_path("jwt"), 1);
	buf_reset(&err);
	CHECK_I64(get(NULL, NULL, &out, &err), EM_EINPUT);
	CHECK_STR(err.s, "web identity (AWS_WEB_IDENTITY_TOKEN_FILE): a web identity token file is set but no role "
			 "(set AWS_ROLE_ARN or role_arn)");
	setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/x", 1);
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tmp_path("no-such-token"), 1);
	buf_reset(&err);
	CHECK_I64(get(NULL, NULL, &out, &err), EM_EAUTH);
	CHECK(strstr(err.s, "web identity (AWS_WEB_IDENTITY_TOKEN_FILE): cannot read '") == err.s);
	aws_credentials_release(&out);
	buf_release(&err);
}

static const char container_json[] = "{\"AccessKeyId\":\"ASIACONT\",\"SecretAccessKey\":\"CONTSECRET\","
				     "\"Token\":\"CONTTOKEN\",\"AccountId\":\"999988887777\","
				     "\"Expiration\":\"2026-01-15T11:00:00Z\"}";

static void test_container(void)
{
	static const struct lb_response script[] = {
		{200, "Content-Type: application/json\r\n", container_json, 0, 0},
		{500, NULL, "oops", 0, 0},
		{200, NULL, container_json, 0, 0},
		{200, NULL, container_json, 0, 0},
		{403, NULL, "{\"code\":\"AccessDenied\",\"message\":\"pod identity association missing\"}", 0, 0},
		{200, NULL, "{\"AccessKeyId\":\"A\"}", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 6) == 0);
	reset();
	char url[256], v[4096];
	snprintf(url, sizeof url, "%s/v1/credentials?x=1", s.url);
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", url, 1);
	write_file("eks-pod-identity-token", "pod-token-1\n");
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tmp_path("eks-pod-identity-token"), 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ignored-when-file-set", 1);
	struct aws_credentials_provider p;
	provider(&p, NULL, NULL);
	const struct aws_credentials *c = NULL;
	struct buf err = BUF_INIT;
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK(c && strcmp(c->access_key_id, "ASIACONT") == 0 && strcmp(c->session_token, "CONTTOKEN") == 0);
	CHECK(c && strcmp(c->account_id, "999988887777") == 0 && strcmp(c->source, "container credentials") == 0);
	const struct lb_request *r = lb_req(&s, 0);
	CHECK_STR(r->method, "GET");
	CHECK_STR(r->target, "/v1/credentials?x=1");
	CHECK_STR(lb_header(r, "Authorization", v, sizeof v), "pod-token-1");
	/* refresh re-reads the token file, and retries a 500 */
	write_file("eks-pod-identity-token", "pod-token-2");
	fake_now += 3600;
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK_I64(lb_count(&s), 3);
	CHECK_STR(lb_header(lb_req(&s, 1), "Authorization", v, sizeof v), "pod-token-2");
	CHECK_STR(lb_header(lb_req(&s, 2), "Authorization", v, sizeof v), "pod-token-2");
	aws_credentials_provider_release(&p);

	/* the token from the environment when there is no file */
	unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Basic abc", 1);
	struct aws_credentials out = {0};
	CHECK_I64(get(NULL, NULL, &out, &err), 0);
	CHECK_STR(lb_header(lb_req(&s, 3), "Authorization", v, sizeof v), "Basic abc");
	/* refusals and incomplete answers */
	CHECK_I64(get(NULL, NULL, &out, &err), EM_EAUTH);
	CHECK(strstr(err.s, "container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI 'http://127.0.0.1:") == err.s);
	CHECK(strstr(err.s, "/v1/credentials'): HTTP 403 AccessDenied: pod identity association missing") != NULL);
	CHECK(strstr(err.s, "x=1") == NULL && strstr(err.s, "Basic abc") == NULL);
	buf_reset(&err);
	CHECK_I64(get(NULL, NULL, &out, &err), EM_ESERVER);
	CHECK(strstr(err.s, "lacks AccessKeyId or SecretAccessKey") != NULL);
	lb_stop(&s);

	/* plain http only to local addresses */
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://10.0.0.1/creds", 1);
	buf_reset(&err);
	CHECK_I64(get(NULL, NULL, &out, &err), EM_EINPUT);
	CHECK(strstr(err.s, "AWS_CONTAINER_CREDENTIALS_FULL_URI must be https") != NULL);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "bad\r\nX-Injected: 1", 1);
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/creds", 1);
	buf_reset(&err);
	CHECK_I64(get(NULL, NULL, &out, &err), EM_EINPUT);
	CHECK(strstr(err.s, "contains a line break") != NULL);
	aws_credentials_release(&out);
	buf_release(&err);
}

static const char imds_json[] = "{\"Code\":\"Success\",\"LastUpdated\":\"2026-01-15T09:55:00Z\",\"Type\":\"AWS-HMAC\","
				"\"AccessKeyId\":\"ASIAIMDS\",\"SecretAccessKey\":\"IMDSSECRET\",\"Token\":\"IMDSTOKEN\","
				"\"Expiration\":\"2026-01-15T16:00:00Z\"}";

static const char imds_json2[] = "{\"Code\":\"Success\",\"AccessKeyId\":\"ASIAIMDS2\",\"SecretAccessKey\":\"S2\","
				 "\"Token\":\"T2\",\"Expiration\":\"2026-01-15T22:00:00Z\"}";

static void test_imds(void)
{
	static const struct lb_response script[] = {
		{200, NULL, "IMDSV2SESSION", 0, 0},
		{200, NULL, "node-role\n", 0, 0},
		{200, NULL, imds_json, 0, 0},
		{200, NULL, "IMDSV2SESSION-B", 0, 0},
		{200, NULL, "node-role", 0, 0},
		{200, NULL, imds_json2, 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 6) == 0);
	reset();
	unsetenv("AWS_EC2_METADATA_DISABLED");
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", s.url, 1);
	struct aws_credentials_provider p;
	provider(&p, NULL, NULL);
	const struct aws_credentials *c = NULL;
	struct buf err = BUF_INIT;
	char v[4096];
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK(c && strcmp(c->access_key_id, "ASIAIMDS") == 0 && strcmp(c->session_token, "IMDSTOKEN") == 0);
	CHECK(c && strcmp(c->source, "instance metadata (role 'node-role')") == 0);
	CHECK_I64(lb_count(&s), 3);
	const struct lb_request *r0 = lb_req(&s, 0), *r1 = lb_req(&s, 1), *r2 = lb_req(&s, 2);
	CHECK_STR(r0->method, "PUT");
	CHECK_STR(r0->target, "/latest/api/token");
	CHECK_STR(lb_header(r0, "X-aws-ec2-metadata-token-ttl-seconds", v, sizeof v), "21600");
	CHECK(lb_header(r0, "X-aws-ec2-metadata-token", v, sizeof v) == NULL);
	CHECK_STR(r1->method, "GET");
	CHECK_STR(r1->target, "/latest/meta-data/iam/security-credentials/");
	CHECK_STR(lb_header(r1, "X-aws-ec2-metadata-token", v, sizeof v), "IMDSV2SESSION");
	CHECK_STR(r2->target, "/latest/meta-data/iam/security-credentials/node-role");
	CHECK_STR(lb_header(r2, "X-aws-ec2-metadata-token", v, sizeof v), "IMDSV2SESSION");
	/* cached: nothing new until 15:55 */
	fake_now += 5 * 3600 + 54 * 60;
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK_I64(lb_count(&s), 3);
	fake_now += 120;
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK(c && strcmp(c->access_key_id, "ASIAIMDS2") == 0);
	CHECK_I64(lb_count(&s), 6);
	CHECK_STR(lb_header(lb_req(&s, 5), "X-aws-ec2-metadata-token", v, sizeof v), "IMDSV2SESSION-B");
	/* expire() forces a fetch: the script is exhausted (599) and there is nothing valid to keep */
	aws_credentials_provider_expire(&p);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_ESERVER);
	CHECK(strstr(err.s, "the token request answered HTTP 599") != NULL);
	aws_credentials_provider_release(&p);
	lb_stop(&s);
	buf_release(&err);
}

static void test_imds_fallbacks(void)
{
	static const struct lb_response v1[] = {
		{403, NULL, "", 0, 0},
		{200, NULL, "r", 0, 0},
		{200, NULL, imds_json, 0, 0},
		{405, NULL, "", 0, 0},
		{200, NULL, "TOK", 0, 0},
		{404, NULL, "", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, v1, 6) == 0);
	reset();
	unsetenv("AWS_EC2_METADATA_DISABLED");
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", s.url, 1);
	struct aws_credentials c = {0};
	struct buf err = BUF_INIT;
	char v[256];
	/* IMDSv1 when the token request is refused */
	CHECK_I64(get(NULL, NULL, &c, &err), 0);
	CHECK_STR(c.access_key_id, "ASIAIMDS");
	CHECK(lb_header(lb_req(&s, 1), "X-aws-ec2-metadata-token", v, sizeof v) == NULL);
	/* ...unless IMDSv1 is disabled */
	setenv("AWS_EC2_METADATA_V1_DISABLED", "true", 1);
	CHECK_I64(get(NULL, NULL, &c, &err), EM_EAUTH);
	CHECK(strstr(err.s, "AWS_EC2_METADATA_V1_DISABLED forbids IMDSv1") != NULL);
	/* no instance profile: the chain ends with "no credentials" */
	buf_reset(&err);
	CHECK_I64(get(NULL, NULL, &c, &err), EM_EAUTH);
	CHECK(strncmp(err.s, "no aws credentials found", 24) == 0);
	CHECK_I64(lb_count(&s), 6);
	lb_stop(&s);
	/* disabled: not even asked */
	CHECK(lb_start(&s, v1, 6) == 0);
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", s.url, 1);
	setenv("AWS_EC2_METADATA_DISABLED", "TRUE", 1);
	CHECK_I64(get(NULL, NULL, &c, &err), EM_EAUTH);
	CHECK_I64(lb_count(&s), 0);
	lb_stop(&s);
	/* nobody listening: not on EC2 */
	unsetenv("AWS_EC2_METADATA_DISABLED");
	char dead[64];
	snprintf(dead, sizeof dead, "http://127.0.0.1:%d", lb_dead_port());
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", dead, 1);
	buf_reset(&err);
	CHECK_I64(get(NULL, NULL, &c, &err), EM_EAUTH);
	CHECK(strncmp(err.s, "no aws credentials found", 24) == 0);
	aws_credentials_release(&c);
	buf_release(&err);
}

static void test_region(void)
{
	reset();
	char *r = NULL;
	struct buf err = BUF_INIT;
	write_file(".aws/config", "[default]\nregion = eu-west-1\n[profile tokyo]\nregion = ap-northeast-1\n");
	CHECK_I64(aws_region_resolve(&r, NULL, NULL, &err), 0);
	CHECK_STR(r, "eu-west-1");
	free(r);
	CHECK_I64(aws_region_resolve(&r, NULL, "tokyo", &err), 0);
	CHECK_STR(r, "ap-northeast-1");
	free(r);
	setenv("AWS_PROFILE", "tokyo", 1);
	CHECK_I64(aws_region_resolve(&r, NULL, NULL, &err), 0);
	CHECK_STR(r, "ap-northeast-1");
	free(r);
	setenv("AWS_DEFAULT_REGION", "us-east-2", 1);
	CHECK_I64(aws_region_resolve(&r, NULL, NULL, &err), 0);
	CHECK_STR(r, "us-east-2");
	free(r);
	setenv("AWS_REGION", "us-west-1", 1);
	CHECK_I64(aws_region_resolve(&r, NULL, NULL, &err), 0);
	CHECK_STR(r, "us-west-1");
	free(r);
	CHECK_I64(aws_region_resolve(&r, "sa-east-1", NULL, &err), 0);
	CHECK_STR(r, "sa-east-1");
	free(r);
	reset();
	CHECK_I64(aws_region_resolve(&r, NULL, "nothing", &err), EM_ENOTFOUND);
	CHECK(r == NULL);
	CHECK_STR(err.s, "no aws region: pass --region, set AWS_REGION, or set region in profile 'nothing' "
			 "(~/.aws/config)");
	buf_release(&err);
}

static void test_copy(void)
{
	struct aws_credentials a = {0}, b = {0};
	a.access_key_id = xstrdup("A");
	a.secret_access_key = xstrdup("S");
	a.expiration = 42;
	a.source = xstrdup("x");
	b.session_token = xstrdup("old");
	aws_credentials_copy(&b, &a);
	CHECK_STR(b.access_key_id, "A");
	CHECK_STR(b.secret_access_key, "S");
	CHECK(b.session_token == NULL);
	CHECK_I64(b.expiration, 42);
	CHECK(b.secret_access_key != a.secret_access_key);
	aws_credentials_release(&a);
	aws_credentials_release(&b);
	CHECK(b.access_key_id == NULL && b.expiration == 0);
}

static void cleanup(void)
{
	static const char *const files[] = {
		".aws/credentials", ".aws/config", "alt-creds", "alt-config", "jwt", "jwt2", "eks-pod-identity-token", NULL,
	};
	for (const char *const *f = files; *f; f++)
		unlink(tmp_path(*f));
	rmdir(tmp_path(".aws"));
	rmdir(tmp);
}

/* Which failures are "no source" (the caller may do without AWS) and which are a configured
 * source that failed (an error naming the source and the service's code). */
static void test_no_source_or_failed(void)
{
	struct aws_credentials_provider p;
	const struct aws_credentials *c = NULL;
	struct buf err = BUF_INIT;
	char url[256];

	/* nothing configured at all, IMDS off */
	reset();
	provider(&p, NULL, NULL);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_EAUTH);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 1);
	aws_credentials_provider_release(&p);

	/* IMDS: nobody listening (connection refused) is "not on EC2" */
	unsetenv("AWS_EC2_METADATA_DISABLED");
	snprintf(url, sizeof url, "http://127.0.0.1:%d", lb_dead_port());
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
	provider(&p, NULL, NULL);
	buf_reset(&err);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_EAUTH);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 1);
	aws_credentials_provider_release(&p);

	/* IMDS: a timeout before any answer (the hop limit) is "not on EC2" too */
	static const struct lb_response slow[] = {{200, NULL, "TOKEN", 1600, 0}};
	struct lb_server s;
	CHECK(lb_start(&s, slow, 1) == 0);
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", s.url, 1);
	setenv("AWS_METADATA_SERVICE_TIMEOUT", "1", 1);
	provider(&p, NULL, NULL);
	buf_reset(&err);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_EAUTH);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 1);
	aws_credentials_provider_release(&p);
	lb_stop(&s);

	/* IMDS: something answers at the address, but the connection closes without an answer */
	static const struct lb_response dropped[] = {{0, NULL, NULL, 0, 0}};
	CHECK(lb_start(&s, dropped, 1) == 0);
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", s.url, 1);
	provider(&p, NULL, NULL);
	buf_reset(&err);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_ENET);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 0);
	CHECK(strncmp(err.s, "instance metadata (IMDS) at http://127.0.0.1:", 45) == 0);
	CHECK(strstr(err.s, "the token request got no usable answer") != NULL);
	aws_credentials_provider_release(&p);
	lb_stop(&s);

	/* IMDS: answers, but the credentials are not JSON; then a 401 listing the role */
	static const struct lb_response garbage[] = {
		{200, NULL, "TOKEN", 0, 0},
		{200, NULL, "node-role", 0, 0},
		{200, NULL, "{\"Code\":\"Success\",\"AccessKeyId\":\"ASIA", 0, 0},
		{200, NULL, "TOKEN", 0, 0},
		{401, NULL, "", 0, 0},
	};
	CHECK(lb_start(&s, garbage, 5) == 0);
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", s.url, 1);
	provider(&p, NULL, NULL);
	buf_reset(&err);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_ESERVER);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 0);
	CHECK(strstr(err.s, "instance metadata (IMDS) at http://127.0.0.1:") == err.s);
	CHECK(strstr(err.s, ": credentials for role 'node-role': the answer is not a JSON object") != NULL);
	buf_reset(&err);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_EAUTH);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 0);
	CHECK(strstr(err.s, "listing the instance profile role answered HTTP 401") != NULL);
	aws_credentials_provider_release(&p);
	lb_stop(&s);

	/* the container endpoint refuses the token: its code and message, the variable named */
	reset();
	static const struct lb_response refused[] = {
		{401, NULL, "{\"Code\":\"AccessDeniedException\",\"Message\":\"The authorization token is not valid\"}", 0, 0},
	};
	CHECK(lb_start(&s, refused, 1) == 0);
	snprintf(url, sizeof url, "%s/v1/credentials", s.url);
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", url, 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "wrong-token", 1);
	provider(&p, NULL, NULL);
	buf_reset(&err);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), EM_EAUTH);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 0);
	char want[512];
	snprintf(want, sizeof want,
		 "container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI '%s'): HTTP 401 AccessDeniedException: "
		 "The authorization token is not valid",
		 url);
	CHECK_STR(err.s, want);
	CHECK(strstr(err.s, "wrong-token") == NULL);
	aws_credentials_provider_release(&p);
	lb_stop(&s);

	/* a plain-http container URI to a remote host is a failed source, not "none" */
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://10.1.2.3/creds", 1);
	provider(&p, NULL, NULL);
	buf_reset(&err);
	CHECK(aws_credentials_provider_get(&p, &c, &err) < 0);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 0);
	CHECK(strstr(err.s, "container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI 'http://10.1.2.3/creds')") ==
	      err.s);
	aws_credentials_provider_release(&p);

	/* a success clears it */
	reset();
	provider(&p, NULL, NULL);
	CHECK(aws_credentials_provider_get(&p, &c, &err) < 0);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 1);
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
	CHECK_I64(aws_credentials_provider_get(&p, &c, &err), 0);
	CHECK_I64(aws_credentials_provider_found_no_source(&p), 0);
	aws_credentials_provider_release(&p);
	buf_release(&err);
}

int main(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/ebsmigrate-creds-XXXXXX");
	if (!mkdtemp(tmp))
		return tap_skip_all("cannot create a temporary directory");
	mkdir(tmp_path(".aws"), 0700);
	struct http_options o = {0};
	o.clock_ms = fake_clock;
	o.sleep_ms = fake_sleep;
	o.inject_ctx = &hf;
	struct buf err = BUF_INIT;
	if (http_client_init(&http, &o, &err) != 0)
		return tap_skip_all(err.s);
	buf_release(&err);

	test_copy();
	test_env();
	test_shared_files();
	test_unsupported_profiles();
	test_assume_role_chain();
	test_assumed_account_confirmed();
	test_web_identity();
	test_container();
	test_imds();
	test_imds_fallbacks();
	test_no_source_or_failed();
	test_region();

	http_client_release(&http);
	cleanup();
	return tap_done();
}
