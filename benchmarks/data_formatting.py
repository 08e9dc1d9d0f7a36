#!/usr/bin/env python3
"""Data-formatting ops of the measured TPU v3 profiles, rebuilt as one-op modules and simulated.

The calibration profiles (../shared/calibration/op_stats, read in place: no licence, never copied
into the repository; when the folder is absent the script says so and exits 0) list every
top-level op of three MLPerf v0.7 training steps with its full HLO text after XLA's optimizations,
tiled layouts included. A "data formatting" row is a `copy` or `reshape` between two tile layouts:
its text states the operand's and the result's shape and layout completely, so it rebuilds as
`ENTRY { p = OPERAND parameter(0); ROOT r = RESULT op(p) }` with nothing inferred.

From the repository root:

  python3 benchmarks/data_formatting.py --tpusim build/tpusim [--top 40] [--markdown out.md]

Per model, the `--top` distinct ops by total self time run as `tpusim run M --config
configs/tpu-v3.yaml --timing-only`; per op the table gives the simulated and measured time (us),
the error (simulated / measured - 1) and the HBM bytes simulated over the bytes the profile
measured (`Measured Memory BW (GiB/s)` x self time). Summary per op kind: median error, median
|error|, how many within 25 %, median bytes ratio.

Python 3 standard library only.
"""

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_STATS = os.path.join(ROOT, "..", "shared", "calibration", "op_stats")
# "%name = SHAPE op(OPERAND_SHAPE %operand)" with SHAPE an array shape and its layout.
OP_RE = re.compile(r"^%\S+ = (\S+\[[^\]]*\]\{[^}]*\}) (copy|reshape)\((\S+\[[^\]]*\]\{[^}]*\}) %\S+\)$")


def rows_of(path, top):
    """The `top` distinct data-formatting ops of one profile by total self time."""
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Category"] == "data formatting"]
    rows.sort(key=lambda r: -float(r["Total self time (us)"]))
    out, seen = [], set()
    for r in rows:
        m = OP_RE.match(r["HLO op"].strip())
        if not m or m.group(0) in seen:
            continue
        seen.add(m.group(0))
        us = float(r["Avg. self time (us)"])
        gib_s = float(r["Measured Memory BW (GiB/s)"] or 0)
        out.append({"result": m.group(1), "op": m.group(2), "operand": m.group(3), "us": us,
                    "bytes": gib_s * 2**30 * us * 1e-6, "name": r["HLO op"].split(" ")[0]})
        if len(out) == top:
            break
    return out


def simulate(tpusim, row):
    text = (f"HloModule data_formatting\nENTRY e {{\n  p = {row['operand']} parameter(0)\n"
            f"  ROOT r = {row['result']} {row['op']}(p)\n}}\n")
    with tempfile.TemporaryDirectory() as tmp:
        hlo, rep = os.path.join(tmp, "m.hlo"), os.path.join(tmp, "r.json")
        with open(hlo, "w") as f:
            f.write(text)
        p = subprocess.run([tpusim, "run", hlo, "--config", "tpu-v3", "--timing-only", "--report",
                            rep], capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            return None, (p.stderr.strip().splitlines() or ["?"])[0][:120]
        with open(rep) as f:
            r = json.load(f)
    return {"us": r["seconds"] * 1e6,
            "bytes": r["hbm"]["bytes_read"] + r["hbm"]["bytes_written"]}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpusim", default=os.path.join(ROOT, "build", "tpusim"))
    ap.add_argument("--stats", default=DEFAULT_STATS)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--markdown")
    args = ap.parse_args()
    if not os.path.isdir(args.stats):
        print(f"data_formatting: {args.stats} is absent; nothing to compare (skipped)")
        return 0
    lines = ["| model | op | result | measured us | simulated us | error | bytes sim/measured |",
             "|---|---|---|---:|---:|---:|---:|"]
    errs, ratios = {}, {}
    for name in sorted(os.listdir(args.stats)):
        if not name.endswith("_op_stats.csv"):
            continue
        model = name.split("_")[2]
        for row in rows_of(os.path.join(args.stats, name), args.top):
            sim, err = simulate(args.tpusim, row)
            if sim is None:
                lines.append(f"| {model} | {row['op']} | `{row['result']}` | {row['us']:.1f} | "
                             f"error: {err} | | |")
                continue
            e = sim["us"] / row["us"] - 1
            ratio = sim["bytes"] / row["bytes"] if row["bytes"] > 0 else float("nan")
            errs.setdefault(row["op"], []).append(e)
            ratios.setdefault(row["op"], []).append(ratio)
            lines.append(f"| {model} | {row['op']} | `{row['result']}` | {row['us']:.1f} | "
                         f"{sim['us']:.1f} | {e:+.1%} | {ratio:.2f} |")
    lines += ["", "| op | ran | median error | median abs error | within 25 % | median bytes ratio |",
              "|---|---:|---:|---:|---:|---:|"]
    for op in sorted(errs):
        e = errs[op]
        lines.append(f"| {op} | {len(e)} | {statistics.median(e):+.1%} | "
                     f"{statistics.median(abs(x) for x in e):.1%} | "
                     f"{sum(abs(x) <= 0.25 for x in e)} | {statistics.median(ratios[op]):.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
