"""What a `kubernetes` environment's ``model_store_endpoint`` names, and so where the store's
clients may connect.

A NetworkPolicy sees addresses and pod labels, never host names, so the endpoint is one of:

- an in-cluster Service, ``<service>.<namespace>.svc[.cluster.local]``: its clients may
  reach pods of that namespace (those with ``model_store_pod_labels`` when given) on the
  endpoint's port; a Service name is resolved to its pods before a policy sees the
  connection, so the store's pods must listen on that same port;
- an IP address outside the cluster: its clients may reach that one address on that port.

Any other host (a DNS name outside the cluster) is refused: its addresses are not known
offline, and allowing "any address" on the port opened the instance metadata service and
every pod and node. Addresses that are never a store (loopback, link-local with the cloud's
metadata service, unspecified, multicast) are refused too.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from dataclasses import dataclass

_SERVICE = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(\.cluster\.local)?\.?$"
)
"""``<service>.<namespace>.svc`` with the cluster's default domain, both DNS-1123 labels
(https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#services)."""
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class StoreEndpoint:
    port: int
    namespace: str | None = None
    """The in-cluster Service's namespace; None for an address."""
    address: str | None = None
    """The IP address of a store outside the cluster; None for a Service."""

    @property
    def cidr(self) -> str:
        """The address as a one-address network (``ipBlock.cidr``)."""
        ip = ipaddress.ip_address(self.address or "")
        return f"{ip}/{ip.max_prefixlen}"


def parse(url: str) -> tuple[StoreEndpoint | None, str]:
    """(endpoint, "") or (None, what is wrong with `url`)."""
    parts = urllib.parse.urlsplit(url)
    try:
        explicit = parts.port
    except ValueError:
        return None, f"port {parts.netloc.rpartition(':')[2]} is not a TCP port (1 to 65535)"
    if explicit == 0:
        return None, "port 0 is not a TCP port (1 to 65535)"
    port = explicit or DEFAULT_PORTS.get(parts.scheme, 0)
    host = (parts.hostname or "").lower()
    service = _SERVICE.match(host)
    if service:
        return StoreEndpoint(port=port, namespace=service.group(2)), ""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None, (
            f"host {host!r} is neither an in-cluster Service (<service>.<namespace>.svc) nor "
            "an IP address, and a NetworkPolicy cannot name a host"
        )
    if ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast:
        return None, f"{ip} is a loopback, link-local, unspecified or multicast address"
    return StoreEndpoint(port=port, address=str(ip)), ""


def require(url: str) -> StoreEndpoint:
    """`parse`, raising ValueError for what validation refuses."""
    endpoint, why = parse(url)
    if endpoint is None:
        raise ValueError(f"model_store_endpoint {url!r}: {why}")
    return endpoint
