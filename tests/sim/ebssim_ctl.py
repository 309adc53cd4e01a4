"""ebssim ctl: talks to a running simulator's plain-HTTP control endpoint (the state dir's
`ctl.url`; the paths are in CONTRACT.md) and prints its answer.

Kept apart from ebssim_core on purpose: cases run `ebssim ctl` hundreds of times (a state read,
an advance, a fault between every two commands), and a process that imports only os, sys, json
and socket starts in a quarter of the CPU time of one that imports the simulator (http.server,
ssl, botocore's helpers) or urllib. So: no imports beyond those, one HTTP/1.1 request per run
over a plain socket to 127.0.0.1.

Exit codes: 0 answered, 1 the endpoint refused (its answer on stderr), 2 bad arguments.
"""

import json
import os
import socket
import sys

# what each operation sends: (method, path); the body is built from the argument below
ROUTES = {"advance": ("POST", "/advance"), "state": ("GET", "/state"), "requests": ("GET", "/requests"),
          "fault": ("POST", "/fault"), "reset-requests": ("POST", "/reset-requests"), "held": ("GET", "/held"),
          "release": ("POST", "/release"), "trail": ("POST", "/trail"), "modify-volume": ("POST", "/modify-volume"),
          "policy": ("POST", "/policy"), "delete-volume": ("POST", "/delete-volume")}
PRETTY = ("state", "requests", "held")  # printed indented, as a person reads them


def _quote(text):
    """Percent-encodes a query value (only unreserved bytes pass), as urllib.parse.quote would."""
    keep = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    return "".join(chr(b) if b in keep else "%%%02X" % b for b in text.encode())


def call(base, method, path, body=None, timeout=60):
    """One request to the control endpoint at base (http://127.0.0.1:PORT) -> (status, text)."""
    hostport = base.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    data = json.dumps(body).encode() if body is not None else b""
    head = ("%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % (method, path, hostport, len(data))).encode()
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(head + data)
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    raw = b"".join(chunks)
    header, _, payload = raw.partition(b"\r\n\r\n")
    lines = header.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            payload = payload[:int(value)]
    return status, payload.decode()


def ctl(args):
    with open(os.path.join(args.state_dir, "ctl.url")) as f:
        base = f.read().strip()
    op = args.op
    if op not in ROUTES:
        sys.stderr.write("ebssim ctl: unknown operation %r\n" % op)
        return 2
    method, path = ROUTES[op]
    body = {} if method == "POST" else None
    if op == "advance":
        body = {"seconds": float(args.arg)}
    elif op == "requests" and args.service:
        path += "?service=" + _quote(args.service)
    elif op in ("fault", "trail", "modify-volume", "policy"):
        try:
            body = json.loads(args.arg if op == "fault" else (args.arg or "{}"))
        except (TypeError, ValueError):
            sys.stderr.write("ebssim ctl %s: SPEC must be JSON\n" % op)
            return 2
    elif op == "delete-volume":
        if not args.arg:
            sys.stderr.write("ebssim ctl delete-volume: VOLUME_ID is required\n")
            return 2
        body = {"volume_id": args.arg}
    status, text = call(base, method, path, body)
    if status >= 300:
        sys.stderr.write(text)
        return 1
    if op in PRETTY:
        sys.stdout.write(json.dumps(json.loads(text), indent=2) + "\n")
    else:
        sys.stdout.write(text)
    return 0
