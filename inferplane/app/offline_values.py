"""Values the offline run shares between its resource mocks and its data-source answers, and
the record of which of them are made up.

The mocks give every computed output a well-formed value (an ARN, a subnet ID, an endpoint)
so that the program's code that parses or interpolates them runs as against the cloud. A
plan must not present those values as facts: `UnknownValues` remembers each one with what
a deploy would produce in its place (``<unknown: id of subnet shop-prod-private-a>``), and
`inferplane plan` shows that instead.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

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


def stable_hex(*parts: str, length: int = 17) -> str:
    """Hex digits derived from `parts`: where a cloud would pick random IDs, the same
    resource always gets the same ones."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:length]


def eks_endpoint(facts: CloudFacts, key: str) -> str:
    """An EKS API server URL, ``https://<32 hex>.gr7.<region>.eks.amazonaws.com``."""
    return f"https://{stable_hex(key, length=32).upper()}.gr7.{facts.region}.eks.amazonaws.com"


def oidc_issuer(facts: CloudFacts, key: str) -> str:
    """An EKS cluster's OIDC issuer URL (IRSA trust policies are written against it)."""
    return f"https://oidc.eks.{facts.region}.amazonaws.com/id/{stable_hex(key, length=32).upper()}"


def aws_arn(facts: CloudFacts, service: str, resource: str) -> str:
    """``arn:aws:<service>:<region>:<account>:<resource>``; IAM is global: no region."""
    region = "" if service in {"iam", "sts"} else facts.region
    return f"arn:aws:{service}:{region}:{facts.account_id}:{resource}"


_WORDS = re.compile(r"(?<!^)(?=[A-Z])")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{7,}")
_LOOKUPS_ONLY_ECHO = frozenset({"aws:iam/getPolicyDocument:getPolicyDocument"})
"""Data sources that compute from their arguments alone: nothing in their answer is made up."""


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, sub in value.items():
            yield from _leaves(sub, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from _leaves(sub, f"{path}[{i}]")
    else:
        yield path, value


class UnknownValues:
    """Made-up value -> ``<unknown: what it stands for>``."""

    def __init__(self, facts: CloudFacts):
        self.labels: dict[str, str] = {}
        self._facts = {facts.region, *facts.zones, facts.project or ""}
        if facts.cloud == "aws":
            self.labels[facts.account_id] = "<unknown: AWS account id>"

    def _made_up(self, value: Any) -> bool:
        """A string a provider computes: not one of the environment's facts, not a word
        (a status such as ACTIVE), long enough to be an identifier."""
        return (
            isinstance(value, str)
            and len(value) >= 4
            and value not in self._facts
            and not value.isalpha()
            and value not in self.labels
        )

    def note_resource(
        self, typ: str, name: str, rid: str, inputs: Mapping[str, Any], state: Mapping[str, Any]
    ) -> None:
        """A created cloud resource: its ID and every output the provider computes."""
        kind = _WORDS.sub(" ", typ.rsplit(":", 1)[-1]).lower()
        given = dict(_leaves(inputs))
        # An ID that is one of the inputs (an EKS cluster's ID is the name it was given) is
        # known: labelling it would turn every name that starts with it into a placeholder.
        if self._made_up(rid) and rid not in given.values():
            self.labels[rid] = f"<unknown: id of {kind} {name}>"
        for path, value in _leaves(state):
            if given.get(path) != value and self._made_up(value):
                self.labels[value] = f"<unknown: {path} of {kind} {name}>"

    def note_invoke(self, token: str, args: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        """A data-source lookup: what it found exists only in the real account."""
        if token in _LOOKUPS_ONLY_ECHO:
            return
        asked = {v for _, v in _leaves(args)}
        facts = [v for v in asked if isinstance(v, str) and not _HEX_RUN.search(v)]
        what = token.rsplit(":", 1)[-1] + (f" {', '.join(sorted(facts))}" if facts else "")
        for path, value in _leaves(result):
            if value not in asked and self._made_up(value):
                self.labels[value] = f"<unknown: {path} from {what}>"

    def reveal(self, value: Any) -> Any:
        """`value` with every made-up string (or part of one: ARNs inside policies and
        kubeconfigs) replaced by what it stands for."""
        if not self.labels:
            return value
        pattern = re.compile(
            "|".join(re.escape(v) for v in sorted(self.labels, key=len, reverse=True))
        )
        return self._sub(value, pattern)

    def _sub(self, value: Any, pattern: re.Pattern[str]) -> Any:
        if isinstance(value, str):
            return pattern.sub(lambda m: self.labels[m.group(0)], value)
        if isinstance(value, Mapping):
            return {k: self._sub(v, pattern) for k, v in value.items()}
        if isinstance(value, list):
            return [self._sub(v, pattern) for v in value]
        return value
