/*
 * inventory_internal.h - shared by the inventory's two files: inventory.c (the join, the
 * exports, and what the join could not place) and inventory_live.c (the live reads and their
 * fan-out). Not a public header: nothing outside inventory*.c includes it.
 */
#ifndef EBSMIGRATE_INVENTORY_INTERNAL_H
#define EBSMIGRATE_INVENTORY_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/kube_objects.h"
#include "ebsmigrate/volume.h"

/* A small ordered set of names (regions, clusters): a few entries, so linear lookups. */
static inline int names_have(char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return 1;
	return 0;
}

static inline void names_add(char ***v, size_t *n, const char *name)
{
	if (names_have(*v, *n, name))
		return;
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = xstrdup(name);
}

static inline void names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static inline int has_region(const struct inventory_live_result *r, const char *region)
{
	return names_have(r->regions, r->n_regions, region);
}

/* The join (inventory_join's rules). report_missing 0: the caller has told the missing volumes
 * apart already (inventory_report_missing); r: the live result whose warnings get the skipped-PV
 * warning (NULL: a notice, for exports); skip (may be NULL): PVs left out, by index. */
void inventory_join_live(struct fleet *f, struct kube_set *ks, int have_ec2_data, int report_missing,
			 struct inventory_live_result *r, const unsigned char *skip);

/* A fleet notice that is a warning (r->warning_notices): data the run was asked for and did not get. */
void inventory_add_warning(struct fleet *f, struct inventory_live_result *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The region a PV's zone topology names; NULL (and nothing to free) when it has none. */
char *inventory_pv_region(const struct kube_pv *pv);

/* Appends an account as messages name it: "ID (NAME)", "ID (profile 'P')", "(unknown) ...". */
void inventory_account_label(struct buf *b, const char *id, const char *name, const char *profile);

/* --region given: marks the PVs whose volumes lie outside those regions, for the join to leave
 * out, and says so in r->outside_regions_note. Returns the marks (NULL when none); caller frees. */
unsigned char *inventory_leave_out_of_scope(const struct inventory_live_options *o, struct inventory_live_result *r,
					    struct fleet *f, const struct kube_set *ks);

/* Notices and warnings for the PVs whose volumes no region read holds, by why (skip: as above). */
void inventory_report_missing(struct fleet *f, struct inventory_live_result *r, const struct kube_set *ks,
			      const unsigned char *skip);

#endif
