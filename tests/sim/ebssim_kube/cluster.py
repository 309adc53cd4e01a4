"""ebssim_kube.cluster: KubeCluster, one simulated Kubernetes API server, composed of the mixins
of this package (each file owns one concern; they share the cluster's state through self).
Here: construction (spec knobs, the object store, clocks), state() for the control endpoint,
close() (kills fio runs; also at interpreter exit for every cluster still open).
"""

import atexit
import hashlib
import random
import re
import shutil
import threading

from .auth import AuthMixin
from .base import GIT_PATCH
from .csi import CsiMixin
from .discovery import DiscoveryMixin
from .kubelet import KubeletMixin
from .pods import PodMixin
from .printer import Printer
from .reads import ReadMixin
from .resources import build_types
from .routing import RoutingMixin
from .store import StoreMixin
from .validation import ValidationMixin
from .watch_events import WatchEventsMixin
from .writes import WriteMixin

_ALL_CLUSTERS = []


def _close_all():
    for c in list(_ALL_CLUSTERS):
        try:
            c.close()
        except Exception:
            pass


atexit.register(_close_all)


class KubeCluster(RoutingMixin, AuthMixin, DiscoveryMixin, ReadMixin, WatchEventsMixin, WriteMixin,
                  ValidationMixin, StoreMixin, KubeletMixin, PodMixin, CsiMixin):
    """One simulated cluster; interface in tests/sim/CONTRACT.md (handle, tick, state, close)."""
    def __init__(self, sim, spec):
        self.sim = sim
        self.spec = spec
        self.name = spec.get("name", "cluster")
        self.region = spec.get("region") or getattr(sim, "default_region", None) or "us-east-1"
        self.eks_name = spec.get("eks_name") or self.name
        ver = str(spec.get("version", "1.33"))
        parts = ver.lstrip("v").split(".")
        self.major, self.minor = int(parts[0]), int(re.match(r"\d+", parts[1]).group(0)) if len(parts) > 1 else 33
        patch = int(re.match(r"\d+", parts[2]).group(0)) if len(parts) > 2 else GIT_PATCH.get(self.minor, 0)
        self.git_version = spec.get("git_version") or "v%d.%d.%d" % (self.major, self.minor, patch)
        if not spec.get("git_version") and spec.get("eks_name"):
            self.git_version += "-eks-" + hashlib.sha1(self.name.encode()).hexdigest()[:7]
        self.types = build_types(self.minor)
        self.by_plural = {}
        for rt in self.types:
            self.by_plural[rt.plural] = rt
        self.vac_rt = self.by_plural.get("volumeattributesclasses")
        self.users = list(spec.get("users") or [])
        self.tokens = {u["token"]: u for u in self.users if u.get("token")}
        self.usage = spec.get("usage") or {}
        self.sidecar = bool(spec.get("volume_modifier_sidecar"))
        self.continue_ttl = float(spec.get("continue_ttl_s", 300))
        self.watch_poll = float(spec.get("watch_poll_s", 1))
        self.follow_wait = float(spec.get("log_follow_wait_s", 60))
        self.job_backoff = float(spec.get("job_backoff_s", 10))
        self.modify_retry = float(spec.get("modify_retry_s", 10))
        self.rand = random.Random(int(hashlib.sha256(("ebssim-kube/" + self.name).encode()).hexdigest()[:12], 16))
        self.store = {rt.plural: {} for rt in self.types}
        self.dirty = set()         # PVC keys the CSI emulation must look at
        self.pending_pods = set()  # pods not yet started
        self.active_jobs = set()   # jobs not yet finished
        self.rv = 1000
        self.history = []          # (rv, time, plural, key, old, new)
        self.cond = threading.Condition(sim.lock)
        self.ops = {}              # CSI operations: (kind, pvc key) -> dict
        self.runs = {}             # pod key -> {container: PodRun}
        self.pod_dirs = {}         # pod key -> dir
        self.job_state = {}        # job key -> {"counted": set(uids), "last_fail": t}
        self.event_seq = 0
        self.event_index = {}      # (involved uid, reason, message) -> event key
        self.workdir = None
        self.closed = False
        self.printer = Printer(self)
        with sim.lock:
            self._load(spec.get("objects") or [])
        _ALL_CLUSTERS.append(self)

    # ------------------------------------------------------------------ basics
    def now(self):
        return float(self.sim.now())

    # ------------------------------------------------------------------ state, close
    def state(self):
        with self.sim.lock:
            def items(plural):
                rt = self.by_plural.get(plural)
                if rt is None:
                    return []
                return [self._out(rt, self.store[plural][k]) for k in sorted(self.store[plural])]
            ops = []
            for (kind, key), op in sorted(self.ops.items()):
                ops.append({k: v for k, v in op.items() if k in ("state", "target", "volume_id", "error", "attempts",
                                                                 "annotations", "kind", "pv")} | {"pvc": key})
            return {"version": self.git_version, "resource_version": str(self.rv),
                    "pvcs": items("persistentvolumeclaims"), "pvs": items("persistentvolumes"),
                    "vacs": items("volumeattributesclasses"), "storageclasses": items("storageclasses"),
                    "jobs": items("jobs"), "pods": items("pods"), "nodes": items("nodes"),
                    "events": items("events"), "modify_ops": ops}

    def close(self):
        if self.closed:
            return
        self.closed = True
        for key in list(self.runs):
            for r in self.runs[key].values():
                r.kill()
        self.runs.clear()
        if self.workdir and getattr(self, "_own_workdir", False):
            shutil.rmtree(self.workdir, ignore_errors=True)
        if self in _ALL_CLUSTERS:
            _ALL_CLUSTERS.remove(self)
