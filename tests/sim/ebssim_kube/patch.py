"""ebssim_kube.patch: the three patch types of the apiserver: JSON merge patch (RFC 7386), strategic
merge patch for the simple cases (lists merged by MERGE_KEYS) and JSON patch (RFC 6902).
Pure functions on plain dicts; PatchError carries the apiserver's message.
"""

import copy

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
