"""The offline harness: what it records, how it keeps secrets, and that it can run again."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest

from inferplane.app.offline import SECRET, Recording, run_callable, run_program
from inferplane.app.offline_mocks import CA_DATA, CloudFacts
from inferplane.blueprint.errors import BlueprintError, Diagnostic, Location

AWS = CloudFacts(cloud="aws", region="us-east-1", zones=("us-east-1a", "us-east-1b"))
GCP = CloudFacts(
    cloud="gcp", region="us-central1", zones=("us-central1-a",), project="acme-ml-prod"
)
TOKEN = "hf_offline_test_token_6f1c0de"


class Box(pulumi.ComponentResource):
    """A small component in the shape every inferplane component has."""

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("inferplane:test:Box", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig="{}", opts=child)
        on_cluster = pulumi.ResourceOptions(parent=self, provider=self.provider)
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns", metadata={"name": "demo"}, opts=on_cluster
        )
        self.secret = k8s.core.v1.Secret(
            f"{name}-token",
            metadata={"name": "tokens", "namespace": "demo"},
            string_data={"HF_TOKEN": pulumi.Output.secret(TOKEN)},
            opts=on_cluster,
        )
        self.service = k8s.core.v1.Service(
            f"{name}-lb",
            metadata={"name": "chat-lb", "namespace": "demo"},
            spec={"type": "LoadBalancer", "ports": [{"name": "http", "port": 8000}]},
            opts=pulumi.ResourceOptions(
                parent=self, provider=self.provider, depends_on=[self.namespace]
            ),
        )
        self.register_outputs({})


def box_program() -> None:
    box = Box("demo")
    pulumi.export("lb", box.service.status.load_balancer.ingress[0])
    pulumi.export("token", box.secret.string_data)


def everything(rec: Recording) -> str:
    return json.dumps(
        [[r.type, r.name, r.inputs] for r in rec] + [rec.outputs, [i.args for i in rec.invokes]],
        default=str,
    )


def test_urns_carry_every_ancestor_type_as_the_engine_makes_them() -> None:
    """The engine qualifies a child's type with its parent's whole qualified type
    (pulumi/pulumi pkg/resource/deploy/deployment.go `generateURN`, urn.go `New`);
    the SDK's MockMonitor keeps only the parent's last type. `pulumi preview --policy-pack`
    reported a Deployment under InferenceStack > ModelServer as
    `...InferenceStack$...ModelServer$kubernetes:apps/v1:Deployment::...` while
    `inferplane check` named it `...ModelServer$kubernetes:apps/v1:Deployment::...`."""

    class Outer(pulumi.ComponentResource):
        def __init__(self, name: str) -> None:
            super().__init__("inferplane:test:Outer", name, None, None)
            Box(f"{name}-box", opts=pulumi.ResourceOptions(parent=self))
            self.register_outputs({})

    rec = run_callable(lambda: Outer("top"), stack="staging", facts=AWS, config={})
    assert rec.named("top", "inferplane:test:Outer").urn == (
        "urn:pulumi:staging::inferplane::inferplane:test:Outer::top"
    )
    assert rec.named("top-box-lb", "kubernetes:core/v1:Service").urn == (
        "urn:pulumi:staging::inferplane::"
        "inferplane:test:Outer$inferplane:test:Box$kubernetes:core/v1:Service::top-box-lb"
    )


def test_records_types_names_parents_providers_and_dependencies() -> None:
    rec = run_callable(box_program, stack="staging", facts=AWS, config={})
    assert [r.type for r in rec.children(None)] == ["inferplane:test:Box"]
    box = rec.named("demo", "inferplane:test:Box")
    assert not box.custom and box.parent is None
    assert {r.name for r in rec.children(box)} == {"demo-k8s", "demo-ns", "demo-token", "demo-lb"}
    provider = rec.named("demo-k8s")
    lb = rec.named("demo-lb", "kubernetes:core/v1:Service")
    assert lb.parent == box.urn and rec.parent_of(lb) == box
    assert lb.provider == provider.urn
    assert rec.named("demo-ns").urn in lb.depends_on
    assert lb.urn == (
        "urn:pulumi:staging::inferplane::inferplane:test:Box$kubernetes:core/v1:Service::demo-lb"
    )
    # inputs as the provider receives them: camelCase, apiVersion/kind filled in, numbers
    # as floats
    assert lb.inputs["apiVersion"] == "v1" and lb.inputs["kind"] == "Service"
    assert lb.get("spec", "ports", 0, "port") == 8000.0
    assert lb.get("spec", "missing", default="x") == "x"
    assert rec.counts() == {
        "inferplane:test:Box": 1,
        "kubernetes:core/v1:Namespace": 1,
        "kubernetes:core/v1:Secret": 1,
        "kubernetes:core/v1:Service": 1,
        "pulumi:providers:kubernetes": 1,
    }
    assert len(rec) == 5 and rec[0] in rec.resources
    assert rec.wall_time_s > 0


def test_secrets_are_masked_everywhere_but_keep_their_shape() -> None:
    def program() -> None:
        box_program()
        key = pulumi.Config("inferplane").require_secret("ngc_key")
        k8s.core.v1.Secret(
            "ngc",
            metadata={"name": "ngc"},
            string_data={"key": key},
            opts=pulumi.ResourceOptions(provider=k8s.Provider("p", kubeconfig="{}")),
        )

    rec = run_callable(
        program,
        stack="staging",
        facts=AWS,
        config={"inferplane:ngc_key": "nvapi-SECRET-KEY"},
        secret_config=frozenset({"inferplane:ngc_key"}),
    )
    assert rec.named("demo-token").inputs["stringData"] == {"HF_TOKEN": SECRET}
    assert rec.named("ngc").inputs["stringData"] == {"key": SECRET}
    assert rec.outputs["token"] == {"HF_TOKEN": SECRET}
    dump = everything(rec) + repr(rec)
    assert TOKEN not in dump and "nvapi-SECRET-KEY" not in dump


def test_mocked_outputs_look_like_the_clouds() -> None:
    seen: dict[str, Any] = {}

    def program() -> None:
        cluster = aws.eks.Cluster(
            "c",
            role_arn="arn:aws:iam::123456789012:role/x",
            vpc_config={"subnet_ids": ["subnet-1"]},
        )
        role = aws.iam.Role("r", assume_role_policy="{}")
        subnet = aws.ec2.Subnet(
            "s", vpc_id="vpc-1", cidr_block="10.0.0.0/20", availability_zone="us-east-1b"
        )
        existing = aws.eks.get_cluster_output(name="prod-eks")
        subnets = aws.ec2.get_subnets_output(
            filters=[{"name": "availability-zone", "values": ["us-east-1b"]}]
        )
        document = aws.iam.get_policy_document_output(
            statements=[
                {
                    "actions": ["s3:GetObject"],
                    "resources": ["arn:aws:s3:::b/p/*"],
                }
            ]
        )
        pulumi.Output.all(
            cluster.endpoint,
            cluster.certificate_authority,
            cluster.identities,
            role.arn,
            subnet.availability_zone,
            subnet.id,
            existing.endpoint,
            subnets.ids,
            document.json,
        ).apply(lambda values: seen.update(aws=values))

    run_callable(program, stack="s", facts=AWS, config={})
    endpoint, ca, identities, role_arn, zone, subnet_id, existing, ids, doc = seen["aws"]
    assert re.fullmatch(r"https://[0-9A-F]{32}\.gr7\.us-east-1\.eks\.amazonaws\.com", endpoint)
    assert ca["data"] == CA_DATA
    assert identities[0]["oidcs"][0]["issuer"].startswith(
        "https://oidc.eks.us-east-1.amazonaws.com/id/"
    )
    assert re.fullmatch(r"arn:aws:iam::123456789012:role/r-[0-9a-f]{7}", role_arn)
    assert zone == "us-east-1b" and re.fullmatch(r"subnet-[0-9a-f]{17}", subnet_id)
    assert existing.endswith(".eks.amazonaws.com")
    assert len(ids) == 1 and ids[0].startswith("subnet-")
    assert json.loads(doc)["Statement"] == [
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/p/*"}
    ]

    def gcp_program() -> None:
        sa = gcp.serviceaccount.Account("sa", account_id="prod-model-reader")
        gke = gcp.container.get_cluster_output(name="prod-gke", location="us-central1")
        pulumi.Output.all(sa.email, gke.endpoint, gke.master_auths).apply(
            lambda values: seen.update(gcp=values)
        )

    run_callable(gcp_program, stack="prod", facts=GCP, config={})
    email, gke_endpoint, auths = seen["gcp"]
    assert email == "prod-model-reader@acme-ml-prod.iam.gserviceaccount.com"
    assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", gke_endpoint)
    assert auths[0]["cluster_ca_certificate"] == CA_DATA


def test_kubernetes_outputs_echo_metadata_and_load_balancers_get_an_address() -> None:
    rec = run_callable(box_program, stack="staging", facts=AWS, config={})
    hostname = rec.outputs["lb"]["hostname"]
    assert re.fullmatch(r"k8s-demo-chat-lb-[0-9a-f]{10}\.elb\.us-east-1\.amazonaws\.com", hostname)
    # GKE's internal load balancers get an address in the VPC, not a name
    gcp_rec = run_callable(box_program, stack="prod", facts=GCP, config={})
    assert set(gcp_rec.outputs["lb"]) == {"ip"}
    assert re.fullmatch(r"10\.128\.\d+\.\d+", gcp_rec.outputs["lb"]["ip"])


def test_invokes_and_config_are_recorded_and_visible() -> None:
    seen: dict[str, Any] = {}

    def program() -> None:
        config = pulumi.Config("inferplane")
        seen.update(
            offline=config.get_bool("offline"),
            stack=pulumi.get_stack(),
            project=pulumi.get_project(),
        )
        aws.get_caller_identity_output().account_id.apply(lambda a: seen.update(account=a))

    rec = run_callable(program, stack="staging", facts=AWS, config={"inferplane:offline": "true"})
    assert seen == {
        "offline": True,
        "stack": "staging",
        "project": "inferplane",
        "account": "123456789012",
    }
    assert [i.token for i in rec.invokes] == ["aws:index/getCallerIdentity:getCallerIdentity"]


def test_lookups_of_existing_resources_are_recorded_as_reads() -> None:
    def program() -> None:
        aws.ec2.Vpc.get("existing-vpc", "vpc-0123456789abcdef0")

    rec = run_callable(program, stack="s", facts=AWS, config={})
    vpc = rec.named("existing-vpc")
    assert vpc.read and vpc.type == "aws:ec2/vpc:Vpc"


def test_program_errors_surface_unchanged_and_the_next_run_is_clean() -> None:
    problem = BlueprintError([Diagnostic(Location("bp.yaml", 3, 5), ("models",), "bad")])

    def failing() -> None:
        box_program()
        raise problem

    with pytest.raises(BlueprintError) as caught:
        run_callable(failing, stack="staging", facts=AWS, config={})
    assert caught.value is problem

    def failing_apply() -> None:
        Box("x").service.metadata.apply(lambda _: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        run_callable(failing_apply, stack="staging", facts=AWS, config={})

    first = run_callable(box_program, stack="staging", facts=AWS, config={})
    second = run_callable(box_program, stack="staging", facts=AWS, config={})
    assert first.resources == second.resources and first.outputs == second.outputs
    assert len(first) == 5  # nothing left over from the failed runs


def test_a_run_leaves_the_callers_event_loop_and_pulumi_state_alone() -> None:
    from pulumi.runtime import settings

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        run_callable(box_program, stack="staging", facts=AWS, config={})
        assert asyncio.get_event_loop() is loop and not loop.is_closed()
        assert settings.get_root_resource() is None
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def test_run_program_builds_the_stack_program_for_an_environment(reference_env) -> None:
    env = reference_env("staging")
    seen: dict[str, Any] = {}

    def program(e) -> None:
        seen.update(
            env=e,
            blueprint=pulumi.Config("inferplane").get("blueprint"),
            region=pulumi.Config("aws").get("region"),
        )

    rec = run_program(env, program=program)
    assert seen == {"env": env, "blueprint": env.file, "region": "us-east-1"}
    assert rec.stack == "staging" and len(rec) == 0


def test_invokes_about_an_existing_eks_cluster_agree_with_each_other() -> None:
    seen: dict[str, Any] = {}

    def program() -> None:
        info = aws.eks.get_cluster_output(name="shared-eks")
        zones = info.vpc_config.subnet_ids.apply(
            lambda ids: [aws.ec2.get_subnet(id=i).availability_zone for i in ids]
        )
        oidc = aws.iam.get_open_id_connect_provider_output(
            url=info.identities.apply(lambda ids: ids[0].oidcs[0].issuer)
        )
        pulumi.Output.all(zones, oidc.arn, info.certificate_authorities).apply(
            lambda values: seen.update(values=values)
        )

    run_callable(program, stack="s", facts=AWS, config={})
    zones, oidc_arn, cas = seen["values"]
    assert sorted(zones) == ["us-east-1a", "us-east-1b"]  # one subnet per environment zone
    assert re.fullmatch(
        r"arn:aws:iam::123456789012:oidc-provider/oidc\.eks\.us-east-1\.amazonaws\.com/id/[0-9A-F]{32}",
        oidc_arn,
    )
    assert cas[0]["data"] == CA_DATA
