#!/usr/bin/env python3
"""interrupt_test.py TPUSIM SIGNAL: an interrupted run leaves no partial output (issues 8, 21).

Starts a long `tpusim run` (the 8192^3 bf16 GEMM of benchmarks/workloads, timing-only, on the PE-level
MXU model: minutes of simulation in little memory) with --report, --trace and --csv in a fresh
folder, sends SIGNAL (INT, TERM, HUP, QUIT, USR1, USR2 or ALRM: every termination signal
tpusim handles) after it has been running for a while, and checks that

  - tpusim exits by itself with 128 + SIGNAL (130 for SIGINT): its handler ran, it was not killed;
  - the folder holds no report, no trace, no CSV and no temporary file (WriteFileAtomic's
    `<path>.tmp.<pid>`).

Python starts the child, so SIGINT is not inherited as ignored (a non-interactive shell's `cmd &`
would ignore it, and tpusim, like other Unix tools, keeps an inherited SIG_IGN).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time


def main() -> int:
    tpusim, signame = sys.argv[1], sys.argv[2]
    signum = getattr(signal, "SIG" + signame)
    with tempfile.TemporaryDirectory(prefix="tpusim_interrupt_") as out_dir:
        outputs = [os.path.join(out_dir, n) for n in ("report.json", "trace.json", "ops.csv")]
        cmd = [tpusim, "run", "benchmarks/workloads/gemm_bf16_8192.hlo", "--config", "tpu-v4",
               "--timing-only", "--mxu-model", "pe", "--max-seconds", "600",
               "--max-instructions", "18446744073709551615",
               "--report", outputs[0], "--trace", outputs[1], "--csv", outputs[2]]
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 restore_signals=True)
        time.sleep(2.0)
        if child.poll() is not None:
            print(f"tpusim finished before the signal (exit {child.returncode}); the test needs a "
                  f"longer run:\n{child.stdout.read().decode(errors='replace')}")
            return 1
        child.send_signal(signum)
        try:
            out, _ = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            print(f"tpusim did not stop within 60 s of SIG{signame}")
            return 1
        expected = 128 + int(signum)
        if child.returncode != expected:
            how = (f"killed by signal {-child.returncode} (no handler ran)" if child.returncode < 0
                   else f"exit {child.returncode}")
            print(f"after SIG{signame}: {how}, expected exit {expected}\n"
                  f"{out.decode(errors='replace')}")
            return 1
        left = sorted(os.listdir(out_dir))
        if left:
            print(f"after SIG{signame} the output folder is not empty: {left}")
            return 1
    print(f"SIG{signame}: exit {expected}, no report, trace, CSV or temporary file left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
