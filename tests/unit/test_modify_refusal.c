/* test_modify_refusal.c - reading EC2's VolumeModificationRateExceeded refusal as AWS, the EBS CSI
 * driver, the external-resizer and the volume-modifier sidecar pass it on, and the time a refused
 * volume may go again (modify_refusal.h). */
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/modify_refusal.h"
#include "tap.h"

static time_t T(const char *s)
{
	time_t t = 0;
	em_parse_time(s, &t);
	return t;
}

static void parse_texts(void)
{
	struct rate_refusal r;
	/* EC2 under the 6-hour rule (the text AWS sent until 2026-01) */
	CHECK(rate_refusal_parse("You've reached the maximum modification rate per volume limit. Wait at least 6 hours "
				 "between modifications per EBS volume.",
				 &r));
	CHECK_I64(r.after, 0);
	CHECK_I64(r.wait_s, 6 * 3600);
	/* the same code with another wording (SageMaker passes it on like this) */
	CHECK(rate_refusal_parse("VolumeModificationRateExceeded: We encountered an internal error when trying to update "
				 "your volume size. We apologize for the inconvenience. Wait at least 6 hours before trying "
				 "to update the volume size again.",
				 &r));
	CHECK_I64(r.wait_s, 6 * 3600);
	/* 4 per 24 h: the time the next one is allowed (the simulator's EC2 answer) */
	CHECK(rate_refusal_parse("You've reached the maximum modification rate per volume limit. You can modify this "
				 "volume again after 2026-11-01T04:00:00Z.",
				 &r));
	CHECK_I64(r.after, T("2026-11-01T04:00:00Z"));
	CHECK_I64(r.wait_s, 0);
	/* the external-resizer's ModifyVolumeError condition around the EBS CSI driver's rpc error
	 * around the SDK's error around EC2's message: ends "Z.. Waiting for retry." */
	const char *cond = "ModifyVolume failed with error: rpc error: code = Internal desc = Could not modify volume "
			   "\"vol-0aa00000000000009\": unable to modify AWS volume \"vol-0aa00000000000009\": operation "
			   "error EC2: ModifyVolume, https response error StatusCode: 400, RequestID: "
			   "2019-0bd4-4c1e-9e2a-5f0c8e2d7a11, api error VolumeModificationRateExceeded: You've reached "
			   "the maximum modification rate per volume limit. You can modify this volume again after "
			   "2026-11-01T04:00:00Z.. Waiting for retry.";
	CHECK(rate_refusal_parse(cond, &r));
	CHECK_I64(r.after, T("2026-11-01T04:00:00Z"));
	/* the resizer's Warning event VolumeModifyFailed carries the driver's error alone */
	CHECK(rate_refusal_parse("rpc error: code = Internal desc = Could not modify volume \"vol-0aa00000000000009\": "
				 "api error VolumeModificationRateExceeded: You've reached the maximum modification rate "
				 "per volume limit. Wait at least 6 hours between modifications per EBS volume.",
				 &r));
	CHECK_I64(r.wait_s, 6 * 3600);
	CHECK_I64(r.after, 0);
	/* fractional seconds and an offset */
	CHECK(rate_refusal_parse("VolumeModificationRateExceeded: ... again after 2026-11-01T05:30:00.000+01:00.", &r));
	CHECK_I64(r.after, T("2026-11-01T04:30:00Z"));
	/* a time before the refusal (an event's own timestamp, a log prefix) is not its answer */
	CHECK(rate_refusal_parse("2026-10-31T23:00:00Z W1101 modify failed: VolumeModificationRateExceeded: You've reached "
				 "the maximum modification rate per volume limit.",
				 &r));
	CHECK_I64(r.after, 0);
	CHECK_I64(r.wait_s, 0);
	/* other refusals are not this one */
	CHECK(!rate_refusal_parse("rpc error: code = Internal desc = Could not modify volume \"vol-1\": api error "
				  "IncorrectModificationState: Volume vol-1 cannot be modified in modification state "
				  "OPTIMIZING",
				  &r));
	CHECK(!rate_refusal_parse("Request limit exceeded.", &r));
	CHECK(!rate_refusal_parse(NULL, &r));
	CHECK(!rate_refusal_parse("", &r));
	/* truncated or odd texts: recognised, no time taken from garbage */
	CHECK(rate_refusal_parse("VolumeModificationRateExceeded: after 2026-13-45T99:00:00Z.", &r));
	CHECK_I64(r.after, 0);
	CHECK(rate_refusal_parse("VolumeModificationRateExceeded: Wait at least 99999999999 hours", &r));
	CHECK_I64(r.wait_s, 0);
	CHECK(rate_refusal_parse("VolumeModificationRateExceeded: Wait at least", &r));
	CHECK_I64(r.wait_s, 0);
}

static void until_times(void)
{
	time_t now = T("2026-11-01T00:00:00Z");
	enum rate_refusal_basis b;
	struct rate_refusal msg_time = {T("2026-11-01T04:00:00Z"), 0}, six_h = {0, 6 * 3600}, none = {0, 0};
	time_t four[] = {now - 20 * 3600, now - 15 * 3600, now - 10 * 3600, now - 5 * 3600};
	/* the message's time wins over everything known */
	CHECK_I64(rate_refusal_until(&msg_time, now, four, 4, &b), T("2026-11-01T04:00:00Z"));
	CHECK_I64(b, RATE_UNTIL_MESSAGE);
	/* the 6-hour wait counts from the latest start known */
	time_t two_h[] = {now - 2 * 3600};
	CHECK_I64(rate_refusal_until(&six_h, now, two_h, 1, &b), now + 4 * 3600);
	CHECK_I64(b, RATE_UNTIL_WAIT);
	/* ... or from the refusal, when the latest known is already older than the wait */
	time_t seven_h[] = {now - 7 * 3600};
	CHECK_I64(rate_refusal_until(&six_h, now, seven_h, 1, &b), now + 6 * 3600);
	/* no time in the text: 4 starts known in the window give the exact answer (oldest + 24 h) */
	CHECK_I64(rate_refusal_until(&none, now, four, 4, &b), now + 4 * 3600);
	CHECK_I64(b, RATE_UNTIL_HISTORY);
	/* any order, duplicates (ledger and EC2 name the same start), older ones outside the window */
	time_t mixed[] = {now - 5 * 3600, now - 30 * 3600, now - 10 * 3600, now - 5 * 3600, now - 20 * 3600,
			  now - 15 * 3600, now - 23 * 3600};
	CHECK_I64(rate_refusal_until(&none, now, mixed, 7, &b), now + 4 * 3600);
	/* only EC2's latest known (the others made elsewhere): latest + 24 h, never earlier than AWS allows */
	time_t latest[] = {now - 5 * 3600};
	CHECK_I64(rate_refusal_until(&none, now, latest, 1, &b), now + 19 * 3600);
	CHECK_I64(b, RATE_UNTIL_HISTORY);
	/* starts after the refusal are not history it answered to */
	time_t later[] = {now + 3600};
	CHECK_I64(rate_refusal_until(&none, now, later, 1, &b), now + 24 * 3600);
	CHECK_I64(b, RATE_UNTIL_DEFAULT);
	/* nothing known at all */
	CHECK_I64(rate_refusal_until(&none, now, NULL, 0, &b), now + 24 * 3600);
	CHECK_I64(b, RATE_UNTIL_DEFAULT);
	CHECK_I64(rate_refusal_until(NULL, now, NULL, 0, NULL), now + 24 * 3600);
	CHECK_STR(rate_refusal_basis_name(RATE_UNTIL_MESSAGE), "the time in AWS's message");
}

int main(void)
{
	parse_texts();
	until_times();
	return tap_done();
}
