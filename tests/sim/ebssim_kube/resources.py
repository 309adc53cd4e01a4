"""ebssim_kube.resources: the served resource types (RT: group, version, kind, plural, scope,
subresources) for a cluster minor version; VolumeAttributesClass moves from v1alpha1 to v1beta1
to v1 with the version (vac_version).
"""

from .base import ALL_VERBS

# ----------------------------------------------------------------------------------------------
# resource types


class RT:
    def __init__(self, group, version, kind, plural, namespaced, short=(), status=False, subs=(),
                 verbs=ALL_VERBS, categories=(), generation=False, fields=()):
        self.group, self.version, self.kind, self.plural = group, version, kind, plural
        self.namespaced, self.short, self.status = namespaced, list(short), status
        self.subs = list(subs) + (["status"] if status else [])
        self.verbs, self.categories, self.generation = verbs, list(categories), generation
        self.fields = ["metadata.name"] + (["metadata.namespace"] if namespaced else []) + list(fields)

    @property
    def api_version(self):
        return self.group + "/" + self.version if self.group else self.version

    @property
    def qualified(self):
        """GroupResource.String(): plural or plural.group"""
        return self.plural + "." + self.group if self.group else self.plural

    @property
    def qualified_kind(self):
        return self.kind + "." + self.group if self.group else self.kind


def vac_version(minor):
    if minor >= 34:
        return "v1"
    if minor >= 31:
        return "v1beta1"
    if minor >= 29:
        return "v1alpha1"
    return None


def build_types(minor):
    pod_fields = ["spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                  "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"]
    ev_fields = ["involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
                 "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
                 "reason", "reportingComponent", "source", "type"]
    types = [
        RT("", "v1", "Namespace", "namespaces", False, ["ns"], status=True, subs=["finalize"],
           verbs=["create", "delete", "get", "list", "patch", "update", "watch"], fields=["status.phase"]),
        RT("", "v1", "Node", "nodes", False, ["no"], status=True, subs=["proxy"], fields=["spec.unschedulable"]),
        RT("", "v1", "PersistentVolume", "persistentvolumes", False, ["pv"], status=True),
        RT("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ["pvc"], status=True),
        RT("", "v1", "Pod", "pods", True, ["po"], status=True, subs=["log"], categories=["all"], fields=pod_fields),
        RT("", "v1", "ConfigMap", "configmaps", True, ["cm"]),
        RT("", "v1", "Event", "events", True, ["ev"], fields=ev_fields),
        RT("apps", "v1", "StatefulSet", "statefulsets", True, ["sts"], status=True, subs=["scale"],
           categories=["all"], generation=True),
        RT("apps", "v1", "Deployment", "deployments", True, ["deploy"], status=True, subs=["scale"],
           categories=["all"], generation=True),
        RT("apps", "v1", "ReplicaSet", "replicasets", True, ["rs"], status=True, subs=["scale"],
           categories=["all"], generation=True),
        RT("apps", "v1", "DaemonSet", "daemonsets", True, ["ds"], status=True, categories=["all"], generation=True),
        RT("batch", "v1", "Job", "jobs", True, [], status=True, categories=["all"], generation=True,
           fields=["status.successful"]),
        RT("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ["sc"]),
        RT("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False),
        RT("storage.k8s.io", "v1", "CSINode", "csinodes", False),
        RT("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", False, status=True),
        # what `ebsmigrate rbac | kubectl apply -f -` creates
        RT("", "v1", "ServiceAccount", "serviceaccounts", True, ["sa"]),
        RT("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
        RT("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
        RT("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
        RT("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    ]
    vv = vac_version(minor)
    if vv:
        types.append(RT("storage.k8s.io", vv, "VolumeAttributesClass", "volumeattributesclasses", False, ["vac"]))
    return types
