"""Traffic profiles: the file format, its located errors, plausibility, the bundled ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferplane.app.rehearsal import traffic
from inferplane.blueprint.errors import BlueprintError


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text("apiVersion: inferplane/v1\nkind: TrafficProfile\nname: t\n" + body)
    return path


def errors(tmp_path: Path, body: str) -> list[str]:
    with pytest.raises(BlueprintError) as info:
        traffic.load(write(tmp_path, body))
    return [d.format() for d in info.value.diagnostics]


def test_every_phase_kind_gives_its_rate_over_time(tmp_path: Path) -> None:
    p = traffic.load(
        write(
            tmp_path,
            "phases:\n"
            "  - {hold: 10, rate: 2}\n"
            "  - {ramp: 10, from: 0, to: 4}\n"
            "  - {curve: 20, low: 1, high: 3}\n"
            "  - {silence: 10}\n",
        )
    )
    assert p.seconds == 50
    assert [p.rate_at(t) for t in (0, 9.9)] == [2, 2]
    assert [p.rate_at(t) for t in (10, 15, 20)] == [0, 2, pytest.approx(1)]  # 20: curve's low
    assert p.rate_at(30) == pytest.approx(3)  # the curve's middle is its high
    assert p.rate_at(39.99) == pytest.approx(1, abs=1e-3)
    assert p.rate_at(45) == 0 and p.rate_at(60) == 0


def test_a_profile_relative_to_peak_splits_across_zones_by_weight(tmp_path: Path) -> None:
    p = traffic.load(
        write(tmp_path, "unit: peak\nphases: [{hold: 10, rate: 0.5}]\nzones: {a: 3, b: 1}\n")
    )
    plan = traffic.for_model(
        p, peak_rps=8, input_tokens=100, output_tokens=20, env_zones=["a", "b"]
    )
    assert plan.rps_by_zone(0) == {"a": 3.0, "b": 1.0}
    assert (plan.input_tokens, plan.output_tokens, plan.lengths_from) == (
        100,
        20,
        "blueprint traffic",
    )
    assert [t for t, _ in plan.offered()] == [0, 5, 10]


def test_without_zones_each_zone_of_the_environment_gets_an_equal_share(tmp_path: Path) -> None:
    p = traffic.load(write(tmp_path, "unit: rps\nphases: [{hold: 10, rate: 9}]\n"))
    plan = traffic.for_model(
        p, peak_rps=None, input_tokens=1, output_tokens=1, env_zones=["a", "b", "c"]
    )
    assert plan.rps_by_zone(1) == {"a": 3.0, "b": 3.0, "c": 3.0}


def test_profile_lengths_win_over_the_models(tmp_path: Path) -> None:
    p = traffic.load(
        write(
            tmp_path,
            "unit: rps\ninput_tokens: 7\noutput_tokens: 3\nphases: [{hold: 10, rate: 1}]\n",
        )
    )
    plan = traffic.for_model(p, peak_rps=None, input_tokens=100, output_tokens=20, env_zones=["a"])
    assert (plan.input_tokens, plan.output_tokens, plan.lengths_from) == (7, 3, "profile")


def test_each_problem_is_located_with_a_fix(tmp_path: Path) -> None:
    got = errors(
        tmp_path,
        "unit: peak\n"
        "phases:\n"
        "  - {hold: 2, rate: 1}\n"
        "  - {ramp: 30, from: 0, to: 100}\n"
        "  - {hold: 30, rate: 1, to: 2}\n"
        "  - {hold: 30, silence: 30}\n"
        "  - {hold: 30, rate: fast}\n"
        "speed: 3\n",
    )
    assert got == [
        f"{tmp_path}/profile.yaml:6:12: error: phases[0].hold: `hold` lasts 2 seconds; a "
        "phase lasts 5 to 7200 seconds; the timeline samples every 5 s: make the phase at "
        "least that long",
        f"{tmp_path}/profile.yaml:7:29: error: phases[1].to: `to` is 100; a rate is between "
        "0 and 20; write a rate from 0 to 20",
        f"{tmp_path}/profile.yaml:8:25: error: phases[2].to: a `hold` phase has no field "
        "`to`; a `hold` phase takes `rate`",
        f"{tmp_path}/profile.yaml:9:5: error: phases[3]: a phase has exactly one of hold, "
        "ramp, curve, silence (its seconds); it has hold, silence; split it into one phase "
        "per kind",
        f"{tmp_path}/profile.yaml:10:22: error: phases[4].rate: `rate` must be a number, not "
        "'fast'; write e.g. `rate: 0.5`",
        f"{tmp_path}/profile.yaml:11:1: error: speed: a traffic profile has no field `speed`; "
        "its fields are apiVersion, kind, name, description, unit, phases, zones, "
        "input_tokens, output_tokens",
    ]


def test_a_profile_is_bounded_in_duration_and_rate(tmp_path: Path) -> None:
    got = errors(tmp_path, "unit: rps\nphases: [{hold: 7200, rate: 1}, {hold: 60, rate: 5000}]\n")
    assert any("a rate is between 0 and 2000" in e for e in got)
    got = errors(tmp_path, "unit: rps\nphases: [{hold: 7200, rate: 1}, {hold: 60, rate: 1}]\n")
    assert any("the phases last 7260 s in all, more than 7200 s" in e for e in got)
    got = errors(tmp_path, "phases: [{silence: 60}]\n")
    assert any("every phase is silent" in e for e in got)


def test_not_a_profile_and_bad_yaml_are_located_not_tracebacks(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("apiVersion: inferplane/v1\nkind: Blueprint\nphases: [{hold: 10, rate: 1}\n")
    with pytest.raises(BlueprintError) as info:
        traffic.load(path)
    assert str(path) in info.value.diagnostics[0].format()
    with pytest.raises(BlueprintError) as info:
        traffic.find("spike-7x")
    assert info.value.diagnostics[0].format() == (
        "spike-7x:1:1: error: <document>: no bundled traffic profile 'spike-7x' and no such "
        "file; name one of spike-5x, diurnal, zero-then-burst, or the path of a profile file"
    )


def test_a_relative_profile_needs_the_models_peak_and_known_zones(tmp_path: Path) -> None:
    p = traffic.load(write(tmp_path, "phases: [{hold: 10, rate: 1}]\nzones: {zone-x: 1}\n"))
    with pytest.raises(BlueprintError) as info:
        traffic.for_model(
            p,
            peak_rps=None,
            input_tokens=None,
            output_tokens=None,
            env_zones=["zone-a"],
            model_path=("models", "chat"),
        )
    text = str(info.value)
    assert "models.chat.traffic: traffic profile t gives rates as multiples of" in text
    assert "neither the traffic profile nor the model's traffic gives input_tokens" in text
    assert "the profile sends to zone-x, not zones of the environment (zone-a)" in text


@pytest.mark.parametrize("name", traffic.BUNDLED)
def test_the_bundled_profiles_load_and_peak_at_most_at_the_planned_peak(name: str) -> None:
    p = traffic.find(name)
    assert p.name == name and p.unit == "peak"
    plan = traffic.for_model(p, peak_rps=10, input_tokens=1, output_tokens=1, env_zones=["a"])
    assert 0 < plan.peak_offered <= 10
    assert p.seconds <= 2400


def test_spike_5x_is_a_five_fold_jump_and_falls_back_for_the_scale_in() -> None:
    p = traffic.find("spike-5x")
    before, spike, after = p.rate_at(60), p.rate_at(200), p.rate_at(1000)
    assert spike / before == pytest.approx(5)
    assert after == before
    # The fall lasts longer than the HPA's default 300 s and the stack's 600 s scale-down.
    assert p.seconds - 420 > 600


def test_zero_then_burst_starts_silent() -> None:
    p = traffic.find("zero-then-burst")
    assert p.rate_at(0) == 0 and p.rate_at(359) == 0 and p.rate_at(360) > 0
