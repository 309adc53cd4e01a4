#!/usr/bin/python3
"""webhook_receiver.py - a loopback HTTPS incoming-webhook receiver for the notification cases.

Usage: webhook_receiver.py DIR [STATUS...]

Makes a self-signed certificate for 127.0.0.1 with openssl in DIR (ca.pem, key.pem), listens on
127.0.0.1 with TLS on a free port, writes the port to DIR/port, and records every request as one
JSON line in DIR/requests.jsonl: method, path, content_type, body (text). The Nth request is
answered with the Nth STATUS (default 200; the last one repeats), body "ok" for 2xx, else
"invalid_token". A STATUS may name another body: `403:echo` answers "invalid_token for PATH" (a
server that repeats the URL's path, and so its token), `400:json` Mattermost's JSON error with the
path in its message. `hang` reads the request, records it and never answers. Requests are served
on threads of their own, so a hanging one does not hold up the next. Stops after 60 s or on
SIGTERM.
"""
import http.server
import json
import os
import signal
import ssl
import subprocess
import sys
import threading


def main():
    d = sys.argv[1]
    statuses = sys.argv[2:] or ["200"]
    cert, key = os.path.join(d, "ca.pem"), os.path.join(d, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    seen = []
    lock = threading.Lock()

    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n).decode("utf-8", "replace")
            with lock:
                seen.append(1)
                spec = statuses[min(len(seen), len(statuses)) - 1]
                with open(os.path.join(d, "requests.jsonl"), "a") as f:
                    f.write(json.dumps({"method": "POST", "path": self.path,
                                        "content_type": self.headers.get("Content-Type"), "body": body}) + "\n")
            if spec == "hang":
                stop.wait()
                return
            status, _, kind = spec.partition(":")
            status = int(status)
            reply = b"ok" if 200 <= status < 300 else b"invalid_token"
            if kind == "echo":
                reply = ("invalid_token for " + self.path).encode()
            elif kind == "json":
                reply = json.dumps({"id": "web.incoming_webhook.invalid.app_error", "message":
                                    "Invalid webhook " + self.path, "status_code": status}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *a):
            pass

    stop = threading.Event()
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    s.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    s.socket = ctx.wrap_socket(s.socket, server_side=True)
    signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=s.shutdown).start())
    threading.Timer(60, s.shutdown).start()
    with open(os.path.join(d, "port.tmp"), "w") as f:
        f.write(str(s.server_address[1]))
    os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
    s.serve_forever()
    os._exit(0)


if __name__ == "__main__":
    main()
