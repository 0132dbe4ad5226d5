"""Traffic profiles: what a rehearsal sends to a model, second by second.

A profile is a small YAML file, read by the blueprint's strict loader (so every problem is
a located ``FILE:LINE:COL`` diagnostic, never a traceback)::

    apiVersion: inferplane/v1
    kind: TrafficProfile
    name: spike-5x
    unit: peak            # rates are multiples of the model's traffic.peak_rps; `rps`: absolute
    phases:               # played in order
      - {hold: 60, rate: 0.2}            # a step: 0.2 x peak for 60 s
      - {ramp: 30, from: 0.2, to: 1.0}   # a linear ramp over 30 s
      - {curve: 600, low: 0.1, high: 1}  # a day's curve: low -> high (middle) -> low, cosine
      - {silence: 120}                   # nothing at all
    zones: {zone-a: 1, zone-b: 1}        # optional weights per zone (default: equal shares)
    input_tokens: 512                    # optional; default: the model's traffic.input_tokens
    output_tokens: 128                   # optional; default: the model's traffic.output_tokens

A spike is a step up and a step down; a burst after silence is a ``silence`` then a
``hold``. Plausibility is checked before anything runs: a phase lasts 5 s (the timeline's
resolution) to `MAX_DURATION_S`, the whole profile at most `MAX_DURATION_S`, a rate is
finite, not negative, and at most `MAX_PEAK_MULTIPLE` x peak or `MAX_RPS` requests per
second. The bundled profiles (`BUNDLED`) are relative to the model's peak.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from inferplane.blueprint.errors import BlueprintError, Diagnostic, Location, YamlPath, counted
from inferplane.blueprint.loading import loader
from inferplane.blueprint.source import SourceMap

PROFILES_DIR: Final = Path(__file__).resolve().parent / "profiles"
BUNDLED: Final = ("spike-5x", "diurnal", "zero-then-burst")
MIN_PHASE_S: Final = 5
MAX_DURATION_S: Final = 2 * 3600
"""Two hours: longer than any rehearsal's loops need (the slowest, scale-down, waits 600 s)."""
MAX_PEAK_MULTIPLE: Final = 20.0
MAX_RPS: Final = 2000.0
"""The sender runs on the rehearsal's own machine: more would measure the sender, not the
loops."""
MAX_TOKENS: Final = 1_000_000
KINDS: Final = ("hold", "ramp", "curve", "silence")
_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "hold": ("rate",),
    "ramp": ("from", "to"),
    "curve": ("low", "high"),
    "silence": (),
}
_TOP: Final = (
    "apiVersion",
    "kind",
    "name",
    "description",
    "unit",
    "phases",
    "zones",
    "input_tokens",
    "output_tokens",
)


@dataclass(frozen=True)
class Phase:
    kind: str
    """``hold``, ``ramp``, ``curve`` or ``silence``."""
    seconds: int
    start: float
    """The rate at the phase's start (``hold``: the rate; ``curve``: its low)."""
    end: float
    """The rate at its end (``ramp``: ``to``; ``curve``: its high, reached in the middle)."""

    def rate_at(self, t: float) -> float:
        """The rate `t` seconds into the phase, in the profile's unit."""
        if self.kind == "silence":
            return 0.0
        if self.kind == "hold":
            return self.start
        share = min(1.0, max(0.0, t / self.seconds))
        if self.kind == "ramp":
            return self.start + (self.end - self.start) * share
        # curve: one period of a cosine, low at both ends and high in the middle
        return self.start + (self.end - self.start) * (1 - math.cos(2 * math.pi * share)) / 2


@dataclass(frozen=True)
class Profile:
    name: str
    file: str
    unit: str
    """``peak`` (multiples of traffic.peak_rps) or ``rps``."""
    phases: tuple[Phase, ...]
    zones: Mapping[str, float]
    """Weights per zone as written; empty: equal shares of the environment's zones."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    description: str = ""

    @property
    def seconds(self) -> int:
        return sum(p.seconds for p in self.phases)

    def rate_at(self, t: float) -> float:
        """The rate at `t` seconds from the start, in the profile's unit; 0 after the end."""
        for phase in self.phases:
            if t < phase.seconds:
                return phase.rate_at(t)
            t -= phase.seconds
        return 0.0


@dataclass(frozen=True)
class Plan:
    """A profile made concrete for one model: requests per second per zone, and lengths."""

    profile: Profile
    peak_rps: float | None
    zones: Mapping[str, float]
    """Share of the load per zone (sums to 1)."""
    input_tokens: int
    output_tokens: int
    lengths_from: str
    """Where the lengths come from: ``profile`` or ``blueprint traffic``."""

    def rps_at(self, t: float) -> float:
        rate = self.profile.rate_at(t)
        return rate * self.peak_rps if self.profile.unit == "peak" and self.peak_rps else rate

    def rps_by_zone(self, t: float) -> dict[str, float]:
        total = self.rps_at(t)
        return {zone: total * share for zone, share in self.zones.items()}

    def offered(self, step_s: int = 5) -> list[tuple[int, dict[str, float]]]:
        """(second, rps per zone) every `step_s` seconds over the profile, its end included."""
        return [(t, self.rps_by_zone(t)) for t in range(0, self.profile.seconds + 1, step_s)]

    @property
    def peak_offered(self) -> float:
        return max(self.rps_at(t) for t in range(self.profile.seconds + 1))


class _Problems:
    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.found: list[Diagnostic] = []

    def add(self, path: YamlPath, message: str, hint: str, key: bool = False) -> None:
        loc = self.source.key(path) if key else self.source.value(path)
        self.found.append(Diagnostic(loc, path, message, hint))


def _number(
    p: _Problems, data: Mapping[str, Any], path: YamlPath, name: str, limit: float
) -> float:
    value = data.get(name)
    where = (*path, name)
    if value is None:
        p.add(path, f"`{name}` is missing", f"add `{name}: <number>`")
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        p.add(where, f"`{name}` must be a number, not {value!r}", f"write e.g. `{name}: 0.5`")
        return 0.0
    if not 0 <= value <= limit:
        p.add(
            where,
            f"`{name}` is {value:g}; a rate is between 0 and {limit:g}",
            f"write a rate from 0 to {limit:g}",
        )
        return 0.0
    return float(value)


def _phase(p: _Problems, item: Any, path: YamlPath, limit: float) -> Phase | None:
    if not isinstance(item, dict):
        p.add(path, "a phase is a mapping", "write e.g. `- {hold: 60, rate: 1}`")
        return None
    kinds = [k for k in KINDS if k in item]
    if len(kinds) != 1:
        got = f"it has {', '.join(kinds)}" if kinds else "it has none"
        p.add(
            path,
            f"a phase has exactly one of {', '.join(KINDS)} (its seconds); {got}",
            "split it into one phase per kind",
        )
        return None
    kind = kinds[0]
    allowed = {kind, *_FIELDS[kind]}
    for key in item:
        if key not in allowed:
            fields = ", ".join(f"`{f}`" for f in _FIELDS[kind]) or "nothing else"
            p.add(
                (*path, key),
                f"a `{kind}` phase has no field `{key}`",
                f"a `{kind}` phase takes {fields}",
                key=True,
            )
    seconds = item[kind]
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        p.add(
            (*path, kind),
            f"`{kind}` is a whole number of seconds, not {seconds!r}",
            f"write e.g. `{kind}: 60`",
        )
        return None
    if not MIN_PHASE_S <= seconds <= MAX_DURATION_S:
        p.add(
            (*path, kind),
            f"`{kind}` lasts {counted(seconds, 'second')}; a phase lasts {MIN_PHASE_S} to "
            f"{MAX_DURATION_S} seconds",
            f"the timeline samples every {MIN_PHASE_S} s: make the phase at least that long",
        )
        return None
    values = [_number(p, item, path, f, limit) for f in _FIELDS[kind]]
    if kind == "silence":
        return Phase(kind, seconds, 0.0, 0.0)
    if kind == "hold":
        return Phase(kind, seconds, values[0], values[0])
    return Phase(kind, seconds, values[0], values[1])


def _positive_int(p: _Problems, data: Mapping[str, Any], name: str) -> int | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TOKENS:
        p.add(
            (name,),
            f"`{name}` must be a whole number of tokens from 1 to {MAX_TOKENS}, not {value!r}",
            f"write e.g. `{name}: 512`, or leave it out to take the model's traffic.{name}",
        )
        return None
    return value


def parse(data: Mapping[str, Any], source: SourceMap) -> Profile:
    """A profile from loaded YAML; raises `BlueprintError` with every problem found."""
    p = _Problems(source)
    for key in data:
        if key not in _TOP:
            p.add(
                (key,),
                f"a traffic profile has no field `{key}`",
                f"its fields are {', '.join(_TOP)}",
                key=True,
            )
    if data.get("apiVersion") != "inferplane/v1" or data.get("kind") != "TrafficProfile":
        p.add(
            (),
            "not a traffic profile",
            "start it with `apiVersion: inferplane/v1` and `kind: TrafficProfile`",
        )
    name = data.get("name")
    if not isinstance(name, str) or not name:
        p.add(("name",), "`name` is missing or not text", "add e.g. `name: spike-5x`")
        name = ""
    unit = data.get("unit", "peak")
    if unit not in ("peak", "rps"):
        p.add(
            ("unit",),
            f"`unit` is {unit!r}",
            "write `unit: peak` (rates multiply the model's traffic.peak_rps) or `unit: rps`",
        )
        unit = "peak"
    limit = MAX_PEAK_MULTIPLE if unit == "peak" else MAX_RPS
    raw = data.get("phases")
    phases: list[Phase] = []
    if not isinstance(raw, list) or not raw:
        p.add(
            ("phases",),
            "`phases` is missing or empty",
            "add a list of phases, e.g. `phases: [{hold: 60, rate: 1}]`",
        )
    else:
        for i, item in enumerate(raw):
            got = _phase(p, item, ("phases", i), limit)
            if got is not None:
                phases.append(got)
        total = sum(ph.seconds for ph in phases)
        if total > MAX_DURATION_S:
            p.add(
                ("phases",),
                f"the phases last {total} s in all, more than {MAX_DURATION_S} s",
                "shorten them: a rehearsal's slowest loop (scale-down) waits 600 s",
            )
        if phases and len(phases) == len(raw) and all(ph.kind == "silence" for ph in phases):
            p.add(
                ("phases",),
                "every phase is silent: nothing would be sent",
                "add a `hold`, `ramp` or `curve` phase",
            )
    zones: dict[str, float] = {}
    raw_zones = data.get("zones")
    if raw_zones is not None:
        if not isinstance(raw_zones, dict) or not raw_zones:
            p.add(
                ("zones",),
                "`zones` is a mapping of zone to weight",
                "write e.g. `zones: {zone-a: 1, zone-b: 1}` or leave it out",
            )
        else:
            for zone, weight in raw_zones.items():
                if (
                    isinstance(weight, bool)
                    or not isinstance(weight, (int, float))
                    or not (0 <= weight <= 1000)
                ):
                    p.add(
                        ("zones", zone),
                        f"zone {zone}'s weight must be a number 0 to 1000",
                        "write e.g. `zone-a: 1`",
                    )
                else:
                    zones[zone] = float(weight)
            if zones and sum(zones.values()) <= 0:
                p.add(
                    ("zones",),
                    "every zone's weight is 0: nothing would be sent",
                    "give at least one zone a positive weight",
                )
    inp = _positive_int(p, data, "input_tokens")
    out = _positive_int(p, data, "output_tokens")
    desc = data.get("description", "")
    if p.found:
        raise BlueprintError(p.found)
    return Profile(name, source.file, unit, tuple(phases), zones, inp, out, str(desc or ""))


def load(path: str | Path) -> Profile:
    """Read a profile file; raises `BlueprintError` (located) for every problem."""
    doc = loader.load(path)
    return parse(doc.data, doc.source)


def find(name_or_path: str) -> Profile:
    """A bundled profile by name (``spike-5x``), or a file by path."""
    if name_or_path in BUNDLED:
        return load(PROFILES_DIR / f"{name_or_path}.yaml")
    path = Path(name_or_path)
    if not path.exists() and "/" not in name_or_path and not name_or_path.endswith(".yaml"):
        raise BlueprintError(
            [
                Diagnostic(
                    Location(name_or_path, 1, 1),
                    (),
                    f"no bundled traffic profile {name_or_path!r} and no such file",
                    f"name one of {', '.join(BUNDLED)}, or the path of a profile file",
                )
            ]
        )
    return load(path)


def for_model(
    profile: Profile,
    *,
    peak_rps: float | None,
    input_tokens: int | None,
    output_tokens: int | None,
    env_zones: Sequence[str],
    model_path: YamlPath = (),
    model_location: Location | None = None,
) -> Plan:
    """`profile` made concrete for a model with traffic (`peak_rps`, lengths) in an
    environment with `env_zones`; raises `BlueprintError` when it cannot be."""
    problems: list[Diagnostic] = []
    at = model_location or Location(profile.file, 1, 1)

    def refuse(message: str, hint: str, where: Location = at, path: YamlPath = model_path) -> None:
        problems.append(Diagnostic(where, path, message, hint))

    if profile.unit == "peak" and not peak_rps:
        refuse(
            f"traffic profile {profile.name} gives rates as multiples of traffic.peak_rps, "
            "and the model has none",
            "add `traffic: {peak_rps: ..., input_tokens: ..., output_tokens: ...}` to the "
            "model, or use a profile with `unit: rps`",
            path=(*model_path, "traffic"),
        )
    inp = profile.input_tokens or input_tokens
    out = profile.output_tokens or output_tokens
    if inp is None or out is None:
        refuse(
            "neither the traffic profile nor the model's traffic gives input_tokens and "
            "output_tokens",
            "add them to the model's traffic or to the profile",
            path=(*model_path, "traffic"),
        )
    weights = dict(profile.zones) or {z: 1.0 for z in env_zones}
    unknown = sorted(set(weights) - set(env_zones))
    if unknown:
        refuse(
            f"the profile sends to {', '.join(unknown)}, not zones of the environment "
            f"({', '.join(env_zones)})",
            "name the environment's zones under the profile's `zones`",
            where=Location(profile.file, 1, 1),
            path=("zones",),
        )
    if problems or inp is None or out is None:
        raise BlueprintError(problems)
    total = sum(weights.values())
    shares = {z: w / total for z, w in weights.items()}
    lengths = "profile" if profile.input_tokens and profile.output_tokens else "blueprint traffic"
    return Plan(profile, peak_rps, shares, inp, out, lengths)
