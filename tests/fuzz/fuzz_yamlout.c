/* fuzz_yamlout.c - the -o yaml converter (yamlout_from_json, yamlout_from_json_file) on any
 * text: it converts or refuses with a message, never undefined behaviour; the memory and the
 * streamed (file, read in 64 KiB windows) paths agree byte for byte; and every YAML it writes
 * is read back by libyaml's parser without an error. */
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

#include "ebsmigrate/yamlout.h"
#include "fuzz.h"

static void must(int ok)
{
	if (!ok)
		abort();
}

/* libyaml's parser reads the whole text without an error. */
static int yaml_parses(const char *s, size_t n)
{
	yaml_parser_t p;
	yaml_event_t ev;
	must(yaml_parser_initialize(&p));
	yaml_parser_set_input_string(&p, (const unsigned char *)s, n);
	int ok = 1, done = 0;
	while (ok && !done) {
		ok = yaml_parser_parse(&p, &ev);
		if (ok) {
			done = ev.type == YAML_STREAM_END_EVENT;
			yaml_event_delete(&ev);
		}
	}
	yaml_parser_delete(&p);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct buf mem = BUF_INIT, err = BUF_INIT, ferr = BUF_INIT;
	int rc = yamlout_from_json(&mem, (const char *)data, size, &err);
	must(rc == 0 || err.len > 0);
	FILE *in = tmpfile(), *out = tmpfile();
	must(in && out);
	must(fwrite(data, 1, size, in) == size && fseek(in, 0, SEEK_SET) == 0);
	int frc = yamlout_from_json_file(out, in, &ferr);
	must(frc == rc);
	if (rc == 0) {
		long n = ftell(out);
		must(n >= 0 && (size_t)n == mem.len);
		char *back = malloc(mem.len + 1);
		must(back && fseek(out, 0, SEEK_SET) == 0 && fread(back, 1, mem.len, out) == mem.len);
		must(memcmp(back, mem.s, mem.len) == 0);
		free(back);
		must(yaml_parses(mem.s, mem.len));
	}
	fclose(in);
	fclose(out);
	buf_release(&mem);
	buf_release(&err);
	buf_release(&ferr);
	return 0;
}
