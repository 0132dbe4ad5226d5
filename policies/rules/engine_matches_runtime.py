"""engine-matches-runtime: TensorRT engines are built for the runtime and GPU that load them.

TensorRT-LLM engines too: their build runs in ``tritonserver:<release>-trtllm-python-py3``,
whose TensorRT-LLM must be the serving image's (an engine loads only in the TensorRT-LLM
version that built it), and only that image variant has the ``tensorrtllm`` backend (Triton
compatibility matrix, "Container Name: trtllm-python-py3").
"""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint import naming
from inferplane.blueprint.catalog import tensorrt_major
from inferplane.blueprint.errors import YamlPath
from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.resources import (
    TRT_PRECISION_FLAGS,
    Container,
    ImageRef,
    Resource,
    is_triton,
)
from inferplane.policies.stack import ModelView, Stack


def _image_field(stack: Stack, model: ModelView) -> YamlPath:
    """The blueprint value that chose the serving image: the model's own, or versions."""
    env = stack.env
    if env is not None and model.name in env.models and env.models[model.name].image:
        return ("models", model.name, "image")
    return ("versions", "triton")


def _build_pool(job: Resource) -> tuple[str | None, str | None]:
    pool = job.node_selection(naming.POOL_LABEL)
    gpu = job.node_selection(naming.GPU_LABEL)
    return (pool[0] if pool and len(pool) == 1 else None, gpu[0] if gpu and len(gpu) == 1 else None)


def _is_trtllm(container: Container) -> bool:
    """A container of NGC's Triton TensorRT-LLM image (``<release>-trtllm-python-py3``)."""
    return "trtllm" in (ImageRef.parse(container.image).tag or "")


def _is_builder(container: Container) -> bool:
    """A container that builds an engine: TensorRT's image or tools, or TensorRT-LLM's."""
    return (
        "tensorrt" in container.image
        or _is_trtllm(container)
        or any("trtexec" in a or "trtllm-build" in a for a in container.args)
    )


def _trtllm_backend(
    stack: Stack,
    model: ModelView,
    job: Resource,
    builders: list[Container],
    serving: list[Container],
) -> Iterator[Finding]:
    """A TensorRT-LLM engine needs a Triton image that ships the tensorrtllm backend."""
    if not any(_is_trtllm(c) for c in builders):
        return
    for c in serving:
        if not _is_trtllm(c):
            yield Finding(
                f"models.{model.name}",
                _image_field(stack, model),
                f"engine build {job.k8s_name} builds a TensorRT-LLM engine but Triton runs "
                f"{c.image}, which has no TensorRT-LLM backend; serve it with the "
                "<release>-trtllm-python-py3 image of the same release",
                job.ref,
            )


def _ngc_release(image: str) -> str | None:
    """The release of an NGC image (``nvcr.io/...:25.08-py3``); None for any other image."""
    return ImageRef.parse(image).ngc_release if image.startswith("nvcr.io/") else None


def _declared_release(workload: Resource) -> str | None:
    """A custom image's declared release (`naming.NGC_RELEASE_ANNOTATION`)."""
    meta = workload.pod_template.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    declared = annotations.get(naming.NGC_RELEASE_ANNOTATION) if annotations else None
    return str(declared) if declared else None


def _runtime_release(workload: Resource, image: str) -> str | None:
    """The NGC release of a Triton container: its image's NGC tag, else the declared one."""
    return _ngc_release(image) or _declared_release(workload)


def _custom_images(model: ModelView) -> Iterator[Finding]:
    """A custom Triton image with an engine build: its release is unknown (nothing to match
    the build against), or only declared (inferplane cannot look inside the image)."""
    tritons = [(w, c) for w in model.workloads for c in w.containers if is_triton(c)]
    for w, c in tritons:
        if _ngc_release(c.image) is not None:
            continue
        declared = _declared_release(w)
        if declared is None:
            yield Finding(
                f"models.{model.name}",
                ("models", model.name, "image"),
                f"Triton runs {c.image}, which names no NGC release, so nothing shows that "
                "its TensorRT matches the engine build's",
                model.jobs[0].ref,
            )
        else:
            yield Finding(
                f"models.{model.name}",
                ("models", model.name, "base_release"),
                f"the engine is built with the TensorRT of NGC {declared}, the declared base "
                f"of custom image {c.image}; nothing checks that the image is built from "
                f"nvcr.io/nvidia/tritonserver:{declared}-py3 (waive once confirmed)",
                model.jobs[0].ref,
            )


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    for model in stack.iter_models():
        tritons = [(w, c) for w in model.workloads for c in w.containers if is_triton(c)]
        serving = [c for _, c in tritons]
        runtimes = {_runtime_release(w, c.image) for w, c in tritons}
        runtimes.discard(None)
        target = f"models.{model.name}"
        if model.jobs:
            yield from _custom_images(model)
        for job in model.jobs:
            builders = [c for c in (*job.init_containers, *job.containers) if _is_builder(c)]
            if not builders:
                continue
            yield from _trtllm_backend(stack, model, job, builders, serving)
            for c in builders:
                release = ImageRef.parse(c.image).ngc_release
                if release and runtimes and release not in runtimes:
                    yield Finding(
                        target,
                        _image_field(stack, model),
                        f"engine build {job.k8s_name} uses TensorRT from NGC {release} but "
                        f"Triton runs NGC {', '.join(sorted(r for r in runtimes if r))}; an "
                        "engine only loads in the TensorRT version that built it",
                        job.ref,
                    )
                if (
                    release
                    and tensorrt_major(release) >= 11
                    and any(a.split("=", 1)[0] in TRT_PRECISION_FLAGS for a in c.args)
                ):
                    yield Finding(
                        target,
                        ("models", model.name, "precision"),
                        f"engine build {job.k8s_name} passes precision flags to TensorRT "
                        f"{tensorrt_major(release)}, which removed them (networks are strongly "
                        "typed); take precision from the ONNX model",
                        job.ref,
                    )
            pool = stack.pool(model.pool)
            build_pool, build_gpu = _build_pool(job)
            serving_gpu = pool.gpu if pool else None
            same = (build_pool is not None and build_pool == model.pool) or (
                build_gpu is not None and serving_gpu is not None and build_gpu == serving_gpu
            )
            if not same:
                where = build_gpu or (f"pool {build_pool}" if build_pool else "any node")
                yield Finding(
                    target,
                    ("models", model.name, "pool"),
                    f"engine build {job.k8s_name} runs on {where}, not on the GPU model of "
                    f"pool {model.pool} ({serving_gpu or 'unknown'}); engines are specific to "
                    "the GPU they were built on",
                    job.ref,
                )


RULE = Rule(
    id="engine-matches-runtime",
    title="TensorRT engines are built with Triton's TensorRT, on the serving GPU",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "A TensorRT engine loads only in the TensorRT version that built it and is tuned "
        "for (and often only runs on) the GPU model it was built on. Building with the "
        "TensorRT image of another NGC release than the Triton image, or on another GPU, "
        "yields an engine that fails to load or runs slowly. TensorRT 11 removed the "
        "builder precision flags, so the build command must also match the release. "
        "TensorRT-LLM engines are bound the same way to the TensorRT-LLM of the release, "
        "and load only in the trtllm-python-py3 image, which has the tensorrtllm backend."
    ),
    remediation=(
        "Leave the engine build to the toolkit: it builds with the TensorRT of the model's "
        "Triton release (versions.triton, the tag of an NGC models.<m>.image, or a custom "
        "image's models.<m>.base_release), on a node of the serving pool; a tensorrt_llm "
        "model's image must be the <release>-trtllm-python-py3 variant."
    ),
    links=(
        "https://docs.nvidia.com/deeplearning/tensorrt/latest/getting-started/support-matrix.html",
        "https://github.com/NVIDIA/TensorRT-LLM/issues/222",
        "https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/"
        "introduction/compatibility.html",
    ),
    sources=(
        "Resources only: the model's engine build Jobs (TensorRT or TensorRT-LLM image tag, "
        "trtexec flags, "
        "node selection by pool or GPU label) against its Triton containers' image tag (or, "
        "for a custom image, the pod template's inferplane.dev/ngc-release annotation), and "
        "the pool's GPU from the environment ConfigMap."
    ),
    passing_example="""\
versions: {triton: "25.08"}
models:
  ranker: {server: triton, pool: l4, tensorrt: {}}
""",
    failing_example="""\
versions: {triton: "25.08"}
models:
  ranker:
    server: triton
    image: registry.example.com/ml/triton-custom:1.4   # a custom build of Triton
    base_release: "25.06"    # declared, not verifiable: confirm and waive
    tensorrt: {}
""",
)
