"""The programs the build, staging and compile Jobs run inside their containers.

Each module is a standalone program: it imports the standard library and the libraries of
the image it runs in (TensorRT, huggingface_hub, TensorRT-LLM, transformers, vLLM) and
nothing of inferplane, which no image has. The Job's scripts ConfigMap
(`inferplane.components.serving.store.store_job`) carries the module's source, mounted
read-only at `store_job.JOBS_DIR`, and the container runs it with the image's own ``python3``. The
image libraries are imported inside ``main``, so tests import the pure functions directly.
"""
