"""The refusal reasons shared by the flag and variable classifications (policies/README.md,
threat model): whatever loads code, opens an unauthenticated endpoint, downloads from or sends
to elsewhere, logs prompts, or turns off what the stack depends on. Reasons are shown to
blueprint authors; sources are in comments beside each name."""

from __future__ import annotations


def names(text: str) -> frozenset[str]:
    return frozenset(text.split())


CODE = "loads and runs Python code named by the blueprint or a model repository"
ENDPOINT = "opens an endpoint no NetworkPolicy or API key guards"
ELSEWHERE = "reads from or sends to a place other than the model store"
PROMPTS = "writes prompts or completions to the logs"
