/*
 * aws_endpoint.h - where each AWS service lives, and the name and region to sign it with.
 *
 * Resolution order (the SDKs' convention): AWS_ENDPOINT_URL_<SERVICE> (EC2, CLOUDWATCH, PRICING,
 * STS, CLOUDTRAIL, ORGANIZATIONS, S3; AWS_ENDPOINT_URL_MONITORING is accepted as an alias of CLOUDWATCH), then
 * AWS_ENDPOINT_URL, else the standard host of the region's partition:
 *   aws         *.amazonaws.com        (every region not below)
 *   aws-cn      *.amazonaws.com.cn     (cn-*)
 *   aws-us-gov  *.amazonaws.com        (us-gov-*)
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true disables the environment overrides.
 * Special cases: STS without a region uses the global https://sts.amazonaws.com (signed for
 * us-east-1); Pricing has no per-region endpoint: the aws and aws-us-gov partitions use
 * us-east-1 (https://api.pricing.us-east-1.amazonaws.com; GovCloud prices are published in
 * the commercial price list), aws-cn uses cn-northwest-1. When an override's host has the
 * form SERVICE.REGION.amazonaws.com[.cn], that region is signed for (pointing the Pricing
 * override at ap-south-1 or eu-central-1 just works).
 *
 * Ownership: struct aws_endpoint owns url and signing_region; aws_endpoint_release frees them.
 * signing_name and partition are static strings.
 */
#ifndef EBSMIGRATE_AWS_ENDPOINT_H
#define EBSMIGRATE_AWS_ENDPOINT_H

#include "ebsmigrate/buf.h"

enum aws_service {
	AWS_SERVICE_EC2,
	AWS_SERVICE_CLOUDWATCH,
	AWS_SERVICE_PRICING,
	AWS_SERVICE_STS,
	AWS_SERVICE_CLOUDTRAIL,
	AWS_SERVICE_ORGANIZATIONS, /* one endpoint per partition (us-east-1 in aws), whatever the region */
	AWS_SERVICE_S3, /* https://s3.REGION.amazonaws.com; addressing (bucket in host or path): report_publish.c */
};

struct aws_endpoint {
	char *url;                /* scheme://host[:port][/base], no trailing slash */
	char *signing_region;
	const char *signing_name; /* "ec2", "monitoring", "pricing", "sts" */
	const char *partition;    /* "aws", "aws-cn", "aws-us-gov" */
	int from_env;             /* 1 when an AWS_ENDPOINT_URL* variable chose it */
};

/* region may be NULL only for STS (global endpoint), Pricing and Organizations (aws partition).
 * EM_EINPUT for a malformed region or override URL. */
int aws_endpoint_resolve(struct aws_endpoint *out, enum aws_service svc, const char *region, struct buf *err);
void aws_endpoint_release(struct aws_endpoint *e);

const char *aws_service_signing_name(enum aws_service svc);
/* "aws", "aws-cn" or "aws-us-gov" for a region name. */
const char *aws_partition_of(const char *region);
/* 1 when region looks like an AWS region name (lower-case letters, digits, dashes). */
int aws_region_valid(const char *region);

#endif
