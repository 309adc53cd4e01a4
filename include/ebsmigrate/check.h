/*
 * check.h - the gp2 gate's rules (`ebsmigrate check`, docs/check.md): given the objects of
 * manifests or of a live cluster (kube_manifest.h), which of them create gp2 volumes, and
 * where. Pure: no I/O, no printing; check_output.h writes the results.
 *
 * The rules have stable ids (EM-GP2-001 ...) and names; errors make the gate fail (exit 4),
 * warnings do not. A StorageClass's volume type is its `type` parameter (key compared without
 * regard to case, as both EBS provisioners do), else the provisioner's default: gp2 for the
 * in-tree kubernetes.io/aws-ebs, gp3 for the EBS CSI driver (ebs.csi.aws.com, >= v0.8) and EKS
 * Auto Mode (ebs.csi.eks.amazonaws.com). A claim's class is its beta annotation
 * volume.beta.kubernetes.io/storage-class, else spec.storageClassName ("" = no class, no
 * dynamic provisioning), else the default class. A claim's VolumeAttributesClass `type`, or
 * its ebs.csi.aws.com/volumeType annotation, decides over its class's type.
 *
 * Class names resolve against the checked objects first (what is applied wins), then against the
 * extra classes (--storage-classes files, --cluster-classes), which are never findings
 * themselves. A default class comes from the checked objects when they mark one, else from the
 * extra classes.
 *
 * Ownership: a struct check_result owns its findings and notes (and their strings); it points
 * into the manifests it was made from (object indexes), which must outlive it.
 */
#ifndef EBSMIGRATE_CHECK_H
#define EBSMIGRATE_CHECK_H

#include <stddef.h>

#include "ebsmigrate/kube_manifest.h"

enum check_level { CHECK_WARNING = 1, CHECK_ERROR = 2 };

struct check_rule {
	const char *id;        /* "EM-GP2-001": stable; SARIF ruleId, JUnit failure type */
	const char *name;      /* "gp2-storage-class": what --skip and the skip annotation also accept */
	enum check_level level; /* without --strict */
	int strict_error;      /* --strict makes it an error */
	const char *summary;   /* one sentence */
	const char *help;      /* why, and what to do */
};

/* The rules, in the order docs/check.md lists them, and their count. */
extern const struct check_rule check_rules[];
extern const size_t check_n_rules;
/* The rule with that id or name (case-insensitive), or NULL. */
const struct check_rule *check_rule_find(const char *id_or_name);

struct check_finding {
	const struct check_rule *rule;
	enum check_level level;
	char *message;          /* one sentence, names the object and the class */
	size_t object;          /* index into the checked manifest's objects */
	char *path;             /* JSON path in the object (with its items[N] prefix) */
	struct kube_mark at;
	char *suppressed;       /* the reason of a skip-check.ebsmigrate.io/RULE annotation, or NULL */
};

struct check_options {
	int strict;                   /* unresolved classes are errors */
	const struct check_rule **skip; /* rules not run */
	size_t n_skip;
};

struct check_result {
	struct check_finding *findings; /* in object order, then by claim */
	size_t n, alloc;
	size_t errors, warnings, suppressed; /* counts of findings (suppressed ones only in suppressed) */
	size_t storage_classes, vacs, claims; /* what the rules looked at */
	size_t objects;                 /* checked objects (with a class, a VAC or claims) */
	char **notes;                   /* complete messages for stderr (a skip annotation naming no rule) */
	size_t n_notes, alloc_notes;
};

/* Runs every rule not skipped over checked's objects, resolving names against checked and then
 * extra (may be NULL). */
void check_run(struct check_result *out, const struct kube_manifest *checked, const struct kube_manifest *extra,
	       const struct check_options *o);
void check_result_release(struct check_result *r);

/* Does the object hold an error finding that is not suppressed? (JUnit's failed test cases.) */
int check_object_failed(const struct check_result *r, size_t object);

#endif
