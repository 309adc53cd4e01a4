/* fuzz_cloudwatch_json.c - CloudWatch metric exports (`aws cloudwatch get-metric-data` output
 * as written by inventory --save) read by aws_cloudwatch_load_export into a fleet of known
 * volumes (the ids the seed corpus uses), then reduced to the planner's figures.
 *
 * Skipped on purpose (issue 12 item 5, owned elsewhere: range validation of metric exports):
 * inputs whose timestamps span more than FUZZ_MAX_SPAN_S, since the reader allocates one slot
 * per period across the span (8 GB for a 13 KB file with years 0001 and 9999), and inputs with a
 * Label whose period is below 60 (a period of 0 divides by zero). */
#include <stdio.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/aws_cloudwatch.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "fuzz.h"

#define FUZZ_MAX_SPAN_S (400LL * 86400)

/* 1 when the input has one of the range problems item 5 owns (see the top comment). */
static int known_range_issue(const uint8_t *data, size_t size)
{
	cJSON *root = cJSON_ParseWithLength((const char *)data, size);
	time_t lo = 0, hi = 0;
	int any = 0;
	const cJSON *r, *t;
	int small_period = 0;
	cJSON_ArrayForEach(r, jsonx_get(root, "MetricDataResults"))
	{
		const char *label = jsonx_str(r, "Label");
		char a[64], b[40], c[16];
		long long period;
		if (label && sscanf(label, "%63s %39s %15s %lld", a, b, c, &period) == 4 && period < 60)
			small_period = 1;
		cJSON_ArrayForEach(t, jsonx_get(r, "Timestamps"))
		{
			time_t when;
			if (!cJSON_IsString(t) || em_parse_time(t->valuestring, &when))
				continue;
			if (!any || when < lo)
				lo = when;
			if (!any || when > hi)
				hi = when;
			any = 1;
		}
	}
	cJSON_Delete(root);
	return small_period || (any && (double)hi - (double)lo > (double)FUZZ_MAX_SPAN_S);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ids[] = {"vol-0a1b2c3d4e5f60001", "vol-0a1b2c3d4e5f60002", "vol-1", "vol-2"};
	static const enum ebs_type types[] = {EBS_GP2, EBS_GP3, EBS_IO1, EBS_ST1};
	if (size > FUZZ_MAX_INPUT || known_range_issue(data, size))
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
	aws_cloudwatch_is_export((const char *)data, size);
	aws_cloudwatch_load_export(&f, (const char *)data, size, "fuzz.json", &err);
	buf_release(&err);
	fleet_release(&f);
	return 0;
}
