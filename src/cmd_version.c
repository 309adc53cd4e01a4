/*
 * cmd_version.c - `ebsmigrate version [--format text|json]`: the version, the git commit and
 * build date captured when the binary was built (build_info.h, written by
 * cmake/build_info.cmake; SOURCE_DATE_EPOCH honoured), and the versions of the libraries
 * linked, as each library reports itself at run time (the shared library actually loaded,
 * not the headers built against).
 *
 * Entry points: cmd_version, cmd_build_commit, cmd_build_date.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <expat.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <yaml.h>
#include <zlib.h>

#include "build_info.h"
#include "ebsmigrate/cmd.h"
#include "ebsmigrate/cmd_doc.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/log.h"

enum { OPT_VFORMAT = 1 };

static const struct cmd_option version_options[] = {
	{"format", 0, ARG_REQUIRED, "FORMAT", "text (default) or json", OPT_VFORMAT},
	{NULL, 0, 0, NULL, NULL, 0},
};
static const char *const version_usage[] = {"[--format text|json]", NULL};
const struct cmd_help version_help = {
	.usage = version_usage,
	.description = "Prints the version, the git commit it was built from (with -dirty when the tree had "
		       "uncommitted changes), the build date (SOURCE_DATE_EPOCH when set at build time, else the "
		       "commit's date, so two builds of one commit are identical) and the versions of the "
		       "libraries linked: libcurl, OpenSSL, SQLite, cJSON, libyaml, expat and zlib. "
		       "`ebsmigrate --version` prints the first line only.",
	.options = version_options,
};

const char *cmd_build_commit(void)
{
	return EM_BUILD_COMMIT;
}

const char *cmd_build_date(void)
{
	return EM_BUILD_DATE;
}

struct lib_version {
	const char *name;
	char version[64];
};

/* "expat_2.5.0" -> "2.5.0"; anything else as given. */
static void set_version(struct lib_version *l, const char *name, const char *v, const char *prefix)
{
	l->name = name;
	if (!v)
		v = "unknown";
	if (prefix && strncmp(v, prefix, strlen(prefix)) == 0)
		v += strlen(prefix);
	snprintf(l->version, sizeof l->version, "%s", v);
}

enum { N_LIBS = 7 };

static void library_versions(struct lib_version *libs)
{
	set_version(&libs[0], "libcurl", curl_version_info(CURLVERSION_NOW)->version, NULL);
	set_version(&libs[1], "OpenSSL", OpenSSL_version(OPENSSL_VERSION_STRING), NULL);
	set_version(&libs[2], "SQLite", sqlite3_libversion(), NULL);
	set_version(&libs[3], "cJSON", cJSON_Version(), NULL);
	set_version(&libs[4], "libyaml", yaml_get_version_string(), NULL);
	set_version(&libs[5], "expat", XML_ExpatVersion(), "expat_");
	set_version(&libs[6], "zlib", zlibVersion(), NULL);
}

static int on_option(void *st, int id, const char *arg)
{
	int *json = st;
	if (id == OPT_VFORMAT && (strcmp(arg, "text") == 0 || strcmp(arg, "json") == 0)) {
		*json = strcmp(arg, "json") == 0;
		return 0;
	}
	log_error("--format: '%s' is not one of text, json", arg);
	return EXIT_USAGE;
}

int cmd_version(struct cmd_ctx *ctx, int argc, char **argv)
{
	char **rest;
	int n_rest, json = 0;
	int rc = cmd_parse(ctx, cmd_find("version"), argc, argv, on_option, &json, &rest, &n_rest);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (n_rest) {
		log_error("version: unexpected argument '%s'", rest[0]);
		return EXIT_USAGE;
	}
	struct lib_version libs[N_LIBS];
	library_versions(libs);
	struct buf b = BUF_INIT;
	if (json) {
		cJSON *doc = cJSON_CreateObject(), *l = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "schema", "ebsmigrate.version/v1");
		cJSON_AddStringToObject(doc, "version", EM_VERSION);
		cJSON_AddStringToObject(doc, "commit", EM_BUILD_COMMIT);
		cJSON_AddStringToObject(doc, "build_date", EM_BUILD_TIME);
		for (int i = 0; i < N_LIBS; i++)
			cJSON_AddStringToObject(l, libs[i].name, libs[i].version);
		cJSON_AddItemToObject(doc, "libraries", l);
		char *s = cJSON_Print(doc);
		if (!s) {
			cJSON_Delete(doc);
			log_error("version: out of memory");
			return EXIT_RUNTIME;
		}
		buf_addf(&b, "%s\n", s);
		cJSON_free(s);
		cJSON_Delete(doc);
	} else {
		buf_addf(&b, "ebsmigrate %s\ncommit:     %s\nbuilt:      %s\nlibraries: ", EM_VERSION, EM_BUILD_COMMIT,
			 EM_BUILD_TIME);
		for (int i = 0; i < N_LIBS; i++)
			buf_addf(&b, " %s %s%s", libs[i].name, libs[i].version, i + 1 < N_LIBS ? "," : "\n");
	}
	rc = cmd_write_output(NULL, &b);
	buf_release(&b);
	return rc;
}
