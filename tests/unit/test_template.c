/* test_template.c - {{name}} rendering, YAML and shell quoting, and the template loader
 * (a --templates-dir file overrides the built-in one of that name). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/template.h"
#include "tap.h"

static void check_render(const char *tpl, const char *const *vars, const char *want)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	CHECK(template_render(&out, tpl, "t.yaml", vars, &err) == 0);
	CHECK_STR(out.s, want);
	CHECK_STR(err.s, "");
	buf_release(&out);
	buf_release(&err);
}

static void test_render(void)
{
	const char *vars[] = {"name", "data", "block", "a: 1\nb: 2\n", "empty", "", NULL};
	check_render("name: {{name}}\n", vars, "name: data\n");
	check_render("x: {{ name }}-{{name}}\n", vars, "x: data-data\n");
	/* a block placeholder takes its line's indentation on every line */
	check_render("spec:\n  {{block}}\nend\n", vars, "spec:\n  a: 1\n  b: 2\nend\n");
	/* an empty block goes with its line */
	check_render("a\n    {{empty}}\nb\n", vars, "a\nb\n");
	struct buf out = BUF_INIT, err = BUF_INIT;
	CHECK_I64(template_render(&out, "x: {{nope}}\n", "t.yaml", vars, &err), EM_EINPUT);
	CHECK_STR(err.s, "template 't.yaml': unknown placeholder '{{nope}}'");
	buf_reset(&err);
	CHECK_I64(template_render(&out, "x: {{name\n}}\n", "t.yaml", vars, &err), EM_EINPUT);
	CHECK_STR(err.s, "template 't.yaml': '{{' without '}}' on the same line");
	buf_release(&out);
	buf_release(&err);
}

static void check_quote(void (*fn)(struct buf *, const char *), const char *s, const char *want)
{
	struct buf b = BUF_INIT;
	fn(&b, s);
	CHECK_STR(b.s, want);
	buf_release(&b);
}

static void test_quote(void)
{
	check_quote(template_yaml_quote, "gp3-3000-125", "gp3-3000-125");
	check_quote(template_yaml_quote, "yes", "\"yes\"");
	check_quote(template_yaml_quote, "3000", "\"3000\"");
	check_quote(template_yaml_quote, "a\"b\n", "\"a\\\"b\\n\"");
	check_quote(template_yaml_quote, NULL, "\"\"");
	check_quote(template_sh_quote, "vol-0a1", "vol-0a1");
	check_quote(template_sh_quote, "it's", "'it'\\''s'");
	check_quote(template_sh_quote, "", "''");
}

static void test_load(void)
{
	struct buf text = BUF_INIT, err = BUF_INIT;
	char *name = NULL;
	CHECK(template_load(&text, &name, NULL, "vac.yaml", &err) == 0);
	CHECK_STR(name, "templates/vac.yaml");
	CHECK(strstr(text.s, "VolumeAttributesClass") != NULL);
	free(name);
	buf_reset(&text);
	CHECK_I64(template_load(&text, &name, NULL, "nope.yaml", &err), EM_ENOTFOUND);
	CHECK_STR(err.s, "template 'templates/nope.yaml' is not built in");
	free(name);
	buf_reset(&err);
	/* an override directory wins for the files it has, the built-in one stays for the others */
	char dir[] = "/tmp/test_template.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[64];
	snprintf(path, sizeof path, "%s/vac.yaml", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("kind: Mine\n", f);
		fclose(f);
	}
	CHECK(template_load(&text, &name, dir, "vac.yaml", &err) == 0);
	CHECK_STR(name, path);
	CHECK_STR(text.s, "kind: Mine\n");
	free(name);
	buf_reset(&text);
	CHECK(template_load(&text, &name, dir, "kustomization.yaml", &err) == 0);
	CHECK_STR(name, "templates/kustomization.yaml");
	free(name);
	unlink(path);
	rmdir(dir);
	buf_release(&text);
	buf_release(&err);
}

int main(void)
{
	test_render();
	test_quote();
	test_load();
	return tap_done();
}
