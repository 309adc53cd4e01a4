/*
 * aws_credential_chain.h - AWS credentials, the chain that finds them (in the AWS CLI's order), and
 * region resolution. docs/aws.md is the user-facing description.
 *
 * Chain, first match wins (botocore's order; an explicit --profile skips the environment keys
 * of link 1 and the environment variables of link 3, as in the CLI):
 *   1. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY [+ AWS_SESSION_TOKEN]
 *   2. profile role: role_arn + source_profile | credential_source -> STS AssumeRole (signed)
 *   3. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (environment first, then the
 *      profile's web_identity_token_file + role_arn) -> AssumeRoleWithWebIdentity (unsigned)
 *   4. profile keys in the credentials file ([name]), then 5. in the config file ([profile name])
 *   6. container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (169.254.170.2) or _FULL_URI, with
 *      Authorization from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (re-read every time) or
 *      AWS_CONTAINER_AUTHORIZATION_TOKEN
 *   7. instance metadata (IMDSv2: PUT token, GET role, GET credentials)
 * The link that answered is remembered; credentials are reused until refresh_window_s before
 * they expire, then fetched again from that same link.
 *
 * Ownership: the credentials value (struct aws_credentials, aws_creds.h) owns its strings and is
 * wiped on release. The provider owns its cached credentials;
 * aws_credentials_provider_get hands out a borrowed pointer valid until the next get or
 * release. The provider borrows opt->http, which must outlive it.
 *
 * Time: expiry is judged on the real clock (opt->clock), never em_now(): --now pins planning
 * time, not the validity of a session token.
 *
 * Errors name the source and never the secret, e.g.
 *   "profile 'prod' in ~/.aws/config: role_arn set but no source_profile or credential_source"
 * EM_EAUTH: nothing found, or a source refused; EM_EINPUT: a malformed profile;
 * EM_ENOTFOUND: a named profile that does not exist; EM_EUNSUPPORTED: SSO, credential_process
 * or MFA profiles; EM_ENET / EM_ESERVER: a credential service failed.
 */
#ifndef EBSMIGRATE_AWS_CREDENTIAL_CHAIN_H
#define EBSMIGRATE_AWS_CREDENTIAL_CHAIN_H

#include <time.h>

#include "ebsmigrate/aws_creds.h" /* the value type: struct aws_credentials */
#include "ebsmigrate/buf.h"

struct http_client;

struct aws_credentials_options {
	const char *profile;        /* --profile; NULL = AWS_PROFILE, AWS_DEFAULT_PROFILE, "default" */
	const char *region;         /* for STS; NULL = the global endpoint (signed for us-east-1) */
	struct http_client *http;   /* borrowed */
	const char *session_name;   /* RoleSessionName when the profile has none; NULL =
				     * "ebsmigrate-<unix time>" */
	time_t (*clock)(void);      /* NULL = time(NULL) */
	int refresh_window_s;       /* 0 = 300 */
	/* Assumed-role mode (one account of --accounts/--organization): instead of walking the
	 * chain, STS AssumeRole of role_arn signed with the credentials source() copies into *out
	 * (the base chain's, any link of it); refreshed like any other, refresh_window_s before
	 * they expire. external_id may be NULL, duration_s 0 (STS's default). */
	int (*source)(void *ctx, struct aws_credentials *out, struct buf *err);
	void *source_ctx;
	const char *role_arn;
	const char *external_id;
	int duration_s;
	const char *expect_account; /* the assumed credentials must be this account's, by the role
				     * ARN STS answers and by sts GetCallerIdentity asked with them
				     * once per AssumeRole (else EM_EAUTH, nothing cached) */
};

/* Fields are private to aws_credential_chain.c. */
struct aws_credentials_provider {
	char *profile;
	int profile_explicit;       /* from --profile: environment keys are skipped */
	int profile_named;          /* from --profile or AWS_PROFILE: it must exist */
	char *region;
	char *session_name;
	struct http_client *http;
	time_t (*clock)(void);
	int refresh_window_s;
	int link;                   /* the link that answered; -1 until one did */
	int no_source;              /* the last get failed because no link applies */
	int have;
	struct aws_credentials creds;
	int (*source)(void *ctx, struct aws_credentials *out, struct buf *err);
	void *source_ctx;
	char *role_arn, *external_id, *expect_account;
	int duration_s;
};

void aws_credentials_provider_init(struct aws_credentials_provider *p, const struct aws_credentials_options *opt);
void aws_credentials_provider_release(struct aws_credentials_provider *p);
/* Current credentials (resolving or refreshing as needed). *out is borrowed. When a refresh
 * fails while the cached credentials have not expired yet, those are returned. */
int aws_credentials_provider_get(struct aws_credentials_provider *p, const struct aws_credentials **out,
				 struct buf *err);
/* 1 when the last get failed only because no link of the chain applies: nothing is configured
 * (no keys, no profile credentials, no web identity, no container URI, and instance metadata
 * does not answer or gives no role). 0 after a success and after a configured source failed
 * (a refused token, a 401, a malformed answer, a bad setting): callers may do without AWS in
 * the first case only. */
int aws_credentials_provider_found_no_source(const struct aws_credentials_provider *p);
/* Forgets the cached credentials (after the service said ExpiredToken); the next get fetches. */
void aws_credentials_provider_expire(struct aws_credentials_provider *p);

/* Region: explicit (--region), AWS_REGION, AWS_DEFAULT_REGION, then the profile's `region`
 * (profile as for the chain). *out is heap-allocated, caller frees. EM_ENOTFOUND when none. */
int aws_region_resolve(char **out, const char *explicit_region, const char *profile, struct buf *err);
/* One setting of the profile (profile as for the chain) from the shared files, e.g. max_attempts;
 * *out heap-allocated or NULL when unset. 0, or the files' load error. */
int aws_profile_setting(char **out, const char *profile, const char *key, struct buf *err);

#endif
