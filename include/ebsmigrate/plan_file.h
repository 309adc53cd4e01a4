/*
 * plan_file.h - a saved plan document (`plan --out FILE`) read back for `apply --plan FILE`.
 *
 * The file holds exactly what the database's plans.plan_json holds for that plan: one
 * ebsmigrate.plan/v1 document (docs/plan-json.md), so `plan --format json -o FILE` writes the
 * same document. Reading checks what apply and the plans table need (schema, generated_at,
 * mode, volumes[] with each migrate/blocked volume's region and target, totals); every error
 * names the file and the field.
 *
 * Ownership: struct plan_file owns its strings (plan_file_release). The ledger is borrowed.
 */
#ifndef EBSMIGRATE_PLAN_FILE_H
#define EBSMIGRATE_PLAN_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/money.h"

struct ledger;

#define PLAN_FILE_SCHEMA "ebsmigrate.plan/v1"

struct plan_file {
	char *path;             /* as given; names the file in messages */
	char *json;             /* the document exactly as read, NUL-terminated */
	size_t len;
	char generated_at[21];  /* RFC 3339 UTC, normalised */
	char *mode;             /* match, baseline or observed */
	int64_t volumes;        /* totals.volumes */
	micro_t savings_monthly; /* totals.savings_monthly_usd */
};

/* Checks text (len bytes, the contents of path) and fills out, which owns a copy. EM_EINPUT
 * with "plan file 'PATH': FIELD: what is wrong" when it is not a usable plan document; out is
 * then empty (releasing it is harmless). */
int plan_file_parse(struct plan_file *out, const char *path, const char *text, size_t len, struct buf *err);
/* Reads path and checks it (plan_file_parse). EM_ENOTFOUND/EM_EIO when it cannot be read. */
int plan_file_load(struct plan_file *out, const char *path, struct buf *err);
void plan_file_release(struct plan_file *pf);

/* The id of the recorded plan with this exact document, recording it first when no plan has it
 * (price_version NULL: the file's price book ids belong to another database). *recorded = 1
 * when it was recorded now. */
int plan_file_record(struct ledger *l, const struct plan_file *pf, int64_t *id_out, int *recorded, struct buf *err);

#endif
