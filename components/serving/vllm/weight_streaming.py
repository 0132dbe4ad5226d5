"""Weights streamed from the model store: vLLM reads the safetensors over the network while
it loads them, instead of a replica first copying them onto the node.

A model whose scale-out levers choose ``stream_weights`` (`ServedModel.stream_weights`)
serves with vLLM's Run:ai streamer loader. What changes against the copy
(`vllm.vllm_fetch_container`):

- the model argument of ``vllm serve`` is the store URI of the weights, a folder
  (`weights.source_uri`); an ``hf://`` source's staged copy is published by attempt
  (`store_cli.publish_attempt`), so its folder is known only when the pod starts: the
  init container resolves the marker and writes ``model: <folder>`` to `MODEL_CONFIG_FILE`,
  which ``--config`` hands to vLLM (v0.33.0 ``FlexibleArgumentParser._pull_args_from_config``,
  ``vllm/utils/argparse_utils.py``: a ``model`` key of the file stands for the positional
  model when the command line has none);
- ``--load-format runai_streamer --model-loader-extra-config {"concurrency": N,
  "memory_limit": B}`` (`loader_args`); the loader turns the two keys into
  ``RUNAI_STREAMER_CONCURRENCY`` and ``RUNAI_STREAMER_MEMORY_LIMIT`` and copies
  ``AWS_ENDPOINT_URL`` into ``RUNAI_STREAMER_S3_ENDPOINT`` (``RunaiModelStreamerLoader.
  __init__``, ``inferplane/facts/vllm/<release>/weight_streaming.json``);
- the serving container gets the store's variables (`streaming_env`) and, on a kubernetes
  environment, the reader's keys from its Secret — the ones the fetch container had. On EKS
  and GKE it has them already: the pod runs as ServiceAccount ``model-reader`` (IRSA, or
  Workload Identity through the GKE metadata server), and the streamer's S3 client uses the
  AWS SDK's default credentials (runai-model-streamer 0.15.7 ``cpp/s3/client/client.cc``:
  ``S3CrtClient`` "Using default authentication"), which read the web identity token IRSA
  injects. Its egress is the serving pod's own: DNS and the store
  (`network_policies.serving_egress_policy_spec`), which the copy needed as well;
- the init container stays only for what streaming does not replace: an EAGLE draft model
  and LoRA adapters are still copied (vLLM loads them from local folders), the staged
  ``torch.compile`` cache is still copied, and a staged source's folder is resolved. A model
  with none of these has no init container at all.

Before the weights, vLLM copies the model folder's ``*.json``, ``*.py`` and ``*.model`` files
(config, tokenizer, generation config) into ``$VLLM_ASSETS_CACHE/model_streamer/<sha256 of
the URI>`` (``ModelConfig.maybe_pull_model_tokenizer_for_runai``; under ``HOME``'s emptyDir
here) and streams only ``*.safetensors``: a checkpoint in another format cannot stream. The
local folder's name follows the URI, so the compile-cache Job, which streams the same URI
with the same arguments (`vllm_compile`), and the replicas hash the same model path into
vLLM's compile key.

Where a release, its image or a custom image cannot stream from the store
(`inferplane.blueprint.upstream.vllm_streaming.streaming_refusal`), `refusal` says why and the
builders raise `ServingArgsError`.
"""

from __future__ import annotations

import json
from typing import Final

from inferplane.blueprint import naming
from inferplane.blueprint.upstream.vllm_streaming import streaming_refusal
from inferplane.components.serving.containers import (
    Manifest,
    empty_dir,
    literal,
    literal_env,
    mount,
    replica_share,
)
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.store.store_cli import resolve_attempt, s3_cli, store_credentials
from inferplane.components.serving.store.weights import is_staged, source_uri
from inferplane.components.serving.vllm.vllm import (
    WeightCopy,
    fetch_container,
    vllm_args,
    vllm_container,
    vllm_env,
    vllm_weights,
    weight_copies,
)

LOAD_FORMAT: Final = "runai_streamer"
CONCURRENCY: Final = 32
"""The streamer's readers (``concurrency``; for S3 "the number of client instances the host
is opening to the S3 server", docs.vllm.ai ``models/extensions/runai_model_streamer``).
The Run:ai benchmark loaded a 15 GB Llama-3-8B from a same-region S3 bucket in 28.24 s at
concurrency 4 and 4.88 s at concurrency 32, its best (run-ai/runai-model-streamer 0.15.7
``docs/src/benchmarks.md``, Figure 5); the streamer's own default for object storage is 8
(``docs/src/env-vars.md``, ``RUNAI_STREAMER_CONCURRENCY``)."""
BUFFER_SHARE: Final = 4
"""The streamer's CPU buffer per GPU worker is at most the replica's memory / this / its
GPUs (``memory_limit``). Unset, the buffer is 40 GB outside distributed streaming
(runai-model-streamer 0.15.7 ``docs/src/env-vars.md``, ``RUNAI_STREAMER_MEMORY_LIMIT``),
more than many replicas' memory limit; each tensor-parallel worker streams its own."""
MODEL_CONFIG_DIR: Final = "/etc/inferplane/weights"
"""Where the init container writes `MODEL_CONFIG_FILE` (emptyDir `CONFIG_VOLUME`, mounted
read-only in the vLLM container)."""
MODEL_CONFIG_FILE: Final = f"{MODEL_CONFIG_DIR}/model.yaml"
"""``model: <folder>`` of a staged source's published attempt; vLLM takes only ``.yaml`` and
``.yml`` files (``FlexibleArgumentParser.load_config_file``)."""
CONFIG_VOLUME: Final = "streamed-model"
MODEL_VARIABLE: Final = "MODEL_URI"
"""The fetch container's variable of the model's own folder (`vllm.weight_copies`)."""


def streams_weights(model: ServedModel) -> bool:
    """A vLLM model whose weights are streamed from the model store."""
    return model.server == "vllm" and model.stream_weights


def _compiles(env: ServingEnvironment, model: ServedModel) -> bool:
    # `vllm_compile.compiles`, which imports this module.
    eager = model.vllm is not None and bool(model.vllm.enforce_eager)
    return not eager and bool(env.model_store_uri)


def refusal(env: ServingEnvironment, model: ServedModel) -> str | None:
    """Why `model` cannot stream its weights in `env`, or None when it can."""
    scheme = source_uri(env, model, model.source).split("://", 1)[0]
    return streaming_refusal(
        env.vllm_version,
        scheme,
        custom_image=model.image is not None,
        compiles=_compiles(env, model),
    )


def require_streaming(env: ServingEnvironment, model: ServedModel) -> None:
    """Raises `ServingArgsError` at ``stream_weights`` when `refusal` names a reason."""
    why = refusal(env, model)
    if why is not None:
        raise ServingArgsError(
            model.name,
            ("stream_weights",),
            f"the weights cannot be streamed from the model store: {why}",
            "drop stream_weights from the model's scale-out levers (the weights are copied)",
        )


def model_argument(env: ServingEnvironment, model: ServedModel) -> list[str]:
    """The store folder of the weights, or ``--config`` `MODEL_CONFIG_FILE` for a staged
    source (its folder is resolved at start)."""
    if is_staged(model.source):
        return ["--config", MODEL_CONFIG_FILE]
    return [source_uri(env, model, model.source)]


def memory_limit_bytes(model: ServedModel) -> int:
    """The streamer's CPU buffer per GPU worker (`BUFFER_SHARE`)."""
    _, mem_mib = replica_share(model)
    return mem_mib // BUFFER_SHARE // model.gpus * 1024 * 1024


def loader_args(model: ServedModel) -> list[str]:
    extra = {"concurrency": CONCURRENCY, "memory_limit": memory_limit_bytes(model)}
    return [
        "--load-format",
        LOAD_FORMAT,
        "--model-loader-extra-config",
        json.dumps(extra, separators=(",", ":")),
    ]


def streamed_args(env: ServingEnvironment, model: ServedModel) -> list[str]:
    """`vllm.vllm_args` with the store's folder (`model_argument`) for the local copy and
    the streamer's loader (`loader_args`) after it."""
    args = vllm_args(model)
    assert args[0] == vllm_weights(model)
    return [*model_argument(env, model), *loader_args(model), *args[1:]]


def streaming_env(env: ServingEnvironment, role: str) -> list[Manifest]:
    """What the streamer needs to reach the store, for a pod running as ServiceAccount
    `role`. S3 (aws) and S3-compatible stores (kubernetes): the region; on kubernetes also
    the endpoint and `role`'s keys (`store_cli.store_credentials`), path-style addressing
    (``RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING=0``: "should be 0 for reading from
    compatible object store", runai-model-streamer 0.15.7 ``docs/src/env-vars.md``) and no
    instance metadata (``AWS_EC2_METADATA_DISABLED=true``, as vLLM's documentation runs an
    S3-compatible store: docs.vllm.ai ``models/extensions/runai_model_streamer``). GCS: none;
    the streamer's GCS backend uses Application Default Credentials (``env-vars.md``,
    ``RUNAI_STREAMER_GCS_CREDENTIAL_FILE``), i.e. Workload Identity."""
    if not s3_cli(env):
        return []
    out: list[Manifest] = [
        {"name": "AWS_REGION", "value": env.region},
        {"name": "AWS_DEFAULT_REGION", "value": env.region},
    ]
    if env.cloud == "kubernetes":
        out += [
            *store_credentials(env, role),
            {"name": "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING", "value": "0"},
            {"name": "AWS_EC2_METADATA_DISABLED", "value": "true"},
        ]
    return out


def streamed_env(env: ServingEnvironment, model: ServedModel, role: str) -> list[Manifest]:
    """`vllm.vllm_env` and `streaming_env` (the store's variables before ``vllm.env``'s,
    which validation keeps off these names)."""
    return [*vllm_env(model), *streaming_env(env, role)]


def streamed_container(env: ServingEnvironment, model: ServedModel, image: str) -> Manifest:
    """The vLLM container of a streaming model (`vllm.vllm_container`, changed as the module
    docstring says)."""
    require_streaming(env, model)
    container = vllm_container(env, model, image)
    container["args"] = [literal(a) for a in streamed_args(env, model)]
    container["env"] = literal_env(streamed_env(env, model, naming.MODEL_READER_SA))
    container["volumeMounts"] = [*container["volumeMounts"], *config_mounts(model)]
    return container


def copies_kept(env: ServingEnvironment, model: ServedModel) -> list[WeightCopy]:
    """What a streaming replica still copies: an EAGLE draft model, LoRA adapters."""
    return [c for c in weight_copies(env, model) if c.variable != MODEL_VARIABLE]


def config_volumes(model: ServedModel) -> list[Manifest]:
    """The emptyDir of `MODEL_CONFIG_FILE`, for a staged source."""
    return [empty_dir(CONFIG_VOLUME)] if is_staged(model.source) else []


def config_mounts(model: ServedModel, read_only: bool = True) -> list[Manifest]:
    if not is_staged(model.source):
        return []
    return [mount(CONFIG_VOLUME, MODEL_CONFIG_DIR, read_only=read_only)]


def resolve_lines(env: ServingEnvironment, model: ServedModel) -> list[str]:
    """Shell lines writing `MODEL_CONFIG_FILE` from the staged copy's marker: the folder of
    the published attempt (a URI of store characters and ``attempt-<uid>``, which
    `store_cli.resolve_attempt` checks), as a quoted YAML string."""
    if not is_staged(model.source):
        return []
    return [
        *resolve_attempt(env, MODEL_VARIABLE, "staged copy"),
        f'printf \'model: "%s"\\n\' "$ATTEMPT_URI" > "{MODEL_CONFIG_FILE}"',
    ]


def streaming_fetch_container(
    env: ServingEnvironment,
    model: ServedModel,
    compile_cache_uri: str | None = None,
    skip_file: str | None = None,
    always: bool = False,
) -> Manifest | None:
    """The init container of a streaming model: the copies kept (`copies_kept`), the staged
    folder resolved (`resolve_lines`), the compile cache as `vllm.vllm_fetch_container`
    copies it. None when it would do nothing, unless `always` (a compile Job, whose later
    containers mount its volumes)."""
    copies = copies_kept(env, model)
    lines = resolve_lines(env, model)
    variables: list[Manifest] = []
    if lines:
        uri = source_uri(env, model, model.source)
        variables.append({"name": MODEL_VARIABLE, "value": literal(uri)})
    if not (copies or lines or compile_cache_uri or always):
        return None
    return fetch_container(
        env,
        model,
        copies,
        compile_cache_uri,
        skip_file,
        (lines, variables, config_mounts(model, read_only=False)),
    )
