"""The bench-pending scenario: basic, plus what keeps an in-cluster benchmark waiting.

    /usr/bin/python3 tests/sim/ebssim_scenario_bench_pending.py  # rewrites tests/sim/scenarios/bench-pending.json

Added to basic's prod cluster (us-east-1):
  * StorageClass gp3-typo: ebs.csi.aws.com, type "gp9" (EBS has no such type), Immediate binding.
    A claim of it stays Pending: ExternalProvisioning, then the provisioner's ProvisioningFailed.
  * StorageClass gp3 (basic's, WaitForFirstConsumer): a new claim shows WaitForFirstConsumer, and
    once a pod mounts it ExternalProvisioning (the simulator provisions nothing: Pending for good).
  * Namespace bench; claim bench/data-zone-c, Bound to a gp3 100 GiB volume (vol-0aa0000000000000c,
    available) in us-east-1c, where the cluster has no node: a pod that mounts it is unschedulable
    (FailedScheduling: the volume's node affinity matches no node).
Events: ebssim_kube_events.py.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ebssim_gen as g  # noqa: E402
import ebssim_scenarios as basic  # noqa: E402

ZONE_C_VOLUME = "vol-0aa0000000000000c"
ZONE_C_PV = "pvc-5e0c0c0c-0000-4000-8000-00000000000c"


def bench_pending():
    s = basic.basic()
    s["name"] = "bench-pending"
    s["regions"]["us-east-1"]["azs"].append("us-east-1c")
    s["volumes"].append(basic.vol(ZONE_C_VOLUME, "us-east-1", "us-east-1c", "gp3", 100,
                                  {"read_iops": 0, "write_iops": 0, "read_mibps": 0, "write_mibps": 0,
                                   "pattern": "steady"}, iops=3000, throughput=125,
                                  tags=g.csi_tags("prod", "bench", "data-zone-c", ZONE_C_PV)))
    prod = next(c for c in s["clusters"] if c["name"] == "prod")
    typo = g.storage_class("gp3-typo", "gp9")
    typo["volumeBindingMode"] = "Immediate"
    prod["objects"] += [g.namespace("bench"), typo,
                        g.pv(ZONE_C_PV, ZONE_C_VOLUME, 100, "us-east-1c", "gp3", "bench", "data-zone-c"),
                        g.pvc("bench", "data-zone-c", 100, "gp3", ZONE_C_PV)]
    return s


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios", "bench-pending.json")
    with open(out, "w") as f:
        json.dump(bench_pending(), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
