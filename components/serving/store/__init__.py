"""The model store: what copies to and from it, and what is staged into it.

- `store_cli`: the storage-CLI containers (AWS CLI, gcloud) that copy and sync, and publish
  by attempt so that a retried Job never overwrites;
- `store_job`: what every Job that writes to the store shares: the ConfigMap of the programs
  its containers run (the ``jobs`` package, standalone programs run with the image's own
  ``python3``) and the Job resource;
- `weights`, `weights_job`: ``hf://`` sources staged once into the store (`WeightsStaging`);
- `pip_requirements`, `requirements_job`: a pipeline's Python-step requirements staged from
  the package index (`RequirementsStaging`), and how a serving pod installs them.

The Jobs of one engine build on these: `tensorrt.engine_build`, `trtllm.trtllm_build`,
`vllm.vllm_compile`.
"""
