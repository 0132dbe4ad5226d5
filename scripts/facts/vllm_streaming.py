"""Reads what streaming weights from the model store needs of a vLLM release from its wheel,
and writes ``inferplane/facts/vllm/<release>/weight_streaming.json``:

    python scripts/facts/vllm_streaming.py WHEEL UNPACKED_VLLM_ROOT RELEASE [--check]

(`vllm_wheels.py` fetches and unpacks the wheels and runs this with ``--check`` for every
release: stale facts fail.) Read from the sources, as text (importing vLLM needs torch):

- ``schemes``: ``SUPPORTED_SCHEMES`` of ``vllm/transformers_utils/runai_utils.py``: the
  model paths vLLM hands to the Run:ai streamer (`is_runai_obj_uri`);
- ``extra_config_keys``: the ``--model-loader-extra-config`` keys the streamer's loader reads
  (``vllm/model_executor/model_loader/runai_streamer_loader.py``, ``RunaiModelStreamerLoader.
  __init__``): v0.33.0 lists them in ``allowed_keys`` and refuses any other; v0.10.2 reads
  ``concurrency`` and ``memory_limit`` and ignores the rest;
- ``loader_sets``: the variables the loader sets from them (``RUNAI_STREAMER_CONCURRENCY``,
  ``RUNAI_STREAMER_MEMORY_LIMIT``), and that it copies ``AWS_ENDPOINT_URL`` into
  ``RUNAI_STREAMER_S3_ENDPOINT`` when the latter is unset;
- ``pulled``: what ``ModelConfig.maybe_pull_model_tokenizer_for_runai`` copies from the store
  into a local directory before the weights are streamed (config, tokenizer, code files;
  ``vllm/config/model.py`` in v0.33.0, ``vllm/config/__init__.py`` in v0.10.2), and whether
  that directory is named by the URI (v0.33.0: ``sha256(url)[:8]`` under
  ``VLLM_ASSETS_CACHE/model_streamer``) or is a fresh temporary directory (v0.10.2:
  ``tempfile.mkdtemp()``) — vLLM hashes the model path into its ``torch.compile`` cache key
  (``ModelConfig.compute_hash``), so only a name fixed by the URI lets a streamed replica
  find a staged compile cache;
- ``runai_extra``: the wheel's ``runai`` extra (``METADATA``, ``Requires-Dist``).

What the ``vllm/vllm-openai`` image installs is not in the wheel: `IMAGE` states it with its
source, by hand.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

SCRIPT_VERSION = "1"
REPO = Path(__file__).resolve().parents[2]

IMAGE: dict[str, dict[str, Any]] = {
    "v0.10.2": {
        "backends": ["s3"],
        "source": (
            "vllm-project/vllm docker/Dockerfile at commit 0000977e (the last one read before "
            "v0.10.2; the tag's own was not read): the vllm-openai-base stage installs "
            "'runai-model-streamer runai-model-streamer[s3]', no gcs backend"
        ),
    },
    "v0.33.0": {
        "backends": ["s3", "gcs"],
        "source": (
            "vllm-project/vllm docker/Dockerfile at commit dead20ba (after v0.10.2, FlashInfer "
            "0.4.1): the vllm-openai-base stage installs 'runai-model-streamer[s3,gcs]>=0.14.0'; "
            "the v0.33.0 tag's Dockerfile is not stored where it could be read (the "
            "repository's snapshot is larger than can be fetched here), so this is the last "
            "Dockerfile read, not the tag's. The v0.33.0 wheel's own runai extra asks for "
            "azure, gcs and s3 (runai_extra)"
        ),
    },
}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _literal_assign(tree: ast.AST, name: str) -> Any:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise SystemExit(f"no assignment of {name}")


def _method(tree: ast.AST, cls: str, name: str) -> ast.FunctionDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    raise SystemExit(f"no {cls}.{name}")


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def extra_config_keys(loader: ast.AST) -> list[str]:
    """The keys `RunaiModelStreamerLoader.__init__` reads: ``allowed_keys`` where it has one,
    else every ``"<key>" in extra_config`` test."""
    init = _method(loader, "RunaiModelStreamerLoader", "__init__")
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "allowed_keys" for t in node.targets
        ):
            return sorted(ast.literal_eval(node.value))
    keys = {
        node.left.value
        for node in ast.walk(init)
        if isinstance(node, ast.Compare)
        and isinstance(node.left, ast.Constant)
        and isinstance(node.left.value, str)
        and any(isinstance(op, ast.In) for op in node.ops)
        and ast.unparse(node.comparators[0]) == "extra_config"
    }
    return sorted(keys)


def loader_sets(loader: ast.AST) -> dict[str, str]:
    init = _method(loader, "RunaiModelStreamerLoader", "__init__")
    text = ast.unparse(init)
    out = {}
    for key, variable in (
        ("concurrency", "RUNAI_STREAMER_CONCURRENCY"),
        ("memory_limit", "RUNAI_STREAMER_MEMORY_LIMIT"),
    ):
        if variable in _strings(init) and f"'{key}'" in text:
            out[key] = variable
    if "RUNAI_STREAMER_S3_ENDPOINT" in text and "AWS_ENDPOINT_URL" in text:
        out["AWS_ENDPOINT_URL"] = "RUNAI_STREAMER_S3_ENDPOINT (when unset)"
    return out


def pulled(config_module: ast.AST, runai_utils: ast.AST) -> dict[str, Any]:
    pull = _method(config_module, "ModelConfig", "maybe_pull_model_tokenizer_for_runai")
    allow: list[str] = []
    ignore: list[str] = []
    for node in ast.walk(pull):
        if isinstance(node, ast.keyword) and node.arg in ("allow_pattern", "ignore_pattern"):
            value = ast.literal_eval(node.value)
            target = allow if node.arg == "allow_pattern" else ignore
            target.extend(v for v in value if v not in target)
    init = _method(runai_utils, "ObjectStorageModel", "__init__")
    text = ast.unparse(init)
    if "mkdtemp" in text:
        directory = "tempfile.mkdtemp(): a new directory on every start"
    elif "sha256" in text and "model_streamer" in text:
        directory = "VLLM_ASSETS_CACHE/model_streamer/<sha256(url)[:8]>: named by the URI"
    else:
        raise SystemExit("ObjectStorageModel.__init__: no directory rule recognised")
    return {
        "model_files": allow,
        "tokenizer_files_exclude": ignore,
        "directory": directory,
        "directory_fixed_by_uri": "mkdtemp" not in text,
    }


def runai_extra(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(name).decode()
    return [
        m.group(1).strip()
        for m in re.finditer(r"^Requires-Dist: (.*); extra == \"runai\"$", text, re.MULTILINE)
    ]


def facts(wheel: Path, root: Path, release: str) -> dict[str, Any]:
    def tree(rel: str) -> ast.AST:
        return ast.parse((root / rel).read_text())

    utils = tree("transformers_utils/runai_utils.py")
    loader = tree("model_executor/model_loader/runai_streamer_loader.py")
    config_rel = "config/model.py" if (root / "config/model.py").exists() else "config/__init__.py"
    return {
        "$comment": (
            f"Streaming weights from the model store with vLLM {release}. Generated by "
            f"scripts/facts/vllm_streaming.py version {SCRIPT_VERSION} from {wheel.name} "
            f"(sha256 {sha256(wheel)}): vllm/transformers_utils/runai_utils.py, "
            "vllm/model_executor/model_loader/runai_streamer_loader.py, "
            f"vllm/{config_rel} and the wheel's METADATA; 'image' is stated by hand, with "
            "its source. Do not edit."
        ),
        "release": release,
        "schemes": list(_literal_assign(utils, "SUPPORTED_SCHEMES")),
        "extra_config_keys": extra_config_keys(loader),
        "loader_sets": loader_sets(loader),
        "pulled": pulled(tree(config_rel), utils),
        "runai_extra": runai_extra(wheel),
        "image": IMAGE[release],
    }


def out_path(release: str) -> Path:
    return REPO / "inferplane" / "facts" / "vllm" / release / "weight_streaming.json"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    wheel, root, release = Path(args[0]), Path(args[1]), args[2]
    text = json.dumps(facts(wheel, root, release), indent=2) + "\n"
    target = out_path(release)
    if check:
        if not target.exists() or target.read_text() != text:
            print(f"{target.relative_to(REPO)} is stale: run scripts/facts/vllm_streaming.py")
            return 1
        return 0
    target.write_text(text)
    print(f"wrote {target.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
