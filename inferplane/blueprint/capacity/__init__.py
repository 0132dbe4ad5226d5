"""The capacity planner: how many replicas, nodes and dollars a model needs for its traffic.

A blueprint states per model its peak `traffic` (requests per second, tokens per request)
next to its `slo`; this package estimates what one replica carries within that SLO and
turns it into replicas, nodes, engine batch settings, autoscaling targets and cost:

- `fit`: whether an LLM's weights, KV cache and overhead fit its GPUs' memory budget, the
  arithmetic the checks, the roofline and the scale-out budget share;
- `gpus`: peak dense FLOPs and memory bandwidth of each catalog GPU, from NVIDIA's datasheets,
  and the kernel floor measured on a GPU where one was (``scripts/calibration``);
- `roofline`: the LLM estimate (prefill from FLOPs, decode from memory bandwidth × batch),
  never faster than a fixed time per layer, one read of the weights per prefill and a
  measured kernel floor;
- `profile`: the Triton estimate from a measured latency-per-batch-size profile;
- `prices`: on-demand prices per instance type and region, and of a model's load balancer,
  each row dated and sourced;
- `cost`: whole GPU nodes per zone, plus the model's load balancer and its share of the
  system nodes;
- `planner`: one model's plan in one environment (`plan_model`), which `inferplane plan`
  prints and `validate` checks (`inferplane.blueprint.checks.semantic_capacity`).

Every estimate names its source and carries an error band: `validate` refuses only when even
the optimistic end of the band cannot carry the peak.
"""
