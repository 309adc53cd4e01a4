/*
 * kube_manifest.h - Kubernetes objects from manifests, for the gp2 gate (check.c): YAML streams
 * as kubectl reads them (several documents split by `---`, empty ones, `helm template` output
 * with its `# Source:` comments), JSON objects and Lists (`kubectl get -o json|yaml`, several
 * concatenated), files, directories (their .yaml, .yml and .json files, recursively) and
 * standard input; the live cluster's lists go through the same reader (kube_manifest_live.c).
 *
 * Only what decides which EBS volume type gets created is kept, with where each value was
 * (document, line, column, JSON path): StorageClasses, VolumeAttributesClasses, and every
 * PersistentVolumeClaim spec an object holds: a PVC itself, a StatefulSet's volumeClaimTemplates,
 * the generic ephemeral volumes of a Pod or of a workload's pod template (Deployment, ReplicaSet,
 * DaemonSet, StatefulSet, Job, CronJob, ReplicationController, PodTemplate). Other objects, and
 * documents that are not Kubernetes objects (no apiVersion and kind: a values.yaml, a CI file),
 * are counted and skipped. Nothing libyaml-typed leaves kube_manifest_read.c.
 *
 * Reading rules (kubectl's where it has one): a plain empty scalar, `~` and `null` are absent
 * (`storageClassName:` means no value, `storageClassName: ""` means "no class"); a key that
 * appears twice in a mapping that is read is bad input (kubectl: "key already set in map");
 * YAML merge keys (`<<: *anchor`) are followed, up to a budget of entries a few times the
 * document's nodes (past it the document is bad input: an alias bomb); anchors and aliases are
 * shared nodes, never expanded. Any object with `items` is a List and Lists inside Lists are flattened (kubectl's
 * rules); an item without kind and apiVersion takes the list's kind without "List", a List item
 * that is not an object or has no kind is bad input, and each object node is read once (so an
 * alias cycle cannot loop, nor an alias bomb multiply the work). Scalars are read as Kubernetes'
 * YAML decoder reads them: `!!binary` is base64-decoded everywhere, and any other tag on a value
 * the gate reads (!!int, !!null, !custom) is bad input; untagged scalars are taken as their text
 * (`is-default-class: true` reads as "true"); a mapping or list where a string belongs, or
 * anything but a mapping where an object belongs, is bad input. A document is never passed over
 * silently when it has a kind: one the gate reads whose apiVersion names no group it is served
 * in, or one with kind and metadata but no apiVersion, is bad input; a document without both
 * kind and apiVersion (a values.yaml, a Chart.yaml) is counted as not an object.
 *
 * Errors: EM_EINPUT with one message naming the source, the document, the line and the field,
 * e.g. "chart.yaml: document 3, line 14: StatefulSet 'db/pg': spec.volumeClaimTemplates[0].spec:
 * expected a mapping, got a list"; invalid YAML says "not valid YAML at line L, column C: WHY"
 * (with a hint when the text holds `{{`: an unrendered Helm template; with the cause first when a
 * tab indents the line); a text whose first content is `{{` is "not YAML or JSON: it looks like
 * an unrendered Go template" (not parsed at all); mappings and lists nested
 * more than 1,000 levels deep are refused while the text is read (yamlx_load): "YAML nested more
 * than 1000 levels deep at line L, column C". Files that cannot be read
 * are EM_EINPUT too (em_read_input), over the input size limit EM_ETOOBIG.
 *
 * Ownership: a struct kube_manifest owns its sources, objects and every string in them;
 * kube_manifest_release frees everything. Objects are appended in input order.
 */
#ifndef EBSMIGRATE_KUBE_MANIFEST_H
#define EBSMIGRATE_KUBE_MANIFEST_H

#include <stddef.h>

#include "ebsmigrate/buf.h"

/* Where a value is in its source: 1-based line and column (libyaml counts characters), both 0
 * when the value came from the API server rather than a file. */
struct kube_mark {
	size_t line, column;
};

/* A string field: value NULL when the key is absent or null; at is the value's position, or
 * when absent the position of the mapping it would be in. */
struct km_str {
	char *value;
	struct kube_mark at;
};

struct km_param {
	char *key, *value;
	struct kube_mark at;
};

/* A PersistentVolumeClaim spec: a PVC, a StatefulSet volumeClaimTemplate or an ephemeral
 * volume's volumeClaimTemplate. */
struct km_claim {
	char *path;          /* JSON path of the claim in its object: "" for a PVC,
			      * "spec.volumeClaimTemplates[0]", "spec.template.spec.volumes[2].ephemeral.volumeClaimTemplate" */
	char *name;          /* the PVC's or template's metadata.name, or the ephemeral volume's name */
	struct km_str storage_class;  /* spec.storageClassName ("" = no class) */
	struct km_str beta_class;     /* metadata.annotations['volume.beta.kubernetes.io/storage-class'] */
	struct km_str vac;            /* spec.volumeAttributesClassName */
	struct km_str volume_type;    /* metadata.annotations['ebs.csi.aws.com/volumeType'] (the modifier sidecar) */
	struct kube_mark at;          /* the claim object; spec_at: its spec (or the claim when absent) */
	struct kube_mark spec_at;
};

enum km_what {
	KM_STORAGE_CLASS = 1,
	KM_VOLUME_ATTRIBUTES_CLASS,
	KM_CLAIMS, /* a PVC, or an object holding claim templates */
};

enum km_source_kind { KM_SOURCE_FILE = 0, KM_SOURCE_STDIN, KM_SOURCE_CLUSTER };

struct km_source {
	char *name;              /* the path as given, "stdin", or the context name */
	char *label;             /* for messages: the same, or "context 'NAME'" */
	enum km_source_kind kind;
	size_t documents;        /* documents read from it (empty ones included; 0 for a cluster) */
};

struct km_object {
	enum km_what what;
	char *kind, *api_version;
	char *name, *namespace_;  /* name NULL when the object has only generateName (then in generate_name) */
	char *generate_name;
	size_t source;            /* index into sources */
	size_t document;          /* 1-based document in its source; 0 from a cluster */
	char *item_path;          /* "" or "items[3]" (an object inside a List): the prefix of every path */
	char *helm_source;        /* the `# Source: PATH` comment of its document, or NULL */
	size_t helm_line;         /* that comment's line (positions in the template count from it) */
	struct kube_mark at;
	/* StorageClass: provisioner; VolumeAttributesClass: driverName */
	struct km_str provisioner;
	struct km_param *params;  /* parameters, in document order */
	size_t n_params;
	/* StorageClass: storageclass.kubernetes.io/is-default-class, else the beta key (default_key says which) */
	struct km_str is_default;
	const char *default_key;  /* static */
	struct km_claim *claims;
	size_t n_claims;
	/* annotations skip-check.ebsmigrate.io/RULE: key = RULE, value = the reason */
	struct km_param *skips;
	size_t n_skips;
};

struct kube_manifest {
	struct km_source *sources;
	size_t n_sources, alloc_sources;
	struct km_object *objs;
	size_t n, alloc;
	size_t documents;     /* every document read */
	size_t other_objects; /* Kubernetes objects of other kinds, or workloads without claims */
	size_t not_objects;   /* documents (or List items) that are not Kubernetes objects */
	char **notes;         /* what a directory walk skipped, one complete message each (for the
			       * caller's warnings): a symlink out of the directory, a FIFO, a device */
	size_t n_notes, alloc_notes;
};

#define KUBE_MANIFEST_INIT {NULL, 0, 0, NULL, 0, 0, 0, 0, 0, NULL, 0, 0}

void kube_manifest_init(struct kube_manifest *m);
void kube_manifest_release(struct kube_manifest *m);

/* Adds a source and returns its index. */
size_t kube_manifest_add_source(struct kube_manifest *m, const char *name, enum km_source_kind kind);

/* Reads text (one file's whole contents, or one API list page) as the source src. A text whose
 * first non-blank byte is '{' or '[' is JSON: several values one after another are separate
 * documents (kubectl -o json run twice into one file); anything else is a YAML stream. From a
 * cluster source positions are 0 and documents are not counted. Returns the number of objects
 * kept, or EM_EINPUT (message above). On error the objects of this text are not kept. */
int kube_manifest_read_text(struct kube_manifest *m, size_t src, const char *text, size_t len, struct buf *err);

/* Reads what -f names: "-" is standard input (source "stdin"; no document at all is EM_EINPUT:
 * an empty pipe is what a failed renderer leaves), a directory its .yaml, .yml and
 * .json files (names starting with '.' and symlinked directories skipped; in name order, so the
 * result does not depend on the file system), anything else one file whatever its name (a pipe
 * too: `-f <(helm template ...)`). In a directory only regular files are read, each opened
 * without blocking: a FIFO, a device or a socket with a manifest's name is skipped with a note,
 * and so is a symlink (to a file or a directory) that leads out of the directory -f named
 * (linters' rule: a committed `x.yaml -> /etc/shadow` is not read); a symlink to a file inside
 * it is read. Adds the files read to *files (may be NULL). A directory without a manifest it
 * can read is EM_EINPUT. */
int kube_manifest_read_path(struct kube_manifest *m, const char *path, size_t *files, struct buf *err);

/* A JSON path one key further: base + ".key", or base + "['key']" for a key that is not an
 * identifier (annotations: "metadata.annotations['volume.beta.kubernetes.io/storage-class']").
 * base may be "". Caller frees. */
char *km_path_key(const char *base, const char *key);

/* Drops the objects from index n on (a restarted list), keeping the first n. */
void kube_manifest_truncate(struct kube_manifest *m, size_t n);

/* The object's display name: "NAMESPACE/NAME", "NAME" (cluster-scoped or no namespace given),
 * "GENERATENAME*" when only generateName is set, "" when neither. Caller frees. */
char *km_object_display_name(const struct km_object *o);

struct kube_client;
/* Lists the cluster's StorageClasses, VolumeAttributesClasses (when served: discovery picks the
 * version), StatefulSets and PersistentVolumeClaims into m as source name (kind cluster),
 * through the reader above; with namespaces (n_ns > 0) StatefulSets and claims are read from
 * those namespaces only. A list restarted after 410 Expired keeps no object twice. Returns 0 or
 * kube_client's error codes (EM_EAUTH, EM_ENET, ...; the message names the context and path) or
 * EM_EINPUT for an answer that is not a list of objects. (kube_manifest_live.c) */
int kube_manifest_read_cluster(struct kube_manifest *m, struct kube_client *c, const char *name,
			       const char *const *namespaces, size_t n_ns, unsigned what, struct buf *err);
/* what: which lists kube_manifest_read_cluster reads. */
enum {
	KM_READ_STORAGE_CLASSES = 1u << 0,
	KM_READ_VACS = 1u << 1,
	KM_READ_STATEFULSETS = 1u << 2,
	KM_READ_CLAIMS = 1u << 3,
	KM_READ_ALL = 0xfu,
	KM_READ_CLASSES = KM_READ_STORAGE_CLASSES | KM_READ_VACS,
};

#endif
