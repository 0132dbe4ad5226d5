"""The levers in effect for each model: what `scale_out.levers` asks for, made concrete.

`apply(env)` runs once, when an environment is resolved, before the capacity plan (so the
plan prices a spare GPU that ``standby`` adds):

- a model without ``scale_out`` keeps today's path: the free ``compile_cache`` where it
  applies, nothing else;
- a list: exactly those levers (validation refused the ones that cannot serve the model,
  `lever_options.unavailable`), plus ``compile_cache`` where it applies;
- ``auto``: `cheapest` over the levers the model can use, against the model's bound
  (`scale_out.Platform.bound_for`: the platform's ``scale-out-budget.max_total_s``, or the
  model's ``scale_out.budget_s`` where tighter) with the platform's estimates. Without a
  policy config, `scale_out.Platform`'s defaults are the rule's.
  When no set meets the bound, only the free levers are taken: a spare GPU is bought only
  when it buys the bound; the ``scale-out-budget`` rule then says what would.

``standby`` raises the pool's ``spare_gpus`` to `lever_options.standby_spare`, which every
consumer of the pool (placeholders, capacity, cost, the rules) then reads.

`cheapest` is also what the ``scale-out-budget`` rule asks when a model misses its bound:
it works on a model's `ScaleOutInputs` alone, so the rule computes the same choice online.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from inferplane.blueprint.derived import lever_options, scale_out
from inferplane.blueprint.model import LEVERS, Environment, Lever, Model


@dataclass(frozen=True)
class Choice:
    """A set of levers and the budget it gives."""

    levers: tuple[Lever, ...]
    budget: scale_out.Budget
    usd_month: float | None
    """What the set adds per month; None: a price is missing."""
    costs: Mapping[str, float | None] = dataclasses.field(default_factory=dict)
    """Each lever's own US dollars per month (None: its price is missing)."""

    @property
    def described(self) -> str:
        """``stream_weights (free), standby (+$12,345/month)``."""
        return ", ".join(_cost_word(lever, self.costs.get(lever, 0.0)) for lever in self.levers)


def _cost_word(lever: str, usd: float | None) -> str:
    if usd is None and lever == "lazy_image_pull":
        return (
            f"{lever} (a faster gp3 root volume on every GPU node; the price table has no gp3 "
            "row for the region)"
        )
    if usd is None:
        return f"{lever} (its node price is missing from the price table)"
    return f"{lever} (+${usd:,.0f}/month)" if usd else f"{lever} (free)"


def with_levers(
    inputs: scale_out.ScaleOutInputs, levers: Iterable[str]
) -> scale_out.ScaleOutInputs:
    """`inputs` as if `levers` were in effect: ``standby`` keeps at least a replica's GPU
    units spare per zone."""
    chosen = tuple(lever for lever in LEVERS if lever in set(levers))
    spare = inputs.spare_units
    if "standby" in chosen:
        spare = max(spare, inputs.units_per_replica)
    return dataclasses.replace(inputs, levers=chosen, spare_units=spare)


def cheapest(
    inputs: scale_out.ScaleOutInputs,
    bound: int,
    constants: scale_out.Constants | None = None,
    *,
    node_autoscaler: bool = True,
) -> Choice | None:
    """The cheapest set of the model's available levers (`ScaleOutInputs.options`) whose
    budget meets `bound` — fewest dollars, then fewest levers; a missing price counts as
    dearer than any — or None when even all of them miss it."""
    options = dict(inputs.options)
    free = tuple(lever for lever in LEVERS if options.get(lever, 1) == 0 and lever in options)
    paid = tuple(lever for lever in LEVERS if lever in options and lever not in free)

    def cost(levers: tuple[str, ...]) -> float | None:
        total = 0.0
        for lever in levers:
            usd = options[lever]
            if usd is None:
                return None
            total += usd
        return total

    candidates = []
    for n in range(len(paid) + 1):
        for extra in itertools.combinations(paid, n):
            levers = free + extra
            usd = cost(levers)
            candidates.append((float("inf") if usd is None else usd, len(extra), levers))
    for _, _, levers in sorted(candidates, key=lambda c: (c[0], c[1])):
        found = scale_out.budget(
            with_levers(inputs, levers), constants, node_autoscaler=node_autoscaler
        )
        if found.total_s <= bound:
            kept = tuple(lever for lever in LEVERS if lever in levers)
            needed = _needed(inputs, kept, bound, constants, node_autoscaler)
            return Choice(needed, found, cost(needed), {x: options[x] for x in needed})
    return None


def _needed(
    inputs: scale_out.ScaleOutInputs,
    levers: tuple[Lever, ...],
    bound: int,
    constants: scale_out.Constants | None,
    node_autoscaler: bool,
) -> tuple[Lever, ...]:
    """`levers` without the free ones that change nothing (a lazy pull on a pool that never
    adds a node), so the plan names only what acts; ``compile_cache`` always stays."""
    kept = list(levers)
    for lever in levers:
        if lever == "compile_cache":
            continue
        trial = tuple(x for x in kept if x != lever)
        with_it = scale_out.budget(
            with_levers(inputs, kept), constants, node_autoscaler=node_autoscaler
        )
        without = scale_out.budget(
            with_levers(inputs, trial), constants, node_autoscaler=node_autoscaler
        )
        if without.total_s == with_it.total_s and without.total_s <= bound:
            kept = list(trial)
    return tuple(kept)


def bound_of(model: Model, platform: scale_out.Platform | None = None) -> int:
    """The bound `auto` chooses for: the platform's, or the model's own where tighter."""
    return (platform or scale_out.Platform()).bound_for(model.scale_out.budget_s)


def chosen(
    env: Environment, model: Model, platform: scale_out.Platform | None = None
) -> tuple[Lever, ...]:
    """The levers in effect for `model` in `env` (see the module's docstring)."""
    compiles = lever_options.unavailable_for(env, model, "compile_cache") is None
    base: tuple[Lever, ...] = ("compile_cache",) if compiles else ()
    requested = model.scale_out.requested
    if requested is None:
        return base
    if requested != "auto":
        return tuple(lever for lever in LEVERS if lever in requested or lever in base)
    inputs = scale_out.inputs_of(env, model)
    platform = platform or scale_out.Platform()
    found = cheapest(
        inputs,
        bound_of(model, platform),
        platform.constants,
        node_autoscaler=not env.kubernetes,
    )
    if found is not None:
        return found.levers
    free = [lever for lever, usd in inputs.options.items() if usd == 0]
    kept = _needed(
        inputs,
        tuple(lever for lever in LEVERS if lever in free),
        10**9,
        platform.constants,
        not env.kubernetes,
    )
    return kept


def apply(env: Environment, platform: scale_out.Platform | None = None) -> Environment:
    """`env` with every model's levers in effect and the pools' spare GPUs its ``standby``
    levers need, ``auto`` chosen against `platform` (the rule's defaults when None). Models
    are taken in name order; a pool's spare raised for one model counts for the next."""
    for name in sorted(env.models):
        model = env.models[name]
        model = dataclasses.replace(
            model,
            scale_out=dataclasses.replace(
                model.scale_out, options=MappingProxyType(dict(lever_options.options(env, model)))
            ),
        )
        levers = chosen(env, model, platform)
        models: Mapping[str, Model] = {
            **env.models,
            name: dataclasses.replace(
                model, scale_out=dataclasses.replace(model.scale_out, levers=levers)
            ),
        }
        pools = dict(env.pools)
        if "standby" in levers:
            pool = env.pool_of(model)
            spare = lever_options.standby_spare(env, model)
            pools[pool.name] = dataclasses.replace(pool, spare_gpus=spare)
        env = dataclasses.replace(
            env, models=MappingProxyType(dict(models)), pools=MappingProxyType(pools)
        )
    return env


__all__ = ["Choice", "apply", "bound_of", "cheapest", "chosen", "with_levers"]
