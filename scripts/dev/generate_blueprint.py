"""Generate a large, valid blueprint for benchmarks: N models over M environments.

    python scripts/dev/generate_blueprint.py --models 128 --environments 8 > big.yaml

Environments alternate AWS and GCP regions, each with two zones; models alternate vLLM and
Triton (with TensorRT and batching) over two GPU pools, so every code path is exercised.
"""

from __future__ import annotations

import argparse
import sys

_AWS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1")
_GCP = {  # two zones of each region that offer both pools' GPUs (gcp_zones.json)
    "us-central1": ("us-central1-a", "us-central1-b"),
    "us-east4": ("us-east4-a", "us-east4-c"),
    "europe-west4": ("europe-west4-b", "europe-west4-c"),
    "asia-southeast1": ("asia-southeast1-b", "asia-southeast1-c"),
    "us-west1": ("us-west1-a", "us-west1-b"),
}


def generate(models: int, environments: int) -> str:
    lines = [
        "# yaml-language-server: $schema=schema/blueprint.schema.json",
        "apiVersion: inferplane/v1",
        "kind: Blueprint",
        "name: bench",
        "environments:",
    ]
    for i in range(environments):
        if i % 2 == 0:
            region = _AWS[(i // 2) % len(_AWS)]
            zones = f"[{region}a, {region}b]"
            lines += [
                f"  env{i}:",
                "    cloud: aws",
                f"    region: {region}",
                f"    zones: {zones}",
                f"    model_store: s3://bench-models-{i}/",
                "    cluster: {create: true}",
            ]
        else:
            region = list(_GCP)[(i // 2) % len(_GCP)]
            lines += [
                f"  env{i}:",
                "    cloud: gcp",
                "    project: bench-project",
                f"    region: {region}",
                f"    zones: [{', '.join(_GCP[region])}]",
                f"    model_store: gs://bench-models-{i}/",
                f"    cluster: {{existing: bench-{i}}}",
                "    overrides:",
                "      load_balancer: {allowed_cidrs: [10.0.0.0/8]}   # an attached cluster's",
                "      gpu_pools:",
                "        big: {nodes: {min: 1, max: 8}}",
            ]
    warm_per_zone = models  # each model keeps one warm replica (one GPU) per zone
    lines += [
        "gpu_pools:",
        "  l4:",
        "    gpu: nvidia-l4",
        f"    nodes: {{min: {warm_per_zone}, max: {min(2 * warm_per_zone, 1000)}}}",
        "  big:",
        "    gpu: nvidia-h100-80gb",
        "    gpus_per_node: 8",
        "    nodes: {min: 0, max: 4}",
        "models:",
    ]
    for j in range(models):
        if j % 2 == 0:
            lines += [
                f"  chat-{j}:",
                "    server: vllm",
                f"    source: llm-{j}/",
                "    pool: l4",
                "    precision: fp8",
                "    vllm: {max_model_len: 8192, max_num_seqs: 64}",
                "    replicas: {min: 2, max: 8}",
                "    autoscaling: {metric: queue_depth, target: 4}",
                "    slo: {p95_ms: 1500, ttft_p95_ms: 300}",
                "    expose: {protocol: http}",
            ]
        else:
            lines += [
                f"  rank-{j}:",
                "    server: triton",
                f"    source: rank-{j}/model.onnx",
                "    pool: l4",
                "    tensorrt:",
                "      inputs:",
                "        input_ids: {min: [1, 128], opt: [8, 128], max: [32, 512]}",
                "    batching: {max_batch_size: 32, max_queue_delay_us: 2000}",
                "    replicas: {min: 2, max: 6}",
                "    autoscaling: {metric: p95_latency_ms, target: 20}",
                "    slo: {p95_ms: 25}",
                "    expose: {protocol: grpc}",
            ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=128)
    parser.add_argument("--environments", type=int, default=8)
    args = parser.parse_args()
    sys.stdout.write(generate(args.models, args.environments))
    return 0


if __name__ == "__main__":
    sys.exit(main())
