"""Events for what is stuck Pending (ebssim_kube_events.py), on scenario bench-pending, read back
by the reference client: `kubectl get events -o json` (with --field-selector
involvedObject.name=...) and the raw API with the same fieldSelector.
Run: /usr/bin/python3 tests/sim/test_kube_events.py   (skips without /usr/bin/kubectl)"""

import json
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import SimTestCase  # noqa: E402

KUBECTL = shutil.which("kubectl")


def claim(name, sc):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "bench"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                     "resources": {"requests": {"storage": "20Gi"}}}}


def pod(name, claim_name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "bench"},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"],
                                     "volumeMounts": [{"name": "d", "mountPath": "/data"}]}],
                     "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": claim_name}}]}}


@unittest.skipUnless(KUBECTL, "kubectl not installed")
class TestPendingEvents(SimTestCase):
    scenario = "bench-pending"

    @classmethod
    def set_up_sim(cls):
        cls.env = dict(os.environ, KUBECONFIG=cls.sim.env["KUBECONFIG"], HOME=cls.sim.dir)

    def kubectl(self, *args, stdin=None):
        p = subprocess.run([KUBECTL, "--context", "prod"] + list(args), input=stdin, env=self.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def events(self, name, want_reason, timeout=10):
        """kubectl's events about NAME once one has reason want_reason (the sim ticks on requests)."""
        end = time.time() + timeout
        while True:
            evs = json.loads(self.kubectl("get", "events", "-n", "bench", "-o", "json",
                                          "--field-selector", "involvedObject.name=" + name))
            if any(e.get("reason") == want_reason for e in evs["items"]) or time.time() > end:
                return evs
            time.sleep(0.3)

    def test_provisioning_failed_claim(self):
        self.kubectl("create", "-f", "-", stdin=json.dumps(claim("typo", "gp3-typo")))
        evs = self.events("typo", "ProvisioningFailed")
        self.assertEqual(evs["kind"], "List")
        by_reason = {e["reason"]: e for e in evs["items"]}
        self.assertEqual(set(by_reason), {"ExternalProvisioning", "Provisioning", "ProvisioningFailed"})
        f = by_reason["ProvisioningFailed"]
        self.assertEqual(f["type"], "Warning")
        self.assertEqual(f["involvedObject"]["kind"], "PersistentVolumeClaim")
        self.assertEqual(f["involvedObject"]["namespace"], "bench")
        self.assertIn('failed to provision volume with StorageClass "gp3-typo"', f["message"])
        self.assertTrue(f["source"]["component"].startswith("ebs.csi.aws.com_"))
        self.assertEqual(f["count"], 1)
        self.assertTrue(f["firstTimestamp"] and f["lastTimestamp"])
        self.assertIn("external provisioner 'ebs.csi.aws.com'", by_reason["ExternalProvisioning"]["message"])
        self.assertEqual(by_reason["ExternalProvisioning"]["source"]["component"], "persistentvolume-controller")
        # the claim stays Pending
        pvc = json.loads(self.kubectl("get", "pvc", "-n", "bench", "typo", "-o", "json"))
        self.assertEqual(pvc["status"]["phase"], "Pending")

    def test_wait_for_first_consumer_then_unschedulable(self):
        self.kubectl("create", "-f", "-", stdin=json.dumps(claim("wffc", "gp3")))
        evs = self.events("wffc", "WaitForFirstConsumer")
        self.assertEqual([(e["type"], e["reason"], e["message"]) for e in evs["items"]],
                         [("Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")])
        self.kubectl("create", "-f", "-", stdin=json.dumps(pod("wffc-user", "wffc")))
        evs = self.events("wffc-user", "FailedScheduling")
        fs = [e for e in evs["items"] if e["reason"] == "FailedScheduling"]
        self.assertEqual(len(fs), 1)
        self.assertEqual(fs[0]["type"], "Warning")
        self.assertIn("pod has unbound immediate PersistentVolumeClaims", fs[0]["message"])
        # the scheduler's shape: eventTime, no first/lastTimestamp, reportingComponent
        self.assertEqual(fs[0]["reportingComponent"], "default-scheduler")
        self.assertIsNone(fs[0].get("lastTimestamp"))
        self.assertRegex(fs[0]["eventTime"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
        self.assertEqual(fs[0]["action"], "Scheduling")
        evs = self.events("wffc", "ExternalProvisioning")
        self.assertIn("ExternalProvisioning", [e["reason"] for e in evs["items"]])
        # kubectl's table reads the same objects
        table = self.kubectl("get", "events", "-n", "bench", "--field-selector", "involvedObject.name=wffc-user")
        self.assertIn("FailedScheduling", table)
        self.assertIn("pod/wffc-user", table)

    def test_unschedulable_volume_zone(self):
        self.kubectl("create", "-f", "-", stdin=json.dumps(pod("zone-user", "data-zone-c")))
        evs = self.events("zone-user", "FailedScheduling")
        fs = [e for e in evs["items"] if e["reason"] == "FailedScheduling"]
        self.assertEqual(len(fs), 1, evs)
        self.assertRegex(fs[0]["message"], r"^0/2 nodes are available: 2 node\(s\) didn't match .*volume node affinity")
        p = json.loads(self.kubectl("get", "pod", "-n", "bench", "zone-user", "-o", "json"))
        self.assertEqual(p["status"]["phase"], "Pending")
        self.assertEqual(p["status"]["conditions"][0]["reason"], "Unschedulable")
        # only this pod's events: the field selector is honoured
        self.assertEqual({e["involvedObject"]["name"] for e in evs["items"]}, {"zone-user"})


if __name__ == "__main__":
    unittest.main()
