"""What the plot scripts (scripts/plot_*.py) share: matplotlib's Agg pyplot, or a one-line error
naming the script when matplotlib is missing (no traceback), reading a JSON input, and the
seconds formatter."""

import json
import os
import sys


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display); exits with `<script>: error: ...` when
    matplotlib cannot be imported."""
    try:
        import matplotlib
    except ImportError:
        script = os.path.basename(sys.argv[0])
        sys.exit(f"{script}: error: matplotlib is not installed for {sys.executable} "
                 "(run scripts/setup.sh, or: apt-get install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def load_json(path):
    """The JSON document in `path`; exits with `<script>: error: cannot read PATH: REASON` when
    the file cannot be read or is not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{os.path.basename(sys.argv[0])}: error: cannot read {path}: {e}")


def fmt_s(s):
    """Seconds `s` as a short label with its unit (s, ms, µs, ns); "-" for none or <= 0."""
    if s is None or s <= 0:
        return "-"
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s:.2g} s"
