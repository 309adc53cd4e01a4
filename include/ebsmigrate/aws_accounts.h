/*
 * aws_accounts.h - the accounts one run covers (issue 15): the --accounts/--exclude-accounts
 * lists, the role ARN each account's credentials are assumed through, the STS session name,
 * and the organization's accounts (Organizations ListAccounts, paginated). docs/accounts.md is
 * the user-facing description.
 *
 * Pure parts (no network): aws_account_id_valid, aws_accounts_parse, aws_role_name_check,
 * aws_role_arn_template_check, aws_role_arn_expand, aws_session_name_sanitize, aws_org_parse_list_accounts and
 * aws_org_parse_describe_account (server input: fuzzed by tests/fuzz/fuzz_org_accounts.c).
 *
 * Ownership: struct org_account_list owns its accounts' strings; release with
 * org_account_list_release. Lists passed in are the caller's.
 *
 * Errors: EM_EINPUT for bad user input (naming the option, file and value); ListAccounts
 * errors as aws_client gives them (EM_EAUTH for AccessDenied, EM_ESERVER for
 * AWSOrganizationsNotInUseException or an unreadable answer), with the call named.
 */
#ifndef EBSMIGRATE_AWS_ACCOUNTS_H
#define EBSMIGRATE_AWS_ACCOUNTS_H

#include <stddef.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/strlist.h"

struct aws_client;

/* 1 when s is an AWS account id: exactly 12 decimal digits. */
int aws_account_id_valid(const char *s);

/* One --accounts or --exclude-accounts argument, appended to out (an owning list; an id already
 * in it is not added twice, order kept): "ID[,ID...]" or "@FILE", a file of ids separated by
 * commas, blanks or new lines, where '#' starts a comment to the end of the line. opt names
 * the option in messages. EM_EINPUT: a malformed id (named, with the file and line), an empty
 * list or file, an unreadable file. */
int aws_accounts_parse(struct strlist *out, const char *opt, const char *arg, struct buf *err);

/* An IAM role name with an optional path, as --role-name gives it (PATH/NAME): segments of
 * [A-Za-z0-9_+=,.@-] joined by '/', none empty, '.' or '..'; the name at most 64 characters, the
 * whole at most 512. EM_EINPUT naming opt and the value (shown as visible text), with why. */
int aws_role_name_check(const char *opt, const char *name, struct buf *err);
/* A role ARN template: arn:PARTITION:iam::${account}:role/NAME, PARTITION being ${partition} or
 * a partition's name, ${account} exactly once and as the account field, NAME as
 * aws_role_name_check takes it; nothing else after '$'. So no template can send STS another
 * parameter, a second account or another path (issue 28 item 15). EM_EINPUT, said. */
int aws_role_arn_template_check(const char *tmpl, struct buf *err);
/* The template expanded for one account (appended to out); the template must have passed
 * aws_role_arn_template_check. */
void aws_role_arn_expand(struct buf *out, const char *tmpl, const char *partition, const char *account);

/* STS's RoleSessionName: 2-64 characters of [A-Za-z0-9_+=,.@-]. Every other byte becomes '-',
 * the result is cut at 64 and padded with '-' to 2 (appended to out). */
void aws_session_name_sanitize(struct buf *out, const char *in);

/* ---- Organizations ---- */
struct org_account {
	char *id, *arn, *name, *email;
	char *status;  /* ACTIVE, SUSPENDED, PENDING_CLOSURE (as Organizations says) */
};

struct org_account_list {
	struct org_account *v;
	size_t n, alloc;
};

void org_account_list_release(struct org_account_list *l);
/* One ListAccounts answer (JSON 1.1: {"Accounts":[{Id, Arn, Email, Name, Status, ...}],
 * "NextToken": ...}): its accounts appended to out, *next_token (NULL at the end; the caller
 * frees it) set. An account without a valid Id or Status is EM_ESERVER naming it. */
int aws_org_parse_list_accounts(const char *body, size_t len, struct org_account_list *out, char **next_token,
				struct buf *err);
/* Every account of the organization, page after page (at most 1,000 pages). */
int aws_org_list_accounts(struct aws_client *c, struct org_account_list *out, struct buf *err);
/* One DescribeAccount answer ({"Account": {Id, Arn, Email, Name, Status, ...}}): the account
 * appended to out. EM_ESERVER, said, when it has no valid Id and Status, or (id not NULL) an Id
 * other than id. Server input: fuzzed by tests/fuzz/fuzz_org_accounts.c too. */
int aws_org_parse_describe_account(const char *body, size_t len, const char *id, struct org_account_list *out,
				   struct buf *err);
/* Organizations DescribeAccount of id (its name and status for --accounts and --profile runs):
 * appended to out. Errors as aws_client gives them (EM_EAUTH for AccessDeniedException: callable
 * only from the management or a delegated administrator account). */
int aws_org_describe_account(struct aws_client *c, const char *id, struct org_account_list *out, struct buf *err);

/* ---- one client per account (apply across accounts) ----
 * The base client acts in its own account (STS GetCallerIdentity, asked once when first
 * needed); any other 12-digit account gets a client of its own, made on first use with
 * aws_client_init_assumed (role ARN from the template) and kept. An account label that is not
 * an account id (an export's ACCOUNT= label), or none, is the base client's. The base must
 * outlive the set. */
struct aws_account_client {
	char *account;
	struct aws_client *client; /* heap: the clients never move */
};

struct aws_account_clients {
	struct aws_client *base;
	const char *role_arn_template, *session_name, *external_id; /* borrowed */
	int duration_s;
	char *current, *partition;  /* the base credentials' account and partition, once asked */
	int identity_rc;            /* GetCallerIdentity's failure, kept (asked once) */
	char *identity_err;
	struct aws_account_client *v;
	size_t n;
};

void aws_account_clients_init(struct aws_account_clients *s, struct aws_client *base, const char *role_arn_template,
			      const char *session_name, const char *external_id, int duration_s);
/* The client acting in account, or NULL with the reason in err (the base credentials' account
 * unknown). */
struct aws_client *aws_account_clients_get(struct aws_account_clients *s, const char *account, struct buf *err);
void aws_account_clients_release(struct aws_account_clients *s);

#endif
