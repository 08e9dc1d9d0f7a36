#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages only), then configures and builds tpusim in build/.
# Idempotent: a second run installs nothing and rebuilds only what changed (seconds).
# Usage: scripts/setup.sh   (as root, or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(g++ cmake ninja-build ccache pkg-config
          libeigen3-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libbenchmark-dev
          python3 python3-matplotlib python3-numpy python3-pandas parallel help2man)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The plot scripts (scripts/plot_*.py) run with the `python3` first on PATH: when that is not
# Debian's (which has matplotlib and pandas from apt above), give it them with pip.
if ! python3 -c "import matplotlib, pandas" 2>/dev/null; then
  echo "setup: installing matplotlib and pandas for $(command -v python3)"
  python3 -m pip install --quiet matplotlib pandas
fi

BUILD_DIR=${TPUSIM_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTPUSIM_WERROR=ON
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
