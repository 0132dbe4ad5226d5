"""What the llm-d router's pods may do: the Pod Security settings its chart cannot express,
and their NetworkPolicy.

Pod Security. The blueprint's namespace enforces the ``restricted`` level
(`inferplane.components.hardening`), which refuses a pod unless every container sets
``allowPrivilegeEscalation: false``, drops ``ALL`` capabilities and runs as non-root, and the
pod or each container sets a ``RuntimeDefault`` or ``Localhost`` seccomp profile
(https://kubernetes.io/docs/concepts/security/pod-security-standards/, "Restricted"). The
chart at v0.10.0 renders no ``securityContext`` for the picker's container or its pod
(``config/charts/routerlib/templates/_deployment.yaml``; only the proxy sidecar reads
``router.proxy.securityContext``), so `restricted_picker_pod` adds them to the rendered
Deployment before it is sent, as a Pulumi transform of the chart's children. Both images
run as a non-root user already, so no user is invented:

- the picker: ``USER 65532:65532`` (llm-d/llm-d-router ``Dockerfile.epp`` at v0.10.0);
- the Envoy proxy, ``envoyproxy/envoy:distroless-<version>`` (the chart's preset,
  ``config/charts/llm-d-router-standalone/values.yaml``): the ``envoy-distroless`` stage of
  envoyproxy/envoy ``ci/Dockerfile-envoy`` is built on ``gcr.io/distroless/...:nonroot``,
  whose user is ``nonroot``, uid 65532 (GoogleContainerTools/distroless README, "nonroot").

The uid is still written out (`PICKER_UID`): the kubelet can verify ``runAsNonRoot`` only
for a numeric user. The root filesystem is left writable: neither image's needs for
scratch space are documented, and ``restricted`` does not ask for it.

NetworkPolicy ``<model>-<zone>-epp``. The namespace denies everything but DNS by default;
a picker pod gets exactly:

- ingress on the ext_proc port from its zone's proxies (their own pods,
  `inferplane.components.serving.routing.router_proxy`; the proxies' NetworkPolicy
  ``<model>-<zone>-proxy``, `proxy_network_policy_spec`, admits the ranges and namespaces
  that may reach the model at all, as for the model's own load balancer);
- ingress on the picker's metrics port from the Prometheus namespace;
- egress to its zone's model pods on their serving port: the picker scrapes their
  ``/metrics``;
- egress to the Kubernetes API server (the picker watches its InferencePool, the pods and
  its objectives, and leader election holds a Lease), on TCP 443 and 6443. Where a policy
  sees that connection differs by dataplane:

  - EKS's network policy agent sees only the address the pod dialled, the ``kubernetes``
    Service's ClusterIP (the same behaviour `network_policies` documents for DNS), which
    is the first address of the service range (kube-apiserver gives it to the
    ``kubernetes`` Service: kubernetes ``pkg/controlplane/services.go``,
    `ServiceIPRange`). The clusters inferplane creates set no range, so EKS picks
    10.100.0.0/16 or 172.20.0.0/16 ("If you don't specify a block, Kubernetes assigns
    addresses from either the 10.100.0.0/16 or 172.20.0.0/16 CIDR blocks", EKS API
    ``KubernetesNetworkConfigRequest.serviceIpv4Cidr``): both first addresses are allowed,
    as /32s, and nothing else.
  - GKE Dataplane V2 translates the Service address before policy, so it sees the control
    plane's Private Service Connect endpoint, which lies within the cluster network
    (https://cloud.google.com/kubernetes-engine/docs/concepts/private-service-connect):
    the cluster's range is allowed.
  - A cluster whose network is not known (attached, or ``kubernetes``): the private
    ranges, which hold both its ClusterIPs and any private endpoint; a wider allowance
    than the others, for want of the cluster's addresses.
  - Cilium (a ``kubernetes`` environment with ``cluster.dataplane: cilium``): no
    ``ipBlock`` reaches the API server. Cilium gives it the reserved ``kube-apiserver``
    identity, and CIDR selectors do not match in-cluster entities unless the agent runs
    with ``--policy-cidr-match-mode=nodes`` (cilium/cilium
    ``Documentation/security/policy/layer3.rst``, "Selecting nodes with CIDR / ipBlock":
    "you must ordinarily use the ``kube-apiserver`` entity as part of a
    CiliumNetworkPolicy"; cilium/cilium#20550, #33525). That setting is the cluster's,
    not the blueprint's, so the NetworkPolicy leaves the API server out and a
    CiliumNetworkPolicy ``<model>-<zone>-epp-api-server`` (`api_server_cilium_policy_spec`)
    allows ``toEntities: [kube-apiserver]`` on the same ports. Allows add up: a pod may
    send where "at least one egress rule exists which selects the destination"
    (``layer3.rst``, "Egress"), so the two together are the picker's whole egress.
    The ports are the API server's own (``toPorts`` match after the ``kubernetes``
    Service's address is translated); ``port`` is a string in Cilium's API
    (``pkg/policy/api/l4.go``, `PortProtocol`).

  None of this is exercised by the end-to-end run, whose simulated nodes enforce no
  NetworkPolicy; the transform of the picker's pods is exercised there (their admission
  under ``restricted``), not under Pulumi's mocks, which render no chart.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.components.serving.containers import PORTS, Manifest
from inferplane.components.serving.network_policies import (
    PRIVATE_IPV4,
    client_peers,
    namespace_selector,
)
from inferplane.components.serving.routing.load_balancer import source_cidrs
from inferplane.components.serving.spec import ServingEnvironment

PICKER_UID: Final = 65532
"""The user of both images (see the module docstring)."""
EXT_PROC_PORT: Final = 9002
"""The picker's ext_proc port (``routerlib/values.yaml``, ``epp.extProcPort``)."""
PROXY_PORT: Final = 8081
"""The proxy's listener (chart values ``router.extraServicePorts``: ``http`` 8081)."""
METRICS_PORT: Final = 9090
"""The picker container's ``metrics`` port (``routerlib/templates/_deployment.yaml``)."""
API_SERVER_PORTS: Final = (443, 6443)
"""The API server's port behind the ``kubernetes`` Service: 443 on EKS and GKE, 6443 where
kubeadm's default applies."""
DEPLOYMENT_TYPE: Final = "kubernetes:apps/v1:Deployment"
KUBE_APISERVER_ENTITY: Final = "kube-apiserver"
"""Cilium's entity for the API server, in the cluster or outside it (cilium/cilium
``Documentation/security/policy/layer3.rst``, "Entities based"; its example
``examples/policies/l3/entities/apiserver.yaml``)."""


def pod_security_context() -> Manifest:
    return {
        "runAsNonRoot": True,
        "runAsUser": PICKER_UID,
        "runAsGroup": PICKER_UID,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def container_security_context() -> Manifest:
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "runAsUser": PICKER_UID,
        "runAsGroup": PICKER_UID,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def restrict(deployment: Manifest) -> Manifest:
    """`deployment` (as the chart renders it) with the pod's and every container's
    security context set to `pod_security_context` and `container_security_context`;
    a key the chart did set is overridden, so no value of the chart can loosen them."""
    out = copy.deepcopy(deployment)
    pod = out.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
    pod["securityContext"] = {**(pod.get("securityContext") or {}), **pod_security_context()}
    for kind in ("initContainers", "containers"):
        for container in pod.get(kind) or []:
            container["securityContext"] = {
                **(container.get("securityContext") or {}),
                **container_security_context(),
            }
    return out


def restricted_picker_pod(
    deployment_name: str,
) -> Callable[[pulumi.ResourceTransformArgs], pulumi.ResourceTransformResult | None]:
    """The transform that applies `restrict` to the chart's Deployment `deployment_name`
    and leaves every other object as rendered."""

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        props: dict[str, Any] = dict(args.props)
        if args.type_ != DEPLOYMENT_TYPE:
            return None
        if (props.get("metadata") or {}).get("name") != deployment_name:
            return None
        return pulumi.ResourceTransformResult(props=restrict(props), opts=args.opts)

    return transform


EKS_API_SERVICE_IPS: Final = ("10.100.0.1/32", "172.20.0.1/32")
"""The ``kubernetes`` Service's ClusterIP in either service range EKS may pick."""


def api_server_blocks(env: ServingEnvironment) -> list[str]:
    """Where a policy sees the API server from a pod (see the module docstring)."""
    if env.cloud == "aws" and env.vpc_cidr:
        return list(EKS_API_SERVICE_IPS)
    return [env.vpc_cidr] if env.vpc_cidr else list(PRIVATE_IPV4)


def picker_network_policy_spec(
    env: ServingEnvironment,
    picker_labels: dict[str, str],
    pool_labels: dict[str, str],
    proxy_labels: dict[str, str],
) -> Manifest:
    """The NetworkPolicy of one zone's picker pods (see the module docstring): the
    zone's proxies (`proxy_labels`) ask them on the ext_proc port."""
    return {
        "podSelector": {"matchLabels": dict(picker_labels)},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [
            {
                "from": [{"podSelector": {"matchLabels": dict(proxy_labels)}}],
                "ports": [{"protocol": "TCP", "port": EXT_PROC_PORT}],
            },
            {
                "from": [namespace_selector(env.prometheus_namespace)],
                "ports": [{"protocol": "TCP", "port": METRICS_PORT}],
            },
        ],
        "egress": [
            {
                "to": [{"podSelector": {"matchLabels": dict(pool_labels)}}],
                "ports": [{"protocol": "TCP", "port": PORTS["http"]}],
            },
            *([] if cilium_api_server(env) else [api_server_egress_rule(env)]),
        ],
    }


def proxy_network_policy_spec(
    env: ServingEnvironment,
    proxy_labels: dict[str, str],
    picker_labels: dict[str, str],
    model_labels: dict[str, str],
) -> Manifest:
    """The NetworkPolicy of one zone's proxy pods (``<release>-proxy``): ingress on the
    listener from whoever may reach the model at all (`load_balancer.source_cidrs`,
    `network_policies.client_peers`); egress to the zone's pickers on the ext_proc port
    and to the model's pods on their serving port (the picked replica, or the fallback
    through the model's Service, whose endpoints may be in any zone)."""
    return {
        "podSelector": {"matchLabels": dict(proxy_labels)},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [
            {
                "from": client_peers(env, source_cidrs(env)),
                "ports": [{"protocol": "TCP", "port": PROXY_PORT}],
            }
        ],
        "egress": [
            {
                "to": [{"podSelector": {"matchLabels": dict(picker_labels)}}],
                "ports": [{"protocol": "TCP", "port": EXT_PROC_PORT}],
            },
            {
                "to": [{"podSelector": {"matchLabels": dict(model_labels)}}],
                "ports": [{"protocol": "TCP", "port": PORTS["http"]}],
            },
        ],
    }


def api_server_egress_rule(env: ServingEnvironment) -> Manifest:
    """The API server by address, for dataplanes that match it so (module docstring)."""
    return {
        "to": [{"ipBlock": {"cidr": cidr}} for cidr in api_server_blocks(env)],
        "ports": [{"protocol": "TCP", "port": port} for port in API_SERVER_PORTS],
    }


def cilium_api_server(env: ServingEnvironment) -> bool:
    """Whether the pickers reach the API server through `api_server_cilium_policy_spec`."""
    return env.cloud == "kubernetes" and env.dataplane == "cilium"


def api_server_cilium_policy_spec(picker_labels: dict[str, str]) -> Manifest:
    """The CiliumNetworkPolicy (``cilium.io/v2``) spec that lets one zone's picker pods
    reach the API server, on `API_SERVER_PORTS`, and nothing else (module docstring)."""
    return {
        "endpointSelector": {"matchLabels": dict(picker_labels)},
        "egress": [
            {
                "toEntities": [KUBE_APISERVER_ENTITY],
                "toPorts": [
                    {"ports": [{"port": str(port), "protocol": "TCP"} for port in API_SERVER_PORTS]}
                ],
            }
        ],
    }


def api_server_cilium_policy(
    name: str,
    picker: str,
    namespace: str,
    labels: dict[str, str],
    picker_labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.apiextensions.CustomResource:
    """CiliumNetworkPolicy ``<picker>-api-server`` (`api_server_cilium_policy_spec`) of the
    pods with `picker_labels`; `opts` carries the parent and provider."""
    return k8s.apiextensions.CustomResource(
        f"{name}-epp-api-server",
        api_version="cilium.io/v2",
        kind="CiliumNetworkPolicy",
        metadata={"name": f"{picker}-api-server", "namespace": namespace, "labels": labels},
        spec=api_server_cilium_policy_spec(picker_labels),
        opts=opts,
    )
