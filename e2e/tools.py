"""Build the real tools of the end-to-end run from their Go modules, and cache them.

    python e2e/tools.py build [--group G] [NAME...]  # build what is missing (default: e2e)
    python e2e/tools.py path NAME                    # NAME's bin folder (exit 1: not built)
    python e2e/tools.py status [--group G]           # one line per tool: cached or not, where
    python e2e/tools.py cached [--group G]           # exit 0: all built (1: says which not)

Three groups: ``e2e`` (the default: the control plane, Pulumi and its Kubernetes provider, the
KEDA operator — what `./dev e2e` needs), ``rehearsal`` (Prometheus, promtool, the
Prometheus operator, KEDA's metrics API server and the Argo Rollouts controller — what the
rehearsals add beside them) and ``karpenter`` (Karpenter with its KWOK cloud provider, for
e2e/rehearse_karpenter.py).
Every pin lives in e2e/tools.toml. A tool is cached under
``${XDG_CACHE_HOME:-~/.cache}/inferplane/tools/<name>-<version>-<recipe>/bin`` where
``<recipe>`` hashes everything that decides the build (module, version, replaces, flags), so a
change of pin or recipe builds anew and an unchanged one is never rebuilt. Go is a build tool
here: each tool is built in a throw-away wrapper module that requires the upstream module at
its pinned version (``go build <import path>``), the way `go install` would if the upstream
go.mod had no replace lines (the machinery: e2e/gobuild.py).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from gobuild import (
    Tool,
    _module_dir,
    _run,
    build,
    go_env,
    gomod_replaces,
    pins,
    upstream_gomod,
)

# --- the tools -------------------------------------------------------------------------------


def pulumi_tool() -> Tool:
    p = pins()["pulumi"]
    ver = f"v{p['version']}"
    return Tool(
        name="pulumi",
        version=ver,
        binaries={"github.com/pulumi/pulumi/pkg/v3/cmd/pulumi": "pulumi"},
        requires=[
            ("github.com/pulumi/pulumi/pkg/v3", ver),
            ("github.com/pulumi/pulumi/sdk/v3", ver),
        ],
        replaces=list(p["replaces"]),
        ldflags=[f"-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version={ver}"],
        # The Python language host starts programs through this script of the sdk/v3 module
        # (sdk/python/cmd/pulumi-language-python-exec); it must sit beside the host on PATH.
        module_files=[
            (
                f"github.com/pulumi/pulumi/sdk/v3@{ver}",
                "python/cmd/pulumi-language-python-exec",
                "bin/pulumi-language-python-exec",
            )
        ],
    )


def staging_replaces(gomod: str, version: str) -> list[str]:
    """k8s.io/kubernetes requires its staging modules at v0.0.0, replaced by folders of its
    own repository (``k8s.io/api => ./staging/src/k8s.io/api``); each is published as
    ``k8s.io/<name> v0.<minor>.<patch>`` of the same release."""
    published = "v0." + version.lstrip("v").split(".", 1)[1]
    return [
        f"{old} => {old} {published}"
        for old, new in gomod_replaces(gomod)
        if new.startswith("./staging/")
    ]


def kubernetes_tool() -> Tool:
    ver = pins()["kubernetes"]["version"]
    replaces = staging_replaces(upstream_gomod("k8s.io/kubernetes", ver), ver)
    major_minor_patch = ver.lstrip("v").split(".")
    ldflags = [
        f"-X k8s.io/component-base/version.gitVersion={ver}",
        f"-X k8s.io/component-base/version.gitMajor={major_minor_patch[0]}",
        f"-X k8s.io/component-base/version.gitMinor={major_minor_patch[1]}",
        "-X k8s.io/component-base/version.gitTreeState=clean",
    ]
    return Tool(
        name="kubernetes",
        version=ver,
        binaries={
            "k8s.io/kubernetes/cmd/kube-apiserver": "kube-apiserver",
            "k8s.io/kubernetes/cmd/kube-controller-manager": "kube-controller-manager",
            "k8s.io/kubernetes/cmd/kube-scheduler": "kube-scheduler",
        },
        requires=[("k8s.io/kubernetes", ver)],
        replaces=replaces,
        ldflags=ldflags,
        tags=["providerless"],
    )


def etcd_tool() -> Tool:
    ver = pins()["etcd"]["version"]
    gomod = upstream_gomod("go.etcd.io/etcd/server/v3", ver)
    # server/go.mod's replaces are relative (=> ../api ...): the same release of each.
    requires = [("go.etcd.io/etcd/server/v3", ver)]
    requires += [(old, ver) for old, new in gomod_replaces(gomod) if new.startswith("../")]
    return Tool(
        name="etcd",
        version=ver,
        binaries={"go.etcd.io/etcd/server/v3": "etcd"},
        requires=requires,
    )


def kwok_tool() -> Tool:
    ver = pins()["kwok"]["version"]
    return Tool(
        name="kwok",
        version=ver,
        binaries={"sigs.k8s.io/kwok/cmd/kwok": "kwok"},
        requires=[("sigs.k8s.io/kwok", ver)],
        ldflags=[f"-X sigs.k8s.io/kwok/pkg/consts.Version={ver}"],
        # `kwok` refuses to start without Stage objects; its module ships them.
        module_files=[
            (f"sigs.k8s.io/kwok@{ver}", f"kustomize/stage/{path}", "share/stages/")
            for path in (
                "node/fast/node-initialize.yaml",
                "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
                "pod/fast/pod-ready.yaml",
                "pod/fast/pod-complete.yaml",
                "pod/fast/pod-delete.yaml",
            )
        ],
    )


def keda_tool() -> Tool:
    ver = pins()["keda"]["version"]
    gomod = upstream_gomod("github.com/kedacore/keda/v2", ver)
    replaces = [f"{o} => {n}" for o, n in gomod_replaces(gomod) if not n.startswith(".")]
    return Tool(
        name="keda",
        version=ver,
        binaries={"github.com/kedacore/keda/v2/cmd/operator": "keda-operator"},
        requires=[("github.com/kedacore/keda/v2", ver)],
        replaces=replaces,
        ldflags=[f"-X github.com/kedacore/keda/v2/version.Version={ver}"],
        # The operator watches every CRD of its release.
        module_files=[
            (f"github.com/kedacore/keda/v2@{ver}", "config/crd/bases/*.yaml", "share/crds/")
        ],
    )


def _build_kubernetes_provider(tool: Tool, work: Path, out: Path) -> None:
    """The provider embeds generated files its module zip lacks: generate them, then build."""
    p = pins()["kubernetes_provider"]
    (work / "go.mod").write_text("module inferplane.local/build/dl\n\ngo 1.26\n")
    moddir = _module_dir(p["module"], p["version"], work)
    tree = work / "provider"
    shutil.copytree(moddir, tree)
    for root, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = Path(root) / name
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    gomod = (tree / "go.mod").read_text()
    # Drop relative replaces (the sibling sdk/ folder is not in the module zip): the SDK
    # module then resolves from the proxy at the version go.mod requires.
    gomod = re.sub(r"^\s*\S+\s*=>\s*\.\.?/\S*\s*$", "", gomod, flags=re.M)
    gomod = re.sub(r"^replace\s+\S+(\s+\S+)?\s*=>\s*\.\.?/\S*\s*$", "", gomod, flags=re.M)
    (tree / "go.mod").write_text(gomod)
    env = go_env()
    env["VERSION"] = p["plugin_version"]
    gen = tree / "cmd" / "pulumi-resource-kubernetes"
    _run(["go", "run", "generate.go"], gen, env)
    _run(
        [
            "go",
            "build",
            "-trimpath",
            "-o",
            str(out / "pulumi-resource-kubernetes"),
            "-ldflags",
            "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version="
            + p["plugin_version"],
            "./cmd/pulumi-resource-kubernetes",
        ],
        tree,
        env,
    )


def kubernetes_provider_tool() -> Tool:
    p = pins()["kubernetes_provider"]
    return Tool(
        name="pulumi-kubernetes",
        version=p["version"],
        binaries={},
        requires=[(p["module"], p["version"])],
        ldflags=[p["plugin_version"]],
        custom=_build_kubernetes_provider,
    )


def prometheus_tool() -> Tool:
    """Prometheus and promtool. Build tags (all read from the module at the pin):

    - ``remove_all_sd,enable_kubernetes_sd``: each service discovery registers from a file of
      ``plugins/`` built unless ``remove_all_sd`` (``//go:build !remove_all_sd ||
      enable_<name>_sd``); the operator's scrape configs for ServiceMonitors and PodMonitors
      are ``kubernetes_sd_configs``, and file and HTTP discovery stay (``plugins/minimum.go``).
      The cloud discoveries' SDKs would more than double the build.
    - no ``builtinassets``: that tag embeds ``web/ui/static``, which the release process
      builds with npm and the module zip does not hold; without it the web UI is served from
      ``./web/ui/static`` of the working directory (``web/ui/ui.go``), so the UI pages are
      absent while the HTTP API (``/api/v1``) and ``/-/reload`` work.
    """
    p = pins()["prometheus"]
    ver = p["version"]
    return Tool(
        name="prometheus",
        version=ver,
        binaries={
            "github.com/prometheus/prometheus/cmd/prometheus": "prometheus",
            "github.com/prometheus/prometheus/cmd/promtool": "promtool",
        },
        requires=[("github.com/prometheus/prometheus", ver)],
        ldflags=[f"-X github.com/prometheus/common/version.Version={p['release']}"],
        tags=list(p["tags"]),
    )


def prometheus_operator_tool() -> Tool:
    ver = pins()["prometheus_operator"]["version"]
    module = "github.com/prometheus-operator/prometheus-operator"
    gomod = upstream_gomod(module, ver)
    # Its relative replaces (pkg/apis/monitoring, pkg/client => ./pkg/...) name modules its
    # go.mod also requires at the same release, so they resolve from the proxy as they are.
    replaces = [f"{o} => {n}" for o, n in gomod_replaces(gomod) if not n.startswith(".")]
    return Tool(
        name="prometheus-operator",
        version=ver,
        binaries={f"{module}/cmd/operator": "prometheus-operator"},
        requires=[(module, ver)],
        replaces=replaces,
        ldflags=[f"-X github.com/prometheus/common/version.Version={ver.lstrip('v')}"],
        module_files=[(f"{module}@{ver}", "example/prometheus-operator-crd/*.yaml", "share/crds/")],
    )


def keda_metrics_tool() -> Tool:
    """KEDA's metrics API server (cmd/adapter), a tool of its own so that the operator's
    recipe (and cache folder) stays as it is."""
    ver = pins()["keda"]["version"]
    gomod = upstream_gomod("github.com/kedacore/keda/v2", ver)
    replaces = [f"{o} => {n}" for o, n in gomod_replaces(gomod) if not n.startswith(".")]
    return Tool(
        name="keda-metrics-apiserver",
        version=ver,
        binaries={"github.com/kedacore/keda/v2/cmd/adapter": "keda-metrics-apiserver"},
        requires=[("github.com/kedacore/keda/v2", ver)],
        replaces=replaces,
        ldflags=[f"-X github.com/kedacore/keda/v2/version.Version={ver}"],
    )


def argo_rollouts_tool() -> Tool:
    """The Argo Rollouts controller. Its go.mod (at the pin) pins every k8s.io module with
    non-relative replaces (``k8s.io/api => k8s.io/api v0.34.5`` ...) and has no relative ones;
    the wrapper repeats them all. Version stamp: the Makefile's ``LDFLAGS`` set
    ``utils/version.version`` (the module's VERSION file is stale at 1.2.0, so the release
    builds take it from the git tag)."""
    ver = pins()["argo_rollouts"]["version"]
    module = "github.com/argoproj/argo-rollouts"
    gomod = upstream_gomod(module, ver)
    replaces = [f"{o} => {n}" for o, n in gomod_replaces(gomod) if not n.startswith(".")]
    return Tool(
        name="argo-rollouts",
        version=ver,
        binaries={f"{module}/cmd/rollouts-controller": "rollouts-controller"},
        requires=[(module, ver)],
        replaces=replaces,
        ldflags=[f"-X {module}/utils/version.version={ver.lstrip('v')}"],
        module_files=[(f"{module}@{ver}", "manifests/crds/*-crd.yaml", "share/crds/")],
    )


def karpenter_tool() -> Tool:
    """Karpenter core's KWOK cloud provider (``sigs.k8s.io/karpenter/kwok``, the module's own
    ``kwok/main.go``), run out of cluster against the local API server. Its go.mod has no
    replace lines at the pin. The CRDs it needs are the module's ``pkg/apis/crds`` (NodePool,
    NodeClaim, NodeOverlay, CapacityBuffer) and ``kwok/apis/crds`` (its KWOKNodeClass)."""
    ver = pins()["karpenter"]["version"]
    module = "sigs.k8s.io/karpenter"
    return Tool(
        name="karpenter-kwok",
        version=ver,
        binaries={f"{module}/kwok": "karpenter-kwok"},
        requires=[(module, ver)],
        module_files=[
            (f"{module}@{ver}", "pkg/apis/crds/*.yaml", "share/crds/"),
            (f"{module}@{ver}", "kwok/apis/crds/*.yaml", "share/crds/"),
        ],
    )


# The e2e group: what `./dev e2e` needs (pulumi_cli.py puts every one of them on PATH).
TOOLS: dict[str, Callable[[], Tool]] = {
    "kubernetes": kubernetes_tool,
    "etcd": etcd_tool,
    "kwok": kwok_tool,
    "pulumi": pulumi_tool,
    "pulumi-kubernetes": kubernetes_provider_tool,
    "keda": keda_tool,
}

# The rehearsal group: the loops that run beside the control plane.
REHEARSAL_TOOLS: dict[str, Callable[[], Tool]] = {
    "prometheus": prometheus_tool,
    "prometheus-operator": prometheus_operator_tool,
    "keda-metrics-apiserver": keda_metrics_tool,
    "argo-rollouts": argo_rollouts_tool,
}

# The Karpenter group: Karpenter core with its KWOK cloud provider, for
# e2e/rehearse_karpenter.py; a group of its own, so that the rehearsals above neither wait for
# nor depend on its build.
KARPENTER_TOOLS: dict[str, Callable[[], Tool]] = {"karpenter-kwok": karpenter_tool}

GROUPS: dict[str, dict[str, Callable[[], Tool]]] = {
    "e2e": TOOLS,
    "rehearsal": REHEARSAL_TOOLS,
    "karpenter": KARPENTER_TOOLS,
}
ALL_TOOLS: dict[str, Callable[[], Tool]] = {**TOOLS, **REHEARSAL_TOOLS, **KARPENTER_TOOLS}


def _select(args: list[str]) -> list[str] | str:
    """The tool names an invocation names: ``--group G`` (default ``e2e``) or NAMEs; a
    string is a usage error."""
    group = "e2e"
    names: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "--group":
            group = next(it, "")
            if group not in GROUPS:
                return f"unknown group {group!r}; groups: {', '.join(GROUPS)}"
        elif arg in ALL_TOOLS:
            names.append(arg)
        else:
            return f"unknown tool {arg!r}; tools: {', '.join(ALL_TOOLS)}"
    return names or list(GROUPS[group])


def main(argv: list[str]) -> int:
    cmd = argv[0] if argv else "status"
    names = _select(argv[1:])
    if isinstance(names, str):
        print(f"error: {names}", file=sys.stderr)
        return 2
    if cmd == "build":
        for name in names:
            build(ALL_TOOLS[name]())
        return 0
    if cmd == "path":
        tool = ALL_TOOLS[names[0]]()
        if not tool.built():
            return 1
        print(tool.bindir())
        return 0
    if cmd == "cached":
        missing = [n for n in names if not ALL_TOOLS[n]().built()]
        if missing:
            print(f"not built: {', '.join(missing)}")
            return 1
        return 0
    if cmd == "status":
        for name in names:
            tool = ALL_TOOLS[name]()
            state = "cached" if tool.built() else "missing"
            print(f"{name:22} {tool.version:40} {state:8} {tool.bindir()}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
