/*
 * aws_cloudtrail.h - the ModifyVolume calls CloudTrail's event history recorded (LookupEvents,
 * JSON 1.1), so that the 4-per-24-hours budget counts modifications made by anyone: the
 * console, the CSI driver, other tools (EC2 itself shows only each volume's latest).
 *
 * Ownership: struct trail_events owns its events and their strings; trail_events_release frees
 * them. Texts passed in are borrowed. Volumes receive copies of start times (volume.h).
 */
#ifndef EBSMIGRATE_AWS_CLOUDTRAIL_H
#define EBSMIGRATE_AWS_CLOUDTRAIL_H

#include <stddef.h>
#include <time.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/volume.h"

/* CloudTrail's documented rate limit for LookupEvents: 2 requests/s per account and region. */
#define CLOUDTRAIL_RATE_PER_S 2.0
/* Events usually arrive within minutes; AWS allows itself up to about 15. */
#define CLOUDTRAIL_DELIVERY_DELAY_S 900

/* One ModifyVolume call as CloudTrail recorded it. */
struct trail_event {
	char *volume_id;   /* requestParameters.ModifyVolumeRequest.VolumeId, else the volume resource */
	char *event_id;    /* EventId; NULL when absent */
	char *region;      /* awsRegion; NULL when absent */
	char *principal;   /* userIdentity.arn, else Username; NULL when absent */
	time_t time;       /* EventTime (the call's time) */
	int failed;        /* errorCode present: EC2 refused the call, nothing was modified */
};

struct trail_events {
	struct trail_event *v;
	size_t n, alloc;
};

void trail_events_release(struct trail_events *e);

/* Parses one LookupEvents answer or an `aws cloudtrail lookup-events --output json` export
 * (several concatenated documents allowed): {"Events": [...], "NextToken": "..."}. Every
 * ModifyVolume event is appended to out (other event names are skipped: an export may hold any);
 * its embedded CloudTrailEvent document is parsed too. EventTime may be epoch seconds (the API)
 * or an RFC 3339 string (the CLI). A field of the wrong type, an unparsable CloudTrailEvent, a
 * time outside 1970..9999 or a successful ModifyVolume without a volume id is EM_EINPUT naming
 * "ORIGIN: Events[I].FIELD". next_token (may be NULL) receives the last document's NextToken
 * (heap) or NULL. */
int aws_cloudtrail_parse(struct trail_events *out, const char *text, size_t len, const char *origin,
			 char **next_token, struct buf *err);

/* An export file's CloudTrail documents (those with an "Events" member; a file may hold EC2
 * and CloudWatch documents too, read elsewhere) parsed as above and attached to f's volumes
 * (aws_cloudtrail_attach, any region). Events of volumes absent from f are ignored. */
int aws_cloudtrail_load_export(struct fleet *f, const char *text, size_t len, const char *origin, struct buf *err);

struct aws_client;
/* Every ModifyVolume event of region with start <= EventTime <= end: one LookupEvents query
 * (LookupAttributes EventName=ModifyVolume, MaxResults 50) followed through all its pages, at
 * most CLOUDTRAIL_RATE_PER_S calls per second (the client's rate limit for the region), with
 * the client's retries on ThrottlingException. save (may be NULL) receives the events as an
 * export document {"Events": [...]} that aws_cloudtrail_parse reads back. Errors: the
 * client's (AccessDeniedException -> EM_EAUTH; UnsupportedOperationException and other
 * refusals -> EM_ESERVER with AWS's code in the message), or EM_ESERVER for a malformed page. */
int aws_cloudtrail_lookup_modify_volume(struct aws_client *c, const char *region, time_t start, time_t end,
					struct trail_events *out, struct buf *save, struct buf *err);

/* Gives each volume of f the start times of its successful ModifyVolume events (failed calls
 * are not modifications), sorted, each event once. region: only volumes in that region (NULL:
 * any). Returns the number of events that named a volume of f. */
size_t aws_cloudtrail_attach(struct fleet *f, const struct trail_events *e, const char *region);

#endif
