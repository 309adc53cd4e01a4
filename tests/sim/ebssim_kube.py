"""ebssim_kube: the Kubernetes API server of the ebs simulator (one KubeCluster per scenario cluster).

Interface (tests/sim/CONTRACT.md): ``KubeCluster(sim, spec)`` with
``handle(method, path, query, headers, body, client_cert_cn) -> (status, headers, body_bytes)``,
``tick()`` (after every clock advance) and ``state()``; ``close()`` kills fio runs (also at exit).

What it serves, on the wire formats of the real kube-apiserver:
  * authentication: bearer tokens (``users[].token``), client certificates (CN = user name, passed
    in by the core after TLS verification), EKS tokens ``k8s-aws-v1.<base64url presigned STS URL>``
    (checked with ``sim.verify_presigned_sts``; the user whose ``eks_principal`` is the signer).
    Missing or bad credentials -> 401 Status; anonymous may read /version, /healthz, /livez, /readyz.
  * authorization: ``users[].allow`` entries ``VERB:RESOURCE`` (``list:persistentvolumeclaims``,
    ``get:nodes/proxy``, ``*:pods``, ``list:*``) or ``*``; denial -> 403 Status with RBAC's message.
    Discovery, /version and /openapi are open to every authenticated user (system:discovery).
  * /version, discovery (/api, /api/v1, /apis, /apis/G, /apis/G/V; legacy format, so clients fall
    back from aggregated discovery), a minimal /openapi/v3 (enough for kubectl apply's
    fieldValidation probe); /openapi/v2 is 404.
  * core/v1 namespaces, nodes, persistentvolumes, persistentvolumeclaims, pods (+log), configmaps,
    events, serviceaccounts; apps/v1 statefulsets, deployments, replicasets, daemonsets; batch/v1
    jobs; rbac.authorization.k8s.io/v1 clusterroles, clusterrolebindings, roles, rolebindings
    (stored only: authorization stays the scenario's users' allow lists);
    storage.k8s.io/v1 storageclasses, csidrivers, csinodes, volumeattachments; and
    VolumeAttributesClass at storage.k8s.io/v1 (>= 1.34), v1beta1 (1.31-1.33), v1alpha1 (1.29-1.30;
    served as if the VolumeAttributesClass feature gate and alpha API were switched on).
    Before 1.29 the field spec.volumeAttributesClassName is dropped like an unknown field.
  * list (limit/continue with consistent snapshots, labelSelector, fieldSelector, Table output),
    PartialObjectMetadata(List) on request, watch (long-poll: the body ends after the first batch
    of events or after ``watch_poll_s``, default 1 s, since the core cannot stream), get, create
    (generateName, dryRun), update (409 on stale resourceVersion), patch (merge, strategic merge
    for the simple cases, JSON patch, apply-patch treated as merge),
    delete (propagationPolicy; Jobs default to orphan as in the REST API), deletecollection,
    status subresources, pods/log, nodes/NAME/proxy/stats/summary (kubelet Summary from ``usage``).
  * continue tokens look like the real ones (base64url JSON with rv and start key) plus the list's
    start time; they expire after ``continue_ttl_s`` (default 300; wall clock plus ``ctl advance``
    jumps, not scaled by --time-scale) or with the ``expire-continue`` fault: 410 Expired with the
    apiserver's "inconsistent continue" message and a fresh token in metadata.continue
    (resourceVersion -1, continues at the latest state).
  * CSI emulation (ebs.csi.aws.com external-resizer + driver): a bound PVC on a CSI PV whose
    spec.volumeAttributesClassName differs from status.currentVolumeAttributesClassName gets
    modifyVolumeStatus InProgress and a ModifyVolume from principal ``ebs-csi-controller``; the
    driver only returns once the modification is ``optimizing`` or ``completed`` (it waits), so on
    tick() at that point the PVC gets currentVolumeAttributesClassName, modifyVolumeStatus is
    removed and the PV gets spec.volumeAttributesClassName (what external-resizer does on success).
    Missing VAC -> Pending; unknown VAC keys, unparsable values or EC2 InvalidParameter* errors ->
    Infeasible; other EC2 errors (VolumeModificationRateExceeded included) or a failed modification ->
    InProgress + ModifyVolumeError condition ("ModifyVolume failed with error: <driver error>. Waiting
    for retry.") and a Warning VolumeModifyFailed event with the driver's error, whose text ends in the
    AWS SDK for Go v2's "operation error EC2: ModifyVolume, https response error StatusCode: 400,
    RequestID: ..., api error CODE: MESSAGE" (AWS's message unchanged), and a retry with backoff (sim clock). A VAC of another driver -> Infeasible (a
    simulator choice). In-tree PVs (spec.awsElasticBlockStore) are never modified (a Warning event).
    Events (VolumeModify, VolumeModifySuccessful, VolumeModifyFailed) are real Event objects.
    With ``volume_modifier_sidecar: true`` PVC annotations ``ebs.csi.aws.com/<key>`` (volumeType,
    iops, throughput) that differ from the PV's trigger ModifyVolume; on success they are copied to
    the PV (as volume-modifier-for-k8s does).
  * Jobs create their Pods (backoffLimit with 10 s doubling backoff on the sim clock); a Pod whose
    container runs ``fio`` (directly or via ``sh -c``) runs the real fio locally in a thread, with
    volume mount paths rewritten to a per-pod directory (configMap volumes are materialized,
    volumeDevices become plain files, other absolute fio paths land in the pod's own rootfs
    directory; any remaining /dev path is refused, so no host device is ever touched);
    stdout+stderr is the pod log. restartPolicy OnFailure is treated as Never. Other Pods just
    run; scenario Pods are shown running and never executed. Deleting a Pod (or its Job) kills fio.
  * faults: ``sim.fault("kube", "VERB:RESOURCE")`` (e.g. ``list:persistentvolumes``,
    ``get:nodes/proxy``, ``patch:persistentvolumeclaims``): throttle (429 + Retry-After), 5xx,
    slow (sleeps delay_s first), drop (returns the DROP marker; CONTRACT.md), truncate (the
    body is cut in half, Content-Length matches the cut body), expire-continue (410 on the next
    request that carries a continue token).

Cluster spec knobs: version, git_version, region, eks_name, users, objects, usage,
volume_modifier_sidecar, continue_ttl_s (300), watch_poll_s (1), log_follow_wait_s (60),
job_backoff_s (10), modify_retry_s (10).

Not emulated: dynamic provisioning (new PVCs stay Pending unless spec.volumeName names an
Available PV; their Events and unschedulable pods' FailedScheduling: ebssim_kube_events.py), volume expansion, finalizers/graceful deletion (objects go at once), admission
webhooks, protobuf, exec/attach/port-forward, server-side apply field ownership.
"""

import atexit
import base64
import copy
import datetime
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from urllib.parse import parse_qs, unquote

import ebssim_kube_events as kube_events

EBS_DRIVER = "ebs.csi.aws.com"
CSI_PRINCIPAL = "ebs-csi-controller"
RESIZER_COMPONENT = "external-resizer " + EBS_DRIVER
MODIFIER_COMPONENT = "volume-modifier-for-k8s-" + EBS_DRIVER
DROP = (0, {"X-Ebssim-Fault": "drop"}, b"")

GIT_PATCH = {29: 15, 30: 14, 31: 11, 32: 7, 33: 2, 34: 1, 35: 0}
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
RO_VERBS = ["get", "list", "watch"]

EXPIRED_MSG = "The resourceVersion for the provided list is too old."
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.")


# ----------------------------------------------------------------------------------------------
# small helpers

def rfc3339(t):
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(s):
    if not s:
        return None
    try:
        s = s.strip().replace("Z", "+00:00")
        if "." in s:
            head, _, tail = s.partition(".")
            m = re.match(r"(\d+)(.*)", tail)
            s = head + (m.group(2) if m else "")
        return datetime.datetime.fromisoformat(s).timestamp()
    except (ValueError, AttributeError):
        return None


def human_duration(d):
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    sec = int(d)
    if sec < -1:
        return "<invalid>"
    if sec < 0:
        return "0s"
    if sec < 120:
        return "%ds" % sec
    minutes = sec // 60
    if minutes < 10:
        s = sec % 60
        return "%dm" % minutes if s == 0 else "%dm%ds" % (minutes, s)
    if minutes < 180:
        return "%dm" % minutes
    hours = sec // 3600
    if hours < 8:
        m = minutes % 60
        return "%dh" % hours if m == 0 else "%dh%dm" % (hours, m)
    if hours < 48:
        return "%dh" % hours
    if hours < 24 * 8:
        h = hours % 24
        return "%dd" % (hours // 24) if h == 0 else "%dd%dh" % (hours // 24, h)
    if hours < 24 * 365 * 2:
        return "%dd" % (hours // 24)
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return "%dy" % (hours // 24 // 365) if dy == 0 else "%dy%dd" % (hours // 24 // 365, dy)
    return "%dy" % (hours // 24 // 365)


def go_map(d):
    """Render a map[string]string the way Go's %#v does (sorted keys)."""
    return "map[string]string{" + ", ".join('%s:%s' % (json.dumps(k), json.dumps(v)) for k, v in sorted(d.items())) + "}"


QUANTITY_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
                   "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60, "m": 0.001}


def parse_quantity(q):
    """Kubernetes resource.Quantity -> number (bytes for storage)."""
    m = re.match(r"^\s*([0-9.]+)(?:[eE]([-+]?[0-9]+))?\s*([A-Za-z]*)\s*$", str(q))
    if not m or m.group(3) not in QUANTITY_SUFFIX:
        return 0
    v = float(m.group(1)) * (10 ** int(m.group(2)) if m.group(2) else 1)
    return v * QUANTITY_SUFFIX[m.group(3)]


def b64url_decode(s):
    s = s.strip()
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def meta(obj):
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = obj["metadata"] = {}
    return m


def dig(obj, *path, default=None):
    cur = obj
    for p in path:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and isinstance(p, int) and -len(cur) <= p < len(cur):
            cur = cur[p]
        else:
            return default
    return cur


META_ORDER = ["name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
              "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
              "annotations", "ownerReferences", "finalizers", "managedFields"]


def ordered(obj):
    """kind, apiVersion, metadata (Go field order) first, then the rest as given."""
    out = {}
    for k in ("kind", "apiVersion"):
        if k in obj:
            out[k] = obj[k]
    if "metadata" in obj and isinstance(obj["metadata"], dict):
        m = obj["metadata"]
        om = {k: m[k] for k in META_ORDER if k in m}
        om.update({k: v for k, v in m.items() if k not in om})
        out["metadata"] = om
    for k, v in obj.items():
        if k not in out:
            out[k] = v
    return out


# ----------------------------------------------------------------------------------------------
# patches

MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name",
              "volumes": "name", "env": "name", "volumeMounts": "mountPath", "conditions": "type",
              "ports": "containerPort", "ownerReferences": "uid", "imagePullSecrets": "name",
              "volumeDevices": "devicePath", "hostAliases": "ip", "topologySpreadConstraints": "topologyKey"}


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


def strategic_merge(target, patch, field=None):
    """Strategic merge patch for the simple cases kubectl sends: maps merge, $patch directives,
    lists with a known merge key merge by key, other lists are replaced."""
    if isinstance(patch, list):
        key = MERGE_KEYS.get(field)
        if (key and isinstance(target, list) and all(isinstance(e, dict) and key in e for e in patch)
                and all(isinstance(e, dict) and key in e for e in target)):
            out = [copy.deepcopy(e) for e in target]
            for e in patch:
                idx = next((i for i, o in enumerate(out) if o.get(key) == e.get(key)), None)
                if e.get("$patch") == "delete":
                    if idx is not None:
                        out.pop(idx)
                    continue
                if idx is None:
                    out.append(strategic_merge({}, e))
                else:
                    out[idx] = strategic_merge(out[idx], e)
            return out
        return [strategic_merge(None, e) if isinstance(e, dict) else copy.deepcopy(e) for e in patch]
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    base = {} if directive == "replace" or not isinstance(target, dict) else dict(target)
    for k, v in patch.items():
        if k.startswith("$"):
            continue
        if k.startswith("$setElementOrder/") or k.startswith("$retainKeys") or k.startswith("$deleteFromPrimitiveList/"):
            continue
        if v is None:
            base.pop(k, None)
            continue
        nv = strategic_merge(base.get(k), v, k)
        if nv is None and isinstance(v, dict) and v.get("$patch") == "delete":
            base.pop(k, None)
        else:
            base[k] = nv
    for k, v in patch.items():
        if k.startswith("$deleteFromPrimitiveList/"):
            name = k.split("/", 1)[1]
            if isinstance(base.get(name), list):
                base[name] = [e for e in base[name] if e not in v]
    return base


class PatchError(Exception):
    pass


def _ptr(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError("invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, dict):
            if p not in cur:
                raise PatchError("doc is missing path: %s" % p)
            cur = cur[p]
        elif isinstance(cur, list):
            try:
                cur = cur[int(p)]
            except (ValueError, IndexError):
                raise PatchError("doc is missing path: %s" % p)
        else:
            raise PatchError("doc is missing path: %s" % p)
    return cur


def json_patch(doc, ops):
    """RFC 6902 JSON patch."""
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise PatchError("json patch must be a list of operations")
    for op in ops:
        if not isinstance(op, dict) or "op" not in op:
            raise PatchError("invalid operation")
        kind = op["op"]
        parts = _ptr(op.get("path", ""))

        def add(parts, value):
            nonlocal doc
            if not parts:
                doc = value
                return
            parent = _walk(doc, parts[:-1])
            last = parts[-1]
            if isinstance(parent, dict):
                parent[last] = value
            elif isinstance(parent, list):
                if last == "-":
                    parent.append(value)
                else:
                    i = int(last)
                    if i < 0 or i > len(parent):
                        raise PatchError("index out of range")
                    parent.insert(i, value)
            else:
                raise PatchError("cannot add to %s" % op.get("path"))

        def remove(parts):
            parent = _walk(doc, parts[:-1])
            last = parts[-1]
            if isinstance(parent, dict):
                if last not in parent:
                    raise PatchError("Unable to remove nonexistent key: %s: missing value" % last)
                return parent.pop(last)
            if isinstance(parent, list):
                try:
                    return parent.pop(int(last))
                except (ValueError, IndexError):
                    raise PatchError("Unable to remove nonexistent index: %s" % last)
            raise PatchError("cannot remove %s" % op.get("path"))

        if kind == "add":
            add(parts, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            remove(parts)
        elif kind == "replace":
            _walk(doc, parts)
            if parts:
                remove(parts)
            add(parts, copy.deepcopy(op.get("value")))
        elif kind == "test":
            if _walk(doc, parts) != op.get("value"):
                raise PatchError("testing value %s failed" % op.get("path"))
        elif kind in ("move", "copy"):
            src = _ptr(op.get("from", ""))
            val = copy.deepcopy(_walk(doc, src))
            if kind == "move":
                remove(src)
            add(parts, val)
        else:
            raise PatchError("Unexpected kind: %s" % kind)
    return doc


# ----------------------------------------------------------------------------------------------
# selectors

class SelectorError(Exception):
    pass


def parse_label_selector(s):
    """-> list of (key, op, values) with op in = != in notin exists !exists gt lt."""
    reqs = []
    if not s:
        return reqs
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        p = p.strip()
        if not p:
            raise SelectorError("found '', expected: !, identifier, or 'end of string'")
        m = re.match(r"^([A-Za-z0-9_./-]+)\s+(in|notin)\s*\(([^)]*)\)$", p)
        if m:
            reqs.append((m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",") if v.strip()]))
            continue
        m = re.match(r"^([A-Za-z0-9_./-]+)\s*(==|!=|=|>|<)\s*([A-Za-z0-9_.-]*)$", p)
        if m:
            op = {"==": "=", "=": "=", "!=": "!=", ">": "gt", "<": "lt"}[m.group(2)]
            reqs.append((m.group(1), op, [m.group(3)]))
            continue
        m = re.match(r"^(!?)\s*([A-Za-z0-9_./-]+)$", p)
        if m:
            reqs.append((m.group(2), "!exists" if m.group(1) else "exists", []))
            continue
        raise SelectorError("unable to parse requirement: %s" % p)
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "=" and (not has or v != vals[0]):
            return False
        if op == "!=" and has and v == vals[0]:
            return False
        if op == "in" and (not has or v not in vals):
            return False
        if op == "notin" and has and v in vals:
            return False
        if op == "exists" and not has:
            return False
        if op == "!exists" and has:
            return False
        if op in ("gt", "lt"):
            try:
                a, b = int(v), int(vals[0])
            except (TypeError, ValueError):
                return False
            if (op == "gt" and not a > b) or (op == "lt" and not a < b):
                return False
    return True


def parse_field_selector(s):
    reqs = []
    if not s:
        return reqs
    for p in re.split(r"(?<!\\),", s):
        p = p.strip()
        if not p:
            continue
        m = re.match(r"^([^=!]+?)\s*(==|!=|=)\s*(.*)$", p)
        if not m:
            raise SelectorError("invalid selector: '%s'; can't understand '%s'" % (s, p))
        reqs.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3).replace("\\,", ",")))
    return reqs


# ----------------------------------------------------------------------------------------------
# resource types

class RT:
    def __init__(self, group, version, kind, plural, namespaced, short=(), status=False, subs=(),
                 verbs=ALL_VERBS, categories=(), generation=False, fields=()):
        self.group, self.version, self.kind, self.plural = group, version, kind, plural
        self.namespaced, self.short, self.status = namespaced, list(short), status
        self.subs = list(subs) + (["status"] if status else [])
        self.verbs, self.categories, self.generation = verbs, list(categories), generation
        self.fields = ["metadata.name"] + (["metadata.namespace"] if namespaced else []) + list(fields)

    @property
    def api_version(self):
        return self.group + "/" + self.version if self.group else self.version

    @property
    def qualified(self):
        """GroupResource.String(): plural or plural.group"""
        return self.plural + "." + self.group if self.group else self.plural

    @property
    def qualified_kind(self):
        return self.kind + "." + self.group if self.group else self.kind


def vac_version(minor):
    if minor >= 34:
        return "v1"
    if minor >= 31:
        return "v1beta1"
    if minor >= 29:
        return "v1alpha1"
    return None


def build_types(minor):
    pod_fields = ["spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                  "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"]
    ev_fields = ["involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
                 "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
                 "reason", "reportingComponent", "source", "type"]
    types = [
        RT("", "v1", "Namespace", "namespaces", False, ["ns"], status=True, subs=["finalize"],
           verbs=["create", "delete", "get", "list", "patch", "update", "watch"], fields=["status.phase"]),
        RT("", "v1", "Node", "nodes", False, ["no"], status=True, subs=["proxy"], fields=["spec.unschedulable"]),
        RT("", "v1", "PersistentVolume", "persistentvolumes", False, ["pv"], status=True),
        RT("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ["pvc"], status=True),
        RT("", "v1", "Pod", "pods", True, ["po"], status=True, subs=["log"], categories=["all"], fields=pod_fields),
        RT("", "v1", "ConfigMap", "configmaps", True, ["cm"]),
        RT("", "v1", "Event", "events", True, ["ev"], fields=ev_fields),
        RT("apps", "v1", "StatefulSet", "statefulsets", True, ["sts"], status=True, subs=["scale"],
           categories=["all"], generation=True),
        RT("apps", "v1", "Deployment", "deployments", True, ["deploy"], status=True, subs=["scale"],
           categories=["all"], generation=True),
        RT("apps", "v1", "ReplicaSet", "replicasets", True, ["rs"], status=True, subs=["scale"],
           categories=["all"], generation=True),
        RT("apps", "v1", "DaemonSet", "daemonsets", True, ["ds"], status=True, categories=["all"], generation=True),
        RT("batch", "v1", "Job", "jobs", True, [], status=True, categories=["all"], generation=True,
           fields=["status.successful"]),
        RT("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ["sc"]),
        RT("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False),
        RT("storage.k8s.io", "v1", "CSINode", "csinodes", False),
        RT("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", False, status=True),
        # what `ebsmigrate rbac | kubectl apply -f -` creates
        RT("", "v1", "ServiceAccount", "serviceaccounts", True, ["sa"]),
        RT("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
        RT("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
        RT("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
        RT("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    ]
    vv = vac_version(minor)
    if vv:
        types.append(RT("storage.k8s.io", vv, "VolumeAttributesClass", "volumeattributesclasses", False, ["vac"]))
    return types


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


# ----------------------------------------------------------------------------------------------
# fio pods

SHELLS = {"sh", "bash", "ash", "dash", "busybox"}
FIO_PATH_OPTS = {"filename", "directory", "output", "write_bw_log", "write_lat_log", "write_iops_log",
                 "write_hist_log", "opendir", "trigger-file", "ioengine_lib", "fdp_pli", "filename_format"}
HARMLESS_DEV = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/stdin", "/dev/stdout",
                "/dev/stderr", "/dev/fd/", "/dev/shm/")


def safe_join(base, rel):
    """base/rel, refusing to climb out of base."""
    p = os.path.normpath(os.path.join(base, str(rel).lstrip("/")))
    if p != base and not p.startswith(base.rstrip("/") + "/"):
        p = os.path.join(base, "_" + re.sub(r"[^A-Za-z0-9_.-]", "_", str(rel)))
    return p


def host_device(text):
    """The first /dev path in text that could touch a host device, or None."""
    for m in re.finditer(r"(?<![A-Za-z0-9_.-])/dev/[^\s:'\";,]*", text):
        p = m.group(0)
        if p.rstrip("/") == "/dev" or any(p == h or (h.endswith("/") and p.startswith(h)) for h in HARMLESS_DEV):
            continue
        return p
    return None


class PodRun:
    """One container process (fio) of one pod, run locally in a thread."""

    def __init__(self, cluster, key, uid, container, argv, cwd, env):
        self.cluster, self.key, self.uid, self.container = cluster, key, uid, container
        self.argv, self.cwd, self.env = argv, cwd, env
        self.log = bytearray()
        self.log_lock = threading.Lock()
        self.proc = None
        self.done = threading.Event()
        self.killed = False
        self.rc = None
        self.thread = threading.Thread(target=self._run, name="ebssim-pod-" + key, daemon=True)

    def start(self):
        self.thread.start()

    def _run(self):
        rc, err = None, None
        try:
            self.proc = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            if self.killed:
                self._killpg()
            while True:
                chunk = self.proc.stdout.read1(65536) if hasattr(self.proc.stdout, "read1") else self.proc.stdout.read(65536)
                if not chunk:
                    break
                with self.log_lock:
                    self.log += chunk
            rc = self.proc.wait()
            self.proc.stdout.close()
        except OSError as e:
            err = e
            with self.log_lock:
                self.log += ("exec %s: %s\n" % (self.argv[0] if self.argv else "", e.strerror or e)).encode()
        self.rc = rc
        try:
            self.cluster._container_exited(self, rc, err)
        finally:
            self.done.set()

    def _killpg(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def kill(self):
        self.killed = True
        if self.proc is not None and self.proc.poll() is None:
            self._killpg()

    def text(self):
        with self.log_lock:
            return bytes(self.log)


_ALL_CLUSTERS = []


def _close_all():
    for c in list(_ALL_CLUSTERS):
        try:
            c.close()
        except Exception:
            pass


atexit.register(_close_all)


# ----------------------------------------------------------------------------------------------

class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, headers=None, extra=None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details, self.headers, self.extra = details, headers or {}, extra or {}


class KubeCluster:
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

    # ------------------------------------------------------------------ responses
    def _json(self, code, obj, extra_headers=None, ctype="application/json"):
        body = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
        h = {"Content-Type": ctype, "Cache-Control": "no-cache, private",
             "Audit-Id": str(uuid.uuid4())}
        h["X-Kubernetes-Pf-Flowschema-Uid"] = self._uid("flowschema", "exempt")
        h["X-Kubernetes-Pf-Prioritylevel-Uid"] = self._uid("prioritylevel", "exempt")
        if extra_headers:
            h.update(extra_headers)
        return code, h, body

    def _status_body(self, e):
        st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": e.message, "reason": e.reason}
        if e.details is not None:
            st["details"] = e.details
        st["code"] = e.code
        if e.extra.get("continue"):
            st["metadata"] = {"continue": e.extra["continue"]}
        return st

    @staticmethod
    def not_found(rt, name):
        d = {"name": name}
        if rt.group:
            d["group"] = rt.group
        d["kind"] = rt.plural
        return ApiError(404, "NotFound", '%s "%s" not found' % (rt.qualified, name), d)

    @staticmethod
    def invalid(rt, name, errs):
        """errs: list of (field, type, detail) -> 422 Invalid Status."""
        causes, texts = [], []
        for field, typ, detail in errs:
            reason = {"Invalid value": "FieldValueInvalid", "Forbidden": "FieldValueForbidden",
                      "Required value": "FieldValueRequired", "Unsupported value": "FieldValueNotSupported",
                      "Duplicate value": "FieldValueDuplicate"}.get(typ, "FieldValueInvalid")
            msg = "%s: %s" % (typ, detail) if detail else typ
            causes.append({"reason": reason, "message": msg, "field": field})
            texts.append("%s: %s" % (field, msg))
        agg = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
        d = {"name": name}
        if rt.group:
            d["group"] = rt.group
        d["kind"] = rt.kind
        d["causes"] = causes
        return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (rt.qualified_kind, name, agg), d)

    @staticmethod
    def bad_request(msg):
        return ApiError(400, "BadRequest", msg)

    @staticmethod
    def generic_404():
        return ApiError(404, "NotFound", "the server could not find the requested resource", {})

    def conflict(self, rt, name):
        d = {"name": name}
        if rt.group:
            d["group"] = rt.group
        d["kind"] = rt.plural
        return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been modified; '
                        'please apply your changes to the latest version and try again' % (rt.qualified, name), d)

    # ------------------------------------------------------------------ entry point
    def handle(self, method, path, query, headers, body, client_cert_cn=None):
        method = (method or "GET").upper()
        if "?" in path and not query:
            path, _, query = path.partition("?")
        q = self._parse_query(query)
        h = {str(k).lower(): v for k, v in (headers or {}).items()} if headers else {}
        if isinstance(body, str):
            body = body.encode()
        body = body or b""
        path = "/" + unquote(path).strip("/") if path not in ("", "/") else "/"
        ri = self._request_info(method, path, q)
        user = None
        resp = None
        err = None
        fault = None
        try:
            user = self._authenticate(h, client_cert_cn, ri)
            fault = self._fault(ri)
            if fault is not None:
                kind = fault.get("kind")
                if kind == "slow":
                    time.sleep(float(fault.get("delay_s", 2) or 0))
                elif kind == "drop":
                    resp = DROP
                elif kind == "throttle":
                    ra = int(fault.get("retry_after", fault.get("retry_after_s", 1)) or 1)
                    raise ApiError(429, "TooManyRequests", "Too many requests, please try again later.",
                                   {"retryAfterSeconds": ra}, headers={"Retry-After": str(ra)})
                elif kind == "5xx":
                    code = int(fault.get("status", fault.get("code", 500)) or 500)
                    if code == 503:
                        raise ApiError(503, "ServiceUnavailable", "the server is currently unable to handle the request", {})
                    if code == 504:
                        raise ApiError(504, "Timeout", "the server was unable to return a response in the time allotted, "
                                       "but may still be processing the request", {})
                    raise ApiError(code, "InternalError", "Internal error occurred: injected fault",
                                   {"causes": [{"message": "injected fault"}]})
            if resp is None:
                self._authorize(user, ri)
                resp = self._dispatch(ri, method, path, q, h, body, user, fault)
        except ApiError as e:
            err = e
            resp = self._json(e.code, self._status_body(e), e.headers)
        except Exception as e:  # a simulator bug must still answer like a server
            import traceback
            traceback.print_exc()
            err = ApiError(500, "InternalError", "Internal error occurred: %s" % e)
            resp = self._json(500, self._status_body(err))
        if fault is not None and fault.get("kind") == "truncate" and resp is not DROP and resp[2]:
            b = resp[2]
            resp = (resp[0], dict(resp[1]), b[: max(1, len(b) // 2)])
        self._log(method, path, q, body, h, resp[0] if resp is not DROP else 0, err, user, ri, fault)
        return resp

    def _parse_query(self, query):
        if not query:
            return {}
        if isinstance(query, (bytes, str)):
            if isinstance(query, bytes):
                query = query.decode()
            return {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
        out = {}
        for k, v in dict(query).items():
            out[k] = v[-1] if isinstance(v, (list, tuple)) and v else ("" if isinstance(v, (list, tuple)) else str(v))
        return out

    def _log(self, method, path, q, body, h, status, err, user, ri, fault):
        params = dict(q)
        if body and method in ("POST", "PUT", "PATCH") and len(body) < 65536:
            try:
                params["body"] = json.loads(body)
            except ValueError:
                params["body"] = body[:200].decode("utf-8", "replace")
        code = err.reason if err else None
        if status == 0 and fault is not None:
            code = "ConnectionDropped"
        entry = {"time": rfc3339(self.now()), "service": "kube", "region": self.region, "cluster": self.name,
                 "action": "%s %s" % (method, path), "params": params, "status": status,
                 "error_code": code, "principal": user["name"] if user else None}
        try:
            self.sim.log_request(entry)
        except Exception:
            pass

    def _fault(self, ri):
        if not hasattr(self.sim, "fault"):
            return None
        if ri["resource_request"]:
            res = ri["resource"] + ("/" + ri["sub"] if ri["sub"] else "")
            action = "%s:%s" % (ri["verb"], res)
        else:
            action = "%s:%s" % (ri["verb"], ri["path"])
        try:
            f = self.sim.fault("kube", action)
        except TypeError:
            f = None
        if f and (f.get("kind") == "skew" or (f.get("kind") == "expire-continue" and not (
                ri["verb"] == "list" and ri.get("continue")))):
            self._unfire(f)  # only a continued list can expire; give the shot back
            return None
        return f or None

    def _unfire(self, f):
        with self.sim.lock:
            for g in getattr(self.sim, "faults", None) or []:
                if isinstance(g, dict) and g.get("_fired", 0) > 0 and all(
                        g.get(k) == f.get(k) for k in ("service", "action", "kind", "count", "rate")):
                    g["_fired"] -= 1
                    return

    # ------------------------------------------------------------------ request info, authn, authz
    def _request_info(self, method, path, q):
        ri = {"path": path, "resource_request": False, "verb": method.lower(), "group": "", "version": "",
              "namespace": None, "resource": "", "name": None, "sub": None, "rest": []}
        verb = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete"}.get(method, method.lower())
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["api"] and len(parts) >= 3:
            ri["version"], rest = parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 4:
            ri["group"], ri["version"], rest = parts[1], parts[2], parts[3:]
        else:
            ri["verb"] = verb
            return ri
        ri["resource_request"] = True
        if rest[0] == "namespaces" and len(rest) >= 2:
            if len(rest) == 2 or (len(rest) == 3 and rest[2] in ("status", "finalize")):
                ri["resource"], ri["name"] = "namespaces", rest[1]
                ri["sub"] = rest[2] if len(rest) == 3 else None
                ri["namespace"] = rest[1]
                rest = []
            else:
                ri["namespace"] = rest[1]
                rest = rest[2:]
        if rest:
            ri["resource"] = rest[0]
            if len(rest) > 1:
                ri["name"] = rest[1]
            if len(rest) > 2:
                ri["sub"] = rest[2]
                ri["rest"] = rest[3:]
        if verb == "get" and not ri["name"]:
            verb = "watch" if q.get("watch") in ("1", "true", "True") else "list"
        ri["continue"] = bool(q.get("continue"))
        if verb == "delete" and not ri["name"]:
            verb = "deletecollection"
        ri["verb"] = verb
        return ri

    def _authenticate(self, h, cn, ri):
        if cn:
            for u in self.users:
                if u.get("name") == cn and u.get("client_cert"):
                    return u
            return {"name": cn, "allow": []}
        auth = h.get("authorization", "")
        if not auth:
            if not ri["resource_request"] and ri["path"] in ("/version", "/healthz", "/livez", "/readyz"):
                return None
            raise ApiError(401, "Unauthorized", "Unauthorized")
        scheme, _, cred = auth.partition(" ")
        cred = cred.strip()
        if scheme.lower() != "bearer" or not cred:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        if cred.startswith("k8s-aws-v1."):
            try:
                url = b64url_decode(cred[len("k8s-aws-v1."):]).decode()
            except (ValueError, UnicodeDecodeError):
                raise ApiError(401, "Unauthorized", "Unauthorized")
            try:
                principal, _reason = self.sim.verify_presigned_sts(url, {"x-k8s-aws-id": self.eks_name})
            except Exception:
                principal = None
            if not principal:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            for u in self.users:
                ep = u.get("eks_principal")
                if ep and (ep == principal or str(principal).endswith("/" + ep) or str(ep).endswith("/" + str(principal))):
                    return u
            raise ApiError(401, "Unauthorized", "Unauthorized")
        u = self.tokens.get(cred)
        if u is None:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        return u

    @staticmethod
    def _allows(user, verb, resource, group):
        for a in user.get("allow") or []:
            if a == "*":
                return True
            v, _, r = str(a).partition(":")
            if v not in ("*", verb):
                continue
            if r in ("*", resource) or (group and r == resource.split("/")[0] + "." + group + (
                    "/" + resource.split("/", 1)[1] if "/" in resource else "")):
                return True
            if r.endswith("/*") and resource.startswith(r[:-2] + "/"):
                return True
        return False

    def _authorize(self, user, ri):
        if user is None:
            return
        if not ri["resource_request"]:
            return  # discovery, /version, /openapi: system:discovery / public-info-viewer
        res = ri["resource"] + ("/" + ri["sub"] if ri["sub"] else "")
        if self._allows(user, ri["verb"], res, ri["group"]):
            return
        who = 'User "%s" cannot %s resource "%s" in API group "%s"' % (user["name"], ri["verb"], res, ri["group"])
        ns = ri["namespace"]
        who += ' in the namespace "%s"' % ns if ns else " at the cluster scope"
        qual = ri["resource"] + ("." + ri["group"] if ri["group"] else "")
        msg = ('%s "%s" is forbidden: %s' % (qual, ri["name"], who)) if ri["name"] else "%s is forbidden: %s" % (qual, who)
        d = {}
        if ri["name"]:
            d["name"] = ri["name"]
        if ri["group"]:
            d["group"] = ri["group"]
        d["kind"] = ri["resource"]
        raise ApiError(403, "Forbidden", msg, d)

    # ------------------------------------------------------------------ dispatch
    def _dispatch(self, ri, method, path, q, h, body, user, fault):
        if not ri["resource_request"]:
            return self._nonresource(ri, method, path, q, h)
        rt = self._resolve(ri)
        verb, ns, name, sub = ri["verb"], ri["namespace"], ri["name"], ri["sub"]
        if rt.plural == "namespaces":
            ns = None
        with self.sim.lock:
            self._maybe_progress()
        if verb == "list":
            return self._list(rt, ns, q, h, fault)
        if verb == "watch":
            return self._watch(rt, ns, q, h)
        if verb == "deletecollection":
            return self._delete_collection(rt, ns, q, body)
        if sub == "log":
            if method != "GET":
                raise ApiError(405, "MethodNotAllowed", 'the server does not allow this method on the requested resource')
            return self._pod_log(ns, name, q)
        if sub == "proxy":
            return self._node_proxy(name, ri["rest"], method)
        if sub in ("scale", "finalize"):
            raise self.generic_404()
        if verb == "get":
            return self._get(rt, ns, name, q, h)
        if verb == "create":
            if name:
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            return self._create(rt, ns, q, h, body)
        if verb == "update":
            return self._put(rt, ns, name, sub, q, h, body)
        if verb == "patch":
            return self._patch(rt, ns, name, sub, q, h, body)
        if verb == "delete":
            return self._delete(rt, ns, name, q, body)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def _resolve(self, ri):
        rt = self.by_plural.get(ri["resource"])
        if rt is None or rt.group != ri["group"] or rt.version != ri["version"]:
            raise self.generic_404()
        if rt.plural != "namespaces":
            if ri["namespace"] is not None and not rt.namespaced:
                raise self.generic_404()
            if rt.namespaced and ri["namespace"] is None and ri["name"]:
                raise self.generic_404()
        if ri["sub"] and ri["sub"] not in rt.subs:
            raise self.generic_404()
        return rt

    def _wants_table(self, h):
        return self._wants_as(h, "Table")

    @staticmethod
    def _wants_as(h, kind):
        """Accept: application/json;as=KIND;v=V;g=meta.k8s.io -> V (first acceptable entry wins)."""
        for part in h.get("accept", "").split(","):
            params = {kv.split("=", 1)[0].strip(): kv.split("=", 1)[1].strip()
                      for kv in part.split(";")[1:] if "=" in kv}
            if "as" not in params and part.split(";")[0].strip() in ("application/json", "*/*", ""):
                return None
            if params.get("as") == kind and params.get("g") == "meta.k8s.io":
                return params.get("v", "v1")
        return None

    def _partial(self, o, v):
        return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/" + v,
                "metadata": copy.deepcopy(o.get("metadata", {}))}

    # ------------------------------------------------------------------ non-resource
    def _groups(self):
        groups = {}
        for rt in self.types:
            if rt.group:
                groups.setdefault(rt.group, [])
                if rt.version not in groups[rt.group]:
                    groups[rt.group].append(rt.version)
        order = {"v1": 0, "v1beta1": 1, "v1alpha1": 2}
        return {g: sorted(vs, key=lambda v: order.get(v, 9)) for g, vs in groups.items()}

    def _group_obj(self, g, vs):
        versions = [{"groupVersion": "%s/%s" % (g, v), "version": v} for v in vs]
        return {"name": g, "versions": versions, "preferredVersion": versions[0]}

    def _resource_list(self, group, version):
        res = []
        for rt in self.types:
            if rt.group != group or rt.version != version:
                continue
            e = {"name": rt.plural, "singularName": rt.kind.lower(), "namespaced": rt.namespaced, "kind": rt.kind,
                 "verbs": rt.verbs}
            if rt.short:
                e["shortNames"] = rt.short
            if rt.categories:
                e["categories"] = rt.categories
            e["storageVersionHash"] = base64.b64encode(hashlib.sha256(
                ("%s/%s/%s" % (rt.group, rt.version, rt.kind)).encode()).digest()[:8]).decode()
            res.append(e)
            for sub in rt.subs:
                kind, verbs, g, v = rt.kind, ["get", "patch", "update"], None, None
                if sub == "log":
                    kind, verbs = "Pod", ["get"]
                elif sub == "proxy":
                    kind, verbs = "NodeProxyOptions", ["create", "delete", "get", "patch", "update"]
                elif sub == "scale":
                    kind, g, v = "Scale", "autoscaling", "v1"
                elif sub == "finalize":
                    verbs = ["update"]
                se = {"name": rt.plural + "/" + sub, "singularName": "", "namespaced": rt.namespaced}
                if g:
                    se["group"], se["version"] = g, v
                se["kind"], se["verbs"] = kind, verbs
                res.append(se)
        return res

    def _nonresource(self, ri, method, path, q, h):
        if method != "GET":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        parts = [p for p in path.split("/") if p]
        if path in ("/healthz", "/livez", "/readyz"):
            return 200, {"Content-Type": "text/plain; charset=utf-8"}, b"ok"
        if path == "/version":
            v = {"major": str(self.major), "minor": str(self.minor)}
            if self.minor >= 33:
                v.update({"emulationMajor": str(self.major), "emulationMinor": str(self.minor),
                          "minCompatibilityMajor": str(self.major), "minCompatibilityMinor": str(self.minor - 1)})
            v.update({"gitVersion": self.git_version, "gitCommit": hashlib.sha1(self.git_version.encode()).hexdigest(),
                      "gitTreeState": "clean", "buildDate": "2025-06-01T00:00:00Z",
                      "goVersion": "go1.%d.4" % min(24, max(21, self.minor - 9)), "compiler": "gc",
                      "platform": "linux/amd64"})
            return self._json(200, v)
        if path == "/api":
            return self._json(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": "172.16.0.10:443"}]})
        if path == "/api/v1":
            return self._json(200, {"kind": "APIResourceList", "groupVersion": "v1",
                                    "resources": self._resource_list("", "v1")})
        groups = self._groups()
        if path == "/apis":
            return self._json(200, {"kind": "APIGroupList", "apiVersion": "v1",
                                    "groups": [self._group_obj(g, vs) for g, vs in groups.items()]})
        if parts[:1] == ["apis"] and len(parts) == 2 and parts[1] in groups:
            o = {"kind": "APIGroup", "apiVersion": "v1"}
            o.update(self._group_obj(parts[1], groups[parts[1]]))
            return self._json(200, o)
        if parts[:1] == ["apis"] and len(parts) == 3 and parts[2] in groups.get(parts[1], []):
            return self._json(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": parts[1] + "/" + parts[2],
                                    "resources": self._resource_list(parts[1], parts[2])})
        if parts[:2] == ["openapi", "v3"]:
            return self._openapi_v3(parts[2:])
        return 404, {"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}, b"404 page not found\n"

    def _gvs(self):
        out = [("", "v1")]
        for g, vs in self._groups().items():
            out += [(g, v) for v in vs]
        return out

    def _openapi_v3(self, rest):
        if not rest:
            paths = {}
            for g, v in self._gvs():
                p = "api/v1" if not g else "apis/%s/%s" % (g, v)
                h = hashlib.sha512((self.git_version + p).encode()).hexdigest()[:128].upper()
                paths[p] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (p, h)}
            return self._json(200, {"paths": paths})
        want = "/".join(rest)
        for g, v in self._gvs():
            p = "api/v1" if not g else "apis/%s/%s" % (g, v)
            if p != want:
                continue
            paths = {}
            params = [{"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
                      for n in ("dryRun", "fieldManager", "fieldValidation")]
            for rt in self.types:
                if rt.group != g or rt.version != v:
                    continue
                gvk = {"group": g, "version": v, "kind": rt.kind}
                base = "/" + p + ("/namespaces/{namespace}" if rt.namespaced else "") + "/" + rt.plural
                ok = {"200": {"description": "OK"}}
                paths[base] = {
                    "get": {"operationId": "list" + rt.kind, "x-kubernetes-action": "list",
                            "x-kubernetes-group-version-kind": gvk, "responses": ok},
                    "post": {"operationId": "create" + rt.kind, "x-kubernetes-action": "post",
                             "x-kubernetes-group-version-kind": gvk, "parameters": params, "responses": ok}}
                paths[base + "/{name}"] = {
                    "get": {"operationId": "read" + rt.kind, "x-kubernetes-action": "get",
                            "x-kubernetes-group-version-kind": gvk, "responses": ok},
                    "put": {"operationId": "replace" + rt.kind, "x-kubernetes-action": "put",
                            "x-kubernetes-group-version-kind": gvk, "parameters": params, "responses": ok},
                    "patch": {"operationId": "patch" + rt.kind, "x-kubernetes-action": "patch",
                              "x-kubernetes-group-version-kind": gvk,
                              "parameters": params + [{"name": "force", "in": "query", "schema": {"type": "boolean"}}],
                              "responses": ok},
                    "delete": {"operationId": "delete" + rt.kind, "x-kubernetes-action": "delete",
                               "x-kubernetes-group-version-kind": gvk, "responses": ok}}
            return self._json(200, {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": self.git_version},
                                    "paths": paths, "components": {"schemas": {}}})
        return 404, {"Content-Type": "text/plain; charset=utf-8"}, b"404 page not found\n"

    # ------------------------------------------------------------------ reads
    def _out(self, rt, obj, with_type=True):
        o = copy.deepcopy(obj)
        if with_type:
            o["kind"], o["apiVersion"] = rt.kind, rt.api_version
            return ordered(o)
        o.pop("kind", None)
        o.pop("apiVersion", None)
        return o

    def _selectors(self, rt, q):
        try:
            lsel = parse_label_selector(q.get("labelSelector", ""))
            fsel = parse_field_selector(q.get("fieldSelector", ""))
        except SelectorError as e:
            raise self.bad_request("unable to parse requirement: %s" % e)
        for f, _op, _v in fsel:
            if f not in rt.fields:
                raise self.bad_request('"%s" is not a known field selector: only "%s"' % (f, '", "'.join(rt.fields))
                                       if rt.plural in ("volumeattributesclasses",) else "field label not supported: %s" % f)
        return lsel, fsel

    @staticmethod
    def _field_value(obj, f):
        if f == "source":
            return dig(obj, "source", "component", default="")
        if f == "status.successful":
            return str(dig(obj, "status", "succeeded", default=0))
        v = dig(obj, *f.split("."))
        if isinstance(v, bool):
            return "true" if v else "false"
        if v is None:
            return ""
        return str(v)

    def _matches(self, obj, lsel, fsel):
        if lsel and not labels_match(lsel, dig(obj, "metadata", "labels")):
            return False
        for f, op, v in fsel:
            got = self._field_value(obj, f)
            if (op == "=" and got != v) or (op == "!=" and got == v):
                return False
        return True

    def _compaction_clock(self):
        """Continue tokens age on the wall clock plus explicit `ctl advance` jumps: --time-scale
        must not make every paginated list expire, while an advance past the TTL still does."""
        clock = getattr(self.sim, "clock", None)
        if clock is not None and hasattr(clock, "advanced"):
            return time.time() + float(clock.advanced)
        return self.now()

    def _encode_continue(self, rv, start, t):
        raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start, "t": int(t)}, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    def _decode_continue(self, tok):
        try:
            d = json.loads(b64url_decode(tok))
            if d.get("v") != "meta.k8s.io/v1" or not isinstance(d.get("rv"), int) or not isinstance(d.get("start"), str):
                raise ValueError("bad token")
            return d
        except (ValueError, TypeError, AttributeError, UnicodeDecodeError):
            raise self.bad_request("continue key is not valid: invalid continue token")

    def _list(self, rt, ns, q, h, fault):
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise self.bad_request('limit: Invalid value: "%s": must be an integer' % q.get("limit"))
        lsel, fsel = self._selectors(rt, q)
        cont = q.get("continue") or ""
        with self.sim.lock:
            now = self._compaction_clock()
            if cont:
                tok = self._decode_continue(cont)
                t0 = tok.get("t", now)
                expired = (fault is not None and fault.get("kind") == "expire-continue") or \
                    (tok["rv"] != -1 and now - t0 > self.continue_ttl)
                snap = None
                if not expired:
                    if tok["rv"] == -1:
                        snap, list_rv, t0 = dict(self.store[rt.plural]), self.rv, now
                    else:
                        snap, list_rv = self._snapshot(rt.plural, tok["rv"]), tok["rv"]
                if snap is None:
                    newtok = self._encode_continue(-1, tok["start"], now)
                    raise ApiError(410, "Expired", INCONSISTENT_CONTINUE, extra={"continue": newtok})
                start = tok["start"]
            else:
                snap, list_rv, t0, start = dict(self.store[rt.plural]), self.rv, now, ""
            keys = sorted(k for k in snap if k >= start and (ns is None or k.startswith(ns + "/")))
            items, last, remaining = [], None, 0
            for k in keys:
                o = snap[k]
                if not self._matches(o, lsel, fsel):
                    continue
                if limit and len(items) >= limit:
                    remaining += 1
                    continue
                items.append(o)
                last = k
            lmeta = {"resourceVersion": str(list_rv)}
            if remaining:
                lmeta["continue"] = self._encode_continue(list_rv, last + "\x00", t0)
                if not lsel and not fsel:
                    lmeta["remainingItemCount"] = remaining
            tv = self._wants_table(h)
            if tv:
                return self._table(rt, items, lmeta, q, tv)
            pv = self._wants_as(h, "PartialObjectMetadataList")
            if pv:
                return self._json(200, {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/" + pv,
                                        "metadata": lmeta, "items": [self._partial(o, pv) for o in items]},
                                  ctype="application/json;as=PartialObjectMetadataList;v=%s;g=meta.k8s.io" % pv)
            # Serialized here, under the lock: each item only needs its kind and apiVersion
            # left out, not a deep copy (_out's) that json.dumps would merely read.
            drop = ("kind", "apiVersion")
            out = {"kind": rt.kind + "List", "apiVersion": rt.api_version, "metadata": lmeta,
                   "items": [{k: v for k, v in o.items() if k not in drop} for o in items]}
            return self._json(200, out)

    def _table(self, rt, items, lmeta, q, tv="v1"):
        include = q.get("includeObject") or "Metadata"
        rows = []
        for o in items:
            row = {"cells": self.printer.cells(rt, o)}
            if include == "Object":
                row["object"] = self._out(rt, o)
            elif include != "None":
                row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/" + tv,
                                 "metadata": copy.deepcopy(o.get("metadata", {}))}
            rows.append(row)
        t = {"kind": "Table", "apiVersion": "meta.k8s.io/" + tv, "metadata": lmeta,
             "columnDefinitions": self.printer.columns(rt), "rows": rows}
        return self._json(200, t, ctype="application/json;as=Table;v=%s;g=meta.k8s.io" % tv)

    def _get(self, rt, ns, name, q, h):
        with self.sim.lock:
            o = self.store[rt.plural].get("%s/%s" % (ns, name) if rt.namespaced else name)
            if o is None:
                raise self.not_found(rt, name)
            tv = self._wants_table(h)
            if tv:
                return self._table(rt, [o], {"resourceVersion": meta(o).get("resourceVersion", "")}, q, tv)
            pv = self._wants_as(h, "PartialObjectMetadata")
            if pv:
                return self._json(200, self._partial(o, pv),
                                  ctype="application/json;as=PartialObjectMetadata;v=%s;g=meta.k8s.io" % pv)
            return self._json(200, self._out(rt, o))

    def _watch(self, rt, ns, q, h):
        lsel, fsel = self._selectors(rt, q)
        try:
            timeout = float(q.get("timeoutSeconds") or 1800)
        except ValueError:
            timeout = 1800
        timeout = max(0.0, min(timeout, self.watch_poll))
        rvq = q.get("resourceVersion") or ""
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        initial = q.get("sendInitialEvents") in ("true", "1")
        deadline = time.monotonic() + timeout
        events = []

        def inscope(o):
            return o is not None and (ns is None or meta(o).get("namespace") == ns) and self._matches(o, lsel, fsel)

        with self.cond:
            if rvq in ("", "0") or initial:
                for k in sorted(self.store[rt.plural]):
                    o = self.store[rt.plural][k]
                    if inscope(o):
                        events.append({"type": "ADDED", "object": self._out(rt, o)})
                if initial:
                    events.append({"type": "BOOKMARK", "object": {
                        "kind": rt.kind, "apiVersion": rt.api_version, "metadata": {
                            "resourceVersion": str(self.rv), "annotations": {"k8s.io/initial-events-end": "true"}}}})
                since = self.rv
            else:
                try:
                    since = int(rvq)
                except ValueError:
                    raise self.bad_request('resourceVersion: Invalid value: "%s": must be an integer' % rvq)
                oldest = self.history[0][0] if self.history else self.rv + 1
                if since < oldest - 1 and since < self.rv:
                    raise ApiError(410, "Expired", "too old resource version: %d (%d)" % (since, oldest - 1))
            while not events:
                for (hrv, _t, p, _key, old, new) in self.history:
                    if hrv <= since or p != rt.plural:
                        continue
                    if new is None and inscope(old):
                        events.append({"type": "DELETED", "object": self._out(rt, old)})
                    elif new is not None and inscope(new):
                        events.append({"type": "ADDED" if old is None else "MODIFIED", "object": self._out(rt, new)})
                    elif new is not None and inscope(old):
                        o = self._out(rt, new)
                        events.append({"type": "DELETED", "object": o})
                if events:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self.cond.wait(remaining)
            if not events and bookmarks:
                events.append({"type": "BOOKMARK", "object": {"kind": rt.kind, "apiVersion": rt.api_version,
                                                              "metadata": {"resourceVersion": str(self.rv)}}})
        body = b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in events)
        code, hdrs, _ = self._json(200, {})
        hdrs["Content-Type"] = "application/json"
        return code, hdrs, body

    # ------------------------------------------------------------------ writes
    def _decode_body(self, rt, body):
        try:
            obj = json.loads(body or b"null")
        except ValueError as e:
            raise self.bad_request("couldn't get version/kind; json parse error: %s" % e)
        if not isinstance(obj, dict):
            raise self.bad_request("Object 'Kind' is missing in '%s'" % (body or b"").decode("utf-8", "replace")[:200])
        kind, av = obj.get("kind"), obj.get("apiVersion")
        if kind and kind != rt.kind:
            raise self.bad_request("the API version in the data (%s) does not match the expected API version (%s)" % (
                av, rt.api_version) if av and av != rt.api_version else
                "%s in version \"%s\" cannot be handled as a %s: the kind of the object (%s) does not match" % (
                    rt.kind, rt.version, rt.kind, kind))
        if av and av != rt.api_version:
            raise self.bad_request("the API version in the data (%s) does not match the expected API version (%s)" % (
                av, rt.api_version))
        if rt.plural == "volumeattributesclasses":
            for k, v in (obj.get("parameters") or {}).items():
                if not isinstance(v, str):
                    raise self.bad_request(
                        '%s in version "%s" cannot be handled as a %s: json: cannot unmarshal %s into Go struct field '
                        '%s.parameters of type string' % (rt.kind, rt.version, rt.kind,
                                                          "number" if isinstance(v, (int, float)) else "object",
                                                          rt.kind))
        obj["kind"], obj["apiVersion"] = rt.kind, rt.api_version
        if self.minor < 29 and rt.plural == "persistentvolumeclaims":
            (obj.get("spec") or {}).pop("volumeAttributesClassName", None)
        return obj

    def _dry_run(self, q):
        v = q.get("dryRun")
        if v and v != "All":
            raise self.bad_request('dryRun: Unsupported value: "%s": supported values: "All"' % v)
        return v == "All"

    NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
    LABEL_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

    def _validate_name(self, rt, name):
        rx = self.LABEL_NAME_RE if rt.plural in ("namespaces",) else self.NAME_RE
        if len(name) > 253 or not rx.match(name):
            raise self.invalid(rt, name, [("metadata.name", "Invalid value", '"%s": a lowercase RFC 1123 subdomain must '
                               "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
                               "an alphanumeric character (e.g. 'example.com', regex used for validation is "
                               "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" % name)])

    def _create(self, rt, ns, q, h, body):
        obj = self._decode_body(rt, body)
        dry = self._dry_run(q)
        with self.sim.lock:
            m = meta(obj)
            if rt.namespaced:
                if m.get("namespace") and m["namespace"] != ns:
                    raise self.bad_request("the namespace of the provided object does not match the namespace sent on "
                                           "the request")
                m["namespace"] = ns
            else:
                m.pop("namespace", None)
            if not m.get("name"):
                if m.get("generateName"):
                    m["name"] = m["generateName"] + self._rand_suffix()
                else:
                    raise self.invalid(rt, "", [("metadata.name", "Required value", "name or generateName is required")])
            name = m["name"]
            self._validate_name(rt, name)
            if rt.namespaced and ns not in self.store["namespaces"]:
                raise self.not_found(self.by_plural["namespaces"], ns)
            key = self._key(obj, rt)
            if key in self.store[rt.plural]:
                d = {"name": name}
                if rt.group:
                    d["group"] = rt.group
                d["kind"] = rt.plural
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (rt.qualified, name), d)
            if m.get("resourceVersion"):
                raise ApiError(500, "InternalError", "Internal error occurred: resourceVersion should not be set on "
                               "objects to be created", {"causes": [{"message": "resourceVersion should not be set on "
                                                                                "objects to be created"}]})
            for f in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                      "managedFields", "selfLink"):
                m.pop(f, None)
            self._prepare_stored(rt, obj, self.now())
            self._default_and_validate(rt, obj, None)
            if dry:
                meta(obj)["resourceVersion"] = ""
                return self._json(201, self._out(rt, ordered(obj)))
            stored = self._write(rt, key, obj, None)
            out = self._out(rt, stored)
            self._after_write(rt, key, None, stored)
            return self._json(201, out)

    def _default_and_validate(self, rt, obj, old):
        """Defaulting, validation and status handling on create (old None) and update."""
        name = meta(obj).get("name", "")
        if old is None and rt.status and rt.plural not in ("nodes", "namespaces"):
            obj["status"] = {}
        if rt.plural == "pods":
            self._default_pod_spec(obj.setdefault("spec", {}))
            errs = []
            ctrs = dig(obj, "spec", "containers") or []
            if not ctrs:
                errs.append(("spec.containers", "Required value", ""))
            for i, c in enumerate(ctrs):
                if not c.get("name"):
                    errs.append(("spec.containers[%d].name" % i, "Required value", ""))
                if not c.get("image"):
                    errs.append(("spec.containers[%d].image" % i, "Required value", ""))
            if errs:
                raise self.invalid(rt, name, errs)
            if old is None:
                obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
            elif old.get("spec") != obj.get("spec"):
                ob, nb = copy.deepcopy(old.get("spec")), copy.deepcopy(obj.get("spec"))
                for s in (ob, nb):
                    for c in s.get("containers") or []:
                        c.pop("image", None)
                    s.pop("activeDeadlineSeconds", None)
                    s.pop("tolerations", None)
                if ob != nb:
                    raise self.invalid(rt, name, [("spec", "Forbidden", "pod updates may not change fields other than "
                                                   "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                                                   "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                                                   "existing tolerations),`spec.terminationGracePeriodSeconds` "
                                                   "(allow it to be set to 1 if it was previously negative)")])
        elif rt.plural == "jobs":
            spec = obj.setdefault("spec", {})
            tmpl = spec.get("template")
            if not isinstance(tmpl, dict) or not dig(tmpl, "spec", "containers"):
                raise self.invalid(rt, name, [("spec.template.spec.containers", "Required value", "")])
            rp = dig(tmpl, "spec", "restartPolicy") or "Always"
            if rp not in ("OnFailure", "Never"):
                raise self.invalid(rt, name, [("spec.template.spec.restartPolicy", "Required value",
                                               'valid values: "OnFailure", "Never"')])
            if old is None:
                uid = meta(obj)["uid"]
                labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                          "controller-uid": uid, "job-name": name}
                tm = tmpl.setdefault("metadata", {})
                tm.setdefault("labels", {}).update(labels)
                spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
                spec.setdefault("parallelism", 1)
                spec.setdefault("completions", 1)
                spec.setdefault("backoffLimit", 6)
                spec.setdefault("completionMode", "NonIndexed")
                spec.setdefault("suspend", False)
                if self.minor >= 29:
                    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
                self._default_pod_spec(tmpl.setdefault("spec", {}))
                obj["status"] = {}
            else:
                ot, nt = old.get("spec", {}).get("template"), spec.get("template")
                if ot != nt:
                    raise self.invalid(rt, name, [("spec.template", "Invalid value", "field is immutable")])
                if old.get("spec", {}).get("selector") != spec.get("selector"):
                    raise self.invalid(rt, name, [("spec.selector", "Invalid value", "field is immutable")])
        elif rt.plural == "volumeattributesclasses":
            if not obj.get("driverName"):
                raise self.invalid(rt, name, [("driverName", "Required value", "")])
            if old is not None:
                errs = []
                if (old.get("parameters") or {}) != (obj.get("parameters") or {}):
                    errs.append(("parameters", "Invalid value", "%s: field is immutable" % go_map(obj.get("parameters") or {})))
                if old.get("driverName") != obj.get("driverName"):
                    errs.append(("driverName", "Invalid value", '"%s": field is immutable' % obj.get("driverName")))
                if errs:
                    raise self.invalid(rt, name, errs)
        elif rt.plural == "persistentvolumeclaims":
            spec = obj.setdefault("spec", {})
            if old is None:
                errs = []
                if not spec.get("accessModes"):
                    errs.append(("spec.accessModes", "Required value", "at least 1 access mode is required"))
                if not dig(spec, "resources", "requests", "storage"):
                    errs.append(("spec.resources[storage]", "Required value", ""))
                if errs:
                    raise self.invalid(rt, name, errs)
                spec.setdefault("volumeMode", "Filesystem")
                obj["status"] = {"phase": "Pending"}
                meta(obj).setdefault("finalizers", ["kubernetes.io/pvc-protection"])
            else:
                self._validate_pvc_update(rt, name, old, obj)
        elif rt.plural == "persistentvolumes" and old is None:
            obj["status"] = {"phase": "Pending"}
        elif rt.plural == "namespaces" and old is None:
            obj.setdefault("spec", {"finalizers": ["kubernetes"]})
            obj["status"] = {"phase": "Active"}
            meta(obj).setdefault("labels", {})["kubernetes.io/metadata.name"] = name
        elif rt.plural == "storageclasses" and old is not None:
            for f in ("parameters", "provisioner", "reclaimPolicy", "volumeBindingMode"):
                if old.get(f) != obj.get(f):
                    raise self.invalid(rt, name, [(f, "Forbidden", "updates to %s are forbidden." % f)])

    def _validate_pvc_update(self, rt, name, old, new):
        os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
        errs = []
        ovac, nvac = os_.get("volumeAttributesClassName"), ns_.get("volumeAttributesClassName")
        if ovac is not None and nvac is None:
            errs.append(("spec.volumeAttributesClassName", "Forbidden", "update from non-nil value to nil is forbidden"))
        elif ovac is not None and nvac == "":
            errs.append(("spec.volumeAttributesClassName", "Forbidden",
                         "update from non-nil value to an empty string is forbidden"))
        if dig(old, "status", "phase") == "Bound" or os_.get("volumeName"):
            a, b = copy.deepcopy(os_), copy.deepcopy(ns_)
            for s in (a, b):
                s.pop("volumeAttributesClassName", None)
                (s.get("resources") or {}).pop("requests", None)
            if a != b:
                errs.append(("spec", "Forbidden", "spec is immutable after creation except resources.requests and "
                             "volumeAttributesClassName for bound claims"))
            cap = dig(old, "status", "capacity", "storage")
            newreq = dig(ns_, "resources", "requests", "storage")
            if cap and newreq and parse_quantity(newreq) < parse_quantity(cap):
                errs.append(("spec.resources.requests.storage", "Forbidden", "field can not be less than status.capacity"))
        if errs:
            raise self.invalid(rt, name, errs)

    @staticmethod
    def _default_pod_spec(spec):
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("securityContext", {})
        spec.setdefault("schedulerName", "default-scheduler")
        for c in spec.get("containers") or []:
            img = c.get("image", "")
            tag = img.rsplit("/", 1)[-1]
            c.setdefault("imagePullPolicy", "Always" if (":" not in tag or tag.endswith(":latest")) and "@" not in img
                         else "IfNotPresent")
            c.setdefault("resources", {})
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")

    def _lookup(self, rt, ns, name):
        key = "%s/%s" % (ns, name) if rt.namespaced else name
        o = self.store[rt.plural].get(key)
        if o is None:
            raise self.not_found(rt, name)
        return key, o

    def _apply_update(self, rt, key, old, new, sub, q):
        """Common tail of PUT and PATCH: server-owned fields, status split, validation, write."""
        name = meta(old)["name"]
        m, om = meta(new), meta(old)
        if m.get("name") != om.get("name"):
            raise self.bad_request("the name of the object (%s) does not match the name on the URL (%s)" % (
                m.get("name"), om.get("name")))
        if rt.namespaced and m.get("namespace", om.get("namespace")) != om.get("namespace"):
            raise self.bad_request("the namespace of the provided object does not match the namespace sent on the request")
        if m.get("uid") and m.get("uid") != om.get("uid"):
            raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": Precondition failed: UID in '
                           'precondition: %s, UID in object meta: %s' % (rt.qualified, name, m.get("uid"), om.get("uid")),
                           {"name": name, "kind": rt.plural})
        for f in ("uid", "creationTimestamp", "deletionTimestamp", "namespace", "generation", "selfLink"):
            if f in om:
                m[f] = om[f]
            else:
                m.pop(f, None)
        new["kind"], new["apiVersion"] = rt.kind, rt.api_version
        if sub == "status":
            base = copy.deepcopy(old)
            base["status"] = new.get("status", {})
            new = base
        elif rt.status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        if self.minor < 29 and rt.plural == "persistentvolumeclaims":
            (new.get("spec") or {}).pop("volumeAttributesClassName", None)
        if sub != "status":
            self._default_and_validate(rt, new, old)
        if rt.generation and old.get("spec") != new.get("spec"):
            m["generation"] = int(om.get("generation", 1)) + 1
        meta(new)["resourceVersion"] = om.get("resourceVersion")
        if self._same(old, new):
            return self._json(200, self._out(rt, old))
        if self._dry_run(q):
            return self._json(200, self._out(rt, ordered(new)))
        stored = self._write(rt, key, new, old)
        out = self._out(rt, stored)
        self._after_write(rt, key, old, stored)
        return self._json(200, out)

    def _put(self, rt, ns, name, sub, q, h, body):
        new = self._decode_body(rt, body)
        with self.sim.lock:
            key, old = self._lookup(rt, ns, name)
            rv = meta(new).get("resourceVersion")
            if not rv:
                raise self.invalid(rt, name, [("metadata.resourceVersion", "Invalid value",
                                               "0x0: must be specified for an update")])
            if rv != meta(old).get("resourceVersion"):
                raise self.conflict(rt, name)
            return self._apply_update(rt, key, old, new, sub, q)

    def _patch(self, rt, ns, name, sub, q, h, body):
        ctype = (h.get("content-type") or "").split(";")[0].strip().lower()
        try:
            patch = json.loads(body or b"null")
        except ValueError as e:
            raise self.bad_request("error decoding patch: %s" % e)
        with self.sim.lock:
            key = "%s/%s" % (ns, name) if rt.namespaced else name
            old = self.store[rt.plural].get(key)
            if old is None:
                if ctype == "application/apply-patch+yaml" and sub is None:
                    if not q.get("fieldManager"):
                        raise self.bad_request("PATCH requests with apply content type must include fieldManager")
                    return self._create(rt, ns, q, h, body)
                raise self.not_found(rt, name)
            base = self._out(rt, old)
            try:
                if ctype == "application/merge-patch+json":
                    if not isinstance(patch, dict):
                        raise PatchError("merge patch must be a JSON object")
                    new = merge_patch(base, patch)
                elif ctype == "application/strategic-merge-patch+json":
                    if not isinstance(patch, dict):
                        raise PatchError("strategic merge patch must be a JSON object")
                    new = strategic_merge(base, patch)
                elif ctype == "application/json-patch+json":
                    new = json_patch(base, patch)
                elif ctype == "application/apply-patch+yaml":
                    if not q.get("fieldManager"):
                        raise self.bad_request("PATCH requests with apply content type must include fieldManager")
                    if not isinstance(patch, dict):
                        raise PatchError("apply patch must be a JSON object")
                    new = merge_patch(base, patch)
                else:
                    raise ApiError(415, "UnsupportedMediaType",
                                   'the body of the request was in an unknown format - accepted media types include: '
                                   'application/json-patch+json, application/merge-patch+json, '
                                   'application/apply-patch+yaml', {})
            except PatchError as e:
                if ctype == "application/json-patch+json":
                    raise ApiError(422, "Invalid", str(e), {})
                raise self.bad_request(str(e))
            if not isinstance(new, dict):
                raise self.bad_request("patch produced a non-object")
            rvp = meta(new).get("resourceVersion")
            if rvp and rvp != meta(old).get("resourceVersion"):
                raise self.conflict(rt, name)
            if rt.plural == "volumeattributesclasses":
                for k, v in (new.get("parameters") or {}).items():
                    if not isinstance(v, str):
                        raise self.bad_request('json: cannot unmarshal %s into Go struct field %s.parameters of type '
                                               'string' % ("number" if isinstance(v, (int, float)) else "object", rt.kind))
            return self._apply_update(rt, key, old, new, sub, q)

    def _delete_options(self, q, body):
        opts = {}
        if body:
            try:
                d = json.loads(body)
                if isinstance(d, dict):
                    opts = d
            except ValueError:
                raise self.bad_request("couldn't get version/kind; json parse error")
        pp = q.get("propagationPolicy") or opts.get("propagationPolicy")
        if pp is None:
            od = q.get("orphanDependents", opts.get("orphanDependents"))
            if od is not None:
                pp = "Orphan" if str(od).lower() == "true" else "Background"
        if pp not in (None, "Orphan", "Background", "Foreground"):
            raise self.invalid(self.by_plural["pods"], "", [("propagationPolicy", "Unsupported value",
                                                             '"%s": supported values: "Foreground", "Background", '
                                                             '"Orphan", "nil"' % pp)])
        pre = opts.get("preconditions") or {}
        dry = (q.get("dryRun") or (opts.get("dryRun") or [None])[0]) == "All"
        return pp, pre, dry

    def _delete(self, rt, ns, name, q, body):
        pp, pre, dry = self._delete_options(q, body)
        with self.sim.lock:
            key, old = self._lookup(rt, ns, name)
            if pre.get("resourceVersion") and pre["resourceVersion"] != meta(old).get("resourceVersion"):
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": Precondition failed: '
                               'ResourceVersion in precondition: %s, ResourceVersion in object meta: %s' % (
                                   rt.qualified, name, pre["resourceVersion"], meta(old).get("resourceVersion")),
                               {"name": name, "kind": rt.plural})
            if pre.get("uid") and pre["uid"] != meta(old).get("uid"):
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": Precondition failed: UID '
                               'in precondition: %s, UID in object meta: %s' % (rt.qualified, name, pre["uid"],
                                                                                 meta(old).get("uid")),
                               {"name": name, "kind": rt.plural})
            if dry:
                return self._json(200, self._out(rt, old))
            return self._json(200, self._do_delete(rt, key, old, pp))

    def _do_delete(self, rt, key, old, pp):
        out = self._out(rt, old)
        if rt.plural == "pods":
            self._stop_pod(key)
            m = meta(out)
            m["deletionTimestamp"] = rfc3339(self.now())
            m["deletionGracePeriodSeconds"] = int(dig(old, "spec", "terminationGracePeriodSeconds", default=30))
            result = out
        else:
            d = {"name": meta(old)["name"]}
            if rt.group:
                d["group"] = rt.group
            d["kind"] = rt.plural
            d["uid"] = meta(old).get("uid")
            result = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d}
        self._write(rt, key, None, old)
        if rt.plural == "jobs":
            policy = pp or "Orphan"
            uid = meta(old).get("uid")
            prt = self.by_plural["pods"]
            for pk, pod in list(self.store["pods"].items()):
                refs = meta(pod).get("ownerReferences") or []
                if not any(r.get("uid") == uid for r in refs):
                    continue
                if policy == "Orphan":
                    np = copy.deepcopy(pod)
                    meta(np)["ownerReferences"] = [r for r in refs if r.get("uid") != uid]
                    if not meta(np)["ownerReferences"]:
                        meta(np).pop("ownerReferences")
                    self._update(prt, np)
                else:
                    self._stop_pod(pk)
                    self._write(prt, pk, None, pod)
            self.job_state.pop(key, None)
        if rt.plural == "namespaces":
            for prt in self.types:
                if prt.namespaced:
                    for k, o in list(self.store[prt.plural].items()):
                        if meta(o).get("namespace") == meta(old)["name"]:
                            self._do_delete(prt, k, o, "Background")
        self._after_write(rt, key, old, None)
        return result

    def _delete_collection(self, rt, ns, q, body):
        lsel, fsel = self._selectors(rt, q)
        pp, _pre, dry = self._delete_options(q, body)
        with self.sim.lock:
            items = []
            for k in sorted(self.store[rt.plural]):
                o = self.store[rt.plural][k]
                if (ns is None or meta(o).get("namespace") == ns) and self._matches(o, lsel, fsel):
                    items.append(self._out(rt, o, with_type=False))
                    if not dry:
                        self._do_delete(rt, k, o, pp)
            return self._json(200, {"kind": rt.kind + "List", "apiVersion": rt.api_version,
                                    "metadata": {"resourceVersion": str(self.rv)}, "items": items})

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

    # ------------------------------------------------------------------ pods/log, nodes/proxy
    def _pod_log(self, ns, name, q):
        with self.sim.lock:
            key, pod = self._lookup(self.by_plural["pods"], ns, name)
            names = [c.get("name") for c in dig(pod, "spec", "containers", default=[]) or []]
            c = q.get("container")
            if not c:
                if len(names) != 1:
                    raise self.bad_request("a container name must be specified for pod %s, choose one of: [%s]" % (
                        name, " ".join(names)))
                c = names[0]
            if c not in names:
                raise self.bad_request("container %s is not valid for pod %s" % (c, name))
            if q.get("previous") in ("true", "1"):
                raise self.bad_request('previous terminated container "%s" in pod "%s" not found' % (c, name))
            cs = next((s for s in dig(pod, "status", "containerStatuses", default=[]) or [] if s.get("name") == c), None)
            if cs is None or "waiting" in (cs.get("state") or {}):
                reason = dig(cs or {}, "state", "waiting", "reason", default="ContainerCreating")
                raise self.bad_request('container "%s" in pod "%s" is waiting to start: %s' % (c, name, reason))
            run = self.runs.get(key, {}).get(c)
        if run is not None and q.get("follow") in ("true", "1"):
            run.done.wait(self.follow_wait)
        data = run.text() if run is not None else b""
        if q.get("timestamps") in ("true", "1") and data:
            ts = (dig(cs, "state", "running", "startedAt") or dig(cs, "state", "terminated", "startedAt") or
                  rfc3339(self.now())).replace("Z", ".000000000Z")
            data = b"".join(ts.encode() + b" " + line for line in data.splitlines(True))
        if q.get("tailLines"):
            try:
                n = int(q["tailLines"])
                lines = data.splitlines(True)
                data = b"".join(lines[-n:]) if n > 0 else b""
            except ValueError:
                pass
        if q.get("limitBytes"):
            try:
                data = data[:int(q["limitBytes"])]
            except ValueError:
                pass
        return 200, {"Content-Type": "text/plain", "Cache-Control": "no-cache, private"}, data

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

    # ------------------------------------------------------------------ controllers
    def _maybe_progress(self):
        t = self.now()
        if getattr(self, "_last_progress", None) != t:
            self._last_progress = t
            self._progress()

    def tick(self):
        with self.sim.lock:
            self._last_progress = self.now()
            self._progress()
            self._reconcile_dirty()

    def _progress(self):
        for opkey in list(self.ops):
            self._check_op(opkey)
        for jk in sorted(self.active_jobs):
            self._sync_job(jk)
        for pk in sorted(self.pending_pods):
            if pk not in self.runs:
                self._start_pod(pk)

    def _reconcile_all(self):
        self.dirty.update(self.store["persistentvolumeclaims"])
        self._reconcile_dirty()

    def _reconcile_dirty(self):
        for _round in range(5):   # controllers' own writes mark claims dirty again; they settle quickly
            if not self.dirty:
                break
            keys, self.dirty = sorted(self.dirty), set()
            for key in keys:
                pvc = self.store["persistentvolumeclaims"].get(key)
                if pvc is None:
                    for opkey in [k for k in self.ops if k[1] == key]:
                        self.ops.pop(opkey, None)
                    continue
                self._bind_pvc(key, pvc)
                kube_events.claim_pending(self, key)
                self._csi_vac(key, self.store["persistentvolumeclaims"].get(key))
                if self.sidecar:
                    self._csi_annotations(key, self.store["persistentvolumeclaims"].get(key))

    # static binding
    def _bind_pvc(self, key, pvc):
        if dig(pvc, "status", "phase") not in (None, "", "Pending"):
            return
        pvrt, pvcrt = self.by_plural["persistentvolumes"], self.by_plural["persistentvolumeclaims"]
        ns, name = key.split("/", 1)
        vn = dig(pvc, "spec", "volumeName")
        pv = self.store["persistentvolumes"].get(vn) if vn else None
        if pv is None and not vn:
            for cand in self.store["persistentvolumes"].values():
                cr = dig(cand, "spec", "claimRef") or {}
                if cr.get("namespace") == ns and cr.get("name") == name and dig(cand, "status", "phase") in (
                        None, "", "Available", "Pending"):
                    pv = cand
                    break
        if pv is None:
            return
        cr = dig(pv, "spec", "claimRef") or {}
        if cr and (cr.get("namespace") != ns or cr.get("name") != name):
            return
        npv = copy.deepcopy(pv)
        npv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": name,
                                   "uid": meta(pvc).get("uid"), "apiVersion": "v1",
                                   "resourceVersion": meta(pvc).get("resourceVersion")}
        npv.setdefault("status", {})["phase"] = "Bound"
        self._update(pvrt, npv)
        npvc = copy.deepcopy(pvc)
        npvc["spec"]["volumeName"] = meta(pv)["name"]
        ann = meta(npvc).setdefault("annotations", {})
        ann["pv.kubernetes.io/bind-completed"] = "yes"
        npvc["status"] = {"phase": "Bound", "accessModes": copy.deepcopy(dig(pv, "spec", "accessModes", default=[])),
                          "capacity": copy.deepcopy(dig(pv, "spec", "capacity", default={}))}
        self._update(pvcrt, npvc)

    def _event(self, obj, rt, etype, reason, message, component):
        now = rfc3339(self.now())
        m = meta(obj)
        ns = m.get("namespace") or "default"
        ident = (m.get("uid"), reason, message)
        ev = self.store["events"].get(self.event_index.get(ident, ""))
        if ev is not None:
            ne = copy.deepcopy(ev)
            ne["count"] = int(ev.get("count", 1)) + 1
            ne["lastTimestamp"] = now
            self._update(self.by_plural["events"], ne)
            return
        self.event_seq += 1
        name = "%s.%x" % (m.get("name"), int(self.now() * 1e9) + self.event_seq)
        ev = {"kind": "Event", "apiVersion": "v1",
              "metadata": {"name": name, "namespace": ns},
              "involvedObject": {"kind": rt.kind, "namespace": m.get("namespace"), "name": m.get("name"),
                                 "uid": m.get("uid"), "apiVersion": rt.api_version,
                                 "resourceVersion": m.get("resourceVersion")},
              "reason": reason, "message": message, "source": {"component": component},
              "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": etype, "eventTime": None,
              "reportingComponent": component, "reportingInstance": ""}
        if not m.get("namespace"):
            del ev["involvedObject"]["namespace"]
        erm = self.by_plural["events"]
        self._prepare_stored(erm, ev, self.now())
        self._write(erm, "%s/%s" % (ns, name), ev, None)
        self.event_index[ident] = "%s/%s" % (ns, name)

    # --- CSI: VolumeAttributesClass (external-resizer modify controller + EBS CSI driver)
    def _pv_for(self, pvc):
        if dig(pvc, "status", "phase") != "Bound":
            return None
        vn = dig(pvc, "spec", "volumeName")
        return self.store["persistentvolumes"].get(vn) if vn else None

    @staticmethod
    def _volume_id(pv):
        h = dig(pv, "spec", "csi", "volumeHandle")
        if h:
            return h
        v = dig(pv, "spec", "awsElasticBlockStore", "volumeID")
        return v.rstrip("/").split("/")[-1] if v else None

    def _set_pvc_status(self, key, fn):
        pvc = self.store["persistentvolumeclaims"].get(key)
        if pvc is None:
            return None
        n = copy.deepcopy(pvc)
        st = n.setdefault("status", {})
        fn(st)
        return self._update(self.by_plural["persistentvolumeclaims"], n)

    @staticmethod
    def _merge_modify_condition(st, ctype, message, now):
        conds = [c for c in st.get("conditions") or [] if c.get("type") not in ("ModifyingVolume", "ModifyVolumeError")]
        conds.append({"type": ctype, "status": "True", "lastProbeTime": None, "lastTransitionTime": now,
                      "message": message})
        st["conditions"] = conds

    def _csi_vac(self, key, pvc):
        if pvc is None:
            return
        opkey = ("vac", key)
        target = dig(pvc, "spec", "volumeAttributesClassName")
        cur = dig(pvc, "status", "currentVolumeAttributesClassName")
        op = self.ops.get(opkey)
        if op and op.get("pvc_uid") and op["pvc_uid"] != meta(pvc).get("uid"):
            self.ops.pop(opkey, None)
            op = None
        if not target or target == cur:
            if op and op["state"] not in ("waiting", "waiting-existing"):
                self.ops.pop(opkey, None)
            return
        pv = self._pv_for(pvc)
        if pv is None:
            return
        pvcrt = self.by_plural["persistentvolumeclaims"]
        if dig(pv, "spec", "awsElasticBlockStore") is not None or dig(pv, "spec", "csi", "driver") != EBS_DRIVER:
            if dig(pv, "spec", "awsElasticBlockStore") is not None and not (op and op.get("target") == target):
                self.ops[opkey] = {"state": "intree", "target": target, "pvc_uid": meta(pvc).get("uid")}
                self._event(pvc, pvcrt, "Warning", "VolumeModifyFailed",
                            "in-tree volume %s (kubernetes.io/aws-ebs) cannot be modified with a "
                            "VolumeAttributesClass; only CSI volumes support it" % meta(pv)["name"], RESIZER_COMPONENT)
            return
        vacs = self.store.get("volumeattributesclasses", {})
        vac = vacs.get(target)
        if op and op.get("target") == target:
            st = op["state"]
            if st in ("waiting", "waiting-existing"):
                return
            if st == "pending" and vac is None:
                return
            if st == "infeasible" and vac is not None and meta(vac).get("uid") == op.get("vac_uid"):
                return
            if st == "error":
                if self.now() < op.get("retry_at", 0):
                    return
                self._vac_modify(opkey, op)
                return
        elif op and op["state"] in ("waiting", "waiting-existing"):
            return  # the running ModifyVolume must finish first; then the new target is taken up
        now = rfc3339(self.now())
        if vac is None:
            self.ops[opkey] = {"state": "pending", "target": target, "pvc_uid": meta(pvc).get("uid")}

            def pend(st):
                st["modifyVolumeStatus"] = {"targetVolumeAttributesClassName": target, "status": "Pending"}
            self._set_pvc_status(key, pend)
            return
        op = {"state": "new", "kind": "vac", "target": target, "vac_uid": meta(vac).get("uid"),
              "pvc_uid": meta(pvc).get("uid"), "pv": meta(pv)["name"], "volume_id": self._volume_id(pv),
              "attempts": 0, "params": dict(vac.get("parameters") or {}), "driver": vac.get("driverName")}
        self.ops[opkey] = op

        def inprog(st):
            st["modifyVolumeStatus"] = {"targetVolumeAttributesClassName": target, "status": "InProgress"}
            self._merge_modify_condition(st, "ModifyingVolume", "ModifyVolume operation in progress.", now)
        pvc = self._set_pvc_status(key, inprog)
        self._event(pvc, pvcrt, "Normal", "VolumeModify", "external resizer is modifying volume %s with vac %s" % (
            meta(pvc)["name"], target), RESIZER_COMPONENT)
        if op["driver"] != EBS_DRIVER:
            self._op_infeasible(opkey, op, 'rpc error: code = InvalidArgument desc = VolumeAttributesClass "%s" has '
                                'driverName "%s" but volume "%s" is handled by "%s"' % (
                                    target, op["driver"], op["volume_id"], EBS_DRIVER))
            return
        self._vac_modify(opkey, op)

    def _vac_modify(self, opkey, op):
        parsed, perr = parse_modify_params(op["params"])
        if perr:
            self._op_infeasible(opkey, op, "rpc error: code = InvalidArgument desc = " + perr)
            return
        self._ec2_modify(opkey, op, parsed)

    def _op_infeasible(self, opkey, op, err):
        op["state"] = "infeasible"
        op["error"] = err
        key = opkey[1]
        now = rfc3339(self.now())
        pvcrt = self.by_plural["persistentvolumeclaims"]
        if op.get("kind", "vac") == "vac":
            def inf(st):
                st["modifyVolumeStatus"] = {"targetVolumeAttributesClassName": op["target"], "status": "Infeasible"}
                self._merge_modify_condition(st, "ModifyingVolume",
                                             "ModifyVolume failed with error: %s. Waiting for retry." % err, now)
            pvc = self._set_pvc_status(key, inf)
            if pvc is not None:
                self._event(pvc, pvcrt, "Warning", "VolumeModifyFailed", err, RESIZER_COMPONENT)
        else:
            op["retry_at"] = self.now() + 600
            pvc = self.store["persistentvolumeclaims"].get(key)
            if pvc is not None:
                self._event(pvc, pvcrt, "Warning", "VolumeModificationFailed", err, MODIFIER_COMPONENT)

    def _op_error(self, opkey, op, err):
        op["state"] = "error"
        op["error"] = err
        delay = min(self.modify_retry * (2 ** max(0, op.get("attempts", 1) - 1)), 300.0)
        op["retry_at"] = self.now() + (600 if op.get("kind") == "ann" else delay)
        key = opkey[1]
        now = rfc3339(self.now())
        pvcrt = self.by_plural["persistentvolumeclaims"]
        if op.get("kind", "vac") == "vac":
            def e(st):
                self._merge_modify_condition(st, "ModifyVolumeError",
                                             "ModifyVolume failed with error: %s. Waiting for retry." % err, now)
            pvc = self._set_pvc_status(key, e)
            if pvc is not None:
                self._event(pvc, pvcrt, "Warning", "VolumeModifyFailed", err, RESIZER_COMPONENT)
        else:
            pvc = self.store["persistentvolumeclaims"].get(key)
            if pvc is not None:
                self._event(pvc, pvcrt, "Warning", "VolumeModificationFailed", err, MODIFIER_COMPONENT)

    def _log_ec2(self, action, params, status, code, region=None):
        try:
            self.sim.log_request({"time": rfc3339(self.now()), "service": "ec2", "region": region or self.region,
                                  "cluster": self.name, "action": action, "params": params, "status": status,
                                  "error_code": code, "principal": CSI_PRINCIPAL})
        except Exception:
            pass

    def _volume_region(self, vid):
        vol = (getattr(self.sim, "volumes", None) or {}).get(vid)
        return (vol or {}).get("region") or self.region

    def _ec2_modify(self, opkey, op, parsed):
        vid = op["volume_id"]
        vols = getattr(self.sim, "volumes", None) or {}
        vol = vols.get(vid)
        op["parsed"] = parsed
        if vol is not None and (parsed["add_tags"] or parsed["del_tags"]):
            tags = vol.setdefault("tags", {})
            if parsed["del_tags"]:
                for k in parsed["del_tags"]:
                    tags.pop(k, None)
                p = {"ResourceId.1": vid}
                for i, k in enumerate(parsed["del_tags"], 1):
                    p["Tag.%d.Key" % i] = k
                self._log_ec2("DeleteTags", p, 200, None, self._volume_region(vid))
            if parsed["add_tags"]:
                tags.update(parsed["add_tags"])
                p = {"ResourceId.1": vid}
                for i, (k, v) in enumerate(sorted(parsed["add_tags"].items()), 1):
                    p["Tag.%d.Key" % i], p["Tag.%d.Value" % i] = k, v
                self._log_ec2("CreateTags", p, 200, None, self._volume_region(vid))
        latest = self._latest_mod(vid)
        if latest is not None and mod_state(latest) == "modifying":
            op["state"] = "waiting-existing"
            return
        req = {}
        if parsed["type"]:
            req["VolumeType"] = parsed["type"]
        if parsed["iops"] is not None:
            req["Iops"] = parsed["iops"]
        if parsed["throughput"] is not None:
            req["Throughput"] = parsed["throughput"]
        if not req or (vol is not None and not needs_modification(vol, req)):
            self._op_done(opkey, op)
            return
        op["attempts"] = op.get("attempts", 0) + 1
        region = self._volume_region(vid)
        # The driver's ModifyVolume does not pass the EC2 app, so `error` faults are asked here.
        error_fault = getattr(self.sim, "error_fault", None)
        refusal = error_fault("ec2", "ModifyVolume", vid) if error_fault else None
        if refusal is not None:
            ok, res = False, {"code": refusal.code, "message": refusal.message, "status": refusal.status}
        else:
            ok, res = self.sim.ec2_modify_volume(region, vid, req, CSI_PRINCIPAL)
        logp = {"VolumeId": vid}
        logp.update({k: str(v) for k, v in req.items()})
        if ok:
            self._log_ec2("ModifyVolume", logp, 200, None, region)
        else:
            ecode, _msg = error_info(res)
            status = res.get("status", 400) if isinstance(res, dict) else 400
            self._log_ec2("ModifyVolume", logp, status, ecode, region)
        if ok:
            op["state"] = "waiting"
            op["requested"] = req
            self._check_op(opkey)
            return
        code, msg = error_info(res)
        # The driver passes on the AWS SDK for Go v2's error text unchanged (wrapped for invalid arguments).
        status = res.get("status", 400) if isinstance(res, dict) else 400
        sdk = ("operation error EC2: ModifyVolume, https response error StatusCode: %d, RequestID: %s, api error %s: %s"
               % (status, uuid.uuid4(), code, msg))
        if code and (code.startswith("InvalidParameter") or code in ("UnknownVolumeType", "InvalidVolumeType")):
            self._op_infeasible(opkey, op, 'rpc error: code = InvalidArgument desc = Could not modify volume (invalid '
                                'argument) "%s": invalid argument: %s' % (vid, sdk))
        else:
            self._op_error(opkey, op, 'rpc error: code = Internal desc = Could not modify volume "%s": %s' % (vid, sdk))

    def _latest_mod(self, vid):
        try:
            return self.sim.latest_modification(vid)
        except Exception:
            return None

    def _check_op(self, opkey):
        op = self.ops.get(opkey)
        if op is None:
            return
        if op["state"] == "waiting":
            latest = self._latest_mod(op["volume_id"])
            st = mod_state(latest)
            if st in ("optimizing", "completed"):
                self._op_done(opkey, op)
            elif st == "failed":
                self._op_error(opkey, op, 'rpc error: code = Internal desc = Could not modify volume "%s": volume '
                               'modification failed: %s' % (op["volume_id"], (latest or {}).get("status_message") or
                                                             (latest or {}).get("StatusMessage") or "failed"))
        elif op["state"] == "waiting-existing":
            if mod_state(self._latest_mod(op["volume_id"])) != "modifying":
                op["state"] = "retry"
                self._ec2_modify(opkey, op, op["parsed"])
        elif op.get("kind") == "ann" and op["state"] == "infeasible" and self.now() >= op.get("retry_at", 0):
            self.dirty.add(opkey[1])
        elif op["state"] == "error" and self.now() >= op.get("retry_at", 0):
            pvc = self.store["persistentvolumeclaims"].get(opkey[1])
            if pvc is None:
                self.ops.pop(opkey, None)
                return
            if op.get("kind", "vac") == "vac":
                if dig(pvc, "spec", "volumeAttributesClassName") == op["target"]:
                    self._vac_modify(opkey, op)
            else:
                self.ops.pop(opkey, None)
                self._csi_annotations(opkey[1], pvc)

    def _op_done(self, opkey, op):
        key = opkey[1]
        self.ops.pop(opkey, None)
        pvc = self.store["persistentvolumeclaims"].get(key)
        pv = self.store["persistentvolumes"].get(op.get("pv") or "")
        if pvc is None:
            return
        pvcrt, pvrt = self.by_plural["persistentvolumeclaims"], self.by_plural["persistentvolumes"]
        if op.get("kind", "vac") == "vac":
            target = op["target"]
            if pv is not None:
                npv = copy.deepcopy(pv)
                npv.setdefault("spec", {})["volumeAttributesClassName"] = target
                self._update(pvrt, npv)

            def done(st):
                st.pop("modifyVolumeStatus", None)
                st["currentVolumeAttributesClassName"] = target
                conds = [c for c in st.get("conditions") or [] if c.get("type") not in ("ModifyingVolume",
                                                                                       "ModifyVolumeError")]
                if conds:
                    st["conditions"] = conds
                else:
                    st.pop("conditions", None)
            pvc = self._set_pvc_status(key, done)
            self._event(pvc, pvcrt, "Normal", "VolumeModifySuccessful",
                        "external resizer modified volume %s with vac %s successfully" % (meta(pvc)["name"], target),
                        RESIZER_COMPONENT)
            self._csi_vac(key, pvc)
        else:
            if pv is not None:
                npv = copy.deepcopy(pv)
                ann = meta(npv).setdefault("annotations", {})
                ann.update(op["annotations"])
                self._update(pvrt, npv)
            self._event(pvc, pvcrt, "Normal", "VolumeModificationSuccessful",
                        "External modifier has successfully modified volume %s" % op.get("pv"), MODIFIER_COMPONENT)

    # --- CSI: volume-modifier-for-k8s sidecar (PVC annotations)
    def _csi_annotations(self, key, pvc):
        if pvc is None:
            return
        pv = self._pv_for(pvc)
        if pv is None or dig(pv, "spec", "csi", "driver") != EBS_DRIVER:
            return
        prefix = EBS_DRIVER + "/"
        ann = {k: v for k, v in (meta(pvc).get("annotations") or {}).items()
               if k.startswith(prefix) and not k.endswith("-status")}
        if not ann:
            return
        pv_ann = meta(pv).get("annotations") or {}
        if all(pv_ann.get(k) == v for k, v in ann.items()):
            return
        opkey = ("ann", key)
        op = self.ops.get(opkey)
        if op is not None:
            if op["state"] in ("waiting", "waiting-existing"):
                return
            if op["annotations"] == ann and self.now() < op.get("retry_at", 0):
                return
        op = {"state": "new", "kind": "ann", "annotations": ann, "pv": meta(pv)["name"],
              "volume_id": self._volume_id(pv), "pvc_uid": meta(pvc).get("uid"), "attempts": 0}
        self.ops[opkey] = op
        self._event(pvc, self.by_plural["persistentvolumeclaims"], "Normal", "VolumeModificationStarted",
                    "External modifier is modifying volume %s" % meta(pv)["name"], MODIFIER_COMPONENT)
        parsed, perr = parse_modify_params({k[len(prefix):]: v for k, v in ann.items()})
        if perr:
            self._op_infeasible(opkey, op, "rpc error: code = InvalidArgument desc = " + perr)
            return
        self._ec2_modify(opkey, op, parsed)

    # --- pods
    def _node_ip(self, node):
        for a in dig(node, "status", "addresses", default=[]) or []:
            if a.get("type") == "InternalIP":
                return a.get("address")
        h = int(hashlib.sha1(meta(node)["name"].encode()).hexdigest()[:6], 16)
        return "10.0.%d.%d" % ((h >> 8) % 250 + 1, h % 250 + 2)

    def _schedule(self, pod):
        """-> (node name, None) or (None, reason message)."""
        nodes = [self.store["nodes"][k] for k in sorted(self.store["nodes"])]
        if not nodes:
            return None, "no nodes available to schedule pods"
        ns = meta(pod)["namespace"]
        cands = []
        for n in nodes:
            ready = next((c for c in dig(n, "status", "conditions", default=[]) or [] if c.get("type") == "Ready"), None)
            if ready is not None and ready.get("status") != "True":
                continue
            if dig(n, "spec", "unschedulable"):
                continue
            labels = meta(n).get("labels") or {}
            if any(labels.get(k) != v for k, v in (dig(pod, "spec", "nodeSelector") or {}).items()):
                continue
            cands.append(n)
        preferred = []
        for v in dig(pod, "spec", "volumes", default=[]) or []:
            claim = dig(v, "persistentVolumeClaim", "claimName")
            if not claim:
                continue
            pvc = self.store["persistentvolumeclaims"].get("%s/%s" % (ns, claim))
            if pvc is None:
                return None, 'persistentvolumeclaim "%s" not found' % claim
            pv = self._pv_for(pvc)
            if pv is None:
                return None, "pod has unbound immediate PersistentVolumeClaims"
            vid = self._volume_id(pv)
            vol = (getattr(self.sim, "volumes", None) or {}).get(vid) or {}
            az = vol.get("az")
            if az:
                cands = [n for n in cands if (meta(n).get("labels") or {}).get(
                    "topology.kubernetes.io/zone", az) == az]
            for term in dig(pv, "spec", "nodeAffinity", "required", "nodeSelectorTerms", default=[]) or []:
                for ex in term.get("matchExpressions") or []:
                    if ex.get("operator") == "In":
                        cands = [n for n in cands if (meta(n).get("labels") or {}).get(ex.get("key")) in
                                 (ex.get("values") or []) or ex.get("key") not in (meta(n).get("labels") or {})]
            for other in self.store["pods"].values():
                if other is pod or dig(other, "status", "phase") != "Running":
                    continue
                if meta(other).get("namespace") == ns and any(
                        dig(ov, "persistentVolumeClaim", "claimName") == claim
                        for ov in dig(other, "spec", "volumes", default=[]) or []):
                    preferred.append(dig(other, "spec", "nodeName"))
            for a in vol.get("attachments") or []:
                iid = a.get("instance_id") or a.get("InstanceId")
                for n in cands:
                    if iid and str(dig(n, "spec", "providerID", default="")).endswith("/" + iid):
                        preferred.append(meta(n)["name"])
        if not cands:
            return None, "0/%d nodes are available: %d node(s) didn't match the pod's node affinity/selector or " \
                         "volume node affinity." % (len(nodes), len(nodes))
        names = [meta(n)["name"] for n in cands]
        for p in preferred:
            if p in names:
                return p, None
        return names[0], None

    def _start_pod(self, key):
        pod = self.store["pods"].get(key)
        if pod is None or dig(pod, "status", "phase") not in (None, "", "Pending") or key in self.runs:
            return
        prt = self.by_plural["pods"]
        now = rfc3339(self.now())
        node = dig(pod, "spec", "nodeName")
        if not node:
            node, why = self._schedule(pod)
            if node is None:
                np = copy.deepcopy(pod)
                np["status"] = {"phase": "Pending", "conditions": [{
                    "type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": now,
                    "reason": "Unschedulable", "message": why}], "qosClass": "BestEffort"}
                self._update(prt, np)
                kube_events.pod_unschedulable(self, key, why)
                return
        nodeobj = self.store["nodes"].get(node) or {"metadata": {"name": node}}
        np = copy.deepcopy(pod)
        np["spec"]["nodeName"] = node
        h = int(hashlib.sha1(key.encode()).hexdigest()[:6], 16)
        pod_ip = "10.%d.%d.%d" % (100 + (h >> 16) % 100, (h >> 8) % 256, h % 254 + 1)
        host_ip = self._node_ip(nodeobj)
        statuses = []
        for c in np["spec"].get("containers") or []:
            statuses.append({"name": c.get("name"), "state": {"running": {"startedAt": now}}, "lastState": {},
                             "ready": True, "restartCount": 0, "image": c.get("image"),
                             "imageID": "docker.io/library/%s@sha256:%s" % (
                                 c.get("image", "").split(":")[0].split("/")[-1],
                                 hashlib.sha256(c.get("image", "").encode()).hexdigest()),
                             "containerID": "containerd://" + hashlib.sha256(
                                 (key + c.get("name", "") + now).encode()).hexdigest(), "started": True})
        conds = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
                 for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
        np["status"] = {"phase": "Running", "conditions": conds, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
                        "podIP": pod_ip, "podIPs": [{"ip": pod_ip}], "startTime": now, "containerStatuses": statuses,
                        "qosClass": "BestEffort"}
        stored = self._update(prt, np)
        runs = {}
        for c in stored["spec"].get("containers") or []:
            plan = self._fio_plan(key, stored, c)
            if plan is not None:
                argv, cwd, env = plan
                runs[c["name"]] = PodRun(self, key, meta(stored).get("uid"), c["name"], argv, cwd, env)
        if runs:
            self.runs[key] = runs
            for r in runs.values():
                r.start()

    def _pod_dir(self, key):
        if key in self.pod_dirs:
            return self.pod_dirs[key]
        if self.workdir is None:
            sd = getattr(self.sim, "state_dir", None)
            if sd and os.path.isdir(str(sd)):
                self.workdir = os.path.join(str(sd), "kube", self.name)
                os.makedirs(self.workdir, exist_ok=True)
                self._own_workdir = False
            else:
                self.workdir = tempfile.mkdtemp(prefix="ebssim-kube-%s-" % re.sub(r"[^A-Za-z0-9_.-]", "_", self.name))
                self._own_workdir = True
        d = os.path.join(self.workdir, "pods", key.replace("/", "__") + "-" + self._rand_suffix(4))
        os.makedirs(d, exist_ok=True)
        self.pod_dirs[key] = d
        return d

    def _fio_plan(self, key, pod, c):
        env_vals = {}
        for e in c.get("env") or []:
            if "value" in e:
                env_vals[e["name"]] = expand_vars(str(e.get("value", "")), env_vals)
        argv = [expand_vars(str(a), env_vals) for a in (c.get("command") or []) + (c.get("args") or [])]
        if not c.get("command") and "fio" in str(c.get("image", "")).split(":")[0].split("/")[-1]:
            argv = ["fio"] + argv
        if not argv:
            return None
        base = os.path.basename(argv[0])
        shell = base in SHELLS and len(argv) >= 3 and "-c" in argv[1:3]
        if shell:
            idx = argv.index("-c", 1)
            script = argv[idx + 1] if idx + 1 < len(argv) else ""
            if not re.search(r"(^|[^A-Za-z0-9_.-])fio($|[^A-Za-z0-9_.-])", script):
                return None
        elif base != "fio":
            return None
        pdir = self._pod_dir(key)
        ns = meta(pod)["namespace"]
        vols = {v.get("name"): v for v in dig(pod, "spec", "volumes", default=[]) or []}
        mounts = []   # (path in the container, path here, volume); block devices become plain files
        for vm in c.get("volumeMounts") or []:
            v = vols.get(vm.get("name")) or {}
            host = safe_join(os.path.join(pdir, "volumes"), vm.get("name") or "vol")
            if vm.get("subPath"):
                host = safe_join(host, vm["subPath"])
            os.makedirs(host, exist_ok=True)
            mp = vm.get("mountPath", "").rstrip("/")
            if mp:
                mounts.append((mp, host, v))
        for vd in c.get("volumeDevices") or []:
            os.makedirs(os.path.join(pdir, "devices"), exist_ok=True)
            host = safe_join(os.path.join(pdir, "devices"), (vd.get("name") or "dev") + ".img")
            open(host, "ab").close()
            if vd.get("devicePath"):
                mounts.append((vd["devicePath"].rstrip("/"), host, vols.get(vd.get("name")) or {}))
        mounts.sort(key=lambda m: -len(m[0]))

        def rewrite(s):
            for mp, host, _v in mounts:
                s = re.sub(r"(?<![A-Za-z0-9_./-])" + re.escape(mp) + r"(?=$|/|[^A-Za-z0-9_.-])",
                           host.replace("\\", "\\\\"), s)
            return s
        written = []
        for mp, host, v in mounts:
            cmname = dig(v, "configMap", "name")
            if cmname:
                cm = self.store["configmaps"].get("%s/%s" % (ns, cmname)) or {}
                data = cm.get("data") or {}
                items = dig(v, "configMap", "items")
                pairs = [(it.get("key"), it.get("path")) for it in items] if items else [(k, k) for k in data]
                for k, p in pairs:
                    if k in data and p:
                        fp = safe_join(host, p)
                        os.makedirs(os.path.dirname(fp), exist_ok=True)
                        text = rewrite(data[k])
                        written.append(text)
                        with open(fp, "w") as f:
                            f.write(text)
        env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": pdir,
               "HOSTNAME": meta(pod)["name"]}
        env.update(env_vals)
        if shell:
            argv = ["/bin/sh", "-c", rewrite(script)] + [rewrite(a) for a in argv[idx + 2:]]
        else:
            rootfs = os.path.join(pdir, "rootfs")
            out = [shutil.which("fio") or "fio"]
            for a in argv[1:]:
                a = rewrite(a)
                m = re.match(r"^(--?([A-Za-z_-]+)=)(.*)$", a)
                if m and m.group(2) in FIO_PATH_OPTS:
                    a = m.group(1) + ":".join(self._rootfs_path(rootfs, pdir, part) for part in m.group(3).split(":"))
                elif not a.startswith("-"):
                    a = self._rootfs_path(rootfs, pdir, a)
                out.append(a)
            argv = out
        bad = host_device(" ".join(argv[1:]) + "\n" + "\n".join(written))
        if bad:
            msg = ("ebssim: refusing to run fio against host path %s: only the pod's volumes and "
                   "volumeDevices are emulated (as files under %s)" % (bad, pdir))
            argv = ["/bin/sh", "-c", 'echo "$0" >&2; exit 1', msg]
        workdir = rewrite(c.get("workingDir")) if c.get("workingDir") else pdir
        if not os.path.isdir(workdir) or not os.path.realpath(workdir).startswith(os.path.realpath(pdir)):
            workdir = pdir
        return argv, workdir, env

    @staticmethod
    def _rootfs_path(rootfs, pdir, p):
        """An absolute path outside the pod's volumes lives in the container's own filesystem."""
        if not p.startswith("/") or p.startswith(pdir + "/") or p == pdir or p.startswith("/dev/"):
            return p
        q = safe_join(rootfs, p.lstrip("/"))
        os.makedirs(os.path.dirname(q), exist_ok=True)
        return q

    def _container_exited(self, run, rc, err):
        with self.sim.lock:
            pod = self.store["pods"].get(run.key)
            if pod is None or meta(pod).get("uid") != run.uid or run.killed:
                return
            now = rfc3339(self.now())
            np = copy.deepcopy(pod)
            st = np.setdefault("status", {})
            runs = self.runs.get(run.key, {})
            for cs in st.get("containerStatuses") or []:
                if cs.get("name") != run.container:
                    continue
                started = dig(cs, "state", "running", "startedAt") or now
                if err is not None:
                    term = {"exitCode": 128, "reason": "StartError", "message": "failed to create containerd task: "
                            "exec: %s: %s" % (run.argv[0] if run.argv else "", getattr(err, "strerror", None) or err)}
                else:
                    code = rc if rc >= 0 else 128 - rc
                    term = {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}
                term.update({"startedAt": started, "finishedAt": now, "containerID": cs.get("containerID")})
                cs["state"] = {"terminated": term}
                cs["ready"] = False
                cs["started"] = False
            if all(r.done.is_set() or r is run for r in runs.values()):
                codes = []
                for cs in st.get("containerStatuses") or []:
                    t = dig(cs, "state", "terminated")
                    if t is None:
                        t = {"exitCode": 0, "reason": "Completed", "startedAt": dig(cs, "state", "running", "startedAt"),
                             "finishedAt": now, "containerID": cs.get("containerID")}
                        cs["state"] = {"terminated": t}
                        cs["ready"] = False
                        cs["started"] = False
                    codes.append(t.get("exitCode", 0))
                st["phase"] = "Succeeded" if all(c == 0 for c in codes) else "Failed"
                for cnd in st.get("conditions") or []:
                    if cnd["type"] in ("Ready", "ContainersReady"):
                        cnd.update({"status": "False", "reason": "PodCompleted", "lastTransitionTime": now})
                    elif cnd["type"] == "PodReadyToStartContainers":
                        cnd.update({"status": "False", "lastTransitionTime": now})
            self._update(self.by_plural["pods"], np)
            for r in meta(np).get("ownerReferences") or []:
                if r.get("kind") == "Job":
                    self._sync_job("%s/%s" % (meta(np)["namespace"], r.get("name")))

    def _stop_pod(self, key):
        for r in (self.runs.pop(key, None) or {}).values():
            r.kill()
        d = self.pod_dirs.pop(key, None)
        if d:
            shutil.rmtree(d, ignore_errors=True)

    # --- jobs
    def _sync_job(self, key):
        job = self.store["jobs"].get(key)
        if job is None:
            return
        for c in dig(job, "status", "conditions", default=[]) or []:
            if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
                return
        jrt, prt = self.by_plural["jobs"], self.by_plural["pods"]
        spec = job.get("spec") or {}
        uid = meta(job).get("uid")
        ns = meta(job)["namespace"]
        js = self.job_state.setdefault(key, {"counted": {}, "last_fail": None})
        now_t = self.now()
        now = rfc3339(now_t)
        pods = [(pk, p) for pk, p in sorted(self.store["pods"].items())
                if any(r.get("uid") == uid for r in meta(p).get("ownerReferences") or [])]
        active = []
        for pk, p in pods:
            ph = dig(p, "status", "phase")
            if ph in ("Succeeded", "Failed"):
                if meta(p)["uid"] not in js["counted"]:
                    js["counted"][meta(p)["uid"]] = ph
                    if ph == "Failed":
                        js["last_fail"] = now_t
            else:
                active.append((pk, p))
        succeeded = sum(1 for v in js["counted"].values() if v == "Succeeded")
        failed = sum(1 for v in js["counted"].values() if v == "Failed")
        completions = spec.get("completions") or 1
        parallelism = spec.get("parallelism", 1)
        backoff_limit = spec.get("backoffLimit", 6)
        nj = copy.deepcopy(job)
        st = nj.setdefault("status", {})
        if spec.get("suspend"):
            return
        st.setdefault("startTime", now)

        def cond(t, reason, msg):
            return {"type": t, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
                    "reason": reason, "message": msg}
        finished = None
        start_t = parse_time(st.get("startTime")) or now_t
        if spec.get("activeDeadlineSeconds") is not None and now_t - start_t >= float(spec["activeDeadlineSeconds"]):
            finished = ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
        elif failed > backoff_limit:
            finished = ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        elif succeeded >= completions:
            finished = ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
        if finished is not None:
            for pk, p in active:
                self._stop_pod(pk)
                self._write(prt, pk, None, p)
            active = []
            conds = list(st.get("conditions") or [])
            if self.minor >= 31:
                conds.append(cond("FailureTarget" if finished[0] == "Failed" else "SuccessCriteriaMet",
                                  finished[1], finished[2]))
            conds.append(cond(finished[0], finished[1], finished[2]))
            st["conditions"] = conds
            if finished[0] == "Complete":
                st["completionTime"] = now
        else:
            want = min(parallelism, completions - succeeded) - len(active)
            delay = self.job_backoff * (2 ** (failed - 1)) if failed else 0
            delay = min(delay, 360.0)
            if want > 0 and (not failed or js["last_fail"] is None or now_t >= js["last_fail"] + delay):
                for _ in range(want):
                    pk, p = self._job_pod(nj)
                    active.append((pk, p))
        st.pop("active", None)
        if active:
            st["active"] = len(active)
        if succeeded:
            st["succeeded"] = succeeded
        if failed:
            st["failed"] = failed
        st["ready"] = sum(1 for _pk, p in active if dig(p, "status", "phase") == "Running")
        st["terminating"] = 0
        st["uncountedTerminatedPods"] = {}
        order = ["conditions", "startTime", "completionTime", "active", "succeeded", "failed", "terminating",
                 "uncountedTerminatedPods", "ready"]
        nj["status"] = {k: st[k] for k in order if k in st}
        nj["status"].update({k: v for k, v in st.items() if k not in nj["status"]})
        self._update(jrt, nj)

    def _job_pod(self, job):
        prt = self.by_plural["pods"]
        jm = meta(job)
        tmpl = copy.deepcopy(dig(job, "spec", "template") or {})
        tm = tmpl.get("metadata") or {}
        name = "%s-%s" % (jm["name"], self._rand_suffix())
        while "%s/%s" % (jm["namespace"], name) in self.store["pods"]:
            name = "%s-%s" % (jm["name"], self._rand_suffix())
        pod = {"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": name, "generateName": jm["name"] + "-", "namespace": jm["namespace"],
                            "labels": dict(tm.get("labels") or {}),
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": jm["name"],
                                                 "uid": jm.get("uid"), "controller": True, "blockOwnerDeletion": True}],
                            "finalizers": ["batch.kubernetes.io/job-tracking"]},
               "spec": tmpl.get("spec") or {}, "status": {"phase": "Pending", "qosClass": "BestEffort"}}
        if tm.get("annotations"):
            pod["metadata"]["annotations"] = dict(tm["annotations"])
        self._default_pod_spec(pod["spec"])
        self._prepare_stored(prt, pod, self.now())
        key = "%s/%s" % (jm["namespace"], name)
        stored = self._write(prt, key, pod, None)
        self._start_pod(key)
        return key, self.store["pods"].get(key, stored)

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


# ----------------------------------------------------------------------------------------------
# EBS CSI driver helpers

def parse_modify_params(params):
    """EBS CSI driver parseModifyVolumeParameters -> (parsed, None) or (None, error message)."""
    out = {"type": None, "iops": None, "throughput": None, "add_tags": {}, "del_tags": []}
    for k in sorted(params):
        v = params[k]
        if k == "iops":
            try:
                out["iops"] = int(v)
            except (TypeError, ValueError):
                return None, 'Could not parse IOPS: "%s"' % v
        elif k == "throughput":
            try:
                out["throughput"] = int(v)
            except (TypeError, ValueError):
                return None, 'Could not parse throughput: "%s"' % v
        elif k == "volumeType":
            if "type" not in params:
                out["type"] = v
        elif k == "type":
            out["type"] = v
        elif k in ("csi.storage.k8s.io/pvc/name", "csi.storage.k8s.io/pvc/namespace", "csi.storage.k8s.io/pv/name"):
            continue
        elif k.startswith("tagSpecification"):
            key, sep, val = str(v).partition("=")
            if not sep or not key:
                return None, "Invalid tag value: Invalid extra tags: %s" % v
            out["add_tags"][key] = val
        elif k.startswith("tagDeletion"):
            out["del_tags"].append(v)
        else:
            return None, "Invalid mutable parameter key: %s" % k
    return out, None


def needs_modification(vol, req):
    if "VolumeType" in req and str(req["VolumeType"]) != str(vol.get("type")):
        return True
    if "Iops" in req and int(req["Iops"]) != int(vol.get("iops") or 0):
        return True
    if "Throughput" in req and int(req["Throughput"]) != int(vol.get("throughput") or 0):
        return True
    return False


def mod_state(m):
    if not m:
        return None
    return m.get("state") or m.get("ModificationState") or m.get("modification_state")


def error_info(res):
    if isinstance(res, dict):
        return (res.get("code") or res.get("Code") or res.get("error_code") or "InternalError",
                res.get("message") or res.get("Message") or "")
    if isinstance(res, (tuple, list)) and len(res) >= 2:
        return str(res[0]), str(res[1])
    if isinstance(res, Exception):
        return getattr(res, "code", type(res).__name__), str(res)
    return "InternalError", str(res)


def expand_vars(s, env):
    """Kubernetes $(VAR) expansion ($$ escapes)."""
    def rep(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", rep, s)
