#!/usr/bin/env bash
# CTest: `cmake --install` into a fresh prefix, then a project outside the tree finds the package
# and links the libraries (tests/install/consumer), the installed binary finds the installed configs
# from another folder, and the man page is installed when help2man is.
# usage: install_test.sh BUILD_DIR WORK_DIR (from the repository root).
set -euo pipefail
build=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/tpusim share/tpusim/configs/tpu-v4.yaml include/tpusim/sim/simulator.h \
         lib/cmake/tpusim/tpusimConfig.cmake lib/libtpusim_sim.a; do
  [[ -e "$prefix/$f" ]] || { echo "FAIL: $f not installed"; exit 1; }
done
if command -v help2man >/dev/null; then
  [[ -s "$prefix/share/man/man1/tpusim.1" ]] || { echo "FAIL: no man page"; exit 1; }
  grep -q "tpusim run" "$prefix/share/man/man1/tpusim.1" || grep -q "run" "$prefix/share/man/man1/tpusim.1"
fi
# The installed binary, run from elsewhere, finds the installed configs by name.
(cd "$work" && "$prefix/bin/tpusim" config show tpu-v4 | grep -q "share/tpusim/configs/tpu-v4.yaml") \
  || { echo "FAIL: installed tpusim does not find its configs"; exit 1; }
cmake -S tests/install/consumer -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
out=$("$work/consumer/consumer")
echo "$out"
grep -Eq "^consumer: [0-9]+ cycles on tiny$" <<<"$out"
