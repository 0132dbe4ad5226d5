"""Copy the pinned Argo Rollouts release's CRDs into the repository, verbatim.

    python scripts/facts/argo_rollouts_crds.py           # (re)write components/crds/argo-rollouts/
    python scripts/facts/argo_rollouts_crds.py --check   # exit 1 when a copy differs

The release is the controller's pin (e2e/tools.toml ``[argo_rollouts] version``), so the CRDs
the add-on applies are the ones the controller built from the same module was tested with.
The files are the module's ``manifests/crds/*-crd.yaml`` (Rollout, Experiment, AnalysisRun,
AnalysisTemplate, ClusterAnalysisTemplate; ``manifests/crds/kustomization.yaml`` lists
exactly these five), fetched with ``go mod download`` from the Go module proxy, whose zip
of a published version is immutable. `CRD_SHA256` of components/argo_rollouts.py must list
the SHA-256 this prints; the tests check both.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULE = "github.com/argoproj/argo-rollouts"
DEST = ROOT / "components" / "crds" / "argo-rollouts"


def pinned_version() -> str:
    return str(tomllib.loads((ROOT / "e2e" / "tools.toml").read_text())["argo_rollouts"]["version"])


def module_dir(version: str) -> Path:
    """The module's folder in Go's module cache (downloaded once)."""
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "go.mod").write_text("module inferplane.local/crds\n\ngo 1.26\n")
        res = subprocess.run(
            ["go", "mod", "download", "-json", f"{MODULE}@{version}"],
            cwd=tmp,
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
    return Path(json.loads(res.stdout)["Dir"])


def upstream_files(version: str) -> dict[str, bytes]:
    crds = module_dir(version) / "manifests" / "crds"
    return {p.name: p.read_bytes() for p in sorted(crds.glob("*-crd.yaml"))}


def main(argv: list[str]) -> int:
    version = pinned_version()
    files = upstream_files(version)
    if "--check" in argv:
        bad = [n for n, data in files.items() if (DEST / n).read_bytes() != data]
        bad += [p.name for p in DEST.glob("*.yaml") if p.name not in files]
        for name in bad:
            print(f"differs from {MODULE}@{version}: {name}", file=sys.stderr)
        return 1 if bad else 0
    DEST.mkdir(parents=True, exist_ok=True)
    for old in DEST.glob("*.yaml"):
        if old.name not in files:
            old.unlink()
    for name, data in files.items():
        (DEST / name).write_bytes(data)
        print(f'    "{name}": "{hashlib.sha256(data).hexdigest()}",')
    print(f"copied {len(files)} CRDs of {MODULE}@{version} to {DEST}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
