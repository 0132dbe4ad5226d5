"""How e2e/tools.py builds a Go tool: pins, the module proxy, go.mod reading, the wrapper
module, the recipe key and the cache folder. The tools themselves are in e2e/tools.py."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PINS_FILE = HERE / "tools.toml"
PROXY = os.environ.get("GOPROXY", "https://proxy.golang.org").split(",")[0]


def pins() -> dict:
    return tomllib.loads(PINS_FILE.read_text())


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "inferplane" / "tools"


def go_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            # Static binaries: the tools run on the machine that built them, and no C
            # toolchain is needed.
            "CGO_ENABLED": "0",
            # The wrapper modules' go.sum is written as the build resolves them.
            "GOFLAGS": "-mod=mod -buildvcs=false",
            "GOTOOLCHAIN": pins()["go"]["toolchain"],
        }
    )
    return env


def proxy_get(path: str) -> str:
    """A file of the Go module proxy (a .mod or .info), as text."""
    with urllib.request.urlopen(f"{PROXY}/{path}", timeout=120) as resp:
        return resp.read().decode()


def upstream_gomod(module: str, version: str) -> str:
    """The go.mod of a published module version (immutable once published, so kept beside
    the tools: deciding whether a tool is cached needs no network)."""
    kept = cache_root() / "gomod" / f"{module.replace('/', '+')}@{version}.mod"
    if kept.is_file():
        return kept.read_text()
    text = proxy_get(f"{module.lower()}/@v/{version}.mod")
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(text)
    return text


_REPLACE_BLOCK = re.compile(r"^replace\s*\((.*?)^\)", re.S | re.M)
_REPLACE_LINE = re.compile(r"^replace[ \t]+([^\s(].*)$", re.M)


def gomod_replaces(text: str) -> list[tuple[str, str]]:
    """(old, new) of every replace directive in a go.mod text."""
    lines: list[str] = []
    for block in _REPLACE_BLOCK.findall(text):
        lines += [ln.split("//")[0].strip() for ln in block.splitlines()]
    lines += [m.split("//")[0].strip() for m in _REPLACE_LINE.findall(text)]
    out = []
    for ln in lines:
        if "=>" in ln:
            old, new = (s.strip() for s in ln.split("=>", 1))
            out.append((old, new))
    return out


@dataclass
class Tool:
    name: str
    version: str
    # import path -> output binary name
    binaries: dict[str, str]
    requires: list[tuple[str, str]]
    replaces: list[str] = field(default_factory=list)
    ldflags: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    # Data files copied from the module cache into the tool's folder, so a run needs nothing
    # but the cache: (module@version, path or glob in the module, destination in the folder).
    module_files: list[tuple[str, str, str]] = field(default_factory=list)
    # A custom build (instead of the wrapper module), called with (tool, workdir, bindir).
    custom: Callable[[Tool, Path, Path], None] | None = None

    def recipe(self) -> str:
        data = json.dumps(
            [
                self.binaries,
                self.requires,
                self.replaces,
                self.ldflags,
                self.tags,
                self.module_files,
                self.custom.__name__ if self.custom else None,
                RECIPE_REVISION,
            ],
            sort_keys=True,
        )
        return hashlib.sha256(data.encode()).hexdigest()[:10]

    def folder(self) -> Path:
        return cache_root() / f"{self.name}-{self.version}-{self.recipe()}"

    def bindir(self) -> Path:
        return self.folder() / "bin"

    def share(self) -> Path:
        return self.folder() / "share"

    def built(self) -> bool:
        return (self.folder() / "DONE").is_file()


# Bumped when the build code below changes in a way the recipe fields do not show.
RECIPE_REVISION = 1


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    print(f"+ (cd {cwd} && {' '.join(cmd)})", file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=cwd, env=env or go_env(), check=True, timeout=3600)


def _wrapper_module(tool: Tool, work: Path) -> None:
    reqs = "\n".join(f"\t{m} {v}" for m, v in tool.requires)
    reps = "\n".join(f"\t{r}" for r in tool.replaces)
    text = f"module inferplane.local/build/{tool.name}\n\ngo 1.26\n\nrequire (\n{reqs}\n)\n"
    if reps:
        text += f"\nreplace (\n{reps}\n)\n"
    (work / "go.mod").write_text(text)
    # A file that imports every main package keeps `go mod` from pruning them; it is not built.
    imports = "\n".join(f'\t_ "{p}"' for p in tool.binaries)
    (work / "tools.go").write_text(f"//go:build tools\n\npackage tools\n\nimport (\n{imports}\n)\n")


def _go_build(tool: Tool, work: Path, out: Path) -> None:
    for pkg, binary in tool.binaries.items():
        cmd = ["go", "build", "-trimpath", "-o", str(out / binary)]
        if tool.tags:
            cmd += ["-tags", ",".join(tool.tags)]
        cmd += ["-ldflags", " ".join(["-s", "-w", *tool.ldflags])]
        cmd.append(pkg)
        _run(cmd, work)


def _module_dir(module: str, version: str, work: Path) -> Path:
    res = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"],
        cwd=work,
        env=go_env(),
        check=True,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    return Path(json.loads(res.stdout)["Dir"])


def build(tool: Tool) -> Path:
    if tool.built():
        return tool.bindir()
    start = time.monotonic()
    folder = tool.folder()
    shutil.rmtree(folder, ignore_errors=True)
    out = folder / "bin"
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix=f"inferplane-build-{tool.name}-") as tmp:
        work = Path(tmp)
        if tool.custom:
            tool.custom(tool, work, out)
        else:
            _wrapper_module(tool, work)
            _go_build(tool, work, out)
        for modver, pattern, dest in tool.module_files:
            module, version = modver.split("@")
            moddir = _module_dir(module, version, work)
            sources = sorted(moddir.glob(pattern))
            if not sources:
                raise FileNotFoundError(f"{pattern} is not in {modver}")
            for src in sources:
                target = folder / dest
                if len(sources) > 1 or dest.endswith("/"):
                    target = folder / dest / src.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
                target.chmod(0o755 if dest.startswith("bin/") else 0o644)
    seconds = round(time.monotonic() - start, 1)
    (folder / "DONE").write_text(json.dumps({"version": tool.version, "seconds": seconds}) + "\n")
    print(f"built {tool.name} {tool.version} in {seconds} s -> {out}", file=sys.stderr)
    return out
