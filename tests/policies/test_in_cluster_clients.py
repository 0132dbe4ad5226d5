"""in-cluster-clients: the namespaces a blueprint admits must be granted by the platform,
per blueprint, with the exact message at the namespace listed (fixtures cover the golden
blueprint; this covers a kubernetes environment's overrides)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from inferplane.app.check import check_files

ROOT = Path(__file__).resolve().parents[2]
OLD = "      load_balancer: {allowed_cidrs: [10.0.0.0/8]}"
NEW = "      load_balancer: {allowed_cidrs: [10.0.0.0/8], client_namespaces: [chat-web, billing]}"


def _violations(tmp_path: Path, config_text: str) -> list[tuple[str, str, str]]:
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text()
    assert OLD in text
    blueprint = tmp_path / "chat-minimal.yaml"
    blueprint.write_text(text.replace(OLD, NEW))
    config = tmp_path / "platform.yaml"
    config.write_text(config_text)
    report = check_files([str(blueprint)], ["local"], str(config), today=dt.date(2026, 12, 1))
    assert not report.invalid, report.invalid
    return [
        (r.environment, str(r.location).replace(str(tmp_path) + "/", ""), r.message)
        for r in report.results
        if r.rule == "in-cluster-clients" and r.status == "violation"
    ]


def test_a_blueprint_may_narrow_the_granted_namespaces_never_widen_them(tmp_path: Path) -> None:
    config = (
        "in-cluster-clients:\n"
        "  allowed_client_namespaces:\n"
        '    "*": [shared-gateway]\n'
        "    chat-minimal/local: [chat-web, search-web]\n"
        "    search: [billing]\n"
    )
    assert _violations(tmp_path, config) == [
        (
            "local",
            "chat-minimal.yaml:42:82",
            "namespace 'billing' is not one the platform lets call blueprint 'chat-minimal' "
            "in environment 'local' (granted: shared-gateway, chat-web, search-web); remove "
            "it, or ask the platform team to add it to "
            "in-cluster-clients.allowed_client_namespaces in its policy config",
        )
    ]


def test_by_default_no_namespace_is_granted(tmp_path: Path) -> None:
    found = _violations(tmp_path, "in-cluster-clients: mandatory\n")
    assert [(env, where) for env, where, _ in found] == [
        ("local", "chat-minimal.yaml:42:72"),
        ("local", "chat-minimal.yaml:42:82"),
    ]
    assert found[0][2].startswith("namespace 'chat-web' is not one the platform lets call")
    assert "(granted: none)" in found[0][2]
