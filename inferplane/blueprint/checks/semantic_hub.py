"""Advisories about ``hf://`` references and the Hugging Face token (`advisories`, printed
by ``inferplane validate`` as warnings, exit 0).

Every ``hf://org/name@revision`` (a model's source, an EAGLE draft model, a LoRA adapter)
is staged into the model store once per repository and revision, and a completion marker
stops every later run (`inferplane.components.serving.store.weights`). A revision that is not a
full commit SHA (a branch or tag, such as ``main``, or a short SHA the hub resolves like a
name) is therefore frozen at whatever it named the first time the Job ran: the hub may
move it, the store never follows. The warning says so at the reference.

The token (``secrets.hf_token``, or any name `secret_refs.TOKEN_NAMES` lists) is read only
by the Job staging a model's ``hf://`` references; no serving pod ever gets it. A model
with a token but no ``hf://`` reference has a secret nothing reads: the warning says so at
the secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.blueprint import llm_catalog, naming
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.secret_refs import TOKEN_NAMES, env_var_name

Advisory = tuple[YamlPath, str, str]
"""(where, message, hint) of one warning."""

COMMIT_SHA = re.compile(r"[0-9a-f]{40}")
"""A full Git commit id, as the hub shows it (lower-case hex)."""
SHORT_SHA = re.compile(r"[0-9a-f]{7,39}")
"""A commit id abbreviated as Git and the hub's pages show it (7 digits or more)."""


def hf_references(model: Mapping[str, Any]) -> Iterator[tuple[YamlPath, str]]:
    """(path under the model, reference) of every ``hf://`` reference of one model."""
    source = model.get("source")
    if isinstance(source, str) and source.startswith("hf://"):
        yield ("source",), source
    settings = model.get("vllm") or {}
    draft = (settings.get("speculative") or {}).get("draft_model")
    if isinstance(draft, str) and draft.startswith("hf://"):
        yield ("vllm", "speculative", "draft_model"), draft
    adapters = (settings.get("lora") or {}).get("adapters") or {}
    for name, uri in adapters.items():
        if isinstance(uri, str) and uri.startswith("hf://"):
            yield ("vllm", "lora", "adapters", name), uri


PR_REF = re.compile(r"refs/pr/[0-9]+")
"""A Hub pull request's ref: whatever its author pushed, never reviewed by the repository's
owners (https://huggingface.co/docs/hub/repositories-pull-requests-discussions, "Pull
requests advanced usage": ``refs/pr/<N>``)."""


def errors(env: EnvView) -> Iterator[Advisory]:
    """(where, what, how to fix) of each refused ``hf://`` reference of one environment:
    a pull request's ref, and a revision spelled like the staged folder of another
    (`naming.staged_revision_dir`: a revision holding ``/`` is staged as ``rev-<hash>``,
    every other one as itself, so with ``rev-`` refused no two revisions share a folder)."""
    for name, model in (env.data.get("models") or {}).items():
        token = has_token(model)
        for field, uri in hf_references(model):
            where = ("models", name, *field)
            repo, _, revision = uri.removeprefix("hf://").partition("@")
            facts = llm_catalog.lookup(repo)
            if facts is not None and facts.gated and not token:
                yield (
                    where,
                    f"hf://{repo} is a gated repository: the Hub serves its files only to an "
                    f"account that accepted its licence ({facts.card}), and the model has no "
                    "Hugging Face token, so staging it is refused",
                    "accept the licence on the model card, then give that account's token: "
                    "secrets: {hf_token: {from_env: HF_TOKEN}} (or from_pulumi_config, "
                    "from_secret_manager)",
                )
            if not revision:
                continue
            if PR_REF.fullmatch(revision):
                yield (
                    where,
                    f"revision {revision!r} of hf://{repo} is a Hub pull request: its files "
                    "are whatever the pull request's author pushed, not the repository's",
                    f"pin a commit of the repository itself: hf://{repo}@<40-hex commit SHA>",
                )
                continue
            if revision.startswith(naming.STAGED_REVISION_PREFIX):
                yield (
                    where,
                    f"revision {revision!r} of hf://{repo} starts with "
                    f"{naming.STAGED_REVISION_PREFIX!r}, how staged folders of other "
                    "revisions are named",
                    f"pin a commit: hf://{repo}@<40-hex commit SHA>",
                )


def has_token(model: Mapping[str, Any]) -> bool:
    """Whether the model has a Hugging Face token (a secret the staging Job reads)."""
    return any(env_var_name(secret) in TOKEN_NAMES for secret in model.get("secrets") or {})


def findings(env: EnvView) -> Iterator[Advisory]:
    """The hub advisories of one environment's models."""
    for name, model in (env.data.get("models") or {}).items():
        path: YamlPath = ("models", name)
        references = list(hf_references(model))
        for field, uri in references:
            repo, _, revision = uri.removeprefix("hf://").partition("@")
            if SHORT_SHA.fullmatch(revision):
                yield (
                    (*path, *field),
                    f"revision {revision!r} of hf://{repo} is a commit SHA cut short: a commit "
                    f"SHA is 40 hex characters; this one has {len(revision)}, and the hub "
                    "resolves a short one like a branch name, staged into the model store once "
                    "and never refreshed",
                    f"pin the whole commit: hf://{repo}@<40-hex commit SHA> (the repository's "
                    "commit history on huggingface.co shows it)",
                )
            elif revision and not COMMIT_SHA.fullmatch(revision):
                yield (
                    (*path, *field),
                    f"revision {revision!r} of hf://{repo} is not a commit: it is staged "
                    "into the model store once and never refreshed, whatever the hub's "
                    f"{revision!r} names later",
                    f"pin a commit: hf://{repo}@<40-hex commit SHA>",
                )
        if references:
            continue
        for secret in model.get("secrets") or {}:
            if env_var_name(secret) in TOKEN_NAMES:
                yield (
                    (*path, "secrets", secret),
                    "nothing uses this Hugging Face token: the model has no hf:// source, "
                    "draft model or LoRA adapter, and no serving pod ever gets the token",
                    "remove it, or reference the weights as hf://org/name@<commit SHA>",
                )
