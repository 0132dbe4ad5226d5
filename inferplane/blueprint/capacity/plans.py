"""What the capacity planner returns (`planner.plan_env`): one `Plan` per model, its cost
and busy windows, and the environment's `EnvPlan` with the problems found on the way."""

from __future__ import annotations

from dataclasses import dataclass, field

from inferplane.blueprint.capacity.cost import Cost
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.model import Signal


@dataclass(frozen=True)
class Problem:
    severity: str
    """``error`` or ``warning``."""
    path: YamlPath
    message: str
    hint: str


@dataclass(frozen=True)
class Window:
    schedule: str
    duration_s: int
    floor: int
    carries_rps: float


@dataclass(frozen=True)
class Plan:
    model: str
    source: str
    """Where the per-replica figure comes from (``roofline``, ``profile``)."""
    band: float
    rps: tuple[float, float, float]
    """Requests per second of one replica: pessimistic, central, optimistic."""
    batch: int
    batch_setting: str
    batch_max: int | None
    """The value of `batch_setting` (None: unset, the engine's default)."""
    limited_by: str
    latency: str
    """What a request sees at the planned batch (``TTFT 180 ms, ITL 41 ms``)."""
    peak_rps: float
    zones: int
    per_zone: int
    replicas: int
    replicas_optimistic: int
    replicas_pessimistic: int | None
    """None: at the pessimistic end not even one request at a time meets the SLO."""
    nodes_per_zone: int
    windows: tuple[Window, ...]
    targets: tuple[Signal, ...]
    target_basis: tuple[str, ...]
    """How each of `targets` follows from the plan, in the same order."""
    window_fits_us: int | None = None
    cost: Cost | None = None
    cost_note: str = ""
    band_fast: float | None = None
    """The band's optimistic end where it differs from `band` (a measured kernel floor)."""
    calibration: str = ""
    """What bounds a roofline estimate: the GPU's measured kernel floor, or that none does."""
    model_basis: str = ""
    """How an LLM is counted: dense, or a mixture of experts with the weights it holds, the
    parameters a token computes with and how its experts are split over the GPUs."""

    @property
    def band_text(self) -> str:
        """``±30%``, or ``-30%/+43%`` where the optimistic end differs."""
        if self.band_fast is None or self.band_fast == self.band:
            return f"±{self.band:.0%}"
        return f"-{self.band:.0%}/+{self.band_fast:.0%}"


@dataclass
class EnvPlan:
    plans: dict[str, Plan] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    """Models with traffic but no estimate, and why."""
    problems: list[Problem] = field(default_factory=list)
