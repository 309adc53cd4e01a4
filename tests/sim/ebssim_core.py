"""ebssim core: the simulator's clock, state, servers and shared machinery.

What lives here (the AWS APIs are in ebssim_aws.py, Kubernetes in the ebssim_kube package):
  - time helpers (RFC 3339 <-> epoch seconds) and `Clock`, the sim clock: runs
    `time_scale` times faster than wall time from the scenario's start_time, plus
    whatever `ctl advance` added;
  - `CA`: a throw-away certificate authority made with the openssl CLI in the state dir
    (server certificates for 127.0.0.1/localhost, client certificates for kube users);
  - `Sim`: the whole simulated world (volumes, modifications, instances, principals),
    the EBS modification state machine, the request log, fault injection and the
    SigV4 verifier.  `Account`: one AWS account of an organization scenario (its regions,
    roles, per-region volume/instance indexes); the base account's indexes are `sim.by_region`
    and `sim.instances_by_region`, a member's volumes and instances carry `_account`;  This object is the in-process interface the kube module uses
    (see CONTRACT.md, "Shared in-process interface");
  - `HTTPServer`s: one per AWS service, one per cluster, one plain-HTTP control endpoint;
  - `serve()`: the `ebssim serve` command (`ebssim ctl` is ebssim_ctl.py, kept light).

Invariants:
  - every mutation of simulated state happens under `sim.lock` (an RLock);
  - every server binds 127.0.0.1 only, on an OS-chosen port;
  - signatures and credential expiry are judged on the *wall* clock (clients sign with
    their real clock); everything EBS does (modification progress, metrics, the 24 h
    modification window) runs on the *sim* clock;
  - volume and instance ids are unique across accounts: `sim.volumes`, `sim.instances` and
    `sim.modifications` hold every account's; who may see one is `sim.owner_of(obj)`;
  - modifications progress lazily: `sim.update()` (called on every request, every
    clock advance and by the background ticker) moves in-flight ones forward.
"""

import calendar
import datetime
import fnmatch
import hashlib
import hmac
import http.server
import json
import os
import random
import re
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

import ebssim_envfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SCENARIO_DIR = os.path.join(HERE, "scenarios")

# --------------------------------------------------------------------------- time


def parse_time(value):
    """RFC 3339 / ISO 8601 string (or epoch number) -> float epoch seconds (UTC)."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return float(text)
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    dt = datetime.datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    return dt.timestamp()


def fmt_time(epoch, millis=False):
    """epoch seconds -> '2026-11-01T00:00:00Z' (or with '.000' milliseconds, as EC2 sends)."""
    dt = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    if millis:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def amz_date(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def parse_amz_date(text):
    dt = datetime.datetime.strptime(text, "%Y%m%dT%H%M%SZ")
    return calendar.timegm(dt.timetuple())


class Clock:
    """The sim clock: start + (wall elapsed) * scale + advanced seconds."""

    def __init__(self, start_epoch, scale=1.0):
        self.start = start_epoch
        self.scale = float(scale)
        self.wall0 = time.time()
        self.advanced = 0.0

    def now(self):
        return self.start + (time.time() - self.wall0) * self.scale + self.advanced

    def advance(self, seconds):
        self.advanced += float(seconds)


# --------------------------------------------------------------------------- errors


class ApiError(Exception):
    """An AWS-style error; the protocol layer renders it (XML, JSON, ...)."""

    def __init__(self, code, message, status=400, sender=True, query_code=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.sender = sender
        self.query_code = query_code  # awsQueryCompatible code for JSON (x-amzn-query-error)


# --------------------------------------------------------------------------- CA


class CA:
    """A certificate authority for the run, made with the openssl CLI in `directory`.

    `cert_path`/`key_path` are the CA's; `issue(hostnames)` makes a server certificate,
    `client_cert(cn)` a client certificate (both cached by name in the directory).
    """

    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.cert_path = os.path.join(directory, "ca.crt")
        self.key_path = os.path.join(directory, "ca.key")
        self._lock = threading.Lock()
        self._make("ca", "ebssim test CA", [
            "basicConstraints = critical,CA:TRUE",
            "keyUsage = critical,keyCertSign,cRLSign",
            "subjectKeyIdentifier = hash",
        ], self.cert_path, self.key_path, signer=False)

    def _make(self, name, cn, extensions, cert, key, signer=True, org=None):
        conf = os.path.join(self.dir, name + ".cnf")
        dn = "CN = %s\n" % cn + ("O = %s\n" % org if org else "")
        with open(conf, "w") as f:
            f.write("[req]\ndistinguished_name = dn\nprompt = no\nx509_extensions = ext\n"
                    "[dn]\n" + dn + "[ext]\n" + "\n".join(extensions) + "\n")
        cmd = ["openssl", "req", "-x509", "-config", conf, "-newkey", "ec",
               "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
               "-out", cert, "-days", "3650", "-set_serial", str(secrets.randbits(63))]
        if signer:
            cmd += ["-CA", self.cert_path, "-CAkey", self.key_path]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.chmod(key, 0o600)

    def issue(self, hostnames):
        name = "server-" + hashlib.sha1(",".join(hostnames).encode()).hexdigest()[:10]
        cert = os.path.join(self.dir, name + ".crt")
        key = os.path.join(self.dir, name + ".key")
        with self._lock:
            if not os.path.exists(cert):
                sans = ",".join(("IP:" if re.fullmatch(r"[\d.]+|[0-9a-fA-F:]+:[0-9a-fA-F:]*", h)
                                 else "DNS:") + h for h in hostnames)
                self._make(name, hostnames[0], [
                    "basicConstraints = critical,CA:FALSE",
                    "keyUsage = critical,digitalSignature,keyEncipherment",
                    "extendedKeyUsage = serverAuth",
                    "subjectAltName = " + sans,
                    "authorityKeyIdentifier = keyid",
                ], cert, key)
        return cert, key

    def client_cert(self, cn, org=None):
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", cn)
        cert = os.path.join(self.dir, "client-%s.crt" % safe)
        key = os.path.join(self.dir, "client-%s.key" % safe)
        with self._lock:
            if not os.path.exists(cert):
                self._make("client-" + safe, cn, [
                    "basicConstraints = critical,CA:FALSE",
                    "keyUsage = critical,digitalSignature,keyEncipherment",
                    "extendedKeyUsage = clientAuth",
                    "authorityKeyIdentifier = keyid",
                ], cert, key, org=org)
        return cert, key


# --------------------------------------------------------------------------- SigV4

# botocore does the signing maths: we rebuild the request as the client sent it and let
# SigV4Auth compute the signature with the principal's secret, then compare.  botocore takes
# ~0.5 s to import, so it is imported on first use (serve() warms it up in the background).
_SIGV4 = None


def _sigv4_class(s3=False):
    """botocore's SigV4Auth, or for S3 its S3SigV4Auth (the path is signed as sent, not
    normalized or encoded again), signing exactly the headers the client listed."""
    global _SIGV4
    if _SIGV4 is None:
        import botocore.auth
        import botocore.awsrequest

        def exact(base):
            class ExactHeadersSigV4(base):
                """SigV4Auth that signs exactly the headers the client listed in SignedHeaders
                (botocore's own headers_to_sign drops user-agent/expect; a client may sign them)."""

                def __init__(self, credentials, service, region, signed_headers, received):
                    super().__init__(credentials, service, region)
                    self._signed = signed_headers
                    self._received = received

                def headers_to_sign(self, request):
                    out = botocore.awsrequest.HTTPHeaders()
                    for name in self._signed:
                        if name in self._received:
                            out[name] = self._received[name]
                    return out
            return ExactHeadersSigV4
        _SIGV4 = (exact(botocore.auth.SigV4Auth), exact(botocore.auth.S3SigV4Auth))
    return _SIGV4[1 if s3 else 0]


def sigv4_signature(secret, service, region, amzdate, method, url, headers, body,
                    signed_headers, payload_hash=None):
    """The signature a client holding `secret` would have computed for this request."""
    import botocore.awsrequest
    import botocore.credentials
    creds = botocore.credentials.Credentials("AKID", secret)
    auth = _sigv4_class(service == "s3")(creds, service, region, signed_headers, headers)
    req = botocore.awsrequest.AWSRequest(method=method, url=url, data=body)
    for name in signed_headers:
        if name in headers:
            req.headers[name] = headers[name]
    if payload_hash is not None:
        req.headers["X-Amz-Content-SHA256"] = payload_hash
    req.context["timestamp"] = amzdate
    canonical = auth.canonical_request(req)
    return auth.signature(auth.string_to_sign(req, canonical), req)


REGION_RE = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")
SKEW_LIMIT_S = 300


class AuthFailure(Exception):
    """kind: missing | malformed | unknown_key | invalid_token | bad_signature |
    expired_sig | expired_token | bad_region | bad_service"""

    def __init__(self, kind, message, akid=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.akid = akid


# --------------------------------------------------------------------------- HTTP plumbing


class Request:
    """One received HTTP request, protocol-neutral."""

    def __init__(self, method, target, headers, body, client_cert_cn, server):
        self.method = method
        split = urllib.parse.urlsplit(target)
        self.path = split.path or "/"
        self.query = split.query
        self.target = target
        self.headers = headers  # lower-case name -> value
        self.body = body
        self.client_cert_cn = client_cert_cn
        self.server = server

    @property
    def url(self):
        scheme = "https" if self.server.ssl_ctx else "http"
        return "%s://%s%s" % (scheme, self.headers.get("host", "127.0.0.1"), self.target)


class ConcurrencyMeter:
    """Requests in flight per server (ec2, monitoring, kube-NAME, ...): the most at once, and
    each request's arrival (monotonic seconds) per server and SigV4 region, so tests can check
    that a client overlapped its calls, stayed under its cap and within its token bucket.
    Read through the control endpoint: GET /concurrency (POST /concurrency/reset starts over)."""

    _REGION = re.compile(r"Credential=[^/,]+/[0-9]{8}/([^/,]+)/")

    def __init__(self):
        self.lock = threading.Lock()
        self.in_flight = {}
        self.max_in_flight = {}
        self.arrivals = {}

    def enter(self, server_name, headers):
        m = self._REGION.search(headers.get("authorization", ""))
        region = m.group(1) if m else ""
        with self.lock:
            n = self.in_flight.get(server_name, 0) + 1
            self.in_flight[server_name] = n
            self.max_in_flight[server_name] = max(n, self.max_in_flight.get(server_name, 0))
            self.arrivals.setdefault(server_name, {}).setdefault(region, []).append(time.monotonic())

    def leave(self, server_name):
        with self.lock:
            self.in_flight[server_name] -= 1

    def reset(self):
        with self.lock:
            self.max_in_flight = {k: v for k, v in self.in_flight.items() if v}
            self.arrivals = {}

    def report(self):
        with self.lock:
            return {name: {"max_in_flight": self.max_in_flight[name],
                           "arrivals": {r: list(ts) for r, ts in self.arrivals.get(name, {}).items()}}
                    for name in self.max_in_flight}


CONCURRENCY = ConcurrencyMeter()


class Response:
    def __init__(self, status=200, headers=None, body=b"", fault=None):
        self.status = status
        self.headers = headers or {}
        self.body = body if isinstance(body, bytes) else body.encode()
        self.fault = fault  # None | "drop" | "truncate"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ebssim"
    sys_version = ""
    timeout = 120

    def log_message(self, fmt, *args):
        pass

    def _read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self):
        body = self._read_body()
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            headers[k] = headers[k] + "," + v if k in headers else v
        cn = None
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                peer = self.connection.getpeercert()
            except ValueError:
                peer = None
            if peer:
                for rdn in peer.get("subject", ()):
                    for key, value in rdn:
                        if key == "commonName":
                            cn = value
        req = Request(self.command, self.path, headers, body, cn, self.server)
        CONCURRENCY.enter(self.server.name, headers)
        try:
            if self.server.latency_s:  # --latency-ms: the network and service time of a real API
                time.sleep(self.server.latency_s)
            try:
                resp = self.server.app.handle(req)
            except Exception as exc:  # a simulator bug: say so loudly, answer 500
                import traceback
                traceback.print_exc()
                resp = Response(500, {"Content-Type": "text/plain"}, "ebssim internal error: %r\n" % exc)
        finally:
            CONCURRENCY.leave(self.server.name)
        self._send(resp)

    def _send(self, resp):
        body = resp.body
        if resp.fault == "truncate":
            body = body[:max(1, len(body) // 2)]
        self.send_response(resp.status)  # status line + Date
        headers = dict(resp.headers)
        headers.setdefault("Content-Type", "application/octet-stream")
        for k, v in headers.items():
            if k.lower() not in ("content-length", "connection", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        if resp.fault == "drop":
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

    def send_response(self, code, message=None):
        # like BaseHTTPRequestHandler's, without its Server header (apps set their own)
        self.send_response_only(code, message)
        self.send_header("Date", self.date_time_string())


class HTTPServer(http.server.ThreadingHTTPServer):
    """A threaded HTTP/1.1 server on 127.0.0.1; TLS (optional) is negotiated in the
    connection's own thread so a slow handshake never blocks accept()."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, app, ssl_ctx=None, name="", latency_s=0.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.app = app
        self.ssl_ctx = ssl_ctx
        self.name = name
        self.latency_s = latency_s

    @property
    def port(self):
        return self.server_address[1]

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.ssl_ctx else "http", self.port)

    def finish_request(self, request, client_address):
        conn = request
        if self.ssl_ctx is not None:
            request.settimeout(15)
            try:
                conn = self.ssl_ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
            conn.settimeout(None)
        try:
            self.RequestHandlerClass(conn, client_address, self)
        finally:
            if conn is not request:
                try:
                    conn.close()
                except OSError:
                    pass

    def start(self):
        t = threading.Thread(target=self.serve_forever, name="srv-" + self.name, daemon=True)
        t.start()
        return t


def server_ssl_context(cert, key, client_ca=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if client_ca:
        ctx.load_verify_locations(client_ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


# --------------------------------------------------------------------------- EBS rules

GIB = 1024 ** 3

# Per-type limits for ModifyVolume (size GiB, IOPS, IOPS per GiB, throughput MiB/s).
VOLUME_LIMITS = {
    "gp3": {"size": (1, 65536), "iops": (3000, 80000), "iops_per_gib": 500,
            "throughput": (125, 2000), "tput_per_iops": 0.25},
    "gp2": {"size": (1, 16384)},
    "io1": {"size": (4, 16384), "iops": (100, 64000), "iops_per_gib": 50},
    "io2": {"size": (4, 65536), "iops": (100, 256000), "iops_per_gib": 1000},
    "st1": {"size": (125, 16384)},
    "sc1": {"size": (125, 16384)},
    "standard": {"size": (1, 1024)},
}

MODIFYING_S = 60.0          # every modification spends 60 s in `modifying`
OPTIMIZING_S_PER_GIB = 20.0  # then 20 s per GiB of target size in `optimizing`
OPTIMIZING_MIN_S = 60.0
OPTIMIZING_MAX_S = 86400.0
MODS_PER_WINDOW = 4
MOD_WINDOW_S = 86400.0


def gp2_baseline_iops(size):
    return int(min(16000, max(100, 3 * int(size))))


def optimizing_seconds(target_size):
    return min(OPTIMIZING_MAX_S, max(OPTIMIZING_MIN_S, OPTIMIZING_S_PER_GIB * float(target_size)))


def volume_config(vol):
    return {"type": vol["type"], "size": int(vol["size"]), "iops": vol.get("iops"),
            "throughput": vol.get("throughput")}


def _as_int(value, name):
    if value is None or value == "":
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        raise ApiError("InvalidParameterValue",
                       "Value (%s) for parameter %s is invalid. Expected: 'Integer'." % (value, name))


# --------------------------------------------------------------------------- accounts

ACCOUNT_ID_RE = re.compile(r"^\d{12}$")
ACCOUNT_STATUSES = ("ACTIVE", "SUSPENDED", "PENDING_CLOSURE")


def _condition_holds(op, terms, context):
    """One IAM condition operator block ({"aws:RequestedRegion": [...], ...}): every key holds."""
    if op not in ("StringEquals", "StringLike") or not isinstance(terms, dict):
        return False
    for key, want in terms.items():
        got = context.get(key)
        if got is None:
            return False
        wants = [want] if isinstance(want, str) else list(want)
        if op == "StringEquals" and got not in wants:
            return False
        if op == "StringLike" and not any(fnmatch.fnmatchcase(got, w) for w in wants):
            return False
    return True


class Account:
    """One account: the base one (the scenario's top-level keys) or a member of "accounts".

    by_region / instances_by_region: region -> [ids] of this account's volumes / instances;
    roles: name -> role spec (trusted, external_id, max_session_duration, allow)."""

    def __init__(self, account_id, spec, default_region, joined_default):
        if not ACCOUNT_ID_RE.match(account_id):
            raise ValueError("scenario: account id %r is not 12 digits" % account_id)
        self.id = account_id
        self.name = spec.get("name") or account_id
        self.email = spec.get("email") or "aws+%s@example.com" % account_id
        self.status = spec.get("status") or "ACTIVE"
        if self.status not in ACCOUNT_STATUSES:
            raise ValueError("scenario: account %s: status %r is not one of %s"
                             % (account_id, self.status, "|".join(ACCOUNT_STATUSES)))
        self.joined_method = spec.get("joined_method") or "CREATED"
        self.joined = parse_time(spec.get("joined")) if spec.get("joined") else joined_default
        self.regions = spec.get("regions") or {default_region: {}}
        self.disabled_regions = set(spec.get("disabled_regions") or ())
        self.roles = {}
        for r in spec.get("roles") or ():
            r = dict(r)
            r.setdefault("trusted", [])
            r.setdefault("external_id", None)
            r.setdefault("max_session_duration", 3600)
            r.setdefault("allow", ["*"])
            self.roles[r["name"]] = r
        self.by_region = {}
        self.instances_by_region = {}

    def role_arn(self, name):
        return "arn:aws:iam::%s:role/%s" % (self.id, name)


# --------------------------------------------------------------------------- the world


class Sim:
    """The simulated world.  See the module comment and CONTRACT.md."""

    def __init__(self, scenario, state_dir, seed=0, time_scale=1.0, repo_root=REPO_ROOT):
        self.lock = threading.RLock()
        self.scenario = scenario
        self.state_dir = state_dir
        self.repo_root = repo_root
        self.pricing_dir = os.path.join(repo_root, "pricing")
        self.seed = seed
        self.rng = random.Random(seed)          # ids of temporary credentials
        self.fault_rng = random.Random(seed)    # fault `rate` draws only, so they depend on nothing else
        self.account = str(scenario.get("account", "111122223333"))
        self.default_region = scenario.get("default_region") or "us-east-1"
        self.clock = Clock(parse_time(scenario.get("start_time") or "2026-11-01T00:00:00Z"),
                           time_scale)
        self.wall0 = time.time()
        self.regions = scenario.get("regions") or {self.default_region: {}}
        self.ca = None
        self.endpoints = {}       # service -> URL (filled by serve())
        self.kube = {}            # cluster name -> KubeCluster
        self.requests = []
        self._seq = 0
        self.faults = []
        # requests a `hold` fault keeps waiting (ctl held lists them, ctl release lets them go)
        self.held = []
        self.hold_cv = threading.Condition()
        self.release_gen = 0
        self.imds_tokens = {}     # token -> wall expiry
        self.container_token = None
        self._load_principals(scenario.get("principals") or [])
        volumes, instances = self._load_accounts(scenario)
        self._load_instances(instances)
        self._load_volumes(volumes)
        base = self.accounts[self.account]
        base.by_region = self.by_region
        base.instances_by_region = self.instances_by_region
        self.aws = None           # ebssim_aws.AwsApis, set by serve()
        self.trail = None         # ebssim_trail.Trail (CloudTrail event history), set by serve()

    # ---- loading

    def _load_principals(self, items):
        self.principals = {}      # access key id -> principal dict
        self.principals_by_name = {}
        for p in items:
            p = dict(p)
            p.setdefault("allow", ["*"])
            p.setdefault("session_token", None)
            p["_expires"] = self._scenario_expiry(p.get("expires"))
            if p.get("role_arn"):
                p.setdefault("arn", p["role_arn"])
            else:
                p.setdefault("arn", "arn:aws:iam::%s:user/%s" % (self.account, p["name"]))
            p.setdefault("user_id", "AIDA" + hashlib.sha1(p["name"].encode()).hexdigest()[:17].upper())
            if p.get("access_key_id"):
                self.principals[p["access_key_id"]] = p
            self.principals_by_name[p["name"]] = p

    def _load_accounts(self, scenario):
        """self.accounts (id -> Account, the base one first) and self.org; -> (every volume,
        every instance), members' marked with `_account` (the base account's stay as they are)."""
        self.org = scenario.get("organization")
        joined0 = self.clock.start - 365 * 86400
        base_spec = {"name": (self.org or {}).get("management_account_name") or "management",
                     "email": (self.org or {}).get("management_email"),
                     "joined_method": "INVITED", "regions": self.regions,
                     "disabled_regions": scenario.get("disabled_regions"),
                     "roles": scenario.get("roles")}
        self.accounts = {self.account: Account(self.account, base_spec, self.default_region, joined0)}
        volumes = list(scenario.get("volumes") or [])
        instances = list(scenario.get("instances") or [])
        for spec in scenario.get("accounts") or ():
            acct_id = str(spec.get("id", ""))
            if acct_id in self.accounts:
                raise ValueError("scenario: account %s is listed twice" % acct_id)
            acct = Account(acct_id, spec, self.default_region, joined0)
            self.accounts[acct_id] = acct
            first_region = next(iter(acct.regions))
            for v in spec.get("volumes") or ():
                v["_account"] = acct_id
                v.setdefault("region", first_region)
                volumes.append(v)
            for inst in spec.get("instances") or ():
                inst = dict(inst, _account=acct_id)
                inst.setdefault("region", first_region)
                instances.append(inst)
        return volumes, instances

    def owner_of(self, obj):
        """The account id a volume or instance belongs to."""
        return obj.get("_account") or self.account

    def account_of(self, principal):
        """The account id a principal acts in (None: an unsigned request, the base account)."""
        return (principal or {}).get("account") or self.account

    def account_state(self, account_id):
        return self.accounts.get(account_id) or self.accounts[self.account]

    def _scenario_expiry(self, value):
        """`expires`: null, an RFC 3339 time (wall clock), or seconds relative to start-up."""
        if value is None:
            return None
        if isinstance(value, (int, float)):
            return self.wall0 + float(value)
        return parse_time(value)

    def _load_instances(self, items):
        self.instances = {}
        self.instances_by_region = {}
        for inst in items:
            inst = dict(inst)
            inst.setdefault("region", self.default_region)
            inst.setdefault("state", "running")
            self.instances[inst["instance_id"]] = inst
            owner = inst.get("_account")
            index = self.instances_by_region if owner is None else self.accounts[owner].instances_by_region
            index.setdefault(inst["region"], []).append(inst["instance_id"])

    def _load_volumes(self, items):
        self.volumes = {}
        self.by_region = {}
        self.modifications = {}   # volume id -> [modification, oldest first]
        self.inflight = set()     # volume ids whose latest modification is not final
        self._attached = None     # instance id -> [volume id], see attached_volumes()
        start = self.clock.start
        for raw in items:
            v = raw  # the scenario dict is ours: no copy
            mods = v.pop("modifications", None) or []
            v.setdefault("region", self.default_region)
            v.setdefault("type", "gp2")
            v["size"] = int(v.get("size", 8))
            if v["type"] == "gp2":
                v["iops"] = gp2_baseline_iops(v["size"])
            elif v["type"] == "gp3":
                v["iops"] = int(v.get("iops") or 3000)
            if v["type"] == "gp3":
                v["throughput"] = int(v.get("throughput") or 125)
            else:
                v["throughput"] = None
            v.setdefault("attachments", [])
            v.setdefault("state", "in-use" if v["attachments"] else "available")
            v.setdefault("create_time", fmt_time(start - 30 * 86400))
            v.setdefault("encrypted", False)
            v.setdefault("kms_key_id", None)
            v.setdefault("snapshot_id", "")
            v.setdefault("multi_attach", False)
            v.setdefault("tags", {})
            v.setdefault("modify_fails", False)
            vid = v["volume_id"]
            if vid in self.volumes:
                raise ValueError("scenario: volume %s is listed twice (ids are unique across accounts)" % vid)
            self.volumes[vid] = v
            owner = v.get("_account")
            index = self.by_region if owner is None else self.accounts[owner].by_region
            index.setdefault(v["region"], []).append(vid)
            if mods:
                self.modifications[vid] = [self._mod_from_scenario(vid, m) for m in mods]
                if self.modifications[vid][-1]["state"] in ("modifying", "optimizing"):
                    self.inflight.add(vid)

    def attached_volumes(self, instance_id):
        """Volume ids attached to an instance (index built on first use: attachments are static)."""
        with self.lock:
            if self._attached is None:
                index = {}
                for vid, v in self.volumes.items():
                    for a in v.get("attachments") or ():
                        index.setdefault(a.get("instance_id"), []).append(vid)
                self._attached = index
            return self._attached.get(instance_id, [])

    def _mod_from_scenario(self, vid, m):
        start = parse_time(m["start_time"])
        sim_start = self.clock.start
        target = dict(m["target"])
        state = m.get("state", "completed")
        mod = {"volume_id": vid, "state": state, "start": start, "fails": state == "failed",
               "original": dict(m["original"]), "target": target,
               "status_message": m.get("status_message"), "applied": state != "modifying",
               "defaults_applied": m.get("defaults_applied", []), "principal": m.get("principal")}
        if state in ("completed", "failed"):
            end = parse_time(m.get("end_time")) or start + MODIFYING_S
            mod["t_opt"] = min(end, start + MODIFYING_S)
            mod["t_end"] = end
        elif state == "optimizing":
            # keep it optimizing at the scenario's start: the remainder runs from there
            progress = float(m.get("progress", 50))
            mod["t_opt"] = min(start + MODIFYING_S, sim_start)
            mod["t_end"] = sim_start + optimizing_seconds(target["size"]) * (100 - progress) / 100.0
        else:  # modifying
            mod["t_opt"] = max(start + MODIFYING_S, sim_start + 1)
            mod["t_end"] = mod["t_opt"] + optimizing_seconds(target["size"])
        if state == "failed" and not mod["status_message"]:
            mod["status_message"] = "Modification failed"
        return mod

    # ---- clock and progress

    def now(self):
        return self.clock.now()

    def wall_now(self):
        return time.time()

    def update(self):
        """Move in-flight modifications forward to the current sim time."""
        with self.lock:
            if not self.inflight:
                return
            now = self.now()
            for vid in list(self.inflight):
                mod = self.modifications[vid][-1]
                vol = self.volumes[vid]
                if mod["fails"]:
                    if now >= mod["t_opt"]:
                        mod["state"] = "failed"
                        mod["t_end"] = mod["t_opt"]
                        mod["status_message"] = mod.get("status_message") or (
                            "The volume modification failed. The volume configuration is unchanged.")
                        self.inflight.discard(vid)
                    continue
                if now >= mod["t_opt"] and not mod["applied"]:
                    # Size and type take effect when the volume enters `optimizing`.
                    vol.update({"type": mod["target"]["type"], "size": mod["target"]["size"],
                                "iops": mod["target"]["iops"],
                                "throughput": mod["target"]["throughput"]})
                    mod["applied"] = True
                    mod["state"] = "optimizing"
                if now >= mod["t_end"]:
                    mod["state"] = "completed"
                    self.inflight.discard(vid)

    def advance(self, seconds):
        with self.lock:
            self.clock.advance(seconds)
        self.tick()

    def tick(self):
        with self.lock:
            self.update()
            for cluster in self.kube.values():
                tick = getattr(cluster, "tick", None)
                if tick:
                    tick()

    # ---- modifications (shared interface)

    def mod_view(self, mod, now=None):
        """A modification as the outside world sees it (scenario shape + extras)."""
        now = self.now() if now is None else now
        state = mod["state"]
        if state == "completed":
            progress = 100
        elif state == "failed":
            progress = 0
        else:
            span = max(1.0, mod["t_end"] - mod["start"])
            progress = int(max(0, min(99, 100 * (now - mod["start"]) / span)))
        return {"volume_id": mod["volume_id"], "state": state,
                "start_time": fmt_time(mod["start"]),
                "end_time": fmt_time(mod["t_end"]) if state in ("completed", "failed") else None,
                "original": dict(mod["original"]), "target": dict(mod["target"]),
                "progress": progress, "status_message": mod.get("status_message"),
                "defaults_applied": list(mod.get("defaults_applied") or [])}

    def latest_modification(self, volume_id):
        with self.lock:
            self.update()
            mods = self.modifications.get(volume_id)
            return self.mod_view(mods[-1]) if mods else None

    def ec2_modify_volume(self, region, volume_id, params, principal, at=None):
        """ModifyVolume's rules, judged at sim time `at` (default now; `ctl modify-volume` gives
        a past time).  -> (True, modification view) or (False, error dict).  Every call judged
        here is a CloudTrail event (self.trail), accepted or refused."""
        with self.lock:
            try:
                self.update()
                ok, result = True, self.mod_view(self._modify_volume(region, volume_id, params, at))
                self.update()
            except ApiError as err:
                ok, result = False, {"code": err.code, "message": err.message, "status": err.status}
            if self.trail is not None and volume_id in self.volumes:
                self.trail.record(region, volume_id, params, principal, ok, result, at=at)
            return ok, result

    def _volume_in(self, region, volume_id):
        """The volume, or EC2's error for an id that is malformed or not in this region."""
        vol = self.volumes.get(volume_id)
        if vol is None or vol["region"] != region:
            if not re.fullmatch(r"vol-[0-9a-f]{8}([0-9a-f]{9})?", volume_id or ""):
                raise ApiError("InvalidVolumeID.Malformed",
                               'Invalid id: "%s" (expecting "vol-...")' % volume_id)
            raise ApiError("InvalidVolume.NotFound", "The volume '%s' does not exist." % volume_id)
        return vol

    def _modify_volume(self, region, volume_id, params, at=None):
        vol = self._volume_in(region, volume_id)
        now = self.now() if at is None else at
        mods = self.modifications.get(volume_id, [])
        if mods and mods[-1]["state"] in ("modifying", "optimizing"):
            raise ApiError("IncorrectModificationState",
                           "Volume %s cannot be modified in modification state %s"
                           % (volume_id, mods[-1]["state"].upper()))
        recent = [m for m in mods if m["start"] > now - MOD_WINDOW_S]
        if len(recent) >= MODS_PER_WINDOW:
            next_ok = min(m["start"] for m in recent) + MOD_WINDOW_S
            raise ApiError("VolumeModificationRateExceeded",
                           "You've reached the maximum modification rate per volume limit. "
                           "You can modify this volume again after %s." % fmt_time(next_ok))
        if vol["state"] not in ("in-use", "available"):
            raise ApiError("IncorrectState", "The volume '%s' is not in a state that can be "
                           "modified (%s)." % (volume_id, vol["state"]))
        original = volume_config(vol)
        vtype = (params.get("VolumeType") or original["type"])
        if vtype not in VOLUME_LIMITS:
            raise ApiError("InvalidParameterValue",
                           "Value (%s) for parameter volumeType is invalid. Valid values: "
                           "standard | io1 | io2 | gp2 | sc1 | st1 | gp3" % vtype)
        size = _as_int(params.get("Size"), "size")
        iops = _as_int(params.get("Iops"), "iops")
        tput = _as_int(params.get("Throughput"), "throughput")
        if size is None:
            size = original["size"]
        elif size < original["size"]:
            raise ApiError("InvalidParameterValue", "New size cannot be smaller than existing size")
        if tput is not None and vtype != "gp3":
            raise ApiError("InvalidParameterCombination",
                           "throughput can only be specified for volumeType gp3.")
        defaults = []
        if vtype == "gp3":
            if iops is None:
                if original["type"] == "gp3":
                    iops = original["iops"]
                else:
                    iops = 3000
                    defaults.append("iops")
            if tput is None:
                if original["type"] == "gp3":
                    tput = original["throughput"]
                else:
                    tput = 125
                    defaults.append("throughput")
        elif vtype in ("io1", "io2"):
            if iops is None:
                if original["type"] in ("io1", "io2"):
                    iops = original["iops"]
                else:
                    raise ApiError("InvalidParameterCombination",
                                   "The parameter iops must be specified for %s volumes." % vtype)
        else:
            if iops is not None:
                raise ApiError("InvalidParameterCombination",
                               "The parameter iops is not supported for %s volumes." % vtype)
            iops = gp2_baseline_iops(size) if vtype == "gp2" else None
        limits = VOLUME_LIMITS[vtype]
        lo, hi = limits["size"]
        if size > hi:
            raise ApiError("InvalidParameterValue",
                           "Volume of %dGiB is too large for %s; maximum is %dGiB." % (size, vtype, hi))
        if size < lo:
            raise ApiError("InvalidParameterValue",
                           "Volume of %dGiB is too small for %s; minimum is %dGiB." % (size, vtype, lo))
        if "iops" in limits:
            lo, hi = limits["iops"]
            if iops < lo:
                raise ApiError("InvalidParameterValue",
                               "Volume iops of %d is too low; minimum is %d." % (iops, lo))
            if iops > hi:
                raise ApiError("InvalidParameterValue",
                               "Volume iops of %d is too high; maximum is %d." % (iops, hi))
            # gp3's included 3,000 IOPS are available at every size (a 1 GiB gp3 has 3,000 IOPS);
            # the 500:1 ratio limits provisioned IOPS above that baseline.
            if iops > limits["iops_per_gib"] * size and not (vtype == "gp3" and iops <= 3000):
                raise ApiError("InvalidParameterValue",
                               "Iops to volume size ratio of %f is too high; maximum is %d"
                               % (iops / float(size), limits["iops_per_gib"]))
        if "throughput" in limits:
            lo, hi = limits["throughput"]
            if tput < lo:
                raise ApiError("InvalidParameterValue",
                               "Volume throughput of %d is too low; minimum is %d." % (tput, lo))
            if tput > hi:
                raise ApiError("InvalidParameterValue",
                               "Volume throughput of %d is too high; maximum is %d." % (tput, hi))
            if tput > limits["tput_per_iops"] * iops:
                raise ApiError("InvalidParameterValue",
                               "Throughput (MiBps) to iops ratio of %f is too high; maximum is "
                               "%f MiBps per iops" % (tput / float(iops), limits["tput_per_iops"]))
        target = {"type": vtype, "size": size, "iops": iops,
                  "throughput": tput if vtype == "gp3" else None}
        if target == original:
            raise ApiError("InvalidParameterValue",
                           "The modification request does not change the volume: the requested "
                           "size, type, IOPS and throughput equal the current ones.")
        mod = {"volume_id": volume_id, "state": "modifying", "start": now,
               "t_opt": now + MODIFYING_S, "t_end": now + MODIFYING_S + optimizing_seconds(size),
               "fails": bool(vol.get("modify_fails")), "original": original, "target": target,
               "status_message": None, "applied": False, "defaults_applied": defaults}
        self.modifications.setdefault(volume_id, []).append(mod)
        self.inflight.add(volume_id)
        if self.aws is not None:
            self.aws.metrics.forget(volume_id)
        return mod

    def delete_volume(self, region, volume_id, detach=False):
        """DeleteVolume's rules: an attached volume is VolumeInUse unless `detach` (the `ctl
        delete-volume` op: someone detached and deleted it, e.g. in the console). The volume
        goes at once (EC2 shows `deleting` for a moment; nothing here depends on that) and with
        it its modification history, as EC2 forgets both. Raises ApiError."""
        with self.lock:
            vol = self._volume_in(region, volume_id)
            atts = vol.get("attachments") or []
            if atts and not detach:
                raise ApiError("VolumeInUse", "Volume %s is currently attached to %s"
                               % (volume_id, atts[0].get("instance_id")))
            del self.volumes[volume_id]
            self.account_state(self.owner_of(vol)).by_region[vol["region"]].remove(volume_id)
            self.modifications.pop(volume_id, None)
            self.inflight.discard(volume_id)
            self._attached = None
            if self.aws is not None:
                self.aws.metrics.forget(volume_id)

    def config_timeline(self, volume_id):
        """[(t, config)] of the volume's performance configuration over time (metrics use it):
        the original before each modification, the target from its completion on."""
        with self.lock:
            vol = self.volumes[volume_id]
            mods = [m for m in self.modifications.get(volume_id, []) if not m["fails"]]
            if not mods:
                return [(float("-inf"), volume_config(vol))]
            out = [(float("-inf"), dict(mods[0]["original"]))]
            for m in mods:
                out.append((m["t_end"], dict(m["target"])))
            return out

    # ---- request log

    def log_request(self, entry):
        with self.lock:
            self._seq += 1
            e = {"seq": self._seq, "time": fmt_time(self.now()), "service": None, "region": None,
                 "cluster": None, "action": None, "params": {}, "status": None,
                 "error_code": None, "principal": None}
            e.update(entry)
            e["seq"] = self._seq
            self.requests.append(e)
            return e

    # ---- faults

    def add_fault(self, spec):
        with self.lock:
            if spec.get("clear"):
                self.faults = []
                return
            f = {"service": "*", "action": "*", "kind": None, "rate": None, "count": None,
                 "delay_s": 2.0, "skew_s": 600.0, "volume_id": None, "code": None,
                 "message": None, "status": 400, "hold_s": 120.0}
            f.update(spec)
            if f["kind"] not in ("throttle", "5xx", "slow", "drop", "truncate",
                                 "expire-continue", "skew", "error", "hold", "repeat-token", "foreign-keys"):
                raise ValueError("unknown fault kind %r" % f["kind"])
            if f["kind"] == "error" and not f["code"]:
                raise ValueError("an error fault needs a code (e.g. InvalidParameterCombination)")
            f["_fired"] = 0
            self.faults.append(f)

    def fault(self, service, action):
        """The fault to apply to this request, or None (a `skew` fault shifts the wall
        clock the signature check uses for that request by skew_s)."""
        return self._fire(service, action, lambda f: f["kind"] != "error")

    def hold(self, service, action, params, fault):
        """A `hold` fault: keeps the calling request (on its connection's own thread) waiting
        before anything is judged or changed, until `ctl release` or hold_s wall seconds, so a
        test can look at what the client recorded while its call is in flight."""
        with self.hold_cv:
            item = {"service": service, "action": action, "params": params,
                    "since": fmt_time(self.now())}
            self.held.append(item)
            gen = self.release_gen
            deadline = time.monotonic() + float(fault.get("hold_s") or 120)
            while self.release_gen == gen and time.monotonic() < deadline:
                self.hold_cv.wait(deadline - time.monotonic())
            self.held.remove(item)

    def release_held(self):
        """Lets every request a `hold` fault keeps waiting go on; returns how many."""
        with self.hold_cv:
            n = len(self.held)
            self.release_gen += 1
            self.hold_cv.notify_all()
            return n

    def error_fault(self, service, action, volume_id):
        """An ApiError an `error` fault makes this request fail with, or None.  Asked once the
        request is authenticated and allowed (where EC2 judges parameters): by the EC2 app for
        every action and by the CSI emulation before its ModifyVolume (which skips the app).
        The fault's volume_id, when set, must equal the request's volume."""
        f = self._fire(service, action, lambda f: f["kind"] == "error" and (
            not f["volume_id"] or f["volume_id"] == volume_id))
        if f is None:
            return None
        return ApiError(f["code"], f["message"] or "The request was refused (%s)." % f["code"],
                        int(f["status"] or 400))

    def _fire(self, service, action, wanted):
        with self.lock:
            for f in self.faults:
                if f["service"] not in ("*", service) or not wanted(f):
                    continue
                if f["action"] != "*" and not fnmatch.fnmatchcase(action or "", f["action"]):
                    continue
                if f["count"] is not None and f["_fired"] >= int(f["count"]):
                    continue
                if f["rate"] is not None and self.fault_rng.random() >= float(f["rate"]):
                    continue
                f["_fired"] += 1
                return {k: v for k, v in f.items() if not k.startswith("_")}
            return None

    # ---- authentication

    def lookup_principal(self, akid):
        with self.lock:
            return self.principals.get(akid)

    def add_temporary_principal(self, base, session_name, duration_s):
        """Temporary credentials for `base` (a principal dict): returns the new principal."""
        with self.lock:
            akid = "ASIA" + "".join(self.rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
                                    for _ in range(16))
            role = base.get("role_arn") or base["arn"]
            role_name = role.rsplit("/", 1)[-1]
            p = {"name": "%s/%s" % (role_name, session_name), "access_key_id": akid,
                 "secret_access_key": secrets.token_urlsafe(30)[:40],
                 "session_token": "IQoJb3JpZ2luX2VjE" + secrets.token_urlsafe(96),
                 "_expires": time.time() + duration_s, "allow": list(base.get("allow", ["*"])),
                 "arn": "arn:aws:sts::%s:assumed-role/%s/%s" % (self.account, role_name, session_name),
                 "user_id": "AROA%s:%s" % (hashlib.sha1(role.encode()).hexdigest()[:17].upper(),
                                            session_name),
                 "temporary": True, "base": base["name"]}
            if base.get("account"):
                p["account"] = base["account"]
            if base.get("role_arn"):
                p["source_role_arn"] = base["role_arn"]
            self.principals[akid] = p
            return p

    def assume_role(self, caller, account, role, session_name, duration_s):
        """STS AssumeRole's credentials: a temporary principal acting in `account` (an Account)
        with `role`'s permissions; its source_role_arn lets it be trusted as that role (chaining)."""
        with self.lock:
            role_arn = account.role_arn(role["name"])
            akid = "ASIA" + "".join(self.rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
                                    for _ in range(16))
            p = {"name": "%s/%s" % (role["name"], session_name), "access_key_id": akid,
                 "secret_access_key": secrets.token_urlsafe(30)[:40],
                 "session_token": "IQoJb3JpZ2luX2VjE" + secrets.token_urlsafe(96),
                 "_expires": time.time() + duration_s, "allow": list(role.get("allow") or []),
                 "arn": "arn:aws:sts::%s:assumed-role/%s/%s" % (account.id, role["name"], session_name),
                 "user_id": "AROA%s:%s" % (hashlib.sha1(role_arn.encode()).hexdigest()[:17].upper(),
                                            session_name),
                 "temporary": True, "base": caller.get("name"), "account": account.id,
                 "source_role_arn": role_arn}
            self.principals[akid] = p
            return p

    def check_sigv4(self, req, service, skew=0.0):
        """Verify the request's SigV4 signature (header or presigned query form).

        -> (principal, region).  Raises AuthFailure."""
        h = req.headers
        qs = urllib.parse.parse_qs(req.query, keep_blank_values=True)
        auth = h.get("authorization")
        presigned = False
        if auth:
            m = re.match(r"AWS4-HMAC-SHA256\s+(.*)", auth)
            if not m:
                raise AuthFailure("malformed", "Authorization header requires 'Credential', "
                                  "'Signature' and 'SignedHeaders' parameters.")
            fields = {}
            for part in m.group(1).split(","):
                k, _, v = part.strip().partition("=")
                fields[k] = v
            if not all(k in fields for k in ("Credential", "SignedHeaders", "Signature")):
                raise AuthFailure("malformed", "Authorization header requires 'Credential', "
                                  "'Signature' and 'SignedHeaders' parameters.")
            credential, signed, signature = fields["Credential"], fields["SignedHeaders"], fields["Signature"]
            date_text = h.get("x-amz-date")
            token = h.get("x-amz-security-token")
            expires = None
        elif "X-Amz-Signature" in qs:
            presigned = True
            get = lambda k: (qs.get(k) or [None])[0]  # noqa: E731
            if get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256":
                raise AuthFailure("malformed", "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"")
            credential, signed, signature = get("X-Amz-Credential") or "", get("X-Amz-SignedHeaders") or "", get("X-Amz-Signature")
            date_text = get("X-Amz-Date")
            token = get("X-Amz-Security-Token")
            expires = get("X-Amz-Expires")
        else:
            raise AuthFailure("missing", "Missing Authentication Token")
        parts = credential.split("/")
        if len(parts) != 5 or parts[4] != "aws4_request":
            raise AuthFailure("malformed", "Credential should be scoped to a valid region.")
        akid, day, region, scope_service, _ = parts
        if scope_service != service:
            raise AuthFailure("bad_service", "Credential should be scoped to correct service: '%s'."
                              % service, akid)
        if not REGION_RE.match(region):
            raise AuthFailure("bad_region", "Credential should be scoped to a valid region. ", akid)
        principal = self.lookup_principal(akid)
        if principal is None:
            raise AuthFailure("unknown_key", "The security token included in the request is invalid.", akid)
        if principal.get("session_token") and token != principal["session_token"]:
            raise AuthFailure("invalid_token", "The security token included in the request is invalid.", akid)
        if not principal.get("session_token") and token:
            raise AuthFailure("invalid_token", "The security token included in the request is invalid.", akid)
        if not date_text:
            if h.get("date"):
                try:
                    date_epoch = parse_http_date(h["date"])
                    date_text = amz_date(date_epoch)
                except ValueError:
                    date_text = None
            if not date_text:
                raise AuthFailure("malformed", "Authorization header requires existence of either "
                                  "a 'X-Amz-Date' or a 'Date' header.", akid)
        try:
            date_epoch = parse_amz_date(date_text)
        except ValueError:
            raise AuthFailure("malformed", "Invalid X-Amz-Date %r" % date_text, akid)
        if date_text[:8] != day:
            raise AuthFailure("bad_signature", "Date in Credential scope does not match YYYYMMDD "
                              "from ISO-8601 version of date from HTTP: '%s' != '%s', from '%s'."
                              % (day, date_text[:8], date_text), akid)
        signed_headers = [s.strip().lower() for s in signed.split(";") if s.strip()]
        if "host" not in signed_headers:
            raise AuthFailure("bad_signature", "'Host' must be a 'SignedHeader' in the AWS Authorization.", akid)
        if not presigned and h.get("x-amz-date") and "x-amz-date" not in signed_headers:
            raise AuthFailure("bad_signature", "'X-Amz-Date' must be a 'SignedHeader' in the AWS "
                              "Authorization.", akid)
        claimed = h.get("x-amz-content-sha256")
        if not presigned and claimed and claimed != "UNSIGNED-PAYLOAD" and \
                claimed.lower() != hashlib.sha256(req.body).hexdigest():
            raise AuthFailure("bad_signature", "The provided 'x-amz-content-sha256' header does not "
                              "match what was computed.", akid)
        if presigned:
            base_query = "&".join(p for p in req.query.split("&") if not p.startswith("X-Amz-Signature="))
            url = "%s://%s%s%s" % ("https" if req.server.ssl_ctx else "http", h.get("host", ""),
                                   req.path, "?" + base_query if base_query else "")
            candidates = [None, "UNSIGNED-PAYLOAD"]
        else:
            url = req.url
            candidates = [h.get("x-amz-content-sha256")]
        ok = False
        for payload in candidates:
            expect = sigv4_signature(principal["secret_access_key"], service, region, date_text,
                                     req.method, url, h, req.body if not presigned else b"",
                                     signed_headers, payload_hash=payload)
            if hmac.compare_digest(expect, signature or ""):
                ok = True
                break
        if not ok:
            raise AuthFailure("bad_signature",
                              "The request signature we calculated does not match the signature you "
                              "provided. Check your AWS Secret Access Key and signing method. Consult "
                              "the service documentation for details.", akid)
        wall = self.wall_now() + skew
        if presigned:
            try:
                exp_s = int(expires)
            except (TypeError, ValueError):
                raise AuthFailure("malformed", "X-Amz-Expires must be a number", akid)
            if wall > date_epoch + exp_s:
                raise AuthFailure("expired_sig", "Request has expired", akid)
            if date_epoch - wall > SKEW_LIMIT_S:
                raise AuthFailure("expired_sig", "Request is not yet valid", akid)
        elif abs(wall - date_epoch) > SKEW_LIMIT_S:
            if date_epoch < wall:
                msg = ("Signature expired: %s is now earlier than %s (%s - 5 min.)"
                       % (date_text, amz_date(wall - SKEW_LIMIT_S), amz_date(wall)))
            else:
                msg = ("Signature not yet current: %s is still later than %s (%s + 5 min.)"
                       % (date_text, amz_date(wall + SKEW_LIMIT_S), amz_date(wall)))
            raise AuthFailure("expired_sig", msg, akid)
        if principal.get("_expires") is not None and wall >= principal["_expires"]:
            raise AuthFailure("expired_token", "The security token included in the request is expired", akid)
        return principal, region

    def verify_presigned_sts(self, url, headers):
        """EKS token check: -> (principal name, None) or (None, reason)."""
        split = urllib.parse.urlsplit(url)
        host = split.netloc
        sts_url = self.endpoints.get("sts", "")
        allowed = host == "sts.amazonaws.com" or re.fullmatch(r"sts\.[a-z0-9-]+\.amazonaws\.com(\.cn)?", host) \
            or (sts_url and host == urllib.parse.urlsplit(sts_url).netloc)
        if not allowed:
            return None, "unexpected hostname %r in pre-signed URL" % host
        qs = urllib.parse.parse_qs(split.query, keep_blank_values=True)
        lower = {k.lower(): v for k, v in (headers or {}).items()}
        if (qs.get("Action") or [""])[0] != "GetCallerIdentity":
            return None, "unexpected action in pre-signed URL"
        signed = [s.lower() for s in (qs.get("X-Amz-SignedHeaders") or [""])[0].split(";")]
        if "x-k8s-aws-id" not in signed:
            return None, "client did not sign the x-k8s-aws-id header in the pre-signed URL"
        if "x-amz-expires" not in {k.lower() for k in qs}:
            return None, "X-Amz-Expires parameter missing"
        date_text = (qs.get("X-Amz-Date") or [""])[0]
        try:
            date_epoch = parse_amz_date(date_text)
        except ValueError:
            return None, "bad X-Amz-Date"
        wall = self.wall_now()
        if wall > date_epoch + 15 * 60:
            return None, "token expired: X-Amz-Date %s is more than 15 minutes old" % date_text
        fake_headers = dict(lower)
        fake_headers["host"] = host
        req = Request("GET", split.path + "?" + split.query if split.path else "/?" + split.query,
                      fake_headers, b"", None, _FakeServer(split.scheme == "https"))
        try:
            principal, _region = self.check_sigv4(req, "sts")
        except AuthFailure as err:
            if err.kind != "expired_sig":
                return None, err.message
            principal = self.lookup_principal(err.akid)
            if principal is None:
                return None, err.message
        return principal["name"], None

    # ---- permissions

    def allowed(self, principal, action, context=None):
        """Whether principal may call action ("ec2:ModifyVolume"): by its `allow` patterns, or,
        when it has a `policy` (an IAM policy document: scenario or `ctl policy`), by that
        policy's Allow statements, each with its Action patterns and its Condition evaluated on
        context (condition key -> value; a key the request does not have fails the condition).
        Condition operators: StringEquals, StringLike (values a string or a list: any of them);
        any other operator fails closed. Resources are not evaluated ("*")."""
        policy = principal.get("policy")
        if policy is None:
            return any(fnmatch.fnmatchcase(action.lower(), pat.lower())
                       for pat in principal.get("allow", []))
        context = context or {}
        for st in policy.get("Statement") or ():
            actions = st.get("Action") or []
            actions = [actions] if isinstance(actions, str) else actions
            if st.get("Effect") != "Allow" or not any(
                    fnmatch.fnmatchcase(action.lower(), a.lower()) for a in actions):
                continue
            if all(_condition_holds(op, terms, context) for op, terms in (st.get("Condition") or {}).items()):
                return True
        return False

    def set_policy(self, spec):
        """`ctl policy {"principal": NAME, "policy": DOC}`: NAME's permissions become DOC's (null:
        back to its `allow` list)."""
        with self.lock:
            p = self.principals_by_name.get(spec.get("principal"))
            if p is None:
                raise ValueError("no principal %r" % spec.get("principal"))
            doc = spec.get("policy")
            if doc is not None and not isinstance(doc.get("Statement") if isinstance(doc, dict) else None, list):
                raise ValueError("policy: an IAM policy document with a Statement list")
            p["policy"] = doc

    # ---- state dump

    def state(self):
        with self.lock:
            self.update()
            now = self.now()
            vols = {}
            for vid, v in self.volumes.items():
                vols[vid] = {k: val for k, val in v.items() if not k.startswith("_")}
            mods = {vid: [self.mod_view(m, now) for m in ms] for vid, ms in self.modifications.items()}
            clusters = {}
            for name, c in self.kube.items():
                st = getattr(c, "state", None)
                clusters[name] = st() if st else {}
            out = {"now": fmt_time(now), "volumes": vols, "modifications": mods, "clusters": clusters}
            if len(self.accounts) > 1:   # an organization: which account holds which volume
                out["accounts"] = {a.id: {"status": a.status,
                                          "volumes": [v for ids in a.by_region.values() for v in ids]}
                                   for a in self.accounts.values()}
            return out


class _FakeServer:
    def __init__(self, tls):
        self.ssl_ctx = True if tls else None


def parse_http_date(text):
    from email.utils import parsedate_to_datetime
    return parsedate_to_datetime(text).timestamp()


# --------------------------------------------------------------------------- control endpoint


class ControlApp:
    """Plain-HTTP JSON control endpoint used by `ebssim ctl`."""

    def __init__(self, sim):
        self.sim = sim

    def handle(self, req):
        def ok(obj, status=200):
            return Response(status, {"Content-Type": "application/json"},
                            json.dumps(obj, indent=None, sort_keys=False) + "\n")
        try:
            body = json.loads(req.body) if req.body.strip() else {}
        except ValueError:
            return ok({"error": "body is not JSON"}, 400)
        q = urllib.parse.parse_qs(req.query)
        path = req.path.rstrip("/")
        if path == "/advance" and req.method == "POST":
            self.sim.advance(float(body.get("seconds", 0)))
            return ok({"now": fmt_time(self.sim.now())})
        if path == "/state":
            return ok(self.sim.state())
        if path == "/requests":
            with self.sim.lock:
                items = list(self.sim.requests)
            svc = (q.get("service") or [None])[0]
            if svc:
                items = [e for e in items if e.get("service") == svc]
            return ok(items)
        if path == "/concurrency":
            return ok(CONCURRENCY.report())
        if path == "/concurrency/reset" and req.method == "POST":
            CONCURRENCY.reset()
            return ok({"ok": True})
        if path == "/reset-requests" and req.method == "POST":
            with self.sim.lock:
                self.sim.requests = []
            return ok({"ok": True})
        if path == "/delete-volume" and req.method == "POST":
            vid = body.get("volume_id") or ""
            with self.sim.lock:
                vol = self.sim.volumes.get(vid)
                try:
                    self.sim.delete_volume(vol["region"] if vol else "", vid, detach=True)
                except ApiError as err:
                    return ok({"error": "%s: %s" % (err.code, err.message)}, 404)
            return ok({"ok": True, "deleted": vid})
        if path == "/held":
            with self.sim.hold_cv:
                return ok([dict(h) for h in self.sim.held])
        if path == "/release" and req.method == "POST":
            return ok({"released": self.sim.release_held()})
        setters = {"/fault": self.sim.add_fault, "/policy": self.sim.set_policy}
        if path in setters and req.method == "POST":
            try:
                setters[path](body)
            except ValueError as err:
                return ok({"error": str(err)}, 400)
            return ok({"ok": True})
        if path in ("/trail", "/modify-volume") and req.method == "POST" and self.sim.trail:
            answer, status = self.sim.trail.control(path, body)
            return ok(answer, status)
        if path in ("", "/healthz"):
            return ok({"ok": True, "now": fmt_time(self.sim.now())})
        return ok({"error": "no such control path %s" % req.path}, 404)


# --------------------------------------------------------------------------- kube serving


class KubeApp:
    """Adapter: HTTP request -> KubeCluster.handle()."""

    def __init__(self, sim, cluster):
        self.sim = sim
        self.cluster = cluster

    def handle(self, req):
        status, headers, body = self.cluster.handle(req.method, req.path, req.query, req.headers,
                                                    req.body, req.client_cert_cn)
        headers = dict(headers or {})
        if status == 0 or headers.get("X-Ebssim-Fault") == "drop":
            # the kube module's DROP marker: answer 200 and close the connection mid-body
            return Response(200, {"Content-Type": "application/json"},
                            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}',
                            fault="drop")
        return Response(status, headers, body or b"")


def _load_kube_module():
    try:
        import ebssim_kube  # noqa: F401
    except ImportError as err:
        if getattr(err, "name", None) == "ebssim_kube":
            return None
        raise
    return ebssim_kube


# --------------------------------------------------------------------------- serve


def load_scenario(name_or_path):
    path = name_or_path
    if not os.path.exists(path):
        path = os.path.join(SCENARIO_DIR, name_or_path + ".json")
    with open(path) as f:
        return json.load(f)


def _write(path, text, mode=0o644):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def _yaml_scalar(v):
    return json.dumps(v)  # JSON strings are valid YAML scalars


def render_kubeconfig(sim, clusters, state_dir):
    """kubeconfig in YAML (written by hand: stdlib has no YAML emitter; JSON-quoted scalars)."""
    ca = os.path.join(state_dir, "ca.crt")
    lines = ["apiVersion: v1", "kind: Config", "preferences: {}", "clusters:"]
    for spec in clusters:
        lines += ["- name: %s" % _yaml_scalar(spec["name"]), "  cluster:",
                  "    server: %s" % _yaml_scalar(spec["server"]),
                  "    certificate-authority: %s" % _yaml_scalar(ca)]
    lines.append("users:")
    contexts = []
    for spec in clusters:
        default_user = None
        for u in spec.get("users") or []:
            uname = "%s@%s" % (u["name"], spec["name"])
            lines += ["- name: %s" % _yaml_scalar(uname), "  user:"]
            if u.get("token"):
                lines.append("    token: %s" % _yaml_scalar(u["token"]))
                default_user = default_user or uname
            elif u.get("client_cert"):
                cert, key = sim.ca.client_cert(u["name"], org=u.get("group"))
                lines += ["    client-certificate: %s" % _yaml_scalar(cert),
                          "    client-key: %s" % _yaml_scalar(key)]
            elif u.get("eks_principal"):
                p = sim.principals_by_name.get(u["eks_principal"], {})
                region = spec.get("region") or sim.default_region
                lines += ["    exec:", "      apiVersion: client.authentication.k8s.io/v1beta1",
                          "      command: aws",
                          "      args: %s" % json.dumps(["--region", region, "eks", "get-token",
                                                         "--cluster-name",
                                                         spec.get("eks_name") or spec["name"],
                                                         "--output", "json"]),
                          "      interactiveMode: Never", "      env:"]
                env = {"AWS_ACCESS_KEY_ID": p.get("access_key_id", ""),
                       "AWS_SECRET_ACCESS_KEY": p.get("secret_access_key", ""),
                       "AWS_ENDPOINT_URL_STS": sim.endpoints.get("sts", ""),
                       "AWS_CA_BUNDLE": ca}
                if p.get("session_token"):
                    env["AWS_SESSION_TOKEN"] = p["session_token"]
                for k, v in env.items():
                    lines += ["      - name: %s" % k, "        value: %s" % _yaml_scalar(v)]
            else:
                lines.append("    {}")
        if default_user is None and spec.get("users"):
            default_user = "%s@%s" % (spec["users"][0]["name"], spec["name"])
        contexts.append((spec["name"], default_user))
    if len(lines) and lines[-1] == "users:":
        lines[-1] = "users: []"
    lines.append("contexts:" if contexts else "contexts: []")
    for name, user in contexts:
        lines += ["- name: %s" % _yaml_scalar(name), "  context:",
                  "    cluster: %s" % _yaml_scalar(name)]
        if user:
            lines.append("    user: %s" % _yaml_scalar(user))
    if contexts:
        lines.append("current-context: %s" % _yaml_scalar(contexts[0][0]))
    if lines[3] == "clusters:" and not clusters:
        lines[3] = "clusters: []"
    return "\n".join(lines) + "\n"


def serve(args):
    import ebssim_aws
    state_dir = os.path.abspath(args.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    for stale in ("ready", "pid", "ctl.url", "env"):
        try:
            os.unlink(os.path.join(state_dir, stale))
        except FileNotFoundError:
            pass
    import gc
    gc.disable()  # loading a large scenario makes millions of objects; collecting meanwhile is waste
    scenario = load_scenario(args.scenario)
    sim = Sim(scenario, state_dir, seed=args.seed, time_scale=args.time_scale)
    if getattr(args, "pricing_dir", None):
        sim.pricing_dir = os.path.abspath(args.pricing_dir)
    sim.ca = CA(os.path.join(state_dir, "pki"))
    _write(os.path.join(state_dir, "ca.crt"), open(sim.ca.cert_path).read())
    cert, key = sim.ca.issue(["localhost", "127.0.0.1"])
    tls = server_ssl_context(cert, key)

    sim.container_token = secrets.token_urlsafe(24)
    _write(os.path.join(state_dir, "container-token"), sim.container_token, 0o600)
    _write(os.path.join(state_dir, "web-identity-token"),
           scenario.get("web_identity_token") or "eyJhbGciOiJSUzI1NiJ9.ebssim.web-identity", 0o600)

    apis = ebssim_aws.AwsApis(sim)
    sim.aws = apis
    servers = {}
    latency_s = max(0.0, float(getattr(args, "latency_ms", 0) or 0)) / 1000.0
    import ebssim_trail
    sim.trail = ebssim_trail.Trail(sim, getattr(args, "trail_delay", None))
    for service in ("ec2", "monitoring", "pricing", "sts", "cloudtrail", "organizations", "s3"):
        servers[service] = HTTPServer(apis.app(service), tls, service, latency_s)
    servers["imds"] = HTTPServer(apis.app("imds"), None, "imds")
    servers["container"] = HTTPServer(apis.app("container"), None, "container")
    servers["ctl"] = HTTPServer(ControlApp(sim), None, "ctl")
    for name, srv in servers.items():
        sim.endpoints[name] = srv.url

    kube_mod = _load_kube_module()
    cluster_specs = []
    kube_tls = server_ssl_context(cert, key, client_ca=sim.ca.cert_path)
    for spec in scenario.get("clusters") or []:
        srv = HTTPServer(None, kube_tls, "kube-" + spec["name"], latency_s)
        spec["server"] = srv.url
        cluster_specs.append(spec)
        if kube_mod is not None:
            cluster = kube_mod.KubeCluster(sim, spec)
            sim.kube[spec["name"]] = cluster
            srv.app = KubeApp(sim, cluster)
        else:
            srv.app = _NoKubeApp()
        servers["kube:" + spec["name"]] = srv

    gc.freeze()  # everything loaded so far lives until exit: keep it out of collections
    gc.enable()
    threading.Thread(target=_sigv4_class, name="warm-botocore", daemon=True).start()
    for srv in servers.values():
        srv.start()

    admin = sim.principals_by_name.get("admin") or next(
        (p for p in sim.principals_by_name.values() if p.get("access_key_id")), {})
    env = [
        ("AWS_ENDPOINT_URL_EC2", sim.endpoints["ec2"]),
        ("AWS_ENDPOINT_URL_CLOUDWATCH", sim.endpoints["monitoring"]),
        ("AWS_ENDPOINT_URL_MONITORING", sim.endpoints["monitoring"]),
        ("AWS_ENDPOINT_URL_PRICING", sim.endpoints["pricing"]),
        ("AWS_ENDPOINT_URL_STS", sim.endpoints["sts"]),
        ("AWS_ENDPOINT_URL_CLOUDTRAIL", sim.endpoints["cloudtrail"]),
        ("AWS_ENDPOINT_URL_ORGANIZATIONS", sim.endpoints["organizations"]),
        ("AWS_ENDPOINT_URL_S3", sim.endpoints["s3"]),
        ("AWS_ACCESS_KEY_ID", admin.get("access_key_id", "")),
        ("AWS_SECRET_ACCESS_KEY", admin.get("secret_access_key", "")),
    ]
    if admin.get("session_token"):
        env.append(("AWS_SESSION_TOKEN", admin["session_token"]))
    env += [
        ("AWS_REGION", sim.default_region),
        ("AWS_DEFAULT_REGION", sim.default_region),
        ("AWS_CA_BUNDLE", os.path.join(state_dir, "ca.crt")),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", sim.endpoints["imds"]),
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", sim.endpoints["container"] + "/v1/credentials"),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", os.path.join(state_dir, "container-token")),
        ("EBSSIM_WEB_IDENTITY_TOKEN_FILE", os.path.join(state_dir, "web-identity-token")),
        ("EBSSIM_CTL", sim.endpoints["ctl"]),
        ("KUBECONFIG", os.path.join(state_dir, "kubeconfig")),
    ]
    role = next((p for p in sim.principals_by_name.values() if p.get("role_arn")), None)
    if role:
        env.append(("EBSSIM_ROLE_ARN", role["role_arn"]))
    _write(os.path.join(state_dir, "env"), ebssim_envfile.format_env(env))
    _write(os.path.join(state_dir, "kubeconfig"), render_kubeconfig(sim, cluster_specs, state_dir), 0o600)
    _write(os.path.join(state_dir, "ctl.url"), sim.endpoints["ctl"] + "\n")
    _write(os.path.join(state_dir, "pid"), "%d\n" % os.getpid())
    _write(os.path.join(state_dir, "ready"), "ready\n")

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(0.25):
        try:
            sim.tick()
        except Exception:  # a tick bug must not kill the server
            import traceback
            traceback.print_exc()
    for srv in servers.values():
        srv.shutdown()
        srv.server_close()
    for cluster in sim.kube.values():
        close = getattr(cluster, "close", None)
        if close:
            close()
    try:
        os.unlink(os.path.join(state_dir, "ready"))
    except FileNotFoundError:
        pass
    return 0


class _NoKubeApp:
    def handle(self, req):
        return Response(503, {"Content-Type": "application/json"},
                        json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                    "message": "ebssim: Kubernetes module not available",
                                    "code": 503}))
