"""What the clouds' data sources answer, for the offline run (see `inferplane.app.offline_mocks`).

Answers come from the environment's facts (region, zones, project) and agree with the
outputs of the mocked resources: an existing EKS cluster's subnets are in the environment's
zones, looking a subnet up by id gives back its zone, and IAM policy documents render as
the AWS provider renders them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from inferplane.app.offline_values import (
    CA_DATA,
    CloudFacts,
    Outputs,
    aws_arn,
    eks_endpoint,
    oidc_issuer,
    stable_hex,
)


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
    return {
        "json": text,
        "minifiedJson": json.dumps(doc, separators=(",", ":")),
        "id": stable_hex(text),
    }


def _eks_get_cluster(
    facts: CloudFacts, subnets: dict[str, str], args: Mapping[str, Any]
) -> Outputs:
    name = str(args.get("name", "cluster"))
    key = f"aws:eks/cluster:Cluster::{name}"
    for zone in facts.zones:
        subnets[f"subnet-{stable_hex(key, zone)}"] = zone
    return {
        "id": name,
        "name": name,
        "arn": aws_arn(facts, "eks", f"cluster/{name}"),
        "endpoint": eks_endpoint(facts, key),
        "certificateAuthorities": [{"data": CA_DATA}],
        "identities": [{"oidcs": [{"issuer": oidc_issuer(facts, key)}]}],
        "status": "ACTIVE",
        "version": "1.33",
        "platformVersion": "eks.1",
        "roleArn": aws_arn(facts, "iam", f"role/{name}-cluster"),
        "accessConfigs": [{"authenticationMode": "API_AND_CONFIG_MAP"}],
        "kubernetesNetworkConfigs": [{"ipFamily": "ipv4", "serviceIpv4Cidr": "172.20.0.0/16"}],
        "vpcConfig": {
            "vpcId": f"vpc-{stable_hex(key, 'vpc')}",
            "subnetIds": sorted(subnets),
            "clusterSecurityGroupId": f"sg-{stable_hex(key, 'cluster-sg')}",
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
        sid = f"subnet-{stable_hex(vpc, zone)}"
        subnets[sid] = zone
        ids.append(sid)
    return {"id": facts.region, "ids": ids, "filters": args.get("filters"), "region": facts.region}


def _aws_subnet(facts: CloudFacts, subnets: dict[str, str], args: Mapping[str, Any]) -> Outputs:
    """A subnet by id answers with the zone it was handed out for."""
    sid = str(
        args.get("id") or f"subnet-{stable_hex(json.dumps(args, sort_keys=True, default=str))}"
    )
    fallback = facts.zones[0] if facts.zones else f"{facts.region}a"
    zone = subnets.get(sid) or (_filter_values(args, "availability-zone") or [fallback])[0]
    return {
        "id": sid,
        "arn": aws_arn(facts, "ec2", f"subnet/{sid}"),
        "availabilityZone": zone,
        "vpcId": f"vpc-{stable_hex(sid, 'vpc')}",
        "cidrBlock": "10.64.0.0/19",
        "ownerId": facts.account_id,
        "tags": {},
    }


REGION_ZONE_LETTERS = "abcd"
"""The offline region has zones a-d (plus any the environment names)."""


def _aws_zones(facts: CloudFacts, args: Mapping[str, Any]) -> Outputs:
    """The region's zones, without the ``excludeNames``; zone IDs follow the names."""
    every = sorted({*facts.zones, *(f"{facts.region}{c}" for c in REGION_ZONE_LETTERS)})
    parts = facts.region.split("-")  # us-east-1 -> use1, as AWS abbreviates zone IDs
    prefix = parts[0] + "".join(p[0] for p in parts[1:-1]) + parts[-1] if parts else "az"
    ids = {zone: f"{prefix}-az{i + 1}" for i, zone in enumerate(every)}
    excluded = set(args.get("excludeNames") or []) | {
        zone for zone, zid in ids.items() if zid in set(args.get("excludeZoneIds") or [])
    }
    names = [zone for zone in every if zone not in excluded]
    return {
        "id": facts.region,
        "names": names,
        "zoneIds": [ids[zone] for zone in names],
        "groupNames": [facts.region] * len(names),
        "state": args.get("state") or "available",
    }


def _gke_get_cluster(facts: CloudFacts, args: Mapping[str, Any]) -> Outputs:
    name = str(args.get("name", "cluster"))
    project = str(args.get("project") or facts.project or "project")
    location = str(args.get("location") or facts.region)
    rid = f"projects/{project}/locations/{location}/clusters/{name}"
    octet = int(stable_hex(rid, length=2), 16)
    return {
        "id": rid,
        "name": name,
        "project": project,
        "location": location,
        "endpoint": f"34.{octet}.{(octet * 7) % 256}.{(octet * 13) % 256}",
        "masterAuths": [{"clusterCaCertificate": CA_DATA, "clientCertificateConfigs": []}],
        "masterVersion": "1.33.5-gke.1201000",
        "minMasterVersion": "1.33",
        "enableL4IlbSubsetting": True,
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


MOCK_SECRET_VALUE = "mock-secret-value"
"""What a Secret Manager lookup answers under the mocks (never a real secret)."""


def answers(facts: CloudFacts) -> dict[str, Callable[[Mapping[str, Any]], Outputs]]:
    """Answers by invoke token; unknown tokens fall back to echoing their arguments."""
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
        # An offering found offline: in no zone, so the zone check has nothing to refuse.
        "aws:ec2/getCapacityBlockOffering:getCapacityBlockOffering": lambda a: {
            **a,
            "id": "cb-offline",
            "capacityBlockOfferingId": "cb-0offline000000000",
            "availabilityZone": "",
            "currencyCode": "USD",
            "upfrontFee": "0",
        },
        "aws:index/getPartition:getPartition": lambda a: {
            "id": "aws",
            "partition": "aws",
            "dnsSuffix": "amazonaws.com",
            "reverseDnsPrefix": "com.amazonaws",
        },
        "aws:index/getAvailabilityZones:getAvailabilityZones": lambda a: _aws_zones(facts, a),
        "aws:eks/getCluster:getCluster": lambda a: _eks_get_cluster(facts, subnets, a),
        "aws:eks/getClusterAuth:getClusterAuth": lambda a: {
            "id": a.get("name"),
            "name": a.get("name"),
            "token": "k8s-aws-v1.offline",
        },
        "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": lambda a: {
            "id": a.get("arn") or "oidc",
            "arn": a.get("arn")
            or aws_arn(
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
            "id": a.get("id") or f"vpc-{stable_hex(region)}",
            "cidrBlock": "10.64.0.0/16",
            "arn": aws_arn(facts, "ec2", f"vpc/{a.get('id') or 'vpc'}"),
            "tags": {},
        },
        "aws:ssm/getParameter:getParameter": lambda a: {
            "id": a.get("name"),
            "name": a.get("name"),
            "type": "String",
            "value": f"ami-{stable_hex(str(a.get('name')))}",
            "insecureValue": f"ami-{stable_hex(str(a.get('name')))}",
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
            "number": str(int(stable_hex(project, length=10), 16))[:12],
        },
        "gcp:compute/getZones:getZones": lambda a: {
            "id": region,
            "names": list(facts.zones),
            "region": region,
            "project": project,
        },
        # Secret lookups happen only in runs that are not offline (tests of the deploy
        # path); a fixed non-empty value stands for the secret.
        "aws:secretsmanager/getSecretVersion:getSecretVersion": lambda a: {
            **a,
            "id": str(a.get("secretId", "")),
            "secretString": MOCK_SECRET_VALUE,
        },
        "gcp:secretmanager/getSecretVersion:getSecretVersion": lambda a: {
            **a,
            "id": str(a.get("secret", "")),
            "secretData": MOCK_SECRET_VALUE,
        },
    }
