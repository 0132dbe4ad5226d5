"""How requests reach a model's pods: its load balancer, and the llm-d router of an
llm-aware model.

- `load_balancer`: the region-local load balancer Service and the NetworkPolicy of the
  serving path;
- `router.ModelRouter`: the llm-d router of one model in one zone (`router_pods`: its pods'
  security settings and NetworkPolicy; `router_proxy`, `router_envoy`: the Envoy in front of
  its endpoint pickers; `router_lb`: the zone's load balancer and the pickers'
  ServiceMonitor);
- `router_chart`: where the router's chart comes from; `router_crds`: the CRDs it needs and
  its chart does not ship (``crds/``).
"""
