"""secret-sources: secrets (models', alert receivers') come only from the runner variables
and the secret-manager names the platform allows, never from the runner's own credentials."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fnmatch import fnmatchcase

from inferplane.blueprint.model import SecretRef
from inferplane.blueprint.secret_refs import (
    RUNNER_CREDENTIALS,
    blueprint_variable_prefix,
    runner_credential,
    secret_manager_name,
)
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.stack import Stack


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    env = stack.env
    if env is None:  # online: the references are not in the resources, only their values
        return
    extra = tuple(str(p) for p in config["runner_variables"])
    # Models' secrets, and the Alertmanager receivers' credentials (read the same way).
    owned = [
        (f"models.{m.name}", f"model {m.name}", ref)
        for m in env.models.values()
        for ref in m.secrets
    ]
    owned += [
        ("observability.alerts", f"alert receiver {r.name}", ref)
        for r in env.observability.alert_receivers
        for ref in r.secrets
    ]
    variables = [
        str(p).replace("{BLUEPRINT}", blueprint_variable_prefix(env.blueprint))
        for p in config["allowed_runner_variables"]
    ]
    key = "aws_secret_prefixes" if env.cloud == "aws" else "gcp_secret_prefixes"
    prefixes = [str(p).replace("{blueprint}", env.blueprint) for p in config[key]]
    for target, owner, ref in owned:
        if ref.from_env is not None:
            yield from _from_env(target, owner, ref, ref.from_env, extra, variables)
        if ref.from_secret_manager is not None:
            name = secret_manager_name(ref.from_secret_manager)
            if name is None or not any(name.startswith(p) for p in prefixes):
                yield Finding(
                    target,
                    (*ref.path, "from_secret_manager"),
                    f"secret {ref.name} of {owner} reads the secret-manager secret {name}, "
                    f"whose name does not start with {' or '.join(prefixes) or 'any prefix'} "
                    "(the platform allows each blueprint its own secrets only); store it "
                    "under an allowed name, or ask the platform team to add a prefix to "
                    f"secret-sources.{key} in its policy config",
                )


def _from_env(
    target: str,
    owner: str,
    ref: SecretRef,
    variable: str,
    extra: tuple[str, ...],
    allowed: Sequence[str],
) -> Iterator[Finding]:
    found = runner_credential(variable, extra)
    if found:
        yield Finding(
            target,
            (*ref.path, "from_env"),
            f"secret {ref.name} of {owner} reads {variable}, a variable of the runner "
            f"that deploys ({found[0]}: {found[1]}); give it a token of its own",
        )
    elif not any(fnmatchcase(variable, p) for p in allowed):
        yield Finding(
            target,
            (*ref.path, "from_env"),
            f"secret {ref.name} of {owner} reads the runner variable {variable}, which the "
            f"platform does not allow ({', '.join(allowed) or 'none allowed'}); use an "
            "allowed variable, from_pulumi_config or from_secret_manager, or ask the "
            "platform team to add it to secret-sources.allowed_runner_variables in its "
            "policy config",
        )


_BUILT_IN = ", ".join(f"`{p}`" for p, _ in RUNNER_CREDENTIALS)

RULE = Rule(
    id="secret-sources",
    title="Secrets come only from the variables and secret names the platform allows",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "`from_env` copies a variable of the process that runs `pulumi up` into the model's "
        "pods. Pointed at the runner's own credentials it hands the cloud account, the "
        "Pulumi state or the repository to anyone who can read the pod's environment. "
        f"`inferplane validate` always refuses {_BUILT_IN}; this rule adds the variables a "
        "site's runners hold besides (other CI systems, vaults, registries). Which variables "
        "and which secret-manager secrets a blueprint may read at all is the platform's "
        "decision: a pull request could otherwise copy any variable the runner holds, or "
        "any secret the deploying identity can read in the account, into its pods. Only "
        "the variables in `allowed_runner_variables` and the secrets whose names start with "
        "the blueprint's own prefix are read."
    ),
    remediation=(
        "Give the model a token of its own (e.g. HF_TOKEN) in a variable of its own, or read "
        "it with from_pulumi_config or from_secret_manager, named under the blueprint's "
        "prefix (`inferplane/<blueprint>/` in AWS Secrets Manager, `inferplane-<blueprint>_` "
        "in GCP Secret Manager). List further runner variables in runner_variables; the "
        "platform team allows variables in allowed_runner_variables and other secret names "
        "in aws_secret_prefixes and gcp_secret_prefixes."
    ),
    links=(
        "https://docs.github.com/en/actions/reference/workflows-and-actions/variables",
        "https://docs.gitlab.com/ci/variables/predefined_variables/",
    ),
    config=(
        ConfigKey(
            "runner_variables",
            ["RUNNER_*", "CI_JOB_*", "VAULT_*", "DOCKER_*", "NPM_TOKEN"],
            {"type": "array", "items": {"type": "string", "minLength": 1}},
            "fnmatch patterns (case-sensitive) of deploy-runner variables a secret may not "
            "read, in addition to the built-in list.",
        ),
        ConfigKey(
            "allowed_runner_variables",
            ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "{BLUEPRINT}__*"],
            {"type": "array", "items": {"type": "string", "minLength": 1}},
            "fnmatch patterns (case-sensitive) of the only runner variables a secret may read "
            "(`from_env`); `{BLUEPRINT}` stands for the blueprint's name in capitals with `_` "
            "for `-` (`NEW_USER` for new-user). The default `{BLUEPRINT}__*` ends in `__`, "
            "which no blueprint's prefix holds (names have no `--`), so `new` cannot read "
            "`NEW_USER__TOKEN`; a pattern `{BLUEPRINT}_*` would let it. The built-in list "
            "and runner_variables are refused even when listed here.",
        ),
        ConfigKey(
            "aws_secret_prefixes",
            ["inferplane/{blueprint}/"],
            {"type": "array", "items": {"type": "string", "minLength": 1}},
            "Name prefixes of the AWS Secrets Manager secrets a blueprint may read "
            "(`from_secret_manager`, the name after `:secret:` in the ARN); `{blueprint}` "
            "stands for the blueprint's name.",
        ),
        ConfigKey(
            "gcp_secret_prefixes",
            ["inferplane-{blueprint}_"],
            {"type": "array", "items": {"type": "string", "minLength": 1}},
            "Prefixes of the GCP Secret Manager secret ids a blueprint may read "
            "(`from_secret_manager`; ids cannot hold `/`); `{blueprint}` stands for the "
            "blueprint's name. The default ends in `_`, which no blueprint name holds, so "
            "blueprint `chat` cannot read `inferplane-chat-search_...` of blueprint "
            "`chat-search`.",
        ),
    ),
    offline_only=True,
    sources=(
        "The blueprint's secret references (offline only: online the resources carry only "
        "the values, which are secret). Secrets from Pulumi config are judged by "
        "`inferplane validate` (the project's own namespace only)."
    ),
    passing_example="""\
models:
  chat:
    secrets:
      hf_token: {from_env: HF_TOKEN}
""",
    failing_example="""\
models:
  chat:
    secrets:
      hf_token: {from_env: VAULT_TOKEN}
""",
)
