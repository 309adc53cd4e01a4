/*
 * modify_refusal.h - EC2's VolumeModificationRateExceeded refusal: recognising it in whatever
 * wraps it (the ModifyVolume answer, the EBS CSI driver's rpc error, the external-resizer's PVC
 * condition, the volume-modifier sidecar's event) and deciding when the volume may be modified
 * again (docs/apply.md, "When a refused volume may go again").
 *
 * Ownership: nothing is allocated; messages and start lists are borrowed.
 */
#ifndef EBSMIGRATE_MODIFY_REFUSAL_H
#define EBSMIGRATE_MODIFY_REFUSAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The time information a refusal's text carries. */
struct rate_refusal {
	time_t after;   /* an absolute time ("... again after 2026-11-01T04:00:00Z."); 0 = none */
	int64_t wait_s; /* a wait ("Wait at least 6 hours between modifications ..."); 0 = none */
};

/* 1 when msg is, or wraps, EC2's VolumeModificationRateExceeded refusal (the code, or AWS's
 * "maximum modification rate" text); *out (zeroed first) then holds the time information the
 * text after that point carries. 0 for any other text, NULL included. */
int rate_refusal_parse(const char *msg, struct rate_refusal *out);

/* Where rate_refusal_until took its answer from. */
enum rate_refusal_basis {
	RATE_UNTIL_MESSAGE = 0, /* the absolute time in AWS's message */
	RATE_UNTIL_WAIT,        /* the latest known start + the message's wait */
	RATE_UNTIL_HISTORY,     /* the modification history known: 4 starts in 24 h, or the latest + 24 h */
	RATE_UNTIL_DEFAULT,     /* no history known: the refusal + 24 h */
};

const char *rate_refusal_basis_name(enum rate_refusal_basis b);

/* When the volume may be modified again, never earlier than EC2 would allow as far as can be
 * known. r: what the message says; refused_at: when EC2 refused; starts: the volume's known
 * modification start times (the ledger's and EC2's latest, any order, duplicates allowed). In
 * order: the message's time; its wait counted from the latest start known (or from the refusal
 * when that is already over); with 4 or more starts known in the 24 h before the refusal, the
 * 4th latest + 24 h (the rolling window's exact answer); with fewer, the latest + 24 h (the
 * unseen ones are older than EC2's latest, so the window frees up by then); with none, the
 * refusal + 24 h. *basis (may be NULL) says which. */
time_t rate_refusal_until(const struct rate_refusal *r, time_t refused_at, const time_t *starts, size_t n_starts,
			  enum rate_refusal_basis *basis);

#endif
