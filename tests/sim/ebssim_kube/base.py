"""ebssim_kube.base: the constants every part of the Kubernetes simulator shares, ApiError (an HTTP
Status answer raised from anywhere below handle()) and the small helpers: RFC 3339 times, human
durations, quantities, metadata access and the apiserver's key order in objects.
"""

import base64
import datetime
import json
import re

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


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, headers=None, extra=None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details, self.headers, self.extra = details, headers or {}, extra or {}
