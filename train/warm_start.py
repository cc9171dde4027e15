"""A trained bot's network copied into a fresh SB3 policy: where a run starts from weights instead of at random.

``tavernzoo train --init BOT`` (``TrainConfig.init``), ``tavernzoo exploit``'s warm start and ``tavernzoo expert
--init`` (and its resume, which rebuilds a round's student) all load a bot's :class:`~..agents.policy.MLPPolicy`
through :func:`load_actor` and :func:`load_critic`.

Where the run's network is the bot's, the copy is exact. Where it is wider (``widen``: each hidden layer at least
as wide as the bot's, as many of them), it is the bot's network grown without changing what it computes (Net2Net's
function-preserving growth, Chen et al. 2016, in its simplest form): the bot's units keep their weights and read
nothing from the new ones, the new units get fresh incoming weights (normal, variance 1 / fan-in) and send nothing
to the layer above (zero weights there), so the grown network plays and values every position as the bot did,
and the gradient reaches the new units from the first update. A privileged critic (``privileged_critic``) reads
every other seat's view after the seat's own: its first layer reads the bot's critic's inputs with the bot's
weights and the other seats' with zeros, so it too starts as the bot's critic.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def load_actor(policy: Any, bot: Any, *, widen: bool = False, seed: int = 0) -> None:
    """Copy ``bot``'s actor (an MLPPolicy) into the actor of SB3 ``policy``: exactly, or grown (``widen``;
    module docstring). A ValueError naming what does not fit, before any weight is written."""
    import torch

    if bot.activation != "tanh":  # the trainer's MlpPolicy is tanh
        raise ValueError(f"the policy's activation is {bot.activation!r}; a trained run's is tanh")
    layers = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)] + [policy.action_net]
    _load(layers, bot.weights, bot.biases, widen, seed, "actor")


def load_critic(policy: Any, bot: Any, *, widen: bool = False, seed: int = 0) -> None:
    """Copy ``bot``'s value head (an MLPPolicy that has one: a checkpoint, or a bot exported with it) into the
    critic of SB3 ``policy``: exactly, or grown (``widen``), and with a privileged critic's other seats' inputs
    read with zero weights (module docstring). A ValueError where the bot has no value head or its layers do
    not fit."""
    import torch

    if not bot.has_value:
        raise ValueError("the policy has no value head (an exported bot without one, or a privileged run's actor)")
    layers = [m for m in policy.mlp_extractor.value_net if isinstance(m, torch.nn.Linear)] + [policy.value_net]
    _load(layers, bot.value_weights, bot.value_biases, widen, seed + 1, "critic", wider_input=True)


def check_actor_fits(bot: Any, observation_size: int, net_arch: Any, num_actions: int) -> None:
    """The ValueError :func:`load_actor` with ``widen`` would raise for a run of these sizes, without building it
    (a run refuses a bot that does not fit before it writes or says anything)."""
    outputs = [*net_arch, num_actions]
    _check([(out, inputs) for out, inputs in zip(outputs, [observation_size, *net_arch], strict=True)],
           [tuple(np.shape(w)) for w in bot.weights], True, "actor")


def _check(shapes: list, wanted: list, widen: bool, part: str, wider_input: bool = False) -> None:
    """A ValueError where layers of ``wanted`` shapes (the bot's) cannot be copied into layers of ``shapes``."""
    hidden = ", ".join(str(shape[0]) for shape in wanted[:-1])
    fits = len(shapes) == len(wanted) and shapes[-1][0] == wanted[-1][0]  # as many layers, the same outputs
    fits = fits and (shapes[0][1] == wanted[0][1] or (wider_input and shapes[0][1] > wanted[0][1]))
    for (out, _), (bot_out, _) in zip(shapes[:-1], wanted[:-1], strict=False):
        fits = fits and (out == bot_out or (widen and out > bot_out))
    if not fits:
        needed = "as many hidden layers, each at least as wide" if widen else "the same hidden layers"
        raise ValueError(f"its {part}'s layers {wanted} do not fit the run's {shapes}: the run's net_arch needs "
                         f"{needed} ({hidden}), and the same game and options")


def _load(layers: list, weights: list, biases: list, widen: bool, seed: int, part: str,
          wider_input: bool = False) -> None:
    import torch

    _check([tuple(layer.weight.shape) for layer in layers], [tuple(np.shape(w)) for w in weights], widen, part,
           wider_input)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer, weight, bias in zip(layers, weights, biases, strict=True):
            out, inputs = np.shape(weight)
            grown = torch.randn(layer.weight.shape, generator=generator) / np.sqrt(layer.weight.shape[1])
            grown[:out] = 0.0  # the bot's units read nothing from new units (nor from a privileged critic's seats)
            if layer is layers[-1]:
                grown.zero_()  # the head reads nothing from new units
            grown[:out, :inputs] = torch.tensor(np.asarray(weight, np.float32))  # a copy: ONNX arrays are read-only
            layer.weight.copy_(grown)
            fresh = torch.zeros_like(layer.bias)
            fresh[:out] = torch.tensor(np.asarray(bias, np.float32))
            layer.bias.copy_(fresh)
