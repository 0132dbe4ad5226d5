"""`inferplane check` over several blueprints: add-ons, namespaces and Prometheus queries
shared across blueprints on one cluster (`inferplane.app.shared_clusters`)."""

from __future__ import annotations

import datetime as dt
import glob
from pathlib import Path

import pytest

from inferplane.app.check import check_files

CHAT = Path("blueprints/shared-eks-chat.yaml").read_text()
SEARCH = Path("blueprints/shared-eks-search.yaml").read_text()
TODAY = dt.date(2026, 12, 1)

# The bundled blueprints, or two of them changed in a place or two: an environment the
# session has planned already (the CLI tests check and plan them too) is not planned again.
pytestmark = pytest.mark.usefixtures("plans_by_environment")


def invalid(tmp_path: Path, **texts: str) -> list[str]:
    paths = []
    for name, text in texts.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        paths.append(str(path))
    report = check_files(paths, ["prod"], today=TODAY)
    return [d.format().replace(str(tmp_path) + "/", "") for d in report.invalid]


def edit(old: str, new: str, text: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_the_bundled_blueprints_pass_together() -> None:
    paths = sorted(glob.glob("blueprints/*.yaml") + glob.glob("e2e/blueprints/*.yaml"))
    assert check_files(paths, today=TODAY).invalid == []


def test_an_add_on_installed_by_default_is_blamed_at_the_cluster(tmp_path: Path) -> None:
    other = edit("name: shared-chat", "name: other-chat", CHAT)
    other = edit("drafts.chat.example.com", "drafts.other.example.com", other)
    assert invalid(tmp_path, a=CHAT, b=other) == [
        "b.yaml:18:17: error: environments.prod.cluster.existing: blueprint 'other-chat' "
        "environment 'prod' installs `gpu_operator`, `keda`, `keda_http_add_on`, `prometheus`, "
        "`aws_load_balancer_controller`, `cluster_autoscaler` on cluster 'shared-eks', and "
        "blueprint 'shared-chat' environment 'prod' of a.yaml installs them there too: a "
        "cluster runs one copy of each add-on; set each to `{mode: existing, ...}` under "
        "environments.prod.cluster.addons, with the coordinates of the one blueprint "
        "'shared-chat' installs"
    ]


def test_an_add_on_said_to_install_is_blamed_at_its_line(tmp_path: Path) -> None:
    search = edit("keda: {mode: existing, namespace: keda}\n", "keda: {mode: install}\n", SEARCH)
    search = edit(
        "keda_http_add_on: {mode: existing, namespace: keda, release: keda-add-ons-http, "
        "drain_s: 300}\n        prometheus",
        "keda_http_add_on: {mode: install}\n        prometheus",
        search,
    )
    assert invalid(tmp_path, a=CHAT, b=search) == [
        "b.yaml:22:15: error: environments.prod.cluster.addons.keda: blueprint 'shared-search' "
        "environment 'prod' installs `keda` on cluster 'shared-eks', and blueprint "
        "'shared-chat' environment 'prod' of a.yaml installs it there too: a cluster runs one "
        "copy of each add-on; set it to `{mode: existing, ...}` under "
        "environments.prod.cluster.addons, with the coordinates of the one blueprint "
        "'shared-chat' installs",
        "b.yaml:23:27: error: environments.prod.cluster.addons.keda_http_add_on: blueprint "
        "'shared-search' environment 'prod' installs `keda_http_add_on` on cluster "
        "'shared-eks', and blueprint 'shared-chat' environment 'prod' of a.yaml installs it "
        "there too: a cluster runs one copy of each add-on; set it to `{mode: existing, ...}` "
        "under environments.prod.cluster.addons, with the coordinates of the one blueprint "
        "'shared-chat' installs",
    ]


def test_an_add_on_namespace_that_is_another_blueprint_s(tmp_path: Path) -> None:
    search = edit(
        "gpu_operator: {mode: existing, namespace: gpu-operator}\n        keda",
        "gpu_operator: {mode: existing, namespace: shared-chat}\n        keda",
        SEARCH,
    )
    assert invalid(tmp_path, a=CHAT, b=search) == [
        "b.yaml:21:51: error: environments.prod.cluster.addons.gpu_operator.namespace: "
        "namespace 'shared-chat' is the namespace of blueprint 'shared-chat', which its stack "
        "creates (default-deny) for its serving objects; the add-on cannot run there, and "
        "this blueprint would place objects in it; give the namespace the add-on really runs "
        "in; a blueprint's namespace holds that blueprint's objects only"
    ]


def test_a_query_url_in_another_blueprint_s_namespace(tmp_path: Path) -> None:
    """Refused as any namespace but the Prometheus' own is (an allowlist), checked with
    the other blueprint or without it."""
    search = edit(
        "query_url: http://kube-prometheus-stack-prometheus.monitoring.svc.cluster.local:9090\n"
        "          selector_labels: {release: kube-prometheus-stack}\n"
        '          dashboard_label: {grafana_dashboard: "1"}\n        aws',
        "query_url: http://drafts-lb.shared-chat.svc:8000\n"
        "          selector_labels: {release: kube-prometheus-stack}\n"
        '          dashboard_label: {grafana_dashboard: "1"}\n        aws',
        SEARCH,
    )
    assert invalid(tmp_path, a=CHAT, b=search) == [
        "b.yaml:27:22: error: environments.prod.cluster.addons.prometheus.query_url: "
        "'http://drafts-lb.shared-chat.svc:8000' names Service 'drafts-lb' in namespace "
        "'shared-chat', not in 'monitoring', the namespace this Prometheus runs in: KEDA "
        "would scale the GPU Deployments on the answers of whatever serves there; give the "
        "Service of the Prometheus in namespace 'monitoring', such as "
        "http://prometheus-operated.monitoring.svc:9090"
    ]


def test_add_ons_installed_first_by_two_blueprints_name_both(tmp_path: Path) -> None:
    alb = "        aws_load_balancer_controller: {mode: existing}\n"
    autoscaler = "        cluster_autoscaler: {mode: existing}\n"
    both = alb + autoscaler
    a = edit(both, autoscaler, SEARCH)
    b = edit(both, alb, SEARCH)
    c = edit(both, "", SEARCH)
    b = edit("name: shared-search", "name: third", b)
    c = edit("name: shared-search", "name: fourth", c)
    [message] = invalid(tmp_path, a=a, b=b, c=c)
    assert message.startswith(
        "c.yaml:18:17: error: environments.prod.cluster.existing: blueprint 'fourth' "
        "environment 'prod' installs `aws_load_balancer_controller`, `cluster_autoscaler` on "
        "cluster 'shared-eks', and blueprint 'shared-search' environment 'prod' of a.yaml "
        "installs `aws_load_balancer_controller` there, and blueprint 'third' environment "
        "'prod' of b.yaml installs `cluster_autoscaler` there: a cluster runs one copy of each "
        "add-on; "
    ), message
    assert message.endswith(
        "with the coordinates of the copies blueprints 'shared-search' and 'third' install"
    ), message


def test_env_narrowing_keeps_the_cross_blueprint_checks_whole(tmp_path: Path) -> None:
    """`check --env local` still sees the two prods fight over one cluster's add-ons: the
    environments compared across blueprints are all of them, not the ones chosen."""
    other = edit("name: shared-chat", "name: other-chat", CHAT)
    paths = []
    for name, text in {"a": CHAT, "b": other}.items():
        (tmp_path / f"{name}.yaml").write_text(text)
        paths.append(str(tmp_path / f"{name}.yaml"))
    report = check_files(paths, ["local"], today=TODAY)
    found = [d.format() for d in report.invalid]
    assert any(
        "b.yaml:18:17: error: environments.prod.cluster.existing: blueprint 'other-chat'" in f
        for f in found
    ), found
    assert {env for _, env in report.checked} == {"local"}


def test_a_host_another_blueprint_routes_is_refused(tmp_path: Path) -> None:
    """The interceptor sends a name's requests to the oldest route that lists it
    (http-add-on v0.15.0 pkg/routing/tablememory.go): a second blueprint listing it would
    take the first one's traffic, or lose its own."""
    # shared-chat routes drafts.chat.example.com to its model drafts.
    search = edit(
        "    replicas: {min: 0, max: 2}\n",
        "    replicas: {min: 0, max: 2, wake: {hosts: [rerank.example.com, "
        "drafts.chat.example.com]}}\n",
        SEARCH,
    )
    # On both clusters the two blueprints share: prod's, and the local one.
    assert invalid(tmp_path, a=CHAT, b=search) == [
        "b.yaml:74:67: error: models.rerank.replicas.wake.hosts[1]: 'drafts.chat.example.com' is "
        f"routed by the KEDA HTTP add-on on cluster {cluster!r} to model 'drafts' of blueprint "
        f"'shared-chat' environment {env!r} of a.yaml; the interceptor sends a name's requests "
        "to one model only; give this model names of its own DNS zone; a name reaches one "
        "model on a cluster"
        for cluster, env in (("shared-eks", "prod"), ("inferplane-local", "local"))
    ]


def test_a_drain_longer_than_the_installed_one_is_refused(tmp_path: Path) -> None:
    """shared-chat installs the add-on with a drain of 300 s (its longest request through
    the interceptor, 60 s, is below the floor); shared-search says 900 s to let a 900 s
    request through, which the interceptors would cut."""
    search = SEARCH.replace("keda-add-ons-http, drain_s: 300}", "keda-add-ons-http, drain_s: 900}")
    search = edit(
        "    replicas: {min: 0, max: 2}\n",
        "    replicas: {min: 0, max: 2}\n    max_request_s: 900\n",
        search,
    )
    assert invalid(tmp_path, a=CHAT, b=search) == [
        "b.yaml:23:98: error: environments.prod.cluster.addons.keda_http_add_on.drain_s: "
        "drain_s says the existing KEDA HTTP add-on drains for 900 s, and blueprint "
        "'shared-chat' environment 'prod' of a.yaml installs it on cluster 'shared-eks' with "
        "a drain of 300 s (its longest request through the interceptor); give `drain_s: 300` "
        "and keep max_request_s of the models that wake on traffic at most 300 s, or raise "
        "max_request_s of a model of blueprint 'shared-chat' that wakes on traffic so its "
        "drain grows"
    ]


def test_the_end_to_end_blueprints_break_no_mandatory_rule_without_a_config() -> None:
    """The local deploy run checks them with the default config (as the policy pack in
    `pulumi preview` runs): a mandatory violation there would stop the run before `up`."""
    paths = sorted(glob.glob("e2e/blueprints/*.yaml"))
    report = check_files(paths, ["local"], today=TODAY)
    assert report.invalid == []
    failing = [
        (r.rule, r.message)
        for r in report.results
        if r.status == "violation" and r.level == "mandatory"
    ]
    assert failing == []


def test_pool_names_that_join_to_another_blueprints_are_refused(tmp_path: Path) -> None:
    """team + prod + pool chat-l4 and team-prod + chat + pool l4 name their node groups and
    NodePools alike (team-prod-chat-l4), though their stack names differ."""
    first = edit("name: shared-chat", "name: team", CHAT)
    second = edit("name: shared-chat", "name: team-prod", CHAT).replace("chat-l4", "l4")
    second = edit("  prod:\n", "  chat:\n", second)
    found = [f for f in invalid(tmp_path, a=first, b=second) if "names its node groups" in f]
    assert len(found) == 1, found
    assert (
        "error: gpu_pools.l4: pool 'l4' of blueprint 'team-prod' environment 'chat' names"
        in (found[0])
    )
    assert (
        "'team-prod-chat-l4', as pool 'chat-l4' of blueprint 'team' environment 'prod'"
        in (found[0])
    )


def test_a_model_whose_joined_name_is_another_blueprint_s(tmp_path: Path) -> None:
    """shared-search / prod / rerank and shared / search / prod-rerank both join to
    shared-search-prod-rerank: the load balancer Service beside the interceptor and the
    hosts it routes would be one, whatever the blueprint and environment names differ in."""
    other = edit("name: shared-search", "name: shared", SEARCH)
    other = edit("\n  prod:\n", "\n  search:\n", other)
    other = edit("\n  rerank:\n", "\n  prod-rerank:\n", other)
    assert invalid(tmp_path, a=SEARCH, b=other) == [
        "b.yaml:66:3: error: models.prod-rerank: model 'prod-rerank' of blueprint 'shared' "
        "environment 'search' gets Service keda/shared-search-prod-rerank-lb and hosts "
        "shared-search-prod-rerank-lb.keda, shared-search-prod-rerank-lb.keda.svc, "
        "shared-search-prod-rerank-lb.keda.svc.cluster.local, as model 'rerank' of blueprint "
        "'shared-search' environment 'prod' of a.yaml does: <blueprint>-<environment>-<model> "
        "joins to the same name, and one would take over the other's load balancer and "
        "traffic; rename the model, the environment or the blueprint so that "
        "<blueprint>-<environment>-<model> differs"
    ]
    # With names that do not join alike, they pass together.
    renamed = edit("\n  prod-rerank:\n", "\n  prod-ranker:\n", other)
    assert invalid(tmp_path, a=SEARCH, b=renamed) == []


def test_argo_rollouts_installed_by_two_blueprints_is_blamed_only_where_named(
    tmp_path: Path,
) -> None:
    # shared-chat installs every add-on on shared-eks; shared-search uses them as existing.
    chat = edit(
        '      kubernetes_version: "1.33"\n',
        '      kubernetes_version: "1.33"\n      addons: {argo_rollouts: {}}\n',
        CHAT,
    )
    named = "keda: {mode: existing, namespace: keda}\n        argo_rollouts: {}\n"
    search = edit("keda: {mode: existing, namespace: keda}\n", named, SEARCH)
    # Named by one blueprint only: installed once.
    assert invalid(tmp_path, a=chat, b=SEARCH) == []
    existing = "argo_rollouts: {mode: existing, namespace: argo-rollouts}\n"
    assert invalid(tmp_path, a=chat, b=edit("argo_rollouts: {}\n", existing, search)) == []
    assert invalid(tmp_path, a=chat, b=search) == [
        "b.yaml:23:24: error: environments.prod.cluster.addons.argo_rollouts: blueprint "
        "'shared-search' environment 'prod' installs `argo_rollouts` on cluster 'shared-eks', "
        "and blueprint 'shared-chat' environment 'prod' of a.yaml installs it there too: a "
        "cluster runs one copy of each add-on; set it to `{mode: existing, ...}` under "
        "environments.prod.cluster.addons, with the coordinates of the one blueprint "
        "'shared-chat' installs"
    ]
