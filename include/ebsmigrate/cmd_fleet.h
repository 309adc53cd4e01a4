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

#include "ebsmigrate/cmd.h"
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
	 "output of 'aws ec2 describe-volumes' or 'describe-volumes-modifications' (--output json); a DIR: "       \
	 "every *.json in it, in name order (and, without ACCOUNT=, those of its 12-digit account "                 \
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

/* Zero, with the default --max-price-age. */
void cmd_fleet_init(struct cmd_fleet *f);
/* Does id belong to cmd_fleet_option (a live, scope or OPT_FLEET_* option)? */
int cmd_fleet_owns(int id);
/* Applies one such option; EXIT_USAGE, said, on a bad value. */
int cmd_fleet_option(struct cmd_fleet *f, int id, const char *arg);
/* After parsing: live options with exports, or --no-aws with --no-kube, are EXIT_USAGE, said;
 * reading live, --region and --context filter nothing more (cmd_scope_read_live). */
int cmd_fleet_check(struct cmd_fleet *f);
/* Initializes and reads the fleet, then applies the scope (its notices said). With warn_ctx, the
 * live read's warnings (data asked for and not got) are said on stderr too. On failure the
 * error is said, the fleet released, and EXIT_USAGE or EXIT_RUNTIME returned. */
int cmd_fleet_load(struct cmd_fleet *f, struct fleet *fleet, const struct cmd_ctx *warn_ctx);
void cmd_fleet_release(struct cmd_fleet *f);

#endif
