"""ebssim_kube.printer: server-side Table printing (the columns and cells of kubectl get) for the
resource types kubectl users look at; Printer(cluster) reads the cluster's clock for ages.
"""

from .base import dig, human_duration, meta, parse_time

# ----------------------------------------------------------------------------------------------
# Table printing (server-side printing columns of pkg/printers/internalversion)

def col(name, desc="", typ="string", fmt="", prio=0):
    return {"name": name, "type": typ, "format": fmt, "description": desc, "priority": prio}


NAME_COL = col("Name", "Name must be unique within a namespace.", fmt="name")
ABBR = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}


def access_modes(modes):
    return ",".join(ABBR.get(m, m) for m in (modes or []))


class Printer:
    def __init__(self, cluster):
        self.c = cluster

    def age(self, obj):
        t = parse_time(dig(obj, "metadata", "creationTimestamp"))
        return "<unknown>" if t is None else human_duration(self.c.now() - t)

    def columns(self, rt):
        f = getattr(self, "cols_" + rt.plural, None)
        return f() if f else [NAME_COL, col("Age", "CreationTimestamp", "string")]

    def cells(self, rt, obj):
        f = getattr(self, "row_" + rt.plural, None)
        return f(obj) if f else [meta(obj).get("name"), self.age(obj)]

    # PersistentVolume
    def cols_persistentvolumes(self):
        return [NAME_COL, col("Capacity"), col("Access Modes"), col("Reclaim Policy"), col("Status"), col("Claim"),
                col("StorageClass"), col("VolumeAttributesClass"), col("Reason"), col("Age"),
                col("VolumeMode", prio=1)]

    def row_persistentvolumes(self, o):
        spec, st = o.get("spec", {}), o.get("status", {})
        cr = spec.get("claimRef") or {}
        claim = "%s/%s" % (cr.get("namespace", ""), cr.get("name", "")) if cr else ""
        phase = st.get("phase", "")
        if dig(o, "metadata", "deletionTimestamp"):
            phase = "Terminating"
        return [meta(o).get("name"), dig(spec, "capacity", "storage", default=""), access_modes(spec.get("accessModes")),
                spec.get("persistentVolumeReclaimPolicy", ""), phase, claim, spec.get("storageClassName", ""),
                spec.get("volumeAttributesClassName") or "<unset>", st.get("reason", ""), self.age(o),
                spec.get("volumeMode", "<unset>")]

    # PersistentVolumeClaim
    def cols_persistentvolumeclaims(self):
        return [NAME_COL, col("Status"), col("Volume"), col("Capacity"), col("Access Modes"), col("StorageClass"),
                col("VolumeAttributesClass"), col("Age"), col("VolumeMode", prio=1)]

    def row_persistentvolumeclaims(self, o):
        spec, st = o.get("spec", {}), o.get("status", {})
        phase = st.get("phase", "")
        if dig(o, "metadata", "deletionTimestamp"):
            phase = "Terminating"
        cap, modes = "", ""
        if spec.get("volumeName"):
            cap = dig(st, "capacity", "storage", default="")
            modes = access_modes(st.get("accessModes"))
        return [meta(o).get("name"), phase, spec.get("volumeName", ""), cap, modes, spec.get("storageClassName", ""),
                spec.get("volumeAttributesClassName") or "<unset>", self.age(o), spec.get("volumeMode", "<unset>")]

    def cols_storageclasses(self):
        return [NAME_COL, col("Provisioner"), col("ReclaimPolicy"), col("VolumeBindingMode"),
                col("AllowVolumeExpansion"), col("Age")]

    def row_storageclasses(self, o):
        name = meta(o).get("name")
        ann = meta(o).get("annotations") or {}
        if ann.get("storageclass.kubernetes.io/is-default-class") == "true" or \
                ann.get("storageclass.beta.kubernetes.io/is-default-class") == "true":
            name += " (default)"
        return [name, o.get("provisioner", ""), o.get("reclaimPolicy", "Delete"),
                o.get("volumeBindingMode", "Immediate"), bool(o.get("allowVolumeExpansion", False)), self.age(o)]

    def cols_volumeattributesclasses(self):
        return [NAME_COL, col("DriverName"), col("Age")]

    def row_volumeattributesclasses(self, o):
        return [meta(o).get("name"), o.get("driverName", ""), self.age(o)]

    def cols_pods(self):
        return [NAME_COL, col("Ready"), col("Status"), col("Restarts"), col("Age"), col("IP", prio=1),
                col("Node", prio=1), col("Nominated Node", prio=1), col("Readiness Gates", prio=1)]

    def row_pods(self, o):
        spec, st = o.get("spec", {}), o.get("status", {})
        total = len(spec.get("containers") or [])
        ready = sum(1 for c in st.get("containerStatuses") or [] if c.get("ready"))
        reason = st.get("reason") or st.get("phase", "")
        for c in st.get("containerStatuses") or []:
            s = c.get("state") or {}
            if "waiting" in s and s["waiting"].get("reason"):
                reason = s["waiting"]["reason"]
            elif "terminated" in s:
                reason = s["terminated"].get("reason") or ("ExitCode:%d" % s["terminated"].get("exitCode", 0))
        if dig(o, "metadata", "deletionTimestamp"):
            reason = "Terminating"
        restarts = sum(int(c.get("restartCount", 0)) for c in st.get("containerStatuses") or [])
        return [meta(o).get("name"), "%d/%d" % (ready, total), reason, restarts, self.age(o),
                st.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
                st.get("nominatedNodeName") or "<none>", "<none>"]

    def cols_nodes(self):
        return [NAME_COL, col("Status"), col("Roles"), col("Age"), col("Version"), col("Internal-IP", prio=1),
                col("External-IP", prio=1), col("OS-Image", prio=1), col("Kernel-Version", prio=1),
                col("Container-Runtime", prio=1)]

    def row_nodes(self, o):
        st = o.get("status", {})
        ready = next((c for c in st.get("conditions") or [] if c.get("type") == "Ready"), None)
        status = "Unknown" if ready is None else ("Ready" if ready.get("status") == "True" else "NotReady")
        if dig(o, "spec", "unschedulable"):
            status += ",SchedulingDisabled"
        roles = sorted(k.split("/", 1)[1] for k in (meta(o).get("labels") or {})
                       if k.startswith("node-role.kubernetes.io/"))
        addrs = {a.get("type"): a.get("address") for a in st.get("addresses") or []}
        ni = st.get("nodeInfo") or {}
        return [meta(o).get("name"), status, ",".join(roles) or "<none>", self.age(o), ni.get("kubeletVersion", ""),
                addrs.get("InternalIP", "<none>"), addrs.get("ExternalIP", "<none>"), ni.get("osImage", "<unknown>"),
                ni.get("kernelVersion", "<unknown>"), ni.get("containerRuntimeVersion", "<unknown>")]

    def cols_namespaces(self):
        return [NAME_COL, col("Status"), col("Age")]

    def row_namespaces(self, o):
        return [meta(o).get("name"), dig(o, "status", "phase", default="Active"), self.age(o)]

    def cols_jobs(self):
        return [NAME_COL, col("Status"), col("Completions"), col("Duration"), col("Age"), col("Containers", prio=1),
                col("Images", prio=1), col("Selector", prio=1)]

    def row_jobs(self, o):
        spec, st = o.get("spec", {}), o.get("status", {})
        comps = spec.get("completions")
        completions = "%d/%d" % (st.get("succeeded", 0), comps) if comps is not None else "%d/1 of %d" % (
            st.get("succeeded", 0), spec.get("parallelism", 1))
        status = "Running"
        for c in st.get("conditions") or []:
            if c.get("status") == "True" and c.get("type") in ("Complete", "Failed", "Suspended", "FailureTarget"):
                status = c["type"]
        start = parse_time(st.get("startTime"))
        end = parse_time(st.get("completionTime")) or self.c.now()
        duration = human_duration(end - start) if start else ""
        ctrs = dig(spec, "template", "spec", "containers", default=[]) or []
        sel = ",".join("%s=%s" % kv for kv in sorted((dig(spec, "selector", "matchLabels") or {}).items()))
        return [meta(o).get("name"), status, completions, duration, self.age(o), ",".join(c.get("name", "") for c in ctrs),
                ",".join(c.get("image", "") for c in ctrs), sel]

    def cols_statefulsets(self):
        return [NAME_COL, col("Ready"), col("Age"), col("Containers", prio=1), col("Images", prio=1)]

    def row_statefulsets(self, o):
        ctrs = dig(o, "spec", "template", "spec", "containers", default=[]) or []
        return [meta(o).get("name"), "%d/%d" % (dig(o, "status", "readyReplicas", default=0),
                                                dig(o, "spec", "replicas", default=1)), self.age(o),
                ",".join(c.get("name", "") for c in ctrs), ",".join(c.get("image", "") for c in ctrs)]

    def cols_configmaps(self):
        return [NAME_COL, col("Data", typ="integer"), col("Age")]

    def row_configmaps(self, o):
        return [meta(o).get("name"), len(o.get("data") or {}) + len(o.get("binaryData") or {}), self.age(o)]

    def cols_events(self):
        return [col("Last Seen"), col("Type"), col("Reason"), col("Object"), col("Message"),
                col("Source", prio=1), col("First Seen", prio=1), col("Count", prio=1), col("Name", prio=1)]

    def row_events(self, o):
        io = o.get("involvedObject") or {}
        last = parse_time(o.get("lastTimestamp")) or parse_time(o.get("eventTime"))
        first = parse_time(o.get("firstTimestamp")) or last
        return [human_duration(self.c.now() - last) if last else "<unknown>", o.get("type", ""), o.get("reason", ""),
                "%s/%s" % (io.get("kind", "").lower(), io.get("name", "")), o.get("message", ""),
                dig(o, "source", "component", default=""), human_duration(self.c.now() - first) if first else "<unknown>",
                o.get("count", 1), meta(o).get("name")]
