/*
 * test_fs.c - fs.c, the file system as modules write and walk it: listings and walks in name
 * order (hidden names left out on request, a root's trailing '/' not doubled), rm -rf that never
 * follows a symbolic link out of the tree, and a staging of files and directories committed
 * together: nothing at a target changes before the commit; a merged directory keeps the files it
 * does not replace; a replaced one is moved aside and cleared by its callback; release removes
 * whatever was not committed, leaving no temporary behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/strlist.h"
#include "tap.h"

static char root[64];

static const char *at(const char *rel)
{
	static struct buf path = BUF_INIT;
	buf_reset(&path);
	buf_addf(&path, "%s/%s", root, rel);
	return path.s;
}

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(at(rel), "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *get(const char *rel)
{
	struct buf b = BUF_INIT, err = BUF_INIT;
	if (em_read_file(at(rel), &b, &err) != 0)
		buf_adds(&b, "(missing)");
	buf_release(&err);
	return buf_detach(&b);
}

static int exists(const char *rel)
{
	struct stat st;
	return lstat(at(rel), &st) == 0;
}

/* The names of dir joined with ',' (fs_list_dir), or "(error)". */
static char *listing(const char *rel, unsigned flags)
{
	struct strlist names = STRLIST_INIT_DUP;
	struct buf b = BUF_INIT;
	if (fs_list_dir(at(rel), flags, &names) != 0)
		buf_adds(&b, "(error)");
	for (size_t i = 0; i < names.n; i++)
		buf_addf(&b, "%s%s", i ? "," : "", names.items[i]);
	buf_addc(&b, 0);
	strlist_release(&names);
	return buf_detach(&b);
}

static void check_listing(const char *rel, unsigned flags, const char *want)
{
	char *got = listing(rel, flags);
	CHECK_STR(got, want);
	free(got);
}

static void test_list_dir(void)
{
	CHECK(mkdir(at("list"), 0777) == 0);
	put("list/b.json", "");
	put("list/a.json", "");
	put("list/.hidden", "");
	put("list/B", "");
	CHECK(mkdir(at("list/c"), 0777) == 0);
	check_listing("list", 0, ".hidden,B,a.json,b.json,c"); /* strcmp order, whatever readdir's */
	check_listing("list", FS_NO_HIDDEN, "B,a.json,b.json,c");
	check_listing("no-such-dir", 0, "(error)");
	check_listing("list/c", 0, ""); /* empty, into an empty list: qsort gets no NULL (UBSan) */
	CHECK_I64(fs_dir_is_empty(at("list")), 0);
	CHECK_I64(fs_dir_is_empty(at("list/c")), 1);
	CHECK_I64(fs_dir_is_empty(at("no-such-dir")), -1);
	/* a second listing into the same list sorts only what it added */
	struct strlist names = STRLIST_INIT_DUP;
	strlist_append(&names, "zz");
	CHECK_I64(fs_list_dir(at("list"), FS_NO_HIDDEN, &names), 0);
	CHECK_I64(names.n, 5);
	CHECK_STR(names.items[0], "zz");
	CHECK_STR(names.items[1], "B");
	strlist_release(&names);
}

struct seen {
	struct buf b;
	int stop_at; /* stop (return 7) at this entry number, 0: never */
	int n;
	unsigned flags;
};

static int record(void *ctx, const char *rel, const char *full, const struct stat *st)
{
	struct seen *s = ctx;
	s->n++;
	buf_addf(&s->b, "%s=%s%s;", rel, full + strlen(root), st && S_ISDIR(st->st_mode) ? "/" : "");
	if (s->stop_at && s->n == s->stop_at)
		return 7;
	if (st && S_ISDIR(st->st_mode)) {
		/* the walk's root as the caller gave it, trailing '/' included */
		struct buf top = BUF_INIT;
		buf_addf(&top, "%s/walk/", root);
		int rc = fs_walk(top.s, rel, s->flags, record, s);
		buf_release(&top);
		return rc;
	}
	return 0;
}

static void test_walk(void)
{
	CHECK(mkdir(at("walk"), 0777) == 0);
	CHECK(mkdir(at("walk/sub"), 0777) == 0);
	put("walk/z", "");
	put("walk/a", "");
	put("walk/sub/x", "");
	put("walk/.dot", "");
	struct seen s = {BUF_INIT, 0, 0, FS_NO_HIDDEN};
	struct buf top = BUF_INIT;
	buf_addf(&top, "%s/walk/", root);
	CHECK_I64(fs_walk(top.s, "", s.flags, record, &s), 0);
	CHECK_STR(s.b.s, "a=/walk/a;sub=/walk/sub/;sub/x=/walk/sub/x;z=/walk/z;");
	buf_reset(&s.b);
	s.flags = 0;
	s.n = 0;
	s.stop_at = 3; /* the walk stops at the first non-zero and returns it */
	CHECK_I64(fs_walk(top.s, "", 0, record, &s), 7);
	CHECK_STR(s.b.s, ".dot=/walk/.dot;a=/walk/a;sub=/walk/sub/;");
	buf_release(&s.b);
	CHECK_I64(fs_walk(top.s, "missing", 0, record, &s), -1);
	buf_release(&top);
}

static void test_remove_tree(void)
{
	CHECK(mkdir(at("keep"), 0777) == 0);
	put("keep/precious", "x");
	CHECK(mkdir(at("tree"), 0777) == 0);
	CHECK(mkdir(at("tree/a"), 0777) == 0);
	CHECK(mkdir(at("tree/a/b"), 0777) == 0);
	put("tree/a/b/f", "");
	put("tree/.hidden", "");
	char *keep = xstrdup(at("keep")), *precious = xstrdup(at("keep/precious"));
	CHECK(symlink(keep, at("tree/link-to-dir")) == 0);
	CHECK(symlink(precious, at("tree/a/link-to-file")) == 0);
	free(keep);
	free(precious);
	CHECK_I64(fs_remove_tree(at("tree")), 0);
	CHECK(!exists("tree"));
	/* the links went, never what they point to */
	CHECK(exists("keep/precious"));
	CHECK_I64(fs_remove_tree(at("no-such-tree")), 0);
}

static void clear_all_but_keep(const char *old)
{
	struct buf p = BUF_INIT;
	buf_addf(&p, "%s/old-file", old);
	unlink(p.s);
	rmdir(old); /* fails while "mine" is there: the old directory stays */
	buf_release(&p);
}

/* The old directory the replace test kept (it held a file the callback did not own) has a random
 * suffix: renamed to a fixed name so the listing above can name it. */
static void name_old_dir(void)
{
	struct strlist names = STRLIST_INIT_DUP;
	fs_list_dir(root, 0, &names);
	for (size_t i = 0; i < names.n; i++)
		if (strncmp(names.items[i], "man.old-", 8) == 0) {
			char *from = xstrdup(at(names.items[i])); /* at() reuses one buffer */
			CHECK(rename(from, at("man.old-XXXXXX")) == 0);
			free(from);
		}
	strlist_release(&names);
}

static void test_staging(void)
{
	struct buf err = BUF_INIT;
	/* files: nothing at the targets before the commit, then the data with mode & ~umask */
	struct fs_staging st = FS_STAGING_INIT;
	put("out.txt", "old");
	CHECK_I64(fs_staging_add_file(&st, at("out.txt"), "new", 3, 0666, &err), 0);
	FILE *spool = tmpfile();
	CHECK(spool != NULL);
	fputs("spooled", spool);
	CHECK_I64(fs_staging_add_copy(&st, at("copy.txt"), spool, 0666, &err), 0);
	fclose(spool);
	/* a merged directory: its files join the target's, the others stay */
	CHECK(mkdir(at("save"), 0777) == 0);
	put("save/other.json", "mine");
	put("save/volumes.json", "old");
	const char *save = fs_staging_add_dir(&st, at("save/"), FS_DIR_MERGE, NULL, &err);
	CHECK(save != NULL);
	CHECK(strstr(save, "/save.tmp-") != NULL);
	struct buf p = BUF_INIT;
	buf_addf(&p, "%s/volumes.json", save);
	CHECK_I64(em_write_file_atomic(p.s, "new", 3, 0666, &err), 0);
	buf_reset(&p);
	buf_addf(&p, "%s/111122223333", save);
	CHECK(mkdir(p.s, 0777) == 0);
	buf_adds(&p, "/volumes.json");
	CHECK_I64(em_write_file_atomic(p.s, "acct", 4, 0666, &err), 0);
	char *final = fs_staging_final_path(&st, p.s);
	char *want = xstrdup(at("save/111122223333/volumes.json"));
	CHECK_STR(final, want);
	free(final);
	free(want);
	/* a replaced directory: moved aside, then cleared by the callback */
	CHECK(mkdir(at("man"), 0777) == 0);
	put("man/old-file", "");
	put("man/mine", "");
	const char *man = fs_staging_add_dir(&st, at("man"), FS_DIR_REPLACE, clear_all_but_keep, &err);
	CHECK(man != NULL);
	buf_reset(&p);
	buf_addf(&p, "%s/README.md", man);
	CHECK_I64(em_write_file_atomic(p.s, "readme", 6, 0666, &err), 0);
	char *before = get("out.txt");
	CHECK_STR(before, "old");
	free(before);
	CHECK(!exists("copy.txt"));
	CHECK(!exists("man/README.md"));
	CHECK_I64(fs_staging_commit(&st, &err), 0);
	fs_staging_release(&st);
	char *got = get("out.txt");
	CHECK_STR(got, "new");
	free(got);
	got = get("copy.txt");
	CHECK_STR(got, "spooled");
	free(got);
	struct stat sb;
	CHECK(stat(at("copy.txt"), &sb) == 0 && (sb.st_mode & 0777) == (0666 & ~(mode_t)em_umask()));
	got = get("save/volumes.json");
	CHECK_STR(got, "new");
	free(got);
	got = get("save/other.json");
	CHECK_STR(got, "mine");
	free(got);
	got = get("save/111122223333/volumes.json");
	CHECK_STR(got, "acct");
	free(got);
	got = get("man/README.md");
	CHECK_STR(got, "readme");
	free(got);
	CHECK(!exists("man/mine"));
	name_old_dir();
	check_listing("", 0, "copy.txt,keep,list,man,man.old-XXXXXX,out.txt,save,walk");

	/* not committed: release leaves the targets as they were and no temporary behind */
	struct fs_staging undo = FS_STAGING_INIT;
	CHECK_I64(fs_staging_add_file(&undo, at("out.txt"), "lost", 4, 0666, &err), 0);
	const char *gone = fs_staging_add_dir(&undo, at("fresh/dir"), FS_DIR_REPLACE, NULL, &err);
	CHECK(gone != NULL);
	buf_reset(&p);
	buf_addf(&p, "%s/f", gone);
	CHECK_I64(em_write_file_atomic(p.s, "x", 1, 0666, &err), 0);
	fs_staging_release(&undo);
	got = get("out.txt");
	CHECK_STR(got, "new");
	free(got);
	check_listing("fresh", 0, ""); /* the parent was made for the sibling; nothing else stays */

	/* a target that is a file cannot be a directory: said at once */
	buf_reset(&err);
	CHECK(fs_staging_add_dir(&undo, at("out.txt"), FS_DIR_MERGE, NULL, &err) == NULL);
	CHECK(strstr(err.s, "exists and is not a directory") != NULL);
	fs_staging_release(&undo);
	buf_release(&p);
	buf_release(&err);
}

int main(void)
{
	snprintf(root, sizeof root, "/tmp/test_fs-XXXXXX");
	if (!mkdtemp(root))
		return tap_skip_all("mkdtemp failed");
	test_list_dir();
	test_walk();
	test_remove_tree();
	test_staging();
	CHECK_I64(fs_remove_tree(root), 0);
	return tap_done();
}
