#!/bin/sh
# Cluster prod, blocked batch 2 of 2: 2 claim(s), route vac.
# From the plan of 2026-12-01T12:00:00Z. Needs 00-volumeattributesclasses.yaml applied first.
# Each patch makes the EBS CSI driver modify the volume once. Run once; before the
# next batch wait until every claim shows its class in
# status.currentVolumeAttributesClassName. Running it again is harmless: an
# unchanged class starts no modification.
# Blocked volumes: each is skipped until EBS allows its next modification.
# Volumes with a modification in flight are checked with the AWS CLI (needs AWS
# credentials) and skipped until it has completed.
# Rollback: batch-002-blocked-rollback.sh.
# Context: KUBE_CONTEXT overrides the one below.
set -eu
# not_before EPOCH TIME VOLUME: false (the volume is skipped) before EBS allows its next
# modification.
not_before() {
	if [ "$(date -u +%s)" -lt "$1" ]; then
		echo "skipped $3: EBS allows its next modification at $2" >&2
		return 1
	fi
}
# idle REGION VOLUME: false (the volume is skipped) while a modification is in flight.
idle() {
	state=$(aws ec2 describe-volumes-modifications --region "$1" --volume-ids "$2" \
		--query 'VolumesModifications[0].ModificationState' --output text 2>/dev/null) || state=none
	case $state in modifying | optimizing)
		echo "skipped $2: a modification is $state; run this again once it has completed" >&2
		return 1 ;;
	esac
}
ctx=prod
[ -z "${KUBE_CONTEXT:-}" ] || ctx=$KUBE_CONTEXT

# vol-0a1b2c3d4e5f60011 (prod search/crawler): 300 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $6.84/month
# eligible at 2026-12-01T14:00:00Z (EBS allows at most 4 modifications per volume in 24 h)
if not_before 1796133600 2026-12-01T14:00:00Z vol-0a1b2c3d4e5f60011; then
	kubectl --context "$ctx" --namespace search patch pvc crawler --type=merge --patch '{"spec":{"volumeAttributesClassName":"gp3-3000-125"}}'
fi

# vol-0a1b2c3d4e5f60010 (prod payments/queue): 80 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $1.82/month
# eligible after the modification in flight completes (optimizing since 2026-12-01T10:00:00Z)
if idle ap-northeast-2 vol-0a1b2c3d4e5f60010; then
	kubectl --context "$ctx" --namespace payments patch pvc queue --type=merge --patch '{"spec":{"volumeAttributesClassName":"gp3-3000-125"}}'
fi
