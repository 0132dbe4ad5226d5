"""Run the real Pulumi program in-process, with no engine, cloud or cluster.

`run_program(env)` runs `inferplane.app.program.deploy(env)` — the program `pulumi up` runs —
under `pulumi.runtime` mocks whose answers look like the real providers'
(`inferplane.app.offline_mocks`), and returns a `Recording` of every resource the program
registered: type token, name, URN, parent, inputs (camelCase, as the provider would receive
them), provider and dependencies. `inferplane plan` renders a recording; `inferplane check`
hands it to the policies.

Secrets stay secret: every input value the SDK marks secret (`pulumi.Output.secret`, secret
config, secret outputs) is replaced by ``"[secret]"`` before it is recorded, so nothing that
reads a recording can leak one.

Each run happens on its own thread, with its own event loop and a fresh copy of the SDK's
context-local state (settings, config, root stack), so runs can follow each other — one per
environment — in one process, and never disturb a caller's own event loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.stack import run_in_stack

from inferplane.app.offline_mocks import CloudMocks
from inferplane.app.offline_values import CloudFacts
from inferplane.app.recording import (
    PROJECT,
    SECRET,
    STACK_TYPE,
    LogMessage,
    RecordedInvoke,
    RecordedResource,
    Recording,
)
from inferplane.blueprint.model import Environment

# --- turning wire values into plain, secret-free data -----------------------------------
_SIG = rpc._special_sig_key
_SECRET_SIG = rpc._special_secret_sig
_RESOURCE_SIG = rpc._special_resource_sig
_OUTPUT_SIG = rpc._special_output_value_sig
_ASSET_SIGS = {rpc._special_asset_sig, rpc._special_archive_sig}


def _mask(value: Any) -> Any:
    """Replace every leaf by SECRET but keep the shape, so a masked Secret's `stringData`
    still lists its keys and stays a valid object."""
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return None if value is None else SECRET


def plain(value: Any) -> Any:
    """A value as the engine receives it (JSON from the wire struct) -> plain Python.

    Secrets are masked, resource references become URNs, unknowns and nulls are dropped
    (the SDK treats a null input as absent)."""
    if isinstance(value, dict):
        sig = value.get(_SIG)
        if sig == _SECRET_SIG:
            return _mask(plain(value.get("value")))
        if sig == _RESOURCE_SIG:
            return value.get("urn")
        if sig == _OUTPUT_SIG:
            inner = plain(value.get("value"))
            return _mask(inner) if value.get("secret") else inner
        if sig in _ASSET_SIGS:
            return {k: v for k, v in value.items() if k != _SIG}
        out = {}
        for k, v in value.items():
            pv = plain(v)
            if pv is not None:
                out[k] = pv
        return out
    if isinstance(value, list):
        return [plain(v) for v in value]
    if value == rpc.UNKNOWN:
        return None
    return value


def _provider_urn(reference: str) -> str | None:
    """``<provider urn>::<id>`` -> the URN."""
    return reference.rsplit("::", 1)[0] if reference else None


def _options(request: Any) -> dict[str, Any]:
    """The resource options a register request carried, only those set (a read request
    carries none of them)."""
    out: dict[str, Any] = {}
    timeouts = getattr(request, "customTimeouts", None)
    if timeouts is not None:
        given = {k: getattr(timeouts, k) for k in ("create", "update", "delete")}
        if any(given.values()):
            out["custom_timeouts"] = {k: v for k, v in given.items() if v}
    if getattr(request, "deleteBeforeReplaceDefined", False) or getattr(
        request, "deleteBeforeReplace", False
    ):
        out["delete_before_replace"] = bool(request.deleteBeforeReplace)
    for key, attr in (
        ("ignore_changes", "ignoreChanges"),
        ("replace_on_changes", "replaceOnChanges"),
        ("additional_secret_outputs", "additionalSecretOutputs"),
    ):
        values = list(getattr(request, attr, ()) or ())
        if values:
            out[key] = sorted(set(values))
    for key, attr in (("protect", "protect"), ("retain_on_delete", "retainOnDelete")):
        if getattr(request, attr, False):
            out[key] = True
    if getattr(request, "deletedWith", ""):
        out["deleted_with"] = request.deletedWith
    return out


class _RecordingMonitor(mocks.MockMonitor):
    """The SDK's mock monitor, also keeping what each request carried (parent, provider,
    dependencies, secretness), which `Mocks.new_resource` never sees."""

    def __init__(self, mocks_: mocks.Mocks):
        super().__init__(mocks_)
        self.recorded: list[RecordedResource] = []
        self.invokes: list[RecordedInvoke] = []
        self.registered_outputs: dict[str, dict[str, Any]] = {}
        self.stack_urn = ""

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine gives the resource: its type qualified by the parent's whole
        qualified type (``a$b$c``), not only the parent's last type as the SDK's
        `MockMonitor.make_urn` does. pulumi/pulumi pkg/resource/deploy/deployment.go
        `generateURN` passes ``parent.QualifiedType()`` (skipping the root stack type) to
        sdk/go/common/resource/urn/urn.go `New`, which prefixes it with ``$``. Policy
        results name resources by URN: `inferplane check` must name the ones `pulumi
        preview --policy-pack` names."""
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != STACK_TYPE:
                type_ = f"{parent_type}${type_}"
        return "urn:pulumi:" + "::".join([pulumi.get_stack(), pulumi.get_project(), type_, name])

    def _record(self, request: Any, props: Any, read: bool) -> None:
        urn = self.make_urn(request.parent, request.type, request.name)
        parent = request.parent or None
        self.recorded.append(
            RecordedResource(
                type=request.type,
                name=request.name,
                urn=urn,
                parent=None if parent == self.stack_urn else parent,
                inputs=plain(json_format.MessageToDict(props)),
                provider=_provider_urn(request.provider),
                depends_on=tuple(getattr(request, "dependencies", ())),
                custom=bool(getattr(request, "custom", True)) or read,
                read=read,
                aliases=tuple(
                    json_format.MessageToDict(a) for a in getattr(request, "aliases", ())
                ),
                options=_options(request),
            )
        )

    def RegisterResource(self, request: Any) -> Any:
        if request.type == STACK_TYPE:
            self.stack_urn = self.make_urn(request.parent, request.type, request.name)
        else:
            self._record(request, request.object, read=False)
        return super().RegisterResource(request)

    def ReadResource(self, request: Any) -> Any:
        self._record(request, request.properties, read=True)
        return super().ReadResource(request)

    def RegisterResourceOutputs(self, request: Any) -> Any:
        self.registered_outputs[request.urn] = plain(json_format.MessageToDict(request.outputs))
        return super().RegisterResourceOutputs(request)

    def Invoke(self, request: Any) -> Any:
        if request.tok != "pulumi:pulumi:getResource":
            args = plain(json_format.MessageToDict(request.args))
            self.invokes.append(RecordedInvoke(request.tok, args))
        return super().Invoke(request)


class _LogCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[LogMessage] = []

    def emit(self, record: logging.LogRecord) -> None:
        # The SDK narrates every RPC at debug level; only what the program says is kept.
        if record.levelno >= logging.INFO:
            self.messages.append(LogMessage(record.levelname.lower(), record.getMessage()))


def facts_of(env: Environment) -> CloudFacts:
    return CloudFacts(cloud=env.cloud, region=env.region, zones=env.zones, project=env.project)


PREFLIGHT_RECORDED = {"inferplane:preflight": "recorded"}
"""The config under which an offline run asks the capacity preflight of recorded answers
(`inferplane.components.capacity_preflight`)."""


def config_of(env: Environment) -> dict[str, str]:
    """The Pulumi config a stack of `env` carries, plus the offline switch."""
    config = {
        "inferplane:blueprint": env.file,
        "inferplane:environment": env.name,
        "inferplane:offline": "true",
    }
    if env.cloud == "aws":
        config["aws:region"] = env.region
    elif env.cloud == "gcp":
        config["gcp:region"] = env.region
        if env.project:
            config["gcp:project"] = env.project
    return config


def run_program(
    env: Environment,
    *,
    program: Callable[[Environment], object] | None = None,
    config: Mapping[str, str] | None = None,
    invokes: Sequence[Mapping[str, Any]] = (),
) -> Recording:
    """Run `program(env)` (default: `inferplane.app.program.deploy`) offline as stack `env.name`.

    `config` adds to (and overrides) the stack config `config_of(env)`. `invokes` are
    recorded provider answers (`inferplane.app.offline_mocks.recorded_answer`): with them the
    capacity preflight runs and is answered from them. An exception the program raises is
    re-raised unchanged (a BlueprintError stays a BlueprintError).
    """
    if program is None:
        from inferplane.app.program import deploy

        program = deploy
    run_env = env
    chosen = program
    return run_callable(
        lambda: chosen(run_env),
        stack=env.name,
        facts=facts_of(env),
        config={**config_of(env), **(PREFLIGHT_RECORDED if invokes else {}), **(config or {})},
        invokes=invokes,
    )


def run_callable(
    program: Callable[[], object],
    *,
    stack: str,
    facts: CloudFacts,
    config: Mapping[str, str],
    secret_config: frozenset[str] = frozenset(),
    project: str = PROJECT,
    invokes: Sequence[Mapping[str, Any]] = (),
) -> Recording:
    """Run any Pulumi program function offline; `run_program` is the usual entry point.

    `config` is the stack config as Pulumi hands it to a program: ``"<namespace>:<key>"`` ->
    string (JSON for structured values); keys in `secret_config` read as secrets.
    """
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["recording"] = _run(program, stack, facts, config, secret_config, project, invokes)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=worker, name=f"inferplane-offline-{stack}", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    recording: Recording = box["recording"]
    return recording


def _run(
    program: Callable[[], object],
    stack: str,
    facts: CloudFacts,
    config: Mapping[str, str],
    secret_config: frozenset[str],
    project: str,
    invokes: Sequence[Mapping[str, Any]] = (),
) -> Recording:
    # A new thread starts with empty context variables: no settings, config or root stack
    # left over from another run.
    cloud = CloudMocks(facts, invokes)
    monitor = _RecordingMonitor(cloud)
    logger = logging.getLogger(f"inferplane.app.offline.{stack}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    collector = _LogCollector()
    logger.addHandler(collector)
    settings.configure(
        mocks.MockSettings(
            monitor=monitor,
            monitor_features=set(monitor.GetDeploymentInfo(None).supportedFeatures),
            engine=mocks.MockEngine(logger),
            project=project,
            stack=stack,
            dry_run=False,
            organization="organization",
            callbacks=None,
            # The SDK's MockSettings leaves these to a process-wide default; a failed run
            # leaves its failed outputs there (to report at exit), and the next run would
            # await them on a closed event loop. Each run gets its own.
            outputs=set(),
            lock=threading.Lock(),
        )
    )
    pulumi.runtime.set_all_config(dict(config), sorted(secret_config))
    exports: dict[str, Any] = {}

    async def body() -> None:
        program()
        root = settings.get_root_resource()
        outputs = getattr(root, "outputs", {}) or {}
        for key, value in outputs.items():
            output = pulumi.Output.from_input(value)
            resolved = await output.future(with_unknowns=False)
            exports[key] = _mask(resolved) if await output.is_secret() else resolved

    # The SDK calls the monitor from executor threads, and the mock monitor gives each of
    # them an event loop of its own; own those loops so they are closed with this run
    # instead of being left to the garbage collector.
    worker_loops: list[asyncio.AbstractEventLoop] = []

    def give_loop() -> None:
        worker_loop = asyncio.new_event_loop()
        asyncio.set_event_loop(worker_loop)
        worker_loops.append(worker_loop)

    executor = ThreadPoolExecutor(thread_name_prefix=f"offline-{stack}", initializer=give_loop)
    loop = asyncio.new_event_loop()
    loop.set_default_executor(executor)
    asyncio.set_event_loop(loop)
    started = time.perf_counter()
    try:
        loop.run_until_complete(run_in_stack(body))
    finally:
        elapsed = time.perf_counter() - started
        executor.shutdown(wait=True)
        # A run that fails (e.g. a RunError raised inside an apply) leaves its pending
        # outputs and RPCs in the SDK's process-wide settings, where `pulumi up` would exit;
        # the next run here must not wait on tasks of this closed loop.
        with settings.SETTINGS.lock:
            settings.SETTINGS.outputs.clear()
        settings.SETTINGS.rpc_manager.clear()
        for worker_loop in worker_loops:
            worker_loop.close()
        loop.close()
        asyncio.set_event_loop(None)
        logger.removeHandler(collector)
    return Recording(
        project=project,
        stack=stack,
        resources=tuple(monitor.recorded),
        outputs=exports,
        invokes=tuple(monitor.invokes),
        registered_outputs=dict(monitor.registered_outputs),
        messages=tuple(collector.messages),
        wall_time_s=elapsed,
        unknowns=cloud.unknowns,
    )


__all__ = [
    "PROJECT",
    "SECRET",
    "STACK_TYPE",
    "LogMessage",
    "RecordedInvoke",
    "RecordedResource",
    "Recording",
    "config_of",
    "facts_of",
    "plain",
    "run_callable",
    "run_program",
]
