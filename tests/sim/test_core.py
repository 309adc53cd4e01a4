"""Self-tests of the simulator's process and machinery: start-up cost, files, loopback-only
listening, SIGTERM, clock scaling, `ebssim ctl`, faults, the generator, Pricing GetProducts.
Run: /usr/bin/python3 -m unittest tests/sim/test_core.py"""

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest

import botocore.exceptions
import botocore.parsers

from simtest import EBSSIM, SimProcess, SimTestCase

HERE = os.path.dirname(os.path.abspath(__file__))


def listening_addresses(pid):
    """Local addresses of the LISTEN sockets the process owns (from /proc)."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    out = []
    for table in ("tcp", "tcp6"):
        with open("/proc/%d/net/%s" % (pid, table)) as f:
            next(f)
            for line in f:
                parts = line.split()
                if parts[3] == "0A" and parts[9] in inodes:  # 0A = LISTEN
                    out.append((table, parts[1].split(":")[0]))
    return out


def cpu_seconds(pid):
    """User + system CPU seconds a process has used, with those of the children it waited for."""
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


class Process(unittest.TestCase):
    def test_startup_files_loopback_and_sigterm(self):
        sim = SimProcess("basic")
        try:
            # start-up is cheap: the CPU time it took to get ready (the simulator's own and that of
            # the openssl runs it waited for), not the wall time, which a busy machine stretches
            self.assertLess(cpu_seconds(sim.proc.pid), 1.0)
            for name in ("env", "kubeconfig", "ca.crt", "ctl.url", "pid", "ready"):
                self.assertTrue(os.path.exists(os.path.join(sim.state_dir, name)), name)
            for key in ("AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_CLOUDWATCH", "AWS_ENDPOINT_URL_MONITORING",
                        "AWS_ENDPOINT_URL_PRICING", "AWS_ENDPOINT_URL_STS", "AWS_ACCESS_KEY_ID",
                        "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CA_BUNDLE",
                        "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "EBSSIM_CTL", "KUBECONFIG"):
                self.assertIn(key, sim.env)
            addrs = listening_addresses(sim.proc.pid)
            self.assertGreaterEqual(len(addrs), 9)  # 4 AWS + IMDS + container + ctl + 2 clusters
            self.assertEqual({a for _, a in addrs}, {"0100007F"})  # 127.0.0.1 only
            self.assertEqual(int(open(os.path.join(sim.state_dir, "pid")).read()), sim.proc.pid)
        finally:
            state = sim.state_dir
            sim.proc.terminate()
            self.assertEqual(sim.proc.wait(10), 0)
            self.assertFalse(os.path.exists(os.path.join(state, "ready")))
            sim.stop()

    def test_time_scale_and_ctl_command(self):
        sim = SimProcess("empty", ["--time-scale", "600"])
        try:
            time.sleep(0.5)
            now = sim.state()["now"]
            self.assertGreaterEqual(now, "2026-11-01T00:05:00Z")

            def ctl(*args):
                return subprocess.run(["/usr/bin/python3", EBSSIM, "ctl", "--state-dir", sim.state_dir] + list(args),
                                      capture_output=True, text=True, check=True).stdout
            before = sim.state()["now"]
            out = json.loads(ctl("advance", "86400"))
            self.assertGreaterEqual(out["now"], "2026-11-02T00:05:00Z")
            self.assertGreater(out["now"], before)
            self.assertEqual(json.loads(ctl("state"))["volumes"], {})
            sim.client("ec2").describe_volumes()
            reqs = json.loads(ctl("requests", "--service", "ec2"))
            self.assertEqual([r["action"] for r in reqs], ["DescribeVolumes"])
            ctl("reset-requests")
            self.assertEqual(json.loads(ctl("requests")), [])
            ctl("fault", '{"clear": true}')
            bad = subprocess.run(["/usr/bin/python3", EBSSIM, "ctl", "--state-dir", sim.state_dir, "fault",
                                  '{"kind": "meteor"}'], capture_output=True, text=True)
            self.assertEqual(bad.returncode, 1)
        finally:
            sim.stop()


class Faults(SimTestCase):
    sim_args = ("--seed", "7")

    @classmethod
    def set_up_sim(cls):
        cls.ec2 = cls.sim.client("ec2")

    def setUp(self):
        self.sim.fault({"clear": True})
        self.sim.reset_requests()

    def code(self, fn, **kw):
        try:
            fn(**kw)
        except botocore.exceptions.ClientError as e:
            return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
        return None

    def test_throttle_count_and_5xx(self):
        self.sim.fault({"service": "ec2", "action": "DescribeVolumes", "kind": "throttle", "count": 2})
        got = [self.code(self.ec2.describe_volumes) for _ in range(3)]
        self.assertEqual(got, [("RequestLimitExceeded", 503)] * 2 + [None])
        self.assertIsNone(self.code(self.ec2.describe_instances))
        self.sim.fault({"service": "ec2", "kind": "5xx", "count": 1})
        self.assertEqual(self.code(self.ec2.describe_volumes), ("InternalError", 500))
        self.sim.fault({"service": "pricing", "kind": "throttle", "count": 1})
        self.assertEqual(self.code(self.sim.client("pricing").get_products, ServiceCode="AmazonEC2"),
                         ("ThrottlingException", 400))
        log = [e for e in self.sim.requests("ec2") if e["error_code"] == "RequestLimitExceeded"]
        self.assertEqual(len(log), 2)

    def test_retries_ride_out_throttling(self):
        self.sim.fault({"service": "ec2", "kind": "throttle", "count": 2})
        vols = self.sim.client("ec2", retries=4).describe_volumes()["Volumes"]
        self.assertEqual(len(vols), 10)

    def test_slow_drop_truncate(self):
        self.sim.fault({"service": "sts", "kind": "slow", "delay_s": 1.0, "count": 1})
        t0 = time.time()
        self.sim.client("sts").get_caller_identity()
        self.assertGreaterEqual(time.time() - t0, 1.0)
        # urllib3 1.x does not enforce Content-Length, so botocore may see the cut body instead
        self.sim.fault({"service": "ec2", "kind": "drop", "count": 1})
        with self.assertRaises((botocore.exceptions.BotoCoreError, botocore.parsers.ResponseParserError)):
            self.ec2.describe_volumes()
        self.sim.fault({"service": "ec2", "kind": "truncate", "count": 1})
        with self.assertRaises((botocore.exceptions.BotoCoreError, botocore.parsers.ResponseParserError)):
            self.ec2.describe_volumes()
        self.assertEqual(len(self.ec2.describe_volumes()["Volumes"]), 10)

    def test_hold_until_released(self):
        # the held request waits, before anything is judged, until `ctl release`; it then goes on
        self.sim.fault({"service": "ec2", "action": "DescribeVolumes", "kind": "hold", "count": 1})
        done = []
        t = threading.Thread(target=lambda: done.append(len(self.ec2.describe_volumes()["Volumes"])))
        t.start()
        deadline = time.time() + 30
        while not self.sim.held() and time.time() < deadline:
            time.sleep(0.05)
        held = self.sim.held()
        self.assertEqual([(h["service"], h["action"]) for h in held], [("ec2", "DescribeVolumes")])
        self.assertEqual(done, [])
        self.assertEqual([e for e in self.sim.requests("ec2") if e["action"] == "DescribeVolumes"], [])
        self.assertEqual(self.sim.release(), {"released": 1})
        t.join(30)
        self.assertEqual(done, [10])
        self.assertEqual(self.sim.held(), [])
        self.assertEqual(len(self.ec2.describe_volumes()["Volumes"]), 10)  # count 1: not held again

    def test_repeat_token_is_a_pagination_error_for_botocore(self):
        """`repeat-token`: every page answers with the same token, which botocore's paginator (the
        reference client) refuses with PaginationError, as ebsmigrate must."""
        self.sim.fault({"service": "ec2", "action": "DescribeVolumes", "kind": "repeat-token"})
        pages = self.ec2.get_paginator("describe_volumes").paginate(PaginationConfig={"PageSize": 5})
        with self.assertRaises(botocore.exceptions.PaginationError):
            for _ in pages:
                pass
        sent = [e["params"].get("NextToken") for e in self.sim.requests("ec2")]
        self.assertEqual(sent, [None, "ebssim-repeated-token"])
        self.sim.fault({"service": "ec2", "action": "DescribeInstances", "kind": "repeat-token"})
        first = self.ec2.describe_instances()
        self.assertEqual(first["NextToken"], "ebssim-repeated-token")
        self.sim.fault({"service": "monitoring", "kind": "repeat-token"})
        cw = self.sim.client("cloudwatch")
        out = cw.get_metric_data(MetricDataQueries=[{"Id": "a", "MetricStat": {
            "Metric": {"Namespace": "AWS/EBS", "MetricName": "VolumeReadOps",
                       "Dimensions": [{"Name": "VolumeId", "Value": "vol-0aa00000000000001"}]},
            "Period": 300, "Stat": "Sum"}}], StartTime=0, EndTime=600)
        self.assertEqual(out["NextToken"], "ebssim-repeated-token")

    def test_skew(self):
        self.sim.fault({"service": "ec2", "kind": "skew", "skew_s": 900, "count": 1})
        self.assertEqual(self.code(self.ec2.describe_volumes)[0], "RequestExpired")
        self.assertIsNone(self.code(self.ec2.describe_volumes))

    def test_rate_is_deterministic_for_a_seed(self):
        def run(sim):
            sim.fault({"clear": True})
            sim.fault({"service": "sts", "kind": "throttle", "rate": 0.5})
            sts = sim.client("sts")
            return [self.code(sts.get_caller_identity) is None for _ in range(16)]
        first = run(self.sim)
        self.assertIn(True, first)
        self.assertIn(False, first)
        other = SimProcess("empty", ["--seed", "7"])
        try:
            self.assertEqual(run(other), first)
        finally:
            other.stop()


class Generator(unittest.TestCase):
    def test_generated_fleet_serves(self):
        d = tempfile.mkdtemp()
        try:
            out = os.path.join(d, "g.json")
            cmd = ["/usr/bin/python3", EBSSIM, "gen", "--volumes", "2500", "--clusters", "2", "--regions", "2",
                   "--seed", "3", "--out", out]
            subprocess.run(cmd, check=True, capture_output=True)
            first = open(out, "rb").read()
            subprocess.run(cmd, check=True, capture_output=True)
            self.assertEqual(open(out, "rb").read(), first)  # deterministic
            scen = json.loads(first)
            self.assertEqual(len(scen["volumes"]), 2500)
            self.assertEqual(len(scen["clusters"]), 2)
            types = [v["type"] for v in scen["volumes"]]
            self.assertGreater(types.count("gp2") / 2500.0, 0.6)
            unattached = sum(1 for v in scen["volumes"] if not v.get("attachments"))
            self.assertTrue(0.05 < unattached / 2500.0 < 0.2)
            kinds = {}
            for c in scen["clusters"]:
                for o in c["objects"]:
                    kinds[o["kind"]] = kinds.get(o["kind"], 0) + 1
            self.assertGreater(kinds["PersistentVolume"], 1800)
            self.assertGreater(kinds["StatefulSet"], 100)
            self.assertIn("Node", kinds)
            sim = SimProcess(out)
            try:
                ec2 = sim.client("ec2", region=scen["default_region"])
                pages = list(ec2.get_paginator("describe_volumes").paginate(PaginationConfig={"PageSize": 1000}))
                want = sum(1 for v in scen["volumes"] if v["region"] == scen["default_region"])
                self.assertEqual(sum(len(p["Volumes"]) for p in pages), want)
            finally:
                sim.stop()
        finally:
            shutil.rmtree(d)


def price_item(region, api, family, usagetype, unit, usd, sku):
    return json.dumps({"product": {"productFamily": family, "sku": sku,
                                   "attributes": {"regionCode": region, "volumeApiName": api,
                                                  "usagetype": usagetype, "servicecode": "AmazonEC2"}},
                       "serviceCode": "AmazonEC2",
                       "terms": {"OnDemand": {sku + ".T": {"priceDimensions": {sku + ".T.D": {
                           "unit": unit, "pricePerUnit": {"USD": usd}}}}}}})


class Pricing(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        items = [price_item("us-east-1", "gp2", "Storage", "EBS:VolumeUsage.gp2", "GB-Mo", "0.10", "A1"),
                 price_item("us-east-1", "gp3", "Storage", "EBS:VolumeUsage.gp3", "GB-Mo", "0.08", "A2"),
                 price_item("us-east-1", "gp3", "System Operation", "EBS:VolumeP-IOPS.gp3", "IOPS-Mo", "0.005", "A3"),
                 price_item("ap-northeast-2", "gp2", "Storage", "APN2-EBS:VolumeUsage.gp2", "GB-Mo", "0.114", "B1"),
                 price_item("ap-northeast-2", "gp3", "Storage", "APN2-EBS:VolumeUsage.gp3", "GB-Mo", "0.0912", "B2")]
        with open(os.path.join(cls.dir, "fixture.json"), "w") as f:
            json.dump({"FormatVersion": "aws_v1", "PriceList": items}, f)
        cls.sim = SimProcess("empty", ["--pricing-dir", cls.dir])
        cls.p = cls.sim.client("pricing")

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()
        shutil.rmtree(cls.dir)

    def test_filters_and_pages(self):
        def skus(filters, **kw):
            out = self.p.get_products(ServiceCode="AmazonEC2", Filters=filters, **kw)
            return sorted(json.loads(x)["product"]["sku"] if isinstance(x, str) else x["product"]["sku"]
                          for x in out["PriceList"]), out
        got, out = skus([{"Type": "TERM_MATCH", "Field": "regionCode", "Value": "ap-northeast-2"}])
        self.assertEqual(got, ["B1", "B2"])
        self.assertEqual(out["FormatVersion"], "aws_v1")
        got, _ = skus([{"Type": "TERM_MATCH", "Field": "volumeApiName", "Value": "gp3"},
                       {"Type": "TERM_MATCH", "Field": "productFamily", "Value": "Storage"}])
        self.assertEqual(got, ["A2", "B2"])
        pages = list(self.p.get_paginator("get_products").paginate(ServiceCode="AmazonEC2",
                                                                   PaginationConfig={"PageSize": 2}))
        self.assertEqual([len(x["PriceList"]) for x in pages], [2, 2, 1])
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.p.get_products(ServiceCode="AmazonEC2", MaxResults=101)
        self.assertEqual(c.exception.response["Error"]["Code"], "InvalidParameterException")
        with self.assertRaises(botocore.exceptions.ClientError) as c:
            self.p.get_products(ServiceCode="AmazonEC2", NextToken="bogus")
        self.assertEqual(c.exception.response["Error"]["Code"], "InvalidNextTokenException")

    def test_describe_services_and_attribute_values(self):
        svc = self.p.describe_services(ServiceCode="AmazonEC2")["Services"][0]
        self.assertIn("volumeApiName", svc["AttributeNames"])
        vals = self.p.get_attribute_values(ServiceCode="AmazonEC2", AttributeName="volumeApiName")
        self.assertEqual([v["Value"] for v in vals["AttributeValues"]], ["gp2", "gp3"])

    def test_raw_price_list_strings(self):
        status, _, body = self.sim.signed(
            "pricing", "AWS_ENDPOINT_URL_PRICING", json.dumps({"ServiceCode": "AmazonEC2", "MaxResults": 1}),
            {"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSPriceListService.GetProducts"})
        out = json.loads(body)
        self.assertEqual(status, 200)
        self.assertIsInstance(out["PriceList"][0], str)  # PriceList holds JSON strings
        self.assertIn("NextToken", out)


if __name__ == "__main__":
    unittest.main()
