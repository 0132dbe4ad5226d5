"""pinned-images: every image and chart is pinned, so a rebuild deploys the same bits."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint.errors import YamlPath
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import (
    HELM_CHART,
    HELM_KINDS,
    WORKLOAD_KINDS,
    ImageRef,
    Resource,
)
from inferplane.policies.stack import Stack

CHART_VERSION_KEYS = {
    "gpu-operator": "gpu_operator",
    "keda": "keda",
    "kube-prometheus-stack": "kube_prometheus_stack",
    "aws-load-balancer-controller": "aws_load_balancer_controller",
    "cluster-autoscaler": "cluster_autoscaler",
    "argo-rollouts": "argo_rollouts",
}


def _field(stack: Stack, r: Resource, image: str) -> tuple[str, YamlPath]:
    model = r.model
    if model:
        env = stack.env
        if env is not None and model in env.models and env.models[model].image:
            return f"models.{model}", ("models", model, "image")
        if "vllm" in image:
            return f"models.{model}", ("versions", "vllm")
        if "tritonserver" in image or "tensorrt" in image:
            return f"models.{model}", ("versions", "triton")
        return f"models.{model}", ("models", model)
    return "versions", ("versions",)


def unpinned(image: str, config: RuleConfig) -> str | None:
    """Why `image` is not pinned, or None when it is."""
    ref = ImageRef.parse(image)
    if ref.digest:
        return None
    if config["require_digest"]:
        return "has no digest"
    if not ref.tag:
        return "has no tag (means latest)"
    if ref.tag in config["mutable_tags"]:
        return f"uses the moving tag {ref.tag!r}"
    return None


def local_chart(release: Resource) -> bool:
    """A chart read from a directory on the deploying machine (Helm loads a chart reference
    that is a path as it is, with no repository), e.g. the router's pinned source under
    ``inferplane:routerChart``: its files are its version."""
    chart = str(release.props.get("chart", ""))
    return chart.startswith(("/", "./", "../")) and not release.props.get("repositoryOpts")


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    for r in stack.of_type(*WORKLOAD_KINDS):
        for c in (*r.init_containers, *r.containers):
            if not c.image or stack.prepull_copy(r, c.image):
                continue
            why = unpinned(c.image, config)
            if why:
                target, field = _field(stack, r, c.image)
                yield Finding(
                    target,
                    field,
                    f"image {c.image} of {r.k8s_name}/{c.name} {why}; pin a version tag "
                    "(or a digest) so every rollout runs the same image",
                    r.ref,
                )
    for release in stack.of_type(*HELM_KINDS):
        if release.type == HELM_CHART and "chart" not in release.props:
            # A chart Pulumi renders is a component: `pulumi preview` hands the policy pack
            # its children (judged above) but not its own inputs (seen with the Pulumi CLI
            # v3.274.1 and pulumi-kubernetes' `helm.sh/v4:Chart` in the end-to-end run).
            # The offline check judges the inputs the program gave it.
            continue
        chart = str(release.props.get("chart", ""))
        if not release.props.get("version") and not local_chart(release):
            key = CHART_VERSION_KEYS.get(chart.rsplit("/", 1)[-1])
            yield Finding(
                "versions",
                ("versions", key) if key else ("versions",),
                f"Helm chart {release.name} installs chart {chart or '?'} without a "
                "version, i.e. whatever is newest; pin the chart version",
                release.ref,
            )


RULE = Rule(
    id="pinned-images",
    title="Container images and Helm charts are pinned",
    level="mandatory",
    scope="resource",
    check=check,
    rationale=(
        "A moving tag (`latest`, `main`, no tag at all) makes two rollouts of the same "
        "commit run different code: a node replaced at night pulls a new server version "
        "nobody tested, and an engine built for one TensorRT meets another; and whoever can "
        "push the tag decides what runs. Pinned tags (or digests) make deployments "
        "reproducible and rollbacks real. Mandatory, with `trusted-registries`: an image "
        "comes from a trusted registry, at a fixed version."
    ),
    remediation=(
        "Pin every models.<m>.image to a version tag (or digest) and keep versions.* pinned "
        "(the toolkit's defaults are). Set require_digest: true to demand digests."
    ),
    links=("https://kubernetes.io/docs/concepts/containers/images/#image-names",),
    config=(
        ConfigKey(
            "require_digest",
            False,
            {"type": "boolean"},
            "Demand an @sha256 digest on every image, not only a fixed tag.",
        ),
        ConfigKey(
            "mutable_tags",
            ["latest", "main", "master", "nightly", "edge", "stable", "dev"],
            {"type": "array", "items": {"type": "string"}},
            "Tags that move and therefore do not pin an image.",
        ),
    ),
    sources=(
        "Each workload (containers and init containers) and Helm chart alone. Offline and "
        "online alike."
    ),
    passing_example="""\
models:
  chat: {server: vllm, image: vllm/vllm-openai:v0.10.2}
""",
    failing_example="""\
models:
  chat: {server: vllm, image: registry.example.com/ml/vllm:nightly, base_release: v0.33.0}
""",
)
