"""The Triton metric facts (inferplane/facts/triton/<release>/metrics.txt) are what
scripts/facts/triton_metrics.py reads from core ``src/metrics.cc`` for each supported release, and
every Triton series a query may use is one the pinned release's server exports."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from inferplane.blueprint import defaults, releases
from inferplane.blueprint.upstream import triton_facts
from inferplane.components.serving.observability.known_metrics import KNOWN_METRICS

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "inferplane" / "facts" / "triton"
SUPPORTED = [r.release for r in releases.engine_releases("triton")]


def script() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts" / "facts"))
    import triton_metrics as script_module

    return script_module


READ = [r for r in SUPPORTED if r not in script().UNREAD]


def test_every_supported_release_but_the_unread_has_metrics() -> None:
    s = script()
    assert defaults.VERSIONS["triton"] in READ  # the pin's are always read
    assert set(s.UNREAD) <= set(SUPPORTED)  # no reason outlives its release
    assert s.releases() == READ
    with_file = sorted(p.parent.name for p in FACTS.glob(f"*/{s.FILE}"))
    assert with_file == sorted(READ)
    with pytest.raises(ValueError) as unread:
        triton_facts.metric_families("26.07")
    assert str(unread.value) == "no metrics for Triton 26.07: run scripts/facts/triton_metrics.py"


@pytest.mark.parametrize("release", READ)
def test_the_metrics_are_of_their_release_branch_and_this_script(release: str) -> None:
    """The header names the release's branch, and the file is what this script writes for
    the families it lists (with the clone, `test_a_clone_when_present_...` reads them again)."""
    text = (FACTS / release / "metrics.txt").read_text()
    branch = re.search(r"triton-inference-server/core branch (r\S+),", text)
    blob = re.search(r"\(git blob ([0-9a-f]{40})\)", text)
    version = re.search(r"scripts/facts/triton_metrics.py version (\S+) ", text)
    assert branch and blob and version
    assert branch.group(1) == f"r{release}"
    assert version.group(1) == script().SCRIPT_VERSION
    families = triton_facts.metric_families(release)
    assert script().facts_text(release, blob.group(1), families) == text


def test_families_are_read_from_every_builder_call() -> None:
    source = """
      inf_success_family_(
          prometheus::BuildCounter()
              .Name("nv_inference_request_success")
              .Help("Number of successful inference requests, all batch sizes")
              .Register(*registry_)),
      gpu_utilization_family_(prometheus::BuildGauge()
                                  .Name("nv_gpu_utilization")
                                  .Register(*registry_)),
          prometheus::BuildHistogram()
              .Name("nv_inference_first_response_histogram_ms")
          prometheus::BuildSummary()
              .Name("nv_inference_queue_summary_us")
    """
    assert script().families(source) == {
        "nv_inference_request_success": "counter",
        "nv_gpu_utilization": "gauge",
        "nv_inference_first_response_histogram_ms": "histogram",
        "nv_inference_queue_summary_us": "summary",
    }
    with pytest.raises(script().MetricsError, match="builds no nv_"):
        script().families("registry_->Add(family);")


def test_series_take_the_suffixes_prometheus_cpp_writes() -> None:
    series = triton_facts.metric_series("26.02")
    assert "nv_inference_count" in series  # a counter: no _total
    assert {
        "nv_inference_first_response_histogram_ms_bucket",
        "nv_inference_first_response_histogram_ms_sum",
        "nv_inference_first_response_histogram_ms_count",
        "nv_inference_queue_summary_us",
        "nv_inference_queue_summary_us_sum",
        "nv_inference_queue_summary_us_count",
    } <= series
    assert "nv_inference_first_response_histogram_ms" not in series


@pytest.mark.parametrize("release", READ)
def test_every_triton_series_a_query_may_use_exists_in_every_read_release(release: str) -> None:
    used = {name for name, exporter in KNOWN_METRICS.items() if exporter == "triton"}
    assert used  # read from the pinned release's facts
    assert used <= triton_facts.metric_series(release)


def test_a_clone_when_present_gives_the_same_metrics() -> None:
    """With a clone of triton-inference-server/core (scripts/facts/triton_metrics.py says where),
    each release branch still has the src/metrics.cc the files were read from."""
    s = script()
    repo = s.git_dir()
    if not (repo / "HEAD").exists():
        return
    for release in READ:
        assert s.derive(repo, release) == (FACTS / release / "metrics.txt").read_text()


def test_a_missing_clone_or_branch_is_named(tmp_path: Path) -> None:
    s = script()
    with pytest.raises(s.MetricsError) as no_clone:
        s.derive(tmp_path / "none", "26.02")
    assert str(no_clone.value) == (
        f"no git repository at {tmp_path / 'none'}: clone triton-inference-server/core there "
        "(see --help)"
    )
    bare = tmp_path / "core.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True, timeout=60)
    with pytest.raises(s.MetricsError) as no_branch:
        s.derive(bare, "26.02")
    assert str(no_branch.value) == (
        "Triton release 26.02: triton-inference-server/core has no src/metrics.cc on branch "
        f"r26.02 in {bare}; fetch the clone, or check the release name in releases.json"
    )
