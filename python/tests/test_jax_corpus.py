"""Every module of the generated JAX/Flax corpus (tests/data/hlo/jax, scripts/gen_jax_corpus.py)
runs on a TPU v2-8 and passes the value check, except those EXPECTED.json lists: under
`unsupported` with the HLO op the compiler cannot lower yet (they must still fail on exactly that
op), under `check_fails` with the known cause of a failed value check (they must still run and
still fail the check: strict xfail, so a fix shows up as a failure to update the list), and under
`timing_only` with why their values are not checked (they must still run timing-only for exactly
the --max-check-bytes reason). `max_check_bytes` raises the check's memory limit (bytes, the
estimate of `tpusim run --max-check-bytes`; default 1 GiB) for the modules it names.

TPUSIM_CORPUS_MAX_CHECK_BYTES=N raises the limit for every module (a machine with the memory and
time to check the `timing_only` ones too: they must then pass)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import tpusim

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "hlo" / "jax"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
_EXPECTED = json.loads((CORPUS / "EXPECTED.json").read_text())
EXPECTED = _EXPECTED["unsupported"]
CHECK_FAILS = _EXPECTED.get("check_fails", {})
TIMING_ONLY = _EXPECTED.get("timing_only", {})
MAX_CHECK_BYTES = _EXPECTED.get("max_check_bytes", {})
DEFAULT_MAX_CHECK_BYTES = 1 << 30  # tpusim.run's default
RAISED = int(os.environ.get("TPUSIM_CORPUS_MAX_CHECK_BYTES", "0"))


def test_manifest_records_versions_and_every_file() -> None:
    assert set(MANIFEST["versions"]) >= {"jax", "jaxlib", "flax", "optax"}
    on_disk = {p.name for p in CORPUS.glob("*.hlo")}
    assert on_disk == set(MANIFEST["modules"])
    for listed in (EXPECTED, CHECK_FAILS, TIMING_ONLY, MAX_CHECK_BYTES):
        assert set(listed) <= on_disk
    assert not set(TIMING_ONLY) & set(CHECK_FAILS)


@pytest.mark.parametrize("name", sorted(MANIFEST["modules"]))
def test_module_runs_and_checks(name: str) -> None:
    info = MANIFEST["modules"][name]
    path = CORPUS / name
    if name in EXPECTED:
        with pytest.raises(tpusim.UnsupportedError) as e:
            tpusim.run(path, config="tpu-v2-8")
        assert f"({EXPECTED[name]})" in str(e.value), str(e.value)
        return
    limit = max(MAX_CHECK_BYTES.get(name, DEFAULT_MAX_CHECK_BYTES), RAISED)
    report = tpusim.run(path, config="tpu-v2-8", max_check_bytes=limit,
                        raise_on_check_failure=name not in CHECK_FAILS)
    assert report.replicas == info["replicas"] * info["partitions"]
    assert report.cycles > 0
    if not report.check.performed:
        assert name in TIMING_ONLY, (
            f"{name} ran timing-only ({report.check.reason}); every module not listed under "
            "EXPECTED.json `timing_only` must be checked")
        assert "max-check-bytes" in report.check.reason, report.check.reason
        return
    if name in TIMING_ONLY and not RAISED:
        pytest.fail(f"{name} is checked now: remove it from EXPECTED.json timing_only")
    if name in CHECK_FAILS:
        assert not report.check.passed, f"{name} passes now: remove it from check_fails"
        pytest.xfail(CHECK_FAILS[name])
    assert report.check.passed, report.check.reason
