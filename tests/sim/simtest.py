"""Helpers for the simulator's self-tests (tests/sim/test_*.py): start `ebssim serve` on a
fresh state dir, read its env file, make botocore clients and signed raw requests, talk
to the control endpoint, stop it with SIGTERM; SimTestCase, a test class with a simulator of its
own.  Not a test module itself."""

import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import botocore.auth  # noqa: E402
import botocore.awsrequest  # noqa: E402
import botocore.config  # noqa: E402
import botocore.credentials  # noqa: E402
import botocore.session  # noqa: E402

from ebssim_envfile import read_env_file  # noqa: E402

EBSSIM = os.path.join(HERE, "ebssim")
ADMIN = ("AKIASIMADMIN0000001", "ebssim/admin/secret/key/0000000000000001")
READONLY = ("AKIASIMREADONLY0001", "ebssim/readonly/secret/key/00000000000001")


class SimProcess:
    def __init__(self, scenario="basic", extra=()):
        self.dir = tempfile.mkdtemp(prefix="ebssim-test-")
        self.state_dir = os.path.join(self.dir, "state")
        self.log = open(os.path.join(self.dir, "sim.log"), "w")
        t0 = time.time()
        self.proc = subprocess.Popen(["/usr/bin/python3", EBSSIM, "serve", "--scenario", scenario,
                                      "--state-dir", self.state_dir] + list(extra),
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        while not os.path.exists(os.path.join(self.state_dir, "ready")):
            if self.proc.poll() is not None:
                raise RuntimeError("ebssim exited: " + open(self.log.name).read())
            if time.time() - t0 > 60:
                raise RuntimeError("ebssim not ready after 60 s")
            time.sleep(0.02)
        self.startup_s = time.time() - t0
        self.env = read_env_file(os.path.join(self.state_dir, "env"))
        self.ca = self.env["AWS_CA_BUNDLE"]
        self.ctl_url = self.env["EBSSIM_CTL"]

    def stop(self):
        rc = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        else:
            rc = self.proc.returncode
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc

    # ---- control endpoint

    def ctl(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.ctl_url + path, data=data, method=method)
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    def advance(self, seconds):
        return self.ctl("POST", "/advance", {"seconds": seconds})

    def state(self):
        return self.ctl("GET", "/state")

    def requests(self, service=None):
        return self.ctl("GET", "/requests" + ("?service=" + service if service else ""))

    def fault(self, spec):
        return self.ctl("POST", "/fault", spec)

    def reset_requests(self):
        return self.ctl("POST", "/reset-requests", {})

    def held(self):
        return self.ctl("GET", "/held")

    def release(self):
        return self.ctl("POST", "/release", {})

    # ---- clients

    def client(self, service, region="us-east-1", keys=ADMIN, token=None, retries=1):
        endpoint = {"ec2": "AWS_ENDPOINT_URL_EC2", "cloudwatch": "AWS_ENDPOINT_URL_CLOUDWATCH",
                    "pricing": "AWS_ENDPOINT_URL_PRICING", "sts": "AWS_ENDPOINT_URL_STS",
                    "cloudtrail": "AWS_ENDPOINT_URL_CLOUDTRAIL",
                    "organizations": "AWS_ENDPOINT_URL_ORGANIZATIONS"}[service]
        session = botocore.session.Session()
        session.set_config_variable("config_file", os.devnull)
        session.set_config_variable("credentials_file", os.devnull)
        return session.create_client(
            service, region_name=region, endpoint_url=self.env[endpoint], verify=self.ca,
            aws_access_key_id=keys[0], aws_secret_access_key=keys[1], aws_session_token=token,
            config=botocore.config.Config(retries={"total_max_attempts": retries, "mode": "standard"},
                                          read_timeout=20, connect_timeout=5))

    def signed(self, service, endpoint_var, body, headers=None, region="us-east-1", keys=ADMIN,
               signing_name=None, method="POST", query=""):
        """A raw SigV4-signed request (botocore signs it); -> (status, headers, body bytes)."""
        url = self.env[endpoint_var] + "/" + (("?" + query) if query else "")
        req = botocore.awsrequest.AWSRequest(method=method, url=url, data=body, headers=headers or {})
        creds = botocore.credentials.Credentials(*keys)
        botocore.auth.SigV4Auth(creds, signing_name or service, region).add_auth(req)
        return raw(req.method, url, dict(req.headers.items()), req.body, self.ca)


class SimTestCase(unittest.TestCase):
    """A test class with a simulator of its own, started once for the class on `scenario` with
    `sim_args` and stopped after its last test; `set_up_sim` adds what the class needs next
    (clients, a clock advance)."""
    scenario = "basic"
    sim_args = ()

    @classmethod
    def setUpClass(cls):
        cls.sim = SimProcess(cls.scenario, cls.sim_args)
        cls.set_up_sim()

    @classmethod
    def set_up_sim(cls):
        pass

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()


def raw(method, url, headers, body, ca=None):
    ctx = ssl.create_default_context(cafile=ca) if url.startswith("https") else None
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(url, data=data if data else None, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status, dict(r.headers.items()), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), e.read()
