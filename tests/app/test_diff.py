"""`inferplane diff` renders a container's command line flag by flag, in blueprint terms."""

from __future__ import annotations

from typing import Any

from inferplane.app.diff import Key, parse_argv, render
from inferplane.components.serving.scaling import rollout

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
NOW = "rolls every pod now: the Deployment's own rolling update, no canary"
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
        f"    {NOW}",
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
        f"    {NOW}",
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
        '"echo one\\naws s3 sync a b" → "echo one\\naws s3 sync a c"',
        f"    {NOW}",
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


def _zoned(image: str) -> dict[Key, dict[str, Any]]:
    """Two zones' Deployments of chat, each taken by a Rollout; the second zone's canary
    waits on a gate for the first (`rollout.gate_query`)."""
    out: dict[Key, dict[str, Any]] = {}
    for zone, gate in (("a", None), ("b", "chat-b-after-zone")):
        meta = {"name": f"chat-{zone}", "namespace": "shop"}
        out[(DEPLOYMENT[0], f"shop-prod-chat-{zone}", "p")] = {
            "inputs": {
                "metadata": meta,
                "spec": {"template": {"spec": {"containers": [{"image": image}]}}},
            }
        }
        steps: list[dict[str, Any]] = [{"setWeight": 10}, {"pause": {}}, {"setWeight": 100}]
        if gate:
            steps.insert(0, {"analysis": {"templates": [{"templateName": gate}]}})
            query = rollout.gate_query("shop", "chat-a", "0123456789")
            out[("kubernetes:argoproj.io/v1alpha1:AnalysisTemplate", f"gate-{zone}", "p")] = {
                "inputs": {
                    "metadata": {
                        "name": gate,
                        "namespace": "shop",
                        "annotations": {"inferplane.dev/after": "chat-a"},
                    },
                    "spec": {"metrics": [{"provider": {"prometheus": {"query": query}}}]},
                }
            }
        out[("kubernetes:argoproj.io/v1alpha1:Rollout", f"shop-prod-chat-{zone}-rollout", "p")] = {
            "inputs": {
                "metadata": meta,
                "spec": {
                    "workloadRef": {"kind": "Deployment", "name": f"chat-{zone}"},
                    "strategy": {"canary": {"steps": steps}},
                },
            }
        }
    return out


def test_a_template_change_says_which_rollout_takes_it_and_after_which_zone() -> None:
    lines = render(_zoned("vllm:1"), _zoned("vllm:2"))
    i = lines.index("~ kubernetes:apps/v1:Deployment shop-prod-chat-a")
    assert lines[i + 2] == "    rolls out: Rollout chat-a, canary 10% → 100%"
    i = lines.index("~ kubernetes:apps/v1:Deployment shop-prod-chat-b")
    assert lines[i + 2] == "    rolls out: Rollout chat-b, canary 10% → 100%, after chat-a"
    ascii_lines = render(_zoned("vllm:1"), _zoned("vllm:2"), arrow="->")
    assert "    rolls out: Rollout chat-b, canary 10% -> 100%, after chat-a" in ascii_lines


def test_a_change_outside_the_pod_template_applies_at_once() -> None:
    old, new = _zoned("vllm:1"), _zoned("vllm:1")
    key = (DEPLOYMENT[0], "shop-prod-chat-a", "p")
    new[key]["inputs"]["spec"]["minReadySeconds"] = 5
    lines = render(old, new)
    assert lines[:2] == [
        "~ kubernetes:apps/v1:Deployment shop-prod-chat-a",
        "    inputs.spec.minReadySeconds: (absent) → 5",
    ]
    assert not any("rolls" in line for line in lines)


def test_a_rollout_new_in_this_plan_runs_no_canary_yet() -> None:
    old = {k: v for k, v in _zoned("vllm:1").items() if "Rollout" not in k[0]}
    lines = render(old, _zoned("vllm:2"))
    i = lines.index("~ kubernetes:apps/v1:Deployment shop-prod-chat-b")
    assert lines[i + 2] == (
        "    rolls every pod now: the Deployment's own rolling update; the new Rollout "
        "chat-b then takes the pods without steps, and canaries start with the next change"
    )
