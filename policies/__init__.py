"""inferplane's policy rules: one module per rule, run offline and as a CrossGuard pack.

`policies.framework.all_rules()` lists them; `policies.engine.evaluate` runs them on a
`policies.stack.Stack`; `policies.pack.policies()` wraps them for CrossGuard.
"""
