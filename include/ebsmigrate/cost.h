/*
 * cost.h - monthly cost of a volume configuration from the price book (FACTS.md §4).
 *
 *   gp2, st1, sc1, standard:  GiB x storage price
 *   gp3:  GiB x gp3 + (IOPS - 3000)+ x IOPS price + (MiB/s - 125)+ x (GiBps price / 1024)
 *   io1:  GiB x io1 + IOPS x io1 IOPS price
 *   io2:  GiB x io2 + tiered IOPS (<= 32,000; 32,001-64,000; > 64,000)
 *
 * The result is micro-dollars rounded to whole cents (half away from zero), per volume, so
 * every aggregation reconciles to the cent. A price the book lacks makes the call fail with
 * EM_ENOTFOUND and a message naming the location and the missing item ("no io1 IOPS price
 * for 'eu-west-1'"): the caller flags the volume `unpriced`.
 */
#ifndef EBSMIGRATE_COST_H
#define EBSMIGRATE_COST_H

#include "ebsmigrate/buf.h"
#include "ebsmigrate/ebs.h"
#include "ebsmigrate/money.h"
#include "ebsmigrate/pricebook.h"

int cost_monthly(const struct pricebook *book, const char *location, const struct ebs_config *cfg,
		 micro_t *out, struct buf *err);

#endif
