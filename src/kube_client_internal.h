/*
 * kube_client_internal.h - shared by the Kubernetes client's two files: kube_client.c (the
 * transport: auth, TLS, requests, lists) and kube_exec.c (exec credential plugins and the EKS
 * token). Not a public header: nothing outside kube_client.c and kube_exec.c includes it.
 */
#ifndef EBSMIGRATE_KUBE_CLIENT_INTERNAL_H
#define EBSMIGRATE_KUBE_CLIENT_INTERNAL_H

#include "ebsmigrate/buf.h"
#include "ebsmigrate/kube_client.h"

/* A native EKS token for c's target (c->eks, parsed by kube_eks_args_parse) into out, signed
 * with the AWS credentials chain (c->aws and c->aws_http are made on first use; c->eks_tokens
 * counts). Returns 0; 1 when the chain has no usable credentials (why says so: the caller runs
 * the plugin instead); or a negative EM_E* code with the message in err. */
int kube_eks_native_token(struct kube_client *c, struct kube_credential *out, struct buf *why, struct buf *err);

#endif
