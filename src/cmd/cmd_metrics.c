/*
 * cmd_metrics.c - `ebsmigrate metrics`: options, help and glue. Collects the figures from the
 * database (metrics.c) and writes them once (stdout, or --output-file FILE atomically for
 * node-exporter's textfile collector), or serves them on --listen ADDR:PORT (httpd.c), collecting
 * anew for every GET /metrics, until SIGTERM or SIGINT (then exit 0). Each scrape first reopens
 * the database when its file was replaced (ledger_reopen_if_replaced), so a restored or swapped
 * file is what is served, never the one open since start-up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/httpd.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/metrics.h"
#include "ebsmigrate/scope.h"
#include "ebsmigrate/stop.h"
#include "ebsmigrate/strlist.h"

enum { OPT_LISTEN = 1, OPT_ALLOW_HOST, OPT_MCONTEXT };

static const struct cmd_format metrics_formats[] = {
	{"openmetrics", METRICS_OPENMETRICS, 0}, {"prometheus", METRICS_PROMETHEUS, 0}, {NULL, 0, 0},
};

static const struct cmd_option metrics_options[] = {
	CMD_FORMAT_OPTIONS("openmetrics (default: OpenMetrics 1.0 text) or prometheus (the text format 0.0.4 that "
			   "node-exporter's textfile collector reads)",
			   OPT_RESULT_OUTPUT, OPT_RESULT_FORMAT),
	CMD_OUTPUT_FILE_OPTION(OPT_RESULT_FILE),
	{"listen", 0, ARG_REQUIRED, "ADDR:PORT",
	 "serve GET /metrics over HTTP on this address (127.0.0.1:9101 beside Prometheus; [::1]:9101; 0.0.0.0:9101 "
	 "only where the network is trusted, e.g. a pod) until SIGTERM or SIGINT; each scrape reads the database "
	 "anew; the format follows the scraper's Accept header",
	 OPT_LISTEN},
	{"allow-host", 0, ARG_REQUIRED, "NAME",
	 "with --listen: also answer requests whose Host header names NAME (a Service or DNS name the scraper "
	 "uses; repeatable). Always answered: the address connected to, localhost and the --listen host",
	 OPT_ALLOW_HOST},
	{"context", 0, ARG_REQUIRED, "NAME", "only volumes of this cluster (kubeconfig context; repeatable)",
	 OPT_MCONTEXT},
	CMD_SCOPE_NAMESPACE_OPTIONS,
	{"selector", 'l', ARG_REQUIRED, "SELECTOR", "refused: recorded plans keep no PVC labels (use -n, --context, ...)",
	 OPT_SCOPE_SELECTOR},
	CMD_SCOPE_ID_OPTIONS,
	CMD_SCOPE_REGION_OPTION,
	CMD_OPTIONS_END,
};

const struct cmd_help metrics_help = {
	.usage = CMD_USAGE(
		"[-o openmetrics|prometheus] [--output-file FILE]",
		"--listen ADDR:PORT [--allow-host NAME...]",
		"... " CMD_SCOPE_NAMESPACE_USAGE " [--context NAME...] [--region REGION...] " CMD_SCOPE_ID_USAGE),
	.description =
		"Prints the migration's figures as metrics for dashboards and alerts (docs/metrics.md): volumes, "
		"gp2 volumes and their capacity, the monthly cost before, now and at the target, and the planned "
		"savings realized, in flight, remaining and blocked, by cluster, namespace, account and region; "
		"modifications planned, in flight, completed, deferred and failed; the oldest deferral and the "
		"next eligible time; when inventory, plan and apply last ran and how apply ended; the price "
		"book's date and age. Everything is read from the database (--db): the fleet and money as the "
		"latest recorded plan priced it, split by the apply ledger exactly as `report` splits it (the "
		"same figures to the cent), the modifications as `status --no-verify` counts them. Neither AWS "
		"nor Kubernetes is read.\n"
		"\n"
		"Output is OpenMetrics 1.0 text (metric names prefixed ebsmigrate_, units in the names, ending "
		"with # EOF), or with -o prometheus the Prometheus text format 0.0.4. --output-file FILE writes "
		"it atomically (a temporary file renamed into place), as node-exporter's textfile collector needs "
		"(name the file *.prom and use -o prometheus). --listen ADDR:PORT serves GET /metrics instead, "
		"reading the database for every scrape, in the format the scraper's Accept header asks for "
		"(OpenMetrics unless it asks for text/plain only); SIGTERM or SIGINT stops it (exit 0). Port 0 "
		"picks a free port; the address served is said on stderr. Bind 127.0.0.1 unless the scraper is "
		"elsewhere: the figures name accounts, clusters and costs. A request is answered only when its Host "
		"header is the address connected to, localhost, the --listen host or an --allow-host NAME (403 "
		"otherwise, so a web page cannot read it through DNS rebinding); a client keeps at most 4 "
		"connections open and the server 32 (a new one closes the oldest), and each request must arrive "
		"whole within 10 s. A database file replaced while serving (restored, swapped) is reopened at the "
		"next scrape.\n"
		"\n"
		"Scoping (docs/scope.md): -n, --context, --region, --account and --volume keep the volumes (and "
		"ledger rows) of those namespaces, clusters, regions, accounts and volumes; -A every namespace. "
		"-l is refused: recorded plans keep no PVC labels.\n"
		"\n"
		"Examples:\n"
		"  ebsmigrate metrics\n"
		"  ebsmigrate metrics -o prometheus --output-file /var/lib/node-exporter/textfile/ebsmigrate.prom\n"
		"  ebsmigrate metrics --listen 127.0.0.1:9101\n"
		"  ebsmigrate metrics --listen 0.0.0.0:9101 --allow-host ebsmigrate-metrics   # in a pod, behind a Service",
	.options = metrics_options,
	.exit_codes = "Exit 2 for a bad option (an --listen address that does not parse, an --allow-host that "
		      "is not a host name, --allow-host without --listen, -l, --listen with --output-file), or a recorded plan whose stored document is damaged. Exit 1 when the database cannot be read, the file cannot be written or the "
		      "address cannot be bound. With --listen, a scrape whose database read fails is answered 500 "
		      "and logged; the server goes on.",
	.output = CMD_OUTPUT_FORMATS(metrics_formats, -1, -1),
};

struct metrics_args {
	struct cmd_output_options result; /* format: enum metrics_format */
	const char *listen;
	struct strlist allow_hosts; /* borrowed argv values */
	struct scope scope;
};

static int on_option(void *st, int id, const char *arg)
{
	struct metrics_args *a = st;
	if (id == OPT_SCOPE_SELECTOR) {
		log_error("-l/--selector: metrics reads recorded plans, which keep no PVC labels; scope with -n, "
			  "--context, --region, --account or --volume");
		return EXIT_USAGE;
	}
	if (id > OPT_SCOPE_BASE && id < OPT_SCOPE_END)
		return cmd_scope_option(&a->scope, id, arg);
	switch (id) {
	case OPT_LISTEN: a->listen = arg; return 0;
	case OPT_ALLOW_HOST: strlist_append(&a->allow_hosts, arg); return 0;
	case OPT_MCONTEXT: scope_add(&a->scope.contexts, &a->scope.n_contexts, arg); return 0;
	}
	return EXIT_USAGE;
}

/* Collects and writes one exposition into out. EM_* with the message in err. */
static int render(struct cmd_ctx *ctx, const struct scope *scope, enum metrics_format fmt, struct buf *out,
		  struct buf *err)
{
	struct metrics_doc doc;
	int no_plan = 0;
	int rc = metrics_collect(&doc, ctx->db, scope, em_now(), &no_plan, err);
	if (rc)
		return rc;
	metrics_write(out, &doc, fmt);
	metrics_doc_release(&doc);
	return 0;
}

struct server_ctx {
	struct cmd_ctx *ctx;
	const struct scope *scope;
};

static void on_scrape(void *p, const struct httpd_request *rq, struct httpd_reply *rp)
{
	struct server_ctx *sc = p;
	if (strcmp(rq->path, "/metrics") != 0) {
		rp->status = strcmp(rq->path, "/") == 0 ? 200 : 404;
		buf_adds(&rp->body, rp->status == 200 ? "ebsmigrate metrics: GET /metrics\n" : "not found: GET /metrics\n");
		return;
	}
	enum metrics_format fmt = metrics_negotiate(rq->accept);
	struct buf err = BUF_INIT;
	int reopened = 0;
	int rc = ledger_reopen_if_replaced(&sc->ctx->db, &reopened, &err);
	if (reopened)
		log_notice("database '%s' was replaced: reopened", sc->ctx->db_path);
	if (rc || render(sc->ctx, sc->scope, fmt, &rp->body, &err)) {
		log_warning("scrape failed: %s", err.s);
		buf_reset(&rp->body);
		buf_addf(&rp->body, "error: %s\n", err.s);
		rp->status = 500;
	} else {
		rp->content_type = metrics_content_type(fmt);
	}
	buf_release(&err);
}

static int serve(struct cmd_ctx *ctx, const struct metrics_args *a)
{
	struct server_ctx sc = {ctx, &a->scope};
	struct httpd *s = NULL;
	struct buf err = BUF_INIT;
	int rc = httpd_start(&s, a->listen, &a->allow_hosts, on_scrape, &sc, &err);
	if (rc) {
		log_error("%s", err.s);
		buf_release(&err);
		return rc == EM_EINPUT ? EXIT_USAGE : EXIT_RUNTIME;
	}
	log_notice("serving metrics on %s/metrics", httpd_url(s));
	httpd_serve(s, stop_flag()); /* until SIGTERM or SIGINT (stop.c's request) */
	httpd_stop(s);
	stop_acknowledge(); /* serving until told to stop is this command's success: exit 0 */
	log_notice("stopped serving metrics");
	return EXIT_OK;
}

int cmd_metrics(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct metrics_args a = {.allow_hosts = STRLIST_INIT_NODUP};
	int rc;
	if (cmd_start_options_only(ctx, "metrics", argc, argv, on_option, &a, &a.result, "", &rc) ||
	    (rc = cmd_usage_if(a.listen && a.result.file,
			       "--listen and --output-file: give one (serve the metrics, or write them to a file)")) ||
	    (rc = cmd_usage_if(a.allow_hosts.n && !a.listen, "--allow-host: only with --listen")) ||
	    (rc = cmd_prepare(ctx, NEEDS_DB)))
		goto out;
	if (a.listen) {
		rc = serve(ctx, &a);
		goto out;
	}
	struct buf out = BUF_INIT, err = BUF_INIT;
	int mrc = render(ctx, &a.scope, (enum metrics_format)a.result.format, &out, &err);
	if (mrc) {
		log_error("%s", err.s);
		rc = em_exit_code_for(mrc); /* a damaged recorded plan is bad input (2), as for apply */
	} else {
		rc = cmd_write_output(a.result.file, &out);
	}
	buf_release(&out);
	buf_release(&err);
out:
	strlist_release(&a.allow_hosts);
	scope_release(&a.scope);
	return rc;
}
