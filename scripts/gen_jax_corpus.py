#!/usr/bin/env python3
"""Writes the HLO of real JAX/Flax training steps into tests/data/hlo/jax/ (the corpus the pytest
suite runs and checks, python/tests/test_jax_corpus.py), with the versions that made them.

Models: an MLP, the MNIST CNN, an LSTM, a BERT-base encoder layer, a full BERT (BERT-Mini),
GPT-2 small (and a reduced GPT-2 whose 8-device forms fit the value check), ResNet-18, ResNet-50
and ViT-Ti/16 (MODELS: published architectures at reduced batch,
image size or sequence length, recorded in each module's `note`).

Each model's step (forward, loss, backward, optimizer update) is lowered by JAX itself with
tpusim.jax.lower, in up to three forms: `single` (one device), `pmap` (8 data-parallel replicas,
gradients averaged with pmean) and `spmd` (jit over a 2x4 Mesh, batch sharded over both axes).
MANIFEST.json records per file: model, form, shapes, JAX / jaxlib / Flax / Optax versions and
the command. The modules are pre-optimization HLO (what tpusim compiles itself).

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python3 scripts/gen_jax_corpus.py \
        [--models resnet18,vit_ti16] [--forms single,pmap,spmd] [--out DIR]

Deterministic: the same versions write the same bytes, whatever --models / --forms selects and in
which order (JAX's caches are cleared before each lowering; the manifest is written with sorted
keys and holds no paths or times).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
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


class ResNetBlock(nn.Module):
    """A residual block (He et al. 2016): ``bottleneck`` = 1x1, 3x3 (strided), 1x1 x4 (ResNet-50);
    otherwise two 3x3 (ResNet-18). Batch-norm after every convolution; a strided 1x1 projection
    on the shortcut where the shape changes."""

    filters: int
    strides: int
    bottleneck: bool

    @nn.compact
    def __call__(self, x: Any, train: bool) -> Any:
        bn = lambda: nn.BatchNorm(use_running_average=not train, momentum=0.9,  # noqa: E731
                                  epsilon=1e-5)
        s = (self.strides, self.strides)
        out = self.filters * (4 if self.bottleneck else 1)
        if self.bottleneck:
            y = nn.relu(bn()(nn.Conv(self.filters, (1, 1), use_bias=False)(x)))
            y = nn.relu(bn()(nn.Conv(self.filters, (3, 3), s, use_bias=False)(y)))
            y = bn()(nn.Conv(out, (1, 1), use_bias=False)(y))
        else:
            y = nn.relu(bn()(nn.Conv(self.filters, (3, 3), s, use_bias=False)(x)))
            y = bn()(nn.Conv(out, (3, 3), use_bias=False)(y))
        if x.shape[-1] != out or self.strides != 1:
            x = bn()(nn.Conv(out, (1, 1), s, use_bias=False)(x))
        return nn.relu(x + y)


class ResNet(nn.Module):
    """ResNet-18 / -50 for ImageNet (He et al. 2016, Table 1): 7x7/2 stem, 3x3/2 max-pool, four
    stages of widths 64..512 (x4 in bottlenecks), global average pool, 1000-way classifier."""

    stages: Tuple[int, ...]
    bottleneck: bool

    @nn.compact
    def __call__(self, x: Any, train: bool = True) -> Any:
        x = nn.Conv(64, (7, 7), (2, 2), padding=[(3, 3), (3, 3)], use_bias=False)(x)
        x = nn.relu(nn.BatchNorm(use_running_average=not train, momentum=0.9, epsilon=1e-5)(x))
        x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
        for i, blocks in enumerate(self.stages):
            for b in range(blocks):
                x = ResNetBlock(64 * 2**i, 2 if i > 0 and b == 0 else 1, self.bottleneck)(x, train)
        return nn.Dense(1000)(jnp.mean(x, axis=(1, 2)))


def resnet18() -> Any:
    return ResNet((2, 2, 2, 2), bottleneck=False)


def resnet50() -> Any:
    return ResNet((3, 4, 6, 3), bottleneck=True)


class Bert(nn.Module):
    """A full BERT for sequence classification: token, position and segment embeddings,
    LayerNorm, ``layers`` post-LN encoder layers, tanh pooler on [CLS], classifier. The default is
    BERT-Mini (Turc et al. 2019: L=4, H=256, A=4, FFN 1024) with BERT's WordPiece vocabulary
    (30522) and 512 positions."""

    layers: int = 4
    hidden: int = 256
    heads: int = 4
    ffn: int = 1024
    vocab: int = 30522
    positions: int = 512

    @nn.compact
    def __call__(self, tokens: Any, train: bool = True) -> Any:
        pos = jnp.arange(tokens.shape[1])[None, :]
        x = (nn.Embed(self.vocab, self.hidden)(tokens) + nn.Embed(self.positions, self.hidden)(pos)
             + nn.Embed(2, self.hidden)(jnp.zeros_like(tokens)))
        x = nn.Dropout(0.1, deterministic=not train)(nn.LayerNorm(epsilon=1e-12)(x))
        for _ in range(self.layers):
            x = EncoderLayer(self.hidden, self.heads, self.ffn)(x, train)
        pooled = nn.tanh(nn.Dense(self.hidden)(x[:, 0]))
        return nn.Dense(2)(nn.Dropout(0.1, deterministic=not train)(pooled))


class Gpt2Block(nn.Module):
    """A GPT-2 decoder block: pre-LayerNorm, causal multi-head self-attention, a 4x GELU MLP,
    residual dropout 0.1 (Radford et al. 2019)."""

    hidden: int
    heads: int

    @nn.compact
    def __call__(self, x: Any, train: bool) -> Any:
        mask = nn.make_causal_mask(jnp.ones(x.shape[:2], jnp.int32))
        a = nn.MultiHeadDotProductAttention(num_heads=self.heads, dropout_rate=0.1,
                                            deterministic=not train)(nn.LayerNorm()(x), mask=mask)
        x = x + nn.Dropout(0.1, deterministic=not train)(a)
        h = nn.Dense(self.hidden)(nn.gelu(nn.Dense(4 * self.hidden)(nn.LayerNorm()(x))))
        return x + nn.Dropout(0.1, deterministic=not train)(h)


class Gpt2(nn.Module):
    """GPT-2 small (Radford et al. 2019; 124 M parameters): 12 blocks, hidden 768, 12 heads,
    vocabulary 50257, 1024 learned positions, LM head tied to the token embedding."""

    layers: int = 12
    hidden: int = 768
    heads: int = 12
    vocab: int = 50257
    positions: int = 1024

    @nn.compact
    def __call__(self, tokens: Any, train: bool = True) -> Any:
        wte = nn.Embed(self.vocab, self.hidden)
        pos = jnp.arange(tokens.shape[1])[None, :]
        x = wte(tokens) + nn.Embed(self.positions, self.hidden)(pos)
        x = nn.Dropout(0.1, deterministic=not train)(x)
        for _ in range(self.layers):
            x = Gpt2Block(self.hidden, self.heads)(x, train)
        return wte.attend(nn.LayerNorm()(x))


class Vit(nn.Module):
    """A Vision Transformer (Dosovitskiy et al. 2021): 16x16 patches by a strided convolution,
    [CLS] token, learned position embeddings, pre-LN encoder blocks, classifier on [CLS]. The
    default is ViT-Ti/16 (Touvron et al. 2021, DeiT-Ti: hidden 192, 12 layers, 3 heads, MLP 768)."""

    layers: int = 12
    hidden: int = 192
    heads: int = 3
    mlp: int = 768
    patch: int = 16
    classes: int = 1000

    @nn.compact
    def __call__(self, x: Any, train: bool = True) -> Any:
        p = (self.patch, self.patch)
        x = nn.Conv(self.hidden, p, strides=p, padding="VALID")(x)
        x = x.reshape((x.shape[0], -1, self.hidden))
        cls = self.param("cls", nn.initializers.zeros, (1, 1, self.hidden))
        x = jnp.concatenate([jnp.broadcast_to(cls, (x.shape[0], 1, self.hidden)), x], axis=1)
        x = x + self.param("pos_embedding", nn.initializers.normal(0.02), (1,) + x.shape[1:])
        for _ in range(self.layers):
            a = nn.MultiHeadDotProductAttention(num_heads=self.heads)(nn.LayerNorm()(x))
            x = x + a
            h = nn.Dense(self.hidden)(nn.gelu(nn.Dense(self.mlp)(nn.LayerNorm()(x))))
            x = x + nn.Dropout(0.1, deterministic=not train)(h)
        return nn.Dense(self.classes)(nn.LayerNorm()(x)[:, 0])


@dataclass(frozen=True)
class Spec:
    """One corpus model: its Flax module, per-replica input shape, input kind (``"image"``: f32
    normal values; ``"tokens"``: int32 ids below ``vocab``), labels (``"class"``: one id per
    example below ``classes``; ``"next_token"``: the inputs shifted by one, a language model's
    targets), optimizer and the forms written."""

    factory: Callable[[], Any]
    shape: Tuple[int, ...]
    classes: int
    tx: Any
    inputs: str = "image"
    vocab: int = 0
    labels: str = "class"
    forms: Tuple[str, ...] = ("single", "pmap", "spmd")
    note: str = ""


# The architectures are the published ones; batch, image size and sequence length are reduced
# (``note``, recorded in MANIFEST.json) so that the suite stays fast on 2 cores.
MODELS: Dict[str, Spec] = {
    "mlp": Spec(Mlp, (32, 784), 10, optax.sgd(0.01, momentum=0.9)),
    "mnist_cnn": Spec(mnist_cnn, (64, 28, 28, 1), 10, optax.adadelta(1.0)),
    "lstm": Spec(Lstm, (8, 16, 32), 10, optax.adam(1e-3)),
    "bert_base_layer": Spec(BertLayerClassifier, (2, 128, 768), 2, optax.adamw(1e-4),
                            note="one BERT-base encoder layer, batch 2, sequence 128"),
    "resnet18": Spec(resnet18, (2, 128, 128, 3), 1000, optax.sgd(0.1, momentum=0.9),
                     note="ImageNet ResNet-18, batch 2 of 128x128 images (not 224x224)"),
    "resnet50": Spec(resnet50, (1, 128, 128, 3), 1000, optax.sgd(0.1, momentum=0.9),
                     note="ImageNet ResNet-50, batch 1 of 128x128 images (not 224x224)"),
    "bert_mini": Spec(Bert, (2, 128), 2, optax.adamw(1e-4), inputs="tokens", vocab=30522,
                      note="full BERT-Mini (L=4, H=256, A=4), batch 2, sequence 128"),
    "gpt2_small": Spec(Gpt2, (1, 64), 50257, optax.adamw(6e-4), inputs="tokens", vocab=50257,
                       labels="next_token",
                       note="GPT-2 small (12 layers, hidden 768), batch 1, sequence 64 (not 1024)"),
    # GPT-2's architecture and vocabulary at a width and depth whose 8-device forms fit the value
    # check: gpt2_small's need about 36 GB (--max-check-bytes estimate) and run timing-only.
    "gpt2_tiny": Spec(lambda: Gpt2(layers=2, hidden=64, heads=4), (1, 64), 50257, optax.adamw(6e-4),
                      inputs="tokens", vocab=50257, labels="next_token",
                      note="GPT-2 architecture (pre-LN blocks, causal attention, tied LM head, "
                           "50257-token vocabulary, 1024 positions) reduced to 2 blocks of hidden "
                           "64 with 4 heads, batch 1, sequence 64: small enough for the value "
                           "check of its pmap and SPMD forms"),
    "vit_ti16": Spec(Vit, (2, 64, 64, 3), 1000, optax.adamw(1e-3),
                     note="ViT-Ti/16, batch 2 of 64x64 images (16 patches + [CLS])"),
}


# ---- steps -------------------------------------------------------------------------------------


def make_step(net: Any, tx: Any, pmean: bool, stateful: bool) -> Callable[..., Any]:
    """``step(params, state, opt_state, x, y, key) -> (loss, params, state, opt_state)``: forward
    (dropout on), cross-entropy loss, backward, optimizer update. ``state`` holds the mutable
    collections (batch-norm statistics), empty for stateless models."""

    def loss_fn(params: Any, state: Any, x: Any, y: Any, key: Any) -> Any:
        variables = {"params": params, **state}
        if stateful:
            logits, state = net.apply(variables, x, train=True, rngs={"dropout": key},
                                      mutable=list(state))
        else:
            logits = net.apply(variables, x, train=True, rngs={"dropout": key})
        # One-hot cross-entropy, as Flax's MNIST example writes it.
        loss = optax.softmax_cross_entropy(logits, jax.nn.one_hot(y, logits.shape[-1])).mean()
        return loss, state

    def step(params: Any, state: Any, opt_state: Any, x: Any, y: Any, key: Any) -> Any:
        (loss, state), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, state, x, y, key)
        if pmean:
            grads = jax.lax.pmean(grads, "replica")
            loss = jax.lax.pmean(loss, "replica")
        updates, opt_state = tx.update(grads, opt_state, params)
        return loss, optax.apply_updates(params, updates), state, opt_state

    return step


def example(spec: Spec, key: Any) -> Tuple[Any, Any]:
    """Per-replica example inputs and labels of a model."""
    if spec.inputs == "tokens":
        x = jax.random.randint(key, spec.shape, 0, spec.vocab)
    else:
        x = jax.random.normal(key, spec.shape)
    if spec.labels == "next_token":
        return x, jnp.roll(x, -1, axis=1)
    return x, jax.random.randint(key, (spec.shape[0],), 0, spec.classes)


def lower(name: str, form: str) -> Tuple[tpusim.jax.LoweredModule, Dict[str, Any]]:
    # JAX caches traced helpers (threefry2x32, _one_hot, ...) across lowerings, and a cached
    # helper keeps the instruction names of the first model that traced it: without a clear, a
    # module's text would depend on which models ran before it in the same process.
    jax.clear_caches()
    spec = MODELS[name]
    net, tx = spec.factory(), spec.tx
    key = jax.random.PRNGKey(0)
    x, y = example(spec, key)
    variables = net.init(key, x, train=False)
    params = variables["params"]
    state = {k: v for k, v in variables.items() if k != "params"}
    opt_state = tx.init(params)
    info = {"model": name, "form": form, "input": list(x.shape), "labels": list(y.shape)}
    if spec.note:
        info["note"] = spec.note
    args = (params, state, opt_state)
    step = make_step(net, tx, form == "pmap", bool(state))
    if form == "single":
        return tpusim.jax.lower(step, *args, x, y, key), info
    if form == "pmap":
        rep = lambda t: jax.tree_util.tree_map(  # noqa: E731
            lambda a: jnp.broadcast_to(a, (REPLICAS,) + a.shape), t)
        f = jax.pmap(step, axis_name="replica")
        info["replicas"] = REPLICAS
        return tpusim.jax.lower(f, *(rep(a) for a in args), rep(x), rep(y), rep(key)), info
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:REPLICAS]).reshape(2, 4), ("data", "model"))
    r = NamedSharding(mesh, P())
    d = NamedSharding(mesh, P(("data", "model")))
    full = lambda a: jnp.concatenate([a] * REPLICAS)  # noqa: E731  global batch
    same = lambda t, s: jax.tree_util.tree_map(lambda _: s, t)  # noqa: E731
    f = jax.jit(step, in_shardings=tuple(same(a, r) for a in args) + (d, d, r))
    info["mesh"] = [2, 4]
    info["input"] = [x.shape[0] * REPLICAS] + list(x.shape[1:])
    info["labels"] = [y.shape[0] * REPLICAS] + list(y.shape[1:])
    return tpusim.jax.lower(f, *args, full(x), full(y), key), info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "tests" / "data" / "hlo" / "jax"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--forms", default="",
                    help="forms to write, e.g. single,pmap,spmd (default: each model's own)")
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
    old = out / "MANIFEST.json"
    if old.exists():  # regenerating some models keeps the others' entries
        manifest["modules"] = json.loads(old.read_text())["modules"]
    for name in args.models.split(","):
        for form in args.forms.split(",") if args.forms else MODELS[name].forms:
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
