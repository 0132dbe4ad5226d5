"""The blueprint layer: from a blueprint file to one typed `Environment` per environment.

One folder per concern, each importing only the folders below it in this list, and the
shared vocabulary at the bottom (import-linter's contracts in pyproject.toml):

- `resolution/`: load, validate and resolve a blueprint file into `Environment`s.
- `checks/`: the semantic checks, what the JSON Schema cannot express (``semantic_<area>``).
- `derived/`: what the stack, the rules and `plan` derive from an `Environment`.
- `capacity/`: the replicas, nodes, dollars and GPU memory a model needs for its traffic.
- `upstream/`: what Triton, TensorRT-LLM, vLLM, GKE, EKS and the clouds' zones publish.
- `loading/`: raw text, strict YAML with locations, links, overrides and the JSON Schema.
- here: the vocabulary every folder shares: the model (`model`, `model_cluster`,
  `model_engines`, `model_scaling`, `triton_model`, `addons`), `errors`, `source`, `naming`,
  `defaults`, the release table (`releases`), the GPU and LLM catalogs, and small helpers
  (`long_requests`, `wake`, `secret_refs`, `store_endpoint`, `system_nodes`). `resolve_triton`
  is here as both the checks and resolution read it, and `semantic_trtllm` as capacity and
  the scale-out budget read its byte sizes.
"""
