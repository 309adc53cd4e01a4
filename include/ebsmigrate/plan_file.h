/*
 * plan_file.h - a saved plan document (`plan --out FILE`) read back for `apply --plan FILE`.
 *
 * The file holds exactly what the database's plans.plan_json holds for that plan: one
 * ebsmigrate.plan/v1 document (docs/plan-json.md), so `plan --format json -o FILE` writes the
 * same document. Reading checks what apply and the plans table need (schema, generated_at,
 * mode, volumes[] with each migrate/blocked volume's region, size and target, totals); every
 * error names the file, the volume and the field.
 *
 * plan_doc_parse is the one reader of plan documents: `apply --plan FILE` and apply of a
 * recorded plan (apply.c) both go through it, so a target that is not a valid gp3
 * configuration for its volume's size (plan_target_check), or a name that is not what its field
 * holds in AWS or Kubernetes (volume id, region, zone inside the region, account, cluster,
 * namespace, PVC: volume.h's and kube_client.h's rules), never reaches apply, whatever path
 * named the plan. A document followed by anything but whitespace (a second document, as
 * `cat a.json b.json` makes) is refused, never truncated.
 *
 * Ownership: struct plan_file and struct plan_doc own their strings (plan_file_release,
 * plan_doc_release). The ledger is borrowed.
 */
#ifndef EBSMIGRATE_PLAN_FILE_H
#define EBSMIGRATE_PLAN_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/volume.h"

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

/* One volume apply may act on: a migrate or blocked entry of volumes[]. */
struct plan_entry {
	char *volume_id, *region, *account;         /* account may be NULL */
	char *cluster, *namespace_, *pvc, *driver;  /* kubernetes.*; NULL outside Kubernetes */
	enum ebs_type type;                         /* as planned from (EBS_UNKNOWN when absent) */
	int64_t size_gib, iops, throughput;         /* iops/throughput 0 when null */
	int64_t target_iops, target_throughput;     /* the target type is always gp3 */
	micro_t current_monthly, target_monthly, savings_monthly; /* 0 when null */
	size_t index;                               /* position in volumes[] */
};

struct plan_doc {
	struct plan_entry *v; /* migrate and blocked volumes, in document order */
	size_t n, alloc;
	char generated_at[21]; /* RFC 3339 UTC, normalised */
	char *mode;
	int64_t volumes;        /* totals.volumes */
	micro_t savings_monthly; /* totals.savings_monthly_usd */
};

/* Parses and checks a plan document. origin names it in messages ("plan file 'p.json'",
 * "recorded plan 3"): EM_EINPUT with "ORIGIN: volumes[I] (volume 'ID').FIELD: what is wrong";
 * out is then empty. */
int plan_doc_parse(struct plan_doc *out, const char *origin, const char *text, size_t len, struct buf *err);
void plan_doc_release(struct plan_doc *d);

/* Whether apply may send this target for a volume of size_gib: type gp3 and the gp3 limits and
 * ratios (ebs_gp3_validate). On a violation: EM_EINPUT, the reason appended to err and *field
 * set to the member at fault ("size_gib", "target.type", "target.iops",
 * "target.throughput_mibps"). */
int plan_target_check(enum ebs_type type, int64_t size_gib, int64_t iops, int64_t throughput, const char **field,
		      struct buf *err);

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
