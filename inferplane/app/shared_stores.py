"""What `inferplane check` finds across blueprints that keep their models in one bucket.

Checked together (the pull-request workflow checks every blueprint in one run), the model
stores of every environment of different blueprints are compared, on the same storage (the
scheme, and on ``kubernetes`` the store's endpoint):

- one store that holds another (``s3://models/`` and ``s3://models/search/``): the outer
  blueprint's relative sources reach the inner one's models, and its grants the inner
  store's ``.inferplane`` areas; the inner blueprint writes its own areas into the outer
  store. Two blueprints naming the same store share it, as they say, and read only their
  own areas of it (`Environment.read_locations`).
- an ``s3://`` or ``gs://`` source or LoRA adapter that reads another blueprint's store (or
  a folder holding it) from outside its own store.

Where the platform lists stores per blueprint, the mandatory rule ``model-store-reads``
refuses the same nesting against its policy config; this check needs no config. A nested
store is blamed on the later environment (in the order the files were given), a read on
the environment that reads, each at the value that says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from inferplane.blueprint import naming
from inferplane.blueprint.errors import Diagnostic, YamlPath
from inferplane.blueprint.model import Environment, ModelSource


def _storage(env: Environment) -> tuple[str, str | None]:
    """Which storage a store's URIs name: the scheme, and an S3-compatible store's
    endpoint (its bucket names are not AWS's)."""
    return env.model_store.split("://", 1)[0], env.model_store_endpoint


def _reads(env: Environment) -> Iterator[tuple[YamlPath, str]]:
    """(field, folder URI) of every s3:// or gs:// source and adapter outside the store."""
    for model in env.models.values():
        sources: list[tuple[YamlPath, ModelSource, bool]] = [
            (("models", model.name, "source"), model.source, model.backend is not None)
        ]
        lora = model.vllm.lora if model.vllm else None
        for adapter in lora.adapters if lora else ():
            field = ("models", model.name, "vllm", "lora", "adapters", adapter.name)
            sources.append((field, adapter.source, False))
        for path, source, file in sources:
            if source.bucket is None or source.key is None:
                continue  # hf://: staged in the blueprint's own area
            folder = naming.source_folder(source.key, file)
            uri = f"{source.scheme}://{source.bucket}/{folder}"
            if not uri.startswith(env.model_store):
                yield path, uri


def _where(env: Environment) -> str:
    return f"blueprint {env.blueprint!r} environment {env.name!r} ({env.file})"


def shared_store_problems(environments: Sequence[Environment]) -> list[Diagnostic]:
    """Every problem of the module docstring among `environments` (of every blueprint
    checked together, in the order given)."""
    out: list[Diagnostic] = []
    for i, env in enumerate(environments):
        earlier = [e for e in environments[:i] if e.blueprint != env.blueprint]
        storage = _storage(env)
        for other in earlier:
            if _storage(other) != storage or other.model_store == env.model_store:
                continue
            inner, outer = sorted((env.model_store, other.model_store), key=len)[::-1]
            if not inner.startswith(outer):
                continue
            path: YamlPath = ("environments", env.name, "model_store")
            how = "holds" if outer == env.model_store else "is inside"
            out.append(
                Diagnostic(
                    env.locate(path),
                    env.source_path(path),
                    f"model store {env.model_store} {how} {other.model_store}, the model "
                    f"store of {_where(other)}: the outer one's grants would read the inner "
                    "one's models and .inferplane areas",
                    "give each blueprint a store beside the other's (s3://bucket/<blueprint>/), "
                    "or the very same store if they share their models",
                )
            )
            break
        others = [e for e in environments if e.blueprint != env.blueprint]
        for path, uri in _reads(env):
            owner = next(
                (
                    e
                    for e in others
                    if _storage(e) == storage
                    and (e.model_store.startswith(uri) or uri.startswith(e.model_store))
                ),
                None,
            )
            if owner is None:
                continue
            out.append(
                Diagnostic(
                    env.locate(path),
                    env.source_path(path),
                    f"{uri} reads the model store {owner.model_store} of {_where(owner)} "
                    "from outside this environment's own store",
                    f"copy the files into {env.model_store} and give their path relative to it",
                )
            )
    return out


__all__ = ["shared_store_problems"]
