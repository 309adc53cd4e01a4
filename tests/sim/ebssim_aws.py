"""ebssim AWS side: EC2, CloudWatch, Pricing, STS, IMDSv2 and container credentials.

Each service is an "app" with handle(Request) -> Response, served on its own port by
ebssim_core.  The flow of a signed request (ServiceApp.handle):
    parse (protocol) -> fault injection -> SigV4 check (botocore) -> permission check
    -> action -> render (protocol) -> request log entry.
Protocols:
  - EC2 query protocol, XML answers in the 2016-11-15 namespace, errors as
    <Response><Errors><Error>..</Error></Errors><RequestID/></Response>;
  - CloudWatch: JSON 1.0 (X-Amz-Target GraniteServiceVersion20100801.*) with
    awsQueryCompatible error headers, and the query protocol with XML answers;
  - Pricing: JSON 1.1 (X-Amz-Target AWSPriceListService.*), data from pricing/*.json;
  - STS: query protocol (signed POST, presigned GET; AssumeRoleWithWebIdentity unsigned);
  - IMDSv2 and the container credentials endpoint: plain HTTP, no SigV4.
The region of a signed request is the one in its credential scope, so every region can
share one endpoint URL.  The account a signed request acts in is its principal's
(`sim.account_of`): the base account, or the account whose role AssumeRole issued the
credentials for; EC2, CloudWatch and CloudTrail show only that account's volumes, instances and
events, and a region in the account's `disabled_regions` refuses the credentials as AWS does.
Organizations (ListAccounts, DescribeAccount) is in ebssim_org.py.
"""

import base64
import bisect
import glob
import json
import math
import os
import re
import time
import urllib.parse
import uuid
from xml.sax.saxutils import escape

import ebssim_metrics
from ebssim_core import (ApiError, AuthFailure, Response, fmt_time, parse_time)

EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
CW_NS = "http://monitoring.amazonaws.com/doc/2010-08-01/"
STS_NS = "https://sts.amazonaws.com/doc/2011-06-15/"
XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'
PRICING_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")


def _x(tag, value):
    if value is None:
        return ""
    if isinstance(value, bool):
        value = "true" if value else "false"
    text = str(value)
    if "&" in text or "<" in text or ">" in text:   # what escape() replaces; most text has none
        text = escape(text)
    return "<%s>%s</%s>" % (tag, text, tag) if text != "" else "<%s/>" % tag


_MILLIS_TIMES = {}   # RFC 3339 text -> fmt_time(parse_time(text), millis=True), a pure function


def _millis_time(text):
    out = _MILLIS_TIMES.get(text)
    if out is None:
        if len(_MILLIS_TIMES) > 100000:
            _MILLIS_TIMES.clear()
        out = _MILLIS_TIMES[text] = fmt_time(parse_time(text), millis=True)
    return out


def _num(v):
    """JSON-friendly number: ints stay ints."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return int(v)
    return v


def _fmt_value(v):
    return repr(float(v))


def _tok_encode(obj):
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode()


def _tok_decode(token):
    try:
        pad = "=" * (-len(token) % 4)
        return json.loads(base64.urlsafe_b64decode(token + pad))
    except (ValueError, TypeError):
        return None


def _form(req):
    """Query-protocol parameters from the query string and a form body."""
    params = dict(urllib.parse.parse_qsl(req.query, keep_blank_values=True))
    ctype = req.headers.get("content-type", "")
    if req.body and (ctype.startswith("application/x-www-form-urlencoded") or not ctype):
        params.update(urllib.parse.parse_qsl(req.body.decode("utf-8", "replace"),
                                             keep_blank_values=True))
    return params


def _unflatten(params, skip=("Action", "Version")):
    """Query-protocol keys (A.member.1.B=...) -> nested dicts/lists."""
    root = {}
    for key, value in params.items():
        if key in skip or key.startswith("X-Amz-"):
            continue
        node = root
        parts = key.split(".")
        for part in parts[:-1]:
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                nxt = {}
                node[part] = nxt
            node = nxt
        node[parts[-1]] = value

    def convert(n):
        if not isinstance(n, dict):
            return n
        if set(n) == {"member"} and isinstance(n["member"], dict) and \
                all(k.isdigit() for k in n["member"]):
            return [convert(n["member"][k]) for k in sorted(n["member"], key=int)]
        return {k: convert(v) for k, v in n.items()}
    return convert(root)


def _indexed(params, prefix):
    """EC2 lists: Prefix.1, Prefix.2 ... in index order."""
    out = []
    pat = re.compile(re.escape(prefix) + r"\.(\d+)$")
    for k, v in params.items():
        m = pat.match(k)
        if m:
            out.append((int(m.group(1)), v))
    return [v for _, v in sorted(out)]


def _filters(params):
    """EC2 Filter.N.Name / Filter.N.Value.M -> [(name, [values])]."""
    names = {}
    values = {}
    for k, v in params.items():
        m = re.match(r"Filter\.(\d+)\.Name$", k)
        if m:
            names[int(m.group(1))] = v
            continue
        m = re.match(r"Filter\.(\d+)\.Value\.(\d+)$", k)
        if m:
            values.setdefault(int(m.group(1)), []).append((int(m.group(2)), v))
    return [(names[i], [v for _, v in sorted(values.get(i, []))]) for i in sorted(names)]


def _wild(pattern):
    """EC2 filter values accept * and ? wildcards."""
    if "*" not in pattern and "?" not in pattern:
        return lambda s: s == pattern
    rx = re.compile("^" + "".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                                  for c in pattern) + "$", re.S)
    return lambda s: bool(rx.match(s))


def _match_any(values, candidates):
    preds = [_wild(v) for v in values]
    return any(p(str(c)) for c in candidates for p in preds)


# =========================================================================== base app


REPEATED_TOKEN = "ebssim-repeated-token"


def _with_next_token(body, token):
    """An answer body (EC2's XML fragment, or a JSON protocol's dict) with its next-page token
    set to token: the `repeat-token` fault, a server that keeps handing out the same token."""
    if isinstance(body, dict):
        return dict(body, NextToken=token)
    body = re.sub(r"    <nextToken>[^<]*</nextToken>\n", "", body)
    return body + "    <nextToken>%s</nextToken>\n" % token


class ServiceApp:
    """Shared request flow for the SigV4-signed services."""

    service = None       # log name and SigV4 signing name
    iam_prefix = None    # permission prefix: ec2, cloudwatch, pricing, sts

    def __init__(self, apis):
        self.apis = apis
        self.sim = apis.sim

    # subclasses: parse(req) -> (action, params, protocol); run(...) -> body object;
    # render_ok(...), render_error(...), auth_error(AuthFailure) -> ApiError,
    # throttle_error(), server_error(), unsigned_actions

    unsigned_actions = ()

    def loggable(self, action, params):
        return params

    def handle(self, req):
        request_id = str(uuid.uuid4())
        action, params, proto = None, {}, None
        entry = {"service": self.service, "region": None, "action": None, "params": {},
                 "principal": None}
        fault = None
        try:
            action, params, proto = self.parse(req)
            entry["action"] = action
            entry["params"] = self.loggable(action, params)
            fault = self.sim.fault(self.service, action)
            skew = 0.0
            if fault:
                kind = fault["kind"]
                if kind == "throttle":
                    raise self.throttle_error(proto)
                if kind == "5xx":
                    raise self.server_error(proto)
                if kind == "slow":
                    time.sleep(float(fault.get("delay_s") or 2))
                if kind == "hold":
                    self.sim.hold(self.service, action, entry["params"], fault)
                if kind == "skew":
                    skew = float(fault.get("skew_s") or 600)
            if action in self.unsigned_actions and not req.headers.get("authorization"):
                principal, region = None, None
            else:
                try:
                    principal, region = self.sim.check_sigv4(req, self.service, skew=skew)
                except AuthFailure as af:
                    entry["principal"] = af.akid
                    raise self.auth_error(af, proto)
                entry["principal"] = principal["access_key_id"]
                entry["region"] = region
                if region in self.sim.account_state(self.sim.account_of(principal)).disabled_regions:
                    # an opt-in region the account has not enabled: the credentials are unknown there
                    raise self.auth_error(AuthFailure("unknown_key", "AWS was not able to validate "
                                                      "the provided access credentials",
                                                      principal["access_key_id"]), proto)
                self.check_region(region, proto)
                perm = "%s:%s" % (self.iam_prefix, action)
                if not self.always_allowed(action) and not self.sim.allowed(
                        principal, perm, self.condition_context(region, params)):
                    raise self.denied(principal, perm, region, params, proto)
                self.check_rate(action, principal, region, proto)
            vid = (params.get("VolumeId") or params.get("VolumeId.1") or params.get("ResourceId.1") or
                   (params.get("Filter.1.Value.1") if params.get("Filter.1.Name") == "volume-id" else None)) \
                if isinstance(params, dict) else None
            refusal = self.sim.error_fault(self.service, action, vid)
            if refusal:
                raise refusal
            self.sim.update()
            req.fault = fault  # for the faults an action answers itself (foreign-keys)
            repeat = fault is not None and fault["kind"] == "repeat-token" and isinstance(params, dict)
            if repeat:  # the first page again, whatever token came, and a token that never changes
                params = {k: v for k, v in params.items() if k != "NextToken"}
            body = self.run(action, params, principal, region, req, proto)
            if repeat:
                body = _with_next_token(body, REPEATED_TOKEN)
            resp = self.render_ok(action, body, request_id, proto)
        except ApiError as err:
            resp = self.render_error(err, request_id, proto)
        entry["status"] = resp.status
        entry["error_code"] = getattr(resp, "error_code", None)
        self.sim.log_request(entry)
        if fault and fault["kind"] in ("drop", "truncate"):
            resp.fault = fault["kind"]
        return resp

    def condition_context(self, region, params):
        """The IAM condition keys of this request (sim.allowed): aws:RequestedRegion, and for an
        EC2 call on one volume that volume's tags as ec2:ResourceTag/KEY."""
        ctx = {"aws:RequestedRegion": region}
        vid = params.get("VolumeId") if self.service == "ec2" and isinstance(params, dict) else None
        vol = self.sim.volumes.get(vid) if vid else None
        for k, v in ((vol or {}).get("tags") or {}).items():
            ctx["ec2:ResourceTag/%s" % k] = v
        return ctx

    def check_region(self, region, proto):
        pass

    def check_rate(self, action, principal, region, proto):
        pass

    def always_allowed(self, action):
        return False


# =========================================================================== EC2


INSTANCE_STATE_CODES = {"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48,
                        "stopping": 64, "stopped": 80}

VOLUME_FILTERS = {
    "volume-type": lambda v: [v["type"]],
    "volume-id": lambda v: [v["volume_id"]],
    "status": lambda v: [v["state"]],
    "availability-zone": lambda v: [v.get("az", "")],
    "size": lambda v: [str(v["size"])],
    "encrypted": lambda v: ["true" if v.get("encrypted") else "false"],
    "snapshot-id": lambda v: [v.get("snapshot_id") or ""],
    "create-time": lambda v: [v.get("create_time", "")],
    "multi-attach-enabled": lambda v: ["true" if v.get("multi_attach") else "false"],
    "attachment.instance-id": lambda v: [a.get("instance_id", "") for a in v.get("attachments", [])],
    "attachment.device": lambda v: [a.get("device", "") for a in v.get("attachments", [])],
    "attachment.status": lambda v: [a.get("state", "attached") for a in v.get("attachments", [])],
    "attachment.attach-time": lambda v: [a.get("attach_time", "") for a in v.get("attachments", [])],
    "attachment.delete-on-termination": lambda v: [
        "true" if a.get("delete_on_termination") else "false" for a in v.get("attachments", [])],
    "tag-key": lambda v: list((v.get("tags") or {}).keys()),
    "tag-value": lambda v: list((v.get("tags") or {}).values()),
}

MOD_FILTERS = {
    "volume-id": lambda m: [m["volume_id"]],
    "modification-state": lambda m: [m["state"]],
    "original-volume-type": lambda m: [m["original"]["type"]],
    "target-volume-type": lambda m: [m["target"]["type"]],
    "original-size": lambda m: [str(m["original"]["size"])],
    "target-size": lambda m: [str(m["target"]["size"])],
    "original-iops": lambda m: [str(m["original"].get("iops"))],
    "target-iops": lambda m: [str(m["target"].get("iops"))],
    "original-throughput": lambda m: [str(m["original"].get("throughput"))],
    "target-throughput": lambda m: [str(m["target"].get("throughput"))],
    "start-time": lambda m: [m["start_time"]],
    "originalMultiAttachEnabled": lambda m: ["false"],
    "targetMultiAttachEnabled": lambda m: ["false"],
}

INSTANCE_FILTERS = {
    "instance-id": lambda i: [i["instance_id"]],
    "instance-type": lambda i: [i.get("instance_type", "")],
    "availability-zone": lambda i: [i.get("az", "")],
    "instance-state-name": lambda i: [i.get("state", "running")],
    "private-dns-name": lambda i: [i.get("private_dns_name", "")],
    "tag-key": lambda i: list((i.get("tags") or {}).keys()),
}


def _filter_pred(specs, table, tags_of=lambda o: o.get("tags") or {}):
    """Build one predicate from EC2 filters; unknown names are InvalidParameterValue."""
    preds = []
    for name, values in specs:
        if name.startswith("tag:"):
            key = name[4:]
            preds.append(lambda o, k=key, vs=values:
                         k in tags_of(o) and _match_any(vs, [tags_of(o)[k]]))
            continue
        get = table.get(name)
        if get is None:
            raise ApiError("InvalidParameterValue", "The filter '%s' is invalid" % name)
        preds.append(lambda o, g=get, vs=values: _match_any(vs, g(o)))
    return lambda o: all(p(o) for p in preds)


class Ec2App(ServiceApp):
    service = "ec2"
    iam_prefix = "ec2"

    def __init__(self, apis):
        super().__init__(apis)
        self.buckets = {}   # (account, region, action) -> (tokens, monotonic time): see check_rate

    ACTIONS = ("DescribeVolumes", "DescribeVolumesModifications", "ModifyVolume", "DeleteVolume",
               "CreateTags", "DescribeInstances", "DescribeInstanceTypes", "DescribeRegions")

    # EBS-optimized figures per instance type (EC2 DescribeInstanceTypes, EbsInfo.EbsOptimizedInfo):
    # baseline/maximum bandwidth (Mbps), throughput (MB/s) and IOPS. A scenario may add types
    # under "instance_types": {"TYPE": {"baseline_iops": ..., "baseline_mbps": ..., ...}}.
    EBS_INFO = {
        "m5.large": (650, 81.25, 3600, 4750, 593.75, 18750),
        "m5.xlarge": (1150, 143.75, 6000, 4750, 593.75, 18750),
        "r5.2xlarge": (2300, 287.5, 12000, 4750, 593.75, 18750),
        # the rest of the types ebssim_gen's fleets use (EC2 instance types guide, EBS
        # specifications; M: recalled, not checked against the stored pages), so that a
        # generated fleet's DescribeInstanceTypes answers instead of InvalidInstanceType
        "r5.xlarge": (1150, 143.75, 6000, 4750, 593.75, 18750),
        "c5.2xlarge": (2300, 287.5, 10000, 4750, 593.75, 20000),
        "m6i.2xlarge": (2500, 312.5, 12000, 10000, 1250.0, 40000),
        "m7g.xlarge": (1250, 156.25, 6000, 10000, 1250.0, 40000),
    }

    def do_DescribeInstanceTypes(self, params, principal, region):
        types = _indexed(params, "InstanceType")
        extra = self.sim.scenario.get("instance_types") or {}
        items = []
        for t in dict.fromkeys(types):
            if t in extra:
                e = extra[t]
                info = (e["baseline_mbps"], e["baseline_mbps"] / 8.0, e["baseline_iops"],
                        e.get("maximum_mbps", e["baseline_mbps"]), e.get("maximum_mbps", e["baseline_mbps"]) / 8.0,
                        e.get("maximum_iops", e["baseline_iops"]))
            elif t in self.EBS_INFO:
                info = self.EBS_INFO[t]
            else:
                raise ApiError("InvalidInstanceType", "The following supplied instance types do not exist: [%s]" % t)
            items.append(
                "        <item>\n            %s\n            <ebsInfo>\n"
                "                <ebsOptimizedSupport>default</ebsOptimizedSupport>\n"
                "                <encryptionSupport>supported</encryptionSupport>\n"
                "                <ebsOptimizedInfo>%s%s%s%s%s%s</ebsOptimizedInfo>\n"
                "                <nvmeSupport>required</nvmeSupport>\n            </ebsInfo>\n        </item>\n" % (
                    _x("instanceType", t), _x("baselineBandwidthInMbps", info[0]),
                    _x("baselineThroughputInMBps", info[1]), _x("baselineIops", info[2]),
                    _x("maximumBandwidthInMbps", info[3]), _x("maximumThroughputInMBps", info[4]),
                    _x("maximumIops", info[5])))
        body = "".join(items)
        return ("    <instanceTypeSet>\n%s    </instanceTypeSet>\n" % body) if body else "    <instanceTypeSet/>\n"

    def parse(self, req):
        params = _form(req)
        action = params.get("Action")
        if not action:
            raise ApiError("MissingAction", "The request must contain the parameter Action")
        return action, params, "ec2"

    def loggable(self, action, params):
        return {k: v for k, v in params.items() if not k.startswith("X-Amz-")}

    def auth_error(self, af, proto):
        k = af.kind
        if k == "missing":
            return ApiError("MissingAuthenticationToken", "The request must contain either a valid "
                            "(registered) AWS access key ID or X.509 certificate.", 401)
        if k == "malformed":
            return ApiError("IncompleteSignature", af.message, 400)
        if k in ("expired_sig", "expired_token"):
            return ApiError("RequestExpired", "Request has expired.", 400)
        if k in ("bad_region", "bad_service"):
            return ApiError("AuthFailure", af.message, 401)
        return ApiError("AuthFailure", "AWS was not able to validate the provided access credentials", 401)

    def throttle_error(self, proto):
        return ApiError("RequestLimitExceeded", "Request limit exceeded.", 503, sender=False)

    def check_rate(self, action, principal, region, proto):
        """Scenario `ec2_rate_limit: {"burst": B, "rate": R}` (default none): EC2's request token
        buckets, one per account, region and action (wall clock; EC2 evaluates each API on its own),
        each request taking one token."""
        spec = self.sim.scenario.get("ec2_rate_limit")
        if not spec:
            return
        burst, rate = float(spec.get("burst", 100)), float(spec.get("rate", 20))
        key = (self.sim.account_of(principal), region, action)
        now = time.monotonic()
        with self.sim.lock:
            tokens, last = self.buckets.get(key, (burst, now))
            tokens = min(burst, tokens + (now - last) * rate)
            if tokens < 1.0:
                self.buckets[key] = (tokens, now)
                raise self.throttle_error(proto)
            self.buckets[key] = (tokens - 1.0, now)

    def server_error(self, proto):
        return ApiError("InternalError", "An internal error has occurred", 500, sender=False)

    def denied(self, principal, perm, region, params, proto):
        resource = ""
        vid = params.get("VolumeId") or params.get("ResourceId.1")
        if vid and perm in ("ec2:ModifyVolume", "ec2:CreateTags"):
            resource = " on resource: arn:aws:ec2:%s:%s:volume/%s" % (region, self.sim.account_of(principal), vid)
        return ApiError("UnauthorizedOperation",
                        "You are not authorized to perform this operation. User: %s is not "
                        "authorized to perform: %s%s because no identity-based policy allows the "
                        "%s action" % (principal["arn"], perm, resource, perm), 403)

    def run(self, action, params, principal, region, req, proto):
        if action not in self.ACTIONS:
            raise ApiError("InvalidAction", "The action %s is not valid for this web service." % action)
        if not params.get("Version"):
            raise ApiError("MissingParameter", "The request must contain the parameter Version")
        if params.get("DryRun", "").lower() == "true":
            raise ApiError("DryRunOperation", "Request would have succeeded, but DryRun flag is set.", 412)
        return getattr(self, "do_" + action)(params, principal, region)

    # ---- rendering

    def render_ok(self, action, body, request_id, proto):
        text = ('%s<%sResponse xmlns="%s">\n    <requestId>%s</requestId>\n%s</%sResponse>'
                % (XML_DECL, action, EC2_NS, request_id, body, action))
        return Response(200, {"Content-Type": "text/xml;charset=UTF-8", "Server": "AmazonEC2",
                              "x-amzn-RequestId": request_id}, text)

    def render_error(self, err, request_id, proto):
        text = ("%s<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors>"
                "<RequestID>%s</RequestID></Response>" % (XML_DECL, escape(err.code),
                                                          escape(err.message), request_id))
        resp = Response(err.status, {"Content-Type": "text/xml;charset=UTF-8", "Server": "AmazonEC2",
                                     "x-amzn-RequestId": request_id}, text)
        resp.error_code = err.code
        return resp

    # ---- pagination helpers

    def _max_results(self, params, lo, hi):
        if "MaxResults" not in params:
            return None
        try:
            n = int(params["MaxResults"])
        except ValueError:
            raise ApiError("InvalidParameterValue", "Value (%s) for parameter maxResults is invalid. "
                           "Expected: 'Integer'." % params["MaxResults"])
        if n < lo:
            raise ApiError("InvalidParameterValue", "Value ( %d ) for parameter maxResults is invalid. "
                           "Expecting a value greater than %d." % (n, lo))
        if n > hi:
            raise ApiError("InvalidParameterValue", "Value ( %d ) for parameter maxResults is invalid. "
                           "Expecting a value less than %d." % (n, hi))
        return n

    def _token_scope(self, region, acct):
        """What a NextToken is bound to: the region, and a member account's id too (the base
        account's tokens stay as they were)."""
        return region if acct == self.sim.account else "%s/%s" % (region, acct)

    def _token_start(self, params, action, region):
        token = params.get("NextToken")
        if not token:
            return 0
        data = _tok_decode(token)
        if not isinstance(data, dict) or data.get("a") != action or data.get("r") != region:
            raise ApiError("InvalidPaginationToken",
                           "The pagination token %s is invalid or has expired." % token)
        return int(data.get("i", 0))

    def _page(self, ids, get, pred, start, limit, action, region):
        """Scan ids from start, collect up to limit matches; -> (items, next token or None)."""
        items = []
        i = start
        n = len(ids)
        while i < n:
            obj = get(ids[i])
            i += 1
            if obj is not None and pred(obj):
                items.append(obj)
                if limit is not None and len(items) >= limit:
                    break
        more = limit is not None and i < n and any(
            (get(ids[j]) is not None and pred(get(ids[j]))) for j in range(i, n))
        token = _tok_encode({"a": action, "r": region, "i": i}) if more else None
        return items, token

    # ---- DescribeVolumes

    def do_DescribeVolumes(self, params, principal, region):
        ids = _indexed(params, "VolumeId")
        limit = self._max_results(params, 5, 1000)
        if ids and limit is not None:
            raise ApiError("InvalidParameterCombination",
                           "The parameter volumeSet cannot be used with the parameter maxResults")
        pred = _filter_pred(_filters(params), VOLUME_FILTERS)
        vols = self.sim.volumes
        acct = self.sim.account_of(principal)
        with self.sim.lock:
            if ids:
                self._check_volume_ids(ids, region, acct)
                seen = []
                for vid in ids:
                    if vid not in seen:
                        seen.append(vid)
                items = [vols[v] for v in seen if pred(vols[v])]
                token = None
            else:
                region_ids = self.sim.account_state(acct).by_region.get(region, [])
                scope = self._token_scope(region, acct)
                start = self._token_start(params, "DescribeVolumes", scope)
                items, token = self._page(region_ids, vols.get, pred, start, limit,
                                          "DescribeVolumes", scope)
            body = "".join(self._volume_xml(v) for v in items)
        out = ("    <volumeSet>\n%s    </volumeSet>\n" % body) if body else "    <volumeSet/>\n"
        if token:
            out += "    <nextToken>%s</nextToken>\n" % token
        return out

    def _check_volume_ids(self, ids, region, acct):
        for vid in ids:
            if not re.fullmatch(r"vol-[0-9a-f]{8}([0-9a-f]{9})?", vid):
                raise ApiError("InvalidVolumeID.Malformed", 'Invalid id: "%s" (expecting "vol-...")' % vid)
        vols = self.sim.volumes
        missing = [v for v in ids if v not in vols or vols[v]["region"] != region
                   or self.sim.owner_of(vols[v]) != acct]
        if len(missing) == 1:
            raise ApiError("InvalidVolume.NotFound", "The volume '%s' does not exist." % missing[0])
        if missing:
            raise ApiError("InvalidVolume.NotFound", "The volumes '%s' do not exist." % ", ".join(missing))

    def _volume_xml(self, v):
        vid = v["volume_id"]
        parts = ["        <item>\n",
                 "            ", _x("volumeId", vid), "\n",
                 "            ", _x("size", v["size"]), "\n",
                 "            ", _x("snapshotId", v.get("snapshot_id") or ""), "\n",
                 "            ", _x("availabilityZone", v.get("az", "")), "\n",
                 "            ", _x("status", v["state"]), "\n",
                 "            ", _x("createTime", _millis_time(v["create_time"])), "\n"]
        atts = v.get("attachments") or []
        if atts:
            parts.append("            <attachmentSet>\n")
            for a in atts:
                parts += ["                <item>\n",
                          "                    ", _x("volumeId", vid), "\n",
                          "                    ", _x("instanceId", a.get("instance_id")), "\n",
                          "                    ", _x("device", a.get("device")), "\n",
                          "                    ", _x("status", a.get("state", "attached")), "\n",
                          "                    ", _x("attachTime", _millis_time(a["attach_time"])
                                                     if a.get("attach_time") else None), "\n",
                          "                    ", _x("deleteOnTermination", bool(a.get("delete_on_termination"))), "\n",
                          "                </item>\n"]
            parts.append("            </attachmentSet>\n")
        else:
            parts.append("            <attachmentSet/>\n")
        tags = v.get("tags") or {}
        if tags:
            parts.append("            <tagSet>\n")
            for k, val in tags.items():
                parts += ["                <item>\n",
                          "                    ", _x("key", k), "\n",
                          "                    ", _x("value", val), "\n",
                          "                </item>\n"]
            parts.append("            </tagSet>\n")
        parts += ["            ", _x("volumeType", v["type"]), "\n"]
        if v.get("iops") is not None:
            parts += ["            ", _x("iops", v["iops"]), "\n"]
        parts += ["            ", _x("encrypted", bool(v.get("encrypted"))), "\n"]
        if v.get("encrypted"):
            kms = v.get("kms_key_id") or ("arn:aws:kms:%s:%s:key/%s" % (
                v["region"], self.sim.owner_of(v), "0a1b2c3d-4e5f-6789-abcd-ef0123456789"))
            parts += ["            ", _x("kmsKeyId", kms), "\n"]
        parts += ["            ", _x("multiAttachEnabled", bool(v.get("multi_attach"))), "\n"]
        if v.get("throughput") is not None:
            parts += ["            ", _x("throughput", v["throughput"]), "\n"]
        parts.append("        </item>\n")
        return "".join(parts)

    # ---- DescribeVolumesModifications

    def do_DescribeVolumesModifications(self, params, principal, region):
        ids = _indexed(params, "VolumeId")
        limit = self._max_results(params, 5, 500)
        pred = _filter_pred(_filters(params), MOD_FILTERS, tags_of=lambda m: {})
        acct = self.sim.account_of(principal)
        with self.sim.lock:
            now = self.sim.now()
            if ids:
                self._check_volume_ids(ids, region, acct)
                for vid in ids:
                    if not self.sim.modifications.get(vid):
                        raise ApiError("InvalidVolumeModification.NotFound",
                                       "Modification for volume '%s' does not exist." % vid)
                views = [self.sim.mod_view(self.sim.modifications[v][-1], now) for v in dict.fromkeys(ids)]
                items = [m for m in views if pred(m)]
                token = None
            else:
                region_ids = [v for v in self.sim.account_state(acct).by_region.get(region, [])
                              if v in self.sim.modifications]
                scope = self._token_scope(region, acct)
                start = self._token_start(params, "DescribeVolumesModifications", scope)

                def get(vid):
                    return self.sim.mod_view(self.sim.modifications[vid][-1], now)
                items, token = self._page(region_ids, get, pred, start, limit,
                                          "DescribeVolumesModifications", scope)
        body = "".join(self._mod_xml(m, "        ", "item") for m in items)
        out = ("    <volumeModificationSet>\n%s    </volumeModificationSet>\n" % body) if body \
            else "    <volumeModificationSet/>\n"
        if token:
            out += "    <nextToken>%s</nextToken>\n" % token
        return out

    @staticmethod
    def _mod_xml(m, indent, tag):
        o, t = m["original"], m["target"]
        fields = [("volumeId", m["volume_id"]), ("modificationState", m["state"]),
                  ("statusMessage", m.get("status_message")),
                  ("targetSize", t["size"]), ("targetIops", t.get("iops")),
                  ("targetVolumeType", t["type"]), ("targetThroughput", t.get("throughput")),
                  ("targetMultiAttachEnabled", False),
                  ("originalSize", o["size"]), ("originalIops", o.get("iops")),
                  ("originalVolumeType", o["type"]), ("originalThroughput", o.get("throughput")),
                  ("originalMultiAttachEnabled", False),
                  ("progress", m["progress"]),
                  ("startTime", fmt_time(parse_time(m["start_time"]), millis=True)),
                  ("endTime", fmt_time(parse_time(m["end_time"]), millis=True) if m.get("end_time") else None)]
        inner = "".join("%s    %s\n" % (indent, _x(k, v)) for k, v in fields if v is not None)
        return "%s<%s>\n%s%s</%s>\n" % (indent, tag, inner, indent, tag)

    # ---- ModifyVolume

    def do_ModifyVolume(self, params, principal, region):
        vid = params.get("VolumeId")
        if not vid:
            raise ApiError("MissingParameter", "The request must contain the parameter VolumeId")
        self._not_foreign(vid, principal)
        ok, result = self.sim.ec2_modify_volume(region, vid, params, principal)
        if not ok:
            raise ApiError(result["code"], result["message"], result.get("status", 400))
        return self._mod_xml(result, "    ", "volumeModification")

    def _not_foreign(self, vid, principal):
        """Another account's volume is, for this caller, a volume that does not exist."""
        vol = self.sim.volumes.get(vid)
        if vol is not None and self.sim.owner_of(vol) != self.sim.account_of(principal):
            raise ApiError("InvalidVolume.NotFound", "The volume '%s' does not exist." % vid)

    # ---- DeleteVolume (an attached volume is VolumeInUse: there is no DetachVolume here;
    # `ebssim ctl delete-volume` detaches and deletes, as an operator in the console would)

    def do_DeleteVolume(self, params, principal, region):
        vid = params.get("VolumeId")
        if not vid:
            raise ApiError("MissingParameter", "The request must contain the parameter VolumeId")
        self._not_foreign(vid, principal)
        self.sim.delete_volume(region, vid)
        return "    <return>true</return>\n"

    # ---- CreateTags

    def do_CreateTags(self, params, principal, region):
        ids = _indexed(params, "ResourceId")
        if not ids:
            raise ApiError("MissingParameter", "The request must contain the parameter resourceIdSet")
        keys = {}
        for k, v in params.items():
            m = re.match(r"Tag\.(\d+)\.(Key|Value)$", k)
            if m:
                keys.setdefault(int(m.group(1)), {})[m.group(2)] = v
        tags = [(d.get("Key"), d.get("Value", "")) for _, d in sorted(keys.items())]
        if not tags or any(not k for k, _ in tags):
            raise ApiError("MissingParameter", "The request must contain the parameter tagSet")
        acct = self.sim.account_of(principal)
        with self.sim.lock:
            for rid in ids:
                if rid.startswith("vol-"):
                    self._check_volume_ids([rid], region, acct)
                elif rid.startswith("i-"):
                    inst = self.sim.instances.get(rid)
                    if inst is None or inst["region"] != region or self.sim.owner_of(inst) != acct:
                        raise ApiError("InvalidInstanceID.NotFound",
                                       "The instance ID '%s' does not exist" % rid)
                else:
                    raise ApiError("InvalidID", 'The ID \'%s\' is not valid' % rid)
            for rid in ids:
                obj = self.sim.volumes.get(rid) or self.sim.instances.get(rid)
                obj.setdefault("tags", {})
                for k, v in tags:
                    obj["tags"][k] = v
        return "    <return>true</return>\n"

    # ---- DescribeInstances

    def do_DescribeInstances(self, params, principal, region):
        ids = _indexed(params, "InstanceId")
        limit = self._max_results(params, 5, 1000)
        if ids and limit is not None:
            raise ApiError("InvalidParameterCombination",
                           "The parameter instancesSet cannot be used with the parameter maxResults")
        pred = _filter_pred(_filters(params), INSTANCE_FILTERS)
        insts = self.sim.instances
        acct = self.sim.account_of(principal)
        with self.sim.lock:
            if ids:
                for iid in ids:
                    if not re.fullmatch(r"i-[0-9a-f]{8}([0-9a-f]{9})?", iid):
                        raise ApiError("InvalidInstanceID.Malformed",
                                       'Invalid id: "%s" (expecting "i-...")' % iid)
                    if iid not in insts or insts[iid]["region"] != region or \
                            self.sim.owner_of(insts[iid]) != acct:
                        raise ApiError("InvalidInstanceID.NotFound",
                                       "The instance ID '%s' does not exist" % iid)
                items = [insts[i] for i in dict.fromkeys(ids) if pred(insts[i])]
                token = None
            else:
                scope = self._token_scope(region, acct)
                start = self._token_start(params, "DescribeInstances", scope)
                items, token = self._page(self.sim.account_state(acct).instances_by_region.get(region, []), insts.get,
                                          pred, start, limit, "DescribeInstances", scope)
            body = "".join(self._reservation_xml(i) for i in items)
        out = ("    <reservationSet>\n%s    </reservationSet>\n" % body) if body else "    <reservationSet/>\n"
        if token:
            out += "    <nextToken>%s</nextToken>\n" % token
        return out

    def _reservation_xml(self, inst):
        iid = inst["instance_id"]
        state = inst.get("state", "running")
        suffix = iid[2:].ljust(17, "0")[:17]
        ip = "10.%d.%d.%d" % (int(suffix[0:2], 16) % 256, int(suffix[2:4], 16) % 256,
                              int(suffix[4:6], 16) % 254 + 1)
        dns = inst.get("private_dns_name") or ("ip-%s.%s" % (ip.replace(".", "-"),
                                                             "ec2.internal" if inst["region"] == "us-east-1"
                                                             else inst["region"] + ".compute.internal"))
        i8 = " " * 16
        lines = ["        <item>\n",
                 "            ", _x("reservationId", "r-" + suffix), "\n",
                 "            ", _x("ownerId", self.sim.owner_of(inst)), "\n",
                 "            <groupSet/>\n",
                 "            <instancesSet>\n",
                 "                <item>\n"]
        fields = [("instanceId", iid), ("imageId", inst.get("image_id", "ami-0abcdef1234567890"))]
        lines += ["%s    %s\n" % (i8, _x(k, v)) for k, v in fields]
        lines.append("%s    <instanceState>%s%s</instanceState>\n" % (
            i8, _x("code", INSTANCE_STATE_CODES.get(state, 16)), _x("name", state)))
        fields = [("privateDnsName", dns), ("dnsName", ""), ("amiLaunchIndex", 0),
                  ("instanceType", inst.get("instance_type", "m5.large")),
                  ("launchTime", fmt_time(parse_time(inst.get("launch_time") or "2026-01-01T00:00:00Z"),
                                          millis=True))]
        lines += ["%s    %s\n" % (i8, _x(k, v)) for k, v in fields]
        lines.append("%s    <placement>%s<groupName/>%s</placement>\n" % (
            i8, _x("availabilityZone", inst.get("az", "")), _x("tenancy", "default")))
        lines.append("%s    <monitoring><state>disabled</state></monitoring>\n" % i8)
        lines.append("%s    %s\n" % (i8, _x("privateIpAddress", ip)))
        lines.append("%s    %s\n" % (i8, _x("architecture", "x86_64")))
        lines.append("%s    %s\n" % (i8, _x("rootDeviceType", "ebs")))
        lines.append("%s    %s\n" % (i8, _x("rootDeviceName", "/dev/xvda")))
        bdm = [(a.get("device"), v) for v in (self.sim.volumes[x] for x in self.sim.attached_volumes(iid))
               for a in v.get("attachments", []) if a.get("instance_id") == iid]
        if bdm:
            lines.append("%s    <blockDeviceMapping>\n" % i8)
            for dev, v in bdm:
                att = next(a for a in v["attachments"] if a.get("instance_id") == iid)
                lines.append("%s        <item>%s<ebs>%s%s%s%s</ebs></item>\n" % (
                    i8, _x("deviceName", dev), _x("volumeId", v["volume_id"]),
                    _x("status", att.get("state", "attached")),
                    _x("attachTime", fmt_time(parse_time(att["attach_time"]), millis=True)
                       if att.get("attach_time") else None),
                    _x("deleteOnTermination", bool(att.get("delete_on_termination")))))
            lines.append("%s    </blockDeviceMapping>\n" % i8)
        else:
            lines.append("%s    <blockDeviceMapping/>\n" % i8)
        tags = inst.get("tags") or {}
        if tags:
            lines.append("%s    <tagSet>\n" % i8)
            for k, v in tags.items():
                lines.append("%s        <item>%s%s</item>\n" % (i8, _x("key", k), _x("value", v)))
            lines.append("%s    </tagSet>\n" % i8)
        lines += ["                </item>\n", "            </instancesSet>\n", "        </item>\n"]
        return "".join(lines)

    # ---- DescribeRegions

    def do_DescribeRegions(self, params, principal, region):
        names = _indexed(params, "RegionName") or sorted(
            self.sim.account_state(self.sim.account_of(principal)).regions)
        body = "".join("        <item>%s%s%s</item>\n" % (
            _x("regionName", r), _x("regionEndpoint", "ec2.%s.amazonaws.com" % r),
            _x("optInStatus", "opt-in-not-required")) for r in names)
        return "    <regionInfo>\n%s    </regionInfo>\n" % body


# =========================================================================== CloudWatch


class CloudWatchApp(ServiceApp):
    service = "monitoring"
    iam_prefix = "cloudwatch"
    TARGET = "GraniteServiceVersion20100801."

    def parse(self, req):
        target = req.headers.get("x-amz-target")
        if target:
            if not target.startswith(self.TARGET):
                raise ApiError("UnknownOperationException", "Unknown operation %s" % target, 400)
            try:
                params = json.loads(req.body or b"{}")
            except ValueError:
                raise ApiError("SerializationException", "Start of structure or map found where not expected.", 400)
            return target[len(self.TARGET):], params, "json"
        params = _form(req)
        return params.get("Action"), _unflatten(params), "query"

    def auth_error(self, af, proto):
        return _auth_error_json(af) if proto == "json" else _auth_error_query(af)

    def throttle_error(self, proto):
        return ApiError("ThrottlingException" if proto == "json" else "Throttling", "Rate exceeded",
                        400, query_code="Throttling")

    def server_error(self, proto):
        return ApiError("InternalServiceFault" if proto == "json" else "InternalServiceError",
                        "Internal service error", 500, sender=False, query_code="InternalServiceError")

    def denied(self, principal, perm, region, params, proto):
        return ApiError("AccessDeniedException" if proto == "json" else "AccessDenied",
                        "User: %s is not authorized to perform: %s because no identity-based policy "
                        "allows the %s action" % (principal["arn"], perm, perm), 403,
                        query_code="AccessDenied")

    def run(self, action, params, principal, region, req, proto):
        if action != "GetMetricData":
            if proto == "json":
                raise ApiError("UnknownOperationException", "Unknown operation %s" % action)
            raise ApiError("InvalidAction", "Could not find operation %s for version 2010-08-01" % action)
        return self.apis.get_metric_data(region, params, self.sim.account_of(principal))

    def render_ok(self, action, body, request_id, proto):
        if proto == "json":
            return Response(200, {"Content-Type": "application/x-amz-json-1.0",
                                  "x-amzn-RequestId": request_id}, _cw_json(body))
        return Response(200, {"Content-Type": "text/xml", "x-amzn-RequestId": request_id},
                        _cw_xml(body, request_id))

    def render_error(self, err, request_id, proto):
        if proto == "json":
            headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": request_id}
            if err.query_code:
                headers["x-amzn-query-error"] = "%s;%s" % (err.query_code, "Sender" if err.sender else "Receiver")
            resp = Response(err.status, headers, json.dumps({"__type": err.code, "message": err.message}))
        else:
            resp = Response(err.status, {"Content-Type": "text/xml", "x-amzn-RequestId": request_id},
                            _query_error_xml(CW_NS, err, request_id))
        resp.error_code = err.code
        return resp


def _auth_error_json(af):
    k = af.kind
    if k == "missing":
        return ApiError("MissingAuthenticationTokenException", "Missing Authentication Token", 403)
    if k == "malformed":
        return ApiError("IncompleteSignatureException", af.message, 400)
    if k in ("unknown_key", "invalid_token"):
        return ApiError("UnrecognizedClientException", "The security token included in the request is invalid.", 403)
    if k == "expired_token":
        return ApiError("ExpiredTokenException", "The security token included in the request is expired", 403)
    return ApiError("InvalidSignatureException", af.message, 403)


def _auth_error_query(af):
    k = af.kind
    if k == "missing":
        return ApiError("MissingAuthenticationToken", "Request is missing Authentication Token", 403)
    if k == "malformed":
        return ApiError("IncompleteSignature", af.message, 400)
    if k in ("unknown_key", "invalid_token"):
        return ApiError("InvalidClientTokenId", "The security token included in the request is invalid.", 403)
    if k == "expired_token":
        return ApiError("ExpiredToken", "The security token included in the request is expired", 403)
    return ApiError("SignatureDoesNotMatch", af.message, 403)


def _query_error_xml(ns, err, request_id):
    return ('%s<ErrorResponse xmlns="%s">\n  <Error>\n    <Type>%s</Type>\n    <Code>%s</Code>\n'
            '    <Message>%s</Message>\n  </Error>\n  <RequestId>%s</RequestId>\n</ErrorResponse>\n'
            % (XML_DECL, ns, "Sender" if err.sender else "Receiver", escape(err.code),
               escape(err.message), request_id))


def _cw_json(body):
    """json.dumps(body) of a GetMetricData answer, byte for byte, without the encoder's
    per-number work: the timestamps of a series are usually those of the previous one, and a
    value's text is made once per distinct value in its series."""
    rep = float.__repr__
    last_ts = [None, None]

    def numbers(key, vals):
        if not vals:
            return "[]"
        if key == "Timestamps" and last_ts[0] == vals:
            return last_ts[1]
        kinds = set(map(type, vals))
        if kinds == {int}:
            out = "[" + ", ".join(map(int.__repr__, vals)) + "]"
        elif kinds == {float} and all(v - v == 0 for v in set(vals)):   # finite: json uses repr
            texts = {v: rep(v) for v in set(vals)}
            # 0.0 and -0.0 are one key but two texts: zeros are spelled one by one
            out = "[" + ", ".join([texts[v] if v else rep(v) for v in vals]) + "]"
        else:
            out = json.dumps(vals)
        if key == "Timestamps":
            last_ts[0], last_ts[1] = vals, out
        return out

    def result(r):
        if not isinstance(r, dict):
            return json.dumps(r)
        return "{" + ", ".join("%s: %s" % (json.dumps(k), numbers(k, v) if k in ("Timestamps", "Values")
                                           and isinstance(v, list) else json.dumps(v))
                               for k, v in r.items()) + "}"

    def field(k, v):
        if k == "MetricDataResults" and isinstance(v, list):
            return "[" + ", ".join(map(result, v)) + "]"
        return json.dumps(v)
    return "{" + ", ".join("%s: %s" % (json.dumps(k), field(k, v)) for k, v in body.items()) + "}"


def _cw_xml(body, request_id):
    out = [XML_DECL, '<GetMetricDataResponse xmlns="%s">\n  <GetMetricDataResult>\n' % CW_NS]
    results = body["MetricDataResults"]
    if results:
        out.append("    <MetricDataResults>\n")
        for r in results:
            out.append("      <member>\n")
            out.append("        %s\n        %s\n" % (_x("Id", r["Id"]), _x("Label", r.get("Label", ""))))
            if r["Timestamps"]:
                out.append("        <Timestamps>\n")
                out += ["          <member>%s</member>\n" % fmt_time(t) for t in r["Timestamps"]]
                out.append("        </Timestamps>\n")
                out.append("        <Values>\n")
                out += ["          <member>%s</member>\n" % _fmt_value(v) for v in r["Values"]]
                out.append("        </Values>\n")
            else:
                out.append("        <Timestamps/>\n        <Values/>\n")
            out.append("        %s\n" % _x("StatusCode", r["StatusCode"]))
            if r.get("Messages"):
                out.append("        <Messages>\n")
                for m in r["Messages"]:
                    out.append("          <member>%s%s</member>\n" % (_x("Code", m["Code"]), _x("Value", m["Value"])))
                out.append("        </Messages>\n")
            out.append("      </member>\n")
        out.append("    </MetricDataResults>\n")
    else:
        out.append("    <MetricDataResults/>\n")
    if body.get("NextToken"):
        out.append("    %s\n" % _x("NextToken", body["NextToken"]))
    out.append("    <Messages/>\n")
    out.append("  </GetMetricDataResult>\n  <ResponseMetadata>\n    <RequestId>%s</RequestId>\n"
               "  </ResponseMetadata>\n</GetMetricDataResponse>\n" % request_id)
    return "".join(out)


# ---- GetMetricData logic (protocol-neutral)

MAX_QUERIES = 500
MAX_POINTS = 100800
ID_RE = re.compile(r"^[a-z][a-zA-Z0-9_]*$")


def _retention_s(period):
    if period < 60:
        return 3 * 3600
    if period < 300:
        return 15 * 86400
    if period < 3600:
        return 63 * 86400
    return 455 * 86400


def _round_start(start, now):
    age = now - start
    step = 60 if age <= 15 * 86400 else 300 if age <= 63 * 86400 else 3600
    return math.floor(start / step) * step


class _ExprError(Exception):
    pass


class _Expr:
    """Tiny metric-math evaluator: ids, numbers, + - * /, parentheses, PERIOD(x),
    SUM/AVG/MIN/MAX([..]), ABS(x), FILL(x, n).  Series are {timestamp: value}."""

    TOKEN = re.compile(r"\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(.))")

    def __init__(self, text, env, periods):
        self.toks = []
        for num, name, op in self.TOKEN.findall(text):
            if num:
                self.toks.append(("num", float(num)))
            elif name:
                self.toks.append(("name", name))
            elif op.strip():
                self.toks.append(("op", op))
        self.pos = 0
        self.env = env
        self.periods = periods

    def peek(self):
        return self.toks[self.pos] if self.pos < len(self.toks) else (None, None)

    def take(self, kind=None, value=None):
        tok = self.peek()
        if tok[0] is None or (kind and tok[0] != kind) or (value and tok[1] != value):
            raise _ExprError("Syntax error in expression near token %d" % self.pos)
        self.pos += 1
        return tok

    def parse(self):
        v = self.expr()
        if self.pos != len(self.toks):
            raise _ExprError("Unexpected token in expression")
        return v

    def expr(self):
        v = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            v = self.binop(v, self.term(), op)
        return v

    def term(self):
        v = self.unary()
        while self.peek() in (("op", "*"), ("op", "/")):
            op = self.take()[1]
            v = self.binop(v, self.unary(), op)
        return v

    def unary(self):
        if self.peek() == ("op", "-"):
            self.take()
            return self.binop(-1.0, self.unary(), "*")
        return self.atom()

    def atom(self):
        kind, val = self.peek()
        if kind == "num":
            self.take()
            return val
        if kind == "op" and val == "(":
            self.take()
            v = self.expr()
            self.take("op", ")")
            return v
        if kind == "name":
            self.take()
            if self.peek() == ("op", "("):
                return self.call(val.upper())
            if val not in self.env:
                raise _ExprError("Unrecognized metric id %s" % val)
            return self.env[val]
        raise _ExprError("Syntax error in expression")

    def call(self, fn):
        self.take("op", "(")
        if fn in ("SUM", "AVG", "MIN", "MAX") and self.peek() == ("op", "["):
            self.take()
            items = [self.expr()]
            while self.peek() == ("op", ","):
                self.take()
                items.append(self.expr())
            self.take("op", "]")
            self.take("op", ")")
            return self.aggregate(fn, items)
        if fn == "PERIOD":
            kind, name = self.take("name")
            self.take("op", ")")
            if name not in self.periods:
                raise _ExprError("Unrecognized metric id %s" % name)
            return float(self.periods[name])
        args = [self.expr()]
        while self.peek() == ("op", ","):
            self.take()
            args.append(self.expr())
        self.take("op", ")")
        if fn == "ABS" and len(args) == 1:
            return self.binop(args[0], None, "abs")
        if fn == "FILL" and len(args) == 2 and isinstance(args[0], dict):
            return dict(args[0])
        if fn in ("SUM", "AVG", "MIN", "MAX") and len(args) == 1 and isinstance(args[0], dict):
            vals = list(args[0].values())
            if not vals:
                return {}
            agg = {"SUM": sum, "AVG": lambda v: sum(v) / len(v), "MIN": min, "MAX": max}[fn](vals)
            return agg
        raise _ExprError("Unsupported function %s" % fn)

    @staticmethod
    def aggregate(fn, items):
        series = [i for i in items if isinstance(i, dict)]
        keys = set()
        for s in series:
            keys |= set(s)
        out = {}
        for k in keys:
            vals = [s[k] for s in series if k in s]
            out[k] = {"SUM": sum(vals), "AVG": sum(vals) / len(vals), "MIN": min(vals),
                      "MAX": max(vals)}[fn]
        return out

    @staticmethod
    def binop(a, b, op):
        def f(x, y):
            if op == "+":
                return x + y
            if op == "-":
                return x - y
            if op == "*":
                return x * y
            if op == "/":
                return x / y if y else None
            return abs(x)
        if op == "abs":
            return {k: abs(v) for k, v in a.items()} if isinstance(a, dict) else abs(a)
        if isinstance(a, dict) and isinstance(b, dict):
            out = {k: f(a[k], b[k]) for k in a if k in b}
        elif isinstance(a, dict):
            out = {k: f(v, b) for k, v in a.items()}
        elif isinstance(b, dict):
            out = {k: f(a, v) for k, v in b.items()}
        else:
            return f(a, b)
        return {k: v for k, v in out.items() if v is not None}


def _as_bool(v, default=True):
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    return str(v).lower() == "true"


def get_metric_data(sim, metrics, region, p, account=None):
    """GetMetricData for `account` (default the base one): another account's volume has no data."""
    account = account or sim.account
    queries = p.get("MetricDataQueries")
    if not isinstance(queries, list) or not queries:
        raise ApiError("ValidationError", "1 validation error detected: Value null at "
                       "'metricDataQueries' failed to satisfy constraint: Member must not be null")
    if len(queries) > MAX_QUERIES:
        raise ApiError("ValidationError", "1 validation error detected: Value at 'metricDataQueries' "
                       "failed to satisfy constraint: Member must have length less than or equal to %d"
                       % MAX_QUERIES)
    if p.get("StartTime") is None or p.get("EndTime") is None:
        raise ApiError("ValidationError", "1 validation error detected: StartTime and EndTime are required")
    try:
        start = parse_time(p["StartTime"])
        end = parse_time(p["EndTime"])
    except (ValueError, TypeError):
        raise ApiError("InvalidParameterValue", "StartTime and EndTime must be timestamps")
    if start >= end:
        raise ApiError("InvalidParameterValue", "The parameter StartTime must be less than the parameter EndTime.")
    scan = p.get("ScanBy") or "TimestampDescending"
    if scan not in ("TimestampDescending", "TimestampAscending"):
        raise ApiError("InvalidParameterValue", "The parameter ScanBy must be TimestampDescending or TimestampAscending.")
    max_dp = int(p.get("MaxDatapoints") or MAX_POINTS)
    now = sim.now()
    seen = set()
    total_points = 0
    for i, q in enumerate(queries):
        qid = q.get("Id")
        if not qid or not ID_RE.match(qid):
            raise ApiError("ValidationError", "The value %s for parameter MetricDataQueries.member.%d.Id "
                           "is invalid: it must start with a lower-case letter and contain only letters, "
                           "digits and underscores." % (qid, i + 1))
        if qid in seen:
            raise ApiError("ValidationError", "The values for parameter id in MetricDataQueries are not unique.")
        seen.add(qid)
        ms = q.get("MetricStat")
        if bool(ms) == bool(q.get("Expression")):
            raise ApiError("ValidationError", "Exactly one element of the MetricStat or the Expression "
                           "element must be specified in MetricDataQueries.member.%d" % (i + 1))
        period = int((ms or {}).get("Period") or q.get("Period") or 60)
        if period <= 0 or (period >= 60 and period % 60) or (period < 60 and period not in (1, 5, 10, 30)):
            raise ApiError("InvalidParameterValue", "The parameter MetricDataQueries.member.%d.MetricStat.Period "
                           "must be 1, 5, 10, 30 or a multiple of 60." % (i + 1))
        if ms and not ms.get("Stat"):
            raise ApiError("ValidationError", "MetricDataQueries.member.%d.MetricStat.Stat is required" % (i + 1))
        total_points += int(math.ceil((end - start) / period))
    if total_points > MAX_POINTS:
        raise ApiError("InvalidParameterValue", "You have requested up to {:,} datapoints, which exceeds the "
                       "limit of {:,}. You may reduce the datapoints requested by increasing Period, or "
                       "decreasing the time range.".format(total_points, MAX_POINTS))
    cols = {}      # query id -> (ascending timestamps, values) of a MetricStat query
    periods = {}
    labels = {}
    with sim.lock:
        for q in queries:
            ms = q.get("MetricStat")
            if not ms:
                continue
            metric = ms.get("Metric") or {}
            period = int(ms.get("Period"))
            periods[q["Id"]] = period
            labels[q["Id"]] = q.get("Label") or metric.get("MetricName", q["Id"])
            dims = {d.get("Name"): d.get("Value") for d in (metric.get("Dimensions") or [])}
            vid = dims.get("VolumeId")
            ts, vs = [], []
            vol = sim.volumes.get(vid)
            if (metric.get("Namespace") == "AWS/EBS" and vol is not None and vol["region"] == region
                    and set(dims) == {"VolumeId"} and sim.owner_of(vol) == account):
                s0 = _round_start(start, now)
                oldest = now - _retention_s(period)
                ts, vs = metrics.series_columns(vid, metric.get("MetricName"), ms["Stat"], s0, end, period)
                if ts and ts[0] < oldest:   # ascending: keep t >= oldest
                    cut = bisect.bisect_left(ts, oldest)
                    ts, vs = ts[cut:], vs[cut:]
            cols[q["Id"]] = (ts, vs)
    # The expression evaluator reads series as {timestamp: value}; most requests have no
    # expression, and then the columns are used as they are.
    has_expr = any(q.get("Expression") for q in queries)
    series = {qid: dict(zip(ts, vs)) for qid, (ts, vs) in cols.items()} if has_expr else {}
    # Expressions may use each other in any order: evaluate until nothing new resolves.
    pending = [q for q in queries if q.get("Expression")]
    while pending:
        progress, errors, left = False, [], []
        for q in pending:
            labels[q["Id"]] = q.get("Label") or q["Id"]
            try:
                val = _Expr(q["Expression"], series, periods).parse()
            except (_ExprError, ZeroDivisionError, TypeError) as err:
                errors.append((q, err))
                left.append(q)
                continue
            if not isinstance(val, dict):
                ref = next(iter(series.values()), {})
                val = {t: val for t in ref}
            series[q["Id"]] = val
            periods[q["Id"]] = int(q.get("Period") or next(iter(periods.values()), 60))
            progress = True
        if not progress:
            q, err = errors[0]
            raise ApiError("ValidationError", "Error in expression '%s': %s" % (q["Id"], err))
        pending = left

    returned = [q for q in queries if _as_bool(q.get("ReturnData"), True)]
    # Pagination over (query index, point offset) with at most MaxDatapoints per page.
    qi, off = 0, 0
    if p.get("NextToken"):
        tok = _tok_decode(p["NextToken"])
        if not isinstance(tok, dict) or "q" not in tok:
            raise ApiError("InvalidNextToken", "The service couldn't process the pagination token.")
        qi, off = int(tok["q"]), int(tok["o"])
    results = []
    budget = max_dp
    next_token = None
    for idx, q in enumerate(returned):
        qid = q["Id"]
        r = {"Id": qid, "Label": labels.get(qid, qid), "Timestamps": [], "Values": [],
             "StatusCode": "Complete"}
        if idx < qi:
            continue
        if not has_expr:
            ts, vs = cols.get(qid, ([], []))   # unique ascending timestamps: sorted(dict)'s order
            if scan == "TimestampDescending":
                ts, vs = ts[::-1], vs[::-1]
        else:
            data = series.get(qid, {})
            ts = sorted(data, reverse=(scan == "TimestampDescending"))
            vs = [data[t] for t in ts]
        begin = off if idx == qi else 0
        avail = ts[begin:]
        take = avail[:budget]
        budget -= len(take)
        r["Timestamps"] = take
        r["Values"] = vs[begin:][:len(take)]
        if len(take) < len(avail):
            r["StatusCode"] = "PartialData"
            next_token = _tok_encode({"q": idx, "o": begin + len(take)})
            results.append(r)
            for later in returned[idx + 1:]:
                results.append({"Id": later["Id"], "Label": labels.get(later["Id"], later["Id"]),
                                "Timestamps": [], "Values": [], "StatusCode": "PartialData"})
            break
        results.append(r)
    out = {"MetricDataResults": results, "Messages": []}
    if next_token:
        out["NextToken"] = next_token
    for r in results:
        tss = r["Timestamps"]
        # sorted ints below 1e15 (every MetricStat timestamp) are what _num(float(t)) gives
        if tss and (set(map(type, tss)) != {int} or max(abs(tss[0]), abs(tss[-1])) >= 10 ** 15):
            r["Timestamps"] = [_num(float(t)) for t in tss]
        r["Values"] = _round6(r["Values"])
    return out


def _round6(vals):
    """[float(round(v, 6)) for v in vals] (no float noise like 1e9-2e-7), rounding each distinct
    value once.  A zero rounds to itself (0.0 and -0.0 are one key, so they are not looked up)."""
    uniq = set(vals)
    if not all(type(v) is float and v == v for v in uniq):
        return [float(round(v, 6)) for v in vals]
    table = {v: float(round(v, 6)) for v in uniq}
    return [table[v] if v else v for v in vals]


# =========================================================================== Pricing


class PriceBook:
    """Every *.json in the pricing directory (default: the repository's pricing/), each a
    GetProducts response; loaded on first use."""

    def __init__(self, directory):
        self.dir = directory
        self._items = None
        self.names = {}  # service code -> attribute names as AWS spells them

    def items(self):
        if self._items is None:
            items = []
            for path in sorted(glob.glob(os.path.join(self.dir, "*.json"))):
                try:
                    with open(path) as f:
                        doc = json.load(f)
                except (OSError, ValueError):
                    continue
                for raw in doc.get("PriceList", []) if isinstance(doc, dict) else []:
                    text = raw if isinstance(raw, str) else json.dumps(raw)
                    try:
                        item = json.loads(text)
                    except ValueError:
                        continue
                    product = item.get("product", {})
                    attrs = {k.lower(): str(v) for k, v in (product.get("attributes") or {}).items()}
                    attrs.setdefault("productfamily", product.get("productFamily", ""))
                    attrs.setdefault("sku", product.get("sku", ""))
                    service = item.get("serviceCode") or attrs.get("servicecode", "")
                    self.names.setdefault(service, set()).update((product.get("attributes") or {}).keys())
                    items.append((service, attrs, text))
            self._items = items
        return self._items


class Json11App(ServiceApp):
    """A JSON 1.1 protocol service (Pricing, CloudTrail, Organizations): the action is X-Amz-Target
    after TARGET, its parameters the JSON body; the answer is the action's JSON; an error is
    {"__type", MESSAGE_KEY} with x-amzn-RequestId (CloudTrail says "message"). Throttling, server
    errors and refusals answer as Pricing and CloudTrail do (Organizations words its own)."""
    error_message_key = "Message"
    TARGET = ""              # the X-Amz-Target prefix of the service's actions
    require_object = False   # a body that is JSON but not an object is refused (Organizations)

    def parse(self, req):
        target = req.headers.get("x-amz-target", "")
        if not target.startswith(self.TARGET):
            raise ApiError("UnknownOperationException", "Unknown operation %s" % target)
        try:
            params = json.loads(req.body or b"{}")
        except ValueError:
            raise ApiError("SerializationException", "Malformed JSON body")
        if self.require_object and not isinstance(params, dict):
            raise ApiError("SerializationException", "Start of structure or map found where not expected.")
        return target[len(self.TARGET):], params, "json"

    def auth_error(self, af, proto):
        return _auth_error_json(af)

    server_error_code = "InternalErrorException"  # CloudTrail's: InternalServerError

    def throttle_error(self, proto):
        return ApiError("ThrottlingException", "Rate exceeded", 400)

    def server_error(self, proto):
        return ApiError(self.server_error_code, "An internal error occurred", 500, sender=False)

    def denied(self, principal, perm, region, params, proto):
        return ApiError("AccessDeniedException", "User: %s is not authorized to perform: %s because no "
                        "identity-based policy allows the %s action" % (principal["arn"], perm, perm), 400)

    def render_ok(self, action, body, request_id, proto):
        return Response(200, {"Content-Type": "application/x-amz-json-1.1",
                              "x-amzn-RequestId": request_id}, json.dumps(body))

    def render_error(self, err, request_id, proto):
        resp = Response(err.status, {"Content-Type": "application/x-amz-json-1.1",
                                     "x-amzn-RequestId": request_id},
                        json.dumps({"__type": err.code, self.error_message_key: err.message}))
        resp.error_code = err.code
        return resp


class PricingApp(Json11App):
    service = "pricing"
    iam_prefix = "pricing"
    TARGET = "AWSPriceListService."

    def check_region(self, region, proto):
        if region not in PRICING_REGIONS:
            raise ApiError("InvalidSignatureException", "Credential should be scoped to a valid region. ", 403)

    def run(self, action, p, principal, region, req, proto):
        book = self.apis.pricing.items()
        if action == "DescribeServices":
            codes = sorted({s for s, _, _ in book})
            if p.get("ServiceCode"):
                codes = [c for c in codes if c == p["ServiceCode"]]
            return {"Services": [{"ServiceCode": c, "AttributeNames": sorted(self.apis.pricing.names.get(c, ()))}
                                 for c in codes], "FormatVersion": "aws_v1"}
        if action == "GetAttributeValues":
            code, name = p.get("ServiceCode"), (p.get("AttributeName") or "").lower()
            vals = sorted({a[name] for s, a, _ in book if s == code and name in a})
            return {"AttributeValues": [{"Value": v} for v in vals]}
        if action != "GetProducts":
            raise ApiError("UnknownOperationException", "Unknown operation %s" % action)
        code = p.get("ServiceCode")
        if not code:
            raise ApiError("InvalidParameterException", "Input ServiceCode is required")
        limit = p.get("MaxResults", 100)
        try:
            limit = int(limit)
        except (TypeError, ValueError):
            raise ApiError("InvalidParameterException", "MaxResults must be an integer")
        if not 1 <= limit <= 100:
            raise ApiError("InvalidParameterException",
                           "1 validation error detected: Value '%d' at 'maxResults' failed to satisfy "
                           "constraint: Member must have value between 1 and 100" % limit)
        fmt = p.get("FormatVersion", "aws_v1")
        if fmt != "aws_v1":
            raise ApiError("InvalidParameterException", "Input FormatVersion %s is not valid" % fmt)
        filters = []
        for f in p.get("Filters") or []:
            ftype = f.get("Type", "TERM_MATCH")
            if ftype not in ("TERM_MATCH", "EQUALS", "CONTAINS", "ANY_OF", "NONE_OF"):
                raise ApiError("InvalidParameterException", "Invalid filter type %s" % ftype)
            if not f.get("Field") or f.get("Value") is None:
                raise ApiError("InvalidParameterException", "Filters must have Field and Value")
            filters.append((ftype, f["Field"].lower(), str(f["Value"])))
        fkey = json.dumps([code, filters])
        start = 0
        if p.get("NextToken"):
            tok = _tok_decode(p["NextToken"])
            if not isinstance(tok, dict) or tok.get("k") != fkey:
                raise ApiError("InvalidNextTokenException", "The pagination token is invalid. Please "
                               "check the token and try again.")
            start = int(tok["i"])

        def match(attrs):
            for ftype, field, value in filters:
                have = attrs.get(field)
                if ftype in ("TERM_MATCH", "EQUALS"):
                    if have is None or have.lower() != value.lower():
                        return False
                elif ftype == "CONTAINS":
                    if have is None or value.lower() not in have.lower():
                        return False
                elif ftype == "ANY_OF":
                    if have is None or have.lower() not in [v.strip().lower() for v in value.split(",")]:
                        return False
                elif ftype == "NONE_OF":
                    if have is not None and have.lower() in [v.strip().lower() for v in value.split(",")]:
                        return False
            return True
        matched = [text for s, attrs, text in book if s == code and match(attrs)]
        page = matched[start:start + limit]
        out = {"FormatVersion": "aws_v1", "PriceList": page}
        if start + limit < len(matched):
            out["NextToken"] = _tok_encode({"k": fkey, "i": start + limit})
        return out


# =========================================================================== STS


class StsApp(ServiceApp):
    service = "sts"
    iam_prefix = "sts"
    unsigned_actions = ("AssumeRoleWithWebIdentity",)

    def parse(self, req):
        params = _form(req)
        return params.get("Action"), params, "query"

    def loggable(self, action, params):
        return {k: v for k, v in params.items()
                if k not in ("WebIdentityToken",) and not k.startswith("X-Amz-")}

    def always_allowed(self, action):
        return action == "GetCallerIdentity"

    def auth_error(self, af, proto):
        return _auth_error_query(af)

    def throttle_error(self, proto):
        return ApiError("Throttling", "Rate exceeded", 400)

    def server_error(self, proto):
        return ApiError("InternalFailure", "An internal error occurred", 500, sender=False)

    def denied(self, principal, perm, region, params, proto):
        resource = ""
        if perm == "sts:AssumeRole" and params.get("RoleArn"):
            resource = " on resource: %s" % params["RoleArn"]
        return ApiError("AccessDenied", "User: %s is not authorized to perform: %s%s"
                        % (principal["arn"], perm, resource), 403)

    def render_ok(self, action, body, request_id, proto):
        text = ('%s<%sResponse xmlns="%s">\n  <%sResult>\n%s  </%sResult>\n  <ResponseMetadata>\n'
                '    <RequestId>%s</RequestId>\n  </ResponseMetadata>\n</%sResponse>\n'
                % (XML_DECL, action, STS_NS, action, body, action, request_id, action))
        return Response(200, {"Content-Type": "text/xml", "x-amzn-RequestId": request_id}, text)

    def render_error(self, err, request_id, proto):
        resp = Response(err.status, {"Content-Type": "text/xml", "x-amzn-RequestId": request_id},
                        _query_error_xml(STS_NS, err, request_id))
        resp.error_code = err.code
        return resp

    def run(self, action, p, principal, region, req, proto):
        if action == "GetCallerIdentity":  # claimed_*: keys of a foreign-keys fault whose STS lies here too
            return "    %s\n    %s\n    %s\n" % (
                _x("Arn", principal.get("claimed_arn") or principal["arn"]), _x("UserId", principal["user_id"]),
                _x("Account", principal.get("claimed_account") or self.sim.account_of(principal)))
        if action == "AssumeRoleWithWebIdentity":
            return self.assume_role_with_web_identity(p)
        if action == "AssumeRole":
            return self.assume_role(p, principal, getattr(req, "fault", None))
        if not action:
            raise ApiError("MissingAction", "Missing Action")
        raise ApiError("InvalidAction", "Could not find operation %s for version 2011-06-15" % action)

    ROLE_ARN_RE = re.compile(r"^arn:aws[a-z-]*:iam::(\d{12}):role/(?:[\w+=,.@-]+/)*([\w+=,.@-]{1,64})$")

    def assume_role(self, p, caller, fault=None):
        """AssumeRole into a scenario account's role (accounts[].roles, or top-level roles for the
        base account): trust, external id, duration and account status as STS judges them.
        The `foreign-keys` fault (an STS that lies) answers with the requested role's ARN but
        credentials acting in the fault's `account` (default the base account); with
        `"identity": "lie"` GetCallerIdentity asked with them names the requested account too."""
        for name in ("RoleArn", "RoleSessionName"):
            if not p.get(name):
                raise ApiError("ValidationError", "1 validation error detected: Value null at '%s%s' failed "
                               "to satisfy constraint: Member must not be null" % (name[0].lower(), name[1:]))
        role_arn, session = p["RoleArn"], p["RoleSessionName"]
        if not 2 <= len(session) <= 64:
            raise ApiError("ValidationError", "1 validation error detected: Value '%s' at 'roleSessionName' "
                           "failed to satisfy constraint: Member must have length %s" % (
                               session, "less than or equal to 64" if len(session) > 64
                               else "greater than or equal to 2"))
        if not re.fullmatch(r"[\w+=,.@-]+", session):
            raise ApiError("ValidationError", "1 validation error detected: Value '%s' at 'roleSessionName' "
                           "failed to satisfy constraint: Member must satisfy regular expression pattern: "
                           "[\\w+=,.@-]*" % session)
        m = self.ROLE_ARN_RE.match(role_arn)
        if not m or len(role_arn) < 20:
            raise ApiError("ValidationError", "%s is invalid" % role_arn)
        ext = p.get("ExternalId")
        if ext is not None and not re.fullmatch(r"[\w+=,.@:/-]{2,1224}", ext):
            raise ApiError("ValidationError", "1 validation error detected: Value '%s' at 'externalId' "
                           "failed to satisfy constraint: Member must satisfy regular expression pattern: "
                           "[\\w+=,.@:/-]*" % ext)
        try:
            duration = int(p.get("DurationSeconds") or 3600)
        except ValueError:
            raise ApiError("ValidationError", "Value '%s' at 'durationSeconds' is not an integer"
                           % p.get("DurationSeconds"))
        if duration < 900:
            raise ApiError("ValidationError", "1 validation error detected: Value '%d' at 'durationSeconds' "
                           "failed to satisfy constraint: Member must have value greater than or equal "
                           "to 900" % duration)
        denied = ApiError("AccessDenied", "User: %s is not authorized to perform: sts:AssumeRole on "
                          "resource: %s" % (caller["arn"], role_arn), 403)
        account = self.sim.accounts.get(m.group(1))
        role = account.roles.get(m.group(2)) if account else None
        if role is None or account.status != "ACTIVE" or account.role_arn(role["name"]) != role_arn:
            raise denied
        caller_acct = self.sim.account_of(caller)
        names = {caller["arn"], caller.get("source_role_arn") or caller.get("role_arn")}
        trusted = any(t == "arn:aws:iam::%s:root" % caller_acct or t == caller_acct or t in names
                      for t in role["trusted"])
        if not trusted or (role["external_id"] is not None and ext != role["external_id"]):
            raise denied
        limit = int(role["max_session_duration"])
        if caller.get("temporary") and ":assumed-role/" in caller["arn"]:
            limit = min(limit, 3600)  # role chaining: sessions of at most one hour
        if duration > limit:
            raise ApiError("ValidationError", "The requested DurationSeconds exceeds the %s set for "
                           "this role." % ("1 hour session limit for roles assumed by role chaining"
                                           if limit == 3600 and limit < int(role["max_session_duration"])
                                           else "MaxSessionDuration"))
        arn_account = account
        if fault is not None and fault["kind"] == "foreign-keys":
            account = self.sim.accounts.get(str(fault.get("account") or self.sim.account))
            if account is None:
                raise ApiError("InternalFailure", "foreign-keys fault: no such scenario account", 500)
        tmp = self.sim.assume_role(caller, account, role, session, duration)
        arn = "arn:aws:sts::%s:assumed-role/%s/%s" % (arn_account.id, role["name"], session)
        if account is not arn_account and fault.get("identity") == "lie":
            tmp["claimed_account"], tmp["claimed_arn"] = arn_account.id, arn
        return ("    <AssumedRoleUser>\n      %s\n      %s\n    </AssumedRoleUser>\n"
                "    <Credentials>\n      %s\n      %s\n      %s\n      %s\n    </Credentials>\n"
                % (_x("AssumedRoleId", tmp["user_id"]), _x("Arn", arn),
                   _x("AccessKeyId", tmp["access_key_id"]), _x("SecretAccessKey", tmp["secret_access_key"]),
                   _x("SessionToken", tmp["session_token"]), _x("Expiration", fmt_time(tmp["_expires"]))))

    def assume_role_with_web_identity(self, p):
        for name in ("RoleArn", "RoleSessionName", "WebIdentityToken"):
            if not p.get(name):
                raise ApiError("ValidationError", "1 validation error detected: Value null at '%s%s' failed "
                               "to satisfy constraint: Member must not be null" % (name[0].lower(), name[1:]))
        role = next((pr for pr in self.sim.principals_by_name.values() if pr.get("role_arn") == p["RoleArn"]), None)
        if role is None:
            raise ApiError("AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity", 403)
        expected = role.get("web_identity_token")
        if expected is None:
            path = os.path.join(self.sim.state_dir, "web-identity-token")
            try:
                expected = open(path).read().strip()
            except OSError:
                expected = None
        if expected is not None and p["WebIdentityToken"].strip() != expected:
            raise ApiError("InvalidIdentityToken", "The web identity token that was passed could not be "
                           "validated by AWS. Get a new identity token from the identity provider and then "
                           "retry the request.", 400)
        duration = int(p.get("DurationSeconds") or self.apis.credential_seconds)
        if not 900 <= duration <= 43200:
            raise ApiError("ValidationError", "1 validation error detected: Value '%d' at 'durationSeconds' "
                           "failed to satisfy constraint: Member must have value between 900 and 43200" % duration)
        tmp = self.sim.add_temporary_principal(role, p["RoleSessionName"], duration)
        creds = ("      %s\n      %s\n      %s\n      %s\n" % (
            _x("SessionToken", tmp["session_token"]), _x("SecretAccessKey", tmp["secret_access_key"]),
            _x("Expiration", fmt_time(tmp["_expires"])), _x("AccessKeyId", tmp["access_key_id"])))
        return ("    %s\n    %s\n    <AssumedRoleUser>\n      %s\n      %s\n    </AssumedRoleUser>\n"
                "    <Credentials>\n%s    </Credentials>\n    %s\n"
                % (_x("SubjectFromWebIdentityToken", "system:serviceaccount:kube-system:ebsmigrate"),
                   _x("Audience", "sts.amazonaws.com"), _x("Arn", tmp["arn"]),
                   _x("AssumedRoleId", tmp["user_id"]), creds,
                   _x("Provider", "arn:aws:iam::%s:oidc-provider/oidc.eks.%s.amazonaws.com/id/EBSSIM"
                      % (self.sim.account, self.sim.default_region))))


# =========================================================================== IMDS / container


class ImdsApp:
    """IMDSv2 only: PUT /latest/api/token, then GETs with X-aws-ec2-metadata-token."""

    def __init__(self, apis):
        self.apis = apis
        self.sim = apis.sim

    def handle(self, req):
        fault = self.sim.fault("imds", req.path)
        resp = self._handle(req, fault)
        if fault and fault["kind"] in ("drop", "truncate"):
            resp.fault = fault["kind"]
        self.sim.log_request({"service": "imds", "action": "%s %s" % (req.method, req.path),
                              "params": {}, "status": resp.status, "principal": None,
                              "error_code": None if resp.status < 400 else str(resp.status)})
        return resp

    def _text(self, status, text, ctype="text/plain"):
        return Response(status, {"Content-Type": ctype}, text)

    def _handle(self, req, fault):
        if fault and fault["kind"] == "5xx":
            return self._text(500, "Internal Server Error")
        if fault and fault["kind"] == "slow":
            time.sleep(float(fault.get("delay_s") or 2))
        if req.path == "/latest/api/token":
            if req.method != "PUT":
                return self._text(405, "Method Not Allowed")
            if req.headers.get("x-forwarded-for"):
                return self._text(403, "Forbidden")
            ttl = req.headers.get("x-aws-ec2-metadata-token-ttl-seconds")
            try:
                ttl = int(ttl)
            except (TypeError, ValueError):
                return self._text(400, "Bad Request")
            if not 1 <= ttl <= 21600:
                return self._text(400, "Bad Request")
            token = base64.urlsafe_b64encode(os.urandom(42)).decode()
            with self.sim.lock:
                self.sim.imds_tokens[token] = time.time() + ttl
            return Response(200, {"Content-Type": "text/plain",
                                  "X-Aws-Ec2-Metadata-Token-Ttl-Seconds": str(ttl)}, token)
        token = req.headers.get("x-aws-ec2-metadata-token")
        with self.sim.lock:
            exp = self.sim.imds_tokens.get(token or "")
        if not token or exp is None or time.time() > exp:
            return self._text(401, "Unauthorized")
        if req.method != "GET":
            return self._text(405, "Method Not Allowed")
        principal = self.apis.role_principal("imds")
        inst = self.apis.imds_instance()
        role_name = (principal.get("role_arn") or principal["arn"]).rsplit("/", 1)[-1] if principal else None
        path = req.path
        if path in ("/latest/meta-data/iam/security-credentials/", "/latest/meta-data/iam/security-credentials"):
            if not principal:
                return self._text(404, "Not Found")
            return self._text(200, role_name)
        if path.startswith("/latest/meta-data/iam/security-credentials/"):
            if not principal or path.rsplit("/", 1)[-1] != role_name:
                return self._text(404, "Not Found")
            tmp = self.sim.add_temporary_principal(principal, "i-ebssim", self.apis.credential_seconds)
            doc = {"Code": "Success", "LastUpdated": fmt_time(time.time()), "Type": "AWS-HMAC",
                   "AccessKeyId": tmp["access_key_id"], "SecretAccessKey": tmp["secret_access_key"],
                   "Token": tmp["session_token"], "Expiration": fmt_time(tmp["_expires"])}
            return self._text(200, json.dumps(doc, indent=2), "text/plain")
        if path == "/latest/meta-data/iam/info":
            if not principal:
                return self._text(404, "Not Found")
            return self._text(200, json.dumps({"Code": "Success", "LastUpdated": fmt_time(time.time()),
                                               "InstanceProfileArn": "arn:aws:iam::%s:instance-profile/%s"
                                               % (self.sim.account, role_name),
                                               "InstanceProfileId": "AIPAEBSSIM0000000001"}, indent=2))
        region = inst.get("region", self.sim.default_region)
        az = inst.get("az") or (region + "a")
        simple = {
            "/latest/meta-data/instance-id": inst.get("instance_id", "i-0ebssim000000001"),
            "/latest/meta-data/instance-type": inst.get("instance_type", "m5.xlarge"),
            "/latest/meta-data/placement/region": region,
            "/latest/meta-data/placement/availability-zone": az,
        }
        if path in simple:
            return self._text(200, simple[path])
        if path == "/latest/dynamic/instance-identity/document":
            return self._text(200, json.dumps({
                "accountId": self.sim.account, "availabilityZone": az, "region": region,
                "instanceId": simple["/latest/meta-data/instance-id"],
                "instanceType": simple["/latest/meta-data/instance-type"],
                "architecture": "x86_64", "imageId": "ami-0abcdef1234567890",
                "pendingTime": "2026-01-01T00:00:00Z", "version": "2017-09-30"}, indent=2), "application/json")
        return self._text(404, "Not Found")


class ContainerApp:
    """EKS Pod Identity style credentials: GET with Authorization = token file contents."""

    def __init__(self, apis):
        self.apis = apis
        self.sim = apis.sim

    def handle(self, req):
        fault = self.sim.fault("container", req.path)
        resp = self._handle(req, fault)
        if fault and fault["kind"] in ("drop", "truncate"):
            resp.fault = fault["kind"]
        self.sim.log_request({"service": "container", "action": "%s %s" % (req.method, req.path),
                              "params": {}, "status": resp.status, "principal": None,
                              "error_code": None if resp.status < 400 else str(resp.status)})
        return resp

    def _handle(self, req, fault):
        if fault and fault["kind"] == "5xx":
            return Response(500, {"Content-Type": "application/json"},
                            json.dumps({"Code": "InternalError", "Message": "internal error"}))
        if req.method != "GET":
            return Response(405, {"Content-Type": "application/json"},
                            json.dumps({"Code": "MethodNotAllowed", "Message": "use GET"}))
        path = os.path.join(self.sim.state_dir, "container-token")
        try:
            expected = open(path).read().strip()
        except OSError:
            expected = self.sim.container_token
        got = (req.headers.get("authorization") or "").strip()
        if not got:
            return Response(400, {"Content-Type": "application/json"},
                            json.dumps({"Code": "MissingAuthorization",
                                        "Message": "Authorization header is required"}))
        if got != expected:
            return Response(401, {"Content-Type": "application/json"},
                            json.dumps({"Code": "AccessDeniedException",
                                        "Message": "The authorization token is not valid"}))
        principal = self.apis.role_principal("container")
        if principal is None:
            return Response(404, {"Content-Type": "application/json"},
                            json.dumps({"Code": "NotFound", "Message": "no role for this pod"}))
        tmp = self.sim.add_temporary_principal(principal, "eks-ebssim-pod", self.apis.credential_seconds)
        return Response(200, {"Content-Type": "application/json"}, json.dumps({
            "AccessKeyId": tmp["access_key_id"], "SecretAccessKey": tmp["secret_access_key"],
            "Token": tmp["session_token"], "AccountId": self.sim.account,
            "Expiration": fmt_time(tmp["_expires"])}))


# =========================================================================== facade


class AwsApis:
    def __init__(self, sim):
        self.sim = sim
        self.metrics = ebssim_metrics.MetricsModel(sim)
        self.pricing = PriceBook(sim.pricing_dir)
        self.credential_seconds = int(sim.scenario.get("temporary_credentials_s", 3600))
        self._apps = {}

    def app(self, service):
        if service not in self._apps:
            import ebssim_org
            import ebssim_s3
            import ebssim_trail
            cls = {"ec2": Ec2App, "monitoring": CloudWatchApp, "pricing": PricingApp, "sts": StsApp,
                   "imds": ImdsApp, "container": ContainerApp,
                   "cloudtrail": ebssim_trail.CloudTrailApp,
                   "organizations": ebssim_org.OrganizationsApp, "s3": ebssim_s3.S3App}[service]
            self._apps[service] = cls(self)
        return self._apps[service]

    def get_metric_data(self, region, params, account=None):
        return get_metric_data(self.sim, self.metrics, region, params, account)

    def role_principal(self, kind):
        """The principal whose temporary credentials IMDS / the container endpoint hand out:
        scenario["imds"]["principal"] / scenario["container"]["principal"], else the first
        principal with a role_arn, else "admin"."""
        spec = self.sim.scenario.get(kind) or {}
        name = spec.get("principal")
        by_name = self.sim.principals_by_name
        if name:
            return by_name.get(name)
        role = next((p for p in by_name.values() if p.get("role_arn")), None)
        return role or by_name.get("admin")

    def imds_instance(self):
        spec = self.sim.scenario.get("imds") or {}
        iid = spec.get("instance_id")
        if iid and iid in self.sim.instances:
            return self.sim.instances[iid]
        return next(iter(self.sim.instances.values()), {"region": self.sim.default_region})
