"""prefix-cache-routing: an llm-aware model scores cached prompt prefixes."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint.errors import YamlPath
from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.resources import _dict
from inferplane.policies.routers import router_releases
from inferplane.policies.stack import Stack

PREFIX_SCORER = "prefix-cache-scorer"


def _scores_prefixes(values: dict[str, object]) -> bool:
    """The router's plugin configuration has the prefix-cache scorer. The chart's default
    file (``default-plugins.yaml``) has it (llm-d-router v0.10.0
    ``config/charts/routerlib/templates/_config.yaml``); a custom file must name it."""
    epp = _dict(values.get("epp"))
    chosen = str(epp.get("pluginsConfigFile") or "default-plugins.yaml")
    if chosen == "default-plugins.yaml":
        return True
    text = str(_dict(epp.get("pluginsCustomConfig")).get(chosen) or "")
    return PREFIX_SCORER in text


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    for router in router_releases(stack):
        if _scores_prefixes(dict(router.values)):
            continue
        model = router.model or router.name
        field: YamlPath = ("models", model, "routing", "prefix_cache")
        yield Finding(
            f"models.{model}",
            field,
            f"the router {router.name} ignores cached prompt prefixes: requests that share a "
            "prefix land on replicas that must compute it again; set routing.prefix_cache: "
            "approximate",
            router.release.ref,
        )


RULE = Rule(
    id="prefix-cache-routing",
    title="LLM-aware routing scores cached prompt prefixes",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "Most of what LLM-aware routing gains comes from sending a request to the replica "
        "that already holds its prompt's prefix in its KV cache: the prefill it skips is "
        "the time to first token it saves. Routing on queue and KV-cache use alone balances "
        "load but recomputes shared prefixes (system prompts, chat history) on every "
        "replica."
    ),
    remediation=(
        "Set models.<m>.routing.prefix_cache: approximate (the default). Hand-written "
        "programs: keep prefix-cache-scorer in the llm-d router's scheduling profile."
    ),
    links=("https://github.com/llm-d/llm-d-router/tree/v0.10.0/config/charts",),
    sources=(
        "Resources only: the llm-d-router-standalone chart's values (a Helm release or "
        "a chart Pulumi renders) "
        "(router.epp.pluginsConfigFile and router.epp.pluginsCustomConfig)."
    ),
    passing_example="""\
models:
  chat: {server: vllm, routing: {mode: llm_aware}}   # prefix_cache: approximate
""",
    failing_example="""\
models:
  chat: {server: vllm, routing: {mode: llm_aware, prefix_cache: "off"}}
""",
)
