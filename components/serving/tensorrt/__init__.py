"""TensorRT engines, built in the cluster from a model's ONNX file and kept in the store
under their content key.

- `engine_keys`: what identifies an engine, and where it lives in the store;
- `trtexec_flags`: trtexec's flags by the TensorRT of the build's release; `engine_script`:
  the shell script of the build's ``trtexec`` container;
- `engine_build.TensorRtEngineBuild`: the build Job of one model (Triton, ``tensorrt``);
- `pipeline_engines.PipelineEngineBuild`: one build per ``backend: tensorrt`` pipeline step.

`trtllm.trtllm_build` reuses their keying, store layout and Job handling.
"""
