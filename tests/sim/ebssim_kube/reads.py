"""ebssim_kube.reads: get and list: output form of stored objects, label and field selectors,
limit/continue paging on consistent snapshots (continue tokens expire), Table output.
"""

import base64
import copy
import json
import time

from .base import ApiError, INCONSISTENT_CONTINUE, b64url_decode, dig, meta, ordered
from .selectors import SelectorError, labels_match, parse_field_selector, parse_label_selector


class ReadMixin:
    """get, list, selectors and continue tokens."""
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
