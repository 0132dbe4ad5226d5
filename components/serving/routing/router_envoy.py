"""The Envoy configuration of one zone's router proxies (`router_proxy`).

Configuration (``<release>-envoy``, ``router.proxy.configMap.data["envoy.yaml"]``, which
``llm-d-router.proxy`` merges over the preset's, mergeOverwrite, and renders through
``tpl``): the preset's listener, clusters and ext_proc filter, with three changes
(`envoy_config`):

- **A client cannot pick the replica.** The preset routes every request to an
  ``ORIGINAL_DST`` cluster that reads the upstream address from the request header
  ``x-gateway-destination-endpoint`` (``original_dst_lb_config.http_header_name``), the
  header the picker sets (llm-d-router ``pkg/epp/metadata/consts.go``,
  ``DestinationEndpointKey``). A header the client sent is still there when the picker is
  not asked (fail-open) and would send the request to any address the proxy can reach. It
  is removed first, by the connection manager's early header mutation
  (``early_header_mutation_extensions``, ``envoy.http.early_header_mutation.
  header_mutation``; it runs before routing and before any filter, Envoy
  ``api/envoy/extensions/filters/network/http_connection_manager/v3/
  http_connection_manager.proto``), so only the picker's answer sets it.
- **Failing open reaches a replica.** With the picker unreachable, ext_proc's
  ``failure_mode_allow`` lets the request through with no header, and an ``ORIGINAL_DST``
  cluster with no address chooses no host (Envoy ``source/common/upstream/
  original_dst_cluster.cc``, ``chooseHost`` returns ``nullptr``), so the router answered
  503: the preset fails open only in name. Here the original-destination route matches
  only a request that carries the header, and every other request takes `FALLBACK`, a
  ``STRICT_DNS`` cluster of the model's ClusterIP Service (its zone's replicas preferred,
  ``trafficDistribution``), unscored. The picker's answer clears the route cache
  (``pkg/epp/handlers/request.go``, ``ClearRouteCache: true``), so a picked request is
  routed again once it carries the header.
- **The picker may hold a request as long as flow control does.** ``message_timeout`` is
  `router_wake.ext_proc_timeout_s` of the queue's TTL.
"""

from __future__ import annotations

from typing import Final

from inferplane.blueprint.derived import router_wake
from inferplane.components.serving.containers import PORTS, Manifest
from inferplane.components.serving.routing.router_pods import EXT_PROC_PORT, PROXY_PORT
from inferplane.components.serving.spec import ServedModel

DESTINATION_HEADER: Final = "x-gateway-destination-endpoint"
ORIGINAL_DST: Final = "original_destination_cluster"
FALLBACK: Final = "model_fallback"
EXT_PROC: Final = "ext_proc"
PICKED: Final = {"name": DESTINATION_HEADER, "present_match": True}
"""The route match of a request the picker answered."""
CLUSTER_DOMAIN: Final = "cluster.local"
"""``router.clusterDomain``'s default (``routerlib/values.yaml``)."""


def queue_ttl_s(model: ServedModel) -> int | None:
    """Flow control's ``defaultRequestTTL`` for a model that wakes in the router's queue
    (`router_wake.queue_ttl_s`); None: the release's default suits it."""
    routing = model.routing
    if model.replicas.min != 0 or not (routing.llm_aware and routing.flow_control):
        return None
    return router_wake.queue_ttl_s(model.wake_bound_s)


def _route(cluster: str, headers: list[Manifest] | None = None) -> Manifest:
    match: Manifest = {"prefix": "/"}
    if headers:
        match["headers"] = headers
    return {
        "match": match,
        "route": {
            "cluster": cluster,
            "timeout": "86400s",
            "idle_timeout": "86400s",
            "upgrade_configs": [{"upgrade_type": "websocket"}],
        },
        "typed_per_filter_config": {
            "envoy.filters.http.ext_proc": {
                "@type": "type.googleapis.com/envoy.config.route.v3.FilterConfig",
                "config": {},
            }
        },
    }


def _limits() -> Manifest:
    return {
        "thresholds": [
            {"max_connections": 40000, "max_pending_requests": 40000, "max_requests": 40000}
        ]
    }


def _address(host: str, port: int) -> Manifest:
    return {"address": host, "port_value": port}


def _dns_cluster(name: str, host: str, port: int, connect_s: int) -> Manifest:
    return {
        "name": name,
        "type": "STRICT_DNS",
        "connect_timeout": f"{connect_s}s",
        "circuit_breakers": _limits(),
        "load_assignment": {
            "cluster_name": name,
            "endpoints": [
                {
                    "lb_endpoints": [
                        {
                            "endpoint": {
                                "address": {"socket_address": {"address": host, "port_value": port}}
                            }
                        }
                    ]
                }
            ],
        },
    }


def envoy_config(model: ServedModel, release: str, namespace: str) -> Manifest:
    """The proxy's ``envoy.yaml`` (module docstring)."""
    epp_host = f"{release[:40]}-epp.{namespace}.svc.{CLUSTER_DOMAIN}"
    model_host = f"{model.name}.{namespace}.svc.{CLUSTER_DOMAIN}"
    ttl = queue_ttl_s(model) or router_wake.QUEUE_TTL_DEFAULT_S
    http = "envoy.filters.network.http_connection_manager"
    hcm_type = (
        "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3."
        "HttpConnectionManager"
    )
    router_filter = {
        "name": "envoy.filters.http.router",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
            "suppress_envoy_headers": True,
        },
    }
    ready_listener = {
        "name": "envoy-proxy-ready-0.0.0.0-19001",
        "address": {"socket_address": {"address": "0.0.0.0", "port_value": 19001}},
        "filter_chains": [
            {
                "filters": [
                    {
                        "name": http,
                        "typed_config": {
                            "@type": hcm_type,
                            "stat_prefix": "envoy-ready-http",
                            "route_config": {
                                "name": "local_route",
                                "virtual_hosts": [
                                    {
                                        "name": "prometheus_stats",
                                        "domains": ["*"],
                                        "routes": [
                                            {
                                                "match": {"prefix": "/stats/prometheus"},
                                                "route": {"cluster": "prometheus_stats"},
                                            }
                                        ],
                                    }
                                ],
                            },
                            "http_filters": [
                                {
                                    "name": "envoy.filters.http.health_check",
                                    "typed_config": {
                                        "@type": "type.googleapis.com/envoy.extensions.filters."
                                        "http.health_check.v3.HealthCheck",
                                        "pass_through_mode": False,
                                        "headers": [
                                            {"name": ":path", "string_match": {"exact": "/ready"}}
                                        ],
                                    },
                                },
                                router_filter,
                            ],
                        },
                    }
                ]
            }
        ],
    }
    ext_proc_filter = {
        "name": "envoy.filters.http.ext_proc",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3."
            "ExternalProcessor",
            "failure_mode_allow": True,
            "grpc_service": {
                "envoy_grpc": {"cluster_name": EXT_PROC, "authority": f"localhost:{EXT_PROC_PORT}"},
                "timeout": "10s",
            },
            "processing_mode": {
                "request_header_mode": "SEND",
                "response_header_mode": "SEND",
                "request_body_mode": "FULL_DUPLEX_STREAMED",
                "response_body_mode": "FULL_DUPLEX_STREAMED",
                "request_trailer_mode": "SEND",
                "response_trailer_mode": "SEND",
            },
            "message_timeout": f"{router_wake.ext_proc_timeout_s(ttl)}s",
        },
    }
    model_listener = {
        "name": "vllm",
        "address": {"socket_address": {"address": "0.0.0.0", "port_value": PROXY_PORT}},
        "per_connection_buffer_limit_bytes": 32768,
        "filter_chains": [
            {
                "name": "vllm",
                "filters": [
                    {
                        "name": http,
                        "typed_config": {
                            "@type": hcm_type,
                            "stat_prefix": f"http-{PROXY_PORT}",
                            "early_header_mutation_extensions": [
                                {
                                    "name": "envoy.http.early_header_mutation.header_mutation",
                                    "typed_config": {
                                        "@type": "type.googleapis.com/envoy.extensions.http."
                                        "early_header_mutation.header_mutation.v3.HeaderMutation",
                                        "mutations": [{"remove": DESTINATION_HEADER}],
                                    },
                                }
                            ],
                            "route_config": {
                                "name": "vllm",
                                "virtual_hosts": [
                                    {
                                        "name": "vllm-default",
                                        "domains": ["*"],
                                        "routes": [
                                            _route(
                                                ORIGINAL_DST,
                                                [
                                                    {
                                                        "name": DESTINATION_HEADER,
                                                        "present_match": True,
                                                    }
                                                ],
                                            ),
                                            _route(FALLBACK),
                                        ],
                                    }
                                ],
                            },
                            "http_filters": [ext_proc_filter, router_filter],
                            "http2_protocol_options": {
                                "max_concurrent_streams": 100,
                                "initial_stream_window_size": 65536,
                                "initial_connection_window_size": 1048576,
                            },
                            "use_remote_address": True,
                            "normalize_path": True,
                            "merge_slashes": True,
                            "server_header_transformation": "PASS_THROUGH",
                            "common_http_protocol_options": {
                                "headers_with_underscores_action": "REJECT_REQUEST"
                            },
                            "path_with_escaped_slashes_action": "UNESCAPE_AND_REDIRECT",
                        },
                    }
                ],
            }
        ],
    }
    ext_proc_cluster = _dns_cluster(EXT_PROC, epp_host, EXT_PROC_PORT, 86400)
    ext_proc_cluster.update(
        {
            "lb_policy": "LEAST_REQUEST",
            "health_checks": [
                {
                    "timeout": "2s",
                    "interval": "10s",
                    "unhealthy_threshold": 3,
                    "healthy_threshold": 2,
                    "reuse_connection": True,
                    "grpc_health_check": {
                        "service_name": "envoy.service.ext_proc.v3.ExternalProcessor"
                    },
                    "tls_options": {"alpn_protocols": ["h2"]},
                }
            ],
            # The picker serves TLS unless `secure-serving=false` (the preset's
            # `llm-d-router.proxy.envoyExtProcTransportSocket`).
            "transport_socket": {
                "name": "envoy.transport_sockets.tls",
                "typed_config": {
                    "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3."
                    "UpstreamTlsContext",
                    "common_tls_context": {"validation_context": {}},
                },
            },
            "typed_extension_protocol_options": {
                "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                    "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3."
                    "HttpProtocolOptions",
                    "explicit_http_config": {
                        "http2_protocol_options": {
                            "initial_stream_window_size": 65536,
                            "initial_connection_window_size": 1048576,
                        }
                    },
                }
            },
        }
    )
    original_dst = {
        "name": ORIGINAL_DST,
        "type": "ORIGINAL_DST",
        "connect_timeout": "1000s",
        "lb_policy": "CLUSTER_PROVIDED",
        "circuit_breakers": _limits(),
        "original_dst_lb_config": {"use_http_header": True, "http_header_name": DESTINATION_HEADER},
    }
    stats = _dns_cluster("prometheus_stats", "127.0.0.1", 19000, 1)
    stats.update({"type": "STATIC", "connect_timeout": "0.250s"})
    del stats["circuit_breakers"]
    return {
        "admin": {
            "address": {"socket_address": {"address": "127.0.0.1", "port_value": 19000}},
            "access_log": [
                {
                    "name": "envoy.access_loggers.file",
                    "typed_config": {
                        "@type": "type.googleapis.com/envoy.extensions.access_loggers.file.v3."
                        "FileAccessLog",
                        "path": "/dev/null",
                    },
                }
            ],
        },
        "static_resources": {
            "listeners": [ready_listener, model_listener],
            "clusters": [
                stats,
                original_dst,
                _dns_cluster(FALLBACK, model_host, PORTS["http"], 10),
                ext_proc_cluster,
            ],
        },
    }
