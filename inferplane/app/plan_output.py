"""The files `inferplane plan --out DIR` writes, rendered from an offline `Recording`.

    DIR/plan.json                                   per model its scale-out budget; on a
                                                    kubernetes environment the GPU nodes it
                                                    must have (``nodes``); every resource:
                                                    type, name, parent, depends_on,
                                                    provider, options, inputs
    DIR/manifests/<NN>-<kind>-<namespace>-<name>.yaml  each Kubernetes object the stack creates
    DIR/helm/<release>.yaml                         chart, repository, version, namespace, values
    DIR/triton/<model>/<file>                       Triton model configs carried in ConfigMaps

Everything is sorted, numbers that are whole are written as integers (the SDK carries every
number as a float), and secrets are ``"[secret]"`` as in the recording, so two plans of the
same blueprint are byte-identical and a review diff shows only what changed.

The directory is built beside its destination and renamed into place: a failure leaves the
previous plan (or nothing), never half of one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from inferplane.blueprint import naming

if TYPE_CHECKING:  # the harness loads Pulumi; checking --out must not
    from inferplane.app.offline import RecordedResource, Recording

PLAN_FILE = "plan.json"

# Apply order (Helm's install order), so the numbered manifests can be applied in sequence.
_KIND_ORDER = [
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
]
_NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:kustomize", "kubernetes:yaml")


def tidy(value: Any) -> Any:
    """Whole floats -> ints (Kubernetes rejects ``replicas: 2.0``); dict keys sorted."""
    if isinstance(value, dict):
        return {k: tidy(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [tidy(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def tree_order(recording: Recording) -> list[tuple[int, RecordedResource]]:
    """Resources depth-first from the stack, siblings sorted by (type, name): (depth, res)."""
    children: dict[str | None, list[RecordedResource]] = {}
    known = {r.urn for r in recording}
    for res in recording:
        parent = res.parent if res.parent in known else None
        children.setdefault(parent, []).append(res)
    out: list[tuple[int, RecordedResource]] = []
    # Iterative walk: a program's tree is shallow, but the walk need not rely on it.
    stack: list[tuple[int, RecordedResource]] = [
        (0, r) for r in sorted(children.get(None, []), key=_sort_key, reverse=True)
    ]
    while stack:
        depth, res = stack.pop()
        out.append((depth, res))
        kids = sorted(children.get(res.urn, []), key=_sort_key, reverse=True)
        stack.extend((depth + 1, kid) for kid in kids)
    return out


def _sort_key(res: RecordedResource) -> tuple[str, str]:
    return (res.type, res.name)


def plan_document(
    recording: Recording,
    blueprint: str,
    environment: str,
    secrets: list[dict[str, Any]] | None = None,
    models: Mapping[str, Mapping[str, Any]] | None = None,
    nodes: list[dict[str, Any]] | None = None,
    capacity_sources: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The content of plan.json. `capacity_sources` (only where a pool lists its sources):
    the sources per pool and zone with their preflight (`inferplane.app.plan_sources`), and
    then ``capacity_cost_by_source``, the monthly cost at the floor per source kind.
    `secrets` lists the secret references (no values) that
    `inferplane.app.plan_secrets` found; `models` what the plan knows per model
    (``{name: {"scale_out": {...}}}``, `inferplane.app.plan.model_entries`), sorted by name;
    `nodes` (a kubernetes environment only) the GPU nodes the cluster must already have,
    per pool and zone (`inferplane.blueprint.derived.node_shape.NodeShape.to_json`)."""
    names = {r.urn: r.name for r in recording}
    doc: dict[str, Any] = {
        "blueprint": blueprint,
        "environment": environment,
        "models": {name: dict((models or {})[name]) for name in sorted(models or {})},
        "secrets": secrets or [],
    }
    if nodes is not None:
        doc["nodes"] = nodes
    if capacity_sources is not None:
        from inferplane.app.plan_sources import cost_by_source

        doc["capacity_sources"] = dict(capacity_sources)
        doc["capacity_cost_by_source"] = cost_by_source(capacity_sources)
    doc["resources"] = [_entry(res, names) for _, res in tree_order(recording)]
    return doc


def _entry(res: RecordedResource, names: dict[str, str]) -> dict[str, Any]:
    """One resource of plan.json: what it is, what it waits for, and how the engine treats
    it (the order and behaviour of `pulumi up` follow from parent, depends_on, provider and
    options)."""
    entry: dict[str, Any] = {
        "type": res.type,
        "name": res.name,
        "parent": names.get(res.parent) if res.parent else None,
        "depends_on": sorted({names.get(urn, urn) for urn in res.depends_on}),
        "provider": names.get(res.provider, res.provider) if res.provider else None,
        "options": tidy(dict(res.options)),
    }
    if res.read:
        entry["read"] = True  # looked up, never created or changed
    entry["inputs"] = tidy(res.inputs)
    return entry


# --- Kubernetes manifests -----------------------------------------------------------------
def is_kubernetes_object(res: RecordedResource) -> bool:
    """A Kubernetes object the stack itself creates: not a Helm release (opaque: its objects
    are the chart's), not a provider, not a component, not a lookup."""
    return (
        res.type.startswith("kubernetes:")
        and not res.type.startswith(_NOT_OBJECTS)
        and res.custom
        and not res.read
    )


def api_version_kind(type_token: str) -> tuple[str, str]:
    """``kubernetes:apps/v1:Deployment`` -> (``apps/v1``, ``Deployment``); core -> ``v1``."""
    _, group_version, kind = type_token.split(":")
    group, _, version = group_version.partition("/")
    return (version if group == "core" else group_version), kind


def manifest(res: RecordedResource) -> dict[str, Any]:
    """The object as `kubectl apply` would take it: apiVersion, kind, metadata first."""
    from inferplane.app.offline_mocks import CLUSTER_SCOPED_KINDS

    api_version, kind = api_version_kind(res.type)
    inputs = tidy(res.inputs)
    meta = dict(inputs.pop("metadata", None) or {})
    # The provider names an object after its logical name when the program gives none.
    meta.setdefault("name", res.name)
    if inputs.get("kind", kind) not in CLUSTER_SCOPED_KINDS:
        meta.setdefault("namespace", "default")
    obj: dict[str, Any] = {
        "apiVersion": inputs.pop("apiVersion", api_version),
        "kind": inputs.pop("kind", kind),
        "metadata": tidy(meta),
    }
    obj.update(inputs)
    return obj


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-") or "x"


def manifests(recording: Recording) -> list[tuple[str, dict[str, Any]]]:
    """(file name, object) for every Kubernetes object, numbered in apply order."""
    objs = [manifest(r) for r in recording if is_kubernetes_object(r)]

    def order(obj: dict[str, Any]) -> tuple[int, str, str, str]:
        kind = obj["kind"]
        rank = _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER)
        meta = obj["metadata"]
        return (rank, kind, meta.get("namespace", ""), meta["name"])

    objs.sort(key=order)
    width = max(2, len(str(len(objs))))
    named = []
    for i, obj in enumerate(objs, start=1):
        meta = obj["metadata"]
        ns = meta.get("namespace") or "cluster"
        stem = f"{i:0{width}d}-{_slug(obj['kind'])}-{_slug(ns)}-{_slug(meta['name'])}"
        named.append((f"{stem}.yaml", obj))
    return named


# --- Helm releases ----------------------------------------------------------------------------
def is_helm_release(res: RecordedResource) -> bool:
    return res.type.startswith("kubernetes:helm.sh/") and not res.read


def helm_release(res: RecordedResource) -> dict[str, Any]:
    inputs = tidy(res.inputs)
    repo = (inputs.get("repositoryOpts") or {}).get("repo") or inputs.get("repository")
    return {
        "name": inputs.get("name") or res.name,
        "chart": inputs.get("chart"),
        "repository": repo,
        "version": inputs.get("version"),
        "namespace": inputs.get("namespace") or "default",
        "values": inputs.get("values") or {},
    }


def helm_releases(recording: Recording) -> list[tuple[str, dict[str, Any]]]:
    releases = sorted(
        (helm_release(r) for r in recording if is_helm_release(r)),
        key=lambda h: (h["name"], h["namespace"]),
    )
    counts: dict[str, int] = {}
    for rel in releases:
        counts[rel["name"]] = counts.get(rel["name"], 0) + 1
    named = []
    for rel in releases:
        stem = rel["name"] if counts[rel["name"]] == 1 else f"{rel['namespace']}-{rel['name']}"
        named.append((f"{_slug(stem)}.yaml", rel))
    return named


# --- Triton model configs ----------------------------------------------------------------------
def triton_configs(recording: Recording) -> Iterator[tuple[str, str]]:
    """(relative path, text) of every Triton model config a ConfigMap carries, laid out as
    a Triton model repository (`<model>/config.pbtxt`) so a review reads it as Triton will.
    The model is the ConfigMap's `inferplane.dev/model` label, else the ConfigMap's name.
    Sorted by path: registration order varies between runs, the plan must not."""
    found: list[tuple[str, str]] = []
    for res in recording:
        if res.type != "kubernetes:core/v1:ConfigMap" or res.read:
            continue
        data = res.inputs.get("data") or {}
        meta = res.inputs.get("metadata") or {}
        name = (meta.get("labels") or {}).get(naming.MODEL_LABEL) or meta.get("name") or res.name
        for key in sorted(data):
            if key.endswith(".pbtxt") and isinstance(data[key], str):
                found.append((f"{_slug(name)}/{key}", data[key]))
    yield from sorted(found)


# --- writing ----------------------------------------------------------------------------------
class _Dumper(yaml.SafeDumper):
    """Multi-line strings (model configs, dashboards, PromQL) as literal blocks, readable
    in a review; PyYAML falls back to quoting when a string cannot be a block."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump_yaml(obj: Any) -> str:
    return yaml.dump(
        obj,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        width=100,
        allow_unicode=True,
    )


def files(
    recording: Recording,
    blueprint: str,
    environment: str,
    secrets: list[dict[str, Any]] | None = None,
    models: Mapping[str, Mapping[str, Any]] | None = None,
    nodes: list[dict[str, Any]] | None = None,
    capacity_sources: Mapping[str, Any] | None = None,
) -> Iterable[tuple[str, str]]:
    """Every output file as (relative path, text)."""
    doc = plan_document(recording, blueprint, environment, secrets, models, nodes, capacity_sources)
    yield PLAN_FILE, json.dumps(doc, indent=2, sort_keys=False) + "\n"
    for name, obj in manifests(recording):
        yield f"manifests/{name}", dump_yaml(obj)
    for name, rel in helm_releases(recording):
        yield f"helm/{name}", dump_yaml(rel)
    yield from ((f"triton/{path}", text) for path, text in triton_configs(recording))


class OutputDirError(Exception):
    """--out names something a plan must not replace, or a path that cannot be written."""


MARKER = ".inferplane-plan"
"""Left in every directory `plan --out` writes: only such a directory is ever replaced."""
MARKER_TEXT = (
    "Written by `inferplane plan --out`. The next plan to this directory replaces it whole;\n"
    "delete this file to keep the directory from being replaced.\n"
)


def _refuse(out: Path, why: str) -> OutputDirError:
    return OutputDirError(f"{out}: {why}; choose a new or empty directory")


def _protected(resolved: Path) -> str | None:
    """Why `resolved` may never be replaced, or None."""
    if resolved == Path(resolved.anchor):
        return "is the root directory"
    here = Path.cwd().resolve()
    if resolved == here:
        return "is the current directory"
    if here.is_relative_to(resolved):
        return "contains the current directory"
    home = os.environ.get("HOME")
    if home and Path(home).is_absolute() and Path(home).resolve().is_relative_to(resolved):
        return (
            "is the home directory"
            if Path(home).resolve() == resolved
            else ("contains the home directory")
        )
    if (resolved / ".git").exists():
        return "is the root of a git repository"
    return None


def check_out_dir(out: Path) -> None:
    """Raise OutputDirError unless `out` is absent, an empty directory, or a plan this command
    wrote (it holds the marker). `.`, the home and root directories, a repository root and
    their ancestors are refused even then: a mistyped --out must not delete anything."""
    try:
        resolved = out.resolve()
        why = _protected(resolved)
        if why is not None:
            raise _refuse(out, why)
        parent = next(p for p in (resolved, *resolved.parents) if os.path.lexists(p))
        if parent != resolved and not parent.is_dir():
            raise _refuse(out, f"{parent} is a file, not a directory")
        if not resolved.exists():
            return
        if not resolved.is_dir():
            raise _refuse(out, "exists and is not a directory")
        if any(resolved.iterdir()) and not (resolved / MARKER).is_file():
            raise _refuse(out, f"not empty and not a previous plan (no {MARKER} file in it)")
    except OSError as exc:  # a name too long, a loop of links, no permission
        raise OutputDirError(f"{out}: cannot use the path: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL byte
        raise OutputDirError(f"{out}: cannot use the path: {exc}") from None


def write_atomically(out: Path, contents: Iterable[tuple[str, str]]) -> list[str]:
    """Write `contents` as the directory `out`, replacing a previous plan there.

    Refuses to replace a directory that holds anything but a previous plan (a mistyped
    --out must not delete someone's files). Returns the relative paths written, sorted.
    """
    check_out_dir(out)
    try:
        return _write(out.resolve(), contents)
    except OSError as exc:  # unwritable parent, disk full: the user's environment, not a bug
        where = f" ({exc.filename})" if exc.filename else ""
        raise OutputDirError(f"{out}: cannot write{where}: {exc.strerror or exc}") from None


def _write(out: Path, contents: Iterable[tuple[str, str]]) -> list[str]:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    written = []
    try:
        (tmp / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
        for rel, text in contents:
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(rel)
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a plan is for reviewers to read
        old: Path | None = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            os.replace(out, old / out.name)
        try:
            os.replace(tmp, out)
        except BaseException:
            if old is not None:
                os.replace(old / out.name, out)
            raise
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sorted(written)
