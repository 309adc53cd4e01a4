/*
 * cmd_outputs.c - what a command writes: its files staged and then committed together
 * (struct cmd_outputs over fs.c's staging: nothing half-written), what goes to stdout written
 * after them, spool files for documents written in pieces, -o yaml's conversion and the
 * table settings of a result.
 *
 * Entry points: cmd_outputs_add, cmd_outputs_add_spool, cmd_outputs_add_dir,
 * cmd_outputs_final_path, cmd_outputs_commit, cmd_outputs_release, cmd_write_output,
 * cmd_spool_open(_tmp), cmd_spool_sink_flush, cmd_json_to_yaml, cmd_table_options; and the one
 * document emitter plan, inventory and report share: cmd_spool_document (the JSON written in
 * pieces to a spool and the database's copy), cmd_outputs_add_document (-o json or -o yaml to
 * stdout or --output-file, from the spool or from memory).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/fs.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/stop.h"
#include "ebsmigrate/table.h"
#include "ebsmigrate/yamlout.h"

FILE *cmd_spool_open(const char *prefix)
{
	struct buf path = BUF_INIT;
	buf_addf(&path, "%s-XXXXXX", prefix);
	int fd = mkstemp(path.s);
	FILE *fp = NULL;
	if (fd >= 0) {
		unlink(path.s);
		if (!(fp = fdopen(fd, "w+")))
			close(fd);
	}
	buf_release(&path);
	return fp;
}

void cmd_spool_sink_flush(void *sink, const char *s, size_t n)
{
	struct cmd_spool_sink *k = sink;
	fwrite(s, 1, n, k->spool); /* errors: ferror, checked once at the end */
	if (k->doc)
		ledger_doc_add(k->doc, s, n);
}

FILE *cmd_spool_open_tmp(const char *name)
{
	const char *dir = getenv("TMPDIR");
	struct buf prefix = BUF_INIT;
	buf_addf(&prefix, "%s/ebsmigrate-%s", dir && *dir ? dir : "/tmp", name);
	FILE *fp = cmd_spool_open(prefix.s);
	buf_release(&prefix);
	return fp;
}

int cmd_spool_document(FILE *spool, int record, void (*write)(const void *arg, const struct buf_spill *spill),
		       const void *arg, struct ledger_doc **doc)
{
	struct cmd_spool_sink sink = {spool, record ? ledger_doc_begin() : NULL};
	struct buf_spill spill = {cmd_spool_sink_flush, &sink};
	write(arg, &spill);
	*doc = NULL;
	if (fflush(spool) != 0 || ferror(spool)) {
		int saved = errno;
		ledger_doc_free(sink.doc);
		errno = saved;
		return -1;
	}
	*doc = sink.doc;
	return 0;
}

int cmd_outputs_add_document(struct cmd_outputs *o, const char *path, int yaml, FILE *spool, const struct buf *json,
			     struct buf *yaml_out)
{
	if (!yaml)
		return spool ? cmd_outputs_add_spool(o, path, spool) : cmd_outputs_add(o, path, json);
	struct buf err = BUF_INIT;
	int rc = EXIT_OK;
	if (!spool) {
		if (yamlout_from_json(yaml_out, json->s, json->len, &err)) {
			log_error("%s", err.s);
			rc = EXIT_RUNTIME;
		}
	} else if (!(o->yaml_spool = cmd_spool_open_tmp("yaml"))) {
		log_error("cannot create a temporary file for the YAML document: %s", strerror(errno));
		rc = EXIT_RUNTIME;
	} else if (fseek(spool, 0, SEEK_SET) != 0 || yamlout_from_json_file(o->yaml_spool, spool, &err) != 0 ||
		   fflush(o->yaml_spool) != 0) {
		log_error("%s", err.len ? err.s : "cannot write the YAML document to a temporary file");
		rc = EXIT_RUNTIME;
	}
	buf_release(&err);
	if (!rc)
		rc = spool ? cmd_outputs_add_spool(o, path, o->yaml_spool) : cmd_outputs_add(o, path, yaml_out);
	return rc;
}

int cmd_outputs_add(struct cmd_outputs *o, const char *path, const struct buf *data)
{
	if (!path || strcmp(path, "-") == 0) {
		o->to_stdout = data;
		return EXIT_OK;
	}
	struct buf err = BUF_INIT;
	int rc = fs_staging_add_file(&o->staging, path, data->s, data->len, 0666, &err);
	if (rc)
		log_error("%s", err.s);
	buf_release(&err);
	return rc ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_outputs_add_spool(struct cmd_outputs *o, const char *path, FILE *spool)
{
	if (!path || strcmp(path, "-") == 0) {
		o->stdout_spool = spool;
		return EXIT_OK;
	}
	struct buf err = BUF_INIT;
	int rc = fs_staging_add_copy(&o->staging, path, spool, 0666, &err);
	if (rc)
		log_error("%s", err.s);
	buf_release(&err);
	return rc ? EXIT_RUNTIME : EXIT_OK;
}

const char *cmd_outputs_add_dir(struct cmd_outputs *o, const char *dir)
{
	struct buf err = BUF_INIT;
	const char *tmp = fs_staging_add_dir(&o->staging, dir, FS_DIR_MERGE, NULL, &err);
	if (!tmp)
		log_error("%s", err.s);
	buf_release(&err);
	return tmp;
}

char *cmd_outputs_final_path(const struct cmd_outputs *o, const char *staged)
{
	return fs_staging_final_path(&o->staging, staged);
}

int cmd_outputs_commit(struct cmd_outputs *o)
{
	if (stop_requested()) { /* stopping: release removes what was staged */
		log_error("stopped by %s: no output written", stop_signal_name(stop_requested()));
		return EXIT_RUNTIME;
	}
	struct buf err = BUF_INIT;
	int rc = EXIT_OK;
	if (fs_staging_commit(&o->staging, &err)) {
		log_error("%s", err.s);
		rc = EXIT_RUNTIME;
	}
	buf_release(&err);
	/* stdout's own buffer first, then the spool below it on the descriptor */
	if (!rc && o->stdout_spool && (fflush(stdout) != 0 || fseek(o->stdout_spool, 0, SEEK_SET) != 0 ||
				       em_copy_stream(o->stdout_spool, fileno(stdout)) != 0)) {
		log_error("cannot write to standard output: %s", strerror(errno)); /* EFBIG past ulimit -f */
		rc = EXIT_RUNTIME;
	}
	const struct buf *so = o->to_stdout;
	if (!rc && so && so->len && (fwrite(so->s, 1, so->len, stdout) != so->len || fflush(stdout) != 0)) {
		log_error("cannot write to standard output: %s", strerror(errno));
		rc = EXIT_RUNTIME;
	}
	return rc;
}

void cmd_outputs_release(struct cmd_outputs *o)
{
	fs_staging_release(&o->staging);
	if (o->yaml_spool)
		fclose(o->yaml_spool);
	memset(o, 0, sizeof *o);
}

int cmd_write_output(const char *path, const struct buf *data)
{
	struct cmd_outputs o = CMD_OUTPUTS_INIT;
	int rc = cmd_outputs_add(&o, path, data);
	if (!rc)
		rc = cmd_outputs_commit(&o);
	cmd_outputs_release(&o);
	return rc;
}

int cmd_json_to_yaml(struct buf *doc)
{
	struct buf yaml = BUF_INIT, err = BUF_INIT;
	int rc = yamlout_from_json(&yaml, doc->s, doc->len, &err);
	if (rc) {
		log_error("%s", err.s);
	} else {
		struct buf json = *doc; /* a struct buf owns its memory: swap, then free the JSON */
		*doc = yaml;
		yaml = json;
	}
	buf_release(&yaml);
	buf_release(&err);
	return rc ? EXIT_RUNTIME : EXIT_OK;
}

void cmd_table_options(struct table_options *out, const char *output_file, int wide, int no_headers)
{
	int to_stdout = !output_file || strcmp(output_file, "-") == 0;
	out->width = to_stdout ? table_terminal_width(STDOUT_FILENO) : 0;
	out->wide = wide;
	out->no_headers = no_headers;
	out->header_sgr = NULL;
}
