/*
 * test_spill.c - documents too large to hold whole: buf_spill hands a writer's buffer on at the
 * threshold and empties it; em_stage_open/write/close + em_commit_file write a file in pieces
 * with em_write_file_atomic's promises (the target appears only at commit, with its mode; a
 * failure or an abandoned stage leaves no temporary file); and the --save exports written
 * through a spill are byte for byte the ones written whole (volumes, modifications, kube objects),
 * as is the inventory document (jsonw_key_records).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/inventory_output.h"
#include "ebsmigrate/kube_objects.h"
#include "tap.h"

struct pieces {
	struct buf all;
	size_t n;
	size_t largest;
};

static void collect(void *ctx, const char *s, size_t n)
{
	struct pieces *p = ctx;
	buf_add(&p->all, s, n);
	p->n++;
	if (n > p->largest)
		p->largest = n;
}

static void test_buf_spill(void)
{
	struct pieces p = {BUF_INIT, 0, 0};
	struct buf_spill sp = {collect, &p};
	struct buf b = BUF_INIT;
	buf_adds(&b, "abc");
	buf_spill(&b, &sp, 4); /* under the threshold: kept */
	CHECK_I64(p.n, 0);
	CHECK_I64(b.len, 3);
	buf_adds(&b, "d");
	buf_spill(&b, &sp, 4); /* at it: handed on, emptied */
	CHECK_I64(p.n, 1);
	CHECK_I64(b.len, 0);
	CHECK_STR(b.s, "");
	buf_spill(&b, &sp, 0); /* nothing held: no empty piece */
	CHECK_I64(p.n, 1);
	buf_adds(&b, "e");
	buf_spill(&b, &sp, 0); /* at 0: whatever it holds */
	CHECK_I64(p.n, 2);
	CHECK_STR(p.all.s, "abcde");
	buf_adds(&b, "kept");
	buf_spill(&b, NULL, 0); /* no spill: the document stays in the buffer */
	CHECK_STR(b.s, "kept");
	buf_release(&b);
	buf_release(&p.all);
}

static size_t entries(const char *dir)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	if (d)
		closedir(d);
	return n;
}

static void test_staged_file(void)
{
	char dir[] = "/tmp/test-spill-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	struct buf path = BUF_INIT, tmp = BUF_INIT, err = BUF_INIT, back = BUF_INIT;
	buf_addf(&path, "%s/out.json", dir);
	struct em_staged st;
	CHECK_I64(em_stage_open(&st, path.s, 0644, &err), 0);
	for (int i = 0; i < 1000; i++) {
		char line[32];
		int n = snprintf(line, sizeof line, "line %04d\n", i);
		em_stage_write(&st, line, (size_t)n);
	}
	CHECK(access(path.s, F_OK) != 0); /* not there before the commit */
	CHECK_I64(em_stage_close(&st, &tmp, &err), 0);
	CHECK(access(path.s, F_OK) != 0);
	CHECK_I64(em_commit_file(tmp.s, path.s, &err), 0);
	CHECK_I64(em_read_file(path.s, &back, &err), 0);
	CHECK_I64(back.len, 10000);
	CHECK(strncmp(back.s, "line 0000\nline 0001\n", 20) == 0);
	CHECK(strcmp(back.s + back.len - 10, "line 0999\n") == 0);
	struct stat sb;
	CHECK(stat(path.s, &sb) == 0 && (sb.st_mode & 0777) == (0644 & ~(mode_t)em_umask()));
	CHECK_I64(entries(dir), 1); /* the temporary file became the target */

	/* an abandoned stage leaves nothing */
	struct buf other = BUF_INIT;
	buf_addf(&other, "%s/abandoned.json", dir);
	CHECK_I64(em_stage_open(&st, other.s, 0644, &err), 0);
	em_stage_write(&st, "{", 1);
	em_stage_abandon(&st);
	CHECK_I64(entries(dir), 1);

	/* a write error is kept and reported at close, naming the target; nothing is left */
	CHECK_I64(em_stage_open(&st, other.s, 0644, &err), 0);
	close(st.fd);
	st.fd = open("/dev/null", O_RDONLY); /* writes now fail (EBADF) */
	em_stage_write(&st, "x", 1);
	CHECK(st.error != 0);
	buf_reset(&err);
	CHECK(em_stage_close(&st, &tmp, &err) == EM_EIO);
	CHECK(strstr(err.s, "abandoned.json") != NULL);
	buf_reset(&err);
	CHECK(access(other.s, F_OK) != 0);
	/* the close removed the stage file of the failed write (its name was in st.tmp) */
	CHECK_I64(entries(dir), 1);

	/* a directory that does not exist: refused at open, naming the path */
	struct buf missing = BUF_INIT;
	buf_addf(&missing, "%s/no/such/dir/x.json", dir);
	buf_reset(&err);
	CHECK(em_stage_open(&st, missing.s, 0644, &err) == EM_EIO);
	CHECK(strstr(err.s, "no/such/dir/x.json") != NULL);

	unlink(path.s);
	rmdir(dir);
	buf_release(&missing);
	buf_release(&other);
	buf_release(&path);
	buf_release(&tmp);
	buf_release(&err);
	buf_release(&back);
}

/* A fleet large enough that the exports span several megabyte pieces. */
static void big_fleet(struct fleet *f, struct kube_set *ks)
{
	struct buf json = BUF_INIT, err = BUF_INIT;
	buf_adds(&json, "{\"Volumes\":[");
	for (int i = 0; i < 9000; i++)
		buf_addf(&json,
			 "%s{\"VolumeId\":\"vol-%017d\",\"AvailabilityZone\":\"us-east-1a\",\"Size\":%d,"
			 "\"VolumeType\":\"gp2\",\"Iops\":%d,\"State\":\"in-use\",\"Encrypted\":false,"
			 "\"CreateTime\":\"2025-05-01T10:00:00.000Z\",\"Attachments\":[{\"InstanceId\":\"i-%d\","
			 "\"Device\":\"/dev/xvdb\",\"State\":\"attached\",\"VolumeId\":\"vol-%017d\"}],"
			 "\"Tags\":[{\"Key\":\"team\",\"Value\":\"t\\\"%d\"},{\"Key\":\"kubernetes.io/created-for/pvc/name\","
			 "\"Value\":\"data-%d\"}]}",
			 i ? "," : "", i, 10 + i % 900, 3 * (10 + i % 900), i % 50, i, i % 7, i);
	buf_adds(&json, "]}");
	CHECK(aws_ec2_load_export(f, NULL, json.s, json.len, "vols.json", "acct", &err) > 0);
	buf_reset(&json);
	buf_adds(&json, "{\"VolumesModifications\":[");
	for (int i = 0; i < 9000; i += 3)
		buf_addf(&json,
			 "%s{\"VolumeId\":\"vol-%017d\",\"ModificationState\":\"completed\",\"TargetVolumeType\":\"gp3\","
			 "\"TargetIops\":3000,\"TargetSize\":100,\"TargetThroughput\":125,\"OriginalVolumeType\":\"gp2\","
			 "\"OriginalIops\":300,\"OriginalSize\":100,\"Progress\":100,"
			 "\"StartTime\":\"2026-11-01T00:00:00.000Z\",\"EndTime\":\"2026-11-01T00:06:00.000Z\"}",
			 i ? "," : "", i);
	buf_adds(&json, "]}");
	struct ec2_mod_list mods;
	memset(&mods, 0, sizeof mods);
	CHECK(aws_ec2_load_export(f, &mods, json.s, json.len, "mods.json", "acct", &err) > 0);
	aws_ec2_attach_mods(f, &mods);
	ec2_mod_list_release(&mods);
	buf_reset(&json);
	buf_adds(&json, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
	for (int i = 0; i < 9000; i++)
		buf_addf(&json,
			 "%s{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-%d\"},"
			 "\"spec\":{\"capacity\":{\"storage\":\"100Gi\"},\"csi\":{\"driver\":\"ebs.csi.aws.com\","
			 "\"volumeHandle\":\"vol-%017d\"},\"claimRef\":{\"namespace\":\"ns-%d\",\"name\":\"data-%d\"},"
			 "\"storageClassName\":\"gp2\"}},"
			 "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"data-%d\","
			 "\"namespace\":\"ns-%d\",\"labels\":{\"app\":\"db\"}},\"spec\":{\"volumeName\":\"pv-%d\","
			 "\"storageClassName\":\"gp2\"}}",
			 i ? "," : "", i, i, i % 9, i, i, i % 9, i);
	buf_adds(&json, "]}");
	CHECK_I64(kube_objects_load(ks, f, "c1", json.s, json.len, "c1.json", &err), 18000);
	if (err.len)
		fprintf(stderr, "# %s\n", err.s);
	buf_release(&json);
	buf_release(&err);
}

static void test_spilled_exports(void)
{
	struct fleet f;
	fleet_init(&f);
	struct kube_set ks;
	kube_set_init(&ks);
	big_fleet(&f, &ks);
	CHECK_I64(f.n, 9000);
	static const char *const regions[] = {"us-east-1"};
	const struct inventory_meta meta = {1796126400, "123456789012", regions, 1};
	for (int kind = 0; kind < 4; kind++) {
		struct buf whole = BUF_INIT, b = BUF_INIT;
		struct pieces p = {BUF_INIT, 0, 0};
		struct buf_spill sp = {collect, &p};
		if (kind == 0) {
			aws_ec2_write_volumes_export(&whole, &f, "us-east-1", NULL);
			aws_ec2_write_volumes_export(&b, &f, "us-east-1", &sp);
		} else if (kind == 1) {
			aws_ec2_write_modifications_export(&whole, &f, "us-east-1", NULL);
			aws_ec2_write_modifications_export(&b, &f, "us-east-1", &sp);
		} else if (kind == 2) {
			kube_objects_write_export(&whole, &ks, &f, "c1", NULL);
			kube_objects_write_export(&b, &ks, &f, "c1", &sp);
		} else {
			inventory_write_json(&whole, &f, &meta);
			inventory_write_json_spilled(&f, &meta, &sp);
		}
		CHECK(whole.len > (kind == 1 ? 100000 : BUF_SPILL_AT));
		CHECK_I64(b.len, 0); /* everything handed on, the end too */
		CHECK(p.n >= (kind == 1 ? 1 : 2));
		CHECK(p.largest < BUF_SPILL_AT + 4096); /* a megabyte and one element at a time */
		CHECK(p.all.len == whole.len && memcmp(p.all.s, whole.s, whole.len) == 0);
		buf_release(&whole);
		buf_release(&b);
		buf_release(&p.all);
	}
	kube_set_release(&ks);
	fleet_release(&f);
}

int main(void)
{
	test_buf_spill();
	test_staged_file();
	test_spilled_exports();
	return tap_done();
}
