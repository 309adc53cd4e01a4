/*
 * fs.c - the file system as every module writes and walks it (fs.h): atomic replacement of one
 * file (whole: em_write_file_atomic; in pieces: em_stage_open/write/close, then em_commit_file),
 * outputs staged together and committed at once (fs_staging: files and directories), rm -rf of a
 * tree this process made (fs_remove_tree), and directory listings and walks in name order
 * (fs_list_dir, fs_walk, fs_dir_is_empty).
 *
 * Invariants:
 *   - A target is never partially written: data goes to a temporary beside it (or, for a device
 *     or FIFO, in $TMPDIR), is fsynced, then renamed over it (copied into a device); a failure
 *     removes the temporary.
 *   - A staging directory is a sibling of its target (same file system: the commit is renames);
 *     until committed, nothing at the target has changed.
 *   - Nothing here follows a symbolic link while removing or walking: a link is an entry, never
 *     a way out of the tree.
 *   - Listings and walks are in strcmp order, so what is read from a directory, and so what is
 *     printed, never depends on the file system's order.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"

/* ------------------------------------------------------------------ one file, atomically */

int em_umask(void)
{
	/* umask(2) cannot be read without setting it: read it once (before any thread starts, as the
	 * first output is staged from the main thread) and keep it; ebsmigrate never changes it. */
	static int cached = -1;
	if (cached < 0) {
		mode_t m = umask(022);
		umask(m);
		cached = (int)m;
	}
	return cached;
}

/* A path that exists and is not a regular file: /dev/null, /dev/stdout, a FIFO, a terminal.
 * Renaming over it would replace the device node itself (as root, /dev/null became a file), so
 * such outputs are staged in the temporary directory and copied into the path at commit. */
static int is_special_output(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* The path a rename must target: a symlink's resolved target (so `-o link` updates the file it
 * points to instead of replacing the link with a file, and /dev/stdout redirected to a file is
 * not replaced itself), else the path as given. A link to a special file, or one that cannot be
 * resolved, is written through (is_special_output) and never renamed over. */
static void rename_target(const char *path, struct buf *out)
{
	struct stat st;
	char *real = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
	buf_reset(out);
	buf_adds(out, real ? real : path);
	free(real);
}

/* Special, or a symlink into /proc or /dev (or one that cannot be resolved): written through. */
static int writes_through(const char *path)
{
	struct stat st;
	/* /dev/stdout, /dev/fd/N and /proc/self/fd/N resolve to the shell's file: never replace it */
	if (is_special_output(path) || strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0)
		return 1;
	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
		return 0;
	char *real = realpath(path, NULL);
	int through = !real;
	free(real);
	return through && stat(path, &st) == 0; /* a dangling link is replaced like a missing file */
}

int em_stage_open(struct em_staged *st, const char *path, int mode, struct buf *err)
{
	memset(st, 0, sizeof *st);
	buf_init(&st->tmp);
	st->path = path;
	st->mode = mode;
	if (writes_through(path)) {
		const char *dir = getenv("TMPDIR");
		buf_addf(&st->tmp, "%s/ebsmigrate-output.XXXXXX", dir && *dir ? dir : "/tmp");
	} else {
		struct buf target = BUF_INIT;
		rename_target(path, &target);
		buf_addf(&st->tmp, "%s.tmp.XXXXXX", target.s);
		buf_release(&target);
	}
	st->fd = mkstemp(st->tmp.s); /* 0600 until em_stage_close's fchmod */
	if (st->fd < 0) {
		int e = errno;
		buf_release(&st->tmp);
		return em_err(err, EM_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

void em_stage_write(struct em_staged *st, const char *data, size_t len)
{
	size_t off = 0;
	while (!st->error && off < len) {
		ssize_t w = write(st->fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			st->error = errno;
		else
			off += (size_t)w;
	}
}

void em_stage_flush(void *ctx, const char *s, size_t n)
{
	em_stage_write(ctx, s, n);
}

int em_stage_close(struct em_staged *st, struct buf *tmp_out, struct buf *err)
{
	int e = st->error;
	if (!e && fchmod(st->fd, (mode_t)(st->mode & ~em_umask())) != 0)
		e = errno;
	if (!e && fsync(st->fd) != 0)
		e = errno;
	if (close(st->fd) != 0 && !e)
		e = errno;
	st->fd = -1;
	if (e) {
		unlink(st->tmp.s);
		buf_release(&st->tmp);
		return em_err(err, EM_EIO, "cannot write '%s': %s", st->path, strerror(e));
	}
	buf_reset(tmp_out);
	buf_add(tmp_out, st->tmp.s, st->tmp.len);
	buf_release(&st->tmp);
	return 0;
}

void em_stage_abandon(struct em_staged *st)
{
	if (st->fd >= 0) {
		close(st->fd);
		unlink(st->tmp.s);
	}
	st->fd = -1;
	buf_release(&st->tmp);
}

int em_stage_file(const char *path, const char *data, size_t len, int mode, struct buf *tmp_out, struct buf *err)
{
	struct em_staged st;
	int rc = em_stage_open(&st, path, mode, err);
	if (rc)
		return rc;
	em_stage_write(&st, data, len);
	return em_stage_close(&st, tmp_out, err);
}

int em_copy_stream(FILE *src, int fd)
{
	/* a spool file: copied by the kernel (a plan of 100,000 volumes is ~50 MB) when it can */
	int in = fileno(src);
	off_t at = in >= 0 ? lseek(in, 0, SEEK_CUR) : -1;
	ssize_t sent = at >= 0 ? sendfile(fd, in, &at, 1 << 30) : -1;
	if (sent >= 0) {
		while (sent > 0)
			sent = sendfile(fd, in, &at, 1 << 30);
		if (sent == 0)
			return 0;
		if (errno != EINTR)
			return -1;
		/* interrupted: the rest by read and write from where sendfile stopped */
	}
	if (at >= 0 && fseeko(src, at, SEEK_SET) != 0)
		return -1;
	char chunk[1 << 16];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, src)) > 0) {
		size_t off = 0;
		while (off < n) {
			ssize_t w = write(fd, chunk + off, n - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -1;
			off += (size_t)w;
		}
	}
	return ferror(src) ? -1 : 0;
}

/* Copies the staged file into a special output (a device or FIFO), then removes it. */
static int commit_special(const char *tmp, const char *path, struct buf *err)
{
	/* the standard streams are written where they already point (a `>>` file keeps its offset) */
	int std_fd = strcmp(path, "/dev/stdout") == 0 ? 1 : strcmp(path, "/dev/stderr") == 0 ? 2 : -1;
	FILE *in = fopen(tmp, "rbe");
	int out = !in ? -1 : std_fd >= 0 ? dup(std_fd) : open(path, O_WRONLY | O_CLOEXEC);
	int e = !in || out < 0 || em_copy_stream(in, out) != 0 ? errno : 0;
	if (out >= 0 && close(out) != 0 && !e && errno != EINVAL)
		e = errno;
	if (in)
		fclose(in);
	unlink(tmp);
	return e ? em_err(err, EM_EIO, "cannot write '%s': %s", path, strerror(e)) : 0;
}

int em_commit_file(const char *tmp, const char *path, struct buf *err)
{
	if (writes_through(path))
		return commit_special(tmp, path, err);
	struct buf target = BUF_INIT;
	rename_target(path, &target);
	int e = rename(tmp, target.s) != 0 ? errno : 0;
	buf_release(&target);
	if (e) {
		unlink(tmp);
		return em_err(err, EM_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

int em_write_file_atomic(const char *path, const char *data, size_t len, int mode, struct buf *err)
{
	struct buf tmp = BUF_INIT;
	int rc = em_stage_file(path, data, len, mode, &tmp, err);
	if (!rc)
		rc = em_commit_file(tmp.s, path, err);
	buf_release(&tmp);
	return rc;
}

int em_mkdirs(const char *path, int mode, struct buf *err)
{
	struct buf p = BUF_INIT;
	buf_adds(&p, path);
	for (size_t i = 1; i <= p.len; i++) {
		if (p.s[i] != '/' && p.s[i] != '\0')
			continue;
		char saved = p.s[i];
		p.s[i] = '\0';
		if (mkdir(p.s, (mode_t)mode) != 0 && errno != EEXIST) {
			int e = errno;
			int rc = em_err(err, EM_EIO, "cannot create directory '%s': %s", p.s, strerror(e));
			buf_release(&p);
			return rc;
		}
		p.s[i] = saved;
	}
	buf_release(&p);
	return 0;
}

/* ------------------------------------------------------------------ trees and walks */

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int fs_list_dir(const char *dir, unsigned flags, struct strlist *names)
{
	assert(names->owns); /* the names are copied out of readdir's buffer */
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	struct dirent *e;
	size_t first = names->n;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    ((flags & FS_NO_HIDDEN) && e->d_name[0] == '.'))
			continue;
		strlist_append(names, e->d_name);
	}
	closedir(d);
	/* only what this call added: a caller may list several directories into one list; an
	 * empty directory listed into an empty list has items NULL, which qsort may not get */
	if (names->n > first)
		qsort(names->items + first, names->n - first, sizeof *names->items, compare_names);
	return 0;
}

int fs_dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	struct dirent *e;
	int empty = 1;
	while (empty && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = 0;
	closedir(d);
	return empty;
}

/* a/b, without doubling a '/' that a ends with (a user's "dir/"); a "" adds nothing */
static void join_path(struct buf *out, const char *a, const char *b)
{
	buf_reset(out);
	buf_adds(out, a);
	if (*b) {
		if (out->len && out->s[out->len - 1] != '/')
			buf_addc(out, '/');
		buf_adds(out, b);
	}
}

int fs_walk(const char *root, const char *rel, unsigned flags, fs_visit_fn visit, void *ctx)
{
	struct buf dir = BUF_INIT, sub = BUF_INIT, full = BUF_INIT;
	struct strlist names = STRLIST_INIT_DUP;
	join_path(&dir, root, rel);
	int rc = fs_list_dir(dir.s, flags, &names);
	if (rc) {
		int e = errno; /* the caller's message says why the directory could not be read */
		buf_release(&dir);
		strlist_release(&names);
		errno = e;
		return -1;
	}
	for (size_t i = 0; !rc && i < names.n; i++) {
		join_path(&sub, rel, names.items[i]);
		join_path(&full, root, sub.s);
		struct stat st;
		rc = visit(ctx, sub.s, full.s, lstat(full.s, &st) == 0 ? &st : NULL);
	}
	buf_release(&dir);
	buf_release(&sub);
	buf_release(&full);
	strlist_release(&names);
	return rc;
}

struct remove_walk {
	int failed; /* errno of the first entry not removed */
};

static int remove_entry(void *ctx, const char *rel, const char *full, const struct stat *st)
{
	struct remove_walk *w = ctx;
	int bad = st && S_ISDIR(st->st_mode) ? fs_remove_tree(full) : unlink(full);
	if (bad && errno != ENOENT && !w->failed)
		w->failed = errno;
	return 0;
}

int fs_remove_tree(const char *dir)
{
	struct remove_walk w = {0};
	if (fs_walk(dir, "", 0, remove_entry, &w) != 0 && errno != ENOENT)
		w.failed = errno;
	if (rmdir(dir) != 0 && errno != ENOENT && !w.failed)
		w.failed = errno;
	errno = w.failed;
	return w.failed ? -1 : 0;
}

/* ------------------------------------------------------------------ outputs committed together */

/* Records a file staged at tmp (taken) for path; passes rc through. */
static int staged_file(struct fs_staging *s, const char *path, struct buf *tmp, int rc)
{
	if (!rc) {
		XGROW(s->files, s->n_files, s->alloc_files);
		s->files[s->n_files].path = xstrdup(path);
		s->files[s->n_files].tmp = buf_detach(tmp);
		s->n_files++;
	}
	buf_release(tmp);
	return rc;
}

int fs_staging_add_file(struct fs_staging *s, const char *path, const char *data, size_t len, int mode,
			struct buf *err)
{
	struct buf tmp = BUF_INIT;
	return staged_file(s, path, &tmp, em_stage_file(path, data, len, mode, &tmp, err));
}

int fs_staging_add_copy(struct fs_staging *s, const char *path, FILE *src, int mode, struct buf *err)
{
	struct em_staged st;
	int rc = em_stage_open(&st, path, mode, err);
	if (rc)
		return rc;
	if (fseek(src, 0, SEEK_SET) != 0 || em_copy_stream(src, st.fd) != 0) {
		int e = errno;
		em_stage_abandon(&st);
		return em_err(err, EM_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	struct buf tmp = BUF_INIT;
	return staged_file(s, path, &tmp, em_stage_close(&st, &tmp, err));
}

const char *fs_staging_add_dir(struct fs_staging *s, const char *dir, enum fs_dir_commit how,
			       void (*clear_old)(const char *old), struct buf *err)
{
	struct stat st;
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) { /* found now, not after the whole run */
		em_err(err, EM_EINPUT, "'%s' exists and is not a directory", dir);
		return NULL;
	}
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	struct buf tmp = BUF_INIT;
	buf_add(&tmp, dir, n);
	/* the parent must exist for the sibling */
	char *slash = strrchr(tmp.s, '/');
	if (slash && slash != tmp.s) {
		*slash = '\0';
		int rc = em_mkdirs(tmp.s, 0777, err);
		*slash = '/';
		if (rc) {
			buf_release(&tmp);
			return NULL;
		}
	}
	buf_adds(&tmp, ".tmp-XXXXXX");
	if (!mkdtemp(tmp.s)) {
		em_err(err, EM_EIO, "cannot create a directory next to '%.*s': %s", (int)n, dir, strerror(errno));
		buf_release(&tmp);
		return NULL;
	}
	if (chmod(tmp.s, (mode_t)(0777 & ~em_umask())) != 0) {
		em_err(err, EM_EIO, "cannot set the mode of '%s': %s", tmp.s, strerror(errno));
		rmdir(tmp.s);
		buf_release(&tmp);
		return NULL;
	}
	XGROW(s->dirs, s->n_dirs, s->alloc_dirs);
	struct fs_staged_dir *d = &s->dirs[s->n_dirs++];
	d->path = xstrndup(dir, n);
	d->tmp = buf_detach(&tmp);
	d->how = how;
	d->clear_old = clear_old;
	d->committed = 0;
	return d->tmp;
}

char *fs_staging_final_path(const struct fs_staging *s, const char *staged)
{
	for (size_t i = 0; i < s->n_dirs; i++) {
		size_t l = strlen(s->dirs[i].tmp);
		if (strncmp(staged, s->dirs[i].tmp, l) == 0 && staged[l] == '/') {
			struct buf b = BUF_INIT;
			buf_addf(&b, "%s%s", s->dirs[i].path, staged + l);
			return buf_detach(&b);
		}
	}
	return xstrdup(staged);
}

struct merge_walk {
	const char *to;
	struct buf *err;
};

static int merge_into(const char *from, const char *to, struct buf *err);

static int merge_entry(void *ctx, const char *rel, const char *full, const struct stat *st)
{
	struct merge_walk *w = ctx;
	struct buf t = BUF_INIT;
	join_path(&t, w->to, rel);
	int rc = 0;
	if (st && S_ISDIR(st->st_mode))
		rc = merge_into(full, t.s, w->err);
	else if (rename(full, t.s) != 0)
		rc = em_err(w->err, EM_EIO, "cannot write '%s': %s", t.s, strerror(errno));
	buf_release(&t);
	return rc;
}

/* Moves every file of from into to (created if needed; same-named files replaced, others left
 * alone), and the files of its subdirectories into to's subdirectories of the same names; then
 * removes from. */
static int merge_into(const char *from, const char *to, struct buf *err)
{
	int rc = em_mkdirs(to, 0777, err);
	if (rc)
		return rc;
	struct merge_walk w = {to, err};
	rc = fs_walk(from, "", 0, merge_entry, &w);
	if (rc == -1)
		rc = em_err(err, EM_EIO, "cannot read '%s': %s", from, strerror(errno));
	if (!rc)
		rmdir(from);
	return rc;
}

/* Renames the staging directory into d->path, the old one (not empty) moved aside first and
 * cleared after. */
static int replace_dir(struct fs_staged_dir *d, struct buf *err)
{
	int rc = 0;
	struct buf old = BUF_INIT;
	struct stat sb;
	if (lstat(d->path, &sb) == 0 && fs_dir_is_empty(d->path) == 0) {
		buf_addf(&old, "%s.old-XXXXXX", d->path);
		if (!mkdtemp(old.s) || rename(d->path, old.s) != 0) {
			rc = em_err(err, EM_EIO, "cannot move '%s' aside: %s", d->path, strerror(errno));
			rmdir(old.s);
			goto out;
		}
	}
	if (rename(d->tmp, d->path) != 0) {
		rc = em_err(err, EM_EIO, "cannot rename '%s' to '%s': %s", d->tmp, d->path, strerror(errno));
		if (old.len && rename(old.s, d->path) != 0)
			em_errprefix(err, "the previous directory is at '%s'", old.s);
		goto out;
	}
	if (old.len) {
		if (d->clear_old)
			d->clear_old(old.s); /* old stays only if something it does not own is in it */
		else
			fs_remove_tree(old.s);
	}
out:
	buf_release(&old);
	return rc;
}

int fs_staging_commit(struct fs_staging *s, struct buf *err)
{
	int rc = 0;
	for (size_t i = 0; i < s->n_dirs && !rc; i++) {
		struct fs_staged_dir *d = &s->dirs[i];
		rc = d->how == FS_DIR_MERGE ? merge_into(d->tmp, d->path, err) : replace_dir(d, err);
		d->committed = !rc; /* tmp stays known, for fs_staging_final_path */
	}
	for (size_t i = 0; i < s->n_files && !rc; i++) {
		/* a rename in the file's own directory: after staging succeeded, this does not fail in
		 * practice; if it does, the files not yet renamed are removed by release */
		rc = em_commit_file(s->files[i].tmp, s->files[i].path, err);
		free(s->files[i].tmp);
		s->files[i].tmp = NULL; /* committed, or unlinked by em_commit_file */
	}
	return rc;
}

void fs_staging_release(struct fs_staging *s)
{
	for (size_t i = 0; i < s->n_files; i++) {
		if (s->files[i].tmp)
			unlink(s->files[i].tmp);
		free(s->files[i].tmp);
		free(s->files[i].path);
	}
	free(s->files);
	for (size_t i = 0; i < s->n_dirs; i++) {
		if (!s->dirs[i].committed)
			fs_remove_tree(s->dirs[i].tmp);
		free(s->dirs[i].tmp);
		free(s->dirs[i].path);
	}
	free(s->dirs);
	memset(s, 0, sizeof *s);
}
