/*
 * aws_endpoint.c - endpoint resolution per service and region (rules in aws_endpoint.h).
 *
 * Entry points: aws_endpoint_resolve, aws_endpoint_release, aws_service_signing_name,
 * aws_partition_of, aws_region_valid.
 *
 * Invariants: a resolved url never ends in '/', so callers append "/" or a path; a region is
 * validated before it is put into a host name; overrides must be http:// or https:// URLs.
 * The environment is read on every call (cheap, and tests can change it).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ebsmigrate/aws_endpoint.h"
#include "ebsmigrate/common.h"

struct service_info {
	const char *signing_name;
	const char *host_prefix; /* host = prefix.REGION.suffix */
	const char *env;         /* AWS_ENDPOINT_URL_<env> */
	const char *env_alias;
	const char *label;       /* for messages */
};

static const struct service_info services[] = {
	[AWS_SERVICE_EC2] = {"ec2", "ec2", "EC2", NULL, "ec2"},
	[AWS_SERVICE_CLOUDWATCH] = {"monitoring", "monitoring", "CLOUDWATCH", "MONITORING", "cloudwatch"},
	[AWS_SERVICE_PRICING] = {"pricing", "api.pricing", "PRICING", NULL, "pricing"},
	[AWS_SERVICE_STS] = {"sts", "sts", "STS", NULL, "sts"},
	[AWS_SERVICE_CLOUDTRAIL] = {"cloudtrail", "cloudtrail", "CLOUDTRAIL", NULL, "cloudtrail"},
	[AWS_SERVICE_ORGANIZATIONS] = {"organizations", "organizations", "ORGANIZATIONS", NULL, "organizations"},
	[AWS_SERVICE_S3] = {"s3", "s3", "S3", NULL, "s3"},
};

const char *aws_service_signing_name(enum aws_service svc)
{
	return services[svc].signing_name;
}

int aws_region_valid(const char *region)
{
	if (!region || !*region || strlen(region) > 64 || region[0] == '-')
		return 0;
	for (const char *p = region; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return 0;
	return 1;
}

const char *aws_partition_of(const char *region)
{
	if (region && strncmp(region, "cn-", 3) == 0)
		return "aws-cn";
	if (region && strncmp(region, "us-gov-", 7) == 0)
		return "aws-us-gov";
	return "aws";
}

static const char *dns_suffix(const char *partition)
{
	return strcmp(partition, "aws-cn") == 0 ? "amazonaws.com.cn" : "amazonaws.com";
}

void aws_endpoint_release(struct aws_endpoint *e)
{
	free(e->url);
	free(e->signing_region);
	memset(e, 0, sizeof *e);
}

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

/* The region inside an override host "service.REGION.amazonaws.com[.cn]", if any. */
static char *region_from_host(const char *url)
{
	const char *h = strstr(url, "://");
	if (!h)
		return NULL;
	h += 3;
	size_t n = strcspn(h, ":/?#");
	const char *suffixes[] = {".amazonaws.com.cn", ".amazonaws.com"};
	for (size_t s = 0; s < 2; s++) {
		size_t sl = strlen(suffixes[s]);
		if (n <= sl || strncasecmp(h + n - sl, suffixes[s], sl) != 0)
			continue;
		size_t end = n - sl, start = end;
		while (start > 0 && h[start - 1] != '.')
			start--;
		if (start == 0 || end == start)
			return NULL;
		char *r = xstrndup(h + start, end - start);
		/* a region has a dash and ends in a digit: "us-east-1", not "api" or "pricing" */
		size_t rl = strlen(r);
		if (aws_region_valid(r) && strchr(r, '-') && r[rl - 1] >= '0' && r[rl - 1] <= '9')
			return r;
		free(r);
		return NULL;
	}
	return NULL;
}

/* The override for a service, if any: *url is heap-allocated, var names its variable. */
static int override_url(const struct service_info *si, char **url, struct buf *var, struct buf *err)
{
	*url = NULL;
	const char *ignore = getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
	if (ignore && strcasecmp(ignore, "true") == 0)
		return 0;
	const char *names[] = {si->env, si->env_alias, ""};
	const char *v = NULL;
	for (size_t i = 0; i < 3 && !v; i++) {
		if (!names[i])
			continue;
		buf_reset(var);
		buf_addf(var, "AWS_ENDPOINT_URL%s%s", *names[i] ? "_" : "", names[i]);
		v = env_nonempty(var->s);
	}
	if (!v)
		return 0;
	if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
		return em_err(err, EM_EINPUT, "%s '%s' is not an http:// or https:// url", var->s, v);
	const char *host = strstr(v, "://") + 3;
	if (!*host || *host == '/')
		return em_err(err, EM_EINPUT, "%s '%s' has no host", var->s, v);
	struct buf b = BUF_INIT;
	buf_adds(&b, v);
	buf_trim_trailing(&b, '/');
	*url = buf_detach(&b);
	return 0;
}

int aws_endpoint_resolve(struct aws_endpoint *out, enum aws_service svc, const char *region, struct buf *err)
{
	memset(out, 0, sizeof *out);
	if ((unsigned)svc > AWS_SERVICE_S3)
		return em_err(err, EM_EINPUT, "unknown aws service %d", (int)svc);
	const struct service_info *si = &services[svc];
	if (region && !*region)
		region = NULL;
	if (region && !aws_region_valid(region))
		return em_err(err, EM_EINPUT, "'%s' is not an aws region name", region);
	if (!region && svc != AWS_SERVICE_STS && svc != AWS_SERVICE_PRICING && svc != AWS_SERVICE_ORGANIZATIONS)
		return em_err(err, EM_EINPUT, "no region for the %s endpoint: pass --region or set AWS_REGION", si->label);

	const char *partition = aws_partition_of(region);
	const char *signing_region;
	struct buf url = BUF_INIT;
	switch (svc) {
	case AWS_SERVICE_PRICING:
		signing_region = strcmp(partition, "aws-cn") == 0 ? "cn-northwest-1" : "us-east-1";
		if (strcmp(partition, "aws-us-gov") == 0)
			partition = "aws";
		buf_addf(&url, "https://%s.%s.%s", si->host_prefix, signing_region, dns_suffix(partition));
		break;
	case AWS_SERVICE_ORGANIZATIONS:
		/* one endpoint per partition: us-east-1 (aws), cn-northwest-1, us-gov-west-1 */
		signing_region = strcmp(partition, "aws-cn") == 0       ? "cn-northwest-1"
				 : strcmp(partition, "aws-us-gov") == 0 ? "us-gov-west-1"
									: "us-east-1";
		buf_addf(&url, "https://%s.%s.%s", si->host_prefix, signing_region, dns_suffix(partition));
		break;
	case AWS_SERVICE_STS:
		if (!region) {
			signing_region = "us-east-1";
			buf_adds(&url, "https://sts.amazonaws.com");
			break;
		}
		/* fall through */
	default:
		signing_region = region;
		buf_addf(&url, "https://%s.%s.%s", si->host_prefix, region, dns_suffix(partition));
		break;
	}

	char *ov = NULL;
	struct buf var = BUF_INIT;
	int rc = override_url(si, &ov, &var, err);
	buf_release(&var);
	if (rc) {
		buf_release(&url);
		return rc;
	}
	out->signing_name = si->signing_name;
	out->partition = partition;
	if (ov) {
		buf_release(&url);
		out->url = ov;
		out->from_env = 1;
		char *host_region = region_from_host(ov);
		out->signing_region = host_region ? host_region : xstrdup(signing_region);
	} else {
		out->url = buf_detach(&url);
		out->signing_region = xstrdup(signing_region);
	}
	return 0;
}
