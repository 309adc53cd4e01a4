/*
 * ledger_store.c - the recorded documents: plans (found by SHA-256) and inventory runs, kept small
 * (plan documents stored as zlib streams, migration 0006; inventory documents, 0007), written as
 * they are produced (struct ledger_doc), and `db prune`, which deletes old plans and inventory runs.
 *
 * Entry points: ledger_plan_record / ledger_plan_record_doc / ledger_plan_find /
 * ledger_plan_find_or_record, ledger_inventory_record, ledger_doc_begin / _add / _finish / _free,
 * ledger_plan_document (for ledger_apply.c and ledger_report.c, which read plans rows), ledger_prune.
 *
 * Invariants: a plans row's document is plan_json when that is not empty (rows from before
 * migration 0006, or edited by hand), else plan_zlib inflated, which must come out exactly
 * plan_size bytes (anything else is a damaged row, an error, never a short plan). Prune never
 * deletes a plan that an apply row (apply_runs, apply_volumes) refers to (nothing else refers
 * to plans), and runs in one transaction: it deletes all it reports or nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <openssl/evp.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "ledger_internal.h"

static int deflate_document(const char *doc, size_t len, struct buf *out, struct buf *err)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	/* the fastest level: plans still shrink 20 to 40 times, at a fraction of level 6's CPU */
	if (deflateInit(&z, Z_BEST_SPEED) != Z_OK)
		return em_err(err, EM_EIO, "cannot compress the document: %s", z.msg ? z.msg : "zlib init failed");
	buf_reset(out);
	/* in steps of at most 1 GiB: avail_in is 32 bits */
	const size_t step = (size_t)1 << 30;
	size_t fed = 0;
	int zr = Z_OK;
	do {
		if (z.avail_in == 0 && fed < len) {
			size_t n = len - fed < step ? len - fed : step;
			z.next_in = (Bytef *)(doc + fed);
			z.avail_in = (uInt)n;
			fed += n;
		}
		if (out->cap - out->len < 65536 + 1)
			buf_grow(out, out->len / 2 + 65536);
		z.next_out = (Bytef *)out->s + out->len;
		z.avail_out = (uInt)(out->cap - out->len - 1);
		size_t before = z.avail_out;
		zr = deflate(&z, fed == len ? Z_FINISH : Z_NO_FLUSH);
		out->len += before - z.avail_out;
	} while (zr == Z_OK || zr == Z_BUF_ERROR);
	deflateEnd(&z);
	if (zr != Z_STREAM_END)
		return em_err(err, EM_EIO, "cannot compress the document (zlib error %d)", zr);
	return 0;
}

/* ---- a plan document recorded as it is written ---- */

struct ledger_doc {
	z_stream z;
	EVP_MD_CTX *md;
	struct buf zdata;
	size_t size;
	int failed;
	char sha[65];
};

struct ledger_doc *ledger_doc_begin(void)
{
	struct ledger_doc *d = xcalloc(1, sizeof *d);
	buf_init(&d->zdata);
	d->md = EVP_MD_CTX_new();
	if (!d->md || EVP_DigestInit_ex(d->md, EVP_sha256(), NULL) != 1 || deflateInit(&d->z, Z_BEST_SPEED) != Z_OK)
		d->failed = 1;
	return d;
}

/* Runs deflate over what is in z.next_in with flush, growing zdata. */
static int doc_deflate(struct ledger_doc *d, int flush)
{
	int zr;
	do {
		if (d->zdata.cap - d->zdata.len < 65536 + 1)
			buf_grow(&d->zdata, d->zdata.len / 2 + 65536);
		d->z.next_out = (Bytef *)d->zdata.s + d->zdata.len;
		d->z.avail_out = (uInt)(d->zdata.cap - d->zdata.len - 1);
		size_t before = d->z.avail_out;
		zr = deflate(&d->z, flush);
		d->zdata.len += before - d->z.avail_out;
	} while (zr == Z_OK && (d->z.avail_in > 0 || d->z.avail_out == 0 || flush == Z_FINISH));
	return zr == Z_OK || zr == Z_STREAM_END || zr == Z_BUF_ERROR ? 0 : -1;
}

void ledger_doc_add(struct ledger_doc *d, const char *data, size_t len)
{
	while (!d->failed && len) {
		size_t n = len < ((size_t)1 << 30) ? len : (size_t)1 << 30;
		if (EVP_DigestUpdate(d->md, data, n) != 1)
			d->failed = 1;
		d->z.next_in = (Bytef *)data;
		d->z.avail_in = (uInt)n;
		if (doc_deflate(d, Z_NO_FLUSH))
			d->failed = 1;
		d->size += n;
		data += n;
		len -= n;
	}
}

int ledger_doc_finish(struct ledger_doc *d, struct buf *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	d->z.next_in = NULL;
	d->z.avail_in = 0;
	if (!d->failed && (doc_deflate(d, Z_FINISH) || EVP_DigestFinal_ex(d->md, md, &mdlen) != 1 || mdlen != 32))
		d->failed = 1;
	if (d->failed)
		return em_err(err, EM_EIO, "cannot compress the plan document");
	for (unsigned i = 0; i < 32; i++)
		snprintf(d->sha + 2 * i, 3, "%02x", md[i]);
	return 0;
}

void ledger_doc_free(struct ledger_doc *d)
{
	if (!d)
		return;
	deflateEnd(&d->z);
	EVP_MD_CTX_free(d->md);
	buf_release(&d->zdata);
	free(d);
}

static void doc_stored(const struct ledger_doc *d, const char **zdata, size_t *zlen, size_t *size, const char **sha)
{
	*zdata = d->zdata.s;
	*zlen = d->zdata.len;
	*size = d->size;
	*sha = d->sha;
}

/* Inflates exactly size bytes from z (a zlib stream of zlen bytes) into a NUL-terminated copy. */
static int inflate_exact(const void *zdata, size_t zlen, int64_t size, char **out)
{
	if (size < 0 || (uint64_t)size > SIZE_MAX - 1)
		return -1;
	char *doc = xmalloc((size_t)size + 1);
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit(&z) != Z_OK) {
		free(doc);
		return -1;
	}
	const size_t step = (size_t)1 << 30;
	size_t fed = 0, got = 0;
	int zr = Z_OK;
	while (zr == Z_OK) {
		if (z.avail_in == 0 && fed < zlen) {
			size_t n = zlen - fed < step ? zlen - fed : step;
			z.next_in = (Bytef *)zdata + fed;
			z.avail_in = (uInt)n;
			fed += n;
		}
		size_t room = (size_t)size - got;
		z.next_out = (Bytef *)doc + got;
		z.avail_out = (uInt)(room < step ? room : step);
		size_t before = z.avail_out;
		zr = inflate(&z, Z_NO_FLUSH);
		got += before - z.avail_out;
		if (zr == Z_BUF_ERROR && got < (size_t)size && fed < zlen)
			zr = Z_OK; /* more input to feed */
		if (zr == Z_OK && got == (size_t)size && fed == zlen && z.avail_in == 0) {
			/* all output produced: the stream must end here (one more call says so) */
			unsigned char spare;
			z.next_out = &spare;
			z.avail_out = 1;
			zr = inflate(&z, Z_FINISH);
			if (z.avail_out == 0)
				zr = Z_DATA_ERROR; /* longer than plan_size */
		}
	}
	int ok = zr == Z_STREAM_END && got == (size_t)size && z.avail_in == 0 && fed == zlen;
	inflateEnd(&z);
	if (!ok) {
		free(doc);
		return -1;
	}
	doc[size] = '\0';
	*out = doc;
	return 0;
}

int ledger_plan_document(sqlite3_stmt *st, int col, int64_t id, char **out, struct buf *err)
{
	*out = NULL;
	const unsigned char *json = sqlite3_column_text(st, col);
	if (json && *json) {
		*out = xstrdup((const char *)json);
		return 0;
	}
	const void *z = sqlite3_column_blob(st, col + 1);
	size_t zlen = (size_t)sqlite3_column_bytes(st, col + 1);
	if (sqlite3_column_type(st, col + 1) != SQLITE_NULL && sqlite3_column_type(st, col + 2) == SQLITE_INTEGER &&
	    inflate_exact(z, zlen, sqlite3_column_int64(st, col + 2), out) == 0)
		return 0;
	if (sqlite3_column_type(st, col + 1) == SQLITE_NULL) {
		*out = xstrdup(""); /* an empty plan_json and no compressed copy: the plan checks refuse it */
		return 0;
	}
	return em_err(err, EM_EINPUT,
		      "recorded plan %lld: the stored document is damaged (plan_zlib does not inflate to plan_size "
		      "bytes)",
		      (long long)id);
}

/* ---- recording plans and inventory runs ---- */

/* Inserts a plans row with the document already compressed (zdata, zlen), its size and hash. */
static int insert_plan(struct ledger *l, const char *generated_at, const char *mode, int64_t price_version,
		       int64_t volumes, int64_t savings_monthly_micro, const char *zdata, size_t zlen, size_t size,
		       const char *sha, int64_t *id_out, struct buf *err)
{
	char now[21];
	em_format_time(em_now(), now);
	return ledger_insert(l,
			     "INSERT INTO plans (generated_at, mode, price_version, volumes, savings_monthly_micro, "
			     "plan_json, created_at, plan_sha256, plan_zlib, plan_size) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?, ?)",
			     LEDGER_PARAMS(LP_TEXT(generated_at), LP_TEXT(mode), LP_ID(price_version), LP_INT64(volumes),
					   LP_INT64(savings_monthly_micro), LP_TEXT(now), LP_TEXT(sha), LP_BLOB(zdata, zlen),
					   LP_INT64(size)),
			     id_out, "cannot record the plan", err);
}

int ledger_plan_record(struct ledger *l, const char *generated_at, const char *mode, int64_t price_version,
		       int64_t volumes, int64_t savings_monthly_micro, const char *plan_json, int64_t *id_out,
		       struct buf *err)
{
	char sha[65];
	size_t len = strlen(plan_json);
	em_sha256_hex(plan_json, len, sha);
	/* Stored compressed (migration 0006): JSON plans shrink 20 to 40 times. */
	struct buf z = BUF_INIT;
	int rc = deflate_document(plan_json, len, &z, err);
	if (!rc)
		rc = insert_plan(l, generated_at, mode, price_version, volumes, savings_monthly_micro, z.s, z.len, len, sha,
				 id_out, err);
	buf_release(&z);
	return rc;
}

int ledger_plan_record_doc(struct ledger *l, const char *generated_at, const char *mode, int64_t price_version,
			   int64_t volumes, int64_t savings_monthly_micro, const struct ledger_doc *doc, int64_t *id_out,
			   struct buf *err)
{
	const char *zdata, *sha;
	size_t zlen, size;
	doc_stored(doc, &zdata, &zlen, &size, &sha);
	return insert_plan(l, generated_at, mode, price_version, volumes, savings_monthly_micro, zdata, zlen, size, sha,
			   id_out, err);
}

struct plan_match {
	const char *doc;
	int64_t id;
};

/* 1 (which stops the search) when the row's document is the one sought. */
static int match_plan(sqlite3_stmt *st, void *ctx, struct buf *err)
{
	(void)err;
	struct plan_match *m = ctx;
	int64_t id = sqlite3_column_int64(st, 0);
	char *doc = NULL;
	struct buf ignored = BUF_INIT; /* a damaged row is simply not this document */
	int same = ledger_plan_document(st, 1, id, &doc, &ignored) == 0 && strcmp(doc, m->doc) == 0;
	free(doc);
	buf_release(&ignored);
	if (same)
		m->id = id;
	return same;
}

int ledger_plan_find(struct ledger *l, const char *plan_json, int64_t *id_out, struct buf *err)
{
	char sha[65];
	em_sha256_hex(plan_json, strlen(plan_json), sha);
	/* The hash narrows the search; the documents themselves decide (rows recorded before
	 * migration 0005 have no hash; since 0006 documents are compressed, so compared here). */
	struct plan_match match = {plan_json, 0};
	int rc = ledger_query_rows(l,
				   "SELECT id, plan_json, plan_zlib, plan_size FROM plans WHERE plan_sha256 = ?1 "
				   "OR (plan_sha256 IS NULL AND (plan_json = ?2 OR (plan_json = '' AND plan_size = ?3))) "
				   "ORDER BY id DESC",
				   LEDGER_PARAMS(LP_TEXT(sha), LP_DOC(plan_json), LP_INT64(strlen(plan_json))), match_plan,
				   &match, "cannot read plans", err);
	if (rc == 1) {
		*id_out = match.id;
		return 0;
	}
	if (!rc)
		rc = em_err(err, EM_ENOTFOUND, "no plan in database '%s' has this document", l->path);
	return rc;
}

int ledger_plan_find_or_record(struct ledger *l, const char *generated_at, const char *mode,
			       int64_t price_version, int64_t volumes, int64_t savings_monthly_micro,
			       const char *plan_json, int64_t *id_out, int *recorded, struct buf *err)
{
	*recorded = 0;
	/* One write transaction: two runs importing the same file at once record it once. */
	int rc = ledger_exec(l, "BEGIN IMMEDIATE", "cannot start recording the plan", err);
	if (rc)
		return rc;
	struct buf find_err = BUF_INIT;
	rc = ledger_plan_find(l, plan_json, id_out, &find_err);
	if (rc == EM_ENOTFOUND) {
		rc = ledger_plan_record(l, generated_at, mode, price_version, volumes, savings_monthly_micro,
					plan_json, id_out, err);
		*recorded = rc == 0;
	} else if (rc) {
		em_err(err, rc, "%s", find_err.s);
	}
	buf_release(&find_err);
	rc = ledger_end_tx(l, rc, "cannot finish recording the plan", err);
	if (rc)
		*recorded = 0;
	return rc;
}

int ledger_inventory_record(struct ledger *l, const struct ledger_inventory_run *run, int64_t *id_out,
			    struct buf *err)
{
	const char *zdata = NULL, *sha;
	size_t zlen = 0, size = 0;
	if (run->doc)
		doc_stored(run->doc, &zdata, &zlen, &size, &sha);
	/* The document compressed (migration 0007), the text column left empty; else its text. */
	const struct ledger_param *document = run->doc ? LEDGER_PARAMS(LP_TEXT(""), LP_BLOB(zdata, zlen), LP_INT64(size))
						       : LEDGER_PARAMS(LP_DOC(run->inventory_json));
	return ledger_insert(l,
			     "INSERT INTO inventory_runs (started_at, finished_at, source, regions, clusters, volumes, "
			     "kube_volumes, aws_calls, notices, inventory_json, inventory_zlib, inventory_size) "
			     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			     LEDGER_PARAMS(LP_TEXT(run->started_at), LP_TEXT(run->finished_at), LP_TEXT(run->source),
					   LP_TEXT(run->regions ? run->regions : ""),
					   LP_TEXT(run->clusters ? run->clusters : ""), LP_INT64(run->volumes),
					   LP_INT64(run->kube_volumes), LP_INT64(run->aws_calls),
					   LP_TEXT(run->notices_json ? run->notices_json : "[]"), LP_LIST(document)),
			     id_out, "cannot record the inventory run", err);
}

/* ---- db prune ---- */

static int count_of(struct ledger *l, const char *sql, int64_t arg, int64_t *out, struct buf *err)
{
	int rc = ledger_query_row(l, sql, LEDGER_PARAMS(LP_INT64(arg)), ledger_read_int64, out, "cannot read the database",
				  err);
	if (rc == EM_ENOTFOUND) /* the row is gone */
		rc = ledger_db_err(l, err, "cannot read the database");
	return rc;
}

/* Collects the ids the SELECT returns (one bound parameter) into *ids. */
static int ids_of(struct ledger *l, const char *sql, int64_t arg, int64_t **ids, size_t *n, struct buf *err)
{
	struct ledger_list list = LEDGER_LIST_INIT(int64_t, NULL);
	int rc = ledger_query_list(l, sql, LEDGER_PARAMS(LP_INT64(arg)), ledger_read_int64_into_list, &list,
				   "cannot read the database", err);
	*ids = list.items; /* empty on an error */
	*n = list.n;
	return rc;
}

void ledger_prune_result_release(struct ledger_prune_result *r)
{
	free(r->plans);
	free(r->runs);
	free(r->kept_referenced);
	memset(r, 0, sizeof *r);
}

/* Plans older than the newest `keep` (by id) that no apply row names; the referenced ones kept;
 * inventory runs older than the newest `keep`. */
static const char plans_sql[] =
	"SELECT id FROM plans WHERE id NOT IN (SELECT id FROM plans ORDER BY id DESC LIMIT ?1) "
	"AND id NOT IN (SELECT plan_id FROM apply_runs) AND id NOT IN (SELECT plan_id FROM apply_volumes) "
	"ORDER BY id";
static const char referenced_sql[] =
	"SELECT id FROM plans WHERE id NOT IN (SELECT id FROM plans ORDER BY id DESC LIMIT ?1) "
	"AND (id IN (SELECT plan_id FROM apply_runs) OR id IN (SELECT plan_id FROM apply_volumes)) ORDER BY id";
static const char runs_sql[] =
	"SELECT id FROM inventory_runs WHERE id NOT IN (SELECT id FROM inventory_runs ORDER BY id DESC LIMIT ?1) "
	"ORDER BY id";

static int delete_ids(struct ledger *l, const char *table, const int64_t *ids, size_t n, struct buf *err)
{
	char sql[80];
	snprintf(sql, sizeof sql, "DELETE FROM %s WHERE id = ?", table);
	sqlite3_stmt *st;
	int rc = ledger_prepare(l, sql, &st, err);
	for (size_t i = 0; !rc && i < n; i++) {
		sqlite3_bind_int64(st, 1, ids[i]);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = ledger_db_err(l, err, "cannot delete old records");
		sqlite3_reset(st);
	}
	if (st)
		sqlite3_finalize(st);
	return rc;
}

int ledger_prune(struct ledger *l, int64_t keep, int dry_run, int vacuum, struct ledger_prune_result *r,
		 struct buf *err)
{
	memset(r, 0, sizeof *r);
	int rc = ledger_exec(l, "BEGIN IMMEDIATE", "cannot start pruning", err);
	if (rc)
		return rc;
	rc = ids_of(l, runs_sql, keep, &r->runs, &r->n_runs, err);
	if (!rc)
		rc = ids_of(l, plans_sql, keep, &r->plans, &r->n_plans, err);
	if (!rc)
		rc = ids_of(l, referenced_sql, keep, &r->kept_referenced, &r->n_kept_referenced, err);
	/* what the documents take now, stored (compressed or not) */
	for (size_t i = 0; !rc && i < r->n_plans; i++) {
		int64_t bytes = 0;
		rc = count_of(l, "SELECT length(CAST(plan_json AS BLOB)) + coalesce(length(plan_zlib), 0) FROM plans WHERE id = ?",
			      r->plans[i], &bytes, err);
		r->plan_bytes += bytes;
	}
	for (size_t i = 0; !rc && i < r->n_runs; i++) {
		int64_t bytes = 0;
		rc = count_of(l, "SELECT length(CAST(inventory_json AS BLOB)) + coalesce(length(inventory_zlib), 0) "
			      "FROM inventory_runs WHERE id = ?", r->runs[i],
			      &bytes, err);
		r->run_bytes += bytes;
	}
	if (!rc && !dry_run)
		rc = delete_ids(l, "inventory_runs", r->runs, r->n_runs, err);
	if (!rc && !dry_run)
		rc = delete_ids(l, "plans", r->plans, r->n_plans, err);
	if (!rc)
		rc = ledger_exec(l, dry_run ? "ROLLBACK" : "COMMIT", "cannot finish pruning", err);
	else
		ledger_rollback(l);
	if (!rc && vacuum && !dry_run)
		rc = ledger_exec(l, "VACUUM", "cannot vacuum the database", err);
	return rc;
}
