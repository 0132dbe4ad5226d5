"""What the rehearsal does with the Prometheus operator's output before Prometheus runs it
out of cluster (e2e/promstack.py): the rewrite, and the files the config sync writes."""

from __future__ import annotations

import base64
import gzip
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "e2e"))

import promstack  # noqa: E402

NAME = "kube-prometheus-stack-prometheus"
PREFIX = f"prometheus-{NAME}"

# In the shape pkg/prometheus/promcfg.go writes it (prometheus-operator v0.85.0).
GENERATED = f"""global:
  evaluation_interval: 30s
  scrape_interval: 30s
  external_labels:
    prometheus: monitoring/{NAME}
    prometheus_replica: $(POD_NAME)
rule_files:
- /etc/prometheus/rules/{PREFIX}-rulefiles-0/*.yaml
scrape_configs:
- job_name: serviceMonitor/models/chat/0
  kubernetes_sd_configs:
  - role: endpoints
    namespaces:
      names:
      - models
  scrape_interval: 15s
  tls_config:
    ca_file: /etc/prometheus/certs/secret_models_chat-ca_ca.crt
  relabel_configs:
  - source_labels: [__address__]
    target_label: __tmp_hash
    regex: (.+)
    replacement: $1
    action: replace
  - source_labels: [__tmp_hash, __tmp_disable_sharding]
    regex: $(SHARD);|.+;.+
    action: keep
- job_name: podMonitor/models/picker/0
  kubernetes_sd_configs:
  - role: pod
    api_server: https://kubernetes.example:6443
    bearer_token_file: /var/run/secrets/kubernetes.io/serviceaccount/token
    tls_config:
      ca_file: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
  bearer_token_file: /var/run/secrets/kubernetes.io/serviceaccount/token
"""


def test_discovery_reads_the_kubeconfig_and_paths_point_into_the_state_folder() -> None:
    out = promstack.rewrite(
        GENERATED,
        kubeconfig=Path("/s/kubeconfig"),
        etc=Path("/s/prometheus/etc"),
        sa=Path("/s/prometheus/serviceaccount"),
        env={"POD_NAME": f"{PREFIX}-0", "SHARD": "0"},
    )
    assert out == {
        "global": {
            "evaluation_interval": "30s",
            "scrape_interval": "30s",
            "external_labels": {
                "prometheus": f"monitoring/{NAME}",
                "prometheus_replica": f"{PREFIX}-0",
            },
        },
        "rule_files": [f"/s/prometheus/etc/rules/{PREFIX}-rulefiles-0/*.yaml"],
        "scrape_configs": [
            {
                "job_name": "serviceMonitor/models/chat/0",
                "kubernetes_sd_configs": [
                    {
                        "role": "endpoints",
                        "namespaces": {"names": ["models"]},
                        "kubeconfig_file": "/s/kubeconfig",
                    }
                ],
                "scrape_interval": "15s",
                "tls_config": {"ca_file": "/s/prometheus/etc/certs/secret_models_chat-ca_ca.crt"},
                "relabel_configs": [
                    {
                        "source_labels": ["__address__"],
                        "target_label": "__tmp_hash",
                        "regex": "(.+)",
                        "replacement": "$1",
                        "action": "replace",
                    },
                    {
                        "source_labels": ["__tmp_hash", "__tmp_disable_sharding"],
                        "regex": "0;|.+;.+",
                        "action": "keep",
                    },
                ],
            },
            {
                "job_name": "podMonitor/models/picker/0",
                "kubernetes_sd_configs": [{"role": "pod", "kubeconfig_file": "/s/kubeconfig"}],
                "bearer_token_file": "/s/prometheus/serviceaccount/token",
            },
        ],
    }


def test_a_variable_no_pod_sets_here_is_an_error() -> None:
    with pytest.raises(promstack.ConfigError) as err:
        promstack.expand("selectors: [{field: spec.nodeName=$(NODE_NAME)}]", {"SHARD": "0"})
    assert str(err.value) == "the configuration names $(NODE_NAME), which no pod sets here"


def test_the_prometheus_object_selects_like_kube_prometheus_stack() -> None:
    spec = promstack.prometheus_object("v3.16.0")["spec"]
    selector = {"matchLabels": {"release": "kube-prometheus-stack"}}
    assert spec == {
        "version": "v3.16.0",
        "replicas": 1,
        **{
            f"{kind}{suffix}": value
            for kind in ("serviceMonitor", "podMonitor", "rule", "probe", "scrapeConfig")
            for suffix, value in (("Selector", selector), ("NamespaceSelector", {}))
        },
    }


class FakeKube:
    def __init__(self) -> None:
        self.secrets: list[dict[str, Any]] = []
        self.configmaps: list[dict[str, Any]] = []
        self.queries: list[tuple[str, dict[str, str]]] = []

    def items(self, path: str, **query: str) -> list[dict[str, Any]]:
        self.queries.append((path, query))
        return self.secrets if path.endswith("/secrets") else self.configmaps


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_the_sync_writes_the_config_rules_and_tls_assets_once_and_drops_stale_rules(
    tmp_path: Path,
) -> None:
    kube = FakeKube()
    ca = tmp_path / "ca.crt"
    ca.write_text("CA")
    sync = promstack.ConfigSync(kube, tmp_path, tmp_path / "kubeconfig", ca)
    assert sync.sync() is False  # the operator has written nothing yet
    config_gz = b64(gzip.compress(GENERATED.encode()))
    kube.secrets = [
        {"metadata": {"name": PREFIX}, "data": {"prometheus.yaml.gz": config_gz}},
        {
            "metadata": {"name": f"{PREFIX}-tls-assets-0"},
            "data": {"secret_models_chat-ca_ca.crt": b64(b"PEM")},
        },
        {"metadata": {"name": f"{PREFIX}-web-config"}, "data": {"web-config.yaml": b64(b"x")}},
    ]
    rules = {"models-chat.yaml": "groups: []\n"}
    kube.configmaps = [{"metadata": {"name": f"{PREFIX}-rulefiles-0"}, "data": rules}]
    assert sync.sync() is True
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == [
        "ca.crt",
        "prometheus/etc/certs/secret_models_chat-ca_ca.crt",
        f"prometheus/etc/rules/{PREFIX}-rulefiles-0/models-chat.yaml",
        "prometheus/generated.yaml",
        "prometheus/prometheus.yaml",
        "prometheus/serviceaccount/ca.crt",
    ]
    config = yaml.safe_load((tmp_path / "prometheus" / "prometheus.yaml").read_text())
    assert config["rule_files"] == [f"{tmp_path}/prometheus/etc/rules/{PREFIX}-rulefiles-0/*.yaml"]
    assert kube.queries[-1] == (
        "/api/v1/namespaces/monitoring/configmaps",
        {"labelSelector": f"prometheus-name={NAME}"},
    )
    assert sync.sync() is False  # nothing changed: nothing written, no reload
    kube.configmaps = []
    assert sync.sync() is True
    assert not (
        tmp_path / "prometheus/etc/rules" / f"{PREFIX}-rulefiles-0/models-chat.yaml"
    ).exists()
    assert sync.reloads == 0  # no Prometheus port yet: nothing to reload


# What the real operator generated in `python e2e/rehearse_smoke.py` (one ServiceMonitor, one
# PrometheusRule), Secret `prometheus-kube-prometheus-stack-prometheus`, as it came.
REAL = Path(__file__).parent / "fixtures" / "prometheus-operator-v0.85.0-config.yaml"


def test_of_the_operators_real_output_only_what_runs_out_of_cluster_changes() -> None:
    text = REAL.read_text()
    out = promstack.rewrite(
        text,
        kubeconfig=Path("/s/kubeconfig"),
        etc=Path("/s/etc"),
        sa=Path("/s/sa"),
        env={"POD_NAME": f"{PREFIX}-0", "SHARD": "0"},
    )
    expected = yaml.safe_load(text)
    expected["global"]["external_labels"]["prometheus_replica"] = f"{PREFIX}-0"
    expected["rule_files"] = [f"/s/etc/rules/{PREFIX}-rulefiles-0/*.yaml"]
    (scrape,) = expected["scrape_configs"]
    scrape["kubernetes_sd_configs"][0]["kubeconfig_file"] = "/s/kubeconfig"
    (keep,) = [r for r in scrape["relabel_configs"] if r.get("regex") == "$(SHARD);|.+;.+"]
    keep["regex"] = "0;|.+;.+"
    assert out == expected


def test_a_plain_equals_sign_in_a_crd_reads_as_the_string(tmp_path: Path) -> None:
    import addons

    crd = tmp_path / "crd.yaml"
    crd.write_text("kind: CustomResourceDefinition\nenum:\n- '!='\n- =\n- =~\n")
    assert addons._docs(crd) == [{"kind": "CustomResourceDefinition", "enum": ["!=", "=", "=~"]}]
