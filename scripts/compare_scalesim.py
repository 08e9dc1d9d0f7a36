#!/usr/bin/env python3
"""Runs SCALE-Sim v2 and tpusim on the same GEMMs and one weight-stationary array; tabulates both.

Python 3 standard library only on tpusim's side; SCALE-Sim needs numpy, pandas and tqdm (Debian:
python3-numpy python3-pandas python3-tqdm). SCALE-Sim is NOT part of tpusim: check it out yourself
outside this repository (github.com/scalesim-project/scale-sim-v2) and pass its path. Not run by the tests
or CI. From tpusim's repository root:

  python3 scripts/compare_scalesim.py /tmp/scalesim [--tpusim build/tpusim] [--array 128]
        [--gemms 128x128x128,512x512x512] [--out compare.md]

For each GEMM (M, K, N: LHS [M,K] x weights [K,N]; default: SCALE-Sim's five reference GEMMs from
scale-sim-v2's GEMM topologies; docs/sources.md):
* SCALE-Sim: `python3 -m scalesim.scale -i gemm` with a WS R x R array, 64 kB SRAMs, InterfaceBandwidth
  CALC (stall-free), one GEMM per run; its COMPUTE_REPORT.csv gives total cycles and utilization.
* the closed form F * (2R + C + M - 2) - 1, F = ceil(K/R) * ceil(N/C) (SCALE-Sim's per-fold WS model:
  weight load R + input stream M + R - 1 + output skew C - 1; it reports the last 0-based cycle).
* tpusim, two runs on one core with one R x C MXU (from tpu-v4: --set chip.tensorcores=1
  core.mxu.count=1 core.mxu.rows=R core.mxu.cols=R) and memory made non-limiting
  (chip.hbm.bandwidth_bytes_per_s=1e15, chip.hbm.latency_cycles=0), timing only:
  - weight_buffers=1: no shadow tile, so each fold loads, streams and drains in turn (SCALE-Sim's regime);
  - weight_buffers=2: the TPU's double-buffered weights (the next fold's load hides under the stream).
  The tpusim cycle count is the whole program's (DMA issue, pops through the VPU to VMEM, the final
  store), and its "MXU cycles" column is the busy time of the MXU alone (units.*.mxu0.busy_cycles).
Host time is the wall time of each simulator process; peak RSS from os.wait4 (ru_maxrss).
"""

import argparse
import csv
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALESIM_GEMMS = [(128, 128, 128), (512, 512, 512), (1024, 1024, 1024), (64, 784, 128),
                  (256, 4096, 1024)]


def timed(cmd, cwd, env=None):
    """Returns (returncode, wall seconds, peak RSS MiB, stdout+stderr)."""
    out = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    out.seek(0)
    return (os.waitstatus_to_exitcode(status), wall, ru.ru_maxrss / 1024.0,
            out.read().decode(errors="replace"))


def closed_form(m, k, n, r, c):
    folds = math.ceil(k / r) * math.ceil(n / c)
    return folds, folds * (2 * r + c + m - 2) - 1


def run_scalesim(python, path, m, k, n, r, work):
    cfg = os.path.join(work, "ws.cfg")
    with open(cfg, "w") as f:
        f.write(f"""[general]
run_name = tpusim_compare_{r}x{r}_ws

[architecture_presets]
ArrayHeight:    {r}
ArrayWidth:     {r}
IfmapSramSzkB:   64
FilterSramSzkB:  64
OfmapSramSzkB:   64
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Bandwidth : 10
Dataflow : ws
MemoryBanks:   1

[run_presets]
InterfaceBandwidth: CALC
""")
    topo = os.path.join(work, f"gemm_{m}x{k}x{n}.csv")
    with open(topo, "w") as f:
        f.write("Layer Name, M, N, K,\n")
        f.write(f"gemm, {m}, {n}, {k},\n")
    logdir = os.path.join(work, "logs")
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    env = dict(os.environ, PYTHONPATH=path)
    rc, wall, rss, text = timed([python, "-m", "scalesim.scale", "-c", cfg, "-t", topo, "-p",
                                 logdir, "-i", "gemm"], cwd=path, env=env)
    if rc != 0:
        raise RuntimeError(f"SCALE-Sim failed ({rc}):\n{text[-2000:]}")
    reports = glob.glob(os.path.join(logdir, "**", "COMPUTE_REPORT.csv"), recursive=True)
    with open(reports[0]) as f:
        rows = list(csv.reader(f))
    head = [h.strip() for h in rows[0]]
    vals = [v.strip() for v in rows[1]]
    rec = dict(zip(head, vals))
    return dict(cycles=int(float(rec["Total Cycles"])), stalls=int(float(rec.get("Stall Cycles", 0))),
                util=float(rec["Overall Util %"]), wall=wall, rss=rss)


def run_tpusim(tpusim, m, k, n, r, wb, work):
    hlo = os.path.join(ROOT, "benchmarks", "workloads", f"gemm_{m}x{k}x{n}_bf16.hlo")
    if not os.path.exists(hlo):
        hlo = os.path.join(work, f"gemm_{m}x{k}x{n}.hlo")
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import gen_workloads  # noqa: E402
        with open(hlo, "w") as f:
            f.write(gen_workloads.gen_gemm(m, k, n))
    rep = os.path.join(work, "r.json")
    sets = ["chip.tensorcores=1", "core.mxu.count=1", f"core.mxu.rows={r}", f"core.mxu.cols={r}",
            f"core.mxu.weight_buffers={wb}", "chip.hbm.bandwidth_bytes_per_s=1e15",
            "chip.hbm.latency_cycles=0"]
    cmd = [tpusim, "run", hlo, "--config", "tpu-v4", "--timing-only", "--report", rep]
    for s in sets:
        cmd += ["--set", s]
    rc, wall, rss, text = timed(cmd, cwd=ROOT)
    if rc != 0:
        raise RuntimeError(f"tpusim failed ({rc}): {text.strip()[:500]}")
    with open(rep, encoding="utf-8", errors="replace") as f:
        rj = json.load(f)
    mxu = rj["units"].get("chip0.core0.mxu0", {})
    # With one weight buffer the weight shift never overlaps streaming, so the MXU's own timeline is
    # its busy (stream + fill/drain) cycles plus its weight-shift cycles.
    mxu_time = mxu.get("busy_cycles", 0) + (mxu.get("weight_shift_cycles", 0) if wb == 1 else 0)
    return dict(cycles=rj["cycles"], mxu_busy=mxu_time,
                util=100.0 * rj["mxu_utilization"], wall=wall, rss=rss, cmd=" ".join(cmd[1:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scalesim", help="path of a SCALE-Sim v2 checkout (the folder holding scalesim/)")
    ap.add_argument("--tpusim", default=os.path.join(ROOT, "build", "tpusim"))
    ap.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3")
                    else sys.executable, help="interpreter with numpy/pandas/tqdm for SCALE-Sim")
    ap.add_argument("--array", type=int, default=128, help="R = C of the square array")
    ap.add_argument("--gemms", default="", help="MxKxN,... (default: SCALE-Sim's five)")
    ap.add_argument("--out", default="", help="also write the Markdown table here")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.scalesim, "scalesim")):
        print(f"compare_scalesim: error: {args.scalesim} has no scalesim/ package", file=sys.stderr)
        return 2
    gemms = SCALESIM_GEMMS
    if args.gemms:
        gemms = [tuple(int(x) for x in g.split("x")) for g in args.gemms.split(",")]
    r = args.array
    lines = [
        f"Array {r}x{r}, weight-stationary. Cycles; host seconds; peak RSS MiB.",
        "",
        "| GEMM MxKxN | folds | closed form F(2R+C+M-2)-1 | SCALE-Sim cycles | SCALE-Sim util % | "
        "tpusim WB=1 cycles | tpusim WB=1 MXU time (busy + weight shift) | tpusim WB=2 cycles | tpusim WB=2 util % | "
        "SCALE-Sim host s | tpusim host s (WB=1) | host time ratio | SCALE-Sim RSS | tpusim RSS |",
        "|---|" + "---:|" * 13,
    ]
    tot = dict(ss=0.0, tp=0.0)
    with tempfile.TemporaryDirectory() as work:
        for (m, k, n) in gemms:
            folds, cf = closed_form(m, k, n, r, r)
            ss = run_scalesim(args.python, os.path.abspath(args.scalesim), m, k, n, r, work)
            t1 = run_tpusim(args.tpusim, m, k, n, r, 1, work)
            t2 = run_tpusim(args.tpusim, m, k, n, r, 2, work)
            tot["ss"] += ss["wall"]
            tot["tp"] += t1["wall"]
            lines.append(
                f"| {m}x{k}x{n} | {folds} | {cf} | {ss['cycles']} | {ss['util']:.1f} | {t1['cycles']} | "
                f"{t1['mxu_busy']} | {t2['cycles']} | {t2['util']:.1f} | {ss['wall']:.2f} | "
                f"{t1['wall']:.3f} | {ss['wall'] / t1['wall']:.0f}x | {ss['rss']:.0f} | {t1['rss']:.0f} |")
            print(lines[-1], flush=True)
    lines.append("")
    lines.append(f"Total host time: SCALE-Sim {tot['ss']:.1f} s, tpusim (WB=1) {tot['tp']:.2f} s "
                 f"({tot['ss'] / tot['tp']:.0f}x).")
    lines.append(f"tpusim command (per GEMM): {t1['cmd']}")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
