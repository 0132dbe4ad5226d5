"""Semantic checks of `models.<m>.routing`: what LLM-aware routing needs of a model.

Run on each environment's merged view, so a problem an override introduces is reported at
the override's line.

- ``mode: llm_aware`` routes through the llm-d router (v0.10.0), whose endpoint picker
  scores replicas by the model server's own metrics and the request's prompt: vLLM models
  only (the router's default scorers read vLLM's ``vllm:*`` series and OpenAI request
  bodies; ``config/charts/routerlib/templates/_config.yaml``).
- ``prefix_cache``, ``flow_control`` and ``priorities`` configure the router: without
  ``llm_aware`` there is none, so they are refused rather than silently ignored.
- ``precise`` prefix scoring reads the KV-cache events vLLM publishes (it needs vLLM's
  prefix caching on: the events describe cached blocks) and tokenizes each prompt in a
  sidecar that fetches the tokenizer from the Hugging Face hub; that sidecar is not
  deployed, so ``precise`` is refused for now (``--kv-events-config`` stays refused, so no
  one opens the event endpoint by hand).
- The router's autoscaling signals exist only with the router, and ``router_queue`` /
  ``pool_saturation`` only with its ``flowControl`` feature gate (``flow_control_*``
  series, ``pkg/epp/metrics/llm_d_router_metrics.go``; gate off by default,
  ``pkg/epp/flowcontrol/README.md``).
- An llm-aware model runs one Deployment per zone (an InferencePool selects pods by pod
  labels only, and a pod's zone is its node's), so its replica bounds split evenly over
  its pool's zones; at zero it wakes through the router's queue, which holds requests only
  with flow control on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inferplane.blueprint import defaults
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.model import FLOW_CONTROL_METRICS, ROUTER_METRICS

if TYPE_CHECKING:
    from inferplane.blueprint.semantic_env import EnvView

ROUTER_OPTIONS = ("prefix_cache", "flow_control", "priorities", "pickers")


def llm_aware(model: Mapping[str, Any]) -> bool:
    return (model.get("routing") or {}).get("mode", defaults.ROUTING_MODE) == "llm_aware"


def check_routing(env: EnvView) -> None:
    for name, model in (env.data.get("models") or {}).items():
        path: YamlPath = ("models", name)
        _options(env, path, model)
        _signals(env, path, model)
        if llm_aware(model) and model["server"] == "vllm":
            _zones(env, path, model)


def _options(env: EnvView, path: YamlPath, model: Mapping[str, Any]) -> None:
    routing = model.get("routing") or {}
    rpath: YamlPath = (*path, "routing")
    if not llm_aware(model):
        for key in ROUTER_OPTIONS:
            if key in routing:
                env.error(
                    (*rpath, key),
                    f"`{key}` configures the LLM-aware router, and this model is routed "
                    "round-robin",
                    "set routing.mode: llm_aware, or remove it",
                )
        return
    if model["server"] != "vllm":
        env.error(
            (*rpath, "mode"),
            f"LLM-aware routing scores vLLM replicas by their own metrics and prompts; this "
            f"model is served by {model['server']}",
            "remove routing (Triton models are balanced round-robin), or serve with vllm",
        )
        return
    if routing.get("prefix_cache") == "precise":
        env.error(
            (*rpath, "prefix_cache"),
            "precise prefix scoring needs the router's tokenizer sidecar, which reads the "
            "model's tokenizer from the Hugging Face hub with a token of its own (llm-d-router "
            "v0.10.0 config/charts/README.md, router.tokenizer); inferplane does not deploy it",
            "use prefix_cache: approximate (the default), which scores the prefixes the router "
            "has routed itself",
        )
    caching = (model.get("vllm") or {}).get("enable_prefix_caching")
    if routing.get("prefix_cache") == "precise" and caching is False:
        env.error(
            (*rpath, "prefix_cache"),
            "precise prefix scoring reads the KV-cache events of vLLM's prefix cache, which "
            "vllm.enable_prefix_caching: false turns off",
            "remove vllm.enable_prefix_caching: false, or use prefix_cache: approximate",
        )


def _signals(env: EnvView, path: YamlPath, model: Mapping[str, Any]) -> None:
    auto = model.get("autoscaling")
    if isinstance(auto, list):
        entries = [((*path, "autoscaling", i, "metric"), s["metric"]) for i, s in enumerate(auto)]
    elif auto and "metric" in auto:
        entries = [((*path, "autoscaling", "metric"), auto["metric"])]
    else:
        entries = []
    aware = llm_aware(model) and model["server"] == "vllm"
    flow_control = (model.get("routing") or {}).get("flow_control", defaults.ROUTING_FLOW_CONTROL)
    for where, metric in entries:
        if metric not in ROUTER_METRICS:
            continue
        if not aware:
            env.error(
                where,
                f"{metric} is a signal of the LLM-aware router, and this model has none",
                "set routing.mode: llm_aware (vLLM models), or use queue_depth or ttft_p95_ms",
            )
        elif metric in FLOW_CONTROL_METRICS and not flow_control:
            env.error(
                where,
                f"{metric} exists only while the router's flow control holds requests, and "
                "routing.flow_control is off",
                "set routing.flow_control: true, or use router_running",
            )


def _zones(env: EnvView, path: YamlPath, model: Mapping[str, Any]) -> None:
    pool = (env.data.get("gpu_pools") or {}).get(model["pool"]) or {}
    zones = len(pool.get("zones") or env.spec["zones"])
    realtime = model.get("latency_class", defaults.MODEL_LATENCY_CLASS) == "realtime"
    low, high = defaults.default_replicas(realtime, zones)
    replicas = model.get("replicas") or {}
    minimum = replicas.get("min", low)
    maximum = replicas.get("max", max(high, minimum))
    rpath: YamlPath = (*path, "replicas")
    each = f"{zones} zone{'s' if zones != 1 else ''}"
    for key, value in (("min", minimum), ("max", maximum)):
        if value % zones:
            env.error(
                (*rpath, key) if key in replicas else path,
                f"replicas.{key} {value} does not split evenly over the pool's {each}: an "
                "llm-aware model runs one Deployment per zone",
                f"give replicas.{key} as a multiple of {zones}",
            )
    if maximum < zones:
        env.error(
            (*rpath, "max") if "max" in replicas else path,
            f"replicas.max {maximum} leaves a zone of the pool's {each} without a replica",
            f"give replicas.max {zones} or more",
        )
    flow_control = (model.get("routing") or {}).get("flow_control", defaults.ROUTING_FLOW_CONTROL)
    if minimum == 0 and not flow_control:
        env.error(
            (*rpath, "min") if "min" in replicas else path,
            "at 0 replicas an llm-aware model wakes through the router's queue, which holds "
            "requests only with flow control on",
            "set routing.flow_control: true, or keep replicas.min at 1 per zone or more",
        )
