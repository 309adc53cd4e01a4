/*
 * cmd_fleet.h - the fleet that plan and report price: read from exports (--from-aws-json,
 * --from-kube-json, --from-saved) or, without them, from the live APIs (live_options), scoped
 * (CMD_SCOPE_OPTIONS), with the plan mode and the price age they share. One option parser, one
 * check of the combination and one loader for both commands (cmd_fleet.c).
 */
#ifndef EBSMIGRATE_CMD_FLEET_H
#define EBSMIGRATE_CMD_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "cmd.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/planner.h"
#include "ebsmigrate/scope.h"

/* The option ids of the rows a command lists for these (its own help text); above OPT_LIVE_BASE
 * and OPT_SCOPE_END, like every id cmd_fleet_option takes. */
enum { OPT_FLEET_BASE = 700, OPT_FLEET_FROM_AWS, OPT_FLEET_FROM_KUBE, OPT_FLEET_FROM_SAVED, OPT_FLEET_MODE,
       OPT_FLEET_MAX_PRICE_AGE };
/* The --from-aws-json row, the same for plan and report (their other rows differ in their help). */
#define CMD_FLEET_FROM_AWS_OPTION                                                                                  \
	{"from-aws-json", 0, ARG_REQUIRED, "[ACCOUNT=]FILE|DIR",                                                   \
	 "output of 'aws ec2 describe-volumes' or 'describe-volumes-modifications' (--output json or yaml); a "     \
	 "DIR: every *.json, *.yaml, *.yml in it, in name order (and, without ACCOUNT=, those of its 12-digit account "\
	 "subdirectories, labelled with their id); repeatable",                                                    \
	 OPT_FLEET_FROM_AWS}

struct cmd_fleet {
	struct inventory_live_options live;
	int live_given; /* a live option other than --region/--context was given */
	struct inventory_source *aws, *kube;
	size_t n_aws, n_kube, alloc_aws, alloc_kube;
	enum plan_mode mode;    /* --mode */
	int64_t max_age;        /* --max-price-age */
	struct scope scope;     /* -n, -A, -l, --account, --volume; with exports also --region, --context */
	int live_read;          /* set by cmd_fleet_check: no exports, the APIs are read */
};

/* The start of plan's and report's run: f zeroed with the default --max-price-age, then
 * cmd_start_options_only where the fleet's options (live, scope and OPT_FLEET_* ids; EXIT_USAGE,
 * said, on a bad value) go to f and the command's own to on_option, then the combination
 * checked: live options with exports, or --no-aws with --no-kube, are EXIT_USAGE, said; reading
 * live, --region and --context filter nothing more (scope_read_live in cmd_fleet.c). Returns 1 when the
 * command ends here with *exit_code, else 0. f is the caller's to release either way. */
int cmd_fleet_start(struct cmd_ctx *ctx, const char *name, int argc, char **argv, struct cmd_fleet *f,
		    int (*on_option)(void *st, int id, const char *arg), void *st,
		    struct cmd_output_options *result, const char *hint, int *exit_code);
/* Initializes and reads the fleet, then applies the scope (its notices said). With warn_ctx, the
 * live read's warnings (data asked for and not got) are said on stderr too. On failure the
 * error is said, the fleet released, and EXIT_USAGE or EXIT_RUNTIME returned. */
int cmd_fleet_load(struct cmd_fleet *f, struct fleet *fleet, const struct cmd_ctx *warn_ctx);
void cmd_fleet_release(struct cmd_fleet *f);

#endif
