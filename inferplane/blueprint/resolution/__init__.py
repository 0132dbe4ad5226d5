"""From a validated blueprint to one typed `Environment` per environment.

- `resolve`: `load_blueprint` (strict load, JSON Schema and semantic checks of the whole
  file), `resolve` (overrides merged, defaults applied, sources absolute, catalog looked up)
  and `resolve_file` (both, for one environment);
- `resolve_model`: one model of a validated blueprint, resolved.
"""
