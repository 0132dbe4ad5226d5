"""The secret references a plan reads, for a reviewer: which model, which secret, from
which kind of source and name, and where it lands in the cluster — never a value.

The references come from the blueprint (`Environment`); where each is mounted comes from
the planned objects themselves (every container ``env[].valueFrom.secretKeyRef`` and
secret volume naming the model's Secret and key, or a copy of it: the Hub token Secret of
a staging Job), so the list shows what the stack actually does with it. The Hub token is
in no model Secret: only the staging Jobs' own Secrets hold it, so a Hub token of a model
without an ``hf://`` source is in no Secret at all and mounted nowhere.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.app.offline import Recording
from inferplane.blueprint.model import Environment, SecretRef
from inferplane.blueprint.secret_refs import FILE_VARIABLES, env_var_name
from inferplane.components.serving.secrets import secret_name
from inferplane.components.serving.store.weights_job import TOKEN_KEY, TOKEN_OF_ANNOTATION

WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod")


def source_of(ref: SecretRef) -> tuple[str, str]:
    """(source kind, source name): the name of a variable, config key or secret id; these
    say where a value is, never what it is."""
    if ref.from_env is not None:
        return "from_env", ref.from_env
    if ref.from_pulumi_config is not None:
        return "from_pulumi_config", ref.from_pulumi_config
    return "from_secret_manager", str(ref.from_secret_manager)


def _pod_spec(inputs: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    spec = inputs.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return (spec.get("template") or {}).get("spec") or {}


def mounts(recording: Recording) -> Iterator[tuple[str, str, str]]:
    """(Secret name, key, where) for every use of a Secret key by a planned workload."""
    for res in recording:
        kind = res.type.rsplit(":", 1)[-1]
        if not res.type.startswith("kubernetes:") or kind not in WORKLOADS:
            continue
        name = str((res.inputs.get("metadata") or {}).get("name") or res.name)
        pod = _pod_spec(res.inputs, kind)
        for key in ("initContainers", "containers"):
            for c in pod.get(key) or ():
                for var in c.get("env") or ():
                    ref = (var.get("valueFrom") or {}).get("secretKeyRef")
                    if ref:
                        where = f"{kind} {name}, container {c.get('name')}, env {var.get('name')}"
                        yield str(ref.get("name")), str(ref.get("key")), where
        for volume in pod.get("volumes") or ():
            secret = volume.get("secret")
            if secret:
                for item in secret.get("items") or ():
                    where = f"{kind} {name}, volume {volume.get('name')}"
                    yield str(secret.get("secretName")), str(item.get("key")), where


def copies(recording: Recording) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(model, secret) -> [(Secret name, key)] of the Secrets holding a copy of that
    reference's value: the Hub token of a staging Job (`weights.TOKEN_OF_ANNOTATION`)."""
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for res in recording.of_type("kubernetes:core/v1:Secret"):
        metadata = res.inputs.get("metadata") or {}
        owner = (metadata.get("annotations") or {}).get(TOKEN_OF_ANNOTATION)
        if owner and "/" in owner:
            model, _, secret = str(owner).partition("/")
            out.setdefault((model, secret), []).append((str(metadata.get("name")), TOKEN_KEY))
    return out


def secret_references(env: Environment, recording: Recording) -> list[dict[str, Any]]:
    """Every secret reference of `env`'s models, with where the plan mounts it: the model's
    Secret (``kubernetes_secret``; None for the Hub token, which is never in it) and any
    copy (``copied_to``: a staging Job's Hub token Secret)."""
    used: dict[tuple[str, str], list[str]] = {}
    for secret, key, where in mounts(recording):
        used.setdefault((secret, key), []).append(where)
    copied = copies(recording)
    out = []
    for model in sorted(env.models.values(), key=lambda m: m.name):
        for ref in sorted(model.secrets, key=lambda r: r.name):
            kind, source = source_of(ref)
            holder = None if env_var_name(ref.name) in FILE_VARIABLES else secret_name(model.name)
            copies_ = copied.get((model.name, ref.name), [])
            places = [*([(holder, ref.name)] if holder else []), *copies_]
            out.append(
                {
                    "model": model.name,
                    "name": ref.name,
                    "source": kind,
                    "source_name": source,
                    "kubernetes_secret": holder,
                    "copied_to": sorted(name for name, _ in copies_),
                    "mounted_in": sorted(w for place in places for w in used.get(place, [])),
                }
            )
    return out


def render(references: list[dict[str, Any]]) -> list[str]:
    """The plan's printed section (no values: there are none to print)."""
    if not references:
        return ["Secret references: none"]
    lines = ["Secret references (values are never read by a plan):"]
    for r in references:
        holders = [h for h in (r["kubernetes_secret"], *r["copied_to"]) if h]
        # A Hub token no staging Job needs is in no Secret: nothing reads it.
        target = f"Secret {', '.join(holders)}" if holders else "no Secret"
        lines.append(
            f"  models.{r['model']}.secrets.{r['name']}: {r['source']} {r['source_name']} "
            f"-> {target}"
        )
        lines += [f"      mounted in {where}" for where in r["mounted_in"]] or [
            "      mounted nowhere"
        ]
    return lines
