/*
 * test_jsonx.c - the parse arena (jsonx_parse_in), Kubernetes list pages loaded through it, the
 * join taking the kube_set's strings, and the streamed inventory document; concatenated
 * documents (jsonx_docs), trailing data, typed members, the input file readers (the input size
 * limit, and the caps of small inputs), and strings holding raw control bytes (refused by every
 * reader at the string's opening quote).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/common.h"

#include "ebsmigrate/buf.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/inventory_output.h"
#include "ebsmigrate/jsonx.h"
#include "ebsmigrate/kube_objects.h"
#include "tap.h"

static void test_arena(void)
{
	struct jsonx_arena a = JSONX_ARENA_INIT;
	struct buf err = BUF_INIT;
	for (int round = 0; round < 3; round++) {
		cJSON *j = jsonx_parse_in(&a, "{\"a\":{\"b\":\"x\"},\"n\":[1,2,3]}", 27, "doc", &err);
		CHECK(j != NULL);
		CHECK_STR(jsonx_path_str(j, "a.b"), "x");
		CHECK_I64(cJSON_GetArraySize(jsonx_get(j, "n")), 3);
		jsonx_arena_reset(&a);
	}
	/* a tree larger than one chunk, with one string larger than a chunk */
	struct buf big = BUF_INIT;
	buf_adds(&big, "{\"long\":\"");
	for (int i = 0; i < (3 << 20); i++)
		buf_addc(&big, 'z');
	buf_adds(&big, "\",\"items\":[");
	for (int i = 0; i < 40000; i++)
		buf_addf(&big, "%s{\"k\":\"v%d\"}", i ? "," : "", i);
	buf_adds(&big, "]}");
	cJSON *j = jsonx_parse_in(&a, big.s, big.len, "big", &err);
	CHECK(j != NULL);
	CHECK_I64(strlen(jsonx_str(j, "long")), 3 << 20);
	CHECK_I64(cJSON_GetArraySize(jsonx_get(j, "items")), 40000);
	CHECK_STR(jsonx_str(cJSON_GetArrayItem(jsonx_get(j, "items"), 39999), "k"), "v39999");
	jsonx_arena_reset(&a);
	/* a failed parse reports where, and leaves the arena usable */
	CHECK(jsonx_parse_in(&a, "{\n\"a\": tru }", 12, "bad.json", &err) == NULL);
	CHECK(strstr(err.s, "bad.json: not valid JSON at line 2") != NULL);
	CHECK(jsonx_parse_in(&a, "[1]", 3, "ok", &err) != NULL);
	/* cJSON's own allocator is back outside jsonx_parse_in: an ordinary tree lives and dies
	 * in malloc (the sanitizer build would report a leak or a bad free otherwise) */
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "k", "v");
	char *printed = cJSON_PrintUnformatted(o);
	CHECK_STR(printed, "{\"k\":\"v\"}");
	free(printed);
	cJSON_Delete(o);
	jsonx_arena_release(&a);
	buf_release(&big);
	buf_release(&err);
}

/* Two PVs claim one PVC: both bindings carry the PVC's labels and attributes class. */
static const char pvs_json[] =
	"{\"kind\":\"PersistentVolumeList\",\"items\":["
	"{\"metadata\":{\"name\":\"pv-a\"},\"spec\":{\"csi\":{\"driver\":\"ebs.csi.aws.com\",\"volumeHandle\":\"vol-0a\"},"
	"\"claimRef\":{\"namespace\":\"db\",\"name\":\"data\"},\"storageClassName\":\"gp2\"}},"
	"{\"metadata\":{\"name\":\"pv-b\"},\"spec\":{\"csi\":{\"driver\":\"ebs.csi.aws.com\",\"volumeHandle\":\"vol-0b\"},"
	"\"claimRef\":{\"namespace\":\"db\",\"name\":\"data\"}}},"
	"{\"metadata\":{\"name\":\"pv-nfs\"},\"spec\":{\"nfs\":{\"server\":\"x\"}}}]}";
static const char pvcs_json[] =
	"{\"kind\":\"PersistentVolumeClaimList\",\"items\":["
	"{\"metadata\":{\"name\":\"data\",\"namespace\":\"db\",\"labels\":{\"app\":\"pg\",\"tier\":\"1\"}},"
	"\"spec\":{\"volumeName\":\"pv-a\",\"storageClassName\":\"fast\",\"volumeAttributesClassName\":\"gold\"}}]}";


/* A buf_spill that collects the pieces it is handed, counting them. */
struct spill_back {
	struct buf *b;
	size_t *pieces;
};

static void spill_collect(void *ctx, const char *s, size_t n)
{
	struct spill_back *x = ctx;
	buf_add(x->b, s, n);
	(*x->pieces)++;
}

static void test_list_and_join(void)
{
	struct kube_set ks;
	struct fleet f;
	struct buf err = BUF_INIT;
	kube_set_init(&ks);
	fleet_init(&f);
	fleet_add_volume(&f, "vol-0a");
	fleet_add_volume(&f, "vol-0b");
	CHECK_I64(kube_objects_load(&ks, &f, "c1", pvs_json, strlen(pvs_json), "pvs", &err), 2);
	CHECK_I64(ks.ignored_pvs, 1);
	CHECK_I64(kube_objects_load(&ks, &f, "c1", pvcs_json, strlen(pvcs_json), "pvcs", &err), 1);
	/* an item of a typed list that carries a kind of another type is not taken for the list's */
	CHECK(kube_objects_load(&ks, &f, "c1", "{\"kind\":\"PersistentVolumeList\",\"items\":[{\"kind\":3}]}", 53,
				"odd", &err) < 0);
	CHECK(strstr(err.s, "odd: items[0].kind: must be a string, got a number") != NULL);
	inventory_join(&f, &ks, 1);
	kube_set_release(&ks);
	for (size_t i = 0; i < 2; i++) {
		const struct kube_binding *b = f.vols[i].kube;
		CHECK(b != NULL);
		if (!b)
			continue;
		CHECK_STR(b->cluster, "c1");
		CHECK_STR(b->pv, i ? "pv-b" : "pv-a");
		CHECK_STR(b->namespace_, "db");
		CHECK_STR(b->pvc, "data");
		CHECK_STR(b->vac, "gold");
		CHECK_STR(b->storage_class, i ? "fast" : "gp2");
		CHECK_I64(b->n_labels, 2);
		if (b->n_labels == 2) {
			CHECK_STR(b->labels[0].key, "app");
			CHECK_STR(b->labels[1].value, "1");
		}
	}
	/* the streamed document is the in-memory one, byte for byte */
	const char *regions[] = {"us-east-1"};
	struct inventory_meta meta = {1767225600, "111122223333", regions, 1};
	struct buf mem = BUF_INIT;
	inventory_write_json(&mem, &f, &meta);
	struct buf back = BUF_INIT;
	size_t pieces = 0;
	struct spill_back sb = {&back, &pieces};
	struct buf_spill spill = {spill_collect, &sb};
	inventory_write_json_spilled(&f, &meta, &spill);
	CHECK(pieces >= 1);
	CHECK(back.len == mem.len && memcmp(back.s, mem.s, mem.len) == 0);
	buf_release(&back);
	buf_release(&mem);
	fleet_release(&f);
	buf_release(&err);
}

/* A stream of documents: each one read, in order, with the whitespace kubectl and the AWS CLI
 * put between them or none; errors point into the whole text. */
static void test_docs(void)
{
	struct buf err = BUF_INIT;
	const char *text = "{\"a\":1}\n{\"a\":2}{\"a\":3} [4]\n\n";
	for (int with_arena = 0; with_arena < 2; with_arena++) {
		struct jsonx_arena a = JSONX_ARENA_INIT;
		struct jsonx_docs d;
		jsonx_docs_init(&d, text, strlen(text), "s.json", with_arena ? &a : NULL);
		cJSON *doc;
		int seen[4] = {0}, rc, n = 0;
		while ((rc = jsonx_docs_next(&d, &doc, &err)) > 0) {
			if (n < 4)
				seen[n] = cJSON_IsArray(doc) ? (int)cJSON_GetArrayItem(doc, 0)->valuedouble
							     : (int)jsonx_get(doc, "a")->valuedouble;
			n++;
			if (with_arena)
				jsonx_arena_reset(&a);
			else
				cJSON_Delete(doc);
		}
		CHECK_I64(rc, 0);
		CHECK_I64(n, 4);
		CHECK_I64(d.count, 4);
		CHECK(seen[0] == 1 && seen[1] == 2 && seen[2] == 3 && seen[3] == 4);
		jsonx_arena_release(&a);
	}
	/* an error in the third document gives its line in the file */
	struct jsonx_docs d;
	const char *bad = "{}\n{}\n{\"x\": nope}";
	jsonx_docs_init(&d, bad, strlen(bad), "bad.json", NULL);
	cJSON *doc;
	CHECK_I64(jsonx_docs_next(&d, &doc, &err), 1);
	cJSON_Delete(doc);
	CHECK_I64(jsonx_docs_next(&d, &doc, &err), 1);
	cJSON_Delete(doc);
	CHECK_I64(jsonx_docs_next(&d, &doc, &err), EM_EINPUT);
	CHECK(doc == NULL);
	CHECK(strstr(err.s, "bad.json: not valid JSON at line 3, column 7") != NULL);
	buf_reset(&err);
	/* nothing but whitespace is an empty file, not zero documents */
	jsonx_docs_init(&d, " \n", 2, "e.json", NULL);
	CHECK_I64(jsonx_docs_next(&d, &doc, &err), EM_EINPUT);
	CHECK_STR(err.s, "e.json: empty file, expected JSON");
	buf_reset(&err);
	/* jsonx_parse wants one document: a second one or garbage after it is refused, never dropped */
	CHECK(jsonx_parse("{\"a\":1} {\"a\":2}", 15, "two.json", &err) == NULL);
	CHECK_STR(err.s, "two.json: unexpected data after the JSON document at line 1, column 9");
	buf_reset(&err);
	struct jsonx_arena a = JSONX_ARENA_INIT;
	CHECK(jsonx_parse_in(&a, "[1]\nx", 5, "x.json", &err) == NULL);
	CHECK_STR(err.s, "x.json: unexpected data after the JSON document at line 2, column 1");
	buf_reset(&err);
	cJSON *one = jsonx_parse("{\"a\":1}\n\n", 9, "one.json", &err);
	CHECK(one != NULL);
	cJSON_Delete(one);
	jsonx_arena_release(&a);
	buf_release(&err);
}

static void test_typed_members(void)
{
	struct buf err = BUF_INIT;
	const char *text = "{\"s\":\"x\",\"n\":1,\"z\":null,\"o\":{\"p\":{\"q\":\"deep\"},\"r\":[1]},\"a\":[]}";
	cJSON *j = jsonx_parse(text, strlen(text), "t.json", &err);
	CHECK(j != NULL);
	const char *s = "unset";
	const cJSON *arr = NULL;
	CHECK_I64(jsonx_want_str(j, "s", &s, "t.json", "root", &err), 0);
	CHECK_STR(s, "x");
	CHECK_I64(jsonx_want_str(j, "absent", &s, "t.json", "root", &err), 0);
	CHECK(s == NULL);
	CHECK_I64(jsonx_want_str(j, "z", &s, "t.json", "root", &err), 0);
	CHECK(s == NULL);
	CHECK_I64(jsonx_want_str(j, "n", &s, "t.json", "root", &err), EM_EINPUT);
	CHECK_STR(err.s, "t.json: root.n: must be a string, got a number");
	buf_reset(&err);
	CHECK_I64(jsonx_want_path_str(j, "o.p.q", &s, "t.json", "", &err), 0);
	CHECK_STR(s, "deep");
	CHECK_I64(jsonx_want_path_str(j, "o.missing.q", &s, "t.json", "", &err), 0);
	CHECK(s == NULL);
	CHECK_I64(jsonx_want_path_str(j, "o.r.x", &s, "t.json", "items[2]", &err), EM_EINPUT);
	CHECK_STR(err.s, "t.json: items[2].o.r: must be an object, got an array");
	buf_reset(&err);
	CHECK_I64(jsonx_want_path_str(j, "o.p", &s, "t.json", "", &err), EM_EINPUT);
	CHECK_STR(err.s, "t.json: o.p: must be a string, got an object");
	buf_reset(&err);
	CHECK_I64(jsonx_want_array(j, "a", &arr, "t.json", "root", &err), 0);
	CHECK(arr != NULL);
	CHECK_I64(jsonx_want_array(j, "s", &arr, "t.json", "root", &err), EM_EINPUT);
	CHECK(arr == NULL);
	CHECK_STR(err.s, "t.json: root.s: must be an array, got a string");
	cJSON_Delete(j);
	buf_release(&err);
}

/* em_read_file_max: a small input's own cap, checked while reading: a regular file by its size
 * (exactly the cap is read), a device that never ends (/dev/zero) stopped just past the cap
 * instead of at the 4 GiB input size limit; the input size limit still wins when it is lower. */
static void test_read_file_max(void)
{
	char dir[] = "/tmp/test_jsonx.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	struct buf path = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
	buf_addf(&path, "%s/hook.url", dir);
	FILE *f = fopen(path.s, "w");
	CHECK(f != NULL);
	if (f) {
		for (int i = 0; i < 64; i++)
			fputc(i ? 'x' : 'h', f);
		fclose(f);
	}
	CHECK_I64(em_read_file_max(path.s, 64, &out, &err), 0);
	CHECK_I64(out.len, 64);
	buf_reset(&out);
	CHECK_I64(em_read_file_max(path.s, 63, &out, &err), EM_ETOOBIG);
	CHECK_I64(out.len, 0);
	CHECK(strstr(err.s, "/hook.url' is 64 bytes, over the limit of 63 bytes for this input") != NULL);
	buf_reset(&err);
	CHECK_I64(em_read_file_max("/dev/zero", EM_MAX_TOKEN_FILE, &out, &err), EM_ETOOBIG);
	CHECK(out.len <= EM_MAX_TOKEN_FILE);
	CHECK_STR(err.s, "'/dev/zero' holds more than 64 KiB, the limit for this input");
	buf_reset(&out);
	buf_reset(&err);
	CHECK_I64(em_read_file_max("/dev/zero", EM_MAX_LIST_FILE, &out, &err), EM_ETOOBIG);
	CHECK_STR(err.s, "'/dev/zero' holds more than 4 MiB, the limit for this input");
	buf_reset(&out);
	buf_reset(&err);
	setenv("EBSMIGRATE_MAX_INPUT_SIZE", "10", 1);
	CHECK_I64(em_read_file_max(path.s, 64, &out, &err), EM_ETOOBIG);
	CHECK(strstr(err.s, "is 64 bytes, over the input size limit of 10 (set EBSMIGRATE_MAX_INPUT_SIZE") != NULL);
	unsetenv("EBSMIGRATE_MAX_INPUT_SIZE");
	buf_reset(&err);
	unlink(path.s);
	CHECK_I64(em_read_file_max(path.s, 64, &out, &err), EM_ENOTFOUND);
	rmdir(dir);
	buf_release(&path);
	buf_release(&out);
	buf_release(&err);
}

/* em_read_input: every way a named file cannot be read is bad input naming the file and the
 * reason; the size limit is checked before reading. */
static void test_read_input(void)
{
	char dir[] = "/tmp/test_jsonx.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	struct buf path = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
	buf_addf(&path, "%s/sub", dir);
	CHECK(mkdir(path.s, 0700) == 0);
	CHECK_I64(em_read_input(path.s, &out, &err), EM_EINPUT);
	CHECK(strstr(err.s, "/sub': Is a directory") != NULL);
	buf_reset(&err);
	CHECK_I64(em_read_file(path.s, &out, &err), EM_EIO); /* an internal file: a runtime error */
	buf_reset(&err);
	rmdir(path.s);
	buf_reset(&path);
	buf_addf(&path, "%s/loop", dir);
	CHECK(symlink(path.s, path.s) == 0);
	CHECK_I64(em_read_input(path.s, &out, &err), EM_EINPUT);
	CHECK(strstr(err.s, strerror(ELOOP)) != NULL);
	buf_reset(&err);
	unlink(path.s);
	CHECK_I64(em_read_input(path.s, &out, &err), EM_ENOTFOUND);
	buf_reset(&err);
	/* a regular file over the limit is refused by its size, one under it is read */
	buf_reset(&path);
	buf_addf(&path, "%s/f.json", dir);
	FILE *f = fopen(path.s, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("{\"Volumes\":[]}", f);
		fclose(f);
	}
	setenv("EBSMIGRATE_MAX_INPUT_SIZE", "10", 1);
	CHECK_I64(em_read_input(path.s, &out, &err), EM_ETOOBIG);
	CHECK_I64(out.len, 0);
	CHECK(strstr(err.s, "is 14 bytes, over the input size limit of 10") != NULL);
	buf_reset(&err);
	setenv("EBSMIGRATE_MAX_INPUT_SIZE", "1K", 1);
	CHECK_I64(em_read_input(path.s, &out, &err), 0);
	CHECK_I64(out.len, 14);
	int64_t cap = 0;
	CHECK_I64(em_max_input_size(&cap, &err), 0);
	CHECK_I64(cap, 1024);
	const char *bad[] = {"0", "-1", "1X", "K", "9999999999999T", " 5", "5KB"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		setenv("EBSMIGRATE_MAX_INPUT_SIZE", bad[i], 1);
		CHECK_I64(em_max_input_size(&cap, &err), EM_EINPUT);
	}
	unsetenv("EBSMIGRATE_MAX_INPUT_SIZE");
	CHECK_I64(em_max_input_size(&cap, &err), 0);
	CHECK_I64(cap, (int64_t)4 << 30);
	unlink(path.s);
	rmdir(dir);
	buf_release(&path);
	buf_release(&out);
	buf_release(&err);
}

/* The plain parser the stream tries first: what it accepts comes out as cJSON's tree (printed
 * alike, numbers and valueint alike, tail reachable from head->prev); the rest it declines. */
static void test_plain(void)
{
	struct jsonx_arena a = JSONX_ARENA_INIT;
	const char *ok[] = {
		"{\"VolumeId\": \"vol-1\", \"Size\": 100, \"Iops\": 0, \"Encrypted\": false, \"M\": true,\n"
		"\t\"KmsKeyId\": null, \"Attachments\": [{\"InstanceId\": \"i-1\", \"State\": \"attached\"}],"
		" \"Tags\": [], \"o\": {}, \"u\": \"caf\xc3\xa9\", \"big\": 999999999999999, \"i\": 2147483648}",
		"[1, [2, [3]], {\"k\": \"v\", \"k\": \"w\"}]",
		"{}",
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		const char *end = NULL, *ref_end = NULL;
		size_t len = strlen(ok[i]);
		cJSON *j = jsonx_parse_plain_in(&a, ok[i], len, &end);
		cJSON *ref = jsonx_parse_value_in(NULL, ok[i], len, &ref_end);
		CHECK(j != NULL && ref != NULL);
		if (!j || !ref) {
			cJSON_Delete(ref);
			continue;
		}
		CHECK(end == ok[i] + len && end == ref_end);
		char *got = cJSON_PrintUnformatted(j), *want = cJSON_PrintUnformatted(ref);
		CHECK_STR(got, want);
		free(got);
		free(want);
		CHECK(j->child == NULL || j->child->prev != NULL);
		if (i == 0) {
			CHECK_I64(jsonx_get(j, "big")->valueint, jsonx_get(ref, "big")->valueint);
			CHECK_I64(jsonx_get(j, "i")->valueint, 2147483647);
			CHECK(jsonx_get(j, "Size")->valuedouble == 100.0);
			CHECK(cJSON_IsNull(jsonx_get(j, "KmsKeyId")) && cJSON_IsFalse(jsonx_get(j, "Encrypted")));
			CHECK(jsonx_get(j, "M")->valueint == 1);
			CHECK(j->child->prev == jsonx_get(j, "i"));
			CHECK_STR(jsonx_str(j, "u"), "caf\xc3\xa9");
		}
		cJSON_Delete(ref);
		jsonx_arena_reset(&a);
	}
	/* outside the subset (cJSON reads them) or not valid JSON: declined, *end NULL */
	const char *declined[] = {
		"{\"a\": \"x\\ny\"}", "{\"a\": 1e5}", "{\"a\": 1.5}", "{\"a\": -1}", "{\"a\": 1234567890123456}",
		"{\"a\": \"tab\there\"}", "{\"a\": [1, 2", "{\"a\": nul}", "{\"a\": 1,}", "{\"a\" 1}", "\"str\"", "7",
		"[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]", "{\"a\": 1 ", "",
	};
	for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++) {
		const char *end = "unset";
		CHECK(jsonx_parse_plain_in(&a, declined[i], strlen(declined[i]), &end) == NULL);
		CHECK(end == NULL);
	}
	jsonx_arena_release(&a);
}

/* Line and column of an error found after many window moves (the stream counts the lines of what
 * it drops eight bytes at a time): as a whole-document parse puts them. */
static void test_stream_lines(void)
{
	struct buf text = BUF_INIT, err_whole = BUF_INIT, err_stream = BUF_INIT;
	buf_adds(&text, "{\"Volumes\": [");
	for (int i = 0; i < 3000; i++) /* lines of varied length; some '\n' bytes adjacent */
		buf_addf(&text, "%s\n{\"n\": %d, \"pad\": \"%.*s\"}\n%s", i ? "," : "", i, i % 37, "abcdefghijklmnopqrstuvwxyz0123456789",
			 i % 5 ? "" : "\n\n");
	buf_adds(&text, ",\n  {\"n\": tru}]}\n");
	CHECK(jsonx_parse(text.s, text.len, "v.json", &err_whole) == NULL);
	char path[] = "/tmp/test_jsonx_linesXXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, text.s, text.len) == (ssize_t)text.len);
	close(fd);
	for (size_t chunk = 5; chunk <= 9000; chunk = chunk * 3 + 1) {
		struct jsonx_arena a = JSONX_ARENA_INIT;
		struct jsonx_stream s;
		static const char *const keys[] = {"Volumes", NULL};
		buf_reset(&err_stream);
		int rc = jsonx_stream_open(&s, path, &a, keys, &err_stream);
		s.chunk = chunk;
		s.origin = "v.json";
		struct jsonx_event ev;
		size_t n = 0;
		if (!rc)
			while ((rc = jsonx_stream_next(&s, &ev, &err_stream)) > 0)
				n++;
		CHECK_I64(n, 3000);
		CHECK(rc < 0);
		CHECK_STR(err_stream.s, err_whole.s);
		jsonx_stream_close(&s);
		jsonx_arena_release(&a);
	}
	unlink(path);
	buf_release(&text);
	buf_release(&err_whole);
	buf_release(&err_stream);
}

/* RFC 8259: no raw control byte inside a string (cJSON takes them). Each reader refuses one at
 * the string's opening quote, saying what it holds; an unclosed quote (the AWS CLI docs'
 * describe-volumes example with `"VolumeType": "gp2,`) is reported on its own line, not at the
 * next key where cJSON stops. An escaped control character, and control bytes between tokens
 * (cJSON skips them as whitespace, so the stream does), stay accepted. */
static void stream_error(const char *text, const char *origin, size_t chunk, struct buf *err)
{
	static const char *const keys[] = {"Volumes", "items", NULL};
	struct jsonx_arena a = JSONX_ARENA_INIT;
	struct jsonx_stream s;
	struct jsonx_event ev;
	int rc;
	if (!chunk) {
		jsonx_stream_init_text(&s, text, strlen(text), origin, &a, keys);
		while ((rc = jsonx_stream_next(&s, &ev, err)) > 0)
			;
	} else {
		char path[] = "/tmp/test_jsonx_ctlXXXXXX";
		int fd = mkstemp(path);
		CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
		close(fd);
		rc = jsonx_stream_open(&s, path, &a, keys, err);
		s.chunk = chunk;
		s.origin = origin;
		while (!rc && (rc = jsonx_stream_next(&s, &ev, err)) > 0)
			;
		unlink(path);
	}
	CHECK_I64(rc, EM_EINPUT);
	jsonx_stream_close(&s);
	jsonx_arena_release(&a);
}

static void test_raw_control(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"{\n  \"Volumes\": [\n    {\n      \"VolumeType\": \"gp2,\n      \"VolumeId\": \"vol-0a\",\n"
		 "      \"Size\": 8\n    }\n  ]\n}\n",
		 "c.json: not valid JSON at line 4, column 21: the string starting here holds a raw line break (is "
		 "its closing quote missing?)"},
		{"{\"Volumes\": [{\"Tags\": [{\"Key\": \"Name\", \"Value\": \"a\nb\"}]}]}",
		 "c.json: not valid JSON at line 1, column 49: the string starting here holds a raw line break (is "
		 "its closing quote missing?)"},
		{"{\"kind\": \"List\", \"items\": [{\"a\": \"x\ty\"}]}",
		 "c.json: not valid JSON at line 1, column 34: the string starting here holds a raw tab, which JSON "
		 "writes as \\t"},
		{"{\"na\x01me\": 1}",
		 "c.json: not valid JSON at line 1, column 2: the string starting here holds the raw control byte "
		 "0x01, which JSON writes as \\u0001"},
		{"[\"\x1f\"]", "c.json: not valid JSON at line 1, column 2: the string starting here holds the raw "
				 "control byte 0x1f, which JSON writes as \\u001f"},
		/* an error cJSON finds before the bad string is still reported where it is */
		{"{\"a\": nope, \"b\": \"x\ny\"}", "c.json: not valid JSON at line 1, column 7"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct buf err = BUF_INIT;
		const char *t = cases[i].text;
		CHECK(jsonx_parse(t, strlen(t), "c.json", &err) == NULL);
		CHECK_STR(err.s, cases[i].want);
		buf_reset(&err);
		struct jsonx_arena a = JSONX_ARENA_INIT;
		CHECK(jsonx_parse_in(&a, t, strlen(t), "c.json", &err) == NULL);
		CHECK_STR(err.s, cases[i].want);
		jsonx_arena_release(&a);
		for (size_t chunk = 0; chunk < 40; chunk = chunk * 2 + 3) { /* memory, then files read in small pieces */
			buf_reset(&err);
			stream_error(t, "c.json", chunk, &err);
			CHECK_STR(err.s, cases[i].want);
		}
		buf_release(&err);
	}
	CHECK_I64(jsonx_find_raw_control("{\"a\": \"\\\"\n\"}", 12), 6); /* after an escaped quote */
	CHECK_I64(jsonx_find_raw_control("{\"a\": \"ok\"}\n", 12), 12);
	const char *fine[] = {"{\"a\": \"x\\ny\\t\\u0001\"}", "{\x01\"a\"\x1f:\t1}", "[\"\\\\\", \"\x7f\"]"};
	for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
		struct buf err = BUF_INIT;
		cJSON *j = jsonx_parse(fine[i], strlen(fine[i]), "ok.json", &err);
		CHECK(j != NULL);
		CHECK_I64(err.len, 0);
		cJSON_Delete(j);
		buf_release(&err);
	}
}

int main(void)
{
	test_raw_control();
	test_plain();
	test_stream_lines();
	test_docs();
	test_typed_members();
	test_read_input();
	test_read_file_max();
	test_arena();
	test_list_and_join();
	return tap_done();
}
