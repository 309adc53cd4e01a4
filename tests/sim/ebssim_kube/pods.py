"""ebssim_kube.pods: pods, pods/log and Jobs: scheduling onto nodes, starting containers (fio
runs for real through ebssim_kube.fio; other pods just run), container exit, Job pods with
backoff on the sim clock.
"""

import copy
import hashlib
import os
import re
import shutil
import tempfile

import ebssim_kube_events as kube_events

from .base import dig, meta, parse_time, rfc3339
from .fio import FIO_PATH_OPTS, PodRun, SHELLS, expand_vars, host_device, safe_join


class PodMixin:
    """Pods, pod logs, fio benchmark runs and Jobs."""
    # ------------------------------------------------------------------ pods/log, nodes/proxy
    def _pod_log(self, ns, name, q):
        with self.sim.lock:
            key, pod = self._lookup(self.by_plural["pods"], ns, name)
            names = [c.get("name") for c in dig(pod, "spec", "containers", default=[]) or []]
            c = q.get("container")
            if not c:
                if len(names) != 1:
                    raise self.bad_request("a container name must be specified for pod %s, choose one of: [%s]" % (
                        name, " ".join(names)))
                c = names[0]
            if c not in names:
                raise self.bad_request("container %s is not valid for pod %s" % (c, name))
            if q.get("previous") in ("true", "1"):
                raise self.bad_request('previous terminated container "%s" in pod "%s" not found' % (c, name))
            cs = next((s for s in dig(pod, "status", "containerStatuses", default=[]) or [] if s.get("name") == c), None)
            if cs is None or "waiting" in (cs.get("state") or {}):
                reason = dig(cs or {}, "state", "waiting", "reason", default="ContainerCreating")
                raise self.bad_request('container "%s" in pod "%s" is waiting to start: %s' % (c, name, reason))
            run = self.runs.get(key, {}).get(c)
        if run is not None and q.get("follow") in ("true", "1"):
            run.done.wait(self.follow_wait)
        data = run.text() if run is not None else b""
        if q.get("timestamps") in ("true", "1") and data:
            ts = (dig(cs, "state", "running", "startedAt") or dig(cs, "state", "terminated", "startedAt") or
                  rfc3339(self.now())).replace("Z", ".000000000Z")
            data = b"".join(ts.encode() + b" " + line for line in data.splitlines(True))
        if q.get("tailLines"):
            try:
                n = int(q["tailLines"])
                lines = data.splitlines(True)
                data = b"".join(lines[-n:]) if n > 0 else b""
            except ValueError:
                pass
        if q.get("limitBytes"):
            try:
                data = data[:int(q["limitBytes"])]
            except ValueError:
                pass
        return 200, {"Content-Type": "text/plain", "Cache-Control": "no-cache, private"}, data

    # --- pods
    def _node_ip(self, node):
        for a in dig(node, "status", "addresses", default=[]) or []:
            if a.get("type") == "InternalIP":
                return a.get("address")
        h = int(hashlib.sha1(meta(node)["name"].encode()).hexdigest()[:6], 16)
        return "10.0.%d.%d" % ((h >> 8) % 250 + 1, h % 250 + 2)

    def _schedule(self, pod):
        """-> (node name, None) or (None, reason message)."""
        nodes = [self.store["nodes"][k] for k in sorted(self.store["nodes"])]
        if not nodes:
            return None, "no nodes available to schedule pods"
        ns = meta(pod)["namespace"]
        cands = []
        for n in nodes:
            ready = next((c for c in dig(n, "status", "conditions", default=[]) or [] if c.get("type") == "Ready"), None)
            if ready is not None and ready.get("status") != "True":
                continue
            if dig(n, "spec", "unschedulable"):
                continue
            labels = meta(n).get("labels") or {}
            if any(labels.get(k) != v for k, v in (dig(pod, "spec", "nodeSelector") or {}).items()):
                continue
            cands.append(n)
        preferred = []
        for v in dig(pod, "spec", "volumes", default=[]) or []:
            claim = dig(v, "persistentVolumeClaim", "claimName")
            if not claim:
                continue
            pvc = self.store["persistentvolumeclaims"].get("%s/%s" % (ns, claim))
            if pvc is None:
                return None, 'persistentvolumeclaim "%s" not found' % claim
            pv = self._pv_for(pvc)
            if pv is None:
                return None, "pod has unbound immediate PersistentVolumeClaims"
            vid = self._volume_id(pv)
            vol = (getattr(self.sim, "volumes", None) or {}).get(vid) or {}
            az = vol.get("az")
            if az:
                cands = [n for n in cands if (meta(n).get("labels") or {}).get(
                    "topology.kubernetes.io/zone", az) == az]
            for term in dig(pv, "spec", "nodeAffinity", "required", "nodeSelectorTerms", default=[]) or []:
                for ex in term.get("matchExpressions") or []:
                    if ex.get("operator") == "In":
                        cands = [n for n in cands if (meta(n).get("labels") or {}).get(ex.get("key")) in
                                 (ex.get("values") or []) or ex.get("key") not in (meta(n).get("labels") or {})]
            for other in self.store["pods"].values():
                if other is pod or dig(other, "status", "phase") != "Running":
                    continue
                if meta(other).get("namespace") == ns and any(
                        dig(ov, "persistentVolumeClaim", "claimName") == claim
                        for ov in dig(other, "spec", "volumes", default=[]) or []):
                    preferred.append(dig(other, "spec", "nodeName"))
            for a in vol.get("attachments") or []:
                iid = a.get("instance_id") or a.get("InstanceId")
                for n in cands:
                    if iid and str(dig(n, "spec", "providerID", default="")).endswith("/" + iid):
                        preferred.append(meta(n)["name"])
        if not cands:
            return None, "0/%d nodes are available: %d node(s) didn't match the pod's node affinity/selector or " \
                         "volume node affinity." % (len(nodes), len(nodes))
        names = [meta(n)["name"] for n in cands]
        for p in preferred:
            if p in names:
                return p, None
        return names[0], None

    def _start_pod(self, key):
        pod = self.store["pods"].get(key)
        if pod is None or dig(pod, "status", "phase") not in (None, "", "Pending") or key in self.runs:
            return
        prt = self.by_plural["pods"]
        now = rfc3339(self.now())
        node = dig(pod, "spec", "nodeName")
        if not node:
            node, why = self._schedule(pod)
            if node is None:
                np = copy.deepcopy(pod)
                np["status"] = {"phase": "Pending", "conditions": [{
                    "type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": now,
                    "reason": "Unschedulable", "message": why}], "qosClass": "BestEffort"}
                self._update(prt, np)
                kube_events.pod_unschedulable(self, key, why)
                return
        nodeobj = self.store["nodes"].get(node) or {"metadata": {"name": node}}
        np = copy.deepcopy(pod)
        np["spec"]["nodeName"] = node
        h = int(hashlib.sha1(key.encode()).hexdigest()[:6], 16)
        pod_ip = "10.%d.%d.%d" % (100 + (h >> 16) % 100, (h >> 8) % 256, h % 254 + 1)
        host_ip = self._node_ip(nodeobj)
        statuses = []
        for c in np["spec"].get("containers") or []:
            statuses.append({"name": c.get("name"), "state": {"running": {"startedAt": now}}, "lastState": {},
                             "ready": True, "restartCount": 0, "image": c.get("image"),
                             "imageID": "docker.io/library/%s@sha256:%s" % (
                                 c.get("image", "").split(":")[0].split("/")[-1],
                                 hashlib.sha256(c.get("image", "").encode()).hexdigest()),
                             "containerID": "containerd://" + hashlib.sha256(
                                 (key + c.get("name", "") + now).encode()).hexdigest(), "started": True})
        conds = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
                 for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
        np["status"] = {"phase": "Running", "conditions": conds, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
                        "podIP": pod_ip, "podIPs": [{"ip": pod_ip}], "startTime": now, "containerStatuses": statuses,
                        "qosClass": "BestEffort"}
        stored = self._update(prt, np)
        runs = {}
        for c in stored["spec"].get("containers") or []:
            plan = self._fio_plan(key, stored, c)
            if plan is not None:
                argv, cwd, env = plan
                runs[c["name"]] = PodRun(self, key, meta(stored).get("uid"), c["name"], argv, cwd, env)
        if runs:
            self.runs[key] = runs
            for r in runs.values():
                r.start()

    def _pod_dir(self, key):
        if key in self.pod_dirs:
            return self.pod_dirs[key]
        if self.workdir is None:
            sd = getattr(self.sim, "state_dir", None)
            if sd and os.path.isdir(str(sd)):
                self.workdir = os.path.join(str(sd), "kube", self.name)
                os.makedirs(self.workdir, exist_ok=True)
                self._own_workdir = False
            else:
                self.workdir = tempfile.mkdtemp(prefix="ebssim-kube-%s-" % re.sub(r"[^A-Za-z0-9_.-]", "_", self.name))
                self._own_workdir = True
        d = os.path.join(self.workdir, "pods", key.replace("/", "__") + "-" + self._rand_suffix(4))
        os.makedirs(d, exist_ok=True)
        self.pod_dirs[key] = d
        return d

    def _fio_plan(self, key, pod, c):
        env_vals = {}
        for e in c.get("env") or []:
            if "value" in e:
                env_vals[e["name"]] = expand_vars(str(e.get("value", "")), env_vals)
        argv = [expand_vars(str(a), env_vals) for a in (c.get("command") or []) + (c.get("args") or [])]
        if not c.get("command") and "fio" in str(c.get("image", "")).split(":")[0].split("/")[-1]:
            argv = ["fio"] + argv
        if not argv:
            return None
        base = os.path.basename(argv[0])
        shell = base in SHELLS and len(argv) >= 3 and "-c" in argv[1:3]
        if shell:
            idx = argv.index("-c", 1)
            script = argv[idx + 1] if idx + 1 < len(argv) else ""
            if not re.search(r"(^|[^A-Za-z0-9_.-])fio($|[^A-Za-z0-9_.-])", script):
                return None
        elif base != "fio":
            return None
        pdir = self._pod_dir(key)
        ns = meta(pod)["namespace"]
        vols = {v.get("name"): v for v in dig(pod, "spec", "volumes", default=[]) or []}
        mounts = []   # (path in the container, path here, volume); block devices become plain files
        for vm in c.get("volumeMounts") or []:
            v = vols.get(vm.get("name")) or {}
            host = safe_join(os.path.join(pdir, "volumes"), vm.get("name") or "vol")
            if vm.get("subPath"):
                host = safe_join(host, vm["subPath"])
            os.makedirs(host, exist_ok=True)
            mp = vm.get("mountPath", "").rstrip("/")
            if mp:
                mounts.append((mp, host, v))
        for vd in c.get("volumeDevices") or []:
            os.makedirs(os.path.join(pdir, "devices"), exist_ok=True)
            host = safe_join(os.path.join(pdir, "devices"), (vd.get("name") or "dev") + ".img")
            open(host, "ab").close()
            if vd.get("devicePath"):
                mounts.append((vd["devicePath"].rstrip("/"), host, vols.get(vd.get("name")) or {}))
        mounts.sort(key=lambda m: -len(m[0]))

        def rewrite(s):
            for mp, host, _v in mounts:
                s = re.sub(r"(?<![A-Za-z0-9_./-])" + re.escape(mp) + r"(?=$|/|[^A-Za-z0-9_.-])",
                           host.replace("\\", "\\\\"), s)
            return s
        written = []
        for mp, host, v in mounts:
            cmname = dig(v, "configMap", "name")
            if cmname:
                cm = self.store["configmaps"].get("%s/%s" % (ns, cmname)) or {}
                data = cm.get("data") or {}
                items = dig(v, "configMap", "items")
                pairs = [(it.get("key"), it.get("path")) for it in items] if items else [(k, k) for k in data]
                for k, p in pairs:
                    if k in data and p:
                        fp = safe_join(host, p)
                        os.makedirs(os.path.dirname(fp), exist_ok=True)
                        text = rewrite(data[k])
                        written.append(text)
                        with open(fp, "w") as f:
                            f.write(text)
        env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": pdir,
               "HOSTNAME": meta(pod)["name"]}
        env.update(env_vals)
        if shell:
            argv = ["/bin/sh", "-c", rewrite(script)] + [rewrite(a) for a in argv[idx + 2:]]
        else:
            rootfs = os.path.join(pdir, "rootfs")
            out = [shutil.which("fio") or "fio"]
            for a in argv[1:]:
                a = rewrite(a)
                m = re.match(r"^(--?([A-Za-z_-]+)=)(.*)$", a)
                if m and m.group(2) in FIO_PATH_OPTS:
                    a = m.group(1) + ":".join(self._rootfs_path(rootfs, pdir, part) for part in m.group(3).split(":"))
                elif not a.startswith("-"):
                    a = self._rootfs_path(rootfs, pdir, a)
                out.append(a)
            argv = out
        bad = host_device(" ".join(argv[1:]) + "\n" + "\n".join(written))
        if bad:
            msg = ("ebssim: refusing to run fio against host path %s: only the pod's volumes and "
                   "volumeDevices are emulated (as files under %s)" % (bad, pdir))
            argv = ["/bin/sh", "-c", 'echo "$0" >&2; exit 1', msg]
        workdir = rewrite(c.get("workingDir")) if c.get("workingDir") else pdir
        if not os.path.isdir(workdir) or not os.path.realpath(workdir).startswith(os.path.realpath(pdir)):
            workdir = pdir
        return argv, workdir, env

    @staticmethod
    def _rootfs_path(rootfs, pdir, p):
        """An absolute path outside the pod's volumes lives in the container's own filesystem."""
        if not p.startswith("/") or p.startswith(pdir + "/") or p == pdir or p.startswith("/dev/"):
            return p
        q = safe_join(rootfs, p.lstrip("/"))
        os.makedirs(os.path.dirname(q), exist_ok=True)
        return q

    def _container_exited(self, run, rc, err):
        with self.sim.lock:
            pod = self.store["pods"].get(run.key)
            if pod is None or meta(pod).get("uid") != run.uid or run.killed:
                return
            now = rfc3339(self.now())
            np = copy.deepcopy(pod)
            st = np.setdefault("status", {})
            runs = self.runs.get(run.key, {})
            for cs in st.get("containerStatuses") or []:
                if cs.get("name") != run.container:
                    continue
                started = dig(cs, "state", "running", "startedAt") or now
                if err is not None:
                    term = {"exitCode": 128, "reason": "StartError", "message": "failed to create containerd task: "
                            "exec: %s: %s" % (run.argv[0] if run.argv else "", getattr(err, "strerror", None) or err)}
                else:
                    code = rc if rc >= 0 else 128 - rc
                    term = {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}
                term.update({"startedAt": started, "finishedAt": now, "containerID": cs.get("containerID")})
                cs["state"] = {"terminated": term}
                cs["ready"] = False
                cs["started"] = False
            if all(r.done.is_set() or r is run for r in runs.values()):
                codes = []
                for cs in st.get("containerStatuses") or []:
                    t = dig(cs, "state", "terminated")
                    if t is None:
                        t = {"exitCode": 0, "reason": "Completed", "startedAt": dig(cs, "state", "running", "startedAt"),
                             "finishedAt": now, "containerID": cs.get("containerID")}
                        cs["state"] = {"terminated": t}
                        cs["ready"] = False
                        cs["started"] = False
                    codes.append(t.get("exitCode", 0))
                st["phase"] = "Succeeded" if all(c == 0 for c in codes) else "Failed"
                for cnd in st.get("conditions") or []:
                    if cnd["type"] in ("Ready", "ContainersReady"):
                        cnd.update({"status": "False", "reason": "PodCompleted", "lastTransitionTime": now})
                    elif cnd["type"] == "PodReadyToStartContainers":
                        cnd.update({"status": "False", "lastTransitionTime": now})
            self._update(self.by_plural["pods"], np)
            for r in meta(np).get("ownerReferences") or []:
                if r.get("kind") == "Job":
                    self._sync_job("%s/%s" % (meta(np)["namespace"], r.get("name")))

    def _stop_pod(self, key):
        for r in (self.runs.pop(key, None) or {}).values():
            r.kill()
        d = self.pod_dirs.pop(key, None)
        if d:
            shutil.rmtree(d, ignore_errors=True)

    # --- jobs
    def _sync_job(self, key):
        job = self.store["jobs"].get(key)
        if job is None:
            return
        for c in dig(job, "status", "conditions", default=[]) or []:
            if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
                return
        jrt, prt = self.by_plural["jobs"], self.by_plural["pods"]
        spec = job.get("spec") or {}
        uid = meta(job).get("uid")
        ns = meta(job)["namespace"]
        js = self.job_state.setdefault(key, {"counted": {}, "last_fail": None})
        now_t = self.now()
        now = rfc3339(now_t)
        pods = [(pk, p) for pk, p in sorted(self.store["pods"].items())
                if any(r.get("uid") == uid for r in meta(p).get("ownerReferences") or [])]
        active = []
        for pk, p in pods:
            ph = dig(p, "status", "phase")
            if ph in ("Succeeded", "Failed"):
                if meta(p)["uid"] not in js["counted"]:
                    js["counted"][meta(p)["uid"]] = ph
                    if ph == "Failed":
                        js["last_fail"] = now_t
            else:
                active.append((pk, p))
        succeeded = sum(1 for v in js["counted"].values() if v == "Succeeded")
        failed = sum(1 for v in js["counted"].values() if v == "Failed")
        completions = spec.get("completions") or 1
        parallelism = spec.get("parallelism", 1)
        backoff_limit = spec.get("backoffLimit", 6)
        nj = copy.deepcopy(job)
        st = nj.setdefault("status", {})
        if spec.get("suspend"):
            return
        st.setdefault("startTime", now)

        def cond(t, reason, msg):
            return {"type": t, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
                    "reason": reason, "message": msg}
        finished = None
        start_t = parse_time(st.get("startTime")) or now_t
        if spec.get("activeDeadlineSeconds") is not None and now_t - start_t >= float(spec["activeDeadlineSeconds"]):
            finished = ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
        elif failed > backoff_limit:
            finished = ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        elif succeeded >= completions:
            finished = ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
        if finished is not None:
            for pk, p in active:
                self._stop_pod(pk)
                self._write(prt, pk, None, p)
            active = []
            conds = list(st.get("conditions") or [])
            if self.minor >= 31:
                conds.append(cond("FailureTarget" if finished[0] == "Failed" else "SuccessCriteriaMet",
                                  finished[1], finished[2]))
            conds.append(cond(finished[0], finished[1], finished[2]))
            st["conditions"] = conds
            if finished[0] == "Complete":
                st["completionTime"] = now
        else:
            want = min(parallelism, completions - succeeded) - len(active)
            delay = self.job_backoff * (2 ** (failed - 1)) if failed else 0
            delay = min(delay, 360.0)
            if want > 0 and (not failed or js["last_fail"] is None or now_t >= js["last_fail"] + delay):
                for _ in range(want):
                    pk, p = self._job_pod(nj)
                    active.append((pk, p))
        st.pop("active", None)
        if active:
            st["active"] = len(active)
        if succeeded:
            st["succeeded"] = succeeded
        if failed:
            st["failed"] = failed
        st["ready"] = sum(1 for _pk, p in active if dig(p, "status", "phase") == "Running")
        st["terminating"] = 0
        st["uncountedTerminatedPods"] = {}
        order = ["conditions", "startTime", "completionTime", "active", "succeeded", "failed", "terminating",
                 "uncountedTerminatedPods", "ready"]
        nj["status"] = {k: st[k] for k in order if k in st}
        nj["status"].update({k: v for k, v in st.items() if k not in nj["status"]})
        self._update(jrt, nj)

    def _job_pod(self, job):
        prt = self.by_plural["pods"]
        jm = meta(job)
        tmpl = copy.deepcopy(dig(job, "spec", "template") or {})
        tm = tmpl.get("metadata") or {}
        name = "%s-%s" % (jm["name"], self._rand_suffix())
        while "%s/%s" % (jm["namespace"], name) in self.store["pods"]:
            name = "%s-%s" % (jm["name"], self._rand_suffix())
        pod = {"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": name, "generateName": jm["name"] + "-", "namespace": jm["namespace"],
                            "labels": dict(tm.get("labels") or {}),
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": jm["name"],
                                                 "uid": jm.get("uid"), "controller": True, "blockOwnerDeletion": True}],
                            "finalizers": ["batch.kubernetes.io/job-tracking"]},
               "spec": tmpl.get("spec") or {}, "status": {"phase": "Pending", "qosClass": "BestEffort"}}
        if tm.get("annotations"):
            pod["metadata"]["annotations"] = dict(tm["annotations"])
        self._default_pod_spec(pod["spec"])
        self._prepare_stored(prt, pod, self.now())
        key = "%s/%s" % (jm["namespace"], name)
        stored = self._write(prt, key, pod, None)
        self._start_pod(key)
        return key, self.store["pods"].get(key, stored)
