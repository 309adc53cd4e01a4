#!/usr/bin/python3
"""pty_stdout.py COLUMNS OUTFILE CMD... - runs CMD with its stdout on a pseudo-terminal of
COLUMNS columns (COLUMNS unset in its environment, so the width comes from TIOCGWINSZ) and
stderr away from it, writes every byte the terminal received to OUTFILE (line ends as the
terminal's \\r\\n turned back into \\n) and exits with CMD's status. Used by the table cases."""
import os
import subprocess
import sys

from ptyrun import run_on_pty

env = dict(os.environ)
env.pop("COLUMNS", None)
data, rc = run_on_pty(sys.argv[3:], int(sys.argv[1]), "stdout", stderr=subprocess.DEVNULL, env=env)
with open(sys.argv[2], "wb") as f:
    f.write(data.replace(b"\r\n", b"\n"))
sys.exit(rc)
