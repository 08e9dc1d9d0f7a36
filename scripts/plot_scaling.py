#!/usr/bin/env python3
"""Time per step and speedup vs cores.

usage: /usr/bin/python3 scripts/plot_scaling.py INPUT.json [INPUT.json ...] -o scaling.png

Each INPUT is one of:
  * a `tpusim run --scaling 1,2,4,8 --report` JSON (its `scaling` array: one point per core count),
  * a `tpusim run --report` JSON without `scaling` (one point: cores = its `replicas`),
  * a JSON array of such reports (e.g. a --replicas 1,2,4,8 sweep gathered with jq -s),
  * a `tpusim compare --out` JSON (points: its 1-core and all-cores rows, plus the CPU line).

Reports: a step of N replicas does N replicas' work, so the plot shows throughput scaling (weak
scaling, data parallelism): speedup(N) = (N / N0) * seconds(N0) / seconds(N) against the run with
the fewest cores N0, beside the ideal N / N0. Left: simulated time per step (cycles / clock_hz) vs
cores; right: the speedup. A compare JSON already counts the same work on every row (compare.h),
so its speedup is CPU seconds / TPU seconds and the CPU is drawn as a line. Log2 axis for cores.
Needs Debian's python3-matplotlib (Agg backend).
"""
import argparse
import os
import sys

from plot_util import fmt_s, load_json, pyplot

plt = pyplot()
from matplotlib.ticker import FuncFormatter  # noqa: E402



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="reports, a JSON list of reports, or a compare JSON")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    args = ap.parse_args()

    reports, compares = [], []
    for path in args.inputs:
        j = load_json(path)
        items = j if isinstance(j, list) else [j]
        for it in items:
            if isinstance(it, dict) and "tpu" in it and "cpu" in it:
                compares.append(it)
            elif isinstance(it, dict) and "cycles" in it and "clock_hz" in it:
                reports.append(it)
            else:
                sys.exit(f"plot_scaling.py: error: {path}: neither a tpusim report nor a compare JSON")
    if reports and compares:
        sys.exit("plot_scaling.py: error: give reports or a compare JSON, not both")
    if len(compares) > 1:
        sys.exit("plot_scaling.py: error: give one compare JSON")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5.4), dpi=110)
    if reports:
        pts = []
        for r in reports:
            if isinstance(r.get("scaling"), list) and r["scaling"]:
                # One point per core count of a --scaling report (docs/report-schema.md).
                pts += [(row["cores"], row["seconds"], r) for row in r["scaling"]]
            else:
                pts.append((r.get("replicas", len(r.get("cores", [])) or 1), r["cycles"] / r["clock_hz"], r))
        pts.sort(key=lambda p: p[0])
        if len({p[0] for p in pts}) != len(pts):
            sys.exit("plot_scaling.py: error: two points have the same core count")
        cores = [p[0] for p in pts]
        secs = [p[1] for p in pts]
        n0, s0 = cores[0], secs[0]
        speed = [(n / n0) * s0 / s for n, s in zip(cores, secs)]
        model = os.path.basename(pts[0][2].get("model", "?"))
        cfg = pts[0][2].get("config", "?")
        ax1.plot(cores, secs, "o-", color="tab:blue", label="simulated TPU")
        for n, s in zip(cores, secs):
            ax1.annotate(fmt_s(s), (n, s), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
        ax1.set_ylabel("time per step (cycles / clock)")
        ax2.plot(cores, speed, "o-", color="tab:blue", label=f"throughput speedup vs {n0} core{'s' if n0 > 1 else ''}")
        ax2.plot(cores, [n / n0 for n in cores], "--", color="grey", label="ideal (linear)")
        for n, v in zip(cores, speed):
            ax2.annotate(f"{v:.2f}x", (n, v), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
        ax2.set_ylabel(f"throughput speedup over {n0} core{'s' if n0 > 1 else ''}\n(work per step grows with the replicas)")
        title = f"Scaling with replicas (data parallel): {model} on {cfg}"
    else:
        c = compares[0]
        rows = [r for r in c["tpu"] if r["seconds_per_step"] > 0]
        cores = [r["cores"] for r in rows]
        secs = [r["seconds_per_step"] for r in rows]
        cpu = c["cpu"]["seconds_per_step"]
        ax1.plot(cores, secs, "o-", color="tab:green", label=f"simulated TPU {c.get('config', '?')}")
        ax1.axhline(cpu, color="tab:grey", ls="--", label=f"CPU, this host ({c['cpu']['threads']} threads)")
        for n, s in zip(cores, secs):
            ax1.annotate(fmt_s(s), (n, s), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
        ax1.set_ylabel("time per step (log scale)")
        ax1.set_yscale("log")
        ax2.plot(cores, [r["speedup"] for r in rows], "o-", color="tab:green", label="CPU seconds / TPU seconds")
        for n, r in zip(cores, rows):
            ax2.annotate(f"{r['speedup']:.3g}x", (n, r["speedup"]), textcoords="offset points", xytext=(0, 7),
                         ha="center", fontsize=8)
        ax2.set_ylabel("speedup over the CPU")
        ax2.set_ylim(bottom=0)
        model = os.path.basename(c.get("model", "?"))
        title = f"TPU cores vs CPU: {model} on {c.get('config', '?')} ({c.get('replicas', 1)} replica(s) per step)"
    ax1.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_s(v)))
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(set(cores)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlim(min(cores) / 1.5, max(cores) * 1.5)
        ax.set_xlabel("TPU cores")
        ax.grid(True, lw=0.4, alpha=0.5)
        ax.legend(fontsize=8)
    ax1.margins(y=0.2)
    ax2.margins(y=0.2)
    ax1.set_title("Time per step", fontsize=11)
    ax2.set_title("Speedup", fontsize=11)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(args.output)
    print(f"wrote {args.output} ({len(cores)} points: cores {', '.join(str(n) for n in cores)})")


if __name__ == "__main__":
    main()
