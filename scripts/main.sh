#!/usr/bin/env bash
# The README's first command: set up, build, and run tpusim's main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${TPUSIM_BUILD_DIR:-build}
"$BUILD_DIR/tpusim" config show
