"""The seeds' experiment: the PyTorch MNIST CNN's training step (through torchax) and the same CNN
in JAX/Flax, measured on this machine's CPU and simulated on a TPU v2-8 (Colab's "8 TPU cores"):
one TensorCore, all 8 as data-parallel replicas (gradients all-reduced), and a 2x4 SPMD mesh —
each with its host side modelled (tpusim.run(steps=..., host_input=True): the batch's infeed over
PCIe, the outfeed of the loss, per-step host overhead; config keys host.*).

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python3 examples/mnist_cnn/run.py

Writes examples/mnist_cnn/results.json and results.md (and plot.png with --plot). A form the
simulator cannot run yet is reported with the compiler's error (the op and its line), not dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import models  # noqa: E402

import tpusim  # noqa: E402
import tpusim.jax  # noqa: E402

REPLICAS = 8
MESH = (2, 4)


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up (and compilation)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


# ---- the steps ---------------------------------------------------------------------------------


def torch_forms(repeat: int) -> Dict[str, Any]:
    """CPU-measured PyTorch step and the three lowered forms through torchax."""
    import torch
    import torch.nn.functional as F

    import tpusim.torch as tt

    tt.import_torchax()
    net = models.torch_net()
    x = torch.randn(models.BATCH, 1, 28, 28)
    y = torch.randint(0, 10, (models.BATCH,))
    opt = torch.optim.Adadelta(net.parameters(), lr=1.0)

    def cpu_step() -> None:
        opt.zero_grad()
        F.nll_loss(net(x), y).backward()
        opt.step()

    net.train()
    cpu = median_seconds(cpu_step, repeat)
    forms = {
        "1 core": lambda: tt.lower_train_step(models.torch_net(), (x,), y, F.nll_loss,
                                              torch.optim.Adadelta(net.parameters(), lr=1.0)),
        "8 cores (data parallel)": lambda: tt.lower_train_step(
            models.torch_net(), (x,), y, F.nll_loss,
            torch.optim.Adadelta(net.parameters(), lr=1.0), replicas=REPLICAS),
        "2x4 SPMD mesh": lambda: torch_spmd(x, y),
    }
    return {"cpu_seconds": cpu, "forms": forms}


def _mesh() -> Any:
    import jax
    import numpy as np
    from jax.sharding import Mesh

    return Mesh(np.array(jax.devices()[: MESH[0] * MESH[1]]).reshape(MESH), ("data", "model"))


def _spmd_lower(step: Callable[..., Any], state: List[Any], batch: List[Any]) -> Any:
    """jit with the batch sharded over every device of the 2x4 mesh (dimension 0 over both
    axes) and the weights and optimizer state replicated."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = _mesh()
    rep = NamedSharding(mesh, P())
    data = NamedSharding(mesh, P(("data", "model")))
    shard = lambda tree, s: jax.tree_util.tree_map(lambda _: s, tree)  # noqa: E731
    in_shardings = tuple(shard(t, rep) for t in state) + tuple(shard(b, data) for b in batch)
    f = jax.jit(step, in_shardings=in_shardings)
    return tpusim.jax.lower(f, *state, *batch)


def torch_spmd(x: Any, y: Any) -> Any:
    import jax.numpy as jnp
    import torch
    import torch.nn.functional as F

    import tpusim.torch as tt

    net = models.torch_net()
    step, w, b, opt_state = tt.train_step(net, F.nll_loss,
                                          torch.optim.Adadelta(net.parameters(), lr=1.0))
    n = REPLICAS * models.BATCH
    images = jnp.zeros((n,) + tuple(x.shape[1:]), jnp.float32)
    labels = jnp.zeros((n,), jnp.int32)  # JAX without x64: int32 labels

    def spmd_step(w: Any, b: Any, s: Any, images: Any, labels: Any) -> Any:
        return step(w, b, s, (images,), labels)

    return _spmd_lower(spmd_step, [w, b, opt_state], [images, labels])


def flax_forms(repeat: int) -> Dict[str, Any]:
    import jax
    import jax.numpy as jnp

    step, init, tx = models.flax_train_step()
    key = jax.random.PRNGKey(0)
    params = init(key)
    opt_state = tx.init(params)
    images = jax.random.normal(key, (models.BATCH, 28, 28, 1))
    labels = jax.random.randint(key, (models.BATCH,), 0, 10)
    jitted = jax.jit(step)
    cpu = median_seconds(lambda: jax.block_until_ready(jitted(params, opt_state, images, labels, key)),
                         repeat)

    def pmapped() -> Any:
        def pstep(p: Any, s: Any, im: Any, lb: Any, k: Any) -> Any:
            # The per-replica step with the gradients averaged over the replicas (all-reduce).
            import optax

            loss, grads = jax.value_and_grad(
                lambda p: -jnp.mean(jnp.sum(
                    models.flax_net().apply({"params": p}, im, train=True, rngs={"dropout": k})
                    * jax.nn.one_hot(lb, 10), axis=-1)))(p)
            grads = jax.lax.pmean(grads, "replica")
            updates, s = tx.update(grads, s, p)
            return jax.lax.pmean(loss, "replica"), optax.apply_updates(p, updates), s

        rep = lambda t: jax.tree_util.tree_map(  # noqa: E731
            lambda a: jnp.broadcast_to(a, (REPLICAS,) + a.shape), t)
        return tpusim.jax.lower(jax.pmap(pstep, axis_name="replica"), rep(params), rep(opt_state),
                                rep(images), rep(labels), rep(key))

    forms = {
        "1 core": lambda: tpusim.jax.lower(step, params, opt_state, images, labels, key),
        "8 cores (data parallel)": pmapped,
        "2x4 SPMD mesh": lambda: _flax_spmd(step, params, opt_state, key),
    }
    return {"cpu_seconds": cpu, "forms": forms}


def _flax_spmd(step: Callable[..., Any], params: Any, opt_state: Any, key: Any) -> Any:
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = _mesh()
    rep = NamedSharding(mesh, P())
    data = NamedSharding(mesh, P(("data", "model")))
    n = REPLICAS * models.BATCH
    images = jnp.zeros((n, 28, 28, 1))
    labels = jnp.zeros((n,), jnp.int32)
    shard = lambda tree, s: jax.tree_util.tree_map(lambda _: s, tree)  # noqa: E731
    f = jax.jit(step, in_shardings=(shard(params, rep), shard(opt_state, rep), data, data, rep))
    return tpusim.jax.lower(f, params, opt_state, images, labels, key)


# ---- simulation --------------------------------------------------------------------------------


def simulate(lower: Callable[[], Any], config: str, steps: int, check: bool,
             name: str) -> Dict[str, Any]:
    try:
        module = lower()
    except tpusim.Error as e:
        return {"error": f"{type(e).__name__}: {e}"}
    images_per_step = models.BATCH * (REPLICAS if module.form != "single" else 1)
    try:
        t = time.perf_counter()
        r = tpusim.jax.run_lowered(module, config=config, steps=steps, host_input=True,
                                   check=check, timing_only=not check, max_seconds=1200,
                                   name=name)
        wall = time.perf_counter() - t
    except tpusim.Error as e:
        first = str(e).splitlines()[0].split(" (supported:")[0]
        return {"error": f"{type(e).__name__}: {first}", "form": module.form}
    h = r.host_loop
    assert h is not None
    return {
        "form": module.form,
        "devices": r.replicas,
        "images_per_step": images_per_step,
        "cycles": r.cycles,
        "device_seconds": h.device_seconds,
        "host_seconds": h.host_seconds,
        "host_cpu_seconds": h.host_cpu_seconds,
        "pcie_seconds": h.pcie_seconds,
        "overlap_seconds": h.overlap_seconds,
        "step_seconds": h.wall_seconds,
        "images_per_second": images_per_step / h.wall_seconds,
        "bound": h.bound,
        "mxu_utilization": r.utilization,
        "check": "passed" if r.check.passed else (r.check.reason or "not performed"),
        "simulation_wall_seconds": wall,
    }


ROWS = ("1 core", "8 cores (data parallel)", "2x4 SPMD mesh")


def table(results: Dict[str, Any]) -> str:
    """The Markdown table of results.json: seconds per step and images per second."""
    lines = [
        "| front end | run | images/step | s/step | images/s | device s/step | host s/step "
        "| overlap s/step | bound |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for fe, rows in results["front_ends"].items():
        cpu = rows["cpu"]
        lines.append(f"| {fe} | CPU measured (this machine) | {results['batch_per_core']} | "
                     f"{cpu['step_seconds']:.4g} | {cpu['images_per_second']:.4g} | | | | |")
        for label in ROWS:
            r = rows.get(label, {})
            if "error" in r:
                lines.append(f"| {fe} | TPU {label} | | not simulated: {r['error'][:160]} "
                             "| | | | | |")
                continue
            lines.append(
                f"| {fe} | TPU {label} | {r['images_per_step']} | {r['step_seconds']:.4g} | "
                f"{r['images_per_second']:.4g} | {r['device_seconds']:.4g} | "
                f"{r['host_seconds']:.4g} | {r['overlap_seconds']:.4g} | {r['bound']} |")
    return "\n".join(lines) + "\n"


def plot(results: Dict[str, Any], path: Path) -> None:
    """Seconds per step and images per second, one group of bars per front end."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = ["CPU measured"] + [f"TPU {r}" for r in ROWS]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    fes = list(results["front_ends"])
    width = 0.8 / max(1, len(fes))
    for k, fe in enumerate(fes):
        rows = results["front_ends"][fe]
        secs, ips = [rows["cpu"]["step_seconds"]], [rows["cpu"]["images_per_second"]]
        for r in ROWS:
            ok = "error" not in rows.get(r, {"error": ""})
            secs.append(rows[r]["step_seconds"] if ok else 0.0)
            ips.append(rows[r]["images_per_second"] if ok else 0.0)
        xs = [i + k * width for i in range(len(labels))]
        axes[0].bar(xs, secs, width, label=fe)
        axes[1].bar(xs, ips, width, label=fe)
    for ax, title in zip(axes, ("seconds per step (log)", "images per second (log)")):
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
        ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
        ax.legend()
    fig.suptitle(f"MNIST CNN training step, batch {results['batch_per_core']}/core, "
                 f"{results['config']} (missing bar: not simulated)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="tpu-v2-8")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=10, help="timed CPU steps (median)")
    ap.add_argument("--check", action="store_true", help="also check values (slower)")
    ap.add_argument("--front-end", choices=["torch", "flax", "both"], default="both")
    ap.add_argument("--out", default=str(HERE / "results.json"))
    ap.add_argument("--plot", action="store_true", help="also write plot.png (matplotlib)")
    ap.add_argument("--from-json", help="only redo the table and plot from this results.json")
    args = ap.parse_args()
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
        (HERE / "results.md").write_text(table(results))
        if args.plot:
            plot(results, HERE / "plot.png")
        return 0

    import jax
    import flax
    import torch

    results: Dict[str, Any] = {
        "config": args.config,
        "steps": args.steps,
        "batch_per_core": models.BATCH,
        "versions": {"jax": jax.__version__, "flax": flax.__version__, "torch": torch.__version__,
                     "tpusim": tpusim.__version__},
        "host_model": tpusim.run(
            "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(0)\n}\n", config=args.config,
            steps=1).raw["host_loop"]["model"],
        "front_ends": {},
    }
    todo = {"torch": torch_forms, "flax": flax_forms}
    for name, make in todo.items():
        if args.front_end not in (name, "both"):
            continue
        spec = make(args.repeat)
        fe: Dict[str, Any] = {"cpu": {"step_seconds": spec["cpu_seconds"],
                                      "images_per_second": models.BATCH / spec["cpu_seconds"]}}
        for label, lower in spec["forms"].items():
            print(f"{name}: {label} ...", flush=True)
            fe[label] = simulate(lower, args.config, args.steps, args.check, f"<{name}: {label}>")
            print("   ", json.dumps(fe[label]), flush=True)
        results["front_ends"][name] = fe
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    (HERE / "results.md").write_text(table(results))
    if args.plot:
        plot(results, HERE / "plot.png")
    print(f"wrote {args.out} and results.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
