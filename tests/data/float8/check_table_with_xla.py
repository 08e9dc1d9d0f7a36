#!/usr/bin/env python3
"""Checks minifloat_table.txt (ml_dtypes' values) against XLA's own convert: each line's input
through a jax.jit-compiled convert on XLA:CPU. Prints the lines that differ and a count.

Run from the repository root (needs jax; checked with jax/jaxlib 0.10.2: 10404 lines, 0 differ):
    python3 tests/data/float8/check_table_with_xla.py tests/data/float8/minifloat_table.txt
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

TYPES = {
    "f8e4m3fn": jnp.float8_e4m3fn,
    "f8e5m2": jnp.float8_e5m2,
    "f8e4m3": jnp.float8_e4m3,
    "f8e3m4": jnp.float8_e3m4,
    "f8e4m3fnuz": jnp.float8_e4m3fnuz,
    "f8e5m2fnuz": jnp.float8_e5m2fnuz,
    "f8e4m3b11fnuz": jnp.float8_e4m3b11fnuz,
    "f8e8m0fnu": jnp.float8_e8m0fnu,
}


def f32_hex(x):
    return "nan" if np.isnan(x) else "%08x" % int(np.array([x], np.float32).view(np.uint32)[0])


def main(path):
    enc, dec = {}, {}
    for line in open(path):
        p = line.split()
        if not p or p[0] == "#":
            continue
        table = enc if p[0] == "e" else dec
        table.setdefault(p[1], []).append((int(p[2], 16), p[3]))
    lines = differ = 0
    for name, t in TYPES.items():
        xs = np.array([a for a, _ in enc[name]], np.uint32).view(np.float32)
        got = np.asarray(jax.jit(lambda x: x.astype(t))(jnp.asarray(xs))).view(np.uint8)
        for (a, want), g in zip(enc[name], got):
            lines += 1
            if int(want, 16) != g:
                differ += 1
                print("e", name, "%08x" % a, want, "xla %02x" % g)
        bits = np.array([b for b, _ in dec[name]], np.uint8)
        widen = jax.jit(lambda b: jax.lax.bitcast_convert_type(b, t).astype(jnp.float32))
        for (b, want), g in zip(dec[name], np.asarray(widen(jnp.asarray(bits)))):
            lines += 1
            if f32_hex(g) != want:
                differ += 1
                print("d", name, "%02x" % b, want, "xla", f32_hex(g))
    print("lines", lines, "differ", differ)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
