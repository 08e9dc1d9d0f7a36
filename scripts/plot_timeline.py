#!/usr/bin/env python3
"""Unit utilization per core over time, from a tpusim trace.

usage: /usr/bin/python3 scripts/plot_timeline.py TRACE.json -o timeline.png [--bins N] [--max-cores K]

TRACE.json is `tpusim run --trace` (Chrome/Perfetto JSON, sim/trace/trace_writer.h): one process per
core, threads per unit (mxu0 weight loads / matmuls / pops, vpu, xlu, dma0.., ici, sequencer; an
overflow thread "dma0 (2)" when a unit's instructions overlap), one "X" event per instruction from
the cycle its unit took it to its completion, with exact cycles in args.start_cycle / end_cycle.
The threads of one unit (the text before the first space of a thread's name) count as one unit.
The run is cut into N equal bins; a unit class's utilization in a bin is the fraction of
(its tracks x bin length) covered by its events (each track's events merged first, since a
unit can hold two instructions at once) — e.g. 50% MXU = on average half of the core's MXUs
had an instruction in flight. Classes: MXU (mxu*), VPU (vpu), XLU (xlu), DMA (dma*), ICI (ici). The
sequencer's track (scalar and sync.wait) is not a unit's work and is left out. One panel per core,
the first K cores (default 8). Needs Debian's python3-matplotlib (Agg backend).
"""
import argparse
import os
import sys

from plot_util import load_json, pyplot

plt = pyplot()

CLASSES = [("MXU", "mxu", "tab:blue"), ("VPU", "vpu", "tab:orange"), ("XLU", "xlu", "tab:purple"),
           ("DMA", "dma", "tab:green"), ("ICI", "ici", "tab:red")]


def class_of(track_name):
    for label, prefix, _ in CLASSES:
        if track_name.startswith(prefix):
            return label
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="tpusim run --trace JSON")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--bins", type=int, default=120, help="time bins (default 120)")
    ap.add_argument("--max-cores", type=int, default=8, help="cores to draw (default 8)")
    ap.add_argument("--title", default=None, help="title (default: the trace file name)")
    args = ap.parse_args()

    t = load_json(args.trace)
    if "traceEvents" not in t:
        sys.exit(f"plot_timeline.py: error: {args.trace} is not a trace (no 'traceEvents')")
    clock = float(t.get("metadata", {}).get("clock_hz", 0)) or None

    cores, tracks, units = {}, {}, {}  # pid -> name; (pid, tid) -> class; (pid, tid) -> unit
    for e in t["traceEvents"]:
        if e.get("ph") != "M":
            continue
        if e.get("name") == "process_name":
            cores[e["pid"]] = e["args"]["name"]
        elif e.get("name") == "thread_name":
            tracks[(e["pid"], e["tid"])] = class_of(e["args"]["name"])
            units[(e["pid"], e["tid"])] = e["args"]["name"].split(" ")[0]
    events = [e for e in t["traceEvents"] if e.get("ph") == "X"]
    if not events:
        sys.exit("plot_timeline.py: error: the trace has no events (was the run traced?)")

    def span(e):  # cycles when exact cycles are present, else microseconds
        a = e.get("args", {})
        if "start_cycle" in a and "end_cycle" in a:
            return float(a["start_cycle"]), float(a["end_cycle"])
        return float(e["ts"]), float(e["ts"]) + float(e["dur"])

    use_cycles = all("start_cycle" in e.get("args", {}) for e in events)
    end = max(span(e)[1] for e in events)
    nb = max(1, args.bins)
    width = end / nb
    pids = sorted(p for p in cores if any(tracks.get((p, tid)) for (pp, tid) in tracks if pp == p))
    shown = pids[: max(1, args.max_cores)]

    busy = {(p, c): [0.0] * nb for p in shown for c, _, _ in CLASSES}
    ntracks = {(p, c): 0 for p in shown for c, _, _ in CLASSES}
    for p, u in sorted({(p, units[(p, tid)]) for (p, tid), c in tracks.items() if c and p in shown}):
        ntracks[(p, class_of(u))] += 1
    # A unit can hold two instructions at once (an MXU shifts the next weight tile in while it
    # streams): each track counts as busy over the union of its events, so 100% is the ceiling.
    spans = {}
    for e in events:
        if e["pid"] in shown and tracks.get((e["pid"], e["tid"])):
            spans.setdefault((e["pid"], units[(e["pid"], e["tid"])]), []).append(span(e))
    for (p, unit), ivs in spans.items():
        c = class_of(unit)
        ivs.sort()
        merged = [list(ivs[0])]
        for s, f in ivs[1:]:
            if s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], f)
            else:
                merged.append([s, f])
        for s, f in merged:
            b = int(s // width)
            while b < nb and b * width < f:
                lo, hi = max(s, b * width), min(f, (b + 1) * width)
                if hi > lo:
                    busy[(p, c)][b] += hi - lo
                b += 1

    # x axis: microseconds of simulated time.
    to_us = (1e6 / clock) if (use_cycles and clock) else 1.0
    xs = [(i + 0.5) * width * to_us for i in range(nb)]
    fig, axes = plt.subplots(len(shown), 1, figsize=(10, 1.9 + 1.7 * len(shown)), dpi=110,
                             sharex=True, squeeze=False)
    for ax, p in zip(axes[:, 0], shown):
        for c, _, color in CLASSES:
            n = ntracks[(p, c)]
            if n == 0 or not any(busy[(p, c)]):
                continue
            ys = [100 * v / (n * width) for v in busy[(p, c)]]
            ax.fill_between(xs, ys, step="mid", alpha=0.18, color=color)
            ax.step(xs, ys, where="mid", color=color, lw=1.2, label=f"{c} ({n} unit{'s' if n > 1 else ''})")
        ax.set_ylim(0, 100)
        ax.set_ylabel(f"{cores[p]}\nbusy (%)", fontsize=9)
        ax.grid(True, lw=0.4, alpha=0.5)
        if ax is axes[0, 0] or ax.get_legend_handles_labels()[1] != axes[0, 0].get_legend_handles_labels()[1]:
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0)
    axes[-1, 0].set_xlabel("simulated time (µs)" if to_us != 1.0 or not use_cycles else "simulated time (cycles)")
    axes[-1, 0].set_xlim(0, end * to_us)
    title = args.title or os.path.basename(args.trace)
    more = f" (first {len(shown)} of {len(pids)} cores)" if len(pids) > len(shown) else ""
    axes[0, 0].set_title(f"Unit utilization over time: {title}{more}\n"
                         f"share of each unit class's tracks with an instruction in flight, "
                         f"{nb} bins of {width * to_us:.3g} µs", fontsize=11)
    if t.get("metadata", {}).get("truncated"):
        fig.text(0.01, 0.005, "trace truncated: later events are missing", fontsize=8, color="red")
    fig.tight_layout()
    fig.savefig(args.output)
    print(f"wrote {args.output}: {len(events)} events, {len(shown)} core(s)")


if __name__ == "__main__":
    main()
