#!/usr/bin/python3
"""gen_fleet.py - writes a synthetic fleet as the exports `plan` reads: one
`aws ec2 describe-volumes --output json` file per region and one `kubectl get
pv,pvc,storageclass -A -o json` List per cluster, in the exact shapes those tools print.

Usage: gen_fleet.py --volumes N --clusters K --regions R --out DIR [--seed S]
"""
import argparse
import json
import os
import random

REGIONS = ["us-east-1", "eu-west-1", "ap-northeast-2", "us-west-2", "eu-central-1"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--volumes", type=int, default=100000)
    ap.add_argument("--clusters", type=int, default=5)
    ap.add_argument("--regions", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--volumes-only", action="store_true",
                    help="write only volumes.json, one describe-volumes export of every volume, written "
                         "volume by volume (a million volumes need no more memory than one)")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    regions = REGIONS[:a.regions]
    vols = {r: [] for r in regions}
    kube = {f"cluster-{c}": [] for c in range(a.clusters)}
    sizes = [1, 8, 10, 20, 30, 50, 80, 100, 100, 100, 200, 250, 300, 500, 750, 1000, 1500, 2000, 4000, 16384]
    types = ["gp2"] * 85 + ["gp3"] * 10 + ["io1"] * 3 + ["st1"] * 2
    for c in kube:
        kube[c].append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                        "metadata": {"name": "gp2", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                        "provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp2", "encrypted": "true"},
                        "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": True})
    single = None
    if a.volumes_only:
        single = open(os.path.join(a.out, "volumes.json"), "w")
        single.write('{\n    "Volumes": [')
    for i in range(a.volumes):
        region = regions[i % len(regions)]
        az = region + "abc"[rnd.randrange(3)]
        size = rnd.choice(sizes)
        vtype = rnd.choice(types)
        vid = "vol-%017x" % (0x1000000000000 + i)
        attached = rnd.random() > 0.1
        v = {"Attachments": [{"AttachTime": "2025-05-01T10:00:00.000Z", "Device": "/dev/xvdba",
                              "InstanceId": "i-%017x" % rnd.randrange(1 << 60), "State": "attached",
                              "VolumeId": vid, "DeleteOnTermination": False}] if attached else [],
             "AvailabilityZone": az, "CreateTime": "2025-05-01T10:00:00.000Z", "Encrypted": True,
             "KmsKeyId": "arn:aws:kms:%s:111122223333:key/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0" % region,
             "Size": size, "SnapshotId": "", "State": "in-use" if attached else "available", "VolumeId": vid,
             "Iops": max(100, min(16000, 3 * size)) if vtype == "gp2" else (3000 if vtype == "gp3" else 4000 if vtype == "io1" else None),
             "Tags": [{"Key": "team", "Value": "team-%d" % (i % 17)}], "VolumeType": vtype,
             "MultiAttachEnabled": False}
        if vtype == "gp3":
            v["Throughput"] = 125
        if v["Iops"] is None:
            del v["Iops"]
        if single:
            # the shape json.dump(indent=4) gives the whole document, one element at a time
            single.write(("\n        " if i == 0 else ",\n        ") + json.dumps(v, indent=4).replace("\n", "\n        "))
        else:
            vols[region].append(v)
        if rnd.random() < 0.8 and not single:
            cluster = "cluster-%d" % (i % a.clusters)
            ns = "ns-%d" % (i % 50)
            pvc = "data-app-%d" % i
            pv = "pvc-%08x-0000-4000-8000-%012x" % (i, i)
            kube[cluster].append({"apiVersion": "v1", "kind": "PersistentVolume",
                                  "metadata": {"name": pv, "uid": "u-%d" % i, "resourceVersion": str(1000 + i),
                                               "creationTimestamp": "2025-05-01T10:00:00Z",
                                               "annotations": {"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com"},
                                               "finalizers": ["kubernetes.io/pv-protection", "external-attacher/ebs-csi-aws-com"]},
                                  "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "%dGi" % size},
                                           "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": pvc, "namespace": ns,
                                                        "resourceVersion": str(900 + i), "uid": "c-%d" % i},
                                           "csi": {"driver": "ebs.csi.aws.com", "fsType": "ext4", "volumeHandle": vid,
                                                   "volumeAttributes": {"storage.kubernetes.io/csiProvisionerIdentity": "1717171717171-8081-ebs.csi.aws.com"}},
                                           "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                               {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [az]}]}]}},
                                           "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "gp2", "volumeMode": "Filesystem"},
                                  "status": {"phase": "Bound"}})
            kube[cluster].append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                  "metadata": {"name": pvc, "namespace": ns, "uid": "c-%d" % i, "resourceVersion": str(900 + i),
                                               "creationTimestamp": "2025-05-01T10:00:00Z", "labels": {"app": "app-%d" % (i % 300), "team": "team-%d" % (i % 17)},
                                               "annotations": {"pv.kubernetes.io/bind-completed": "yes", "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com"},
                                               "finalizers": ["kubernetes.io/pvc-protection"]},
                                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "%dGi" % size}},
                                           "storageClassName": "gp2", "volumeMode": "Filesystem", "volumeName": pv},
                                  "status": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "%dGi" % size}, "phase": "Bound"}})
    if single:
        single.write("\n    ]\n}" if a.volumes else "]\n}")
        single.close()
        return
    for r, vs in vols.items():
        with open(os.path.join(a.out, "volumes-%s.json" % r), "w") as f:
            json.dump({"Volumes": vs}, f, indent=4)
    for c, items in kube.items():
        with open(os.path.join(a.out, "%s.json" % c), "w") as f:
            json.dump({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}, f, indent=4)


if __name__ == "__main__":
    main()
