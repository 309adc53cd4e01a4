/*
 * scope.h - which volumes a reading command shows: the kubectl/AWS CLI scoping flags
 * (-n/--namespace, -A/--all-namespaces, -l/--selector, --context, --region, --account,
 * --volume) as one value, and their one meaning, applied to a fleet, a plan's rows or the apply
 * ledger's rows.
 *
 * A volume is in scope when every given filter holds: its id is one of --volume, its region one
 * of --region, its account one of --account, its cluster (kubeconfig context) one of --context,
 * its PVC's namespace one of -n (unless -A) and its PVC's labels match -l. Filters of one kind
 * are ORed, kinds are ANDed. A namespace or selector filter needs a PVC: volumes without one
 * (outside Kubernetes, or an unbound PV) are kept only when neither is given, as kubectl lists
 * only namespaced objects under -n. -A overrides -n, as in kubectl.
 *
 * Ownership: struct scope owns its arrays and the parsed selector; the strings in the arrays are
 * borrowed (argv) and must outlive it. scope_release frees what it owns.
 */
#ifndef EBSMIGRATE_SCOPE_H
#define EBSMIGRATE_SCOPE_H

#include <stddef.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/selector.h"
#include "ebsmigrate/strmap.h"
#include "ebsmigrate/volume.h"

struct scope {
	const char **namespaces, **contexts, **regions, **accounts, **volumes;
	size_t n_namespaces, n_contexts, n_regions, n_accounts, n_volumes;
	int all_namespaces;
	const char *selector_text; /* -l as given, NULL when none */
	struct selector selector;
};

/* What a volume is judged by. labels_known = 0: the caller evaluates -l itself (scope_matches
 * then ignores it), e.g. through the API server for ledger rows, which carry no labels. */
struct scope_subject {
	const char *volume_id, *region, *account, *cluster, *namespace_, *pvc;
	const struct kv *labels;
	size_t n_labels;
	int labels_known;
};

void scope_add(const char ***arr, size_t *n, const char *value);
/* Sets -l (parsed now). EM_EINPUT with selector_parse's message. */
int scope_set_selector(struct scope *s, const char *text, struct buf *err);
void scope_release(struct scope *s);

/* Any filter given (-A alone is none). */
int scope_active(const struct scope *s);
/* -n applies (given and not overridden by -A). */
int scope_by_namespace(const struct scope *s);
int scope_matches(const struct scope *s, const struct scope_subject *x);
/* The subject of a fleet volume (labels known: its PVC's). */
struct scope_subject scope_subject_of(const struct volume *v);

/* What filtering found, for the command's notices. */
struct scope_stats {
	size_t before, kept;
	const char **unknown_namespaces; /* -n values no volume's PVC is in (borrowed; owned array) */
	size_t n_unknown_namespaces;
};
void scope_stats_release(struct scope_stats *st);

/* Keeps the fleet's volumes in scope (fleet_retain); the cluster objects stay. */
void scope_filter_fleet(const struct scope *s, struct fleet *f, struct scope_stats *st);

/* "-n payments -l 'tier=db' --region us-east-1" for messages; empty when no filter. */
void scope_describe(const struct scope *s, struct buf *out);

struct kube_conns;
/* -l evaluated live, as apply does: lists cluster's PVCs with labelSelector=selector (paged)
 * and adds "CLUSTER/NAMESPACE/NAME" of each match to keys. EM_* with the message in err. */
int scope_live_selected_pvcs(struct kube_conns *kcs, const char *selector, const char *cluster, struct strmap *keys,
			     struct buf *err);

#endif
