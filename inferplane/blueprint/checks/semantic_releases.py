"""Semantic checks of the serving releases (`releases.json`): a blueprint chooses under
`versions:` only a release the table lists, and no model runs a release that its nodes'
NVIDIA driver cannot run (the driver comes with the node image, not the GPU Operator:
`components.addon_values` sets the Operator's ``driver.enabled`` false)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferplane.blueprint import catalog, defaults, releases
from inferplane.blueprint.addons import is_existing
from inferplane.blueprint.checks import semantic_vllm_release
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.resolve_triton import builds_onnx_engine

_NAMES = {"triton": "Triton", "vllm": "vLLM"}


def check_versions(env: EnvView) -> None:
    """`versions.triton` / `versions.vllm` name a release of the release table."""
    chosen = env.data.get("versions") or {}
    for engine in releases.ENGINES:
        if engine not in chosen:
            continue
        version = str(chosen[engine])
        if releases.engine_release(engine, version) is None:
            listed = ", ".join(r.release for r in releases.engine_releases(engine))
            env.error(
                ("versions", engine),
                f"{_NAMES[engine]} {version} is not a supported release (the release table "
                f"lists {listed})",
                f"use one of them, or remove versions.{engine} for the tested "
                f"{defaults.VERSIONS[engine]}",
            )


def _model_release(
    env: EnvView, name: str, model: Mapping[str, Any]
) -> tuple[str, str, YamlPath] | None:
    """The engine, release and the field that chose it, for a model whose release the
    table can know; None for an image whose release is unknown."""
    engine = str(model["server"])
    chosen = env.data.get("versions") or {}
    if engine == "triton" and model.get("image") is not None:
        if model.get("base_release") is not None:
            return engine, str(model["base_release"]), ("models", name, "base_release")
        tagged = catalog.ngc_triton_release(str(model["image"]))
        return None if tagged is None else (engine, tagged, ("models", name, "image"))
    if model.get("image") is not None:
        # vLLM: the release its image names (an unlisted one is refused where it is named).
        named = semantic_vllm_release.image_release(model)
        if named is None or releases.engine_release(engine, named) is None:
            return None
        field = "image" if releases.vllm_image_tag(str(model["image"])) else "base_release"
        return engine, named, ("models", name, field)
    release = str(chosen.get(engine, defaults.VERSIONS[engine]))
    where: YamlPath = ("versions", engine) if engine in chosen else ("models", name, "server")
    return engine, release, where


def _node_driver(env: EnvView) -> tuple[releases.NodeDriver, str] | None:
    """The driver of the GPU nodes the blueprint creates, and the Kubernetes minor that
    chose their image, where the table knows it: on a cluster inferplane creates, with node
    groups (an existing Karpenter's pinned AMI alias decides its nodes' image instead)."""
    cluster = env.spec.get("cluster") or {}
    addons = cluster.get("addons") or {}
    if not cluster.get("create") or is_existing(addons.get("karpenter")):
        return None
    version = str(cluster.get("kubernetes_version", defaults.KUBERNETES_VERSION))
    node = releases.node_driver(str(env.spec["cloud"]), version)
    return None if node is None else (node, version)


def check_driver(env: EnvView) -> None:
    """A model's serving release runs on the driver of its pool's GPU node image."""
    found_node = _node_driver(env)
    if found_node is None:
        return
    node, kubernetes = found_node
    for name, model in (env.data.get("models") or {}).items():
        found = _model_release(env, name, model)
        if found is None:
            continue
        engine, version, where = found
        row = releases.engine_release(engine, version)
        if row is None or releases.runs_on(row, node.branch) is not False:
            continue
        fits = [
            r.release if runs else f"{r.release} (with driver {r.min_driver} or later)"
            for r in releases.engine_releases(engine)
            if (runs := releases.runs_on(r, node.branch)) is not False
        ]
        change = (
            "use the image of a release"
            if where[-1] in ("image", "base_release")
            else f"set versions.{engine} to a release"
        )
        env.error(
            where,
            f"{_NAMES[engine]} {version} is built on CUDA {row.cuda} and needs NVIDIA driver "
            f"{row.min_driver} or later, but the GPU nodes of pool {model['pool']} in "
            f"{env.name} ({node.image} of Kubernetes {kubernetes}) run driver branch "
            f"R{node.branch}",
            f"{change} that runs on R{node.branch}: {', '.join(fits)}"
            if fits
            else f"no {_NAMES[engine]} release of the table runs on R{node.branch}",
        )


def strongly_typed_findings(env: EnvView) -> list[tuple[YamlPath, str, str]]:
    """Advisories (warnings): a TensorRT engine in reduced precision built by a release
    whose TensorRT builds strongly typed networks only (11 on: "Weak typing is no longer
    supported", TensorRT 11.0.0 release notes). No flag asks for the precision there: the
    ONNX model must already be in it, which validation cannot see, and the engine build
    stops when it is not (``jobs/onnx_shapes.py``)."""
    out: list[tuple[YamlPath, str, str]] = []
    flagged = [
        r.release
        for r in releases.engine_releases("triton")
        if catalog.tensorrt_major(r.release) < 11
    ][-2:]
    for name, model in (env.data.get("models") or {}).items():
        if not builds_onnx_engine(model):
            continue  # no trtexec build: ONNX Runtime, TorchScript, TensorRT-LLM, vLLM
        precision = str(model.get("precision", defaults.MODEL_PRECISION))
        found = _model_release(env, name, model)
        if precision == "fp32" or found is None:
            continue
        release = found[1]
        if catalog.tensorrt_major(release) < 11:
            continue
        where: YamlPath = ("models", name, "precision") if "precision" in model else found[2]
        out.append(
            (
                where,
                f"model {name} is {precision}, and Triton {release} builds its engine with "
                f"TensorRT {catalog.tensorrt_version(release)}, which takes no precision flag: "
                f"the ONNX model itself must be in {precision} (the build stops if it is not)",
                f"export or convert it in {precision} ({catalog.onnx_conversion(precision)}), or "
                + (
                    "use the image of a release"
                    if found[2][-1] in ("image", "base_release")
                    else "set versions.triton to a release"
                )
                + f" whose TensorRT takes precision flags: {', '.join(flagged)}",
            )
        )
    return out
