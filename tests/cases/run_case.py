#!/usr/bin/python3
"""run_case.py - runs one tests/cases/NNNN-name.case file (format: tests/sim/CONTRACT.md and
docs/TESTING.md). Exit 0 pass, 1 fail, 77 skipped (a requirement is missing).

Usage: run_case.py --bin PATH/ebsmigrate --source SRC_DIR CASE_FILE
Environment: UPDATE_GOLDEN=1 rewrites `stdout-file` goldens from the actual output.
"""
import argparse
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sim"))
from ebssim_envfile import read_env_file  # noqa: E402  (the simulator's env file: one parser)

SECTIONS = {"description", "scenario", "setup", "command", "exit", "stdout", "stdout-file",
            "stdout-contains", "stderr-contains", "stdout-not-contains", "stderr-not-contains",
            "check", "requires", "timeout", "sim-args"}


def parse_case(path):
    sections, name, lines = {}, None, []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("--- "):
                if name is not None:
                    sections[name] = "\n".join(lines)
                name, lines = line[4:].strip(), []
                if name not in SECTIONS:
                    raise SystemExit(f"{path}: unknown section '--- {name}'")
            elif name is None:
                if line.strip():
                    raise SystemExit(f"{path}: text before the first section: {line!r}")
            else:
                lines.append(line)
    if name is not None:
        sections[name] = "\n".join(lines)
    if "command" not in sections:
        raise SystemExit(f"{path}: no '--- command' section")
    return sections


def nonblank(text):
    return [l for l in (text or "").split("\n") if l.strip()]


def requirement_missing(req, aws_cli):
    if req == "sim":
        return None
    if req == "fio":
        return None if shutil.which("fio") else "fio is not installed"
    if req == "aws2":
        return None if os.path.exists(aws_cli) else "Debian AWS CLI v2 (/usr/bin/aws) is not installed"
    if req == "kubectl":
        return None if shutil.which("kubectl") else "kubectl is not installed"
    if req == "chromium":
        return None if shutil.which("chromium") else "chromium is not installed"
    if req == "root":
        return None if os.geteuid() == 0 else "needs root"
    if req == "no-sanitize":
        return "not run under sanitizers" if os.environ.get("EM_SANITIZED") else None
    return f"unknown requirement '{req}'"


class Sim:
    def __init__(self, src, scenario, tmp, extra_args):
        self.state = os.path.join(tmp, "sim")
        os.makedirs(self.state)
        self.ebssim = os.path.join(src, "tests", "sim", "ebssim")
        self.log = open(os.path.join(tmp, "sim.log"), "w")
        args = ["/usr/bin/python3", self.ebssim, "serve", "--scenario", scenario, "--state-dir", self.state]
        args += extra_args
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 30
        while not os.path.exists(os.path.join(self.state, "ready")):
            if self.proc.poll() is not None:
                raise RuntimeError(f"simulator exited with {self.proc.returncode}; see {self.log.name}:\n" +
                                   open(self.log.name).read()[-3000:])
            if time.time() > deadline:
                raise RuntimeError("simulator did not become ready in 30 s")
            time.sleep(0.05)

    def env(self):
        return read_env_file(os.path.join(self.state, "env"))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def run_bash(script, env, cwd, timeout, stdout_path=None, stderr_path=None, errexit=False):
    """errexit: every line is an assertion (check sections); commands print exit codes instead."""
    out = open(stdout_path, "wb") if stdout_path else subprocess.PIPE
    err = open(stderr_path, "wb") if stderr_path else subprocess.PIPE
    try:
        prologue = "set -eo pipefail\n" if errexit else "set -o pipefail\n"
        if os.environ.get("EM_CASE_TRACE"):  # which line of a section failed: set -x to its stderr
            prologue += "PS4='+ ${EPOCHREALTIME} '; set -x\n"  # with wall times: where a case waits
        p = subprocess.run(["bash", "-c", prologue + script], env=env, cwd=cwd, stdout=out,
                           stderr=err, timeout=timeout, stdin=subprocess.DEVNULL)
        return p
    finally:
        if stdout_path:
            out.close()
        if stderr_path:
            err.close()


def cost(started):
    """Wall and CPU seconds of the case so far (the simulator and every command included): where
    the suite's time goes (docs/TESTING.md, "How long the tests take")."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return f"{time.monotonic() - started:.1f} s wall, {ru.ru_utime + ru.ru_stime:.1f} s CPU"


def main():
    started = time.monotonic()
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("case")
    a = ap.parse_args()
    case = parse_case(a.case)
    name = os.path.basename(a.case)
    for req in nonblank(case.get("requires")):
        why = requirement_missing(req.strip(), "/usr/bin/aws")
        if why:
            print(f"SKIP {name}: {why}")
            return 77
    if "scenario" in case and not os.path.exists("/usr/bin/python3"):
        print(f"SKIP {name}: /usr/bin/python3 is needed for the simulator")
        return 77

    tmp = tempfile.mkdtemp(prefix="emcase-")
    sim = None
    ok = True
    try:
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("AWS_") or k in ("KUBECONFIG",):
                del env[k]
        env.update({
            "EM": os.path.abspath(a.bin), "SRC": os.path.abspath(a.source), "TMP": tmp,
            "CASE_DIR": os.path.dirname(os.path.abspath(a.case)),
            "EBSSIM": os.path.join(os.path.abspath(a.source), "tests", "sim", "ebssim"),
            "XDG_STATE_HOME": os.path.join(tmp, "state"), "HOME": os.path.join(tmp, "home"),
            "NO_COLOR": "1", "LC_ALL": "C.UTF-8", "TZ": "UTC",
        })
        os.makedirs(env["HOME"])
        if "scenario" in case:
            scen = case["scenario"].strip()
            if "/" in scen and not os.path.isabs(scen):  # a scenario file in the tree, e.g. tests/cases/data/x.json
                scen = os.path.join(env["SRC"], scen)
            sim = Sim(env["SRC"], scen, tmp, case.get("sim-args", "").split())
            env.update(sim.env())
            env["SIM"] = sim.state
        timeout = int(case.get("timeout", "300").strip() or 300)
        if "setup" in case:
            p = run_bash(case["setup"], env, tmp, timeout)
            if p.returncode != 0:
                print(f"FAIL {name}: setup exited {p.returncode}\n{p.stdout.decode(errors='replace')}"
                      f"{p.stderr.decode(errors='replace')}")
                return 1
        out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
        p = run_bash(case["command"], env, tmp, timeout, out_path, err_path)
        out = open(out_path, encoding="utf-8", errors="replace").read()
        err = open(err_path, encoding="utf-8", errors="replace").read()
        want_exit = int((case.get("exit") or "0").strip() or 0)
        problems = []
        if p.returncode != want_exit:
            problems.append(f"exit code {p.returncode}, expected {want_exit}")
        if "stdout" in case:
            want = case["stdout"]
            if out.rstrip("\n") != want.rstrip("\n"):
                problems.append("stdout differs from the expected text")
        if "stdout-file" in case:
            golden = os.path.join(env["CASE_DIR"], case["stdout-file"].strip())
            if os.environ.get("UPDATE_GOLDEN") == "1":
                with open(golden, "w", encoding="utf-8") as f:
                    f.write(out)
            elif not os.path.exists(golden):
                problems.append(f"golden file {golden} is missing (run with UPDATE_GOLDEN=1)")
            elif open(golden, encoding="utf-8").read() != out:
                problems.append(f"stdout differs from {case['stdout-file'].strip()}")
                d = subprocess.run(["diff", "-u", golden, out_path], capture_output=True, text=True)
                print(d.stdout[:6000])
        for s in nonblank(case.get("stdout-contains")):
            if s not in out:
                problems.append(f"stdout lacks: {s}")
        for s in nonblank(case.get("stderr-contains")):
            if s not in err:
                problems.append(f"stderr lacks: {s}")
        for s in nonblank(case.get("stdout-not-contains")):
            if s in out:
                problems.append(f"stdout contains: {s}")
        for s in nonblank(case.get("stderr-not-contains")):
            if s in err:
                problems.append(f"stderr contains: {s}")
        if "check" in case and not problems:
            env2 = dict(env, OUT=out_path, ERR=err_path)
            c = run_bash(case["check"], env2, tmp, timeout, errexit=True)
            if c.returncode != 0:
                problems.append(f"check exited {c.returncode}:\n{c.stdout.decode(errors='replace')}"
                                f"{c.stderr.decode(errors='replace')}")
        if problems:
            ok = False
            print(f"FAIL {name}")
            for pr in problems:
                print("  - " + pr)
            print("--- stdout (first 4000 bytes)\n" + out[:4000])
            print("--- stderr (first 4000 bytes)\n" + err[:4000])
        else:
            print(f"PASS {name} ({cost(started)})")
    finally:
        if sim:
            sim.stop()
        if ok and not os.environ.get("EM_KEEP_TMP"):
            shutil.rmtree(tmp, ignore_errors=True)
        elif not ok:
            print(f"(kept {tmp})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
