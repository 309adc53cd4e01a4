/*
 * money.h - exact decimal money.
 *
 * Unit prices (per GB-month, per IOPS-month, per GiBps-month) are kept as int64 counts of
 * 1e-10 USD ("price units"): the Pricing API quotes pricePerUnit.USD with ten decimals,
 * so every published price is represented exactly. Amounts (monthly costs, totals) are
 * int64 micro-dollars (1e-6 USD). cost.c rounds each volume's monthly cost to whole cents
 * (half away from zero), so sums of volumes reconcile to the cent in every grouping.
 * No floating point touches money; doubles appear only when writing JSON numbers.
 */
#ifndef EBSMIGRATE_MONEY_H
#define EBSMIGRATE_MONEY_H

#include <stdint.h>

#include "ebsmigrate/buf.h"

typedef int64_t price_t;  /* 1e-10 USD */
typedef int64_t micro_t;  /* 1e-6 USD */

#define PRICE_UNITS_PER_USD 10000000000LL
#define MICRO_PER_USD 1000000LL
#define MICRO_PER_CENT 10000LL

/* Parses a non-negative decimal ("0.0912000000", "46.6944", "12") exactly.
 * More than ten decimals, a sign, exponent or junk -> EM_EINPUT. */
int money_parse_price(const char *s, price_t *out);
/* Parses a USD amount with up to six decimals into micro-dollars (sign allowed). */
int money_parse_micro(const char *s, micro_t *out);
/* Rounds micro-dollars to whole cents, half away from zero. */
micro_t money_round_cents(micro_t m);
/* A JSON amount in USD that ebsmigrate wrote rounded to cents (plan documents) back to
 * micro-dollars: exact, since the cents are whole. */
micro_t money_from_json_usd(double usd);
/* Converts (price units x quantity / divisor) to micro-dollars, rounded half away from zero.
 * Uses 128-bit intermediates: no overflow for any EBS-sized quantity. */
micro_t money_price_times(price_t price, int64_t quantity, int64_t divisor);
/* Appends "12.34" / "-0.05" (cents, rounding the micro value half away from zero). */
void money_add_usd(struct buf *b, micro_t m);
/* Appends a price with trailing zeros trimmed ("0.0912", "46.6944", "0"). */
void money_add_price(struct buf *b, price_t p);
/* Appends the micro value as a JSON number rounded to cents ("11.4", "26.22", "0"). */
void money_add_json(struct buf *b, micro_t m);
/* Formats with thousands separators for tables: "$1,234.56". */
void money_add_usd_pretty(struct buf *b, micro_t m);
/* Appends tmpl with each "%m" replaced by the next of the n amounts, formatted as
 * money_add_usd_pretty does; nothing else in tmpl is special. The template names exactly n
 * amounts (asserted). MONEY_ADD_SENTENCE(b, "%m now, %m after", now, after) counts them:
 * the sentences of the plan, report and notification summaries. */
void money_add_sentence(struct buf *b, const char *tmpl, const micro_t *amounts, size_t n);
#define MONEY_ADD_SENTENCE(b, tmpl, ...)                                                                    \
	money_add_sentence((b), (tmpl), (const micro_t[]){__VA_ARGS__},                                    \
			   sizeof((const micro_t[]){__VA_ARGS__}) / sizeof(micro_t))
/* A table cell, newly allocated (the caller frees it): add's text for v, or "-" when the value is
 * not known. add is money_add_usd_pretty for amounts or money_add_price for unit prices (both
 * int64_t). */
char *money_cell(int known, int64_t v, void (*add)(struct buf *, int64_t));

#endif
