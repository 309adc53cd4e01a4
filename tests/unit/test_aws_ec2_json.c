/* test_aws_ec2_json.c - the AWS CLI volumes export reader keeps load_volume's meaning on its one-pass
 * path (load_volume_fast, issue 14 target 3): the first of duplicate keys counts, null is absent,
 * a non-boolean Encrypted is false, a tag without Key is skipped; elements it declines (an
 * attachment that is not an object, more than 16 tags, a bad field) are read by the old reader
 * with its values and messages. Run it under ASan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_ec2.h"
/* twice on purpose: the include guard covers the whole header (it once ended before the live
 * API's declarations, so a second inclusion redefined enum ec2_page_kind) */
#include "ebsmigrate/aws_ec2.h" // NOLINT(readability-duplicate-include)
#include "ebsmigrate/common.h"
#include "tap.h"

static int load(const char *json, struct fleet *f, struct buf *err)
{
	buf_reset(err);
	return aws_ec2_load_export(f, NULL, json, strlen(json), "vols.json", "acct", err);
}

static void test_one_pass_semantics(void)
{
	static const char json[] =
		"{\"Volumes\":[{\"VolumeId\":\"vol-1\",\"VolumeId\":\"vol-dup\",\"AvailabilityZone\":\"us-east-1a\","
		"\"Size\":100,\"Size\":7,\"VolumeType\":\"gp2\",\"Iops\":null,\"Throughput\":125,\"State\":null,"
		"\"Encrypted\":1,\"MultiAttachEnabled\":true,\"KmsKeyId\":\"k\",\"CreateTime\":\"2025-05-01T10:00:00.000Z\","
		"\"Attachments\":[{\"InstanceId\":\"i-1\",\"Device\":null,\"State\":\"attached\",\"State\":\"x\"}],"
		"\"Tags\":[{\"Value\":\"orphan\"},{\"Key\":\"team\",\"Value\":\"db\"},{\"Key\":\"empty\",\"Value\":null}]}]}";
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	CHECK(load(json, &f, &err) > 0);
	CHECK_I64(f.n, 1);
	if (f.n == 1) {
		const struct volume *v = &f.vols[0];
		CHECK_STR(v->volume_id, "vol-1");
		CHECK_I64(v->size_gib, 100);
		CHECK_I64(v->iops, 0);
		CHECK_I64(v->throughput, 125);
		CHECK_STR(v->state, "unknown");
		CHECK_I64(v->encrypted, 0);
		CHECK_I64(v->multi_attach, 1);
		CHECK_STR(v->kms_key_id, "k");
		CHECK_I64(v->create_time, 1746093600);
		CHECK_STR(v->region, "us-east-1");
		CHECK_I64(v->n_attachments, 1);
		if (v->n_attachments == 1) {
			CHECK_STR(v->attachments[0].instance_id, "i-1");
			CHECK(v->attachments[0].device == NULL);
			CHECK_STR(v->attachments[0].state, "attached");
		}
		CHECK_I64(v->n_tags, 2);
		if (v->n_tags == 2) {
			CHECK_STR(v->tags[0].key, "team");
			CHECK_STR(v->tags[0].value, "db");
			CHECK_STR(v->tags[1].key, "empty");
			CHECK_STR(v->tags[1].value, "");
		}
	}
	fleet_release(&f);
	buf_release(&err);
}

static void test_declined_elements(void)
{
	struct buf json = BUF_INIT;
	buf_adds(&json, "{\"Volumes\":[{\"VolumeId\":\"vol-2\",\"AvailabilityZone\":\"eu-west-1b\",\"Size\":5,"
			"\"VolumeType\":\"gp3\",\"Attachments\":[7],\"Tags\":[");
	for (int i = 0; i < 20; i++)
		buf_addf(&json, "%s{\"Key\":\"k%d\",\"Value\":\"v\"}", i ? "," : "", i);
	buf_adds(&json, "]}]}");
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	CHECK(load(json.s, &f, &err) > 0);
	CHECK_I64(f.n, 1);
	if (f.n == 1) {
		/* the old reader's reading of a non-object attachment: one attachment, no fields */
		CHECK_I64(f.vols[0].n_attachments, 1);
		CHECK(f.vols[0].n_attachments == 1 && f.vols[0].attachments[0].instance_id == NULL);
		CHECK_I64(f.vols[0].n_tags, 20);
		CHECK_STR(f.vols[0].n_tags == 20 ? f.vols[0].tags[19].key : NULL, "k19");
	}
	fleet_release(&f);
	fleet_init(&f);
	CHECK(load("{\"Volumes\":[{\"VolumeId\":\"vol-3\",\"AvailabilityZone\":\"us-east-1a\",\"Size\":5,"
		   "\"VolumeType\":\"gp2\",\"CreateTime\":\"yesterday\"}]}",
		   &f, &err) < 0);
	CHECK_STR(err.s, "vols.json: Volumes[0] (volume 'vol-3').CreateTime: 'yesterday' is not an RFC 3339 time");
	CHECK_I64(f.n, 0);
	CHECK(load("{\"Volumes\":[{\"VolumeId\":\"vol-4\",\"AvailabilityZone\":\"us-east-1a\",\"Size\":5,"
		   "\"VolumeType\":\"gp9\"}]}",
		   &f, &err) < 0);
	CHECK_STR(err.s, "vols.json: Volumes[0] (volume 'vol-4').VolumeType: unknown volume type 'gp9'");
	fleet_release(&f);
	buf_release(&err);
	buf_release(&json);
}

/* A modification state the reader does not know is kept as EC2 wrote it: an `inventory --save`
 * export writes it back unchanged (and reads back the same), and it does not count as in flight. */
static void test_unknown_modification_state_round_trip(void)
{
	static const char vols[] = "{\"Volumes\":[{\"VolumeId\":\"vol-1\",\"AvailabilityZone\":\"us-east-1a\","
				   "\"Size\":100,\"VolumeType\":\"gp2\"}]}";
	static const char mods[] =
		"{\"VolumesModifications\":["
		"{\"VolumeId\":\"vol-1\",\"ModificationState\":\"completed\",\"StartTime\":\"2026-01-01T00:00:00Z\"},"
		"{\"VolumeId\":\"vol-1\",\"ModificationState\":\"paused\",\"StartTime\":\"2026-01-02T00:00:00Z\"},"
		"{\"VolumeId\":\"vol-1\",\"ModificationState\":\"\",\"StartTime\":\"2026-01-03T00:00:00Z\"}]}";
	struct buf err = BUF_INIT, first = BUF_INIT, again = BUF_INIT;
	for (int round = 0; round < 2; round++) {
		struct fleet f;
		fleet_init(&f);
		struct ec2_mod_list ml;
		memset(&ml, 0, sizeof ml);
		const char *m = round ? first.s : mods;
		CHECK(aws_ec2_load_export(&f, &ml, vols, strlen(vols), "vols.json", NULL, &err) > 0);
		CHECK(aws_ec2_load_export(&f, &ml, m, strlen(m), "mods.json", NULL, &err) > 0);
		CHECK_STR(err.s, "");
		aws_ec2_attach_mods(&f, &ml);
		CHECK_I64(f.n, 1);
		if (f.n == 1 && f.vols[0].n_mods == 3) {
			const struct volume *v = &f.vols[0];
			CHECK_I64(v->mods[0].state, MOD_COMPLETED);
			CHECK_I64(v->mods[1].state, MOD_STATE_OTHER);
			CHECK_STR(volume_mod_state_name(&v->mods[1]), "paused");
			CHECK_I64(v->mods[2].state, MOD_STATE_OTHER);
			CHECK_STR(volume_mod_state_name(volume_latest_mod(v)), "");
			CHECK_I64(volume_mod_in_flight(volume_latest_mod(v)->state), 0);
		} else {
			CHECK_I64(f.n == 1 ? f.vols[0].n_mods : 0, 3);
		}
		aws_ec2_write_modifications_export(round ? &again : &first, &f, "us-east-1", NULL);
		ec2_mod_list_release(&ml);
		fleet_release(&f);
	}
	CHECK(strstr(first.s, "\"ModificationState\":\"paused\"") != NULL);
	CHECK(strstr(first.s, "\"ModificationState\":\"\"") != NULL);
	CHECK(strstr(first.s, "\"ModificationState\":\"completed\"") != NULL);
	CHECK_STR(again.s, first.s);
	buf_release(&err);
	buf_release(&first);
	buf_release(&again);
}

int main(void)
{
	test_one_pass_semantics();
	test_declined_elements();
	test_unknown_modification_state_round_trip();
	return tap_done();
}
