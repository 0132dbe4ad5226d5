"""The Pulumi program: one blueprint environment -> one `InferenceStack`, with its outputs.

`pulumi up -s <env>` in `stacks/` runs `main()`; `inferplane plan` and `inferplane check`
run `deploy(env)` offline under mocks — the same code, so what a pull request checks is
what `pulumi up` creates.

Stack configuration (`stacks/Pulumi.<env>.yaml`):

    inferplane:blueprint    path of the blueprint, relative to the Pulumi project (stacks/)
    inferplane:environment  the blueprint environment; default: the stack's name

The whole blueprint — every environment — is validated before any resource is registered,
so an invalid blueprint provisions nothing, in any stack.
"""

from __future__ import annotations

from pathlib import Path

import pulumi

from inferplane.blueprint import naming
from inferplane.blueprint.errors import BlueprintError, Diagnostic, format_diagnostics
from inferplane.blueprint.model import Environment
from inferplane.components.serving import router
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


def blueprint_path(config: pulumi.Config, project_dir: Path) -> Path:
    """`inferplane:blueprint`, resolved against the Pulumi project's directory."""
    path = Path(config.require("blueprint"))
    return path if path.is_absolute() else (project_dir / path)


def load_environment(path: Path, environment: str) -> Environment:
    """Validate the whole blueprint at `path`, then resolve `environment` (BlueprintError
    if either fails)."""
    from inferplane.blueprint.resolve import load_blueprint, resolve

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
    return resolve(doc, environment)


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
        env = load_environment(blueprint_path(config, base), environment)
        check_deploy_inputs(env)
    except BlueprintError as exc:
        message = _diagnostics("the blueprint is invalid; nothing was deployed", exc)
        raise pulumi.RunError(message) from None
    except OSError as exc:
        raise pulumi.RunError(f"cannot read the blueprint (inferplane:blueprint): {exc}") from None
    chart = config.get("routerChart")
    problem = router.local_chart_problem(chart) if chart else None
    if problem and any(m.routing.mode == "llm_aware" for m in env.models.values()):
        raise pulumi.RunError(f"inferplane:routerChart: {problem}; nothing was deployed")
    try:
        deploy(env)
    except BlueprintError as exc:
        raise pulumi.RunError(_diagnostics("the blueprint cannot be deployed", exc)) from None


def _diagnostics(headline: str, exc: BlueprintError) -> str:
    return headline + ":\n" + format_diagnostics(exc.diagnostics)
