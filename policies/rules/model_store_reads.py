"""model-store-reads: the cluster's storage grants read nothing outside the model store."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.blueprint import naming
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.model import Environment, ModelSource
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


def _reads(env: Environment) -> Iterator[tuple[str, YamlPath, str, ModelSource, bool]]:
    """(target, field, what, source, file) of every s3:// or gs:// source and LoRA adapter:
    `what` names it in messages, `file` marks a Triton model's file (read with its folder)."""
    for model in env.models.values():
        target, path = f"models.{model.name}", ("models", model.name)
        what = f"source {model.source.uri} of model {model.name}"
        yield target, (*path, "source"), what, model.source, model.backend is not None
        lora = model.vllm.lora if model.vllm else None
        for adapter in lora.adapters if lora else ():
            field = (*path, "vllm", "lora", "adapters", adapter.name)
            what = f"LoRA adapter {adapter.name} ({adapter.source.uri}) of model {model.name}"
            yield target, field, what, adapter.source, False


def _folder_uri(source: ModelSource, file: bool) -> str:
    """The folder URI a source is read as (`naming.source_folder`)."""
    return f"{source.scheme}://{source.bucket}/{naming.source_folder(source.key or '', file)}"


def _blame(stack: Stack, bucket: str, prefix: str) -> tuple[str, YamlPath]:
    env = stack.env
    assert env is not None
    for target, field, _, src, _ in _reads(env):
        if src.bucket == bucket and src.key is not None and src.key.startswith(prefix):
            return target, field
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
    for target, field, what, source, file in _reads(env):
        if source.bucket is None:
            continue  # hf://: staged in the blueprint's own area of the store
        uri = _folder_uri(source, file)  # a relative source is inside the store: judged above
        if not store_allowed(uri, [env.model_store]) and not store_allowed(uri, prefixes):
            yield Finding(
                target, field, f"{what} is not in a model store the platform allows; {hint}"
            )
    yield from _nested_stores(env, config["allowed_model_stores"], prefixes)


def _nested_stores(
    env: Environment, allowed: Mapping[str, Any], prefixes: list[str]
) -> Iterator[Finding]:
    """The store, and every s3:// or gs:// read outside it, may not hold, be or lie inside a
    store the platform lists for another blueprint by name: one blueprint's grants would
    read the other's models, its `.inferplane` areas included. A prefix listed for both by
    name is a share the platform chose. (A read the platform does not allow at all is
    reported as such, once.)"""
    own = [
        str(p).replace("{blueprint}", env.blueprint)
        for key in (env.blueprint, f"{env.blueprint}/{env.name}")
        for p in allowed.get(key) or ()
    ]
    others = [
        (str(p).replace("{blueprint}", key.partition("/")[0]), key)
        for key, listed in allowed.items()
        if key != "*" and key.partition("/")[0] != env.blueprint
        for p in listed or ()
    ]
    reads: list[tuple[str, YamlPath, str, str]] = [
        (
            f"environments.{env.name}",
            ("environments", env.name, "model_store"),
            f"model_store {env.model_store}",
            env.model_store,
        )
    ]
    for target, field, what, source, file in _reads(env):
        uri = _folder_uri(source, file) if source.bucket is not None else ""
        if uri and not store_allowed(uri, [env.model_store]):
            reads.append((target, field, what, uri))
    for target, field, what, uri in reads:
        if not store_allowed(uri, prefixes):
            continue
        for prefix, key in others:
            if prefix in own or not (uri.startswith(prefix) or prefix.startswith(uri)):
                continue
            how = "is" if uri == prefix else "holds" if prefix.startswith(uri) else "is inside"
            yield Finding(
                target,
                field,
                f"{what} {how} {prefix}, the model store {ALLOWED_STORES_KEY} lists for "
                f"{key!r}: one blueprint would read the other's models and .inferplane "
                "areas; use a store of this blueprint's own, beside the other's, or ask the "
                "platform team to list one prefix for both blueprints if they share it",
            )
            break


def _reaches_other_areas(key: str, blueprint: str) -> bool:
    """Whether a grant of `key` (relative to the store; a prefix it covers) reaches into
    `naming.STORE_AREAS` beyond `blueprint`'s own areas: a prefix of the areas' folder (the
    whole store, ``.inf``) covers them all."""
    areas = f"{naming.STORE_AREAS}/"
    if areas.startswith(key):
        return True
    own = [
        f"{naming.store_area(a, blueprint)}/"
        for a in (naming.ENGINE_PREFIX, naming.HUB_PREFIX, naming.VLLM_COMPILE_PREFIX)
    ]
    return key.startswith(areas) and not any(key.startswith(o) for o in own)


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
                if not _reaches_other_areas(prefix[len(store_prefix) :], env.blueprint):
                    continue
                target, field = _blame(stack, bucket, prefix)
                yield Finding(
                    target,
                    field,
                    f"{r.name} grants reads of {bucket}/{prefix}, which reaches the "
                    f"{naming.STORE_AREAS}/ areas of other blueprints that share the model "
                    f"store {env.model_store}; read only this blueprint's own areas and its "
                    "models' folders",
                    r.ref,
                )
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
        "a waiver says why not; LoRA adapters are read with the same identity and judged "
        "alike. A store that holds, or lies inside, the store the platform lists for another "
        "blueprint would read that blueprint's models, and a grant into other blueprints' "
        "`.inferplane` areas of a shared store their engines, staged weights and compile "
        "caches."
    ),
    remediation=(
        "Copy the model under the environment's model_store and give its source relative "
        "to it; if another location is intended, record a waiver for the model. A store "
        "not under `allowed_model_stores` needs the platform team to list it there; a "
        "store beside another blueprint's, not above or inside it (or one prefix the "
        "platform lists for both, if they share their models)."
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
    offline_only=True,
    sources=(
        "IAM role policies (S3 statements) and GCS bucket IAM members, against the "
        "blueprint's model_store and its own .inferplane areas; the model store, absolute "
        "sources and LoRA adapters against allowed_model_stores, including the stores it "
        "lists for other blueprints; a kubernetes environment's model_store_endpoint "
        "against allowed_store_endpoints. Offline only: online the model store is not known."
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
