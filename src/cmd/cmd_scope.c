/*
 * cmd_scope.c - the scoping options' parsing and notices for plan, report, status and inventory
 * (the rows are CMD_SCOPE_OPTIONS in cmd.h, applied by cmd_parse to ctx->scope through
 * cmd_scope_option; the meaning is scope.c's).
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/scope.h"

int cmd_scope_option(struct scope *s, int id, const char *arg)
{
	switch (id) {
	case OPT_SCOPE_NAMESPACE: scope_add(&s->namespaces, &s->n_namespaces, arg); return 0;
	case OPT_SCOPE_ALL_NAMESPACES: s->all_namespaces = 1; return 0;
	case OPT_SCOPE_ACCOUNT: scope_add(&s->accounts, &s->n_accounts, arg); return 0;
	case OPT_SCOPE_VOLUME: scope_add(&s->volumes, &s->n_volumes, arg); return 0;
	case OPT_SCOPE_REGION: scope_add(&s->regions, &s->n_regions, arg); return 0;
	case OPT_SCOPE_SELECTOR: {
		if (s->selector_text) {
			log_error("-l/--selector: give one selector (join requirements with commas)");
			return EXIT_USAGE;
		}
		struct buf err = BUF_INIT;
		int rc = scope_set_selector(s, arg, &err);
		if (rc)
			log_error("%s", err.s);
		buf_release(&err);
		return rc ? EXIT_USAGE : 0;
	}
	}
	return EXIT_USAGE;
}

void cmd_scope_notices(const struct scope *s, const struct scope_stats *st, const char *what)
{
	for (size_t i = 0; i < st->n_unknown_namespaces; i++)
		log_notice("namespace '%s': none of the %s read has a PVC in it", st->unknown_namespaces[i], what);
	if (st->kept || !st->before || !scope_active(s))
		return;
	struct buf d = BUF_INIT;
	scope_describe(s, &d);
	log_notice("no %s match %s (of %zu read)", what, d.s, st->before);
	buf_release(&d);
}
