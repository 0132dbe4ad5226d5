# ruff: noqa: E501  (exact diagnostics and YAML snippets read best unwrapped)
"""Semantic checks of what plan, check and the cloud would refuse: defaults combined with
explicit values, component-only checks, addresses, dates, derived names, the catalog and the
environment's cloud. Exact diagnostics."""

from __future__ import annotations

import pytest
from test_semantic import BASE, diagnostics, edit

TAIL = "    batching: {max_batch_size: 8, max_queue_delay_us: 1000}\n"


def alerts(block: str) -> str:
    """BASE with an `observability.alerts` block (indented four spaces)."""
    return edit(TAIL, TAIL + "observability:\n  alerts:\n" + block)


SLACK = "{channel: '#ml', api_url: {from_env: SLACK_URL}}"
CASES = [
    pytest.param(
        edit("nodes: {min: 2, max: 4}", "nodes: {min: 6}"),
        [
            "bp.yaml:22:18: error: gpu_pools.l4.nodes.min: nodes.min (6) is greater than the default nodes.max (4); set nodes.max too, at least 6"
        ],
        id="nodes-min-default-max",
    ),
    pytest.param(
        edit("nodes: {min: 2, max: 4}", "nodes: {max: 0}"),
        [
            "bp.yaml:22:18: error: gpu_pools.l4.nodes.max: nodes.max (0) is less than the default nodes.min (1); set nodes.min too, e.g. nodes: {min: 0, max: 0}"
        ],
        id="nodes-max-default-min",
    ),
    pytest.param(
        edit("replicas: {min: 2, max: 4}", "replicas: {max: 1}"),
        [
            "bp.yaml:28:21: error: models.chat.replicas.max: replicas.max (1) is less than the default replicas.min (2: one warm replica per zone of pool 'l4'); set replicas.min too, e.g. replicas: {min: 1, max: 1}, or raise max to 2"
        ],
        id="replicas-max-default-min",
    ),
    pytest.param(
        edit("    tensorrt: {}\n", "    tensorrt: {}\n    warmup: {batch_sizes: [1]}\n"),
        [
            "bp.yaml:34:13: error: models.rank.warmup: warm-up requests need the model's input names and shapes; declare them under tensorrt.inputs (name: {min, opt, max}), or remove warmup"
        ],
        id="warmup",
    ),
    pytest.param(
        edit("cluster: {create: true}", "cluster: {create: true, vpc_cidr: 10.64.0.1/16}"),
        [
            "bp.yaml:11:39: error: environments.stg.cluster.vpc_cidr: '10.64.0.1/16' has host bits set (the network is 10.64.0.0/16); write the network address, e.g. 10.64.0.0/16"
        ],
        id="vpc-host-bits",
    ),
    pytest.param(
        edit(
            "cluster: {existing: prod-gke}", "cluster: {create: true, kubernetes_version: '1.32'}"
        ),
        [
            "bp.yaml:18:49: error: environments.prod.cluster.kubernetes_version: GKE 1.32 has no zonal affinity for internal load balancers, so clients' connections would cross zones (it needs GKE 1.33.3-gke.1392000 or later); use 1.33 or later"
        ],
        id="gke-zonal-affinity-version",
    ),
    pytest.param(
        edit(
            "cluster: {existing: prod-gke}", "cluster: {create: true, kubernetes_version: '1.34'}"
        ),
        [],
        id="gke-zonal-affinity-version-ok",
    ),
    pytest.param(
        alerts(
            f"    receivers:\n      - {{name: ml, slack: {SLACK}}}\n"
            "      - {name: ml, webhook: {url: {from_pulumi_config: hookUrl}}}\n"
        ),
        [
            "bp.yaml:39:16: error: observability.alerts.receivers[1].name: receiver name 'ml' is already used by receivers[0]; give each receiver its own name"
        ],
        id="alert-receiver-names-unique",
    ),
    pytest.param(
        alerts(f"    receivers:\n      - {{name: 'null', slack: {SLACK}}}\n"),
        [
            "bp.yaml:38:16: error: observability.alerts.receivers[0].name: receiver name 'null' is kube-prometheus-stack's own (its Watchdog alert goes there); choose another name"
        ],
        id="alert-receiver-null-reserved",
    ),
    pytest.param(
        alerts(
            f"    receivers:\n      - {{name: ml, slack: {SLACK}}}\n    route: {{receiver: oncall}}\n"
        ),
        [
            "bp.yaml:39:23: error: observability.alerts.route.receiver: no receiver is named 'oncall'; use one of ml"
        ],
        id="alert-route-receiver-exists",
    ),
    pytest.param(
        alerts("    route: {receiver: oncall}\n"),
        [
            "bp.yaml:37:23: error: observability.alerts.route.receiver: no receiver is named 'oncall'; add it under observability.alerts.receivers"
        ],
        id="alert-route-without-receivers",
    ),
    pytest.param(
        alerts(
            "    receivers:\n      - name: oncall\n        pagerduty:\n          routing_key:\n"
            "            from_secret_manager: projects/demo-prod/secrets/pd/versions/1\n"
        ),
        [
            "bp.yaml:41:34: error: observability.alerts.receivers[0].pagerduty.routing_key.from_secret_manager: a GCP Secret Manager secret cannot be read by an aws environment; use an AWS Secrets Manager ARN in the environment's own account"
        ],
        id="alert-secret-in-the-environments-cloud",
    ),
    pytest.param(
        alerts(
            f"    receivers:\n      - {{name: ml, slack: {SLACK}}}\n"
            "      - {name: oncall, pagerduty: {routing_key: {from_env: PD_KEY}}}\n"
            "    route: {receiver: oncall}\n"
        ),
        [],
        id="alert-receivers-ok",
    ),
    pytest.param(
        edit("cluster: {create: true}", "cluster: {create: true, vpc_cidr: 10.64.0.0/23}"),
        [
            "bp.yaml:11:39: error: environments.stg.cluster.vpc_cidr: 10.64.0.0/23 is too small for one private subnet per zone and public subnets for NAT; use a /22 or larger, e.g. 10.64.0.0/22"
        ],
        id="vpc-small",
    ),
    pytest.param(
        edit(
            "zones: [us-east-1a, us-east-1b]",
            "zones: [us-east-1a, us-east-1b, us-east-1c, us-east-1d, us-east-1e, us-east-1f, us-east-1g, us-east-1h]",
        ),
        [
            "bp.yaml:9:85: error: environments.stg.zones[6]: zone 'us-east-1g' does not exist in region us-east-1: no AWS account has it; use one of us-east-1a, us-east-1b, us-east-1c, us-east-1d, us-east-1e, us-east-1f (aws_zones.json, read from AWS's list of Availability Zone IDs on 2026-12-04)",
            "bp.yaml:9:97: error: environments.stg.zones[7]: zone 'us-east-1h' does not exist in region us-east-1: no AWS account has it; use one of us-east-1a, us-east-1b, us-east-1c, us-east-1d, us-east-1e, us-east-1f (aws_zones.json, read from AWS's list of Availability Zone IDs on 2026-12-04)",
            "bp.yaml:9:97: error: environments.stg.zones[7]: 8 zones do not fit the VPC layout (at most 7 zones, one private subnet each); use at most 7 zones",
        ],
        id="zones",
    ),
    pytest.param(
        edit(
            "load_balancer: {allowed_cidrs: [10.0.0.0/8]}",
            "load_balancer:\n  allowed_cidrs: [10.0.0.1/8, 'fd00::1/8', 192.168.0.0/16]",
        ),
        [
            "bp.yaml:5:19: error: load_balancer.allowed_cidrs[0]: '10.0.0.1/8' has host bits set (the network is 10.0.0.0/8); write a network address such as 10.0.0.0/8 or fd00::/8",
            "bp.yaml:5:31: error: load_balancer.allowed_cidrs[1]: 'fd00::1/8' has host bits set (the network is fd00::/8); write a network address such as 10.0.0.0/8 or fd00::/8",
        ],
        id="allowed-cidrs",
    ),
    pytest.param(
        BASE
        + "policies:\n  waivers:\n    - rule: warm-replicas\n      target: models.chat\n      reason: Staging has no customer traffic, so a cold start is fine.\n      expires: 2027-02-31\n",
        [
            "bp.yaml:40:16: error: policies.waivers[0].expires: 2027-02-31 is not a date in the calendar; use a day that exists in that month (YYYY-MM-DD)"
        ],
        id="waiver-date",
    ),
    pytest.param(
        BASE + "  chat-lb:\n    server: vllm\n    source: other/\n    pool: l4\n",
        [
            "bp.yaml:36:5: error: models.chat-lb: model 'chat-lb' and the load balancer of model 'chat' are both the Service 'chat-lb'; rename model 'chat-lb' (a model X owns the Services X and X-lb)"
        ],
        id="lb-collision",
    ),
    pytest.param(
        BASE + "  rank-grpc:\n    server: vllm\n    source: other/\n    pool: l4\n",
        [
            "bp.yaml:36:5: error: models.rank-grpc: model 'rank-grpc' and the gRPC Service of model 'rank' are both the Service 'rank-grpc'; rename model 'rank-grpc' (a model X exposing gRPC owns the Service X-grpc)"
        ],
        id="grpc-collision",
    ),
    pytest.param(
        edit("    tensorrt: {}\n", "    tensorrt: {}\n    expose: {protocol: http}\n")
        + "  rank-grpc:\n    server: vllm\n    source: other/\n    pool: l4\n",
        [],
        id="no-grpc-service-no-collision",
    ),
    pytest.param(
        edit("    tensorrt: {}\n", "    tensorrt: {}\n    response_cache: {backend: redis}\n")
        + "  rank-cache:\n    server: vllm\n    source: other/\n    pool: l4\n"
        + "  rank-cache-b:\n    server: vllm\n    source: other/\n    pool: l4\n",
        [
            "bp.yaml:37:5: error: models.rank-cache: model 'rank-cache' and the Redis response cache of model 'rank' both name objects 'rank-cache'; rename model 'rank-cache' (a model X with a Redis cache owns the names X-cache and X-cache-*)",
            "bp.yaml:41:5: error: models.rank-cache-b: model 'rank-cache-b' and the Redis response cache of model 'rank' both name objects 'rank-cache-b'; rename model 'rank-cache-b' (a model X with a Redis cache owns the names X-cache and X-cache-*)",
        ],
        id="redis-cache-collision",
    ),
    pytest.param(
        BASE + "  rank-cache:\n    server: vllm\n    source: other/\n    pool: l4\n",
        [],
        id="no-redis-cache-no-collision",
    ),
    # Objects no model owns (names in `naming`): a pool's spare-GPU placeholder Deployments
    # and the weight-staging Job and NetworkPolicy.
    pytest.param(
        BASE + "  l4-spare-gpus-us-east-1a:\n    server: vllm\n    source: other/\n    pool: l4\n",
        [
            "bp.yaml:36:5: error: models.l4-spare-gpus-us-east-1a: model 'l4-spare-gpus-us-east-1a' has the name form l4-spare-gpus-<zone> of the Deployments holding the spare GPUs of pool 'l4': both would be the Deployment of that name; rename model 'l4-spare-gpus-us-east-1a' (a pool P owns the Deployment names P-spare-gpus-<zone>)"
        ],
        id="spare-gpus-collision",
    ),
    pytest.param(
        BASE + "  weights-0a1b2c3d4e:\n    server: vllm\n    source: other/\n    pool: l4\n",
        [
            "bp.yaml:36:5: error: models.weights-0a1b2c3d4e: model 'weights-0a1b2c3d4e' has the name form weights-<10 hex digits> of the Job and NetworkPolicy staging an hf:// source: its NetworkPolicy could be theirs; rename model 'weights-0a1b2c3d4e' (names weights-<10 hex digits> are kept for weight staging)"
        ],
        id="weights-collision",
    ),
    pytest.param(
        BASE
        + "  weights-classifier:\n    server: vllm\n    source: other/\n    pool: l4\n"
        + "  l4-image-prepull:\n    server: vllm\n    source: other/\n    pool: l4\n",
        [],
        id="no-staging-or-daemon-set-collision",
    ),
    # A custom Triton image must name the NGC release it is built from: the engine is built
    # with that release's TensorRT, and an engine loads only in the TensorRT that built it
    # (TensorRT support matrix, "Engine Portability").
    pytest.param(
        edit(
            "    tensorrt: {}\n",
            "    tensorrt: {}\n    image: registry.example.com/ml/triton:1.4\n",
        ),
        [
            'bp.yaml:34:12: error: models.rank.image: registry.example.com/ml/triton:1.4 is not an NGC Triton image, so the TensorRT it runs (which must build the model\'s engine) is unknown; add base_release: "YY.MM", the NGC release of the nvcr.io/nvidia/tritonserver image it is built from (the engine is then built with nvcr.io/nvidia/tensorrt:<base_release>-py3)'
        ],
        id="custom-image-without-release",
    ),
    pytest.param(
        edit(
            "    tensorrt: {}\n",
            '    tensorrt: {}\n    image: registry.example.com/ml/triton:1.4\n    base_release: "25.06"\n',
        ),
        [],
        id="custom-image-with-release",
    ),
    pytest.param(
        edit(
            "    tensorrt: {}\n",
            '    tensorrt: {}\n    image: nvcr.io/nvidia/tritonserver:25.06-py3\n    base_release: "25.08"\n',
        ),
        [
            'bp.yaml:35:19: error: models.rank.base_release: image nvcr.io/nvidia/tritonserver:25.06-py3 is NGC release 25.06, not 25.08; remove base_release, or set it to "25.06"'
        ],
        id="ngc-image-other-release",
    ),
    pytest.param(
        edit("    tensorrt: {}\n", '    tensorrt: {}\n    base_release: "25.08"\n'),
        [
            "bp.yaml:34:19: error: models.rank.base_release: base_release names the release a model's own image is built from, and this model names no image; remove base_release (the model runs the Triton of versions.triton)"
        ],
        id="release-without-image",
    ),
    pytest.param(
        edit(
            "    tensorrt: {}\n",
            "    tensorrt: {}\n    image: registry.example.com/ml/triton:1\n    base_release: v0.33.0\n",
        ),
        [
            'bp.yaml:35:19: error: models.rank.base_release: v0.33.0 is no NGC release: base_release of a Triton image is the YY.MM of the nvcr.io/nvidia/tritonserver image it is built from; write it as "YY.MM", such as "26.02"'
        ],
        id="vllm-release-on-triton",
    ),
    pytest.param(
        edit(
            "    replicas: {min: 2, max: 4}\n",
            '    replicas: {min: 2, max: 4}\n    base_release: "25.08"\n',
        ),
        [
            "bp.yaml:29:19: error: models.chat.base_release: base_release names the release a model's own image is built from, and this model names no image; remove base_release (the model runs the vLLM of versions.vllm)"
        ],
        id="release-on-vllm",
    ),
    # ONNX external data lives beside the model ("location ... relative to the directory the
    # ONNX model is stored in", https://onnx.ai/onnx/repo-docs/ExternalData.html): the engine
    # build fetches the model's directory, so a model directly in the store is refused.
    pytest.param(
        edit("source: rank/model.onnx", "source: model.onnx"),
        [
            "bp.yaml:31:13: error: models.rank.source: model.onnx is fetched with its whole folder (an ONNX model's external data files are read relative to it: https://onnx.ai/onnx/repo-docs/ExternalData.html), and its folder is the model store s3://models-use1/; keep each model file in a folder of its own: <store>/<model dir>/model.onnx",
            "bp.yaml:31:13: error: models.rank.source: model.onnx is fetched with its whole folder (an ONNX model's external data files are read relative to it: https://onnx.ai/onnx/repo-docs/ExternalData.html), and its folder is the model store gs://models-usc1/; keep each model file in a folder of its own: <store>/<model dir>/model.onnx",
        ],
        id="onnx-at-store-root",
    ),
    pytest.param(
        edit("name: demo", "name: monitoring"),
        [
            "bp.yaml:3:7: error: name: the blueprint name 'monitoring' is also the namespace of its serving objects, and namespace 'monitoring' belongs to Kubernetes or a cluster add-on; choose another name (the kube- prefix and default, kube-system, kube-public, kube-node-lease, gpu-operator, keda and monitoring are taken)"
        ],
        id="namespace",
    ),
    pytest.param(
        edit("name: demo", "name: kube-apps"),
        [
            "bp.yaml:3:7: error: name: the blueprint name 'kube-apps' is also the namespace of its serving objects, and namespace 'kube-apps' belongs to Kubernetes or a cluster add-on; choose another name (the kube- prefix and default, kube-system, kube-public, kube-node-lease, gpu-operator, keda and monitoring are taken)"
        ],
        id="kube-prefix",
    ),
    pytest.param(
        edit("    gpu: nvidia-l4\n", "    gpu: nvidia-l4\n    instance_type: g5.2xlarge\n"),
        [
            "bp.yaml:22:20: error: gpu_pools.l4.instance_type: g5.2xlarge carries nvidia-a10g, not the pool's nvidia-l4 (environment stg, aws); use a type with nvidia-l4 on aws, such as g6.2xlarge, g6.12xlarge, g6.48xlarge, or remove instance_type",
            "bp.yaml:22:20: error: gpu_pools.l4.instance_type: g5.2xlarge carries no catalog GPU, not the pool's nvidia-l4 (environment prod, gcp); use a type with nvidia-l4 on gcp, such as g2-standard-8, g2-standard-24, g2-standard-48, g2-standard-96, or remove instance_type",
        ],
        id="instance-wrong-gpu",
    ),
    pytest.param(
        edit("    gpu: nvidia-l4\n", "    gpu: nvidia-l4\n    instance_type: g6.12xlarge\n"),
        [
            "bp.yaml:22:20: error: gpu_pools.l4.instance_type: g6.12xlarge has 4 x nvidia-l4, but gpus_per_node is 1 (environment stg); set gpus_per_node: 4, or use g6.2xlarge",
            "bp.yaml:22:20: error: gpu_pools.l4.instance_type: g6.12xlarge carries no catalog GPU, not the pool's nvidia-l4 (environment prod, gcp); use a type with nvidia-l4 on gcp, such as g2-standard-8, g2-standard-24, g2-standard-48, g2-standard-96, or remove instance_type",
        ],
        id="instance-wrong-count",
    ),
    pytest.param(
        edit("    gpu: nvidia-l4\n", "    gpu: nvidia-l4\n    instance_type: m5.large\n"),
        [
            "bp.yaml:22:20: error: gpu_pools.l4.instance_type: m5.large carries no catalog GPU, not the pool's nvidia-l4 (environment stg, aws); use a type with nvidia-l4 on aws, such as g6.2xlarge, g6.12xlarge, g6.48xlarge, or remove instance_type",
            "bp.yaml:22:20: error: gpu_pools.l4.instance_type: m5.large carries no catalog GPU, not the pool's nvidia-l4 (environment prod, gcp); use a type with nvidia-l4 on gcp, such as g2-standard-8, g2-standard-24, g2-standard-48, g2-standard-96, or remove instance_type",
        ],
        id="instance-unknown",
    ),
    pytest.param(
        edit("    gpu: nvidia-l4\n", "    gpu: nvidia-a10g\n    instance_type: g5.2xlarge\n"),
        [
            "bp.yaml:21:10: error: gpu_pools.l4.gpu: nvidia-a10g is not offered on gcp (environment prod); choose a GPU available there (see `inferplane catalog`)"
        ],
        id="gpu-not-on-gcp",
    ),
    pytest.param(
        edit(
            "    replicas: {min: 2, max: 4}\n",
            "    replicas: {min: 2, max: 4}\n    secrets:\n      hf_token: {from_secret_manager: 'projects/demo-prod/secrets/hf/versions/1'}\n",
        ),
        [
            # One check owns this (inferplane.blueprint.checks.semantic_secrets._secret_owner).
            "bp.yaml:30:39: error: models.chat.secrets.hf_token.from_secret_manager: a GCP Secret Manager secret cannot be read by an aws environment; use an AWS Secrets Manager ARN in the environment's own account"
        ],
        id="secret-cloud",
    ),
    pytest.param(
        edit(
            "    replicas: {min: 2, max: 4}\n",
            "    replicas: {min: 2, max: 4}\n    precision: int8\n",
        ),
        [
            "bp.yaml:29:16: error: models.chat.precision: vLLM cannot quantize weights to int8 on load; serve a checkpoint quantized to int8 and name its method in vllm.quantization (e.g. gptq, awq or compressed-tensors), or use precision fp16, bf16 or fp8"
        ],
        id="int8-vllm",
    ),
    pytest.param(
        edit(
            "    replicas: {min: 2, max: 4}\n",
            "    replicas: {min: 2, max: 4}\n    precision: int8\n    vllm: {quantization: compressed-tensors}\n",
        ),
        [],
        id="int8-vllm-ok",
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_refused_with_exact_message(text: str, expected: list[str]) -> None:
    assert diagnostics(text) == expected


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("nvidia-h100", "did you mean `nvidia-h100-80gb`?"),
        ("nvidia-a100", "did you mean `nvidia-a100-40gb` or `nvidia-a100-80gb`?"),
        ("a100-80gb", "did you mean `nvidia-a100-80gb`?"),
        ("tesla-t4", "did you mean `nvidia-t4`?"),
        ("nvidia-h200-141gb", "did you mean `nvidia-h200`?"),
        ("tpu-v5", "choose one of these values"),
    ],
)
def test_gpu_did_you_mean_by_family_and_memory(written: str, hint: str) -> None:
    from inferplane.blueprint.loading.loader import load_text
    from inferplane.blueprint.loading.schema import validate_document

    doc = load_text(edit("gpu: nvidia-l4", f"gpu: {written}"), "bp.yaml")
    (problem,) = validate_document(doc)
    assert problem.format() == (
        f'bp.yaml:21:10: error: gpu_pools.l4.gpu: "{written}" is not one of nvidia-a100-40gb, '
        "nvidia-a100-80gb, nvidia-a10g, nvidia-b200, nvidia-h100-80gb, nvidia-h200, "
        f"nvidia-l4, nvidia-l40s, nvidia-t4; {hint}"
    )


def test_base_still_valid() -> None:
    assert diagnostics(BASE) == []


def test_an_attached_cluster_needs_allowed_cidrs() -> None:
    """Its VPC range is not known: the NetworkPolicies would otherwise admit a guess."""
    assert diagnostics(
        edit(
            "load_balancer: {allowed_cidrs: [10.0.0.0/8]}   # required on the attached prod cluster\n",
            "",
        )
    ) == [
        "bp.yaml:17:25: error: environments.prod.cluster.existing: an attached cluster "
        "(`cluster.existing`) needs `load_balancer.allowed_cidrs`: inferplane does not know its "
        "VPC's range, and the models' NetworkPolicies admit only the ranges listed; add "
        "`load_balancer: {allowed_cidrs: [<client range>]}` (under environments.prod.overrides "
        "for this environment only)"
    ]


def test_allowed_cidrs_in_the_attached_environment_s_overrides_suffice() -> None:
    text = edit(
        "load_balancer: {allowed_cidrs: [10.0.0.0/8]}   # required on the attached prod cluster\n",
        "",
    )
    text = edit(
        "    cluster: {existing: prod-gke}\n",
        "    cluster: {existing: prod-gke}\n"
        "    overrides: {load_balancer: {allowed_cidrs: [10.128.0.0/9]}}\n",
        text,
    )
    assert diagnostics(text) == []
