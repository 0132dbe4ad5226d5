"""Cluster add-ons: Helm values checked against each chart's own values.yaml, the values
that matter asserted exactly, the releases and their dependencies, the EKS controllers'
IAM, and the GKE prerequisites of the GPU Operator."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml
from cloud_fixtures import attached, cloud_recording, parsed, with_pool

from inferplane.app.offline import Recording
from inferplane.blueprint import defaults, naming
from inferplane.blueprint import releases as releases_table
from inferplane.blueprint.addons import resolve_addons
from inferplane.blueprint.model import Environment, Observability
from inferplane.blueprint.upstream import gke_drivers
from inferplane.components import addon_values, argo_rollouts, stack_args
from inferplane.components.addons import EBS_STORAGE_CLASS, GKE_DRIVER_INSTALLER

REFERENCE = Path(
    os.environ.get("INFERPLANE_REFERENCE", Path(__file__).resolve().parents[3] / "shared/reference")
)
CHART_VALUES = {
    "gpu-operator": REFERENCE / "gpu-operator/helm/values.yaml",
    "keda": REFERENCE / "keda/helm/values.yaml",
    "keda-add-ons-http": REFERENCE / "keda-http-add-on-0.15.0/values.yaml",
    "kube-prometheus-stack": REFERENCE / "kube-prometheus-stack/values.yaml",
}
RELEASE = "kubernetes:helm.sh/v3:Release"
CRD_PATCH = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch"


def unknown_keys(values: dict[str, Any], chart: Any, path: str = "") -> list[str]:
    """Key paths of `values` the chart does not have. A chart key whose default is an
    empty map (`additionalLabels: {}`, `data: {}`) or null is free-form below it."""
    problems = []
    for key, value in values.items():
        where = f"{path}.{key}" if path else key
        if not isinstance(chart, dict) or key not in chart:
            problems.append(where)
            continue
        default = chart[key]
        if isinstance(value, dict) and isinstance(default, dict) and default:
            problems += unknown_keys(value, default, where)
        elif isinstance(default, dict) and default and not isinstance(value, dict):
            problems.append(f"{where} (a map in the chart)")
        elif isinstance(default, list) and not isinstance(value, list):
            problems.append(f"{where} (a list in the chart)")
    return problems


def chart(name: str) -> dict[str, Any]:
    path = CHART_VALUES[name]
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"reference chart values are required under CI: {path}")
        pytest.skip(f"reference chart values not found at {path}")
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def time_sliced(env: Environment) -> Environment:
    return with_pool(env, "l4", sharing="time_slicing", time_slices=4)


def without_mig(env: Environment) -> Environment:
    return with_pool(env, "h100", sharing="exclusive", mig_profile=None)


def gpu_values(env: Environment) -> dict[str, Any]:
    """The GPU Operator values of `env`, through the stack's mapping."""
    return addon_values.gpu_operator_values(
        env.cloud, stack_args.mig_enabled(env), stack_args.time_slices_by_pool(env)
    )


def plugin_config(env: Environment) -> dict[str, str] | None:
    return addon_values.device_plugin_config(
        stack_args.time_slices_by_pool(env), stack_args.mig_enabled(env)
    )


def prometheus_values(env: Environment, storage_class: str | None = None) -> dict[str, Any]:
    obs = env.observability
    return addon_values.kube_prometheus_stack_values(
        retention=obs.prometheus_retention,
        storage_gib=obs.prometheus_storage_gib,
        grafana_enabled=obs.grafana_enabled,
        alerts_enabled=obs.alerts_enabled,
        storage_class=storage_class,
    )


# --- values against the charts ---------------------------------------------------------
def test_the_walker_finds_unknown_and_misshapen_keys() -> None:
    ref = {"a": {"b": 1, "free": {}}, "l": []}
    assert unknown_keys({"a": {"b": 2, "free": {"x": {"y": 1}}}, "l": [1]}, ref) == []
    assert unknown_keys({"a": {"c": 1}, "z": 1, "l": {}}, ref) == [
        "a.c",
        "z",
        "l (a list in the chart)",
    ]


@pytest.mark.parametrize("variant", [lambda e: e, time_sliced, without_mig])
def test_gpu_operator_values_exist_in_the_chart(
    staging: Environment, prod: Environment, variant: Any
) -> None:
    for env in (staging, prod):
        values = gpu_values(variant(env))
        assert unknown_keys(values, chart("gpu-operator")) == []


def test_keda_and_prometheus_values_exist_in_the_charts(
    staging: Environment, prod: Environment
) -> None:
    for env in (staging, prod):
        assert unknown_keys(addon_values.keda_values(), chart("keda")) == []
        values = prometheus_values(env, EBS_STORAGE_CLASS)
        assert unknown_keys(values, chart("kube-prometheus-stack")) == []


def test_keda_http_add_on_values_exist_in_the_chart() -> None:
    values = addon_values.keda_http_add_on_values(3630, zones=3)
    assert unknown_keys(values, chart("keda-add-ons-http")) == []
    interceptor = values["interceptor"]
    # The model load balancers' target port, and a grace period that covers the drain.
    assert interceptor["proxy"]["port"] == naming.KEDA_HTTP_INTERCEPTOR_PORT == 8080
    assert interceptor["drainTimeout"] == "3630s" and interceptor["shutdownDelay"] == "5s"
    # The chart: terminationGracePeriodSeconds "Must be at least shutdownDelay + drainTimeout".
    assert interceptor["terminationGracePeriodSeconds"] == 5 + 3630 + 10


def test_an_interceptor_in_every_zone_sized_for_streams() -> None:
    """Each zone's load balancer targets reach an interceptor in that zone; the chart's
    64Mi limit would OOM-kill a replica (and every stream on it) under a burst."""
    interceptor = addon_values.keda_http_add_on_values(300, zones=4)["interceptor"]
    assert interceptor["replicas"] == {"min": 4}  # one per zone, above the chart's 3
    assert addon_values.keda_http_add_on_values(300, zones=2)["interceptor"]["replicas"] == {
        "min": 3
    }
    assert interceptor["topologySpreadConstraints"] == [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "nodeTaintsPolicy": "Honor",
            "matchLabelKeys": ["pod-template-hash"],
            "labelSelector": {
                "matchLabels": {
                    "app.kubernetes.io/component": "interceptor",
                    "app.kubernetes.io/name": "http-add-on",
                    "app.kubernetes.io/instance": "keda-add-ons-http",
                }
            },
        }
    ]
    assert interceptor["resources"] == {
        "requests": {"cpu": "500m", "memory": "256Mi"},
        "limits": {"cpu": "2", "memory": "1Gi"},
    }
    # The chart's own, which these replace.
    assert chart("keda-add-ons-http")["interceptor"]["resources"]["limits"] == {
        "cpu": 0.5,
        "memory": "64Mi",
    }


def test_keda_http_add_on_pin_matches_the_reference_chart() -> None:
    path = REFERENCE / "keda-http-add-on-0.15.0/Chart.yaml"
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"reference chart not found at {path} (CI has shared/reference)")
        pytest.skip(f"reference chart not found at {path}")
    meta = yaml.safe_load(path.read_text())
    assert meta["name"] == "keda-add-ons-http" == naming.KEDA_HTTP_RELEASE
    assert meta["version"] == defaults.VERSIONS["keda_http_add_on"]


# --- GPU Operator --------------------------------------------------------------------------
def test_gpu_operator_on_eks_uses_the_ami_driver_and_toolkit(staging: Environment) -> None:
    values = gpu_values(staging)
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {"enabled": False}
    assert values["devicePlugin"]["enabled"] is True
    assert "hostPaths" not in values
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values[
        "daemonsets"
    ]["tolerations"]


def test_gpu_operator_on_gke_uses_googles_driver_paths(prod: Environment) -> None:
    values = gpu_values(prod)
    assert values["driver"] == {"enabled": False}
    assert values["hostPaths"] == {"driverInstallDir": "/home/kubernetes/bin/nvidia"}
    assert values["toolkit"] == {
        "enabled": True,
        "installDir": "/home/kubernetes/bin/nvidia",
        "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}],
    }
    assert values["cdi"] == {"enabled": True}


def test_dcgm_exporter_is_scraped_with_workload_labels(staging: Environment) -> None:
    monitor = gpu_values(staging)["dcgmExporter"]["serviceMonitor"]
    assert monitor == {
        "enabled": True,
        "honorLabels": True,
        "additionalLabels": {"release": naming.PROMETHEUS_RELEASE},
    }


def test_mig_pools_switch_the_operator_to_mixed_strategy(staging: Environment) -> None:
    values = gpu_values(staging)
    assert values["mig"] == {"strategy": "mixed"}
    assert values["migManager"] == {"enabled": True}
    plain = gpu_values(without_mig(staging))
    assert "mig" not in plain
    assert "migManager" not in plain


def test_no_device_plugin_config_without_time_slicing(staging: Environment) -> None:
    assert plugin_config(staging) is None
    assert "config" not in gpu_values(staging)["devicePlugin"]


def test_time_slicing_pools_get_their_own_device_plugin_config(staging: Environment) -> None:
    env = time_sliced(staging)
    config = gpu_values(env)["devicePlugin"]["config"]
    assert config["create"] is True
    assert config["name"] == addon_values.DEVICE_PLUGIN_CONFIGMAP
    assert config["default"] == "default"
    assert set(config["data"]) == {"default", "l4"}
    l4 = yaml.safe_load(config["data"]["l4"])
    assert l4 == {
        "version": "v1",
        "flags": {"migStrategy": "mixed"},
        "sharing": {
            "timeSlicing": {
                "renameByDefault": False,
                "failRequestsGreaterThanOne": True,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
            }
        },
    }
    default = yaml.safe_load(config["data"]["default"])
    assert default == {"version": "v1", "flags": {"migStrategy": "mixed"}}
    no_mig = yaml.safe_load(plugin_config(without_mig(env))["l4"])  # type: ignore[index]
    assert no_mig["flags"] == {"migStrategy": "none"}


# --- kube-prometheus-stack, KEDA -----------------------------------------------------------
def test_prometheus_retention_storage_and_dashboards(staging: Environment) -> None:
    values = prometheus_values(staging, EBS_STORAGE_CLASS)
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "15d"
    assert spec["storageSpec"]["volumeClaimTemplate"]["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "50Gi"}},
        "storageClassName": EBS_STORAGE_CLASS,
    }
    assert values["grafana"]["enabled"] is True
    assert values["grafana"]["sidecar"]["dashboards"] == {
        "enabled": True,
        "label": "grafana_dashboard",
        "labelValue": "1",
        "searchNamespace": "ALL",
    }
    assert values["alertmanager"] == {"enabled": True}


def test_managed_control_plane_scrapes_and_their_rules_are_off(
    staging: Environment, prod: Environment
) -> None:
    """EKS and GKE run the controller manager, scheduler and etcd out of the cluster's reach,
    and kube-proxy serves metrics on 127.0.0.1:10249 (EKS; aws/containers-roadmap#657) or
    does not run (GKE Dataplane V2): the chart's scrapes (default on) and their rule groups
    would only raise "...Down" alerts. Checked against the chart's values.yaml."""
    ref = chart("kube-prometheus-stack")
    components = ("kubeControllerManager", "kubeScheduler", "kubeEtcd", "kubeProxy")
    rules = (
        "etcd",
        "kubeControllerManager",
        "kubeSchedulerAlerting",
        "kubeSchedulerRecording",
        "kubeProxy",
    )
    # The chart turns every one of them on by default ...
    assert all(ref[c]["enabled"] is True for c in components)
    assert all(ref["defaultRules"]["rules"][r] is True for r in rules)
    for env in (staging, prod):
        # ... and the values of the deployed release turn them off, on both clouds.
        values = releases(cloud_recording(env))[naming.PROMETHEUS_RELEASE].inputs["values"]
        assert unknown_keys(values, ref) == []
        assert all(values[c] == {"enabled": False} for c in components)
        assert values["defaultRules"] == {"rules": dict.fromkeys(rules, False)}
        # Rule groups of what the cluster does expose stay on (the chart defaults).
        assert "kubelet" not in values["defaultRules"]["rules"]


def test_observability_settings_reach_the_values(staging: Environment) -> None:
    import dataclasses

    env = dataclasses.replace(
        staging,
        observability=Observability(
            prometheus_retention="30d",
            prometheus_storage_gib=200,
            grafana_enabled=False,
            alerts_enabled=False,
        ),
    )
    values = prometheus_values(env)
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "30d"
    claim = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert claim["resources"]["requests"]["storage"] == "200Gi"
    assert "storageClassName" not in claim
    assert values["grafana"]["enabled"] is False
    assert values["alertmanager"] == {"enabled": False}


def test_keda_metrics_are_scraped(staging: Environment) -> None:
    values = addon_values.keda_values()
    for part in ("operator", "metricServer"):
        assert values["prometheus"][part]["enabled"] is True
        assert values["prometheus"][part]["serviceMonitor"] == {
            "enabled": True,
            "additionalLabels": {"release": naming.PROMETHEUS_RELEASE},
        }


# --- releases as registered ------------------------------------------------------------------
def releases(rec: Recording) -> dict[str, Any]:
    return {r.inputs["name"]: r for r in rec.of_type(RELEASE)}


def test_releases_are_pinned_and_use_the_cluster_provider(staging: Environment) -> None:
    rec = cloud_recording(staging)
    found = releases(rec)
    expected = {
        naming.GPU_OPERATOR_RELEASE: ("gpu-operator", "v26.7.0", naming.GPU_OPERATOR_NAMESPACE),
        naming.KEDA_RELEASE: ("keda", "2.20.2", naming.KEDA_NAMESPACE),
        naming.PROMETHEUS_RELEASE: ("kube-prometheus-stack", "88.5.3", "monitoring"),
        "aws-load-balancer-controller": ("aws-load-balancer-controller", "1.13.4", "kube-system"),
        "cluster-autoscaler": ("cluster-autoscaler", "9.50.1", "kube-system"),
    }
    assert set(found) == set(expected)
    provider = rec.of_type("pulumi:providers:kubernetes")[0].urn
    for release, (chart_name, version, namespace) in expected.items():
        r = found[release]
        assert r.inputs["chart"] == chart_name
        assert r.inputs["version"] == version
        assert r.inputs["namespace"] == namespace
        assert r.inputs["repositoryOpts"]["repo"] == defaults.CHART_REPOSITORIES[chart_name]
        assert r.inputs.get("createNamespace", False) is False
        assert r.provider == provider


def test_releases_carry_the_values_functions_output(staging: Environment) -> None:
    found = releases(cloud_recording(staging))
    assert found["gpu-operator"].inputs["values"] == gpu_values(staging)
    assert found["kube-prometheus-stack"].inputs["values"] == (
        prometheus_values(staging, EBS_STORAGE_CLASS)
    )


def test_http_add_on_only_where_a_model_wakes_on_traffic(
    staging: Environment, prod: Environment
) -> None:
    # The reference keeps chat warm; at zero it serves HTTP only, so it wakes through the add-on.
    chat = staging.models["chat"]
    cold = dataclasses.replace(chat, replicas=dataclasses.replace(chat.replicas, min=0))
    found = releases(
        cloud_recording(dataclasses.replace(staging, models={**staging.models, "chat": cold}))
    )
    http = found[naming.KEDA_HTTP_RELEASE]
    # chat's max_request_s (60) + 30 s is below the 300 s floor; staging has two zones.
    assert http.inputs["values"] == addon_values.keda_http_add_on_values(300, zones=2)
    longer = dataclasses.replace(cold, max_request_s=1800)
    values = releases(
        cloud_recording(dataclasses.replace(staging, models={**staging.models, "chat": longer}))
    )[naming.KEDA_HTTP_RELEASE].inputs["values"]
    assert values["interceptor"]["drainTimeout"] == "1830s"  # the longest request + 30 s
    assert values["interceptor"]["terminationGracePeriodSeconds"] == 1845
    assert found[naming.KEDA_RELEASE].urn in http.depends_on
    # Every HTTP model warm (chat min 2; nightly-embed wakes on its schedule): no add-on.
    assert naming.KEDA_HTTP_RELEASE not in releases(cloud_recording(prod))
    assert naming.KEDA_HTTP_RELEASE not in releases(cloud_recording(staging))


def test_add_ons_install_after_their_namespaces_and_prometheus(staging: Environment) -> None:
    rec = cloud_recording(staging)
    found = releases(rec)
    prometheus = found[naming.PROMETHEUS_RELEASE].urn
    namespaces = {
        r.inputs["metadata"]["name"]: r for r in rec.of_type("kubernetes:core/v1:Namespace")
    }
    assert namespaces["gpu-operator"].urn in found["gpu-operator"].depends_on
    assert prometheus in found["gpu-operator"].depends_on
    assert prometheus in found["keda"].depends_on
    assert namespaces["monitoring"].urn in found[naming.PROMETHEUS_RELEASE].depends_on
    for privileged in ("gpu-operator", "monitoring"):
        labels = namespaces[privileged].inputs["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "privileged"


def test_new_eks_cluster_gets_an_encrypted_gp3_class_for_prometheus(staging: Environment) -> None:
    rec = cloud_recording(staging)
    (sc,) = rec.of_type("kubernetes:storage.k8s.io/v1:StorageClass")
    assert sc.inputs["metadata"]["name"] == EBS_STORAGE_CLASS
    assert sc.inputs["provisioner"] == "ebs.csi.aws.com"
    assert sc.inputs["parameters"] == {"type": "gp3", "encrypted": "true"}
    assert sc.inputs["volumeBindingMode"] == "WaitForFirstConsumer"
    assert sc.urn in releases(rec)[naming.PROMETHEUS_RELEASE].depends_on


def test_attached_clusters_keep_their_default_storage_class(staging: Environment) -> None:
    rec = cloud_recording(attached(staging, "shared-eks"))
    assert rec.of_type("kubernetes:storage.k8s.io/v1:StorageClass") == []
    spec = releases(rec)[naming.PROMETHEUS_RELEASE].inputs["values"]["prometheus"]
    claim = spec["prometheusSpec"]["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert "storageClassName" not in claim


# --- EKS controllers -------------------------------------------------------------------------
def test_eks_controllers_use_irsa_roles_for_their_service_accounts(staging: Environment) -> None:
    rec = cloud_recording(staging)
    found = releases(rec)
    issuer = rec.outputs["oidc_issuer"]
    roles = {r.name: r for r in rec.of_type("aws:iam/role:Role")}
    for release, sa in (
        ("aws-load-balancer-controller", "aws-load-balancer-controller"),
        ("cluster-autoscaler", "cluster-autoscaler"),
    ):
        role = roles[f"support-assistant-staging-{release}"]
        (statement,) = parsed(role, "assumeRolePolicy")["Statement"]
        assert statement["Principal"] == {"Federated": rec.outputs["oidc_provider_arn"]}
        assert statement["Condition"]["StringEquals"] == {
            f"{issuer}:sub": f"system:serviceaccount:kube-system:{sa}",
            f"{issuer}:aud": "sts.amazonaws.com",
        }
    lbc = found["aws-load-balancer-controller"].inputs["values"]
    assert lbc["clusterName"] == "support-assistant-staging"
    assert lbc["region"] == "us-east-1"
    assert lbc["vpcId"].startswith("vpc-")
    assert lbc["serviceAccount"]["name"] == "aws-load-balancer-controller"
    assert lbc["serviceAccount"]["annotations"]["eks.amazonaws.com/role-arn"].startswith(
        "arn:aws:iam::"
    )
    ca = found["cluster-autoscaler"].inputs["values"]
    assert ca["autoDiscovery"] == {"clusterName": "support-assistant-staging"}
    assert ca["awsRegion"] == "us-east-1"
    assert ca["image"] == {"tag": "v1.33.5"}
    assert ca["extraArgs"] == {
        "expander": "least-waste",
        "balance-similar-node-groups": True,
        "balancing-ignore-label": naming.ZONE_LABEL,
        "skip-nodes-with-local-storage": False,
    }


def test_gke_has_no_aws_controllers(prod: Environment) -> None:
    rec = cloud_recording(prod)
    assert set(releases(rec)) == {"gpu-operator", "keda", "kube-prometheus-stack"}
    assert not [r for r in rec if r.type.startswith("aws:")]


def test_autoscaler_image_follows_the_kubernetes_minor() -> None:
    assert addon_values.cluster_autoscaler_image_tag("1.33") == "v1.33.5"
    assert addon_values.cluster_autoscaler_image_tag("1.34.2") == "v1.34.4"
    assert addon_values.cluster_autoscaler_image_tag("1.31") == "v1.31.0"


# --- GKE prerequisites -------------------------------------------------------------------------
def test_gke_allows_critical_pods_in_the_operator_namespace(prod: Environment) -> None:
    rec = cloud_recording(prod)
    (quota,) = rec.of_type("kubernetes:core/v1:ResourceQuota")
    assert quota.inputs["metadata"]["namespace"] == naming.GPU_OPERATOR_NAMESPACE
    (expression,) = quota.inputs["spec"]["scopeSelector"]["matchExpressions"]
    assert expression == {
        "scopeName": "PriorityClass",
        "operator": "In",
        "values": ["system-node-critical", "system-cluster-critical"],
    }
    assert quota.urn in releases(rec)["gpu-operator"].depends_on


def test_gke_driver_installer_runs_only_on_opted_out_gpu_nodes(prod: Environment) -> None:
    rec = cloud_recording(prod)
    (ds,) = rec.of_type("kubernetes:apps/v1:DaemonSet")
    assert ds.inputs["metadata"] == {
        "name": GKE_DRIVER_INSTALLER,
        "namespace": "kube-system",
        "labels": {"k8s-app": GKE_DRIVER_INSTALLER},
    }
    pod = ds.inputs["spec"]["template"]["spec"]
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert term["matchExpressions"] == [
        {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
        {"key": "gke-no-default-nvidia-gpu-device-plugin", "operator": "In", "values": ["true"]},
        # Nodes of a blueprint whose own installer serves them (an existing GPU Operator).
        {"key": naming.DRIVER_INSTALLER_LABEL, "operator": "DoesNotExist"},
    ]
    (installer,) = pod["initContainers"]
    assert installer["image"] == "cos-nvidia-installer:fixed"
    assert installer["imagePullPolicy"] == "Never"
    # The models run vLLM v0.33.0 and Triton 26.02, CUDA 13 builds that need R580: above
    # the COS build's default driver seen on GKE (R535), so the installer takes the build's
    # latest (cos_gpu_installer internal/commands/install.go, getDriverVersion).
    assert installer["command"] == ["/cos-gpu-installer", "install", "--version=latest"]
    env = {e["name"]: e["value"] for e in installer["env"]}
    assert env["NVIDIA_INSTALL_DIR_HOST"] == addon_values.GKE_NVIDIA_DIR
    assert {
        "name": "nvidia-install-dir-host",
        "hostPath": {"path": "/home/kubernetes/bin/nvidia"},
    } in pod["volumes"]
    assert ds.urn in releases(rec)["gpu-operator"].depends_on


def test_gke_nodes_keep_the_default_driver_while_it_runs_every_model(
    prod: Environment,
) -> None:
    # Triton 25.03 (CUDA 12.8) runs on R535 through its forward-compatibility package.
    versions = dataclasses.replace(prod.versions, triton="25.03")
    models = {n: m for n, m in prod.models.items() if m.server == "triton" and m.image is None}
    assert models
    env = dataclasses.replace(prod, versions=versions, models=MappingProxyType(models))
    assert gke_drivers.installer_version(env) == "default"
    (ds,) = cloud_recording(env).of_type("kubernetes:apps/v1:DaemonSet")
    assert ds.inputs["metadata"]["name"] == GKE_DRIVER_INSTALLER
    (installer,) = ds.inputs["spec"]["template"]["spec"]["initContainers"]
    assert installer["command"] == ["/cos-gpu-installer", "install"]


def test_eks_has_no_gke_prerequisites(staging: Environment) -> None:
    rec = cloud_recording(staging)
    assert rec.of_type("kubernetes:core/v1:ResourceQuota") == []
    assert rec.of_type("kubernetes:apps/v1:DaemonSet") == []


# --- add-ons the cluster already runs ----------------------------------------------------------
def with_addons(env: Environment, raw: dict[str, Any]) -> Environment:
    cluster = dataclasses.replace(env.cluster, addons=resolve_addons(raw))
    return dataclasses.replace(env, cluster=cluster)


EVERY_ADDON_EXISTING = {
    "gpu_operator": {"mode": "existing", "namespace": "nvidia"},
    "keda": {"mode": "existing", "namespace": "autoscaling"},
    "prometheus": {
        "mode": "existing",
        "namespace": "observability",
        "query_url": "http://prom.observability.svc:9090",
        "selector_labels": {"prometheus": "platform"},
    },
}


def test_existing_add_ons_on_gke_install_nothing(prod: Environment) -> None:
    """No release, no add-on namespace, and on GKE neither the GPU Operator's critical-pods
    quota nor the cluster's COS driver installer that come with an installed GPU Operator;
    only the blueprint's own nodes' driver installer (next test)."""
    rec = cloud_recording(with_addons(prod, EVERY_ADDON_EXISTING))
    kinds = {r.type.rsplit(":", 1)[-1] for r in rec.resources if r.type.startswith("kubernetes:")}
    assert not kinds & {"Release", "Namespace", "ResourceQuota", "Secret"}
    assert rec.of_type(RELEASE) == []
    (ds,) = rec.of_type("kubernetes:apps/v1:DaemonSet")
    assert ds.inputs["metadata"]["name"] != GKE_DRIVER_INSTALLER


def test_an_existing_gpu_operator_on_gke_leaves_the_blueprint_s_nodes_their_installer(
    prod: Environment,
) -> None:
    """An existing GPU Operator on GKE runs with its driver disabled and GKE's own install
    is off on these nodes: the blueprint installs Google's installer for its own nodes,
    which carry the label it selects (and the cluster's installer skips)."""
    env = with_addons(prod, {"gpu_operator": {"mode": "existing", "namespace": "nvidia"}})
    rec = cloud_recording(env)
    (ds,) = rec.of_type("kubernetes:apps/v1:DaemonSet")
    name = "support-assistant-nvidia-driver-installer"
    assert ds.inputs["metadata"] == {
        "name": name,
        "namespace": "kube-system",
        "labels": {"k8s-app": name},
    }
    pod = ds.inputs["spec"]["template"]["spec"]
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert term["matchExpressions"] == [
        {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
        {"key": "gke-no-default-nvidia-gpu-device-plugin", "operator": "In", "values": ["true"]},
        {
            "key": naming.DRIVER_INSTALLER_LABEL,
            "operator": "In",
            "values": ["support-assistant"],
        },
    ]
    (installer,) = pod["initContainers"]
    assert installer["command"] == ["/cos-gpu-installer", "install", "--version=latest"]
    pools = rec.of_type("gcp:container/nodePool:NodePool")
    gpu_pools = [p for p in pools if "guestAccelerators" in p.inputs["nodeConfig"]]
    assert {p.name for p in gpu_pools} == {
        "support-assistant-prod-h100-a",
        "support-assistant-prod-l4-a",
        "support-assistant-prod-l4-b",
    }
    for pool in gpu_pools:
        labels = pool.inputs["nodeConfig"]["labels"]
        assert labels[naming.DRIVER_INSTALLER_LABEL] == "support-assistant"
        assert labels["gke-no-default-nvidia-gpu-device-plugin"] == "true"


def test_an_installed_gpu_operator_leaves_gke_nodes_unlabelled(prod: Environment) -> None:
    rec = cloud_recording(prod)
    for pool in rec.of_type("gcp:container/nodePool:NodePool"):
        assert naming.DRIVER_INSTALLER_LABEL not in pool.inputs["nodeConfig"]["labels"]


def test_existing_add_ons_on_eks_create_no_controller_roles(staging: Environment) -> None:
    every = {
        **EVERY_ADDON_EXISTING,
        "aws_load_balancer_controller": {"mode": "existing"},
        "cluster_autoscaler": {"mode": "existing"},
    }
    rec = cloud_recording(with_addons(attached(staging, "shared-eks"), every))
    assert rec.of_type(RELEASE) == []
    roles = [r.name for r in rec.of_type("aws:iam/role:Role")]
    assert not [
        n for n in roles if n.endswith(("-cluster-autoscaler", "-load-balancer-controller"))
    ]
    assert not [r for r in rec.resources if r.type.endswith(":StorageClass")]


def test_an_existing_autoscaler_leaves_the_load_balancer_controller(staging: Environment) -> None:
    """The cluster's own Cluster Autoscaler: only the installed one and its role go."""
    env = with_addons(attached(staging, "shared-eks"), {"cluster_autoscaler": {"mode": "existing"}})
    rec = cloud_recording(env)
    assert sorted(releases(rec)) == [
        "aws-load-balancer-controller",
        naming.GPU_OPERATOR_RELEASE,
        naming.KEDA_RELEASE,
        naming.PROMETHEUS_RELEASE,
    ]
    roles = [r.name for r in rec.of_type("aws:iam/role:Role")]
    assert [n for n in roles if n.endswith("-aws-load-balancer-controller")]
    assert not [n for n in roles if n.endswith("-cluster-autoscaler")]


def test_the_http_add_on_installs_beside_an_existing_keda(staging: Environment) -> None:
    chat = staging.models["chat"]
    cold = dataclasses.replace(chat, replicas=dataclasses.replace(chat.replicas, min=0))
    env = dataclasses.replace(staging, models={**staging.models, "chat": cold})
    env = with_addons(
        attached(env, "shared-eks"),
        {"keda": {"mode": "existing", "namespace": "autoscaling"}, "keda_http_add_on": {}},
    )
    found = releases(cloud_recording(env))
    assert naming.KEDA_RELEASE not in found
    assert found[naming.KEDA_HTTP_RELEASE].inputs["namespace"] == "autoscaling"


# --- Argo Rollouts -------------------------------------------------------------------------
ARGO_ROLLOUTS_CHART_DEFAULTS = {
    "installCRDs": True,
    "controller.image.tag": "",
    "controller.replicas": 2,
    "controller.pdb.enabled": False,
    "controller.pdb.minAvailable": None,
    "controller.metrics.enabled": False,
    "controller.metrics.serviceMonitor.enabled": False,
    "controller.metrics.serviceMonitor.additionalLabels": {},
    "controller.resources": {},
    "providerRBAC.enabled": True,
    "dashboard.enabled": False,
}
"""The defaults of every key `argo_rollouts_values` sets, as argo-helm's
``charts/argo-rollouts/values.yaml`` has them at the tag ``argo-rollouts-2.41.0``: each key
set is one the chart reads."""


def leaf_paths(values: dict[str, Any], path: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        where = f"{path}.{key}" if path else key
        if isinstance(value, dict) and where not in ARGO_ROLLOUTS_CHART_DEFAULTS:
            out.update(leaf_paths(value, where))
        else:
            out[where] = value
    return out


def test_argo_rollouts_values_set_only_chart_keys_and_run_the_pinned_controller() -> None:
    values = addon_values.argo_rollouts_values()
    assert set(leaf_paths(values)) <= set(ARGO_ROLLOUTS_CHART_DEFAULTS)
    assert values == {
        "installCRDs": False,
        "controller": {
            "image": {"tag": "v1.10.1"},
            "pdb": {"enabled": True, "minAvailable": 1},
            "metrics": {
                "enabled": True,
                "serviceMonitor": {
                    "enabled": True,
                    "additionalLabels": {"release": "kube-prometheus-stack"},
                },
            },
            "resources": {"limits": {"ephemeral-storage": "1Gi"}},
        },
        "providerRBAC": {"enabled": False},
        "dashboard": {"enabled": False},
    }
    labels = addon_values.argo_rollouts_values({"prometheus": "platform"})
    monitor = labels["controller"]["metrics"]["serviceMonitor"]
    assert monitor["additionalLabels"] == {"prometheus": "platform"}
    # The image the chart runs is the controller the rehearsal builds and the CRDs are of.
    assert addon_values.ARGO_ROLLOUTS_IMAGE_TAG == argo_rollouts.VERSION
    assert releases_table.bundled("argo_rollouts_controller") == argo_rollouts.VERSION


def test_argo_rollouts_is_off_unless_the_environment_names_it(staging: Environment) -> None:
    assert not staging.cluster.addons.argo_rollouts.enabled
    assert naming.ARGO_ROLLOUTS_RELEASE not in releases(cloud_recording(staging))
    existing = {"argo_rollouts": {"mode": "existing", "namespace": "rollouts"}}
    rec = cloud_recording(with_addons(attached(staging, "shared-eks"), existing))
    assert naming.ARGO_ROLLOUTS_RELEASE not in releases(rec)
    assert not [
        r for r in rec.of_type(CRD_PATCH) if r.inputs["metadata"]["name"].endswith("argoproj.io")
    ]


def test_an_installed_argo_rollouts_gets_its_crds_and_a_restricted_namespace_first(
    staging: Environment,
) -> None:
    rec = cloud_recording(with_addons(staging, {"argo_rollouts": {}}))
    release = releases(rec)[naming.ARGO_ROLLOUTS_RELEASE]
    assert release.inputs["chart"] == "argo-rollouts"
    assert release.inputs["version"] == "2.41.0" == defaults.VERSIONS["argo_rollouts"]
    assert release.inputs["namespace"] == "argo-rollouts"
    assert release.inputs["repositoryOpts"]["repo"] == "https://argoproj.github.io/argo-helm"
    assert release.inputs["values"] == addon_values.argo_rollouts_values()
    crds = {
        r.inputs["metadata"]["name"]: r
        for r in rec.of_type(CRD_PATCH)
        if r.inputs["metadata"]["name"].endswith(".argoproj.io")
    }
    assert sorted(crds) == [
        "analysisruns.argoproj.io",
        "analysistemplates.argoproj.io",
        "clusteranalysistemplates.argoproj.io",
        "experiments.argoproj.io",
        "rollouts.argoproj.io",
    ]
    for crd in crds.values():
        assert crd.urn in release.depends_on
    rollout = crds["rollouts.argoproj.io"].inputs["spec"]
    assert rollout == argo_rollouts.crd_manifest("rollout-crd.yaml")["spec"]
    (namespace,) = [
        r
        for r in rec.of_type("kubernetes:core/v1:Namespace")
        if r.inputs["metadata"]["name"] == "argo-rollouts"
    ]
    assert namespace.urn in release.depends_on
    assert releases(rec)[naming.PROMETHEUS_RELEASE].urn in release.depends_on
    labels = namespace.inputs["metadata"]["labels"]
    for mode in ("enforce", "warn", "audit"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted"
