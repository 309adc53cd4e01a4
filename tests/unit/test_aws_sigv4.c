/* test_aws_sigv4.c - SigV4 against every case of AWS's published signing test suite
 * (../shared/testdata/aws-signing-test-suite/v4, or $EM_SIGV4_SUITE; not copied into the project,
 * see docs/TESTING.md): canonical request, string to sign, signature and signed request, for
 * header and for query signing; plus the conveniences and the project's own vectors (a repeated
 * query key, header whitespace), which run without the suite. Skips (77) with the reason when
 * the suite is absent, after everything else. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/aws_credential_chain.h"
#include "ebsmigrate/aws_sigv4.h"
#include "ebsmigrate/common.h"
#include "tap.h"

struct raw_request {
	char *method, *target, *version;
	struct buf head;   /* header lines exactly as in request.txt, each ending "\n" */
	struct http_headers headers; /* unfolded */
	struct buf body;
	char *host;
};

static void raw_release(struct raw_request *r)
{
	free(r->method);
	free(r->target);
	free(r->version);
	free(r->host);
	buf_release(&r->head);
	buf_release(&r->body);
	http_headers_release(&r->headers);
}

/* Parses a raw HTTP request: request line, headers (obs-fold continuation lines joined to the
 * previous value with the line break replaced by a space), a blank line, the body. */
static int parse_request(const char *text, struct raw_request *r)
{
	memset(r, 0, sizeof *r);
	buf_init(&r->head);
	buf_init(&r->body);
	const char *sep = strstr(text, "\n\n");
	size_t head_len = sep ? (size_t)(sep - text) + 1 : strlen(text);
	if (sep)
		buf_adds(&r->body, sep + 2);
	const char *eol = memchr(text, '\n', head_len);
	if (!eol)
		eol = text + head_len;
	const char *sp1 = memchr(text, ' ', (size_t)(eol - text));
	const char *sp2 = NULL;
	for (const char *q = eol - 1; sp1 && q > sp1; q--)
		if (*q == ' ') {
			sp2 = q;
			break;
		}
	if (!sp1 || !sp2)
		return -1;
	r->method = xstrndup(text, (size_t)(sp1 - text));
	r->target = xstrndup(sp1 + 1, (size_t)(sp2 - sp1 - 1));
	r->version = xstrndup(sp2 + 1, (size_t)(eol - sp2 - 1));
	const char *p = eol < text + head_len ? eol + 1 : eol;
	const char *end = text + head_len;
	buf_add(&r->head, p, (size_t)(end - p));
	if (r->head.len && r->head.s[r->head.len - 1] != '\n')
		buf_addc(&r->head, '\n');
	while (p < end) {
		const char *le = memchr(p, '\n', (size_t)(end - p));
		if (!le)
			le = end;
		if ((*p == ' ' || *p == '\t') && r->headers.n) {
			struct http_header *last = &r->headers.v[r->headers.n - 1];
			struct buf v = BUF_INIT;
			buf_adds(&v, last->value);
			buf_addc(&v, ' ');
			buf_add(&v, p, (size_t)(le - p));
			free(last->value);
			last->value = buf_detach(&v);
		} else if (le > p) {
			const char *colon = memchr(p, ':', (size_t)(le - p));
			if (!colon)
				return -1;
			char *name = xstrndup(p, (size_t)(colon - p));
			char *value = xstrndup(colon + 1, (size_t)(le - colon - 1));
			http_headers_add(&r->headers, name, value);
			free(name);
			free(value);
		}
		p = le + 1;
	}
	const char *host = http_headers_get(&r->headers, "Host");
	if (!host)
		return -1;
	r->host = xstrdup(host);
	return 0;
}

static char *slurp(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	struct buf b = BUF_INIT, err = BUF_INIT;
	if (em_read_file(path, &b, &err) != 0) {
		printf("# %s\n", err.s);
		buf_release(&err);
		buf_release(&b);
		return NULL;
	}
	buf_release(&err);
	return buf_detach(&b);
}

static int same(const char *what, const char *name, const char *got, const char *want)
{
	int ok = got && want && strcmp(got, want) == 0;
	if (!ok)
		printf("# %s: %s differs\n#   got:  [%s]\n#   want: [%s]\n", name, what, got ? got : "(null)",
		       want ? want : "(null)");
	return ok;
}

/* Runs one case; returns 1 when all eight comparisons hold. */
static int run_case(const char *dir, const char *name)
{
	char *ctx_text = slurp(dir, "context.json"), *req_text = slurp(dir, "request.txt");
	char *want[8];
	static const char *files[8] = {
		"header-canonical-request.txt", "header-string-to-sign.txt", "header-signature.txt",
		"header-signed-request.txt", "query-canonical-request.txt", "query-string-to-sign.txt",
		"query-signature.txt", "query-signed-request.txt",
	};
	for (int i = 0; i < 8; i++)
		want[i] = slurp(dir, files[i]);
	int all = ctx_text && req_text;
	for (int i = 0; i < 8; i++)
		all = all && want[i];
	CHECK(all);
	if (!all)
		goto out;

	cJSON *ctx = cJSON_Parse(ctx_text);
	CHECK(ctx != NULL);
	cJSON *cred = cJSON_GetObjectItemCaseSensitive(ctx, "credentials");
	struct aws_credentials creds = {0};
	creds.access_key_id = xstrdup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cred, "access_key_id")));
	creds.secret_access_key =
		xstrdup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cred, "secret_access_key")));
	creds.session_token = xstrdup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cred, "token")));
	struct aws_sigv4_params p = {0};
	p.creds = &creds;
	p.region = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctx, "region"));
	p.service = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctx, "service"));
	p.normalize_path = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ctx, "normalize"));
	p.content_sha256_header = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ctx, "sign_body"));
	p.omit_session_token = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ctx, "omit_session_token"));
	p.expires = (long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ctx, "expiration_in_seconds"));
	time_t ts = 0;
	CHECK(em_parse_time(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctx, "timestamp")), &ts) == 0);
	p.now = ts;

	struct raw_request rr;
	int parsed = parse_request(req_text, &rr) == 0;
	CHECK(parsed);
	int ok = parsed;
	if (parsed) {
		struct buf url = BUF_INIT, err = BUF_INIT, signed_req = BUF_INIT;
		buf_addf(&url, "https://%s%s", rr.host, rr.target);
		struct aws_sigv4_request req = {rr.method, url.s, &rr.headers, rr.body.s, rr.body.len};

		struct aws_sigv4_signature s;
		aws_sigv4_signature_init(&s);
		int rc = aws_sigv4_sign(&s, &req, &p, &err);
		ok &= rc == 0;
		if (rc)
			printf("# %s: header signing failed: %s\n", name, err.s);
		ok &= same("header canonical request", name, s.canonical_request.s, want[0]);
		ok &= same("header string to sign", name, s.string_to_sign.s, want[1]);
		ok &= same("header signature", name, s.signature, want[2]);
		buf_addf(&signed_req, "%s %s %s\n%s", rr.method, rr.target, rr.version, rr.head.s);
		for (size_t i = 0; i < s.headers.n; i++)
			buf_addf(&signed_req, "%s:%s\n", s.headers.v[i].name, s.headers.v[i].value);
		buf_addf(&signed_req, "\n%s", rr.body.s);
		ok &= same("header signed request", name, signed_req.s, want[3]);
		aws_sigv4_signature_release(&s);

		aws_sigv4_signature_init(&s);
		rc = aws_sigv4_presign(&s, &req, &p, &err);
		ok &= rc == 0;
		if (rc)
			printf("# %s: query signing failed: %s\n", name, err.s);
		ok &= same("query canonical request", name, s.canonical_request.s, want[4]);
		ok &= same("query string to sign", name, s.string_to_sign.s, want[5]);
		ok &= same("query signature", name, s.signature, want[6]);
		buf_reset(&signed_req);
		buf_addf(&signed_req, "%s %s%c%s %s\n%s\n%s", rr.method, rr.target, strchr(rr.target, '?') ? '&' : '?',
			 s.query.s, rr.version, rr.head.s, rr.body.s);
		ok &= same("query signed request", name, signed_req.s, want[7]);
		aws_sigv4_signature_release(&s);
		buf_release(&url);
		buf_release(&err);
		buf_release(&signed_req);
	}
	raw_release(&rr);
	aws_credentials_release(&creds);
	cJSON_Delete(ctx);
	all = ok;
out:
	free(ctx_text);
	free(req_text);
	for (int i = 0; i < 8; i++)
		free(want[i]);
	return all;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_suite(const char *suite, int *n_cases)
{
	DIR *d = opendir(suite);
	if (!d)
		return -1;
	char **names = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s/context.json", suite, e->d_name);
		if (stat(path, &st) != 0)
			continue;
		XGROW(names, n, alloc);
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, name_cmp);
	int passed = 0;
	for (size_t i = 0; i < n; i++) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/%s", suite, names[i]);
		int ok = run_case(dir, names[i]);
		tap_check(ok, names[i], __FILE__, __LINE__);
		passed += ok;
		free(names[i]);
	}
	free(names);
	*n_cases = (int)n;
	return passed;
}

/* Where the signing test suite is. The data stays outside the project (the owner's instruction,
 * ../shared/testdata/aws-signing-test-suite/README.md; docs/TESTING.md): EM_SIGV4_SUITE names the
 * v4 folder itself; else EM_SHARED_DIR (ctest sets it to SOURCE/../shared) holds testdata/; else
 * ../shared beside the source tree. NULL with `why` filled when the folder is absent. */
static const char *suite_dir(char *why, size_t why_size)
{
	static char path[4096];
	struct stat st;
	const char *suite = getenv("EM_SIGV4_SUITE");
	if (suite && *suite) {
		snprintf(path, sizeof path, "%s", suite);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return path;
		snprintf(why, why_size, "EM_SIGV4_SUITE='%s' is not a directory", suite);
		return NULL;
	}
	const char *shared = getenv("EM_SHARED_DIR");
	if (shared && *shared) {
		snprintf(path, sizeof path, "%s/testdata/aws-signing-test-suite/v4", shared);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return path;
	}
	snprintf(path, sizeof path, "%s", tap_src_path("../shared/testdata/aws-signing-test-suite/v4"));
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return path;
	if (shared && *shared)
		snprintf(why, why_size, "EM_SIGV4_SUITE is unset and neither '%s/testdata/aws-signing-test-suite/v4' "
			 "nor '%s' exists", shared, path);
	else
		snprintf(why, why_size, "EM_SIGV4_SUITE and EM_SHARED_DIR are unset and '%s' does not exist", path);
	return NULL;
}

/* The lookup honours EM_SIGV4_SUITE and says why when the folder is absent. */
static void test_suite_lookup(void)
{
	char why[8192] = "";
	char tmpl[] = "/tmp/sigv4-suite-XXXXXX";
	char *dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	if (!dir)
		return;
	char *saved = getenv("EM_SIGV4_SUITE") ? xstrdup(getenv("EM_SIGV4_SUITE")) : NULL;
	setenv("EM_SIGV4_SUITE", dir, 1);
	const char *got = suite_dir(why, sizeof why);
	CHECK_STR(got ? got : "(null)", dir);

	char missing[sizeof tmpl + 16];
	snprintf(missing, sizeof missing, "%s/absent", dir);
	setenv("EM_SIGV4_SUITE", missing, 1);
	CHECK(suite_dir(why, sizeof why) == NULL);
	char want[sizeof missing + 64];
	snprintf(want, sizeof want, "EM_SIGV4_SUITE='%s' is not a directory", missing);
	CHECK_STR(why, want);

	if (saved)
		setenv("EM_SIGV4_SUITE", saved, 1);
	else
		unsetenv("EM_SIGV4_SUITE");
	free(saved);
	rmdir(dir);
}

/* The worked example of AWS's SigV4 documentation (IAM ListUsers). */
static void test_doc_example(void)
{
	struct aws_credentials creds = {0};
	creds.access_key_id = "AKIDEXAMPLE";
	creds.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	struct http_headers h = HTTP_HEADERS_INIT;
	http_headers_add(&h, "Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
	struct aws_sigv4_params p = {&creds, "us-east-1", "iam", 1440938160, 1, 0, 0, 0};
	struct aws_sigv4_request req = {"GET", "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08", &h,
					NULL, 0};
	struct aws_sigv4_signature s;
	aws_sigv4_signature_init(&s);
	struct buf err = BUF_INIT;
	CHECK_I64(aws_sigv4_sign(&s, &req, &p, &err), 0);
	CHECK_STR(s.canonical_request.s, "GET\n/\nAction=ListUsers&Version=2010-05-08\n"
					 "content-type:application/x-www-form-urlencoded; charset=utf-8\n"
					 "host:iam.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
					 "content-type;host;x-amz-date\n"
					 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	CHECK_STR(s.signature, "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
	aws_sigv4_signature_release(&s);
	http_headers_release(&h);
	buf_release(&err);
}

/* Host from the URL when there is no Host header, as curl will send it. */
static void test_host_from_url(void)
{
	struct aws_credentials creds = {0};
	creds.access_key_id = "AKID";
	creds.secret_access_key = "SECRET";
	struct aws_sigv4_params p = {&creds, "us-east-1", "ec2", 1440938160, 1, 0, 0, 60};
	struct {
		const char *url, *host;
	} cases[] = {
		{"http://127.0.0.1:8080/x", "host:127.0.0.1:8080\n"},
		{"https://ec2.us-east-1.amazonaws.com:443/", "host:ec2.us-east-1.amazonaws.com\n"},
		{"http://user@h:80", "host:h\n"},
		{"https://[::1]:8443/", "host:[::1]:8443\n"},
		{"https://[::1]:443/", "host:[::1]\n"},
	};
	struct buf err = BUF_INIT;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct aws_sigv4_request req = {"GET", cases[i].url, NULL, NULL, 0};
		struct aws_sigv4_signature s;
		aws_sigv4_signature_init(&s);
		CHECK_I64(aws_sigv4_sign(&s, &req, &p, &err), 0);
		CHECK(strstr(s.canonical_request.s, cases[i].host) != NULL);
		aws_sigv4_signature_release(&s);
	}
	struct aws_sigv4_request bad = {"GET", "not a url", NULL, NULL, 0};
	struct aws_sigv4_signature s;
	aws_sigv4_signature_init(&s);
	CHECK_I64(aws_sigv4_sign(&s, &bad, &p, &err), EM_EINPUT);
	creds.secret_access_key = NULL;
	struct aws_sigv4_request ok = {"GET", "https://h/", NULL, NULL, 0};
	buf_reset(&err);
	CHECK_I64(aws_sigv4_sign(&s, &ok, &p, &err), EM_EAUTH);
	creds.secret_access_key = "SECRET";
	p.expires = 0;
	CHECK_I64(aws_sigv4_presign(&s, &ok, &p, &err), EM_EINPUT);
	aws_sigv4_signature_release(&s);
	buf_release(&err);
}

/* Header signing of one request against an expected canonical request and signature. */
static void check_header_signing(const char *url, const char *const *headers, const char *region,
				 const char *service, const char *want_canonical, const char *want_signature)
{
	struct aws_credentials creds = {0};
	creds.access_key_id = "AKIDEXAMPLE";
	creds.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	struct http_headers h = HTTP_HEADERS_INIT;
	for (size_t i = 0; headers && headers[i]; i += 2)
		http_headers_add(&h, headers[i], headers[i + 1]);
	struct aws_sigv4_params p = {&creds, region, service, 1440938160, 1, 0, 0, 0};
	struct aws_sigv4_request req = {"GET", url, &h, NULL, 0};
	struct aws_sigv4_signature s;
	aws_sigv4_signature_init(&s);
	struct buf err = BUF_INIT;
	printf("# %s\n", url);
	CHECK_I64(aws_sigv4_sign(&s, &req, &p, &err), 0);
	CHECK_STR(s.canonical_request.s, want_canonical);
	CHECK_STR(s.signature, want_signature);
	aws_sigv4_signature_release(&s);
	http_headers_release(&h);
	buf_release(&err);
}

/* The project's own vectors for what the published suite does not have (query pairs sorted by
 * key, then value: a repeated key in either order) or has only there (header values trimmed and
 * their inner whitespace runs collapsed), so a checkout without ../shared still checks both.
 * The expected canonical requests and signatures were computed independently with botocore's
 * SigV4Auth (Debian python3-botocore 1.29.27), not taken from the suite. */
static void test_own_vectors(void)
{
	static const char repeated_cr[] = "GET\n/\nParam1=value1&Param1=value2\n"
					  "host:ec2.us-east-1.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
					  "host;x-amz-date\n"
					  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	static const char repeated_sig[] = "8485af65cc126b5e48c6fc6fc1c546847badd51d4b6e14253a157a2bbca6004d";
	check_header_signing("https://ec2.us-east-1.amazonaws.com/?Param1=value2&Param1=value1", NULL, "us-east-1",
			     "ec2", repeated_cr, repeated_sig);
	check_header_signing("https://ec2.us-east-1.amazonaws.com/?Param1=value1&Param1=value2", NULL, "us-east-1",
			     "ec2", repeated_cr, repeated_sig);
	check_header_signing(
		"https://ec2.us-east-1.amazonaws.com/?Filter.1.Value=b&Action=DescribeVolumes&Filter.1.Value=vol%2F2"
		"&Filter.1.Value=a",
		NULL, "us-east-1", "ec2",
		"GET\n/\nAction=DescribeVolumes&Filter.1.Value=a&Filter.1.Value=b&Filter.1.Value=vol%2F2\n"
		"host:ec2.us-east-1.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"1d66192648147ba878be2e063cbf70a58907f31dc4d0c8b1ad9f0219999745ae");
	static const char *const trim_headers[] = {
		"X-Amz-Target", "   GraniteServiceVersion20100801.GetMetricData  ", "My-Header2", " \t a   b \t\t c  ", NULL,
	};
	check_header_signing("https://monitoring.us-east-1.amazonaws.com/", trim_headers, "us-east-1", "monitoring",
			     "GET\n/\n\nhost:monitoring.us-east-1.amazonaws.com\nmy-header2:a b c\n"
			     "x-amz-date:20150830T123600Z\nx-amz-target:GraniteServiceVersion20100801.GetMetricData\n\n"
			     "host;my-header2;x-amz-date;x-amz-target\n"
			     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			     "24b5d09e5a38524e6624ff6fa32872f2a3bf51a68e4accd174d6feb6a7a4fe71");

	/* Query signing sorts the same way, its own parameters among the request's. */
	struct aws_credentials creds = {0};
	creds.access_key_id = "AKIDEXAMPLE";
	creds.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	struct aws_sigv4_params p = {&creds, "us-east-1", "ec2", 1440938160, 1, 0, 0, 60};
	struct aws_sigv4_request req = {"GET", "https://ec2.us-east-1.amazonaws.com/?Param1=value2&Param1=value1",
					NULL, NULL, 0};
	struct aws_sigv4_signature s;
	aws_sigv4_signature_init(&s);
	struct buf err = BUF_INIT;
	CHECK_I64(aws_sigv4_presign(&s, &req, &p, &err), 0);
	CHECK(strstr(s.canonical_request.s, "\n/\nParam1=value1&Param1=value2&X-Amz-Algorithm=AWS4-HMAC-SHA256&") != NULL);
	aws_sigv4_signature_release(&s);
	buf_release(&err);
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* aws_sigv4_sign_http replaces an earlier signature; presign_url composes the URL. */
static void test_conveniences(void)
{
	struct aws_credentials creds = {0};
	creds.access_key_id = "AKIDEXAMPLE";
	creds.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	creds.session_token = "TOKEN/+=";
	struct aws_sigv4_params p = {&creds, "us-east-1", "ec2", 1440938160, 1, 0, 0, 0};
	struct http_request rq;
	http_request_init(&rq, "POST", "https://ec2.us-east-1.amazonaws.com/");
	http_headers_add(&rq.headers, "Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
	buf_adds(&rq.body, "Action=DescribeVolumes&Version=2016-11-15");
	struct buf err = BUF_INIT;
	CHECK_I64(aws_sigv4_sign_http(&rq, &p, &err), 0);
	char *first = xstrdup(http_headers_get(&rq.headers, "Authorization"));
	p.now += 60;
	CHECK_I64(aws_sigv4_sign_http(&rq, &p, &err), 0);
	size_t n_auth = 0, n_date = 0, n_tok = 0;
	for (size_t i = 0; i < rq.headers.n; i++) {
		n_auth += strcasecmp(rq.headers.v[i].name, "authorization") == 0;
		n_date += strcasecmp(rq.headers.v[i].name, "x-amz-date") == 0;
		n_tok += strcasecmp(rq.headers.v[i].name, "x-amz-security-token") == 0;
	}
	CHECK_I64(n_auth, 1);
	CHECK_I64(n_date, 1);
	CHECK_I64(n_tok, 1);
	CHECK_STR(http_headers_get(&rq.headers, "X-Amz-Date"), "20150830T123700Z");
	CHECK_STR(http_headers_get(&rq.headers, "X-Amz-Security-Token"), "TOKEN/+=");
	const char *auth = http_headers_get(&rq.headers, "Authorization");
	CHECK(auth && strcmp(auth, first) != 0);
	CHECK(auth && strstr(auth, "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,") != NULL);
	CHECK(auth && strstr(auth, "Credential=AKIDEXAMPLE/20150830/us-east-1/ec2/aws4_request") != NULL);
	free(first);
	http_request_release(&rq);

	struct buf url = BUF_INIT;
	p.expires = 60;
	struct aws_sigv4_request req = {"GET", "https://sts.amazonaws.com/?Action=GetCallerIdentity", NULL, NULL, 0};
	CHECK_I64(aws_sigv4_presign_url(&url, &req, &p, &err), 0);
	CHECK(starts(url.s, "https://sts.amazonaws.com/?Action=GetCallerIdentity&X-Amz-Algorithm=AWS4-HMAC-SHA256&"));
	CHECK(strstr(url.s, "&X-Amz-Security-Token=TOKEN%2F%2B%3D&X-Amz-Signature=") != NULL);
	buf_reset(&url);
	struct aws_sigv4_request req2 = {"GET", "https://sts.amazonaws.com", NULL, NULL, 0};
	CHECK_I64(aws_sigv4_presign_url(&url, &req2, &p, &err), 0);
	CHECK(starts(url.s, "https://sts.amazonaws.com?X-Amz-Algorithm="));
	buf_release(&url);
	buf_release(&err);

	char hex[65];
	aws_sha256_hex("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	aws_sha256_hex("Param1=value1", 13, hex);
	CHECK_STR(hex, "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
}

int main(void)
{
	test_doc_example();
	test_host_from_url();
	test_conveniences();
	test_own_vectors();
	test_suite_lookup();
	char why[8192] = "";
	const char *suite = suite_dir(why, sizeof why);
	if (!suite) {
		printf("# SKIP the AWS signing test suite is absent: %s; it stays outside the project "
		       "(docs/TESTING.md): set EM_SIGV4_SUITE to its v4 folder or EM_SHARED_DIR to the directory "
		       "holding testdata/\n", why);
		int rc = tap_done();
		return rc ? rc : 77;
	}
	int n = 0;
	int passed = run_suite(suite, &n);
	CHECK(n > 0);
	printf("# sigv4 suite: %d/%d cases passed (%s)\n", passed, n, suite);
	return tap_done();
}
