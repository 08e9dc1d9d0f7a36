#!/usr/bin/env bash
# The Python half of the README's test command (scripts/test.sh runs it after the C++ suite):
# installs the missing Python dependencies (pinned in python/requirements-test.txt; torch only
# 2.13.0, torchax with --no-deps so nothing pulls another torch), builds and installs the package
# `tpusim` from this repository with pip (scikit-build-core; the build folder build-python/ persists,
# so a second run recompiles nothing that did not change), then runs pytest on python/tests.
# Idempotent. PYTHON=... picks the interpreter (default: python3 on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! "$PY" -m pip --version >/dev/null 2>&1; then
  echo "test_python: $PY has no pip; the Python package needs pip (README, Set-up)" >&2
  exit 2
fi
export PIP_ROOT_USER_ACTION=ignore
PIP=("$PY" -m pip --disable-pip-version-check)
TORCHAX=torchax==0.0.13

# Dependencies: a quick check first, so a second run does not ask the index at all.
if ! "$PY" - <<'PYEOF' 2>/dev/null; then
import importlib.metadata as md, sys
want = {}
for line in open("python/requirements-test.txt"):
    line = line.split("#")[0].strip()
    if line:
        name, version = line.split("==")
        want[name] = version
want["torchax"] = "0.0.13"
sys.exit(0 if all(md.version(n).split("+")[0] == v for n, v in want.items()) else 1)
PYEOF
  echo "test_python: installing the Python test dependencies"
  "${PIP[@]}" install -q -r python/requirements-test.txt
  "${PIP[@]}" install -q --no-deps "$TORCHAX"
fi
"$PY" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '2.13.0')" || {
  echo "test_python: torch is not 2.13.0; refusing to go on (never install another torch)" >&2
  exit 2
}

# The package, built by scikit-build-core from CMakeLists.txt (no isolated build env: the pinned
# scikit-build-core and pybind11 above are used).
"${PIP[@]}" install -q --no-build-isolation .

# Run from outside the source tree so `import tpusim` is the installed package.
cd python/tests
"$PY" -m pytest -q -p no:cacheprovider .
