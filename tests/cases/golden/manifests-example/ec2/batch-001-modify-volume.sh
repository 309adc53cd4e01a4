#!/bin/sh
# EC2 route, batch 1 of 1: 3 volume(s).
# From the plan of 2026-12-01T12:00:00Z. Needs AWS credentials of the account that owns the volumes.
# Each volume is checked first (still the planned gp2 volume, nothing in flight) and then
# modified once with IOPS and throughput stated. Run once; before the next batch wait until
# each modification is optimizing or completed (aws ec2 describe-volumes-modifications).
# Rollback: batch-001-rollback.sh.
set -eu
# idle REGION VOLUME: false (the volume is skipped) while a modification is in flight.
idle() {
	state=$(aws ec2 describe-volumes-modifications --region "$1" --volume-ids "$2" \
		--query 'VolumesModifications[0].ModificationState' --output text 2>/dev/null) || state=none
	case $state in modifying | optimizing)
		echo "skipped $2: a modification is $state; run this again once it has completed" >&2
		return 1 ;;
	esac
}
# still_gp2 REGION VOLUME GIB: false (the volume is skipped) unless it is still the planned gp2
# volume of that size with no modification in flight.
still_gp2() {
	now=$(aws ec2 describe-volumes --region "$1" --volume-ids "$2" \
		--query 'join(`:`, [Volumes[0].VolumeType, to_string(Volumes[0].Size)])' --output text) ||
		now=unreadable
	if [ "$now" != "gp2:$3" ]; then
		echo "skipped $2: it is $now (type:GiB), the plan expected gp2:$3; run ebsmigrate plan again" >&2
		return 1
	fi
	idle "$1" "$2"
}

# vol-0a1b2c3d4e5f60009 (staging cache/data-redis-0): 100 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $2.00/month
# EC2 route: in-tree PersistentVolume
if still_gp2 us-east-1 vol-0a1b2c3d4e5f60009 100; then
	aws ec2 modify-volume --region us-east-1 --volume-id vol-0a1b2c3d4e5f60009 --volume-type gp3 --iops 3000 --throughput 125
fi

# vol-0a1b2c3d4e5f60006: 50 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $1.14/month
# EC2 route: not in Kubernetes
if still_gp2 ap-northeast-2 vol-0a1b2c3d4e5f60006 50; then
	aws ec2 modify-volume --region ap-northeast-2 --volume-id vol-0a1b2c3d4e5f60006 --volume-type gp3 --iops 3000 --throughput 125
fi

# vol-0a1b2c3d4e5f60015: 4 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $0.08/month
# EC2 route: not in Kubernetes
if still_gp2 us-east-1 vol-0a1b2c3d4e5f60015 4; then
	aws ec2 modify-volume --region us-east-1 --volume-id vol-0a1b2c3d4e5f60015 --volume-type gp3 --iops 3000 --throughput 125
fi
