"""Zones that exist and GPUs that exist in them (`semantic_zones`, ``gcp_zones.json``)."""

from __future__ import annotations

from test_semantic_known_facts import BASE, diagnostics, edit

from inferplane.blueprint import catalog
from inferplane.blueprint.checks import semantic_zones


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

    from inferplane.blueprint.checks.semantic import check
    from inferplane.blueprint.loading.loader import load_text
    from inferplane.blueprint.loading.schema import validate_document

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


def _aws(region: str, zones: str, pool_zones: str | None = None) -> str:
    """BASE on AWS in `region` with `zones` (and the pool's own `pool_zones`)."""
    text = edit(
        "    cloud: gcp\n    project: demo-prod\n    region: us-central1\n"
        "    zones: [us-central1-a, us-central1-b]\n    model_store: gs://models-usc1/\n",
        f"    cloud: aws\n    region: {region}\n    zones: {zones}\n"
        "    model_store: s3://models-demo/\n",
    )
    if pool_zones is not None:
        text = edit(
            "    gpu: nvidia-l4\n", f"    gpu: nvidia-l4\n    zones: {pool_zones}\n", text=text
        )
    return text


def test_an_aws_zone_no_account_has_is_refused_at_its_line() -> None:
    assert diagnostics(_aws("us-east-1", "[us-east-1a, us-east-1g]")) == [
        "bp.yaml:8:25: error: environments.prod.zones[1]: zone 'us-east-1g' does not exist in "
        "region us-east-1: no AWS account has it; use one of us-east-1a, us-east-1b, "
        "us-east-1c, us-east-1d, us-east-1e, us-east-1f (aws_zones.json, read from AWS's list "
        "of Availability Zone IDs on 2026-12-04)"
    ]


def test_a_pool_s_own_aws_zone_is_checked_too() -> None:
    text = _aws("us-west-1", "[us-west-1a, us-west-1b]", "[us-west-1d]")
    assert [d for d in diagnostics(text) if "does not exist" in d] == [
        "bp.yaml:14:13: error: gpu_pools.l4.zones[0]: zone 'us-west-1d' does not exist in "
        "region us-west-1: no AWS account has it; use one of us-west-1a, us-west-1b, "
        "us-west-1c (aws_zones.json, read from AWS's list of Availability Zone IDs on "
        "2026-12-04)"
    ]


def test_every_letter_some_account_has_is_accepted() -> None:
    # us-east-1 has six AZ IDs (use1-az1 to use1-az6); Tokyo's accounts see a, c and d
    # (apne1-az1 to apne1-az4); ca-central-1's third AZ is cac1-az4, named d.
    for region, zones in [
        ("us-east-1", "[us-east-1e, us-east-1f]"),
        ("ap-northeast-1", "[ap-northeast-1a, ap-northeast-1c, ap-northeast-1d]"),
        ("ca-central-1", "[ca-central-1a, ca-central-1d]"),
    ]:
        found = [d for d in diagnostics(_aws(region, zones)) if "does not exist" in d]
        assert found == [], (region, found)


def test_a_region_the_aws_table_does_not_list_is_not_checked() -> None:
    assert semantic_zones.aws_region_zones("us-gov-east-1") is None
    text = _aws("us-gov-east-1", "[us-gov-east-1a, us-gov-east-1k]")
    assert [d for d in diagnostics(text) if "zone" in d] == []


def test_the_aws_table_gives_each_region_the_letters_of_its_az_ids() -> None:
    rows = semantic_zones.aws_table()["zones"]
    for region, row in rows.items():
        top = max(int(az.rsplit("-az", 1)[1]) for az in row["az_ids"])
        assert row["names"] == [f"{region}{chr(ord('a') + i)}" for i in range(top)], region
    assert set(semantic_zones.aws_table()["independently_mapped"]) <= set(rows)
