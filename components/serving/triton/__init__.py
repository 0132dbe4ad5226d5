"""Triton Inference Server for one model: its ``config.pbtxt`` and container, its pipeline,
its response cache.

- `triton_config`: ``config.pbtxt`` and the ``tritonserver`` container (`triton_tensors`: the
  pieces for declared tensors and ONNX Runtime);
- `triton_pipeline`: a pipeline's ensemble and step configs, and the init container that lays
  them out with each step's files;
- `response_cache.ResponseCacheStore`: the shared response cache of a model
  (``response_cache.backend: redis``), a Valkey server in every zone it runs in.

A TensorRT-LLM model runs on Triton too (`trtllm`).
"""
