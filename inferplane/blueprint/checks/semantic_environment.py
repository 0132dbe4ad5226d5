"""Where an environment runs: its region and zone names, the cluster it creates or attaches
to, and the cloud its model store is in.

A pool's zones are a subset of the environment's zones (the clients' zones): the mandatory
rule `same-zone-placement` refuses anything else in `check`, and validate refuses it first,
at the zone.
"""

from __future__ import annotations

import re

from inferplane.blueprint.checks import semantic_kubernetes
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath

_AWS_REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d+$")
_GCP_REGION = re.compile(r"^[a-z]+-[a-z]+\d+$")
_CROSS_CLOUD = {"aws": "s3", "gcp": "gs", "kubernetes": "s3"}


def zone_pattern(cloud: str, region: str) -> re.Pattern[str]:
    """Zone names of `region`: AWS ``us-east-1a``; GCP ``us-central1-a``."""
    if cloud == "aws":
        return re.compile(rf"^{re.escape(region)}[a-z]$")
    return re.compile(rf"^{re.escape(region)}-[a-z]$")


def zone_example(cloud: str, region: str) -> str:
    return f"{region}a" if cloud == "aws" else f"{region}-a"


def check_region_and_zones(env: EnvView) -> None:
    """Region and zone names of the cloud; a pool's zones among the environment's."""
    cloud, region = env.spec["cloud"], env.spec["region"]
    base: YamlPath = ("environments", env.name)
    if cloud == semantic_kubernetes.KUBERNETES:
        return  # node labels: any value the schema accepts (`semantic_kubernetes`)
    region_re = _AWS_REGION if cloud == "aws" else _GCP_REGION
    if not region_re.match(region):
        example = "us-east-1" if cloud == "aws" else "us-central1"
        env.error(
            (*base, "region"),
            f"{region!r} is not a {cloud.upper()} region name",
            f"use a region such as {example}",
        )
        return
    pattern = zone_pattern(cloud, region)
    for i, zone in enumerate(env.spec["zones"]):
        if not pattern.match(zone):
            env.error(
                (*base, "zones", i),
                f"zone {zone!r} is not a zone of region {region}",
                f"use zones named like {zone_example(cloud, region)}",
            )
    zones = list(env.spec["zones"])
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        for i, zone in enumerate(pool.get("zones") or []):
            if not pattern.match(zone):
                env.error(
                    ("gpu_pools", name, "zones", i),
                    f"zone {zone!r} is not a zone of region {region} (environment {env.name})",
                    f"use zones named like {zone_example(cloud, region)}",
                )
            elif zone not in zones:
                env.error(
                    ("gpu_pools", name, "zones", i),
                    f"zone {zone!r} is not one of environment {env.name}'s zones "
                    f"({', '.join(zones)}), where its clients run: its replicas would serve "
                    "them across zones",
                    f"use a subset of {', '.join(zones)}, or add {zone} to "
                    f"environments.{env.name}.zones",
                )
    if cloud == "gcp" and not env.spec.get("project"):
        env.error(base, "a gcp environment needs `project`", "add `project: <gcp project id>`")
    if cloud == "aws" and env.spec.get("project"):
        env.error(
            (*base, "project"),
            "`project` is for gcp environments only",
            "remove it; an AWS account comes from the credentials",
        )


def check_cluster(env: EnvView) -> None:
    """One cluster to run on: created, or an existing one by name or kubeconfig context."""
    path: YamlPath = ("environments", env.name, "cluster")
    cluster = env.spec.get("cluster") or {}
    create, existing = cluster.get("create", False), cluster.get("existing")
    if create and existing:
        env.error(
            path,
            "`create: true` and `existing` are both set",
            "either create a cluster, or attach to an existing one by name",
        )
    elif not create and not existing and not cluster.get("context"):
        env.error(path, "no cluster to run on", "set `create: true`, or `existing: <cluster name>`")
    if existing and "vpc_cidr" in cluster:
        env.error(
            (*path, "vpc_cidr"),
            "`vpc_cidr` only applies to a cluster inferplane creates",
            "remove it; an existing cluster keeps its network",
        )


def check_model_store(env: EnvView) -> None:
    """The model store is the storage of the environment's own cloud."""
    cloud = env.spec["cloud"]
    store = env.spec["model_store"]
    want = _CROSS_CLOUD[cloud]
    if not store.startswith(f"{want}://"):
        env.error(
            ("environments", env.name, "model_store"),
            f"a {cloud} environment reads models from {want}:// storage, not {store!r}",
            f"use a {want}://bucket/prefix/ in {env.spec['region']} (same region: fast "
            "cold starts)",
        )
