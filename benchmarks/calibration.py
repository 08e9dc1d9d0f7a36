#!/usr/bin/env python3
"""Calibration benchmark: every probe of the measured TPU v3 profile, simulated on tpu-v3.

The probes and their measured times are read in place from ../shared/calibration/probes (the
calibration set has no licence: never copy it into the repository); when the folder is absent the
script says so and exits 0.

From the repository root:

  python3 benchmarks/calibration.py --tpusim build/tpusim
  python3 benchmarks/calibration.py --tpusim build/tpusim --csv cal.csv --markdown cal.md \
      --plot docs/img/calibration.png --jobs 2

Each probe runs as `tpusim run PROBE --config configs/tpu-v3.yaml --timing-only --report R.json`
(one TensorCore of a v3 chip, which owns half of the chip's HBM: what the profile measured). Per
probe it prints the simulated and measured time (us), the error (simulated / measured - 1), the
HBM bytes the simulation moved against the profile's tile-padded bytes (`tiled_bytes`), the MXU
utilization, and the host seconds of the run. Per kind (dot, conv_fwd, conv_bwd_input,
conv_bwd_filter) and overall: the median |error| and how many probes are within 25 %.

Python 3 standard library only (the plot needs matplotlib; without it the plot is skipped with a
one-line message).
"""

import argparse
import concurrent.futures
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PROBES = os.path.join(ROOT, "..", "shared", "calibration", "probes")


def run_probe(tpusim, config, probe_dir, entry, timeout):
    """Runs one probe; returns a result dict (status 'ok', 'error' or 'timeout')."""
    path = os.path.join(probe_dir, entry["file"])
    with tempfile.TemporaryDirectory() as tmp:
        report_path = os.path.join(tmp, "r.json")
        cmd = [tpusim, "run", path, "--config", config, "--timing-only", "--report", report_path]
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "host_s": timeout, "error": f"over {timeout} s"}
        host_s = time.monotonic() - t0
        if proc.returncode != 0 or not os.path.exists(report_path):
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            msg = next((l for l in lines if "error" in l), lines[0] if lines else "")
            return {"status": "error", "host_s": host_s, "error": msg[:200]}
        with open(report_path) as f:
            report = json.load(f)
    sim_us = report["seconds"] * 1e6
    measured_us = entry["measured_avg_self_us"]
    hbm = report["hbm"]["bytes_read"] + report["hbm"]["bytes_written"]
    return {
        "status": "ok",
        "host_s": host_s,
        "sim_us": sim_us,
        "error_frac": sim_us / measured_us - 1.0,
        "hbm_bytes": hbm,
        "bytes_ratio": hbm / entry["tiled_bytes"] if entry.get("tiled_bytes") else float("nan"),
        "mxu_utilization": report.get("mxu_utilization", 0.0),
        "cycles": report["cycles"],
    }


def summarize(rows, label):
    ok = [r for r in rows if r["status"] == "ok"]
    errs = [abs(r["error_frac"]) for r in ok]
    signed = [r["error_frac"] for r in ok]
    within = sum(1 for e in errs if e <= 0.25)
    return {
        "kind": label,
        "probes": len(rows),
        "ran": len(ok),
        "median_abs_error_pct": 100 * statistics.median(errs) if errs else float("nan"),
        "median_error_pct": 100 * statistics.median(signed) if signed else float("nan"),
        "within_25pct": within,
        "max_host_s": max((r["host_s"] for r in rows), default=0.0),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tpusim", default=os.path.join(ROOT, "build", "tpusim"))
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "tpu-v3.yaml"))
    ap.add_argument("--probes", default=DEFAULT_PROBES)
    ap.add_argument("--only", default="", help="comma-separated substrings of probe file names")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--csv", default="")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--plot", default="")
    args = ap.parse_args()

    manifest = os.path.join(args.probes, "manifest.json")
    if not os.path.exists(manifest):
        print(f"calibration: {manifest} is absent (the calibration set lives in ../shared); skipped")
        return 0
    with open(manifest) as f:
        entries = json.load(f)
    if args.only:
        keys = args.only.split(",")
        entries = [e for e in entries if any(k in e["file"] for k in keys)]

    results = [None] * len(entries)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_probe, args.tpusim, args.config, args.probes, e, args.timeout): i
                for i, e in enumerate(entries)}
        for fut in concurrent.futures.as_completed(futs):
            results[futs[fut]] = fut.result()
    rows = []
    for e, r in zip(entries, results):
        row = {"file": e["file"], "kind": e["kind"], "measured_us": e["measured_avg_self_us"],
               "tiled_bytes": e.get("tiled_bytes", 0), "bound_by": e.get("bound_by", "")}
        row.update(r)
        rows.append(row)

    header = (f"{'probe':18} {'kind':16} {'measured us':>12} {'sim us':>12} {'error':>8} "
              f"{'HBM/tiled':>9} {'MXU util':>8} {'host s':>7}")
    print(header)
    for r in rows:
        if r["status"] != "ok":
            print(f"{r['file']:18} {r['kind']:16} {r['measured_us']:12.1f} {r['status']:>12} "
                  f"{'':8} {'':9} {'':8} {r['host_s']:7.2f}  {r.get('error', '')}")
            continue
        print(f"{r['file']:18} {r['kind']:16} {r['measured_us']:12.1f} {r['sim_us']:12.1f} "
              f"{100 * r['error_frac']:+7.1f}% {r['bytes_ratio']:9.2f} "
              f"{100 * r['mxu_utilization']:7.1f}% {r['host_s']:7.2f}")
    kinds = sorted({r["kind"] for r in rows})
    summary = [summarize([r for r in rows if r["kind"] == k], k) for k in kinds]
    summary.append(summarize(rows, "all"))
    print()
    print(f"{'kind':16} {'probes':>6} {'ran':>4} {'median |err|':>12} {'median err':>10} "
          f"{'within 25%':>10} {'max host s':>10}")
    for s in summary:
        print(f"{s['kind']:16} {s['probes']:6} {s['ran']:4} {s['median_abs_error_pct']:11.1f}% "
              f"{s['median_error_pct']:+9.1f}% {s['within_25pct']:10} {s['max_host_s']:10.2f}")

    if args.csv:
        keys = ["file", "kind", "status", "measured_us", "sim_us", "error_frac", "hbm_bytes",
                "tiled_bytes", "bytes_ratio", "mxu_utilization", "cycles", "host_s", "error"]
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow(r)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| probe | kind | measured us | simulated us | error | HBM bytes / tiled | "
                    "MXU util | host s |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
            for r in rows:
                if r["status"] == "ok":
                    f.write(f"| {r['file']} | {r['kind']} | {r['measured_us']:.1f} | "
                            f"{r['sim_us']:.1f} | {100 * r['error_frac']:+.1f} % | "
                            f"{r['bytes_ratio']:.2f} | {100 * r['mxu_utilization']:.1f} % | "
                            f"{r['host_s']:.2f} |\n")
                else:
                    f.write(f"| {r['file']} | {r['kind']} | {r['measured_us']:.1f} | "
                            f"{r['status']}: {r.get('error', '')} | | | | {r['host_s']:.2f} |\n")
            f.write("\n| kind | probes | ran | median abs error | median error | within 25 % | "
                    "max host s |\n|---|---:|---:|---:|---:|---:|---:|\n")
            for s in summary:
                f.write(f"| {s['kind']} | {s['probes']} | {s['ran']} | "
                        f"{s['median_abs_error_pct']:.1f} % | {s['median_error_pct']:+.1f} % | "
                        f"{s['within_25pct']} | {s['max_host_s']:.2f} |\n")
    if args.plot:
        plot(rows, args.plot)
    return 0


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("calibration: matplotlib is not installed; plot skipped", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(6, 6))
    markers = {"dot": "o", "conv_fwd": "s", "conv_bwd_input": "^", "conv_bwd_filter": "v"}
    ok = [r for r in rows if r["status"] == "ok"]
    for kind in sorted({r["kind"] for r in ok}):
        pts = [r for r in ok if r["kind"] == kind]
        ax.scatter([r["measured_us"] for r in pts], [r["sim_us"] for r in pts],
                   marker=markers.get(kind, "x"), label=kind)
    lo = min([r["measured_us"] for r in ok] + [r["sim_us"] for r in ok]) / 1.5
    hi = max([r["measured_us"] for r in ok] + [r["sim_us"] for r in ok]) * 1.5
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="simulated = measured")
    ax.plot([lo, hi], [1.25 * lo, 1.25 * hi], "k:", lw=0.6, label="±25 %")
    ax.plot([lo, hi], [0.75 * lo, 0.75 * hi], "k:", lw=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured on TPU v3 (us, avg self time)")
    ax.set_ylabel("tpusim tpu-v3 (us)")
    ax.set_title("Calibration probes: simulated vs measured")
    ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
