"""Zones that exist and GPUs that exist in them (`semantic_zones`, ``gcp_zones.json``)."""

from __future__ import annotations

from test_semantic_known_facts import BASE, diagnostics, edit

from inferplane.blueprint import catalog, semantic_zones


def test_a_zone_the_region_does_not_have() -> None:
    text = edit("zones: [us-central1-a, us-central1-b]", "zones: [us-central1-a, us-central1-g]")
    assert diagnostics(text) == [
        "bp.yaml:9:28: error: environments.prod.zones[1]: zone 'us-central1-g' does not exist "
        "in region us-central1; use one of us-central1-a, us-central1-b, us-central1-c, "
        "us-central1-f (gcp_zones.json, read from Compute Engine's zone list)"
    ]


def test_a_pool_in_a_zone_without_its_gpu() -> None:
    text = edit("zones: [us-central1-a, us-central1-b]", "zones: [us-central1-a, us-central1-f]")
    assert diagnostics(text) == [
        "bp.yaml:14:10: error: gpu_pools.l4.gpu: nvidia-l4 is not offered in us-central1-f: "
        "GKE cannot create the node pool of pool 'l4' there (machine types g2-standard-4 ... "
        "g2-standard-96); the pool runs in every zone of environment prod; give the pool zones "
        "that offer it (zones of us-central1 with nvidia-l4: us-central1-a, us-central1-b, "
        "us-central1-c), or choose another GPU"
    ]


def test_a_pool_that_names_a_zone_without_its_gpu() -> None:
    text = edit(
        "zones: [us-central1-a, us-central1-b]",
        "zones: [us-central1-a, us-central1-b, us-central1-f]",
        "    gpu: nvidia-l4\n",
        "    gpu: nvidia-h200\n    gpus_per_node: 8\n    zones: [us-central1-b, us-central1-f]\n",
    )
    assert [d for d in diagnostics(text) if "not offered" in d] == [
        "bp.yaml:16:28: error: gpu_pools.l4.zones[1]: nvidia-h200 is not offered in "
        "us-central1-f: GKE cannot create the node pool of pool 'l4' there (machine types "
        "a3-ultragpu-8g); use zones of us-central1 that offer it: us-central1-b"
    ]


def test_the_bundled_zones_pass() -> None:
    assert diagnostics(BASE) == []


def test_the_table_lists_only_zones_that_exist_and_gpus_of_the_catalog() -> None:
    data = semantic_zones.table()
    assert data["sources"]["read"] == "2026-12-01"
    every = {z for zones in data["zones"].values() for z in zones}
    for gpu, row in data["gpus"].items():
        assert catalog.gpu(gpu).gcp_machines, gpu  # a GPU GCP offers at all
        assert set(row["zones"]) <= every, gpu
    for region, zones in data["zones"].items():
        assert all(z.startswith(f"{region}-") for z in zones)


def _local_zones(zones: str) -> list[str]:
    from pathlib import Path

    from inferplane.blueprint.loader import load_text
    from inferplane.blueprint.schema import validate_document
    from inferplane.blueprint.semantic import check

    text = Path("blueprints/chat-minimal.yaml").read_text()
    old = "zones: [zone-a, zone-b]"
    assert old in text
    doc = load_text(text.replace(old, f"zones: {zones}", 1), "bp.yaml")
    return [d.format() for d in (validate_document(doc) or check(doc))]


def test_two_zones_that_end_alike_would_give_per_zone_objects_one_name() -> None:
    [found] = _local_zones("[zone-a, rack-a]")
    assert found.startswith(
        "bp.yaml:21:21: error: environments.local.zones[1]: zones 'zone-a' and 'rack-a' both "
        "end in 'a', which names each zone's node group and per-zone objects"
    ), found


def test_one_letter_zones_are_named_by_themselves() -> None:
    """Found by fuzzing: a one-letter zone made naming.zone_suffix raise (exit code 3)."""
    from inferplane.blueprint import naming

    assert naming.zone_suffix("a") == "a"
    assert naming.zone_suffix("us-east-1a") == "a"
    assert _local_zones("[a, b]") == []
