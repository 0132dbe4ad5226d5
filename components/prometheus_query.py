"""The Service an existing Prometheus is queried through, read from the cluster at deploy.

`inferplane validate` already holds ``query_url`` to a Service in the namespace the
Prometheus runs in; what no file says is the Service's type. An ``ExternalName`` Service is
only a DNS alias (its name resolves to a CNAME of ``spec.externalName``, which may be any
host: https://kubernetes.io/docs/concepts/services-networking/service/#externalname), so
KEDA's queries, and the GPU Deployments' scale, would follow it out of the cluster. The
stack reads the Service (a read, not a resource it owns) and refuses to deploy through one;
a Service that does not exist fails the read, which is as it should be.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import pulumi
import pulumi_kubernetes as k8s

ANNOTATION: Final = "inferplane.dev/prometheus-query-service"
"""On the environment ConfigMap: the Service the check read (``<namespace>/<name>``, its
type), so the check is part of what a deploy registers and its failure stops the deploy."""


def query_service(url: str) -> tuple[str, str]:
    """(namespace, name) of the Service ``<name>.<namespace>.svc[...]`` that `url` names."""
    name, namespace = (urlsplit(url).hostname or "").split(".")[:2]
    return namespace, name


def checked_type(namespace: str, name: str, spec: Mapping[str, Any] | None) -> str:
    """The annotation's value for a Service of `spec`; raises for an ``ExternalName`` one."""
    kind = str((spec or {}).get("type") or "ClusterIP")
    if kind == "ExternalName":
        # The SDK's output type holds the key in Python's spelling (`external_name`).
        target = (spec or {}).get("externalName") or (spec or {}).get("external_name")
        raise ValueError(
            f"Service {namespace}/{name}, which query_url names, is an ExternalName alias of "
            f"{target!r}: KEDA would scale the GPU Deployments on whatever answers there. "
            "Point query_url (cluster.addons.prometheus) at the Prometheus' own Service"
        )
    return f"{namespace}/{name} ({kind})"


def checked_query_service(
    name: str, url: str, provider: pulumi.ProviderResource | None, parent: pulumi.Resource
) -> pulumi.Output[str]:
    """Read the Service `url` names; the result fails (and with it whatever takes it as an
    input) when the Service is an ``ExternalName``."""
    namespace, service = query_service(url)
    read = k8s.core.v1.Service.get(
        f"{name}-prometheus-query",
        f"{namespace}/{service}",
        opts=pulumi.ResourceOptions(parent=parent, provider=provider),
    )

    def check(spec: Any) -> str:
        as_dict = spec if isinstance(spec, Mapping) else _spec_dict(spec)
        return checked_type(namespace, service, as_dict)

    return read.spec.apply(check)


def _spec_dict(spec: Any) -> dict[str, Any] | None:
    """A ServiceSpec output type as the mapping `checked_type` reads."""
    if spec is None:
        return None
    return {
        "type": getattr(spec, "type", None),
        "externalName": getattr(spec, "external_name", None),
    }


__all__ = ["ANNOTATION", "checked_query_service", "checked_type", "query_service"]
