"""Semantic checks of where an environment reads in storage: its model store, each model's
source and each LoRA adapter.

The serving and writer identities are granted exactly the folders these name
(`naming.source_folder`, `Environment.read_locations`), and a model store may be shared by
several blueprints, so:

- none of them has a `naming.STORE_AREAS` segment: that folder holds the engines, staged
  weights and compile caches of every blueprint that shares the store (or a store nested
  in the folder named), which only their own blueprint reads;
- a Triton model's file (fetched with its whole folder, so that its external data files
  come along) sits in a folder of its own, never directly in the model store or a bucket's
  root, whose folder is the whole store;
- an absolute source or adapter is not a folder that holds the model store, areas and all.
"""

from __future__ import annotations

from inferplane.blueprint import naming, resolve_triton
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath

_AREAS = f"{naming.STORE_AREAS}/"


def check_store_paths(env: EnvView) -> None:
    store = str(env.spec["model_store"])
    store = store if store.endswith("/") else f"{store}/"
    if naming.reserved_store_path(_key(store)):
        env.error(
            ("environments", env.name, "model_store"),
            f"model_store {store} is inside a {_AREAS} folder, where inferplane keeps the "
            "engines, staged weights and compile caches of the blueprints that share a store",
            f"use a prefix of your own, without a {naming.STORE_AREAS} segment",
        )
    for name, model in (env.data.get("models") or {}).items():
        file = resolve_triton.backend_of(model) is not None
        _check(env, ("models", name, "source"), str(model["source"]), store, file)
        lora = ((model.get("vllm") or {}).get("lora") or {}).get("adapters") or {}
        for adapter, source in lora.items():
            path = ("models", name, "vllm", "lora", "adapters", adapter)
            _check(env, path, str(source), store, False)


def _key(uri: str) -> str:
    """The key part of ``scheme://bucket/key``."""
    return uri.split("://", 1)[1].partition("/")[2]


def _check(env: EnvView, path: YamlPath, source: str, store: str, file: bool) -> None:
    """One source or adapter (`file`: a Triton model's file), relative ones under `store`."""
    if source.startswith("hf://"):
        return  # staged under the blueprint's own hub area
    absolute = "://" in source
    key = _key(source) if absolute else source
    folder = naming.source_folder(key, file)
    uri = f"{source[: len(source) - len(key)]}{folder}" if absolute else f"{store}{folder}"
    if naming.reserved_store_path(key):
        env.error(
            path,
            f"{source} is inside a {_AREAS} folder, where inferplane keeps the engines, "
            "staged weights and compile caches of every blueprint that shares a store",
            f"upload the files under a folder of your own and name that folder, without a "
            f"{naming.STORE_AREAS} segment",
        )
    elif file and not folder:
        where = f"the root of bucket {uri[5:-1]}" if absolute else f"the model store {store}"
        env.error(
            path,
            f"{source} is fetched with its whole folder (an ONNX model's external data files "
            f"are read relative to it: https://onnx.ai/onnx/repo-docs/ExternalData.html), "
            f"and its folder is {where}",
            "keep each model file in a folder of its own: <store>/<model dir>/model.onnx",
        )
    elif absolute and store.startswith(uri):
        env.error(
            path,
            f"{source} is read as the folder {uri}, which holds the model store {store} and "
            "the engines, staged weights and compile caches of every blueprint that shares it",
            "name the model's own folder, or give its path relative to model_store",
        )


__all__ = ["check_store_paths"]
