#!/usr/bin/env python3
"""CPU vs simulated TPU, per step and per op, from `tpusim compare --out COMPARE.json`.

usage: /usr/bin/python3 scripts/plot_compare.py COMPARE.json -o compare.png [--top N]

Left: seconds per step of the module on this host's CPU (the evaluator, median of the timed runs,
whiskers = min..max), on one simulated TPU core and on all the cores the module runs on, log scale,
each bar labelled with its time and its speedup over the CPU (CPU seconds / TPU seconds). Right: the
top N ops by CPU time plus the top N by TPU time (union), CPU and TPU time side by side, log scale,
labelled with what bounds the op on the TPU (MXU, VPU, HBM, ICI). The definitions are those of
driver/compare.h. Needs Debian's python3-matplotlib (Agg backend).
"""
import argparse
import os
import sys

from plot_util import fmt_s, load_json, pyplot

plt = pyplot()
from matplotlib.ticker import FuncFormatter  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("compare", help="tpusim compare --out JSON")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--top", type=int, default=6, help="top ops of each side (default 6)")
    args = ap.parse_args()
    c = load_json(args.compare)
    for key in ("cpu", "tpu", "ops"):
        if key not in c:
            sys.exit(f"plot_compare.py: error: {args.compare} is not a tpusim compare JSON (no '{key}')")

    cpu = c["cpu"]
    cfg = c.get("config", "?")
    labels = [f"CPU\n(this host,\n{cpu['threads']} thread{'s' if cpu['threads'] != 1 else ''})"]
    values = [cpu["seconds_per_step"]]
    lo_err = [cpu["seconds_per_step"] - cpu.get("min_seconds", cpu["seconds_per_step"])]
    hi_err = [cpu.get("max_seconds", cpu["seconds_per_step"]) - cpu["seconds_per_step"]]
    speedups = [None]
    colors = ["tab:grey"]
    for row in c["tpu"]:
        if row["seconds_per_step"] <= 0:
            continue
        if row["label"] == "1 core":
            text = f"TPU {cfg}\n1 core"
            if row.get("sequential_runs", 1) > 1:
                text += f"\n(x{row['sequential_runs']} runs)"
        else:
            text = f"TPU {cfg}\nall cores\n({row['cores']} used)"
        labels.append(text)
        values.append(row["seconds_per_step"])
        lo_err.append(0)
        hi_err.append(0)
        speedups.append(row["speedup"])
        colors.append("tab:blue" if row["label"] == "1 core" else "tab:green")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 6.2), dpi=110,
                                   gridspec_kw=dict(width_ratios=[1, 1.6]))
    xs = range(len(values))
    ax1.bar(xs, values, color=colors, edgecolor="black", lw=0.6,
            yerr=[lo_err, hi_err], capsize=5, error_kw=dict(lw=1, ecolor="black"))
    ax1.set_yscale("log")
    ax1.set_xticks(list(xs))
    ax1.set_xticklabels(labels, fontsize=9)
    ax1.set_ylabel("time per step (log scale)")
    ax1.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_s(v)))
    ax1.set_ylim(min(values) / 4, max(values + [v + h for v, h in zip(values, hi_err)]) * 6)
    for x, v, s, hi in zip(xs, values, speedups, hi_err):
        text = fmt_s(v) if s is None else f"{fmt_s(v)}\n{s:.3g}x vs CPU"
        ax1.annotate(text, (x, v + hi), textcoords="offset points", xytext=(0, 6), ha="center",
                     fontsize=9, fontweight="bold")
    ax1.set_title(f"Per step ({c.get('replicas', 1)} replica{'s' if c.get('replicas', 1) != 1 else ''})",
                  fontsize=11)
    ax1.grid(True, axis="y", which="major", lw=0.4, alpha=0.5)

    # Per op: union of the top N by CPU time and the top N by TPU time, ordered by CPU time.
    ops = c["ops"]
    by_cpu = sorted([o for o in ops if o.get("cpu_seconds")], key=lambda o: -o["cpu_seconds"])
    by_tpu = sorted([o for o in ops if o.get("tpu_seconds")], key=lambda o: -o["tpu_seconds"])
    chosen = []
    for o in by_cpu[: args.top] + by_tpu[: args.top]:
        if o not in chosen:
            chosen.append(o)
    chosen.sort(key=lambda o: -(o.get("cpu_seconds") or 0))
    ys = list(range(len(chosen)))[::-1]
    h = 0.38
    floor = min([o["tpu_seconds"] for o in chosen if o.get("tpu_seconds")] +
                [o["cpu_seconds"] for o in chosen if o.get("cpu_seconds")] + [1e-6]) / 3
    ax2.barh([y + h / 2 for y in ys], [o.get("cpu_seconds") or 0 for o in chosen], height=h,
             color="tab:grey", edgecolor="black", lw=0.5, label="CPU (this host)")
    ax2.barh([y - h / 2 for y in ys], [o.get("tpu_seconds") or 0 for o in chosen], height=h,
             color="tab:green", edgecolor="black", lw=0.5, label=f"TPU {cfg}, all cores")
    ax2.set_xscale("log")
    ax2.set_xlim(left=floor)
    ax2.set_yticks(ys)
    ax2.set_yticklabels([f"{o['name']} ({o['opcode']})" for o in chosen], fontsize=8.5)
    for y, o in zip(ys, chosen):
        if o.get("tpu_seconds"):
            bound = o.get("bound", "-")
            frac = o.get("bound_fraction", 0)
            ax2.annotate(f"{bound} {100 * frac:.0f}%" if bound != "-" else "", (o["tpu_seconds"], y - h / 2),
                         textcoords="offset points", xytext=(3, -3), fontsize=7.5, color="darkgreen")
        else:
            ax2.annotate("no TPU work (fused or free)", (floor, y - h / 2), textcoords="offset points",
                         xytext=(3, -3), fontsize=7.5, color="dimgrey")
        if not o.get("cpu_seconds"):
            ax2.annotate("not in the module (made by the compiler)", (floor, y + h / 2),
                         textcoords="offset points", xytext=(3, -3), fontsize=7.5, color="dimgrey")
    ax2.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_s(v)))
    ax2.set_xlabel("time per step (log scale); TPU: cycles / cores / clock")
    ax2.set_title(f"Top ops (top {args.top} by CPU time and by TPU time); green text: TPU bound",
                  fontsize=11)
    ax2.legend(fontsize=8, loc="lower right")
    ax2.grid(True, axis="x", which="major", lw=0.4, alpha=0.5)

    model = os.path.basename(c.get("model", args.compare))
    fig.suptitle(f"{model}: measured CPU time vs simulated TPU time", fontsize=13)
    note = ""
    anchor = c.get("cpu_anchor")
    if anchor:
        note = (f"CPU anchor (measured in the same run): f32 GEMM {anchor['gemm_flops_per_s'] / 1e9:.3g} GFLOP/s, "
                f"memory triad {anchor['memory_bandwidth_bytes_per_s'] / 1e9:.3g} GB/s, "
                f"{anchor['threads']} thread(s). ")
    if c.get("replicas", 1) == 1:
        note += "The module has 1 replica: 'all cores' is the 1-core run (no invented data parallelism)."
    fig.text(0.01, 0.01, note, fontsize=8, color="dimgrey")
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    fig.savefig(args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
