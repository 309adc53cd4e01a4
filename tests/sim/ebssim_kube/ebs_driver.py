"""ebssim_kube.ebs_driver: what the EBS CSI driver does with VolumeAttributesClass parameters and
EC2 answers: parameter parsing (parseModifyVolumeParameters), whether a volume needs a
modification, the state of the latest modification and the error of an EC2 response.
"""

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
