"""`inferplane diff` renders a container's command line flag by flag, in blueprint terms."""

from __future__ import annotations

from typing import Any

from inferplane.app.diff import Key, parse_argv, render

DEPLOYMENT: Key = ("kubernetes:apps/v1:Deployment", "shop-prod-chat", "shop-prod-chat-server")


def plan(args: list[str], **extra: Any) -> dict[Key, dict[str, Any]]:
    container = {"name": "vllm", "args": args, **extra}
    return {
        DEPLOYMENT: {
            "type": DEPLOYMENT[0],
            "name": DEPLOYMENT[1],
            "parent": DEPLOYMENT[2],
            "inputs": {"spec": {"template": {"spec": {"containers": [container]}}}},
        }
    }


ARGS = "inputs.spec.template.spec.containers[0].args"
BASE = [
    "/models/chat",
    "--port",
    "8000",
    "--served-model-name",
    "chat",
    "assistant",
    "--max-model-len",
    "8192",
    "--max-num-seqs",
    "16",
    "--enforce-eager",
]


def test_parse_argv_groups_values_under_their_flag() -> None:
    positional, flags = parse_argv(
        ["serve", "--a", "1", "--b=x", "--c", "p", "q", "--d", "-1", "--e", "--b=y"]
    )
    assert positional == ["serve"]
    assert flags == {
        "--a": ("1",),
        "--b": ("x", "y"),
        "--c": ("p", "q"),
        "--d": ("-1",),
        "--e": (),
    }


def test_a_changed_value_is_one_flag_not_every_position_after_it() -> None:
    # --kv-cache-dtype before --max-num-seqs shifts every later position by two.
    new = [*BASE[:8], "--kv-cache-dtype", "fp8", "--max-num-seqs", "24", "--enforce-eager"]
    lines = render(plan(BASE), plan(new))
    assert lines == [
        "~ kubernetes:apps/v1:Deployment shop-prod-chat",
        f"    {ARGS}: --max-num-seqs 16 → 24",
        f"    {ARGS}: + --kv-cache-dtype fp8",
        "0 to add, 0 to remove, 1 to change, 0 unchanged",
    ]


def test_removed_flags_several_values_and_positionals() -> None:
    new = ["/models/chat-v2", *BASE[1:4], "chat", "--max-model-len", "8192"]
    new += ["--max-num-seqs", "16"]
    lines = render(plan(BASE), plan(new), arrow="->")
    assert lines[1:-1] == [
        f'    {ARGS}[0]: "/models/chat" -> "/models/chat-v2"',
        f"    {ARGS}: --served-model-name chat assistant -> chat",
        f"    {ARGS}: - --enforce-eager",
    ]


def test_a_credential_flag_is_never_shown() -> None:
    lines = render(plan([*BASE, "--api-key", "old"]), plan([*BASE, "--api-key", "new"]))
    assert lines[1] == f"    {ARGS}: --api-key [secret] (changed)"
    assert "old" not in "\n".join(lines) and "new" not in "\n".join(lines)


def test_a_list_without_flags_is_compared_by_position() -> None:
    old = plan([], command=["sleep", "5"])
    new = plan([], command=["sleep", "10"])
    assert render(old, new)[1] == (
        '    inputs.spec.template.spec.containers[0].command[1]: "5" → "10"'
    )


def test_a_changed_script_stays_on_one_line() -> None:
    old = plan([], command=["sh", "-eu", "-c", "echo one\naws s3 sync a b"])
    new = plan([], command=["sh", "-eu", "-c", "echo one\naws s3 sync a c"])
    assert render(old, new)[1:-1] == [
        "    inputs.spec.template.spec.containers[0].command: -c "
        '"echo one\\naws s3 sync a b" → "echo one\\naws s3 sync a c"'
    ]


def test_a_reordered_command_line_is_still_a_change() -> None:
    """Same flags and values in another order: the pod template changes and the Deployment
    rolls, so the diff must not call it unchanged."""
    new = [BASE[0], *BASE[8:11], *BASE[1:8]]
    lines = render(plan(BASE), plan(new))
    assert lines[0] == "~ kubernetes:apps/v1:Deployment shop-prod-chat"
    assert lines[1].startswith(f"    {ARGS}: ")
    assert "--max-num-seqs" in lines[1]
    assert lines[-1] == "0 to add, 0 to remove, 1 to change, 0 unchanged"
