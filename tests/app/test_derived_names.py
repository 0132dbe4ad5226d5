"""Model names next to the names of generated objects no model owns (spare-GPU placeholder
Deployments, pre-pull DaemonSets, weight staging, the Redis response cache).

`blueprints/chat-minimal.yaml` with its model renamed and its pool keeping a spare GPU:
validate refuses a name that one of those objects has, at the model, and the plan of a name
that is merely close to one names no Kubernetes object (kind, namespace, name) twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_shared_cluster import identities, identity

from inferplane.app.joined_names import claims
from inferplane.app.offline import run_program
from inferplane.blueprint import naming
from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "blueprints" / "chat-minimal.yaml"
POOL = "    nodes: {min: 1, max: 4}"


def _variant(tmp_path: Path, model: str) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert "\n  chat:\n" in text and POOL in text
    text = text.replace("\n  chat:\n", f"\n  {model}:\n", 1)
    text = text.replace(POOL, f"{POOL}\n    spare_gpus: 1", 1)
    path = tmp_path / "bp.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_model_named_like_a_spare_gpu_deployment_is_refused(tmp_path: Path) -> None:
    path = _variant(tmp_path, "l4-spare-gpus-eu-west-1a")
    with pytest.raises(BlueprintError) as refused:
        load_blueprint(path)
    assert [d.format() for d in refused.value.diagnostics] == [
        f"{path}:52:5: error: models.l4-spare-gpus-eu-west-1a: model "
        "'l4-spare-gpus-eu-west-1a' has the name form l4-spare-gpus-<zone> of the Deployments "
        "holding the spare GPUs of pool 'l4': both would be the Deployment of that name; "
        "rename model 'l4-spare-gpus-eu-west-1a' (a pool P owns the Deployment names "
        "P-spare-gpus-<zone>)"
    ]


def test_a_model_named_like_a_weight_staging_job_is_refused(tmp_path: Path) -> None:
    path = _variant(tmp_path, "weights-0123abcdef")
    with pytest.raises(BlueprintError) as refused:
        load_blueprint(path)
    assert [d.format() for d in refused.value.diagnostics] == [
        f"{path}:52:5: error: models.weights-0123abcdef: model 'weights-0123abcdef' has the "
        "name form weights-<10 hex digits> of the Job and NetworkPolicy staging an hf:// "
        "source: its NetworkPolicy could be theirs; rename model 'weights-0123abcdef' (names "
        "weights-<10 hex digits> are kept for weight staging)"
    ]


@pytest.mark.parametrize(
    "model",
    [
        "l4-spare-gpus",  # the infix without a zone
        "spare-gpus-eu-west-1a",
        "l4-image-prepull",  # a DaemonSet's name: no model owns a DaemonSet
        "weights-0123abcde",  # nine hex digits
        "weights-chat",
        "l4-cache",
        "chat-response-cache",
    ],
)
def test_close_names_plan_every_object_once(tmp_path: Path, model: str) -> None:
    doc, names = load_blueprint(_variant(tmp_path, model))
    for name in names:
        recording = run_program(resolve(doc, name))
        claimed = identities(recording)
        assert [i for i, n in claimed.items() if n > 1] == []
        # The comparison covers the objects the model name came close to.
        kinds = {i[0] for i in claimed}
        assert {"apps/v1 Deployment", "batch/v1 Job", "apps/v1 DaemonSet"} <= kinds, kinds


WAKING = [
    (ROOT / "blueprints" / f"{name}.yaml", env)
    for name in ("shared-eks-chat", "shared-eks-search")
    for env in ("prod", "local")
]


@pytest.mark.parametrize(("path", "env_name"), WAKING, ids=lambda v: getattr(v, "stem", v))
def test_what_a_model_places_outside_its_namespace_is_claimed(path: Path, env_name: str) -> None:
    """`joined_names.claims` is what the program creates: every object outside the
    blueprint's namespace labelled as a model's, and every host its HTTPScaledObject routes
    besides those the model lists itself and its load balancer's assigned address, so
    cross-blueprint comparisons see them."""
    env = resolve(load_blueprint(path)[0], env_name)
    recording = run_program(env)
    claimed = claims(env)
    assert claimed, "the example has a model that wakes on its own traffic"
    owned: dict[str, list[tuple[str, ...]]] = {}
    for r in recording.resources:
        i = identity(r)
        labels = (r.inputs.get("metadata") or {}).get("labels") or {}
        model = labels.get(naming.MODEL_LABEL)
        if i is None or model is None or i[1] == naming.namespace(env.blueprint):
            continue
        owned.setdefault(model, []).append(i)
    assert sum(map(len, owned.values())) > 0
    for model in env.models:
        objects = sorted(c for c in claimed.get(model, []) if c[0] != "host")
        assert sorted(owned.get(model, [])) == objects, model
    for r in recording.resources:
        if r.type.endswith(":HTTPScaledObject"):
            model = env.models[r.inputs["metadata"]["name"]]
            # The load balancer's own address is the cloud's (or the cluster's) to assign;
            # on a kubernetes environment it is one of the in-cluster names.
            address = recording.outputs["model_endpoints"][model.name]
            routed = {h for h in r.inputs["spec"]["hosts"] if h not in model.wake_hosts}
            hosts = {c[2] for c in claimed[model.name] if c[0] == "host"}
            assert hosts <= routed and routed - hosts <= {address}
