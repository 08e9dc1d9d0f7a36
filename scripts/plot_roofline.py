#!/usr/bin/env python3
"""Roofline of one simulated run, per HLO op.

usage: /usr/bin/python3 scripts/plot_roofline.py REPORT.json -o roofline.png [--top N] [--dpi D]

REPORT.json is `tpusim run --report` (docs/report-schema.md). For each op with FLOP and HBM traffic:
  arithmetic intensity = flops / hbm_bytes               (FLOP per byte moved by HBM <-> VMEM DMAs)
  achieved FLOP/s      = flops / (cycles / cores / clock_hz)
(`cycles` is summed over the cores the program runs on; the cores run an op at the same time, so the
op's wall time is the mean core's share). These are the cycles in-order retirement charges the op
(docs/report-schema.md): its exposed time. An op whose DMAs or MXU work overlapped earlier ops is
charged less than its own duration and can sit above the roof; the footnote counts such ops. The roof is min(peak_flops_per_s, HBM bandwidth x
intensity) with the report's `peak_flops_per_s` and `hbm.peak_bandwidth_bytes_per_s` (the cores and
chips the program uses). Marker area is proportional to the op's share of the run's cycles; the
top N ops by cycles are labelled; the whole program is a star; ops the compiler inserted (a layout
transpose, copy, pad or collective not in the input module: the report's `compiler_inserted`) have a
red edge and "[compiler-inserted]" in their label. Ops with no FLOP (data movement) or
no HBM traffic cannot sit on a log-log roofline: their count is given in the footnote.
Needs Debian's python3-matplotlib (Agg backend, no display).
"""
import argparse
import os
import sys

from plot_util import load_json, pyplot

plt = pyplot()
from matplotlib.ticker import EngFormatter, FuncFormatter  # noqa: E402



def label_points(ax, pts):
    """Labels each point "name (share%)", moving a label down in 10-point steps while it would sit
    on an earlier one (a small stand-in for a label-placement library)."""
    ax.figure.canvas.draw()
    px_per_pt = ax.figure.dpi / 72
    placed = []  # label anchors in display pixels
    for p in pts:
        x, y = ax.transData.transform((p["ai"], p["perf"]))
        dy = 4  # points
        while any(abs(x - lx) < 110 and abs(y + dy * px_per_pt - ly) < 10 * px_per_pt
                  for lx, ly in placed):
            dy -= 10
        placed.append((x, y + dy * px_per_pt))
        mark = " [compiler-inserted]" if p.get("inserted") else ""
        ax.annotate(f"{p['name']}{mark} ({100 * p['share']:.0f}%)", (p["ai"], p["perf"]),
                    textcoords="offset points", xytext=(7, dy), fontsize=8,
                    arrowprops=dict(arrowstyle="-", lw=0.4, color="grey") if dy < 0 else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report", help="tpusim run --report JSON")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--top", type=int, default=8, help="ops to label (default 8)")
    ap.add_argument("--dpi", type=int, default=110, help="resolution (default 110)")
    args = ap.parse_args()

    r = load_json(args.report)
    for key in ("ops", "peak_flops_per_s", "hbm", "clock_hz", "cycles"):
        if key not in r:
            sys.exit(f"plot_roofline.py: error: {args.report} is not a tpusim report (no '{key}')")
    peak = float(r["peak_flops_per_s"])
    bw = float(r["hbm"]["peak_bandwidth_bytes_per_s"])
    clock = float(r["clock_hz"])
    cores = max(1, len(r.get("cores", [])))
    total_cycles = sum(o["cycles"] for o in r["ops"]) or 1
    have_hbm = all("hbm_bytes" in o for o in r["ops"])
    bytes_key = "hbm_bytes" if have_hbm else "bytes"

    pts, no_flop, no_bytes = [], 0, 0
    for o in r["ops"]:
        if o["cycles"] <= 0:
            continue
        if o["flops"] <= 0:
            no_flop += 1
            continue
        if o[bytes_key] <= 0:
            no_bytes += 1
            continue
        seconds = o["cycles"] / cores / clock
        pts.append(dict(name=o["name"], opcode=o["opcode"] or "?", ai=o["flops"] / o[bytes_key],
                        perf=o["flops"] / seconds, share=o["cycles"] / total_cycles,
                        inserted=bool(o.get("compiler_inserted"))))
    if not pts:
        sys.exit("plot_roofline.py: error: no op has both FLOP and HBM bytes: nothing to plot")

    fig, ax = plt.subplots(figsize=(9.5, 6.2), dpi=args.dpi)
    ai_lo = min(p["ai"] for p in pts + [dict(ai=peak / bw)]) / 4
    ai_hi = max(p["ai"] for p in pts + [dict(ai=peak / bw)]) * 4
    n = 200
    xs = [ai_lo * (ai_hi / ai_lo) ** (i / (n - 1)) for i in range(n)]
    ax.plot(xs, [min(peak, bw * x) for x in xs], color="black", lw=2,
            label=f"roofline: peak {peak / 1e12:.4g} TFLOP/s, HBM {bw / 1e9:.4g} GB/s")
    ridge = peak / bw
    ax.axvline(ridge, color="grey", ls=":", lw=1)
    ax.annotate(f"ridge {ridge:.3g} FLOP/B", (ridge, peak), textcoords="offset points",
                xytext=(4, -14), fontsize=8, color="dimgrey")

    # One colour per opcode, the most time-consuming opcodes first.
    by_opcode = {}
    for p in pts:
        by_opcode[p["opcode"]] = by_opcode.get(p["opcode"], 0) + p["share"]
    opcodes = sorted(by_opcode, key=lambda k: -by_opcode[k])
    cmap = plt.get_cmap("tab10")
    for i, opc in enumerate(opcodes):
        sel = [p for p in pts if p["opcode"] == opc]
        color = cmap(i % 10) if i < 9 else "lightgrey"
        label = opc if i < 9 else ("other" if i == 9 else None)
        ax.scatter([p["ai"] for p in sel], [p["perf"] for p in sel],
                   s=[20 + 900 * p["share"] for p in sel], color=color, alpha=0.75,
                   edgecolors=["red" if p["inserted"] else "black" for p in sel],
                   linewidths=[1.5 if p["inserted"] else 0.5 for p in sel], label=label, zorder=3)
    if any(p["inserted"] for p in pts):
        ax.scatter([], [], s=60, facecolors="none", edgecolors="red", linewidths=1.5,
                   label="inserted by the compiler (red edge)")

    # The whole program.
    flops = float(r.get("flops", 0))
    hbm_bytes = float(r["hbm"].get("bytes_read", 0)) + float(r["hbm"].get("bytes_written", 0))
    if flops > 0 and hbm_bytes > 0 and r["cycles"] > 0:
        ax.scatter([flops / hbm_bytes], [flops / (r["cycles"] / clock)], marker="*", s=260,
                   color="gold", edgecolors="black", zorder=4, label="whole program")

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(ai_lo, ai_hi)
    lo = min(p["perf"] for p in pts) / 5
    ax.set_ylim(lo, peak * 3)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_formatter(EngFormatter(unit="FLOP/s"))
    label_points(ax, sorted(pts, key=lambda p: -p["share"])[: args.top])
    what = "HBM" if have_hbm else "moved (DMA + VMEM)"
    ax.set_xlabel(f"arithmetic intensity (FLOP per {what} byte)")
    ax.set_ylabel("achieved FLOP/s")
    model = os.path.basename(r.get("model", args.report))
    ax.set_title(f"Roofline per HLO op: {model} on {r.get('config', '?')} ({cores} core{'s' if cores > 1 else ''})\n"
                 f"marker area = share of the run's cycles; labels: top {args.top} ops",
                 fontsize=11)
    ax.grid(True, which="major", ls="-", lw=0.4, alpha=0.5)
    ax.legend(fontsize=8, loc="lower right", markerscale=0.6)
    notes = []
    above = sum(1 for p in pts if p["perf"] > min(peak, bw * p["ai"]) * 1.001)
    if above:
        notes.append(f"{above} op(s) above the roof: an op's cycles are those retirement charges it "
                     f"(its exposed time), so work overlapped with earlier ops looks faster than its roof")
    if no_flop:
        notes.append(f"{no_flop} op(s) with 0 FLOP (data movement) not shown")
    if no_bytes:
        notes.append(f"{no_bytes} op(s) with no HBM traffic not shown")
    if notes:
        fig.text(0.01, 0.01, "\n".join(notes), fontsize=7.5, color="dimgrey")
    fig.tight_layout(rect=(0, 0.015 + 0.025 * len(notes), 1, 1))
    fig.savefig(args.output)
    print(f"wrote {args.output}: {len(pts)} ops")


if __name__ == "__main__":
    main()
