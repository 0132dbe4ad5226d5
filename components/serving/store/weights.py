"""``hf://`` weights staged into the model store: one Job per repository and revision.

No serving pod talks to the Hugging Face hub. Every ``hf://org/name@revision`` an
environment uses — a model's weights, an EAGLE draft model, a LoRA adapter, a TensorRT-LLM
checkpoint — is copied once into the environment's model store, at

    <model_store>/.inferplane/hub/<blueprint>/<org>/<name>/<revision>/

(`staged_uri`; a revision holding ``/``, e.g. ``refs/pr/1``, becomes one path segment
``rev-<hash>``), by a Job ``weights-<key[:10]>`` (`weights_job`) keyed by repository and
revision (`HubSource.key`): once, so a branch or tag is frozen at what it named then
(validate warns; pin a commit SHA). Two models of one environment naming the same
repository and revision share one Job. Replicas then copy the staged directory from the
same-region store exactly as they copy an s3:// or gs:// source
(`vllm.vllm_fetch_container`), with the hub offline.

The pod (all containers hardened like the servers):

- init ``check-staged`` (cloud CLI): the attempt marker (`store_cli.ATTEMPT_MARKER`)
  exists under the staged prefix -> every later step is a no-op, so a re-run costs one
  request;
- init ``download`` (the pinned vLLM image, which ships huggingface_hub as a vLLM
  dependency, and ``NVIDIA_VISIBLE_DEVICES=void``: no GPU): ``snapshot_download(repo_id,
  revision=, local_dir=, ignore_patterns=)`` (huggingface/huggingface_hub
  ``src/huggingface_hub/_snapshot_download.py``), without the ``original/`` files vLLM skips
  too (`weights_job.IGNORE_PATTERNS`); it alone holds the Hub
  token, as the file ``HF_TOKEN_PATH`` names (`secrets`), from the Secret
  ``weights-<key[:10]>-hub-token`` this component writes from the token reference of the
  first model (in blueprint order) that uses the source and has one. ``local_dir`` keeps
  huggingface_hub's download metadata in ``<local_dir>/.cache/huggingface/``; it is removed
  before the upload;
- ``upload`` (cloud CLI, ServiceAccount ``weights-stager``, which may write only under
  the hub prefix, `identity`): ``aws s3 sync`` / ``gcloud storage rsync --recursive`` into
  ``<staged prefix>attempt-<pod uid>/``, a folder no other attempt writes, then the marker
  naming that folder, last (`store_cli.publish_attempt`). Nothing is ever overwritten, which
  an object creator may not do on GCS, so a Job retried after a pod died mid-upload
  succeeds; replicas copy the folder the marker names (`store_cli.sync_published`).

The pod runs on a node of the GPU pool of the first model that uses the source, without
a GPU: the pool's disk (``disk_gib``) is sized for its models' weights, which a system
node's is not, and a serving replica needs that node right after. NetworkPolicy
``weights-<key[:10]>``: no ingress; egress to DNS and TCP 443 outside the cluster and the
VPC — the hub (huggingface.co and its CDN) and the store alike, since a NetworkPolicy
cannot tell public addresses apart (`network_policies`). The serving pods keep that
same 443 rule for the store: what keeps them off the hub is that they have no token, no
``hf://`` argument, and ``HF_HUB_OFFLINE=1``.

Streaming instead of copying: a vLLM model whose scale-out levers choose ``stream_weights``
reads the staged copy (or its s3:// or gs:// source) with vLLM's ``--load-format
runai_streamer`` instead of copying it (`inferplane.components.serving.vllm.weight_streaming`):
its init container then only resolves the folder the marker names and hands it to vLLM.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from inferplane.blueprint import naming
from inferplane.blueprint.model import ModelSource
from inferplane.components.serving.containers import MODELS_DIR
from inferplane.components.serving.secrets import file_secrets
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.spec_parts import ModelSecret, ServingPool

DRAFT_DIR: Final = f"{MODELS_DIR}/.draft"
"""Where a serving pod copies its EAGLE draft model: a dot name, which no model's own
directory (``/models/<model>``, a DNS-1123 label) can be, so a model named ``draft`` keeps
its weights apart from its draft's."""


@dataclass(frozen=True, order=True)
class HubSource:
    """One pinned Hugging Face repository: what a staging Job copies."""

    repo: str
    """``org/name``."""
    revision: str
    """A commit, tag or branch; a tag or branch is staged as it is the first time the Job
    runs and never refreshed (the completion marker stops every later run)."""

    @property
    def uri(self) -> str:
        return f"hf://{self.repo}@{self.revision}"

    @property
    def key(self) -> str:
        """Content key of the staged copy: the repository and revision, nothing else."""
        return naming.short_hash("hub", self.repo, self.revision)

    @property
    def job_name(self) -> str:
        return naming.weights_job(self.key)

    @property
    def path(self) -> str:
        """``<org>/<name>/<revision>`` under the hub prefix. The schema lets a revision hold
        ``/`` (``refs/pr/1``), and so ``..`` segments: such a revision becomes one segment."""
        return f"{self.repo}/{naming.staged_revision_dir(self.revision)}"


def hub_source(
    model: str, field: tuple[str, ...], repo: str | None, revision: str | None
) -> HubSource:
    """The `HubSource` of an ``hf://`` reference of `model` at `field`; an unpinned one is
    refused: the staged copy is keyed by its revision."""
    if not repo or not revision:
        raise ServingArgsError(
            model,
            field,
            f"hf://{repo or ''} has no revision; the weights are staged into the model store "
            "keyed by repository and revision",
            "pin it: hf://org/name@<commit SHA> (a tag or branch is staged once, never refreshed)",
        )
    return HubSource(repo, revision)


def model_hub_sources(model: ServedModel) -> Iterator[tuple[tuple[str, ...], HubSource]]:
    """(field, source) of every ``hf://`` reference of `model`: weights, draft, adapters."""
    if model.source.scheme == "hf":
        yield (
            ("source",),
            hub_source(model.name, ("source",), model.source.hf_repo, model.source.hf_revision),
        )
    settings = model.vllm
    spec = settings.speculative if settings else None
    if spec and spec.draft_repo:
        draft: tuple[str, ...] = ("vllm", "speculative", "draft_model")
        yield draft, hub_source(model.name, draft, spec.draft_repo, spec.draft_revision)
    adapters = settings.lora.adapters if settings and settings.lora else ()
    for adapter in adapters:
        if adapter.source.scheme == "hf":
            field = ("vllm", "lora", "adapters", adapter.name)
            src = adapter.source
            yield field, hub_source(model.name, field, src.hf_repo, src.hf_revision)


def hub_sources(model: ServedModel) -> list[HubSource]:
    """The distinct ``hf://`` sources of `model`, in `model_hub_sources` order."""
    return list(dict.fromkeys(source for _, source in model_hub_sources(model)))


def staged_uri(env: ServingEnvironment, source: HubSource, model: str = "") -> str:
    """The store prefix of the staged copy of `source`, ending in ``/``."""
    if not env.model_store_uri:
        raise ServingArgsError(
            model,
            ("source",),
            "hf:// weights are staged into the model store, and none is given",
            "set ServingEnvironment.model_store_uri (s3:// or gs://)",
        )
    store = env.model_store_uri.rstrip("/")
    return f"{store}/{naming.store_area(naming.HUB_PREFIX, env.part_of)}/{source.path}/"


def is_staged(source: ModelSource) -> bool:
    """Whether replicas read `source` from a staged copy (published by attempt), not from
    the URI the blueprint gave."""
    return source.scheme == "hf"


def source_uri(env: ServingEnvironment, model: ServedModel, source: ModelSource) -> str:
    """The folder (ending in ``/``) a replica copies `source` from, a directory of weights
    or an adapter: the store URI as a folder (`naming.source_folder`: what the identities
    are granted, never a bare prefix), or an hf:// source's staged copy."""
    if not is_staged(source):
        return source.uri if source.uri.endswith("/") else f"{source.uri}/"
    found = hub_source(model.name, ("source",), source.hf_repo, source.hf_revision)
    return staged_uri(env, found, model.name)


def hub_token(model: ServedModel) -> ModelSecret | None:
    """The model's Hugging Face token reference (read as a file), if it has one."""
    tokens = file_secrets(model)
    return tokens[0] if tokens else None


@dataclass(frozen=True)
class Staging:
    """Who stages one source: the source, the pool its Job runs on, and its token."""

    source: HubSource
    pool: ServingPool
    token: ModelSecret | None
    token_owner: str | None
    """The model whose token reference `token` is (for messages)."""
    used_by: tuple[str, ...] = ()
    """The models that read the staged copy (annotation `USED_BY_ANNOTATION`)."""


def plan_staging(models: list[ServedModel]) -> dict[HubSource, Staging]:
    """One `Staging` per distinct ``hf://`` source of `models`: the Job runs on the pool of
    the first model that uses it, with the token of the first such model that has one."""
    out: dict[HubSource, Staging] = {}
    for model in models:
        token = hub_token(model)
        for source in hub_sources(model):
            found = out.get(source)
            if found is None:
                found = Staging(source, model.pool, token, model.name if token else None)
            elif found.token is None and token is not None:
                found = dataclasses.replace(found, token=token, token_owner=model.name)
            out[source] = dataclasses.replace(found, used_by=(*found.used_by, model.name))
    return out
