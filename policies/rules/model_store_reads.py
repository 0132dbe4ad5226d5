"""model-store-reads: the cluster's storage grants read nothing outside the model store."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.store_endpoint import DEFAULT_PORTS
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import Resource
from inferplane.policies.scoping import KEY_DESCRIPTION, KEY_PATTERN, granted
from inferplane.policies.stack import Stack

AWS_ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
AWS_POLICY = "aws:iam/policy:Policy"
GCS_BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
_S3_OBJECT = re.compile(r"^arn:aws[a-z-]*:s3:::([^/]+)/(.*)$")
_S3_BUCKET = re.compile(r"^arn:aws[a-z-]*:s3:::([^/]+)$")
# The object prefix a condition built by `gcs_conditions` allows: the CEL literal of
# resource.name.startsWith("projects/_/buckets/<bucket>/objects/<prefix>").
_GCS_OBJECTS = re.compile(
    r'resource\.name\.startsWith\("projects/_/buckets/([^/"\\]+)/objects/((?:[^"\\]|\\.)*)"\)'
)


def _listify(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def s3_reads(document: Any) -> Iterator[tuple[str, str]]:
    """(bucket, key prefix) each Allow statement of an IAM policy lets its holder read or
    list; a resource or list prefix ending in ``*`` counts as that prefix, anything else
    with a wildcard as the whole bucket."""
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError:
            return
    if not isinstance(document, Mapping):
        return
    for st in _listify(document.get("Statement")):
        if not isinstance(st, Mapping) or st.get("Effect") != "Allow":
            continue
        actions = [str(a) for a in _listify(st.get("Action"))]
        if not any(a == "*" or a.lower().startswith("s3:") for a in actions):
            continue
        for res in (str(r) for r in _listify(st.get("Resource"))):
            if res == "*":
                yield "*", ""
            elif m := _S3_OBJECT.match(res):
                yield m.group(1), _prefix(m.group(2))
            elif m := _S3_BUCKET.match(res):
                like = (st.get("Condition") or {}).get("StringLike") or {}
                prefixes = _listify(like.get("s3:prefix")) if like.get("s3:prefix") else [""]
                for p in prefixes:
                    yield m.group(1), _prefix(str(p))


def _prefix(pattern: str) -> str:
    """The fixed prefix of an IAM resource pattern: up to its first wildcard."""
    cut = min((i for i in (pattern.find("*"), pattern.find("?")) if i >= 0), default=-1)
    return pattern if cut < 0 else pattern[:cut]


def gcs_reads(member: Resource) -> Iterator[tuple[str, str]]:
    """(bucket, prefix) a GCS bucket grant covers (the whole bucket without a condition)."""
    bucket = str(member.props.get("bucket", ""))
    condition = member.props.get("condition")
    expression = str(condition.get("expression", "")) if isinstance(condition, Mapping) else ""
    m = _GCS_OBJECTS.search(expression)
    if m and m.group(1) == bucket:
        yield bucket, re.sub(r"\\(.)", r"\1", m.group(2))
    else:
        yield bucket, ""


def _blame(stack: Stack, bucket: str, prefix: str) -> tuple[str, YamlPath]:
    env = stack.env
    assert env is not None
    for model in env.models.values():
        src = model.source
        if src.bucket == bucket and src.key is not None and src.key.startswith(prefix):
            return f"models.{model.name}", ("models", model.name, "source")
    return f"environments.{env.name}", ("environments", env.name, "model_store")


ALLOWED_STORES_KEY = "model-store-reads.allowed_model_stores"
"""Where a blueprint's store is allowed, as the messages name it."""


def allowed_prefixes(allowed: Mapping[str, Any], environment: str, blueprint: str) -> list[str]:
    """The store URI prefixes `allowed` grants to `environment` of `blueprint`
    (`policies.scoping.granted`), with ``{blueprint}`` replaced by the blueprint's name."""
    listed = granted(allowed, blueprint, environment)
    return [str(p).replace("{blueprint}", blueprint) for p in listed]


def store_allowed(uri: str, prefixes: list[str]) -> bool:
    """Whether `uri` (a store or an absolute source) lies under one of `prefixes`. Every
    prefix ends in ``/`` (schema), so ``s3://acme`` never admits ``s3://acme-evil/``."""
    folder = uri if uri.endswith("/") else uri + "/"
    return any(folder.startswith(p) for p in prefixes)


def _unlisted_stores(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    """The model store, and every absolute s3:// or gs:// source, must lie under a prefix
    the platform lists: the writer identities get write access in the store, the reader
    reads all of it."""
    env = stack.env
    assert env is not None
    prefixes = allowed_prefixes(config["allowed_model_stores"], env.name, env.blueprint)
    shown = ", ".join(prefixes) or "none"
    hint = (
        f"use a store the platform lists for this blueprint and environment ({shown}), or "
        f"ask the platform team to add it to {ALLOWED_STORES_KEY} in its policy config"
    )
    if not store_allowed(env.model_store, prefixes):
        yield Finding(
            f"environments.{env.name}",
            ("environments", env.name, "model_store"),
            f"model_store {env.model_store} is not a model store the platform allows; {hint}",
        )
    for model in env.models.values():
        uri = model.source.uri  # a relative source is inside the store: judged above
        inside = store_allowed(uri, [env.model_store.rstrip("/") + "/"])
        if uri.startswith(("s3://", "gs://")) and not inside and not store_allowed(uri, prefixes):
            yield Finding(
                f"models.{model.name}",
                ("models", model.name, "source"),
                f"source {uri} of model {model.name} is not in a model store the platform "
                f"allows; {hint}",
            )


ALLOWED_ENDPOINTS_KEY = "model-store-reads.allowed_store_endpoints"


def _endpoint_key(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of an endpoint; the port None for a scheme alone (``https://``),
    and the scheme's default when the URL names none."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname:
        return parts.scheme, "", None
    return parts.scheme, parts.hostname.lower(), parts.port or DEFAULT_PORTS.get(parts.scheme)


def endpoint_allowed(url: str, listed: list[str]) -> bool:
    """Whether `url` is one of `listed`: the same scheme, host and port, or a scheme alone
    (``http://``, ``https://``) that admits every endpoint of that scheme."""
    scheme, host, port = _endpoint_key(url)
    for entry in listed:
        e_scheme, e_host, e_port = _endpoint_key(entry)
        if e_scheme == scheme and (not e_host or (e_host, e_port) == (host, port)):
            return True
    return False


def _unlisted_endpoint(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    """A kubernetes environment's store endpoint must be one the platform lists: every
    store pod sends it the store's keys (writer keys among them), and the NetworkPolicies
    open egress to it."""
    env = stack.env
    assert env is not None
    if env.model_store_endpoint is None:
        return
    listed = [str(e) for e in granted(config["allowed_store_endpoints"], env.blueprint, env.name)]
    if endpoint_allowed(env.model_store_endpoint, listed):
        return
    yield Finding(
        f"environments.{env.name}",
        ("environments", env.name, "model_store_endpoint"),
        f"model_store_endpoint {env.model_store_endpoint} is not a store endpoint the platform "
        f"allows (listed: {', '.join(listed) or 'none'}); the store's pods would send it "
        "their keys and reach it through the NetworkPolicies; use a listed endpoint, or ask "
        f"the platform team to add it to {ALLOWED_ENDPOINTS_KEY} in its policy config",
    )


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    env = stack.env
    if env is None:  # online the model store is not known; the grants are judged offline
        return
    yield from _unlisted_stores(stack, config)
    yield from _unlisted_endpoint(stack, config)
    store_bucket, store_prefix = env.store_bucket, env.store_prefix
    for r in stack.of_type(AWS_ROLE_POLICY, AWS_POLICY, GCS_BUCKET_MEMBER):
        reads = gcs_reads(r) if r.type == GCS_BUCKET_MEMBER else s3_reads(r.props.get("policy"))
        for bucket, prefix in dict.fromkeys(reads):
            if bucket == store_bucket and prefix.startswith(store_prefix):
                continue
            target, field = _blame(stack, bucket, prefix)
            where = f"{bucket}/{prefix}" if bucket != "*" else "every bucket"
            yield Finding(
                target,
                field,
                f"{r.name} grants reads of {where}, outside the model store "
                f"{env.model_store}; keep models under model_store (or waive with the reason "
                "the cluster must read elsewhere)",
                r.ref,
            )


RULE = Rule(
    id="model-store-reads",
    title="Storage grants read nothing outside the model store",
    level="mandatory",
    scope="resource",
    check=check,
    rationale=(
        "The cluster reads weights with its own identity; each absolute s3:// or gs:// "
        "source outside model_store widens that identity to another bucket or prefix. A "
        "pull request that points a model at `s3://finance-exports/` would give every "
        "serving pod read access to it. Reads stay in the environment's model store unless "
        "a waiver says why not."
    ),
    remediation=(
        "Copy the model under the environment's model_store and give its source relative "
        "to it; if another location is intended, record a waiver for the model. A store "
        "not under `allowed_model_stores` needs the platform team to list it there."
    ),
    config=(
        ConfigKey(
            "allowed_model_stores",
            {"*": ["s3://", "gs://"]},
            {
                "type": "object",
                "propertyNames": {"pattern": KEY_PATTERN},
                "additionalProperties": {
                    "type": "array",
                    "items": {
                        "type": "string",
                        "pattern": "^(s3|gs)://([^/\\s*?]+/([^\\s*?]*/)?)?$",
                    },
                },
            },
            "Where model stores (and absolute s3:// or gs:// model sources) may be, "
            f"{KEY_DESCRIPTION}: URI prefixes ending in `/`, "
            "`{blueprint}` standing for the blueprint's name (e.g. `s3://acme-models/`, "
            "`s3://models/{blueprint}/`). A store under none of them is refused. The default "
            "allows any bucket, since inferplane cannot know a site's buckets: a platform "
            "lists its own, as the shipped platform-config.yaml does.",
        ),
        ConfigKey(
            "allowed_store_endpoints",
            {"*": ["http://", "https://"]},
            {
                "type": "object",
                "propertyNames": {"pattern": KEY_PATTERN},
                "additionalProperties": {
                    "type": "array",
                    "items": {
                        "type": "string",
                        "pattern": "^https?://([A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?"
                        "(:[0-9]{1,5})?)?$",
                    },
                },
            },
            "The S3-compatible store endpoints a kubernetes environment's "
            f"`model_store_endpoint` may name, {KEY_DESCRIPTION}: `scheme://host[:port]` "
            "(the scheme's port when none is written), or `http://` / `https://` alone for "
            "any endpoint of that scheme. The store's pods send the endpoint their keys and "
            "the NetworkPolicies open egress to it. The default allows any endpoint, since "
            "inferplane cannot know a site's stores: a platform lists its own, as the "
            "shipped platform-config.yaml does.",
        ),
    ),
    links=(
        "https://docs.aws.amazon.com/AmazonS3/latest/userguide/using-iam-policies.html",
        "https://cloud.google.com/storage/docs/access-control/iam#conditions",
    ),
    sources=(
        "IAM role policies (S3 statements) and GCS bucket IAM members, against the "
        "blueprint's model_store; the model store and absolute sources against "
        "allowed_model_stores; a kubernetes environment's model_store_endpoint against "
        "allowed_store_endpoints. Offline only: online the model store is not known."
    ),
    passing_example="""\
environments:
  staging: {model_store: s3://acme-models/}
models:
  chat: {source: llama/}
""",
    failing_example="""\
environments:
  staging:
    model_store: s3://acme-models/
    overrides:
      models:
        chat: {source: s3://finance-exports/llama/}
""",
)
