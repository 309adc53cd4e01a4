#!/usr/bin/python3
"""pty_stdout.py COLUMNS OUTFILE CMD... - runs CMD with its stdout on a pseudo-terminal of
COLUMNS columns (COLUMNS unset in its environment, so the width comes from TIOCGWINSZ) and
stderr away from it, writes every byte the terminal received to OUTFILE (line ends as the
terminal's \\r\\n turned back into \\n) and exits with CMD's status. Used by the table cases."""
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

cols = int(sys.argv[1])
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
env = dict(os.environ)
env.pop("COLUMNS", None)
p = subprocess.Popen(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.DEVNULL, env=env)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: every writer closed the terminal
        break
    if not chunk:
        break
    data += chunk
rc = p.wait()
with open(sys.argv[2], "wb") as f:
    f.write(data.replace(b"\r\n", b"\n"))
sys.exit(rc)
