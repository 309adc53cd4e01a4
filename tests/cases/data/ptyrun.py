"""ptyrun.py - the pseudo-terminal runner pty_stderr.py and pty_stdout.py share: run a command
with one of its streams on a terminal of a given width and collect every byte the terminal got."""
import fcntl
import os
import pty
import struct
import subprocess
import termios


def run_on_pty(cmd, cols, stream, **popen):
    """Runs cmd with `stream` ("stdout" or "stderr") on a 50-row, cols-column pseudo-terminal and
    stdin away from it (popen sets the other stream, env...). Returns (bytes received, status)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, **{stream: slave}, **popen)
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
    return data, p.wait()
