"""Typed views of the reports the C++ driver writes.

:class:`Report` is the report of ``tpusim run --report`` (schema: docs/report-schema.md), built
by the C++ driver (driver/run_report.cc) and read here field by field; :class:`Comparison`
is ``tpusim compare --json`` (driver/compare.h). No figure is computed in Python: every
attribute is a value of the JSON, and ``to_json()`` returns that JSON unchanged.

Units: cycles are core-clock cycles (``clock_hz``), seconds are simulated seconds
(``cycles / clock_hz``), bytes are bytes, rates are per second, FLOP counts MXU multiply-adds as 2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

# Order of the stall categories (docs/report-schema.md "Stall categories"): every cycle of a core
# goes to exactly one of them.
STALL_CATEGORIES = (
    "array_active",
    "weight_shift",
    "weight_stall",
    "hbm_bound",
    "input_data_stall",
    "ici_bound",
    "vpu_bound",
    "raw_sync_stall",
    "non_matrix",
)


@dataclass(frozen=True)
class HbmStats:
    """HBM traffic of the run, all chips used."""

    bytes_read: int  #: bytes
    bytes_written: int  #: bytes
    bandwidth_bytes_per_s: float  #: (read + written) / seconds
    peak_bandwidth_bytes_per_s: float  #: configured chip.hbm.bandwidth_bytes_per_s x chips used
    utilization: float  #: bandwidth / peak, 0-1


@dataclass(frozen=True)
class IciLink:
    """One direction of one ICI link (``chip0.ici.x+``: leaving chip 0 towards +x)."""

    link: str
    bytes: int  #: bytes sent over it
    busy_cycles: int  #: cycles with a transfer on it
    bandwidth_bytes_per_s: float  #: bytes / run seconds


@dataclass(frozen=True)
class OpRecord:
    """One HLO instruction of the module as the program ran it (cycles summed over cores)."""

    name: str  #: HLO instruction name (or a name the compiler made)
    opcode: str  #: HLO opcode as XLA spells it
    cycles: int  #: core cycles charged by in-order retirement, summed over cores
    flops: int  #: FLOP executed
    bytes: int  #: DMA, ICI and VMEM bytes of its instructions
    hbm_bytes: int  #: the part moved between HBM and VMEM
    instructions: int  #: ISA instructions executed


@dataclass(frozen=True)
class CoreRecord:
    """One TensorCore's run."""

    core: int  #: global core id
    path: str  #: ``chip0.core1``
    cycles: int  #: its last completion (cycles)
    flops: int
    mxu_utilization: float  #: 0-1
    stalls: Dict[str, int]  #: category -> cycles; they sum to ``cycles``


@dataclass(frozen=True)
class CheckResult:
    """The comparison of every simulated output leaf with the CPU evaluator."""

    performed: bool
    passed: bool
    max_abs_error: float  #: vs the evaluator with TPU DEFAULT-precision dots (bf16 operands)
    max_rel_error: float
    max_abs_error_vs_f32: float  #: vs a full-f32 evaluation (XLA CPU semantics), not checked
    max_rel_error_vs_f32: float
    elements_compared: int
    atol: float
    rtol: float
    reason: str  #: why it was not performed, or the first mismatch ("" when passed)
    #: SPMD modules tpusim partitioned whose values differ from the unpartitioned module's: what
    #: the partitioned program and the f64 comparison showed (decides ``passed``); "" otherwise
    partition_note: str = ""


@dataclass(frozen=True)
class ScalingRow:
    """One core count of a scaling study (weak scaling: each replica keeps its batch)."""

    cores: int
    cycles: int
    seconds: float
    speedup: float  #: throughput vs the first row: (cores / first cores) * first cycles / cycles
    efficiency: float  #: speedup / (cores / first cores)
    collective_cycles: int  #: largest ici_bound time of any core (cycles)
    step_seconds: Optional[float] = None  #: with the host loop: pipelined s/step
    examples_per_second: Optional[float] = None  #: with the host loop
    step_speedup: Optional[float] = None  #: examples/s vs the first row
    bound: Optional[str] = None  #: "host CPU", "PCIe" or "device"


def _scaling_row(j: Dict[str, Any]) -> ScalingRow:
    return ScalingRow(
        cores=j["cores"],
        cycles=j["cycles"],
        seconds=j["seconds"],
        speedup=j["speedup"],
        efficiency=j["efficiency"],
        collective_cycles=j["collective_cycles"],
        step_seconds=j.get("step_seconds"),
        examples_per_second=j.get("examples_per_second"),
        step_speedup=j.get("step_speedup"),
        bound=j.get("bound"),
    )


@dataclass(frozen=True)
class HostLoop:
    """A training loop's host side (driver/host_loop.h): per step, in seconds.

    The host CPU stage (host.step_overhead_seconds + examples x host.input_seconds_per_example per
    replica process, shared over host.cpu_cores), the PCIe stage (infeed of the batch and outfeed
    of the results over chip.host.bandwidth_bytes_per_s, plus host.transfer_latency_seconds per
    transfer) and the simulated device step run as a pipeline: wall = max of the three.
    """

    steps: int
    replicas: int
    hosts: int
    examples_per_replica: int
    infeed_bytes_per_replica: int  #: bytes
    outfeed_bytes_per_replica: int  #: bytes
    input_parameters: List[int]  #: parameter numbers fed from the host
    device_seconds: float  #: the simulated step
    host_cpu_seconds: float
    pcie_seconds: float
    host_seconds: float  #: host CPU + PCIe
    wall_seconds: float  #: steady state, pipelined
    overlap_seconds: float  #: device + host - wall
    total_seconds: float  #: the N steps
    examples_per_second: float
    bound: str  #: "host CPU", "PCIe" or "device"
    model: Dict[str, float]  #: the config keys used


def _host_loop(j: Dict[str, Any]) -> HostLoop:
    p = j["per_step"]
    return HostLoop(
        steps=j["steps"],
        replicas=j["replicas"],
        hosts=j["hosts"],
        examples_per_replica=j["examples_per_replica"],
        infeed_bytes_per_replica=j["infeed_bytes_per_replica"],
        outfeed_bytes_per_replica=j["outfeed_bytes_per_replica"],
        input_parameters=list(j["input_parameters"]),
        device_seconds=p["device_seconds"],
        host_cpu_seconds=p["host_cpu_seconds"],
        pcie_seconds=p["pcie_seconds"],
        host_seconds=p["host_seconds"],
        wall_seconds=p["wall_seconds"],
        overlap_seconds=p["overlap_seconds"],
        total_seconds=j["total_seconds"],
        examples_per_second=j["examples_per_second"],
        bound=j["bound"],
        model=dict(j["model"]),
    )


@dataclass(frozen=True)
class Report:
    """The result of :func:`tpusim.run`: one simulated execution of an HLO module.

    Attributes are the report's keys (docs/report-schema.md); ``raw`` is the whole JSON object.
    """

    model: str  #: the module's file name (or ``<string>``)
    config: str  #: the config's name
    replicas: int  #: devices of the module (replicas x partitions)
    cycles: int  #: run length: the cycle the last instruction of any core completed
    seconds: float  #: cycles / clock_hz
    clock_hz: float  #: Hz
    flops: int  #: FLOP executed (MXU + VPU)
    mxu_flops: int
    vpu_flops: int
    achieved_flops_per_s: float  #: flops / seconds
    peak_flops_per_s: float  #: bf16 peak of the cores used
    utilization: float  #: MXU utilization, 0-1: useful MACs / (R x C x MXUs x cores x cycles)
    stalls: Dict[str, int]  #: category -> core cycles summed over cores (STALL_CATEGORIES)
    hbm: HbmStats
    host_bytes: int  #: bytes over the host (PCIe) links
    ici: List[IciLink]
    ops: List[OpRecord]
    cores: List[CoreRecord]
    check: CheckResult
    timing_only: bool  #: no values were computed
    slice: Dict[str, Any]  #: the chips simulated: chips, tensorcores_per_chip, topology, shape
    scaling: Optional[List[ScalingRow]] = None  #: only with ``scaling=[...]``
    host_loop: Optional[HostLoop] = None  #: only with ``steps=`` or ``host_input=True``
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)
    _json: str = field(default="", repr=False)

    @classmethod
    def from_json(cls, text: str) -> "Report":
        """Reads a report written by ``tpusim run --report`` or returned by the bindings."""
        j = json.loads(text)
        h = j["hbm"]
        c = j["check"]
        tol = c.get("tolerance", {})
        return cls(
            model=j.get("model", ""),
            config=j["config"],
            replicas=j.get("replicas", 1),
            cycles=j["cycles"],
            seconds=j["seconds"],
            clock_hz=j["clock_hz"],
            flops=j["flops"],
            mxu_flops=j["mxu_flops"],
            vpu_flops=j["vpu_flops"],
            achieved_flops_per_s=j["achieved_flops_per_s"],
            peak_flops_per_s=j["peak_flops_per_s"],
            utilization=j["mxu_utilization"],
            stalls=dict(j["stalls"]),
            hbm=HbmStats(
                bytes_read=h["bytes_read"],
                bytes_written=h["bytes_written"],
                bandwidth_bytes_per_s=h["bandwidth_bytes_per_s"],
                peak_bandwidth_bytes_per_s=h["peak_bandwidth_bytes_per_s"],
                utilization=h["utilization"],
            ),
            host_bytes=j.get("host", {}).get("bytes", 0),
            ici=[
                IciLink(l["link"], l["bytes"], l["busy_cycles"], l["bandwidth_bytes_per_s"])
                for l in j.get("ici", [])
            ],
            ops=[
                OpRecord(
                    name=o["name"],
                    opcode=o["opcode"],
                    cycles=o["cycles"],
                    flops=o["flops"],
                    bytes=o["bytes"],
                    hbm_bytes=o.get("hbm_bytes", 0),
                    instructions=o["instructions"],
                )
                for o in j.get("ops", [])
            ],
            cores=[
                CoreRecord(
                    core=k["core"],
                    path=k["path"],
                    cycles=k["cycles"],
                    flops=k["flops"],
                    mxu_utilization=k["mxu_utilization"],
                    stalls=dict(k["stalls"]),
                )
                for k in j.get("cores", [])
            ],
            check=CheckResult(
                performed=c["performed"],
                passed=c["passed"],
                max_abs_error=c["max_abs_error"],
                max_rel_error=c["max_rel_error"],
                max_abs_error_vs_f32=c["max_abs_error_vs_f32"],
                max_rel_error_vs_f32=c["max_rel_error_vs_f32"],
                elements_compared=c["elements_compared"],
                atol=tol.get("atol", 0.0),
                rtol=tol.get("rtol", 0.0),
                reason=c.get("reason", ""),
                partition_note=c.get("partition_note", ""),
            ),
            timing_only=j.get("timing_only", False),
            slice=dict(j.get("slice", {})),
            scaling=[_scaling_row(r) for r in j["scaling"]] if "scaling" in j else None,
            host_loop=_host_loop(j["host_loop"]) if "host_loop" in j else None,
            raw=j,
            _json=text,
        )

    def to_json(self) -> str:
        """The report JSON exactly as the C++ driver wrote it (docs/report-schema.md)."""
        return self._json if self._json else json.dumps(self.raw)

    def to_dict(self) -> Dict[str, Any]:
        """The report as parsed JSON (a fresh copy)."""
        return json.loads(self.to_json())

    def to_pandas(self) -> Any:
        """The per-op records as a ``pandas.DataFrame``, one row per op, columns ``name, opcode,
        cycles, flops, bytes, hbm_bytes, instructions``; sorted by cycles, descending.

        Raises ImportError when pandas is not installed."""
        import pandas as pd  # optional dependency

        frame = pd.DataFrame(
            [o.__dict__ for o in self.ops],
            columns=["name", "opcode", "cycles", "flops", "bytes", "hbm_bytes", "instructions"],
        )
        return frame.sort_values("cycles", ascending=False, kind="stable").reset_index(drop=True)

    def summary(self) -> str:
        """A short readable summary: cycles, seconds, FLOP/s, MXU utilization, HBM, check."""
        lines = [
            f"model        {self.model} ({self.replicas} device(s), config {self.config})",
            f"cycles       {self.cycles} ({self.seconds:.6g} s at {self.clock_hz / 1e9:.4g} GHz)",
            f"FLOP         {self.flops} ({self.achieved_flops_per_s / 1e12:.4g} TFLOP/s, "
            f"{100 * self.raw.get('fraction_of_peak', 0.0):.1f}% of peak)",
            f"MXU util     {100 * self.utilization:.1f}%",
            f"HBM          {self.hbm.bytes_read} B read, {self.hbm.bytes_written} B written",
        ]
        if self.check.performed:
            lines.append(
                f"check        {'PASSED' if self.check.passed else 'FAILED'}: "
                f"{self.check.elements_compared} elements, max abs error "
                f"{self.check.max_abs_error:.3g}"
            )
        else:
            lines.append(f"check        not performed: {self.check.reason}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


@dataclass(frozen=True)
class TpuRow:
    """One simulated configuration of a comparison."""

    label: str  #: "1 core" or "all cores"
    cores: int
    seconds_per_step: float  #: simulated seconds for one step (all replicas)
    cycles: int
    clock_hz: float
    mxu_utilization: float
    speedup: float  #: CPU seconds_per_step / seconds_per_step
    note: str


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`tpusim.compare`: measured CPU time beside simulated TPU time."""

    model: str
    config: str
    replicas: int
    cpu_seconds_per_step: float  #: median of the timed CPU runs of the evaluator (seconds)
    tpu: List[TpuRow]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)
    _json: str = field(default="", repr=False)

    @classmethod
    def from_json(cls, text: str) -> "Comparison":
        j = json.loads(text)
        return cls(
            model=j["model"],
            config=j["config"],
            replicas=j["replicas"],
            cpu_seconds_per_step=j["cpu"]["seconds_per_step"],
            tpu=[
                TpuRow(
                    label=t["label"],
                    cores=t["cores"],
                    seconds_per_step=t["seconds_per_step"],
                    cycles=t["cycles"],
                    clock_hz=t["clock_hz"],
                    mxu_utilization=t["mxu_utilization"],
                    speedup=t["speedup"],
                    note=t.get("note", ""),
                )
                for t in j["tpu"]
            ],
            raw=j,
            _json=text,
        )

    def to_json(self) -> str:
        """The JSON of ``tpusim compare --json`` unchanged."""
        return self._json

    def to_pandas(self) -> Any:
        """Per-op rows (``name, opcode, cpu_seconds, tpu_seconds, ...``) as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.raw.get("ops", []))
