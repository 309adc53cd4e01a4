#!/usr/bin/python3
"""slow_http_client.py - clients that try to hold an HTTP server down, for the metrics --listen cases.

  slow_http_client.py hold PORT N SOURCE[,SOURCE...] -- CMD...
      Opens N connections to 127.0.0.1:PORT, spread over the SOURCE addresses (127.0.0.2, ...; the
      client side of each connection is bound to one), each sending the first line of a request and
      a header line, never the end of the headers: what "slowloris" clients do. Then runs CMD (a
      scrape) and prints "CMD: exit=RC", then, once the server has had 3 s to act, "held open: K"
      (connections the server has not closed) and "held open per source: S=K ..." (sources in the
      order given).
  slow_http_client.py drip PORT SECONDS
      One connection that sends a request one header line per second (never its end), as long as
      the server keeps it open, for at most SECONDS. Prints "closed by the server after about N s"
      (N rounded down to a multiple of 5), or "still open after SECONDS s".
"""
import select
import socket
import subprocess
import sys
import time


def connect(port, source=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if source:
        s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def closed_by_server(s):
    """True when the server closed (or reset) the connection: readable with nothing, or an error."""
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return False
    try:
        return s.recv(4096, socket.MSG_PEEK) == b""
    except OSError:
        return True


def hold(port, n, sources, cmd):
    conns = []
    for i in range(n):
        src = sources[i % len(sources)]
        s = connect(port, src)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        conns.append((src, s))
    rc = subprocess.run(cmd, shell=False).returncode
    print("%s: exit=%d" % (" ".join(cmd[:1]), rc), flush=True)
    time.sleep(3)
    open_by = {src: 0 for src in sources}
    for src, s in conns:
        if not closed_by_server(s):
            open_by[src] += 1
    print("held open: %d" % sum(open_by.values()))
    print("held open per source: " + " ".join("%s=%d" % (src, open_by[src]) for src in sources))


def drip(port, seconds):
    s = connect(port)
    lines = [b"GET /metrics HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n"] + [b"X-Slow-%d: 1\r\n" % i for i in range(1000)]
    start = time.monotonic()
    for line in lines:
        if closed_by_server(s):
            break
        try:
            s.sendall(line)
        except OSError:
            break
        if time.monotonic() - start >= seconds:
            print("still open after %d s" % seconds)
            return
        time.sleep(1)
    took = int(time.monotonic() - start)
    print("closed by the server after about %d s" % (took // 5 * 5))


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "hold":
        sep = sys.argv.index("--")
        hold(port, int(sys.argv[3]), sys.argv[4].split(","), sys.argv[sep + 1:])
    elif mode == "drip":
        drip(port, int(sys.argv[3]))
    else:
        sys.exit("usage: slow_http_client.py hold PORT N SOURCES -- CMD... | drip PORT SECONDS")


if __name__ == "__main__":
    main()
