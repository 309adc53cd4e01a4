/* fuzz_cloudtrail_json.c - CloudTrail LookupEvents answers and `aws cloudtrail lookup-events`
 * exports: aws_cloudtrail_parse (as the live read parses each page, NextToken included), then
 * aws_cloudtrail_load_export onto a fleet of known volumes (the ids the seed corpus uses), and
 * the modification count the planner derives from them. Nothing is skipped here: field types,
 * times and volume ids are the reader's to check. */
#include <stdlib.h>

#include "ebsmigrate/aws_cloudtrail.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/planner.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ids[] = {"vol-0aa00000000000004", "vol-0aa00000000000009", "vol-0aa00000000000003"};
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct trail_events ev = {NULL, 0, 0};
	struct buf err = BUF_INIT;
	char *next = NULL;
	aws_cloudtrail_parse(&ev, (const char *)data, size, "fuzz.json", &next, &err);
	free(next);
	trail_events_release(&ev);
	buf_reset(&err);

	struct fleet f;
	fleet_init(&f);
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		struct volume *v = fleet_add_volume(&f, ids[i]);
		v->region = xstrdup("us-east-1");
		v->type = EBS_GP2;
		v->size_gib = 100;
	}
	if (aws_cloudtrail_load_export(&f, (const char *)data, size, "fuzz.json", &err) == 0) {
		for (size_t i = 0; i < f.n; i++) {
			time_t at, *starts = NULL;
			planner_modification_starts(&f.vols[i], &starts);
			free(starts);
			planner_eligible_at(&f.vols[i], 1793491200, &at);
		}
	}
	buf_release(&err);
	fleet_release(&f);
	return 0;
}
