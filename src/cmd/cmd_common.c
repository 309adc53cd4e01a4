/*
 * cmd_common.c - what every command shares beyond its options (cmd_options.c), its help page
 * (cmd_help_page.c) and its outputs (cmd_outputs.c): setup by `needs` (database, prices),
 * visible result lines, repeated warnings grouped, a webhook notification's outcome.
 *
 * Entry points: cmd_prepare, cmd_print_visible, cmd_print_warnings, cmd_notify_send.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/notify.h"
#include "ebsmigrate/strmap.h"

int cmd_prepare(struct cmd_ctx *ctx, unsigned needs)
{
	struct buf err = BUF_INIT;
	int rc = 0;
	if ((needs & NEEDS_PRICES) && ctx->pricing_dir) {
		pricebook_init(&ctx->book);
		rc = pricebook_load_dir(&ctx->book, ctx->pricing_dir, &err);
		if (!rc && ctx->book.n == 0)
			rc = em_err(&err, EM_EINPUT, "--pricing-dir '%s': no EBS prices found", ctx->pricing_dir);
		if (rc) {
			pricebook_release(&ctx->book);
			goto fail;
		}
		ctx->have_book = 1;
		needs &= ~(unsigned)NEEDS_PRICES;
	}
	if (needs & (NEEDS_DB | NEEDS_PRICES)) {
		struct buf path = BUF_INIT;
		if (!ctx->db_path) {
			ledger_default_path(&path);
			ctx->db_path = ctx->db_path_owned = buf_detach(&path); /* freed by main */
		}
		rc = ledger_open_ex(&ctx->db, ctx->db_path, needs & NEEDS_APPLY_LOCK ? LEDGER_OPEN_APPLY_LOCK : 0, &err);
		if (rc)
			goto fail;
	}
	if (needs & NEEDS_PRICES) {
		rc = ledger_pricebook_for_planning(ctx->db, &ctx->book, &err);
		if (rc)
			goto fail;
		ctx->have_book = 1;
	}
	buf_release(&err);
	return 0;
fail:
	log_error("%s", err.s);
	buf_release(&err);
	return em_exit_code_for(rc);
}

void cmd_print_visible(FILE *f, const char *fmt, ...)
{
	struct buf line = BUF_INIT, vis = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&line, fmt, ap);
	va_end(ap);
	buf_add_visible(&vis, line.s);
	buf_addc(&vis, '\n');
	if (f == stderr)
		log_before_write(); /* a progress line is cleared first */
	fwrite(vis.s, 1, vis.len, f);
	fflush(f);
	buf_release(&line);
	buf_release(&vis);
}

/* The warning with its quoted values blanked: the key that groups repeated warnings. */
static char *warning_shape(const char *w)
{
	struct buf b = BUF_INIT;
	int quoted = 0;
	for (const char *p = w; *p; p++) {
		if (*p == '\'') {
			quoted = !quoted;
			buf_addc(&b, '\'');
		} else if (!quoted) {
			buf_addc(&b, *p);
		}
	}
	buf_addc(&b, 0); /* a buf may be empty: always return a string */
	return buf_detach(&b);
}

#define WARNING_GROUP_SHOWN 3

void cmd_print_warnings(const struct cmd_ctx *ctx, char *const *warnings, size_t n, const char *where_all)
{
	if (ctx->verbose || n <= WARNING_GROUP_SHOWN) {
		for (size_t i = 0; i < n; i++)
			log_warning("%s", warnings[i]);
		return;
	}
	char **shape = xcalloc(n, sizeof *shape);
	size_t *count = xcalloc(n, sizeof *count); /* at a group's first warning: its size */
	struct strmap first = STRMAP_INIT;       /* shape -> index of its first warning */
	for (size_t i = 0; i < n; i++) {
		shape[i] = warning_shape(warnings[i]);
		size_t at;
		if (!strmap_get(&first, shape[i], &at))
			strmap_put(&first, shape[i], at = i);
		count[at]++;
	}
	for (size_t i = 0; i < n; i++) {
		size_t at;
		if (!strmap_get(&first, shape[i], &at) || at != i)
			continue;
		if (count[i] > WARNING_GROUP_SHOWN)
			log_warning("%s (and %zu more like it; all of them: %s, or -v)", warnings[i], count[i] - 1,
				    where_all);
		else
			for (size_t j = i; j < n; j++)
				if (strcmp(shape[j], shape[i]) == 0)
					log_warning("%s", warnings[j]);
	}
	strmap_release(&first);
	for (size_t i = 0; i < n; i++)
		free(shape[i]);
	free(shape);
	free(count);
}

void cmd_notify_send(const struct notify_target *t, const struct buf *payload)
{
	struct buf err = BUF_INIT;
	if (notify_post(t, payload, &err))
		log_warning("notification not sent: %s", err.s);
	else
		log_info("notification sent to the webhook at host '%s'", t->host);
	buf_release(&err);
}
