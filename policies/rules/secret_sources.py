"""secret-sources: secrets (models', alert receivers') never come from the runner's variables."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint.secret_refs import RUNNER_CREDENTIALS, runner_credential
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
    for target, owner, ref in owned:
        if ref.from_env is None:
            continue
        found = runner_credential(ref.from_env, extra)
        if found:
            yield Finding(
                target,
                (*ref.path, "from_env"),
                f"secret {ref.name} of {owner} reads {ref.from_env}, a variable of the runner "
                f"that deploys ({found[0]}: {found[1]}); give it a token of its own",
            )


_BUILT_IN = ", ".join(f"`{p}`" for p, _ in RUNNER_CREDENTIALS)

RULE = Rule(
    id="secret-sources",
    title="Secrets never come from the deploy runner's own variables",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "`from_env` copies a variable of the process that runs `pulumi up` into the model's "
        "pods. Pointed at the runner's own credentials it hands the cloud account, the "
        "Pulumi state or the repository to anyone who can read the pod's environment. "
        f"`inferplane validate` always refuses {_BUILT_IN}; this rule adds the variables a "
        "site's runners hold besides (other CI systems, vaults, registries)."
    ),
    remediation=(
        "Give the model a token of its own (e.g. HF_TOKEN) in a variable of its own, or read "
        "it with from_pulumi_config or from_secret_manager. List further runner variables "
        "in runner_variables."
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
    ),
    sources=(
        "The blueprint's secret references (offline only: online the resources carry only "
        "the values, which are secret)."
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
