"""A Python language host for the Pulumi engine: the `pulumi-language-python` plugin.

The upstream host is the Go program ``sdk/python/cmd/pulumi-language-python`` of
github.com/pulumi/pulumi, in a module of its own
(``github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3``) that the Go module
proxy does not serve: no version, pseudo-version or commit of it resolves there. This host
takes its place in the end-to-end run. It speaks the same gRPC service
(``pulumirpc.LanguageRuntime``, sdk/proto/language.proto, whose Python stubs ship in the
``pulumi`` wheel) and does what the Go host does for a pip virtualenv, method by method
(main.go at the release the CLI is built from):

- ``Run``: starts ``<venv>/bin/python -u <pulumi-language-python-exec> --monitor … <entry>``,
  the upstream exec shim of the sdk/v3 module, with ``PULUMI_CONFIG`` and
  ``PULUMI_CONFIG_SECRET_KEYS`` as JSON (``constructArguments``, ``constructConfig``,
  ``constructConfigSecretKeys``); exit code 32 means the program already showed the user
  an actionable message (``pythonProcessExitedAfterShowingUserActionableMessage``): bail.
- ``RunPlugin`` for a policy pack (kind ``analyzer``): ``python -u -m pulumi.policy <args>
  <pack dir>`` in the pack's directory, streaming its stdout (the port line) and stderr back.
- ``GetRequiredPackages``: one ``PackageDependency`` per installed distribution that ships a
  ``pulumi-plugin.json`` with ``resource: true`` (``listPulumiPackageInfos``,
  ``packageDependencyFromPluginJSON``).
- ``Handshake``, ``GetPluginInfo``, ``About``, ``GetProgramDependencies``, ``Cancel``.

Anything else answers UNIMPLEMENTED, which the engine treats as "not supported".
The host prints the port it listens on (127.0.0.1 only) and serves until the engine stops it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
from google.protobuf import empty_pb2, json_format
from pulumi.runtime.proto import language_pb2, language_pb2_grpc, plugin_pb2


def _cli_version() -> str:
    """The version of the CLI this host is built beside (e2e/tools.toml `[pulumi]`)."""
    pins = Path(__file__).resolve().with_name("tools.toml").read_text()
    return tomllib.loads(pins)["pulumi"]["version"]


VERSION = _cli_version()
EXEC_SHIM = "pulumi-language-python-exec"
# main.go: pythonProcessExitedAfterShowingUserActionableMessage
BAIL_EXIT_CODE = 32


def _options(info: language_pb2.ProgramInfo) -> dict:
    return json_format.MessageToDict(info.options) if info.HasField("options") else {}


def venv_python(info: language_pb2.ProgramInfo, plugin: bool) -> tuple[str, dict[str, str]]:
    """The interpreter of the program's virtualenv and the environment it runs in.

    Upstream (parseOptions, toolchain/pip.go): `virtualenv` is relative to the root directory;
    plugins default to `venv`; a program without one runs the ambient python3.
    """
    opts = _options(info)
    toolchain = opts.get("toolchain", "pip")
    if toolchain != "pip":
        raise ValueError(f"toolchain {toolchain!r} is not supported by this host (pip only)")
    venv = opts.get("virtualenv") or ("venv" if plugin else "")
    env = dict(os.environ)
    if not venv:
        return "python3", env
    root = Path(info.root_directory or info.program_directory)
    path = Path(venv) if Path(venv).is_absolute() else root / venv
    env["VIRTUAL_ENV"] = str(path)
    env["PATH"] = f"{path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONHOME", None)
    return str(path / "bin" / "python"), env


def required_packages(python: str) -> list[plugin_pb2.PackageDependency]:
    """Resource plugins the program's environment needs, from each pulumi-plugin.json."""
    script = (
        "import json, importlib.metadata as m\n"
        "out = []\n"
        "for d in m.distributions():\n"
        "    for f in d.files or ():\n"
        "        if f.name == 'pulumi-plugin.json':\n"
        "            try:\n"
        "                out.append(json.loads(f.read_text()))\n"
        "            except Exception:\n"
        "                pass\n"
        "print(json.dumps(out))\n"
    )
    res = subprocess.run(
        [python, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    deps = []
    for data in json.loads(res.stdout):
        if not data.get("resource") or not data.get("name"):
            continue
        deps.append(
            plugin_pb2.PackageDependency(
                kind="resource",
                name=data["name"],
                version=data.get("version", "").lstrip("v"),
                server=data.get("server", ""),
            )
        )
    return deps


def program_command(
    request: language_pb2.RunRequest, python: str, exec_shim: str, engine: str
) -> list[str]:
    """The command that runs a program: main.go `Run` + `constructArguments`."""
    args = [python, "-u", exec_shim]

    def opt(key: str, value: str) -> None:
        if value:
            args.extend([f"--{key}", value])

    opt("monitor", request.monitor_address)
    opt("engine", engine)
    opt("project", request.project)
    opt("root_directory", request.info.root_directory)
    opt("stack", request.stack)
    opt("pwd", request.pwd)
    opt("dry_run", "true" if request.dryRun else "false")
    opt("parallel", str(request.parallel))
    opt("organization", request.organization)
    args.append(request.info.entry_point or ".")
    args.extend(request.args)
    return args


def program_env(request: language_pb2.RunRequest) -> dict[str, str]:
    """`PULUMI_CONFIG` and `PULUMI_CONFIG_SECRET_KEYS` as JSON (main.go `constructConfig`,
    `constructConfigSecretKeys`)."""
    return {
        "PULUMI_CONFIG": json.dumps(dict(request.config)),
        "PULUMI_CONFIG_SECRET_KEYS": json.dumps(list(request.configSecretKeys)),
    }


class LanguageHost(language_pb2_grpc.LanguageRuntimeServicer):
    def __init__(self, engine_address: str, exec_shim: str) -> None:
        self.engine_address = engine_address
        self.exec_shim = exec_shim
        self.children: set[subprocess.Popen] = set()
        self.lock = threading.Lock()

    # -- bookkeeping -----------------------------------------------------------------------

    def _track(self, proc: subprocess.Popen) -> subprocess.Popen:
        with self.lock:
            self.children.add(proc)
        return proc

    def _done(self, proc: subprocess.Popen) -> None:
        with self.lock:
            self.children.discard(proc)

    def stop_children(self) -> None:
        """SIGINT, then SIGKILL after 5 s, as the Go host's `cmd.Cancel` and `WaitDelay`."""
        with self.lock:
            children = [p for p in self.children if p.poll() is None]
        for proc in children:
            proc.send_signal(signal.SIGINT)
        for proc in children:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()

    # -- the service ------------------------------------------------------------------------

    def Handshake(self, request, context):
        self.engine_address = request.engine_address
        return language_pb2.LanguageHandshakeResponse()

    def GetPluginInfo(self, request, context):
        return plugin_pb2.PluginInfo(version=VERSION)

    def GetRequiredPackages(self, request, context):
        python, _ = venv_python(request.info, plugin=False)
        return language_pb2.GetRequiredPackagesResponse(packages=required_packages(python))

    def About(self, request, context):
        python, env = venv_python(request.info, plugin=False)
        res = subprocess.run(
            [python, "-c", "import sys; print(sys.executable); print(sys.version.split()[0])"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=60,
        )
        exe, version = res.stdout.split()
        return language_pb2.AboutResponse(
            executable=exe, version=version, metadata={"toolchain": "pip"}
        )

    def GetProgramDependencies(self, request, context):
        python, env = venv_python(request.info, plugin=False)
        script = (
            "import json, importlib.metadata as m\n"
            "print(json.dumps(sorted({d.metadata['Name']: d.version "
            "for d in m.distributions()}.items())))\n"
        )
        res = subprocess.run(
            [python, "-c", script], capture_output=True, text=True, env=env, check=True, timeout=120
        )
        deps = [language_pb2.DependencyInfo(name=n, version=v) for n, v in json.loads(res.stdout)]
        return language_pb2.GetProgramDependenciesResponse(dependencies=deps)

    def Run(self, request, context):
        python, env = venv_python(request.info, plugin=False)
        args = program_command(request, python, self.exec_shim, self.engine_address)
        env.update(program_env(request))
        proc = self._track(subprocess.Popen(args, cwd=request.pwd or None, env=env))
        try:
            while True:
                try:
                    code = proc.wait(timeout=1)
                    break
                except subprocess.TimeoutExpired:
                    # The engine gave up on the call (cancelled or gone): stop the program
                    # as the Go host does (`cmd.Cancel`: SIGINT, then kill after 5 s).
                    if not context.is_active():
                        proc.send_signal(signal.SIGINT)
                        code = proc.wait(timeout=5) if proc.poll() is None else proc.returncode
                        break
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait(timeout=5)
        finally:
            self._done(proc)
        sys.stdout.flush()
        sys.stderr.flush()
        if code == 0:
            return language_pb2.RunResponse()
        if code == BAIL_EXIT_CODE:
            return language_pb2.RunResponse(bail=True)
        return language_pb2.RunResponse(error=f"program exited with non-zero exit code: {code}")

    def RunPlugin(self, request, context) -> Iterator[language_pb2.RunPluginResponse]:
        analyzer = request.kind == "analyzer"
        python, env = venv_python(request.info, plugin=not analyzer)
        if analyzer:
            cmd = [python, "-u", "-m", "pulumi.policy", *request.args]
            cmd.append(request.info.program_directory)
            cwd = request.info.program_directory
        else:
            cmd = [python, request.info.program_directory, *request.args]
            cwd = request.pwd or None
        for item in request.env:
            key, _, value = item.partition("=")
            env[key] = value
        proc = self._track(
            subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        )
        out: list[language_pb2.RunPluginResponse] = []
        cond = threading.Condition()

        def pump(stream, field: str) -> None:
            for chunk in iter(lambda: stream.read1(65536), b""):
                with cond:
                    out.append(language_pb2.RunPluginResponse(**{field: chunk}))
                    cond.notify()
            with cond:
                cond.notify()

        threads = [
            threading.Thread(target=pump, args=(proc.stdout, "stdout"), daemon=True),
            threading.Thread(target=pump, args=(proc.stderr, "stderr"), daemon=True),
        ]
        for t in threads:
            t.start()
        context.add_callback(lambda: proc.poll() is None and proc.send_signal(signal.SIGINT))
        try:
            while True:
                with cond:
                    while not out and (proc.poll() is None or any(t.is_alive() for t in threads)):
                        cond.wait(0.2)
                    batch, out[:] = list(out), []
                yield from batch
                if not batch and proc.poll() is not None and not any(t.is_alive() for t in threads):
                    break
            yield language_pb2.RunPluginResponse(exitcode=proc.wait(timeout=5))
        finally:
            self._done(proc)

    def Cancel(self, request, context):
        self.stop_children()
        return empty_pb2.Empty()


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print(VERSION)
        return 0
    # main.go: `-use-executor PATH` names the exec shim; otherwise it sits beside the host.
    shim = str(Path(sys.argv[0]).resolve().with_name(EXEC_SHIM))
    rest: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg.lstrip("-") == "use-executor":
            shim = next(it)
        elif arg.lstrip("-").startswith("use-executor="):
            shim = arg.split("=", 1)[1]
        elif arg.startswith("-"):
            if arg.lstrip("-") == "tracing":
                next(it, None)
        else:
            rest.append(arg)
    host = LanguageHost(rest[0] if rest else "", shim)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=8),
        options=[("grpc.max_receive_message_length", 400 * 1024 * 1024)],
    )
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(host, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()

    def stop(*_: object) -> None:
        host.stop_children()
        server.stop(2)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    # The Go host health-checks the engine and exits when it is gone (main.go `main` and
    # `Handshake`: `rpcutil.Healthcheck`). The engine is the process that started this one:
    # when it dies (a killed CLI), this process is re-parented, and stops with its children.
    engine_pid = os.getppid()

    def watch_engine() -> None:
        while os.getppid() == engine_pid:
            if server.wait_for_termination(timeout=1):
                return
        stop()

    threading.Thread(target=watch_engine, daemon=True).start()
    server.wait_for_termination()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
