/* test_cloudtrail.c - CloudTrail LookupEvents parsing (API pages, CLI exports, hostile fields) and
 * the modification budget counted from EC2, the ledger and CloudTrail, each modification once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_cloudtrail.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/planner.h"
#include "tap.h"

static time_t at(const char *s)
{
	time_t t = 0;
	if (em_parse_time(s, &t))
		abort();
	return t;
}

/* A LookupEvents event: EventTime as epoch seconds; detail is the CloudTrailEvent document. */
static void event(struct buf *b, const char *vid, const char *time_json, const char *error_code)
{
	struct buf d = BUF_INIT;
	buf_addf(&d,
		 "{\"eventVersion\":\"1.09\",\"userIdentity\":{\"type\":\"IAMUser\",\"arn\":\"arn:aws:iam::111122223333:user/alice\"},"
		 "\"eventSource\":\"ec2.amazonaws.com\",\"eventName\":\"ModifyVolume\",\"awsRegion\":\"us-east-1\","
		 "\"requestParameters\":{\"ModifyVolumeRequest\":{\"VolumeId\":\"%s\",\"Size\":101}}%s%s%s}",
		 vid, error_code ? ",\"errorCode\":\"" : "", error_code ? error_code : "", error_code ? "\"" : "");
	static int serial;
	buf_addf(b, "%s{\"EventId\":\"e-%d\",\"EventName\":\"ModifyVolume\",\"EventTime\":%s,\"Username\":\"alice\","
		 "\"Resources\":[{\"ResourceType\":\"AWS::EC2::Volume\",\"ResourceName\":\"%s\"}],\"CloudTrailEvent\":\"",
		 b->len > 12 ? "," : "", ++serial, time_json, vid);
	buf_add_json_escaped(b, d.s);
	buf_adds(b, "\"}");
	buf_release(&d);
}

static int parse_text(const char *text, struct trail_events *ev, char **next, struct buf *err)
{
	buf_reset(err);
	return aws_cloudtrail_parse(ev, text, strlen(text), "t.json", next, err);
}

static void test_parse(void)
{
	struct trail_events ev;
	memset(&ev, 0, sizeof ev);
	struct buf err = BUF_INIT, page = BUF_INIT;
	char *next = NULL;

	/* an API page: epoch seconds (one fractional), a refused call, another event name */
	buf_adds(&page, "{\"Events\":[");
	event(&page, "vol-0aa00000000000004", "1793419200", NULL);
	event(&page, "vol-0aa00000000000004", "1793440800.5", "Client.VolumeModificationRateExceeded");
	buf_adds(&page, ",{\"EventId\":\"x\",\"EventName\":\"CreateTags\",\"EventTime\":1793440800}");
	buf_adds(&page, "],\"NextToken\":\"tok-2\"}");
	CHECK_I64(parse_text(page.s, &ev, &next, &err), 0);
	CHECK_I64(ev.n, 2);
	CHECK_STR(ev.v[0].volume_id, "vol-0aa00000000000004");
	CHECK_I64(ev.v[0].time, at("2026-10-31T04:00:00Z"));
	CHECK_I64(ev.v[0].failed, 0);
	CHECK_STR(ev.v[0].region, "us-east-1");
	CHECK_STR(ev.v[0].principal, "arn:aws:iam::111122223333:user/alice");
	CHECK_I64(ev.v[1].time, at("2026-10-31T10:00:00Z"));
	CHECK_I64(ev.v[1].failed, 1);
	CHECK_STR(next, "tok-2");
	free(next);
	trail_events_release(&ev);

	/* the AWS CLI's export: RFC 3339 with an offset, no NextToken */
	buf_reset(&page);
	buf_adds(&page, "{\"Events\":[");
	event(&page, "vol-0aa00000000000009", "\"2026-10-31T05:00:00-08:00\"", NULL);
	buf_adds(&page, "]}");
	CHECK_I64(parse_text(page.s, &ev, &next, &err), 0);
	CHECK_STR(err.s, "");
	CHECK_I64(ev.n, 1);
	if (ev.n != 1)
		abort();
	CHECK_I64(ev.v[0].time, at("2026-10-31T13:00:00Z"));
	CHECK(next == NULL);
	trail_events_release(&ev);

	/* hostile input: each wrong field is named */
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"{\"Events\":{}}", "t.json: Events: must be an array, got an object"},
		{"{\"Events\":[7]}", "t.json: Events[0]: must be an object, got a number"},
		{"{\"Events\":[{\"EventName\":\"ModifyVolume\",\"EventTime\":\"yesterday\"}]}",
		 "t.json: Events[0].EventTime: 'yesterday' is not an RFC 3339 time"},
		{"{\"Events\":[{\"EventName\":\"ModifyVolume\",\"EventTime\":1e300}]}",
		 "t.json: Events[0].EventTime: 1e+300 is not a time between 1970 and 9999"},
		{"{\"Events\":[{\"EventName\":\"ModifyVolume\",\"EventTime\":1,\"CloudTrailEvent\":\"{\\\"requestParameters\\\":[]}\"}]}",
		 "t.json: Events[0].CloudTrailEvent.requestParameters: must be an object, got an array"},
		{"{\"Events\":[{\"EventName\":\"ModifyVolume\",\"EventTime\":1,\"CloudTrailEvent\":\"{\\\"errorCode\\\":5}\"}]}",
		 "t.json: Events[0].CloudTrailEvent.errorCode: must be a string, got a number"},
		{"{\"Events\":[{\"EventName\":\"ModifyVolume\",\"EventTime\":1}]}",
		 "t.json: Events[0]: a successful ModifyVolume event names no volume"},
		{"{\"Events\":[{\"EventName\":\"ModifyVolume\",\"EventTime\":1,\"Resources\":[{\"ResourceType\":"
		 "\"AWS::EC2::Volume\",\"ResourceName\":\"vol-../../etc\"}]}]}",
		 "t.json: Events[0]: 'vol-../../etc' is not an EBS volume id"},
		{"{\"Events\":[],\"NextToken\":3}", "t.json: NextToken: must be a string, got a number"},
		{"[]", "t.json: not a LookupEvents answer: expected {\"Events\": [...]}"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK_I64(parse_text(bad[i].text, &ev, &next, &err), EM_EINPUT);
		CHECK_STR(err.s, bad[i].want);
		CHECK(next == NULL);
		trail_events_release(&ev);
	}
	/* an embedded document that is not JSON names its place */
	CHECK_I64(parse_text("{\"Events\":[{\"EventName\":\"ModifyVolume\",\"CloudTrailEvent\":\"{nope\"}]}", &ev, NULL,
			     &err),
		  EM_EINPUT);
	CHECK(strstr(err.s, "t.json: Events[0].CloudTrailEvent: not valid JSON") != NULL);
	trail_events_release(&ev);
	buf_release(&page);
	buf_release(&err);
}

static void mod(struct volume *v, enum volume_mod_state state, time_t start)
{
	struct volume_mod m;
	memset(&m, 0, sizeof m);
	m.state = state;
	m.start_time = start;
	volume_add_mod(v, &m);
}

static struct volume *gp2(struct fleet *f, const char *id)
{
	struct volume *v = fleet_add_volume(f, id);
	v->region = xstrdup("us-east-1");
	v->availability_zone = xstrdup("us-east-1a");
	v->location = xstrdup("us-east-1");
	v->type = EBS_GP2;
	v->size_gib = 100;
	v->state = xstrdup("in-use");
	return v;
}

static void test_budget(void)
{
	time_t now = at("2026-11-01T00:10:00Z");
	struct fleet f;
	fleet_init(&f);
	struct trail_events ev;
	memset(&ev, 0, sizeof ev);
	struct buf err = BUF_INIT, page = BUF_INIT;

	/* vol-A: four console resizes 03:00, 09:00, 15:00, 21:00 on 2026-10-31 (CloudTrail), a refused
	 * fifth try at 23:00; EC2's latest is the 21:00 one (startTime 0.4 s later than eventTime). */
	struct volume *a = gp2(&f, "vol-0000000000000000a");
	mod(a, MOD_COMPLETED, at("2026-10-31T21:00:00Z"));
	time_t t;
	CHECK_I64(planner_eligible_at(a, now, &t), ELIGIBLE_NOW); /* EC2 alone: eligible now (the bug) */
	buf_adds(&page, "{\"Events\":[");
	event(&page, "vol-0000000000000000a", "1793487600", "Client.VolumeModificationRateExceeded"); /* 23:00 */
	event(&page, "vol-0000000000000000a", "1793480400", NULL); /* 21:00 */
	event(&page, "vol-0000000000000000a", "1793458800", NULL); /* 15:00 */
	event(&page, "vol-0000000000000000a", "1793437200", NULL); /* 09:00 */
	event(&page, "vol-0000000000000000a", "1793415600", NULL); /* 03:00 */
	/* vol-B: EC2's latest at 20:00, the ledger's own call at 12:00:30 (local clock 30 s ahead of
	 * CloudTrail's 12:00:00), CloudTrail 12:00 and 20:00: two modifications, not four */
	event(&page, "vol-0000000000000000b", "1793476800", NULL); /* 20:00 */
	event(&page, "vol-0000000000000000b", "1793448000", NULL); /* 12:00 */
	/* vol-C: 4 events, the oldest 24 h 10 min ago (outside the window): 3 count */
	event(&page, "vol-0000000000000000c", "1793405400", NULL); /* 2026-10-31T00:10:00Z: on the edge, out */
	event(&page, "vol-0000000000000000c", "1793430000", NULL);
	event(&page, "vol-0000000000000000c", "1793450000", NULL);
	event(&page, "vol-0000000000000000c", "1793470000", NULL);
	/* an event of a volume not in the fleet is ignored */
	event(&page, "vol-0000000000000000f", "1793470000", NULL);
	buf_adds(&page, "]}");
	struct volume *b = gp2(&f, "vol-0000000000000000b");
	mod(b, MOD_COMPLETED, at("2026-10-31T12:00:30Z")); /* the ledger's record */
	mod(b, MOD_COMPLETED, at("2026-10-31T20:00:00Z")); /* EC2's latest */
	struct volume *c = gp2(&f, "vol-0000000000000000c");
	a = fleet_find(&f, "vol-0000000000000000a");
	CHECK_I64(parse_text(page.s, &ev, NULL, &err), 0);
	CHECK_I64(ev.n, 12);
	CHECK_I64(aws_cloudtrail_attach(&f, &ev, "us-east-1"), 11);
	CHECK_I64(aws_cloudtrail_attach(&f, &ev, "eu-west-1"), 0);
	a = fleet_find(&f, "vol-0000000000000000a");
	b = fleet_find(&f, "vol-0000000000000000b");
	c = fleet_find(&f, "vol-0000000000000000c");
	CHECK_I64(a->n_trail_starts, 4); /* the refused call is no modification */

	time_t *starts = NULL;
	CHECK_I64(planner_modification_starts(a, &starts), 4); /* EC2's 21:00 = CloudTrail's 21:00 */
	CHECK_I64(starts[0], at("2026-10-31T03:00:00Z"));
	CHECK_I64(starts[3], at("2026-10-31T21:00:00Z"));
	free(starts);
	CHECK_I64(planner_eligible_at(a, now, &t), ELIGIBLE_AFTER_LIMIT);
	CHECK_I64(t, at("2026-11-01T03:00:00Z")); /* the oldest of the four + 24 h */
	/* at 03:00 the 03:00 one leaves the window */
	CHECK_I64(planner_eligible_at(a, at("2026-11-01T03:00:00Z"), &t), ELIGIBLE_NOW);

	CHECK_I64(planner_modification_starts(b, &starts), 2); /* 12:00:30 ledger = 12:00 CloudTrail */
	free(starts);
	CHECK_I64(planner_eligible_at(b, now, &t), ELIGIBLE_NOW);

	CHECK_I64(planner_modification_starts(c, &starts), 4);
	free(starts);
	CHECK_I64(planner_eligible_at(c, now, &t), ELIGIBLE_NOW); /* 3 inside (now - 24 h, now] */
	/* a fourth inside the window: the next start is the oldest inside + 24 h */
	volume_add_trail_start(c, at("2026-10-31T23:00:00Z"));
	volume_add_trail_start(c, at("2026-10-31T23:00:00Z")); /* listed twice: once */
	CHECK_I64(c->n_trail_starts, 5);
	CHECK_I64(planner_eligible_at(c, now, &t), ELIGIBLE_AFTER_LIMIT);
	CHECK_I64(t, (time_t)1793430000 + 86400);

	/* an in-flight modification still wins (R1) */
	mod(b, MOD_OPTIMIZING, at("2026-11-01T00:05:00Z"));
	CHECK_I64(planner_eligible_at(b, now, &t), ELIGIBLE_AFTER_FLIGHT);

	trail_events_release(&ev);
	fleet_release(&f);
	buf_release(&page);
	buf_release(&err);
}

/* The plan's flags and margin from the volume's history state. */
static void test_plan_history(void)
{
	struct pricebook book;
	pricebook_init(&book);
	struct buf err = BUF_INIT;
	if (pricebook_load_bundled(&book, &err)) {
		printf("# %s\n", err.s);
		abort();
	}
	time_t now = at("2026-11-01T00:10:00Z");
	struct fleet f;
	fleet_init(&f);
	gp2(&f, "vol-0000000000000000d")->history = HISTORY_UNAVAILABLE;
	struct volume *e = gp2(&f, "vol-0000000000000000e");
	e->history = HISTORY_CLOUDTRAIL;
	mod(e, MOD_COMPLETED, at("2026-11-01T00:02:00Z")); /* 8 min ago: inside CloudTrail's delay */
	struct volume *g = gp2(&f, "vol-00000000000000001");
	g->history = HISTORY_CLOUDTRAIL;
	mod(g, MOD_COMPLETED, at("2026-10-31T23:50:00Z")); /* 20 min ago */
	struct volume *s = gp2(&f, "vol-00000000000000002");
	s->type = EBS_GP3; /* skipped: its history concerns nobody */
	s->iops = 3000;
	s->throughput = 125;
	s->history = HISTORY_UNAVAILABLE;
	struct plan p;
	struct plan_options po = {PLAN_MODE_MATCH, now};
	planner_build(&p, &f, &book, &po);
	for (size_t i = 0; i < p.n; i++) {
		const struct plan_item *it = &p.items[i];
		const char *id = it->v->volume_id;
		if (strcmp(id, "vol-0000000000000000d") == 0) {
			CHECK(it->flags & FLAG_HISTORY_UNVERIFIED);
			CHECK_I64(it->eligible_margin_s, 0);
		} else if (strcmp(id, "vol-0000000000000000e") == 0) {
			CHECK(!(it->flags & FLAG_HISTORY_UNVERIFIED));
			CHECK_I64(it->eligible_margin_s, 900);
			CHECK(it->note && strstr(it->note, "modified 8 min ago") && strstr(it->note, "2026-11-01T00:17:00Z"));
		} else if (strcmp(id, "vol-00000000000000001") == 0) {
			CHECK_I64(it->eligible_margin_s, 0);
			CHECK_I64(it->eligible_at, now);
		} else {
			CHECK_I64(it->action, ACTION_SKIP);
			CHECK(!(it->flags & FLAG_HISTORY_UNVERIFIED));
		}
	}
	CHECK_STR(plan_flag_name(14), "history-unverified");
	plan_release(&p);
	fleet_release(&f);
	pricebook_release(&book);
	buf_release(&err);
}

int main(void)
{
	test_parse();
	test_budget();
	test_plan_history();
	return tap_done();
}
