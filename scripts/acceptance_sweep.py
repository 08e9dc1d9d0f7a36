#!/usr/bin/env python3
"""Acceptance sweep: run every HLO module of tests/data/hlo (and ../shared/hlo/real when present)
through `tpusim run --json` on a few chip configs, and every ISA program of tests/golden and
tests/data through `tpusim exec --report`, and write one normalized report per run into OUT_DIR.

A refactoring that must not change behaviour (issue 19: "cycles and bits unchanged") is checked by
running the sweep with the binary from before and the binary from after, then comparing:

    scripts/acceptance_sweep.py run  --tpusim /tmp/tpusim-before --out /tmp/accept-before
    scripts/acceptance_sweep.py run  --tpusim build/tpusim       --out /tmp/accept-after
    scripts/acceptance_sweep.py diff /tmp/accept-before /tmp/accept-after

Normalization drops only what names the build or the command line (the report's `provenance`
object: git commit, version, argv, config file path) and host wall-clock figures (keys ending in
`_seconds_host` or named `wall_seconds`, none of which a simulation computes); everything else —
cycles, stalls, per-op tables, check errors (a fingerprint of the output bits), the exit code and the
error text of a run that fails — is compared byte for byte. `diff` exits 1 and lists the runs that
differ (or exist on one side only).

Each run has a wall-clock limit (--max-seconds, default 900); a run that reaches it is recorded with
its error, so on a loaded machine rerun the runs that differ (--match NAME) before concluding
anything. Runs are sequential (the machine is shared).
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIGS = ["tpu-v4", "tpu-v2-8"]
VOLATILE_KEYS = {"provenance", "wall_seconds"}


def normalize(obj, top=True):
    """The report without its provenance and host-time fields (recursively); the top-level `model`
    path reduced to its file name (the same module may be read from tests/data or ../shared)."""
    if isinstance(obj, dict):
        out = {
            k: normalize(v, False)
            for k, v in obj.items()
            if k not in VOLATILE_KEYS and not k.endswith("_seconds_host")
        }
        if top and isinstance(out.get("model"), str):
            out["model"] = os.path.basename(out["model"])
        return out
    if isinstance(obj, list):
        return [normalize(v, False) for v in obj]
    return obj


def modules():
    """tests/data/hlo, then the modules of ../shared/hlo/real not already there byte for byte."""
    found = sorted((ROOT / "tests/data/hlo").rglob("*.hlo"))
    real = (ROOT / "../shared/hlo/real").resolve()
    if real.is_dir():
        seen = {p.read_bytes() for p in found}
        found += [p for p in sorted(real.glob("*.hlo")) if p.read_bytes() not in seen]
    else:
        print(f"note: {real} is absent; the sweep covers tests/data only", file=sys.stderr)
    return found


def programs():
    found = sorted((ROOT / "tests/golden").rglob("*.tasm"))
    found += sorted(p for p in (ROOT / "tests/data").rglob("*.tasm"))
    return found


def run_one(argv, report_path, timeout):
    """Runs argv; returns the normalized record (exit code, stderr's last line, report)."""
    try:
        p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout + 30)
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return {"exit": "timeout"}
    rec = {"exit": code}
    report = None
    if report_path is not None and report_path.exists():
        report = report_path.read_text()
        report_path.unlink()
    elif report_path is None:
        report = out
    if report:
        try:
            rec["report"] = normalize(json.loads(report))
        except json.JSONDecodeError:
            rec["stdout"] = report
    if code != 0:
        # The error text (the last line: progress and warnings come before it).
        lines = [l for l in err.splitlines() if l.strip()]
        rec["error"] = lines[-1] if lines else ""
    return rec


def cmd_run(args):
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tpusim = str(pathlib.Path(args.tpusim).resolve())
    limit = ["--max-seconds", str(args.max_seconds)]
    jobs = []
    for m in modules():
        for c in CONFIGS:
            where = "real" if "tests/data" not in str(m) else m.parent.name
            name = f"run__{where}_{m.stem}__{c}.json"
            argv = [tpusim, "-q", "run", str(m), "-c", str(ROOT / "configs" / f"{c}.yaml"), "--json"]
            jobs.append((name, argv + limit, None))
    tmp = out / "tmp-report.json"
    for p in programs():
        rel = str(p.relative_to(ROOT)).replace("/", "_")
        name = f"exec__{rel}.json"
        argv = [tpusim, "-q", "exec", str(p), "-c", str(ROOT / "configs/tpu-v4.yaml"),
                "--report", str(tmp)] + limit
        jobs.append((name, argv, tmp))
    jobs = [j for j in jobs if args.match in j[0]]
    for i, (name, argv, report_path) in enumerate(jobs):
        rec = run_one(argv, report_path, args.max_seconds)
        (out / name).write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
        print(f"[{i + 1}/{len(jobs)}] {name}: exit {rec['exit']}", flush=True)
    return 0


def cmd_diff(args):
    a, b = pathlib.Path(args.before), pathlib.Path(args.after)
    names_a = {p.name for p in a.glob("*.json")}
    names_b = {p.name for p in b.glob("*.json")}
    bad = sorted(names_a ^ names_b)
    def load(path):
        rec = json.loads(path.read_text())
        if "report" in rec:
            rec["report"] = normalize(rec["report"])
        return json.dumps(rec, indent=1, sort_keys=True)

    for n in sorted(names_a & names_b):
        if load(a / n) != load(b / n):
            bad.append(n)
    for n in bad:
        print(f"DIFFERS: {n}")
    print(f"{len(names_a & names_b)} runs compared, {len(bad)} differ")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--tpusim", default=str(ROOT / "build/tpusim"))
    r.add_argument("--out", required=True)
    r.add_argument("--max-seconds", type=int, default=900)
    r.add_argument("--match", default="", help="only the runs whose report name contains this")
    d = sub.add_parser("diff")
    d.add_argument("before")
    d.add_argument("after")
    args = ap.parse_args()
    return cmd_run(args) if args.cmd == "run" else cmd_diff(args)


if __name__ == "__main__":
    sys.exit(main())
