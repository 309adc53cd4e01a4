/* fuzz_fio_json.c - fio's --output-format=json / json+ output as bench reads it from a local run
 * or a Job's pod log (fio_parse_report, fio_report_extent). */
#include "ebsmigrate/fio.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct fio_report r;
	fio_report_init(&r);
	struct buf err = BUF_INIT;
	fio_report_extent((const char *)data, size);
	fio_parse_report(&r, (const char *)data, size, "fuzz.json", &err);
	fio_report_release(&r);
	buf_release(&err);
	return 0;
}
