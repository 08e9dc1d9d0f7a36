"""PyTorch front end: simulate an ``nn.Module`` training step on a modelled TPU, through torchax.

    import torch, tpusim.torch
    report = tpusim.torch.simulate(model, (images,), labels=labels,
                                   loss_fn=torch.nn.functional.nll_loss,
                                   optimizer=torch.optim.SGD(model.parameters(), lr=0.01),
                                   config="tpu-v2-8")

torchax runs PyTorch operators as JAX functions, so the step — forward, loss, backward
(``jax.value_and_grad``), optimizer update — is traced by JAX and lowered to HLO, then simulated by
:func:`tpusim.jax.simulate`. This is torchax's own training recipe
(``torchax.train.make_train_step``), which applies the update with an optax optimizer: a
``torch.optim`` optimizer is translated to its optax counterpart (below); an optax
``GradientTransformation`` is used as is.

What works: modules whose operators torchax implements (convolutions, pooling, linear layers,
activations, dropout, batch norm, the usual losses); ``torch.optim.SGD`` (lr, momentum, dampening
0, nesterov, weight_decay), ``Adam`` and ``AdamW`` (lr, betas, eps, weight_decay), ``Adadelta``
(lr, rho, eps, weight_decay); data
parallelism with ``replicas=N`` (the step is mapped over N replicas with ``jax.pmap`` and the
gradients are averaged with ``pmean`` — what ``xm.optimizer_step`` does with ``all_reduce``).
What does not: other optimizers and options (``UnsupportedError`` names them), learning-rate
schedulers, ``torch.compile``, in-place updates of module buffers during the step (batch-norm
running statistics are not carried out of the step), named-tensor (Dimname) operators.
docs/python.md lists what the simulator itself cannot lower yet.

Compatibility: torchax 0.0.13 names two named-tensor operator overloads (``aten.prod.dim_Dimname``,
``aten.index_copy.dimname``, ``aten.std.correction_names``, ...) that torch 2.13 removed; before
importing torchax this module lets such lookups return a placeholder instead of raising, so the
import succeeds (those overloads cannot be called by a torch 2.13 program anyway).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Tuple

from .errors import FrontEndError, UnsupportedError
from .jax import LoweredModule, lower, run_lowered
from .report import Report

_SHIMMED = False


def import_torchax() -> Any:
    """Imports torchax under torch 2.13 (see the module docstring)."""
    global _SHIMMED
    import torch._ops as ops

    if not _SHIMMED:
        original = ops.OpOverloadPacket.__getattr__

        def getattr_named_tensor_tolerant(self: Any, key: str) -> Any:
            try:
                return original(self, key)
            except AttributeError:
                if "dimname" in key.lower() or "names" in key:
                    return ("tpusim: overload removed in this torch", self._qualified_op_name, key)
                raise

        ops.OpOverloadPacket.__getattr__ = getattr_named_tensor_tolerant
        _SHIMMED = True
    try:
        import torchax
        import torchax.train  # noqa: F401
    except ImportError as e:
        raise FrontEndError(
            f"tpusim.torch needs torchax (pip install --no-deps torchax): {e}"
        ) from e
    return torchax


def optax_from_torch(optimizer: Any) -> Any:
    """The optax transformation computing the update of a ``torch.optim`` optimizer.

    Uses the first parameter group's hyper-parameters. Raises UnsupportedError for other
    optimizers, several groups with different settings, or options optax's counterpart lacks.
    """
    import optax
    import torch

    if not isinstance(optimizer, torch.optim.Optimizer):
        return optimizer  # already an optax GradientTransformation
    groups = optimizer.param_groups
    keys = lambda g: {k: v for k, v in g.items() if k != "params"}  # noqa: E731
    if any(keys(g) != keys(groups[0]) for g in groups[1:]):
        raise UnsupportedError("tpusim.torch: parameter groups with different settings")
    g = groups[0]
    name = type(optimizer).__name__
    if name == "SGD":
        if g.get("dampening", 0) != 0 or g.get("maximize", False):
            raise UnsupportedError("tpusim.torch: SGD with dampening or maximize")
        momentum = g.get("momentum", 0) or None
        tx = optax.sgd(g["lr"], momentum=momentum, nesterov=bool(g.get("nesterov", False)))
        wd = g.get("weight_decay", 0)
        # torch adds weight_decay * w to the gradient before momentum.
        return optax.chain(optax.add_decayed_weights(wd), tx) if wd else tx
    if name in ("Adam", "AdamW"):
        if g.get("amsgrad", False) or g.get("maximize", False):
            raise UnsupportedError(f"tpusim.torch: {name} with amsgrad or maximize")
        b1, b2 = g["betas"]
        wd = g.get("weight_decay", 0)
        if name == "AdamW":
            return optax.adamw(g["lr"], b1=b1, b2=b2, eps=g["eps"], weight_decay=wd)
        tx = optax.adam(g["lr"], b1=b1, b2=b2, eps=g["eps"])
        return optax.chain(optax.add_decayed_weights(wd), tx) if wd else tx
    if name == "Adadelta":
        if g.get("maximize", False):
            raise UnsupportedError("tpusim.torch: Adadelta with maximize")
        return optax.adadelta(
            g["lr"], rho=g["rho"], eps=g["eps"], weight_decay=g.get("weight_decay", 0.0)
        )
    raise UnsupportedError(
        f"tpusim.torch: optimizer {name} (supported: SGD, Adam, AdamW, Adadelta)"
    )


def train_step(
    module: Any,
    loss_fn: Callable[..., Any],
    optimizer: Any,
    replicas: int = 1,
) -> Tuple[Callable[..., Any], Any, Any, Any]:
    """The JAX function of one training step of ``module`` and its initial state.

    Returns ``(step, weights, buffers, opt_state)`` where ``step(weights, buffers, opt_state,
    inputs, labels) -> (loss, weights, opt_state)`` takes and returns JAX arrays. With
    ``replicas > 1`` the step is ``jax.pmap``-ed over a leading replica axis of every argument and
    the gradients are averaged over the replicas (``pmean``) before the update.
    """
    torchax = import_torchax()
    import jax
    import torch
    from torchax import interop

    env = torchax.default_env()
    tx = optax_from_torch(optimizer)
    with env:
        module.to("jax")
        weights = dict(module.named_parameters())
        buffers = dict(module.named_buffers())
    jweights, jbuffers = interop.jax_view(weights), interop.jax_view(buffers)

    def model_fn(w: Any, b: Any, args: Any) -> Any:
        return torch.func.functional_call(module, {**w, **b}, args)

    def loss_of(w: Any, b: Any, args: Any, labels: Any) -> Any:
        with env:
            return loss_fn(model_fn(w, b, args), labels)

    value_and_grad = interop.jax_value_and_grad(loss_of)

    def step(w: Any, b: Any, opt_state: Any, args: Any, labels: Any) -> Any:
        import optax

        loss, grads = value_and_grad(w, b, args, labels)
        loss, grads = interop.jax_view((loss, grads))
        if replicas > 1:
            grads = jax.lax.pmean(grads, "replica")
            loss = jax.lax.pmean(loss, "replica")
        updates, opt_state = tx.update(grads, opt_state, w)
        return loss, optax.apply_updates(w, updates), opt_state

    opt_state = tx.init(jweights)
    if replicas > 1:
        return jax.pmap(step, axis_name="replica"), jweights, jbuffers, opt_state
    return step, jweights, jbuffers, opt_state


def _replicate(tree: Any, n: int) -> Any:
    import jax
    import jax.numpy as jnp

    return jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (n,) + a.shape), tree)


def lower_train_step(
    module: Any,
    example_inputs: Sequence[Any],
    labels: Any,
    loss_fn: Callable[..., Any],
    optimizer: Any,
    replicas: int = 1,
) -> LoweredModule:
    """The HLO of one training step (see :func:`train_step`) for inputs shaped like
    ``example_inputs`` (torch tensors, per replica: e.g. ``[64, 1, 28, 28]``) and ``labels``.

    Raises:
      FrontEndError: torchax or JAX could not trace the step; UnsupportedError: see
      :func:`optax_from_torch`.
    """
    import jax.numpy as jnp

    step, w, b, opt_state = train_step(module, loss_fn, optimizer, replicas)
    args = tuple(jnp.asarray(t.detach().cpu().numpy()) for t in example_inputs)
    y = jnp.asarray(labels.detach().cpu().numpy())
    if replicas > 1:
        w, b, opt_state = (_replicate(t, replicas) for t in (w, b, opt_state))
        args = tuple(_replicate(a, replicas) for a in args)
        y = _replicate(y, replicas)
    return lower(step, w, b, opt_state, args, y)


def simulate(
    module: Any,
    example_inputs: Sequence[Any],
    loss_fn: Callable[..., Any],
    optimizer: Any,
    labels: Optional[Any] = None,
    config: Any = None,
    replicas: int = 1,
    **run_kwargs: Any,
) -> Report:
    """Simulates one training step of ``module`` (forward, loss, backward, optimizer step).

    Args:
      module: a ``torch.nn.Module`` (it is moved to torchax's ``jax`` device).
      example_inputs: the forward's positional inputs, per replica (torch tensors).
      loss_fn: ``loss_fn(output, labels) -> scalar``, torch operators.
      optimizer: a ``torch.optim`` SGD / Adam / AdamW or an optax transformation.
      labels: the labels tensor (default: zeros of the output's batch size, int64).
      config: chip config (name, path or :class:`tpusim.Config`).
      replicas: data-parallel replicas (gradients all-reduced), one TensorCore each.
      run_kwargs: passed to :func:`tpusim.run`.

    Raises:
      FrontEndError, UnsupportedError, and the errors of :func:`tpusim.run` (e.g. an HLO op the
      compiler cannot lower yet, named with its line in the lowered module).
    """
    import torch

    if labels is None:
        labels = torch.zeros(example_inputs[0].shape[0], dtype=torch.int64)
    module_hlo = lower_train_step(module, example_inputs, labels, loss_fn, optimizer, replicas)
    run_kwargs.setdefault("name", f"<torch:{type(module).__name__} train step>")
    return run_lowered(module_hlo, config=config, **run_kwargs)


__all__ = ["simulate", "import_torchax", "train_step", "lower_train_step", "optax_from_torch"]
