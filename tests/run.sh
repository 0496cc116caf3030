#!/usr/bin/env bash
# The test command: installs everything the test suite needs, then runs it. Arguments are passed to pytest.
#   bash tests/run.sh            # the whole suite
#   bash tests/run.sh -k torch   # a subset
#   bash tests/run.sh -n 0       # in one process (the default: one worker per core, pytest-xdist)
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: Chromium for the browser tests, Node.js and npm to run the page's modules and their tests
# (tests/js) against the Python definitions, and the Ding dictionary (trans-de-en) for the corpus tests.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
[ -f /usr/share/trans/de-en ] || missing+=(trans-de-en)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing ${missing[*]} with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The page tests' npm packages (package.json: ajv, which checks the page's messages against their schema), as the
# lock file pins them, when they are missing or the lock file changed since they were installed.
if [ ! node_modules/.package-lock.json -nt package-lock.json ]; then
  npm ci --no-audit --no-fund --silent
fi

# pip only when a pinned package is missing or at another version: its own check takes seconds even then.
if ! python3 tests/pins.py requirements.txt requirements-hf.txt tests/requirements.txt; then
  python3 -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-hf.txt -r tests/requirements.txt
fi

export GRADIO_ANALYTICS_ENABLED=False HF_HUB_DISABLE_TELEMETRY=1
# Python's bytecode is kept (__pycache__, which git ignores) even where the environment says not to write it: every
# process of a run (the workers, and the apps and commands the tests start) would otherwise compile the project and
# rewrite each test module's asserts again (collecting took a worker 18.3 s that way, 15.9 s reading them).
unset PYTHONDONTWRITEBYTECODE
# One worker per core, each with one torch thread: two workers of two threads on two cores spin against each other
# (the fast loop took 190 s that way, 53 s this way, 83 s in one process).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# Each test module on one worker (--dist loadscope): a module's fixtures (an export in every precision, a model of each
# family and its copy, a served app's answers) are made once, not once in each worker that runs some of its tests.
exec python3 -m pytest -n auto --dist loadscope "$@"
