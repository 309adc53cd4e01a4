#!/usr/bin/python3
"""check_deploy.py - structural checks of a built kustomize overlay (`kubectl kustomize
deploy/overlays/X | check_deploy.py EM`), standing in for `kubectl apply --dry-run`, which needs
an API server even in client mode. Prints one line per problem and exits 1 if there was any,
else prints a summary line.

Checks:
  * every object has a known apiVersion/kind, a DNS-1123 name, and (namespaced kinds) namespace
    ebsmigrate;
  * every pod template: runAsNonRoot with a non-zero runAsUser, seccomp RuntimeDefault; every
    container readOnlyRootFilesystem, allowPrivilegeEscalation false, capabilities drop [ALL],
    memory request and limit, cpu request; volumeMounts name pod volumes; /tmp is a mounted
    volume (a read-only root needs one for TMPDIR); PVCs and the ServiceAccount exist in the build;
  * every container runs /usr/local/bin/ebsmigrate (the Dockerfile's path) and its arguments are
    accepted by the real binary EM (run with --help appended: an unknown option or a bad value of
    a parsed option fails);
  * bindings name roles and ServiceAccounts that exist in the build;
  * --publish-configmap NS/NAME and --require-configmap NS/NAME=KEY name ConfigMaps that a Role
    bound to the pod's ServiceAccount grants by resourceNames (patch / get), and the switch
    ConfigMap exists in the build.
"""

import re
import subprocess
import sys

import yaml

KINDS = {
    ("v1", "Namespace"): False, ("v1", "ServiceAccount"): True, ("v1", "ConfigMap"): True,
    ("v1", "PersistentVolumeClaim"): True, ("batch/v1", "CronJob"): True, ("batch/v1", "Job"): True,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): False,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): False,
    ("rbac.authorization.k8s.io/v1", "Role"): True, ("rbac.authorization.k8s.io/v1", "RoleBinding"): True,
}
NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
BINARY = "/usr/local/bin/ebsmigrate"


def main():
    em = sys.argv[1]
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    problems = []
    by_kind = {}
    for d in docs:
        kind, api = d.get("kind"), d.get("apiVersion")
        meta = d.get("metadata") or {}
        name = meta.get("name", "")
        by_kind.setdefault(kind, {})[(meta.get("namespace"), name)] = d
        where = "%s %s" % (kind, name)
        if (api, kind) not in KINDS:
            problems.append("%s: unexpected apiVersion/kind %s/%s" % (where, api, kind))
            continue
        if not NAME_RE.match(name or ""):
            problems.append("%s: name is not a DNS-1123 subdomain" % where)
        if KINDS[(api, kind)] and meta.get("namespace") != "ebsmigrate":
            problems.append("%s: namespace is %r, not ebsmigrate" % (where, meta.get("namespace")))
    if (None, "ebsmigrate") not in by_kind.get("Namespace", {}):
        problems.append("no Namespace ebsmigrate")

    def exists(kind, ns, name):
        return (ns, name) in by_kind.get(kind, {})

    for b in list(by_kind.get("RoleBinding", {}).values()) + list(by_kind.get("ClusterRoleBinding", {}).values()):
        ref = b.get("roleRef") or {}
        ns = b["metadata"].get("namespace") if ref.get("kind") == "Role" else None
        if not exists(ref.get("kind"), ns, ref.get("name")):
            problems.append("%s %s: roleRef %s %s is not in the build" % (b["kind"], b["metadata"]["name"],
                                                                           ref.get("kind"), ref.get("name")))
        for s in b.get("subjects") or []:
            if s.get("kind") == "ServiceAccount" and not exists("ServiceAccount", s.get("namespace"), s.get("name")):
                problems.append("%s %s: subject ServiceAccount %s/%s is not in the build"
                                % (b["kind"], b["metadata"]["name"], s.get("namespace"), s.get("name")))

    def granted(sa_ns, sa, verb, cm_ns, cm):
        """Does a Role in cm_ns bound to the ServiceAccount allow verb on ConfigMap cm by name?"""
        for rb in by_kind.get("RoleBinding", {}).values():
            if rb["metadata"].get("namespace") != cm_ns:
                continue
            if not any(s.get("kind") == "ServiceAccount" and s.get("name") == sa and s.get("namespace") == sa_ns
                       for s in rb.get("subjects") or []):
                continue
            role = by_kind.get("Role", {}).get((cm_ns, rb["roleRef"]["name"]))
            for rule in (role or {}).get("rules") or []:
                if "configmaps" in rule.get("resources", []) and verb in rule.get("verbs", []) and \
                        cm in (rule.get("resourceNames") or []):
                    return True
        return False

    n_containers = 0
    for cj in list(by_kind.get("CronJob", {}).values()) + list(by_kind.get("Job", {}).values()):
        where = "%s %s" % (cj["kind"], cj["metadata"]["name"])
        job = cj["spec"]["jobTemplate"]["spec"] if cj["kind"] == "CronJob" else cj["spec"]
        if cj["kind"] == "CronJob" and len(str(cj["spec"].get("schedule", "")).split()) != 5:
            problems.append("%s: schedule is not five cron fields" % where)
        pod = job["template"]["spec"]
        ns = cj["metadata"]["namespace"]
        psc = pod.get("securityContext") or {}
        if psc.get("runAsNonRoot") is not True or not psc.get("runAsUser"):
            problems.append("%s: pod must set runAsNonRoot and a non-zero runAsUser" % where)
        if (psc.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
            problems.append("%s: seccompProfile is not RuntimeDefault" % where)
        sa = pod.get("serviceAccountName")
        if not exists("ServiceAccount", ns, sa):
            problems.append("%s: serviceAccountName %r is not in the build" % (where, sa))
        vols = {v["name"]: v for v in pod.get("volumes") or []}
        for v in vols.values():
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if claim and not exists("PersistentVolumeClaim", ns, claim):
                problems.append("%s: volume %s claims %r, not in the build" % (where, v["name"], claim))
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            n_containers += 1
            cw = "%s container %s" % (where, c["name"])
            sc = c.get("securityContext") or {}
            if sc.get("readOnlyRootFilesystem") is not True or sc.get("allowPrivilegeEscalation") is not False \
                    or (sc.get("capabilities") or {}).get("drop") != ["ALL"]:
                problems.append("%s: needs readOnlyRootFilesystem, no privilege escalation, drop ALL" % cw)
            res = c.get("resources") or {}
            if not (res.get("requests") or {}).get("memory") or not (res.get("limits") or {}).get("memory") \
                    or not (res.get("requests") or {}).get("cpu"):
                problems.append("%s: needs cpu and memory requests and a memory limit" % cw)
            mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts") or []}
            for path, vname in mounts.items():
                if vname not in vols:
                    problems.append("%s: mount %s names no pod volume %r" % (cw, path, vname))
            if "/tmp" not in mounts:
                problems.append("%s: /tmp is not a volume (the root file system is read-only)" % cw)
            argv = (c.get("command") or []) + (c.get("args") or [])
            if not argv or argv[0] != BINARY:
                problems.append("%s: does not run %s" % (cw, BINARY))
                continue
            p = subprocess.run([em] + argv[1:] + ["--help"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode != 0:
                problems.append("%s: ebsmigrate refuses its arguments: %s" % (cw, p.stderr.decode().strip()))
            for flag, verb in (("--publish-configmap", "patch"), ("--require-configmap", "get")):
                if flag in argv:
                    ref = argv[argv.index(flag) + 1]
                    cm_ns, _, rest = ref.partition("/")
                    cm = rest.split("=", 1)[0]
                    if not granted(ns, sa, verb, cm_ns, cm):
                        problems.append("%s: %s %s, but no Role grants %s %s on ConfigMap %s/%s by name"
                                        % (cw, flag, ref, sa, verb, cm_ns, cm))
                    if flag == "--require-configmap" and not exists("ConfigMap", cm_ns, cm):
                        problems.append("%s: the switch ConfigMap %s/%s is not in the build" % (cw, cm_ns, cm))
    for p in problems:
        print(p)
    if problems:
        return 1
    print("ok: %d objects, %d containers" % (len(docs), n_containers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
