"""The blueprint schema as a contract, and the exact wording of its diagnostics."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from inferplane.blueprint import catalog, defaults, model
from inferplane.blueprint.loading import overrides
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import schema, validate_document, validator
from inferplane.blueprint.loading.schema_dialect import BlueprintValidator, js_regex
from inferplane.blueprint.source import Document, SourceMap

BLUEPRINTS = sorted((Path(__file__).parents[2] / "blueprints").glob("*.yaml"))

# Line numbers below are 1-based lines of this text; every case changes one line.
GOLDEN = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  staging:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a]
    model_store: s3://demo-models/
    cluster: {create: true, kubernetes_version: "1.33"}
    overrides:
      models:
        chat: {replicas: {min: 0}}
  prod:
    cloud: gcp
    project: demo-prod
    region: us-central1
    zones: [us-central1-a, us-central1-b]
    model_store: gs://demo-models/
    cluster: {existing: prod-gke}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 1, max: 4}
  h100:
    gpu: nvidia-h100-80gb
    gpus_per_node: 8
    sharing: mig
    mig_profile: 3g.40gb
models:
  chat:
    server: vllm
    source: hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f
    pool: l4
    vllm: {max_model_len: 8192, gpu_memory_utilization: 0.9}
    secrets:
      hf_token: {from_env: HF_TOKEN}
  ranker:
    server: triton
    source: reranker/model.onnx
    pool: l4
    tensorrt:
      inputs:
        input_ids: {min: [1, 128], opt: [8, 128], max: [32, 512]}
    batching: {max_batch_size: 32, max_queue_delay_us: 2000}
versions:
  triton: "26.02"
policies:
  waivers:
    - rule: warm-replicas
      target: models.chat
      environments: [staging]
      reason: Staging has no customer traffic.
      expires: 2027-03-31
"""


def problems(old: str, new: str) -> list[str]:
    """The formatted diagnostics of GOLDEN with `old` (which must occur) replaced by `new`."""
    assert old in GOLDEN, old
    doc = load_text(GOLDEN.replace(old, new, 1), "bp.yaml")
    return [d.format() for d in validate_document(doc)]


# --- the schema as a contract ------------------------------------------------------------
def subschemas(node: Any, path: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object inside `node`, with a JSON-pointer-like path."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key in ("properties", "$defs", "patternProperties", "dependentSchemas"):
                for name, sub in value.items():
                    yield from subschemas(sub, f"{path}/{key}/{name}")
            elif key in (
                "items",
                "additionalProperties",
                "propertyNames",
                "not",
                "if",
                "then",
                "else",
                "contains",
            ):
                yield from subschemas(value, f"{path}/{key}")
            elif key in ("allOf", "anyOf", "oneOf", "prefixItems"):
                for i, sub in enumerate(value):
                    yield from subschemas(sub, f"{path}/{key}/{i}")


def declared_properties(node: Any, path: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Properties where a field is declared, not those that conditions or checks mention."""
    if not isinstance(node, dict):
        return
    for name, sub in node.get("properties", {}).items():
        yield f"{path}/properties/{name}", sub
        yield from declared_properties(sub, f"{path}/properties/{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from declared_properties(node[key], f"{path}/{key}")
    for name, sub in node.get("$defs", {}).items():
        yield from declared_properties(sub, f"{path}/$defs/{name}")


def deref(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    return {**deref(schema()["$defs"][ref.removeprefix("#/$defs/")]), **node}


def test_schema_is_valid_draft_2020_12_with_its_id() -> None:
    Draft202012Validator.check_schema(schema())
    assert schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema()["$id"] == "https://inferplane.dev/schema/blueprint/v1.json"


def test_every_property_has_a_description() -> None:
    missing = [p for p, sub in declared_properties(schema()) if not sub.get("description")]
    assert missing == []


def test_every_object_refuses_unknown_keys() -> None:
    loose = [
        path
        for path, sub in subschemas(schema())
        if sub.get("type") == "object"
        and sub.get("additionalProperties") is not False
        and not (
            isinstance(sub.get("additionalProperties"), dict)
            and "$ref" in sub["additionalProperties"]
            and "propertyNames" in sub
        )
    ]
    assert loose == []


def test_every_number_is_bounded_on_both_sides() -> None:
    unbounded = [
        path
        for path, sub in subschemas(schema())
        if sub.get("type") in ("integer", "number")
        and not ("maximum" in sub and ("minimum" in sub or "exclusiveMinimum" in sub))
    ]
    assert unbounded == []


def test_every_pattern_compiles_and_explains_its_expected_form() -> None:
    for path, sub in subschemas(schema()):
        if "pattern" in sub:
            re.compile(sub["pattern"])
            has_wording = "x-format-hint" in sub or "pattern" in sub.get("x-errors", {})
            # Inside `not` the wording is the parent's; an `if` only selects a rule.
            assert has_wording or path.endswith("/not") or "/if" in path, path


def run_node(script: str, data: Any) -> Any:
    """`script` under node with `data` as JSON on stdin; its JSON output. Skips without node,
    except under CI, where node is installed (Debian package nodejs)."""
    if shutil.which("node") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is required under CI (Debian package nodejs)")
        pytest.skip("needs node to run ECMAScript regexes")
    run = subprocess.run(
        ["node", "-e", script],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(run.stdout)


def test_every_pattern_is_also_an_ecmascript_regex_for_editors() -> None:
    # Editors (yaml-language-server) evaluate patterns as JavaScript regexes, not Python ones.
    patterns = sorted({sub["pattern"] for _, sub in subschemas(schema()) if "pattern" in sub})
    script = (
        "const bad = JSON.parse(require('fs').readFileSync(0, 'utf8')).filter(p => "
        "{ try { new RegExp(p, 'u'); return false; } catch (e) { return true; } });"
        "process.stdout.write(JSON.stringify(bad));"
    )
    assert run_node(script, patterns) == []


def test_custom_wording_names_keywords_of_its_own_subschema() -> None:
    for path, sub in subschemas(schema()):
        for keyword, wording in sub.get("x-errors", {}).items():
            assert keyword in sub, (path, keyword)
            assert set(wording) <= {"message", "hint"} and wording["message"], path


def test_every_example_is_valid() -> None:
    for path, sub in subschemas(schema()):
        for example in sub.get("examples", []):
            assert validator().evolve(schema=sub).is_valid(example), (path, example)


def test_names_are_dns_labels_with_their_length_limits() -> None:
    defs = schema()["$defs"]
    limits = {"blueprintName": 24, "environmentName": 16, "poolName": 16, "modelName": 40}
    for name, limit in limits.items():
        # A blueprint's name has no `--`: `<BLUEPRINT>__` is one blueprint's variable prefix.
        dns = "^[a-z](-?[a-z0-9])*$" if name == "blueprintName" else "^[a-z]([-a-z0-9]*[a-z0-9])?$"
        assert defs[name]["pattern"] == dns
        assert defs[name]["maxLength"] == limit
        assert str(limit) in defs[name]["description"]


def test_gpu_enum_is_the_catalog() -> None:
    assert schema()["$defs"]["gpuPool"]["properties"]["gpu"]["enum"] == sorted(catalog.GPUS)


@pytest.mark.parametrize(
    ("definition", "model_class"),
    [
        ("vllm", model.VllmSettings),
        ("versions", model.Versions),
        ("slo", model.Slo),
        ("batching", model.Batching),
        ("tensorrt", model.TensorRt),
        ("warmup", model.Warmup),
        ("responseCache", model.ResponseCache),
        ("autoscalingSignal", model.Signal),
    ],
)
def test_sections_have_the_fields_of_the_resolved_model(definition: str, model_class: type) -> None:
    fields = {f.name for f in dataclasses.fields(model_class)}
    assert set(schema()["$defs"][definition]["properties"]) == fields


def test_overrides_take_the_sections_resolve_merges() -> None:
    assert tuple(schema()["$defs"]["overrides"]["properties"]) == overrides.OVERRIDABLE


def test_versions_default_to_the_pins_and_the_pins_match_their_patterns() -> None:
    props = schema()["$defs"]["versions"]["properties"]
    assert set(props) == set(defaults.VERSIONS)
    for key, pin in defaults.VERSIONS.items():
        assert f"Default: {pin}." in props[key]["description"]
        assert re.search(props[key]["pattern"], pin), key


@pytest.mark.parametrize(
    ("definition", "prop", "default"),
    [
        ("gpuPool", "gpus_per_node", defaults.POOL_GPUS_PER_NODE),
        ("gpuPool", "capacity", defaults.POOL_CAPACITY),
        ("gpuPool", "sharing", defaults.POOL_SHARING),
        ("gpuPool", "disk_gib", defaults.POOL_DISK_GIB),
        ("gpuPool", "time_slices", defaults.POOL_TIME_SLICES),
        ("model", "gpus", defaults.MODEL_GPUS),
        ("model", "latency_class", defaults.MODEL_LATENCY_CLASS),
        ("model", "precision", defaults.MODEL_PRECISION),
        ("model", "startup_timeout_s", defaults.STARTUP_TIMEOUT_S),
        ("model", "max_request_s", defaults.MAX_REQUEST_S),
        ("autoscalingSettings", "metric", defaults.MODEL_AUTOSCALING_METRIC),
        ("autoscalingSettings", "target", defaults.MODEL_AUTOSCALING_TARGET),
        ("autoscalingSettings", "scale_down_stabilization_s", defaults.SCALE_DOWN_STABILIZATION_S),
        ("tensorrt", "builder_optimization_level", defaults.TENSORRT_BUILDER_OPTIMIZATION_LEVEL),
        ("responseCache", "size_mb", defaults.RESPONSE_CACHE_SIZE_MB),
        ("batching", "max_queue_delay_us", defaults.BATCHING_MAX_QUEUE_DELAY_US),
        ("cluster", "kubernetes_version", defaults.KUBERNETES_VERSION),
        ("cluster", "vpc_cidr", defaults.VPC_CIDR),
        ("loadBalancer", "scheme", defaults.LB_SCHEME),
    ],
)
def test_descriptions_state_the_default_of_defaults_py(
    definition: str, prop: str, default: object
) -> None:
    assert f"Default: {default}" in schema()["$defs"][definition]["properties"][prop]["description"]


def test_default_replicas_are_described_in_words() -> None:
    text = schema()["$defs"]["model"]["properties"]["replicas"]["description"]
    assert "Default: realtime: one warm replica per zone of the model's pool" in text
    assert defaults.default_replicas(True, 1) == (1, 2)  # "up to twice that (at least 2)"
    assert defaults.default_replicas(False, 3) == (0, 2)  # "batch: 0 to 2"


def test_integers_refuse_floats_and_numbers_refuse_booleans() -> None:
    integer = BlueprintValidator({"type": "integer"})
    number = BlueprintValidator({"type": "number"})
    assert integer.is_valid(1) and not integer.is_valid(1.0) and not integer.is_valid(True)
    assert number.is_valid(1) and number.is_valid(0.5) and not number.is_valid(False)
    assert not integer.is_valid("1")


# --- whole blueprints ------------------------------------------------------------------
@pytest.mark.parametrize("path", BLUEPRINTS, ids=lambda p: p.name)
def test_bundled_blueprints_validate_without_diagnostics(path: Path) -> None:
    doc = load_text(path.read_text(encoding="utf-8"), str(path))
    assert validate_document(doc) == []


def test_golden_blueprint_is_valid() -> None:
    assert problems("name: demo", "name: demo") == []


def test_a_blueprint_name_with_two_hyphens_in_a_row_is_refused() -> None:
    [message] = problems("name: demo", "name: team--x")
    assert message.startswith('bp.yaml:3:7: error: name: invalid value "team--x"; ')
    assert "single '-' (never two in a row)" in message


# --- the exact wording of each class of error ------------------------------------------
@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            "max_queue_delay_us: 2000",
            "max_queue_delay: 2000",
            "bp.yaml:45:36: error: models.ranker.batching.max_queue_delay: unknown key "
            "`max_queue_delay`; did you mean `max_queue_delay_us`?",
            id="unknown-key-did-you-mean",
        ),
        pytest.param(
            "max_queue_delay_us: 2000",
            "maxQueueDelayUs: 2000",
            "bp.yaml:45:36: error: models.ranker.batching.maxQueueDelayUs: unknown key "
            "`maxQueueDelayUs`; did you mean `max_queue_delay_us`?",
            id="unknown-key-camel-case",
        ),
        pytest.param(
            "    pool: l4\n    tensorrt:",
            "    pool: l4\n    flavour: blue\n    tensorrt:",
            "bp.yaml:42:5: error: models.ranker.flavour: unknown key `flavour`; allowed here: "
            "server, source, pool, gpus, latency_class, precision, image, base_release, "
            "startup_timeout_s, max_request_s, replicas, autoscaling, slo, traffic, profile, "
            "budget, expose, secrets, vllm, model_info, tensorrt, tensorrt_llm, batching, "
            "response_cache, warmup, backend, accelerator, inputs, outputs, pipeline, shapes, "
            "routing, scale_out, rollout",
            id="unknown-key-lists-allowed-keys",
        ),
        pytest.param(
            "    source: reranker/model.onnx\n",
            "",
            "bp.yaml:38:3: error: models.ranker: missing required key `source`; add `source:`, "
            "e.g. `source: llama-3.1-8b-instruct/`",
            id="missing-required",
        ),
        pytest.param(
            "    cloud: gcp\n",
            "",
            "bp.yaml:14:3: error: environments.prod: missing required key `cloud`; add `cloud:` "
            "with one of aws, gcp, kubernetes",
            id="missing-required-enum",
        ),
        pytest.param(
            "    gpus_per_node: 8",
            "    gpus_per_node: 8.0",
            "bp.yaml:27:20: error: gpu_pools.h100.gpus_per_node: expected an integer, got 8.0 "
            "(a float); write it without a decimal point: 8",
            id="float-for-integer",
        ),
        pytest.param(
            "    gpus_per_node: 8",
            "    gpus_per_node: true",
            "bp.yaml:27:20: error: gpu_pools.h100.gpus_per_node: expected an integer, got true "
            "(a boolean); write a number; true and false are booleans",
            id="bool-for-integer",
        ),
        pytest.param(
            "    gpus_per_node: 8",
            '    gpus_per_node: "8"',
            'bp.yaml:27:20: error: gpu_pools.h100.gpus_per_node: expected an integer, got "8" '
            "(a string); remove the quotes: 8",
            id="string-for-integer",
        ),
        pytest.param(
            "    server: vllm",
            "    server: vlm",
            'bp.yaml:32:13: error: models.chat.server: "vlm" is not one of vllm, triton; '
            "did you mean `vllm`?",
            id="enum",
        ),
        pytest.param(
            "    gpu: nvidia-l4",
            "    gpu: tpu-v5",
            'bp.yaml:23:10: error: gpu_pools.l4.gpu: "tpu-v5" is not one of nvidia-a100-40gb, '
            "nvidia-a100-80gb, nvidia-a10g, nvidia-b200, nvidia-h100-80gb, nvidia-h200, "
            "nvidia-l4, nvidia-l40s, nvidia-t4; choose one of these values",
            id="enum-without-close-match",
        ),
        pytest.param(
            "  ranker:",
            "  Ranker:",
            'bp.yaml:38:3: error: models.Ranker: invalid model name "Ranker"; use lowercase '
            "letters, digits and '-', starting with a letter and ending with a letter or digit, "
            "at most 40 characters (it names the model's Deployment, Service and load balancer, "
            "so it must fit Kubernetes names together with the blueprint name)",
            id="bad-name",
        ),
        pytest.param(
            "  staging:",
            "  staging-environment:",
            "bp.yaml:5:3: error: environments.staging-environment: environment name "
            '"staging-environment" is 19 characters long, more than 16; use lowercase letters, '
            "digits and '-', starting with a letter and ending with a letter or digit, at most "
            "16 characters (it is the Pulumi stack name and part of every cloud resource name, "
            "such as the node group `<name>-<env>-<pool>-<zone>`)",
            id="too-long-name",
        ),
        pytest.param(
            "source: reranker/model.onnx",
            "source: ../reranker/model.onnx",
            "bp.yaml:40:13: error: models.ranker.source: a model source must not contain a `..` "
            "segment; give the path under model_store without `..`, or an absolute s3://, gs:// "
            "or hf:// source",
            id="source-dotdot",
        ),
        pytest.param(
            "source: reranker/model.onnx",
            "source: s3://AKIAEXAMPLE:secret@bucket/model.onnx",
            "bp.yaml:40:13: error: models.ranker.source: a model source must not contain "
            "credentials; remove `user:password@`: the cluster reads the bucket with its own "
            "read-only identity (IRSA on AWS, Workload Identity on GCP)",
            id="source-credentials",
        ),
        pytest.param(
            "source: hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f",
            "source: hf://meta-llama/Llama-3.1-8B-Instruct",
            'bp.yaml:33:13: error: models.chat.source: "hf://meta-llama/Llama-3.1-8B-Instruct" '
            "is not a pinned Hugging Face source; an hf:// source needs a revision: "
            "hf://org/name@<revision>, best a commit SHA (a tag or branch is staged once and "
            "never refreshed)",
            id="hf-without-revision",
        ),
        pytest.param(
            "hf_token: {from_env: HF_TOKEN}",
            "hf_token: hf_AbCdEf0123456789",
            "bp.yaml:37:17: error: models.chat.secrets.hf_token: a secret must be a reference, "
            "never a literal value (value not shown); remove the value from the file and write "
            "{from_env: VAR}, {from_pulumi_config: key} or {from_secret_manager: <ARN or "
            "projects/.../versions/N>}",
            id="literal-secret",
        ),
        pytest.param(
            'triton: "26.02"',
            "triton: 26.02",
            "bp.yaml:47:11: error: versions.triton: expected a string, got 26.02 (a float); "
            'quote it so YAML reads it as text: "26.02"',
            id="version-as-number",
        ),
        pytest.param(
            'triton: "26.02"',
            "triton: 25.10",
            "bp.yaml:47:11: error: versions.triton: expected a string, got 25.1 (a float); "
            'quote it so YAML keeps it as written, e.g. "26.02"',
            id="version-as-number-losing-a-digit",
        ),
    ],
)
def test_error_wording(old: str, new: str, expected: str) -> None:
    assert problems(old, new) == [expected]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            "apiVersion: inferplane/v1",
            "apiVersion: inferplane/v2",
            'bp.yaml:1:13: error: apiVersion: expected `inferplane/v1`, got "inferplane/v2"; '
            "write `apiVersion: inferplane/v1`",
            id="const",
        ),
        pytest.param(
            "name: demo",
            "name: demo\nlabels: {team: ml}",
            "bp.yaml:4:1: error: labels: unknown key `labels`; allowed here: apiVersion, kind, "
            "name, owner, environments, gpu_pools, models, load_balancer, observability, "
            "versions, policies",
            id="unknown-top-level-key",
        ),
        pytest.param(
            "    zones: [us-east-1a]",
            "    zones: us-east-1a",
            'bp.yaml:8:12: error: environments.staging.zones: expected a list, got "us-east-1a" '
            "(a string); write a list: [us-east-1a]",
            id="scalar-for-list",
        ),
        pytest.param(
            "zones: [us-central1-a, us-central1-b]",
            "zones: [us-central1-a, us-central1-a]",
            'bp.yaml:18:12: error: environments.prod.zones: "us-central1-a" is listed more than '
            "once; list each value once",
            id="duplicate-list-item",
        ),
        pytest.param(
            "zones: [us-east-1a]",
            "zones: [US-EAST-1A]",
            'bp.yaml:8:13: error: environments.staging.zones[0]: invalid value "US-EAST-1A"; '
            "write a zone name such as us-east-1a (AWS), us-central1-a (GCP) or zone-a "
            "(kubernetes): lowercase letters, digits and '-'",
            id="pattern-with-format-hint",
        ),
        pytest.param(
            "{max_batch_size: 32,",
            "{max_batch_size: 0,",
            "bp.yaml:45:32: error: models.ranker.batching.max_batch_size: 0 is less than the "
            "minimum 1; use a value from 1 to 4096",
            id="below-minimum",
        ),
        pytest.param(
            "gpu_memory_utilization: 0.9",
            "gpu_memory_utilization: 1.2",
            "bp.yaml:35:57: error: models.chat.vllm.gpu_memory_utilization: 1.2 is more than "
            "the maximum 0.99; use a value from 0.1 to 0.99",
            id="above-maximum",
        ),
        pytest.param(
            "    batching: {max_batch_size: 32, max_queue_delay_us: 2000}",
            "    batching: {max_queue_delay_us: 2000}",
            "bp.yaml:45:5: error: models.ranker.batching: missing required key `max_batch_size`; "
            "add `max_batch_size:`, e.g. `max_batch_size: 32`",
            id="missing-required-nested",
        ),
        pytest.param(
            "    vllm: {max_model_len: 8192, gpu_memory_utilization: 0.9}",
            "    batching: {max_batch_size: 0}",
            "bp.yaml:35:5: error: models.chat.batching: `batching` applies only to `server: "
            "triton` models; remove it: vLLM batches continuously; tune `vllm.max_num_seqs` "
            "instead",
            id="section-of-the-other-server",
        ),
        pytest.param(
            "    vllm: {max_model_len: 8192, gpu_memory_utilization: 0.9}",
            "    response_cache: {backend: redis}",
            "bp.yaml:35:5: error: models.chat.response_cache: `response_cache` applies only to "
            "`server: triton` models; remove it (vLLM reuses repeated prompt prefixes itself: "
            "`vllm.enable_prefix_caching`), or use `server: triton`",
            id="response-cache-on-vllm",
        ),
        pytest.param(
            "    batching: {max_batch_size: 32, max_queue_delay_us: 2000}",
            "    batching: {max_batch_size: 32, max_queue_delay_us: 2000}\n"
            "    response_cache: {backend: memcached}",
            'bp.yaml:46:31: error: models.ranker.response_cache.backend: "memcached" is not one '
            "of local, redis; choose one of these values",
            id="response-cache-backend",
        ),
        pytest.param(
            "    cluster: {existing: prod-gke}",
            "    cluster: {existing: prod-gke, create: true}",
            "bp.yaml:20:43: error: environments.prod.cluster.create: `create: true` contradicts "
            "`existing`; remove `create` to attach to the existing cluster, or remove `existing` "
            "to create a new one",
            id="cluster-create-and-existing",
        ),
        pytest.param(
            "    cluster: {existing: prod-gke}",
            '    cluster: {kubernetes_version: "1.33"}',
            "bp.yaml:20:5: error: environments.prod.cluster: the cluster says neither `create`, "
            "`existing` nor `context`; add `create: true` to create a cluster, `existing: "
            "<cluster name>` to use one, or on a kubernetes environment `context: <kubeconfig "
            "context>`",
            id="cluster-neither",
        ),
        pytest.param(
            "    cluster: {existing: prod-gke}",
            "    cluster: {create: false}",
            "bp.yaml:20:5: error: environments.prod.cluster: `create: false` needs `existing`; "
            "add `existing: <cluster name>`, or set `create: true`",
            id="cluster-create-false",
        ),
        pytest.param(
            "    project: demo-prod\n",
            "",
            "bp.yaml:14:3: error: environments.prod: a gcp environment needs `project`; add "
            "`project: <GCP project id>`",
            id="gcp-without-project",
        ),
        pytest.param(
            "    region: us-east-1",
            "    project: demo\n    region: us-east-1",
            "bp.yaml:7:5: error: environments.staging.project: `project` applies only to gcp "
            "environments; remove it: an aws environment runs in the account of its credentials",
            id="project-on-aws",
        ),
        pytest.param(
            "model_store: s3://demo-models/",
            "model_store: gs://demo-models/",
            "bp.yaml:9:18: error: environments.staging.model_store: an aws environment keeps its "
            "models in an s3:// bucket; use an S3 bucket in the environment's region, e.g. "
            "s3://bucket/models/",
            id="model-store-of-the-other-cloud",
        ),
        pytest.param(
            "model_store: s3://demo-models/",
            "model_store: s3://key:secret@demo-models/",
            "bp.yaml:9:18: error: environments.staging.model_store: a bucket URI must not "
            "contain credentials; remove `user:password@`: the cluster reads the bucket with its "
            "own read-only identity (IRSA on AWS, Workload Identity on GCP)",
            id="model-store-credentials",
        ),
        pytest.param(
            "    mig_profile: 3g.40gb\n",
            "",
            "bp.yaml:25:3: error: gpu_pools.h100: `sharing: mig` needs `mig_profile`; add "
            "`mig_profile:`, one of the GPU's MIG profiles such as 3g.40gb",
            id="mig-without-profile",
        ),
        pytest.param(
            "    nodes: {min: 1, max: 4}",
            "    nodes: {min: 1, max: 4}\n    mig_profile: 1g.10gb",
            "bp.yaml:25:5: error: gpu_pools.l4.mig_profile: `mig_profile` applies only with "
            "`sharing: mig`; remove it, or set `sharing: mig`",
            id="mig-profile-without-mig",
        ),
        pytest.param(
            "    pool: l4\n    vllm",
            "    pool: l4\n    autoscaling: {metric: ttft_p95_ms}\n    vllm",
            "bp.yaml:35:5: error: models.chat.autoscaling: `metric` needs a `target`; add "
            "`target:` (waiting requests for queue_depth, running plus waiting for "
            "concurrency, percent for gpu_utilization, milliseconds for the latency metrics)",
            id="metric-without-target",
        ),
        pytest.param(
            "    pool: l4\n    vllm",
            "    pool: l4\n    autoscaling: {target: 0}\n    vllm",
            "bp.yaml:35:27: error: models.chat.autoscaling.target: 0 is not greater than 0; "
            "use a value greater than 0 and at most 1000000",
            id="exclusive-minimum",
        ),
        pytest.param(
            "    pool: l4\n    vllm",
            "    pool: l4\n    image: vllm/vllm-openai:latest\n    vllm",
            "bp.yaml:35:12: error: models.chat.image: `latest` is not a pinned image; use a "
            "version tag or an @sha256: digest, so every replica runs the same server",
            id="image-latest",
        ),
        pytest.param(
            "    pool: l4\n    vllm",
            "    pool: l4\n    image: vllm/vllm-openai:v0.33.0@sha256:9b2e4c1d0a7f\n    vllm",
            "bp.yaml:35:12: error: models.chat.image: a sha256 digest is 64 hex characters; "
            "this one has 12; copy the whole digest: `docker buildx imagetools inspect <image>` "
            "prints it, or pin by tag alone",
            id="image-digest-cut-short",
        ),
        pytest.param(
            "hf_token: {from_env: HF_TOKEN}",
            "hf_token: {from_env: HF_TOKEN, from_pulumi_config: t}",
            "bp.yaml:37:17: error: models.chat.secrets.hf_token: a secret reference takes exactly "
            "one source; keep one of from_env, from_pulumi_config or from_secret_manager",
            id="secret-with-two-sources",
        ),
        pytest.param(
            "hf_token: {from_env: HF_TOKEN}",
            "hf_token: {}",
            "bp.yaml:37:7: error: models.chat.secrets.hf_token: the secret reference is empty; "
            "give one of from_env, from_pulumi_config or from_secret_manager",
            id="secret-empty",
        ),
        pytest.param(
            "      expires: 2027-03-31",
            "      expires: 2027-13-31",
            'bp.yaml:54:16: error: policies.waivers[0].expires: invalid value "2027-13-31"; '
            "write a date YYYY-MM-DD, such as 2027-03-31",
            id="waiver-date",
        ),
        pytest.param(
            "    nodes: {min: 1, max: 4}",
            "    nodes:",
            "bp.yaml:24:11: error: gpu_pools.l4.nodes: expected a mapping, got nothing (an empty "
            "value); write a mapping with keys such as min, max",
            id="empty-value",
        ),
        pytest.param(
            "      models:\n        chat: {replicas: {min: 0}}\n",
            "      models: {}\n",
            "bp.yaml:12:7: error: environments.staging.overrides.models: must not be empty; add "
            "at least one model name",
            id="empty-map",
        ),
        pytest.param(
            "cluster: {create: true,",
            'cluster: {create: "yes",',
            "bp.yaml:10:23: error: environments.staging.cluster.create: expected true or false, "
            'got "yes" (a string); write true or false, without quotes',
            id="string-for-boolean",
        ),
    ],
)
def test_more_error_wording(old: str, new: str, expected: str) -> None:
    assert problems(old, new) == [expected]


def test_a_redis_response_cache_on_triton_is_valid() -> None:
    old = "    batching: {max_batch_size: 32, max_queue_delay_us: 2000}"
    cache = "\n    response_cache: {enabled: true, backend: redis, size_mb: 512}"
    assert problems(old, old + cache) == []


def test_overrides_need_no_required_keys_but_keep_shapes_and_value_checks() -> None:
    relaxed = "ranker: {batching: {max_queue_delay_us: 500}}"  # no max_batch_size, server...
    assert problems("chat: {replicas: {min: 0}}", relaxed) == []
    assert problems("chat: {replicas: {min: 0}}", "chat: {replicas: {mn: 0}}") == [
        "bp.yaml:13:27: error: environments.staging.overrides.models.chat.replicas.mn: unknown "
        "key `mn`; did you mean `min`?"
    ]
    assert problems("chat: {replicas: {min: 0}}", "chat: {gpus: 1.0}") == [
        "bp.yaml:13:22: error: environments.staging.overrides.models.chat.gpus: expected an "
        "integer, got 1.0 (a float); write it without a decimal point: 1"
    ]
    assert problems("chat: {replicas: {min: 0}}", "chat: {secrets: {t: plain}}") == [
        "bp.yaml:13:29: error: environments.staging.overrides.models.chat.secrets.t: a secret "
        "must be a reference, never a literal value (value not shown); remove the value from "
        "the file and write {from_env: VAR}, {from_pulumi_config: key} or "
        "{from_secret_manager: <ARN or projects/.../versions/N>}"
    ]


@pytest.mark.parametrize(
    "secret",
    [
        "hf_token: hf_Sup3rS3cretValue",
        "hf_token: {from_env: hf_Sup3rS3cretValue}",
        "hf_token: {from_pulumi_config: 'hf_Sup3rS3cretValue!'}",
        "hf_token: {from_secret_manager: hf_Sup3rS3cretValue}",
        "hf_token: [hf_Sup3rS3cretValue]",
    ],
)
def test_a_secret_value_is_never_repeated(secret: str) -> None:
    found = problems("hf_token: {from_env: HF_TOKEN}", secret)
    assert len(found) == 1
    assert "Sup3rS3cret" not in found[0]


def test_each_problem_is_reported_once_in_file_order() -> None:
    text = (
        GOLDEN.replace("    gpus_per_node: 8", "    gpus_per_node: 8.5")
        .replace("source: reranker/model.onnx", "source: /abs/../x@y?z")
        .replace("max_queue_delay_us: 2000", "max_queue_delay: 2000")
        .replace("  ranker:", "  Ranker:")
    )
    found = [d.format() for d in validate_document(load_text(text, "bp.yaml"))]
    assert [f.split(": error: ")[0] for f in found] == [
        "bp.yaml:27:20",
        "bp.yaml:38:3",
        "bp.yaml:40:13",
        "bp.yaml:45:36",
    ]
    # The source breaks four rules; only the first one the schema states is reported.
    assert "must not contain a `..` segment" not in found[2]
    assert "query string" in found[2]


def test_an_unknown_key_inside_a_refused_key_is_not_reported_twice() -> None:
    found = problems(
        "    vllm: {max_model_len: 8192, gpu_memory_utilization: 0.9}",
        "    vllm: {max_model_len: 8192}\n    tensorrt: {colour: blue, workspace_mib: 1.5}",
    )
    assert found == [
        "bp.yaml:36:5: error: models.chat.tensorrt: `tensorrt` applies only to `server: triton` "
        "models; remove it: vLLM loads the model itself"
    ]


# --- robustness: any tree of YAML values yields diagnostics, never an exception ---------
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def golden_paths(node: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from golden_paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from golden_paths(value, (*path, i))


GOLDEN_DOC = load_text(GOLDEN, "bp.yaml")
GOLDEN_PATHS = [p for p in golden_paths(GOLDEN_DOC.data) if p]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GOLDEN_PATHS), json_values)
def test_any_replaced_value_gives_located_diagnostics(
    path: tuple[str | int, ...], value: Any
) -> None:
    data = copy.deepcopy(GOLDEN_DOC.data)
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    found = validate_document(Document(data, GOLDEN_DOC.source))
    for diag in found:
        assert diag.location.file == "bp.yaml" and diag.message
    assert len({d.format() for d in found}) == len(found)


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_any_document_gives_diagnostics(value: Any) -> None:
    found = validate_document(Document({"root": value}, SourceMap("x.yaml")))
    assert found and all(d.message for d in found)


def _pattern_cases() -> list[tuple[str, str]]:
    """(pattern, string) pairs around each pattern's edges: its examples, and each with a
    line break before or after it."""
    cases = set()
    for _, sub in subschemas(schema()):
        if "pattern" not in sub:
            continue
        samples = [str(e) for e in sub.get("examples", [])] or ["x", "latest", ":latest", "a/../b"]
        for sample in samples:
            for text in (sample, sample + "\n", "\n" + sample, sample + "\r\n", sample + "\n\n"):
                cases.add((sub["pattern"], text))
    return sorted(cases)


def test_patterns_match_the_whole_string_as_ecmascript_does() -> None:
    # Python's `$` also matches before a final line break: "ranker\n" matched
    # ^[a-z]([-a-z0-9]*[a-z0-9])?$ and reached scripts, configs and PromQL.
    name = schema()["$defs"]["modelName"]
    assert not validator().evolve(schema=name).is_valid("ranker\n")
    assert validator().evolve(schema=name).is_valid("ranker")
    assert js_regex(r"^a[$]\$$").search("a$$") and not js_regex(r"^a[$]\$$").search("a$$\n")


def test_python_and_ecmascript_agree_on_every_pattern() -> None:
    cases = _pattern_cases()
    script = (
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(cases.map(([p, s]) => new RegExp(p, 'u').test(s))));"
    )
    javascript = run_node(script, cases)
    python = [js_regex(p).search(s) is not None for p, s in cases]
    disagree = [c for c, js, py in zip(cases, javascript, python, strict=True) if js != py]
    assert disagree == []


def test_the_largest_blueprint_is_one_check_can_afford() -> None:
    # scripts/dev/bench_check.py: 512 models x 16 environments took ~25 min and 1.7 GiB per
    # process on 2 cores; 128 x 8 takes minutes and under 1 GiB. The caps are the latter.
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "dev"))
    from generate_blueprint import generate

    def errors(models: int, environments: int) -> list[str]:
        doc = load_text(generate(models, environments), "big.yaml")
        return [d.format() for d in validate_document(doc)]

    assert errors(128, 8) == []
    assert errors(129, 8) == [
        "big.yaml:83:3: error: models: has 129 entries; at most 128 are allowed; "
        "remove some of them"
    ]
    assert errors(128, 9) == [
        "big.yaml:6:3: error: environments: has 9 entries; at most 8 are allowed; "
        "remove some of them"
    ]
