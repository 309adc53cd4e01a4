/*
 * saved_accounts.h - the coverage of a multi-account inventory as `inventory --save DIR` keeps it
 * (DIR/accounts.json) and the offline readers restore it, so a plan from the saved files has the
 * live plan's accounts, coverage and account notices (docs/inventory.md, issue 15).
 *
 * Document: {"schema": "ebsmigrate.saved-accounts/v1", "current_account", "account_coverage",
 * "accounts": [...] (the inventory/plan JSON's members), "notices": ["..."]}.
 *
 * Entry points: saved_accounts_write (f's accounts and its notices from first_notice on);
 * saved_accounts_is (a parsed root is such a document); saved_accounts_load (outside input:
 * fuzzed by tests/fuzz/fuzz_saved_accounts.c). Errors: EM_EINPUT naming the file and the JSON
 * path; nothing is added to f unless the whole document is good.
 */
#ifndef EBSMIGRATE_SAVED_ACCOUNTS_H
#define EBSMIGRATE_SAVED_ACCOUNTS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/volume.h"

#define SAVED_ACCOUNTS_SCHEMA "ebsmigrate.saved-accounts/v1"

void saved_accounts_write(struct buf *out, const struct fleet *f, size_t first_notice);
int saved_accounts_is(const cJSON *root);
/* The document into f: its accounts appended (an account already in f is kept as it is), the
 * current account set when f has none, its notices added. */
int saved_accounts_load(struct fleet *f, const char *text, size_t len, const char *origin, struct buf *err);

#endif
