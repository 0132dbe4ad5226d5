"""trusted-registries: every workload image comes from a registry the policy config trusts."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fnmatch import fnmatchcase
from typing import Any

from inferplane.blueprint.errors import YamlPath
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import WORKLOAD_KINDS, ImageRef, Resource
from inferplane.policies.scoping import KEY_DESCRIPTION, KEY_PATTERN, granted
from inferplane.policies.stack import Stack

DOCKER_HUB = "docker.io"


def repository(image: str) -> tuple[str, str]:
    """(registry host, path) of `image`, as a container runtime resolves it: the first
    component is a registry only when it has a `.` or `:` or is `localhost`; otherwise the
    image is on Docker Hub, and a one-component name is in its `library/` namespace
    (https://github.com/distribution/reference/blob/main/normalize.go)."""
    repo = ImageRef.parse(image).repository
    head, sep, rest = repo.partition("/")
    if sep and ("." in head or ":" in head or head == "localhost"):
        return head.lower(), rest
    return DOCKER_HUB, repo if sep else f"library/{repo}"


def trusted(image: str, patterns: list[str], facts: Mapping[str, str]) -> bool:
    """Whether `image` matches one of `patterns` (``host/path``, fnmatch, with ``{region}``
    and ``{project}`` standing for the environment's). The host and the path are matched
    apart, so a wildcard in one never spans into the other."""
    host, path = repository(image)
    for pattern in patterns:
        try:
            filled = pattern.format(**facts)
        except KeyError:  # a fact this run does not know (online: the GCP project)
            continue
        want_host, _, want_path = filled.partition("/")
        if fnmatchcase(host, want_host) and fnmatchcase(path, want_path or "*"):
            return True
    return False


def _containers(r: Resource) -> Iterator[Mapping[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in r.pod_spec.get(key) or ():
            if isinstance(c, Mapping) and c.get("image"):
                yield c


def _field(stack: Stack, r: Resource) -> tuple[str, YamlPath]:
    env, model = stack.env, r.model
    if model:
        if env is not None and model in env.models and env.models[model].image:
            return f"models.{model}", ("models", model, "image")
        return f"models.{model}", ("models", model)
    return "versions", ("versions",)


def _facts(stack: Stack) -> dict[str, str]:
    facts: dict[str, str] = {}
    if stack.facts is not None and stack.facts.region:
        facts["region"] = stack.facts.region
    if stack.env is not None and stack.env.project:
        facts["project"] = stack.env.project
    return facts


ECR_HOST = "{account}.dkr.ecr.{region}.amazonaws.com"
"""A private ECR registry: one per account and region
(https://docs.aws.amazon.com/AmazonECR/latest/userguide/Registries.html)."""


def ecr_patterns(
    accounts: Mapping[str, Any], blueprint: str | None, environment: str | None
) -> list[str]:
    """Patterns of the ECR registries `accounts` trusts in `environment` of `blueprint`
    (`policies.scoping.granted`), in the environment's region."""
    listed = granted(accounts, blueprint, environment)
    return [ECR_HOST.format(account=a, region="{region}") + "/*" for a in listed]


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    facts_of = stack.facts
    environment = facts_of.environment if facts_of is not None else None
    blueprint = facts_of.blueprint if facts_of is not None else None
    patterns = [str(p) for p in config["registries"]]
    patterns += ecr_patterns(config["ecr_accounts"], blueprint, environment)
    facts = _facts(stack)
    for r in stack.of_type(*WORKLOAD_KINDS):
        for c in _containers(r):
            # A `Never` pull policy runs an image already on the node and pulls nothing
            # (https://kubernetes.io/docs/concepts/containers/images/#image-pull-policy);
            # GKE's driver installer works that way.
            if c.get("imagePullPolicy") == "Never":
                continue
            image = str(c["image"])
            if trusted(image, patterns, facts) or stack.prepull_copy(r, image):
                continue
            host, path = repository(image)
            target, field = _field(stack, r)
            yield Finding(
                target,
                field,
                f"image {image} of {r.k8s_name}/{c.get('name', '?')} comes from {host}/{path}, "
                "which is not a trusted registry; use an image from NVIDIA's or vLLM's "
                "registry or the environment's own registry (an ECR account is trusted only "
                "when the platform's policy config lists it under "
                "trusted-registries.ecr_accounts), or have the platform team add the "
                "registry to trusted-registries' registries",
                r.ref,
            )


RULE = Rule(
    id="trusted-registries",
    title="Container images come from trusted registries",
    level="mandatory",
    scope="resource",
    check=check,
    rationale=(
        "A model server runs with the model store's read access, the model's secrets and a "
        "GPU node. An image from an arbitrary registry (a typo-squatted Docker Hub name, a "
        "personal namespace) runs whatever its owner pushed there. Images come only from "
        "the registries the tool itself uses and the environment's own registries; that "
        "they are pinned to a version or digest is `pinned-images`' concern."
    ),
    remediation=(
        "Mirror the image into the environment's registry (the ECR of an account the "
        "platform lists in ecr_accounts, in the region; Artifact "
        "Registry `<region>-docker.pkg.dev/<project>/`, or `gcr.io/<project>/`) or use "
        "NVIDIA's (`nvcr.io/nvidia/`) or vLLM's (`docker.io/vllm/`) images. A site adds "
        "registries to `registries`."
    ),
    links=(
        "https://kubernetes.io/docs/concepts/containers/images/#image-names",
        "https://docs.aws.amazon.com/AmazonECR/latest/userguide/Registries.html",
        "https://cloud.google.com/artifact-registry/docs/docker/names",
    ),
    config=(
        ConfigKey(
            "registries",
            [
                "nvcr.io/nvidia/*",
                "docker.io/vllm/*",
                "public.ecr.aws/aws-cli/*",
                "gcr.io/google.com/cloudsdktool/*",
                "registry.k8s.io/pause",
                "docker.io/valkey/valkey",
                "ghcr.io/llm-d/llm-d-router-endpoint-picker",
                "docker.io/envoyproxy/envoy",
                "{region}-docker.pkg.dev/{project}/*",
                "gcr.io/{project}/*",
            ],
            {"type": "array", "items": {"type": "string", "minLength": 1}},
            "Trusted image repositories, `host/path` fnmatch patterns matched against the "
            "image without its tag or digest (Docker Hub images as docker.io/<ns>/<name>, "
            "official ones as docker.io/library/<name>). `{region}` and `{project}` stand "
            "for the environment's region and GCP project. The defaults are the registries "
            "the tool's own images come from and the environment's own Artifact Registry "
            "and Container Registry. No pattern may trust every AWS account's ECR: list "
            "the accounts under ecr_accounts.",
        ),
        ConfigKey(
            "ecr_accounts",
            {},
            {
                "type": "object",
                "propertyNames": {"pattern": KEY_PATTERN},
                "additionalProperties": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^[0-9]{12}$"},
                },
            },
            "AWS accounts whose private ECR registry, in the environment's region, is "
            f"trusted, {KEY_DESCRIPTION}: account ids. Any other account's ECR is "
            "untrusted, whoever owns it.",
        ),
    ),
    sources=(
        "Each workload's containers, init and ephemeral containers alone. Offline and "
        "online alike; online `{project}` is not known, so only the other patterns apply."
    ),
    passing_example="""\
models:
  chat: {server: vllm, image: vllm/vllm-openai:v0.10.2}
""",
    failing_example="""\
models:
  chat: {server: vllm, image: docker.io/someone/vllm-openai:v0.10.2, base_release: v0.10.2}
""",
)
