"""inferplane's policy rules: one module per rule, run offline and as a CrossGuard pack.

The framework lives here (`framework`, `engine`, `config`, `waivers`, the stack view
`stack` and `resources`); the rules live in `rules/`, one per file. `rules.all_rules()`
lists them; `engine.evaluate` runs them on a `stack.Stack`; `pack.policies()` wraps them
for CrossGuard.
"""
