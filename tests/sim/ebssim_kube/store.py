"""ebssim_kube.store: the object store: loading scenario objects, resourceVersions, the history
of changes that consistent list snapshots and watches read, and the hooks after a write.
Invariant: every change goes through _write, which bumps rv and records history.
"""

import copy
import hashlib
import uuid

from .base import dig, meta, ordered, rfc3339


class StoreMixin:
    """Objects and storage: store, resourceVersion, history, snapshots."""
    def _uid(self, *parts):
        return str(uuid.uuid5(uuid.NAMESPACE_URL, "ebssim/%s/%s" % (self.name, "/".join(str(p) for p in parts))))

    def _rand_suffix(self, n=5):
        return "".join(self.rand.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(n))

    @staticmethod
    def _key(obj, rt):
        m = obj.get("metadata") or {}
        return "%s/%s" % (m.get("namespace", ""), m.get("name", "")) if rt.namespaced else m.get("name", "")

    def _rt_for_kind(self, kind, api_version=None):
        for rt in self.types:
            if rt.kind == kind:
                return rt
        return None

    def _load(self, objects):
        start = self.now()
        for o in objects:
            o = copy.deepcopy(o)
            rt = self._rt_for_kind(o.get("kind"))
            if rt is None:
                continue
            m = meta(o)
            if rt.namespaced and not m.get("namespace"):
                m["namespace"] = "default"
            if not rt.namespaced:
                m.pop("namespace", None)
            self._prepare_stored(rt, o, start)
            if rt.plural == "pods":
                st = o.setdefault("status", {})
                st.setdefault("phase", "Running")  # a pre-existing workload: shown running, never executed
                if st["phase"] == "Running" and "containerStatuses" not in st:
                    t0 = m.get("creationTimestamp") or rfc3339(start)
                    st.setdefault("conditions", [{"type": c, "status": "True", "lastProbeTime": None,
                                                  "lastTransitionTime": t0} for c in (
                        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")])
                    st.setdefault("startTime", t0)
                    st["containerStatuses"] = [{
                        "name": c.get("name"), "state": {"running": {"startedAt": t0}}, "lastState": {},
                        "ready": True, "restartCount": 0, "image": c.get("image"), "imageID": "",
                        "containerID": "containerd://" + hashlib.sha256(
                            ("%s/%s/%s" % (m.get("namespace"), m.get("name"), c.get("name"))).encode()).hexdigest(),
                        "started": True} for c in dig(o, "spec", "containers", default=[]) or []]
            self.rv += 1
            m["resourceVersion"] = str(self.rv)
            self.store[rt.plural][self._key(o, rt)] = ordered(o)
        namespaces = {"default", "kube-system", "kube-public", "kube-node-lease"}
        for plural, objs in self.store.items():
            if self.by_plural[plural].namespaced:
                namespaces.update(o["metadata"]["namespace"] for o in objs.values())
        for ns in sorted(namespaces):
            if ns not in self.store["namespaces"]:
                o = {"kind": "Namespace", "apiVersion": "v1",
                     "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}},
                     "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
                self._prepare_stored(self.by_plural["namespaces"], o, start)
                self.rv += 1
                o["metadata"]["resourceVersion"] = str(self.rv)
                self.store["namespaces"][ns] = ordered(o)
        # The EBS CSI driver's controller, as its Helm chart / EKS add-on installs it: what a client
        # can read to learn whether the volume-modifier-for-k8s sidecar runs (container
        # "volumemodifier"). Only when the scenario does not bring its own.
        ctl_key = "kube-system/ebs-csi-controller"
        if "deployments" in self.store and ctl_key not in self.store["deployments"]:
            containers = [{"name": "ebs-plugin", "image": "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.37.0"},
                          {"name": "csi-provisioner", "image": "public.ecr.aws/csi-components/csi-provisioner:v5.1.0"},
                          {"name": "csi-resizer", "image": "public.ecr.aws/csi-components/csi-resizer:v1.12.0"}]
            if self.sidecar:
                containers.append({"name": "volumemodifier",
                                   "image": "public.ecr.aws/ebs-csi-driver/volume-modifier-for-k8s:v0.5.0"})
            labels = {"app": "ebs-csi-controller", "app.kubernetes.io/name": "aws-ebs-csi-driver"}
            o = {"kind": "Deployment", "apiVersion": "apps/v1",
                 "metadata": {"name": "ebs-csi-controller", "namespace": "kube-system", "labels": labels},
                 "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "ebs-csi-controller"}},
                          "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}},
                 "status": {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2}}
            self._prepare_stored(self.by_plural["deployments"], o, start)
            self.rv += 1
            o["metadata"]["resourceVersion"] = str(self.rv)
            self.store["deployments"][ctl_key] = ordered(o)
        # sidecar bookkeeping and anything already due
        self._reconcile_all()

    def _prepare_stored(self, rt, o, t):
        o["kind"] = rt.kind
        o["apiVersion"] = rt.api_version
        m = meta(o)
        if not m.get("uid"):
            m["uid"] = self._uid(rt.plural, self._key(o, rt), self.rv)
        if not m.get("creationTimestamp"):
            m["creationTimestamp"] = rfc3339(t)
        if rt.generation and not m.get("generation"):
            m["generation"] = 1
        if rt.plural == "namespaces" and "status" not in o:
            o["status"] = {"phase": "Active"}

    # ------------------------------------------------------------------ store writes
    def _write(self, rt, key, new, old):
        """Store new (None = delete); bumps resourceVersion and records history. Caller holds lock."""
        self.rv += 1
        if new is not None:
            meta(new)["resourceVersion"] = str(self.rv)
            new = ordered(new)
            self.store[rt.plural][key] = new
        else:
            self.store[rt.plural].pop(key, None)
        self.history.append((self.rv, self._compaction_clock(), rt.plural, key, old, new))
        self._prune_history()
        self._note_change(rt.plural, key, old, new)
        self.cond.notify_all()
        return new

    def _note_change(self, plural, key, old, new):
        """Remember what the controllers must look at again (no full scans on every tick)."""
        if plural == "persistentvolumeclaims":
            self.dirty.add(key)
        elif plural == "persistentvolumes":
            for o in (old, new):
                cr = dig(o, "spec", "claimRef") if o else None
                if cr and cr.get("name"):
                    self.dirty.add("%s/%s" % (cr.get("namespace", ""), cr["name"]))
        elif plural == "volumeattributesclasses":
            for k, pvc in self.store["persistentvolumeclaims"].items():
                if dig(pvc, "spec", "volumeAttributesClassName") == key:
                    self.dirty.add(k)
        elif plural == "pods":
            if new is not None and dig(new, "status", "phase") in (None, "", "Pending"):
                self.pending_pods.add(key)
            else:
                self.pending_pods.discard(key)
        elif plural == "jobs":
            if new is None or any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                                  for c in dig(new, "status", "conditions", default=[]) or []):
                self.active_jobs.discard(key)
            else:
                self.active_jobs.add(key)

    def _prune_history(self):
        keep = max(self.continue_ttl * 2, 600)
        cutoff = self._compaction_clock() - keep
        if len(self.history) > 5000:
            cutoff = max(cutoff, self.history[-5000][1])
        i = 0
        while i < len(self.history) and self.history[i][1] < cutoff:
            i += 1
        if i:
            del self.history[:i]

    def _snapshot(self, plural, rv):
        """Objects of plural as of resourceVersion rv (None if history does not reach back)."""
        cur = dict(self.store[plural])
        if rv >= self.rv:
            return cur
        oldest = self.history[0][0] if self.history else self.rv + 1
        if rv < oldest - 1 and any(True for _ in self.history):
            return None
        for (hrv, _t, p, key, old, _new) in reversed(self.history):
            if hrv <= rv:
                break
            if p != plural:
                continue
            if old is None:
                cur.pop(key, None)
            else:
                cur[key] = old
        return cur

    def _update(self, rt, obj):
        """Write a modified copy of a stored object (internal controllers)."""
        key = self._key(obj, rt)
        old = self.store[rt.plural].get(key)
        if old is not None and self._same(old, obj):
            return old
        return self._write(rt, key, obj, old)

    @staticmethod
    def _same(a, b):
        def strip(o):
            o = copy.deepcopy(o)
            o.get("metadata", {}).pop("resourceVersion", None)
            o.get("metadata", {}).pop("managedFields", None)
            return o
        return strip(a) == strip(b)

    def _lookup(self, rt, ns, name):
        key = "%s/%s" % (ns, name) if rt.namespaced else name
        o = self.store[rt.plural].get(key)
        if o is None:
            raise self.not_found(rt, name)
        return key, o

    # ------------------------------------------------------------------ hooks after writes
    def _after_write(self, rt, key, old, new):
        if rt.plural == "pods" and new is not None and old is None:
            self._start_pod(key)
        elif rt.plural == "jobs" and new is not None:
            self._sync_job(key)
        elif rt.plural == "pods" and new is None and old is not None:
            for r in meta(old).get("ownerReferences") or []:
                if r.get("kind") == "Job":
                    self._sync_job("%s/%s" % (meta(old)["namespace"], r.get("name")))
        self._reconcile_dirty()
