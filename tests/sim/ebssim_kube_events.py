"""ebssim_kube_events: the Events a cluster shows for what is stuck Pending (used by ebssim_kube).

Real clusters explain a Pending pod or claim in Events, not only in status; `bench run` in a
cluster reads them to say what it waits for. This module writes those Events into the
simulator's store, in the two shapes a real cluster serves at /api/v1/namespaces/NS/events:

  * the scheduler (kube-scheduler records through the events.k8s.io/v1 API; read back through
    core/v1 the Event has ``eventTime`` (a MicroTime), ``firstTimestamp``/``lastTimestamp`` null,
    an empty ``source``, ``reportingComponent: default-scheduler``, ``action: Scheduling`` and, once
    it repeats, ``series: {count, lastObservedTime}`` instead of ``count``):
      Warning FailedScheduling "0/N nodes are available: WHY. preemption: 0/N nodes are available:
      N Preemption is not helpful for scheduling."
  * controllers on the old core/v1 recorder (``source.component``, ``firstTimestamp``,
    ``lastTimestamp``, ``count``), through KubeCluster._event:
      persistentvolume-controller  Normal WaitForFirstConsumer "waiting for first consumer to be
        created before binding" (a WaitForFirstConsumer class, no pod uses the claim yet);
        Normal ExternalProvisioning "Waiting for a volume to be created either by the external
        provisioner 'P' or manually by the system administrator. If volume creation is delayed,
        please verify that the provisioner is running and correctly registered.";
        Warning ProvisioningFailed 'storageclass.storage.k8s.io "SC" not found'.
      the EBS CSI provisioner (component "ebs.csi.aws.com_ebs-csi-controller-..."): Warning
        ProvisioningFailed for a class whose ``type`` parameter EBS does not have.

The simulator does no dynamic provisioning, so such claims stay Pending (and pods that mount
them unschedulable) for good: scenario bench-pending (ebssim_scenario_bench_pending.py).
Entry points: pod_unschedulable(cluster, key, why) and claim_pending(cluster, key).
"""

import copy
import datetime

SCHEDULER = "default-scheduler"
PV_CONTROLLER = "persistentvolume-controller"
EBS_PROVISIONER = "ebs.csi.aws.com_ebs-csi-controller-7d9f6c5b8-x2x4k_3c1f9a52-0000-4000-8000-000000000001"
EBS_TYPES = ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard")
SCHEDULER_RETRY_S = 5  # the scheduler retries an unschedulable pod with backoff; one update per retry


def _meta(o):
    return o.setdefault("metadata", {})


def _micro(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _scheduler_event(cluster, pod, message):
    """A FailedScheduling event as kube-scheduler records it (events.k8s.io/v1 shape); False when
    the same one was recorded less than a retry ago (nothing written)."""
    m = _meta(pod)
    ns = m.get("namespace") or "default"
    now = cluster.now()
    ident = ("scheduler", m.get("uid"), message)
    erm = cluster.by_plural["events"]
    key = cluster.event_index.get(ident, "")
    ev = cluster.store["events"].get(key)
    if ev is not None:
        last = (ev.get("series") or {}).get("lastObservedTime") or ev.get("eventTime")
        try:
            seen = datetime.datetime.strptime(last, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=datetime.timezone.utc).timestamp()
        except (TypeError, ValueError):
            seen = 0
        if now - seen < SCHEDULER_RETRY_S:
            return False
        ne = copy.deepcopy(ev)
        ne["series"] = {"count": int((ev.get("series") or {}).get("count", 1)) + 1, "lastObservedTime": _micro(now)}
        cluster._update(erm, ne)
        return True
    cluster.event_seq += 1
    name = "%s.%x" % (m.get("name"), int(now * 1e9) + cluster.event_seq)
    ev = {"kind": "Event", "apiVersion": "v1",
          "metadata": {"name": name, "namespace": ns},
          "involvedObject": {"kind": "Pod", "namespace": ns, "name": m.get("name"), "uid": m.get("uid"),
                             "apiVersion": "v1", "resourceVersion": m.get("resourceVersion")},
          "reason": "FailedScheduling", "message": message, "source": {},
          "firstTimestamp": None, "lastTimestamp": None, "type": "Warning", "eventTime": _micro(now),
          "action": "Scheduling", "reportingComponent": SCHEDULER, "reportingInstance": SCHEDULER + "-sim"}
    cluster._prepare_stored(erm, ev, now)
    cluster._write(erm, "%s/%s" % (ns, name), ev, None)
    cluster.event_index[ident] = "%s/%s" % (ns, name)
    return True


def _scheduler_message(cluster, why):
    if why.startswith("0/"):
        return why
    n = len(cluster.store["nodes"])
    return ("0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d Preemption is not helpful "
            "for scheduling." % (n, why.rstrip("."), n, n))


def pod_unschedulable(cluster, key, why):
    """The scheduler could not place pod KEY ("ns/name") for WHY: its FailedScheduling event, and
    the claims it waits for get their provisioning events (a pod is their first consumer)."""
    pod = cluster.store["pods"].get(key)
    if pod is None:
        return
    if not _scheduler_event(cluster, pod, _scheduler_message(cluster, why)):
        return  # not retried yet
    ns = _meta(pod).get("namespace")
    for v in (pod.get("spec") or {}).get("volumes") or []:
        claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            claim_pending(cluster, "%s/%s" % (ns, claim), consumer=True)


def _consumed(cluster, ns, name):
    for p in cluster.store["pods"].values():
        if _meta(p).get("namespace") != ns:
            continue
        for v in (p.get("spec") or {}).get("volumes") or []:
            if (v.get("persistentVolumeClaim") or {}).get("claimName") == name:
                return True
    return False


def claim_pending(cluster, key, consumer=False):
    """Claim KEY is (still) Pending: what the PV controller and the provisioner say about it."""
    pvc = cluster.store["persistentvolumeclaims"].get(key)
    if pvc is None or (pvc.get("status") or {}).get("phase") not in (None, "", "Pending"):
        return
    spec = pvc.get("spec") or {}
    if spec.get("volumeName"):
        return  # static binding to a named PV: no provisioning involved
    rt = cluster.by_plural["persistentvolumeclaims"]
    sc_name = spec.get("storageClassName")
    if not sc_name:
        return
    sc = cluster.store["storageclasses"].get(sc_name)
    if sc is None:
        cluster._event(pvc, rt, "Warning", "ProvisioningFailed",
                       'storageclass.storage.k8s.io "%s" not found' % sc_name, PV_CONTROLLER)
        return
    ns, name = key.split("/", 1)
    if sc.get("volumeBindingMode") == "WaitForFirstConsumer" and not (consumer or _consumed(cluster, ns, name)):
        cluster._event(pvc, rt, "Normal", "WaitForFirstConsumer",
                       "waiting for first consumer to be created before binding", PV_CONTROLLER)
        return
    provisioner = sc.get("provisioner") or ""
    cluster._event(pvc, rt, "Normal", "ExternalProvisioning",
                   "Waiting for a volume to be created either by the external provisioner '%s' or manually by "
                   "the system administrator. If volume creation is delayed, please verify that the provisioner "
                   "is running and correctly registered." % provisioner, PV_CONTROLLER)
    vtype = (sc.get("parameters") or {}).get("type")
    if provisioner == "ebs.csi.aws.com" and vtype and vtype.lower() not in EBS_TYPES:
        cluster._event(pvc, rt, "Normal", "Provisioning",
                       'External provisioner is provisioning volume for claim "%s"' % key, EBS_PROVISIONER)
        cluster._event(pvc, rt, "Warning", "ProvisioningFailed",
                       'failed to provision volume with StorageClass "%s": rpc error: code = InvalidArgument desc = '
                       'Volume type "%s" is not supported' % (sc_name, vtype), EBS_PROVISIONER)
