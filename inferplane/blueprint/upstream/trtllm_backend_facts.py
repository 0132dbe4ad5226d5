"""What the TensorRT-LLM backend of a Triton release reads from its ``tensorrt_llm`` model's
``config.pbtxt``, and a check of the names a config writes against it.

The facts are ``inferplane/facts/tensorrtllm_backend/<release>/{parameters,tensors}.txt``,
written by ``scripts/facts/trtllm_backend_facts.py`` from
triton-inference-server/tensorrtllm_backend branch ``r<release>`` (provenance and format in
each header). Their ``Evidence`` differs:

- ``source``: the branch holds the backend (Triton 25.03, TensorRT-LLM 0.18). A parameter key
  is known when the C++ backend reads it or the template sets it; a tensor when the template
  declares it, with its data type and dims.
- ``documentation``: since TensorRT-LLM 0.20 (Triton 25.06) the backend lives in
  NVIDIA/TensorRT-LLM ``triton_backend/``, which the branch does not hold; only its
  ``docs/model_config.md`` can be read. A name is known when those docs name it (a key whose
  template placeholder they name counts: ``gpt_model_path`` by ``engine_dir``). The docs do not
  name everything the template declares (Triton 25.03's docs leave out
  ``encoder_input_features``, ``sequence_index`` and the ``exclude_input_in_output`` input
  its template declares), so a name the newest earlier ``source`` release knows and its own
  docs did not name either is *unconfirmed*, not refused: the docs' silence says nothing of
  it. A name that release's docs named and these docs no longer name was renamed or removed
  (``random_seed`` became ``seed``) and is refused.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources

from inferplane.blueprint import defaults, releases

SOURCE, DOCUMENTATION = "source", "documentation"
DOCUMENTED = "documented"


@dataclass(frozen=True)
class TensorFact:
    direction: str
    """``input`` or ``output``."""
    name: str
    data_type: str
    """``TYPE_INT32``, a ``${placeholder}`` fill_template fills, or as documented."""
    dims: str
    """``[-1, -1]`` as the template writes it, or the documented shape."""
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class BackendFacts:
    release: str
    evidence: str
    parameters: Mapping[str, tuple[str, ...]]
    """Name -> origins: ``reads``, ``template``, ``template=${placeholder}``, ``documented
    mandatory|optional``."""
    tensors: Mapping[tuple[str, str], TensorFact]
    """(direction, name) -> fact."""

    def is_key(self, key: str) -> bool:
        """Whether the backend knows parameter `key` (``source``: reads or sets it;
        ``documentation``: the docs name it)."""
        origins = self.parameters.get(key, ())
        if self.evidence == SOURCE:
            return any(o == "reads" or o.startswith("template") for o in origins)
        return bool(origins)

    def documents(self, direction: str, name: str) -> bool:
        fact = self.tensors.get((direction, name))
        return fact is not None and DOCUMENTED in fact.flags

    def placeholder(self, key: str) -> str | None:
        """The fill_template name of `key`'s value in the template (``source`` only)."""
        for origin in self.parameters.get(key, ()):
            if origin.startswith("template=${"):
                return origin.removeprefix("template=${").removesuffix("}")
        return None


@dataclass(frozen=True)
class NamesCheck:
    problems: tuple[str, ...]
    """Names the release does not know, each with why."""
    unconfirmed: tuple[str, ...]
    """Names a ``documentation`` release's docs do not name but an earlier release's source
    knows (and its docs did not name either): accepted."""


def facts_path(release: str) -> str:
    return f"inferplane/facts/tensorrtllm_backend/{release}"


def has_facts(release: str) -> bool:
    return resources.files("inferplane").joinpath("facts", "tensorrtllm_backend", release).is_dir()


def read_facts(release: str, parameters: str, tensors: str) -> BackendFacts:
    """The facts of `release` from the text of its two files."""
    evidence = ""
    for line in parameters.splitlines():
        if line.startswith("# Evidence: "):
            evidence = line.removeprefix("# Evidence: ").strip()
    if evidence not in (SOURCE, DOCUMENTATION):
        raise ValueError(f"{facts_path(release)}/parameters.txt: no `# Evidence:` line")
    params = {}
    for line in _rows(parameters):
        name, origins = line.split("\t")
        params[name] = tuple(origins.split(","))
    found = {}
    for line in _rows(tensors):
        direction, name, data_type, dims, *rest = line.split("\t")
        flags = tuple(rest[0].split(",")) if rest else ()
        found[(direction, name)] = TensorFact(direction, name, data_type, dims, flags)
    return BackendFacts(release, evidence, params, found)


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


@functools.cache
def backend_facts(release: str | None = None) -> BackendFacts:
    """The facts of Triton `release` (default: the pinned one)."""
    release = defaults.VERSIONS["triton"] if release is None else release
    if not has_facts(release):
        raise ValueError(
            f"no TensorRT-LLM backend facts for Triton {release}: run "
            f"scripts/facts/trtllm_backend_facts.py for it ({facts_path(release)})"
        )
    where = resources.files("inferplane").joinpath("facts", "tensorrtllm_backend", release)
    return read_facts(
        release,
        where.joinpath("parameters.txt").read_text(),
        where.joinpath("tensors.txt").read_text(),
    )


def source_release(release: str) -> BackendFacts | None:
    """The facts of the newest supported release not after `release` whose evidence is the
    backend's source, None when there is none."""
    found = None
    for row in releases.engine_releases("triton"):
        facts = backend_facts(row.release)
        if facts.evidence == SOURCE:
            found = facts
        if row.release == release:
            return found
    return None


def check_names(
    parameters: Iterable[str],
    tensors: Iterable[tuple[str, str]],
    release: str | None = None,
) -> NamesCheck:
    """Every parameter key and (direction, name) tensor a config writes, against the
    facts of Triton `release` (see the module docstring)."""
    facts = backend_facts(release)
    where = f"the TensorRT-LLM backend of Triton {facts.release}"
    problems: list[str] = []
    unconfirmed: list[str] = []
    if facts.evidence == SOURCE:
        problems += [f"parameter {k}: {where} reads no such key" for k in parameters
                     if not facts.is_key(k)]  # fmt: skip
        problems += [f"{d} {n}: {where} declares no such tensor" for d, n in tensors
                     if (d, n) not in facts.tensors]  # fmt: skip
        return NamesCheck(tuple(problems), ())
    earlier = source_release(facts.release)
    for key in parameters:
        shown = earlier.placeholder(key) if earlier else None
        if facts.is_key(key) or (shown is not None and facts.is_key(shown)):
            continue
        _unknown(f"parameter {key}", earlier is not None and earlier.is_key(key)
                 and not any(o.startswith(DOCUMENTED) for o in earlier.parameters[key]),
                 where, earlier, problems, unconfirmed)  # fmt: skip
    for direction, name in tensors:
        if facts.documents(direction, name):
            continue
        _unknown(f"{direction} {name}", earlier is not None
                 and (direction, name) in earlier.tensors
                 and not earlier.documents(direction, name),
                 where, earlier, problems, unconfirmed)  # fmt: skip
    return NamesCheck(tuple(problems), tuple(unconfirmed))


def _unknown(
    what: str,
    carried: bool,
    where: str,
    earlier: BackendFacts | None,
    problems: list[str],
    unconfirmed: list[str],
) -> None:
    if carried:
        unconfirmed.append(what)
        return
    before = (
        f"; Triton {earlier.release}'s source and docs knew it: renamed or removed"
        if earlier is not None and _knew(earlier, what)
        else ""
    )
    problems.append(f"{what}: the documentation of {where} does not name it{before}")


def _knew(facts: BackendFacts, what: str) -> bool:
    kind, name = what.split(" ", 1)
    return facts.is_key(name) if kind == "parameter" else (kind, name) in facts.tensors


RENAMED_INPUTS: dict[str, str] = {"seed": "random_seed", "min_tokens": "min_length"}
"""Inputs TensorRT-LLM 0.20 (Triton 25.06) renamed, new name -> old: tensorrtllm_backend
r25.03 (0.18) declares ``random_seed`` and ``min_length`` in its template and reads them by
those names (``inflight_batcher_llm/src/utils.h``, ``InputFieldsNames::randomSeed`` and
``minLength``; so does v0.19.0); the ``docs/model_config.md`` of r25.06 and later documents
``seed`` and ``min_tokens`` and no longer the old names."""


def input_name(name: str, release: str | None = None) -> str:
    """The name Triton `release`'s backend gives the input inferplane calls `name` (its
    newest name): the old one of `RENAMED_INPUTS` where the release has only that."""
    facts = backend_facts(release)
    old = RENAMED_INPUTS.get(name)
    if old and ("input", name) not in facts.tensors and ("input", old) in facts.tensors:
        return old
    return name
