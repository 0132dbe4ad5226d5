"""How a model gets its replicas, and how fast a new one starts.

- `autoscaling.ModelAutoscaler`: the KEDA ScaledObject, one Prometheus trigger per signal
  (`observability.promql`);
- `wake`: how a model at zero replicas comes back (a cron window, or its own HTTP requests
  through the KEDA HTTP add-on's interceptor);
- `spare_gpus.SpareGpus`: placeholder pods that hold GPUs free in every zone of a pool;
- `image_prepull.ImagePrePull`: every node of a GPU pool pulls its serving images on joining.
"""
