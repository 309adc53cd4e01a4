"""ebssim CloudTrail: event history of every ModifyVolume, served by LookupEvents.

What feeds it (Trail.record): every ModifyVolume the simulator judges, accepted or refused, from
the EC2 API, from the CSI/volume-modifier emulation (principal `ebs-csi-controller`) and from
`ebssim ctl modify-volume` (a console modification at a given time by a given principal); plus,
at start-up, the scenario's modification history (`volumes[].modifications[].principal`, default
`console-user`).  A refused call is an event with `errorCode` ("Client.<EC2 code>") and
`errorMessage`, as CloudTrail records EC2's client errors.

LookupEvents (JSON 1.1, X-Amz-Target com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.
LookupEvents, SigV4 service `cloudtrail`, one port for every region, the region taken from the
credential scope):
  - LookupAttributes: at most one {AttributeKey, AttributeValue}; keys EventId, EventName,
    ReadOnly, Username, ResourceType, ResourceName, EventSource, AccessKeyId;
  - StartTime/EndTime: epoch seconds (numbers; ISO strings accepted too); StartTime > EndTime is
    InvalidTimeRangeException; MaxResults 1..50 (default 50, else InvalidMaxResultsException);
    NextToken (InvalidNextTokenException when it belongs to another query);
  - Events newest first: {EventId, EventName, ReadOnly, AccessKeyId, EventTime (epoch seconds),
    EventSource, Username, Resources[{ResourceType, ResourceName}], CloudTrailEvent (a JSON
    document in a string: eventVersion, userIdentity, eventTime, eventSource, eventName,
    awsRegion, requestParameters {ModifyVolumeRequest {...}}, responseElements, requestID,
    eventID, readOnly, eventType, managementEvent, recipientAccountId, eventCategory, and
    errorCode/errorMessage for a refused call)}.
Delivery delay: an event becomes visible `delay_s` sim seconds after it happened (default 300;
`serve --trail-delay S`, scenario `cloudtrail.delay_s`, `ctl trail '{"delay_s": S}'`).
Accounts: an event belongs to the account of its volume (recipientAccountId); LookupEvents
answers the caller's account's events only (see ebssim_aws, "account a signed request acts in").
Rate limit: 2 calls/s per account and region (wall clock, token bucket of 2), over it 400
ThrottlingException "Rate exceeded"; `ctl trail '{"rate": 0}'` lifts it.
Modes (`ctl trail '{"mode": M}'`, scenario `cloudtrail.mode`): `enabled`; `denied` (400
AccessDeniedException for every caller, as an SCP denying cloudtrail:LookupEvents would);
`disabled` (400 UnsupportedOperationException: event history not available in the region).
"""

import json
import threading
import time
import uuid

import ebssim_aws
from ebssim_core import ApiError, fmt_time, parse_time

TARGET = "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101."
EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
ATTRIBUTE_KEYS = ("EventId", "EventName", "ReadOnly", "Username", "ResourceType", "ResourceName",
                  "EventSource", "AccessKeyId")
DEFAULT_DELAY_S = 300.0
RATE_PER_S = 2.0


def _identity(sim, principal, account=None):
    """userIdentity, user name and access key of whoever made the call (in `account`, default
    the base one, for a principal named by a string)."""
    account = account or sim.account
    if isinstance(principal, dict):
        arn = principal.get("arn") or ""
        akid = principal.get("access_key_id")
        if ":assumed-role/" in arn:
            session = arn.rsplit("/", 1)[-1]
            return ({"type": "AssumedRole", "principalId": principal.get("user_id"), "arn": arn,
                     "accountId": sim.account_of(principal), "accessKeyId": akid}, session, akid)
        name = principal.get("name")
        return ({"type": "IAMUser", "principalId": principal.get("user_id"), "arn": arn,
                 "accountId": sim.account_of(principal), "accessKeyId": akid, "userName": name}, name, akid)
    name = str(principal or "console-user")
    if name == "ebs-csi-controller":
        arn = "arn:aws:sts::%s:assumed-role/AmazonEKS_EBS_CSI_DriverRole/%s" % (account, name)
        return ({"type": "AssumedRole", "principalId": "AROAEBSSIMCSIDRIVER:" + name, "arn": arn,
                 "accountId": account, "accessKeyId": "ASIAEBSSIMCSIDRIVER1"}, name,
                "ASIAEBSSIMCSIDRIVER1")
    known = sim.principals_by_name.get(name) if account == sim.account else None
    if known:
        return _identity(sim, known)
    arn = "arn:aws:iam::%s:user/%s" % (account, name)
    return ({"type": "IAMUser", "principalId": "AIDAEBSSIM" + "".join(c for c in name.upper() if c.isalnum())[:11], "arn": arn,
             "accountId": account, "userName": name}, name, None)


def _request_parameters(volume_id, params):
    """ModifyVolumeRequest as CloudTrail writes it: the API's member names, numbers as numbers."""
    req = {"VolumeId": volume_id}
    for key in ("Size", "VolumeType", "Iops", "Throughput", "MultiAttachEnabled"):
        value = params.get(key) if isinstance(params, dict) else None
        if value is None or value == "":
            continue
        if key in ("Size", "Iops", "Throughput"):
            try:
                value = int(value)
            except (TypeError, ValueError):
                pass
        req[key] = value
    return {"ModifyVolumeRequest": req}


def _response_elements(mod, request_id):
    o, t = mod["original"], mod["target"]
    vm = {"volumeId": mod["volume_id"], "modificationState": mod["state"],
          "targetSize": t["size"], "targetIops": t.get("iops"), "targetVolumeType": t["type"],
          "targetThroughput": t.get("throughput"), "targetMultiAttachEnabled": False,
          "originalSize": o["size"], "originalIops": o.get("iops"), "originalVolumeType": o["type"],
          "originalThroughput": o.get("throughput"), "originalMultiAttachEnabled": False,
          "progress": 0, "startTime": mod["start_time"]}
    vm = {k: v for k, v in vm.items() if v is not None}
    return {"ModifyVolumeResponse": {"xmlns": EC2_NS, "requestId": request_id, "volumeModification": vm}}


class Trail:
    def __init__(self, sim, delay_s=None):
        self.sim = sim
        spec = sim.scenario.get("cloudtrail") or {}
        self.delay_s = float(delay_s if delay_s is not None else spec.get("delay_s", DEFAULT_DELAY_S))
        self.mode = spec.get("mode", "enabled")
        self.rate = float(spec.get("rate", RATE_PER_S))
        self.events = []          # oldest first
        self.lock = threading.Lock()
        self.buckets = {}         # (account, region) -> [tokens, wall time]
        for vid, mods in sim.modifications.items():
            region = sim.volumes[vid]["region"]
            for m in mods:
                view = dict(sim.mod_view(m), state="modifying")  # as answered at the time
                params = {"VolumeType": m["target"]["type"], "Size": m["target"]["size"]}
                if m["target"].get("iops") is not None and m["target"]["type"] != "gp2":
                    params["Iops"] = m["target"]["iops"]
                if m["target"].get("throughput") is not None:
                    params["Throughput"] = m["target"]["throughput"]
                self.record(region, vid, params, m.get("principal") or "console-user", True, view,
                            at=m["start"])
        self.events.sort(key=lambda e: e["time"])

    # ---- recording

    def record(self, region, volume_id, params, principal, ok, result, at=None):
        """One ModifyVolume call.  result: the modification view (ok) or EC2's error dict."""
        when = self.sim.now() if at is None else float(at)
        vol = self.sim.volumes.get(volume_id)
        account = self.sim.owner_of(vol) if vol is not None else self.sim.account
        identity, username, akid = _identity(self.sim, principal, account)
        event_id = str(uuid.uuid4())
        request_id = str(uuid.uuid4())
        detail = {"eventVersion": "1.09", "userIdentity": identity,
                  "eventTime": fmt_time(when), "eventSource": "ec2.amazonaws.com",
                  "eventName": "ModifyVolume", "awsRegion": region,
                  "sourceIPAddress": "ec2.amazonaws.com" if username == "ebs-csi-controller" else "192.0.2.10",
                  "userAgent": "ebssim", "requestParameters": _request_parameters(volume_id, params)}
        if ok:
            detail["responseElements"] = _response_elements(result, request_id)
        else:
            detail["errorCode"] = "Client." + result.get("code", "Error")
            detail["errorMessage"] = result.get("message", "")
            detail["responseElements"] = None
        detail.update({"requestID": request_id, "eventID": event_id, "readOnly": False,
                       "eventType": "AwsApiCall", "managementEvent": True,
                       "recipientAccountId": account, "eventCategory": "Management"})
        event = {"time": when, "region": region, "account": account, "volume_id": volume_id, "ok": ok,
                 "EventId": event_id, "EventName": "ModifyVolume", "ReadOnly": "false",
                 "AccessKeyId": akid, "EventSource": "ec2.amazonaws.com", "Username": username,
                 "Resources": [{"ResourceType": "AWS::EC2::Volume", "ResourceName": volume_id}],
                 "CloudTrailEvent": json.dumps(detail, separators=(",", ":"))}
        with self.lock:
            self.events.append(event)

    # ---- control (`ebssim ctl trail`, `ebssim ctl modify-volume`)

    def control(self, path, body):
        """-> (answer, HTTP status)."""
        if path == "/trail":
            if "mode" in body:
                if body["mode"] not in ("enabled", "denied", "disabled"):
                    return {"error": "mode must be enabled, denied or disabled"}, 400
                self.mode = body["mode"]
            if "delay_s" in body:
                self.delay_s = float(body["delay_s"])
            if "rate" in body:
                self.rate = float(body["rate"])
            with self.lock:
                n = len(self.events)
            return {"mode": self.mode, "delay_s": self.delay_s, "rate": self.rate, "events": n}, 200
        if path == "/modify-volume":
            return self._console_modify(body)
        return {"error": "no such control path %s" % path}, 404

    def _console_modify(self, body):
        """A modification made outside ebsmigrate (console, another tool), now or in the past:
        {"volume_id", "at": RFC 3339 | seconds relative to now (negative = ago), "principal",
        "volume_type", "size", "iops", "throughput"}.  Past ones must come in time order, after
        the volume's latest modification has completed; EC2's rules apply at that time."""
        sim = self.sim
        vid = body.get("volume_id") or ""
        params = {}
        for src, dst in (("volume_type", "VolumeType"), ("size", "Size"), ("iops", "Iops"),
                         ("throughput", "Throughput")):
            if body.get(src) is not None:
                params[dst] = str(body[src])
        with sim.lock:
            sim.update()
            now = sim.now()
            at = body.get("at")
            if at is None:
                when = None
            elif isinstance(at, (int, float)):
                when = now + float(at)
            else:
                when = parse_time(at)
            vol = sim.volumes.get(vid)
            if vol is None:
                return {"error": "InvalidVolume.NotFound: The volume '%s' does not exist." % vid}, 404
            if when is not None:
                if when > now:
                    return {"error": "a console modification cannot be in the future"}, 400
                mods = sim.modifications.get(vid) or []
                if mods and (mods[-1]["start"] > when or mods[-1]["t_end"] > when):
                    return {"error": "IncorrectModificationState: the previous modification of %s "
                                     "has not completed at %s" % (vid, fmt_time(when))}, 400
            ok, result = sim.ec2_modify_volume(vol["region"], vid, params,
                                               body.get("principal") or "console-user", at=when)
        if not ok:
            return {"error": "%s: %s" % (result["code"], result["message"])}, 400
        return {"ok": True, "modification": result}, 200

    # ---- LookupEvents

    def throttled(self, region, account=None):
        if self.rate <= 0:
            return False
        key = (account or self.sim.account, region)
        wall = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(key, (self.rate, wall))
            tokens = min(self.rate, tokens + (wall - last) * self.rate)
            if tokens < 1.0:
                self.buckets[key] = (tokens, wall)
                return True
            self.buckets[key] = (tokens - 1.0, wall)
            return False

    def lookup(self, p, region, account=None):
        if not isinstance(p, dict):
            raise ApiError("SerializationException", "Start of structure or map found where not expected.")
        attrs = p.get("LookupAttributes") or []
        if not isinstance(attrs, list) or len(attrs) > 1:
            raise ApiError("InvalidLookupAttributesException",
                           "You cannot specify more than one lookup attribute.")
        attr = None
        if attrs:
            a = attrs[0]
            if not isinstance(a, dict) or a.get("AttributeKey") not in ATTRIBUTE_KEYS or \
                    not isinstance(a.get("AttributeValue"), str) or not a["AttributeValue"]:
                raise ApiError("InvalidLookupAttributesException",
                               "The lookup attribute key or value is not valid.")
            attr = (a["AttributeKey"], a["AttributeValue"])
        now = self.sim.now()
        account = account or self.sim.account

        def when(name, default):
            v = p.get(name)
            if v is None:
                return default
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
            if isinstance(v, str):
                t = parse_time(v)
                if t is not None:
                    return t
            raise ApiError("SerializationException", "%s is not a timestamp" % name)
        start = when("StartTime", now - 90 * 86400)
        end = when("EndTime", now)
        if start > end:
            raise ApiError("InvalidTimeRangeException", "Start time must be earlier than end time.")
        limit = p.get("MaxResults", 50)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 50:
            raise ApiError("InvalidMaxResultsException", "Value of MaxResults must be between 1 and 50.")
        key = json.dumps([region, attr, p.get("StartTime"), p.get("EndTime")])  # as asked: "now" moves
        offset = 0
        token = p.get("NextToken")
        if token is not None:
            try:
                tok = json.loads(bytes.fromhex(token).decode())
                ok = isinstance(tok, dict) and tok.get("k") == key and isinstance(tok.get("i"), int)
            except (ValueError, UnicodeDecodeError, AttributeError, TypeError):
                ok = False
            if not ok:
                raise ApiError("InvalidNextTokenException", "Invalid NextToken.")
            offset = tok["i"]
        visible_until = now - self.delay_s
        with self.lock:
            events = [e for e in self.events
                      if e["region"] == region and e["account"] == account and start <= e["time"] <= end
                      and e["time"] <= visible_until and self._matches(e, attr)]
        events.sort(key=lambda e: e["time"], reverse=True)
        page = events[offset:offset + limit]
        out = {"Events": [self._public(e) for e in page]}
        if offset + limit < len(events):
            out["NextToken"] = json.dumps({"k": key, "i": offset + limit}).encode().hex()
        return out

    @staticmethod
    def _matches(e, attr):
        if attr is None:
            return True
        k, v = attr
        if k == "ResourceName":
            return any(r["ResourceName"] == v for r in e["Resources"])
        if k == "ResourceType":
            return any(r["ResourceType"] == v for r in e["Resources"])
        return str(e.get(k)) == v

    @staticmethod
    def _public(e):
        out = {k: e[k] for k in ("EventId", "EventName", "ReadOnly", "AccessKeyId", "EventSource",
                                 "Username", "Resources", "CloudTrailEvent") if e.get(k) is not None}
        out["EventTime"] = e["time"]
        return out


class CloudTrailApp(ebssim_aws.Json11App):
    """LookupEvents over the shared signed-request flow (ebssim_aws.ServiceApp)."""
    error_message_key = "message"

    service = "cloudtrail"
    iam_prefix = "cloudtrail"
    TARGET = TARGET
    server_error_code = "InternalServerError"

    def run(self, action, p, principal, region, req, proto):
        trail = self.sim.trail
        if action != "LookupEvents" or trail is None:
            raise ApiError("UnknownOperationException", "Unknown operation %s" % action)
        if trail.mode == "denied":
            raise self.denied(principal, "cloudtrail:LookupEvents", region, p, proto)
        if trail.mode == "disabled":
            raise ApiError("UnsupportedOperationException",
                           "This operation is not supported in the region %s." % region)
        account = self.sim.account_of(principal)
        if trail.throttled(region, account):
            raise self.throttle_error(proto)
        return trail.lookup(p, region, account)
