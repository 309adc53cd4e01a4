#!/bin/sh
# Cluster prod, batch 1 of 2: 5 claim(s), route vac.
# From the plan of 2026-12-01T12:00:00Z. Needs 00-volumeattributesclasses.yaml applied first.
# Each patch makes the EBS CSI driver modify the volume once. Run once; before the
# next batch wait until every claim shows its class in
# status.currentVolumeAttributesClassName. Running it again is harmless: an
# unchanged class starts no modification.
# Rollback: batch-001-rollback.sh.
# Context: KUBE_CONTEXT overrides the one below.
set -eu
ctx=prod
[ -z "${KUBE_CONTEXT:-}" ] || ctx=$KUBE_CONTEXT

# vol-0a1b2c3d4e5f60003 (prod analytics/warehouse): 2000 GiB gp2 -> gp3 6000 IOPS, 250 MiB/s; saves $22.80/month
kubectl --context "$ctx" --namespace analytics patch pvc warehouse --type=merge --patch '{"spec":{"volumeAttributesClassName":"gp3-6000-250"}}'

# vol-0a1b2c3d4e5f60002 (prod search/data-search-0): 1000 GiB gp2 -> gp3 3000 IOPS, 250 MiB/s; saves $17.10/month
kubectl --context "$ctx" --namespace search patch pvc data-search-0 --type=merge --patch '{"spec":{"volumeAttributesClassName":"gp3-3000-250"}}'

# vol-0a1b2c3d4e5f60005 (prod search/index-cache): 500 GiB gp2 -> gp3 3000 IOPS, 250 MiB/s; saves $5.70/month
kubectl --context "$ctx" --namespace search patch pvc index-cache --type=merge --patch '{"spec":{"volumeAttributesClassName":"gp3-3000-250"}}'

# vol-0a1b2c3d4e5f60004 (prod payments/uploads): 200 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $4.56/month
kubectl --context "$ctx" --namespace payments patch pvc uploads --type=merge --patch '{"spec":{"volumeAttributesClassName":"gp3-3000-125"}}'

# vol-0a1b2c3d4e5f60001 (prod payments/data-postgres-0): 100 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $2.28/month
kubectl --context "$ctx" --namespace payments patch pvc data-postgres-0 --type=merge --patch '{"spec":{"volumeAttributesClassName":"gp3-3000-125"}}'
