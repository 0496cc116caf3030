#!/usr/bin/env bash
# The test command: installs everything the test suite needs, then runs it. Arguments are passed to pytest.
#   bash tests/run.sh            # the whole suite
#   bash tests/run.sh -k torch   # a subset
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -r requirements.txt -r tests/requirements.txt

export GRADIO_ANALYTICS_ENABLED=False HF_HUB_DISABLE_TELEMETRY=1
exec python3 -m pytest "$@"
