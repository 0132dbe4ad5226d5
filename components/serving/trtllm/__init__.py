"""TensorRT-LLM models, served by Triton's ``tensorrtllm`` backend.

- `trtllm`: the backend's ``config.pbtxt``, the server container and the engine fetch;
- `trtllm_text`: text in, text out: the ensemble of tokenization, the model and
  detokenization, whose Python models (``trtllm_python/``) inferplane ships;
- `trtllm_build.TensorRtLlmEngineBuild`: the Job that builds the engine from a checkpoint.
"""
