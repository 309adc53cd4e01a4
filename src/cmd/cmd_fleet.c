/*
 * cmd_fleet.c - the fleet input plan and report share (cmd_fleet.h): their export and live
 * options, the checks of their combination and the reading, then scoping, of the fleet.
 * Invariant: with exports given no live option other than --region/--context is accepted (those
 * two filter the exports' volumes instead).
 */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/aws_pricing.h"
#include "cmd_fleet.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/log.h"

/* A live option of plan or report: --region and --context are also kept in s (with exports they
 * filter by the volume's region and cluster); any other live option sets *live_given. */
static int live_or_scope_option(struct inventory_live_options *live, struct scope *s, int *live_given, int id,
				const char *arg)
{
	if (id == OPT_LIVE_REGION)
		scope_add(&s->regions, &s->n_regions, arg);
	else if (id == OPT_LIVE_CONTEXT)
		scope_add(&s->contexts, &s->n_contexts, arg);
	else
		*live_given = 1;
	return cmd_live_option(live, id, arg);
}

/* Live reading: --region and --context chose what was read (a PV in a region not read stays,
 * flagged volume-not-found), so they filter nothing more. */
static void scope_read_live(struct scope *s)
{
	s->n_regions = 0;
	s->n_contexts = 0;
}

/* A live or OPT_FLEET_* option (ids above OPT_LIVE_BASE; the output and scoping options are
 * taken by cmd_parse before). */
static int fleet_option(struct cmd_fleet *f, int id, const char *arg)
{
	switch (id) {
	case OPT_FLEET_FROM_AWS: return cmd_add_source(&f->aws, &f->n_aws, &f->alloc_aws, arg, 0);
	case OPT_FLEET_FROM_KUBE: return cmd_add_source(&f->kube, &f->n_kube, &f->alloc_kube, arg, 1);
	case OPT_FLEET_FROM_SAVED:
		return cmd_add_saved(&f->aws, &f->n_aws, &f->alloc_aws, &f->kube, &f->n_kube, &f->alloc_kube, arg);
	case OPT_FLEET_MODE:
		return cmd_usage_if(plan_mode_parse(arg, &f->mode) != 0,
				    "--mode: '%s' is not one of match, baseline, observed", arg);
	case OPT_FLEET_MAX_PRICE_AGE:
		return cmd_usage_if(pricing_parse_age(arg, &f->max_age) != 0,
				    "--max-price-age: '%s' is not an age such as 90d, 36h or 0", arg);
	}
	return live_or_scope_option(&f->live, &f->scope, &f->live_given, id, arg);
}

static int fleet_check(struct cmd_fleet *f)
{
	f->live_read = !f->n_aws && !f->n_kube;
	if (!f->live_read && f->live_given) {
		log_error("live options (--profile, --all-contexts, --no-metrics, ...) do not apply to "
			  "--from-aws-json/--from-kube-json inputs");
		return EXIT_USAGE;
	}
	if (f->live_read)
		scope_read_live(&f->scope);
	int rc = f->live_read ? cmd_live_check(&f->live) : 0;
	if (rc)
		return rc;
	if (f->live_read && f->live.no_aws && f->live.no_kube) {
		log_error("--no-aws and --no-kube together leave nothing to read");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* cmd_parse's state while a fleet command's options are parsed. */
struct fleet_parse {
	struct cmd_fleet *f;
	int (*on_option)(void *st, int id, const char *arg);
	void *st;
};

static int fleet_or_own_option(void *st, int id, const char *arg)
{
	struct fleet_parse *p = st;
	return id > OPT_LIVE_BASE ? fleet_option(p->f, id, arg) : p->on_option(p->st, id, arg);
}

int cmd_fleet_start(struct cmd_ctx *ctx, const char *name, int argc, char **argv, struct cmd_fleet *f,
		    int (*on_option)(void *st, int id, const char *arg), void *st,
		    struct cmd_output_options *result, const char *hint, int *exit_code)
{
	memset(f, 0, sizeof *f);
	f->max_age = PRICING_DEFAULT_MAX_AGE_S;
	ctx->scope = &f->scope;
	struct fleet_parse p = {f, on_option, st};
	return cmd_start_options_only(ctx, name, argc, argv, fleet_or_own_option, &p, result, hint, exit_code) ||
	       (*exit_code = fleet_check(f));
}

/* The live read's warnings, grouped as cmd_print_warnings does. */
static void say_live_warnings(const struct cmd_ctx *ctx, const struct fleet *fleet,
			      const struct inventory_live_result *res)
{
	if (!res->n_warning_notices)
		return;
	char **w = xcalloc(res->n_warning_notices, sizeof *w);
	for (size_t i = 0; i < res->n_warning_notices; i++)
		w[i] = fleet->notices[res->warning_notices[i]];
	cmd_print_warnings(ctx, w, res->n_warning_notices, "-o json's .warnings");
	free(w);
}

int cmd_fleet_load(struct cmd_fleet *f, struct fleet *fleet, const struct cmd_ctx *warn_ctx)
{
	struct buf err = BUF_INIT;
	int lrc;
	fleet_init(fleet);
	if (f->live_read) {
		struct inventory_live_result res;
		f->live.progress = cmd_progress;
		lrc = inventory_load_live(fleet, &f->live, &res, &err);
		cmd_progress_end();
		if (!lrc && warn_ctx)
			say_live_warnings(warn_ctx, fleet, &res);
		if (!lrc && res.outside_regions_note)
			log_notice("%s", res.outside_regions_note);
		inventory_live_result_release(&res);
	} else {
		struct inventory_exports src = {f->aws, f->n_aws, f->kube, f->n_kube};
		lrc = inventory_load_exports(fleet, &src, &err);
	}
	if (lrc) {
		log_error("%s", err.s);
		buf_release(&err);
		fleet_release(fleet);
		return f->live_read ? (lrc == EM_EINPUT ? EXIT_USAGE : EXIT_RUNTIME) : em_exit_code_for(lrc);
	}
	buf_release(&err);
	struct scope_stats sst;
	scope_filter_fleet(&f->scope, fleet, &sst);
	cmd_scope_notices(&f->scope, &sst, "volumes");
	scope_stats_release(&sst);
	return EXIT_OK;
}

void cmd_fleet_release(struct cmd_fleet *f)
{
	scope_release(&f->scope);
	cmd_live_options_release(&f->live);
	cmd_free_sources(f->aws, f->n_aws);
	cmd_free_sources(f->kube, f->n_kube);
}
