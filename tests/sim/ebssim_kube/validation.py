"""ebssim_kube.validation: names, defaults and validation of written objects (what the
apiserver refuses with 422 Invalid), PVC update rules.
"""

import copy
import re

from .base import dig, go_map, meta, parse_quantity


class ValidationMixin:
    """Object names, defaulting and validation."""
    NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
    LABEL_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

    def _validate_name(self, rt, name):
        rx = self.LABEL_NAME_RE if rt.plural in ("namespaces",) else self.NAME_RE
        if len(name) > 253 or not rx.match(name):
            raise self.invalid(rt, name, [("metadata.name", "Invalid value", '"%s": a lowercase RFC 1123 subdomain must '
                               "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
                               "an alphanumeric character (e.g. 'example.com', regex used for validation is "
                               "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" % name)])

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
