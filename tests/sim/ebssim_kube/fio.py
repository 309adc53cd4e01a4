"""ebssim_kube.fio: running a fio container locally and safely: PodRun (one container in a thread,
its own process group, stdout+stderr kept as the pod log), path joining that cannot escape the
pod's directory, the host-device guard and $(VAR) expansion of container commands.
Invariant: no path given to fio ever names a host device.
"""

import os
import re
import signal
import subprocess
import threading

# ----------------------------------------------------------------------------------------------
# fio pods

SHELLS = {"sh", "bash", "ash", "dash", "busybox"}
FIO_PATH_OPTS = {"filename", "directory", "output", "write_bw_log", "write_lat_log", "write_iops_log",
                 "write_hist_log", "opendir", "trigger-file", "ioengine_lib", "fdp_pli", "filename_format"}
HARMLESS_DEV = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/stdin", "/dev/stdout",
                "/dev/stderr", "/dev/fd/", "/dev/shm/")


def safe_join(base, rel):
    """base/rel, refusing to climb out of base."""
    p = os.path.normpath(os.path.join(base, str(rel).lstrip("/")))
    if p != base and not p.startswith(base.rstrip("/") + "/"):
        p = os.path.join(base, "_" + re.sub(r"[^A-Za-z0-9_.-]", "_", str(rel)))
    return p


def host_device(text):
    """The first /dev path in text that could touch a host device, or None."""
    for m in re.finditer(r"(?<![A-Za-z0-9_.-])/dev/[^\s:'\";,]*", text):
        p = m.group(0)
        if p.rstrip("/") == "/dev" or any(p == h or (h.endswith("/") and p.startswith(h)) for h in HARMLESS_DEV):
            continue
        return p
    return None


class PodRun:
    """One container process (fio) of one pod, run locally in a thread."""

    def __init__(self, cluster, key, uid, container, argv, cwd, env):
        self.cluster, self.key, self.uid, self.container = cluster, key, uid, container
        self.argv, self.cwd, self.env = argv, cwd, env
        self.log = bytearray()
        self.log_lock = threading.Lock()
        self.proc = None
        self.done = threading.Event()
        self.killed = False
        self.rc = None
        self.thread = threading.Thread(target=self._run, name="ebssim-pod-" + key, daemon=True)

    def start(self):
        self.thread.start()

    def _run(self):
        rc, err = None, None
        try:
            self.proc = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            if self.killed:
                self._killpg()
            while True:
                chunk = self.proc.stdout.read1(65536) if hasattr(self.proc.stdout, "read1") else self.proc.stdout.read(65536)
                if not chunk:
                    break
                with self.log_lock:
                    self.log += chunk
            rc = self.proc.wait()
            self.proc.stdout.close()
        except OSError as e:
            err = e
            with self.log_lock:
                self.log += ("exec %s: %s\n" % (self.argv[0] if self.argv else "", e.strerror or e)).encode()
        self.rc = rc
        try:
            self.cluster._container_exited(self, rc, err)
        finally:
            self.done.set()

    def _killpg(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def kill(self):
        self.killed = True
        if self.proc is not None and self.proc.poll() is None:
            self._killpg()

    def text(self):
        with self.log_lock:
            return bytes(self.log)


def expand_vars(s, env):
    """Kubernetes $(VAR) expansion ($$ escapes)."""
    def rep(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", rep, s)
