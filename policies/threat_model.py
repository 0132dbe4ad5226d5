# ruff: noqa: E501  (Markdown table rows are one line each)
"""The threat model of the policy check, as `policies/README.md` states it (the catalogue
generator appends it there; edit it here)."""

from __future__ import annotations

THREAT_MODEL = """\
## Threat model

The policy check is a gate: a blueprint that passes it is deployed. It is written for a
repository where anyone may open a pull request, including from a fork, and where the
authors of blueprints are not the owners of the rules.

**Assets.** The cloud accounts and clusters the stacks deploy to; the deploy runner's
credentials; the models and their data (model stores, endpoints); and the integrity of the
check itself, which stands between a pull request and a deployment.

**Attackers.** The author of a pull request (a fork, or a compromised or careless
contributor): they control every byte of the blueprints, every file name in the pull request,
and anything else the pull request changes, including `policies/`, the tool and the
workflow files.

**What they may try, and what stops it.**

| attack | defence |
|---|---|
| Change the rules, the tool or their configuration in the same pull request, so that a violation passes | The workflow runs inferplane installed from a checkout of the **base** commit; the pull request's checkout is only read as data (its blueprints). `.github/CODEOWNERS` puts `policies/` (the platform config included), `inferplane/`, `components/`, `stacks/`, `.github/`, `.ci/`, `pyproject.toml`, `dev`, `scripts/`, `tests/`, `examples/`, `blueprints/schema/` and `.pre-commit-hooks.yaml` under the platform team: with "Require review from Code Owners" such a change needs their approval before it can judge anything. |
| Get a blueprint past the check by leaving it out of the run: put it in a subfolder, give it a name the workflow skips, or rely on a path filter that leaves the required check pending | The workflow has no path filters and checks every `*.yaml`/`*.yml` under `blueprints/`, subfolders included, in one `inferplane check` run (so cross-blueprint checks see all of them); a file whose name it cannot pass safely is reported and fails the job (`tests/e2e/test_workflow.py`). The policy config it applies is the base checkout's `policies/platform-config.yaml`. |
| Edit the workflow itself (on `pull_request`, GitHub runs the workflow as the pull request defines it) | CODEOWNERS review of `.github/`, and branch protection that requires this check by name. `pull_request_target` is deliberately not used: it would hand a write token to a job that processes untrusted input. Fork pull requests run with a read-only token and no secrets. |
| Inject shell commands through a file name (`$(…)`, backticks, `;`, line breaks, spaces, `../`) | No pull-request value is pasted into a `run:` script: names travel through `env:` and a file, are matched against `^blueprints/[A-Za-z0-9._-]+\\.ya?ml$`, skipped with a message otherwise, and passed as quoted arguments after `--`. Tested by running the workflow's steps with such names (`tests/e2e/test_workflow.py`). |
| Steal the checkout's token from `.git/config` | Both checkouts use `persist-credentials: false`. |
| Hide a violation behind a waiver | A blueprint may waive advisory rules only: its waiver of a mandatory result does not waive and says so (`policies/waivers.py`, offline and online); waivers of mandatory rules live in the platform's policy config (`mandatory_waivers`, naming the blueprint), which CODEOWNERS gives to the platform team and the workflow reads from the base branch. A waiver names one rule and one existing target (`models.<model>`, `gpu_pools.<pool>` or `load_balancer`: never a section or a wildcard), gives a reason of at least 20 characters of words, and expires at most `waivers.max_days` (default 90) after the day of the check; a later expiry does not waive. A waived result is still reported, and every waiver of a mandatory rule is listed in the summary of every report format. |
| Smuggle characters that read differently than they display, or that break generated scripts, configs and PromQL | The loader refuses control characters, bidirectional controls and lone surrogates in the raw text **and** in every parsed key and value (escapes of double-quoted YAML included), and refuses line breaks and tabs in any value; schema patterns match the whole string (`$` as ECMAScript reads it, so `"ranker\\n"` is not a model name). |
| Run code, open an endpoint, read from elsewhere, log prompts or silence the autoscaler's metrics through the engine's pass-throughs (`vllm.extra_args`, `vllm.env`: `--trust-remote-code`, `--tool-parser-plugin`, `--allowed-local-media-path /`, `-t 4` read as `-tp 4`, `--disable-log-stats`, `LD_PRELOAD`, `PYTHONPATH`, `HTTPS_PROXY`, `VLLM_SERVER_DEV_MODE`, …) | Allowlists, not deny lists: `inferplane/blueprint/vllm_serve_flags.txt` and `vllm_env_vars.txt` classify every option of `vllm serve` and every variable of `vllm/envs.py` of the pinned vLLM (read from its wheel by `scripts/vllm_serve_flags.py`, which refuses to write a table while a name is unclassified) as allowed, owned by a blueprint field, or refused with the reason; any other name is refused. Abbreviations and single-dash arguments are expanded as argparse would and refused, naming the option they reach. Enforced by `validate` (`inferplane/blueprint/vllm_owned.py`), so by `check` and by the stack program; the tables' staleness against the pin is tested (`tests/blueprint/test_vllm_allowlists.py`), as is that the schema has no other verbatim pass-through. |
| Poison another blueprint's model through a shared model store: write engines, compile caches or staged weights that its replicas load and run | Every writer's grant is its own blueprint's area (`naming.store_area`: `<store>/.inferplane/{engines,hub,vllm-compile}/<blueprint>/`, with the trailing `/`, and blueprint names cannot hold `/`), in IAM policies and GCS conditions alike (`components/identity.py`); within it, engines and compile caches sit under the model's name, and the compile-cache key hashes the blueprint and the model. Replicas, engine loaders and the staging checks read only keys under their own blueprint's area. The read-only serving identity still reads the whole model store (weights are referenced by path), so isolation from *reading* another team's weights needs separate stores. Tested in `tests/components/test_identity.py` and `tests/components/serving/test_vllm_compile.py`. |
| Serve unreviewed weights through the Hub, or make two revisions share a staged folder (`hf://org/name@refs/pr/N`, a revision spelled `rev-<hash>`) | `validate` refuses a Hub pull request's ref and any revision starting with `rev-`, the name staged folders of revisions holding `/` get (`naming.staged_revision_dir`, `inferplane/blueprint/semantic_hub.py`), so each staged folder holds one revision. |
| Buy GPUs without limit by raising `nodes.max` | Mandatory rule `gpu-budget` (`policies/rules/gpu_budget.py`): `nodes.max` x `gpus_per_node` over an environment's pools and zones (spare GPUs run on those nodes) may not exceed `gpu-budget.max_gpus` (64 by default) of the platform's policy config. |
| Run an image from an ECR registry the attacker owns (any AWS account can create one in any region) | `trusted-registries` trusts no ECR registry by default; the platform's policy config lists the accounts per environment (`ecr_accounts`), each trusted only in the environment's region (`policies/rules/trusted_registries.py`). |
| Take over another blueprint's namespace or cloud names: reuse its name, or pick a name and environment whose join equals another's (`team-x` + `prod-eu` = `team-x-prod` + `eu`) | `inferplane check` of several files (the workflow passes every blueprint at once) refuses a second blueprint with a name already used and any (blueprint, environment) pair whose `<blueprint>-<environment>` equals another's, at the later file's `name` or environment key (`cross_blueprint_problems` in `inferplane/app/check.py`). |
| Use the Kubernetes API token GKE serving pods keep for Workload Identity (argoproj/argo-workflows#12781) | The token stays mounted on GKE only (`components/serving/containers.py`, `service_account`), and no RoleBinding or ClusterRoleBinding of any bundled GKE environment's program names an account whose pods mount it (`tests/app/test_service_account_rbac.py`). |
| Crash the tool, or make it exhaust the runner | Bounded input (1 MiB, 50,000 values, 32 levels, the schema's caps on models and environments); every user input, including `--out`/`--output` paths and environment variables, ends in a located error and exit 2, never in exit 3. |
| Delete files through `plan --out` | `plan --out` replaces only a directory holding its own `.inferplane-plan` marker, and never `.`, a repository root, `$HOME`, `/`, or an ancestor of the current directory. |

**Out of scope.** A platform-team member who approves a malicious change; a compromised base
branch; the security of GitHub-hosted runners and of the Actions the workflow pins by major
version (pin them by commit digest where policy requires it). The online CrossGuard pack
(`pulumi preview --policy-pack policies`) runs with the deploy runner's credentials and must
be installed from the trusted branch as well.
"""
