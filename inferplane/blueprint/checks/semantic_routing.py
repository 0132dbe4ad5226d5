"""Semantic checks of `models.<m>.routing`: what LLM-aware routing needs of a model.

Run on each environment's merged view, so a problem an override introduces is reported at
the override's line.

- ``mode: llm_aware`` routes through the llm-d router (v0.10.0), whose endpoint picker
  scores replicas by the model server's own metrics and the request's prompt: vLLM models
  only (the router's default scorers read vLLM's ``vllm:*`` series and OpenAI request
  bodies; ``config/charts/routerlib/templates/_config.yaml``).
- ``prefix_cache``, ``flow_control`` and ``priorities`` configure the router: without
  ``llm_aware`` there is none, so they are refused rather than silently ignored.
- ``precise`` prefix scoring is refused: the picker would need each prompt's exact tokens
  from a vLLM render endpoint, and neither way of having one is safe with the pinned
  releases (`PRECISE_REFUSAL`, sources below). ``--kv-events-config`` stays refused, so no
  one opens the event endpoint by hand. Precise scoring also reads the KV-cache events of
  vLLM's prefix cache, so it would need prefix caching on.
- The router's autoscaling signals exist only with the router, and ``router_queue`` /
  ``pool_saturation`` only with its ``flowControl`` feature gate (``flow_control_*``
  series, ``pkg/epp/metrics/llm_d_router_metrics.go``; gate off by default,
  ``pkg/epp/flowcontrol/README.md``).
- ``priorities`` without ``flow_control`` order nothing: with the ``flowControl`` gate off
  the router admits through its ``LegacyAdmissionController``, which sheds a request only
  when its priority is negative and the pool is saturated, and admits every other request
  at once, whatever its priority (``pkg/epp/requestcontrol/admission.go``,
  ``rejectIfSheddableAndSaturated``; ``pkg/epp/util/request/sheddable.go``, ``IsSheddable``:
  ``priority < 0``; ``cmd/epp/runner/runner.go``, ``initAdmissionControl``). Only the
  flow-control queue dispatches by priority. An advisory (`findings`): the negative
  priorities still shed.
- An llm-aware model runs one Deployment per zone (an InferencePool selects pods by pod
  labels only, and a pod's zone is its node's), so its replica bounds split evenly over
  its pool's zones; at zero it wakes through the router's queue, which holds requests only
  with flow control on.

Why ``precise`` cannot be deployed safely (llm-d/llm-d-router at v0.10.0, commit
71f4f0999f95b96c49a9d0c4afbd18dfdb943c26; vLLM v0.33.0):

- The router's precise scorer is the ``prefix-cache-scorer`` fed by a
  ``precise-prefix-cache-producer``, which hashes the request's ``TokenizedPrompt`` into
  KV-block keys and looks them up in the index it builds from the replicas' KV events
  (``pkg/epp/framework/plugins/requestcontrol/dataproducer/preciseprefixcache/README.md``
  and ``producer.go``, ``Consumes``: ``TokenizedPrompt`` of the ``token-producer``). The
  ``token-producer``'s only tokenizer-free backend, ``estimate``, packs about 4 bytes per
  token, whose ids "do not correspond to engine tokens" and "silently degrades precise
  cache correlation"; the exact ones are the deprecated tokenizer sidecar
  (``udsTokenizerConfig``) and ``vllm``, which POSTs the prompt to
  ``/v1/completions/render`` or ``/v1/chat/completions/render`` at ``vllm.url`` over plain
  HTTP (``.../dataproducer/tokenizer/README.md``, ``vllm_http.go``).
- A replica's own render endpoint: vLLM v0.33.0's ``vllm serve`` registers the render routes
  only with ``--enable-scale-out``, which registers ``/inference/v1/generate`` (generation
  from raw token ids) and ``/inference/v1/abort_requests`` with them
  (``BaseFrontendArgs.enable_scale_out``; inferplane/facts/vllm/v0.33.0/serve_flags.txt,
  read from the wheel, refuses the flag for that reason;
  https://docs.vllm.ai/en/latest/serving/online_serving/renderer.html: "disabled by default
  on a standard inference server"). They share the replica's one HTTP port with the API,
  which the model's clients reach both through the router's proxy, which forwards every
  path to the replica it picks (the chart's Envoy route ``prefix: "/"``,
  ``config/charts/llm-d-router-standalone/values.yaml``), and directly (the serving pods
  admit the clients' ranges on that port, `inferplane.components.serving.routing.load_balancer`
  ``network_policy_spec``): filtering paths in the proxy would not keep any client from
  aborting others' requests by id.
- A render sidecar in the picker pod: the chart's ``router.tokenizer`` runs
  ``vllm launch render <model>`` from ``vllm/vllm-openai-cpu:v0.19.1`` (not the replicas'
  vLLM release, so not necessarily their chat templates and tokenization), reading the
  model from the Hugging Face hub with the Secret ``llm-d-hf-token``
  (``config/charts/routerlib/values.yaml``, ``tokenizer``). Reading the tokenizer from the
  model store instead, as the replicas read their weights (`inferplane.components.serving
  .vllm`), would give every picker pod the store's read identity; and the sidecar asks for
  4 CPUs and 8 GiB, all the vCPUs of a system node (`inferplane.blueprint.system_nodes`).

What the KV-event half would take, for whoever lifts this (same sources): the producer
dials each pool pod's ZMQ publisher itself, ``tcp://<pod IP>:<socketPort>`` (default 5557,
plus the data-parallel rank) as endpoint events arrive from an
``endpoint-notification-source`` listed under ``dataLayer``
(``preciseprefixcache/extractor.go``, ``pkg/kvevents/pool.go`` ``DefaultConfig``; sample
``deploy/config/epp-precise-prefix-cache-config.yaml``), subscribing to topics starting
``kv@`` and reading the model name from topic ``kv@<pod>@<model>``
(``pkg/kvevents/engineadapter/common.go``, ``parseTopic``), which must equal the request's
model since it seeds the block hashes (``pkg/kvcache/kvblock/token_processor.go``,
``getInitHash``): requests by an alias would never match. vLLM binds its PUB socket when the
endpoint holds ``*`` (``vllm/distributed/kv_events.py``, ``ZmqEventPublisher``;
``KVEventsConfig`` default ``tcp://*:5557``; read at vllm-project/vllm commits 0181ea3 and
00634b8, not yet checked against the v0.33.0 wheel), so the serving pods would need
ingress on 5557 from their zone's pickers only. Block size and hash algorithm need not match: the
producer rehashes the token ids the events carry (README, "Engine compatibility").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from inferplane.blueprint import defaults
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.model import (
    FLOW_CONTROL_METRICS,
    ROUTER_METRICS,
    MinMax,
    Routing,
    zone_split_problems,
)

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView

ROUTER_OPTIONS = ("prefix_cache", "flow_control", "priorities", "pickers")
PRECISE_REFUSAL = (
    "precise prefix scoring needs each prompt's exact tokens from a vLLM render endpoint "
    "(llm-d-router v0.10.0 token-producer), and vLLM v0.33.0 serves one on a replica only "
    "with --enable-scale-out, which also lets every client generate from raw token ids and "
    "abort requests by id, while the router's render sidecar reads the model from the "
    "Hugging Face hub with a token; inferplane deploys neither"
)
"""Why ``precise`` is refused (sources in the module docstring); `ServedModel` says the same."""
PRECISE_FIX = (
    "use prefix_cache: approximate (the default), which scores the prefixes the router has "
    "routed itself"
)


def llm_aware(model: Mapping[str, Any]) -> bool:
    """Model (a `models.<m>` mapping as written) routes llm-aware: `Routing.llm_aware` of
    its routing with the defaults `resolve()` gives it."""
    return Routing.of(model.get("routing")).llm_aware


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
        env.error((*rpath, "prefix_cache"), PRECISE_REFUSAL, PRECISE_FIX)
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


def pool_zones(env: EnvView, model: Mapping[str, Any]) -> int:
    """How many zones the model's pool spans (its own, else the environment's)."""
    pool = (env.data.get("gpu_pools") or {}).get(model["pool"]) or {}
    return len(pool.get("zones") or env.spec["zones"])


def replica_bounds(env: EnvView, model: Mapping[str, Any]) -> tuple[int, int]:
    """`replicas.min` and `replicas.max`, or their defaults for the model's pool."""
    return defaults.model_replicas(model, pool_zones(env, model))


def check_zone_split(env: EnvView, path: YamlPath, model: Mapping[str, Any], why: str) -> None:
    """A model that runs one Deployment per zone (`why`: what makes it) splits its replica
    bounds evenly over its pool's zones, and keeps a replica in each."""
    zones = pool_zones(env, model)
    bounds = MinMax(*replica_bounds(env, model))
    replicas = model.get("replicas") or {}
    rpath: YamlPath = (*path, "replicas")
    each = f"{zones} zone{'s' if zones != 1 else ''}"
    for key, problem in zone_split_problems(bounds, zones):
        value = bounds.min if key == "min" else bounds.max
        where = (*rpath, key) if key in replicas else path
        if problem == "uneven":
            env.error(
                where,
                f"replicas.{key} {value} does not split evenly over the pool's {each}: {why} "
                "runs one Deployment per zone",
                f"give replicas.{key} as a multiple of {zones}",
            )
        else:
            env.error(
                where,
                f"replicas.max {value} leaves a zone of the pool's {each} without a replica",
                f"give replicas.max {zones} or more",
            )


def _zones(env: EnvView, path: YamlPath, model: Mapping[str, Any]) -> None:
    check_zone_split(env, path, model, "an llm-aware model")
    replicas = model.get("replicas") or {}
    rpath: YamlPath = (*path, "replicas")
    minimum = replica_bounds(env, model)[0]
    flow_control = (model.get("routing") or {}).get("flow_control", defaults.ROUTING_FLOW_CONTROL)
    if minimum == 0 and not flow_control:
        env.error(
            (*rpath, "min") if "min" in replicas else path,
            "at 0 replicas an llm-aware model wakes through the router's queue, which holds "
            "requests only with flow control on",
            "set routing.flow_control: true, or keep replicas.min at 1 per zone or more",
        )


def findings(env: EnvView) -> Iterator[tuple[YamlPath, str, str]]:
    """Advisories (printed by ``inferplane validate`` as warnings): objectives whose
    priority does nothing because flow control is off (module docstring)."""
    for name, model in (env.data.get("models") or {}).items():
        routing = model.get("routing") or {}
        priorities = routing.get("priorities") or {}
        if not llm_aware(model) or model["server"] != "vllm":
            continue
        if routing.get("flow_control", defaults.ROUTING_FLOW_CONTROL):
            continue
        inert = [f"{objective} (priority {p})" for objective, p in priorities.items() if p >= 0]
        if not inert:
            continue
        one = len(inert) == 1
        yield (
            ("models", name, "routing", "priorities"),
            "without routing.flow_control the router sheds only requests of negative "
            "priority, and only while the pool is saturated (llm-d-router v0.10.0 "
            f"LegacyAdmissionController): objective{'' if one else 's'} {', '.join(inert)} "
            f"{'is' if one else 'are'} admitted exactly like a request without an objective",
            "set routing.flow_control: true, so the router queues requests while the pool is "
            "saturated and serves higher priorities first, or remove the objectives at "
            "priority 0 or above",
        )
