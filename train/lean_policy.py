"""MaskablePPO's actor-critic with a lean forward pass for collecting rollouts, and lean arithmetic.

During a rollout MaskablePPO calls ``policy(obs, action_masks=masks)`` once per vectorised step. The stock
forward builds a ``MaskableCategorical`` (a torch ``Distribution`` with argument validation), masks it,
samples and asks it for the log-probability: several times the cost of the two small matrix products
themselves (19-26% of a training run in issue 15's profile). :class:`LeanMaskablePolicy` computes the
same thing directly under ``torch.inference_mode``:

    latent_pi, latent_vf = mlp_extractor(obs)
    logits   = where(mask, action_net(latent_pi), -1e8)     # SB3's HUGE_NEG, so the same numbers
    shifted  = logits - max(logits)
    action   = sample_legal(exp(shifted))   or argmax when deterministic
    returns    action, value_net(latent_vf), shifted[action] - log(sum(exp(shifted)))   # log_pi[action]

(:func:`choose`, in numpy: a handful of small operations over the legal actions only, each cheaper than a
torch call.)
:meth:`LeanMaskablePolicy.act` is the forward of train/shared_forward.py's rollouts: the learner's seats
and its latest self's in one batch, without the critic (evaluated there once per rollout).

The PPO update's ``evaluate_actions`` is lean the same way: SB3's builds a ``MaskableCategorical`` per
minibatch (argument checks, masking, normalisation and probabilities each a pass of their own: a sixth of
the update at MiniSteel's 256 x 256, docs/performance.md); this one computes the same log-probabilities
and entropy from the masked logits, with gradients:

    shifted  = logits - max(logits)                          # MaskableCategorical's logits, less a constant
    log_prob = shifted[action] - log(sum(exp(shifted)))
    entropy  = log(sum(exp(shifted))) - sum(exp(shifted) * shifted) / sum(exp(shifted))    # -sum p log p

Three kinds of arithmetic are written around what torch does slowly on this machine's CPUs (measured
there, docs/performance.md, "Training on the compiled kernel"): ``exp`` of an input whose result
underflows (a masked logit's -1e8) takes a slow path, ten times the cost of an ordinary one, so the
update exponentiates the shifted logits clamped at ``EXP_FLOOR`` (a masked action's share then stays below
1e-34, far under float32's resolution of a sum of at least 1) and the rollouts' choice is numpy's
(:func:`choose`); ``torch.tanh`` runs at a sixth of numpy's speed, so the hidden layers' activations are
:class:`FastTanh` (numpy's tanh forward, torch's own tanh gradient); :func:`sample_legal` inverts the
cumulative distribution at one uniform number per row (torch's generator, so ``set_random_seed`` fixes
it) instead of ``torch.multinomial``'s exponential draw per action. The distributions are the same; the
numbers agree with SB3's within float rounding (tests/test_train.py). The update's Adam is torch's fused
one where torch has it (2.4 on): one pass over the parameters instead of a loop of small operations.

The modules (and so the ``state_dict``, ``model.zip`` and ``policy_from_sb3``) are exactly those of
``MaskableActorCriticPolicy`` (:class:`FastTanh` is an ``nn.Tanh``); only the arithmetic differs. When
gradients are on (someone trains through ``forward``) the stock forward runs instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor

# The logit SB3's MaskableCategorical gives a masked action: the log-probabilities match it exactly.
MASKED_LOGIT = -1e8
# Where log_softmax stops exponentiating: exp(-80) is still a normal float32 (exp(-88) is not).
EXP_FLOOR = -80.0
# torch's fused Adam on CPUs (torch 2.4 on); the same update as the loop over parameters, in one pass.
FUSED_ADAM = tuple(int(part) for part in torch.__version__.split(".")[:2]) >= (2, 4)


class _NumpyTanh(torch.autograd.Function):
    """tanh computed by numpy (six times torch's speed here); its gradient torch's own ``tanh_backward``."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = torch.from_numpy(np.tanh(x.detach().numpy()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


class FastTanh(torch.nn.Tanh):
    """``nn.Tanh`` computed by numpy on CPU tensors (module docstring); elsewhere torch's."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.device.type != "cpu" or x.dtype != torch.float32:
            return torch.tanh(x)
        if x.requires_grad and torch.is_grad_enabled():
            return _NumpyTanh.apply(x)
        return torch.from_numpy(np.tanh(x.detach().numpy()))


def fast_activations(module: torch.nn.Module) -> None:
    """Make every ``nn.Tanh`` inside ``module`` a :class:`FastTanh` (no parameters: the same state_dict)."""
    for name, child in module.named_children():
        if type(child) is torch.nn.Tanh:
            setattr(module, name, FastTanh())
        else:
            fast_activations(child)


class LeanMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` whose gradient-free ``forward`` skips the distribution objects."""

    def __init__(self, *args: Any, **kwargs: Any):
        if kwargs.get("optimizer_kwargs") is None and FUSED_ADAM:
            kwargs["optimizer_kwargs"] = {"eps": 1e-5, "fused": True}  # SB3's eps for Adam, fused
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        super()._build_mlp_extractor()
        fast_activations(self.mlp_extractor)

    def forward(self, obs: torch.Tensor, deterministic: bool = False,
                action_masks: np.ndarray | torch.Tensor | None = None):
        if torch.is_grad_enabled() or not self.share_features_extractor:
            return super().forward(obs, deterministic, action_masks)
        with torch.inference_mode():
            latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
            masks = None if action_masks is None else np.asarray(action_masks).reshape(len(obs), -1)
            actions, log_prob = choose(self.action_net(latent_pi).numpy(), masks, deterministic)
            values = self.value_net(latent_vf)
        return torch.from_numpy(actions), values, torch.from_numpy(log_prob)

    def act(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A sampled action and its log-probability for every row, as ``forward`` samples them, without the
        critic: the rollouts of train/shared_forward.py answer the learner's decisions and its latest self's
        in one batch of these and evaluate the critic once per rollout. The actor's layers are run one
        by one (the same operations as the modules', without their calls; tanh in place). Returns numpy
        arrays."""
        if type(self.mlp_extractor) is not MlpExtractor:  # an actor that reads part of the input
            with torch.inference_mode():
                features = self.extract_features(torch.as_tensor(observations))
                logits = self.action_net(self.mlp_extractor.forward_actor(features)).numpy()
            return choose(logits, masks, deterministic=False)
        with torch.inference_mode():
            x = torch.as_tensor(observations)
            for layer in (*self.mlp_extractor.policy_net, self.action_net):
                if isinstance(layer, torch.nn.Linear):
                    x = torch.nn.functional.linear(x, layer.weight, layer.bias)
                elif isinstance(layer, FastTanh):
                    np.tanh(x.numpy(), out=x.numpy())
                else:
                    x = layer(x)
        return choose(x.numpy(), masks, deterministic=False)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: np.ndarray | torch.Tensor | None = None):
        """Values, log-probabilities of ``actions`` and entropies, as SB3's ``evaluate_actions`` gives them
        (module docstring), without the distribution objects."""
        if not self.share_features_extractor or action_masks is None:
            return super().evaluate_actions(obs, actions, action_masks)
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        logits = self.action_net(latent_pi)
        masks = torch.as_tensor(action_masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
        logits = torch.where(masks, logits, torch.tensor(MASKED_LOGIT, dtype=logits.dtype))
        # log p = shifted - log(total), with the masked actions' exp never taken (module docstring)
        shifted = (logits - logits.detach().amax(dim=1, keepdim=True)).clamp(min=EXP_FLOOR)
        exps = shifted.exp()
        totals = exps.sum(dim=1)
        log_totals = totals.log()
        log_prob = shifted.gather(1, actions.long().reshape(-1, 1)).squeeze(1) - log_totals
        entropy = log_totals - (exps * shifted).sum(dim=1) / totals  # -sum p log p; a masked p is below 1e-34
        return self.value_net(latent_vf), log_prob, entropy

    def masked_logits_and_values(self, obs: torch.Tensor, action_masks: np.ndarray | torch.Tensor | None):
        """Logits with masked actions at ``MASKED_LOGIT`` (shape (batch, actions)) and values (batch, 1)."""
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        logits = self.action_net(latent_pi)
        if action_masks is not None:
            masks = torch.as_tensor(action_masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
            logits = torch.where(masks, logits, torch.tensor(MASKED_LOGIT, dtype=logits.dtype))
        return logits, self.value_net(latent_vf)


def choose(logits: np.ndarray, masks: np.ndarray | None, deterministic: bool) -> tuple[np.ndarray, np.ndarray]:
    """The rollout's choice from a batch of logits (numpy: a few small operations, each cheaper than a torch
    call): actions (sampled, or the argmax when ``deterministic``) and their log-probabilities under the
    masked distribution (SB3's numbers, to float rounding). ``masks``: the legal actions (None: all);
    every row needs one."""
    if masks is None:
        masks = np.ones(logits.shape, dtype=bool)
    if deterministic:
        legal_logits = np.where(masks, logits, -np.inf)
        actions = legal_logits.argmax(axis=1)
        best = legal_logits[np.arange(len(actions)), actions]
        return actions, -np.log(np.exp(legal_logits - best[:, None]).sum(axis=1))
    # Only the legal actions, all rows' in one run (a sixth of the entries at a table of MiniSteel).
    rows, columns = np.nonzero(masks)
    counts = np.bincount(rows, minlength=len(logits))
    if not counts.all():
        raise ValueError(f"row {int(np.argmin(counts))} of the masks has no legal action")
    starts = np.cumsum(counts) - counts
    legal = logits[rows, columns]
    shifted = legal - np.repeat(np.maximum.reduceat(legal, starts), counts)
    exps = np.exp(shifted)
    picked, totals = sample_legal(exps, starts, counts)
    return columns[picked], shifted[picked] - np.log(totals).astype(np.float32)


def sample_legal(weights: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One entry per row drawn with probability proportional to its weight: the rows' weights lie one after
    another in ``weights`` (row ``i``'s: ``counts[i]`` of them from ``starts[i]``). The first entry whose
    running sum exceeds a uniform draw scaled to the row's total; the running sum is float64, all rows in one
    run, so each row keeps float32's resolution. Returns the entries' indices and the rows' totals. The draws
    come from torch's generator (``set_random_seed`` fixes them)."""
    cumulative = np.cumsum(weights, dtype=np.float64)
    ends = starts + counts - 1
    before = np.where(starts > 0, cumulative[starts - 1], 0.0)
    totals = cumulative[ends] - before
    draws = before + torch.rand(len(starts)).numpy() * totals
    # a draw rounded up to its row's total takes the row's last entry
    return np.minimum(np.searchsorted(cumulative, draws, side="right"), ends), totals


class OwnViewActor(MlpExtractor):
    """SB3's MlpExtractor whose actor reads only the first ``own_size`` features (the seat's own
    observation) while the critic reads them all (the other seats' observations too): the asymmetric
    actor-critic of perfect-training-imperfect-execution. The actor's layers are an ordinary actor's for
    an ``own_size`` observation, so the saved policy (``policy_from_sb3``) is a bot like any other."""

    def __init__(self, feature_dim: int, net_arch: Any, activation_fn: type, device: Any, own_size: int):
        super().__init__(feature_dim, net_arch, activation_fn, device)
        self.own_size = own_size
        self.policy_net = MlpExtractor(own_size, net_arch, activation_fn, device).policy_net

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[:, :self.own_size])


class PrivilegedCriticPolicy(LeanMaskablePolicy):
    """:class:`LeanMaskablePolicy` with :class:`OwnViewActor`: ``TrainConfig.privileged_critic``. The
    observation is the seat's own (``own_size`` values) followed by the other seats'
    (train/selfplay.py ``LearnerSeat.observe_learner``)."""

    def __init__(self, *args: Any, own_size: int, **kwargs: Any):
        self.own_size = own_size
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = OwnViewActor(self.features_dim, self.net_arch, self.activation_fn, self.device,
                                          self.own_size)
        fast_activations(self.mlp_extractor)


class TorchActor:
    """An :class:`~tavernzoo.agents.policy.MLPPolicy` evaluated with torch, for wide batches in training.

    Same weights, same ``act`` (masked argmax, or Gumbel-max sampling from the numpy generator given), but
    the matrix products run on torch's thread pool (``torch.set_num_threads``, one thread in training)
    instead of numpy's OpenBLAS, which on a busy 2-core machine spreads a 64 x 128 product over threads
    that wait for each other: 7 ms instead of 0.2 ms per call (docs/performance.md).
    """

    def __init__(self, policy: Any):
        self.policy = policy
        self._weights = [torch.as_tensor(np.asarray(w, dtype=np.float32)) for w in policy.weights]
        self._biases = [torch.as_tensor(np.asarray(b, dtype=np.float32)) for b in policy.biases]
        self._activate = {"tanh": FastTanh(), "relu": torch.relu}[policy.activation]

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Logits for a batch of observations, shape (batch, num_actions), as ``MLPPolicy.logits``."""
        with torch.inference_mode():
            x = torch.as_tensor(np.asarray(observations, dtype=np.float32))
            last = len(self._weights) - 1
            for i, (weight, bias) in enumerate(zip(self._weights, self._biases, strict=True)):
                x = torch.nn.functional.linear(x, weight, bias)
                if i < last:
                    x = self._activate(x)
            return x.numpy()

    def act(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None,
            deterministic: bool = True) -> np.ndarray:
        """One legal action per row, exactly as ``MLPPolicy.act`` chooses it from these logits."""
        return self.policy.choose(self.logits(observations), masks, rng, deterministic)


class StackedActors:
    """Several :class:`~tavernzoo.agents.policy.MLPPolicy` of one shape (the learner's snapshots) answered
    together: each layer one batched product (``torch.baddbmm``) over every policy's rows, each policy's rows
    padded to the most any has, then one :func:`choose` for all rows (torch's generator). Instead of a
    forward and a sampling per policy, each over a few rows (docs/performance.md: with five snapshots in the
    pool those small calls took 17% of a run on the kernel)."""

    def __init__(self, policies: list[Any]):
        self.policies = tuple(policies)
        layers = range(len(policies[0].weights))
        self._weights = [torch.stack([torch.as_tensor(np.asarray(policy.weights[i], dtype=np.float32)).T
                                      for policy in policies]).contiguous() for i in layers]  # (K, in, out)
        self._biases = [torch.stack([torch.as_tensor(np.asarray(policy.biases[i], dtype=np.float32))
                                     for policy in policies])[:, None, :] for i in layers]  # (K, 1, out)
        self._activation = policies[0].activation

    @staticmethod
    def fit(policies: list[Any]) -> bool:
        """Whether these policies can be stacked: the same activation and the same layer shapes."""
        shapes = {(policy.activation, tuple(np.shape(w) for w in policy.weights)) for policy in policies}
        return len(shapes) == 1 and next(iter(shapes))[0] in ("tanh", "relu")

    def act(self, observations: list[np.ndarray], masks: list[np.ndarray]) -> list[np.ndarray]:
        """A sampled legal action per row for each policy's rows (``observations[k]``, ``masks[k]``: policy
        ``k``'s, as many rows as it has; none is allowed)."""
        counts = [len(rows) for rows in observations]
        with torch.inference_mode():
            x = torch.zeros(len(counts), max(counts), self._weights[0].shape[1])
            for k, rows in enumerate(observations):
                x[k, :len(rows)] = torch.as_tensor(rows)
            last = len(self._weights) - 1
            for i, (weight, bias) in enumerate(zip(self._weights, self._biases, strict=True)):
                x = torch.baddbmm(bias, x, weight)
                if i < last and self._activation == "tanh":
                    np.tanh(x.numpy(), out=x.numpy())
                elif i < last:
                    x.relu_()
            logits = np.concatenate([x[k, :count].numpy() for k, count in enumerate(counts)])
        actions, _ = choose(logits, np.concatenate(masks), deterministic=False)
        return np.split(actions, np.cumsum(counts)[:-1])
