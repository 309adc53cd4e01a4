/* fuzz_fio_log.c - fio write_iops_log files ("time_ms, value, ddir, bs[, offset[, prio]]" lines)
 * as bench reads them (fio_parse_iops_log). The first byte picks the window rounding (fio's own
 * times, or 1000 ms with log_avg_msec=1000); the input is then read twice into one series, as
 * the logs of several jobs are merged. */
#include "ebsmigrate/fio.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	int64_t interval = data[0] & 1 ? 1000 : 0;
	struct fio_series s;
	memset(&s, 0, sizeof s);
	struct buf err = BUF_INIT;
	if (fio_parse_iops_log(&s, (const char *)data + 1, size - 1, interval, "fuzz.log", &err) == 0)
		fio_parse_iops_log(&s, (const char *)data + 1, size - 1, interval, "fuzz.log", &err);
	fio_series_release(&s);
	buf_release(&err);
	return 0;
}
