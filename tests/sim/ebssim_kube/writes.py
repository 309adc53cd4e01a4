"""ebssim_kube.writes: create, update, patch, delete and deletecollection, dryRun, conflict on
a stale resourceVersion, propagationPolicy.
"""

import copy
import json

from .base import ApiError, dig, meta, ordered, rfc3339
from .patch import PatchError, json_patch, merge_patch, strategic_merge


class WriteMixin:
    """create, update, patch and delete."""
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
