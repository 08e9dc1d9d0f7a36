"""Shared pytest fixtures: the repository's paths and small HLO modules."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HLO_DIR = REPO / "tests" / "data" / "hlo"

# A two-layer perceptron step's core (a dot, a bias add, tanh, a sum): small enough for every test.
SMALL_HLO = """HloModule small_mlp

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[16,32]{1,0} parameter(0)
  w = f32[32,8]{1,0} parameter(1)
  b = f32[8]{0} parameter(2)
  d = f32[16,8]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[16,8]{1,0} broadcast(b), dimensions={1}
  y = f32[16,8]{1,0} add(d, bb)
  t = f32[16,8]{1,0} tanh(y)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(t, z), dimensions={0,1}, to_apply=sum
}
"""


@pytest.fixture
def small_hlo() -> str:
    return SMALL_HLO


@pytest.fixture
def repo() -> Path:
    return REPO
