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

import base64
import copy
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi.runtime.mocks import MockCallArgs, MockResourceArgs, Mocks

ACCOUNT_ID = "123456789012"
"""The AWS account offline runs pretend to deploy into (AWS's documentation account)."""

_CA_PEM = (
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAVMRMwEQYDVQQDEwprdWJlcm5ldGVz\n"
    "-----END CERTIFICATE-----\n"
)
CA_DATA = base64.b64encode(_CA_PEM.encode()).decode()
"""Base64 PEM, as EKS `certificateAuthority.data` and GKE `clusterCaCertificate` carry it."""

Outputs = dict[str, Any]


@dataclass(frozen=True)
class CloudFacts:
    """Where the offline deployment pretends to be."""

    cloud: str
    region: str
    zones: tuple[str, ...]
    project: str | None = None
    account_id: str = ACCOUNT_ID


def _hex(*parts: str, length: int = 17) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:length]


def _eks_endpoint(facts: CloudFacts, key: str) -> str:
    return f"https://{_hex(key, length=32).upper()}.gr7.{facts.region}.eks.amazonaws.com"


def _oidc_issuer(facts: CloudFacts, key: str) -> str:
    return f"https://oidc.eks.{facts.region}.amazonaws.com/id/{_hex(key, length=32).upper()}"


def _aws_arn(facts: CloudFacts, service: str, resource: str) -> str:
    # IAM is global: its ARNs carry no region.
    region = "" if service in {"iam", "sts"} else facts.region
    return f"arn:aws:{service}:{region}:{facts.account_id}:{resource}"


def _autoname(name: str, key: str) -> str:
    """Pulumi's auto-naming: the logical name plus a random suffix (here: a stable one)."""
    return f"{name}-{_hex(key, length=7)}"


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
        rid = f"{prefix}-{_hex(key)}"
        state.setdefault("arn", _aws_arn(facts, "ec2", f"{kind.lower()}/{rid}"))
        state.setdefault("ownerId", facts.account_id)
        if kind == "vpc":
            state.setdefault("defaultSecurityGroupId", f"sg-{_hex(key, 'sg')}")
            state.setdefault("mainRouteTableId", f"rtb-{_hex(key, 'rtb')}")
            state.setdefault("defaultRouteTableId", state["mainRouteTableId"])
        elif kind == "subnet":
            state.setdefault(
                "availabilityZone", facts.zones[0] if facts.zones else f"{facts.region}a"
            )
        elif kind == "eip":
            state.setdefault("publicIp", f"3.{int(_hex(key, length=2), 16)}.0.10")
            state.setdefault("allocationId", rid)
        return rid
    if module == "iam":
        if resource in {"Role", "Policy", "User", "InstanceProfile"}:
            state.setdefault("name", _autoname(name, key))
            path = state.get("path") or "/"
            kind = resource[0].lower() + resource[1:]
            kind = "instance-profile" if kind == "instanceProfile" else kind
            state.setdefault("arn", _aws_arn(facts, "iam", f"{kind}{path}{state['name']}"))
            state.setdefault("uniqueId", f"AROA{_hex(key, length=17).upper()}")
            if resource == "Policy":
                state.setdefault("policyId", f"ANPA{_hex(key, length=17).upper()}")
                return str(state["arn"])
            return str(state["name"])
        if resource == "OpenIdConnectProvider":
            host = str(state.get("url", _oidc_issuer(facts, key))).removeprefix("https://")
            state.setdefault("arn", _aws_arn(facts, "iam", f"oidc-provider/{host}"))
            return str(state["arn"])
        if resource == "RolePolicyAttachment":
            return f"{state.get('role', name)}-{_hex(key, length=20)}"
        return f"{state.get('role', name)}:{state.get('name', name)}"
    if module == "eks":
        if resource == "Cluster":
            state.setdefault("name", _autoname(name, key))
            cluster = str(state["name"])
            state.setdefault("arn", _aws_arn(facts, "eks", f"cluster/{cluster}"))
            state.setdefault("endpoint", _eks_endpoint(facts, key))
            state.setdefault("certificateAuthority", {"data": CA_DATA})
            state.setdefault("identities", [{"oidcs": [{"issuer": _oidc_issuer(facts, key)}]}])
            state.setdefault("status", "ACTIVE")
            state.setdefault("platformVersion", "eks.1")
            state.setdefault("clusterId", _hex(key, length=36))
            vpc = dict(state.get("vpcConfig") or {})
            vpc.setdefault("clusterSecurityGroupId", f"sg-{_hex(key, 'cluster-sg')}")
            vpc.setdefault("vpcId", f"vpc-{_hex(key, 'vpc')}")
            state["vpcConfig"] = vpc
            return cluster
        if resource == "NodeGroup":
            cluster = str(state.get("clusterName", "cluster"))
            state.setdefault("nodeGroupName", _autoname(name, key))
            ng = str(state["nodeGroupName"])
            uid = _hex(key, length=32)
            state.setdefault("arn", _aws_arn(facts, "eks", f"nodegroup/{cluster}/{ng}/{uid}"))
            state.setdefault("status", "ACTIVE")
            state.setdefault("resources", [{"autoscalingGroups": [{"name": f"eks-{ng}-{uid}"}]}])
            return f"{cluster}:{ng}"
        state.setdefault("arn", _aws_arn(facts, "eks", f"{resource.lower()}/{name}/{_hex(key)}"))
        return f"{state.get('clusterName', 'cluster')}:{name}"
    kind = resource[0].lower() + resource[1:]
    state.setdefault("name", _autoname(name, key))
    state.setdefault("arn", _aws_arn(facts, module, f"{kind.lower()}/{state['name']}"))
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
        state.setdefault("uniqueId", str(int(_hex(key, length=16), 16))[:21])
        return str(state["name"])
    if module in {"serviceaccount", "projects", "storage"} and "IAM" in resource:
        state.setdefault("etag", f"BwY{_hex(key, length=9)}=")
        return f"{state.get('serviceAccountId') or state.get('bucket') or project}/{_hex(key)}"
    state.setdefault("name", _autoname(name, key))
    rname = str(state["name"])
    if module == "container" and resource == "Cluster":
        location = str(state.get("location") or facts.region)
        rid = f"projects/{project}/locations/{location}/clusters/{rname}"
        octet = int(_hex(key, length=2), 16)
        state.setdefault("endpoint", f"34.{octet}.{(octet * 7) % 256}.{(octet * 13) % 256}")
        state.setdefault("masterAuth", {"clusterCaCertificate": CA_DATA})
        state.setdefault("masterVersion", "1.33.5-gke.1201000")
        state.setdefault("selfLink", f"https://container.googleapis.com/v1/{rid}")
        return rid
    if module == "container" and resource == "NodePool":
        location = str(state.get("location") or facts.region)
        cluster = str(state.get("cluster", "cluster")).rsplit("/", 1)[-1]
        zone = (state.get("nodeLocations") or list(facts.zones) or [f"{facts.region}-a"])[0]
        group = f"gke-{cluster[:14]}-{rname[:14]}-{_hex(key, length=8)}-grp"
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
                host = f"{prefix}-{_hex(key, length=10)}.elb.{facts.region}.amazonaws.com"
                ingress = {"hostname": host}
            else:
                ingress = {"ip": _ip("10.128", key, "lb")}
            state["status"] = {"loadBalancer": {"ingress": [ingress]}}
    if cluster_scoped:
        return str(meta["name"])
    return f"{meta['namespace']}/{meta['name']}"


def _ip(prefix: str, *key: str) -> str:
    """A stable address in `prefix` (two octets), never .0/.1/.255."""
    n = int(_hex(*key, length=4), 16)
    return f"{prefix}.{n % 256}.{(n >> 8) % 252 + 2}"


def _uuid(key: str) -> str:
    h = _hex(key, length=32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Namespace",
        "Node",
        "PersistentVolume",
        "StorageClass",
        "CustomResourceDefinition",
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
    }
)
"""Kinds that live outside any namespace (core kinds plus the add-ons' cluster-wide CRDs)."""


# --- invokes ----------------------------------------------------------------------------------
def _policy_document(facts: CloudFacts, args: Mapping[str, Any]) -> Outputs:
    """Render `aws.iam.get_policy_document` statements as the provider does (a one-element
    list becomes a plain string)."""

    def one(values: list[Any]) -> Any:
        return values[0] if len(values) == 1 else sorted(values)

    statements = []
    for st in args.get("statements") or []:
        out: dict[str, Any] = {}
        if st.get("sid"):
            out["Sid"] = st["sid"]
        out["Effect"] = st.get("effect", "Allow")
        for field, name in (("actions", "Action"), ("notActions", "NotAction")):
            if st.get(field):
                out[name] = one(list(st[field]))
        for field, name in (("resources", "Resource"), ("notResources", "NotResource")):
            if st.get(field):
                out[name] = one(list(st[field]))
        if st.get("principals"):
            out["Principal"] = {p["type"]: one(list(p["identifiers"])) for p in st["principals"]}
        if st.get("conditions"):
            cond: dict[str, dict[str, Any]] = {}
            for c in st["conditions"]:
                cond.setdefault(c["test"], {})[c["variable"]] = one(list(c["values"]))
            out["Condition"] = cond
        statements.append(out)
    doc = {"Version": args.get("version", "2012-10-17"), "Statement": statements}
    text = json.dumps(doc, indent=2)
    return {"json": text, "minifiedJson": json.dumps(doc, separators=(",", ":")), "id": _hex(text)}


def _eks_get_cluster(
    facts: CloudFacts, subnets: dict[str, str], args: Mapping[str, Any]
) -> Outputs:
    name = str(args.get("name", "cluster"))
    key = f"aws:eks/cluster:Cluster::{name}"
    for zone in facts.zones:
        subnets[f"subnet-{_hex(key, zone)}"] = zone
    return {
        "id": name,
        "name": name,
        "arn": _aws_arn(facts, "eks", f"cluster/{name}"),
        "endpoint": _eks_endpoint(facts, key),
        "certificateAuthorities": [{"data": CA_DATA}],
        "identities": [{"oidcs": [{"issuer": _oidc_issuer(facts, key)}]}],
        "status": "ACTIVE",
        "version": "1.33",
        "platformVersion": "eks.1",
        "roleArn": _aws_arn(facts, "iam", f"role/{name}-cluster"),
        "accessConfigs": [{"authenticationMode": "API_AND_CONFIG_MAP"}],
        "kubernetesNetworkConfigs": [{"ipFamily": "ipv4", "serviceIpv4Cidr": "172.20.0.0/16"}],
        "vpcConfig": {
            "vpcId": f"vpc-{_hex(key, 'vpc')}",
            "subnetIds": sorted(subnets),
            "clusterSecurityGroupId": f"sg-{_hex(key, 'cluster-sg')}",
            "securityGroupIds": [],
            "endpointPrivateAccess": True,
            "endpointPublicAccess": False,
            "publicAccessCidrs": [],
        },
        "tags": {},
    }


def _filter_values(args: Mapping[str, Any], *names: str) -> list[str]:
    return [
        str(v)
        for f in args.get("filters") or []
        if f.get("name") in names
        for v in f.get("values") or []
    ]


def _aws_subnets(facts: CloudFacts, subnets: dict[str, str], args: Mapping[str, Any]) -> Outputs:
    """Private subnets: one per queried zone (default: the environment's zones)."""
    zones = _filter_values(args, "availability-zone", "availabilityZone") or list(facts.zones)
    vpc = (_filter_values(args, "vpc-id") or ["vpc"])[0]
    ids = []
    for zone in zones:
        sid = f"subnet-{_hex(vpc, zone)}"
        subnets[sid] = zone
        ids.append(sid)
    return {"id": facts.region, "ids": ids, "filters": args.get("filters"), "region": facts.region}


def _aws_subnet(facts: CloudFacts, subnets: dict[str, str], args: Mapping[str, Any]) -> Outputs:
    """A subnet by id answers with the zone it was handed out for."""
    sid = str(args.get("id") or f"subnet-{_hex(json.dumps(args, sort_keys=True, default=str))}")
    fallback = facts.zones[0] if facts.zones else f"{facts.region}a"
    zone = subnets.get(sid) or (_filter_values(args, "availability-zone") or [fallback])[0]
    return {
        "id": sid,
        "arn": _aws_arn(facts, "ec2", f"subnet/{sid}"),
        "availabilityZone": zone,
        "vpcId": f"vpc-{_hex(sid, 'vpc')}",
        "cidrBlock": "10.64.0.0/19",
        "ownerId": facts.account_id,
        "tags": {},
    }


def _gke_get_cluster(facts: CloudFacts, args: Mapping[str, Any]) -> Outputs:
    name = str(args.get("name", "cluster"))
    project = str(args.get("project") or facts.project or "project")
    location = str(args.get("location") or facts.region)
    rid = f"projects/{project}/locations/{location}/clusters/{name}"
    octet = int(_hex(rid, length=2), 16)
    return {
        "id": rid,
        "name": name,
        "project": project,
        "location": location,
        "endpoint": f"34.{octet}.{(octet * 7) % 256}.{(octet * 13) % 256}",
        "masterAuths": [{"clusterCaCertificate": CA_DATA, "clientCertificateConfigs": []}],
        "masterVersion": "1.33.5-gke.1201000",
        "nodeLocations": list(facts.zones),
        "network": f"projects/{project}/global/networks/default",
        "subnetwork": f"projects/{project}/regions/{facts.region}/subnetworks/default",
        "selfLink": f"https://container.googleapis.com/v1/{rid}",
        "workloadIdentityConfigs": [{"workloadPool": f"{project}.svc.id.goog"}],
        "releaseChannels": [{"channel": "REGULAR"}],
        "privateClusterConfigs": [],
        "ipAllocationPolicies": [
            {"clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"}
        ],
        "resourceLabels": {},
    }


def _answers(facts: CloudFacts) -> dict[str, Callable[[Mapping[str, Any]], Outputs]]:
    subnets: dict[str, str] = {}  # subnet id -> zone, for invokes that look a subnet up by id
    region = facts.region
    project = facts.project or "project"
    return {
        "aws:index/getCallerIdentity:getCallerIdentity": lambda a: {
            "id": facts.account_id,
            "accountId": facts.account_id,
            "arn": f"arn:aws:sts::{facts.account_id}:assumed-role/deployer/inferplane",
            "userId": "AROAEXAMPLEDEPLOYER:inferplane",
        },
        "aws:index/getRegion:getRegion": lambda a: {
            "id": region,
            "name": region,
            "region": region,
            "endpoint": f"ec2.{region}.amazonaws.com",
            "description": region,
        },
        "aws:index/getPartition:getPartition": lambda a: {
            "id": "aws",
            "partition": "aws",
            "dnsSuffix": "amazonaws.com",
            "reverseDnsPrefix": "com.amazonaws",
        },
        "aws:index/getAvailabilityZones:getAvailabilityZones": lambda a: {
            "id": region,
            "names": list(facts.zones),
            "zoneIds": [f"az{i + 1}" for i in range(len(facts.zones))],
            "state": "available",
        },
        "aws:eks/getCluster:getCluster": lambda a: _eks_get_cluster(facts, subnets, a),
        "aws:eks/getClusterAuth:getClusterAuth": lambda a: {
            "id": a.get("name"),
            "name": a.get("name"),
            "token": "k8s-aws-v1.offline",
        },
        "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": lambda a: {
            "id": a.get("arn") or "oidc",
            "arn": a.get("arn")
            or _aws_arn(
                facts, "iam", f"oidc-provider/{str(a.get('url', '')).removeprefix('https://')}"
            ),
            "url": str(a.get("url") or "").removeprefix("https://"),
            "clientIdLists": ["sts.amazonaws.com"],
            "thumbprintLists": ["9e99a48a9960b14926bb7f3b02e22da2b0ab7280"],
            "tags": {},
        },
        "aws:iam/getPolicyDocument:getPolicyDocument": lambda a: _policy_document(facts, a),
        "aws:ec2/getSubnets:getSubnets": lambda a: _aws_subnets(facts, subnets, a),
        "aws:ec2/getSubnet:getSubnet": lambda a: _aws_subnet(facts, subnets, a),
        "aws:ec2/getVpc:getVpc": lambda a: {
            "id": a.get("id") or f"vpc-{_hex(region)}",
            "cidrBlock": "10.64.0.0/16",
            "arn": _aws_arn(facts, "ec2", f"vpc/{a.get('id') or 'vpc'}"),
            "tags": {},
        },
        "aws:ssm/getParameter:getParameter": lambda a: {
            "id": a.get("name"),
            "name": a.get("name"),
            "type": "String",
            "value": f"ami-{_hex(str(a.get('name')))}",
            "insecureValue": f"ami-{_hex(str(a.get('name')))}",
        },
        "gcp:container/getCluster:getCluster": lambda a: _gke_get_cluster(facts, a),
        "gcp:organizations/getClientConfig:getClientConfig": lambda a: {
            "id": project,
            "project": project,
            "region": region,
            "zone": facts.zones[0] if facts.zones else "",
            "accessToken": "ya29.offline",
        },
        "gcp:organizations/getProject:getProject": lambda a: {
            "id": f"projects/{a.get('projectId') or project}",
            "projectId": a.get("projectId") or project,
            "name": a.get("projectId") or project,
            "number": str(int(_hex(project, length=10), 16))[:12],
        },
        "gcp:compute/getZones:getZones": lambda a: {
            "id": region,
            "names": list(facts.zones),
            "region": region,
            "project": project,
        },
    }


class CloudMocks(Mocks):
    """Mocks whose outputs look like the real providers' (see the module docstring)."""

    def __init__(self, facts: CloudFacts):
        self.facts = facts
        self._answers = _answers(facts)

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
        else:
            rid = f"{args.name}-{_hex(typ, args.name, length=8)}"
        return str(args.resource_id or rid), state

    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        answer = self._answers.get(args.token)
        if answer is not None:
            return answer(args.args), []
        # An invoke nobody taught us: echo the arguments, which is what most data sources
        # do for the fields they were queried by.
        return {
            "id": _hex(args.token, json.dumps(args.args, sort_keys=True, default=str)),
            **args.args,
        }, []
