# ruff: noqa: E501  (exact diagnostics read best unwrapped)
"""`environments.<env>.cluster.addons`: defaults, resolution, and every refusal with its exact
diagnostic (schema and semantic checks alike, as `validate` reports them)."""

from __future__ import annotations

import pytest
from test_semantic import BASE, edit

from inferplane.blueprint import naming
from inferplane.blueprint.addons import Addons, resolve_addons
from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document
from inferplane.blueprint.resolution.resolve import resolve

GKE = "cluster: {existing: prod-gke}"
AWS = "cluster: {create: true}"
PROM = "        prometheus: {mode: existing, namespace: monitoring, query_url: %s, selector_labels: {release: kps}}\n"


def errors(text: str) -> list[str]:
    """What `validate` reports: schema problems, else semantic ones."""
    doc = load_text(text, "bp.yaml")
    return [d.format() for d in (validate_document(doc) or check(doc))]


def gke(addons: str, text: str = BASE) -> str:
    """BASE with `addons` (lines indented eight spaces) on the attached GKE cluster."""
    return edit(GKE, "cluster:\n      existing: prod-gke\n      addons:\n" + addons, text)


def eks(addons: str) -> str:
    """BASE with its AWS environment attached to `shared-eks`, with `addons`."""
    return edit(AWS, "cluster:\n      existing: shared-eks\n      addons:\n" + addons)


def cold(text: str) -> str:
    """`chat` (vLLM, HTTP only) at zero replicas: it wakes on its own traffic."""
    return edit("replicas: {min: 2, max: 4}", "replicas: {min: 0, max: 4}", text)


CASES = [
    pytest.param(
        gke("        keda: {mode: existing}\n"),
        [
            "bp.yaml:21:9: error: environments.prod.cluster.addons.keda: an `existing` add-on needs `namespace`; add `namespace: <the namespace it runs in>`"
        ],
        id="namespace-missing",
    ),
    pytest.param(
        gke("        keda: {namespace: keda}\n"),
        [
            "bp.yaml:21:16: error: environments.prod.cluster.addons.keda.namespace: `namespace` describes an `existing` add-on; add `mode: existing`, or remove it: an installed add-on gets fixed coordinates"
        ],
        id="namespace-with-install",
    ),
    pytest.param(
        gke("        keda: {mode: existing, namespace: Keda_1}\n"),
        [
            "bp.yaml:21:43: error: environments.prod.cluster.addons.keda.namespace: invalid value \"Keda_1\"; write a namespace name: lowercase letters, digits and '-', at most 63"
        ],
        id="namespace-not-dns-label",
    ),
    pytest.param(
        gke("        prometheus: {mode: existing, namespace: monitoring}\n"),
        [
            "bp.yaml:21:9: error: environments.prod.cluster.addons.prometheus: an `existing` Prometheus needs `namespace`, `query_url` and `selector_labels`; add the missing keys: the namespace of its pods, its query address, and the labels its operator selects ServiceMonitors and PrometheusRules by"
        ],
        id="prometheus-coordinates-missing",
    ),
    pytest.param(
        gke(PROM % "'http://user:pw@p:9090/?q=1'"),
        [
            'bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: "http://user:pw@p:9090/?q=1" is not an http(s) URL of a host, with an optional port and path; write it like http://prometheus-operated.monitoring.svc:9090, with no credentials, query string or fragment'
        ],
        id="query-url-with-credentials",
    ),
    pytest.param(
        gke(PROM % "ftp://prom"),
        [
            'bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: "ftp://prom" is not an http(s) URL of a host, with an optional port and path; write it like http://prometheus-operated.monitoring.svc:9090, with no credentials, query string or fragment'
        ],
        id="query-url-scheme",
    ),
    pytest.param(
        gke(
            "        prometheus: {mode: existing, namespace: monitoring, query_url: 'http://p:9090', selector_labels: {'-bad': x}}\n"
        ),
        [
            'bp.yaml:21:107: error: environments.prod.cluster.addons.prometheus.selector_labels.-bad: invalid label key "-bad"; write a label key such as release or example.com/team'
        ],
        id="label-key",
    ),
    pytest.param(
        gke(
            "        prometheus: {mode: existing, namespace: monitoring, query_url: 'http://p:9090', selector_labels: {release: 'a b'}}\n"
        ),
        [
            "bp.yaml:21:116: error: environments.prod.cluster.addons.prometheus.selector_labels.release: invalid value \"a b\"; write a label value in quotes: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
        ],
        id="label-value",
    ),
    pytest.param(
        gke("        cluster_autoscaler: {mode: existing}\n"),
        [
            "bp.yaml:21:29: error: environments.prod.cluster.addons.cluster_autoscaler: `cluster_autoscaler` is an AWS add-on; remove it: GKE scales its node pools itself"
        ],
        id="autoscaler-on-gcp",
    ),
    pytest.param(
        gke("        aws_load_balancer_controller: {mode: install}\n"),
        [
            "bp.yaml:21:39: error: environments.prod.cluster.addons.aws_load_balancer_controller: `aws_load_balancer_controller` is an AWS add-on; remove it: GKE provisions the load balancers itself"
        ],
        id="lbc-on-gcp",
    ),
    pytest.param(
        edit(
            AWS,
            "cluster:\n      create: true\n      addons:\n        keda: {mode: existing, namespace: keda}\n",
        ),
        [
            "bp.yaml:14:22: error: environments.stg.cluster.addons.keda.mode: an `existing` add-on needs an attached cluster: a cluster this blueprint creates runs no add-ons before its first deploy; remove `mode: existing` (inferplane installs it), or attach to the cluster with `existing: <cluster name>`"
        ],
        id="existing-on-created-cluster",
    ),
    pytest.param(
        gke(
            PROM
            % "'https://monitoring.googleapis.com/v1/projects/demo-prod/location/global/prometheus'"
        ),
        [
            "bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: Google Cloud Managed Service for Prometheus is not supported: it collects PodMonitoring objects, not ServiceMonitors, and its query API needs OAuth2 tokens; give a Prometheus run by the Prometheus Operator (such as kube-prometheus-stack) that answers queries without authentication, or use `mode: install`"
        ],
        id="google-managed-prometheus",
    ),
    pytest.param(
        eks(PROM % "'https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1/'"),
        [
            "bp.yaml:14:72: error: environments.stg.cluster.addons.prometheus.query_url: Amazon Managed Service for Prometheus is not supported: its query API needs SigV4-signed requests and it has no Prometheus Operator; give a Prometheus run by the Prometheus Operator (such as kube-prometheus-stack) that answers queries without authentication, or use `mode: install`"
        ],
        id="amazon-managed-prometheus",
    ),
    pytest.param(
        gke("        keda: {mode: existing, namespace: demo}\n"),
        [
            "bp.yaml:21:43: error: environments.prod.cluster.addons.keda.namespace: namespace 'demo' is the blueprint's own namespace, which it creates for its serving objects; give the namespace the add-on runs in; a blueprint and an add-on never share one"
        ],
        id="blueprint-namespace",
    ),
    pytest.param(
        gke("        gpu_operator: {mode: existing, namespace: gpu-operator}\n").replace(
            "    gpu: nvidia-l4\n",
            "    gpu: nvidia-l4\n    sharing: time_slicing\n    time_slices: 2\n",
        ),
        [
            "bp.yaml:21:30: error: environments.prod.cluster.addons.gpu_operator.mode: pool 'l4' shares its GPUs (time_slicing), which needs the device-plugin configuration of the GPU Operator inferplane installs; an existing GPU Operator keeps its own ClusterPolicy; use `mode: install` for the GPU Operator, or `sharing: exclusive` on pool 'l4'"
        ],
        id="time-slicing-with-existing-gpu-operator",
    ),
    pytest.param(
        cold(gke("        keda: {mode: existing, namespace: keda}\n")),
        [
            "bp.yaml:21:15: error: environments.prod.cluster.addons.keda: model 'chat' wakes on its own HTTP traffic through the KEDA HTTP add-on, and with an existing KEDA the blueprint must say whether the cluster runs it; add `keda_http_add_on: {mode: existing, namespace: <its namespace>, drain_s: <its interceptor.drainTimeout, in seconds>}`, or `keda_http_add_on: {mode: install}` to install it beside KEDA"
        ],
        id="http-add-on-unsaid",
    ),
    pytest.param(
        cold(
            gke(
                "        keda: {mode: existing, namespace: keda}\n        keda_http_add_on: {mode: install}\n"
            )
        ),
        [],
        id="http-add-on-installed-beside-existing-keda",
    ),
    pytest.param(
        gke(PROM % "'http://p.monitoring.svc:9090'")
        + "observability:\n  prometheus: {retention: 30d}\n  alerts:\n    receivers:\n"
        "      - {name: ml, webhook: {url: {from_pulumi_config: hookUrl}}}\n    route: {receiver: ml}\n",
        [
            "bp.yaml:40:15: error: observability.prometheus: `observability.prometheus` configures the Prometheus inferplane installs, and environment 'prod' uses an existing one; remove it: the existing Prometheus keeps its own retention and storage",
            "bp.yaml:43:7: error: observability.alerts.receivers: `alerts.receivers` configures the Alertmanager inferplane installs, and environment 'prod' uses an existing Prometheus; remove it and route the alerts in the existing Alertmanager: the blueprint's alerting rules still reach it",
            "bp.yaml:44:12: error: observability.alerts.route: `alerts.route` configures the Alertmanager inferplane installs, and environment 'prod' uses an existing Prometheus; remove it and route the alerts in the existing Alertmanager: the blueprint's alerting rules still reach it",
        ],
        id="observability-of-an-installed-prometheus",
    ),
    pytest.param(
        gke(PROM % "'https://prometheus.example.com:9090/api'"),
        [
            "bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: host 'prometheus.example.com' is not the DNS name of a Service in the cluster, and KEDA would scale the GPU Deployments on the answers of whatever server it names; give the in-cluster Service of the Prometheus as <service>.<namespace>.svc or <service>.<namespace>.svc.cluster.local, such as http://prometheus-operated.monitoring.svc:9090"
        ],
        id="query-url-outside-the-cluster",
    ),
    pytest.param(
        gke(PROM % "'http://prometheus-operated.observability.svc:9090'"),
        [
            "bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: 'http://prometheus-operated.observability.svc:9090' names Service 'prometheus-operated' in namespace 'observability', not in 'monitoring', the namespace this Prometheus runs in: KEDA would scale the GPU Deployments on the answers of whatever serves there; give the Service of the Prometheus in namespace 'monitoring', such as http://prometheus-operated.monitoring.svc:9090"
        ],
        id="query-url-in-a-namespace-other-than-the-prometheus-one",
    ),
    pytest.param(
        gke(PROM % "'http://prom.monitoring.svc:99999'"),
        [
            "bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: port 99999 of 'http://prom.monitoring.svc:99999' is not a TCP port; give the Service's port, from 1 to 65535, such as :9090"
        ],
        id="query-url-port-out-of-range",
    ),
    pytest.param(
        gke(PROM % "'http://prom.monitoring.svc:0'"),
        [
            "bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: port 0 of 'http://prom.monitoring.svc:0' is not a TCP port; give the Service's port, from 1 to 65535, such as :9090"
        ],
        id="query-url-port-zero",
    ),
    pytest.param(
        gke(PROM % "'http://10.0.0.12:9090'"),
        [
            "bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: host '10.0.0.12' is not the DNS name of a Service in the cluster, and KEDA would scale the GPU Deployments on the answers of whatever server it names; give the in-cluster Service of the Prometheus as <service>.<namespace>.svc or <service>.<namespace>.svc.cluster.local, such as http://prometheus-operated.monitoring.svc:9090"
        ],
        id="query-url-ip-address",
    ),
    pytest.param(
        gke(PROM % "'http://p:9090'"),
        [
            "bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: host 'p' is not the DNS name of a Service in the cluster, and KEDA would scale the GPU Deployments on the answers of whatever server it names; give the in-cluster Service of the Prometheus as <service>.<namespace>.svc or <service>.<namespace>.svc.cluster.local, such as http://prometheus-operated.monitoring.svc:9090"
        ],
        id="query-url-short-name",
    ),
    pytest.param(
        gke(PROM % "'http://prom.svc.evil.example:9090'"),
        [
            "bp.yaml:21:72: error: environments.prod.cluster.addons.prometheus.query_url: host 'prom.svc.evil.example' is not the DNS name of a Service in the cluster, and KEDA would scale the GPU Deployments on the answers of whatever server it names; give the in-cluster Service of the Prometheus as <service>.<namespace>.svc or <service>.<namespace>.svc.cluster.local, such as http://prometheus-operated.monitoring.svc:9090"
        ],
        id="query-url-svc-inside-an-outside-name",
    ),
    pytest.param(
        gke(PROM % "'https://kps-prometheus.monitoring.svc.cluster.local:9443/prometheus'"),
        [],
        id="query-url-full-service-name",
    ),
    pytest.param(
        gke("        keda: {mode: existing, namespace: kube-system}\n"),
        [
            "bp.yaml:21:43: error: environments.prod.cluster.addons.keda.namespace: namespace 'kube-system' belongs to Kubernetes, and the blueprint would place objects of its own in it; run the add-on in a namespace of its own (such as 'keda'); default and the kube- namespaces are refused"
        ],
        id="addon-in-kube-system",
    ),
    pytest.param(
        cold(
            gke(
                "        keda: {mode: existing, namespace: keda}\n        keda_http_add_on: {mode: existing, namespace: default, drain_s: 300}\n"
            )
        ),
        [
            "bp.yaml:22:55: error: environments.prod.cluster.addons.keda_http_add_on.namespace: namespace 'default' belongs to Kubernetes, and the blueprint would place objects of its own in it; run the add-on in a namespace of its own (such as 'keda'); default and the kube- namespaces are refused"
        ],
        id="http-add-on-in-default",
    ),
    pytest.param(
        gke(
            "        gpu_operator: {mode: existing, namespace: kube-public}\n"
            + PROM.replace("namespace: monitoring", "namespace: kube-node-lease")
            % "'http://p.kube-node-lease.svc:9090'"
        ),
        [
            "bp.yaml:21:51: error: environments.prod.cluster.addons.gpu_operator.namespace: namespace 'kube-public' belongs to Kubernetes, and the blueprint would place objects of its own in it; run the add-on in a namespace of its own (such as 'gpu-operator'); default and the kube- namespaces are refused",
            "bp.yaml:22:49: error: environments.prod.cluster.addons.prometheus.namespace: namespace 'kube-node-lease' belongs to Kubernetes, and the blueprint would place objects of its own in it; run the add-on in a namespace of its own (such as 'monitoring'); default and the kube- namespaces are refused",
        ],
        id="addons-in-kube-public-and-kube-node-lease",
    ),
    pytest.param(gke(PROM % "'http://kps-prometheus.monitoring.svc:9090'"), [], id="valid"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_addon_diagnostics(text: str, expected: list[str]) -> None:
    assert errors(text) == expected


def test_an_override_of_observability_is_blamed_in_the_override() -> None:
    text = edit(
        "    model_store: gs://models-usc1/\n",
        "    model_store: gs://models-usc1/\n    overrides:\n"
        "      observability:\n        prometheus: {retention: 30d}\n",
        gke(PROM % "'http://p.monitoring.svc:9090'"),
    )
    assert errors(text) == [
        "bp.yaml:20:21: error: environments.prod.overrides.observability.prometheus: `observability.prometheus` configures the Prometheus inferplane installs, and environment 'prod' uses an existing one; remove it: the existing Prometheus keeps its own retention and storage"
    ]


def test_defaults_install_everything_at_the_fixed_coordinates() -> None:
    addons = resolve(load_text(BASE, "bp.yaml"), "prod").cluster.addons
    assert addons == Addons()
    assert not any(
        getattr(addons, k).existing
        for k in ("gpu_operator", "keda", "keda_http_add_on", "prometheus")
    )
    assert addons.prometheus.query_url == naming.PROMETHEUS_URL
    assert dict(addons.prometheus.selector_labels) == {"release": naming.PROMETHEUS_RELEASE}
    assert addons.keda_http_add_on.namespace == naming.KEDA_NAMESPACE
    assert addons.existing_namespaces() == {}


def test_existing_coordinates_resolve() -> None:
    addons = resolve_addons(
        {
            "keda": {"mode": "existing", "namespace": "autoscaling"},
            "keda_http_add_on": {"mode": "install"},
            "prometheus": {
                "mode": "existing",
                "namespace": "obs",
                "query_url": "http://prom.obs.svc:9090",
                "selector_labels": {"team": "ml"},
            },
            "cluster_autoscaler": {"mode": "existing"},
        }
    )
    # An installed HTTP add-on goes beside the existing KEDA.
    assert addons.keda_http_add_on.namespace == "autoscaling"
    assert not addons.keda_http_add_on.existing
    assert addons.prometheus.existing and addons.prometheus.query_url == "http://prom.obs.svc:9090"
    assert dict(addons.prometheus.dashboard_label) == {"grafana_dashboard": "1"}
    assert addons.cluster_autoscaler.existing and not addons.aws_load_balancer_controller.existing
    assert addons.existing_namespaces() == {"keda": "autoscaling", "prometheus": "obs"}


def test_cluster_scoped_names_carry_the_blueprint() -> None:
    assert naming.cluster_scoped_name("support", "l4-spare") == "support-l4-spare"
    long = naming.cluster_scoped_name("b" * 40, "p" * 40)
    assert len(long) == 63 and long.startswith("b" * 40)
    assert long != naming.cluster_scoped_name("b" * 40, "p" * 39 + "q")


def test_two_environments_of_one_blueprint_on_one_cluster() -> None:
    text = edit(
        "environments:\n",
        "environments:\n  prod2:\n    cloud: gcp\n    project: demo-prod\n    region: us-central1\n"
        "    zones: [us-central1-a]\n    model_store: gs://models-usc1/\n"
        "    cluster: {existing: prod-gke}\n",
    )
    assert errors(text) == [
        "bp.yaml:25:25: error: environments.prod.cluster.existing: environment 'prod2' attaches to cluster 'prod-gke' too, and both would create the namespace 'demo' and the objects in it; attach each environment of a blueprint to its own cluster; two blueprints (with different names) may share one"
    ]
    # Another project's cluster of the same name is another cluster.
    assert (
        errors(text.replace("project: demo-prod\n    region", "project: demo-other\n    region", 1))
        == []
    )


@pytest.mark.parametrize("label", ["inferplane.dev/blueprint", "app.kubernetes.io/part-of"])
def test_selector_labels_may_not_be_inferplane_s_own(label: str) -> None:
    text = gke(
        "        prometheus:\n"
        "          mode: existing\n"
        "          namespace: monitoring\n"
        "          query_url: http://prometheus-operated.monitoring.svc:9090\n"
        f"          selector_labels: {{{label}: x}}\n"
    )
    assert [d.format() for d in check(load_text(text, "bp.yaml"))] == [
        f"bp.yaml:25:{31 + len(label)}: error: environments.prod.cluster.addons.prometheus."
        f"selector_labels.{label}: label {label!r} is one inferplane sets itself on the "
        "ServiceMonitors and PrometheusRules; as a selector label it would overwrite that "
        "value, and whatever selects by it would no longer find the blueprint's objects; give "
        "the label the existing Prometheus selects by (such as `release: "
        "kube-prometheus-stack`), not an inferplane.dev/ or app.kubernetes.io/ label"
    ]


def test_argo_rollouts_is_used_only_where_the_environment_names_it() -> None:
    assert not resolve(load_text(BASE, "bp.yaml"), "prod").cluster.addons.argo_rollouts.enabled
    installed = resolve_addons({"argo_rollouts": {}}).argo_rollouts
    assert (installed.enabled, installed.existing) == (True, False)
    assert installed.namespace == naming.ARGO_ROLLOUTS_NAMESPACE == "argo-rollouts"
    assert installed.instance_id is None
    existing = resolve_addons(
        {"argo_rollouts": {"mode": "existing", "namespace": "rollouts", "instance_id": "ml"}}
    ).argo_rollouts
    assert (existing.enabled, existing.existing) == (True, True)
    assert (existing.namespace, existing.instance_id) == ("rollouts", "ml")
    assert errors(gke("        argo_rollouts: {}\n")) == []
    assert errors(gke("        argo_rollouts: {mode: existing, namespace: rollouts}\n")) == []


ARGO_CASES = [
    pytest.param(
        gke("        argo_rollouts: {mode: existing}\n"),
        [
            "bp.yaml:21:9: error: environments.prod.cluster.addons.argo_rollouts: an `existing` add-on needs `namespace`; add `namespace: <the namespace it runs in>`"
        ],
        id="argo-namespace-missing",
    ),
    pytest.param(
        gke("        argo_rollouts: {instance_id: ml}\n"),
        [
            "bp.yaml:21:25: error: environments.prod.cluster.addons.argo_rollouts.instance_id: `instance_id` describes an `existing` controller; add `mode: existing`, or remove it: the controller inferplane installs takes no instance id"
        ],
        id="argo-instance-id-with-install",
    ),
    pytest.param(
        eks("        argo_rollouts: {mode: existing, namespace: argo}\n").replace(
            "existing: shared-eks", "create: true"
        ),
        [
            "bp.yaml:14:31: error: environments.stg.cluster.addons.argo_rollouts.mode: an `existing` add-on needs an attached cluster: a cluster this blueprint creates runs no add-ons before its first deploy; remove `mode: existing` (inferplane installs it), or attach to the cluster with `existing: <cluster name>`"
        ],
        id="argo-existing-on-a-created-cluster",
    ),
    pytest.param(
        gke("        argo_rollouts: {mode: existing, namespace: demo}\n"),
        [
            "bp.yaml:21:52: error: environments.prod.cluster.addons.argo_rollouts.namespace: namespace 'demo' is the blueprint's own namespace, which it creates for its serving objects; give the namespace the add-on runs in; a blueprint and an add-on never share one"
        ],
        id="argo-in-the-blueprint-namespace",
    ),
    pytest.param(
        gke("        argo_rollouts: {mode: existing, namespace: kube-system}\n"),
        [],
        id="argo-in-kube-system",
    ),
]


@pytest.mark.parametrize(("text", "expected"), ARGO_CASES)
def test_argo_rollouts_diagnostics(text: str, expected: list[str]) -> None:
    assert errors(text) == expected
