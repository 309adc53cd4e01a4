"""ebssim_kube.watch_events: long-poll watches (the body ends after the first batch of
events or after watch_poll_s) and Event objects (deduplicated with a count, as the
event recorder does).
"""

import copy
import json
import time

from .base import ApiError, meta, rfc3339


class WatchEventsMixin:
    """Watches and Events."""
    def _watch(self, rt, ns, q, h):
        lsel, fsel = self._selectors(rt, q)
        try:
            timeout = float(q.get("timeoutSeconds") or 1800)
        except ValueError:
            timeout = 1800
        timeout = max(0.0, min(timeout, self.watch_poll))
        rvq = q.get("resourceVersion") or ""
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        initial = q.get("sendInitialEvents") in ("true", "1")
        deadline = time.monotonic() + timeout
        events = []

        def inscope(o):
            return o is not None and (ns is None or meta(o).get("namespace") == ns) and self._matches(o, lsel, fsel)

        with self.cond:
            if rvq in ("", "0") or initial:
                for k in sorted(self.store[rt.plural]):
                    o = self.store[rt.plural][k]
                    if inscope(o):
                        events.append({"type": "ADDED", "object": self._out(rt, o)})
                if initial:
                    events.append({"type": "BOOKMARK", "object": {
                        "kind": rt.kind, "apiVersion": rt.api_version, "metadata": {
                            "resourceVersion": str(self.rv), "annotations": {"k8s.io/initial-events-end": "true"}}}})
                since = self.rv
            else:
                try:
                    since = int(rvq)
                except ValueError:
                    raise self.bad_request('resourceVersion: Invalid value: "%s": must be an integer' % rvq)
                oldest = self.history[0][0] if self.history else self.rv + 1
                if since < oldest - 1 and since < self.rv:
                    raise ApiError(410, "Expired", "too old resource version: %d (%d)" % (since, oldest - 1))
            while not events:
                for (hrv, _t, p, _key, old, new) in self.history:
                    if hrv <= since or p != rt.plural:
                        continue
                    if new is None and inscope(old):
                        events.append({"type": "DELETED", "object": self._out(rt, old)})
                    elif new is not None and inscope(new):
                        events.append({"type": "ADDED" if old is None else "MODIFIED", "object": self._out(rt, new)})
                    elif new is not None and inscope(old):
                        o = self._out(rt, new)
                        events.append({"type": "DELETED", "object": o})
                if events:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self.cond.wait(remaining)
            if not events and bookmarks:
                events.append({"type": "BOOKMARK", "object": {"kind": rt.kind, "apiVersion": rt.api_version,
                                                              "metadata": {"resourceVersion": str(self.rv)}}})
        body = b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in events)
        code, hdrs, _ = self._json(200, {})
        hdrs["Content-Type"] = "application/json"
        return code, hdrs, body

    def _event(self, obj, rt, etype, reason, message, component):
        now = rfc3339(self.now())
        m = meta(obj)
        ns = m.get("namespace") or "default"
        ident = (m.get("uid"), reason, message)
        ev = self.store["events"].get(self.event_index.get(ident, ""))
        if ev is not None:
            ne = copy.deepcopy(ev)
            ne["count"] = int(ev.get("count", 1)) + 1
            ne["lastTimestamp"] = now
            self._update(self.by_plural["events"], ne)
            return
        self.event_seq += 1
        name = "%s.%x" % (m.get("name"), int(self.now() * 1e9) + self.event_seq)
        ev = {"kind": "Event", "apiVersion": "v1",
              "metadata": {"name": name, "namespace": ns},
              "involvedObject": {"kind": rt.kind, "namespace": m.get("namespace"), "name": m.get("name"),
                                 "uid": m.get("uid"), "apiVersion": rt.api_version,
                                 "resourceVersion": m.get("resourceVersion")},
              "reason": reason, "message": message, "source": {"component": component},
              "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": etype, "eventTime": None,
              "reportingComponent": component, "reportingInstance": ""}
        if not m.get("namespace"):
            del ev["involvedObject"]["namespace"]
        erm = self.by_plural["events"]
        self._prepare_stored(erm, ev, self.now())
        self._write(erm, "%s/%s" % (ns, name), ev, None)
        self.event_index[ident] = "%s/%s" % (ns, name)
