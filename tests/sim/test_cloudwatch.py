"""Self-tests of CloudWatch GetMetricData (JSON 1.0 and query/XML protocols) and of the gp2
credit model behind the series.  Run: /usr/bin/python3 -m unittest tests/sim/test_cloudwatch.py"""

import datetime
import json
import unittest
import xml.etree.ElementTree as ET


import ebssim_metrics as M
from simtest import SimTestCase

START = 1793491200  # 2026-11-01T00:00:00Z, the scenarios' start
CLIFF = "vol-0cc00000000000001"
JSON_H = {"Content-Type": "application/x-amz-json-1.0",
          "X-Amz-Target": "GraniteServiceVersion20100801.GetMetricData"}


def stat(qid, metric, vid, period=60, stat="Sum"):
    return {"Id": qid, "MetricStat": {"Metric": {"Namespace": "AWS/EBS", "MetricName": metric,
                                                 "Dimensions": [{"Name": "VolumeId", "Value": vid}]},
                                      "Period": period, "Stat": stat}}


class Cliff(SimTestCase):
    """A 100 GiB gp2 at 3,000 IOPS demand from a full bucket: 3,000 IOPS until 2,000 s, then 300."""
    scenario = "cliff"

    @classmethod
    def set_up_sim(cls):
        cls.sim.advance(2700)

    def json_call(self, body):
        status, headers, out = self.sim.signed("monitoring", "AWS_ENDPOINT_URL_CLOUDWATCH", json.dumps(body), JSON_H)
        return status, headers, json.loads(out)

    def test_json_protocol_cliff(self):
        status, headers, out = self.json_call({
            "MetricDataQueries": [{"Id": "kiops", "Expression": "iops / 1000"},  # uses a later expression
                                  stat("r", "VolumeReadOps", CLIFF), {"Id": "iops", "Expression": "r/PERIOD(r)"},
                                  stat("b", "BurstBalance", CLIFF, stat="Average"),
                                  stat("q", "VolumeQueueLength", CLIFF, stat="Average"),
                                  stat("x", "VolumeIOPSExceededCheck", CLIFF, stat="Average")],
            "StartTime": START + 1800, "EndTime": START + 2160, "ScanBy": "TimestampAscending"})
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "application/x-amz-json-1.0")
        res = {r["Id"]: r for r in out["MetricDataResults"]}
        self.assertEqual(res["r"]["Timestamps"], [START + 1800 + 60 * i for i in range(6)])
        self.assertEqual(res["iops"]["Values"], [3000.0, 3000.0, 3000.0, 1200.0, 300.0, 300.0])
        self.assertEqual(res["kiops"]["Values"], [3.0, 3.0, 3.0, 1.2, 0.3, 0.3])
        self.assertEqual(res["r"]["Label"], "VolumeReadOps")
        self.assertTrue(all(r["StatusCode"] == "Complete" for r in res.values()))
        self.assertEqual(res["q"]["Values"], [32.0] * 6)
        self.assertEqual(res["x"]["Values"][-1], 1.0)
        self.assertEqual(res["x"]["Values"][0], 0.0)
        self.assertAlmostEqual(res["b"]["Values"][0], 100 * (5.4e6 - 2700 * 1830) / 5.4e6, places=5)
        self.assertEqual(res["b"]["Values"][-1], 0.0)
        self.assertEqual(out["Messages"], [])

    def test_query_protocol_via_botocore(self):
        cw = self.sim.client("cloudwatch")
        t0 = datetime.datetime.fromtimestamp(START, datetime.timezone.utc)
        out = cw.get_metric_data(MetricDataQueries=[stat("r", "VolumeReadOps", CLIFF, period=300)],
                                 StartTime=t0, EndTime=t0 + datetime.timedelta(seconds=2700))
        r = out["MetricDataResults"][0]
        self.assertEqual(len(r["Values"]), 9)
        self.assertEqual(r["Timestamps"][0], t0 + datetime.timedelta(seconds=2400))  # newest first
        by_t = dict(zip([int(t.timestamp()) - START for t in r["Timestamps"]], r["Values"]))
        self.assertEqual(by_t[0], 900000.0)
        self.assertEqual(by_t[1800], 3000 * 200 + 300 * 100.0)
        self.assertEqual(by_t[2400], 90000.0)
        # the XML itself
        status, _, body = self.sim.signed(
            "monitoring", "AWS_ENDPOINT_URL_CLOUDWATCH",
            "Action=GetMetricData&Version=2010-08-01&StartTime=2026-11-01T00%3A00%3A00Z&EndTime=2026-11-01T00%3A10%3A00Z"
            "&MetricDataQueries.member.1.Id=r&MetricDataQueries.member.1.MetricStat.Metric.Namespace=AWS%2FEBS"
            "&MetricDataQueries.member.1.MetricStat.Metric.MetricName=VolumeReadOps"
            "&MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.1.Name=VolumeId"
            "&MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.1.Value=" + CLIFF +
            "&MetricDataQueries.member.1.MetricStat.Period=300&MetricDataQueries.member.1.MetricStat.Stat=Sum",
            {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
        ns = "{http://monitoring.amazonaws.com/doc/2010-08-01/}"
        root = ET.fromstring(body)
        self.assertEqual(root.tag, ns + "GetMetricDataResponse")
        member = root.find(ns + "GetMetricDataResult/" + ns + "MetricDataResults/" + ns + "member")
        self.assertEqual([m.text for m in member.find(ns + "Timestamps")],
                         ["2026-11-01T00:05:00Z", "2026-11-01T00:00:00Z"])
        self.assertEqual(member.find(ns + "StatusCode").text, "Complete")
        self.assertTrue(root.find(ns + "ResponseMetadata/" + ns + "RequestId").text)

    def test_pagination_with_max_datapoints(self):
        body = {"MetricDataQueries": [stat("r", "VolumeReadOps", CLIFF), stat("w", "VolumeWriteOps", CLIFF)],
                "StartTime": START, "EndTime": START + 2700, "MaxDatapoints": 20}
        status, _, full = self.json_call(dict(body, MaxDatapoints=100800))
        want = {r["Id"]: r["Values"] for r in full["MetricDataResults"]}
        self.assertEqual(len(want["r"]), 45)
        got = {"r": [], "w": []}
        pages = 0
        while True:
            status, _, out = self.json_call(body)
            pages += 1
            for r in out["MetricDataResults"]:
                got[r["Id"]] += r["Values"]
                self.assertLessEqual(len(r["Values"]), 20)
            if "NextToken" not in out:
                break
            self.assertIn("PartialData", [r["StatusCode"] for r in out["MetricDataResults"]])
            body["NextToken"] = out["NextToken"]
        self.assertEqual(got, want)
        self.assertEqual(pages, 5)

    def test_limits_and_errors(self):
        status, headers, out = self.json_call({"MetricDataQueries": [stat("m%d" % i, "VolumeReadOps", CLIFF)
                                                                     for i in range(501)],
                                               "StartTime": START, "EndTime": START + 600})
        self.assertEqual((status, out["__type"]), (400, "ValidationError"))
        status, headers, out = self.json_call({"MetricDataQueries": [stat("m%d" % i, "VolumeReadOps", CLIFF)
                                                                     for i in range(3)],
                                               "StartTime": START - 30 * 86400, "EndTime": START + 600})
        self.assertEqual(out["__type"], "InvalidParameterValue")
        self.assertIn("100,800", out["message"])
        self.assertEqual(headers.get("x-amzn-query-error"), None)
        status, headers, out = self.json_call({"MetricDataQueries": [stat("r", "VolumeReadOps", CLIFF)],
                                               "StartTime": START + 600, "EndTime": START})
        self.assertEqual(status, 400)
        status, headers, out = self.json_call({"MetricDataQueries": [stat("r", "VolumeReadOps", CLIFF)],
                                               "StartTime": START, "EndTime": START + 600, "NextToken": "junk"})
        self.assertEqual((out["__type"], headers.get("x-amzn-query-error")), ("InvalidNextToken", None))
        status, headers, out = self.json_call({"MetricDataQueries": [stat("r", "VolumeReadOps", CLIFF),
                                                                     stat("r", "VolumeWriteOps", CLIFF)],
                                               "StartTime": START, "EndTime": START + 600})
        self.assertEqual(status, 400)

    def test_no_data_cases(self):
        status, _, out = self.json_call({
            "MetricDataQueries": [stat("u", "VolumeReadOps", "vol-0cc000000000000ff"),
                                  stat("o", "CPUUtilization", CLIFF),
                                  stat("f", "VolumeReadOps", CLIFF)],
            "StartTime": START + 3000, "EndTime": START + 4000})
        self.assertEqual([r["Values"] for r in out["MetricDataResults"]], [[], [], []])


class CreditModel(unittest.TestCase):
    """The bucket arithmetic itself (FACTS.md section 1)."""

    def burst_seconds(self, size):
        s = M.Slot()
        base = M.gp2_baseline(size)
        M._solve(s, 3000.0, base, base, size < 1000, M.BUCKET, 1e9)
        return s.te

    def test_burst_durations(self):
        self.assertAlmostEqual(self.burst_seconds(100), 2000.0)
        self.assertAlmostEqual(self.burst_seconds(334), 5.4e6 / (3000 - 1002))
        self.assertAlmostEqual(self.burst_seconds(750), 7200.0)
        self.assertAlmostEqual(self.burst_seconds(10), 5.4e6 / 2900)
        self.assertEqual(self.burst_seconds(1000), 1e9)  # no bucket at 1,000 GiB

    def test_refill_after_idle(self):
        # drained 100 GiB gp2, idle 120 s, then 3,000 IOPS demand for 120 s: ~600 IOPS on average
        idle = M.Slot()
        M._solve(idle, 0.0, 300.0, 300.0, True, 0.0, 120.0)
        self.assertEqual(idle.b1, 36000.0)
        busy = M.Slot()
        M._solve(busy, 3000.0, 300.0, 300.0, True, idle.b1, 120.0)
        ops = busy.r1 * busy.te + busy.r2 * (120 - busy.te)
        self.assertAlmostEqual(ops / 120.0, 600.0)

    def test_caps(self):
        self.assertEqual(M.caps({"type": "gp2", "size": 100})[:2], (300.0, 128.0))
        self.assertEqual(M.caps({"type": "gp2", "size": 250}, True)[1], 250.0)
        self.assertEqual(M.caps({"type": "gp2", "size": 250}, False)[1], 128.0)
        self.assertEqual(M.caps({"type": "gp3", "size": 100, "iops": 6000, "throughput": 500})[:2], (6000.0, 500.0))


class BasicFleetSeries(SimTestCase):

    def test_types_and_attachment(self):
        cw = self.sim.client("cloudwatch")
        end = datetime.datetime.fromtimestamp(START, datetime.timezone.utc)
        q = [stat("g", "BurstBalance", "vol-0aa00000000000005", 3600, "Average"),   # gp3 for the last 71 h
             stat("u", "VolumeReadOps", "vol-0aa00000000000007", 3600),              # unattached: none
             stat("p", "BurstBalance", "vol-0aa00000000000001", 3600, "Average"),   # drained gp2
             stat("k", "VolumeReadOps", "vol-0aa00000000000002", 3600, "Maximum"),
             stat("t", "VolumeThroughputExceededCheck", "vol-0aa00000000000003", 3600, "Maximum")]
        out = cw.get_metric_data(MetricDataQueries=q, StartTime=end - datetime.timedelta(days=14), EndTime=end)
        res = {r["Id"]: r["Values"] for r in out["MetricDataResults"]}
        self.assertEqual(len(res["g"]), 14 * 24 - 71)  # only while it was gp2
        self.assertEqual(res["u"], [])
        self.assertEqual(len(res["p"]), 14 * 24)
        self.assertLess(max(res["p"]), 1.0)
        self.assertGreater(max(res["k"]), min(res["k"]))  # diurnal
        self.assertEqual(max(res["t"]), 1.0)             # 180 MiB/s demand vs 250 MiB/s only while bursting
        seoul = self.sim.client("cloudwatch", region="ap-northeast-2")
        out = seoul.get_metric_data(MetricDataQueries=[stat("a", "VolumeReadOps", "vol-0aa00000000000001", 3600)],
                                    StartTime=end - datetime.timedelta(days=1), EndTime=end)
        self.assertEqual(out["MetricDataResults"][0]["Values"], [])  # metrics are regional


if __name__ == "__main__":
    unittest.main()
