# Type stubs of the pybind11 module tpusim._core (python/core.cc). Use the tpusim package's API
# (tpusim.load_config / run / compare) rather than these functions directly.
from typing import Dict, List

default_config_name: str

class ChipConfig:
    """A loaded, validated chip config (config/chip_config.h)."""

    @property
    def name(self) -> str: ...
    @property
    def source_path(self) -> str: ...
    @property
    def clock_hz(self) -> float:
        """chip.clock_hz (Hz)"""
    @property
    def tensorcores_per_chip(self) -> int: ...
    @property
    def host_bandwidth_bytes_per_s(self) -> float:
        """chip.host.bandwidth_bytes_per_s: PCIe, one direction (bytes/s)"""
    @property
    def chips(self) -> int: ...
    @property
    def total_cores(self) -> int: ...
    def derived_json(self) -> str:
        """`tpusim config show --json`: peaks (FLOP/s), bandwidths (bytes/s), ridge (FLOP/byte)"""

def load_config(name_or_path: str, overrides: List[str]) -> ChipConfig:
    """Raises tpusim.NotFoundError / tpusim.InvalidInputError (file and key path named)."""

def run(
    text: str,
    filename: str,
    config: ChipConfig,
    *,
    replicas: int,
    partitions: int,
    timing_only: bool,
    check: bool,
    seed: int,
    megacore: bool,
    unroll_budget: int,
    max_cycles: int,
    max_seconds: float,
    max_check_bytes: int,
    max_check_traffic: int,
    custom_call_costs: Dict[str, int],
    scaling: List[int],
    steps: int,
    host_input: bool,
    host_input_params: List[int],
    argv: List[str],
    python_call: str,
) -> str:
    """The report JSON of `tpusim run --report` (docs/report-schema.md), with `provenance`
    (`argv`: the process's command line; `python_call`: the call)."""

def compare(
    text: str,
    filename: str,
    config: ChipConfig,
    *,
    replicas: int,
    repeat: int,
    threads: int,
    seed: int,
    check: bool,
    timing_only: bool,
    anchor: bool,
    argv: List[str],
    python_call: str,
) -> str:
    """The JSON of `tpusim compare --json` (driver/compare.h), with `provenance`."""

def evaluate(
    text: str,
    filename: str,
    inputs_dir: str,
    outputs_dir: str,
    *,
    replicas: int,
    partitions: int,
    seed: int,
) -> int:
    """`tpusim cpu --inputs DIR --outputs DIR`: reads param_<i>.npy, writes output_<k>.npy
    (replica_<d>/ for several devices); returns the number of outputs."""
