/* tap.c - see tap.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static int n_run, n_failed;

void tap_check(int ok, const char *expr, const char *file, int line)
{
	n_run++;
	if (ok) {
		printf("ok %d - %s\n", n_run, expr);
	} else {
		n_failed++;
		printf("not ok %d - %s (%s:%d)\n", n_run, expr, file, line);
	}
}

void tap_check_str(const char *got, const char *want, const char *expr, const char *file, int line)
{
	int ok = (got == NULL && want == NULL) || (got && want && strcmp(got, want) == 0);
	tap_check(ok, expr, file, line);
	if (!ok)
		printf("#   got:  %s\n#   want: %s\n", got ? got : "(null)", want ? want : "(null)");
}

void tap_check_i64(int64_t got, int64_t want, const char *expr, const char *file, int line)
{
	tap_check(got == want, expr, file, line);
	if (got != want)
		printf("#   got:  %lld\n#   want: %lld\n", (long long)got, (long long)want);
}

int tap_done(void)
{
	printf("%d passed, %d failed\n", n_run - n_failed, n_failed);
	return n_failed ? 1 : 0;
}

int tap_skip_all(const char *why)
{
	printf("# SKIP %s\n", why);
	return 77;
}

const char *tap_src_path(const char *rel)
{
	static char path[4096];
	const char *src = getenv("EM_SOURCE_DIR");
	snprintf(path, sizeof path, "%s/%s", src ? src : EM_SOURCE_DIR, rel);
	return path;
}
