"""Writes what the TensorRT-LLM backend of each supported Triton release accepts in the
``config.pbtxt`` of its ``tensorrt_llm`` model: the parameter keys and the input and output
tensors, read from triton-inference-server/tensorrtllm_backend at the release's branch
``r<release>`` (the branch NVIDIA cuts for each NGC release, as for Triton's own repositories).

    git clone --bare https://github.com/triton-inference-server/tensorrtllm_backend \
        ~/.cache/inferplane/tensorrtllm_backend.git                  # once, outside the repo
    git --git-dir ~/.cache/inferplane/tensorrtllm_backend.git fetch origin \
        '+refs/heads/*:refs/heads/*'
    python scripts/facts/trtllm_backend_facts.py [--git-dir DIR] [--check]

writes ``inferplane/facts/tensorrtllm_backend/<release>/{parameters,tensors}.txt`` for every
Triton release of ``inferplane/blueprint/releases.json`` (the same list as
scripts/facts/triton_facts.py), each headed by the branch's commit, the git blob of every file read
and this script's version; ``--check`` compares instead of writing. ``--git-dir`` defaults to
``$INFERPLANE_TRTLLM_BACKEND_GIT``, else the clone above.

What a branch holds decides the evidence, which every file states on its ``# Evidence:`` line:

- ``source``: the branch holds the backend (to v0.19.0, Triton 25.05). The parameters are
  every key the C++ backend reads (``GetParameter<T>("key")`` in
  ``inflight_batcher_llm/src/*.cc``, also through a ``fieldName`` variable) and every key the
  template ``all_models/inflight_batcher_llm/tensorrt_llm/config.pbtxt`` sets; the tensors are
  the template's inputs and outputs with data type, dims and flags.
- ``documentation``: since 0.20 (Triton 25.06) the backend lives in NVIDIA/TensorRT-LLM under
  ``triton_backend/`` and the branch holds only its ``tensorrt_llm`` submodule pointer and the
  docs (README: "the Triton backend source code and test have been moved to TensorRT-LLM
  under the `triton_backend` directory"). The files then hold what the branch's
  ``docs/model_config.md`` documents for the ``tensorrt_llm`` model: the names of its
  parameter tables (fill_template names: mostly the keys, but ``engine_dir`` is the key
  ``gpt_model_path``'s placeholder) and its tensor tables (type and shape as documented).
  The header names the submodule commit whose ``triton_backend/`` holds the source.

Every header also names the TensorRT-LLM the branch builds: the ``TENSORRTLLM_*`` ARGs of its
``dockerfile/Dockerfile.triton.trt_llm_backend`` and the tags of the repository whose
submodule points at the same commit (25.08: ``release/0.21``, tag v0.21.0).

Upgrading: add the release to ``releases.json``, run the script, read the diff against the
previous release (``git diff --no-index``).
``inferplane/blueprint/upstream/trtllm_backend_facts.py`` checks the names a config writes
against these files; ``tests/blueprint/test_trtllm_backend_facts.py`` fails when a supported
release has no facts, a file was written by another version of this script, or (with the
clone present) reading it again differs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import triton_facts

from inferplane.blueprint.upstream import pbtxt

SCRIPT_VERSION = "1"
"""Written into every file; raise it whenever a change here changes what the files say."""

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "inferplane" / "facts" / "tensorrtllm_backend"
FILES = ("parameters.txt", "tensors.txt")
REPOSITORY = "triton-inference-server/tensorrtllm_backend"
DEFAULT_GIT_DIR = Path.home() / ".cache" / "inferplane" / "tensorrtllm_backend.git"
SOURCE_DIR = "inflight_batcher_llm/src"
TEMPLATE = "all_models/inflight_batcher_llm/tensorrt_llm/config.pbtxt"
DOCS = "docs/model_config.md"
SUBMODULE = "tensorrt_llm"
DOCKERFILE = "dockerfile/Dockerfile.triton.trt_llm_backend"
SOURCE, DOCUMENTATION = "source", "documentation"

_GET = re.compile(r'GetParameter<[^;]*?>\(\s*"([^"]+)"\s*\)', re.S)
_FIELD_NAME = re.compile(r'\bfieldName\s*=\s*"([^"]+)"')
_PLACEHOLDER = re.compile(r"\$\{(\w+)\}")
_MARK = "__placeholder__"
_URL = re.compile(r"url\s*=\s*(\S+)")
_TRTLLM_ARG = re.compile(r"^ARG TENSORRTLLM_(?:VER|REPO_TAG)=\S+", re.M)
_ROW = re.compile(r"^\|\s*`([A-Za-z0-9_]+)`\s*\|(.*)\|\s*$")

HEADER = """\
# {what} of the TensorRT-LLM backend's `tensorrt_llm` model in Triton release {release}.
# Source: {repository} branch r{release} (commit {commit}),
# read by scripts/facts/trtllm_backend_facts.py version {script} (see its docstring).
# Evidence: {evidence}
{provenance}# {layout}
"""
LAYOUT = {
    ("parameters.txt", SOURCE): "One name a line: NAME<TAB>ORIGINS, `reads` (the C++ backend "
    "reads the key), `template` (the\n# template sets the key; `template=${PLACEHOLDER}` when "
    "fill_template fills its value) and/or\n# `documented mandatory|optional` "
    "(docs/model_config.md names it: a key or a placeholder).",
    ("parameters.txt", DOCUMENTATION): "One documented name a line: NAME<TAB>documented "
    "mandatory|optional.",
    ("tensors.txt", SOURCE): "One tensor a line: input|output<TAB>NAME<TAB>DATA_TYPE<TAB>DIMS"
    "[<TAB>FLAGS]; a ${PLACEHOLDER} type is\n# filled by fill_template; flags: optional, "
    "allow_ragged_batch, reshape=[DIMS], documented (docs/model_config.md\n# names it).",
    ("tensors.txt", DOCUMENTATION): "One documented tensor a line: input|output<TAB>NAME"
    "<TAB>TYPE<TAB>SHAPE<TAB>documented (as the\n# tables write them).",
}


class FactsError(RuntimeError):
    """The clone cannot give a release's backend."""


@dataclass
class Read:
    """What one release branch says."""

    release: str
    commit: str
    evidence: str
    provenance: list[str] = field(default_factory=list)
    parameters: dict[str, list[str]] = field(default_factory=dict)
    tensors: list[tuple[str, ...]] = field(default_factory=list)


def git_dir(given: str | None = None) -> Path:
    return Path(given or os.environ.get("INFERPLANE_TRTLLM_BACKEND_GIT") or DEFAULT_GIT_DIR)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={repo}", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if done.returncode:
        raise FactsError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _blob(repo: Path, ref: str, path: str) -> tuple[str, str]:
    """(blob sha, text) of `path` at `ref`."""
    return _git(repo, "rev-parse", f"{ref}:{path}").strip(), _git(repo, "show", f"{ref}:{path}")


def _tree(repo: Path, ref: str, path: str) -> list[tuple[str, str, str]]:
    """(mode, sha, path) of every entry under `path` at `ref`, sorted by path."""
    rows = []
    for line in _git(repo, "ls-tree", "-r", ref, "--", path).splitlines():
        meta, name = line.split("\t", 1)
        mode, _, sha = meta.split()
        rows.append((mode, sha, name))
    return sorted(rows, key=lambda row: row[2])


def template_facts(text: str) -> tuple[dict[str, list[str]], list[tuple[str, ...]]]:
    """(parameter key -> origins, tensors) of a template config.pbtxt with ``${...}``."""
    marked = _PLACEHOLDER.sub(lambda m: _MARK + m.group(1), text)
    try:
        entries = pbtxt.parse(marked)
    except pbtxt.PbtxtError as err:
        raise FactsError(f"{TEMPLATE}: {err}") from err

    def unmark(value: str) -> str:
        return "${" + value.removeprefix(_MARK) + "}" if value.startswith(_MARK) else value

    parameters: dict[str, list[str]] = {}
    tensors: list[tuple[str, ...]] = []
    for entry in entries:
        for value in entry.values:
            fields = {f.name: f for f in value.fields}
            if entry.name == "parameters":
                key = fields["key"].values[0].text
                inner = {f.name: f for f in fields["value"].values[0].fields}
                filled = inner["string_value"].values[0].text if "string_value" in inner else ""
                origin = f"template={unmark(filled)}" if filled.startswith(_MARK) else "template"
                parameters.setdefault(key, []).append(origin)
            elif entry.name in ("input", "output"):
                dims = "[" + ", ".join(v.text for v in fields["dims"].values) + "]"
                flags = [f for f in ("optional", "allow_ragged_batch") if _true(fields.get(f))]
                if "reshape" in fields:
                    shape = {f.name: f for f in fields["reshape"].values[0].fields}.get("shape")
                    inner_dims = ", ".join(v.text for v in shape.values) if shape else ""
                    flags.append(f"reshape=[{inner_dims}]")
                row = [entry.name, fields["name"].values[0].text]
                row += [unmark(fields["data_type"].values[0].text), dims]
                tensors.append(tuple(row + ([",".join(flags)] if flags else [])))
    return parameters, tensors


def _true(entry: pbtxt.Entry | None) -> bool:
    return entry is not None and entry.values[0].text in ("true", "True", "1")


def source_keys(texts: list[str]) -> set[str]:
    """Every key the C++ backend reads with ``GetParameter``."""
    found: set[str] = set()
    for text in texts:
        found.update(_GET.findall(text))
        found.update(_FIELD_NAME.findall(text))
    return found


def docs_facts(text: str) -> tuple[dict[str, list[str]], list[tuple[str, ...]]]:
    """(documented name -> [documented mandatory|optional], documented tensors) of the
    ``tensorrt_llm`` model in ``docs/model_config.md``."""
    parameters: dict[str, list[str]] = {}
    tensors: list[tuple[str, ...]] = []
    section, kind = "", ""
    for line in text.splitlines():
        if line.startswith("#"):
            section, kind = line.lstrip("#").strip(), ""
            continue
        if line.strip() in ("*Mandatory parameters*", "*Optional parameters*"):
            kind = line.strip().strip("*").split()[0].lower()
            continue
        row = _ROW.match(line)
        if row is None:
            continue
        name, cells = row.group(1), [c.strip() for c in row.group(2).split("|")]
        if section == "tensorrt_llm model" and kind:
            parameters.setdefault(name, []).append(f"documented {kind}")
        direction = _direction(section)
        if direction and len(cells) >= 2:
            shape, type_ = cells[0].replace(" ", ""), cells[1].replace("`", "")
            tensors.append((direction, name, type_, shape, "documented"))
    return parameters, tensors


def _direction(section: str) -> str:
    """``input``/``output`` for a tensor table of the ``tensorrt_llm`` model, else empty."""
    if section in ("Common Inputs", "Unique Inputs for tensorrt_llm model"):
        return "input"
    if section in ("Common Outputs", "Unique Outputs for tensorrt_llm model"):
        return "output"
    return ""


def read_release(repo: Path, release: str) -> Read:
    """What branch r<release> of the clone at `repo` says about the backend."""
    if not (repo / "HEAD").exists():
        raise FactsError(f"no git repository at {repo}: clone {REPOSITORY} there (see --help)")
    ref = f"refs/heads/r{release}"
    try:
        commit = _git(repo, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()
    except FactsError as err:
        raise FactsError(
            f"Triton release {release}: {REPOSITORY} has no branch r{release} in {repo}; "
            "fetch the clone, or check the release name in releases.json"
        ) from err
    sources = [row for row in _tree(repo, ref, SOURCE_DIR) if row[2].endswith(".cc")]
    if sources:
        read = Read(release, commit, SOURCE)
        texts = []
        for _, sha, path in sources:
            read.provenance.append(f"{path} (git blob {sha})")
            texts.append(_git(repo, "show", sha))
        blob, template = _blob(repo, ref, TEMPLATE)
        read.provenance.append(f"{TEMPLATE} (git blob {blob})")
        for _, sha, _ in (r for r in _tree(repo, ref, SUBMODULE) if r[0] == "160000"):
            read.provenance.append(_version(repo, ref, sha))
        read.parameters, read.tensors = template_facts(template)
        for key in source_keys(texts):
            read.parameters.setdefault(key, []).insert(0, "reads")
        blob, docs = _blob(repo, ref, DOCS)
        read.provenance.append(f"{DOCS} (git blob {blob})")
        documented, tensors = docs_facts(docs)
        for name, kinds in documented.items():
            read.parameters.setdefault(name, []).extend(kinds)
        named = {(t[0], t[1]) for t in tensors}
        read.tensors = [
            (*t[:4], ",".join([*t[4:], "documented"])) if (t[0], t[1]) in named else t
            for t in read.tensors
        ]
        return read
    read = Read(release, commit, DOCUMENTATION)
    gitlink = [row for row in _tree(repo, ref, SUBMODULE) if row[0] == "160000"]
    if not gitlink:
        raise FactsError(
            f"Triton release {release}: r{release} has neither {SOURCE_DIR} "
            f"nor a {SUBMODULE} submodule"
        )
    url = _URL.search(_blob(repo, ref, ".gitmodules")[1])
    read.provenance.append(
        f"The backend source is triton_backend/ of submodule {SUBMODULE} at commit "
        f"{gitlink[0][1]} ({url.group(1) if url else 'no url'}), not in this repository."
    )
    read.provenance.append(_version(repo, ref, gitlink[0][1]))
    blob, docs = _blob(repo, ref, DOCS)
    read.provenance.append(f"{DOCS} (git blob {blob})")
    read.parameters, read.tensors = docs_facts(docs)
    if not read.parameters or not read.tensors:
        raise FactsError(f"Triton release {release}: {DOCS} documents no tensorrt_llm model")
    return read


def _version(repo: Path, ref: str, submodule: str) -> str:
    """The TensorRT-LLM the branch builds: the ARGs of its Dockerfile and the tags of this
    repository whose submodule points at the same commit."""
    dockerfile = _blob(repo, ref, DOCKERFILE)[1]
    args = [m.group(0) for m in _TRTLLM_ARG.finditer(dockerfile)]
    tags = []
    for tag in _git(repo, "tag", "--list", "v*").split():
        found = _git_or_none(repo, "rev-parse", f"refs/tags/{tag}^{{commit}}:{SUBMODULE}")
        if found == submodule:
            tags.append(tag)
    return (
        f"TensorRT-LLM: {DOCKERFILE} {' '.join(args) or 'names no version'}; tags with this "
        f"submodule commit: {' '.join(sorted(tags)) or 'none'}"
    )


def _git_or_none(repo: Path, *args: str) -> str | None:
    try:
        return _git(repo, *args).strip()
    except FactsError:
        return None


def texts(read: Read) -> dict[str, str]:
    """The facts files of one release (format in HEADER and LAYOUT)."""
    out = {}
    for name in FILES:
        head = HEADER.format(
            what="Every parameter key" if name == "parameters.txt" else "Every tensor",
            release=read.release,
            repository=REPOSITORY,
            commit=read.commit,
            script=SCRIPT_VERSION,
            evidence=read.evidence,
            provenance="".join(f"#   {line}\n" for line in read.provenance),
            layout=LAYOUT[(name, read.evidence)],
        )
        if name == "parameters.txt":
            rows = [f"{k}\t{','.join(sorted(set(v)))}" for k, v in read.parameters.items()]
        else:
            rows = ["\t".join(t) for t in set(read.tensors)]
        out[name] = head + "".join(f"{row}\n" for row in sorted(rows))
    return out


def main(argv: list[str]) -> int:
    def files(repo: Path) -> Iterator[tuple[Path, str]]:
        for release in triton_facts.releases():
            for name, text in texts(read_release(repo, release)).items():
                yield FACTS / release / name, text

    return triton_facts.run(
        argv, __doc__ or "", REPOSITORY, git_dir, files, FactsError, "trtllm_backend_facts.py"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
