"""The semantic checks: what the JSON Schema cannot express.

`semantic.check` runs them on each environment's merged view, in the order of the report;
each ``semantic_<area>`` module holds one area's checks (the list is in `semantic`).
"""
