/* test_kube_client.c - the Kubernetes client over real HTTP on loopback (scripted answers: list
 * pages with continue tokens, 410 Expired mid-list, 429 + Retry-After, Status errors), the exec
 * credential protocol with a shell-script plugin written here (success, caching until expiry,
 * refresh after 401, failures, garbage, timeout), native EKS tokens (decoded and checked as a
 * presigned STS GetCallerIdentity), the inventory read, and, when the simulator is present, the
 * same client against ebssim over TLS with token, client-certificate and EKS users. */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/kube_client.h"
#include "ebsmigrate/kube_config.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/volume.h"
#include "loopback_http.h"
#include "tap.h"

extern char **environ;

static char tmp[256];
static time_t fake_now;

static time_t clock_fn(void)
{
	return fake_now;
}

struct fake {
	int64_t now;
	int64_t sleeps[64];
	int n_sleeps;
};

static int64_t fake_clock_ms(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static void fake_sleep(void *ctx, int64_t ms)
{
	struct fake *f = ctx;
	if (f->n_sleeps < 64)
		f->sleeps[f->n_sleeps++] = ms;
	f->now += ms;
}

static uint64_t fake_random(void *ctx)
{
	return 7;
}

static const char *path_in(const char *rel)
{
	static char p[8][512];
	static int i;
	i = (i + 1) % 8;
	snprintf(p[i], sizeof p[i], "%s/%s", tmp, rel);
	return p[i];
}

static void write_file(const char *rel, const char *text, int mode)
{
	const char *p = path_in(rel);
	FILE *f = fopen(p, "w");
	if (!f) {
		printf("# cannot write %s\n", p);
		return;
	}
	fputs(text, f);
	fclose(f);
	chmod(p, (mode_t)mode);
}

static char *read_text(const char *rel)
{
	struct buf b = BUF_INIT, e = BUF_INIT;
	em_read_file(path_in(rel), &b, &e);
	buf_release(&e);
	return buf_detach(&b);
}

static void reset_env(void)
{
	static const char *const vars[] = {
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_ROLE_ARN",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_CA_BUNDLE",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "KUBECONFIG", NULL,
	};
	for (const char *const *v = vars; *v; v++)
		unsetenv(*v);
	setenv("HOME", tmp, 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	em_parse_time("2029-06-01T00:00:00Z", &fake_now);
}

/* A target for server with a static token (NULL = none). */
static void make_target(struct kube_target *t, const char *server, const char *token)
{
	memset(t, 0, sizeof *t);
	t->context = xstrdup("test");
	t->cluster_name = xstrdup("test-cluster");
	t->user_name = xstrdup("tester");
	t->origin = xstrdup("unit test");
	t->server = xstrdup(server);
	t->namespace_ = xstrdup("default");
	t->token = xstrdup(token);
}

static void set_exec(struct kube_target *t, const char *command, const char *api, const char *mode, const char *exp)
{
	t->has_exec = 1;
	t->exec.api_version = xstrdup(api);
	t->exec.command = xstrdup(command);
	t->exec.args = xcalloc(2, sizeof(char *));
	t->exec.args[0] = xstrdup("--flag");
	t->exec.args[1] = xstrdup("two words");
	t->exec.n_args = 2;
	t->exec.env = xcalloc(3, sizeof *t->exec.env);
	t->exec.env[0].name = xstrdup("PLUGIN_MODE");
	t->exec.env[0].value = xstrdup(mode);
	t->exec.env[1].name = xstrdup("PLUGIN_API");
	t->exec.env[1].value = xstrdup(api);
	t->exec.n_env = 2;
	if (exp) {
		t->exec.env[2].name = xstrdup("PLUGIN_EXP");
		t->exec.env[2].value = xstrdup(exp);
		t->exec.n_env = 3;
	}
	t->exec.interactive_mode = KUBE_INTERACTIVE_NEVER;
	t->exec.install_hint = xstrdup("see the plugin's README");
}

static void client_opts(struct kube_client_options *o, struct fake *f)
{
	memset(o, 0, sizeof *o);
	memset(f, 0, sizeof *f);
	f->now = 1000000;
	o->rate = -1;
	o->max_attempts = 3;
	o->timeout_ms = 5000;
	o->connect_timeout_ms = 2000;
	o->backoff_base_ms = 100;
	o->backoff_max_ms = 1000;
	o->clock = clock_fn;
	o->clock_ms = fake_clock_ms;
	o->sleep_ms = fake_sleep;
	o->random = fake_random;
	o->inject_ctx = f;
}

static const char *hdr(struct lb_server *s, size_t i, const char *name)
{
	static char v[8192];
	return lb_header(lb_req(s, i), name, v, sizeof v);
}

/* ---- fixtures ---- */

#define PV(name, vol)                                                                                              \
	"{\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"csi\":{\"driver\":\"ebs.csi.aws.com\",\"volumeHandle\":\"" \
	vol "\"},\"capacity\":{\"storage\":\"10Gi\"},\"claimRef\":{\"namespace\":\"ns\",\"name\":\"data-" name        \
	"\"},\"storageClassName\":\"gp2\"}}"
#define PV_PAGE(cont, items)                                                                                      \
	"{\"kind\":\"PersistentVolumeList\",\"apiVersion\":\"v1\",\"metadata\":{" cont "},\"items\":[" items "]}"
#define STATUS(code, reason, msg)                                                                                  \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"" msg        \
	"\",\"reason\":\"" reason "\",\"code\":" #code "}"
#define EXPIRED STATUS(410, "Expired", "The provided continue parameter is too old to display a consistent list result.")

struct pages {
	unsigned page[16];
	int n;
	size_t bytes;
};

static int record_page(void *ctx, const char *json, size_t len, unsigned page, struct buf *err)
{
	struct pages *p = ctx;
	if (p->n < 16)
		p->page[p->n++] = page;
	p->bytes += len;
	return 0;
}

static void test_list_pages(void)
{
	static const struct lb_response script[] = {
		{200, NULL, PV_PAGE("\"continue\":\"c1/x+y\"", PV("pv-a", "vol-0a")), 0, 0},
		{410, NULL, EXPIRED, 0, 0},
		{200, NULL, PV_PAGE("\"continue\":\"c2\"", PV("pv-a", "vol-0a")), 0, 0},
		{200, NULL, PV_PAGE("\"resourceVersion\":\"9\"", PV("pv-b", "vol-0b")), 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 4) == 0);
	struct kube_target t;
	make_target(&t, s.url, "s3cr3t");
	struct kube_client c;
	struct kube_client_options o;
	struct fake f;
	client_opts(&o, &f);
	struct buf err = BUF_INIT;
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	kube_target_release(&t);
	struct pages p = {{0}, 0, 0};
	CHECK_I64(kube_list(&c, "/api/v1/persistentvolumes", record_page, &p, &err), 0);
	CHECK_STR(err.s, "");
	CHECK_I64(p.n, 3);
	CHECK(p.page[0] == 0 && p.page[1] == 0 && p.page[2] == 1);
	CHECK_I64(c.list_restarts, 1);
	CHECK_I64(lb_count(&s), 4);
	CHECK_STR(lb_req(&s, 0)->target, "/api/v1/persistentvolumes?limit=500");
	CHECK_STR(lb_req(&s, 1)->target, "/api/v1/persistentvolumes?limit=500&continue=c1%2Fx%2By");
	CHECK_STR(lb_req(&s, 2)->target, "/api/v1/persistentvolumes?limit=500");
	CHECK_STR(lb_req(&s, 3)->target, "/api/v1/persistentvolumes?limit=500&continue=c2");
	CHECK_STR(hdr(&s, 0, "Authorization"), "Bearer s3cr3t");
	CHECK_STR(hdr(&s, 0, "Accept"), "application/json");
	CHECK_I64(lb_conns(&s), 1);
	kube_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

static void test_list_expires_forever(void)
{
	static const struct lb_response script[] = {
		{200, NULL, PV_PAGE("\"continue\":\"a\"", ""), 0, 0}, {410, NULL, EXPIRED, 0, 0},
		{200, NULL, PV_PAGE("\"continue\":\"a\"", ""), 0, 0}, {410, NULL, EXPIRED, 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 4) == 0);
	struct kube_target t;
	make_target(&t, s.url, "s3cr3t");
	struct kube_client c;
	struct kube_client_options o;
	struct fake f;
	client_opts(&o, &f);
	o.max_list_restarts = 1;
	struct buf err = BUF_INIT;
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	kube_target_release(&t);
	struct pages p = {{0}, 0, 0};
	CHECK_I64(kube_list(&c, "/api/v1/pods", record_page, &p, &err), EM_ESERVER);
	CHECK_STR(err.s, "context 'test': list /api/v1/pods: the continue token expired 2 times; giving up");
	kube_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

static void test_status_errors(void)
{
	static const struct lb_response script[] = {
		{429, "Retry-After: 2\r\n", STATUS(429, "TooManyRequests", "slow down"), 0, 0},
		{200, NULL, "{\"kind\":\"Node\"}", 0, 0},
		{403, NULL,
		 STATUS(403, "Forbidden",
			"nodes is forbidden: User \\\"reader\\\" cannot list resource \\\"nodes\\\" in API group \\\"\\\" at "
			"the cluster scope"),
		 0, 0},
		{401, NULL, STATUS(401, "Unauthorized", "Unauthorized"), 0, 0},
		{404, NULL, STATUS(404, "NotFound", "persistentvolumeclaims \\\"x\\\" not found"), 0, 0},
		{409, NULL, STATUS(409, "AlreadyExists", "volumeattributesclasses.storage.k8s.io \\\"gp3\\\" already exists"),
		 0, 0},
		{422, NULL, STATUS(422, "Invalid", "spec.volumeAttributesClassName: Invalid value"), 0, 0},
		{200, NULL, "{\"kind\":\"PersistentVolumeClaim\"}", 0, 0},
		{200, NULL, "{\"kind\":\"Status\",\"status\":\"Success\"}", 0, 0},
		{500, NULL, "<html>oops</html>", 0, 0},
		{500, NULL, "<html>oops</html>", 0, 0},
		{500, NULL, "<html>oops</html>", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, sizeof script / sizeof script[0]) == 0);
	struct kube_target t;
	make_target(&t, s.url, "s3cr3t");
	struct kube_client c;
	struct kube_client_options o;
	struct fake f;
	client_opts(&o, &f);
	struct buf err = BUF_INIT, body = BUF_INIT;
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	kube_target_release(&t);
	long st = 0;

	/* 429 + Retry-After: waited 2 s through the injected sleep, then the answer */
	CHECK_I64(kube_get(&c, "/api/v1/nodes/n1", NULL, &body, &st, &err), 0);
	CHECK_I64(st, 200);
	CHECK_STR(body.s, "{\"kind\":\"Node\"}");
	CHECK_I64(f.n_sleeps, 1);
	CHECK_I64(f.sleeps[0], 2000);

	buf_reset(&body);
	CHECK_I64(kube_get(&c, "/api/v1/nodes", "limit=5", &body, &st, &err), EM_EAUTH);
	CHECK_I64(st, 403);
	CHECK_STR(err.s, "context 'test': GET /api/v1/nodes: forbidden (HTTP 403): nodes is forbidden: User \"reader\" "
			 "cannot list resource \"nodes\" in API group \"\" at the cluster scope");
	CHECK(strstr(body.s, "Forbidden") != NULL);
	CHECK_STR(lb_req(&s, 2)->target, "/api/v1/nodes?limit=5");

	buf_reset(&err);
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), EM_EAUTH);
	CHECK_STR(err.s, "context 'test': GET /api: unauthorized (HTTP 401): Unauthorized; the server rejected the "
			 "credentials of user 'tester'");
	CHECK(strstr(err.s, "s3cr3t") == NULL);

	buf_reset(&err);
	CHECK_I64(kube_get(&c, "/api/v1/namespaces/a/persistentvolumeclaims/x", NULL, NULL, &st, &err), EM_ENOTFOUND);
	CHECK_I64(st, 404);

	buf_reset(&err);
	buf_reset(&body);
	CHECK_I64(kube_create(&c, "/apis/storage.k8s.io/v1/volumeattributesclasses", "{\"kind\":\"VAC\"}", &body, &err),
		  EM_ECONFLICT);
	CHECK_STR(err.s, "context 'test': POST /apis/storage.k8s.io/v1/volumeattributesclasses: conflict (HTTP 409): "
			 "volumeattributesclasses.storage.k8s.io \"gp3\" already exists");
	CHECK_STR(lb_req(&s, 5)->method, "POST");
	CHECK_STR(hdr(&s, 5, "Content-Type"), "application/json");
	CHECK_STR(lb_req(&s, 5)->body, "{\"kind\":\"VAC\"}");

	buf_reset(&err);
	CHECK_I64(kube_patch_merge(&c, "/api/v1/namespaces/a/persistentvolumeclaims/x", "{\"spec\":{}}", NULL, &err),
		  EM_ESERVER);
	CHECK_STR(err.s, "context 'test': PATCH /api/v1/namespaces/a/persistentvolumeclaims/x: invalid (HTTP 422): "
			 "spec.volumeAttributesClassName: Invalid value");

	buf_reset(&err);
	buf_reset(&body);
	CHECK_I64(kube_patch_merge(&c, "/api/v1/namespaces/a/persistentvolumeclaims/x",
				   "{\"spec\":{\"volumeAttributesClassName\":\"gp3\"}}", &body, &err),
		  0);
	CHECK_STR(body.s, "{\"kind\":\"PersistentVolumeClaim\"}");
	CHECK_STR(lb_req(&s, 7)->method, "PATCH");
	CHECK_STR(hdr(&s, 7, "Content-Type"), "application/merge-patch+json");
	CHECK_STR(lb_req(&s, 7)->body, "{\"spec\":{\"volumeAttributesClassName\":\"gp3\"}}");

	CHECK_I64(kube_delete(&c, "/apis/batch/v1/namespaces/a/jobs/j?propagationPolicy=Background", NULL, &err), 0);
	CHECK_STR(lb_req(&s, 8)->method, "DELETE");
	CHECK_STR(lb_req(&s, 8)->target, "/apis/batch/v1/namespaces/a/jobs/j?propagationPolicy=Background");

	/* 5xx retried until attempts run out, then the answer is an error without a Status */
	buf_reset(&err);
	CHECK_I64(kube_get(&c, "/api/v1/pods?x=1", NULL, NULL, &st, &err), EM_ESERVER);
	CHECK_STR(err.s, "context 'test': GET /api/v1/pods: internal error (HTTP 500)");
	CHECK_I64(lb_count(&s), 12);

	kube_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
	buf_release(&body);
}

static void test_version_and_discovery(void)
{
	static const struct lb_response script[] = {
		{200, NULL, "{\"major\":\"1\",\"minor\":\"33+\",\"gitVersion\":\"v1.33.2-eks-1\"}", 0, 0},
		{200, NULL,
		 "{\"kind\":\"APIGroup\",\"name\":\"storage.k8s.io\",\"versions\":[{\"groupVersion\":\"storage.k8s.io/v1\","
		 "\"version\":\"v1\"},{\"groupVersion\":\"storage.k8s.io/v1beta1\",\"version\":\"v1beta1\"}]}",
		 0, 0},
		{200, NULL, "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"storageclasses\"}]}", 0, 0},
		{200, NULL,
		 "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"volumeattributesclasses\"},{\"name\":\"csi\"}]}", 0,
		 0},
		{404, NULL, STATUS(404, "NotFound", "the server could not find the requested resource"), 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 5) == 0);
	struct kube_target t;
	make_target(&t, s.url, NULL);
	struct kube_client c;
	struct kube_client_options o;
	struct fake f;
	client_opts(&o, &f);
	struct buf err = BUF_INIT, raw = BUF_INIT;
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	kube_target_release(&t);
	char *v = NULL;
	CHECK_I64(kube_server_version(&c, &v, &raw, &err), 0);
	CHECK_STR(v, "1.33");
	CHECK_STR(c.server_version, "1.33");
	CHECK(strstr(raw.s, "v1.33.2-eks-1") != NULL);
	CHECK(hdr(&s, 0, "Authorization") == NULL);
	free(v);
	const char *ver = "x";
	CHECK_I64(kube_vac_api_version(&c, &ver, &err), 0);
	CHECK_STR(ver, "v1beta1");
	CHECK_STR(lb_req(&s, 1)->target, "/apis/storage.k8s.io");
	CHECK_STR(lb_req(&s, 2)->target, "/apis/storage.k8s.io/v1");
	CHECK_STR(lb_req(&s, 3)->target, "/apis/storage.k8s.io/v1beta1");
	CHECK_I64(kube_vac_api_version(&c, &ver, &err), 0);
	CHECK(ver == NULL);
	CHECK_STR(err.s, "");
	kube_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
	buf_release(&raw);
}

static void test_token_file(void)
{
	static const struct lb_response script[] = {
		{200, NULL, "{}", 0, 0},
		{200, NULL, "{}", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 2) == 0);
	struct kube_target t;
	make_target(&t, s.url, "ignored");
	t.token_file = xstrdup(path_in("token"));
	write_file("token", "first-token\n", 0600);
	struct kube_client c;
	struct kube_client_options o;
	struct fake f;
	client_opts(&o, &f);
	struct buf err = BUF_INIT;
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	kube_target_release(&t);
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_STR(hdr(&s, 0, "Authorization"), "Bearer first-token");
	write_file("token", "rotated-token", 0600);
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_STR(hdr(&s, 1, "Authorization"), "Bearer rotated-token");
	unlink(path_in("token"));
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), EM_EAUTH);
	CHECK(strstr(err.s, "context 'test': user 'tester': cannot read '") != NULL);
	CHECK_I64(lb_count(&s), 2);
	kube_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
}

/* ---- exec plugins ---- */

static const char plugin_sh[] =
	"#!/bin/sh\n"
	"dir=$(dirname \"$0\")\n"
	"n=$(cat \"$dir/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$dir/count\"\n"
	"printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$dir/info.json\"\n"
	"printf '%s\\n' \"$@\" > \"$dir/args\"\n"
	"if read -r line; then echo 'stdin was not empty' >&2; exit 9; fi\n"
	"case \"$PLUGIN_MODE\" in\n"
	"fail) echo; echo 'first error line' >&2; echo 'second line' >&2; echo '{\"leak\":\"stdout-secret\"}'; exit 3;;\n"
	"garbage) echo 'this is not json stdout-secret';;\n"
	"sleep) exec sleep 5;;\n"
	"wrongver) printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
	"\"status\":{\"token\":\"x\"}}\\n';;\n"
	"empty) printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"status\":{}}\\n' \"$PLUGIN_API\";;\n"
	"cert) printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"status\":{\"clientCertificateData\":"
	"\"CERTPEM\",\"clientKeyData\":\"KEYPEM\"}}\\n' \"$PLUGIN_API\";;\n"
	"*) if [ -n \"$PLUGIN_EXP\" ]; then exp=\",\\\"expirationTimestamp\\\":\\\"$PLUGIN_EXP\\\"\"; fi\n"
	"   printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"spec\":{},\"status\":{\"token\":\"tok-%s\"%s}}\\n'"
	" \"$PLUGIN_API\" \"$n\" \"$exp\";;\n"
	"esac\n";

static void reset_plugin(void)
{
	unlink(path_in("plug/count"));
	unlink(path_in("plug/info.json"));
	unlink(path_in("plug/args"));
}

static int run_plugin(const char *mode, const char *api, struct kube_credential *cred, struct buf *err, long timeout)
{
	struct kube_target t;
	make_target(&t, "https://k.example:6443", NULL);
	set_exec(&t, path_in("plug/plugin"), api, mode, NULL);
	buf_reset(err);
	int rc = kube_exec_run(cred, &t, timeout, err);
	kube_target_release(&t);
	return rc;
}

static void test_exec_protocol(void)
{
	reset_plugin();
	struct kube_target t;
	make_target(&t, "https://k.example:6443", NULL);
	set_exec(&t, path_in("plug/plugin"), KUBE_EXEC_V1, "ok", "2030-01-01T00:00:00Z");
	t.exec.provide_cluster_info = 1;
	t.ca_pem = xstrdup("-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n");
	struct kube_credential cred;
	struct buf err = BUF_INIT;
	setenv("KUBERNETES_EXEC_INFO", "stale", 1);
	CHECK_I64(kube_exec_run(&cred, &t, 5000, &err), 0);
	unsetenv("KUBERNETES_EXEC_INFO");
	CHECK_STR(err.s, "");
	CHECK_STR(cred.token, "tok-1");
	time_t want_exp;
	em_parse_time("2030-01-01T00:00:00Z", &want_exp);
	CHECK_I64(cred.expires, want_exp);
	kube_credential_release(&cred);
	char *info = read_text("plug/info.json");
	CHECK_STR(info, "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"spec\":{"
			"\"interactive\":false,\"cluster\":{\"server\":\"https://k.example:6443\",\"certificate-"
			"authority-data\":\"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmFiYwotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==\"}}}");
	free(info);
	char *args = read_text("plug/args");
	CHECK_STR(args, "--flag\ntwo words\n");
	free(args);
	kube_target_release(&t);

	/* v1beta1 without cluster info */
	CHECK_I64(run_plugin("ok", KUBE_EXEC_V1BETA1, &cred, &err, 0), 0);
	CHECK_STR(cred.token, "tok-2");
	CHECK_I64(cred.expires, 0);
	kube_credential_release(&cred);
	info = read_text("plug/info.json");
	CHECK_STR(info, "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\","
			"\"spec\":{\"interactive\":false}}");
	free(info);

	/* insecure-skip-tls-verify, no CA, a server that needs escaping (quote, backslash, tab, UTF-8) */
	make_target(&t, "https://k\"q\\ex\tample-\xc3\xa9:6443", NULL);
	set_exec(&t, path_in("plug/plugin"), KUBE_EXEC_V1, "ok", NULL);
	t.exec.provide_cluster_info = 1;
	t.insecure = 1;
	CHECK_I64(kube_exec_run(&cred, &t, 5000, &err), 0);
	kube_credential_release(&cred);
	kube_target_release(&t);
	info = read_text("plug/info.json");
	CHECK_STR(info, "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"spec\":{"
			"\"interactive\":false,\"cluster\":{\"server\":\"https://k\\\"q\\\\ex\\tample-\xc3\xa9:6443\","
			"\"insecure-skip-tls-verify\":true}}}");
	free(info);

	CHECK_I64(run_plugin("cert", KUBE_EXEC_V1, &cred, &err, 0), 0);
	CHECK(cred.token == NULL);
	CHECK_STR(cred.client_cert_pem, "CERTPEM");
	CHECK_STR(cred.client_key_pem, "KEYPEM");
	kube_credential_release(&cred);

	struct buf who = BUF_INIT;
	buf_addf(&who, "context 'test': user 'tester': exec plugin '%s'", path_in("plug/plugin"));
	struct buf want = BUF_INIT;
#define WANT(...) (buf_reset(&want), buf_addf(&want, __VA_ARGS__), want.s)
	CHECK_I64(run_plugin("fail", KUBE_EXEC_V1, &cred, &err, 0), EM_EAUTH);
	CHECK_STR(err.s, WANT("%s: exited with status 3: first error line", who.s));
	CHECK(strstr(err.s, "stdout-secret") == NULL);
	CHECK_I64(run_plugin("garbage", KUBE_EXEC_V1, &cred, &err, 0), EM_EAUTH);
	CHECK_STR(err.s, WANT("%s: output is not an ExecCredential (not a JSON object)", who.s));
	CHECK_I64(run_plugin("wrongver", KUBE_EXEC_V1BETA1, &cred, &err, 0), EM_EAUTH);
	CHECK_STR(err.s, WANT("%s: answered with another apiVersion than the configured "
			      "client.authentication.k8s.io/v1beta1",
			      who.s));
	CHECK_I64(run_plugin("empty", KUBE_EXEC_V1, &cred, &err, 0), EM_EAUTH);
	CHECK_STR(err.s, WANT("%s: ExecCredential status has neither a token nor clientCertificateData and "
			      "clientKeyData",
			      who.s));
	CHECK(cred.token == NULL);
	int64_t t0 = (int64_t)time(NULL);
	CHECK_I64(run_plugin("sleep", KUBE_EXEC_V1, &cred, &err, 300), EM_EAUTH);
	CHECK_STR(err.s, WANT("%s: timed out after 300 ms", who.s));
	CHECK((int64_t)time(NULL) - t0 < 4);

	make_target(&t, "https://k.example", NULL);
	set_exec(&t, path_in("plug/absent"), KUBE_EXEC_V1, "ok", NULL);
	buf_reset(&err);
	CHECK_I64(kube_exec_run(&cred, &t, 0, &err), EM_EAUTH);
	CHECK_STR(err.s, WANT("context 'test': user 'tester': exec plugin '%s': command not found; see the plugin's "
			      "README",
			      path_in("plug/absent")));
	t.exec.interactive_mode = KUBE_INTERACTIVE_ALWAYS;
	buf_reset(&err);
	CHECK_I64(kube_exec_run(&cred, &t, 0, &err), EM_EUNSUPPORTED);
	kube_target_release(&t);
	/* a bare command name is looked up on PATH */
	make_target(&t, "https://k.example", NULL);
	set_exec(&t, "plugin", KUBE_EXEC_V1, "ok", NULL);
	const char *old_path = getenv("PATH");
	char *saved = xstrdup(old_path);
	struct buf np = BUF_INIT;
	buf_addf(&np, "/nonexistent:%s:%s", path_in("plug"), saved);
	setenv("PATH", np.s, 1);
	buf_reset(&err);
	CHECK_I64(kube_exec_run(&cred, &t, 0, &err), 0);
	CHECK(cred.token && strncmp(cred.token, "tok-", 4) == 0);
	kube_credential_release(&cred);
	setenv("PATH", saved, 1);
	free(saved);
	buf_release(&np);
	kube_target_release(&t);
#undef WANT
	buf_release(&who);
	buf_release(&want);
	buf_release(&err);
}

/* The client caches the plugin's token until its expiry, and refreshes once after a 401. */
static void test_exec_caching(void)
{
	reset_plugin();
	static const struct lb_response script[] = {
		{200, NULL, "{}", 0, 0},
		{200, NULL, "{}", 0, 0},
		{200, NULL, "{}", 0, 0},
		{401, NULL, STATUS(401, "Unauthorized", "Unauthorized"), 0, 0},
		{200, NULL, "{}", 0, 0},
		{401, NULL, STATUS(401, "Unauthorized", "Unauthorized"), 0, 0},
		{401, NULL, STATUS(401, "Unauthorized", "Unauthorized"), 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 7) == 0);
	struct kube_target t;
	make_target(&t, s.url, NULL);
	set_exec(&t, path_in("plug/plugin"), KUBE_EXEC_V1BETA1, "ok", "2030-01-01T00:00:00Z");
	struct kube_client c;
	struct kube_client_options o;
	struct fake f;
	client_opts(&o, &f);
	struct buf err = BUF_INIT;
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	kube_target_release(&t);
	CHECK(!c.eks_native);
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_I64(c.exec_runs, 1);
	CHECK_STR(hdr(&s, 1, "Authorization"), "Bearer tok-1");
	em_parse_time("2029-12-31T23:59:55Z", &fake_now); /* within the refresh margin */
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_I64(c.exec_runs, 2);
	CHECK_STR(hdr(&s, 2, "Authorization"), "Bearer tok-2");
	em_parse_time("2029-06-01T00:00:00Z", &fake_now);
	/* 401: one refresh and a retry */
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_I64(c.exec_runs, 3);
	CHECK_STR(hdr(&s, 4, "Authorization"), "Bearer tok-3");
	/* 401 twice: an error, after exactly one refresh */
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), EM_EAUTH);
	CHECK_I64(c.exec_runs, 4);
	CHECK_I64(lb_count(&s), 7);
	kube_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
	reset_env();
}

/* ---- EKS ---- */

static int eks_parse(const char *cmd, const char *const *args, struct kube_eks_args *a)
{
	struct kube_exec e = {0};
	e.command = (char *)cmd;
	size_t n = 0;
	while (args[n])
		n++;
	e.args = (char **)args;
	e.n_args = n;
	return kube_eks_args_parse(a, &e);
}

static void test_eks_args(void)
{
	struct kube_eks_args a;
	static const char *const sim[] = {"--region", "us-east-1", "eks", "get-token", "--cluster-name", "prod",
					  "--output", "json", NULL};
	CHECK_I64(eks_parse("aws", sim, &a), 1);
	CHECK_STR(a.cluster, "prod");
	CHECK_STR(a.region, "us-east-1");
	CHECK(a.role_arn == NULL && a.profile == NULL && !a.authenticator);
	kube_eks_args_release(&a);
	static const char *const cli[] = {"eks", "get-token", "--cluster-name=prod", "--role-arn",
					  "arn:aws:iam::111122223333:role/eks", "--profile", "ops", NULL};
	CHECK_I64(eks_parse("/usr/local/bin/aws", cli, &a), 1);
	CHECK_STR(a.role_arn, "arn:aws:iam::111122223333:role/eks");
	CHECK_STR(a.profile, "ops");
	kube_eks_args_release(&a);
	static const char *const auth[] = {"token", "-i", "prod", "-r", "arn:aws:iam::1:role/x", NULL};
	CHECK_I64(eks_parse("aws-iam-authenticator", auth, &a), 1);
	CHECK_STR(a.cluster, "prod");
	CHECK_STR(a.role_arn, "arn:aws:iam::1:role/x");
	CHECK(a.authenticator);
	kube_eks_args_release(&a);
	static const char *const other[] = {"eks", "update-kubeconfig", "--name", "prod", NULL};
	CHECK_I64(eks_parse("aws", other, &a), 0);
	CHECK(a.cluster == NULL);
	static const char *const unknown[] = {"eks", "get-token", "--cluster-name", "p", "--no-verify-ssl", NULL};
	CHECK_I64(eks_parse("aws", unknown, &a), 0);
	static const char *const noname[] = {"eks", "get-token", NULL};
	CHECK_I64(eks_parse("aws", noname, &a), 0);
	static const char *const missing[] = {"eks", "get-token", "--cluster-name", NULL};
	CHECK_I64(eks_parse("aws", missing, &a), 0);
	CHECK_I64(eks_parse("kubelogin", sim, &a), 0);
}

static int b64url_decode(struct buf *out, const char *s)
{
	struct buf std = BUF_INIT;
	for (; *s; s++)
		buf_addc(&std, *s == '-' ? '+' : *s == '_' ? '/' : *s);
	int rc = kube_base64_decode(out, std.s, std.len);
	buf_release(&std);
	return rc;
}

static void test_eks_native(void)
{
	reset_env();
	static const struct lb_response script[] = {
		{200, NULL, "{}", 0, 0},
		{200, NULL, "{}", 0, 0},
		{200, NULL, "{}", 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, 3) == 0);
	struct kube_target t;
	make_target(&t, s.url, NULL);
	/* a plugin named aws that must not run: it would answer tok-N */
	set_exec(&t, path_in("bin/aws"), KUBE_EXEC_V1BETA1, "ok", NULL);
	for (size_t i = 0; i < t.exec.n_args; i++)
		free(t.exec.args[i]);
	free(t.exec.args);
	static const char *const args[] = {"--region", "us-west-2", "eks", "get-token", "--cluster-name", "prod", NULL};
	t.exec.n_args = 6;
	t.exec.args = xcalloc(6, sizeof(char *));
	for (int i = 0; i < 6; i++)
		t.exec.args[i] = xstrdup(args[i]);
	t.exec.env = xrealloc(t.exec.env, 5 * sizeof *t.exec.env);
	t.exec.env[t.exec.n_env].name = xstrdup("AWS_ACCESS_KEY_ID");
	t.exec.env[t.exec.n_env++].value = xstrdup("AKIDEXAMPLE");
	t.exec.env[t.exec.n_env].name = xstrdup("AWS_SECRET_ACCESS_KEY");
	t.exec.env[t.exec.n_env++].value = xstrdup("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
	struct kube_client c;
	struct kube_client_options o;
	struct fake f;
	client_opts(&o, &f);
	fake_now = time(NULL);
	struct buf err = BUF_INIT, url = BUF_INIT;
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	CHECK(c.eks_native);
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_STR(err.s, "");
	CHECK_I64(c.eks_tokens, 1);
	CHECK_I64(c.exec_runs, 0);
	const char *authz = hdr(&s, 0, "Authorization");
	CHECK(authz && strncmp(authz, "Bearer k8s-aws-v1.", 18) == 0);
	CHECK(authz && strchr(authz + 18, '=') == NULL); /* unpadded */
	if (authz && strlen(authz) > 18) {
		CHECK_I64(b64url_decode(&url, authz + 18), 0);
		CHECK(strncmp(url.s, "https://sts.us-west-2.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&",
			      81) == 0);
		CHECK(strstr(url.s, "X-Amz-Algorithm=AWS4-HMAC-SHA256") != NULL);
		CHECK(strstr(url.s, "X-Amz-Credential=AKIDEXAMPLE%2F") != NULL);
		CHECK(strstr(url.s, "%2Fus-west-2%2Fsts%2Faws4_request") != NULL);
		CHECK(strstr(url.s, "X-Amz-Expires=60") != NULL);
		CHECK(strstr(url.s, "X-Amz-SignedHeaders=host%3Bx-k8s-aws-id") != NULL);
		CHECK(strstr(url.s, "X-Amz-Signature=") != NULL);
		CHECK(strstr(url.s, "x-k8s-aws-id=") == NULL);
		CHECK(strstr(url.s, "wJalr") == NULL);
	}
	/* cached for 14 minutes */
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_I64(c.eks_tokens, 1);
	CHECK_STR(hdr(&s, 1, "Authorization"), authz ? authz : "");
	fake_now += 14 * 60;
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_I64(c.eks_tokens, 2);
	CHECK_I64(c.exec_runs, 0);
	kube_client_release(&c);
	lb_stop(&s);

	/* no AWS credentials anywhere: the binary runs after all */
	reset_plugin();
	static const struct lb_response script2[] = {{200, NULL, "{}", 0, 0}, {200, NULL, "{}", 0, 0}};
	CHECK(lb_start(&s, script2, 2) == 0);
	free(t.server);
	t.server = xstrdup(s.url);
	free(t.exec.env[--t.exec.n_env].name);
	free(t.exec.env[t.exec.n_env].value);
	free(t.exec.env[--t.exec.n_env].name);
	free(t.exec.env[t.exec.n_env].value);
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	CHECK(c.eks_native);
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_STR(err.s, "");
	CHECK_I64(c.eks_tokens, 0);
	CHECK_I64(c.exec_runs, 1);
	CHECK_STR(hdr(&s, 0, "Authorization"), "Bearer tok-1");
	kube_client_release(&c);
	/* no_native_eks: always the binary */
	o.no_native_eks = 1;
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	CHECK(!c.eks_native);
	CHECK_I64(kube_get(&c, "/api", NULL, NULL, NULL, &err), 0);
	CHECK_I64(c.exec_runs, 1);
	CHECK_STR(hdr(&s, 1, "Authorization"), "Bearer tok-2");
	kube_client_release(&c);
	lb_stop(&s);
	kube_target_release(&t);
	buf_release(&err);
	buf_release(&url);
	reset_env();
}

/* ---- inventory ---- */

static void test_inventory(void)
{
	static const struct lb_response script[] = {
		/* 0 */ {200, NULL, "{\"major\":\"1\",\"minor\":\"31\"}", 0, 0},
		/* 1 */
		{200, NULL,
		 "{\"kind\":\"StorageClassList\",\"apiVersion\":\"storage.k8s.io/v1\",\"metadata\":{},\"items\":[{\"metadata\":"
		 "{\"name\":\"gp2\",\"annotations\":{\"storageclass.kubernetes.io/is-default-class\":\"true\"}},"
		 "\"provisioner\":\"ebs.csi.aws.com\",\"parameters\":{\"type\":\"gp2\"}}]}",
		 0, 0},
		/* 2 */ {200, NULL, PV_PAGE("\"continue\":\"p1\"", PV("pv-a", "vol-0a")), 0, 0},
		/* 3 */ {410, NULL, EXPIRED, 0, 0},
		/* 4 */ {200, NULL, PV_PAGE("\"continue\":\"p2\"", PV("pv-a", "vol-0a")), 0, 0},
		/* 5 */ {200, NULL, PV_PAGE("", PV("pv-b", "vol-0b")), 0, 0},
		/* 6 */
		{200, NULL,
		 "{\"kind\":\"PersistentVolumeClaimList\",\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"data-pv-a\","
		 "\"namespace\":\"ns\"},\"spec\":{\"volumeName\":\"pv-a\",\"storageClassName\":\"gp2\"}}]}",
		 0, 0},
		/* 7 */
		{200, NULL,
		 "{\"kind\":\"StatefulSetList\",\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"db\",\"namespace\":"
		 "\"ns\"},\"spec\":{\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"data\"}}]}}]}",
		 0, 0},
		/* 8 */
		{200, NULL,
		 "{\"kind\":\"PodList\",\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"db-0\",\"namespace\":\"ns\"},"
		 "\"spec\":{\"nodeName\":\"node-1\",\"volumes\":[{\"name\":\"d\",\"persistentVolumeClaim\":{\"claimName\":"
		 "\"data-pv-a\"}}]}}]}",
		 0, 0},
		/* 9 */
		{200, NULL,
		 "{\"kind\":\"NodeList\",\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"node-1\",\"labels\":{"
		 "\"node.kubernetes.io/instance-type\":\"m5.xlarge\"}}},{\"metadata\":{\"name\":\"node 2\"}}]}",
		 0, 0},
		/* 10 */
		{200, NULL,
		 "{\"kind\":\"APIGroup\",\"versions\":[{\"version\":\"v1\"},{\"version\":\"v1beta1\"}],\"preferredVersion\":"
		 "{\"version\":\"v1\"}}",
		 0, 0},
		/* 11 */ {200, NULL, "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"storageclasses\"}]}", 0, 0},
		/* 12 */ {200, NULL, "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"volumeattributesclasses\"}]}", 0, 0},
		/* 13 */
		{200, NULL,
		 "{\"kind\":\"VolumeAttributesClassList\",\"apiVersion\":\"storage.k8s.io/v1beta1\",\"metadata\":{},"
		 "\"items\":[{\"metadata\":{\"name\":\"gp3\"},\"driverName\":\"ebs.csi.aws.com\",\"parameters\":{\"type\":"
		 "\"gp3\"}}]}",
		 0, 0},
		/* 14 */
		{200, NULL,
		 "{\"node\":{\"nodeName\":\"node-1\"},\"pods\":[{\"volume\":[{\"name\":\"d\",\"pvcRef\":{\"name\":"
		 "\"data-pv-a\",\"namespace\":\"ns\"},\"usedBytes\":1073741824,\"capacityBytes\":10737418240}]}]}",
		 0, 0},
		/* 15 */ {403, NULL, STATUS(403, "Forbidden", "nodes \\\"node 2\\\" is forbidden"), 0, 0},
	};
	struct lb_server s;
	CHECK(lb_start(&s, script, sizeof script / sizeof script[0]) == 0);
	struct kube_target t;
	make_target(&t, s.url, "s3cr3t");
	struct kube_client c;
	struct kube_client_options o;
	struct fake f;
	client_opts(&o, &f);
	struct buf err = BUF_INIT;
	CHECK_I64(kube_client_init(&c, &t, &o, &err), 0);
	kube_target_release(&t);
	struct kube_set ks;
	struct fleet fl;
	kube_set_init(&ks);
	fleet_init(&fl);
	CHECK_I64(kube_inventory_load(&c, "prod", &ks, &fl, KUBE_INV_ALL | KUBE_INV_USAGE, &err), 0);
	CHECK_STR(err.s, "");
	CHECK_I64(lb_count(&s), 16);
	static const char *const targets[] = {
		"/version",
		"/apis/storage.k8s.io/v1/storageclasses?limit=500",
		"/api/v1/persistentvolumes?limit=500",
		"/api/v1/persistentvolumes?limit=500&continue=p1",
		"/api/v1/persistentvolumes?limit=500",
		"/api/v1/persistentvolumes?limit=500&continue=p2",
		"/api/v1/persistentvolumeclaims?limit=500",
		"/apis/apps/v1/statefulsets?limit=500",
		"/api/v1/pods?limit=500",
		"/api/v1/nodes?limit=500",
		"/apis/storage.k8s.io",
		"/apis/storage.k8s.io/v1",
		"/apis/storage.k8s.io/v1beta1",
		"/apis/storage.k8s.io/v1beta1/volumeattributesclasses?limit=500",
		"/api/v1/nodes/node-1/proxy/stats/summary",
		"/api/v1/nodes/node%202/proxy/stats/summary",
	};
	for (size_t i = 0; i < 16; i++)
		CHECK_STR(lb_req(&s, i) ? lb_req(&s, i)->target : NULL, targets[i]);
	CHECK_I64(c.list_restarts, 1);
	CHECK_I64(ks.n_pvs, 2); /* pv-a once, although its page came twice */
	CHECK_STR(ks.pvs[0].name, "pv-a");
	CHECK_STR(ks.pvs[0].volume_id, "vol-0a");
	CHECK_STR(ks.pvs[0].cluster, "prod");
	CHECK_STR(ks.pvs[0].origin, "context 'test' list /api/v1/persistentvolumes");
	CHECK_STR(ks.pvs[1].name, "pv-b");
	CHECK_I64(ks.n_pvcs, 1);
	CHECK_I64(ks.n_uses, 1);
	CHECK_STR(ks.uses[0].node, "node-1");
	CHECK_I64(ks.n_nodes, 2);
	CHECK_STR(ks.nodes[0].instance_type, "m5.xlarge");
	CHECK_I64(ks.n_usage, 1);
	CHECK_I64(ks.usage[0].used_bytes, 1073741824);
	CHECK_I64(fl.n_scs, 1);
	CHECK(fl.n_scs == 1 && fl.scs[0].is_default);
	CHECK_I64(fl.n_sts, 1);
	CHECK_I64(fl.n_vacs, 1);
	CHECK_STR(fl.n_vacs ? fl.vacs[0].api_version : NULL, "storage.k8s.io/v1beta1");
	CHECK_I64(fl.n_clusters, 1);
	CHECK_STR(fl.clusters[0], "prod");
	CHECK_STR(fl.cluster_versions[0], "1.31");
	CHECK_I64(fl.n_notices, 1);
	CHECK_STR(fl.n_notices ? fl.notices[0] : NULL, "volume usage unavailable in cluster 'prod': forbidden");

	/* a second read of the same cluster adds nothing twice */
	kube_client_release(&c);
	lb_stop(&s);
	kube_set_release(&ks);
	fleet_release(&fl);
	buf_release(&err);
}

/* ---- against the simulator, when it is there ---- */

static pid_t sim_pid;

static int sim_start(const char *dir)
{
	const char *sim = tap_src_path("tests/sim/ebssim");
	if (access(sim, R_OK) != 0 || access("/usr/bin/python3", X_OK) != 0)
		return -1;
	char *argv[] = {"/usr/bin/python3", (char *)sim, "serve", "--scenario", "basic", "--state-dir", (char *)dir, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	char log[700];
	snprintf(log, sizeof log, "%s.log", dir);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	int rc = posix_spawn(&sim_pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	char ready[700];
	snprintf(ready, sizeof ready, "%s/ready", dir);
	for (int i = 0; i < 300; i++) {
		if (access(ready, F_OK) == 0)
			return 0;
		int st;
		if (waitpid(sim_pid, &st, WNOHANG) == sim_pid) {
			sim_pid = 0;
			return -1;
		}
		usleep(100000);
	}
	return -1;
}

static void sim_stop(void)
{
	if (sim_pid > 0) {
		kill(sim_pid, SIGTERM);
		int st;
		waitpid(sim_pid, &st, 0);
		sim_pid = 0;
	}
}

static int count_pvs(void *ctx, const char *json, size_t len, unsigned page, struct buf *err)
{
	int *n = ctx;
	if (page == 0)
		*n = 0;
	const char *p = json;
	while ((p = strstr(p, "\"volumeHandle\"")) != NULL) {
		(*n)++;
		p++;
	}
	return 0;
}

static int sim_ctl(const char *dir, const char *spec)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' ctl --state-dir '%s' fault '%s' >/dev/null",
		 tap_src_path("tests/sim/ebssim"), dir, spec);
	return system(cmd);
}

/* Lists PVs as context; returns the list restarts seen. */
static unsigned sim_list_as(const char *context, int native_eks, int expect_eks)
{
	unsigned restarts = 0;
	struct kube_selection sel = {0};
	sel.context = context;
	struct kube_target *v = NULL;
	size_t n = 0;
	struct buf err = BUF_INIT;
	int rc = kube_targets_load(&v, &n, &sel, &err);
	CHECK_I64(rc, 0);
	if (rc) {
		printf("# %s\n", err.s);
		buf_release(&err);
		return 0;
	}
	struct kube_client c;
	struct kube_client_options o = {0};
	o.list_limit = 2;
	o.no_native_eks = !native_eks;
	CHECK_I64(kube_client_init(&c, &v[0], &o, &err), 0);
	int pvs = 0;
	rc = kube_list(&c, "/api/v1/persistentvolumes", count_pvs, &pvs, &err);
	CHECK_I64(rc, 0);
	if (rc)
		printf("# %s: %s\n", context, err.s);
	CHECK_I64(pvs, 9);
	CHECK_I64(c.eks_tokens, expect_eks);
	restarts = c.list_restarts;
	kube_client_release(&c);
	kube_targets_free(v, n);
	buf_release(&err);
	return restarts;
}

static void test_simulator(void)
{
	char dir[600];
	snprintf(dir, sizeof dir, "%s/sim", tmp);
	if (sim_start(dir) != 0) {
		printf("# simulator not available; skipping the end-to-end checks\n");
		sim_stop();
		return;
	}
	/* the simulator's kubeconfig plus contexts for its client-certificate and EKS users */
	struct buf env = BUF_INIT;
	write_file("sim-extra",
		   "contexts:\n"
		   "- {name: prod-cert, context: {cluster: prod, user: cert-user@prod}}\n"
		   "- {name: prod-eks, context: {cluster: prod, user: eks-admin@prod}}\n"
		   "- {name: prod-reader, context: {cluster: prod, user: reader@prod}}\n",
		   0600);
	buf_addf(&env, "%s/kubeconfig:%s", dir, path_in("sim-extra"));
	setenv("KUBECONFIG", env.s, 1);
	CHECK_I64(sim_list_as("prod", 1, 0), 0);
	CHECK_I64(sim_list_as("prod-cert", 1, 0), 0);
	CHECK_I64(sim_list_as("prod-eks", 1, 1), 0);
	/* the simulator's own expired continue token and throttling */
	CHECK_I64(sim_ctl(dir, "{\"service\":\"kube\",\"action\":\"list:persistentvolumes\","
			       "\"kind\":\"expire-continue\",\"count\":1}"),
		  0);
	CHECK_I64(sim_list_as("prod", 1, 0), 1);
	CHECK_I64(sim_ctl(dir, "{\"service\":\"kube\",\"action\":\"list:persistentvolumes\","
			       "\"kind\":\"throttle\",\"count\":1}"),
		  0);
	CHECK_I64(sim_list_as("prod-reader", 1, 0), 0);
	sim_ctl(dir, "{\"clear\":true}");

	/* RBAC: the reader may read but not delete */
	{
		struct kube_selection rs = {0};
		rs.context = "prod-reader";
		struct kube_target *rv = NULL;
		size_t rn = 0;
		struct buf e = BUF_INIT;
		if (kube_targets_load(&rv, &rn, &rs, &e) == 0) {
			struct kube_client c;
			struct kube_client_options o = {0};
			CHECK_I64(kube_client_init(&c, &rv[0], &o, &e), 0);
			long st = 0;
			CHECK_I64(kube_get(&c, "/api/v1/nodes", NULL, NULL, &st, &e), 0);
			CHECK_I64(st, 200);
			CHECK_I64(kube_delete(&c, "/api/v1/persistentvolumes/nope", NULL, &e), EM_EAUTH);
			CHECK(strstr(e.s, "context 'prod-reader': DELETE /api/v1/persistentvolumes/nope: forbidden (HTTP 403): ")
			      != NULL);
			CHECK(strstr(e.s, "ebssim-prod-reader-token") == NULL);
			kube_client_release(&c);
			kube_targets_free(rv, rn);
		}
		buf_release(&e);
	}

	/* the full inventory read, over TLS, with usage from every node */
	struct kube_selection sel = {0};
	sel.context = "prod";
	struct kube_target *v = NULL;
	size_t n = 0;
	struct buf err = BUF_INIT;
	if (kube_targets_load(&v, &n, &sel, &err) == 0) {
		struct kube_client c;
		struct kube_client_options o = {0};
		CHECK_I64(kube_client_init(&c, &v[0], &o, &err), 0);
		struct kube_set ks;
		struct fleet fl;
		kube_set_init(&ks);
		fleet_init(&fl);
		int rc = kube_inventory_load(&c, "prod", &ks, &fl, KUBE_INV_ALL | KUBE_INV_USAGE, &err);
		CHECK_I64(rc, 0);
		if (rc)
			printf("# %s\n", err.s);
		CHECK(ks.n_pvs > 0);
		CHECK(ks.n_pvcs > 0);
		CHECK(ks.n_nodes > 0);
		CHECK(ks.n_usage > 0);
		CHECK(fl.n_clusters == 1 && fl.cluster_versions[0] != NULL);
		printf("# sim prod: %zu PVs, %zu PVCs, %zu nodes, %zu usage, %zu VACs, version %s, %zu notices\n", ks.n_pvs,
		       ks.n_pvcs, ks.n_nodes, ks.n_usage, fl.n_vacs, fl.cluster_versions[0] ? fl.cluster_versions[0] : "?",
		       fl.n_notices);
		kube_set_release(&ks);
		fleet_release(&fl);
		kube_client_release(&c);
		kube_targets_free(v, n);
	}
	buf_release(&err);
	buf_release(&env);
	unsetenv("KUBECONFIG");
	sim_stop();
}

/* Issue 28 item 2: a name is one path segment whatever it holds (kube_pathf), and a path whose
 * shape a name could have changed (an empty, "." or ".." segment, a fragment) is never sent. */
static void test_path_segments(void)
{
	static const char *const cases[][2] = {
		{"db", "/api/v1/namespaces/db/persistentvolumeclaims/data-0"},
		{"../../../apis/rbac.authorization.k8s.io/v1/clusterroles/admin#",
		 "/api/v1/namespaces/..%2F..%2F..%2Fapis%2Frbac.authorization.k8s.io%2Fv1%2Fclusterroles%2Fadmin%23/"
		 "persistentvolumeclaims/data-0"},
		{"..", "/api/v1/namespaces/%2E%2E/persistentvolumeclaims/data-0"},
		{".", "/api/v1/namespaces/%2E/persistentvolumeclaims/data-0"},
		{"...", "/api/v1/namespaces/.../persistentvolumeclaims/data-0"},
		{"a?watch=1&x=%", "/api/v1/namespaces/a%3Fwatch%3D1%26x%3D%25/persistentvolumeclaims/data-0"},
		{"sp ace\n", "/api/v1/namespaces/sp%20ace%0A/persistentvolumeclaims/data-0"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct buf p = BUF_INIT;
		kube_pathf(&p, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", cases[i][0], "data-0");
		CHECK_STR(p.s, cases[i][1]);
		buf_release(&p);
	}
	struct buf p = BUF_INIT;
	kube_pathf(&p, "/apis/batch/v1/namespaces/%s/jobs/%s?propagationPolicy=Background%%", "ns", "j/1");
	CHECK_STR(p.s, "/apis/batch/v1/namespaces/ns/jobs/j%2F1?propagationPolicy=Background%");
	buf_release(&p);

	/* default options: nothing here waits or retries */
	static const struct lb_response answer[] = {{200, NULL, "{}", 0, 0}};
	struct lb_server s;
	struct kube_target t;
	struct kube_client c;
	struct buf err = BUF_INIT, body = BUF_INIT;
	CHECK(lb_start(&s, answer, 1) == 0);
	make_target(&t, s.url, "s3cr3t");
	CHECK_I64(kube_client_init(&c, &t, NULL, &err), 0);
	kube_target_release(&t);
	static const char *const refused[] = {"/api/v1/namespaces//persistentvolumeclaims/x",
					      "/api/v1/namespaces/../../apis/rbac.authorization.k8s.io/v1/clusterroles/admin",
					      "/api/v1/namespaces/./pods", "/api/v1/namespaces/db/pods/x#frag", "/api/v1/nodes/.."};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		buf_reset(&err);
		CHECK_I64(kube_get(&c, refused[i], NULL, &body, NULL, &err), EM_EINPUT);
		CHECK(strstr(err.s, "refused: the path has an empty, '.' or '..' segment or a fragment") != NULL);
	}
	struct pages pg = {{0}, 0, 0};
	buf_reset(&err);
	CHECK_I64(kube_list(&c, "/api/v1/namespaces//pods", record_page, &pg, &err), EM_EINPUT);
	CHECK_I64(lb_count(&s), 0); /* nothing reached the server */
	buf_reset(&err);
	CHECK_I64(kube_get(&c, "/api/v1/namespaces/db/pods/...?x=/../", NULL, &body, NULL, &err), 0);
	CHECK_I64(lb_count(&s), 1);
	CHECK_STR(lb_req(&s, 0)->target, "/api/v1/namespaces/db/pods/...?x=/../");
	kube_client_release(&c);
	lb_stop(&s);
	buf_release(&err);
	buf_release(&body);
}

/* Credentials are never sent over http:// unless allowed (issue 12 item 9); an anonymous target is fine. */
static void test_plain_http_refused(void)
{
	struct buf err = BUF_INIT;
	struct kube_target t;
	struct kube_client c;
	make_target(&t, "http://127.0.0.1:9", "s3cr3t");
	CHECK_I64(kube_client_init(&c, &t, NULL, &err), EM_EINPUT);
	CHECK(strstr(err.s, "refusing to send the credentials of user") != NULL);
	CHECK(strstr(err.s, "'http://127.0.0.1:9'") != NULL);
	CHECK(strstr(err.s, "s3cr3t") == NULL);
	free(t.token);
	t.token = NULL;
	buf_reset(&err);
	CHECK_I64(kube_client_init(&c, &t, NULL, &err), 0);
	kube_client_release(&c);
	kube_target_release(&t);
	buf_release(&err);
}

int main(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/em-kubeclient-XXXXXX");
	if (!mkdtemp(tmp))
		return tap_skip_all("cannot make a temp directory");
	signal(SIGPIPE, SIG_IGN);
	mkdir(path_in("plug"), 0700);
	mkdir(path_in("bin"), 0700);
	write_file("plug/plugin", plugin_sh, 0700);
	/* the same script under the name aws, for the EKS fallback */
	write_file("bin/aws", plugin_sh, 0700);
	reset_env();
	test_plain_http_refused();
	/* the loopback servers below speak plain HTTP */
	kube_client_allow_insecure_http(1);
	test_list_pages();
	test_list_expires_forever();
	test_path_segments();
	test_status_errors();
	test_version_and_discovery();
	test_token_file();
	test_exec_protocol();
	test_exec_caching();
	test_eks_args();
	test_eks_native();
	test_inventory();
	test_simulator();
	int rc = tap_done();
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return rc;
}
