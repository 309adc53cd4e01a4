/* fuzz_cloudwatch_json.c - CloudWatch metric exports (`aws cloudwatch get-metric-data` output,
 * and the reduced figures inventory --save writes) read by aws_cloudwatch_load_export into a
 * fleet of known volumes (the ids the seed corpus uses), then reduced to the planner's
 * figures; and the same bytes as a live GetMetricData answer page, read without a tree by
 * aws_cloudwatch_read_answer into a small batch. Range checks (periods, timestamps, values)
 * are the readers': nothing is skipped here. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/aws_cloudwatch.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ids[] = {"vol-0a1b2c3d4e5f60001", "vol-0a1b2c3d4e5f60002", "vol-1", "vol-2"};
	static const enum ebs_type types[] = {EBS_GP2, EBS_GP3, EBS_IO1, EBS_ST1};
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct fleet f;
	fleet_init(&f);
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		struct volume *v = fleet_add_volume(&f, ids[i]);
		v->type = types[i];
		v->size_gib = 100 + (int64_t)i * 400;
		v->iops = v->type == EBS_GP2 ? 300 : 3000;
		v->throughput = v->type == EBS_GP3 ? 125 : 0;
	}
	struct buf err = BUF_INIT;
	aws_cloudwatch_load_export(&f, (const char *)data, size, "fuzz.json", &err);
	buf_release(&err);
	/* A live answer: 3 volumes of 6 periods from 2026-10-31T23:30:00Z. */
	struct cw_batch b;
	cw_batch_init(&b, 3, 6, 1793489400, 300);
	char *next = NULL;
	aws_cloudwatch_read_answer(&b, (const char *)data, size, "answer", &next, &err);
	free(next);
	buf_release(&err);
	cw_batch_release(&b);
	fleet_release(&f);
	return 0;
}
