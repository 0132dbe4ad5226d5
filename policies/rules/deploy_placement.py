"""deploy-placement: each environment deploys to the project, region, cluster or kubeconfig
context the platform lists for it, never to one the blueprint picks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.model import Environment
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.scoping import KEY_DESCRIPTION, KEY_PATTERN, granted
from inferplane.policies.stack import Stack

CONFIG_KEY = "deploy-placement.allowed_placements"
"""Where a blueprint's placements are listed, as the messages name it."""

FIELDS: Mapping[str, tuple[str, ...]] = {
    "aws": ("cloud", "region", "cluster"),
    "gcp": ("cloud", "project", "region", "location", "cluster"),
    "kubernetes": ("cloud", "context"),
}
"""What places an environment, per cloud, in the order a mismatch is reported. The AWS
account is the deploying credentials' (no blueprint names it); a GKE cluster's `location`
is its region or zone; `cluster` is the attached cluster's name (`cluster.existing`), and an
entry without it is a cluster the stack creates."""


def placement(env: Environment) -> dict[str, str | None]:
    """Where `env` deploys, as the keys of an `allowed_placements` entry."""
    if env.kubernetes:
        return {"cloud": "kubernetes", "context": env.cluster.context}
    found: dict[str, str | None] = {"cloud": env.cloud, "region": env.region}
    if env.cloud == "gcp":
        found |= {"project": env.project, "location": env.cluster.location}
    found["cluster"] = env.cluster.existing
    return {key: found[key] for key in FIELDS[env.cloud]}


def _entry(entry: Mapping[str, Any]) -> dict[str, str | None]:
    """An entry as `placement` spells it: a GKE `location` defaults to the region."""
    cloud = str(entry.get("cloud", ""))
    out = {key: (None if entry.get(key) is None else str(entry[key])) for key in FIELDS[cloud]}
    if cloud == "gcp" and out["location"] is None:
        out["location"] = out["region"]
    return out


def _field_path(env: Environment, key: str) -> YamlPath:
    name = env.name
    if key == "cloud":
        return ("environments", name, "cloud")
    if key in ("cluster", "context", "location"):
        written = {"cluster": "existing"}.get(key, key)
        path: YamlPath = ("environments", name, "cluster", written)
        return path if env.source.has(path) else ("environments", name, "cluster")
    return ("environments", name, key)


def describe(where: Mapping[str, str | None]) -> str:
    """``gcp project acme, region us-central1, location us-central1, cluster prod-gke``."""
    cloud = where["cloud"]
    parts = []
    for key, value in where.items():
        if key == "cloud":
            continue
        if key == "cluster" and value is None:
            parts.append("a cluster it creates")
        else:
            parts.append(f"{'kubeconfig context' if key == 'context' else key} {value}")
    return f"{cloud} {', '.join(parts)}"


def entry_text(where: Mapping[str, str | None]) -> str:
    """`where` as a YAML flow mapping for the platform's config."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in where.items() if v is not None) + "}"


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    env = stack.env
    if env is None:  # online the stack program holds the placement to the stack's config
        return
    actual = placement(env)
    listed = [_entry(e) for e in granted(config["allowed_placements"], env.blueprint, env.name)]
    if actual in listed:
        return
    key = f'"{env.blueprint}/{env.name}"'
    if not listed and env.kubernetes:
        return  # the stack program holds the context to the stack's kubernetes:context
    if not listed:
        yield Finding(
            f"environments.{env.name}",
            ("environments", env.name),
            f"the platform lists no placement for blueprint {env.blueprint} environment "
            f"{env.name}, which would deploy to {describe(actual)}: where an environment "
            "deploys (and whose grants follow it there) is the platform's decision; the "
            f"platform team adds `{key}: [{entry_text(actual)}]` under {CONFIG_KEY} in its "
            "policy config",
        )
        return
    # Blame the first value no listed entry shares with the environment.
    blamed = next(
        k
        for i, k in enumerate(actual)
        if not any(all(e.get(j) == actual[j] for j in list(actual)[: i + 1]) for e in listed)
    )
    shown = [e for e in listed if e["cloud"] == actual["cloud"]] or listed
    yield Finding(
        f"environments.{env.name}",
        _field_path(env, blamed),
        f"environment {env.name} deploys to {describe(actual)}, not where the platform places "
        f"blueprint {env.blueprint} environment {env.name} "
        f"({'; or '.join(describe(e) for e in shown)}); deploy there, or ask the platform "
        f"team to add this placement under {CONFIG_KEY} in its policy config",
    )


_NAME = {"type": "string", "minLength": 1, "maxLength": 253, "pattern": "^[A-Za-z0-9._:@/-]+$"}
_ENTRY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["cloud"],
    "properties": {
        "cloud": {"enum": list(FIELDS)},
        **{key: _NAME for key in ("project", "region", "location", "cluster", "context")},
    },
    "allOf": [
        {
            "if": {"properties": {"cloud": {"const": cloud}}},
            "then": {
                "required": [k for k in keys if k not in ("cloud", "location", "cluster")],
                "propertyNames": {"enum": list(keys)},
            },
        }
        for cloud, keys in FIELDS.items()
    ],
}
"""An entry: the keys of its cloud (`FIELDS`), all but `location` and `cluster` required."""

RULE = Rule(
    id="deploy-placement",
    title="Each environment deploys where the platform places it",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "`project`, `region`, `cluster.existing`, `cluster.location` and `cluster.context` "
        "become the explicit providers of an environment's stack, which override the "
        "stack's own `gcp:project`, `aws:region` and `kubernetes:context`. Every grant the "
        "platform keys by `<blueprint>/<environment>` follows whatever the blueprint calls "
        "that environment, so a pull request that moves `prod` into another project or "
        "cluster (service accounts, project IAM grants, GPU node pools there) or points "
        "`local` at an administrator's kubeconfig context would take them along. Where "
        "each environment deploys is the platform's decision."
    ),
    remediation=(
        "Deploy where the platform lists, or have the platform team add the placement "
        "under allowed_placements (the message gives the entry). The stack program refuses "
        "besides a placement that differs from the stack's own `gcp:project`, `aws:region` "
        "or `kubernetes:context`."
    ),
    config=(
        ConfigKey(
            "allowed_placements",
            {},
            {
                "type": "object",
                "propertyNames": {"pattern": KEY_PATTERN},
                "additionalProperties": {"type": "array", "items": _ENTRY},
            },
            f"Where environments may deploy, {KEY_DESCRIPTION}: entries `{{cloud: aws, "
            "region, cluster}`, `{cloud: gcp, project, region, location, cluster}` or "
            "`{cloud: kubernetes, context}`, each value exact; `cluster` names an attached "
            "cluster (`cluster.existing`), and an entry without it allows a cluster the "
            "stack creates; a GKE `location` defaults to the region. An environment matches "
            "an entry when all of its placement equals the entry. The default lists "
            "nothing: every aws and gcp environment fails until the platform places it; a "
            "kubernetes environment with no entry is held to its stack's "
            "`kubernetes:context` by the stack program alone.",
        ),
    ),
    offline_only=True,
    sources=(
        "The blueprint's cloud, project, region and cluster (existing, location, context), "
        "offline only; online the stack program compares them with the stack's config."
    ),
    example_config="""\
deploy-placement:
  allowed_placements:
    golden/staging: [{cloud: aws, region: us-east-1}]
    golden/prod: [{cloud: gcp, project: golden-prod, region: us-central1, cluster: prod-gke}]
""",
    passing_example="""\
environments:
  prod: {project: golden-prod}
""",
    failing_example="""\
environments:
  prod: {project: golden-finance}
""",
)
