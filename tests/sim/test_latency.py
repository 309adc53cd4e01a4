"""Self-test of `ebssim serve --latency-ms N`: every AWS and Kubernetes answer waits N ms per
request (concurrent requests wait concurrently); the control endpoint answers at once.
Run: /usr/bin/python3 -m unittest tests/sim/test_latency.py"""

import threading
import time
import unittest

from simtest import SimTestCase, raw

LATENCY_S = 1.0
FORM = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
DESCRIBE = "Action=DescribeVolumes&Version=2016-11-15&MaxResults=5"


class LatencyTest(SimTestCase):
    sim_args = ("--latency-ms", str(int(LATENCY_S * 1000)))

    def timed(self, fn):
        t0 = time.monotonic()
        out = fn()
        return time.monotonic() - t0, out

    def describe(self):
        return self.sim.signed("ec2", "AWS_ENDPOINT_URL_EC2", DESCRIBE, dict(FORM))[0]

    def test_aws_answers_wait(self):
        took, status = self.timed(self.describe)
        self.assertEqual(status, 200)
        self.assertGreaterEqual(took, LATENCY_S)
        body = ('{"MetricDataQueries":[{"Id":"r","MetricStat":{"Metric":{"Namespace":"AWS/EBS",'
                '"MetricName":"VolumeReadOps","Dimensions":[]},"Period":300,"Stat":"Sum"}}],'
                '"StartTime":1793000000,"EndTime":1793003600}')
        headers = {"Content-Type": "application/x-amz-json-1.0",
                   "X-Amz-Target": "GraniteServiceVersion20100801.GetMetricData"}
        took, out = self.timed(lambda: self.sim.signed("monitoring", "AWS_ENDPOINT_URL_CLOUDWATCH", body, headers))
        self.assertEqual(out[0], 200, out[2][:300])
        self.assertGreaterEqual(took, LATENCY_S)

    def test_kube_answers_wait(self):
        lines = open(self.sim.env["KUBECONFIG"]).read().splitlines()
        value = lambda key: next(l.split(key, 1)[1].strip().strip("\"'") for l in lines if key in l)
        took, out = self.timed(lambda: raw("GET", value("server:") + "/version",
                                           {"Authorization": "Bearer " + value("token:")}, None, self.sim.ca))
        self.assertEqual(out[0], 200)
        self.assertGreaterEqual(took, LATENCY_S)

    def test_concurrent_requests_wait_together_and_ctl_does_not_wait(self):
        statuses = []
        threads = [threading.Thread(target=lambda: statuses.append(self.describe())) for _ in range(4)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.monotonic() - t0
        self.assertEqual(statuses, [200] * 4)
        self.assertGreaterEqual(took, LATENCY_S)
        self.assertLess(took, 3.5 * LATENCY_S)  # one after the other would take 4
        self.assertLess(self.timed(self.sim.state)[0], LATENCY_S)


if __name__ == "__main__":
    unittest.main()
