"""ebssim_kube.discovery: the non-resource paths: /version, health, legacy discovery of
groups and resources, and a minimal /openapi/v3.
"""

import base64
import hashlib

from .base import ApiError


class DiscoveryMixin:
    """Discovery, /version, health and /openapi."""
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
