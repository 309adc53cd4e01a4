"""ebssim_kube.csi: the controllers run on tick(): PVC binding and the EBS CSI driver with
external-resizer (VolumeAttributesClass) and the volume-modifier sidecar (annotations):
ModifyVolume through the simulated EC2, retries with backoff, conditions and Events.
"""

import copy
import uuid

import ebssim_kube_events as kube_events

from .base import CSI_PRINCIPAL, EBS_DRIVER, MODIFIER_COMPONENT, RESIZER_COMPONENT, dig, meta, rfc3339
from .ebs_driver import error_info, mod_state, needs_modification, parse_modify_params


class CsiMixin:
    """CSI and external-resizer emulation, driven by tick()."""
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
