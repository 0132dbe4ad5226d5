"""What the end-to-end run asserts after ``pulumi destroy``: nothing of the blueprint is
left, neither the objects the stack recorded nor anything labelled or named after it."""

from __future__ import annotations

from kube import Kube, KubeError
from verify import Failed

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment


def stack_objects(exported: dict) -> list[dict[str, str]]:
    """The Kubernetes objects a `pulumi stack export` records (Patch resources excluded:
    they modify an object the stack does not own; so are reads, ``external`` in the state,
    which the stack only looks up)."""
    out = []
    for res in exported.get("deployment", {}).get("resources", []):
        typ = res.get("type", "")
        if not typ.startswith("kubernetes:") or typ.endswith("Patch") or res.get("external"):
            continue
        if typ.startswith("kubernetes:helm.sh"):
            continue
        outputs = res.get("outputs") or {}
        meta = outputs.get("metadata") or {}
        if outputs.get("apiVersion") and outputs.get("kind") and meta.get("name"):
            out.append(
                {
                    "apiVersion": outputs["apiVersion"],
                    "kind": outputs["kind"],
                    "namespace": meta.get("namespace") or "",
                    "name": meta["name"],
                }
            )
    return out


def _plural(client: Kube, api_version: str, kind: str, cache: dict) -> tuple[str, bool]:
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    if base not in cache:
        cache[base] = client.get(base).get("resources", [])
    for r in cache[base]:
        if r.get("kind") == kind and "/" not in r["name"]:
            return f"{base}/{{ns}}{r['name']}", bool(r.get("namespaced"))
    raise Failed(f"the API server serves no {kind} in {api_version}")


def still_there(client: Kube, objects: list[dict[str, str]], timeout: float = 60) -> list[str]:
    """Objects of `objects` that still exist (404 means gone), after waiting for finalizers."""
    cache: dict = {}
    paths = []
    for o in objects:
        try:
            template, namespaced = _plural(client, o["apiVersion"], o["kind"], cache)
        except KubeError as err:
            if err.status == 404:  # its API group is gone: its CRD was removed with the stack
                continue
            raise
        prefix = f"namespaces/{o['namespace']}/" if namespaced and o["namespace"] else ""
        paths.append(
            (
                f"{o['kind']}/{o['namespace']}/{o['name']}",
                template.format(ns=prefix) + f"/{o['name']}",
            )
        )

    def remaining() -> list[str]:
        return [what for what, path in paths if client.exists(path)]

    try:
        client.wait("every object of the stack deleted", lambda: not remaining(), timeout)
    except TimeoutError:
        return remaining()
    return []


# Namespaced kinds the stack creates (core, apps, batch, policy, networking, autoscaling and
# the add-ons' CRDs): after `destroy`, none may be left in the blueprint's namespace.
NAMESPACED = (
    "/api/v1/namespaces/{ns}/pods",
    "/api/v1/namespaces/{ns}/services",
    "/api/v1/namespaces/{ns}/configmaps",
    "/api/v1/namespaces/{ns}/secrets",
    "/api/v1/namespaces/{ns}/serviceaccounts",
    "/apis/apps/v1/namespaces/{ns}/deployments",
    "/apis/apps/v1/namespaces/{ns}/daemonsets",
    "/apis/batch/v1/namespaces/{ns}/jobs",
    "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
    "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
    "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
    "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects",
    "/apis/keda.sh/v1alpha1/namespaces/{ns}/triggerauthentications",
    "/apis/http.keda.sh/v1alpha1/namespaces/{ns}/httpscaledobjects",
    "/apis/monitoring.coreos.com/v1/namespaces/{ns}/servicemonitors",
    "/apis/monitoring.coreos.com/v1/namespaces/{ns}/podmonitors",
    "/apis/monitoring.coreos.com/v1/namespaces/{ns}/prometheusrules",
)
# What exists in a namespace the stack did not put there: the platform's Secrets (given),
# the ServiceAccount and CA bundle Kubernetes adds to every namespace.
KUBERNETES_OWNED = {"serviceaccounts/default", "configmaps/kube-root-ca.crt"}


def leftovers(client: Kube, env: Environment, keep: set[str] | None = None) -> list[str]:
    """Objects of the blueprint still in the cluster after `destroy`: anything in its
    namespace but what the platform put there (`keep`, as ``<plural>/<name>``) and what
    Kubernetes adds; labels the stack set on a namespace it does not own; anything labelled
    with the blueprint in another namespace; cluster-scoped objects named after it."""
    keep = (keep or set()) | KUBERNETES_OWNED
    left = []
    ns = naming.namespace(env.blueprint)
    try:
        obj = client.get(f"/api/v1/namespaces/{ns}")
    except KubeError as err:
        if err.status != 404:
            raise
        obj = None
    if obj and not obj["metadata"].get("deletionTimestamp"):
        if not env.kubernetes:
            left.append(f"namespace/{ns}")
        stale = sorted(
            k
            for k in obj["metadata"].get("labels", {})
            if k.startswith(("pod-security.kubernetes.io/", "inferplane.dev/"))
        )
        if stale:
            left.append(f"namespace/{ns} labels {stale}")
        for path in NAMESPACED:
            try:
                items = client.items(path.format(ns=ns))
            except KubeError as err:
                if err.status == 404:
                    continue
                raise
            plural = path.rsplit("/", 1)[1]
            for o in items:
                key = f"{plural}/{o['metadata']['name']}"
                if key not in keep and not o["metadata"].get("deletionTimestamp"):
                    left.append(f"{ns}/{key}")
    sel = f"{naming.BLUEPRINT_LABEL}={env.blueprint}"
    for path in ("/api/v1/pods", "/api/v1/services", "/apis/apps/v1/deployments"):
        for o in client.items(path, labelSelector=sel):
            if not o["metadata"].get("deletionTimestamp"):
                plural = path.rsplit("/", 1)[1]
                left.append(f"{o['metadata']['namespace']}/{plural}/{o['metadata']['name']}")
    for path, kind in (
        ("/apis/scheduling.k8s.io/v1/priorityclasses", "priorityclass"),
        ("/apis/rbac.authorization.k8s.io/v1/clusterroles", "clusterrole"),
        ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "clusterrolebinding"),
    ):
        for o in client.items(path):
            name = o["metadata"]["name"]
            labels = o["metadata"].get("labels", {})
            mine = labels.get(naming.BLUEPRINT_LABEL) == env.blueprint or name.startswith(
                f"{env.blueprint}-"
            )
            if mine and not o["metadata"].get("deletionTimestamp"):
                left.append(f"{kind}/{name}")
    return sorted(set(left))
