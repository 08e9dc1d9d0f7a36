"""tpusim: a cycle-level simulator of Google-TPU-style chips, from Python.

    import tpusim
    report = tpusim.run("model.hlo", config="tpu-v2-8")   # or HLO text
    print(report.cycles, report.seconds, report.utilization)
    report.to_pandas()                                      # per-op cycles, FLOP, bytes

Front ends: :func:`tpusim.jax.simulate` (a JAX function, jit / pmap / sharded over a Mesh) and
:func:`tpusim.torch.simulate` (an ``nn.Module`` training step through torchax). The C++ command
``tpusim`` stays the primary tool; this package binds the same libraries (python/core.cc).
"""

from __future__ import annotations

from . import errors
from .api import DEFAULT_CONFIG, Config, compare, evaluate, load_config, read_hlo, run
from .errors import (
    CheckFailedError,
    Error,
    FrontEndError,
    InternalError,
    InvalidInputError,
    NotFoundError,
    ResourceExhaustedError,
    UnsupportedError,
)
from .report import (
    STALL_CATEGORIES,
    CheckResult,
    Comparison,
    CoreRecord,
    HbmStats,
    HostLoop,
    IciLink,
    OpRecord,
    Report,
    ScalingRow,
    TpuRow,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_CONFIG",
    "STALL_CATEGORIES",
    "CheckFailedError",
    "CheckResult",
    "Comparison",
    "Config",
    "CoreRecord",
    "Error",
    "FrontEndError",
    "HbmStats",
    "HostLoop",
    "IciLink",
    "InternalError",
    "InvalidInputError",
    "NotFoundError",
    "OpRecord",
    "Report",
    "ResourceExhaustedError",
    "ScalingRow",
    "TpuRow",
    "UnsupportedError",
    "compare",
    "errors",
    "evaluate",
    "load_config",
    "read_hlo",
    "run",
]
