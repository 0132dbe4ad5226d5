"""ModelServer under mocks: the serving pod, its rollout, drain, hardening, secrets, and the
objects around it — for a Triton and a vLLM model, on AWS (staging) and GCP (prod)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from serving_fixtures import (
    CONFIG_MAP,
    DEPLOYMENT,
    JOB,
    NETWORK_POLICY,
    PDB,
    SERVICE,
    args_of,
    args_of_mf,
    container,
    k8s_object,
    pod_spec,
    serve,
    with_model,
    with_pool,
)
from serving_fixtures import (
    SECRET as SECRET_TYPE,
)

from inferplane.app.offline import SECRET
from inferplane.blueprint import naming
from inferplane.components.serving.secrets import OFFLINE_PLACEHOLDER
from inferplane.components.serving.serving_pod import CONFIG_HASH_ANNOTATION

GPU_TAINT = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "present",
    "effect": "NoSchedule",
}
SERVERS = [("staging", "ranker", "triton"), ("staging", "chat", "vllm"),
           ("prod", "ranker", "triton"), ("prod", "chat", "vllm")]  # fmt: skip


@pytest.mark.parametrize(("env_name", "model", "server"), SERVERS)
def test_gpu_requests_equal_limits(served, env_name, model, server):
    c = container(k8s_object(served(env_name), DEPLOYMENT, model), server)
    assert c["resources"]["requests"]["nvidia.com/gpu"] == "1"
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "1"
    # memory is guaranteed; CPU has a request and no limit (no CFS throttling)
    assert c["resources"]["limits"]["memory"] == c["resources"]["requests"]["memory"]
    assert "cpu" not in c["resources"]["limits"]


def test_resources_are_the_replicas_share_of_the_node(served):
    staging = container(k8s_object(served("staging"), DEPLOYMENT, "ranker"), "triton")
    assert staging["resources"]["requests"] == {
        "nvidia.com/gpu": "1",
        "cpu": "6500m",
        "memory": "24064Mi",
    }  # g6.2xlarge: 8 vCPU, 32 GiB
    prod = container(k8s_object(served("prod"), DEPLOYMENT, "chat"), "vllm")
    assert prod["resources"]["requests"] == {
        "nvidia.com/gpu": "1",
        "cpu": "6500m",
        "memory": "21504Mi",
    }  # g2-standard-8: 32 GB


def test_mig_pool_requests_the_mig_slice(served):
    # nightly-embed runs on h100 (MIG 3g.40gb, mixed strategy): 16 slices per p5.48xlarge
    c = container(k8s_object(served("staging"), DEPLOYMENT, "nightly-embed"), "triton")
    assert c["resources"]["requests"] == {
        "nvidia.com/mig-3g.40gb": "1",
        "cpu": "11900m",
        "memory": "104704Mi",
    }
    assert c["resources"]["limits"] == {"nvidia.com/mig-3g.40gb": "1", "memory": "104704Mi"}
    assert "nvidia.com/gpu" not in json.dumps(c["resources"])


@pytest.mark.parametrize(("env_name", "model", "zones"), [
    ("staging", "chat", ["us-east-1a"]),
    ("prod", "chat", ["us-central1-a", "us-central1-b"]),
    ("prod", "nightly-embed", ["us-central1-a"]),  # h100 lives in one zone only
])  # fmt: skip
def test_pinned_to_pool_and_zones(served, env_name, model, zones):
    d = k8s_object(served(env_name), DEPLOYMENT, model)
    spec = pod_spec(d)
    pool = "h100" if model == "nightly-embed" else "l4"
    # The blueprint label too: another blueprint on the cluster may have a pool of that name.
    assert spec["nodeSelector"] == {
        "inferplane.dev/pool": pool,
        "inferplane.dev/blueprint": "support-assistant",
    }
    assert spec["tolerations"] == [GPU_TAINT]
    required = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required == {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": zones}
                ]
            }
        ]
    }


def test_zone_spread_is_hard_only_with_a_replica_per_zone(served, staging):
    prod_chat = pod_spec(k8s_object(served("prod"), DEPLOYMENT, "chat"))
    assert prod_chat["topologySpreadConstraints"] == [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "minDomains": 2,
            "labelSelector": {
                "matchLabels": {
                    "app.kubernetes.io/part-of": "support-assistant",
                    "inferplane.dev/model": "chat",
                }
            },
            "matchLabelKeys": ["pod-template-hash"],
        }
    ]
    # chat at min 0 (allowed in staging only under a waiver) cannot cover its zone -> soft
    from inferplane.components.serving.containers import zone_spread

    chat = staging.models["chat"]
    cold = dataclasses.replace(chat, replicas=dataclasses.replace(chat.replicas, min=0))
    [soft] = zone_spread(*args_of(staging, cold))
    assert soft["whenUnsatisfiable"] == "ScheduleAnyway"
    assert "minDomains" not in soft


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_triton_serves_exactly_one_model(served, env_name):
    c = container(k8s_object(served(env_name), DEPLOYMENT, "ranker"), "triton")
    assert c["image"] == "nvcr.io/nvidia/tritonserver:26.02-py3"
    # No `command`: the NGC image's entrypoint (CUDA forward compatibility) runs first.
    assert "command" not in c
    assert c["args"] == [
        "tritonserver",
        "--model-repository=/models",
        "--model-control-mode=explicit",
        "--load-model=ranker",
        "--strict-readiness=true",
        "--exit-on-error=true",
        "--http-port=8000",
        "--grpc-port=8001",
        "--metrics-port=8002",
        "--exit-timeout-secs=60",
        "--metrics-config=summary_latencies=true",
        "--metrics-config=summary_quantiles=0.5:0.01,0.95:0.001,0.99:0.001",
        # gRPC connections end after a minute so clients rebalance onto new replicas
        # (triton-inference-server/server src/command_line_parser.cc, since 2.42)
        "--grpc-max-connection-age=60000",
        "--grpc-max-connection-age-grace=60000",  # max_request_s
        "--cache-config=local,size=268435456",  # response_cache.size_mb: 256
    ]
    assert [(p["name"], p["containerPort"]) for p in c["ports"]] == [
        ("http", 8000),
        ("grpc", 8001),
        ("metrics", 8002),
    ]


def test_triton_repository_is_laid_out_by_an_init_container(served):
    rec = served("staging")
    d = k8s_object(rec, DEPLOYMENT, "ranker")
    fetch = container(d, "fetch-model", init=True)
    assert fetch["image"] == "public.ecr.aws/aws-cli/aws-cli:2.27.50"
    script = fetch["command"][2]
    assert 'cp "/config/config.pbtxt" "/models/ranker/config.pbtxt"' in script
    # the engine from the attempt folder its marker names (test_store_attempts runs this)
    lines = script.splitlines()
    assert (
        'if ! attempt="$(aws s3 cp --only-show-errors '
        '"${ENGINE_URI}inferplane-complete-attempt" -)"; then'
    ) in lines
    assert lines[-2:] == [
        'ATTEMPT_URI="${ENGINE_URI}$attempt/"',
        'aws s3 cp --only-show-errors "${ATTEMPT_URI}model.plan" "/models/ranker/1/model.plan"',
    ]
    [uri] = [e["value"] for e in fetch["env"] if e["name"] == "ENGINE_URI"]
    job = rec.of_type(JOB)
    engine = [j for j in job if j.get("metadata", "labels", naming.MODEL_LABEL) == "ranker"]
    key = engine[0].get("metadata", "labels", "inferplane.dev/engine-key")
    assert uri == f"s3://acme-models-use1/.inferplane/engines/support-assistant/ranker/{key}/"
    assert pod_spec(d)["serviceAccountName"] == "model-reader"
    assert {"name": "triton-config", "configMap": {"name": "ranker-triton-config"}} in pod_spec(d)[
        "volumes"
    ]
    cm = k8s_object(rec, CONFIG_MAP, "ranker-triton-config")
    assert cm.get("data", "config.pbtxt").startswith('name: "ranker"\nplatform: "tensorrt_plan"')


def test_gcp_fetch_uses_gcloud(served):
    fetch = container(k8s_object(served("prod"), DEPLOYMENT, "chat"), "fetch-weights", init=True)
    assert fetch["image"] == "gcr.io/google.com/cloudsdktool/google-cloud-cli:530.0.0-slim"
    assert 'gcloud storage rsync --recursive "$MODEL_URI" "/models/chat"' in fetch["command"][2]
    env = {e["name"]: e["value"] for e in fetch["env"]}
    assert env["MODEL_URI"] == "gs://acme-models-usc1/llama-3.1-8b-instruct/"
    assert env["CLOUDSDK_CORE_PROJECT"] == "acme-ml-prod"
    # an object creator may not delete the parts of a parallel composite upload
    assert env["CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED"] == "False"
    assert env["CLOUDSDK_CONFIG"] == "/home/inferplane/gcloud"


TTFT_300 = (
    '{"time_to_first_token":[0.001,0.005,0.01,0.02,0.04,0.06,0.08,0.1,0.25,0.3,0.5,0.75,1.0,'
    "2.5,5.0,7.5,10.0,20.0,40.0,80.0,160.0,640.0,2560.0]}"
)


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_vllm_command_line(served, env_name):
    c = container(k8s_object(served(env_name), DEPLOYMENT, "chat"), "vllm")
    assert c["image"] == "vllm/vllm-openai:v0.33.0"
    assert c["command"] == ["vllm", "serve"]
    assert c["args"] == [
        "/models/chat", "--port", "8000", "--served-model-name", "chat",
        "--tensor-parallel-size", "1",
        "--quantization", "fp8",  # precision: fp8
        "--max-model-len", "8192", "--max-num-seqs", "64", "--gpu-memory-utilization", "0.9",
        "--enable-prefix-caching",
        # slo.ttft_p95_ms 300 as a bound between vLLM's 0.25 and 0.5 s (targets.histogram_buckets);
        # slo.p95_ms 1500 is a default bound already.
        "--custom-histogram-buckets", TTFT_300,
        "--middleware", "inferplane_route_guard.RouteGuard",
    ]  # fmt: skip
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["HF_HUB_OFFLINE"] == "1"  # weights are local
    assert env["HOME"] == "/home/inferplane"
    assert env["VLLM_NO_USAGE_STATS"] == "1"


def test_vllm_hf_source_precision_and_settings(staging):
    from inferplane.blueprint.model import ModelSource, VllmSettings
    from inferplane.components.serving.vllm.vllm import vllm_args

    hf = ModelSource(
        uri="hf://Qwen/Qwen2.5-7B-Instruct@abc123",
        scheme="hf",
        bucket=None,
        key=None,
        hf_repo="Qwen/Qwen2.5-7B-Instruct",
        hf_revision="abc123",
    )
    settings = VllmSettings(
        max_num_batched_tokens=4096,
        enable_prefix_caching=False,
        enable_chunked_prefill=True,
        kv_cache_dtype="fp8",
        enforce_eager=True,
    )
    env = with_model(staging, "chat", source=hf, precision="bf16", gpus=2, vllm=settings)
    assert vllm_args(args_of(env, "chat")[1]) == [
        "/models/chat", "--port", "8000", "--served-model-name", "chat",
        "--tensor-parallel-size", "2", "--dtype", "bfloat16",
        "--max-num-batched-tokens", "4096", "--kv-cache-dtype", "fp8",
        "--no-enable-prefix-caching", "--enable-chunked-prefill", "--enforce-eager",
        "--custom-histogram-buckets", TTFT_300,
        "--middleware", "inferplane_route_guard.RouteGuard",
    ]  # fmt: skip
    quantized = with_model(env, "chat", precision="int4", vllm=VllmSettings(quantization="awq"))
    assert vllm_args(args_of(quantized, "chat")[1])[-6:-4] == ["--quantization", "awq"]
    checkpoint = with_model(env, "chat", precision="int8", vllm=None)
    assert "--quantization" not in vllm_args(args_of(checkpoint, "chat")[1])
    assert "--dtype" not in vllm_args(args_of(checkpoint, "chat")[1])

    rec = serve(env, ["chat"])
    d = k8s_object(rec, DEPLOYMENT, "chat")
    # The staged copy, like any store source: the same init container, the same path.
    fetch = container(d, "fetch-weights", init=True)
    assert {
        "name": "MODEL_URI",
        "value": f"{env.model_store}.inferplane/hub/support-assistant/"
        "Qwen/Qwen2.5-7B-Instruct/abc123/",
    } in fetch["env"]
    c = container(d, "vllm")
    env_vars = {e["name"]: e.get("value") for e in c["env"]}
    assert env_vars["HF_HUB_OFFLINE"] == "1"
    assert not any(name.startswith("HF_TOKEN") for name in env_vars)
    models_mount = next(m for m in c["volumeMounts"] if m["name"] == "models")
    assert models_mount["readOnly"] is True
    assert c["resources"]["requests"]["nvidia.com/gpu"] == "2"


@pytest.mark.parametrize(("model", "server", "ready", "live"), [
    ("ranker", "triton", "/v2/models/ranker/ready", "/v2/health/live"),
    ("chat", "vllm", "/health", "/health"),
])  # fmt: skip
def test_probes_never_kill_a_loading_pod(served, model, server, ready, live):
    c = container(k8s_object(served("prod"), DEPLOYMENT, model), server)
    startup = c["startupProbe"]
    assert startup["httpGet"] == {"path": ready, "port": "http"}
    assert startup["periodSeconds"] == 5
    assert startup["failureThreshold"] == 240  # startup_timeout_s 1200 / 5
    assert c["readinessProbe"]["httpGet"] == {"path": ready, "port": "http"}
    assert c["livenessProbe"]["httpGet"] == {"path": live, "port": "http"}
    assert c["lifecycle"] == {"preStop": {"exec": {"command": ["sleep", "15"]}}}


def test_drain_and_rollout_timings(served):
    d = k8s_object(served("prod"), DEPLOYMENT, "chat")
    # preStop 15 s + max_request_s 60 + 15 s for the server's own shutdown
    assert pod_spec(d)["terminationGracePeriodSeconds"] == 90
    assert d.get("spec", "progressDeadlineSeconds") == 1200 + 900
    assert d.get("spec", "replicas") == 2  # replicas.min: the first rollout is warm
    assert d.get("spec", "strategy") == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
    }


def test_single_replica_surges_only_with_room(staging):
    # l4 at 6 nodes x 1 GPU at most; chat 2 + ranker 2 + toxicity 2 at max -> no room
    nodes = staging.pools["l4"].nodes.__class__
    tight = serve(with_pool(staging, "l4", nodes=nodes(4, 6)), ["ranker"])
    assert k8s_object(tight, DEPLOYMENT, "ranker").get("spec", "strategy", "rollingUpdate") == {
        "maxSurge": 0,
        "maxUnavailable": 1,
    }
    roomy = serve(with_pool(staging, "l4", nodes=nodes(2, 7)), ["ranker"])
    assert k8s_object(roomy, DEPLOYMENT, "ranker").get("spec", "strategy", "rollingUpdate") == {
        "maxSurge": 1,
        "maxUnavailable": 0,
    }


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_every_pod_is_hardened(served, env_name):
    rec = served(env_name)
    workloads = [*rec.of_type(DEPLOYMENT), *rec.of_type(JOB)]
    assert len(workloads) == 4 + 3 + 1  # the vLLM chat model's compile-cache Job
    for w in workloads:
        spec = pod_spec(w)
        assert spec["securityContext"] == {
            "runAsNonRoot": True,
            "runAsUser": 10001,
            "runAsGroup": 10001,
            "fsGroup": 10001,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
        # EKS: IRSA brings its own projected token; GKE: kept until Workload Identity is
        # shown to work without it (see containers.service_account)
        assert spec["automountServiceAccountToken"] is (env_name == "prod")
        for c in [*spec.get("initContainers", []), *spec["containers"]]:
            assert c["securityContext"] == {
                "allowPrivilegeEscalation": False,
                "readOnlyRootFilesystem": True,
                "runAsNonRoot": True,
                "capabilities": {"drop": ["ALL"]},
            }, (w.name, c["name"])
            mounts = {m["mountPath"] for m in c["volumeMounts"]}
            assert {"/tmp", "/home/inferplane"} <= mounts, (w.name, c["name"])


def test_writable_volumes_of_the_servers(served):
    d = k8s_object(served("prod"), DEPLOYMENT, "ranker")
    volumes = {v["name"]: v for v in pod_spec(d)["volumes"]}
    assert volumes["dshm"] == {
        "name": "dshm",
        "emptyDir": {"medium": "Memory", "sizeLimit": "2048Mi"},
    }
    assert volumes["models"] == {"name": "models", "emptyDir": {}}
    mounts = {m["mountPath"]: m for m in container(d, "triton")["volumeMounts"]}
    assert mounts["/dev/shm"]["name"] == "dshm"
    assert mounts["/models"].get("readOnly") is True  # Triton only reads its repository


def test_labels_on_every_object(served):
    rec = served("staging")
    want = {
        "app.kubernetes.io/name": "ranker",
        "app.kubernetes.io/instance": "support-assistant-ranker",
        "app.kubernetes.io/part-of": "support-assistant",
        "app.kubernetes.io/managed-by": "inferplane",
        "inferplane.dev/model": "ranker",
        "inferplane.dev/environment": "staging",
        "inferplane.dev/pool": "l4",
        "inferplane.dev/latency-class": "realtime",
    }
    objects = [
        (DEPLOYMENT, "ranker"),
        (SERVICE, "ranker"),
        (SERVICE, "ranker-lb"),
        (PDB, "ranker"),
        (NETWORK_POLICY, "ranker"),
        (CONFIG_MAP, "ranker-triton-config"),
    ]
    for type_, name in objects:
        labels = k8s_object(rec, type_, name).get("metadata", "labels")
        assert want.items() <= labels.items(), (type_, name)
    assert (
        want.items()
        <= k8s_object(rec, DEPLOYMENT, "ranker")
        .get("spec", "template", "metadata", "labels")
        .items()
    )
    batch = k8s_object(rec, DEPLOYMENT, "nightly-embed").get("metadata", "labels")
    assert batch["inferplane.dev/latency-class"] == "batch"
    assert batch["inferplane.dev/pool"] == "h100"


def test_deployment_waits_for_engine_and_config(served):
    rec = served("staging")
    ranker = k8s_object(rec, DEPLOYMENT, "ranker")
    [job] = [
        j for j in rec.of_type(JOB) if j.get("metadata", "labels", naming.MODEL_LABEL) == "ranker"
    ]
    assert job.urn in ranker.depends_on
    assert k8s_object(rec, CONFIG_MAP, "ranker-triton-config").urn in ranker.depends_on


def test_deployment_waits_for_its_secret(staging):
    rec = serve(_secret_ref(staging, from_pulumi_config="vllmApiKey"), ["chat"])
    chat = k8s_object(rec, DEPLOYMENT, "chat")
    assert k8s_object(rec, SECRET_TYPE, "chat-secrets").urn in chat.depends_on


def test_config_change_rolls_the_pods(staging):
    from inferplane.components.serving.serving_pod import deployment_spec

    model = staging.models["ranker"]
    a = deployment_spec(*args_of(staging, model), "s3://x", False, 'name: "ranker"\n')
    b = deployment_spec(
        *args_of(staging, model), "s3://x", False, 'name: "ranker"\nmax_batch_size: 8\n'
    )
    hash_a = a["template"]["metadata"]["annotations"][CONFIG_HASH_ANNOTATION]
    assert hash_a != b["template"]["metadata"]["annotations"][CONFIG_HASH_ANNOTATION]
    assert (
        hash_a
        == deployment_spec(*args_of(staging, model), "s3://x", False, 'name: "ranker"\n')[
            "template"
        ]["metadata"]["annotations"][CONFIG_HASH_ANNOTATION]
    )


def test_the_hub_token_is_in_no_model_secret(served):
    rec = served("staging")
    # chat's only secret is the Hub token: only a staging Job's own Secret may hold it, and
    # chat reads its weights from the store, so nothing holds it.
    assert not [r for r in rec.of_type(SECRET_TYPE) if r.get("metadata", "name") == "chat-secrets"]
    d = k8s_object(rec, DEPLOYMENT, "chat")
    c = container(d, "vllm")
    # No serving container gets it, as a variable or a file (only the staging Job of an
    # hf:// source does, `weights`).
    assert not [e for e in c["env"] if e["name"].startswith("HF_TOKEN")]
    assert all("valueFrom" not in e for e in c["env"])
    assert all(v["name"] != "secrets" for v in pod_spec(d)["volumes"])
    assert all(m["name"] != "secrets" for m in c["volumeMounts"])
    for init in pod_spec(d).get("initContainers", []):
        assert all(m["name"] != "secrets" for m in init["volumeMounts"])


def test_secret_is_never_plain(staging):
    rec = serve(_secret_ref(staging, from_pulumi_config="vllmApiKey"), ["chat"])
    secret = k8s_object(rec, SECRET_TYPE, "chat-secrets")
    assert secret.get("stringData") == {"vllm_api_key": SECRET}
    assert OFFLINE_PLACEHOLDER not in json.dumps([r.inputs for r in rec])


def test_secret_from_env_stays_secret_online(staging, monkeypatch):
    monkeypatch.setenv("VLLM_KEY_SOURCE", "live_key_value_123")
    env = _secret_ref(staging, from_env="VLLM_KEY_SOURCE")
    rec = serve(env, ["chat"], config={"inferplane:offline": "false"})
    assert k8s_object(rec, SECRET_TYPE, "chat-secrets").get("stringData") == {
        "vllm_api_key": SECRET
    }
    assert "live_key_value_123" not in json.dumps([r.inputs for r in rec])


def test_missing_secret_env_is_a_blueprint_error(staging, monkeypatch):
    from inferplane.blueprint.errors import BlueprintError

    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(BlueprintError) as err:
        serve(staging, ["chat"], config={"inferplane:offline": "false"})
    [diag] = err.value.diagnostics
    assert diag.path == ("models", "chat", "secrets", "hf_token", "from_env")
    assert diag.location.line > 1
    assert str(diag).endswith(
        "error: models.chat.secrets.hf_token.from_env: environment variable HF_TOKEN is not "
        "set (secret models.chat.secrets.hf_token reads it when `pulumi up` runs); export "
        "HF_TOKEN=... before running pulumi, or store the value with `pulumi config set "
        "--secret` and use from_pulumi_config"
    )


def test_cluster_service_pdb_and_network_policy(served):
    rec = served("staging")
    svc = k8s_object(rec, SERVICE, "ranker")
    assert svc.get("spec") == {
        "type": "ClusterIP",
        "selector": {
            "app.kubernetes.io/part-of": "support-assistant",
            "inferplane.dev/model": "ranker",
        },
        "ports": [
            {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"},
            {"name": "grpc", "port": 8001, "targetPort": "grpc", "protocol": "TCP"},
            {"name": "metrics", "port": 8002, "targetPort": "metrics", "protocol": "TCP"},
        ],
        "trafficDistribution": "PreferClose",
    }
    assert k8s_object(rec, SERVICE, "chat").get("spec", "ports") == [
        {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}
    ]
    assert k8s_object(rec, PDB, "ranker").get("spec") == {
        "maxUnavailable": 1,
        "selector": {
            "matchLabels": {
                "app.kubernetes.io/part-of": "support-assistant",
                "inferplane.dev/model": "ranker",
            }
        },
        "unhealthyPodEvictionPolicy": "AlwaysAllow",
    }
    policy = k8s_object(rec, NETWORK_POLICY, "ranker").get("spec")
    assert policy["policyTypes"] == ["Ingress"]
    assert policy["ingress"] == [
        # allowed_cidrs 10.0.0.0/8 already covers the VPC 10.64.0.0/16 the NLB sits in
        {
            "from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}],
            "ports": [{"protocol": "TCP", "port": 8001}],
        },  # expose: grpc
        {
            "from": [
                {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
                    }
                }
            ],
            "ports": [{"protocol": "TCP", "port": 8002}],
        },
    ]
    vllm_policy = k8s_object(rec, NETWORK_POLICY, "chat").get("spec", "ingress")
    assert vllm_policy[1]["ports"] == [{"protocol": "TCP", "port": 8000}]  # /metrics on http


def test_outputs(served):
    staging = served("staging").outputs
    assert staging["ranker.deployment"] == "ranker"
    assert staging["ranker.service"] == "ranker"
    assert staging["ranker.lb_service"] == "ranker-lb"
    assert staging["ranker.endpoint"].endswith(".elb.us-east-1.amazonaws.com")
    assert served("prod").outputs["chat.endpoint"].startswith("10.128.")


def test_engine_uri_output(staging):
    from inferplane.components.serving.tensorrt.engine_keys import engine_uri

    rec = serve(staging, ["ranker", "chat"])
    servers = [r for r in rec if r.type == "inferplane:serving:ModelServer"]
    assert len(servers) == 2
    assert engine_uri(*args_of_mf(staging, staging.models["ranker"])).startswith(
        "s3://acme-models-use1/.inferplane/engines/support-assistant/ranker/"
    )


def test_children_and_names(served):
    rec = served("prod")
    server = rec.named("support-assistant-prod-ranker", "inferplane:serving:ModelServer")
    kinds = sorted(r.type for r in rec.children(server))
    assert kinds == sorted([
        "inferplane:serving:TensorRtEngineBuild", CONFIG_MAP, DEPLOYMENT, SERVICE, SERVICE,
        SERVICE, PDB, NETWORK_POLICY, NETWORK_POLICY, "inferplane:serving:ModelAutoscaler",
        "inferplane:serving:ModelMonitoring"])  # fmt: skip
    for child in rec.children(server):
        assert child.name.startswith("support-assistant-prod-ranker")
        if child.custom:
            assert child.provider is not None and child.provider.endswith("::cluster")


def _secret_ref(env, name: str = "vllm_api_key", **source):
    """`env` with chat's only secret `name` (by default a key the server reads, which its
    own Secret holds), read from `source`."""
    from inferplane.blueprint.model import SecretRef

    ref = SecretRef(name=name, path=("models", "chat", "secrets", name), **source)
    return with_model(env, "chat", secrets=(ref,))


def test_secret_from_pulumi_config(staging):
    env = _secret_ref(staging, from_pulumi_config="vllmApiKey")
    config = {"inferplane:offline": "false", "inferplane:vllmApiKey": "config_value_456"}
    rec = serve(env, ["chat"], config=config)
    assert k8s_object(rec, SECRET_TYPE, "chat-secrets").get("stringData") == {
        "vllm_api_key": SECRET
    }
    assert "config_value_456" not in json.dumps([r.inputs for r in rec])


@pytest.mark.parametrize(
    ("env_name", "secret_id", "token", "args"),
    [
        ("staging", "prod/hf-token", "aws:secretsmanager/getSecretVersion:getSecretVersion",
         {"secretId": "prod/hf-token"}),
        ("prod", "projects/acme-ml-prod/secrets/hf-token/versions/3",
         "gcp:secretmanager/getSecretVersion:getSecretVersion",
         {"secret": "projects/acme-ml-prod/secrets/hf-token", "version": "3",
          "project": "acme-ml-prod"}),
        ("prod", "hf-token", "gcp:secretmanager/getSecretVersion:getSecretVersion",
         {"secret": "hf-token", "project": "acme-ml-prod"}),
    ],
)  # fmt: skip
def test_secret_from_secret_manager(request, env_name, secret_id, token, args):
    env = _secret_ref(request.getfixturevalue(env_name), from_secret_manager=secret_id)
    rec = serve(env, ["chat"], config={"inferplane:offline": "false"})
    assert [i.args for i in rec.invokes if i.token == token] == [args]


def test_offline_never_reads_secrets(staging, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    env = _secret_ref(staging, from_secret_manager="prod/hf-token")
    rec = serve(env, ["chat"])  # offline: a placeholder, no lookup, no error
    assert not [i for i in rec.invokes if "secretmanager" in i.token]
    assert k8s_object(rec, SECRET_TYPE, "chat-secrets").get("stringData") == {
        "vllm_api_key": SECRET
    }


# --- pulumi up: the Services wait for the Deployment, with the model's load budget ---------
# pulumi-kubernetes (94977969) awaits a Service until its Endpoints hold no not-ready address
# and, for a LoadBalancer, until it has an ingress address (provider/pkg/await/service.go
# checkAndLogStatus), 10 minutes by default (DefaultServiceTimeoutMins); a loading replica is
# a not-ready address for its whole load. customTimeouts beats the pulumi.com/timeoutSeconds
# annotation (provider/pkg/metadata/overrides.go TimeoutDuration).
@pytest.mark.parametrize("env_name", ["staging", "prod"])
@pytest.mark.parametrize("model", ["chat", "ranker"])
def test_services_wait_for_the_deployment_with_its_budget(served, request, env_name, model):
    from inferplane.components.serving.containers import await_timeout_s
    from inferplane.components.serving.model_server import _minutes

    env = request.getfixturevalue(env_name)
    served_model, _ = args_of_mf(env, env.models[model])
    # the startup probe's budget (20 min) + the rollout margin (15) + the LB margin (5)
    budget = _minutes(await_timeout_s(served_model))
    assert budget == "40m"
    rec = served(env_name)
    deployment = k8s_object(rec, DEPLOYMENT, model)
    assert deployment.options["custom_timeouts"] == {"create": budget, "update": budget}
    for service in (k8s_object(rec, SERVICE, f"{model}-lb"), k8s_object(rec, SERVICE, model)):
        assert deployment.urn in service.depends_on, service.name
        assert service.options["custom_timeouts"] == {"create": budget, "update": budget}


def test_the_budget_follows_the_startup_timeout(staging):
    from inferplane.components.serving.containers import await_timeout_s

    slow = with_model(staging, "chat", startup_timeout_s=3600)
    served_model, _ = args_of_mf(slow, slow.models["chat"])
    assert await_timeout_s(served_model) == 3600 + 900 + 300


# --- gRPC: a headless Service for client-side balancing -----------------------------------
# One HTTP/2 connection carries every call of a gRPC client, so an L4 load balancer spreads
# connections, not calls (https://grpc.io/blog/grpc-load-balancing/); clients balance calls
# over the pods the headless Service's DNS returns (round_robin; blueprints/README.md,
# expose.protocol).
@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_grpc_models_get_a_headless_service(served, env_name):
    rec = served(env_name)
    headless = k8s_object(rec, SERVICE, "ranker-grpc")  # Triton, expose: both
    assert headless.get("spec") == {
        "clusterIP": "None",
        "publishNotReadyAddresses": False,
        "selector": {
            "app.kubernetes.io/part-of": "support-assistant",
            "inferplane.dev/model": "ranker",
        },
        "ports": [{"name": "grpc", "port": 8001, "targetPort": "grpc", "protocol": "TCP"}],
    }
    assert headless.get("metadata", "labels", "inferplane.dev/model") == "ranker"
    server = rec.named(f"support-assistant-{env_name}-ranker", "inferplane:serving:ModelServer")
    assert rec.registered_outputs[server.urn]["grpc_endpoint"] == (
        "dns:///ranker-grpc.support-assistant.svc.cluster.local:8001"
    )
    # vLLM speaks HTTP only: no gRPC Service
    assert not [r for r in rec.of_type(SERVICE) if r.get("metadata", "name") == "chat-grpc"]
    chat = rec.named(f"support-assistant-{env_name}-chat", "inferplane:serving:ModelServer")
    assert rec.registered_outputs[chat.urn].get("grpc_endpoint") is None


def test_http_only_triton_gets_no_grpc_service(staging):
    env = with_model(staging, "ranker", expose="http")
    rec = serve(env, ["ranker"])
    assert not [r for r in rec.of_type(SERVICE) if r.get("metadata", "name") == "ranker-grpc"]
    args = container(k8s_object(rec, DEPLOYMENT, "ranker"), "triton")["args"]
    assert "--grpc-max-connection-age=60000" in args  # Triton's gRPC port is still open


def test_older_triton_gets_no_max_connection_age(staging):
    from inferplane.components.serving.triton.triton_config import triton_args

    model, _ = args_of_mf(staging, staging.models["ranker"])
    # --grpc-max-connection-age is new in Triton 2.42 = NGC 24.01 (server #6639)
    assert not [a for a in triton_args(model, "23.12") if "max-connection-age" in a]
    assert "--grpc-max-connection-age=60000" in triton_args(model, "24.01")


def test_onnx_served_as_is_comes_with_its_external_data(staging):
    # ONNX Runtime reads external data "relative to the directory the ONNX model is stored
    # in" (https://onnx.ai/onnx/repo-docs/ExternalData.html): fetch the model's directory.
    from inferplane.components.serving.triton.triton_config import triton_fetch_container

    source = dataclasses.replace(
        staging.models["ranker"].source, uri="s3://acme-models-use1/reranker/v3/ranker.onnx"
    )
    env = with_model(staging, "ranker", tensorrt=None, warmup=None, source=source)
    model, serving_env = args_of_mf(env, env.models["ranker"])
    fetch = triton_fetch_container(serving_env, model, model.source.uri)
    script = fetch["command"][2]
    assert 'aws s3 sync --only-show-errors "$MODEL_DIR" "/models/ranker/1"' in script
    assert 'mv "/models/ranker/1/$ONNX_FILE" "/models/ranker/1/model.onnx"' in script
    values = {e["name"]: e["value"] for e in fetch["env"]}
    assert values["MODEL_DIR"] == "s3://acme-models-use1/reranker/v3/"
    assert values["ONNX_FILE"] == "ranker.onnx"
