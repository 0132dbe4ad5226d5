"""What the clouds and Kubernetes would answer, for the offline run.

`CloudMocks` plays the part of the provider plugins under `pulumi.runtime.set_mocks`: a
created resource echoes its inputs (the provider accepted them) and gains the outputs the
real provider computes — IDs, ARNs, endpoints, certificates, OIDC issuers, service-account
emails — in the real formats, so that code which parses or interpolates them (IRSA trust
policies, kubeconfigs, annotations) runs exactly as it would against the cloud. Invokes
(data sources) answer from the environment's facts (region, zones, project).

Every generated value is derived from a hash of the resource's type and name, so two runs
of the same blueprint produce byte-identical plans.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi.runtime.mocks import MockCallArgs, MockResourceArgs, Mocks

from inferplane.app.offline_invokes import answers
from inferplane.app.offline_values import (
    ACCOUNT_ID,
    CA_DATA,
    CloudFacts,
    Outputs,
    UnknownValues,
    aws_arn,
    eks_endpoint,
    oidc_issuer,
    stable_hex,
)


def _autoname(name: str, key: str) -> str:
    """Pulumi's auto-naming: the logical name plus a random suffix (here: a stable one)."""
    return f"{name}-{stable_hex(key, length=7)}"


# --- AWS resources --------------------------------------------------------------------------
_EC2_PREFIX = {
    "vpc": "vpc",
    "subnet": "subnet",
    "securityGroup": "sg",
    "internetGateway": "igw",
    "natGateway": "nat",
    "eip": "eipalloc",
    "routeTable": "rtb",
    "routeTableAssociation": "rtbassoc",
    "launchTemplate": "lt",
    "vpcEndpoint": "vpce",
    "networkAcl": "acl",
    "securityGroupRule": "sgrule",
}


def _aws(facts: CloudFacts, typ: str, name: str, state: Outputs) -> str:
    module, _, _ = typ.split(":")[1].partition("/")
    resource = typ.split(":")[2]
    key = f"{typ}::{name}"
    if module == "ec2":
        kind = resource[0].lower() + resource[1:]
        prefix = _EC2_PREFIX.get(kind, kind.lower())
        rid = f"{prefix}-{stable_hex(key)}"
        state.setdefault("arn", aws_arn(facts, "ec2", f"{kind.lower()}/{rid}"))
        state.setdefault("ownerId", facts.account_id)
        if kind == "vpc":
            state.setdefault("defaultSecurityGroupId", f"sg-{stable_hex(key, 'sg')}")
            state.setdefault("mainRouteTableId", f"rtb-{stable_hex(key, 'rtb')}")
            state.setdefault("defaultRouteTableId", state["mainRouteTableId"])
        elif kind == "subnet":
            state.setdefault(
                "availabilityZone", facts.zones[0] if facts.zones else f"{facts.region}a"
            )
        elif kind == "eip":
            state.setdefault("publicIp", f"3.{int(stable_hex(key, length=2), 16)}.0.10")
            state.setdefault("allocationId", rid)
        return rid
    if module == "iam":
        if resource in {"Role", "Policy", "User", "InstanceProfile"}:
            state.setdefault("name", _autoname(name, key))
            path = state.get("path") or "/"
            kind = resource[0].lower() + resource[1:]
            kind = "instance-profile" if kind == "instanceProfile" else kind
            state.setdefault("arn", aws_arn(facts, "iam", f"{kind}{path}{state['name']}"))
            state.setdefault("uniqueId", f"AROA{stable_hex(key, length=17).upper()}")
            if resource == "Policy":
                state.setdefault("policyId", f"ANPA{stable_hex(key, length=17).upper()}")
                return str(state["arn"])
            return str(state["name"])
        if resource == "OpenIdConnectProvider":
            host = str(state.get("url", oidc_issuer(facts, key))).removeprefix("https://")
            state.setdefault("arn", aws_arn(facts, "iam", f"oidc-provider/{host}"))
            return str(state["arn"])
        if resource == "RolePolicyAttachment":
            return f"{state.get('role', name)}-{stable_hex(key, length=20)}"
        return f"{state.get('role', name)}:{state.get('name', name)}"
    if module == "eks":
        if resource == "Cluster":
            state.setdefault("name", _autoname(name, key))
            cluster = str(state["name"])
            state.setdefault("arn", aws_arn(facts, "eks", f"cluster/{cluster}"))
            state.setdefault("endpoint", eks_endpoint(facts, key))
            state.setdefault("certificateAuthority", {"data": CA_DATA})
            state.setdefault("identities", [{"oidcs": [{"issuer": oidc_issuer(facts, key)}]}])
            state.setdefault("status", "ACTIVE")
            state.setdefault("platformVersion", "eks.1")
            state.setdefault("clusterId", stable_hex(key, length=36))
            vpc = dict(state.get("vpcConfig") or {})
            vpc.setdefault("clusterSecurityGroupId", f"sg-{stable_hex(key, 'cluster-sg')}")
            vpc.setdefault("vpcId", f"vpc-{stable_hex(key, 'vpc')}")
            state["vpcConfig"] = vpc
            return cluster
        if resource == "NodeGroup":
            cluster = str(state.get("clusterName", "cluster"))
            state.setdefault("nodeGroupName", _autoname(name, key))
            ng = str(state["nodeGroupName"])
            uid = stable_hex(key, length=32)
            state.setdefault("arn", aws_arn(facts, "eks", f"nodegroup/{cluster}/{ng}/{uid}"))
            state.setdefault("status", "ACTIVE")
            state.setdefault("resources", [{"autoscalingGroups": [{"name": f"eks-{ng}-{uid}"}]}])
            return f"{cluster}:{ng}"
        state.setdefault(
            "arn", aws_arn(facts, "eks", f"{resource.lower()}/{name}/{stable_hex(key)}")
        )
        return f"{state.get('clusterName', 'cluster')}:{name}"
    kind = resource[0].lower() + resource[1:]
    state.setdefault("name", _autoname(name, key))
    state.setdefault("arn", aws_arn(facts, module, f"{kind.lower()}/{state['name']}"))
    return str(state["name"])


# --- GCP resources --------------------------------------------------------------------------
def _gcp(facts: CloudFacts, typ: str, name: str, state: Outputs) -> str:
    module = typ.split(":")[1].partition("/")[0]
    resource = typ.split(":")[2]
    key = f"{typ}::{name}"
    project = str(state.get("project") or facts.project or "project")
    state.setdefault("project", project)
    if module == "serviceaccount" and resource == "Account":
        account = str(state.get("accountId") or name)[:30]
        email = f"{account}@{project}.iam.gserviceaccount.com"
        state.setdefault("email", email)
        state.setdefault("member", f"serviceAccount:{email}")
        state.setdefault("name", f"projects/{project}/serviceAccounts/{email}")
        state.setdefault("uniqueId", str(int(stable_hex(key, length=16), 16))[:21])
        return str(state["name"])
    if module in {"serviceaccount", "projects", "storage"} and "IAM" in resource:
        state.setdefault("etag", f"BwY{stable_hex(key, length=9)}=")
        return (
            f"{state.get('serviceAccountId') or state.get('bucket') or project}/{stable_hex(key)}"
        )
    state.setdefault("name", _autoname(name, key))
    rname = str(state["name"])
    if module == "container" and resource == "Cluster":
        location = str(state.get("location") or facts.region)
        rid = f"projects/{project}/locations/{location}/clusters/{rname}"
        octet = int(stable_hex(key, length=2), 16)
        state.setdefault("endpoint", f"34.{octet}.{(octet * 7) % 256}.{(octet * 13) % 256}")
        state.setdefault("masterAuth", {"clusterCaCertificate": CA_DATA})
        state.setdefault("masterVersion", "1.33.5-gke.1201000")
        state.setdefault("selfLink", f"https://container.googleapis.com/v1/{rid}")
        return rid
    if module == "container" and resource == "NodePool":
        location = str(state.get("location") or facts.region)
        cluster = str(state.get("cluster", "cluster")).rsplit("/", 1)[-1]
        zone = (state.get("nodeLocations") or list(facts.zones) or [f"{facts.region}-a"])[0]
        group = f"gke-{cluster[:14]}-{rname[:14]}-{stable_hex(key, length=8)}-grp"
        state.setdefault(
            "instanceGroupUrls",
            [
                f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}/instanceGroupManagers/{group}"
            ],
        )
        state.setdefault("managedInstanceGroupUrls", state["instanceGroupUrls"])
        return f"projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{rname}"
    scope = "global" if resource in {"Network", "Firewall"} else f"regions/{facts.region}"
    collection = resource[0].lower() + resource[1:] + "s"
    rid = f"projects/{project}/{scope}/{collection}/{rname}"
    state.setdefault("selfLink", f"https://www.googleapis.com/{module}/v1/{rid}")
    if resource == "Subnetwork":
        state.setdefault("region", facts.region)
        state.setdefault("gatewayAddress", "10.0.0.1")
    return rid


# --- Kubernetes resources -------------------------------------------------------------------
def _kubernetes(facts: CloudFacts, typ: str, name: str, state: Outputs) -> str:
    key = f"{typ}::{name}"
    if typ.startswith("kubernetes:helm.sh/"):
        release = str(state.get("name") or _autoname(name, key))
        state.setdefault("name", release)
        state["status"] = {
            "name": release,
            "namespace": state.get("namespace", "default"),
            "chart": state.get("chart"),
            "version": state.get("version"),
            "status": "deployed",
            "revision": 1,
        }
        return f"{state.get('namespace', 'default')}/{release}"
    meta = dict(state.get("metadata") or {})
    meta.setdefault("name", _autoname(name, key))
    kind = typ.rsplit(":", 1)[-1]
    cluster_scoped = kind in CLUSTER_SCOPED_KINDS
    if not cluster_scoped:
        meta.setdefault("namespace", "default")
    meta.setdefault("uid", _uuid(key))
    meta.setdefault("resourceVersion", "1")
    meta.setdefault("generation", 1)
    state["metadata"] = meta
    spec = state.get("spec")
    if kind == "Service" and isinstance(spec, dict):
        spec.setdefault("clusterIP", _ip("172.20", key))
        if spec.get("type") == "LoadBalancer":
            if facts.cloud == "aws":
                prefix = f"k8s-{str(meta['namespace'])[:8]}-{str(meta['name'])[:8]}"
                host = f"{prefix}-{stable_hex(key, length=10)}.elb.{facts.region}.amazonaws.com"
                ingress = {"hostname": host}
            else:
                ingress = {"ip": _ip("10.128", key, "lb")}
            state["status"] = {"loadBalancer": {"ingress": [ingress]}}
    if cluster_scoped:
        return str(meta["name"])
    return f"{meta['namespace']}/{meta['name']}"


def _ip(prefix: str, *key: str) -> str:
    """A stable address in `prefix` (two octets), never .0/.1/.255."""
    n = int(stable_hex(*key, length=4), 16)
    return f"{prefix}.{n % 256}.{(n >> 8) % 252 + 2}"


def _uuid(key: str) -> str:
    h = stable_hex(key, length=32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Namespace",
        "NamespacePatch",
        "Node",
        "PersistentVolume",
        "StorageClass",
        "CustomResourceDefinition",
        "CustomResourceDefinitionPatch",
        "ClusterRole",
        "ClusterRoleBinding",
        "PriorityClass",
        "RuntimeClass",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "APIService",
        "CSIDriver",
        "IngressClass",
        "ClusterPolicy",
        "ClusterTriggerAuthentication",
        "NodeFeatureRule",
        # Karpenter: both CRDs are `scope: Cluster` (aws/karpenter-provider-aws v1.14.1
        # pkg/apis/crds, vendored in tests/reference).
        "NodePool",
        "EC2NodeClass",
    }
)
"""Kinds that live outside any namespace (core kinds plus the add-ons' cluster-wide CRDs)."""


GENERATED_PASSWORD = "pulumi-python:dynamic/inferplane:GeneratedPassword"
"""`inferplane.components.serving.generated_password.TYPE` (the app does not import the
components' modules here)."""


def _password(name: str, length: int) -> str:
    """A stand-in for a generated password: letters and digits of `length`, stable per
    resource. The real one exists only in the deployed stack's state; the resource marks
    ``result`` secret (``additional_secret_outputs``), so a recording masks it."""
    return stable_hex("password", name, length=min(length, 64))


class CloudMocks(Mocks):
    """Mocks whose outputs look like the real providers' (see the module docstring)."""

    def __init__(self, facts: CloudFacts, recorded: Sequence[Mapping[str, Any]] = ()):
        self.facts = facts
        self._answers = answers(facts)
        self._recorded = tuple(recorded)
        """Recorded invoke answers (`recorded_answer`), asked before the made-up ones."""
        self.unknowns = UnknownValues(facts)
        """Every value made up here, with the name of what a deploy would produce instead."""

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict[str, Any]]:
        state: Outputs = copy.deepcopy(dict(args.inputs))
        typ = args.typ
        if args.resource_id:  # a read (`.get`) of something that exists already
            state.setdefault("id", args.resource_id)
        if not args.custom:
            return "", {}
        if typ.startswith("pulumi:providers:"):
            return _uuid(f"{typ}::{args.name}"), state
        if typ.startswith("aws:"):
            rid = _aws(self.facts, typ, args.name, state)
        elif typ.startswith("gcp:"):
            rid = _gcp(self.facts, typ, args.name, state)
        elif typ.startswith("kubernetes:"):
            rid = _kubernetes(self.facts, typ, args.name, state)
        elif typ == GENERATED_PASSWORD:
            rid = stable_hex(typ, args.name, length=32)  # the provider's ID: a uuid4's hex
            state["result"] = _password(args.name, int(args.inputs.get("length", 16)))
        else:
            rid = f"{args.name}-{stable_hex(typ, args.name, length=8)}"
        if not args.resource_id and typ.startswith(("aws:", "gcp:")):
            self.unknowns.note_resource(typ, args.name, rid, args.inputs, state)
        return str(args.resource_id or rid), state

    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        found = recorded_answer(self._recorded, args.token, args.args)
        if found is not None:
            return found, []
        answer = self._answers.get(args.token)
        if answer is not None:
            result = answer(args.args)
            self.unknowns.note_invoke(args.token, args.args, result)
            return result, []
        # An invoke nobody taught us: echo the arguments, which is what most data sources
        # do for the fields they were queried by.
        return {
            "id": stable_hex(args.token, json.dumps(args.args, sort_keys=True, default=str)),
            **args.args,
        }, []


def _within(part: Any, whole: Any) -> bool:
    """Whether `part` is `whole` or a subset of it: a mapping key by key, a list item by
    item (each item of `part` within some item of `whole`)."""
    if isinstance(part, Mapping):
        return isinstance(whole, Mapping) and all(
            k in whole and _within(v, whole[k]) for k, v in part.items()
        )
    if isinstance(part, list):
        return isinstance(whole, list) and all(any(_within(p, w) for w in whole) for p in part)
    return bool(part == whole)


def recorded_answer(
    recorded: Sequence[Mapping[str, Any]], token: str, args: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The first recorded answer for `token` whose ``args`` are a subset of `args`: each entry
    is ``{token, args, answer}``, what the provider answered a real run (`inferplane plan
    --invokes`, the preflight's tests). None when no entry matches."""
    for entry in recorded:
        if entry.get("token") == token and _within(entry.get("args") or {}, args):
            return copy.deepcopy(dict(entry.get("answer") or {}))
    return None


__all__ = [
    "ACCOUNT_ID",
    "CA_DATA",
    "CLUSTER_SCOPED_KINDS",
    "CloudFacts",
    "CloudMocks",
    "aws_arn",
    "eks_endpoint",
    "oidc_issuer",
    "recorded_answer",
    "stable_hex",
]
