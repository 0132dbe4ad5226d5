"""What one model's metrics say: its queries, recording rules, alerts and dashboard.

- `known_metrics`: every series name the queries may use, and the exporter that emits it;
- `promql`: every query of a served model, one definition per signal (`promql_scope`: which
  labels select one model's series; `promql_router`: the llm-d router's queries);
- `rules`: the recording rules and SLO alerts; `dashboards`: the Grafana dashboard;
- `monitoring.ModelMonitoring`: the ServiceMonitor, PrometheusRule and dashboard of one model.

They read the arguments (`spec`) only; the KEDA triggers (`scaling.autoscaling`) use the same
queries.
"""
