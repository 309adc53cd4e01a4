/*
 * aws_sts.h - AWS STS: who am I (GetCallerIdentity), role assumption for the credentials chain
 * (AssumeRole, AssumeRoleWithWebIdentity), and the EKS bearer token.
 *
 * Calls go to the endpoint aws_endpoint_resolve gives for STS in `region` (NULL = the global
 * endpoint), as form POSTs (Version 2011-06-15); answers are XML, parsed with expat. Signed
 * calls are signed with time(NULL). STS "Throttling" answers are retried by http_send.
 *
 * Ownership: out-structs own their strings; the credentials that come back must be released
 * with aws_credentials_release (aws_creds.h; it wipes them). Inputs are borrowed.
 *
 * Errors: EM_EAUTH when STS refuses (AccessDenied, InvalidClientTokenId, ExpiredToken,
 * InvalidIdentityToken, SignatureDoesNotMatch, ...), EM_ETHROTTLED, EM_ENET, EM_ESERVER for
 * other service errors or an unreadable answer. Messages quote STS's code and message and the
 * role ARN, never a key, token or web identity token.
 */
#ifndef EBSMIGRATE_AWS_STS_H
#define EBSMIGRATE_AWS_STS_H

#include <time.h>

#include "ebsmigrate/buf.h"

struct aws_credentials;
struct http_client;

struct aws_caller_identity {
	char *account;
	char *arn;
	char *user_id;
};

void aws_caller_identity_release(struct aws_caller_identity *id);

int aws_sts_get_caller_identity(struct aws_caller_identity *out, struct http_client *http, const char *region,
				const struct aws_credentials *creds, struct buf *err);

struct aws_assume_role_params {
	const char *role_arn;
	const char *session_name;   /* RoleSessionName */
	const char *external_id;    /* NULL = none */
	int duration_s;             /* 0 = STS's default (1 h) */
};

/* Signed with source; out receives the temporary credentials (source is set to "role ARN"). */
int aws_sts_assume_role(struct aws_credentials *out, struct http_client *http, const char *region,
			const struct aws_credentials *source, const struct aws_assume_role_params *p, struct buf *err);

/* Unsigned: the web identity token (an OIDC JWT) is the proof. */
int aws_sts_assume_role_with_web_identity(struct aws_credentials *out, struct http_client *http, const char *region,
					  const char *role_arn, const char *session_name, const char *web_identity_token,
					  struct buf *err);

/* The EKS token: "k8s-aws-v1." + unpadded base64url of a presigned
 *   GET https://sts.REGION.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15
 * with X-Amz-Expires=60 and the signed header "x-k8s-aws-id: CLUSTER" (not in the query).
 * EKS accepts it for 15 minutes; *expires_out (may be NULL) is now + 14 minutes, when a
 * caller should make a new one (what `aws eks get-token` reports). Pure: no network. */
int aws_eks_token(struct buf *out, time_t *expires_out, const char *cluster, const char *region,
		  const struct aws_credentials *creds, time_t now, struct buf *err);

#endif
