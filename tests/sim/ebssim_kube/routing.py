"""ebssim_kube.routing: the HTTP side: handle() (the entry point), request info (verb,
resource, subresource from the path), faults, the request log, dispatch to reads/writes/
non-resource paths, content negotiation and the apiserver's Status error bodies.
"""

import copy
import json
import time
import uuid
from urllib.parse import parse_qs, unquote

from .base import ApiError, DROP, rfc3339


class RoutingMixin:
    """HTTP routing, faults and Status responses."""
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
