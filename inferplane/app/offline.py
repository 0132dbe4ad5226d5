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
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.stack import run_in_stack

from inferplane.app.offline_mocks import CloudMocks
from inferplane.app.offline_values import CloudFacts, UnknownValues
from inferplane.blueprint.model import Environment

SECRET = "[secret]"
"""What a recording holds in place of every secret value."""

PROJECT = "inferplane"
"""The Pulumi project name (`stacks/Pulumi.yaml`)."""

STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass(frozen=True)
class RecordedResource:
    """One resource the program registered, as the engine would have received it."""

    type: str
    """Type token, e.g. ``kubernetes:apps/v1:Deployment`` or ``inferplane:cluster:Cluster``."""
    name: str
    """Logical (Pulumi) name."""
    urn: str
    parent: str | None
    """URN of the parent resource; None for a resource directly under the stack."""
    inputs: dict[str, Any]
    """Inputs in the provider's camelCase; numbers may be floats; secrets are ``"[secret]"``."""
    provider: str | None
    """URN of the explicit provider, if one was given."""
    depends_on: tuple[str, ...]
    """URNs this resource depends on (explicit `depends_on` plus inputs' dependencies)."""
    custom: bool = True
    """False for component resources (which have no provider and create nothing themselves)."""
    read: bool = False
    """True for a lookup of something that exists (`Resource.get`), which is never changed."""
    aliases: tuple[dict[str, Any], ...] = ()
    """Alias specs as sent (``{"spec": {"parentUrn": ...}}``): where the resource used to be."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The resource options the engine acts on, only those set: ``custom_timeouts``
    (create/update/delete), ``delete_before_replace``, ``ignore_changes``,
    ``replace_on_changes``, ``protect``, ``retain_on_delete``, ``deleted_with``,
    ``additional_secret_outputs``. (Aliases are left out: the provider SDKs add type
    aliases to most resources, which tell a reader nothing about this plan.)"""

    def get(self, *path: str | int, default: Any = None) -> Any:
        """The input at `path`, e.g. ``res.get("spec", "replicas")``; `default` if absent."""
        value: Any = self.inputs
        for part in path:
            try:
                value = value[part]
            except (KeyError, IndexError, TypeError):
                return default
        return value


@dataclass(frozen=True)
class RecordedInvoke:
    """One data-source call (`aws.eks.get_cluster(...)`, ...) and its arguments."""

    token: str
    args: dict[str, Any]


@dataclass(frozen=True)
class LogMessage:
    severity: str
    """``debug``, ``info``, ``warning`` or ``error``."""
    text: str


@dataclass(frozen=True)
class Recording:
    """Everything one offline run of a program registered."""

    project: str
    stack: str
    resources: tuple[RecordedResource, ...]
    outputs: Mapping[str, Any]
    """Stack exports, resolved; secret ones are ``"[secret]"``."""
    invokes: tuple[RecordedInvoke, ...] = ()
    messages: tuple[LogMessage, ...] = ()
    wall_time_s: float = 0.0
    registered_outputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Component URN -> what it passed to `register_outputs`, resolved (secrets masked;
    a resource reference as its URN)."""
    unknowns: UnknownValues | None = field(default=None, repr=False, compare=False)
    """The values the mocks made up (IDs, ARNs, endpoints, the account), by what they stand
    for; `revealed` shows them as such."""
    _by_urn: dict[str, RecordedResource] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_urn.update({r.urn: r for r in self.resources})

    def revealed(self) -> Recording:
        """This recording as a plan shows it: every value that exists only after deploy
        (subnet IDs, role ARNs, endpoints, the account number) replaced by
        ``<unknown: what it is>``. The rules and tests read the recording itself, whose
        values keep the providers' formats."""
        if self.unknowns is None:
            return self
        reveal = self.unknowns.reveal
        return replace(
            self,
            resources=tuple(replace(r, inputs=reveal(r.inputs)) for r in self.resources),
            outputs=reveal(dict(self.outputs)),
            invokes=tuple(replace(i, args=reveal(i.args)) for i in self.invokes),
            unknowns=None,
            _by_urn={},
        )

    def __iter__(self) -> Iterator[RecordedResource]:
        return iter(self.resources)

    def __len__(self) -> int:
        return len(self.resources)

    def __getitem__(self, index: int) -> RecordedResource:
        return self.resources[index]

    def by_urn(self, urn: str) -> RecordedResource:
        return self._by_urn[urn]

    def of_type(self, type_: str) -> list[RecordedResource]:
        """All resources of one type token, in registration order."""
        return [r for r in self.resources if r.type == type_]

    def named(self, name: str, type_: str | None = None) -> RecordedResource:
        """The one resource called `name` (of type `type_`); KeyError if none or several."""
        found = [r for r in self.resources if r.name == name and type_ in (None, r.type)]
        if len(found) != 1:
            what = f"{type_} {name!r}" if type_ else repr(name)
            raise KeyError(f"{len(found)} resources named {what}")
        return found[0]

    def children(self, parent: RecordedResource | None) -> list[RecordedResource]:
        """Direct children of `parent`; of the stack when `parent` is None."""
        urn = parent.urn if parent is not None else None
        return [r for r in self.resources if r.parent == urn]

    def parent_of(self, resource: RecordedResource) -> RecordedResource | None:
        return self._by_urn.get(resource.parent) if resource.parent else None

    def counts(self) -> dict[str, int]:
        """Number of resources per type token, sorted by type."""
        return dict(sorted(Counter(r.type for r in self.resources).items()))


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
) -> Recording:
    """Run `program(env)` (default: `inferplane.app.program.deploy`) offline as stack `env.name`.

    `config` adds to (and overrides) the stack config `config_of(env)`. An exception the
    program raises is re-raised unchanged (a BlueprintError stays a BlueprintError).
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
        config={**config_of(env), **(config or {})},
    )


def run_callable(
    program: Callable[[], object],
    *,
    stack: str,
    facts: CloudFacts,
    config: Mapping[str, str],
    secret_config: frozenset[str] = frozenset(),
    project: str = PROJECT,
) -> Recording:
    """Run any Pulumi program function offline; `run_program` is the usual entry point.

    `config` is the stack config as Pulumi hands it to a program: ``"<namespace>:<key>"`` ->
    string (JSON for structured values); keys in `secret_config` read as secrets.
    """
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["recording"] = _run(program, stack, facts, config, secret_config, project)
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
) -> Recording:
    # A new thread starts with empty context variables: no settings, config or root stack
    # left over from another run.
    cloud = CloudMocks(facts)
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
