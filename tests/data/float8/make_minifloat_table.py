#!/usr/bin/env python3
"""Writes minifloat_table.txt: ml_dtypes' conversions of every XLA 8-bit float format.

Run from the repository root:
    python3 tests/data/float8/make_minifloat_table.py > tests/data/float8/minifloat_table.txt

Lines (hex, no 0x):
    d FORMAT BITS F32BITS   ml_dtypes' value of f8 pattern BITS (F32BITS = "nan" for any NaN)
    e FORMAT F32BITS BITS   ml_dtypes' f8 pattern for the f32 input F32BITS (np.float32 -> f8)
Encode inputs per format: every value of the format and its negation, the midpoint of every two
neighbouring values and the f32 numbers either side of it, values past the largest finite one,
below the smallest one, +-0, +-inf and NaN. tests/common/float8_test.cc checks common/float8.cc
against every line.
"""
import ml_dtypes
import numpy as np

FORMATS = {
    "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e5m2": ml_dtypes.float8_e5m2,
    "f8e4m3": ml_dtypes.float8_e4m3,
    "f8e3m4": ml_dtypes.float8_e3m4,
    "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
    "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
}


def f32_hex(x):
    return "%08x" % int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def main():
    print("# ml_dtypes %s, numpy %s" % (ml_dtypes.__version__, np.__version__))
    print("# python3 tests/data/float8/make_minifloat_table.py > "
          "tests/data/float8/minifloat_table.txt")
    for name, t in FORMATS.items():
        values = np.arange(256, dtype=np.uint8).view(t).astype(np.float32)
        for b, v in enumerate(values):
            print("d %s %02x %s" % (name, b, "nan" if np.isnan(v) else f32_hex(v)))
        finite = sorted(set(float(v) for v in values if np.isfinite(v)))
        fmax, fmin = finite[-1], min(abs(v) for v in finite if v != 0)
        inputs = set(finite) | set(-v for v in finite)
        for lo, hi in zip(finite, finite[1:]):
            mid = np.float32((lo + hi) / 2)
            inputs |= {float(mid), float(np.nextafter(mid, np.float32(-np.inf))),
                       float(np.nextafter(mid, np.float32(np.inf)))}
        for k in (1.0625, 1.125, 1.25, 1.5, 2.0, 4.0):
            inputs |= {fmax * k, -fmax * k, fmin / k / 2}
        inputs |= {0.0, -0.0, np.inf, -np.inf, 1e-45, 3.4e38, -3.4e38}
        xs = np.array(sorted(x for x in inputs if np.isfinite(np.float32(x)) or np.isinf(x)),
                      dtype=np.float32)
        xs = np.concatenate([xs, np.array([np.nan, -np.nan], dtype=np.float32)])
        with np.errstate(all="ignore"):
            out = xs.astype(t).view(np.uint8)
        for x, b in zip(xs, out):
            print("e %s %s %02x" % (name, f32_hex(x), b))


if __name__ == "__main__":
    main()
