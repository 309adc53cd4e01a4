/* test_plan_file.c - plan files for `apply --plan FILE`: what is accepted, what is refused (and
 * the message naming file and field), and recording one in a database exactly once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/plan_file.h"
#include "tap.h"

static const char GOOD[] =
	"{\"schema\":\"ebsmigrate.plan/v1\",\"generated_at\":\"2026-12-01T13:00:00+01:00\",\"mode\":\"match\","
	"\"volumes\":[{\"volume_id\":\"vol-0a1b2c3d\",\"action\":\"migrate\",\"region\":\"us-east-1\",\"size_gib\":20,"
	"\"type\":\"gp2\",\"iops\":100,\"throughput_mibps\":null,\"target\":{\"type\":\"gp3\",\"iops\":3000,\"throughput_mibps\":125}},"
	"{\"volume_id\":\"vol-2\",\"action\":\"skip\",\"target\":null}],"
	"\"totals\":{\"volumes\":2,\"savings_monthly_usd\":2.08}}\n";

/* GOOD with the first occurrence of from replaced by to. */
static char *variant(const char *from, const char *to)
{
	const char *at = strstr(GOOD, from);
	if (!at)
		return xstrdup("(variant not found)");
	struct buf b = BUF_INIT;
	buf_add(&b, GOOD, (size_t)(at - GOOD));
	buf_adds(&b, to);
	buf_adds(&b, at + strlen(from));
	return buf_detach(&b);
}

/* The text is refused with EM_EINPUT and a message containing want; out is left empty. */
static void refused(const char *text, size_t len, const char *want)
{
	struct plan_file pf;
	struct buf err = BUF_INIT;
	int rc = plan_file_parse(&pf, "p.json", text, len, &err);
	CHECK_I64(rc, EM_EINPUT);
	if (!strstr(err.s, want))
		printf("# got: %s\n# want: %s\n", err.s, want);
	CHECK(strstr(err.s, want) != NULL);
	CHECK(pf.json == NULL && pf.mode == NULL && pf.path == NULL);
	plan_file_release(&pf);
	buf_release(&err);
}

static void refused_variant(const char *from, const char *to, const char *want)
{
	char *t = variant(from, to);
	refused(t, strlen(t), want);
	free(t);
}

static void test_accepts_good(void)
{
	struct plan_file pf;
	struct buf err = BUF_INIT;
	CHECK(plan_file_parse(&pf, "p.json", GOOD, strlen(GOOD), &err) == 0);
	CHECK_STR(err.s, "");
	CHECK_STR(pf.path, "p.json");
	CHECK_STR(pf.json, GOOD); /* byte for byte, trailing newline included */
	CHECK_I64(pf.len, strlen(GOOD));
	CHECK_STR(pf.generated_at, "2026-12-01T12:00:00Z");
	CHECK_STR(pf.mode, "match");
	CHECK_I64(pf.volumes, 2);
	CHECK_I64(pf.savings_monthly, 2080000);
	plan_file_release(&pf);
	buf_release(&err);
}

/* The document `plan --format json` writes for the example fleet (golden of case 0002). */
static void test_accepts_example_plan(void)
{
	struct plan_file pf;
	struct buf err = BUF_INIT;
	const char *path = tap_src_path("tests/cases/golden/plan-example.json");
	CHECK(plan_file_load(&pf, path, &err) == 0);
	CHECK_STR(err.s, "");
	CHECK_STR(pf.generated_at, "2026-12-01T12:00:00Z");
	CHECK_I64(pf.volumes, 15);
	CHECK_I64(pf.savings_monthly, 64320000);
	struct buf raw = BUF_INIT;
	CHECK(em_read_file(path, &raw, &err) == 0);
	CHECK(pf.json && raw.len == pf.len && memcmp(raw.s, pf.json, raw.len) == 0);
	buf_release(&raw);
	plan_file_release(&pf);
	buf_release(&err);
}

static void test_refusals(void)
{
	refused("", 0, "plan file 'p.json': empty file");
	refused(GOOD, 120, "plan file 'p.json': not valid JSON at line 1");
	refused("[1,2]", 5, "plan file 'p.json': (top level): not an object");
	refused("{\"a\\u0000\":1}\0x", 15, "plan file 'p.json': not a plan document (it contains NUL bytes)");
	refused_variant("\"schema\":\"ebsmigrate.plan/v1\",", "", "plan file 'p.json': schema: missing");
	refused_variant("ebsmigrate.plan/v1", "ebsmigrate.inventory/v1",
			"plan file 'p.json': schema: 'ebsmigrate.inventory/v1', expected 'ebsmigrate.plan/v1'");
	refused_variant("ebsmigrate.plan/v1", "ebsmigrate.plan/v2", "schema: 'ebsmigrate.plan/v2'");
	refused_variant("2026-12-01T13:00:00+01:00", "yesterday",
			"plan file 'p.json': generated_at: missing or not an RFC 3339 time");
	refused_variant("\"mode\":\"match\"", "\"mode\":\"fast\"", "plan file 'p.json': mode: missing or not one of");
	refused_variant("\"mode\":\"match\",", "\"mode\":\"match\",\"volumes\":7,", /* the first one counts */
			"plan file 'p.json': volumes: missing or not an array");
	refused_variant("{\"volume_id\":\"vol-0a1b2c3d\",", "{", "plan file 'p.json': volumes[0].volume_id: missing or not a string");
	refused_variant("\"action\":\"skip\"", "\"action\":\"maybe\"",
			"plan file 'p.json': volumes[1] (volume 'vol-2').action: 'maybe' is not one of migrate, blocked, review, skip");
	refused_variant("\"region\":\"us-east-1\",", "", "plan file 'p.json': volumes[0] (volume 'vol-0a1b2c3d').region: missing");
	refused_variant("\"target\":{\"type\":\"gp3\",\"iops\":3000,\"throughput_mibps\":125}", "\"target\":null",
			"plan file 'p.json': volumes[0] (volume 'vol-0a1b2c3d').target: missing or not an object");
	refused_variant("\"iops\":3000", "\"iops\":3000.5",
			"plan file 'p.json': volumes[0] (volume 'vol-0a1b2c3d').target.iops: missing or not a whole number");
	refused_variant("\"throughput_mibps\":125", "\"throughput_mibps\":\"125\"",
			"plan file 'p.json': volumes[0] (volume 'vol-0a1b2c3d').target.throughput_mibps: missing or not a whole number");
	refused_variant(",\"totals\":{\"volumes\":2,\"savings_monthly_usd\":2.08}", "", "plan file 'p.json': totals: missing");
	refused_variant("\"volumes\":2,", "\"volumes\":-2,",
			"plan file 'p.json': totals.volumes: missing or not a whole number");
	refused_variant("2.08", "\"2.08\"", "plan file 'p.json': totals.savings_monthly_usd: missing or not an amount");
	/* blocked volumes are applied later: they need a target too; review/skip do not */
	refused_variant("\"action\":\"migrate\",\"region\":\"us-east-1\",\"size_gib\":20,\"type\":\"gp2\",\"iops\":100,"
			"\"throughput_mibps\":null,\"target\":{\"type\":\"gp3\",\"iops\":3000,\"throughput_mibps\":125}",
			"\"action\":\"blocked\",\"region\":\"us-east-1\",\"size_gib\":20",
			"volumes[0] (volume 'vol-0a1b2c3d').target: missing");
	char *review = variant("\"action\":\"migrate\",\"region\":\"us-east-1\"", "\"action\":\"review\"");
	struct plan_file pf;
	struct buf err = BUF_INIT;
	CHECK(plan_file_parse(&pf, "p.json", review, strlen(review), &err) == 0);
	plan_file_release(&pf);
	free(review);
	CHECK(plan_file_load(&pf, "/nonexistent/plan.json", &err) == EM_ENOTFOUND);
	CHECK(strstr(err.s, "cannot read '/nonexistent/plan.json'") != NULL);
	buf_release(&err);
}


/* Issue 12 item 3: a plan document cannot make apply send anything but a valid gp3 target for
 * the volume's size (vol-0a1b2c3d is 20 GiB: at most 10,000 IOPS). */
static void test_refuses_bad_targets(void)
{
	refused_variant("\"type\":\"gp3\"", "\"type\":\"io2\"",
			"plan file 'p.json': volumes[0] (volume 'vol-0a1b2c3d').target.type: 'io2' is not gp3");
	refused_variant("\"type\":\"gp3\"", "\"type\":\"sc1\"", "volumes[0] (volume 'vol-0a1b2c3d').target.type: 'sc1' is not gp3");
	refused_variant("\"type\":\"gp3\"", "\"type\":\"gp2\"", "volumes[0] (volume 'vol-0a1b2c3d').target.type: 'gp2' is not gp3");
	refused_variant("\"iops\":3000", "\"iops\":2999",
			"plan file 'p.json': volumes[0] (volume 'vol-0a1b2c3d').target.iops: iops 2999 outside the gp3 range");
	refused_variant("\"iops\":3000", "\"iops\":90000", "volumes[0] (volume 'vol-0a1b2c3d').target.iops: iops 90000 outside");
	refused_variant("\"iops\":3000", "\"iops\":10001",
			"volumes[0] (volume 'vol-0a1b2c3d').target.iops: iops 10001 above 500 per GiB for 20 GiB");
	refused_variant("\"throughput_mibps\":125}", "\"throughput_mibps\":124}",
			"volumes[0] (volume 'vol-0a1b2c3d').target.throughput_mibps: throughput 124 MiB/s outside");
	refused_variant("\"throughput_mibps\":125}", "\"throughput_mibps\":751}",
			"volumes[0] (volume 'vol-0a1b2c3d').target.throughput_mibps: throughput 751 MiB/s above");
	refused_variant("\"throughput_mibps\":125}", "\"throughput_mibps\":2001}",
			"volumes[0] (volume 'vol-0a1b2c3d').target.throughput_mibps: throughput 2001 MiB/s outside");
	refused_variant("\"size_gib\":20,", "", "volumes[0] (volume 'vol-0a1b2c3d').size_gib: missing or not a whole number");
	refused_variant("\"size_gib\":20,", "\"size_gib\":0,", "volumes[0] (volume 'vol-0a1b2c3d').size_gib: 0 is outside 1..65536");
	refused_variant("\"size_gib\":20,", "\"size_gib\":1e300,", "volumes[0] (volume 'vol-0a1b2c3d').size_gib: missing or not a whole number");
	refused_variant("\"iops\":100,", "\"iops\":1e300,", "volumes[0] (volume 'vol-0a1b2c3d').iops: not a whole number");
	/* 3,000 IOPS and 750 MiB/s are allowed on a 1 GiB volume (the baseline is not bound by size) */
	char *ok = variant("\"size_gib\":20,", "\"size_gib\":1,");
	struct plan_file pf;
	struct buf err = BUF_INIT;
	CHECK(plan_file_parse(&pf, "p.json", ok, strlen(ok), &err) == 0);
	CHECK_STR(err.s, "");
	plan_file_release(&pf);
	free(ok);
	/* a review volume's target is not applied: not checked against gp3 */
	char *review = variant("\"action\":\"migrate\"", "\"action\":\"review\"");
	char *rev_io2 = NULL;
	{
		const char *at = strstr(review, "\"type\":\"gp3\"");
		struct buf b = BUF_INIT;
		buf_add(&b, review, (size_t)(at - review));
		buf_adds(&b, "\"type\":\"io2\"");
		buf_adds(&b, at + strlen("\"type\":\"gp3\""));
		rev_io2 = buf_detach(&b);
	}
	CHECK(plan_file_parse(&pf, "p.json", rev_io2, strlen(rev_io2), &err) == 0);
	plan_file_release(&pf);
	free(review);
	free(rev_io2);
	buf_release(&err);
}

/* Issue 28 items 1 and 2: every name apply puts into a request, a ledger row or a Kubernetes API
 * path is checked against its grammar, so a tampered plan is refused naming the field instead of
 * crashing apply or reaching another resource. */
static void test_refuses_bad_names(void)
{
	const char *at = "\"region\":\"us-east-1\",";
	static const char *const regions[] = {"EU-WEST-1", "", "../../x", "us-east-1 ", "us-east-1?Action=DeleteVolume",
					      "us-east", "us-east-1a", "us-west-2-lax-1", "1-east-1"};
	for (size_t i = 0; i < sizeof regions / sizeof *regions; i++) {
		struct buf to = BUF_INIT, want = BUF_INIT;
		buf_addf(&to, "\"region\":\"%s\",", regions[i]);
		buf_addf(&want, "plan file 'p.json': volumes[0] (volume 'vol-0a1b2c3d').region: '%s' is not an AWS region name",
			 regions[i]);
		refused_variant(at, to.s, want.s);
		buf_release(&to);
		buf_release(&want);
	}
	refused_variant("\"region\":\"us-east-1\",", "\"region\":7,", "volumes[0] (volume 'vol-0a1b2c3d').region: missing");
	refused_variant("{\"volume_id\":\"vol-0a1b2c3d\",", "{\"volume_id\":\"vol-1/../x\",",
			"plan file 'p.json': volumes[0].volume_id: 'vol-1/../x' is not an EBS volume id");
	refused_variant("{\"volume_id\":\"vol-0a1b2c3d\",", "{\"volume_id\":\"VOL-0A1B2C3D\",",
			"volumes[0].volume_id: 'VOL-0A1B2C3D' is not an EBS volume id");
	/* the zone must be a zone of the volume's region; null is fine (exports may lack it) */
	refused_variant(at, "\"region\":\"us-east-1\",\"availability_zone\":\"us-west-2a\",",
			"volumes[0] (volume 'vol-0a1b2c3d').availability_zone: 'us-west-2a' is not an availability zone of "
			"region 'us-east-1'");
	refused_variant(at, "\"region\":\"us-east-1\",\"availability_zone\":\"us-east-1\",",
			"availability_zone: 'us-east-1' is not an availability zone");
	refused_variant(at, "\"region\":\"us-east-1\",\"availability_zone\":\"us-east-1-../a\",",
			"availability_zone: 'us-east-1-../a' is not an availability zone");
	refused_variant(at, "\"region\":\"us-east-1\",\"availability_zone\":1,", "availability_zone: not a string");
	refused_variant(at, "\"region\":\"us-east-1\",\"account\":\"1234/../5\",",
			"volumes[0] (volume 'vol-0a1b2c3d').account: '1234/../5' is not an AWS account id (12 digits)");
	static const char *const kube_bad[][2] = {
		{"{\"cluster\":\"PROD\",\"namespace\":\"db\",\"pvc\":\"data-0\"}", "kubernetes.cluster: 'PROD' is not a"},
		{"{\"cluster\":\"prod#x\",\"namespace\":\"db\",\"pvc\":\"data-0\"}", "kubernetes.cluster: 'prod#x'"},
		{"{\"cluster\":\"prod\",\"namespace\":\"../../../apis/rbac.authorization.k8s.io/v1/clusterroles/admin#\","
		 "\"pvc\":\"data-0\"}",
		 "kubernetes.namespace: '../../../apis/rbac.authorization.k8s.io/v1/clusterroles/admin#' is not a Kubernetes "
		 "namespace name"},
		{"{\"cluster\":\"prod\",\"namespace\":\"a.b\",\"pvc\":\"data-0\"}", "kubernetes.namespace: 'a.b'"},
		{"{\"cluster\":\"prod\",\"namespace\":\"db\",\"pvc\":\"..\"}", "kubernetes.pvc: '..' is not a Kubernetes object name"},
		{"{\"cluster\":\"prod\",\"namespace\":\"db\",\"pvc\":\"data 0\"}", "kubernetes.pvc: 'data 0'"},
		{"{\"cluster\":\"prod\",\"pvc\":\"data-0\"}", "kubernetes.namespace: missing (a PVC to patch needs"},
		{"{\"namespace\":\"db\",\"pvc\":\"data-0\"}", "kubernetes.cluster: missing"},
	};
	for (size_t i = 0; i < sizeof kube_bad / sizeof *kube_bad; i++) {
		struct buf to = BUF_INIT;
		buf_addf(&to, "\"region\":\"us-east-1\",\"kubernetes\":%s,", kube_bad[i][0]);
		refused_variant(at, to.s, kube_bad[i][1]);
		buf_release(&to);
	}
	/* what real plans hold is accepted: zones, Local Zones, labels, ids, EKS context ARNs */
	static const char *const good[] = {
		"\"region\":\"us-east-1\",\"availability_zone\":\"us-east-1a\",\"account\":\"111122223333\",",
		"\"region\":\"us-west-2\",\"availability_zone\":\"us-west-2-lax-1a\",\"account\":\"prod\",",
		"\"region\":\"us-east-1\",\"availability_zone\":\"us-east-1-wl1-bos-wlz-1\",",
		"\"region\":\"us-gov-west-1\",\"availability_zone\":null,",
		"\"region\":\"us-east-1\",\"kubernetes\":{\"cluster\":\"prod.example.com\",\"namespace\":\"db\","
		"\"pvc\":\"data-kafka-0\",\"driver\":\"ebs.csi.aws.com\"},",
		"\"region\":\"us-east-1\",\"kubernetes\":{\"cluster\":\"arn:aws:eks:us-east-1:111122223333:cluster/Prod_1\","
		"\"namespace\":\"db\",\"pvc\":\"data-kafka-0\"},",
		"\"region\":\"us-east-1\",\"kubernetes\":{\"cluster\":\"ops+ci@Prod-1.us-east-1.eksctl.io\","
		"\"namespace\":\"db\",\"pvc\":\"data-kafka-0\"},",
		"\"region\":\"us-east-1\",\"kubernetes\":null,",
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		char *t = variant(at, good[i]);
		struct plan_file pf;
		struct buf err = BUF_INIT;
		int rc = plan_file_parse(&pf, "p.json", t, strlen(t), &err);
		if (rc)
			printf("# refused: %s\n", err.s);
		CHECK(rc == 0);
		plan_file_release(&pf);
		buf_release(&err);
		free(t);
	}
	/* an EKS ARN or eksctl name is checked whole: another service, a bad region or account, another
	 * domain or a path is no context name */
	static const char *const arns[] = {"arn:aws:iam::111122223333:role/x", "arn:aws:eks:US-1:111122223333:cluster/p",
					   "arn:aws:eks:us-east-1:1111:cluster/p", "arn:aws:eks:us-east-1:111122223333:cluster/../p",
					   "arn:aws:eks:us-east-1:111122223333:cluster/", "admin@prod.example.com",
					   "a b@prod.us-east-1.eksctl.io", "@prod.us-east-1.eksctl.io", "x@.eksctl.io",
					   "x@../prod.eksctl.io"};
	for (size_t i = 0; i < sizeof arns / sizeof *arns; i++) {
		struct buf to = BUF_INIT;
		buf_addf(&to, "\"region\":\"us-east-1\",\"kubernetes\":{\"cluster\":\"%s\",\"namespace\":\"db\","
			      "\"pvc\":\"d\"},",
			 arns[i]);
		refused_variant(at, to.s, "kubernetes.cluster: '");
		buf_release(&to);
	}
	/* review and skip volumes are not acted on: their names are not apply's to check */
	refused_variant("\"action\":\"migrate\",\"region\":\"us-east-1\"", "\"action\":\"migrate\",\"region\":\"x\"",
			"region: 'x' is not");
	char *skip = variant("\"action\":\"migrate\",\"region\":\"us-east-1\"", "\"action\":\"skip\",\"region\":\"x\"");
	struct plan_file pf;
	struct buf err = BUF_INIT;
	CHECK(plan_file_parse(&pf, "p.json", skip, strlen(skip), &err) == 0);
	plan_file_release(&pf);
	buf_release(&err);
	free(skip);
}

/* Issue 12 item 6: a second document (or anything else) after the plan is refused, never
 * dropped: `cat a.json b.json > p.json` is not a plan. */
static void test_refuses_trailing_data(void)
{
	struct buf two = BUF_INIT;
	buf_adds(&two, GOOD);
	buf_adds(&two, GOOD);
	refused(two.s, two.len, "plan file 'p.json': trailing data after the plan document at line 2, column 1");
	buf_release(&two);
	char *junk = xstrdup(GOOD);
	junk[strlen(junk) - 1] = 'x';
	refused(junk, strlen(junk), "plan file 'p.json': trailing data after the plan document at line 1");
	free(junk);
	/* a raw control byte inside a string is not JSON (RFC 8259), whatever cJSON takes: refused at
	 * the string's opening quote, so a tampered name can never pass as a string */
	refused_variant("\"region\":\"us-east-1\",", "\"region\":\"us-east-1\n\",",
			"plan file 'p.json': not valid JSON at line 1");
	refused_variant("\"region\":\"us-east-1\",", "\"region\":\"us-\x01" "east-1\",",
			"holds the raw control byte 0x01");
	/* whitespace after the document is fine */
	struct buf ws = BUF_INIT;
	buf_adds(&ws, GOOD);
	buf_adds(&ws, " \r\n\t\n");
	struct plan_file pf;
	struct buf err = BUF_INIT;
	CHECK(plan_file_parse(&pf, "p.json", ws.s, ws.len, &err) == 0);
	plan_file_release(&pf);
	buf_release(&ws);
	buf_release(&err);
}


/* plan_doc_parse hands apply the migrate/blocked volumes (review/skip are not acted on). */
static void test_doc_entries(void)
{
	struct plan_doc d;
	struct buf err = BUF_INIT;
	CHECK(plan_doc_parse(&d, "recorded plan 7", GOOD, strlen(GOOD), &err) == 0);
	CHECK_STR(err.s, "");
	CHECK_I64(d.n, 1);
	if (d.n == 1) {
		CHECK_STR(d.v[0].volume_id, "vol-0a1b2c3d");
		CHECK_STR(d.v[0].region, "us-east-1");
		CHECK(d.v[0].account == NULL && d.v[0].cluster == NULL && d.v[0].pvc == NULL);
		CHECK_I64(d.v[0].type, EBS_GP2);
		CHECK_I64(d.v[0].size_gib, 20);
		CHECK_I64(d.v[0].iops, 100);
		CHECK_I64(d.v[0].throughput, 0);
		CHECK_I64(d.v[0].target_iops, 3000);
		CHECK_I64(d.v[0].target_throughput, 125);
		CHECK_I64(d.v[0].index, 0);
	}
	CHECK_STR(d.mode, "match");
	plan_doc_release(&d);
	char *bad = variant("\"type\":\"gp3\"", "\"type\":\"io2\"");
	CHECK_I64(plan_doc_parse(&d, "recorded plan 7", bad, strlen(bad), &err), EM_EINPUT);
	CHECK(strstr(err.s, "recorded plan 7: volumes[0] (volume 'vol-0a1b2c3d').target.type: 'io2' is not gp3") != NULL);
	CHECK(d.n == 0 && d.v == NULL && d.mode == NULL);
	free(bad);
	buf_release(&err);
}

static void test_record_once(void)
{
	char dir[] = "/tmp/em-planfile-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	char db[4096];
	snprintf(db, sizeof db, "%s/state/e.db", dir);
	struct ledger *l = NULL;
	struct buf err = BUF_INIT;
	CHECK(ledger_open(&l, db, &err) == 0);
	struct plan_file pf;
	CHECK(plan_file_parse(&pf, "p.json", GOOD, strlen(GOOD), &err) == 0);
	int64_t id = 0;
	int recorded = -1;
	CHECK(plan_file_record(l, &pf, &id, &recorded, &err) == 0);
	CHECK_I64(id, 1);
	CHECK_I64(recorded, 1);
	CHECK(plan_file_record(l, &pf, &id, &recorded, &err) == 0);
	CHECK_I64(id, 1);
	CHECK_I64(recorded, 0);
	CHECK_STR(err.s, "");
	plan_file_release(&pf);
	ledger_close(l);
	buf_release(&err);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

int main(void)
{
	test_accepts_good();
	test_accepts_example_plan();
	test_refusals();
	test_refuses_bad_targets();
	test_refuses_bad_names();
	test_refuses_trailing_data();
	test_doc_entries();
	test_record_once();
	return tap_done();
}
