"""ebssim_kube.kubelet: nodes/NAME/proxy: the kubelet Summary API (stats/summary) built from the
scenario's usage.
"""

from .base import ApiError, dig, meta, rfc3339


class KubeletMixin:
    """nodes/proxy and the kubelet Summary."""
    def _node_proxy(self, name, rest, method):
        with self.sim.lock:
            _key, node = self._lookup(self.by_plural["nodes"], None, name)
            ready = next((c for c in dig(node, "status", "conditions", default=[]) or [] if c.get("type") == "Ready"), None)
            if ready is not None and ready.get("status") != "True":
                ip = self._node_ip(node)
                raise ApiError(503, "ServiceUnavailable", "error trying to reach service: dial tcp %s:10250: connect: "
                               "connection refused" % ip, {})
            path = "/".join(rest)
            if method != "GET" or path not in ("stats/summary", "healthz"):
                return 404, {"Content-Type": "text/plain; charset=utf-8"}, b"404 page not found\n"
            if path == "healthz":
                return 200, {"Content-Type": "text/plain; charset=utf-8"}, b"ok"
            return self._json(200, self._summary(node))

    def _summary(self, node):
        now = self.now()
        ts = rfc3339(now)
        name = meta(node)["name"]
        start = dig(node, "metadata", "creationTimestamp") or ts
        pods = []
        for pk in sorted(self.store["pods"]):
            pod = self.store["pods"][pk]
            if dig(pod, "spec", "nodeName") != name or dig(pod, "status", "phase") != "Running":
                continue
            pm = meta(pod)
            vols = []
            for v in dig(pod, "spec", "volumes", default=[]) or []:
                claim = dig(v, "persistentVolumeClaim", "claimName")
                if not claim:
                    continue
                u = self.usage.get("%s/%s" % (pm["namespace"], claim))
                if not u:
                    continue
                e = {"time": ts}
                used, cap = u.get("used_bytes"), u.get("capacity_bytes")
                avail = u.get("available_bytes", cap - used if cap is not None and used is not None else None)
                if avail is not None:
                    e["availableBytes"] = int(avail)
                if cap is not None:
                    e["capacityBytes"] = int(cap)
                if used is not None:
                    e["usedBytes"] = int(used)
                for src, dst in (("inodes_free", "inodesFree"), ("inodes", "inodes"), ("inodes_used", "inodesUsed")):
                    if u.get(src) is not None:
                        e[dst] = int(u[src])
                e["name"] = v.get("name")
                e["pvcRef"] = {"name": claim, "namespace": pm["namespace"]}
                vols.append(e)
            ctrs = [{"name": c.get("name"), "startTime": dig(pod, "status", "startTime") or ts,
                     "cpu": {"time": ts, "usageNanoCores": 1000000, "usageCoreNanoSeconds": 1000000000},
                     "memory": {"time": ts, "workingSetBytes": 16777216, "usageBytes": 16777216}}
                    for c in dig(pod, "spec", "containers", default=[]) or []]
            e = {"podRef": {"name": pm["name"], "namespace": pm["namespace"], "uid": pm.get("uid")},
                 "startTime": dig(pod, "status", "startTime") or ts, "containers": ctrs,
                 "cpu": {"time": ts, "usageNanoCores": 1000000 * len(ctrs), "usageCoreNanoSeconds": 1000000000},
                 "memory": {"time": ts, "workingSetBytes": 16777216 * len(ctrs), "usageBytes": 16777216 * len(ctrs)}}
            if vols:
                e["volume"] = vols
            e["ephemeral-storage"] = {"time": ts, "availableBytes": 40000000000, "capacityBytes": 85886742528,
                                      "usedBytes": 65536}
            pods.append(e)
        fs = {"time": ts, "availableBytes": 70000000000, "capacityBytes": 85886742528, "usedBytes": 15886742528,
              "inodesFree": 41000000, "inodes": 41942512, "inodesUsed": 942512}
        return {"node": {"nodeName": name, "systemContainers": [
                    {"name": "kubelet", "startTime": start, "cpu": {"time": ts, "usageNanoCores": 20000000},
                     "memory": {"time": ts, "workingSetBytes": 67108864}},
                    {"name": "runtime", "startTime": start, "cpu": {"time": ts, "usageNanoCores": 10000000},
                     "memory": {"time": ts, "workingSetBytes": 67108864}},
                    {"name": "pods", "startTime": start, "cpu": {"time": ts, "usageNanoCores": 50000000},
                     "memory": {"time": ts, "workingSetBytes": 536870912}}],
                    "startTime": start,
                    "cpu": {"time": ts, "usageNanoCores": 100000000, "usageCoreNanoSeconds": 3600000000000},
                    "memory": {"time": ts, "availableBytes": 14000000000, "usageBytes": 2000000000,
                               "workingSetBytes": 1500000000, "rssBytes": 800000000},
                    "fs": fs, "runtime": {"imageFs": dict(fs), "containerFs": dict(fs)},
                    "rlimit": {"time": ts, "maxpid": 4194304, "curproc": 300}},
                "pods": pods}
