#!/bin/sh
# Cluster prod, rollback of batch 1: back to the previous configuration.
# Run only after the batch's modifications have completed (a rollback is one more
# modification: same EBS rules). Claims that named a class before go back to it; the others
# go back to gp2 with EC2 (needs AWS credentials): their claims keep naming the gp3
# class, which then no longer describes the volume.
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
ctx=prod
[ -z "${KUBE_CONTEXT:-}" ] || ctx=$KUBE_CONTEXT

# vol-0a1b2c3d4e5f60003 (prod analytics/warehouse): 2000 GiB gp2 -> gp3 6000 IOPS, 250 MiB/s; saves $22.80/month
# the claim named no VolumeAttributesClass before: back to gp2 with EC2
if still_gp3 ap-northeast-2 vol-0a1b2c3d4e5f60003 2000 6000 250; then
	aws ec2 modify-volume --region ap-northeast-2 --volume-id vol-0a1b2c3d4e5f60003 --volume-type gp2
fi

# vol-0a1b2c3d4e5f60002 (prod search/data-search-0): 1000 GiB gp2 -> gp3 3000 IOPS, 250 MiB/s; saves $17.10/month
# the claim named no VolumeAttributesClass before: back to gp2 with EC2
if still_gp3 ap-northeast-2 vol-0a1b2c3d4e5f60002 1000 3000 250; then
	aws ec2 modify-volume --region ap-northeast-2 --volume-id vol-0a1b2c3d4e5f60002 --volume-type gp2
fi

# vol-0a1b2c3d4e5f60005 (prod search/index-cache): 500 GiB gp2 -> gp3 3000 IOPS, 250 MiB/s; saves $5.70/month
# the claim named no VolumeAttributesClass before: back to gp2 with EC2
if still_gp3 ap-northeast-2 vol-0a1b2c3d4e5f60005 500 3000 250; then
	aws ec2 modify-volume --region ap-northeast-2 --volume-id vol-0a1b2c3d4e5f60005 --volume-type gp2
fi

# vol-0a1b2c3d4e5f60004 (prod payments/uploads): 200 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $4.56/month
# the claim named no VolumeAttributesClass before: back to gp2 with EC2
if still_gp3 ap-northeast-2 vol-0a1b2c3d4e5f60004 200 3000 125; then
	aws ec2 modify-volume --region ap-northeast-2 --volume-id vol-0a1b2c3d4e5f60004 --volume-type gp2
fi

# vol-0a1b2c3d4e5f60001 (prod payments/data-postgres-0): 100 GiB gp2 -> gp3 3000 IOPS, 125 MiB/s; saves $2.28/month
# the claim named no VolumeAttributesClass before: back to gp2 with EC2
if still_gp3 ap-northeast-2 vol-0a1b2c3d4e5f60001 100 3000 125; then
	aws ec2 modify-volume --region ap-northeast-2 --volume-id vol-0a1b2c3d4e5f60001 --volume-type gp2
fi
