# ruff: noqa: E501  (exact diagnostics read best unwrapped)
"""The release table (`releases.json`): its shape, what it says a driver runs, and the
checks that read it (`versions:` choices, the node driver). Exact diagnostics."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from test_semantic import BASE, diagnostics, edit

from inferplane.blueprint import catalog, defaults, releases
from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import schema

ROOT = Path(__file__).resolve().parents[2]


def test_every_pin_has_a_version_and_a_source() -> None:
    table = releases.table()
    for key, row in {**table["pins"], **table["bundled"]}.items():
        assert row["version"], key
        assert row["source"].strip(), key


def test_every_helper_image_is_pinned_by_tag_with_a_source() -> None:
    for name, row in releases.table()["images"].items():
        assert ":" in row["image"].rsplit("/", 1)[-1] and not row["image"].endswith(":latest"), name
        assert row["source"].strip(), name
    assert releases.image("valkey") == defaults.VALKEY_IMAGE


def test_the_pins_are_the_defaults_and_the_schemas_versions() -> None:
    assert releases.pinned_versions() == defaults.VERSIONS
    assert set(schema()["$defs"]["versions"]["properties"]) == set(releases.pinned_versions())


@pytest.mark.parametrize("engine", releases.ENGINES)
def test_every_engine_release_has_its_cuda_min_driver_and_source(engine: str) -> None:
    rows = releases.engine_releases(engine)
    assert [r.release for r in rows] == sorted(
        (r.release for r in rows), key=lambda v: tuple(int(n) for n in v.strip("v").split("."))
    )
    for row in rows:
        assert row.cuda.count(".") == 2, row
        assert all(part.isdigit() for part in row.min_driver.split(".")), row
        assert row.source.strip(), row
    assert releases.engine_release(engine, defaults.VERSIONS[engine]) is not None


@pytest.mark.parametrize("engine", releases.ENGINES)
def test_the_schema_names_every_release_of_the_table(engine: str) -> None:
    description = schema()["$defs"]["versions"]["properties"][engine]["description"]
    listed = ", ".join(r.release for r in releases.engine_releases(engine))
    assert f"releases.json`: {listed})" in description


def test_every_triton_row_names_the_tensorrt_the_catalog_takes_from_it() -> None:
    """The TensorRT of a supported release is its row's (one place); the catalog's own rows
    are only of earlier releases, and a release between rows takes the one before it."""
    rows = releases.engine_releases("triton")
    for row in rows:
        assert row.tensorrt and row.tensorrt.split(".")[0].isdigit(), row.release
        assert catalog.tensorrt_version(row.release) == row.tensorrt, row.release
    supported = {row.release for row in rows}
    assert not supported & {release for release, _ in catalog._TENSORRT_BEFORE_THE_TABLE}
    assert catalog.tensorrt_version("25.07") == releases.engine_release("triton", "25.06").tensorrt


def test_every_node_driver_row_has_a_branch_and_a_source() -> None:
    for cloud, rows in releases.table()["node_drivers"].items():
        if cloud.startswith("$"):
            continue
        for row in rows:
            assert row["branch"].isdigit() and row["kubernetes"] and row["source"].strip()


def test_the_gke_installer_settings_have_a_branch_and_a_source() -> None:
    assert releases.cos_installer_branch("default").branch == "535"
    assert releases.cos_installer_branch("latest").branch == "580"
    for setting in ("default", "latest"):
        assert "observation" in releases.cos_installer_branch(setting).source


@pytest.mark.parametrize(
    ("engine", "release", "branch", "runs"),
    [
        ("triton", "25.08", "580", True),  # CUDA 13.0.0: CUDA 13.x needs R580
        ("triton", "25.08", "575", False),  # its notes say 575, but 575 is a CUDA 12.9 driver
        ("triton", "25.08", "570", False),  # below 580, and R570 is no forward-compatible branch
        ("triton", "26.02", "575", False),  # CUDA 13.1.1: not on R575 either
        ("triton", "26.02", "580", True),
        ("triton", "25.06", "575", True),  # CUDA 12.9.1: its notes' 575 holds
        (
            "triton",
            "25.08",
            "535",
            None,
        ),  # forward-compatible from 535.86: the branch alone cannot tell
        ("triton", "25.03", "570", True),  # needs 560
        ("triton", "26.07", "580", True),  # CUDA 13.3.1: CUDA 13.x needs R580
        ("triton", "26.07", "575", False),  # its notes name no forward-compatible branch
        ("vllm", "v0.10.2", "570", None),  # needs 570.124.06
        ("vllm", "v0.10.2", "580", True),
        ("vllm", "v0.10.2", "550", False),
        ("vllm", "v0.33.0", "570", False),  # CUDA 13.x needs R580 (minor version compatibility)
        ("vllm", "v0.33.0", "580", True),
    ],
)
def test_runs_on(engine: str, release: str, branch: str, runs: bool | None) -> None:
    row = releases.engine_release(engine, release)
    assert row is not None
    assert releases.runs_on(row, branch) is runs


def test_eks_nodes_of_the_default_kubernetes_bring_the_580_driver() -> None:
    node = releases.node_driver("aws", defaults.KUBERNETES_VERSION)
    assert node is not None and node.branch == "580"
    assert releases.node_driver("gcp", defaults.KUBERNETES_VERSION) is None


def test_versions_choose_only_a_release_of_the_table() -> None:
    text = BASE + "versions: {vllm: v0.11.0, triton: '25.07'}\n"
    assert diagnostics(text) == [
        "bp.yaml:35:35: error: versions.triton: Triton 25.07 is not a supported release (the release table lists 25.03, 25.06, 25.08, 25.10, 26.02, 26.07); use one of them, or remove versions.triton for the tested 26.02",
        "bp.yaml:35:18: error: versions.vllm: vLLM v0.11.0 is not a supported release (the release table lists v0.10.2, v0.33.0); use one of them, or remove versions.vllm for the tested v0.33.0",
    ]


def test_versions_may_choose_another_release_of_the_table() -> None:
    assert diagnostics(BASE + "versions: {triton: '25.06', vllm: v0.10.2}\n") == []


@pytest.fixture
def old_eks_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """EKS nodes of the 570 branch, which the AL2023 NVIDIA AMIs carried before the 580
    rollout (awslabs/amazon-eks-ami issue #2379: "AL2023, which already use the 570
    branch", 2025-08-19)."""
    table: dict[str, Any] = copy.deepcopy(releases.table())
    table["node_drivers"]["aws"][0]["branch"] = "570"
    monkeypatch.setattr(releases, "table", lambda: table)


CHAT_ON_570 = "bp.yaml:25:13: error: models.chat.server: vLLM v0.33.0 is built on CUDA 13.0.1 and needs NVIDIA driver 580 or later, but the GPU nodes of pool l4 in stg (the EKS-optimized AL2023 NVIDIA AMI of Kubernetes 1.33) run driver branch R570; set versions.vllm to a release that runs on R570: v0.10.2 (with driver 570.124.06 or later)"
RANK_ON_570 = "Triton {release} is built on CUDA {cuda} and needs NVIDIA driver 580 or later, but the GPU nodes of pool l4 in stg (the EKS-optimized AL2023 NVIDIA AMI of Kubernetes 1.33) run driver branch R570; {change} that runs on R570: 25.03"


@pytest.mark.usefixtures("old_eks_driver")
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            BASE,
            "bp.yaml:30:13: error: models.rank.server: "
            + RANK_ON_570.format(
                release="26.02", cuda="13.1.1", change="set versions.triton to a release"
            ),
            id="pinned-release",
        ),
        pytest.param(
            BASE + "versions: {triton: '26.02'}\n",
            "bp.yaml:35:20: error: versions.triton: "
            + RANK_ON_570.format(
                release="26.02", cuda="13.1.1", change="set versions.triton to a release"
            ),
            id="chosen-release",
        ),
        pytest.param(
            edit(
                "    tensorrt: {}\n",
                "    image: nvcr.io/nvidia/tritonserver:25.10-py3\n    tensorrt: {}\n",
            ),
            "bp.yaml:33:12: error: models.rank.image: "
            + RANK_ON_570.format(
                release="25.10", cuda="13.0.2", change="use the image of a release"
            ),
            id="model-image",
        ),
    ],
)
def test_a_release_the_nodes_driver_cannot_run_is_refused(text: str, expected: str) -> None:
    assert diagnostics(text) == [CHAT_ON_570, expected]


@pytest.mark.usefixtures("old_eks_driver")
def test_a_release_the_old_driver_runs_passes() -> None:
    """v0.10.2 needs 570.124.06, within the branch: not refused on the branch alone."""
    assert diagnostics(BASE + "versions: {triton: '25.03', vllm: v0.10.2}\n") == []


@pytest.mark.parametrize("path", sorted((ROOT / "blueprints").glob("*.yaml")), ids=lambda p: p.name)
def test_bundled_blueprints_choose_releases_their_nodes_run(path: Path) -> None:
    found = [d.format() for d in check(load_text(path.read_text(), str(path)))]
    assert not [d for d in found if "NVIDIA driver" in d or "supported release" in d]


def test_the_readme_states_the_pinned_engines_minimum_drivers() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    for engine, name in (("triton", "Triton"), ("vllm", "vLLM")):
        row = releases.engine_release(engine, defaults.VERSIONS[engine])
        assert row is not None
        assert f"{row.min_driver} for {name} {row.release}" in readme


def test_a_reduced_precision_engine_on_tensorrt_11_is_a_warning_at_its_precision() -> None:
    """26.07's TensorRT 11.1 takes no precision flag (strongly typed networks only): the ONNX
    must already be fp16, which validation cannot see, so it warns where the release or the
    precision is chosen; TensorRT 10 releases and fp32 engines have nothing to say."""
    from inferplane.blueprint.checks.semantic_vllm import advisories

    def warnings(text: str) -> list[str]:
        found = [d.format() for d in advisories(load_text(text, "bp.yaml"))]
        return [w for w in found if "TensorRT" in w]

    on_11 = BASE + "versions: {triton: '26.07'}\n"
    assert warnings(on_11) == [
        "bp.yaml:35:20: warning: versions.triton: model rank is fp16, and Triton 26.07 builds its engine with TensorRT 11.1, which takes no precision flag: the ONNX model itself must be in fp16 (the build stops if it is not); export or convert it in fp16 (python -m modelopt.onnx.autocast --onnx_path model.onnx --low_precision_type fp16), or set versions.triton to a release whose TensorRT takes precision flags: 25.10, 26.02"
    ]
    int8 = edit("    tensorrt: {}\n", "    tensorrt: {}\n    precision: int8\n", on_11)
    assert warnings(int8) == [
        "bp.yaml:34:16: warning: models.rank.precision: model rank is int8, and Triton 26.07 builds its engine with TensorRT 11.1, which takes no precision flag: the ONNX model itself must be in int8 (the build stops if it is not); export or convert it in int8 (quantize it with Q/DQ nodes, e.g. with TensorRT Model Optimizer; the layers it leaves unquantized run in the types the ONNX model gives them), or set versions.triton to a release whose TensorRT takes precision flags: 25.10, 26.02"
    ]
    assert (
        warnings(edit("    tensorrt: {}\n", "    tensorrt: {}\n    precision: fp32\n", on_11)) == []
    )
    assert warnings(BASE) == []  # the pin, 26.02: TensorRT 10 takes the precision flags


def _typed_warnings(text: str) -> list[str]:
    from inferplane.blueprint.checks.semantic_vllm import advisories

    doc = load_text(text, "bp.yaml")
    assert check(doc) == []  # each case is a valid blueprint
    return [d.format() for d in advisories(doc) if "TensorRT 11" in d.message]


def test_the_tensorrt_11_warning_follows_the_engine_build_not_the_tensorrt_section() -> None:
    """`backend: tensorrt` alone builds an engine too (resolve_model gives it default
    settings), so it warns like a `tensorrt` section; ONNX Runtime builds none, and a
    TensorRT-LLM model runs the trtllm image, whose 26.07 TensorRT is 10.14
    (releases.json, 26.07 row: server r26.07 docs/introduction/compatibility.md)."""
    on_11 = BASE + "versions: {triton: '26.07'}\n"
    backend_only = edit("    tensorrt: {}\n", "    backend: tensorrt\n", on_11)
    assert _typed_warnings(backend_only) == [
        "bp.yaml:35:20: warning: versions.triton: model rank is fp16, and Triton 26.07 builds its engine with TensorRT 11.1, which takes no precision flag: the ONNX model itself must be in fp16 (the build stops if it is not); export or convert it in fp16 (python -m modelopt.onnx.autocast --onnx_path model.onnx --low_precision_type fp16), or set versions.triton to a release whose TensorRT takes precision flags: 25.10, 26.02"
    ]
    assert _typed_warnings(edit("    tensorrt: {}\n", "    backend: onnxruntime\n", on_11)) == []

    from test_semantic_trtllm import BASE as TRTLLM

    assert _typed_warnings(TRTLLM + "versions: {triton: '26.07'}\n") == []


def test_a_non_ngc_image_of_an_engine_by_backend_alone_needs_its_base_release() -> None:
    """The engine of `backend: tensorrt` is built like that of a `tensorrt` section, with the
    TensorRT of the model's release: a custom image must name it."""
    text = edit(
        "    tensorrt: {}\n",
        "    backend: tensorrt\n    image: registry.example.com/ml/triton:1.4\n",
    )
    assert diagnostics(text) == [
        'bp.yaml:34:12: error: models.rank.image: registry.example.com/ml/triton:1.4 is not an NGC Triton image, so the TensorRT it runs (which must build the model\'s engine) is unknown; add base_release: "YY.MM", the NGC release of the nvcr.io/nvidia/tritonserver image it is built from (the engine is then built with nvcr.io/nvidia/tensorrt:<base_release>-py3)'
    ]


@pytest.mark.parametrize("stack", ["trtllm", "vllm"])
def test_an_onnx_engine_is_not_served_by_another_stacks_image(stack: str) -> None:
    """The TensorRT-LLM and vLLM images of a release run a TensorRT of their own (server r26.07
    docs/introduction/compatibility.md: 26.07's trtllm image is TensorRT 10.14.1.48, its
    TensorRT image 11.1), so an engine built for the release's Triton would not load there."""
    image = f"nvcr.io/nvidia/tritonserver:26.07-{stack}-python-py3"
    text = edit("    tensorrt: {}\n", f"    tensorrt: {{}}\n    image: {image}\n")
    assert diagnostics(text) == [
        f"bp.yaml:34:12: error: models.rank.image: {image} is NGC 26.07's image of another serving stack, which brings its own TensorRT, if any, not the one nvcr.io/nvidia/tensorrt:26.07-py3 builds the model's engine with (26.07's trtllm image runs TensorRT 10.14, its TensorRT image 11.1), so the engine would not load; serve it with nvcr.io/nvidia/tritonserver:26.07-py3, or remove image"
    ]
    plain = edit(
        "    tensorrt: {}\n", "    tensorrt: {}\n    image: nvcr.io/nvidia/tritonserver:26.07-py3\n"
    )
    assert not [d for d in diagnostics(plain) if "another serving stack" in d]


def test_a_digest_pinned_image_of_another_stack_is_refused_too() -> None:
    """An image pinned by digest is no NGC tag to `ngc_triton_release`, so base_release names
    its release; the stack in its tag still runs its own TensorRT."""
    image = "nvcr.io/nvidia/tritonserver:26.07-trtllm-python-py3@sha256:" + "a" * 64
    text = edit(
        "    tensorrt: {}\n", f'    tensorrt: {{}}\n    image: {image}\n    base_release: "26.07"\n'
    )
    assert [d for d in diagnostics(text) if "another serving stack" in d] == [
        f"bp.yaml:34:12: error: models.rank.image: {image} is NGC 26.07's image of another serving stack, which brings its own TensorRT, if any, not the one nvcr.io/nvidia/tensorrt:26.07-py3 builds the model's engine with (26.07's trtllm image runs TensorRT 10.14, its TensorRT image 11.1), so the engine would not load; serve it with nvcr.io/nvidia/tritonserver:26.07-py3, or remove image"
    ]


def test_the_typed_warning_of_a_models_own_image_says_to_change_the_image() -> None:
    text = edit(
        "    tensorrt: {}\n", "    tensorrt: {}\n    image: nvcr.io/nvidia/tritonserver:26.07-py3\n"
    )
    [warning] = _typed_warnings(text)
    assert warning.startswith("bp.yaml:34:12: warning: models.rank.image: model rank is fp16")
    assert warning.endswith(
        "or use the image of a release whose TensorRT takes precision flags: 25.10, 26.02"
    )


def test_the_router_pins_are_the_tables() -> None:
    """The llm-d router's chart and image, and the InferencePool CRD beside it, are pinned in
    the one table; the CRD copy the stack applies is of that release."""
    from inferplane.components.serving.routing import router, router_crds

    assert router.ROUTER_VERSION == releases.bundled("llm_d_router") == "v0.10.0"
    table = releases.table()
    for name, row in table["bundled"].items():  # each comes with a pin or another bundle
        assert row["with"] in {**table["pins"], **table["bundled"]}, name
    assert router.EPP_IMAGE["tag"] == router.ROUTER_VERSION
    gaie = releases.bundled("gateway_api_inference_extension")
    assert f"gateway-api-inference-extension {gaie}" in " ".join(router_crds.__doc__.split())
