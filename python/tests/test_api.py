"""tpusim.load_config / run / compare through the bindings: values, errors, determinism."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import tpusim


def test_load_config_by_name_and_overrides() -> None:
    cfg = tpusim.load_config("tpu-v2-8")
    assert cfg.name == "tpu-v2-8"
    assert cfg.chips == 4 and cfg.tensorcores_per_chip == 2 and cfg.total_cores == 8
    fast = tpusim.load_config("tpu-v2-8", overrides={"chip.clock_hz": 1.4e9})
    assert fast.clock_hz == pytest.approx(1.4e9)
    assert fast.overrides == ("chip.clock_hz=1400000000.0",)
    derived = cfg.derived()
    assert derived and json.dumps(derived)


def test_load_config_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(tpusim.NotFoundError):
        tpusim.load_config("no-such-chip")
    with pytest.raises(tpusim.InvalidInputError, match=r"core\.mxu\.rows"):
        tpusim.load_config("tpu-v4", overrides={"core.mxu.rows": "abc"})
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: tpu-v4\ncore:\n  mxu:\n    rows: -3\n")
    with pytest.raises(tpusim.InvalidInputError) as e:
        tpusim.load_config(str(bad))
    assert "bad.yaml" in str(e.value) and "core.mxu.rows" in str(e.value)
    assert e.value.exit_code == 2


def test_run_small_module_typed_report(small_hlo: str) -> None:
    r = tpusim.run(small_hlo, config="tpu-v2")
    assert r.config == "tpu-v2" and r.replicas == 1
    assert r.cycles > 0 and r.seconds == pytest.approx(r.cycles / r.clock_hz)
    # 2*M*N*K of the dot is on the MXU.
    assert r.mxu_flops >= 2 * 16 * 8 * 32
    assert r.flops == r.mxu_flops + r.vpu_flops
    assert 0 < r.utilization <= 1
    assert set(r.stalls) <= set(tpusim.STALL_CATEGORIES)
    assert sum(c.cycles for c in r.cores) == sum(r.stalls.values())
    assert r.hbm.bytes_read > 0
    assert any(o.opcode == "dot" and o.flops > 0 for o in r.ops)
    assert r.check.performed and r.check.passed and r.check.elements_compared == 1
    assert json.loads(r.to_json())["cycles"] == r.cycles


def test_run_matches_the_command_line(small_hlo: str, tmp_path: Path, repo: Path) -> None:
    exe = repo / os.environ.get("TPUSIM_BUILD_DIR", "build") / "tpusim"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    import subprocess

    path = tmp_path / "m.hlo"
    path.write_text(small_hlo)
    out = tmp_path / "r.json"
    subprocess.run([str(exe), "run", str(path), "--config", "tpu-v2", "--report", str(out)],
                   check=True, capture_output=True)
    cli = json.loads(out.read_text())
    py = tpusim.run(path, config="tpu-v2")
    assert py.cycles == cli["cycles"] and py.flops == cli["flops"]
    assert py.raw["ops"] == cli["ops"]


def test_reports_carry_provenance_like_the_command(small_hlo: str, tmp_path: Path,
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.hlo"
    path.write_text(small_hlo)
    cfg = tpusim.load_config("tpu-v2", overrides={"chip.clock_hz": 9e8})
    r = tpusim.run(path, config=cfg, replicas=2)
    p = r.raw["provenance"]
    assert p["python_call"] == f"tpusim.run({str(path)!r}, config='tpu-v2', replicas=2)"
    assert p["overrides"] == [{"key": "chip.clock_hz", "value": "900000000.0"}]
    assert p["effective_config"]["chip"]["clock_hz"] == pytest.approx(9e8)
    assert p["git_commit"] and p["tpusim_version"] and p["argv"]
    c = tpusim.compare(path, config="tpu-v2", repeat=1, anchor=False)
    assert c.raw["provenance"]["python_call"].startswith(
        f"tpusim.compare({str(path)!r}, config='tpu-v2', repeat=1, anchor=False")
    # Like the command without -v: no per-pass info lines on stdout or stderr.
    out, err = capfd.readouterr()
    assert "pass " not in out + err and "[info]" not in out + err, out + err


def test_run_is_deterministic(small_hlo: str) -> None:
    a = tpusim.run(small_hlo, config="tiny")
    b = tpusim.run(small_hlo, config="tiny")
    assert a.to_json() == b.to_json()


def test_to_pandas(small_hlo: str) -> None:
    pd = pytest.importorskip("pandas")
    frame = tpusim.run(small_hlo, config="tiny").to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns[:3]) == ["name", "opcode", "cycles"]
    assert frame["cycles"].is_monotonic_decreasing
    assert "dot" in set(frame["opcode"])


def test_timing_only_and_replicas(small_hlo: str) -> None:
    r = tpusim.run(small_hlo, config="tpu-v2-8", replicas=8, timing_only=True)
    assert r.timing_only and not r.check.performed
    assert r.replicas == 8 and len(r.cores) == 8


def test_malformed_hlo_is_located() -> None:
    bad = "HloModule bad\n\nENTRY main {\n  x = f32[4]{0} parameter(0)\n  ROOT y = f32[4]{0} tahn(x)\n}\n"
    with pytest.raises(tpusim.InvalidInputError) as e:
        tpusim.run(bad, name="bad.hlo")
    assert "bad.hlo:5:" in str(e.value) and "tahn" in str(e.value)
    assert isinstance(e.value, tpusim.Error) and isinstance(e.value, ValueError)


def test_missing_file() -> None:
    with pytest.raises(tpusim.NotFoundError, match="nope.hlo"):
        tpusim.run("nope.hlo")


def test_bad_arguments() -> None:
    with pytest.raises(tpusim.InvalidInputError):
        tpusim.run("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n", replicas=-1)


def test_resource_limit_raises(small_hlo: str) -> None:
    with pytest.raises(tpusim.ResourceExhaustedError):
        tpusim.run(small_hlo, config="tiny", max_cycles=10)


def test_scaling(repo: Path) -> None:
    path = repo / "tests" / "data" / "hlo" / "pt_mlp_train_dp8_sep.hlo"
    r = tpusim.run(path, config="tpu-v2-8", scaling=[1, 2], timing_only=True)
    assert r.scaling is not None and [s.cores for s in r.scaling] == [1, 2]
    assert r.scaling[0].speedup == pytest.approx(1.0)


def test_compare(small_hlo: str) -> None:
    c = tpusim.compare(small_hlo, config="tpu-v2", repeat=1, anchor=False)
    assert c.cpu_seconds_per_step > 0
    assert [t.label for t in c.tpu][0] == "1 core"
    assert all(t.seconds_per_step > 0 for t in c.tpu)
    assert json.loads(c.to_json())["config"] == "tpu-v2"


def test_host_loop(repo: Path) -> None:
    path = repo / "tests" / "data" / "hlo" / "pt_mlp_train_dp8_sep.hlo"
    cfg = tpusim.load_config("tpu-v2-8", overrides={"host.step_overhead_seconds": 0.002})
    r = tpusim.run(path, config=cfg, timing_only=True, steps=20, host_input=True)
    h = r.host_loop
    assert h is not None and h.steps == 20
    assert h.device_seconds == pytest.approx(r.seconds)
    assert h.host_cpu_seconds >= 0.002
    assert h.wall_seconds == pytest.approx(max(h.host_cpu_seconds, h.pcie_seconds, h.device_seconds))
    assert h.overlap_seconds == pytest.approx(h.device_seconds + h.host_seconds - h.wall_seconds)
    assert h.infeed_bytes_per_replica > 0 and h.input_parameters
    assert h.model["host.step_overhead_seconds"] == pytest.approx(0.002)
    assert r.raw["host_loop"]["bound"] == h.bound
    no_loop = tpusim.run(path, config=cfg, timing_only=True)
    assert no_loop.host_loop is None
