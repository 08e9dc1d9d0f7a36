"""tpusim.torch: an nn.Module training step through torchax -> JAX -> HLO, simulated and checked."""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import pytest

import tpusim

import importlib.util

torch = pytest.importorskip("torch")
pytest.importorskip("optax")
if importlib.util.find_spec("torchax") is None:
    pytest.skip("torchax is not installed", allow_module_level=True)
import tpusim.torch as tpusim_torch  # noqa: E402  (imports torchax under torch 2.13)

tpusim_torch.import_torchax()


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return torch.nn.functional.log_softmax(self.fc2(torch.relu(self.fc1(x))), dim=1)


def test_training_step_simulated_and_checked() -> None:
    torch.manual_seed(0)
    model = Mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(16, 32)
    y = torch.randint(0, 10, (16,))
    report = tpusim_torch.simulate(
        model, (x,), labels=y, loss_fn=torch.nn.functional.nll_loss, optimizer=opt, config="tpu-v2"
    )
    assert report.model == "<torch:Mlp train step>"
    assert report.check.performed and report.check.passed
    # Outputs: the loss, 4 updated parameters and their 4 momentum buffers.
    params = 32 * 64 + 64 + 64 * 10 + 10
    assert report.check.elements_compared == 1 + 2 * params
    # Forward (2 dots) and backward (at least 3 more) on the MXU: 2*M*N*K each.
    assert report.mxu_flops >= 2 * 16 * (32 * 64 + 64 * 10) * 2


def test_data_parallel_replicas_all_reduce_gradients() -> None:
    model = Mlp()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    module = tpusim_torch.lower_train_step(
        model, (torch.randn(4, 32),), torch.zeros(4, dtype=torch.int64),
        torch.nn.functional.nll_loss, opt, replicas=8,
    )
    assert module.form == "pmap" and module.replicas == 8
    assert "all-reduce" in module.text


def test_unsupported_optimizer_is_named() -> None:
    model = Mlp()
    with pytest.raises(tpusim.UnsupportedError, match="RMSprop"):
        tpusim_torch.optax_from_torch(torch.optim.RMSprop(model.parameters()))
