"""Serve the rules as a CrossGuard policy pack (Pulumi runs this; it never returns).

pulumi preview --policy-pack policies [--policy-pack-config policy-config.json]
"""

import sys
from pathlib import Path

# Pulumi starts the pack from this directory; the repository root holds `policies` and
# `inferplane`, which an installed distribution provides anyway.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.pack import PACK_DESCRIPTION, PACK_NAME, policies  # noqa: E402

PolicyPack(
    name=PACK_NAME,
    description=PACK_DESCRIPTION,
    policies=policies(),
    enforcement_level=EnforcementLevel.ADVISORY,
)
