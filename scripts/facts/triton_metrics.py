"""Writes the Prometheus metric families each supported Triton release's server exports: every
``prometheus::Build<Kind>().Name("nv_...")`` of ``src/metrics.cc`` in the
triton-inference-server/core repository at the release's branch ``r<release>`` (where
tritonserver registers its inference, cache, GPU, CPU and pinned-memory families).

    git clone --bare https://github.com/triton-inference-server/core \
        ~/.cache/inferplane/triton-core.git                          # once, outside the repo
    git --git-dir ~/.cache/inferplane/triton-core.git fetch origin '+refs/heads/*:refs/heads/*'
    python scripts/facts/triton_metrics.py [--git-dir DIR] [--check]

writes ``inferplane/facts/triton/<release>/metrics.txt`` for every Triton release of
``inferplane/blueprint/releases.json`` (the list of scripts/facts/triton_facts.py) except those of
`UNREAD`, each headed by the branch's blob of ``src/metrics.cc`` and this script's version;
``--check`` compares instead. ``--git-dir`` defaults to ``$INFERPLANE_TRITON_CORE_GIT``, else
the clone above. A release whose branch the clone lacks is an error naming it, unless
`UNREAD` says why no readable source has it.

The files name families; prometheus-cpp exposes a counter or gauge under its name, a
histogram as ``_bucket``/``_sum``/``_count`` and a summary as the name (its quantiles) plus
``_sum``/``_count`` (`components.serving.observability.known_metrics` reads the pinned
release's file, so no Triton series a query uses is typed in).

Upgrading Triton: add the release to ``releases.json``, fetch the clone, run this script
with scripts/facts/triton_facts.py, and read the diff against the previous release.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import triton_facts

SCRIPT_VERSION = "1"
"""Written into every file; raise it whenever a change here changes what the files say."""

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "inferplane" / "facts" / "triton"
FILE = "metrics.txt"
SOURCE = "src/metrics.cc"
REPOSITORY = "triton-inference-server/core"
DEFAULT_GIT_DIR = Path.home() / ".cache" / "inferplane" / "triton-core.git"
UNREAD: dict[str, str] = {
    "26.07": "the newest snapshot of triton-inference-server/core that could be read (its "
    "last commit of 2026-06-09) has branches up to r26.06, not r26.07",
}
"""Supported releases no readable source gives the metrics of, and why."""

_FAMILY = re.compile(
    r'prometheus::Build(Counter|Gauge|Histogram|Summary)\(\)\s*\.Name\(\s*"(nv_\w+)"\s*\)'
)

HEADER = """\
# Every Prometheus metric family tritonserver registers in Triton release {release}.
# Source: {repository} branch r{release}, {source}
# (git blob {blob}), read by scripts/facts/triton_metrics.py version {script} (see its docstring).
# One family a line: NAME<TAB>counter|gauge|histogram|summary.
"""


class MetricsError(RuntimeError):
    """The clone cannot give the metrics of a release."""


def git_dir(given: str | None = None) -> Path:
    return Path(given or os.environ.get("INFERPLANE_TRITON_CORE_GIT") or DEFAULT_GIT_DIR)


def families(text: str) -> dict[str, str]:
    """name -> kind of every family `text` (a ``metrics.cc``) builds."""
    found = {name: kind.lower() for kind, name in _FAMILY.findall(text)}
    if not found:
        raise MetricsError(f"{SOURCE} builds no nv_* family: has the registration moved?")
    return found


def facts_text(release: str, blob: str, found: dict[str, str]) -> str:
    head = HEADER.format(
        release=release, repository=REPOSITORY, source=SOURCE, blob=blob, script=SCRIPT_VERSION
    )
    return head + "".join(f"{name}\t{found[name]}\n" for name in sorted(found))


def derive(repo: Path, release: str) -> str:
    """The facts file of `release`, read from the clone."""
    if not (repo / "HEAD").exists():
        raise MetricsError(f"no git repository at {repo}: clone {REPOSITORY} there (see --help)")
    ref = f"refs/heads/r{release}:{SOURCE}"
    blob, text = triton_facts._git(repo, "rev-parse", ref), triton_facts._git(repo, "show", ref)
    if blob.returncode or text.returncode:
        raise MetricsError(
            f"Triton release {release}: {REPOSITORY} has no {SOURCE} on branch r{release} in "
            f"{repo}; fetch the clone, or check the release name in releases.json"
        )
    return facts_text(release, blob.stdout.strip(), families(text.stdout))


def releases() -> list[str]:
    """The supported releases whose metrics are read (all but `UNREAD`)."""
    return [r for r in triton_facts.releases() if r not in UNREAD]


def main(argv: list[str]) -> int:
    def files(repo: Path) -> Iterator[tuple[Path, str]]:
        for release in releases():
            yield FACTS / release / FILE, derive(repo, release)

    status = triton_facts.run(
        argv, __doc__, REPOSITORY, git_dir, files, MetricsError, "triton_metrics.py"
    )
    for release, why in UNREAD.items():
        print(f"not read: Triton {release}: {why}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
