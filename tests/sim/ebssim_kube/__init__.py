"""ebssim_kube: the Kubernetes API server of the ebs simulator (one KubeCluster per scenario cluster).

Package layout (KubeCluster in cluster.py is composed of one mixin per concern; all share the
cluster's state through ``self``; each file's header says what it owns):
  base.py constants, ApiError, small helpers    patch.py merge / strategic / JSON patch
  selectors.py label and field selectors        resources.py served types per version
  printer.py Table columns (kubectl get)        fio.py PodRun and the host-device guard
  ebs_driver.py CSI parameter / EC2 helpers     cluster.py KubeCluster, state(), close()
  routing.py handle(), faults, Status bodies    auth.py authentication, authorization
  discovery.py /version, discovery, openapi     store.py objects, resourceVersion, history
  reads.py get, list, continue, Table output    writes.py create/update/patch/delete
  validation.py names, defaults, validation     watch_events.py watches, Event objects
  kubelet.py nodes/proxy stats/summary          pods.py pods, logs, fio runs, Jobs
  csi.py tick(): binding, CSI + external-resizer and volume-modifier emulation
This file re-exports the module-level names (``ebssim_kube.KubeCluster``, ``ebssim_kube.DROP``...).

Interface (tests/sim/CONTRACT.md): ``KubeCluster(sim, spec)`` with
``handle(method, path, query, headers, body, client_cert_cn) -> (status, headers, body_bytes)``,
``tick()`` (after every clock advance) and ``state()``; ``close()`` kills fio runs (also at exit).

What it serves, on the wire formats of the real kube-apiserver:
  * authentication: bearer tokens (``users[].token``), client certificates (CN = user name, passed
    in by the core after TLS verification), EKS tokens ``k8s-aws-v1.<base64url presigned STS URL>``
    (checked with ``sim.verify_presigned_sts``; the user whose ``eks_principal`` is the signer).
    Missing or bad credentials -> 401 Status; anonymous may read /version, /healthz, /livez, /readyz.
  * authorization: ``users[].allow`` entries ``VERB:RESOURCE`` (``list:persistentvolumeclaims``,
    ``get:nodes/proxy``, ``*:pods``, ``list:*``) or ``*``; denial -> 403 Status with RBAC's message.
    Discovery, /version and /openapi are open to every authenticated user (system:discovery).
  * /version, discovery (/api, /api/v1, /apis, /apis/G, /apis/G/V; legacy format, so clients fall
    back from aggregated discovery), a minimal /openapi/v3 (enough for kubectl apply's
    fieldValidation probe); /openapi/v2 is 404.
  * core/v1 namespaces, nodes, persistentvolumes, persistentvolumeclaims, pods (+log), configmaps,
    events, serviceaccounts; apps/v1 statefulsets, deployments, replicasets, daemonsets; batch/v1
    jobs; rbac.authorization.k8s.io/v1 clusterroles, clusterrolebindings, roles, rolebindings
    (stored only: authorization stays the scenario's users' allow lists);
    storage.k8s.io/v1 storageclasses, csidrivers, csinodes, volumeattachments; and
    VolumeAttributesClass at storage.k8s.io/v1 (>= 1.34), v1beta1 (1.31-1.33), v1alpha1 (1.29-1.30;
    served as if the VolumeAttributesClass feature gate and alpha API were switched on).
    Before 1.29 the field spec.volumeAttributesClassName is dropped like an unknown field.
  * list (limit/continue with consistent snapshots, labelSelector, fieldSelector, Table output),
    PartialObjectMetadata(List) on request, watch (long-poll: the body ends after the first batch
    of events or after ``watch_poll_s``, default 1 s, since the core cannot stream), get, create
    (generateName, dryRun), update (409 on stale resourceVersion), patch (merge, strategic merge
    for the simple cases, JSON patch, apply-patch treated as merge),
    delete (propagationPolicy; Jobs default to orphan as in the REST API), deletecollection,
    status subresources, pods/log, nodes/NAME/proxy/stats/summary (kubelet Summary from ``usage``).
  * continue tokens look like the real ones (base64url JSON with rv and start key) plus the list's
    start time; they expire after ``continue_ttl_s`` (default 300; wall clock plus ``ctl advance``
    jumps, not scaled by --time-scale) or with the ``expire-continue`` fault: 410 Expired with the
    apiserver's "inconsistent continue" message and a fresh token in metadata.continue
    (resourceVersion -1, continues at the latest state).
  * CSI emulation (ebs.csi.aws.com external-resizer + driver): a bound PVC on a CSI PV whose
    spec.volumeAttributesClassName differs from status.currentVolumeAttributesClassName gets
    modifyVolumeStatus InProgress and a ModifyVolume from principal ``ebs-csi-controller``; the
    driver only returns once the modification is ``optimizing`` or ``completed`` (it waits), so on
    tick() at that point the PVC gets currentVolumeAttributesClassName, modifyVolumeStatus is
    removed and the PV gets spec.volumeAttributesClassName (what external-resizer does on success).
    Missing VAC -> Pending; unknown VAC keys, unparsable values or EC2 InvalidParameter* errors ->
    Infeasible; other EC2 errors (VolumeModificationRateExceeded included) or a failed modification ->
    InProgress + ModifyVolumeError condition ("ModifyVolume failed with error: <driver error>. Waiting
    for retry.") and a Warning VolumeModifyFailed event with the driver's error, whose text ends in the
    AWS SDK for Go v2's "operation error EC2: ModifyVolume, https response error StatusCode: 400,
    RequestID: ..., api error CODE: MESSAGE" (AWS's message unchanged), and a retry with backoff (sim clock). A VAC of another driver -> Infeasible (a
    simulator choice). In-tree PVs (spec.awsElasticBlockStore) are never modified (a Warning event).
    Events (VolumeModify, VolumeModifySuccessful, VolumeModifyFailed) are real Event objects.
    With ``volume_modifier_sidecar: true`` PVC annotations ``ebs.csi.aws.com/<key>`` (volumeType,
    iops, throughput) that differ from the PV's trigger ModifyVolume; on success they are copied to
    the PV (as volume-modifier-for-k8s does).
  * Jobs create their Pods (backoffLimit with 10 s doubling backoff on the sim clock); a Pod whose
    container runs ``fio`` (directly or via ``sh -c``) runs the real fio locally in a thread, with
    volume mount paths rewritten to a per-pod directory (configMap volumes are materialized,
    volumeDevices become plain files, other absolute fio paths land in the pod's own rootfs
    directory; any remaining /dev path is refused, so no host device is ever touched);
    stdout+stderr is the pod log. restartPolicy OnFailure is treated as Never. Other Pods just
    run; scenario Pods are shown running and never executed. Deleting a Pod (or its Job) kills fio.
  * faults: ``sim.fault("kube", "VERB:RESOURCE")`` (e.g. ``list:persistentvolumes``,
    ``get:nodes/proxy``, ``patch:persistentvolumeclaims``): throttle (429 + Retry-After), 5xx,
    slow (sleeps delay_s first), drop (returns the DROP marker; CONTRACT.md), truncate (the
    body is cut in half, Content-Length matches the cut body), expire-continue (410 on the next
    request that carries a continue token).

Cluster spec knobs: version, git_version, region, eks_name, users, objects, usage,
volume_modifier_sidecar, continue_ttl_s (300), watch_poll_s (1), log_follow_wait_s (60),
job_backoff_s (10), modify_retry_s (10).

Not emulated: dynamic provisioning (new PVCs stay Pending unless spec.volumeName names an
Available PV; their Events and unschedulable pods' FailedScheduling: ebssim_kube_events.py), volume expansion, finalizers/graceful deletion (objects go at once), admission
webhooks, protobuf, exec/attach/port-forward, server-side apply field ownership.
"""

from .base import (  # noqa: F401  (the names other code and the tests use)
    ALL_VERBS, ApiError, CSI_PRINCIPAL, DROP, EBS_DRIVER, EXPIRED_MSG, GIT_PATCH,
    INCONSISTENT_CONTINUE, META_ORDER, MODIFIER_COMPONENT, QUANTITY_SUFFIX, RESIZER_COMPONENT,
    RO_VERBS, b64url_decode, dig, go_map, human_duration, meta, ordered, parse_quantity, parse_time,
    rfc3339)
from .cluster import (  # noqa: F401  (the names other code and the tests use)
    KubeCluster, _ALL_CLUSTERS, _close_all)
from .ebs_driver import (  # noqa: F401  (the names other code and the tests use)
    error_info, mod_state, needs_modification, parse_modify_params)
from .fio import (  # noqa: F401  (the names other code and the tests use)
    FIO_PATH_OPTS, HARMLESS_DEV, PodRun, SHELLS, expand_vars, host_device, safe_join)
from .patch import (  # noqa: F401  (the names other code and the tests use)
    MERGE_KEYS, PatchError, _ptr, _walk, json_patch, merge_patch, strategic_merge)
from .printer import (  # noqa: F401  (the names other code and the tests use)
    ABBR, NAME_COL, Printer, access_modes, col)
from .resources import (  # noqa: F401  (the names other code and the tests use)
    RT, build_types, vac_version)
from .selectors import (  # noqa: F401  (the names other code and the tests use)
    SelectorError, labels_match, parse_field_selector, parse_label_selector)
