/*
 * fs.h - the file system as every module writes and walks it (git's tempfile/lockfile and dir.c):
 * a file replaced atomically (whole, or staged in pieces and committed); outputs staged together
 * and committed at once (fs_staging: files, and directories a writer fills, merged into place or
 * replacing the old one); rm -rf of a tree this process made; directory listings and walks in
 * name order, never in the file system's.
 *
 * Ownership: paths passed in are borrowed for the call (em_staged.path until em_stage_close);
 * returned strings are the caller's to free unless said otherwise (the staging directories
 * fs_staging_add_dir returns belong to the fs_staging). Errors: EM_* with one message in err.
 * The em_ names predate this module (they were common.c's) and keep the program-wide prefix.
 */
#ifndef EBSMIGRATE_FS_H
#define EBSMIGRATE_FS_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/strlist.h"

/* ---- one file, replaced atomically ---- */

/* Writes data to path atomically: temp file in the same directory, fsync, rename. mode is the
 * mode asked of open(2) (0666 for data, 0777 for scripts): the file gets mode & ~umask. On
 * failure nothing is left behind. */
int em_write_file_atomic(const char *path, const char *data, size_t len, int mode, struct buf *err);
/* The two halves of em_write_file_atomic, for outputs committed together: em_stage_file writes
 * PATH.tmp.XXXXXX (fsynced, mode & ~umask) and puts its name in tmp_out; em_commit_file renames
 * it over path (and unlinks it if that fails). A staged file not committed is the caller's to
 * unlink. A path that exists and is not a regular file or directory (/dev/null, /dev/stdout, a
 * FIFO) is never replaced: the data is staged in $TMPDIR (or /tmp) and copied into it at commit. */
int em_stage_file(const char *path, const char *data, size_t len, int mode, struct buf *tmp_out, struct buf *err);
int em_commit_file(const char *tmp, const char *path, struct buf *err);
/* em_stage_file in pieces, for a file too large to hold whole (an --save export): em_stage_open
 * creates the temp file, em_stage_write appends (the first error is kept, later writes do
 * nothing), em_stage_close fchmods, fsyncs and closes it and names it in tmp_out for
 * em_commit_file, or unlinks it and says why. em_stage_flush is em_stage_write as a buf_spill
 * flush (ctx: the struct em_staged). em_stage_abandon unlinks a file not closed. path is
 * borrowed until em_stage_close. */
struct em_staged {
	int fd;
	int mode;
	int error;        /* errno of the first failed write, or 0 */
	const char *path; /* the target, for messages */
	struct buf tmp;   /* the temp file's name */
};
int em_stage_open(struct em_staged *st, const char *path, int mode, struct buf *err);
void em_stage_write(struct em_staged *st, const char *data, size_t len);
void em_stage_flush(void *ctx, const char *s, size_t n);
int em_stage_close(struct em_staged *st, struct buf *tmp_out, struct buf *err);
void em_stage_abandon(struct em_staged *st);
/* Copies the rest of src (from its current position) to the descriptor fd, by sendfile when the
 * kernel can: 0, or -1 with errno set. */
int em_copy_stream(FILE *src, int fd);
/* The process umask (read without changing it). */
int em_umask(void);
/* mkdir -p with mode. */
int em_mkdirs(const char *path, int mode, struct buf *err);

/* ---- outputs committed together ---- */

/* How a staged directory goes into place at commit. */
enum fs_dir_commit {
	/* its files move into DIR (created if needed; same-named files replaced, others left alone),
	 * those of its subdirectories into DIR's subdirectories of the same names (inventory --save) */
	FS_DIR_MERGE,
	/* it becomes DIR by one rename (plan --manifests); a DIR that is there and not empty is first
	 * moved aside to DIR.old-XXXXXX, then cleared by the clear_old callback (fs_remove_tree when
	 * none), which may leave what it does not own */
	FS_DIR_REPLACE,
};
struct fs_staged_file {
	char *path, *tmp; /* tmp NULL once committed */
};
struct fs_staged_dir {
	char *path, *tmp; /* the directory (no trailing '/'), its staging sibling DIR.tmp-XXXXXX */
	enum fs_dir_commit how;
	void (*clear_old)(const char *old);
	int committed;
};
/* A command's outputs (git's lockfile, for several): each file is staged by fs_staging_add_file
 * or fs_staging_add_copy (a temporary next to it, as em_stage_file; mode & ~umask), each
 * directory by fs_staging_add_dir (a fresh sibling for the writer to fill); fs_staging_commit
 * moves them into place, directories first, in the order added, then files; fs_staging_release
 * removes whatever was not committed. So a command that fails after staging (a second output,
 * the database record) leaves nothing behind. */
struct fs_staging {
	struct fs_staged_file *files;
	size_t n_files, alloc_files;
	struct fs_staged_dir *dirs;
	size_t n_dirs, alloc_dirs;
};
#define FS_STAGING_INIT {NULL, 0, 0, NULL, 0, 0}
int fs_staging_add_file(struct fs_staging *s, const char *path, const char *data, size_t len, int mode,
			struct buf *err);
/* fs_staging_add_file with the data in a file (a spool of a document too large to hold in
 * memory), copied from its start. */
int fs_staging_add_copy(struct fs_staging *s, const char *path, FILE *src, int mode, struct buf *err);
/* A fresh, empty staging directory DIR.tmp-XXXXXX next to dir (its parent created if needed; mode
 * 0777 & ~umask), owned by s, for a writer to fill; how and clear_old (FS_DIR_REPLACE only, may be
 * NULL) say how it goes into place. NULL after saying why in err (dir exists and is not a
 * directory, or the sibling cannot be made). */
const char *fs_staging_add_dir(struct fs_staging *s, const char *dir, enum fs_dir_commit how,
			       void (*clear_old)(const char *old), struct buf *err);
/* The final path of a file written under a staging directory (for messages); caller frees. */
char *fs_staging_final_path(const struct fs_staging *s, const char *staged_path);
/* Moves everything into place. Stops at the first failure (said in err; EM_EIO), leaving the
 * rest for fs_staging_release to remove. */
int fs_staging_commit(struct fs_staging *s, struct buf *err);
void fs_staging_release(struct fs_staging *s);

/* ---- trees and walks ---- */

/* rm -rf dir, never following a symbolic link (a link is removed, not what it points to). Only
 * for trees this process made (staging directories, fio's work directory). 0, or -1 with errno
 * of the first entry that could not be removed. */
int fs_remove_tree(const char *dir);
/* 1 when dir holds nothing but "." and "..", 0 when it holds something, -1 (errno) when it
 * cannot be read. */
int fs_dir_is_empty(const char *dir);
/* The names in dir but "." and "..", in strcmp order, appended to names (an owning list);
 * FS_NO_HIDDEN leaves out names starting with '.'. 0, or -1 with errno when dir cannot be read. */
enum { FS_NO_HIDDEN = 1 };
int fs_list_dir(const char *dir, unsigned flags, struct strlist *names);
/* Calls visit(ctx, rel, full, st) for each entry of root/rel in name order (fs_list_dir with
 * flags) until one returns non-zero, and returns that; -1 with errno when the directory cannot
 * be read. rel: the entry's path relative to root; full: root/rel (root's trailing '/' not
 * doubled); st: lstat's, NULL when the entry is gone. visit recurses by calling fs_walk with the
 * rel of a directory it enters. */
typedef int (*fs_visit_fn)(void *ctx, const char *rel, const char *full, const struct stat *st);
int fs_walk(const char *root, const char *rel, unsigned flags, fs_visit_fn visit, void *ctx);

#endif
