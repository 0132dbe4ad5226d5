"""`gpu_pools.<pool>.capacity` as an ordered list of capacity sources: the schema's shapes,
the semantic checks (cloud, order, zones, Capacity Block forms) with exact messages, and the
resolved `GpuPool.capacity_sources`."""

from __future__ import annotations

from test_semantic import diagnostics
from test_semantic import edit as edit_base

from inferplane.blueprint.loading import loader
from inferplane.blueprint.model import CapacitySource
from inferplane.blueprint.resolution.resolve import resolve

BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  prod:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    model_store: s3://models-use1/
    cluster: {create: true}
    overrides:
      gpu_pools:
        h100:
          capacity:
            - {reservation: cr-0123456789abcdef0, zone: us-east-1a}
            - capacity_block: {id: cr-0fedcba9876543210, ends: "2026-12-20T11:30:00Z"}
              zone: us-east-1b
            - on_demand
            - spot
  gke:
    cloud: gcp
    project: demo-project
    region: us-central1
    zones: [us-central1-a]
    model_store: gs://models-usc1/
    cluster: {create: true}
    overrides:
      gpu_pools:
        h100:
          capacity: [{reservation: h100-reserved}, flex_start, on_demand]
gpu_pools:
  h100:
    gpu: nvidia-h100-80gb
    gpus_per_node: 8
    nodes: {min: 1, max: 2}
models:
  chat:
    server: vllm
    source: llama/
    pool: h100
    gpus: 8
    replicas: {min: 1, max: 2}
"""


def edit(old: str, new: str, text: str = BASE) -> str:
    return edit_base(old, new, text)


def test_base_is_valid() -> None:
    assert diagnostics(BASE) == []


def test_the_resolved_pool_keeps_the_order_and_zones(tmp_path) -> None:
    path = tmp_path / "bp.yaml"
    path.write_text(BASE)
    pool = resolve(loader.load(path), "prod").pools["h100"]
    kinds = [(s.kind, s.reservation, s.zone) for s in pool.capacity_sources]
    assert kinds == [
        ("reservation", "cr-0123456789abcdef0", "us-east-1a"),
        ("capacity_block", "cr-0fedcba9876543210", "us-east-1b"),
        ("on_demand", None, None),
        ("spot", None, None),
    ]
    assert pool.capacity == "on_demand"
    assert [s.kind for s in pool.sources_in("us-east-1a")] == ["reservation", "on_demand", "spot"]
    assert [s.kind for s in pool.sources_in("us-east-1b")] == [
        "capacity_block",
        "on_demand",
        "spot",
    ]
    assert pool.capacity_sources[1].ends == "2026-12-20T11:30:00Z"
    gke = resolve(loader.load(path), "gke").pools["h100"]
    assert gke.capacity_sources[0] == CapacitySource(
        "reservation",
        ("gpu_pools", "h100", "capacity", 0),
        reservation="h100-reserved",
        zone="us-central1-a",
    )


def test_a_scalar_capacity_is_one_source() -> None:
    text = edit(
        "    nodes: {min: 1, max: 2}\n", "    nodes: {min: 1, max: 2}\n    capacity: spot\n"
    )
    assert diagnostics(text) == []


def test_a_capacity_block_on_gke_is_refused() -> None:
    text = edit(
        "[{reservation: h100-reserved}, flex_start",
        "[{capacity_block: {id: cr-0fedcba9876543210, ends: '2026-12-20T11:30:00Z'}}, flex_start",
    )
    assert diagnostics(text) == [
        "bp.yaml:30:22: error: environments.gke.overrides.gpu_pools.h100.capacity[0]: pool "
        "'h100': a Capacity Block is not a capacity source on GCP (GKE) (environment gke); it "
        "has reservation, flex_start, on_demand, spot; on GKE use a reservation or flex_start; "
        "set `capacity` per environment in its overrides"
    ]


def test_flex_start_on_eks_is_refused() -> None:
    text = edit("            - on_demand\n            - spot\n", "            - flex_start\n")
    assert diagnostics(text) == [
        "bp.yaml:18:15: error: environments.prod.overrides.gpu_pools.h100.capacity[2]: pool "
        "'h100': `flex_start` is not a capacity source on AWS (EKS) (environment prod); it "
        "has reservation, capacity_block, on_demand, spot; on EKS use a Capacity Block "
        "(`capacity_block:`) instead"
    ]


def test_a_reservation_after_on_demand_is_refused() -> None:
    text = edit(
        "            - on_demand\n            - spot\n",
        "            - on_demand\n"
        "            - {reservation: cr-0aaaaaaaaaaaaaaaa, zone: us-east-1a}\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:19:15: error: environments.prod.overrides.gpu_pools.h100.capacity[3]: pool "
        "'h100': a reservation comes after `on_demand`, but reservations and Capacity "
        "Blocks are paid for whether used or not, so the nodes must come from them first; "
        "move reservations and Capacity Blocks to the top of the list"
    ]


def test_a_reservation_of_a_multi_zone_pool_needs_its_zone() -> None:
    text = edit("cr-0123456789abcdef0, zone: us-east-1a}", "cr-0123456789abcdef0}")
    assert diagnostics(text) == [
        "bp.yaml:15:15: error: environments.prod.overrides.gpu_pools.h100.capacity[0]: pool "
        "'h100' runs in 2 zones (us-east-1a, us-east-1b), and a reservation or Capacity Block "
        "holds capacity in one of them; add `zone:` with the zone it holds capacity in"
    ]


def test_a_reservation_in_a_zone_the_pool_lacks_is_refused() -> None:
    text = edit(
        "cr-0123456789abcdef0, zone: us-east-1a}", "cr-0123456789abcdef0, zone: us-east-1c}"
    )
    assert diagnostics(text) == [
        "bp.yaml:15:57: error: environments.prod.overrides.gpu_pools.h100.capacity[0].zone: "
        "pool 'h100' has no nodes in zone 'us-east-1c'; its zones are us-east-1a, us-east-1b; "
        "use one of the pool's zones, or add the zone to the pool's `zones`"
    ]


def test_a_malformed_aws_reservation_id_is_refused() -> None:
    text = edit("cr-0123456789abcdef0, zone", "my-reservation, zone")
    assert diagnostics(text) == [
        "bp.yaml:15:29: error: environments.prod.overrides.gpu_pools.h100.capacity[0].reservation: "
        "pool 'h100': 'my-reservation' is not an EC2 capacity reservation id; write the "
        "reservation's id, such as cr-0123456789abcdef0 (EC2 console > Capacity Reservations)"
    ]


def test_a_zone_no_source_can_launch_in_is_refused() -> None:
    text = edit("            - on_demand\n            - spot\n", "")
    text = edit(
        'capacity_block: {id: cr-0fedcba9876543210, ends: "2026-12-20T11:30:00Z"}',
        "capacity_block: {offering: auto, hours: 48}",
        text,
    )
    assert diagnostics(text) == [
        "bp.yaml:15:13: error: environments.prod.overrides.gpu_pools.h100.capacity: pool "
        "'h100' has no capacity source that can launch nodes in zone us-east-1b: its "
        "reservations and Capacity Blocks are in other zones, or are offerings that are not "
        "bought; add a reservation with `zone: us-east-1b`, or end the list with on_demand or spot"
    ]


def test_a_bought_block_needs_its_end_and_no_offering_fields() -> None:
    text = edit(', ends: "2026-12-20T11:30:00Z"}', ", hours: 48}")
    assert diagnostics(text) == [
        "bp.yaml:16:65: error: "
        "environments.prod.overrides.gpu_pools.h100.capacity[1].capacity_block.hours: pool "
        "'h100': a Capacity Block named by `id` is bought already; `hours` applies only "
        "to `offering: auto`; remove `hours`",
        "bp.yaml:16:31: error: "
        "environments.prod.overrides.gpu_pools.h100.capacity[1].capacity_block: pool "
        "'h100': Capacity Block cr-0fedcba9876543210 has no `ends`: EC2 terminates its "
        "instances 30 minutes before the block ends, and the plan must know when; add `ends:` "
        "with the block's end time in UTC, e.g. 2026-12-20T11:30:00Z",
    ]


def test_a_mapping_with_both_sources_is_refused() -> None:
    text = edit(
        "{reservation: cr-0123456789abcdef0, zone",
        "{reservation: cr-0123456789abcdef0, capacity_block: {offering: auto, hours: 24}, zone",
    )
    assert diagnostics(text) == [
        "bp.yaml:15:15: error: environments.prod.overrides.gpu_pools.h100.capacity[0]: pool "
        "'h100': a capacity source mapping needs exactly one of `reservation` and "
        "`capacity_block`, this one has both; write each reservation and Capacity Block as a "
        "list item of its own"
    ]


def test_kubernetes_environments_take_only_on_demand() -> None:
    text = BASE.replace(
        "  gke:\n",
        "  local:\n    cloud: kubernetes\n    region: local\n    zones: [zone-a]\n"
        "    model_store: s3://models/\n    model_store_endpoint: http://store.ns.svc:9000\n"
        "    model_store_secrets: {reader: store-reader, vllm_compiler: store-compiler}\n"
        "    cluster: {context: ctx}\n"
        "    overrides:\n      load_balancer: {allowed_cidrs: [10.0.0.0/8]}\n"
        "      gpu_pools:\n        h100: {nodes: {min: 1, max: 1}, capacity: [on_demand, spot]}\n"
        "  gke:\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:31:63: error: environments.local.overrides.gpu_pools.h100.capacity[1]: pool "
        "'h100': `spot` is not a capacity source on a kubernetes environment (environment "
        "local); it has on_demand; remove `capacity` (or set it to on_demand) for this "
        "environment: its nodes exist already"
    ]


def _offering(hours: int, buy: bool = False) -> str:
    return edit(
        'capacity_block: {id: cr-0fedcba9876543210, ends: "2026-12-20T11:30:00Z"}',
        f"capacity_block: {{offering: auto, hours: {hours}{', buy: true' if buy else ''}}}",
    )


def test_capacity_block_hours_are_whole_days_then_whole_weeks() -> None:
    for hours in (24, 48, 336, 504, 4368):
        assert diagnostics(_offering(hours)) == [], hours
    assert diagnostics(_offering(36)) == [
        "bp.yaml:16:55: error: "
        "environments.prod.overrides.gpu_pools.h100.capacity[1].capacity_block.hours: pool "
        "'h100': EC2 sells Capacity Blocks of whole days up to 14 days (336 hours) and of "
        "whole weeks up to 182 days (4368 hours); 36 hours is neither; use 24 hours, or "
        "another multiple of 24 up to 336 or of 168 up to 4368"
    ]
    (message,) = diagnostics(_offering(360))
    assert "360 hours is neither; use 336 hours" in message


def test_a_bought_block_holds_at_most_64_instances() -> None:
    text = edit("nodes: {min: 1, max: 2}", "nodes: {min: 1, max: 65}", _offering(48, buy=True))
    (message,) = diagnostics(text)
    assert message.startswith(
        "bp.yaml:16:64: error: "
        "environments.prod.overrides.gpu_pools.h100.capacity[1].capacity_block.buy: pool "
        "'h100' would buy a Capacity Block of 65 instances"
    )
    assert "lower the pool's `nodes.max` to 64 or less" in message
    edited = edit("nodes: {min: 1, max: 2}", "nodes: {min: 1, max: 64}", _offering(48, buy=True))
    assert diagnostics(edited) == []
