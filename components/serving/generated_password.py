"""`GeneratedPassword`: a password made once by Python's `secrets` and kept in Pulumi's state
as a secret, through a dynamic provider instead of the random provider plugin.

Why not pulumi-random: its provider is a Go plugin (``pulumi-resource-random``) that a
machine must download or build, and a password is all inferplane asks of it. A dynamic
provider runs in the program's own Python (`pulumi.dynamic`): the engine starts the plugin
``pulumi-resource-pulumi-python``, which the Pulumi CLI ships beside its Python language host
(pulumi/pulumi ``sdk/python/dist/pulumi-resource-pulumi-python``: ``python -u -m
pulumi.dynamic`` in the project's ``virtualenv``), and which loads the provider class from
this module, pickled by reference (`pulumi.dynamic.serialize_provider`, dill).

The state names this module and class (the provider is pickled by reference): keep both
where they are, since `destroy` and a replacement unpickle the stored reference.

Stable: the password is drawn in ``create`` only; ``diff`` reports a change (a replacement)
only when ``length`` changes, so every later ``up`` keeps it. Secret: ``result`` is an
``additional_secret_outputs`` of the resource, so state and plan output hold it encrypted,
and the serialized provider is a secret as well (the SDK's default).
"""

from __future__ import annotations

import secrets
import string
import uuid
from typing import Any, Final

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider

ALPHABET: Final = string.ascii_letters + string.digits
"""Letters and digits: no character that needs quoting in a config line or a URL."""
TYPE: Final = "pulumi-python:dynamic/inferplane:GeneratedPassword"
"""The resource type the engine records (`pulumi.dynamic.Resource`: ``pulumi-python:`` +
``dynamic/<module>:<name>``)."""


def draw(length: int) -> str:
    """`length` characters of `ALPHABET`, each from the operating system's CSPRNG."""
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


class PasswordProvider(ResourceProvider):
    """Create draws the password; nothing else ever changes it."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        length = int(props["length"])
        return CreateResult(id_=uuid.uuid4().hex, outs={"length": length, "result": draw(length)})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        # A state without `length` (imported, refreshed) keeps its password.
        changed = "length" in olds and int(olds["length"]) != int(news["length"])
        return DiffResult(
            changes=changed, replaces=["length"] if changed else [], delete_before_replace=False
        )


class GeneratedPassword(Resource, module="inferplane", name="GeneratedPassword"):
    """A password of `length` letters and digits; ``result`` is a Pulumi secret."""

    result: pulumi.Output[str]

    def __init__(self, name: str, length: int, opts: pulumi.ResourceOptions | None = None) -> None:
        secret = pulumi.ResourceOptions(additional_secret_outputs=["result"])
        super().__init__(
            PasswordProvider(),
            name,
            {"length": length, "result": None},
            pulumi.ResourceOptions.merge(opts, secret),
        )


__all__ = ["ALPHABET", "TYPE", "GeneratedPassword", "PasswordProvider", "draw"]
