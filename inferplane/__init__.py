"""inferplane: low-latency GPU inference on Kubernetes from one blueprint YAML."""

__version__ = "0.1.0"
