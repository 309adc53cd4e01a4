"""Unit tests for ebssim_kube.KubeCluster, driven through .handle() with a stub `sim`
(the in-process interface of tests/sim/CONTRACT.md). Run: /usr/bin/python3 tests/sim/test_kube.py"""

import base64
import copy
import datetime
import json
import os
import re
import shutil
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ebssim_kube as K  # noqa: E402

START = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc).timestamp()
TOKENS = {"admin": "tok-admin", "reader": "tok-reader", "patcher": "tok-patcher"}


class StubSim:
    """Just enough of the core: clock, EC2 volumes with a modification timeline, faults, log."""

    MODIFYING_S = 60
    OPTIMIZING_S = 600

    def __init__(self):
        self.lock = threading.RLock()
        self.t = START
        self.volumes = {}
        self.mods = {}
        self.requests = []
        self.faults = []
        self.sts = {}

    def now(self):
        return self.t

    def advance(self, s, cluster=None):
        with self.lock:
            self.t += s
            for vid, mods in self.mods.items():
                m = mods[-1]
                el = self.t - m["start"]
                if m["state"] == "modifying" and el >= self.MODIFYING_S:
                    m["state"] = "optimizing"
                    self.volumes[vid].update(m["target"])
                if m["state"] == "optimizing" and el >= self.OPTIMIZING_S:
                    m["state"] = "completed"
            if cluster is not None:
                cluster.tick()

    def ec2_modify_volume(self, region, vid, params, principal):
        with self.lock:
            vol = self.volumes.get(vid)

            def fail(code, msg):
                return False, {"code": code, "message": msg, "status": 400}
            if vol is None:
                return fail("InvalidVolume.NotFound", "The volume '%s' does not exist." % vid)
            m = self.latest_modification(vid)
            if m and m["state"] in ("modifying", "optimizing"):
                return fail("IncorrectModificationState", "modification in progress")
            target = {"type": params.get("VolumeType", vol["type"])}
            if target["type"] not in ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"):
                return fail("InvalidParameterValue", "Value (%s) for parameter volumeType is invalid." % target["type"])
            if target["type"] == "gp3":
                iops = int(params.get("Iops", 3000))
                tp = int(params.get("Throughput", 125))
                if not 3000 <= iops <= 16000:
                    return fail("InvalidParameterValue", "Volume iops of %d is too low; minimum is 3000." % iops)
                if not 125 <= tp <= 1000:
                    return fail("InvalidParameterValue", "Throughput %d out of range" % tp)
                target.update({"iops": iops, "throughput": tp})
            self.mods.setdefault(vid, []).append({"state": "modifying", "start": self.t, "target": target,
                                                  "original": {k: vol.get(k) for k in ("type", "iops", "throughput")}})
            return True, {"VolumeModification": {"VolumeId": vid, "ModificationState": "modifying"}}

    def latest_modification(self, vid):
        mods = self.mods.get(vid)
        return mods[-1] if mods else None

    def log_request(self, e):
        self.requests.append(dict(e))

    def fault(self, service, action):
        """Like the core's: count limits how often a fault fires (bookkept in _fired)."""
        for f in self.faults:
            if f["service"] in (service, "*") and f["action"] in (action, "*") and \
                    f.get("_fired", 0) < f.get("count", 1):
                f["_fired"] = f.get("_fired", 0) + 1
                return {k: v for k, v in f.items() if not k.startswith("_")}
        return None

    def error_fault(self, service, action, volume_id):
        """Like the core's: an `error` fault for this action and volume -> an exception with
        code, message and status."""
        for f in self.faults:
            if f.get("kind") == "error" and f["service"] in (service, "*") and f["action"] in (action, "*") \
                    and f.get("volume_id") in (None, volume_id):
                return type("Refusal", (Exception,), {"code": f["code"], "message": f["message"], "status": 400})()
        return None

    def verify_presigned_sts(self, url, headers):
        p = self.sts.get(url)
        if p and p[1] == headers.get("x-k8s-aws-id"):
            return p[0], None
        return None, "signature does not match"


def pv(name, vid, claim, csi=True, sc="gp2", size="100Gi"):
    spec = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": sc, "volumeMode": "Filesystem",
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": claim[0], "name": claim[1], "apiVersion": "v1"}}
    if csi:
        spec["csi"] = {"driver": "ebs.csi.aws.com", "volumeHandle": vid, "fsType": "ext4"}
    else:
        spec["awsElasticBlockStore"] = {"volumeID": "aws://us-east-1a/" + vid, "fsType": "ext4"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec,
            "status": {"phase": "Bound"}}


def pvc(ns, name, volume, sc="gp2", size="100Gi", annotations=None):
    o = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": name, "namespace": ns, "labels": {"app": name.split("-")[1]}},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                  "storageClassName": sc, "volumeMode": "Filesystem", "volumeName": volume},
         "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}}}
    if annotations:
        o["metadata"]["annotations"] = annotations
    return o


def node(name, iid, zone="us-east-1a", ready="True"):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"node.kubernetes.io/instance-type": "m5.xlarge",
                                                  "topology.kubernetes.io/zone": zone}},
            "spec": {"providerID": "aws:///%s/%s" % (zone, iid)},
            "status": {"conditions": [{"type": "Ready", "status": ready}],
                       "addresses": [{"type": "InternalIP", "address": "10.0.1.%d" % (len(name) + 10)}],
                       "nodeInfo": {"kubeletVersion": "v1.33.2-eks-abc"}}}


def pod(ns, name, node_name, claims, phase="Running"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": {"app": "db"}},
            "spec": {"nodeName": node_name, "containers": [{"name": "main", "image": "postgres:16",
                                                            "volumeMounts": [{"name": "v%d" % i, "mountPath": "/d%d" % i}
                                                                             for i, _ in enumerate(claims)]}],
                     "volumes": [{"name": "v%d" % i, "persistentVolumeClaim": {"claimName": c}}
                                 for i, c in enumerate(claims)]},
            "status": {"phase": phase}}


def cluster_spec(version="1.33", sidecar=False):
    objs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "db"}},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "gp2", "annotations": {
            "storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "ebs.csi.aws.com",
         "parameters": {"type": "gp2"}, "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer",
         "allowVolumeExpansion": True},
        node("ip-10-0-1-1.ec2.internal", "i-0aaa"),
        node("ip-10-0-2-2.ec2.internal", "i-0bbb", zone="us-east-1b"),
        pv("pv-a", "vol-0a", ("db", "data-db-0")),
        pv("pv-b", "vol-0b", ("db", "data-db-1")),
        pv("pv-c", "vol-0c", ("db", "data-db-2")),
        pv("pv-legacy", "vol-0d", ("default", "data-old-0"), csi=False),
        pvc("db", "data-db-0", "pv-a"), pvc("db", "data-db-1", "pv-b"), pvc("db", "data-db-2", "pv-c"),
        pvc("default", "data-old-0", "pv-legacy"),
        pod("db", "db-0", "ip-10-0-1-1.ec2.internal", ["data-db-0"]),
        pod("db", "db-1", "ip-10-0-1-1.ec2.internal", ["data-db-1"]),
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "db"},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "db"}}, "template": {
             "metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "main", "image": "postgres:16"}]}}},
         "status": {"replicas": 2, "readyReplicas": 2}},
    ]
    return {"name": "prod", "version": version, "region": "us-east-1", "eks_name": "prod-eks",
            "volume_modifier_sidecar": sidecar,
            "users": [{"name": "admin", "token": TOKENS["admin"], "allow": ["*"]},
                      {"name": "reader", "token": TOKENS["reader"],
                       "allow": ["list:persistentvolumes", "get:nodes/proxy"]},
                      {"name": "patcher", "token": TOKENS["patcher"],
                       "allow": ["get:persistentvolumeclaims", "patch:persistentvolumeclaims"]},
                      {"name": "cert-user", "client_cert": True, "allow": ["*"]},
                      {"name": "eks-admin", "eks_principal": "admin", "allow": ["list:*"]}],
            "objects": objs,
            "usage": {"db/data-db-0": {"used_bytes": 40 * 2**30, "capacity_bytes": 100 * 2**30},
                      "db/data-db-1": {"used_bytes": 5 * 2**30, "capacity_bytes": 100 * 2**30}}}


def gp2(size=100):
    return {"volume_id": "", "region": "us-east-1", "az": "us-east-1a", "type": "gp2", "size": size,
            "iops": max(100, 3 * size), "throughput": None, "tags": {}, "attachments": [{"instance_id": "i-0aaa"}]}


class Base(unittest.TestCase):
    version = "1.33"
    sidecar = False

    def setUp(self):
        self.sim = StubSim()
        for vid in ("vol-0a", "vol-0b", "vol-0c", "vol-0d"):
            v = gp2()
            v["volume_id"] = vid
            self.sim.volumes[vid] = v
        self.c = K.KubeCluster(self.sim, cluster_spec(self.version, self.sidecar))

    def tearDown(self):
        self.c.close()

    def req(self, method, path, query="", body=None, user="admin", headers=None, ctype=None, cn=None):
        h = dict(headers or {})
        if user:
            h["Authorization"] = "Bearer " + TOKENS.get(user, user)
        if ctype:
            h["Content-Type"] = ctype
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        status, hdrs, data = self.c.handle(method, path, query, h, body or b"", cn)
        self.last_headers = hdrs
        try:
            return status, json.loads(data) if data else None
        except ValueError:
            return status, data

    def ok(self, method, path, query="", body=None, **kw):
        st, o = self.req(method, path, query, body, **kw)
        self.assertLess(st, 300, "%s %s -> %s %s" % (method, path, st, o))
        return o

    def advance(self, s):
        self.sim.advance(s, self.c)

    def pvc_obj(self, ns, name):
        return self.ok("GET", "/api/v1/namespaces/%s/persistentvolumeclaims/%s" % (ns, name))


class TestAuth(Base):
    def test_missing_token_401(self):
        st, o = self.req("GET", "/api/v1/persistentvolumes", user=None)
        self.assertEqual(st, 401)
        self.assertEqual(o, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                             "message": "Unauthorized", "reason": "Unauthorized", "code": 401})

    def test_bad_token_401_even_for_version(self):
        self.assertEqual(self.req("GET", "/version", user="nope")[0], 401)
        self.assertEqual(self.req("GET", "/version", user=None)[0], 200)

    def test_forbidden_message(self):
        st, o = self.req("GET", "/api/v1/persistentvolumeclaims", user="reader")
        self.assertEqual(st, 403)
        self.assertEqual(o["reason"], "Forbidden")
        self.assertEqual(o["message"], 'persistentvolumeclaims is forbidden: User "reader" cannot list resource '
                                       '"persistentvolumeclaims" in API group "" at the cluster scope')
        self.assertEqual(o["details"], {"kind": "persistentvolumeclaims"})
        st, o = self.req("GET", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses/x", user="reader")
        self.assertEqual(o["message"], 'volumeattributesclasses.storage.k8s.io "x" is forbidden: User "reader" cannot '
                                       'get resource "volumeattributesclasses" in API group "storage.k8s.io" at the '
                                       'cluster scope')
        st, o = self.req("GET", "/api/v1/namespaces/db/pods", user="reader")
        self.assertIn('in the namespace "db"', o["message"])
        self.assertEqual(self.req("GET", "/api/v1/persistentvolumes", user="reader")[0], 200)
        # forbidden comes before not-found
        self.assertEqual(self.req("GET", "/api/v1/nodes/nope", user="reader")[0], 403)

    def test_client_cert(self):
        st, _ = self.c.handle("GET", "/api/v1/persistentvolumes", "", {}, b"", "cert-user")[:2]
        self.assertEqual(st, 200)
        st, _, body = self.c.handle("GET", "/api/v1/persistentvolumes", "", {}, b"", "stranger")
        self.assertEqual(st, 403)
        self.assertIn('User "stranger"', json.loads(body)["message"])

    def test_eks_token(self):
        url = "https://sts.us-east-1.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Expires=60"
        self.sim.sts[url] = ("admin", "prod-eks")
        tok = "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
        st, o = self.req("GET", "/api/v1/persistentvolumes", user=tok)
        self.assertEqual(st, 200)
        self.assertEqual(self.sim.requests[-1]["principal"], "eks-admin")
        self.assertEqual(self.req("PATCH", "/api/v1/persistentvolumes/pv-a", body={}, user=tok,
                                  ctype="application/merge-patch+json")[0], 403)
        self.sim.sts[url] = ("admin", "other-cluster")
        self.assertEqual(self.req("GET", "/api/v1/persistentvolumes", user=tok)[0], 401)
        self.assertEqual(self.req("GET", "/api/v1/persistentvolumes", user="k8s-aws-v1.!!!")[0], 401)

    def test_request_log_never_has_tokens(self):
        self.req("GET", "/api/v1/persistentvolumes", query="limit=1")
        e = self.sim.requests[-1]
        self.assertEqual((e["service"], e["cluster"], e["action"], e["status"], e["principal"]),
                         ("kube", "prod", "GET /api/v1/persistentvolumes", 200, "admin"))
        self.assertEqual(e["params"], {"limit": "1"})
        self.assertNotIn("tok-admin", json.dumps(self.sim.requests))


class TestDiscovery(Base):
    def test_version(self):
        v = self.ok("GET", "/version")
        self.assertEqual((v["major"], v["minor"]), ("1", "33"))
        self.assertTrue(v["gitVersion"].startswith("v1.33.2"))

    def test_groups_and_resources(self):
        self.assertEqual(self.ok("GET", "/api")["versions"], ["v1"])
        groups = {g["name"]: g for g in self.ok("GET", "/apis")["groups"]}
        self.assertEqual([v["version"] for v in groups["storage.k8s.io"]["versions"]], ["v1", "v1beta1"])
        self.assertEqual(groups["storage.k8s.io"]["preferredVersion"]["version"], "v1")
        res = {r["name"]: r for r in self.ok("GET", "/apis/storage.k8s.io/v1beta1")["resources"]}
        self.assertEqual(res["volumeattributesclasses"]["kind"], "VolumeAttributesClass")
        self.assertFalse(res["volumeattributesclasses"]["namespaced"])
        core = {r["name"]: r for r in self.ok("GET", "/api/v1")["resources"]}
        self.assertIn("pods/log", core)
        self.assertIn("nodes/proxy", core)
        self.assertEqual(core["persistentvolumeclaims"]["shortNames"], ["pvc"])
        self.assertIn("jobs", {r["name"] for r in self.ok("GET", "/apis/batch/v1")["resources"]})
        self.assertIn("statefulsets", {r["name"] for r in self.ok("GET", "/apis/apps/v1")["resources"]})
        self.assertEqual(self.req("GET", "/apis/storage.k8s.io/v1/volumeattributesclasses")[0], 404)

    def test_vac_versions(self):
        for version, vv in (("1.34", "v1"), ("1.31", "v1beta1"), ("1.30", "v1alpha1"), ("1.29", "v1alpha1"),
                            ("1.28", None)):
            c = K.KubeCluster(self.sim, cluster_spec(version))
            vers = [r for r in c.types if r.plural == "volumeattributesclasses"]
            self.assertEqual(vers[0].version if vers else None, vv, version)
            c.close()

    def test_openapi_v3(self):
        idx = self.ok("GET", "/openapi/v3")
        url = idx["paths"]["apis/storage.k8s.io/v1beta1"]["serverRelativeURL"]
        path, _, q = url.partition("?")
        doc = self.ok("GET", path, q)
        p = doc["paths"]["/apis/storage.k8s.io/v1beta1/volumeattributesclasses/{name}"]["patch"]
        self.assertIn("fieldValidation", [x["name"] for x in p["parameters"]])
        self.assertEqual(self.req("GET", "/openapi/v2")[0], 404)


class TestLists(Base):
    def test_list_shape(self):
        o = self.ok("GET", "/api/v1/persistentvolumeclaims")
        self.assertEqual((o["kind"], o["apiVersion"]), ("PersistentVolumeClaimList", "v1"))
        self.assertTrue(o["metadata"]["resourceVersion"].isdigit())
        self.assertEqual([i["metadata"]["name"] for i in o["items"]], ["data-db-0", "data-db-1", "data-db-2",
                                                                        "data-old-0"])
        self.assertNotIn("kind", o["items"][0])
        self.assertTrue(o["items"][0]["metadata"]["uid"])
        o = self.ok("GET", "/api/v1/namespaces/db/persistentvolumeclaims")
        self.assertEqual(len(o["items"]), 3)
        names = [n["metadata"]["name"] for n in self.ok("GET", "/api/v1/namespaces")["items"]]
        self.assertEqual(names, ["db", "default", "kube-node-lease", "kube-public", "kube-system"])

    def collect(self, path, limit, query=""):
        items, cont, pages = [], "", 0
        while True:
            q = "limit=%d" % limit + ("&continue=" + cont if cont else "") + query
            o = self.ok("GET", path, q)
            pages += 1
            items += [i["metadata"]["name"] for i in o["items"]]
            cont = o["metadata"].get("continue")
            if not cont:
                return items, pages

    def test_pagination(self):
        items, pages = self.collect("/api/v1/persistentvolumeclaims", 2)
        self.assertEqual(len(items), 4)
        self.assertEqual(pages, 2)
        o = self.ok("GET", "/api/v1/persistentvolumeclaims", "limit=1")
        self.assertEqual(o["metadata"]["remainingItemCount"], 3)
        items, pages = self.collect("/api/v1/persistentvolumes", 3, "&labelSelector=")
        self.assertEqual(items, ["pv-a", "pv-b", "pv-c", "pv-legacy"])

    def test_snapshot_consistency(self):
        o = self.ok("GET", "/api/v1/persistentvolumes", "limit=2")
        self.ok("DELETE", "/api/v1/persistentvolumes/pv-c")
        self.ok("POST", "/api/v1/persistentvolumes", body=pv("pv-z", "vol-0z", ("db", "x")))
        o2 = self.ok("GET", "/api/v1/persistentvolumes", "limit=5&continue=" + o["metadata"]["continue"])
        self.assertEqual([i["metadata"]["name"] for i in o2["items"]], ["pv-c", "pv-legacy"])
        self.assertEqual(o2["metadata"]["resourceVersion"], o["metadata"]["resourceVersion"])

    def test_continue_expires_with_age(self):
        o = self.ok("GET", "/api/v1/persistentvolumeclaims", "limit=1")
        self.advance(301)
        st, s = self.req("GET", "/api/v1/persistentvolumeclaims", "limit=1&continue=" + o["metadata"]["continue"])
        self.assertEqual(st, 410)
        self.assertEqual(s["reason"], "Expired")
        self.assertEqual(s["message"], K.INCONSISTENT_CONTINUE)
        self.assertTrue(s["metadata"]["continue"])
        # the token in the 410 continues at the latest state
        o3 = self.ok("GET", "/api/v1/persistentvolumeclaims", "limit=10&continue=" + s["metadata"]["continue"])
        self.assertEqual([i["metadata"]["name"] for i in o3["items"]], ["data-db-1", "data-db-2", "data-old-0"])

    def test_continue_ttl_ignores_time_scale(self):
        import types
        self.sim.clock = types.SimpleNamespace(advanced=0.0)
        o = self.ok("GET", "/api/v1/persistentvolumeclaims", "limit=1")
        self.sim.t += 100000          # a fast --time-scale moves the sim clock, not the token's age
        o2 = self.ok("GET", "/api/v1/persistentvolumeclaims", "limit=1&continue=" + o["metadata"]["continue"])
        self.sim.clock.advanced += 301  # `ctl advance 301` does age it
        st, _ = self.req("GET", "/api/v1/persistentvolumeclaims", "limit=1&continue=" + o2["metadata"]["continue"])
        self.assertEqual(st, 410)

    def test_expire_continue_fault(self):
        self.sim.faults.append({"service": "kube", "action": "list:persistentvolumeclaims", "kind": "expire-continue"})
        o = self.ok("GET", "/api/v1/persistentvolumeclaims", "limit=1")  # a first page cannot expire
        st, s = self.req("GET", "/api/v1/persistentvolumeclaims", "limit=1&continue=" + o["metadata"]["continue"])
        self.assertEqual(st, 410)
        self.assertEqual(self.sim.requests[-1]["error_code"], "Expired")
        self.assertEqual(self.req("GET", "/api/v1/persistentvolumeclaims", "limit=1&continue=garbage")[0], 400)

    def test_selectors(self):
        o = self.ok("GET", "/api/v1/pods", "fieldSelector=spec.nodeName%3Dip-10-0-1-1.ec2.internal")
        self.assertEqual(len(o["items"]), 2)
        o = self.ok("GET", "/api/v1/pods", "fieldSelector=spec.nodeName%3Dnope")
        self.assertEqual(o["items"], [])
        o = self.ok("GET", "/api/v1/persistentvolumeclaims", "labelSelector=app%20in%20(db,x)")
        self.assertEqual(len(o["items"]), 3)
        o = self.ok("GET", "/api/v1/persistentvolumeclaims", "labelSelector=app!%3Ddb")
        self.assertEqual([i["metadata"]["name"] for i in o["items"]], ["data-old-0"])
        o = self.ok("GET", "/api/v1/persistentvolumes", "fieldSelector=metadata.name%3Dpv-b")
        self.assertEqual(len(o["items"]), 1)
        st, s = self.req("GET", "/api/v1/persistentvolumeclaims", "fieldSelector=spec.nodeName%3Dx")
        self.assertEqual((st, s["message"]), (400, "field label not supported: spec.nodeName"))

    def test_every_resource_lists_as_table_and_json(self):
        h = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
        for rt in self.c.types:
            base = "/api/v1" if not rt.group else "/apis/%s/%s" % (rt.group, rt.version)
            t = self.ok("GET", base + "/" + rt.plural, headers=h)
            self.assertEqual(t["kind"], "Table", rt.plural)
            for row in t["rows"]:
                self.assertEqual(len(row["cells"]), len(t["columnDefinitions"]), rt.plural)
            self.assertEqual(self.ok("GET", base + "/" + rt.plural)["kind"], rt.kind + "List")

    def test_table(self):
        h = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
                       "g=meta.k8s.io,application/json"}
        o = self.ok("GET", "/api/v1/persistentvolumeclaims", "limit=500", headers=h)
        self.assertEqual(o["kind"], "Table")
        self.assertEqual(self.last_headers["Content-Type"], "application/json;as=Table;v=v1;g=meta.k8s.io")
        cols = [c["name"] for c in o["columnDefinitions"]]
        self.assertEqual(cols[:7], ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass",
                                    "VolumeAttributesClass"])
        self.assertEqual(o["rows"][0]["cells"][:6], ["data-db-0", "Bound", "pv-a", "100Gi", "RWO", "gp2"])
        self.assertEqual(o["rows"][0]["object"]["kind"], "PartialObjectMetadata")
        sc = self.ok("GET", "/apis/storage.k8s.io/v1/storageclasses", headers=h)
        self.assertEqual(sc["rows"][0]["cells"][0], "gp2 (default)")
        o = self.ok("GET", "/api/v1/persistentvolumeclaims", headers={"Accept": "application/json"})
        self.assertEqual(o["kind"], "PersistentVolumeClaimList")
        pm = {"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"}
        o = self.ok("GET", "/api/v1/namespaces/db/persistentvolumeclaims", headers=pm)
        self.assertEqual((o["kind"], o["items"][0]["kind"]), ("PartialObjectMetadataList", "PartialObjectMetadata"))


class TestWrites(Base):
    VAC = {"apiVersion": "storage.k8s.io/v1beta1", "kind": "VolumeAttributesClass", "metadata": {"name": "gp3-3000-125"},
           "driverName": "ebs.csi.aws.com", "parameters": {"type": "gp3", "iops": "3000", "throughput": "125"}}

    def test_get_404_and_create_409(self):
        st, o = self.req("GET", "/api/v1/namespaces/db/persistentvolumeclaims/nope")
        self.assertEqual((st, o["reason"], o["message"]), (404, "NotFound", 'persistentvolumeclaims "nope" not found'))
        o = self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=self.VAC)
        self.assertEqual(o["kind"], "VolumeAttributesClass")
        st, o = self.req("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=self.VAC)
        self.assertEqual((st, o["reason"]), (409, "AlreadyExists"))
        self.assertEqual(o["message"], 'volumeattributesclasses.storage.k8s.io "gp3-3000-125" already exists')
        bad = copy.deepcopy(self.VAC)
        bad["metadata"]["name"] = "n"
        bad["parameters"]["iops"] = 3000
        self.assertEqual(self.req("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=bad)[0], 400)

    def test_vac_parameters_immutable(self):
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=self.VAC)
        st, o = self.req("PATCH", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses/gp3-3000-125",
                         body={"parameters": {"iops": "4000"}}, ctype="application/merge-patch+json")
        self.assertEqual((st, o["reason"]), (422, "Invalid"))
        self.assertEqual(o["message"], 'VolumeAttributesClass.storage.k8s.io "gp3-3000-125" is invalid: parameters: '
                                       'Invalid value: map[string]string{"iops":"4000", "throughput":"125", '
                                       '"type":"gp3"}: field is immutable')
        self.assertEqual(o["details"]["causes"][0]["field"], "parameters")
        # labels may change
        o = self.ok("PATCH", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses/gp3-3000-125",
                    body={"metadata": {"labels": {"a": "b"}}}, ctype="application/merge-patch+json")
        self.assertEqual(o["metadata"]["labels"], {"a": "b"})

    def test_rv_increments_and_put_conflict(self):
        o = self.pvc_obj("db", "data-db-0")
        rv0 = int(o["metadata"]["resourceVersion"])
        o2 = self.ok("PATCH", "/api/v1/namespaces/db/persistentvolumeclaims/data-db-0",
                     body={"metadata": {"annotations": {"x": "1"}}}, ctype="application/merge-patch+json")
        self.assertGreater(int(o2["metadata"]["resourceVersion"]), rv0)
        # no-op patch keeps the resourceVersion
        o3 = self.ok("PATCH", "/api/v1/namespaces/db/persistentvolumeclaims/data-db-0",
                     body={"metadata": {"annotations": {"x": "1"}}}, ctype="application/merge-patch+json")
        self.assertEqual(o3["metadata"]["resourceVersion"], o2["metadata"]["resourceVersion"])
        st, c = self.req("PUT", "/api/v1/namespaces/db/persistentvolumeclaims/data-db-0", body=o)
        self.assertEqual((st, c["reason"]), (409, "Conflict"))
        self.assertIn("the object has been modified", c["message"])
        o2["metadata"]["labels"]["y"] = "2"
        o4 = self.ok("PUT", "/api/v1/namespaces/db/persistentvolumeclaims/data-db-0", body=o2)
        self.assertEqual(o4["metadata"]["labels"]["y"], "2")
        del o4["metadata"]["resourceVersion"]
        self.assertEqual(self.req("PUT", "/api/v1/namespaces/db/persistentvolumeclaims/data-db-0", body=o4)[0], 422)

    def test_patch_kinds(self):
        p = "/api/v1/namespaces/db/persistentvolumeclaims/data-db-1"
        o = self.ok("PATCH", p, body={"metadata": {"labels": {"k": "v"}}}, ctype="application/strategic-merge-patch+json")
        self.assertEqual(o["metadata"]["labels"], {"app": "db", "k": "v"})
        o = self.ok("PATCH", p, body=[{"op": "add", "path": "/metadata/annotations", "value": {"a~b/c": "1"}},
                                      {"op": "remove", "path": "/metadata/labels/k"}],
                    ctype="application/json-patch+json")
        self.assertEqual(o["metadata"]["labels"], {"app": "db"})
        self.assertEqual(o["metadata"]["annotations"], {"a~b/c": "1"})
        self.assertEqual(self.req("PATCH", p, body={}, ctype="text/plain")[0], 415)
        st, c = self.req("PATCH", p, body={"metadata": {"resourceVersion": "1"}}, ctype="application/merge-patch+json")
        self.assertEqual(st, 409)
        # spec of a bound claim is immutable except requests and volumeAttributesClassName
        st, c = self.req("PATCH", p, body={"spec": {"storageClassName": "other"}}, ctype="application/merge-patch+json")
        self.assertEqual((st, c["reason"]), (422, "Invalid"))
        # status is ignored on the main resource, written on /status
        o = self.ok("PATCH", p, body={"status": {"phase": "Lost"}}, ctype="application/merge-patch+json")
        self.assertEqual(o["status"]["phase"], "Bound")
        o = self.ok("PATCH", p + "/status", body={"status": {"phase": "Lost"}}, ctype="application/merge-patch+json")
        self.assertEqual(o["status"]["phase"], "Lost")

    def test_dry_run_and_delete(self):
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", "dryRun=All", body=self.VAC)
        self.assertEqual(self.req("GET", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses/gp3-3000-125")[0], 404)
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=self.VAC)
        o = self.ok("DELETE", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses/gp3-3000-125",
                    "propagationPolicy=Background")
        self.assertEqual((o["kind"], o["status"], o["details"]["kind"]), ("Status", "Success", "volumeattributesclasses"))
        self.assertEqual(self.req("DELETE", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses/gp3-3000-125")[0], 404)

    def test_create_in_missing_namespace(self):
        st, o = self.req("POST", "/api/v1/namespaces/nope/configmaps", body={"metadata": {"name": "x"}, "data": {}})
        self.assertEqual((st, o["message"]), (404, 'namespaces "nope" not found'))
        o = self.ok("POST", "/api/v1/namespaces/db/configmaps", body={"metadata": {"generateName": "cm-"}, "data": {}})
        self.assertTrue(o["metadata"]["name"].startswith("cm-") and len(o["metadata"]["name"]) == 8)

    def test_watch(self):
        o = self.ok("GET", "/api/v1/namespaces/db/persistentvolumeclaims")
        rv = o["metadata"]["resourceVersion"]
        self.ok("PATCH", "/api/v1/namespaces/db/persistentvolumeclaims/data-db-2",
                body={"metadata": {"labels": {"w": "1"}}}, ctype="application/merge-patch+json")
        st, h, body = self.c.handle("GET", "/api/v1/namespaces/db/persistentvolumeclaims",
                                    "watch=true&resourceVersion=" + rv + "&timeoutSeconds=1",
                                    {"Authorization": "Bearer tok-admin"}, b"", None)
        evs = [json.loads(line) for line in body.splitlines()]
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs], [("MODIFIED", "data-db-2")])
        t0 = time.monotonic()
        st, h, body = self.c.handle("GET", "/api/v1/namespaces/db/persistentvolumeclaims",
                                    "watch=true&resourceVersion=%s&timeoutSeconds=1" % self.c.rv,
                                    {"Authorization": "Bearer tok-admin"}, b"", None)
        self.assertEqual(body, b"")
        self.assertGreaterEqual(time.monotonic() - t0, 0.9)


class TestFaults(Base):
    def test_throttle(self):
        self.sim.faults.append({"service": "kube", "action": "list:persistentvolumes", "kind": "throttle"})
        st, o = self.req("GET", "/api/v1/persistentvolumes")
        self.assertEqual((st, o["reason"], self.last_headers["Retry-After"]), (429, "TooManyRequests", "1"))
        self.assertEqual(o["details"], {"retryAfterSeconds": 1})
        self.assertEqual(self.req("GET", "/api/v1/persistentvolumes")[0], 200)

    def test_5xx_truncate_drop(self):
        self.sim.faults.append({"service": "kube", "action": "*", "kind": "5xx", "status": 503})
        self.assertEqual(self.req("GET", "/api/v1/persistentvolumes")[0], 503)
        self.sim.faults.append({"service": "kube", "action": "list:persistentvolumes", "kind": "truncate"})
        st, data = self.req("GET", "/api/v1/persistentvolumes")
        self.assertEqual(st, 200)
        self.assertIsInstance(data, bytes)
        self.sim.faults.append({"service": "kube", "action": "list:persistentvolumes", "kind": "drop"})
        r = self.c.handle("GET", "/api/v1/persistentvolumes", "", {"Authorization": "Bearer tok-admin"}, b"", None)
        self.assertEqual(r, K.DROP)
        self.assertEqual(self.sim.requests[-1]["status"], 0)


VAC = TestWrites.VAC


class TestCSI(Base):
    P = "/api/v1/namespaces/db/persistentvolumeclaims/data-db-0"

    def set_vac(self, name, path=None, user="admin"):
        return self.ok("PATCH", path or self.P, body={"spec": {"volumeAttributesClassName": name}},
                       ctype="application/merge-patch+json", user=user)

    def ec2_calls(self):
        return [r for r in self.sim.requests if r["service"] == "ec2" and r["action"] == "ModifyVolume"]

    def test_happy_path(self):
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=VAC)
        resp = self.set_vac("gp3-3000-125", user="patcher")
        self.assertNotIn("modifyVolumeStatus", resp["status"])
        o = self.pvc_obj("db", "data-db-0")
        self.assertEqual(o["status"]["modifyVolumeStatus"], {"targetVolumeAttributesClassName": "gp3-3000-125",
                                                             "status": "InProgress"})
        self.assertEqual(o["status"]["conditions"][0]["type"], "ModifyingVolume")
        calls = self.ec2_calls()
        self.assertEqual(len(calls), 1)
        self.assertEqual(calls[0]["principal"], "ebs-csi-controller")
        self.assertEqual(calls[0]["params"], {"VolumeId": "vol-0a", "VolumeType": "gp3", "Iops": "3000",
                                              "Throughput": "125"})
        self.advance(30)
        self.assertEqual(self.pvc_obj("db", "data-db-0")["status"]["modifyVolumeStatus"]["status"], "InProgress")
        self.advance(31)   # optimizing
        o = self.pvc_obj("db", "data-db-0")
        self.assertEqual(o["status"]["currentVolumeAttributesClassName"], "gp3-3000-125")
        self.assertNotIn("modifyVolumeStatus", o["status"])
        self.assertNotIn("conditions", o["status"])
        self.assertEqual(self.ok("GET", "/api/v1/persistentvolumes/pv-a")["spec"]["volumeAttributesClassName"],
                         "gp3-3000-125")
        self.assertEqual(self.sim.volumes["vol-0a"]["type"], "gp3")
        evs = self.ok("GET", "/api/v1/namespaces/db/events",
                      "fieldSelector=involvedObject.name%3Ddata-db-0,involvedObject.kind%3DPersistentVolumeClaim")
        self.assertEqual([e["reason"] for e in evs["items"]], ["VolumeModify", "VolumeModifySuccessful"])
        self.assertEqual(len(self.ec2_calls()), 1)
        # removing the class again is forbidden
        st, o = self.req("PATCH", self.P, body={"spec": {"volumeAttributesClassName": None}},
                         ctype="application/merge-patch+json")
        self.assertEqual(st, 422)

    def test_pending_then_created(self):
        self.set_vac("gp3-3000-125")
        self.assertEqual(self.pvc_obj("db", "data-db-0")["status"]["modifyVolumeStatus"]["status"], "Pending")
        self.assertEqual(self.ec2_calls(), [])
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=VAC)
        self.assertEqual(self.pvc_obj("db", "data-db-0")["status"]["modifyVolumeStatus"]["status"], "InProgress")
        self.assertEqual(len(self.ec2_calls()), 1)

    def test_infeasible_unknown_key(self):
        v = copy.deepcopy(VAC)
        v["metadata"]["name"] = "bad"
        v["parameters"]["blockExpress"] = "true"
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=v)
        self.set_vac("bad")
        o = self.pvc_obj("db", "data-db-0")
        self.assertEqual(o["status"]["modifyVolumeStatus"]["status"], "Infeasible")
        self.assertIn("Invalid mutable parameter key: blockExpress", o["status"]["conditions"][0]["message"])
        self.assertEqual(self.ec2_calls(), [])
        st = self.c.state()
        self.assertEqual(st["modify_ops"][0]["state"], "infeasible")
        self.assertIn("VolumeModifyFailed", [e["reason"] for e in st["events"]])
        # fixing the class name recovers
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=VAC)
        self.set_vac("gp3-3000-125")
        self.assertEqual(self.pvc_obj("db", "data-db-0")["status"]["modifyVolumeStatus"]["status"], "InProgress")

    def test_infeasible_ec2_rejects(self):
        v = copy.deepcopy(VAC)
        v["metadata"]["name"] = "low"
        v["parameters"]["iops"] = "100"
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=v)
        self.set_vac("low")
        o = self.pvc_obj("db", "data-db-0")
        self.assertEqual(o["status"]["modifyVolumeStatus"]["status"], "Infeasible")
        self.assertIn("InvalidParameterValue", o["status"]["conditions"][0]["message"])

    def test_infeasible_from_an_injected_ec2_error(self):
        # `ctl fault {"kind": "error", ...}` reaches the driver's ModifyVolume, which skips the EC2 app
        self.sim.faults.append({"service": "ec2", "action": "ModifyVolume", "kind": "error", "volume_id": "vol-0a",
                                "code": "InvalidParameterCombination", "message": "not with this volume"})
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=VAC)
        self.set_vac("gp3-3000-125")
        o = self.pvc_obj("db", "data-db-0")
        self.assertEqual(o["status"]["modifyVolumeStatus"]["status"], "Infeasible")
        self.assertIn("api error InvalidParameterCombination: not with this volume",
                      o["status"]["conditions"][0]["message"])
        self.assertEqual([(c["status"], c["error_code"]) for c in self.ec2_calls()],
                         [(400, "InvalidParameterCombination")])
        self.advance(3600)   # Infeasible is not retried while the class stays the same
        self.assertEqual(len(self.ec2_calls()), 1)
        self.assertEqual(self.sim.volumes["vol-0a"]["type"], "gp2")

    def test_transient_error_retries(self):
        self.sim.mods["vol-0a"] = [{"state": "optimizing", "start": self.sim.t - 100, "target": {}, "original": {}}]
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=VAC)
        self.set_vac("gp3-3000-125")
        o = self.pvc_obj("db", "data-db-0")
        self.assertEqual(o["status"]["modifyVolumeStatus"]["status"], "InProgress")
        self.assertEqual(o["status"]["conditions"][0]["type"], "ModifyVolumeError")
        self.sim.mods["vol-0a"][-1]["state"] = "completed"
        self.advance(11)
        self.assertEqual(self.pvc_obj("db", "data-db-0")["status"]["modifyVolumeStatus"]["status"], "InProgress")
        self.assertEqual([c["status"] for c in self.ec2_calls()], [400, 200])
        self.advance(60)
        self.assertEqual(self.pvc_obj("db", "data-db-0")["status"]["currentVolumeAttributesClassName"], "gp3-3000-125")

    def test_rate_refusal_is_a_retried_error_with_awss_text(self):
        # EC2 refuses the driver's ModifyVolume for the 4-per-24-h rule: the external-resizer's
        # shape (InProgress, ModifyVolumeError condition "ModifyVolume failed with error: <driver
        # error>. Waiting for retry.", a Warning VolumeModifyFailed event with the driver's error),
        # the driver's error carrying the SDK's text and AWS's message, and retries with backoff.
        aws_msg = ("You've reached the maximum modification rate per volume limit. "
                   "You can modify this volume again after 2026-11-01T04:00:00Z.")
        self.sim.faults.append({"service": "ec2", "action": "ModifyVolume", "kind": "error", "volume_id": "vol-0a",
                                "code": "VolumeModificationRateExceeded", "message": aws_msg})
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=VAC)
        self.set_vac("gp3-3000-125")
        o = self.pvc_obj("db", "data-db-0")
        self.assertEqual(o["status"]["modifyVolumeStatus"], {"targetVolumeAttributesClassName": "gp3-3000-125",
                                                             "status": "InProgress"})
        cond = o["status"]["conditions"][0]
        self.assertEqual(cond["type"], "ModifyVolumeError")
        self.assertRegex(cond["message"], r'^ModifyVolume failed with error: rpc error: code = Internal desc = Could '
                         r'not modify volume "vol-0a": operation error EC2: ModifyVolume, https response error '
                         r'StatusCode: 400, RequestID: [0-9a-f-]{36}, api error VolumeModificationRateExceeded: ' +
                         re.escape(aws_msg) + r'\. Waiting for retry\.$')
        ev = [e for e in self.c.state()["events"] if e["reason"] == "VolumeModifyFailed"]
        self.assertEqual(len(ev), 1)
        self.assertEqual(ev[0]["type"], "Warning")
        self.assertTrue(cond["message"].startswith("ModifyVolume failed with error: " + ev[0]["message"]))
        self.advance(11)
        self.assertEqual([c["error_code"] for c in self.ec2_calls()], ["VolumeModificationRateExceeded"] * 2)
        self.assertNotIn("currentVolumeAttributesClassName", self.pvc_obj("db", "data-db-0")["status"])

    def test_in_tree_never_modified(self):
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=VAC)
        self.set_vac("gp3-3000-125", path="/api/v1/namespaces/default/persistentvolumeclaims/data-old-0")
        self.advance(700)
        o = self.pvc_obj("default", "data-old-0")
        self.assertNotIn("modifyVolumeStatus", o["status"])
        self.assertNotIn("currentVolumeAttributesClassName", o["status"])
        self.assertEqual(self.ec2_calls(), [])
        self.assertEqual(self.sim.volumes["vol-0d"]["type"], "gp2")

    def test_already_matching_volume_completes_without_call(self):
        self.sim.volumes["vol-0a"].update({"type": "gp3", "iops": 3000, "throughput": 125})
        self.ok("POST", "/apis/storage.k8s.io/v1beta1/volumeattributesclasses", body=VAC)
        self.set_vac("gp3-3000-125")
        self.assertEqual(self.pvc_obj("db", "data-db-0")["status"]["currentVolumeAttributesClassName"], "gp3-3000-125")
        self.assertEqual(self.ec2_calls(), [])


class TestSidecar(Base):
    sidecar = True

    def test_annotations(self):
        p = "/api/v1/namespaces/db/persistentvolumeclaims/data-db-1"
        self.ok("PATCH", p, body={"metadata": {"annotations": {"ebs.csi.aws.com/volumeType": "gp3",
                                                               "ebs.csi.aws.com/iops": "4000",
                                                               "ebs.csi.aws.com/throughput": "250"}}},
                ctype="application/merge-patch+json")
        calls = [r for r in self.sim.requests if r["action"] == "ModifyVolume"]
        self.assertEqual(calls[0]["params"], {"VolumeId": "vol-0b", "VolumeType": "gp3", "Iops": "4000",
                                              "Throughput": "250"})
        self.advance(61)
        ann = self.ok("GET", "/api/v1/persistentvolumes/pv-b")["metadata"]["annotations"]
        self.assertEqual(ann["ebs.csi.aws.com/iops"], "4000")
        self.assertEqual(self.sim.volumes["vol-0b"]["iops"], 4000)
        self.advance(61)
        self.assertEqual(len([r for r in self.sim.requests if r["action"] == "ModifyVolume"]), 1)


class TestKubelet(Base):
    def test_summary(self):
        o = self.ok("GET", "/api/v1/nodes/ip-10-0-1-1.ec2.internal/proxy/stats/summary", user="reader")
        self.assertEqual(o["node"]["nodeName"], "ip-10-0-1-1.ec2.internal")
        vols = {(p["podRef"]["name"], v["pvcRef"]["name"]): v for p in o["pods"] for v in p.get("volume", [])}
        v = vols[("db-0", "data-db-0")]
        self.assertEqual((v["usedBytes"], v["capacityBytes"], v["availableBytes"]),
                         (40 * 2**30, 100 * 2**30, 60 * 2**30))
        self.assertIn(("db-1", "data-db-1"), vols)
        self.assertEqual(self.req("GET", "/api/v1/nodes/nope/proxy/stats/summary")[0], 404)
        o = self.ok("GET", "/api/v1/nodes/ip-10-0-2-2.ec2.internal/proxy/stats/summary")
        self.assertEqual(o["pods"], [])


@unittest.skipUnless(shutil.which("fio"), "fio not installed")
class TestJobs(Base):
    def job(self, name, cmd, restart="Never", backoff=0):
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "db"},
                "spec": {"backoffLimit": backoff, "template": {"spec": {
                    "restartPolicy": restart,
                    "containers": [{"name": "fio", "image": "ebsmigrate/fio:3.33", "command": cmd,
                                    "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-2"}}]}}}}

    def wait_job(self, name, timeout=60):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            j = self.ok("GET", "/apis/batch/v1/namespaces/db/jobs/" + name)
            if any(c["type"] in ("Complete", "Failed") for c in j["status"].get("conditions", [])):
                return j
            time.sleep(0.1)
        self.fail("job did not finish")

    def test_fio_job(self):
        cmd = ["fio", "--name=t", "--filename=/data/fio.test", "--size=4M", "--rw=randwrite", "--bs=4k",
               "--ioengine=psync", "--output-format=json"]
        self.ok("POST", "/apis/batch/v1/namespaces/db/jobs", body=self.job("bench", cmd))
        j = self.wait_job("bench")
        self.assertEqual(j["status"]["succeeded"], 1)
        self.assertEqual([c["type"] for c in j["status"]["conditions"]], ["SuccessCriteriaMet", "Complete"])
        pods = self.ok("GET", "/api/v1/namespaces/db/pods", "labelSelector=job-name%3Dbench")["items"]
        self.assertEqual(len(pods), 1)
        p = pods[0]
        self.assertEqual(p["status"]["phase"], "Succeeded")
        self.assertEqual(p["status"]["containerStatuses"][0]["state"]["terminated"]["reason"], "Completed")
        self.assertEqual(p["spec"]["nodeName"], "ip-10-0-1-1.ec2.internal")
        st, log = self.req("GET", "/api/v1/namespaces/db/pods/%s/log" % p["metadata"]["name"])
        self.assertEqual(st, 200)
        rep = log if isinstance(log, dict) else json.loads(log[log.index(b"{"):])
        self.assertEqual(rep["jobs"][0]["jobname"], "t")
        fn = rep["jobs"][0]["job options"]["filename"]
        self.assertFalse(fn.startswith("/data/"), fn)
        self.assertTrue(fn.endswith("/fio.test"), fn)

    def test_fio_failure_and_shell(self):
        self.ok("POST", "/apis/batch/v1/namespaces/db/jobs",
                body=self.job("bad", ["sh", "-c", "fio --name=x --filename=/data/f --size=1M --rw=nonsense"]))
        j = self.wait_job("bad")
        self.assertEqual(j["status"]["failed"], 1)
        self.assertEqual(j["status"]["conditions"][-1]["reason"], "BackoffLimitExceeded")

    def test_delete_kills_fio(self):
        cmd = ["fio", "--name=t", "--filename=/data/f", "--size=4M", "--rw=randread", "--time_based", "--runtime=60"]
        self.ok("POST", "/apis/batch/v1/namespaces/db/jobs", body=self.job("long", cmd))
        pods = self.ok("GET", "/api/v1/namespaces/db/pods", "labelSelector=job-name%3Dlong")["items"]
        key = "db/" + pods[0]["metadata"]["name"]
        run = self.c.runs[key]["fio"]
        for _ in range(50):
            if run.proc is not None:
                break
            time.sleep(0.05)
        self.ok("DELETE", "/apis/batch/v1/namespaces/db/jobs/long", "propagationPolicy=Background")
        self.assertTrue(run.done.wait(10))
        self.assertEqual(self.ok("GET", "/api/v1/namespaces/db/pods", "labelSelector=job-name%3Dlong")["items"], [])

    def run_pod(self, name, container, volumes=None):
        self.ok("POST", "/api/v1/namespaces/db/pods", body={"metadata": {"name": name}, "spec": {
            "restartPolicy": "Never", "containers": [container], "volumes": volumes or []}})
        for _ in range(300):
            p = self.ok("GET", "/api/v1/namespaces/db/pods/" + name)
            if p["status"]["phase"] in ("Succeeded", "Failed"):
                return p, self.req("GET", "/api/v1/namespaces/db/pods/%s/log" % name)[1]
            time.sleep(0.05)
        self.fail("pod did not finish")

    def test_block_device_and_host_paths(self):
        vol = [{"name": "raw", "persistentVolumeClaim": {"claimName": "data-db-2"}}]
        p, log = self.run_pod("blk", {"name": "fio", "image": "fio", "command": [
            "fio", "--name=b", "--filename=/dev/xvdf", "--size=1M", "--rw=write", "--output=/results/o.json",
            "--output-format=json"], "volumeDevices": [{"name": "raw", "devicePath": "/dev/xvdf"}]}, vol)
        self.assertEqual(p["status"]["phase"], "Succeeded", log)
        pdir = self.c.pod_dirs["db/blk"]
        self.assertEqual(os.path.getsize(os.path.join(pdir, "devices", "raw.img")), 1 << 20)
        with open(os.path.join(pdir, "rootfs", "results", "o.json")) as f:
            self.assertEqual(json.load(f)["jobs"][0]["jobname"], "b")
        # a host device that is not one of the pod's volumeDevices is never touched
        p, log = self.run_pod("host", {"name": "fio", "image": "fio", "command": [
            "sh", "-c", "fio --name=h --filename=/dev/sda --rw=read --size=1M"]})
        self.assertEqual(p["status"]["phase"], "Failed")
        self.assertIn(b"refusing to run fio against host path /dev/sda", log)

    def test_configmap_job_file(self):
        self.ok("POST", "/api/v1/namespaces/db/configmaps", body={"metadata": {"name": "fiojob"}, "data": {
            "job.fio": "[global]\ndirectory=/data\nsize=1M\n[w]\nrw=write\n"}})
        p, log = self.run_pod("cm", {"name": "fio", "image": "fio", "command": [
            "fio", "--output-format=json", "/etc/fio/job.fio"],
            "volumeMounts": [{"name": "job", "mountPath": "/etc/fio"}, {"name": "d", "mountPath": "/data"}]},
            [{"name": "job", "configMap": {"name": "fiojob"}},
             {"name": "d", "persistentVolumeClaim": {"claimName": "data-db-2"}}])
        self.assertEqual(p["status"]["phase"], "Succeeded", log)
        rep = log if isinstance(log, dict) else json.loads(log[log.index(b"{"):])
        self.assertEqual(rep["jobs"][0]["jobname"], "w")

    def test_bad_restart_policy(self):
        st, o = self.req("POST", "/apis/batch/v1/namespaces/db/jobs", body=self.job("x", ["fio"], restart="Always"))
        self.assertEqual((st, o["reason"]), (422, "Invalid"))

    def test_plain_pod_runs(self):
        o = self.ok("POST", "/api/v1/namespaces/db/pods", body={"metadata": {"name": "sleeper"}, "spec": {
            "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"]}]}})
        self.assertEqual(o["status"]["phase"], "Pending")
        p = self.ok("GET", "/api/v1/namespaces/db/pods/sleeper")
        self.assertEqual(p["status"]["phase"], "Running")
        st, log = self.req("GET", "/api/v1/namespaces/db/pods/sleeper/log")
        self.assertEqual((st, log), (200, None))


if __name__ == "__main__":
    unittest.main(verbosity=1)
