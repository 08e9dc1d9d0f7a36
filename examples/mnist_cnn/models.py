"""The classic PyTorch MNIST CNN (pytorch/examples mnist/main.py: two 3x3 convolutions, max-pool,
dropout, two linear layers, log-softmax + NLL loss) in PyTorch and in Flax, and their training steps.

Shapes per replica: images [64, 1, 28, 28] (NCHW, PyTorch) / [64, 28, 28, 1] (NHWC, Flax), labels
[64]; conv1 32 filters, conv2 64 filters, fc1 9216 -> 128, fc2 128 -> 10.
"""

from __future__ import annotations

from typing import Any, Tuple

BATCH = 64  # per core, as in the seeds' experiment


def torch_net() -> Any:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x: Any) -> Any:
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            return F.log_softmax(self.fc2(x), dim=1)

    torch.manual_seed(1)
    return Net()


def flax_net() -> Any:
    import flax.linen as fnn
    import jax.numpy as jnp

    class Net(fnn.Module):
        @fnn.compact
        def __call__(self, x: Any, train: bool = True) -> Any:
            x = fnn.relu(fnn.Conv(32, (3, 3), padding="VALID")(x))
            x = fnn.relu(fnn.Conv(64, (3, 3), padding="VALID")(x))
            x = fnn.max_pool(x, (2, 2), strides=(2, 2))
            x = fnn.Dropout(0.25, deterministic=not train)(x)
            x = x.reshape((x.shape[0], -1))
            x = fnn.relu(fnn.Dense(128)(x))
            x = fnn.Dropout(0.5, deterministic=not train)(x)
            return fnn.log_softmax(fnn.Dense(10)(x))

    return Net()


def flax_train_step(lr: float = 1.0, rho: float = 0.9) -> Tuple[Any, Any, Any]:
    """(step, init_params, optimizer) of the Flax CNN with Adadelta (lr 1.0, as the PyTorch
    example). ``step(params, opt_state, images, labels, key) -> (loss, params, opt_state)``."""
    import jax
    import jax.numpy as jnp
    import optax

    net = flax_net()
    tx = optax.adadelta(lr, rho=rho, eps=1e-6)

    def loss_fn(params: Any, images: Any, labels: Any, key: Any) -> Any:
        logp = net.apply({"params": params}, images, train=True, rngs={"dropout": key})
        # NLL of the log-softmax with one-hot labels (Flax's MNIST example's form).
        return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(labels, 10), axis=-1))

    def step(params: Any, opt_state: Any, images: Any, labels: Any, key: Any) -> Any:
        loss, grads = jax.value_and_grad(loss_fn)(params, images, labels, key)
        updates, opt_state = tx.update(grads, opt_state, params)
        return loss, optax.apply_updates(params, updates), opt_state

    def init(key: Any) -> Any:
        return net.init(key, jnp.zeros((BATCH, 28, 28, 1)), train=False)["params"]

    return step, init, tx
