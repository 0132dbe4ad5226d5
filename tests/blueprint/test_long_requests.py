# ruff: noqa: E501  (exact diagnostics read best unwrapped)
"""Long requests along the serving path, and the names a model at zero is reached by: the
timers derived from `max_request_s` (`long_requests`), and every refusal with its exact
diagnostic as `validate` reports it."""

from __future__ import annotations

import pytest
from test_blueprint_addons import cold, errors, gke
from test_semantic import BASE, edit

from inferplane.blueprint import long_requests
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.resolution.resolve import resolve

EXISTING_KEDA = "        keda: {mode: existing, namespace: keda}\n"
LONG = (
    "    replicas: {min: 0, max: 4}\n",
    "    replicas: {min: 0, max: 4}\n    max_request_s: 600\n",
)


def with_hosts(hosts: str, text: str) -> str:
    """`chat` (at zero in `text`) with ``replicas.wake.hosts``."""
    return edit(
        "replicas: {min: 0, max: 4}",
        f"replicas: {{min: 0, max: 4, wake: {{hosts: {hosts}}}}}",
        text,
    )


# --- the timers ---------------------------------------------------------------------------
def test_timers_follow_the_longest_request() -> None:
    # HTTPScaledObject timeouts.responseHeader: the interceptor's 300 s default would answer
    # 504 to a 20-minute request that is not streamed.
    assert long_requests.response_header_timeout_s(1200) == 1230
    # The interceptor's drain: the longest request through it, at least 300 s.
    assert long_requests.interceptor_drain_s([60, 3600, 900]) == 3630
    assert long_requests.interceptor_drain_s([60]) == 300
    assert long_requests.interceptor_drain_s([]) == 300
    assert long_requests.interceptor_grace_s(3630) == 5 + 3630 + 10
    # NLB idle timeout: never below its own 350 s default; a model at zero also stays silent
    # while the interceptor holds its first request for startup_timeout_s.
    assert long_requests.nlb_idle_timeout_s(60, 1200, wakes_on_traffic=False) == 350
    assert long_requests.nlb_idle_timeout_s(3600, 1200, wakes_on_traffic=False) == 3630
    assert long_requests.nlb_idle_timeout_s(3600, 1200, wakes_on_traffic=True) == 4830


def test_only_the_nlb_limits_a_silence() -> None:
    assert long_requests.path_limit_problem("aws", 3600, 2370, wakes_on_traffic=True) is None
    assert long_requests.path_limit_problem("gcp", 3600, 7200, wakes_on_traffic=True) is None
    assert long_requests.path_limit_problem("kubernetes", 3600, 7200, True) is None
    # A warm model's request alone: the schema's 3600 s fits; a component caller's may not.
    assert long_requests.path_limit_problem("aws", 6000, 60, wakes_on_traffic=False) == (
        "max_request_s (6000 s) is longer than an AWS NLB keeps an idle connection open (6000 s, its tcp.idle_timeout.seconds maximum)",
        "keep max_request_s at most 5970 s, or stream the response",
    )


def test_an_existing_add_on_declares_its_drain() -> None:
    text = cold(
        gke(
            EXISTING_KEDA
            + "        keda_http_add_on: {mode: existing, namespace: keda, drain_s: 600}\n"
        )
    )
    env = resolve(load_text(text, "bp.yaml"), "prod")
    assert env.cluster.addons.keda_http_add_on.drain_s == 600
    # Not given: the chart's own 30 s (chat is warm here, so nothing passes through it).
    unsaid = gke(EXISTING_KEDA + "        keda_http_add_on: {mode: existing, namespace: keda}\n")
    addon = resolve(load_text(unsaid, "bp.yaml"), "prod").cluster.addons.keda_http_add_on
    assert addon.drain_s == long_requests.CHART_DRAIN_S == 30


def test_wake_hosts_resolve_and_a_hosts_only_wake_has_no_schedule() -> None:
    env = resolve(
        load_text(with_hosts("[chat.example.com, llm.corp.dev]", cold(BASE)), "bp.yaml"), "stg"
    )
    chat = env.models["chat"]
    assert chat.wake_hosts == ("chat.example.com", "llm.corp.dev")
    assert chat.wake is None  # no cron trigger: its own traffic wakes it


# --- refusals -----------------------------------------------------------------------------
CASES = [
    pytest.param(
        cold(gke(EXISTING_KEDA + "        keda_http_add_on: {mode: existing, namespace: keda}\n")),
        [
            "bp.yaml:22:34: error: environments.prod.cluster.addons.keda_http_add_on.mode: the existing KEDA HTTP add-on's interceptor drains requests in flight for 30 s (`drain_s` not given: the chart's default) when it stops, and model 'chat', which wakes on its own HTTP traffic through it, allows requests of up to 60 s (max_request_s): a stopping interceptor would cut them; raise the add-on's `interceptor.drainTimeout` to at least 60s and say so with `drain_s: 60`, or lower the model's max_request_s to 30"
        ],
        id="existing-drain-defaults-to-the-charts-30s",
    ),
    pytest.param(
        edit(
            *LONG,
            cold(
                gke(
                    EXISTING_KEDA
                    + "        keda_http_add_on: {mode: existing, namespace: keda, drain_s: 120}\n"
                )
            ),
        ),
        [
            "bp.yaml:22:70: error: environments.prod.cluster.addons.keda_http_add_on.drain_s: the existing KEDA HTTP add-on's interceptor drains requests in flight for 120 s when it stops, and model 'chat', which wakes on its own HTTP traffic through it, allows requests of up to 600 s (max_request_s): a stopping interceptor would cut them; raise the add-on's `interceptor.drainTimeout` to at least 600s and say so with `drain_s: 600`, or lower the model's max_request_s to 120"
        ],
        id="existing-drain-shorter-than-a-request",
    ),
    pytest.param(
        edit(
            *LONG,
            cold(
                gke(
                    EXISTING_KEDA
                    + "        keda_http_add_on: {mode: existing, namespace: keda, drain_s: 600}\n"
                )
            ),
        ),
        [],
        id="existing-drain-long-enough",
    ),
    pytest.param(
        cold(gke("        keda_http_add_on: {mode: install, drain_s: 600}\n")),
        [
            "bp.yaml:21:43: error: environments.prod.cluster.addons.keda_http_add_on.drain_s: `drain_s` describes an `existing` add-on; add `mode: existing`, or remove it: an installed add-on drains for the blueprint's longest request"
        ],
        id="drain-of-an-installed-add-on",
    ),
    pytest.param(
        edit(
            "    replicas: {min: 0, max: 4}\n",
            "    replicas: {min: 0, max: 4}\n    startup_timeout_s: 6000\n",
            cold(BASE),
        ),
        # stg is AWS: refused there; prod's GKE load balancer keeps the silence open.
        [
            "bp.yaml:29:24: error: models.chat.startup_timeout_s: a request to this model at zero replicas may be silent for startup_timeout_s (6000 s, held while the first replica starts) plus max_request_s (60 s), 6060 s, and an AWS NLB closes a connection idle for more than 6000 s (its tcp.idle_timeout.seconds maximum); keep startup_timeout_s + max_request_s at most 5970 s, or keep replicas.min at 1 or more so that no request waits for a replica to start"
        ],
        id="silence-longer-than-an-nlb-keeps",
    ),
    pytest.param(
        edit(
            "    replicas: {min: 2, max: 4}\n",
            "    replicas: {min: 2, max: 4}\n    startup_timeout_s: 6000\n    max_request_s: 3600\n",
        ),
        [],
        id="warm-model-waits-for-no-start",
    ),
    pytest.param(with_hosts("[chat.example.com, llm.corp.dev]", cold(BASE)), [], id="own-hosts"),
    pytest.param(
        with_hosts("['*.example.com', '10.0.0.1', '*']", cold(BASE)),
        [
            "bp.yaml:28:47: error: models.chat.replicas.wake.hosts[0]: invalid value \"*.example.com\"; write a lowercase DNS name such as chat.example.com: labels of letters, digits and '-' joined by '.', the last one starting with a letter (no wildcards or IP addresses)",
            "bp.yaml:28:64: error: models.chat.replicas.wake.hosts[1]: invalid value \"10.0.0.1\"; write a lowercase DNS name such as chat.example.com: labels of letters, digits and '-' joined by '.', the last one starting with a letter (no wildcards or IP addresses)",
            "bp.yaml:28:76: error: models.chat.replicas.wake.hosts[2]: invalid value \"*\"; write a lowercase DNS name such as chat.example.com: labels of letters, digits and '-' joined by '.', the last one starting with a letter (no wildcards or IP addresses)",
        ],
        id="hosts-wildcards-and-addresses",
    ),
    pytest.param(
        with_hosts("[chat.demo.svc.cluster.local, other.keda, api.svc]", cold(BASE)),
        [
            "bp.yaml:28:47: error: models.chat.replicas.wake.hosts[0]: 'chat.demo.svc.cluster.local' is an in-cluster Service name: the interceptor would send that Service's requests to this model; list only names of your own DNS zone; the load balancer's in-cluster names are routed already",
            "bp.yaml:28:76: error: models.chat.replicas.wake.hosts[1]: 'other.keda' is an in-cluster Service name: the interceptor would send that Service's requests to this model; list only names of your own DNS zone; the load balancer's in-cluster names are routed already",
            "bp.yaml:28:88: error: models.chat.replicas.wake.hosts[2]: 'api.svc' is an in-cluster Service name: the interceptor would send that Service's requests to this model; list only names of your own DNS zone; the load balancer's in-cluster names are routed already",
        ],
        id="hosts-in-cluster-names",
    ),
    pytest.param(
        edit(
            "    batching:",
            "    replicas: {min: 1, max: 2, wake: {hosts: [rank.example.com]}}\n    batching:",
        ),
        [
            "bp.yaml:34:46: error: models.rank.replicas.wake.hosts: the KEDA HTTP add-on routes HTTP only, and this model serves both: it never wakes on its own traffic; remove `hosts`, or serve HTTP only (expose.protocol: http)"
        ],
        id="hosts-of-a-grpc-model",
    ),
    pytest.param(
        with_hosts("[chat.example.com]", cold(BASE))
        + "  chat2:\n    server: vllm\n    source: llama/\n    pool: l4\n"
        "    replicas: {min: 0, max: 2, wake: {hosts: [chat.example.com]}}\n",
        [
            "bp.yaml:39:47: error: models.chat2.replicas.wake.hosts[0]: 'chat.example.com' is listed by model 'chat' too, and the interceptor sends a name's requests to one model only; give each model names of its own"
        ],
        id="hosts-of-two-models",
    ),
    pytest.param(
        edit(
            "replicas: {min: 0, max: 4}",
            "replicas: {min: 0, max: 4, wake: {timezone: UTC}}",
            cold(BASE),
        ),
        [
            "bp.yaml:28:32: error: models.chat.replicas.wake: `timezone` needs `schedule`; add `schedule:`"
        ],
        id="wake-timezone-without-schedule",
    ),
]


def test_an_override_cannot_bring_half_a_schedule_to_a_hosts_only_wake() -> None:
    text = with_hosts("[chat.example.com]", cold(BASE))
    text = edit(
        "    cluster: {create: true}\n",
        "    cluster: {create: true}\n    overrides:\n"
        "      models: {chat: {replicas: {wake: {schedule: '0 2 * * *'}}}}\n",
        text,
    )
    assert errors(text) == [
        "bp.yaml:13:51: error: environments.stg.overrides.models.chat.replicas.wake.schedule: "
        "`schedule` needs `duration`; add `duration:`"
    ]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_long_request_and_wake_host_diagnostics(text: str, expected: list[str]) -> None:
    assert errors(text) == expected
