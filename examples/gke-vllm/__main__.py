"""Serve an open LLM with vLLM on an EXISTING GKE cluster, autoscaled by KEDA on its queue.

No blueprint: the program fills the serving components' arguments by hand. The cluster
must already run what the components' objects rely on:

- an L4 GPU node pool (``g2-standard-8``, one GPU per node) in the configured zones. GKE
  labels GPU nodes ``cloud.google.com/gke-accelerator: <type>`` and taints them
  ``nvidia.com/gpu=present:NoSchedule`` when the cluster also has non-GPU nodes
  (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus); the pods select the label
  and tolerate the taint;
- KEDA (the ScaledObject) and kube-prometheus-stack (ServiceMonitor, PrometheusRule, the
  Prometheus KEDA queries) in the namespace ``monitoring``, release ``kube-prometheus-stack``.

Created here: the namespace, the ``model-reader`` ServiceAccount the pods run as, and the
`ModelServer` (Deployment, Services, PDB, NetworkPolicy, ScaledObject, monitoring).
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.blueprint.model import Autoscaling, MinMax, Slo, VllmSettings
from inferplane.components.serving import (
    ModelSecret,
    ModelServer,
    ModelServerArgs,
    ServedModel,
    ServingEnvironment,
    ServingPool,
    model_source,
)

config = pulumi.Config()
NAMESPACE = "llm"

# A kubeconfig from config, else the ambient one (what the default provider would use).
provider = k8s.Provider("gke", kubeconfig=config.get_secret("kubeconfig"))
k8s_opts = pulumi.ResourceOptions(provider=provider)

namespace = k8s.core.v1.Namespace("llm", metadata={"name": NAMESPACE}, opts=k8s_opts)
# Weights come from Hugging Face, so the reader needs no cloud identity; to read gs://, bind
# it to a Google service account with Workload Identity (iam.gke.io/gcp-service-account).
reader = k8s.core.v1.ServiceAccount(
    "model-reader",
    metadata={"name": naming.MODEL_READER_SA, "namespace": NAMESPACE},
    opts=pulumi.ResourceOptions(provider=provider, depends_on=[namespace]),
)

pool = ServingPool(
    name="l4",
    gpu_type="l4",
    zones=tuple(config.require_object("zones")),
    instance_type="g2-standard-8",
    node_selector={"cloud.google.com/gke-accelerator": "nvidia-l4"},
)
model = ServedModel(
    name="qwen",
    server="vllm",
    source=model_source("hf://Qwen/Qwen2.5-1.5B-Instruct"),
    pool=pool,
    replicas=MinMax(min=1, max=4),  # one warm replica; KEDA adds up to three more
    precision="bf16",
    autoscaling=Autoscaling.single("queue_depth", 4, scale_down_stabilization_s=600),
    slo=Slo(p95_ms=None, ttft_p95_ms=500),
    vllm=VllmSettings(max_model_len=8192, enable_prefix_caching=True),
    secrets=(
        (ModelSecret("hf_token", from_pulumi_config="hfToken"),)
        if config.get_secret("hfToken") is not None
        else ()
    ),
)
environment = ServingEnvironment(
    part_of="llm-demo",
    environment=pulumi.get_stack(),
    cloud="gcp",
    region=config.require("region"),
    project=config.require("project"),
)

server = ModelServer(
    "qwen",
    ModelServerArgs(model=model, env=environment, namespace=NAMESPACE, provider=provider),
    opts=pulumi.ResourceOptions(depends_on=[namespace, reader]),
)

pulumi.export("deployment", server.deployment_name)
pulumi.export("service", server.service_name)
pulumi.export("endpoint", server.endpoint)
