/* fuzz_fio_eta.c - fio's live status lines (--eta=always: "Jobs: 1 (f=1): [r(1)][75.0%]
 * [r=41.0MiB/s][r=10.5k IOPS][eta 00m:01s]") as bench run --local reads them from fio's stdout:
 * the input is split at \r and \n like the stream and each piece goes to fio_parse_eta_line
 * (which must never read past the piece: there is no terminator). A parsed line must hold
 * values in range. */
#include <math.h>
#include <stdlib.h>

#include "ebsmigrate/fio.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	size_t start = 0;
	for (size_t i = 0; i <= size; i++) {
		if (i < size && data[i] != '\r' && data[i] != '\n')
			continue;
		/* a copy of exactly the piece, so ASan sees any read past its end */
		size_t n = i - start;
		char *piece = malloc(n ? n : 1);
		if (!piece)
			abort();
		memcpy(piece, data + start, n);
		struct fio_eta e;
		if (fio_parse_eta_line(&e, piece, n) == 0) {
			if (!(isnan(e.percent) || (e.percent >= 0 && e.percent <= 100)))
				abort();
			for (int d = 0; d < 2; d++)
				if (!(isnan(e.iops[d]) || e.iops[d] >= 0) || !(isnan(e.bw_bytes[d]) || e.bw_bytes[d] >= 0))
					abort();
			if (e.eta_s < -1 || memchr(e.run, '\0', sizeof e.run) == NULL)
				abort();
		}
		free(piece);
		start = i + 1;
	}
	return 0;
}
