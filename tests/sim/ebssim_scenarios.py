"""The hand-made scenarios (basic, cliff, empty), written as code so they stay consistent.

    /usr/bin/python3 tests/sim/ebssim_scenarios.py   # rewrites tests/sim/scenarios/{basic,cliff,empty}.json

The JSON files are what the simulator and the tests read; edit this file and rerun it
rather than editing the JSON by hand.  Object builders come from ebssim_gen.

basic: 2 regions, 2 clusters.
  prod   (1.33, us-east-1): CSI only, VolumeAttributesClass v1beta1, no sidecar.
  legacy (1.30, ap-northeast-2): an in-tree PV, the volume-modifier sidecar.
  Volumes (us-east-1 vol-0aa..., ap-northeast-2 vol-0bb...):
    0aa...01 gp2 100 GiB  postgres, 3,000 IOPS demand (drained bucket)     prod
    0aa...02 gp2 1500 GiB kafka, above 1,000 GiB (baseline 4,500)            prod
    0aa...03 gp2 250 GiB  uploads, 170-334 GiB throughput band, 180 MiB/s    prod
    0aa...04 gp2 20 GiB   redis cache, nearly idle                            prod
    0aa...05 gp3 200 GiB  mysql, migrated 3 days ago (1 completed mod)        prod
    0aa...06 io1 500 GiB  oracle 10,000 IOPS                                  prod
    0aa...07 gp2 50 GiB   unattached orphan, no PV
    0aa...08 gp2 80 GiB   logs, resize 50->80 optimizing since start-10 min   prod
    0aa...09 gp2 300 GiB  elastic, 4 completed modifications in the last 24 h prod
    0aa...0a st1 500 GiB  archive                                             prod
    0bb...01 gp2 100 GiB  mongo, in-tree PV                                   legacy
    0bb...02 gp2 500 GiB  cassandra-0 (CSI)                                   legacy
    0bb...03 gp2 1000 GiB cassandra-1 (CSI), exactly 1,000 GiB                legacy
    0bb...04 gp3 100 GiB  web                                                 legacy
    0bb...05 gp2 8 GiB    unattached
cliff: one 100 GiB gp2 (vol-0cc00000000000001), created at the start with a full bucket,
  under a closed-loop 4k random-read load at queue depth 32 demanding 3,000 IOPS from
  the start: 3,000 IOPS until 2,000 s, then 300 (the field benchmark's cliff).
empty: no volumes, no clusters.
"""

import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ebssim_gen as g  # noqa: E402

START = "2026-11-01T00:00:00Z"
ACCOUNT = "111122223333"
GIB = 1024 ** 3


def at(hours_before):
    return g.ts(g.START_EPOCH - int(hours_before * 3600))


def vol(vid, region, az, vtype, size, workload, attach=None, tags=None, created_days=200, **extra):
    v = {"volume_id": vid, "region": region, "az": az, "type": vtype, "size": size,
         "create_time": at(created_days * 24), "encrypted": True, "snapshot_id": "",
         "multi_attach": False, "attachments": [], "tags": tags or {}, "workload": workload,
         "burst_balance": 100.0, "modify_fails": False}
    if vtype == "gp2":
        v["iops"] = g.gp2_iops(size)
        v["throughput"] = None
    if attach:
        iid, dev = attach
        v["attachments"] = [{"instance_id": iid, "device": dev, "state": "attached",
                             "attach_time": at(created_days * 24 - 0.02), "delete_on_termination": False}]
        v["state"] = "in-use"
    else:
        v["state"] = "available"
    v.update(extra)
    return v


def cfg(vtype, size, iops=None, tput=None):
    if vtype == "gp2":
        iops = g.gp2_iops(size)
    return {"type": vtype, "size": size, "iops": iops, "throughput": tput}


def bound(cluster, objs, usage, v, ns, claim, sc, node_name, pod_name, owner=None, in_tree=False,
          used_frac=0.5, pvc_annotations=None, status_size=None, pv_name=None):
    """PV + PVC + Pod for volume v, and its CSI tags."""
    pv_name = pv_name or "pvc-%s-0000-4000-8000-%s" % (hashlib.sha1(claim.encode()).hexdigest()[:8],
                                                       v["volume_id"][-12:])
    objs.append(g.pv(pv_name, v["volume_id"], v["size"] if status_size is None else status_size,
                     v["az"], sc, ns, claim, in_tree=in_tree, created=v["create_time"]))
    labels = {"app": owner[1]} if owner else None
    objs.append(g.pvc(ns, claim, v["size"], sc, pv_name, labels=labels, annotations=pvc_annotations,
                      status_size=status_size, created=v["create_time"]))
    objs.append(g.pod(ns, pod_name, node_name, [claim], owner=owner, labels=labels))
    tags = {"kubernetes.io/created-for/pvc/name": claim,
            "kubernetes.io/created-for/pvc/namespace": ns,
            "kubernetes.io/created-for/pv/name": pv_name}
    if in_tree:
        tags["KubernetesCluster"] = cluster
    else:
        tags.update({"ebs.csi.aws.com/cluster": "true", "CSIVolumeName": pv_name,
                     "kubernetes.io/cluster/%s" % cluster: "owned"})
    v["tags"].update(tags)
    cap = v["size"] * GIB
    usage["%s/%s" % (ns, claim)] = {"used_bytes": int(cap * used_frac), "capacity_bytes": int(cap * 0.984)}


def basic():
    e1, an2 = "us-east-1", "ap-northeast-2"
    inst = [
        {"instance_id": "i-0aa00000000000001", "region": e1, "az": "us-east-1a",
         "instance_type": "m5.xlarge", "state": "running", "private_dns_name": "ip-10-0-1-10.ec2.internal"},
        {"instance_id": "i-0aa00000000000002", "region": e1, "az": "us-east-1b",
         "instance_type": "m5.large", "state": "running", "private_dns_name": "ip-10-0-2-20.ec2.internal"},
        {"instance_id": "i-0bb00000000000001", "region": an2, "az": "ap-northeast-2a",
         "instance_type": "m5.xlarge", "state": "running",
         "private_dns_name": "ip-10-1-1-10.ap-northeast-2.compute.internal"},
        {"instance_id": "i-0bb00000000000002", "region": an2, "az": "ap-northeast-2c",
         "instance_type": "r5.2xlarge", "state": "running",
         "private_dns_name": "ip-10-1-3-30.ap-northeast-2.compute.internal"},
    ]
    n1, n2, n3, n4 = (i["private_dns_name"] for i in inst)
    i1, i2, i3, i4 = (i["instance_id"] for i in inst)

    def wl(r, w, rm, wm, pattern="steady", **kw):
        d = {"read_iops": r, "write_iops": w, "read_mibps": rm, "write_mibps": wm, "pattern": pattern}
        d.update(kw)
        return d

    va = vol("vol-0aa00000000000001", e1, "us-east-1a", "gp2", 100, wl(2500, 500, 20, 5), (i1, "/dev/xvdba"))
    vb = vol("vol-0aa00000000000002", e1, "us-east-1a", "gp2", 1500, wl(1400, 600, 40, 20, "diurnal"),
             (i1, "/dev/xvdbb"))
    vc = vol("vol-0aa00000000000003", e1, "us-east-1b", "gp2", 250, wl(500, 300, 120, 60, "bursty"),
             (i2, "/dev/xvdba"))
    vd = vol("vol-0aa00000000000004", e1, "us-east-1a", "gp2", 20, wl(8, 2, 0.1, 0.1), (i1, "/dev/xvdbc"))
    ve = vol("vol-0aa00000000000005", e1, "us-east-1b", "gp3", 200, wl(1200, 400, 30, 10, "diurnal"),
             (i2, "/dev/xvdbb"), iops=3000, throughput=125,
             modifications=[{"state": "completed", "start_time": at(72), "end_time": at(71),
                             "original": cfg("gp2", 200), "target": cfg("gp3", 200, 3000, 125)}])
    vf = vol("vol-0aa00000000000006", e1, "us-east-1a", "io1", 500, wl(6000, 2000, 60, 20),
             (i1, "/dev/xvdbd"), iops=10000, throughput=None)
    vg = vol("vol-0aa00000000000007", e1, "us-east-1b", "gp2", 50, {"pattern": "idle"},
             tags={"Name": "old-jenkins-workspace"}, created_days=400)
    vh = vol("vol-0aa00000000000008", e1, "us-east-1b", "gp2", 80, wl(150, 90, 3, 2),
             (i2, "/dev/xvdbc"),
             modifications=[{"state": "optimizing", "start_time": at(10 / 60.0), "progress": 40,
                             "original": cfg("gp2", 50), "target": cfg("gp2", 80)}])
    vi = vol("vol-0aa00000000000009", e1, "us-east-1a", "gp2", 300, wl(700, 300, 25, 15, "diurnal"),
             (i1, "/dev/xvdbe"),
             modifications=[{"state": "completed", "start_time": at(h), "end_time": at(h - 0.25),
                             "original": cfg("gp2", s0), "target": cfg("gp2", s1)}
                            for h, s0, s1 in ((20, 200, 220), (15, 220, 240), (10, 240, 260), (5, 260, 300))])
    vj = vol("vol-0aa0000000000000a", e1, "us-east-1b", "st1", 500, wl(20, 20, 40, 40), (i2, "/dev/xvdbd"),
             iops=None, throughput=None)
    vk = vol("vol-0bb00000000000001", an2, "ap-northeast-2a", "gp2", 100, wl(200, 100, 4, 2, "diurnal"),
             (i3, "/dev/xvdba"))
    vl = vol("vol-0bb00000000000002", an2, "ap-northeast-2c", "gp2", 500, wl(900, 600, 30, 30, "diurnal"),
             (i4, "/dev/xvdba"))
    vm = vol("vol-0bb00000000000003", an2, "ap-northeast-2a", "gp2", 1000, wl(1500, 1000, 50, 40),
             (i3, "/dev/xvdbb"))
    vn = vol("vol-0bb00000000000004", an2, "ap-northeast-2c", "gp3", 100, wl(300, 100, 5, 2),
             (i4, "/dev/xvdbb"), iops=3000, throughput=125)
    vo = vol("vol-0bb00000000000005", an2, "ap-northeast-2a", "gp2", 8, {"pattern": "idle"}, created_days=30)

    # ---- prod (1.33, us-east-1)
    prod, pusage = [], {}
    prod += [g.namespace(n) for n in ("default", "kube-system", "db", "apps")]
    prod += [g.storage_class("gp2", "gp2", default=True), g.storage_class("gp3", "gp3"),
             g.storage_class("io1", "io1", extra={"iopsPerGB": "20"}), g.storage_class("st1", "st1")]
    prod += [g.node(n1, i1, "m5.xlarge", e1, "us-east-1a"), g.node(n2, i2, "m5.large", e1, "us-east-1b")]
    prod.append(g.vac("gp3-baseline", {"type": "gp3", "iops": "3000", "throughput": "125"}))
    for name, size, sc in (("postgres", 100, "gp2"), ("kafka", 1500, "gp2"), ("redis", 20, "gp2"),
                           ("mysql", 200, "gp3"), ("oracle", 500, "io1"), ("elastic", 300, "gp2")):
        ns = "apps" if name == "redis" else "db"
        prod.append(g.statefulset(ns, name, 1, size, sc, claim="cache" if name == "redis" else "data"))
    bound("prod", prod, pusage, va, "db", "data-postgres-0", "gp2", n1, "postgres-0", ("StatefulSet", "postgres"), used_frac=0.62)
    bound("prod", prod, pusage, vb, "db", "data-kafka-0", "gp2", n1, "kafka-0", ("StatefulSet", "kafka"), used_frac=0.41)
    bound("prod", prod, pusage, vc, "apps", "uploads", "gp2", n2, "uploads-6d5f8b7c9-x2x7p", None, used_frac=0.77)
    bound("prod", prod, pusage, vd, "apps", "cache-redis-0", "gp2", n1, "redis-0", ("StatefulSet", "redis"), used_frac=0.05)
    bound("prod", prod, pusage, ve, "db", "data-mysql-0", "gp3", n2, "mysql-0", ("StatefulSet", "mysql"), used_frac=0.33)
    bound("prod", prod, pusage, vf, "db", "data-oracle-0", "io1", n1, "oracle-0", ("StatefulSet", "oracle"), used_frac=0.70)
    bound("prod", prod, pusage, vh, "apps", "logs", "gp2", n2, "fluentd-agg-7f9c6d5b8-9kq2m", None,
          used_frac=0.58, status_size=50)
    bound("prod", prod, pusage, vi, "db", "data-elastic-0", "gp2", n1, "elastic-0", ("StatefulSet", "elastic"), used_frac=0.81)
    bound("prod", prod, pusage, vj, "apps", "archive", "st1", n2, "archiver-5c7d8f6b4-mm2zt", None, used_frac=0.12)

    # ---- legacy (1.30, ap-northeast-2): in-tree default class, CSI classes, the sidecar
    legacy, lusage = [], {}
    legacy += [g.namespace(n) for n in ("default", "kube-system")]
    legacy += [g.storage_class("gp2", "gp2", default=True, provisioner="kubernetes.io/aws-ebs"),
               g.storage_class("gp2-csi", "gp2"), g.storage_class("gp3", "gp3")]
    legacy += [g.node(n3, i3, "m5.xlarge", an2, "ap-northeast-2a"),
               g.node(n4, i4, "r5.2xlarge", an2, "ap-northeast-2c")]
    legacy.append(g.statefulset("default", "mongo", 1, 100, "gp2"))
    legacy.append(g.statefulset("default", "cassandra", 2, 500, "gp2-csi"))
    legacy.append(g.statefulset("default", "web", 1, 100, "gp3"))
    bound("legacy", legacy, lusage, vk, "default", "data-mongo-0", "gp2", n3, "mongo-0",
          ("StatefulSet", "mongo"), in_tree=True, used_frac=0.45)
    bound("legacy", legacy, lusage, vl, "default", "data-cassandra-0", "gp2-csi", n4, "cassandra-0",
          ("StatefulSet", "cassandra"), used_frac=0.52)
    bound("legacy", legacy, lusage, vm, "default", "data-cassandra-1", "gp2-csi", n3, "cassandra-1",
          ("StatefulSet", "cassandra"), used_frac=0.50)
    bound("legacy", legacy, lusage, vn, "default", "data-web-0", "gp3", n4, "web-0",
          ("StatefulSet", "web"), used_frac=0.20)

    principals = g.default_principals(ACCOUNT)
    clusters = [
        {"name": "prod", "version": "1.33", "region": e1, "eks_name": "prod",
         "volume_modifier_sidecar": False, "users": g.cluster_users("prod"), "objects": prod,
         "usage": pusage},
        {"name": "legacy", "version": "1.30", "region": an2, "eks_name": "legacy",
         "volume_modifier_sidecar": True, "users": g.cluster_users("legacy"), "objects": legacy,
         "usage": lusage},
    ]
    return {"name": "basic", "start_time": START, "account": ACCOUNT, "default_region": e1,
            "regions": {e1: {"azs": ["us-east-1a", "us-east-1b"]},
                        an2: {"azs": ["ap-northeast-2a", "ap-northeast-2c"]}},
            "principals": principals, "instances": inst,
            "volumes": [va, vb, vc, vd, ve, vf, vg, vh, vi, vj, vk, vl, vm, vn, vo],
            "clusters": clusters}


def cliff():
    e1 = "us-east-1"
    i1 = "i-0cc00000000000001"
    n1 = "ip-10-0-1-10.ec2.internal"
    v = vol("vol-0cc00000000000001", e1, "us-east-1a", "gp2", 100,
            {"read_iops": 3000, "write_iops": 0, "read_mibps": 11.72, "write_mibps": 0,
             "pattern": "steady", "queue_depth": 32, "active_from": START},
            (i1, "/dev/xvdba"), created_days=0)
    v["create_time"] = START
    v["attachments"][0]["attach_time"] = START
    objs = [g.namespace("default"), g.namespace("bench-storage"),
            g.storage_class("gp2", "gp2", default=True), g.storage_class("gp3", "gp3"),
            g.node(n1, i1, "m5.xlarge", e1, "us-east-1a")]
    usage = {}
    bound("bench", objs, usage, v, "bench-storage", "fio-gp2", "gp2", n1, "fio-gp2", None, used_frac=0.08)
    return {"name": "cliff", "start_time": START, "account": ACCOUNT, "default_region": e1,
            "regions": {e1: {"azs": ["us-east-1a"]}}, "principals": g.default_principals(ACCOUNT),
            "instances": [{"instance_id": i1, "region": e1, "az": "us-east-1a", "instance_type": "m5.xlarge",
                           "state": "running", "private_dns_name": n1}],
            "volumes": [v],
            "clusters": [{"name": "bench", "version": "1.33", "region": e1, "eks_name": "bench",
                          "volume_modifier_sidecar": False, "users": g.cluster_users("bench"),
                          "objects": objs, "usage": usage}]}


def empty():
    return {"name": "empty", "start_time": START, "account": ACCOUNT, "default_region": "us-east-1",
            "regions": {"us-east-1": {"azs": ["us-east-1a"]}}, "principals": g.default_principals(ACCOUNT),
            "instances": [], "volumes": [], "clusters": []}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
    os.makedirs(out, exist_ok=True)
    for name, fn in (("basic", basic), ("cliff", cliff), ("empty", empty)):
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(fn(), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
