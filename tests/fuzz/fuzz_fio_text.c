/* fuzz_fio_text.c - whatever fio output a user hands to `bench import` (fio_parse_output): fio's
 * normal text output (fio_text.c, fio 2.x and 3.x), and the JSON forms it falls back to (kubestr's
 * included). Also checks what the text reader promises: a refused input leaves the report empty,
 * and every job it reads has a name and a known kind. */
#include <stdlib.h>

#include "ebsmigrate/fio.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	const char *text = (const char *)data;
	struct fio_report r;
	fio_report_init(&r);
	struct buf err = BUF_INIT;
	int is_text = fio_output_is_text(text, size);
	int rc = fio_parse_output(&r, text, size, "fuzz.txt", &err);
	if (rc && (r.n_jobs || r.jobs || !err.len))
		abort(); /* refused: nothing half-read, and a message */
	if (!rc && is_text && r.format != FIO_OUTPUT_TEXT)
		abort(); /* fio_parse_output picks the text reader for what fio_output_is_text says is text */
	for (size_t i = 0; !rc && i < r.n_jobs; i++)
		if (!r.jobs[i].name || !r.jobs[i].options_json || !fio_kind_name(r.jobs[i].kind) || r.jobs[i].jobs < 1)
			abort();
	fio_report_release(&r);
	/* the text reader on its own, whatever fio_parse_output chose */
	buf_reset(&err);
	if (fio_parse_text(&r, text, size, "fuzz.txt", &err) && (r.n_jobs || r.jobs))
		abort();
	fio_report_release(&r);
	buf_release(&err);
	return 0;
}
