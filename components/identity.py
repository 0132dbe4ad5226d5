"""Cloud identities for reading the model store, bound to Kubernetes ServiceAccounts.

Up to four identities per environment, each only when something uses it
(`ModelStoreAccessArgs.writers`: a blueprint without TensorRT builds gets no engine builder,
one without hf:// sources no stager, one without a vLLM compile cache no compiler):
- ``model-reader`` (serving pods): read-only, on each model's (and LoRA adapter's) source
  and the blueprint's own ``.inferplane`` areas of the store (`Environment.read_locations`),
  never the whole store another blueprint may share;
- ``engine-builder`` (TensorRT engine builds): the same reads, and writes only under
  ``<model_store>/.inferplane/engines/<blueprint>/``;
- ``weights-stager`` (the Jobs that copy ``hf://`` sources into the store): reads and
  writes only under ``<model_store>/.inferplane/hub/<blueprint>/``, nothing else of the store;
- ``vllm-compiler`` (the Jobs that stage a vLLM model's ``torch.compile`` cache): the
  model-reader's reads, and writes only under
  ``<model_store>/.inferplane/vllm-compile/<blueprint>/``.

Every write grant is the blueprint's own area (`naming.store_area`): blueprints that share a
model store cannot overwrite each other's engines, staged weights or compile caches, which
their replicas would then load and run.

AWS: IAM roles for service accounts (IRSA) trusted only for that ServiceAccount and the STS
audience. GCP: service accounts bound through Workload Identity, with IAM conditions that
limit them to the prefix. Kubernetes: no cloud identity; the ServiceAccounts alone, and each
role's S3 keys come from a Secret that already exists in the namespace
(`ModelStoreAccessArgs.store_secrets`), whose scope is the store's own bucket policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.components import iam
from inferplane.components.cloud import Cloud, Ownership, aws_tags, gcp_account_id
from inferplane.components.gcs_conditions import gcs_read_condition, gcs_write_condition

IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"
GKE_ANNOTATION = "iam.gke.io/gcp-service-account"
GCS_READ_ROLE = "roles/storage.objectViewer"
GCS_WRITE_ROLE = "roles/storage.objectCreator"
"""Create only: no ``storage.objects.delete``, so no overwrite either (replacing an object
needs both, https://cloud.google.com/storage/docs/access-control/iam-permissions). A writer
never needs to: every attempt publishes into a folder of its own and then one marker
(`inferplane.components.serving.store.store_cli.publish_attempt`), so a retried Job succeeds and
a writer cannot replace an engine, a staged copy or a compile cache that replicas run."""
WORKLOAD_IDENTITY_ROLE = "roles/iam.workloadIdentityUser"
WRITERS: frozenset[str] = frozenset(
    {naming.ENGINE_BUILDER_SA, naming.WEIGHTS_STAGER_SA, naming.VLLM_COMPILER_SA}
)
"""The roles that may write to the store, each for its own Jobs."""


# --- AWS policy documents --------------------------------------------------------------
def s3_read_statements(locations: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """GetObject under each (bucket, folder), in one statement; ListBucket of each bucket
    only for keys under its folders. Grouped, so that a blueprint of many models stays far
    inside IAM's size limit of a role's inline policies (10,240 characters:
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html). Raises
    ValueError for a key that is not a folder (`folder_key`)."""
    by_bucket: dict[str, list[str]] = {}
    for bucket, prefix in locations:
        prefixes = by_bucket.setdefault(bucket, [])
        if folder_key(prefix) not in prefixes:
            prefixes.append(prefix)
    objects = [f"arn:aws:s3:::{b}/{p}*" for b, prefixes in by_bucket.items() for p in prefixes]
    if not objects:
        return []
    statements: list[dict[str, Any]] = [
        {
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": objects[0] if len(objects) == 1 else objects,
        }
    ]
    for bucket, prefixes in by_bucket.items():
        listing: dict[str, Any] = {
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": f"arn:aws:s3:::{bucket}",
        }
        if all(prefixes):  # an empty prefix is the whole bucket: no condition
            listing["Condition"] = {"StringLike": {"s3:prefix": [f"{p}*" for p in prefixes]}}
        statements.append(listing)
    return statements


def folder_key(prefix: str) -> str:
    """`prefix`, a key every grant of this module takes: a folder ending in ``/``, or ``""``
    for the whole bucket. Anything else raises ValueError: as a prefix it would also match
    its siblings (``llama*`` covers ``llama-finance/``, ``.inferplane*`` every blueprint's
    areas), as an IAM resource pattern and as a Cloud Storage ``startsWith`` condition alike."""
    if prefix and not prefix.endswith("/"):
        raise ValueError(
            f"a storage grant names a folder ending in '/' (or '' for a whole bucket), not "
            f"{prefix!r}, which as a prefix would also match its siblings"
        )
    return prefix


def engine_location(store_bucket: str, store_prefix: str, blueprint: str) -> tuple[str, str]:
    """(bucket, prefix) where the blueprint's engine builds write:
    ``<store prefix>.inferplane/engines/<blueprint>/``."""
    return store_bucket, f"{store_prefix}{naming.store_area(naming.ENGINE_PREFIX, blueprint)}/"


def hub_location(store_bucket: str, store_prefix: str, blueprint: str) -> tuple[str, str]:
    """(bucket, prefix) where the blueprint's staging Jobs write:
    ``<store prefix>.inferplane/hub/<blueprint>/``."""
    return store_bucket, f"{store_prefix}{naming.store_area(naming.HUB_PREFIX, blueprint)}/"


def compile_location(store_bucket: str, store_prefix: str, blueprint: str) -> tuple[str, str]:
    """(bucket, prefix) where the blueprint's compile-cache Jobs write:
    ``<store prefix>.inferplane/vllm-compile/<blueprint>/``."""
    area = naming.store_area(naming.VLLM_COMPILE_PREFIX, blueprint)
    return store_bucket, f"{store_prefix}{area}/"


def s3_write_statement(bucket: str, prefix: str) -> dict[str, Any]:
    """PutObject (and aborting its multipart uploads) under one folder (`folder_key`)."""
    folder_key(prefix)
    return {
        "Effect": "Allow",
        "Action": ["s3:PutObject", "s3:AbortMultipartUpload"],
        "Resource": f"arn:aws:s3:::{bucket}/{prefix}*",
    }


def s3_stager_policy(store_bucket: str, store_prefix: str, blueprint: str) -> str:
    """Read, list and write the blueprint's hub prefix only: the completion marker is read
    there and ``aws s3 sync`` lists the destination before it uploads."""
    hub = hub_location(store_bucket, store_prefix, blueprint)
    return iam.document([*s3_read_statements([hub]), s3_write_statement(*hub)])


def s3_reader_policy(read_locations: Sequence[tuple[str, str]]) -> str:
    return iam.document(s3_read_statements(read_locations))


def s3_builder_policy(
    read_locations: Sequence[tuple[str, str]], store_bucket: str, store_prefix: str, blueprint: str
) -> str:
    write = s3_write_statement(*engine_location(store_bucket, store_prefix, blueprint))
    return iam.document([*s3_read_statements(read_locations), write])


def s3_compiler_policy(
    read_locations: Sequence[tuple[str, str]], store_bucket: str, store_prefix: str, blueprint: str
) -> str:
    """The reader's reads (the weights, and the cache's own marker in the store) and writes
    under the blueprint's compile-cache prefix only."""
    write = s3_write_statement(*compile_location(store_bucket, store_prefix, blueprint))
    return iam.document([*s3_read_statements(read_locations), write])


@dataclass(frozen=True)
class ModelStoreAccessArgs:
    """Arguments of `ModelStoreAccess`."""

    cloud: Cloud
    """``aws`` (IRSA roles) or ``gcp`` (service accounts through Workload Identity)."""
    owner: Ownership
    """Tags of the roles, the prefix of the identities' cloud names, and the ServiceAccounts'
    ``app.kubernetes.io/part-of`` label (the blueprint)."""
    namespace: pulumi.Input[str]
    """Namespace of the ServiceAccounts (the blueprint's namespace)."""
    provider: k8s.Provider
    """The Kubernetes provider of the ServiceAccounts."""
    store_bucket: str
    """The model store's bucket (S3 or GCS, as `cloud`)."""
    store_prefix: str
    """The model store's key prefix, ``""`` (the whole bucket) or ending in ``/``; engine
    builds write under ``<store_prefix>.inferplane/engines/<owner.blueprint>/``."""
    read_locations: tuple[tuple[str, str], ...]
    """(bucket, folder) pairs the reading identities may read (`Environment.read_locations`):
    each folder ends in ``/``, ``""`` reads the whole bucket (`folder_key`)."""
    project: str | None = None
    """GCP: the project of the service accounts (required on GCP)."""
    oidc_provider_arn: pulumi.Input[str] | None = None
    """AWS: the cluster's IAM OIDC provider."""
    oidc_issuer: pulumi.Input[str] | None = None
    """AWS: the OIDC issuer, host and path without ``https://``."""
    workload_pool: pulumi.Input[str] | None = None
    """GCP: the cluster's Workload Identity pool, ``<project>.svc.id.goog``."""
    store_secrets: Mapping[str, str] = field(default_factory=dict)
    """Kubernetes: ServiceAccount name -> the existing Secret with that role's keys (a role
    the stack never uses may have none)."""
    writers: frozenset[str] = WRITERS
    """The writing roles to create (of `WRITERS`): only those whose Jobs run. A role left
    out gets no cloud identity, no grant and no ServiceAccount, and its identity output is
    ``""``. Default: all three."""


class ModelStoreAccess(pulumi.ComponentResource):
    """Read-only, engine-writing, hub-staging and compile-cache identities for the model
    store, with their Kubernetes ServiceAccounts (`naming.MODEL_READER_SA`,
    `naming.ENGINE_BUILDER_SA`, `naming.WEIGHTS_STAGER_SA`, `naming.VLLM_COMPILER_SA`).

    Outputs:
      reader_identity / builder_identity / stager_identity / compiler_identity: IAM role ARN
        (AWS), service-account email (GCP), or the name of the role's Secret (Kubernetes;
        ``""`` for a role without one).
      service_accounts: ServiceAccount name -> `ServiceAccount`.
    """

    reader_identity: pulumi.Output[str]
    builder_identity: pulumi.Output[str]
    stager_identity: pulumi.Output[str]
    compiler_identity: pulumi.Output[str]
    service_accounts: dict[str, k8s.core.v1.ServiceAccount]

    def __init__(
        self, name: str, args: ModelStoreAccessArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:identity:ModelStoreAccess", name, None, opts)
        self._name, self._args = name, args
        bp = args.owner.blueprint
        annotation: str | None
        wanted = args.writers
        none: pulumi.Output[str] = pulumi.Output.from_input("")
        self.builder_identity = self.stager_identity = self.compiler_identity = none
        if args.cloud == "kubernetes":
            secret = args.store_secrets.get
            self.reader_identity = pulumi.Output.from_input(secret(naming.MODEL_READER_SA, ""))
            if naming.ENGINE_BUILDER_SA in wanted:
                self.builder_identity = pulumi.Output.from_input(
                    secret(naming.ENGINE_BUILDER_SA, "")
                )
            if naming.WEIGHTS_STAGER_SA in wanted:
                self.stager_identity = pulumi.Output.from_input(
                    secret(naming.WEIGHTS_STAGER_SA, "")
                )
            if naming.VLLM_COMPILER_SA in wanted:
                self.compiler_identity = pulumi.Output.from_input(
                    secret(naming.VLLM_COMPILER_SA, "")
                )
            annotation = None
        elif args.cloud == "aws":
            reads = args.read_locations
            self.reader_identity = self._aws_role(naming.MODEL_READER_SA, s3_reader_policy(reads))
            if naming.ENGINE_BUILDER_SA in wanted:
                self.builder_identity = self._aws_role(
                    naming.ENGINE_BUILDER_SA,
                    s3_builder_policy(reads, args.store_bucket, args.store_prefix, bp),
                )
            if naming.WEIGHTS_STAGER_SA in wanted:
                self.stager_identity = self._aws_role(
                    naming.WEIGHTS_STAGER_SA,
                    s3_stager_policy(args.store_bucket, args.store_prefix, bp),
                )
            if naming.VLLM_COMPILER_SA in wanted:
                self.compiler_identity = self._aws_role(
                    naming.VLLM_COMPILER_SA,
                    s3_compiler_policy(reads, args.store_bucket, args.store_prefix, bp),
                )
            annotation = IRSA_ANNOTATION
        else:
            engines = engine_location(args.store_bucket, args.store_prefix, bp)
            hub = hub_location(args.store_bucket, args.store_prefix, bp)
            self.reader_identity = self._gcp_account(naming.MODEL_READER_SA, "reader")
            if naming.ENGINE_BUILDER_SA in wanted:
                self.builder_identity = self._gcp_account(
                    naming.ENGINE_BUILDER_SA, "builder", write=("engine-write", "engines", engines)
                )
            if naming.WEIGHTS_STAGER_SA in wanted:
                self.stager_identity = self._gcp_account(
                    naming.WEIGHTS_STAGER_SA,
                    "stager",
                    write=("hub-write", "hub", hub),
                    reads=(hub,),
                )
            if naming.VLLM_COMPILER_SA in wanted:
                self.compiler_identity = self._gcp_account(
                    naming.VLLM_COMPILER_SA,
                    "compiler",
                    write=(
                        "compile-write",
                        "compile",
                        compile_location(args.store_bucket, args.store_prefix, bp),
                    ),
                )
            annotation = GKE_ANNOTATION
        self.service_accounts = {
            sa: self._service_account(sa, annotation, identity)
            for sa, identity in (
                (naming.MODEL_READER_SA, self.reader_identity),
                (naming.ENGINE_BUILDER_SA, self.builder_identity),
                (naming.WEIGHTS_STAGER_SA, self.stager_identity),
                (naming.VLLM_COMPILER_SA, self.compiler_identity),
            )
            if sa == naming.MODEL_READER_SA or sa in wanted
        }
        self.register_outputs(
            {
                "reader_identity": self.reader_identity,
                "builder_identity": self.builder_identity,
                "stager_identity": self.stager_identity,
                "compiler_identity": self.compiler_identity,
                "service_accounts": self.service_accounts,
            }
        )

    def _aws_role(self, sa: str, policy: str) -> pulumi.Output[str]:
        args = self._args
        if args.oidc_provider_arn is None or args.oidc_issuer is None:
            raise ValueError("ModelStoreAccess on AWS needs oidc_provider_arn and oidc_issuer")
        _, arn = iam.irsa_role(
            f"{self._name}-{sa}",
            oidc_provider_arn=args.oidc_provider_arn,
            oidc_issuer=args.oidc_issuer,
            namespace=args.namespace,
            service_account=sa,
            policy=policy,
            tags=aws_tags(args.owner),
            parent=self,
            description=f"{sa} of {args.owner.stack}",
        )
        return arn

    def _gcp_account(
        self,
        sa: str,
        role: str,
        write: tuple[str, str, tuple[str, str]] | None = None,
        reads: Sequence[tuple[str, str]] | None = None,
    ) -> pulumi.Output[str]:
        """Service account `sa` reading `reads` (default: the store and every source) and,
        with `write` = (condition title, resource suffix, (bucket, prefix)), creating
        objects under that prefix only."""
        args = self._args
        if args.workload_pool is None or args.project is None:
            raise ValueError("ModelStoreAccess on GCP needs workload_pool and project")
        opts = pulumi.ResourceOptions(parent=self)
        stack = args.owner.stack
        account = gcp.serviceaccount.Account(
            f"{self._name}-{sa}",
            account_id=gcp_account_id(stack, role),
            display_name=f"{sa} of {stack}",
            project=args.project,
            opts=opts,
        )
        member = account.email.apply(lambda email: f"serviceAccount:{email}")
        grants: list[pulumi.CustomResource] = []
        for i, (bucket, prefix) in enumerate(args.read_locations if reads is None else reads):
            grants.append(
                gcp.storage.BucketIAMMember(
                    f"{self._name}-{sa}-read-{i}",
                    bucket=bucket,
                    role=GCS_READ_ROLE,
                    member=member,
                    condition=_condition("model-store-read", gcs_read_condition(bucket, prefix))
                    if prefix
                    else None,
                    opts=opts,
                )
            )
        if write is not None:
            title, suffix, (bucket, prefix) = write
            grants.append(
                gcp.storage.BucketIAMMember(
                    f"{self._name}-{sa}-write-{suffix}",
                    bucket=bucket,
                    role=GCS_WRITE_ROLE,
                    member=member,
                    condition=_condition(title, gcs_write_condition(bucket, prefix)),
                    opts=opts,
                )
            )
        grants.append(
            gcp.serviceaccount.IAMMember(
                f"{self._name}-{sa}-workload-identity",
                service_account_id=account.name,
                role=WORKLOAD_IDENTITY_ROLE,
                member=pulumi.Output.concat(
                    "serviceAccount:", args.workload_pool, "[", args.namespace, "/", sa, "]"
                ),
                opts=opts,
            )
        )
        return iam.after(account.email, *grants)

    def _service_account(
        self, sa: str, annotation: str | None, identity: pulumi.Output[str]
    ) -> k8s.core.v1.ServiceAccount:
        return k8s.core.v1.ServiceAccount(
            f"{self._name}-{sa}",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=sa,
                namespace=self._args.namespace,
                labels={
                    "app.kubernetes.io/managed-by": "inferplane",
                    "app.kubernetes.io/part-of": self._args.owner.blueprint,
                },
                annotations={annotation: identity} if annotation else None,
            ),
            # Model servers, builds and staging Jobs never call the Kubernetes API.
            automount_service_account_token=False,
            opts=pulumi.ResourceOptions(parent=self, provider=self._args.provider),
        )


def _condition(title: str, expression: str) -> gcp.storage.BucketIAMMemberConditionArgs:
    return gcp.storage.BucketIAMMemberConditionArgs(
        title=title,
        description="Scoped to the blueprint's model store prefix",
        expression=expression,
    )
