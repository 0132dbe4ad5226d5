"""What upstream projects publish, as tables the checks and components read.

- `triton_facts`: what a Triton release accepts in a ``config.pbtxt`` (`pbtxt` reads one);
- `trtllm_backend_facts`: what the TensorRT-LLM backend reads from its model's config;
- `vllm_owned`, `vllm_values`, `vllm_routes`: what a vLLM release's ``serve`` options,
  environment variables and HTTP routes are, and which a blueprint may set or reach;
- `gke_drivers`: which NVIDIA driver Google's COS installer gives GKE GPU nodes;
- ``aws_zones.json``, ``gcp_zones.json``: the zones each region has and the GPUs each offers;
- ``eks_al2023_nvidia.json``: the NVIDIA driver of each EKS-optimised AL2023 AMI release.

The facts under ``inferplane/facts/`` (written by ``scripts/``) are read from here; each table
names its source and the day it was read.
"""
