"""The Redis password's dynamic provider (`generated_password`): drawn once, kept by every
later `up`, replaced only when its length changes, and loadable by the provider process."""

from __future__ import annotations

import base64
import subprocess
import sys

from pulumi.dynamic.dynamic import serialize_provider

from inferplane.app import offline_mocks
from inferplane.components.serving.generated_password import (
    ALPHABET,
    TYPE,
    GeneratedPassword,
    PasswordProvider,
    draw,
)


def test_create_draws_letters_and_digits_of_the_length() -> None:
    made = PasswordProvider().create({"length": 40})
    password = made.outs["result"]
    assert len(password) == 40 and set(password) <= set(ALPHABET)
    assert made.outs["length"] == 40 and len(made.id) == 32
    # 62^40 possibilities: two draws never meet.
    assert draw(40) != draw(40)


def test_only_a_new_length_replaces_the_password() -> None:
    provider = PasswordProvider()
    olds = {"length": 40, "result": "x" * 40, "__provider": "old code"}
    same = provider.diff("id", olds, {"length": 40, "result": None, "__provider": "new code"})
    assert (same.changes, same.replaces) == (False, [])
    longer = provider.diff("id", olds, {"length": 48, "result": None})
    assert (longer.changes, longer.replaces) == (True, ["length"])
    # A state that lost `length` (an import) keeps its password.
    kept = provider.diff("id", {"result": "x" * 40}, {"length": 40, "result": None})
    assert (kept.changes, kept.replaces) == (False, [])


def test_the_type_is_the_one_the_engine_records() -> None:
    assert GeneratedPassword._resource_type_name == "dynamic/inferplane:GeneratedPassword"
    assert f"pulumi-python:{GeneratedPassword._resource_type_name}" == TYPE
    # The offline mocks answer this type with a stand-in password.
    assert offline_mocks.GENERATED_PASSWORD == TYPE


def test_the_provider_process_loads_the_class_by_reference() -> None:
    # The engine's `pulumi-resource-pulumi-python` unpickles `__provider` in a process of
    # its own: the class is named, not copied, so an upgrade of inferplane is what it runs,
    # and the module must stay where the state says (destroy unpickles the stored one).
    pickled = serialize_provider(PasswordProvider())
    assert b"inferplane.components.serving.generated_password" in base64.b64decode(pickled)
    code = (
        "import base64, sys, dill\n"
        "p = dill.loads(base64.b64decode(sys.argv[1]))\n"
        "print(len(p.create({'length': 12}).outs['result']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, pickled], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "12"
