#!/usr/bin/env bash
# Create .venv-streamer: the Run:ai model streamer (the loader behind vLLM's
# `--load-format runai_streamer`), its S3 backend, and a local S3-compatible server (moto),
# used by scripts/dev/streamer-check to stream a small safetensors file over loopback with
# the variables and arguments inferplane generates for a streaming vLLM container.
#
# runai-model-streamer 0.15.7 is the lowest release vLLM v0.33.0's `runai` extra accepts
# (the wheel's METADATA: runai-model-streamer[azure,gcs,s3]>=0.15.7). It declares torch,
# whose PyPI wheel for Linux is the CUDA build (gigabytes with its nvidia-* wheels), so the
# two streamer wheels are installed without their dependencies and the rest of what they
# import is listed here; streamer-check stands in for torch where it is absent (the bytes
# are read by the streamer's own C++ library, which needs no torch).
#
# Usage: scripts/dev/setup-streamer-venv.sh            (idempotent; reinstalls when pins change)
#        STREAMER_VENV=/path scripts/dev/setup-streamer-venv.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV="${STREAMER_VENV:-.venv-streamer}"
NO_DEPS=(
  "runai-model-streamer==0.15.7"
  "runai-model-streamer-s3==0.15.7"
)
PINS=(
  "boto3==1.44.18"
  "humanize==4.17.0"
  "numpy==2.4.6"
  "safetensors==0.8.0"
  "moto[s3]==5.2.6"
  "flask==3.1.3"
  "flask-cors==6.0.5"
)
STAMP="$VENV/.inferplane-pins"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "${NO_DEPS[*]} ${PINS[*]}" ] \
    && "$VENV/bin/python" -c "import runai_model_streamer_s3, moto, safetensors" 2>/dev/null; then
  exit 0
fi

python3 -m venv "$VENV"
# Keep the environment out of version control whatever the repository's .gitignore says.
echo '*' > "$VENV/.gitignore"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PINS[@]}"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps "${NO_DEPS[@]}"
"$VENV/bin/python" -c "import runai_model_streamer_s3, moto, safetensors"
echo "${NO_DEPS[*]} ${PINS[*]}" > "$STAMP"
echo "Run:ai streamer environment ready: $VENV"
