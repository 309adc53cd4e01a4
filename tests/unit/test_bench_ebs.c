/* test_bench_ebs.c - before/after benchmarks on emulated EBS volumes, end to end through the
 * ebsmigrate binary next to this test.
 *
 * A loop device (ext4 on a file) stands in for the volume; a cgroup v1 blkio group throttles it
 * with blkio.throttle.{read,write}_{iops,bps}_device, and `bench run --local` runs inside that
 * group. gp3: a flat 3,000 IOPS / 125 MiB/s. gp2 (100 GiB): a controller re-sets the IOPS limit
 * every second from a credit bucket, as EBS does: 3,000 while credits last, then the 300
 * baseline; the bucket is scaled down from 5.4M credits to 20 s of burst so the cliff shows in
 * under a minute. Then `bench compare --volume` must find the cliff on gp2, flat IOPS on gp3
 * and a passing verdict.
 *
 * Needs root, losetup, mkfs.ext4, fio and cgroup v1 blkio throttling (cgroup v2 io.max and
 * device-mapper are not used). Without them it says which is missing and exits 77 (skipped):
 * it never pretends.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ebsmigrate/bench.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/jsonx.h"
#include "tap.h"

#define BLKIO "/sys/fs/cgroup/blkio"
#define BURST 3000
#define BASELINE 300       /* 100 GiB gp2 */
#define BURST_SECONDS 20   /* scaled bucket: 20 s of burst instead of 2,000 */

static char tmpdir[] = "/tmp/em-ebs-XXXXXX";
static char loopdev[64], cgroup[256], mnt[PATH_MAX];
static unsigned dev_major, dev_minor;
static int mounted;

struct controller {
	pthread_t thread;
	volatile int stop;
	int gp2;
	long limits_set;          /* how many times the limit was written */
	long min_limit, max_limit;
};

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int cg_set(const char *file, unsigned long long value)
{
	char path[512], line[64];
	snprintf(path, sizeof path, "%s/%s", cgroup, file);
	snprintf(line, sizeof line, "%u:%u %llu", dev_major, dev_minor, value);
	return write_file(path, line);
}

/* I/Os the group has done on the device (blkio.throttle.io_serviced "MAJ:MIN Total N"). */
static long long serviced(void)
{
	char path[512], want[64];
	snprintf(path, sizeof path, "%s/blkio.throttle.io_serviced", cgroup);
	snprintf(want, sizeof want, "%u:%u Total ", dev_major, dev_minor);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	long long v = 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, want, strlen(want)) == 0)
			v = atoll(line + strlen(want));
	fclose(f);
	return v;
}

static void set_iops(struct controller *c, long limit)
{
	cg_set("blkio.throttle.read_iops_device", (unsigned long long)limit);
	cg_set("blkio.throttle.write_iops_device", (unsigned long long)limit);
	c->limits_set++;
	if (limit < c->min_limit)
		c->min_limit = limit;
	if (limit > c->max_limit)
		c->max_limit = limit;
}

/* gp2's bucket, one second at a time: credits accrue at the baseline and every I/O spends one;
 * the next second may do the baseline plus what is left, at most the burst. */
static void *gp2_controller(void *arg)
{
	struct controller *c = arg;
	double credits = (double)BURST_SECONDS * (BURST - BASELINE), cap = credits;
	long long last = serviced();
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	set_iops(c, BURST);
	while (!c->stop) {
		next.tv_sec += 1;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		long long now = serviced();
		long long used = now >= last ? now - last : 0;
		last = now;
		credits += BASELINE - (double)used;
		if (credits < 0)
			credits = 0;
		if (credits > cap)
			credits = cap;
		long limit = credits >= BURST - BASELINE ? BURST : BASELINE + (long)credits;
		set_iops(c, limit);
	}
	return NULL;
}

static char *run_capture(char *const argv[], int *status, int in_cgroup)
{
	int p[2];
	if (pipe(p) != 0)
		return NULL;
	pid_t pid = fork();
	if (pid == 0) {
		if (in_cgroup) {
			char path[512], me[32];
			snprintf(path, sizeof path, "%s/cgroup.procs", cgroup);
			snprintf(me, sizeof me, "%d", (int)getpid());
			if (write_file(path, me) != 0)
				_exit(125);
		}
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	struct buf out = BUF_INIT;
	char chunk[8192];
	ssize_t n;
	while ((n = read(p[0], chunk, sizeof chunk)) > 0)
		buf_add(&out, chunk, (size_t)n);
	close(p[0]);
	waitpid(pid, status, 0);
	return buf_detach(&out);
}

static int sh(const char *cmd)
{
	int rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void teardown(void)
{
	if (mounted)
		umount2(mnt, MNT_DETACH);
	if (loopdev[0]) {
		char cmd[128];
		snprintf(cmd, sizeof cmd, "losetup -d %s", loopdev);
		sh(cmd);
	}
	if (cgroup[0])
		rmdir(cgroup);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	sh(cmd);
}

static int skip(const char *why)
{
	teardown();
	return tap_skip_all(why);
}

static const cJSON *job_of(const cJSON *doc, int run)
{
	return cJSON_GetArrayItem(jsonx_get(cJSON_GetArrayItem(jsonx_get(doc, "runs"), run), "jobs"), 0);
}

static double num(const cJSON *j, const char *path)
{
	const cJSON *v = jsonx_path(j, path);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

int main(void)
{
	if (geteuid() != 0)
		return tap_skip_all("needs root for loop devices and cgroup blkio throttling");
	if (access(BLKIO "/blkio.throttle.read_iops_device", F_OK) != 0)
		return tap_skip_all("cgroup v1 blkio throttling is not available here (" BLKIO
				    "/blkio.throttle.*): the emulated EBS volumes need it");
	const char *tools[] = {"fio", "losetup", "mkfs.ext4"};
	for (size_t i = 0; i < 3; i++) {
		char *p = bench_find_program(tools[i]);
		if (!p) {
			char why[128];
			snprintf(why, sizeof why, "%s is not installed", tools[i]);
			return tap_skip_all(why);
		}
		free(p);
	}
	char self[PATH_MAX], em[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return tap_skip_all("cannot find this test's own path");
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(em, sizeof em, "%s/ebsmigrate", self);
	if (access(em, X_OK) != 0)
		return tap_skip_all("the ebsmigrate binary is not next to this test");
	if (!mkdtemp(tmpdir))
		return tap_skip_all("cannot make a temporary directory");

	/* The volume: ext4 on a loop device with direct I/O to its backing file. */
	char cmd[PATH_MAX * 2];
	snprintf(cmd, sizeof cmd, "truncate -s 512M '%s/volume.img'", tmpdir);
	if (sh(cmd) != 0)
		return skip("cannot create the backing file");
	snprintf(cmd, sizeof cmd, "losetup --find --show --direct-io=on '%s/volume.img'", tmpdir);
	FILE *p = popen(cmd, "r");
	if (!p || !fgets(loopdev, sizeof loopdev, p)) {
		if (p)
			pclose(p);
		loopdev[0] = '\0';
		return skip("no loop device available (losetup --find failed)");
	}
	pclose(p);
	loopdev[strcspn(loopdev, "\n")] = '\0';
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q %s", loopdev);
	if (sh(cmd) != 0)
		return skip("mkfs.ext4 failed on the loop device");
	snprintf(mnt, sizeof mnt, "%s/mnt", tmpdir);
	mkdir(mnt, 0755);
	if (mount(loopdev, mnt, "ext4", 0, NULL) != 0)
		return skip("cannot mount the loop device");
	mounted = 1;
	struct stat st;
	if (stat(loopdev, &st) != 0)
		return skip("cannot stat the loop device");
	dev_major = major(st.st_rdev);
	dev_minor = minor(st.st_rdev);
	snprintf(cgroup, sizeof cgroup, BLKIO "/ebsmigrate-test-%d", (int)getpid());
	if (mkdir(cgroup, 0755) != 0) {
		cgroup[0] = '\0';
		return skip("cannot create a blkio cgroup");
	}
	if (cg_set("blkio.throttle.read_bps_device", 128ull << 20) != 0)
		return skip("the blkio throttle files cannot be written");
	cg_set("blkio.throttle.write_bps_device", 128ull << 20);
	printf("# volume %s (%u:%u) at %s, cgroup %s\n", loopdev, dev_major, dev_minor, mnt, cgroup);

	char db[PATH_MAX + 16];
	snprintf(db, sizeof db, "%s/em.db", tmpdir);

	/* before: gp2, 40 s, the bucket runs dry at ~20 s */
	struct controller c = {0};
	c.gp2 = 1;
	c.min_limit = LONG_MAX;
	pthread_create(&c.thread, NULL, gp2_controller, &c);
	int status = 0;
	char *argv_gp2[] = {em, "--db", db, "--now", "2026-12-01T10:00:00Z", "bench", "run", "--local", mnt,
			    "-p", "randread-qd32", "--runtime", "40", "--size", "64M", "--label", "emu-gp2",
			    "--volume", "vol-0e0000000000000001", "--volume-type", "gp2", "--volume-size", "100",
			    "--iops", "300", NULL};
	char *out = run_capture(argv_gp2, &status, 1);
	c.stop = 1;
	pthread_join(c.thread, NULL);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("%s# controller: %ld limits set, %ld..%ld IOPS\n", out ? out : "", c.limits_set, c.min_limit, c.max_limit);
	free(out);
	CHECK(c.min_limit < 1000 && c.max_limit == BURST);

	/* after: gp3, flat 3,000 IOPS / 125 MiB/s */
	cg_set("blkio.throttle.read_iops_device", 3000);
	cg_set("blkio.throttle.write_iops_device", 3000);
	cg_set("blkio.throttle.read_bps_device", 125ull << 20);
	cg_set("blkio.throttle.write_bps_device", 125ull << 20);
	char *argv_gp3[] = {em, "--db", db, "--now", "2026-12-01T11:00:00Z", "bench", "run", "--local", mnt,
			    "-p", "randread-qd32", "--runtime", "20", "--size", "64M", "--label", "emu-gp3",
			    "--volume", "vol-0e0000000000000001", "--volume-type", "gp3", "--volume-size", "100",
			    "--iops", "3000", "--throughput", "125", NULL};
	out = run_capture(argv_gp3, &status, 1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("%s", out ? out : "");
	free(out);

	/* compare, as a user would */
	char *argv_cmp[] = {em, "--db", db, "bench", "compare", "--volume", "vol-0e0000000000000001", NULL};
	out = run_capture(argv_cmp, &status, 0);
	printf("%s", out ? out : "");
	free(out);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *argv_json[] = {em, "--db", db, "bench", "compare", "--volume", "vol-0e0000000000000001", "--format", "json",
			     NULL};
	out = run_capture(argv_json, &status, 0);
	cJSON *doc = out ? cJSON_Parse(out) : NULL;
	CHECK(doc != NULL);
	const cJSON *gp2 = job_of(doc, 0), *gp3 = job_of(doc, 1);
	double at = num(gp2, "cliff.at_s"), before = num(gp2, "cliff.before_iops"), after = num(gp2, "cliff.after_iops");
	printf("# gp2 cliff: at %.0f s, %.0f -> %.0f IOPS; gp3 series %g..%g (median %g)\n", at, before, after,
	       num(gp3, "series.min"), num(gp3, "series.max"), num(gp3, "series.median"));
	CHECK(at >= BURST_SECONDS - 5 && at <= BURST_SECONDS + 5);
	CHECK(before >= 0.9 * BURST && before <= 1.1 * BURST);
	CHECK(after >= 0.5 * BASELINE && after <= 1.5 * BASELINE);
	CHECK(cJSON_IsNull(jsonx_get(gp3, "cliff")));
	CHECK(num(gp3, "series.median") >= 0.95 * BURST && num(gp3, "series.median") <= 1.05 * BURST);
	CHECK_STR(jsonx_path_str(doc, "compare.verdict"), "pass");
	cJSON_Delete(doc);
	free(out);
	teardown();
	return tap_done();
}
