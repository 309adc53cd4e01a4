/*
 * tap.h - a minimal test harness for the C unit tests (one executable per tests/unit/test_*.c).
 * Each CHECK prints "ok N - expr" or "not ok N - expr (file:line)"; tap_done() prints the
 * summary "N passed, N failed" and returns the exit code (77 = skipped, for ctest SKIP).
 */
#ifndef EBSMIGRATE_TAP_H
#define EBSMIGRATE_TAP_H

#include <stdint.h>

void tap_check(int ok, const char *expr, const char *file, int line);
void tap_check_str(const char *got, const char *want, const char *expr, const char *file, int line);
void tap_check_i64(int64_t got, int64_t want, const char *expr, const char *file, int line);
int tap_done(void);
int tap_skip_all(const char *why);
/* Path of a file under the source tree (EM_SOURCE_DIR env, else the compile-time one). */
const char *tap_src_path(const char *rel);

#define CHECK(e) tap_check(!!(e), #e, __FILE__, __LINE__)
#define CHECK_STR(got, want) tap_check_str((got), (want), #got, __FILE__, __LINE__)
#define CHECK_I64(got, want) tap_check_i64((int64_t)(got), (int64_t)(want), #got, __FILE__, __LINE__)

#endif
