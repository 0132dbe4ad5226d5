"""What an offline run of the program records: every resource it registered (type token,
name, URN, parent, camelCase inputs, provider, dependencies, options), the invokes it made,
its log messages and the stack's outputs. `inferplane plan` renders a `Recording`,
`inferplane check` hands it to the policies; `inferplane.app.offline` makes one.

Every secret value is ``"[secret]"`` here (`SECRET`): nothing that reads a recording can
leak one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from inferplane.app.offline_values import UnknownValues

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


__all__ = [
    "PROJECT",
    "SECRET",
    "STACK_TYPE",
    "LogMessage",
    "RecordedInvoke",
    "RecordedResource",
    "Recording",
]
