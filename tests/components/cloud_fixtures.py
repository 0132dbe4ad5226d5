"""Helpers of the cloud-layer tests: variants of an environment, and offline runs of
the cloud components alone (cluster, node pools, add-ons, identities) without models."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pulumi

from inferplane.app.offline import RecordedResource, Recording, run_program
from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment, GpuPool
from inferplane.components import stack_args
from inferplane.components.addons import ClusterAddons
from inferplane.components.cloud import cloud_provider
from inferplane.components.cluster import Cluster
from inferplane.components.identity import ModelStoreAccess
from inferplane.components.node_pool import GpuNodePool

Build = Callable[[Environment, pulumi.ResourceOptions], object]


def with_cluster(env: Environment, **changes: Any) -> Environment:
    return dataclasses.replace(env, cluster=dataclasses.replace(env.cluster, **changes))


def attached(env: Environment, existing: str) -> Environment:
    return with_cluster(env, create=False, existing=existing)


def created(env: Environment) -> Environment:
    return with_cluster(env, create=True, existing=None)


def with_pool(env: Environment, pool: str, **changes: Any) -> Environment:
    pools: dict[str, GpuPool] = dict(env.pools)
    pools[pool] = dataclasses.replace(pools[pool], **changes)
    return dataclasses.replace(env, pools=pools)


def with_zones(env: Environment, zones: tuple[str, ...]) -> Environment:
    """All pools in all of `zones`."""
    pools = {n: dataclasses.replace(p, zones=zones) for n, p in env.pools.items()}
    return dataclasses.replace(env, zones=zones, pools=pools)


def run(env: Environment, build: Build) -> Recording:
    """Run `build(env, opts)` offline; `opts` parent what it builds under a root component
    that hands out the environment's cloud provider, as `InferenceStack` does."""

    def program(e: Environment) -> object:
        root = pulumi.ComponentResource("inferplane:test:Root", "root")
        cloud = cloud_provider("root", e.cloud, e.region, e.project, stack_args.ownership(e), root)
        return build(e, pulumi.ResourceOptions(parent=root, providers=[cloud]))

    return run_program(env, program=program)


def cloud_layer(env: Environment, opts: pulumi.ResourceOptions) -> Cluster:
    """Everything `InferenceStack` builds except the namespace and the models; exports the
    cluster's facts (unsecret kubeconfig included) for assertions."""
    name = naming.stack_name(env.blueprint, env.name)
    cluster = Cluster(name, stack_args.cluster_args(env), opts=opts)
    for pool in env.pools.values():
        GpuNodePool(
            f"{name}-{pool.name}", stack_args.cluster_node_pool_args(env, pool, cluster), opts=opts
        )
    ClusterAddons(name, stack_args.addons_args(env, cluster), opts=opts)
    ModelStoreAccess(
        name,
        stack_args.store_access_args(
            env, naming.namespace(env.blueprint), cluster.provider, cluster
        ),
        opts=opts,
    )
    pulumi.export("cluster_name", cluster.name)
    pulumi.export("endpoint", cluster.endpoint)
    pulumi.export("kubeconfig", pulumi.Output.unsecret(cluster.kubeconfig))
    pulumi.export("subnets", cluster.subnet_ids_by_zone)
    pulumi.export("lb_subnet_ids", cluster.lb_subnet_ids)
    pulumi.export("oidc_provider_arn", cluster.oidc_provider_arn)
    pulumi.export("oidc_issuer", cluster.oidc_issuer)
    pulumi.export("workload_pool", cluster.workload_pool)
    return cluster


_CACHE: dict[int, tuple[Environment, Recording]] = {}


def cloud_recording(env: Environment) -> Recording:
    """`cloud_layer` of `env`, offline, once per session per environment object."""
    if id(env) not in _CACHE:
        _CACHE[id(env)] = (env, run(env, cloud_layer))
    return _CACHE[id(env)][1]


def parsed(resource: RecordedResource, key: str = "policy") -> dict[str, Any]:
    """A recorded JSON input (an IAM policy), parsed."""
    value = resource.inputs[key]
    return json.loads(value) if isinstance(value, str) else dict(value)


def descendants(rec: Recording, ancestor: RecordedResource, type_: str) -> list[RecordedResource]:
    """Resources of `type_` anywhere below `ancestor`."""
    found = []
    for r in rec.of_type(type_):
        p = rec.parent_of(r)
        while p is not None and p.urn != ancestor.urn:
            p = rec.parent_of(p)
        if p is not None:
            found.append(r)
    return found
