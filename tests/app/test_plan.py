"""`inferplane plan`: the tree it prints and the files it writes, from an offline Recording."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import kubernetes_validate
import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from inferplane.app import plan, plan_output
from inferplane.app.offline import SECRET, Recording, run_callable, run_program
from inferplane.app.offline_mocks import CloudFacts
from inferplane.blueprint.model import Environment

FACTS = CloudFacts(cloud="aws", region="us-east-1", zones=("us-east-1a",))
TOKEN = "hf_plan_test_token_93b2"
PBTXT = 'name: "ranker"\nbackend: "tensorrt"\nmax_batch_size: 32\n'


def serving_program() -> None:
    """A miniature of what the stack registers for one model on one cluster."""

    class Model(pulumi.ComponentResource):
        def __init__(self, name: str) -> None:
            super().__init__("inferplane:test:Model", name)
            provider = k8s.Provider(f"{name}-k8s", kubeconfig="{}", opts=self.child)
            on = pulumi.ResourceOptions(parent=self, provider=provider)
            meta = {"name": "ranker", "namespace": "shop"}
            k8s.core.v1.Namespace(f"{name}-ns", metadata={"name": "shop"}, opts=on)
            k8s.core.v1.Secret(
                f"{name}-secret",
                metadata={"name": "ranker-secrets", "namespace": "shop"},
                string_data={"HF_TOKEN": pulumi.Output.secret(TOKEN)},
                opts=on,
            )
            k8s.core.v1.ConfigMap(
                f"{name}-config",
                metadata={
                    "name": "ranker-triton",
                    "namespace": "shop",
                    "labels": {"inferplane.dev/model": "ranker"},
                },
                data={"config.pbtxt": PBTXT},
                opts=on,
            )
            labels = {"app": "ranker"}
            deployment = k8s.apps.v1.Deployment(
                f"{name}-deploy",
                metadata=meta,
                spec={
                    "replicas": 2,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "nodeSelector": {
                                "topology.kubernetes.io/zone": "us-east-1a",
                                "inferplane.dev/pool": "l4",
                            },
                            "containers": [
                                {
                                    "name": "triton",
                                    "image": "nvcr.io/nvidia/tritonserver:25.08-py3",
                                    "resources": {"limits": {"nvidia.com/gpu": 1}},
                                }
                            ],
                        },
                    },
                },
                opts=on,
            )
            k8s.core.v1.Service(
                f"{name}-svc",
                metadata=meta,
                spec={"selector": labels, "ports": [{"name": "http", "port": 8000}]},
                opts=pulumi.ResourceOptions.merge(
                    on,
                    pulumi.ResourceOptions(
                        depends_on=[deployment],
                        custom_timeouts=pulumi.CustomTimeouts(create="40m"),
                        delete_before_replace=True,
                        ignore_changes=["spec.ports"],
                    ),
                ),
            )
            k8s.apiextensions.CustomResource(
                f"{name}-scaler",
                api_version="keda.sh/v1alpha1",
                kind="ScaledObject",
                metadata=meta,
                spec={
                    "scaleTargetRef": {"name": "ranker"},
                    "minReplicaCount": 2,
                    "maxReplicaCount": 6,
                },
                opts=on,
            )
            k8s.helm.v3.Release(
                f"{name}-keda",
                name="keda",
                chart="keda",
                version="2.20.2",
                namespace="keda",
                repository_opts={"repo": "https://kedacore.github.io/charts"},
                values={"resources": {"operator": {"limits": {"cpu": 1}}}},
                opts=on,
            )
            self.register_outputs({})

        @property
        def child(self) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self)

    Model("shop")


@pytest.fixture(scope="session")
def recording() -> Recording:
    return run_callable(serving_program, stack="staging", facts=FACTS, config={})


def test_plan_json_lists_every_resource_with_parent_names_and_tidy_inputs(
    recording: Recording,
) -> None:
    doc = plan_output.plan_document(recording, "shop", "staging")
    assert doc["blueprint"] == "shop" and doc["environment"] == "staging"
    rows = doc["resources"]
    assert len(rows) == len(recording) == 9
    assert rows[0] == {
        "type": "inferplane:test:Model",
        "name": "shop",
        "parent": None,
        "depends_on": [],
        "provider": None,
        "options": {},
        "inputs": {},
    }
    assert {r["parent"] for r in rows[1:]} == {"shop"}
    deploy = next(r for r in rows if r["type"] == "kubernetes:apps/v1:Deployment")
    assert deploy["inputs"]["spec"]["replicas"] == 2 and isinstance(
        deploy["inputs"]["spec"]["replicas"], int
    )
    secret = next(r for r in rows if r["type"] == "kubernetes:core/v1:Secret")
    assert secret["inputs"]["stringData"] == {"HF_TOKEN": SECRET}
    assert deploy["provider"] == "shop-k8s" and deploy["options"] == {}
    # What `pulumi up` will do with the Service: wait for the Deployment, then its options.
    service = next(r for r in rows if r["type"] == "kubernetes:core/v1:Service")
    assert service["depends_on"] == ["shop-deploy"]
    assert service["options"] == {
        "custom_timeouts": {"create": "40m"},
        "delete_before_replace": True,
        "ignore_changes": ["spec.ports"],
    }
    # siblings sorted by (type, name): stable between runs
    children = [(r["type"], r["name"]) for r in rows[1:]]
    assert children == sorted(children)


def test_manifests_are_complete_valid_objects_in_apply_order(recording: Recording) -> None:
    named = plan_output.manifests(recording)
    assert [name for name, _ in named] == [
        "01-namespace-cluster-shop.yaml",
        "02-secret-shop-ranker-secrets.yaml",
        "03-configmap-shop-ranker-triton.yaml",
        "04-service-shop-ranker.yaml",
        "05-deployment-shop-ranker.yaml",
        "06-scaledobject-shop-ranker.yaml",
    ]
    for name, obj in named:
        assert list(obj)[:3] == ["apiVersion", "kind", "metadata"], name
        if obj["kind"] != "ScaledObject":
            kubernetes_validate.validate(obj, "1.33", strict=True)
    scaler = dict(named)["06-scaledobject-shop-ranker.yaml"]
    assert scaler["apiVersion"] == "keda.sh/v1alpha1"
    assert scaler["spec"]["minReplicaCount"] == 2  # camelCase kept, a whole number
    # a YAML round trip gives the same object
    text = plan_output.dump_yaml(scaler)
    assert yaml.safe_load(text) == scaler


def test_helm_releases_and_triton_configs(recording: Recording) -> None:
    assert plan_output.helm_releases(recording) == [
        (
            "keda.yaml",
            {
                "name": "keda",
                "chart": "keda",
                "repository": "https://kedacore.github.io/charts",
                "version": "2.20.2",
                "namespace": "keda",
                "values": {"resources": {"operator": {"limits": {"cpu": 1}}}},
            },
        )
    ]
    assert list(plan_output.triton_configs(recording)) == [("ranker/config.pbtxt", PBTXT)]


def test_tree_shows_parents_and_key_facts(recording: Recording) -> None:
    lines = plan.render_tree(recording, ("+- ", "`- ", "|  ", "   "))
    assert lines[0] == "inferplane:test:Model  shop"
    assert lines[-1].startswith("`- pulumi:providers:kubernetes  shop-k8s")
    deploy = next(line for line in lines if "apps/v1:Deployment" in line)
    assert deploy == (
        "+- kubernetes:apps/v1:Deployment  shop-deploy  [namespace=shop name=ranker replicas=2 "
        "zone=us-east-1a pool=l4 gpus=nvidia.com/gpu=1]"
    )
    scaler = next(line for line in lines if "ScaledObject" in line)
    assert "min=2 max=6" in scaler
    helm = next(line for line in lines if "helm.sh" in line)
    assert "chart=keda version=2.20.2 namespace=keda" in helm
    counts = plan.render_counts(recording)
    assert counts[0] == "Resources by type:" and counts[-1] == "  9  total"


def test_tree_draws_nested_levels() -> None:
    def nested() -> None:
        outer = pulumi.ComponentResource("inferplane:test:Outer", "a")
        inner = pulumi.ComponentResource(
            "inferplane:test:Inner", "b", opts=pulumi.ResourceOptions(parent=outer)
        )
        pulumi.ComponentResource(
            "inferplane:test:Leaf", "c", opts=pulumi.ResourceOptions(parent=inner)
        )
        pulumi.ComponentResource(
            "inferplane:test:Leaf", "d", opts=pulumi.ResourceOptions(parent=outer)
        )

    rec = run_callable(nested, stack="s", facts=FACTS, config={})
    assert plan.render_tree(rec, ("├─ ", "└─ ", "│  ", "   ")) == [
        "inferplane:test:Outer  a",
        "├─ inferplane:test:Inner  b",
        "│  └─ inferplane:test:Leaf  c",
        "└─ inferplane:test:Leaf  d",
    ]


def test_write_atomically_replaces_a_previous_plan_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    assert plan_output.write_atomically(out, [("plan.json", "{}"), ("helm/a.yaml", "a: 1\n")]) == [
        "helm/a.yaml",
        "plan.json",
    ]
    plan_output.write_atomically(out, [("plan.json", '{"v": 2}')])
    assert sorted(p.name for p in out.rglob("*")) == [".inferplane-plan", "plan.json"]  # old gone
    assert [p.name for p in tmp_path.iterdir()] == ["plan"]  # no temporary left behind

    def failing():
        yield "plan.json", "{}"
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        plan_output.write_atomically(out, failing())
    assert (out / "plan.json").read_text() == '{"v": 2}'
    assert [p.name for p in tmp_path.iterdir()] == ["plan"]

    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep")
    with pytest.raises(plan_output.OutputDirError, match="not a previous plan"):
        plan_output.write_atomically(precious, [("plan.json", "{}")])
    assert (precious / "notes.txt").read_text() == "keep"


def test_files_are_deterministic(recording: Recording) -> None:
    again = run_callable(serving_program, stack="staging", facts=FACTS, config={})
    first = list(plan_output.files(recording, "shop", "staging"))
    assert first == list(plan_output.files(again, "shop", "staging"))
    assert TOKEN not in json.dumps(first)


def _args(blueprint: Path, env: str, out: Path | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    argv = [str(blueprint), "--env", env] + (["--out", str(out)] if out else [])
    return parser.parse_args(argv)


def test_run_rejects_an_unknown_environment_and_writes_nothing(
    reference_blueprint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert plan.run(_args(reference_blueprint, "qa", out)) == 2
    err = capsys.readouterr().err
    assert "no environment named 'qa'" in err and "staging, prod" in err
    assert not out.exists()


def test_the_reference_plan_is_byte_identical_between_runs(
    reference_env: Callable[[str], Environment],
    reference_recording: Callable[[str], Recording],
) -> None:
    env = reference_env("prod")
    again = run_program(env)
    first = list(plan_output.files(reference_recording("prod"), env.blueprint, env.name))
    assert first == list(plan_output.files(again, env.blueprint, env.name))
    assert {path.split("/")[0] for path, _ in first} == {"plan.json", "manifests", "helm", "triton"}


def test_run_checks_out_before_planning(
    reference_blueprint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("keep")
    assert plan.run(_args(reference_blueprint, "prod", tmp_path)) == 2
    captured = capsys.readouterr()
    assert "not a previous plan" in captured.err and captured.out == ""
