"""The vLLM compile-cache Job: its key, its pod (the serving container's own command), the
serving pod's copy of the staged cache, and the Deployment's wait for the Job."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from serving_fixtures import (
    DEPLOYMENT,
    JOB,
    NETWORK_POLICY,
    args_of,
    container,
    job_program,
    k8s_object,
    pod_spec,
    serve,
    with_model,
    with_pool,
    with_versions,
)

from inferplane.blueprint import catalog, naming
from inferplane.blueprint.model import Environment
from inferplane.components.serving.store.store_cli import ATTEMPT_ENV
from inferplane.components.serving.vllm.vllm import (
    CACHE_ROOT,
    COMPILE_CACHE_DIR,
    vllm_args,
    vllm_env,
)
from inferplane.components.serving.vllm.vllm_compile import (
    cache_uri,
    compile_key,
    compiles,
    job_name,
)
from inferplane.components.serving.vllm.vllm_flags import HISTOGRAM_FLAG


def _key(env: Environment, model: str = "chat") -> str:
    return compile_key(*args_of(env, model))


def _vllm(blueprint_env: Environment, **changes: Any) -> Environment:
    settings = blueprint_env.models["chat"].vllm
    assert settings is not None
    return with_model(blueprint_env, "chat", vllm=dataclasses.replace(settings, **changes))


def _without_bounds(args: list[str]) -> list[str]:
    """`args` less ``--custom-histogram-buckets`` and its value."""
    if HISTOGRAM_FLAG not in args:
        return args
    at = args.index(HISTOGRAM_FLAG)
    return args[:at] + args[at + 2 :]


def _job(rec: Any, env: Environment) -> Any:
    return k8s_object(rec, JOB, job_name(args_of(env, "chat")[1], _key(env)))


def test_key_is_stable_and_names_the_store_prefix(staging: Environment) -> None:
    key = _key(staging)
    assert key == _key(staging) and len(key) == 12
    serving_env, _ = args_of(staging, "chat")
    assert cache_uri(serving_env, key, "chat") == (
        f"s3://acme-models-use1/.inferplane/vllm-compile/support-assistant/chat/{key}/"
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda e: _vllm(e, max_model_len=4096),
        lambda e: _vllm(e, max_num_seqs=7),
        lambda e: _vllm(e, kv_cache_dtype="fp8"),
        lambda e: _vllm(e, enable_prefix_caching=False),
        lambda e: _vllm(e, extra_args=("--seed", "7")),
        lambda e: _vllm(e, env=(("VLLM_ATTENTION_BACKEND", "FLASHINFER"),)),
        lambda e: with_model(e, "chat", gpus=2),
        lambda e: with_model(e, "chat", precision="bf16"),
        lambda e: with_pool(e, "l4", gpu=catalog.gpu("nvidia-l40s")),
        lambda e: with_versions(e, vllm="v0.10.1"),
        lambda e: with_model(e, "chat", image="registry.example/vllm-custom:1"),
    ],
    ids=[
        "max_model_len",
        "max_num_seqs",
        "kv_cache_dtype",
        "prefix_caching",
        "extra_args",
        "vllm_env",
        "tensor_parallel",
        "precision",
        "gpu_type",
        "vllm_version",
        "image",
    ],
)
def test_any_serve_flag_gpu_or_version_changes_the_key(staging: Environment, change) -> None:
    assert _key(change(staging)) != _key(staging)


def test_key_follows_the_source_uri(staging: Environment) -> None:
    chat = staging.models["chat"]
    moved = dataclasses.replace(
        chat.source, uri=chat.source.uri.rstrip("/") + "-v2/", key=(chat.source.key or "") + "v2"
    )
    assert _key(with_model(staging, "chat", source=moved)) != _key(staging)


def test_the_job_runs_the_serving_container_on_the_serving_pool(served) -> None:
    for env_name in ("staging", "prod"):
        rec = served(env_name)
        deployment = pod_spec(k8s_object(rec, DEPLOYMENT, "chat"))
        (job,) = [
            j for j in rec.of_type(JOB) if j.get("metadata", "name").startswith("chat-compile-")
        ]
        spec = pod_spec(job)
        server = container(k8s_object(rec, DEPLOYMENT, "chat"), "vllm")
        compile_ = container(job, "compile", init=True)
        assert compile_["image"] == server["image"]
        assert compile_["command"][:7] == [
            "python3",
            "/opt/inferplane/jobs/compile_cache.py",
            "--health-url=http://127.0.0.1:8000/health",
            f"--cache-dir={COMPILE_CACHE_DIR}",
            "--poll-s=5",
            "--skip-if=/build/already-staged",
            "--",
        ]
        # The serving arguments less the histogram bounds, which compile nothing.
        assert compile_["command"][7:] == _without_bounds(server["args"])
        assert "vllm" in job_program(rec, job, "compile", "compile_cache")
        assert server["command"] == ["vllm", "serve"]
        assert compile_["env"] == server["env"]
        assert compile_["resources"] == server["resources"]
        assert spec["nodeSelector"] == deployment["nodeSelector"]
        assert spec["tolerations"] == deployment["tolerations"]
        assert spec["affinity"] == deployment["affinity"]
        assert spec["serviceAccountName"] == naming.VLLM_COMPILER_SA
        assert spec["restartPolicy"] == "Never"
        names = [c["name"] for c in spec["initContainers"]] + [spec["containers"][0]["name"]]
        assert names == ["check-staged", "fetch-weights", "compile", "upload"]
        # The weights land where the serving pod puts them (vLLM hashes the model path).
        fetch = container(job, "fetch-weights", init=True)
        served_fetch = container(k8s_object(rec, DEPLOYMENT, "chat"), "fetch-weights", init=True)
        assert [e for e in fetch["env"] if e["name"] == "MODEL_URI"] == [
            e for e in served_fetch["env"] if e["name"] == "MODEL_URI"
        ]
        assert {"name": "VLLM_CACHE_ROOT", "value": CACHE_ROOT} in server["env"]


def test_the_job_skips_everything_once_the_marker_is_staged(staging: Environment) -> None:
    rec = serve(staging, ["chat"])
    job = _job(rec, staging)
    check = container(job, "check-staged", init=True)["command"][2]
    assert 'u="${COMPILE_CACHE_URI}inferplane-complete-attempt"' in check
    assert "touch /build/already-staged" in check
    fetch = container(job, "fetch-weights", init=True)["command"][2]
    assert fetch.startswith('set -eu\nif [ -f "/build/already-staged" ]; then exit 0; fi\n')
    upload = container(job, "upload")
    assert ATTEMPT_ENV in upload["env"]
    # Into this attempt's own folder, then the marker naming it (run in test_store_attempts).
    assert upload["command"][2].splitlines() == [
        "set -eu",
        "if [ -f /build/already-staged ]; then exit 0; fi",
        'attempt="attempt-$POD_UID"',
        'ATTEMPT_URI="${COMPILE_CACHE_URI}$attempt/"',
        f'aws s3 sync --only-show-errors "{COMPILE_CACHE_DIR}" '
        '"${ATTEMPT_URI}torch_compile_cache"',
        'printf "%s\\n" "$attempt" > "/build/inferplane-complete-attempt"',
        'if ! aws s3 cp --only-show-errors "/build/inferplane-complete-attempt" '
        '"${COMPILE_CACHE_URI}inferplane-complete-attempt"; then',
        '  if ( u="${COMPILE_CACHE_URI}inferplane-complete-attempt"; u="${u#s3://}"; '
        'aws s3api head-object --bucket "${u%%/*}" --key "${u#*/}" >/dev/null 2>&1 ); then',
        '    echo "compile cache already published at $COMPILE_CACHE_URI by another attempt"',
        "    exit 0",
        "  fi",
        "  exit 1",
        "fi",
        'echo "compile cache published at $ATTEMPT_URI"',
    ]


def test_serving_pods_copy_the_staged_cache_when_present(served) -> None:
    for env_name, sync in (
        ("staging", "aws s3 sync --only-show-errors"),
        ("prod", "gcloud storage rsync --recursive"),
    ):
        rec = served(env_name)
        deployment = k8s_object(rec, DEPLOYMENT, "chat")
        fetch = container(deployment, "fetch-weights", init=True)
        script = fetch["command"][2]
        # the cache in the attempt folder the marker names, when there is one
        assert (
            f'  {sync} "${{ATTEMPT_URI}}torch_compile_cache" "{COMPILE_CACHE_DIR}"'
        ) in script.splitlines()
        assert '  ATTEMPT_URI="${COMPILE_CACHE_URI}$attempt/"' in script.splitlines()
        assert "no staged torch.compile cache at $COMPILE_CACHE_URI: vLLM compiles" in script
        (uri,) = [e["value"] for e in fetch["env"] if e["name"] == "COMPILE_CACHE_URI"]
        assert "/.inferplane/vllm-compile/support-assistant/chat/" in uri and uri.endswith("/")
        assert {"name": "vllm-cache", "mountPath": CACHE_ROOT} in fetch["volumeMounts"]
        server = container(deployment, "vllm")
        assert {"name": "vllm-cache", "mountPath": CACHE_ROOT} in server["volumeMounts"]
        assert {"name": "vllm-cache", "emptyDir": {}} in pod_spec(deployment)["volumes"]


def test_the_deployment_waits_for_the_job(staging: Environment) -> None:
    rec = serve(staging, ["chat"])
    job = _job(rec, staging)
    deployment = k8s_object(rec, DEPLOYMENT, "chat")
    assert job.urn in deployment.depends_on
    policy = k8s_object(rec, NETWORK_POLICY, "chat-vllm-compile")
    assert policy.urn in job.depends_on
    assert job.options["custom_timeouts"] == {"create": "60m", "update": "60m"}


def test_the_job_reaches_only_dns_and_the_store(staging: Environment) -> None:
    rec = serve(staging, ["chat"])
    job = _job(rec, staging)
    policy = k8s_object(rec, NETWORK_POLICY, "chat-vllm-compile")
    spec = policy.get("spec")
    labels = job.get("spec", "template", "metadata", "labels")
    assert all(labels[k] == v for k, v in spec["podSelector"]["matchLabels"].items())
    assert "inferplane.dev/model" not in labels  # never one of the model's own pods
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert not spec.get("ingress")
    ports = {(p["protocol"], p["port"]) for r in spec["egress"] for p in r.get("ports", [])}
    assert ports <= {("UDP", 53), ("TCP", 53), ("TCP", 443)}


def test_an_eager_model_has_no_job_and_no_cache_copy(staging: Environment) -> None:
    env = _vllm(staging, enforce_eager=True)
    assert not compiles(*reversed(args_of(env, "chat")))
    rec = serve(env, ["chat"])
    assert not [j for j in rec.of_type(JOB) if "-compile-" in j.get("metadata", "name")]
    fetch = container(k8s_object(rec, DEPLOYMENT, "chat"), "fetch-weights", init=True)
    assert "COMPILE_CACHE_URI" not in fetch["command"][2]


def test_job_args_are_the_serving_args(staging: Environment) -> None:
    serving_env, model = args_of(staging, "chat")
    rec = serve(staging, ["chat"])
    compile_ = container(_job(rec, staging), "compile", init=True)
    assert compile_["command"][7:] == _without_bounds(vllm_args(model))
    assert compile_["env"] == vllm_env(model)
    assert serving_env.model_store_uri


def test_two_blueprints_on_one_store_never_share_a_compile_cache(staging: Environment) -> None:
    """A cache is written by one blueprint's Job and run by its replicas: the same model with
    the same settings in another blueprint (or another model) gets another key and folder."""
    serving_env, model = args_of(staging, "chat")
    other = dataclasses.replace(serving_env, part_of="support-assistant-2")
    assert compile_key(serving_env, model) != compile_key(other, model)
    mine = cache_uri(serving_env, compile_key(serving_env, model), "chat")
    theirs = cache_uri(other, compile_key(other, model), "chat")
    assert not theirs.startswith(mine) and not mine.startswith(theirs)
    renamed = dataclasses.replace(model, name="chat2")
    assert compile_key(serving_env, renamed) != compile_key(serving_env, model)


def test_blueprint_text_reaches_vllm_verbatim_never_expanded_by_the_kubelet(
    staging: Environment,
) -> None:
    """``$(HF_TOKEN)`` in an argument or a variable would be replaced by the kubelet with
    the secret's value: every ``$`` is doubled, which the kubelet turns back into one."""
    hostile = _vllm(
        staging,
        extra_args=("--reasoning-config.reasoning_start_str=$(HF_TOKEN)",),
        env=(("VLLM_LOGGING_PREFIX", "$(HF_TOKEN) $$ costs $5"),),
    )
    rec = serve(hostile, ["chat"])
    serving = container(k8s_object(rec, DEPLOYMENT, "chat"), "vllm")
    compile_ = container(_job(rec, hostile), "compile", init=True)
    for c in (serving, compile_):
        args = c.get("args", []) + c["command"]
        assert "--reasoning-config.reasoning_start_str=$$(HF_TOKEN)" in args
        assert "--reasoning-config.reasoning_start_str=$(HF_TOKEN)" not in args
        values = {e["name"]: e.get("value") for e in c["env"]}
        assert values["VLLM_LOGGING_PREFIX"] == "$$(HF_TOKEN) $$$$ costs $$5"


def test_an_slo_line_is_a_serving_argument_but_not_part_of_the_compile_key(
    staging: Environment,
) -> None:
    """The replicas export the SLO as a histogram bound (``--custom-histogram-buckets``);
    vLLM's hash leaves its observability config out, and so does the key: changing the SLO
    neither recompiles nor replaces the Job."""
    chat = staging.models["chat"]
    assert chat.slo is not None
    moved = with_model(staging, "chat", slo=dataclasses.replace(chat.slo, ttft_p95_ms=333))
    _, model = args_of(moved, "chat")
    args = vllm_args(model)
    bounds = json.loads(args[args.index(HISTOGRAM_FLAG) + 1])
    assert 0.333 in bounds["time_to_first_token"]
    assert _key(moved) == _key(staging)
    rec = serve(moved, ["chat"])
    compile_ = container(_job(rec, moved), "compile", init=True)
    assert HISTOGRAM_FLAG not in compile_["command"]
    assert compile_["command"][7:] == _without_bounds(args)
