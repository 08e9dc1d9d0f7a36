"""tpusim's Python API: load a chip config, run an HLO module on it, compare it with the CPU.

Every function here calls the C++ libraries through ``tpusim._core`` (python/core.cc): the same
parser, verifier, compiler, simulator and checks as the ``tpusim`` command, with the same
deterministic inputs (``seed``), so ``tpusim.run(path)`` and ``tpusim run PATH`` give the same
cycles and bits.
"""

from __future__ import annotations

import inspect
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from .errors import CheckFailedError, InvalidInputError
from .report import Comparison, Report

#: The config used when none is given (README "Configs").
DEFAULT_CONFIG: str = _core.default_config_name

_PACKAGED_CONFIGS = Path(__file__).resolve().parent / "configs"

HloSource = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Config:
    """A loaded and validated chip config (a YAML file of configs/ plus overrides).

    Figures are the config's keys (units in docs/config.md); ``derived()`` gives the peaks and
    bandwidths ``tpusim config show`` prints.
    """

    name: str  #: the config's ``name`` key (e.g. ``tpu-v2-8``)
    source_path: str  #: the YAML file read
    overrides: Tuple[str, ...]  #: the ``key.path=value`` overrides applied, in order
    clock_hz: float  #: chip.clock_hz (Hz)
    chips: int  #: system.chips
    tensorcores_per_chip: int  #: chip.tensorcores
    total_cores: int  #: chips x tensorcores_per_chip
    host_bandwidth_bytes_per_s: float  #: chip.host.bandwidth_bytes_per_s, PCIe, one direction
    _chip: Any = field(repr=False, compare=False, default=None)

    def derived(self) -> Dict[str, Any]:
        """Peak FLOP/s, HBM and ICI bandwidths (bytes/s) and the ridge point (FLOP/byte), as
        ``tpusim config show --json`` prints them."""
        import json

        return json.loads(self._chip.derived_json())


def _resolve_config_name(name_or_path: str) -> str:
    # An existing file as is; $TPUSIM_CONFIG_DIR and ./configs are searched by the C++ loader;
    # otherwise the configs installed with the package (the wheel's tpusim/configs/).
    if os.path.isfile(name_or_path) or os.environ.get("TPUSIM_CONFIG_DIR"):
        return name_or_path
    if Path("configs", name_or_path).with_suffix(".yaml").is_file():
        return name_or_path
    file = name_or_path if name_or_path.endswith(".yaml") else name_or_path + ".yaml"
    packaged = _PACKAGED_CONFIGS / file
    return str(packaged) if packaged.is_file() else name_or_path


def _format_override(key: str, value: Any) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(str(v) for v in value) + "]"
    else:
        text = str(value)
    return f"{key}={text}"


def load_config(
    name_or_path: Union[str, "os.PathLike[str]"] = DEFAULT_CONFIG,
    overrides: Optional[Mapping[str, Any]] = None,
) -> Config:
    """Loads a chip config.

    Args:
      name_or_path: a YAML path, or a name (``"tpu-v2-8"``) looked up in ``$TPUSIM_CONFIG_DIR``,
        ``./configs`` and the configs installed with the package.
      overrides: ``{"core.mxu.rows": 256, "chip.clock_hz": 1.5e9}``; the same as ``--set``.

    Raises:
      NotFoundError: no such file or name.
      InvalidInputError: a bad value; the message names the file and the key path.
    """
    items = tuple(_format_override(k, v) for k, v in (overrides or {}).items())
    chip = _core.load_config(_resolve_config_name(os.fspath(name_or_path)), list(items))
    return Config(
        name=chip.name,
        source_path=chip.source_path,
        overrides=items,
        clock_hz=chip.clock_hz,
        chips=chip.chips,
        tensorcores_per_chip=chip.tensorcores_per_chip,
        total_cores=chip.total_cores,
        host_bandwidth_bytes_per_s=chip.host_bandwidth_bytes_per_s,
        _chip=chip,
    )


def _as_config(config: Union[None, str, "os.PathLike[str]", Config]) -> Config:
    if config is None:
        return load_config(DEFAULT_CONFIG)
    if isinstance(config, Config):
        return config
    return load_config(config)


def read_hlo(hlo_text_or_path: HloSource, name: Optional[str] = None) -> Tuple[str, str]:
    """Returns ``(text, filename)``: HLO text as given (filename ``name`` or ``<string>``), or a
    file's text.

    A string holding ``HloModule`` is text; anything else is a path.

    Raises:
      NotFoundError: the path does not exist.
    """
    from .errors import NotFoundError

    if isinstance(hlo_text_or_path, str) and "HloModule" in hlo_text_or_path:
        return hlo_text_or_path, name or "<string>"
    path = os.fspath(hlo_text_or_path)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except FileNotFoundError:
        raise NotFoundError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidInputError(f"{path}: cannot read: {e}") from None


def _provenance(fn: Any, filename: str, cfg: "Config", given: Mapping[str, Any]) -> Dict[str, Any]:
    """The process's command line and the call (arguments that differ from ``fn``'s defaults) for
    the report's ``provenance`` (``argv``, ``python_call``; docs/report-schema.md)."""
    defaults = {k: p.default for k, p in inspect.signature(fn).parameters.items()}
    args = [repr(filename), f"config={cfg.name!r}"]
    for key, value in given.items():
        if key in defaults and value != defaults[key] and value is not None:
            args.append(f"{key}={value!r}")
    return {"argv": [sys.executable] + list(sys.argv),
            "python_call": f"tpusim.{fn.__name__}({', '.join(args)})"}


def run(
    hlo_text_or_path: HloSource,
    config: Union[None, str, "os.PathLike[str]", Config] = None,
    *,
    timing_only: bool = False,
    check: bool = True,
    replicas: int = 0,
    partitions: int = 0,
    seed: int = 42,
    megacore: bool = True,
    unroll_budget: int = 100000,
    max_cycles: int = 1 << 50,
    max_seconds: float = 0.0,
    max_check_bytes: int = 1 << 30,
    max_check_traffic: int = 64 << 30,
    custom_call_costs: Optional[Mapping[str, int]] = None,
    scaling: Optional[Sequence[int]] = None,
    steps: int = 0,
    host_input: bool = False,
    host_input_params: Optional[Sequence[int]] = None,
    raise_on_check_failure: bool = True,
    name: Optional[str] = None,
) -> Report:
    """Compiles an HLO module for a chip, simulates it cycle by cycle and checks every output
    against the CPU evaluator — ``tpusim run``.

    Args:
      hlo_text_or_path: HLO text (pre-optimization, as ``jax.jit(f).lower(...)`` or an XLA dump
        gives it) or the path of a ``.hlo`` file.
      config: a :class:`Config`, a config name or path; default ``tpu-v4``.
      timing_only: cycles only, no values (modules with huge shapes).
      check: compare every output leaf of every device with the evaluator (when values fit).
      replicas: devices running the module (0: the module's ``replica_count``).
      partitions: SPMD partitions of a module with unpartitioned ``sharding=`` annotations
        (0: the module's ``num_partitions``).
      seed: seed of the deterministic inputs.
      megacore: split a one-device module's wide dots over a chip's TensorCores sharing HBM.
      unroll_budget: HLO instructions a ``while`` may add when unrolled; longer loops are ISA loops.
      max_cycles: stop with ResourceExhaustedError past this many cycles.
      max_seconds: wall-clock limit of the simulation (seconds, 0: none).
      max_check_bytes / max_check_traffic: above these (bytes) the run is timing-only.
      custom_call_costs: ``{target: cycles}`` for unknown custom-call targets (then timing-only).
      scaling: core counts ``[1, 2, 4, 8]``: run once per count (weak scaling), fill
        ``Report.scaling``; the rest of the report is the last count's.
      steps: model a training loop of this many steps with its host side (``Report.host_loop``:
        host CPU, PCIe infeed/outfeed and device time per step, pipelined; config keys
        ``host.*``) — ``--steps``.
      host_input: the input batch crosses PCIe into HBM every step (``--host-input``).
      host_input_params: parameter numbers of the batch (default: parameters whose shape matches
        no output).
      raise_on_check_failure: raise CheckFailedError (with ``.report``) when values disagree;
        False returns the report with ``check.passed == False``.
      name: the name error messages and ``Report.model`` give HLO passed as text.

    Returns:
      The :class:`Report` (cycles, seconds, FLOP, utilization, stalls, HBM, ICI, per-op records).

    Raises:
      InvalidInputError: malformed HLO (``file:line:col``) or arguments; NotFoundError: a
      missing file or config; UnsupportedError: an HLO op tpusim cannot lower yet (named);
      ResourceExhaustedError: the program does not fit, or a limit was passed;
      CheckFailedError: a simulated value differs from the evaluator's beyond the tolerance.
    """
    text, filename = read_hlo(hlo_text_or_path, name)
    cfg = _as_config(config)
    report_json = _core.run(
        text,
        filename,
        cfg._chip,
        replicas=replicas,
        partitions=partitions,
        timing_only=timing_only,
        check=check,
        seed=seed,
        megacore=megacore,
        unroll_budget=unroll_budget,
        max_cycles=max_cycles,
        max_seconds=max_seconds,
        max_check_bytes=max_check_bytes,
        max_check_traffic=max_check_traffic,
        custom_call_costs=dict(custom_call_costs or {}),
        scaling=list(scaling or []),
        steps=steps,
        host_input=host_input,
        host_input_params=list(host_input_params or []),
        **_provenance(run, filename, cfg, dict(
            timing_only=timing_only, check=check, replicas=replicas, partitions=partitions,
            seed=seed, megacore=megacore, unroll_budget=unroll_budget, max_cycles=max_cycles,
            max_seconds=max_seconds, max_check_bytes=max_check_bytes,
            max_check_traffic=max_check_traffic, custom_call_costs=custom_call_costs,
            scaling=scaling, steps=steps, host_input=host_input,
            host_input_params=host_input_params)),
    )
    report = Report.from_json(report_json)
    failed = report.check.performed and not report.check.passed
    if report.scaling is not None:
        failed |= any(
            r.get("check") == "FAILED" for r in report.raw.get("scaling", []) if isinstance(r, dict)
        )
    if failed and raise_on_check_failure:
        raise CheckFailedError(f"{filename}: check failed: {report.check.reason}", report)
    return report


def compare(
    hlo_text_or_path: HloSource,
    config: Union[None, str, "os.PathLike[str]", Config] = None,
    *,
    replicas: int = 0,
    repeat: int = 5,
    threads: int = 0,
    seed: int = 42,
    check: bool = True,
    timing_only: bool = False,
    anchor: bool = True,
) -> Comparison:
    """The simulated TPU time of a module beside its measured CPU time on this host —
    ``tpusim compare`` (driver/compare.h says exactly what is compared).

    Args:
      repeat: timed CPU runs after one warm-up (the median is reported).
      threads: CPU threads of the evaluator (0: all hardware threads).
      anchor: also measure this host's GEMM rate and memory bandwidth (< 1 s).
      Others as :func:`run`.

    Raises:
      the errors of :func:`run`.
    """
    text, filename = read_hlo(hlo_text_or_path)
    cfg = _as_config(config)
    out = _core.compare(
        text,
        filename,
        cfg._chip,
        replicas=replicas,
        repeat=repeat,
        threads=threads,
        seed=seed,
        check=check,
        timing_only=timing_only,
        anchor=anchor,
        **_provenance(compare, filename, cfg, dict(
            replicas=replicas, repeat=repeat, threads=threads, seed=seed, check=check,
            timing_only=timing_only, anchor=anchor)),
    )
    return Comparison.from_json(out)


def evaluate(
    hlo_text_or_path: HloSource,
    args: Optional[Sequence[Any]] = None,
    *,
    seed: int = 42,
    name: Optional[str] = None,
) -> List[Any]:
    """Runs a one-device module on the host with tpusim's CPU evaluator (the reference every
    simulated value is checked against, XLA's CPU semantics) — ``tpusim cpu``.

    Args:
      args: one array per ENTRY parameter (anything ``numpy.asarray`` takes, with the
        parameter's shape and dtype); None: the deterministic inputs of ``seed`` (those
        :func:`run` simulates).

    Returns:
      The output leaves in flattened tuple order, as ``numpy.ndarray``.

    Raises:
      InvalidInputError: malformed HLO, or an argument whose shape or dtype differs from its
      parameter (the message names the .npy file of parameter i); the errors of :func:`run`.
    """
    import tempfile

    import numpy as np

    text, filename = read_hlo(hlo_text_or_path, name)
    with tempfile.TemporaryDirectory(prefix="tpusim-eval-") as tmp:
        inputs = ""
        if args is not None:
            inputs = os.path.join(tmp, "in")
            os.mkdir(inputs)
            for i, a in enumerate(args):
                np.save(os.path.join(inputs, f"param_{i}.npy"), np.ascontiguousarray(np.asarray(a)))
        outputs = os.path.join(tmp, "out")
        os.mkdir(outputs)
        n = _core.evaluate(text, filename, inputs, outputs, replicas=1, partitions=1, seed=seed)
        return [np.load(os.path.join(outputs, f"output_{k}.npy")) for k in range(n)]
