/*
 * main.c - the entry point: global options, dispatch through the command table (cmd_table.c).
 *
 * `ebsmigrate [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]`. Global options may also follow the
 * command (every command's parser knows them). Setup (database, prices) is done by each
 * command through cmd_prepare(ctx, needs) once its own options are parsed, because --db and
 * --pricing-dir may come after the command name. SIGXFSZ is ignored from the start, so a file
 * size limit is an ordinary write error (EFBIG), never a silent death.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd_doc.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/ledger.h"
#include "ebsmigrate/log.h"
#include "ebsmigrate/stop.h"

/* "kubectl ebsmigrate" when run as the kubectl plugin (argv[0] kubectl-ebsmigrate), which then
 * behaves exactly as ebsmigrate does; only the usage line names how it was called. */
static const char *prog_name = "ebsmigrate";

static void usage(FILE *f)
{
	fprintf(f, "usage: %s [--db FILE] [--now TIME] [-v|-q] COMMAND [OPTIONS]\n\n"
		   "Move Kubernetes EBS volumes from gp2 to gp3 safely, and prove the money and the speed.\n\n"
		   "Commands:\n", prog_name);
	cmd_print_commands(f);
	fprintf(f, "\nRun 'ebsmigrate help COMMAND' for a command's options. Documentation: docs/README.md\n");
}

int main(int argc, char **argv)
{
	/* Past a file size limit (ulimit -f) SIGXFSZ would kill the process silently, mid-write: ignored,
	 * the write fails with EFBIG instead and the writer's error path reports it and cleans up. */
	signal(SIGXFSZ, SIG_IGN);
	cmd_register(commands);
	struct cmd_ctx ctx;
	memset(&ctx, 0, sizeof ctx);
	ctx.argv0 = argv[0];
	const char *base = argv[0] ? strrchr(argv[0], '/') : NULL;
	base = base ? base + 1 : argv[0] ? argv[0] : "";
	if (strncmp(base, "kubectl-", 8) == 0)
		prog_name = "kubectl ebsmigrate";
	const char *nc = getenv("NO_COLOR");
	ctx.color_stdout = isatty(1) && !(nc && *nc);
	ctx.now = time(NULL);
	if (getenv("EBSMIGRATE_DEBUG"))
		log_set_level(LOG_DEBUG);

	int i = 1;
	/* Global options before the command. */
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		/* "--db=FILE" as getopt_long takes it after the command; "--quiet=1" is refused below */
		const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
		size_t name_len = eq ? (size_t)(eq - a) : strlen(a);
		char name[32] = "";
		if (name_len < sizeof name)
			memcpy(name, a, name_len), name[name_len] = '\0';
		const char *value = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;
		int takes_value = strcmp(name, "--db") == 0 || strcmp(name, "--now") == 0 ||
				  strcmp(name, "--pricing-dir") == 0;
		int is_flag = strcmp(name, "--version") == 0 || strcmp(name, "--help") == 0 ||
			      strcmp(name, "--verbose") == 0 || strcmp(name, "--quiet") == 0 ||
			      strcmp(name, "--no-color") == 0;
		if (eq && is_flag) {
			log_error("option '%s' takes no value", name);
			return EXIT_USAGE;
		}
		if (strcmp(a, "--version") == 0) {
			printf("ebsmigrate %s\n", EM_VERSION);
			return EXIT_OK;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return EXIT_OK;
		} else if (takes_value && value) {
			if (!eq)
				i++;
			if (name[2] == 'd')
				ctx.db_path = value;
			else if (name[2] == 'p')
				ctx.pricing_dir = value;
			else {
				time_t t;
				if (em_parse_time(value, &t)) {
					log_error("--now: '%s' is not an RFC 3339 time", value);
					return EXIT_USAGE;
				}
				ctx.now_arg = value;
				ctx.now = t;
				em_set_now(t);
			}
		} else if ((a[1] == 'v' && strspn(a + 1, "v") == strlen(a + 1)) || strcmp(a, "--verbose") == 0) {
			ctx.verbose += a[1] == 'v' ? (int)strlen(a + 1) : 1; /* -v, -vv, -v -v */
			log_set_level(ctx.verbose > 1 ? LOG_DEBUG : LOG_VERBOSE);
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			ctx.quiet = 1;
			log_set_level(LOG_QUIET);
		} else if (strcmp(a, "--no-color") == 0) {
			ctx.no_color = 1;
			ctx.color_stdout = 0;
		} else {
			static const char *const globals[] = {"db", "now", "pricing-dir", "verbose", "quiet",
							      "no-color", "help", "version"};
			const char *hint = a[1] == '-' ? cmd_did_you_mean(a + 2, globals, sizeof globals / sizeof *globals)
						       : NULL;
			if (hint)
				log_error("unknown option '%s'; did you mean '--%s'?", a, hint);
			else
				log_error("unknown option '%s'", a);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const struct cmd *cmd = cmd_find(argv[i]);
	if (!cmd) {
		const char *hint = cmd_closest_command(argv[i]);
		if (hint)
			log_error("unknown command '%s'; did you mean '%s'? (run 'ebsmigrate help' for the list)", argv[i],
				  hint);
		else
			log_error("unknown command '%s'; run 'ebsmigrate help' for the list", argv[i]);
		return EXIT_USAGE;
	}
	stop_install(); /* SIGTERM/SIGINT: wind down, then 128 + signal (stop.h) */
	int rc = cmd->fn(&ctx, argc - i, argv + i);
	/* What a command printed straight to stdout may have failed unseen (EFBIG past ulimit -f,
	 * ENOSPC): checked once at the end, as coreutils' close_stdout does, so it is never exit 0
	 * (a command that failed has said why already). */
	int out_errno = fflush(stdout) != 0 ? errno : ferror(stdout) ? -1 : 0;
	if (out_errno && rc == EXIT_OK) {
		log_error("cannot write to standard output%s%s", out_errno > 0 ? ": " : "",
			  out_errno > 0 ? strerror(out_errno) : "");
		rc = EXIT_RUNTIME;
	}
	if (ctx.have_book)
		pricebook_release(&ctx.book);
	if (ctx.db)
		ledger_close(ctx.db);
	free(ctx.db_path_owned);
	int sig = stop_requested();
	if (sig) {
		log_error("stopped by %s before finishing: nothing half-written (exit %d)", stop_signal_name(sig), 128 + sig);
		return 128 + sig;
	}
	return rc;
}
