#!/usr/bin/env python3
"""A design-space sweep, from `tpusim sweep ... --out sweep.csv`.

usage: python3 scripts/plot_sweep.py SWEEP.csv -o sweep.png [--metric cycles] [--heatmap]

SWEEP.csv has one row per point: `point`, one column per grid key (the config keys of --grid), then
`exit_code` and the results (driver/sweep.h: cycles, seconds, achieved_flops_per_s,
fraction_of_peak, mxu_utilization, hbm_bandwidth_bytes_per_s, ...). Lines (default): the metric
against the first grid key, one line per value of the second key (and of any further keys).
--heatmap (two grid keys): the metric over the grid, one cell per point. Failed points (no
results) are left out and counted in the title.
"""
import argparse
import csv
import sys

from plot_util import pyplot

plt = pyplot()

RESULT_START = "exit_code"


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep", help="tpusim sweep --out CSV")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--metric", default="cycles", help="result column to plot (default: cycles)")
    ap.add_argument("--heatmap", action="store_true", help="a heat map of two grid keys")
    args = ap.parse_args()
    try:
        with open(args.sweep, newline="") as f:
            rows = list(csv.DictReader(f))
            header = rows[0].keys() if rows else []
    except OSError as e:
        sys.exit(f"plot_sweep.py: error: cannot read {args.sweep}: {e}")
    header = list(header)
    if "point" not in header or RESULT_START not in header:
        sys.exit(f"plot_sweep.py: error: {args.sweep} is not a tpusim sweep CSV (no point/exit_code columns)")
    keys = header[1:header.index(RESULT_START)]
    if args.metric not in header:
        sys.exit(f"plot_sweep.py: error: no column '{args.metric}' (columns: {', '.join(header)})")
    ok = [r for r in rows if as_number(r[args.metric]) is not None]
    failed = len(rows) - len(ok)
    if not ok:
        sys.exit("plot_sweep.py: error: no point has results")
    title = f"{args.metric} over {' x '.join(keys)}" + (f" ({failed} failed points left out)" if failed else "")
    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=110)
    if args.heatmap:
        if len(keys) != 2:
            sys.exit("plot_sweep.py: error: --heatmap needs exactly two grid keys")
        xs = sorted({r[keys[0]] for r in rows}, key=lambda v: (as_number(v) is None, as_number(v) or 0, v))
        ys = sorted({r[keys[1]] for r in rows}, key=lambda v: (as_number(v) is None, as_number(v) or 0, v))
        grid = [[float("nan")] * len(xs) for _ in ys]
        for r in ok:
            grid[ys.index(r[keys[1]])][xs.index(r[keys[0]])] = as_number(r[args.metric])
        im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
        ax.set_xticks(range(len(xs)), xs)
        ax.set_yticks(range(len(ys)), ys)
        ax.set_xlabel(keys[0])
        ax.set_ylabel(keys[1])
        for j, row in enumerate(grid):
            for i, v in enumerate(row):
                if v == v:
                    ax.text(i, j, f"{v:.4g}", ha="center", va="center", color="w", fontsize=8)
        fig.colorbar(im, ax=ax, label=args.metric)
    else:
        series = {}
        for r in ok:
            label = ", ".join(f"{k}={r[k]}" for k in keys[1:]) or args.metric
            series.setdefault(label, []).append((as_number(r[keys[0]]), r[keys[0]], as_number(r[args.metric])))
        numeric_x = all(x is not None for pts in series.values() for x, _, _ in pts)
        for label, pts in series.items():
            pts.sort(key=lambda p: (p[0] if numeric_x else p[1]))
            xs = [p[0] if numeric_x else p[1] for p in pts]
            ax.plot(xs, [p[2] for p in pts], marker="o", label=label)
        ax.set_xlabel(keys[0])
        ax.set_ylabel(args.metric)
        ax.grid(alpha=0.3)
        if len(series) > 1 or keys[1:]:
            ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
