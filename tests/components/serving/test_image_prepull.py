"""`ImagePrePull`: each GPU pool's DaemonSet pulls, on every node of the pool, the exact
image of every container of every serving pod placed there; it holds no GPU, no token,
passes Pod Security ``restricted`` and is a valid DaemonSet. Checked over every example
blueprint in blueprints/ (the reference one included), in each of its environments."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from pod_security import ints, violations
from serving_fixtures import DEPLOYMENT, JOB

from inferplane.app.offline import Recording
from inferplane.blueprint import defaults, naming
from inferplane.blueprint.loading.loader import load
from inferplane.components.serving.scaling.image_prepull import NO_OP, ordered_images

DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
ROOT = Path(__file__).resolve().parents[3]
BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml"))
CASES = [(p, env) for p in BLUEPRINTS for env in load(p).data["environments"]]


def images(pod: dict[str, Any], key: str) -> list[str]:
    return [c["image"] for c in pod.get(key) or []]


def daemon_sets(rec: Recording) -> dict[str, dict[str, Any]]:
    """Pool -> its pre-pull DaemonSet's inputs."""
    out = {}
    for r in rec.of_type(DAEMON_SET):
        if r.get("metadata", "labels", naming.ROLE_LABEL) == naming.IMAGE_PREPULL_ROLE:
            out[r.get("metadata", "labels", naming.POOL_LABEL)] = ints(r.inputs)
    return out


@pytest.mark.parametrize(("path", "env"), CASES, ids=[f"{p.stem}-{e}" for p, e in CASES])
def test_every_serving_image_is_pulled_by_its_pools_daemon_set(
    path: Path, env: str, offline_plan: Callable[[Path, str], Recording]
) -> None:
    rec = offline_plan(path, env)
    pulled = {pool: images(ds["spec"]["template"]["spec"], "initContainers")
              for pool, ds in daemon_sets(rec).items()}  # fmt: skip
    servers = [
        r for r in rec.of_type(DEPLOYMENT) if r.get("metadata", "labels", naming.MODEL_LABEL)
    ]
    assert servers
    for server in servers:
        pool = server.get("metadata", "labels", naming.POOL_LABEL)
        pod = server.get("spec", "template", "spec")
        for image in images(pod, "initContainers") + images(pod, "containers"):
            assert image in pulled[pool], f"{server.name}: {image} not pre-pulled on {pool}"
    # Nothing else: engine builds run once, and a pool without models has no DaemonSet.
    served = {
        image
        for s in servers
        for key in ("initContainers", "containers")
        for image in images(s.get("spec", "template", "spec"), key)
    }
    for pool, pulled_here in pulled.items():
        assert len(pulled_here) == len(set(pulled_here)), f"{pool}: an image twice"
        assert set(pulled_here) <= served
    build_only = {
        image
        for job in rec.of_type(JOB)
        for image in images(job.get("spec", "template", "spec"), "containers")
    } - served
    assert not build_only & {i for p in pulled.values() for i in p}
    assert set(pulled) == {s.get("metadata", "labels", naming.POOL_LABEL) for s in servers}


@pytest.mark.parametrize(("path", "env"), CASES, ids=[f"{p.stem}-{e}" for p, e in CASES])
def test_the_daemon_set_runs_on_its_pool_only_and_holds_nothing(
    path: Path, env: str, offline_plan: Callable[[Path, str], Recording]
) -> None:
    for pool, ds in daemon_sets(offline_plan(path, env)).items():
        assert ds["metadata"]["name"] == f"{pool}-image-prepull"
        assert ds["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
        kubernetes_validate.validate(ds, "1.33", strict=True)
        pod = ds["spec"]["template"]["spec"]
        # Its own blueprint's nodes only: pool names are unique within one blueprint.
        blueprint = ds["metadata"]["labels"]["app.kubernetes.io/part-of"]
        assert pod["nodeSelector"] == {naming.POOL_LABEL: pool, naming.BLUEPRINT_LABEL: blueprint}
        assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                "effect": "NoSchedule"} in pod["tolerations"]  # fmt: skip
        assert pod["automountServiceAccountToken"] is False
        assert violations(pod, {}) == []
        for c in pod["initContainers"] + pod["containers"]:
            assert not any(k.startswith("nvidia.com/") for k in c["resources"]["requests"])
            assert not any(k.startswith("nvidia.com/") for k in c["resources"].get("limits", {}))
            assert c["imagePullPolicy"] == "IfNotPresent"
        assert all(c["command"] == NO_OP for c in pod["initContainers"])
        # CUDA images default to every GPU of the node; a pull container gets none.
        assert all(
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"} in c["env"]
            for c in pod["initContainers"]
        )
        assert images(pod, "containers") == [defaults.PAUSE_IMAGE]


def test_the_reference_pools_pull_their_servers_and_the_store_cli(reference_recording) -> None:
    staging = daemon_sets(reference_recording("staging"))
    l4 = images(staging["l4"]["spec"]["template"]["spec"], "initContainers")
    assert defaults.AWS_CLI_IMAGE in l4
    assert any(i.startswith("vllm/vllm-openai:") for i in l4)
    assert any(i.startswith("nvcr.io/nvidia/tritonserver:") for i in l4)
    prod = daemon_sets(reference_recording("prod"))
    assert defaults.GCLOUD_IMAGE in images(
        prod["h100"]["spec"]["template"]["spec"], "initContainers"
    )


def test_custom_images_are_pulled_last_and_repeats_once() -> None:
    vllm = defaults.VLLM_IMAGE.format(version="v0.10.2")
    custom = "123456789012.dkr.ecr.us-east-1.amazonaws.com/acme/triton:25.08-acme"
    assert ordered_images([custom, defaults.AWS_CLI_IMAGE, vllm, defaults.AWS_CLI_IMAGE]) == (
        defaults.AWS_CLI_IMAGE,
        vllm,
        custom,
    )
