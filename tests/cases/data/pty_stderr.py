#!/usr/bin/python3
"""pty_stderr.py OUTFILE CMD... - runs CMD with its stderr on a pseudo-terminal (200 columns)
and stdout/stdin away from it, writes every byte the terminal received to OUTFILE and exits
with CMD's status. Used by the progress-line cases."""
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
with open(sys.argv[1] + ".stdout", "wb") as out:
    p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=out, stderr=slave)
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
with open(sys.argv[1], "wb") as f:
    f.write(data)
sys.exit(rc)
