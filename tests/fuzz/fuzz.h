/*
 * fuzz.h - shared by the libFuzzer targets in tests/fuzz/ (one fuzz_*.c per untrusted input).
 * Each target feeds one input to the same parser entry point ebsmigrate uses on that input and
 * releases everything, so AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer see any
 * memory error, undefined behaviour or leak. Errors returned by the parser are expected (most
 * mutated inputs are bad input); only a crash, a sanitizer report or a leak is a finding.
 */
#ifndef EBSMIGRATE_FUZZ_H
#define EBSMIGRATE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs larger than this are skipped: the parsers' cost is linear, and big inputs only slow
 * the search down (input size caps are the readers' business, not the fuzzer's). */
#define FUZZ_MAX_INPUT (256 * 1024)

/* 1 when the input contains needle (for the few shapes a harness deliberately skips). */
static inline int fuzz_contains(const uint8_t *data, size_t size, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; n <= size && i <= size - n; i++)
		if (memcmp(data + i, needle, n) == 0)
			return 1;
	return 0;
}

/* The input as a NUL-terminated string (the caller frees it), or NULL when it is longer than max
 * bytes (skipped) or memory is short. An input's own NUL bytes stay in place. */
static inline char *fuzz_text(const uint8_t *data, size_t size, size_t max)
{
	if (size > max)
		return NULL;
	char *text = malloc(size + 1);
	if (!text)
		return NULL;
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

#endif
