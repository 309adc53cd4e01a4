"""ebssim Organizations: ListAccounts and DescribeAccount of the scenario's organization.

Entry point: `OrganizationsApp(apis)`, served by ebssim_core on its own loopback port
(env AWS_ENDPOINT_URL_ORGANIZATIONS) through the shared signed-request flow
(ebssim_aws.ServiceApp: faults, SigV4, disabled regions, permission `organizations:ACTION`).
Protocol: JSON 1.1, X-Amz-Target AWSOrganizationsV20161128.ACTION, SigV4 service
`organizations`; any region in the credential scope is accepted (clients given an endpoint URL
sign with their configured region; the real service signs with us-east-1).

Behaviour (scenario keys "organization" and "accounts", see CONTRACT.md):
  - no "organization": every action is 400 AWSOrganizationsNotInUseException;
  - only principals of the management account (the scenario's "account") or of an account in
    organization.delegated_admins may call; others get 400 AccessDeniedException;
  - ListAccounts: the management account first, then the members in scenario order;
    MaxResults 1..20 (default 20), NextToken (a token of another query or a made-up one is
    InvalidInputException); Accounts[]{Id, Arn, Email, Name, Status, JoinedMethod,
    JoinedTimestamp (epoch seconds)};
  - DescribeAccount(AccountId): Account{same fields}; an id not in the organization is
    AccountNotFoundException, a malformed one InvalidInputException.
Invariant: answers are built from sim.accounts (read-only after loading); no state changes here.
"""

import re

import ebssim_aws
from ebssim_core import ApiError

TARGET = "AWSOrganizationsV20161128."
ACTIONS = ("ListAccounts", "DescribeAccount")


class OrganizationsApp(ebssim_aws.Json11App):
    service = "organizations"
    iam_prefix = "organizations"
    TARGET = TARGET
    require_object = True

    def throttle_error(self, proto):
        return ApiError("TooManyRequestsException", "AWS Organizations can't complete your request "
                        "because another request is already in progress. Try again later.", 400)

    def server_error(self, proto):
        return ApiError("ServiceException", "AWS Organizations can't complete your request because "
                        "it encountered an internal error. Try again later.", 500, sender=False)

    def denied(self, principal, perm, region, params, proto):
        return ApiError("AccessDeniedException", "You don't have permissions to access this resource.", 400)

    # ---- actions

    def run(self, action, p, principal, region, req, proto):
        if action not in ACTIONS:
            raise ApiError("UnknownOperationException", "Unknown operation %s" % action)
        org = self.sim.org
        if not org:
            raise ApiError("AWSOrganizationsNotInUseException",
                           "Your account is not a member of an organization.")
        caller = self.sim.account_of(principal)
        admins = [str(a) for a in org.get("delegated_admins") or ()]
        if caller != self.sim.account and caller not in admins:
            raise self.denied(principal, "organizations:" + action, region, p, proto)
        if action == "DescribeAccount":
            return self.describe_account(p)
        return self.list_accounts(p)

    def _account_json(self, acct):
        org_id = self.sim.org.get("id") or "o-ebssim0001"
        return {"Id": acct.id,
                "Arn": "arn:aws:organizations::%s:account/%s/%s" % (self.sim.account, org_id, acct.id),
                "Email": acct.email, "Name": acct.name, "Status": acct.status,
                "JoinedMethod": acct.joined_method, "JoinedTimestamp": acct.joined}

    def list_accounts(self, p):
        limit = p.get("MaxResults", 20)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 20:
            raise ApiError("InvalidInputException", "You provided a value that does not match the required "
                           "pattern: MaxResults must be between 1 and 20.")
        accounts = list(self.sim.accounts.values())   # the management account first
        start = 0
        token = p.get("NextToken")
        if token is not None:
            data = ebssim_aws._tok_decode(token) if isinstance(token, str) else None
            if not isinstance(data, dict) or data.get("a") != "ListAccounts" or \
                    not isinstance(data.get("i"), int) or not 0 < data["i"] < len(accounts):
                raise ApiError("InvalidInputException", "You specified an invalid value for nextToken.")
            start = data["i"]
        page = accounts[start:start + limit]
        out = {"Accounts": [self._account_json(a) for a in page]}
        if start + limit < len(accounts):
            out["NextToken"] = ebssim_aws._tok_encode({"a": "ListAccounts", "i": start + limit})
        return out

    def describe_account(self, p):
        acct_id = p.get("AccountId")
        if not isinstance(acct_id, str) or not re.fullmatch(r"\d{12}", acct_id):
            raise ApiError("InvalidInputException", "You provided a value that does not match the required "
                           "pattern: AccountId must be 12 digits.")
        acct = self.sim.accounts.get(acct_id)
        if acct is None:
            raise ApiError("AccountNotFoundException", "You specified an account that doesn't exist.")
        return {"Account": self._account_json(acct)}
