/*
 * money.c - exact decimal money: unit prices in 1e-10 USD, amounts in micro-dollars.
 *
 * Entry points: money_parse_price, money_parse_micro (strict decimal parsers),
 * money_price_times (price x quantity / divisor -> micro-dollars), money_round_cents, and the
 * writers money_add_usd, money_add_price, money_add_json, money_add_usd_pretty, and on top of the
 * last money_add_sentence (a sentence of text and amounts) and money_cell (a table cell).
 *
 * Invariants: no floating point anywhere; every rounding is half away from zero and happens
 * exactly once per conversion; products are formed in 128-bit integers, so they cannot
 * overflow before the division (results beyond int64 saturate, which no EBS bill reaches).
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/money.h"

/* Parses [sign]digits[.digits] with at most max_frac decimals into value x 10^max_frac.
 * Exactly the whole string; no exponent, no spaces, no leading '+' unless allow_sign. */
static int parse_fixed(const char *s, int max_frac, int allow_sign, int64_t *out)
{
	if (!s)
		return EM_EINPUT;
	int neg = 0;
	if (allow_sign && (*s == '-' || *s == '+')) {
		neg = *s == '-';
		s++;
	}
	if (*s < '0' || *s > '9')
		return EM_EINPUT;
	__int128 v = 0;
	const __int128 limit = INT64_MAX;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > limit)
			return EM_EINPUT;
	}
	int frac = 0;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return EM_EINPUT;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (++frac > max_frac)
				return EM_EINPUT;
			v = v * 10 + (*s - '0');
		}
	}
	if (*s)
		return EM_EINPUT;
	for (; frac < max_frac; frac++)
		v *= 10;
	if (v > limit)
		return EM_EINPUT;
	*out = (int64_t)(neg ? -v : v);
	return 0;
}

int money_parse_price(const char *s, price_t *out)
{
	return parse_fixed(s, 10, 0, out);
}

int money_parse_micro(const char *s, micro_t *out)
{
	return parse_fixed(s, 6, 1, out);
}

/* num / den rounded half away from zero; den != 0. Saturates to the int64 range. */
static int64_t div_round(__int128 num, __int128 den)
{
	assert(den != 0);
	if (den < 0) {
		num = -num;
		den = -den;
	}
	int neg = num < 0;
	if (neg)
		num = -num;
	__int128 q = num / den;
	if ((num % den) * 2 >= den)
		q++;
	/* rounded once, half away from zero: what is left over is at most half of den */
	assert(2 * (num - q * den) < den && 2 * (q * den - num) <= den);
	if (neg)
		q = -q;
	if (q > INT64_MAX)
		return INT64_MAX;
	if (q < INT64_MIN)
		return INT64_MIN;
	return (int64_t)q;
}

micro_t money_round_cents(micro_t m)
{
	micro_t r = div_round(m, MICRO_PER_CENT) * MICRO_PER_CENT;
	/* whole cents, the nearest (a half cent away from zero) */
	assert(r % MICRO_PER_CENT == 0 && (__int128)r - m <= MICRO_PER_CENT / 2 && m - (__int128)r < MICRO_PER_CENT / 2 + 1);
	return r;
}

micro_t money_from_json_usd(double usd)
{
	return (micro_t)llround(usd * 100.0) * MICRO_PER_CENT;
}

micro_t money_price_times(price_t price, int64_t quantity, int64_t divisor)
{
	if (divisor == 0)
		return 0;
	/* price units are 1e-10 USD, micro-dollars 1e-6: 1e4 price units per micro-dollar. */
	const __int128 units_per_micro = PRICE_UNITS_PER_USD / MICRO_PER_USD;
	return div_round((__int128)price * quantity, (__int128)divisor * units_per_micro);
}

/* Appends |v| with its last `decimals` digits after a point, optionally grouping thousands. */
static void add_fixed(struct buf *b, uint64_t v, int decimals, int group)
{
	uint64_t scale = 1;
	for (int i = 0; i < decimals; i++)
		scale *= 10;
	uint64_t whole = v / scale, frac = v % scale;
	if (group)
		buf_add_grouped(b, whole);
	else
		buf_addf(b, "%llu", (unsigned long long)whole);
	if (decimals) {
		buf_addc(b, '.');
		for (int i = decimals - 1; i >= 0; i--) {
			uint64_t p = 1;
			for (int j = 0; j < i; j++)
				p *= 10;
			buf_addc(b, (char)('0' + frac / p % 10));
		}
	}
}

static uint64_t magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* Cents of m, rounded; writes the sign into *neg (never for a zero result). */
static uint64_t cents_of(micro_t m, int *neg)
{
	int64_t c = div_round(m, MICRO_PER_CENT);
	*neg = c < 0;
	return magnitude(c);
}

void money_add_usd(struct buf *b, micro_t m)
{
	int neg;
	uint64_t c = cents_of(m, &neg);
	if (neg)
		buf_addc(b, '-');
	add_fixed(b, c, 2, 0);
}

void money_add_usd_pretty(struct buf *b, micro_t m)
{
	int neg;
	uint64_t c = cents_of(m, &neg);
	buf_adds(b, neg ? "-$" : "$");
	add_fixed(b, c, 2, 1);
}

/* Appends v / 10^decimals with trailing fractional zeros (and a bare point) removed. */
static void add_trimmed(struct buf *b, uint64_t v, int decimals)
{
	size_t start = b->len;
	add_fixed(b, v, decimals, 0);
	if (decimals == 0)
		return;
	while (b->len > start && b->s[b->len - 1] == '0')
		b->s[--b->len] = '\0';
	if (b->len > start && b->s[b->len - 1] == '.')
		b->s[--b->len] = '\0';
}

void money_add_price(struct buf *b, price_t p)
{
	if (p < 0)
		buf_addc(b, '-');
	add_trimmed(b, magnitude(p), 10);
}

void money_add_json(struct buf *b, micro_t m)
{
	int neg;
	uint64_t c = cents_of(m, &neg);
	if (neg)
		buf_addc(b, '-');
	add_trimmed(b, c, 2);
}

void money_add_sentence(struct buf *b, const char *tmpl, const micro_t *amounts, size_t n)
{
	size_t used = 0;
	for (const char *p = tmpl, *at; *p; p = at + 2) {
		at = strstr(p, "%m");
		if (!at) {
			buf_adds(b, p);
			break;
		}
		buf_add(b, p, (size_t)(at - p));
		assert(used < n); /* the template names no more amounts than it is given */
		if (used < n)
			money_add_usd_pretty(b, amounts[used++]);
	}
	assert(used == n);
}

char *money_cell(int known, int64_t v, void (*add)(struct buf *, int64_t))
{
	if (!known)
		return xstrdup("-");
	struct buf b = BUF_INIT;
	add(&b, v);
	return buf_detach(&b);
}
