/*
 * modify_refusal.c - when may a volume EC2 refused with VolumeModificationRateExceeded be
 * modified again?
 *
 * Entry points: rate_refusal_parse (what the refusal's text says), rate_refusal_until (the time,
 * from the text or else from the modification history known).
 *
 * The texts this reads come from servers and pass through other programs, so nothing about their
 * wording is assumed beyond AWS's code or its "maximum modification rate" phrase:
 *   EC2 (until 2026-01):  "You've reached the maximum modification rate per volume limit. Wait at
 *                          least 6 hours between modifications per EBS volume."
 *   EC2 (4 per 24 h):     the same first sentence and the time the next one is allowed
 *                          ("... again after 2026-11-01T04:00:00Z.", the simulator's wording)
 *   CSI driver:           "rpc error: code = Internal desc = Could not modify volume \"vol-…\":
 *                          ... api error VolumeModificationRateExceeded: <EC2's message>"
 *   external-resizer:     "ModifyVolume failed with error: <driver error>. Waiting for retry."
 * Invariants: only the text after the code (or the phrase) is searched, so a volume id, request
 * id or timestamp before it is never taken for the answer; the answer is never earlier than the
 * rules allow for the history known (an early answer would make apply send again and be refused
 * again).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/modify_refusal.h"

#define DAY_S 86400
#define MODS_PER_DAY 4

static const char *find_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = hay; *p; p++)
		if (strncasecmp(p, needle, n) == 0)
			return p;
	return NULL;
}

/* The first RFC 3339 time (YYYY-MM-DDThh:mm:ss...) in s, or 0. */
static time_t first_time(const char *s)
{
	for (const char *p = s; *p; p++) {
		if (!(isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
		      isdigit((unsigned char)p[3]) && p[4] == '-'))
			continue;
		if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))
			continue; /* inside a longer token (an id) */
		char tok[40];
		size_t n = strspn(p, "0123456789-T:.Z+");
		if (n >= sizeof tok || n < 19 || p[10] != 'T')
			continue;
		memcpy(tok, p, n);
		tok[n] = '\0';
		while (n && tok[n - 1] == '.') /* the sentence's full stop(s) */
			tok[--n] = '\0';
		time_t t;
		if (em_parse_time(tok, &t) == 0 && t > 0)
			return t;
	}
	return 0;
}

/* "wait at least N hour(s)|minute(s)|second(s)" -> seconds, or 0. */
static int64_t wait_seconds(const char *s)
{
	const char *p = find_nocase(s, "wait at least ");
	if (!p)
		return 0;
	p += strlen("wait at least ");
	int64_t n = 0;
	int digits = 0;
	while (isdigit((unsigned char)*p) && digits < 6) {
		n = n * 10 + (*p++ - '0');
		digits++;
	}
	if (!digits || isdigit((unsigned char)*p) || n <= 0)
		return 0;
	while (*p == ' ')
		p++;
	if (strncasecmp(p, "hour", 4) == 0)
		return n * 3600;
	if (strncasecmp(p, "minute", 6) == 0)
		return n * 60;
	if (strncasecmp(p, "second", 6) == 0)
		return n;
	if (strncasecmp(p, "day", 3) == 0)
		return n * DAY_S;
	return 0;
}

int rate_refusal_parse(const char *msg, struct rate_refusal *out)
{
	memset(out, 0, sizeof *out);
	if (!msg)
		return 0;
	const char *p = strstr(msg, "VolumeModificationRateExceeded");
	if (!p)
		p = find_nocase(msg, "maximum modification rate");
	if (!p)
		return 0;
	out->after = first_time(p);
	out->wait_s = wait_seconds(p);
	return 1;
}

const char *rate_refusal_basis_name(enum rate_refusal_basis b)
{
	static const char *const names[] = {"the time in AWS's message", "the wait in AWS's message",
					    "the modification history known", "24 hours after the refusal"};
	return names[b];
}

static int by_time_desc(const void *a, const void *b)
{
	time_t x = *(const time_t *)a, y = *(const time_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

time_t rate_refusal_until(const struct rate_refusal *r, time_t refused_at, const time_t *starts, size_t n_starts,
			  enum rate_refusal_basis *basis)
{
	enum rate_refusal_basis unused;
	if (!basis)
		basis = &unused;
	if (r && r->after) {
		*basis = RATE_UNTIL_MESSAGE;
		return r->after;
	}
	/* The starts up to the refusal, latest first, each once. */
	time_t recent[MODS_PER_DAY];
	size_t n_recent = 0;
	time_t latest = 0;
	time_t *sorted = NULL;
	if (n_starts) {
		sorted = xmalloc(n_starts * sizeof *sorted);
		memcpy(sorted, starts, n_starts * sizeof *sorted);
		qsort(sorted, n_starts, sizeof *sorted, by_time_desc);
	}
	for (size_t i = 0; i < n_starts; i++) {
		time_t t = sorted[i];
		if (t <= 0 || t > refused_at || (i && t == sorted[i - 1]))
			continue;
		if (!latest)
			latest = t;
		if (t > refused_at - DAY_S && n_recent < MODS_PER_DAY)
			recent[n_recent++] = t;
	}
	free(sorted);
	if (r && r->wait_s) {
		*basis = RATE_UNTIL_WAIT;
		return latest && latest + r->wait_s > refused_at ? latest + r->wait_s : refused_at + r->wait_s;
	}
	if (n_recent == MODS_PER_DAY) {
		*basis = RATE_UNTIL_HISTORY;
		return recent[MODS_PER_DAY - 1] + DAY_S;
	}
	if (n_recent) {
		*basis = RATE_UNTIL_HISTORY;
		return recent[0] + DAY_S;
	}
	*basis = RATE_UNTIL_DEFAULT;
	return refused_at + DAY_S;
}
