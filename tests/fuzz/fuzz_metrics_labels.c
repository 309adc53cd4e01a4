/* fuzz_metrics_labels.c - hostile label values (cluster, namespace, account, region names that
 * users control) through the metrics writer (metrics_write), in both formats. The input is split
 * at 0x00 bytes into up to four label values. Every written document is read back here by a strict
 * line parser of the exposition grammar: each line is # HELP/# TYPE/# UNIT of a known family or one
 * sample, the OpenMetrics one ends with exactly one "# EOF"; each sample's label values unescape
 * to valid UTF-8 without control characters (newline aside), and a value that was already such
 * text comes back byte for byte. Anything else aborts (a finding). */
#include <stdio.h>
#include <stdlib.h>

#include "ebsmigrate/metrics.h"
#include "fuzz.h"

static const char *const names[] = {"cluster", "namespace", "account", "region"};

/* Valid UTF-8 with no C0 control but newline, no DEL, no surrogate: what a label value may hold. */
static int clean_text(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c < 0x80) {
			if ((c < 0x20 && c != '\n') || c == 0x7f)
				return 0;
			i++;
			continue;
		}
		size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (!len || i + len > n)
			return 0;
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
		if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] > 0x8f) ||
		    (c == 0xed && s[i + 1] >= 0xa0))
			return 0;
		i += len;
	}
	return 1;
}

#define FAIL(...)                                                                                                  \
	do {                                                                                                       \
		fprintf(stderr, __VA_ARGS__);                                                                      \
		fputc('\n', stderr);                                                                               \
		abort();                                                                                           \
	} while (0)

/* Parses one sample line of family "ebsmigrate_fuzz_bytes" against the expected values. */
static void check_sample(const char *line, size_t len, const char *const *want, size_t n_labels)
{
	static const char name[] = "ebsmigrate_fuzz_bytes";
	size_t i = sizeof name - 1;
	if (len < i || memcmp(line, name, i) != 0)
		FAIL("sample of an unknown family: %.*s", (int)len, line);
	if (line[i] != '{')
		FAIL("labels expected");
	i++;
	for (size_t k = 0; k < n_labels; k++) {
		size_t nl = strlen(names[k]);
		if (i + nl + 2 > len || memcmp(line + i, names[k], nl) != 0 || line[i + nl] != '=' || line[i + nl + 1] != '"')
			FAIL("label %zu: name=\" expected", k);
		i += nl + 2;
		struct buf v = BUF_INIT;
		for (;;) {
			if (i >= len)
				FAIL("label %zu: unterminated value", k);
			char c = line[i++];
			if (c == '"')
				break;
			if (c == '\\') {
				if (i >= len)
					FAIL("label %zu: escape at the end", k);
				char e = line[i++];
				buf_addc(&v, e == 'n' ? '\n' : e);
				if (e != 'n' && e != '\\' && e != '"')
					FAIL("label %zu: unknown escape \\%c", k, e);
				continue;
			}
			buf_addc(&v, c);
		}
		const char *got = v.s ? v.s : "";
		if (!clean_text((const unsigned char *)got, v.len))
			FAIL("label %zu: value is not clean UTF-8 text", k);
		if (clean_text((const unsigned char *)want[k], strlen(want[k])) && strcmp(got, want[k]) != 0)
			FAIL("label %zu: clean value did not round-trip", k);
		buf_release(&v);
		if (k + 1 < n_labels) {
			if (i >= len || line[i] != ',')
				FAIL("',' expected after label %zu", k);
			i++;
		}
	}
	if (i + 3 != len || memcmp(line + i, "} 7", 3) != 0)
		FAIL("'} 7' expected at the end of the sample");
}

static void check(const struct buf *doc, enum metrics_format fmt, const char *const *want, size_t n_labels)
{
	const char *s = doc->s, *end = doc->s + doc->len;
	size_t samples = 0, eofs = 0;
	if (!doc->len || end[-1] != '\n')
		FAIL("document does not end with a newline");
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = (size_t)(nl - s);
		if (eofs)
			FAIL("a line after # EOF");
		if (len >= 2 && s[0] == '#') {
			if (len == 5 && memcmp(s, "# EOF", 5) == 0)
				eofs++;
			else if (!(len > 7 && (memcmp(s, "# HELP ", 7) == 0 || memcmp(s, "# TYPE ", 7) == 0 ||
					       memcmp(s, "# UNIT ", 7) == 0)))
				FAIL("unknown comment line: %.*s", (int)len, s);
		} else if (len > 22 && memcmp(s, "ebsmigrate_fuzz_plain ", 22) == 0) {
			samples++;
		} else {
			check_sample(s, len, want, n_labels);
			samples++;
		}
		s = nl + 1;
	}
	if (samples != 2)
		FAIL("%zu samples, expected 2", samples);
	if (eofs != (fmt == METRICS_OPENMETRICS))
		FAIL("# EOF count %zu", eofs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size, 4096);
	if (!text)
		return 0;
	const char *want[4] = {"", "", "", ""};
	size_t n = 0;
	for (size_t i = 0; n < 4;) { /* values split at NUL bytes */
		want[n++] = text + i;
		i += strlen(text + i) + 1;
		if (i > size)
			break;
	}
	struct metrics_doc d;
	metrics_doc_init(&d);
	size_t f = metrics_family_add(&d, "ebsmigrate_fuzz_bytes", "bytes", "fuzzed labels", names, 4);
	metrics_sample_add(&d, f, want, "7");
	size_t g = metrics_family_add(&d, "ebsmigrate_fuzz_plain", NULL, "no labels", NULL, 0);
	metrics_sample_add(&d, g, NULL, "1");
	for (int fmt = 0; fmt < 2; fmt++) {
		struct buf out = BUF_INIT;
		metrics_write(&out, &d, (enum metrics_format)fmt);
		check(&out, (enum metrics_format)fmt, want, 4);
		buf_release(&out);
	}
	metrics_doc_release(&d);
	free(text);
	return 0;
}
