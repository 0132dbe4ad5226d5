"""`cloud: kubernetes` environments: the schema and semantic checks (exact diagnostics),
resolution, and the node shape the cluster's nodes must have."""

from __future__ import annotations

import pytest

from inferplane.blueprint import naming
from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.derived.node_shape import TOPOLOGY_REGION_LABEL, required_node_shape
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document
from inferplane.blueprint.resolution.resolve import resolve

BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  local:
    cloud: kubernetes
    region: local
    zones: [zone-a, zone-b]
    model_store: s3://models/demo/
    model_store_endpoint: http://store.inferplane-system.svc:9000
    model_store_secrets:
      reader: store-reader
      engine_builder: store-engine-builder
      vllm_compiler: store-vllm-compiler
    cluster: {context: inferplane-local}
    overrides:
      gpu_pools:
        l4: {nodes: {min: 2, max: 2}}
      load_balancer: {allowed_cidrs: [10.0.0.0/8]}
  prod:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    model_store: s3://models-use1/
    cluster: {create: true}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 2, max: 4}
  h100:
    gpu: nvidia-h100-80gb
    gpus_per_node: 8
    sharing: mig
    mig_profile: 3g.40gb
    nodes: {min: 1, max: 1}
    zones: [zone-a]
models:
  chat:
    server: vllm
    source: llama/
    pool: l4
    replicas: {min: 2, max: 4}
  rank:
    server: triton
    source: rank/model.onnx
    pool: l4
    tensorrt: {}
    batching: {max_batch_size: 8, max_queue_delay_us: 1000}
"""


def diagnostics(text: str) -> list[str]:
    doc = load_text(text, "bp.yaml")
    return [d.format() for d in validate_document(doc) or check(doc)]


def edit(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_base_is_valid() -> None:
    # h100 names zone-a, which is not a zone of prod: only for this test's shape checks.
    text = edit("    zones: [zone-a]\n", "")
    assert diagnostics(text) == []


CASES = [
    pytest.param(
        "    cluster: {context: inferplane-local}",
        "    cluster: {context: inferplane-local, create: true}",
        "bp.yaml:15:42: error: environments.local.cluster.create: `create` contradicts "
        "`context`: a kubeconfig context names a cluster that already exists, and nothing "
        "can be created in it; remove `create`",
        id="create-refused",
    ),
    pytest.param(
        "    cluster: {context: inferplane-local}",
        "    cluster: {existing: shared}",
        "bp.yaml:15:14: error: environments.local.cluster: a kubernetes environment names its "
        "cluster by kubeconfig context; write `cluster: {context: <kubeconfig context>}` (and "
        "remove `create`/`existing`)",
        id="context-required",
    ),
    pytest.param(
        "    cluster: {create: true}",
        "    cluster: {create: true, context: mine}",
        "bp.yaml:25:15: error: environments.prod.cluster.create: `create` contradicts "
        "`context`: a kubeconfig context names a cluster that already exists, and nothing "
        "can be created in it; remove `create`",
        id="context-on-aws-with-create",
    ),
    pytest.param(
        "    cluster: {create: true}",
        "    cluster: {create: true, load_balancer: cluster_ip}",
        "bp.yaml:25:44: error: environments.prod.cluster.load_balancer: `cluster.load_balancer` "
        "applies only to kubernetes environments; remove it: the cloud's load balancer "
        "controller serves them",
        id="service-type-on-aws",
    ),
    pytest.param(
        "    region: local\n",
        "    region: local\n    project: acme-ml-prod\n",
        "bp.yaml:8:5: error: environments.local.project: `project` applies only to gcp "
        "environments; remove it: a kubernetes environment calls no cloud API",
        id="project-refused",
    ),
    pytest.param(
        "    model_store: s3://models/demo/",
        "    model_store: gs://models/demo/",
        "bp.yaml:9:18: error: environments.local.model_store: a kubernetes environment keeps "
        "its models in an S3-compatible store (s3://); write s3://bucket/prefix/ and the "
        "store's URL in `model_store_endpoint`",
        id="store-not-s3",
    ),
    pytest.param(
        "    model_store_endpoint: http://store.inferplane-system.svc:9000\n",
        "",
        "bp.yaml:5:3: error: environments.local: a kubernetes environment needs "
        "`model_store_endpoint` and `model_store_secrets`; add the S3-compatible store's URL "
        "and the names of the existing Secrets with its credentials (`model_store_secrets: "
        "{reader: <Secret>}`)",
        id="endpoint-required",
    ),
    pytest.param(
        "    model_store_endpoint: http://store.inferplane-system.svc:9000",
        "    model_store_endpoint: http://key:secret@store:9000",
        "bp.yaml:10:27: error: environments.local.model_store_endpoint: invalid value "
        '"http://key:secret@store:9000"; write an http:// or https:// URL of a host and '
        "optional port, with no path or credentials, such as "
        "http://store.inferplane-system.svc:9000",
        id="endpoint-with-credentials",
    ),
    pytest.param(
        "    model_store_endpoint: http://store.inferplane-system.svc:9000",
        "    model_store_endpoint: http://store.inferplane-system.svc:99999",
        "bp.yaml:10:27: error: environments.local.model_store_endpoint: port 99999 is not a "
        "TCP port (1 to 65535); write http(s)://<service>.<namespace>.svc:<port> for a store "
        "in the cluster, or the IP address of one outside it, with a port from 1 to 65535",
        id="endpoint-port-out-of-range",
    ),
    pytest.param(
        "    model_store_endpoint: http://store.inferplane-system.svc:9000",
        "    model_store_endpoint: http://store.inferplane-system.svc:0",
        "bp.yaml:10:27: error: environments.local.model_store_endpoint: port 0 is not a TCP "
        "port (1 to 65535); write http(s)://<service>.<namespace>.svc:<port> for a store in "
        "the cluster, or the IP address of one outside it, with a port from 1 to 65535",
        id="endpoint-port-zero",
    ),
    pytest.param(
        "    model_store_endpoint: http://store.inferplane-system.svc:9000",
        "    model_store_endpoint: https://s3.example.com",
        "bp.yaml:10:27: error: environments.local.model_store_endpoint: host 's3.example.com' "
        "is neither an in-cluster Service (<service>.<namespace>.svc) nor an IP address, and "
        "a NetworkPolicy cannot name a host; write http(s)://<service>.<namespace>.svc:<port> "
        "for a store in the cluster, or the IP address of one outside it, with a port from 1 "
        "to 65535",
        id="endpoint-host-outside-the-cluster",
    ),
    pytest.param(
        "    model_store_endpoint: http://store.inferplane-system.svc:9000",
        "    model_store_endpoint: http://169.254.169.254",
        "bp.yaml:10:27: error: environments.local.model_store_endpoint: 169.254.169.254 is a "
        "loopback, link-local, unspecified or multicast address; write "
        "http(s)://<service>.<namespace>.svc:<port> for a store in the cluster, or the IP "
        "address of one outside it, with a port from 1 to 65535",
        id="endpoint-metadata-address",
    ),
    pytest.param(
        "    model_store_endpoint: http://store.inferplane-system.svc:9000\n",
        "    model_store_endpoint: http://192.0.2.10:9000\n"
        "    model_store_pod_labels: {app: store}\n",
        "bp.yaml:11:29: error: environments.local.model_store_pod_labels: the store at "
        "192.0.2.10 is outside the cluster, so it has no pods; remove "
        "`model_store_pod_labels`, or name the store's in-cluster Service in "
        "`model_store_endpoint`",
        id="pod-labels-of-an-address",
    ),
    pytest.param(
        "    model_store: s3://models-use1/\n",
        "    model_store: s3://models-use1/\n    model_store_pod_labels: {app: store}\n",
        "bp.yaml:25:29: error: environments.prod.model_store_pod_labels: "
        "`model_store_pod_labels` applies only to kubernetes environments; remove it: this "
        "environment reads its bucket through the cloud's own endpoint",
        id="pod-labels-on-aws",
    ),
    pytest.param(
        "    cluster: {create: true}",
        "    cluster: {create: true, dataplane: cilium}",
        "bp.yaml:25:40: error: environments.prod.cluster.dataplane: `cluster.dataplane` "
        "applies only to kubernetes environments; remove it: inferplane knows the dataplane "
        "of EKS and GKE clusters",
        id="dataplane-on-aws",
    ),
    pytest.param(
        "    model_store: s3://models-use1/\n",
        "    model_store: s3://models-use1/\n    model_store_secrets: {reader: r}\n",
        "bp.yaml:25:5: error: environments.prod.model_store_secrets: `model_store_secrets` "
        "applies only to kubernetes environments; remove it: an aws environment reads its "
        "bucket with a cloud identity inferplane creates",
        id="secrets-on-aws",
    ),
    pytest.param(
        "      engine_builder: store-engine-builder\n",
        "",
        "bp.yaml:12:7: error: environments.local.model_store_secrets: model 'rank' builds a "
        "TensorRT engine, and no Secret is named for `engine_builder`; add `engine_builder: "
        "<Secret name>`: an existing Secret in the blueprint's namespace with "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
        id="engine-writer-secret-required",
    ),
    pytest.param(
        "        l4: {nodes: {min: 2, max: 2}}",
        "        l4: {nodes: {min: 2, max: 3}}",
        "bp.yaml:18:35: error: environments.local.overrides.gpu_pools.l4.nodes.max: in "
        "kubernetes environment 'local' nothing scales nodes, so nodes.max (3) must equal "
        "nodes.min (2): the nodes per zone that exist; set `nodes: {min: 2, max: 2}` for this "
        "environment (under environments.local.overrides.gpu_pools.l4)",
        id="nodes-min-equals-max",
    ),
    pytest.param(
        "      load_balancer: {allowed_cidrs: [10.0.0.0/8]}\n",
        "",
        "bp.yaml:6:12: error: environments.local.cloud: a kubernetes environment needs "
        "`load_balancer.allowed_cidrs`: inferplane cannot know the cluster's client addresses, "
        "and the models' NetworkPolicies admit only the ranges listed; add `load_balancer: "
        "{allowed_cidrs: [<client range>]}` (under environments.local.overrides for this "
        "environment only)",
        id="allowed-cidrs-required",
    ),
    pytest.param(
        "        l4: {nodes: {min: 2, max: 2}}",
        "        l4: {nodes: {min: 2, max: 2}, capacity: spot}",
        "bp.yaml:18:49: error: environments.local.overrides.gpu_pools.l4.capacity: kubernetes "
        "environment 'local' creates no nodes, so none of them is spot; remove `capacity` (or "
        "set it to on_demand) for this environment",
        id="spot-refused",
    ),
    pytest.param(
        "    cluster: {context: inferplane-local}",
        "    cluster:\n      context: inferplane-local\n      addons:\n"
        "        cluster_autoscaler: {mode: existing}",
        "bp.yaml:18:29: error: environments.local.cluster.addons.cluster_autoscaler: "
        "`cluster_autoscaler` is an AWS add-on; remove it: nothing scales the nodes of a "
        "kubernetes environment",
        id="aws-addon-refused",
    ),
]


CASES += [
    pytest.param(
        "        l4: {nodes: {min: 2, max: 2}}",
        "        l4: {nodes: {min: 2, max: 2}, instance_type: g6.xlarge}",
        "bp.yaml:18:54: error: environments.local.overrides.gpu_pools.l4.instance_type: "
        "kubernetes environment 'local' creates no nodes, so it has no instance type; remove "
        "it; the pool's nodes exist already and carry the labels the plan lists",
        id="overridden-instance-type-refused",
    ),
    pytest.param(
        "    replicas: {min: 2, max: 4}\n",
        "    replicas: {min: 2, max: 4}\n    secrets:\n      hf_token: {from_secret_manager: "
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf}\n",
        "bp.yaml:43:39: error: models.chat.secrets.hf_token.from_secret_manager: kubernetes "
        "environment 'local' has no cloud secret manager to read from (nothing deploys it "
        "with cloud credentials); use `from_env` or `from_pulumi_config` in a blueprint with "
        "a kubernetes environment",
        id="secret-manager-refused",
    ),
    pytest.param(
        "      engine_builder: store-engine-builder",
        "      engine_builder: store-reader",
        "bp.yaml:13:23: error: environments.local.model_store_secrets.engine_builder: Secret "
        "'store-reader' is already `reader`'s: serving pods would hold a writer's keys; give "
        "`engine_builder` a Secret of its own, with keys the store's bucket policy scopes to "
        "that role",
        id="reader-secret-is-a-writers",
    ),
    pytest.param(
        "      vllm_compiler: store-vllm-compiler",
        "      vllm_compiler: store-engine-builder",
        "bp.yaml:14:22: error: environments.local.model_store_secrets.vllm_compiler: Secret "
        "'store-engine-builder' is already `engine_builder`'s: the Jobs of each would hold "
        "the other's write keys; give `vllm_compiler` a Secret of its own, with keys the "
        "store's bucket policy scopes to that role",
        id="two-writers-share-a-secret",
    ),
]


def test_two_environments_on_one_context_are_refused() -> None:
    text = edit("    zones: [zone-a]\n", "")
    second = (
        "  local2:\n    cloud: kubernetes\n    region: local\n    zones: [zone-a, zone-b]\n"
        "    model_store: s3://models/demo/\n"
        "    model_store_endpoint: http://store.inferplane-system.svc:9000\n"
        "    model_store_secrets: {reader: r, engine_builder: b, vllm_compiler: c}\n"
        "    cluster: {context: inferplane-local}\n"
        "    overrides:\n      gpu_pools: {l4: {nodes: {min: 2, max: 2}}}\n"
        "      load_balancer: {allowed_cidrs: [10.0.0.0/8]}\n"
    )
    text = edit("  prod:\n", second + "  prod:\n", text)
    assert diagnostics(text) == [
        "bp.yaml:27:24: error: environments.local2.cluster.context: environment 'local' "
        "attaches to cluster 'inferplane-local' too, and both would deploy into the namespace "
        "'demo', creating the same objects; attach each environment of a blueprint to its "
        "own cluster; two blueprints (with different names) may share one"
    ]


def test_a_base_instance_type_is_for_the_cloud_environments() -> None:
    text = edit("    zones: [zone-a]\n", "")
    text = edit(
        "    nodes: {min: 2, max: 4}\n",
        "    nodes: {min: 2, max: 4}\n    instance_type: g6.xlarge\n",
        text,
    )
    assert diagnostics(text) == []


@pytest.mark.parametrize(("old", "new", "expected"), CASES)
def test_diagnostics(old: str, new: str, expected: str) -> None:
    text = edit("    zones: [zone-a]\n", "")
    assert diagnostics(edit(old, new, text)) == [expected]


def _local():
    text = edit("    zones: [us-east-1a, us-east-1b]", "    zones: [us-east-1a, us-east-1b]")
    doc = load_text(text, "bp.yaml")
    return resolve(doc, "local")


def test_resolve() -> None:
    env = _local()
    assert env.kubernetes
    assert env.cluster.context == "inferplane-local"
    assert env.cluster.load_balancer == "cluster_ip"
    assert env.model_store_endpoint == "http://store.inferplane-system.svc:9000"
    assert env.model_store_secrets is not None
    assert env.model_store_secrets.reader == "store-reader"
    assert env.model_store_secrets.weights_stager is None
    assert env.pools["l4"].instance_type == ""
    assert env.pools["l4"].nodes.min == env.pools["l4"].nodes.max == 2


def test_required_node_shape() -> None:
    shapes = required_node_shape(_local())
    assert [(s.pool, s.zone) for s in shapes] == [
        ("l4", "zone-a"),
        ("l4", "zone-b"),
        ("h100", "zone-a"),
    ]
    l4 = shapes[0]
    assert dict(l4.labels) == {
        naming.POOL_LABEL: "l4",
        naming.BLUEPRINT_LABEL: "demo",
        naming.GPU_LABEL: "nvidia-l4",
        naming.ZONE_LABEL: "zone-a",
        naming.TOPOLOGY_ZONE_LABEL: "zone-a",
        TOPOLOGY_REGION_LABEL: "local",
    }
    assert [(t.key, t.value, t.effect) for t in l4.taints] == [
        ("nvidia.com/gpu", "present", "NoSchedule")
    ]
    assert (l4.gpu_resource, l4.gpus_per_node, l4.gpu_units_per_node) == ("nvidia.com/gpu", 1, 1)
    assert (l4.nodes_min, l4.nodes_max) == (2, 2)
    h100 = shapes[2].to_json()
    assert h100["gpu_resource"] == "nvidia.com/mig-3g.40gb"
    assert h100["gpu_units_per_node"] == 16
    assert h100["labels"][naming.MIG_CONFIG_LABEL] == "all-3g.40gb"
    assert h100["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]


def test_node_shape_imports_no_pulumi() -> None:
    import subprocess
    import sys

    code = (
        "import sys, inferplane.blueprint.derived.node_shape\n"
        "assert not any(m.split('.')[0] in ('pulumi', 'pulumi_kubernetes') for m in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_documented_node_shape_is_the_computed_one() -> None:
    """The schema (and so blueprints/README.md) names every label and the taint that
    `required_node_shape` asks the nodes of a kubernetes environment for."""
    from inferplane.blueprint.loading.schema import schema

    text = schema()["$defs"]["gpuPool"]["properties"]["nodes"]["description"]
    env = _local()
    keys = {k for shape in required_node_shape(env) for k in shape.labels}
    keys.add(naming.DEVICE_PLUGIN_CONFIG_LABEL)  # time-slicing pools (none in the example)
    for key in keys:
        assert f"`{key}=" in text, key
    assert "`nvidia.com/gpu=present:NoSchedule`" in text


def test_python_requirements_need_the_weights_stager_secret() -> None:
    pipeline = """\
  speech:
    server: triton
    source: speech/
    pool: l4
    pipeline:
      inputs: {AUDIO: {data_type: string, dims: [1]}}
      outputs: {TEXT: {data_type: string, dims: [1], from: decode.TEXT}}
      steps:
        decode:
          backend: python
          requirements: ["tokenizers==0.21.1 --hash=sha256:%s"]
          inputs: {AUDIO: {data_type: string, dims: [1], from: AUDIO}}
          outputs: {TEXT: {data_type: string, dims: [1]}}
""" % ("ab" * 32)
    assert (
        "bp.yaml:12:7: error: environments.local.model_store_secrets: model 'speech' stages "
        "its Python steps' requirements, and no Secret is named for `weights_stager`; add "
        "`weights_stager: <Secret name>`: an existing Secret in the blueprint's namespace "
        "with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    ) in diagnostics(BASE + pipeline)
    with_secret = edit(
        "      engine_builder: store-engine-builder\n",
        "      engine_builder: store-engine-builder\n      weights_stager: store-stager\n",
        BASE + pipeline,
    )
    assert not [d for d in diagnostics(with_secret) if "weights_stager" in d]


def test_an_engine_by_backend_alone_needs_the_engine_builder_secret() -> None:
    """`backend: tensorrt` without a `tensorrt` section builds an engine too (resolve_model
    gives it the default settings), which the engine_builder identity publishes."""
    text = edit("    zones: [zone-a]\n", "")
    text = edit("    tensorrt: {}\n", "    backend: tensorrt\n", text)
    text = edit("      engine_builder: store-engine-builder\n", "", text)
    assert diagnostics(text) == [
        "bp.yaml:12:7: error: environments.local.model_store_secrets: model 'rank' builds a "
        "TensorRT engine, and no Secret is named for `engine_builder`; add `engine_builder: "
        "<Secret name>`: an existing Secret in the blueprint's namespace with "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    ]
