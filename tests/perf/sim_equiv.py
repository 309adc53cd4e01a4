#!/usr/bin/python3
"""sim_equiv.py - proves the simulator's answers unchanged by a serving-speed change: runs the
same requests against the simulator code of a git revision (default 575ab21, before issue 14's
speed work) and of the working tree, in two processes on the same scenario with the sim clock
frozen, and compares every response body byte for byte (status, body; request ids fixed).

Requests: GetMetricData (JSON 1.0 and query/XML) in ebsmigrate's batches (5 gp2 volumes x
VolumeRead/WriteOps, VolumeRead/WriteBytes Sum and BurstBalance Minimum, 300 s, 14 days) plus
other periods (600, 3600), look-backs, ScanBy descending, small MaxDatapoints followed through
every NextToken, every metric x stat on some volumes, an expression and a clock advanced past
the scenario start; DescribeVolumes / DescribeVolumesModifications / DescribeInstances pages
(MaxResults, NextToken, filters); kube list pages of PVs, PVCs, nodes, pods (limit, continue).

Usage: tests/perf/sim_equiv.py [--ref 575ab21] [--volumes 300] [--batches 40] [--scenario FILE]
Exit 0 when every body is identical; prints the first differences otherwise.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

WORKER = r'''
import json, sys, time, hashlib, tempfile, urllib.parse
FIXED = 1796083200.0
time.time = lambda: FIXED           # continue tokens and clocks must not depend on when we run
sys.path.insert(0, sys.argv[1])
import ebssim_core, ebssim_aws
plan = json.load(open(sys.argv[3]))
scen = ebssim_core.load_scenario(sys.argv[2])
sim = ebssim_core.Sim(scen, tempfile.mkdtemp(), time_scale=0.0)
apis = ebssim_aws.AwsApis(sim)
sim.aws = apis
kube_mod = ebssim_core._load_kube_module()
for spec in scen.get("clusters") or []:
    sim.kube[spec["name"]] = kube_mod.KubeCluster(sim, spec)
ADMIN = {"access_key_id": "AKIA", "arn": "arn:aws:iam::111122223333:user/admin"}

def aws(service, action, params, region, proto):
    app = apis.app(service)
    if service == "ec2":
        params = dict(params, Version="2016-11-15")
    try:
        sim.update()
        body = app.run(action, params, ADMIN, region, None, proto)
        resp = app.render_ok(action, body, "req-0", proto)
    except ebssim_core.ApiError as err:
        resp = app.render_error(err, "req-0", proto)
    b = resp.body if isinstance(resp.body, bytes) else resp.body.encode()
    return resp.status, b

def kube(cluster, path, query):
    c = sim.kube[cluster]
    user = next((u["name"] for u in c.users if u.get("client_cert")), "admin")
    status, _h, body = c.handle("GET", path, query, {"Accept": "application/json"}, b"", user)
    return status, body

for step in plan:
    kind = step[0]
    if kind == "advance":
        sim.clock.advance(step[1])
        print(json.dumps(["advance", step[1]]))
        continue
    if kind == "aws":
        _, service, action, params, region, proto, follow = step
        while True:
            status, body = aws(service, action, params, region, proto)
            print(json.dumps([kind, action, status, hashlib.sha256(body).hexdigest(), len(body)]))
            sys.stdout.flush()
            if not follow or status != 200:
                break
            tok = None
            if proto == "json":
                tok = json.loads(body).get("NextToken")
            else:
                text = body.decode()
                for tag in ("NextToken", "nextToken"):
                    if "<%s>" % tag in text:
                        tok = text.split("<%s>" % tag)[1].split("</%s>" % tag)[0]
            if not tok:
                break
            params = dict(params)
            params["NextToken"] = tok
    else:
        _, cluster, path, query, follow = step
        while True:
            status, body = kube(cluster, path, query)
            print(json.dumps([kind, path, status, hashlib.sha256(body).hexdigest(), len(body)]))
            sys.stdout.flush()
            cont = json.loads(body).get("metadata", {}).get("continue") if status == 200 else None
            if not follow or not cont:
                break
            q = dict(urllib.parse.parse_qsl(query))
            q["continue"] = cont
            query = urllib.parse.urlencode(q)
'''

EBS = (("r", "VolumeReadOps", "Sum"), ("w", "VolumeWriteOps", "Sum"), ("R", "VolumeReadBytes", "Sum"),
       ("W", "VolumeWriteBytes", "Sum"), ("b", "BurstBalance", "Minimum"))
ALL_METRICS = ("VolumeReadOps", "VolumeWriteOps", "VolumeReadBytes", "VolumeWriteBytes", "BurstBalance",
               "VolumeQueueLength", "VolumeIOPSExceededCheck", "VolumeThroughputExceededCheck",
               "VolumeIdleTime", "VolumeTotalReadTime", "VolumeTotalWriteTime")
STATS = ("Sum", "Average", "Minimum", "Maximum", "SampleCount", "p99", "p50")


def query(qid, vid, name, stat, period):
    return {"Id": qid, "MetricStat": {"Metric": {"Namespace": "AWS/EBS", "MetricName": name,
                                                 "Dimensions": [{"Name": "VolumeId", "Value": vid}]},
                                      "Period": period, "Stat": stat}, "ReturnData": True}


def xml_params(p):
    """The query-protocol form of a GetMetricData JSON request (flattened members)."""
    out = {"Action": "GetMetricData", "Version": "2010-08-01", "StartTime": str(p["StartTime"]),
           "EndTime": str(p["EndTime"]), "ScanBy": p.get("ScanBy", "TimestampDescending")}
    for i, q in enumerate(p["MetricDataQueries"], 1):
        pre = "MetricDataQueries.member.%d." % i
        out[pre + "Id"] = q["Id"]
        ms = q["MetricStat"]
        out[pre + "MetricStat.Metric.Namespace"] = ms["Metric"]["Namespace"]
        out[pre + "MetricStat.Metric.MetricName"] = ms["Metric"]["MetricName"]
        out[pre + "MetricStat.Metric.Dimensions.member.1.Name"] = "VolumeId"
        out[pre + "MetricStat.Metric.Dimensions.member.1.Value"] = ms["Metric"]["Dimensions"][0]["Value"]
        out[pre + "MetricStat.Period"] = str(ms["Period"])
        out[pre + "MetricStat.Stat"] = ms["Stat"]
    if p.get("MaxDatapoints"):
        out["MaxDatapoints"] = str(p["MaxDatapoints"])
    return out


def make_plan(scen, n_batches):
    import calendar
    import time
    end = calendar.timegm(time.strptime(scen["start_time"], "%Y-%m-%dT%H:%M:%SZ"))
    end -= end % 300
    regions = sorted(scen["regions"])
    plan = []
    batches = []
    for r in regions:
        ids = [v["volume_id"] for v in scen["volumes"] if v["region"] == r and v["type"] == "gp2"]
        batches += [(r, ids[i:i + 5]) for i in range(0, len(ids), 5)]
    step = max(1, len(batches) // max(1, n_batches))
    pick = batches[::step][:n_batches]
    for bi, (r, ids) in enumerate(pick):
        qs = [query("v%d_%s" % (k, tag), vid, name, stat, 300) for k, vid in enumerate(ids) for tag, name, stat in EBS]
        p = {"MetricDataQueries": qs, "StartTime": end - 14 * 86400, "EndTime": end, "ScanBy": "TimestampAscending"}
        plan.append(["aws", "monitoring", "GetMetricData", p, r, "json", True])
        if bi % 4 == 0:   # pages of 7,000 points; descending; other periods and look-backs; XML
            plan.append(["aws", "monitoring", "GetMetricData", dict(p, MaxDatapoints=7000), r, "json", True])
            plan.append(["aws", "monitoring", "GetMetricData", dict(p, ScanBy="TimestampDescending"), r, "json", True])
            for period, days in ((600, 14), (3600, 30), (900, 3)):
                qp = [query("v%d_%s" % (k, tag), vid, name, stat, period) for k, vid in enumerate(ids)
                      for tag, name, stat in EBS]
                plan.append(["aws", "monitoring", "GetMetricData",
                             {"MetricDataQueries": qp, "StartTime": end - days * 86400, "EndTime": end,
                              "ScanBy": "TimestampAscending"}, r, "json", True])
            plan.append(["aws", "monitoring", "GetMetricData", xml_params(dict(p, MaxDatapoints=50000)), r, "query", True])
        if bi % 10 == 0:  # every metric x stat, periods 300 and 600, two days; an expression
            qs = [query("m%d_%d_%d" % (mi, si, pi), ids[0], m, st, per)
                  for mi, m in enumerate(ALL_METRICS) for si, st in enumerate(STATS) for pi, per in enumerate((300, 600))]
            for lo in range(0, len(qs), 40):
                plan.append(["aws", "monitoring", "GetMetricData",
                             {"MetricDataQueries": qs[lo:lo + 40], "StartTime": end - 2 * 86400, "EndTime": end,
                              "ScanBy": "TimestampAscending"}, r, "json", True])
            ex = [query("r", ids[-1], "VolumeReadOps", "Sum", 300), {"Id": "iops", "Expression": "r/PERIOD(r)"}]
            plan.append(["aws", "monitoring", "GetMetricData",
                         {"MetricDataQueries": ex, "StartTime": end - 86400, "EndTime": end}, r, "json", True])
    # EC2 pages in every region
    for r in regions:
        plan.append(["aws", "ec2", "DescribeVolumes", {"MaxResults": "500"}, r, "query", True])
        plan.append(["aws", "ec2", "DescribeVolumes", {"MaxResults": "1000", "Filter.1.Name": "volume-type",
                                                       "Filter.1.Value.1": "gp2"}, r, "query", True])
        ids = [v["volume_id"] for v in scen["volumes"] if v["region"] == r][:150]
        plan.append(["aws", "ec2", "DescribeVolumes", {"VolumeId.%d" % (i + 1): v for i, v in enumerate(ids)},
                     r, "query", False])
        plan.append(["aws", "ec2", "DescribeVolumesModifications", {"MaxResults": "500"}, r, "query", True])
        plan.append(["aws", "ec2", "DescribeInstances", {"MaxResults": "100"}, r, "query", True])
    for c in scen.get("clusters") or []:
        for path in ("/api/v1/persistentvolumes", "/api/v1/persistentvolumeclaims", "/api/v1/nodes", "/api/v1/pods"):
            plan.append(["kube", c["name"], path, "limit=500", True])
        plan.append(["kube", c["name"], "/api/v1/persistentvolumes", "", False])
    # later: the clock past the start, so `now` clips series and retention counts
    plan.append(["advance", 3 * 86400 + 1234])
    for r, ids in pick[:3]:
        qs = [query("v%d_%s" % (k, tag), vid, name, stat, 300) for k, vid in enumerate(ids) for tag, name, stat in EBS]
        plan.append(["aws", "monitoring", "GetMetricData",
                     {"MetricDataQueries": qs, "StartTime": end - 13 * 86400, "EndTime": end + 4 * 86400,
                      "ScanBy": "TimestampAscending"}, r, "json", True])
    return plan


def run(src, scen_path, plan_path):
    out = subprocess.run(["/usr/bin/python3", "-c", WORKER, src, scen_path, plan_path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, check=False)
    if out.returncode:
        sys.exit("worker on %s failed:\n%s" % (src, out.stderr.decode()[-3000:]))
    return [json.loads(line) for line in out.stdout.decode().splitlines()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", default="575ab21")
    ap.add_argument("--volumes", type=int, default=300)
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--scenario")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sim-equiv-")
    old = os.path.join(work, "old")
    os.makedirs(old)
    files = subprocess.check_output(["git", "-C", ROOT, "ls-tree", "-r", "--name-only", a.ref, "tests/sim/"]).decode().split()
    for f in files:
        if f.endswith(".py") or f.endswith("/ebssim"):   # packages too (tests/sim/ebssim_kube/)
            data = subprocess.check_output(["git", "-C", ROOT, "show", "%s:%s" % (a.ref, f)])
            dest = os.path.join(old, os.path.relpath(f, "tests/sim"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            open(dest, "wb").write(data)
    scen_path = a.scenario
    if not scen_path:
        scen_path = os.path.join(work, "fleet.json")
        subprocess.check_call(["/usr/bin/python3", os.path.join(ROOT, "tests", "sim", "ebssim"), "gen", "--volumes",
                               str(a.volumes), "--clusters", "3", "--regions", "2", "--seed", "7", "--out", scen_path],
                              stdout=subprocess.DEVNULL)
    scen = json.load(open(scen_path))
    plan_path = os.path.join(work, "plan.json")
    json.dump(make_plan(scen, a.batches), open(plan_path, "w"))
    import time
    t0 = time.process_time()
    c0 = os.times()
    got_old = run(old, scen_path, plan_path)
    c1 = os.times()
    got_new = run(os.path.join(ROOT, "tests", "sim"), scen_path, plan_path)
    c2 = os.times()
    cpu_old = c1.children_user + c1.children_system - c0.children_user - c0.children_system
    cpu_new = c2.children_user + c2.children_system - c1.children_user - c1.children_system
    diffs = [(i, x, y) for i, (x, y) in enumerate(zip(got_old, got_new)) if x != y]
    if len(got_old) != len(got_new):
        diffs.append((min(len(got_old), len(got_new)), "length %d" % len(got_old), "length %d" % len(got_new)))
    kinds = {}
    for x in got_old:
        if x[0] != "advance":
            kinds[x[1]] = kinds.get(x[1], 0) + 1
    print("%d responses (%s), %d MB of bodies; worker CPU: %s %.1f s, working tree %.1f s"
          % (len(got_old), ", ".join("%s %d" % kv for kv in sorted(kinds.items())),
             sum(x[4] for x in got_old if len(x) > 4) // 1000000, a.ref, cpu_old, cpu_new))
    for i, x, y in diffs[:10]:
        print("DIFFERENT #%d: %s\n         vs %s" % (i, x, y))
    print("identical" if not diffs else "%d responses differ" % len(diffs))
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
