"""vLLM for one model.

- `vllm`: the ``vllm serve`` container, its fetch container and ConfigMaps (`vllm_flags`: the
  command line, from plain values);
- `route_guard`: the ASGI middleware that answers 404 outside the release's allowed routes,
  shipped to the pods as its own source;
- `vllm_compile.VllmCompileCache`: the Job that stages the model's ``torch.compile`` cache in
  the store.
"""
