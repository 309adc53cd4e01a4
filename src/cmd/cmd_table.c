/*
 * cmd_table.c - the command table: every command's name, entry point, needs, summary and help,
 * in the order `ebsmigrate help` lists them.
 *
 * Entry point: commands[]. Only data: main.c registers it (cmd_register, cmd_registry.c) before
 * anything else runs, and dispatch, help, completions and man pages (cmd_help.c, cmd_doc.c,
 * cmd_completion.c) read it through the registry, so a command added here is everywhere at once
 * and no command file calls back up into the table that names it.
 */
#include "cmd.h"
#include "cmd_doc.h"

const struct cmd commands[] = {
	{"plan", cmd_plan, NEEDS_PRICES, "recommend gp3 settings, cost and savings for every volume", &plan_help},
	{"inventory", cmd_inventory, NEEDS_DB, "read the live fleet from the AWS and Kubernetes APIs", &inventory_help},
	{"apply", cmd_apply, NEEDS_DB, "apply the recorded plan in safe batches", &apply_help},
	{"status", cmd_status, NEEDS_DB, "show the migration's progress from the ledger and AWS", &status_help},
	{"report", cmd_report, NEEDS_PRICES | NEEDS_DB, "finance report: savings by group, realized and remaining", &report_help},
	{"pricing", cmd_pricing, NEEDS_DB, "refresh, show, compare and export the price book", &pricing_help},
	{"bench", cmd_bench, NEEDS_DB, "prove it with fio: before/after benchmarks, the gp2 credit cliff", &bench_help},
	{"metrics", cmd_metrics, NEEDS_DB, "metrics for dashboards: OpenMetrics text, a textfile or a scrape endpoint", &metrics_help},
	{"check", cmd_check, NEEDS_NOTHING, "the gp2 gate for CI: fail when manifests or a cluster would create gp2", &check_help},
	{"iam-policy", cmd_iam_policy, NEEDS_NOTHING, "print the least-privilege AWS IAM policy", &iam_policy_help},
	{"rbac", cmd_rbac, NEEDS_NOTHING, "print the least-privilege Kubernetes ClusterRole, ServiceAccount and binding", &rbac_help},
	{"help", cmd_help, NEEDS_NOTHING, "show help for ebsmigrate or one command", &help_help},
	{"version", cmd_version, NEEDS_NOTHING, "print the version, commit, build date and library versions", &version_help},
	{"db", cmd_db, NEEDS_DB, "database upkeep: prune old plans and inventory runs", &db_help},
	{"completion", cmd_completion, NEEDS_NOTHING, "print a shell completion script (bash, zsh or fish)", &completion_help},
	{NULL, NULL, 0, NULL, NULL},
};
