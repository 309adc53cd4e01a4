/* fuzz_selector.c - a -l/--selector text as the user gives it (selector_parse); a selector that
 * parses is evaluated over a fixed label set and its canonical text (selector_format) must parse
 * again to the same canonical text and the same verdict, else abort (a finding). */
#include <stdio.h>
#include <stdlib.h>

#include "ebsmigrate/selector.h"
#include "fuzz.h"

static const struct kv labels[] = {{"app", "db"}, {"tier", ""}, {"size", "100"}, {"example.com/owner", "ops"},
				   {"in", "notin"}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size, 4096);
	if (!text)
		return 0;
	struct selector s, again;
	struct buf err = BUF_INIT, canon = BUF_INIT, canon2 = BUF_INIT;
	if (selector_parse(&s, text, &err) == 0) {
		int verdict = selector_matches(&s, labels, sizeof labels / sizeof *labels);
		selector_format(&canon, &s);
		buf_reset(&err);
		if (selector_parse(&again, canon.s ? canon.s : "", &err) != 0) {
			fprintf(stderr, "canonical text does not parse: '%s': %s\n", canon.s, err.s);
			abort();
		}
		selector_format(&canon2, &again);
		if (strcmp(canon.s ? canon.s : "", canon2.s ? canon2.s : "") != 0 ||
		    selector_matches(&again, labels, sizeof labels / sizeof *labels) != verdict) {
			fprintf(stderr, "canonical text changes meaning: '%s' -> '%s'\n", canon.s, canon2.s);
			abort();
		}
		selector_release(&again);
	}
	selector_release(&s);
	buf_release(&err);
	buf_release(&canon);
	buf_release(&canon2);
	free(text);
	return 0;
}
