"""A zone-pinned GPU node pool on an existing EKS cluster, with no blueprint.

`EksCluster` attaches to the cluster `clusterName` (it looks up the cluster, its IAM OIDC
provider and, in the pool's zone, the private subnet of its VPC tagged
``kubernetes.io/role/internal-elb=1``) and creates only the nodes' IAM role.
`GpuNodePool` then adds one managed node group of L4 nodes in that single zone: labelled
with pool, owner (`Ownership.blueprint`), GPU and zone, tainted
``nvidia.com/gpu=present:NoSchedule`` so only GPU pods land there, and tagged for the
Cluster Autoscaler (which can start it from zero).

Run with ``pulumi up -s dev`` after ``pulumi config set clusterName <cluster>``.
"""

import pulumi

from inferplane.blueprint.catalog import gpu
from inferplane.components import (
    EksCluster,
    EksClusterArgs,
    GpuNodePool,
    GpuNodePoolArgs,
    Ownership,
)

config = pulumi.Config()
region = pulumi.Config("aws").require("region")
cluster_name = config.require("clusterName")
zone = config.get("zone") or f"{region}a"
nodes_max = config.get_int("nodesMax") or 2

# Tags every resource with this project and stack; node groups are named after them.
owner = Ownership(blueprint=pulumi.get_project(), environment=pulumi.get_stack())

cluster = EksCluster(
    cluster_name,
    EksClusterArgs(cluster_name=cluster_name, owner=owner, zones=(zone,), create=False),
)

l4 = gpu("nvidia-l4")
pool = GpuNodePool(
    f"{owner.stack}-l4",
    GpuNodePoolArgs(
        cloud="aws",
        cluster_name=cluster_name,
        owner=owner,
        pool_name="l4",
        gpu=l4,
        instance_type=l4.aws_instances[1],
        zones=(zone,),
        nodes_min_per_zone=1,
        nodes_max_per_zone=nodes_max,
        node_role_arn=cluster.node_role_arn,
        subnet_ids_by_zone=cluster.subnet_ids_by_zone,
    ),
)

pulumi.export("node_groups", pool.node_group_names)
pulumi.export("node_role_arn", cluster.node_role_arn)
