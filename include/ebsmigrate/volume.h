/*
 * volume.h - the record every stage hands the next: one EBS volume with what is known
 * about it (EC2 attributes, latest modification, Kubernetes binding, usage, metrics).
 *
 * Ownership: a struct fleet owns its volumes and every string inside them; strings are
 * heap copies (never pointers into a parser's tree), each its own allocation or inside the
 * volume's `strings` block (see there). fleet_release frees everything.
 * Numeric fields use 0 for "absent" where 0 is not a valid value (iops, throughput);
 * flags say "known" where 0 is valid (has_usage, metrics.has).
 */
#ifndef EBSMIGRATE_VOLUME_H
#define EBSMIGRATE_VOLUME_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ebsmigrate/buf.h"

enum ebs_type {
	EBS_UNKNOWN = 0,
	EBS_GP2,
	EBS_GP3,
	EBS_IO1,
	EBS_IO2,
	EBS_ST1,
	EBS_SC1,
	EBS_STANDARD,
	EBS_TYPE_COUNT
};

const char *ebs_type_name(enum ebs_type t); /* "gp2"...; "unknown" */
enum ebs_type ebs_type_parse(const char *s); /* EBS_UNKNOWN when not an EBS type */

struct kv {
	char *key;
	char *value;
};
/* Frees n key/value pairs (their strings and the array). */
void kv_free(struct kv *kv, size_t n);

struct attachment {
	char *instance_id;
	char *device;
	char *state;
	char *instance_type; /* from DescribeInstances or the node, NULL when unknown */
};

/* EC2's modification state (DescribeVolumesModifications' ModificationState), parsed once by
 * the reader that meets it (volume_mod_set_state); names exist only at the edges (exports, JSON,
 * notes), through volume_mod_state_name. */
enum volume_mod_state {
	MOD_STATE_NONE = 0, /* not given: a zeroed record, or an answer without the field */
	MOD_STATE_OTHER,    /* a state this version does not know: state_text keeps EC2's word */
	MOD_MODIFYING,
	MOD_OPTIMIZING,
	MOD_COMPLETED,
	MOD_FAILED,
};

/* One modification (the latest EC2 shows, or one from the ledger). */
struct volume_mod {
	enum volume_mod_state state;
	char *state_text;     /* MOD_STATE_OTHER: the state as EC2 wrote it; NULL otherwise */
	char *status_message;
	time_t start_time;    /* 0 = unknown */
	time_t end_time;      /* 0 = not ended / unknown */
	enum ebs_type target_type, original_type;
	int64_t target_size, original_size;
	int64_t target_iops, original_iops;
	int64_t target_throughput, original_throughput;
	int64_t progress;     /* percent */
};

/* The Kubernetes side of a volume: its PV and, when bound, its PVC. */
struct kube_binding {
	char *cluster;
	char *pv;
	char *namespace_; /* PVC namespace, NULL when unbound */
	char *pvc;
	char *storage_class;
	char *driver;         /* "ebs.csi.aws.com" or "kubernetes.io/aws-ebs" */
	int in_tree;          /* awsElasticBlockStore PV: no VAC route */
	char *vac;            /* PVC spec.volumeAttributesClassName */
	char *current_vac;    /* PVC status.currentVolumeAttributesClassName */
	char *statefulset;    /* owning StatefulSet (by claim template naming), or NULL */
	char *node;           /* node of the pod using it, when known */
	char *node_instance_type; /* that node's instance type label, when known */
	struct kv *labels;    /* PVC labels */
	size_t n_labels;
	int has_usage;
	int64_t used_bytes, capacity_bytes;
};

/* CloudWatch-derived figures over the look-back (filled by live inventory). */
struct volume_metrics {
	int has;
	double p99_iops, max_iops;
	double p99_mibps, max_mibps;
	double min_burst_balance;   /* percent; < 0 = not reported */
	double share_at_iops_ceiling, share_at_tput_ceiling;
	int64_t lookback_s;
};

/* Whether the modification history of a volume's region was read from CloudTrail. */
enum volume_history {
	HISTORY_NOT_READ = 0,    /* offline input, or not asked: EC2's latest (and the ledger) only */
	HISTORY_CLOUDTRAIL,      /* LookupEvents answered for the region */
	HISTORY_UNAVAILABLE,     /* a live read that could not get it (denied, disabled, failed, or
				  * --no-cloudtrail): eligibility rests on EC2's latest record */
};

struct volume {
	char *volume_id;
	char *account;           /* from a labelled export or the live identity; NULL unknown */
	char *region;            /* from the AZ: "us-west-2" */
	char *availability_zone; /* "us-west-2a", "us-west-2-lax-1a" */
	char *location;          /* pricing location: region, or a Local Zone group "us-west-2-lax-1" */
	int64_t size_gib;
	enum ebs_type type;
	int64_t iops;            /* 0 = absent */
	int64_t throughput;      /* MiB/s, 0 = absent */
	char *state;             /* available | in-use | creating | deleting | ... */
	time_t create_time;
	int encrypted;
	char *kms_key_id;
	int multi_attach;
	struct attachment *attachments;
	size_t n_attachments;
	struct kv *tags;
	size_t n_tags;
	struct volume_mod *mods; /* every modification known, oldest first (by start_time) */
	size_t n_mods;           /* mods[n_mods - 1] is the latest */
	struct kube_binding *kube; /* NULL: not in any cluster */
	struct volume_metrics metrics;
	time_t *trail_starts;    /* start times of the successful ModifyVolume calls CloudTrail recorded,
				  * oldest first; they may repeat mods[] (planner_modification_starts
				  * counts each modification once) */
	size_t n_trail_starts;
	enum volume_history history; /* whether CloudTrail was read for the volume's region */
	int missing;             /* 1: only a PV names it; absent from the EC2 data */
	char *source;            /* the file (or "ec2:REGION") it came from, for messages */
	char *strings;           /* NULL, or one allocation holding some of the strings and arrays
				  * above (volume_release frees those with it, the others one by one) */
	size_t strings_size;
};

/* Cluster-wide objects that shape plan-level warnings and manifests. */
struct storage_class {
	char *cluster, *name, *provisioner;
	char *type;              /* parameters.type, NULL when unset */
	int is_default;
	int allow_expansion;
	char *encrypted;         /* parameters.encrypted as given */
	char *kms_key_id;
	struct kv *parameters;
	size_t n_parameters;
};

struct statefulset_ref {
	char *cluster, *namespace_, *name;
	char **claim_templates;       /* volumeClaimTemplates[].metadata.name */
	char **claim_storage_classes; /* each template's storageClassName (NULL = default) */
	size_t n_templates;
};

struct vac_ref {
	char *cluster, *name, *driver, *api_version;
	struct kv *parameters;
	size_t n_parameters;
};

/* An instance type's EBS-optimized baseline (EC2 DescribeInstanceTypes). */
struct instance_limit {
	char *type;
	int64_t baseline_iops;
	double baseline_mbps;   /* MB/s (10^6 bytes), as EC2 reports it */
};

/* The accounts a multi-account run covered (issue 15; docs/accounts.md): set by the live read
 * when --accounts, --organization or a repeated --profile is given, empty otherwise. */
struct fleet_account_region {
	char *region;
	char *status;     /* "read" or "failed" */
	char *error;      /* why it failed (AWS's code and message), NULL when read */
	size_t volumes;   /* volumes read there */
};

struct fleet_account {
	char *id;         /* 12 digits; NULL for a --profile whose credentials failed before STS said */
	char *name;       /* from Organizations, NULL when unknown */
	char *profile;    /* the --profile it was read with, or NULL */
	char *role_arn;   /* the role assumed, NULL for the current (base) credentials or a profile */
	char *status;     /* "read", "partial" (a region failed), "failed" (no credentials: error),
			   * "skipped" (not ACTIVE in the organization: error is its status) */
	char *error;
	struct fleet_account_region *regions;
	size_t n_regions;
};

struct fleet {
	struct kv *instances;       /* instance id -> instance type, from describe-instances exports */
	size_t n_instances, alloc_instances;
	struct instance_limit *limits;
	size_t n_limits, alloc_limits;
	struct volume *vols;
	size_t n, alloc;
	struct storage_class *scs;
	size_t n_scs, alloc_scs;
	struct statefulset_ref *sts;
	size_t n_sts, alloc_sts;
	struct vac_ref *vacs;
	size_t n_vacs, alloc_vacs;
	char **clusters;            /* cluster names seen, in input order */
	size_t n_clusters, alloc_clusters;
	char **cluster_versions;    /* parallel to clusters: "1.31", NULL when unknown */
	char **notices;             /* non-fatal input problems, complete messages */
	size_t n_notices, alloc_notices;
	struct vol_index *index;    /* volume_id -> position; private to volume.c */
	struct fleet_account *accounts; /* multi-account runs only, in the order read (sorted by id) */
	size_t n_accounts;
	char *current_account;      /* multi-account runs: the base credentials' (GetCallerIdentity) */
};

/* Accounts a run covered: *covered those read in every region, *partial those read in some,
 * *in_scope every account but the skipped ones. covered < in_scope: the run is partial (exit 3). */
void fleet_account_coverage(const struct fleet *f, size_t *covered, size_t *partial, size_t *in_scope);
/* The account's name, or NULL (linear: a few hundred accounts at most). */
const char *fleet_account_name(const struct fleet *f, const char *id);

void fleet_init(struct fleet *f);
void fleet_release(struct fleet *f);
/* Returns the volume with that id, or NULL. */
struct volume *fleet_find(struct fleet *f, const char *volume_id);
/* Appends a zeroed volume owning a copy of volume_id; the caller fills the rest.
 * The pointer stays valid until the next fleet_add_volume. */
struct volume *fleet_add_volume(struct fleet *f, const char *volume_id);
/* fleet_find, remembering in *slot where the id goes when it is not there; then
 * fleet_add_found appends the volume there without hashing the id again (no other change to
 * the fleet in between). volume_id is a string the new volume owns (a heap copy, or inside the
 * block it will own as v->strings). */
struct fleet_slot {
	uint64_t hash;
};
struct volume *fleet_find_slot(struct fleet *f, const char *volume_id, struct fleet_slot *slot);
struct volume *fleet_add_found(struct fleet *f, const struct fleet_slot *slot, char *volume_id);
/* Moves src's volumes to the end of dst's, in order (a volume id dst already holds: src's is
 * released, the first kept); src keeps no volume. Into an empty dst the array itself changes
 * hands: a region's volumes are not copied into the first join. */
void fleet_move_volumes(struct fleet *dst, struct fleet *src);
/* Gives back the volume array's growth slack (up to half of it after doubling) once f is
 * complete and only waits to be moved or read; a later add grows it again as usual. */
void fleet_trim_volumes(struct fleet *f);
/* Keeps the volumes whose keep[i] is non-zero (in order) and releases the others; the index
 * follows. Cluster objects, instances and notices stay. */
void fleet_retain(struct fleet *f, const unsigned char *keep);
void fleet_add_notice(struct fleet *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Registers a cluster name (once); returns its index. */
size_t fleet_add_cluster(struct fleet *f, const char *name);
void volume_release(struct volume *v);
/* Records (or replaces) an instance type's EBS baseline; returns the entry for a type or NULL. */
void fleet_set_instance_limit(struct fleet *f, const char *type, int64_t iops, double mbps);
const struct instance_limit *fleet_instance_limit(const struct fleet *f, const char *type);
void kube_binding_free(struct kube_binding *k);
const char *volume_tag(const struct volume *v, const char *key); /* NULL when absent */
/* The latest known modification, or NULL. */
const struct volume_mod *volume_latest_mod(const struct volume *v);
/* Adds a modification (a copy; strings duplicated) keeping mods ordered by start time. A record
 * with the same start time as a known one replaces it when it is further along. */
void volume_add_mod(struct volume *v, const struct volume_mod *m);
void volume_mod_release(struct volume_mod *m);
/* Sets m's state from EC2's word s: one of the four names, MOD_STATE_OTHER keeping a copy of any
 * other text (an empty one included), MOD_STATE_NONE for NULL. */
void volume_mod_set_state(struct volume_mod *m, const char *s);
/* The state as EC2 wrote it ("modifying", ..., or the unknown text kept); NULL for MOD_STATE_NONE. */
const char *volume_mod_state_name(const struct volume_mod *m);
/* modifying or optimizing: the modification is in flight and no other may start (rule R1). */
int volume_mod_in_flight(enum volume_mod_state s);
/* Adds a CloudTrail start time keeping trail_starts ordered; an equal time is not added twice. */
void volume_add_trail_start(struct volume *v, time_t t);

/* Splits an AZ into region and pricing location:
 *   "us-east-1a" -> region "us-east-1", location "us-east-1"
 *   "us-west-2-lax-1a" -> region "us-west-2", location "us-west-2-lax-1"
 * Returns 0 or EM_EINPUT for a string that is not an AZ name. */
int volume_split_az(const char *az, char **region_out, char **location_out);
/* The same split as lengths of az's prefixes (region, location), without copies. */
int volume_az_prefixes(const char *az, size_t *region_len, size_t *location_len);

/* Longest region or zone name the checks below admit (AWS's are under 32 bytes). */
#define VOLUME_NAME_MAX 64
/* 1 when region is an AWS region name: lower-case words joined by '-' and a number ("us-east-1",
 * "us-gov-west-1"); not a zone, not upper case, no spaces or other bytes. */
int volume_region_ok(const char *region);
/* 1 when az is an availability zone (or Local Zone / Wavelength zone) of that region. */
int volume_az_in_region(const char *az, const char *region);
/* 1 when id is an EBS volume id: "vol-" and 8 to 60 lower-case hex digits. */
int volume_id_ok(const char *id);

#endif
