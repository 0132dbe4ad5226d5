"""Whether a vLLM release can stream a model's weights from the model store, and why not.

Read from ``inferplane/facts/vllm/<release>/weight_streaming.json``, which
``scripts/facts/vllm_streaming.py`` generates from the release's wheel (the image's
streamer backends are stated there by hand, with their source). A release streams from a
store when its ``--load-format runai_streamer`` takes the store's scheme as a model path
(``SUPPORTED_SCHEMES``), its image installs the Run:ai streamer's backend for that store,
and it names the local copy of the model's config files by the URI: vLLM hashes the model
path into its ``torch.compile`` cache key, and a fresh temporary directory on every start
(v0.10.2) would make every streamed replica miss the staged compile cache.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

BACKEND_OF_SCHEME: Final = {"s3": "s3", "gs": "gcs"}
"""A store URI's scheme -> the Run:ai streamer backend that reads it (the extra of
``runai-model-streamer`` that installs it)."""


@dataclass(frozen=True)
class StreamingFacts:
    release: str
    schemes: tuple[str, ...]
    """Model path prefixes vLLM streams (``s3://``, ``gs://``, ...)."""
    extra_config_keys: tuple[str, ...]
    """The ``--model-loader-extra-config`` keys the streamer's loader reads."""
    image_backends: tuple[str, ...]
    """The streamer's backends the ``vllm/vllm-openai`` image installs."""
    image_source: str
    config_dir_fixed: bool
    """vLLM names the local copy of the config files by the URI (a staged compile cache
    can match a streamed replica)."""
    config_dir: str
    """How vLLM names that copy, as the facts say."""


def has_streaming_facts(release: str) -> bool:
    return (
        resources.files("inferplane")
        .joinpath("facts", "vllm", release, "weight_streaming.json")
        .is_file()
    )


@functools.cache
def streaming_facts(release: str) -> StreamingFacts:
    """The streaming facts of vLLM `release`; FileNotFoundError if it has none."""
    path = resources.files("inferplane").joinpath("facts", "vllm", release, "weight_streaming.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return StreamingFacts(
        release=release,
        schemes=tuple(data["schemes"]),
        extra_config_keys=tuple(data["extra_config_keys"]),
        image_backends=tuple(data["image"]["backends"]),
        image_source=data["image"]["source"],
        config_dir_fixed=bool(data["pulled"]["directory_fixed_by_uri"]),
        config_dir=data["pulled"]["directory"],
    )


def streaming_refusal(
    release: str, scheme: str, *, custom_image: bool = False, compiles: bool = True
) -> str | None:
    """Why vLLM `release` cannot stream weights from a store of `scheme` (``s3``, ``gs``)
    for a model that runs its own image (`custom_image`) or ``torch.compile`` (`compiles`),
    or None when it can."""
    if custom_image:
        return (
            "the model runs its own image, and whether that image installs the Run:ai "
            "streamer and its store backend is not known"
        )
    if not has_streaming_facts(release):
        return f"vLLM {release} has no streaming facts (inferplane/facts/vllm/{release}/)"
    facts = streaming_facts(release)
    if f"{scheme}://" not in facts.schemes:
        return f"vLLM {release} streams only {', '.join(facts.schemes)} model paths"
    backend = BACKEND_OF_SCHEME.get(scheme)
    if backend not in facts.image_backends:
        return (
            f"the vllm/vllm-openai:{release} image installs the Run:ai streamer's "
            f"{', '.join(facts.image_backends)} backend only, not {backend} ({facts.image_source})"
        )
    if compiles and not facts.config_dir_fixed:
        return (
            f"vLLM {release} copies a streamed model's config files into {facts.config_dir}, "
            "and hashes that path into its torch.compile cache key (ModelConfig.compute_hash): "
            "a streamed replica would never find the staged compile cache"
        )
    return None
