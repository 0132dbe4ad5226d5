"""Semantic checks: one test per error class, asserting the exact diagnostic."""

from __future__ import annotations

import textwrap

import pytest

from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document

BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
load_balancer: {allowed_cidrs: [10.0.0.0/8]}   # required on the attached prod cluster
environments:
  stg:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    model_store: s3://models-use1/
    cluster: {create: true}
  prod:
    cloud: gcp
    project: demo-prod
    region: us-central1
    zones: [us-central1-a]
    model_store: gs://models-usc1/
    cluster: {existing: prod-gke}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 2, max: 4}
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
    return [d.format() for d in check(load_text(text, "bp.yaml"))]


def schema_errors(text: str) -> list[str]:
    """The schema's diagnostics of `text` (the semantic checks run only on a valid one)."""
    return [d.format() for d in validate_document(load_text(text, "bp.yaml"))]


def edit(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_base_is_valid() -> None:
    assert diagnostics(BASE) == []


def test_zone_of_another_region() -> None:
    text = edit("zones: [us-east-1a, us-east-1b]", "zones: [us-east-1a, us-west-2b]")
    assert diagnostics(text) == [
        "bp.yaml:9:25: error: environments.stg.zones[1]: zone 'us-west-2b' is not a zone of "
        "region us-east-1; use zones named like us-east-1a"
    ]


def test_zone_with_the_other_clouds_naming() -> None:
    text = edit("zones: [us-central1-a]", "zones: [us-central1a]")
    assert diagnostics(text) == [
        "bp.yaml:16:13: error: environments.prod.zones[0]: zone 'us-central1a' is not a zone "
        "of region us-central1; use zones named like us-central1-a"
    ]


def test_region_not_of_the_cloud() -> None:
    text = edit("region: us-central1", "region: us-east-1")
    text = edit("zones: [us-central1-a]", "zones: [us-east-1-a]", text)
    assert diagnostics(text)[0] == (
        "bp.yaml:15:13: error: environments.prod.region: 'us-east-1' is not a GCP region "
        "name; use a region such as us-central1"
    )


def test_unknown_pool() -> None:
    text = edit("    pool: l4\n    replicas", "    pool: l40\n    replicas")
    assert diagnostics(text) == [
        "bp.yaml:27:11: error: models.chat.pool: pool 'l40' is not defined; use one of: l4"
    ]


def test_replicas_min_over_max() -> None:
    text = edit("replicas: {min: 2, max: 4}", "replicas: {min: 5, max: 4}")
    assert diagnostics(text) == [
        "bp.yaml:28:21: error: models.chat.replicas.min: replicas.min (5) is greater than "
        "replicas.max (4); make min <= max"
    ]


def test_nodes_min_over_max() -> None:
    text = edit("nodes: {min: 2, max: 4}", "nodes: {min: 6, max: 4}")
    assert diagnostics(text) == [
        "bp.yaml:22:18: error: gpu_pools.l4.nodes.min: nodes.min (6) is greater than "
        "nodes.max (4); make min <= max"
    ]


def test_gpus_do_not_fit_a_node() -> None:
    text = edit("    pool: l4\n    replicas", "    pool: l4\n    gpus: 2\n    replicas")
    assert diagnostics(text) == [
        "bp.yaml:28:11: error: models.chat.gpus: 2 GPUs per replica do not fit one node of "
        "pool 'l4' (1 GPU per node); use gpus <= 1, or raise gpus_per_node of the pool"
    ]


def test_mig_needs_a_profile_and_a_mig_gpu() -> None:
    no_profile = edit(
        "    gpu: nvidia-l4\n",
        "    gpu: nvidia-h100-80gb\n    gpus_per_node: 8\n    sharing: mig\n",
    )
    assert diagnostics(no_profile) == [
        "bp.yaml:23:14: error: gpu_pools.l4.sharing: sharing: mig needs a `mig_profile`; add "
        "mig_profile: one of 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"
    ]
    wrong = edit("    sharing: mig\n", "    sharing: mig\n    mig_profile: 3g.20gb\n", no_profile)
    assert diagnostics(wrong) == [
        "bp.yaml:24:18: error: gpu_pools.l4.mig_profile: '3g.20gb' is not a MIG profile of "
        "nvidia-h100-80gb; use one of 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"
    ]
    l4 = edit(
        "    gpu: nvidia-l4\n", "    gpu: nvidia-l4\n    sharing: mig\n    mig_profile: 1g.5gb\n"
    )
    assert diagnostics(l4) == [
        "bp.yaml:22:14: error: gpu_pools.l4.sharing: nvidia-l4 does not support MIG; use "
        "sharing: exclusive, or a MIG-capable GPU (A100, H100, H200, B200)"
    ]


def test_triton_settings_on_vllm_and_vllm_settings_on_triton() -> None:
    text = edit("    source: llama/\n", "    source: llama/\n    batching: {max_batch_size: 4}\n")
    text = edit("    tensorrt: {}\n", "    tensorrt: {}\n    vllm: {max_num_seqs: 8}\n", text)
    assert diagnostics(text) == [
        "bp.yaml:27:15: error: models.chat.batching: `batching` only applies to server: "
        "triton; remove it, or set server: triton (this model uses vllm)",
        "bp.yaml:35:11: error: models.rank.vllm: `vllm` settings only apply to server: vllm; "
        "remove them, or set server: vllm (this model uses triton)",
    ]


def test_override_of_an_unknown_model_points_into_overrides() -> None:
    text = edit(
        "    cluster: {create: true}\n",
        "    cluster: {create: true}\n    overrides:\n      models:\n"
        "        chatt: {replicas: {min: 1}}\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:14:9: error: environments.stg.overrides.models.chatt: overrides models "
        "'chatt', which the blueprint does not define; define it under `models:` first, or "
        "use one of: chat, rank"
    ]


def test_error_set_by_an_override_points_at_the_override() -> None:
    text = edit(
        "    cluster: {create: true}\n",
        "    cluster: {create: true}\n    overrides:\n      models:\n"
        "        chat: {replicas: {min: 9}}\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:14:32: error: environments.stg.overrides.models.chat.replicas.min: "
        "replicas.min (9) is greater than replicas.max (4); make min <= max"
    ]


def test_pool_zones_must_be_zones_of_each_region() -> None:
    text = edit(
        "    nodes: {min: 2, max: 4}\n", "    nodes: {min: 2, max: 4}\n    zones: [us-east-1a]\n"
    )
    assert diagnostics(text) == [
        "bp.yaml:23:13: error: gpu_pools.l4.zones[0]: zone 'us-east-1a' is not a zone of "
        "region us-central1 (environment prod); use zones named like us-central1-a"
    ]


def test_gpu_not_offered_on_the_cloud() -> None:
    text = edit("    gpu: nvidia-l4\n", "    gpu: nvidia-a10g\n")
    assert diagnostics(text) == [
        "bp.yaml:21:10: error: gpu_pools.l4.gpu: nvidia-a10g is not offered on gcp; choose a "
        "GPU available there (see `inferplane catalog`)"
    ]


def test_cluster_needs_exactly_one_mode() -> None:
    text = edit("cluster: {create: true}", "cluster: {create: true, existing: x}")
    assert diagnostics(text) == [
        "bp.yaml:11:14: error: environments.stg.cluster: `create: true` and `existing` are "
        "both set; either create a cluster, or attach to an existing one by name"
    ]


def test_model_store_of_the_other_cloud() -> None:
    text = edit("model_store: gs://models-usc1/", "model_store: s3://models-usc1/")
    assert diagnostics(text) == [
        "bp.yaml:17:18: error: environments.prod.model_store: a gcp environment reads models "
        "from gs:// storage, not 's3://models-usc1/'; use a gs://bucket/prefix/ in "
        "us-central1 (same region: fast cold starts)"
    ]


def test_triton_cannot_load_from_hugging_face() -> None:
    text = edit("source: rank/model.onnx", "source: hf://org/rank@main")
    assert diagnostics(text) == [
        "bp.yaml:31:13: error: models.rank.source: Triton loads models from the model store, "
        "not hf://; upload the ONNX file under model_store and give its relative path; for "
        "an LLM checkpoint, add a `tensorrt_llm:` section"
    ]


def test_ttft_is_a_vllm_signal() -> None:
    text = edit("    tensorrt: {}\n", "    tensorrt: {}\n    slo: {ttft_p95_ms: 100}\n")
    assert diagnostics(text) == [
        "bp.yaml:34:24: error: models.rank.slo.ttft_p95_ms: time to first token is a vLLM "
        "signal; use slo.p95_ms for Triton"
    ]


def test_preferred_batch_size_over_max() -> None:
    text = edit(
        "max_batch_size: 8, max_queue_delay_us: 1000}",
        "max_batch_size: 8, preferred_batch_sizes: [4, 16]}",
    )
    assert diagnostics(text) == [
        "bp.yaml:34:62: error: models.rank.batching.preferred_batch_sizes[1]: preferred "
        "batch size 16 exceeds max_batch_size 8; use sizes <= 8"
    ]


def test_waiver_for_an_unknown_environment() -> None:
    text = BASE + textwrap.dedent("""\
        policies:
          waivers:
            - {rule: warm-replicas, target: models.chat, environments: [dev],
               reason: "Staging has no customer traffic", expires: 2030-01-01}
        """)
    assert diagnostics(text) == [
        "bp.yaml:37:65: error: policies.waivers[0].environments[0]: no environment named "
        "'dev'; use one of: stg, prod"
    ]


def test_an_error_in_the_base_is_reported_once() -> None:
    text = edit("replicas: {min: 2, max: 4}", "replicas: {min: 5, max: 4}")
    assert len(diagnostics(text)) == 1


def test_load_blueprint_raises_with_all_diagnostics(tmp_path: pytest.TempPathFactory) -> None:
    from inferplane.blueprint.resolution.resolve import load_blueprint

    path = tmp_path / "bp.yaml"  # type: ignore[operator]
    path.write_text(edit("nodes: {min: 2, max: 4}", "nodes: {min: 6, max: 4}"))
    with pytest.raises(BlueprintError) as info:
        load_blueprint(path)
    assert [d.path for d in info.value.diagnostics] == [("gpu_pools", "l4", "nodes", "min")]


def test_precision_the_gpu_cannot_run() -> None:
    t4 = edit("    gpu: nvidia-l4\n", "    gpu: nvidia-t4\n")
    text = edit("    source: llama/\n", "    source: llama/\n    precision: bf16\n", t4)
    assert diagnostics(text) == [
        "bp.yaml:27:16: error: models.chat.precision: nvidia-t4 has no bf16 support; use fp16 "
        "on this GPU"
    ]
    a100 = edit("    gpu: nvidia-l4\n", "    gpu: nvidia-a100-40gb\n    gpus_per_node: 8\n")
    text = edit("    tensorrt: {}\n", "    tensorrt: {}\n    precision: fp8\n", a100)
    assert diagnostics(text) == [
        "bp.yaml:35:16: error: models.rank.precision: TensorRT fp8 needs compute capability "
        "8.9+; nvidia-a100-40gb is 8.0; use fp16 or int8, or an L4/L40S/H100-class GPU"
    ]


def test_one_slice_per_replica_on_shared_gpus() -> None:
    mig = edit(
        "    gpu: nvidia-l4\n",
        "    gpu: nvidia-h100-80gb\n    gpus_per_node: 8\n    sharing: mig\n"
        "    mig_profile: 3g.40gb\n",
    )
    text = edit("    pool: l4\n    replicas", "    pool: l4\n    gpus: 2\n    replicas", mig)
    found = diagnostics(text)
    assert found[0] == (
        "bp.yaml:31:11: error: models.chat.gpus: a model on a mig pool uses exactly one MIG "
        "slice; set gpus: 1, or use a pool with sharing: exclusive for tensor parallelism"
    )
    # prod is on GKE, which refuses MIG pools (test_semantic_gke).
    assert len(found) == 2 and found[1].startswith(
        "bp.yaml:23:14: error: gpu_pools.l4.sharing: pool 'l4' "
    )


def test_engine_shapes_must_be_ordered_and_fit_the_batch() -> None:
    shapes = "    tensorrt:\n      inputs:\n        ids: {min: [1, 8], opt: [4, 4], max: [8, 16]}\n"
    text = edit("    tensorrt: {}\n", shapes)
    assert diagnostics(text) == [
        "bp.yaml:35:14: error: models.rank.tensorrt.inputs.ids: shapes must satisfy min <= opt "
        "<= max in every dimension (min [1, 8], opt [4, 4], max [8, 16]); fix the offending "
        "dimension"
    ]
    too_big = (
        "    tensorrt:\n      inputs:\n        ids: {min: [1, 8], opt: [4, 8], max: [16, 8]}\n"
    )
    assert diagnostics(edit("    tensorrt: {}\n", too_big)) == [
        "bp.yaml:35:46: error: models.rank.tensorrt.inputs.ids.max: the engine's max batch "
        "(16) exceeds batching.max_batch_size (8); make them equal, or lower the engine's max "
        "batch"
    ]


def test_tensorrt_needs_an_onnx_source_and_warmup_fits_the_batch() -> None:
    text = edit("source: rank/model.onnx", "source: rank/model.plan")
    text = edit(
        "    tensorrt: {}\n",
        "    tensorrt: {inputs: {x: {min: [1, 4], opt: [4, 4], max: [8, 4]}}}\n"
        "    warmup: {batch_sizes: [1, 32]}\n",
        text,
    )
    assert diagnostics(text) == [
        "bp.yaml:31:13: error: models.rank.source: a TensorRT engine is built from an ONNX "
        "file; point source at the model's .onnx file",
        "bp.yaml:34:31: error: models.rank.warmup.batch_sizes[1]: warm-up batch size 32 "
        "exceeds the model's max batch size 8; use sizes <= 8",
    ]


def test_vpc_cidr_only_for_a_created_cluster() -> None:
    text = edit(
        "cluster: {existing: prod-gke}", "cluster: {existing: prod-gke, vpc_cidr: 10.9.0.0/16}"
    )
    assert diagnostics(text) == [
        "bp.yaml:18:45: error: environments.prod.cluster.vpc_cidr: `vpc_cidr` only applies to a "
        "cluster inferplane creates; remove it; an existing cluster keeps its network"
    ]


def _waiver(target: str, reason: str) -> str:
    return BASE + textwrap.dedent(f"""\
        policies:
          waivers:
            - rule: warm-replicas
              target: {target}
              reason: "{reason}"
              expires: 2030-01-01
        """)


def test_a_waiver_target_must_exist() -> None:
    assert diagnostics(_waiver("models.chatt", "Staging has no customer traffic")) == [
        "bp.yaml:38:15: error: policies.waivers[0].target: no model named 'chatt'; use one of: "
        "models.chat, models.rank"
    ]
    assert diagnostics(_waiver("gpu_pools.a100", "Staging has no customer traffic")) == [
        "bp.yaml:38:15: error: policies.waivers[0].target: no GPU pool named 'a100'; use one "
        "of: gpu_pools.l4"
    ]
    for target in ("models.chat", "gpu_pools.l4", "load_balancer"):
        assert diagnostics(_waiver(target, "Staging has no customer traffic")) == []


@pytest.mark.parametrize(
    "reason",
    [
        "....................",
        "aaaaaaaaaaaaaaaaaaaaaaa",
        "ok ok ok ok ok ok ok",
        "x1 x2 x3 x4 x5 x6 x7",
    ],
)
def test_a_waiver_reason_must_say_something(reason: str) -> None:
    assert diagnostics(_waiver("models.chat", reason)) == [
        f"bp.yaml:39:15: error: policies.waivers[0].reason: the reason {reason!r} does not say "
        "why the exception is acceptable; write at least three words a reviewer can weigh "
        "(what is waived, why it is safe, what ends it)"
    ]


def test_an_override_puts_a_pool_outside_the_environments_zones() -> None:
    text = edit(
        "    cluster: {existing: prod-gke}\n",
        "    cluster: {existing: prod-gke}\n"
        "    overrides: {gpu_pools: {l4: {zones: [us-central1-c]}}}\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:19:42: error: environments.prod.overrides.gpu_pools.l4.zones[0]: zone "
        "'us-central1-c' is not one of environment prod's zones (us-central1-a), where its "
        "clients run: its replicas would serve them across zones; use a subset of "
        "us-central1-a, or add us-central1-c to environments.prod.zones"
    ]


def test_a_pool_in_a_subset_of_the_environments_zones_is_valid() -> None:
    text = edit(
        "    cluster: {create: true}\n",
        "    cluster: {create: true}\n    overrides: {gpu_pools: {l4: {zones: [us-east-1b]}}}\n",
    )
    assert diagnostics(text) == []
