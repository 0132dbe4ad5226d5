"""The offline plans tests/conftest.py shares: planned once per session (per worker), and
each caller gets a copy of its own, so a test that edits what it got changes nothing for
the tests after it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from inferplane.app.offline import Recording

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
CHAT = "support-assistant-staging-chat"


def test_a_shared_plan_is_a_copy_that_a_test_may_edit(
    reference_recording: Callable[[str], Recording],
) -> None:
    first = reference_recording("staging")
    chat = first.named(CHAT, DEPLOYMENT)
    replicas = chat.get("spec", "replicas")
    chat.inputs["spec"]["replicas"] = 99
    again = reference_recording("staging")
    assert again is not first
    assert again.named(CHAT, DEPLOYMENT).get("spec", "replicas") == replicas != 99
    # Not planned again: the copy keeps the first run's own wall time.
    assert again.wall_time_s == first.wall_time_s


def test_plans_are_shared_by_the_blueprint_s_content_not_its_path(
    reference_blueprint: Path,
    reference_recording: Callable[[str], Recording],
    offline_plan: Callable[[Path, str], Recording],
    tmp_path: Path,
) -> None:
    copy = tmp_path / "support-assistant.yaml"
    shutil.copyfile(reference_blueprint, copy)
    assert offline_plan(copy, "prod") == reference_recording("prod")
