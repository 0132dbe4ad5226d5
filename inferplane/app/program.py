"""The Pulumi program: one blueprint environment -> one `InferenceStack`, with its outputs.

`pulumi up -s <env>` in `stacks/` runs `main()`; `inferplane plan` and `inferplane check`
run `deploy(env)` offline under mocks — the same code, so what a pull request checks is
what `pulumi up` creates.

Stack configuration (`stacks/Pulumi.<env>.yaml`):

    inferplane:blueprint    path of the blueprint, relative to the Pulumi project (stacks/)
    inferplane:environment  the blueprint environment; default: the stack's name
    aws:region              an aws environment's region         (required there)
    gcp:project             a gcp environment's project         (required there)
    gcp:region              a gcp environment's region          (compared when set)
    kubernetes:context      a kubernetes environment's context  (required there)
    inferplane:policyConfig the platform's policy config, relative to the Pulumi project
                            (optional): ``levers: auto`` chooses against its
                            ``scale-out-budget`` keys, as `inferplane plan` and `inferplane
                            check` do with ``--policy-config``; without it, the defaults

The whole blueprint — every environment — is validated before any resource is registered,
so an invalid blueprint provisions nothing, in any stack. The blueprint's own placement
(`project`, `region`, `cluster.context`) becomes explicit providers that would override the
stack's provider config, so the program deploys only where the stack's config says: the
stack file is the platform's, the blueprint a pull request's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pulumi

from inferplane.app import platform_scale_out
from inferplane.blueprint import naming
from inferplane.blueprint.derived.scale_out import Platform
from inferplane.blueprint.errors import BlueprintError, Diagnostic, YamlPath, format_diagnostics
from inferplane.blueprint.model import Environment
from inferplane.components.serving.routing import router
from inferplane.components.serving.secrets import is_offline
from inferplane.components.stack import InferenceStack, InferenceStackArgs
from inferplane.components.stack_serving import (
    alert_secret_env_diagnostics,
    secret_env_diagnostics,
)


def deploy(env: Environment) -> InferenceStack:
    """Build the environment's `InferenceStack` and export what its users need.

    Stack outputs: blueprint, environment, cloud, region, zones; cluster_name and
    cluster_endpoint (the Kubernetes API server); namespace (the blueprint's objects);
    model_endpoints (model -> its internal load balancer's hostname or IP);
    grpc_endpoints (model -> the gRPC target for client-side balancing, gRPC models only).
    """
    stack = InferenceStack(naming.stack_name(env.blueprint, env.name), InferenceStackArgs(env=env))
    pulumi.export("blueprint", env.blueprint)
    pulumi.export("environment", env.name)
    pulumi.export("cloud", env.cloud)
    pulumi.export("region", env.region)
    pulumi.export("zones", list(env.zones))
    pulumi.export("cluster_name", stack.cluster_name)
    pulumi.export("cluster_endpoint", stack.endpoint)
    pulumi.export("namespace", stack.namespace)
    pulumi.export("model_endpoints", stack.model_endpoints)
    pulumi.export("grpc_endpoints", stack.grpc_endpoints)
    return stack


def policy_config_path(config: pulumi.Config, project_dir: Path) -> Path | None:
    """`inferplane:policyConfig`, resolved against the Pulumi project's directory (None when
    unset)."""
    raw = config.get("policyConfig")
    if not raw:
        return None
    path = Path(raw)
    return path if path.is_absolute() else (project_dir / path)


def blueprint_path(config: pulumi.Config, project_dir: Path) -> Path:
    """`inferplane:blueprint`, resolved against the Pulumi project's directory."""
    path = Path(config.require("blueprint"))
    return path if path.is_absolute() else (project_dir / path)


def load_environment(path: Path, environment: str, platform: Platform | None = None) -> Environment:
    """Validate the whole blueprint at `path`, then resolve `environment` (BlueprintError
    if either fails), ``levers: auto`` chosen against `platform` (`resolve`)."""
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

    doc, envs = load_blueprint(path)
    if environment not in envs:
        raise BlueprintError(
            [
                Diagnostic(
                    doc.source.key(("environments",)),
                    ("environments",),
                    f"no environment named {environment!r} (the stack's environment)",
                    f"add it to the blueprint, or set `inferplane:environment` to one of: "
                    f"{', '.join(envs)}",
                )
            ]
        )
    return resolve(doc, environment, platform)


def check_deploy_inputs(env: Environment) -> None:
    """What the blueprint reads from outside itself when `pulumi up` runs: every
    ``from_env`` secret's variable and ``from_pulumi_config`` key (models' and alert
    receivers') must be set and not empty. Checked before anything is registered, so a
    missing token stops the update instead of leaving it half done. (Offline runs read no
    secrets.)"""
    if is_offline():
        return
    problems = [d for model in env.models.values() for d in secret_env_diagnostics(env, model)]
    problems += alert_secret_env_diagnostics(env)
    if problems:
        raise BlueprintError(problems)


STACK_PLACEMENT: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "aws": (("aws:region", "region", True),),
    "gcp": (("gcp:project", "project", True), ("gcp:region", "region", False)),
    "kubernetes": (("kubernetes:context", "context", True),),
}
"""Per cloud: (stack config key, environment value, whether the stack must set it)."""


def _placement_value(env: Environment, name: str) -> tuple[str | None, YamlPath]:
    if name == "context":
        return env.cluster.context, ("environments", env.name, "cluster", "context")
    if name == "project":
        return env.project, ("environments", env.name, "project")
    return env.region, ("environments", env.name, "region")


def stack_placement_problems(
    env: Environment, stack_config: Mapping[str, str | None], stack: str
) -> list[Diagnostic]:
    """Where `env` would deploy, against the stack's own provider config (`stack_config`:
    ``gcp:project`` and the other keys of `STACK_PLACEMENT`, None when unset). The stack's
    config is the platform's decision; a blueprint that names another project, region or
    context, or a stack that names none, deploys nothing."""
    out = []
    for key, name, required in STACK_PLACEMENT[env.cloud]:
        value, path = _placement_value(env, name)
        configured = stack_config.get(key)
        if configured is None and not required:
            continue
        location = env.locate(path)
        if configured is None:
            out.append(
                Diagnostic(
                    location,
                    path,
                    f"stack {stack!r} sets no {key}, so where environment {env.name!r} deploys "
                    f"({name} {value!r}) would be the blueprint's choice alone",
                    f"set it in the stack's config (`pulumi config set {key} {value}` in "
                    f"stacks/, Pulumi.{stack}.yaml): the stack's config says where it deploys",
                )
            )
        elif configured != value:
            out.append(
                Diagnostic(
                    location,
                    path,
                    f"{name} {value!r} is not stack {stack!r}'s {key} {configured!r}: the "
                    "blueprint's placement would override the stack's provider config",
                    f"deploy environment {env.name!r} where its stack does ({configured}), or "
                    f"have the stack's owners change {key} in Pulumi.{stack}.yaml",
                )
            )
    return out


def stack_config_values() -> dict[str, str | None]:
    """The stack's own provider config that `stack_placement_problems` compares."""
    out: dict[str, str | None] = {}
    for keys in STACK_PLACEMENT.values():
        for key, _, _ in keys:
            namespace, name = key.split(":", 1)
            out[key] = pulumi.Config(namespace).get(name)
    return out


def main(project_dir: Path | str | None = None) -> None:
    """The program `pulumi up` runs (`stacks/__main__.py`).

    `project_dir` is where `inferplane:blueprint` is relative to; by default the working
    directory, which Pulumi sets to the project's directory. Blueprint problems become a
    `pulumi.RunError`: Pulumi prints its message alone, without a Python traceback.
    """
    config = pulumi.Config("inferplane")
    environment = config.get("environment") or pulumi.get_stack()
    base = Path(project_dir) if project_dir is not None else Path.cwd()
    try:
        policy = policy_config_path(config, base)
        scaling = platform_scale_out.of_file(policy)
    except BlueprintError as exc:
        message = _diagnostics("the policy config is invalid; nothing was deployed", exc)
        raise pulumi.RunError(message) from None
    except OSError as exc:
        raise pulumi.RunError(
            f"cannot read the policy config (inferplane:policyConfig): {exc}"
        ) from None
    try:
        env = load_environment(blueprint_path(config, base), environment, scaling)
        check_deploy_inputs(env)
    except BlueprintError as exc:
        message = _diagnostics("the blueprint is invalid; nothing was deployed", exc)
        raise pulumi.RunError(message) from None
    except OSError as exc:
        raise pulumi.RunError(f"cannot read the blueprint (inferplane:blueprint): {exc}") from None
    stack = pulumi.get_stack()
    misplaced = stack_placement_problems(env, stack_config_values(), stack)
    if misplaced:
        headline = f"the blueprint does not deploy where stack {stack!r} does; nothing was deployed"
        raise pulumi.RunError(_diagnostics(headline, BlueprintError(misplaced)))
    chart = config.get("routerChart")
    problem = router.local_chart_problem(chart) if chart else None
    if problem and any(m.routing.llm_aware for m in env.models.values()):
        raise pulumi.RunError(f"inferplane:routerChart: {problem}; nothing was deployed")
    try:
        deploy(env)
    except BlueprintError as exc:
        raise pulumi.RunError(_diagnostics("the blueprint cannot be deployed", exc)) from None


def _diagnostics(headline: str, exc: BlueprintError) -> str:
    return headline + ":\n" + format_diagnostics(exc.diagnostics)
