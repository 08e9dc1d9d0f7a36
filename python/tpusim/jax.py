"""JAX front end: simulate a JAX function on a modelled TPU.

    import jax, tpusim.jax
    report = tpusim.jax.simulate(train_step, params, batch, config="tpu-v2-8")

The function is lowered by JAX itself — ``jax.jit(fn).lower(*example_args)`` — to HLO text before
any XLA optimization (the form tpusim compiles for its chip the way XLA's TPU backend would), and
run with :func:`tpusim.run`. Three forms keep their parallelism:

* a plain or ``jax.jit`` function: one device (one TensorCore; on chips whose TensorCores share
  HBM, a megacore);
* a ``jax.pmap`` function: JAX 0.5+ lowers pmap to a fully manual ``shard_map`` whose body is the
  per-device program (inputs ``[1, ...]``, collectives over every device). tpusim's parser makes
  the body the module's entry, run on as many replicas as the mesh has devices — what XLA's SPMD
  partitioner does with a fully manual computation (the text is passed on unchanged);
* a function whose inputs or ``in_shardings`` are ``NamedSharding(mesh, PartitionSpec(...))`` on a
  ``jax.sharding.Mesh`` (JAX's ``xs.mark_sharding``): the module keeps its ``sharding=``
  annotations and tpusim's SPMD partitioner splits it over ``mesh.size`` partitions.

The inputs tpusim simulates are its own deterministic ones (``seed``) with the example arguments'
shapes and dtypes; the example values only fix the shapes. :func:`lower` returns the HLO without
running it.

Errors: :class:`tpusim.FrontEndError` when JAX cannot lower the function (JAX's message follows);
:class:`tpusim.UnsupportedError` (from :func:`tpusim.run`, located in the HLO text) for a
partially manual ``shard_map`` (only some mesh axes manual) or one inside a larger program; the
other errors of :func:`tpusim.run` after that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

from .api import run
from .errors import FrontEndError
from .report import Report


@dataclass(frozen=True)
class LoweredModule:
    """An HLO module as tpusim will run it."""

    text: str  #: HLO text (pre-optimization)
    replicas: int  #: devices running it as replicas (pmap), 1 otherwise
    partitions: int  #: SPMD partitions (a Mesh's size), 1 otherwise
    form: str  #: "single", "pmap" or "spmd"


_MESH_RE = re.compile(r"#sdy\.mesh<\[([^\]]*)\]>")
_AXIS_RE = re.compile(r'"([^"]+)"\s*=\s*(\d+)')


def _mesh_axes(header: str) -> Dict[str, int]:
    """The axes of the module's largest Shardy mesh (JAX also declares an ``empty_mesh``)."""
    best: Dict[str, int] = {}
    for mesh in _MESH_RE.findall(header):
        axes = {a: int(n) for a, n in _AXIS_RE.findall(mesh)}
        if _devices(axes) > _devices(best):
            best = axes
    return best


def _devices(axes: Dict[str, int]) -> int:
    n = 1
    for size in axes.values():
        n *= size
    return n


def _lowered(fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any],
             platform: Optional[str]) -> Any:
    import jax

    target = fn if hasattr(fn, "lower") else jax.jit(fn)
    try:
        if platform is None:
            return target.lower(*args, **kwargs)
        # Cross-platform lowering: the module JAX would hand that platform's XLA (on a CPU-only
        # machine too), e.g. a Pallas kernel as custom-call tpu_custom_call for "tpu".
        return target.trace(*args, **kwargs).lower(lowering_platforms=(platform,))
    except Exception as e:  # JAX raises many types; all mean "could not lower"
        hint = ""
        if platform is None and "interpret mode" in str(e):
            hint = (" (a Pallas kernel lowers for the TPU only: pass platform=\"tpu\" and a "
                    "cost_estimate to pallas_call)")
        raise FrontEndError(f"tpusim.jax: JAX could not lower {_name(fn)}: {e}{hint}") from e


def _name(fn: Any) -> str:
    return getattr(fn, "__name__", None) or getattr(fn, "__qualname__", None) or repr(fn)


def _hlo_text(lowered: Any) -> str:
    try:
        return lowered.compiler_ir("hlo").as_hlo_text()
    except Exception:  # older or newer JAX: the text form of the same module
        return lowered.as_text(dialect="hlo")


def lower(fn: Callable[..., Any], *example_args: Any, platform: Optional[str] = None,
          **example_kwargs: Any) -> LoweredModule:
    """Lowers ``fn(*example_args, **example_kwargs)`` with JAX and returns the module tpusim runs.

    ``platform``: None lowers for JAX's default backend (this machine's); ``"tpu"`` lowers the
    module JAX would hand a TPU's XLA — the TPU's own custom-calls, and Pallas kernels
    (``pallas_call``) as ``tpu_custom_call``, which tpusim times from their ``cost_estimate``.

    Raises:
      FrontEndError: JAX could not trace or lower the function.
    """
    lowered = _lowered(fn, example_args, example_kwargs, platform)
    text = _hlo_text(lowered)
    header = text.splitlines()[0] if text else ""
    axes = _mesh_axes(header)
    if "xla.sdy.manual_computation_body" in text:
        # tpusim's parser runs a fully manual shard_map's body as replicas and refuses any other
        # shard_map with a located error (hlo/shard_map.h).
        return LoweredModule(text, replicas=_devices(axes), partitions=1, form="pmap")
    if axes and "sharding={" in text:
        devices = _devices(axes)
        if devices > 1:
            # Record the partition count in the header (XLA's `num_partitions=`), so that the
            # text alone says how it runs (`tpusim run` reads it).
            text = re.sub(r"^(HloModule\s+[\w.\-]+)", rf"\1, num_partitions={devices}", text,
                          count=1)
            return LoweredModule(text, replicas=1, partitions=devices, form="spmd")
    return LoweredModule(text, replicas=1, partitions=1, form="single")


def simulate(
    fn: Callable[..., Any],
    *example_args: Any,
    config: Any = None,
    static_kwargs: Optional[Dict[str, Any]] = None,
    platform: Optional[str] = None,
    **run_kwargs: Any,
) -> Report:
    """Lowers a JAX function with JAX and simulates it with tpusim.

    Args:
      fn: a function of JAX arrays (plain, ``jax.jit``-ed or ``jax.pmap``-ed; sharded inputs or
        ``in_shardings`` on a Mesh run partitioned).
      example_args: arguments fixing the shapes and dtypes (any pytree of arrays).
      config: a :class:`tpusim.Config`, a config name or path (default ``tpu-v4``).
      static_kwargs: keyword arguments passed to ``fn`` when lowering.
      platform: the platform JAX lowers for (see :func:`lower`): None (this machine's backend)
        or ``"tpu"`` (a function with Pallas kernels needs it).
      run_kwargs: passed to :func:`tpusim.run` (``timing_only``, ``check``, ``seed``, ...);
        ``replicas`` / ``partitions`` default to what the function's form says.

    Returns:
      The :class:`tpusim.Report`; its ``model`` is ``<jax:NAME>``.

    Raises:
      FrontEndError (see :func:`lower`) and the errors of :func:`tpusim.run` (UnsupportedError for
      a shard_map other than a fully manual one).
    """
    module = lower(fn, *example_args, platform=platform, **(static_kwargs or {}))
    run_kwargs.setdefault("name", f"<jax:{_name(fn)}>")
    return run_lowered(module, config=config, **run_kwargs)


def run_lowered(module: LoweredModule, config: Any = None, **run_kwargs: Any) -> Report:
    """Runs a :class:`LoweredModule` with :func:`tpusim.run`: ``replicas`` defaults to the pmap's
    devices, ``partitions`` to the Mesh's size."""
    run_kwargs.setdefault("replicas", module.replicas if module.form == "pmap" else 0)
    run_kwargs.setdefault("partitions", module.partitions if module.form == "spmd" else 0)
    return run(module.text, config=config, **run_kwargs)
