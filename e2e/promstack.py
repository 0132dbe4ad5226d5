"""Prometheus fed by the real Prometheus operator, both out of cluster, for the rehearsal.

What runs for real: the operator (cmd/operator of prometheus-operator, e2e/tools.toml) against
the local API server, reconciling a `Prometheus` object shaped like the one an installed
kube-prometheus-stack creates; and Prometheus itself (cmd/prometheus), on the configuration
and rule files the operator generates, discovering its targets through the API server.

What stands in for the Prometheus pod: in a cluster the operator's StatefulSet mounts the
generated configuration and the config reloader expands it and tells Prometheus to reload.
Here `ConfigSync` does that job: it reads the objects the operator writes —

- the Secret ``prometheus-<name>``, key ``prometheus.yaml.gz`` (gzip): pkg/prometheus/common.go
  `ConfigSecretName` (= `PrefixedName`, ``prometheus-<name>``), `ConfigFilename`,
  `MakeConfigurationSecret`;
- the rule ConfigMaps ``prometheus-<name>-rulefiles-<i>``, labelled ``prometheus-name: <name>``
  (pkg/prometheus/server/rules.go, `LabelPrometheusName` in common.go), mounted at
  ``/etc/prometheus/rules/<ConfigMap>/`` and named by the config as
  ``/etc/prometheus/rules/<ConfigMap>/*.yaml`` (promcfg.go `appendRuleFiles`, `RulesDir`);
- the TLS assets Secrets ``prometheus-<name>-tls-assets-<i>`` (common.go `TLSAssetsSecretName`,
  sharded by pkg/operator/sharded_secret.go `secretNameAt`), mounted at
  ``/etc/prometheus/certs`` (`tlsAssetsDir`) —

and rewrites only what being out of cluster requires (`rewrite`): each `kubernetes_sd_configs`
entry reads the local kubeconfig (`kubeconfig_file`) instead of the in-cluster service account;
``/etc/prometheus/...`` and the service account's ``/var/run/secrets/...`` paths point into the
state folder; ``$(POD_NAME)`` and ``$(SHARD)``, which the config reloader expands from the
pod's environment (pkg/operator/config_reloader.go `PodNameEnvVar`, `ShardEnvVar`), become the
first replica's values. Then it reloads Prometheus (``POST /-/reload``) when anything changed.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import os
import re
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import cluster
import yaml
from kube import Kube
from tools import REHEARSAL_TOOLS

from inferplane.blueprint import naming

NAMESPACE = naming.MONITORING_NAMESPACE
# kube-prometheus-stack names its Prometheus object `<fullname>-prometheus`; its Service has
# the same name (naming.PROMETHEUS_URL).
NAME = f"{naming.PROMETHEUS_RELEASE}-prometheus"
# The chart's `*SelectorNilUsesHelmValues: true` defaults select by `release: <release>`, and
# its `*NamespaceSelector: {}` defaults look in every namespace
# (shared/reference/kube-prometheus-stack/values.yaml, prometheus.prometheusSpec).
SELECTOR = {"matchLabels": {"release": naming.PROMETHEUS_RELEASE}}

ETC = "/etc/prometheus/"
SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount/"
# What an in-cluster kubernetes_sd_config may carry to reach the API server (promcfg.go
# `generateK8SSDConfig` with an `apiserverConfig`): dropped for the kubeconfig.
API_SERVER_KEYS = (
    "api_server",
    "basic_auth",
    "bearer_token",
    "bearer_token_file",
    "authorization",
    "oauth2",
    "tls_config",
    "proxy_url",
    "no_proxy",
    "proxy_from_environment",
    "proxy_connect_header",
)
_ENV_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


class ConfigError(Exception):
    pass


def crds() -> list[Path]:
    """Every CRD of the pinned operator (its module's example/prometheus-operator-crd/)."""
    return sorted((REHEARSAL_TOOLS["prometheus-operator"]().share() / "crds").glob("*.yaml"))


def prometheus_object(version: str) -> dict[str, Any]:
    """The `Prometheus` an installed kube-prometheus-stack creates, in what decides which
    objects it reads: its selectors and their namespaces."""
    spec: dict[str, Any] = {"version": version, "replicas": 1}
    for kind in ("serviceMonitor", "podMonitor", "rule", "probe", "scrapeConfig"):
        spec[f"{kind}Selector"] = SELECTOR
        spec[f"{kind}NamespaceSelector"] = {}
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "Prometheus",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": spec,
    }


def expand(text: str, env: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in env:
            raise ConfigError(f"the configuration names $({m.group(1)}), which no pod sets here")
        return env[m.group(1)]

    return _ENV_REF.sub(sub, text)


def _strings(value: Any, etc: Path, sa: Path, env: dict[str, str]) -> Any:
    """Expand and re-point every string of the configuration (after parsing it, so an
    expanded value keeps its YAML type)."""
    if isinstance(value, dict):
        return {k: _strings(v, etc, sa, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, etc, sa, env) for v in value]
    if isinstance(value, str):
        value = expand(value, env)
        if value.startswith(ETC):
            return str(etc / value[len(ETC) :])
        if value.startswith(SERVICE_ACCOUNT):
            return str(sa / value[len(SERVICE_ACCOUNT) :])
    return value


def rewrite(
    text: str, *, kubeconfig: Path, etc: Path, sa: Path, env: dict[str, str]
) -> dict[str, Any]:
    """The operator's configuration as this machine runs it (see the module's docstring)."""
    config = _strings(yaml.safe_load(text) or {}, etc, sa, env)
    for scrape in config.get("scrape_configs") or []:
        for sd in scrape.get("kubernetes_sd_configs") or []:
            for key in API_SERVER_KEYS:
                sd.pop(key, None)
            sd["kubeconfig_file"] = str(kubeconfig)
    return dict(config)


def start_operator(state: Path, kubeconfig: Path) -> int:
    """The operator, out of cluster: it reads KUBECONFIG (pkg/k8sutil/k8sutil.go
    `NewClusterConfig`) and serves its own metrics on loopback (`--web.listen-address`,
    pkg/server/server.go `RegisterFlags`)."""
    tool = REHEARSAL_TOOLS["prometheus-operator"]()
    environ = dict(os.environ, KUBECONFIG=str(kubeconfig))
    return cluster.spawn(
        state,
        "prometheus-operator",
        [
            str(tool.bindir() / "prometheus-operator"),
            f"--web.listen-address=127.0.0.1:{cluster.free_port()}",
            "--log-level=info",
        ],
        environ,
    )


def start_prometheus(state: Path, config: Path, port: int) -> int:
    tool = REHEARSAL_TOOLS["prometheus"]()
    data = state / "prometheus-data"
    data.mkdir(exist_ok=True)
    return cluster.spawn(
        state,
        "prometheus",
        [
            str(tool.bindir() / "prometheus"),
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{port}",
            # POST /-/reload, which the config reloader uses in a pod.
            "--web.enable-lifecycle",
        ],
    )


def http(url: str, method: str = "GET", timeout: float = 10) -> tuple[int, str]:
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def query(port: int, promql: str) -> list[dict[str, Any]]:
    """An instant query of the HTTP API: the result vector."""
    q = urllib.parse.urlencode({"query": promql})
    status, body = http(f"http://127.0.0.1:{port}/api/v1/query?{q}")
    if status != 200:
        raise ConfigError(f"query {promql!r}: HTTP {status}: {body[:300]}")
    return list(json.loads(body)["data"]["result"])


class ConfigSync:
    """Keeps Prometheus's files equal to what the operator generates (module docstring)."""

    def __init__(self, client: Kube, state: Path, kubeconfig: Path, ca: Path) -> None:
        self.client = client
        self.kubeconfig = kubeconfig
        self.root = state / "prometheus"
        self.etc = self.root / "etc"
        self.sa = self.root / "serviceaccount"
        self.config = self.root / "prometheus.yaml"
        self.ca = ca
        self.port: int | None = None
        self.last_error: str | None = None
        self.reloads = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _objects(self) -> tuple[str, dict[str, bytes]] | None:
        base = f"/api/v1/namespaces/{NAMESPACE}"
        prefix = f"prometheus-{NAME}"
        secrets = {s["metadata"]["name"]: s for s in self.client.items(f"{base}/secrets")}
        main = secrets.get(prefix)
        if not main or "prometheus.yaml.gz" not in (main.get("data") or {}):
            return None
        text = gzip.decompress(base64.b64decode(main["data"]["prometheus.yaml.gz"])).decode()
        files: dict[str, bytes] = {}
        for name, secret in secrets.items():
            if re.fullmatch(rf"{re.escape(prefix)}-tls-assets-\d+", name):
                for key, value in (secret.get("data") or {}).items():
                    files[f"certs/{key}"] = base64.b64decode(value)
        cms = self.client.items(f"{base}/configmaps", labelSelector=f"prometheus-name={NAME}")
        for cm in cms:
            cm_name = cm["metadata"]["name"]
            if re.fullmatch(rf"{re.escape(prefix)}-rulefiles-\d+", cm_name):
                for key, value in (cm.get("data") or {}).items():
                    files[f"rules/{cm_name}/{key}"] = value.encode()
        return text, files

    def sync(self) -> bool:
        """Write what changed; reload Prometheus when it runs. True when anything changed."""
        got = self._objects()
        if got is None:
            return False
        text, files = got
        env = {"POD_NAME": f"prometheus-{NAME}-0", "SHARD": "0"}
        config = rewrite(text, kubeconfig=self.kubeconfig, etc=self.etc, sa=self.sa, env=env)
        wanted = {self.config: yaml.safe_dump(config, sort_keys=False).encode()}
        # The operator's text as generated, beside its rewrite, to compare when debugging.
        wanted[self.root / "generated.yaml"] = text.encode()
        wanted.update({self.etc / rel: data for rel, data in files.items()})
        wanted[self.sa / "ca.crt"] = self.ca.read_bytes()
        changed = False
        for path, data in wanted.items():
            if not path.exists() or path.read_bytes() != data:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(path.suffix + ".tmp")
                tmp.write_bytes(data)
                tmp.replace(path)
                changed = True
        for stale in [p for p in (self.etc / "rules").rglob("*") if p.is_file()]:
            if stale not in wanted:
                stale.unlink()
                changed = True
        if changed and self.port is not None:
            status, body = http(f"http://127.0.0.1:{self.port}/-/reload", "POST")
            if status != 200:
                raise ConfigError(f"Prometheus refused the new configuration: {body.strip()}")
            self.reloads += 1
        return changed

    def wait_first(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if self.sync():
                    return
            time.sleep(0.5)
        raise TimeoutError(
            f"timed out after {timeout:.0f} s waiting for the operator's Secret "
            f"{NAMESPACE}/prometheus-{NAME}"
        )

    def start(self, every: float = 1.0) -> None:
        def loop() -> None:
            while not self._stop.wait(every):
                try:
                    self.sync()
                    self.last_error = None
                except Exception as err:
                    self.last_error = str(err)

        self._thread = threading.Thread(target=loop, name="config-sync", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)
