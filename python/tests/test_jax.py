"""tpusim.jax: a JAX function lowered by JAX and simulated, with its values checked against JAX."""

from __future__ import annotations

import os

# Eight host devices for pmap and Mesh lowering (must be set before JAX starts).
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import numpy as np
import pytest

import tpusim

jax = pytest.importorskip("jax")
jnp = jax.numpy
tpusim_jax = pytest.importorskip("tpusim.jax")


def mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def sgd_step(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    return loss, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def example(batch=16):
    k = jax.random.split(jax.random.PRNGKey(0), 4)
    params = {
        "w1": jax.random.normal(k[0], (32, 64)) * 0.1,
        "b1": jnp.zeros((64,)),
        "w2": jax.random.normal(k[1], (64, 10)) * 0.1,
    }
    x = jax.random.normal(k[2], (batch, 32))
    y = jax.nn.one_hot(jax.random.randint(k[3], (batch,), 0, 10), 10)
    return params, x, y


def test_training_step_simulated_and_checked() -> None:
    params, x, y = example()
    report = tpusim_jax.simulate(sgd_step, params, x, y, config="tpu-v2")
    assert report.model == "<jax:sgd_step>"
    assert report.check.performed and report.check.passed
    # loss + 3 updated parameters.
    assert report.check.elements_compared == 1 + 32 * 64 + 64 + 64 * 10
    dots = [o for o in report.ops if o.opcode == "dot"]
    assert len(dots) >= 3 and all(o.cycles > 0 for o in dots)
    # The forward's two dots and the backward's (at least two more): 2*M*N*K each.
    assert report.mxu_flops >= 2 * 16 * (32 * 64 + 64 * 10) * 2


def test_evaluator_agrees_with_jax_on_the_same_inputs() -> None:
    # run() checks the simulator against tpusim's CPU evaluator; this closes the loop: the
    # evaluator on JAX's own inputs gives JAX's outputs.
    params, x, y = example()
    module = tpusim_jax.lower(sgd_step, params, x, y)
    flat = jax.tree_util.tree_leaves((params, x, y))
    got = tpusim.evaluate(module.text, [np.asarray(a) for a in flat])
    want = jax.tree_util.tree_leaves(jax.jit(sgd_step)(params, x, y))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-4, atol=1e-5)


def test_pmap_keeps_replicas() -> None:
    if jax.device_count() < 8:
        pytest.skip("needs 8 JAX devices (XLA_FLAGS set after JAX started)")

    def step(params, x, y):
        loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
        grads = jax.lax.pmean(grads, "i")
        return jax.lax.pmean(loss, "i"), jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    params, x, y = example(batch=8 * 4)
    rep = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (8,) + a.shape), params)
    pstep = jax.pmap(step, axis_name="i")
    module = tpusim_jax.lower(pstep, rep, x.reshape(8, 4, 32), y.reshape(8, 4, 10))
    assert module.form == "pmap" and module.replicas == 8
    # JAX's text as lowered: tpusim's parser runs the manual body as the 8 replicas' program.
    assert "xla.sdy.manual_computation_body" in module.text and "all-reduce" in module.text
    report = tpusim_jax.run_lowered(module, config="tpu-v2-8")
    assert report.replicas == 8 and len(report.cores) == 8
    assert report.check.performed and report.check.passed
    assert sum(link.bytes for link in report.ici) > 0  # the gradients' all-reduce used ICI


def test_mesh_sharding_runs_partitioned() -> None:
    if jax.device_count() < 8:
        pytest.skip("needs 8 JAX devices")
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))

    def layer(x, w):
        return jnp.tanh(x @ w)

    f = jax.jit(
        layer,
        in_shardings=(NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model"))),
    )
    x = jnp.ones((32, 64))
    w = jnp.ones((64, 128))
    module = tpusim_jax.lower(f, x, w)
    assert module.form == "spmd" and module.partitions == 8
    assert "sharding={devices=" in module.text
    report = tpusim_jax.run_lowered(module, config="tpu-v2-8")
    assert report.replicas == 8 and len(report.cores) == 8
    assert report.check.performed and report.check.passed


def test_unlowerable_function_is_a_front_end_error() -> None:
    def bad(x):
        return x.reshape(7, 7)  # 32 elements cannot be 49

    with pytest.raises(tpusim.FrontEndError, match="bad"):
        tpusim_jax.simulate(bad, jnp.ones((32,)))


def _pallas_add():
    pl = pytest.importorskip("jax.experimental.pallas")

    def add_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    def add(x, y):
        size = x.size
        return pl.pallas_call(
            add_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            cost_estimate=pl.CostEstimate(flops=size, transcendentals=0, bytes_accessed=12 * size),
        )(x, y)

    return add


def test_pallas_kernel_lowered_for_the_tpu_is_timed_from_its_cost_estimate() -> None:
    add = _pallas_add()
    x = jnp.ones((1024, 1024), jnp.float32)
    # On this machine's backend a Pallas kernel runs only in interpret mode: the error says how.
    with pytest.raises(tpusim.FrontEndError, match='platform="tpu"'):
        tpusim_jax.simulate(add, x, x, config="tpu-v5e")
    module = tpusim_jax.lower(add, x, x, platform="tpu")
    assert 'custom_call_target="tpu_custom_call"' in module.text
    report = tpusim_jax.simulate(add, x, x, config="tpu-v5e", platform="tpu")
    assert report.timing_only
    (kernel,) = report.raw["pallas_kernels"]
    assert kernel["bytes_accessed"] == 12 * 1024 * 1024 and kernel["flops"] == 1024 * 1024
    # Its declared bytes cross HBM (beyond them only a one-element probe of each operand), at no
    # more than the configured bandwidth.
    op = next(o for o in report.ops if o.name == kernel["name"])
    assert 12 * 1024 * 1024 <= op.hbm_bytes <= 12 * 1024 * 1024 + 64
    assert report.hbm.bandwidth_bytes_per_s <= report.hbm.peak_bandwidth_bytes_per_s
