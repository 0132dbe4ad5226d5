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

- a GCS bucket for the model store (``modelStore``, e.g. ``gs://acme-ml-dev-models/``) and
  Workload Identity on the cluster (pool ``<project>.svc.id.goog``).

Created here: the namespace, the store identities and their ServiceAccounts
(`ModelStoreAccess`: ``model-reader`` reads the store, ``weights-stager`` writes only its
``.inferplane/hub/llm-demo/`` prefix, ``vllm-compiler`` only
``.inferplane/vllm-compile/llm-demo/``), and the
`ModelServer` (the Job that stages the pinned ``hf://`` weights into the store once, the Job
that stages vLLM's ``torch.compile`` cache once, Deployment, Services, PDB,
NetworkPolicies, ScaledObject, monitoring). Replicas copy the staged weights and compile
cache from the store: none talks to the Hugging Face hub or holds the token.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint.model import Autoscaling, MinMax, Slo, VllmSettings
from inferplane.components.cloud import Ownership
from inferplane.components.identity import ModelStoreAccess, ModelStoreAccessArgs
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
project = config.require("project")
store = config.require("modelStore")
store_bucket, _, store_prefix = store.removeprefix("gs://").partition("/")
access = ModelStoreAccess(
    "llm",
    ModelStoreAccessArgs(
        cloud="gcp",
        owner=Ownership(blueprint="llm-demo", environment=pulumi.get_stack()),
        namespace=NAMESPACE,
        provider=provider,
        store_bucket=store_bucket,
        store_prefix=store_prefix,
        read_locations=((store_bucket, store_prefix),),
        project=project,
        workload_pool=f"{project}.svc.id.goog",
    ),
    opts=pulumi.ResourceOptions(depends_on=[namespace]),
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
    # Pinned: the staged copy in the store is keyed by the revision (a commit of the repo).
    source=model_source("hf://Qwen/Qwen2.5-1.5B-Instruct@989aa7980e4cf806f80c7fef2b1adb7bc71aa306"),
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
    project=project,
    model_store_uri=store,
    # An existing cluster's network range is not known here: the clients' ranges admitted
    # by the internal load balancer and the NetworkPolicy are given, never guessed.
    lb_allowed_cidrs=tuple(config.require_object("allowedCidrs")),
)

server = ModelServer(
    "qwen",
    ModelServerArgs(model=model, env=environment, namespace=NAMESPACE, provider=provider),
    opts=pulumi.ResourceOptions(depends_on=[namespace, access]),
)

pulumi.export("deployment", server.deployment_name)
pulumi.export("service", server.service_name)
pulumi.export("endpoint", server.endpoint)
