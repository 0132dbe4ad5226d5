"""Writes what each supported Triton release accepts in a model's `config.pbtxt`: every
message and enum of `protobuf/model_config.proto` (package `inference`, the schema
tritonserver parses a model configuration with, `ModelConfig` at its root) of the
triton-inference-server/common repository at the release's branch `r<release>`.

    git clone --bare https://github.com/triton-inference-server/common \
        ~/.cache/inferplane/triton-common.git                        # once, outside the repo
    git --git-dir ~/.cache/inferplane/triton-common.git fetch origin '+refs/heads/*:refs/heads/*'
    python scripts/facts/triton_facts.py [--git-dir DIR] [--check]

writes `inferplane/facts/triton/<release>/model_config.txt` for every Triton release of
`inferplane/blueprint/releases.json` (`engines.triton` and the pin), each headed by the git
blob sha of the proto at that branch and this script's version; `--check` compares instead
of writing. `--git-dir` defaults to `$INFERPLANE_TRITON_COMMON_GIT`, else the clone above.
A release whose branch the clone does not have is an error naming it (fetch the clone).

Upgrading Triton: add the release to `releases.json`, run the script, read the diff of the
new facts against the previous release's (`git diff --no-index`), then move the pin.
`inferplane/blueprint/upstream/triton_facts.py` checks a rendered config.pbtxt against these facts;
`tests/blueprint/test_triton_facts.py` fails when a supported release has no facts, a file
was written by another version of this script, or (with the clone present) re-reading the
proto gives another file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import triton_proto

SCRIPT_VERSION = "1"
"""Written into every file; raise it whenever a change here or in triton_proto.py changes
what the files say, so files of the previous version read as stale."""

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "inferplane" / "facts" / "triton"
RELEASES = ROOT / "inferplane" / "blueprint" / "releases.json"
FILE = "model_config.txt"
PROTO = "protobuf/model_config.proto"
REPOSITORY = "triton-inference-server/common"
DEFAULT_GIT_DIR = Path.home() / ".cache" / "inferplane" / "triton-common.git"

HEADER = """\
# Every message and enum of Triton's model configuration in release {release}.
# Source: {repository} branch r{release}, {proto}
# (git blob {blob}), read by scripts/facts/triton_facts.py version {script} (see its docstring).
# `message NAME` then one field a line: <TAB>FIELD<TAB>TYPE[<TAB>repeated | map<KEY>]
# [<TAB>oneof GROUP]; `enum NAME` then one value a line: <TAB>VALUE. Names are relative to
# the package `{package}`; ModelConfig is the root of a config.pbtxt.
"""


class FactsError(RuntimeError):
    """The clone cannot give the proto of a release."""


def releases() -> list[str]:
    """Every Triton release inferplane supports: `engines.triton` and the pin."""
    table = json.loads(RELEASES.read_text())
    found = [row["release"] for row in table["engines"]["triton"]]
    pin = table["pins"]["triton"]["version"]
    return found if pin in found else [*found, pin]


def git_dir(given: str | None = None) -> Path:
    return Path(given or os.environ.get("INFERPLANE_TRITON_COMMON_GIT") or DEFAULT_GIT_DIR)


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def read_proto(repo: Path, release: str) -> tuple[str, str]:
    """(blob sha, text) of the proto at branch r<release> of the clone at `repo`."""
    if not (repo / "HEAD").exists():
        raise FactsError(f"no git repository at {repo}: clone {REPOSITORY} there (see --help)")
    branch = f"r{release}"
    if _git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").returncode:
        raise FactsError(
            f"Triton release {release}: {REPOSITORY} has no branch {branch} in {repo}; "
            "fetch the clone, or check the release name in releases.json"
        )
    blob = _git(repo, "rev-parse", f"refs/heads/{branch}:{PROTO}")
    text = _git(repo, "show", f"refs/heads/{branch}:{PROTO}")
    if blob.returncode or text.returncode:
        raise FactsError(f"Triton release {release}: branch {branch} has no {PROTO}")
    return blob.stdout.strip(), text.stdout


def facts_text(release: str, blob: str, proto: triton_proto.Proto) -> str:
    """The facts file of `release` (format in HEADER)."""
    out = [
        HEADER.format(
            release=release,
            repository=REPOSITORY,
            proto=PROTO,
            blob=blob,
            script=SCRIPT_VERSION,
            package=proto.package,
        )
    ]
    for name in sorted(proto.messages):
        out.append(f"message {name}\n")
        for f in sorted(proto.messages[name].fields, key=lambda f: f.name):
            extra = [x for x in (f.label, f"oneof {f.oneof}" if f.oneof else "") if x]
            out.append("\t" + "\t".join([f.name, f.type, *extra]) + "\n")
    for name in sorted(proto.enums):
        out.append(f"enum {name}\n")
        out.extend(f"\t{value}\n" for value in sorted(proto.enums[name]))
    return "".join(out)


def derive(repo: Path, release: str) -> str:
    """The facts file of `release`, read from the clone."""
    blob, text = read_proto(repo, release)
    try:
        proto = triton_proto.parse(text)
    except triton_proto.ProtoError as err:
        raise FactsError(f"Triton release {release}: {PROTO}: {err}") from err
    if "ModelConfig" not in proto.messages:
        raise FactsError(f"Triton release {release}: {PROTO} defines no ModelConfig")
    return facts_text(release, blob, proto)


def store(path: Path, text: str, check: bool) -> bool:
    """Write `text` to `path` (saying so), or with `check` only compare: False when the
    stored file is missing or differs (stale)."""
    if check:
        return path.exists() and path.read_text() == text
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)}")
    return True


def run(
    argv: list[str],
    doc: str,
    repository: str,
    git_dir_of: Callable[[str | None], Path],
    files: Callable[[Path], Iterable[tuple[Path, str]]],
    error: type[Exception],
    script: str,
) -> int:
    """The command line every facts script shares: ``[--git-dir DIR] [--check]``; writes (or
    with ``--check`` compares) each (path, text) `files` reads from the clone. 1 on `error`
    or a stale file, naming `script` to run."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--git-dir", help="a clone of " + repository)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    stale = []
    try:
        for path, text in files(git_dir_of(args.git_dir)):
            if not store(path, text, args.check):
                stale.append(str(path.relative_to(ROOT)))
    except error as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if stale:
        print(f"stale, run scripts/facts/{script}: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    def files(repo: Path) -> Iterator[tuple[Path, str]]:
        for release in releases():
            yield FACTS / release / FILE, derive(repo, release)

    return run(argv, __doc__, REPOSITORY, git_dir, files, FactsError, "triton_facts.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
