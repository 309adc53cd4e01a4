/*
 * replay.c - runs a fuzz target's LLVMFuzzerTestOneInput over files without libFuzzer, so the
 * ordinary build (gcc, and the ASan+UBSan tree) replays every seed and every kept crasher as a
 * ctest test (fuzz.TARGET). Arguments are files or directories (their regular files, one level,
 * sorted order does not matter: each input runs alone). Exit 0 when every input ran; a finding
 * aborts under the sanitizers.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "fuzz.h"

static int run_file(const char *path, size_t *n)
{
	struct buf b = BUF_INIT, err = BUF_INIT;
	if (em_read_file(path, &b, &err)) {
		fprintf(stderr, "replay: %s\n", err.s);
		buf_release(&err);
		return 1;
	}
	/* an exact-size copy, not NUL-terminated, as libFuzzer hands inputs over */
	uint8_t *data = xmalloc(b.len ? b.len : 1);
	memcpy(data, b.s, b.len);
	LLVMFuzzerTestOneInput(data, b.len);
	free(data);
	buf_release(&b);
	buf_release(&err);
	(*n)++;
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = 0;
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			continue; /* no regressions kept for this target yet */
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i], &n);
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		while (d && (de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.' || strstr(de->d_name, ".md"))
				continue;
			struct buf path = BUF_INIT;
			buf_addf(&path, "%s/%s", argv[i], de->d_name);
			bad |= run_file(path.s, &n);
			buf_release(&path);
		}
		if (d)
			closedir(d);
	}
	printf("replayed %zu inputs\n", n);
	return bad;
}
