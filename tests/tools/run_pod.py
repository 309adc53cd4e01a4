#!/usr/bin/python3
"""run_pod.py - runs the pod of a CronJob (or Job) from built YAML the way the kubelet would, for
cases: the init containers one after another, then the container, each only if the previous one
exited 0. Usage: run_pod.py YAML KIND/NAME EM ROOT

  * the command is the container's command + args, taken as they are; the image's binary
    (/usr/local/bin/ebsmigrate) is replaced by EM, the binary under test;
  * every volumeMount's mountPath becomes ROOT/VOLUME-NAME (created): an argument or env value
    that starts with a mountPath is rewritten to it (as the simulator's fio pods do);
  * the environment is this process's plus the container's env (value only; valueFrom and $(VAR)
    references are refused, so a case never runs something other than what the YAML says).

Prints `== CONTAINER: exit N` after each and exits with the first non-zero status (or 0).
"""

import os
import subprocess
import sys

import yaml

BINARY = "/usr/local/bin/ebsmigrate"


def main():
    path, ref, em, root = sys.argv[1:5]
    kind, _, name = ref.partition("/")
    obj = next((d for d in yaml.safe_load_all(open(path)) if d and d.get("kind") == kind
                and d["metadata"]["name"] == name), None)
    if obj is None:
        sys.exit("run_pod: no %s in %s" % (ref, path))
    job = obj["spec"]["jobTemplate"]["spec"] if kind == "CronJob" else obj["spec"]
    pod = job["template"]["spec"]
    for c in (pod.get("initContainers") or []) + pod["containers"]:
        mounts = sorted(((m["mountPath"].rstrip("/"), os.path.join(root, m["name"]))
                         for m in c.get("volumeMounts") or []), key=lambda m: -len(m[0]))
        for _, local in mounts:
            os.makedirs(local, exist_ok=True)

        def local_path(v):
            for mp, local in mounts:
                if v == mp or v.startswith(mp + "/"):
                    return local + v[len(mp):]
            return v
        argv = (c.get("command") or []) + (c.get("args") or [])
        if not argv or argv[0] != BINARY:
            sys.exit("run_pod: container %s does not run %s" % (c["name"], BINARY))
        env = dict(os.environ)
        for e in c.get("env") or []:
            if "value" not in e or "$(" in str(e["value"]):
                sys.exit("run_pod: container %s: env %s is not a plain value" % (c["name"], e["name"]))
            env[e["name"]] = local_path(str(e["value"]))
        if any("$(" in a for a in argv):
            sys.exit("run_pod: container %s: $(VAR) in its arguments" % c["name"])
        cmd = [em] + [local_path(a) for a in argv[1:]]
        sys.stdout.flush()
        rc = subprocess.run(cmd, env=env).returncode
        print("== %s: exit %d" % (c["name"], rc), flush=True)
        if rc != 0:
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
