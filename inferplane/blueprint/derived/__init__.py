"""What the stack, the rules and `plan` derive from a resolved `Environment`.

- `facts`: the environment facts a stack publishes in a ConfigMap for the rules;
- `node_shape`: the labels, taints and GPU resources the GPU nodes of each pool and zone carry;
- `scale_out`: the scale-out budget, seconds from a traffic spike to one more ready replica
  (`checkpoint`: the bytes a new replica copies; `timing`: the periods the stack sets);
- `router_wake`: how long the llm-d router holds the request that wakes a model at zero.
"""
