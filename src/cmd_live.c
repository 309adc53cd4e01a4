/*
 * cmd_live.c - the options every command that reads the live APIs shares (plan, inventory),
 * their parsing into struct inventory_live_options (the progress line is cmd_progress.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebsmigrate/cmd.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory.h"
#include "ebsmigrate/log.h"

const struct cmd_option live_options[] = {
	{"region", 0, ARG_REQUIRED, "REGION",
	 "AWS region to read (repeatable; default: the configured region plus the clusters' PV regions)", OPT_LIVE_REGION},
	{"profile", 0, ARG_REQUIRED, "NAME", "AWS profile from ~/.aws/config and ~/.aws/credentials", OPT_LIVE_PROFILE},
	{"kubeconfig", 0, ARG_REQUIRED, "FILE", "kubeconfig file (default: KUBECONFIG, then ~/.kube/config)",
	 OPT_LIVE_KUBECONFIG},
	{"context", 0, ARG_REQUIRED, "NAME", "kubeconfig context to read (repeatable; default: the current one)",
	 OPT_LIVE_CONTEXT},
	{"all-contexts", 0, ARG_NONE, NULL, "read every context of the kubeconfig", OPT_LIVE_ALL_CONTEXTS},
	{"no-kube", 0, ARG_NONE, NULL, "do not read Kubernetes: AWS only (every volume not-kubernetes)", OPT_LIVE_NO_KUBE},
	{"no-aws", 0, ARG_NONE, NULL, "do not read AWS: list the clusters' EBS PVs only", OPT_LIVE_NO_AWS},
	{"no-metrics", 0, ARG_NONE, NULL, "skip CloudWatch metrics", OPT_LIVE_NO_METRICS},
	{"no-cloudtrail", 0, ARG_NONE, NULL,
	 "do not read CloudTrail's ModifyVolume history: count EC2's latest modification only (flag history-unverified)",
	 OPT_LIVE_NO_CLOUDTRAIL},
	{"no-usage", 0, ARG_NONE, NULL, "skip kubelet volume usage (nodes/NAME/proxy/stats/summary)", OPT_LIVE_NO_USAGE},
	{"lookback", 0, ARG_REQUIRED, "DURATION", "CloudWatch look-back, e.g. 14d, 36h (default 14d)", OPT_LIVE_LOOKBACK},
	{"kube-page-size", 0, ARG_REQUIRED, "N", "Kubernetes list page size (limit=N; default 500)", OPT_LIVE_KUBE_PAGE},
	{NULL, 0, 0, NULL, NULL, 0},
};

static void push(const char *const **arr, size_t *n, const char *v)
{
	const char **a = xrealloc((void *)*arr, (*n + 1) * sizeof *a);
	a[(*n)++] = v;
	*arr = a;
}

int cmd_live_option(struct inventory_live_options *o, int id, const char *arg)
{
	switch (id) {
	case OPT_LIVE_REGION: push(&o->regions, &o->n_regions, arg); return 0;
	case OPT_LIVE_PROFILE: o->profile = arg; return 0;
	case OPT_LIVE_KUBECONFIG: o->kubeconfig = arg; return 0;
	case OPT_LIVE_CONTEXT: push(&o->contexts, &o->n_contexts, arg); return 0;
	case OPT_LIVE_ALL_CONTEXTS: o->all_contexts = 1; return 0;
	case OPT_LIVE_NO_KUBE: o->no_kube = 1; return 0;
	case OPT_LIVE_NO_AWS: o->no_aws = 1; return 0;
	case OPT_LIVE_NO_METRICS: o->no_metrics = 1; return 0;
	case OPT_LIVE_NO_CLOUDTRAIL: o->no_cloudtrail = 1; return 0;
	case OPT_LIVE_NO_USAGE: o->no_usage = 1; return 0;
	case OPT_LIVE_KUBE_PAGE: {
		int64_t v;
		if (em_parse_i64(arg, &v) || v < 1 || v > 5000) {
			log_error("--kube-page-size: '%s' is not a number from 1 to 5000", arg);
			return EXIT_USAGE;
		}
		o->kube_page_size = (int)v;
		return 0;
	}
	case OPT_LIVE_LOOKBACK:
		if (em_parse_duration(arg, &o->lookback_s) || o->lookback_s < 3600 || o->lookback_s > 455 * 86400) {
			log_error("--lookback: '%s' is not a duration between 1h and 455d (e.g. 14d, 36h)", arg);
			return EXIT_USAGE;
		}
		return 0;
	}
	return EXIT_USAGE;
}

void cmd_live_options_release(struct inventory_live_options *o)
{
	free((void *)o->regions);
	free((void *)o->contexts);
}

void cmd_add_source(struct inventory_source **arr, size_t *n, size_t *alloc, const char *arg)
{
	XGROW(*arr, *n, *alloc);
	struct inventory_source *s = &(*arr)[(*n)++];
	const char *eq = strchr(arg, '=');
	if (eq && eq != arg && memchr(arg, '/', (size_t)(eq - arg)) == NULL && access(arg, F_OK) != 0) {
		s->label = xstrndup(arg, (size_t)(eq - arg));
		s->path = eq + 1;
	} else {
		s->label = NULL;
		s->path = arg;
	}
}

void cmd_free_sources(struct inventory_source *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)s[i].label);
	free(s);
}
