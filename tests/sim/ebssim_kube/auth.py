"""ebssim_kube.auth: authentication (bearer tokens, client certificate CN, EKS presigned STS
tokens) and authorization against the scenario users' VERB:RESOURCE allow lists (RBAC's
403 message).
"""

from .base import ApiError, b64url_decode


class AuthMixin:
    """Authentication and authorization."""
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
