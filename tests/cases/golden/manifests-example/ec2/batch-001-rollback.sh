#!/bin/sh
# EC2 route, rollback of batch 1: back to gp2.
# Run only after the batch's modifications have completed (a rollback is one more
# modification: same EBS rules). gp2 takes no IOPS or throughput.
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
# still_gp3 REGION VOLUME GIB IOPS MIBPS: false (the volume is skipped) unless it is the gp3
# volume this batch made and its modification is no longer in flight.
still_gp3() {
	now=$(aws ec2 describe-volumes --region "$1" --volume-ids "$2" --query \
		'join(`:`, [Volumes[0].VolumeType, to_string(Volumes[0].Size), to_string(Volumes[0].Iops), to_string(Volumes[0].Throughput)])' \
		--output text) || now=unreadable
	if [ "$now" != "gp3:$3:$4:$5" ]; then
		echo "skipped $2: it is $now (type:GiB:IOPS:MiB/s), not gp3:$3:$4:$5" >&2
		return 1
	fi
	idle "$1" "$2"
}

# vol-0a1b2c3d4e5f60009 (staging cache/data-redis-0): 100 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $2.00/month
if still_gp3 us-east-1 vol-0a1b2c3d4e5f60009 100 3000 125; then
	aws ec2 modify-volume --region us-east-1 --volume-id vol-0a1b2c3d4e5f60009 --volume-type gp2
fi

# vol-0a1b2c3d4e5f60006: 50 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $1.14/month
if still_gp3 ap-northeast-2 vol-0a1b2c3d4e5f60006 50 3000 125; then
	aws ec2 modify-volume --region ap-northeast-2 --volume-id vol-0a1b2c3d4e5f60006 --volume-type gp2
fi

# vol-0a1b2c3d4e5f60015: 4 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $0.08/month
if still_gp3 us-east-1 vol-0a1b2c3d4e5f60015 4 3000 125; then
	aws ec2 modify-volume --region us-east-1 --volume-id vol-0a1b2c3d4e5f60015 --volume-type gp2
fi
