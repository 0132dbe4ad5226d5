"""The manifests of one served model's own objects: the pod (its fetch and server
containers, volumes and placement; a vLLM model that streams its weights,
`weight_streaming`, fetches only what streaming does not replace), the Deployment, the
ClusterIP Service, the headless gRPC Service and the PodDisruptionBudget. `ModelServer`
registers them."""

from __future__ import annotations

import hashlib
from typing import Final

from inferplane.blueprint import defaults, naming
from inferplane.components.serving.containers import (
    PORTS,
    Manifest,
    empty_dir,
    gpu_placement,
    model_object_labels,
    pod_security_context,
    progress_deadline_s,
    rollout_strategy,
    service_account,
    shm_size_mib,
    termination_grace_s,
    zone_spread,
)
from inferplane.components.serving.routing.load_balancer import (
    exposed_ports,
    service_ports,
    traffic_distribution,
)
from inferplane.components.serving.secrets import secret_env
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store import pip_requirements
from inferplane.components.serving.triton.triton_config import (
    triton_container,
    triton_fetch_container,
)
from inferplane.components.serving.trtllm.trtllm import trtllm_container, trtllm_fetch_container
from inferplane.components.serving.trtllm.trtllm_build import (
    trtllm_image,
)
from inferplane.components.serving.vllm.vllm import (
    CACHE_VOLUME,
    chat_template_volume,
    route_guard_volume,
    vllm_container,
    vllm_fetch_container,
)
from inferplane.components.serving.vllm.vllm_compile import (
    cache_uri,
    compile_key,
    compiles,
)
from inferplane.components.serving.vllm.weight_streaming import (
    config_volumes,
    streamed_container,
    streaming_fetch_container,
    streams_weights,
)

GRPC_SUFFIX: Final = "-grpc"
CONFIG_HASH_ANNOTATION: Final = "inferplane.dev/config-hash"
"""On the pod template: a changed config.pbtxt rolls the pods (a ConfigMap change alone
would not)."""


def server_image(env: ServingEnvironment, model: ServedModel) -> str:
    if model.image:
        return model.image
    if model.server == "triton" and model.tensorrt_llm is not None:
        return trtllm_image(env.triton_release)
    if model.server == "triton":
        return defaults.TRITON_IMAGE.format(release=env.triton_release)
    return defaults.VLLM_IMAGE.format(version=env.vllm_version)


def config_map_name(model: ServedModel) -> str:
    return f"{model.name}-triton-config"


def serving_pod_spec(
    env: ServingEnvironment, model: ServedModel, model_uri: str, with_secrets: bool
) -> Manifest:
    """The serving pod: init container(s) that fetch the model, one server container."""
    pool = model.pool
    image = server_image(env, model)
    volumes = [
        empty_dir("models"),
        empty_dir("home"),
        empty_dir("tmp"),
        empty_dir("dshm", f"{shm_size_mib(model)}Mi", memory=True),
    ]
    init: list[Manifest] = []
    if model.server == "triton" and model.tensorrt_llm is not None:
        server = trtllm_container(env, model, image)
        init.append(trtllm_fetch_container(env, model, model_uri))
        volumes.append({"name": "triton-config", "configMap": {"name": config_map_name(model)}})
    elif model.server == "triton":
        server = triton_container(env, model, image)
        init.append(triton_fetch_container(env, model, model_uri))
        volumes.append({"name": "triton-config", "configMap": {"name": config_map_name(model)}})
        if pip_requirements.staged_steps(model):
            init.append(pip_requirements.install_container(env, model))
            volumes.append(pip_requirements.scripts(env, model))
    else:
        staged = (
            cache_uri(env, compile_key(env, model), model.name) if compiles(model, env) else None
        )
        if streams_weights(model):
            server = streamed_container(env, model, image)
            fetch = streaming_fetch_container(env, model, compile_cache_uri=staged)
            init += [fetch] if fetch is not None else []
            volumes += config_volumes(model)
        else:
            server = vllm_container(env, model, image)
            init.append(vllm_fetch_container(env, model, compile_cache_uri=staged))
        volumes.append(empty_dir(CACHE_VOLUME))
        volumes.append(route_guard_volume(model))
        if (template := chat_template_volume(model)) is not None:
            volumes.append(template)
    if with_secrets:
        # Never the Hub token: only the staging Job of an hf:// source holds it.
        server["env"] = [*server["env"], *secret_env(model)]
    spec: Manifest = {
        **service_account(env, naming.MODEL_READER_SA),
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": termination_grace_s(model),
        "securityContext": pod_security_context(),
        **gpu_placement(pool),
        "topologySpreadConstraints": zone_spread(env, model),
        "containers": [server],
        "volumes": volumes,
    }
    if init:
        spec["initContainers"] = init
    return spec


def pod_images(env: ServingEnvironment, model: ServedModel) -> tuple[str, ...]:
    """Every image of `model`'s serving pod (init containers first), read off the pod spec
    its Deployment gets: what `image_prepull.ImagePrePull` pulls onto the pool's nodes."""
    spec = serving_pod_spec(env, model, model.source.uri, with_secrets=False)
    containers = [*spec.get("initContainers", ()), *spec["containers"]]
    return tuple(dict.fromkeys(str(c["image"]) for c in containers))


def deployment_spec(
    env: ServingEnvironment,
    model: ServedModel,
    model_uri: str,
    with_secrets: bool,
    config_text: str | None,
    zone: str | None = None,
) -> Manifest:
    """The model's Deployment; with `zone`, one zone's Deployment of an llm-aware model
    (pass `router.zone_model`): its pods carry the zone label its InferencePool selects."""
    labels = model_object_labels(env, model)
    if zone is not None:
        labels[naming.ZONE_LABEL] = zone
    template_meta: Manifest = {"labels": labels}
    if config_text is not None:
        digest = hashlib.sha256(config_text.encode()).hexdigest()[:16]
        template_meta["annotations"] = {
            CONFIG_HASH_ANNOTATION: digest,
            naming.NGC_RELEASE_ANNOTATION: model.release(env),
        }
    return {
        "replicas": model.replicas.min,
        "selector": {"matchLabels": pod_selector(env, model, zone)},
        "strategy": rollout_strategy(env, model),
        "progressDeadlineSeconds": progress_deadline_s(model),
        "revisionHistoryLimit": 5,
        "template": {
            "metadata": template_meta,
            "spec": serving_pod_spec(env, model, model_uri, with_secrets),
        },
    }


def cluster_service_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    names = ["http", "grpc", "metrics"] if model.server == "triton" else ["http"]
    return {
        "type": "ClusterIP",
        "selector": naming.model_selector(env.part_of, model.name),
        "ports": service_ports(names),
        "trafficDistribution": traffic_distribution(env),
    }


def grpc_service_name(model: ServedModel) -> str:
    return f"{model.name}{GRPC_SUFFIX}"


def serves_grpc(model: ServedModel) -> bool:
    """True when the model's load balancer exposes gRPC (``expose.protocol`` grpc or both)."""
    return "grpc" in exposed_ports(model)


def grpc_service_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    """The headless Service ``<model>-grpc``: DNS answers with every ready pod's address.

    A gRPC client keeps one HTTP/2 connection and sends every call over it, so an L4 load
    balancer (or a ClusterIP) balances connections, not calls, and replicas added by the
    autoscaler get nothing from connected clients (https://grpc.io/blog/grpc-load-balancing/).
    Clients in the cluster resolve ``dns:///<model>-grpc.<ns>.svc.cluster.local:8001`` and
    balance calls themselves with the ``round_robin`` policy; the server closes connections
    after a maximum age (`triton_config.GRPC_MAX_CONNECTION_AGE_MS`), so clients re-resolve
    and pick up new replicas. Only ready pods are published (``publishNotReadyAddresses:
    false``): a loading replica gets no calls.
    """
    return {
        "clusterIP": "None",
        "publishNotReadyAddresses": False,
        "selector": naming.model_selector(env.part_of, model.name),
        "ports": service_ports(["grpc"]),
    }


def grpc_target(model: ServedModel, namespace: str) -> str:
    """The gRPC target URI of the headless Service (for ``grpc.insecure_channel`` etc.)."""
    return f"dns:///{grpc_service_name(model)}.{namespace}.svc.cluster.local:{PORTS['grpc']}"


def pod_selector(env: ServingEnvironment, model: ServedModel, zone: str | None) -> Manifest:
    """The model's pods, or one zone's of them (so two zones' Deployments never overlap)."""
    found = naming.model_selector(env.part_of, model.name)
    return {**found, naming.ZONE_LABEL: zone} if zone is not None else found


def pdb_spec(env: ServingEnvironment, model: ServedModel, zone: str | None = None) -> Manifest:
    return {
        "maxUnavailable": 1,
        "selector": {"matchLabels": pod_selector(env, model, zone)},
        "unhealthyPodEvictionPolicy": "AlwaysAllow",
    }


def precision_annotation(model: ServedModel) -> dict[str, str]:
    """The model's precision on its Deployment (`naming.PRECISION_ANNOTATION`)."""
    return {naming.PRECISION_ANNOTATION: model.precision}
