"""Secret references: no runner credentials, no foreign namespace, project or account, and no
names that shadow process settings. Exact diagnostics at the value to blame."""

from __future__ import annotations

import pytest
from test_semantic import BASE, diagnostics, edit

from inferplane.blueprint import secret_refs

WITH_SECRET = "    replicas: {min: 2, max: 4}\n    secrets:\n      SECRET\n  rank:"


def with_secret(entry: str, text: str = BASE) -> str:
    return edit(
        "    replicas: {min: 2, max: 4}\n  rank:", WITH_SECRET.replace("SECRET", entry), text
    )


def test_model_token_is_allowed() -> None:
    assert diagnostics(with_secret("hf_token: {from_env: HF_TOKEN}")) == []
    assert diagnostics(with_secret("hugging_face_hub_token: {from_env: MY_HF}")) == []


@pytest.mark.parametrize(
    ("variable", "pattern", "why"),
    [
        (
            "AWS_SECRET_ACCESS_KEY",
            "AWS_*",
            "AWS access keys, session tokens, profiles and credential files",
        ),
        (
            "AWS_SESSION_TOKEN",
            "AWS_*",
            "AWS access keys, session tokens, profiles and credential files",
        ),
        (
            "GOOGLE_APPLICATION_CREDENTIALS",
            "GOOGLE_*",
            "Google Cloud credentials (GOOGLE_APPLICATION_CREDENTIALS, GOOGLE_CREDENTIALS)",
        ),
        ("PULUMI_ACCESS_TOKEN", "PULUMI_*", "the Pulumi access token and the state's passphrase"),
        ("GITHUB_TOKEN", "GITHUB_*", "the GitHub Actions token and the workflow's context"),
        (
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "ACTIONS_*",
            "GitHub Actions runtime tokens, including the OIDC token request",
        ),
        ("KUBECONFIG", "KUBECONFIG", "the deploy runner's Kubernetes credentials"),
    ],
)
def test_runner_credentials_are_refused(variable: str, pattern: str, why: str) -> None:
    text = with_secret(f"hf_token: {{from_env: {variable}}}")
    assert diagnostics(text) == [
        f"bp.yaml:30:28: error: models.chat.secrets.hf_token.from_env: {variable} is a "
        f"credential of the runner that deploys ({pattern}: {why}); a model never receives "
        "it; give the model a token of its own in a variable of its own (e.g. HF_TOKEN), or "
        "use from_pulumi_config or from_secret_manager"
    ]


@pytest.mark.parametrize(
    ("name", "variable", "pattern", "why"),
    [
        (
            "ld_preload",
            "LD_PRELOAD",
            "LD_*",
            "changes which libraries the dynamic linker loads into the server",
        ),
        (
            "pythonpath",
            "PYTHONPATH",
            "PYTHON*",
            "changes which Python code and settings the server starts with",
        ),
        ("path", "PATH", "PATH", "changes which programs the server runs"),
        ("home", "HOME", "HOME", "moves the server's home directory (caches, config files)"),
        ("vllm_api_key", "VLLM_API_KEY", "VLLM_*", "is a vLLM setting"),
        (
            "cuda_visible_devices",
            "CUDA_VISIBLE_DEVICES",
            "CUDA_*",
            "is a CUDA setting (visible devices, caching, launch behaviour)",
        ),
        ("hf_hub_offline", "HF_HUB_OFFLINE", "HF_HUB_*", "is a Hugging Face Hub setting"),
        ("hf_endpoint", "HF_ENDPOINT", "HF_ENDPOINT", "redirects model downloads to another hub"),
    ],
)
def test_names_that_shadow_process_settings(name: str, variable: str, pattern: str, why: str):
    text = with_secret(f"{name}: {{from_env: MODEL_TOKEN}}")
    assert diagnostics(text) == [
        f"bp.yaml:30:{9 + len(name)}: error: models.chat.secrets.{name}: secret {name!r} "
        f"becomes the environment variable {variable} in the server's container, which {why} "
        f"({pattern}); rename the secret after the token it holds, e.g. hf_token"
    ]


def test_env_var_name_matches_the_component() -> None:
    from inferplane.blueprint.model import SecretRef
    from inferplane.components.serving.secrets import env_var_name

    for name in ("hf_token", "ld_preload", "a1_b2"):
        ref = SecretRef(name=name, path=(), from_env="X")
        assert env_var_name(ref) == secret_refs.env_var_name(name)


def test_foreign_pulumi_namespace() -> None:
    assert diagnostics(with_secret("hf_token: {from_pulumi_config: inferplane:hfToken}")) == []
    assert diagnostics(with_secret("hf_token: {from_pulumi_config: hfToken}")) == []
    text = with_secret("hf_token: {from_pulumi_config: aws:secretKey}")
    assert diagnostics(text) == [
        "bp.yaml:30:38: error: models.chat.secrets.hf_token.from_pulumi_config: aws:secretKey "
        "reads the Pulumi config namespace 'aws'; secrets come only from the project's own "
        "namespace 'inferplane'; write the key without a namespace, or as inferplane:<key>"
    ]


GCP_ONLY = BASE.replace(
    """  stg:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    model_store: s3://models-use1/
    cluster: {create: true}
""",
    "",
)


def test_gcp_secret_of_another_project() -> None:
    ok = "hf_token: {from_secret_manager: projects/demo-prod/secrets/hf/versions/1}"
    assert diagnostics(with_secret(ok, GCP_ONLY)) == []
    other = "hf_token: {from_secret_manager: projects/other-prod/secrets/hf/versions/1}"
    assert diagnostics(with_secret(other, GCP_ONLY)) == [
        "bp.yaml:24:39: error: models.chat.secrets.hf_token.from_secret_manager: the secret "
        "belongs to project 'other-prod', not the environment's project 'demo-prod'; keep the "
        "secret in demo-prod: projects/demo-prod/secrets/<secret>/versions/<version>"
    ]


def test_secret_of_the_other_cloud() -> None:
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf"
    assert diagnostics(with_secret(f"hf_token: {{from_secret_manager: {arn}}}", GCP_ONLY)) == [
        "bp.yaml:24:39: error: models.chat.secrets.hf_token.from_secret_manager: an AWS "
        "Secrets Manager secret cannot be read by a gcp environment; use "
        "projects/demo-prod/secrets/<secret>/versions/<version>"
    ]


def test_owner_helpers() -> None:
    assert (
        secret_refs.aws_secret_account(
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-AbCdEf"
        )
        == "123456789012"
    )
    assert secret_refs.aws_secret_account("projects/p/secrets/s/versions/1") is None
    assert secret_refs.gcp_secret_project("projects/p-1/secrets/s/versions/1") == "p-1"
    assert secret_refs.config_namespace("hfToken") == "inferplane"


def test_two_secrets_that_set_one_container_variable() -> None:
    # Both Hugging Face token names become the file named by HF_TOKEN_PATH in the container.
    both = "hf_token: {from_env: HF_TOKEN}\n      hugging_face_hub_token: {from_env: HF_TOKEN2}"
    assert diagnostics(with_secret(both, GCP_ONLY)) == [
        "bp.yaml:25:31: error: models.chat.secrets.hugging_face_hub_token: secrets 'hf_token' "
        "and 'hugging_face_hub_token' both set environment variable HF_TOKEN_PATH in the "
        "model's container; keep one of them"
    ]


def test_the_token_file_variable_is_not_a_secret_name() -> None:
    assert diagnostics(with_secret("hf_token_path: {from_env: MY_TOKEN_FILE}", GCP_ONLY)) == [
        "bp.yaml:24:22: error: models.chat.secrets.hf_token_path: secret 'hf_token_path' becomes "
        "the environment variable HF_TOKEN_PATH in the server's container, which names the file "
        "the Hugging Face token is read from (inferplane sets it) (HF_TOKEN_PATH); rename the "
        "secret after the token it holds, e.g. hf_token"
    ]
