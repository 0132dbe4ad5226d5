"""The compile-cache Job of a vLLM model: ``torch.compile`` once per key, staged in the store.

vLLM v0.10.2 compiles the model's forward pass with ``torch.compile`` on every start and
caches the result under ``$VLLM_CACHE_ROOT/torch_compile_cache/<hash>/`` (`vllm.CACHE_ROOT`).
The hash covers vLLM's own config (``VllmConfig.compute_hash``: model path, dtype,
quantization, max_model_len, parallel, cache, LoRA, speculative and compilation configs, the
vLLM version), the environment variables that change the graph (``vllm/envs.py``
``compute_hash``), the source of every file Dynamo traced, and Inductor's own key
(``get_inductor_factors`` in ``vllm/compilation/compiler_interface.py``: PyTorch's
``CacheBase.get_system()``, which names the GPU and the CUDA version). A cache found under
that hash is loaded instead of compiled ("Directly load the compiled graph(s) ... from the
cache", ``vllm/compilation/backends.py``), and the directory may be copied to another
machine: Inductor's and Triton's caches are redirected inside it "then users only need to
copy the cache_dir to another machine to reuse the cache" (``InductorAdaptor.
initialize_cache``). Dynamo's bytecode transform and CUDA graph capture still run on every
start (see `inferplane.blueprint.derived.scale_out.Constants.vllm_compile_cache_saved_s`).

A serving pod's own emptyDir cache dies with it, so every new replica compiled again. This
Job runs the serving container itself — same image, same ``vllm serve`` arguments
(`vllm.vllm_args`), same environment (`vllm.vllm_env`), the weights copied to the same
paths by the same fetch container, on the serving pool's GPU with a replica's resources —
waits until ``/health`` answers (v0.10.2's ``run_server_worker`` builds the engine, which
compiles and captures, before it serves HTTP: ``vllm/entrypoints/openai/api_server.py``),
stops the server (`jobs.compile_cache`) and uploads the cache to

    <model_store>/.inferplane/vllm-compile/<blueprint>/<model>/<key>/
        attempt-<pod uid>/torch_compile_cache/

writing the marker ``inferplane-complete-attempt`` that names the attempt folder last
(`store_cli.publish_attempt`): a retried Job never overwrites.

`compile_key` hashes everything vLLM's own hash depends on that the blueprint sets: the
image (and so the vLLM version and the traced code), the GPU type and resource, the
weights' store URIs (an hf:// source's staged copy names its revision), every ``vllm
serve`` argument (tensor-parallel size included) and the
container's environment. A new key is a new Job; an unchanged one is the same resource.
The key is deliberately at least as fine as vLLM's: should vLLM's hash differ anyway, the
serving pod's vLLM misses the copied cache and compiles, as before.

The pod: an init container (cloud CLI, ServiceAccount ``vllm-compiler``, which writes only
under the compile prefix) skips everything when the marker exists; the serving pod's fetch
container copies the weights; the vLLM container compiles; the main container uploads.
NetworkPolicy ``<model>-vllm-compile``: no ingress, egress to DNS and the store only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, naming
from inferplane.components.serving.containers import (
    HOME,
    MODELS_DIR,
    PORTS,
    WORK_DIR,
    Manifest,
    container_security_context,
    empty_dir,
    literal,
    literal_env,
    model_object_labels,
    mount,
    serving_resources,
    shell,
    shm_size_mib,
)
from inferplane.components.serving.network_policies import isolated_store_client_spec
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store.store_cli import (
    ATTEMPT_ENV,
    publish_attempt,
    published,
    store_container,
    store_sync,
)
from inferplane.components.serving.store.store_job import (
    job_pod_spec,
    program,
    scripts_mount,
    scripts_volume,
    store_job,
)
from inferplane.components.serving.vllm.vllm import (
    CACHE_ROOT,
    CACHE_SUBDIR,
    CACHE_VOLUME,
    COMPILE_CACHE_DIR,
    chat_template_mounts,
    chat_template_volume,
    route_guard_mount,
    route_guard_volume,
    vllm_args,
    vllm_env,
    vllm_fetch_container,
    weight_copies,
)
from inferplane.components.serving.vllm.vllm_flags import HISTOGRAM_FLAG
from inferplane.components.serving.vllm.weight_streaming import (
    config_mounts,
    config_volumes,
    streamed_args,
    streamed_env,
    streaming_fetch_container,
    streams_weights,
)

KEY_SCHEMA: Final = "2"
"""Part of every key: raising it recompiles every model (a changed procedure)."""
COMPILE_TIMEOUT: Final = "60m"
"""How long `pulumi up` waits for one Job: a GPU node, the image pull, the weights, and one
vLLM start with compilation (minutes for a large model); the Deployment waits for it."""
SKIP_FILE: Final = f"{WORK_DIR}/already-staged"
COMPONENT: Final = "vllm-compile"
COMPONENT_LABEL: Final = "app.kubernetes.io/component"
KEY_LABEL: Final = "inferplane.dev/compile-key"
HEALTH_POLL_S: Final = 5

COMPILE_PROGRAM: Final = "compile_cache"
"""The job program that serves until healthy, then stops (`jobs.compile_cache`)."""


def compiles(model: ServedModel, env: ServingEnvironment) -> bool:
    """A vLLM model that runs ``torch.compile`` (not ``enforce_eager``), in an environment
    with a model store to stage the cache in; mirrors
    `inferplane.blueprint.derived.scale_out.compiles_vllm_graph`."""
    eager = model.vllm is not None and bool(model.vllm.enforce_eager)
    return model.server == "vllm" and not eager and bool(env.model_store_uri)


def vllm_image(env: ServingEnvironment, model: ServedModel) -> str:
    """The serving image of a vLLM model (a custom image, else the pinned vLLM)."""
    return model.image or defaults.VLLM_IMAGE.format(version=env.vllm_version)


def compile_settings(env: ServingEnvironment, model: ServedModel) -> dict[str, Any]:
    """Everything that determines the compiled graphs; `compile_key` hashes exactly this."""
    return {
        "schema": KEY_SCHEMA,
        # The blueprint and model: equal settings in two blueprints are two caches, each
        # written and read only by its own blueprint (`naming.store_area`).
        "blueprint": env.part_of,
        "model": model.name,
        "image": vllm_image(env, model),
        "vllm_version": env.vllm_version,
        "source": model.source.uri,
        "weights": [[copy.uri, copy.target] for copy in weight_copies(env, model)],
        "gpu": model.pool.gpu_type,
        "gpu_resource": model.pool.gpu_resource,
        "tensor_parallel_size": model.gpus,
        "args": serve_args(env, model),
        # A streaming model's keys come from a Secret (valueFrom): its reference is hashed.
        "env": [
            [e["name"], e.get("value", json.dumps(e.get("valueFrom"), sort_keys=True))]
            for e in serve_env(env, model)
        ],
    }


def serve_args(env: ServingEnvironment, model: ServedModel) -> list[str]:
    """``vllm serve``'s arguments, streaming (`weight_streaming.streamed_args`) or not, less
    the histogram bounds: ObservabilityConfig adds nothing to vLLM's hash ("this config will
    not affect the computation graph", 0.33.0 vllm/config/observability.py
    ``compute_hash``), so an SLO changed in the blueprint neither changes the key nor
    replaces the Job."""
    args = streamed_args(env, model) if streams_weights(model) else vllm_args(model)
    return _without(args, HISTOGRAM_FLAG)


def _without(args: list[str], flag: str) -> list[str]:
    """`args` less `flag` and the value after it."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == flag:
            skip = True
        else:
            out.append(arg)
    return out


def serve_env(env: ServingEnvironment, model: ServedModel) -> list[Manifest]:
    """The vLLM container's variables, with the store's when it streams: the reader's keys
    on kubernetes, as the fetch container has them (`vllm.fetch_container`), never the
    compiler's, which may write."""
    if not streams_weights(model):
        return vllm_env(model)
    return streamed_env(env, model, naming.MODEL_READER_SA)


def compile_key(env: ServingEnvironment, model: ServedModel) -> str:
    """Short content key (12 hex digits) of the compile cache of `model`."""
    return naming.short_hash(json.dumps(compile_settings(env, model), sort_keys=True))


def cache_uri(env: ServingEnvironment, key: str, model: str) -> str:
    """The store prefix of compile cache `key` of `model`, ending in ``/``:
    ``<store>/.inferplane/vllm-compile/<blueprint>/<model>/<key>/``."""
    assert env.model_store_uri, "compiles() requires a model store"
    area = naming.store_area(naming.VLLM_COMPILE_PREFIX, env.part_of)
    return f"{env.model_store_uri.rstrip('/')}/{area}/{model}/{key}/"


def job_name(model: ServedModel, key: str) -> str:
    return f"{model.name}-compile-{key[:10]}"


def pod_labels(env: ServingEnvironment, model: ServedModel, key: str | None) -> dict[str, str]:
    """Labels of the Job's pod (with `key`) or of every such pod of `model` (None). Never
    the model's selector labels: its Services, PDB and spread must not count this pod."""
    labels = {
        "app.kubernetes.io/name": f"{model.name}-{COMPONENT}",
        "app.kubernetes.io/part-of": f"{env.part_of}-{COMPONENT}",
        "app.kubernetes.io/managed-by": "inferplane",
        COMPONENT_LABEL: COMPONENT,
        naming.ENVIRONMENT_LABEL: env.environment,
        naming.POOL_LABEL: model.pool.name,
    }
    if key is not None:
        labels[KEY_LABEL] = key
    return labels


def network_policy_name(model: ServedModel) -> str:
    return f"{model.name}-{COMPONENT}"


def _compile_container(env: ServingEnvironment, model: ServedModel) -> Manifest:
    return {
        "name": "compile",
        "image": vllm_image(env, model),
        # Blueprint text reaches the program only as arguments, never through a shell.
        "command": [
            "python3",
            program(COMPILE_PROGRAM),
            f"--health-url=http://127.0.0.1:{PORTS['http']}/health",
            f"--cache-dir={COMPILE_CACHE_DIR}",
            f"--poll-s={HEALTH_POLL_S}",
            f"--skip-if={SKIP_FILE}",
            "--",
            *(literal(a) for a in serve_args(env, model)),
        ],
        "env": literal_env(serve_env(env, model)),
        "resources": serving_resources(model),
        "securityContext": container_security_context(),
        "volumeMounts": [
            mount("home", HOME),
            mount("tmp", "/tmp"),
            mount("dshm", "/dev/shm"),
            mount("models", MODELS_DIR, read_only=True),
            mount(CACHE_VOLUME, CACHE_ROOT),
            mount("work", WORK_DIR),
            scripts_mount(),
            route_guard_mount(),
            *chat_template_mounts(model),
            *(config_mounts(model) if streams_weights(model) else []),
        ],
    }


def pod_spec(env: ServingEnvironment, model: ServedModel, key: str) -> Manifest:
    uri_env = [{"name": "COMPILE_CACHE_URI", "value": cache_uri(env, key, model.name)}]
    work = mount("work", WORK_DIR)
    check = store_container(
        env,
        naming.VLLM_COMPILER_SA,
        "check-staged",
        shell(
            f"if {published(env, 'COMPILE_CACHE_URI')}; then",
            f'  touch {SKIP_FILE}; echo "compile cache already staged: $COMPILE_CACHE_URI"',
            "fi",
        ),
        uri_env,
        [work],
    )
    if streams_weights(model):
        fetch = streaming_fetch_container(env, model, skip_file=SKIP_FILE, always=True)
        assert fetch is not None
        streamed = config_volumes(model)
    else:
        fetch, streamed = vllm_fetch_container(env, model, skip_file=SKIP_FILE), []
    fetch["volumeMounts"].append(work)
    upload = store_container(
        env,
        naming.VLLM_COMPILER_SA,
        "upload",
        shell(
            f"if [ -f {SKIP_FILE} ]; then exit 0; fi",
            *publish_attempt(
                env,
                "COMPILE_CACHE_URI",
                store_sync(env, f'"{COMPILE_CACHE_DIR}"', f'"${{ATTEMPT_URI}}{CACHE_SUBDIR}"'),
                WORK_DIR,
                "compile cache",
            ),
        ),
        [*uri_env, ATTEMPT_ENV],
        [work, mount(CACHE_VOLUME, CACHE_ROOT)],
    )
    return job_pod_spec(
        env,
        naming.VLLM_COMPILER_SA,
        model.pool,
        [check, fetch, _compile_container(env, model)],
        [upload],
        [
            empty_dir("work"),
            empty_dir("home"),
            empty_dir("tmp"),
            empty_dir("models"),
            empty_dir(CACHE_VOLUME),
            empty_dir("dshm", f"{shm_size_mib(model)}Mi", memory=True),
            scripts_volume(job_name(model, key), [COMPILE_PROGRAM]),
            route_guard_volume(model),
            *([template] if (template := chat_template_volume(model)) else []),
            *streamed,
        ],
    )


def job_manifest(
    env: ServingEnvironment, model: ServedModel, namespace: str
) -> tuple[Manifest, Manifest]:
    """(metadata, spec) of the compile-cache Job of `model`."""
    key = compile_key(env, model)
    metadata = {
        "name": job_name(model, key),
        "namespace": namespace,
        "labels": {**model_object_labels(env, model), COMPONENT_LABEL: COMPONENT, KEY_LABEL: key},
        "annotations": {"pulumi.com/replaceUnready": "true"},
    }
    spec = {
        "template": {
            "metadata": {"labels": pod_labels(env, model, key)},
            "spec": pod_spec(env, model, key),
        }
    }
    return metadata, spec


def network_policy_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    """The Job's pods: no ingress; egress to DNS and the model store only."""
    return isolated_store_client_spec(pod_labels(env, model, None), env)


@dataclass(frozen=True)
class VllmCompileCacheArgs:
    """Inputs of `VllmCompileCache`."""

    model: ServedModel
    """The vLLM model whose graphs are compiled; `compiles` must hold."""
    env: ServingEnvironment
    """The environment: model store (where the cache goes), vLLM version, cloud."""
    namespace: str
    """Namespace of the Job; it must hold the ``vllm-compiler`` ServiceAccount."""
    provider: k8s.Provider
    """The cluster's provider; every resource passes it explicitly."""
    after: Sequence[pulumi.Resource] = ()
    """Resources the Job waits for besides its NetworkPolicy (hf:// staging Jobs)."""


class VllmCompileCache(pulumi.ComponentResource):
    """Stages (once per key) the ``torch.compile`` cache of one vLLM model in the store.

    Outputs:
        key: the cache's content key (`compile_key`).
        cache_uri: ``<store>/.inferplane/vllm-compile/<key>/``.
        job_name: name of the Kubernetes Job (``<model>-compile-<key[:10]>``).
        job: the Job resource; serving pods start once it completed.
        network_policy: NetworkPolicy ``<model>-vllm-compile`` of the Job's pods.
    """

    key: str
    cache_uri: str
    job_name: str
    job: k8s.batch.v1.Job
    network_policy: k8s.networking.v1.NetworkPolicy

    def __init__(
        self, name: str, args: VllmCompileCacheArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:VllmCompileCache", name, None, opts)
        env, model = args.env, args.model
        self.key = compile_key(env, model)
        self.cache_uri = cache_uri(env, self.key, model.name)
        self.job_name = job_name(model, self.key)
        metadata, spec = job_manifest(env, model, args.namespace)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        self.network_policy = k8s.networking.v1.NetworkPolicy(
            f"{name}-network-policy",
            metadata={
                "name": network_policy_name(model),
                "namespace": args.namespace,
                # Not the key: one policy serves every Job of the model.
                "labels": {k: v for k, v in metadata["labels"].items() if k != KEY_LABEL},
            },
            spec=network_policy_spec(env, model),
            opts=child,
        )
        self.job = store_job(
            f"{name}-{self.key[:10]}",
            metadata,
            spec,
            [COMPILE_PROGRAM],
            args.namespace,
            self,
            args.provider,
            COMPILE_TIMEOUT,
            self.network_policy,
            args.after,
        )
        self.register_outputs(
            {
                "key": self.key,
                "cache_uri": self.cache_uri,
                "job_name": self.job_name,
                "job": self.job,
                "network_policy": self.network_policy,
            }
        )
