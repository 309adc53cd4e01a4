/*
 * plan_manifests_write.c - `plan --manifests DIR`: puts a rendered manifest set on disk.
 *
 * Entry points: manifest_check_dir (may DIR be written or replaced), manifest_stage (into a
 * command's outputs, fs.h), manifest_write_dir (atomic), manifest_write (manifest_build, then
 * manifest_write_dir). Rendering is plan_manifests.c's; nothing here looks inside a file.
 *
 * Invariants:
 *   - DIR is written whole or not at all: files go to DIR.tmp-XXXXXX, then one rename.
 *   - The MANIFEST_MARKER file is an index of every file written; --force replaces only a
 *     directory whose every file that index lists, and removes only those files from the old one.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/plan_manifests.h"

/* The paths DIR/MANIFEST_MARKER lists (comment lines skipped), as one '\n'-framed string
 * "\nA\nB\n" so that membership is a strstr of "\nPATH\n". EM_ENOTFOUND without the file. */
static int read_index(const char *dir, struct buf *index, struct buf *err)
{
	struct buf path = BUF_INIT, text = BUF_INIT, e = BUF_INIT;
	buf_addf(&path, "%s/%s", dir, MANIFEST_MARKER);
	struct stat st;
	int rc = 0;
	if (lstat(path.s, &st) != 0 || !S_ISREG(st.st_mode))
		rc = EM_ENOTFOUND;
	else if (em_read_file_max(path.s, EM_MAX_LIST_FILE, &text, &e))
		rc = em_err(err, EM_EINPUT, "--manifests: %s", e.s);
	buf_reset(index);
	buf_addc(index, '\n');
	for (const char *p = text.s; !rc && p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n && *p != '#') {
			buf_add(index, p, n);
			buf_addc(index, '\n');
		}
		p += n + (nl != NULL);
	}
	buf_release(&path);
	buf_release(&text);
	buf_release(&e);
	return rc;
}

static int index_lists(const struct buf *index, const char *rel)
{
	size_t n = strlen(rel);
	for (const char *p = index->s; (p = strstr(p, rel)) != NULL; p++)
		if (p > index->s && p[-1] == '\n' && p[n] == '\n')
			return 1;
	return 0;
}

/* A regular file the index lists (or the index itself). */
static int listed_file(const struct buf *index, const char *rel, const struct stat *st)
{
	return S_ISREG(st->st_mode) && (strcmp(rel, MANIFEST_MARKER) == 0 || index_lists(index, rel));
}

struct foreign_walk {
	const char *dir;
	const struct buf *index;
	struct buf *bad;
	int any_ours; /* this level holds something we wrote */
};

static int find_foreign(const char *dir, const char *rel, const struct buf *index, struct buf *bad);

static int foreign_entry(void *ctx, const char *rel, const char *full, const struct stat *st)
{
	struct foreign_walk *w = ctx;
	(void)full;
	if (!st)
		return -1;
	if (S_ISDIR(st->st_mode)) {
		w->any_ours = 1; /* a directory of ours holds at least one listed file (checked inside) */
		return find_foreign(w->dir, rel, w->index, w->bad);
	}
	if (listed_file(w->index, rel, st)) {
		w->any_ours = 1;
		return 0;
	}
	buf_reset(w->bad);
	buf_adds(w->bad, rel);
	return 1;
}

/* Finds the first entry (in name order) under dir (relative path rel) that the index does not
 * account for: a non-regular file, a file not listed, or a directory holding no listed file.
 * 1 = found (in *bad), 0 = everything is ours, <0 = cannot read. */
static int find_foreign(const char *dir, const char *rel, const struct buf *index, struct buf *bad)
{
	struct foreign_walk w = {dir, index, bad, 0};
	int found = fs_walk(dir, rel, 0, foreign_entry, &w);
	if (!found && *rel && !w.any_ours) {
		buf_reset(bad);
		buf_addf(bad, "%s/", rel); /* an empty directory we did not write */
		found = 1;
	}
	return found;
}

int manifest_check_dir(const char *dir, int force, struct buf *err)
{
	if (!dir || !*dir)
		return em_err(err, EM_EINPUT, "--manifests: no directory given");
	struct stat st;
	if (lstat(dir, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		return em_err(err, EM_EINPUT, "--manifests: cannot use '%s': %s", dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return em_err(err, EM_EINPUT, "--manifests: '%s' exists and is not a directory", dir);
	int empty = fs_dir_is_empty(dir);
	if (empty < 0)
		return em_err(err, EM_EINPUT, "--manifests: cannot read directory '%s': %s", dir, strerror(errno));
	if (empty)
		return 0;
	if (!force)
		return em_err(err, EM_EINPUT, "--manifests: directory '%s' is not empty; use --force to replace it", dir);
	struct buf index = BUF_INIT, bad = BUF_INIT;
	int rc = read_index(dir, &index, err);
	if (rc == EM_ENOTFOUND) {
		rc = em_err(err, EM_EINPUT,
			    "--manifests: refusing to replace '%s': it was not written by ebsmigrate (no %s file)", dir,
			    MANIFEST_MARKER);
	} else if (!rc) {
		int found = find_foreign(dir, "", &index, &bad);
		if (found < 0)
			rc = em_err(err, EM_EINPUT, "--manifests: cannot read directory '%s': %s", dir, strerror(errno));
		else if (found)
			rc = em_err(err, EM_EINPUT,
				    "--manifests: refusing to replace '%s': '%s' in it was not written by ebsmigrate "
				    "(not in its %s index); move it away first",
				    dir, bad.s, MANIFEST_MARKER);
	}
	buf_release(&index);
	buf_release(&bad);
	return rc;
}

struct remove_walk {
	const char *root;
	const struct buf *index;
};

static void remove_listed_in(const char *root, const char *rel, const struct buf *index);

static int remove_entry(void *ctx, const char *rel, const char *full, const struct stat *st)
{
	const struct remove_walk *w = ctx;
	if (st && S_ISDIR(st->st_mode))
		remove_listed_in(w->root, rel, w->index);
	else if (st && listed_file(w->index, rel, st))
		unlink(full);
	return 0;
}

/* Removes from root/rel the files the index lists, then the directories left empty (rmdir fails,
 * and keeps a directory, while anything unlisted is inside). */
static void remove_listed_in(const char *root, const char *rel, const struct buf *index)
{
	struct remove_walk w = {root, index};
	fs_walk(root, rel, 0, remove_entry, &w);
	struct buf path = BUF_INIT;
	buf_adds(&path, root);
	if (*rel)
		buf_addf(&path, "/%s", rel);
	rmdir(path.s);
	buf_release(&path);
}

/* Clears a previous DIR (moved aside) of the files its index lists; anything else stays. */
static void remove_listed(const char *old)
{
	struct buf index = BUF_INIT;
	if (read_index(old, &index, NULL) == 0)
		remove_listed_in(old, "", &index);
	buf_release(&index);
}

int manifest_stage(struct fs_staging *st, const struct manifest_set *s, const char *dir, int force,
		   struct buf *err)
{
	int rc = manifest_check_dir(dir, force, err);
	if (rc)
		return rc;
	const char *tmp = fs_staging_add_dir(st, dir, FS_DIR_REPLACE, remove_listed, err);
	if (!tmp)
		return EM_EIO;
	struct buf path = BUF_INIT;
	for (size_t i = 0; i < s->n && !rc; i++) {
		buf_reset(&path);
		buf_addf(&path, "%s/%s", tmp, s->files[i].path);
		char *last = strrchr(path.s, '/');
		*last = '\0';
		rc = em_mkdirs(path.s, 0777, err);
		*last = '/';
		if (!rc)
			rc = em_write_file_atomic(path.s, s->files[i].data, s->files[i].len,
						  (s->files[i].mode & 0111) ? 0777 : 0666, err);
	}
	buf_release(&path);
	return rc;
}

int manifest_write_dir(const struct manifest_set *s, const char *dir, int force, struct buf *err)
{
	struct fs_staging st = FS_STAGING_INIT;
	int rc = manifest_stage(&st, s, dir, force, err);
	if (!rc)
		rc = fs_staging_commit(&st, err);
	fs_staging_release(&st);
	return rc;
}

int manifest_write(struct manifest_set *out, const struct plan *p, const struct fleet *f,
		   const struct manifest_options *o, struct buf *err)
{
	int rc = manifest_build(out, p, f, o, err);
	if (!rc)
		rc = manifest_write_dir(out, o->dir, o->force, err);
	return rc;
}
