"""What a secret reference (``models.<m>.secrets.<name>``) may name, as pure functions.

A blueprint is hostile input: a pull request could point a model's secret at the deploy
runner's own credentials (``from_env: AWS_SECRET_ACCESS_KEY``), read another project's Pulumi
config or another account's secret, or name the secret so that its environment variable
changes how the server process runs (``ld_preload`` becomes ``LD_PRELOAD``). `semantic_secrets`
refuses each of these at the value to blame; the lists here are the documented defaults
(``secret-sources`` in the policy config adds runner variables of its own).
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Final

PROJECT_NAMESPACE: Final = "inferplane"
"""The Pulumi project's own config namespace (stacks/Pulumi.yaml ``name``): a bare key of
``from_pulumi_config`` is read from it, and it is the only namespace a secret may name."""

RUNNER_CREDENTIALS: Final[tuple[tuple[str, str], ...]] = (
    ("AWS_*", "AWS access keys, session tokens, profiles and credential files"),
    ("GOOGLE_*", "Google Cloud credentials (GOOGLE_APPLICATION_CREDENTIALS, GOOGLE_CREDENTIALS)"),
    ("CLOUDSDK_*", "gcloud settings, including its credential file and access token"),
    ("GCLOUD_*", "gcloud credentials and settings"),
    ("PULUMI_*", "the Pulumi access token and the state's passphrase"),
    ("GITHUB_*", "the GitHub Actions token and the workflow's context"),
    ("ACTIONS_*", "GitHub Actions runtime tokens, including the OIDC token request"),
    ("ARM_*", "Azure service principal credentials (Terraform/Pulumi azure providers)"),
    ("AZURE_*", "Azure credentials"),
    ("KUBECONFIG", "the deploy runner's Kubernetes credentials"),
    ("SSH_*", "the SSH agent socket and keys"),
)
"""Environment variables of the process that runs ``pulumi up`` that hold its own
credentials (fnmatch patterns, case-sensitive, with why). A model never receives them."""

SHADOWED_ENV: Final[tuple[tuple[str, str], ...]] = (
    ("LD_*", "changes which libraries the dynamic linker loads into the server"),
    ("PYTHON*", "changes which Python code and settings the server starts with"),
    ("HOME", "moves the server's home directory (caches, config files)"),
    ("PATH", "changes which programs the server runs"),
    ("SHELL", "changes the shell scripts run with"),
    ("TMPDIR", "moves the server's temporary files"),
    ("HF_TOKEN_PATH", "names the file the Hugging Face token is read from (inferplane sets it)"),
    ("VLLM_*", "is a vLLM setting"),
    ("CUDA_*", "is a CUDA setting (visible devices, caching, launch behaviour)"),
    ("NCCL_*", "is an NCCL setting"),
    ("NVIDIA_*", "is an NVIDIA container runtime setting"),
    ("TRITON_*", "is a Triton setting"),
    ("TORCH*", "is a PyTorch setting"),
    ("PYTORCH_*", "is a PyTorch setting"),
    ("OMP_*", "is an OpenMP setting"),
    ("HF_HUB_*", "is a Hugging Face Hub setting"),
    ("HF_HOME", "moves the Hugging Face cache"),
    ("HF_ENDPOINT", "redirects model downloads to another hub"),
    ("TRANSFORMERS_*", "is a transformers setting"),
)
"""Environment variables that change how a serving process runs (fnmatch patterns over the
variable a secret becomes, with why). Secrets may not take these names."""

FILE_VARIABLES: Final[dict[str, str]] = {
    "HF_TOKEN": "HF_TOKEN_PATH",
    "HUGGING_FACE_HUB_TOKEN": "HF_TOKEN_PATH",
}
"""Secrets whose consumer reads the value from a file named by another variable: the pod
gets the file's path there instead (huggingface_hub: ``HF_TOKEN_PATH``; see
`inferplane.components.serving.secrets`)."""
TOKEN_NAMES: Final = frozenset(FILE_VARIABLES)
"""Tokens the Hugging Face libraries read: allowed although they look like settings."""


RECEIVER_SECRETS = (
    ("slack", "api_url", "slack-api-url"),
    ("pagerduty", "routing_key", "pagerduty-routing-key"),
    ("webhook", "url", "webhook-url"),
)
"""(integration, field, key suffix): a receiver's secret `<receiver>-<suffix>` in the
receivers' Kubernetes Secret."""


def env_var_name(secret_name: str) -> str:
    """The environment variable a secret becomes in the pod: ``hf_token`` -> ``HF_TOKEN``
    (no prefix: the server libraries read their tokens under these exact names)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", secret_name).upper()


def container_variable(secret_name: str) -> str:
    """The variable a secret sets in the server container: its own name, or for a token read
    as a file (`FILE_VARIABLES`) the variable naming that file."""
    name = env_var_name(secret_name)
    return FILE_VARIABLES.get(name, name)


def runner_credential(variable: str, extra: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """(pattern, why) when `variable` is a deploy-runner credential, else None. `extra`
    adds patterns (from the policy config)."""
    for pattern, why in RUNNER_CREDENTIALS:
        if fnmatchcase(variable, pattern):
            return pattern, why
    for pattern in extra:
        if fnmatchcase(variable, pattern):
            return pattern, "listed in the policy config as a deploy-runner variable"
    return None


def shadowed(variable: str) -> tuple[str, str] | None:
    """(pattern, why) when a secret exposed as `variable` would change how the server
    process runs, else None."""
    if variable in TOKEN_NAMES:
        return None
    for pattern, why in SHADOWED_ENV:
        if fnmatchcase(variable, pattern):
            return pattern, why
    return None


def config_namespace(key: str) -> str:
    """The Pulumi config namespace `key` reads (a bare key reads the project's)."""
    namespace, _, _ = key.rpartition(":")
    return namespace or PROJECT_NAMESPACE


def gcp_secret_project(secret_id: str) -> str | None:
    """``projects/<p>/secrets/...`` -> ``<p>``; None for anything else."""
    m = re.match(r"^projects/([^/]+)/secrets/", secret_id)
    return m.group(1) if m else None


def aws_secret_account(secret_id: str) -> str | None:
    """The account id of a Secrets Manager ARN; None for anything else."""
    m = re.match(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:([0-9]{12}):secret:", secret_id)
    return m.group(1) if m else None


def secret_manager_name(secret_id: str) -> str | None:
    """The secret's own name: an AWS ARN's part after ``:secret:`` (with the random suffix
    Secrets Manager appends, if written), a GCP version's secret id; None otherwise."""
    m = re.match(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:(.+)$", secret_id)
    if m:
        return m.group(1)
    m = re.match(r"^projects/[^/]+/secrets/([^/]+)(/|$)", secret_id)
    return m.group(1) if m else None


def blueprint_variable_prefix(blueprint: str) -> str:
    """A blueprint's name as a variable prefix: ``new-user`` -> ``NEW_USER``."""
    return env_var_name(blueprint)


__all__ = [
    "FILE_VARIABLES",
    "PROJECT_NAMESPACE",
    "RECEIVER_SECRETS",
    "RUNNER_CREDENTIALS",
    "SHADOWED_ENV",
    "TOKEN_NAMES",
    "aws_secret_account",
    "blueprint_variable_prefix",
    "config_namespace",
    "container_variable",
    "env_var_name",
    "gcp_secret_project",
    "runner_credential",
    "secret_manager_name",
    "shadowed",
]
