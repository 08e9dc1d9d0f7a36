"""Every module of the generated JAX/Flax corpus (tests/data/hlo/jax, scripts/gen_jax_corpus.py)
runs on a TPU v2-8 and passes the value check, except those EXPECTED.json lists: under
`unsupported` with the HLO op the compiler cannot lower yet (they must still fail on exactly that
op), and under `check_fails` with the known cause of a failed value check (they must still run
and still fail the check: strict xfail, so a fix shows up as a failure to update the list)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tpusim

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "hlo" / "jax"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
_EXPECTED = json.loads((CORPUS / "EXPECTED.json").read_text())
EXPECTED = _EXPECTED["unsupported"]
CHECK_FAILS = _EXPECTED.get("check_fails", {})


def test_manifest_records_versions_and_every_file() -> None:
    assert set(MANIFEST["versions"]) >= {"jax", "jaxlib", "flax", "optax"}
    on_disk = {p.name for p in CORPUS.glob("*.hlo")}
    assert on_disk == set(MANIFEST["modules"])
    assert set(EXPECTED) <= on_disk
    assert set(CHECK_FAILS) <= on_disk


@pytest.mark.parametrize("name", sorted(MANIFEST["modules"]))
def test_module_runs_and_checks(name: str) -> None:
    info = MANIFEST["modules"][name]
    path = CORPUS / name
    if name in EXPECTED:
        with pytest.raises(tpusim.UnsupportedError) as e:
            tpusim.run(path, config="tpu-v2-8")
        assert f"({EXPECTED[name]})" in str(e.value), str(e.value)
        return
    report = tpusim.run(path, config="tpu-v2-8", raise_on_check_failure=name not in CHECK_FAILS)
    assert report.replicas == info["replicas"] * info["partitions"]
    if not report.check.performed:
        # Values over the default --max-check-bytes (1 GiB) run timing-only and say so.
        assert "max-check-bytes" in report.check.reason, report.check.reason
        assert report.cycles > 0
        return
    if name in CHECK_FAILS:
        assert not report.check.passed, f"{name} passes now: remove it from check_fails"
        pytest.xfail(CHECK_FAILS[name])
    assert report.check.passed, report.check.reason
