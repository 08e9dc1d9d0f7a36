#!/usr/bin/env python3
"""Writes the HLO of real JAX/Flax training steps into tests/data/hlo/jax/ (the corpus the pytest
suite runs and checks, python/tests/test_jax_corpus.py), with the versions that made them.

Each model's step (forward, loss, backward, optimizer update) is lowered by JAX itself with
tpusim.jax.lower, in up to three forms: `single` (one device), `pmap` (8 data-parallel replicas,
gradients averaged with pmean) and `spmd` (jit over a 2x4 Mesh, batch sharded over both axes).
MANIFEST.json records per file: model, form, shapes, JAX / jaxlib / Flax / Optax versions and
the command. The modules are pre-optimization HLO (what tpusim compiles itself).

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python3 scripts/gen_jax_corpus.py

Deterministic: the same versions write the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples" / "mnist_cnn"))

import flax  # noqa: E402
import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

import tpusim  # noqa: E402
import tpusim.jax  # noqa: E402

REPLICAS = 8


# ---- models (Flax) -----------------------------------------------------------------------------


class Mlp(nn.Module):
    """784-128-10 with ReLU (the MNIST MLP)."""

    @nn.compact
    def __call__(self, x: Any, train: bool = True) -> Any:
        x = nn.relu(nn.Dense(128)(x.reshape((x.shape[0], -1))))
        return nn.Dense(10)(x)


class Lstm(nn.Module):
    """One LSTM layer of 128 units over the sequence, then a classifier on the last state."""

    @nn.compact
    def __call__(self, x: Any, train: bool = True) -> Any:
        h = nn.RNN(nn.LSTMCell(128))(x)
        return nn.Dense(10)(h[:, -1])


class EncoderLayer(nn.Module):
    """A BERT-base encoder layer: hidden 768, 12 heads, FFN 3072, post-LayerNorm, GELU,
    dropout 0.1 (Devlin et al. 2019, Table/§3 'BERT-base')."""

    hidden: int = 768
    heads: int = 12
    ffn: int = 3072

    @nn.compact
    def __call__(self, x: Any, train: bool = True) -> Any:
        a = nn.MultiHeadDotProductAttention(num_heads=self.heads, dropout_rate=0.1,
                                            deterministic=not train)(x, x)
        x = nn.LayerNorm()(x + nn.Dropout(0.1, deterministic=not train)(a))
        f = nn.Dense(self.hidden)(nn.gelu(nn.Dense(self.ffn)(x)))
        return nn.LayerNorm()(x + nn.Dropout(0.1, deterministic=not train)(f))


class BertLayerClassifier(nn.Module):
    @nn.compact
    def __call__(self, x: Any, train: bool = True) -> Any:
        h = EncoderLayer()(x, train)
        return nn.Dense(2)(h[:, 0])


def mnist_cnn() -> Any:
    import models

    return models.flax_net()


# name -> (module factory, input shape per replica, classes, optimizer)
MODELS: Dict[str, Tuple[Callable[[], Any], Tuple[int, ...], int, Any]] = {
    "mlp": (Mlp, (32, 784), 10, optax.sgd(0.01, momentum=0.9)),
    "mnist_cnn": (mnist_cnn, (64, 28, 28, 1), 10, optax.adadelta(1.0)),
    "lstm": (Lstm, (8, 16, 32), 10, optax.adam(1e-3)),
    "bert_base_layer": (BertLayerClassifier, (2, 128, 768), 2, optax.adamw(1e-4)),
}
FORMS = {
    "mlp": ("single", "pmap", "spmd"),
    "mnist_cnn": ("single", "pmap", "spmd"),
    "lstm": ("single",),
    "bert_base_layer": ("single",),
}


# ---- steps -------------------------------------------------------------------------------------


def make_step(net: Any, tx: Any, pmean: bool) -> Callable[..., Any]:
    def loss_fn(params: Any, x: Any, y: Any, key: Any) -> Any:
        logits = net.apply({"params": params}, x, train=True, rngs={"dropout": key})
        # One-hot cross-entropy, as Flax's MNIST example writes it.
        return optax.softmax_cross_entropy(logits, jax.nn.one_hot(y, logits.shape[-1])).mean()

    def step(params: Any, opt_state: Any, x: Any, y: Any, key: Any) -> Any:
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, key)
        if pmean:
            grads = jax.lax.pmean(grads, "replica")
            loss = jax.lax.pmean(loss, "replica")
        updates, opt_state = tx.update(grads, opt_state, params)
        return loss, optax.apply_updates(params, updates), opt_state

    return step


def lower(name: str, form: str) -> Tuple[tpusim.jax.LoweredModule, Dict[str, Any]]:
    factory, shape, classes, tx = MODELS[name]
    net = factory()
    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, shape)
    y = jax.random.randint(key, (shape[0],), 0, classes)
    params = net.init(key, x, train=False)["params"]
    opt_state = tx.init(params)
    info = {"model": name, "form": form, "input": list(shape), "labels": [shape[0]]}
    if form == "single":
        return tpusim.jax.lower(make_step(net, tx, False), params, opt_state, x, y, key), info
    if form == "pmap":
        rep = lambda t: jax.tree_util.tree_map(  # noqa: E731
            lambda a: jnp.broadcast_to(a, (REPLICAS,) + a.shape), t)
        f = jax.pmap(make_step(net, tx, True), axis_name="replica")
        info["replicas"] = REPLICAS
        return tpusim.jax.lower(f, rep(params), rep(opt_state), rep(x), rep(y), rep(key)), info
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:REPLICAS]).reshape(2, 4), ("data", "model"))
    r = NamedSharding(mesh, P())
    d = NamedSharding(mesh, P(("data", "model")))
    full = lambda a: jnp.concatenate([a] * REPLICAS)  # noqa: E731  global batch
    same = lambda t, s: jax.tree_util.tree_map(lambda _: s, t)  # noqa: E731
    f = jax.jit(make_step(net, tx, False),
                in_shardings=(same(params, r), same(opt_state, r), d, d, r))
    info["mesh"] = [2, 4]
    info["input"] = [shape[0] * REPLICAS] + list(shape[1:])
    return tpusim.jax.lower(f, params, opt_state, full(x), full(y), key), info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "tests" / "data" / "hlo" / "jax"))
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    if jax.device_count() < REPLICAS:
        print("gen_jax_corpus: needs 8 JAX devices: set "
              "XLA_FLAGS=--xla_force_host_platform_device_count=8", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest: Dict[str, Any] = {
        "generator": "scripts/gen_jax_corpus.py",
        "versions": {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                     "flax": flax.__version__, "optax": optax.__version__},
        "modules": {},
    }
    for name in args.models.split(","):
        for form in FORMS[name]:
            module, info = lower(name, form)
            file = f"{name}_{form}.hlo"
            (out / file).write_text(module.text)
            info.update({"replicas": module.replicas, "partitions": module.partitions,
                         "bytes": len(module.text)})
            manifest["modules"][file] = info
            print(f"wrote {out / file} ({len(module.text)} bytes)")
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
