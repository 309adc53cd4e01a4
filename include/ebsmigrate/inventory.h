/*
 * inventory.h - builds the fleet: reads EC2 and Kubernetes data (exports now, live APIs
 * later) and joins PV <-> volume handle <-> EBS volume <-> PVC <-> pods/nodes/StatefulSets/usage.
 *
 * Ownership: the caller owns the fleet; sources are borrowed.
 */
#ifndef EBSMIGRATE_INVENTORY_H
#define EBSMIGRATE_INVENTORY_H

#include "ebsmigrate/buf.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/volume.h"

struct inventory_source {
	const char *path;  /* file, or "-" for stdin */
	const char *label; /* account (AWS) or cluster (Kubernetes); NULL = default */
};

struct inventory_exports {
	const struct inventory_source *aws;
	size_t n_aws;
	const struct inventory_source *kube;
	size_t n_kube;
};

/* Reads every export and joins them into f. Stops at the first bad file with EM_EINPUT (or the
 * read error) and a message naming it. The default cluster name of an unlabelled kube file is
 * its base name without ".json". */
int inventory_load_exports(struct fleet *f, const struct inventory_exports *src, struct buf *err);
/* Joins Kubernetes objects onto the fleet's volumes. PVs naming volumes absent from the fleet
 * become volumes with missing = 1 (size/type/zone from the PV and its StorageClass). */
void inventory_join(struct fleet *f, const struct kube_set *ks, int have_ec2_data);

#endif
