"""kubectl against ebssim_kube.KubeCluster through a throwaway loopback HTTP bridge and the stub sim of
test_kube.py (no TLS, no core). Checks the reference client's view of the wire formats: discovery
fallback, Table printing, -o json, chunked lists, apply, patch, logs, wait.
Run: /usr/bin/python3 tests/sim/test_kube_kubectl.py   (skips without /usr/bin/kubectl)"""

import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ebssim_kube as K  # noqa: E402
from test_kube import StubSim, cluster_spec, gp2, TOKENS  # noqa: E402

KUBECTL = shutil.which("kubectl")


def make_cert(d):
    """Self-signed certificate for 127.0.0.1 (client-go never sends tokens over plain http)."""
    crt, key = os.path.join(d, "srv.crt"), os.path.join(d, "srv.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-addext", "basicConstraints=critical,CA:TRUE"], check=True, capture_output=True)
    return crt, key


def serve(cluster, crt, key):
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _do(self):
            u = urlsplit(self.path)
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            st, hdrs, data = cluster.handle(self.command, u.path, u.query, dict(self.headers.items()), body, None)
            if st == 0:
                self.close_connection = True
                return
            self.send_response(st)
            for k, v in hdrs.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _do

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@unittest.skipUnless(KUBECTL and shutil.which("openssl"), "kubectl or openssl not installed")
class TestKubectl(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim = StubSim()
        for vid in ("vol-0a", "vol-0b", "vol-0c", "vol-0d"):
            v = gp2()
            v["volume_id"] = vid
            cls.sim.volumes[vid] = v
        cls.c = K.KubeCluster(cls.sim, cluster_spec("1.33"))
        cls.tmp = tempfile.mkdtemp(prefix="ebssim-kubectl-")
        crt, key = make_cert(cls.tmp)
        cls.srv = serve(cls.c, crt, key)
        kc = {"apiVersion": "v1", "kind": "Config", "current-context": "prod",
              "clusters": [{"name": "prod", "cluster": {"server": "https://127.0.0.1:%d" % cls.srv.server_port,
                                                           "certificate-authority": crt}}],
              "users": [{"name": u, "user": {"token": t}} for u, t in TOKENS.items()],
              "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "admin"}},
                           {"name": "reader", "context": {"cluster": "prod", "user": "reader"}}]}
        cls.kubeconfig = os.path.join(cls.tmp, "kubeconfig")
        with open(cls.kubeconfig, "w") as f:
            json.dump(kc, f)

    @classmethod
    def tearDownClass(cls):
        cls.srv.shutdown()
        cls.c.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def kubectl(self, *args, stdin=None, ok=True):
        env = dict(os.environ, KUBECONFIG=self.kubeconfig, KUBECACHEDIR=os.path.join(self.tmp, "cache"),
                   HOME=self.tmp)
        p = subprocess.run([KUBECTL] + list(args), input=stdin, capture_output=True, text=True, env=env, timeout=60)
        if ok:
            self.assertEqual(p.returncode, 0, "kubectl %s\nstdout: %s\nstderr: %s" % (" ".join(args), p.stdout, p.stderr))
        return p

    def test_get_json(self):
        out = json.loads(self.kubectl("get", "pv,pvc", "-A", "-o", "json").stdout)
        names = [(i["kind"], i["metadata"]["name"]) for i in out["items"]]
        self.assertIn(("PersistentVolume", "pv-a"), names)
        self.assertIn(("PersistentVolumeClaim", "data-old-0"), names)
        self.assertEqual(len(names), 8)

    def test_table_and_chunks(self):
        p = self.kubectl("get", "pvc", "-A", "--chunk-size=2")
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split()[:4], ["NAMESPACE", "NAME", "STATUS", "VOLUME"])
        self.assertEqual(len(lines), 5, p.stdout)
        reqs = [r for r in self.sim.requests if r["action"] == "GET /api/v1/persistentvolumeclaims"]
        self.assertTrue(any("continue" in r["params"] for r in reqs))
        p = self.kubectl("get", "nodes,sc,sts,pods", "-A")
        self.assertIn("gp2 (default)", p.stdout)
        self.assertIn("ip-10-0-1-1.ec2.internal", p.stdout)

    def test_forbidden(self):
        p = self.kubectl("--context", "reader", "get", "pvc", "-A", ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('User "reader" cannot list resource "persistentvolumeclaims"', p.stderr)

    def test_apply_patch_vac(self):
        vac = {"apiVersion": "storage.k8s.io/v1beta1", "kind": "VolumeAttributesClass",
               "metadata": {"name": "gp3-3000-125"}, "driverName": "ebs.csi.aws.com",
               "parameters": {"type": "gp3", "iops": "3000", "throughput": "125"}}
        p = self.kubectl("apply", "-f", "-", stdin=json.dumps(vac))
        self.assertIn("created", p.stdout)
        p = self.kubectl("apply", "-f", "-", stdin=json.dumps(vac))
        self.assertIn("unchanged", p.stdout)
        p = self.kubectl("get", "vac")
        self.assertIn("gp3-3000-125", p.stdout)
        self.kubectl("patch", "pvc", "data-db-1", "-n", "db", "--type=merge", "-p",
                     '{"spec":{"volumeAttributesClassName":"gp3-3000-125"}}')
        st = json.loads(self.kubectl("get", "pvc", "data-db-1", "-n", "db", "-o", "json").stdout)["status"]
        self.assertEqual(st["modifyVolumeStatus"]["status"], "InProgress")
        self.sim.advance(61, self.c)
        st = json.loads(self.kubectl("get", "pvc", "data-db-1", "-n", "db", "-o", "json").stdout)["status"]
        self.assertEqual(st["currentVolumeAttributesClassName"], "gp3-3000-125")
        vac["parameters"]["iops"] = "4000"
        p = self.kubectl("apply", "-f", "-", stdin=json.dumps(vac), ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("field is immutable", p.stderr)
        p = self.kubectl("describe", "pvc", "data-db-1", "-n", "db")
        self.assertIn("VolumeModifySuccessful", p.stdout)

    def test_server_side_apply_and_annotate(self):
        vac = {"apiVersion": "storage.k8s.io/v1beta1", "kind": "VolumeAttributesClass",
               "metadata": {"name": "ssa"}, "driverName": "ebs.csi.aws.com", "parameters": {"type": "gp3"}}
        p = self.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(vac))
        self.assertIn("serverside-applied", p.stdout)
        p = self.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(vac))
        self.assertIn("serverside-applied", p.stdout)
        self.kubectl("annotate", "pvc", "data-db-0", "-n", "db", "x=1")
        self.kubectl("label", "pvc", "data-db-0", "-n", "db", "y=2")
        o = json.loads(self.kubectl("get", "pvc", "data-db-0", "-n", "db", "-o", "json").stdout)
        self.assertEqual((o["metadata"]["annotations"]["x"], o["metadata"]["labels"]["y"]), ("1", "2"))
        p = self.kubectl("delete", "vac", "ssa")
        self.assertIn("deleted", p.stdout)

    @unittest.skipUnless(shutil.which("fio"), "fio not installed")
    def test_job_logs_wait(self):
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bench", "namespace": "db"},
               "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [{
                   "name": "fio", "image": "fio", "command": ["fio", "--name=k", "--filename=/data/t", "--size=2M",
                                                              "--rw=write", "--output-format=json"],
                   "volumeMounts": [{"name": "d", "mountPath": "/data"}]}],
                   "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data-db-2"}}]}}}}
        self.kubectl("create", "-f", "-", stdin=json.dumps(job))
        self.kubectl("wait", "--for=condition=complete", "job/bench", "-n", "db", "--timeout=60s")
        p = self.kubectl("logs", "job/bench", "-n", "db")
        self.assertEqual(json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]["jobname"], "k")
        p = self.kubectl("get", "jobs", "-n", "db")
        self.assertIn("Complete", p.stdout)
        p = self.kubectl("delete", "job", "bench", "-n", "db")
        self.assertIn("deleted", p.stdout)

    def test_summary_raw(self):
        p = self.kubectl("get", "--raw", "/api/v1/nodes/ip-10-0-1-1.ec2.internal/proxy/stats/summary")
        self.assertEqual(json.loads(p.stdout)["node"]["nodeName"], "ip-10-0-1-1.ec2.internal")
        p = self.kubectl("version", "-o", "json")
        self.assertTrue(json.loads(p.stdout)["serverVersion"]["gitVersion"].startswith("v1.33.2"))


if __name__ == "__main__":
    unittest.main(verbosity=1)
