#!/usr/bin/env python3
"""Runs the six TPU v1 applications (ISCA 2017 Table 1, rebuilt by scripts/gen_workloads.py) on tpu-v1
and prints a Markdown table: TOPS and the cycle breakdown in TPU v1's performance-counter categories.

Python 3 standard library only. From the repository root:

  python3 scripts/validate_v1.py [--tpusim build/tpusim] [--gemm-cnn] [--set key=value ...]

TOPS = 2 * MXU MACs / simulated seconds (the paper counts a MAC as two operations: 92 TOPS =
65,536 MACs * 2 * 700 MHz). Breakdown columns are the report's `stalls` as % of cycles
(docs/report-schema.md); `hbm_bound` on tpu-v1 is time waiting on Weight Memory (DDR3) DMAs, which TPU v1
counts as weight stall when the MXU waits for weights.
--gemm-cnn uses tpu_v1_cnn*_gemm.hlo (convolutions as implicit-GEMM dots) instead of `convolution`.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APPS = ["mlp0", "mlp1", "lstm0", "lstm1", "cnn0", "cnn1"]
CATS = ["array_active", "weight_stall", "weight_shift", "non_matrix", "raw_sync_stall",
        "input_data_stall", "hbm_bound", "vpu_bound"]
PEAK_TOPS = 65536 * 2 * 700e6 / 1e12


def roofline_tops(app):
    """min(peak, 2 * MACs-per-weight-byte * 34 GB/s): ISCA 2017 Fig. 5's roofline for the app's
    generated layer stack (weights read once from the 34 GB/s Weight Memory)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import gen_workloads  # noqa: E402 (standard-library script next to this one)
    st = gen_workloads.v1_stats(gen_workloads.v1_apps()[app])
    return min(PEAK_TOPS, 2 * st["ops_per_weight_byte"] * 34e9 / 1e12)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpusim", default=os.path.join(ROOT, "build", "tpusim"))
    ap.add_argument("--gemm-cnn", action="store_true")
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    print("| app | cycles | sim time (ms) | TOPS | % of 91.75 | TOPS of the matmul ops alone | "
          "weight-bandwidth roofline TOPS | " + " | ".join(CATS) + " |")
    print("|---|" + "---:|" * (6 + len(CATS)))
    with tempfile.TemporaryDirectory() as tmp:
        for app in APPS:
            name = f"tpu_v1_{app}" + ("_gemm" if args.gemm_cnn and app.startswith("cnn") else "")
            path = os.path.join("benchmarks", "workloads", name + ".hlo")
            rep = os.path.join(tmp, "r.json")
            cmd = [args.tpusim, "run", path, "--config", "tpu-v1", "--timing-only", "--report", rep]
            for s in args.set:
                cmd += ["--set", s]
            p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if p.returncode != 0:
                print(f"| {name} | error: {p.stderr.strip().splitlines()[0]} |")
                continue
            with open(rep, encoding="utf-8", errors="replace") as f:
                r = json.load(f)
            cyc = r["cycles"]
            tops = r["mxu_flops"] / r["seconds"] / 1e12
            st = r["stalls"]
            other = set(st) - set(CATS)
            assert all(st[k] == 0 for k in other), other
            cells = [f"{100.0 * st.get(c, 0) / cyc:.1f}" for c in CATS]
            # Cycles charged to the matmul ops themselves (dot, or a convolution's GEMM): what the
            # run would take if every other op (requantize, vector layers, im2col, pools) were free.
            mm = sum(o["cycles"] for o in r["ops"]
                     if o["opcode"] in ("dot", "convolution") or o["name"].endswith(".gemm"))
            tops_mm = r["mxu_flops"] / (mm / r["clock_hz"]) / 1e12 if mm else 0.0
            roof = roofline_tops(app)
            print(f"| {name} | {cyc} | {r['seconds'] * 1e3:.3f} | {tops:.1f} | "
                  f"{100 * tops / PEAK_TOPS:.1f} | {tops_mm:.1f} | {roof:.1f} | "
                  + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
