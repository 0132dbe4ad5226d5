"""Serve the rules as a CrossGuard policy pack (Pulumi runs this; it never returns).

    pulumi preview --policy-pack policies [--policy-pack-config policy-config.json]

The Pulumi CLI starts a Python pack as ``python <pack directory>`` in the virtualenv that
`PulumiPolicy.yaml` names (pulumi/pulumi, sdk/python/cmd/pulumi-language-python/main.go,
`RunPlugin`: ``args := []string{req.Info.ProgramDirectory}``), where inferplane is
installed: the rules are imported from the installed package, with no path edits.
"""

import io
import sys

from pulumi_policy import EnforcementLevel, PolicyPack

from inferplane.policies.pack import PACK_DESCRIPTION, PACK_NAME, policies

# PolicyPack writes the port it listens on with `sys.stdout.buffer.write` and never flushes
# (pulumi_policy/policy.py); the engine reads that line through a pipe, where Python's
# stdout is block-buffered unless PYTHONUNBUFFERED is set. Make stdout write through so the
# port arrives whatever the caller's environment.
sys.stdout = io.TextIOWrapper(
    io.FileIO(sys.stdout.fileno(), "w", closefd=False), write_through=True
)

PolicyPack(
    name=PACK_NAME,
    description=PACK_DESCRIPTION,
    policies=policies(),
    enforcement_level=EnforcementLevel.ADVISORY,
)
