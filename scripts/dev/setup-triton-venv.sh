#!/usr/bin/env bash
# Create .venv-triton: a separate environment with Triton's own ModelConfig protobuf
# definitions (tritonclient), used by scripts/dev/triton-config-check to parse the
# config.pbtxt files inferplane renders. It is separate because tritonclient needs
# protobuf 6 while pulumi-policy pins protobuf 5 in the main environment.
#
# Usage: scripts/dev/setup-triton-venv.sh            (idempotent; reinstalls when pins change)
#        TRITON_VENV=/path scripts/dev/setup-triton-venv.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV="${TRITON_VENV:-.venv-triton}"
PINS=(
  "tritonclient[grpc]==2.73.0"
  "protobuf==6.33.6"
)
STAMP="$VENV/.inferplane-pins"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "${PINS[*]}" ] \
    && "$VENV/bin/python" -c "import tritonclient.grpc.model_config_pb2" 2>/dev/null; then
  exit 0
fi

python3 -m venv "$VENV"
# Keep the environment out of version control whatever the repository's .gitignore says.
echo '*' > "$VENV/.gitignore"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PINS[@]}"
"$VENV/bin/python" -c "import tritonclient.grpc.model_config_pb2"
echo "${PINS[*]}" > "$STAMP"
echo "Triton config checker environment ready: $VENV"
