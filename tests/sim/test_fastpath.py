"""Self-test of the simulator's fast serving paths (issue 14): they must give the very answers
of the point-by-point reference code, bit for bit.  In process, no server.
Run: /usr/bin/python3 -m unittest tests/sim/test_fastpath.py"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ebssim_aws  # noqa: E402
import ebssim_core  # noqa: E402
import ebssim_metrics as M  # noqa: E402

EBS = (("VolumeReadOps", "Sum"), ("VolumeWriteOps", "Sum"), ("VolumeReadBytes", "Sum"),
       ("VolumeWriteBytes", "Sum"), ("BurstBalance", "Minimum"))


class _Aws:
    pass


def fleet(volumes, seed):
    d = tempfile.mkdtemp(prefix="ebssim-fast-")
    path = os.path.join(d, "fleet.json")
    subprocess.check_call(["/usr/bin/python3", os.path.join(HERE, "ebssim"), "gen", "--volumes", str(volumes),
                           "--clusters", "2", "--regions", "2", "--seed", str(seed), "--out", path],
                          stdout=subprocess.DEVNULL)
    sim = ebssim_core.Sim(ebssim_core.load_scenario(path), d, time_scale=0.0)
    sim.aws = _Aws()
    sim.aws.metrics = M.MetricsModel(sim)
    return sim


class SeriesFastPath(unittest.TestCase):
    """series_columns (templates, memo) against series (point by point, a fresh model)."""

    @classmethod
    def setUpClass(cls):
        cls.sim = fleet(120, 11)
        cls.end = int(cls.sim.now()) - int(cls.sim.now()) % 300

    def compare(self, vids, combos, spans, periods, offsets=(0,)):
        fast = M.MetricsModel(self.sim)
        checked = points = 0
        for vid in vids:
            for span in spans:
                for off in offsets:
                    for metric, stat in combos:
                        for period in periods:
                            start, end = self.end - span + off, self.end + off
                            slow = M.MetricsModel(self.sim).series(vid, metric, stat, start, end, period)
                            ts, vs = fast.series_columns(vid, metric, stat, start, end, period)
                            want = ([t for t, _ in slow], [v for _, v in slow])
                            self.assertEqual((ts, vs), want, (vid, metric, stat, start, end, period))
                            self.assertEqual([type(t) for t in ts], [type(t) for t in want[0]])
                            # bit for bit, also the sign of zeros
                            self.assertEqual([math.copysign(1, v) for v in vs], [math.copysign(1, v) for v in want[1]])
                            checked += 1
                            points += len(ts)
        return checked, points

    def test_ebsmigrate_queries_14_days(self):
        vids = [v for v, vol in self.sim.volumes.items() if vol["type"] == "gp2"][:12]
        checked, points = self.compare(vids, EBS, (14 * 86400,), (300, 600))
        self.assertGreater(points, 30000)

    def test_every_metric_and_stat(self):
        vids = list(self.sim.volumes)[:4]
        combos = [(m, s) for m in M.METRICS for s in ("Sum", "Average", "Minimum", "Maximum", "SampleCount", "p99")]
        checked, points = self.compare(vids, combos, (86400,), (300, 900, 3600))
        self.assertGreater(points, 3000)

    def test_unaligned_start_uses_the_reference(self):
        vids = [v for v, vol in self.sim.volumes.items() if vol["type"] == "gp2"][:4]
        self.compare(vids, EBS, (2 * 86400,), (300, 360), offsets=(0, -60, -120))

    def test_modified_volumes(self):
        vids = [v for v in self.sim.volumes if len(self.sim.config_timeline(v)) > 1][:5]
        self.assertTrue(vids, "the generated fleet has modification history")
        self.compare(vids, EBS, (14 * 86400,), (300,))

    def test_faster(self):
        vids = [v for v, vol in self.sim.volumes.items() if vol["type"] == "gp2"
                and vol.get("attachments")][:5]
        t0 = time.process_time()
        slow = M.MetricsModel(self.sim)
        for vid in vids:
            for metric, stat in EBS:
                slow.series(vid, metric, stat, self.end - 14 * 86400, self.end, 300)
        t1 = time.process_time()
        fast = M.MetricsModel(self.sim)
        for vid in vids:
            for metric, stat in EBS:
                fast.series_columns(vid, metric, stat, self.end - 14 * 86400, self.end, 300)
        t2 = time.process_time()
        self.assertLess(t2 - t1, (t1 - t0) / 5, "fast %.3f s, reference %.3f s" % (t2 - t1, t1 - t0))


class Rendering(unittest.TestCase):
    def test_json_text_is_json_dumps(self):
        bodies = [
            {"MetricDataResults": [{"Id": "a", "Label": "L\u00e9", "Timestamps": [1, 2, 3],
                                    "Values": [0.0, -0.0, 1.5, 1.5, 1e-7, 123456789.123456, -0.0],
                                    "StatusCode": "Complete"},
                                   {"Id": "b", "Label": "x", "Timestamps": [1, 2, 3], "Values": [2.0, 2.0, 0.0],
                                    "StatusCode": "PartialData"},
                                   {"Id": "c", "Label": "x", "Timestamps": [], "Values": [], "StatusCode": "Complete"},
                                   {"Id": "d", "Label": "x", "Timestamps": [1.5, 2], "Values": [float("inf"), 1],
                                    "StatusCode": "Complete"},
                                   {"Id": "e", "Label": "x", "Timestamps": [True], "Values": [float("nan")],
                                    "StatusCode": "Complete", "Messages": [{"Code": "c", "Value": "v"}]}],
             "Messages": [], "NextToken": "abc"},
            {"MetricDataResults": [], "Messages": []},
        ]
        for body in bodies:
            self.assertEqual(ebssim_aws._cw_json(body), json.dumps(body))

    def test_round6(self):
        vals = [0.0, -0.0, 1.23456789, 1.23456789, -5.5e-7, 1e9 - 2e-7, 3, float("nan")]
        want = [float(round(v, 6)) for v in vals]
        got = ebssim_aws._round6(vals)
        self.assertEqual(repr(got), repr(want))
        vals = vals[:-2]
        self.assertEqual(repr(ebssim_aws._round6(vals)), repr([float(round(v, 6)) for v in vals]))


if __name__ == "__main__":
    unittest.main()
