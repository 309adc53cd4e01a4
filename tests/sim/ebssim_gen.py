"""ebssim scenario generator: `ebssim gen --volumes N --clusters K --regions R --seed S --out F`.

Makes a realistic fleet, deterministic for a seed:
  - volume types: ~78% gp2, 14% gp3, 4% io1, 1% io2, 2% st1, 1% sc1; sizes skewed small
    (1 GiB .. 16 TiB, most 8-200 GiB), ~10% unattached (no PV: orphans);
  - of the attached ones, each belongs to a PV/PVC in one of the clusters of its region
    (CSI `volumeHandle`; ~3% in-tree `awsElasticBlockStore` in clusters <= 1.30),
    mostly StatefulSet claim templates (`data-NAME-ORDINAL`), some standalone PVCs;
  - StorageClasses gp2 (default) and gp3, plus io1/st1 where used; nodes with
    `node.kubernetes.io/instance-type` and topology labels, ~20 volumes per node;
    one Pod per PVC on the node the volume is attached to;
  - workloads: most below the gp2 baseline, ~15% bursting above it, patterns
    steady/diurnal/bursty/idle; usage (used/capacity bytes) for ~85% of PVCs;
  - modification history: ~5% with an old completed modification, a few optimizing,
    a few with 4 modifications in the last 24 h.
With `--accounts N` (`--volumes-per-account-region V`, default 1000) the scenario is an
organization: the management account gets the fleet above (`--volumes` may be 0) and each of N
member accounts (ids 2000000000NN..., "member-NN") has V volumes in each of the `--regions`
regions (same type/size/workload/history mix, ~85% attached to instances of that account, 20 per
instance, no clusters); every account, the management one too, has the role `ebsmigrate`
trusting the management account's root with
ec2:Describe*, ec2:ModifyVolume, ec2:CreateTags, cloudwatch:GetMetricData and
cloudtrail:LookupEvents.
The object builders (storage_class, pv, pvc, pod, node, statefulset, ...) are shared with
the hand-written scenarios (see scenarios/README in docs/TESTING.md).
"""

import calendar
import json
import random
import time
import uuid

START = "2026-11-01T00:00:00Z"
START_EPOCH = 1793491200  # 2026-11-01T00:00:00Z
REGION_POOL = [
    ("us-east-1", ["us-east-1a", "us-east-1b", "us-east-1c"]),
    ("ap-northeast-2", ["ap-northeast-2a", "ap-northeast-2b", "ap-northeast-2c"]),
    ("eu-west-1", ["eu-west-1a", "eu-west-1b", "eu-west-1c"]),
    ("us-west-2", ["us-west-2a", "us-west-2b", "us-west-2c"]),
    ("eu-central-1", ["eu-central-1a", "eu-central-1b", "eu-central-1c"]),
    ("ap-northeast-1", ["ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"]),
]
VERSIONS = ["1.33", "1.30", "1.34", "1.31", "1.32"]
INSTANCE_TYPES = ["m5.xlarge", "m5.large", "m6i.2xlarge", "r5.xlarge", "c5.2xlarge", "m7g.xlarge"]
GIB = 1024 ** 3


def ts(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def gp2_iops(size):
    return min(16000, max(100, 3 * size))


# --------------------------------------------------------------------------- k8s objects


def namespace(name):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def storage_class(name, vtype, default=False, provisioner="ebs.csi.aws.com", extra=None):
    params = {"type": vtype}
    if provisioner == "ebs.csi.aws.com":
        params["csi.storage.k8s.io/fstype"] = "ext4"
    params.update(extra or {})
    meta = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
            "provisioner": provisioner, "parameters": params, "reclaimPolicy": "Delete",
            "allowVolumeExpansion": True, "volumeBindingMode": "WaitForFirstConsumer"}


def node(name, instance_id, instance_type, region, az):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "arm64" if instance_type.startswith(("m7g", "c7g", "r7g")) else "amd64",
                "node.kubernetes.io/instance-type": instance_type,
                "topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": az,
                "topology.ebs.csi.aws.com/zone": az}},
            "spec": {"providerID": "aws:///%s/%s" % (az, instance_id)},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "nodeInfo": {"kubeletVersion": "v1.33.5-eks-1234567"}}}


def pv(name, volume_id, size_gib, az, sc, claim_ns, claim_name, in_tree=False, created=None, slim=False):
    spec = {"capacity": {"storage": "%dGi" % size_gib}, "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Delete", "storageClassName": sc,
            "volumeMode": "Filesystem",
            "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                         "namespace": claim_ns, "name": claim_name}}
    if in_tree:
        spec["awsElasticBlockStore"] = {"volumeID": "aws://%s/%s" % (az, volume_id), "fsType": "ext4"}
        key = "topology.kubernetes.io/zone"
    else:
        spec["csi"] = {"driver": "ebs.csi.aws.com", "volumeHandle": volume_id, "fsType": "ext4"}
        if not slim:
            spec["csi"]["volumeAttributes"] = {"storage.kubernetes.io/csiProvisionerIdentity":
                                               "1730000000000-8081-ebs.csi.aws.com"}
        key = "topology.ebs.csi.aws.com/zone"
    if slim:  # generated fleets: leave out what a reader does not need, to keep files small
        return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                "spec": spec, "status": {"phase": "Bound"}}
    spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": key, "operator": "In", "values": [az]}]}]}}
    meta = {"name": name, "annotations": {"pv.kubernetes.io/provisioned-by":
                                          "kubernetes.io/aws-ebs" if in_tree else "ebs.csi.aws.com"}}
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec,
            "status": {"phase": "Bound"}}


def pvc(ns, name, size_gib, sc, pv_name, labels=None, annotations=None, status_size=None, created=None,
        slim=False):
    meta = {"name": name, "namespace": ns}
    if not slim:
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes",
                               "pv.kubernetes.io/bound-by-controller": "yes"}
    if annotations:
        meta.setdefault("annotations", {}).update(annotations)
    if labels:
        meta["labels"] = labels
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                     "resources": {"requests": {"storage": "%dGi" % size_gib}},
                     "volumeName": pv_name, "volumeMode": "Filesystem"},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                       "capacity": {"storage": "%dGi" % (status_size or size_gib)}}}


def statefulset(ns, name, replicas, size_gib, sc, image="busybox:1.36", claim="data"):
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "serviceName": name,
                     "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": name, "image": image,
                                                           "volumeMounts": [{"name": claim,
                                                                             "mountPath": "/data"}]}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": claim}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                         "resources": {"requests": {"storage": "%dGi" % size_gib}}}}]},
            "status": {"replicas": replicas, "readyReplicas": replicas}}


def pod(ns, name, node_name, claims, owner=None, labels=None, image="busybox:1.36", slim=False):
    meta = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = labels
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                    "controller": True}]
    vols = [{"name": "v%d" % i, "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node_name, "volumes": vols,
                     "containers": [{"name": "main", "image": image}] if slim else
                     [{"name": "main", "image": image,
                       "volumeMounts": [{"name": v["name"], "mountPath": "/data%d" % i}
                                        for i, v in enumerate(vols)]}]},
            "status": {"phase": "Running"}}


def vac(name, params, api="storage.k8s.io/v1beta1"):
    return {"apiVersion": api, "kind": "VolumeAttributesClass", "metadata": {"name": name},
            "driverName": "ebs.csi.aws.com", "parameters": params}


def csi_tags(cluster, ns, pvc_name, pv_name):
    return {"kubernetes.io/created-for/pvc/name": pvc_name,
            "kubernetes.io/created-for/pvc/namespace": ns,
            "kubernetes.io/created-for/pv/name": pv_name,
            "ebs.csi.aws.com/cluster": "true", "CSIVolumeName": pv_name,
            "kubernetes.io/cluster/%s" % cluster: "owned"}


def cluster_users(name):
    return [{"name": "admin", "token": "ebssim-%s-admin-token" % name, "allow": ["*"]},
            {"name": "reader", "token": "ebssim-%s-reader-token" % name,
             "allow": ["list:*", "get:*", "watch:*"]},
            {"name": "cert-user", "client_cert": True, "allow": ["*"]},
            {"name": "eks-admin", "eks_principal": "admin", "allow": ["*"]}]


def default_principals(account):
    return [
        {"name": "admin", "access_key_id": "AKIASIMADMIN0000001",
         "secret_access_key": "ebssim/admin/secret/key/0000000000000001", "session_token": None,
         "expires": None, "allow": ["*"]},
        {"name": "readonly", "access_key_id": "AKIASIMREADONLY0001",
         "secret_access_key": "ebssim/readonly/secret/key/00000000000001",
         "allow": ["ec2:Describe*", "cloudwatch:GetMetricData", "pricing:GetProducts"]},
        {"name": "expired", "access_key_id": "ASIASIMEXPIRED00001",
         "secret_access_key": "ebssim/expired/secret/key/000000000000001",
         "session_token": "ebssim-expired-session-token", "expires": "2020-01-01T00:00:00Z",
         "allow": ["*"]},
        {"name": "ebsmigrate-role", "role_arn": "arn:aws:iam::%s:role/ebsmigrate" % account,
         "allow": ["ec2:DescribeVolumes", "ec2:DescribeVolumesModifications", "ec2:ModifyVolume",
                   "ec2:CreateTags", "ec2:DescribeInstances", "cloudwatch:GetMetricData",
                   "pricing:GetProducts"]},
    ]


# --------------------------------------------------------------------------- generator

SIZES = [(1, 2), (2, 2), (4, 3), (5, 4), (8, 8), (10, 10), (20, 12), (30, 6), (32, 5), (50, 9),
         (64, 4), (100, 10), (128, 3), (150, 3), (200, 5), (250, 3), (256, 2), (300, 2), (500, 3),
         (512, 2), (750, 1), (1000, 2), (1024, 2), (1500, 1), (2000, 1), (4096, 1), (8192, 0.4),
         (16384, 0.2)]
TYPES = [("gp2", 78), ("gp3", 14), ("io1", 4), ("io2", 1), ("st1", 2), ("sc1", 1)]


def _weighted(rng, pairs):
    total = sum(w for _, w in pairs)
    x = rng.random() * total
    for v, w in pairs:
        x -= w
        if x <= 0:
            return v
    return pairs[-1][0]


def generate(n_volumes, n_clusters, n_regions, seed):
    rng = random.Random(seed)
    account = "111122223333"
    regions = REGION_POOL[:max(1, min(n_regions, len(REGION_POOL)))]

    def rid(prefix, n=17):
        return prefix + "%0*x" % (n, rng.getrandbits(4 * n))

    def ruid():
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    clusters = []
    for c in range(max(0, n_clusters)):
        region, azs = regions[c % len(regions)]
        version = VERSIONS[c % len(VERSIONS)]
        name = "cluster-%d" % (c + 1)
        minor = int(version.split(".")[1])
        objs = [namespace("default"), namespace("kube-system")]
        objs.append(storage_class("gp2", "gp2", default=True))
        objs.append(storage_class("gp3", "gp3"))
        objs.append(storage_class("io1", "io1", extra={"iopsPerGB": "20"}))
        objs.append(storage_class("st1", "st1"))
        objs.append(storage_class("sc1", "sc1"))
        objs.append(storage_class("io2", "io2", extra={"iops": "4000"}))
        if minor <= 30:
            objs.append(storage_class("gp2-intree", "gp2", provisioner="kubernetes.io/aws-ebs"))
        clusters.append({"name": name, "version": version, "region": region, "eks_name": name,
                         "volume_modifier_sidecar": minor <= 30,
                         "users": cluster_users(name), "objects": objs, "usage": {},
                         "_azs": azs, "_nodes": [], "_minor": minor, "_ns": set(["default"])})
    by_region = {}
    for c in clusters:
        by_region.setdefault(c["region"], []).append(c)

    instances = []
    volumes = []
    start = START_EPOCH
    sts_counter = [0]

    def new_node(cl):
        az = cl["_azs"][len(cl["_nodes"]) % len(cl["_azs"])]
        iid = rid("i-")
        itype = INSTANCE_TYPES[rng.randrange(len(INSTANCE_TYPES))]
        n = len(cl["_nodes"])
        ip = "10.%d.%d.%d" % (clusters.index(cl) % 250, (n // 250) % 250, n % 250 + 1)
        region = cl["region"]
        dns = "ip-%s.%s" % (ip.replace(".", "-"), "ec2.internal" if region == "us-east-1"
                            else region + ".compute.internal")
        instances.append({"instance_id": iid, "region": region, "az": az, "instance_type": itype,
                          "state": "running", "private_dns_name": dns})
        cl["objects"].append(node(dns, iid, itype, region, az))
        rec = {"name": dns, "iid": iid, "az": az, "count": 0}
        cl["_nodes"].append(rec)
        return rec

    def pick_node(cl, az=None):
        cands = [n for n in cl["_nodes"][-6:] if n["count"] < 20 and (az is None or n["az"] == az)]
        if cands:
            return cands[0]
        return new_node(cl)

    group = None  # the StatefulSet being filled: its replicas share type, size and cluster
    for i in range(n_volumes):
        if group and group["ordinal"] < group["replicas"]:
            region, azs = group["region"], group["azs"]
            vtype, size = group["vtype"], group["size"]
        else:
            group = None
            region, azs = regions[i % len(regions)]
            vtype = _weighted(rng, TYPES)
            size = _weighted(rng, SIZES)
            if vtype in ("st1", "sc1"):
                size = max(125, size if size >= 125 else rng.choice([500, 1000, 2000]))
            if vtype in ("io1", "io2"):
                size = max(4, size)
        vid = rid("vol-")
        created = start - rng.randrange(3 * 86400, 900 * 86400)
        vol = {"volume_id": vid, "region": region, "az": azs[rng.randrange(len(azs))], "type": vtype,
               "size": size, "create_time": ts(created)}
        if rng.random() < 0.7:
            vol["encrypted"] = True
        if vtype == "gp3":
            vol["iops"] = rng.choice([3000, 3000, 3000, 4000, 6000])
            vol["throughput"] = rng.choice([125, 125, 125, 250])
            if vol["iops"] > 500 * size:
                vol["iops"] = 3000
            if vol["throughput"] > vol["iops"] / 4:
                vol["throughput"] = 125
        elif vtype in ("io1", "io2"):
            vol["iops"] = min(50 * size if vtype == "io1" else 1000 * size, rng.choice([1000, 3000, 6000, 10000]))
        # workload
        base = gp2_iops(size) if vtype == "gp2" else (vol.get("iops") or 500)
        r = rng.random()
        if r < 0.12:
            vol["workload"] = {"pattern": "idle"}
        else:
            if r < 0.27 and vtype == "gp2" and size < 1000:
                pattern, demand = rng.choice(["steady", "bursty", "diurnal"]), int(min(2800, base * rng.uniform(1.5, 6)))
            else:
                pattern = rng.choice(["steady", "diurnal", "diurnal", "bursty"])
                demand = max(1, int(base * rng.uniform(0.02, 0.5)))
            reads = int(demand * rng.uniform(0.3, 0.9))
            io_kib = rng.choice([4, 4, 8, 16, 64, 128])
            vol["workload"] = {"read_iops": reads, "write_iops": demand - reads,
                               "read_mibps": round(reads * io_kib / 1024.0, 1),
                               "write_mibps": round((demand - reads) * io_kib / 1024.0, 1),
                               "pattern": pattern}
        # modifications
        m = rng.random()
        if m < 0.05 and vtype in ("gp2", "gp3"):
            t0 = start - rng.randrange(3 * 86400, 200 * 86400)
            old = max(1, size // 2)
            vol["modifications"] = [{"state": "completed", "start_time": ts(t0), "end_time": ts(t0 + 1800),
                                     "original": {"type": vtype, "size": old,
                                                  "iops": gp2_iops(old) if vtype == "gp2" else vol.get("iops"),
                                                  "throughput": vol.get("throughput")},
                                     "target": {"type": vtype, "size": size,
                                                "iops": gp2_iops(size) if vtype == "gp2" else vol.get("iops"),
                                                "throughput": vol.get("throughput")}}]
        elif m < 0.055 and vtype == "gp2":
            old = max(1, size - max(1, size // 4))
            vol["modifications"] = [{"state": "optimizing", "start_time": ts(start - 600), "progress": 40,
                                     "original": {"type": "gp2", "size": old, "iops": gp2_iops(old), "throughput": None},
                                     "target": {"type": "gp2", "size": size, "iops": gp2_iops(size), "throughput": None}}]
        elif m < 0.057 and vtype == "gp2" and size >= 8:
            mods = []
            cur = size - 4
            for k in range(4):
                t0 = start - (20 - 5 * k) * 3600
                mods.append({"state": "completed", "start_time": ts(t0), "end_time": ts(t0 + 900),
                             "original": {"type": "gp2", "size": cur, "iops": gp2_iops(cur), "throughput": None},
                             "target": {"type": "gp2", "size": cur + 1, "iops": gp2_iops(cur + 1), "throughput": None}})
                cur += 1
            vol["modifications"] = mods
        volumes.append(vol)
        cands = by_region.get(region)
        if group is None and (not cands or rng.random() < 0.10):
            if rng.random() < 0.3:
                vol["tags"] = {"Name": "orphan-%d" % i}
            continue  # unattached
        sc = vtype
        if group is not None:
            cl, ns = group["cluster"], group["ns"]
            claim = "data-%s-%d" % (group["name"], group["ordinal"])
            owner = ("StatefulSet", group["name"])
            podname = "%s-%d" % (group["name"], group["ordinal"])
            labels = {"app": group["name"]}
            in_tree = False
            group["ordinal"] += 1
        else:
            cl = cands[rng.randrange(len(cands))]
            ns = "ns-%d" % (rng.randrange(8) + 1)
            if ns not in cl["_ns"]:
                cl["_ns"].add(ns)
                cl["objects"].append(namespace(ns))
            in_tree = vtype == "gp2" and cl["_minor"] <= 30 and rng.random() < 0.03
            if in_tree:
                sc = "gp2-intree"
            if rng.random() < 0.7 and not in_tree:
                sts_counter[0] += 1
                name = "%s-%d" % (rng.choice(["postgres", "mysql", "kafka", "redis", "elastic", "mongo",
                                              "zookeeper", "prometheus", "minio", "etcd"]), sts_counter[0])
                replicas = rng.choice([1, 1, 3, 3, 5])
                cl["objects"].append(statefulset(ns, name, replicas, size, sc))
                group = {"cluster": cl, "ns": ns, "name": name, "replicas": replicas, "ordinal": 1,
                         "vtype": vtype, "size": size, "region": region, "azs": azs}
                claim = "data-%s-0" % name
                owner = ("StatefulSet", name)
                podname = "%s-0" % name
                labels = {"app": name}
            else:
                claim = "pvc-%s-%d" % (rng.choice(["uploads", "cache", "scratch", "logs", "backup"]), i)
                owner = None
                podname = "%s-%s" % (claim, rid("", 5))
                labels = None
        nd = pick_node(cl, None)
        nd["count"] += 1
        vol["az"] = nd["az"]
        pv_name = "pvc-" + ruid()
        dev = "/dev/xvd%s%s" % ("abcdefghijklmnopqrstuvwxyz"[(nd["count"] // 26) % 26],
                               "abcdefghijklmnopqrstuvwxyz"[nd["count"] % 26])
        vol["attachments"] = [{"instance_id": nd["iid"], "device": dev, "attach_time": ts(created + 60)}]
        vol["tags"] = {"kubernetes.io/created-for/pvc/name": claim,
                       "kubernetes.io/created-for/pvc/namespace": ns,
                       "kubernetes.io/created-for/pv/name": pv_name}
        if not in_tree:
            vol["tags"]["ebs.csi.aws.com/cluster"] = "true"
        cl["objects"].append(pv(pv_name, vid, size, nd["az"], sc, ns, claim, in_tree=in_tree, slim=True))
        cl["objects"].append(pvc(ns, claim, size, sc, pv_name, labels=labels, slim=True))
        cl["objects"].append(pod(ns, podname, nd["name"], [claim], owner=owner, labels=labels, slim=True))
        if rng.random() < 0.85:
            cap = size * GIB
            cl["usage"]["%s/%s" % (ns, claim)] = {"used_bytes": int(cap * rng.uniform(0.02, 0.95)),
                                                  "capacity_bytes": int(cap * 0.984)}
    for cl in clusters:
        for k in [k for k in cl if k.startswith("_")]:
            del cl[k]
    region_map = {r: {"azs": azs} for r, azs in regions}
    return {"name": "generated-%d-%d-%d-%d" % (n_volumes, n_clusters, n_regions, seed),
            "start_time": START, "account": account, "default_region": regions[0][0],
            "regions": region_map, "principals": default_principals(account),
            "instances": instances, "volumes": volumes, "clusters": clusters}


MEMBER_ALLOW = ["ec2:Describe*", "ec2:ModifyVolume", "ec2:CreateTags", "cloudwatch:GetMetricData",
                "cloudtrail:LookupEvents"]


def member_account_id(k):
    return "2000%08d" % (k + 1)


def generate_org(n_accounts, per_region, n_volumes, n_clusters, n_regions, seed, ec2_rate_limit=None):
    """The management account's fleet (generate()) plus n_accounts members (see the module doc);
    ec2_rate_limit "BURST/RATE" sets the scenario's EC2 token bucket (per account and region)."""
    scenario = generate(n_volumes, n_clusters, n_regions, seed)
    if ec2_rate_limit:
        burst, _, rate = ec2_rate_limit.partition("/")
        scenario["ec2_rate_limit"] = {"burst": float(burst), "rate": float(rate or burst)}
    mgmt = scenario["account"]
    scenario["name"] = "generated-org-%d-%d-%d-%d" % (n_accounts, per_region, n_regions, seed)
    scenario["organization"] = {"id": "o-ebssimgen01", "management_account_name": "management",
                                "management_email": "aws-mgmt@example.com"}
    # the same role in the management account, so a tool assuming it everywhere covers all accounts
    scenario["roles"] = [{"name": "ebsmigrate", "trusted": ["arn:aws:iam::%s:root" % mgmt],
                          "external_id": None, "max_session_duration": 3600, "allow": list(MEMBER_ALLOW)}]
    members = []
    for k in range(n_accounts):
        acct_id = member_account_id(k)
        # the member's volumes: a fleet without clusters (all unattached), one seed per account
        fleet = generate(per_region * len(scenario["regions"]), 0, n_regions, seed * 100003 + k + 1)
        rng = random.Random(seed * 7919 + k)
        instances = []
        current = {}
        for vol in fleet["volumes"]:
            if rng.random() >= 0.85:
                continue
            region = vol["region"]
            inst, count = current.get(region, (None, 20))
            if count >= 20:
                inst = {"instance_id": "i-%017x" % rng.getrandbits(68), "region": region, "az": vol["az"],
                        "instance_type": INSTANCE_TYPES[rng.randrange(len(INSTANCE_TYPES))],
                        "state": "running"}
                instances.append(inst)
                count = 0
            current[region] = (inst, count + 1)
            vol["az"] = inst["az"]
            vol["attachments"] = [{"instance_id": inst["instance_id"], "device": "/dev/xvd%s" % "fghijklmnopqrstuvwxyz"[count],
                                   "attach_time": ts(parse_ts(vol["create_time"]) + 60)}]
        members.append({"id": acct_id, "name": "member-%02d" % (k + 1),
                        "email": "aws+member-%02d@example.com" % (k + 1), "status": "ACTIVE",
                        "joined_method": "CREATED", "joined": ts(START_EPOCH - 300 * 86400 + k * 86400),
                        "regions": fleet["regions"], "volumes": fleet["volumes"], "instances": instances,
                        "roles": [{"name": "ebsmigrate", "trusted": ["arn:aws:iam::%s:root" % mgmt],
                                   "external_id": None, "max_session_duration": 3600,
                                   "allow": list(MEMBER_ALLOW)}]})
    scenario["accounts"] = members
    return scenario


def parse_ts(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))


def main(args):
    import gc
    t0 = time.time()
    gc.disable()  # millions of small objects: the collector would only slow this down
    if getattr(args, "accounts", 0):
        scenario = generate_org(args.accounts, args.volumes_per_account_region, args.volumes,
                                args.clusters, args.regions, args.seed, getattr(args, "ec2_rate_limit", None))
    else:
        scenario = generate(args.volumes, args.clusters, args.regions, args.seed)
    text = json.dumps(scenario, separators=(",", ":"))  # dumps uses the C encoder, dump does not
    with open(args.out, "w") as f:
        f.write(text)
    import sys
    members = scenario.get("accounts") or []
    sys.stderr.write("ebssim gen: %d volumes, %d clusters, %d regions%s -> %s (%.1f s)\n"
                     % (len(scenario["volumes"]), len(scenario["clusters"]), len(scenario["regions"]),
                        ", %d member accounts with %d volumes" % (
                            len(members), sum(len(a["volumes"]) for a in members)) if members else "",
                        args.out, time.time() - t0))
    return 0
