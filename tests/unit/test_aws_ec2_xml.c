/* test_aws_ec2_xml.c - the EC2 Query API answer reader (aws_ec2_parse_page): well-formed pages
 * decode, and shapes a server should never send (a tagSet or attachmentSet child that is not
 * <item>, a field twice, absurd numbers) are ignored or refused without undefined behaviour
 * (issue 12 item 2: these indexed [n-1] of an empty or stale array). Run it under ASan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_ec2.h"
/* Twice on purpose: the header's include guard must cover all of it (its second half, the live
 * Query API and the export writers, once sat after the #endif and broke a second include). */
#include "ebsmigrate/aws_ec2.h" /* NOLINT(readability-duplicate-include) */
#include "ebsmigrate/common.h"
#include "tap.h"

#define VOL_OPEN "<DescribeVolumesResponse><requestId>r</requestId><volumeSet>"
#define VOL_CLOSE "</volumeSet></DescribeVolumesResponse>"
#define VOL_FIELDS(id) \
	"<volumeId>" id "</volumeId><size>10</size><availabilityZone>us-east-1a</availabilityZone>" \
	"<volumeType>gp2</volumeType><status>in-use</status>"

static int parse(enum ec2_page_kind kind, const char *xml, struct fleet *f, struct ec2_mod_list *mods,
		 char **next, struct buf *err)
{
	buf_reset(err);
	return aws_ec2_parse_page(kind, xml, strlen(xml), "ec2:us-east-1", f, mods, next, err);
}

static void test_well_formed_volumes(void)
{
	static const char xml[] = VOL_OPEN "<item>" VOL_FIELDS("vol-1")
		"<attachmentSet><item><instanceId>i-1</instanceId><device>/dev/xvdf</device><status>attached</status>"
		"</item></attachmentSet><tagSet><item><key>team</key><value>db</value></item></tagSet></item>" VOL_CLOSE
		"";
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	char *next = NULL;
	CHECK_I64(parse(EC2_PAGE_VOLUMES, xml, &f, NULL, &next, &err), 0);
	CHECK_I64(f.n, 1);
	if (f.n == 1) {
		CHECK_I64(f.vols[0].n_attachments, 1);
		CHECK_STR(f.vols[0].n_attachments ? f.vols[0].attachments[0].instance_id : NULL, "i-1");
		CHECK_I64(f.vols[0].n_tags, 1);
		CHECK_STR(f.vols[0].n_tags ? f.vols[0].tags[0].value : NULL, "db");
	}
	CHECK(next == NULL);
	free(next);
	fleet_release(&f);
	buf_release(&err);
}

/* The shapes from the issue: a non-<item> child of tagSet/attachmentSet holding leaf fields,
 * on the first volume (empty arrays: a NULL write) and after a volume with tags and
 * attachments (stale arrays: a write before the start of the heap block). */
static void test_non_item_children_are_ignored(void)
{
	static const char *const pages[] = {
		VOL_OPEN "<item>" VOL_FIELDS("vol-1") "<tagSet><x><key>k</key><value>v</value></x></tagSet></item>" VOL_CLOSE,
		VOL_OPEN "<item>" VOL_FIELDS("vol-1")
			"<attachmentSet><member><instanceId>i-9</instanceId><device>d</device></member></attachmentSet>"
			"</item>" VOL_CLOSE,
		VOL_OPEN "<item>" VOL_FIELDS("vol-0")
			"<attachmentSet><item><instanceId>i-0</instanceId></item></attachmentSet>"
			"<tagSet><item><key>a</key><value>b</value></item></tagSet></item>"
			"<item>" VOL_FIELDS("vol-1") "<tagSet><x><key>k</key></x></tagSet>"
			"<attachmentSet><member><status>attached</status></member></attachmentSet></item>" VOL_CLOSE,
	};
	for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
		struct fleet f;
		fleet_init(&f);
		struct buf err = BUF_INIT;
		CHECK_I64(parse(EC2_PAGE_VOLUMES, pages[i], &f, NULL, NULL, &err), 0);
		struct volume *v = fleet_find(&f, "vol-1");
		CHECK(v != NULL);
		if (v) {
			CHECK_I64(v->n_tags, 0);
			CHECK_I64(v->n_attachments, 0);
		}
		struct volume *v0 = fleet_find(&f, "vol-0");
		if (v0) { /* the stale arrays' owner keeps exactly what it had */
			CHECK_I64(v0->n_tags, 1);
			CHECK_STR(v0->n_tags ? v0->tags[0].key : NULL, "a");
			CHECK_I64(v0->n_attachments, 1);
		}
		fleet_release(&f);
		buf_release(&err);
	}
}

/* A field sent twice keeps the last value and leaks nothing (LeakSanitizer checks). */
static void test_repeated_fields(void)
{
	static const char vols[] = VOL_OPEN "<item>" VOL_FIELDS("vol-a") "<volumeId>vol-b</volumeId>"
		"<kmsKeyId>k1</kmsKeyId><kmsKeyId>k2</kmsKeyId><attachmentSet><item><instanceId>i-1</instanceId>"
		"<instanceId>i-2</instanceId></item></attachmentSet><tagSet><item><key>a</key><key>b</key></item></tagSet>"
		"</item>" VOL_CLOSE;
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	CHECK_I64(parse(EC2_PAGE_VOLUMES, vols, &f, NULL, NULL, &err), 0);
	struct volume *v = fleet_find(&f, "vol-b");
	CHECK(v != NULL);
	if (v && v->n_attachments && v->n_tags) {
		CHECK_STR(v->attachments[0].instance_id, "i-2");
		CHECK_STR(v->tags[0].key, "b");
		CHECK_STR(v->kms_key_id, "k2");
	}
	static const char mods[] = "<DescribeVolumesModificationsResponse><volumeModificationSet><item>"
				   "<volumeId>vol-1</volumeId><volumeId>vol-2</volumeId>"
				   "<modificationState>modifying</modificationState><modificationState>optimizing"
				   "</modificationState><statusMessage>a</statusMessage><statusMessage>b</statusMessage>"
				   "<startTime>2026-01-01T00:00:00.000Z</startTime><targetIops>4000</targetIops></item>"
				   "</volumeModificationSet></DescribeVolumesModificationsResponse>";
	struct ec2_mod_list ml;
	memset(&ml, 0, sizeof ml);
	CHECK_I64(parse(EC2_PAGE_MODIFICATIONS, mods, &f, &ml, NULL, &err), 0);
	CHECK_I64(ml.n, 1);
	if (ml.n == 1) {
		CHECK_STR(ml.volume_ids[0], "vol-2");
		CHECK_I64(ml.mods[0].state, MOD_OPTIMIZING);
		CHECK_STR(volume_mod_state_name(&ml.mods[0]), "optimizing");
		CHECK_I64(ml.mods[0].target_iops, 4000);
	}
	static const char modify[] = "<ModifyVolumeResponse><volumeModification><volumeId>vol-1</volumeId>"
				     "<modificationState>modifying</modificationState><modificationState>x"
				     "</modificationState></volumeModification></ModifyVolumeResponse>";
	CHECK_I64(parse(EC2_PAGE_MODIFY_VOLUME, modify, &f, &ml, NULL, &err), 0);
	ec2_mod_list_release(&ml);
	fleet_release(&f);
	buf_release(&err);
}

/* Fields outside volumeSet/item (a stray child of volumeSet) do not leak into the next volume. */
static void test_fields_outside_items(void)
{
	static const char xml[] = VOL_OPEN "<junk><volumeId>vol-stray</volumeId><kmsKeyId>stray</kmsKeyId></junk>"
		"<item>" VOL_FIELDS("vol-1") "</item>" VOL_CLOSE;
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	CHECK_I64(parse(EC2_PAGE_VOLUMES, xml, &f, NULL, NULL, &err), 0);
	CHECK_I64(f.n, 1);
	CHECK(fleet_find(&f, "vol-stray") == NULL);
	struct volume *v = fleet_find(&f, "vol-1");
	CHECK(v && v->kms_key_id == NULL);
	fleet_release(&f);
	buf_release(&err);
}

/* A baseline throughput far beyond int64 milli-MB/s is ignored, not converted (UBSan checks). */
static void test_instance_type_numbers(void)
{
	static const char xml[] = "<DescribeInstanceTypesResponse><instanceTypeSet><item><instanceType>m5.large"
				  "</instanceType><ebsInfo><ebsOptimizedInfo><baselineIops>3600</baselineIops>"
				  "<baselineThroughputInMBps>1e300</baselineThroughputInMBps></ebsOptimizedInfo>"
				  "</ebsInfo></item></instanceTypeSet></DescribeInstanceTypesResponse>";
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	int rc = parse(EC2_PAGE_INSTANCE_TYPES, xml, &f, NULL, NULL, &err);
	CHECK(rc == 0 || rc == EM_ESERVER);
	fleet_release(&f);
	buf_release(&err);
}

/* EC2's modification state is read once into its enum: the four names, any other word kept as
 * EC2 wrote it (an empty one too) for the outputs, an item without a state dropped; a state given
 * twice keeps the last (and frees the first: run under ASan). */
static void test_modification_states(void)
{
#define MOD_ITEM(id, state) \
	"<item><volumeId>" id "</volumeId>" state "<startTime>2026-01-01T00:00:00.000Z</startTime></item>"
	static const char xml[] = "<DescribeVolumesModificationsResponse><volumeModificationSet>"
		MOD_ITEM("vol-1", "<modificationState>completed</modificationState>")
		MOD_ITEM("vol-2", "<modificationState>paused</modificationState>")
		MOD_ITEM("vol-3", "<modificationState></modificationState>")
		MOD_ITEM("vol-4", "")
		MOD_ITEM("vol-5", "<modificationState>held</modificationState><modificationState>failed</modificationState>")
		MOD_ITEM("vol-6", "<modificationState>modifying</modificationState><modificationState>Optimizing"
				  "</modificationState>")
		"</volumeModificationSet></DescribeVolumesModificationsResponse>";
#undef MOD_ITEM
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	struct ec2_mod_list ml;
	memset(&ml, 0, sizeof ml);
	CHECK_I64(parse(EC2_PAGE_MODIFICATIONS, xml, &f, &ml, NULL, &err), 0);
	static const struct {
		const char *id;
		enum volume_mod_state state;
		const char *name;
	} want[] = {
		{"vol-1", MOD_COMPLETED, "completed"}, {"vol-2", MOD_STATE_OTHER, "paused"},
		{"vol-3", MOD_STATE_OTHER, ""},        {"vol-5", MOD_FAILED, "failed"},
		{"vol-6", MOD_STATE_OTHER, "Optimizing"}, /* EC2's names are lower case: no folding */
	};
	CHECK_I64(ml.n, 5);
	for (size_t i = 0; i < ml.n && i < sizeof want / sizeof want[0]; i++) {
		CHECK_STR(ml.volume_ids[i], want[i].id);
		CHECK_I64(ml.mods[i].state, want[i].state);
		CHECK_STR(volume_mod_state_name(&ml.mods[i]), want[i].name);
		CHECK_I64(volume_mod_in_flight(ml.mods[i].state), 0);
	}
	CHECK(ml.n >= 4 && ml.mods[3].state_text == NULL); /* a known state keeps no text */
	ec2_mod_list_release(&ml);
	fleet_release(&f);
	buf_release(&err);
}

/* Not XML at all: a clear error naming the origin. */
static void test_not_xml(void)
{
	struct fleet f;
	fleet_init(&f);
	struct buf err = BUF_INIT;
	CHECK_I64(parse(EC2_PAGE_VOLUMES, VOL_OPEN "<item>", &f, NULL, NULL, &err), EM_ESERVER);
	CHECK(strstr(err.s, "ec2:us-east-1: DescribeVolumes answer is not valid XML") != NULL);
	fleet_release(&f);
	buf_release(&err);
}

int main(void)
{
	test_well_formed_volumes();
	test_non_item_children_are_ignored();
	test_repeated_fields();
	test_fields_outside_items();
	test_instance_type_numbers();
	test_modification_states();
	test_not_xml();
	return tap_done();
}
