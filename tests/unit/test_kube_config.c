/* test_kube_config.c - kubeconfig parsing, every field form, client-go merge rules across
 * KUBECONFIG files, relative paths, error texts for broken references, the in-cluster service
 * account and kube_targets_load's selection (all contexts, in-cluster fallback). Files live in a
 * fresh temp directory; the environment is reset per test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/kube_config.h"
#include "tap.h"

static char tmp[256];

#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIBdummyCA\n-----END CERTIFICATE-----\n"
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nMIIBdummyCERT\n-----END CERTIFICATE-----\n"
#define KEY_PEM "-----BEGIN EC PRIVATE KEY-----\nMHcdummyKEY\n-----END EC PRIVATE KEY-----\n"

static const char *path_in(const char *rel)
{
	static char p[8][512];
	static int i;
	i = (i + 1) % 8;
	snprintf(p[i], sizeof p[i], "%s/%s", tmp, rel);
	return p[i];
}

static void write_file(const char *rel, const char *text)
{
	const char *p = path_in(rel);
	char dir[512];
	snprintf(dir, sizeof dir, "%s", p);
	char *slash = strrchr(dir, '/');
	*slash = '\0';
	struct buf err = BUF_INIT;
	em_mkdirs(dir, 0700, &err);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	buf_release(&err);
}

static char *b64(const char *s)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s);
	struct buf b = BUF_INIT;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		buf_addc(&b, tbl[(v >> 18) & 63]);
		buf_addc(&b, tbl[(v >> 12) & 63]);
		buf_addc(&b, i + 1 < n ? tbl[(v >> 6) & 63] : '=');
		buf_addc(&b, i + 2 < n ? tbl[v & 63] : '=');
	}
	return buf_detach(&b);
}

static void reset_env(void)
{
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	setenv("HOME", path_in("home"), 1);
}

/* The main fixture: every field form in one file under tmp/a/. */
static void write_fixture(void)
{
	char *ca = b64(CA_PEM), *cert = b64(CERT_PEM), *key = b64(KEY_PEM);
	struct buf y = BUF_INIT;
	buf_addf(&y,
		 "apiVersion: v1\n"
		 "kind: Config\n"
		 "preferences: {}\n"
		 "current-context: ctx-token\n"
		 "clusters:\n"
		 "- name: c-file\n"
		 "  cluster:\n"
		 "    server: https://a.example:6443/\n"
		 "    certificate-authority: pki/ca.crt\n"
		 "- name: c-data\n"
		 "  cluster:\n"
		 "    server: \"https://b.example\"\n"
		 "    certificate-authority-data: %s\n"
		 "    certificate-authority: pki/missing.crt\n"
		 "- name: c-insecure\n"
		 "  cluster: {server: 'https://c.example:443', insecure-skip-tls-verify: true}\n"
		 "- name: c-both\n"
		 "  cluster:\n"
		 "    server: https://d.example\n"
		 "    certificate-authority-data: %s\n"
		 "    insecure-skip-tls-verify: true\n"
		 "- name: c-noserver\n"
		 "  cluster:\n"
		 "    certificate-authority: pki/ca.crt\n"
		 "- name: c-badca\n"
		 "  cluster:\n"
		 "    server: https://e.example\n"
		 "    certificate-authority: pki/nope.crt\n"
		 "- name: c-proxy\n"
		 "  cluster:\n"
		 "    server: https://f.example\n"
		 "    proxy-url: http://proxy:3128\n"
		 "users:\n"
		 "- name: u-token\n"
		 "  user:\n"
		 "    token: s3cr3t-token\n"
		 "- name: u-tokenfile\n"
		 "  user:\n"
		 "    token: ignored-token\n"
		 "    tokenFile: secrets/token\n"
		 "- name: u-certfile\n"
		 "  user:\n"
		 "    client-certificate: pki/client.crt\n"
		 "    client-key: /abs/ignored.key\n"
		 "    client-key-data: %s\n"
		 "- name: u-certdata\n"
		 "  user:\n"
		 "    client-certificate-data: %s\n"
		 "    client-key-data: %s\n"
		 "- name: u-exec1\n"
		 "  user:\n"
		 "    exec:\n"
		 "      apiVersion: client.authentication.k8s.io/v1\n"
		 "      command: ./bin/plugin\n"
		 "      args: [\"--flag\", \"value with space\"]\n"
		 "      env:\n"
		 "      - name: PLUGIN_MODE\n"
		 "        value: fast\n"
		 "      - {name: EMPTY}\n"
		 "      interactiveMode: Never\n"
		 "      provideClusterInfo: true\n"
		 "      installHint: install the plugin\n"
		 "- name: u-exec-beta\n"
		 "  user:\n"
		 "    exec:\n"
		 "      apiVersion: client.authentication.k8s.io/v1beta1\n"
		 "      command: aws\n"
		 "      args:\n"
		 "      - eks\n"
		 "      - get-token\n"
		 "      - --cluster-name\n"
		 "      - prod\n"
		 "- name: u-exec1-noim\n"
		 "  user:\n"
		 "    exec: {apiVersion: client.authentication.k8s.io/v1, command: plugin}\n"
		 "- name: u-alpha\n"
		 "  user:\n"
		 "    exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: aws}\n"
		 "- name: u-basic\n"
		 "  user: {username: admin, password: hunter2}\n"
		 "- name: u-authprov\n"
		 "  user:\n"
		 "    auth-provider:\n"
		 "      name: gcp\n"
		 "- name: u-keyonly\n"
		 "  user:\n"
		 "    client-key: pki/client.key\n"
		 "- name: u-badb64\n"
		 "  user:\n"
		 "    client-certificate-data: \"!!not base64!!\"\n"
		 "    client-key-data: %s\n"
		 "- name: u-notpem\n"
		 "  user:\n"
		 "    client-certificate-data: aGVsbG8=\n"
		 "    client-key-data: %s\n"
		 "- name: u-anon\n"
		 "  user: {}\n"
		 "contexts:\n"
		 "- name: ctx-token\n"
		 "  context: {cluster: c-file, user: u-token, namespace: apps}\n"
		 "- name: ctx-tokenfile\n"
		 "  context: {cluster: c-data, user: u-tokenfile}\n"
		 "- name: ctx-certfile\n"
		 "  context: {cluster: c-insecure, user: u-certfile}\n"
		 "- name: ctx-certdata\n"
		 "  context: {cluster: c-file, user: u-certdata}\n"
		 "- name: ctx-exec1\n"
		 "  context: {cluster: c-file, user: u-exec1}\n"
		 "- name: ctx-exec-beta\n"
		 "  context: {cluster: c-data, user: u-exec-beta}\n"
		 "- name: ctx-noim\n"
		 "  context: {cluster: c-file, user: u-exec1-noim}\n"
		 "- name: ctx-alpha\n"
		 "  context: {cluster: c-file, user: u-alpha}\n"
		 "- name: ctx-basic\n"
		 "  context: {cluster: c-file, user: u-basic}\n"
		 "- name: ctx-authprov\n"
		 "  context: {cluster: c-file, user: u-authprov}\n"
		 "- name: ctx-keyonly\n"
		 "  context: {cluster: c-file, user: u-keyonly}\n"
		 "- name: ctx-badb64\n"
		 "  context: {cluster: c-file, user: u-badb64}\n"
		 "- name: ctx-notpem\n"
		 "  context: {cluster: c-file, user: u-notpem}\n"
		 "- name: ctx-both\n"
		 "  context: {cluster: c-both, user: u-token}\n"
		 "- name: ctx-noserver\n"
		 "  context: {cluster: c-noserver, user: u-token}\n"
		 "- name: ctx-badca\n"
		 "  context: {cluster: c-badca}\n"
		 "- name: ctx-proxy\n"
		 "  context: {cluster: c-proxy}\n"
		 "- name: ctx-anon\n"
		 "  context: {cluster: c-insecure, user: u-anon}\n"
		 "- name: ctx-nouser\n"
		 "  context: {cluster: c-file}\n"
		 "- name: ctx-baduser\n"
		 "  context: {cluster: c-file, user: admin}\n"
		 "- name: ctx-badcluster\n"
		 "  context: {cluster: nowhere, user: u-token}\n"
		 "- name: ctx-nocluster\n"
		 "  context: {user: u-token}\n"
		 "- context: {cluster: c-file}\n",
		 ca, ca, key, cert, key, key, key);
	write_file("a/config", y.s);
	write_file("a/pki/ca.crt", CA_PEM);
	write_file("a/pki/client.crt", CERT_PEM);
	write_file("a/pki/client.key", KEY_PEM);
	write_file("a/secrets/token", "file-token\n");
	buf_release(&y);
	free(ca);
	free(cert);
	free(key);
}

static int resolve(struct kube_config *c, const char *ctx, struct kube_target *t, struct buf *err)
{
	buf_reset(err);
	return kube_config_resolve(t, c, ctx, err);
}

static void test_fields(void)
{
	reset_env();
	struct kube_config c;
	struct kube_target t;
	struct buf err = BUF_INIT;
	CHECK_I64(kube_config_load(&c, path_in("a/config"), &err), 0);
	CHECK_STR(err.s, "");
	CHECK_I64(kube_config_n_contexts(&c), 22); /* the nameless context is skipped */
	CHECK_STR(kube_config_context_name(&c, 0), "ctx-token");
	CHECK(kube_config_context_name(&c, 99) == NULL);

	/* current-context; token; CA file relative to the kubeconfig; namespace; trailing '/' */
	CHECK_I64(resolve(&c, NULL, &t, &err), 0);
	CHECK_STR(t.context, "ctx-token");
	CHECK_STR(t.cluster_name, "c-file");
	CHECK_STR(t.user_name, "u-token");
	CHECK_STR(t.server, "https://a.example:6443");
	CHECK_STR(t.namespace_, "apps");
	CHECK_STR(t.ca_file, path_in("a/pki/ca.crt"));
	CHECK(t.ca_pem == NULL);
	CHECK_STR(t.token, "s3cr3t-token");
	CHECK(t.token_file == NULL && !t.has_exec && !t.insecure && !t.in_cluster);
	char origin[600];
	snprintf(origin, sizeof origin, "kubeconfig '%s'", path_in("a/config"));
	CHECK_STR(t.origin, origin);
	kube_target_release(&t);

	/* CA data wins over the file form; tokenFile wins over token, resolved relative */
	CHECK_I64(resolve(&c, "ctx-tokenfile", &t, &err), 0);
	CHECK_STR(t.ca_pem, CA_PEM);
	CHECK(t.ca_file == NULL);
	CHECK_STR(t.token_file, path_in("a/secrets/token"));
	CHECK(t.token == NULL);
	CHECK_STR(t.namespace_, "default");
	kube_target_release(&t);

	/* insecure; client cert file (relative) + key data winning over its file form */
	CHECK_I64(resolve(&c, "ctx-certfile", &t, &err), 0);
	CHECK(t.insecure == 1);
	CHECK_STR(t.server, "https://c.example:443");
	CHECK_STR(t.client_cert_file, path_in("a/pki/client.crt"));
	CHECK(t.client_key_file == NULL);
	CHECK_STR(t.client_key_pem, KEY_PEM);
	kube_target_release(&t);

	/* cert and key data */
	CHECK_I64(resolve(&c, "ctx-certdata", &t, &err), 0);
	CHECK_STR(t.client_cert_pem, CERT_PEM);
	CHECK_STR(t.client_key_pem, KEY_PEM);
	CHECK(t.client_cert_file == NULL && t.token == NULL);
	kube_target_release(&t);

	/* exec v1 with env, args, relative command, provideClusterInfo, installHint */
	CHECK_I64(resolve(&c, "ctx-exec1", &t, &err), 0);
	CHECK(t.has_exec);
	CHECK_STR(t.exec.api_version, KUBE_EXEC_V1);
	CHECK_STR(t.exec.command, path_in("a/./bin/plugin"));
	CHECK_I64(t.exec.n_args, 2);
	CHECK_STR(t.exec.args[1], "value with space");
	CHECK_I64(t.exec.n_env, 2);
	CHECK_STR(t.exec.env[0].name, "PLUGIN_MODE");
	CHECK_STR(t.exec.env[0].value, "fast");
	CHECK_STR(t.exec.env[1].name, "EMPTY");
	CHECK_STR(t.exec.env[1].value, "");
	CHECK_I64(t.exec.interactive_mode, KUBE_INTERACTIVE_NEVER);
	CHECK(t.exec.provide_cluster_info == 1);
	CHECK_STR(t.exec.install_hint, "install the plugin");
	struct kube_target copy;
	kube_target_copy(&copy, &t);
	kube_target_release(&t);
	CHECK_STR(copy.exec.env[0].value, "fast");
	CHECK_STR(copy.exec.args[0], "--flag");
	kube_target_release(&copy);

	/* exec v1beta1: a bare command stays for PATH lookup; interactiveMode defaults */
	CHECK_I64(resolve(&c, "ctx-exec-beta", &t, &err), 0);
	CHECK_STR(t.exec.command, "aws");
	CHECK_I64(t.exec.n_args, 4);
	CHECK_I64(t.exec.interactive_mode, KUBE_INTERACTIVE_IF_AVAILABLE);
	CHECK(t.exec.provide_cluster_info == 0);
	kube_target_release(&t);

	/* anonymous user and a context without a user */
	CHECK_I64(resolve(&c, "ctx-anon", &t, &err), 0);
	CHECK(t.token == NULL && !t.has_exec && t.client_cert_file == NULL);
	kube_target_release(&t);
	CHECK_I64(resolve(&c, "ctx-nouser", &t, &err), 0);
	CHECK(t.user_name == NULL);
	kube_target_release(&t);

	kube_config_release(&c);
	buf_release(&err);
}

static void test_errors(void)
{
	reset_env();
	struct kube_config c;
	struct kube_target t;
	struct buf err = BUF_INIT, want = BUF_INIT;
	const char *cfg = path_in("a/config");
	CHECK_I64(kube_config_load(&c, cfg, &err), 0);

#define WANT(...) (buf_reset(&want), buf_addf(&want, __VA_ARGS__), want.s)
	CHECK_I64(resolve(&c, "ctx-baduser", &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': context 'ctx-baduser' names user 'admin' which is not defined", cfg));
	CHECK_I64(resolve(&c, "ctx-badcluster", &t, &err), EM_EINPUT);
	CHECK_STR(err.s,
		  WANT("kubeconfig '%s': context 'ctx-badcluster' names cluster 'nowhere' which is not defined", cfg));
	CHECK_I64(resolve(&c, "ctx-nocluster", &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': context 'ctx-nocluster' names no cluster", cfg));
	CHECK_I64(resolve(&c, "nope", &t, &err), EM_ENOTFOUND);
	CHECK(strncmp(err.s, WANT("kubeconfig '%s': context 'nope' not found (contexts: ctx-token, ctx-tokenfile,", cfg),
		      want.len) == 0);
	CHECK_I64(resolve(&c, "ctx-noserver", &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': cluster 'c-noserver': no server", cfg));
	CHECK_I64(resolve(&c, "ctx-both", &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': cluster 'c-both': certificate-authority and insecure-skip-tls-verify "
			      "cannot both be set",
			      cfg));
	CHECK_I64(resolve(&c, "ctx-badca", &t, &err), EM_ENOTFOUND);
	CHECK_STR(err.s, WANT("kubeconfig '%s': cluster 'c-badca': cannot read certificate-authority '%s': No such "
			      "file or directory",
			      cfg, path_in("a/pki/nope.crt")));
	CHECK_I64(resolve(&c, "ctx-proxy", &t, &err), EM_EUNSUPPORTED);
	CHECK_STR(err.s, WANT("kubeconfig '%s': cluster 'c-proxy': proxy-url is not supported; set HTTPS_PROXY in the "
			      "environment instead",
			      cfg));
	CHECK_I64(resolve(&c, "ctx-noim", &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': user 'u-exec1-noim': exec: interactiveMode must be set with "
			      "apiVersion client.authentication.k8s.io/v1",
			      cfg));
	CHECK_I64(resolve(&c, "ctx-alpha", &t, &err), EM_EUNSUPPORTED);
	CHECK(strstr(err.s, "user 'u-alpha': exec: apiVersion client.authentication.k8s.io/v1alpha1 is no longer "
			    "supported") != NULL);
	CHECK_I64(resolve(&c, "ctx-basic", &t, &err), EM_EUNSUPPORTED);
	CHECK_STR(err.s, WANT("kubeconfig '%s': user 'u-basic': basic authentication (username/password) is not "
			      "supported",
			      cfg));
	CHECK(strstr(err.s, "hunter2") == NULL);
	CHECK_I64(resolve(&c, "ctx-authprov", &t, &err), EM_EUNSUPPORTED);
	CHECK_STR(err.s, WANT("kubeconfig '%s': user 'u-authprov': auth-provider 'gcp' is not supported; use its exec "
			      "credential plugin instead",
			      cfg));
	CHECK_I64(resolve(&c, "ctx-keyonly", &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': user 'u-keyonly': client-key is set but client-certificate is not", cfg));
	CHECK_I64(resolve(&c, "ctx-badb64", &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': user 'u-badb64': client-certificate-data is not valid base64", cfg));
	CHECK_I64(resolve(&c, "ctx-notpem", &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': user 'u-notpem': client-certificate-data does not hold a PEM "
			      "certificate",
			      cfg));
	kube_config_release(&c);

	/* file-level errors */
	write_file("bad/yaml", "clusters:\n- name: x\n  cluster: {server: [\n");
	CHECK_I64(kube_config_load(&c, path_in("bad/yaml"), &err), EM_EINPUT);
	CHECK(strstr(err.s, WANT("kubeconfig '%s': not valid YAML at line", path_in("bad/yaml"))) != NULL);
	buf_reset(&err);
	write_file("bad/list", "- a\n- b\n");
	CHECK_I64(kube_config_load(&c, path_in("bad/list"), &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': expected a mapping at the top level", path_in("bad/list")));
	buf_reset(&err);
	write_file("bad/users", "users: {a: b}\n");
	CHECK_I64(kube_config_load(&c, path_in("bad/users"), &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': users: expected a list", path_in("bad/users")));
	buf_reset(&err);
	write_file("bad/server", "clusters:\n- name: x\n  cluster: {server: [1]}\ncontexts:\n- name: x\n  context: "
				 "{cluster: x}\n");
	CHECK_I64(kube_config_load(&c, path_in("bad/server"), &err), 0);
	CHECK_I64(resolve(&c, "x", &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': cluster 'x': server: expected a string", path_in("bad/server")));
	kube_config_release(&c);
	buf_reset(&err);
	write_file("bad/noctx", "clusters: []\n");
	CHECK_I64(kube_config_load(&c, path_in("bad/noctx"), &err), 0);
	CHECK_I64(resolve(&c, NULL, &t, &err), EM_EINPUT);
	CHECK_STR(err.s, WANT("kubeconfig '%s': no current-context is set (use --context or --all-contexts; it "
			      "defines no contexts)",
			      path_in("bad/noctx")));
	kube_config_release(&c);
	buf_reset(&err);
	CHECK_I64(kube_config_load(&c, path_in("bad/absent"), &err), EM_ENOTFOUND);
	CHECK_STR(err.s, WANT("kubeconfig: cannot read '%s': No such file or directory", path_in("bad/absent")));
	/* an empty file is an empty config */
	buf_reset(&err);
	write_file("bad/empty", "");
	CHECK_I64(kube_config_load(&c, path_in("bad/empty"), &err), 0);
	CHECK_I64(kube_config_n_contexts(&c), 0);
	kube_config_release(&c);
#undef WANT
	buf_release(&err);
	buf_release(&want);
}

static void test_merge(void)
{
	reset_env();
	write_file("m1/config",
		   "clusters:\n"
		   "- name: shared\n"
		   "  cluster: {server: https://first.example, certificate-authority: ca.crt}\n"
		   "users:\n"
		   "- name: shared-user\n"
		   "  user: {token: first-token}\n"
		   "contexts:\n"
		   "- name: one\n"
		   "  context: {cluster: shared, user: shared-user}\n"
		   "current-context: one\n");
	write_file("m1/ca.crt", CA_PEM);
	write_file("m2/config",
		   "clusters:\n"
		   "- name: shared\n"
		   "  cluster: {server: https://second.example, insecure-skip-tls-verify: true}\n"
		   "- name: only-two\n"
		   "  cluster: {server: https://two.example, certificate-authority: ca2.crt}\n"
		   "users:\n"
		   "- name: shared-user\n"
		   "  user: {client-certificate: c.crt, client-key: c.key}\n"
		   "contexts:\n"
		   "- name: one\n"
		   "  context: {cluster: only-two, user: shared-user}\n"
		   "- name: two\n"
		   "  context: {cluster: only-two, user: shared-user}\n"
		   "current-context: two\n");
	write_file("m2/ca2.crt", CA_PEM);
	write_file("m3/config", "contexts:\n- name: three\n  context: {cluster: shared}\n");

	struct kube_config c;
	struct kube_target t;
	struct buf err = BUF_INIT, env = BUF_INIT;

	/* first file wins for every name and for current-context; entries are taken whole */
	buf_addf(&env, "%s::%s:%s:%s", path_in("m1/config"), path_in("absent/config"), path_in("m2/config"),
		 path_in("m1/config"));
	setenv("KUBECONFIG", env.s, 1);
	CHECK_I64(kube_config_load(&c, NULL, &err), 0);
	CHECK_STR(err.s, "");
	CHECK_I64(c.n_files, 2);
	CHECK_I64(kube_config_n_contexts(&c), 2);
	CHECK_STR(kube_config_context_name(&c, 1), "two");
	CHECK_I64(resolve(&c, NULL, &t, &err), 0);
	CHECK_STR(t.context, "one");
	CHECK_STR(t.server, "https://first.example");
	CHECK_STR(t.ca_file, path_in("m1/ca.crt"));
	CHECK(!t.insecure);
	CHECK_STR(t.token, "first-token");
	CHECK(t.client_cert_file == NULL); /* not merged from m2's shared-user */
	kube_target_release(&t);
	/* a context from the second file resolves its own relative paths against its directory */
	CHECK_I64(resolve(&c, "two", &t, &err), 0);
	CHECK_STR(t.server, "https://two.example");
	CHECK_STR(t.ca_file, path_in("m2/ca2.crt"));
	CHECK_STR(t.token, "first-token");
	kube_target_release(&t);
	kube_config_release(&c);

	/* current-context comes from the first file that sets one */
	buf_reset(&env);
	buf_addf(&env, "%s:%s:%s", path_in("m3/config"), path_in("m2/config"), path_in("m1/config"));
	setenv("KUBECONFIG", env.s, 1);
	CHECK_I64(kube_config_load(&c, NULL, &err), 0);
	CHECK_STR(c.current_context, "two");
	CHECK_I64(resolve(&c, "three", &t, &err), 0);
	CHECK_STR(t.server, "https://second.example");
	CHECK(t.insecure);
	kube_target_release(&t);
	/* shared-user now comes from m2 and names files that do not exist */
	CHECK_I64(resolve(&c, "one", &t, &err), EM_ENOTFOUND);
	CHECK(strstr(err.s, "user 'shared-user': cannot read client-certificate") != NULL);
	kube_config_release(&c);

	/* --kubeconfig ignores KUBECONFIG */
	buf_reset(&err);
	CHECK_I64(kube_config_load(&c, path_in("m3/config"), &err), 0);
	CHECK_I64(kube_config_n_contexts(&c), 1);
	kube_config_release(&c);

	/* nothing in KUBECONFIG exists */
	buf_reset(&env);
	buf_addf(&env, "%s:%s", path_in("absent/1"), path_in("absent/2"));
	setenv("KUBECONFIG", env.s, 1);
	buf_reset(&err);
	CHECK_I64(kube_config_load(&c, NULL, &err), EM_ENOTFOUND);
	CHECK(strstr(err.s, "no kubeconfig found: none of the files in KUBECONFIG") != NULL);

	/* ~/.kube/config */
	unsetenv("KUBECONFIG");
	buf_reset(&err);
	CHECK_I64(kube_config_load(&c, NULL, &err), EM_ENOTFOUND);
	CHECK(strstr(err.s, "/home/.kube/config' does not exist and KUBECONFIG is not set") != NULL);
	write_file("home/.kube/config", "current-context: x\ncontexts:\n- name: x\n  context: {cluster: y}\n"
					"clusters:\n- name: y\n  cluster: {server: 'http://127.0.0.1:1'}\n");
	buf_reset(&err);
	CHECK_I64(kube_config_load(&c, NULL, &err), 0);
	CHECK_I64(resolve(&c, NULL, &t, &err), 0);
	CHECK_STR(t.server, "http://127.0.0.1:1");
	kube_target_release(&t);
	kube_config_release(&c);

	/* JSON is YAML too */
	write_file("json/config", "{\"apiVersion\":\"v1\",\"kind\":\"Config\",\"clusters\":[{\"name\":\"j\",\"cluster\":"
				  "{\"server\":\"https://j.example\",\"insecure-skip-tls-verify\":true}}],\"users\":[{"
				  "\"name\":\"u\",\"user\":{\"token\":\"jt\"}}],\"contexts\":[{\"name\":\"j\","
				  "\"context\":{\"cluster\":\"j\",\"user\":\"u\"}}],\"current-context\":\"j\"}");
	CHECK_I64(kube_config_load(&c, path_in("json/config"), &err), 0);
	CHECK_I64(resolve(&c, NULL, &t, &err), 0);
	CHECK_STR(t.token, "jt");
	CHECK(t.insecure);
	kube_target_release(&t);
	kube_config_release(&c);

	buf_release(&err);
	buf_release(&env);
}

static void test_in_cluster(void)
{
	reset_env();
	struct kube_target t;
	struct buf err = BUF_INIT;
	const char *sa = path_in("sa");
	CHECK_I64(kube_in_cluster_target(&t, sa, &err), EM_ENOTFOUND);
	CHECK_STR(err.s, "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
	setenv("KUBERNETES_SERVICE_HOST", "10.100.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	buf_reset(&err);
	CHECK_I64(kube_in_cluster_target(&t, sa, &err), EM_ENOTFOUND);
	CHECK(strstr(err.s, "in-cluster service account: cannot read token") != NULL);
	write_file("sa/token", "sa-token\n");
	write_file("sa/ca.crt", CA_PEM);
	write_file("sa/namespace", "ebs-tools\n");
	buf_reset(&err);
	CHECK_I64(kube_in_cluster_target(&t, sa, &err), 0);
	CHECK_STR(t.server, "https://10.100.0.1:443");
	CHECK_STR(t.token_file, path_in("sa/token"));
	CHECK_STR(t.ca_file, path_in("sa/ca.crt"));
	CHECK_STR(t.namespace_, "ebs-tools");
	CHECK_STR(t.context, "in-cluster");
	CHECK(t.in_cluster);
	kube_target_release(&t);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	CHECK_I64(kube_in_cluster_target(&t, sa, &err), 0);
	CHECK_STR(t.server, "https://[fd00::1]:443");
	kube_target_release(&t);

	/* kube_targets_load falls back to it when no kubeconfig exists */
	setenv("HOME", path_in("nohome"), 1);
	struct kube_selection sel = {0};
	sel.sa_dir = sa;
	struct kube_target *v;
	size_t n;
	buf_reset(&err);
	CHECK_I64(kube_targets_load(&v, &n, &sel, &err), 0);
	CHECK_I64(n, 1);
	CHECK(n == 1 && v[0].in_cluster);
	kube_targets_free(v, n);
	/* ... but not when a context was asked for */
	sel.context = "prod";
	CHECK_I64(kube_targets_load(&v, &n, &sel, &err), EM_ENOTFOUND);
	CHECK(strstr(err.s, "no kubeconfig found") != NULL);
	buf_release(&err);
}

static void test_selection(void)
{
	reset_env();
	struct kube_selection sel = {0};
	struct kube_target *v;
	size_t n;
	struct buf err = BUF_INIT;
	write_file("sel/config",
		   "clusters:\n"
		   "- {name: a, cluster: {server: 'https://a.example'}}\n"
		   "- {name: a-again, cluster: {server: 'https://a.example/'}}\n"
		   "- {name: b, cluster: {server: 'https://b.example'}}\n"
		   "contexts:\n"
		   "- {name: ca, context: {cluster: a}}\n"
		   "- {name: ca2, context: {cluster: a-again}}\n"
		   "- {name: cb, context: {cluster: b, namespace: x}}\n"
		   "current-context: cb\n");
	sel.kubeconfig = path_in("sel/config");
	CHECK_I64(kube_targets_load(&v, &n, &sel, &err), 0);
	CHECK_I64(n, 1);
	CHECK_STR(v[0].context, "cb");
	kube_targets_free(v, n);
	sel.context = "ca2";
	CHECK_I64(kube_targets_load(&v, &n, &sel, &err), 0);
	CHECK_STR(v[0].cluster_name, "a-again");
	kube_targets_free(v, n);
	sel.context = NULL;
	sel.all_contexts = 1;
	CHECK_I64(kube_targets_load(&v, &n, &sel, &err), 0);
	CHECK_I64(n, 2); /* ca2 reaches the same server as ca */
	CHECK_STR(v[0].context, "ca");
	CHECK_STR(v[1].context, "cb");
	kube_targets_free(v, n);
	CHECK_STR(err.s, "");
	/* one broken context fails the whole selection */
	write_file("sel/broken", "clusters:\n- {name: a, cluster: {server: 'https://a.example'}}\n"
				 "contexts:\n- {name: ok, context: {cluster: a}}\n- {name: bad, context: {cluster: zz}}\n");
	sel.kubeconfig = path_in("sel/broken");
	CHECK_I64(kube_targets_load(&v, &n, &sel, &err), EM_EINPUT);
	CHECK(v == NULL && n == 0);
	CHECK(strstr(err.s, "context 'bad' names cluster 'zz' which is not defined") != NULL);
	buf_release(&err);
}

static void test_base64(void)
{
	struct buf b = BUF_INIT;
	CHECK_I64(kube_base64_decode(&b, "aGVsbG8=", 8), 0);
	CHECK_STR(b.s, "hello");
	buf_reset(&b);
	CHECK_I64(kube_base64_decode(&b, "aGVs\nbG8", 8), 0); /* unpadded, wrapped */
	CHECK_STR(b.s, "hello");
	buf_reset(&b);
	CHECK_I64(kube_base64_decode(&b, "aGVsbA==", 8), 0);
	CHECK_STR(b.s, "hell");
	buf_reset(&b);
	CHECK_I64(kube_base64_decode(&b, "aGVsbG8=x", 9), EM_EINPUT);
	CHECK_I64(b.len, 0);
	CHECK_I64(kube_base64_decode(&b, "a", 1), EM_EINPUT);
	CHECK_I64(kube_base64_decode(&b, "a-b_", 4), EM_EINPUT);
	buf_release(&b);
}

int main(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/em-kubeconfig-XXXXXX");
	if (!mkdtemp(tmp))
		return tap_skip_all("cannot make a temp directory");
	write_fixture();
	test_fields();
	test_errors();
	test_merge();
	test_in_cluster();
	test_selection();
	test_base64();
	int rc = tap_done();
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return rc;
}
