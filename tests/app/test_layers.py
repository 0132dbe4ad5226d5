"""What each command loads: `validate`, `schema` and `catalog` stay in the blueprint layer.

The layer contracts themselves are import-linter's (pyproject.toml, run by ./dev lint);
these tests check the same promise at run time, where a lazy import would slip past a
static check.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from inferplane.app.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {
    "pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_kubernetes", "pulumi_policy", "grpc",
    "grafana_foundation_sdk"} or m.startswith(("inferplane.components", "inferplane.policies")))
print(code, ",".join(loaded), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "--quiet", str(ROOT / "blueprints" / "support-assistant.yaml")],
        ["schema"],
        ["catalog"],
    ],
    ids=lambda a: a[0],
)
def test_blueprint_commands_load_no_pulumi_components_or_policies(argv: list[str]) -> None:
    run = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.stderr.splitlines()[-1] == "0 "
