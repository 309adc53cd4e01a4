#!/usr/bin/python3
"""pty_stderr.py OUTFILE CMD... - runs CMD with its stderr on a pseudo-terminal (200 columns)
and stdout/stdin away from it, writes every byte the terminal received to OUTFILE and exits
with CMD's status. Used by the progress-line cases."""
import sys

from ptyrun import run_on_pty

with open(sys.argv[1] + ".stdout", "wb") as out:
    data, rc = run_on_pty(sys.argv[2:], 200, "stderr", stdout=out)
with open(sys.argv[1], "wb") as f:
    f.write(data)
sys.exit(rc)
